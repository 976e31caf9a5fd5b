#!/usr/bin/env bash
# bin/code-sandbox without a real engine: fake `podman` and `docker` on PATH
# record every call. Checks the engine choice, the hardening of the run
# command (--dry-run, one argument per line), the knobs the tests and users
# rely on, the refusals (before anything is created), per-project settings
# and that the agent's exit status is the launcher's.
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
CS=$SOURCE_DIR/bin/code-sandbox

T=$(mktemp -d /tmp/cs-launcher-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/home" "$T/proj" "$T/cfg" "$T/state"
# A fake engine: logs "NAME ARG..." per call; `info` succeeds unless
# FAKE_<NAME>_INFO=fail; `run` exits FAKE_EXIT; `ps` prints FAKE_PS.
for e in podman docker; do
	cat >"$T/bin/$e" <<FAKE
#!/bin/sh
printf '%s\n' "$e \$*" >>"$T/calls"
case \$1 in
info) [ "\${FAKE_$(echo $e | tr '[:lower:]' '[:upper:]')_INFO:-ok}" = ok ] || exit 1
	case "\$*" in
	*CgroupsVersion*) printf '%s\n' "\${FAKE_CGROUPS-v2 cpu memory pids }" ;;
	*MemoryLimit*) printf '%s\n' "\${FAKE_DOCKER_LIMITS-true true}" ;;
	*) [ -z "\${FAKE_SECOPTS:-}" ] || printf '%s\n' "\$FAKE_SECOPTS" ;;
	esac ;;
--version) [ -z "\${FAKE_VERSION:-}" ] || printf '%s\n' "\$FAKE_VERSION" ;;
image) [ -z "\${FAKE_LABEL:-}" ] || printf '%s\n' "\$FAKE_LABEL" ;;
build) printf '%s\n' "$e-env DOCKER_BUILDKIT=\${DOCKER_BUILDKIT:-}" >>"$T/calls" ;;
run) [ -z "\${FAKE_PLANT:-}" ] || cp -p "\$FAKE_PLANT_FROM"/* "\$FAKE_PLANT/"
	exit "\${FAKE_EXIT:-0}" ;;
ps) [ -z "\${FAKE_PS:-}" ] || printf '%s\n' "\$FAKE_PS" ;;
container) [ -z "\${FAKE_ENV:-}" ] || printf '%s\n' "\$FAKE_ENV" ;;
*) exit 0 ;;
esac
FAKE
	chmod +x "$T/bin/$e"
done

# Runs the launcher in DIR with a clean, controlled environment.
cs() { # cs DIR [VAR=VAL...] -- ARGS...
	local dir=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$dir" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
		XDG_STATE_HOME="$T/state" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 \
		"${envs[@]}" "$CS" "$@")
}
expected_uid=$(id -u)
[ "$expected_uid" != 0 ] || expected_uid=4242

# Engine choice.
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
check "CONTAINER_ENGINE=podman is used, by its absolute path" "$(head -n 1 <<<"$out")" = "$T/bin/podman"
out=$(cs "$T/proj" -- --dry-run -- true)
check "docker when docker info succeeds" "$(head -n 1 <<<"$out")" = "$T/bin/docker"
out=$(cs "$T/proj" FAKE_DOCKER_INFO=fail -- --dry-run -- true)
check "podman when docker info fails" "$(head -n 1 <<<"$out")" = "$T/bin/podman"
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=nosuchengine -- --dry-run -- true 2>&1) || st=$?
check "an engine not on PATH is an error ($st)" "$st" -ne 0

# The run command, as --dry-run prints it.
: >"$T/calls"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_IMAGE=localhost/code-sandbox:test \
	CODE_SANDBOX_NETWORK=ns:/run/netns/cs-x CODE_SANDBOX_NAME=cs-test-run ANTHROPIC_API_KEY=sk-secret-value \
	CODE_SANDBOX_EXTRA_CA="$SOURCE_DIR/README.md" EXTRA_ALLOWED_DOMAINS=example.org CODE_SANDBOX_LOG=debug \
	-- --dry-run --profile permissive --allow example.net -- claude -p 'say hi')
has() { grep -qxF -- "$1" <<<"$out"; }
count() { grep -c -- "$1" <<<"$out"; }
check "dry run starts no container" "$(grep -c ' run' "$T/calls")" -eq 0
ok "run --rm" has --rm
ok "read-only root" has --read-only
ok "cap-drop ALL" has --cap-drop=ALL
for c in NET_ADMIN NET_BIND_SERVICE SETUID SETGID SETPCAP CHOWN DAC_OVERRIDE KILL; do
	ok "cap-add $c on its own" has "--cap-add=$c"
done
check "exactly 8 --cap-add" "$(count '^--cap-add=')" -eq 8
ok "no-new-privileges" has --security-opt=no-new-privileges
ok "pids limit" grep -q '^--pids-limit=[0-9]' <<<"$out"
ok "memory limit" grep -q '^--memory=[0-9]' <<<"$out"
ok "cpu limit" grep -q '^--cpus=[0-9]' <<<"$out"
check "never privileged, host namespaces or devices" \
	"$(grep -cE -- '^--(privileged|device|pid=host|ipc=host|uts=host|network=host|net=host|userns=host)' <<<"$out")" -eq 0
check "never the engine socket or ~/.ssh, ~/.aws, ~/.kube, ~/.config/gh" \
	"$(grep -cE -- 'docker\.sock|podman\.sock|\.ssh|\.aws|\.kube|\.config/gh' <<<"$out")" -eq 0
ok "the project at /workspace" has "--volume=$(cd "$T/proj" && pwd -P):/workspace"
ok "a named home volume per project" grep -q '^--volume=code-sandbox-home-proj-[0-9a-f]*:/home/devuser$' <<<"$out"
ok "sandbox-init's tmpfs" grep -q '^--tmpfs=/run/sandbox-init:.*mode=0755' <<<"$out"
# The project id (volume, label, state) is sha256 of the physical path; the
# launcher caches it under the state directory. Cached, computed and a
# tampered cache entry all give the one id.
pp=$(cd "$T/proj" && pwd -P)
want=proj-$(printf '%s' "$pp" | sha256sum | cut -c1-12)
ok "the home volume is named by the id of the project's path ($want)" has "--volume=code-sandbox-home-$want:/home/devuser"
idf=$T/state/code-sandbox/ids/$(printf '%s' "$pp" | tr / %)
ok "  the id is cached in the state directory" grep -qx "$want" "$idf"
echo 'evil;--privileged' >"$idf"
o2=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
ok "  a cache entry that is no id is ignored (the id computed again)" grep -qxF -- "--volume=code-sandbox-home-$want:/home/devuser" <<<"$o2"
echo 'other-0123456789ab' >"$idf"
o2=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
check "  (a well-formed entry is taken as it is: the state directory is the user's own)" \
	"$(grep -c -- '--volume=code-sandbox-home-other-0123456789ab:' <<<"$o2")" -eq 1
rm -f "$idf"
ok "a gate-only resolv.conf, read-only" grep -q '^--volume=.*resolv.conf:/etc/resolv.conf:ro$' <<<"$out"
ok "HOST_UID" has "--env=HOST_UID=$expected_uid"
ok "CODE_SANDBOX_DNS passed to the gate" has --env=CODE_SANDBOX_DNS=198.51.100.53
ok "CODE_SANDBOX_NETWORK" has --network=ns:/run/netns/cs-x
ok "CODE_SANDBOX_NAME" has --name=cs-test-run
ok "CODE_SANDBOX_EXTRA_CA mounted read-only" has "--volume=$SOURCE_DIR/README.md:/etc/code-sandbox/extra-ca.pem:ro"
ok "  and given as NODE_EXTRA_CA_CERTS" has --env=NODE_EXTRA_CA_CERTS=/etc/code-sandbox/extra-ca.pem
ok "ANTHROPIC_API_KEY passed by name" has --env=ANTHROPIC_API_KEY
check "  its value never on the command line" "$(count sk-secret-value)" -eq 0
ok "--profile" has --env=CODE_SANDBOX_PROFILE=permissive
ok "CODE_SANDBOX_LOG for sandbox-init" has --env=CODE_SANDBOX_LOG=debug
ok "EXTRA_ALLOWED_DOMAINS plus --allow" has --env=EXTRA_ALLOWED_DOMAINS=example.org,example.net
ok "git identity fallback" has "--env=GIT_AUTHOR_NAME=Claude Code (sandbox)"
ok "git identity fallback e-mail" has --env=GIT_COMMITTER_EMAIL=claude-sandbox@localhost
check "image, then the command, last" "$(tail -n 4 <<<"$out" | tr '\n' '|')" = "localhost/code-sandbox:test|claude|-p|say hi|"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run)
check "no command: the image's (claude)" "$(tail -n 1 <<<"$out")" = localhost/code-sandbox:latest
out=$(cs "$T/proj" CONTAINER_ENGINE=docker CODE_SANDBOX_DNS= CODE_SANDBOX_NETWORK=mynet -- --dry-run -- true)
ok "Docker user-defined network: the embedded resolver upstream" has --env=CODE_SANDBOX_DNS=127.0.0.11

# Never the host's network namespace: sandbox-init's firewall (policy drop)
# would be installed in it, and the agent would be on the host's network.
for n in host ns:/proc/self/ns/net ns:/proc/1/ns/net; do
	[ "$n" != ns:/proc/1/ns/net ] || [ -r /proc/1/ns/net ] || continue
	st=0
	out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_NETWORK=$n -- --dry-run -- true 2>/dev/null) || st=$?
	check "CODE_SANDBOX_NETWORK=$n (the host's namespace): refused ($st)" "$st" -ne 0
done

# Limits stay limits: 0 or -1 would mean "unlimited" to the engine.
for kv in CODE_SANDBOX_PIDS=0 CODE_SANDBOX_PIDS=-1 CODE_SANDBOX_PIDS=many CODE_SANDBOX_MEMORY=0 \
	CODE_SANDBOX_MEMORY=-1 CODE_SANDBOX_CPUS=0 CODE_SANDBOX_CPUS=-2; do
	st=0
	cs "$T/proj" CONTAINER_ENGINE=podman "$kv" -- --dry-run -- true >/dev/null 2>&1 || st=$?
	check "$kv: refused ($st)" "$st" -ne 0
done
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_PIDS=256 CODE_SANDBOX_MEMORY=512m CODE_SANDBOX_CPUS=0.5 -- --dry-run -- true)
ok "limits can be set lower" grep -qx -- '--pids-limit=256' <<<"$out"
ok "  memory" grep -qx -- '--memory=512m' <<<"$out"
ok "  cpus" grep -qx -- '--cpus=0.5' <<<"$out"

# The daemon: only when configured; then only its socket and token, read-only.
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
ok "no daemon configured: the container's own tools first on PATH" has --env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
check "  and nothing of the daemon mounted" "$(count /run/code-sandbox/)" -eq 0
mkdir -p "$T/cfg/code-sandbox"
printf 'socket = %s/run/execd.sock\n' "$T" >"$T/cfg/code-sandbox/execd.conf"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
ok "daemon configured: its socket, read-only" has "--volume=$T/run/execd.sock:/run/code-sandbox/execd.sock:ro"
ok "  its token, read-only" has "--volume=$T/run/token:/run/code-sandbox/token:ro"
check "  nothing else of the socket directory" "$(grep -c -- "^--volume=$T/run" <<<"$out")" -eq 2
check "  the wrappers stay on the image's PATH" "$(count '^--env=PATH=')" -eq 0
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run --no-daemon -- true)
check "--no-daemon: no daemon mounts" "$(count /run/code-sandbox/)" -eq 0
rm -f "$T/cfg/code-sandbox/execd.conf"

# The daemon, started by a run in a (hostile) project, never keeps the
# project as its working directory: its exec backend's program and every
# tool it starts would inherit it (python -m, git, ... read from there).
mkdir -p "$T/fx"
cat >"$T/fx/sandbox-execd" <<FAKE
#!/bin/bash
case " \$* " in *" --check "*) exit 0 ;; esac
pwd -P >"$T/execd-cwd"
while [ \$# -gt 0 ]; do [ "\$1" = --pidfile ] && echo \$\$ >"\$2"; shift; done
for _ in \$(seq 100); do read -r -t 0.1 <> <(:) || true; done
FAKE
chmod +x "$T/fx/sandbox-execd"
printf 'socket = %s/run/execd.sock\n' "$T" >"$T/cfg/code-sandbox/execd.conf"
mkdir -p "$T/xdg"
cs "$T/proj" CONTAINER_ENGINE=podman SANDBOX_EXECD="$T/fx/sandbox-execd" XDG_RUNTIME_DIR="$T/xdg" -- -- true >/dev/null 2>&1
check "the daemon a run starts works in / ($(cat "$T/execd-cwd" 2>/dev/null)), not in the project" \
	"$(cat "$T/execd-cwd" 2>/dev/null)" = /
[ ! -s "$T/xdg/code-sandbox-execd.pid" ] || kill "$(cat "$T/xdg/code-sandbox-execd.pid")" 2>/dev/null || true
rm -f "$T/cfg/code-sandbox/execd.conf"

# Per-project settings live under the config directory, never in the workspace.
pid=$(basename "$(grep '^--label=' <<<"$out" | sed 's/.*=//')")
mkdir -p "$T/cfg/code-sandbox/projects" "$T/extra"
printf '# test\nprofile = permissive\nallow = example.com\nmount = %s:/mnt/extra:ro\nmemory = 1g\n' "$T/extra" \
	>"$T/cfg/code-sandbox/projects/$pid.conf"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
ok "project settings: profile" has --env=CODE_SANDBOX_PROFILE=permissive
ok "project settings: allow" has --env=EXTRA_ALLOWED_DOMAINS=example.com
ok "project settings: a read-only extra folder" has "--volume=$T/extra:/mnt/extra:ro"
ok "project settings: memory" has --memory=1g
printf 'bogus = 1\n' >>"$T/cfg/code-sandbox/projects/$pid.conf"
st=0
err=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true 2>&1) || st=$?
check "unknown project setting: refused ($st)" "$st" -ne 0
ok "  naming file:line" grep -q "$pid.conf:6: unknown key 'bogus'" <<<"$err"
rm -f "$T/cfg/code-sandbox/projects/$pid.conf"

# Extra folders that must never be mounted.
mkdir -p "$T/home/.ssh" "$T/home/.aws"
for m in "$T/home/.ssh:/mnt/x" "$T/home:/mnt/x" "$T/home/.aws:/mnt/x:ro" "/etc:/mnt/x" "$T/extra:/etc/x" "$T/extra:/mnt/x:rwx"; do
	st=0
	cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run --mount "$m" -- true >/dev/null 2>&1 || st=$?
	check "--mount $m refused ($st)" "$st" -ne 0
done

# Refusals, before anything is created.
refused() { # refused LABEL DIR
	local st=0 err
	rm -rf "$T/state" && mkdir "$T/state"
	: >"$T/calls"
	err=$(cs "$2" CONTAINER_ENGINE=podman -- -- true 2>&1) || st=$?
	check "$1: refused ($st)" "$st" -ne 0
	check "$1: one line" "$(wc -l <<<"$err")" -eq 1
	check "$1: nothing created, no engine called" "$(find "$T/state" -mindepth 1 | wc -l)$(wc -c <"$T/calls")" = 00
}
refused "\$HOME" "$T/home"
refused "/" /
refused "/etc" /etc
refused "a parent of \$HOME" "$T"
for s in .ssh .aws .kube .gnupg; do
	mkdir -p "$T/p$s/$s"
	refused "a directory holding $s" "$T/p$s"
done

# Directories that hold the sockets of host services (tmux, ssh-agent, X11
# in /tmp; D-Bus, systemd, podman, gpg-agent in /run/user/UID): a socket
# in the workspace is reachable from the container as the agent's UID
# (tmux send-keys, systemd-run --user: code on the host).
for d in /tmp /var/tmp; do # (a home elsewhere: $T/home is under /tmp)
	st=0
	: >"$T/calls"
	err=$(cs "$d" HOME=/nonexistent-cs-home CONTAINER_ENGINE=podman -- -- true 2>&1) || st=$?
	check "$d: refused ($st)" "$st" -ne 0
	check "$d: no engine called" "$(wc -c <"$T/calls")" -eq 0
done
mkdir -p "$T/rt/user/run"
st=0
err=$(cd "$T/rt" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" \
	XDG_RUNTIME_DIR="$T/rt/user/run" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 CONTAINER_ENGINE=podman \
	"$CS" --dry-run -- true 2>&1) || st=$?
check "a directory holding \$XDG_RUNTIME_DIR: refused ($st)" "$st" -ne 0
# Inside a credential store, or holding the launcher's own settings (the
# agent would choose the next run's mounts, image and profile).
for s in .ssh .aws .kube .gnupg .config/gh .docker; do
	mkdir -p "$T/home/$s/proj"
	refused "inside ~/$s" "$T/home/$s/proj"
done
mkdir -p "$T/cfgproj/cfg"
st=0
err=$(cd "$T/cfgproj" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfgproj/cfg" \
	XDG_STATE_HOME="$T/state" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 CONTAINER_ENGINE=podman \
	"$CS" --dry-run -- true 2>&1) || st=$?
check "a directory holding the launcher's settings: refused ($st)" "$st" -ne 0
# Inside them: the agent would write other projects' settings (mounts).
for sub in cfg/code-sandbox/projects st/code-sandbox/projects/x; do
	mkdir -p "$T/inside/$sub"
	st=0
	err=$(cd "$T/inside/$sub" && env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/inside/cfg" \
		XDG_STATE_HOME="$T/inside/st" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 CONTAINER_ENGINE=podman \
		"$CS" --dry-run -- true 2>&1) || st=$?
	check "a directory inside the launcher's ${sub%%/*} directory: refused ($st)" "$st" -ne 0
	ok "  with the reason" grep -q 'it is inside' <<<"$err"
done
mkdir -p "$T/home/.config/code-sandbox/projects" "$T/mnt-cfg"
for m in "$T/home/.config:/mnt/x" "$T/home/.config/code-sandbox:/mnt/x:ro" "$T/home/.config/code-sandbox/projects:/mnt/x"; do
	st=0
	cs "$T/proj" CONTAINER_ENGINE=podman XDG_CONFIG_HOME="$T/home/.config" -- --dry-run --mount "$m" -- true >/dev/null 2>&1 || st=$?
	check "--mount $m (the launcher's settings) refused ($st)" "$st" -ne 0
done

# The home through another path (a bind mount of it): the same directory
# (a home without credential stores, which would be refused on their own).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	mkdir -p "$T/homebind" "$T/home2/.config"
	st=0
	# shellcheck disable=SC2016 # $1..$6 expand in the inner shell
	unshare -m bash -c 'mount --bind "$1" "$2" && cd "$2" && env -i PATH="$3" HOME="$1" XDG_CONFIG_HOME="$4" \
		XDG_STATE_HOME="$5" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 CONTAINER_ENGINE=podman \
		"$6" --dry-run -- true' sh "$T/home2" "$T/homebind" "$T/bin:/usr/bin:/bin" "$T/cfg" "$T/state" "$CS" \
		>/dev/null 2>&1 || st=$?
	check "\$HOME through a bind mount of it: refused ($st)" "$st" -ne 0
fi
# A path the engine's command would split: the launcher passes its
# arguments one per line, so a newline in the directory's name added
# arguments of the directory's choosing (--privileged, --volume=/:/host,
# --entrypoint=: root on the host), and a ':' is a field of --volume.
nl_dir="$T/nl/x
--privileged
--entrypoint=
--env=Z="
mkdir -p "$nl_dir" "$T/tnl
" "$T/a:b"
refused "a path holding a newline" "$nl_dir"
refused "a path ending in a newline" "$T/tnl
"
refused "a path holding ':'" "$T/a:b"
# Other odd names stay one argument, unexpanded (spaces, a tab, globs,
# quotes, $(...), backquotes, a backslash, a leading dash, '=' and ',').
odd="$T/odd/we ird	*?[x] '\"\$(touch $T/pwned) \`touch $T/pwned\` \\n -x=a,b"
mkdir -p "$odd"
out=$(cs "$odd" CONTAINER_ENGINE=podman -- --dry-run -- true 2>&1)
ok "an odd project name: one --volume argument, as it is" has "--volume=$odd:/workspace"
: >"$T/calls"
cs "$odd" CONTAINER_ENGINE=podman -- -- true >/dev/null 2>&1
ok "  passed to the engine intact" grep -qF -- "--volume=$odd:/workspace" "$T/calls"
check "  nothing in it was run" ! -e "$T/pwned"
ok "  a volume name of safe characters" grep -q '^--volume=code-sandbox-home-[A-Za-z0-9_.-]*-[0-9a-f]\{12\}:/home/devuser$' <<<"$out"
# Every other value that goes on the command line: one line each.
for kv in "EXTRA_ALLOWED_DOMAINS=example.org
--privileged" "CODE_SANDBOX_PROFILE=strict
--privileged" "TERM=xterm
--privileged" "CODE_SANDBOX_NAME=n
--privileged" "CODE_SANDBOX_DNS=198.51.100.53
--privileged"; do
	st=0
	out=$(cs "$T/proj" CONTAINER_ENGINE=podman "$kv" -- --dry-run -- true 2>/dev/null) || st=$?
	check "${kv%%=*} holding a newline: refused ($st)" "$st" -ne 0
	check "  no argument injected" "$(grep -c -- '^--privileged' <<<"$out")" -eq 0
done

# The agent's exit status is the launcher's.
for want in 0 3 42 143; do
	st=0
	cs "$T/proj" CONTAINER_ENGINE=podman FAKE_EXIT=$want -- -- true >/dev/null 2>&1 || st=$?
	check "exit status $want passes through ($st)" "$st" -eq "$want"
done
ok "the real run called the engine's run" grep -q '^podman run --rm' "$T/calls"
st=0
cs "$T/proj" CONTAINER_ENGINE=podman -- -- claude -p "line one
line two" >/dev/null 2>&1 || st=$?
check "a command argument spanning lines is passed ($st)" "$st" -eq 0
ok "  intact, as one argument" grep -qx 'line two' "$T/calls"

# Subcommands.
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --help)
for s in build shell stop clean logs doctor daemon audit; do
	ok "--help lists $s" grep -q "code-sandbox $s" <<<"$out"
done
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_PS=cs-a -- stop >/dev/null
ok "stop stops this project's container" grep -q '^podman stop cs-a$' "$T/calls"
ok "  found by its project label" grep -q "^podman ps --filter label=io.code-sandbox.project=$pid" "$T/calls"
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_PS=cs-a -- clean >/dev/null
ok "clean removes this project's containers" grep -q '^podman rm -f cs-a$' "$T/calls"
ok "clean removes this project's home volume" grep -q "^podman volume rm code-sandbox-home-$pid$" "$T/calls"
check "clean removes no image" "$(grep -c ' rmi\| image rm' "$T/calls")" -eq 0
# shell: a process the engine's exec starts is outside sandbox-init's tree
# (the engine's seccomp only), and bash -l runs the home's login files,
# which the agent writes: it goes through sandbox-enter, as the agent's
# user, and nothing runs in the container as root.
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_PS=cs-a FAKE_ENV="PATH=/usr/bin
HOST_UID=4242
HOST_GID=4343" -- shell </dev/null >/dev/null 2>&1
check "shell: no exec without --user (root in the container)" "$(grep '^podman exec' "$T/calls" | grep -vc -- '--user')" -eq 0
ok "shell: attaches as the agent's user" grep -q '^podman exec .*--user 4242:4343 ' "$T/calls"
ok "  under the agent's filter (sandbox-enter)" grep -q ' cs-a /usr/bin/sandbox-enter -- bash -l$' "$T/calls"
: >"$T/calls"
st=0
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_PS=cs-a FAKE_ENV="HOST_UID=0
HOST_GID=0" -- shell </dev/null >/dev/null 2>&1 || st=$?
check "shell: a container whose agent would be root: refused ($st)" "$st" -ne 0
check "  nothing executed in it" "$(grep -c '^podman exec' "$T/calls")" -eq 0
# doctor: what is wrong and the command that fixes it.
cat >"$T/bin/podman-noimage" <<FAKE
#!/bin/sh
case \$1 in image) exit 1 ;; --version) echo "podman version 0" ;; *) exit 0 ;; esac
FAKE
chmod +x "$T/bin/podman-noimage"
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=podman-noimage -- doctor) || st=$?
check "doctor: a missing image fails ($st)" "$st" -ne 0
ok "  and names the fix" grep -q 'fix: code-sandbox build' <<<"$out"
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- doctor) || st=$?
check "doctor: all good with a working engine and image ($st)" "$st" -eq 0
ok "  it ran the hardened start" grep -q '^podman run --rm .*--read-only' "$T/calls"
st=0
cs "$T/proj" CONTAINER_ENGINE=podman -- bogus >/dev/null 2>&1 || st=$?
check "an unknown subcommand is a usage error ($st)" "$st" -eq 2
# The host's git identity is read outside the (hostile) workspace: a
# repository's .git must not decide what host git reads or whether it works.
mkdir -p "$T/gitproj"
printf 'gitdir: /nonexistent-cs-gitdir\n' >"$T/gitproj/.git"
printf '[user]\n\tname = Host User\n\temail = host@example.org\n' >"$T/home/.gitconfig"
out=$(cs "$T/gitproj" CONTAINER_ENGINE=podman -- --dry-run -- true 2>&1)
ok "git identity from the host's config despite the workspace's .git" has "--env=GIT_AUTHOR_NAME=Host User"
ok "  and its e-mail" has --env=GIT_COMMITTER_EMAIL=host@example.org
rm -f "$T/home/.gitconfig"

# Rootless engines (bin/code-sandbox, "Rootless engines"): podman maps the
# user's IDs to themselves; rootless Docker cannot, and says so.
rootless_args() { grep -xE -- '--(userns|user|passwd)=.*' <<<"$out" | tr '\n' ' '; }
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 -- --dry-run -- true)
check "rootless podman: keep-id, PID 1 the container's root, no passwd entry ($(rootless_args))" \
	"$(rootless_args)" = "--userns=keep-id --user=0:0 --passwd=false "
ok "  before the workspace mount" grep -qxF -- "--passwd=false" <<<"$(sed -n '/^--volume=.*:\/workspace$/q;p' <<<"$out")"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=0 -- --dry-run -- true)
check "CODE_SANDBOX_ROOTLESS=0: no user namespace arguments" -z "$(rootless_args)"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
if [ "$(id -u)" = 0 ]; then
	check "podman as root: rootful, no user namespace arguments" -z "$(rootless_args)"
else
	check "podman as a user: rootless detected" -n "$(rootless_args)"
fi
st=0
cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=maybe -- --dry-run -- true >/dev/null 2>&1 || st=$?
check "CODE_SANDBOX_ROOTLESS=maybe: refused ($st)" "$st" -ne 0
err=$(cs "$T/proj" CONTAINER_ENGINE=docker FAKE_SECOPTS="name=seccomp,profile=builtin name=rootless name=cgroupns " -- --dry-run -- true 2>&1 >/dev/null)
ok "rootless Docker (docker info SecurityOptions): the warning about the workspace's owner" grep -q 'rootless Docker: files the agent writes' <<<"$err"
out=$(cs "$T/proj" CONTAINER_ENGINE=docker FAKE_SECOPTS="name=seccomp,profile=builtin name=rootless " -- --dry-run -- true 2>/dev/null)
check "  and no podman-only arguments for Docker" -z "$(rootless_args)"
err=$(cs "$T/proj" CONTAINER_ENGINE=docker FAKE_SECOPTS="name=seccomp,profile=builtin name=cgroupns " -- --dry-run -- true 2>&1 >/dev/null)
check "rootful Docker: no warning" -z "$(grep 'rootless' <<<"$err" || true)"
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=docker FAKE_SECOPTS="name=seccomp,profile=builtin name=rootless " -- doctor 2>/dev/null) || st=$?
check "doctor: rootless Docker is a problem with its fix ($st)" "$st:$(grep -c '^FAIL  rootless Docker' <<<"$out"):$(grep -c 'fix: use rootless podman' <<<"$out")" = 1:1:1
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 -- doctor 2>/dev/null) || true
ok "doctor: rootless podman is fine (keep-id)" grep -q '^ok    rootless podman: your UID and GID mapped' <<<"$out"
# podman-docker's `docker` is podman (its info answers with no Docker daemon).
out=$(cs "$T/proj" FAKE_VERSION="podman version 4.3.1" -- --dry-run -- true)
check "engine choice: a docker that is podman-docker's shim counts as podman" "$(head -n 1 <<<"$out")" = "$T/bin/podman"
out=$(cs "$T/proj" FAKE_VERSION="Docker version 28.2.2, build e6534b4" -- --dry-run -- true)
check "engine choice: a real docker client whose daemon answers is docker" "$(head -n 1 <<<"$out")" = "$T/bin/docker"

# F1: /tmp has a size (a tmpfs without one may take half the host's RAM).
out=$(cs "$T/proj" CONTAINER_ENGINE=podman -- --dry-run -- true)
ok "/tmp: a tmpfs of 1g by default" has --tmpfs=/tmp:rw,exec,nosuid,nodev,mode=1777,size=1g
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_TMP_SIZE=256m -- --dry-run -- true)
ok "  CODE_SANDBOX_TMP_SIZE=256m" has --tmpfs=/tmp:rw,exec,nosuid,nodev,mode=1777,size=256m
for v in 0 -1 1g,suid "1g dev" abc 1gg 1.5g; do
	st=0
	cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_TMP_SIZE="$v" -- --dry-run -- true >/dev/null 2>&1 || st=$?
	check "  CODE_SANDBOX_TMP_SIZE='$v': refused ($st)" "$st" -ne 0
done
# F1: a rootless engine whose limits would be ignored (cgroup v1, or v2
# without the memory or pids controller delegated): refused unless the user
# accepts it with CODE_SANDBOX_ALLOW_NO_LIMITS=1.
for cg in "v1 cpuset cpu cpuacct blkio memory devices freezer pids " "v2 cpu " "v2 cpu memory " "v2 cpu pids " "" "v3 x"; do
	: >"$T/calls"
	st=0
	err=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 FAKE_CGROUPS="$cg" -- -- true 2>&1 >/dev/null) || st=$?
	check "rootless podman, cgroups '$cg': the start refused ($st), no container" "$st:$(grep -c ' run ' "$T/calls")" = 1:0
	ok "  saying why and the opt-in" grep -q 'refusing to start: .*CODE_SANDBOX_ALLOW_NO_LIMITS=1' <<<"$err"
	st=0
	err=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 FAKE_CGROUPS="$cg" CODE_SANDBOX_ALLOW_NO_LIMITS=1 -- -- true 2>&1 >/dev/null) || st=$?
	check "  with CODE_SANDBOX_ALLOW_NO_LIMITS=1: it runs ($st), with a warning" \
		"$st:$(grep -c 'starting without memory and process limits' <<<"$err"):$(grep -c '^podman run ' "$T/calls")" = 0:1:1
done
st=0
cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 FAKE_CGROUPS="v1 memory pids " -- --dry-run -- true >/dev/null 2>&1 || st=$?
check "  the dry run too ($st)" "$st" -eq 1
st=0
cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 -- -- true >/dev/null 2>&1 || st=$?
check "rootless podman on cgroup v2 with memory and pids delegated: runs ($st)" "$st" -eq 0
st=0
cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=0 FAKE_CGROUPS="v1 memory pids " -- -- true >/dev/null 2>&1 || st=$?
check "rootful podman on cgroup v1: runs ($st)" "$st" -eq 0
st=0
cs "$T/proj" CONTAINER_ENGINE=docker FAKE_SECOPTS="name=rootless " FAKE_DOCKER_LIMITS="false true" -- --dry-run -- true >/dev/null 2>&1 || st=$?
check "rootless Docker without memory limit support: refused ($st)" "$st" -eq 1
st=0
cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ALLOW_NO_LIMITS=yes -- --dry-run -- true >/dev/null 2>&1 || st=$?
check "CODE_SANDBOX_ALLOW_NO_LIMITS=yes: refused ($st)" "$st" -eq 1
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 FAKE_CGROUPS="v1 memory pids " -- doctor 2>&1) || st=$?
check "doctor: rootless without limits is a problem ($st) with the fix" \
	"$st:$(grep -c '^FAIL  rootless podman on cgroup v1 ignores' <<<"$out"):$(grep -c 'fix: .*CODE_SANDBOX_ALLOW_NO_LIMITS=1' <<<"$out")" = 1:1:1
ok "  and its hardened start still checks the hardening" grep -q '^ok    hardened start' <<<"$out"
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=1 -- doctor 2>&1) || true
ok "doctor: limits that apply are said" grep -q '^ok    memory, pids and cpu limits apply' <<<"$out"

# F3: the kind is the chosen program's: podman-docker's `docker` shim named
# by CONTAINER_ENGINE (a name or a path) is podman, and gets keep-id.
for e in docker "$T/bin/docker"; do
	out=$(cs "$T/proj" CONTAINER_ENGINE="$e" FAKE_VERSION="podman version 4.3.1" CODE_SANDBOX_ROOTLESS=1 -- --dry-run -- true 2>/dev/null)
	check "CONTAINER_ENGINE=${e//$T/\$T} that is podman-docker's shim, rootless: podman's keep-id ($(rootless_args))" \
		"$(rootless_args)" = "--userns=keep-id --user=0:0 --passwd=false "
done
out=$(cs "$T/proj" CONTAINER_ENGINE="$T/bin/docker" FAKE_VERSION="Docker version 28.2.2, build e6534b4" CODE_SANDBOX_ROOTLESS=1 -- --dry-run -- true 2>/dev/null)
check "CONTAINER_ENGINE=\$T/bin/docker that is Docker, rootless: no podman-only arguments" -z "$(rootless_args)"
# F4: doctor names a bad CODE_SANDBOX_ROOTLESS instead of exiting silently.
st=0
out=$(cs "$T/proj" CONTAINER_ENGINE=podman CODE_SANDBOX_ROOTLESS=maybe -- doctor 2>&1) || st=$?
check "doctor with CODE_SANDBOX_ROOTLESS=maybe: fails ($st) with the reason and the fix" \
	"$st:$(grep -c "^FAIL  CODE_SANDBOX_ROOTLESS='maybe'" <<<"$out"):$(grep -c 'fix: unset it, or set it to 0, 1 or auto' <<<"$out")" = 1:1:1
ok "  and goes on with the other checks" grep -q '^ok    image ' <<<"$out"

# code-sandbox build: each engine's own flags.
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman -- build >/dev/null 2>&1
b=$(grep '^podman build ' "$T/calls" || true)
check "podman build: --pull=never, the host's network, no opencode" \
	"$(grep -c -- '--pull=never .*--network=host' <<<"$b"):$(grep -c 'WITH_OPENCODE' <<<"$b")" = 1:0
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman -- build --with-opencode >/dev/null 2>&1
check "build --with-opencode: --build-arg WITH_OPENCODE=1" "$(grep -c '^podman build .*--build-arg WITH_OPENCODE=1' "$T/calls")" = 1
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=podman WITH_OPENCODE=1 OPENCODE_VERSION=1.2.3 -- build >/dev/null 2>&1
check "WITH_OPENCODE=1 and OPENCODE_VERSION: both build args" \
	"$(grep -c '^podman build .*--build-arg WITH_OPENCODE=1 .*--build-arg OPENCODE_VERSION=1.2.3' "$T/calls")" = 1
: >"$T/calls"
cs "$T/proj" CONTAINER_ENGINE=docker -- build >/dev/null 2>&1
b=$(grep '^docker build ' "$T/calls" || true)
check "docker build: --pull=false (Docker's --pull is a boolean), not podman's --pull=never" \
	"$(grep -c -- '--pull=false' <<<"$b"):$(grep -c -- '--pull=never' <<<"$b")" = 1:0
check "docker build: its own network (no --network=host), BuildKit selected" \
	"$(grep -c -- '--network' <<<"$b"):$(grep -cx 'docker-env DOCKER_BUILDKIT=1' "$T/calls")" = 0:1

# The npm registry for the build is the user's, not the workspace's: npm
# reads .npmrc in its working directory, which the agent writes.
mkdir -p "$T/npmbin"
cat >"$T/npmbin/npm" <<FAKE
#!/bin/sh
[ -f .npmrc ] && echo "registry-from-cwd" || echo "https://registry.invalid/"
FAKE
chmod +x "$T/npmbin/npm"
printf 'registry=https://agent.invalid/\n' >"$T/proj/.npmrc"
(cd "$T/proj" && env -i PATH="$T/bin:$T/npmbin:/usr/bin:/bin" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
	XDG_STATE_HOME="$T/state" CONTAINER_ENGINE=podman "$CS" build >/dev/null 2>&1)
check "build: npm's registry read outside the workspace ($(cat "$T/state/code-sandbox/build/npmrc" 2>/dev/null))" \
	"$(cat "$T/state/code-sandbox/build/npmrc" 2>/dev/null)" = "registry=https://registry.invalid/"
rm -f "$T/proj/.npmrc"

# opencode is opt-in (Dockerfile): on an image without it, exit 127 with the fix, no container.
: >"$T/calls"
st=0
err=$(cs "$T/proj" CONTAINER_ENGINE=podman FAKE_LABEL=0 -- -- opencode --version 2>&1) || st=$?
check "code-sandbox -- opencode on an image without it: exit 127 ($st)" "$st" -eq 127
ok "  and the way to get it" grep -qF 'build --with-opencode' <<<"$err"
check "  no container started" "$(grep -c '^podman run' "$T/calls")" -eq 0
st=0
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_LABEL=1 -- -- opencode --version >/dev/null 2>&1 || st=$?
check "code-sandbox -- opencode on the opencode image: runs ($st)" "$st" -eq 0
ok "  in a container" grep -q '^podman run .*opencode --version$' "$T/calls"
st=0
cs "$T/proj" CONTAINER_ENGINE=podman FAKE_LABEL=0 -- -- claude --version >/dev/null 2>&1 || st=$?
check "code-sandbox -- claude on the default image: runs ($st)" "$st" -eq 0
# F2: PATH is rebuilt before the launcher runs anything (SECURITY.md, "The
# launcher's own commands"). It runs in the workspace, which the agent
# writes: a `docker`, `podman`, `git` or `sed` planted there must never run
# on the host through an empty, relative or in-workspace PATH entry, for a
# dry run, doctor, a real run (code-sandbox-pivots too), kube. $T/tools has
# the system's commands without any engine, so the planted one is the only
# one some shapes could find.
mkdir -p "$T/tools" "$T/pws/bin" "$T/other"
for f in /usr/bin/* /bin/*; do
	case ${f##*/} in docker | podman | git) continue ;; *) ;; esac
	[ -e "$T/tools/${f##*/}" ] || ln -s "$f" "$T/tools/${f##*/}"
done
PWS=$(cd "$T/pws" && pwd -P)
for n in docker podman git sed tr grep sha256sum realpath stat find awk id; do
	for d in "$PWS" "$PWS/bin"; do
		printf '#!/bin/sh\necho "PWNED %s $*" >>"%s/pwned"\nexit 1\n' "$d/$n" "$T" >"$d/$n"
		chmod 755 "$d/$n"
	done
done
ln -s "$PWS/bin" "$T/other/via-link"
cs_path() { # cs_path DIR PATH [VAR=VAL...] -- ARGS...
	local dir=$1 path=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$dir" && env -i PATH="$path" HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" \
		XDG_STATE_HOME="$T/state" HOST_UID=4242 HOST_GID=4343 CODE_SANDBOX_DNS=198.51.100.53 \
		"${envs[@]}" "$CS" "$@")
}
rm -f "$T/pwned"
# No engine but the planted one: the probe of `docker` (info, --version) is
# where it would run.
for shape in "$T/tools:" ":$T/tools" "$T/tools::/nonexistent" ".:$T/tools" "$T/tools:." "bin:$T/tools" \
	"$PWS/bin:$T/tools" "$PWS:$T/tools" "$T/other/via-link:$T/tools"; do
	rm -f "$T/pwned"
	st=0
	err=$(cs_path "$PWS" "$shape" -- --dry-run -- true 2>&1 >/dev/null) || st=$?
	check "PATH '${shape//$T/\$T}', no engine but the workspace's: refused ($st), nothing of the workspace ran" \
		"$st:$(cat "$T/pwned" 2>/dev/null)" = 1:
	ok "  the reason: no container engine" grep -q 'no container engine' <<<"$err"
	st=0
	cs_path "$PWS" "$shape" -- doctor >/dev/null 2>&1 || st=$?
	check "  doctor with it: fails ($st), nothing of the workspace ran" "$st:$(cat "$T/pwned" 2>/dev/null)" = 1:
done
# The planted engine ahead of the real one, and a real run: the engine is
# the real one, by its absolute path, for the launcher and the pivots check.
for shape in ".:$T/bin:$T/tools" ":$T/bin:$T/tools" "bin:$T/bin:$T/tools" "$PWS/bin:$T/bin:$T/tools" \
	"$PWS:$T/bin:$T/tools" "$T/other/via-link:$T/bin:$T/tools"; do
	rm -f "$T/pwned"
	for e in podman docker; do
		out=$(cs_path "$PWS" "$shape" CONTAINER_ENGINE=$e FAKE_DOCKER_INFO=ok -- --dry-run -- true 2>/dev/null)
		check "PATH '${shape//$T/\$T}', CONTAINER_ENGINE=$e: the real $e, absolute ($(head -n 1 <<<"$out"))" \
			"$(head -n 1 <<<"$out")" = "$T/bin/$e"
	done
	: >"$T/calls"
	st=0
	cs_path "$PWS" "$shape" -- -- true >/dev/null 2>&1 || st=$?
	check "  a real run with it: the real docker ran it ($st)" "$st:$(grep -c '^docker run ' "$T/calls")" = 0:1
	cs_path "$PWS" "$shape" -- doctor >/dev/null 2>&1 || true
	cs_path "$PWS" "$shape" -- kube >/dev/null 2>&1 || true
	cs_path "$PWS" "$shape" -- review >/dev/null 2>&1 || true
	check "  nothing of the workspace ran (dry run, run, doctor, kube, review): '$(head -c 200 "$T/pwned" 2>/dev/null)'" \
		! -e "$T/pwned"
done
# code-sandbox-pivots on its own: the workspace it is given is the agent's,
# wherever it is called from.
st=0
(cd "$T/other" && env -i PATH="$PWS/bin:$T/tools" "$SOURCE_DIR/bin/code-sandbox-pivots" mounts "$PWS" >/dev/null 2>&1) || st=$?
check "code-sandbox-pivots mounts WS, WS/bin on PATH, called from elsewhere: works ($st), nothing of WS ran" \
	"$st:$(cat "$T/pwned" 2>/dev/null)" = 0:
st=0
(cd "$T/other" && env -i PATH="$PWS/bin:$T/tools" "$SOURCE_DIR/bin/code-sandbox-pivots" run --workspace "$PWS" \
	--state "$T/nostate" -- true >/dev/null 2>&1) || st=$?
check "code-sandbox-pivots run --workspace WS, WS/bin on PATH: nothing of WS ran ($st)" ! -e "$T/pwned"
rm -f "$T/pwned"
# A read-write extra mount is the agent's too: what it plants there during
# the run (the fake engine's run copies the planted commands in) is not run
# by the pivots check afterwards.
mkdir -p "$T/rwm"
: >"$T/calls"
st=0
cs_path "$T/proj" "$T/bin:$T/rwm:$T/tools" CONTAINER_ENGINE=podman FAKE_PLANT="$T/rwm" FAKE_PLANT_FROM="$PWS/bin" \
	-- --mount "$T/rwm:/mnt/rwm" -- true >/dev/null 2>&1 || st=$?
check "a run with a read-write extra mount on PATH ($st): the run happened, nothing the agent put there ran afterwards" \
	"$st:$(grep -c '^podman run ' "$T/calls"):$(cat "$T/pwned" 2>/dev/null)" = 0:1:
rm -rf "$T/pwned" "$T/rwm"

# An engine given by a path in the workspace is the agent's: refused.
for e in "$PWS/podman" "bin/podman" "./podman"; do
	st=0
	cs_path "$PWS" "$T/bin:$T/tools" CONTAINER_ENGINE="$e" -- --dry-run -- true >/dev/null 2>&1 || st=$?
	check "CONTAINER_ENGINE='${e//$T/\$T}' (the workspace's): refused ($st), not run" "$st:$(cat "$T/pwned" 2>/dev/null)" = 1:
	rm -f "$T/pwned"
done
rm -f "$T/pwned"
# sane_path runs before any command, so it cannot come from a shared file
# found through PATH: each script carries it. The copies must not drift.
fn_body() { awk '/^sane_path\(\) \{/ {on=1} on {print} on && /^}$/ {exit}' "$1"; }
ref=$(fn_body "$SOURCE_DIR/bin/code-sandbox")
for f in code-sandbox-pivots code-sandbox-kube; do
	check "sane_path in bin/$f is the same as bin/code-sandbox's" \
		"$(fn_body "$SOURCE_DIR/bin/$f" | sha256sum)" = "$(printf '%s\n' "$ref" | sha256sum)"
done
check "... and is there at all" "$(printf '%s\n' "$ref" | wc -l)" -gt 10
tap_done
