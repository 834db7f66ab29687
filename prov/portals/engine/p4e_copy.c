/*
 * p4e_copy.c - the NI's copies of payloads (docs/design.md §4.1, §7.5):
 * a copied put's payload (with a swap's compare values) and a fetch's
 * old values at the target. Each copy takes a block of the smallest power
 * of two from 64 bytes that holds it, from one pool per size, so a queued
 * 8-byte send costs 64 bytes, not a block sized for the largest copy;
 * copies up to P4E_OP_SMALL bytes live in their operation and never get
 * here. The pools give their chunks back when a burst is over
 * (util/p4u_pool.h); all copies together take at most max_bytes.
 *
 * Not here: deciding what is copied (p4e_ini_post.c) and what happens
 * when a copy is refused (the caller's buffer is held instead).
 */
#include <config.h>

#include "p4e_priv.h"

/* A class's chunks hold about this many bytes (one object at least). */
#define P4E_COPY_CHUNK_BYTES	65536

static unsigned p4e_copy_class(size_t len)
{
	unsigned shift = len <= (1u << P4E_COPY_MIN_SHIFT) ? P4E_COPY_MIN_SHIFT :
			 64 - (unsigned)__builtin_clzll((uint64_t)len - 1);

	return shift - P4E_COPY_MIN_SHIFT;
}

static size_t p4e_copy_class_size(unsigned cls)
{
	return (size_t)1 << (cls + P4E_COPY_MIN_SHIFT);
}

int p4e_copies_init(struct p4e_copies *c, size_t max_len, uint64_t max_bytes,
		    uint32_t max_count)
{
	unsigned i;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!max_len || p4e_copy_class(max_len) >= P4E_COPY_CLASSES)
		return -FI_EINVAL;
	c->max_len = max_len;
	c->max_bytes = max_bytes;
	c->ncls = p4e_copy_class(max_len) + 1;
	for (i = 0; i < c->ncls; i++) {
		size_t size = p4e_copy_class_size(i);
		uint64_t fit = max_bytes / size + 1;

		ret = p4u_pool_init(&c->cls[i], size,
				    (uint32_t)P4U_MAX(P4E_COPY_CHUNK_BYTES / size,
						      (size_t)1),
				    (uint32_t)P4U_MIN(fit, (uint64_t)max_count));
		if (ret) {
			p4e_copies_fini(c);
			return ret;
		}
	}
	return 0;
}

void p4e_copies_fini(struct p4e_copies *c)
{
	unsigned i;

	for (i = 0; i < P4E_COPY_CLASSES; i++)
		p4u_pool_fini(&c->cls[i]);
	c->ncls = 0;
}

void *p4e_copy_alloc(struct p4e_copies *c, size_t len)
{
	unsigned cls = p4e_copy_class(len);
	size_t size = p4e_copy_class_size(cls);
	void *buf;

	if (len > c->max_len || c->bytes + size > c->max_bytes)
		return NULL;
	buf = p4u_pool_alloc_raw(&c->cls[cls]);
	if (buf)
		c->bytes += size;
	return buf;
}

void p4e_copy_free(struct p4e_copies *c, void *buf, size_t len)
{
	unsigned cls = p4e_copy_class(len);

	c->bytes -= p4e_copy_class_size(cls);
	p4u_pool_free(&c->cls[cls], buf);
}
