#!/usr/bin/env bash
# clang-tidy (bugprone-*, cert-*; see .clang-tidy) over every C file of the
# project that the build compiles, using the build's compile_commands.json.
set -euo pipefail
build=${1:?usage: clang-tidy.sh BUILD_DIR SOURCE_DIR}
src=${2:?}
if ! command -v clang-tidy >/dev/null 2>&1; then
	echo "1..0 # SKIP clang-tidy not installed"
	exit 77
fi
mapfile -t files < <(python3 -c '
import json, sys, os
seen = set()
for e in json.load(open(sys.argv[1] + "/compile_commands.json")):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if f.startswith(sys.argv[2] + "/") and f.endswith(".c") and f not in seen:
        seen.add(f)
        print(f)
' "$build" "$src" | sort)
echo "1..${#files[@]}"
n=0 failed=0
for f in "${files[@]}"; do
	n=$((n + 1))
	# The musl-linked wrapper's -specs= (wrappers/meson.build) is a gcc
	# driver argument clang does not use: not a finding.
	if out=$(clang-tidy -quiet -p "$build" --extra-arg=-Wno-unused-command-line-argument "$f" 2>&1); then
		echo "ok $n - ${f#"$src"/}"
	else
		failed=$((failed + 1))
		echo "not ok $n - ${f#"$src"/}"
		printf '%s\n' "$out" | grep -v '^[0-9]* warnings generated' | sed 's/^/# /' | head -40
	fi
done
[ "$failed" -eq 0 ]
