#!/usr/bin/env bash
# Home ownership: after a remap every file in /home/devuser belongs to the
# new ids, but symlinks are never followed (a link to a file outside the
# home, or into /workspace, leaves its target alone), another mount inside
# the home is not crossed, /workspace is never touched, a FIFO does not hang
# the start; a warm start with correct ownership changes nothing.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

h=$IE/home/devuser
mkdir -p "$h/src/a/b/c" "$h/.cache/x" "$h/mnt"
for i in 1 2 3 4 5; do printf 'file %s\n' "$i" >"$h/src/a/b/c/f$i"; done
printf 'x\n' >"$h/.cache/x/blob"
chown -R "$IE_DEV_UID:$IE_DEV_GID" "$h"
printf 'root-owned\n' >"$h/src/root-file"
chmod 0600 "$h/src/root-file"
printf 'stranger\n' >"$h/src/a/stranger-file"
chown 4242:4242 "$h/src/a/stranger-file"
mkfifo "$h/fifo"

# Outside the home: a root-only file and a directory, reached by symlinks.
ext=$IE/ext
mkdir -m 0755 "$ext"
printf 'secret\n' >"$ext/outside"
chmod 0600 "$ext/outside"
mkdir "$ext/outside-dir"
printf 'secret\n' >"$ext/outside-dir/inner"
ln -s "$ext/outside" "$h/link-out"
ln -s "$ext/outside-dir" "$h/link-dir"
ln -s ../../../ext/outside "$h/src/link-relative"
# Hard links to files outside the home (same file system): a root-owned one
# must never be handed to devuser.
printf 'root hard link target\n' >"$ext/hard-root"
chmod 0600 "$ext/hard-root"
ln "$ext/hard-root" "$h/src/hard-root"
printf 'stranger hard link target\n' >"$ext/hard-stranger"
chown 4242:4242 "$ext/hard-stranger"
ln "$ext/hard-stranger" "$h/src/hard-stranger"
# /workspace content owned by someone else, and a link into it.
mkdir -p "$IE/workspace/proj"
printf 'code\n' >"$IE/workspace/proj/main.c"
chown -R 4242:4242 "$IE/workspace/proj"
ln -s /workspace/proj/main.c "$h/link-ws"
ln -s /workspace "$h/workspace"
# Another file system mounted inside the home.
mkdir -p "$IE/foreign/d"
printf 'foreign\n' >"$IE/foreign/d/file"
chown -R 4343:4343 "$IE/foreign"

ext_before=$(initenv_tree_sum "$ext" hard-stranger)
ws_before=$(initenv_tree_sum "$IE/workspace")
foreign_before=$(initenv_tree_sum "$IE/foreign")

st=0
IE_BINDS="$IE/foreign:/home/devuser/mnt" \
	initenv_run HOST_UID=3000 HOST_GID=3000 -- "$PROBE" exit 0 >"$IE/out/run.out" 2>"$IE/out/run.err" || st=$?
check "cold start with a remap exits 0 ($st)" "$st" -eq 0
[ "$st" -eq 0 ] || sed 's/^/# /' "$IE/out/run.err"

# Left out: the settings lock's root-owned files, the mount, and
# sandbox-init's own root-owned stamp of a completed walk (checked below).
wrong=$(cd "$h" && find . \( -path ./mnt -o -path ./.claude -o -path ./.code-sandbox-owner -o -path ./src/hard-root \
	-o -path ./src/hard-stranger \) -prune -o ! -type l \( ! -user 3000 -o ! -group 3000 \) -print)
check "every file and directory in the home is 3000:3000 (wrong: ${wrong//$'\n'/ })" -z "$wrong"
check "a root-owned file hard-linked into the home stays root:root 0600" \
	"$(stat -c %U:%G:%a "$ext/hard-root")" = root:root:600
diag "a hard link to another user's file outside the home: now $(stat -c %u:%g "$ext/hard-stranger") (was 4242:4242)"
check "the ownership stamp is root:root 0444 and names 3000:3000" \
	"$(stat -c %U:%G:%a "$h/.code-sandbox-owner" 2>&1):$(cat "$h/.code-sandbox-owner" 2>&1)" = root:root:444:3000:3000
check "the home itself is 3000:3000" "$(stat -c %u:%g "$h")" = 3000:3000
check "the FIFO was re-owned (and did not hang the start)" "$(stat -c %u:%g "$h/fifo")" = 3000:3000
check "a file outside the home, linked from it, is untouched (root:root 600)" \
	"$(stat -c %U:%G:%a "$ext/outside")" = root:root:600
check "a directory outside the home, linked from it, is untouched" \
	"$(stat -c %U:%G "$ext/outside-dir"):$(stat -c %U:%G "$ext/outside-dir/inner")" = root:root:root:root
check "nothing outside the home changed (ctimes included)" "$(initenv_tree_sum "$ext" hard-stranger)" = "$ext_before"
check "/workspace is unchanged (owner 4242 kept)" "$(initenv_tree_sum "$IE/workspace")" = "$ws_before"
check "the mount inside the home is not crossed" "$(initenv_tree_sum "$IE/foreign")" = "$foreign_before"
links=$(cd "$h" && find . -type l -printf '%p=%U:%G ' )
diag "symlinks after the remap (lchown or left alone, never followed): $links"

# Warm start: nothing to do, so nothing changes (ctimes included).
home_warm=$(initenv_tree_sum "$IE/home" devuser/.claude)
etc_warm=$(initenv_tree_sum "$IE/etc" claude-code)
st=0
IE_BINDS="$IE/foreign:/home/devuser/mnt" \
	initenv_run HOST_UID=3000 HOST_GID=3000 -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/run.err" || st=$?
check "warm start exits 0 ($st)" "$st" -eq 0
check "warm start changes nothing in the home (owners, modes, inodes, ctimes)" \
	"$(initenv_tree_sum "$IE/home" devuser/.claude)" = "$home_warm"
check "warm start changes nothing in /etc (passwd and group not rewritten)" \
	"$(initenv_tree_sum "$IE/etc" claude-code)" = "$etc_warm"

# A stamp forged by the agent (its own file, naming the next ids) must not
# let the next start skip the walk.
st=0
IE_BINDS="$IE/foreign:/home/devuser/mnt" initenv_run HOST_UID=3000 HOST_GID=3000 -- /bin/sh -c \
	'rm -f ~/.code-sandbox-owner && printf "3001:3001\n" > ~/.code-sandbox-owner && chmod 0444 ~/.code-sandbox-owner' \
	>/dev/null 2>"$IE/out/run.err" || st=$?
check "the agent can replace the stamp in its own home ($st)" "$st" -eq 0
st=0
IE_BINDS="$IE/foreign:/home/devuser/mnt" \
	initenv_run HOST_UID=3001 HOST_GID=3001 -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/run.err" || st=$?
check "start with new ids after a forged stamp exits 0 ($st)" "$st" -eq 0
wrong=$(cd "$h" && find . \( -path ./mnt -o -path ./.claude -o -path ./.code-sandbox-owner -o -path ./src/hard-root \
	-o -path ./src/hard-stranger \) -prune -o ! -type l \( ! -user 3001 -o ! -group 3001 \) -print)
check "a forged stamp is ignored: the home is re-owned to 3001:3001 (wrong: ${wrong//$'\n'/ })" -z "$wrong"
check "the mount inside the home is still not crossed" "$(initenv_tree_sum "$IE/foreign")" = "$foreign_before"
check "/workspace is still unchanged" "$(initenv_tree_sum "$IE/workspace")" = "$ws_before"

# The home itself replaced by a symlink (to a root-owned directory): the
# walk opens it with O_NOFOLLOW, so it must fail, not re-own the target.
mv "$h" "$IE/home/devuser.real"
mkdir -m 0755 "$ext/target-dir"
printf 'x\n' >"$ext/target-dir/file"
ln -s "$ext/target-dir" "$h"
target_before=$(initenv_tree_sum "$ext/target-dir")
st=0
initenv_run HOST_UID=3002 HOST_GID=3002 -- "$PROBE" report >"$IE/out/r" 2>"$IE/out/run.err" || st=$?
check "a home that is a symlink: the start fails with 115 ($st)" "$st" -eq 115
check "a home that is a symlink: the agent never ran" ! -s "$IE/out/r"
check "a home that is a symlink: its target is untouched" "$(initenv_tree_sum "$ext/target-dir")" = "$target_before"
grep '^sandbox-init: ' "$IE/out/run.err" | head -n 1 | sed 's/^/#   /'
tap_done
