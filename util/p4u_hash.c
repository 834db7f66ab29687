/*
 * p4u_hash.c - growth and insertion for the chained hash table.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <errno.h>

#include "p4u_hash.h"

static struct p4u_list *p4u_hash_buckets_alloc(size_t n)
{
	struct p4u_list *buckets;
	size_t i;

	/* n comes from the caller's expected count: never let n * 16 wrap */
	if (!n || n > SIZE_MAX / sizeof(*buckets))
		return NULL;
	buckets = malloc(n * sizeof(*buckets));
	if (!buckets)
		return NULL;
	for (i = 0; i < n; i++)
		p4u_list_init(&buckets[i]);
	return buckets;
}

int p4u_hash_init(struct p4u_hash *hash, size_t expected)
{
	uint64_t n = p4u_roundup_pow2(P4U_MAX(expected, P4U_HASH_MIN_BUCKETS));

	/* 0: no power of two that large; beyond SIZE_MAX / 16: size wraps */
	if (!n || n > SIZE_MAX / sizeof(*hash->buckets))
		return -EINVAL;
	hash->buckets = p4u_hash_buckets_alloc(n);
	if (!hash->buckets)
		return -ENOMEM;
	hash->mask = n - 1;
	hash->count = 0;
	return 0;
}

void p4u_hash_fini(struct p4u_hash *hash)
{
	free(hash->buckets);
	hash->buckets = NULL;
	hash->mask = 0;
	hash->count = 0;
}

/*
 * Rehash into twice as many buckets. Old buckets are walked in order and
 * nodes appended at the tail of their new bucket: nodes with equal hashes
 * lived in the same old bucket in insertion order and keep that order.
 */
static void p4u_hash_grow(struct p4u_hash *hash)
{
	size_t old_n = hash->mask + 1, new_n = old_n * 2, i;
	struct p4u_list *buckets, *node, *tmp;

	if (new_n < old_n)
		return;
	buckets = p4u_hash_buckets_alloc(new_n);
	if (!buckets)
		return;
	for (i = 0; i < old_n; i++) {
		p4u_list_foreach_safe(&hash->buckets[i], node, tmp) {
			struct p4u_hash_node *hn =
				container_of(node, struct p4u_hash_node, link);
			p4u_list_insert_tail(&buckets[hn->hash & (new_n - 1)],
					     node);
		}
	}
	free(hash->buckets);
	hash->buckets = buckets;
	hash->mask = new_n - 1;
}

void p4u_hash_insert(struct p4u_hash *hash, struct p4u_hash_node *node,
		     uint64_t hval)
{
	if (hash->count >= 2 * (hash->mask + 1))
		p4u_hash_grow(hash);
	node->hash = hval;
	p4u_list_insert_tail(p4u_hash_bucket(hash, hval), &node->link);
	hash->count++;
}

/*
 * A node that is on no bucket (already removed: p4u_list_remove left it
 * self-linked) is ignored, so a second remove cannot wrap the count.
 */
void p4u_hash_remove(struct p4u_hash *hash, struct p4u_hash_node *node)
{
	if (!p4u_list_node_linked(&node->link))
		return;
	p4u_list_remove(&node->link);
	hash->count--;
}
