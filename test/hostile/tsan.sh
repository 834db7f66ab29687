#!/usr/bin/env bash
# tsan.sh - the threaded cases under ThreadSanitizer (docs/robustness.md).
# Configures (--enable-debug, so the provider's lock assertions run too)
# and builds the provider, the fabtests-ext programs and the threaded unit
# tests with -fsanitize=thread in a directory of its own, then runs:
#   1. the thread-level matrix of fabtests-ext/run.sh (every fx_threads
#      case: -L domain / completion / endpoint / fid / safe, manual and
#      FI_PROGRESS_AUTO, 2 and 4 threads, and blocking fi_cq_sread on
#      shared CQs; fx_threads' header says what each level runs);
#   2. the unit-test suites that start threads (grep -l pthread_create):
#      test/unit/prov test_eq, test_cq_wait, test_cntr, test_progress,
#      test_progress_wake; test/unit/native test_native_api,
#      test_native_data, test_native_wait, test_native_abort;
#      test/unit/util test_list, test_log, test_spin;
#      test/unit/engine test_loop, test_eng_atomic_rules, and of
#      test_atomic and test_shm_bell their one threaded test. Criterion's runner cannot start
#      under TSan on its own (its sandbox maps its arena where TSan keeps
#      shadow memory): tsan_criterion.c, preloaded, moves that arena;
#   3. every fabtests-ext program with -a (FI_PROGRESS_AUTO): the
#      domain's progress thread runs against the application thread in
#      each of them (RMA, atomics, triggered ops, multi-recv, cancel,
#      peek/claim, resource exhaustion, blocking sread...);
#   4. test/hostile/cqstall.sh (manual, and FI_PROGRESS_AUTO with
#      FI_THREAD_SAFE: the progress thread fills a CQ the application
#      reads later).
# TSan's halt_on_error makes a report fail its process (exit 66), so a
# race fails its case; on top of that every log is searched for a
# ThreadSanitizer report, and one anywhere fails the pass. Reports stay
# in $TSAN_BUILDDIR/tsan-logs.
#
#   test/hostile/tsan.sh            all of the above
#   test/hostile/tsan.sh --ci       1 and 2 (what `./quickstart test` runs)
#   test/hostile/tsan.sh case ...   only these run.sh cases
#
# Suppressions (TSAN_OPTIONS suppressions=) are in test/hostile/tsan.supp,
# for code outside the project only. TSAN_BUILDDIR (default
# <source>/_build_tsan) is the build directory; it is reused when it was
# configured with the same arguments. On 2 cores the build takes about
# 1.5 minutes from scratch, 1 and 2 about 3 minutes, 3 and 4 1.5 more.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${TSAN_BUILDDIR:-$top/_build_tsan}
jobs=${TSAN_JOBS:-2}
supp=$top/test/hostile/tsan.supp

ci=0
if [ "${1:-}" = --ci ]; then
	ci=1
	shift
fi

# the unit-test suites that start threads (grep -l pthread_create), and a
# Criterion --filter where only some of a suite's tests do
units_filtered="
test/unit/prov/test_eq
test/unit/prov/test_cq_wait
test/unit/prov/test_cntr
test/unit/prov/test_progress
test/unit/prov/test_progress_wake
test/unit/native/test_native_api
test/unit/native/test_native_data
test/unit/native/test_native_wait
test/unit/native/test_native_abort
test/unit/util/test_list
test/unit/util/test_log
test/unit/util/test_spin
test/unit/engine/test_loop
test/unit/engine/test_eng_atomic_rules
test/unit/engine/test_atomic atomic/two_thread_sums
test/unit/engine/test_shm_bell shm_bell/two_producer_threads_ring_one_consumer
"
units=$(echo "$units_filtered" | awk 'NF { print $1 }')

t_start=$(date +%s)
mkdir -p "$bdir" || exit 2
cd "$bdir" || exit 2
# configured once; again (after make distclean) if the arguments changed
conf_args=(--enable-debug "CFLAGS=-g -O1 -fsanitize=thread"
	"LDFLAGS=-fsanitize=thread")
if [ ! -f Makefile ] ||
	[ "$(cat tsan-configure.args 2>/dev/null)" != "${conf_args[*]}" ]; then
	if [ -f Makefile ]; then
		echo "tsan.sh: configure arguments changed: make distclean"
		make distclean >/dev/null 2>&1
	fi
	echo "tsan.sh: configuring $bdir (${conf_args[*]})"
	# (relative: configure refuses a source path with a space)
	"$(realpath --relative-to=. "$top")/configure" -q "${conf_args[@]}" \
		>configure.out 2>&1 ||
		{ tail -20 configure.out; exit 1; }
	echo "${conf_args[*]}" >tsan-configure.args
fi
echo "tsan.sh: building in $bdir"
fx_bins=$(sed -n 's/^\t\(fabtests-ext\/fx_[a-z]*\).*/\1/p' \
	"$top/fabtests-ext/Makefile.include")
# shellcheck disable=SC2086 # the programs are words
if ! nice -n 10 make -j"$jobs" >make.out 2>&1 ||
	! nice -n 10 make -j"$jobs" $fx_bins $units >>make.out 2>&1; then
	tail -30 make.out
	echo "tsan.sh: FAIL: the build failed"
	exit 1
fi
shim=$bdir/tsan_criterion.so
if ! "${CC:-cc}" -shared -fPIC -O2 -Wall -o "$shim" \
	"$top/test/hostile/tsan_criterion.c" -ldl >>make.out 2>&1; then
	tail -10 make.out
	echo "tsan.sh: FAIL: building tsan_criterion.so failed"
	exit 1
fi
t_built=$(date +%s)
echo "tsan.sh: built in $((t_built - t_start)) s"

export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$supp ${TSAN_OPTIONS:-}"
# libfabric's psm provider (libinfinipath) would catch SIGSEGV/SIGABRT to
# print a backtrace with malloc in the handler, which TSan reports as a
# signal-unsafe call; without it TSan reports the signal itself, symbolized
export IPATH_NO_BACKTRACE=1
export P4_TEST_BUILDDIR=$bdir
export FI_PROVIDER_PATH=$bdir/.libs
run="$top/fabtests-ext/run.sh"
logs=$bdir/tsan-logs
rm -rf "$logs"
mkdir -p "$logs" || exit 2

failed=""
# part NAME COMMAND...: runs one part with its logs in $logs/NAME
part() {
	local name=$1
	shift
	mkdir -p "$logs/$name"
	if ! FX_LOGDIR=$logs/$name CQSTALL_LOGDIR=$logs/$name "$@"; then
		failed="$failed $name"
	fi
}

# the unit tests, one suite at a time, one test at a time within it
# shellcheck disable=SC2317 # called through part()
units_run() {
	local u filter rc=0 out t0

	while read -r u filter; do
		[ -n "$u" ] || continue
		out=$logs/units/$(basename "$u").log
		t0=$(date +%s)
		if LD_PRELOAD=$shim timeout -k 5 600 "$bdir/$u" --jobs 1 \
			${filter:+--filter "$filter"} >"$out" 2>&1; then
			echo "  PASS  $u${filter:+ ($filter)}," \
				"$(($(date +%s) - t0)) s:" \
				"$(grep -m1 'Synthesis' "$out" |
					sed 's/.*Synthesis: //')"
		else
			echo "  FAIL  $u${filter:+ ($filter)} (exit $?):"
			tail -n 25 "$out" | sed 's/^/    /'
			rc=1
		fi
	done <<EOF
$units_filtered
EOF
	return "$rc"
}

if [ $# -gt 0 ]; then
	part cases bash "$run" -j 1 -k "$@"
else
	echo "tsan.sh: 1. the thread matrix (run.sh fx_threads)"
	part matrix bash "$run" -j 2 -k fx_threads
	echo "tsan.sh: 2. the threaded unit tests"
	part units units_run
	if [ "$ci" = 0 ]; then
		echo "tsan.sh: 3. every program with FI_PROGRESS_AUTO"
		cases=$logs/auto-cases
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
		part auto env FX_CASES_FILE="$cases" bash "$run" -j 2 -k
		echo "tsan.sh: 4. cqstall.sh"
		part cqstall bash "$top/test/hostile/cqstall.sh"
	fi
fi

# a report anywhere fails the pass, whatever the exit status said
tsan_re='(WARNING|ERROR|FATAL): ThreadSanitizer'
reports=$(grep -rlE "$tsan_re" "$logs" 2>/dev/null)
t_end=$(date +%s)
echo "tsan.sh: $(echo "$reports" | grep -c .) log(s) with a ThreadSanitizer" \
	"report (build $((t_built - t_start)) s, runs $((t_end - t_built)) s)"
if [ -n "$reports" ]; then
	echo "tsan.sh: the reports, by kind and place (count):"
	# shellcheck disable=SC2086 # the files are words
	grep -hE "^SUMMARY: ThreadSanitizer|$tsan_re" $reports |
		grep -v '^WARNING' | sed 's/ (pid=[0-9]*)//' | sort | uniq -c |
		sort -rn | sed 's/^/  /'
	# the first report of the first few logs, top frames only
	for f in $(echo "$reports" | head -n 4); do
		echo "---- $f (first report, top frames)"
		sed -E -n "/$tsan_re/,/^SUMMARY/p" "$f" | sed -E -n \
			-e "/$tsan_re/p" -e '/^  [A-Z]/p' -e '/^    #[0-3] /p' \
			-e '/^SUMMARY/q' | head -n 40
	done
fi
if [ -z "$failed" ] && [ -z "$reports" ]; then
	echo "tsan.sh: PASS, no ThreadSanitizer report"
	exit 0
fi
echo "tsan.sh: FAIL:${failed:+ failed parts:$failed;}" \
	"${reports:+ThreadSanitizer reports in the logs above;} logs in $logs"
exit 1
