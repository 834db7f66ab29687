/*
 * test_tcp.c - the TCP transport (p4t_tcp*.c) against the p4t.h contract
 * and what p4t_tcp.h promises, over loopback: addresses, messages of
 * every size in order, the lazy handshake and conn_new, simultaneous
 * connects, partial writes and queueing, coalescing, batching (between
 * progress calls, by reference, and inside one), the request bound,
 * refused connects, a peer killed mid-pull, hostile sockets, auth_key
 * mismatch, restart detection, close paths, the wait fd and the budget.
 * Pull / push with chunking and their refusals, and self links, are tested
 * in test_tcp_rma.c; the sides and helpers both use are in p4t_tcp_test.h.
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

TCP_TEST(partial_writes_queue_and_complete_in_order)
{
	const uint32_t n = 400;
	struct p4t_conn *x, *y;
	size_t queued = 0, copies, done_ok;
	uint32_t i;
	int ret;

	/* small buffers: the socket is soon full while b does not read */
	p4t_tcp_set_sockbuf(sa.iface, 16384, 65536);
	p4t_tcp_set_sockbuf(sb.iface, 16384, 65536);
	x = link_up(&sa, &sb, &y);
	sa.free_on_done = true;
	/* a flood the receiver does not read */
	for (i = 0; i < n; i++) {
		ret = send_msg(&sa, x, P4W_PUT, i, i % 2 ? 20000 : 100 + i,
			       true);
		cr_assert(ret == P4T_DONE || ret == P4T_QUEUED);
		queued += ret == P4T_QUEUED;
		if (i % 64 == 0)
			p4t_progress(sa.iface, 16);
	}
	copies = stats_of(&sa).queued_copy;
	cr_expect_gt(queued, 0, "large sends were referenced");
	cr_expect_gt(copies, 0, "small sends were copied");
	cr_expect_eq(stats_of(&sa).queued_ref, queued);
	/* no op_ctx: the caller reuses its memory at once, so a copy */
	cr_assert_eq(send_msg(&sa, x, P4W_REPLY, n, 100000, false), P4T_DONE);
	cr_expect_eq(stats_of(&sa).queued_copy, copies + 1);
	PUMP_UNTIL(count(&sb, UP_RECV) == n + 1);
	for (i = 0; i <= n; i++)
		expect_msg(&sb.ev[i], i, i == n ? 100000 :
			   i % 2 ? 20000 : 100 + i);
	PUMP_UNTIL(count(&sa, UP_SEND_DONE) == queued);
	for (i = 0, done_ok = 0; i < sa.nev; i++)
		done_ok += sa.ev[i].kind == UP_SEND_DONE && !sa.ev[i].status;
	cr_expect_eq(done_ok, queued);
	cr_expect_gt(stats_of(&sa).writev_calls, 0);
}

TCP_TEST(coalescing_small_sends)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y;
	struct p4t_tcp_stats st;
	uint32_t i;

	/* queued while connecting: one writev carries them all */
	for (i = 0; i < 1000; i++)
		cr_assert_eq(send_seq(&sa, x, i, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1000);
	st = stats_of(&sa);
	cr_expect_eq(st.sendmsg_calls, 0);
	cr_expect_leq(st.writev_calls, 3, "%llu writevs for 1000 messages",
		      (unsigned long long)st.writev_calls);
	cr_expect_leq(stats_of(&sb).recv_calls, 20);
	for (i = 0; i < 1000; i++)
		expect_msg(&sb.ev[1 + i], i, 8);
	/* steady state: one sendmsg per message, nothing queued */
	y = sb.ev[0].conn;
	(void)y;
	for (i = 0; i < 100; i++) {
		cr_assert_eq(send_seq(&sa, x, 2000 + i, 64), P4T_DONE);
		PUMP_UNTIL(count(&sb, UP_RECV) == 1001 + i);
	}
	cr_expect_eq(stats_of(&sa).sendmsg_calls, st.sendmsg_calls + 100);
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls);
	cr_expect_eq(stats_of(&sa).queued_copy, st.queued_copy);
}

/* P4T_SEND_BATCH: sends flagged so wait on the link's queue and leave
 * together at the next progress call (or flush, or iface_close), in
 * order; a send without the flag is written by the call. */
TCP_TEST(batched_sends_leave_at_the_next_progress)
{
	struct p4t_conn *x;
	struct p4t_tcp_stats st;
	uint32_t i;

	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 0, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);		/* link up */
	st = stats_of(&sa);
	cr_assert_eq(send_seq(&sa, x, 1, 8), P4T_DONE);
	sa.send_flags = P4T_SEND_BATCH;
	for (i = 2; i <= 64; i++)
		cr_assert_eq(send_seq(&sa, x, i, 8 * i), P4T_DONE);
	sa.send_flags = 0;
	cr_expect_eq(stats_of(&sa).sendmsg_calls, st.sendmsg_calls + 1,
		     "the unflagged one written at once");
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls,
		     "the others not yet");
	PUMP_UNTIL(count(&sb, UP_RECV) == 65);
	cr_expect_eq(stats_of(&sa).sendmsg_calls, st.sendmsg_calls + 1);
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls + 1,
		     "63 messages, one writev");
	expect_msg(&sb.ev[2], 1, 8);
	for (i = 2; i <= 64; i++)
		expect_msg(&sb.ev[1 + i], i, 8 * i);
	/* p4t_flush writes them without a progress call */
	st = stats_of(&sa);
	sa.send_flags = P4T_SEND_BATCH;
	cr_assert_eq(send_seq(&sa, x, 70, 8), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 71, 8), P4T_DONE);
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls);
	p4t_flush(sa.iface);
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls + 1);
	/* a batch the caller never progressed still leaves at close */
	cr_assert_eq(send_seq(&sa, x, 100, 8), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 101, 8), P4T_DONE);
	side_close(&sa);
	PUMP_UNTIL(count(&sb, UP_RECV) == 69);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 65)], 70, 8);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 66)], 71, 8);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 67)], 100, 8);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 68)], 101, 8);
}

/*
 * A send without P4T_SEND_BATCH reaches the peer although the sender
 * never calls again (a ping-pong's last reply, after which the process
 * waits for its peer on another channel: Debian's fi_pingpong hung there
 * when every such request waited for the next progress call).
 */
TCP_TEST(an_unbatched_send_is_not_held)
{
	struct p4t_conn *x;
	uint64_t t0;

	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 0, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);		/* link up */
	cr_assert_eq(send_seq(&sa, x, 1, 8), P4T_DONE);
	/* only the receiver progresses from here */
	t0 = now_ms();
	while (count(&sb, UP_RECV) < 2) {
		p4t_progress(sb.iface, 16);
		cr_assert_lt(now_ms() - t0, 2000,
			     "the request waits for the sender's next call");
	}
	expect_msg(&sb.ev[2], 1, 8);
}

/* Larger batched requests are queued by reference (the caller waits for
 * send_done) and leave with the batch; above the limit they go at once. */
TCP_TEST(batched_large_sends_are_referenced_and_done_when_written)
{
	struct p4t_tcp_stats st;
	struct p4t_conn *x;
	uint32_t i;
	int ret;

	sa.free_on_done = true;
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 0, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);		/* link up */
	cr_assert_eq(send_seq(&sa, x, 100, 8), P4T_DONE);
	sa.send_flags = P4T_SEND_BATCH;
	st = stats_of(&sa);
	for (i = 1; i <= 6; i++)
		cr_assert_eq(send_msg(&sa, x, P4W_PUT, i, 8192, true),
			     P4T_QUEUED);
	cr_expect_eq(count(&sa, UP_SEND_DONE), 0);
	cr_expect_eq(stats_of(&sa).sendmsg_calls + stats_of(&sa).writev_calls,
		     st.sendmsg_calls + st.writev_calls, "nothing written yet");
	PUMP_UNTIL(count(&sb, UP_RECV) == 8 && count(&sa, UP_SEND_DONE) == 6);
	cr_expect_eq(stats_of(&sa).writev_calls, st.writev_calls + 1,
		     "six 8 KiB requests, one writev");
	cr_expect_eq(stats_of(&sa).queued_ref, st.queued_ref + 6);
	expect_msg(&sb.ev[2], 100, 8);
	for (i = 1; i <= 6; i++) {
		expect_msg(&sb.ev[2 + i], i, 8192);
		cr_expect_eq(sa.ev[find_ev(&sa, UP_SEND_DONE, i - 1)].status,
			     0);
	}
	/* 64 KiB is not batched: written by the send itself */
	st = stats_of(&sa);
	ret = send_msg(&sa, x, P4W_PUT, 7, 65536, true);
	cr_expect(ret == P4T_DONE || ret == P4T_QUEUED);
	cr_expect_eq(stats_of(&sa).sendmsg_calls, st.sendmsg_calls + 1);
	PUMP_UNTIL(count(&sb, UP_RECV) == 9);
	expect_msg(&sb.ev[9], 7, 65536);
}

/* Each message b receives is answered from its recv upcall, batched as
 * the engine sends from inside its progress. */
static void reply_from_recv(struct side *s, struct p4t_conn *conn,
			    const void *msg, size_t len)
{
	uint32_t seq;

	cr_assert_geq(len, 12);
	memcpy(&seq, (const uint8_t *)msg + 8, 4);
	cr_assert_eq(send_seq(s, conn, seq + 1000, 16), P4T_DONE);
}

/* What upcalls send inside a progress call leaves together when the call
 * ends: replies to a burst cost a writev per read, not a sendmsg each. */
TCP_TEST(upcall_sends_leave_together_when_progress_ends)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	struct p4t_tcp_stats st;
	uint32_t i;

	cr_assert_eq(send_seq(&sa, x, 0, 8), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);		/* link up */
	sb.on_recv = reply_from_recv;
	sb.send_flags = P4T_SEND_BATCH;
	st = stats_of(&sb);
	for (i = 1; i <= 64; i++)
		cr_assert_eq(send_seq(&sa, x, i, 8), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 64);
	cr_expect_eq(stats_of(&sb).sendmsg_calls, st.sendmsg_calls,
		     "no reply written on its own");
	cr_expect_leq(stats_of(&sb).writev_calls - st.writev_calls,
		      stats_of(&sb).recv_calls - st.recv_calls);
	for (i = 1; i <= 64; i++)
		expect_msg(&sa.ev[find_ev(&sa, UP_RECV, i - 1)], i + 1000, 16);
}

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

TCP_TEST(requests_get_eagain_above_the_queue_bound_responses_never)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint32_t i, ok = 0;
	int ret;

	p4t_tcp_set_queue_limit(sa.iface, 10000);
	for (i = 0; i < 100; i++) {
		ret = send_seq(&sa, x, i, 1000);
		if (ret == -FI_EAGAIN)
			break;
		cr_assert_eq(ret, P4T_DONE);
		ok++;
	}
	cr_expect_eq(ret, -FI_EAGAIN);
	cr_expect_geq(ok, 9);
	cr_expect_leq(ok, 11);
	for (i = 0; i < 20; i++)
		cr_expect_eq(send_msg(&sa, x, P4W_REPLY, 500 + i, 1000, false),
			     P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == ok + 20);
	cr_expect_eq(stats_of(&sa).eagain, 1);
	/* drained: requests go again */
	cr_expect_eq(send_seq(&sa, x, 999, 10), P4T_DONE);
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
	cr_expect_eq(sc.nev, 0);
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

static int raw_connect(const struct side *to)
{
	int fd = socket(to->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (const struct sockaddr *)&to->addr,
			     (socklen_t)to->addrlen), 0);
	return fd;
}

/* Progress until the peer closed fd (EOF or reset). */
static void raw_wait_closed(int fd)
{
	uint8_t buf[256];
	uint64_t t0 = now_ms();
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return;
		pump_once();
		cr_assert_lt(now_ms() - t0, 30000, "socket not closed");
	}
}

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
