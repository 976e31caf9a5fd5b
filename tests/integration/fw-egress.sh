#!/usr/bin/env bash
# The egress firewall in the simulated internet (tests/support/simnet.sh):
# the allowlist admits exactly its names, addresses and ports over IPv4 and
# IPv6; everything else fails at once (TCP, UDP, ICMP, raw), including
# direct DNS from a non-root "agent"; every control shows the same traffic
# passes without the firewall. Start-up with an unresolvable name still
# installs default deny, a broken allowlist stops the start, other tables
# survive, re-installing replaces the table atomically, the agent cannot
# change the ruleset. Runs fw-install (the firewall API outside
# sandbox-init) in the sbx namespace; never touches the initial netns.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
tap_require_root
quiet() { "$@" >/dev/null 2>&1; }
FW_INSTALL=${FW_INSTALL:-$BUILD_DIR/tests/support/fw-install}
FW_PROBE=${FW_PROBE:-$BUILD_DIR/tests/support/fw-probe}
for tool in ip nft dnsmasq socat dig setpriv "$FW_INSTALL" "$FW_PROBE"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
# shellcheck source=tests/support/stage.sh
. "$SOURCE_DIR/tests/support/stage.sh"
trap 'simnet_down; stage_cleanup' EXIT
# The agent's uid may not reach the build directory: it runs a copy.
stage_dir STAGE cs-fw-egress && stage_vars "$STAGE" FW_PROBE || exit 1
AGENT_UID=1000

if ! simnet_up "${SIMNET_PREFIX:-cs}-fwegress-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
A4=$SIMNET_HOST_A4 A6=$SIMNET_HOST_A6 B4=$SIMNET_HOST_B4 B6=$SIMNET_HOST_B6
C4=198.51.100.30 L4=198.51.100.77
simnet_add_host "$C4" "$L4" || exit 1
simnet_dns_set api.allowed.test "$A4" "$A6" || exit 1
simnet_dns_set ports.allowed.test "$C4" || exit 1
simnet_dns_set blocked.test "$B4" "$B6" || exit 1
for l in "$A4 443" "$A6 443" "$A4 80" "$B4 443" "$B6 443" "$C4 443" "$C4 8443" "$L4 8000" "$L4 8100" "$L4 8101"; do
	# shellcheck disable=SC2086
	simnet_listen $l tcp || exit 1
done
simnet_listen "$B4" 5353 udp || exit 1

AL=$SIMNET_DIR/allowlist
cat >"$AL" <<EOF
# fw-egress test allowlist
api.allowed.test
ports.allowed.test:8443
never-resolves.invalid
$L4:8000-8100
EOF

sbx() { simnet_exec_sbx "$@"; }
# The "agent": uid 1000, no capabilities, no_new_privs, as sandbox-init
# leaves it (before the init branch is merged, setpriv stands in for it).
agent() {
	simnet_exec_sbx setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs "$@"
}
probe() { # probe [agent] MODE ADDR [PORT]: prints the probe's result word
	local who=sbx
	if [ "$1" = agent ]; then who=agent; shift; fi
	"$who" "$FW_PROBE" "$@" 2>/dev/null | awk '{print $1}'
}
# probe_fast EXPECTED MODE ADDR PORT: the result is EXPECTED and came
# within 1 s (a blocked connect must fail at once, not hang)
probe_fast() {
	local want=$1 out word ms
	shift
	out=$(agent "$FW_PROBE" "$@" 2>/dev/null)
	word=${out%% *} ms=${out##* }
	if [ "$word" != "$want" ] || [ "${ms%.*}" -ge 1000 ]; then
		diag "probe $*: $out"
		return 1
	fi
}
install() { sbx "$FW_INSTALL" --allowlist "${1:-$AL}" --resolv-conf "$SIMNET_RESOLV" >"$SIMNET_DIR/install.out" 2>&1; }

# ---- controls: without the firewall, every probe below passes ----
check "control: blocked host reachable over TCP/IPv4 without firewall" "$(probe agent tcp "$B4" 443)" = ok
check "control: blocked host reachable over TCP/IPv6 without firewall" "$(probe agent tcp "$B6" 443)" = ok
check "control: allowed host port 80 reachable without firewall" "$(probe agent tcp "$A4" 80)" = ok
check "control: UDP to blocked host answered without firewall" "$(probe agent udp "$B4" 5353)" = ok
check "control: ICMP echo answered without firewall" "$(probe icmp "$B4")" = ok
check "control: ICMPv6 echo answered without firewall" "$(probe icmp "$B6")" = ok
ok "control: agent's direct DNS to the upstream works without firewall" \
	quiet agent dig +time=1 +tries=1 +short @"$SIMNET_SIM_V4" api.allowed.test
check "control: literal range port 8101 reachable without firewall" "$(probe agent tcp "$L4" 8101)" = ok

# another table, like the engine's DNS NAT, that must survive
sbx nft -f - <<'EOF'
table ip nat {
	chain dns_out { type nat hook output priority -100; policy accept; ip daddr 127.0.0.11 udp dport 53 counter; }
}
EOF
nat_before=$(sbx nft list table ip nat)

# ---- install ----
ok "install succeeds (one name never resolves)" install
ok "firewall-ready printed" grep -q '^firewall-ready ' "$SIMNET_DIR/install.out"
ok "unresolvable name is a warning naming it" grep -q "never-resolves.invalid.*ignoring" "$SIMNET_DIR/install.out"
ok "table inet code_sandbox exists" quiet sbx nft list table inet code_sandbox

# ---- allowed ----
check "allowed name reachable over TCP/IPv4 (port 443)" "$(probe agent tcp "$A4" 443)" = ok
check "allowed name reachable over TCP/IPv6 (port 443)" "$(probe agent tcp "$A6" 443)" = ok
check "name:8443 entry admits 8443" "$(probe agent tcp "$C4" 8443)" = ok
ok "name:8443 entry does not admit 443 to it" probe_fast ECONNREFUSED tcp "$C4" 443
check "literal CIDR range admits its low port" "$(probe agent tcp "$L4" 8000)" = ok
check "literal CIDR range admits its high port" "$(probe agent tcp "$L4" 8100)" = ok
ok "literal range refuses the port just past it" probe_fast ECONNREFUSED tcp "$L4" 8101

# ---- blocked, fast ----
ok "blocked host: TCP/IPv4 refused at once" probe_fast ECONNREFUSED tcp "$B4" 443
ok "blocked host: TCP/IPv6 refused at once" probe_fast ECONNREFUSED tcp "$B6" 443
ok "allowed host, other port: refused at once" probe_fast ECONNREFUSED tcp "$A4" 80
udp=$(probe agent udp "$B4" 5353)
check "UDP to blocked host fails ($udp)" "$udp" != ok
icmp=$(probe icmp "$B4")
check "ICMP echo fails ($icmp)" "$icmp" != ok
icmp6=$(probe icmp "$B6")
check "ICMPv6 echo fails ($icmp6)" "$icmp6" != ok
raw=$(probe agent icmp "$B4")
check "agent cannot even open a raw socket ($raw)" "$raw" = EPERM
nok "agent's direct DNS to the upstream fails" \
	quiet agent dig +time=1 +tries=1 +short @"$SIMNET_SIM_V4" api.allowed.test
ok "root (PID 1's uid) may still query the upstream" \
	quiet sbx dig +time=1 +tries=1 +short @"$SIMNET_SIM_V4" api.allowed.test
ok "blocked attempts are counted" sh -c "ip netns exec '$SIMNET_SBX' nft list chain inet code_sandbox output | grep -q 'counter packets [1-9].* jump blocked'"

# ---- input ----
sbx socat TCP4-LISTEN:2222,bind="$SIMNET_SBX_V4",reuseaddr,fork EXEC:/bin/true >/dev/null 2>&1 &
listener=$!
wait_until 5 sh -c "ip netns exec '$SIMNET_SBX' ss -Hltn | grep -q ':2222'"
in=$(simnet_exec_sim "$FW_PROBE" tcp "$SIMNET_SBX_V4" 2222 1000 | awk '{print $1}')
check "inbound connection to a sandbox listener is dropped ($in)" "$in" = timeout
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null

# ---- the agent cannot change it ----
nok "agent: nft flush ruleset fails" quiet agent nft flush ruleset
nok "agent: nft add rule fails" quiet agent nft add rule inet code_sandbox output accept
nok "agent: nft delete table fails" quiet agent nft delete table inet code_sandbox
ok "ruleset intact after the agent's attempts" probe_fast ECONNREFUSED tcp "$B4" 443

# ---- other tables untouched ----
check "table ip nat untouched by install" "$(sbx nft list table ip nat)" = "$nat_before"

# ---- re-install replaces the table atomically ----
printf '%s\n' api.allowed.test "$B4" >"$AL.2"
(
	for _ in $(seq 20); do
		agent "$FW_PROBE" tcp "$L4" 8101 500 | awk '{print $1}'
	done
) >"$SIMNET_DIR/during" &
prober=$!
reinstalls=0
for _ in $(seq 10); do install && reinstalls=$((reinstalls + 1)); done
wait "$prober"
check "10 re-installs succeed" "$reinstalls" = 10
check "no probe got through while re-installing" "$(grep -c '^ok' "$SIMNET_DIR/during")" = 0
ok "re-install with another allowlist" install "$AL.2"
check "exactly one inet code_sandbox table" "$(sbx nft list tables | grep -c 'inet code_sandbox')" = 1
check "new literal admitted" "$(probe agent tcp "$B4" 443)" = ok
ok "old literal range gone" probe_fast ECONNREFUSED tcp "$L4" 8000
check "table ip nat untouched by re-install" "$(sbx nft list table ip nat)" = "$nat_before"

# ---- the DNS gate's admit path (firewall_admit), directly ----
set_v4() { sbx nft list set inet code_sandbox allow_v4; }
out=$(sbx "$FW_INSTALL" --allowlist "$AL" --resolv-conf "$SIMNET_RESOLV" \
	--admit "$B4,443,600" --admit "$B4,443,60" --admit "198.51.100.41,443,1200" \
	--admit "198.51.100.41,443,1800" --admit "$L4,8000-8100,60" --admit "198.51.100.42,8443,60" \
	--admit "198.51.100.43,9999,60" 2>"$SIMNET_DIR/admit.err")
check "admit: an address is admitted" "$(grep -c "admit $B4,443,600: OK" <<<"$out")" = 1
check "admit: the blocked host is reachable once admitted" "$(probe agent tcp "$B4" 443)" = ok
ok "admit: a later, shorter TTL does not shorten the lifetime" sh -c "ip netns exec '$SIMNET_SBX' nft list set inet code_sandbox allow_v4 | grep -q '$B4 . 443 timeout 10m '"
ok "admit: a later, longer TTL extends it" sh -c "ip netns exec '$SIMNET_SBX' nft list set inet code_sandbox allow_v4 | grep -q '198.51.100.41 . 443 timeout 30m '"
check "admit: an address a literal range covers is no error" "$(grep -c "admit $L4,8000-8100,60: OK" <<<"$out")" = 1
nok "admit: ... and adds no element of its own" sh -c "ip netns exec '$SIMNET_SBX' nft list set inet code_sandbox allow_v4 | grep -q '$L4 . 8000-8100 timeout'"
check "admit: a port an entry names (8443) is admitted" "$(grep -c "admit 198.51.100.42,8443,60: OK" <<<"$out")" = 1
check "admit: a port no entry names is refused" "$(grep -c "admit 198.51.100.43,9999,60: OK" <<<"$out")" = 0
nok "admit: ... and not added" sh -c "ip netns exec '$SIMNET_SBX' nft list set inet code_sandbox allow_v4 | grep -q 198.51.100.43"

# ---- only unresolvable names: default deny all the same ----
quiet sbx nft delete table inet code_sandbox
printf 'nothing-here.invalid\nalso-missing.invalid\n' >"$AL.3"
ok "install with only unresolvable names succeeds" install "$AL.3"
ok "default deny installed: blocked host refused" probe_fast ECONNREFUSED tcp "$B4" 443
ok "default deny installed: allowed-before host refused" probe_fast ECONNREFUSED tcp "$A4" 443
check "output policy is drop" "$(sbx nft list chain inet code_sandbox output | grep -c 'policy drop')" = 1

# ---- a name resolving to an address the file opens on one port ----
# ('special', :8080) does not open that address on the name's port (443).
quiet sbx nft delete table inet code_sandbox
simnet_dns_set hop.allowed.test "$SIMNET_SIM_V4" || exit 1
printf 'hop.allowed.test\n%s:8080 special\n' "$SIMNET_SIM_V4" >"$AL.5"
ok "install with hop.allowed.test and $SIMNET_SIM_V4:8080 special" install "$AL.5"
hop=$(sbx nft list set inet code_sandbox allow_v4)
ok "$SIMNET_SIM_V4 . 8080 is open (the file's entry)" grep -qF "$SIMNET_SIM_V4 . 8080" <<<"$hop"
nok "$SIMNET_SIM_V4 . 443 is not admitted through hop.allowed.test" grep -qF "$SIMNET_SIM_V4 . 443" <<<"$hop"

# ---- a broken allowlist stops the start and changes nothing ----
quiet sbx nft delete table inet code_sandbox
printf 'api.allowed.test\nbad..name\n' >"$AL.4"
st=0
install "$AL.4" || st=$?
check "broken allowlist: non-zero exit ($st)" "$st" -ne 0
ok "broken allowlist: message names file:line" grep -q "$AL.4:2" "$SIMNET_DIR/install.out"
nok "broken allowlist: no table installed" quiet sbx nft list table inet code_sandbox
check "broken allowlist: blocked host still reachable (nothing changed)" "$(probe agent tcp "$B4" 443)" = ok

tap_done
