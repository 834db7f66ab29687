/*
 * p4t_loop_test.h - what the loop transport's tests (test_loop.c,
 * test_loop_rma.c) share: sides (struct side) that record every upcall
 * they get, in order; the suite's setup, teardown and LOOP_TEST (bodies in
 * a frame of their own, then a leak check); test messages (a header as the
 * wire has it, a payload pattern, iovec-split sends and their check);
 * pumping progress, counting events, the wait fd and stats; and the
 * exposure fixture both files use. Tests call progress explicitly, so what
 * they see is deterministic.
 *
 * One test binary includes it once: helpers are static inline, the sides
 * are the binary's own.
 */
#ifndef P4T_LOOP_TEST_H
#define P4T_LOOP_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
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

static inline struct up_event *side_record(struct side *s, enum up_kind kind,
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

static inline int up_recv(void *ctx, struct p4t_conn *conn, const void *msg,
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

static inline void up_send_done(void *ctx, void *op_ctx, int status)
{
	side_record(ctx, UP_SEND_DONE, NULL)->status = status;
}

static inline void up_rma_done(void *ctx, void *op_ctx, int status)
{
	struct up_event *ev = side_record(ctx, UP_RMA_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
}

static inline int up_conn_new(void *ctx, struct p4t_conn *conn,
			      const void *addr, size_t addrlen)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_CONN_NEW, conn);

	cr_assert_eq(addrlen, sizeof(ev->addr));
	memcpy(&ev->addr, addr, sizeof(ev->addr));
	return s->conn_new_ret;
}

static inline void up_conn_failed(void *ctx, struct p4t_conn *conn, int status)
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

static inline int side_open_cfg(struct side *s, struct p4t_iface_config *cfg)
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

static inline void side_open(struct side *s, uint64_t auth_key)
{
	struct p4t_iface_config cfg = { .auth_key = auth_key };

	cr_assert_eq(side_open_cfg(s, &cfg), 0);
}

static inline void side_close(struct side *s)
{
	if (s->iface)
		p4t_iface_close(s->iface);
	s->iface = NULL;
}

static inline void side_forget(struct side *s)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		free(s->ev[i].msg);
	s->nev = 0;
}

static inline void loop_setup(void)
{
	side_open(&sa, 0);
	side_open(&sb, 0);
}

static inline void loop_teardown(void)
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
static inline void loop_finish(void)
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


/* A header as the wire has it: little-endian, length = whole message. */
static inline void hdr_make(uint8_t hdr[16], uint8_t type, uint32_t length,
			    uint32_t seq)
{
	memset(hdr, 0, 16);
	hdr[0] = P4W_VERSION;
	hdr[1] = type;
	memcpy(hdr + 4, &length, 4);	/* the test hosts are little-endian */
	memcpy(hdr + 8, &seq, 4);
}

static inline uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}

/* Send seq with len payload bytes, split into three iovecs (one empty). */
static inline int send_seq(struct side *s, struct p4t_conn *conn, uint32_t seq,
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

static inline void expect_msg(const struct up_event *ev, uint32_t seq,
			      size_t len)
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
static inline void pump(struct side *a, struct side *b)
{
	int a_done, b_done;

	do {
		a_done = a->iface ? p4t_progress(a->iface, 16) : 0;
		b_done = b->iface ? p4t_progress(b->iface, 16) : 0;
	} while (a_done || b_done);
}

static inline size_t count(const struct side *s, enum up_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < s->nev; i++)
		n += s->ev[i].kind == kind;
	return n;
}

static inline struct p4t_conn *conn_to(struct side *s, const struct side *peer)
{
	struct p4t_conn *conn = NULL;

	cr_assert_eq(p4t_conn_get(s->iface, &peer->addr, sizeof(peer->addr),
				  &conn), 0);
	cr_assert(conn);
	return conn;
}

static inline bool fd_readable(struct p4t_iface *iface)
{
	struct pollfd pfd = { .fd = p4t_wait_fd(iface), .events = POLLIN };

	cr_assert_geq(pfd.fd, 0);
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static inline struct p4t_loop_stats stats_of(struct side *s)
{
	struct p4t_loop_stats st;

	p4t_loop_stats_get(s->iface, &st);
	return st;
}

/* An exposure at B of a 3000-byte region in three entries (one empty). */
struct rma_fixture {
	struct p4t_conn *x, *y;
	uint8_t region[3000];
	struct iovec riov[3];
	struct p4w_cookie cookie;
	struct p4t_mem *mem;
};

static inline void rma_expose(struct rma_fixture *f, unsigned access)
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

#endif /* P4T_LOOP_TEST_H */
