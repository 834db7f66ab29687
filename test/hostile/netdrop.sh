#!/usr/bin/env bash
# netdrop.sh - packet drop and a rate limit on the wire between two hosts
# (docs/robustness.md). Two network namespaces joined by a veth pair
# (netns_lib.sh, 10.79.0.1 and .2); fabtests-ext/fx_pingpong runs as
# server in one and client in the other, with data checks (-v), once
# with eager messages (1,000 B) and once with rendezvous ones (256 KiB),
# under:
#   clean   nothing in the way (the reference time)
#   drop    nftables drops NETDROP_PCT % (default 5) of the packets
#           entering each namespace at random (`numgen random mod 100 <
#           N drop`): TCP must recover every loss, nothing may be lost
#           or reordered above it
#   tbf     tc tbf limits both directions to NETDROP_RATE (default
#           10mbit)
# Every run must pass its data checks; the script prints each one's time
# and fails if nftables never dropped a packet or tbf never held one
# back. FI_PORTALS_PEER_TIMEOUT stays at its default (30 s): a slow or
# lossy link is not a dead peer.
#
# Needs root, ip(8), and nft(8) for "drop" / tc(8) for "tbf" (either is
# skipped, with a message, when its tool is missing; no tool at all, or
# no root: exit 77). P4_TEST_BUILDDIR locates the programs;
# NETDROP_LOGDIR keeps the logs.
set -u

# shellcheck source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$builddir/fabtests-ext/fx_pingpong
[ -x "$prog" ] || netns_skip "$prog not built (make check builds it)"
netns_require
have_nft=1 have_tc=1
command -v nft >/dev/null 2>&1 || have_nft=0
command -v tc >/dev/null 2>&1 || have_tc=0
[ $have_nft = 1 ] || [ $have_tc = 1 ] || netns_skip "neither nft(8) nor tc(8)"
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
pct=${NETDROP_PCT:-5}
rate=${NETDROP_RATE:-10mbit}

dir=${NETDROP_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/netdrop.XXXXXX")}
mkdir -p "$dir" || exit 2
spid= cpid= keep=1
cleanup() {
	for p in $spid $cpid; do kill "$p" 2>/dev/null; done
	netns_down
	[ -z "${NETDROP_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; tail -n 20 "$f"; done
	exit 1
}

netns_up p4d 10.79.0

# the two kinds of transfer: eager, rendezvous (above the 16 KiB default)
KINDS='eager:-S 1000 -I 300
rdzv:-S 262144 -I 20'

# run_pp name args...: one ping-pong, server in ns_a, client in ns_b
run_pp() {
	local name=$1 port= t0 ms
	shift
	t0=$(date +%s%N)
	ip netns exec "$ns_a" timeout 300 "$prog" -p portals -s "$ip_a" -B 0 \
		-T 280 -v "$@" >"$dir/$name.server.log" 2>&1 &
	spid=$!
	for _ in $(seq 600); do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' \
			"$dir/$name.server.log")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || fail "$name: server died at start"
		sleep 0.05
	done
	[ -n "$port" ] || fail "$name: server did not print its OOB port"
	ip netns exec "$ns_b" timeout 300 "$prog" -p portals -s "$ip_b" \
		-P "$port" -T 280 -v "$@" "$ip_a" >"$dir/$name.client.log" 2>&1 &
	cpid=$!
	wait "$cpid"; crc=$?; cpid=
	wait "$spid"; src=$?; spid=
	[ "$src" = 0 ] && [ "$crc" = 0 ] ||
		fail "$name: server $src, client $crc"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	printf 'netdrop %-12s PASS %6d ms  (fx_pingpong -v %s)\n' "$name" \
		"$ms" "$*"
}

# run_kinds label: both kinds of transfer
run_kinds() {
	local kind args
	while IFS=: read -r kind args; do
		# shellcheck disable=SC2086 # args are words
		run_pp "$1-$kind" $args
	done <<EOF
$KINDS
EOF
}

run_kinds clean

if [ $have_nft = 1 ]; then
	for ns in "$ns_a" "$ns_b"; do
		ip netns exec "$ns" nft -f - <<EOF || fail "nft rules"
table inet p4drop {
	chain in {
		type filter hook input priority 0; policy accept;
		numgen random mod 100 < $pct counter drop
	}
}
EOF
	done
	run_kinds "drop$pct%"
	dropped=0
	for ns in "$ns_a" "$ns_b"; do
		n=$(ip netns exec "$ns" nft list chain inet p4drop in |
			sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
		dropped=$((dropped + ${n:-0}))
		ip netns exec "$ns" nft delete table inet p4drop
	done
	echo "netdrop nftables dropped $dropped packets"
	[ "$dropped" -gt 0 ] || fail "nftables dropped nothing"
else
	echo "netdrop drop: skipped (no nft(8); Debian package nftables)"
fi

if [ $have_tc = 1 ]; then
	ip netns exec "$ns_a" tc qdisc add dev "$veth_a" root tbf rate "$rate" \
		burst 32kbit latency 400ms || fail "tc tbf on $veth_a"
	ip netns exec "$ns_b" tc qdisc add dev "$veth_b" root tbf rate "$rate" \
		burst 32kbit latency 400ms || fail "tc tbf on $veth_b"
	run_kinds "tbf$rate"
	over=0
	for pair in "$ns_a $veth_a" "$ns_b $veth_b"; do
		set -- $pair
		n=$(ip netns exec "$1" tc -s qdisc show dev "$2" |
			sed -n 's/.*overlimits \([0-9]*\).*/\1/p' | head -1)
		over=$((over + ${n:-0}))
	done
	echo "netdrop tbf held packets back $over times (overlimits)"
	[ "$over" -gt 0 ] || fail "tbf never limited anything"
else
	echo "netdrop tbf: skipped (no tc(8); Debian package iproute2)"
fi
keep=0
echo "PASS"
exit 0
