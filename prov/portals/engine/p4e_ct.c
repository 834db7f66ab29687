/*
 * p4e_ct.c - counting events: {success, failure} pairs in the domain, the
 * libfabric counters of the provider. Every function takes the domain
 * lock; every change collects the triggered operations that became due
 * (p4e_trig.c: an NI operation waits for its worker's progress, so one
 * never runs in the middle of another operation, or under this lock) and
 * notifies the owner, under the lock.
 */
#include <config.h>

#include "p4e_priv.h"

struct p4e_ct *p4e_ct_lookup(struct p4e_dom *dom, uint64_t ct)
{
	if (!dom || ct == P4E_HANDLE_NONE)
		return NULL;
	return p4u_pool_lookup(&dom->cts, ct);
}

bool p4e_ct_exists(struct p4e_dom *dom, uint64_t handle)
{
	bool ret;

	p4u_lock_acquire(&dom->lock);
	ret = p4e_ct_lookup(dom, handle) != NULL;
	p4u_lock_release(&dom->lock);
	return ret;
}

/* dom->lock held */
static void p4e_ct_changed(struct p4e_dom *dom, struct p4e_ct *ct)
{
	p4e_trig_collect(dom, ct);
	if (ct->notify)
		ct->notify(ct->notify_ctx, p4u_pool_handle(&dom->cts, ct),
			   &ct->val);
}

void p4e_ct_count(struct p4e_dom *dom, uint64_t handle, bool ok, bool bytes,
		  uint64_t mlength)
{
	struct p4e_ct *ct;

	if (handle == P4E_HANDLE_NONE)
		return;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		if (ok)
			ct->val.success += bytes ? mlength : 1;
		else
			ct->val.failure += 1;
		p4e_ct_changed(dom, ct);
	}
	p4u_lock_release(&dom->lock);
}

int p4e_ct_alloc(struct p4e_dom *dom, uint64_t *ct_p)
{
	struct p4e_ct *ct;

	if (!dom || !ct_p)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4u_pool_alloc(&dom->cts);
	if (ct) {
		p4u_list_init(&ct->trig_sum);
		p4u_list_init(&ct->trig_success);
		*ct_p = p4u_pool_handle(&dom->cts, ct);
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_ENOSPC;
}

int p4e_ct_free(struct p4e_dom *dom, uint64_t handle)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		p4e_trig_drop_ct(dom, ct);
		p4u_pool_free(&dom->cts, ct);
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_get(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event *ev)
{
	struct p4e_ct *ct;

	if (!dom || !ev)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct)
		*ev = ct->val;
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_set(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event ev)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		ct->val = ev;
		p4e_ct_changed(dom, ct);
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_set_one(struct p4e_dom *dom, uint64_t handle, uint64_t value,
		   bool failure)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		if (failure)
			ct->val.failure = value;
		else
			ct->val.success = value;
		p4e_ct_changed(dom, ct);
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_inc(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event inc)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		ct->val.success += inc.success;
		ct->val.failure += inc.failure;
		p4e_ct_changed(dom, ct);
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_cancel_triggered(struct p4e_dom *dom, uint64_t handle)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct)
		p4e_trig_drop_ct(dom, ct);
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}

int p4e_ct_set_notify(struct p4e_dom *dom, uint64_t handle,
		      p4e_ct_notify_func_t fn, void *ctx)
{
	struct p4e_ct *ct;

	if (!dom)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, handle);
	if (ct) {
		ct->notify = fn;
		ct->notify_ctx = ctx;
	}
	p4u_lock_release(&dom->lock);
	return ct ? 0 : -FI_EINVAL;
}
