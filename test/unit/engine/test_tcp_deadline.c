/*
 * test_tcp_deadline.c - the TCP transport's handshake deadlines and its
 * limit on handshaking sockets, over loopback: the limit evicts the
 * oldest silent socket, never a real peer.
 *
 * Not here: refusals, hostile bytes and restarts (test_tcp_fail.c), links
 * and messages (test_tcp.c). The sides, the pump (which runs each side's
 * due timers, as the engine's worker does) and raw sockets are in
 * p4t_tcp_test.h.
 */
#include <config.h>

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- the limit on handshaking sockets ------------------------------------ */

/*
 * Accepted sockets that say nothing count against the limit; over it the
 * oldest goes, so a real peer connecting behind a crowd of silent ones is
 * served at once, not after a handshake timeout, and no established link
 * notices.
 */
TCP_TEST(handshake_limit_evicts_the_oldest_silent_socket)
{
	enum { MAX = 4, N = 10 };
	struct p4t_conn *x, *y, *z;
	uint64_t t0, accepts;
	int fd[N], i;

	x = link_up(&sa, &sb, &y);
	side_forget(&sa);
	accepts = stats_of(&sb).accepts;
	p4t_tcp_set_pending_max(sb.iface, MAX);
	for (i = 0; i < N; i++)
		fd[i] = raw_connect(&sb);	/* and say nothing */
	PUMP_UNTIL(stats_of(&sb).accepts == accepts + N);
	/* accepted in connect order: all but the last MAX went, oldest
	 * first, each as soon as a newer one came */
	for (i = 0; i < N; i++)
		cr_expect_eq(raw_closed(fd[i]), i < N - MAX, "socket %d", i);
	cr_expect_eq(stats_of(&sb).hs_evicted, N - MAX);
	cr_expect_eq(stats_of(&sb).hs_failed, N - MAX);
	/* a real peer behind them gets in now, pushing out one more */
	side_open(&sc, 0);
	z = conn_to(&sc, &sb);
	t0 = now_ms();
	cr_assert_eq(send_seq(&sc, z, 7, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_lt(now_ms() - t0, 1000, "served at once, not after %u ms",
		     P4T_TCP_HELLO_TIMEOUT_MS);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 0)], 7, 100);
	cr_expect_eq(count(&sc, UP_CONN_FAILED), 0);
	for (i = 0; i < N; i++)
		cr_expect_eq(raw_closed(fd[i]), i <= N - MAX, "socket %d", i);
	cr_expect_eq(stats_of(&sb).hs_evicted, N - MAX + 1);
	/* the established link never noticed */
	cr_assert_eq(send_seq(&sa, x, 8, 3000), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	cr_expect_eq(count(&sb, UP_CONN_FAILED), 0);
	for (i = 0; i < N; i++)
		close(fd[i]);
}
