/*
 * p4e_put_test.h - what the put and get tests (test_eng_put.c,
 * test_eng_send.c) share: the pair of NIs, two 1 MiB + 64 buffers,
 * filling them, status registers, the loop transport's hooks (skipping a
 * test that needs them on TCP) and appending a match entry.
 *
 * One test binary includes it once: helpers are static inline, the
 * fixture's state is the binary's own.
 */
#ifndef P4E_PUT_TEST_H
#define P4E_PUT_TEST_H

#include "p4e_test.h"
#include "p4e_priv.h"

static struct eng e;

static inline void put_setup(void)
{
	eng_open(&e);
}

static inline void put_teardown(void)
{
	eng_close(&e);
}

/* Large enough for the 1 MiB cases; static so the stack stays small. */
static uint8_t src[(1 << 20) + 64], dst[(1 << 20) + 64];

static inline void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

#define status_reg(side, idx) eng_sr(&e, side, idx)

/* Tests that use the loop transport's hooks run on it only. */
static inline void need_loop(void)
{
	if (!eng_is_loop())
		cr_skip_test("uses the loop transport's test hooks");
}

static inline struct p4t_iface *iface_of(int side)
{
	return e.ni[side]->xp[P4E_XP_NET].iface;
}

static inline struct p4t_loop_stats loop_stats(int side)
{
	struct p4t_loop_stats st;

	p4t_loop_stats_get(iface_of(side), &st);
	return st;
}

static inline uint64_t append_me(int side, void *buf, size_t len,
				 unsigned options, uint64_t bits,
				 uint64_t ignore, void *user_ptr,
				 uint64_t user_flags)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, options, bits, ignore);
	uint64_t me;

	cr_assert_eq(p4e_me_append(e.ni[side], e.pt[side], &d,
				   P4E_PRIORITY_LIST, user_ptr, user_flags,
				   &me), 0);
	cr_assert_eq(eng_event(&e, side).type, P4E_EVENT_LINK);
	return me;
}

#endif /* P4E_PUT_TEST_H */
