/*
 * p4u_pool.c - chunked object pool with generations (see p4u_pool.h).
 *
 * Each chunk keeps its own free list; a bitmap says which allocated
 * chunks have a free slot, so an alloc takes the lowest one and a burst's
 * high chunks drain. Not here: locking (callers serialise).
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
/* No slot (end of a free list). */
#define P4U_POOL_NONE	UINT32_MAX

struct p4u_pool_slot {
	uint32_t gen;		/* odd while allocated */
	uint32_t index;
	uint32_t chunk;		/* index / chunk_objs, kept: free divides not */
	uint32_t next_free;	/* slot in its chunk, or P4U_POOL_NONE */
	/* object follows; slot_size and the chunk keep it P4U_POOL_ALIGN'ed */
	alignas(P4U_POOL_ALIGN) max_align_t obj[];
};

_Static_assert(offsetof(struct p4u_pool_slot, obj) % 16 == 0,
	       "pool objects must be 16-byte aligned");

struct p4u_pool_chunk {
	char *mem;		/* NULL: not allocated (never, or returned) */
	uint32_t free_head;	/* a slot in the chunk, or P4U_POOL_NONE */
	uint32_t nfree;
	uint32_t nslots;	/* chunk_objs, fewer in the last chunk */
	/*
	 * The generation the chunk's slots start at, even: above every
	 * generation they had before the chunk was returned, so a handle
	 * from then never matches again.
	 */
	uint32_t gen_base;
};

static inline struct p4u_pool_slot *p4u_pool_slot_of(const void *obj)
{
	return container_of((max_align_t *)obj, struct p4u_pool_slot, obj[0]);
}

static inline struct p4u_pool_slot *
p4u_pool_slot_in(const struct p4u_pool *pool, const struct p4u_pool_chunk *ch,
		 uint32_t i)
{
	return (struct p4u_pool_slot *)(ch->mem + (size_t)i * pool->slot_size);
}

static inline size_t p4u_pool_chunk_bytes(const struct p4u_pool *pool)
{
	/* init checked that this product and its rounding cannot wrap */
	return P4U_ALIGN_UP(pool->slot_size * pool->chunk_objs, (size_t)64);
}

static inline void p4u_pool_bit_set(uint64_t *map, uint32_t c)
{
	map[c / 64] |= 1ULL << (c % 64);
}

static inline void p4u_pool_bit_clear(uint64_t *map, uint32_t c)
{
	map[c / 64] &= ~(1ULL << (c % 64));
}

static inline uint32_t p4u_pool_words(const struct p4u_pool *pool)
{
	return (pool->max_chunks + 63) / 64;
}

int p4u_pool_init(struct p4u_pool *pool, size_t obj_size, uint32_t chunk_objs,
		  uint32_t max_objs)
{
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
	pool->max_chunks = (max_objs + chunk_objs - 1) / chunk_objs;
	pool->chunks = calloc(pool->max_chunks, sizeof(*pool->chunks));
	pool->has_free = calloc(p4u_pool_words(pool), sizeof(uint64_t));
	pool->empty = calloc(p4u_pool_words(pool), sizeof(uint64_t));
	if (!pool->chunks || !pool->has_free || !pool->empty) {
		free(pool->chunks);
		free(pool->has_free);
		free(pool->empty);
		memset(pool, 0, sizeof(*pool));
		return -ENOMEM;
	}
	return 0;
}

void p4u_pool_fini(struct p4u_pool *pool)
{
	uint32_t i;

	if (!pool->chunks)
		return;
	for (i = 0; i < pool->top; i++)
		free(pool->chunks[i].mem);
	free(pool->chunks);
	free(pool->has_free);
	free(pool->empty);
	memset(pool, 0, sizeof(*pool));
}

/* Make chunk c (not allocated): its slots free, lowest index first. */
static int p4u_pool_grow(struct p4u_pool *pool, uint32_t c)
{
	struct p4u_pool_chunk *ch = &pool->chunks[c];
	uint32_t first = c * pool->chunk_objs, i;

	ch->mem = aligned_alloc(64, p4u_pool_chunk_bytes(pool));
	if (!ch->mem)
		return -ENOMEM;
	ch->nslots = P4U_MIN(pool->chunk_objs, pool->max_objs - first);
	ch->nfree = ch->nslots;
	ch->free_head = 0;
	for (i = 0; i < ch->nslots; i++) {
		struct p4u_pool_slot *slot = p4u_pool_slot_in(pool, ch, i);

		slot->gen = ch->gen_base;
		slot->index = first + i;
		slot->chunk = c;
		slot->next_free = i + 1 < ch->nslots ? i + 1 : P4U_POOL_NONE;
	}
	p4u_pool_bit_set(pool->has_free, c);
	p4u_pool_bit_set(pool->empty, c);
	pool->nempty++;
	pool->nchunks++;
	pool->nslots += ch->nslots;
	if (c >= pool->top)
		pool->top = c + 1;
	return 0;
}

/*
 * Point cur at the lowest chunk with a free slot: an allocated one if
 * any has one (none below cur has), else a new chunk at the lowest
 * unallocated index.
 */
static int p4u_pool_next(struct p4u_pool *pool)
{
	uint32_t w, c, nwords = p4u_pool_words(pool);
	int ret;

	for (w = pool->cur / 64; w < nwords; w++) {
		if (pool->has_free[w]) {
			pool->cur = w * 64 + (uint32_t)__builtin_ctzll(pool->has_free[w]);
			return 0;
		}
	}
	for (c = pool->hole; c < pool->max_chunks && pool->chunks[c].mem; c++)
		;
	if (c >= pool->max_chunks)
		return -ENOSPC;
	ret = p4u_pool_grow(pool, c);
	if (ret)
		return ret;
	pool->hole = c + 1;	/* every chunk below c was allocated */
	pool->cur = c;
	return 0;
}

static void p4u_pool_decay(struct p4u_pool *pool);

void *p4u_pool_alloc_raw(struct p4u_pool *pool)
{
	struct p4u_pool_chunk *ch;
	struct p4u_pool_slot *slot;

	if (p4u_unlikely(pool->cur >= pool->max_chunks ||
			 !pool->chunks[pool->cur].nfree) &&
	    p4u_pool_next(pool))
		return NULL;
	ch = &pool->chunks[pool->cur];
	if (p4u_unlikely(ch->nfree == ch->nslots)) {
		p4u_pool_bit_clear(pool->empty, pool->cur);
		pool->nempty--;
	}
	slot = p4u_pool_slot_in(pool, ch, ch->free_head);
	ch->free_head = slot->next_free;
	if (!--ch->nfree)
		p4u_pool_bit_clear(pool->has_free, pool->cur);
	slot->next_free = P4U_POOL_NONE;
	slot->gen++;		/* even -> odd: in use */
	assert(slot->gen & 1);
	if (++pool->in_use >= pool->peak / 2) {
		pool->quiet = 0;
		if (pool->in_use > pool->peak)
			pool->peak = pool->in_use;
	} else if (p4u_unlikely(++pool->quiet >
				(uint64_t)P4U_POOL_DECAY * pool->peak)) {
		p4u_pool_decay(pool);
	}
	return slot->obj;
}

void *p4u_pool_alloc(struct p4u_pool *pool)
{
	void *obj = p4u_pool_alloc_raw(pool);

	if (obj)
		memset(obj, 0, pool->obj_size);
	return obj;
}

/* Give chunk c (wholly free) back to the system. */
static void p4u_pool_release(struct p4u_pool *pool, uint32_t c)
{
	struct p4u_pool_chunk *ch = &pool->chunks[c];
	uint32_t i, gen = ch->gen_base;

	/* its next life starts above every generation it handed out */
	for (i = 0; i < ch->nslots; i++)
		gen = P4U_MAX(gen, p4u_pool_slot_in(pool, ch, i)->gen);
	ch->gen_base = (gen + 2) & ~1u;
	free(ch->mem);
	ch->mem = NULL;
	ch->nfree = 0;
	ch->free_head = P4U_POOL_NONE;
	p4u_pool_bit_clear(pool->has_free, c);
	p4u_pool_bit_clear(pool->empty, c);
	pool->nempty--;
	pool->nchunks--;
	pool->nslots -= ch->nslots;
	pool->returned++;
	if (c < pool->hole)
		pool->hole = c;
	while (pool->top && !pool->chunks[pool->top - 1].mem)
		pool->top--;
}

/* The highest wholly free chunk (nempty > 0). */
static uint32_t p4u_pool_highest_empty(const struct p4u_pool *pool)
{
	uint32_t w = (pool->top + 63) / 64;

	while (w-- > 0)
		if (pool->empty[w])
			return w * 64 + 63 -
			       (uint32_t)__builtin_clzll(pool->empty[w]);
	assert(!"no empty chunk");
	return 0;
}

/*
 * Return wholly free chunks, highest first, while the pool keeps enough
 * free objects without them: P4U_POOL_SPARE_CHUNKS chunks' worth, or
 * half the objects in use, whichever is more. So a load that comes and
 * goes does not free and allocate a chunk every time, and the chunks a
 * burst left go back once it is over.
 */
static void p4u_pool_trim(struct p4u_pool *pool)
{
	uint32_t keep = P4U_MAX(P4U_POOL_SPARE_CHUNKS * pool->chunk_objs,
				pool->in_use / 2);
	uint32_t c;

	/* room for the peak, within a bound: its objects come back */
	if (pool->peak > pool->in_use)
		keep = P4U_MAX(keep, (uint32_t)P4U_MIN(pool->peak - pool->in_use,
					    P4U_POOL_PEAK_BYTES /
					    pool->slot_size));

	while (pool->nempty) {
		c = p4u_pool_highest_empty(pool);
		if (pool->nslots - pool->in_use - pool->chunks[c].nslots < keep)
			return;
		p4u_pool_release(pool, c);
	}
}

/*
 * The load stayed below half the peak for P4U_POOL_DECAY peaks' worth
 * of allocs: halve it, and give back what the pool no longer keeps
 * (no chunk may empty again while the load stays where it is).
 */
static void p4u_pool_decay(struct p4u_pool *pool)
{
	pool->peak /= 2;
	pool->quiet = 0;
	if (pool->nempty)
		p4u_pool_trim(pool);
}

void p4u_pool_free(struct p4u_pool *pool, void *obj)
{
	struct p4u_pool_slot *slot = p4u_pool_slot_of(obj);
	struct p4u_pool_chunk *ch;
	uint32_t c;

	/*
	 * A second free of the same object is a bug in the caller; without
	 * this check it would make the slot look live and put it on the
	 * free list twice, so two later allocs would share one object.
	 */
	assert(slot->gen & 1);
	if (p4u_unlikely(!(slot->gen & 1)))
		return;
	slot->gen++;		/* odd -> even; wraps back to 0, never to a live value */
	c = slot->chunk;
	ch = &pool->chunks[c];
	slot->next_free = ch->free_head;
	ch->free_head = slot->index - c * pool->chunk_objs;
	if (!ch->nfree++)
		p4u_pool_bit_set(pool->has_free, c);
	/* no chunk below cur has a free slot (p4u_pool_next relies on it) */
	if (c < pool->cur)
		pool->cur = c;
	pool->in_use--;
	if (p4u_unlikely(ch->nfree == ch->nslots)) {
		p4u_pool_bit_set(pool->empty, c);
		pool->nempty++;
		/* the trim's own test, cheaply first: a pool at rest on its
		 * first chunks pays nothing more per free */
		if (pool->nslots - pool->in_use >
		    P4U_POOL_SPARE_CHUNKS * pool->chunk_objs)
			p4u_pool_trim(pool);
	}
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

/* The slot at index, NULL if its chunk is not allocated. */
static struct p4u_pool_slot *p4u_pool_slot_at(const struct p4u_pool *pool,
					      uint32_t index)
{
	const struct p4u_pool_chunk *ch;
	uint32_t c;

	if (index >= pool->max_objs)
		return NULL;
	c = index / pool->chunk_objs;
	ch = &pool->chunks[c];
	if (!ch->mem)
		return NULL;
	return p4u_pool_slot_in(pool, ch, index - c * pool->chunk_objs);
}

void *p4u_pool_lookup(const struct p4u_pool *pool, uint64_t handle)
{
	uint32_t gen = p4u_handle_gen(handle);
	struct p4u_pool_slot *slot;

	if (!(gen & 1))
		return NULL;
	slot = p4u_pool_slot_at(pool, p4u_handle_index(handle));
	return slot && slot->gen == gen ? slot->obj : NULL;
}

void *p4u_pool_at(const struct p4u_pool *pool, uint32_t index)
{
	struct p4u_pool_slot *slot = p4u_pool_slot_at(pool, index);

	return slot && (slot->gen & 1) ? slot->obj : NULL;
}

uint32_t p4u_pool_capacity(const struct p4u_pool *pool)
{
	return (uint32_t)P4U_MIN((uint64_t)pool->top * pool->chunk_objs,
				 (uint64_t)pool->max_objs);
}

size_t p4u_pool_bytes(const struct p4u_pool *pool)
{
	return pool->nchunks * p4u_pool_chunk_bytes(pool);
}
