#!/usr/bin/env bash
# TAP helpers for the integration and container test scripts. Source it:
#   . "$SOURCE_DIR/tests/support/tap.sh"
#   tap_require_root          # exits 77 (skip) when not root
#   ok "name" cmd args...     # runs the command (stdout to stderr); ok/not ok by its status
#   check "name" test-expr    # like ok, through `test`
#   tap_done                  # prints the plan and exits 0/1
# Output is TAP with a trailing plan ("1..N"), which meson accepts.
# shellcheck disable=SC2034
TAP_N=0
TAP_FAILED=0

tap_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root"
		exit 77
	fi
}

tap_result() { # tap_result STATUS NAME
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2"
	else
		TAP_FAILED=$((TAP_FAILED + 1))
		echo "not ok $TAP_N - $2"
	fi
}

ok() { # ok NAME CMD...
	local name=$1 st=0
	shift
	"$@" >&2 || st=$? # its output is not TAP: keep it off stdout
	tap_result "$st" "$name"
}

nok() { # nok NAME CMD...: passes when the command fails
	local name=$1 st=0
	shift
	"$@" >&2 || st=$? # its output is not TAP: keep it off stdout
	if [ "$st" -ne 0 ]; then tap_result 0 "$name"; else tap_result 1 "$name"; fi
}

check() { # check NAME TEST-EXPRESSION...: like ok, through test(1)
	local name=$1
	shift
	ok "$name" test "$@"
}

skip() { # skip NAME REASON
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; } # every line, so multi-line text stays TAP

tap_done() {
	echo "1..$TAP_N"
	[ "$TAP_FAILED" -eq 0 ]
}

# Poll CMD until it succeeds or SECONDS pass (no fixed sleeps for sync).
wait_until() { # wait_until SECONDS CMD...
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}
