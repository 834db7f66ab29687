/*
 * p4e_test.h - fixture for engine tests: one domain with two NIs ("a" and
 * "b") on the loop transport, a ring EQ each, and helpers to bind MDs,
 * append entries, progress until quiet and read events. Everything is
 * deterministic: nothing moves unless a test calls progress.
 */
#ifndef P4E_TEST_H
#define P4E_TEST_H

#include <criterion/criterion.h>
#include <string.h>

#include "p4e.h"
#include "p4t_loop.h"

struct eng {
	struct p4e_dom *dom;
	struct p4e_ni *ni[2];
	struct p4e_eq *eq[2];
	uint32_t id[2];		/* peer id of ni[i] in the domain */
	uint32_t pt[2];		/* a PT on each */
};

static inline void eng_open_opts(struct eng *e, unsigned ni_options,
				 unsigned pt_options, size_t eager)
{
	struct p4e_ni_attr attr;
	char addr[64];
	size_t len;
	int i;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(p4e_dom_create(NULL, &e->dom), 0);
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = ni_options;
		attr.transport = &p4t_loop_ops;
		attr.eager_size = eager;
		attr.uid = 1000 + i;
		cr_assert_eq(p4e_ni_create(e->dom, &attr, &e->ni[i]), 0);
		len = sizeof(addr);
		cr_assert_eq(p4e_ni_getname(e->ni[i], addr, &len), 0);
		cr_assert_eq(p4e_peer_lookup(e->dom, addr, len, &e->id[i]), 0);
		cr_assert_eq(p4e_eq_ring_create(256, &e->eq[i]), 0);
		cr_assert_eq(p4e_pt_alloc(e->ni[i], pt_options, e->eq[i],
					  P4E_PT_ANY, &e->pt[i]), 0);
	}
}

static inline void eng_open(struct eng *e)
{
	eng_open_opts(e, P4E_NI_MATCHING | P4E_NI_PHYSICAL, 0, 4096);
}

static inline void eng_close(struct eng *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (e->ni[i])
			cr_expect_eq(p4e_ni_destroy(e->ni[i]), 0);
		p4e_eq_ring_destroy(e->eq[i]);
	}
	cr_expect_eq(p4e_dom_destroy(e->dom), 0);
}

/* Progress both NIs until nothing happens for a few rounds. */
static inline void eng_progress(struct eng *e)
{
	int idle = 0, rounds = 0;

	while (idle < 3 && rounds++ < 100000) {
		int done = p4e_dom_progress(e->dom, 64);

		idle = done ? 0 : idle + 1;
	}
}

static inline uint64_t eng_md(struct eng *e, int side, void *buf, size_t len,
			      unsigned options, uint64_t ct)
{
	struct p4e_md_desc d = {
		.start = buf, .length = len, .options = options,
		.eq = e->eq[side], .ct = ct,
	};
	uint64_t md;

	cr_assert_eq(p4e_md_bind(e->ni[side], &d, &md), 0);
	return md;
}

static inline struct p4e_me_desc eng_me_desc(void *buf, size_t len,
					     unsigned options, uint64_t bits,
					     uint64_t ignore)
{
	struct p4e_me_desc d = {
		.start = buf, .length = len, .ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY, .options = options,
		.match_id = P4E_ID_ANY, .match_bits = bits,
		.ignore_bits = ignore,
	};

	return d;
}

static inline uint64_t eng_append(struct eng *e, int side,
				  const struct p4e_me_desc *d,
				  enum p4e_list list, void *user_ptr)
{
	uint64_t me;

	cr_assert_eq(p4e_me_append(e->ni[side], e->pt[side], d, list, user_ptr,
				   0, &me), 0);
	return me;
}

/* A put from side to the other side's PT. */
static inline struct p4e_xfer eng_xfer(struct eng *e, int side, uint64_t md,
				       size_t len, uint64_t bits)
{
	struct p4e_xfer x = {
		.md = md, .length = len, .ack_req = P4E_ACK_REQ,
		.target = e->id[!side], .pt_index = e->pt[!side],
		.match_bits = bits, .get_md = P4E_HANDLE_NONE,
	};

	return x;
}

/* Next event on side's EQ; fails the test if there is none. */
static inline struct p4e_event eng_event(struct eng *e, int side)
{
	struct p4e_event ev;
	int ret = p4e_eq_ring_get(e->eq[side], &ev);

	cr_assert(ret == 0 || ret == P4E_EQ_DROPPED,
		  "expected an event on side %d, got %d", side, ret);
	return ev;
}

static inline void eng_no_event(struct eng *e, int side)
{
	struct p4e_event ev;

	cr_assert_eq(p4e_eq_ring_get(e->eq[side], &ev), -FI_EAGAIN,
		     "unexpected event type %d on side %d", ev.type, side);
}

/* Pop events until one of type arrives (others must be in skip_mask). */
static inline struct p4e_event eng_event_type(struct eng *e, int side,
					      int type)
{
	struct p4e_event ev;

	for (;;) {
		ev = eng_event(e, side);
		if (ev.type == type)
			return ev;
		cr_assert(ev.type == P4E_EVENT_LINK,
			  "expected event %d on side %d, got %d", type, side,
			  ev.type);
	}
}

#endif /* P4E_TEST_H */
