/*
 * test_loop.c - the loop transport (p4t_loop.c) against the p4t.h contract
 * and the guarantees written in p4t_loop.h: addresses, messages of every
 * size, FIFO order, conn_new and refusals, failures and what they abort,
 * progress budget, wait fd, queue bound, the test hooks and use from
 * several threads. Pull, push and exposures are tested in test_loop_rma.c;
 * the sides, fixtures and helpers both use are in p4t_loop_test.h.
 *
 * Each side (struct side) records every upcall it gets, in order; tests
 * call progress explicitly, so what they see is deterministic.
 */
#include <config.h>

#include <pthread.h>

#include "p4t_loop_test.h"

TestSuite(loop, .init = loop_setup, .fini = loop_teardown, .timeout = 60);

/* ---- addresses ----------------------------------------------------------- */

LOOP_TEST(open_assigns_unique_loopback_ports)
{
	struct p4t_iface_attr attr;
	struct sockaddr_in addr;
	size_t len = 4;

	side_open(&sc, 0);
	cr_expect_eq(sa.addr.sin_family, AF_INET);
	cr_expect_eq(ntohl(sa.addr.sin_addr.s_addr), INADDR_LOOPBACK);
	cr_expect_neq(sa.addr.sin_port, 0);
	cr_expect_neq(sa.addr.sin_port, sb.addr.sin_port);
	cr_expect_neq(sb.addr.sin_port, sc.addr.sin_port);
	cr_expect_neq(sa.addr.sin_port, sc.addr.sin_port);
	cr_expect_eq(p4t_getname(sa.iface, &addr, &len), -FI_ETOOSMALL);
	cr_expect_eq(len, sizeof(addr));

	p4t_iface_query(sa.iface, &attr);
	cr_expect_eq(attr.max_inline, 256);
	cr_expect_eq(attr.max_msg, P4W_MAX_MSG);
	cr_expect_eq(attr.max_rma, SIZE_MAX);
	cr_expect_not(attr.rma_native);
	cr_expect_eq(attr.addr_len, sizeof(struct sockaddr_in));
	cr_expect_str_eq(p4t_loop_ops.name, "loop");
}

LOOP_TEST(open_honours_port_and_range)
{
	struct sockaddr_in want = { .sin_family = AF_INET,
				    .sin_port = htons(40001) };
	struct p4t_iface_config cfg = { .addr = &want,
					.addrlen = sizeof(want) };
	struct side extra[3] = { 0 };
	int i;

	/* INADDR_ANY listens on 127.0.0.1; the port is taken as given */
	cr_assert_eq(side_open_cfg(&sc, &cfg), 0);
	cr_expect_eq(ntohs(sc.addr.sin_port), 40001);
	cr_expect_eq(ntohl(sc.addr.sin_addr.s_addr), INADDR_LOOPBACK);
	cr_expect_eq(side_open_cfg(&extra[0], &cfg), -FI_EADDRINUSE);
	cfg.addrlen = sizeof(want) - 1;
	cr_expect_eq(side_open_cfg(&extra[0], &cfg), -FI_EINVAL);

	struct p4t_iface_config range = { .port_low = 40100,
					  .port_high = 40101 };
	for (i = 0; i < 2; i++) {
		cr_assert_eq(side_open_cfg(&extra[i], &range), 0);
		cr_expect_eq(ntohs(extra[i].addr.sin_port), 40100 + i);
	}
	cr_expect_eq(side_open_cfg(&extra[2], &range), -FI_EADDRINUSE);
	for (i = 0; i < 2; i++)
		side_close(&extra[i]);

	struct p4t_iface_config no_upcalls = { 0 };
	struct p4t_iface *iface;
	cr_expect_eq(p4t_loop_ops.iface_open(&no_upcalls, &iface), -FI_EINVAL);
}

/* ---- messages ------------------------------------------------------------ */

LOOP_TEST(messages_of_every_size_with_iovecs)
{
	static const size_t sizes[] = { 0, 1, 2, 15, 16, 240, 255, 256, 257,
					4095, 65536, 65537, 1 << 20 };
	struct p4t_conn *x = conn_to(&sa, &sb);
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(sizes); i++)
		cr_assert_eq(send_seq(&sa, x, (uint32_t)i, sizes[i]), P4T_DONE,
			     "size %zu", sizes[i]);
	/* nothing moves before the receiver progresses */
	cr_expect_eq(sb.nev, 0);
	pump(&sa, &sb);

	cr_assert_eq(sb.nev, 1 + P4U_ARRAY_SIZE(sizes));
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	for (i = 0; i < P4U_ARRAY_SIZE(sizes); i++) {
		expect_msg(&sb.ev[1 + i], (uint32_t)i, sizes[i]);
		cr_expect_eq(sb.ev[1 + i].conn, sb.ev[0].conn);
	}
	cr_expect_eq(sa.nev, 0);
	cr_expect_eq(stats_of(&sa).msgs_sent, P4U_ARRAY_SIZE(sizes));
	cr_expect_eq(stats_of(&sb).msgs_delivered, P4U_ARRAY_SIZE(sizes));
	cr_expect_eq(stats_of(&sb).bytes_delivered, stats_of(&sa).bytes_sent);
}

LOOP_TEST(fifo_per_link_both_directions)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
	uint32_t i;

	for (i = 0; i < 500; i++) {
		cr_assert_eq(send_seq(&sa, x, i, i % 97), P4T_DONE);
		cr_assert_eq(send_seq(&sb, y, 1000 + i, i % 13), P4T_DONE);
		if (i % 50 == 0)	/* deliveries interleave with sends */
			p4t_progress(sb.iface, 7);
	}
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 500);
	cr_assert_eq(sb.nev, 500);
	for (i = 0; i < 500; i++) {
		expect_msg(&sb.ev[i], i, i % 97);
		expect_msg(&sa.ev[i], 1000 + i, i % 13);
		cr_expect_eq(sb.ev[i].conn, y);
		cr_expect_eq(sa.ev[i].conn, x);
	}
}

LOOP_TEST(conn_new_on_first_contact_then_reply_on_it)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y;

	cr_assert_eq(send_seq(&sa, x, 1, 10), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 10), P4T_DONE);
	cr_expect_eq(p4t_progress(sb.iface, 16), 2);
	cr_assert_eq(sb.nev, 3);
	cr_assert_eq(sb.ev[0].kind, UP_CONN_NEW);
	cr_expect_eq(sb.ev[0].addr.sin_port, sa.addr.sin_port);
	cr_expect_eq(sb.ev[0].addr.sin_addr.s_addr, sa.addr.sin_addr.s_addr);
	y = sb.ev[0].conn;
	cr_expect_eq(sb.ev[1].conn, y);
	cr_expect_eq(sb.ev[2].conn, y);
	/* the engine's conn_get for that address is the same link */
	cr_expect_eq(conn_to(&sb, &sa), y);

	cr_assert_eq(send_seq(&sb, y, 3, 5), P4T_DONE);
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 1);	/* no conn_new: A called */
	expect_msg(&sa.ev[0], 3, 5);
	cr_expect_eq(sa.ev[0].conn, x);
}

LOOP_TEST(conn_get_on_both_sides_makes_one_link)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);

	cr_expect_eq(conn_to(&sa, &sb), x);	/* one conn per peer */
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(send_seq(&sb, y, 2, 0), P4T_DONE);
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 1);
	cr_assert_eq(sb.nev, 1);
	cr_expect_eq(sb.ev[0].conn, y);
	cr_expect_eq(sa.ev[0].conn, x);
}

LOOP_TEST(conn_get_before_delivery_suppresses_conn_new)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y;

	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	y = conn_to(&sb, &sa);
	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 1);
	cr_expect_eq(sb.ev[0].kind, UP_RECV);
	cr_expect_eq(sb.ev[0].conn, y);
}

LOOP_TEST(conn_new_refusal_fails_the_link_on_both_sides)
{
	struct p4t_conn *x = conn_to(&sa, &sb);

	sb.conn_new_ret = -FI_EPERM;
	cr_assert_eq(send_seq(&sa, x, 1, 8), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 8), P4T_DONE);
	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 1);		/* the refused conn: nothing more */
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[0].conn, x);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
	cr_expect_eq(stats_of(&sb).msgs_dropped, 2);
	cr_expect_eq(stats_of(&sb).msgs_delivered, 0);

	/* a later conn_get is a new link, announced again */
	sb.conn_new_ret = 0;
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 3, 8), P4T_DONE);
	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 3);
	cr_expect_eq(sb.ev[1].kind, UP_CONN_NEW);
	expect_msg(&sb.ev[2], 3, 8);
}

LOOP_TEST(unknown_address_is_refused_from_progress)
{
	struct sockaddr_in nobody = sa.addr;
	struct p4t_conn *x = NULL;

	nobody.sin_port = htons(1);
	cr_assert_eq(p4t_conn_get(sa.iface, &nobody, sizeof(nobody), &x), 0);
	cr_assert(x);
	cr_expect_not(fd_readable(sa.iface, 0));
	cr_expect_eq(send_seq(&sa, x, 1, 4), P4T_DONE);
	cr_expect_eq(sa.nev, 0);		/* never from inside send */
	cr_expect(fd_readable(sa.iface, 0));
	cr_expect_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[0].conn, x);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
	cr_expect_not(fd_readable(sa.iface, 0));
	cr_expect_eq(stats_of(&sa).sends_dropped, 1);

	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	cr_expect_eq(p4t_conn_get(sa.iface, &v6, sizeof(v6), &x), -FI_EINVAL);
	cr_expect_eq(p4t_conn_get(sa.iface, &v6, sizeof(nobody), &x),
		     -FI_EINVAL);
}

LOOP_TEST(different_auth_key_is_refused)
{
	struct p4t_conn *x;

	side_open(&sc, 42);
	x = conn_to(&sa, &sc);
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	pump(&sa, &sc);
	cr_expect_eq(sc.nev, 0);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
}

LOOP_TEST(send_validates_the_header)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint8_t hdr[32], payload[8] = { 0 };
	struct iovec iov = { payload, sizeof(payload) };
	struct iovec huge = { payload, P4W_MAX_MSG };
	struct iovec null_base = { NULL, 4 };

	hdr_make(hdr, P4W_PUT, 24, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 15, &iov, 1, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, NULL, 16, &iov, 1, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 1, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &null_base, 1, NULL, 0),
		     -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 23, 0);		/* one short */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL, 0), -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 25, 0);		/* one long */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL, 0), -FI_EINVAL);
	hdr_make(hdr, P4W_T_PULL_REQ, 24, 0);	/* transport type */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL, 0), -FI_EINVAL);
	/* nothing is layered on the loop transport, even a valid message */
	hdr_make(hdr, P4W_PUT, 24, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL,
			      P4T_SEND_XPORT), -FI_EINVAL);
	/* never read: refused on its size */
	hdr_make(hdr, P4W_PUT, 16 + P4W_MAX_MSG, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &huge, 1, NULL, 0),
		     -FI_EMSGSIZE);
	/* a header longer than p4w_hdr is the caller's choice */
	hdr_make(hdr, P4W_GET, 32 + 8, 7);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 32, &iov, 1, NULL, 0), P4T_DONE);
	pump(&sa, &sb);
	cr_expect_eq(count(&sb, UP_RECV), 1);
	cr_expect_eq(stats_of(&sa).msgs_sent, 1);
}

/* ---- failures ------------------------------------------------------------ */

LOOP_TEST(recv_error_fails_the_link)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint32_t i;

	sb.recv_fail_at = 2;
	sb.recv_fail_ret = -FI_EBADMSG;
	for (i = 0; i < 4; i++)
		cr_assert_eq(send_seq(&sa, x, i, 3), P4T_DONE);
	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 4);
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	expect_msg(&sb.ev[1], 0, 3);
	expect_msg(&sb.ev[2], 1, 3);
	cr_expect_eq(sb.ev[3].kind, UP_CONN_FAILED);
	cr_expect_eq(sb.ev[3].conn, sb.ev[0].conn);
	cr_expect_eq(sb.ev[3].status, -FI_EBADMSG);
	cr_expect_eq(stats_of(&sb).msgs_dropped, 2);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[0].conn, x);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNRESET);
}

LOOP_TEST(send_on_a_failed_link_is_dropped_until_conn_failed)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);

	cr_assert_eq(p4t_loop_fail_link(sa.iface, &sb.addr, sizeof(sb.addr),
					-FI_ETIMEDOUT), 0);
	cr_expect_eq(p4t_loop_fail_link(sa.iface, &sb.addr, sizeof(sb.addr),
					-FI_ETIMEDOUT), -FI_ENOENT);
	cr_expect_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_expect_eq(stats_of(&sa).sends_dropped, 1);
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].conn, x);
	cr_expect_eq(sa.ev[0].status, -FI_ETIMEDOUT);
	cr_assert_eq(sb.nev, 1);
	cr_expect_eq(sb.ev[0].conn, y);
	cr_expect_eq(sb.ev[0].status, -FI_ETIMEDOUT);
}

LOOP_TEST(conn_close_drops_queue_and_aborts_ops)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
	uint8_t buf[64], dst[64];
	struct iovec iov = { buf, sizeof(buf) }, div = { dst, sizeof(dst) };
	struct p4w_cookie ca, cb;
	struct p4t_mem *ma, *mb;

	cr_assert_eq(p4t_mem_expose(sa.iface, x, &iov, 1, P4T_ACCESS_READ, &ca,
				    &ma), 0);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &iov, 1, P4T_ACCESS_READ, &cb,
				    &mb), 0);
	cr_assert_eq(send_seq(&sb, y, 1, 4), P4T_DONE);	/* queued at A */
	cr_assert_eq(p4t_pull(sa.iface, x, &cb, 0, &div, 1, 8, &ca), 0);
	cr_assert_eq(p4t_pull(sb.iface, y, &ca, 0, &div, 1, 8, &cb), 0);
	p4t_conn_close(sa.iface, x);
	cr_expect_eq(stats_of(&sa).msgs_dropped, 1);

	cr_expect_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.nev, 1);	/* no recv, no conn_failed for x */
	cr_expect_eq(sa.ev[0].kind, UP_RMA_DONE);
	cr_expect_eq(sa.ev[0].op_ctx, &ca);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);

	cr_expect_eq(p4t_progress(sb.iface, 16), 2);
	cr_assert_eq(sb.nev, 2);	/* the pull first, then the link */
	cr_expect_eq(sb.ev[0].kind, UP_RMA_DONE);
	cr_expect_eq(sb.ev[0].status, -FI_ECONNABORTED);
	cr_expect_eq(sb.ev[1].kind, UP_CONN_FAILED);
	cr_expect_eq(sb.ev[1].conn, y);
	cr_expect_eq(sb.ev[1].status, -FI_ECONNRESET);
	p4t_mem_unexpose(sa.iface, ma);
	p4t_mem_unexpose(sb.iface, mb);
}

static void close_in_recv(struct side *s, struct p4t_conn *conn,
			  const void *msg, size_t len)
{
	p4t_conn_close(s->iface, conn);
}

LOOP_TEST(conn_close_inside_recv)
{
	struct p4t_conn *x = conn_to(&sa, &sb);

	sb.on_recv = close_in_recv;
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 0), P4T_DONE);
	pump(&sa, &sb);
	cr_expect_eq(count(&sb, UP_RECV), 1);
	cr_expect_eq(count(&sb, UP_CONN_FAILED), 0);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNRESET);
}

LOOP_TEST(iface_close_completes_its_ops_and_resets_peers)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
	uint8_t src[32] = { 0 }, dst[32];
	struct iovec siov = { src, sizeof(src) }, diov = { dst, sizeof(dst) };
	struct p4w_cookie ca, cb;
	struct p4t_mem *mb, *ma;
	int ctx1, ctx2;

	cr_assert_eq(p4t_mem_expose(sb.iface, y, &siov, 1,
				    P4T_ACCESS_READ | P4T_ACCESS_WRITE, &cb,
				    &mb), 0);
	/* left exposed at close on purpose: iface_close frees them */
	cr_assert_eq(p4t_mem_expose(sa.iface, x, &diov, 1, P4T_ACCESS_READ,
				    &ca, &ma), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &cb, 0, &diov, 1, 8, &ctx1), 0);
	cr_assert_eq(p4t_push(sa.iface, x, &diov, 1, 8, &cb, 8, &ctx2), 0);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);	/* queued at B */
	cr_assert_eq(send_seq(&sb, y, 2, 100), P4T_DONE);	/* queued at A */
	side_close(&sa);
	cr_assert_eq(sa.nev, 2);
	cr_expect_eq(sa.ev[0].op_ctx, &ctx1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[1].op_ctx, &ctx2);
	cr_expect_eq(sa.ev[1].status, -FI_ECONNABORTED);

	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 1);	/* A's message went with the link */
	cr_expect_eq(sb.ev[0].kind, UP_CONN_FAILED);
	cr_expect_eq(sb.ev[0].status, -FI_ECONNRESET);
	/* the address is free again, and nobody answers there now */
	x = conn_to(&sb, &sa);
	cr_assert_eq(send_seq(&sb, x, 3, 0), P4T_DONE);
	pump(&sa, &sb);
	cr_expect_eq(sb.ev[sb.nev - 1].status, -FI_ECONNREFUSED);
}

/* ---- progress, wait fd, bound, hooks ------------------------------------ */

LOOP_TEST(progress_respects_the_budget)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	uint32_t i;

	for (i = 0; i < 10; i++)
		cr_assert_eq(send_seq(&sa, x, i, 1), P4T_DONE);
	cr_expect_eq(p4t_progress(sb.iface, 3), 3);
	cr_expect_eq(count(&sb, UP_RECV), 3);
	cr_expect_eq(p4t_progress(sb.iface, 0), 0);
	cr_expect_eq(p4t_progress(sb.iface, -1), 0);
	cr_expect_eq(count(&sb, UP_RECV), 3);
	cr_expect_eq(stats_of(&sb).queued_msgs, 7);
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect_eq(p4t_progress(sb.iface, 100), 6);
	cr_expect_eq(p4t_progress(sb.iface, 100), 0);
	for (i = 0; i < 10; i++)
		cr_expect_eq(sb.ev[1 + i].seq, i);
}

LOOP_TEST(wait_fd_readable_exactly_while_there_is_work)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	struct rma_fixture f;
	uint8_t buf[4];
	struct iovec iov = { buf, sizeof(buf) };
	int ctx;

	cr_expect_neq(p4t_wait_fd(sa.iface), p4t_wait_fd(sb.iface));
	cr_expect_not(fd_readable(sb.iface, 0));
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 0), P4T_DONE);
	cr_expect(fd_readable(sb.iface, 0));
	cr_expect_not(fd_readable(sa.iface, 0));
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect(fd_readable(sb.iface, 0));	/* one still queued */
	p4t_loop_hold(sb.iface, true);
	cr_expect_not(fd_readable(sb.iface, 0));	/* held: nothing to do */
	p4t_loop_hold(sb.iface, false);
	cr_expect(fd_readable(sb.iface, 0));
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect_not(fd_readable(sb.iface, 0));

	rma_expose(&f, P4T_ACCESS_READ);
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 0, &iov, 1, 4, &ctx), 0);
	cr_expect(fd_readable(sa.iface, 0));
	cr_expect_eq(p4t_progress(sa.iface, 4), 1);
	cr_expect_not(fd_readable(sa.iface, 0));
	p4t_mem_unexpose(sb.iface, f.mem);
}

LOOP_TEST(queue_bound_gives_eagain)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *z;
	int accepted = 0, ret = 0;

	/* the default: 64 MiB per link; a 1 MiB message is 1 MiB + 16 */
	while (accepted < 100 &&
	       (ret = send_seq(&sa, x, (uint32_t)accepted, 1 << 20)) == P4T_DONE)
		accepted++;
	cr_expect_eq(ret, -FI_EAGAIN);
	cr_expect_eq(accepted, 63);
	/* per link: another peer still gets through */
	side_open(&sc, 0);
	z = conn_to(&sc, &sb);
	cr_expect_eq(send_seq(&sc, z, 0, 1 << 20), P4T_DONE);
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect_eq(send_seq(&sa, x, 63, 1 << 20), P4T_DONE);
	pump(&sa, &sb);

	p4t_loop_set_queue_limit(sb.iface, 1000);
	cr_expect_eq(send_seq(&sa, x, 100, 584), P4T_DONE);	/* 600 */
	cr_expect_eq(send_seq(&sa, x, 101, 400), -FI_EAGAIN);
	cr_expect_eq(send_seq(&sa, x, 102, 384), P4T_DONE);	/* = 1000 */
	cr_expect_eq(send_seq(&sa, x, 103, 0), -FI_EAGAIN);
	pump(&sa, &sb);
	/* an empty queue takes a message above the bound */
	cr_expect_eq(send_seq(&sa, x, 104, 5000), P4T_DONE);
	cr_expect_eq(send_seq(&sa, x, 105, 0), -FI_EAGAIN);
}

LOOP_TEST(hold_queues_and_a_close_meanwhile_is_silent)
{
	struct p4t_conn *x = conn_to(&sa, &sb);

	p4t_loop_hold(sb.iface, true);
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_expect_eq(p4t_progress(sb.iface, 16), 0);
	cr_expect_eq(sb.nev, 0);
	cr_expect_eq(stats_of(&sb).queued_msgs, 1);
	p4t_loop_hold(sb.iface, false);
	cr_expect_eq(p4t_progress(sb.iface, 16), 1);
	cr_expect_eq(count(&sb, UP_RECV), 1);

	/* a link B never heard of dies before delivery: nothing to report */
	side_open(&sc, 0);
	p4t_loop_hold(sb.iface, true);
	x = conn_to(&sc, &sb);
	cr_assert_eq(send_seq(&sc, x, 2, 0), P4T_DONE);
	p4t_conn_close(sc.iface, x);
	p4t_loop_hold(sb.iface, false);
	cr_expect_eq(p4t_progress(sb.iface, 16), 0);
	cr_expect_eq(sb.nev, 2);
	cr_expect_eq(stats_of(&sb).msgs_dropped, 1);
}

LOOP_TEST(inject_delivers_any_bytes_from_any_address)
{
	struct sockaddr_in fake = { .sin_family = AF_INET,
				    .sin_port = htons(777) };
	static const uint8_t junk[5] = { 0xff, 0, 0x40, 1, 2 };
	struct p4t_conn *x = conn_to(&sa, &sb);

	fake.sin_addr.s_addr = htonl(0x0a010203);
	cr_assert_eq(p4t_loop_inject(sb.iface, &fake, sizeof(fake), junk, 5), 0);
	cr_assert_eq(p4t_loop_inject(sb.iface, &fake, sizeof(fake), NULL, 0), 0);
	cr_expect_eq(p4t_loop_inject(sa.iface, &fake, 3, junk, 5), -FI_EINVAL);
	cr_expect_eq(p4t_progress(sb.iface, 16), 2);
	cr_assert_eq(sb.nev, 3);
	cr_expect_eq(sb.ev[0].kind, UP_CONN_NEW);
	cr_expect_eq(sb.ev[0].addr.sin_addr.s_addr, fake.sin_addr.s_addr);
	cr_expect_eq(sb.ev[0].addr.sin_port, fake.sin_port);
	cr_expect_eq(sb.ev[1].len, 5);
	cr_expect_eq(memcmp(sb.ev[1].msg, junk, 5), 0);
	cr_expect_eq(sb.ev[2].len, 0);
	cr_expect_eq(stats_of(&sb).msgs_injected, 2);

	/* from a real peer: same link, in order, and refusing it fails A */
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(p4t_loop_inject(sb.iface, &sa.addr, sizeof(sa.addr), junk,
				     5), 0);
	cr_assert_eq(send_seq(&sa, x, 2, 0), P4T_DONE);
	sb.recv_fail_at = sb.nrecv + 2;
	sb.recv_fail_ret = -FI_EPROTO;
	pump(&sa, &sb);
	cr_assert_eq(sb.nev, 7);
	cr_expect_eq(sb.ev[3].kind, UP_CONN_NEW);
	expect_msg(&sb.ev[4], 1, 0);
	cr_expect_eq(sb.ev[5].len, 5);
	cr_expect_eq(sb.ev[6].kind, UP_CONN_FAILED);
	cr_expect_eq(sb.ev[6].status, -FI_EPROTO);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNRESET);
}

/* ---- threads --------------------------------------------------------------- */

#define OPEN_THREADS	8
#define OPEN_EACH	32

static void *open_many(void *arg)
{
	struct p4t_iface_config cfg = { .upcalls = &upcalls };
	struct p4t_iface **ifaces = arg;
	int i;

	for (i = 0; i < OPEN_EACH; i++)
		if (p4t_loop_ops.iface_open(&cfg, &ifaces[i]))
			return arg;
	return NULL;
}

LOOP_TEST(open_from_several_threads)
{
	static struct p4t_iface *ifaces[OPEN_THREADS][OPEN_EACH];
	static uint8_t seen[65536];
	pthread_t threads[OPEN_THREADS];
	struct sockaddr_in addr;
	size_t len;
	void *ret;
	int t, i;

	for (t = 0; t < OPEN_THREADS; t++)
		cr_assert_eq(pthread_create(&threads[t], NULL, open_many,
					    ifaces[t]), 0);
	for (t = 0; t < OPEN_THREADS; t++) {
		cr_assert_eq(pthread_join(threads[t], &ret), 0);
		cr_assert_null(ret);
	}
	for (t = 0; t < OPEN_THREADS; t++)
		for (i = 0; i < OPEN_EACH; i++) {
			len = sizeof(addr);
			cr_assert_eq(p4t_getname(ifaces[t][i], &addr, &len), 0);
			cr_expect_eq(seen[ntohs(addr.sin_port)]++, 0,
				     "port %u twice", ntohs(addr.sin_port));
			p4t_iface_close(ifaces[t][i]);
		}
}

#define PING_ROUNDS	2000

/* Each side answers every message in its recv upcall, until the last. */
static void ping_reply(struct side *s, struct p4t_conn *conn,
		       const void *msg, size_t len)
{
	uint32_t seq;

	memcpy(&seq, (const uint8_t *)msg + 8, 4);
	if (seq < PING_ROUNDS)
		cr_assert_eq(send_seq(s, conn, seq + 1, seq % 300), P4T_DONE);
	free(s->ev[s->nev - 1].msg);	/* keep memory flat */
	s->ev[s->nev - 1].msg = NULL;
}

static void *ping_thread(void *arg)
{
	struct side *s = arg;
	struct pollfd pfd = { .fd = p4t_wait_fd(s->iface), .events = POLLIN };

	/* sleep in poll, as a blocking wait would: the fd must wake us */
	while (s->nrecv < PING_ROUNDS / 2 && !count(s, UP_CONN_FAILED)) {
		if (!p4t_progress(s->iface, 8))
			cr_assert_geq(poll(&pfd, 1, 5000), 1, "no wake-up");
	}
	return NULL;
}

LOOP_TEST(ping_pong_between_threads)
{
	struct p4t_conn *x = conn_to(&sa, &sb);
	pthread_t ta, tb;

	sa.on_recv = ping_reply;
	sb.on_recv = ping_reply;
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(pthread_create(&ta, NULL, ping_thread, &sa), 0);
	cr_assert_eq(pthread_create(&tb, NULL, ping_thread, &sb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_expect_eq(sa.nrecv + sb.nrecv, PING_ROUNDS);
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED), 0);
}
