#!/usr/bin/env bash
# execd_start takes optional daemon arguments; none are needed here.
# shellcheck disable=SC2119
# Authorization backends end to end: the real sandbox-execd and the real
# wrapper, with a static policy file, a real policy program (exec) and a real
# HTTP approval service on loopback (webhook). Allowed and denied commands
# for each; credentials a backend returns reach the command but never the
# audit log or the daemon's log; backend errors, timeouts and malformed
# answers deny; configurations a backend cannot work with stop the daemon.
# Runs in its own network namespace (loopback only), pid and mount ones.
set -uo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${AUTHZ_IN_NETNS:-}" ]; then
	exec unshare --net env AUTHZ_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup

DENIED=120 # EXIT_WRAP_DENIED
SERVER_PID=
stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
cleanup_all() {
	stop_server
	execd_cleanup
}
trap cleanup_all EXIT

ln -s "$WRAPPER" "$T/bin/printenv"
mkdir -p "$T/policy"
cp "$SOURCE_DIR/tests/support/exec-policy.py" "$T/policy/exec-policy.py"
chmod 755 "$T/policy" "$T/policy/exec-policy.py"
ln -s "$WRAPPER" "$T/bin/kubectl"

conf() { # conf BACKEND-LINES...
	execd_conf "tool printenv = /usr/bin/printenv" "tool kubectl = /bin/echo" "$@"
}

# run NAME: the wrapped command as the user in the workspace, with
# SANDBOX_REASON=$REASON; sets ST (exit status), OUT and ERR.
REASON=
run() {
	local o e
	o=$(mktemp) e=$(mktemp)
	ST=0
	(cd "$T/ws" && as_user /usr/bin/env ${REASON:+SANDBOX_REASON="$REASON"} "$@") >"$o" 2>"$e" || ST=$?
	OUT=$(cat "$o") ERR=$(cat "$e")
	rm -f "$o" "$e"
}
expect_allowed() { # expect_allowed NAME CMD...
	local name=$1
	shift
	run "$@"
	if [ "$ST" -eq "$DENIED" ]; then diag "denied: $ERR"; fi
	check "$name" "$ST" -ne "$DENIED"
}
expect_denied() { # expect_denied NAME PATTERN CMD...: denied, stderr matches PATTERN
	local name=$1 pat=$2
	shift 2
	run "$@"
	if [ "$ST" -ne "$DENIED" ] || ! grep -q -- "$pat" <<<"$ERR"; then
		diag "status $ST, stderr: $ERR"
		tap_result 1 "$name"
	else
		tap_result 0 "$name"
	fi
}
no_secret_logged() { # no_secret_logged SECRET
	! grep -q -- "$1" "$AUDIT" && ! grep -q -- "$1" "$T/daemon.log"
}
check_fails() { # check_fails NAME PATTERN: sandbox-execd --check must fail, naming PATTERN
	local name=$1 pat=$2 out st=0
	out=$("${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$EXECD" --config "$T/execd.conf" --check 2>&1) || st=$?
	if [ "$st" -ne 0 ] && grep -q -- "$pat" <<<"$out"; then
		tap_result 0 "$name"
	else
		diag "status $st: $out"
		tap_result 1 "$name"
	fi
}
check_ok() {
	ok "$1" "${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$EXECD" --config "$T/execd.conf" --check
}

# ---- static ---------------------------------------------------------------
cat >"$T/policy/policy.conf" <<'EOF'
allow kubectl get,describe,logs
deny kubectl get,describe arg=secret,secrets reason="reading Secrets needs review"
allow kubectl delete
deny kubectl delete flag=--all,-A reason="mass deletion needs review"
deny kubectl flag=--as reason="impersonation needs review"
allow echo
EOF
conf "backend = static" "policy_file = $T/policy/policy.conf"
check_ok "static: --check accepts the policy"
execd_start
expect_allowed "static: kubectl get allowed" kubectl get pods
expect_allowed "static: kubectl describe allowed" kubectl describe pod x
expect_denied "static: kubectl get secrets denied with the rule's reason" "reading Secrets needs review" kubectl get secrets
expect_denied "static: kubectl -n x get secret/y denied" "reading Secrets needs review" kubectl -n x get secret/y
expect_denied "static: kubectl delete --all denied" "mass deletion needs review" kubectl delete pods --all
expect_denied "static: impersonation denied" "impersonation needs review" kubectl --as=admin get pods
expect_denied "static: unmatched command denied" "default deny" kubectl rollout restart deploy/x
expect_allowed "static: echo allowed" echo hi
check "static: allowed command ran" "$OUT" = hi
ok "static: decisions audited with their rule" grep -q '"rule":"policy.conf:4"' "$AUDIT"
ok "static: audit chain verifies" audit_verify
execd_stop

printf 'allow kubectl\ndeny kubectl get flag=force\n' >"$T/policy/bad.conf"
conf "backend = static" "policy_file = $T/policy/bad.conf"
check_fails "static: a policy error stops the daemon, naming file:line:column" "bad.conf:2:23"
conf "backend = static" "policy_file = $T/policy/missing.conf"
check_fails "static: a missing policy file stops the daemon" "missing.conf"
chmod 666 "$T/policy/policy.conf"
conf "backend = static" "policy_file = $T/policy/policy.conf"
check_fails "static: a world-writable policy file stops the daemon" "writable"
chmod 644 "$T/policy/policy.conf"

# ---- exec -----------------------------------------------------------------
PROG=$T/policy/exec-policy.py
conf "backend = exec" "exec_program = $PROG" "exec_timeout_ms = 1500"
check_ok "exec: --check accepts the program"
execd_start
expect_allowed "exec: kubectl get approved by the program" kubectl get pods
expect_denied "exec: echo denied with the program's reason" "exec-policy denies echo" echo hi
REASON="env" run printenv GH_TOKEN AWS_SESSION_TOKEN
check "exec: credentials reach the command" "$OUT" = "$(printf 'ghs_exectoken123\nsess-456')"
ok "exec: credentials never in the audit log or the daemon's log" no_secret_logged ghs_exectoken123
REASON=hang
t0=$SECONDS
expect_denied "exec: a hanging program is killed and the request denied" "timed out" kubectl get pods
check "exec: ... within its timeout" $((SECONDS - t0)) -lt 10
ok "exec: ... and nothing of it is left running" wait_until 5 sh -c '! pgrep -f "[e]xec-policy.py" >/dev/null'
REASON=garbage expect_denied "exec: garbage output denies" "malformed" kubectl get pods
REASON=exit3 expect_denied "exec: non-zero exit denies" "failed" kubectl get pods
REASON=badenv expect_denied "exec: LD_PRELOAD from the program denies" "malformed" kubectl get pods
REASON=pending expect_denied "exec: pending denies" "does not poll" kubectl get pods
REASON=duplicate expect_denied "exec: a duplicate key (denied, then approved) denies" "malformed" kubectl get pods
REASON=
# Concurrent decisions: each request runs its own program.
concurrent() { # concurrent N CMD...: N at once, all must be allowed
	local n=$1 st=0
	shift
	for _ in $(seq "$n"); do
		(cd "$T/ws" && as_user "$@" >/dev/null 2>&1) &
	done
	for _ in $(seq "$n"); do
		wait -n || st=1
	done
	return "$st"
}
ok "exec: 12 concurrent decisions, all approved" concurrent 12 kubectl get pods
ok "exec: audit chain verifies" audit_verify
execd_stop

# A program that answers without reading a request larger than a pipe
# buffer: the daemon must survive the broken pipe and still use the answer.
ln -s "$PROG" "$T/policy/exec-policy-noread.py"
conf "backend = exec" "exec_program = $T/policy/exec-policy-noread.py" "exec_timeout_ms = 3000"
execd_start
expect_allowed "exec: a program that does not read a 150 kB request still decides" echo "$(head -c 150000 /dev/zero | tr '\0' x)"
ok "exec: the daemon survived the broken pipe" kill -0 "$EXECD_PID"
expect_allowed "exec: ... and keeps serving" kubectl get pods
execd_stop

conf "backend = exec" "exec_program = $T/policy/nope.py"
check_fails "exec: a missing program stops the daemon" "nope.py"
chmod 775 "$PROG"
conf "backend = exec" "exec_program = $PROG"
check_fails "exec: a group-writable program stops the daemon" "writable"
chmod 755 "$PROG"
conf "backend = exec" "exec_program = policy/exec-policy.py"
check_fails "exec: a relative program path stops the daemon" "absolute"

# ---- webhook --------------------------------------------------------------
python3 "$SOURCE_DIR/tests/support/webhook-server.py" "$T/port" "$T/webhook.log" --token s3cr3t-bearer &
SERVER_PID=$!
wait_until 10 test -s "$T/port"
PORT=$(cat "$T/port")
printf 's3cr3t-bearer\n' >"$T/policy/token"
chown "$EXECD_USER" "$T/policy/token"
chmod 600 "$T/policy/token"
conf "backend = webhook" "webhook_url = http://127.0.0.1:$PORT/decide" \
	"webhook_token_file = $T/policy/token" "webhook_timeout_ms = 1000" \
	"webhook_poll_ms = 100" "decision_timeout_ms = 2000"
check_ok "webhook: --check accepts the configuration"
execd_start
expect_allowed "webhook: kubectl get approved" kubectl get pods
ok "webhook: the bearer token was sent" grep -q '"token_ok": true' "$T/webhook.log"
ok "webhook: the request carried the parsed subcommand" grep -q '"subcommand": \["get"\]' "$T/webhook.log"
ok "webhook: the bearer token is never logged" no_secret_logged s3cr3t-bearer
expect_denied "webhook: echo denied with the service's reason" "webhook denies" echo hi
REASON="env" run printenv GH_TOKEN
check "webhook: credentials reach the command" "$OUT" = ghs_webhooksecret789
ok "webhook: credentials never in the audit log or the daemon's log" no_secret_logged ghs_webhooksecret789
REASON=pending expect_allowed "webhook: pending, polled, then approved" kubectl get pods
ok "webhook: the decision was polled" grep -q '"method": "GET"' "$T/webhook.log"
REASON=pending-deny expect_denied "webhook: pending then denied" "rejected after review" kubectl get pods
REASON=forever expect_denied "webhook: pending forever times out and denies" "decision_timeout_ms" kubectl get pods
REASON=malformed expect_denied "webhook: malformed answer denies" "not one complete JSON" kubectl get pods
REASON=slow expect_denied "webhook: an answer slower than webhook_timeout_ms denies" "timed out" kubectl get pods
REASON=error500 expect_denied "webhook: HTTP 500 denies" "HTTP error" kubectl get pods
REASON=redirect expect_denied "webhook: a redirect is not followed and denies" "redirect" kubectl get pods
REASON=huge expect_denied "webhook: an oversized answer denies" "too large" kubectl get pods
REASON=duplicate expect_denied "webhook: a duplicate key (denied, then approved) denies" "duplicate key" kubectl get pods
REASON=
ok "webhook: 12 concurrent decisions, all approved" concurrent 12 kubectl get pods
stop_server
expect_denied "webhook: an unreachable service denies" "approval service failed" kubectl get pods
ok "webhook: audit chain verifies" audit_verify
execd_stop

# HTTPS: a private CA, a server certificate for 127.0.0.1 only.
tls_ok=1
(
	cd "$T/policy" &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout ca.key -out ca.pem -days 1 -subj /CN=cs-authz-test-ca &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
		printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
			-out srv.pem -days 1 -extfile srv.ext
) >/dev/null 2>&1 || tls_ok=0
if [ "$tls_ok" = 1 ]; then
	rm -f "$T/port"
	python3 "$SOURCE_DIR/tests/support/webhook-server.py" "$T/port" "$T/webhook.log" \
		--tls "$T/policy/srv.pem" "$T/policy/srv.key" &
	SERVER_PID=$!
	wait_until 10 test -s "$T/port"
	PORT=$(cat "$T/port")
	conf "backend = webhook" "webhook_url = https://127.0.0.1:$PORT/decide" \
		"webhook_ca_file = $T/policy/ca.pem" "webhook_timeout_ms = 2000"
	execd_start
	expect_allowed "webhook: https with the service's CA approves" kubectl get pods
	execd_stop
	conf "backend = webhook" "webhook_url = https://127.0.0.1:$PORT/decide" "webhook_timeout_ms = 2000"
	execd_start
	expect_denied "webhook: https with an untrusted certificate denies" "SSL peer certificate" kubectl get pods
	execd_stop
	conf "backend = webhook" "webhook_url = https://localhost:$PORT/decide" \
		"webhook_ca_file = $T/policy/ca.pem" "webhook_timeout_ms = 2000"
	execd_start
	expect_denied "webhook: https with a certificate for another name denies" "SSL peer certificate" kubectl get pods
	execd_stop
	stop_server
else
	skip "webhook: https tests" "openssl could not make certificates"
fi

conf "backend = webhook" "webhook_url = http://198.51.100.10/decide"
check_fails "webhook: plain http to a non-loopback host stops the daemon" "loopback"
chmod 644 "$T/policy/token"
conf "backend = webhook" "webhook_url = https://approvals.example/decide" \
	"webhook_token_file = $T/policy/token"
check_fails "webhook: a readable token file stops the daemon" "0600"
conf "backend = webhook"
check_fails "webhook: no URL stops the daemon" "webhook_url"

tap_done
