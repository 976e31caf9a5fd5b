# shellcheck shell=bash
# Functions and variables for the scripts that source this (their callers pass
# the arguments and read st):
# shellcheck disable=SC2034,SC2119,SC2120
# The harness of the pivots attack tests (sourced; bash): a fake engine
# whose `run` plays the agent on the host (FAKE_AGENT, run in the
# workspace), a project repository, the launcher run as the user would run
# it, and the fast path armed (two clean runs). Needs SOURCE_DIR and a
# temporary directory name prefix:
#   PIVOTS_HARNESS_NAME=cs-... . tests/launcher/pivots-harness.sh
# Sets T (0755, removed at exit with harness_cleanup), P (the project),
# PV, CS; PST after fresh.
PV=$SOURCE_DIR/bin/code-sandbox-pivots
CS=$SOURCE_DIR/bin/code-sandbox
T=$(mktemp -d "/tmp/${PIVOTS_HARNESS_NAME:-cs-pivots-harness}.XXXXXX") || exit 1
chmod 0755 "$T"
HARNESS_USER=''
harness_cleanup() {
	chmod -R u+rwx "$T" 2>/dev/null
	rm -rf "$T"
	[ -z "$HARNESS_USER" ] || userdel "$HARNESS_USER" 2>/dev/null || true
}
trap harness_cleanup EXIT
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p "$HOME" "$T/bin" "$T/cfg" "$T/st"

cat >"$T/bin/podman" <<'FAKE'
#!/bin/sh
case $1 in
run) [ -z "${FAKE_ARGS:-}" ] || printf '%s\n' "$@" >"$FAKE_ARGS"
	[ -z "${FAKE_AGENT:-}" ] || sh -c "$FAKE_AGENT"; exit "${FAKE_EXIT:-0}" ;;
*) exit 0 ;;
esac
FAKE
chmod +x "$T/bin/podman"

newrepo() { # newrepo DIR
	rm -rf "$1"
	git init -q "$1"
	git -C "$1" config user.name U
	git -C "$1" config user.email u@example.test
	echo a >"$1/a"
	git -C "$1" add a
	git -C "$1" -c core.hooksPath=/dev/null commit -qm a
}
P=$T/proj
cs_in() { # cs_in DIR VAR=VAL... -- ARGS...: the launcher in DIR
	local envs=() d=$1
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$d" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
		XDG_STATE_HOME="$T/st" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 \
		CONTAINER_ENGINE=podman GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "${envs[@]}" "$CS" "$@")
}
cs() { cs_in "$P" "$@"; }
fast() { # fast [AGENT]: one run with debug logs; sets st, $T/err
	st=0
	cs CODE_SANDBOX_LOG=debug FAKE_AGENT="${1:-}" -- -- true 2>"$T/err" || st=$?
}
arm() { fast; fast; } # the second run's start and end take the fast path
pstate() { find "$T/st" -type d -name pivots -path '*/projects/*' | head -n 1; }
# The control's agent also removes the fingerprint (the test cheats: the
# real agent cannot reach the state directory): the full check then runs.
full() { printf 'rm -f %q' "$PST/fp"; }
fresh() { # fresh [SETUP]: a new project and state, armed
	rm -rf "$T/st" && mkdir -p "$T/st"
	newrepo "$P"
	"${@:-:}"
	arm
	PST=$(pstate)
	export PST
}
fastpath_taken() { grep -q 'nothing the exit check reads has changed' "$T/err"; }
# A throwaway user of the test's own (hermetic), root only: sets
# HARNESS_USER (removed at exit), or leaves it empty.
harness_user() {
	[ "$(id -u)" = 0 ] || return 0
	HARNESS_USER=$1
	useradd -M -d /nonexistent -s /usr/sbin/nologin "$HARNESS_USER" 2>/dev/null || HARNESS_USER=''
}
# The script as a test user reads it: a copy outside the checkout (which may
# be in a 0700 directory: CI's clone).
install -m 0755 "$PV" "$T/pv-user"
