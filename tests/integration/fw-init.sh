#!/usr/bin/env bash
# sandbox-init with the real firewall (start-up step 3) in the simulated
# internet: the agent, started by sandbox-init as PID 1 (non-root, no
# capabilities, seccomp), resolves an allowed name through the DNS gate and
# reaches it over IPv4 and IPv6; a blocked host is refused at once (and is
# reachable in the control run without sandbox-init); other names are
# REFUSED; direct DNS to the upstream fails; `nft flush ruleset` fails as
# the agent; --check prints the allowlist and the ruleset without touching
# the kernel; a broken allowlist stops the start before the agent runs.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
export SOURCE_DIR BUILD_DIR
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SOURCE_DIR/tests/support/simnet.sh"
# shellcheck source=tests/support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
tap_require_root
FW_PROBE=${FW_PROBE:-$BUILD_DIR/tests/support/fw-probe}
for tool in ip nft dnsmasq socat dig "$FW_PROBE"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done

initenv_setup
initenv_cleanup_hook() { simnet_down; }
if ! simnet_up "${SIMNET_PREFIX:-cs}-fwinit-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
IE_NETNS=$SIMNET_SBX
A4=$SIMNET_HOST_A4 A6=$SIMNET_HOST_A6 B4=$SIMNET_HOST_B4 B6=$SIMNET_HOST_B6
simnet_dns_set api.allowed.test "$A4" "$A6" || exit 1
simnet_dns_set blocked.test "$B4" "$B6" || exit 1
for l in "$A4 443" "$A6 443" "$B4 443" "$B6 443"; do
	# shellcheck disable=SC2086
	simnet_listen $l tcp || exit 1
done

# The image: its resolv.conf names sim's dnsmasq (the engine's resolver),
# its allowlist one name; the agent is a script writing what it saw.
printf 'nameserver %s\n' "$SIMNET_SIM_V4" >"$IE/etc/resolv.conf"
printf 'api.allowed.test\n' >"$IE/etc/code-sandbox/allowlist"
cp "$FW_PROBE" "$IE/bin/fw-probe"
chmod 0755 "$IE/bin/fw-probe"
cat >"$IE/bin/agent.sh" <<EOF
#!/bin/sh
P=$IE/bin/fw-probe
{
	echo "uid=\$(id -u)"
	echo "resolv=\$(grep -c '^nameserver 127.0.0.1' /etc/resolv.conf)"
	echo "dns_allowed=\$(dig +short +time=2 +tries=1 api.allowed.test A | head -n 1)"
	echo "dns_allowed6=\$(dig +short +time=2 +tries=1 api.allowed.test AAAA | head -n 1)"
	echo "tcp_allowed4=\$(\$P tcp $A4 443 | cut -d' ' -f1)"
	echo "tcp_allowed6=\$(\$P tcp $A6 443 | cut -d' ' -f1)"
	echo "dns_blocked=\$(dig +time=2 +tries=1 exfil-\$(id -u).never-asked.test A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
	echo "tcp_blocked4=\$(\$P tcp $B4 443 | cut -d' ' -f1)"
	echo "tcp_blocked6=\$(\$P tcp $B6 443 | cut -d' ' -f1)"
	if dig +time=1 +tries=1 @$SIMNET_SIM_V4 api.allowed.test >/dev/null 2>&1; then echo direct_dns=ok; else echo direct_dns=failed; fi
	if nft flush ruleset >/dev/null 2>&1; then echo nft_flush=ok; else echo nft_flush=failed; fi
	if nft list ruleset >/dev/null 2>&1; then echo nft_list=ok; else echo nft_list=failed; fi
} >$IE/out/agent.txt 2>&1
EOF
chmod 0755 "$IE/bin/agent.sh"
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }
quiet() { "$@" >/dev/null 2>&1; }

# ---- control: without sandbox-init the blocked host answers ----
check "control: blocked host reachable over IPv4 without the firewall" \
	"$(simnet_exec_sbx "$FW_PROBE" tcp "$B4" 443 | cut -d' ' -f1)" = ok
check "control: blocked host reachable over IPv6 without the firewall" \
	"$(simnet_exec_sbx "$FW_PROBE" tcp "$B6" 443 | cut -d' ' -f1)" = ok

quiet simnet_exec_sbx dig +time=1 +tries=1 @"$SIMNET_SIM_V4" control.never-asked.test A
ok "control: the upstream's query log records a name asked directly" simnet_dns_queried control.never-asked.test

# ---- --check: allowlist and ruleset, nothing installed ----
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- --check /bin/true >"$IE/out/check" 2>"$IE/out/check.err" || st=$?
check "--check exits 0 ($st)" "$st" -eq 0
ok "--check prints the allowlist entry" grep -q '^api.allowed.test' "$IE/out/check"
ok "--check prints the table" grep -q '^table inet code_sandbox {' "$IE/out/check"
ok "--check prints the set rule" grep -q 'ip daddr . tcp dport @allow_v4 counter accept' "$IE/out/check"
ok "--check names the upstream" grep -q "$SIMNET_SIM_V4" "$IE/out/check"
nok "--check installed nothing" quiet simnet_exec_sbx nft list table inet code_sandbox

# ---- the agent under the real firewall ----
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- /bin/sh "$IE/bin/agent.sh" >"$IE/out/run" 2>"$IE/out/run.err" || st=$?
check "sandbox-init with the firewall runs the agent to completion ($st)" "$st" -eq 0
sed 's/^/#   /' "$IE/out/agent.txt"
grep -i 'firewall\|error' "$IE/out/run.err" | head -n 5 | sed 's/^/#   /'
A=$IE/out/agent.txt
check "the agent is not root" "$(kv "$A" uid)" = 1001
check "resolv.conf points at the gate" "$(kv "$A" resolv)" = 1
ok "resolv.conf keeps the upstream for the next start" grep -q "^# code-sandbox upstream $SIMNET_SIM_V4" "$IE/etc/resolv.conf"
check "allowed name resolves through the gate (A)" "$(kv "$A" dns_allowed)" = "$A4"
check "allowed name resolves through the gate (AAAA)" "$(kv "$A" dns_allowed6)" = "$A6"
check "allowed name reachable over IPv4" "$(kv "$A" tcp_allowed4)" = ok
check "allowed name reachable over IPv6" "$(kv "$A" tcp_allowed6)" = ok
check "other names are REFUSED by the gate" "$(kv "$A" dns_blocked)" = REFUSED
nok "... and never reach the upstream" simnet_dns_queried exfil-1001.never-asked.test
check "blocked host refused over IPv4" "$(kv "$A" tcp_blocked4)" = ECONNREFUSED
check "blocked host refused over IPv6" "$(kv "$A" tcp_blocked6)" = ECONNREFUSED
check "direct DNS to the upstream fails" "$(kv "$A" direct_dns)" = failed
check "nft flush ruleset fails as the agent" "$(kv "$A" nft_flush)" = failed
check "the agent cannot even read the ruleset" "$(kv "$A" nft_list)" = failed
ok "the table is still there afterwards" quiet simnet_exec_sbx nft list table inet code_sandbox
check "blocked host still refused after the agent's attempts" \
	"$(simnet_exec_sbx "$FW_PROBE" tcp "$B4" 443 | cut -d' ' -f1)" = ECONNREFUSED

# ---- a warm start (the image's resolv.conf already rewritten) ----
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- /bin/sh "$IE/bin/agent.sh" >"$IE/out/run2" 2>"$IE/out/run2.err" || st=$?
check "second start reuses the kept upstream ($st)" "$st" -eq 0
check "second start: allowed name still resolves" "$(kv "$A" dns_allowed)" = "$A4"

# ---- a broken allowlist stops the start ----
quiet simnet_exec_sbx nft delete table inet code_sandbox
printf 'api.allowed.test\nbad..name\n' >"$IE/etc/code-sandbox/allowlist"
rm -f "$A"
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- /bin/sh "$IE/bin/agent.sh" >"$IE/out/run3" 2>"$IE/out/run3.err" || st=$?
check "broken allowlist: exit 112 ($st)" "$st" -eq 112
ok "broken allowlist: the error names file:line" grep -q '/etc/code-sandbox/allowlist:2' "$IE/out/run3.err"
check "broken allowlist: one 'sandbox-init: config:' line" "$(grep -c '^sandbox-init: config: ' "$IE/out/run3.err")" = 1
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- --check /bin/true >"$IE/out/check3" 2>&1 || st=$?
check "broken allowlist: --check exits 112 too ($st)" "$st" -eq 112
check "broken allowlist: the agent never ran" ! -e "$A"
nok "broken allowlist: no table installed" quiet simnet_exec_sbx nft list table inet code_sandbox

# ---- without CAP_NET_ADMIN the firewall cannot go in: no agent, no table ----
printf 'api.allowed.test\n' >"$IE/etc/code-sandbox/allowlist"
rm -f "$A"
st=0
IE_CAPS=${IE_CAPS/,+net_admin/} initenv_run HOST_UID=1001 HOST_GID=1001 -- /bin/sh "$IE/bin/agent.sh" \
	>"$IE/out/run4" 2>"$IE/out/run4.err" || st=$?
# Found before anything changes (the capability check), not by a failed batch.
check "no CAP_NET_ADMIN: exit 118 ($st)" "$st" -eq 118
check "no CAP_NET_ADMIN: one 'sandbox-init: capabilities:' line" "$(grep -c '^sandbox-init: capabilities: missing CAP_NET_ADMIN' "$IE/out/run4.err")" = 1
grep '^sandbox-init: ' "$IE/out/run4.err" | sed 's/^/#   /'
check "no CAP_NET_ADMIN: the agent never ran" ! -e "$A"

tap_done
