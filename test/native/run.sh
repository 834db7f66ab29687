#!/bin/sh
# run.sh - the programs written against the Portals 4 reference API
# (examples/portals4, test/native), each as separate processes talking
# over TCP on 127.0.0.1, started by native/ptlrun. Run from the build tree
# (make check does).
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
run="$srcdir/native/ptlrun"
rc=0

step() {
	echo "== $*"
	if ! "$@"; then
		echo "FAILED: $*"
		rc=1
	fi
}

step test/native/ptl_names
# unloaded while initialized (a plug-in that never called PtlFini). No
# leak check under ASan: dlclose takes libibverbs along, whose provider
# registrations (verbs_register_driver) are never freed, and LSan reports
# them from a module that is gone, where no suppression can name it.
step env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	test/native/ptl_unload "$PWD/.libs/libportals.so.0"
# the pkg-config file has every @variable@ substituted
step test -s native/portals4.pc
if grep -q '@' native/portals4.pc; then
	echo "FAILED: native/portals4.pc not substituted"
	rc=1
fi
step "$run" -n 2 -t 120 examples/portals4/ptl_pingpong 20
step "$run" -n 4 -t 120 examples/portals4/ptl_barrier 16
step "$run" -n 2 -t 120 test/native/ptl_quiet_target
step "$run" -n 2 -t 120 test/native/ptl_atomics
step "$run" -n 2 -t 120 test/native/ptl_trigchain
step "$run" -n 2 -t 120 test/native/ptl_unexpected
# the reference header's contract (issue 22): persistent searches, PtlAbort
# with threads, the limits table; over shared memory, then over TCP
for p in ptl_search ptl_abort ptl_limits; do
	step "$run" -n 2 -t 120 test/native/$p
	step env PTL_SHM=0 "$run" -n 2 -t 120 test/native/$p
done
# the single-process conformance tests again, over TCP this time
for t in test/unit/native/test_native_api test/unit/native/test_native_data \
	test/unit/native/test_native_wait test/unit/native/test_native_fidelity \
	test/unit/native/test_native_limits test/unit/native/test_native_abort; do
	[ -x "$t" ] && step env PTL_TEST_TRANSPORT=tcp "$t"
done
exit $rc
