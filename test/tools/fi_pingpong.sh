#!/usr/bin/env bash
# fi_pingpong.sh - libfabric's own ping-pong tool (Debian's fi_pingpong,
# package libfabric-bin) between two processes on 127.0.0.1 over the
# provider just built: untagged and tagged, every size it offers, data
# checked (-c), over shared memory and with FI_PORTALS_SHM=0 over TCP.
# Each pair must exit 0 on both sides within its timeout.
#
# The tool's last reply is sent just before the process waits for its
# peer on a control socket, outside libfabric: a provider that holds a
# send until the next progress call hangs it (it did; test_tcp_send's
# a_request_after_the_last_progress_call_is_not_held is the unit test).
#
# make check sets FI_PROVIDER_PATH (the plug-in). Skipped (77) without
# fi_pingpong, or when the plug-in is a sanitizer build (the
# uninstrumented tool cannot load it; the plain build runs this).
set -u

. "${srcdir:-$(dirname "$0")/../..}/test/lib/tool_guard.sh"
p4_need_tool fi_pingpong

logdir=$(mktemp -d "${TMPDIR:-/tmp}/fi_pingpong.XXXXXX") || exit 2
failed=0

# a control port nobody listens on, outside the ephemeral range
free_port() {
	local p tries=0
	while [ $tries -lt 100 ]; do
		p=$((20000 + RANDOM % 10000))
		if ! ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
			echo "$p"
			return
		fi
		tries=$((tries + 1))
	done
	echo 29999
}

run_pair() {
	local name=$1 port i src crc
	shift
	port=$(free_port)
	timeout -k 5 60 fi_pingpong -p portals -e rdm -B "$port" "$@" \
		> "$logdir/$name.server" 2>&1 &
	local spid=$!
	for i in $(seq 100); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	timeout -k 5 60 fi_pingpong -p portals -e rdm -P "$port" "$@" \
		127.0.0.1 > "$logdir/$name.client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if [ $crc -eq 0 ] && [ $src -eq 0 ] &&
	   grep -q '^1m ' "$logdir/$name.client"; then
		echo "PASS: fi_pingpong $* ($(grep -c '^[0-9]' \
			"$logdir/$name.client") sizes)"
	else
		echo "FAIL: fi_pingpong $* (client exit $crc, server exit $src;" \
		     "logs in $logdir)"
		tail -n 3 "$logdir/$name.client" "$logdir/$name.server"
		failed=1
	fi
}

# same-host peers over shared memory (the default), then over TCP
for shm in 1 0; do
	export FI_PORTALS_SHM=$shm
	echo "FI_PORTALS_SHM=$shm"
	run_pair msg$shm -c -I 100
	run_pair tagged$shm -m tagged -c -I 100
	run_pair default$shm
done

if [ $failed = 0 ]; then
	rm -rf "$logdir"
	exit 0
fi
exit 1
