/*
 * p4u_hash.h - chained hash table of intrusive nodes keyed by a 64-bit hash.
 *
 * The table stores the caller's 64-bit hash in each node and chains nodes
 * per bucket in insertion order, so nodes with equal keys come back in the
 * order they were inserted (the matching engine relies on that for Portals
 * list order). The caller compares its full key while walking a bucket.
 * The table grows by doubling; when growth cannot allocate, it keeps its
 * size and stays correct, only slower.
 */
#ifndef P4U_HASH_H
#define P4U_HASH_H

#include <stdint.h>
#include <stddef.h>

#include "p4u_list.h"

/* No table has fewer buckets (p4u_hash_init rounds up to it). */
#define P4U_HASH_MIN_BUCKETS	16

struct p4u_hash_node {
	struct p4u_list link;
	uint64_t hash;
};

struct p4u_hash {
	struct p4u_list *buckets;
	size_t mask;		/* nbuckets - 1, nbuckets a power of two */
	size_t count;
};

/* -EINVAL when expected is too large to size a table, -ENOMEM. */
int p4u_hash_init(struct p4u_hash *hash, size_t expected);
void p4u_hash_fini(struct p4u_hash *hash);
void p4u_hash_insert(struct p4u_hash *hash, struct p4u_hash_node *node,
		     uint64_t hval);
/* Removing a node twice is harmless (the second call does nothing). */
void p4u_hash_remove(struct p4u_hash *hash, struct p4u_hash_node *node);

static inline struct p4u_list *p4u_hash_bucket(const struct p4u_hash *hash,
					       uint64_t hval)
{
	return &hash->buckets[hval & hash->mask];
}

static inline size_t p4u_hash_count(const struct p4u_hash *hash)
{
	return hash->count;
}

/* A strong 64-bit mixer (splitmix64 finaliser). */
static inline uint64_t p4u_hash_u64(uint64_t key)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return key;
}

static inline uint64_t p4u_hash_combine(uint64_t a, uint64_t b)
{
	return p4u_hash_u64(a ^ (p4u_hash_u64(b) + 0x9e3779b97f4a7c15ULL));
}

/*
 * Visit, in insertion order, the nodes whose stored hash equals hval. The
 * body must not remove pos (use p4u_hash_foreach_safe) nor insert (an
 * insert may grow the table and move every node).
 */
#define p4u_hash_foreach(hashp, hval, pos, type, field)			\
	p4u_list_foreach_entry(p4u_hash_bucket(hashp, hval), pos, type,	\
			       field.link)					\
		if ((pos)->field.hash != (hval)) {} else

/* As p4u_hash_foreach, but the body may p4u_hash_remove() pos. */
#define p4u_hash_foreach_safe(hashp, hval, pos, tmp, type, field)		\
	p4u_list_foreach_entry_safe(p4u_hash_bucket(hashp, hval), pos, tmp,	\
				    type, field.link)				\
		if ((pos)->field.hash != (hval)) {} else

#endif /* P4U_HASH_H */
