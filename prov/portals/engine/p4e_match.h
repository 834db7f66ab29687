/*
 * p4e_match.h - the matching structures of the engine (DESIGN.md §5):
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
 *    built lazily, a hash of the headers by bits & ~mask (and by source).
 *
 * Both only index: they never allocate the entries or headers (those are
 * embedded in engine objects) and know nothing of events or data.
 * Matching rule (pitfall 1): ((incoming ^ match_bits) & ~ignore_bits) == 0,
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

struct p4e_mtable;

/* Embedded in an ME/LE. Fields are owned by the list while linked. */
struct p4e_mentry {
	struct p4u_list order;		/* in append order */
	struct p4u_hash_node hnode;	/* in its table, when hashed */
	struct p4u_list slow;		/* in the slow list, when not */
	struct p4e_mtable *table;	/* NULL: in the slow list */
	uint64_t match_bits;
	uint64_t ignore_bits;
	uint32_t match_id;
	uint64_t seq;			/* append order, set by append */
};

struct p4e_mlist {
	bool matching;			/* false: LEs, the first entry wins */
	struct p4u_list order;
	struct p4u_list slow;
	struct p4e_mtable *tables[P4E_MLIST_MAX_MASKS];
	unsigned ntables;
	uint64_t next_seq;
	size_t count;
};

/* Return false to skip an otherwise matching entry (e.g. NO_TRUNCATE). */
typedef bool (*p4e_mentry_accept_func_t)(struct p4e_mentry *entry, void *ctx);

int p4e_mlist_init(struct p4e_mlist *list, bool matching);
/* Frees the tables; entries still linked are simply forgotten. */
void p4e_mlist_fini(struct p4e_mlist *list);
/* Append at the tail: set entry's match fields first. Never fails. */
void p4e_mlist_append(struct p4e_mlist *list, struct p4e_mentry *entry);
void p4e_mlist_remove(struct p4e_mlist *list, struct p4e_mentry *entry);
/* The first entry in append order matching (bits, source), or NULL. */
struct p4e_mentry *p4e_mlist_match(struct p4e_mlist *list, uint64_t bits,
				   uint32_t source,
				   p4e_mentry_accept_func_t accept, void *ctx);

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

/* Embedded in an unexpected header. */
struct p4e_uentry {
	struct p4u_list order;		/* arrival order */
	uint64_t bits;
	uint32_t source;
	uint64_t seq;
	struct p4u_hash_node by_bits[P4E_UINDEX_MAX_MASKS];
	struct p4u_hash_node by_src[P4E_UINDEX_MAX_MASKS];
};

struct p4e_umask {
	uint64_t mask;
	struct p4u_hash by_bits;	/* key: bits & ~mask */
	struct p4u_hash by_src;		/* key: (bits & ~mask, source) */
};

struct p4e_uindex {
	bool matching;
	struct p4u_list order;
	struct p4e_umask masks[P4E_UINDEX_MAX_MASKS];
	unsigned nmasks;
	uint64_t next_seq;
	size_t count;
};

typedef bool (*p4e_uentry_accept_func_t)(struct p4e_uentry *entry, void *ctx);

int p4e_uindex_init(struct p4e_uindex *index, bool matching);
void p4e_uindex_fini(struct p4e_uindex *index);
/* Add a header at the tail (arrival order). Never fails. */
void p4e_uindex_insert(struct p4e_uindex *index, struct p4e_uentry *entry,
		       uint64_t bits, uint32_t source);
void p4e_uindex_remove(struct p4e_uindex *index, struct p4e_uentry *entry);
/* The first header in arrival order that an entry with these match fields
 * matches, or NULL. */
struct p4e_uentry *p4e_uindex_find(struct p4e_uindex *index,
				   uint64_t match_bits, uint64_t ignore_bits,
				   uint32_t match_id,
				   p4e_uentry_accept_func_t accept, void *ctx);

#endif /* P4E_MATCH_H */
