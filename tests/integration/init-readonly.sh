#!/usr/bin/env bash
# Read-only root (the launcher's --read-only): the image ships /etc/passwd,
# /etc/group and /etc/claude-code as links into /run/sandbox-init, keeps the
# account files' originals in /etc/code-sandbox/image, and the launcher
# gives a resolv.conf that already points at the DNS gate plus the gate's
# upstream in CODE_SANDBOX_DNS. sandbox-init must start the agent with /etc
# mounted read-only, write only under /run/sandbox-init, and refuse every
# variant that would leave the agent outside the lock.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

etc=$IE/etc
run=$IE/run
rt=$run/sandbox-init
# /etc read-only (a bind of a read-only bind mount stays read-only), /run
# our own directory: never the host's /run.
ro_etc() { mount --bind "$etc" "$etc" && mount -o remount,bind,ro "$etc"; }
rw_etc() { while mountpoint -q "$etc"; do umount "$etc" || break; done; }
trap 'rw_etc; initenv_cleanup' EXIT

mkdir -p "$etc/code-sandbox/image" "$rt"
chmod 0755 "$run" "$rt"
mv "$etc/passwd" "$etc/group" "$etc/code-sandbox/image/"
# The fixture copies the host's accounts: none but devuser may hold its IDs
# here, or "unchanged IDs" below would remap after all.
for f in passwd group; do
	awk -F: -v id="$IE_DEV_UID" '$1 == "devuser" || $3 != id' "$etc/code-sandbox/image/$f" >"$IE/out/$f"
	cat "$IE/out/$f" >"$etc/code-sandbox/image/$f"
done
ln -s /run/sandbox-init/passwd "$etc/passwd"
ln -s /run/sandbox-init/group "$etc/group"
ln -s /run/sandbox-init/claude-code "$etc/claude-code"
rm -f "$etc/resolv.conf"
printf '# code-sandbox: the DNS gate\nnameserver 127.0.0.1\n' >"$etc/resolv.conf"
export IE_BINDS="$run:/run"
ro_etc
etc_sum=$(initenv_tree_sum "$etc")
ok "control: /etc is read-only for root" bash -c "! touch '$etc/x' 2>/dev/null"

# Starts the agent SHELL-CODE with VAR=VAL...; output in $IE/out/r, stderr
# in $IE/out/err, status in $st.
st=0
agent() {
	local code=$1
	shift
	st=0
	initenv_run "$@" -- /bin/sh -c "$code" >"$IE/out/r" 2>"$IE/out/err" || st=$?
}
DNS=CODE_SANDBOX_DNS=198.51.100.53

chmod 1777 "$rt" # a tmpfs mounted without mode=
agent 'id -u; id -g; id -un; cat /etc/claude-code/managed-settings.json' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "starts on a read-only /etc (exit $st)" "$st" -eq 0
[ "$st" -eq 0 ] || diag "$(cat "$IE/out/err")"
check "agent runs as 3100:3100 devuser" "$(head -n 3 "$IE/out/r" | tr '\n' ' ')" = "3100 3100 devuser "
ok "agent reads the managed settings through the image's link" \
	cmp -s <(tail -n +4 "$IE/out/r") "$etc/code-sandbox/profiles/strict.json"
check "/run/sandbox-init tightened to root 0755 ($(stat -c %U:%a "$rt"))" "$(stat -c %U:%a "$rt")" = root:755
for f in passwd group; do
	check "/run/sandbox-init/$f is a root:root 0644 file" "$(stat -c %F:%U:%G:%a "$rt/$f" 2>&1)" = "regular file:root:root:644"
done
ok "devuser has 3100:3100 in the runtime passwd" grep -q '^devuser:x:3100:3100:' "$rt/passwd"
ok "the image's passwd still says 1001" grep -q "^devuser:x:$IE_DEV_UID:$IE_DEV_GID:" "$etc/code-sandbox/image/passwd"
check "managed settings root:root 0444 under /run/sandbox-init" \
	"$(stat -c %F:%U:%G:%a "$rt/claude-code/managed-settings.json" 2>&1)" = "regular file:root:root:444"
check "/etc is unchanged" "$(initenv_tree_sum "$etc")" = "$etc_sum"

agent 'echo x > /run/sandbox-init/passwd' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "the agent cannot write /run/sandbox-init/passwd" "$st" -ne 0
agent 'mkdir /run/sandbox-init/x' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "the agent cannot create files in /run/sandbox-init" "$st" -ne 0
ok "the runtime passwd is unchanged" grep -q '^devuser:x:3100:3100:' "$rt/passwd"

# IDs equal to the image's: nothing to remap, the files must exist anyway.
rm -f "$rt/passwd" "$rt/group"
agent 'id -un; getent group devuser' HOST_UID="$IE_DEV_UID" HOST_GID="$IE_DEV_GID" "$DNS"
check "unchanged IDs: starts (exit $st)" "$st" -eq 0
check "unchanged IDs: devuser resolves ($(head -n 1 "$IE/out/r"))" "$(head -n 1 "$IE/out/r")" = devuser
[ -s "$rt/passwd" ] || diag "$(ls -la "$rt"; cat "$IE/out/err")"
ok "unchanged IDs: runtime passwd is the image's" cmp -s "$rt/passwd" "$etc/code-sandbox/image/passwd"
ok "unchanged IDs: runtime group is the image's" cmp -s "$rt/group" "$etc/code-sandbox/image/group"

# Missing runtime directory (podman's fresh /run, no tmpfs from the launcher).
rm -rf "$rt"
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "missing /run/sandbox-init: created, starts (exit $st)" "$st" -eq 0
check "created root 0755" "$(stat -c %U:%a "$rt" 2>&1)" = root:755

# The gate's upstream: without CODE_SANDBOX_DNS the read-only resolv.conf
# names only the gate itself, which would loop: refused.
agent 'true' HOST_UID=3100 HOST_GID=3100
check "no CODE_SANDBOX_DNS with a gate-only resolv.conf: exit 112 ($st)" "$st" -eq 112
ok "  and the reason names CODE_SANDBOX_DNS" grep -q CODE_SANDBOX_DNS "$IE/out/err"
agent 'true' HOST_UID=3100 HOST_GID=3100 CODE_SANDBOX_DNS=not-an-address
check "CODE_SANDBOX_DNS not an address: exit 112 ($st)" "$st" -eq 112
agent 'true' HOST_UID=3100 HOST_GID=3100 CODE_SANDBOX_DNS="198.51.100.53, 2001:db8::53"
check "CODE_SANDBOX_DNS with two addresses: starts (exit $st)" "$st" -eq 0

# A read-only resolv.conf that does not point at the gate: the agent's
# queries would bypass it (and be dropped): refused.
rw_etc
printf 'nameserver 198.51.100.53\n' >"$etc/resolv.conf"
ro_etc
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "read-only resolv.conf not at the gate: exit 113 ($st)" "$st" -eq 113
rw_etc
printf '# code-sandbox: the DNS gate\nnameserver 127.0.0.1\n' >"$etc/resolv.conf"

# Links that lead anywhere else than the image's own targets.
ln -sfn /tmp/passwd "$etc/passwd"
ro_etc
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "/etc/passwd linked elsewhere: exit 114 ($st)" "$st" -eq 114
ok "  with a one-line reason" grep -q '^sandbox-init: identity: /etc/passwd links to' "$IE/out/err"
rw_etc
ln -sfn /run/sandbox-init/passwd "$etc/passwd"
ln -sfn /tmp/claude-code "$etc/claude-code"
ro_etc
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "/etc/claude-code linked elsewhere: exit 116 ($st)" "$st" -eq 116
check "  nothing created at that target" ! -e /tmp/claude-code
rw_etc
ln -sfn /run/sandbox-init/claude-code "$etc/claude-code"

# A runtime directory the agent could write.
chown 3100:3100 "$rt"
ro_etc
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "/run/sandbox-init not root-owned: refused (exit $st)" "$st" -eq 114
chown 0:0 "$rt"
chmod 0777 "$run"
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "/run writable by others: refused (exit $st)" "$st" -eq 114
chmod 0755 "$run"
agent 'true' HOST_UID=3100 HOST_GID=3100 "$DNS"
check "control: the same set-up starts again (exit $st)" "$st" -eq 0
tap_done
