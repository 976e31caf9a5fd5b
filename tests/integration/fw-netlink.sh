#!/usr/bin/env bash
# The firewall's netlink transport against the real kernel, in a throwaway
# network namespace (unshare --net; nothing touches the initial one): every
# ack collected, a refused element named in the error, the read-back
# verification catches a changed rule, a missing rule and an extra element,
# a batch without CAP_NET_ADMIN fails as a whole, thousands of elements are
# split into messages and read back.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
CHECK=${NFTSOCK_CHECK:-$BUILD_DIR/tests/support/nftsock-check}
for tool in unshare nft setpriv "$CHECK"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not available"
		exit 77
	fi
done
# shellcheck source=tests/support/stage.sh
. "$SOURCE_DIR/tests/support/stage.sh"
trap stage_cleanup EXIT
# uid 1000 runs it below and may not reach the build directory: use a copy.
stage_dir STAGE cs-fw-netlink && stage_vars "$STAGE" CHECK || exit 1
T=cs_netlink_test

# Everything runs in one child shell inside a new network namespace, which
# disappears with it; results come back as lines of "STATUS NAME".
results=$(unshare --net bash -s "$CHECK" "$T" <<'EOF'
CHECK=$1 T=$2
res() { echo "$1 $2"; }
out=$("$CHECK" install "$T"); res $? "install: every ack collected, read back equal ($out)"
out=$("$CHECK" install "$T"); res $? "re-install replaces the table ($out)"
n=$(nft list tables | grep -c "inet $T")
[ "$n" = 1 ]; res $? "exactly one table after re-install ($n)"
out=$("$CHECK" verify "$T"); res $? "verify of the untouched table passes ($out)"

out=$("$CHECK" overlap "$T"); res $? "partially overlapping element refused, error names it: $out"
out=$("$CHECK" verify "$T"); res $? "failed element batch changed nothing ($out)"

h=$(nft -a list chain inet "$T" output | sed -n 's/.*@allow_v4 .*# handle \([0-9]*\)$/\1/p')
nft delete rule inet "$T" output handle "$h"
out=$("$CHECK" verify "$T"); st=$?
[ "$st" = 1 ] && [[ $out == *"rule output#"* ]]; res $? "read-back catches a missing rule: $out"

"$CHECK" install "$T" >/dev/null
nft add element inet "$T" allow_v4 '{ 198.51.103.1 . 443 }'
out=$("$CHECK" verify "$T"); st=$?
[ "$st" = 1 ] && [[ $out == *"set allow_v4"* ]]; res $? "read-back catches an extra element: $out"

"$CHECK" install "$T" >/dev/null
nft replace rule inet "$T" output handle "$(nft -a list chain inet "$T" output | sed -n 's/.*ct state established,related accept # handle \([0-9]*\)$/\1/p')" ct state established accept
out=$("$CHECK" verify "$T"); st=$?
[ "$st" = 1 ] && [[ $out == *"rule output#10"* ]]; res $? "read-back catches a changed rule: $out"

"$CHECK" install "$T" >/dev/null
nft add chain inet "$T" extra
out=$("$CHECK" verify "$T"); st=$?
[ "$st" = 1 ]; res $? "read-back catches an extra chain: $out"

nft delete table inet "$T"
out=$(setpriv --reuid 1000 --regid 1000 --clear-groups --inh-caps=-all --bounding-set=-all "$CHECK" install "$T"); st=$?
[ "$st" = 1 ] && [[ $out == *"Operation not permitted"* ]]; res $? "without CAP_NET_ADMIN the batch fails as a whole: $out"
nft list table inet "$T" >/dev/null 2>&1
[ $? != 0 ]; res $? "and nothing was installed"

out=$("$CHECK" many "$T" 6000); res $? "6000 elements split into messages, acked, read back ($out)"
c=$(nft list set inet "$T" allow_v4 | grep -o '10\.[0-9.]* \. 443' | wc -l)
[ "$c" -ge 6000 ]; res $? "the kernel holds all of them ($c)"
EOF
)
while read -r st name; do
	[ -n "$st" ] || continue
	tap_result "$st" "$name"
done <<<"$results"
check "all steps ran" "$TAP_N" -ge 14

# Rootless: an unprivileged user in its own user and network namespace (as
# under rootless podman) installs and verifies the same ruleset.
tmp=$(mktemp -d /tmp/cs-fwnetlink.XXXXXX)
trap 'rm -rf "$tmp"; stage_cleanup' EXIT
cp "$CHECK" "$tmp/nftsock-check"
chmod 0755 "$tmp" "$tmp/nftsock-check"
if setpriv --reuid 65534 --regid 65534 --clear-groups unshare --user --map-root-user --net true 2>/dev/null; then
	# shellcheck disable=SC2016 # expanded by the inner sh
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups unshare --user --map-root-user --net \
		sh -c '"$1" install cs_rootless && "$1" verify cs_rootless && "$1" many cs_rootless 2000' \
		sh "$tmp/nftsock-check" 2>&1)
	check "rootless (user namespace): install, verify, 2000 elements ($(echo "$out" | tr '\n' ' '))" \
		"$(grep -c '^ok$' <<<"$out")" = 3
else
	skip "rootless install" "unprivileged user namespaces are disabled"
fi
tap_done
