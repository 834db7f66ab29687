#!/usr/bin/env bash
# silent.sh - silent connections against a live endpoint
# (docs/robustness.md): a handshake slow-loris.
#
#   1. the victim server (a provider endpoint, test/hostile/victim.c) and
#      its client start; the client holds back (no link yet);
#   2. silent_peer opens SILENT_N (500) TCP connections to the server's
#      endpoint and says nothing on any of them, then lets the client go;
#   3. the client, a new peer behind the crowd, must be served (its first
#      verified round trip) within 2 s;
#   4. every silent connection must be closed by the endpoint within the
#      handshake timeout plus 1 s of its own connect, measured by
#      silent_peer (EOF or reset on each). The handshake timeout is
#      min(5 s, FI_PORTALS_PEER_TIMEOUT): 1 s here, to keep the test short;
#   5. the server's close log must count every one of them as rejected
#      (the oldest evicted by newer ones beyond the limit on handshaking
#      sockets, P4T_TCP_PENDING_MAX, the rest at their deadline).
#
# P4_TEST_BUILDDIR (make check sets it) locates the programs and, unless
# FI_PROVIDER_PATH is set, the plug-in. SILENT_LOGDIR keeps the logs.
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
silent=$bindir/silent_peer
for p in "$victim" "$silent"; do
	[ -x "$p" ] || { echo "SKIP: $p not built"; exit 77; }
done
n=${SILENT_N:-500}
hs_ms=1000
serve_ms=2000

dir=${SILENT_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/silent.XXXXXX")}
mkdir -p "$dir" || exit 2
spid= cpid= keep=1
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
	[ -z "${SILENT_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do
		echo "---- $f"
		tail -n 20 "$f"
	done
	exit 1
}

export HOSTILE_ADDR_FILE=$dir/addr HOSTILE_STOP_FILE=$dir/stop
export HOSTILE_GO_FILE=$dir/go
export FI_LOG_LEVEL=warn FI_LOG_PROV=portals
# the handshake timeout is min(P4T_TCP_HELLO_TIMEOUT_MS, peer timeout)
export FI_PORTALS_PEER_TIMEOUT=$hs_ms
rm -f "$HOSTILE_ADDR_FILE" "$HOSTILE_STOP_FILE" "$HOSTILE_GO_FILE"

victim_start 120 100 -N 20
echo "victim endpoint $ip:$eport; $n silent connections, handshake" \
	"timeout $hs_ms ms"

timeout 60 "$silent" "$ip" "$eport" "$n" "$hs_ms" >"$dir/silent.log" 2>&1
src_silent=$?
cat "$dir/silent.log"
touch "$HOSTILE_STOP_FILE"

wait "$cpid"; crc=$?; cpid=
wait "$spid"; src=$?; spid=
[ "$src_silent" = 0 ] || fail "silent_peer: $src_silent (a connection" \
	"was not closed in time)"
[ "$crc" = 0 ] || fail "client failed ($crc)"
[ "$src" = 0 ] || fail "victim server failed ($src)"
first=$(sed -n 's/^victim_first_round_ms \([0-9]*\)/\1/p' "$dir/client.log")
[ -n "$first" ] || fail "the client did not time its first round"
echo "new client served $first ms after the attack (bound $serve_ms ms)"
[ "$first" -le "$serve_ms" ] || fail "client served after $first ms"
rounds=$(sed -n 's/^victim_rounds \([0-9]*\)/\1/p' "$dir/server.log")
echo "client: $rounds verified round trips"
stats=$(grep -o 'tcp: endpoint .*rejected [0-9]* .*' "$dir/server.log" |
	tail -n 1)
[ -n "$stats" ] || fail "no rejection count in the server log"
echo "victim log: $stats"
rejected=$(echo "$stats" | sed -n 's/.*rejected \([0-9]*\) .*/\1/p')
[ -n "$rejected" ] && [ "$rejected" -ge "$n" ] ||
	fail "victim counted $rejected rejections for $n silent connections"
keep=0
echo "PASS"
exit 0
