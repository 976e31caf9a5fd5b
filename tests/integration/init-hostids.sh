#!/usr/bin/env bash
# HOST_UID/HOST_GID as PID 1: both required (one line saying how to pass
# them); 0, 65534 (nobody/nogroup, the kernel's overflow ID), 65535 and
# 4294967294/5 refused with exit 112, nothing changed, the agent never ran;
# ordinary IDs below 1000 (macOS users are 501) accepted. Only
# --test-subreaper keeps devuser's image IDs. The image's passwd and group
# are written here (no account of the machine running the test matters).
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

# A minimal image-like account database of our own.
cat >"$IE/etc/passwd" <<-PASSWD
	root:x:0:0:root:/root:/bin/bash
	daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
	nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
	devuser:x:$IE_DEV_UID:$IE_DEV_GID:devuser:/home/devuser:/bin/bash
PASSWD
cat >"$IE/etc/group" <<-GROUP
	root:x:0:
	daemon:x:1:
	adm:x:4:
	sudo:x:27:
	docker:x:$IE_DOCKER_GID:
	nogroup:x:65534:
	devuser:x:$IE_DEV_GID:
GROUP
chmod 0644 "$IE/etc/passwd" "$IE/etc/group"
rm -f "$IE/etc/shadow" "$IE/etc/gshadow"

snapshot() { SNAP="$(initenv_tree_sum "$IE/etc") $(initenv_tree_sum "$IE/home")"; }
refuse() { # refuse LABEL PATTERN [VAR=VAL...]: exit 112, one line with PATTERN ($PRE: options first)
	local label=$1 pattern=$2 st=0 line before
	shift 2
	snapshot
	before=$SNAP
	local pre=()
	[ -z "${PRE:-}" ] || pre=("$PRE")
	initenv_run "$@" -- "${pre[@]}" "$PROBE" report >"$IE/out/r.out" 2>"$IE/out/r.err" || st=$?
	check "$label: exit 112 ($st)" "$st" -eq 112
	line=$(grep '^sandbox-init: ' "$IE/out/r.err")
	check "$label: one 'sandbox-init: identity: ' line" "$(grep -c '^sandbox-init: identity: ' "$IE/out/r.err")" -eq 1
	printf '#   %s\n' "$line"
	case $line in
	*"$pattern"*) ok "$label: the line says '$pattern'" true ;;
	*) ok "$label: the line says '$pattern'" false ;;
	esac
	check "$label: the agent never ran" ! -s "$IE/out/r.out"
	snapshot
	check "$label: /etc and /home unchanged" "$SNAP" = "$before"
}

# shellcheck disable=SC2016 # the text sandbox-init prints, not expanded
how='-e HOST_UID=$(id -u) -e HOST_GID=$(id -g)'
refuse "neither HOST_UID nor HOST_GID" "HOST_UID and HOST_GID are not set: pass both, e.g. $how"
refuse "HOST_UID only" "HOST_GID is not set: pass both, e.g. $how" HOST_UID=1500
refuse "HOST_GID only" "HOST_UID is not set: pass both, e.g. $how" HOST_GID=1500
PRE=--check refuse "--check without them" "HOST_UID and HOST_GID are not set"
for id in 0 65534 65535 4294967294; do
	refuse "HOST_UID=$id" "HOST_UID=$id is refused" HOST_UID=$id HOST_GID=1500
	refuse "HOST_GID=$id" "HOST_GID=$id is refused" HOST_UID=1500 HOST_GID=$id
done
refuse "HOST_UID=65534 names nobody" "nobody/nogroup" HOST_UID=65534 HOST_GID=1500
refuse "HOST_UID=4294967295" "out of range (at most 4294967293)" HOST_UID=4294967295 HOST_GID=1500

# Ordinary IDs below 1000 work (a macOS user is 501:20; 20 is no
# privileged group here).
st=0
initenv_run HOST_UID=501 HOST_GID=20 -- "$PROBE" report >"$IE/out/mac" 2>"$IE/out/mac.err" || st=$?
check "HOST_UID=501 HOST_GID=20 runs the agent as 501:20 ($(kv "$IE/out/mac" uid):$(kv "$IE/out/mac" gid), status $st)" \
	"$st:$(kv "$IE/out/mac" uid):$(kv "$IE/out/mac" gid)" = 0:501:20

# --test-subreaper (tests only, never a container's PID 1) keeps devuser's
# image IDs when neither is given (now 501:20).
st=0
IE_NOT_PID1=1 initenv_run -- --test-subreaper "$PROBE" report >"$IE/out/sub" 2>"$IE/out/sub.err" || st=$?
check "--test-subreaper without HOST_UID/HOST_GID keeps devuser's ids ($(kv "$IE/out/sub" uid):$(kv "$IE/out/sub" gid), status $st)" \
	"$st:$(kv "$IE/out/sub" uid):$(kv "$IE/out/sub" gid)" = 0:501:20
# ...but not an image whose devuser is nobody.
sed -i "s/^devuser:x:501:20:/devuser:x:65534:20:/" "$IE/etc/passwd"
st=0
IE_NOT_PID1=1 initenv_run -- --test-subreaper "$PROBE" report >"$IE/out/sub" 2>"$IE/out/sub.err" || st=$?
check "--test-subreaper: devuser's image UID 65534 is refused too ($st)" "$st" -eq 112
ok "that line names devuser's UID" grep -q "^sandbox-init: identity: devuser's UID=65534 is refused" "$IE/out/sub.err"
tap_done
