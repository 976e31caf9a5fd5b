#!/usr/bin/env bash
# Overhead of running a tool through sandbox-exec and sandbox-execd: median
# wall time of `echo ok` through the wrapper and the daemon (decode,
# authenticate, tool table, openat2 cwd, allow_all decision, two fsynced
# audit records, private directory, clone into a user+pid namespace under
# sandbox-execd-reap, reply) against `echo ok` run directly,
# both measured in this run with hyperfine (no shell). Then throughput with
# 50 concurrent clients (target: >= 900 requests/s), and the daemon's idle
# RSS before and after that load (target: < 8 MB). Target: <= 1.5 ms added.
#   bench/execd-overhead.sh [--quick]     (BUILD_DIR=build by default)
# The audit log lives in a temporary directory on the file system of
# ${TMPDIR:-/tmp}; its fsync cost is part of the figure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD_DIR=${BUILD_DIR:-$here/../build}
# Absolute: the scripts cd, pivot into new roots and enter namespaces, where
# a BUILD_DIR relative to the caller's directory (BUILD_DIR=build) means nothing.
BUILD_DIR=$(cd "$BUILD_DIR" && pwd) || { echo "BUILD_DIR '$BUILD_DIR' not found" >&2; exit 1; }
quick=0
[ "${1:-}" = --quick ] && quick=1
runs=1000 clients=50 total=5000
if [ "$quick" = 1 ]; then runs=30 total=200; fi
for p in "$BUILD_DIR/execd/sandbox-execd" "$BUILD_DIR/wrappers/sandbox-exec"; do
	[ -x "$p" ] || { echo "missing $p (build first)" >&2; exit 1; }
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
mkdir -p "$T/ws" "$T/run" "$T/bin"
chmod 700 "$T/run"
ln -s "$BUILD_DIR/wrappers/sandbox-exec" "$T/bin/echo"
cat >"$T/execd.conf" <<CONF
backend = allow_all
audit_log = $T/audit.jsonl
socket = $T/run/execd.sock
tool echo = $tool
map $T/ws = $T/ws
max_concurrent = 128
max_concurrent_per_peer = 128
CONF
CODE_SANDBOX_LOG=error "$BUILD_DIR/execd/sandbox-execd" --config "$T/execd.conf" 2>"$T/daemon.log" &
pid=$!
for _ in $(seq 200); do [ -S "$T/run/execd.sock" ] && break; sleep 0.05; done
[ -S "$T/run/execd.sock" ] || { cat "$T/daemon.log" >&2; exit 1; }
rss() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }
# Idle RSS: the daemon ready and waiting, before any request, and again
# once it has gone idle after the load below (what a long-running daemon
# keeps between bursts). Target: < 8 MB (8192 kB) both.
sleep 1
idle_start=$(rss VmRSS)
export SANDBOX_EXECD_SOCKET=$T/run/execd.sock SANDBOX_EXECD_TOKEN=$T/run/token
cd "$T/ws"

hyperfine -N --warmup 10 --runs "$runs" --export-json "$T/h.json" \
	-n direct "$tool ok" -n wrapped "$T/bin/echo ok" >"$T/hyperfine.txt"
python3 - "$T/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
d, w = r["direct"]["median"] * 1000, r["wrapped"]["median"] * 1000
print(f"echo ok direct:                  median {d:.3f} ms")
print(f"echo ok through execd:           median {w:.3f} ms")
print(f"added: {w - d:.3f} ms   ratio: {w / d:.2f}x   (target: <= 1.5 ms added)")
PY

start=$(date +%s%N)
seq "$total" | xargs -P "$clients" -I{} "$T/bin/echo" ok >"$T/out"
end=$(date +%s%N)
ms=$(((end - start) / 1000000))
ok=$(grep -c '^ok$' "$T/out" || true)
echo "throughput: $total requests, $clients concurrent clients: ${ms} ms, $((total * 1000 / (ms > 0 ? ms : 1))) requests/s ($ok/$total succeeded)"
"$BUILD_DIR/execd/sandbox-execd" --verify-audit "$T/audit.jsonl"
sleep 2
idle_after=$(rss VmRSS)
echo "daemon idle RSS: ${idle_start} kB at start, ${idle_after} kB after the load   (target: < 8192 kB)"
echo "daemon peak RSS: $(rss VmHWM) kB"
[ "$ok" -eq "$total" ]
