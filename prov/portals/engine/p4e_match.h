/*
 * p4e_match.h - the matching structures of the engine (docs/design.md §6):
 *
 *  - struct p4e_mlist: a priority or overflow list of entries (MEs/LEs).
 *    Finds the FIRST entry in append order that matches an incoming
 *    (match bits, source), exactly as a linear Portals list walk would,
 *    but without walking: one pair of hash tables per distinct ignore
 *    mask (keyed by bits & ~mask, with and without the source), an
 *    ordered list only for entries whose mask got no table, and an append
 *    sequence number on every entry so the lowest one wins across tables.
 *
 *  - struct p4e_uindex: the unexpected headers of a PT in arrival order,
 *    found the other way round (an entry being appended looks for the
 *    first header it matches): per ignore mask that lookups actually use,
 *    a hash of the headers by bits & ~mask (finds with match_id ANY) and
 *    one by (bits & ~mask, source) (the others), each built on first use.
 *
 * Both only index: they never allocate the entries or headers (those are
 * embedded in engine objects) and know nothing of events or data. Tables
 * and their growth do allocate; when that fails the structures fall back
 * to walking in order and stay correct. Nothing here locks: the caller
 * serialises (p4e.h, "Threads").
 * The matching rule (rule 1): ((incoming ^ match_bits) & ~ignore_bits) == 0,
 * and match_id == P4E_ID_ANY or match_id == source.
 */
#ifndef P4E_MATCH_H
#define P4E_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "p4u_hash.h"
#include "p4u_list.h"
#include "p4e.h"

/* Distinct ignore masks that get hash tables; more go to a slow list. */
#define P4E_MLIST_MAX_MASKS	16
/* Distinct ignore masks the unexpected index hashes for. */
#define P4E_UINDEX_MAX_MASKS	4
/*
 * A mask index no find has used for this many finds may be rebuilt for a
 * new mask. Rebuilding costs one walk of the headers, which the find would
 * otherwise pay anyway; the delay keeps masks in steady rotation from
 * evicting each other on every find.
 */
#define P4E_UINDEX_STALE_FINDS	256

struct p4e_mtable;

/*
 * Embedded in an ME/LE. Fields are owned by the list while linked. What a
 * bucket walk reads comes first, within 64 bytes: one cache line per
 * entry walked past when the entry is aligned.
 */
struct p4e_mentry {
	struct p4u_hash_node hnode;	/* in its table, when hashed */
	uint64_t seq;			/* append order, set by append */
	uint64_t match_bits;
	uint32_t match_id;
	uint64_t ignore_bits;
	struct p4e_mtable *table;	/* NULL: in the slow list */
	struct p4u_list order;		/* in append order */
	struct p4u_list slow;		/* in the slow list, when not */
};

/*
 * Tables are created on the first append of a new mask and kept when they
 * empty (no malloc/free churn for a mask that comes and goes); an empty
 * table is taken over by the next new mask once all slots are in use.
 */
struct p4e_mlist {
	bool matching;			/* false: LEs, the first entry wins */
	struct p4u_list order;
	struct p4u_list slow;
	struct p4e_mtable *tables[P4E_MLIST_MAX_MASKS];
	unsigned ntables;		/* tables[0 .. ntables-1] exist */
	uint64_t next_seq;
	size_t count;
	uint64_t examined;		/* stat: entries looked at by match */
	size_t walk_max;		/* up to this many entries: walked
					 * (tests set 0: the tables alone) */
};

/* Return false to skip an otherwise matching entry (e.g. NO_TRUNCATE). */
typedef bool (*p4e_mentry_accept_func_t)(struct p4e_mentry *entry, void *ctx);

/* Never fails (tables come with the first appends); returns 0. */
int p4e_mlist_init(struct p4e_mlist *list, bool matching);
/* Frees the tables; entries still linked are simply forgotten (not
 * touched: their owner may already have freed them). */
void p4e_mlist_fini(struct p4e_mlist *list);
/* Append at the tail: set entry's match fields first. Never fails. */
void p4e_mlist_append(struct p4e_mlist *list, struct p4e_mentry *entry);
/* entry must be linked on this list. */
void p4e_mlist_remove(struct p4e_mlist *list, struct p4e_mentry *entry);
/* The first entry in append order matching (bits, source), or NULL. */
struct p4e_mentry *p4e_mlist_match(struct p4e_mlist *list, uint64_t bits,
				   uint32_t source,
				   p4e_mentry_accept_func_t accept, void *ctx);

/* Optional: makes p4e_mentry_linked() false before the first append. */
static inline void p4e_mentry_init(struct p4e_mentry *entry)
{
	p4u_list_node_init(&entry->order);
	p4u_list_node_init(&entry->slow);
	p4u_list_node_init(&entry->hnode.link);
	entry->table = NULL;
}

static inline bool p4e_mentry_linked(const struct p4e_mentry *entry)
{
	return p4u_list_node_linked(&entry->order);
}

/* The plain rule, for the slow paths and the tests' reference model. */
static inline bool p4e_match_bits_ok(uint64_t incoming, uint64_t match_bits,
				     uint64_t ignore_bits)
{
	return ((incoming ^ match_bits) & ~ignore_bits) == 0;
}

/*
 * Embedded in an unexpected header, and small: a receiver may hold
 * millions (docs/design.md §7.2). Its nodes in the mask hashes live in
 * the index, found by id, and only in the hashes that are built.
 */
struct p4e_uentry {
	uint64_t bits;
	uint32_t source;
	uint32_t id;			/* dense in the index: its nodes */
	uint64_t seq;
	struct p4u_list order;		/* arrival order */
};

/* A header's node in one mask hash. */
struct p4e_unode {
	struct p4u_hash_node hnode;
	struct p4e_uentry *entry;
};

/* The nodes of one hash, by entry id, in chunks made when first used and
 * freed when emptied. */
struct p4e_unodes {
	struct p4e_unode **chunks;
	uint32_t *used;			/* nodes in use per chunk */
	uint32_t nchunks;		/* room in the two tables */
};

/*
 * While active, every header of the index is in each hash that has been
 * built (on the first find that needed it: by_bits for match_id ANY).
 */
struct p4e_umask {
	bool active;
	bool has_bits;			/* by_bits built */
	bool has_src;			/* by_src built */
	uint64_t mask;
	uint64_t last_used;		/* index->finds when last used */
	struct p4u_hash by_bits;	/* key: bits & ~mask */
	struct p4u_hash by_src;		/* key: (bits & ~mask, source) */
	struct p4e_unodes bits_nodes;
	struct p4e_unodes src_nodes;
};

struct p4e_uindex {
	bool matching;
	struct p4u_list order;
	struct p4e_umask masks[P4E_UINDEX_MAX_MASKS];
	unsigned nmasks;		/* active slots (may have holes) */
	uint64_t next_seq;
	size_t count;
	uint64_t finds;			/* find calls, the clock of last_used */
	uint64_t examined;		/* stat: headers looked at by find */
	/* entry ids: the lowest never used, and those given back */
	uint32_t next_id;
	uint32_t nfree_ids;
	uint32_t *free_ids;		/* [next_id] once grown */
	uint32_t ids_cap;
};

/* Optional: makes p4e_uentry_linked() false before the first insert. */
static inline void p4e_uentry_init(struct p4e_uentry *entry)
{
	p4u_list_node_init(&entry->order);
}

static inline bool p4e_uentry_linked(const struct p4e_uentry *entry)
{
	return p4u_list_node_linked(&entry->order);
}

typedef bool (*p4e_uentry_accept_func_t)(struct p4e_uentry *entry, void *ctx);

/* Never fails (mask indexes come with the first finds); returns 0. */
int p4e_uindex_init(struct p4e_uindex *index, bool matching);
/* Frees the mask indexes; headers still linked are simply forgotten. */
void p4e_uindex_fini(struct p4e_uindex *index);
/* Add a header at the tail (arrival order). Never fails. */
void p4e_uindex_insert(struct p4e_uindex *index, struct p4e_uentry *entry,
		       uint64_t bits, uint32_t source);
/* entry must be linked on this index. */
void p4e_uindex_remove(struct p4e_uindex *index, struct p4e_uentry *entry);
/* The first header in arrival order that an entry with these match fields
 * matches, or NULL. On a non-matching index every header matches. */
struct p4e_uentry *p4e_uindex_find(struct p4e_uindex *index,
				   uint64_t match_bits, uint64_t ignore_bits,
				   uint32_t match_id,
				   p4e_uentry_accept_func_t accept, void *ctx);

#endif /* P4E_MATCH_H */
