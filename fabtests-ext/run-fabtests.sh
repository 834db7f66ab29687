#!/usr/bin/env bash
# run-fabtests.sh - runs libfabric's own fabtests (1.17, built and
# installed separately: see docs/fabtests.md) against the portals provider
# on 127.0.0.1 and prints a PASS/FAIL/SKIP table. Not part of `make
# check`: CI has no fabtests; fabtests-ext/run.sh is what CI runs.
#
#   run-fabtests.sh [-l] [-q] [-k] [-t SECS] FABTESTS_DIR [PATTERN ...]
#     FABTESTS_DIR  the fabtests install prefix, or its bin/ directory
#     PATTERN       only the cases whose command line contains one of them
#     -l            list the cases and exit
#     -q            afterwards, run runfabtests.sh's `quick` set too (in a
#                   PID namespace of its own: it kills every process named
#                   fi_* when it cleans up), with portals.exclude (next to
#                   this script) as its exclude file for the portals
#                   provider
#     -k            keep the logs even if everything passed
#     -t SECS       timeout per process (default 120)
#
# Environment: FI_PROVIDER_PATH must point at the directory holding
# libportals-fi.so (e.g. <builddir>/.libs) unless the provider is
# installed where libfabric looks; FT_PROV overrides the provider name.
#
# A case of kind "xfail" is a pair that fails by a defect of fabtests
# itself, reproduced with libfabric's own sockets provider and explained
# in docs/fabtests.md: its failure prints XFAIL, a pass FAIL(xpass) (the
# provider's behaviour changed: look again).
#
# Server/client pairs use -B/-P with ports picked per case, so several
# runs (or other fabtests) can share the machine. Exit status 61
# (FI_ENODATA: the provider does not offer what the test asks for) or
# 38 (FI_ENOSYS) counts as SKIP, the way runfabtests.sh counts "notrun".

set -u

# kind  command (pair: server and client; single: one process)
FT_CASES='
single fi_getinfo_test -s 127.0.0.1 127.0.0.1
single fi_av_test -g 127.0.0.1 -n 1 -s 127.0.0.1 -e rdm
single fi_dom_test -n 2
single fi_eq_test
single fi_cq_test
single fi_cntr_test
single fi_mr_test
pair fi_rdm
pair fi_rdm -U
pair fi_rdm_pingpong -I 100
pair fi_rdm_pingpong -I 10 -S all -v
pair fi_rdm_pingpong -I 100 -U -v
pair fi_rdm_pingpong -I 100 -k -v
pair fi_rdm_pingpong -I 100 -c sread -v
pair fi_rdm_pingpong -I 100 -c fd -v
pair fi_rdm_pingpong -I 20 -t counter -v
pair fi_rdm_pingpong -I 20 -c yield
pair fi_rdm_tagged_pingpong -I 100
pair fi_rdm_tagged_pingpong -I 10 -S all -v
pair fi_rdm_tagged_pingpong -I 100 -U -v
pair fi_rdm_tagged_pingpong -I 10 -S all -c sread -v
pair fi_rdm_tagged_pingpong -I 10 -S all -c fd -v
pair fi_rdm_tagged_pingpong -I 10 -S all -t counter -v
pair fi_rdm_tagged_bw -I 100
pair fi_rdm_tagged_bw -I 10 -S all -v
pair fi_rdm_tagged_bw -I 10 -S all -v -U
pair fi_rdm_tagged_bw -I 10 -S all -c sread -v
pair fi_rdm_tagged_bw -I 10 -S all -c fd -v
pair fi_rdm_tagged_bw -I 20 -W 64 -v
pair fi_rdm_tagged_peek
pair fi_rdm_tagged_peek -c sread
pair fi_rdm_tagged_peek -c fd
pair fi_rdm_tagged_peek -S 1000000
pair fi_unexpected_msg -e rdm -I 10
pair fi_unexpected_msg -e rdm -I 50 -c sread
pair fi_unexpected_msg -e rdm -I 50 -c fd
pair fi_unexpected_msg -e rdm -C -M 64 -I 20
pair fi_unexpected_msg -e rdm -S 1000000 -M 8 -I 3
pair fi_multi_recv -e rdm
pair fi_multi_recv -e rdm -I 5 -S all -v
pair fi_multi_recv -e rdm -c sread -v
pair fi_multi_recv -e rdm -c fd -v
pair fi_multi_recv -e rdm -S 100000 -I 200 -v
pair fi_recv_cancel -e rdm -V
pair fi_cq_data -e rdm
pair fi_rdm_multi_client
pair fi_rdm_multi_client -C 10 -I 5
pair fi_rdm_multi_client -C 10 -I 5 -U
pair fi_resmgmt_test -e rdm
pair fi_resmgmt_test -e rdm -t -T 16 -X 16 -m 1000 -V
pair fi_resmgmt_test -e rdm -t -T 16 -X 16 -m 1000 -d
pair fi_resmgmt_test -e rdm -t -S 8 -R 8 -m 500 -l 100000
pair fi_resmgmt_test -e rdm -j -T 8 -X 8 -m 300 -l 20000
pair fi_msg_inject -A inject -v
pair fi_msg_inject -N -A inject -v
pair fi_msg_inject -A inj_complete -v
pair fi_msg_inject -N -A inj_complete -v
pair fi_msg_inject -S all -A inject -v
pair fi_bw -e rdm -v -T 1
pair fi_bw -e rdm -v -T 1 -U
pair fi_bw -e rdm -v -T 1 -W 64
pair fi_rdm_cntr_pingpong -I 10 -S all -v
pair fi_multi_ep -e rdm -v
pair fi_multi_ep -e rdm -v -c sread
pair fi_av_xfer -e rdm
pair fi_poll -t queue
pair fi_poll -t counter
pair fi_rma_bw -e rdm -o write -I 5
pair fi_rma_bw -e rdm -o write -I 5 -U
pair fi_rma_bw -e rdm -o read -I 5
pair fi_rma_bw -e rdm -o read -I 5 -U
pair fi_rma_bw -e rdm -o writedata -I 5
pair fi_rma_bw -e rdm -o writedata -I 5 -U
pair fi_rma_bw -e rdm -o write -I 10 -S all -v
pair fi_rma_bw -e rdm -o read -I 10 -S all -v
pair fi_rdm_atomic -I 5 -o all
pair fi_rdm_atomic -I 5 -o all -U
pair fi_rdm_rma_event
pair fi_rdm_rma_trigger
pair fi_rdm_deferred_wq
pair fi_rdm_deferred_wq -a
pair fi_rdm_deferred_wq -T msg
pair fi_rdm_deferred_wq -T tagged
pair fi_rdm_deferred_wq -T rma
pair fi_rdm_deferred_wq -T atomic
pair fi_rdm_deferred_wq -T f_atomic
xfail fi_rdm_deferred_wq -T c_atomic
pair fi_multi_mr -e rdm -V
'

list=0
quick=0
keep=0
tmo=120
while getopts "lqkt:" opt; do
	case $opt in
	l) list=1 ;;
	q) quick=1 ;;
	k) keep=1 ;;
	t) tmo=$OPTARG ;;
	*) sed -n '2,23s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ "$list" = 1 ]; then
	echo "$FT_CASES" | sed '/^$/d'
	exit 0
fi
if [ $# -lt 1 ]; then
	sed -n '2,23s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
bindir=$1
shift
[ -x "$bindir/bin/fi_rdm" ] && bindir=$bindir/bin
if [ ! -x "$bindir/fi_rdm" ]; then
	echo "run-fabtests.sh: no fabtests in $bindir" >&2
	exit 2
fi
prov=${FT_PROV:-portals}
logdir=$(mktemp -d "${TMPDIR:-/tmp}/fabtests-run.XXXXXX") || exit 2

# a TCP port nobody listens on; the kernel's ephemeral range is avoided
port=$((20000 + RANDOM % 10000))
next_port() {
	local tries=0
	while [ $tries -lt 100 ]; do
		port=$((port + 1))
		[ $port -ge 30000 ] && port=20000
		if ! ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
			return
		fi
		tries=$((tries + 1))
	done
}

# waits until the server (pid $2) listens: on its endpoint's port $1, or
# on the OOB port of the tests that always use one (fabtests' default
# 3000: those cases clash with another such run on the machine), or 10 s
wait_listen() {
	local i child
	for i in $(seq 200); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		# $2 is timeout(1); the test is its child
		child=$(pgrep -P "$2" | head -n 1)
		[ -n "$child" ] && ss -Hltnp 2>/dev/null |
			grep -q "pid=$child," && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

verdict() {
	case $1 in
	0) echo PASS ;;
	61|38) echo SKIP ;;
	124|137) echo "FAIL(timeout)" ;;
	*) echo FAIL ;;
	esac
}

# why a case did not pass: the last meaningful line of its logs
reason() {
	grep -hE "ret=|[Ee]rror|ERROR|FAIL|not supported|Function not" \
		"$@" 2>/dev/null | tail -n 1 | cut -c1-100
}

npass=0
nfail=0
nskip=0
nxfail=0
n=0
start=$(date +%s)
printf '%-14s %6s  %s\n' result secs command
while read -r kind cmd; do
	[ -n "$kind" ] || continue
	if [ $# -gt 0 ]; then
		hit=0
		for want in "$@"; do
			case "$cmd" in *"$want"*) hit=1 ;; esac
		done
		[ $hit = 1 ] || continue
	fi
	n=$((n + 1))
	base=$logdir/$n
	echo "$cmd" > "$base.cmd"
	# shellcheck disable=SC2086 # the command is split on purpose
	set -f; read -r -a argv <<< "$cmd"; set +f
	bin=$bindir/${argv[0]}
	args=("${argv[@]:1}")
	t0=$(date +%s%N)
	if [ "$kind" = single ]; then
		timeout -k 5 "$tmo" "$bin" -p "$prov" "${args[@]}" \
			> "$base.log" 2>&1
		rc=$?
		res=$(verdict $rc)
	else
		next_port
		timeout -k 5 "$tmo" "$bin" -p "$prov" -B "$port" \
			-s 127.0.0.1 "${args[@]}" > "$base.server.log" 2>&1 &
		spid=$!
		if wait_listen "$port" "$spid"; then
			timeout -k 5 "$tmo" "$bin" -p "$prov" -P "$port" \
				-s 127.0.0.1 "${args[@]}" 127.0.0.1 \
				> "$base.client.log" 2>&1
			crc=$?
		else
			crc=-1
		fi
		wait "$spid"
		src=$?
		# a skip on either side (the server never listens then)
		if [ $crc = -1 ]; then
			rc=$src
			[ $rc = 0 ] && rc=1
		elif [ $crc = 0 ]; then
			rc=$src
		else
			rc=$crc
		fi
		res=$(verdict $rc)
	fi
	if [ "$kind" = xfail ]; then
		case $res in
		PASS) res="FAIL(xpass)" ;;
		FAIL*) res=XFAIL ;;
		esac
	fi
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	case $res in
	PASS) npass=$((npass + 1)); why="" ;;
	SKIP) nskip=$((nskip + 1)); why=" -- $(reason "$base".*log)" ;;
	XFAIL) nxfail=$((nxfail + 1)); why=" -- $(reason "$base".*log)" ;;
	*) nfail=$((nfail + 1)); why=" -- $(reason "$base".*log)" ;;
	esac
	printf '%-14s %6s  %s%s\n' "$res" "$((ms / 1000)).$((ms % 1000 / 100))" \
		"$cmd" "$why"
done <<EOF
$FT_CASES
EOF
echo "run-fabtests.sh: $npass passed, $nfail failed, $nskip skipped," \
	"$nxfail failed as expected in" \
	"$(( $(date +%s) - start )) s (provider $prov)"

qrc=0
if [ "$quick" = 1 ]; then
	echo "run-fabtests.sh: runfabtests.sh -t quick (log: $logdir/quick.log)"
	# the tests that do not apply to portals are listed, with the
	# reasons, in portals.exclude; other providers get none
	excl=()
	exclfile=$(cd "$(dirname "$0")" && pwd)/portals.exclude
	if [ "$prov" = portals ] && [ -f "$exclfile" ]; then
		excl=(-f "$exclfile")
	fi
	( cd "$logdir" && timeout 3600 unshare --pid --fork --mount-proc \
		"$bindir/runfabtests.sh" -p "$bindir" -v -t quick "${excl[@]}" \
		-s 127.0.0.1 -c 127.0.0.1 "$prov" > quick.log 2>&1 )
	qrc=$?
	grep -E "^# (Total|Percentage)" "$logdir/quick.log"
	grep -B2 "result: *Fail" "$logdir/quick.log" | grep "name:" || true
fi

if [ "$nfail" -eq 0 ] && [ "$qrc" -eq 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$logdir"
else
	echo "run-fabtests.sh: logs in $logdir"
fi
[ "$nfail" -eq 0 ] && [ "$qrc" -eq 0 ]
