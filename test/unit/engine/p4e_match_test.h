/*
 * p4e_match_test.h - what the matching-structure tests (test_match.c,
 * test_match_model.c) share: a priority list and an unexpected-header
 * index with a pool of test entries and headers, set up and torn down per
 * test; helpers to append, remove and look up; plain linear references for
 * match and find; an accept callback that rejects chosen entries; and
 * Open MPI's tag layout.
 *
 * One test binary includes it once: helpers are static inline, the tables
 * are the binary's own.
 */
#ifndef P4E_MATCH_TEST_H
#define P4E_MATCH_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#include "p4e_match.h"

/* Open MPI's tag layout, as far as matching cares. */
#define OMPI_SYNC	0x100000000ULL		/* ignored on every receive */
#define OMPI_SRC_SHIFT	33
#define OMPI_SRC_MASK	(0x7fffULL << OMPI_SRC_SHIFT)
#define OMPI_TAG_MASK	0xffffffffULL

#define NENTS		(65536 + 1024)

struct tentry {
	struct p4e_mentry m;
	unsigned idx;
	uint64_t tseq;		/* the test's own append counter */
	bool linked;
};

struct theader {
	struct p4e_uentry u;
	unsigned idx;
	uint64_t tseq;
	bool linked;
};

static struct p4e_mlist mlist;
static struct p4e_uindex uindex;
static struct tentry *ents;
static struct theader *hdrs;
static uint64_t tseq;

static inline void match_setup(void)
{
	unsigned i;

	ents = calloc(NENTS, sizeof(*ents));
	hdrs = calloc(NENTS, sizeof(*hdrs));
	cr_assert(ents && hdrs);
	for (i = 0; i < NENTS; i++) {
		ents[i].idx = i;
		p4e_mentry_init(&ents[i].m);
		hdrs[i].idx = i;
		p4e_uentry_init(&hdrs[i].u);
	}
	cr_assert_eq(p4e_mlist_init(&mlist, true), 0);
	/* the tables, however few entries a test appends (the model tests
	 * walk short lists, as the engine does) */
	mlist.walk_max = 0;
	cr_assert_eq(p4e_uindex_init(&uindex, true), 0);
	tseq = 0;
}

static inline void match_teardown(void)
{
	/* entries may still be linked: fini must neither touch nor leak */
	p4e_mlist_fini(&mlist);
	p4e_uindex_fini(&uindex);
	free(ents);
	free(hdrs);
}

/* ---- helpers ---------------------------------------------------------- */

static inline uint64_t rng_next(uint64_t *state)
{
	/* xorshift64*: fixed seeds give the same run everywhere */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static inline struct tentry *ent_append(unsigned i, uint64_t bits,
					uint64_t ignore, uint32_t id)
{
	struct tentry *ent = &ents[i];

	cr_assert(!ent->linked, "entry %u appended twice", i);
	ent->m.match_bits = bits;
	ent->m.ignore_bits = ignore;
	ent->m.match_id = id;
	ent->tseq = tseq++;
	ent->linked = true;
	p4e_mlist_append(&mlist, &ent->m);
	cr_assert(p4e_mentry_linked(&ent->m));
	return ent;
}

static inline void ent_remove(struct tentry *ent)
{
	cr_assert(ent->linked);
	p4e_mlist_remove(&mlist, &ent->m);
	ent->linked = false;
	cr_assert(!p4e_mentry_linked(&ent->m));
}

static inline struct tentry *ent_of(struct p4e_mentry *m)
{
	return m ? container_of(m, struct tentry, m) : NULL;
}

static inline struct tentry *mmatch(uint64_t bits, uint32_t source)
{
	return ent_of(p4e_mlist_match(&mlist, bits, source, NULL, NULL));
}

static inline struct theader *hdr_insert(unsigned i, uint64_t bits,
					  uint32_t source)
{
	struct theader *hdr = &hdrs[i];

	cr_assert(!hdr->linked, "header %u inserted twice", i);
	hdr->tseq = tseq++;
	hdr->linked = true;
	p4e_uindex_insert(&uindex, &hdr->u, bits, source);
	cr_assert(p4e_uentry_linked(&hdr->u));
	return hdr;
}

static inline void hdr_remove(struct theader *hdr)
{
	cr_assert(hdr->linked);
	p4e_uindex_remove(&uindex, &hdr->u);
	hdr->linked = false;
	cr_assert(!p4e_uentry_linked(&hdr->u));
}

static inline struct theader *hdr_of(struct p4e_uentry *u)
{
	return u ? container_of(u, struct theader, u) : NULL;
}

static inline struct theader *ufind(uint64_t bits, uint64_t ignore, uint32_t id)
{
	return hdr_of(p4e_uindex_find(&uindex, bits, ignore, id, NULL, NULL));
}

/* Random accept(): rejects about one entry in `modulo` (never if 0). */
struct accept_ctx {
	uint64_t salt;
	unsigned modulo;
	unsigned calls;
};

static inline bool accept_verdict(unsigned idx, const struct accept_ctx *ctx)
{
	uint64_t mix = (idx + 1) * 0x9e3779b97f4a7c15ULL ^ ctx->salt;

	mix ^= mix >> 29;
	return ctx->modulo == 0 || (mix * 0xbf58476d1ce4e5b9ULL >> 40) %
		ctx->modulo != 0;
}

static inline bool accept_ent(struct p4e_mentry *m, void *arg)
{
	struct accept_ctx *ctx = arg;

	ctx->calls++;
	return accept_verdict(ent_of(m)->idx, ctx);
}

static inline bool accept_hdr(struct p4e_uentry *u, void *arg)
{
	struct accept_ctx *ctx = arg;

	ctx->calls++;
	return accept_verdict(hdr_of(u)->idx, ctx);
}

/* The reference: a plain walk in the test's own append order. */
static inline struct tentry *ref_match(unsigned n, uint64_t bits,
				       uint32_t source,
				       const struct accept_ctx *ctx)
{
	struct tentry *best = NULL;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct tentry *ent = &ents[i];

		if (!ent->linked || (best && ent->tseq > best->tseq))
			continue;
		if (mlist.matching) {
			if (((bits ^ ent->m.match_bits) &
			     ~ent->m.ignore_bits) != 0)
				continue;
			if (ent->m.match_id != P4E_ID_ANY &&
			    ent->m.match_id != source)
				continue;
		}
		if (ctx && !accept_verdict(ent->idx, ctx))
			continue;
		best = ent;
	}
	return best;
}

static inline struct theader *ref_find(unsigned n, uint64_t bits,
				       uint64_t ignore, uint32_t id,
				       const struct accept_ctx *ctx)
{
	struct theader *best = NULL;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct theader *hdr = &hdrs[i];

		if (!hdr->linked || (best && hdr->tseq > best->tseq))
			continue;
		if (uindex.matching) {
			if (((hdr->u.bits ^ bits) & ~ignore) != 0)
				continue;
			if (id != P4E_ID_ANY && hdr->u.source != id)
				continue;
		}
		if (ctx && !accept_verdict(hdr->idx, ctx))
			continue;
		best = hdr;
	}
	return best;
}

/* Fill every mask table with one entry so the next new mask goes slow. */
static inline unsigned fill_tables(unsigned first)
{
	unsigned i;

	for (i = 0; i < P4E_MLIST_MAX_MASKS; i++)
		ent_append(first + i, 0xdead0000, 0xabc00000000ULL + i, 7);
	return first + i;
}

#endif /* P4E_MATCH_TEST_H */
