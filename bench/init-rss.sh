#!/usr/bin/env bash
# Resident memory of sandbox-init as PID 1 while the agent idles: VmRSS of
# /proc/PID/status, read from outside the namespace once PID 1 waits in its
# poll loop (the largest of 10 samples over a second). Target: under 2 MiB.
#   bench/init-rss.sh [--quick]      (root; BUILD_DIR = a non-ASan build)
# --quick: one sample, only checks that it works (an ASan build is far
# larger by design).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SOURCE_DIR=${SOURCE_DIR:-$(dirname "$here")}
export BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# Absolute: the scripts cd, pivot into new roots and enter namespaces, where
# a BUILD_DIR relative to the caller's directory (BUILD_DIR=build) means nothing.
BUILD_DIR=$(cd "$BUILD_DIR" && pwd) || { echo "BUILD_DIR '$BUILD_DIR' not found" >&2; exit 1; }
quick=0
[ "${1:-}" != --quick ] || quick=1
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (namespaces)"
	exit 77
fi
# shellcheck source=../tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=../tests/support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

samples=10
[ "$quick" = 0 ] || samples=1
initenv_start HOST_UID="$IE_DEV_UID" HOST_GID="$IE_DEV_GID" -- "$PROBE" sleep 120 >"$IE/out/sleep" 2>"$IE/out/err"
if ! wait_until 20 grep -q '^sleeping=' "$IE/out/sleep" || ! wait_until 10 initenv_pid1_idle ||
	! p1=$(initenv_pid1); then
	echo "the agent did not start:" >&2
	cat "$IE/out/err" >&2
	exit 1
fi
max=0
for _ in $(seq 1 "$samples"); do
	kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$p1/status")
	[ "$kb" -le "$max" ] || max=$kb
	[ "$samples" -eq 1 ] || sleep 0.1
done
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$p1/status")
kill -TERM "$p1"
initenv_wait
printf 'PID 1 VmRSS while the agent idles: %d KiB (%.2f MiB), peak VmHWM %d KiB\n' \
	"$max" "$(awk -v k="$max" 'BEGIN {print k / 1024}')" "$hwm"
printf 'ratio to the 2 MiB target: %.2f (target < 1)\n' "$(awk -v k="$max" 'BEGIN {print k / 2048}')"
printf 'agent status after SIGTERM to PID 1: %d\n' "$IE_STATUS"
[ "$IE_STATUS" -eq 143 ] || exit 1
[ "$quick" = 1 ] && exit 0
[ "$max" -lt 2048 ]
