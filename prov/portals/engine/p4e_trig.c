/*
 * p4e_trig.c - triggered operations (Bull's software Portals 4.3 showed
 * the shape): each CT keeps its pending ops sorted by threshold, FIFO
 * among equal thresholds (a post sequence number breaks ties), in two
 * lists for the two rules (success + failure for Portals and libfabric
 * deferred work; success only for libfabric's FI_TRIGGER flag). Arguments
 * are copied at post; buffers are read when the op fires. A counter
 * update only *collects* what became due onto the domain's due list; the
 * due list runs after the counter's own work is done (pitfall 10), in
 * collection order, and an op the transport cannot take yet (-FI_EAGAIN)
 * stays at the head until the next progress.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4e_priv.h"

static bool p4e_trig_due(const struct p4e_ct *ct, const struct p4e_trig_op *t)
{
	uint64_t value = ct->val.success;

	if (!(t->flags & P4E_TRIG_SUCCESS_ONLY))
		value += ct->val.failure;
	return value >= t->threshold;
}

static bool p4e_trig_before(const struct p4e_trig_op *a,
			    const struct p4e_trig_op *b)
{
	return a->threshold < b->threshold ||
	       (a->threshold == b->threshold && a->seq < b->seq);
}

/* Insert keeping threshold order, after every op with an equal one. */
static void p4e_trig_insert(struct p4u_list *list, struct p4e_trig_op *t)
{
	struct p4u_list *pos = list->prev;

	while (pos != list &&
	       container_of(pos, struct p4e_trig_op, link)->threshold >
		       t->threshold)
		pos = pos->prev;
	p4u_list_insert_between(&t->link, pos, pos->next);
}

void p4e_trig_collect(struct p4e_dom *dom, struct p4e_ct *ct)
{
	struct p4e_trig_op *a, *b, *t;

	for (;;) {
		a = p4u_list_first_entry(&ct->trig_sum, struct p4e_trig_op,
					 link);
		b = p4u_list_first_entry(&ct->trig_success, struct p4e_trig_op,
					 link);
		if (a && !p4e_trig_due(ct, a))
			a = NULL;
		if (b && !p4e_trig_due(ct, b))
			b = NULL;
		if (!a && !b)
			return;
		t = !b || (a && p4e_trig_before(a, b)) ? a : b;
		p4u_list_remove(&t->link);
		p4u_list_insert_tail(&dom->trig_due, &t->link);
	}
}

static void p4e_trig_free(struct p4e_dom *dom, struct p4e_trig_op *t)
{
	struct p4e_md *md;

	/* the MDs were held so they could not be released under us; only
	 * fetching ops hold a get_md (a put's xfer may name one anyway) */
	if (t->kind <= P4E_TRIG_SWAP) {
		md = p4u_pool_lookup(&t->ni->mds, t->xfer.md);
		if (md)
			md->pending--;
	}
	if (t->kind == P4E_TRIG_FETCH || t->kind == P4E_TRIG_SWAP) {
		md = p4u_pool_lookup(&t->ni->mds, t->xfer.get_md);
		if (md)
			md->pending--;
	}
	free((void *)t->xfer.iov);
	p4u_pool_free(&dom->trigs, t);
}

static void p4e_trig_drop_list(struct p4e_dom *dom, struct p4u_list *list)
{
	struct p4e_trig_op *t, *tmp;

	p4u_list_foreach_entry_safe(list, t, tmp, struct p4e_trig_op, link) {
		p4u_list_remove(&t->link);
		if (t->kind == P4E_TRIG_ME_APPEND)
			p4e_me_trig_cancel(t->ni, t->me);
		p4e_trig_free(dom, t);
	}
}

void p4e_trig_drop_ct(struct p4e_dom *dom, struct p4e_ct *ct)
{
	p4e_trig_drop_list(dom, &ct->trig_sum);
	p4e_trig_drop_list(dom, &ct->trig_success);
}

void p4e_trig_drop_ni(struct p4e_dom *dom, struct p4e_ni *ni)
{
	struct p4e_trig_op *t, *tmp;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&dom->cts); i++) {
		struct p4e_ct *ct = p4u_pool_at(&dom->cts, i);

		if (!ct)
			continue;
		p4u_list_foreach_entry_safe(&ct->trig_sum, t, tmp,
					    struct p4e_trig_op, link)
			if (t->ni == ni) {
				p4u_list_remove(&t->link);
				p4e_trig_free(dom, t);
			}
		p4u_list_foreach_entry_safe(&ct->trig_success, t, tmp,
					    struct p4e_trig_op, link)
			if (t->ni == ni) {
				p4u_list_remove(&t->link);
				p4e_trig_free(dom, t);
			}
	}
	p4u_list_foreach_entry_safe(&dom->trig_due, t, tmp, struct p4e_trig_op,
				    link)
		if (t->ni == ni) {
			p4u_list_remove(&t->link);
			p4e_trig_free(dom, t);
		}
}

static const uint8_t p4e_trig_wire_type[] = {
	[P4E_TRIG_PUT] = P4W_PUT,
	[P4E_TRIG_GET] = P4W_GET,
	[P4E_TRIG_ATOMIC] = P4W_ATOMIC,
	[P4E_TRIG_FETCH] = P4W_FETCH,
	[P4E_TRIG_SWAP] = P4W_SWAP,
};

/* Run one due op: 0 done (or failed for good), -FI_EAGAIN retry later. */
static int p4e_trig_fire(struct p4e_dom *dom, struct p4e_trig_op *t)
{
	struct p4e_ct *ct;
	int ret = 0;

	switch (t->kind) {
	case P4E_TRIG_PUT:
	case P4E_TRIG_GET:
	case P4E_TRIG_ATOMIC:
	case P4E_TRIG_FETCH:
	case P4E_TRIG_SWAP:
		ret = p4e_ini_post(t->ni, p4e_trig_wire_type[t->kind],
				   &t->xfer);
		break;
	case P4E_TRIG_CT_INC:
	case P4E_TRIG_CT_SET:
		ct = p4e_ct_lookup(dom, t->target_ct);
		if (!ct)
			break;	/* freed meanwhile: nothing to do */
		if (t->kind == P4E_TRIG_CT_SET &&
		    (t->flags & P4E_TRIG_SET_SUCCESS)) {
			ct->val.success = t->ct_val.success;
		} else if (t->kind == P4E_TRIG_CT_SET) {
			ct->val = t->ct_val;
		} else {
			ct->val.success += t->ct_val.success;
			ct->val.failure += t->ct_val.failure;
		}
		p4e_trig_collect(dom, ct);
		if (ct->notify)
			ct->notify(ct->notify_ctx, t->target_ct);
		break;
	case P4E_TRIG_ME_APPEND:
		ret = p4e_me_trig_link(t->ni, t->me);
		break;
	case P4E_TRIG_ME_UNLINK:
		ret = p4e_me_unlink(t->ni, t->me, 0);
		if (ret == -FI_EBUSY)
			ret = -FI_EAGAIN;
		break;
	}
	if (ret && ret != -FI_EAGAIN) {
		p4u_warn(P4U_LOG_ENGINE, "triggered operation %d failed: %d",
			 t->kind, ret);
		ret = 0;
	}
	return ret;
}

void p4e_trig_run_due(struct p4e_dom *dom)
{
	struct p4e_trig_op *t;

	/* ops fired from here may count on CTs: they only collect */
	if (dom->trig_running)
		return;
	dom->trig_running = true;
	while ((t = p4u_list_first_entry(&dom->trig_due, struct p4e_trig_op,
					 link))) {
		if (p4e_trig_fire(dom, t) == -FI_EAGAIN)
			break;
		p4u_list_remove(&t->link);
		p4e_trig_free(dom, t);
	}
	dom->trig_running = false;
}

/* ---- posting ------------------------------------------------------------ */

static int p4e_trig_post(struct p4e_dom *dom, struct p4e_trig_op *t,
			 const struct p4e_trig *trig)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, trig->ct);

	if (!ct || (trig->flags &
		    ~(unsigned)(P4E_TRIG_SUCCESS_ONLY | P4E_TRIG_SET_SUCCESS)) ||
	    ((trig->flags & P4E_TRIG_SET_SUCCESS) &&
	     t->kind != P4E_TRIG_CT_SET)) {
		free((void *)t->xfer.iov);
		p4u_pool_free(&dom->trigs, t);
		return -FI_EINVAL;
	}
	t->ct = trig->ct;
	t->threshold = trig->threshold;
	t->flags = trig->flags;
	t->seq = dom->trig_seq++;
	p4e_trig_insert(t->flags & P4E_TRIG_SUCCESS_ONLY ? &ct->trig_success :
							    &ct->trig_sum, t);
	/* already met: fires before the call returns (pitfall 9) */
	p4e_trig_collect(dom, ct);
	p4e_trig_run_due(dom);
	return 0;
}

static int p4e_trig_xfer(struct p4e_ni *ni, enum p4e_trig_kind kind,
			 const struct p4e_xfer *xfer,
			 const struct p4e_trig *trig)
{
	struct p4e_dom *dom;
	struct p4e_trig_op *t;
	struct p4e_md *md, *get_md = NULL;
	int ret;

	if (!ni || !xfer || !trig)
		return -FI_EINVAL;
	dom = ni->dom;
	ret = p4e_ini_check(ni, p4e_trig_wire_type[kind], xfer);
	if (ret)
		return ret;
	t = p4u_pool_alloc(&dom->trigs);
	if (!t)
		return -FI_ENOSPC;
	t->kind = kind;
	t->ni = ni;
	t->xfer = *xfer;
	/* the caller's iovec array may be gone when the op fires */
	if (xfer->iovcnt) {
		struct iovec *iov = malloc(xfer->iovcnt * sizeof(*iov));

		if (!iov) {
			p4u_pool_free(&dom->trigs, t);
			return -FI_ENOMEM;
		}
		memcpy(iov, xfer->iov, xfer->iovcnt * sizeof(*iov));
		t->xfer.iov = iov;
	}
	md = p4u_pool_lookup(&ni->mds, xfer->md);
	if (md)
		md->pending++;
	if (kind == P4E_TRIG_FETCH || kind == P4E_TRIG_SWAP) {
		get_md = p4u_pool_lookup(&ni->mds, xfer->get_md);
		if (get_md)
			get_md->pending++;
	}
	ret = p4e_trig_post(dom, t, trig);
	if (ret) {
		if (md)
			md->pending--;
		if (get_md)
			get_md->pending--;
	}
	return ret;
}

int p4e_trig_put(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		 const struct p4e_trig *trig)
{
	return p4e_trig_xfer(ni, P4E_TRIG_PUT, xfer, trig);
}

int p4e_trig_get(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		 const struct p4e_trig *trig)
{
	return p4e_trig_xfer(ni, P4E_TRIG_GET, xfer, trig);
}

int p4e_trig_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		    const struct p4e_trig *trig)
{
	return p4e_trig_xfer(ni, P4E_TRIG_ATOMIC, xfer, trig);
}

int p4e_trig_fetch_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer,
			  const struct p4e_trig *trig)
{
	return p4e_trig_xfer(ni, P4E_TRIG_FETCH, xfer, trig);
}

int p4e_trig_swap(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		  const struct p4e_trig *trig)
{
	return p4e_trig_xfer(ni, P4E_TRIG_SWAP, xfer, trig);
}

static int p4e_trig_ct(struct p4e_dom *dom, enum p4e_trig_kind kind,
		       uint64_t ct, struct p4e_ct_event val,
		       const struct p4e_trig *trig)
{
	struct p4e_trig_op *t;

	if (!dom || !trig || !p4e_ct_lookup(dom, ct))
		return -FI_EINVAL;
	t = p4u_pool_alloc(&dom->trigs);
	if (!t)
		return -FI_ENOSPC;
	t->kind = kind;
	t->target_ct = ct;
	t->ct_val = val;
	return p4e_trig_post(dom, t, trig);
}

int p4e_trig_ct_inc(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event inc,
		    const struct p4e_trig *trig)
{
	return p4e_trig_ct(dom, P4E_TRIG_CT_INC, ct, inc, trig);
}

int p4e_trig_ct_set(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event ev,
		    const struct p4e_trig *trig)
{
	return p4e_trig_ct(dom, P4E_TRIG_CT_SET, ct, ev, trig);
}

int p4e_trig_me_append(struct p4e_ni *ni, uint32_t pt_index,
		       const struct p4e_me_desc *desc, enum p4e_list list,
		       void *user_ptr, uint64_t user_flags,
		       const struct p4e_trig *trig, uint64_t *me_p)
{
	struct p4e_trig_op *t;
	uint64_t me;
	int ret;

	if (!ni || !trig || !me_p)
		return -FI_EINVAL;
	ret = p4e_me_trig_create(ni, pt_index, desc, list, user_ptr,
				 user_flags, &me);
	if (ret)
		return ret;
	t = p4u_pool_alloc(&ni->dom->trigs);
	if (!t) {
		p4e_me_trig_cancel(ni, me);
		return -FI_ENOSPC;
	}
	t->kind = P4E_TRIG_ME_APPEND;
	t->ni = ni;
	t->me = me;
	ret = p4e_trig_post(ni->dom, t, trig);
	if (ret) {
		p4e_me_trig_cancel(ni, me);
		return ret;
	}
	*me_p = me;
	return 0;
}

int p4e_trig_me_unlink(struct p4e_ni *ni, uint64_t me,
		       const struct p4e_trig *trig)
{
	struct p4e_trig_op *t;

	if (!ni || !trig || !p4u_pool_lookup(&ni->mes, me))
		return -FI_EINVAL;
	t = p4u_pool_alloc(&ni->dom->trigs);
	if (!t)
		return -FI_ENOSPC;
	t->kind = P4E_TRIG_ME_UNLINK;
	t->ni = ni;
	t->me = me;
	return p4e_trig_post(ni->dom, t, trig);
}
