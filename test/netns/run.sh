#!/bin/sh
# run.sh - the multi-host test: two network namespaces joined by a veth
# pair (10.77.0.1/24 and 10.77.0.2/24, 1 ms delay and 0.5% loss when tc
# netem is there), netns_peer as target in one and initiator in the
# other, over the TCP transport: eager put, rendezvous put, get. Then a
# silent cut (the veth goes down: no FIN, no RST reaches either end): a
# put after it must fail within the peer timeout. Needs root and `ip netns`; without them
# it says why and exits 77 (skipped). The namespaces and veth go away on
# every exit path.
#
# NETNS_PEER names the program; by default the one in the build tree
# ($P4_TEST_BUILDDIR/test/netns/netns_peer, or next to this script).
set -u

skip() { echo "SKIP: $*"; exit 77; }

peer=${NETNS_PEER:-${P4_TEST_BUILDDIR:-$(dirname "$0")/../..}/test/netns/netns_peer}
[ -x "$peer" ] || skip "netns_peer not built ($peer)"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "no ip(8)"

ns_a=p4t_a_$$
ns_b=p4t_b_$$
veth_a=p4a$$
veth_b=p4b$$
dir=$(mktemp -d) || exit 1
tpid=

cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns_a" 2>/dev/null || skip "cannot create network namespaces"
ip netns add "$ns_b" || exit 1
ip link add "$veth_a" type veth peer name "$veth_b" || skip "no veth"
ip link set "$veth_a" netns "$ns_a" || exit 1
ip link set "$veth_b" netns "$ns_b" || exit 1
ip -n "$ns_a" addr add 10.77.0.1/24 dev "$veth_a" || exit 1
ip -n "$ns_b" addr add 10.77.0.2/24 dev "$veth_b" || exit 1
for ns in "$ns_a" "$ns_b"; do
	ip -n "$ns" link set lo up || exit 1
done
ip -n "$ns_a" link set "$veth_a" up || exit 1
ip -n "$ns_b" link set "$veth_b" up || exit 1
if command -v tc >/dev/null 2>&1; then
	ip netns exec "$ns_a" tc qdisc add dev "$veth_a" root netem \
		delay 1ms loss 0.5% 2>/dev/null &&
		echo "netem: 1 ms delay, 0.5% loss on $veth_a"
fi

ip netns exec "$ns_a" "$peer" target 10.77.0.1 7700 "$dir/ready" &
tpid=$!
i=0
while [ ! -e "$dir/ready" ]; do
	kill -0 "$tpid" 2>/dev/null || { echo "FAIL: target died"; exit 1; }
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "FAIL: target not ready"; exit 1; }
	sleep 0.05
done

ip netns exec "$ns_b" "$peer" initiator 10.77.0.2 7700 10.77.0.1 7700
irc=$?
wait "$tpid"
trc=$?
tpid=
if [ $irc -ne 0 ] || [ $trc -ne 0 ]; then
	echo "FAIL: initiator $irc, target $trc"
	exit 1
fi
echo "PASS: eager put, rendezvous put and get across namespaces"

# ---- a silent cut: no FIN, no RST, packets just vanish ----
ip netns exec "$ns_a" "$peer" serve 10.77.0.1 7701 "$dir/sready" &
tpid=$!
i=0
while [ ! -e "$dir/sready" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "FAIL: server not ready"; exit 1; }
	sleep 0.05
done
ip netns exec "$ns_b" "$peer" cut 10.77.0.2 7701 10.77.0.1 7701 \
	"$dir/cready" "$dir/go" &
cpid=$!
i=0
while [ ! -e "$dir/cready" ]; do
	kill -0 "$cpid" 2>/dev/null || { echo "FAIL: cut peer died"; exit 1; }
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "FAIL: cut peer not ready"; exit 1; }
	sleep 0.05
done
ip -n "$ns_a" link set "$veth_a" down || exit 1
touch "$dir/go"
wait "$cpid"
crc=$?
[ $crc -eq 0 ] || { echo "FAIL: the cut went unnoticed ($crc)"; exit 1; }
echo "PASS: a silent cut fails the link within the peer timeout"
exit 0
