#!/usr/bin/env bash
# over_tcp.sh - the engine's test suites again, over real TCP sockets on
# 127.0.0.1 instead of the in-process loop transport
# (P4E_TEST_TRANSPORT=tcp): put / get, send semantics, data placement,
# atomics rules, unexpected headers and search, lists and events,
# flow control, the header keeper and floods, triggered operations, counting
# events, NI limits. Each NI of a test listens on its own port; cases
# that step the loop transport one message at a time skip themselves.
# (test_eng_atomic's 281 op x type cases run on the loop only: the
# same handlers, 75 s over TCP. test_eng_fc_ack's cases all use the loop
# transport's hooks and skip themselves here; it is listed so that one
# that does not, runs.)
#
# P4_TEST_BUILDDIR (make check sets it) locates the programs.
set -u

builddir=${P4_TEST_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
suites='test_eng_put test_eng_send test_eng_data test_eng_data_md
	test_eng_atomic_rules test_eng_search test_eng_unexp test_eng_list
	test_eng_list_events test_eng_fc test_eng_fc_resend test_eng_fc_ack
	test_eng_fc_keeper test_eng_flood test_eng_trig test_eng_ct test_eng_window
	test_eng_ni test_eng_ni_limits'
export P4E_TEST_TRANSPORT=tcp
failed=0 ran=0
for s in $suites; do
	prog=$builddir/test/unit/engine/$s
	if [ ! -x "$prog" ]; then
		echo "over_tcp: $prog not built"
		failed=1
		continue
	fi
	out=$("$prog" 2>&1)
	rc=$?
	echo "$s over tcp: $(printf '%s\n' "$out" | tail -n 1)"
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | grep -B 6 '^\[FAIL\]' | tail -n 40
		failed=1
	fi
	ran=$((ran + 1))
done
echo "over_tcp: $ran suites"
exit $failed
