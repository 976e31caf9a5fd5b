#!/usr/bin/env bash
# The DNS gate's cost, in the simulated internet (tests/support/simnet.sh):
#   1. latency it adds per query: the median round trip of sequential
#      queries (one outstanding) through the gate (127.0.0.1:53: parse,
#      allowlist match, forward with c-ares, validate the answer, admit the
#      addresses into the nftables set and wait for the kernel's ack, answer)
#      against the same queries sent straight to the upstream (dnsmasq in the
#      sim namespace), measured in the same run. Target: < 1 ms added.
#   2. queries per second the gate sustains (dnsperf, 100 outstanding), with
#      the upstream's own rate as the reference. Target: >= 5,000 qps.
# Tools: tests/support/dnsping (sequential round trips, percentiles) and
# dnsperf (Debian package dnsperf: the load generator for the rate).
#
#   bench/gate-latency.sh [--quick] [--queries N] [--seconds S]
#
# Every query is for an allowlisted name (n0..n99.allowed.test, each with
# its own public address 198.51.100.100-199), so every answer goes through
# firewall_admit, which sends a netlink batch unless the same element was
# refreshed within the same millisecond. --quick: a
# few hundred queries, only checks that it works. Exit 0 when everything ran
# (and, without --quick, the targets were met), 1 otherwise, 77 when not root
# or dnsperf is missing.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# Absolute: the scripts cd, pivot into new roots and enter namespaces, where
# a BUILD_DIR relative to the caller's directory (BUILD_DIR=build) means nothing.
BUILD_DIR=$(cd "$BUILD_DIR" && pwd) || { echo "BUILD_DIR '$BUILD_DIR' not found" >&2; exit 1; }
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"

QUICK=0 QUERIES=5000 SECONDS_QPS=5 NAMES=100
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 QUERIES=300 SECONDS_QPS=1 ;;
	--queries) QUERIES=$2; shift ;;
	--seconds) SECONDS_QPS=$2; shift ;;
	*) echo "usage: $0 [--quick] [--queries N] [--seconds S]" >&2; exit 2 ;;
	esac
	shift
done
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root"
	exit 77
fi
GATE_RUN=${GATE_RUN:-$BUILD_DIR/tests/support/gate-run}
DNSPING=${DNSPING:-$BUILD_DIR/tests/support/dnsping}
for tool in ip nft dnsmasq dig dnsperf "$GATE_RUN" "$DNSPING"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
trap simnet_down EXIT
SIMNET_DNS_LOG=0 simnet_up "cs-gatebench-$$" || exit 1

HOSTS=$SIMNET_DIR/hosts.bench
DATA=$SIMNET_DIR/queries
: >"$HOSTS"
: >"$DATA"
for ((i = 0; i < NAMES; i++)); do
	echo "198.51.100.$((100 + i)) n$i.allowed.test" >>"$HOSTS"
	echo "n$i.allowed.test A" >>"$DATA"
	echo "n$i.allowed.test" >>"$SIMNET_DIR/names"
done
simnet_dns_set_many "$HOSTS" || exit 1
AL=$SIMNET_DIR/allowlist
printf '.allowed.test\n' >"$AL"
GATE_LOG=$SIMNET_DIR/gate.log
# The gate logs nothing per answered query; keep warnings only.
CODE_SANDBOX_LOG=warn simnet_spawn "$SIMNET_SBX" "$GATE_LOG" "$GATE_RUN" --allowlist "$AL" \
	--resolv-conf "$SIMNET_RESOLV" --table cs_gate_bench --no-nflog
GATE_PID=${SIMNET_PIDS[-1]}
simnet_poll 10 grep -q '^gate-ready' "$GATE_LOG" || { echo "gate-run did not start:"; tail -5 "$GATE_LOG"; exit 1; }

# seq_latency SERVER: median round trip in ms of QUERIES sequential queries
# (tests/support/dnsping: one outstanding, the next sent on the answer).
seq_latency() {
	local out
	out=$(simnet_exec_sbx "$DNSPING" --server "$1" --names "$SIMNET_DIR/names" --count "$QUERIES")
	if ! grep -q "noerror=$QUERIES " <<<"$out"; then
		echo "dnsping against $1: $out" >&2
		echo nan
		return 1
	fi
	sed -n 's/.* median_ms=\([0-9.]*\).*/\1/p' <<<"$out"
}

# qps SERVER: "QPS LOST" with 100 outstanding queries for SECONDS_QPS.
qps() {
	local out
	out=$(simnet_exec_sbx dnsperf -s "$1" -d "$DATA" -c 4 -q 100 -l "$SECONDS_QPS" -t 2 2>&1)
	if ! grep -q 'Queries per second' <<<"$out"; then
		echo "dnsperf against $1 failed" >&2
		tail -5 <<<"$out" >&2
		echo "0 ?"
		return 1
	fi
	awk '/Queries per second:/ {q = $4} /Queries lost:/ {l = $3} END {printf "%.0f %s\n", q, l}' <<<"$out"
}

status=0
# Warm both paths once (ARP/ND, c-ares sockets, dnsmasq).
simnet_exec_sbx dig @127.0.0.1 +short n0.allowed.test >/dev/null
simnet_exec_sbx dig @"$SIMNET_SIM_V4" +short n0.allowed.test >/dev/null

direct_ms=$(seq_latency "$SIMNET_SIM_V4") || status=1
gate_ms=$(seq_latency 127.0.0.1) || status=1
added_ms=$(awk -v g="$gate_ms" -v d="$direct_ms" 'BEGIN {printf "%.3f", g - d}')
ratio=$(awk -v g="$gate_ms" -v d="$direct_ms" 'BEGIN {printf "%.2f", (d > 0) ? g / d : 0}')
printf 'latency (median of %d sequential queries): upstream direct %.3f ms, through the gate %.3f ms: +%s ms added (%sx)  [target < 1 ms added]\n' \
	"$QUERIES" "$direct_ms" "$gate_ms" "$added_ms" "$ratio"

read -r direct_qps direct_lost < <(qps "$SIMNET_SIM_V4") || status=1
read -r gate_qps gate_lost < <(qps 127.0.0.1) || status=1
qratio=$(awk -v g="$gate_qps" -v d="$direct_qps" 'BEGIN {printf "%.2f", (d > 0) ? g / d : 0}')
printf 'throughput (dnsperf, 100 outstanding, %d s): upstream direct %d qps (%s lost), through the gate %d qps (%s lost): %sx of the upstream  [target >= 5000 qps]\n' \
	"$SECONDS_QPS" "$direct_qps" "${direct_lost:-0}" "$gate_qps" "${gate_lost:-0}" "$qratio"

kill -TERM "$GATE_PID" 2>/dev/null
simnet_poll 5 grep -q '^gate-stats' "$GATE_LOG"
stats=$(grep '^gate-stats' "$GATE_LOG" | tail -n1)
echo "$stats"
admit_errors=$(sed -n 's/.* admit_errors=\([0-9]*\).*/\1/p' <<<"$stats")
if [ "${admit_errors:-1}" != 0 ]; then
	echo "the gate reported admit errors" >&2
	status=1
fi

if [ "$QUICK" = 0 ] && [ "$status" = 0 ]; then
	awk -v a="$added_ms" 'BEGIN {exit !(a < 1.0)}' || { echo "FAIL: added latency ${added_ms} ms >= 1 ms"; status=1; }
	[ "$gate_qps" -ge 5000 ] || { echo "FAIL: ${gate_qps} qps < 5000"; status=1; }
fi
exit "$status"
