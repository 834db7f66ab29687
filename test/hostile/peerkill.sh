#!/usr/bin/env bash
# peerkill.sh - a peer killed with SIGKILL during eager and rendezvous
# transfers (docs/robustness.md): runs test/hostile/peerkill as survivor,
# doomed and healthy client, kills the doomed one once the survivor has
# posted everything, and checks that the survivor saw every affected send
# complete (the rendezvous ones with errors) within the bound, served the
# healthy client throughout, and closed cleanly; then restarts the
# killed peer on its address and checks the survivor reaches it again
# after removing and re-inserting it in its AV.
#
# It runs twice: over shared memory (same-host peers, the default), where
# the survivor must also have unmapped the dead peer's segment
# (/proc/<pid>/maps) and nothing may appear in /dev/shm, and with
# FI_PORTALS_SHM=0 over TCP.
#
# P4_TEST_BUILDDIR (make check sets it) locates the program and, unless
# FI_PROVIDER_PATH is set, the plug-in. PEERKILL_LOGDIR keeps the logs.
set -u

if [ -z "${PEERKILL_PASS:-}" ]; then
	PEERKILL_PASS=shm "$0" || exit $?
	PEERKILL_PASS=tcp FI_PORTALS_SHM=0 "$0" || exit $?
	exit 0
fi
echo "== peerkill over $PEERKILL_PASS"

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$builddir/test/hostile/peerkill
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
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

dir=${PEERKILL_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/peerkill.XXXXXX")}
mkdir -p "$dir" || exit 2
spid= dpid= hpid= rpid= keep=1
cleanup() {
	for p in $spid $dpid $hpid $rpid; do kill -9 "$p" 2>/dev/null; done
	[ -z "${PEERKILL_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
	exit 1
}

export PEERKILL_READY=$dir/ready PEERKILL_KILLED=$dir/killed
export PEERKILL_PORT=$dir/port PEERKILL_REBORN=$dir/reborn
# a short peer timeout bounds the case where the kill is not seen as a
# reset (it is, on loopback); the survivor's bound is that plus slack
export FI_PORTALS_PEER_TIMEOUT=${FI_PORTALS_PEER_TIMEOUT:-5000}
export PEERKILL_BOUND_MS=$((FI_PORTALS_PEER_TIMEOUT + 10000))
rm -f "$PEERKILL_READY" "$PEERKILL_KILLED" "$PEERKILL_PORT" "$PEERKILL_REBORN"

timeout 240 "$prog" -p portals -n 2 -B 0 -T 200 >"$dir/survivor.log" 2>&1 &
spid=$!
port=
for _ in $(seq 300); do
	port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' "$dir/survivor.log")
	[ -n "$port" ] && break
	kill -0 "$spid" 2>/dev/null || fail "survivor died at start"
	sleep 0.1
done
[ -n "$port" ] || fail "survivor did not print its OOB port"
# not under timeout(1): $dpid must be the process itself, for SIGKILL
PEERKILL_ROLE=doomed "$prog" -p portals -P "$port" -T 200 127.0.0.1 \
	>"$dir/doomed.log" 2>&1 &
dpid=$!
PEERKILL_ROLE=healthy timeout 240 "$prog" -p portals -P "$port" -T 200 \
	127.0.0.1 >"$dir/healthy.log" 2>&1 &
hpid=$!
for _ in $(seq 1200); do
	[ -e "$PEERKILL_READY" ] && break
	kill -0 "$spid" 2>/dev/null || fail "survivor died before the kill"
	sleep 0.1
done
[ -e "$PEERKILL_READY" ] || fail "survivor never got ready"
segs_live=$(segs "$spid")
t_kill=$(date +%s%6N)
kill -9 "$dpid"
echo "$t_kill" >"$PEERKILL_KILLED.tmp" && mv "$PEERKILL_KILLED.tmp" "$PEERKILL_KILLED"
wait "$dpid" 2>/dev/null; dpid=
# the peer comes back on the same address: the survivor re-inserts it
for _ in $(seq 600); do
	[ -s "$PEERKILL_PORT" ] && break
	kill -0 "$spid" 2>/dev/null || fail "survivor died before the restart"
	sleep 0.1
done
read -r rip rport <"$PEERKILL_PORT" || fail "survivor did not say the port"
# every error seen: the dead peer's segment is gone, the healthy one's kept
segs_after=$(segs "$spid")
if [ "$PEERKILL_PASS" = shm ]; then
	[ "$segs_live" -ge 2 ] ||
		fail "over shm the survivor mapped $segs_live segments, not 2"
	[ "$segs_after" = $((segs_live - 1)) ] ||
		fail "segments mapped: $segs_live before the kill, $segs_after after"
	echo "survivor: $segs_live shm segments mapped before the kill, $segs_after after its errors"
else
	[ "$segs_live" = 0 ] || fail "FI_PORTALS_SHM=0 but $segs_live segments"
fi
PEERKILL_ROLE=reborn PEERKILL_IP=$rip FI_PORTALS_PORT_LOW=$rport \
	FI_PORTALS_PORT_HIGH=$rport timeout 120 "$prog" -p portals -T 100 \
	>"$dir/reborn.log" 2>&1 &
rpid=$!
wait "$rpid"; rrc=$?; rpid=
[ "$rrc" = 0 ] || fail "restarted peer failed ($rrc)"
wait "$hpid"; hrc=$?; hpid=
wait "$spid"; src=$?; spid=
[ "$src" = 0 ] || fail "survivor failed ($src)"
[ "$hrc" = 0 ] || fail "healthy client failed ($hrc)"
grep '^peerkill_' "$dir/survivor.log" "$dir/reborn.log"
[ "$(ours_in_dev_shm)" = "$shm_before" ] ||
	fail "/dev/shm has new entries: $(ours_in_dev_shm)"
keep=0
echo "PASS"
exit 0
