#!/usr/bin/env bash
# demo.sh - the quick-start demo's ping-pong: fx_pingpong between two
# processes on 127.0.0.1 over the provider, every size from 0 B to
# 16 MiB, every byte checked in both directions (-v on both sides: a
# side without it sends buffers it never filled, and its peer's check
# fails, which is how the demo failed until 2026-11-27).
#
#   demo.sh [fx_pingpong options ...]     e.g. demo.sh -I 20
#
# P4_TEST_BUILDDIR is the build directory (`make check` sets it, and
# FI_PROVIDER_PATH); `./quickstart demo` runs it after installing.
set -u

bin=${P4_TEST_BUILDDIR:-_build}/fabtests-ext/fx_pingpong
if [ ! -x "$bin" ]; then
	echo "demo.sh: no $bin (make fabtests-ext/fx_pingpong)" >&2
	exit 2
fi
out=$(mktemp "${TMPDIR:-/tmp}/demo.server.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

timeout -k 5 120 "$bin" -p portals -s 127.0.0.1 -B 0 -S all -v "$@" \
	> "$out" 2>&1 &
spid=$!
port=
for _ in $(seq 200); do
	port=$(sed -n 's/^fx_oob_port //p' "$out")
	[ -n "$port" ] && break
	sleep 0.05
done
if [ -z "$port" ]; then
	echo "demo.sh: the server did not start:" >&2
	cat "$out" >&2
	kill "$spid" 2>/dev/null
	exit 1
fi
timeout -k 5 120 "$bin" -p portals -s 127.0.0.1 -P "$port" -S all -v "$@" \
	127.0.0.1
crc=$?
wait "$spid"
src=$?
if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
	echo "demo.sh: FAIL (client exit $crc, server exit $src)" >&2
	cat "$out" >&2
	exit 1
fi
exit 0
