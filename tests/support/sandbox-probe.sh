#!/bin/bash
# Run by test-sandbox.sh AS THE AGENT inside the container (the command the
# launcher starts under sandbox-init). Prints KEY=VALUE lines; the test
# decides. Never exits early: every probe reports.
#   sandbox-probe.sh BINDIR BLOCKED4 BLOCKED6 UDPPORT METADATA
bin=$1 b4=$2 b6=$3 udpport=$4 meta=$5
managed=/etc/claude-code/managed-settings.json
user=$HOME/.claude/settings.json
profile=/etc/code-sandbox/profiles/${CS_PROBE_PROFILE:-strict}.json

kv() { printf '%s=%s\n' "$1" "$2"; }
rc() { "$@" >/dev/null 2>&1 && echo ok || echo "fail:$?"; }
status_field() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
sha() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

kv uid "$(id -u)"
kv gid "$(id -g)"
kv groups "$(id -G)"
kv user "$(id -un)"
kv home "$HOME"
kv home_owner "$(stat -c %u:%g "$HOME")"
kv ws_owner "$(stat -c %u:%g /workspace)"
kv ws_write "$(rc sh -c 'echo "written by the agent" >/workspace/agent-file')"
kv tmp_write "$(rc touch /tmp/probe-tmp)"
kv pid1_comm "$(cat /proc/1/comm)"
kv self_ppid "$(status_field $$ PPid)"
for f in CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp; do
	kv "self_$f" "$(status_field $$ "$f")"
done
kv pid1_CapEff "$(status_field 1 CapEff)"
kv pid1_CapPrm "$(status_field 1 CapPrm)"
kv pid1_environ "$(cat /proc/1/environ >/dev/null 2>&1 && echo readable || echo denied)"
kv env_host_uid "$(printenv HOST_UID >/dev/null && echo present || echo absent)"
kv env_cs_vars "$(env | grep -c '^CODE_SANDBOX_')"
# Processes: PID 1, this shell and what it runs now (the awk, its pipe).
kv procs "$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)"

# Settings: the managed file and the user mirror, then tampering attempts.
kv managed_stat "$(stat -L -c %u:%g:%a "$managed" 2>&1)"
kv user_stat "$(stat -L -c %u:%g:%a "$user" 2>&1)"
kv profile_sha "$(sha "$profile")"
kv managed_sha "$(sha "$managed")"
kv user_sha "$(sha "$user")"
echo '{"permissions":{"allow":["Bash"]}}' >/tmp/evil.json
kv t_managed_append "$(rc sh -c "echo x >> $managed")"
kv t_managed_cp "$(rc cp /tmp/evil.json "$managed")"
kv t_managed_rename "$(rc sh -c "mv $managed $managed.old && cp /tmp/evil.json $managed")"
kv t_managed_symlink "$(rc ln -sf /tmp/evil.json "$managed")"
kv t_managed_dir "$(rc sh -c "mv /etc/claude-code /tmp/cc-old")"
kv t_user_append "$(rc sh -c "echo x >> $user")"
kv t_user_cp "$(rc cp /tmp/evil.json "$user")"
kv t_user_rename "$(rc sh -c "mv $user $user.old && cp /tmp/evil.json $user")"
kv t_user_symlink "$(rc ln -sf /tmp/evil.json "$user")"
kv t_user_dir "$(rc sh -c "mv $HOME/.claude $HOME/.claude-old && mkdir $HOME/.claude && cp /tmp/evil.json $user")"
kv managed_sha_after "$(sha "$managed")"
kv user_sha_after "$(sha "$user")"

# Network: the firewall (default deny, both families), UDP, raw sockets,
# the metadata address, the DNS gate, the allowed fake API.
kv tcp4_blocked "$("$bin/fw-probe" tcp "$b4" 443 2000 | cut -d' ' -f1)"
kv tcp6_blocked "$("$bin/fw-probe" tcp "$b6" 443 2000 | cut -d' ' -f1)"
kv udp_blocked "$("$bin/fw-probe" udp "$b4" "$udpport" 2000 | cut -d' ' -f1)"
kv icmp_raw "$("$bin/fw-probe" icmp "$b4" 2000 | cut -d' ' -f1)"
kv metadata "$("$bin/fw-probe" tcp "$meta" 80 2000 | cut -d' ' -f1)"
kv dns_allowed "$(getent ahostsv4 api.anthropic.com | awk 'NR == 1 {print $1}')"
kv dns_blocked "$(getent hosts blocked.example.test >/dev/null 2>&1 && echo resolved || echo refused)"
kv dns_direct "$("$bin/fw-probe" udp "$CS_PROBE_SIM_DNS" 53 2000 | cut -d' ' -f1)"
api=$(printf 'GET /cs-probe HTTP/1.1\r\nHost: api.anthropic.com\r\nConnection: close\r\n\r\n' |
	timeout 15 openssl s_client -quiet -verify_return_error -CAfile "${NODE_EXTRA_CA_CERTS:-/nonexistent}" \
		-servername api.anthropic.com -connect api.anthropic.com:443 2>/dev/null | head -1 | tr -d '\r')
kv api_https "$api"
kv node_extra_ca "${NODE_EXTRA_CA_CERTS:-unset}"

# The image: no sudo, no setuid/setgid file, no engine socket, no SSH keys,
# a read-only root, nothing writable outside home, /tmp and /workspace.
kv sudo "$(command -v sudo doas pkexec 2>/dev/null | tr '\n' ' ')"
kv suid_files "$(find / -xdev -perm /6000 -type f 2>/dev/null | wc -l)"
kv writable "$(find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o -writable ! -type l -print 2>/dev/null |
	grep -v -E '^/(tmp|workspace|home/devuser)(/|$)' | tr '\n' ' ')"
kv run_init_writable "$(test -w /run/sandbox-init && echo yes || echo no)"
s=""
for p in /var/run/docker.sock /run/docker.sock /run/podman/podman.sock /var/run/podman/podman.sock \
	/run/containerd/containerd.sock /run/user/*/podman/podman.sock /run/user/*/docker.sock; do
	[ -e "$p" ] && s="$s $p"
done
kv engine_socket "${s:-none}"
kv ssh_keys "$(find "$HOME/.ssh" /root/.ssh /etc/ssh -name 'id_*' 2>/dev/null | wc -l)"
kv root_mount "$(awk '$5 == "/" {print $6}' /proc/self/mountinfo | tr ',' '\n' | grep -x -E 'ro|rw' | tail -1)"
kv root_write "$(rc touch /etc/probe-file)"

# Limits: cgroup v2 first, then v1 paths.
pids=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null)
mem=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)
kv pids_max "$pids"
kv memory_max "$mem"

# The agents, as devuser.
kv claude_version "$(timeout 60 claude --version 2>&1 | head -1)"
kv opencode_version "$(timeout 60 opencode --version 2>&1 | head -1)"
exit 0
