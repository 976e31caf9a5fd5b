#!/usr/bin/env bash
# Overhead of running a tool through sandbox-exec and sandbox-execd: median
# wall time of `echo ok` through the wrapper and the daemon (decode,
# authenticate, tool table, openat2 cwd, allow_all decision, two fsynced
# audit records, the private directory, PID 1 of a user+pid namespace from
# the spawn server, reply) against `echo ok` run directly, both measured in
# this run with hyperfine (no shell). Then throughput with 50 concurrent
# clients (target: >= 900 requests/s), and the daemon's idle RSS before and
# after that load (target: < 8 MB). Target: <= 1.5 ms added.
#   bench/execd-overhead.sh [--quick]     (BUILD_DIR=build by default)
# With BASE_BUILD_DIR=DIR (another build, e.g. of main) every figure is
# measured for it and for BUILD_DIR alternately, ROUNDS times (default 2),
# in this run: on a shared machine only such a comparison means anything.
# The audit log lives in a temporary directory on the file system of
# ${TMPDIR:-/tmp}; its fsync cost is part of the figure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD_DIR=${BUILD_DIR:-$here/../build}
# Absolute: the scripts cd, pivot into new roots and enter namespaces, where
# a BUILD_DIR relative to the caller's directory (BUILD_DIR=build) means nothing.
abs_build() { (cd "$1" && pwd) || { echo "build directory '$1' not found" >&2; exit 1; }; }
BUILD_DIR=$(abs_build "$BUILD_DIR")
builds=("$BUILD_DIR")
rounds=1
if [ -n "${BASE_BUILD_DIR:-}" ]; then
	BASE_BUILD_DIR=$(abs_build "$BASE_BUILD_DIR")
	rounds=${ROUNDS:-2}
	builds=("$BASE_BUILD_DIR" "$BUILD_DIR")
fi
quick=0
[ "${1:-}" = --quick ] && quick=1
runs=1000 clients=50 total=5000
if [ "$quick" = 1 ]; then runs=30 total=200; fi
for b in "${builds[@]}"; do
	for p in "$b/execd/sandbox-execd" "$b/wrappers/sandbox-exec"; do
		[ -x "$p" ] || { echo "missing $p (build first)" >&2; exit 1; }
	done
done
tool=/bin/echo
command -v hyperfine >/dev/null || { echo "hyperfine is needed" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/cs-execd-bench-$$-XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/ws"
rss() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }

# measure BUILD LABEL: all three figures for one build, its own daemon,
# audit log and wrapper. Sets ok (requests that succeeded).
measure() {
	local b=$1 label=$2 d=$T/$3
	local idle_start idle_after start end ms
	mkdir -p "$d/run" "$d/bin"
	chmod 700 "$d/run"
	ln -s "$b/wrappers/sandbox-exec" "$d/bin/echo"
	cat >"$d/execd.conf" <<-CONF
	backend = allow_all
	audit_log = $d/audit.jsonl
	socket = $d/run/execd.sock
	tool echo = $tool
	map $T/ws = $T/ws
	max_concurrent = 128
	max_concurrent_per_peer = 128
	CONF
	CODE_SANDBOX_LOG=error "$b/execd/sandbox-execd" --config "$d/execd.conf" 2>"$d/daemon.log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$d/run/execd.sock" ] && break; sleep 0.05; done
	[ -S "$d/run/execd.sock" ] || { cat "$d/daemon.log" >&2; exit 1; }
	# Idle RSS: the daemon ready and waiting, before any request, and again
	# once it has gone idle after the load below (what a long-running
	# daemon keeps between bursts). Target: < 8 MB (8192 kB) both.
	sleep 1
	idle_start=$(rss VmRSS)
	export SANDBOX_EXECD_SOCKET=$d/run/execd.sock SANDBOX_EXECD_TOKEN=$d/run/token
	echo "== $label ($b)"
	(cd "$T/ws" && hyperfine -N --warmup 10 --runs "$runs" --export-json "$d/h.json" \
		-n direct "$tool ok" -n wrapped "$d/bin/echo ok" >"$d/hyperfine.txt")
	python3 - "$d/h.json" <<-'PY'
	import json, sys
	r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
	d, w = r["direct"]["median"] * 1000, r["wrapped"]["median"] * 1000
	print(f"echo ok direct:                  median {d:.3f} ms")
	print(f"echo ok through execd:           median {w:.3f} ms")
	print(f"added: {w - d:.3f} ms   ratio: {w / d:.2f}x   (target: <= 1.5 ms added)")
	PY
	start=$(date +%s%N)
	(cd "$T/ws" && seq "$total" | xargs -P "$clients" -I{} "$d/bin/echo" ok >"$d/out")
	end=$(date +%s%N)
	ms=$(((end - start) / 1000000))
	ok=$(grep -c '^ok$' "$d/out" || true)
	echo "throughput: $total requests, $clients concurrent clients: ${ms} ms, $((total * 1000 / (ms > 0 ? ms : 1))) requests/s ($ok/$total succeeded)"
	"$b/execd/sandbox-execd" --verify-audit "$d/audit.jsonl"
	sleep 2
	idle_after=$(rss VmRSS)
	echo "daemon idle RSS: ${idle_start} kB at start, ${idle_after} kB after the load   (target: < 8192 kB)"
	echo "daemon peak RSS: $(rss VmHWM) kB"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	rm -rf "$d"
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
ok=0
for r in $(seq "$rounds"); do
	if [ -n "${BASE_BUILD_DIR:-}" ]; then measure "$BASE_BUILD_DIR" "base, round $r" "base-$r"; fi
	measure "$BUILD_DIR" "build${BASE_BUILD_DIR:+, round $r}" "build-$r"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$ok" -eq "$total" ]
