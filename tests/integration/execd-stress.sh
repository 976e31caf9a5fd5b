#!/usr/bin/env bash
# sandbox-execd under load: 1,000 requests, 50 at a time, through the real
# wrapper. Zero failures, exactly 2,000 audit records (a decision and an end
# per request), the chain verifies, the daemon's memory stays bounded and
# every worker thread is gone afterwards.
# shellcheck disable=SC2016,SC2119 # single-quoted sh/eval bodies; optional helper args
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
N=${EXECD_STRESS_N:-1000}
P=${EXECD_STRESS_P:-50}
execd_conf "max_concurrent = 64" "max_concurrent_per_peer = 64"
execd_start || { echo "Bail out! daemon did not start"; exit 1; }

start=$(date +%s%N)
# /bin/sh explicitly: "sh" in PATH is the wrapper link.
(cd "$T/ws" && seq "$N" | as_user xargs -P "$P" -I{} /bin/sh -c \
	'"$0" {} >/dev/null 2>&1 || echo "FAIL {} $?"' "$T/bin/true") >"$T/failures"
end=$(date +%s%N)
ms=$(((end - start) / 1000000))
diag "$N requests, $P concurrent: ${ms} ms, $((N * 1000 / (ms > 0 ? ms : 1))) requests/s"
check "zero failures" "$(wc -l <"$T/failures")" -eq 0
head -n 5 "$T/failures" | while read -r l; do diag "$l"; done
# End records follow the replies by a moment (dispatch.c): wait for them.
wait_until 10 eval 'test "$(audit_count)" -ge $((2 * N))'
check "exactly $((2 * N)) audit records" "$(audit_count)" -eq $((2 * N))
check "$N decisions for true, all allow" \
	"$(grep -c '"type":"decision".*"tool":"true".*"verdict":"allow"' "$AUDIT")" -eq "$N"
check "$N ends, all exit 0" "$(grep -c '"type":"end".*"outcome":"exited","code":0' "$AUDIT")" -eq "$N"
ok "the chain verifies" audit_verify
rss=$(execd_rss_kb)
diag "daemon peak RSS (VmHWM): ${rss} kB"
limit=65536
# AddressSanitizer's shadow memory and quarantine inflate RSS severalfold.
case "$(nm -D "$EXECD" 2>/dev/null)" in *__asan_init*) limit=262144 ;; esac
check "daemon memory is bounded (VmHWM < $((limit / 1024)) MB)" "$rss" -lt "$limit"
# Left: the main thread and the audit log's flusher (execd/audit.c); idle
# workers, at most EXECD_IDLE_WORKERS (8), end after EXECD_IDLE_MS (2 s).
check "at most 8 idle workers are kept" \
	"$(awk '/^Threads:/ {print $2}' "/proc/$EXECD_PID/status")" -le 10
ok "all worker threads are gone" wait_until 5 eval \
	'test "$(awk "/^Threads:/ {print \$2}" "/proc/$EXECD_PID/status" 2>/dev/null)" = 2'
execd_stop
tap_done
