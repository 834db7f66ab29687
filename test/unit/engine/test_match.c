/*
 * test_match.c - the matching structures (p4e_match.c): the match rule,
 * Portals list order across mask tables and the slow list, non-matching
 * lists, removal and re-append, and the unexpected-header index. Randomized
 * comparisons against a plain linear list and the probe count for Open
 * MPI's receive pattern are in test_match_model.c; the fixture is
 * p4e_match_test.h.
 *
 * The engine paths that use these structures (ME append, target matching)
 * are tested with the engine, not here.
 */
#include "p4e_match_test.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

TestSuite(match, .init = match_setup, .fini = match_teardown,
	  .timeout = 120);

/* ---- the rule (rule 1) -------------------------------------------- */

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
