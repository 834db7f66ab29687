/*
 * p4t_shm_test.h - what the shared-memory transport's tests
 * (test_shm*.c) share beyond p4t_xport_test.h (sides recording
 * upcalls, test messages, counting): SHM_TEST, addresses
 * unique to the test process (the transport listens on a name derived
 * from them, so parallel runs must not meet), opening sides on them,
 * pumping progress the way the engine's worker sleeps (wait_arm, then
 * the wait fd) until a condition holds (bounded, failing on timeout),
 * stats, the heap in use, bringing a link up, the last message a side
 * received, and the abstract socket name a side listens on (for tests
 * that speak to it directly).
 *
 * One test binary includes it once: helpers are static inline, the sides
 * are the binary's own.
 */
#ifndef P4T_SHM_TEST_H
#define P4T_SHM_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "p4t_shm.h"
#include "p4u_addr.h"
#include "p4u_time.h"

#define HL	72

#define XPORT_OPS	p4t_shm_ops
#define XPORT_ADDR_T	struct sockaddr_storage
#define XPORT_HL	HL
#include "p4t_xport_test.h"

/* each binary names its suite (SHM_SUITE) before it includes this */
#define SHM_TEST_(suite, name, ...) XPORT_TEST(suite, name, ##__VA_ARGS__)
#define SHM_TEST(name, ...) SHM_TEST_(SHM_SUITE, name, ##__VA_ARGS__)

/*
 * 127.<pid>.<pid>.<pid>:<n>, n counting up: a name no other test
 * process uses (each Criterion test runs in a process of its own).
 * shm_addr_of: that name in process pid (a forked child's).
 */
static inline struct sockaddr_in shm_addr_of(pid_t pid, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(0x7f000000u | ((uint32_t)pid & 0xffffff));
	a.sin_port = htons(port);
	return a;
}

static inline struct sockaddr_in shm_addr(uint16_t port)
{
	return shm_addr_of(getpid(), port);
}

/* The documented abstract name of a cleared IPv4 address. */
static inline socklen_t shm_name_of(const struct sockaddr_in *a,
				    struct sockaddr_un *sun)
{
	char ip[INET_ADDRSTRLEN];
	int n;

	cr_assert(inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip)));
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
		     "portals-shm/%u/%s/%u", (unsigned)geteuid(), ip,
		     ntohs(a->sin_port));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static uint16_t shm_next_port = 1000;

static inline int side_open_shm(struct side *s, uint64_t auth_key,
				uint16_t port)
{
	struct sockaddr_in a = shm_addr(port);
	struct p4t_iface_config cfg = {
		.auth_key = auth_key, .addr = &a, .addrlen = sizeof(a),
		.peer_timeout_ms = 10000,
	};

	return side_open_cfg(s, &cfg);
}

static inline void shm_side_open(struct side *s, uint64_t auth_key)
{
	cr_assert_eq(side_open_shm(s, auth_key, shm_next_port++), 0);
}

static inline void shm_setup(void)
{
	shm_side_open(&sa, 0);
	shm_side_open(&sb, 0);
}

#define shm_teardown	xport_teardown

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline long find_ctx(const struct side *s, void *op_ctx)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == UP_RMA_DONE && s->ev[i].op_ctx == op_ctx)
			return (long)i;
	return -1;
}

/*
 * One round on every open side: due deadlines, then progress; when
 * nothing happened, each side arms (as the worker does before it sleeps)
 * and all sleep in poll, 10 ms at most.
 */
static inline void pump_once(void)
{
	struct side *sides[] = { &sa, &sb, &sc };
	struct pollfd pfd[3];
	int i, n = 0, done = 0;

	for (i = 0; i < 3; i++) {
		if (!sides[i]->iface)
			continue;
		done += p4u_timerq_run(&sides[i]->timers, p4u_time_ns());
		done += p4t_progress(sides[i]->iface, 64);
	}
	if (done)
		return;
	for (i = 0; i < 3; i++) {
		if (!sides[i]->iface)
			continue;
		done += p4t_wait_arm(sides[i]->iface);
		pfd[n].fd = p4t_wait_fd(sides[i]->iface);
		pfd[n++].events = POLLIN;
	}
	if (!done)
		(void)poll(pfd, (nfds_t)n, 10);
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

/* Heap in use: what malloc handed out, mmap'd blocks included. */
static inline size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static inline struct p4t_shm_stats stats_of(struct side *s)
{
	struct p4t_shm_stats st;

	cr_assert_eq(p4t_shm_stats(s->iface, &st), 0);
	return st;
}

/* The last message the side received. */
static inline const struct up_event *last_recv(const struct side *s)
{
	size_t i = s->nev;

	while (i--)
		if (s->ev[i].kind == UP_RECV)
			return &s->ev[i];
	cr_assert_fail("no message received");
	return NULL;
}

/* Establish a <-> b with one message; returns a's conn, b's in *b_conn_p. */
static inline struct p4t_conn *link_up(struct side *a, struct side *b,
				       struct p4t_conn **b_conn_p)
{
	struct p4t_conn *x = conn_to(a, b);

	cr_assert_eq(send_seq(a, x, 9999, 1), P4T_DONE);
	PUMP_UNTIL(count(b, UP_RECV) > 0);
	*b_conn_p = b->ev[b->nev - 1].conn;
	PUMP_UNTIL(stats_of(b).accepts + stats_of(a).connects >= 2);
	side_forget(b);
	return x;
}

#endif /* P4T_SHM_TEST_H */
