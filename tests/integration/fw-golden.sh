#!/usr/bin/env bash
# Golden rulesets: for each tests/golden/fw-NAME.allowlist, install the
# firewall with fw-install (sandbox-init's step 3 calls) in a fresh,
# anonymous network namespace (only lo; nothing resolves, nothing leaves)
# and compare `nft list table inet cs_golden` with tests/golden/fw-NAME.nft,
# so any change to the rules shows up as a diff here. After a deliberate
# change, regenerate with UPDATE_GOLDEN=1 and review the diff.
# The dumps are nft 1.0.6's (Debian 12) text.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
FW_INSTALL=${FW_INSTALL:-$BUILD_DIR/tests/support/fw-install}
GOLDEN=$SOURCE_DIR/tests/golden
for tool in unshare nft ip "$FW_INSTALL"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
T=$(mktemp -d /tmp/cs-fw-golden.XXXXXX)
trap 'rm -rf "$T"' EXIT

for al in "$GOLDEN"/fw-*.allowlist; do
	name=$(basename "$al" .allowlist)
	st=0
	# The namespace (and its table) disappears with the unshare'd shell.
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --net bash -c 'ip link set lo up && "$1" --allowlist "$2" --resolv-conf "$3" --table cs_golden \
		--deadline-ms 500 >/dev/null 2>"$4.err" && nft list table inet cs_golden' _ \
		"$FW_INSTALL" "$al" "$GOLDEN/resolv.conf" "$T/$name" >"$T/$name.nft" || st=$?
	check "$name: installed and listed ($st)" "$st" -eq 0
	[ "$st" -eq 0 ] || sed 's/^/#   /' "$T/$name.err"
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$T/$name.nft" "$GOLDEN/$name.nft"
		diag "updated $GOLDEN/$name.nft"
	fi
	if diff -u "$GOLDEN/$name.nft" "$T/$name.nft" >"$T/$name.diff"; then
		ok "$name: the ruleset is the golden one" true
	else
		ok "$name: the ruleset is the golden one" false
		sed 's/^/#   /' "$T/$name.diff"
	fi
done
tap_done
