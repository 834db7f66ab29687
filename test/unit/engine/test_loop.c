/*
 * test_loop.c - the loop transport (p4t_loop.c) against the p4t.h contract
 * and the guarantees written in p4t_loop.h: addresses, messages of every
 * size, FIFO order, conn_new and refusals, failures and what they abort,
 * pull / push checks, progress budget, wait fd, queue bound, the test hooks
 * and use from several threads.
 *
 * Each side (struct side) records every upcall it gets, in order; tests
 * call progress explicitly, so what they see is deterministic.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <rdma/fi_errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "p4_wire.h"
#include "p4t.h"
#include "p4t_loop.h"
#include "p4u_compiler.h"

enum up_kind { UP_RECV, UP_SEND_DONE, UP_RMA_DONE, UP_CONN_NEW, UP_CONN_FAILED };

struct up_event {
	enum up_kind kind;
	struct p4t_conn *conn;
	void *op_ctx;
	int status;
	struct sockaddr_in addr;	/* conn_new */
	uint32_t seq;			/* recv: the header's seq, if any */
	size_t len;
	uint8_t *msg;			/* recv: a copy */
};

struct side {
	struct p4t_iface *iface;
	struct sockaddr_in addr;
	struct up_event *ev;
	size_t nev, cap;
	size_t nrecv;
	int conn_new_ret;		/* conn_new returns this */
	size_t recv_fail_at;		/* recv number (1-based) that fails */
	int recv_fail_ret;
	void (*on_recv)(struct side *s, struct p4t_conn *conn,
			const void *msg, size_t len);
};

static struct side sa, sb, sc;

static struct up_event *side_record(struct side *s, enum up_kind kind,
				    struct p4t_conn *conn)
{
	struct up_event *ev;

	if (s->nev == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		cr_assert(s->ev);
	}
	ev = &s->ev[s->nev++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->conn = conn;
	return ev;
}

static int up_recv(void *ctx, struct p4t_conn *conn, const void *msg,
		   size_t len)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_RECV, conn);

	ev->len = len;
	ev->msg = malloc(len ? len : 1);
	cr_assert(ev->msg);
	memcpy(ev->msg, msg, len);
	if (len >= sizeof(struct p4w_hdr))
		memcpy(&ev->seq, (const uint8_t *)msg + 8, 4);
	s->nrecv++;
	if (s->on_recv)
		s->on_recv(s, conn, msg, len);
	return s->nrecv == s->recv_fail_at ? s->recv_fail_ret : 0;
}

static void up_send_done(void *ctx, void *op_ctx, int status)
{
	side_record(ctx, UP_SEND_DONE, NULL)->status = status;
}

static void up_rma_done(void *ctx, void *op_ctx, int status)
{
	struct up_event *ev = side_record(ctx, UP_RMA_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
}

static int up_conn_new(void *ctx, struct p4t_conn *conn, const void *addr,
		       size_t addrlen)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_CONN_NEW, conn);

	cr_assert_eq(addrlen, sizeof(ev->addr));
	memcpy(&ev->addr, addr, sizeof(ev->addr));
	return s->conn_new_ret;
}

static void up_conn_failed(void *ctx, struct p4t_conn *conn, int status)
{
	side_record(ctx, UP_CONN_FAILED, conn)->status = status;
}

static const struct p4t_upcalls upcalls = {
	.recv = up_recv,
	.send_done = up_send_done,
	.rma_done = up_rma_done,
	.conn_new = up_conn_new,
	.conn_failed = up_conn_failed,
};

static int side_open_cfg(struct side *s, struct p4t_iface_config *cfg)
{
	size_t len = sizeof(s->addr);
	int ret;

	cfg->upcalls = &upcalls;
	cfg->upcall_ctx = s;
	ret = p4t_loop_ops.iface_open(cfg, &s->iface);
	if (ret)
		return ret;
	cr_assert_eq(p4t_getname(s->iface, &s->addr, &len), 0);
	return 0;
}

static void side_open(struct side *s, uint64_t auth_key)
{
	struct p4t_iface_config cfg = { .auth_key = auth_key };

	cr_assert_eq(side_open_cfg(s, &cfg), 0);
}

static void side_close(struct side *s)
{
	if (s->iface)
		p4t_iface_close(s->iface);
	s->iface = NULL;
}

static void side_forget(struct side *s)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		free(s->ev[i].msg);
	s->nev = 0;
}

static void loop_setup(void)
{
	side_open(&sa, 0);
	side_open(&sb, 0);
}

static void loop_teardown(void)
{
	struct side *sides[] = { &sa, &sb, &sc };
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(sides); i++) {
		side_close(sides[i]);
		side_forget(sides[i]);
		free(sides[i]->ev);
		memset(sides[i], 0, sizeof(*sides[i]));
	}
}

/*
 * Every test body runs in a function of its own; then loop_finish() closes
 * everything and, under ASan, looks for leaks. The body's frame is gone by
 * then, so pointers in its locals do not hide a leak. Not in .fini:
 * Criterion ignores what fails there, and its workers exit without
 * LeakSanitizer's own check.
 */
static void loop_finish(void)
{
	loop_teardown();
#ifdef __SANITIZE_ADDRESS__
	cr_expect_eq(__lsan_do_recoverable_leak_check(), 0,
		     "leaks: see LeakSanitizer's report");
#endif
}

#define LOOP_TEST(name)							\
	static __attribute__((noinline)) void loop_test_##name(void);	\
	Test(loop, name)						\
	{								\
		loop_test_##name();					\
		loop_finish();						\
	}								\
	static __attribute__((noinline)) void loop_test_##name(void)

TestSuite(loop, .init = loop_setup, .fini = loop_teardown, .timeout = 60);

/* A header as the wire has it: little-endian, length = whole message. */
static void hdr_make(uint8_t hdr[16], uint8_t type, uint32_t length,
		     uint32_t seq)
{
	memset(hdr, 0, 16);
	hdr[0] = P4W_VERSION;
	hdr[1] = type;
	memcpy(hdr + 4, &length, 4);	/* the test hosts are little-endian */
	memcpy(hdr + 8, &seq, 4);
}

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}

/* Send seq with len payload bytes, split into three iovecs (one empty). */
static int send_seq(struct side *s, struct p4t_conn *conn, uint32_t seq,
		    size_t len)
{
	uint8_t hdr[16], *payload = malloc(len ? len : 1);
	struct iovec iov[3];
	size_t i;
	int ret;

	cr_assert(payload);
	for (i = 0; i < len; i++)
		payload[i] = pattern(seq, i);
	hdr_make(hdr, P4W_PUT, (uint32_t)(16 + len), seq);
	iov[0].iov_base = payload;
	iov[0].iov_len = len / 3;
	iov[1].iov_base = NULL;
	iov[1].iov_len = 0;
	iov[2].iov_base = payload + len / 3;
	iov[2].iov_len = len - len / 3;
	ret = p4t_send(s->iface, conn, hdr, sizeof(hdr), iov, 3, NULL);
	free(payload);
	return ret;
}

static void expect_msg(const struct up_event *ev, uint32_t seq, size_t len)
{
	size_t i;

	cr_assert_eq(ev->kind, UP_RECV);
	cr_assert_eq(ev->len, 16 + len, "len %zu, want %zu", ev->len, 16 + len);
	cr_assert_eq(ev->seq, seq, "seq %u, want %u", ev->seq, seq);
	for (i = 0; i < len; i++)
		if (ev->msg[16 + i] != pattern(seq, i))
			cr_assert_fail("seq %u byte %zu differs", seq, i);
}

/* Progress both sides until neither has anything to do. */
static void pump(struct side *a, struct side *b)
{
	int a_done, b_done;

	do {
		a_done = a->iface ? p4t_progress(a->iface, 16) : 0;
		b_done = b->iface ? p4t_progress(b->iface, 16) : 0;
	} while (a_done || b_done);
}

static size_t count(const struct side *s, enum up_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < s->nev; i++)
		n += s->ev[i].kind == kind;
	return n;
}

static struct p4t_conn *conn_to(struct side *s, const struct side *peer)
{
	struct p4t_conn *conn = NULL;

	cr_assert_eq(p4t_conn_get(s->iface, &peer->addr, sizeof(peer->addr),
				  &conn), 0);
	cr_assert(conn);
	return conn;
}

static bool fd_readable(struct p4t_iface *iface)
{
	struct pollfd pfd = { .fd = p4t_wait_fd(iface), .events = POLLIN };

	cr_assert_geq(pfd.fd, 0);
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static struct p4t_loop_stats stats_of(struct side *s)
{
	struct p4t_loop_stats st;

	p4t_loop_stats_get(s->iface, &st);
	return st;
}

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
	cr_expect_not(fd_readable(sa.iface));
	cr_expect_eq(send_seq(&sa, x, 1, 4), P4T_DONE);
	cr_expect_eq(sa.nev, 0);		/* never from inside send */
	cr_expect(fd_readable(sa.iface));
	cr_expect_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.nev, 1);
	cr_expect_eq(sa.ev[0].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[0].conn, x);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNREFUSED);
	cr_expect_not(fd_readable(sa.iface));
	cr_expect_eq(stats_of(&sa).sends_dropped, 1);

	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	cr_expect_eq(p4t_conn_get(sa.iface, &v6, sizeof(v6), &x), -FI_EINVAL);
	cr_expect_eq(p4t_conn_get(sa.iface, &v6, sizeof(nobody), &x),
		     -FI_EINVAL);
}

LOOP_TEST(pull_on_unknown_address_completes_before_conn_failed)
{
	struct sockaddr_in nobody = sa.addr;
	struct p4w_cookie cookie = { .key = 1, .length = 8 };
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	struct p4t_conn *x = NULL;

	nobody.sin_port = htons(2);
	cr_assert_eq(p4t_conn_get(sa.iface, &nobody, sizeof(nobody), &x), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &cookie, 0, &iov, 1, 8, &cookie), 0);
	cr_expect_eq(sa.nev, 0);
	cr_expect_eq(p4t_progress(sa.iface, 16), 2);
	cr_assert_eq(sa.nev, 2);
	cr_expect_eq(sa.ev[0].kind, UP_RMA_DONE);
	cr_expect_eq(sa.ev[0].op_ctx, &cookie);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[1].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[1].status, -FI_ECONNREFUSED);
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
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 15, &iov, 1, NULL), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, NULL, 16, &iov, 1, NULL), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 1, NULL), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &null_base, 1, NULL),
		     -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 23, 0);		/* one short */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL), -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 25, 0);		/* one long */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL), -FI_EINVAL);
	hdr_make(hdr, P4W_T_PULL_REQ, 24, 0);	/* transport type */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &iov, 1, NULL), -FI_EINVAL);
	/* never read: refused on its size */
	hdr_make(hdr, P4W_PUT, 16 + P4W_MAX_MSG, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &huge, 1, NULL),
		     -FI_EMSGSIZE);
	/* a header longer than p4w_hdr is the caller's choice */
	hdr_make(hdr, P4W_GET, 32 + 8, 7);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 32, &iov, 1, NULL), P4T_DONE);
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

/* ---- pull and push --------------------------------------------------------- */

struct rma_fixture {
	struct p4t_conn *x, *y;
	uint8_t region[3000];
	struct iovec riov[3];
	struct p4w_cookie cookie;
	struct p4t_mem *mem;
};

static void rma_expose(struct rma_fixture *f, unsigned access)
{
	size_t i;

	f->x = conn_to(&sa, &sb);
	f->y = conn_to(&sb, &sa);
	for (i = 0; i < sizeof(f->region); i++)
		f->region[i] = (uint8_t)(i * 13 + 5);
	f->riov[0] = (struct iovec){ f->region, 1000 };
	f->riov[1] = (struct iovec){ f->region + 1000, 0 };
	f->riov[2] = (struct iovec){ f->region + 1000, 2000 };
	cr_assert_eq(p4t_mem_expose(sb.iface, f->y, f->riov, 3, access,
				    &f->cookie, &f->mem), 0);
	cr_expect_eq(f->cookie.addr, 0);
	cr_expect_eq(f->cookie.length, 3000);
}

/* Pull (or push) with a mutated cookie; returns the completion status. */
static int rma_try(bool push, const struct p4w_cookie *cookie, uint64_t off,
		   size_t len)
{
	static uint8_t local[4096];
	struct iovec iov = { local, sizeof(local) };
	struct p4t_conn *x = conn_to(&sa, &sb);
	int ctx, ret;

	sa.nev = 0;
	ret = push ? p4t_push(sa.iface, x, &iov, 1, len, cookie, off, &ctx) :
		     p4t_pull(sa.iface, x, cookie, off, &iov, 1, len, &ctx);
	cr_assert_eq(ret, 0);
	cr_assert_eq(sa.nev, 0, "completion only from progress");
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.ev[0].kind, UP_RMA_DONE);
	cr_assert_eq(sa.ev[0].op_ctx, &ctx);
	return sa.ev[0].status;
}

LOOP_TEST(pull_and_push_move_the_bytes)
{
	struct rma_fixture f;
	uint8_t a[700], b[1300], src[1000];
	struct iovec liov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct iovec siov = { src, sizeof(src) };
	size_t i;
	int ctx;

	rma_expose(&f, P4T_ACCESS_READ | P4T_ACCESS_WRITE);
	/* spans the region's three entries and the local two */
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 900, liov, 2, 2000,
			      &ctx), 0);
	memset(f.region + 900, 0, 10);	/* performed at progress, not post */
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.ev[0].status, 0);
	for (i = 0; i < 2000; i++) {
		uint8_t got = i < 700 ? a[i] : b[i - 700];
		uint8_t want = i < 10 ? 0 : (uint8_t)((900 + i) * 13 + 5);
		if (got != want)
			cr_assert_fail("pulled byte %zu: %u, want %u", i, got, want);
	}

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)~i;
	cr_assert_eq(p4t_push(sa.iface, f.x, &siov, 1, 1000, &f.cookie, 1500,
			      &ctx), 0);
	/* the bytes land at once; the completion waits for progress */
	cr_expect_eq(memcmp(f.region + 1500, src, 1000), 0);
	cr_expect_eq(sa.nev, 1);
	cr_expect_eq(p4t_progress(sa.iface, 16), 1);
	cr_expect_eq(sa.ev[1].status, 0);
	/* empty pull at the very end is in range */
	cr_expect_eq(rma_try(false, &f.cookie, 3000, 0), 0);
	cr_expect_eq(stats_of(&sa).pulls, 2);
	cr_expect_eq(stats_of(&sa).pushes, 1);
	p4t_mem_unexpose(sb.iface, f.mem);
}

LOOP_TEST(pull_and_push_refuse_what_they_must)
{
	struct rma_fixture f, g;
	struct p4w_cookie bad;
	uint8_t before[3000];
	struct p4t_conn *z;
	unsigned i;

	rma_expose(&f, P4T_ACCESS_READ);
	memcpy(before, f.region, sizeof(before));
	cr_expect_eq(rma_try(false, &f.cookie, 0, 3000), 0);

	static const uint64_t flips[] = { 1, 2, 1ULL << 32, 2ULL << 32,
					  ~0ULL, 0x8000000000000000ULL };
	for (i = 0; i < P4U_ARRAY_SIZE(flips); i++) {
		bad = f.cookie;
		bad.key ^= flips[i];
		cr_expect_eq(rma_try(false, &bad, 0, 1), -FI_EACCES,
			     "key ^ 0x%llx", (unsigned long long)flips[i]);
	}
	bad = f.cookie;
	bad.key = 0;
	cr_expect_eq(rma_try(false, &bad, 0, 1), -FI_EACCES);
	/* the cookie's own length and addr are not trusted */
	bad = f.cookie;
	bad.length = UINT64_MAX;
	bad.addr = 12345;
	cr_expect_eq(rma_try(false, &bad, 2999, 2), -FI_EINVAL);

	cr_expect_eq(rma_try(false, &f.cookie, 3000, 1), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, 3001, 0), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, 1, 3000), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, UINT64_MAX, 2), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, UINT64_MAX - 10, 20),
		     -FI_EINVAL);
	cr_expect_eq(rma_try(true, &f.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(memcmp(before, f.region, sizeof(before)), 0);

	/* write-only: no pull */
	rma_expose(&g, P4T_ACCESS_WRITE);
	cr_expect_eq(rma_try(false, &g.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(rma_try(true, &g.cookie, 0, 1), 0);
	p4t_mem_unexpose(sb.iface, g.mem);
	cr_expect_eq(rma_try(true, &g.cookie, 0, 1), -FI_EACCES);

	/* another peer's exposure; and a cookie of another iface */
	side_open(&sc, 0);
	z = conn_to(&sb, &sc);
	struct p4w_cookie cz;
	struct p4t_mem *mz;
	cr_assert_eq(p4t_mem_expose(sb.iface, z, f.riov, 3, P4T_ACCESS_READ,
				    &cz, &mz), 0);
	cr_expect_eq(rma_try(false, &cz, 0, 1), -FI_EACCES);
	struct p4w_cookie cc;
	struct p4t_mem *mc;
	cr_assert_eq(p4t_mem_expose(sc.iface, conn_to(&sc, &sa), f.riov, 3,
				    P4T_ACCESS_READ, &cc, &mc), 0);
	cr_expect_eq(rma_try(false, &cc, 0, 1), -FI_EACCES);

	/* stale after unexpose, also when unexposed between post and run */
	uint8_t buf[8];
	struct iovec liov = { buf, sizeof(buf) };
	int ctx;
	sa.nev = 0;
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 0, &liov, 1, 8, &ctx), 0);
	p4t_mem_unexpose(sb.iface, f.mem);
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_expect_eq(sa.ev[0].status, -FI_EACCES);
	cr_expect_eq(rma_try(false, &f.cookie, 0, 1), -FI_EACCES);
	/* a new exposure in the same slot does not revive the old cookie */
	cr_assert_eq(p4t_mem_expose(sb.iface, f.y, f.riov, 3, P4T_ACCESS_READ,
				    &bad, &f.mem), 0);
	cr_expect_neq(bad.key, f.cookie.key);
	cr_expect_eq(rma_try(false, &f.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(rma_try(false, &bad, 0, 1), 0);

	/* argument errors are synchronous */
	cr_expect_eq(p4t_pull(sa.iface, f.x, &bad, 0, &liov, 1, 9, &ctx),
		     -FI_EINVAL);
	cr_expect_eq(p4t_pull(sa.iface, f.x, NULL, 0, &liov, 1, 8, &ctx),
		     -FI_EINVAL);
	cr_expect_eq(p4t_mem_expose(sb.iface, f.y, f.riov, 3, 0, &bad, &mz),
		     -FI_EINVAL);
	p4t_mem_unexpose(sb.iface, f.mem);
	p4t_mem_unexpose(sc.iface, mc);
}

LOOP_TEST(push_lands_before_a_later_send)
{
	struct rma_fixture f;
	uint8_t src[16];
	struct iovec siov = { src, sizeof(src) };
	int ctx;

	rma_expose(&f, P4T_ACCESS_WRITE);
	memset(src, 0xab, sizeof(src));
	p4t_loop_hold(sb.iface, true);
	cr_assert_eq(p4t_push(sa.iface, f.x, &siov, 1, 16, &f.cookie, 0, &ctx),
		     0);
	cr_assert_eq(send_seq(&sa, f.x, 1, 0), P4T_DONE);
	cr_expect_eq(f.region[15], 0xab);
	p4t_loop_hold(sb.iface, false);
	pump(&sa, &sb);
	cr_expect_eq(count(&sb, UP_RECV), 1);
	cr_expect_eq(count(&sa, UP_RMA_DONE), 1);
	p4t_mem_unexpose(sb.iface, f.mem);
}

LOOP_TEST(self_link)
{
	struct p4t_conn *self = conn_to(&sa, &sa);
	uint8_t region[64] = { 1, 2, 3 }, dst[3];
	struct iovec riov = { region, sizeof(region) }, diov = { dst, 3 };
	struct p4w_cookie cookie;
	struct p4t_mem *mem;
	int ctx;

	cr_assert_eq(send_seq(&sa, self, 9, 100), P4T_DONE);
	cr_assert_eq(p4t_mem_expose(sa.iface, self, &riov, 1, P4T_ACCESS_READ,
				    &cookie, &mem), 0);
	cr_assert_eq(p4t_pull(sa.iface, self, &cookie, 0, &diov, 1, 3, &ctx), 0);
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 2);
	cr_expect_eq(sa.ev[0].kind, UP_RMA_DONE);	/* completions first */
	cr_expect_eq(sa.ev[0].status, 0);
	expect_msg(&sa.ev[1], 9, 100);
	cr_expect_eq(sa.ev[1].conn, self);
	cr_expect_eq(dst[2], 3);
	p4t_mem_unexpose(sa.iface, mem);
	p4t_conn_close(sa.iface, self);
	cr_expect_eq(p4t_progress(sa.iface, 16), 0);	/* no self report */
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
	cr_expect_not(fd_readable(sb.iface));
	cr_assert_eq(send_seq(&sa, x, 1, 0), P4T_DONE);
	cr_assert_eq(send_seq(&sa, x, 2, 0), P4T_DONE);
	cr_expect(fd_readable(sb.iface));
	cr_expect_not(fd_readable(sa.iface));
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect(fd_readable(sb.iface));	/* one still queued */
	p4t_loop_hold(sb.iface, true);
	cr_expect_not(fd_readable(sb.iface));	/* held: nothing to do */
	p4t_loop_hold(sb.iface, false);
	cr_expect(fd_readable(sb.iface));
	cr_expect_eq(p4t_progress(sb.iface, 1), 1);
	cr_expect_not(fd_readable(sb.iface));

	rma_expose(&f, P4T_ACCESS_READ);
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 0, &iov, 1, 4, &ctx), 0);
	cr_expect(fd_readable(sa.iface));
	cr_expect_eq(p4t_progress(sa.iface, 4), 1);
	cr_expect_not(fd_readable(sa.iface));
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
