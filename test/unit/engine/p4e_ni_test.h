/*
 * p4e_ni_test.h - what the portal table and NI tests (test_eng_ni.c,
 * test_eng_ni_limits.c) share: the pair of NIs, reopened with other
 * options or limits when a test needs them, source and target buffers,
 * and helpers for puts and appends to any PT of side 1.
 *
 * One test binary includes it once: helpers are static inline, the
 * fixture's state is the binary's own.
 */
#ifndef P4E_NI_TEST_H
#define P4E_NI_TEST_H

#include "p4e_test.h"
#include "p4e_priv.h"

static struct eng e;

#define PRI ((void *)0x9a1)
#define PRI2 ((void *)0x9a2)
#define OFL ((void *)0x0f1)

static uint8_t src[16384];
static uint8_t obuf[16384], pbuf[16384];

static inline void ni_setup(void)
{
	size_t i;

	eng_open(&e);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(obuf, 0, sizeof(obuf));
	memset(pbuf, 0, sizeof(pbuf));
}

static inline void ni_teardown(void)
{
	eng_close(&e);
}

/* ---- helpers ------------------------------------------------------------ */

/* Like eng_open_opts, with desired limits for both NIs. */
static inline void reopen(unsigned ni_options,
			  const struct p4e_ni_limits *desired)
{
	struct p4e_ni_attr attr;
	char addr[64];
	size_t len;
	int i;

	eng_close(&e);
	memset(&e, 0, sizeof(e));
	cr_assert_eq(p4e_dom_create(NULL, &e.dom), 0);
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = ni_options;
		attr.transport = &p4t_loop_ops;
		attr.eager_size = 4096;
		attr.uid = 1000 + i;
		if (desired)
			attr.desired = *desired;
		cr_assert_eq(p4e_ni_create(e.dom, &attr, &e.ni[i]), 0);
		len = sizeof(addr);
		cr_assert_eq(p4e_ni_getname(e.ni[i], addr, &len), 0);
		cr_assert_eq(p4e_peer_lookup(e.dom, addr, len, &e.id[i]), 0);
		cr_assert_eq(p4e_eq_ring_create(256, &e.eq[i]), 0);
		cr_assert_eq(p4e_pt_alloc(e.ni[i], 0, e.eq[i], P4E_PT_ANY,
					  &e.pt[i]), 0);
	}
}

#define ev_is(side, type) eng_ev_is(&e, side, type)
#define ini_done(fail, mlength) eng_ini_done(&e, 0, fail, mlength)
#define ack_next() eng_ack_next(&e, 0)
#define sr(side, i) eng_sr(&e, side, i)

/* A put of len bytes from side 0 to side 1's PT pt (target: as named). */
static inline void put_to(uint32_t target, uint32_t pt, size_t len,
			  uint64_t bits, uint64_t hdr_data)
{
	uint64_t md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.target = target;
	x.pt_index = pt;
	x.hdr_data = hdr_data;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
}

static inline void put(size_t len, uint64_t bits, uint64_t hdr_data)
{
	put_to(e.id[1], e.pt[1], len, bits, hdr_data);
}

static inline int append_pt(uint32_t pt, enum p4e_list list, unsigned opt,
			    uint64_t bits, uint64_t *me_p)
{
	struct p4e_me_desc d = eng_me_desc(list == P4E_OVERFLOW_LIST ? obuf :
					   pbuf, 4096, opt, bits, 0);

	return p4e_me_append(e.ni[1], pt, &d, list,
			     list == P4E_OVERFLOW_LIST ? OFL : PRI, 0, me_p);
}

static inline uint64_t append(enum p4e_list list, unsigned opt, uint64_t bits)
{
	uint64_t me;

	cr_assert_eq(append_pt(e.pt[1], list, opt, bits, &me), 0);
	return me;
}

#endif /* P4E_NI_TEST_H */
