#!/usr/bin/env bash
# The host tools through sandbox-execd, as an attacker in the container
# would try them, each attack with its control (the same command without
# the attack still runs). Real tools from Debian: psql (postgresql-client:
# the real binary, /usr/lib/postgresql/VER/bin/psql; /usr/bin/psql is
# pg_wrapper, which the daemon refuses), gh, aws (awscli). kubectl and terraform have
# no Debian package: kubectl is a stub that prints its directory, arguments
# and the files it was handed (the grammar, refusal and file paths are the
# daemon's either way); terraform is the real binary when one is installed
# at /usr/local/bin/terraform or /usr/bin/terraform, else a stub (said in the
# TAP output). Canary credentials live in the daemon's fake HOME and must
# never reach a listener, an output or the audit log; marker files must
# never appear. Loopback only, in a fresh network namespace.
# shellcheck disable=SC2016,SC2119
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${EXECD_IN_NETNS:-}" ]; then
	exec unshare --net env EXECD_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
for t in psql gh aws; do
	command -v "/usr/bin/$t" >/dev/null || { echo "1..0 # SKIP /usr/bin/$t missing (tools/packages.txt)"; exit 77; }
done
PSQL=$(find /usr/lib/postgresql -path '*/bin/psql' -type f 2>/dev/null | sort -V | tail -n 1)
[ -n "$PSQL" ] || { echo "1..0 # SKIP no /usr/lib/postgresql/VER/bin/psql (tools/packages.txt)"; exit 77; }
execd_setup
for t in psql gh aws kubectl terraform; do ln -s "$WRAPPER" "$T/bin/$t"; done
execd_private_binaries
cp "$SOURCE_DIR/tests/support/tcp-recorder.py" "$T/prog/"
DENIED=120
REFUSED=123

# The stub: where it runs, what it was given, the content of /dev/fd/N.
cat >"$T/prog/tool-stub" <<'SH'
#!/bin/sh
echo "cwd=$(pwd)"
echo "entries=$(ls -A | tr '\n' ' ')"
for a in "$@"; do
	echo "arg=$a"
	case $a in *"/dev/fd/"*) f=/dev/fd/${a##*/dev/fd/}; echo "content=$(cat "$f")" ;; esac
done
SH
chmod 755 "$T/prog/tool-stub"
TERRAFORM=$T/prog/tool-stub
for p in /usr/local/bin/terraform /usr/bin/terraform; do [ -x "$p" ] && TERRAFORM=$p && break; done
diag "terraform: $TERRAFORM; kubectl: the stub"

# Canary credentials in the daemon's HOME.
CANARY_AWS_SECRET=canaryAwsSecret0000000000000000000000000
CANARY_GH=gho_CANARYcanaryCANARYcanary000000000
mkdir -p "$T/home/.aws" "$T/home/.config/gh"
printf '[default]\naws_access_key_id = AKIACANARY0000000000\naws_secret_access_key = %s\nregion = eu-west-1\n' \
	"$CANARY_AWS_SECRET" >"$T/home/.aws/credentials"
printf 'github.com:\n    oauth_token: %s\n    user: canary\n    git_protocol: https\n' "$CANARY_GH" \
	>"$T/home/.config/gh/hosts.yml"
printf 'localhost:*:*:*:canaryPgPassword\n' >"$T/home/.pgpass"
chmod 600 "$T/home/.pgpass"
chown -R "$EXECD_USER:" "$T/home"
no_canary() { # no_canary FILE...: none of the canaries in them
	! grep -q -e "$CANARY_AWS_SECRET" -e "$CANARY_GH" -e canaryPgPassword "$@" 2>/dev/null
}

python3 "$T/prog/tcp-recorder.py" "$T/listener.log" "$T/listener.ready" 18080 18081 18443 15432 15433 &
listener=$!
trap 'kill $listener 2>/dev/null; execd_cleanup' EXIT
wait_until 10 test -e "$T/listener.ready"

tools_conf() { # tools_conf [LINES]
	execd_conf "tool psql = $PSQL" "tool gh = /usr/bin/gh" "tool aws = /usr/bin/aws" \
		"tool kubectl = $T/prog/tool-stub" "tool terraform = $TERRAFORM" "$@"
}
run() { # run DIR CMD...: through the wrapper; sets ST, OUT (stdout+stderr)
	local dir=$1
	shift
	ST=0
	OUT=$(cd "$dir" && as_user "$@" </dev/null 2>&1) || ST=$?
}
W=$T/ws
echo "apiVersion: v1 # the manifest" >"$W/deploy.yaml"
ln -s /etc/passwd "$W/passwd-link"
chown -h "$EXECD_USER:" "$W/deploy.yaml" "$W/passwd-link"

# === phase 0: pg_wrapper in the tool table ===================================
# /usr/bin/psql is postgresql-common's pg_wrapper: after the decision it
# takes "--cluster=VER/HOST:PORT" out of argv (even an option's value) and
# connects there. The daemon refuses to start with it, naming the binary.
execd_conf "tool psql = /usr/bin/psql"
CHECK_OUT=$("${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$EXECD" --config "$T/execd.conf" --check 2>&1)
check "tool psql = /usr/bin/psql (pg_wrapper): --check fails" "$?" -ne 0
check "... naming the real binary" "$(echo "$CHECK_OUT" | grep -c "tool psql = $PSQL")" -eq 1
timeout 10 "${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$EXECD" --config "$T/execd.conf" 2>>"$T/daemon.log"
check "... and the daemon does not start (exits 1, before listening)" "$?" -eq 1
execd_conf "tool psql = $PSQL"
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$EXECD" --config "$T/execd.conf" --check >/dev/null 2>&1
check "control: tool psql = $PSQL passes --check" "$?" -eq 0

# === phase 1: allow_all (the daemon's own rules hold for every backend) ====
tools_conf
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }

# --- the rule: a private directory, files through fds -----------------------
run "$W/sub" "$T/bin/kubectl" apply -f ../deploy.yaml
check "control: kubectl apply -f FILE runs" "$ST" -eq 0
check "... in an empty private directory, not the workspace" \
	"$(echo "$OUT" | grep -c "^cwd=$T/ws")$(echo "$OUT" | grep -c '^entries=$')" = "01"
check "... handed the file as /dev/fd/N" "$(echo "$OUT" | grep -c '^arg=/dev/fd/3$')" -eq 1
check "... with the workspace file's content" "$(echo "$OUT" | grep -c '^content=apiVersion: v1 # the manifest$')" -eq 1
for f in /etc/passwd ../../../../etc/passwd passwd-link "$T/outside/x"; do
	run "$W" "$T/bin/kubectl" apply -f "$f"
	check "kubectl -f '$f' (outside the workspace): refused" "$ST" -eq $REFUSED
	check "... and no host file content came out" "$(echo "$OUT" | grep -c 'root:')" -eq 0
done
run "$W" "$T/bin/kubectl" apply -f "$W"
check "kubectl -f DIRECTORY: refused (regular files only)" "$ST" -eq $DENIED
for a in "get pods --kubeconfig=$W/kc" "apply -k ." "cp pod:/x /tmp/x" "port-forward pod 8080" \
	"get pods -o go-template-file=$W/t"; do
	# shellcheck disable=SC2086
	run "$W" "$T/bin/kubectl" $a
	check "kubectl $a: refused" "$ST" -eq $DENIED
done

# --- psql: the real binary, meta-commands ----------------------------------
run "$W" "$T/bin/psql" /usr/bin/touch "$T/marker-pgwrapper"
check "psql /usr/bin/touch MARKER (a wrapper run as itself would run it): no marker" \
	"$(test -e "$T/marker-pgwrapper" && echo made || echo none)" = none
check "... psql ran as psql (tried to connect)" "$(echo "$OUT" | grep -c 'psql: error')" -ge 1
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -c '\conninfo'
check "control: psql -c '\\conninfo' runs (connects to the listener)" "$ST" -ne $DENIED
wait_until 5 grep -q '^15432 ' "$T/listener.log"
check "... and psql reached it" "$(grep -c '^15432 ' "$T/listener.log")" -ge 1
for c in '\! touch '"$T"'/marker-psql' 'select 1 \g |touch '"$T"'/marker-psql' \
	'\copy t to program '"'touch $T/marker-psql'"'' '\o |touch '"$T"'/marker-psql' \
	'\setenv PAGER touch' '\i /etc/passwd' '\x \! touch '"$T"'/marker-psql' "select 'x\\'; \\! touch $T/marker-psql --'"; do
	run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -c "$c"
	check "psql -c '$c': denied" "$ST" -eq $DENIED
done
printf 'select 1;\n\\dt\n\\! touch %s/marker-psql\n' "$T" >"$W/evil.sql"
printf 'select 1;\n\\dt+\n\\x on\n' >"$W/fine.sql"
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -f evil.sql
check "psql -f FILE with \\!: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -f fine.sql
check "control: psql -f FILE with \\dt+ and \\x runs" "$ST" -ne $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -f -
check "psql -f - (stdin): denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -o "$W/out" -c 'select 1'
check "psql -o FILE: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -v 'PROMPT1=%`touch '"$T"'/marker-psql`' -c 'select 1'
check "psql -v PROMPT1 with a backtick: denied" "$ST" -eq $DENIED
# Options as psql's getopt_long reads them: clusters and abbreviations
# reach the same checks.
for c in "-qc" "--co=" "--comm="; do
	case $c in
	*=) args=("$c\\! touch $T/marker-psql") ;;
	*) args=("$c" "\\! touch $T/marker-psql") ;;
	esac
	run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 "${args[@]}"
	check "psql ${args[*]} (a -c in another spelling): denied" "$ST" -eq $DENIED
done
for a in "-qo$T/marker-psql-out" "--ou=$T/marker-psql-out" "--o=$T/marker-psql-out" "-qL$T/marker-psql-out"; do
	run "$W" "$T/bin/psql" "$a" -h 127.0.0.1 -p 15432 -c 'select 1'
	check "psql $a (writes a host file): denied" "$ST" -eq $DENIED
done
check "... no file was written" "$(test -e "$T/marker-psql-out" && echo made || echo none)" = none
run "$W" "$T/bin/psql" -qf/etc/passwd -h 127.0.0.1 -p 15432
check "psql -qf/etc/passwd (a host file, clustered): refused" "$ST" -eq $REFUSED
check "no psql marker ever appeared" "$(test -e "$T/marker-psql" && echo made || echo none)" = none
ok "the psql destination is audited (the database libpq defaults to: the user's name)" grep -q '"destination":"postgresql://127.0.0.1:15432/'"$EXECD_USER"'"' "$AUDIT"

# --- psql: what it connects to ---------------------------------------------
# libpq lets a connection string in the database argument override -h/-p:
# the daemon would have judged 15432 while psql went to 15433.
for a in "-h 127.0.0.1 -p 15432 host=127.0.0.1;port=15433" "-h 127.0.0.1 -p 15432 postgresql://127.0.0.1:15433/x" \
	"-h 127.0.0.1,127.0.0.1 -p 15433" "-h 127.0.0.1 -p 15432,15433" "postgresql://127.0.0.1:15433,127.0.0.1:15432/x" \
	"-p 15433 hostaddr=127.0.0.1" "-p 15433 service=evil" "-h 127.1 -p 15433" "-h 127.0.0.1 -p 15433 -d x -U a b c"; do
	IFS=' ' read -r -a args <<<"$a"
	args=("${args[@]//;/ }")
	run "$W" "$T/bin/psql" "${args[@]}" -c 'select 1'
	check "psql $a (target ambiguous or not canonical): denied" "$ST" -eq $DENIED
done
# pg_wrapper's --cluster, in an option's value (attack 1a: judged as
# 15432, connected to 15433 with the .pgpass password; 1b: a socket in the
# workspace). The daemon runs the real binary, and refuses the word anyway.
mkdir -p "$W/s" && chown "$EXECD_USER:" "$W/s"
for c in "--cluster=15/localhost:15433" "--cluster=15/$W/s:15432"; do
	run "$W" "$T/bin/psql" -h localhost -c "$c" -p 15432 -d app -U ro
	check "psql -h localhost -c '$c' -p 15432 (pg_wrapper's --cluster): denied" \
		"$ST:$(echo "$OUT" | grep -c 'cluster')" = "$DENIED:1"
done
run "$W" "$T/bin/psql" -h localhost -c "select 1" -p 15432 -d app -U ro
check "control: the same command without --cluster runs" "$ST" -ne $DENIED
check "... nothing ever reached the other port" "$(grep -c '^15433 ' "$T/listener.log")" -eq 0
# A socket directory in the workspace is a server the agent runs (it would
# get the .pgpass password): refused as written and through a symlink.
mkdir -p "$W/sock" "$T/sockdir"
chown "$EXECD_USER:" "$W/sock"
ln -s "$W/sock" "$T/link-to-ws"
for d in "$W/sock" "$T/link-to-ws" "$W/no-such-dir"; do
	run "$W" "$T/bin/psql" -h "$d" -c 'select 1'
	check "psql -h $d (a socket directory in the workspace): denied" "$ST" -eq $DENIED
done
ok "... the refusal's audit record names psql's target" \
	grep -qF '"psql":{"host":"'"$W/sock"'","port":"5432"' "$AUDIT"
run "$W" "$T/bin/psql" -h "$T/sockdir" -c 'select 1'
check "control: psql -h DIR outside the workspace runs (and finds no server)" \
	"$ST:$(echo "$OUT" | grep -c "$T/sockdir/.s.PGSQL.5432")" = "2:1"
# What psql connects to without -h/-p/-U/-d is libpq's default, and the
# daemon judges it: the socket directory psql really uses.
run "$W" "$T/bin/psql" -c 'select 1'
check "psql without a target: the default socket psql uses is the daemon's default" \
	"$(echo "$OUT" | grep -c '/var/run/postgresql/.s.PGSQL.5432')" -eq 1
ok "... and the audit record has libpq's defaults (socket, 5432, our user, database = user)" \
	grep -qF '"psql":{"host":"/var/run/postgresql","port":"5432","dbname":"'"$EXECD_USER"'","user":"'"$EXECD_USER"'"}' "$AUDIT"
run "$W" "$T/bin/psql" -h "$T/no-such-dir" -c 'select 1'
check "psql -h MISSING-DIR is judged like any other (no host directory oracle before the policy)" "$ST" -eq 2
: >"$T/listener.log"
run "$W" "$T/bin/psql" 'postgresql://ro@127.0.0.1:15432/app?sslmode=disable' -c 'select 1'
check "control: psql URI with user and database runs" "$ST" -ne $DENIED
ok "... the audit record carries host, port, database and user as fields" \
	grep -q '"psql":{"host":"127.0.0.1","port":"15432","dbname":"app","user":"ro"}' "$AUDIT"
ok "... and they are what psql sent (the startup packet's user and database)" \
	wait_until 5 grep -qF 'user\x00ro\x00database\x00app\x00' "$T/listener.log"

# A password in a connection string or URI goes to psql, not to the audit
# log or a backend: "***" there, as for destinations.
run "$W" "$T/bin/psql" 'host=127.0.0.1 port=15432 dbname=app user=ro password=canaryPwKw' -c 'select 1'
check "control: psql with password= in a connection string runs" "$ST" -ne $DENIED
ok "... the audit record shows password=***" grep -qF 'password=***' "$AUDIT"
run "$W" "$T/bin/psql" 'postgresql://ro:canaryPwUri@127.0.0.1:15432/app?sslmode=disable' -c 'select 1'
check "control: psql with user:password@ in a URI runs" "$ST" -ne $DENIED
ok "... the audit record shows ro:***@" grep -qF 'postgresql://ro:***@127.0.0.1:15432/app' "$AUDIT"
check "... neither password is in the audit log" "$(grep -c canaryPw "$AUDIT")" -eq 0

# --- gh: only the configured host ------------------------------------------
R=$W/repo
mkdir -p "$R" && chown "$EXECD_USER:" "$R"
"${RUN_AS[@]}" env -i HOME="$T/home" /usr/bin/git -C "$R" init -q
"${RUN_AS[@]}" env -i HOME="$T/home" /usr/bin/git -C "$R" remote add origin https://github.com/acme/widget.git
run "$W" "$T/bin/gh" repo view 127.0.0.1:18443/x/y
check "gh repo view 127.0.0.1:18443/x/y: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/gh" --repo 127.0.0.1:18443/x/y pr list
check "gh --repo 127.0.0.1:18443/x/y pr list: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/gh" api --hostname 127.0.0.1:18443 /user
check "gh api --hostname OTHER: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/gh" api https://127.0.0.1:18443/user
check "gh api https://OTHER/...: denied" "$ST" -eq $DENIED
check "... the listener on 18443 never got a connection" "$(grep -c '^18443 ' "$T/listener.log")" -eq 0
run "$W" "$T/bin/gh" repo view github.com/acme/widget
check "control: gh repo view github.com/acme/widget runs (no network here)" "$ST" -ne $DENIED
run "$R" "$T/bin/gh" pr list
check "control: gh pr list in a repository runs" "$ST" -ne $DENIED
ok "... with --repo HOST/OWNER/REPO filled in by the wrapper from origin" \
	grep -q '"argv":\["gh","--repo","github.com/acme/widget","pr","list"\]' "$AUDIT"
"${RUN_AS[@]}" env -i HOME="$T/home" /usr/bin/git -C "$R" remote set-url origin https://127.0.0.1:18443/x/y
run "$R" "$T/bin/gh" pr list
check "gh pr list with an origin on another host: denied" "$ST" -eq $DENIED
for a in "pr checkout 1" "repo clone acme/widget" "repo fork acme/widget --clone" "extension install x/y" \
	"alias set --shell x id" "auth token" "auth status --show-token"; do
	# shellcheck disable=SC2086
	run "$W" "$T/bin/gh" -R github.com/acme/widget $a
	check "gh $a: denied" "$ST" -eq $DENIED
	check "... the token never printed" "$(echo "$OUT" | grep -c "$CANARY_GH")" -eq 0
done

# --- aws: files through fds ---------------------------------------------------
run "$W" "$T/bin/aws" ec2 run-instances --image-id x --user-data file:///etc/passwd
check "aws file:///etc/passwd (outside the workspace): refused" "$ST" -eq $REFUSED
run "$W" "$T/bin/aws" s3 cp /etc/passwd s3://bucket/k
check "aws s3 cp HOSTFILE s3://: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/aws" configure set aws_secret_access_key x
check "aws configure: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/aws" sts get-session-token
check "aws sts get-session-token: denied" "$ST" -eq $DENIED
execd_stop

# === phase 2: the shipped policy (execd/policy.example) =====================
cp "$SOURCE_DIR/execd/policy.example" "$T/policy.conf"
{
	echo 'allow aws s3 ls flag=--endpoint-url=http://127.0.0.1:18081'
	echo 'allow kubectl apply'
	echo 'allow psql host=127.0.0.1 port=15432 db=app user=ro'
	# libpq's defaults are judged: no -d is the user's database, no -U our user
	echo 'allow psql host=127.0.0.1 port=15432 user=postgres'
	echo 'allow psql host=127.0.0.1 port=15432 db=app2'
	echo "deny psql user=$EXECD_USER"
} >>"$T/policy.conf"
chmod 644 "$T/policy.conf"
tools_conf "backend = static" "policy_file = $T/policy.conf"
execd_start || { echo "Bail out! daemon did not start (static)"; cat "$T/daemon.log"; exit 1; }
run "$W" "$T/bin/aws" s3 ls --endpoint-url http://127.0.0.1:18080
check "aws s3 ls --endpoint-url LISTENER (not named by the policy): denied" "$ST" -eq $DENIED
run "$W" "$T/bin/aws" s3 ls --endp http://127.0.0.1:18080
check "... abbreviated (--endp): denied" "$ST" -eq $DENIED
run "$W" "$T/bin/aws" s3 ls --cli-input-json file:///etc/passwd
check "aws --cli-input-json file:///etc/passwd: refused" "$ST" -eq $REFUSED
run "$W" "$T/bin/aws" --debug s3 ls
check "aws --debug (prints signed headers): denied" "$ST" -eq $DENIED
check "... nothing reached the listener on 18080" "$(grep -c '^18080 ' "$T/listener.log")" -eq 0
run "$W" "$T/bin/aws" s3 ls --endpoint-url http://127.0.0.1:18081
check "control: the endpoint the policy names exactly runs" "$ST" -ne $DENIED
ok "... and reached its listener, signed" wait_until 10 grep -q '^18081 .*AWS4-HMAC-SHA256' "$T/listener.log"
check "... the secret key itself never sent" "$(grep -c "$CANARY_AWS_SECRET" "$T/listener.log")" -eq 0

# --- psql: the policy matches host, port, database and user ----------------
: >"$T/listener.log"
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -U ro app -c 'select 1'
check "control: psql to the host, port, database and user a rule names runs" "$ST" -ne $DENIED
wait_until 5 grep -q '^15432 ' "$T/listener.log"
check "... and reached its listener" "$(grep -c '^15432 ' "$T/listener.log")" -ge 1
for a in "-h 127.0.0.1 -p 15432 -U rw app" "-h 127.0.0.1 -p 15432 -U ro other" "-h 127.0.0.1 -p 15433 -U ro app" \
	"-h 127.0.0.1 -U ro app" "-p 15432 -U ro app" "-h 127.0.0.1 -p 15432 -U ro app dbname=other" \
	"-h 127.0.0.1 -p 15432 -U ro host=127.0.0.1;port=15433;dbname=app"; do
	IFS=' ' read -r -a args <<<"$a"
	args=("${args[@]//;/ }")
	run "$W" "$T/bin/psql" "${args[@]}" -c 'select 1'
	check "psql $a (another target than the rule's): denied" "$ST" -eq $DENIED
done
check "... and the other port never got a connection" "$(grep -c '^15433 ' "$T/listener.log")" -eq 0
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -U ro -l
check "psql -l (connects to the postgres database): denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -U postgres -c 'select 1'
check "psql -U postgres without a database (libpq: database postgres) vs deny db=postgres: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -U postgres app -c 'select 1'
check "control: psql -U postgres app runs" "$ST" -ne $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 app2 -c 'select 1'
check "psql without -U (libpq: our user) vs deny user=$EXECD_USER: denied" "$ST" -eq $DENIED
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 -U ro app2 -c 'select 1'
check "control: psql -U ro app2 runs" "$ST" -ne $DENIED

# --- terraform: agent-chosen providers ---------------------------------------
TF=$W/tf
P=$TF/terraform.d/plugins/example.com/evil/evil/1.0.0/linux_amd64
mkdir -p "$P"
printf '#!/bin/sh\ntouch %s/marker-tf\n' "$T" >"$P/terraform-provider-evil_v1.0.0"
chmod 755 "$P/terraform-provider-evil_v1.0.0"
printf 'terraform {\n  required_providers {\n    evil = { source = "example.com/evil/evil" }\n  }\n}\n' >"$TF/main.tf"
echo 'x = 1' >"$TF/a.tfvars"
chown -R "$EXECD_USER:" "$TF"
for sub in init validate plan apply console import; do
	run "$TF" "$T/bin/terraform" "$sub"
	check "terraform $sub (runs agent-chosen providers): denied by the shipped policy" "$ST" -eq $DENIED
done
run "$TF" "$T/bin/terraform" version
check "control: terraform version runs" "$ST" -eq 0
execd_stop
tools_conf # allow_all: even then the agent's plugin directory is not used
execd_start || { echo "Bail out! daemon did not start (tf)"; exit 1; }
if [ "$TERRAFORM" = "$T/prog/tool-stub" ]; then
	run "$TF" "$T/bin/terraform" init
	skip "terraform init with allow_all: the agent's terraform.d/plugins is not used" "no terraform binary (stub)"
	check "stub: terraform sees only the copied *.tf, *.tfvars" "$(echo "$OUT" | grep -c '^entries=a.tfvars main.tf $')" -eq 1
else
	run "$TF" "$T/bin/terraform" init
	run "$TF" "$T/bin/terraform" validate
	check "terraform init + validate with allow_all: the agent's provider never ran" \
		"$(test -e "$T/marker-tf" && echo ran || echo none)" = none
	run "$TF" "$T/bin/terraform" fmt -check
	check "control: terraform fmt -check runs on the copy" "$ST" -ne $DENIED
fi
for o in -out=sub/p.plan -out=/tmp/p.plan -out=../p.plan -out=main.tf; do
	run "$TF" "$T/bin/terraform" plan "$o"
	check "terraform plan $o (a path, or a configuration file): denied" "$ST" -eq $DENIED
done
run "$TF" "$T/bin/terraform" plan -var-file=/etc/passwd
check "terraform -var-file=HOSTFILE: refused" "$ST" -eq $REFUSED

# --- terraform show: only plans the daemon made --------------------------
# plan -out=NAME is written in the private directory and kept by the
# daemon under an id it prints; show takes that id. A plan file in the
# workspace is the agent's (any bytes): never shown. A configuration with
# only terraform's built-in provider plans offline.
TFP=$W/tfp
mkdir -p "$TFP"
printf 'resource "terraform_data" "x" {\n  input = "hello-from-the-plan"\n}\n' >"$TFP/main.tf"
echo 'agent-written bytes, not a plan' >"$TFP/agent.tfplan"
chown -R "$EXECD_USER:" "$TFP"
PLAN_ID=
if [ "$TERRAFORM" = "$T/prog/tool-stub" ]; then
	skip "terraform plan -out / show of the daemon's plan" "no terraform binary (stub)"
else
	run "$TFP" "$T/bin/terraform" plan -input=false -out=tfplan
	check "terraform plan -out=NAME runs" "$ST" -eq 0
	PLAN_ID=$(echo "$OUT" | grep -o 'sandbox-plan-[0-9a-f]\{32\}' | head -n 1)
	check "... the host prints the id it keeps the plan under" -n "$PLAN_ID"
	check "... nothing was written to the workspace" "$(test -e "$TFP/tfplan" && echo written || echo none)" = none
	check "... the plan is in the daemon's store" -f "$T/work/tf-plans/$PLAN_ID"
	run "$TFP" "$T/bin/terraform" show -no-color "$PLAN_ID"
	check "terraform show ID: shows the daemon's plan" \
		"$ST:$(echo "$OUT" | grep -c 'hello-from-the-plan')" = "0:1"
	run "$W" "$T/bin/terraform" show -json "$PLAN_ID"
	check "terraform show -json ID from another directory (the plan carries its configuration)" \
		"$ST:$(echo "$OUT" | grep -c '"format_version"')" = "0:1"
fi
run "$TFP" "$T/bin/terraform" show agent.tfplan
check "terraform show FILE (a plan file the agent wrote): denied" "$ST" -eq $DENIED
run "$TFP" "$T/bin/terraform" show sandbox-plan-00000000000000000000000000000000
check "terraform show ID the daemon never gave: denied" \
	"$ST:$(echo "$OUT" | grep -c 'no terraform plan')" = "$DENIED:1"
run "$TFP" "$T/bin/terraform" show "./${PLAN_ID:-sandbox-plan-00000000000000000000000000000000}"
check "terraform show ./ID (a path): denied" "$ST" -eq $DENIED
execd_stop
if [ -n "$PLAN_ID" ]; then
	# The shipped policy: show is allowed, plan is not.
	tools_conf "backend = static" "policy_file = $T/policy.conf"
	execd_start || { echo "Bail out! daemon did not start (static, tf)"; exit 1; }
	run "$TFP" "$T/bin/terraform" show -no-color "$PLAN_ID"
	check "shipped policy: terraform show of the daemon's plan runs" \
		"$ST:$(echo "$OUT" | grep -c 'hello-from-the-plan')" = "0:1"
	run "$TFP" "$T/bin/terraform" plan -out=tfplan
	check "shipped policy: terraform plan -out=NAME is denied (it runs providers)" "$ST" -eq $DENIED
	execd_stop
fi

# --- the exec backend sees the psql fields (the webhook sends the same
# document: lib/authzjson.c) -------------------------------------------------
cat >"$T/prog/exec-record.py" <<PY
#!/usr/bin/env python3
import sys
data = sys.stdin.read()
with open("$T/home/exec-request.json", "w") as f:
    f.write(data)
print('{"decision":"approved","reason":"recorded"}')
PY
chmod 755 "$T/prog/exec-record.py"
tools_conf "backend = exec" "exec_program = $T/prog/exec-record.py"
execd_start || { echo "Bail out! daemon did not start (exec)"; exit 1; }
run "$W" "$T/bin/psql" 'postgresql://ro@127.0.0.1:15432/app?sslmode=disable' -c 'select 1'
check "control: psql approved by the exec backend runs" "$ST" -ne $DENIED
ok "the exec backend got host, port, database and user as JSON fields" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["psql"] == {"host": "127.0.0.1", "port": "15432", "dbname": "app", "user": "ro"}, r.get("psql")
' "$T/home/exec-request.json"
run "$W" "$T/bin/psql" 'postgresql://ro:canaryPwExec@127.0.0.1:15432/app?sslmode=disable' -c 'select 1'
check "control: psql with a password in its URI, approved by the exec backend, runs" "$ST" -ne $DENIED
check "... the backend got the argv without the password" \
	"$(grep -c canaryPwExec "$T/home/exec-request.json"):$(grep -c 'ro:\*\*\*@' "$T/home/exec-request.json")" = "0:1"
run "$W" "$T/bin/psql" -h 127.0.0.1 -p 15432 'host=127.0.0.1 port=15433'
check "an ambiguous target is refused before the exec backend is asked" "$ST" -eq $DENIED
execd_stop

ok "no canary credential in the audit log, the daemon's log or any listener" \
	no_canary "$AUDIT" "$T/daemon.log" "$T/listener.log"
ok "the audit chain verifies" audit_verify
check "no private directory is left behind" "$(find "$T/work" -mindepth 1 -maxdepth 1 -name 'run-*' | wc -l)" -eq 0
tap_done
