#!/usr/bin/env bash
# Run shellcheck on every shell script in the tree (found by shebang), one TAP line each.
set -euo pipefail
cd "${1:?usage: shellcheck.sh SOURCE_DIR}"
if ! command -v shellcheck >/dev/null 2>&1; then
	echo "1..0 # SKIP shellcheck not installed"
	exit 77
fi
mapfile -t files < <(git ls-files 2>/dev/null | while read -r f; do
	[ -f "$f" ] || continue
	case "$f" in *.c|*.h|*.md|*.json|*.txt|*.build) continue ;; esac
	head -c 64 "$f" | head -n1 | grep -qE '^#!.*(bash|/sh)' && echo "$f"
done)
echo "1..${#files[@]}"
n=0 failed=0
for f in "${files[@]}"; do
	n=$((n + 1))
	if out=$(shellcheck -x -P SCRIPTDIR "$f" 2>&1); then
		echo "ok $n - $f"
	else
		failed=$((failed + 1))
		echo "not ok $n - $f"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
done
[ "$failed" -eq 0 ]
