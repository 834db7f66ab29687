/*
 * test_match_model.c - the matching structures (p4e_match.c) against
 * models: randomized comparisons of the priority list and the
 * unexpected-header index with a plain linear list, and a probe count
 * showing that Open MPI's receive pattern costs the same at 64k entries as
 * at a few. Same suite (match) and fixture (p4e_match_test.h) as
 * test_match.c.
 */
#include "p4e_match_test.h"

/* criterion.h (through p4e_match_test.h) must come before parameterized.h */
#include <criterion/parameterized.h>

TestSuite(match, .init = match_setup, .fini = match_teardown,
	  .timeout = 120);

/* ---- randomized comparison with a linear list ------------------------- */

struct model_param {
	uint64_t seed;
	unsigned mode;		/* 0: few masks, 1: many, 2: shifting set */
	bool matching;
	unsigned pool;		/* entries drawn from; 0: MODEL_POOL */
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
		/* lists of 0 to 8 entries: walked up to P4E_MLIST_WALK_MAX,
		 * looked up in the tables beyond, both ways many times */
		{ 5, 0, true, 8 }, { 6, 1, true, 8 }, { 7, 2, true, 8 },
	};

	return cr_make_param_array(struct model_param, params,
				   P4U_ARRAY_SIZE(params));
}

ParameterizedTest(struct model_param *param, match, mlist_model)
{
	uint64_t rng = param->seed, bits, ignore, junk;
	struct accept_ctx ctx;
	struct tentry *got, *want;
	unsigned op, i, roll, nlinked, walked = 0, looked_up = 0;
	unsigned pool = param->pool ? param->pool : MODEL_POOL;
	uint32_t source;

	/* as the engine has it: short lists walked */
	p4e_mlist_fini(&mlist);
	p4e_mlist_init(&mlist, param->matching);
	for (op = 0; op < MODEL_OPS; op++) {
		roll = rng_next(&rng) % 100;
		i = rng_next(&rng) % pool;
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
			if (mlist.count <= mlist.walk_max)
				walked++;
			else
				looked_up++;
			want = ref_match(pool, bits, source,
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
	for (i = 0, nlinked = 0; i < pool; i++)
		nlinked += ents[i].linked;
	cr_assert_eq(mlist.count, nlinked);
	if (param->mode == 1 && !param->pool)
		cr_assert(!p4u_list_empty(&mlist.slow) || !param->matching,
			  "the large pool should overflow the tables");
	if (param->pool && param->matching)
		cr_assert(walked > 1000 && looked_up > 1000,
			  "%u matches walked, %u looked up: the test did not "
			  "test both", walked, looked_up);
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

/*
 * A run of consecutive tags (one source, one mask) takes one aligned
 * block of buckets, one bucket per tag: in a large list, receives matched
 * in tag order then read their buckets sequentially rather than missing
 * the cache on every lookup. Each entry is alone in its bucket here, so
 * its prev link is the bucket head, whose address gives the bucket.
 */
Test(match, tag_run_takes_consecutive_buckets)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, head;
	unsigned i, j;

	for (i = 0; i < 16; i++)
		ent_append(i, ompi_bits(0x1230 + i, 7), OMPI_SYNC, 7);
	for (i = 0; i < 16; i++) {
		head = (uintptr_t)ents[i].m.hnode.link.prev;
		cr_assert_eq(((struct p4u_list *)head)->next,
			     &ents[i].m.hnode.link,
			     "tag %#x shares its bucket", 0x1230 + i);
		for (j = 0; j < i; j++)
			cr_assert_neq((uintptr_t)ents[j].m.hnode.link.prev,
				      head);
		lo = P4U_MIN(lo, head);
		hi = P4U_MAX(hi, head);
	}
	cr_assert_eq(hi - lo, 15 * sizeof(struct p4u_list),
		     "the run spans %zu bytes of buckets", (size_t)(hi - lo));
	for (i = 16; i-- > 0;) {
		mlist.examined = 0;
		cr_assert_eq(mmatch(ompi_bits(0x1230 + i, 7), 7), &ents[i]);
		cr_assert_eq(mlist.examined, 1);
		ent_remove(&ents[i]);
	}
}

/*
 * The other side of that rule: keys that differ above the run (a stride
 * of 16 tags) are spread as by a full mix, even in a small table. Were
 * more low bits kept, tags 0, 16, 32, ... would share a bucket there.
 */
Test(match, tag_stride_spreads_in_small_table)
{
	unsigned i;

	for (i = 0; i < 16; i++)
		ent_append(i, ompi_bits(16 * i, 7), OMPI_SYNC, 7);
	mlist.examined = 0;
	for (i = 16; i-- > 0;) {
		cr_assert_eq(mmatch(ompi_bits(16 * i, 7), 7), &ents[i]);
		ent_remove(&ents[i]);
	}
	cr_log_info("stride 16: %llu examined for 16 lookups",
		    (unsigned long long)mlist.examined);
	cr_assert_leq(mlist.examined, 24);
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
