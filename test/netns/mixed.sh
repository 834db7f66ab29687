#!/bin/sh
# mixed.sh - one job, two "hosts" on one machine: two network namespaces
# joined by a veth pair (10.78.0.1/24, 10.78.0.2/24), each with a PID
# namespace of its own, two processes in each. fx_directed's server and
# one client run in the first, two clients in the second. Peers in one
# namespace must talk over shared memory, peers across over TCP (the
# host token differs and the abstract socket is not reachable): each
# process's FI_PORTALS_STATS line says which links it made. The same
# run with FI_PORTALS_SHM=0 makes every link a network one. Needs root,
# ip(8) and unshare(1); without them it says why and exits 77.
set -u

skip() { echo "SKIP: $*"; exit 77; }

b=${P4_TEST_BUILDDIR:-$(dirname "$0")/../..}
fx=$b/fabtests-ext/fx_directed
[ -x "$fx" ] || skip "fx_directed not built ($fx)"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
export FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$b/.libs}
export FI_PORTALS_STATS=1

# the two "hosts" (their names, veth and addresses 10.78.0.1 / .2)
. "$(dirname "$0")/../hostile/netns_lib.sh"
netns_require
dir=$(mktemp -d) || exit 1

cleanup() {
	netns_down
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

netns_up p4m 10.78.0
unshare --pid --fork --mount-proc true 2>/dev/null ||
	skip "cannot create PID namespaces"

# in_ns <ns> <script>: sh -c script in network namespace ns, in a PID
# namespace of its own (its /proc mounted, so pids read there are its)
in_ns() {
	ip netns exec "$1" unshare --pid --fork --mount-proc sh -c "$2"
}

# run <label> [VAR=value]: the job; logs in $dir/<label>.*
run() {
	label=$1 envset=${2:-}
	d=$dir/$label
	mkdir -p "$d"
	in_ns "$ns_a" "
		env $envset timeout 60 $fx -p portals -s $ip_a -B 0 -n 3 \
			-T 50 > $d/srv.log 2>&1 &
		srv=\$!
		i=0
		until grep -qs '^fx_oob_port ' $d/srv.log; do
			i=\$((i + 1)); [ \$i -lt 200 ] || exit 1; sleep 0.05
		done
		sed -n 's/^fx_oob_port //p' $d/srv.log > $d/port
		env $envset timeout 60 $fx -p portals -s $ip_a \
			-P \$(cat $d/port) -T 50 $ip_a > $d/a2.log 2>&1
		a2=\$?
		wait \$srv; s=\$?
		echo \$s > $d/srv.rc; echo \$a2 > $d/a2.rc
	" &
	apid=$!
	i=0
	while [ ! -s "$d/port" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "FAIL: $label: no server port"; \
			cat "$d/srv.log"; return 1; }
		sleep 0.05
	done
	in_ns "$ns_b" "
		for c in b1 b2; do
			env $envset timeout 60 $fx -p portals -s $ip_b \
				-P $(cat "$d/port") -T 50 $ip_a \
				> $d/\$c.log 2>&1 &
		done
		wait %1; echo \$? > $d/b1.rc
		wait %2; echo \$? > $d/b2.rc
	"
	wait $apid
	for p in srv a2 b1 b2; do
		[ "$(cat "$d/$p.rc" 2>/dev/null)" = 0 ] || {
			echo "FAIL: $label: $p exited $(cat "$d/$p.rc" \
				2>/dev/null)"; cat "$d/$p.log"; return 1; }
	done
}

# links <label> <proc>: "shm net" from the process's stats line
links() {
	sed -n 's/.*portals: stats: .* links_shm=\([0-9]*\) links_net=\([0-9]*\).*/\1 \2/p' \
		"$dir/$1/$2.log" | head -1
}

# expect <label> <proc> <shm> <net>
expect() {
	got=$(links "$1" "$2")
	if [ "$got" != "$3 $4" ]; then
		echo "FAIL: $1: $2 made links shm/net '$got', want '$3 $4'"
		cat "$dir/$1/$2.log"
		exit 1
	fi
}

run shm || exit 1
expect shm srv 1 2
expect shm a2 1 0
expect shm b1 0 1
expect shm b2 0 1
echo "PASS: same namespace over shared memory, across over TCP"

run tcp FI_PORTALS_SHM=0 || exit 1
expect tcp srv 0 3
expect tcp a2 0 1
expect tcp b1 0 1
expect tcp b2 0 1
echo "PASS: FI_PORTALS_SHM=0: every link over TCP"
exit 0
