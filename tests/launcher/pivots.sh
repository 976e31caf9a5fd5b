#!/usr/bin/env bash
# bin/code-sandbox-pivots without an image: the key classification, the
# config listing diff, the quarantine of executing keys (in the repository's
# config and in included files), the pivot-file summary, the mounts the
# launcher adds for plain repositories, worktrees and gitfiles, and the
# launcher's exit status around them (a fake engine whose `run` plays the
# agent on the host). Suite lint.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
PV=$SOURCE_DIR/bin/code-sandbox-pivots
CS=$SOURCE_DIR/bin/code-sandbox

T=$(mktemp -d /tmp/cs-pivots-unit.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p "$HOME"

# --- classification ----------------------------------------------------------
exec_keys=(
	"core.fsmonitor|touch /tmp/x" "core.hooksPath|.evil" "core.sshCommand|ssh -oProxyCommand=x"
	"core.gitProxy|x" "core.pager|less; x" "core.editor|x" "core.askPass|x" "core.worktree|/home/u"
	"credential.helper|!x" "credential.https://example.test.helper|x" "credential.useHttpPath|true"
	"gpg.program|x" "gpg.ssh.program|x" "gpg.x509.program|x" "gpg.ssh.defaultKeyCommand|x"
	"diff.external|x" "diff.newdriver.command|x" "diff.Other.Driver.textconv|x"
	"merge.brandnew.driver|x %O %A %B" "filter.lfs2.clean|x" "filter.any.smudge|x" "filter.any.process|x"
	"alias.x|!sh -c x" "alias.y| !x" "include.path|../x" "includeIf.gitdir:/w/.path|x"
	"url.https://evil.test/.insteadOf|https://example.test/" "url.ssh://e.test/a.b.pushInsteadOf|x"
	"remote.origin.uploadpack|x" "remote.up.stream.receivepack|x" "remote.origin.proxy|http://x" "remote.o.vcs|x"
	"http.proxy|http://x" "http.https://example.test.proxy|x" "http.sslVerify|false"
	"http.sslCAInfo|/x" "http.https://e.test/.sslCAInfo|/x" "http.curloptResolve|e.test:443:1.2.3.4"
	"submodule.lib.update|!sh x" "protocol.ext.allow|always"
	"pager.log|x" "sequence.editor|x" "interactive.diffFilter|x" "difftool.t.cmd|x" "mergetool.t.path|x"
	"sendemail.smtpServer|/x" "uploadpack.packObjectsHook|x" "core.alternateRefsCommand|x"
)
for kv in "${exec_keys[@]}"; do
	check "exec: ${kv%%|*}" "$("$PV" classify "${kv%%|*}" "${kv#*|}")" = exec
done
ordinary_keys=(
	"branch.feat.remote|origin" "branch.feat.merge|refs/heads/feat" "remote.origin.url|/srv/r.git"
	"remote.origin.fetch|+refs/heads/*:refs/remotes/origin/*" "remote.origin.pushurl|/srv/r.git"
	"user.name|A" "user.email|a@b" "core.bare|false" "core.filemode|true" "core.repositoryformatversion|0"
	"core.logallrefupdates|true" "alias.st|status" "alias.lg|log --oneline !x" "submodule.lib.update|rebase"
	"submodule.lib.url|../lib" "diff.renames|true" "merge.ff|false" "http.postBuffer|1048576"
	"pull.rebase|true" "init.defaultBranch|main" "gc.auto|0" "diff.mydriver.binary|true"
	"extensions.worktreeConfig|true" "core.sparseCheckout|true"
)
for kv in "${ordinary_keys[@]}"; do
	check "ordinary: ${kv%%|*}" "$("$PV" classify "${kv%%|*}" "${kv#*|}")" = ordinary
done

# --- the listing diff ----------------------------------------------------------
printf 'user.name\tA\nalias.st\tstatus\ninclude.path\t../a\nremote.origin.url\t/srv/r\ncore.bare\tfalse\n' >"$T/before"
printf 'user.name\tB\nalias.st\tstatus\ninclude.path\t../a\ninclude.path\t../b\nalias.x\t!x\nbranch.f.remote\torigin\ncore.bare\tfalse\n' >"$T/after"
d=$("$PV" config-diff "$T/before" "$T/after" | sort)
exp=$(printf 'added\texec\talias.x\nadded\tordinary\tbranch.f.remote\nchanged\texec\tinclude.path\nchanged\tordinary\tuser.name\nremoved\tordinary\tremote.origin.url\n' | sort)
check "config-diff: added, changed, removed, each classified" "$d" = "$exp"
check "config-diff: an empty 'before' lists every key as added" \
	"$(: >"$T/empty"; "$PV" config-diff "$T/empty" "$T/after" | cut -f1 | sort -u)" = added
check "config-diff: identical listings differ in nothing" "$("$PV" config-diff "$T/after" "$T/after")" = ""
printf 'alias.x\t!old\n' >"$T/b2"
printf 'alias.x\tstatus\n' >"$T/a2"
check "config-diff: a key changed to a harmless value is ordinary" "$("$PV" config-diff "$T/b2" "$T/a2")" = "$(printf 'changed\tordinary\talias.x')"

# --- quarantine and summary ----------------------------------------------------
newrepo() { # newrepo DIR: a repository with one commit and the user's own settings
	rm -rf "$1"
	git init -q "$1"
	git -C "$1" config user.name U
	git -C "$1" config user.email u@example.test
	git -C "$1" config credential.helper store
	git -C "$1" config alias.st status
	echo a >"$1/a"
	git -C "$1" add a
	git -C "$1" -c core.hooksPath=/dev/null commit -qm a
	mkdir -p "$1/.vscode"
	echo '{}' >"$1/.vscode/settings.json"
}
W=$T/ws
S=$T/state/p1
newrepo "$W"
"$PV" snapshot "$W" "$S" 2>"$T/err"
ok "snapshot: taken" test -f "$S/git/1.list" -a -f "$S/pivots/manifest"
ok "snapshot: kept outside the workspace" test -z "$(find "$W" -newer "$S/git/1.list" -name '*.list')"
st=0
"$PV" snapshot "$W" "$W/.state" 2>/dev/null || st=$?
check "snapshot: a state directory inside the workspace is refused ($st)" "$st" -ne 0
# What the agent does: plain file writes (here through git config --file).
C=$W/.git/config
git config --file "$C" core.fsmonitor 'touch /tmp/cs-pivots-never'
git config --file "$C" credential.helper '!evil'
git config --file "$C" --add include.path ../../evil.cfg
git config --file "$C" alias.co '!sh -c x'
git config --file "$C" filter.brandnew.smudge 'x'
git config --file "$C" branch.feat.remote origin
git config --file "$C" remote.origin.url /srv/r.git
git config --file "$C" user.name 'Agent'
echo 'echo hi' >"$W/.envrc"
printf '{"terminal.integrated.shell.linux": "/x"}\n' >"$W/.vscode/settings.json"
mkdir -p "$W/.claude" && echo '{"hooks": {}}' >"$W/.claude/settings.json"
ln -s /etc/passwd "$W/.mcp.json"
echo src >"$W/a"
st=0
"$PV" check "$W" "$S" 2>"$T/err" || st=$?
check "check: findings exit 1 ($st)" "$st" -eq 1
L() { git config --file "$C" --no-includes --get-all "$1"; }
check "quarantined: core.fsmonitor removed" "$(L core.fsmonitor)" = ""
check "quarantined: include.path removed" "$(L include.path)" = ""
check "quarantined: alias with ! removed" "$(L alias.co)" = ""
check "quarantined: a new filter driver removed" "$(L filter.brandnew.smudge)" = ""
check "quarantined: a changed credential.helper reverted to the user's" "$(L credential.helper)" = store
check "kept: branch.*" "$(L branch.feat.remote)" = origin
check "kept: remote.*.url" "$(L remote.origin.url)" = /srv/r.git
check "kept: user.*" "$(L user.name)" = Agent
check "kept: the user's harmless alias" "$(L alias.st)" = status
ok "printed: each quarantined key" grep -q '  core.fsmonitor = touch /tmp/cs-pivots-never' "$T/err"
ok "printed: a one-line restore command" \
	grep -qF "restore: git config --file '$C' --add 'include.path' '../../evil.cfg'" "$T/err"
Q=$(find "$S/quarantine" -mindepth 1 -maxdepth 1 -type d | head -n 1)
ok "kept: the quarantine directory is timestamped" grep -q '/quarantine/[0-9]\{8\}T[0-9]\{6\}Z-' <<<"$Q"
ok "kept: the agent's config file" grep -q 'fsmonitor' "$Q/0.config"
ok "kept: restore.sh names every key" test "$(grep -c -- '--add' "$Q/restore.sh")" -eq 5
(cd "$T" && sh "$Q/restore.sh")
check "restore.sh puts the agent's keys back" "$(L core.fsmonitor)" = 'touch /tmp/cs-pivots-never'
git config --file "$C" --unset core.fsmonitor
git config --file "$C" --unset-all include.path
git config --file "$C" --unset alias.co
git config --file "$C" --unset filter.brandnew.smudge
git config --file "$C" --unset-all credential.helper
git config --file "$C" credential.helper store
ok "summary: .envrc added" grep -q '^  added    .envrc -- direnv' "$T/err"
ok "summary: .vscode/settings.json changed" grep -q '^  changed  .vscode/settings.json -- VS Code' "$T/err"
ok "summary: .claude/settings.json added" grep -q '^  added    .claude/settings.json -- your own Claude Code' "$T/err"
ok "summary: a symlink named as such" grep -q "^  added (symlink to '/etc/passwd') .mcp.json" "$T/err"
nok "summary: ordinary source files are not listed" grep -q ' a -- ' "$T/err"
nok "summary: ordinary keys are not listed" grep -q 'branch.feat\|remote.origin.url\|user.name' "$T/err"
st=0
"$PV" check "$W" "$S" 2>"$T/err2" || st=$?
check "again: the pivot files stay listed until accepted ($st)" "$st" -eq 1
nok "again: nothing more to quarantine" grep -q quarantined "$T/err2"
st=0
"$PV" review "$W" "$S" 2>"$T/rev" || st=$?
check "review: exit 1 while pivots are pending ($st)" "$st" -eq 1
ok "review: a diff of each changed file" grep -q '^+{"terminal.integrated.shell.linux": "/x"}' "$T/rev"
ok "review: a diff of each added file" grep -q '^+echo hi' "$T/rev"
"$PV" snapshot "$W" "$S" 2>"$T/err3"
ok "a new run keeps pending pivots listed" grep -q 'not reviewed yet' "$T/err3"
st=0
"$PV" check "$W" "$S" 2>/dev/null || st=$?
check "  and still reports them ($st)" "$st" -eq 1
st=0
"$PV" review "$W" "$S" --accept 2>/dev/null || st=$?
check "review --accept: exit 0 ($st)" "$st" -eq 0
st=0
"$PV" check "$W" "$S" 2>"$T/err4" || st=$?
check "after accepting: nothing to report ($st)" "$st" -eq 0
check "  and silent" "$(cat "$T/err4")" = ""

# At the agent's exit (--revert): changed files get their start copy back,
# added ones are moved away, symlinks too; nothing outside is touched.
newrepo "$W"
S=$T/state/p5
mkdir -p "$W/.github/workflows" "$T/outside/workflows"
echo 'on: push' >"$W/.github/workflows/ci.yml"
echo keep >"$T/outside/workflows/x.yml"
"$PV" snapshot "$W" "$S" 2>/dev/null
echo 'on: [push, pull_request]' >"$W/.github/workflows/ci.yml"
echo '{"mcpServers": {"x": {"command": "x"}}}' >"$W/.mcp.json"
ln -s /etc "$W/.envrc"
st=0
"$PV" check "$W" "$S" --revert 2>"$T/err" || st=$?
check "revert: findings still exit 1 ($st)" "$st" -eq 1
check "revert: a changed file has its start content" "$(cat "$W/.github/workflows/ci.yml")" = 'on: push'
ok "revert: an added file is moved away" test ! -e "$W/.mcp.json"
ok "revert: an added symlink is moved away" test ! -L "$W/.envrc"
ok "revert: the agent's versions are kept" test -L "$(find "$S/quarantine" -path '*/files/.envrc')"
ok "revert: restore-files.sh takes them back" sh -c "cd / && sh $(find "$S/quarantine" -name restore-files.sh) && test -f '$W/.mcp.json'"
ok "revert: nothing pending afterwards" test ! -e "$S/pending"
rm -rf "$W/.github" && ln -s "$T/outside" "$W/.github"
"$PV" check "$W" "$S" --revert 2>"$T/err" || true
ok "revert: a symlinked .github is the entry (never what it points at)" grep -q "^  added (symlink to '$T/outside') .github" "$T/err"
ok "  the outside files untouched" test "$(cat "$T/outside/workflows/x.yml")" = keep
ok "  the link moved away" test ! -L "$W/.github"

# What `git submodule` and the agent's remotes leave: core.worktree inside
# the workspace is ordinary, outside it is quarantined; a changed remote URL
# is kept but said.
newrepo "$W"
mkdir -p "$W/.git/modules/lib" "$W/lib"
echo 'ref: refs/heads/main' >"$W/.git/modules/lib/HEAD"
git config --file "$W/.git/config" remote.origin.url /srv/old.git
S=$T/state/p6
"$PV" snapshot "$W" "$S" 2>/dev/null
git config --file "$W/.git/modules/lib/config" core.worktree ../../../lib
git config --file "$W/.git/modules/lib/config" remote.origin.url /srv/lib.git
git config --file "$W/.git/config" remote.origin.url /srv/elsewhere.git
st=0
"$PV" check "$W" "$S" 2>"$T/err" || st=$?
check "submodule config: core.worktree inside the workspace is ordinary ($st)" "$st" -eq 0
check "  kept" "$(git config --file "$W/.git/modules/lib/config" core.worktree)" = ../../../lib
ok "a changed remote URL is kept but said" grep -q "kept, but note: remote.origin.url changed from '/srv/old.git' to '/srv/elsewhere.git'" "$T/err"
git config --file "$W/.git/modules/lib/config" core.worktree /home
st=0
"$PV" check "$W" "$S" 2>"$T/err" || st=$?
check "submodule config: core.worktree outside the workspace is quarantined ($st)" "$st" -eq 1
check "  removed" "$(git config --file "$W/.git/modules/lib/config" core.worktree)" = ""

# A repository nested in the workspace: the one there at start has its
# hooks read-only; a hook or an executing key in one the agent adds is
# reverted or quarantined; a fresh clone's sample hooks are no finding.
newrepo "$W"
newrepo "$W/vendor/old"
m=$("$PV" mounts "$W")
ok "nested repository at start: pinned" grep -qxF -- "--volume=$W/vendor/old/.git:/workspace/vendor/old/.git" <<<"$m"
ok "  its hooks read-only" grep -qxF -- "--volume=$W/vendor/old/.git/hooks:/workspace/vendor/old/.git/hooks:ro" <<<"$m"
S=$T/state/p7
"$PV" snapshot "$W" "$S" 2>/dev/null
git clone -q "$W/vendor/old" "$W/vendor/new"
st=0
"$PV" check "$W" "$S" --revert 2>"$T/err" || st=$?
check "a fresh nested clone (sample hooks, its own config) is no finding ($st)" "$st" -eq 0
[ "$st" -eq 0 ] || diag "$(cat "$T/err")"
printf '#!/bin/sh\ntouch /tmp/x\n' >"$W/vendor/new/.git/hooks/post-checkout"
git config --file "$W/vendor/new/.git/config" core.fsmonitor x
st=0
"$PV" check "$W" "$S" --revert 2>"$T/err" || st=$?
check "a hook and a key in a nested repository are found ($st)" "$st" -eq 1
ok "  the hook moved away" test ! -e "$W/vendor/new/.git/hooks/post-checkout"
ok "  named as a hook" grep -q 'added    vendor/new/.git/hooks/post-checkout -- host git runs hooks' "$T/err"
check "  the key quarantined" "$(git config --file "$W/vendor/new/.git/config" --get core.fsmonitor)" = ""

# Included files inside the workspace are snapshotted and quarantined too.
newrepo "$W"
echo '[diff]' >"$W/shared.gitconfig"
git config --file "$W/.git/config" include.path ../shared.gitconfig
S=$T/state/p2
"$PV" snapshot "$W" "$S" 2>/dev/null
git config --file "$W/shared.gitconfig" core.fsmonitor 'x'
git config --file "$W/shared.gitconfig" diff.renames true
st=0
"$PV" check "$W" "$S" 2>"$T/err" || st=$?
check "include: a key added to an included file is found ($st)" "$st" -eq 1
check "  and removed from that file" "$(git config --file "$W/shared.gitconfig" --get core.fsmonitor)" = ""
check "  its ordinary keys kept" "$(git config --file "$W/shared.gitconfig" --get diff.renames)" = true
check "  the user's include kept" "$(git config --file "$W/.git/config" --get include.path)" = ../shared.gitconfig

# A config the agent replaced by a symlink, or made unparseable, comes back.
newrepo "$W"
S=$T/state/p3
"$PV" snapshot "$W" "$S" 2>/dev/null
cp "$W/.git/config" "$T/orig.config"
printf '[core]\n\tfsmonitor = x\n' >"$W/evil.cfg"
rm "$W/.git/config" && ln -s ../evil.cfg "$W/.git/config"
"$PV" check "$W" "$S" 2>"$T/err" || true
ok "symlinked config: a regular file again" test -f "$W/.git/config" -a ! -L "$W/.git/config"
ok "  the start copy" cmp -s "$T/orig.config" "$W/.git/config"
printf '[core\n\tfsmonitor = x\n' >"$W/.git/config"
"$PV" check "$W" "$S" 2>"$T/err" || true
ok "unparseable config: the start copy restored" cmp -s "$T/orig.config" "$W/.git/config"
ok "  the agent's kept" grep -rq 'fsmonitor' "$S/quarantine"

# Control characters in a value never reach the terminal.
newrepo "$W"
S=$T/state/p4
"$PV" snapshot "$W" "$S" 2>/dev/null
git config --file "$W/.git/config" core.pager "$(printf 'less\033]0;x\007')"
"$PV" check "$W" "$S" 2>"$T/err" || true
nok "an escape sequence in a value is not printed" grep -q "$(printf '\033')" "$T/err"
ok "  the value is pointed at restore.sh" grep -q 'control characters: restore from' "$T/err"

# --- mounts ------------------------------------------------------------------
newrepo "$W"
m=$("$PV" mounts "$W")
ok "mounts: .git pinned (a mount point cannot be renamed away)" grep -qxF -- "--volume=$W/.git:/workspace/.git" <<<"$m"
ok "mounts: .git/hooks read-only" grep -qxF -- "--volume=$W/.git/hooks:/workspace/.git/hooks:ro" <<<"$m"
nok "mounts: .git/config writable by default" grep -q 'config:ro' <<<"$m"
m=$("$PV" mounts "$W" --protect-git-config)
ok "mounts: --protect-git-config makes .git/config read-only" grep -qxF -- "--volume=$W/.git/config:/workspace/.git/config:ro" <<<"$m"
rm -rf "$W/.git/hooks"
"$PV" mounts "$W" >/dev/null
ok "mounts: a missing hooks directory is not created without --create" test ! -e "$W/.git/hooks"
m=$("$PV" mounts "$W" --create)
ok "mounts: --create makes it (empty) and mounts it read-only" test -d "$W/.git/hooks" -a -z "$(ls -A "$W/.git/hooks")"
ok "  mounted" grep -qxF -- "--volume=$W/.git/hooks:/workspace/.git/hooks:ro" <<<"$m"
git config --file "$W/.git/config" core.hooksPath .githooks
mkdir -p "$W/.githooks"
m=$("$PV" mounts "$W")
ok "mounts: a core.hooksPath inside the workspace read-only" grep -qxF -- "--volume=$W/.githooks:/workspace/.githooks:ro" <<<"$m"
git config --file "$W/.git/config" core.hooksPath /usr/share/nothing-here
m=$("$PV" mounts "$W")
nok "mounts: a hooks path outside the workspace is not mounted" grep -q 'nothing-here' <<<"$m"
# A worktree inside the workspace whose repository is too (gitfile).
newrepo "$T/multi/main"
git -C "$T/multi/main" worktree add -q "$T/multi/wt" 2>/dev/null
WS2=$(cd "$T/multi" && pwd -P)
m=$(cd "$WS2/wt" && "$PV" mounts "$WS2/wt")
ok "worktree outside its repository: the gitfile read-only" grep -qxF -- "--volume=$WS2/wt/.git:/workspace/.git:ro" <<<"$m"
check "  nothing else (the repository is not in the container)" "$(wc -l <<<"$m")" -eq 1
mkdir -p "$T/sub"
git -C "$T/multi/main" worktree add -q "$T/multi/main/inner" 2>/dev/null
m=$("$PV" mounts "$WS2/main/inner" 2>/dev/null)
ok "worktree inside: the gitfile read-only" grep -qxF -- "--volume=$WS2/main/inner/.git:/workspace/.git:ro" <<<"$m"
m=$("$PV" mounts "$WS2/main")
ok "repository with a worktree inside: hooks read-only" grep -qxF -- "--volume=$WS2/main/.git/hooks:/workspace/.git/hooks:ro" <<<"$m"
# A submodule's git directory has its own hooks.
mkdir -p "$W/.git/modules/lib/hooks" && echo 'ref: refs/heads/main' >"$W/.git/modules/lib/HEAD"
m=$("$PV" mounts "$W")
ok "submodule hooks read-only" grep -qxF -- "--volume=$W/.git/modules/lib/hooks:/workspace/.git/modules/lib/hooks:ro" <<<"$m"
rm -rf "$W/.git/hooks" && mkdir -p "$W/githooks" && ln -s ../githooks "$W/.git/hooks"
m=$("$PV" mounts "$W")
ok "a symlinked hooks directory: its target inside the workspace read-only" grep -qxF -- "--volume=$W/githooks:/workspace/githooks:ro" <<<"$m"
m=$("$PV" mounts "$T/home")
check "no repository: no mounts" "$m" = ""

# --- the launcher around it (fake engine: `run` plays the agent) -------------
mkdir -p "$T/bin" "$T/cfg" "$T/st"
cat >"$T/bin/podman" <<'FAKE'
#!/bin/sh
case $1 in
run) [ -z "${FAKE_AGENT:-}" ] || sh -c "$FAKE_AGENT"; exit "${FAKE_EXIT:-0}" ;;
*) exit 0 ;;
esac
FAKE
chmod +x "$T/bin/podman"
P=$T/proj
newrepo "$P"
cs() { # cs VAR=VAL... -- ARGS...
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$P" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
		XDG_STATE_HOME="$T/st" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 \
		CONTAINER_ENGINE=podman GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "${envs[@]}" "$CS" "$@")
}
out=$(cs -- --dry-run -- true)
ok "launcher --dry-run: .git pinned" grep -qxF -- "--volume=$P/.git:/workspace/.git" <<<"$out"
ok "launcher --dry-run: hooks read-only" grep -qxF -- "--volume=$P/.git/hooks:/workspace/.git/hooks:ro" <<<"$out"
out=$(cs -- --dry-run --protect-git-config -- true)
ok "launcher --protect-git-config: config read-only" grep -qxF -- "--volume=$P/.git/config:/workspace/.git/config:ro" <<<"$out"
st=0
cs FAKE_AGENT='git config --file .git/config branch.x.remote origin; echo more >>a; git -c core.hooksPath=/dev/null commit -qam b' \
	-- -- true 2>"$T/err" || st=$?
check "launcher: ordinary agent work exits 0 ($st)" "$st" -eq 0
check "  and prints no warning" "$(grep -v '^code-sandbox: container ' "$T/err")" = ""
st=0
cs FAKE_AGENT='echo x >.envrc' -- -- true 2>"$T/err" || st=$?
check "launcher: a pivot file exits 109 ($st)" "$st" -eq 109
ok "  naming it" grep -q 'added    .envrc' "$T/err"
ok "  reverted: the agent's .envrc is gone from the workspace" test ! -e "$P/.envrc"
ok "  kept in the quarantine" grep -qx x "$(find "$T/st" -path '*/quarantine/*/files/.envrc' | head -n 1)"
ok "  with the command that takes it back" grep -q "reverted; the agent's version: cp -pP -- '.*/files/.envrc' '$P/.envrc'" "$T/err"
st=0
cs -- review 2>"$T/err" || st=$?
check "code-sandbox review after the revert: nothing to review ($st)" "$st" -eq 0
ok "  says so" grep -q 'nothing to review' "$T/err"
st=0
cs FAKE_EXIT=3 FAKE_AGENT='echo y >.envrc' -- -- true 2>"$T/err" || st=$?
check "launcher: the agent's failure status wins ($st)" "$st" -eq 3
st=0
cs FAKE_AGENT='git config --file .git/config core.fsmonitor x' -- --accept-pivots -- true 2>"$T/err" || st=$?
check "launcher --accept-pivots: exit 0 ($st)" "$st" -eq 0
check "  the key is quarantined all the same" "$(git config --file "$P/.git/config" --get core.fsmonitor)" = ""
st=0
cs -- -- true 2>"$T/err" || st=$?
check "launcher: after accepting, a clean run exits 0 ($st)" "$st" -eq 0
ok "the state lives under XDG_STATE_HOME" test -d "$T/st/code-sandbox/projects"
# A run that ended without its check is checked at the next start.
pst=$(find "$T/st" -type d -name pivots -path '*/projects/*' | head -n 1)
echo 999999999 >"$pst/running"
echo 'echo late' >"$P/.envrc"
st=0
cs -- -- true 2>"$T/err" || st=$?
ok "the next run checks what a killed run left" grep -q 'ended without its exit check' "$T/err"
ok "  and reverts it" test ! -e "$P/.envrc"
check "  the clean run itself exits 0 ($st)" "$st" -eq 0
ok "  the run markers are empty after a checked run" test -z "$(find "$pst" -maxdepth 2 -path "*running*" -type f -size +0)"
# A second run while the first is active shares the first's snapshot.
echo $$ >"$pst/running"
cp "$pst/pivots/manifest" "$T/manifest.before"
echo 'echo first' >"$P/.envrc"
st=0
cs -- -- true 2>"$T/err" || st=$?
ok "a second run shares the active run's snapshot" grep -q 'sharing its start snapshot' "$T/err"
ok "  and still finds what the first agent wrote" grep -q 'added    .envrc' "$T/err"
# The first run's agent is live: nothing is moved under it (a directory it
# swaps for a link would take the move out of the workspace); the last run
# to end puts it back.
ok "  lists it only, while the other run is active" test -e "$P/.envrc"
ok "  kept pending" test -e "$pst/pending"
rm -f "$pst/running"
st=0
cs -- -- true 2>"$T/err" || st=$?
ok "  the next run, alone, reverts it" test ! -e "$P/.envrc"
check "  (exit 109: $st)" "$st" -eq 109
# --- the fast path: nothing the snapshot read changed ----------------------
# A clean run's check and the next start skip the full work only when the
# fingerprint is identical; every change the full check catches must still
# be caught with the fast path armed (each case below starts from two clean
# runs: the second one's start and check took the fast path).
fast() { # fast [AGENT]: one run with debug logs; sets st, $T/err
	st=0
	cs CODE_SANDBOX_LOG=debug FAKE_AGENT="${1:-}" -- -- true 2>"$T/err" || st=$?
}
arm() { fast; fast; }
arm
ok "fast path: a clean run's check is skipped" grep -q 'nothing the exit check reads has changed' "$T/err"
ok "  and the next start keeps the snapshot" grep -q 'nothing the start snapshot read has changed' "$T/err"
check "  exit 0 ($st)" "$st" -eq 0
mi=$(stat -c %i "$pst/pivots/manifest")
fast 'echo edited >>a'
ok "fast path: editing the workspace's files does not need the check" grep -q 'nothing the exit check reads has changed' "$T/err"
check "  the snapshot was not taken again ($mi)" "$(stat -c %i "$pst/pivots/manifest")" = "$mi"
check "  no launcher file left behind" "$(find "$pst" -maxdepth 1 -name 'mounts.*' | wc -l)" = 0
ok "  and the run markers are empty" test -z "$(find "$pst" -maxdepth 2 -path "*running*" -type f -size +0)"
# Same size, mtime put back: only the ctime tells (which no process sets).
printf '#!/bin/sh\necho hook1\n' >"$P/.git/hooks/post-checkout"
chmod +x "$P/.git/hooks/post-checkout"
touch -d '2020-01-01 00:00:00' "$P/.git/hooks/post-checkout"
fast # the new hook is the user's: a new snapshot
arm
fast 'printf "#!/bin/sh\necho hook2\n" >.git/hooks/post-checkout; touch -d "2020-01-01 00:00:00" .git/hooks/post-checkout'
check "fast path armed: a hook rewritten to the same size and mtime exits 109 ($st)" "$st" -eq 109
ok "  and is put back" grep -q hook1 "$P/.git/hooks/post-checkout"
mkdir -p "$P/.github/workflows"
echo 'on: push' >"$P/.github/workflows/ci.yml"
arm
fast 'mkdir -p .github/workflows/a/b/c/d/e/f && echo "on: push" >.github/workflows/a/b/c/d/e/f/deep.yml'
check "fast path armed: a workflow deep under .github/workflows exits 109 ($st)" "$st" -eq 109
arm
fast 'git init -q n1/n2/n3/n4/n5 && printf "#!/bin/sh\n" >n1/n2/n3/n4/n5/.git/hooks/pre-commit'
check "fast path armed: a repository the agent nests five levels down, with a hook, exits 109 ($st)" "$st" -eq 109
rm -rf "$P/n1"
mkdir -p "$P/c1/c2/c3/c4/c5/c6/c7"
printf '[alias]\n\tst = status\n' >"$P/c1/c2/c3/c4/c5/c6/c7/inc.cfg"
git config --file "$P/.git/config" include.path ../c1/c2/c3/c4/c5/c6/c7/inc.cfg
arm
fast 'printf "[core]\n\tfsmonitor = touch /tmp/x\n" >>c1/c2/c3/c4/c5/c6/c7/inc.cfg'
check "fast path armed: an executing key in an included file eight levels down exits 109 ($st)" "$st" -eq 109
ok "  and is quarantined" grep -q 'quarantined from .*inc.cfg' "$T/err"
git config --file "$P/.git/config" --unset include.path
arm
fast 'printf "[core]\n\thooksPath = /tmp/x\n" >.git/config.worktree'
check "fast path armed: a new .git/config.worktree with core.hooksPath exits 109 ($st)" "$st" -eq 109
rm -f "$P/.git/config.worktree"
arm
fast 'mkdir -p .claude && echo "{\"hooks\":{}}" >.claude/settings.local.json'
check "fast path armed: a new .claude settings file exits 109 ($st)" "$st" -eq 109
arm
fast 'git config --file .git/config core.fsmonitor x'
check "fast path armed: core.fsmonitor added to .git/config exits 109 ($st)" "$st" -eq 109
arm
echo $$ >"$pst/running"
fast 'echo shared >.envrc'
ok "fast path: a run that shares another's snapshot takes the full check" grep -q 'sharing its start snapshot' "$T/err"
ok "  (no fast path then)" test ! -e "$pst/fp"
rm -f "$pst/running"
ok "  and finds the file" grep -q 'added    .envrc' "$T/err"
fast
ok "  which the next run, alone, reverts" test ! -e "$P/.envrc"
# A TERM sent to the launcher reaches the engine; its status comes back.
cat >"$T/bin/podman" <<'FAKE'
#!/bin/sh
case $1 in
run) trap 'echo term >"$FAKE_LOG"; exit 143' TERM; echo started >"$FAKE_LOG"; n=0
	while [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done; exit 0 ;;
*) exit 0 ;;
esac
FAKE
# exec all the way down: $! is the launcher (then code-sandbox-pivots run).
(cd "$P" && exec env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
	XDG_STATE_HOME="$T/st" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 \
	CONTAINER_ENGINE=podman FAKE_LOG="$T/fake.log" "$CS" -- -- true) 2>/dev/null &
lp=$!
wait_until 10 grep -q started "$T/fake.log" 2>/dev/null
kill -TERM "$lp"
st=0
wait "$lp" || st=$?
check "launcher: TERM is passed to the engine, whose 143 is the launcher's ($st)" "$st" -eq 143
ok "  the engine got it" grep -q term "$T/fake.log"
tap_done
