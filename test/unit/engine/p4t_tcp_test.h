/*
 * p4t_tcp_test.h - what the TCP transport's tests (test_tcp.c,
 * test_tcp_send.c, test_tcp_fail.c, test_tcp_rma.c) share beyond
 * p4t_xport_test.h (sides, setup and teardown, test messages, counting):
 * TCP_TEST, reopening a side on its old address, finding events; pumping
 * progress (each side's due deadlines first, as the engine's worker runs
 * them) until a condition holds (bounded, failing on timeout) or until
 * quiet; raw sockets (a plain TCP peer: connect, see it closed); stats,
 * and bringing a link up.
 *
 * One test binary includes it once: helpers are static inline, the sides
 * are the binary's own.
 */
#ifndef P4T_TCP_TEST_H
#define P4T_TCP_TEST_H

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "p4t_tcp.h"
#include "p4u_time.h"

/*
 * Test messages: a PUT header and a zeroed 56-byte body (what the wire
 * framing needs of a PUT: the transport checks headers, not bodies), then
 * len payload bytes.
 */
#define HL	72

#define XPORT_OPS	p4t_tcp_ops
#define XPORT_ADDR_T	struct sockaddr_storage
#define XPORT_HL	HL
#include "p4t_xport_test.h"

#define tcp_setup	xport_setup
#define tcp_teardown	xport_teardown
#define TCP_TEST(name, ...) XPORT_TEST(tcp, name, ##__VA_ARGS__)

/* Reopen on the address s had (a restarted process). */
static inline void side_reopen(struct side *s, uint64_t auth_key)
{
	struct sockaddr_storage addr = s->addr;
	struct p4t_iface_config cfg = {
		.auth_key = auth_key, .addr = &addr, .addrlen = s->addrlen,
	};

	cr_assert_eq(side_open_cfg(s, &cfg), 0);
}

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Index of the n-th (0-based) event of kind on s, or -1. */
static inline long find_ev(const struct side *s, enum up_kind kind, size_t n)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == kind && n-- == 0)
			return (long)i;
	return -1;
}

/* Index of the rma_done for op_ctx on s, or -1. */
static inline long find_ctx(const struct side *s, void *op_ctx)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == UP_RMA_DONE && s->ev[i].op_ctx == op_ctx)
			return (long)i;
	return -1;
}

/*
 * Run the side's due deadlines, as the engine's worker does before it
 * progresses its NIs; returns how many fired.
 */
static inline int side_timers_run(struct side *s)
{
	return p4u_timerq_run(&s->timers, p4u_time_ns());
}

/*
 * How long (ms, at most max_ms) a side may sleep on its wait fd: not past
 * its next deadline, which no fd announces (the worker's timerfd does
 * that for the engine).
 */
static inline int side_sleep_ms(const struct side *s, int max_ms)
{
	uint64_t next = p4u_timerq_next(&s->timers), now = p4u_time_ns();

	if (next == P4U_TIMER_NEVER)
		return max_ms;
	if (next <= now)
		return 0;
	return (int)P4U_MIN((uint64_t)max_ms,
			    (next - now + 999999) / 1000000);
}

/*
 * Stalls: stretches of time in which the test process did not pump (a
 * round, or the gap between two, longer than PUMP_STALL_MS: it was not
 * scheduled on a busy host). Timing tests do not blame a deadline that
 * fired late by the time the pump was stalled after it
 * (pump_stalled_ms); the last PUMP_STALLS are kept.
 */
#define PUMP_STALL_MS	3
#define PUMP_STALLS	256

static struct {
	uint64_t from[PUMP_STALLS], to[PUMP_STALLS];
	size_t n;
	uint64_t last;			/* when the last round ended */
} pump_stalls;

static inline void pump_stall_note(uint64_t from, uint64_t to)
{
	size_t i;

	if (to - from <= PUMP_STALL_MS)
		return;
	i = pump_stalls.n++ % PUMP_STALLS;
	pump_stalls.from[i] = from;
	pump_stalls.to[i] = to;
}

/* Milliseconds of [from, to] in which the pump was stalled. */
static inline uint64_t pump_stalled_ms(uint64_t from, uint64_t to)
{
	size_t i, n = P4U_MIN(pump_stalls.n, (size_t)PUMP_STALLS);
	uint64_t sum = 0, lo, hi;

	for (i = 0; i < n; i++) {
		lo = P4U_MAX(from, pump_stalls.from[i]);
		hi = P4U_MIN(to, pump_stalls.to[i]);
		if (pump_stalls.to[i] > pump_stalls.from[i] && hi > lo)
			sum += hi - lo;
	}
	return sum;
}

/*
 * One round on every open side: due deadlines, then progress; sleeps in
 * poll (1 ms at most, never past a deadline) when nothing happened.
 */
static inline void pump_once(void)
{
	struct side *sides[] = { &sa, &sb, &sc };
	struct pollfd pfd[3];
	int i, n = 0, done = 0, ms = 1;
	uint64_t t0 = now_ms();

	if (pump_stalls.last)
		pump_stall_note(pump_stalls.last, t0);
	for (i = 0; i < 3; i++) {
		if (!sides[i]->iface)
			continue;
		done += side_timers_run(sides[i]);
		done += p4t_progress(sides[i]->iface, 64);
		pfd[n].fd = p4t_wait_fd(sides[i]->iface);
		pfd[n++].events = POLLIN;
		ms = side_sleep_ms(sides[i], ms);
	}
	if (!done)
		(void)poll(pfd, (nfds_t)n, ms);
	pump_stalls.last = now_ms();
	pump_stall_note(t0, pump_stalls.last);
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

/* Progress one side only (the other makes no call at all), as pump_once. */
static inline void pump_side_once(struct side *s)
{
	struct pollfd pfd = { .fd = p4t_wait_fd(s->iface), .events = POLLIN };

	if (!side_timers_run(s) && !p4t_progress(s->iface, 64))
		(void)poll(&pfd, 1, side_sleep_ms(s, 1));
}

#define PUMP_SIDE_UNTIL(s, cond)					\
	do {								\
		uint64_t t0_ = now_ms();				\
		while (!(cond)) {					\
			pump_side_once(s);				\
			cr_assert_lt(now_ms() - t0_, 30000,		\
				     "timed out waiting for " #cond);	\
		}							\
	} while (0)

/* Progress until nothing happens for ms milliseconds. */
static inline void pump_quiet(int ms)
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

/* ---- raw sockets: a peer that is not a transport ------------------------- */

/* A plain TCP connection to the side's listening address. */
static inline int raw_connect(const struct side *to)
{
	int fd = socket(to->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (const struct sockaddr *)&to->addr,
			     (socklen_t)to->addrlen), 0);
	return fd;
}

/* Has the other end closed fd (EOF or reset)? Reads what was sent. */
static inline bool raw_closed(int fd)
{
	uint8_t buf[256];
	ssize_t n;

	do {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	} while (n > 0);
	return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Progress until the peer closed fd. */
static inline void raw_wait_closed(int fd)
{
	uint64_t t0 = now_ms();

	while (!raw_closed(fd)) {
		pump_once();
		cr_assert_lt(now_ms() - t0, 30000, "socket not closed");
	}
}

static inline struct p4t_tcp_stats stats_of(struct side *s)
{
	struct p4t_tcp_stats st;

	cr_assert_eq(p4t_tcp_stats(s->iface, &st), 0);
	return st;
}

/* Establish a <-> b with one message each way; returns a's conn. */
static inline struct p4t_conn *link_up(struct side *a, struct side *b,
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

#endif /* P4T_TCP_TEST_H */
