#!/usr/bin/env bash
# tsan.sh - the threaded cases under ThreadSanitizer (docs/robustness.md).
# Configures and builds the provider and the fabtests-ext programs with
# -fsanitize=thread in a directory of its own, then runs, through
# fabtests-ext/run.sh:
#   1. the FI_THREAD_SAFE cases of run.sh:
#        threads        4 threads posting and reading CQs, on one
#                       endpoint and on one endpoint each
#        threads_sread  the same, blocking in fi_cq_sread on shared CQs
#        threads_auto   the same with FI_PROGRESS_AUTO
#   2. every fabtests-ext program with -a (FI_PROGRESS_AUTO): the
#      domain's progress thread runs against the application thread in
#      each of them (RMA, atomics, triggered ops, multi-recv, cancel,
#      peek/claim, resource exhaustion, blocking sread...);
#   3. test/hostile/cqstall.sh (manual, and FI_PROGRESS_AUTO with
#      FI_THREAD_SAFE: the progress thread fills a CQ the application
#      reads later).
# TSan's halt_on_error makes a report fail its process (exit 66), so a
# race fails its case; the reports stay in the logs run.sh keeps.
#
#   test/hostile/tsan.sh            all of the above
#   test/hostile/tsan.sh case ...   only these run.sh cases
#
# TSAN_BUILDDIR (default <source>/_build_tsan) is the build directory;
# it is reused when it exists. The build takes a few minutes on 2 cores
# and the runs about 2, so it is not part of `make check`.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${TSAN_BUILDDIR:-$top/_build_tsan}
jobs=${TSAN_JOBS:-2}

mkdir -p "$bdir" || exit 2
cd "$bdir" || exit 2
if [ ! -f Makefile ]; then
	echo "tsan.sh: configuring $bdir"
	"$top/configure" -q CFLAGS="-g -O1 -fsanitize=thread" \
		LDFLAGS="-fsanitize=thread" >configure.out 2>&1 ||
		{ tail -20 configure.out; exit 1; }
fi
echo "tsan.sh: building in $bdir"
fx_bins=$(sed -n 's/^\t\(fabtests-ext\/fx_[a-z]*\).*/\1/p' \
	"$top/fabtests-ext/Makefile.include")
# shellcheck disable=SC2086 # the programs are words
nice -n 10 make -j"$jobs" >make.out 2>&1 &&
	nice -n 10 make -j"$jobs" $fx_bins >>make.out 2>&1 ||
	{ tail -30 make.out; exit 1; }

export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export P4_TEST_BUILDDIR=$bdir
export FI_PROVIDER_PATH=$bdir/.libs
run="$top/fabtests-ext/run.sh"

if [ $# -gt 0 ]; then
	bash "$run" -j 1 "$@"
	exit
fi

rc=0
echo "tsan.sh: 1. FI_THREAD_SAFE cases"
bash "$run" -j 1 threads threads_sread threads_auto || rc=1

echo "tsan.sh: 2. every program with FI_PROGRESS_AUTO"
cases=$(mktemp "${TMPDIR:-/tmp}/tsan-cases.XXXXXX") || exit 2
trap 'rm -f "$cases"' EXIT
cat >"$cases" <<'EOF'
pingpong_auto   1  180  fx_pingpong -a -S all -I 2 -v
pingpong_sread  1  120  fx_pingpong -a -c sread -S 4096 -I 50 -v
bw_auto         1  120  fx_bw -a -S 65536 -v
unexpected_auto 1  120  fx_unexpected -a
directed_auto   3  120  fx_directed -a
peek_auto       1  120  fx_peek -a
multirecv_auto  1  120  fx_multirecv -a
cancel_auto     1  120  fx_cancel -a
trunc_auto      1  120  fx_trunc -a
cqdata_auto     1  120  fx_cqdata -a
selective_auto  1  120  fx_selective -a
resmgmt_auto    1  120  fx_resmgmt -a
rma_auto        1  120  fx_rma -a
access_auto     1  120  fx_access -a
trigger_auto    1  120  fx_trigger -a
EOF
FX_CASES_FILE=$cases bash "$run" -j 2 || rc=1

echo "tsan.sh: 3. cqstall.sh"
bash "$top/test/hostile/cqstall.sh" || rc=1
[ "$rc" = 0 ] && echo "tsan.sh: PASS, no ThreadSanitizer report"
exit "$rc"
