/*
 * p4u_pool.h - fixed-size object pools with generation-checked handles.
 *
 * A pool hands out objects of one size, up to a maximum count fixed at
 * init. Memory comes in chunks allocated the first time they are needed
 * (so a large maximum costs nothing until used). Objects are taken from
 * the lowest chunk that has a free one, so a burst's later chunks empty
 * first when it is over. When a chunk empties, wholly free chunks are
 * returned to the system, highest first, as long as the pool keeps
 * P4U_POOL_SPARE_CHUNKS chunks' worth of free objects, half the objects
 * in use, and room for its recent peak, whichever is most (hysteresis:
 * a steady load never frees and reallocates chunks, and the steady state
 * never calls malloc). The peak is the most objects in use at once; it
 * halves each time P4U_POOL_DECAY times its value in allocs went by with
 * less than half of it in use. So a load that comes and goes (a window
 * of sends, taken and freed whole, each window) keeps its chunks, where
 * giving them back made the heap shrink and fault its pages in again on
 * every window; a burst's chunks go back as the lighter load after it
 * runs on (a pool that is never used again keeps them). Room for the
 * peak is kept up to P4U_POOL_PEAK_BYTES; a burst's chunks past it go
 * back when it ends, so a flood of millions of operations does not hold
 * their memory until the load after it has decayed the peak.
 *
 * Every slot carries a generation that changes on alloc and on free (odd =
 * in use). A handle is (generation << 32 | index); p4u_pool_lookup refuses
 * a handle whose generation is not the slot's current one, so a stale
 * handle or a late reply can never reach a reused object. A returned
 * chunk's indexes refuse every handle; when the chunk is made again its
 * slots start above every generation they had, so handles from before
 * stay refused. Handle 0 is never valid.
 */
#ifndef P4U_POOL_H
#define P4U_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "p4u_compiler.h"

/* A pool keeps at least this many chunks' worth of free objects. */
#define P4U_POOL_SPARE_CHUNKS	2
/* The peak halves after this many times its value in quiet allocs. */
#define P4U_POOL_DECAY		4
/* At most this much room for the peak is kept. */
#define P4U_POOL_PEAK_BYTES	((size_t)8 << 20)

struct p4u_pool_chunk;

struct p4u_pool {
	size_t slot_size;	/* header + object, aligned */
	size_t obj_size;
	uint32_t chunk_objs;
	uint32_t max_objs;
	uint32_t max_chunks;
	uint32_t nchunks;	/* chunks allocated now */
	uint32_t in_use;
	uint32_t nslots;	/* slots in the allocated chunks */
	uint32_t top;		/* chunks at and above this are not allocated */
	uint32_t cur;		/* lowest chunk with a free slot, if any */
	uint32_t hole;		/* no unallocated chunk below this one */
	uint64_t returned;	/* stat: chunks given back so far */
	uint32_t peak;		/* most in use at once, decaying */
	uint32_t quiet;		/* allocs since in_use was >= peak / 2 */
	struct p4u_pool_chunk *chunks;	/* [max_chunks] */
	uint64_t *has_free;	/* bit per chunk: allocated, a slot free */
	uint64_t *empty;	/* bit per chunk: allocated, every slot free */
	uint32_t nempty;
};

#define P4U_POOL_INVALID_HANDLE 0ULL

/*
 * -EINVAL for a zero argument, max_objs above UINT32_MAX / 2, or an
 * obj_size * chunk_objs that does not fit in memory sizes; the pool is
 * left zeroed on failure, so p4u_pool_fini() on it is harmless.
 * Objects are 16-byte aligned.
 */
int p4u_pool_init(struct p4u_pool *pool, size_t obj_size, uint32_t chunk_objs,
		  uint32_t max_objs);
void p4u_pool_fini(struct p4u_pool *pool);

/* Returns a zeroed object, or NULL when max_objs are in use (or no memory). */
void *p4u_pool_alloc(struct p4u_pool *pool);
/* The same without zeroing: for buffers the caller overwrites anyway
 * (zeroing an 8 KiB bounce block per small message was most of its cost). */
void *p4u_pool_alloc_raw(struct p4u_pool *pool);
/* Freeing an object that is not allocated asserts (debug) or is ignored.
 * The object's chunk may be returned to the system here. */
void p4u_pool_free(struct p4u_pool *pool, void *obj);

uint64_t p4u_pool_handle(const struct p4u_pool *pool, const void *obj);
uint32_t p4u_pool_index(const struct p4u_pool *pool, const void *obj);
void *p4u_pool_lookup(const struct p4u_pool *pool, uint64_t handle);
/* obj must be in use, or its chunk still allocated (another object of
 * it in use): a chunk that emptied may be gone. */
bool p4u_pool_is_used(const struct p4u_pool *pool, const void *obj);

/* The object at index if it is in use, else NULL (for walks at teardown;
 * a walk may free what it visits). */
void *p4u_pool_at(const struct p4u_pool *pool, uint32_t index);
/* Indexes below this may be in use (the end of the highest allocated
 * chunk); p4u_pool_at answers for any index. */
uint32_t p4u_pool_capacity(const struct p4u_pool *pool);

/* Bytes of the chunks allocated now (what the pool holds of the heap). */
size_t p4u_pool_bytes(const struct p4u_pool *pool);

static inline uint32_t p4u_pool_in_use(const struct p4u_pool *pool)
{
	return pool->in_use;
}

/* max_objs in use: the next alloc fails (it may fail earlier: memory) */
static inline bool p4u_pool_full(const struct p4u_pool *pool)
{
	return pool->in_use >= pool->max_objs;
}

static inline uint32_t p4u_handle_index(uint64_t handle)
{
	return (uint32_t)handle;
}

static inline uint32_t p4u_handle_gen(uint64_t handle)
{
	return (uint32_t)(handle >> 32);
}

#endif /* P4U_POOL_H */
