#!/usr/bin/env bash
# The baseline the firewall start-up benchmark compares against: a faithful
# script of today's common practice for sandboxing coding agents (the
# "init-firewall.sh" pattern of dev containers): resolve each allowed
# domain once with dig, one after another, then add one iptables ACCEPT rule
# per address, with the usual preamble (flush; loopback, DNS and established
# traffic allowed) and policy DROP at the end. IPv6 is left open, as that
# practice does. Usage:
#
#   fw-baseline.sh DOMAINS_FILE      (one name per line, '#' comments)
#
# It changes the firewall of the network namespace it runs in, so it refuses
# to run in the machine's initial one: run it inside the simulated
# internet's sbx namespace (ip netns exec ... ) with its resolv.conf. It
# prints nothing on success; the caller times it.
set -euo pipefail

list=${1:?usage: fw-baseline.sh DOMAINS_FILE}

# The initial network namespace is PID 1's. Some hosts deny reading PID 1's
# namespace links (a VM's init that is not dumpable); kthreadd (PID 2, a
# kernel thread) always lives in the initial namespace, so use it then. If
# neither can be read, refuse: fail closed.
self_ns=$(readlink /proc/self/ns/net 2>/dev/null || true)
init_ns=$(readlink /proc/1/ns/net 2>/dev/null || true)
if [ -z "$init_ns" ] && [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	init_ns=$(readlink /proc/2/ns/net 2>/dev/null || true)
fi
if [ -z "$self_ns" ] || [ -z "$init_ns" ] || [ "$self_ns" = "$init_ns" ]; then
	echo "fw-baseline.sh: refusing to touch the initial network namespace (or cannot tell)" >&2
	exit 2
fi

# Preamble: start from nothing, keep loopback, DNS and replies working.
iptables -F
iptables -X
iptables -A INPUT -i lo -j ACCEPT
iptables -A OUTPUT -o lo -j ACCEPT
iptables -A OUTPUT -p udp --dport 53 -j ACCEPT
iptables -A INPUT -p udp --sport 53 -j ACCEPT
iptables -A OUTPUT -p tcp --dport 53 -j ACCEPT
iptables -A INPUT -p tcp --sport 53 -m state --state ESTABLISHED -j ACCEPT
iptables -A INPUT -m state --state ESTABLISHED,RELATED -j ACCEPT
iptables -A OUTPUT -m state --state ESTABLISHED,RELATED -j ACCEPT

# One name at a time, one rule per address.
while IFS= read -r domain || [ -n "$domain" ]; do
	domain=${domain%%#*}
	domain=${domain//[[:space:]]/}
	[ -n "$domain" ] || continue
	ips=$(dig +short A "$domain")
	if [ -z "$ips" ]; then
		echo "fw-baseline.sh: failed to resolve $domain" >&2
		continue
	fi
	while IFS= read -r ip; do
		# dig +short also prints CNAME targets; keep the addresses.
		if [[ $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
			iptables -A OUTPUT -d "$ip" -j ACCEPT
		fi
	done <<<"$ips"
done <"$list"

# Default deny (IPv4 only: ip6tables is never touched).
iptables -P INPUT DROP
iptables -P FORWARD DROP
iptables -P OUTPUT DROP
iptables -A OUTPUT -j REJECT --reject-with icmp-admin-prohibited
