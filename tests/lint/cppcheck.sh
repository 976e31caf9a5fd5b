#!/usr/bin/env bash
# cppcheck over the project's C sources (warning, portability, performance).
set -euo pipefail
src=${1:?usage: cppcheck.sh SOURCE_DIR}
cd "$src"
if ! command -v cppcheck >/dev/null 2>&1; then
	echo "1..0 # SKIP cppcheck not installed"
	exit 77
fi
echo "1..1"
mapfile -t dirs < <(for d in lib init firewall execd wrappers tests/unit tests/support tests/fuzz; do [ -d "$d" ] && echo "$d"; done)
if out=$(cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 \
	--enable=warning,portability,performance \
	--suppress=missingIncludeSystem -D_GNU_SOURCE -D__GNUC__ -Ilib -Ifirewall -Iinit -Iexecd \
	"${dirs[@]}" 2>&1); then
	echo "ok 1 - cppcheck"
else
	echo "not ok 1 - cppcheck"
	printf '%s\n' "$out" | sed 's/^/# /' | head -80
	exit 1
fi
