#!/usr/bin/env bash
# test-sandbox.sh: proves the container is what README.md and SECURITY.md
# say. Builds the image if needed (bin/code-sandbox build), starts it exactly
# as the launcher does (bin/code-sandbox, with the knobs CONTAINER_ENGINE,
# CODE_SANDBOX_IMAGE, CODE_SANDBOX_NETWORK, CODE_SANDBOX_DNS,
# CODE_SANDBOX_EXTRA_CA, CODE_SANDBOX_NAME) in a simulated internet
# (tests/support/simnet.sh: nothing leaves the machine), and checks from
# inside, as the agent (tests/support/sandbox-probe.sh), and from outside.
# Every block has its control: the blocked host answers without the firewall.
# The real agent's side (claude -p against a scripted fake API; managed
# settings outranking a hostile .claude/settings.local.json, settings.json
# and .mcp.json) is tests/e2e-agent.sh; tests/run-all.sh runs both.
#
# Output: TAP lines "ok N - ..." then "N passed, M failed". Needs root (the
# network namespaces) and a container engine; otherwise one counted SKIP.
#   CODE_SANDBOX_IMAGE=localhost/code-sandbox:pack ./test-sandbox.sh
set -euo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
export BUILD_DIR=${BUILD_DIR:-$SRC/build/gcc}
# shellcheck source=tests/support/tap.sh
. "$SRC/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SRC/tests/support/simnet.sh"
# shellcheck source=tests/support/fakeapi.sh
. "$SRC/tests/support/fakeapi.sh"
# shellcheck source=tests/support/sandbox-launch.sh
. "$SRC/tests/support/sandbox-launch.sh"

cs_need_root_and_engine test-sandbox.sh

cleanup() {
	local st=$?
	cs_cleanup
	simnet_down
	exit "$st"
}
trap cleanup EXIT

summary() {
	echo "1..$TAP_N"
	echo "$((TAP_N - TAP_FAILED)) passed, $TAP_FAILED failed"
	[ "$TAP_FAILED" -eq 0 ]
}

META=169.254.169.254
UDPPORT=5353

cs_setup
cs_image
simnet_up "cs-packtest-$$"
cs_net_up
printf '{"turns": [], "final": "probe"}\n' >"$CS_T/api-script.json"
fakeapi_up "$CS_T/api-script.json"
simnet_dns_set blocked.example.test "$SIMNET_HOST_B4" "$SIMNET_HOST_B6"
simnet_listen "$SIMNET_HOST_B4" 443 tcp
simnet_listen "$SIMNET_HOST_B6" 443 tcp
simnet_listen "$SIMNET_HOST_B4" "$UDPPORT" udp
# A stand-in for the cloud metadata service, inside our namespaces only.
ip -n "$SIMNET_SIM" addr add "$META/32" dev lo
ip -n "$SIMNET_SBX" route add "$META/32" via "$SIMNET_SIM_V4"
simnet_listen "$META" 80 tcp
FWP=$CS_T/bin/fw-probe

# --- controls: without sandbox-init the blocked hosts answer --------------
control() { # control PHASE
	ok "control ($1): blocked IPv4 host reachable without the firewall" simnet_exec_sbx "$FWP" tcp "$SIMNET_HOST_B4" 443 2000
	ok "control ($1): blocked IPv6 host reachable without the firewall" simnet_exec_sbx "$FWP" tcp "$SIMNET_HOST_B6" 443 2000
	ok "control ($1): UDP answered without the firewall" simnet_exec_sbx "$FWP" udp "$SIMNET_HOST_B4" "$UDPPORT" 2000
	ok "control ($1): metadata address reachable without the firewall" simnet_exec_sbx "$FWP" tcp "$META" 80 2000
	ok "control ($1): raw ICMP answered without the firewall" simnet_exec_sbx "$FWP" icmp "$SIMNET_HOST_B4" 2000
	ok "control ($1): the blocked name resolves without the DNS gate" \
		test -n "$(simnet_exec_sbx dig @"$SIMNET_SIM_V4" +short +time=1 +tries=1 blocked.example.test A)"
}
control before

# --- the main run: the probe as the agent --------------------------------
mkdir -p "$CS_WS/.cs-probe"
cp "$CS_T/bin/fw-probe" "$CS_T/bin/probe" "$SRC/tests/support/sandbox-probe.sh" "$CS_WS/.cs-probe/"
chown -R "$CS_HOST_UID:$CS_HOST_GID" "$CS_WS/.cs-probe"
dns_before=$(grep -c 'blocked.example.test' "$(simnet_dns_log)" || true)
listen_logs() {
	cat "$(simnet_listen_log "$SIMNET_HOST_B4" 443 tcp)" "$(simnet_listen_log "$SIMNET_HOST_B6" 443 tcp)" \
		"$(simnet_listen_log "$SIMNET_HOST_B4" "$UDPPORT" udp)" "$(simnet_listen_log "$META" 80 tcp)" | wc -l
}
conns_before=$(listen_logs)
st=0
cs_launch "$CS_T/probe.out" "$CS_T/probe.err" CODE_SANDBOX_LOG=info -- \
	-- env CS_PROBE_SIM_DNS="$SIMNET_SIM_V4" bash /workspace/.cs-probe/sandbox-probe.sh /workspace/.cs-probe \
	"$SIMNET_HOST_B4" "$SIMNET_HOST_B6" "$UDPPORT" "$META" || st=$?
dns_after=$(grep -c 'blocked.example.test' "$(simnet_dns_log)" || true)
conns_after=$(listen_logs)
check "the container starts through bin/code-sandbox and the agent's command exits 0" "$st" -eq 0
if [ "$st" -ne 0 ]; then diag "$(tail -20 "$CS_T/probe.err")"; fi
P() { sed -n "s/^$1=//p" "$CS_T/probe.out" | head -1; }
check "every sandbox-init step succeeds (no 'sandbox-init: STEP: REASON' line)" \
	-z "$(grep -E '^sandbox-init: [a-z-]+: ' "$CS_T/probe.err" | grep -v -E ': (info|debug):' || true)"
fwline=$(grep -o 'Firewall: table inet code_sandbox installed and verified.*' "$CS_T/probe.err" || true)
check "sandbox-init installed and verified the firewall (${fwline:-no such line})" -n "$fwline"
check "PID 1 is sandbox-init" "$(P pid1_comm)" = sandbox-init
check "the agent is PID 1's child" "$(P self_ppid)" = 1
check "the agent's UID is HOST_UID ($CS_HOST_UID)" "$(P uid)" = "$CS_HOST_UID"
check "the agent's GID is HOST_GID ($CS_HOST_GID)" "$(P gid)" = "$CS_HOST_GID"
check "no supplementary groups" "$(P groups)" = "$CS_HOST_GID"
check "the agent is devuser with HOME /home/devuser" "$(P user):$(P home)" = devuser:/home/devuser
check "the home is owned by the host IDs" "$(P home_owner)" = "$CS_HOST_UID:$CS_HOST_GID"
check "a file the agent writes in /workspace appears on the host owned by the host user" \
	"$(stat -c %u:%g "$CS_WS/agent-file" 2>/dev/null)" = "$CS_HOST_UID:$CS_HOST_GID"
check "/tmp is writable" "$(P tmp_write)" = ok
check "HOST_UID and CODE_SANDBOX_* do not reach the agent" "$(P env_host_uid):$(P env_cs_vars)" = absent:0
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "agent $f is empty" "$(P "self_$f")" = 0000000000000000
done
check "agent NoNewPrivs is 1" "$(P self_NoNewPrivs)" = 1
check "agent seccomp filter active (Seccomp 2)" "$(P self_Seccomp)" = 2
# CAP_KILL (5) and CAP_NET_ADMIN (12): 1<<5 | 1<<12.
check "PID 1 keeps only KILL and NET_ADMIN (CapEff)" "$(P pid1_CapEff)" = 0000000000001020
check "PID 1 keeps only KILL and NET_ADMIN (CapPrm)" "$(P pid1_CapPrm)" = 0000000000001020
check "PID 1's environment is unreadable" "$(P pid1_environ)" = denied

check "managed settings root:root 0444" "$(P managed_stat)" = 0:0:444
check "managed settings are the chosen profile (strict)" "$(P managed_sha)" = "$(sha256sum "$SRC/settings-profiles/strict.json" | cut -d' ' -f1)"
check "the image's profile is the repository's" "$(P profile_sha)" = "$(P managed_sha)"
check "the user settings mirror root:root 0444, the profile's bytes" "$(P user_stat):$(P user_sha)" = "0:0:444:$(P managed_sha)"
for t in append cp rename symlink dir; do
	check "managed settings: $t attempt refused" "$(P "t_managed_$t")" != ok
done
check "managed settings unchanged after the attempts" "$(P managed_sha_after)" = "$(P managed_sha)"
for t in append cp; do
	check "user settings mirror: $t attempt refused" "$(P "t_user_$t")" != ok
done
# ~/.claude is devuser's own directory (Claude Code writes there), so renaming
# the mirror away succeeds; what matters is that managed settings outrank it
# (allowManagedPermissionRulesOnly), which tests/e2e-agent.sh shows with the
# real claude. Recorded here so a change is seen.
diag "user mirror rename: $(P t_user_rename), symlink: $(P t_user_symlink), dir swap: $(P t_user_dir) (devuser owns ~/.claude)"

check "firewall default deny, IPv4 (blocked host: $(P tcp4_blocked))" "$(P tcp4_blocked)" != ok
check "firewall default deny, IPv6 (blocked host: $(P tcp6_blocked))" "$(P tcp6_blocked)" != ok
check "UDP to a blocked host gets no answer ($(P udp_blocked))" "$(P udp_blocked)" != ok
check "raw sockets refused ($(P icmp_raw))" "$(P icmp_raw)" != ok
check "metadata address blocked ($(P metadata))" "$(P metadata)" != ok
check "DNS straight to the upstream resolver blocked ($(P dns_direct))" "$(P dns_direct)" != ok
check "the allowed API name resolves through the gate" "$(P dns_allowed)" = "$FAKEAPI_HOST4"
check "other names refused by the DNS gate" "$(P dns_blocked)" = refused
check "the refused name never reached the upstream resolver" "$dns_after" -eq "$dns_before"
check "allowed fake API reachable over HTTPS with the extra CA ($(P api_https))" "$(P api_https)" = "HTTP/1.1 404 Not Found"
check "the fake API logged the agent's request" -n "$(grep '"/cs-probe"' "$FAKEAPI_LOG" || true)"
check "no blocked listener saw a connection during the run ($conns_before -> $conns_after)" "$conns_after" -eq "$conns_before"

check "no sudo, doas or pkexec ($(P sudo))" -z "$(P sudo)"
check "no setuid or setgid file" "$(P suid_files)" = 0
# File capabilities (no tool in the image reads them): the image's files
# from the host, where podman can mount them (no_new_privs makes them inert
# too; a package added for a project's toolchain may ship one, e.g. ping).
if [ "$CS_ENG" = podman ] && command -v getcap >/dev/null && img_root=$(podman image mount "$CS_IMAGE" 2>/dev/null); then
	fcaps=$(getcap -r "$img_root" 2>/dev/null | sed "s|^$img_root||" | tr '\n' ' ')
	podman image unmount "$CS_IMAGE" >/dev/null 2>&1 || true
	check "no file with file capabilities in the image ($fcaps)" -z "$fcaps"
fi
check "nothing writable by the agent outside home, /tmp, /workspace ($(P writable))" -z "$(P writable)"
check "sandbox-init's runtime directory not writable by the agent" "$(P run_init_writable)" = no
check "no container engine socket" "$(P engine_socket)" = none
check "no SSH keys" "$(P ssh_keys)" = 0
check "root file system mounted read-only" "$(P root_mount)" = ro
check "writing into /etc fails" "$(P root_write)" != ok
check "pids limit applied (1024)" "$(P pids_max)" = 1024
check "memory limit applied (4g)" "$(P memory_max)" = 4294967296
check "claude --version as devuser ($(P claude_version))" -n "$(P claude_version | grep -E '^[0-9]+\.[0-9]+\.[0-9]+ \(Claude Code\)$' || true)"
if cs_has_opencode "$CS_IMAGE"; then
	check "opencode --version as devuser ($(P opencode_version))" -n "$(P opencode_version | grep -E '^[0-9]+\.[0-9]+\.[0-9]+' || true)"
else
	# The default image is Claude Code's; opencode is the variant's (below).
	check "the image has no opencode (label io.code-sandbox.opencode=0: $(P opencode_version))" \
		-z "$(P opencode_version | grep -E '^[0-9]+\.[0-9]+\.[0-9]+' || true)"
fi

# --- the controls again, after deleting the table -------------------------
control after

# --- SIGTERM from the engine reaches the agent: 143, not 137 --------------
st=0
cs_launch "$CS_T/term.out" "$CS_T/term.err" -- -- sleep 300 &
launcher=$!
CS_RUN=$((CS_RUN + 1)) # the background subshell's count is not ours
name=$(cs_last_name)
CS_NAMES+=("$name")
running() { "$CS_ENG" exec "$name" sh -c 'grep -qx sleep /proc/[0-9]*/comm' >/dev/null 2>&1; }
if wait_until 60 running; then
	# A second terminal: `code-sandbox shell` attaches under the agent's
	# filter, as the agent's user (the engine's exec alone starts it with
	# only the engine's seccomp profile, where unshare -Ur works).
	sh_out=$(cd "$CS_WS" && printf '%s\n' 'id -u' 'grep -E "^(Seccomp_filters|NoNewPrivs):" /proc/self/status' \
		'unshare -Ur true 2>/dev/null && echo unshare=ok || echo unshare=refused' |
		env HOME="$CS_T/hosthome" CONTAINER_ENGINE="$CS_ENG" CODE_SANDBOX_NAME="$name" "$SRC/bin/code-sandbox" shell 2>&1)
	check "shell: attaches as the host UID ($(head -n 1 <<<"$sh_out"))" "$(head -n 1 <<<"$sh_out")" = "$CS_HOST_UID"
	# The engine's filter plus the agent's two (the rule table and the
	# fixed tail that refuses unreviewed numbers): at least 2 on top of none.
	nf=$(sed -n 's/^Seccomp_filters:[[:space:]]*//p' <<<"$sh_out")
	check "shell: the agent's seccomp filters on top of the engine's (Seccomp_filters ${nf:-none})" "${nf:-0}" -ge 3
	check "shell: no_new_privs" -n "$(grep -xP 'NoNewPrivs:\t1' <<<"$sh_out" || true)"
	check "shell: no user namespace (unshare -Ur refused)" -n "$(grep -x unshare=refused <<<"$sh_out" || true)"
	t0=$SECONDS
	"$CS_ENG" stop -t 20 "$name" >/dev/null 2>&1 || true
	wait "$launcher" || st=$?
	check "stop forwards SIGTERM to the agent: exit 143 (got $st)" "$st" -eq 143
	check "the agent stopped on SIGTERM, not after the kill timeout ($((SECONDS - t0)) s)" $((SECONDS - t0)) -lt 15
else
	wait "$launcher" || st=$?
	check "stop forwards SIGTERM to the agent: exit 143 (the container never ran: $st)" 1 -eq 0
	diag "$(tail -5 "$CS_T/term.err")"
fi
cs_flush_firewall

# --- the agent's orphans are reparented to PID 1 and reaped ---------------
st=0
cs_launch "$CS_T/orphans.out" "$CS_T/orphans.err" -- -- /workspace/.cs-probe/probe orphans 5 || st=$?
orph=$(tr '\n' ' ' <"$CS_T/orphans.out")
check "orphans of the agent are reparented to PID 1 and reaped ($orph)" \
	"$(grep -c -x -E 'orphans_reparented=5|orphans_left=0|zombies_after=0' "$CS_T/orphans.out" || true)" = 3

# --- opencode: the opt-in variant (the default image's layers plus one) ---
# Never a silent pass: the variant is built (from the cache) when missing.
if ! cs_has_opencode "$CS_IMAGE"; then
	st=0
	cs_launch "$CS_T/nooc.out" "$CS_T/nooc.err" -- -- opencode --version || st=$?
	check "code-sandbox -- opencode on the default image: exit 127, no container ($st)" "$st" -eq 127
	check "... and it says how to get it (build --with-opencode)" -n "$(grep -F 'build --with-opencode' "$CS_T/nooc.err" || true)"
fi
if cs_image_opencode; then
	st=0
	cs_launch "$CS_T/oc.out" "$CS_T/oc.err" CODE_SANDBOX_IMAGE="$CS_OC_IMAGE" -- \
		-- sh -c 'id -un; stat -c %u:%g:%a /usr/local/bin/opencode; test -w /usr/local/bin/opencode && echo writable || echo not-writable; timeout 60 opencode --version 2>&1 | head -n 1' || st=$?
	check "opencode variant $CS_OC_IMAGE: starts through bin/code-sandbox ($st)" "$st" -eq 0
	check "opencode variant: opencode --version as devuser ($(sed -n 4p "$CS_T/oc.out"))" \
		"$(sed -n 1p "$CS_T/oc.out"):$(sed -n 4p "$CS_T/oc.out" | grep -cE '^[0-9]+\.[0-9]+\.[0-9]+')" = devuser:1
	check "opencode variant: the binary is root's, 0755, not writable by the agent" \
		"$(sed -n 2,3p "$CS_T/oc.out" | tr '\n' ' ')" = "0:0:755 not-writable "
	if [ "$st" -ne 0 ]; then diag "$(tail -5 "$CS_T/oc.err")"; fi
else
	check "opencode variant $CS_OC_IMAGE: built with bin/code-sandbox build --with-opencode" 1 -eq 0
fi

# --- a second start: settings restored, profile chosen at launch ----------
st=0
cs_launch "$CS_T/perm.out" "$CS_T/perm.err" CODE_SANDBOX_PROFILE=permissive -- \
	-- sh -c 'sha256sum /etc/claude-code/managed-settings.json ~/.claude/settings.json; stat -c %u:%g:%a ~/.claude/settings.json
		cp /bin/true /tmp/cs-exec && /tmp/cs-exec && echo tmp_exec=ok; grep " /tmp " /proc/mounts' || st=$?
perm_sha=$(sha256sum "$SRC/settings-profiles/permissive.json" | cut -d' ' -f1)
check "CODE_SANDBOX_PROFILE=permissive installs the permissive profile, no rebuild" \
	"$(awk 'NR == 1 {print $1}' "$CS_T/perm.out")" = "$perm_sha"
check "the next start restores the user mirror (the profile's bytes, root 0444)" \
	"$(awk 'NR == 2 {print $1}' "$CS_T/perm.out"):$(sed -n 3p "$CS_T/perm.out")" = "$perm_sha:0:0:444"
# The same on Docker, whose --tmpfs adds noexec unless told exec.
check "/tmp: tmpfs, nosuid, nodev, programs run from it ($(sed -n 5p "$CS_T/perm.out" | cut -d' ' -f4))" \
	"$(sed -n 4p "$CS_T/perm.out"):$(sed -n 5p "$CS_T/perm.out" | cut -d' ' -f3,4 | grep -c 'tmpfs .*nosuid,nodev' | tr -d '\n'):$(sed -n 5p "$CS_T/perm.out" | grep -c noexec | tr -d '\n')" = tmp_exec=ok:1:0
# A size (CODE_SANDBOX_TMP_SIZE, default 1g): a tmpfs without one may take
# half the host's RAM.
check "/tmp: the launcher's size, 1g ($(sed -n 5p "$CS_T/perm.out" | cut -d' ' -f4 | tr ',' '\n' | grep '^size=' || echo no size))" \
	"$(sed -n 5p "$CS_T/perm.out" | cut -d' ' -f4 | tr ',' '\n' | grep -c '^size=1048576k$' | tr -d '\n')" = 1

summary
