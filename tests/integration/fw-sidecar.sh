#!/usr/bin/env bash
# The sidecar exemption (lib/sidecar.h, docs/kubernetes.md) with the real
# firewall in the simulated internet, without a container engine: sandbox-init
# runs as PID 1 of fresh namespaces in the sandbox namespace with
# CODE_SANDBOX_SIDECAR_UID/_ALLOW; while its agent (uid 1001) waits, other
# processes of the same network namespace probe as the sidecar's UID, as the
# agent's and as a third UID. Only the sidecar's UID reaches its destination
# and queries the upstream directly; the agent does neither (and the control
# shows both answer without the firewall). Bad exemptions stop the start
# (exit 112) before anything is installed; --check prints the rules.
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
for tool in ip nft dnsmasq socat dig setpriv "$FW_PROBE"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done

SIDECAR=10001 AGENT=1001 OTHER=10002
initenv_setup
initenv_cleanup_hook() { simnet_down; }
if ! simnet_up "cs-kube-fwsc-$$"; then
	echo "1..0 # SKIP simnet_up failed"
	exit 77
fi
IE_NETNS=$SIMNET_SBX
B4=$SIMNET_HOST_B4 B6=$SIMNET_HOST_B6 C4=198.51.100.30
simnet_dns_set sidecar.test "$B4" || exit 1
for l in "$B4 443" "$B6 443" "$C4 443"; do
	# shellcheck disable=SC2086
	simnet_listen $l tcp || exit 1
done
printf 'nameserver %s\n' "$SIMNET_SIM_V4" >"$IE/etc/resolv.conf"
printf 'api.allowed.test\n' >"$IE/etc/code-sandbox/allowlist"
cp "$FW_PROBE" "$IE/bin/fw-probe"
chmod 0755 "$IE/bin/fw-probe"
cat >"$IE/bin/agent.sh" <<EOF
#!/bin/sh
P=$IE/bin/fw-probe
{
	echo "uid=\$(id -u)"
	echo "dest4=\$(\$P tcp $B4 443 | cut -d' ' -f1)"
	echo "dest6=\$(\$P tcp $B6 443 | cut -d' ' -f1)"
	echo "dns_gate=\$(dig +time=2 +tries=1 sidecar.test A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
	if dig +time=1 +tries=1 @$SIMNET_SIM_V4 sidecar.test >/dev/null 2>&1; then echo direct_dns=ok; else echo direct_dns=failed; fi
} >$IE/out/agent.txt 2>&1
n=0
while [ ! -e $IE/out/done ] && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done
EOF
chmod 0755 "$IE/bin/agent.sh"
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }
quiet() { "$@" >/dev/null 2>&1; }
as() { # as UID CMD...: in the sandbox namespace, as that UID
	local u=$1
	shift
	simnet_exec_sbx setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"
}
probe() { as "$1" "$FW_PROBE" tcp "$2" 443 2000 | cut -d' ' -f1; }
ENV=("HOST_UID=$AGENT" "HOST_GID=$AGENT" "CODE_SANDBOX_SIDECAR_UID=$SIDECAR" "CODE_SANDBOX_SIDECAR_ALLOW=$B4:443 [$B6]:443")

# ---- control: without sandbox-init every UID reaches everything ----
check "control: the agent's UID reaches the sidecar's destination without the firewall" "$(probe "$AGENT" "$B4")" = ok
check "control: the agent's UID queries the upstream without the firewall" \
	-n "$(as "$AGENT" dig +short +time=1 +tries=1 @"$SIMNET_SIM_V4" sidecar.test A)"

# ---- --check prints the exemption's rules, installs nothing ----
st=0
initenv_run "${ENV[@]}" -- --check /bin/true >"$IE/out/check" 2>"$IE/out/check.err" || st=$?
check "--check with the exemption exits 0 ($st)" "$st" -eq 0
ok "--check prints the sidecar's DNS rule" grep -q "meta skuid $SIDECAR ip daddr $SIMNET_SIM_V4 udp dport 53 accept" "$IE/out/check"
ok "--check prints the sidecar's destination rule" grep -q "meta skuid $SIDECAR ip daddr $B4 tcp dport 443 counter accept" "$IE/out/check"
ok "--check prints the IPv6 destination rule" grep -q "meta skuid $SIDECAR ip6 daddr $B6 tcp dport 443 counter accept" "$IE/out/check"
nok "--check installed nothing" quiet simnet_exec_sbx nft list table inet code_sandbox

# ---- bad exemptions stop the start, nothing installed ----
for bad in "CODE_SANDBOX_SIDECAR_UID=0" "CODE_SANDBOX_SIDECAR_UID=$AGENT" "CODE_SANDBOX_SIDECAR_UID=65534" \
	"CODE_SANDBOX_SIDECAR_UID=abc" "CODE_SANDBOX_SIDECAR_ALLOW=169.254.169.254"; do
	rm -f "$IE/out/agent.txt"
	st=0
	initenv_run HOST_UID=$AGENT HOST_GID=$AGENT "$bad" -- /bin/sh "$IE/bin/agent.sh" >/dev/null 2>"$IE/out/bad.err" || st=$?
	check "$bad (without a UID, or a refused one): exit 112, agent never ran ($st)" "$st:$(test -e "$IE/out/agent.txt" && echo ran || echo no)" = 112:no
	nok "$bad: no table installed" quiet simnet_exec_sbx nft list table inet code_sandbox
done
grep '^sandbox-init' "$IE/out/bad.err" | sed 's/^/#   /'

# ---- the exemption in force while the agent waits ----
rm -f "$IE/out/agent.txt" "$IE/out/done"
c_before=$(wc -l <"$(simnet_listen_log "$C4" 443 tcp)")
initenv_start "${ENV[@]}" -- /bin/sh "$IE/bin/agent.sh" >"$IE/out/run" 2>"$IE/out/run.err"
wait_until 20 test -s "$IE/out/agent.txt"
wait_until 10 grep -q '^direct_dns=' "$IE/out/agent.txt"
A=$IE/out/agent.txt
sed 's/^/#   /' "$A"
check "the agent runs as $AGENT" "$(kv "$A" uid)" = "$AGENT"
check "the agent cannot reach the sidecar's destination over IPv4 ($(kv "$A" dest4))" "$(kv "$A" dest4)" = ECONNREFUSED
check "the agent cannot reach the sidecar's destination over IPv6 ($(kv "$A" dest6))" "$(kv "$A" dest6)" = ECONNREFUSED
check "the gate refuses the sidecar's name to the agent" "$(kv "$A" dns_gate)" = REFUSED
check "the agent cannot query the upstream directly" "$(kv "$A" direct_dns)" = failed
check "the sidecar's UID reaches its destination over IPv4" "$(probe "$SIDECAR" "$B4")" = ok
check "the sidecar's UID reaches its destination over IPv6" "$(probe "$SIDECAR" "$B6")" = ok
check "the sidecar's UID queries the upstream directly" \
	"$(as "$SIDECAR" dig +short +time=2 +tries=1 @"$SIMNET_SIM_V4" sidecar.test A)" = "$B4"
check "the sidecar's UID is refused elsewhere ($(probe "$SIDECAR" "$C4"))" "$(probe "$SIDECAR" "$C4")" = ECONNREFUSED
check "... and that host saw nothing" "$(wc -l <"$(simnet_listen_log "$C4" 443 tcp)")" -eq "$c_before"
check "the agent's UID, from outside sandbox-init too, is refused ($(probe "$AGENT" "$B4"))" "$(probe "$AGENT" "$B4")" = ECONNREFUSED
check "a third UID is refused ($(probe "$OTHER" "$B4"))" "$(probe "$OTHER" "$B4")" = ECONNREFUSED
nok "a third UID cannot query the upstream directly" as "$OTHER" dig +short +time=1 +tries=1 @"$SIMNET_SIM_V4" sidecar.test A
ok "the sidecar's accept counter counted the sidecar's connections" \
	sh -c "ip netns exec '$SIMNET_SBX' nft list table inet code_sandbox | grep -E 'meta skuid $SIDECAR ip daddr $B4 tcp dport 443 counter packets [1-9]'"
touch "$IE/out/done"
initenv_wait
check "sandbox-init exits with the agent's status (0: $IE_STATUS)" "$IE_STATUS" -eq 0
quiet simnet_exec_sbx nft delete table inet code_sandbox
tap_done
