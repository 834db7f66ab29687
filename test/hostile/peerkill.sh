#!/usr/bin/env bash
# peerkill.sh - a peer killed with SIGKILL in the middle of an 8 MiB
# stream (docs/robustness.md, rows 2 and 11). Two cases, each with a
# survivor, the doomed peer and a healthy client, all three of one program:
#   receiver  test/hostile/peerkill: the doomed peer receives the stream
#             (and eager, rendezvous and RMA operations) from the survivor;
#   sender    test/hostile/peerkill_sender: it sends the stream (each
#             message with an eager one behind it) to the survivor's
#             posted receives.
# The survivor writes its ready mark once the stream flows and a transfer
# is in flight, and makes no provider call until this script has killed
# the doomed peer (at once: it polls the mark every 10 ms), reaped it and
# written the time of the kill: the kill lands in the middle of that
# transfer every time (the programs' headers say why). The survivor
# checks that every operation the kill cut failed within the bound and
# none succeeded without all its data, that the kill did cut a transfer
# (PEERKILL_STREAM_CUT=1), that it served the healthy client before and
# after, and closed cleanly; then the killed peer is restarted on its
# address and the survivor reaches it again (receiver: after removing and
# re-inserting it in its AV; sender: the new process fills every receive
# the survivor had left posted).
#
# Three passes: over shared memory (same-host peers, the default; an
# 8 MiB message is read by cross-memory attach while the sender streams
# it through the ring from the front), with FI_PORTALS_SHM_CMA=0
# (copied through the ring; the sender's cut message must have part of
# its data in, PEERKILL_PARTIAL=1), where the survivor must also have
# unmapped the dead peer's segment (/proc/<pid>/maps) and nothing may
# appear in /dev/shm, and with FI_PORTALS_SHM=0 over TCP (partial too),
# in a network namespace of its own (below).
#
# P4_TEST_BUILDDIR (make check sets it) locates the programs and, unless
# FI_PROVIDER_PATH is set, the plug-in. PEERKILL_LOGDIR keeps the logs;
# PEERKILL_CASES picks cases ("receiver sender").
set -u

if [ -z "${PEERKILL_PASS:-}" ]; then
	PEERKILL_PASS=shm "$0" || exit $?
	PEERKILL_PASS=shm-ring FI_PORTALS_SHM_CMA=0 PEERKILL_PARTIAL=1 "$0" ||
		exit $?
	PEERKILL_PASS=tcp FI_PORTALS_SHM=0 PEERKILL_PARTIAL=1 "$0" || exit $?
	exit 0
fi

# Over TCP the kernel's socket buffers (here up to tcp_rmem's 32 MiB) may
# hold the rest of a message whose sender dies, and the receive then
# rightly completes: the pass runs in a network namespace of its own
# whose buffers hold at most 1 MiB a direction (root and ip(8); else in
# this one, and the sender's cut is not required).
if [ "$PEERKILL_PASS" = tcp ] && [ -z "${PEERKILL_NS:-}" ]; then
	ns=pk_$$
	if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 &&
	   ip netns add "$ns" 2>/dev/null; then
		trap 'ip netns del "$ns" 2>/dev/null' EXIT
		trap 'exit 1' INT TERM
		ip -n "$ns" link set lo up &&
		ip netns exec "$ns" sysctl -q -w \
			net.ipv4.tcp_rmem="4096 131072 1048576" \
			net.ipv4.tcp_wmem="4096 16384 1048576" &&
		PEERKILL_NS=$ns ip netns exec "$ns" "$0"
		exit $?
	fi
	echo "not in a namespace of its own: the host's socket buffers"
	PEERKILL_NS=none
fi

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for p in peerkill peerkill_sender; do
	[ -x "$builddir/test/hostile/$p" ] ||
		{ echo "SKIP: $builddir/test/hostile/$p not built"; exit 77; }
done
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
# the survivor's mappings of shared-memory segments (one per shm link);
# $1 is timeout(1)'s pid, the survivor its child
segs() {
	local c
	c=$(pgrep -P "$1" | head -1)
	grep -c 'memfd:portals-shm' "/proc/${c:-$1}/maps" 2>/dev/null
}
# the provider never makes a file there; other programs do (Open MPI,
# Criterion), so only names that could be ours are looked for
ours_in_dev_shm() { ls /dev/shm 2>/dev/null | grep -i 'portals\|p4t'; }
shm_before=$(ours_in_dev_shm)

top=${PEERKILL_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/peerkill.XXXXXX")}
dir=$top
spid= dpid= hpid= rpid= keep=1
cleanup() {
	for p in $spid $dpid $hpid $rpid; do kill -9 "$p" 2>/dev/null; done
	[ -z "${PEERKILL_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$top"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
	exit 1
}

# a short peer timeout bounds the case where the kill is not seen as a
# reset (it is, on loopback); the survivor's bound is that plus slack
export FI_PORTALS_PEER_TIMEOUT=${FI_PORTALS_PEER_TIMEOUT:-5000}
export PEERKILL_BOUND_MS=$((FI_PORTALS_PEER_TIMEOUT + 10000))
# a send to the dead address fails once its connects were refused this
# long (default 2 s)
export FI_PORTALS_CONNECT_RETRY_MS=${FI_PORTALS_CONNECT_RETRY_MS:-300}

# one case: $1 its name, $2 the program
run_case() {
	local prog=$builddir/test/hostile/$2 port= rip rport
	local segs_live segs_after t_kill rrc hrc src

	echo "== peerkill over $PEERKILL_PASS: the killed peer is the $1"
	# the kill must cut a transfer (see above for TCP's buffers)
	export PEERKILL_STREAM_CUT=1
	[ "$1" = sender ] && [ "${PEERKILL_NS:-}" = none ] &&
		PEERKILL_STREAM_CUT=0
	dir=$top/$PEERKILL_PASS-$1
	mkdir -p "$dir" || exit 2
	export PEERKILL_READY=$dir/ready PEERKILL_KILLED=$dir/killed
	export PEERKILL_PORT=$dir/port PEERKILL_REBORN=$dir/reborn
	rm -f "$PEERKILL_READY" "$PEERKILL_KILLED" "$PEERKILL_PORT" \
		"$PEERKILL_REBORN"

	timeout 240 "$prog" -p portals -n 2 -B 0 -T 200 \
		>"$dir/survivor.log" 2>&1 &
	spid=$!
	for _ in $(seq 300); do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' \
			"$dir/survivor.log")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || fail "survivor died at start"
		sleep 0.1
	done
	[ -n "$port" ] || fail "survivor did not print its OOB port"
	# not under timeout(1): $dpid must be the process itself, for SIGKILL
	PEERKILL_ROLE=doomed "$prog" -p portals -P "$port" -T 200 127.0.0.1 \
		>"$dir/doomed.log" 2>&1 &
	dpid=$!
	PEERKILL_ROLE=healthy timeout 240 "$prog" -p portals -P "$port" \
		-T 200 127.0.0.1 >"$dir/healthy.log" 2>&1 &
	hpid=$!
	# the mark comes once the stream flows: kill at once, mid-transfer
	for _ in $(seq 12000); do
		[ -e "$PEERKILL_READY" ] && break
		kill -0 "$spid" 2>/dev/null ||
			fail "survivor died before the kill"
		kill -0 "$dpid" 2>/dev/null || fail "doomed peer died early"
		sleep 0.01
	done
	[ -e "$PEERKILL_READY" ] || fail "survivor never got ready"
	t_kill=$(date +%s%6N)
	kill -9 "$dpid"
	# gone for good (reaped) before the survivor, which waits for this
	# file without progress, goes on
	wait "$dpid" 2>/dev/null; dpid=
	echo "$t_kill" >"$PEERKILL_KILLED.tmp" &&
		mv "$PEERKILL_KILLED.tmp" "$PEERKILL_KILLED"
	# the peer comes back on the same address
	for _ in $(seq 600); do
		[ -s "$PEERKILL_PORT" ] && break
		kill -0 "$spid" 2>/dev/null ||
			fail "survivor died before the restart"
		sleep 0.1
	done
	read -r rip rport <"$PEERKILL_PORT" ||
		fail "survivor did not say the port"
	# every error seen: the dead peer's segment is gone, the healthy
	# one's kept (the survivor counted its own just before its mark)
	segs_live=$(sed -n 's/^peerkill_segments \([0-9]*\).*/\1/p' \
		"$dir/survivor.log")
	segs_after=$(segs "$spid")
	if [ "$PEERKILL_PASS" != tcp ]; then
		[ "$segs_live" -ge 2 ] ||
			fail "over shm the survivor mapped $segs_live segments, not 2"
		[ "$segs_after" = $((segs_live - 1)) ] ||
			fail "segments mapped: $segs_live before the kill, $segs_after after"
		echo "survivor: $segs_live shm segments mapped before the kill, $segs_after after its errors"
	else
		[ "$segs_live" = 0 ] ||
			fail "FI_PORTALS_SHM=0 but $segs_live segments"
	fi
	PEERKILL_ROLE=reborn PEERKILL_IP=$rip FI_PORTALS_PORT_LOW=$rport \
		FI_PORTALS_PORT_HIGH=$rport timeout 120 "$prog" -p portals \
		-T 100 >"$dir/reborn.log" 2>&1 &
	rpid=$!
	wait "$rpid"; rrc=$?; rpid=
	[ "$rrc" = 0 ] || fail "restarted peer failed ($rrc)"
	wait "$hpid"; hrc=$?; hpid=
	wait "$spid"; src=$?; spid=
	[ "$src" = 0 ] || fail "survivor failed ($src)"
	[ "$hrc" = 0 ] || fail "healthy client failed ($hrc)"
	grep -h '^peerkill_' "$dir/survivor.log" "$dir/reborn.log"
	[ "$(ours_in_dev_shm)" = "$shm_before" ] ||
		fail "/dev/shm has new entries: $(ours_in_dev_shm)"
}

for c in ${PEERKILL_CASES:-receiver sender}; do
	case $c in
	receiver) run_case receiver peerkill ;;
	sender) run_case sender peerkill_sender ;;
	*) echo "unknown case $c"; exit 2 ;;
	esac
done
keep=0
echo "PASS"
exit 0
