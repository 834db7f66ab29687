/*
 * p4e_list_test.h - what the list and search tests (test_eng_list*.c,
 * test_eng_search.c, test_eng_unexp.c) share on top of p4e_test.h: the
 * pair of NIs (side 0 puts, side 1 holds the lists), three source
 * patterns and two target buffers reset before every test, and helpers
 * for puts from side 0, appends on side 1, overflow entries, landing
 * unexpected messages, searches and claims.
 *
 * One test binary includes it once: helpers are static inline, the
 * fixture's state is the binary's own.
 */
#ifndef P4E_LIST_TEST_H
#define P4E_LIST_TEST_H

#include "p4e_test.h"

static struct eng e;

/* user_ptr of overflow, priority and search requests */
#define OFL ((void *)0x0f1)
#define PRI ((void *)0x9a1)
#define PRI2 ((void *)0x9a2)
#define SRCH ((void *)0x5e1)

#define EV_BIT(t) (1u << (t))

static uint8_t src[3][16384];
static uint8_t obuf[16384], pbuf[16384];

static inline void list_setup(void)
{
	size_t i;

	eng_open(&e);
	for (i = 0; i < sizeof(src[0]); i++) {
		src[0][i] = (uint8_t)(i * 7 + 1);
		src[1][i] = (uint8_t)(i * 13 + 5);
		src[2][i] = (uint8_t)(i * 3 + 11);
	}
	memset(obuf, 0, sizeof(obuf));
	memset(pbuf, 0, sizeof(pbuf));
}

static inline void list_teardown(void)
{
	eng_close(&e);
}

#define ev_is(side, type) eng_ev_is(&e, side, type)
#define ini_done(fail, mlength) eng_ini_done(&e, 0, fail, mlength)
#define sr(side, i) eng_sr(&e, side, i)
#define ct_val(ct) eng_ct(e.dom, ct)

/* ---- puts and appends ---------------------------------------------------- */

/* Put len bytes of src[which] from side 0 to side 1's PT; returns the MD. */
static inline uint64_t put_x(int which, size_t len, uint64_t bits,
			     uint64_t hdr_data, uint64_t remote_offset)
{
	uint64_t md = eng_md(&e, 0, src[which], len, 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.hdr_data = hdr_data;
	x.remote_offset = remote_offset;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	return md;
}

static inline uint64_t put(int which, size_t len, uint64_t bits,
			   uint64_t hdr_data)
{
	return put_x(which, len, bits, hdr_data, 0);
}

static inline uint64_t append(enum p4e_list list, void *buf, size_t len,
			      unsigned opt, uint64_t bits, void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, opt, bits, 0);

	return eng_append(&e, 1, &d, list, user_ptr);
}

/* An overflow entry (OP_PUT | opt) on side 1 over obuf, LINK consumed. */
static inline uint64_t oflow(unsigned opt, size_t len, uint64_t bits)
{
	uint64_t me = append(P4E_OVERFLOW_LIST, obuf, len, P4E_ME_OP_PUT | opt,
			     bits, OFL);
	struct p4e_event ev = ev_is(1, P4E_EVENT_LINK);

	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.user_ptr, OFL);
	return me;
}

/* A catch-all persistent overflow entry, not locally managed. */
static inline uint64_t oflow_all(size_t len)
{
	struct p4e_me_desc d = eng_me_desc(obuf, len, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, UINT64_MAX);
	uint64_t me = eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);

	ev_is(1, P4E_EVENT_LINK);
	return me;
}

/* A persistent, locally managed catch-all overflow entry over obuf (opt
 * added). */
static inline uint64_t oflow_ml(unsigned opt)
{
	struct p4e_me_desc d = eng_me_desc(obuf, sizeof(obuf), P4E_ME_OP_PUT |
					   P4E_ME_MANAGE_LOCAL | opt, 0,
					   UINT64_MAX);
	uint64_t me = eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);

	ev_is(1, P4E_EVENT_LINK);
	return me;
}

/* Land one eager put of len bytes (mlength of them kept) on the overflow
 * list and drain its events. */
static inline void land_m(int which, size_t len, uint64_t bits,
			  uint64_t hdr_data, uint64_t mlength)
{
	struct p4e_event ev;

	put(which, len, bits, hdr_data);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.mlength, mlength);
	ini_done(P4E_NI_OK, mlength);
}

static inline void land(int which, size_t len, uint64_t bits,
			uint64_t hdr_data)
{
	land_m(which, len, bits, hdr_data, len);
}

/* A rendezvous put whose header alone waits (RDZV_HDR_ONLY overflow). */
static inline void land_rdzv(int which, size_t len, uint64_t bits,
			     uint64_t hdr_data)
{
	put(which, len, bits, hdr_data);
	eng_progress(&e);
	eng_no_event(&e, 1);
	eng_no_event(&e, 0);
}

/* ---- events and counters ------------------------------------------------- */

static inline uint64_t ct_alloc(void)
{
	uint64_t ct;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	return ct;
}

/* Look for an event of type among the next n on side; the others must be
 * in allowed (a bit per type). */
static inline struct p4e_event ev_among(int side, int type, int n,
					unsigned allowed)
{
	struct p4e_event ev, found = { .type = P4E_EVENT_KIND_MAX };
	int i;

	for (i = 0; i < n; i++) {
		ev = eng_event(&e, side);
		if (ev.type == type && found.type == P4E_EVENT_KIND_MAX)
			found = ev;
		else
			cr_assert(allowed & (1u << ev.type),
				  "side %d: unexpected event %d", side,
				  ev.type);
	}
	cr_assert_eq(found.type, type, "no event %d among %d", type, n);
	return found;
}

/* ---- searches and claims ------------------------------------------------- */

static inline int search(uint64_t bits, uint64_t ignore, uint32_t id,
			 enum p4e_search_op op)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, bits, ignore);

	d.match_id = id;
	return p4e_me_search(e.ni[1], e.pt[1], &d, op, SRCH, 0x77);
}

static inline void expect_no_match(void)
{
	struct p4e_event ev = ev_is(1, P4E_EVENT_SEARCH);

	cr_expect_eq(ev.ni_fail_type, P4E_NI_NO_MATCH);
	cr_expect_eq(ev.user_ptr, SRCH);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	cr_expect_eq(ev.uh_handle, 0);
}

static inline void expect_clean_registers(void)
{
	int64_t v;
	int i;

	/* the link counts at the end count links, not trouble */
	for (i = 0; i < P4E_SR_LINKS_LOCAL; i++) {
		cr_assert_eq(p4e_ni_status(e.ni[1], i, &v), 0);
		cr_expect_eq(v, 0, "status register %d", i);
	}
}

/* Claim the first header matching bits; returns its handle. */
static inline uint64_t claim(uint64_t bits)
{
	struct p4e_event ev;

	cr_assert_eq(search(bits, 0, P4E_ID_ANY, P4E_SEARCH_CLAIM), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_assert_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_assert_neq(ev.uh_handle, 0);
	cr_expect_eq(ev.match_bits, bits);
	cr_expect_eq(ev.user_ptr, SRCH);
	return ev.uh_handle;
}

static inline int deliver(uint64_t uh, void *buf, size_t len)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, 0, 0, 0);

	return p4e_uh_deliver(e.ni[1], uh, &d, PRI, 0x99);
}

#endif /* P4E_LIST_TEST_H */
