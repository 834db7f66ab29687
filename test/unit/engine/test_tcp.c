/*
 * test_tcp.c - the TCP transport (p4t_tcp*.c) against the p4t.h contract
 * and what p4t_tcp.h promises, over loopback: links and messages.
 * Addresses (binding, port ranges, bad configs, IPv6), messages of every
 * size in order both ways, send validation, the lazy handshake and
 * conn_new, simultaneous connects making one link, a layered transport's
 * own messages (P4T_SEND_XPORT: to xport_recv, in order, never to recv;
 * malformed for an iface without xport_recv); progress: an idle link
 * left to epoll, the budget, the wait fd.
 *
 * Not here: the send path (partial writes and queueing, coalescing,
 * batching, upcall sends, ACK hold, the request bound) is in
 * test_tcp_send.c; failures (refused connects, auth_key mismatch, close
 * paths, a peer killed mid-pull, hostile sockets, restarts) in
 * test_tcp_fail.c; pull / push with chunking and their refusals, and self
 * links, in test_tcp_rma.c. The sides and helpers all use are in
 * p4t_tcp_test.h.
 *
 * Each side (struct side) records every upcall in order. Sockets move in
 * the background, so tests progress until what they wait for happened
 * (bounded, failing on timeout), never sleep for it.
 */
#include <config.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- addresses ------------------------------------------------------------ */

TCP_TEST(open_binds_loopback_and_reports_attrs)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&sa.addr;
	struct sockaddr_in *b = (struct sockaddr_in *)&sb.addr;
	struct p4t_iface_attr attr;
	struct sockaddr_in addr;
	size_t len = 4;

	cr_expect_eq(sa.addrlen, sizeof(struct sockaddr_in));
	cr_expect_eq(a->sin_family, AF_INET);
	cr_expect_eq(ntohl(a->sin_addr.s_addr), INADDR_LOOPBACK);
	cr_expect_neq(a->sin_port, 0);
	cr_expect_neq(a->sin_port, b->sin_port);
	cr_expect_eq(p4t_getname(sa.iface, &addr, &len), -FI_ETOOSMALL);
	cr_expect_eq(len, sizeof(addr));
	p4t_iface_query(sa.iface, &attr);
	cr_expect_eq(attr.max_inline, P4T_TCP_MAX_INLINE);
	cr_expect_eq(attr.max_msg, P4T_TCP_MAX_MSG);
	cr_expect_not(attr.rma_native);
	cr_expect_eq(attr.addr_len, sizeof(struct sockaddr_in));
	cr_expect_str_eq(p4t_tcp_ops.name, "tcp");
	cr_expect(fd_readable(sa.iface, 0) == false);
}

TCP_TEST(open_honours_port_range_and_refuses_bad_config)
{
	struct sockaddr_in want = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct p4t_iface_config cfg = { .addr = &want,
					.addrlen = sizeof(want) };
	struct side extra[3] = { 0 };
	struct p4t_iface *iface;
	uint16_t low;
	int i;

	/* find two consecutive free ports: the kernel's choice and next */
	cr_assert_eq(side_open_cfg(&extra[0], &cfg), 0);
	low = ntohs(((struct sockaddr_in *)&extra[0].addr)->sin_port);
	side_close(&extra[0]);
	cfg.port_low = low;
	cfg.port_high = (uint16_t)(low + 1);
	for (i = 0; i < 2; i++) {
		if (side_open_cfg(&extra[i], &cfg))
			cr_skip_test("port %u or %u taken meanwhile", low,
				     low + 1);
		cr_expect_eq(ntohs(((struct sockaddr_in *)&extra[i].addr)->sin_port),
			     low + i);
	}
	cr_expect_eq(side_open_cfg(&extra[2], &cfg), -FI_EADDRINUSE);
	/* an explicit port in use */
	cfg.port_low = cfg.port_high = 0;
	want.sin_port = ((struct sockaddr_in *)&extra[0].addr)->sin_port;
	cr_expect_eq(side_open_cfg(&extra[2], &cfg), -FI_EADDRINUSE);
	cfg.addrlen = sizeof(want) - 1;
	cr_expect_eq(side_open_cfg(&extra[2], &cfg), -FI_EINVAL);
	for (i = 0; i < 2; i++) {
		side_close(&extra[i]);
		side_forget(&extra[i]);
		free(extra[i].ev);
	}
	struct p4t_iface_config none = { 0 };
	cr_expect_eq(p4t_tcp_ops.iface_open(&none, &iface), -FI_EINVAL);
}

TCP_TEST(ipv6_loopback)
{
	struct sockaddr_in6 lo = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct p4t_iface_config cfg = { .addr = &lo, .addrlen = sizeof(lo) };
	struct side v6 = { 0 };
	struct p4t_conn *x, *y;

	side_close(&sb);
	if (side_open_cfg(&sb, &cfg))
		cr_skip_test("no IPv6 loopback here");
	cr_expect_eq(sb.addrlen, sizeof(struct sockaddr_in6));
	/* an IPv6 iface and an IPv4 one talk over a v6 link when both are */
	cr_assert_eq(side_open_cfg(&v6, &cfg), 0);
	side_close(&v6);
	free(v6.ev);
	side_close(&sa);
	cr_assert_eq(side_open_cfg(&sa, &cfg), 0);
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 1, 1000), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	cr_expect_eq(sb.ev[0].addrlen, sizeof(struct sockaddr_in6));
	cr_expect_eq(memcmp(&sb.ev[0].addr, &sa.addr, sa.addrlen), 0);
	expect_msg(&sb.ev[1], 1, 1000);
	y = sb.ev[0].conn;
	cr_assert_eq(send_seq(&sb, y, 2, 10), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	expect_msg(&sa.ev[0], 2, 10);
}

/* ---- messages ------------------------------------------------------------- */

TCP_TEST(messages_of_every_size_both_directions_in_order)
{
	static const size_t sizes[] = { 0, 1, 2, 15, 16, 255, 256, 4023, 4024,
					4025, 65536, 65537, 262071, 262072,
					262073, 300000, 1 << 20 };
	const size_t n = P4U_ARRAY_SIZE(sizes);
	struct p4t_conn *x = conn_to(&sa, &sb), *y;
	size_t i;
	int ret;

	sa.free_on_done = sb.free_on_done = true;
	for (i = 0; i < n; i++) {
		ret = send_msg(&sa, x, P4W_PUT, (uint32_t)i, sizes[i], true);
		cr_assert(ret == P4T_DONE || ret == P4T_QUEUED, "size %zu: %d",
			  sizes[i], ret);
	}
	PUMP_UNTIL(count(&sb, UP_RECV) == n);
	cr_assert_eq(sb.ev[0].kind, UP_CONN_NEW);
	y = sb.ev[0].conn;
	for (i = 0; i < n; i++) {
		expect_msg(&sb.ev[1 + i], (uint32_t)i, sizes[i]);
		cr_expect_eq(sb.ev[1 + i].conn, y);
	}
	/* and back, on the link the peer opened */
	for (i = 0; i < n; i++)
		cr_assert_geq(send_msg(&sb, y, P4W_PUT, (uint32_t)(100 + i),
				       sizes[n - 1 - i], true), 0);
	PUMP_UNTIL(count(&sa, UP_RECV) == n);
	for (i = 0, ret = 0; i < sa.nev; i++) {
		if (sa.ev[i].kind != UP_RECV)
			continue;
		expect_msg(&sa.ev[i], (uint32_t)(100 + ret), sizes[n - 1 - ret]);
		cr_expect_eq(sa.ev[i].conn, x);
		ret++;
	}
	cr_expect_eq(count(&sa, UP_CONN_NEW), 0);
	cr_expect_eq(stats_of(&sb).bytes_recv, stats_of(&sa).bytes_sent);
	cr_expect_eq(stats_of(&sa).bytes_recv, stats_of(&sb).bytes_sent);
	cr_expect_eq(stats_of(&sa).links, 1);
	cr_expect_eq(stats_of(&sb).links, 1);
}

TCP_TEST(send_validates_the_message)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint8_t hdr[16];
	struct iovec big = { .iov_base = hdr, .iov_len = P4T_TCP_MAX_MSG };

	hdr_make(hdr, P4W_PUT, 17, 0);	/* says 17, is 16 */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 0, NULL, 0), -FI_EINVAL);
	hdr_make(hdr, P4W_T_HELLO, 16, 0);	/* a transport type */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 0, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 8, NULL, 0, NULL, 0), -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 16 + P4T_TCP_MAX_MSG, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &big, 1, NULL, 0),
		     -FI_EMSGSIZE);
	cr_expect_eq(stats_of(&sa).msgs_sent, 0);
}

/* ---- a transport layered on this one --------------------------------------- */

/* Reopen s with (or without) xport_recv, as a layered transport has it. */
static void side_layered(struct side *s, bool layered)
{
	side_close(s);
	side_forget(s);
	s->layered = layered;
	side_open(s, 0);
}

static int send_xport(struct side *s, struct p4t_conn *conn,
		      const char *text)
{
	return p4t_send(s->iface, conn, text, strlen(text), NULL, 0, NULL,
			P4T_SEND_XPORT);
}

static void expect_xport(const struct up_event *ev, const char *text)
{
	cr_assert_eq(ev->kind, UP_XPORT, "event kind %d, want xport_recv",
		     ev->kind);
	cr_assert_eq(ev->len, strlen(text));
	cr_expect_eq(memcmp(ev->msg, text, ev->len), 0);
}

/*
 * A layered transport (verbs on tcp) sends its own messages over the
 * link, the first while it still connects: its peer's gets each, whole,
 * through xport_recv, in order with the engine's messages, and recv sees
 * only the engine's.
 */
TCP_TEST(xport_messages_reach_the_layered_transport_in_order)
{
	struct p4t_conn *x, *me;
	uint8_t big[P4W_XPORT_MAX + 1] = { 0 };
	struct iovec iov = { big, 1 };

	side_layered(&sa, true);
	side_layered(&sb, true);
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_xport(&sa, x, "boot"), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	cr_assert_eq(send_xport(&sa, x, "ready, steady"), P4T_DONE);
	cr_assert_eq(p4t_send(sa.iface, x, big, P4W_XPORT_MAX, NULL, 0, NULL,
			      P4T_SEND_XPORT), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 5000), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
	cr_assert_eq(sb.nev, 6);
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	expect_xport(&sb.ev[1], "boot");
	expect_msg(&sb.ev[2], 1, 100);
	expect_xport(&sb.ev[3], "ready, steady");
	cr_expect_eq(sb.ev[4].kind, UP_XPORT);
	cr_expect_eq(sb.ev[4].len, P4W_XPORT_MAX);
	expect_msg(&sb.ev[5], 2, 5000);
	cr_expect_eq(stats_of(&sa).xport_sent, 3);
	cr_expect_eq(stats_of(&sb).xport_recv, 3);
	cr_expect_eq(stats_of(&sb).msgs_recv, 2, "the engine's only");
	/* one message in hdr, nothing else; not on the self link */
	cr_expect_eq(p4t_send(sa.iface, x, big, P4W_XPORT_MAX + 1, NULL, 0,
			      NULL, P4T_SEND_XPORT), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, big, 4, &iov, 1, NULL,
			      P4T_SEND_XPORT), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, big, 4, NULL, 0, NULL,
			      P4T_SEND_XPORT | P4T_SEND_SEQ), -FI_EINVAL);
	me = conn_to(&sa, &sa);
	cr_expect_eq(send_xport(&sa, me, "myself"), -FI_EINVAL);
	cr_expect_eq(stats_of(&sa).xport_sent, 3);
}

/*
 * An iface nobody is layered on (the engine's: no xport_recv) takes such
 * a message for malformed input: the link fails at both ends and nothing
 * of it reaches recv.
 */
TCP_TEST(xport_message_to_an_engine_iface_fails_the_link)
{
	struct p4t_conn *x;

	side_layered(&sa, true);
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 1, 10), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_assert_eq(send_xport(&sa, x, "boot"), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1 &&
		   count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_eq(sb.ev[find_ev(&sb, UP_CONN_FAILED, 0)].status,
		     -FI_EBADMSG);
	cr_expect_eq(count(&sb, UP_RECV), 1);
	cr_expect_eq(count(&sb, UP_XPORT), 0);
	cr_expect_eq(stats_of(&sb).malformed, 1);
}

TCP_TEST(lazy_connect_handshake_and_conn_new)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y;
	struct sockaddr_in *from;

	cr_expect_eq(stats_of(&sa).connects, 1);
	cr_expect_eq(sb.nev, 0);
	cr_expect_eq(conn_to(&sa, &sb), x);	/* one link per address */
	cr_assert_eq(send_seq(&sa, x, 1, 10), P4T_DONE);	/* queued */
	cr_assert_eq(send_seq(&sa, x, 2, 10), P4T_DONE);
	cr_expect_eq(stats_of(&sa).sendmsg_calls, 0);
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
	cr_assert_eq(sb.nev, 3);
	cr_assert_eq(sb.ev[0].kind, UP_CONN_NEW);
	from = (struct sockaddr_in *)&sb.ev[0].addr;
	cr_expect_eq(sb.ev[0].addrlen, sizeof(struct sockaddr_in));
	cr_expect_eq(memcmp(from, &sa.addr, sa.addrlen), 0,
		     "conn_new names the caller's listening address");
	y = sb.ev[0].conn;
	cr_expect_eq(sb.ev[1].conn, y);
	cr_expect_eq(conn_to(&sb, &sa), y);	/* the same link */
	cr_assert_eq(send_seq(&sb, y, 3, 5), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	cr_expect_eq(sa.nev, 1);		/* no conn_new: A called */
	expect_msg(&sa.ev[0], 3, 5);
	cr_expect_eq(stats_of(&sa).handshakes, 1);
	cr_expect_eq(stats_of(&sb).handshakes, 1);
	cr_expect_eq(stats_of(&sb).accepts, 1);
}

TCP_TEST(simultaneous_connect_makes_one_link)
{
	int round;

	for (round = 0; round < 5; round++) {
		struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
		uint32_t i;

		for (i = 0; i < 50; i++) {
			cr_assert_eq(send_seq(&sa, x, i, i * 3), P4T_DONE);
			cr_assert_eq(send_seq(&sb, y, 1000 + i, i * 5),
				     P4T_DONE);
		}
		PUMP_UNTIL(count(&sa, UP_RECV) == 50 &&
			   count(&sb, UP_RECV) == 50);
		pump_quiet(20);
		cr_assert_eq(sa.nev, 50, "round %d: %zu events", round, sa.nev);
		cr_assert_eq(sb.nev, 50);
		for (i = 0; i < 50; i++) {
			expect_msg(&sb.ev[i], i, i * 3);
			expect_msg(&sa.ev[i], 1000 + i, i * 5);
			cr_expect_eq(sb.ev[i].conn, y);
			cr_expect_eq(sa.ev[i].conn, x);
		}
		cr_expect_eq(stats_of(&sa).links, 1);
		cr_expect_eq(stats_of(&sb).links, 1);
		cr_expect_eq(stats_of(&sa).link_failures, 0);
		/* again from scratch, with fresh ifaces */
		side_forget(&sa);
		side_forget(&sb);
		side_close(&sa);
		side_close(&sb);
		side_open(&sa, 0);
		side_open(&sb, 0);
	}
}

/* ---- progress ------------------------------------------------------------- */

/* A quiet link is not read until epoll says it has data: recv would take
 * the socket lock the delivering softirq needs, at every poll. */
TCP_TEST(idle_link_is_left_to_epoll)
{
	struct p4t_conn *y, *x = link_up(&sa, &sb, &y);
	struct p4t_tcp_stats st;
	int i;

	pump_quiet(20);
	st = stats_of(&sa);
	for (i = 0; i < 100; i++)
		(void)p4t_progress(sa.iface, 64);
	cr_expect_leq(stats_of(&sa).recv_calls - st.recv_calls, 1,
		      "%llu reads of an idle link in 100 progress calls",
		      (unsigned long long)(stats_of(&sa).recv_calls -
					   st.recv_calls));
	/* and data is still seen at once */
	cr_assert_eq(send_seq(&sb, y, 5, 100), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	expect_msg(&sa.ev[find_ev(&sa, UP_RECV, 0)], 5, 100);
	(void)x;
}

/*
 * With no link (every peer on another transport) only a connection can
 * come: progress asks epoll once per P4T_TCP_IDLE_EPOLL_NS, not on every
 * call, and a peer that connects is still served.
 */
TCP_TEST(without_links_progress_spins_without_epoll)
{
	struct p4t_tcp_stats st;
	uint64_t t0, calls, elapsed_ns;
	int i;

	pump_quiet(20);
	st = stats_of(&sa);
	t0 = p4u_time_ns();
	for (i = 0; i < 20000; i++)
		(void)p4t_progress(sa.iface, 64);
	elapsed_ns = p4u_time_ns() - t0;
	calls = stats_of(&sa).epoll_calls - st.epoll_calls;
	cr_expect_leq(calls, elapsed_ns / P4T_TCP_IDLE_EPOLL_NS + 1,
		      "%llu epoll_wait in 20000 idle calls (%llu us)",
		      (unsigned long long)calls,
		      (unsigned long long)(elapsed_ns / 1000));
	cr_assert_eq(send_seq(&sb, conn_to(&sb, &sa), 7, 100), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 1);
	expect_msg(&sa.ev[find_ev(&sa, UP_RECV, 0)], 7, 100);
}

TCP_TEST(progress_respects_the_budget)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint64_t t0 = now_ms();
	uint32_t i;
	int done;

	for (i = 0; i < 20; i++)
		cr_assert_eq(send_seq(&sa, x, i, 4), P4T_DONE);
	/* until the first message is staged at b */
	while (!count(&sb, UP_RECV)) {
		p4t_progress(sa.iface, 64);
		done = p4t_progress(sb.iface, 1);
		cr_assert_leq(done, 1);
		cr_assert_lt(now_ms() - t0, 10000);
	}
	while (count(&sb, UP_RECV) < 20) {
		size_t before = count(&sb, UP_RECV);

		done = p4t_progress(sb.iface, 3);
		cr_assert_leq(count(&sb, UP_RECV) - before, 3);
		cr_assert_leq(done, 3);
		cr_assert_lt(now_ms() - t0, 10000);
	}
	for (i = 0; i < 20; i++)
		expect_msg(&sb.ev[1 + i], i, 4);
}

TCP_TEST(wait_fd_wakes_a_blocked_waiter)
{
	struct p4t_conn *x, *y;

	x = link_up(&sa, &sb, &y);
	pump_quiet(10);
	cr_expect_not(fd_readable(sb.iface, 0));
	cr_assert_eq(send_seq(&sa, x, 5, 100), P4T_DONE);
	cr_expect(fd_readable(sb.iface, 5000));
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_not(fd_readable(sb.iface, 0));
	/* a self message wakes it too */
	cr_assert_eq(send_seq(&sb, conn_to(&sb, &sb), 6, 1), P4T_DONE);
	cr_expect(fd_readable(sb.iface, 0));
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
}

/* A link that always has a budget's worth waiting starves no other. */
TCP_TEST(a_flooding_link_does_not_starve_the_others)
{
	struct p4t_conn *x, *y, *in;

	side_open(&sc, 0);
	/* sa's link comes up first: the first sc reads */
	x = link_up(&sa, &sc, &in);
	y = link_up(&sb, &sc, &in);
	pump_quiet(20);
	xport_flood_fairness(x, y);
}
