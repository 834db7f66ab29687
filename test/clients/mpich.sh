#!/usr/bin/env bash
# mpich.sh - builds MPICH's ch4:ofi device against the system libfabric
# from an MPICH source tree already on disk (it never downloads), then
# runs the MPI programs of fabtests-ext/mpi with MPICH's mpiexec (hydra)
# on the portals provider, over shared memory and with FI_PORTALS_SHM=0
# (TCP), and on libfabric's tcp;ofi_rxm for comparison. Not part of
# `make check` or CI (the MPICH build took 80 minutes on a busy two-core machine);
# docs/mpich.md says how and when it was last run.
#
#   mpich.sh [-s SRCDIR] [-p PREFIX] [-x DIR]... [-m MODES] [case ...]
#     -s SRCDIR  MPICH source tree; configured and installed into PREFIX
#                when PREFIX/bin/mpiexec does not exist yet
#     -p PREFIX  MPICH install prefix (default /work/ext/mpich-ofi)
#     -x DIR     more programs: DIR/cases (lines as in run.sh's table)
#                and DIR/<program>.c for programs fabtests-ext/mpi lacks
#     -m MODES   any of "shm tcp rxm" (default all three)
#     case       only these cases (run.sh -l names, or program names)
#
# Environment: FI_PROVIDER_PATH (default: the plug-in of ./_build/.libs
# under the source tree), MPICH_BUILDDIR (where MPICH is built, default
# PREFIX-build), MPICH_CONFIGURE_EXTRA (more configure arguments),
# MPI_LOGDIR (logs; kept). Exit 0 if every case passed in every mode.

set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
prefix=/work/ext/mpich-ofi
srcdir=
extra=()
modes="shm tcp rxm"
while getopts "s:p:x:m:" opt; do
	case $opt in
	s) srcdir=$OPTARG ;;
	p) prefix=$OPTARG ;;
	x) extra+=("$OPTARG") ;;
	m) modes=$OPTARG ;;
	*) sed -n '2,22s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

# ---- MPICH ---------------------------------------------------------------
# Network only (--with-ch4-shmmods=none): with MPICH's own shared-memory
# module, ranks on one host would never reach libfabric. dataloop instead
# of yaksa and no ROMIO, Fortran or C++: shorter build, nothing tested
# here needs them. MPICH links libmpi.so with `pkg-config --static --libs
# libfabric`, and Debian's libfabric.pc lists -lpsm_infinipath -lpsm2
# -lrdmacm there, whose development links are not installed: the link
# fails, so make gets the libraries a shared libmpi needs instead.
if [ ! -x "$prefix/bin/mpiexec" ]; then
	if [ -z "$srcdir" ] || [ ! -x "$srcdir/configure" ]; then
		echo "mpich.sh: no $prefix/bin/mpiexec and no MPICH source" \
			"tree (-s SRCDIR with a configure script)" >&2
		exit 2
	fi
	srcdir=$(cd "$srcdir" && pwd)
	build=${MPICH_BUILDDIR:-$prefix-build}
	mkdir -p "$build" || exit 2
	echo "mpich.sh: building MPICH from $srcdir in $build (logs there)"
	libs="-lpthread -lhwloc -lfabric -latomic -ldl"
	# shellcheck disable=SC2086 # extra arguments are split on purpose
	(cd "$build" &&
		nice "$srcdir/configure" --prefix="$prefix" \
			--with-device=ch4:ofi --with-libfabric=/usr \
			--with-ch4-shmmods=none --with-hwloc=/usr \
			--with-datatype-engine=dataloop --disable-fortran \
			--disable-cxx --disable-romio \
			${MPICH_CONFIGURE_EXTRA:-} > configure.log 2>&1 &&
		nice make -j2 external_libs="$libs" > make.log 2>&1 &&
		make install external_libs="$libs" > install.log 2>&1) || {
		echo "mpich.sh: MPICH build failed; see $build/*.log" >&2
		exit 1
	}
fi
mpicc=$prefix/bin/mpicc
mpiexec=$prefix/bin/mpiexec
echo "mpich.sh: $(date '+%Y-%m-%d %H:%M %Z'), $("$prefix/bin/mpichversion" |
	head -n 1 | tr -s ' \t' ' '), $(fi_info --version 2>/dev/null |
	grep -m1 libfabric)"

# ---- the programs --------------------------------------------------------
FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$here/_build/.libs}
export FI_PROVIDER_PATH
if [ ! -f "$FI_PROVIDER_PATH/libportals-fi.so" ]; then
	echo "mpich.sh: no plug-in in $FI_PROVIDER_PATH (build the tree" \
		"or set FI_PROVIDER_PATH)" >&2
	exit 2
fi
logdir=${MPI_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/mpich-run.XXXXXX")}
bindir=$logdir/bin
mkdir -p "$bindir" || exit 2

# name ranks seconds program args, from run.sh's table and each -x DIR
cases=$("$here/fabtests-ext/mpi/run.sh" -l)
for d in "${extra[@]}"; do
	cases=$(printf '%s\n%s\n' "$cases" "$(grep -v '^#' "$d/cases")")
done
for prog in $(echo "$cases" | awk 'NF { print $4 }' | sort -u); do
	# the tree's own programs come from the tree, even when a -x DIR
	# (say, another branch's fabtests-ext/mpi) has a copy
	src=$here/fabtests-ext/mpi/$prog.c
	for d in "${extra[@]}"; do
		[ -f "$src" ] && break
		src=$d/$prog.c
	done
	"$mpicc" -O2 -g -Wall -I"$here/fabtests-ext/mpi" -o "$bindir/$prog" \
		"$src" > "$logdir/cc_$prog.log" 2>&1 || {
		echo "mpich.sh: $prog does not compile; see" \
			"$logdir/cc_$prog.log" >&2
		exit 1
	}
done

# shellcheck source=../lib/cases.sh
. "$here/test/lib/cases.sh"
selected=$(p4_select_cases "$cases" "$@")

# the environment of each mode, as mpiexec -genv pairs
mode_env() {
	case $1 in
	shm) echo "FI_PROVIDER portals" ;;
	tcp) echo "FI_PROVIDER portals FI_PORTALS_SHM 0" ;;
	rxm) echo "FI_PROVIDER tcp;ofi_rxm" ;;
	esac
}

npass=0
nfail=0
failed=
for mode in $modes; do
	read -r -a kv <<< "$(mode_env "$mode")"
	genv=()
	for ((i = 0; i < ${#kv[@]}; i += 2)); do
		genv+=(-genv "${kv[i]}" "${kv[i + 1]}")
	done
	# which provider MPICH picked: its debug summary names it
	"$mpiexec" -launcher fork -n 1 "${genv[@]}" \
		-genv MPIR_CVAR_DEBUG_SUMMARY 1 "$bindir/mpi_collectives" \
		> "$logdir/probe_$mode.log" 2>&1 < /dev/null
	choice=$(grep -m1 '^libfabric provider:' "$logdir/probe_$mode.log")
	echo "mpich.sh: mode $mode (${kv[*]}): MPICH's choice:" \
		"${choice:-none (see $logdir/probe_$mode.log)}"
	printf '%-24s %-6s %5s %7s   %s\n' case result ranks seconds command
	while read -r name np secs prog args; do
		log=$logdir/$name@$mode.log
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # args are split on purpose
		timeout -k 10 $((secs + 15)) "$mpiexec" -launcher fork \
			-n "$np" "${genv[@]}" -genv MPI_TEST_TIMEOUT "$secs" \
			"$bindir/$prog" $args > "$log" 2>&1 < /dev/null
		rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		p4_mpi_result "$rc" "$log" "$prog" "$name@$mode"
		printf '%-24s %-6s %5s %7s   %s %s\n' "$name@$mode" "$res" \
			"$np" "$((ms / 1000)).$((ms % 1000 / 100))" "$prog" \
			"$args"
	done <<EOF
$selected
EOF
done
echo "mpich.sh: $npass passed, $nfail failed; logs in $logdir"
for name in $failed; do
	echo "---- $name (last lines)"
	grep -v '^libfabric:' "$logdir/$name.log" | tail -n 15
done
[ "$nfail" -eq 0 ]
