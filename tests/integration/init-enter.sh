#!/usr/bin/env bash
# sandbox-enter: what `code-sandbox shell` runs its shell through. A process
# the engine's exec starts is outside sandbox-init's tree (the engine's
# seccomp profile only, the container's bounding set), while the home's
# login files and the workspace it works in are the agent's: under
# sandbox-enter it gets exactly the agent's filter (every syscall the probe
# knows answers as in the agent), no_new_privs, no capabilities, the
# agent's clean environment and no inherited fd. Run as root it refuses.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
: "${BUILD_DIR:?BUILD_DIR must name the meson build directory}"

T=$(mktemp -d /tmp/cs-init-enter.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
install -m 0755 "$BUILD_DIR/init/sandbox-enter" "$BUILD_DIR/tests/support/probe" "$T/"
kv() { sed -n "s/^$2=//p" "$1" | head -n1; }
as_user() { (cd "$T" && setpriv --reuid=2000 --regid=2000 --clear-groups "$@"); }

st=0
"$T/sandbox-enter" -- true 2>"$T/root.err" || st=$?
check "run as root: refused ($st)" "$st" -ne 0
ok "  with one line" test "$(wc -l <"$T/root.err")" -eq 1
st=0
as_user --inh-caps=+net_admin --ambient-caps=+net_admin "$T/sandbox-enter" -- "$T/probe" report >"$T/caps" 2>&1 || st=$?
check "run with an ambient capability: refused ($st)" "$st" -ne 0
nok "  the command never ran" grep -q '^uid=' "$T/caps"

as_user "$T/probe" report >"$T/control" 2>/dev/null
st=0
as_user env CODE_SANDBOX_DNS=198.51.100.53 LD_PRELOAD=/nonexistent.so BASH_ENV=/tmp/x KEEP_ME=1 \
	"$T/sandbox-enter" -- "$T/probe" report >"$T/report" 5</dev/null 2>"$T/report.err" || st=$?
check "the command runs ($st)" "$st" -eq 0
check "control: the same user without it has no filter ($(kv "$T/control" Seccomp))" "$(kv "$T/control" Seccomp)" = 0
check "seccomp filter loaded ($(kv "$T/report" Seccomp))" "$(kv "$T/report" Seccomp)" = 2
check "no_new_privs ($(kv "$T/report" NoNewPrivs))" "$(kv "$T/report" NoNewPrivs)" = 1
for s in CapInh CapPrm CapEff CapAmb; do
	check "$s empty ($(kv "$T/report" $s))" "$(kv "$T/report" $s)" = 0000000000000000
done
check "the uid is kept ($(kv "$T/report" uid))" "$(kv "$T/report" uid)" = 2000
check "fds 0-2 only ($(kv "$T/report" fds))" "$(kv "$T/report" fds | cut -d, -f1-4)" = 0,1,2
for v in CODE_SANDBOX_DNS LD_PRELOAD BASH_ENV; do
	nok "$v is not passed on" grep -q "^env.$v=" "$T/report"
done
ok "an ordinary variable is" grep -q '^env.KEEP_ME=1$' "$T/report"

# Every case the agent's filter decides, as in init-seccomp (whose control
# proves the filter, not the lack of privilege, refuses them).
"$T/probe" syscalls --expect >"$T/expect"
st=0
as_user "$T/sandbox-enter" -- "$T/probe" syscalls >"$T/filter" 2>"$T/filter.err" || st=$?
check "the syscall probe under it exits 0 ($st)" "$st" -eq 0
n_expect=$(grep -c = "$T/expect")
check "it reported all $n_expect cases ($(grep -c = "$T/filter"))" "$(grep -c = "$T/filter")" -eq "$n_expect"
while IFS='=' read -r name expect; do
	f=$(kv "$T/filter" "$name")
	case $expect in
	blocked | blocked-cap) check "$name: EPERM ($f)" "$f" = EPERM ;;
	blocked-nosys) check "$name: refused as a whole ($f)" "$f" = EPERM -o "$f" = ENOSYS ;;
	allowed) check "$name: allowed ($f)" -n "$f" -a "$f" != EPERM -a "${f#signal:}" = "$f" ;;
	*) nok "$name: unknown expectation '$expect'" true ;;
	esac
done <"$T/expect"
tap_done
