#!/bin/bash
# Run by tests/kube/kube-play.sh AS THE AGENT in the pod's agent container
# (sandbox-init's child). Prints KEY=VALUE lines between PROBE-BEGIN and
# PROBE-END, then waits (up to 120 s) for the test to create DONE_FILE so
# that sandbox-init, its firewall and its DNS gate stay up while the test
# checks the sidecar from outside. Never exits early: every probe reports.
#   kube-agent.sh BINDIR ALLOWED_NAME ALLOWED4 SIDECAR4 SIDECAR_PORT SIDECAR_NAME UPSTREAM DONE_FILE \
#       GIT_URL GIT_PORT
bin=$1 allowed=$2 a4=$3 s4=$4 sport=$5 sname=$6 upstream=$7 done_file=$8 git_url=$9 git_port=${10}
kv() { printf '%s=%s\n' "$1" "$2"; }
echo PROBE-BEGIN
kv exec_ns "$(date +%s%N)"
kv k_ppid "$(awk '$1 == "PPid:" {print $2}' /proc/$$/status)"
# The image's own checks (identity, capabilities, settings lock, firewall
# default deny both families, UDP, raw, metadata, image hygiene, limits).
CS_PROBE_SIM_DNS=$upstream bash "$bin/sandbox-probe.sh" "$bin" "$s4" 2001:db8::20 5353 169.254.169.254

# The agent's allowlist works through the gate; what the sidecar may
# reach, the agent may not (by address, or by asking the gate for the
# sidecar's name, or DNS straight to the upstream as the sidecar does).
kv k_allowed_dns "$(getent ahostsv4 "$allowed" | awk 'NR == 1 {print $1}')"
kv k_allowed_tcp "$("$bin/fw-probe" tcp "$a4" 443 2000 | cut -d' ' -f1)"
kv k_sidecar_dest_tcp "$("$bin/fw-probe" tcp "$s4" "$sport" 2000 | cut -d' ' -f1)"
kv k_sidecar_name_dns "$(getent hosts "$sname" >/dev/null 2>&1 && echo resolved || echo refused)"
kv k_upstream_udp53 "$("$bin/fw-probe" udp "$upstream" 53 2000 | cut -d' ' -f1)"
kv k_upstream_tcp53 "$("$bin/fw-probe" tcp "$upstream" 53 2000 | cut -d' ' -f1)"

# The sidecar's files: only the socket and the token are visible.
d=/run/code-sandbox/execd
kv k_sock_dir "$(stat -c %a:%g "$d" 2>&1)"
kv k_sock "$(stat -c %F:%a "$d/execd.sock" 2>&1)"
kv k_token_read "$(head -c 8 "$d/token" >/dev/null 2>&1 && echo ok || echo denied)"
kv k_sock_dir_write "$(touch "$d/x" 2>/dev/null && echo ok || echo denied)"
kv k_credentials "$(find /home/execd -mindepth 1 2>/dev/null | wc -l)"
kv k_audit_visible "$(test -e /var/log/code-sandbox && echo yes || echo no)"
kv k_secret_env "$(env | grep -c -i -E 'token|secret|password' || true)"

# A request through the sidecar: the policy denies it, the sidecar audits it.
git ls-remote https://198.51.100.20/team/project.git >/tmp/git.out 2>&1
kv k_wrapper_status "$?"
kv k_wrapper_msg "$(head -1 /tmp/git.out | tr '=' ':')"

# git with a remote through the sidecar's relay (the image's system config
# turns the URL into sandbox::URL): the credential is the sidecar's, the
# policy allows this repository, new branches, not the default branch.
msg() { grep -v '^ *$' "$1" | tail -1 | tr '=' ':'; }
r=/workspace/clone
git clone -q --single-branch -b main "$git_url" "$r" >/tmp/git-clone.out 2>&1
kv k_git_clone "$?"
kv k_git_clone_msg "$(msg /tmp/git-clone.out)"
kv k_git_readme "$(cat "$r/README" 2>/dev/null)"
kv k_git_origin "$(git -C "$r" config remote.origin.url 2>/dev/null)"
git -C "$r" fetch -q origin other:refs/remotes/origin/other >/tmp/git-fetch.out 2>&1
kv k_git_fetch "$?"
kv k_git_fetched "$(git -C "$r" show origin/other:OTHER 2>/dev/null)"
git -C "$r" switch -q -c agent-branch 2>/dev/null
printf 'from the pod\n' >"$r/AGENT"
git -C "$r" add AGENT
git -C "$r" -c user.name=agent -c user.email=agent@sandbox.test commit -q -m "from the pod"
git -C "$r" push -q origin agent-branch >/tmp/git-push.out 2>&1
kv k_git_push "$?"
kv k_git_push_msg "$(msg /tmp/git-push.out)"
git -C "$r" push origin agent-branch:main >/tmp/git-push-main.out 2>&1
kv k_git_push_main "$?"
kv k_git_push_main_msg "$(grep -c 'the default branch changes through review' /tmp/git-push-main.out)"
git -C "$r" tag agent-tag
git -C "$r" push origin agent-tag >/tmp/git-push-tag.out 2>&1
kv k_git_push_tag "$?"
kv k_git_push_tag_msg "$(grep -c 'default deny' /tmp/git-push-tag.out)"
# The same remote without the relay: the firewall stops it before any
# credential question (the test's control shows it answers otherwise).
git_host=$(printf '%s' "$git_url" | sed 's,^https://,,; s,[:/].*,,')
kv k_git_direct_tcp "$("$bin/fw-probe" tcp "$git_host" "$git_port" 2000 | cut -d' ' -f1)"
GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 timeout 20 git -c http.sslVerify=false ls-remote "$git_url" >/tmp/git-direct.out 2>&1
kv k_git_direct "$?"
kv k_git_direct_msg "$(msg /tmp/git-direct.out)"
env >/tmp/agent-env.txt
echo PROBE-END
for _ in $(seq 1200); do
	[ -e "$done_file" ] && break
	sleep 0.1
done
exit 0
