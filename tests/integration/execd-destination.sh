#!/usr/bin/env bash
# The effective destination of git network commands, as the daemon computes
# it with the real git (remote names, push URLs, url.*.insteadOf and
# pushInsteadOf from the hostile repository's own config), judged by the
# static policy "push/fetch only to github.com/acme/*". Runs in a network
# namespace with loopback only: allowed network commands fail to resolve
# (status 128, not the policy's 120) and no packet leaves the machine.
# shellcheck disable=SC2119 # execd_conf/execd_start take optional arguments
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${EXECD_IN_NETNS:-}" ]; then
	exec unshare --net env EXECD_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
DENIED=120

cat >"$T/policy.conf" <<'POLICY'
allow git fetch,push,pull,ls-remote dest=github.com/acme/* reason="acme repositories"
deny git push flag=--force,-f reason="force pushes need review"
POLICY
execd_conf "backend = static" "policy_file = $T/policy.conf"
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }

R=$T/ws/repo
mkdir "$R" && chown "$EXECD_USER:" "$R"
g() { "${RUN_AS[@]}" env -i HOME="$T/home" /usr/bin/git -C "$R" "$@"; }
g init -q -b main .
g remote add origin https://github.com/acme/x.git
g remote add evil https://github.com/evil/x.git
g remote add sneaky https://github.com/acme/y.git
g config url.https://github.com/evil/.insteadOf https://github.com/acme/sneak-
g remote set-url sneaky https://github.com/acme/sneak-y.git
g remote add split https://github.com/acme/split.git
g remote set-url --push split https://github.com/evil/split.git
g config url.https://github.com/evil/pushed-.pushInsteadOf https://github.com/acme/pushme-

wgit() { # wgit ARGS...: git through the wrapper, in the repository; prints the status
	local st=0
	(cd "$R" && as_user "$T/bin/git" "$@" >/dev/null 2>"$T/err") || st=$?
	echo "$st"
}
last_dest() { grep '"type":"decision"' "$AUDIT" | tail -n 1 | sed -n 's/.*"destination":\("[^"]*"\|null\).*/\1/p'; }

st=$(wgit push --force origin main)
check "push --force to acme: denied" "$st" -eq $DENIED
check "... destination is the remote's URL" "$(last_dest)" = '"https://github.com/acme/x.git"'
st=$(wgit push evil main)
check "push to another organisation: denied" "$st" -eq $DENIED
check "... destination https://github.com/evil/x.git" "$(last_dest)" = '"https://github.com/evil/x.git"'
st=$(wgit push sneaky main)
check "repo-local insteadOf rewriting an acme URL to evil: denied" "$st" -eq $DENIED
check "... the destination is the rewritten URL" "$(last_dest)" = '"https://github.com/evil/y.git"'
st=$(wgit push split main)
check "push to a remote whose pushurl is elsewhere: denied" "$st" -eq $DENIED
check "... destination is the push URL" "$(last_dest)" = '"https://github.com/evil/split.git"'
st=$(wgit push https://github.com/acme/pushme-z.git main)
check "push to an acme URL that pushInsteadOf rewrites: denied" "$st" -eq $DENIED
check "... destination is the rewritten push URL" "$(last_dest)" = '"https://github.com/evil/pushed-z.git"'
st=$(wgit push --repo=https://github.com/evil/q.git)
check "push --repo=URL: denied" "$st" -eq $DENIED
check "... destination from --repo" "$(last_dest)" = '"https://github.com/evil/q.git"'
st=$(wgit push -o ci.skip https://github.com/evil/o.git main)
check "push -o VALUE URL: the option value is not taken for the remote" "$st" -eq $DENIED
check "... destination is the URL" "$(last_dest)" = '"https://github.com/evil/o.git"'
st=$(wgit push)
check "push without a remote (git would choose one): denied" "$st" -eq $DENIED
check "... destination unknown" "$(last_dest)" = 'null'
st=$(wgit -c remote.origin.url=https://github.com/evil/c.git push origin main)
check "git -c ... push: denied" "$st" -eq $DENIED
check "... destination unknown" "$(last_dest)" = 'null'

st=$(wgit ls-remote split)
check "ls-remote of the split remote uses its fetch URL (acme): allowed, fails offline" "$st" -eq 128
check "... destination https://github.com/acme/split.git" "$(last_dest)" = '"https://github.com/acme/split.git"'
st=$(wgit fetch origin)
check "fetch from acme: allowed (fails offline)" "$st" -eq 128
check "... destination https://github.com/acme/x.git" "$(last_dest)" = '"https://github.com/acme/x.git"'
st=$(wgit fetch --depth 1 sneaky)
check "fetch --depth N REMOTE: rewritten destination, denied" "$st" -eq $DENIED
check "... destination https://github.com/evil/y.git" "$(last_dest)" = '"https://github.com/evil/y.git"'
grep -q 'not a fault' "$T/err"
tap_result $? "the denial tells the agent it is policy, not a fault"
ok "audit chain verifies" audit_verify
execd_stop
tap_done
