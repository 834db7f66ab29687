/*
 * test_hash.c - p4u_hash: the chained table of intrusive nodes, its
 * growth by doubling, and the order among nodes of equal hash that the
 * matching engine relies on. Also p4u_roundup_pow2, which sizes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <rdma/fi_errno.h>

#include "p4u_hash.h"

struct entry {
	uint64_t key;
	uint64_t hval;
	uint64_t seq;		/* insertion order, for FIFO checks */
	bool in_table;
	struct p4u_hash_node hnode;
};

static struct p4u_hash table;
static struct entry *ents;

static void hash_setup(void)
{
	cr_assert_eq(p4u_hash_init(&table, 0), 0);
	ents = NULL;
}

static void hash_teardown(void)
{
	p4u_hash_fini(&table);
	free(ents);
}

TestSuite(hash, .init = hash_setup, .fini = hash_teardown, .timeout = 60);

static struct entry *ents_alloc(size_t n)
{
	ents = calloc(n, sizeof(*ents));
	cr_assert_not_null(ents);
	return ents;
}

static size_t hash_nbuckets(const struct p4u_hash *h)
{
	return h->mask + 1;
}

/* Entries with this hash, in the order the table gives them. */
static size_t collect(uint64_t hval, struct entry **out, size_t max)
{
	struct entry *pos;
	size_t n = 0;

	p4u_hash_foreach(&table, hval, pos, struct entry, hnode) {
		cr_assert_eq(pos->hnode.hash, hval);
		cr_assert_lt(n, max, "more nodes for %#llx than inserted",
			     (unsigned long long)hval);
		out[n++] = pos;
	}
	return n;
}

Test(hash, init_sizes)
{
	struct p4u_hash h;

	cr_assert_eq(hash_nbuckets(&table), 16, "minimum is 16 buckets");
	cr_assert_eq(p4u_hash_count(&table), 0);
	cr_assert_eq(p4u_hash_init(&h, 100), 0);
	cr_assert_eq(hash_nbuckets(&h), 128);
	p4u_hash_fini(&h);
	cr_assert_eq(p4u_hash_init(&h, 1024), 0);
	cr_assert_eq(hash_nbuckets(&h), 1024);
	p4u_hash_fini(&h);
	cr_assert_null(h.buckets);
}

/*
 * Fixed bug: an expected count near SIZE_MAX made p4u_roundup_pow2 shift
 * by 64 and the bucket array size wrap, so init "succeeded" with a tiny
 * (or overrun) array. It must refuse instead.
 */
ParameterizedTestParameters(hash, init_refuses_absurd_sizes)
{
	static size_t sizes[] = {
		SIZE_MAX, SIZE_MAX / 2 + 2, (SIZE_MAX >> 4) + 2,
		(SIZE_MAX >> 3) + 1,
	};

	return cr_make_param_array(size_t, sizes, P4U_ARRAY_SIZE(sizes));
}

ParameterizedTest(size_t *expected, hash, init_refuses_absurd_sizes)
{
	struct p4u_hash h;

	memset(&h, 0, sizeof(h));
	cr_assert_eq(p4u_hash_init(&h, *expected), -FI_EINVAL,
		     "expected %zu accepted", *expected);
}

Test(hash, insert_lookup_remove)
{
	struct entry *e = ents_alloc(3), *got[4];

	e[0].hval = 0x1234;
	e[1].hval = 0x5678;
	e[2].hval = 0x1234 + 16;	/* same bucket as e[0], other hash */
	p4u_hash_insert(&table, &e[0].hnode, e[0].hval);
	p4u_hash_insert(&table, &e[1].hnode, e[1].hval);
	p4u_hash_insert(&table, &e[2].hnode, e[2].hval);
	cr_assert_eq(p4u_hash_count(&table), 3);
	cr_assert_eq(p4u_hash_bucket(&table, e[0].hval),
		     p4u_hash_bucket(&table, e[2].hval));

	cr_assert_eq(collect(0x1234, got, 4), 1);
	cr_assert_eq(got[0], &e[0]);
	cr_assert_eq(collect(0x5678, got, 4), 1);
	cr_assert_eq(got[0], &e[1]);
	cr_assert_eq(collect(0x1234 + 16, got, 4), 1);
	cr_assert_eq(got[0], &e[2]);
	cr_assert_eq(collect(0x9999, got, 4), 0);

	p4u_hash_remove(&table, &e[0].hnode);
	cr_assert_eq(p4u_hash_count(&table), 2);
	cr_assert_eq(collect(0x1234, got, 4), 0);
	cr_assert_eq(collect(0x1234 + 16, got, 4), 1);
	p4u_hash_remove(&table, &e[1].hnode);
	p4u_hash_remove(&table, &e[2].hnode);
	cr_assert_eq(p4u_hash_count(&table), 0);
	cr_assert_eq(collect(0x5678, got, 4), 0);
}

/* Fixed bug: a second remove of the same node wrapped the count. */
Test(hash, remove_twice_keeps_count)
{
	struct entry *e = ents_alloc(2);

	p4u_hash_insert(&table, &e[0].hnode, 1);
	p4u_hash_insert(&table, &e[1].hnode, 1);
	p4u_hash_remove(&table, &e[0].hnode);
	p4u_hash_remove(&table, &e[0].hnode);
	cr_assert_eq(p4u_hash_count(&table), 1);
	p4u_hash_remove(&table, &e[1].hnode);
	cr_assert_eq(p4u_hash_count(&table), 0);
}

/*
 * Nodes with equal hashes come back in insertion order, through every
 * doubling. Hashes are chosen so groups share buckets while the table is
 * small and are split apart by later growths (high bits differ), and the
 * groups' inserts are interleaved.
 */
ParameterizedTestParameters(hash, fifo_across_growth)
{
	/* low-bit stride between the groups' hashes */
	static unsigned int shifts[] = { 0, 4, 8, 12, 40 };

	return cr_make_param_array(unsigned int, shifts,
				   P4U_ARRAY_SIZE(shifts));
}

#define FIFO_GROUPS 7
#define FIFO_N 20000

ParameterizedTest(unsigned int *shift, hash, fifo_across_growth)
{
	struct entry *e = ents_alloc(FIFO_N), **got;
	size_t per_group[FIFO_GROUPS] = { 0 }, n, g, i, grows = 0, last_nb;

	got = calloc(FIFO_N, sizeof(*got));
	cr_assert_not_null(got);
	last_nb = hash_nbuckets(&table);
	for (i = 0; i < FIFO_N; i++) {
		/* a skewed interleave, so groups grow at different rates */
		g = (i * i + i / 3) % FIFO_GROUPS;
		e[i].hval = ((uint64_t)(g + 1) << *shift) + 0x5;
		e[i].seq = i;
		p4u_hash_insert(&table, &e[i].hnode, e[i].hval);
		per_group[g]++;
		if (hash_nbuckets(&table) != last_nb) {
			cr_assert_eq(hash_nbuckets(&table), 2 * last_nb,
				     "growth is by doubling");
			last_nb = hash_nbuckets(&table);
			grows++;
		}
	}
	cr_assert_eq(p4u_hash_count(&table), FIFO_N);
	cr_assert_geq(grows, 9, "only %zu growths", grows);

	for (g = 0; g < FIFO_GROUPS; g++) {
		uint64_t hval = ((uint64_t)(g + 1) << *shift) + 0x5;

		n = collect(hval, got, FIFO_N);
		cr_assert_eq(n, per_group[g], "group %zu: %zu of %zu nodes", g,
			     n, per_group[g]);
		for (i = 1; i < n; i++)
			cr_assert_lt(got[i - 1]->seq, got[i]->seq,
				     "group %zu out of order at %zu", g, i);
	}
	free(got);
}

/*
 * Remove while walking one hash's nodes: the safe walk visits every node
 * once, the others of that hash keep their order, and nodes of another
 * hash sharing the bucket are not touched.
 */
Test(hash, remove_during_bucket_walk)
{
	struct entry *e = ents_alloc(40), *pos, *tmp, *got[40];
	const uint64_t ha = 0x42, hb = 0x42 + 16 * 1024;
	size_t i, n, visited = 0;

	cr_assert_eq(p4u_hash_bucket(&table, ha), p4u_hash_bucket(&table, hb));
	for (i = 0; i < 40; i++) {
		e[i].seq = i;
		e[i].hval = (i % 4 == 3) ? hb : ha;
		p4u_hash_insert(&table, &e[i].hnode, e[i].hval);
	}
	/* 40 inserts grew the table past 16 buckets: same bucket still */
	cr_assert_eq(p4u_hash_bucket(&table, ha), p4u_hash_bucket(&table, hb));

	p4u_hash_foreach_safe(&table, ha, pos, tmp, struct entry, hnode) {
		cr_assert_eq(pos->hval, ha);
		visited++;
		if (pos->seq % 2 == 0)
			p4u_hash_remove(&table, &pos->hnode);
	}
	cr_assert_eq(visited, 30);
	cr_assert_eq(p4u_hash_count(&table), 40 - 20);

	n = collect(ha, got, 40);
	cr_assert_eq(n, 10);
	for (i = 0; i < n; i++) {
		cr_assert_eq(got[i]->seq % 2, 1);
		if (i)
			cr_assert_lt(got[i - 1]->seq, got[i]->seq);
	}
	n = collect(hb, got, 40);
	cr_assert_eq(n, 10);
	for (i = 0; i < n; i++)
		cr_assert_eq(got[i]->seq, 4 * i + 3);

	/* remove every remaining node of ha, including the last one */
	p4u_hash_foreach_safe(&table, ha, pos, tmp, struct entry, hnode)
		p4u_hash_remove(&table, &pos->hnode);
	cr_assert_eq(collect(ha, got, 40), 0);
	cr_assert_eq(p4u_hash_count(&table), 10);
}

/*
 * The walk macros end in a complete if/else, so an else written after
 * them belongs to the caller's if, not to the macro's hash filter.
 */
Test(hash, foreach_is_one_statement)
{
	struct entry *e = ents_alloc(2), *pos, *tmp;
	int visits = 0, elses = 0;
	volatile int no = 0;

	p4u_hash_insert(&table, &e[0].hnode, 7);
	p4u_hash_insert(&table, &e[1].hnode, 7 + 16);
	if (no)
		p4u_hash_foreach(&table, 7, pos, struct entry, hnode)
			visits++;
	else
		elses++;
	if (no)
		p4u_hash_foreach_safe(&table, 7, pos, tmp, struct entry, hnode)
			visits++;
	else
		elses++;
	cr_assert_eq(visits, 0);
	cr_assert_eq(elses, 2);
}

/* ---- randomized model test -------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* xorshift64*: fixed seed, same sequence on every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

#define MODEL_KEYS 4096
#define MODEL_CLASSES 300
#define MODEL_OPS 100000

/*
 * Key k belongs to class k % MODEL_CLASSES; a class is one hash value.
 * Half the classes use a mixed hash, half a shifted one whose low bits
 * are all zero (they pile into few buckets until growth separates them).
 */
static uint64_t model_hval(uint64_t key)
{
	uint64_t class = key % MODEL_CLASSES;

	return (class & 1) ? p4u_hash_u64(class) : (class << 8);
}

/* The reference: per class, keys in insertion order. */
struct model_class {
	uint64_t keys[MODEL_KEYS];
	size_t n;
};

static struct model_class *model;

static void model_check_class(size_t class)
{
	struct entry *pos;
	size_t i = 0;
	uint64_t hval = model_hval(class);

	p4u_hash_foreach(&table, hval, pos, struct entry, hnode) {
		cr_assert_lt(i, model[class].n, "class %zu: extra node", class);
		cr_assert_eq(pos->key, model[class].keys[i],
			     "class %zu pos %zu: key %llu, want %llu", class, i,
			     (unsigned long long)pos->key,
			     (unsigned long long)model[class].keys[i]);
		i++;
	}
	cr_assert_eq(i, model[class].n, "class %zu: %zu nodes, want %zu",
		     class, i, model[class].n);
}

static void model_remove(size_t class, uint64_t key)
{
	size_t i;

	for (i = 0; i < model[class].n; i++)
		if (model[class].keys[i] == key)
			break;
	cr_assert_lt(i, model[class].n);
	memmove(&model[class].keys[i], &model[class].keys[i + 1],
		(model[class].n - i - 1) * sizeof(uint64_t));
	model[class].n--;
}

Test(hash, model_random_ops)
{
	struct entry *e = ents_alloc(MODEL_KEYS), *pos, *tmp;
	size_t op, count = 0, k, class;

	model = calloc(MODEL_CLASSES, sizeof(*model));
	cr_assert_not_null(model);
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (k = 0; k < MODEL_KEYS; k++)
		e[k].key = k;

	for (op = 0; op < MODEL_OPS; op++) {
		uint64_t r = rng_next();
		unsigned int kind = r % 100;

		k = (r >> 8) % MODEL_KEYS;
		class = k % MODEL_CLASSES;
		if (kind < 50) {
			/* insert (or, if present, remove and re-insert) */
			if (e[k].in_table) {
				p4u_hash_remove(&table, &e[k].hnode);
				model_remove(class, k);
				count--;
			}
			p4u_hash_insert(&table, &e[k].hnode, model_hval(k));
			e[k].in_table = true;
			model[class].keys[model[class].n++] = k;
			count++;
		} else if (kind < 80) {
			if (!e[k].in_table)
				continue;
			p4u_hash_remove(&table, &e[k].hnode);
			e[k].in_table = false;
			model_remove(class, k);
			count--;
		} else if (kind < 85) {
			/* drop a whole class while walking it */
			p4u_hash_foreach_safe(&table, model_hval(class), pos,
					      tmp, struct entry, hnode) {
				p4u_hash_remove(&table, &pos->hnode);
				pos->in_table = false;
				count--;
			}
			model[class].n = 0;
		} else {
			model_check_class(class);
		}
		cr_assert_eq(p4u_hash_count(&table), count, "op %zu", op);
	}
	for (class = 0; class < MODEL_CLASSES; class++)
		model_check_class(class);
	cr_assert_gt(hash_nbuckets(&table), 16, "the table never grew");
	free(model);
}

/* ---- helpers ------------------------------------------------------------ */

Test(hash, hash_u64_is_injective_on_a_range)
{
	struct p4u_hash h;
	struct entry *e = ents_alloc(100000), *pos;
	size_t i, found;

	cr_assert_eq(p4u_hash_init(&h, 0), 0);
	/* no two keys of 0..99999 share a mixed value */
	for (i = 0; i < 100000; i++) {
		e[i].hval = p4u_hash_u64(i);
		p4u_hash_insert(&h, &e[i].hnode, e[i].hval);
	}
	for (i = 0; i < 100000; i += 997) {
		found = 0;
		p4u_hash_foreach(&h, e[i].hval, pos, struct entry, hnode)
			found++;
		cr_assert_eq(found, 1, "key %zu collides", i);
	}
	cr_assert_neq(p4u_hash_combine(1, 2), p4u_hash_combine(2, 1));
	p4u_hash_fini(&h);
}

struct pow2_case {
	uint64_t in;
	uint64_t out;
};

/* Fixed bug: inputs above 2^63 shifted by 64 (undefined); now 0. */
ParameterizedTestParameters(hash, roundup_pow2)
{
	static struct pow2_case cases[] = {
		{ 0, 1 }, { 1, 1 }, { 2, 2 }, { 3, 4 }, { 5, 8 }, { 16, 16 },
		{ 17, 32 }, { (1ULL << 32) - 1, 1ULL << 32 },
		{ (1ULL << 32) + 1, 1ULL << 33 }, { 1ULL << 63, 1ULL << 63 },
		{ (1ULL << 63) - 1, 1ULL << 63 }, { (1ULL << 63) + 1, 0 },
		{ UINT64_MAX, 0 },
	};

	return cr_make_param_array(struct pow2_case, cases,
				   P4U_ARRAY_SIZE(cases));
}

ParameterizedTest(struct pow2_case *c, hash, roundup_pow2)
{
	cr_assert_eq(p4u_roundup_pow2(c->in), c->out, "%#llx -> %#llx, want %#llx",
		     (unsigned long long)c->in,
		     (unsigned long long)p4u_roundup_pow2(c->in),
		     (unsigned long long)c->out);
	cr_assert_eq(p4u_is_pow2(c->out), c->out != 0);
}
