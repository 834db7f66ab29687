/*
 * p4t_loop_test.h - what the loop transport's tests (test_loop.c,
 * test_loop_rma.c) share beyond p4t_xport_test.h (sides, setup and
 * teardown, test messages, counting): LOOP_TEST, pumping progress until
 * quiet, the loop's stats, and the exposure fixture both files use. Tests
 * call progress explicitly, so what they see is deterministic.
 *
 * One test binary includes it once: helpers are static inline, the sides
 * are the binary's own.
 */
#ifndef P4T_LOOP_TEST_H
#define P4T_LOOP_TEST_H

#include "p4t_loop.h"

#define XPORT_OPS	p4t_loop_ops
#define XPORT_ADDR_T	struct sockaddr_in	/* the loop is IPv4 only */
#define XPORT_HL	16			/* a bare header will do */
#include "p4t_xport_test.h"

#define loop_setup	xport_setup
#define loop_teardown	xport_teardown
#define LOOP_TEST(name)	XPORT_TEST(loop, name)

/* Progress both sides until neither has anything to do. */
static inline void pump(struct side *a, struct side *b)
{
	int a_done, b_done;

	do {
		a_done = a->iface ? p4t_progress(a->iface, 16) : 0;
		b_done = b->iface ? p4t_progress(b->iface, 16) : 0;
	} while (a_done || b_done);
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
