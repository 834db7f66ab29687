#!/usr/bin/env bash
# run.sh - runs the fabtests-ext programs as server/client pairs on
# 127.0.0.1 and prints a PASS/FAIL table; exits non-zero if any case
# failed.
#
#   run.sh [-j N] [-k] [-l] [-n] [case|program ...]
#     -j N   cases run at the same time (default 2)
#     -k     keep the logs even if everything passed
#     -l     list the cases and exit
#     -n     negative self-check: every sender corrupts one byte of each
#            buffer (FX_CORRUPT=1); every case must then FAIL, reporting
#            a data mismatch
#     case|program   only these cases (a program name selects all of its)
#
# Environment: P4_TEST_BUILDDIR (the build directory; `make check` sets
# it) locates the programs in $P4_TEST_BUILDDIR/fabtests-ext and, unless
# FI_PROVIDER_PATH is set, the plug-in in $P4_TEST_BUILDDIR/.libs.
# FX_PROV picks the provider (default portals), FX_BINDIR overrides where
# the programs are, FX_LOGDIR where the logs go. FX_WRAP runs every
# process under a tool (e.g. valgrind; test/hostile/valgrind.sh), and
# FX_CASES_FILE replaces the case table below with that file's.
# FX_PASSES (portals only; default "shm tcp") runs every case once per
# pass: shm as configured (same-host peers over shared memory), tcp with
# FI_PORTALS_SHM=0 (named <case>@tcp).
#
# Every server listens on a port the kernel picks (-B 0) and prints it;
# the clients are started once it has, so cases can run in parallel
# without port clashes. Each process has its own alarm (-T) and runs
# under timeout(1) as well, so nothing hangs.

set -u

# name  clients  seconds  program and arguments
#
# threads_<level>_<m|a><n>: the thread-level matrix of fx_threads (see its
# header): -L level, manual (m) or FI_PROGRESS_AUTO (a) progress, n
# threads; threads_safe_m4 and threads_safe_a4 are the former threads and
# threads_auto cases.
FX_CASES='
bw              1  90  fx_bw -S all -v
pingpong        1  60  fx_pingpong -S all -v
pingpong_msg    1  60  fx_pingpong -e msg -S all -v -I 20
pingpong_sread  1  60  fx_pingpong -c sread -S all -I 10 -v
bw_msg          1  60  fx_bw -e msg -S 65536 -v
unexpected      1  60  fx_unexpected
unexpected_msg  1  60  fx_unexpected -e msg
flood           1  120 fx_flood
directed        3  60  fx_directed
directed_msg    3  60  fx_directed -e msg
peek            1  60  fx_peek
multirecv       1  60  fx_multirecv
cancel          1  60  fx_cancel
trunc           1  60  fx_trunc
trunc_msg       1  60  fx_trunc -e msg
cqdata          1  60  fx_cqdata
threads_sread   1  60  fx_threads -c sread -N 100
threads_domain_m2      1  60  fx_threads -L domain -t 2 -N 100
threads_domain_m4      1  60  fx_threads -L domain -t 4 -N 100
threads_domain_a2      1  60  fx_threads -L domain -a -t 2 -N 100
threads_domain_a4      1  60  fx_threads -L domain -a -t 4 -N 100
threads_completion_m2  1  60  fx_threads -L completion -t 2 -N 100
threads_completion_m4  1  60  fx_threads -L completion -t 4 -N 100
threads_completion_a2  1  60  fx_threads -L completion -a -t 2 -N 100
threads_completion_a4  1  60  fx_threads -L completion -a -t 4 -N 100
threads_endpoint_m2    1  60  fx_threads -L endpoint -t 2 -N 100
threads_endpoint_m4    1  60  fx_threads -L endpoint -t 4 -N 100
threads_endpoint_a2    1  60  fx_threads -L endpoint -a -t 2 -N 100
threads_endpoint_a4    1  60  fx_threads -L endpoint -a -t 4 -N 100
threads_safe_m2        1  60  fx_threads -L safe -t 2 -N 100
threads_safe_m4        1  60  fx_threads -L safe -t 4
threads_safe_a2        1  60  fx_threads -L safe -a -t 2 -N 100
threads_safe_a4        1  60  fx_threads -L safe -a -t 4 -N 100
threads_fid_m4         1  60  fx_threads -L fid -t 4 -N 100
threads_fid_a2         1  60  fx_threads -L fid -a -t 2 -N 100
selective       1  60  fx_selective
resmgmt         1  60  fx_resmgmt
resmgmt_sread   1  60  fx_resmgmt -c sread -W 64 -S 1048576
rma             1  90  fx_rma
access          1  60  fx_access
trigger         1  60  fx_trigger
close           1  90  fx_close -M close
close_auto      1  90  fx_close -M close -a
close_exit      1  30  fx_close -M close-exit:default
close_exit_ic   1  30  fx_close -M close-exit:inject_complete
close_exit_tc   1  30  fx_close -M close-exit:transmit_complete
close_exit_dc   1  30  fx_close -M close-exit:delivery_complete
close_exit_inj  1  30  fx_close -M close-exit:inject
close_exit_auto 1  30  fx_close -M close-exit:default -a
close_first     1  30  fx_close -M first
close_first_auto 1 30  fx_close -M first -a
close_connected 1  30  fx_close -M connected
close_refused   1  30  fx_close -M refused
close_dead      1  60  fx_close -M dead
close_dead_recv 1  30  fx_close -M dead-recv
'
if [ -n "${FX_CASES_FILE:-}" ]; then
	FX_CASES=$(cat "$FX_CASES_FILE") || exit 2
fi
wrap=${FX_WRAP:-}

jobs_max=2
keep=0
negative=0
while getopts "j:kln" opt; do
	case $opt in
	j) jobs_max=$OPTARG ;;
	k) keep=1 ;;
	l) echo "$FX_CASES" | sed '/^$/d'; exit 0 ;;
	n) negative=1 ;;
	*) sed -n '2,16s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

builddir=${P4_TEST_BUILDDIR:-}
bindir=${FX_BINDIR:-${builddir:+$builddir/fabtests-ext}}
bindir=${bindir:-$(dirname "$0")}
if [ -z "${FI_PROVIDER_PATH:-}" ] && [ -n "$builddir" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
prov=${FX_PROV:-portals}
logdir=${FX_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/fx-run.XXXXXX")}
mkdir -p "$logdir" || exit 2
if [ "$negative" = 1 ]; then
	export FX_CORRUPT=1
else
	unset FX_CORRUPT
fi

# the selected cases, one per line
# shellcheck source=../test/lib/cases.sh
. "$(dirname "$0")/../test/lib/cases.sh"
selected=$(p4_select_cases "$FX_CASES" "$@")
if [ -z "$selected" ]; then
	echo "run.sh: no case matches: $*" >&2
	exit 2
fi
# one line per case and pass; a pass other than shm names the case
# <case>@<pass>, and run_case sets FI_PORTALS_SHM=0 for @tcp
passes=${FX_PASSES:-shm tcp}
[ "$prov" = portals ] || passes=shm
selected=$(for pass in $passes; do
	echo "$selected" | while read -r name rest; do
		if [ "$pass" = shm ]; then
			echo "$name $rest"
		else
			echo "$name@$pass $rest"
		fi
	done
done)

# run_case name nclients seconds program args...: writes $logdir/name.res
run_case() {
	local name=$1 ncl=$2 secs=$3 prog=$4
	shift 4
	local bin=$bindir/$prog base=$logdir/$name t0 ms port="" spid pids i
	local rc=0
	local kill_after=$((secs + 10))

	case $name in
	*@tcp) export FI_PORTALS_SHM=0 ;;
	esac
	t0=$(date +%s%N)
	if [ ! -x "$bin" ]; then
		echo "$bin: not built" > "$base.server.log"
		echo "FAIL 0.0" > "$base.res"
		return
	fi
	# emptied here, not by the background redirection: that may come
	# after the first look below, which would read an earlier run's port
	: > "$base.server.log"
	# shellcheck disable=SC2086 # $wrap is a command line
	timeout -k 5 "$kill_after" $wrap "$bin" -p "$prov" -s 127.0.0.1 -B 0 \
		-n "$ncl" -T "$secs" "$@" > "$base.server.log" 2>&1 &
	spid=$!
	# wait for the server's OOB port (it prints it once listening)
	for i in $(seq 200); do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\)$/\1/p' \
			"$base.server.log")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	pids=""
	if [ -n "$port" ]; then
		for i in $(seq "$ncl"); do
			# shellcheck disable=SC2086
			timeout -k 5 "$kill_after" $wrap "$bin" -p "$prov" \
				-s 127.0.0.1 -P "$port" -T "$secs" "$@" \
				127.0.0.1 > "$base.client$i.log" 2>&1 &
			pids="$pids $!"
		done
	else
		echo "run.sh: the server printed no OOB port" \
			>> "$base.server.log"
		rc=1
		kill "$spid" 2>/dev/null
	fi
	for p in $pids; do
		wait "$p" || rc=1
	done
	wait "$spid" || rc=1
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "$([ $rc = 0 ] && echo PASS || echo FAIL)" \
		"$((ms / 1000)).$((ms % 1000 / 100))" > "$base.res"
}

start=$(date +%s)
running=0
while read -r name ncl secs prog args; do
	if [ "$running" -ge "$jobs_max" ]; then
		wait -n
		running=$((running - 1))
	fi
	# shellcheck disable=SC2086 # args are split on purpose
	run_case "$name" "$ncl" "$secs" "$prog" $args &
	running=$((running + 1))
done <<EOF
$selected
EOF
wait

npass=0
nfail=0
failed=""
printf '%-28s %-6s %7s   %s\n' case result seconds command
while read -r name ncl secs prog args; do
	read -r res secs_taken < "$logdir/$name.res" || res=FAIL
	if [ "$negative" = 1 ]; then
		# a corrupted run must fail, and because of the data check
		if [ "$res" = FAIL ] && grep -q "data mismatch" \
			"$logdir/$name".*.log; then
			res=PASS
		else
			res=FAIL
		fi
	fi
	if [ "$res" = PASS ]; then
		npass=$((npass + 1))
	else
		nfail=$((nfail + 1))
		failed="$failed $name"
	fi
	printf '%-28s %-6s %7s   %s %s%s\n' "$name" "$res" \
		"${secs_taken:-0}" "$prog" "$args" \
		"$([ "$ncl" -gt 1 ] && echo " ($ncl clients)")"
done <<EOF
$selected
EOF

mode=$prov
[ "$negative" = 1 ] && mode="$prov, negative: corrupted data must fail"
echo "run.sh: $npass passed, $nfail failed in $(( $(date +%s) - start )) s" \
	"($mode)"
for name in $failed; do
	for log in "$logdir/$name".*.log; do
		echo "---- $log (last lines)"
		tail -n 15 "$log"
	done
done
if [ "$nfail" -eq 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$logdir"
else
	echo "run.sh: logs in $logdir"
fi
[ "$nfail" -eq 0 ]
