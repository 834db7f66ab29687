/*
 * test_verbs.c - the verbs transport (p4t_verbs.h) on a real device: two
 * ifaces in one process linked over the first verbs port with an IPv4
 * RoCE GID (soft-RoCE rxe0 in the VM of test/verbs/vm.sh). Every upcall
 * is recorded; progress is pumped until a condition holds (bounded: a
 * generous deadline, the guest is slow).
 *
 * Covered: bootstrap and messages both ways (inline, copied, largest,
 * too large), sends queued before the QP is up arriving in order, a
 * receive burst beyond the SRQ depth (RNR retry, SRQ refill), pulls and
 * pushes (RDMA READ / WRITE; offsets, many local iovecs through the bounce
 * buffer, transfers larger than the device's message size in chunks),
 * a bad rkey (remote access error -> rma_done error + conn_failed on both
 * sides, no hang), a peer closing, the wait fd, and application MRs
 * (p4t_ops.mr_reg) used instead of on-demand registration.
 *
 * Without a usable verbs port every test is skipped.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>
#include <rdma/fi_errno.h>

#include "p4_wire.h"
#include "p4t.h"
#include "p4t_verbs.h"
#include "p4u_compiler.h"
#include "p4u_time.h"
#include "p4u_timer.h"

enum up_kind { UP_RECV, UP_SEND_DONE, UP_RMA_DONE, UP_CONN_NEW,
	       UP_CONN_FAILED };

struct up_event {
	enum up_kind kind;
	struct p4t_conn *conn;
	void *op_ctx;
	int status;
	size_t len;
	uint32_t id;			/* recv: the test message's id */
};

struct side {
	struct p4t_iface *iface;
	struct p4u_timerq timers;	/* cfg.timers */
	struct sockaddr_in addr;
	size_t addrlen;
	struct up_event *ev;
	size_t nev, cap;
	size_t nrecv;
	bool bad_payload;
};

static struct side sa, sb;
static struct sockaddr_in port_addr;

static struct up_event *side_record(struct side *s, enum up_kind kind,
				    struct p4t_conn *conn)
{
	struct up_event *ev;

	if (s->nev == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		cr_assert(s->ev);
	}
	ev = &s->ev[s->nev++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->conn = conn;
	return ev;
}

/* Test messages: a PUT header, a 4-byte id, then bytes (id + i) & 0xff. */
static int up_recv(void *ctx, struct p4t_conn *conn, const void *msg,
		   size_t len)
{
	struct side *s = ctx;
	struct up_event *ev = side_record(s, UP_RECV, conn);
	const uint8_t *bytes = msg;
	size_t i;

	ev->len = len;
	if (len >= sizeof(struct p4w_hdr) + 4) {
		memcpy(&ev->id, bytes + sizeof(struct p4w_hdr), 4);
		for (i = sizeof(struct p4w_hdr) + 4; i < len; i++)
			if (bytes[i] != (uint8_t)(ev->id + i))
				s->bad_payload = true;
	}
	s->nrecv++;
	return 0;
}

static void up_send_done(void *ctx, void *op_ctx, int status)
{
	struct up_event *ev = side_record(ctx, UP_SEND_DONE, NULL);

	ev->op_ctx = op_ctx;
	ev->status = status;
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
	(void)addr;
	(void)addrlen;
	side_record(ctx, UP_CONN_NEW, conn);
	return 0;
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

/* The first verbs port with an IPv4 GID, or skip. */
static bool find_port(void)
{
	struct p4t_verbs_dev *devs;
	size_t n, i;
	bool found = false;

	if (p4t_verbs_devices(&devs, &n))
		return false;
	for (i = 0; i < n && !found; i++)
		if (devs[i].addr.ss_family == AF_INET) {
			memcpy(&port_addr, &devs[i].addr, sizeof(port_addr));
			found = true;
		}
	free(devs);
	return found;
}

static void side_open(struct side *s)
{
	struct sockaddr_in addr = port_addr;
	struct p4t_iface_config cfg = {
		.addr = &addr,
		.addrlen = sizeof(addr),
		.peer_timeout_ms = 20000,
		.rma_chunk = 65536,
		.timers = &s->timers,
		.upcalls = &upcalls,
		.upcall_ctx = s,
	};

	p4u_timerq_init(&s->timers);
	cr_assert_eq(p4t_verbs_ops.iface_open(&cfg, &s->iface), 0);
	s->addrlen = sizeof(s->addr);
	cr_assert_eq(p4t_getname(s->iface, &s->addr, &s->addrlen), 0);
}

static void setup(void)
{
	if (!find_port())
		cr_skip_test("no verbs port with an IPv4 GID");
	side_open(&sa);
	side_open(&sb);
}

static void teardown(void)
{
	if (sa.iface)
		p4t_iface_close(sa.iface);
	if (sb.iface)
		p4t_iface_close(sb.iface);
	free(sa.ev);
	free(sb.ev);
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Due deadlines (as the engine's worker runs them), then progress. */
static inline void side_pump(struct side *s)
{
	if (!s->iface)
		return;
	p4u_timerq_run(&s->timers, p4u_time_ns());
	p4t_progress(s->iface, 64);
}

/* Progress both sides until cond holds; fail after 60 s (slow guest). */
#define PUMP_UNTIL(cond)						\
	do {								\
		uint64_t deadline_ = now_ms() + 60000;			\
		while (!(cond)) {					\
			side_pump(&sa);					\
			side_pump(&sb);					\
			cr_assert(now_ms() < deadline_,			\
				  "timed out waiting for " #cond);	\
		}							\
	} while (0)

static size_t count_kind(const struct side *s, enum up_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < s->nev; i++)
		n += s->ev[i].kind == kind;
	return n;
}

static const struct up_event *find_kind(const struct side *s,
					enum up_kind kind)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == kind)
			return &s->ev[i];
	return NULL;
}

/* Send test message id of len bytes (header included) on conn. */
static int send_msg(struct side *s, struct p4t_conn *conn, uint32_t id,
		    size_t len)
{
	uint8_t hdr[sizeof(struct p4w_hdr) + 4];
	struct p4w_hdr h = { .version = P4W_VERSION, .type = P4W_PUT,
			     .length = (uint32_t)len };
	uint8_t *body = malloc(len > sizeof(hdr) ? len - sizeof(hdr) : 1);
	struct iovec iov = { body, len > sizeof(hdr) ? len - sizeof(hdr) : 0 };
	size_t i;
	int ret;

	cr_assert(body);
	p4w_hdr_pack(hdr, &h);
	memcpy(hdr + sizeof(h), &id, 4);
	for (i = 0; i < iov.iov_len; i++)
		body[i] = (uint8_t)(id + sizeof(hdr) + i);
	ret = p4t_send(s->iface, conn, hdr, sizeof(hdr), &iov, 1, NULL,
		       P4T_SEND_SEQ);
	free(body);
	return ret;
}

static struct p4t_conn *link_up(void)
{
	struct p4t_conn *conn;

	cr_assert_eq(p4t_conn_get(sa.iface, &sb.addr, sb.addrlen, &conn), 0);
	/* the first message waits for the QP, then arrives */
	cr_assert_eq(send_msg(&sa, conn, 0, 64), P4T_DONE);
	PUMP_UNTIL(sb.nrecv == 1);
	return conn;
}

static struct p4t_conn *peer_conn(const struct side *s)
{
	const struct up_event *ev = find_kind(s, UP_CONN_NEW);

	cr_assert(ev);
	return ev->conn;
}

TestSuite(verbs, .init = setup, .fini = teardown, .timeout = 300);

Test(verbs, messages_both_ways)
{
	struct p4t_conn *ab = link_up(), *ba = peer_conn(&sb);
	struct p4t_verbs_stats st;
	struct p4t_iface_attr attr;
	size_t sizes[] = { 20, 100, 256, 257, 4096, 16384 + 200, 0 };
	size_t i;

	p4t_iface_query(sa.iface, &attr);
	cr_assert(attr.rma_native);
	cr_assert_eq(attr.max_msg, P4T_VERBS_BUF_SIZE);
	sizes[6] = attr.max_msg;
	for (i = 0; i < P4U_ARRAY_SIZE(sizes); i++) {
		cr_assert_eq(send_msg(&sa, ab, (uint32_t)i + 1, sizes[i]),
			     P4T_DONE);
		cr_assert_eq(send_msg(&sb, ba, (uint32_t)i + 1, sizes[i]),
			     P4T_DONE);
	}
	cr_assert_eq(send_msg(&sa, ab, 99, attr.max_msg + 1), -FI_EMSGSIZE);
	PUMP_UNTIL(sb.nrecv == 8 && sa.nrecv == 7);
	cr_assert(!sa.bad_payload && !sb.bad_payload);
	for (i = 0; i < P4U_ARRAY_SIZE(sizes); i++)
		cr_assert_eq(sa.ev[i].len, sizes[i]);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &st), 0);
	cr_assert_geq(st.qps_up, 1);
	cr_assert_geq(st.inline_sent, 1);	/* the small ones */
	cr_assert_geq(st.msgs_sent, 8);
}

Test(verbs, queued_before_up_in_order)
{
	struct p4t_conn *conn;
	struct p4t_verbs_stats st;
	uint32_t i, n = 500;

	cr_assert_eq(p4t_conn_get(sa.iface, &sb.addr, sb.addrlen, &conn), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(send_msg(&sa, conn, i, 32 + (i % 7) * 300),
			     P4T_DONE);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &st), 0);
	cr_assert_eq(st.queued, n);	/* none went before the QP was up */
	PUMP_UNTIL(sb.nrecv == n);
	for (i = 0; i < n; i++)
		cr_assert_eq(sb.ev[i + 1].id, i);	/* ev[0]: conn_new */
	cr_assert(!sb.bad_payload);
}

/* More than the SRQ holds, sent while the receiver does not progress. */
Test(verbs, burst_beyond_srq)
{
	struct p4t_conn *ab = link_up();
	uint32_t i, n = 3 * P4T_VERBS_RECV_BUFS;
	uint64_t deadline = now_ms() + 60000;
	struct p4t_verbs_stats st;

	for (i = 1; i <= n; i++) {
		int ret;

		while ((ret = send_msg(&sa, ab, i, 2000)) == -FI_EAGAIN) {
			p4t_progress(sa.iface, 64);
			cr_assert(now_ms() < deadline);
		}
		cr_assert_eq(ret, P4T_DONE);
		p4t_progress(sa.iface, 64);	/* only the sender */
	}
	PUMP_UNTIL(sb.nrecv == n + 1);
	for (i = 1; i <= n; i++)
		cr_assert_eq(sb.ev[i + 1].id, i);
	cr_assert(!sb.bad_payload);
	cr_assert_eq(p4t_verbs_stats(sb.iface, &st), 0);
	cr_assert_geq(st.srq_reposts, n / 32);
	/* the receiver sat still while the burst drained its SRQ */
	cr_assert_geq(st.srq_limit_events, 1);
}

static uint8_t *pattern(size_t len, uint8_t seed)
{
	uint8_t *buf = malloc(len);
	size_t i;

	cr_assert(buf);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7 + (i >> 12));
	return buf;
}

Test(verbs, pull_and_push)
{
	struct p4t_conn *ab = link_up(), *ba = peer_conn(&sb);
	size_t len = (size_t)1 << 20;
	uint8_t *src = pattern(len, 3), *dst = calloc(1, len);
	uint8_t *sink = calloc(1, len), *data = pattern(len, 9);
	struct iovec siov = { src, len }, diov = { dst, len - 4096 };
	struct iovec kiov = { sink, len }, piov = { data, 8192 };
	struct p4w_cookie cs, ck;
	struct p4t_mem *ms, *mk;
	struct p4t_verbs_stats st;
	int tag1, tag2;

	cr_assert(dst && sink);
	/* A exposes src for reading and sink for writing */
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &kiov, 1, P4T_ACCESS_WRITE,
				    &ck, &mk), 0);
	cr_assert_eq(cs.length, len);
	/* B pulls [4096, len) of src and pushes 8 KiB at sink + 100 */
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 4096, &diov, 1, len - 4096,
			      &tag1), 0);
	cr_assert_eq(p4t_push(sb.iface, ba, &piov, 1, 8192, &ck, 100, &tag2),
		     0);
	/* out of the cookie's range: refused, nothing moves */
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 4096, &diov, 1, len, &tag1),
		     -FI_EINVAL);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 2);
	cr_assert_eq(sb.ev[sb.nev - 1].status, 0);
	cr_assert_eq(sb.ev[sb.nev - 2].status, 0);
	cr_assert_eq(memcmp(dst, src + 4096, len - 4096), 0);
	/* RC order: a send after the push lands after its data */
	cr_assert_eq(send_msg(&sb, ba, 7, 64), P4T_DONE);
	PUMP_UNTIL(sa.nrecv == 1);
	cr_assert_eq(memcmp(sink + 100, data, 8192), 0);
	cr_assert_eq(sink[99], 0);
	cr_assert_eq(sink[100 + 8192], 0);
	cr_assert_eq(p4t_verbs_stats(sb.iface, &st), 0);
	cr_assert_eq(st.reads, 1);
	cr_assert_eq(st.read_bytes, len - 4096);
	cr_assert_eq(st.writes, 1);
	p4t_mem_unexpose(sa.iface, ms);
	p4t_mem_unexpose(sa.iface, mk);
	free(src);
	free(dst);
	free(sink);
	free(data);
}

/* Local iovecs beyond the device's SGE limit, and one transfer larger
 * than its message size (in chunks when the device limits it). */
Test(verbs, pull_many_iovecs_and_large)
{
	struct p4t_conn *ab = link_up(), *ba = peer_conn(&sb);
	size_t big = (size_t)24 << 20, piece = 1000, n = 40, i;
	uint8_t *src = pattern(big, 5), *dst = calloc(1, big);
	struct iovec siov = { src, big }, liov[40], diov = { dst, big };
	struct p4w_cookie cs;
	struct p4t_mem *ms;
	struct p4t_verbs_stats st;
	int tag;

	cr_assert(dst);
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	for (i = 0; i < n; i++) {
		liov[i].iov_base = dst + i * 2 * piece;	/* with gaps */
		liov[i].iov_len = piece;
	}
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 0, liov, n, n * piece, &tag),
		     0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 1);
	cr_assert_eq(find_kind(&sb, UP_RMA_DONE)->status, 0);
	for (i = 0; i < n; i++) {
		cr_assert_eq(memcmp(dst + i * 2 * piece, src + i * piece,
				    piece), 0);
		cr_assert_eq(dst[i * 2 * piece + piece], 0);	/* gap */
	}
	cr_assert_eq(p4t_verbs_stats(sb.iface, &st), 0);
	cr_assert_eq(st.bounced, 1);

	memset(dst, 0, big);
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 0, &diov, 1, big, &tag), 0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 2);
	cr_assert_eq(sb.ev[sb.nev - 1].status, 0);
	cr_assert_eq(memcmp(dst, src, big), 0);
	p4t_mem_unexpose(sa.iface, ms);
	free(src);
	free(dst);
}

/* A remote access error fails the pull and the link on both sides. */
Test(verbs, bad_rkey_fails_link)
{
	struct p4t_conn *ab = link_up(), *ba = peer_conn(&sb);
	size_t len = 65536;
	uint8_t *src = pattern(len, 1), *dst = calloc(1, len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct p4w_cookie cs;
	struct p4t_mem *ms;
	const struct up_event *ev;
	int tag;

	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	cs.key ^= 0x5a5a00;	/* a key that was never handed out */
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 0, &diov, 1, len, &tag), 0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 1 &&
		   count_kind(&sb, UP_CONN_FAILED) == 1 &&
		   count_kind(&sa, UP_CONN_FAILED) == 1);
	ev = find_kind(&sb, UP_RMA_DONE);
	cr_assert_eq(ev->op_ctx, &tag);
	cr_assert_eq(ev->status, -FI_EACCES);
	cr_assert_eq(find_kind(&sb, UP_CONN_FAILED)->conn, ba);
	cr_assert_eq(find_kind(&sa, UP_CONN_FAILED)->conn, ab);
	p4t_mem_unexpose(sa.iface, ms);
	free(src);
	free(dst);
}

/* A peer that closes its iface fails the link here. */
Test(verbs, peer_close_fails_link)
{
	struct p4t_conn *ba;

	link_up();
	ba = peer_conn(&sb);
	p4t_iface_close(sa.iface);
	sa.iface = NULL;
	PUMP_UNTIL(count_kind(&sb, UP_CONN_FAILED) == 1);
	cr_assert_eq(find_kind(&sb, UP_CONN_FAILED)->conn, ba);
	cr_assert_lt(find_kind(&sb, UP_CONN_FAILED)->status, 0);
}

/* The wait fd wakes for a message that arrived over the QP. */
Test(verbs, wait_fd_wakes)
{
	struct p4t_conn *ab = link_up();
	struct pollfd pfd = { .fd = p4t_wait_fd(sb.iface), .events = POLLIN };
	uint64_t deadline = now_ms() + 60000;

	cr_assert_geq(pfd.fd, 0);
	/* quiesce B, then wait for A's message on the fd alone */
	while (p4t_progress(sb.iface, 64))
		;
	cr_assert_eq(send_msg(&sa, ab, 42, 100), P4T_DONE);
	while (p4t_progress(sa.iface, 64))
		;
	while (sb.nrecv < 2) {
		cr_assert_eq(poll(&pfd, 1, 60000), 1, "wait fd did not wake");
		p4t_progress(sb.iface, 64);
		cr_assert(now_ms() < deadline);
	}
	cr_assert_eq(sb.ev[sb.nev - 1].id, 42);
}

/*
 * Application MRs (p4t_ops.mr_reg): an exposure and the local side of a
 * pull inside one use its registration, made once per iface, not one of
 * their own; a buffer reaching outside it, or needing an access it lacks,
 * is registered on demand; a registration dropped while an exposure uses
 * it stays valid until the exposure goes.
 */
Test(verbs, app_mr_used_instead_of_on_demand)
{
	struct p4t_conn *ab = link_up(), *ba = peer_conn(&sb);
	size_t len = (size_t)1 << 20;
	uint8_t *src = pattern(len + 4096, 11), *dst = calloc(1, len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct iovec wide = { src, len + 4096 };
	struct p4w_cookie cs, cw;
	struct p4t_mem *ms, *mw;
	struct p4t_mr *msrc, *mdst;
	struct p4t_verbs_stats a0, b0, a1, b1;
	int tag;

	cr_assert(dst);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a0), 0);
	cr_assert_eq(p4t_verbs_stats(sb.iface, &b0), 0);
	/* bad arguments */
	cr_assert_eq(p4t_verbs_ops.mr_reg(NULL, len, 0, &msrc), -FI_EINVAL);
	cr_assert_eq(p4t_verbs_ops.mr_reg(src, 0, 0, &msrc), -FI_EINVAL);
	cr_assert_eq(p4t_verbs_ops.mr_reg(src, len, 0x80, &msrc), -FI_EINVAL);
	/* both ifaces are open: registered with each now */
	cr_assert_eq(p4t_mr_reg(&p4t_verbs_ops, src, len, P4T_ACCESS_READ,
				&msrc), 0);
	cr_assert_eq(p4t_mr_reg(&p4t_verbs_ops, dst, len, 0, &mdst), 0);
	cr_assert(msrc && mdst);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a1), 0);
	cr_assert_eq(a1.app_regs, a0.app_regs + 2);

	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 0, &diov, 1, len, &tag), 0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 1);
	cr_assert_eq(sb.ev[sb.nev - 1].status, 0);
	cr_assert_eq(memcmp(dst, src, len), 0);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a1), 0);
	cr_assert_eq(p4t_verbs_stats(sb.iface, &b1), 0);
	cr_assert_eq(a1.regs, a0.regs, "exposure registered on demand");
	cr_assert_eq(a1.app_mr_hits, a0.app_mr_hits + 1);
	cr_assert_eq(b1.regs, b0.regs, "pull target registered on demand");
	cr_assert_eq(b1.app_mr_hits, b0.app_mr_hits + 1);

	/* reaching past the MR, or asking for writes it does not allow:
	 * on demand */
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &wide, 1, P4T_ACCESS_READ,
				    &cw, &mw), 0);
	p4t_mem_unexpose(sa.iface, mw);
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_WRITE,
				    &cw, &mw), 0);
	p4t_mem_unexpose(sa.iface, mw);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a1), 0);
	cr_assert_eq(a1.regs, a0.regs + 2);
	cr_assert_eq(a1.app_mr_hits, a0.app_mr_hits + 1);

	/* dropped while exposed: the exposure's key still works */
	p4t_mr_dereg(&p4t_verbs_ops, msrc);
	memset(dst, 0, len);
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 4096, &diov, 1, len - 4096,
			      &tag), 0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 2);
	cr_assert_eq(sb.ev[sb.nev - 1].status, 0);
	cr_assert_eq(memcmp(dst, src + 4096, len - 4096), 0);
	p4t_mem_unexpose(sa.iface, ms);
	/* gone now: a new exposure registers on demand */
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	p4t_mem_unexpose(sa.iface, ms);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a1), 0);
	cr_assert_eq(a1.regs, a0.regs + 3);
	p4t_mr_dereg(&p4t_verbs_ops, mdst);
	free(src);
	free(dst);
}

/* A registration made before an iface opened is registered at its open
 * (fi_mr_reg usually comes before fi_enable). */
Test(verbs, app_mr_before_iface_open)
{
	size_t len = (size_t)256 << 10;
	uint8_t *src = pattern(len, 13), *dst = calloc(1, len);
	struct iovec siov = { src, len }, diov = { dst, len };
	struct p4t_conn *ab, *ba;
	struct p4w_cookie cs;
	struct p4t_mem *ms;
	struct p4t_mr *msrc, *mdst;
	struct p4t_verbs_stats a, b;
	int tag;

	cr_assert(dst);
	p4t_iface_close(sa.iface);
	p4t_iface_close(sb.iface);
	sa.iface = sb.iface = NULL;
	cr_assert_eq(p4t_mr_reg(&p4t_verbs_ops, src, len, P4T_ACCESS_READ,
				&msrc), 0);
	cr_assert_eq(p4t_mr_reg(&p4t_verbs_ops, dst, len, 0, &mdst), 0);
	side_open(&sa);
	side_open(&sb);
	ab = link_up();
	ba = peer_conn(&sb);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a), 0);
	cr_assert_eq(a.app_regs, 2);
	cr_assert_eq(p4t_mem_expose(sa.iface, ab, &siov, 1, P4T_ACCESS_READ,
				    &cs, &ms), 0);
	cr_assert_eq(p4t_pull(sb.iface, ba, &cs, 0, &diov, 1, len, &tag), 0);
	PUMP_UNTIL(count_kind(&sb, UP_RMA_DONE) == 1);
	cr_assert_eq(sb.ev[sb.nev - 1].status, 0);
	cr_assert_eq(memcmp(dst, src, len), 0);
	cr_assert_eq(p4t_verbs_stats(sa.iface, &a), 0);
	cr_assert_eq(p4t_verbs_stats(sb.iface, &b), 0);
	cr_assert_eq(a.regs, 0);
	cr_assert_eq(b.regs, 0);
	cr_assert_eq(a.app_mr_hits + b.app_mr_hits, 2);
	p4t_mem_unexpose(sa.iface, ms);
	/* dropped with the ifaces open: each PD lets its copy go */
	p4t_mr_dereg(&p4t_verbs_ops, msrc);
	p4t_mr_dereg(&p4t_verbs_ops, mdst);
	free(src);
	free(dst);
}
