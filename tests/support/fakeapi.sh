#!/usr/bin/env bash
# The scripted fake Anthropic Messages API (fake-anthropic.py) served as
# api.anthropic.com in the simulated internet. Source after simnet.sh:
#
#   . "$SOURCE_DIR/tests/support/simnet.sh"
#   . "$SOURCE_DIR/tests/support/fakeapi.sh"
#   simnet_up "cs-x-$$"
#   fakeapi_up SCRIPT.json        # CA, certificate, DNS records, server on :443
#   NODE_EXTRA_CA_CERTS=$FAKEAPI_CA ANTHROPIC_API_KEY=dummy claude -p ...
#   fakeapi_results               # every tool_result the agent sent, one JSON line each
#
# Variables set by fakeapi_up: FAKEAPI_DIR, FAKEAPI_CA (the CA certificate
# to trust), FAKEAPI_LOG (fake-anthropic.py's JSON-lines request log),
# FAKEAPI_HOST4/6 (the fake host's addresses). simnet_down stops the server.

# shellcheck disable=SC2034 # FAKEAPI_* are read by the sourcing test
FAKEAPI_SRC=${FAKEAPI_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}

# A throw-away CA and a certificate for api.anthropic.com signed by it,
# made at test time (nothing secret is stored in the repository).
fakeapi_certs() { # fakeapi_certs DIR
	local d=$1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=code-sandbox test CA" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$d/ca.key" -out "$d/ca.pem" >/dev/null 2>&1 &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/CN=api.anthropic.com" -keyout "$d/server.key" -out "$d/server.csr" >/dev/null 2>&1 &&
		printf 'subjectAltName=DNS:api.anthropic.com\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$d/ext.cnf" &&
		openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
			-days 2 -extfile "$d/ext.cnf" -out "$d/server.pem" >/dev/null 2>&1 &&
		chmod 0644 "$d/ca.pem"
}

fakeapi_up() { # fakeapi_up SCRIPT.json [ADDR4 ADDR6]
	local script=${1:?usage: fakeapi_up SCRIPT [ADDR4 ADDR6]}
	FAKEAPI_HOST4=${2:-198.51.100.30}
	FAKEAPI_HOST6=${3:-2001:db8::30}
	FAKEAPI_DIR="$SIMNET_DIR/fakeapi"
	mkdir -p "$FAKEAPI_DIR" && chmod 0755 "$FAKEAPI_DIR" || return 1
	fakeapi_certs "$FAKEAPI_DIR" || { simnet_log "fakeapi: openssl failed"; return 1; }
	FAKEAPI_CA="$FAKEAPI_DIR/ca.pem"
	FAKEAPI_LOG="$FAKEAPI_DIR/requests.jsonl"
	: >"$FAKEAPI_LOG"
	rm -f "$FAKEAPI_DIR/ready"
	simnet_add_host "$FAKEAPI_HOST4" "$FAKEAPI_HOST6" || return 1
	simnet_spawn "$SIMNET_SIM" "$FAKEAPI_DIR/server.out" python3 "$FAKEAPI_SRC/fake-anthropic.py" \
		--listen "$FAKEAPI_HOST4" --listen "$FAKEAPI_HOST6" --port 443 \
		--cert "$FAKEAPI_DIR/server.pem" --key "$FAKEAPI_DIR/server.key" \
		--script "$script" --log "$FAKEAPI_LOG" --ready "$FAKEAPI_DIR/ready"
	simnet_poll 10 test -s "$FAKEAPI_DIR/ready" ||
		{ simnet_log "fakeapi did not start: $(tail -3 "$FAKEAPI_DIR/server.out" 2>/dev/null)"; return 1; }
	simnet_dns_set api.anthropic.com "$FAKEAPI_HOST4" "$FAKEAPI_HOST6"
}

# The tool results the agent sent back, in order (one JSON object a line).
fakeapi_results() {
	python3 -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for t in r.get("tool_results") or []:
        if t["tool_use_id"] not in seen:
            seen.add(t["tool_use_id"])
            print(json.dumps(t))
' "$FAKEAPI_LOG"
}

# The result of the scripted tool call number N (0-based, in script order).
fakeapi_result() { # fakeapi_result N
	fakeapi_results | awk -v n="$1" 'NR == n + 1'
}

fakeapi_main_requests() { # how many tool-offering requests the agent made
	grep -c '"kind": "main"' "$FAKEAPI_LOG" || true
}
