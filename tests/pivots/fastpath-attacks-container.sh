#!/usr/bin/env bash
# review7: two attacks of tests/launcher/pivots-fastpath-attacks.sh with the
# real image (F9b: a forged name in .git's name list hides a new
# .git/commondir from the fast path, --protect-git-config on; F4: a
# .vscode made search-only: only the control here, the check runs as root). Each
# test asserts the secure outcome ("not ok" = the attack got through).
# Needs root and podman (as tests/pivots/container.sh).
# The agents' commands are single-quoted on purpose (they run in the workspace).
# shellcheck disable=SC2016
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SOURCE_DIR/tests/support/tap.sh"
CS=$SOURCE_DIR/bin/code-sandbox
[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root"; exit 77; }
ENG=${CONTAINER_ENGINE:-podman}
"$ENG" info >/dev/null 2>&1 || { echo "1..0 # SKIP no engine"; exit 77; }
IMG=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
"$ENG" image inspect "$IMG" >/dev/null 2>&1 || { echo "1..0 # SKIP no image"; exit 77; }
U=4242
T=$(mktemp -d /tmp/cs-review7-it.XXXXXX)
chmod 0755 "$T"
NAMES=()
cleanup() {
	local n d v
	for n in "${NAMES[@]}"; do "$ENG" rm -f "$n" >/dev/null 2>&1 || true; done
	for d in "$T"/ws*; do
		[ -d "$d" ] || continue
		v=code-sandbox-home-$(basename "$d")-$(printf '%s' "$(cd "$d" && pwd -P)" | sha256sum | cut -c1-12)
		"$ENG" volume rm -f "$v" >/dev/null 2>&1 || true
	done
	chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"
}
trap cleanup EXIT
UH=$T/uhome
mkdir -p "$UH" "$T/agent" && chown "$U:$U" "$UH"
as_user() { (cd / && setpriv --reuid=$U --regid=$U --clear-groups env -i PATH=/usr/bin:/bin HOME="$UH" LC_ALL=C "$@"); }
newws() { mkdir -p "$T/$1" && chown $U:$U "$T/$1"; as_user sh -c "cd '$T/$1' && git init -q && git config user.name U && git config user.email u@e.test && echo a >a && git add a && git commit -qm a"; }
RUN=0
launch() { # launch WS [LAUNCHER ARGS...] -- CMD...: sets st
	local ws=$1
	shift
	RUN=$((RUN + 1))
	NAMES+=("cs-review7-$$-$RUN")
	st=0
	(cd "$ws" && env HOME="$UH" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" XDG_RUNTIME_DIR="$T/run" \
		CONTAINER_ENGINE="$ENG" CODE_SANDBOX_IMAGE="$IMG" CODE_SANDBOX_NETWORK=none CODE_SANDBOX_LOG=debug \
		CODE_SANDBOX_DNS=198.51.100.53 CODE_SANDBOX_NAME="cs-review7-$$-$RUN" \
		"$CS" --no-daemon "$@") >"$T/out" 2>"$T/err" </dev/null || st=$?
}
# F9b
newws ws9
W=$T/ws9
launch "$W" --protect-git-config -- sh -c 'cd /workspace && mkdir -p evil/objects evil/refs evil/hooks && printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch /tmp/pwned\n" >evil/config && n=$(printf "commondi\n  commondir") && : >".git/$n" && echo run1'
check "F9b real: run 1 exits 0 ($st)" "$st" -eq 0
grep -q run1 "$T/out" || diag "$(tail -n 5 "$T/err")"
launch "$W" --protect-git-config -- sh -c 'cd /workspace && n=$(printf "commondi\n  commondir") && mv ".git/$n" .git/commondi && echo ../evil >.git/commondir && echo run2'
grep -q run2 "$T/out" || diag "$(tail -n 5 "$T/err")"
check "F9b real: run 2 (.git/commondir to evil/): exit 109 ($st)" "$st" -eq 109
nok "F9b real:   (the fast path was taken)" grep -q 'nothing the exit check reads has changed' "$T/err"
fm=$(as_user sh -c "cd '$W' && git config --get core.fsmonitor")
check "F9b real:   host git does not get core.fsmonitor ('$fm')" "$fm" = ""
# F10 control: the same with a plain ~/.gitconfig.
newws ws10c
W=$T/ws10c
as_user sh -c "printf '[user]\n\tname = U\n' >'$UH/.gitconfig'"
launch "$W" -- true
as_user git config --file "$UH/.gitconfig" core.hooksPath .githooks
launch "$W" -- sh -c 'cd /workspace && mkdir -p .githooks && printf "#!/bin/sh\ntouch PWNED\n" >.githooks/pre-commit && chmod +x .githooks/pre-commit && echo run10'
grep -q run10 "$T/out" && r=written || r=refused
check "F10 real control: plain ~/.gitconfig: the agent cannot write .githooks/pre-commit ($r, exit $st)" "$r" = refused
as_user rm -f "$UH/.gitconfig"
# F10: a symlinked ~/.gitconfig; the user sets core.hooksPath there
# between two runs; the second start takes the fast path with the old
# mounts: .githooks is writable in the container, and the exit check does
# not look into hooks paths.
newws ws10
W=$T/ws10
as_user sh -c "mkdir -p '$UH/dotfiles' && printf '[user]\n\tname = U\n' >'$UH/dotfiles/gitconfig' && ln -s dotfiles/gitconfig '$UH/.gitconfig'"
launch "$W" -- true
check "F10 real: a clean first run exits 0 ($st)" "$st" -eq 0
as_user git config --file "$UH/dotfiles/gitconfig" core.hooksPath .githooks
launch "$W" -- sh -c 'cd /workspace && mkdir -p .githooks && printf "#!/bin/sh\ntouch PWNED\n" >.githooks/pre-commit && chmod +x .githooks/pre-commit && echo run10'
grep -q run10 "$T/out" && r=written || r=refused
check "F10 real: the agent cannot write .githooks/pre-commit (the user's global hooks path) ($r, exit $st)" "$r" = refused
as_user sh -c "cd '$W' && rm -f PWNED && git commit -q --allow-empty -m x" >/dev/null 2>&1
ok "F10 real:   the user's next commit runs no hook of the agent's" test ! -e "$W/PWNED"
as_user rm -f "$UH/.gitconfig"
# F4
newws ws4
W=$T/ws4
launch "$W" -- sh -c 'cd /workspace && mkdir -p .vscode && printf "{\"tasks\":[{\"label\":\"x\",\"command\":\"touch /tmp/pwned\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n" >.vscode/tasks.json && chmod 0111 .vscode && echo run4'
grep -q run4 "$T/out" || diag "$(tail -n 5 "$T/err")"
# Here the launcher (and so the check) runs as root, which lists any
# directory: this is the control. A user's own launcher cannot list it
# (tests/launcher/pivots-fastpath-attacks.sh F4 runs the check as a user).
check "F4 real (control, check as root): a new .vscode/tasks.json in a mode-0111 .vscode: exit 109 ($st)" "$st" -eq 109
tap_done
