#!/usr/bin/env bash
# run.sh - runs the fabtests-ext MPI programs under Open MPI on the
# portals provider, the way users launch MPI over it:
#
#   mpirun --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include portals
#          --mca btl self --mca osc pt2pt
#
# (pml cm: every point-to-point message, and so every collective, goes
# through the ofi MTL and the provider; btl self only, so no other
# transport carries data; osc pt2pt: one-sided operations travel as
# point-to-point messages, so through the provider too - the one-sided
# configuration docs/openmpi.md recommends for Open MPI 4.1.4). Cases whose
# name ends in +rdma run instead under
#
#   mpirun --mca pml ob1 --mca btl self,ofi --mca btl_ofi_mode 2
#          --mca btl_ofi_provider_include portals --mca osc rdma
#
# where one-sided operations become the provider's RMA and atomics (only
# for MPI_Win_create windows and remote targets: see docs/openmpi.md for
# why). Each case runs with a timeout and gets a PASS/FAIL line; exits 0 if
# every case passed, 1 if one failed, 77 (SKIP) when MPI or the programs
# are not there.
#
#   run.sh [-k] [-l] [case|program ...]
#     -k     keep the logs even if everything passed
#     -l     list the cases and exit
#     case|program   only these cases (a program name selects all of its)
#
# Environment: P4_TEST_BUILDDIR (the build directory; `make check` sets
# it) locates the programs and mpi.env (written by make: mpirun, whether
# the build uses ASan) in $P4_TEST_BUILDDIR/fabtests-ext/mpi and, unless
# FI_PROVIDER_PATH is set, the plug-in in $P4_TEST_BUILDDIR/.libs.
# MPI_BINDIR overrides where the programs are, MPIRUN the launcher,
# MPI_LOGDIR where the logs go, MPI_PASSES the passes (below),
# MPI_OFI_PROVIDER the libfabric provider both configurations name
# (default portals; e.g. MPI_OFI_PROVIDER='tcp;ofi_rxm' MPI_PASSES=shm
# runs the same cases on libfabric's TCP stack for comparison - its btl
# ofi cases fail: Open MPI's btl ofi refuses ofi_rxm).
# MPI_MCA replaces the first configuration's selection (the cm line
# below): test/clients/portals4-clients.sh runs the same cases with Open
# MPI's own Portals 4 MTL over libportals that way.
#
# Sanitize builds: the plug-in is built with ASan, Open MPI and the
# programs are not, so the ranks get the compiler's libasan through
# LD_PRELOAD (mpirun -x, not mpirun itself) with leak detection off (Open
# MPI's own allocations at exit are not ours to judge); timeouts triple.
# If Open MPI does not start under the preloaded runtime, the suite is
# skipped with a message saying so.

set -u

# name            ranks seconds  program and arguments
MPI_CASES='
pingpong           2     90     mpi_pingpong -m 4194304 -i 50
pingpong_4         4     90     mpi_pingpong -m 262144 -i 10
wildcard           2     60     mpi_wildcard
wildcard_4         4     60     mpi_wildcard
order              2     60     mpi_order
order_4            4     60     mpi_order
many_posted        2     60     mpi_many_posted
many_posted_3      3     60     mpi_many_posted
probe              2     60     mpi_probe
probe_4            4     60     mpi_probe
cancel             2     60     mpi_cancel
cancel_4           4     60     mpi_cancel
ssend              2     60     mpi_ssend
ssend_3            3     60     mpi_ssend
trunc              2     60     mpi_trunc
flood              2     90     mpi_flood
flood_4            4     90     mpi_flood
isend_flood        2     90     mpi_isend_flood -n 200000
isend_flood_4      4     90     mpi_isend_flood -n 200000
isend_flood_1m     2     120    mpi_isend_flood -n 1000000
collectives_1      1     60     mpi_collectives
collectives        2     60     mpi_collectives
collectives_3      3     60     mpi_collectives
collectives_4      4     90     mpi_collectives
large              2     90     mpi_large
osc_fence          2     60     mpi_osc_fence
osc_fence_4        4     60     mpi_osc_fence -m 262144
osc_acc            2     60     mpi_osc_acc
osc_acc_4          4     60     mpi_osc_acc
osc_atomic         2     60     mpi_osc_atomic -k 50
osc_atomic_4       4     60     mpi_osc_atomic -k 50
osc_lockall        2     60     mpi_osc_lockall
osc_lockall_4      4     60     mpi_osc_lockall
osc_fence+rdma     2     60     mpi_osc_fence -w create
osc_acc+rdma       2     60     mpi_osc_acc -w create
osc_atomic_4+rdma  4     60     mpi_osc_atomic -w create -r -k 50
osc_lockall+rdma   2     60     mpi_osc_lockall -w create
'

keep=0
while getopts "kl" opt; do
	case $opt in
	k) keep=1 ;;
	l) echo "$MPI_CASES" | sed '/^$/d'; exit 0 ;;
	*) sed -n '2,27s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

builddir=${P4_TEST_BUILDDIR:-}
bindir=${MPI_BINDIR:-${builddir:+$builddir/fabtests-ext/mpi}}
bindir=${bindir:-$(dirname "$0")}
P4_SANITIZE=no
P4_ASAN_LIB=
if [ -f "$bindir/mpi.env" ]; then
	# shellcheck disable=SC1091 # written by make
	. "$bindir/mpi.env"
fi
mpirun=${MPIRUN:-$(command -v mpirun || true)}
if [ -z "$mpirun" ] || [ ! -x "$bindir/mpi_pingpong" ]; then
	echo "run.sh: SKIP: no mpirun or no MPI programs in $bindir" \
		"(configure found no mpicc/mpirun: apt-get install" \
		"openmpi-bin libopenmpi-dev)"
	exit 77
fi
if [ -z "${FI_PROVIDER_PATH:-}" ] && [ -n "$builddir" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
# CI runs as root; Open MPI refuses that unless told
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
logdir=${MPI_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/mpi-run.XXXXXX")}
mkdir -p "$logdir" || exit 2

prov=${MPI_OFI_PROVIDER:-portals}
mpi_args=(--oversubscribe --bind-to none -x FI_PROVIDER_PATH)
# the two configurations (see the top of this file)
cm_args=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$prov"
	--mca btl self --mca osc pt2pt)
rdma_args=(--mca pml ob1 --mca btl "self,ofi" --mca btl_ofi_mode 2
	--mca btl_ofi_provider_include "$prov" --mca osc rdma)
if [ -n "${MPI_MCA:-}" ]; then
	# shellcheck disable=SC2206 # MPI_MCA is a list of words on purpose
	cm_args=($MPI_MCA --mca btl self)
fi
scale=1
if [ "$P4_SANITIZE" = yes ]; then
	if [ -z "$P4_ASAN_LIB" ] || [ ! -f "$P4_ASAN_LIB" ]; then
		echo "run.sh: SKIP: sanitize build, but the compiler's" \
			"libasan was not found ('$P4_ASAN_LIB')"
		exit 77
	fi
	mpi_args+=(-x "LD_PRELOAD=$P4_ASAN_LIB"
		-x "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"
		-x "UBSAN_OPTIONS=print_stacktrace=1")
	scale=3
	# Does Open MPI itself run under the preloaded ASan runtime? One
	# rank on its own transports, never loading the provider.
	if ! timeout -k 5 60 "$mpirun" -np 1 --mca pml ob1 --mca btl self \
		-x "LD_PRELOAD=$P4_ASAN_LIB" -x ASAN_OPTIONS=detect_leaks=0 \
		"$bindir/mpi_collectives" > "$logdir/asan_probe.log" 2>&1; then
		echo "run.sh: SKIP: Open MPI does not run with ASan preloaded" \
			"(sanitize build); see $logdir/asan_probe.log"
		tail -n 20 "$logdir/asan_probe.log"
		exit 77
	fi
fi

# the selected cases, one per line
# shellcheck source=../../test/lib/cases.sh
. "$(dirname "$0")/../../test/lib/cases.sh"
selected=$(p4_select_cases "$MPI_CASES" "$@")
if [ -z "$selected" ]; then
	echo "run.sh: no case matches: $*" >&2
	exit 2
fi
# every case once per pass (MPI_PASSES, default "shm tcp"): shm as
# configured (ranks of this host over shared memory), tcp with
# FI_PORTALS_SHM=0 (and PTL_SHM=0, its name for libportals), named
# <case>@tcp
passes=${MPI_PASSES:-shm tcp}
selected=$(for pass in $passes; do
	echo "$selected" | while read -r name rest; do
		if [ "$pass" = shm ]; then
			echo "$name $rest"
		else
			echo "$name@$pass $rest"
		fi
	done
done)

echo "run.sh: $mpirun ${mpi_args[*]} ${cm_args[*]} -np N program"
echo "run.sh: +rdma cases: ${rdma_args[*]} instead of ${cm_args[*]}"
echo "run.sh: FI_PROVIDER_PATH=$FI_PROVIDER_PATH, sanitize $P4_SANITIZE"
start=$(date +%s)
npass=0
nfail=0
failed=""
printf '%-24s %-6s %5s %7s   %s\n' case result ranks seconds command
while read -r name np secs prog args; do
	log=$logdir/$name.log
	secs=$((secs * scale))
	# the tcp pass turns shared memory off; the other keeps the
	# environment's choice
	shm=(${FI_PORTALS_SHM:+-x FI_PORTALS_SHM} ${PTL_SHM:+-x PTL_SHM})
	case $name in
	*@tcp) shm=(-x FI_PORTALS_SHM=0 -x PTL_SHM=0) ;;
	esac
	cfg=("${cm_args[@]}")
	case $name in
	*+rdma*) cfg=("${rdma_args[@]}") ;;
	esac
	t0=$(date +%s%N)
	# the programs' own watchdog fires first and names the stuck step
	# shellcheck disable=SC2086 # args are split on purpose
	timeout -k 10 $((secs + 15)) "$mpirun" -np "$np" "${mpi_args[@]}" \
		"${cfg[@]}" "${shm[@]}" \
		-x "MPI_TEST_TIMEOUT=$secs" "$bindir/$prog" $args \
		> "$log" 2>&1 < /dev/null
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	p4_mpi_result "$rc" "$log" "$prog" "$name"
	printf '%-24s %-6s %5s %7s   %s %s\n' "$name" "$res" "$np" \
		"$((ms / 1000)).$((ms % 1000 / 100))" "$prog" "$args"
done <<EOF
$selected
EOF

echo "run.sh: $npass passed, $nfail failed in $(( $(date +%s) - start )) s"
for name in $failed; do
	echo "---- $logdir/$name.log (last lines)"
	grep -v '^libfabric:' "$logdir/$name.log" | tail -n 25
done
if [ "$nfail" -eq 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$logdir"
else
	echo "run.sh: logs in $logdir"
fi
[ "$nfail" -eq 0 ]
