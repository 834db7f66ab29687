#!/usr/bin/env bash
# netcut.sh - a silent cut (no FIN, no RST) during transfers, bounded by
# FI_PORTALS_PEER_TIMEOUT (docs/robustness.md). Two network namespaces
# joined by a veth pair (10.78.0.1/24, 10.78.0.2/24). test/hostile/peerkill
# runs as survivor and healthy client in the first, the doomed client in
# the second; once the survivor has posted its eager and rendezvous sends
# to the doomed peer, the veth goes down (`ip link set down`: nothing
# reaches either end, no FIN). Every affected send must complete, with
# an error where it could not have succeeded, within the peer timeout
# plus 10 s; the healthy client keeps working; fi_close returns.
#
# Needs root and ip(8); otherwise it says why and exits 77 (skipped).
# P4_TEST_BUILDDIR (make check sets it) locates the program.
set -u

# shellcheck source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$builddir/test/hostile/peerkill
[ -x "$prog" ] || netns_skip "$prog not built"
netns_require
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH

dir=${NETCUT_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/netcut.XXXXXX")}
mkdir -p "$dir" || exit 2
spid= dpid= hpid= keep=1
cleanup() {
	for p in $spid $dpid $hpid; do kill -9 "$p" 2>/dev/null; done
	netns_down
	[ -z "${NETCUT_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; grep -v fi_getinfo "$f" | tail -n 30; done
	exit 1
}

netns_up p4h 10.78.0

export PEERKILL_READY=$dir/ready PEERKILL_KILLED=$dir/cut
export FI_PORTALS_PEER_TIMEOUT=${FI_PORTALS_PEER_TIMEOUT:-3000}
export PEERKILL_BOUND_MS=$((FI_PORTALS_PEER_TIMEOUT + 10000))
unset PEERKILL_REBORN
rm -f "$PEERKILL_READY" "$PEERKILL_KILLED"

ip netns exec "$ns_a" timeout 240 "$prog" -p portals -s 10.78.0.1 -n 2 \
	-B 0 -T 200 >"$dir/survivor.log" 2>&1 &
spid=$!
port=
for _ in $(seq 300); do
	port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' "$dir/survivor.log")
	[ -n "$port" ] && break
	kill -0 "$spid" 2>/dev/null || fail "survivor died at start"
	sleep 0.1
done
[ -n "$port" ] || fail "survivor did not print its OOB port"
PEERKILL_ROLE=doomed ip netns exec "$ns_b" timeout 240 "$prog" -p portals \
	-s 10.78.0.2 -P "$port" -T 200 10.78.0.1 >"$dir/doomed.log" 2>&1 &
dpid=$!
PEERKILL_ROLE=healthy ip netns exec "$ns_a" timeout 240 "$prog" -p portals \
	-s 10.78.0.1 -P "$port" -T 200 10.78.0.1 >"$dir/healthy.log" 2>&1 &
hpid=$!
for _ in $(seq 1200); do
	[ -e "$PEERKILL_READY" ] && break
	kill -0 "$spid" 2>/dev/null || fail "survivor died before the cut"
	sleep 0.1
done
[ -e "$PEERKILL_READY" ] || fail "survivor never got ready"
t_cut=$(date +%s%6N)
# down on the doomed side: the survivor's end stays up and sees nothing
ip -n "$ns_b" link set "$veth_b" down || fail "cannot take the veth down"
echo "$t_cut" >"$PEERKILL_KILLED.tmp" && mv "$PEERKILL_KILLED.tmp" "$PEERKILL_KILLED"
wait "$hpid"; hrc=$?; hpid=
wait "$spid"; src=$?; spid=
kill -9 "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=
[ "$src" = 0 ] || fail "survivor failed ($src)"
[ "$hrc" = 0 ] || fail "healthy client failed ($hrc)"
echo "silent cut, FI_PORTALS_PEER_TIMEOUT=$FI_PORTALS_PEER_TIMEOUT ms:"
grep '^peerkill_' "$dir/survivor.log"
keep=0
echo "PASS"
exit 0
