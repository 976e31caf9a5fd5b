#!/usr/bin/env bash
# Shared set-up for the git relay tests and benchmarks (sourced, not run).
# Run it inside a fresh network namespace (loopback only) and pid/mount
# namespaces. It builds:
#   $T (0755)            binaries copied in (the daemon's user may not be able
#                        to traverse the checkout, issue 12)
#   $T/srv               bare repositories served by tests/support/
#                        git-https-server.py over HTTPS with basic auth; the
#                        credential exists only in the daemon user's home
#   $T/home              the daemon user's home: ~/.gitconfig with a store
#                        credential helper and the test CA (the user's
#                        *global* config, which the relay copies from)
#   $T/agent             the "container": HOME without credentials, the
#                        image's gitconfig as the system config, PATH with
#                        git-remote-sandbox
#   gr_start [conf lines] / gr_stop   the daemon (as nobody)
#   agent CMD...         a command as the agent (cwd: wherever you are)
#   srv_git ARGS...      git on the server side (as root, the remote's owner)
# shellcheck disable=SC2034
: "${BUILD_DIR:?}" "${SOURCE_DIR:?}"

GR_USER=nobody
GR_RUN_AS=(setpriv --reuid="$(id -u "$GR_USER")" --regid="$(id -g "$GR_USER")" --clear-groups)
GR_PASS=hostsecret-$RANDOM$RANDOM
GR_DAEMON_PID=
GR_SERVER_PID=

gr_cleanup() {
	if [ -n "$GR_DAEMON_PID" ]; then kill -9 "$GR_DAEMON_PID" 2>/dev/null || true; fi
	if [ -n "$GR_SERVER_PID" ]; then kill "$GR_SERVER_PID" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	rm -rf "$T"
}

gr_setup() {
	T=$(mktemp -d /tmp/cs-gitrelay-$$-XXXXXX)
	chmod 755 "$T"
	trap gr_cleanup EXIT
	mkdir -p "$T/bin" "$T/srv" "$T/run" "$T/state" "$T/home" "$T/agent/home" "$T/ws"
	cp "$BUILD_DIR/execd/sandbox-execd" "$BUILD_DIR/wrappers/git-remote-sandbox" "$T/bin/"
	cp "$SOURCE_DIR/wrappers/gitconfig" "$T/gitconfig"
	cp "$SOURCE_DIR/tests/support/git-https-server.py" "$T/git-https-server.py"
	chmod 755 "$T/bin" "$T/bin/"* && chmod 644 "$T/gitconfig"
	chmod 700 "$T/run" "$T/state"
	chown -R "$GR_USER:" "$T/run" "$T/state" "$T/home" "$T/agent" "$T/ws"
	ip link set lo up
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/ca.pem" -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
	chmod 644 "$T/ca.pem"
	/usr/bin/python3 "$T/git-https-server.py" --root "$T/srv" --cert "$T/ca.pem" \
		--key "$T/key.pem" --user relay --password "$GR_PASS" --port-file "$T/port" \
		--log "$T/server.log" ${GR_READONLY:+--readonly "$GR_READONLY"} 2>"$T/server.err" &
	GR_SERVER_PID=$!
	wait_until 10 test -s "$T/port" || { echo "Bail out! no git server"; cat "$T/server.err"; exit 1; }
	PORT=$(cat "$T/port")
	BASE=https://127.0.0.1:$PORT
	# The user's global git configuration: how they authenticate.
	printf 'https://relay:%s@127.0.0.1:%s\n' "$GR_PASS" "$PORT" >"$T/home/.git-credentials"
	chmod 600 "$T/home/.git-credentials"
	git config -f "$T/home/.gitconfig" credential.helper "store --file=$T/home/.git-credentials"
	git config -f "$T/home/.gitconfig" http.sslCAInfo "$T/ca.pem"
	chown "$GR_USER:" "$T/home/.git-credentials" "$T/home/.gitconfig"
	# The agent's own identity and nothing else.
	git config -f "$T/agent/home/.gitconfig" user.name agent
	git config -f "$T/agent/home/.gitconfig" user.email agent@sandbox
	chown "$GR_USER:" "$T/agent/home/.gitconfig"
}

gr_conf() { # gr_conf [LINE...]
	{
		printf '%s\n' "audit_log = $T/state/audit.jsonl" "socket = $T/run/execd.sock" \
			"tool echo = /bin/echo" "map $T/ws = $T/ws" "git_cache_dir = $T/state/git-cache"
		printf '%s\n' "$@"
		case " $* " in *"backend ="*) ;; *) echo "backend = allow_all" ;; esac
	} >"$T/execd.conf"
}

gr_start() {
	rm -f "$T/run/execd.sock"
	"${GR_RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" CODE_SANDBOX_LOG=info \
		"$T/bin/sandbox-execd" --config "$T/execd.conf" 2>>"$T/daemon.log" &
	GR_DAEMON_PID=$!
	wait_until 10 test -S "$T/run/execd.sock"
}

gr_stop() {
	[ -n "$GR_DAEMON_PID" ] || return 0
	kill "$GR_DAEMON_PID" 2>/dev/null || true
	wait "$GR_DAEMON_PID" 2>/dev/null || true
	GR_DAEMON_PID=
}

# After gr_stop: the daemon's log has no sanitizer report (asan builds).
gr_check_daemon_log() {
	check "the daemon reported no memory error or leak" \
		"$(grep -c 'AddressSanitizer\|LeakSanitizer\|runtime error' "$T/daemon.log")" -eq 0
}

# The agent: the image's system gitconfig, the helper in PATH, no
# credentials anywhere in reach (its HOME is $T/agent/home).
agent() {
	"${GR_RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/agent/home" LC_ALL=C \
		GIT_CONFIG_SYSTEM="$T/gitconfig" SANDBOX_EXECD_SOCKET="$T/run/execd.sock" \
		SANDBOX_EXECD_TOKEN="$T/run/token" "$@"
}

# The same agent without the relay: git talking to the remote directly
# (SANDBOX_EXECD_SOCKET still set, so marks made here count as the agent's).
agent_direct() {
	"${GR_RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/agent/home" LC_ALL=C \
		GIT_CONFIG_NOSYSTEM=1 GIT_SSL_CAINFO="$T/ca.pem" GIT_TERMINAL_PROMPT=0 \
		SANDBOX_EXECD_SOCKET="$T/run/execd.sock" "$@"
}

srv_git() { git -c safe.directory='*' "$@"; }

srv_repo() { # srv_repo NAME: a bare repository on the server with one commit on main
	srv_git init -q --bare -b main "$T/srv/$1.git"
	srv_git -C "$T/srv/$1.git" config http.receivepack true
	rm -rf "$T/seed-$1"
	srv_git init -q -b main "$T/seed-$1"
	srv_git -C "$T/seed-$1" -c user.name=s -c user.email=s@s commit -q --allow-empty -m "seed $1"
	srv_git -C "$T/seed-$1" push -q "$T/srv/$1.git" main
}

srv_commit() { # srv_commit NAME MESSAGE: a new commit on the server's main (someone else pushed)
	srv_git -C "$T/seed-$1" pull -q --ff-only "$T/srv/$1.git" main
	srv_git -C "$T/seed-$1" -c user.name=s -c user.email=s@s commit -q --allow-empty -m "$2"
	srv_git -C "$T/seed-$1" push -q "$T/srv/$1.git" main
}

srv_big_history() { # srv_big_history NAME N: a repository with N commits (fast-import)
	srv_git init -q --bare -b main "$T/srv/$1.git"
	srv_git -C "$T/srv/$1.git" config http.receivepack true
	/usr/bin/python3 - "$2" <<'PY' | srv_git -C "$T/srv/$1.git" fast-import --quiet
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(1, n + 1):
    data = ("line %d\n" % i).encode()
    msg = ("commit %d\n" % i).encode()
    out.write(b"commit refs/heads/main\n")
    out.write(b"committer s <s@s> %d +0000\n" % (1700000000 + i))
    out.write(b"data %d\n%s" % (len(msg), msg))
    out.write(b"M 644 inline f%d.txt\ndata %d\n%s\n" % (i % 100, len(data), data))
PY
}
