/*
 * test_tcp_rma.c - the TCP transport's emulated RDMA (p4t_tcp_rma.c)
 * against the p4t.h contract and p4t_tcp.h, over loopback: pull and push
 * moving the bytes in chunks (offsets, iovecs on both sides, a send after
 * a push landing after it), a large pull that does not stall small
 * messages, streamed chunks read into place (not staged) and the chunks
 * of many streams written together, the refusals (access, stale, another
 * peer's exposure, forged lengths, a push into read-only memory failing
 * the link), the self link, and offers (announced in a frame of their
 * own: the engine's message arrives as it was sent; a window of batched
 * offers leaves in one write).
 *
 * Not here: what link failures and closes do to pending pulls and pushes,
 * and a peer killed mid-pull (test_tcp_fail.c, with the other failures). The
 * sides and helpers are in p4t_tcp_test.h; tests progress until what they
 * wait for happened (bounded), never sleep for it.
 */
#include <config.h>

#include "p4t_tcp_test.h"

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- emulated RDMA ------------------------------------------------------- */

static uint8_t *pat_buf(size_t len, uint8_t seed)
{
	uint8_t *p = malloc(len ? len : 1);
	size_t i;

	cr_assert(p);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 12));
	return p;
}

TCP_TEST(pull_and_push_move_the_bytes_in_chunks)
{
	const size_t len = (1 << 20) + 333;
	struct p4t_iface_config cfg = { .rma_chunk = 4096 };
	uint8_t *src = pat_buf(len, 1), *dst = calloc(1, len);
	uint8_t *wdst = calloc(1, len);
	struct iovec siov[3] = { { src, 1000 }, { src + 1000, 0 },
				 { src + 1000, len - 1000 } };
	struct iovec diov[2] = { { dst, 77 }, { dst + 77, len - 77 } };
	struct iovec wiov[1] = { { wdst, len } };
	struct p4t_conn *x, *y;
	struct p4w_cookie rc, wc;
	struct p4t_mem *rm, *wm;

	side_close(&sa);
	cr_assert_eq(side_open_cfg(&sa, &cfg), 0);
	x = link_up(&sa, &sb, &y);
	/* b exposes src for reading and wdst for writing, to a only */
	cr_assert_eq(p4t_mem_expose(sb.iface, y, siov, 3, P4T_ACCESS_READ,
				    &rc, &rm), 0);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, wiov, 1, P4T_ACCESS_WRITE,
				    &wc, &wm), 0);
	cr_expect_eq(rc.length, len);
	cr_assert_eq(p4t_pull(sa.iface, x, &rc, 0, diov, 2, len, (void *)1),
		     0);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 1);
	cr_expect_eq(sa.ev[0].op_ctx, (void *)1);
	cr_expect_eq(sa.ev[0].status, 0);
	cr_expect_eq(memcmp(src, dst, len), 0);
	/* a pull at an offset */
	memset(dst, 0, len);
	cr_assert_eq(p4t_pull(sa.iface, x, &rc, 5000, diov, 2, 10000,
			      (void *)2), 0);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 2);
	cr_expect_eq(sa.ev[1].status, 0);
	cr_expect_eq(memcmp(src + 5000, dst, 10000), 0);
	cr_expect_eq(dst[10000], 0);
	/* a push, and a send after it lands after it */
	cr_assert_eq(p4t_push(sa.iface, x, diov, 2, 10000, &wc, 100,
			      (void *)3), 0);
	cr_assert_eq(send_seq(&sa, x, 77, 3), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1 && count(&sa, UP_RMA_DONE) == 3);
	cr_expect_eq(memcmp(wdst + 100, src + 5000, 10000), 0);
	cr_expect_eq(wdst[99], 0);
	cr_expect_eq(wdst[10100], 0);
	cr_expect_eq(sa.ev[2].status, 0);
	cr_expect_gt(stats_of(&sb).streams, 0);
	cr_expect_geq(stats_of(&sb).rma_bytes_out, len);
	p4t_mem_unexpose(sb.iface, rm);
	p4t_mem_unexpose(sb.iface, wm);
	free(src);
	free(dst);
	free(wdst);
}

/* While a pull runs, small messages keep flowing past it. */
TCP_TEST(large_pull_does_not_stall_small_messages)
{
	const size_t len = 16 << 20;
	struct p4t_iface_config cfg = { .rma_chunk = 65536 };
	uint8_t *src = pat_buf(len, 5), *dst = malloc(len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct p4t_conn *x, *y;
	struct p4w_cookie rc;
	struct p4t_mem *rm;
	long done_at;
	uint32_t i;

	cr_assert(dst);
	side_close(&sb);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	p4t_tcp_set_sockbuf(sa.iface, 65536, 65536);
	p4t_tcp_set_sockbuf(sb.iface, 65536, 65536);
	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &siov, 1, P4T_ACCESS_READ,
				    &rc, &rm), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &rc, 0, &diov, 1, len, NULL), 0);
	PUMP_UNTIL(stats_of(&sb).streams == 1 &&
		   stats_of(&sa).rma_bytes_in > 0);
	for (i = 0; i < 10; i++)
		cr_assert_eq(send_seq(&sb, y, i, 32), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 1);
	done_at = find_ev(&sa, UP_RMA_DONE, 0);
	cr_expect_eq(sa.ev[done_at].status, 0);
	cr_expect_eq(count(&sa, UP_RECV), 10,
		     "the small messages arrived before the pull ended");
	for (i = 0; i < 10; i++)
		expect_msg(&sa.ev[i], i, 32);
	cr_expect_eq(memcmp(src, dst, len), 0);
	p4t_mem_unexpose(sb.iface, rm);
	free(src);
	free(dst);
}

/* While chunks stream in, reads stage only a chunk header's worth behind
 * the chunk being landed: payloads go straight into place, not through
 * the staging buffer (the reader lags, so whole chunks wait in its
 * socket). */
TCP_TEST(streamed_chunks_are_read_into_place_not_staged)
{
	const size_t len = 4 << 20;
	struct p4t_iface_config cfg = { .rma_chunk = 65536 };
	uint8_t *src = pat_buf(len, 3), *dst = calloc(1, len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct p4t_conn *x, *y;
	struct p4t_tcp_stats st;
	struct p4w_cookie rc;
	struct p4t_mem *rm;

	cr_assert(dst);
	side_close(&sb);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &siov, 1, P4T_ACCESS_READ,
				    &rc, &rm), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &rc, 0, &diov, 1, len, NULL), 0);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 1);
	cr_expect_eq(sa.ev[find_ev(&sa, UP_RMA_DONE, 0)].status, 0);
	cr_expect_eq(memcmp(src, dst, len), 0);
	st = stats_of(&sa);
	cr_expect_eq(st.rma_bytes_in, len);
	/* the first chunk may be staged, then a header's read per chunk */
	cr_expect_leq(st.rma_bytes_staged, len / 8,
		      "%llu of %zu bytes copied out of staging",
		      (unsigned long long)st.rma_bytes_staged, len);
	p4t_mem_unexpose(sb.iface, rm);
	free(src);
	free(dst);
}

/* The chunks of many streams (and what is queued between them) leave in
 * one write, each stream still taking its turn. */
TCP_TEST(chunks_of_many_streams_leave_together)
{
	const size_t part = 16384, n = 16;
	struct p4t_iface_config cfg = { .rma_chunk = part };
	uint8_t *src = pat_buf(part * n, 4), *dst = calloc(1, part * n);
	struct iovec siov = { src, part * n };
	struct iovec diov[16];
	struct p4t_conn *x, *y;
	struct p4t_tcp_stats st;
	struct p4w_cookie rc;
	struct p4t_mem *rm;
	size_t i;

	cr_assert(dst);
	side_close(&sb);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	/* room for all of it in the socket: writes are never short */
	p4t_tcp_set_sockbuf(sa.iface, 4 << 20, 4 << 20);
	p4t_tcp_set_sockbuf(sb.iface, 4 << 20, 4 << 20);
	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &siov, 1, P4T_ACCESS_READ,
				    &rc, &rm), 0);
	st = stats_of(&sb);
	for (i = 0; i < n; i++) {
		diov[i].iov_base = dst + i * part;
		diov[i].iov_len = part;
		cr_assert_eq(p4t_pull(sa.iface, x, &rc, i * part, &diov[i], 1,
				      part, (void *)(i + 1)), 0);
	}
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == n);
	for (i = 0; i < n; i++)
		cr_expect_eq(sa.ev[find_ctx(&sa, (void *)(i + 1))].status, 0);
	cr_expect_eq(memcmp(src, dst, part * n), 0);
	cr_expect_eq(stats_of(&sb).streams, st.streams + n);
	cr_expect_leq(stats_of(&sb).writev_calls - st.writev_calls, 4,
		      "%llu writes for %zu one-chunk streams",
		      (unsigned long long)(stats_of(&sb).writev_calls -
					   st.writev_calls), n);
	p4t_mem_unexpose(sb.iface, rm);
	free(src);
	free(dst);
}

TCP_TEST(pull_and_push_refuse_what_they_must)
{
	uint8_t buf[4096], dst[4096];
	struct iovec iov = { buf, sizeof(buf) }, diov = { dst, sizeof(dst) };
	struct p4t_conn *x, *y, *xc, *yc;
	struct p4w_cookie ro, wo, stale, other, forged;
	struct p4t_mem *rm, *wm, *sm, *om;
	size_t i;

	memset(buf, 7, sizeof(buf));
	side_open(&sc, 0);
	x = link_up(&sa, &sb, &y);
	xc = link_up(&sc, &sb, &yc);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &iov, 1, P4T_ACCESS_READ,
				    &ro, &rm), 0);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &iov, 1, P4T_ACCESS_WRITE,
				    &wo, &wm), 0);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &iov, 1, P4T_ACCESS_READ,
				    &stale, &sm), 0);
	p4t_mem_unexpose(sb.iface, sm);
	cr_assert_eq(p4t_mem_expose(sb.iface, yc, &iov, 1, P4T_ACCESS_READ,
				    &other, &om), 0);
	forged = ro;
	forged.length = 1 << 20;	/* claims more than was exposed */
	memset(dst, 0, sizeof(dst));
	cr_assert_eq(p4t_pull(sa.iface, x, &wo, 0, &diov, 1, 16, (void *)1),
		     0);	/* write-only */
	cr_assert_eq(p4t_pull(sa.iface, x, &stale, 0, &diov, 1, 16,
			      (void *)2), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &other, 0, &diov, 1, 16,
			      (void *)3), 0);	/* c's exposure */
	cr_assert_eq(p4t_pull(sa.iface, x, &forged, 4000, &diov, 1, 200,
			      (void *)4), 0);	/* past the real end */
	cr_assert_eq(p4t_pull(sa.iface, x, &ro, 4000, &diov, 1, 200,
			      (void *)5), 0);	/* past the cookie: local */
	cr_assert_eq(p4t_pull(sa.iface, x, &ro, 0, &diov, 1, 5000, NULL),
		     -FI_EINVAL);		/* local iov too short */
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 5);
	for (i = 0; i < 5; i++) {
		/* by op_ctx: the local refusal completes first */
		int want = i >= 3 ? -FI_EINVAL : -FI_EACCES;
		long at = find_ctx(&sa, (void *)(i + 1));

		cr_assert_geq(at, 0);
		cr_expect_eq(sa.ev[at].status, want, "pull %zu: %d", i + 1,
			     sa.ev[at].status);
	}
	for (i = 0; i < sizeof(dst); i++)
		cr_assert_eq(dst[i], 0, "refused pulls wrote nothing");
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	/* the link still works */
	cr_assert_eq(p4t_pull(sa.iface, x, &ro, 0, &diov, 1, 100, (void *)6),
		     0);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 6);
	cr_expect_eq(sa.ev[sa.nev - 1].status, 0);
	cr_expect_eq(dst[99], 7);
	/* a push into read-only memory is a violation: the link fails */
	cr_assert_eq(p4t_push(sa.iface, x, &diov, 1, 16, &ro, 0, (void *)7),
		     0);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1 &&
		   count(&sb, UP_CONN_FAILED) == 1);
	cr_expect_eq(find_ev(&sa, UP_RMA_DONE, 6) < find_ev(&sa, UP_CONN_FAILED, 0),
		     true);
	cr_expect_lt(sb.ev[find_ev(&sb, UP_CONN_FAILED, 0)].status, 0);
	cr_expect_gt(stats_of(&sb).malformed, 0);
	/* c's link did not notice */
	cr_assert_eq(send_seq(&sc, xc, 1, 1), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_eq(sb.ev[sb.nev - 1].conn, yc);
	p4t_mem_unexpose(sb.iface, rm);
	p4t_mem_unexpose(sb.iface, wm);
	p4t_mem_unexpose(sb.iface, om);
}

TCP_TEST(self_link_messages_pull_and_push)
{
	uint8_t src[1000], dst[1000];
	struct iovec siov = { src, sizeof(src) }, diov = { dst, sizeof(dst) };
	struct p4t_conn *me = conn_to(&sa, &sa);
	struct p4w_cookie rc, wc;
	struct p4t_mem *rm, *wm;
	size_t i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)i;
	cr_expect_eq(conn_to(&sa, &sa), me);
	for (i = 0; i < 10; i++)
		cr_assert_eq(send_seq(&sa, me, (uint32_t)i, i * 100), P4T_DONE);
	cr_assert_eq(p4t_mem_expose(sa.iface, me, &siov, 1, P4T_ACCESS_READ,
				    &rc, &rm), 0);
	cr_assert_eq(p4t_mem_expose(sa.iface, me, &diov, 1, P4T_ACCESS_WRITE,
				    &wc, &wm), 0);
	memset(dst, 0, sizeof(dst));
	cr_assert_eq(p4t_pull(sa.iface, me, &rc, 10, &diov, 1, 500,
			      (void *)1), 0);
	cr_assert_eq(p4t_push(sa.iface, me, &siov, 1, 100, &wc, 900,
			      (void *)2), 0);
	cr_assert_eq(p4t_pull(sa.iface, me, &wc, 0, &diov, 1, 5, (void *)3),
		     0);	/* write-only */
	cr_expect_eq(sa.nev, 0);	/* never inside the call */
	PUMP_UNTIL(count(&sa, UP_RECV) == 10 && count(&sa, UP_RMA_DONE) == 3);
	for (i = 0; i < 10; i++)
		expect_msg(&sa.ev[find_ev(&sa, UP_RECV, i)], (uint32_t)i,
			   i * 100);
	cr_expect_eq(memcmp(dst, src + 10, 500), 0);
	cr_expect_eq(memcmp(dst + 900, src, 100), 0);
	cr_expect_eq(sa.ev[find_ctx(&sa, (void *)1)].status, 0);
	cr_expect_eq(sa.ev[find_ctx(&sa, (void *)2)].status, 0);
	cr_expect_eq(sa.ev[find_ctx(&sa, (void *)3)].status, -FI_EACCES);
	cr_expect_eq(stats_of(&sa).connects, 0, "no socket for self");
	cr_expect_eq(stats_of(&sa).self_msgs, 10);
	p4t_mem_unexpose(sa.iface, rm);
	p4t_mem_unexpose(sa.iface, wm);
}

/* ---- offers ---------------------------------------------------------------- */

/* What b's recv upcall pulls of an offered message, as the engine would
 * (it reads the cookie from the message body; here it is given). */
static struct {
	bool pull;
	struct p4w_cookie ck;
	struct iovec dst[2];
	size_t len;
} offer_rx;

static void offer_on_recv(struct side *s, struct p4t_conn *conn,
			  const void *msg, size_t len)
{
	(void)msg;
	if (offer_rx.pull && len == HL)
		cr_assert_eq(p4t_pull(s->iface, conn, &offer_rx.ck, 0,
				      offer_rx.dst, 2, offer_rx.len,
				      (void *)0x0ff), 0);
}

/* A request of HL bytes with the first len bytes of mem offered. */
static int send_offered(struct side *s, struct p4t_conn *conn, uint32_t seq,
			struct p4t_mem *mem, size_t len, void *op_ctx)
{
	uint8_t hdr[HL] = { 0 };

	hdr_make(hdr, P4W_PUT, HL, seq);
	return p4t_send_offer(s->iface, conn, hdr, HL, mem, len, op_ctx,
			      P4T_SEND_SEQ | s->send_flags);
}

static void offer_pull_into(uint8_t *dst, size_t len)
{
	offer_rx.pull = true;
	offer_rx.dst[0].iov_base = dst;
	offer_rx.dst[0].iov_len = 1000;
	offer_rx.dst[1].iov_base = dst + 1000;
	offer_rx.dst[1].iov_len = len - 1000;
	offer_rx.len = len;
}

/* The data comes right behind its message: the pull the receiver makes
 * while handling the message is served from it, no PULL_REQ. */
TCP_TEST(offer_serves_the_pull_made_while_its_message_is_handled)
{
	const size_t len = 100000 + 7;
	uint8_t *src = pat_buf(len, 9), *dst = calloc(1, len + 1), hdr[HL] = { 0 };
	struct iovec siov[2] = { { src, 333 }, { src + 333, len - 333 } };
	struct p4t_iface_attr attr = { 0 };
	struct p4t_conn *x, *y;
	struct p4t_mem *rm;
	int ret;

	p4t_iface_query(sa.iface, &attr);
	cr_assert_eq(attr.max_offer, 128 << 10, "the chunk size by default");
	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sa.iface, x, siov, 2, P4T_ACCESS_READ,
				    &offer_rx.ck, &rm), 0);
	offer_pull_into(dst, len);
	sb.on_recv = offer_on_recv;
	ret = send_offered(&sa, x, 1, rm, len, (void *)1);
	cr_assert(ret == P4T_DONE || ret == P4T_QUEUED);
	cr_assert_eq(send_seq(&sa, x, 2, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RMA_DONE) == 1 && count(&sb, UP_RECV) == 2 &&
		   (ret == P4T_DONE || count(&sa, UP_SEND_DONE) == 1));
	cr_expect_eq(sb.ev[find_ctx(&sb, (void *)0x0ff)].status, 0);
	cr_expect_eq(memcmp(src, dst, len), 0);
	cr_expect_eq(dst[len], 0);
	/* the engine's message arrives exactly as it was sent: the offer is
	 * in frames of the transport's own, not a flag in the header */
	hdr_make(hdr, P4W_PUT, HL, 1);
	cr_assert_eq(sb.ev[find_ev(&sb, UP_RECV, 0)].len, HL);
	cr_expect_eq(memcmp(sb.ev[find_ev(&sb, UP_RECV, 0)].msg, hdr, HL), 0,
		     "header flags 0x%02x%02x",
		     sb.ev[find_ev(&sb, UP_RECV, 0)].msg[3],
		     sb.ev[find_ev(&sb, UP_RECV, 0)].msg[2]);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 1)], 2, 100);
	cr_expect_eq(stats_of(&sa).offers_sent, 1);
	cr_expect_eq(stats_of(&sb).offers_taken, 1);
	cr_expect_eq(stats_of(&sb).offers_dropped, 0);
	cr_expect_eq(stats_of(&sa).streams, 0, "no PULL_REQ was sent");
	p4t_mem_unexpose(sa.iface, rm);
	free(src);
	free(dst);
}

/* Not pulled during the upcall, or pulled in part (a truncated receive):
 * the offer is read and dropped, the stream goes on (what follows it is
 * parsed where it starts), and pulls go to the network as usual. */
TCP_TEST(offer_nobody_takes_is_dropped_and_pulls_ask_as_usual)
{
	/* more than the 64 KiB scratch a drop is read into: dropped in two
	 * reads, and the message behind it must not be read early */
	const size_t len = 120000;
	uint8_t *src = pat_buf(len, 4), *dst = calloc(1, len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct p4t_conn *x, *y;
	struct p4t_mem *rm;

	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sa.iface, x, &siov, 1, P4T_ACCESS_READ,
				    &offer_rx.ck, &rm), 0);
	sb.on_recv = offer_on_recv;
	offer_rx.pull = false;
	cr_assert_geq(send_offered(&sa, x, 1, rm, len, (void *)1), 0);
	cr_assert_eq(send_seq(&sa, x, 2, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
	expect_msg(&sb.ev[find_ev(&sb, UP_RECV, 1)], 2, 100);
	cr_expect_eq(stats_of(&sb).offers_dropped, 1);
	/* later (an unexpected message matched): an ordinary pull */
	cr_assert_eq(p4t_pull(sb.iface, y, &offer_rx.ck, 0, &diov, 1, len,
			      (void *)2), 0);
	PUMP_UNTIL(count(&sb, UP_RMA_DONE) == 1);
	cr_expect_eq(sb.ev[find_ctx(&sb, (void *)2)].status, 0);
	cr_expect_eq(memcmp(src, dst, len), 0);
	cr_expect_eq(stats_of(&sa).streams, 1);
	/* a truncated receive pulls less than offered: asked for */
	memset(dst, 0, len);
	offer_pull_into(dst, len - 5000);
	cr_assert_geq(send_offered(&sa, x, 3, rm, len, (void *)3), 0);
	PUMP_UNTIL(count(&sb, UP_RMA_DONE) == 2);
	cr_expect_eq(sb.ev[find_ctx(&sb, (void *)0x0ff)].status, 0);
	cr_expect_eq(memcmp(src, dst, len - 5000), 0);
	cr_expect_eq(dst[len - 5000], 0);
	cr_expect_eq(stats_of(&sb).offers_dropped, 2);
	cr_expect_eq(stats_of(&sb).offers_taken, 0);
	cr_expect_eq(stats_of(&sa).streams, 2);
	p4t_mem_unexpose(sa.iface, rm);
	free(src);
	free(dst);
}

/*
 * Batched offers (P4T_SEND_BATCH, as the engine sends rendezvous requests
 * inside progress) wait for the flush and leave together: the window is
 * gathered into one write, data by reference; each is served from its
 * own bytes.
 */
enum { WIN_N = 8, WIN_LEN = 16384 };
static struct p4w_cookie win_ck[WIN_N];
static uint8_t *win_dst;

/* Message seq pulls its offer (win_ck[seq]) into its part of win_dst. */
static void win_on_recv(struct side *s, struct p4t_conn *conn,
			const void *msg, size_t len)
{
	uint32_t seq;
	struct iovec iov;

	cr_assert_eq(len, HL);
	memcpy(&seq, (const uint8_t *)msg + 8, 4);
	cr_assert_lt(seq, WIN_N);
	iov.iov_base = win_dst + seq * WIN_LEN;
	iov.iov_len = WIN_LEN;
	cr_assert_eq(p4t_pull(s->iface, conn, &win_ck[seq], 0, &iov, 1,
			      WIN_LEN, (void *)(uintptr_t)(0x100 + seq)), 0);
}

TCP_TEST(a_window_of_batched_offers_leaves_in_one_write)
{
	enum { N = WIN_N, LEN = WIN_LEN };
	struct p4w_cookie *ck = win_ck;
	uint8_t *src = pat_buf(N * LEN, 3), *dst = calloc(1, N * LEN);
	struct p4t_tcp_stats before, after;
	struct p4t_mem *rm[N];
	struct p4t_conn *x, *y;
	struct iovec siov;
	int i, ret;

	x = link_up(&sa, &sb, &y);
	pump_quiet(10);
	win_dst = dst;
	sb.on_recv = win_on_recv;
	for (i = 0; i < N; i++) {
		siov.iov_base = src + i * LEN;
		siov.iov_len = LEN;
		cr_assert_eq(p4t_mem_expose(sa.iface, x, &siov, 1,
					    P4T_ACCESS_READ, &ck[i], &rm[i]),
			     0);
	}
	sa.send_flags = P4T_SEND_BATCH;
	before = stats_of(&sa);
	for (i = 0; i < N; i++) {
		ret = send_offered(&sa, x, (uint32_t)i, rm[i], LEN,
				   (void *)(uintptr_t)(i + 1));
		cr_assert(ret == P4T_QUEUED, "by reference: %d", ret);
	}
	cr_expect_eq(stats_of(&sa).writev_calls, before.writev_calls,
		     "held for the flush");
	p4t_flush(sa.iface);
	after = stats_of(&sa);
	cr_expect_eq(after.writev_calls - before.writev_calls, 1,
		     "one write for the window");
	cr_expect_eq(after.sendmsg_calls, before.sendmsg_calls);
	cr_expect_eq(after.offers_sent - before.offers_sent, N);
	/* each served from its own offer */
	PUMP_UNTIL(count(&sb, UP_RMA_DONE) == N && count(&sa, UP_SEND_DONE) == N);
	for (i = 0; i < N; i++)
		cr_expect_eq(sb.ev[find_ctx(&sb, (void *)(uintptr_t)(0x100 + i))]
			     .status, 0);
	cr_expect_eq(memcmp(src, dst, N * LEN), 0);
	cr_expect_eq(stats_of(&sb).offers_taken, N);
	cr_expect_eq(stats_of(&sa).streams, 0, "no PULL_REQ was sent");
	for (i = 0; i < N; i++)
		p4t_mem_unexpose(sa.iface, rm[i]);
	free(src);
	free(dst);
}

/* cfg.rma_offer bounds offers (at most the chunk), no_offers turns them
 * off; send_offer checks its arguments; on the self link the message
 * goes alone and its pull is a copy. */
TCP_TEST(offer_limits_arguments_and_self_link)
{
	struct p4t_iface_config cfg = { .rma_chunk = 65536,
					.rma_offer = 1 << 20 };
	uint8_t src[8192], dst[8192], hdr[HL] = { 0 };
	struct iovec siov = { src, sizeof(src) };
	struct p4t_iface_attr attr = { 0 };
	struct p4t_conn *x, *y, *me;
	struct p4t_mem *rm, *sm;
	struct p4w_cookie ck;

	side_close(&sa);
	cr_assert_eq(side_open_cfg(&sa, &cfg), 0);
	p4t_iface_query(sa.iface, &attr);
	cr_expect_eq(attr.max_offer, 65536, "at most the chunk");
	side_close(&sb);
	cfg.no_offers = true;
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	p4t_iface_query(sb.iface, &attr);
	cr_expect_eq(attr.max_offer, 0);
	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sa.iface, x, &siov, 1, P4T_ACCESS_READ,
				    &ck, &rm), 0);
	hdr_make(hdr, P4W_PUT, HL, 1);
	cr_expect_eq(p4t_send_offer(sa.iface, x, hdr, HL, rm, 100, NULL, P4T_SEND_SEQ),
		     -FI_EINVAL, "op_ctx is required");
	cr_expect_eq(p4t_send_offer(sa.iface, x, hdr, HL, rm, 0, (void *)1, P4T_SEND_SEQ),
		     -FI_EINVAL);
	cr_expect_eq(p4t_send_offer(sa.iface, x, hdr, HL, rm, 8193,
				    (void *)1, P4T_SEND_SEQ), -FI_EINVAL, "past the source");
	cr_expect_eq(p4t_send_offer(sa.iface, x, hdr, HL - 1, rm, 100,
				    (void *)1, P4T_SEND_SEQ), -FI_EINVAL, "length field");
	cr_expect_eq(p4t_send_offer(sb.iface, y, hdr, HL, rm, 100, (void *)1, P4T_SEND_SEQ),
		     -FI_EINVAL, "offers off");
	/* self: no offer, the pull copies */
	me = conn_to(&sa, &sa);
	cr_assert_eq(p4t_mem_expose(sa.iface, me, &siov, 1, P4T_ACCESS_READ,
				    &offer_rx.ck, &sm), 0);
	memset(src, 0x5a, sizeof(src));
	memset(dst, 0, sizeof(dst));
	offer_pull_into(dst, sizeof(dst));
	sa.on_recv = offer_on_recv;
	cr_assert_eq(send_offered(&sa, me, 2, sm, sizeof(src), (void *)2),
		     P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 1);
	cr_expect_eq(memcmp(src, dst, sizeof(dst)), 0);
	cr_expect_eq(stats_of(&sa).offers_sent, 0);
	p4t_mem_unexpose(sa.iface, rm);
	p4t_mem_unexpose(sa.iface, sm);
}
