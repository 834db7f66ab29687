/*
 * ptl_eq.c - event queues (PtlEQAlloc/Free/Get/Wait/Poll): a ring of full
 * ptl_event_t filled by the engine's sink, with PTL_EQ_DROPPED when a
 * queue that no flow-controlled PT protects overflows; and the per-PT sink
 * that forwards to it and learns when entries are unlinked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptl_priv.h"

static struct ptl_eq *ptl_eq_of(struct p4e_eq *base)
{
	return (struct ptl_eq *)base;	/* base is the first member */
}

static void ptl_event_convert(struct ptl_ni *ni, const struct p4e_event *in,
			      ptl_event_t *out)
{
	memset(out, 0, sizeof(*out));
	out->start = in->start;
	out->user_ptr = in->user_ptr;
	out->hdr_data = in->hdr_data;
	out->match_bits = in->match_bits;
	out->rlength = in->rlength;
	out->mlength = in->mlength;
	out->remote_offset = in->remote_offset;
	out->initiator = ptl_ni_initiator(ni, in->initiator);
	out->uid = in->uid;
	out->pt_index = in->pt_index;
	out->type = in->type;		/* same values as P4E_EVENT_* */
	out->ptl_list = in->list;
	/* P4E_NI_* match PTL_NI_* up to SEGV; CANCELED is never asked for */
	out->ni_fail_type = in->ni_fail_type <= PTL_NI_SEGV ?
			    in->ni_fail_type : PTL_NI_UNDELIVERABLE;
	out->atomic_operation = in->atomic_op;
	out->atomic_type = in->atomic_type;
}

/* Lock held (sinks run inside engine calls). Overwrites when full. */
static void ptl_eq_deliver(struct p4e_eq *base, const struct p4e_event *ev)
{
	struct ptl_eq *eq = ptl_eq_of(base);

	if (eq->freed)
		return;		/* its owner freed it: nobody would read it */
	if (eq->count == eq->size) {
		eq->head = (eq->head + 1) % eq->size;
		eq->count--;
		eq->dropped = true;
	}
	ptl_event_convert(eq->ni, ev, &eq->ring[(eq->head + eq->count) %
						eq->size]);
	eq->count++;
	ptl_wake_locked();
}

static size_t ptl_eq_space(struct p4e_eq *base)
{
	struct ptl_eq *eq = ptl_eq_of(base);

	/* a freed one takes everything (and drops it): no flow control */
	return eq->freed ? SIZE_MAX : (size_t)(eq->size - eq->count);
}

static const struct p4e_eq_ops ptl_eq_ops = {
	.deliver = ptl_eq_deliver,
	.space = ptl_eq_space,
};

/* ---- per-PT sink -------------------------------------------------------- */

static void ptl_pt_sink_deliver(struct p4e_eq *base,
				const struct p4e_event *ev)
{
	struct ptl_pt_sink *sink = (struct ptl_pt_sink *)base;

	if (ev->type == P4E_EVENT_AUTO_UNLINK ||
	    ev->type == P4E_EVENT_AUTO_FREE) {
		if (ev->type == P4E_EVENT_AUTO_UNLINK)
			ptl_me_unlinked_locked(sink->ni, ev->user_flags);
		if (ev->user_flags & PTL_ME_UF_NO_UNLINK_EV)
			return;
	}
	if (sink->eq)
		ptl_eq_deliver(&sink->eq->base, ev);
}

static size_t ptl_pt_sink_space(struct p4e_eq *base)
{
	struct ptl_pt_sink *sink = (struct ptl_pt_sink *)base;

	return sink->eq ? ptl_eq_space(&sink->eq->base) : SIZE_MAX;
}

static const struct p4e_eq_ops ptl_pt_sink_ops = {
	.deliver = ptl_pt_sink_deliver,
	.space = ptl_pt_sink_space,
};

void ptl_pt_sink_init(struct ptl_pt_sink *sink, struct ptl_ni *ni)
{
	sink->base.ops = &ptl_pt_sink_ops;
	sink->ni = ni;
	sink->eq = NULL;
	sink->allocated = false;
}

/* ---- API ---------------------------------------------------------------- */

/* PTL_EQ_NONE -> NULL with *ret_p 0; a bad handle -> NULL, ARG_INVALID. */
struct ptl_eq *ptl_eq_lookup(struct ptl_ni *ni, ptl_handle_eq_t h, int *ret_p)
{
	struct ptl_slot *slot;

	*ret_p = PTL_OK;
	if (h == PTL_EQ_NONE)
		return NULL;
	slot = ptl_tab_get(&ni->eqs, h);
	if (!slot || ptl_h_kind(h) != ni->kind) {
		*ret_p = PTL_ARG_INVALID;
		return NULL;
	}
	return slot->obj;
}

PTL_EXPORT int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
			  ptl_handle_eq_t *eq_handle)
{
	struct ptl_eq *eq = NULL;
	struct ptl_ni *ni;
	uint32_t h;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!eq_handle || !count) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (count > ((uint64_t)1 << 26)) {
		ret = PTL_NO_SPACE;
		goto out;
	}
	eq = calloc(1, sizeof(*eq));
	if (eq)
		eq->ring = calloc(count, sizeof(*eq->ring));
	if (!eq || !eq->ring || ptl_tab_alloc(&ni->eqs, ni->kind, &h)) {
		if (eq)
			free(eq->ring);
		free(eq);
		ret = PTL_NO_SPACE;
		goto out;
	}
	eq->base.ops = &ptl_eq_ops;
	eq->ni = ni;
	eq->handle = h;
	eq->size = count;
	ptl_tab_get(&ni->eqs, h)->obj = eq;
	*eq_handle = h;
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlEQFree(ptl_handle_eq_t eq_handle)
{
	struct ptl_ni *ni = NULL;
	uint32_t i;
	struct ptl_slot *slot;
	struct ptl_eq *eq;
	int ret = ptl_obj_enter(eq_handle, PTL_HT_EQ, &ni, &slot);

	if (ret)
		return ret;
	eq = slot->obj;
	ptl_tab_free(&ni->eqs, eq_handle);
	free(eq->ring);
	eq->ring = NULL;
	eq->freed = true;
	/*
	 * PTs and MDs may still name it (the reference header makes that the
	 * user's business and lists no PTL_IN_USE): what they report from
	 * now on is dropped. PT sinks are ours, they let go at once; the
	 * engine's MDs keep the pointer, so the struct waits for the last.
	 */
	for (i = 0; i <= (uint32_t)ni->limits.max_pt_index; i++) {
		if (ni->pts[i].eq == eq) {
			ni->pts[i].eq = NULL;
			eq->refs--;
		}
	}
	if (eq->refs) {
		eq->next_freed = ni->freed_eqs;
		ni->freed_eqs = eq;
	} else {
		free(eq);
	}
	/* waiters on it must notice it is gone */
	ptl_wake_locked();
	ptl_leave();
	return ret;
}

void ptl_eq_unref(struct ptl_ni *ni, struct ptl_eq *eq)
{
	struct ptl_eq **pp;

	if (--eq->refs || !eq->freed)
		return;
	for (pp = &ni->freed_eqs; *pp; pp = &(*pp)->next_freed) {
		if (*pp == eq) {
			*pp = eq->next_freed;
			break;
		}
	}
	free(eq);
}

void ptl_eq_free_all_freed(struct ptl_ni *ni)
{
	struct ptl_eq *eq;

	while ((eq = ni->freed_eqs)) {
		ni->freed_eqs = eq->next_freed;
		free(eq);
	}
}

/* Lock held. PTL_OK / PTL_EQ_DROPPED with *event, or PTL_EQ_EMPTY. */
static int ptl_eq_take_locked(struct ptl_eq *eq, ptl_event_t *event)
{
	bool dropped;

	if (!eq->count)
		return PTL_EQ_EMPTY;
	*event = eq->ring[eq->head];
	eq->head = (eq->head + 1) % eq->size;
	eq->count--;
	dropped = eq->dropped;
	eq->dropped = false;
	return dropped ? PTL_EQ_DROPPED : PTL_OK;
}

PTL_EXPORT int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	struct ptl_slot *slot;
	int ret = ptl_enter();

	if (ret)
		return ret;
	slot = ptl_obj_lookup(eq_handle, PTL_HT_EQ, NULL);
	if (!slot || !event) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	ret = ptl_eq_take_locked(slot->obj, event);
	if (ret == PTL_EQ_EMPTY) {
		/* a cheap call still moves things along */
		ptl_progress_locked();
		slot = ptl_obj_lookup(eq_handle, PTL_HT_EQ, NULL);
		ret = slot ? ptl_eq_take_locked(slot->obj, event) :
			     PTL_ARG_INVALID;
	}
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlEQPoll(const ptl_handle_eq_t *eq_handles, unsigned int size,
			 ptl_time_t timeout, ptl_event_t *event,
			 unsigned int *which)
{
	uint64_t deadline = ptl_deadline(timeout);
	struct ptl_slot *slot;
	uint32_t abort_gen;
	unsigned i, k, start = 0;
	int ret = ptl_enter();

	if (ret)
		return ret;
	if (!eq_handles || !size || !event || !which) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (ptl_lib.aborted) {
		ret = PTL_ABORTED;	/* at once, whatever is there */
		goto out;
	}
	abort_gen = ptl_lib.abort_gen;
	for (;;) {
		/* handles are checked every round: another thread may free */
		for (k = 0; k < size; k++) {
			i = (start + k) % size;
			slot = ptl_obj_lookup(eq_handles[i], PTL_HT_EQ, NULL);
			if (!slot) {
				ret = PTL_ARG_INVALID;
				goto out;
			}
			ret = ptl_eq_take_locked(slot->obj, event);
			if (ret != PTL_EQ_EMPTY) {
				*which = i;
				goto out;
			}
		}
		start = (start + 1) % size;	/* round robin */
		if (!ptl_poll_idle_locked(abort_gen, deadline, PTL_EQ_EMPTY,
					  &ret))
			goto out;
	}
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	unsigned which;

	return PtlEQPoll(&eq_handle, 1, PTL_TIME_FOREVER, event, &which);
}
