#!/usr/bin/env bash
# A simulated internet for integration tests and benchmarks: nothing leaves
# the machine. Source it (after tests/support/tap.sh if you like):
#
#   . "$SOURCE_DIR/tests/support/simnet.sh"
#   trap simnet_down EXIT
#   simnet_up "cs-mytest-$$"            # needs root
#   simnet_dns_set api.anthropic.com "$SIMNET_HOST_A4" "$SIMNET_HOST_A6"
#   simnet_listen "$SIMNET_HOST_A4" 443 https
#   simnet_exec_sbx curl -sk https://api.anthropic.com/    # "simnet 198.51.100.10 443 https"
#
# Layout (CONTAINERS.md, "A simulated internet"):
#   netns ${PREFIX}-sim  the "internet": dnsmasq, listeners, fake hosts as
#                        addresses on its lo (198.51.100.0/24, 2001:db8::/32)
#   netns ${PREFIX}-sbx  where the sandbox runs: a veth to sim, routes to the
#                        fake ranges only, no default route
#   veth                 10.X.Y.0/24 and 2001:db8:ffff:Z::/64, X.Y.Z derived
#                        from PREFIX so concurrent runs are easy to tell apart
# Nothing is added to the machine's initial network namespace: the veth is
# created inside sim and its peer moved straight into sbx.
#
# Variables set by simnet_up (read them, do not change them):
#   SIMNET_SIM SIMNET_SBX         namespace names
#   SIMNET_DIR                    scratch directory (removed by simnet_down)
#   SIMNET_SIM_V4 SIMNET_SBX_V4   veth addresses (sim's is the DNS server)
#   SIMNET_SIM_V6 SIMNET_SBX_V6
#   SIMNET_SLOW_V4                second sim address, where simnet_slowdns listens
#   SIMNET_RESOLV                 resolv.conf naming sim's dnsmasq (bind-mount it)
#   SIMNET_SLOW_RESOLV            resolv.conf naming the slow forwarder
#   SIMNET_NSSWITCH               the machine's nsswitch.conf with "hosts: files dns"
#   SIMNET_HOST_A4 SIMNET_HOST_A6 fake host "A" (198.51.100.10, 2001:db8::10)
#   SIMNET_HOST_B4 SIMNET_HOST_B6 fake host "B" (198.51.100.20, 2001:db8::20)
# Knobs read by simnet_up:
#   SIMNET_DNS_TTL (60)           TTL of every answer (dnsmasq --local-ttl)
#   SIMNET_DNS_LOG (1)            0 disables --log-queries (benchmarks)
#   SIMNET_DNSMASQ_EXTRA          array of extra dnsmasq options (e.g. --cname=)
#
# Call simnet_up and simnet_spawn-based functions in the main shell, not in
# a subshell or $(...): simnet_down kills the PIDs they recorded.
# Functions (all return non-zero on failure, none exits the caller):
#   simnet_up PREFIX              create everything; fails if anything is off
#   simnet_down                   kill what simnet started (by PID), delete
#                                 both namespaces and SIMNET_DIR; idempotent
#   simnet_add_host ADDR...       add fake host addresses on sim's lo
#   simnet_dns_set NAME ADDR...   A/AAAA records for NAME (replaces previous
#                                 ones); waits until dnsmasq serves them
#   simnet_dns_del NAME           remove NAME (NXDOMAIN again), waits
#   simnet_dns_set_many FILE      hosts-format file ("ADDR NAME" lines) for
#                                 many names at once; waits for the last one
#   simnet_dns_log                print the path of dnsmasq's query log
#   simnet_dns_queried NAME       true when the log shows a query for NAME
#   simnet_listen ADDR PORT [tcp|udp|tls|http|https]
#                                 start a listener in sim (adding ADDR as a
#                                 fake host if needed) answering
#                                 "simnet ADDR PORT PROTO" (http/https: as the
#                                 body of an HTTP/1.0 200 reply); waits until
#                                 it listens. One log line per connection:
#   simnet_listen_log ADDR PORT PROTO   path of that log ("PEER PORT" lines)
#   simnet_slowdns [DELAY_MS]     start tests/support/slowdns on
#                                 SIMNET_SLOW_V4:53, forwarding to dnsmasq
#   simnet_exec_sbx CMD...        run CMD inside sbx
#   simnet_exec_sbx_resolv CMD... same, with SIMNET_RESOLV on /etc/resolv.conf
#                                 and "hosts: files dns" in /etc/nsswitch.conf
#   simnet_exec_sim CMD...        run CMD inside sim

SIMNET_PIDS=()
SIMNET_SIM=""
SIMNET_SBX=""
SIMNET_DIR=""

simnet_log() { printf 'simnet: %s\n' "$*" >&2; }

# A number 0..N-1 from PREFIX, so two runs with different PIDs get different
# veth subnets (they would work even if equal: each pair is its own netns).
simnet_hash() { # simnet_hash STRING MOD
	local sum
	sum=$(printf '%s' "$1" | cksum | awk '{print $1}')
	echo $((sum % $2))
}

simnet_exec_sim() { ip netns exec "$SIMNET_SIM" "$@"; }
simnet_exec_sbx() { ip netns exec "$SIMNET_SBX" "$@"; }

# Like simnet_exec_sbx, with SIMNET_RESOLV (or RESOLV=FILE) bind-mounted on
# /etc/resolv.conf. ip netns exec already runs CMD in a private mount
# namespace, so the mount is gone when CMD exits. The machine's nsswitch.conf
# may send host lookups elsewhere first (systemd-resolved's "resolve",
# mDNS), bypassing that resolv.conf: SIMNET_NSSWITCH, the same file with
# "hosts: files dns", is bind-mounted over it.
simnet_exec_sbx_resolv() {
	# shellcheck disable=SC2016 # $0, $1 and $@ belong to the inner sh
	ip netns exec "$SIMNET_SBX" sh -c 'mount --bind "$0" /etc/resolv.conf &&
		{ [ ! -e /etc/nsswitch.conf ] || mount --bind "$1" /etc/nsswitch.conf; } && shift && exec "$@"' \
		"${RESOLV:-$SIMNET_RESOLV}" "$SIMNET_NSSWITCH" "$@"
}

# Start a long-running program in a namespace in the background and remember
# its PID (ip netns exec execs the program, so $! is the program itself).
simnet_spawn() { # simnet_spawn NETNS LOGFILE CMD...
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" >>"$log" 2>&1 </dev/null &
	SIMNET_PIDS+=("$!")
}

simnet_poll() { # simnet_poll SECONDS CMD...: true once CMD succeeds
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

simnet_up() { # simnet_up PREFIX
	local prefix=${1:?usage: simnet_up PREFIX} h x y z
	if [ "$(id -u)" -ne 0 ]; then
		simnet_log "needs root"
		return 1
	fi
	if [ -n "$SIMNET_SIM" ]; then
		simnet_log "already up ($SIMNET_SIM)"
		return 1
	fi
	h=$(simnet_hash "$prefix" 65536)
	x=$((200 + h % 50))
	y=$((h / 50 % 256))
	z=$(printf '%x' "$h")
	SIMNET_SIM="${prefix}-sim"
	SIMNET_SBX="${prefix}-sbx"
	SIMNET_SIM_V4="10.$x.$y.1"
	SIMNET_SBX_V4="10.$x.$y.2"
	SIMNET_SLOW_V4="10.$x.$y.3"
	SIMNET_SIM_V6="2001:db8:ffff:$z::1"
	SIMNET_SBX_V6="2001:db8:ffff:$z::2"
	SIMNET_HOST_A4=198.51.100.10
	SIMNET_HOST_B4=198.51.100.20
	SIMNET_HOST_A6=2001:db8::10
	SIMNET_HOST_B6=2001:db8::20
	SIMNET_DIR=$(mktemp -d "/tmp/simnet.${prefix}.XXXXXX") || return 1
	mkdir -p "$SIMNET_DIR/hosts.d" "$SIMNET_DIR/listen" || return 1
	SIMNET_RESOLV="$SIMNET_DIR/resolv.conf"
	SIMNET_SLOW_RESOLV="$SIMNET_DIR/resolv-slow.conf"
	printf 'nameserver %s\n' "$SIMNET_SIM_V4" >"$SIMNET_RESOLV"
	printf 'nameserver %s\n' "$SIMNET_SLOW_V4" >"$SIMNET_SLOW_RESOLV"
	SIMNET_NSSWITCH="$SIMNET_DIR/nsswitch.conf"
	{
		grep -v '^[[:space:]]*hosts:' /etc/nsswitch.conf 2>/dev/null
		echo 'hosts: files dns'
	} >"$SIMNET_NSSWITCH"
	chmod 0644 "$SIMNET_NSSWITCH"

	if ! ip netns add "$SIMNET_SIM"; then
		SIMNET_SIM=""
		simnet_down
		return 1
	fi
	if ! ip netns add "$SIMNET_SBX"; then
		SIMNET_SBX=""
		simnet_down
		return 1
	fi
	# The veth is born inside sim; its peer goes straight to sbx.
	if ! { ip -n "$SIMNET_SIM" link add veth0 type veth peer name veth0 netns "$SIMNET_SBX" &&
		ip -n "$SIMNET_SIM" link set lo up &&
		ip -n "$SIMNET_SBX" link set lo up &&
		ip -n "$SIMNET_SIM" addr add "$SIMNET_SIM_V4/24" dev veth0 &&
		ip -n "$SIMNET_SIM" addr add "$SIMNET_SLOW_V4/24" dev veth0 &&
		ip -n "$SIMNET_SBX" addr add "$SIMNET_SBX_V4/24" dev veth0 &&
		ip -n "$SIMNET_SIM" addr add "$SIMNET_SIM_V6/64" dev veth0 nodad &&
		ip -n "$SIMNET_SBX" addr add "$SIMNET_SBX_V6/64" dev veth0 nodad &&
		ip -n "$SIMNET_SIM" link set veth0 up &&
		ip -n "$SIMNET_SBX" link set veth0 up &&
		ip -n "$SIMNET_SBX" route add 198.51.100.0/24 via "$SIMNET_SIM_V4" &&
		ip -n "$SIMNET_SBX" -6 route add 2001:db8::/32 via "$SIMNET_SIM_V6" &&
		simnet_add_host "$SIMNET_HOST_A4" "$SIMNET_HOST_B4" "$SIMNET_HOST_A6" "$SIMNET_HOST_B6"; }; then
		simnet_log "network set-up failed"
		simnet_down
		return 1
	fi

	# Fail closed: neither namespace may have a way out.
	if [ -n "$(ip -n "$SIMNET_SBX" route show default)$(ip -n "$SIMNET_SBX" -6 route show default)" ] ||
		[ -n "$(ip -n "$SIMNET_SIM" route show default)$(ip -n "$SIMNET_SIM" -6 route show default)" ]; then
		simnet_log "a default route appeared"
		simnet_down
		return 1
	fi

	simnet_dnsmasq_start || { simnet_down; return 1; }
}

simnet_dnsmasq_start() {
	local args=(
		--keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts
		--bind-interfaces --listen-address="$SIMNET_SIM_V4" --listen-address="$SIMNET_SIM_V6"
		--port=53 --user=root --group=root --pid-file=
		--hostsdir="$SIMNET_DIR/hosts.d" --local-ttl="${SIMNET_DNS_TTL:-60}"
		--address=/#/ --log-facility="$SIMNET_DIR/dns.log" --cache-size=1000
		--dns-forward-max=5000
	)
	# --address=/#/ answers NXDOMAIN for every name the hosts files lack.
	[ "${SIMNET_DNS_LOG:-1}" = 0 ] || args+=(--log-queries)
	if declare -p SIMNET_DNSMASQ_EXTRA >/dev/null 2>&1; then
		args+=("${SIMNET_DNSMASQ_EXTRA[@]}")
	fi
	: >"$SIMNET_DIR/dns.log"
	simnet_spawn "$SIMNET_SIM" "$SIMNET_DIR/dnsmasq.out" dnsmasq "${args[@]}"
	if ! simnet_poll 5 simnet_exec_sim dig @"$SIMNET_SIM_V4" +time=1 +tries=1 simnet-ready.invalid A; then
		simnet_log "dnsmasq did not come up: $(tail -3 "$SIMNET_DIR/dnsmasq.out" 2>/dev/null)"
		return 1
	fi
}

simnet_add_host() { # simnet_add_host ADDR...
	local a
	for a in "$@"; do
		case $a in
		198.51.100.*) ip -n "$SIMNET_SIM" addr add "$a/32" dev lo || return 1 ;;
		2001:db8:*) ip -n "$SIMNET_SIM" addr add "$a/128" dev lo || return 1 ;;
		*)
			simnet_log "refusing fake host $a: only 198.51.100.0/24 and 2001:db8::/32"
			return 1
			;;
		esac
	done
}

# First IPv4 (else IPv6) answer dnsmasq gives for NAME, as seen from sim.
simnet_dns_first() { # simnet_dns_first NAME TYPE
	# awk reads everything (head would cut dig off: SIGPIPE under pipefail).
	simnet_exec_sim dig @"$SIMNET_SIM_V4" +short +time=1 +tries=1 "$1" "$2" 2>/dev/null | awk 'NR == 1'
}

simnet_dns_wait() { # simnet_dns_wait NAME TYPE EXPECTED ("" = no answer)
	local deadline=$((SECONDS + 5)) got
	while :; do
		got=$(simnet_dns_first "$1" "$2")
		[ "$got" = "$3" ] && return 0
		[ "$SECONDS" -lt "$deadline" ] || break
		sleep 0.02
	done
	simnet_log "dnsmasq still answers '$got' for $1 $2 (wanted '$3')"
	return 1
}

simnet_name_ok() {
	case $1 in
	"" | *[!a-zA-Z0-9._-]* | .* | *..*) simnet_log "bad name '$1'"; return 1 ;;
	esac
}

simnet_dns_set() { # simnet_dns_set NAME ADDR...
	local name=${1:?usage: simnet_dns_set NAME ADDR...} a tmp first4="" first6=""
	shift
	simnet_name_ok "$name" || return 1
	tmp="$SIMNET_DIR/hosts.tmp"
	: >"$tmp" || return 1
	for a in "$@"; do
		printf '%s %s\n' "$a" "$name" >>"$tmp"
		case $a in
		*:*) [ -n "$first6" ] || first6=$a ;;
		*) [ -n "$first4" ] || first4=$a ;;
		esac
	done
	# rename() into the watched directory: dnsmasq never reads a half file.
	mv -f "$tmp" "$SIMNET_DIR/hosts.d/$name" || return 1
	if [ -n "$first4" ]; then
		simnet_dns_wait "$name" A "$first4"
	else
		simnet_dns_wait "$name" AAAA "$(simnet_norm6 "$first6")"
	fi
}

# dig prints IPv6 answers in canonical form; normalise ours the same way.
simnet_norm6() {
	python3 -c 'import ipaddress,sys; print(ipaddress.ip_address(sys.argv[1]))' "$1"
}

simnet_dns_del() { # simnet_dns_del NAME
	simnet_name_ok "$1" || return 1
	rm -f "$SIMNET_DIR/hosts.d/$1" || return 1
	simnet_dns_wait "$1" A ""
}

simnet_dns_set_many() { # simnet_dns_set_many HOSTSFILE
	local src=${1:?usage: simnet_dns_set_many FILE} name base last
	base=$(basename "$src")
	last=$(awk 'NF >= 2 && $1 !~ /^#/ && $1 !~ /:/ {a = $1} END {print a}' "$src")
	name=$(awk -v a="$last" '$1 == a {n = $2} END {print n}' "$src")
	cp "$src" "$SIMNET_DIR/hosts.tmp" && mv -f "$SIMNET_DIR/hosts.tmp" "$SIMNET_DIR/hosts.d/many-$base" || return 1
	[ -z "$name" ] || simnet_dns_wait "$name" A "$last"
}

simnet_dns_log() { echo "$SIMNET_DIR/dns.log"; }

simnet_dns_queried() { # simnet_dns_queried NAME
	grep -qE "query\[[A-Z0-9]+\] $(printf '%s' "$1" | sed 's/\./\\./g') from " "$SIMNET_DIR/dns.log"
}

simnet_listen_log() { # simnet_listen_log ADDR PORT PROTO
	echo "$SIMNET_DIR/listen/$1_$2_$3.log"
}

# The program socat runs per connection: it logs the peer and answers with
# the identifying line. Written once per simnet_up.
simnet_write_responder() {
	local f="$SIMNET_DIR/respond.sh"
	[ -x "$f" ] && return 0
	cat >"$f" <<'EOF'
#!/bin/bash
# simnet responder: SIMNET_ID (the line), SIMNET_MODE, SIMNET_LOG from socat's environment.
printf '%s %s\n' "${SOCAT_PEERADDR:-?}" "${SOCAT_PEERPORT:-?}" >>"$SIMNET_LOG"
case $SIMNET_MODE in
http)
	while IFS= read -r -t 5 line; do
		line=${line%$'\r'}
		[ -n "$line" ] || break
	done
	printf 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n' \
		$((${#SIMNET_ID} + 1)) "$SIMNET_ID"
	;;
udp)
	# Wait for socat to hand over the datagram: exiting first would break
	# its pipe, and socat would drop our reply.
	IFS= read -r -n 1 -t 2 _ || true
	printf '%s\n' "$SIMNET_ID"
	;;
*)
	printf '%s\n' "$SIMNET_ID"
	# Drain what the client sends: closing with unread data would reset the
	# connection and could discard our line before the client reads it.
	timeout 1 cat >/dev/null
	;;
esac
EOF
	chmod 0755 "$f"
}

simnet_write_cert() {
	[ -f "$SIMNET_DIR/cert.pem" ] && return 0
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=simnet" -addext "subjectAltName=DNS:*.test,DNS:simnet" \
		-keyout "$SIMNET_DIR/key.pem" -out "$SIMNET_DIR/cert.pem" >/dev/null 2>&1
}

simnet_listen() { # simnet_listen ADDR PORT [tcp|udp|tls|http|https]
	local addr=${1:?usage: simnet_listen ADDR PORT [PROTO]} port=${2:?} proto=${3:-tcp}
	local fam=4 bind=$addr mode=$proto log lspec ss_opt=-Hltn have
	case $addr in *:*) fam=6 bind="[$addr]" ;; esac
	# A fake host that does not exist yet is added on the fly.
	# (No "| grep -q": under pipefail, grep's early exit fails the pipeline.)
	have=$(ip -n "$SIMNET_SIM" addr show dev lo) || return 1
	if [[ $have != *" $addr/"* ]]; then
		simnet_add_host "$addr" || return 1
	fi
	simnet_write_responder || return 1
	case $proto in
	tcp | http) lspec="TCP$fam-LISTEN:$port,bind=$bind,reuseaddr,fork,backlog=512" ;;
	tls | https)
		simnet_write_cert || return 1
		lspec="OPENSSL-LISTEN:$port,bind=$bind,pf=ip$fam,reuseaddr,fork,backlog=512,verify=0"
		lspec+=",cert=$SIMNET_DIR/cert.pem,key=$SIMNET_DIR/key.pem"
		[ "$proto" = https ] && mode=http
		;;
	udp)
		lspec="UDP$fam-RECVFROM:$port,bind=$bind,fork"
		ss_opt=-Hlun
		;;
	*) simnet_log "unknown protocol $proto"; return 1 ;;
	esac
	log=$(simnet_listen_log "$addr" "$port" "$proto")
	: >"$log"
	SIMNET_ID="simnet $addr $port $proto" SIMNET_MODE=$mode SIMNET_LOG=$log \
		simnet_spawn "$SIMNET_SIM" "$SIMNET_DIR/listen/socat.out" \
		socat -T5 "$lspec" EXEC:"$SIMNET_DIR/respond.sh"
	simnet_poll 5 simnet_listening "$ss_opt" "$bind" "$port" ||
		{ simnet_log "listener $addr $port $proto did not start"; return 1; }
}

simnet_listening() { # simnet_listening SS_OPT BIND PORT
	[ -n "$(simnet_exec_sim ss "$1" "src $2 and sport = :$3")" ]
}

simnet_slowdns() { # simnet_slowdns [DELAY_MS]
	local bin=${SIMNET_SLOWDNS:-${BUILD_DIR:-}/tests/support/slowdns}
	if [ ! -x "$bin" ]; then
		simnet_log "slowdns not built ($bin); set SIMNET_SLOWDNS or BUILD_DIR"
		return 1
	fi
	simnet_spawn "$SIMNET_SIM" "$SIMNET_DIR/slowdns.out" \
		"$bin" --listen "$SIMNET_SLOW_V4" --port 53 --upstream "$SIMNET_SIM_V4" --delay-ms "${1:-20}"
	simnet_poll 5 simnet_exec_sim dig @"$SIMNET_SLOW_V4" +time=1 +tries=1 simnet-ready.invalid A ||
		{ simnet_log "slowdns did not come up: $(tail -3 "$SIMNET_DIR/slowdns.out" 2>/dev/null)"; return 1; }
}

# Kill a PID we started and every process below it (socat's per-connection
# children), by PID only.
simnet_kill_tree() { # simnet_kill_tree PID
	local pid=$1 child
	for child in $(pgrep -P "$pid" 2>/dev/null); do
		simnet_kill_tree "$child"
	done
	kill "$pid" 2>/dev/null || true
}

simnet_down() {
	local pid
	for pid in "${SIMNET_PIDS[@]}"; do
		simnet_kill_tree "$pid"
	done
	for pid in "${SIMNET_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	SIMNET_PIDS=()
	[ -z "$SIMNET_SBX" ] || ip netns del "$SIMNET_SBX" 2>/dev/null || true
	[ -z "$SIMNET_SIM" ] || ip netns del "$SIMNET_SIM" 2>/dev/null || true
	SIMNET_SIM=""
	SIMNET_SBX=""
	if [ -n "$SIMNET_DIR" ] && [ -d "$SIMNET_DIR" ]; then
		if [ -n "${SIMNET_KEEP:-}" ]; then
			simnet_log "kept $SIMNET_DIR"
		else
			rm -rf "$SIMNET_DIR"
		fi
	fi
	SIMNET_DIR=""
}
