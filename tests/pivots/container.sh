#!/usr/bin/env bash
# Host pivots with the real image through bin/code-sandbox (issue 13): the
# agent plants every hook, config key and pivot file (agent-attack.sh);
# afterwards the host-side actions a user takes (git status, diff, add,
# commit, fetch from a local bare remote, aliases, sourcing .envrc the way
# direnv would, an IDE or tool reading the files and running the commands
# they name) create no marker file, and the exit summary names every
# change. Control: the same actions on a copy carrying the agent's
# versions (taken from the quarantine) DO create the markers. Ordinary
# agent work (branch, commits, push -u) gives no warning; the read-only
# .git/config option; a gitfile worktree.
#
# Containers only with --network none. Needs root (workspace owned by a
# test user, host actions run as that user) and a working engine; else one
# SKIP line and exit 77. Image: CODE_SANDBOX_IMAGE (default
# localhost/code-sandbox:latest), built with bin/code-sandbox build when
# missing.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
CS=$SOURCE_DIR/bin/code-sandbox
HERE=$SOURCE_DIR/tests/pivots

skip_all() {
	echo "SKIP: pivots-container: $1" >&2
	echo "1..0 # SKIP $1"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a workspace owned by a test user)"
command -v setpriv >/dev/null || skip_all "needs setpriv"
ENG=${CONTAINER_ENGINE:-}
if [ -z "$ENG" ]; then
	if command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; then ENG=podman
	elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then ENG=docker; fi
fi
[ -n "$ENG" ] || skip_all "no container engine (podman or docker)"
"$ENG" info >/dev/null 2>&1 || skip_all "no working container engine (podman or docker; CONTAINER_ENGINE=${CONTAINER_ENGINE:-unset})"
IMG=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
U=4242

T=$(mktemp -d /tmp/cs-pivots-it.XXXXXX)
chmod 0755 "$T"
NAMES=()
cleanup() {
	local n v
	for n in "${NAMES[@]}"; do "$ENG" rm -f "$n" >/dev/null 2>&1 || true; done
	for d in "$T"/ws*; do
		[ -d "$d" ] || continue
		v=code-sandbox-home-$(basename "$d")-$(printf '%s' "$(cd "$d" && pwd -P)" | sha256sum | cut -c1-12)
		"$ENG" volume rm -f "$v" >/dev/null 2>&1 || true
	done
	rm -rf "$T"
}
trap cleanup EXIT

if ! "$ENG" image inspect "$IMG" >/dev/null 2>&1; then
	echo "# image $IMG missing: building it with bin/code-sandbox build" >&2
	mkdir -p "$T/buildhome"
	CONTAINER_ENGINE=$ENG CODE_SANDBOX_IMAGE=$IMG HOME=$T/buildhome "$CS" build >&2 ||
		{ tap_result 1 "the image builds"; tap_done; exit 1; }
fi

M=$T/marks
UH=$T/uhome
mkdir -p "$M" "$UH" "$T/agent"
chown "$U:$U" "$M" "$UH"
cp "$HERE/agent-attack.sh" "$HERE/agent-ordinary.sh" "$T/agent/"
chmod 0755 "$T/agent" "$T/agent/"*

# Everything the user does on the host, as the user.
as_user() {
	# From /: the test's own cwd (the build directory) may lie under a
	# directory the user cannot enter (a checkout in a 0700 home).
	(cd / && setpriv --reuid=$U --regid=$U --clear-groups env -i PATH=/usr/bin:/bin HOME="$UH" LC_ALL=C "$@")
}
marks() { find "$M" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' '; }

# A local bare remote with one commit, and the user's clone of it.
mkuser() { mkdir -p "$@" && chown "$U:$U" "$@"; } # directories the user's git fills
newws() { # newws NAME
	mkuser "$T/$1-remote.git" "$T/$1"
	as_user git init -q --bare --initial-branch=main "$T/$1-remote.git"
	as_user git clone -q "$T/$1-remote.git" "$T/$1" 2>/dev/null
	as_user git -C "$T/$1" config user.name User
	as_user git -C "$T/$1" config user.email user@example.test
	as_user sh -c "cd '$T/$1' && echo readme >README && echo one >a.txt && git add . && git commit -qm init && git push -q origin main"
}

RUN=0
launch() { # launch WS OUT ERR [LAUNCHER ARGS...] -- CMD...
	local ws=$1 out=$2 err=$3 st=0
	shift 3
	RUN=$((RUN + 1))
	NAMES+=("cs-pivots-$$-$RUN")
	(cd "$ws" && env HOME="$UH" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" XDG_RUNTIME_DIR="$T/run" \
		CONTAINER_ENGINE="$ENG" CODE_SANDBOX_IMAGE="$IMG" CODE_SANDBOX_NETWORK=none \
		CODE_SANDBOX_DNS=198.51.100.53 CODE_SANDBOX_NAME="cs-pivots-$$-$RUN" \
		"$CS" --no-daemon --mount "$T/agent:/mnt/agent:ro" "$@") >"$out" 2>"$err" </dev/null || st=$?
	return "$st"
}

# The host-side actions a user takes after the agent's run. Each payload
# the agent planted would create a marker through one of them.
host_actions() { # host_actions WS
	local ws=$1
	as_user sh -c "cd '$ws' && git status >/dev/null 2>&1; echo two >>a.txt; git diff >/dev/null 2>&1;
		git log -p -1 >/dev/null 2>&1; git add a.txt >/dev/null 2>&1; git commit -qm two >/dev/null 2>&1;
		git commit --allow-empty </dev/null >/dev/null 2>&1;
		git fetch -q origin >/dev/null 2>&1; git st2 >/dev/null 2>&1; git st3 >/dev/null 2>&1; true"
	# direnv's part: sourcing .envrc in the user's shell.
	as_user bash -c "cd '$ws' && if [ -f .envrc ]; then . ./.envrc; fi" >/dev/null 2>&1
	# An IDE, Dev Containers, CI, the host's Claude Code: each runs the
	# commands its file names (simulated: the file is read and every
	# command it names is run).
	local f
	for f in .vscode/tasks.json .vscode/settings.json .idea/runConfigurations/x.xml \
		.devcontainer/devcontainer.json .github/workflows/x.yml .claude/settings.json .mcp.json; do
		[ -f "$ws/$f" ] || continue
		grep -o 'touch [^"]*' "$ws/$f" | sed 's/ *\/*$//' | while IFS= read -r c; do
			as_user sh -c "$c" >/dev/null 2>&1 || true
		done
	done
}

# --- the attack run -------------------------------------------------------------
newws ws
W=$T/ws
rm -rf "$W/.git/hooks" # the launcher creates it (empty) and mounts it read-only
st=0
launch "$W" "$T/a.out" "$T/a.err" -- sh /mnt/agent/agent-attack.sh "$M" "$T/ws-remote.git" || st=$?
R() { sed -n "s/^$1=//p" "$T/a.out" | head -n 1; }
check "the agent's script ran in the container" "$(R "done")" = yes
[ "$(R "done")" = yes ] || diag "$(tail -n 20 "$T/a.err")"
check "the launcher exits 109: pivots found ($st)" "$st" -eq 109
check "inside: .git/hooks is read-only" "$(R hook_write)" = refused
check "inside: .git cannot be moved aside (a mount point)" "$(R git_moved)" = refused
check "inside: .git/hooks cannot be removed" "$(R hooks_removed)" = refused
ok "host: no pre-commit hook appeared" test ! -e "$W/.git/hooks/pre-commit"
check "host: the hooks directory the launcher made is the user's" "$(stat -c %u "$W/.git/hooks")" = $U
ok "control: the host user can write .git/hooks (the mount refused it, not the file mode)" \
	as_user sh -c "touch '$W/.git/hooks/.probe' && rm '$W/.git/hooks/.probe'"
cfg() { as_user git config --file "$W/.git/config" --no-includes --get-all "$1"; }
for k in core.fsmonitor core.hooksPath core.editor core.pager core.askPass core.gitProxy core.sshCommand \
	url.ssh://evil.invalid/r.git.insteadOf remote.origin.uploadpack remote.origin.receivepack credential.helper \
	gpg.program diff.external diff.evil.textconv merge.evil.driver filter.evil.clean filter.evil.smudge alias.st2 \
	include.path includeIf.gitdir:/.path submodule.lib.update http.proxy http.sslVerify protocol.ext.allow; do
	check "quarantined: $k gone from the host's .git/config" "$(cfg "$k")" = ""
	ok "  named in the exit summary" grep -qi "^  $k = " "$T/a.err"
done
check "kept: remote.origin.url" "$(cfg remote.origin.url)" = "$T/ws-remote.git"
check "kept: branch.main.remote" "$(cfg branch.main.remote)" = origin
check "kept: user.name" "$(cfg user.name)" = User
check "the host's .git/config is still the user's" "$(stat -c %u "$W/.git/config")" = $U
for p in .envrc .vscode/tasks.json .vscode/settings.json .idea/runConfigurations/x.xml \
	.devcontainer/devcontainer.json .gitattributes .gitmodules .github/workflows/x.yml .claude/settings.json \
	.mcp.json .git/info/attributes; do
	ok "summary names $p" grep -q "^  added    $p -- " "$T/a.err"
	ok "  reverted: not in the workspace any more" test ! -e "$W/$p"
done
Q=$(find "$T/state" -path '*/pivots/quarantine/*' -maxdepth 6 -mindepth 6 -type d | head -n 1)
ok "the quarantine is in the user's state directory, timestamped" test -n "$Q" -a -f "$Q/restore.sh" -a -f "$Q/restore-files.sh"

host_actions "$W"
check "host actions on the workspace create no marker" "$(marks)" = ""
ok "  and git still works there (the fetch from the bare remote)" as_user git -C "$W" fetch -q origin
ok "  the user's commit went in" as_user sh -c "cd '$W' && git log -1 --format=%s | grep -qx two"

# Control: a copy with the agent's versions put back from the quarantine.
C=$T/ctl
cp -a "$W" "$C"
for q in "$Q"/*.config; do # the repository's config and the included file
	dst=$(cat "${q%.config}.path")
	cp -p "$q" "$C/${dst#"$W"/}"
done
sed "s|'$W/|'$C/|g" "$Q/restore-files.sh" >"$T/restore-ctl.sh"
sh "$T/restore-ctl.sh"
# The attack's url.insteadOf names the original remote: keep it reachable.
host_actions "$C"
got=" $(marks)"
for m in fsmonitor hookspath editor filter textconv diffexternal ssh alias include envrc vscode-task \
	vscode-settings idea devcontainer workflow claude mcp; do
	case $got in *" $m "*) tap_result 0 "control: the agent's $m payload runs on the host without code-sandbox" ;;
	*) tap_result 1 "control: the agent's $m payload runs on the host without code-sandbox (got:$got)" ;; esac
done
rm -rf "${M:?}"/*

# --- ordinary agent work: no warning --------------------------------------------
newws ws2
W2=$T/ws2
mkuser "$T/ws2-sbx.git"
as_user git init -q --bare "$T/ws2-sbx.git"
st=0
launch "$W2" "$T/o.out" "$T/o.err" --mount "$T/ws2-sbx.git:/mnt/remote.git" -- sh /mnt/agent/agent-ordinary.sh || st=$?
check "ordinary work: exit 0 ($st)" "$st" -eq 0
for t in checkout_b commit remote_add push checkout_track branch_u branch_m checkout branch_d push_u stash fetch; do
	check "ordinary work: $t" "$(sed -n "s/^$t=//p" "$T/o.out")" = ok
done
check "ordinary work: no host-pivot warning" \
	"$(grep -E 'quarantined|added or changed|exit 109|reverted' "$T/o.err" | head -n 3)" = ""
check "ordinary work: the commit is on the host" "$(as_user git -C "$W2" log -1 --format=%s feature)" = "feature: main.c"
check "ordinary work: push -u's tracking kept" "$(as_user git -C "$W2" config --get branch.feature.remote)" = sbx
check "ordinary work: the edited source kept" "$(tail -n 1 "$W2/README")" = more

# --- --protect-git-config: .git/config read-only during the run -------------------
newws ws3
W3=$T/ws3
mkuser "$T/ws3-sbx.git"
as_user git init -q --bare "$T/ws3-sbx.git"
as_user git -C "$W3" remote add sbx /mnt/remote.git
cp -p "$W3/.git/config" "$T/ws3.config"
st=0
launch "$W3" "$T/p.out" "$T/p.err" --protect-git-config --mount "$T/ws3-sbx.git:/mnt/remote.git" \
	-- sh /mnt/agent/agent-ordinary.sh protect || st=$?
P() { sed -n "s/^$1=//p" "$T/p.out"; }
check "protected config: setting a key fails" "$(P config_set)" = failed
ok "protected config: the host's .git/config unchanged" cmp -s "$T/ws3.config" "$W3/.git/config"
check "protected config: commits still work" "$(P commit)" = ok
check "protected config: a plain push still works" "$(P push)" = ok
check "protected config: exit 0, nothing to review ($st)" "$st" -eq 0
diag "with --protect-git-config: $(tr '\n' ' ' <"$T/p.out")"

# --- a worktree whose repository is outside the workspace (gitfile) ------------
newws ws4base
mkuser "$T/ws4"
as_user git -C "$T/ws4base" worktree add -q "$T/ws4" 2>/dev/null
W4=$T/ws4
cp -p "$W4/.git" "$T/ws4.gitfile"
st=0
launch "$W4" "$T/w.out" "$T/w.err" -- sh -c 'if echo "gitdir: /workspace/evil" >.git 2>/dev/null; then echo gitfile=ok; else echo gitfile=refused; fi; mkdir -p evil/hooks' || st=$?
check "worktree: the gitfile cannot be redirected" "$(sed -n 's/^gitfile=//p' "$T/w.out")" = refused
ok "worktree: the host's gitfile unchanged" cmp -s "$T/ws4.gitfile" "$W4/.git"
check "worktree: exit 0 ($st)" "$st" -eq 0
tap_done
