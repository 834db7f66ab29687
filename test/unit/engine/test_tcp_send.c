/*
 * test_tcp_send.c - the TCP transport's send path, over loopback: partial
 * writes queueing and completing in order (copied or by reference),
 * pipelining on a new link, batching (P4T_SEND_BATCH: at the next
 * progress call or flush, by reference for larger ones, and what upcalls
 * send inside one leaves when progress ends), an unbatched send not held,
 * and the request bound (-FI_EAGAIN for P4T_SEND_SEQ, never for
 * responses).
 *
 * Not here: links, messages and progress (test_tcp.c), failures
 * (test_tcp_fail.c), pull / push (test_tcp_rma.c). The sides and helpers
 * are in p4t_tcp_test.h.
 *
 * Each side (struct side) records every upcall in order. Sockets move in
 * the background, so tests progress until what they wait for happened
 * (bounded, failing on timeout), never sleep for it.
 */
#include <config.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- queueing and coalescing ---------------------------------------------- */

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

TCP_TEST(new_link_sends_are_pipelined_in_order)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y;
	struct p4t_tcp_stats st;
	uint32_t i;

	/*
	 * A new link: the connect completes inside the call on loopback, so
	 * its HELLO and each send after it are written at once (pipelined
	 * handshake, docs/tcp.md), none waits for the HELLO_ACK:
	 * all arrive, in order, while only the receiver progresses.
	 */
	for (i = 0; i < 1000; i++)
		cr_assert_eq(send_seq(&sa, x, i, 8), P4T_DONE);
	PUMP_SIDE_UNTIL(&sb, count(&sb, UP_RECV) == 1000);
	cr_expect_leq(stats_of(&sb).recv_calls, 1000);
	for (i = 0; i < 1000; i++)
		expect_msg(&sb.ev[find_ev(&sb, UP_RECV, i)], i, 8);
	pump_quiet(20);		/* the HELLO_ACK confirms the link */
	/* steady state: one sendmsg per message, nothing queued */
	st = stats_of(&sa);
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

/* The first message of a new link reaches the peer without another call
 * from the sender: only the receiver progresses. */
TCP_TEST(first_send_leaves_without_a_further_call)
{
	struct p4t_conn *x = conn_to(&sa, &sb);

	cr_assert_eq(send_seq(&sa, x, 7, 100), P4T_DONE);
	PUMP_SIDE_UNTIL(&sb, count(&sb, UP_RECV) == 1);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 0)], 7, 100);
}

/* ---- batching ------------------------------------------------------------- */

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

/* ---- the request bound --------------------------------------------------- */

TCP_TEST(requests_get_eagain_above_the_queue_bound_responses_never)
{
	struct p4t_conn *x, *y;
	size_t base;
	uint32_t i, ok = 0;
	int ret = 0;

	/* small socket buffers and a receiver that does not read while we
	 * send: the kernel takes a few messages, then the link's queue
	 * grows to its bound */
	p4t_tcp_set_sockbuf(sa.iface, 16384, 65536);
	p4t_tcp_set_sockbuf(sb.iface, 16384, 65536);
	x = link_up(&sa, &sb, &y);
	base = count(&sb, UP_RECV);
	p4t_tcp_set_queue_limit(sa.iface, 10000);
	for (i = 0; i < 4000; i++) {
		ret = send_seq(&sa, x, i, 1000);
		if (ret == -FI_EAGAIN)
			break;
		cr_assert_eq(ret, P4T_DONE);
		ok++;
	}
	cr_expect_eq(ret, -FI_EAGAIN, "no -FI_EAGAIN after %u requests", ok);
	cr_expect_eq(stats_of(&sa).eagain, 1);
	for (i = 0; i < 20; i++)
		cr_expect_eq(send_msg(&sa, x, P4W_REPLY, 500 + i, 1000, false),
			     P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == base + ok + 20);
	cr_expect_eq(stats_of(&sa).eagain, 1);
	/* drained: requests go again */
	cr_expect_eq(send_seq(&sa, x, 9999, 10), P4T_DONE);
}
