/*
 * p4e_atomic_test.h - what the engine's atomic tests (test_eng_atomic.c,
 * test_eng_atomic_rules.c) share: the pair of NIs, the element count of
 * one operation, the three atomic calls behind one switch, the
 * initiator's events and the target's status registers.
 *
 * One test binary includes it once: helpers are static inline, the
 * fixture's state is the binary's own.
 */
#ifndef P4E_ATOMIC_TEST_H
#define P4E_ATOMIC_TEST_H

#include "p4e_test.h"

#define NE	6		/* elements per operation */

static struct eng e;

static inline void atomic_setup(void)
{
	eng_open(&e);
}

static inline void atomic_teardown(void)
{
	eng_close(&e);
}

#define status_reg(side, idx) eng_sr(&e, side, idx)
#define drain(side) eng_drain(&e, side)

/* The initiator's next event of type, after its SEND. */
static inline struct p4e_event ini_event(int type)
{
	struct p4e_event ev = eng_event(&e, 0);

	/* copied payloads report SEND at post: skip those ahead */
	while (ev.type == P4E_EVENT_SEND && type != P4E_EVENT_SEND)
		ev = eng_event(&e, 0);
	cr_assert_eq(ev.type, type, "event %d (fail %d), expected %d", ev.type,
		     ev.ni_fail_type, type);
	return ev;
}

enum call { CALL_ATOMIC, CALL_FETCH, CALL_SWAP };

static inline int call_op(enum call call, struct p4e_ni *ni,
			  const struct p4e_xfer *x)
{
	switch (call) {
	case CALL_ATOMIC:
		return p4e_atomic(ni, x);
	case CALL_FETCH:
		return p4e_fetch_atomic(ni, x);
	default:
		return p4e_swap(ni, x);
	}
}

#endif /* P4E_ATOMIC_TEST_H */
