#!/usr/bin/env bash
# The git relay against an SSH remote: sshd on loopback in this test's own
# network namespace, key authentication with a key that exists only in the
# daemon user's home (named by core.sshCommand in their global git config,
# which the relay copies into its cache). The agent clones, fetches and
# pushes with plain git through the relay, and cannot reach the remote
# itself (it has no key).
set -uo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
[ -x /usr/sbin/sshd ] || { echo "1..0 # SKIP no sshd (openssh-server)"; exit 77; }
if [ -z "${GR_IN_NS:-}" ]; then
	exec unshare --net --pid --fork --mount --mount-proc env GR_IN_NS=1 "$0" "$@"
fi
# shellcheck source=tests/integration/gitrelay-common.sh
. "$SOURCE_DIR/tests/integration/gitrelay-common.sh"
gr_setup
SSH_PORT=2222 # inside this namespace only
S=$T/sshd
mkdir -p "$S" && chmod 700 "$S"
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$T/home/id"
chown "$GR_USER:" "$T/home/id" "$T/home/id.pub"
cp "$T/home/id.pub" "$S/authorized_keys" && chmod 600 "$S/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$S/host_key.pub")" >"$T/home/known_hosts"
chown "$GR_USER:" "$T/home/known_hosts"
cat >"$S/config" <<CFG
ListenAddress 127.0.0.1:$SSH_PORT
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $S/pid
CFG
# sshd wants /run/sshd (privilege separation): a private /run in this mount
# namespace, so nothing is created on the machine's own.
mount -t tmpfs -o mode=755 tmpfs /run && mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$S/config" 2>"$S/log" &
SSHD_PID=$!
trap 'kill "$SSHD_PID" 2>/dev/null; gr_cleanup' EXIT
wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$SSH_PORT" 2>/dev/null ||
	{ echo "Bail out! sshd did not start"; cat "$S/log"; exit 1; }
git config -f "$T/home/.gitconfig" core.sshCommand \
	"ssh -i $T/home/id -o UserKnownHostsFile=$T/home/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
srv_repo s
URL=ssh://root@127.0.0.1:$SSH_PORT$T/srv/s.git
gr_conf "backend = allow_all"
gr_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }
cd "$T/ws" || exit 1

st=0
agent_direct git -c core.sshCommand="ssh -o BatchMode=yes -o StrictHostKeyChecking=no" \
	ls-remote "$URL" >/dev/null 2>&1 || st=$?
check "the agent's own ssh has no key for the remote" "$st" -ne 0
ok "clone over ssh through the relay" agent git clone -q "$URL" c
check "... with the commit" "$(agent git -C c log -1 --format=%s)" = "seed s"
srv_commit s "over ssh"
ok "fetch over ssh" agent git -C c fetch -q origin
check "... the new commit" "$(agent git -C c log -1 --format=%s origin/main)" = "over ssh"
agent git -C c switch -q -c topic origin/main
agent git -C c commit -q --allow-empty -m "pushed over ssh"
ok "push of a new branch over ssh" agent git -C c push -q origin topic
check "... the remote has it" "$(srv_git -C "$T/srv/s.git" log -1 --format=%s topic)" = "pushed over ssh"
check "the audit records the canonical ssh URL" \
	"$(grep -c "\"url\":\"ssh://root@127.0.0.1:$SSH_PORT$T/srv/s.git\"" "$T/state/audit.jsonl")" -ge 3
check "the private key is nowhere in the agent's files" \
	"$(grep -rl "$(sed -n 2p "$T/home/id")" "$T/agent" "$T/ws" 2>/dev/null | wc -l)" -eq 0
gr_stop
gr_check_daemon_log
tap_done
