/*
 * p4e_uindex.c - the unexpected-header index (struct p4e_uindex): the
 * headers of messages that matched the overflow list, found by an
 * appended entry in arrival order without walking them (docs/design.md
 * §6.2). Its hashes are those of the entry lists (p4e_match_hash.h), and
 * so is the argument that a bucket walk finds the first in order
 * (p4e_match.c).
 */
#include <config.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4e_match.h"
#include "p4e_match_hash.h"
#include "p4u_log.h"

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
