/*
 * p4u_pool.h - fixed-size object pools with generation-checked handles.
 *
 * A pool hands out objects of one size, up to a maximum count fixed at
 * init. Memory comes in chunks allocated the first time they are needed
 * (so a large maximum costs nothing until used) and is never returned
 * before p4u_pool_fini, so steady-state allocation never calls malloc.
 *
 * Every slot carries a generation that changes on alloc and on free (odd =
 * in use). A handle is (generation << 32 | index); p4u_pool_lookup refuses
 * a handle whose generation is not the slot's current one, so a stale
 * handle or a late reply can never reach a reused object. Handle 0 is
 * never valid.
 */
#ifndef P4U_POOL_H
#define P4U_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "p4u_compiler.h"

struct p4u_pool_slot;

struct p4u_pool {
	size_t slot_size;	/* header + object, aligned */
	size_t obj_size;
	uint32_t chunk_objs;
	uint32_t max_objs;
	uint32_t nchunks;	/* chunks allocated so far */
	uint32_t in_use;
	char **chunks;
	struct p4u_pool_slot *free_list;
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
/* Freeing an object that is not allocated asserts (debug) or is ignored. */
/* The same without zeroing: for buffers the caller overwrites anyway
 * (zeroing an 8 KiB bounce block per small message was most of its cost). */
void *p4u_pool_alloc_raw(struct p4u_pool *pool);
void p4u_pool_free(struct p4u_pool *pool, void *obj);

uint64_t p4u_pool_handle(const struct p4u_pool *pool, const void *obj);
uint32_t p4u_pool_index(const struct p4u_pool *pool, const void *obj);
void *p4u_pool_lookup(const struct p4u_pool *pool, uint64_t handle);
bool p4u_pool_is_used(const struct p4u_pool *pool, const void *obj);

/* The object at index if it is in use, else NULL (for walks at teardown). */
void *p4u_pool_at(const struct p4u_pool *pool, uint32_t index);
/* Number of slots created so far: indexes below it may be visited. */
uint32_t p4u_pool_capacity(const struct p4u_pool *pool);

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
