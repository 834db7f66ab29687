/*
 * p4u_pool.c - chunked object pool with generations (see p4u_pool.h).
 */
#include <config.h>

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <errno.h>

#include "p4u_pool.h"

/* Objects are aligned to this (and to max_align_t, if stricter). */
#define P4U_POOL_ALIGN	P4U_MAX((size_t)16, alignof(max_align_t))

struct p4u_pool_slot {
	uint32_t gen;		/* odd while allocated */
	uint32_t index;
	struct p4u_pool_slot *next_free;
	/* object follows; slot_size and the chunk keep it P4U_POOL_ALIGN'ed */
	alignas(P4U_POOL_ALIGN) max_align_t obj[];
};

_Static_assert(offsetof(struct p4u_pool_slot, obj) % 16 == 0,
	       "pool objects must be 16-byte aligned");

static inline struct p4u_pool_slot *p4u_pool_slot_of(const void *obj)
{
	return container_of((max_align_t *)obj, struct p4u_pool_slot, obj[0]);
}

static inline struct p4u_pool_slot *p4u_pool_slot_at(const struct p4u_pool *pool,
						     uint32_t index)
{
	return (struct p4u_pool_slot *)(pool->chunks[index / pool->chunk_objs] +
		(size_t)(index % pool->chunk_objs) * pool->slot_size);
}

int p4u_pool_init(struct p4u_pool *pool, size_t obj_size, uint32_t chunk_objs,
		  uint32_t max_objs)
{
	uint32_t max_chunks;
	size_t slot_size;

	memset(pool, 0, sizeof(*pool));
	if (!obj_size || !chunk_objs || !max_objs || max_objs > UINT32_MAX / 2)
		return -EINVAL;
	chunk_objs = P4U_MIN(chunk_objs, max_objs);
	/*
	 * Refuse sizes whose slot or chunk size would wrap: a wrapped size
	 * allocates a small chunk that alloc then overruns.
	 */
	if (obj_size > SIZE_MAX - sizeof(struct p4u_pool_slot) - 2 * P4U_POOL_ALIGN)
		return -EINVAL;
	slot_size = P4U_ALIGN_UP(sizeof(struct p4u_pool_slot) + obj_size,
				 P4U_POOL_ALIGN);
	if (slot_size > (SIZE_MAX - 64) / chunk_objs)
		return -EINVAL;
	pool->obj_size = obj_size;
	pool->slot_size = slot_size;
	pool->chunk_objs = chunk_objs;
	pool->max_objs = max_objs;
	max_chunks = (max_objs + pool->chunk_objs - 1) / pool->chunk_objs;
	pool->chunks = calloc(max_chunks, sizeof(*pool->chunks));
	if (!pool->chunks)
		return -ENOMEM;
	return 0;
}

void p4u_pool_fini(struct p4u_pool *pool)
{
	uint32_t i;

	if (!pool->chunks)
		return;
	for (i = 0; i < pool->nchunks; i++)
		free(pool->chunks[i]);
	free(pool->chunks);
	memset(pool, 0, sizeof(*pool));
}

static int p4u_pool_grow(struct p4u_pool *pool)
{
	uint32_t first = pool->nchunks * pool->chunk_objs, n, i;
	char *chunk;

	if (first >= pool->max_objs)
		return -ENOSPC;
	n = P4U_MIN(pool->chunk_objs, pool->max_objs - first);
	/* init checked that this product and its rounding cannot wrap */
	chunk = aligned_alloc(64, P4U_ALIGN_UP(pool->slot_size * pool->chunk_objs,
					       (size_t)64));
	if (!chunk)
		return -ENOMEM;
	pool->chunks[pool->nchunks++] = chunk;
	/* push in reverse so the lowest index is handed out first */
	for (i = n; i-- > 0;) {
		struct p4u_pool_slot *slot =
			(struct p4u_pool_slot *)(chunk + (size_t)i * pool->slot_size);
		slot->gen = 0;
		slot->index = first + i;
		slot->next_free = pool->free_list;
		pool->free_list = slot;
	}
	return 0;
}

void *p4u_pool_alloc_raw(struct p4u_pool *pool)
{
	struct p4u_pool_slot *slot;

	if (p4u_unlikely(!pool->free_list) && p4u_pool_grow(pool))
		return NULL;
	slot = pool->free_list;
	pool->free_list = slot->next_free;
	slot->next_free = NULL;
	slot->gen++;		/* even -> odd: in use */
	assert(slot->gen & 1);
	pool->in_use++;
	return slot->obj;
}

void *p4u_pool_alloc(struct p4u_pool *pool)
{
	void *obj = p4u_pool_alloc_raw(pool);

	if (obj)
		memset(obj, 0, pool->obj_size);
	return obj;
}

void p4u_pool_free(struct p4u_pool *pool, void *obj)
{
	struct p4u_pool_slot *slot = p4u_pool_slot_of(obj);

	/*
	 * A second free of the same object is a bug in the caller; without
	 * this check it would make the slot look live and put it on the
	 * free list twice, so two later allocs would share one object.
	 */
	assert(slot->gen & 1);
	if (p4u_unlikely(!(slot->gen & 1)))
		return;
	slot->gen++;		/* odd -> even; wraps back to 0, never to a live value */
	slot->next_free = pool->free_list;
	pool->free_list = slot;
	pool->in_use--;
}

uint64_t p4u_pool_handle(const struct p4u_pool *pool, const void *obj)
{
	const struct p4u_pool_slot *slot = p4u_pool_slot_of(obj);

	(void)pool;
	return ((uint64_t)slot->gen << 32) | slot->index;
}

uint32_t p4u_pool_index(const struct p4u_pool *pool, const void *obj)
{
	(void)pool;
	return p4u_pool_slot_of(obj)->index;
}

bool p4u_pool_is_used(const struct p4u_pool *pool, const void *obj)
{
	(void)pool;
	return p4u_pool_slot_of(obj)->gen & 1;
}

void *p4u_pool_lookup(const struct p4u_pool *pool, uint64_t handle)
{
	uint32_t index = p4u_handle_index(handle), gen = p4u_handle_gen(handle);
	struct p4u_pool_slot *slot;

	if (!(gen & 1) || index >= pool->nchunks * pool->chunk_objs ||
	    index >= pool->max_objs)
		return NULL;
	slot = p4u_pool_slot_at(pool, index);
	return slot->gen == gen ? slot->obj : NULL;
}

void *p4u_pool_at(const struct p4u_pool *pool, uint32_t index)
{
	struct p4u_pool_slot *slot;

	if (index >= p4u_pool_capacity(pool))
		return NULL;
	slot = p4u_pool_slot_at(pool, index);
	return (slot->gen & 1) ? slot->obj : NULL;
}

uint32_t p4u_pool_capacity(const struct p4u_pool *pool)
{
	return P4U_MIN(pool->nchunks * pool->chunk_objs, pool->max_objs);
}
