#!/usr/bin/env bash
# Proves the simulated internet (tests/support/simnet.sh) that the firewall
# tests and benchmarks stand on: names resolve from sbx (A and AAAA), fake
# hosts answer over IPv4 and IPv6 (TCP, UDP, TLS, HTTPS), dnsmasq logs the
# names asked, re-pointing a name takes effect without a restart, unknown
# names are NXDOMAIN, nothing routes out of either namespace, and slowdns
# adds its delay once per query, concurrently.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
tap_require_root
for tool in ip dnsmasq socat openssl dig curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not installed"
		exit 77
	fi
done
trap simnet_down EXIT

A4=198.51.100.10 B4=198.51.100.20 A6=2001:db8::10 B6=2001:db8::20

ok "simnet_up creates both namespaces" simnet_up "cs-simtest-$$"
[ -n "$SIMNET_SIM" ] || { tap_done; exit 1; }

no_default_routes() {
	local ns
	for ns in "$SIMNET_SIM" "$SIMNET_SBX"; do
		[ -z "$(ip -n "$ns" route show default)" ] || return 1
		[ -z "$(ip -n "$ns" -6 route show default)" ] || return 1
	done
}
ok "no default route in sim or sbx (v4, v6)" no_default_routes

# A route lookup sends nothing; the connect() proves the socket layer agrees.
unreachable_from() { # unreachable_from NS ADDR
	local out
	out=$(ip -n "$1" route get "$2" 2>&1) && return 1
	[[ $out == *"Network is unreachable"* ]] || return 1
	if [ "$1" = "$SIMNET_SBX" ]; then
		out=$(simnet_exec_sbx timeout 5 bash -c "exec 3<>/dev/tcp/$2/443" 2>&1) && return 1
		[[ $out == *"Network is unreachable"* ]] || return 1
	fi
}
# 10.255.255.1 (private, not ours), 3fff::1 (IPv6 documentation space,
# RFC 9637), and the machine's own gateway: no route from either side.
ok "sbx: IPv4 outside the fake ranges is ENETUNREACH" unreachable_from "$SIMNET_SBX" 10.255.255.1
ok "sbx: IPv6 outside the fake ranges is ENETUNREACH" unreachable_from "$SIMNET_SBX" 3fff::1
ok "sbx: the machine's gateway is unreachable" unreachable_from "$SIMNET_SBX" "$(ip route show default | awk '{print $3; exit}')"
ok "sim: no route out either (v4)" unreachable_from "$SIMNET_SIM" 10.255.255.1
ok "sim: no route out either (v6)" unreachable_from "$SIMNET_SIM" 3fff::1

ok "dns: set allowed.test (A + AAAA)" simnet_dns_set allowed.test "$A4" "$A6"
ok "dns: set blocked.test" simnet_dns_set blocked.test "$B4" "$B6"
check "A from sbx via the resolv.conf file" "$(simnet_exec_sbx_resolv dig +short allowed.test A)" = "$A4"
check "AAAA from sbx" "$(simnet_exec_sbx_resolv dig +short allowed.test AAAA)" = "$A6"
check "resolv.conf names sim's dnsmasq" "$(cat "$SIMNET_RESOLV")" = "nameserver $SIMNET_SIM_V4"
check "dnsmasq answers on its IPv6 address too" \
	"$(simnet_exec_sbx dig +short @"$SIMNET_SIM_V6" blocked.test AAAA)" = "$B6"
check "answers carry SIMNET_DNS_TTL (default 60)" \
	"$(simnet_exec_sbx dig +noall +answer @"$SIMNET_SIM_V4" allowed.test A | awk '{print $2}')" = 60
check "unknown name is NXDOMAIN" \
	"$(simnet_exec_sbx_resolv dig +noall +comments nosuch.test A | grep -o 'status: [A-Z]*')" = "status: NXDOMAIN"
check "subdomain of a known name is NXDOMAIN" \
	"$(simnet_exec_sbx_resolv dig +noall +comments x.allowed.test A | grep -o 'status: [A-Z]*')" = "status: NXDOMAIN"
ok "query log records the names asked" simnet_dns_queried allowed.test
ok "query log records unknown names too" simnet_dns_queried nosuch.test
nok "query log does not invent names" simnet_dns_queried never-asked.test

ok "re-point allowed.test to $B4" simnet_dns_set allowed.test "$B4"
check "sbx sees the new address without a restart" "$(simnet_exec_sbx_resolv dig +short allowed.test A)" = "$B4"
check "the old AAAA is gone with it" "$(simnet_exec_sbx_resolv dig +short allowed.test AAAA)" = ""
ok "delete allowed.test" simnet_dns_del allowed.test
check "deleted name is NXDOMAIN again" \
	"$(simnet_exec_sbx_resolv dig +noall +comments allowed.test A | grep -o 'status: [A-Z]*')" = "status: NXDOMAIN"

ok "listen tcp $A4:443" simnet_listen "$A4" 443 tcp
ok "listen tcp [$A6]:443" simnet_listen "$A6" 443 tcp
ok "listen udp $B4:5353" simnet_listen "$B4" 5353 udp
ok "listen tls $A4:8443" simnet_listen "$A4" 8443 tls
ok "listen https [$B6]:443" simnet_listen "$B6" 443 https
check "tcp over IPv4 answers with its line" \
	"$(simnet_exec_sbx socat -T3 - "TCP4:$A4:443" </dev/null)" = "simnet $A4 443 tcp"
check "tcp over IPv6 answers with its line" \
	"$(simnet_exec_sbx socat -T3 - "TCP6:[$A6]:443" </dev/null)" = "simnet $A6 443 tcp"
check "udp answers with its line" \
	"$(echo ping | simnet_exec_sbx socat -t3 -T3 - "UDP4:$B4:5353")" = "simnet $B4 5353 udp"
check "tls answers with its line" \
	"$(simnet_exec_sbx socat -T3 - "OPENSSL:$A4:8443,verify=0" </dev/null 2>/dev/null)" = "simnet $A4 8443 tls"
simnet_dns_set web.test "$B6" >/dev/null
check "https by name over IPv6 (curl, resolv.conf)" \
	"$(simnet_exec_sbx_resolv curl -sk --max-time 5 https://web.test/)" = "simnet $B6 443 https"
check "listener log names the sbx peer" \
	"$(awk '{print $1; exit}' "$(simnet_listen_log "$A4" 443 tcp)")" = "$SIMNET_SBX_V4"
ok "listen on a new fake host adds it" simnet_listen 198.51.100.77 8080 http
check "http over IPv4 (curl)" "$(simnet_exec_sbx curl -s --max-time 5 http://198.51.100.77:8080/)" = "simnet 198.51.100.77 8080 http"
nok "a port nobody listens on is refused" simnet_exec_sbx timeout 5 bash -c "exec 3<>/dev/tcp/$A4/9"
nok "simnet_add_host refuses 192.0.2.99 (outside the fake ranges)" simnet_add_host 192.0.2.99

# slowdns: one delay per query, concurrently.
if [ -x "$BUILD_DIR/tests/support/slowdns" ] && [ -x "$BUILD_DIR/tests/support/dnsburst" ]; then
	hosts="$SIMNET_DIR/burst.hosts"
	for i in $(seq 0 499); do echo "198.51.100.$((i % 200 + 1)) q$i.test"; done >"$hosts"
	ok "500 names loaded" simnet_dns_set_many "$hosts"
	ok "slowdns starts (20 ms)" simnet_slowdns 20
	one=$(simnet_exec_sbx "$BUILD_DIR/tests/support/dnsburst" --server "$SIMNET_SLOW_V4" --count 1)
	diag "1 query:   $one"
	burst=$(simnet_exec_sbx "$BUILD_DIR/tests/support/dnsburst" --server "$SIMNET_SLOW_V4" --count 500)
	diag "500 at once: $burst"
	total=$(sed -n 's/.*total_ms=\([0-9.]*\).*/\1/p' <<<"$burst")
	min=$(sed -n 's/.*min_ms=\([0-9.]*\).*/\1/p' <<<"$one")
	check "one query is held at least 20 ms" "$(awk -v m="$min" 'BEGIN {print (m >= 20)}')" = 1
	check "500 concurrent queries all answered" "$(grep -c 'answered=500 noerror=500' <<<"$burst")" = 1
	# Serialised they would take 10 s; concurrent, one delay plus dnsmasq's
	# own time. 200 ms leaves room for a loaded 2-core machine.
	check "500 concurrent queries take one delay, not 500 (${total} ms)" \
		"$(awk -v t="${total:-99999}" 'BEGIN {print (t < 200)}')" = 1
	check "slowdns over TCP" \
		"$(simnet_exec_sbx dig +tcp +short @"$SIMNET_SLOW_V4" q7.test A)" = "198.51.100.8"
else
	skip "slowdns burst" "slowdns/dnsburst not built in $BUILD_DIR"
fi

# bench/fw-baseline.sh, the shell practice the start-up benchmark compares
# against. Its guard is tested with a fake iptables first in PATH, so even a
# broken guard could not touch this machine's firewall.
fakebin="$SIMNET_DIR/fakebin"
mkdir -p "$fakebin"
printf '#!/bin/sh\necho "$@" >>"%s/iptables.calls"\nexit 1\n' "$SIMNET_DIR" >"$fakebin/iptables"
chmod 0755 "$fakebin/iptables"
printf '# names\nallowed.test\nunresolvable.test\n' >"$SIMNET_DIR/domains"
baseline="$SOURCE_DIR/bench/fw-baseline.sh"
nok "fw-baseline.sh refuses the initial network namespace" \
	env PATH="$fakebin:$PATH" "$baseline" "$SIMNET_DIR/domains"
check "... before running any iptables command" ! -e "$SIMNET_DIR/iptables.calls"
if simnet_exec_sbx iptables -S >/dev/null 2>&1; then
	simnet_dns_set allowed.test "$A4" >/dev/null
	simnet_listen "$B4" 443 tcp >/dev/null
	check "control: blocked host reachable before the baseline runs" \
		"$(simnet_exec_sbx socat -T3 - "TCP4:$B4:443" </dev/null)" = "simnet $B4 443 tcp"
	ok "fw-baseline.sh runs in sbx (one name unresolvable: warned, skipped)" \
		simnet_exec_sbx_resolv "$baseline" "$SIMNET_DIR/domains"
	check "one ACCEPT rule for the resolved address" \
		"$(simnet_exec_sbx iptables -S OUTPUT | grep -c -- "-d $A4/32 -j ACCEPT")" = 1
	check "allowed host reachable through it" \
		"$(simnet_exec_sbx socat -T3 - "TCP4:$A4:443" </dev/null)" = "simnet $A4 443 tcp"
	nok "blocked host rejected by it" simnet_exec_sbx socat -T3 - "TCP4:$B4:443" </dev/null
	check "IPv6 stays open, as in that practice" \
		"$(simnet_exec_sbx curl -sk --max-time 5 "https://[$B6]/")" = "simnet $B6 443 https"
else
	skip "fw-baseline.sh in sbx" "iptables does not work here"
fi

simnet_down
ok "simnet_down removed both namespaces" bash -c "! ip netns list | grep -q 'cs-simtest-$$-'"
tap_done
