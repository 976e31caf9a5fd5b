#!/usr/bin/env bash
# Fail closed and explain: --check prints the plan and changes nothing;
# sandbox-init refuses to run outside PID 1 unless --test-subreaper (111);
# bad options are 111; a failing step (unknown or malformed profile, no
# devuser, bad ids, a missing capability) stops the start with one
# "sandbox-init: " line, a
# documented exit code, nothing changed, and the agent never started.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

snapshot() { SNAP="$(initenv_tree_sum "$IE/etc") $(initenv_tree_sum "$IE/home")"; }
unchanged() { # unchanged LABEL
	local before=$SNAP
	snapshot
	check "$1: /etc and /home unchanged" "$SNAP" = "$before"
}
fails() { # fails LABEL CODE [VAR=VAL...] -- ARGS...: exits CODE, explains, agent never ran
	local label=$1 code=$2 st=0 lines
	shift 2
	snapshot
	initenv_run "$@" >"$IE/out/f.out" 2>"$IE/out/f.err" || st=$?
	check "$label: exit $code ($st)" "$st" -eq "$code"
	lines=$(grep -c '^sandbox-init: ' "$IE/out/f.err")
	check "$label: one 'sandbox-init: ' line on stderr ($lines)" "$lines" -eq 1
	grep '^sandbox-init: ' "$IE/out/f.err" | head -n 1 | sed 's/^/#   /'
	check "$label: the agent never ran" ! -s "$IE/out/f.out"
	unchanged "$label"
}

# --check: the plan, nothing changed (the image still has devuser 1001).
snapshot
st=0
initenv_run HOST_UID=1000 HOST_GID=1000 CODE_SANDBOX_PROFILE=permissive -- --check "$PROBE" report \
	>"$IE/out/plan" 2>"$IE/out/plan.err" || st=$?
check "--check exits 0 ($st)" "$st" -eq 0
ok "--check names devuser" grep -q devuser "$IE/out/plan"
ok "--check shows the new uid 1000" grep -q 1000 "$IE/out/plan"
ok "--check names the profile" grep -q permissive "$IE/out/plan"
ok "--check summarises seccomp" grep -qi seccomp "$IE/out/plan"
nok "--check does not run the agent" grep -q '^uid=' "$IE/out/plan"
unchanged "--check"
check "--check installed no settings" ! -e "$IE/etc/claude-code"
sed 's/^/#   /' "$IE/out/plan" | head -n 20
fails "--check with HOST_UID=0" 112 HOST_UID=0 HOST_GID=1001 -- --check "$PROBE" report

# Not PID 1.
IE_NOT_PID1=1 fails "not PID 1 without --test-subreaper" 111 HOST_UID=1001 HOST_GID=1001 -- "$PROBE" report
st=0
IE_NOT_PID1=1 initenv_run HOST_UID=1001 HOST_GID=1001 -- --test-subreaper "$PROBE" orphans 20 \
	>"$IE/out/sub" 2>"$IE/out/sub.err" || st=$?
check "--test-subreaper runs the agent outside PID 1 ($st)" "$st" -eq 0
check "--test-subreaper: orphans reparent to sandbox-init, not PID 1 (reaper $(kv "$IE/out/sub" reaper))" \
	"$(kv "$IE/out/sub" reaper)" != 1
check "--test-subreaper: all 20 orphans reaped ($(kv "$IE/out/sub" orphans_reparented) reparented, $(kv "$IE/out/sub" orphans_left) left)" \
	"$(kv "$IE/out/sub" orphans_reparented):$(kv "$IE/out/sub" orphans_left)" = 20:0

# Usage.
fails "unknown option" 111 HOST_UID=1001 HOST_GID=1001 -- --no-such-option "$PROBE" report
fails "--seccomp=maybe" 111 HOST_UID=1001 HOST_GID=1001 -- --seccomp=maybe "$PROBE" report

# Configuration.
fails "unknown profile" 112 HOST_UID=1001 HOST_GID=1001 CODE_SANDBOX_PROFILE=nonexistent -- "$PROBE" report
fails "profile name with a path" 112 HOST_UID=1001 HOST_GID=1001 CODE_SANDBOX_PROFILE=../profiles/strict -- "$PROBE" report
fails "empty profile name" 112 HOST_UID=1001 HOST_GID=1001 CODE_SANDBOX_PROFILE= -- "$PROBE" report
printf '{"permissions": {' >"$IE/etc/code-sandbox/profiles/broken.json"
fails "malformed profile JSON" 112 HOST_UID=1001 HOST_GID=1001 CODE_SANDBOX_PROFILE=broken -- "$PROBE" report
printf '[1, 2]\n' >"$IE/etc/code-sandbox/profiles/array.json"
fails "profile that is not a JSON object" 112 HOST_UID=1001 HOST_GID=1001 CODE_SANDBOX_PROFILE=array -- "$PROBE" report
fails "HOST_UID=0" 112 HOST_UID=0 HOST_GID=1001 -- "$PROBE" report

# No devuser in the image.
cp -a "$IE/etc/passwd" "$IE/out/passwd.keep"
grep -v '^devuser:' "$IE/out/passwd.keep" >"$IE/etc/passwd"
fails "image without devuser" 112 HOST_UID=1001 HOST_GID=1001 -- "$PROBE" report
cp -a "$IE/out/passwd.keep" "$IE/etc/passwd"

# devuser's home, from the image's passwd, must be a plain directory of its
# own: never /, a system directory, /workspace or a pseudo file system (the
# walk would re-own it all).
set_home() { awk -F: -v OFS=: -v h="$1" '$1 == "devuser" {$6 = h} {print}' "$IE/out/passwd.keep" >"$IE/etc/passwd"; }
for bad in / /etc /usr /workspace /workspace/sub /proc/1 /sys /dev /home/../etc /home/devuser/ relative/home ""; do
	set_home "$bad"
	fails "devuser's home '$bad'" 112 HOST_UID=1001 HOST_GID=1001 -- "$PROBE" report
done
mkdir -p "$IE/home/alt"
set_home /home/alt
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- "$PROBE" report >"$IE/out/alt" 2>"$IE/out/alt.err" || st=$?
check "another home under /home is used: HOME=$(kv "$IE/out/alt" env.HOME) (status $st)" \
	"$st:$(kv "$IE/out/alt" env.HOME)" = 0:/home/alt
check "that home is re-owned to devuser" "$(stat -c %u:%g "$IE/home/alt")" = 1001:1001
check "its settings are mirrored there" "$(stat -c %U:%a "$IE/home/alt/.claude/settings.json" 2>&1)" = root:444
cp -a "$IE/out/passwd.keep" "$IE/etc/passwd"

# A container started without a capability the run needs (a step's or the
# loop's): checked before anything changes, one line naming it and the
# engine option that grants it, exit 118, the agent never ran (never an
# agent beside a PID 1 that kept its start-up capabilities).
full_caps=$IE_CAPS
for cap in kill setuid setgid setpcap chown dac_override net_admin net_bind_service; do
	CAP=${cap^^}
	IE_CAPS=${full_caps/,+$cap/} fails "no CAP_$CAP" 118 HOST_UID=1777 HOST_GID=1777 -- "$PROBE" report
	check "no CAP_$CAP: the line names it and --cap-add=$CAP" \
		"$(grep '^sandbox-init: ' "$IE/out/f.err")" = "sandbox-init: capabilities: missing CAP_$CAP (add --cap-add=$CAP)"
done
IE_CAPS=${full_caps/,+kill/}
IE_CAPS=${IE_CAPS/,+net_admin/} fails "neither CAP_KILL nor CAP_NET_ADMIN" 118 HOST_UID=1001 HOST_GID=1001 -- "$PROBE" report
check "both named in one line" "$(grep '^sandbox-init: ' "$IE/out/f.err")" = \
	"sandbox-init: capabilities: missing CAP_KILL, CAP_NET_ADMIN (add --cap-add=KILL --cap-add=NET_ADMIN)"
IE_CAPS=${full_caps/,+kill/}
IE_NOT_PID1=1 fails "no CAP_KILL under --test-subreaper too" 118 HOST_UID=1001 HOST_GID=1001 -- --test-subreaper "$PROBE" report
IE_CAPS=$full_caps
# FOWNER is not needed (SECURITY.md).
st=0
IE_CAPS=${full_caps/,+fowner/} initenv_run HOST_UID=1001 HOST_GID=1001 -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/err" || st=$?
check "without CAP_FOWNER the run starts ($st)" "$st" -eq 0

# The allowlist (issue 10 item 4): too wide, special-purpose without the
# marker, public suffixes: refused before anything changes (112); the
# marker opens a special range and --check names it.
al=$IE/etc/code-sandbox/allowlist
cp -a "$al" "$IE/out/allowlist.keep"
for bad in 0.0.0.0/0 ::/0 0.0.0.0 2.0.0.0/7 10.0.0.0/8 169.254.169.254:80 127.0.0.1:8080 100.64.0.0/16 \
	fd00::/8 .co.uk '*.github.io' .s3.amazonaws.com; do
	printf '%s\n' "$bad" >"$al"
	fails "allowlist entry '$bad'" 112 HOST_UID=1001 HOST_GID=1001 -- --check "$PROBE" report
	ok "allowlist entry '$bad': the reason names file, line and why" \
		grep -qE "Invalid allowlist: /etc/code-sandbox/allowlist:1:[0-9]+: (prefix wider|0\.0\.0\.0/8 is not|:: is not|.*marker 'special'|suffix is a public suffix)" "$IE/out/f.err"
	grep 'Invalid allowlist' "$IE/out/f.err" | sed 's/^/#   /'
done
cp -a "$IE/out/allowlist.keep" "$al"
for bad in 0.0.0.0/0 ::/0 10.0.0.0/8 "169.254.169.254:80 special" .co.uk; do
	fails "EXTRA_ALLOWED_DOMAINS='$bad'" 112 HOST_UID=1001 HOST_GID=1001 "EXTRA_ALLOWED_DOMAINS=$bad" -- "$PROBE" report
done
printf '198.51.100.1\n10.20.0.0/16:5432 special\n169.254.169.254:80\tspecial # metadata, on purpose\n' >"$al"
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- --check "$PROBE" report >"$IE/out/plan" 2>"$IE/out/plan.err" || st=$?
check "marked special ranges: --check exits 0 ($st)" "$st" -eq 0
ok "--check names the private range opened" grep -q "^# special-purpose range opened: 10.20.0.0/16:5432 (private) by /etc/code-sandbox/allowlist:2 ('special')" "$IE/out/plan"
ok "--check names the metadata address opened" grep -q "^# special-purpose range opened: 169.254.169.254:80 (cloud metadata) by /etc/code-sandbox/allowlist:3" "$IE/out/plan"
grep '^# special' "$IE/out/plan" | sed 's/^/#   /'
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/err" || st=$?
check "marked special ranges: the run starts ($st)" "$st" -eq 0
cp -a "$IE/out/allowlist.keep" "$al"

# After all that, a normal start still works.
st=0
initenv_run HOST_UID=1001 HOST_GID=1001 -- "$PROBE" exit 0 >/dev/null 2>"$IE/out/err" || st=$?
check "a valid start after the failures works ($st)" "$st" -eq 0
tap_done
