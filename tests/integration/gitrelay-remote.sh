#!/usr/bin/env bash
# The git relay against a real remote: a loopback `git http-backend` over
# HTTPS with basic auth, whose credential exists only in the daemon user's
# home (tests/integration/gitrelay-common.sh). The agent side is plain git
# with the image's system gitconfig and git-remote-sandbox: clone, fetch,
# pull, push of a new branch and a fast-forward, pushes the static policy
# refuses (non-fast-forward, the default branch, a repository it does not
# name, force, delete), tags, a 50 MB binary file and a 10,000-commit
# repository; the credential never reaches the agent, the audit log or the
# daemon's log, and the agent cannot reach the remote without the relay.
# Runs in its own network namespace (loopback only), pid and mount ones.
set -uo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${GR_IN_NS:-}" ]; then
	exec unshare --net --pid --fork --mount --mount-proc env GR_IN_NS=1 "$0" "$@"
fi
# shellcheck source=tests/integration/gitrelay-common.sh
. "$SOURCE_DIR/tests/integration/gitrelay-common.sh"
gr_setup

srv_repo r
srv_repo other
cat >"$T/policy.conf" <<POL
allow git ls-remote,fetch dest=127.0.0.1:$PORT/*
allow git push dest=127.0.0.1:$PORT/r ref=refs/heads/*,refs/tags/*
deny git push force=yes reason="force pushes need review"
deny git push delete=yes reason="deleting remote refs needs review"
deny git push default=yes reason="the default branch is protected"
deny git push ff=no reason="not a fast-forward"
POL
chmod 644 "$T/policy.conf"
gr_conf "backend = static" "policy_file = $T/policy.conf"
gr_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }
cd "$T/ws" || exit 1

# --- without the relay, the agent has no way in ----------------------------
st=0
agent_direct git ls-remote "$BASE/r.git" >/dev/null 2>"$T/err" || st=$?
check "the agent's own git, bypassing the helper, gets no credential (401)" "$st" -ne 0
st=0
agent git -c protocol.https.allow=always -c url.https://.insteadOf=https:// \
	ls-remote "$BASE/r.git" >/dev/null 2>&1 || st=$?
check "... nor with its own insteadOf overriding the system config" "$st" -ne 0

# --- reading ------------------------------------------------------------------
out=$(agent git ls-remote "$BASE/r.git" 2>"$T/err")
check "ls-remote through the relay" "$(echo "$out" | grep -c 'refs/heads/main')" -eq 1
ok "clone through the relay" agent git clone -q "$BASE/r.git" c
check "... the clone has the commit" "$(agent git -C c log --format=%s main)" = "seed r"
check "... and origin is the plain URL the agent typed" "$(agent git -C c config remote.origin.url)" = "$BASE/r.git"
srv_commit r "upstream one"
check "... audited as a clone (git's option cloning), allowed by the fetch rule" \
	"$(grep -c '"op":"clone"' "$T/state/audit.jsonl")" -ge 1
ok "clone --depth 1: the relay fetches full history, and says so" agent git clone -q --depth 1 "$BASE/r.git" shallow 2>"$T/err"
check "... with one warning" "$(grep -c 'fetches full history' "$T/err")" -eq 1
check "... not a shallow repository" "$(agent git -C shallow rev-parse --is-shallow-repository)" = false
ok "fetch of one new commit" agent git -C c fetch -q origin
check "... origin/main has it" "$(agent git -C c log -1 --format=%s origin/main)" = "upstream one"
srv_commit r "upstream two"
ok "pull with new commits" agent git -C c pull -q --ff-only
check "... main has them" "$(agent git -C c log -1 --format=%s main)" = "upstream two"
ok "clone with scp-style rewritten to the same remote is refused cleanly (not a host path)" \
	sh -c "! agent git ls-remote 127.0.0.1:/srv/x 2>/dev/null"

# --- pushing ------------------------------------------------------------------
agent git -C c switch -q -c feature
agent git -C c commit -q --allow-empty -m "feature one"
ok "push of a new branch" agent git -C c push -q origin feature
check "... the remote has it" "$(srv_git -C "$T/srv/r.git" log -1 --format=%s feature)" = "feature one"
agent git -C c commit -q --allow-empty -m "feature two"
ok "push of a fast-forward" agent git -C c push -q origin feature
check "... the remote moved" "$(srv_git -C "$T/srv/r.git" log -1 --format=%s feature)" = "feature two"

expect_denied() { # expect_denied NAME PATTERN CMD...
	local name=$1 pat=$2 st=0
	shift 2
	agent "$@" >"$T/out" 2>"$T/err" || st=$?
	if [ "$st" -ne 0 ] && grep -q -- "$pat" "$T/err"; then
		tap_result 0 "$name"
	else
		diag "status $st: $(cat "$T/err")"
		tap_result 1 "$name"
	fi
}

# --dry-run: decided and asked of the remote, nothing changes (git's own
# output says what would happen); --atomic: all or nothing.
agent git -C c commit -q --allow-empty -m "feature three"
ok "push --dry-run of a fast-forward" agent git -C c push --dry-run origin feature
check "... the remote did not move" "$(srv_git -C "$T/srv/r.git" log -1 --format=%s feature)" = "feature two"
check "... and git still sees the remote where it was" \
	"$(agent git -C c rev-parse origin/feature)" = "$(srv_git -C "$T/srv/r.git" rev-parse feature)"
check "... the decision was audited as a dry run" \
	"$(grep -c '"dry_run":true' "$T/state/audit.jsonl")" -ge 1
agent git -C c switch -q -c dry-main main
agent git -C c commit -q --allow-empty -m "dry main"
expect_denied "push --dry-run to the default branch: denied like the real push" "protected" \
	git -C c push --dry-run origin dry-main:main
agent git -C c switch -q feature
ok "push --atomic of two branches" agent git -C c push -q --atomic origin feature feature:refs/heads/feature-copy
check "... both arrived" \
	"$(srv_git -C "$T/srv/r.git" rev-parse feature)" = "$(srv_git -C "$T/srv/r.git" rev-parse feature-copy)"
expect_denied "push options are not relayed: git refuses, nothing is pushed" "push-option" \
	git -C c push -o ci.skip origin feature:refs/heads/with-option
check "... no such branch" "$(srv_git -C "$T/srv/r.git" branch --list with-option | wc -l)" -eq 0
before=$(srv_git -C "$T/srv/r.git" rev-parse feature)
agent git -C c reset -q --hard HEAD~1
agent git -C c commit -q --allow-empty -m "rewritten"
# git itself refuses a non-fast-forward before asking the helper (it has the
# remote's tips from list for-push); the policy's ff=no is the net below.
expect_denied "non-fast-forward push: refused" "non-fast-forward\|not a fast-forward" git -C c push origin feature
expect_denied "force push: denied by the policy" "force pushes need review" git -C c push -f origin feature
check "... the remote branch did not move" "$(srv_git -C "$T/srv/r.git" rev-parse feature)" = "$before"
agent git -C c switch -q main
agent git -C c commit -q --allow-empty -m "straight to main"
expect_denied "push to the default branch: denied (protected)" "protected" git -C c push origin main
expect_denied "delete of a remote branch: denied" "deleting" git -C c push origin :feature
check "... main and feature are as they were" \
	"$(srv_git -C "$T/srv/r.git" log -1 --format=%s main)/$(srv_git -C "$T/srv/r.git" rev-parse feature)" = "upstream two/$before"
ok "fetch from a repository the policy does not name for pushes" agent git clone -q "$BASE/other.git" o
agent git -C o commit -q --allow-empty -m "not allowed here"
agent git -C o push origin HEAD:refs/heads/x >/dev/null 2>"$T/err"
check "push to a repository the policy does not name: denied (default deny)" \
	"$(grep -c 'default deny' "$T/err")" -ge 1
check "... the remote has no such branch" "$(srv_git -C "$T/srv/other.git" branch --list x | wc -l)" -eq 0
st=0
agent git ls-remote "$BASE/../r.git" >/dev/null 2>&1 || st=$?
check "a URL with '..' is refused" "$st" -ne 0

# --- tags ---------------------------------------------------------------------
agent git -C c switch -q feature
agent git -C c reset -q --hard "origin/feature"
agent git -C c tag light
agent git -C c tag -a -m "annotated" v1.0
ok "push of a lightweight and an annotated tag" agent git -C c push -q origin light v1.0
check "... the remote has both" "$(srv_git -C "$T/srv/r.git" tag | sort | tr '\n' ' ')" = "light v1.0 "
check "... the annotated one as a tag object" "$(srv_git -C "$T/srv/r.git" cat-file -t v1.0)" = tag
ok "a new clone gets the tags" agent git clone -q "$BASE/r.git" c2
check "... both" "$(agent git -C c2 tag | sort | tr '\n' ' ')" = "light v1.0 "

# --- a 50 MB binary file --------------------------------------------------------
head -c 52428800 /dev/urandom >"$T/big.bin"
cp "$T/big.bin" c/big.bin && chown "$GR_USER:" c/big.bin
agent git -C c add big.bin
agent git -C c commit -q -m "50 MB"
ok "push of a 50 MB binary file" agent git -C c push -q origin feature
ok "clone of it elsewhere" agent git clone -q -b feature "$BASE/r.git" c3
check "... the same bytes" "$(sha256sum <c3/big.bin | cut -d' ' -f1)" = "$(sha256sum <"$T/big.bin" | cut -d' ' -f1)"

# --- a 10,000-commit repository ---------------------------------------------
srv_big_history big 10000
ok "clone of a 10,000-commit repository" agent git clone -q "$BASE/big.git" b
check "... all 10,000 commits" "$(agent git -C b rev-list --count HEAD)" -eq 10000
check "... and a clean work tree" "$(agent git -C b status --porcelain | wc -l)" -eq 0

# --- the first clone: the cache's pack, handed over whole ------------------------
# A list that creates the cache clones the remote; while the cache holds
# only that pack, a container with nothing gets it as it is (no bundle).
srv_repo fresh
srv_commit fresh "fresh two"
ok "first clone of a repository the daemon has no cache for" agent git clone -q "$BASE/fresh.git" f1
fresh_cache=
for d in "$T/state/git-cache"/*.git; do
	if [ "$(git --git-dir="$d" log -1 --format=%s main 2>/dev/null)" = "fresh two" ]; then fresh_cache=$d; fi
done
check "... the daemon's cache was made by a clone and marked (relay-fresh-pack)" \
	"$(cat "$fresh_cache/relay-fresh-pack" 2>/dev/null)" = "$(basename "$(ls "$fresh_cache"/objects/pack/*.pack)" .pack)"
check "... the container got that very pack (same name: not rebuilt as a bundle)" \
	"$(basename "$(ls f1/.git/objects/pack/*.pack)" .pack)" = "$(cat "$fresh_cache/relay-fresh-pack")"
check "... no .keep file left behind, the clone is complete (fsck --strict)" \
	"$(find f1/.git/objects/pack -name '*.keep' | wc -l)/$(agent git -C f1 fsck --strict 2>&1 | wc -l)" = "0/0"
check "... with main checked out and tracking origin" \
	"$(agent git -C f1 log -1 --format=%s)/$(agent git -C f1 rev-parse --abbrev-ref '@{u}')" = "fresh two/origin/main"
check "... the cache's config is the daemon's (hooksPath, protocol.allow), not clone's alone" \
	"$(git config --file "$fresh_cache/config" core.hooksPath)/$(git config --file "$fresh_cache/config" protocol.allow)/$(git config --file "$fresh_cache/config" core.bare)" = "/dev/null/never/true"
# A denied push leaves its objects in the cache (the bundle is checked
# before the decision). A later clone must not carry them: the cache is no
# longer just its clone, so the container gets a bundle of the remote's refs.
secret=unpushed-secret-$RANDOM$RANDOM
echo "$secret" >f1/secret.txt
chown "$GR_USER:" f1/secret.txt
agent git -C f1 add secret.txt
agent git -C f1 commit -q -m "not for others"
blob=$(agent git -C f1 rev-parse HEAD:secret.txt)
expect_denied "push to a repository the policy does not name: denied" "default deny" \
	git -C f1 push origin HEAD:refs/heads/leak
check "... control: its objects are in the daemon's cache now" \
	"$(git --git-dir="$fresh_cache" cat-file -t "$blob" 2>/dev/null)" = blob
ok "a second clone of the same repository" agent git clone -q "$BASE/fresh.git" f2
check "... does not get the refused push's objects" \
	"$(agent git -C f2 cat-file -t "$blob" 2>/dev/null || echo absent)" = absent
check "... and is complete" "$(agent git -C f2 fsck --strict 2>&1 | wc -l)/$(agent git -C f2 log -1 --format=%s)" = "0/fresh two"
# A branch the remote deletes (it held a secret) while the cache is fresh:
# the sync that prunes the ref ends the freshness, so a later clone does not
# get the deleted branch's objects from the clone-time pack.
srv_repo gone
srv_git -C "$T/seed-gone" switch -q -c oops
echo "AWS_SECRET=leaked-$RANDOM$RANDOM" >"$T/seed-gone/creds.txt"
srv_git -C "$T/seed-gone" add creds.txt
srv_git -C "$T/seed-gone" -c user.name=s -c user.email=s@s commit -q -m "oops"
srv_git -C "$T/seed-gone" push -q "$T/srv/gone.git" oops
gone_blob=$(srv_git -C "$T/seed-gone" rev-parse HEAD:creds.txt)
ok "clone of a repository with a branch that is about to go" agent git clone -q "$BASE/gone.git" g1
srv_git -C "$T/srv/gone.git" update-ref -d refs/heads/oops
srv_git -C "$T/srv/gone.git" reflog expire --expire=now --all
srv_git -C "$T/srv/gone.git" gc -q --prune=now
check "... control: the remote no longer has the secret" \
	"$(srv_git -C "$T/srv/gone.git" cat-file -t "$gone_blob" 2>/dev/null || echo absent)" = absent
ok "the remote deleted the branch: ls-remote (the cache follows)" agent git ls-remote "$BASE/gone.git"
ok "a new clone after that" agent git clone -q "$BASE/gone.git" g2
check "... does not get the deleted branch's objects" \
	"$(agent git -C g2 cat-file -t "$gone_blob" 2>/dev/null || echo absent)" = absent
srv_git init -q --bare -b main "$T/srv/empty.git"
ok "first clone of an empty repository" agent git clone -q "$BASE/empty.git" e1 2>"$T/err"
check "... git's own warning once, nothing from the host's clone" \
	"$(grep -c 'empty repository' "$T/err")" -le 1

# --- a client that goes away mid-operation ------------------------------------------
# The helper killed (Ctrl-C) while the daemon's git works for it: the
# daemon kills that git instead of finishing the operation for nobody.
setsid bash -c "$(declare -f agent); T='$T'; GR_RUN_AS=(${GR_RUN_AS[*]}); agent git clone -q '$BASE/big.git' gone" \
	>/dev/null 2>&1 &
gone=$!
# The daemon's git runs under its per-command reaper (execd/spawn.c): a
# grandchild of the daemon.
daemon_git() { local r; r=$(pgrep -d, -P "$GR_DAEMON_PID") && pgrep -P "$r" -x git >/dev/null; }
wait_until 20 daemon_git
kill -KILL -- "-$gone" 2>/dev/null
wait "$gone" 2>/dev/null
ok "the daemon's git for a client that hung up is killed" \
	wait_until 10 sh -c "! { r=\$(pgrep -d, -P $GR_DAEMON_PID) && pgrep -P \"\$r\" -x git >/dev/null; }"
check "... and the operation is audited as disconnected" \
	"$(grep -c '"type":"end".*"outcome":"disconnected"' "$T/state/audit.jsonl")" -ge 1

# --- sandbox-execd --check says what the relay will use --------------------------
check_as_user() { "${GR_RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$T/bin/sandbox-execd" "$@"; }
git config -f "$T/home/.gitconfig" "credential.https://tok$$@127.0.0.1.username" relay
out=$(check_as_user --config "$T/execd.conf" --check 2>&1)
git config -f "$T/home/.gitconfig" --unset "credential.https://tok$$@127.0.0.1.username"
check "--check: the relay's git and cache directory" \
	"$(echo "$out" | grep -c "^# git relay: git '/usr/bin/git', caches in '$T/state/git-cache'")" -eq 1
check "... a user name or token in a setting's URL is masked" \
	"$(echo "$out" | grep -c 'credential.https://\*\*\*@127.0.0.1.username')/$(echo "$out" | grep -c "tok$$")" = "1/0"
check "... the names of the user's settings it copies, never their values" \
	"$(echo "$out" | grep '^# git relay:' | grep -c 'credential.helper')/$(echo "$out" | grep -c "$GR_PASS\|git-credentials")" = "1/0"
mkdir -p "$T/badcache" && chown "$GR_USER:" "$T/badcache" && chmod 755 "$T/badcache"
sed "s|^git_cache_dir = .*|git_cache_dir = $T/badcache|" "$T/execd.conf" >"$T/execd-bad.conf"
st=0
out=$(check_as_user --config "$T/execd-bad.conf" --check 2>&1) || st=$?
check "... a cache directory others can read: --check fails and says why" \
	"$st/$(echo "$out" | grep -c 'git relay: cannot start')" = "1/1"

# --- what the host kept -----------------------------------------------------------
check "the credential is nowhere in the agent's files" "$(grep -rl "$GR_PASS" "$T/agent" "$T/ws" 2>/dev/null | wc -l)" -eq 0
check "... nor in the audit log" "$(grep -c "$GR_PASS" "$T/state/audit.jsonl")" -eq 0
check "... nor in the daemon's log" "$(grep -c "$GR_PASS" "$T/daemon.log")" -eq 0
check "the server saw only authenticated relay requests or credential-less ones" \
	"$(grep -c "$GR_PASS" "$T/server.log")" -eq 0
check "push decisions carry the ref updates" \
	"$(grep '"type":"decision"' "$T/state/audit.jsonl" | grep '"op":"push"' | grep -c '"dst":"refs/heads/feature"')" -ge 2
check "... the denied force push with force and ff as the cache computed them" \
	"$(grep '"verdict":"deny"' "$T/state/audit.jsonl" | grep -c '"force":true,"delete":false,"ff":false')" -ge 1
ok "the audit chain verifies" "$T/bin/sandbox-execd" --verify-audit "$T/state/audit.jsonl"
check "the cache directory is private" "$(stat -c %a "$T/state/git-cache")" = 700
cfgs=$(cat "$T"/state/git-cache/*.git/config)
check "cache configs: no include, alias or hook key other than hooksPath=/dev/null" \
	"$(echo "$cfgs" | grep -ci 'include\|alias\|fsmonitor = [^f]\|hookspath = [^/]')" -eq 0
check "... the user's credential helper was copied from the global config" \
	"$(echo "$cfgs" | grep -c 'helper = store')" -ge 1
check "no hooks directory in any cache" "$(find "$T/state/git-cache" -maxdepth 2 -name hooks | wc -l)" -eq 0

# --- the exec backend sees the same fields -------------------------------------------
cat >"$T/exec-policy.py" <<PY
#!/usr/bin/python3
import json, sys
req = json.load(sys.stdin)
with open("$T/exec-requests.jsonl", "a") as f:
    f.write(json.dumps(req) + "\\n")
g = req.get("git") or {}
ok = g.get("op") in ("ls-remote", "fetch") or all(
    u["dst"].startswith("refs/heads/exec-") and not u["force"] for u in g.get("updates", []))
print(json.dumps({"decision": "approved" if ok else "denied", "reason": "exec policy"}))
PY
chmod 755 "$T/exec-policy.py"
touch "$T/exec-requests.jsonl" && chmod 666 "$T/exec-requests.jsonl"
gr_stop
gr_conf "backend = exec" "exec_program = $T/exec-policy.py"
gr_start || { echo "Bail out! daemon did not restart (exec)"; exit 1; }
agent git -C c switch -q -c exec-branch feature
agent git -C c commit -q --allow-empty -m "for the exec policy"
ok "exec backend: a push it approves" agent git -C c push -q origin exec-branch:refs/heads/exec-ok
nok "exec backend: a push it denies" agent git -C c push -q origin exec-branch:refs/heads/other
check "... it saw op, url and the ref update with ff and force" \
	"$(grep -c '"git": {"op": "push", "url": "https://127.0.0.1:'"$PORT"'/r.git", "updates": \[{"src": "[0-9a-f]*", "dst": "refs/heads/exec-ok", "old": "", "force": false, "delete": false, "ff": true' "$T/exec-requests.jsonl")" -ge 1

# --- concurrency and pruning ------------------------------------------------------
pids=()
for i in 1 2 3 4; do
	agent git clone -q "$BASE/r.git" "par$i" >/dev/null 2>&1 &
	pids+=($!)
done
st=0
for p in "${pids[@]}"; do wait "$p" || st=$?; done
check "four concurrent clones of one URL (serialised on its cache) all succeed" "$st" -eq 0
gr_stop
gr_conf "backend = static" "policy_file = $T/policy.conf" "git_max_caches = 1"
gr_start || { echo "Bail out! daemon did not restart"; exit 1; }
agent git ls-remote "$BASE/r.git" >/dev/null 2>&1
agent git ls-remote "$BASE/other.git" >/dev/null 2>&1
# Pruning runs after the reply: poll for it.
one_cache() { [ "$(find "$T/state/git-cache" -maxdepth 1 -name '*.git' | wc -l)" -eq 1 ]; }
ok "git_max_caches = 1: the least recently used cache is pruned" wait_until 10 one_cache
gr_stop
gr_conf "backend = static" "policy_file = $T/policy.conf" "git_max_cache_mb = 1"
gr_start || { echo "Bail out! daemon did not restart"; exit 1; }
agent git ls-remote "$BASE/r.git" >/dev/null 2>&1
pruned_by_size() { grep -q 'larger than git_max_cache_mb' "$T/daemon.log" && one_cache; }
ok "git_max_cache_mb = 1: older caches go until the rest fits (the newest, 50 MB, stays)" \
	wait_until 10 pruned_by_size
gr_stop

# --- a reader that never reads -----------------------------------------------------
# A hand-made fetch whose out fd is a pipe nobody reads: the daemon's write
# must give up at the deadline (and release the URL's cache lock) instead
# of blocking the thread, and every other container's use of the URL, forever.
gr_conf "backend = static" "policy_file = $T/policy.conf" "command_timeout_ms = 3000"
gr_start || { echo "Bail out! daemon did not restart"; exit 1; }
srv_big_history stall 3000
want=$(agent git ls-remote "$BASE/stall.git" refs/heads/main | cut -f1)
cp "$SOURCE_DIR/tests/support/execd-rawclient.py" "$T/rawclient.py"
chmod 644 "$T/rawclient.py"
timeout 20 "${GR_RUN_AS[@]}" /usr/bin/python3 "$T/rawclient.py" "$T/run/execd.sock" gitstall --token "$(cat "$T/run/token")" \
	--url "$BASE/stall.git" --want "$want" >"$T/stall.out" 2>&1 &
stall_pid=$!
sleep 0.5
st=0
timeout 30 "${GR_RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/agent/home" LC_ALL=C \
	GIT_CONFIG_SYSTEM="$T/gitconfig" SANDBOX_EXECD_SOCKET="$T/run/execd.sock" \
	SANDBOX_EXECD_TOKEN="$T/run/token" git clone -q "$BASE/stall.git" stall2 >/dev/null 2>&1 || st=$?
check "a clone of the same URL completes while a fetch's reader stalls (the lock is released)" "$st" -eq 0
wait "$stall_pid"
check "... the stalled fetch ended at the deadline (exit 124, timeout)" "$(cat "$T/stall.out")" = "exited 124"
gr_stop
gr_check_daemon_log
tap_done
