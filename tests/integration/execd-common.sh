#!/usr/bin/env bash
# Shared set-up for the sandbox-execd integration tests (sourced, not run).
# The daemon and its clients run as an unprivileged user (nobody, as "the
# user" whose credentials the daemon would hold) from a private temp dir; the
# whole test runs in fresh pid and mount namespaces so nothing outlives it.
# nobody may not reach the build directory (a checkout under a 0700 home):
# execd_setup copies the daemon, the wrapper and the raw client into $T/prog
# and points EXECD, WRAPPER and RAWCLIENT at the copies (tests/support/stage.sh).
#   execd_reexec_in_ns "$@"   # first line after tap_require_root
#   execd_setup               # temp dir, staged programs, wrapper links, as_user
#   execd_conf [extra lines]  # writes $T/execd.conf (allow_all by default)
#   execd_start / execd_stop / execd_kill9
# shellcheck disable=SC2034
: "${BUILD_DIR:?BUILD_DIR must point at the build directory}"
: "${SOURCE_DIR:?SOURCE_DIR must point at the source directory}"

EXECD=$BUILD_DIR/execd/sandbox-execd
WRAPPER=$BUILD_DIR/wrappers/sandbox-exec
RAWCLIENT=$SOURCE_DIR/tests/support/execd-rawclient.py
EXECD_USER=nobody
EXECD_PID=
# shellcheck source=tests/support/stage.sh
. "$SOURCE_DIR/tests/support/stage.sh"
RUN_AS=(setpriv --reuid="$(id -u "$EXECD_USER")" --regid="$(id -g "$EXECD_USER")" --clear-groups)

execd_reexec_in_ns() {
	if [ -z "${EXECD_IN_NS:-}" ]; then
		exec unshare --pid --fork --mount --mount-proc env EXECD_IN_NS=1 "$0" "$@"
	fi
}

execd_cleanup() {
	if [ -n "$EXECD_PID" ]; then kill -9 "$EXECD_PID" 2>/dev/null || true; fi
	rm -rf "$T"
}

execd_setup() {
	T=$(mktemp -d /tmp/cs-execd-$$-XXXXXX)
	chmod 755 "$T"
	trap execd_cleanup EXIT
	# The daemon's spawn server beside it, as installed (without it the
	# commands get no pid namespace: execd-cgroup tests that on purpose).
	local reap=${EXECD:-}-reap
	stage_vars "$T/prog" EXECD WRAPPER RAWCLIENT || exit 1
	if [ -x "$reap" ]; then
		cp "$reap" "$T/prog/" && chmod 755 "$T/prog/${reap##*/}" || exit 1
	fi
	mkdir -p "$T/ws/sub" "$T/run" "$T/state" "$T/bin" "$T/home" "$T/outside" "$T/work"
	chmod 700 "$T/run" "$T/work"
	chown -R "$EXECD_USER:" "$T/ws" "$T/run" "$T/state" "$T/home" "$T/outside" "$T/work"
	for t in echo sh true sleep cat nope; do ln -s "$WRAPPER" "$T/bin/$t"; done
	SOCK=$T/run/execd.sock
	TOKEN=$T/run/token
	AUDIT=$T/state/audit.jsonl
}

execd_conf() { # execd_conf [LINE...]: defaults for backend and timeout unless given
	{
		printf '%s\n' "audit_log = $AUDIT" "socket = $SOCK" \
			"tool echo = /bin/echo" "tool sh = /bin/sh" "tool true = /bin/true" \
			"tool sleep = /bin/sleep" "tool cat = /bin/cat" \
			"map $T/ws = $T/ws"
		printf '%s\n' "$@"
		case " $* " in *"backend ="*) ;; *) echo "backend = allow_all" ;; esac
		case " $* " in *"command_timeout_ms ="*) ;; *) echo "command_timeout_ms = 20000" ;; esac
		# The tools' private directories (issue 9): inside the test's dir.
		case " $* " in *"work_dir ="*) ;; *) echo "work_dir = $T/work" ;; esac
	} >"$T/execd.conf"
}

# Runs a command as the daemon's user, with the client environment set.
as_user() {
	"${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" \
		SANDBOX_EXECD_SOCKET="$SOCK" SANDBOX_EXECD_TOKEN="$TOKEN" "$@"
}

execd_start() { # execd_start [extra daemon args]
	rm -f "$SOCK" # a stale one (SIGKILLed daemon) would make the wait below pass early
	"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" CODE_SANDBOX_LOG=info \
		"$EXECD" --config "$T/execd.conf" "$@" 2>>"$T/daemon.log" &
	EXECD_PID=$!
	wait_until 10 test -S "$SOCK"
}

execd_stop() {
	[ -n "$EXECD_PID" ] || return 0
	kill "$EXECD_PID" 2>/dev/null || true
	wait "$EXECD_PID" 2>/dev/null || true
	EXECD_PID=
}

execd_kill9() {
	kill -9 "$EXECD_PID"
	wait "$EXECD_PID" 2>/dev/null || true
	EXECD_PID=
}

execd_rss_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$EXECD_PID/status" 2>/dev/null || echo -1; }

audit_count() { if [ -f "$AUDIT" ]; then wc -l <"$AUDIT"; else echo 0; fi; }

audit_verify() { "$EXECD" --verify-audit "$AUDIT" >/dev/null; }

raw() { # raw MODE [args]: the hand-made client, as the user
	as_user python3 "$RAWCLIENT" "$SOCK" "$@"
}

token() { cat "$TOKEN"; }


# Copies the programs a test runs as $EXECD_USER into its own 0755 directory
# (issue 12: the checkout's parents need not be traversable by that user)
# and points EXECD, WRAPPER, RAWCLIENT, LOAD and the tool links at the
# copies. Call after execd_setup.
execd_private_binaries() {
	mkdir -p "$T/prog"
	cp "$BUILD_DIR/execd/sandbox-execd" "$BUILD_DIR/execd/sandbox-execd-reap" "$BUILD_DIR/wrappers/sandbox-exec" \
		"$SOURCE_DIR/tests/support/execd-rawclient.py" "$SOURCE_DIR/tests/support/execd-load.py" "$T/prog/"
	chmod 755 "$T/prog" "$T/prog"/*
	EXECD=$T/prog/sandbox-execd
	WRAPPER=$T/prog/sandbox-exec
	RAWCLIENT=$T/prog/execd-rawclient.py
	LOAD=$T/prog/execd-load.py
	local l
	for l in "$T"/bin/*; do [ -L "$l" ] && ln -sfn "$WRAPPER" "$l"; done
}
