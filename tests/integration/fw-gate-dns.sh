#!/usr/bin/env bash
# The DNS gate in the simulated internet (tests/support/simnet.sh), driven by
# tests/support/gate-run (firewall_install + the gate admitting through
# firewall_admit + the blocked-packet log, as PID 1 runs them):
#   - a name outside the allowlist is REFUSED and never reaches the upstream;
#   - an allowlisted name resolves (UDP and TCP, 127.0.0.1 and ::1, A and
#     AAAA) and only then its address becomes reachable;
#   - a name re-pointed upstream becomes reachable at its new address
#     without a restart;
#   - an admitted address expires after its (test-shortened) TTL and comes
#     back with the next lookup;
#   - an allowed name answered with 169.254.169.254 (or a private address)
#     is stripped from the answer and stays blocked;
#   - an address the file opens on one port ('special') is not opened on
#     the name entry's ports when an allowed name is answered with it;
#   - non-address types of allowed names (TXT: tunnelling) never go upstream;
#   - malformed queries and too many TCP connections do not hurt the gate;
#     pipelined TCP queries are answered in order, idle connections closed;
#   - a blocked connection produces a log line with destination, port,
#     protocol and uid.
# Never touches the initial network namespace.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
tap_require_root
# The system interpreter: a per-user one (pyenv shims) is not readable by
# the agent's uid.
PYTHON=/usr/bin/python3
GATE_RUN=${GATE_RUN:-$BUILD_DIR/tests/support/gate-run}
FW_PROBE=${FW_PROBE:-$BUILD_DIR/tests/support/fw-probe}
for tool in ip nft dnsmasq socat dig setpriv getent "$PYTHON" "$GATE_RUN" "$FW_PROBE"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
# shellcheck source=tests/support/stage.sh
. "$SOURCE_DIR/tests/support/stage.sh"
trap 'simnet_down; stage_cleanup' EXIT
# The agent's uid may not reach the build directory: it runs a copy.
stage_dir STAGE cs-fw-gate-dns && stage_vars "$STAGE" FW_PROBE || exit 1
AGENT_UID=1000
TABLE=cs_gate_test
# Upstream answers carry TTL 1; the gate is started with a 3 s floor and a
# 2 s grace, so an admitted address lives 5 s (production: 30 s + 30 s).
export SIMNET_DNS_TTL=1

if ! simnet_up "${SIMNET_PREFIX:-cs}-fwgate-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
A4=$SIMNET_HOST_A4 A6=$SIMNET_HOST_A6 B4=$SIMNET_HOST_B4
C4=198.51.100.30 D4=198.51.100.40 E4=198.51.100.50
simnet_add_host "$C4" "$D4" "$E4" || exit 1
simnet_dns_set api.allowed.test "$A4" "$A6" || exit 1
simnet_dns_set blocked.test "$B4" || exit 1
simnet_dns_set repoint.allowed.test "$C4" || exit 1
simnet_dns_set expire.allowed.test "$D4" || exit 1
simnet_dns_set meta.allowed.test 169.254.169.254 || exit 1
simnet_dns_set private.allowed.test 10.1.2.3 "$A4" || exit 1
# sim's own address on the link (the sandbox's next hop, private): the
# allowlist opens it on port 8080 only, with 'special'.
simnet_dns_set hop.allowed.test "$SIMNET_SIM_V4" || exit 1
simnet_spawn "$SIMNET_SIM" "$SIMNET_DIR/hop443.log" socat "TCP4-LISTEN:443,bind=$SIMNET_SIM_V4,reuseaddr,fork" SYSTEM:'echo hop'
# shellcheck disable=SC2016 # expanded by the inner bash
simnet_poll 5 bash -c '[ -n "$(ip netns exec "$1" ss -Hltn "src $2 and sport = :443")" ]' _ "$SIMNET_SIM" "$SIMNET_SIM_V4" || exit 1
for l in "$A4 443" "$A6 443" "$B4 443" "$C4 443" "$D4 443" "$E4 443"; do
	# shellcheck disable=SC2086
	simnet_listen $l tcp || exit 1
done

# Suffix entries only: nothing is resolved at start-up, so every address
# below is admitted by the gate or not at all.
AL=$SIMNET_DIR/allowlist
printf '# fw-gate test allowlist\n.allowed.test\n%s:8080 special\n' "$SIMNET_SIM_V4" >"$AL"
RESOLV_OUT=$SIMNET_DIR/resolv.gate
printf 'nameserver 192.0.2.99\nsearch example.org\n' >"$RESOLV_OUT"
GATE_LOG=$SIMNET_DIR/gate.log
: >"$GATE_LOG"

agent() {
	simnet_exec_sbx setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs "$@"
}
probe() { # probe MODE ADDR PORT: the probe's result word, as the agent
	agent "$FW_PROBE" "$@" 1000 2>/dev/null | awk '{print $1}'
}
reachable() { [ "$(probe tcp "$1" 443)" = ok ]; }
blocked() { [ "$(probe tcp "$1" 443)" != ok ]; }
ask() { # ask SERVER NAME TYPE [dig options]: the agent's dig output
	local server=$1 name=$2 type=$3
	shift 3
	agent dig @"$server" +tries=1 +time=2 "$@" "$name" "$type" 2>&1
}
status_of() { sed -n 's/.*status: \([A-Z]*\).*/\1/p' | head -n1; }
answers() { # the A/AAAA data of a dig output
	awk '$1 !~ /^;/ && ($4 == "A" || $4 == "AAAA") {print $5}'
}
in_set() { # in_set SET ADDR (prints the set as a diagnostic when ADDR is absent)
	local listing
	listing=$(simnet_exec_sbx nft list set inet "$TABLE" "$1" 2>&1)
	grep -qF "$2 " <<<"$listing" && return 0
	diag "$2 not in $1:" "$listing"
	return 1
}
gate_alive() { kill -0 "$GATE_PID" 2>/dev/null; }
# True when dnsmasq logged a query for NAME coming from the sandbox (simnet
# itself asks from sim's side when it sets names up).
upstream_saw() {
	grep -qiE "query\[[A-Z0-9]+\] $(printf '%s' "$1" | sed 's/\./\\./g') from ($SIMNET_SBX_V4|$SIMNET_SBX_V6)\$" "$(simnet_dns_log)"
}

simnet_spawn "$SIMNET_SBX" "$GATE_LOG" "$GATE_RUN" --allowlist "$AL" \
	--resolv-conf "$SIMNET_RESOLV" --table "$TABLE" --write-resolv-conf "$RESOLV_OUT" \
	--test-ttl-floor 3 --test-ttl-grace 2 --teardown
GATE_PID=${SIMNET_PIDS[-1]}
if ! wait_until 10 grep -q '^gate-ready' "$GATE_LOG"; then
	diag "gate-run did not start:" "$(tail -5 "$GATE_LOG")"
	echo "1..0 # SKIP gate-run did not start"
	exit 1
fi

# resolv.conf names the gate only, no search domains.
ok "resolv.conf: 127.0.0.1 (and ::1), nothing else" \
	bash -c "grep -v '^#' '$RESOLV_OUT' | grep -v '^nameserver ::1\$' | diff - <(echo 'nameserver 127.0.0.1')"

# The TCP idle timeout (10 s) runs in the background while the rest goes on.
agent "$PYTHON" -c '
import socket, time
t = socket.create_connection(("127.0.0.1", 53), timeout=30)
start = time.monotonic()
data = t.recv(1)
print("idle-closed", "EMPTY" if data == b"" else "DATA", round(time.monotonic() - start, 1))
' >"$SIMNET_DIR/idle.out" 2>&1 &
IDLE_PID=$!

# 1. Refused names never leave the container.
out=$(ask 127.0.0.1 blocked.test A)
check "blocked.test is REFUSED" "$(status_of <<<"$out")" = REFUSED
out=$(ask ::1 exfil-data-1234.blocked.test TXT)
check "a TXT query for a refused name is REFUSED (over ::1)" "$(status_of <<<"$out")" = REFUSED
nok "dnsmasq never saw blocked.test from the sandbox" upstream_saw blocked.test
nok "dnsmasq never saw the TXT name" upstream_saw exfil-data-1234.blocked.test
ok "the refusal is logged" grep -q "refused query for 'blocked.test' (A): not in the allowlist" "$GATE_LOG"

# 2. An allowed name: blocked before the lookup, reachable right after it.
ok "control: $A4:443 blocked before any lookup" blocked "$A4"
out=$(ask 127.0.0.1 api.allowed.test A)
check "api.allowed.test A resolves through the gate" "$(answers <<<"$out")" = "$A4"
ok "the address is in allow_v4" in_set allow_v4 "$A4"
ok "$A4:443 reachable after the lookup" reachable "$A4"
ok "dnsmasq saw api.allowed.test from the sandbox" upstream_saw api.allowed.test
out=$(ask ::1 api.allowed.test AAAA)
check "api.allowed.test AAAA resolves over ::1" "$(answers <<<"$out")" = "$A6"
check "[$A6]:443 reachable after the lookup" "$(probe tcp "$A6" 443)" = ok
out=$(ask 127.0.0.1 api.allowed.test A +tcp)
check "TCP query answers too" "$(answers <<<"$out")" = "$A4"
out=$(RESOLV=$RESOLV_OUT simnet_exec_sbx_resolv getent ahostsv4 api.allowed.test 2>&1)
check "libc resolves through the rewritten resolv.conf" "$(awk 'NR == 1 {print $1}' <<<"$out")" = "$A4"

# 3. Non-address types of allowed names stay inside (tunnelling).
out=$(ask 127.0.0.1 tunnel-payload.allowed.test TXT)
check "TXT for an allowed name: NOERROR, empty" "$(status_of <<<"$out")/$(grep -c 'IN[[:space:]]TXT[[:space:]]' <<<"$out")" = "NOERROR/0"
nok "the TXT query never reached dnsmasq" upstream_saw tunnel-payload.allowed.test

# 4. Re-pointing without restart.
out=$(ask 127.0.0.1 repoint.allowed.test A)
check "repoint.allowed.test first resolves to $C4" "$(answers <<<"$out")" = "$C4"
ok "control: $B4:443 blocked" blocked "$B4"
ok "re-point repoint.allowed.test to $B4 upstream" simnet_dns_set repoint.allowed.test "$B4"
out=$(ask 127.0.0.1 repoint.allowed.test A)
check "the gate returns the new address" "$(answers <<<"$out")" = "$B4"
ok "the new address $B4:443 is reachable" reachable "$B4"

# 5. Expiry after the TTL, and back on the next lookup.
out=$(ask 127.0.0.1 expire.allowed.test A)
check "expire.allowed.test resolves" "$(answers <<<"$out")" = "$D4"
ok "$D4:443 reachable" reachable "$D4"
ok "$D4 leaves allow_v4 after TTL floor + grace (5 s)" wait_until 15 bash -c "! ip netns exec '$SIMNET_SBX' nft list set inet '$TABLE' allow_v4 | grep -qF '$D4 '"
ok "$D4:443 blocked again after expiry" blocked "$D4"
out=$(ask 127.0.0.1 expire.allowed.test A)
check "expire.allowed.test resolves again" "$(answers <<<"$out")" = "$D4"
ok "$D4:443 reachable again" reachable "$D4"

# 6. DNS rebinding: metadata and private answers are stripped, not admitted.
out=$(ask 127.0.0.1 meta.allowed.test A)
check "meta.allowed.test: NOERROR without the metadata address" "$(status_of <<<"$out")/$(answers <<<"$out" | wc -l)" = "NOERROR/0"
nok "169.254.169.254 is not in allow_v4" in_set allow_v4 169.254.169.254
ok "the stripping is logged" grep -q "answer 169.254.169.254 is cloud metadata, not admitted" "$GATE_LOG"
nok "169.254.169.254:443 stays blocked" reachable 169.254.169.254
out=$(ask 127.0.0.1 private.allowed.test A)
check "private.allowed.test keeps only its public address" "$(answers <<<"$out" | tr '\n' ' ')" = "$A4 "
nok "10.1.2.3 is not in allow_v4" in_set allow_v4 10.1.2.3
# An address the file opens on one port ('special', :8080) is no licence for
# the name entry's ports: an allowed name answered with it (rebinding) may
# resolve there, but must not open it on 443.
out=$(ask 127.0.0.1 hop.allowed.test A)
check "hop.allowed.test: the named address is answered" "$(answers <<<"$out")" = "$SIMNET_SIM_V4"
elems=$(simnet_exec_sbx nft list set inet "$TABLE" allow_v4 2>&1)
ok "$SIMNET_SIM_V4 . 8080 is open (the file's entry)" grep -qF "$SIMNET_SIM_V4 . 8080" <<<"$elems"
nok "$SIMNET_SIM_V4 . 443 is not admitted through the name" grep -qF "$SIMNET_SIM_V4 . 443" <<<"$elems"
check "connecting to $SIMNET_SIM_V4:443 is blocked ($(probe tcp "$SIMNET_SIM_V4" 443))" "$(probe tcp "$SIMNET_SIM_V4" 443)" != ok

# 7. Malformed input does not hurt the gate.
agent "$PYTHON" - <<'EOF'
import os, socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in (0, 1, 11, 12, 13, 300, 512, 4000):
    u.sendto(os.urandom(n), ("127.0.0.1", 53))
# a query whose name is a compression loop, and one for a 300-byte name
u.sendto(bytes.fromhex("abcd01000001000000000000c00c00010001"), ("127.0.0.1", 53))
u.sendto(bytes.fromhex("abcd01000001000000000000") + b"\x3f" + b"a" * 63 + b"\x3f" + b"b" * 63
         + b"\x3f" + b"c" * 63 + b"\x3f" + b"d" * 63 + b"\x05" + b"e" * 5 + b"\x00\x00\x01\x00\x01",
         ("127.0.0.1", 53))
for payload in (b"\x00\x05hello", b"\xff\xff" + os.urandom(100), b"\x00"):
    t = socket.create_connection(("127.0.0.1", 53), timeout=2)
    t.sendall(payload)
    t.close()
EOF
ok "the gate survives malformed UDP and TCP input" gate_alive
out=$(ask 127.0.0.1 api.allowed.test A)
check "and still answers" "$(answers <<<"$out")" = "$A4"
agent "$PYTHON" - <<'EOF' >"$SIMNET_DIR/tcpflood.out" 2>&1
import socket, struct
conns = []
for i in range(48):
    try:
        conns.append(socket.create_connection(("127.0.0.1", 53), timeout=2))
    except OSError:
        pass
# over UDP the gate still answers while 48 TCP connections sit idle
q = bytes.fromhex("1234010000010000000000000361706907616c6c6f7765640474657374000001") + b"\x00\x01"
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(2)
u.sendto(q, ("127.0.0.1", 53))
r = u.recv(512)
print("udp-answer", len(r), r[3] & 0x0f)
EOF
ok "48 idle TCP connections do not stop UDP answers" grep -q '^udp-answer [0-9]* 0$' "$SIMNET_DIR/tcpflood.out"
agent "$PYTHON" - <<'EOF' >"$SIMNET_DIR/pipeline.out" 2>&1
import socket, struct
def q(i, name):
    m = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        m += bytes([len(l)]) + l.encode()
    return m + b"\x00\x00\x01\x00\x01"
t = socket.create_connection(("127.0.0.1", 53), timeout=3)
# three queries in one stream, the last one split across two writes
msgs = [q(1, "api.allowed.test"), q(2, "blocked.test"), q(3, "api.allowed.test")]
data = b"".join(struct.pack(">H", len(m)) + m for m in msgs)
t.sendall(data[:-5])
t.sendall(data[-5:])
buf = b""
answers = []
while len(answers) < 3:
    chunk = t.recv(4096)
    if not chunk:
        break
    buf += chunk
    while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
        n = struct.unpack(">H", buf[:2])[0]
        m, buf = buf[2:2 + n], buf[2 + n:]
        answers.append("%d:%d" % (struct.unpack(">H", m[:2])[0], m[3] & 0x0f))
print("tcp-answers", " ".join(answers))
EOF
ok "pipelined TCP queries are answered in order (NOERROR, REFUSED, NOERROR)" \
	grep -q '^tcp-answers 1:0 2:5 3:0$' "$SIMNET_DIR/pipeline.out"

# 8. A blocked connection is logged with destination, port, protocol and uid.
ok "connecting to a host never admitted fails" blocked "$E4"
ok "blocked-packet line names tcp $E4:443 and uid $AGENT_UID" \
	wait_until 5 grep -q "blocked tcp $E4:443 from uid $AGENT_UID (not in the allowlist)" "$GATE_LOG"

wait "$IDLE_PID"
# shellcheck disable=SC2016 # awk's own $ fields
ok "an idle TCP connection is closed after about 10 s" \
	awk '$1 == "idle-closed" && $2 == "EMPTY" && $3 >= 9 && $3 <= 13 {f = 1} END {exit !f}' "$SIMNET_DIR/idle.out"

# Stop the gate and read its counters.
kill -TERM "$GATE_PID" 2>/dev/null
wait_until 5 bash -c "! kill -0 $GATE_PID 2>/dev/null"
stats=$(grep '^gate-stats' "$GATE_LOG" | tail -n1)
diag "$stats"
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"; }
check "malformed queries were counted" "$(val malformed)" -ge 3
check "refused queries were counted" "$(val refused)" -ge 2
check "rebinding strips were counted" "$(val rebinding)" -ge 2
check "no admit errors" "$(val admit_errors)" = 0
check "the blocked-packet log saw packets" "$(val blocked_packets)" -ge 1
nok "no sanitizer report from the gate's code" \
	grep -qE 'AddressSanitizer|(gate|nflog|dnsmsg|netaddr|pktinfo)\.c:[0-9]+:[0-9]+: runtime error' "$GATE_LOG"
tap_done
