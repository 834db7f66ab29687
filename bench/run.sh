#!/bin/bash
# bench/run.sh - the side-by-side benchmark suite (`make bench` runs it).
#
# Runs the fb_* programs (public libfabric API, same binary for every
# provider), the raw TCP_NODELAY socket floor and, when mpicc/mpirun are
# present, an Open MPI ping-pong/bandwidth/message rate through `mtl ofi`,
# for the providers
#   portals                    the provider as users get it (same-host
#                              peers over its shared-memory transport)
#   portals@FI_PORTALS_SHM=0   the same with that transport off, so over
#                              loopback TCP ("portals (tcp)" in the report)
#   shm                        libfabric's own shared-memory provider
#   tcp;ofi_rxm, net           libfabric's TCP providers
# plus, in the MPI part, Open MPI's own shared-memory path (`--mca pml ob1
# --mca btl self,vader`, column "vader"). A provider that cannot run a
# measurement gets NA with the reason (e.g. shm under Open MPI 4.1's mtl
# ofi, which asks for FI_REMOTE_COMM). Providers are interleaved
# (A B C A B C ...) per measurement and every measurement is repeated
# BENCH_REPS times; bench/report.py takes the medians and writes
# docs/bench.md plus the plots (gnuplot; skipped when it is missing and
# cannot be installed).
#
# `make bench` builds the programs first; to run this script by hand,
# `make bench/fb_lat bench/fb_bw bench/fb_match bench/fb_rma bench/fb_trig
# bench/raw_socket` in the build directory.
#
# Environment:
#   BENCH_BUILDDIR  build directory (default: the current directory)
#   BENCH_OUT       where bench.md and the PNGs go (default: <src>/docs)
#   BENCH_REPS      repetitions (default 3)
#   BENCH_TIMEOUT   seconds one client/server run may take (default 120)
#   BENCH_QUICK=1   smoke run: -Q on every program, one repetition
#   BENCH_ONLY      space-separated subset of: sys raw lat bw rate match rma trig
#                   mpi
#   BENCH_PROVS     providers, ';'-safe, separated by ',' (default
#                   "portals,portals@FI_PORTALS_SHM=0,shm,tcp;ofi_rxm,net");
#                   "name@VAR=value" runs name with VAR=value set
#   BENCH_MPI_VADER=0  no vader column in the MPI part
#
# Raw results: $BENCH_BUILDDIR/bench/results.txt, one line per value:
#   <rep> <provider> RESULT|NA <test> <param> <value|reason...>
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BUILDDIR=$(cd "${BENCH_BUILDDIR:-.}" && pwd)
OUT=${BENCH_OUT:-$SRCDIR/docs}
REPS=${BENCH_REPS:-3}
QUICK=${BENCH_QUICK:-0}
ONLY=${BENCH_ONLY:-"sys raw lat bw rate match rma trig mpi"}
IFS=',' read -r -a PROVS <<< \
	"${BENCH_PROVS:-portals,portals@FI_PORTALS_SHM=0,shm,tcp;ofi_rxm,net}"
VADER=${BENCH_MPI_VADER:-1}
BIN=$BUILDDIR/bench
RES=$BIN/results.txt
LOG=$BIN/run.log
TIMEOUT=${BENCH_TIMEOUT:-120}

QFLAG=()
if [ "$QUICK" = 1 ]; then
	QFLAG=(-Q)
	REPS=1
fi

# built-in providers stay available; the plug-in comes from this build
export FI_PROVIDER_PATH=$BUILDDIR/.libs
# a sanitizer build: leaks inside the system libfabric are not ours
export LSAN_OPTIONS="suppressions=$SRCDIR/bench/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mkdir -p "$OUT"
: > "$RES"
: > "$LOG"
failures=0

want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

# run_pair <rep> <prov> <prog> <args...>: a server with -B 0 prints its
# OOB port; the client connects to it; the client's result lines are kept.
# A provider "name@VAR=value" runs name with VAR=value in both processes
# (e.g. portals@FI_PORTALS_ACK_DELAY_US=1) and is reported as a column
# of its own.
run_pair() {
	local rep=$1 label=$2 prog=$3 prov=$2 envset=""
	shift 3
	if [[ "$label" == *@* ]]; then
		prov=${label%%@*}
		envset=${label#*@}
	fi
	local srv_out=$BIN/.srv.$$ cli_out=$BIN/.cli.$$ port="" i spid rc src
	: > "$srv_out"
	env $envset timeout $TIMEOUT "$BIN/$prog" -p "$prov" -B 0 -T $TIMEOUT "${QFLAG[@]}" \
		"$@" > "$srv_out" 2>&1 &
	spid=$!
	for i in $(seq 1 200); do
		port=$(sed -n 's/^# oob_port //p' "$srv_out")
		[ -n "$port" ] && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		echo "FAIL $prog [$label] $*: server did not start" | tee -a "$LOG"
		cat "$srv_out" >> "$LOG"
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
		failures=$((failures + 1))
		return
	fi
	env $envset timeout $TIMEOUT ${STRACE_OUT:+strace -f -c -o "$STRACE_OUT"} \
		"$BIN/$prog" -p "$prov" -P "$port" -T $TIMEOUT \
		"${QFLAG[@]}" "$@" 127.0.0.1 > "$cli_out" 2>&1
	rc=$?
	wait $spid
	src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "FAIL $prog [$label] $* (client rc $rc, server rc $src)" | tee -a "$LOG"
		cat "$cli_out" "$srv_out" >> "$LOG"
		failures=$((failures + 1))
	fi
	grep -E '^(RESULT|NA) ' "$cli_out" | sed "s|^|$rep $(echo "$label" | tr ' ' _) |" >> "$RES"
	rm -f "$srv_out" "$cli_out"
}

# every provider once, in the same order each time (A B C)
each_prov() {
	local rep=$1 p
	shift
	for p in "${PROVS[@]}"; do
		run_pair "$rep" "$p" "$@"
	done
}

MPIRUN=$(command -v mpirun || true)
MPICC=$(command -v mpicc || true)
MB=""
if want mpi && [ -n "$MPIRUN" ] && [ -n "$MPICC" ]; then
	if "$MPICC" -O2 -o "$BIN/mb_mpi" "$SRCDIR/bench/mb_mpi.c" >> "$LOG" 2>&1; then
		MB=$BIN/mb_mpi
	else
		echo "mb_mpi: mpicc failed, MPI rows are NA" | tee -a "$LOG"
	fi
fi

# the capabilities Open MPI 4.1's mtl ofi asks fi_getinfo for
OMPI_OFI_CAPS="FI_TAGGED|FI_LOCAL_COMM|FI_REMOTE_COMM|FI_DIRECTED_RECV"

# mpi_na <rep> <label> <reason...>: every MPI row of label is NA
mpi_na() {
	local rep=$1 label=$2 t
	shift 2
	for t in mpi_lat mpi_bw mpi_rate; do
		echo "$rep $label NA $t * $*" >> "$RES"
	done
}

# mpi_one <rep> <label> <env...> -- <mpirun options...>: one mb_mpi run
mpi_one() {
	local rep=$1 label=$2 envs=() out rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	out=$(env "${envs[@]}" timeout $TIMEOUT "$MPIRUN" \
		--allow-run-as-root --oversubscribe --bind-to none -np 2 \
		"$@" "$MB" "${QFLAG[@]}" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL mb_mpi [$label] (rc $rc)" | tee -a "$LOG"
		echo "$out" >> "$LOG"
		mpi_na "$rep" "$label" "mpirun failed"
		failures=$((failures + 1))
		return
	fi
	echo "$out" | grep -E '^RESULT ' | sed "s|^|$rep $label |" >> "$RES"
}

run_mpi() {
	local rep=$1 p prov envset xs
	for p in "${PROVS[@]}"; do
		prov=${p%%@*}
		envset=""
		xs=()
		if [[ "$p" == *@* ]]; then
			envset=${p#*@}
			xs=(-x "${envset%%=*}")
		fi
		# shm offers no FI_REMOTE_COMM: mtl ofi finds no endpoint
		if ! env $envset fi_info -p "$prov" -t FI_EP_RDM \
		     -c "$OMPI_OFI_CAPS" 2>/dev/null | grep -q '^provider:'; then
			mpi_na "$rep" "$p" "fi_getinfo offers no" \
				"$OMPI_OFI_CAPS endpoint (Open MPI's mtl ofi asks" \
				"for these)"
			continue
		fi
		mpi_one "$rep" "$p" $envset FI_PROVIDER="$prov" -- \
			--mca pml cm --mca mtl ofi \
			--mca mtl_ofi_provider_include "$prov" \
			-x FI_PROVIDER -x FI_PROVIDER_PATH "${xs[@]}"
	done
	# Open MPI's own shared memory, the intra-host reference
	if [ "$VADER" != 0 ]; then
		mpi_one "$rep" vader -- --mca pml ob1 --mca btl self,vader
	fi
}

# strace -c summary -> "send recv recv_empty poll" call counts
sys_counts() {
	awk 'NF == 6 { c = $4; e = $5; n = $6 }
	     NF == 5 && $4 ~ /^[0-9]+$/ { c = $4; e = 0; n = $5 }
	     NF < 5 || !($4 ~ /^[0-9]+$/) { next }
	     n ~ /^(sendmsg|sendto|sendmmsg|writev|write)$/ { s += c }
	     n ~ /^(recvfrom|recvmsg|recvmmsg|readv|read)$/ { r += c - e; re += e }
	     n ~ /^(poll|ppoll|epoll_wait|epoll_pwait|select|pselect6)$/ { p += c }
	     END { printf "%d %d %d %d\n", s, r, re, p }' "$1"
}

# Syscalls per 8 B round trip on the client, load independent: the
# difference between 2200 and 220 round trips (fb_lat -I 2000 and -I 200,
# warm-up included) cancels set-up and library loading.
run_syscalls() {
	local p a b
	# LeakSanitizer cannot run under ptrace (a --enable-sanitize build)
	TRACE_ASAN="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	for p in raw "${PROVS[@]}"; do
		prog=fb_lat
		[ "$p" = raw ] && prog=raw_socket
		ASAN_OPTIONS=$TRACE_ASAN STRACE_OUT=$BIN/.strace.a run_pair x "$p" $prog -S 8 -I 200
		ASAN_OPTIONS=$TRACE_ASAN STRACE_OUT=$BIN/.strace.b run_pair x "$p" $prog -S 8 -I 2000
		[ -s "$BIN/.strace.a" ] && [ -s "$BIN/.strace.b" ] || continue
		read -r -a a <<< "$(sys_counts "$BIN/.strace.a")"
		read -r -a b <<< "$(sys_counts "$BIN/.strace.b")"
		awk -v p="$p" -v s="$(( b[0] - a[0] ))" -v r="$(( b[1] - a[1] ))" \
		    -v re="$(( b[2] - a[2] ))" -v po="$(( b[3] - a[3] ))" 'BEGIN {
			n = 1980
			printf "1 %s RESULT sys_send 8 %.3g\n", p, s / n
			printf "1 %s RESULT sys_recv 8 %.3g\n", p, r / n
			printf "1 %s RESULT sys_recv_empty 8 %.3g\n", p, re / n
			printf "1 %s RESULT sys_poll 8 %.3g\n", p, po / n
		}' >> "$RES"
		rm -f "$BIN/.strace.a" "$BIN/.strace.b"
	done
	# run_pair also kept the timed latency of these traced runs: drop it
	sed -i '/^x /d' "$RES"
}

MATCH_MODES="posted:ign0 posted:ompi posted:ompi_any posted:wild \
unexp:ign0 unexp:ompi unexp:ompi_any unexp:wild"

if want sys && command -v strace > /dev/null; then
	run_syscalls
fi

start=$(date +%s)
{
	echo "# date $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# host $(uname -srm), $(nproc) cpu(s), load at start $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p' | head -1)"
	echo "# reps $REPS quick $QUICK"
} >> "$RES"
for rep in $(seq 1 "$REPS"); do
	echo "bench: repetition $rep of $REPS ($(( $(date +%s) - start )) s)"
	if want raw; then
		run_pair "$rep" raw raw_socket -m lat
		run_pair "$rep" raw raw_socket -m bw
		run_pair "$rep" raw raw_socket -m rate
	fi
	want lat && each_prov "$rep" fb_lat
	want bw && each_prov "$rep" fb_bw -m bw
	want rate && each_prov "$rep" fb_bw -m rate
	if want match; then
		for mode in $MATCH_MODES; do
			each_prov "$rep" fb_match -m "$mode"
		done
	fi
	if want rma; then
		each_prov "$rep" fb_rma -m lat
		each_prov "$rep" fb_rma -m bw
		each_prov "$rep" fb_rma -m atomic
	fi
	want trig && each_prov "$rep" fb_trig
	if want mpi; then
		if [ -n "$MB" ]; then
			run_mpi "$rep"
		elif [ "$rep" = 1 ]; then
			for p in "${PROVS[@]}"; do
				mpi_na "$rep" "$p" "no mpicc/mpirun"
			done
			[ "$VADER" != 0 ] && mpi_na "$rep" vader "no mpicc/mpirun"
		fi
	fi
done
echo "# load at end $(cut -d' ' -f1-3 /proc/loadavg), $(( $(date +%s) - start )) s" >> "$RES"
echo "bench: measurements done in $(( $(date +%s) - start )) s," \
	"$failures failed run(s) (see $LOG)"

# plots need gnuplot: install Debian's gnuplot-nox when missing (only
# here, for `make bench`); without it the report has tables only
if ! command -v gnuplot > /dev/null && [ "$(id -u)" = 0 ] &&
   command -v apt-get > /dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnuplot-nox \
		>> "$LOG" 2>&1 || echo "bench: gnuplot-nox not installed, no plots"
fi

BENCH_PLOTS=0
command -v gnuplot > /dev/null && BENCH_PLOTS=1
BENCH_PLOTS=$BENCH_PLOTS python3 "$SRCDIR/bench/report.py" "$RES" "$OUT" || exit 1
if command -v gnuplot > /dev/null && [ -f "$OUT/bench.gp" ]; then
	(cd "$OUT" && gnuplot bench.gp) || echo "bench: gnuplot failed"
	rm -f "$OUT"/bench-*.dat "$OUT/bench.gp"
fi
echo "bench: wrote $OUT/bench.md"
[ "$failures" -eq 0 ]
