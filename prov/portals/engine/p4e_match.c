/*
 * p4e_match.c - the matching structures: priority/overflow entry lists
 * (struct p4e_mlist) and the unexpected-header index (struct p4e_uindex).
 *
 * Both give exactly the answer of a linear Portals list walk (first match
 * in append / arrival order) without walking, for the masks consumers
 * actually use (docs/design.md §6); a list of a few entries is walked. What lives elsewhere: the entries and
 * headers themselves (p4e_me.c), permissions, truncation and
 * events (the target state machine), which reach in only through the
 * accept() predicates.
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
 * Grow at a quarter node per bucket (p4u_hash alone lets chains reach
 * two): every node a walk passes that is not the one it looks for is a
 * likely cache miss in a large list, and a probe that finds nothing (the
 * usual case in the wildcard table of a list that also holds exact
 * receives) reads every node of its bucket. Measured with 64k Open MPI
 * receives, 10 % ANY_SOURCE (bench/eng_bench): 0.78 of the 1-entry rate
 * at half a node per bucket, 0.83 at a quarter. Buckets cost 16 bytes,
 * so this is 64 to 128 bytes per entry, against an entry of 256.
 */
#define P4E_MATCH_MAX_LOAD_SHIFT	2	/* count <= buckets / 4 */
#define P4E_MATCH_GROW_SHIFT		1	/* double */

/*
 * Keys that differ only in their low P4E_MATCH_RUN_BITS bits (a run of
 * consecutive tags from one source and communicator) hash to one randomly
 * placed, aligned block of 2^RUN_BITS buckets, one bucket each: the rest
 * of the key is mixed, the low bits XORed in. Receives posted and matched
 * in tag order then walk their buckets sequentially instead of taking a
 * cache miss on every lookup (64k receives: 0.55 -> 0.9 of the 1-entry
 * rate). Nothing is given up for other keys: the low bits are XORed with
 * a value that differs at random from run to run, so two keys of different
 * runs share a bucket with probability 1 / buckets, as with a full mix,
 * and keys of one run never do, since a table has at least
 * P4U_HASH_MIN_BUCKETS = 2^RUN_BITS buckets. (More bits would let keys
 * of one run collide in small tables: tags 0, 16, 32, ... in one bucket.)
 */
#define P4E_MATCH_RUN_BITS		4
#define P4E_MATCH_RUN_MASK		((1ULL << P4E_MATCH_RUN_BITS) - 1)
_Static_assert((1u << P4E_MATCH_RUN_BITS) <= P4U_HASH_MIN_BUCKETS,
	       "a run of keys must fit in the smallest table");

static inline uint64_t p4e_match_hash_id(uint64_t key, uint32_t id)
{
	return p4u_hash_combine(key >> P4E_MATCH_RUN_BITS, id) ^
	       (key & P4E_MATCH_RUN_MASK);
}

static inline uint64_t p4e_match_hash_key(uint64_t key)
{
	return p4u_hash_u64(key >> P4E_MATCH_RUN_BITS) ^
	       (key & P4E_MATCH_RUN_MASK);
}

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

static void p4e_match_hash_insert(struct p4u_hash *hash,
				  struct p4u_hash_node *node, uint64_t hval)
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

/* Non-matching list: every entry matches; the first accepted wins. */
static struct p4e_mentry *
p4e_mlist_first(struct p4e_mlist *list, p4e_mentry_accept_func_t accept,
		void *ctx)
{
	struct p4e_mentry *entry;

	p4u_list_foreach_entry(&list->order, entry, struct p4e_mentry, order) {
		list->examined++;
		if (!accept || accept(entry, ctx))
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

/* A short list (P4E_MLIST_WALK_MAX): the first fit in append order. */
static struct p4e_mentry *
p4e_mlist_walk(struct p4e_mlist *list, uint64_t bits, uint32_t source,
	       p4e_mentry_accept_func_t accept, void *ctx)
{
	struct p4e_mentry *entry;

	p4u_list_foreach_entry(&list->order, entry, struct p4e_mentry, order) {
		list->examined++;
		if (p4e_mentry_fits(entry, bits, source) &&
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

	if (!list->matching)
		return p4e_mlist_first(list, accept, ctx);
	if (list->count <= list->walk_max)
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

/* ---- unexpected headers ----------------------------------------------- */

/*
 * A mask index has two hashes, each built on the first find that needs it
 * (by_bits for finds with match_id ANY, by_src for the others): Open MPI
 * uses its plain mask only with a source and its ANY_SOURCE mask only
 * without, so every header sits in two hashes instead of four, and an
 * insert or remove touches half the buckets.
 */
static inline struct p4u_hash *p4e_umask_hash(struct p4e_umask *umask,
					      bool by_src)
{
	return by_src ? &umask->by_src : &umask->by_bits;
}

static inline struct p4e_unodes *p4e_umask_nodes(struct p4e_umask *umask,
						 bool by_src)
{
	return by_src ? &umask->src_nodes : &umask->bits_nodes;
}

/*
 * Nodes live outside the headers, one chunk of P4E_UNODE_CHUNK per range
 * of entry ids, only for the hashes that are built: a header costs 32
 * bytes per hash it is in, not a node for every slot and kind.
 */
#define P4E_UNODE_CHUNK		256
/* The first chunks stay when emptied (a steady load reuses low ids, as
 * ids start over whenever the index empties): no malloc per header. */
#define P4E_UNODE_KEEP		2

/* id's node, its chunk made if need be; NULL: no memory. */
static struct p4e_unode *p4e_unodes_get(struct p4e_unodes *nodes, uint32_t id)
{
	uint32_t c = id / P4E_UNODE_CHUNK, n;
	struct p4e_unode **chunks;
	uint32_t *used;

	if (c >= nodes->nchunks) {
		n = P4U_MAX(nodes->nchunks * 2, c + 1);
		chunks = realloc(nodes->chunks, n * sizeof(*chunks));
		if (!chunks)
			return NULL;
		nodes->chunks = chunks;
		used = realloc(nodes->used, n * sizeof(*used));
		if (!used)
			return NULL;
		nodes->used = used;
		memset(chunks + nodes->nchunks, 0,
		       (n - nodes->nchunks) * sizeof(*chunks));
		memset(used + nodes->nchunks, 0,
		       (n - nodes->nchunks) * sizeof(*used));
		nodes->nchunks = n;
	}
	if (!nodes->chunks[c]) {
		nodes->chunks[c] = malloc(P4E_UNODE_CHUNK *
					  sizeof(struct p4e_unode));
		if (!nodes->chunks[c])
			return NULL;
	}
	nodes->used[c]++;
	return &nodes->chunks[c][id % P4E_UNODE_CHUNK];
}

/* id's node is unused now; an emptied chunk past the first goes back. */
static void p4e_unodes_put(struct p4e_unodes *nodes, uint32_t id)
{
	uint32_t c = id / P4E_UNODE_CHUNK;

	if (--nodes->used[c] || c < P4E_UNODE_KEEP)
		return;
	free(nodes->chunks[c]);
	nodes->chunks[c] = NULL;
}

static void p4e_unodes_fini(struct p4e_unodes *nodes)
{
	uint32_t c;

	for (c = 0; c < nodes->nchunks; c++)
		free(nodes->chunks[c]);
	free(nodes->chunks);
	free(nodes->used);
	memset(nodes, 0, sizeof(*nodes));
}

static inline struct p4e_unode *p4e_unodes_at(struct p4e_unodes *nodes,
					      uint32_t id)
{
	return &nodes->chunks[id / P4E_UNODE_CHUNK][id % P4E_UNODE_CHUNK];
}

/* One hash of a slot goes (no memory for a node): its finds will walk. */
static void p4e_umask_drop(struct p4e_umask *umask, bool by_src)
{
	bool *has = by_src ? &umask->has_src : &umask->has_bits;

	if (!*has)
		return;
	p4u_log(P4U_LOG_WARN, P4U_LOG_ENGINE, "no memory to index unexpected "
		"headers by mask %#llx: walking instead",
		(unsigned long long)umask->mask);
	p4u_hash_fini(p4e_umask_hash(umask, by_src));
	p4e_unodes_fini(p4e_umask_nodes(umask, by_src));
	*has = false;
}

/* Put entry in one hash of umask; false: no memory (nothing changed). */
static bool p4e_umask_hash_add(struct p4e_umask *umask, bool by_src,
			       struct p4e_uentry *entry)
{
	uint64_t key = entry->bits & ~umask->mask;
	struct p4e_unode *node;

	if (entry->id == UINT32_MAX)	/* it got no id: no node either */
		return false;
	node = p4e_unodes_get(p4e_umask_nodes(umask, by_src), entry->id);
	if (!node)
		return false;
	node->entry = entry;
	p4e_match_hash_insert(p4e_umask_hash(umask, by_src), &node->hnode,
			      by_src ? p4e_match_hash_id(key, entry->source) :
				       p4e_match_hash_key(key));
	return true;
}

static void p4e_umask_add(struct p4e_umask *umask, struct p4e_uentry *entry)
{
	if (umask->has_bits && !p4e_umask_hash_add(umask, false, entry))
		p4e_umask_drop(umask, false);
	if (umask->has_src && !p4e_umask_hash_add(umask, true, entry))
		p4e_umask_drop(umask, true);
}

static void p4e_umask_del(struct p4e_umask *umask, struct p4e_uentry *entry)
{
	if (umask->has_bits) {
		p4u_hash_remove(&umask->by_bits,
				&p4e_unodes_at(&umask->bits_nodes,
					       entry->id)->hnode);
		p4e_unodes_put(&umask->bits_nodes, entry->id);
	}
	if (umask->has_src) {
		p4u_hash_remove(&umask->by_src,
				&p4e_unodes_at(&umask->src_nodes,
					       entry->id)->hnode);
		p4e_unodes_put(&umask->src_nodes, entry->id);
	}
}

/* Index every current header, in arrival order, in one hash of slot. */
static int p4e_umask_build(struct p4e_uindex *index, unsigned slot,
			   bool by_src)
{
	struct p4e_umask *umask = &index->masks[slot];
	struct p4u_hash *hash = p4e_umask_hash(umask, by_src);
	struct p4e_uentry *entry;
	int ret;

	/* sized for the load p4e_match_hash_insert keeps */
	ret = p4u_hash_init(hash, index->count << P4E_MATCH_MAX_LOAD_SHIFT);
	if (ret) {
		p4u_log(P4U_LOG_WARN, P4U_LOG_ENGINE,
			"no memory to index unexpected headers by mask %#llx: "
			"%s", (unsigned long long)umask->mask,
			fi_strerror(-ret));
		return ret;
	}
	if (by_src)
		umask->has_src = true;
	else
		umask->has_bits = true;
	p4u_list_foreach_entry(&index->order, entry, struct p4e_uentry,
			       order) {
		if (!p4e_umask_hash_add(umask, by_src, entry)) {
			p4e_umask_drop(umask, by_src);
			return -FI_ENOMEM;
		}
	}
	return 0;
}

static void p4e_umask_deactivate(struct p4e_uindex *index, unsigned slot)
{
	struct p4e_umask *umask = &index->masks[slot];

	if (umask->has_src) {
		p4u_hash_fini(&umask->by_src);
		p4e_unodes_fini(&umask->src_nodes);
	}
	if (umask->has_bits) {
		p4u_hash_fini(&umask->by_bits);
		p4e_unodes_fini(&umask->bits_nodes);
	}
	umask->has_src = false;
	umask->has_bits = false;
	umask->active = false;
	index->nmasks--;
}

/*
 * A slot for mask: the one that has it, else a free one, else the least
 * recently used one if it has gone stale. -1: none (walk instead).
 */
static int p4e_uindex_slot_get(struct p4e_uindex *index, uint64_t mask)
{
	int free_slot = -1, lru = -1;
	struct p4e_umask *umask;
	unsigned i;

	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++) {
		umask = &index->masks[i];
		if (!umask->active) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (umask->mask == mask)
			return (int)i;
		if (lru < 0 || umask->last_used < index->masks[lru].last_used)
			lru = (int)i;
	}
	if (free_slot < 0) {
		if (index->finds - index->masks[lru].last_used <
		    P4E_UINDEX_STALE_FINDS)
			return -1;
		p4e_umask_deactivate(index, (unsigned)lru);
		free_slot = lru;
	}
	umask = &index->masks[free_slot];
	umask->mask = mask;
	umask->active = true;
	umask->has_bits = false;
	umask->has_src = false;
	index->nmasks++;
	return free_slot;
}

/* The slot whose hash (by_src or by_bits) indexes mask; -1: walk. */
static int p4e_uindex_mask_get(struct p4e_uindex *index, uint64_t mask,
			       bool by_src)
{
	struct p4e_umask *umask;
	int slot;

	slot = p4e_uindex_slot_get(index, mask);
	if (slot < 0)
		return -1;
	umask = &index->masks[slot];
	umask->last_used = index->finds;
	if ((by_src ? umask->has_src : umask->has_bits) ||
	    !p4e_umask_build(index, (unsigned)slot, by_src))
		return slot;
	/* a slot with no hash is of no use to anyone */
	if (!umask->has_src && !umask->has_bits)
		p4e_umask_deactivate(index, (unsigned)slot);
	return -1;
}

int p4e_uindex_init(struct p4e_uindex *index, bool matching)
{
	unsigned i;

	index->matching = matching;
	p4u_list_init(&index->order);
	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++) {
		index->masks[i].active = false;
		index->masks[i].has_bits = false;
		index->masks[i].has_src = false;
	}
	index->nmasks = 0;
	index->next_seq = 0;
	index->count = 0;
	index->finds = 0;
	index->examined = 0;
	index->next_id = 0;
	index->nfree_ids = 0;
	index->free_ids = NULL;
	index->ids_cap = 0;
	return 0;
}

void p4e_uindex_fini(struct p4e_uindex *index)
{
	unsigned i;

	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++) {
		if (index->masks[i].active)
			p4e_umask_deactivate(index, i);
	}
	p4u_list_init(&index->order);
	index->count = 0;
	free(index->free_ids);
	index->free_ids = NULL;
	index->ids_cap = index->nfree_ids = index->next_id = 0;
}

/*
 * An id for a new entry: one given back, else the next. The stack of
 * given-back ids grows with next_id, here where failing is allowed
 * (false: no memory), so giving one back never needs memory.
 */
static bool p4e_uindex_id_get(struct p4e_uindex *index, uint32_t *id_p)
{
	uint32_t cap;
	uint32_t *ids;

	if (index->nfree_ids) {
		*id_p = index->free_ids[--index->nfree_ids];
		return true;
	}
	if (index->next_id == index->ids_cap) {
		cap = index->ids_cap ? index->ids_cap * 2 : P4E_UNODE_CHUNK;
		ids = realloc(index->free_ids, cap * sizeof(*ids));
		if (!ids)
			return false;
		index->free_ids = ids;
		index->ids_cap = cap;
	}
	*id_p = index->next_id++;
	return true;
}

static void p4e_uindex_id_put(struct p4e_uindex *index, uint32_t id)
{
	index->free_ids[index->nfree_ids++] = id;
	if (index->count)
		return;
	/* empty again: ids start over, and a flood's stack goes back */
	index->nfree_ids = index->next_id = 0;
	if (index->ids_cap > P4E_UNODE_KEEP * P4E_UNODE_CHUNK) {
		free(index->free_ids);
		index->free_ids = NULL;
		index->ids_cap = 0;
	}
}

void p4e_uindex_insert(struct p4e_uindex *index, struct p4e_uentry *entry,
		       uint64_t bits, uint32_t source)
{
	unsigned i;

	entry->bits = bits;
	entry->source = source;
	entry->seq = index->next_seq++;
	p4u_list_insert_tail(&index->order, &entry->order);
	index->count++;
	if (!p4e_uindex_id_get(index, &entry->id)) {
		/* no id, no node: no hash can hold every header */
		for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++)
			if (index->masks[i].active)
				p4e_umask_deactivate(index, i);
		entry->id = UINT32_MAX;
		return;
	}
	if (!index->nmasks)
		return;
	for (i = 0; i < P4E_UINDEX_MAX_MASKS; i++) {
		if (index->masks[i].active)
			p4e_umask_add(&index->masks[i], entry);
	}
}

void p4e_uindex_remove(struct p4e_uindex *index, struct p4e_uentry *entry)
{
	unsigned i;

	assert(p4e_uentry_linked(entry));
	assert(index->count > 0);
	p4u_list_remove(&entry->order);
	index->count--;
	for (i = 0; index->nmasks && i < P4E_UINDEX_MAX_MASKS; i++) {
		if (index->masks[i].active)
			p4e_umask_del(&index->masks[i], entry);
	}
	if (entry->id != UINT32_MAX)
		p4e_uindex_id_put(index, entry->id);
}

/* The arrival-order walk: slow path, non-matching and wildcard finds. */
static struct p4e_uentry *
p4e_uindex_walk(struct p4e_uindex *index, bool matching, uint64_t match_bits,
		uint64_t ignore_bits, uint32_t match_id,
		p4e_uentry_accept_func_t accept, void *ctx)
{
	struct p4e_uentry *entry;

	p4u_list_foreach_entry(&index->order, entry, struct p4e_uentry, order) {
		index->examined++;
		if (matching &&
		    (!p4e_match_bits_ok(entry->bits, match_bits, ignore_bits) ||
		     (match_id != P4E_ID_ANY && entry->source != match_id)))
			continue;
		if (!accept || accept(entry, ctx))
			return entry;
	}
	return NULL;
}

/* One bucket walk in the slot's index; chains are in arrival order. */
static struct p4e_uentry *
p4e_umask_probe(struct p4e_uindex *index, unsigned slot, uint64_t match_bits,
		uint32_t match_id, p4e_uentry_accept_func_t accept, void *ctx)
{
	struct p4e_umask *umask = &index->masks[slot];
	uint64_t key = match_bits & ~umask->mask, hval, examined = 0;
	bool by_src = match_id != P4E_ID_ANY;
	struct p4u_list *head, *node;
	struct p4u_hash_node *hnode;
	struct p4e_uentry *entry;

	hval = by_src ? p4e_match_hash_id(key, match_id) :
			p4e_match_hash_key(key);
	head = p4u_hash_bucket(p4e_umask_hash(umask, by_src), hval);
	p4u_list_foreach(head, node) {
		examined++;
		hnode = container_of(node, struct p4u_hash_node, link);
		if (hnode->hash != hval)
			continue;
		entry = container_of(hnode, struct p4e_unode, hnode)->entry;
		if (!p4e_match_bits_ok(entry->bits, match_bits, umask->mask) ||
		    (by_src && entry->source != match_id))
			continue;
		if (accept && !accept(entry, ctx))
			continue;
		index->examined += examined;
		return entry;
	}
	index->examined += examined;
	return NULL;
}

struct p4e_uentry *p4e_uindex_find(struct p4e_uindex *index,
				   uint64_t match_bits, uint64_t ignore_bits,
				   uint32_t match_id,
				   p4e_uentry_accept_func_t accept, void *ctx)
{
	int slot;

	index->finds++;
	if (!index->matching)
		return p4e_uindex_walk(index, false, 0, 0, 0, accept, ctx);
	/* everything matches: the oldest header is the head */
	if (ignore_bits == UINT64_MAX && match_id == P4E_ID_ANY)
		return p4e_uindex_walk(index, false, 0, 0, 0, accept, ctx);
	/* no unexpected traffic costs no index */
	if (!index->count)
		return NULL;
	slot = p4e_uindex_mask_get(index, ignore_bits,
				   match_id != P4E_ID_ANY);
	if (slot < 0)
		return p4e_uindex_walk(index, true, match_bits, ignore_bits,
				       match_id, accept, ctx);
	return p4e_umask_probe(index, (unsigned)slot, match_bits, match_id,
			       accept, ctx);
}
