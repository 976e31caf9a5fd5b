#!/usr/bin/env bash
# tests/kube/kube-play.sh: the Pod that `code-sandbox kube` prints, run with
# `podman kube play` in the simulated internet (tests/support/simnet.sh),
# then checked like test-sandbox.sh: identity, capabilities, settings lock,
# firewall default deny with its control, and the two trust levels of the
# one network namespace: the sidecar (sandbox-execd, its own UID) reaches
# its destination and resolves its names, the agent reaches neither; the
# sidecar audits the agent's request; the agent clones, fetches and pushes
# a new branch to an HTTPS git remote in the simnet through the sidecar's
# git relay, with a basic-auth credential that only the sidecar's Secret
# holds, and cannot reach that remote itself; `podman kube down` leaves
# nothing.
#
# podman 4.3 pods cannot join a named network namespace (--network ns: is
# refused for pods), so the pod is created with --network none and not
# started, its infra container is started, and the simnet's veth is moved
# into that namespace before the agent and the sidecar start. The Pod is
# adapted for podman 4.3 by tests/kube/podman-adapt.py (it prints each
# change). Output: TAP, then "N passed, M failed". Needs root and podman;
# otherwise one counted SKIP.
#   CODE_SANDBOX_IMAGE=localhost/code-sandbox:kube tests/kube/kube-play.sh
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$SRC/build/gcc}
# shellcheck source=tests/support/tap.sh
. "$SRC/tests/support/tap.sh"
# shellcheck source=tests/support/simnet.sh
. "$SRC/tests/support/simnet.sh"
# shellcheck source=tests/support/sandbox-launch.sh
. "$SRC/tests/support/sandbox-launch.sh"

T=kube-play.sh
[ "$(id -u)" -eq 0 ] || cs_skip_all "$T" "needs root (network namespaces of the simulated internet)"
[ "${CONTAINER_ENGINE:-podman}" = podman ] || cs_skip_all "$T" "podman kube play needs podman (CONTAINER_ENGINE=$CONTAINER_ENGINE)"
{ command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; } || cs_skip_all "$T" "no working podman"
podman kube play --help >/dev/null 2>&1 || cs_skip_all "$T" "this podman has no 'kube play'"
python3 -c 'import yaml' 2>/dev/null || cs_skip_all "$T" "needs python3-yaml"
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] ||
	cs_skip_all "$T" "podman's pod infra image needs catatonit (apt-get install catatonit)"
for t in ip nft dnsmasq socat openssl dig; do
	command -v "$t" >/dev/null || cs_skip_all "$T" "needs $t"
done
CS_ENG=podman

# Names of everything the test makes (pod, containers, volumes, namespaces).
PFX=${CS_KUBE_TEST_PREFIX:-cs-kube}-$$
NAME=$PFX
PODNS=$PFX-pod
SIDECAR_UID=10001
A_NAME='allowed.example.test'
S_NAME='sidecar-only.example.test'
C4=198.51.100.30
YAML=""
PLAYED=0

cleanup() {
	local st=$?
	if [ "$PLAYED" = 1 ]; then
		podman kube down "$YAML" >/dev/null 2>&1 || true
		podman pod rm -f "$NAME" >/dev/null 2>&1 || true
	fi
	podman volume rm -f "$NAME-config" "$NAME-workspace" >/dev/null 2>&1 || true
	podman secret rm "$NAME-credentials" >/dev/null 2>&1 || true
	ip netns delete "$PODNS" 2>/dev/null || true
	ip netns delete "$PFX-pod" 2>/dev/null || true
	cs_cleanup
	simnet_down
	exit "$st"
}
trap cleanup EXIT

cs_setup
cs_image
simnet_up "$PFX"
simnet_dns_set "$A_NAME" "$SIMNET_HOST_A4"
simnet_dns_set "$S_NAME" "$SIMNET_HOST_B4"
simnet_listen "$SIMNET_HOST_A4" 443 tcp
simnet_listen "$SIMNET_HOST_B4" 443 tcp
simnet_listen "$SIMNET_HOST_B6" 443 tcp
simnet_listen "$C4" 443 tcp
B_LOG=$(simnet_listen_log "$SIMNET_HOST_B4" 443 tcp)
C_LOG=$(simnet_listen_log "$C4" 443 tcp)
FWP=$CS_T/bin/fw-probe

# --- an HTTPS git remote with basic auth in the simnet (the forge) ---------
# tests/support/git-https-server.py on host B, port GIT_PORT: the sidecar
# may reach it (--sidecar-allow), the agent may not. Its credential and CA
# go only into the sidecar's Secret, as a user configures git globally.
GIT_PORT=8443
GIT_URL=https://$SIMNET_HOST_B4:$GIT_PORT/project.git
GIT_PASS=kube-secret-$RANDOM$RANDOM$RANDOM
SRV=$CS_T/srv
mkdir -p "$SRV"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$CS_T/git-key.pem" -out "$CS_T/git-ca.pem" -days 2 \
	-subj "/CN=$SIMNET_HOST_B4" -addext "subjectAltName=IP:$SIMNET_HOST_B4" 2>/dev/null
srv_git() { git -c safe.directory='*' "$@"; }
srv_git init -q --bare -b main "$SRV/project.git"
srv_git -C "$SRV/project.git" config http.receivepack true
srv_git init -q -b main "$CS_T/srv-seed"
printf 'hello through the relay\n' >"$CS_T/srv-seed/README"
srv_git -C "$CS_T/srv-seed" add README
srv_git -C "$CS_T/srv-seed" -c user.name=s -c user.email=s@example.test commit -q -m seed
srv_git -C "$CS_T/srv-seed" switch -q -c other
printf 'only on other\n' >"$CS_T/srv-seed/OTHER"
srv_git -C "$CS_T/srv-seed" add OTHER
srv_git -C "$CS_T/srv-seed" -c user.name=s -c user.email=s@example.test commit -q -m other
srv_git -C "$CS_T/srv-seed" push -q "$SRV/project.git" main other
SRV_MAIN=$(srv_git -C "$SRV/project.git" rev-parse main)
simnet_spawn "$SIMNET_SIM" "$CS_T/git-server.err" /usr/bin/python3 "$SRC/tests/support/git-https-server.py" \
	--root "$SRV" --cert "$CS_T/git-ca.pem" --key "$CS_T/git-key.pem" --user kube --password "$GIT_PASS" \
	--port-file "$CS_T/git-port" --log "$CS_T/git-server.log" --bind "$SIMNET_HOST_B4" --port "$GIT_PORT"
simnet_poll 10 test -s "$CS_T/git-port" || diag "the git server did not start: $(tail -3 "$CS_T/git-server.err")"

# --- the single-container launcher in the same run, for the start time ----
l0=$(date +%s%N)
cs_launch "$CS_T/launch.out" "$CS_T/launch.err" -- --no-daemon -- sh -c 'date +%s%N' || true
l1=$(head -1 "$CS_T/launch.out" | tr -dc 0-9)
launcher_ms=$(((${l1:-$l0} - l0) / 1000000))

# --- sandbox-init validates the exemption before changing anything -------
refusal() { # refusal UID: sandbox-init's exit status with that sidecar UID (no network)
	local caps=() c st=0
	for c in NET_ADMIN NET_BIND_SERVICE SETUID SETGID SETPCAP CHOWN DAC_OVERRIDE KILL; do caps+=(--cap-add="$c"); done
	podman run --rm --network none --cap-drop ALL "${caps[@]}" \
		--security-opt no-new-privileges -e HOST_UID="$CS_HOST_UID" -e HOST_GID="$CS_HOST_GID" \
		-e CODE_SANDBOX_DNS=198.51.100.53 -e CODE_SANDBOX_SIDECAR_UID="$1" \
		-e CODE_SANDBOX_SIDECAR_ALLOW="$SIMNET_HOST_B4" "$CS_IMAGE" true >/dev/null 2>"$CS_T/refusal.err" || st=$?
	echo "$st"
}
for u in 0 "$CS_HOST_UID" 1000 65534 x1; do
	check "sandbox-init refuses CODE_SANDBOX_SIDECAR_UID=$u (exit 112, config)" "$(refusal "$u")" -eq 112
done
check "sandbox-init accepts CODE_SANDBOX_SIDECAR_UID=$SIDECAR_UID" "$(refusal "$SIDECAR_UID")" -eq 0

# --- the manifests ---------------------------------------------------------
mkdir -p "$CS_WS/.cs-probe" "$CS_T/credentials"
cp "$CS_T/bin/fw-probe" "$CS_T/bin/probe" "$SRC/tests/support/sandbox-probe.sh" \
	"$SRC/tests/kube/kube-agent.sh" "$CS_WS/.cs-probe/"
chown -R "$CS_HOST_UID:$CS_HOST_GID" "$CS_WS/.cs-probe"
# The sidecar's Secret, mounted read-only as its HOME: the user's global git
# config (a credential helper for this remote only, the remote's CA) and the
# credential, readable by the sidecar's UID only. The helper answers only
# "get": git's store helper would try to rewrite its file on the read-only
# mount after every success (docs/kubernetes.md, "git through the sidecar").
printf 'username=kube\npassword=%s\n' "$GIT_PASS" >"$CS_T/credentials/git-credential"
cp "$CS_T/git-ca.pem" "$CS_T/credentials/ca.pem"
# shellcheck disable=SC2016 # git's shell expands it
git config -f "$CS_T/credentials/.gitconfig" "credential.https://$SIMNET_HOST_B4:$GIT_PORT.helper" \
	'!f() { test "$1" = get && cat /home/execd/git-credential; }; f'
git config -f "$CS_T/credentials/.gitconfig" http.sslCAInfo /home/execd/ca.pem
chown -R "$SIDECAR_UID:$CS_HOST_GID" "$CS_T/credentials"
chmod 0400 "$CS_T/credentials/git-credential" "$CS_T/credentials/.gitconfig" "$CS_T/credentials/ca.pem"
chmod 0500 "$CS_T/credentials"

"$SRC/bin/code-sandbox-kube" pod --name "$NAME" --image "$CS_IMAGE" --allow "$A_NAME" \
	--cluster-dns "$SIMNET_SIM_V4" --dns-search "" --host-uid "$CS_HOST_UID" --host-gid "$CS_HOST_GID" \
	--sidecar-uid "$SIDECAR_UID" --sidecar-allow "$SIMNET_HOST_B4:443" --sidecar-allow "$SIMNET_HOST_B4:$GIT_PORT" \
	--credentials-secret "$NAME-credentials" --git-repo "$SIMNET_HOST_B4:$GIT_PORT/project" \
	--workspace-pvc "$NAME-workspace" \
	--memory 4g --cpus 2 \
	-- bash /workspace/.cs-probe/kube-agent.sh /workspace/.cs-probe "$A_NAME" "$SIMNET_HOST_A4" \
	"$SIMNET_HOST_B4" 443 "$S_NAME" "$SIMNET_SIM_V4" /workspace/.cs-kube-done "$GIT_URL" "$GIT_PORT" >"$CS_T/pod.yaml"
ok "code-sandbox kube prints a ConfigMap and a Pod that pass the manifest check" \
	python3 "$SRC/tests/kube/manifests-check.py" "$CS_T/pod.yaml"

# The unmodified output is accepted by podman kube play (with the Secret
# it names present: podman 4.3 fails an optional Secret that is missing).
{
	printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\ntype: Opaque\nstringData:\n  git-credential: "not-a-real-token"\n---\n' "$NAME-credentials"
	cat "$CS_T/pod.yaml"
} >"$CS_T/pod-with-secret.yaml"
st=0
podman kube play --network none --start=false "$CS_T/pod-with-secret.yaml" >"$CS_T/play0.out" 2>&1 || st=$?
check "podman kube play accepts the generated Pod unchanged (created, not started)" "$st" -eq 0
[ "$st" -eq 0 ] || diag "$(tail -3 "$CS_T/play0.out")"
podman kube down "$CS_T/pod-with-secret.yaml" >/dev/null 2>&1 || true
podman pod rm -f "$NAME" >/dev/null 2>&1 || true
podman volume rm -f "$NAME-config" "$NAME-workspace" >/dev/null 2>&1 || true
podman secret rm "$NAME-credentials" >/dev/null 2>&1 || true

python3 "$SRC/tests/kube/podman-adapt.py" "$CS_T/pod.yaml" "$CS_T/play.yaml" "$CS_T" "$CS_WS" \
	"$CS_T/credentials" 2>"$CS_T/adapt.log"
while read -r line; do diag "$line"; done <"$CS_T/adapt.log"
YAML=$CS_T/play.yaml

# --- play, plumb the simnet into the pod's namespace, start -----------------
p0=$(date +%s%N)
st=0
podman kube play --network none --start=false "$YAML" >"$CS_T/play.out" 2>&1 || st=$?
PLAYED=1
check "podman kube play creates the adapted pod" "$st" -eq 0
if [ "$st" -ne 0 ]; then
	diag "$(tail -5 "$CS_T/play.out")"
	echo "1..$TAP_N"
	exit 1
fi
p1=$(date +%s%N)
infra=$(podman pod inspect -f '{{.InfraContainerID}}' "$NAME")
podman start "$infra" >/dev/null
ipid=$(podman inspect -f '{{.State.Pid}}' "$infra")
p2=$(date +%s%N)
ip netns attach "$PODNS" "$ipid"
ip -n "$SIMNET_SBX" link set veth0 netns "$PODNS"
ip -n "$PODNS" addr add "$SIMNET_SBX_V4/24" dev veth0
ip -n "$PODNS" addr add "$SIMNET_SBX_V6/64" dev veth0 nodad
ip -n "$PODNS" link set veth0 up
ip -n "$PODNS" route add 198.51.100.0/24 via "$SIMNET_SIM_V4"
ip -n "$PODNS" -6 route add 2001:db8::/32 via "$SIMNET_SIM_V6"
check "the pod's network namespace has no default route" -z "$(ip -n "$PODNS" route show default)$(ip -n "$PODNS" -6 route show default)"

# Controls: before sandbox-init runs, the sidecar's destination and the
# host nobody may reach answer from the pod's namespace, even as HOST_UID.
# From /: what runs as HOST_UID cannot enter the test's cwd when the
# checkout lies under a private (0700) directory.
pexec() { (cd / && ip netns exec "$PODNS" "$@"); }
ok "control: the sidecar's destination answers HOST_UID without the firewall" \
	pexec setpriv --reuid="$CS_HOST_UID" --regid="$CS_HOST_GID" --clear-groups -- "$FWP" tcp "$SIMNET_HOST_B4" 443 2000
ok "control: another host answers without the firewall" pexec "$FWP" tcp "$C4" 443 2000
ok "control: the sidecar's name resolves straight from the upstream without the firewall" \
	test -n "$(pexec dig @"$SIMNET_SIM_V4" +short +time=1 +tries=1 "$S_NAME" A)"
ok "control: IPv6 host answers without the firewall" pexec "$FWP" tcp "$SIMNET_HOST_B6" 443 2000
ok "control: the git remote answers HOST_UID without the firewall" \
	pexec setpriv --reuid="$CS_HOST_UID" --regid="$CS_HOST_GID" --clear-groups -- "$FWP" tcp "$SIMNET_HOST_B4" "$GIT_PORT" 2000
pexec setpriv --reuid="$CS_HOST_UID" --regid="$CS_HOST_GID" --clear-groups -- env -i PATH=/usr/bin:/bin HOME=/nonexistent \
	GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 timeout 20 git -c http.sslVerify=false ls-remote "$GIT_URL" \
	>"$CS_T/git-control.out" 2>&1 || true
check "control: without the firewall the remote asks for the credential (401) that the agent lacks" \
	-n "$(grep -i 'authentication failed\|401\|could not read Username' "$CS_T/git-control.out" || true)"
b_before=$(wc -l <"$B_LOG")
c_before=$(wc -l <"$C_LOG")

p3=$(date +%s%N)
podman pod start "$NAME" >/dev/null
agent=$NAME-agent
sidecar=$NAME-execd
n=0
until podman logs "$agent" 2>/dev/null | grep -q '^PROBE-END'; do
	n=$((n + 1))
	if [ "$n" -gt 1800 ] || [ "$(podman inspect -f '{{.State.Running}}' "$agent" 2>/dev/null)" = false ]; then break; fi
	sleep 0.1
done
podman logs "$agent" >"$CS_T/agent.out" 2>"$CS_T/agent.err" || true
tr -d '\r' <"$CS_T/agent.out" | sed -n '/^PROBE-BEGIN/,/^PROBE-END/p' >"$CS_T/probe.out"
P() { sed -n "s/^$1=//p" "$CS_T/probe.out" | head -1; }
check "the agent's command ran under sandbox-init and finished its probes" -n "$(grep '^PROBE-END' "$CS_T/probe.out" || true)"
if ! grep -q '^PROBE-END' "$CS_T/probe.out"; then diag "$(tail -20 "$CS_T/agent.err")"; diag "$(podman logs "$sidecar" 2>&1 | tail -5)"; fi
exec_ns=$(P exec_ns)
pod_ms=$(((${exec_ns:-$p3} - p3 + p2 - p0) / 1000000))
diag "start to the agent's exec: pod ${pod_ms} ms (kube play $(((p1 - p0) / 1000000)) ms + infra $(((p2 - p1) / 1000000)) ms + pod start to exec $(((${exec_ns:-$p3} - p3) / 1000000)) ms, the test's veth plumbing excluded) vs launcher ${launcher_ms} ms"
check "every sandbox-init step succeeds (no 'sandbox-init: STEP: REASON' line)" \
	-z "$(grep -E '^sandbox-init: [a-z-]+: ' "$CS_T/agent.err" | grep -v -E ': (info|debug):' || true)"

# --- identity, capabilities, settings (as test-sandbox.sh) ----------------
check "PID 1 of the agent container is sandbox-init" "$(P pid1_comm)" = sandbox-init
check "the agent is PID 1's child" "$(P k_ppid)" = 1
check "the agent's UID:GID are HOST_UID:HOST_GID ($CS_HOST_UID:$CS_HOST_GID)" "$(P uid):$(P gid)" = "$CS_HOST_UID:$CS_HOST_GID"
check "no supplementary groups (not the pod's fsGroup $SIDECAR_UID)" "$(P groups)" = "$CS_HOST_GID"
check "the agent is devuser with HOME /home/devuser owned by the host IDs" "$(P user):$(P home):$(P home_owner)" = "devuser:/home/devuser:$CS_HOST_UID:$CS_HOST_GID"
check "a file the agent writes in /workspace is owned by HOST_UID" "$(stat -c %u:%g "$CS_WS/agent-file" 2>/dev/null)" = "$CS_HOST_UID:$CS_HOST_GID"
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "agent $f is empty" "$(P "self_$f")" = 0000000000000000
done
check "agent NoNewPrivs 1 and Seccomp 2" "$(P self_NoNewPrivs):$(P self_Seccomp)" = 1:2
check "PID 1 keeps only KILL and NET_ADMIN" "$(P pid1_CapEff):$(P pid1_CapPrm)" = 0000000000001020:0000000000001020
check "PID 1's environment is unreadable" "$(P pid1_environ)" = denied
check "HOST_UID and CODE_SANDBOX_* (the sidecar exemption too) do not reach the agent" "$(P env_host_uid):$(P env_cs_vars)" = absent:0
check "managed settings root:root 0444, the strict profile" "$(P managed_stat):$(P managed_sha)" = "0:0:444:$(sha256sum "$SRC/settings-profiles/strict.json" | cut -d' ' -f1)"
for t in append cp rename symlink dir; do
	check "managed settings: $t attempt refused" "$(P "t_managed_$t")" != ok
done
check "managed settings unchanged after the attempts" "$(P managed_sha_after)" = "$(P managed_sha)"
check "root file system read-only (readOnlyRootFilesystem)" "$(P root_mount):$(P root_write)" = "ro:fail:1"
check "nothing writable by the agent outside home, /tmp, /workspace ($(P writable))" -z "$(P writable)"
check "sandbox-init's runtime directory (an emptyDir) not writable by the agent" "$(P run_init_writable)" = no
check "no setuid or setgid file, no sudo" "$(P suid_files):$(P sudo)" = "0:"
check "memory limit from the manifest applied (4Gi)" "$(P memory_max)" = 4294967296
diag "pids limit in the agent's cgroup: $(P pids_max) (Kubernetes sets it per node, not in the manifest)"

# --- firewall: default deny, both families, with the control above --------
check "firewall default deny, IPv4, for the agent ($(P tcp4_blocked))" "$(P tcp4_blocked)" != ok
check "firewall default deny, IPv6, for the agent ($(P tcp6_blocked))" "$(P tcp6_blocked)" != ok
check "raw sockets refused ($(P icmp_raw))" "$(P icmp_raw)" != ok
check "metadata address blocked ($(P metadata))" "$(P metadata)" != ok
check "the agent's allowlisted name resolves through the gate" "$(P k_allowed_dns)" = "$SIMNET_HOST_A4"
check "the agent reaches its allowlisted host ($(P k_allowed_tcp))" "$(P k_allowed_tcp)" = ok

# --- two trust levels in one network namespace -----------------------------
check "the agent cannot reach the sidecar's destination ($(P k_sidecar_dest_tcp))" "$(P k_sidecar_dest_tcp)" != ok
check "the gate refuses the sidecar's name to the agent" "$(P k_sidecar_name_dns)" = refused
check "the agent cannot query the upstream DNS directly, UDP ($(P k_upstream_udp53))" "$(P k_upstream_udp53)" != ok
check "the agent cannot query the upstream DNS directly, TCP ($(P k_upstream_tcp53))" "$(P k_upstream_tcp53)" != ok
b_mid=$(wc -l <"$B_LOG")
check "the sidecar's destination saw no connection from the agent ($b_before -> $b_mid)" "$b_mid" -eq "$b_before"
sx() { podman exec "$sidecar" "$@"; }
check "the sidecar runs as its own UID $SIDECAR_UID in the agent's group" "$(sx id -u):$(sx id -g)" = "$SIDECAR_UID:$CS_HOST_GID"
ok "the sidecar reaches its destination $SIMNET_HOST_B4:443" sx bash -c "exec 3<>/dev/tcp/$SIMNET_HOST_B4/443"
check "the sidecar's destination logged the sidecar's connection" "$(wc -l <"$B_LOG")" -gt "$b_mid"
nok "the sidecar is under default deny too: another host refused" sx timeout 5 bash -c "exec 3<>/dev/tcp/$C4/443"
check "that host saw no connection" "$(wc -l <"$C_LOG")" -eq "$c_before"
check "the sidecar resolves its own name straight from the upstream" "$(sx getent ahostsv4 "$S_NAME" | awk 'NR == 1 {print $1}')" = "$SIMNET_HOST_B4"
rules=$(pexec nft list table inet code_sandbox 2>/dev/null || true)
check "the table holds the sidecar's rules (meta skuid $SIDECAR_UID)" \
	-n "$(printf '%s\n' "$rules" | grep -E "meta skuid $SIDECAR_UID ip daddr $SIMNET_HOST_B4 tcp dport 443" || true)"
check "the exemption names only the sidecar's UID (no skuid rule for $CS_HOST_UID)" \
	-z "$(printf '%s\n' "$rules" | grep -E "skuid $CS_HOST_UID( |$)" || true)"
ok "an agent-UID socket cannot use the exemption even from the agent container (podman exec as HOST_UID)" \
	bash -c "! podman exec --user $CS_HOST_UID:$CS_HOST_GID $agent bash -c 'exec 3<>/dev/tcp/$SIMNET_HOST_B4/443' 2>/dev/null"

# --- the socket, the token, credentials and the audit log ------------------
check "socket directory: group HOST_GID, mode 710 ($(P k_sock_dir))" "$(P k_sock_dir)" = "710:$CS_HOST_GID"
check "the socket is a socket the agent's group may connect to ($(P k_sock))" "$(P k_sock)" = "socket:660"
check "the agent reads the token" "$(P k_token_read)" = ok
check "the agent cannot write the shared socket directory" "$(P k_sock_dir_write)" = denied
check "the sidecar's credentials are not in the agent container" "$(P k_credentials)" = 0
check "the audit log's volume is not in the agent container" "$(P k_audit_visible)" = no
check "the sidecar holds its credentials" -n "$(sx cat /home/execd/git-credential 2>/dev/null || true)"
check "the agent's request through the sidecar was refused by the policy (exit $(P k_wrapper_status): $(P k_wrapper_msg))" \
	"$(P k_wrapper_status)" != 0
audit=$(sx cat /var/log/code-sandbox/audit/audit.jsonl 2>/dev/null || true)
check "the sidecar wrote the audit record of the agent's request" \
	-n "$(printf '%s\n' "$audit" | grep '"git"' | grep -E '"deny"|policy' || true)"
check "the audit log belongs to the sidecar's UID, mode 600" "$(sx stat -c %u:%a /var/log/code-sandbox/audit/audit.jsonl 2>/dev/null)" = "$SIDECAR_UID:600"

# --- git through the sidecar's relay ----------------------------------------
check "git clone through the relay (exit $(P k_git_clone): $(P k_git_clone_msg))" "$(P k_git_clone)" = 0
check "... the clone has the remote's file" "$(P k_git_readme)" = "hello through the relay"
check "... and origin is the plain URL the agent typed" "$(P k_git_origin)" = "$GIT_URL"
check "git fetch of a branch the clone did not have" "$(P k_git_fetch):$(P k_git_fetched)" = "0:only on other"
check "git push of a new branch through the relay (exit $(P k_git_push): $(P k_git_push_msg))" "$(P k_git_push)" = 0
check "... the push arrived at the remote" "$(srv_git -C "$SRV/project.git" log -1 --format=%s agent-branch 2>/dev/null)" = "from the pod"
check "push to the default branch refused (exit $(P k_git_push_main))" "$(P k_git_push_main)" -ne 0
check "... with the policy's reason (the default branch changes through review)" "$(P k_git_push_main_msg)" -ge 1
check "push of a tag (not refs/heads/*) refused (exit $(P k_git_push_tag))" "$(P k_git_push_tag)" -ne 0
check "... by the policy's default deny" "$(P k_git_push_tag_msg)" -ge 1
check "... the remote's main did not move and has no such tag" \
	"$(srv_git -C "$SRV/project.git" rev-parse main):$(srv_git -C "$SRV/project.git" tag | wc -l)" = "$SRV_MAIN:0"
check "the agent cannot reach the git remote directly ($(P k_git_direct_tcp))" "$(P k_git_direct_tcp)" != ok
check "... nor with its own git bypassing the relay (exit $(P k_git_direct): $(P k_git_direct_msg))" \
	"$(P k_git_direct)" != 0
check "... which fails on the connection, not on a credential question" \
	-z "$(printf '%s' "$(P k_git_direct_msg)" | grep -i 'authentication\|401\|username' || true)"
check "the remote saw the relay's authenticated requests" "$(grep -c '"auth_ok": true' "$CS_T/git-server.log")" -ge 3
# The credential: in the sidecar (control), nowhere in the agent container.
check "control: the sidecar's HOME holds the credential" \
	-n "$(sx grep -rlsF -e "$GIT_PASS" /home/execd/ 2>/dev/null || true)"
agent_grep() { podman exec "$agent" grep -rlsF --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -e "$1" / 2>/dev/null || true; }
check "control: a search of the agent container's files finds the clone's file in the workspace" \
	-n "$(agent_grep 'hello through the relay' | grep -x /workspace/clone/README || true)"
in_agent=$(agent_grep "$GIT_PASS")
check "the credential is in no file of the agent container (${in_agent:-none})" -z "$in_agent"
check "control: the agent's environment was captured (SANDBOX_EXECD_SOCKET in it)" \
	-n "$(grep '^SANDBOX_EXECD_SOCKET=' "$CS_T/emptydir-tmp/agent-env.txt" 2>/dev/null || true)"
check "the credential is not in the agent's environment" -z "$(grep -F -e "$GIT_PASS" -e kube: "$CS_T/emptydir-tmp/agent-env.txt" 2>/dev/null || true)"
audit=$(sx cat /var/log/code-sandbox/audit/audit.jsonl 2>/dev/null || true)
check "the credential is not in the sidecar's audit log" -z "$(printf '%s\n' "$audit" | grep -F -e "$GIT_PASS" || true)"
check "... nor in the sidecar's log" -z "$(podman logs "$sidecar" 2>&1 | grep -F -e "$GIT_PASS" || true)"
adec() { printf '%s\n' "$audit" | grep '"type":"decision"' | grep -F "$SIMNET_HOST_B4:$GIT_PORT" | grep -c "$@" || true; }
check "audit: the relay's ls-remote and fetch (or clone) allowed" "$(adec -E '"op":"(ls-remote|fetch|clone)".*"allow"|"allow".*"op":"(ls-remote|fetch|clone)"')" -ge 2
check "audit: the push of refs/heads/agent-branch allowed" \
	"$(printf '%s\n' "$audit" | grep '"type":"decision"' | grep '"op":"push"' | grep '"dst":"refs/heads/agent-branch"' | grep -c '"allow"' || true)" -ge 1
check "audit: the pushes to main and of the tag denied" \
	"$(printf '%s\n' "$audit" | grep '"type":"decision"' | grep '"op":"push"' | grep -E '"dst":"refs/(heads/main|tags/agent-tag)"' | grep -c '"deny"' || true)" -ge 2
ok "the sidecar's audit chain verifies" sx /usr/libexec/code-sandbox/sandbox-execd --verify-audit /var/log/code-sandbox/audit/audit.jsonl

# --- the end: the agent exits 0, kube down leaves nothing -------------------
touch "$CS_WS/.cs-kube-done"
ast=$(podman wait "$agent" 2>/dev/null || echo none)
check "the agent container exits 0 (the agent's status)" "$ast" = 0
st=0
podman kube down "$YAML" >"$CS_T/down.out" 2>&1 || st=$?
check "podman kube down succeeds" "$st" -eq 0
left_engine() {
	podman pod ls --format '{{.Name}}' | grep -x "$NAME" || true
	podman ps -a --format '{{.Names}}' | grep -E "^$NAME(-|$)" || true
	podman volume ls --format '{{.Name}}' | grep -E "^$NAME" || true
	podman secret ls --format '{{.Name}}' | grep -E "^$NAME" || true
}
left=$(left_engine | tr '\n' ' ')
check "podman kube down leaves no pod or container (${left:-nothing left})" \
	-z "$(left_engine | grep -v -x -E "$NAME-config" || true)"
# podman 4.3 keeps the volume it made for the ConfigMap (kube down has no
# --force yet); say so, remove it, and check that then nothing is left.
case " $left " in *" $NAME-config "*) diag "podman 4.3 kube down kept the ConfigMap's volume $NAME-config: removed by the test" ;; *) ;; esac
podman volume rm -f "$NAME-config" >/dev/null 2>&1 || true
check "nothing of the pod is left after that ($(left_engine | tr '\n' ' '))" -z "$(left_engine)"
check "the pod's infra process is gone" "$(kill -0 "$ipid" 2>/dev/null && echo alive || echo gone)" = gone
PLAYED=0

# --- the Job's pod: the workspace cloned by the init container through the
# sidecar's git relay (the same remote, credential and Secret as above), the
# Job's status is the agent's. podman 4.3 plays no Job and no native
# sidecar, and runs init containers before any other: the adapter runs the
# Job's pod template as a Pod with the sidecar and the clone as containers,
# and the test starts them in the Kubernetes order (sidecar, its
# startupProbe until it passes, the clone to its exit, the agent).
JOB=$NAME-job
JWS=$CS_T/job-ws
mkdir -p "$JWS" && chmod 0777 "$JWS" # an emptyDir's mode
# shellcheck disable=SC2016 # the agent's shell expands it
"$SRC/bin/code-sandbox-kube" job --name "$JOB" --image "$CS_IMAGE" --repo "$GIT_URL" \
	--cluster-dns "$SIMNET_SIM_V4" --dns-search "" --host-uid "$CS_HOST_UID" --host-gid "$CS_HOST_GID" \
	--sidecar-uid "$SIDECAR_UID" --sidecar-allow "$SIMNET_HOST_B4:$GIT_PORT" --credentials-secret "$NAME-credentials" \
	-- bash -c 'echo "CLONED=$(cat /workspace/README)"; echo "OWNER=$(stat -c %u:%g /workspace/README)"; echo "ORIGIN=$(git -C /workspace config remote.origin.url)"; exit 7' \
	>"$CS_T/job.yaml"
ok "code-sandbox kube job prints a Job that passes the manifest check" python3 "$SRC/tests/kube/manifests-check.py" "$CS_T/job.yaml"
rm -rf "$CS_T"/emptydir-* "$CS_T"/*-resolv.conf
python3 "$SRC/tests/kube/podman-adapt.py" "$CS_T/job.yaml" "$CS_T/play-job.yaml" "$CS_T" "$JWS" \
	"$CS_T/credentials" 2>"$CS_T/adapt-job.log"
while read -r line; do diag "$line"; done < <(grep -E 'Job|native|startupProbe' "$CS_T/adapt-job.log")
YAML=$CS_T/play-job.yaml
NAME=$JOB
st=0
podman kube play --network none --start=false "$YAML" >"$CS_T/play-job.out" 2>&1 || st=$?
PLAYED=1
check "podman kube play creates the Job's pod (sidecar, clone, agent)" "$st" -eq 0
if [ "$st" -eq 0 ]; then
	infra=$(podman pod inspect -f '{{.InfraContainerID}}' "$JOB")
	podman start "$infra" >/dev/null
	ipid=$(podman inspect -f '{{.State.Pid}}' "$infra")
	PODNS1=$PODNS
	PODNS=$JOB-pod
	ip netns attach "$PODNS" "$ipid"
	ip -n "$PODNS1" link set veth0 netns "$PODNS"
	ip netns delete "$PODNS1"
	ip -n "$PODNS" addr add "$SIMNET_SBX_V4/24" dev veth0
	ip -n "$PODNS" link set veth0 up
	ip -n "$PODNS" route add 198.51.100.0/24 via "$SIMNET_SIM_V4"
	podman start "$JOB-execd" >/dev/null 2>"$CS_T/job-start.err" || diag "$(tail -3 "$CS_T/job-start.err")"
	mapfile -t probe < <(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))))' "$CS_T/startup-probe.json")
	n=0
	until podman exec "$JOB-execd" "${probe[@]}" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -lt 150 ] || break
		sleep 0.2
	done
	check "the native sidecar's startupProbe passes (the socket opened to the agent's group)" "$n" -lt 150
	podman start "$JOB-clone" >/dev/null 2>>"$CS_T/job-start.err" || diag "$(tail -3 "$CS_T/job-start.err")"
	cst=$(timeout 120 podman wait "$JOB-clone" 2>/dev/null || echo none)
	check "the clone init container exits 0 ($(podman logs "$JOB-clone" 2>&1 | tail -1))" "$cst" = 0
	podman start "$JOB-agent" >/dev/null 2>>"$CS_T/job-start.err" || diag "$(tail -3 "$CS_T/job-start.err")"
	jst=$(timeout 180 podman wait "$JOB-agent" 2>/dev/null || echo none)
	podman logs "$JOB-agent" 2>/dev/null | tr -d '\r' >"$CS_T/job-agent.out" || true
	check "the clone init container filled the workspace through the relay from the HTTPS remote" \
		"$(sed -n 's/^CLONED=//p' "$CS_T/job-agent.out")" = "hello through the relay"
	check "... origin is the plain URL" "$(sed -n 's/^ORIGIN=//p' "$CS_T/job-agent.out")" = "$GIT_URL"
	jaudit=$(cat "$CS_T/emptydir-audit/audit/audit.jsonl" 2>/dev/null || true)
	check "the Job's sidecar audited the clone (allowed by the --repo rule's fetch)" \
		"$(printf '%s\n' "$jaudit" | grep '"type":"decision"' | grep '"op":"clone"' | grep -F "$SIMNET_HOST_B4:$GIT_PORT" | grep -c '"allow"' || true)" -ge 1
	check "... and holds no credential" -z "$(printf '%s\n' "$jaudit" | grep -F -e "$GIT_PASS" || true)"
	check "the clone container had no Secret and no credential in its logs" \
		-z "$(podman logs "$JOB-clone" 2>&1 | grep -F -e "$GIT_PASS" || true)"
	check "the cloned files belong to HOST_UID:HOST_GID" "$(sed -n 's/^OWNER=//p' "$CS_T/job-agent.out")" = "$CS_HOST_UID:$CS_HOST_GID"
	check "the agent container's exit status is the agent's (7), what the Job reports" "$jst" = 7
	check "the sidecar started beside the agent" -n "$(podman logs "$JOB-execd" 2>&1 | grep 'listening on' || true)"
	st=0
	podman kube down "$YAML" >/dev/null 2>&1 || st=$?
	check "podman kube down of the Job's pod succeeds" "$st" -eq 0
	podman volume rm -f "$JOB-config" >/dev/null 2>&1 || true
	check "nothing of the Job's pod is left ($(left_engine | tr '\n' ' '))" -z "$(left_engine)"
fi
PLAYED=0

echo "1..$TAP_N"
echo "$((TAP_N - TAP_FAILED)) passed, $TAP_FAILED failed"
[ "$TAP_FAILED" -eq 0 ]
