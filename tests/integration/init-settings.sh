#!/usr/bin/env bash
# Settings lock: the selected profile becomes
# /etc/claude-code/managed-settings.json (root:root 0444, root-owned
# directories not writable by others), mirrored to ~/.claude/settings.json,
# with ~/.claude/settings.local.json pre-claimed (root-owned, read-only);
# the agent cannot change them; whatever was done to them (symlink, chmod,
# edit, delete) is undone at the next start, never writing through a link.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

managed=$IE/etc/claude-code/managed-settings.json
user=$IE/home/devuser/.claude/settings.json
local_=$IE/home/devuser/.claude/settings.local.json
strict=$IE/etc/code-sandbox/profiles/strict.json
permissive=$IE/etc/code-sandbox/profiles/permissive.json

start() { # start LABEL [VAR=VAL...] : runs the agent (exit 0), checks status
	local label=$1 st=0
	shift
	initenv_run HOST_UID=3100 HOST_GID=3100 "$@" -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/err" || st=$?
	check "$label: start exits 0 ($st)" "$st" -eq 0
	[ "$st" -eq 0 ] || sed 's/^/# /' "$IE/out/err"
}
locked() { # locked LABEL PROFILE-FILE
	check "$1: managed-settings.json is a root:root 0444 regular file" \
		"$(stat -c %F:%U:%G:%a "$managed" 2>&1)" = "regular file:root:root:444"
	ok "$1: managed-settings.json has the profile's bytes" cmp -s "$2" "$managed"
	check "$1: ~/.claude/settings.json is a root:root 0444 regular file" \
		"$(stat -c %F:%U:%G:%a "$user" 2>&1)" = "regular file:root:root:444"
	ok "$1: ~/.claude/settings.json has the profile's bytes" cmp -s "$2" "$user"
	check "$1: ~/.claude/settings.local.json is pre-claimed (root:root 0444 regular file)" \
		"$(stat -c %F:%U:%G:%a "$local_" 2>&1)" = "regular file:root:root:444"
}

# repaired LABEL FILE WHAT: one warning line says FILE was repaired and
# what was wrong with it (issue 10 item 5).
repaired() {
	local n
	n=$(grep -c "warn: Repaired ${2#"$IE"} (was: " "$IE/out/err")
	check "$1: one line says ${2#"$IE"} was repaired ($n)" "$n" -eq 1
	ok "$1: it names '$3'" grep -q "warn: Repaired ${2#"$IE"} (was: .*$3" "$IE/out/err"
}
no_repairs() { nok "$1: no 'Repaired' line" grep -q 'Repaired' "$IE/out/err"; }

start "first start (default profile)"
locked "strict by default" "$strict"
no_repairs "first start"
for d in "$IE/etc/claude-code" "$IE/etc"; do
	check "${d#"$IE"} is root-owned and not group/other-writable ($(stat -c %U:%a "$d"))" \
		"$(stat -c %U "$d"):$(($(stat -c 0%a "$d") & 022))" = root:0
done

# The agent itself cannot change them.
agent_try() { # agent_try SHELL-CODE: exit 0 when the agent's attempt failed
	! initenv_run HOST_UID=3100 HOST_GID=3100 -- /bin/sh -c "$1" >/dev/null 2>&1
}
ok "control: the agent can write its own home" \
	initenv_run HOST_UID=3100 HOST_GID=3100 -- /bin/sh -c 'echo x > /home/devuser/mine'
ok "agent cannot write managed-settings.json" agent_try 'echo "{}" > /etc/claude-code/managed-settings.json'
ok "agent cannot replace managed-settings.json" agent_try 'echo "{}" > /tmp/x.$$ && mv -f /tmp/x.$$ /etc/claude-code/managed-settings.json'
ok "agent cannot write ~/.claude/settings.json" agent_try 'echo "{}" >> /home/devuser/.claude/settings.json'
ok "agent cannot write ~/.claude/settings.local.json" agent_try 'echo "{}" >> /home/devuser/.claude/settings.local.json'
ok "agent cannot chmod settings.json" agent_try 'chmod 0666 /home/devuser/.claude/settings.json'
locked "after the agent's attempts" "$strict"

start "permissive profile" CODE_SANDBOX_PROFILE=permissive
locked "permissive profile" "$permissive"
start "back to strict" CODE_SANDBOX_PROFILE=strict
locked "back to strict" "$strict"

# Tampering between starts (as a root-capable attacker could have left it).
printf 'victim\n' >"$IE/out/victim"
victim_sum=$(sha256sum <"$IE/out/victim")
rm -f "$user" && ln -s "$IE/out/victim" "$user"
rm -f "$local_" && ln -s "$IE/out/victim" "$local_"
start "settings replaced by symlinks"
locked "symlinks replaced" "$strict"
repaired "symlinks" "$user" "a symlink"
repaired "symlinks" "$local_" "a symlink"
grep 'Repaired' "$IE/out/err" | sed 's/^/#   /'
start "a warm start after the repair"
no_repairs "warm start"
check "nothing was written through the symlinks" "$(sha256sum <"$IE/out/victim")" = "$victim_sum"

chmod 0666 "$user" "$managed"
chown 3100:3100 "$user" "$local_"
start "settings chmod/chowned"
locked "modes and owners restored" "$strict"
repaired "chmod" "$managed" "mode 0666 (expected 0444)"
repaired "chmod/chown" "$user" "owner 3100:3100 (expected root:root), mode 0666 (expected 0444)"
repaired "chown" "$local_" "owner 3100:3100 (expected root:root)"
grep 'Repaired' "$IE/out/err" | sed 's/^/#   /' 

chmod 0644 "$user" "$managed"
printf '{"permissions":{"defaultMode":"bypassPermissions"}}\n' >"$user"
printf '{"permissions":{"defaultMode":"bypassPermissions"}}\n' >"$managed"
printf '{"permissions":{"allow":["Bash(*)"]}}\n' >"$local_"
start "settings edited"
locked "edits undone" "$strict"
repaired "edited" "$managed" "mode 0644 (expected 0444), content differs ([0-9]* bytes, expected $(wc -c <"$strict"))"
repaired "edited" "$user" "content differs"
repaired "edited" "$local_" "content differs (38 bytes, expected 3)"
grep 'Repaired' "$IE/out/err" | sed 's/^/#   /' 

# The agent itself (owner of ~/.claude) swaps the files for a socket and a
# FIFO: opening a socket fails (ENXIO) before any check ran, and the repair
# must still name what was there, not pass in silence.
ok "the agent replaces settings.json by a socket and settings.local.json by a FIFO" \
	initenv_run HOST_UID=3100 HOST_GID=3100 -- /bin/sh -c 'cd /home/devuser/.claude &&
		rm -f settings.json settings.local.json && mkfifo settings.local.json &&
		exec python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"settings.json\")"'
check "settings.json is a socket now" "$(stat -c %F "$user" 2>&1)" = socket
start "settings replaced by a socket and a FIFO"
locked "socket and FIFO replaced" "$strict"
repaired "socket" "$user" "a socket"
repaired "FIFO" "$local_" "a FIFO"
grep 'Repaired' "$IE/out/err" | sed 's/^/#   /'

rm -f "$user" "$local_" "$managed"
start "settings deleted"
locked "deleted files re-installed" "$strict"
no_repairs "deleted files (installed, not repaired)"

rm -rf "$IE/home/devuser/.claude"
mkdir "$IE/out/evil-dir"
chown 3100:3100 "$IE/out/evil-dir"
ln -s "$IE/out/evil-dir" "$IE/home/devuser/.claude"
start "the .claude dir replaced by a symlink to another directory"
check "the .claude dir is a real directory again" "$(stat -c %F "$IE/home/devuser/.claude")" = directory
locked "the .claude dir symlink" "$strict"
check "nothing was written into the symlink's target" "$(find "$IE/out/evil-dir" -mindepth 1 | wc -l)" -eq 0
# The agent can do this one itself (it owns its home): not silently either.
repaired "the .claude symlink" "$IE/home/devuser/.claude" "a symlink"

rm -rf "$IE/home/devuser/.claude"
printf 'not a dir\n' >"$IE/home/devuser/.claude"
start "the .claude dir replaced by a file"
locked "the .claude dir file" "$strict"
repaired "the .claude file" "$IE/home/devuser/.claude" "not a directory"

# The managed-settings directory itself tampered with: writable by others,
# owned by devuser, a plain file, a symlink to a directory devuser owns.
dir=$IE/etc/claude-code
dir_ok() { # dir_ok LABEL
	check "$1: /etc/claude-code is a root-owned 0755 directory again ($(stat -c %F:%U:%a "$dir"))" \
		"$(stat -c %F:%U:%a "$dir")" = directory:root:755
	locked "$1" "$strict"
}
chmod 0777 "$dir"
start "/etc/claude-code world-writable"
dir_ok "world-writable directory"
repaired "world-writable directory" "$dir" "mode 0777 (expected 0755)"
chown 3100:3100 "$dir"
start "/etc/claude-code owned by devuser"
dir_ok "devuser-owned directory"
repaired "devuser-owned directory" "$dir" "owner 3100:3100 (expected 0:0)"
rm -rf "$dir"
printf 'x\n' >"$dir"
start "/etc/claude-code a plain file"
dir_ok "plain file"
repaired "plain file" "$dir" "not a directory"
rm -rf "$dir"
mkdir "$IE/out/evil-etc"
chown 3100:3100 "$IE/out/evil-etc"
ln -s "$IE/out/evil-etc" "$dir"
start "/etc/claude-code a symlink to a devuser directory"
dir_ok "symlinked directory"
repaired "symlinked directory" "$dir" "a symlink"
check "nothing was written into that symlink's target" "$(find "$IE/out/evil-etc" -mindepth 1 | wc -l)" -eq 0

# A profile that is not in the image: refused before anything changes.
rm -f "$managed"
st=0
initenv_run HOST_UID=3100 HOST_GID=3100 CODE_SANDBOX_PROFILE=missing -- "$PROBE" report >"$IE/out/r" 2>"$IE/out/err" || st=$?
check "unknown profile: exit 112 ($st)" "$st" -eq 112
ok "unknown profile: a 'sandbox-init: ' line" grep -q '^sandbox-init: ' "$IE/out/err"
check "unknown profile: the agent never ran" ! -s "$IE/out/r"
check "unknown profile: no managed settings installed" ! -e "$managed"
tap_done
