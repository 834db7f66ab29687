/*
 * test_match.c - the matching structures (p4e_match.c): the match rule,
 * Portals list order across mask tables and the slow list, non-matching
 * lists, removal and re-append, the unexpected-header index, randomized
 * comparisons against a plain linear list, and a probe count showing that
 * Open MPI's receive pattern costs the same at 64k entries as at a few.
 *
 * The engine paths that use these structures (ME append, target matching)
 * are tested with the engine, not here.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "p4e_match.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

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

static void match_setup(void)
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
	cr_assert_eq(p4e_uindex_init(&uindex, true), 0);
	tseq = 0;
}

static void match_teardown(void)
{
	/* entries may still be linked: fini must neither touch nor leak */
	p4e_mlist_fini(&mlist);
	p4e_uindex_fini(&uindex);
	free(ents);
	free(hdrs);
}

TestSuite(match, .init = match_setup, .fini = match_teardown,
	  .timeout = 120);

/* ---- helpers ---------------------------------------------------------- */

static uint64_t rng_next(uint64_t *state)
{
	/* xorshift64*: fixed seeds give the same run everywhere */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static struct tentry *ent_append(unsigned i, uint64_t bits, uint64_t ignore,
				 uint32_t id)
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

static void ent_remove(struct tentry *ent)
{
	cr_assert(ent->linked);
	p4e_mlist_remove(&mlist, &ent->m);
	ent->linked = false;
	cr_assert(!p4e_mentry_linked(&ent->m));
}

static struct tentry *ent_of(struct p4e_mentry *m)
{
	return m ? container_of(m, struct tentry, m) : NULL;
}

static struct tentry *mmatch(uint64_t bits, uint32_t source)
{
	return ent_of(p4e_mlist_match(&mlist, bits, source, NULL, NULL));
}

static struct theader *hdr_insert(unsigned i, uint64_t bits, uint32_t source)
{
	struct theader *hdr = &hdrs[i];

	cr_assert(!hdr->linked, "header %u inserted twice", i);
	hdr->tseq = tseq++;
	hdr->linked = true;
	p4e_uindex_insert(&uindex, &hdr->u, bits, source);
	cr_assert(p4e_uentry_linked(&hdr->u));
	return hdr;
}

static void hdr_remove(struct theader *hdr)
{
	cr_assert(hdr->linked);
	p4e_uindex_remove(&uindex, &hdr->u);
	hdr->linked = false;
	cr_assert(!p4e_uentry_linked(&hdr->u));
}

static struct theader *hdr_of(struct p4e_uentry *u)
{
	return u ? container_of(u, struct theader, u) : NULL;
}

static struct theader *ufind(uint64_t bits, uint64_t ignore, uint32_t id)
{
	return hdr_of(p4e_uindex_find(&uindex, bits, ignore, id, NULL, NULL));
}

/* Random accept(): rejects about one entry in `modulo` (never if 0). */
struct accept_ctx {
	uint64_t salt;
	unsigned modulo;
	unsigned calls;
};

static bool accept_verdict(unsigned idx, const struct accept_ctx *ctx)
{
	uint64_t mix = (idx + 1) * 0x9e3779b97f4a7c15ULL ^ ctx->salt;

	mix ^= mix >> 29;
	return ctx->modulo == 0 || (mix * 0xbf58476d1ce4e5b9ULL >> 40) %
		ctx->modulo != 0;
}

static bool accept_ent(struct p4e_mentry *m, void *arg)
{
	struct accept_ctx *ctx = arg;

	ctx->calls++;
	return accept_verdict(ent_of(m)->idx, ctx);
}

static bool accept_hdr(struct p4e_uentry *u, void *arg)
{
	struct accept_ctx *ctx = arg;

	ctx->calls++;
	return accept_verdict(hdr_of(u)->idx, ctx);
}

/* The reference: a plain walk in the test's own append order. */
static struct tentry *ref_match(unsigned n, uint64_t bits, uint32_t source,
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

static struct theader *ref_find(unsigned n, uint64_t bits, uint64_t ignore,
				uint32_t id, const struct accept_ctx *ctx)
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
static unsigned fill_tables(unsigned first)
{
	unsigned i;

	for (i = 0; i < P4E_MLIST_MAX_MASKS; i++)
		ent_append(first + i, 0xdead0000, 0xabc00000000ULL + i, 7);
	return first + i;
}

/* ---- the rule (pitfall 1) -------------------------------------------- */

Test(match, rule_ignored_bits_set_in_entry)
{
	/* (in & ~ignore) == match would reject: 0xf0 != 0xff */
	cr_assert(p4e_match_bits_ok(0xf0, 0xff, 0x0f));
	cr_assert(!p4e_match_bits_ok(0x1f0, 0xff, 0x0f));

	ent_append(0, 0xff, 0x0f, 5);
	cr_assert_eq(mmatch(0xf0, 5), &ents[0]);
	cr_assert_eq(mmatch(0xf7, 5), &ents[0]);
	cr_assert_null(mmatch(0xe0, 5), "unignored bit differs");
	cr_assert_null(mmatch(0xf0, 6), "other source");
}

Test(match, rule_ignored_bits_set_in_slow_entry)
{
	unsigned next = fill_tables(10);

	ent_append(next, 0xff, 0x0f, 5);	/* no table left: slow list */
	cr_assert_eq(mmatch(0xf0, 5), &ents[next]);
	cr_assert_null(mmatch(0xe0, 5));
	cr_assert_null(mmatch(0xf0, 4));
}

Test(match, rule_source)
{
	ent_append(0, 0x10, 0, 3);
	ent_append(1, 0x10, 0, P4E_ID_ANY);
	cr_assert_eq(mmatch(0x10, 3), &ents[0]);
	cr_assert_eq(mmatch(0x10, 4), &ents[1], "ANY takes any source");
	ent_remove(&ents[1]);
	cr_assert_null(mmatch(0x10, 4));
	cr_assert_null(mmatch(0x10, P4E_ID_ANY),
		       "an unknown source matches only ANY entries");
}

Test(match, uindex_rule_ignored_bits_set_in_find)
{
	unsigned i;

	hdr_insert(0, 0xf0, 5);
	/* indexed path: the first find with this mask builds its index */
	cr_assert_eq(ufind(0xff, 0x0f, 5), &hdrs[0]);
	cr_assert_eq(ufind(0xff, 0x0f, P4E_ID_ANY), &hdrs[0]);
	cr_assert_null(ufind(0xef, 0x0f, 5));
	cr_assert_null(ufind(0xff, 0x0f, 6));
	cr_assert_eq(uindex.nmasks, 1);

	/* walk path: every slot busy with a recently used mask */
	for (i = 1; i < P4E_UINDEX_MAX_MASKS; i++)
		cr_assert_null(ufind(0x1000 + i, i << 20, 5));
	cr_assert_eq(uindex.nmasks, P4E_UINDEX_MAX_MASKS);
	cr_assert_eq(ufind(0xfe, 0x0e, 5), &hdrs[0]);
	cr_assert_null(ufind(0xee, 0x0e, 5));
	cr_assert_eq(uindex.nmasks, P4E_UINDEX_MAX_MASKS);
	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++)
		cr_assert_neq(uindex.masks[i].mask, 0x0e, "not indexed yet");
}

/* ---- order across tables --------------------------------------------- */

#define X_BITS	0x1234ULL

/* A exact (mask 0, source 1), B OMPI's mask, C ANY source, D everything. */
static void abcd_append(const unsigned perm[4])
{
	static const struct {
		uint64_t bits, ignore;
		uint32_t id;
	} spec[4] = {
		{ X_BITS, 0, 1 },
		{ X_BITS | OMPI_SYNC, OMPI_SYNC, 1 },
		{ X_BITS, 0, P4E_ID_ANY },
		{ 0x5555, UINT64_MAX, P4E_ID_ANY },
	};
	unsigned i;

	for (i = 0; i < 4; i++)
		ent_append(perm[i], spec[perm[i]].bits, spec[perm[i]].ignore,
			   spec[perm[i]].id);
}

static void abcd_check(const char *when)
{
	static const uint64_t bits[] = {
		X_BITS, X_BITS | OMPI_SYNC, 0x1235, 0, UINT64_MAX,
		X_BITS | (1ULL << 40),
	};
	static const uint32_t srcs[] = { 1, 2, P4E_ID_ANY };
	unsigned b, s;

	for (b = 0; b < P4U_ARRAY_SIZE(bits); b++) {
		for (s = 0; s < P4U_ARRAY_SIZE(srcs); s++) {
			struct tentry *want = ref_match(4, bits[b], srcs[s],
							NULL);

			cr_assert_eq(mmatch(bits[b], srcs[s]), want,
				     "%s: bits %#llx source %u: want %d",
				     when, (unsigned long long)bits[b],
				     srcs[s], want ? (int)want->idx : -1);
		}
	}
}

Test(match, order_across_tables_all_permutations)
{
	unsigned perm[4], a, b, c, d, r;

	for (a = 0; a < 4; a++)
	for (b = 0; b < 4; b++)
	for (c = 0; c < 4; c++)
	for (d = 0; d < 4; d++) {
		if (a == b || a == c || a == d || b == c || b == d || c == d)
			continue;
		perm[0] = a; perm[1] = b; perm[2] = c; perm[3] = d;
		abcd_append(perm);
		abcd_check("all linked");
		/* take them out in append order: each removal changes the
		 * winner for some inputs */
		for (r = 0; r < 4; r++) {
			ent_remove(&ents[perm[r]]);
			abcd_check("after a removal");
		}
		cr_assert_eq(mlist.count, 0);
	}
}

Test(match, order_across_tables_explicit)
{
	unsigned perm[4] = { 0, 1, 2, 3 };

	abcd_append(perm);
	cr_assert_eq(mmatch(X_BITS, 1), &ents[0]);
	cr_assert_eq(mmatch(X_BITS | OMPI_SYNC, 1), &ents[1]);
	cr_assert_eq(mmatch(X_BITS, 2), &ents[2]);
	cr_assert_eq(mmatch(X_BITS | OMPI_SYNC, 2), &ents[3]);
	cr_assert_eq(mmatch(0x9999, 7), &ents[3]);
	/* D first: it wins everything */
	ent_remove(&ents[3]);
	ent_append(3, 0, UINT64_MAX, P4E_ID_ANY);
	ent_remove(&ents[0]);
	ent_append(0, X_BITS, 0, 1);
	cr_assert_eq(mmatch(X_BITS | OMPI_SYNC, 1), &ents[1]);
	cr_assert_eq(mmatch(X_BITS, 1), &ents[1], "B (seq 1) before A");
	cr_assert_eq(mmatch(X_BITS, 2), &ents[2]);
	cr_assert_eq(mmatch(0x9999, 7), &ents[3]);
}

Test(match, slow_list_order_against_tables)
{
	unsigned next;

	ent_append(0, X_BITS, 0x0f, 1);		/* a table */
	next = fill_tables(1);
	/* masks beyond the tables: the slow list, interleaved in seq */
	ent_append(next, X_BITS, 0xf0, 1);
	ent_append(next + 1, X_BITS, 0x0f, 1);	/* table again, later */
	ent_append(next + 2, X_BITS, 0xf00, P4E_ID_ANY);

	cr_assert_eq(mmatch(X_BITS, 1), &ents[0]);
	ent_remove(&ents[0]);
	cr_assert_eq(mmatch(X_BITS, 1), &ents[next], "slow entry older");
	cr_assert_eq(mmatch(X_BITS ^ 0x3, 1), &ents[next + 1]);
	cr_assert_eq(mmatch(X_BITS ^ 0x300, 9), &ents[next + 2]);
	ent_remove(&ents[next]);
	cr_assert_eq(mmatch(X_BITS, 1), &ents[next + 1]);
	ent_remove(&ents[next + 1]);
	cr_assert_eq(mmatch(X_BITS, 1), &ents[next + 2]);
}

/* A mask whose table emptied is taken over by a new mask once every
 * slot is in use, instead of sending the new mask to the slow list. */
Test(match, empty_table_taken_over)
{
	uint64_t before;
	unsigned i, next = fill_tables(0);

	for (i = 0; i < P4E_MLIST_MAX_MASKS; i++)
		ent_remove(&ents[i]);
	for (i = 0; i < 1000; i++)
		ent_append(next + i, i, 0x77ULL << 40, 2);
	cr_assert(p4u_list_empty(&mlist.slow), "new mask went slow");
	for (i = 1000; i-- > 0;) {
		before = mlist.examined;
		cr_assert_eq(mmatch(i | (0x11ULL << 40), 2), &ents[next + i]);
		cr_assert_leq(mlist.examined - before, 8);
		ent_remove(&ents[next + i]);
	}
}

/*
 * Equal keys come back in append order while their table regrows many
 * times under them (p4e_match.c keeps its own load factor by moving nodes
 * into bigger tables; order must survive every move).
 */
Test(match, fifo_equal_keys_across_regrowth)
{
	unsigned i, n = 0, same[300], nsame = 0;

	for (i = 0; i < 3300; i++) {
		if (i % 11 == 0 && nsame < 300) {
			same[nsame++] = i;
			ent_append(i, 0x5a5a, OMPI_SYNC, 3);
		} else {
			ent_append(i, 0x100000 + i, OMPI_SYNC, 3);
		}
	}
	for (n = 0; n < nsame; n++) {
		cr_assert_eq(mmatch(0x5a5a | (n & 1 ? OMPI_SYNC : 0), 3),
			     &ents[same[n]], "equal key %u out of order", n);
		ent_remove(&ents[same[n]]);
	}
	cr_assert_null(mmatch(0x5a5a, 3));
	cr_assert_eq(mmatch(0x100000 + 1, 3), &ents[1]);
}

Test(match, uindex_fifo_equal_keys_across_regrowth)
{
	unsigned i, n, same[300], nsame = 0;

	hdr_insert(0, 0x1, 3);
	cr_assert_eq(ufind(0x1, OMPI_SYNC, 3), &hdrs[0]);	/* builds */
	cr_assert_eq(ufind(0x1, OMPI_SYNC, P4E_ID_ANY), &hdrs[0]);
	for (i = 1; i < 3300; i++) {
		if (i % 11 == 0 && nsame < 300) {
			same[nsame++] = i;
			hdr_insert(i, 0x5a5a | (i & 2 ? OMPI_SYNC : 0), 3);
		} else {
			hdr_insert(i, 0x100000 + i, 3);
		}
	}
	for (n = 0; n < nsame; n++) {
		cr_assert_eq(ufind(0x5a5a, OMPI_SYNC, n & 1 ? 3 : P4E_ID_ANY),
			     &hdrs[same[n]], "equal key %u out of order", n);
		hdr_remove(&hdrs[same[n]]);
	}
	cr_assert_null(ufind(0x5a5a, OMPI_SYNC, 3));
}

/* ---- removal, re-append, non-matching lists, fini -------------------- */

Test(match, remove_head_middle_tail_and_reappend)
{
	struct tentry *first = ent_append(0, 0x42, 0, 1);
	struct tentry *middle = ent_append(1, 0x42, 0, 1);
	struct tentry *last = ent_append(2, 0x42, 0, 1);
	uint64_t last_seq = last->m.seq;

	cr_assert(first->m.seq < middle->m.seq &&
		  middle->m.seq < last->m.seq);
	cr_assert_eq(mmatch(0x42, 1), first);
	ent_remove(middle);
	cr_assert_eq(mmatch(0x42, 1), first);
	ent_remove(first);			/* the head */
	cr_assert_eq(mmatch(0x42, 1), last);
	ent_append(0, 0x42, 0, 1);		/* first again: the tail */
	cr_assert_gt(first->m.seq, last_seq, "re-append kept the old seq");
	cr_assert_eq(mmatch(0x42, 1), last);
	ent_remove(last);			/* the head again */
	cr_assert_eq(mmatch(0x42, 1), first);
	ent_append(1, 0x42, 0, P4E_ID_ANY);
	ent_remove(first);			/* the head, not the tail */
	cr_assert_eq(mmatch(0x42, 1), middle);
	ent_append(0, 0x42, 0, 1);
	ent_remove(&ents[0]);			/* the tail */
	cr_assert_eq(mmatch(0x42, 1), middle);
	ent_remove(middle);
	cr_assert_null(mmatch(0x42, 1));
	cr_assert_eq(mlist.count, 0);
}

Test(match, uindex_remove_head_middle_tail)
{
	struct theader *first = hdr_insert(0, 0x42, 1);
	struct theader *middle = hdr_insert(1, 0x42, 2);
	struct theader *last = hdr_insert(2, 0x42, 1);

	cr_assert_eq(ufind(0x42, 0, P4E_ID_ANY), first);
	cr_assert_eq(ufind(0x42, 0, 2), middle);
	hdr_remove(middle);
	cr_assert_null(ufind(0x42, 0, 2));
	cr_assert_eq(ufind(0x42, 0, P4E_ID_ANY), first);
	hdr_remove(first);
	cr_assert_eq(ufind(0x42, 0, 1), last);
	hdr_insert(0, 0x42, 1);
	cr_assert_eq(ufind(0x42, 0, 1), last, "re-inserted header is newest");
	cr_assert_gt(first->u.seq, last->u.seq);
	hdr_remove(last);
	cr_assert_eq(ufind(0x42, 0, 1), first);
	cr_assert_eq(ufind(0, UINT64_MAX, P4E_ID_ANY), first);
	hdr_remove(first);
	cr_assert_null(ufind(0, UINT64_MAX, P4E_ID_ANY));
	cr_assert_eq(uindex.count, 0);
}

Test(match, uindex_order_across_masks)
{
	struct theader *h1 = hdr_insert(0, X_BITS | OMPI_SYNC, 1);
	struct theader *h2 = hdr_insert(1, X_BITS, 2);
	struct theader *h3 = hdr_insert(2, X_BITS, 1);

	cr_assert_eq(ufind(X_BITS, OMPI_SYNC, 1), h1);
	cr_assert_eq(ufind(X_BITS, OMPI_SYNC, P4E_ID_ANY), h1);
	cr_assert_eq(ufind(X_BITS, 0, 1), h3);
	cr_assert_eq(ufind(X_BITS, 0, P4E_ID_ANY), h2);
	cr_assert_eq(ufind(X_BITS, OMPI_SYNC, 2), h2);
	/* inserted after the indexes exist: still in arrival order */
	struct theader *h4 = hdr_insert(3, X_BITS | OMPI_SYNC, 2);

	cr_assert_eq(ufind(X_BITS | OMPI_SYNC, 0, 2), h4);
	hdr_remove(h1);
	cr_assert_eq(ufind(X_BITS, OMPI_SYNC, P4E_ID_ANY), h2);
	cr_assert_eq(ufind(0, UINT64_MAX, 1), h3);
	cr_assert_eq(ufind(0, UINT64_MAX, P4E_ID_ANY), h2);
}

Test(match, non_matching_list)
{
	struct accept_ctx reject_first = { .salt = 0, .modulo = 0 };

	p4e_mlist_fini(&mlist);
	cr_assert_eq(p4e_mlist_init(&mlist, false), 0);
	/* match fields are junk: an LE ignores them */
	ent_append(0, 0x1, 0, 1);
	ent_append(1, 0x2, 0, 2);
	ent_append(2, 0x3, 0, 3);
	cr_assert_eq(mmatch(0x999, 77), &ents[0]);
	cr_assert_eq(ref_match(3, 0x999, 77, NULL), &ents[0]);

	/* find a salt whose accept() rejects entry 0 and takes entry 1 */
	reject_first.modulo = 2;
	while (accept_verdict(0, &reject_first) ||
	       !accept_verdict(1, &reject_first))
		reject_first.salt++;
	cr_assert_eq(ent_of(p4e_mlist_match(&mlist, 0, 0, accept_ent,
					    &reject_first)), &ents[1]);
	ent_remove(&ents[0]);
	cr_assert_eq(mmatch(0, 0), &ents[1]);
	ent_remove(&ents[2]);
	cr_assert_eq(mmatch(0, 0), &ents[1]);
	ent_remove(&ents[1]);
	cr_assert_null(mmatch(0, 0));
}

Test(match, non_matching_uindex)
{
	p4e_uindex_fini(&uindex);
	cr_assert_eq(p4e_uindex_init(&uindex, false), 0);
	hdr_insert(0, 0x1, 1);
	hdr_insert(1, 0x2, 2);
	cr_assert_eq(ufind(0x777, 0, 9), &hdrs[0]);
	hdr_remove(&hdrs[0]);
	cr_assert_eq(ufind(0x777, 0, 9), &hdrs[1]);
	cr_assert_eq(uindex.nmasks, 0, "a non-matching index hashes nothing");
}

Test(match, accept_skips_to_next_in_order)
{
	struct accept_ctx ctx = { .salt = 0, .modulo = 2 };

	while (accept_verdict(0, &ctx) || !accept_verdict(1, &ctx) ||
	       !accept_verdict(2, &ctx))
		ctx.salt++;
	ent_append(0, 0x5, 0, 1);			/* rejected */
	ent_append(1, 0x5, OMPI_SYNC, 1);		/* other table */
	ent_append(2, 0x5, 0, 1);
	cr_assert_eq(ent_of(p4e_mlist_match(&mlist, 0x5, 1, accept_ent,
					    &ctx)), &ents[1]);
	ent_remove(&ents[1]);
	cr_assert_eq(ent_of(p4e_mlist_match(&mlist, 0x5, 1, accept_ent,
					    &ctx)), &ents[2]);

	hdr_insert(0, 0x5, 1);
	hdr_insert(1, 0x5, 1);
	cr_assert_eq(hdr_of(p4e_uindex_find(&uindex, 0x5, 0, 1, accept_hdr,
					    &ctx)), &hdrs[1]);
	cr_assert_eq(hdr_of(p4e_uindex_find(&uindex, 0, UINT64_MAX,
					    P4E_ID_ANY, accept_hdr, &ctx)),
		     &hdrs[1]);
}

Test(match, fini_with_entries_linked)
{
	unsigned i, next = fill_tables(0);

	for (i = 0; i < 3000; i++)
		ent_append(next + i, i, (i % 3) ? OMPI_SYNC : 0,
			   (i % 5) ? i % 7 : P4E_ID_ANY);
	for (i = 0; i < 20; i++)		/* slow list */
		ent_append(next + 3000 + i, i, 0x5000 + i, 1);
	for (i = 0; i < 3000; i++)
		hdr_insert(i, i, i % 7);
	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++)
		ufind(1, i, 1);
	cr_assert_eq(mlist.ntables, P4E_MLIST_MAX_MASKS);
	cr_assert_eq(uindex.nmasks, P4E_UINDEX_MAX_MASKS);
	p4e_mlist_fini(&mlist);
	p4e_uindex_fini(&uindex);
	cr_assert_eq(mlist.ntables, 0);
	cr_assert_eq(uindex.nmasks, 0);
	/*
	 * Drop every pointer into what the structures allocated (the
	 * entries' nodes point into tables and buckets): anything fini
	 * did not free is now a leak. Criterion's workers skip
	 * LeakSanitizer's exit check, so ask it here.
	 */
	memset(ents, 0, NENTS * sizeof(*ents));
	memset(hdrs, 0, NENTS * sizeof(*hdrs));
	memset(&mlist, 0, sizeof(mlist));
	memset(&uindex, 0, sizeof(uindex));
#ifdef __SANITIZE_ADDRESS__
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0,
		     "fini leaked (see LeakSanitizer's report)");
#endif
	/* and the structures are usable again after init */
	cr_assert_eq(p4e_mlist_init(&mlist, true), 0);
	cr_assert_eq(p4e_uindex_init(&uindex, true), 0);
	cr_assert_null(mmatch(1, 1));
	cr_assert_null(ufind(1, 0, 1));
	for (i = 0; i < NENTS; i++) {
		ents[i].idx = i;
		hdrs[i].idx = i;
	}
	ent_append(0, 1, 0, 1);
	cr_assert_eq(mmatch(1, 1), &ents[0]);
	/* the suite's fini runs with this one still linked */
}

/* ---- randomized comparison with a linear list ------------------------- */

struct model_param {
	uint64_t seed;
	unsigned mode;		/* 0: few masks, 1: many, 2: shifting set */
	bool matching;
};

#define MODEL_POOL	512
#define MODEL_OPS	20000

/* Groups of bits the masks are made of, so that matches are frequent. */
static uint64_t model_mask(uint64_t *rng, unsigned mode, unsigned op)
{
	static const uint64_t groups[6] = {
		0x1, 0x2, 0xc, OMPI_SYNC, 0x30000000000ULL,
		0xffff000000000000ULL,
	};
	static const unsigned few[4] = { 0, 8, 8 | 16, 63 };
	unsigned combo, g;
	uint64_t mask = 0;

	switch (mode) {
	case 0:
		combo = few[rng_next(rng) % 4];
		break;
	case 1:
		combo = rng_next(rng) % 64;
		break;
	default:
		/* a window of 3 masks sliding over time: retires old masks */
		combo = (op / 1500 + rng_next(rng) % 3) % 64;
		break;
	}
	for (g = 0; g < 6; g++)
		if (combo & (1u << g))
			mask |= groups[g];
	if (combo == 63 && (rng_next(rng) & 1))
		mask = UINT64_MAX;
	return mask;
}

static uint64_t model_bits(uint64_t *rng)
{
	uint64_t r = rng_next(rng);

	return (r & 0xf) | ((r >> 8 & 1) ? OMPI_SYNC : 0) |
	       ((r >> 16 & 3) << 40);
}

static uint32_t model_source(uint64_t *rng)
{
	uint32_t s = rng_next(rng) % 5;

	return s == 4 ? P4E_ID_ANY : s;
}

static void model_accept(uint64_t *rng, struct accept_ctx *ctx)
{
	ctx->salt = rng_next(rng);
	ctx->modulo = rng_next(rng) % 4;	/* 0: no predicate */
	ctx->calls = 0;
}

ParameterizedTestParameters(match, mlist_model)
{
	static struct model_param params[] = {
		{ 1, 0, true }, { 2, 1, true }, { 3, 2, true },
		{ 0x1234567, 0, true }, { 0xfeedface, 1, true },
		{ 42, 1, false },
	};

	return cr_make_param_array(struct model_param, params,
				   P4U_ARRAY_SIZE(params));
}

ParameterizedTest(struct model_param *param, match, mlist_model)
{
	uint64_t rng = param->seed, bits, ignore, junk;
	struct accept_ctx ctx;
	struct tentry *got, *want;
	unsigned op, i, roll, nlinked;
	uint32_t source;

	p4e_mlist_fini(&mlist);
	p4e_mlist_init(&mlist, param->matching);
	for (op = 0; op < MODEL_OPS; op++) {
		roll = rng_next(&rng) % 100;
		i = rng_next(&rng) % MODEL_POOL;
		if (roll < 45) {
			if (ents[i].linked)
				continue;
			ignore = model_mask(&rng, param->mode, op);
			/* junk in ignored positions must not matter */
			junk = rng_next(&rng) & ignore;
			ent_append(i, model_bits(&rng) | junk, ignore,
				   model_source(&rng));
		} else if (roll < 70) {
			if (ents[i].linked)
				ent_remove(&ents[i]);
		} else {
			bits = model_bits(&rng);
			source = rng_next(&rng) % 16 ? rng_next(&rng) % 4 :
						       P4E_ID_ANY;
			model_accept(&rng, &ctx);
			want = ref_match(MODEL_POOL, bits, source,
					 ctx.modulo ? &ctx : NULL);
			got = ent_of(p4e_mlist_match(&mlist, bits, source,
					ctx.modulo ? accept_ent : NULL, &ctx));
			cr_assert_eq(got, want,
				     "seed %#llx op %u: bits %#llx src %u: "
				     "got %d want %d",
				     (unsigned long long)param->seed, op,
				     (unsigned long long)bits, source,
				     got ? (int)got->idx : -1,
				     want ? (int)want->idx : -1);
			if (got && (roll & 1))	/* use-once */
				ent_remove(got);
		}
	}
	for (i = 0, nlinked = 0; i < MODEL_POOL; i++)
		nlinked += ents[i].linked;
	cr_assert_eq(mlist.count, nlinked);
	if (param->mode == 1)
		cr_assert(!p4u_list_empty(&mlist.slow) || !param->matching,
			  "the large pool should overflow the tables");
}

ParameterizedTestParameters(match, uindex_model)
{
	static struct model_param params[] = {
		{ 11, 0, true }, { 12, 1, true }, { 13, 2, true },
		{ 0xabcdef, 0, true }, { 0xc0ffee, 2, true },
		{ 77, 1, false },
	};

	return cr_make_param_array(struct model_param, params,
				   P4U_ARRAY_SIZE(params));
}

ParameterizedTest(struct model_param *param, match, uindex_model)
{
	uint64_t rng = param->seed, bits, ignore, seen[64];
	struct theader *got, *want;
	struct accept_ctx ctx;
	unsigned op, i, roll, s, k, nlinked, nseen = 0;
	uint32_t id;

	p4e_uindex_fini(&uindex);
	p4e_uindex_init(&uindex, param->matching);
	for (op = 0; op < MODEL_OPS; op++) {
		roll = rng_next(&rng) % 100;
		i = rng_next(&rng) % MODEL_POOL;
		if (roll < 40) {
			if (!hdrs[i].linked)
				hdr_insert(i, model_bits(&rng),
					   rng_next(&rng) % 4);
		} else if (roll < 60) {
			if (hdrs[i].linked)
				hdr_remove(&hdrs[i]);
		} else {
			if (roll < 64) {
				ignore = UINT64_MAX;
				id = P4E_ID_ANY;
			} else {
				ignore = model_mask(&rng, param->mode, op);
				id = model_source(&rng);
			}
			/* the entry's own bits may be set where ignored */
			bits = model_bits(&rng) | (rng_next(&rng) & ignore);
			model_accept(&rng, &ctx);
			want = ref_find(MODEL_POOL, bits, ignore, id,
					ctx.modulo ? &ctx : NULL);
			got = hdr_of(p4e_uindex_find(&uindex, bits, ignore, id,
					ctx.modulo ? accept_hdr : NULL, &ctx));
			cr_assert_eq(got, want,
				     "seed %#llx op %u: bits %#llx ignore "
				     "%#llx id %u: got %d want %d",
				     (unsigned long long)param->seed, op,
				     (unsigned long long)bits,
				     (unsigned long long)ignore, id,
				     got ? (int)got->idx : -1,
				     want ? (int)want->idx : -1);
			if (got && (roll & 1))
				hdr_remove(got);
		}
		/* every mask that ever had an index */
		for (s = 0; s < P4E_UINDEX_MAX_MASKS; s++) {
			if (!uindex.masks[s].active)
				continue;
			for (k = 0; k < nseen; k++)
				if (seen[k] == uindex.masks[s].mask)
					break;
			if (k == nseen && nseen < P4U_ARRAY_SIZE(seen))
				seen[nseen++] = uindex.masks[s].mask;
		}
	}
	for (i = 0, nlinked = 0; i < MODEL_POOL; i++)
		nlinked += hdrs[i].linked;
	cr_assert_eq(uindex.count, nlinked);
	/* the shifting set must have retired and rebuilt mask indexes */
	if (param->mode == 2)
		cr_assert_gt(nseen, P4E_UINDEX_MAX_MASKS + 4,
			     "only %u masks were ever indexed", nseen);
}

/* ---- cost: entries examined per lookup, not time --------------------- */

#define SCALE_N		65536

static uint64_t ompi_bits(unsigned tag, unsigned src)
{
	return (uint64_t)tag | ((uint64_t)src << OMPI_SRC_SHIFT);
}

/* 64k receives, 10% MPI_ANY_SOURCE, each matched in the worst order
 * (newest first, as a linear walk would find last) and consumed. */
Test(match, ompi_pattern_examines_constant)
{
	uint64_t before, most = 0, total;
	unsigned i, src;

	for (i = 0; i < SCALE_N; i++) {
		src = i % 64;
		if (i % 10 == 3)
			ent_append(i, ompi_bits(i, 0),
				   OMPI_SYNC | OMPI_SRC_MASK, P4E_ID_ANY);
		else
			ent_append(i, ompi_bits(i, src), OMPI_SYNC, src);
	}
	/* ANY_SOURCE (wildcard) receives posted after all the others */
	for (i = 0; i < 1024; i++)
		ent_append(SCALE_N + i, 0, UINT64_MAX, P4E_ID_ANY);
	cr_assert(p4u_list_empty(&mlist.slow));
	mlist.examined = 0;
	for (i = SCALE_N; i-- > 0;) {
		src = (i * 7) % 64;	/* the sender of an ANY receive */
		if (i % 10 != 3)
			src = i % 64;
		before = mlist.examined;
		cr_assert_eq(mmatch(ompi_bits(i, src) | ((i & 1) ? OMPI_SYNC :
							 0), src), &ents[i]);
		most = P4U_MAX(most, mlist.examined - before);
		ent_remove(&ents[i]);
	}
	total = mlist.examined;
	cr_log_info("64k Open MPI receives: %.2f examined per lookup, "
		    "at most %llu", (double)total / SCALE_N,
		    (unsigned long long)most);
	/* 1.25 in the by-id table, 0.15 in the ANY table, 1 wildcard */
	cr_assert_leq(most, 12, "a lookup examined %llu entries",
		      (unsigned long long)most);
	cr_assert_leq(total, 7ULL * SCALE_N / 2, "%.2f entries per lookup",
		      (double)total / SCALE_N);
	/* the wildcards catch what is left, oldest first, in O(1) */
	before = mlist.examined;
	cr_assert_eq(mmatch(0x77, 5), &ents[SCALE_N]);
	cr_assert_leq(mlist.examined - before, 2);
}

Test(match, uindex_ompi_pattern_examines_constant)
{
	uint64_t before, most = 0;
	unsigned i, src;

	for (i = 0; i < SCALE_N; i++)
		hdr_insert(i, ompi_bits(i, i % 64) | ((i & 2) ? OMPI_SYNC : 0),
			   i % 64);
	uindex.examined = 0;
	for (i = SCALE_N; i-- > 0;) {
		src = i % 64;
		before = uindex.examined;
		if (i % 10 == 3)
			cr_assert_eq(ufind(ompi_bits(i, 0),
					   OMPI_SYNC | OMPI_SRC_MASK,
					   P4E_ID_ANY), &hdrs[i]);
		else
			cr_assert_eq(ufind(ompi_bits(i, src), OMPI_SYNC, src),
				     &hdrs[i]);
		/* the first find of each mask walked once to build */
		if (i < SCALE_N - 8)
			most = P4U_MAX(most, uindex.examined - before);
		hdr_remove(&hdrs[i]);
	}
	cr_log_info("64k unexpected headers: %.2f examined per find, at "
		    "most %llu", (double)uindex.examined / SCALE_N,
		    (unsigned long long)most);
	cr_assert_leq(most, 12, "a find examined %llu headers",
		      (unsigned long long)most);
	cr_assert_leq(uindex.examined, 2ULL * SCALE_N,
		      "%.2f headers per find",
		      (double)uindex.examined / SCALE_N);
	cr_assert_eq(uindex.nmasks, 2);
	/* each mask hashed only the way its finds use it */
	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++) {
		const struct p4e_umask *umask = &uindex.masks[i];

		if (!umask->active)
			continue;
		cr_assert_eq(umask->has_src, umask->mask == OMPI_SYNC);
		cr_assert_eq(umask->has_bits, umask->mask != OMPI_SYNC);
	}
}

Test(match, uindex_full_wildcard_is_head)
{
	uint64_t before;
	unsigned i;

	for (i = 0; i < SCALE_N; i++)
		hdr_insert(i, i * 0x9e3779b97f4a7c15ULL, i % 100);
	for (i = 0; i < SCALE_N; i += 97) {
		before = uindex.examined;
		cr_assert_eq(ufind(0, UINT64_MAX, P4E_ID_ANY), &hdrs[i]);
		cr_assert_eq(uindex.examined - before, 1);
		/* remove a run so the head moves */
		for (unsigned j = i; j < i + 97 && j < SCALE_N; j++)
			hdr_remove(&hdrs[j]);
	}
	cr_assert_eq(uindex.nmasks, 0, "no index needed for wildcards");
}
