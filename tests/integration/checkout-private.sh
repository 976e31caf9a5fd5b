#!/usr/bin/env bash
# The tests pass from a checkout only its owner can enter (issue 12): a
# clone in a 0700 home or `mktemp -d` is what a developer has. Copies the
# test scripts and the built programs one execd script and one init script
# need into a fresh 0700 directory and runs them from there, in a private
# mount namespace whose /etc/passwd and /etc/group also carry an extra
# account and group at 1001 (a laptop's second user, issue 10 item 6), so
# neither a test that hands nobody a path under the checkout nor one that
# reads the machine's own accounts can come back.
set -uo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root

SCRIPTS=(execd-basic init-ids)
PROGRAMS=(execd/sandbox-execd wrappers/sandbox-exec init/sandbox-init tests/support/probe)

if [ -z "${CS_PRIVATE_IN_NS:-}" ]; then
	exec unshare --mount env CS_PRIVATE_IN_NS=1 "$0" "$@"
fi
mount --make-rprivate /

P=$(mktemp -d /tmp/cs-private-checkout.XXXXXX) || exit 1
cleanup() { rm -rf --one-file-system "$P"; }
trap cleanup EXIT
chmod 0700 "$P"
mkdir -p "$P/home/dev/src" "$P/home/dev/src/build"
chmod 0700 "$P/home/dev"
src=$P/home/dev/src
build=$src/build
cp -a "$SOURCE_DIR/tests" "$SOURCE_DIR/bin" "$src/" || exit 1
for p in "${PROGRAMS[@]}"; do
	mkdir -p "$build/${p%/*}"
	cp -a "$BUILD_DIR/$p" "$build/$p" || exit 1
done

# The machine gains a second user and group at 1001 for this test only.
getent passwd 1001 >/dev/null || printf 'cs-private-u1001:x:1001:1001::/nonexistent:/usr/sbin/nologin\n' |
	cat /etc/passwd - >"$P/passwd"
getent group 1001 >/dev/null || printf 'cs-private-g1001:x:1001:\n' | cat /etc/group - >"$P/group"
for f in passwd group; do
	if [ -f "$P/$f" ]; then
		chmod 0644 "$P/$f"
		mount --bind "$P/$f" "/etc/$f" || exit 1
	fi
done
check "an account holds uid 1001 ($(getent passwd 1001 | cut -d: -f1))" -n "$(getent passwd 1001)"
check "a group holds gid 1001 ($(getent group 1001 | cut -d: -f1))" -n "$(getent group 1001)"

# Not vacuous: nobody really cannot reach the copied programs.
nok "nobody cannot reach the private checkout's daemon" \
	setpriv --reuid=65534 --regid=65534 --clear-groups cat "$build/execd/sandbox-execd"

for s in "${SCRIPTS[@]}"; do
	st=0
	(cd / && env SOURCE_DIR="$src" BUILD_DIR="$build" "$src/tests/integration/$s.sh") >"$P/$s.tap" 2>"$P/$s.err" || st=$?
	n_ok=$(grep -c '^ok ' "$P/$s.tap")
	n_not=$(grep -c '^not ok ' "$P/$s.tap")
	check "$s from a checkout under a 0700 dir: exit 0 ($st), $n_ok passed, $n_not failed" \
		"$st" -eq 0 -a "$n_not" -eq 0 -a "$n_ok" -gt 0
	if [ "$st" -ne 0 ] || [ "$n_not" -ne 0 ]; then
		grep -E '^not ok|^Bail out' "$P/$s.tap" | head -n 20 | sed 's/^/# /'
		tail -n 20 "$P/$s.err" | sed 's/^/# /'
	fi
done
tap_done
