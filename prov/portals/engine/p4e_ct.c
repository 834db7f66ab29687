/*
 * p4e_ct.c - counting events: {success, failure} pairs in the domain, the
 * libfabric counters of the provider. Every change collects the triggered
 * operations that became due (p4e_trig.c) and notifies the owner; the API
 * calls then run what is due before returning, while counts made inside
 * the engine's own processing leave it to the end of progress, so a
 * triggered operation never runs in the middle of another one.
 */
#include <config.h>

#include "p4e_priv.h"

struct p4e_ct *p4e_ct_lookup(struct p4e_dom *dom, uint64_t ct)
{
	if (!dom || ct == P4E_HANDLE_NONE)
		return NULL;
	return p4u_pool_lookup(&dom->cts, ct);
}

static void p4e_ct_changed(struct p4e_dom *dom, struct p4e_ct *ct)
{
	p4e_trig_collect(dom, ct);
	if (ct->notify)
		ct->notify(ct->notify_ctx, p4u_pool_handle(&dom->cts, ct));
}

void p4e_ct_count(struct p4e_dom *dom, struct p4e_ct *ct, bool ok, bool bytes,
		  uint64_t mlength)
{
	if (!ct)
		return;
	if (ok)
		ct->val.success += bytes ? mlength : 1;
	else
		ct->val.failure += 1;
	p4e_ct_changed(dom, ct);
}

int p4e_ct_alloc(struct p4e_dom *dom, uint64_t *ct_p)
{
	struct p4e_ct *ct;

	if (!dom || !ct_p)
		return -FI_EINVAL;
	ct = p4u_pool_alloc(&dom->cts);
	if (!ct)
		return -FI_ENOSPC;
	p4u_list_init(&ct->trig_sum);
	p4u_list_init(&ct->trig_success);
	*ct_p = p4u_pool_handle(&dom->cts, ct);
	return 0;
}

int p4e_ct_free(struct p4e_dom *dom, uint64_t handle)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct)
		return -FI_EINVAL;
	p4e_trig_drop_ct(dom, ct);
	p4u_pool_free(&dom->cts, ct);
	return 0;
}

int p4e_ct_get(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event *ev)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct || !ev)
		return -FI_EINVAL;
	*ev = ct->val;
	return 0;
}

int p4e_ct_set(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event ev)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct)
		return -FI_EINVAL;
	ct->val = ev;
	p4e_ct_changed(dom, ct);
	p4e_trig_run_due(dom);
	return 0;
}

int p4e_ct_inc(struct p4e_dom *dom, uint64_t handle, struct p4e_ct_event inc)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct)
		return -FI_EINVAL;
	ct->val.success += inc.success;
	ct->val.failure += inc.failure;
	p4e_ct_changed(dom, ct);
	p4e_trig_run_due(dom);
	return 0;
}

int p4e_ct_cancel_triggered(struct p4e_dom *dom, uint64_t handle)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct)
		return -FI_EINVAL;
	p4e_trig_drop_ct(dom, ct);
	return 0;
}

int p4e_ct_set_notify(struct p4e_dom *dom, uint64_t handle,
		      p4e_ct_notify_func_t fn, void *ctx)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, handle);

	if (!ct)
		return -FI_EINVAL;
	ct->notify = fn;
	ct->notify_ctx = ctx;
	return 0;
}
