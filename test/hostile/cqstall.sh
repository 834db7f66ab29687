#!/usr/bin/env bash
# cqstall.sh - a receiver that stops reading its CQ (docs/robustness.md):
# runs test/hostile/cqstall as receiver and sender twice, with manual
# progress (the receiver keeps progressing through its counters but reads
# no CQ) and with FI_PROGRESS_AUTO (the receiver only sleeps). Each time
# the sender must see -FI_EAGAIN, and every message must arrive in order
# and verified once the receiver reads again (cqstall.c checks both).
#
# The overflow pool is 2 x 64 KiB per portal, so the eager messages soon
# come as rendezvous too; what holds the sender is its transmit context,
# full of rendezvous sends the stalled receiver has not matched (every
# 16th message: CQSTALL_N must exceed 16 x 64). CQSTALL_N, CQSTALL_SLEEP change
# the message count and how long the CQ stays unread; CQSTALL_LOGDIR
# keeps the logs. P4_TEST_BUILDDIR (make check sets it) locates the
# program and, unless FI_PROVIDER_PATH is set, the plug-in.
set -u

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
prog=$builddir/test/hostile/cqstall
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
export FI_PORTALS_OFLOW_BUF_COUNT=${FI_PORTALS_OFLOW_BUF_COUNT:-2}
export FI_PORTALS_OFLOW_BUF_SIZE=${FI_PORTALS_OFLOW_BUF_SIZE:-65536}
export CQSTALL_SLEEP=${CQSTALL_SLEEP:-2}
count=${CQSTALL_N:-3000}
# CQSTALL_WRAP runs both sides under a tool (e.g. valgrind)
wrap=${CQSTALL_WRAP:-}

dir=${CQSTALL_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/cqstall.XXXXXX")}
mkdir -p "$dir" || exit 2
rpid= spid= keep=1
cleanup() {
	for p in $rpid $spid; do kill "$p" 2>/dev/null; done
	[ -z "${CQSTALL_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
	exit 1
}

# run_pair name args...: one receiver and one sender
run_pair() {
	local name=$1 port=
	shift
	# shellcheck disable=SC2086 # wrap is a command line
	timeout 300 $wrap "$prog" -p portals -s 127.0.0.1 -B 0 -T 240 \
		-N "$count" "$@" >"$dir/$name.receiver.log" 2>&1 &
	rpid=$!
	for _ in $(seq 600); do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' \
			"$dir/$name.receiver.log")
		[ -n "$port" ] && break
		kill -0 "$rpid" 2>/dev/null || fail "$name: receiver died at start"
		sleep 0.1
	done
	[ -n "$port" ] || fail "$name: receiver did not print its OOB port"
	# shellcheck disable=SC2086
	timeout 300 $wrap "$prog" -p portals -s 127.0.0.1 -P "$port" -T 240 \
		-N "$count" "$@" 127.0.0.1 >"$dir/$name.sender.log" 2>&1 &
	spid=$!
	wait "$spid"; src=$?; spid=
	wait "$rpid"; rrc=$?; rpid=
	[ "$rrc" = 0 ] || fail "$name: receiver failed ($rrc)"
	[ "$src" = 0 ] || fail "$name: sender failed ($src)"
	echo "$name:"
	grep -h '^cqstall_' "$dir/$name.receiver.log" "$dir/$name.sender.log"
}

run_pair manual
run_pair auto -a
keep=0
echo "PASS"
exit 0
