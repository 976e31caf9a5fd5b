#!/usr/bin/env bash
# Start-up cost of sandbox-init on a warm start: a home of 100,000 files
# (nested like a node_modules tree) already owned by devuser. Measured from
# just before the exec of the capability drop + sandbox-init to the
# agent's first instruction after its execve (the probe's `now`), median of
# several runs, against `chown -R uid:gid` of the same tree (what common
# container entrypoints run at every start), in the same run. The start
# includes the harness's own execs of env(1) and setpriv(1) before
# sandbox-init (a few ms): the figure is an upper bound.
# Target: sandbox-init at least 20x faster. Also printed, for information:
# a start that has to walk the whole home (its stamp removed).
#   bench/init-startup.sh [--quick]      (root; BUILD_DIR = a non-ASan build)
# --quick: 500 files, one run, only checks that it works.
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
	echo "SKIP: needs root (namespaces, chown)"
	exit 77
fi
# shellcheck source=../tests/support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"

packages=100 subdirs=10 per_dir=100 runs=11
if [ "$quick" = 1 ]; then packages=5 subdirs=2 per_dir=50 runs=1; fi
files=$((packages * subdirs * per_dir))

initenv_setup
h=$IE/home/devuser
for p in $(seq -w 1 "$packages"); do
	for s in $(seq -w 1 "$subdirs"); do
		d=$h/.cache/node_modules/pkg$p/lib/sub$s
		mkdir -p "$d"
		(cd "$d" && seq -f 'f%03g.js' 1 "$per_dir" | xargs touch)
	done
	printf '{"name":"pkg%s"}\n' "$p" >"$h/.cache/node_modules/pkg$p/package.json"
done
chown -R "$IE_DEV_UID:$IE_DEV_GID" "$h"
entries=$(find "$h" | wc -l)

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
us() { # EPOCHREALTIME-style seconds.micro -> microseconds
	local s=${1%[.,]*} f=${1#*[.,]}
	echo $((10#$s * 1000000 + 10#$f))
}

# One start first, so that every measured start is a warm one.
initenv_run HOST_UID="$IE_DEV_UID" HOST_GID="$IE_DEV_GID" -- "$PROBE" now >/dev/null

start_us() { # one start with the agent `probe now`; prints exec-to-agent microseconds
	IE_T0_FILE=$IE/out/t0 initenv_run HOST_UID="$IE_DEV_UID" HOST_GID="$IE_DEV_GID" -- "$PROBE" now \
		>"$IE/out/now"
	echo $(($(sed -n 's/^now_us=//p' "$IE/out/now") - $(us "$(cat "$IE/out/t0")")))
}
start_us_bare() { # the same chain with INIT_BIN=probe: `probe now` directly
	IE_T0_FILE=$IE/out/t0 initenv_run -- now >"$IE/out/now"
	echo $(($(sed -n 's/^now_us=//p' "$IE/out/now") - $(us "$(cat "$IE/out/t0")")))
}
# sandbox-init's runs first: the baseline's chown -R also re-owns
# sandbox-init's root-owned stamp of a completed walk, which would turn
# the next start into a full walk.
init_times=() walk_times=() chown_times=()
for _ in $(seq 1 "$runs"); do
	init_times+=("$(start_us)")
done
# For information: the harness alone (env, setpriv and the agent's exec,
# no sandbox-init in between).
harness_times=()
for _ in $(seq 1 "$runs"); do
	harness_times+=("$(INIT_BIN=$PROBE start_us_bare)")
done
# For information: a start whose stamp is gone walks the whole home (and
# finds nothing to change).
for _ in $(seq 1 "$(((runs + 1) / 2))"); do
	rm -f "$h/.code-sandbox-owner"
	walk_times+=("$(start_us)")
done
for _ in $(seq 1 "$runs"); do
	t0=$EPOCHREALTIME
	chown -R "$IE_DEV_UID:$IE_DEV_GID" "$h"
	t1=$EPOCHREALTIME
	chown_times+=($(($(us "$t1") - $(us "$t0"))))
done
init_us=$(printf '%s\n' "${init_times[@]}" | median)
chown_us=$(printf '%s\n' "${chown_times[@]}" | median)
ratio=$(awk -v a="$chown_us" -v b="$init_us" 'BEGIN {printf "%.1f", a / b}')
printf 'home: %d files, %d entries; %d runs (median)\n' "$files" "$entries" "$runs"
printf 'sandbox-init start to the agent'"'"'s execve (warm): %8.1f ms   (runs: %s us)\n' \
	"$(awk -v u="$init_us" 'BEGIN {print u / 1000}')" "${init_times[*]}"
harness_us=$(printf '%s\n' "${harness_times[@]}" | median)
printf 'for information, the harness alone:          %8.1f ms   (env + setpriv + the agent'"'"'s exec; runs: %s us)\n' \
	"$(awk -v u="$harness_us" 'BEGIN {print u / 1000}')" "${harness_times[*]}"
printf 'for information, a start without the stamp:  %8.1f ms   (full walk, nothing to change; runs: %s us)\n' \
	"$(awk -v u="$(printf '%s\n' "${walk_times[@]}" | median)" 'BEGIN {print u / 1000}')" "${walk_times[*]}"
printf 'chown -R of the same tree:                  %8.1f ms   (runs: %s us)\n' \
	"$(awk -v u="$chown_us" 'BEGIN {print u / 1000}')" "${chown_times[*]}"
printf 'ratio: %sx faster (target >= 20x)\n' "$ratio"
[ "$quick" = 1 ] && exit 0
awk -v r="$ratio" 'BEGIN {exit !(r >= 20)}'
