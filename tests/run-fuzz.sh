#!/usr/bin/env bash
# Run every libFuzzer binary in BUILD_DIR/tests/fuzz for SECONDS, starting from
# its committed corpus (copied, so new inputs do not dirty the tree). TAP out.
set -uo pipefail
build=${1:?usage: run-fuzz.sh FUZZ_BUILD_DIR [SECONDS]}
secs=${2:-10}
src=$(cd "$(dirname "$0")/.." && pwd)
mapfile -t bins < <(find "$build/tests/fuzz" -maxdepth 1 -type f -name 'fuzz-*' -perm -u+x | sort)
echo "1..${#bins[@]}"
n=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for b in "${bins[@]}"; do
	n=$((n + 1))
	name=${b##*/fuzz-}
	mkdir -p "$work/$name"
	cp -r "$src/tests/fuzz/corpus/$name/." "$work/$name/" 2>/dev/null || true
	if "$b" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=1024 -artifact_prefix="$work/" "$work/$name" >"$work/$name.log" 2>&1; then
		echo "ok $n - fuzz $name for ${secs}s ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$name.log" | awk '{print $2}') runs)"
	else
		failed=$((failed + 1))
		echo "not ok $n - fuzz $name"
		tail -40 "$work/$name.log" | sed 's/^/# /'
	fi
done
[ "$failed" -eq 0 ]
