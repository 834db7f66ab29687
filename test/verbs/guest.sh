#!/bin/sh
# guest.sh - the verbs tests, run inside the soft-RoCE guest of vm.sh
# (`make check-verbs` does both). Runs from the shared output directory;
# exits non-zero if any step failed.
#
# Environment (vm.sh exports what `make check-verbs` passes):
#   P4_TEST_BUILDDIR  the build tree (test programs, .libs plug-in)
#   P4_SRCDIR         the source tree (fabtests-ext/run.sh)
#   P4_VERBS_SET      smoke (default: what CI runs in a few minutes) or full
#   FABTESTS_BIN      libfabric 1.17 fabtests (optional; skipped if absent)
#   P4_VERBS_STEPS    the steps to run (default: all of them): any of
#                     device unit fx rdma mpi fabtests
#   P4_MPI_CASES      MPI cases (default: smoke pingpong order, full all)
#
# Steps: the device; the transport's own tests (test_verbs); the
# fabtests-ext suite over FI_PORTALS_TRANSPORT=verbs; a bandwidth run
# checked against rxe0's packet counters and the provider's statistics;
# full set only: the libfabric fabtests acceptance list and a latency /
# bandwidth comparison verbs vs tcp vs ibv_rc_pingpong.
set -u
B=${P4_TEST_BUILDDIR:?}
S=${P4_SRCDIR:?}
SET=${P4_VERBS_SET:-smoke}
FT=${FABTESTS_BIN:-}
A=127.0.0.2			# rxe0's address (vm.sh)
CNT=/sys/class/infiniband/rxe0/ports/1/hw_counters
export FI_PROVIDER_PATH=$B/.libs
export FI_PORTALS_TRANSPORT=verbs
# both ends run in this guest: without this they would talk over shared
# memory and never touch the verbs transport under test
export FI_PORTALS_SHM=0 PTL_SHM=0 FX_PASSES=shm MPI_PASSES=shm
export FI_LOG_LEVEL=${FI_LOG_LEVEL:-warn} FI_LOG_PROV=${FI_LOG_PROV:-portals}
fails=0
# logs of an earlier run in this directory would hand a stale server port
# to the clients (run.sh and fx_pair read the port from the server's log)
rm -rf fx-logs mpi-logs fx-*.log ft-*.log
step() { echo; echo "=== $*"; }
STEPS=" ${P4_VERBS_STEPS:-device unit fx rdma mpi fabtests} "
want() { case $STEPS in *" $1 "*) return 0 ;; esac; return 1; }
result() {	# result NAME RC
	if [ "$2" = 0 ]; then echo "RESULT PASS $1"
	else echo "RESULT FAIL $1 (rc $2)"; fails=$((fails + 1)); fi
}
counter() { cat "$CNT/$1" 2>/dev/null || echo 0; }

# fx_pair NAME SECONDS NCLIENTS PROGRAM ARGS...: a fabtests-ext program as
# server + clients on 127.0.0.1 with a deadline fit for the slow guest
# (run.sh's per-case limits are set for native runs); logs fx-NAME.*
fx_pair() {
	name=$1 secs=$2 ncl=$3 prog=$B/fabtests-ext/$4
	shift 4
	: > "fx-$name.server.log"	# never read an earlier run's port
	timeout -k 5 $((secs + 10)) "$prog" -p portals -s 127.0.0.1 -B 0 \
		-n "$ncl" -T "$secs" "$@" > "fx-$name.server.log" 2>&1 &
	spid=$!
	port=
	i=0
	while [ -z "$port" ] && [ $i -lt 1200 ] && kill -0 $spid 2>/dev/null
	do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\)$/\1/p' \
			"fx-$name.server.log")
		sleep 0.1; i=$((i + 1))
	done
	pids=
	for c in $(seq "$ncl"); do
		timeout -k 5 $((secs + 10)) "$prog" -p portals -s 127.0.0.1 \
			-P "${port:-1}" -T "$secs" "$@" 127.0.0.1 \
			> "fx-$name.client$c.log" 2>&1 &
		pids="$pids $!"
	done
	prc=0
	for p in $pids; do wait $p || { echo "$name: client rc $?"; prc=1; }; done
	wait $spid || { echo "$name: server rc $?"; prc=1; }
	grep -h "PASS\|FAIL" fx-$name.*.log | grep -v '^libfabric' | tail -4
	return $prc
}

if want device; then
step device
ibv_devinfo -d rxe0 | sed -n '1,25p'
rdma link show
cat /sys/class/infiniband/rxe0/ports/1/gids/1
# FI_PORTALS_TRANSPORT: verbs lists only rxe0, tcp no rxe0, auto rxe0 first
# (a plug-in built with ASan, loaded by the uninstrumented fi_info, needs
# its runtime preloaded)
asan=$(ldd "$B/.libs/libportals-fi.so" 2>/dev/null |
       sed -n 's/^.*libasan[^ ]* => \([^ ]*\) .*$/\1/p')
fi_info_p() {
	LD_PRELOAD=$asan ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} \
		fi_info -p portals
}
dv=$(fi_info_p | sed -n 's/^ *domain: //p' | sort -u | tr '\n' ' ')
dt=$(FI_PORTALS_TRANSPORT=tcp fi_info_p | sed -n 's/^ *domain: //p' |
     sort -u | tr '\n' ' ')
da=$(FI_PORTALS_TRANSPORT=auto fi_info_p | sed -n 's/^ *domain: //p' |
     head -1)
echo "domains: verbs: $dv; tcp: $dt; auto first: $da"
[ "$dv" = "rxe0 " ] && [ -n "$dt" ] && ! echo "$dt" | grep -q rxe0 &&
[ "$da" = rxe0 ]
result getinfo-transport $?
fi

if want unit; then
step "transport tests (test_verbs)"
timeout 900 "$B/test/verbs/test_verbs" --jobs 1 --verbose > test_verbs.txt 2>&1
rc=$?
tail -30 test_verbs.txt
result test_verbs $rc
fi

if want fx; then
step "fabtests-ext over verbs"
# the OOB exchange and the provider both use the address given with -s;
# the verbs entries list every local address, so 127.0.0.1 works as is
# run.sh's per-case limits (60-90 s) are set for native runs: the cases
# that sweep every size do not fit them in the emulated guest, so they
# run here through fx_pair with longer ones; run.sh takes the rest
long="pingpong pingpong_msg pingpong_sread bw bw_msg"
if [ "$SET" = full ]; then
	cases=$(bash "$S/fabtests-ext/run.sh" -l |
		awk -v long=" $long " 'index(long, " " $1 " ") == 0 {print $1}')
else
	cases="unexpected peek directed multirecv cancel trunc"
fi
FX_LOGDIR=$PWD/fx-logs timeout 1800 bash "$S/fabtests-ext/run.sh" -j 1 -k \
	$cases > fx.txt 2>&1
rc=$?
tail -25 fx.txt
result fabtests-ext $rc
fx_pair pingpong 900 1 fx_pingpong -S all -I 10 -v
result fx:pingpong $?
if [ "$SET" = full ]; then
	fx_pair pingpong_msg 900 1 fx_pingpong -e msg -S all -I 10 -v
	result fx:pingpong_msg $?
	fx_pair pingpong_sread 900 1 fx_pingpong -c sread -S all -I 10 -v
	result fx:pingpong_sread $?
	fx_pair bw_msg 900 1 fx_bw -e msg -S 65536 -v
	result fx:bw_msg $?
fi
fi

if want rdma; then
step "data travels over RDMA: rxe0 packet counters, provider statistics"
s0=$(counter sent_pkts); r0=$(counter rcvd_pkts)
# 12 MiB messages: larger than rxe's 8 MiB message size (chunked reads)
FI_LOG_LEVEL=info fx_pair bw 900 1 fx_bw -S 12582912 -W 8 -I 4 -v
rc=$?
s1=$(counter sent_pkts); r1=$(counter rcvd_pkts)
stats=$(grep -h "verbs: stats" fx-bw.server.log | sed 's/.*verbs: stats/verbs stats/')
echo "server $stats"
grep -h "verbs: stats" fx-bw.client1.log | sed 's/.*verbs: stats/client verbs stats/'
bytes=$(echo "$stats" | sed -n 's/.*rdma_reads [0-9]* (\([0-9]*\) bytes).*/\1/p')
mtu=$(ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:.*(\([0-9]\)).*/\1/p')
mtu=$((128 << ${mtu:-3}))
echo "rxe0 sent_pkts +$((s1 - s0)) rcvd_pkts +$((r1 - r0)); RDMA read" \
	"${bytes:-0} bytes / MTU $mtu = $((${bytes:-0} / mtu)) packets"
# the server pulled every message with RDMA READ (8 x 12 MiB), and
# the device moved about that many MTU-sized packets (both processes are
# in this guest, so each packet counts as sent and as received)
[ $rc = 0 ] && [ "${bytes:-0}" -ge $((8 * 12582912)) ] &&
[ $((s1 - s0)) -gt $((bytes / mtu * 9 / 10)) ] &&
[ $((r1 - r0)) -gt $((bytes / mtu * 9 / 10)) ]
result rxe-counters-and-stats $?

# application MRs: fx_rma's server registers its window with fi_mr_reg,
# which registers it with the device (p4t_ops.mr_reg); the RDMA READs
# into it (large fi_write) and WRITEs out of it (large fi_read) use that
# registration instead of registering the window's pieces on demand
FI_LOG_LEVEL=info fx_pair rma 600 1 fx_rma -v
rc=$?
stats=$(grep -h "verbs: stats" fx-rma.server.log | tail -1 |
	sed 's/.*verbs: stats/verbs stats/')
echo "server $stats"
hits=$(echo "$stats" | sed -n 's/.*app_mr_hits \([0-9]*\).*/\1/p')
aregs=$(echo "$stats" | sed -n 's/.* app_regs \([0-9]*\).*/\1/p')
reads=$(echo "$stats" | sed -n 's/.*rdma_reads \([0-9]*\) .*/\1/p')
writes=$(echo "$stats" | sed -n 's/.*rdma_writes \([0-9]*\) .*/\1/p')
echo "window: app_regs ${aregs:-0}, RDMA reads ${reads:-0} +" \
	"writes ${writes:-0}, of them inside the window: ${hits:-0}"
[ $rc = 0 ] && [ "${aregs:-0}" -ge 1 ] && [ "${hits:-0}" -ge 1 ] &&
[ "${hits:-0}" -ge $((${reads:-0} + ${writes:-0})) ]
result app-mr-registration $?
fi

want mpi && step "MPI programs over verbs (Open MPI, pml cm, mtl ofi)"
if want mpi && [ -x "$B/fabtests-ext/mpi/mpi_pingpong" ] && command -v mpirun >/dev/null
then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	if [ "$SET" = full ]; then mcases=""; else mcases="pingpong order"; fi
	mcases=${P4_MPI_CASES:-$mcases}
	MPI_LOGDIR=$PWD/mpi-logs timeout 2400 bash "$S/fabtests-ext/mpi/run.sh" \
		-k $mcases > mpi.txt 2>&1
	rc=$?
	tail -25 mpi.txt
	[ $rc = 77 ] && rc=0	# skipped: said why above
	result mpi $rc
elif want mpi; then
	echo "MPI programs not built: skipped"
fi

# fabtests 1.17 pair: NAME SECONDS PROGRAM ARGS...
ft_pair() {
	name=$1 secs=$2 prog=$3
	shift 3
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
	timeout "$secs" "$FT/$prog" -p portals -s $A -B $port "$@" \
		> "ft-$name.server.log" 2>&1 &
	spid=$!
	i=0	# the server is ready once its port is bound (or give up
		# waiting after ~50 polls: the client then finds it or fails)
	while [ $i -lt 50 ] && kill -0 $spid 2>/dev/null &&
	      ! ss -lntu | grep -q ":$port "; do
		sleep 0.1; i=$((i + 1))
	done
	timeout "$secs" "$FT/$prog" -p portals -s $A -P $port "$@" $A \
		> "ft-$name.client.log" 2>&1
	crc=$?
	wait $spid
	src=$?
	tail -3 "ft-$name.client.log"
	[ $crc = 0 ] && [ $src = 0 ]
	result "fabtests:$name" $?
}

if want fabtests && [ "$SET" = full ] && [ -n "$FT" ] &&
   [ -x "$FT/fi_rdm_tagged_pingpong" ]
then
	step "libfabric 1.17 fabtests (acceptance)"
	# every size sweeps take far too long in the emulated guest: one
	# eager and one rendezvous size each (FT_SIZES to change)
	for sz in ${FT_SIZES:-4096 1048576}; do
		ft_pair tagged_pingpong_$sz 600 fi_rdm_tagged_pingpong \
			-S $sz -I 20
		ft_pair tagged_bw_$sz 600 fi_rdm_tagged_bw -S $sz -I 20 -W 16
		ft_pair rma_bw_$sz 600 fi_rma_bw -e rdm -S $sz -I 20 -W 16
	done
	ft_pair tagged_peek 600 fi_rdm_tagged_peek
	ft_pair unexpected_msg 600 fi_unexpected_msg -e rdm -I 10
	# without -S, fabtests sizes (and memsets) its buffers for its
	# largest test size: 8 MiB x window 64 x 2 = 1 GiB per process, and
	# fi_rdm_atomic registers two more of that size (pinned by the
	# device): more than the 2 GiB guest holds; atomics use one element
	ft_pair rdm_atomic 900 fi_rdm_atomic -I 5 -S 64

	step "latency and bandwidth in this guest: verbs, tcp, ibv_rc_pingpong"
	for t in verbs tcp; do
		for sz in 8 65536 1048576; do
			FI_PORTALS_TRANSPORT=$t ft_pair "lat_${t}_$sz" 600 \
				fi_rdm_tagged_pingpong -S $sz -I 100
		done
		for sz in 65536 1048576; do
			FI_PORTALS_TRANSPORT=$t ft_pair "bw_${t}_$sz" 600 \
				fi_rdm_tagged_bw -S $sz -I 20 -W 16
		done
	done
	for sz in 8 65536 1048576; do
		ibv_rc_pingpong -d rxe0 -g 1 -s $sz -n 200 > rc-srv.log 2>&1 &
		sleep 2	# no readiness signal from ibv_rc_pingpong's server
		echo "ibv_rc_pingpong -s $sz:" $(ibv_rc_pingpong -d rxe0 -g 1 \
			-s $sz -n 200 localhost 2>&1 | tail -2)
		wait
	done
	for f in ft-lat_*.client.log ft-bw_*.client.log; do
		echo "--- $f"; grep -v '^libfabric' "$f" | tail -2
	done
fi

echo
echo "verbs tests: $fails failed"
[ $fails = 0 ]
