# victim_lib.sh - sourced by the test/hostile scripts that attack a live
# endpoint: starts the victim server (test/hostile/victim.c) and its good
# client, and waits for the server's endpoint address.
#
#   victim_start TIMEOUT_S ROUNDS_TIMEOUT_S [server options ...]
#
# The caller defines $victim, $dir (logs), fail() and exports
# HOSTILE_ADDR_FILE; on return spid and cpid are the two processes and
# ip, eport the server endpoint's address.

victim_start() {
	local tmo=$1 inner=$2
	shift 2
	timeout "$tmo" "$victim" -p portals -B 0 "$@" -T "$inner" \
		>"$dir/server.log" 2>&1 &
	spid=$!
	port=
	for _ in $(seq 300); do
		port=$(sed -n 's/^fx_oob_port \([0-9]*\).*/\1/p' "$dir/server.log")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || fail "server died at start"
		sleep 0.1
	done
	[ -n "$port" ] || fail "server did not print its OOB port"
	timeout "$tmo" "$victim" -p portals -P "$port" -T "$inner" 127.0.0.1 \
		>"$dir/client.log" 2>&1 &
	cpid=$!
	for _ in $(seq 300); do
		[ -e "$HOSTILE_ADDR_FILE" ] && break
		kill -0 "$spid" 2>/dev/null || fail "server died before the attack"
		sleep 0.1
	done
	[ -e "$HOSTILE_ADDR_FILE" ] || fail "server did not write its address"
	read -r ip eport <"$HOSTILE_ADDR_FILE"
}
