/*
 * p4e_eq.c - event delivery helpers and the ring-buffer event queue with
 * Portals' PTL_EQ_DROPPED semantics (a full ring overwrites its oldest
 * event, and the next read reports that events were lost).
 */
#include <config.h>

#include <stdlib.h>

#include "p4e_priv.h"

void p4e_event_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	if (eq)
		eq->ops->deliver(eq, ev);
}

size_t p4e_eq_space(struct p4e_eq *eq)
{
	if (!eq || !eq->ops->space)
		return SIZE_MAX;
	return eq->ops->space(eq);
}

struct p4e_eq_ring {
	struct p4e_eq eq;
	size_t size;
	size_t head;		/* next to read */
	size_t count;
	bool dropped;		/* events were overwritten since last read */
	struct p4e_event *ring;
};

static void p4e_eq_ring_deliver(struct p4e_eq *eq, const struct p4e_event *ev)
{
	struct p4e_eq_ring *r = container_of(eq, struct p4e_eq_ring, eq);

	if (r->count == r->size) {
		/* overwrite the oldest: the reader will see EQ_DROPPED */
		r->head = (r->head + 1) % r->size;
		r->count--;
		r->dropped = true;
	}
	r->ring[(r->head + r->count) % r->size] = *ev;
	r->count++;
}

static size_t p4e_eq_ring_space(struct p4e_eq *eq)
{
	struct p4e_eq_ring *r = container_of(eq, struct p4e_eq_ring, eq);

	return r->size - r->count;
}

static const struct p4e_eq_ops p4e_eq_ring_ops = {
	.deliver = p4e_eq_ring_deliver,
	.space = p4e_eq_ring_space,
};

int p4e_eq_ring_create(size_t size, struct p4e_eq **eq_p)
{
	struct p4e_eq_ring *r;

	if (!size || !eq_p)
		return -FI_EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	r->ring = calloc(size, sizeof(*r->ring));
	if (!r->ring) {
		free(r);
		return -FI_ENOMEM;
	}
	r->size = size;
	r->eq.ops = &p4e_eq_ring_ops;
	*eq_p = &r->eq;
	return 0;
}

/* The ring behind eq, or NULL if eq is some other sink. */
static struct p4e_eq_ring *p4e_eq_ring_of(struct p4e_eq *eq)
{
	if (!eq || eq->ops != &p4e_eq_ring_ops)
		return NULL;
	return container_of(eq, struct p4e_eq_ring, eq);
}

void p4e_eq_ring_destroy(struct p4e_eq *eq)
{
	struct p4e_eq_ring *r = p4e_eq_ring_of(eq);

	if (!r)
		return;
	free(r->ring);
	free(r);
}

int p4e_eq_ring_get(struct p4e_eq *eq, struct p4e_event *ev)
{
	struct p4e_eq_ring *r = p4e_eq_ring_of(eq);
	bool dropped;

	if (!r || !ev)
		return -FI_EINVAL;
	if (!r->count)
		return -FI_EAGAIN;
	*ev = r->ring[r->head];
	r->head = (r->head + 1) % r->size;
	r->count--;
	dropped = r->dropped;
	r->dropped = false;
	return dropped ? P4E_EQ_DROPPED : 0;
}
