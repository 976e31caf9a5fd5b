#!/usr/bin/env bash
# Identity: HOST_UID/HOST_GID become devuser's ids; an account already
# holding them (the image's account at 1000:1000, node in the fixture)
# moves to free ids;
# root's ids, privileged groups and malformed values are refused with exit
# 112 and one "sandbox-init: " line, before anything changes.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

# The accounts holding 1000: node in the fixture (tests/support/etc-fixture.sh);
# an image without one gets a cloudsdk user and group added.
vu=$(awk -F: '$3 == 1000 {print $1; exit}' "$IE/etc/passwd")
if [ -z "$vu" ]; then
	vu=cloudsdk
	grep -q '^cloudsdk:' "$IE/etc/group" || printf 'cloudsdk:x:1000:\n' >>"$IE/etc/group"
	printf 'cloudsdk:x:1000:%s::/home/cloudsdk:/bin/bash\n' "$(awk -F: '$1 == "cloudsdk" {print $3}' "$IE/etc/group")" >>"$IE/etc/passwd"
fi
vg=$(awk -F: '$3 == 1000 {print $1; exit}' "$IE/etc/group")
if [ -z "$vg" ]; then
	vg=cloudsdk-grp
	printf 'cloudsdk-grp:x:1000:\n' >>"$IE/etc/group"
fi
vu_pgid=$(awk -F: -v u="$vu" '$1 == u {print $4}' "$IE/etc/passwd")
diag "uid 1000 is '$vu' (primary gid $vu_pgid), gid 1000 is '$vg'"
# A home for the account that will move, owned by its current ids.
mkdir -p "$IE/home/$vu"
chown 1000:1000 "$IE/home/$vu"

# --- refused ids: nothing changes, the agent never runs
etc_before=$(initenv_tree_sum "$IE/etc")
home_before=$(initenv_tree_sum "$IE/home")
refuse() { # refuse DESCRIPTION VAR=VAL...
	local what=$1 st=0
	shift
	initenv_run "$@" -- "$PROBE" report >"$IE/out/r.out" 2>"$IE/out/r.err" || st=$?
	check "$what: exit 112 ($st)" "$st" -eq 112
	ok "$what: one line starting with 'sandbox-init: '" grep -q '^sandbox-init: ' "$IE/out/r.err"
	check "$what: the agent never ran" ! -s "$IE/out/r.out"
	grep '^sandbox-init: ' "$IE/out/r.err" | head -n 1 | sed 's/^/#   /'
}
refuse "HOST_UID=0" HOST_UID=0 HOST_GID=1001
refuse "HOST_GID=0" HOST_UID=1001 HOST_GID=0
refuse "HOST_GID of sudo (27)" HOST_UID=1001 HOST_GID=27
refuse "HOST_GID of disk (6)" HOST_UID=1001 HOST_GID=6
refuse "HOST_GID of shadow (42)" HOST_UID=1001 HOST_GID=42
refuse "HOST_GID of docker ($IE_DOCKER_GID)" HOST_UID=1001 HOST_GID="$IE_DOCKER_GID"
refuse "HOST_GID of adm (4)" HOST_UID=1001 HOST_GID=4
refuse "HOST_UID not a number" HOST_UID=abc HOST_GID=1001
refuse "HOST_UID negative" HOST_UID=-1 HOST_GID=1001
refuse "HOST_UID with trailing junk" HOST_UID=1001x HOST_GID=1001
refuse "HOST_UID 4294967295 ((uid_t)-1)" HOST_UID=4294967295 HOST_GID=1001
refuse "HOST_UID overflowing" HOST_UID=99999999999999999999 HOST_GID=1001
refuse "HOST_GID not a number" HOST_UID=1001 HOST_GID=0x10
check "/etc is unchanged after the refusals" "$(initenv_tree_sum "$IE/etc")" = "$etc_before"
check "/home is unchanged after the refusals" "$(initenv_tree_sum "$IE/home")" = "$home_before"

# --- collision: HOST_UID/HOST_GID 1000 belong to $vu and $vg
passwd_ino=$(stat -c %i "$IE/etc/passwd")
others() { grep -vE "^(devuser|$vu|$vg):" "$1"; }
passwd_others=$(others "$IE/etc/passwd")
group_others=$(others "$IE/etc/group")
n_passwd=$(wc -l <"$IE/etc/passwd")
n_group=$(wc -l <"$IE/etc/group")
etc_names() { find "$IE/etc" -mindepth 1 -maxdepth 1 ! -name claude-code -printf '%f\n' | LC_ALL=C sort; }
etc_names_before=$(etc_names)
cp -a "$IE/etc/passwd" "$IE/out/passwd.before"
out=$IE/out/collide
st=0
initenv_run HOST_UID=1000 HOST_GID=1000 -- "$PROBE" report >"$out" 2>"$out.err" || st=$?
check "collision: agent runs (status $st)" "$st" -eq 0
check "collision: agent is 1000:1000 ($(kv "$out" uid):$(kv "$out" gid))" "$(kv "$out" uid):$(kv "$out" gid)" = 1000:1000
ok "collision: devuser is 1000:1000 in passwd" grep -qE '^devuser:x:1000:1000:' "$IE/etc/passwd"
ok "collision: devuser is 1000 in group" grep -qE '^devuser:x:1000:' "$IE/etc/group"
new_uid=$(awk -F: -v u="$vu" '$1 == u {print $3}' "$IE/etc/passwd")
new_pgid=$(awk -F: -v u="$vu" '$1 == u {print $4}' "$IE/etc/passwd")
new_gid=$(awk -F: -v g="$vg" '$1 == g {print $3}' "$IE/etc/group")
check "collision: $vu moved off uid 1000 (now '$new_uid')" -n "$new_uid" -a "$new_uid" != 1000
check "collision: group $vg moved off gid 1000 (now '$new_gid')" -n "$new_gid" -a "$new_gid" != 1000
if [ "$vu_pgid" = 1000 ]; then
	check "collision: $vu's primary gid follows its group ($new_pgid)" "$new_pgid" = "$new_gid"
else
	check "collision: $vu's primary gid is unchanged ($new_pgid)" "$new_pgid" = "$vu_pgid"
fi
check "collision: exactly one account holds uid 1000" "$(awk -F: '$3 == 1000' "$IE/etc/passwd" | wc -l)" -eq 1
check "collision: exactly one group holds gid 1000" "$(awk -F: '$3 == 1000' "$IE/etc/group" | wc -l)" -eq 1
check "collision: no uid is held twice" "$(cut -d: -f3 "$IE/etc/passwd" | sort | uniq -d | wc -l)" -eq 0
check "collision: no gid is held twice" "$(cut -d: -f3 "$IE/etc/group" | sort | uniq -d | wc -l)" -eq 0
check "collision: the moved uid was free in the image" "$(awk -F: -v u="$new_uid" '$3 == u' "$IE/out/passwd.before" | wc -l)" -eq 0
check "collision: every other passwd line is byte-identical, in order" "$(others "$IE/etc/passwd")" = "$passwd_others"
check "collision: every other group line is byte-identical, in order" "$(others "$IE/etc/group")" = "$group_others"
check "collision: same number of accounts" "$(wc -l <"$IE/etc/passwd")" -eq "$n_passwd"
check "collision: same number of groups" "$(wc -l <"$IE/etc/group")" -eq "$n_group"
check "collision: passwd replaced by rename (new inode), mode 0644 root:root" \
	"$(stat -c %a:%U:%G "$IE/etc/passwd"):$([ "$(stat -c %i "$IE/etc/passwd")" != "$passwd_ino" ] && echo renamed)" = 644:root:root:renamed
check "collision: no temporary file left in /etc" "$(etc_names)" = "$etc_names_before"
check "collision: the agent's uid maps to devuser" "$(awk -F: -v u="$(kv "$out" uid)" '$3 == u {print $1}' "$IE/etc/passwd")" = devuser
diag "$vu moved to $new_uid:$new_gid; its old home is now $(stat -c %u:%g "$IE/home/$vu") (files of a moved account are not re-owned)"

# Only the gid collides: HOST_GID is $vg's new gid.
st=0
initenv_run HOST_UID=1500 HOST_GID="$new_gid" -- "$PROBE" report >"$out" 2>"$out.err" || st=$?
check "gid-only collision: agent runs as 1500:$new_gid (status $st, $(kv "$out" uid):$(kv "$out" gid))" \
	"$st:$(kv "$out" uid):$(kv "$out" gid)" = "0:1500:$new_gid"
g2=$(awk -F: -v g="$vg" '$1 == g {print $3}' "$IE/etc/group")
pg2=$(awk -F: -v u="$vu" '$1 == u {print $4}' "$IE/etc/passwd")
check "gid-only collision: group $vg moved again (now '$g2')" -n "$g2" -a "$g2" != "$new_gid"
if [ "$vu_pgid" = 1000 ]; then
	check "gid-only collision: $vu's primary gid follows its group ($pg2)" "$pg2" = "$g2"
fi
check "gid-only collision: $vu keeps its uid ($new_uid)" \
	"$(awk -F: -v u="$vu" '$1 == u {print $3}' "$IE/etc/passwd")" = "$new_uid"
check "gid-only collision: no gid is held twice" "$(cut -d: -f3 "$IE/etc/group" | sort | uniq -d | wc -l)" -eq 0

# Moving back: HOST_UID 1001 again; devuser and $vu must not collide.
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- "$PROBE" exit 0 >/dev/null 2>"$out.err" || st=$?
check "second remap to 1001:1001 works ($st)" "$st" -eq 0
ok "devuser is 1001:1001 again" grep -qE '^devuser:x:1001:1001:' "$IE/etc/passwd"
check "still no uid held twice" "$(cut -d: -f3 "$IE/etc/passwd" | sort | uniq -d | wc -l)" -eq 0
tap_done
