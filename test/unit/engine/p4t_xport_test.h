/*
 * p4t_xport_test.h - what the transport tests share whatever the
 * transport: sides (struct side) that record every upcall they get, in
 * order; opening and closing them; the suite's setup, teardown and
 * XPORT_TEST (bodies in a frame of their own, then a leak check); test
 * messages (a header as the wire has it, a payload pattern, iovec-split
 * sends and their check); counting events, finding a link, the wait fd.
 *
 * Not included directly: p4t_loop_test.h and p4t_tcp_test.h define first
 *   XPORT_OPS       the transport's ops table,
 *   XPORT_ADDR_T    the address type a side keeps (loop: sockaddr_in),
 *   XPORT_HL        the bytes of header a test message carries (what the
 *                   transport's framing needs of a PUT),
 * then include this, then add what only their transport has.
 *
 * One test binary includes it once: helpers are static inline, the sides
 * are the binary's own.
 */
#ifndef P4T_XPORT_TEST_H
#define P4T_XPORT_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <criterion/criterion.h>
#include <rdma/fi_errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "p4_wire.h"
#include "p4t.h"
#include "p4u_compiler.h"
#include "p4u_time.h"
#include "p4u_timer.h"

#if !defined(XPORT_OPS) || !defined(XPORT_ADDR_T) || !defined(XPORT_HL)
#error "include p4t_loop_test.h or p4t_tcp_test.h, not p4t_xport_test.h"
#endif

enum up_kind {
	UP_RECV, UP_SEND_DONE, UP_RMA_DONE, UP_CONN_NEW, UP_CONN_FAILED,
	UP_XPORT,		/* xport_recv: a layered transport's message */
};

struct up_event {
	enum up_kind kind;
	struct p4t_conn *conn;
	void *op_ctx;
	int status;
	XPORT_ADDR_T addr;		/* conn_new */
	size_t addrlen;
	uint32_t seq;			/* recv: the header's seq, if any */
	size_t len;
	uint8_t *msg;			/* recv, xport_recv: a copy */
};

struct side {
	struct p4t_iface *iface;
	struct p4u_timerq timers;	/* the side's deadlines (cfg.timers) */
	unsigned send_flags;		/* P4T_SEND_BATCH for send_msg */
	XPORT_ADDR_T addr;
	size_t addrlen;
	struct up_event *ev;
	size_t nev, cap;
	size_t nrecv;
	bool layered;			/* has xport_recv (as verbs on tcp) */
	int conn_new_ret;		/* conn_new returns this */
	size_t recv_fail_at;		/* recv number (1-based) that fails */
	int recv_fail_ret;
	bool free_on_done;		/* send_done frees op_ctx */
	bool close_in_recv;		/* conn_close from inside recv */
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
	if (s->close_in_recv)
		p4t_conn_close(s->iface, conn);
	if (s->on_recv)
		s->on_recv(s, conn, msg, len);
	return s->nrecv == s->recv_fail_at ? s->recv_fail_ret : 0;
}

static inline void up_send_done(void *ctx, void *op_ctx, int status)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_SEND_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
	if (s->free_on_done)
		free(op_ctx);
}

static inline void up_rma_done(void *ctx, void *op_ctx, int status)
{
	struct up_event *ev = side_record(ctx, UP_RMA_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
}

/* A peer's address is an IPv4 or IPv6 socket address that fits the side's
 * address type (so exactly a sockaddr_in on the loop transport). */
static inline int up_conn_new(void *ctx, struct p4t_conn *conn,
			      const void *addr, size_t addrlen)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_CONN_NEW, conn);

	cr_assert(addrlen == sizeof(struct sockaddr_in) ||
		  addrlen == sizeof(struct sockaddr_in6),
		  "conn_new addrlen %zu", addrlen);
	cr_assert_leq(addrlen, sizeof(ev->addr));
	memcpy(&ev->addr, addr, addrlen);
	ev->addrlen = addrlen;
	return s->conn_new_ret;
}

static inline void up_conn_failed(void *ctx, struct p4t_conn *conn, int status)
{
	side_record(ctx, UP_CONN_FAILED, conn)->status = status;
}

static inline int up_xport_recv(void *ctx, struct p4t_conn *conn,
				const void *msg, size_t len)
{
	struct up_event *ev = side_record(ctx, UP_XPORT, conn);

	ev->len = len;
	ev->msg = malloc(len ? len : 1);
	cr_assert(ev->msg);
	memcpy(ev->msg, msg, len);
	return 0;
}

/* As the engine's: no xport_recv. */
static const struct p4t_upcalls upcalls = {
	.recv = up_recv,
	.send_done = up_send_done,
	.rma_done = up_rma_done,
	.conn_new = up_conn_new,
	.conn_failed = up_conn_failed,
};

/* As a transport layered on this one has them (side.layered). */
static const struct p4t_upcalls upcalls_layered = {
	.recv = up_recv,
	.send_done = up_send_done,
	.rma_done = up_rma_done,
	.conn_new = up_conn_new,
	.conn_failed = up_conn_failed,
	.xport_recv = up_xport_recv,
};

static inline int side_open_cfg(struct side *s, struct p4t_iface_config *cfg)
{
	int ret;

	cfg->upcalls = s->layered ? &upcalls_layered : &upcalls;
	cfg->upcall_ctx = s;
	p4u_timerq_init(&s->timers);
	if (!cfg->timers)
		cfg->timers = &s->timers;
	ret = XPORT_OPS.iface_open(cfg, &s->iface);
	if (ret)
		return ret;
	s->addrlen = sizeof(s->addr);
	cr_assert_eq(p4t_getname(s->iface, &s->addr, &s->addrlen), 0);
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

static inline void xport_setup(void)
{
	side_open(&sa, 0);
	side_open(&sb, 0);
}

static inline void xport_teardown(void)
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
 * Every test body runs in a function of its own; then xport_finish()
 * closes everything and, under ASan, looks for leaks. The body's frame is
 * gone by then, so pointers in its locals do not hide a leak. Not in
 * .fini: Criterion ignores what fails there, and its workers exit without
 * LeakSanitizer's own check.
 */
static inline void xport_finish(void)
{
	xport_teardown();
#ifdef __SANITIZE_ADDRESS__
	cr_expect_eq(__lsan_do_recoverable_leak_check(), 0,
		     "leaks: see LeakSanitizer's report");
#endif
}

#define XPORT_TEST(suite, name, ...)					\
	static __attribute__((noinline)) void suite##_test_##name(void);	\
	Test(suite, name, ##__VA_ARGS__)				\
	{								\
		suite##_test_##name();					\
		xport_finish();						\
	}								\
	static __attribute__((noinline)) void suite##_test_##name(void)

/* ---- test messages ------------------------------------------------------- */

/* A header as the wire has it: length = whole message. */
static inline void hdr_make(uint8_t hdr[16], uint8_t type, uint32_t length,
			    uint32_t seq)
{
	struct p4w_hdr h = {
		.version = P4W_VERSION, .type = type, .length = length,
		.seq = seq,
	};

	p4w_hdr_pack(hdr, &h);
}

static inline uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}

/*
 * Send seq: XPORT_HL bytes of header (the rest of it zero), then len
 * payload bytes in three iovecs (one empty). With keep, the payload is
 * handed over as op_ctx: freed at once unless the send was P4T_QUEUED,
 * then by send_done (s->free_on_done).
 */
static inline int send_msg(struct side *s, struct p4t_conn *conn, uint8_t type,
			   uint32_t seq, size_t len, bool keep)
{
	uint8_t hdr[XPORT_HL] = { 0 }, *payload = malloc(len ? len : 1);
	struct iovec iov[3];
	size_t i;
	int ret;

	cr_assert(payload);
	for (i = 0; i < len; i++)
		payload[i] = pattern(seq, i);
	hdr_make(hdr, type, (uint32_t)(XPORT_HL + len), seq);
	iov[0].iov_base = payload;
	iov[0].iov_len = len / 3;
	iov[1].iov_base = NULL;
	iov[1].iov_len = 0;
	iov[2].iov_base = payload + len / 3;
	iov[2].iov_len = len - len / 3;
	/* requests are sequenced (and may be refused when the queue is
	 * full), as the engine sends them */
	ret = p4t_send(s->iface, conn, hdr, sizeof(hdr), iov, 3,
		       keep ? payload : NULL,
		       (type <= P4W_SWAP ? P4T_SEND_SEQ : 0) | s->send_flags);
	if (ret != P4T_QUEUED)
		free(payload);
	return ret;
}

static inline int send_seq(struct side *s, struct p4t_conn *conn, uint32_t seq,
			   size_t len)
{
	return send_msg(s, conn, P4W_PUT, seq, len, false);
}

static inline void expect_msg(const struct up_event *ev, uint32_t seq,
			      size_t len)
{
	size_t i;

	cr_assert_eq(ev->kind, UP_RECV, "event kind %d, want recv", ev->kind);
	cr_assert_eq(ev->len, XPORT_HL + len, "len %zu, want %zu", ev->len,
		     XPORT_HL + len);
	cr_assert_eq(ev->seq, seq, "seq %u, want %u", ev->seq, seq);
	for (i = 0; i < len; i++)
		if (ev->msg[XPORT_HL + i] != pattern(seq, i))
			cr_assert_fail("seq %u byte %zu differs", seq, i);
}

/* ---- events, links, the wait fd ------------------------------------------ */

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

	cr_assert_eq(p4t_conn_get(s->iface, &peer->addr, peer->addrlen,
				  &conn), 0);
	cr_assert(conn);
	return conn;
}

/* Whether the wait fd is readable within ms (0: right now). */
static inline bool fd_readable(struct p4t_iface *iface, int ms)
{
	struct pollfd pfd = { .fd = p4t_wait_fd(iface), .events = POLLIN };

	cr_assert_geq(pfd.fd, 0);
	return poll(&pfd, 1, ms) == 1 && (pfd.revents & POLLIN);
}

/* ---- fairness between links ---------------------------------------------- */

/*
 * sa floods sc (x: 80 messages before each of sc's progress calls, more
 * than its budget of 64 reads), and from call 10 on sb (y) sends one
 * message per call: sb's first must arrive within 3 calls, and its later
 * ones must keep coming (a link that always has a budget's worth waiting
 * must not starve the others, whether they were idle or busy).
 */
static inline void xport_flood_fairness(struct p4t_conn *x, struct p4t_conn *y)
{
	uint32_t seq = 100, sent = 0, got = 0;
	int call, first = -1, i;
	size_t k;

	side_forget(&sc);
	for (call = 0; call < 50; call++) {
		if (call >= 10) {
			cr_assert_geq(send_seq(&sb, y, 100000 + sent, 1), 0);
			sent++;
		}
		for (i = 0; i < 80; i++)
			cr_assert_geq(send_seq(&sa, x, seq++, 1), 0);
		(void)p4t_progress(sa.iface, 64);
		(void)p4t_progress(sb.iface, 64);
		(void)p4t_progress(sc.iface, 64);
		for (k = 0; k < sc.nev; k++)
			if (sc.ev[k].kind == UP_RECV &&
			    sc.ev[k].seq >= 100000 && !got++)
				first = call;
		side_forget(&sc);
	}
	cr_expect(first >= 10 && first < 13,
		  "sb's first message waited %d calls behind sa's flood",
		  (first < 0 ? call : first) - 10);
	cr_expect_geq(got + 3, sent, "sb sent %u during sa's flood, %u arrived",
		      sent, got);
}

#endif /* P4T_XPORT_TEST_H */
