#!/usr/bin/env bash
# run.sh - hostile input against a live endpoint (docs/robustness.md):
#
#   1. victim server (a provider endpoint) and its good client start and
#      ping-pong verified data, eager and rendezvous;
#   2. hostile_peer connects to the server's endpoint over raw TCP and
#      runs every attack, one connection each: the endpoint must close
#      the malformed ones and tolerate the merely unexpected ones;
#   3. the good client keeps going all the while and for 50 rounds after;
#   4. the server's log (FI_LOG_LEVEL=warn) must show the rejections
#      rate-limited, and the transport's count of what it rejected
#      (logged when the endpoint closes) must cover every closing case.
#
#   run.sh [case ...]     only these hostile_peer cases
#
# P4_TEST_BUILDDIR (make check sets it) locates the programs and, unless
# FI_PROVIDER_PATH is set, the plug-in. HOSTILE_LOGDIR keeps the logs.
set -u
# shellcheck source=victim_lib.sh
. "$(dirname "$0")/victim_lib.sh"

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bindir=$builddir/test/hostile
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH
victim=$bindir/victim
hostile=$bindir/hostile_peer
for p in "$victim" "$hostile"; do
	[ -x "$p" ] || { echo "SKIP: $p not built"; exit 77; }
done

dir=${HOSTILE_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/hostile.XXXXXX")}
mkdir -p "$dir" || exit 2
spid= cpid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
	[ -z "${HOSTILE_LOGDIR:-}" ] && [ "${keep:-0}" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
keep=1
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do
		echo "---- $f"
		tail -n 40 "$f"
	done
	exit 1
}

export HOSTILE_ADDR_FILE=$dir/addr HOSTILE_STOP_FILE=$dir/stop
export FI_LOG_LEVEL=warn FI_LOG_PROV=portals
rm -f "$HOSTILE_ADDR_FILE" "$HOSTILE_STOP_FILE"

victim_start 200 180
echo "victim endpoint $ip:$eport"

timeout 300 "$hostile" "$ip" "$eport" "$@" >"$dir/hostile.log" 2>&1
hrc=$?
cat "$dir/hostile.log"
touch "$HOSTILE_STOP_FILE"

wait "$cpid"; crc=$?; cpid=
wait "$spid"; src=$?; spid=
[ "$hrc" = 0 ] || fail "hostile_peer: $hrc (a case did not behave)"
[ "$crc" = 0 ] || fail "good client failed ($crc)"
[ "$src" = 0 ] || fail "victim server failed ($src)"
rounds=$(sed -n 's/^victim_rounds \([0-9]*\)/\1/p' "$dir/server.log")
echo "good client: $rounds verified round trips, none failed"

expect=$(sed -n 's/^hostile_expect_closed \([0-9]*\)/\1/p' "$dir/hostile.log")
# the transport's own count, logged at fi_close of the endpoint
stats=$(grep -o 'tcp: endpoint .*rejected [0-9]* .*' "$dir/server.log" | tail -n 1)
[ -n "$stats" ] || fail "no rejection count in the server log"
echo "victim log: $stats"
rejected=$(echo "$stats" | sed -n 's/.*rejected \([0-9]*\) .*/\1/p')
[ -n "$rejected" ] && [ "$rejected" -ge "$expect" ] ||
	fail "victim counted $rejected rejections, $expect cases were rejected"
# warnings are per call site and at most one a second: far fewer lines
# than attacks when they come fast
warns=$(grep -c 'closing the link\|connection closed' "$dir/server.log")
echo "victim log: $warns rate-limited warning lines for $expect rejected connections"
[ "$warns" -ge 1 ] || fail "no warning logged"
keep=0
echo "PASS"
exit 0
