/*
 * test_tcp_deadline.c - the TCP transport's deadlines, each fired at its
 * time, and its limit on handshaking sockets, over loopback:
 *
 *   - an accepted socket that says nothing is closed at its handshake
 *     deadline (min(P4T_TCP_HELLO_TIMEOUT_MS, peer timeout) after accept),
 *     each at its own, 200 of them too;
 *   - an outgoing attempt whose peer never answers the HELLO fails its
 *     link with -FI_ETIMEDOUT at the peer timeout;
 *   - a link that lost a collision (BYE) and waits for the peer's socket
 *     fails at the peer timeout after the BYE;
 *   - a refused connect is retried at each backoff time (20, 40, 80,
 *     160 ms), and the retry after the listener appears makes the link;
 *   - the limit evicts the oldest silent socket, never a real peer.
 *
 * Granularity: every deadline must be met no earlier than its time (less
 * a millisecond of clock rounding) and at most GRAIN_MS after it,
 * measured from outside (the raw socket's connect to its EOF, conn_get or
 * the BYE to conn_failed, one attempt to the next). The pump runs due
 * timers every round and never sleeps past the next deadline or more
 * than 1 ms, so the lateness it adds is about 1 ms. Time in which the
 * pump itself did not run (rounds more than 3 ms apart:
 * the process not scheduled on a loaded host) is not counted against the
 * deadline (pump_stalled_ms); on an idle host there is none. The
 * timeouts are off the old 100 ms tick (250, 300, 350 ms, backoffs from
 * 20 ms), so a transport checking deadlines on such a tick, while the
 * pump keeps running every millisecond, is at least 50 ms late and fails
 * each of them.
 *
 * Not here: refusals, hostile bytes and restarts (test_tcp_fail.c), links
 * and messages (test_tcp.c). The sides, the pump and raw sockets are in
 * p4t_tcp_test.h.
 */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

#define GRAIN_MS	20	/* how late a deadline may fire, at most */

/* Reopen s with a peer timeout of ms (handshakes: min(5 s, ms)). */
static void side_timeout(struct side *s, uint64_t ms)
{
	struct p4t_iface_config cfg = { .peer_timeout_ms = ms };

	side_close(s);
	side_forget(s);
	cr_assert_eq(side_open_cfg(s, &cfg), 0);
}

/*
 * Seen at `at`, want_ms after start: not early, and late by at most the
 * granularity, plus the time the pump itself was stalled since start
 * (the process not scheduled: p4t_tcp_test.h), which no timer can make
 * up for: a stall after the deadline delays its firing, one before it
 * the accept or the send its deadline is counted from.
 */
static void expect_on_time(uint64_t start, uint64_t at, uint64_t want_ms,
			   const char *what, int i)
{
	uint64_t due = start + want_ms, stalled = 0;

	if (at > due)
		stalled = pump_stalled_ms(start, at);
	cr_expect_geq(at + 1, due, "%s %d: %llu ms, before its %llu ms", what,
		      i, (unsigned long long)(at - start),
		      (unsigned long long)want_ms);
	cr_expect_leq(at, due + GRAIN_MS + stalled, "%s %d: %llu ms, more "
		      "than %d ms after its %llu ms (pump stalled %llu ms)",
		      what, i, (unsigned long long)(at - start), GRAIN_MS,
		      (unsigned long long)want_ms,
		      (unsigned long long)stalled);
	if (at > due + GRAIN_MS && stalled)
		cr_log_info("%s %d: %llu ms late, the pump stalled %llu ms of "
			    "them (busy host)", what, i,
			    (unsigned long long)(at - due),
			    (unsigned long long)stalled);
}

/* A listening socket on 127.0.0.1 that nobody accepts from (yet). */
static int raw_listen(struct sockaddr_storage *ss, size_t *len_p)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)sin, len), 0);
	cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	*len_p = len;
	return fd;
}

/*
 * Both ends of n loopback connections in this process, and some spare.
 * The kernel's file table is grown to n now, not while sockets are
 * timed: growing it in a process with threads waits for an RCU grace
 * period (10 to 25 ms seen here), and the accept4 that happened to
 * need descriptor 256 was that late, and so was its deadline.
 */
static void nofile_at_least(rlim_t n)
{
	struct rlimit rl;
	int fd;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < n) {
		cr_assert(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= n,
			  "RLIMIT_NOFILE hard limit %llu < %llu",
			  (unsigned long long)rl.rlim_max,
			  (unsigned long long)n);
		rl.rlim_cur = n;
		cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	fd = dup2(STDERR_FILENO, (int)n - 1);
	cr_assert_eq(fd, (int)n - 1, "dup2: %s", strerror(errno));
	close(fd);
}

/*
 * Connect n silent raw sockets to sb, gap_ms apart (pumping meanwhile),
 * then pump until each saw EOF; each must see it hs_ms after its own
 * connect, within the granularity. Returns when all are closed.
 */
static void silent_sockets_closed_on_time(int n, int gap_ms, uint64_t hs_ms)
{
	int *fd = calloc((size_t)n, sizeof(*fd)), i, open = 0, next = 0;
	uint64_t *at = calloc((size_t)n, sizeof(*at)), t0 = now_ms(), now;
	bool *done = calloc((size_t)n, sizeof(*done));

	cr_assert(fd && at && done);
	while (next < n || open) {
		now = now_ms();
		if (next < n && now >= t0 + (uint64_t)next * gap_ms) {
			fd[next] = raw_connect(&sb);
			at[next++] = now_ms();
			open++;
		}
		pump_once();
		now = now_ms();
		for (i = 0; i < next; i++) {
			if (done[i] || !raw_closed(fd[i]))
				continue;
			expect_on_time(at[i], now, hs_ms, "socket", i);
			done[i] = true;
			close(fd[i]);
			open--;
		}
		cr_assert_lt(now - t0, 30000, "sockets not closed");
	}
	cr_expect_eq(stats_of(&sb).hs_failed, (uint64_t)n);
	cr_expect_eq(stats_of(&sb).hs_evicted, 0);
	cr_expect_eq(sb.nev, 0, "no upcall for a socket that never spoke");
	free(fd);
	free(at);
	free(done);
}

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

/* ---- handshake deadlines --------------------------------------------------- */

/*
 * Accepted sockets that never send a HELLO: each is closed at its own
 * deadline, the handshake timeout (here the peer timeout, 250 ms, shorter
 * than P4T_TCP_HELLO_TIMEOUT_MS) after its accept, whoever else waits.
 */
TCP_TEST(silent_sockets_are_closed_each_at_its_deadline)
{
	side_timeout(&sb, 250);
	silent_sockets_closed_on_time(3, 60, 250);
}

/*
 * 200 of them at once (1 ms apart): all closed within the handshake
 * timeout plus the granularity of their own connect, none waiting for
 * another (a deadline walk closing one per tick needs 200 ticks).
 */
TCP_TEST(two_hundred_silent_sockets_all_closed_on_time)
{
	nofile_at_least(1024);
	side_timeout(&sb, 250);
	silent_sockets_closed_on_time(200, 1, 250);
}

/*
 * The peer's host completes the connect (a listening socket nobody
 * accepts from: the kernel's backlog) and the HELLO goes out, but nobody
 * answers: the link fails with -FI_ETIMEDOUT at the peer timeout.
 */
TCP_TEST(unanswered_hello_fails_the_link_at_the_peer_timeout)
{
	struct sockaddr_storage ss;
	struct p4t_conn *x = NULL;
	uint64_t t0;
	size_t len;
	long f;
	int lfd = raw_listen(&ss, &len);

	side_timeout(&sa, 350);
	t0 = now_ms();
	cr_assert_eq(p4t_conn_get(sa.iface, &ss, len, &x), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	expect_on_time(t0, now_ms(), 350, "link", 0);
	f = find_ev(&sa, UP_CONN_FAILED, 0);
	cr_expect_eq(sa.ev[f].conn, x);
	cr_expect_eq(sa.ev[f].status, -FI_ETIMEDOUT);
	cr_expect_eq(stats_of(&sa).connects, 1, "connected, not refused");
	close(lfd);
}

/*
 * The peer answers our HELLO with BYE (it keeps its own socket to us, a
 * collision) and then never connects: the link waits the peer timeout
 * from the BYE, then fails with -FI_ETIMEDOUT.
 */
TCP_TEST(lost_collision_fails_the_link_at_the_peer_timeout)
{
	struct sockaddr_storage ss;
	struct p4t_conn *x = NULL;
	uint8_t hello[72], bye[16];
	size_t len, got = 0;
	uint64_t t0, t_bye;
	ssize_t n;
	int lfd = raw_listen(&ss, &len), fd = -1;
	long f;

	side_timeout(&sa, 300);
	t0 = now_ms();
	cr_assert_eq(p4t_conn_get(sa.iface, &ss, len, &x), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	/* take the HELLO; answer 50 ms after conn_get, off any 100 ms grid */
	while (got < sizeof(hello) || now_ms() - t0 < 50) {
		pump_once();
		if (fd < 0)
			fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		n = fd < 0 ? -1 : recv(fd, hello + got, sizeof(hello) - got, 0);
		if (n > 0)
			got += (size_t)n;
		cr_assert_lt(now_ms() - t0, 250, "no HELLO");
	}
	cr_expect_eq(hello[1], P4W_T_HELLO);
	hdr_make(bye, P4W_T_BYE, sizeof(bye), 0);
	cr_assert_eq(send(fd, bye, sizeof(bye), 0), (ssize_t)sizeof(bye));
	t_bye = now_ms();
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	expect_on_time(t_bye, now_ms(), 300, "link", 0);
	f = find_ev(&sa, UP_CONN_FAILED, 0);
	cr_expect_eq(sa.ev[f].conn, x);
	cr_expect_eq(sa.ev[f].status, -FI_ETIMEDOUT);
	cr_expect_eq(stats_of(&sa).collisions, 1);
	close(fd);
	close(lfd);
}

/* ---- connect retries -------------------------------------------------------- */

/*
 * Nobody listens: each refused connect is tried again at its backoff
 * (20, 40, 80, then 160 ms after the refusal); the listener appears
 * before the fifth attempt, which makes the link at its time and
 * delivers what was sent meanwhile.
 */
TCP_TEST(refused_connects_are_retried_at_their_backoff)
{
	static const uint64_t backoff[] = { 20, 40, 80, 160 };
	struct sockaddr_storage later = sb.addr;
	uint64_t at[5], t0, c;
	struct p4t_conn *x = NULL;
	size_t k = 0;

	side_close(&sb);	/* its port is free now */
	t0 = now_ms();
	cr_assert_eq(p4t_conn_get(sa.iface, &later, sb.addrlen, &x), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	at[k++] = now_ms();
	cr_assert_eq(stats_of(&sa).connects, 1);
	while (k < 5) {
		/* the fourth refusal is in: the peer starts listening */
		if (k == 4 && !sb.iface && now_ms() - at[3] >= 10)
			side_reopen(&sb, 0);
		pump_once();
		c = stats_of(&sa).connects;
		if (c > k) {
			cr_assert_eq(c, k + 1, "two attempts in one round");
			at[k++] = now_ms();
		}
		cr_assert_eq(count(&sa, UP_CONN_FAILED), 0);
		cr_assert_lt(now_ms() - t0, 5000, "no retry");
	}
	for (k = 1; k < 5; k++)
		expect_on_time(at[k - 1], at[k], backoff[k - 1], "attempt",
			       (int)k + 1);
	/* the fifth connected: conn_new and the message at once */
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	expect_on_time(at[4], now_ms(), 0, "link up after attempt", 5);
	cr_expect_eq(sb.ev[find_ev(&sb, UP_RECV, 0)].seq, 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	cr_expect_eq(stats_of(&sa).connects, 5);
}
