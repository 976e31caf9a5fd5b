#!/usr/bin/env bash
# The hostile-repository suite of the git relay (issue 8). The agent's
# repository (and its own ~/.gitconfig) configures every program git can be
# made to run or every place it can be made to send a credential: fsmonitor
# (directly, through include.path and includeIf), hooks and core.hooksPath,
# diff.external, textconv, diff.<driver>.command, merge.<driver>.driver, a
# clean filter, core.pager, core.editor, core.sshCommand, core.gitProxy, a
# repository credential helper that hands out a canary, http.extraHeader
# with a canary, http.proxy + http.sslVerify=false, remote.*.uploadpack/
# receivepack/proxy, uploadpack.packObjectsHook, an alias p=push,
# submodule.*.update=!cmd, .gitmodules URLs with ext:: and fd::. Then
# fetch, pull, push, clone and submodule update --init go through the relay.
#
# Every program is tests' mark script, which records which side ran it:
# "agent" when the process has the container's SANDBOX_EXECD_SOCKET,
# "host" otherwise (the daemon's git never has it: its environment is
# fixed). Checked: no "host" mark ever; no canary at the HTTPS remote, the
# proxy listener, the audit log or the daemon's log; and for each
# configuration a control: the same configuration does run (as "agent")
# when git does the work itself, without the relay.
set -uo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${GR_IN_NS:-}" ]; then
	exec unshare --net --pid --fork --mount --mount-proc env GR_IN_NS=1 "$0" "$@"
fi
# shellcheck source=tests/integration/gitrelay-common.sh
. "$SOURCE_DIR/tests/integration/gitrelay-common.sh"
gr_setup
CANARY=canary-$RANDOM$RANDOM
CANARY_B64=$(printf 'canary:%s' "$CANARY" | base64 -w0)
MARKS=$T/marks
touch "$MARKS" && chmod 666 "$MARKS"
cat >"$T/bin/mark" <<MARK
#!/bin/sh
# mark NAME [cat ARGS...]: records who ran it, then behaves like cat.
side=host
[ -n "\${SANDBOX_EXECD_SOCKET:-}" ] && side=agent
echo "\$side \$1" >>"$MARKS"
if [ "\${2:-}" = cat ]; then shift 2; exec cat "\$@"; fi
exit 0
MARK
chmod 755 "$T/bin/mark"
MK=$T/bin/mark
env -i "$MK" selftest-host
SANDBOX_EXECD_SOCKET=x "$MK" selftest-agent
check "the mark script tells the sides apart (the checks below can fail)" \
	"$(tr '\n' ' ' <"$MARKS")" = "host selftest-host agent selftest-agent "
# core.gitProxy names a program (no shell, no arguments).
printf '#!/bin/sh
exec %s gitproxy
' "$MK" >"$T/bin/mark-gitproxy"
chmod 755 "$T/bin/mark-gitproxy"

# A proxy listener: logs whatever connects.
/usr/bin/python3 - "$T/proxy.port" "$T/proxy.log" <<'PY' &
import socket, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def serve(c):
    c.settimeout(3)
    try:
        data = c.recv(4096)
    except OSError:
        data = b""
    with open(sys.argv[2], "ab") as f:
        f.write(b"CONNECTION " + data.replace(b"\r\n", b" | ") + b"\n")
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
PROXY_PID=$!
wait_until 10 test -s "$T/proxy.port" || { echo "Bail out! no proxy listener"; exit 1; }
PPORT=$(cat "$T/proxy.port")
touch "$T/proxy.log"
trap 'kill "$PROXY_PID" 2>/dev/null; gr_cleanup' EXIT

srv_repo r
srv_repo sub
gr_conf "backend = allow_all"
gr_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }
cd "$T/ws" || exit 1
agent git clone -q "$BASE/r.git" h || { echo "Bail out! clone"; exit 1; }
H=$T/ws/h
ag() { agent git -C "$H" "$@"; }

# ---- the hostile configuration ---------------------------------------------------
printf '[core]\n\tfsmonitor = %s include\n' "$MK" >"$T/agent/inc"
printf '[core]\n\tfsmonitor = %s includeif\n' "$MK" >"$T/agent/incif"
chown "$GR_USER:" "$T/agent/inc" "$T/agent/incif"
mkdir -p "$T/agent/hooks"
for hk in pre-commit pre-push post-checkout post-merge reference-transaction pre-auto-gc; do
	printf '#!/bin/sh\n%s hookspath-%s\n' "$MK" "$hk" >"$T/agent/hooks/$hk"
	printf '#!/bin/sh\n%s hook-%s\n' "$MK" "$hk" >"$H/.git/hooks/$hk"
	chmod 755 "$T/agent/hooks/$hk" "$H/.git/hooks/$hk"
done
chown -R "$GR_USER:" "$T/agent/hooks" "$H/.git/hooks"
hostile_config() { # hostile_config REPO: every key, on the repository's own config
	local g=(agent git -C "$1" config)
	"${g[@]}" diff.external "$MK diffext"
	"${g[@]}" diff.tc.textconv "$MK textconv cat"
	"${g[@]}" diff.dd.command "$MK diffcmd"
	"${g[@]}" merge.md.driver "$MK mergedrv"
	"${g[@]}" merge.md.name hostile
	"${g[@]}" filter.f.clean "$MK clean cat"
	"${g[@]}" filter.f.smudge "$MK smudge cat"
	"${g[@]}" core.pager "$MK pager cat"
	"${g[@]}" core.editor "$MK editor"
	"${g[@]}" core.sshCommand "$MK sshcmd"
	"${g[@]}" core.gitProxy "$T/bin/mark-gitproxy"
	"${g[@]}" credential.helper "!f() { $MK credhelper; echo username=canary; echo password=$CANARY; }; f"
	"${g[@]}" http.extraHeader "Authorization: Basic $CANARY_B64"
	"${g[@]}" http.proxy "http://127.0.0.1:$PPORT"
	"${g[@]}" http.sslVerify false
	"${g[@]}" remote.origin.uploadpack "$MK uploadpack"
	"${g[@]}" remote.origin.receivepack "$MK receivepack"
	"${g[@]}" remote.origin.proxy "http://127.0.0.1:$PPORT"
	"${g[@]}" alias.p push
}
hostile_config "$H"
agent git -C "$H" config include.path "$T/agent/inc"
# fsmonitor itself and hooksPath on a second repository (one fsmonitor per
# repository; hooksPath replaces .git/hooks).
agent git clone -q "$BASE/r.git" h2
hostile_config "$T/ws/h2"
agent git -C "$T/ws/h2" config "includeIf.gitdir:/.path" "$T/agent/incif"
agent git -C "$T/ws/h2" config core.hooksPath "$T/agent/hooks"
agent git clone -q "$BASE/r.git" h3
hostile_config "$T/ws/h3"
agent git -C "$T/ws/h3" config core.fsmonitor "$MK fsmonitor"
# The agent's own global config: what only global config may set.
agent git config --global uploadpack.packObjectsHook "$MK packobjectshook"
agent git config --global protocol.ext.allow never
# Content that names programs: attributes and submodules.
printf '*.txt diff=tc\n*.dd diff=dd\n*.m merge=md\n*.dat filter=f\n' >"$H/.gitattributes"
printf 'a\n' >"$H/x.txt"; printf 'a\n' >"$H/y.dd"; printf 'a\n' >"$H/z.m"; printf 'a\n' >"$H/w.dat"
cat >"$H/.gitmodules" <<GM
[submodule "s"]
	path = s
	url = $BASE/sub.git
[submodule "ext"]
	path = ext
	url = ext::sh -c $MK% ext-url
[submodule "fd"]
	path = fd
	url = fd::7
GM
chown -R "$GR_USER:" "$H"
SUB_OID=$(srv_git -C "$T/srv/sub.git" rev-parse main)
for p in s ext fd; do ag update-index --add --cacheinfo "160000,$SUB_OID,$p"; done
ag add .gitattributes x.txt y.dd z.m w.dat .gitmodules
ag commit -q -m "hostile content"
agent git -C "$H" config submodule.s.update "!$MK subupdate"

# ---- through the relay ----------------------------------------------------------
: >"$MARKS"
ok "push through the relay from the hostile repository" ag push -q origin HEAD:refs/heads/hostile
ok "alias p=push through the relay: the push is a push to the relay" ag p -q origin HEAD:refs/heads/hostile2
srv_commit r "upstream"
ok "fetch" ag fetch -q origin
ok "pull" ag pull -q --no-rebase --no-edit origin main
ok "push from the second repository (fsmonitor, hooksPath)" \
	agent git -C "$T/ws/h2" push -q origin HEAD:refs/heads/hostile3
ok "fetch from the second repository" agent git -C "$T/ws/h2" fetch -q origin
ok "clone of the hostile branch (attributes, .gitmodules with ext::/fd::)" \
	agent git clone -q -b hostile "$BASE/r.git" c
agent git -C "$H" submodule update --init s >"$T/out" 2>&1 || diag "$(cat "$T/out")"
check "submodule update --init: the https submodule comes through the relay" \
	"$(agent git -C "$H/s" log -1 --format=%s 2>/dev/null)" = "seed sub"
st=0
agent git -C "$H" submodule update --init ext >/dev/null 2>&1 || st=$?
check "submodule update --init of an ext:: URL fails" "$st" -ne 0
st=0
agent git -C "$H" submodule update --init fd >/dev/null 2>&1 || st=$?
check "submodule update --init of an fd:: URL fails" "$st" -ne 0
st=0
agent git clone -q --recurse-submodules -b hostile "$BASE/r.git" c2 >/dev/null 2>&1 || st=$?
diag "clone --recurse-submodules: status $st (the ext:: and fd:: submodules fail)"
check "clone --recurse-submodules got the https submodule" "$(agent git -C c2/s log -1 --format=%s 2>/dev/null)" = "seed sub"

check "no mark from the host side, ever" "$(grep -c '^host ' "$MARKS")" -eq 0
diag "$(sort "$MARKS" | uniq -c)"
check "the canary never reached the remote" "$(grep -c "$CANARY_B64\|$CANARY" "$T/server.log")" -eq 0
check "... nor the proxy listener" "$(grep -c . "$T/proxy.log")" -eq 0
check "... nor the audit log" "$(grep -c "$CANARY" "$T/state/audit.jsonl")" -eq 0
check "... nor the daemon's log" "$(grep -c "$CANARY" "$T/daemon.log")" -eq 0
check "no ext:: mark (the ext:: command never ran anywhere)" "$(grep -c 'ext-url' "$MARKS")" -eq 0
check "submodule.s.update=!cmd ran, in the container" "$(grep -c '^agent subupdate$' "$MARKS")" -ge 1
for hk in pre-push reference-transaction; do
	check "hook $hk ran in the container during the relay push" "$(grep -c "^agent hook-$hk\$" "$MARKS")" -ge 1
done
check "the cache repositories have no hooks and no agent configuration" \
	"$(cat "$T"/state/git-cache/*.git/config | grep -ci "$MK\|extraheader\|proxy\|alias\|include")" -eq 0

# ---- controls: the configuration is live when git does the work itself ------------
: >"$MARKS"
printf 'b\n' >>"$H/x.txt"; printf 'b\n' >>"$H/y.dd"; printf 'b\n' >>"$H/w.dat"
chown -R "$GR_USER:" "$H"
agent git -C "$T/ws/h2" status >/dev/null 2>&1
agent git -C "$T/ws/h3" status >/dev/null 2>&1
ag status >/dev/null 2>&1
ag diff >/dev/null 2>&1
ag diff --no-ext-diff -- x.txt >/dev/null 2>&1
ag -c diff.external= diff -- y.dd >/dev/null 2>&1
ag add w.dat >/dev/null 2>&1
agent script -qec "git -C '$H' log -1" /dev/null >/dev/null 2>&1
ag commit -q -am "control" >/dev/null 2>&1
ag commit -q --amend >/dev/null 2>&1
agent git -C "$T/ws/h2" commit -q --allow-empty -m "control2" >/dev/null 2>&1
(cd "$H" && agent git switch -q -c mb HEAD~1 && printf 'left\n' >z.m && agent git commit -qam l &&
	agent git switch -q - && printf 'right\n' >z.m && agent git commit -qam r &&
	agent git merge -q --no-edit mb) >"$T/out" 2>&1 || diag "merge: $(tail -5 "$T/out")"
agent_direct git -C "$H" ls-remote "ssh://127.0.0.1/x" >/dev/null 2>&1
agent_direct git -C "$H" -c protocol.git.allow=always ls-remote "git://127.0.0.1/x" >/dev/null 2>&1
agent_direct git -C "$H" fetch -q "file://$T/srv/r.git" >/dev/null 2>&1
agent_direct git -C "$H" -c remote.x.url="file://$T/srv/r.git" -c remote.x.uploadpack="$MK uploadpack" \
	fetch -q x >/dev/null 2>&1
agent_direct git -C "$H" -c remote.x.url="file://$T/srv/r.git" -c remote.x.receivepack="$MK receivepack" \
	push -q x HEAD:refs/heads/ctl >/dev/null 2>&1
agent_direct git clone -q --no-local "file://$H" "$T/ws/ctl-clone" >/dev/null 2>&1
agent_direct git -C "$H" -c protocol.ext.allow=always ls-remote "ext::sh -c $MK% ext-url" >/dev/null 2>&1
agent_direct git -C "$H" ls-remote "$BASE/r.git" >/dev/null 2>&1
agent_direct git -C "$H" -c http.proxy= -c remote.origin.proxy= -c http.extraHeader= \
	ls-remote "$BASE/r.git" >/dev/null 2>&1
for name in fsmonitor include includeif hookspath-pre-commit hook-pre-commit diffext textconv diffcmd clean \
	pager editor mergedrv sshcmd gitproxy uploadpack receivepack packobjectshook ext-url credhelper; do
	check "control: '$name' runs in the container when git does the work itself" \
		"$(grep -c "^agent $name\$" "$MARKS")" -ge 1
done
check "control: the repository's credential helper hands the canary to the remote directly" \
	"$(grep -c "$CANARY_B64" "$T/server.log")" -ge 1
check "control: http.proxy / remote.*.proxy send the agent's direct request to the listener" \
	"$(grep -c CONNECTION "$T/proxy.log")" -ge 1
check "still no mark from the host side" "$(grep -c '^host ' "$MARKS")" -eq 0
gr_stop
gr_check_daemon_log
tap_done
