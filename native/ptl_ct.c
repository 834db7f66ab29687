/*
 * ptl_ct.c - counting events (PtlCTAlloc/Free/Get/Wait/Poll/Set/Inc/
 * CancelTriggered and the triggered PtlTriggeredCTInc/CTSet) on the
 * engine's CTs, which belong to the NI's engine domain.
 */
#include <string.h>

#include "ptl_priv.h"

/*
 * After every change of a CT's value, under the engine domain's lock: no
 * engine call here, only the waiters' eventfds. The library lock is held
 * too (every engine call of the library is made under it, the worker's
 * progress included), which guards the waiter list.
 */
void ptl_ct_notify(void *ctx, uint64_t ct, const struct p4e_ct_event *val)
{
	(void)ctx;
	(void)ct;
	(void)val;
	ptl_wake_locked();
}

/* PTL_CT_NONE -> P4E_HANDLE_NONE; a bad handle -> -FI_EINVAL. */
int ptl_ct_lookup(struct ptl_ni *ni, ptl_handle_ct_t h, uint64_t *ct_p)
{
	struct ptl_slot *slot;

	if (h == PTL_CT_NONE) {
		*ct_p = P4E_HANDLE_NONE;
		return 0;
	}
	slot = ptl_tab_get(&ni->cts, h);
	if (!slot || ptl_h_kind(h) != ni->kind)
		return -FI_EINVAL;
	*ct_p = slot->eh;
	return 0;
}

/* Lock and look up a CT: PTL_OK with the NI and engine handle. */
static int ptl_ct_enter(ptl_handle_ct_t h, struct ptl_ni **ni_p,
			uint64_t *ct_p)
{
	struct ptl_slot *slot;
	int ret = ptl_obj_enter(h, PTL_HT_CT, ni_p, &slot);

	if (ret)
		return ret;
	*ct_p = slot->eh;
	return PTL_OK;
}

PTL_EXPORT int PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle)
{
	struct ptl_ni *ni;
	uint64_t ct;
	uint32_t h;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!ct_handle) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (ptl_tab_alloc(&ni->cts, ni->kind, &h)) {
		ret = PTL_NO_SPACE;
		goto out;
	}
	ret = ptl_errno(p4e_ct_alloc(ni->dom, &ct));
	if (ret) {
		ptl_tab_free(&ni->cts, h);
		goto out;
	}
	p4e_ct_set_notify(ni->dom, ct, ptl_ct_notify, ni);
	ptl_tab_get(&ni->cts, h)->eh = ct;
	*ct_handle = h;
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTFree(ptl_handle_ct_t ct_handle)
{
	struct ptl_ni *ni;
	uint64_t ct;
	int ret = ptl_ct_enter(ct_handle, &ni, &ct);

	if (ret)
		return ret;
	ret = ptl_errno(p4e_ct_free(ni->dom, ct));
	if (!ret)
		ptl_tab_free(&ni->cts, ct_handle);
	/* waiters on it must notice it is gone */
	ptl_wake_locked();
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTCancelTriggered(ptl_handle_ct_t ct_handle)
{
	struct ptl_ni *ni;
	uint64_t ct;
	int ret = ptl_ct_enter(ct_handle, &ni, &ct);

	if (ret)
		return ret;
	ret = ptl_errno(p4e_ct_cancel_triggered(ni->dom, ct));
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTGet(ptl_handle_ct_t ct_handle, ptl_ct_event_t *event)
{
	struct p4e_ct_event ev;
	struct ptl_ni *ni;
	uint64_t ct;
	int ret = ptl_ct_enter(ct_handle, &ni, &ct);

	if (ret)
		return ret;
	if (!event) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	ret = ptl_errno(p4e_ct_get(ni->dom, ct, &ev));
	if (!ret) {
		event->success = ev.success;
		event->failure = ev.failure;
	}
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTPoll(const ptl_handle_ct_t *ct_handles,
			 const ptl_size_t *tests, unsigned int size,
			 ptl_time_t timeout, ptl_ct_event_t *event,
			 unsigned int *which)
{
	uint64_t deadline = ptl_deadline(timeout);
	struct p4e_ct_event ev;
	struct ptl_slot *slot;
	struct ptl_ni *ni = NULL;
	uint32_t abort_gen;
	unsigned i;
	int ret = ptl_enter();

	if (ret)
		return ret;
	if (!ct_handles || !tests || !size || !event || !which) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (ptl_lib.aborted) {
		ret = PTL_ABORTED;	/* at once, whatever is there */
		goto out;
	}
	abort_gen = ptl_lib.abort_gen;
	for (;;) {
		for (i = 0; i < size; i++) {
			slot = ptl_obj_lookup(ct_handles[i], PTL_HT_CT, &ni);
			if (!slot || p4e_ct_get(ni->dom, slot->eh, &ev)) {
				ret = PTL_ARG_INVALID;
				goto out;
			}
			if (ev.success + ev.failure >= tests[i]) {
				event->success = ev.success;
				event->failure = ev.failure;
				*which = i;
				ret = PTL_OK;
				goto out;
			}
		}
		if (!ptl_poll_idle_locked(abort_gen, deadline,
					  PTL_CT_NONE_REACHED, &ret))
			goto out;
	}
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTWait(ptl_handle_ct_t ct_handle, ptl_size_t test,
			 ptl_ct_event_t *event)
{
	unsigned which;

	return PtlCTPoll(&ct_handle, &test, 1, PTL_TIME_FOREVER, event, &which);
}

/* Both CTs must be of one NI: triggered work lives in its domain. */
static int ptl_ct_trig_enter(ptl_handle_ct_t ct_handle,
			     ptl_handle_ct_t trig_ct_handle, struct ptl_ni **ni_p,
			     uint64_t *ct_p, struct p4e_trig *trig,
			     ptl_size_t threshold)
{
	struct ptl_ni *ni;
	uint64_t tct;
	int ret = ptl_ct_enter(ct_handle, &ni, ct_p);

	if (ret)
		return ret;
	if (ptl_h_kind(trig_ct_handle) != ni->kind ||
	    trig_ct_handle == PTL_CT_NONE ||
	    ptl_ct_lookup(ni, trig_ct_handle, &tct)) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	memset(trig, 0, sizeof(*trig));
	trig->ct = tct;
	trig->threshold = threshold;
	*ni_p = ni;
	return PTL_OK;
}

/* PtlCTSet/PtlCTInc and, when triggered, their triggered forms. */
static int ptl_ct_update(ptl_handle_ct_t ct_handle, ptl_ct_event_t val,
			 bool inc, ptl_handle_ct_t trig_ct_handle,
			 ptl_size_t threshold, bool triggered)
{
	struct p4e_ct_event ev = { val.success, val.failure };
	struct p4e_trig trig;
	struct ptl_ni *ni;
	uint64_t ct;
	int ret;

	if (triggered)
		ret = ptl_ct_trig_enter(ct_handle, trig_ct_handle, &ni, &ct,
					&trig, threshold);
	else
		ret = ptl_ct_enter(ct_handle, &ni, &ct);
	if (ret)
		return ret;
	if (triggered)
		ret = inc ? p4e_trig_ct_inc(ni->dom, ct, ev, &trig) :
			    p4e_trig_ct_set(ni->dom, ct, ev, &trig);
	else
		ret = inc ? p4e_ct_inc(ni->dom, ct, ev) :
			    p4e_ct_set(ni->dom, ct, ev);
	/* what the change made due fires before the call returns */
	if (!ret)
		p4e_worker_run_triggered(p4e_ni_worker(ni->eni));
	ret = ptl_errno(ret);
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct)
{
	return ptl_ct_update(ct_handle, new_ct, false, PTL_CT_NONE, 0, false);
}

PTL_EXPORT int PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment)
{
	return ptl_ct_update(ct_handle, increment, true, PTL_CT_NONE, 0,
			     false);
}

PTL_EXPORT int PtlTriggeredCTInc(ptl_handle_ct_t ct_handle,
				 ptl_ct_event_t increment,
				 ptl_handle_ct_t trig_ct_handle,
				 ptl_size_t threshold)
{
	return ptl_ct_update(ct_handle, increment, true, trig_ct_handle,
			     threshold, true);
}

PTL_EXPORT int PtlTriggeredCTSet(ptl_handle_ct_t ct_handle,
				 ptl_ct_event_t new_ct,
				 ptl_handle_ct_t trig_ct_handle,
				 ptl_size_t threshold)
{
	return ptl_ct_update(ct_handle, new_ct, false, trig_ct_handle,
			     threshold, true);
}
