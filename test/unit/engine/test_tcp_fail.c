/*
 * test_tcp_fail.c - the TCP transport's failures, over loopback: refused
 * connects retried till the peer timeout, auth_key mismatch, a conn_new
 * refusal, a recv error failing both ends, conn_close and iface_close
 * (RMA completed, peers reset), a peer killed mid-pull, hostile sockets
 * (garbage, bad HELLOs, huge lengths, silence), a peer that listens late,
 * and restarts (the old link fails before the new one, a HELLO with
 * another session).
 *
 * Not here: links, messages and progress (test_tcp.c), the send path
 * (test_tcp_send.c), pull / push and their refusals (test_tcp_rma.c). The
 * sides and helpers (raw sockets too) are in p4t_tcp_test.h; the HELLOs
 * of the hostile and restart cases are this file's own.
 *
 * Each side (struct side) records every upcall in order. Sockets move in
 * the background, so tests progress until what they wait for happened
 * (bounded, failing on timeout), never sleep for it.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- failures ----------------------------------------------------------- */

TCP_TEST(nobody_listening_is_refused_from_progress)
{
	struct p4t_iface_config cfg = { .peer_timeout_ms = 800 };
	struct sockaddr_storage nobody = sb.addr;
	uint8_t dst[8];
	struct iovec diov = { dst, 8 };
	struct p4w_cookie ck = { .length = 8 };
	struct p4t_conn *x = NULL;
	uint64_t t0 = now_ms();

	/* refused connects are retried till the peer timeout: a short one */
	side_close(&sa);
	cr_assert_eq(side_open_cfg(&sa, &cfg), 0);
	side_close(&sb);	/* its port is free now */
	cr_assert_eq(p4t_conn_get(sa.iface, &nobody, sb.addrlen, &x), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 10000), P4T_DONE);
	sa.free_on_done = true;
	cr_assert_eq(send_msg(&sa, x, P4W_PUT, 2, 100000, true), P4T_QUEUED);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &diov, 1, 8, (void *)9), 0);
	cr_expect_eq(sa.nev, 0);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	/* the queued send, then the pull, then the failure */
	cr_assert_eq(sa.nev, 3);
	cr_expect_eq(sa.ev[0].kind, UP_SEND_DONE);
	cr_expect_lt(sa.ev[0].status, 0);
	cr_expect_eq(sa.ev[1].kind, UP_RMA_DONE);
	cr_expect_eq(sa.ev[1].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[2].conn, x);
	cr_expect_eq(sa.ev[2].status, -FI_ECONNREFUSED);
	cr_expect_geq(now_ms() - t0, 500, "retried, not failed at once");
	cr_expect_gt(stats_of(&sa).connects, 2);
	/* a new conn_get is a new link */
	side_reopen(&sb, 0);
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 3, 1), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
}

TCP_TEST(auth_key_mismatch_is_refused)
{
	struct p4t_conn *x;

	side_open(&sc, 42);
	x = conn_to(&sa, &sc);
	cr_assert_eq(send_seq(&sa, x, 1, 1), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
	cr_expect_eq(sc.nev, 0, "no conn_new for a refused caller");
	cr_expect_eq(stats_of(&sc).auth_refused, 1);
	cr_expect_eq(stats_of(&sc).links, 0);
}

TCP_TEST(conn_new_refusal_closes_the_socket)
{
	struct p4t_conn *x = conn_to(&sa, &sb);

	sb.conn_new_ret = -FI_EPERM;
	cr_assert_eq(send_seq(&sa, x, 1, 8), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
	pump_quiet(10);
	cr_expect_eq(sb.nev, 1);
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	cr_expect_eq(stats_of(&sb).links, 0);
	sb.conn_new_ret = 0;
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 2, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	expect_msg(&sb.ev[sb.nev - 1], 2, 8);
}

TCP_TEST(recv_error_fails_the_link_both_ends)
{
	struct p4t_conn *x, *y;

	x = link_up(&sa, &sb, &y);
	sb.nrecv = 0;
	sb.recv_fail_at = 2;
	sb.recv_fail_ret = -FI_EBADMSG;
	cr_assert_eq(send_seq(&sa, x, 1, 1), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 1), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 3, 1), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1 &&
		   count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_eq(count(&sb, UP_RECV), 2, "nothing after the bad one");
	cr_expect_eq(sb.ev[sb.nev - 1].status, -FI_EBADMSG);
	cr_expect_eq(sb.ev[sb.nev - 1].conn, y);
	cr_expect_eq(sa.ev[sa.nev - 1].conn, x);
	cr_expect_eq(stats_of(&sb).malformed, 1);
}

TCP_TEST(conn_close_aborts_and_the_peer_sees_it)
{
	uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct p4w_cookie ck = { .length = 1 << 20 };
	struct p4t_conn *x, *y;

	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &iov, 1, 64, (void *)5),
		     0);
	p4t_conn_close(sa.iface, x);
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1 &&
		   count(&sa, UP_RMA_DONE) == 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);
	pump_quiet(10);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0, "closed: no conn_failed");
	cr_expect_eq(sb.ev[sb.nev - 1].conn, y);
	/* conn_close from inside recv */
	x = conn_to(&sa, &sb);
	sb.close_in_recv = true;
	cr_assert_eq(send_seq(&sa, x, 1, 1), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 1), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	pump_quiet(10);
	cr_expect_eq(count(&sb, UP_RECV), 1);
}

TCP_TEST(iface_close_completes_rma_and_resets_peers)
{
	uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct p4w_cookie ck = { .length = 64 };
	struct p4t_conn *x, *y, *xc;

	x = link_up(&sa, &sb, &y);
	side_open(&sc, 0);
	xc = conn_to(&sa, &sc);		/* still connecting at close */
	cr_assert_eq(p4t_pull(sa.iface, xc, &ck, 0, &iov, 1, 64, (void *)5),
		     0);
	cr_assert_eq(p4t_push(sa.iface, xc, &iov, 1, 64, &ck, 0, (void *)6),
		     0);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &iov, 1, 64, (void *)7),
		     0);		/* its refusal has not come back */
	side_close(&sa);
	cr_assert_eq(sa.nev, 3, "only rma_done, all before the close returned");
	cr_expect_eq(count(&sa, UP_RMA_DONE), 3);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[1].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[2].status, -FI_ECONNABORTED);
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1);
	cr_expect_eq(sb.ev[sb.nev - 1].status, -FI_ECONNRESET);
	cr_expect_eq(sb.ev[sb.nev - 1].conn, y);
	pump_quiet(20);
	/* its HELLO left at once (pipelined): sc may have seen the link come
	 * and go, but nothing of ours was delivered */
	cr_expect_eq(count(&sc, UP_RECV), 0);
}

/* Child: expose 64 MiB to the parent, tell it the cookie, serve forever. */
static void killed_peer_child(const struct sockaddr_storage *parent,
			      size_t parent_len, size_t len)
{
	struct side me = { 0 };
	struct p4t_iface_config cfg = { .rma_chunk = 65536 };
	struct p4t_conn *conn;
	struct p4w_cookie ck;
	struct p4t_mem *mem;
	uint8_t *buf = malloc(len), hdr[HL] = { 0 };
	struct iovec iov = { buf, len }, civ = { &ck, sizeof(ck) };

	/* never outlive the test, whatever happens to it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
		_exit(1);
	alarm(60);
	if (!buf || side_open_cfg(&me, &cfg))
		_exit(2);
	memset(buf, 0x5a, len);
	if (p4t_conn_get(me.iface, parent, parent_len, &conn) ||
	    p4t_mem_expose(me.iface, conn, &iov, 1, P4T_ACCESS_READ, &ck,
			   &mem))
		_exit(3);
	hdr_make(hdr, P4W_PUT, HL + sizeof(ck), 0);
	if (p4t_send(me.iface, conn, hdr, HL, &civ, 1, NULL, 0) < 0)
		_exit(4);
	for (;;)
		p4t_progress(me.iface, 64);
}

TCP_TEST(peer_killed_mid_pull)
{
	const size_t len = 64 << 20;
	uint8_t *dst = malloc(len);
	struct iovec diov = { dst, len };
	struct p4w_cookie ck;
	struct p4t_conn *x;
	long rma_at, fail_at;
	int wstatus;
	pid_t pid;

	cr_assert(dst);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid)
		killed_peer_child(&sa.addr, sa.addrlen, len);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	cr_assert_eq(sa.ev[1].len, HL + sizeof(ck));
	memcpy(&ck, sa.ev[1].msg + HL, sizeof(ck));
	x = sa.ev[0].conn;
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &diov, 1, len, (void *)7),
		     0);
	PUMP_UNTIL(stats_of(&sa).rma_bytes_in > 0);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &wstatus, 0), pid);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	rma_at = find_ev(&sa, UP_RMA_DONE, 0);
	fail_at = find_ev(&sa, UP_CONN_FAILED, 0);
	cr_assert_geq(rma_at, 0);
	cr_expect_eq(sa.ev[rma_at].status, -FI_ECONNABORTED);
	cr_expect_lt(rma_at, fail_at);
	cr_expect_eq(sa.ev[fail_at].conn, x);
	cr_expect_lt(sa.ev[fail_at].status, 0);
	cr_expect_lt(stats_of(&sa).rma_bytes_in, len, "killed mid-pull");
	/* and the process is fine: another link works */
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 1, 1), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	free(dst);
}

/* ---- hostile sockets ------------------------------------------------------ */

static void raw_hello(uint8_t msg[72], uint64_t session,
		      const struct sockaddr_storage *addr, size_t addrlen,
		      uint64_t auth_key)
{
	struct p4w_hello h = {
		.magic = P4W_MAGIC, .version = P4W_VERSION,
		.addrlen = (uint16_t)addrlen, .session = session,
		.auth_key = auth_key,
	};

	memcpy(h.addr, addr, addrlen);
	hdr_make(msg, P4W_T_HELLO, 72, 0);
	p4w_hello_pack(msg + 16, &h);
}

/* Read exactly len bytes (blocking, progressing the others meanwhile). */
static void raw_read(int fd, uint8_t *buf, size_t len)
{
	uint64_t t0 = now_ms();
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		else
			cr_assert(n < 0 && errno == EAGAIN, "raw read failed");
		pump_once();
		cr_assert_lt(now_ms() - t0, 30000);
	}
}

TCP_TEST(hostile_sockets_are_closed_without_harm)
{
	struct sockaddr_in fake = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				    .sin_port = htons(9) };
	struct sockaddr_storage fss = { 0 };
	uint8_t junk[100], msg[72], ack[72], hdr[16];
	struct p4t_conn *x, *y;
	struct p4t_tcp_stats st;
	size_t i;
	int fd;

	memcpy(&fss, &fake, sizeof(fake));
	x = link_up(&sa, &sb, &y);
	/* garbage */
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	fd = raw_connect(&sb);
	cr_assert_eq(send(fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	raw_wait_closed(fd);
	close(fd);
	/* a HELLO with the wrong magic */
	raw_hello(msg, 1, &fss, sizeof(fake), 0);
	msg[16] ^= 0xff;
	fd = raw_connect(&sb);
	cr_assert_eq(send(fd, msg, sizeof(msg), 0), (ssize_t)sizeof(msg));
	raw_wait_closed(fd);
	close(fd);
	/* a header claiming a huge length before any HELLO */
	hdr_make(hdr, P4W_T_HELLO, 0xfffffff0u, 0);
	fd = raw_connect(&sb);
	cr_assert_eq(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	raw_wait_closed(fd);
	close(fd);
	st = stats_of(&sb);
	cr_expect_eq(st.hs_failed, 3);
	cr_expect_eq(st.malformed, 3);
	cr_expect_eq(count(&sb, UP_CONN_NEW), 0);
	/* a valid HELLO, then a huge engine message: that link fails */
	raw_hello(msg, 1, &fss, sizeof(fake), 0);
	fd = raw_connect(&sb);
	cr_assert_eq(send(fd, msg, sizeof(msg), 0), (ssize_t)sizeof(msg));
	raw_read(fd, ack, sizeof(ack));
	cr_expect_eq(ack[1], P4W_T_HELLO_ACK);
	cr_expect_eq(count(&sb, UP_CONN_NEW), 1);
	hdr_make(hdr, P4W_PUT, 0x7ffffff0u, 0);
	cr_assert_eq(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	raw_wait_closed(fd);
	close(fd);
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1);
	cr_expect_eq(sb.ev[find_ev(&sb, UP_CONN_FAILED, 0)].status,
		     -FI_EMSGSIZE);
	cr_expect_eq(stats_of(&sb).malformed, 4);
	/* a silent socket is dropped at its deadline: not waited for here */
	/* the real link never noticed */
	cr_assert_eq(send_seq(&sa, x, 1, 3000), P4T_DONE);
	cr_assert_eq(send_seq(&sb, y, 2, 3000), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1 && count(&sa, UP_RECV) == 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
}

TCP_TEST(silent_socket_is_dropped_at_its_deadline)
{
	struct p4t_iface_config cfg = { .peer_timeout_ms = 300 };
	uint64_t t0;
	int fd;

	side_close(&sb);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	fd = raw_connect(&sb);	/* and then says nothing */
	t0 = now_ms();
	raw_wait_closed(fd);
	close(fd);
	cr_expect_geq(now_ms() - t0, 250, "not before its deadline");
	cr_expect_lt(now_ms() - t0, 3000);
	cr_expect_eq(stats_of(&sb).hs_failed, 1);
	cr_expect_eq(stats_of(&sb).malformed, 0);
	cr_expect_eq(sb.nev, 0);
}

/* A peer whose process listens only after the first connect was refused
 * (jobs start in any order) gets what was sent meanwhile: an eager send
 * that was copied out and reported done must not be lost. */
TCP_TEST(a_peer_that_listens_late_gets_what_was_sent)
{
	struct sockaddr_storage later = sb.addr;
	struct p4t_conn *x = NULL;
	uint64_t t0;

	side_close(&sb);
	cr_assert_eq(p4t_conn_get(sa.iface, &later, sb.addrlen, &x), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	t0 = now_ms();
	while (now_ms() - t0 < 300)
		pump_once();	/* refused, and refused again */
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	side_reopen(&sb, 0);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	cr_expect_eq(sb.ev[sb.nev - 1].seq, 1);
}

/* ---- restarts ------------------------------------------------------------- */

TCP_TEST(restart_fails_the_old_link_first)
{
	struct p4t_conn *x, *y, *x2;
	long failed, fresh;

	x = link_up(&sa, &sb, &y);
	(void)y;
	side_forget(&sa);
	/* b restarts on the same port and calls before a noticed anything */
	side_close(&sb);
	side_reopen(&sb, 0);
	x2 = conn_to(&sb, &sa);
	cr_assert_eq(send_seq(&sb, x2, 1, 10), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	failed = find_ev(&sa, UP_CONN_FAILED, 0);
	fresh = find_ev(&sa, UP_CONN_NEW, 0);
	cr_assert_geq(failed, 0);
	cr_assert_geq(fresh, 0);
	cr_expect_lt(failed, fresh, "the old link failed before the new one");
	cr_expect_eq(sa.ev[failed].conn, x);
	cr_expect_neq(sa.ev[fresh].conn, x);
	expect_msg(&sa.ev[sa.nev - 1], 1, 10);
	/* a's conn_get for b now gives the new link */
	cr_expect_eq(conn_to(&sa, &sb), sa.ev[fresh].conn);
}

TCP_TEST(hello_with_another_session_means_restart)
{
	uint8_t msg[72], ack[72];
	struct p4t_conn *x, *y;
	long failed, fresh;
	int fd;

	x = link_up(&sa, &sb, &y);
	side_forget(&sa);
	/* someone presents a's address with a new session */
	raw_hello(msg, 0x1234567, &sa.addr, sa.addrlen, 0);
	fd = raw_connect(&sb);
	cr_assert_eq(send(fd, msg, sizeof(msg), 0), (ssize_t)sizeof(msg));
	raw_read(fd, ack, sizeof(ack));
	cr_expect_eq(ack[1], P4W_T_HELLO_ACK);
	failed = find_ev(&sb, UP_CONN_FAILED, 0);
	fresh = find_ev(&sb, UP_CONN_NEW, 0);
	cr_assert_geq(failed, 0);
	cr_assert_gt(fresh, failed);
	cr_expect_eq(sb.ev[failed].conn, y);
	cr_expect_eq(stats_of(&sb).restarts, 1);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);	/* old socket gone */
	cr_expect_eq(sa.ev[0].conn, x);
	close(fd);
}
