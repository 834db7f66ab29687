/*
 * p4e_data_test.h - what the data placement tests (test_eng_data.c,
 * test_eng_data_md.c) share: the pair of NIs, source, target and pattern
 * buffers with guard bytes, and helpers for appends, puts and gets at
 * offsets and the ACK of a put.
 *
 * One test binary includes it once: helpers are static inline, the
 * fixture's state is the binary's own.
 */
#ifndef P4E_DATA_TEST_H
#define P4E_DATA_TEST_H

#include "p4e_test.h"

static struct eng e;

static inline void data_setup(void)
{
	eng_open(&e);
}

static inline void data_teardown(void)
{
	eng_close(&e);
}

#define GUARD 0x5a

static uint8_t src[65536], dst[65536];

static inline void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

/* Every byte of buf[from, to) is still the guard value. */
static inline bool guarded(const uint8_t *buf, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (buf[i] != GUARD)
			return false;
	return true;
}

#define status_reg(side, idx) eng_sr(&e, side, idx)

/* Forget side's events (where a test does not look at them). */
#define drain(side) eng_drain(&e, side)

static inline uint64_t append(int side, const struct p4e_me_desc *d,
			      enum p4e_list list)
{
	uint64_t me;

	cr_assert_eq(p4e_me_append(e.ni[side], e.pt[side], d, list, NULL, 0,
				   &me), 0);
	cr_assert_eq(eng_event(&e, side).type, P4E_EVENT_LINK);
	return me;
}

static inline uint64_t append_me(void *buf, size_t len, unsigned options)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, options, 0, 0);

	return append(1, &d, P4E_PRIORITY_LIST);
}

/* Initiate from side 0 with the fixture's defaults and progress. */
static inline void run_put(uint64_t md, uint64_t loff, size_t len,
			   uint64_t roff)
{
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, 0);

	x.local_offset = loff;
	x.remote_offset = roff;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
}

static inline void run_get(uint64_t md, uint64_t loff, size_t len,
			   uint64_t roff)
{
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, 0);

	x.local_offset = loff;
	x.remote_offset = roff;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
}

/* The initiator's ACK of a put (after its SEND). */
static inline struct p4e_event put_ack(void)
{
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	return eng_event_type(&e, 0, P4E_EVENT_ACK);
}

#endif /* P4E_DATA_TEST_H */
