/*
 * p4e_match.c - the priority/overflow entry lists (struct p4e_mlist) and
 * the hash tables both matching structures use; the unexpected-header
 * index (struct p4e_uindex) is p4e_uindex.c.
 *
 * The lists and the index both give exactly the answer of a linear
 * Portals list walk (first match in append / arrival order) without
 * walking, for the masks consumers actually use (docs/design.md §6); a
 * list of a few entries is walked.
 * What lives elsewhere: the entries and headers themselves (p4e_me.c),
 * permissions, truncation and events (the target state machine), which
 * reach in only through the accept() predicates.
 *
 * The order argument every lookup relies on: p4u_hash keeps nodes of equal
 * hash in insertion order, entries are inserted in append order (seq
 * increasing), a table regrows by moving buckets in order and an index is
 * rebuilt by walking the arrival list, so the first acceptable node of a
 * bucket walk is the lowest-seq match for that key, and a walk can stop at
 * the first same-hash node whose seq is not below the best found so far.
 *
 * Cost: chains are kept at most a quarter node per bucket on average (see
 * p4e_match_hash_insert), so a lookup reads about one entry per probe; the
 * number of probes is 2 per mask table, and Open MPI uses one or two.
 */
#include <config.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4e_match.h"
#include "p4e_match_hash.h"
#include "p4u_log.h"

/* ---- priority / overflow lists ---------------------------------------- */

/* The Portals rule for one entry: its bits under its mask, its source. */
static inline bool p4e_mentry_fits(const struct p4e_mentry *entry,
				   uint64_t bits, uint32_t source)
{
	return p4e_match_bits_ok(bits, entry->match_bits, entry->ignore_bits) &&
	       (entry->match_id == P4E_ID_ANY || entry->match_id == source);
}

/*
 * A list this short is walked in append order: the tables' answer without
 * their hashing and probing. A ping-pong matches against one posted
 * receive; there the lookup took 217 of the 1,479 instructions of a
 * received 8-byte message over shared memory (callgrind), and walking
 * saves 136 a round trip.
 */
#define P4E_MLIST_WALK_MAX	4

/* All the entries hashed here have ignore_bits == mask. */
struct p4e_mtable {
	uint64_t mask;
	size_t nid;			/* entries in by_id */
	size_t nwild;			/* entries in wild */
	struct p4u_hash by_id;		/* key: (bits & ~mask, match_id) */
	struct p4u_hash wild;		/* key: bits & ~mask; match_id ANY */
};

/*
 * Move every node into a table with more buckets, old buckets in order and
 * each node to the tail of its new bucket: nodes that share a new bucket
 * shared the old one, so their order, and with it list order, is kept.
 * If the bigger table cannot be allocated the old one stays (p4u_hash
 * still grows it at two nodes per bucket, or not): slower, still correct.
 */
static void p4e_match_hash_regrow(struct p4u_hash *hash)
{
	size_t nbuckets = hash->mask + 1, i;
	struct p4u_hash_node *hnode;
	struct p4u_list *node, *tmp;
	struct p4u_hash bigger;

	if (p4u_hash_init(&bigger, nbuckets << P4E_MATCH_GROW_SHIFT))
		return;
	for (i = 0; i < nbuckets; i++) {
		p4u_list_foreach_safe(&hash->buckets[i], node, tmp) {
			hnode = container_of(node, struct p4u_hash_node, link);
			p4u_hash_insert(&bigger, hnode, hnode->hash);
		}
	}
	p4u_hash_fini(hash);
	*hash = bigger;
}

void p4e_match_hash_insert(struct p4u_hash *hash, struct p4u_hash_node *node,
			   uint64_t hval)
{
	if ((p4u_hash_count(hash) + 1) << P4E_MATCH_MAX_LOAD_SHIFT >
	    hash->mask + 1)
		p4e_match_hash_regrow(hash);
	p4u_hash_insert(hash, node, hval);
}

static int p4e_mtable_create(uint64_t mask, struct p4e_mtable **table_p)
{
	struct p4e_mtable *table;
	int ret;

	table = calloc(1, sizeof(*table));
	if (!table)
		return -FI_ENOMEM;
	ret = p4u_hash_init(&table->by_id, 0);
	if (ret)
		goto err_free_table;
	ret = p4u_hash_init(&table->wild, 0);
	if (ret)
		goto err_fini_by_id;
	table->mask = mask;
	*table_p = table;
	return 0;

err_fini_by_id:
	p4u_hash_fini(&table->by_id);
err_free_table:
	free(table);
	return ret;
}

static void p4e_mtable_destroy(struct p4e_mtable *table)
{
	p4u_hash_fini(&table->wild);
	p4u_hash_fini(&table->by_id);
	free(table);
}

static inline bool p4e_mtable_empty(const struct p4e_mtable *table)
{
	return !table->nid && !table->nwild;
}

/*
 * The table for mask: the one that has it, else an empty one taken over
 * (no entry is hashed there, so changing its mask is free), else a new one
 * while slots remain. NULL sends the entry to the slow list, which stays
 * correct when entries of one mask are split between a table and the slow
 * list: lookups compare seqs across both.
 */
static struct p4e_mtable *p4e_mlist_table_get(struct p4e_mlist *list,
					      uint64_t mask)
{
	struct p4e_mtable *table, *empty = NULL;
	unsigned i;

	for (i = 0; i < list->ntables; i++) {
		table = list->tables[i];
		if (table->mask == mask)
			return table;
		if (!empty && p4e_mtable_empty(table))
			empty = table;
	}
	if (empty) {
		empty->mask = mask;
		return empty;
	}
	if (list->ntables == P4E_MLIST_MAX_MASKS)
		return NULL;
	if (p4e_mtable_create(mask, &table)) {
		p4u_log(P4U_LOG_WARN, P4U_LOG_ENGINE,
			"no memory for a match table (mask %#llx): slow list",
			(unsigned long long)mask);
		return NULL;
	}
	list->tables[list->ntables++] = table;
	return table;
}

int p4e_mlist_init(struct p4e_mlist *list, bool matching)
{
	list->matching = matching;
	p4u_list_init(&list->order);
	p4u_list_init(&list->slow);
	list->ntables = 0;
	list->next_seq = 0;
	list->count = 0;
	list->examined = 0;
	list->walk_max = P4E_MLIST_WALK_MAX;
	return 0;
}

void p4e_mlist_fini(struct p4e_mlist *list)
{
	unsigned i;

	for (i = 0; i < list->ntables; i++)
		p4e_mtable_destroy(list->tables[i]);
	list->ntables = 0;
	/* forget the entries without touching them */
	p4u_list_init(&list->order);
	p4u_list_init(&list->slow);
	list->count = 0;
}

static void p4e_mtable_insert(struct p4e_mtable *table,
			      struct p4e_mentry *entry)
{
	uint64_t key = entry->match_bits & ~table->mask;

	if (entry->match_id == P4E_ID_ANY) {
		p4e_match_hash_insert(&table->wild, &entry->hnode,
				      p4e_match_hash_key(key));
		table->nwild++;
	} else {
		p4e_match_hash_insert(&table->by_id, &entry->hnode,
				      p4e_match_hash_id(key, entry->match_id));
		table->nid++;
	}
	entry->table = table;
}

void p4e_mlist_append(struct p4e_mlist *list, struct p4e_mentry *entry)
{
	struct p4e_mtable *table = NULL;

	entry->seq = list->next_seq++;
	entry->table = NULL;
	p4u_list_node_init(&entry->slow);
	p4u_list_node_init(&entry->hnode.link);
	p4u_list_insert_tail(&list->order, &entry->order);
	list->count++;
	/* a non-matching list is only ever walked in order */
	if (!list->matching)
		return;
	table = p4e_mlist_table_get(list, entry->ignore_bits);
	if (table)
		p4e_mtable_insert(table, entry);
	else
		p4u_list_insert_tail(&list->slow, &entry->slow);
}

void p4e_mlist_remove(struct p4e_mlist *list, struct p4e_mentry *entry)
{
	struct p4e_mtable *table = entry->table;

	assert(p4e_mentry_linked(entry));
	assert(list->count > 0);
	p4u_list_remove(&entry->order);
	if (table) {
		if (entry->match_id == P4E_ID_ANY) {
			p4u_hash_remove(&table->wild, &entry->hnode);
			table->nwild--;
		} else {
			p4u_hash_remove(&table->by_id, &entry->hnode);
			table->nid--;
		}
		entry->table = NULL;
	} else {
		/* self-linked on a non-matching list: harmless */
		p4u_list_remove(&entry->slow);
	}
	list->count--;
}

/*
 * One bucket walk: the first entry (in append order) with the hash, the
 * key bits under mask and the id, that accept() takes, if its seq is below
 * best_seq. For wildcard-source entries id is P4E_ID_ANY, which they all
 * carry. Every node of the bucket counts as examined.
 */
static struct p4e_mentry *
p4e_mtable_probe(struct p4e_mlist *list, const struct p4u_hash *hash,
		 uint64_t hval, uint64_t bits, uint64_t mask, uint32_t id,
		 uint64_t best_seq, p4e_mentry_accept_func_t accept, void *ctx)
{
	struct p4u_list *head = p4u_hash_bucket(hash, hval), *node;
	struct p4e_mentry *entry;
	uint64_t examined = 0;

	p4u_list_foreach(head, node) {
		examined++;
		entry = container_of(node, struct p4e_mentry, hnode.link);
		if (entry->hnode.hash != hval)
			continue;
		/* later same-hash nodes only have higher seqs */
		if (entry->seq >= best_seq)
			break;
		if (entry->match_id != id ||
		    !p4e_match_bits_ok(bits, entry->match_bits, mask))
			continue;
		if (accept && !accept(entry, ctx))
			continue;
		list->examined += examined;
		return entry;
	}
	list->examined += examined;
	return NULL;
}

/* The slow list is in append order: stop at the first seq >= best_seq. */
static struct p4e_mentry *
p4e_mlist_slow_match(struct p4e_mlist *list, uint64_t bits, uint32_t source,
		     uint64_t best_seq, p4e_mentry_accept_func_t accept,
		     void *ctx)
{
	struct p4e_mentry *entry;

	p4u_list_foreach_entry(&list->slow, entry, struct p4e_mentry, slow) {
		list->examined++;
		if (entry->seq >= best_seq)
			break;
		if (p4e_mentry_fits(entry, bits, source) &&
		    (!accept || accept(entry, ctx)))
			return entry;
	}
	return NULL;
}

/*
 * The hashes a lookup probes in each table (id/wild: whether it probes).
 * Computed first and their bucket heads prefetched, so that the cache
 * misses of several tables overlap instead of following one another.
 */
struct p4e_mprobe {
	uint64_t hid;
	uint64_t hwild;
	bool id;
	bool wild;
};

static void p4e_mlist_probes(struct p4e_mlist *list, uint64_t bits,
			     uint32_t source, struct p4e_mprobe *probes)
{
	struct p4e_mtable *table;
	uint64_t key;
	unsigned i;

	for (i = 0; i < list->ntables; i++) {
		table = list->tables[i];
		key = bits & ~table->mask;
		/* no specific match_id equals ANY: skip that probe */
		probes[i].id = table->nid && source != P4E_ID_ANY;
		probes[i].wild = table->nwild != 0;
		if (probes[i].id) {
			probes[i].hid = p4e_match_hash_id(key, source);
			__builtin_prefetch(p4u_hash_bucket(&table->by_id,
							   probes[i].hid));
		}
		if (probes[i].wild) {
			probes[i].hwild = p4e_match_hash_key(key);
			__builtin_prefetch(p4u_hash_bucket(&table->wild,
							   probes[i].hwild));
		}
	}
}

/*
 * The first fit that accept() takes, in append order: for a non-matching
 * list (LEs: every entry fits) and a short one (P4E_MLIST_WALK_MAX).
 */
static struct p4e_mentry *
p4e_mlist_walk(struct p4e_mlist *list, uint64_t bits, uint32_t source,
	       p4e_mentry_accept_func_t accept, void *ctx)
{
	struct p4e_mentry *entry;

	p4u_list_foreach_entry(&list->order, entry, struct p4e_mentry, order) {
		list->examined++;
		if ((!list->matching || p4e_mentry_fits(entry, bits, source)) &&
		    (!accept || accept(entry, ctx)))
			return entry;
	}
	return NULL;
}

struct p4e_mentry *p4e_mlist_match(struct p4e_mlist *list, uint64_t bits,
				   uint32_t source,
				   p4e_mentry_accept_func_t accept, void *ctx)
{
	struct p4e_mprobe probes[P4E_MLIST_MAX_MASKS];
	struct p4e_mentry *best = NULL, *entry;
	uint64_t best_seq = UINT64_MAX;
	struct p4e_mtable *table;
	unsigned i;

	if (!list->matching || list->count <= list->walk_max)
		return p4e_mlist_walk(list, bits, source, accept, ctx);

	p4e_mlist_probes(list, bits, source, probes);
	for (i = 0; i < list->ntables; i++) {
		table = list->tables[i];
		if (probes[i].id) {
			entry = p4e_mtable_probe(list, &table->by_id,
						 probes[i].hid, bits,
						 table->mask, source,
						 best_seq, accept, ctx);
			if (entry) {
				best = entry;
				best_seq = entry->seq;
			}
		}
		if (probes[i].wild) {
			entry = p4e_mtable_probe(list, &table->wild,
						 probes[i].hwild, bits,
						 table->mask, P4E_ID_ANY,
						 best_seq, accept, ctx);
			if (entry) {
				best = entry;
				best_seq = entry->seq;
			}
		}
	}
	if (!p4u_list_empty(&list->slow)) {
		entry = p4e_mlist_slow_match(list, bits, source, best_seq,
					     accept, ctx);
		if (entry)
			best = entry;
	}
	return best;
}
