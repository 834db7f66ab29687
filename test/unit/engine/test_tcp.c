/*
 * test_tcp.c - the TCP transport (p4t_tcp*.c) against the p4t.h contract
 * and what p4t_tcp.h promises, over loopback: addresses, messages of
 * every size in order, the lazy handshake and conn_new, simultaneous
 * connects, partial writes and queueing, coalescing, the request bound,
 * pull / push with chunking and their refusals, self links, refused
 * connects, a peer killed mid-pull, hostile sockets, auth_key mismatch,
 * restart detection, close paths, the wait fd and the budget.
 *
 * Each side (struct side) records every upcall in order. Sockets move in
 * the background, so tests progress until what they wait for happened
 * (bounded, failing on timeout), never sleep for it.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <rdma/fi_errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "p4_wire.h"
#include "p4t.h"
#include "p4t_tcp.h"
#include "p4u_compiler.h"

enum up_kind { UP_RECV, UP_SEND_DONE, UP_RMA_DONE, UP_CONN_NEW, UP_CONN_FAILED };

struct up_event {
	enum up_kind kind;
	struct p4t_conn *conn;
	void *op_ctx;
	int status;
	struct sockaddr_storage addr;	/* conn_new */
	size_t addrlen;
	uint32_t seq;			/* recv: the header's seq */
	size_t len;
	uint8_t *msg;			/* recv: a copy */
};

struct side {
	struct p4t_iface *iface;
	struct sockaddr_storage addr;
	size_t addrlen;
	struct up_event *ev;
	size_t nev, cap;
	size_t nrecv;
	int conn_new_ret;
	size_t recv_fail_at;		/* recv number (1-based) that fails */
	int recv_fail_ret;
	bool free_on_done;		/* send_done frees op_ctx */
	bool close_in_recv;		/* conn_close from inside recv */
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
	if (s->close_in_recv)
		p4t_conn_close(s->iface, conn);
	return s->nrecv == s->recv_fail_at ? s->recv_fail_ret : 0;
}

static void up_send_done(void *ctx, void *op_ctx, int status)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_SEND_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
	if (s->free_on_done)
		free(op_ctx);
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

	cr_assert_leq(addrlen, sizeof(ev->addr));
	memcpy(&ev->addr, addr, addrlen);
	ev->addrlen = addrlen;
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
	int ret;

	cfg->upcalls = &upcalls;
	cfg->upcall_ctx = s;
	ret = p4t_tcp_ops.iface_open(cfg, &s->iface);
	if (ret)
		return ret;
	s->addrlen = sizeof(s->addr);
	cr_assert_eq(p4t_getname(s->iface, &s->addr, &s->addrlen), 0);
	return 0;
}

static void side_open(struct side *s, uint64_t auth_key)
{
	struct p4t_iface_config cfg = { .auth_key = auth_key };

	cr_assert_eq(side_open_cfg(s, &cfg), 0);
}

/* Reopen on the address s had (a restarted process). */
static void side_reopen(struct side *s, uint64_t auth_key)
{
	struct sockaddr_storage addr = s->addr;
	struct p4t_iface_config cfg = {
		.auth_key = auth_key, .addr = &addr, .addrlen = s->addrlen,
	};

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

static void tcp_setup(void)
{
	side_open(&sa, 0);
	side_open(&sb, 0);
}

static void tcp_teardown(void)
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

/* As test_loop.c: bodies in their own frame, leak check after close. */
static void tcp_finish(void)
{
	tcp_teardown();
#ifdef __SANITIZE_ADDRESS__
	cr_expect_eq(__lsan_do_recoverable_leak_check(), 0,
		     "leaks: see LeakSanitizer's report");
#endif
}

#define TCP_TEST(name, ...)						\
	static __attribute__((noinline)) void tcp_test_##name(void);	\
	Test(tcp, name, ##__VA_ARGS__)					\
	{								\
		tcp_test_##name();					\
		tcp_finish();						\
	}								\
	static __attribute__((noinline)) void tcp_test_##name(void)

TestSuite(tcp, .init = tcp_setup, .fini = tcp_teardown, .timeout = 120);

/* ---- helpers -------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void hdr_make(uint8_t hdr[16], uint8_t type, uint32_t length,
		     uint32_t seq)
{
	struct p4w_hdr h = {
		.version = P4W_VERSION, .type = type, .length = length,
		.seq = seq,
	};

	p4w_hdr_pack(hdr, &h);
}

/*
 * Test messages: a PUT header and a zeroed 56-byte body (what the wire
 * framing needs of a PUT: the transport checks headers, not bodies), then
 * len payload bytes.
 */
#define HL	72

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}

/*
 * Send seq with len payload bytes in three iovecs (one empty). With keep,
 * the payload is handed over as op_ctx: freed at once unless the send
 * was P4T_QUEUED, then by send_done (s->free_on_done).
 */
static int send_msg(struct side *s, struct p4t_conn *conn, uint8_t type,
		    uint32_t seq, size_t len, bool keep)
{
	uint8_t hdr[HL] = { 0 }, *payload = malloc(len ? len : 1);
	struct iovec iov[3];
	size_t i;
	int ret;

	cr_assert(payload);
	for (i = 0; i < len; i++)
		payload[i] = pattern(seq, i);
	hdr_make(hdr, type, (uint32_t)(HL + len), seq);
	iov[0].iov_base = payload;
	iov[0].iov_len = len / 3;
	iov[1].iov_base = NULL;
	iov[1].iov_len = 0;
	iov[2].iov_base = payload + len / 3;
	iov[2].iov_len = len - len / 3;
	ret = p4t_send(s->iface, conn, hdr, sizeof(hdr), iov, 3,
		       keep ? payload : NULL);
	if (ret != P4T_QUEUED)
		free(payload);
	return ret;
}

static int send_seq(struct side *s, struct p4t_conn *conn, uint32_t seq,
		    size_t len)
{
	return send_msg(s, conn, P4W_PUT, seq, len, false);
}

static void expect_msg(const struct up_event *ev, uint32_t seq, size_t len)
{
	size_t i;

	cr_assert_eq(ev->kind, UP_RECV, "event kind %d, want recv", ev->kind);
	cr_assert_eq(ev->len, HL + len, "len %zu, want %zu", ev->len, HL + len);
	cr_assert_eq(ev->seq, seq, "seq %u, want %u", ev->seq, seq);
	for (i = 0; i < len; i++)
		if (ev->msg[HL + i] != pattern(seq, i))
			cr_assert_fail("seq %u byte %zu differs", seq, i);
}

static size_t count(const struct side *s, enum up_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < s->nev; i++)
		n += s->ev[i].kind == kind;
	return n;
}

/* Index of the n-th (0-based) event of kind on s, or -1. */
static long find_ev(const struct side *s, enum up_kind kind, size_t n)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == kind && n-- == 0)
			return (long)i;
	return -1;
}

/* Index of the rma_done for op_ctx on s, or -1. */
static long find_ctx(const struct side *s, void *op_ctx)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == UP_RMA_DONE && s->ev[i].op_ctx == op_ctx)
			return (long)i;
	return -1;
}

/* One round of progress on every open side; sleeps in poll when idle. */
static void pump_once(void)
{
	struct side *sides[] = { &sa, &sb, &sc };
	struct pollfd pfd[3];
	int i, n = 0, done = 0;

	for (i = 0; i < 3; i++) {
		if (!sides[i]->iface)
			continue;
		done += p4t_progress(sides[i]->iface, 64);
		pfd[n].fd = p4t_wait_fd(sides[i]->iface);
		pfd[n++].events = POLLIN;
	}
	if (!done)
		(void)poll(pfd, (nfds_t)n, 1);
}

#define PUMP_UNTIL(cond)						\
	do {								\
		uint64_t t0_ = now_ms();				\
		while (!(cond)) {					\
			pump_once();					\
			cr_assert_lt(now_ms() - t0_, 30000,		\
				     "timed out waiting for " #cond);	\
		}							\
	} while (0)

/* Progress until nothing happens for ms milliseconds. */
static void pump_quiet(int ms)
{
	size_t before;
	uint64_t t0 = now_ms();

	for (;;) {
		before = sa.nev + sb.nev + sc.nev;
		pump_once();
		if (sa.nev + sb.nev + sc.nev != before)
			t0 = now_ms();
		if (now_ms() - t0 >= (uint64_t)ms)
			return;
	}
}

static struct p4t_conn *conn_to(struct side *s, const struct side *peer)
{
	struct p4t_conn *conn = NULL;

	cr_assert_eq(p4t_conn_get(s->iface, &peer->addr, peer->addrlen,
				  &conn), 0);
	cr_assert(conn);
	return conn;
}

static struct p4t_tcp_stats stats_of(struct side *s)
{
	struct p4t_tcp_stats st;

	cr_assert_eq(p4t_tcp_stats(s->iface, &st), 0);
	return st;
}

static bool fd_readable(struct p4t_iface *iface, int ms)
{
	struct pollfd pfd = { .fd = p4t_wait_fd(iface), .events = POLLIN };

	cr_assert_geq(pfd.fd, 0);
	return poll(&pfd, 1, ms) == 1 && (pfd.revents & POLLIN);
}

/* Establish a <-> b with one message each way; returns a's conn. */
static struct p4t_conn *link_up(struct side *a, struct side *b,
				struct p4t_conn **b_conn_p)
{
	struct p4t_conn *x = conn_to(a, b);
	size_t na = a->nev, nb = b->nev;

	cr_assert_eq(send_seq(a, x, 9999, 1), P4T_DONE);
	PUMP_UNTIL(count(b, UP_RECV) > 0 && b->nev > nb);
	*b_conn_p = b->ev[b->nev - 1].conn;
	side_forget(b);
	(void)na;
	return x;
}


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
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 0, NULL), -FI_EINVAL);
	hdr_make(hdr, P4W_T_HELLO, 16, 0);	/* a transport type */
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 0, NULL), -FI_EINVAL);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 8, NULL, 0, NULL), -FI_EINVAL);
	hdr_make(hdr, P4W_PUT, 16 + P4T_TCP_MAX_MSG, 0);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, &big, 1, NULL),
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

/* ---- failures ----------------------------------------------------------- */

TCP_TEST(nobody_listening_is_refused_from_progress)
{
	struct sockaddr_storage nobody = sb.addr;
	uint8_t dst[8];
	struct iovec diov = { dst, 8 };
	struct p4w_cookie ck = { .length = 8 };
	struct p4t_conn *x = NULL;

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
	if (p4t_send(me.iface, conn, hdr, HL, &civ, 1, NULL) < 0)
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
