# netns_lib.sh - sourced by the test/hostile scripts that need two hosts:
# two network namespaces joined by a veth pair, made by the test and
# removed on every exit path (the caller's EXIT trap calls netns_down).
#
#   . "$(dirname "$0")/netns_lib.sh"
#   netns_require            # exit 77 (skip) unless root and ip(8)
#   netns_up p4x 10.80.0     # sets ns_a ns_b veth_a veth_b ip_a ip_b
#   ...                      # ip netns exec "$ns_a" ..., ip -n "$ns_b" ...
#   netns_down               # in the caller's cleanup
#
# ip_a = <net>.1 in ns_a, ip_b = <net>.2 in ns_b, /24, loopback up in
# both. Names carry the shell's pid so parallel tests do not collide.

ns_a= ns_b= veth_a= veth_b= ip_a= ip_b=

netns_skip() {
	echo "SKIP: $*"
	exit 77
}

netns_require() {
	[ "$(id -u)" = 0 ] || netns_skip "needs root for network namespaces"
	command -v ip >/dev/null 2>&1 || netns_skip "no ip(8)"
}

# netns_up PREFIX NET: the pair; skips (77) if the kernel will not
netns_up() {
	local prefix=$1 net=$2 ns

	ns_a=${prefix}_a_$$
	ns_b=${prefix}_b_$$
	veth_a=${prefix}a$$
	veth_b=${prefix}b$$
	ip_a=$net.1
	ip_b=$net.2
	ip netns add "$ns_a" 2>/dev/null ||
		netns_skip "cannot create network namespaces"
	ip netns add "$ns_b" || exit 1
	ip link add "$veth_a" type veth peer name "$veth_b" ||
		netns_skip "no veth"
	ip link set "$veth_a" netns "$ns_a" || exit 1
	ip link set "$veth_b" netns "$ns_b" || exit 1
	ip -n "$ns_a" addr add "$ip_a/24" dev "$veth_a" || exit 1
	ip -n "$ns_b" addr add "$ip_b/24" dev "$veth_b" || exit 1
	for ns in "$ns_a" "$ns_b"; do
		ip -n "$ns" link set lo up || exit 1
	done
	ip -n "$ns_a" link set "$veth_a" up || exit 1
	ip -n "$ns_b" link set "$veth_b" up || exit 1
}

# deleting a namespace takes its end of the veth (and so the pair) along
netns_down() {
	[ -n "$ns_a" ] && ip netns del "$ns_a" 2>/dev/null
	[ -n "$ns_b" ] && ip netns del "$ns_b" 2>/dev/null
	return 0
}
