#!/usr/bin/env bash
# The DNS gate's caps on dynamically admitted addresses (issue 10 item 4),
# in the simulated internet, driven by tests/support/gate-run with lowered
# caps (--test-dyn-caps 4,10; production: GATE_DYN_MAX_PER_NAME 32 and
# GATE_DYN_MAX_TOTAL 2048 in firewall/gate.h):
#   - one allowed name re-pointed upstream again and again gets at most 4
#     live addresses in the set; the rest are stripped from the answers,
#     with a log line saying the per-name cap was reached;
#   - other names share the total cap: past 10 live addresses nothing more
#     is admitted, with a log line for the total cap;
#   - an address already admitted for a name is still answered at the cap;
#   - the sandbox's own gateway, here a public address (a route via
#     198.51.100.1), is stripped from answers like a private address.
# Never touches the initial network namespace.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
tap_require_root
GATE_RUN=${GATE_RUN:-$BUILD_DIR/tests/support/gate-run}
for tool in ip nft dnsmasq dig setpriv "$GATE_RUN"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
trap simnet_down EXIT
AGENT_UID=1000
TABLE=cs_gate_caps_test

if ! simnet_up "${SIMNET_PREFIX:-cs}-fwcaps-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
AL=$SIMNET_DIR/allowlist
printf '.allowed.test\n' >"$AL"
GATE_LOG=$SIMNET_DIR/gate.log
: >"$GATE_LOG"

ask() { # ask NAME: the A answers the agent gets from the gate, one per line
	simnet_exec_sbx setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs \
		dig @127.0.0.1 +tries=1 +time=2 +short "$1" A 2>&1
}
in_set() { simnet_exec_sbx nft list set inet "$TABLE" allow_v4 2>/dev/null | grep -qF "$1 "; }
n_in_set() { # how many of the addresses given are in allow_v4
	local listing n=0 a
	listing=$(simnet_exec_sbx nft list set inet "$TABLE" allow_v4 2>/dev/null)
	for a in "$@"; do grep -qF "$a " <<<"$listing" && n=$((n + 1)); done
	echo "$n"
}

# A gateway with a public address: the route's next hop is what counts.
ip -n "$SIMNET_SBX" route add 198.51.100.128/25 via 198.51.100.1 dev veth0 onlink || exit 1
simnet_dns_set gw.allowed.test 198.51.100.1 || exit 1

# TTL floor 60 s: nothing admitted expires while the test runs.
simnet_spawn "$SIMNET_SBX" "$GATE_LOG" "$GATE_RUN" --allowlist "$AL" \
	--resolv-conf "$SIMNET_RESOLV" --table "$TABLE" --no-nflog \
	--test-ttl-floor 60 --test-ttl-grace 0 --test-dyn-caps 4,10 --teardown
GATE_PID=${SIMNET_PIDS[-1]}
if ! wait_until 10 grep -q '^gate-ready' "$GATE_LOG"; then
	diag "gate-run did not start:" "$(tail -5 "$GATE_LOG")"
	echo "1..0 # SKIP gate-run did not start"
	exit 1
fi

# 0. The gateway's address is not admitted for a name.
check "gw.allowed.test: the gateway 198.51.100.1 is stripped (answer '$(ask gw.allowed.test)')" -z "$(ask gw.allowed.test)"
nok "198.51.100.1 is not in allow_v4" in_set 198.51.100.1
ok "the strip names the gateway" grep -q "answer 198.51.100.1 is the container's gateway, not admitted" "$GATE_LOG"

# 1. One name re-pointed 6 times: 4 admitted, the 5th and 6th stripped.
repoint=()
for i in 1 2 3 4 5 6; do
	a=198.51.100.$((100 + i))
	repoint+=("$a")
	simnet_dns_set repoint.allowed.test "$a" || exit 1
	got=$(ask repoint.allowed.test)
	if [ "$i" -le 4 ]; then
		check "re-point $i: answered with $a ($got)" "$got" = "$a"
	else
		check "re-point $i: past the per-name cap, $a stripped (answer '$got')" -z "$got"
	fi
done
check "4 of the 6 re-pointed addresses are in allow_v4 ($(n_in_set "${repoint[@]}"))" "$(n_in_set "${repoint[@]}")" -eq 4
nok "198.51.100.105 is not in allow_v4" in_set 198.51.100.105
ok "the per-name cap is logged" grep -q "repoint.allowed.test' (A): answer 198.51.100.105 not admitted: per-name cap" "$GATE_LOG"
# An address already admitted for the name still is, at the cap.
simnet_dns_set repoint.allowed.test 198.51.100.102 || exit 1
check "an address admitted before is still answered at the cap" "$(ask repoint.allowed.test)" = 198.51.100.102

# 2. Other names: 4 live so far, total cap 10: six more fit, then none.
others=()
for i in 1 2 3 4 5 6 7 8; do
	a=198.51.100.$((120 + i))
	others+=("$a")
	simnet_dns_set "n$i.allowed.test" "$a" || exit 1
	got=$(ask "n$i.allowed.test")
	if [ "$i" -le 6 ]; then
		check "n$i.allowed.test: answered with $a ($got)" "$got" = "$a"
	else
		check "n$i.allowed.test: past the total cap, stripped (answer '$got')" -z "$got"
	fi
done
check "6 of the other 8 addresses are in allow_v4 ($(n_in_set "${others[@]}"))" "$(n_in_set "${others[@]}")" -eq 6
ok "the total cap is logged" grep -q "n7.allowed.test' (A): answer 198.51.100.127 not admitted: total cap" "$GATE_LOG"

kill -TERM "$GATE_PID" 2>/dev/null
wait_until 5 bash -c "! kill -0 $GATE_PID 2>/dev/null"
stats=$(grep '^gate-stats' "$GATE_LOG" | tail -n1)
diag "$stats"
check "the gate counted 4 capped addresses ($(sed -n 's/.* capped=\([0-9]*\).*/\1/p' <<<"$stats"))" \
	"$(sed -n 's/.* capped=\([0-9]*\).*/\1/p' <<<"$stats")" = 4
tap_done
