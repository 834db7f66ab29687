/*
 * p4e_match_hash.h - the hashing that the entry lists (p4e_match.c) and
 * the unexpected-header index (p4e_uindex.c) share: bucket load, growth,
 * and keys placed so that runs of consecutive tags share cache lines.
 */
#ifndef P4E_MATCH_HASH_H
#define P4E_MATCH_HASH_H

#include <stdint.h>

#include "p4u_hash.h"

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

/* Insert, growing first past a quarter node per bucket (order kept). */
void p4e_match_hash_insert(struct p4u_hash *hash, struct p4u_hash_node *node,
			   uint64_t hval);

#endif /* P4E_MATCH_HASH_H */
