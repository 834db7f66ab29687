/*
 * p4e_trig.c - triggered operations (docs/design.md §8): each CT keeps
 * its pending ops sorted by threshold, FIFO among equal thresholds (a post
 * sequence number breaks ties), in two lists for the two rules (success +
 * failure for Portals and libfabric deferred work; success only for
 * libfabric's FI_TRIGGER flag). Arguments are copied at post; buffers are
 * read when the op fires.
 *
 * A counter update only *collects* what became due, under the domain
 * lock: an NI op moves to its NI's due list and runs in that NI's
 * worker's progress, after the work that counted (never in the middle of
 * another operation, never under the domain lock); a counter op (CT inc
 * / set) touches only CTs and is applied at once, in order. An op the
 * transport cannot take yet (-FI_EAGAIN) stays at the head of its list
 * until the next progress. Ops dropped without running (their CT freed,
 * cancelled) are freed under their NI's worker too: at once when the
 * caller holds it, else at its next progress.
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

/* The triggered ops of ni may be touched by the caller now. */
static bool p4e_trig_ni_held(const struct p4e_trig_op *t)
{
	return p4e_worker_held(t->ni->worker);
}

/* An op that runs (or is freed) under its NI's worker joins its list. */
static void p4e_trig_to_ni(struct p4e_trig_op *t)
{
	p4u_list_insert_tail(&t->ni->trig_due, &t->link);
	/* the caller's own worker runs it at its end of progress; another
	 * thread's is woken (it may sleep with nothing else to do) */
	if (!p4e_trig_ni_held(t))
		p4e_worker_kick(t->ni->worker);
}

static void p4e_trig_ct_apply(struct p4e_dom *dom, struct p4e_trig_op *t);
static void p4e_trig_free(struct p4e_dom *dom, struct p4e_trig_op *t);

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
			break;
		t = !b || (a && p4e_trig_before(a, b)) ? a : b;
		p4u_list_remove(&t->link);
		if (t->ni)
			p4e_trig_to_ni(t);
		else
			p4u_list_insert_tail(&dom->ct_due, &t->link);
	}
	/* counter ops change CTs and collect again: one loop applies them
	 * all, in order, however deep the chain */
	if (dom->ct_running)
		return;
	dom->ct_running = true;
	while ((t = p4u_list_first_entry(&dom->ct_due, struct p4e_trig_op,
					 link))) {
		p4u_list_remove(&t->link);
		p4e_trig_ct_apply(dom, t);
		p4e_trig_free(dom, t);
	}
	dom->ct_running = false;
}

/* dom->lock held; NI ops only with their worker held (NI state). */
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

/*
 * dom->lock held, NI op's worker held: free an op that never ran and
 * tell the NI's owner (it may hold a completion slot for it).
 */
static void p4e_trig_discard(struct p4e_dom *dom, struct p4e_trig_op *t)
{
	struct p4e_ni *ni = t->ni;
	struct p4e_me *me;
	void *user_ptr = t->xfer.user_ptr;
	uint64_t user_flags = t->xfer.user_flags;

	if (t->kind == P4E_TRIG_ME_APPEND) {
		me = p4u_pool_lookup(&ni->mes, t->me);
		if (me) {
			user_ptr = me->user_ptr;
			user_flags = me->user_flags;
		}
		p4e_me_trig_cancel(ni, t->me);
	}
	if (ni && !ni->closing && ni->trig_dropped &&
	    t->kind != P4E_TRIG_ME_UNLINK)
		ni->trig_dropped(ni->trig_dropped_ctx, user_ptr, user_flags);
	p4e_trig_free(dom, t);
}

/* dom->lock held: an op leaves its CT list without running. */
static void p4e_trig_drop(struct p4e_dom *dom, struct p4e_trig_op *t)
{
	p4u_list_remove(&t->link);
	if (!t->ni) {
		p4e_trig_free(dom, t);
	} else if (p4e_trig_ni_held(t)) {
		p4e_trig_discard(dom, t);
	} else {
		/* its NI's state is another thread's now: its worker frees */
		t->dropped = true;
		p4e_trig_to_ni(t);
	}
}

static void p4e_trig_drop_list(struct p4e_dom *dom, struct p4u_list *list)
{
	struct p4e_trig_op *t, *tmp;

	p4u_list_foreach_entry_safe(list, t, tmp, struct p4e_trig_op, link)
		p4e_trig_drop(dom, t);
}

void p4e_trig_drop_ct(struct p4e_dom *dom, struct p4e_ct *ct)
{
	p4e_trig_drop_list(dom, &ct->trig_sum);
	p4e_trig_drop_list(dom, &ct->trig_success);
}

int p4e_trig_cancel(struct p4e_dom *dom, const struct p4e_trig *trig)
{
	struct p4e_trig_op *t, *tmp;
	struct p4u_list *lists[2];
	struct p4e_ct *ct;
	int i, n = 0;

	if (!dom || !trig)
		return -FI_EINVAL;
	p4u_lock_acquire(&dom->lock);
	ct = p4e_ct_lookup(dom, trig->ct);
	if (!ct) {
		p4u_lock_release(&dom->lock);
		return -FI_EINVAL;
	}
	lists[0] = &ct->trig_sum;
	lists[1] = &ct->trig_success;
	for (i = 0; i < 2; i++)
		p4u_list_foreach_entry_safe(lists[i], t, tmp,
					    struct p4e_trig_op, link) {
			if (t->cookie != trig->cookie ||
			    t->threshold != trig->threshold)
				continue;
			p4e_trig_drop(dom, t);
			n++;
		}
	p4u_lock_release(&dom->lock);
	return n;
}

void p4e_trig_drop_ni(struct p4e_ni *ni)
{
	struct p4e_dom *dom = ni->dom;
	struct p4e_trig_op *t, *tmp;
	uint32_t i;

	P4E_NI_ASSERT(ni);
	p4u_lock_acquire(&dom->lock);
	for (i = 0; i < p4u_pool_capacity(&dom->cts); i++) {
		struct p4e_ct *ct = p4u_pool_at(&dom->cts, i);

		if (!ct)
			continue;
		p4u_list_foreach_entry_safe(&ct->trig_sum, t, tmp,
					    struct p4e_trig_op, link)
			if (t->ni == ni)
				p4e_trig_drop(dom, t);
		p4u_list_foreach_entry_safe(&ct->trig_success, t, tmp,
					    struct p4e_trig_op, link)
			if (t->ni == ni)
				p4e_trig_drop(dom, t);
	}
	p4u_list_foreach_entry_safe(&ni->trig_due, t, tmp, struct p4e_trig_op,
				    link) {
		p4u_list_remove(&t->link);
		p4e_trig_discard(dom, t);
	}
	p4u_lock_release(&dom->lock);
}

static const uint8_t p4e_trig_wire_type[] = {
	[P4E_TRIG_PUT] = P4W_PUT,
	[P4E_TRIG_GET] = P4W_GET,
	[P4E_TRIG_ATOMIC] = P4W_ATOMIC,
	[P4E_TRIG_FETCH] = P4W_FETCH,
	[P4E_TRIG_SWAP] = P4W_SWAP,
};

/* dom->lock held: a counter op changes its target CT. */
static void p4e_trig_ct_apply(struct p4e_dom *dom, struct p4e_trig_op *t)
{
	struct p4e_ct *ct = p4e_ct_lookup(dom, t->target_ct);

	if (!ct)
		return;	/* freed meanwhile: nothing to do */
	if (t->kind == P4E_TRIG_CT_SET && (t->flags & P4E_TRIG_SET_SUCCESS))
		ct->val.success = t->ct_val.success;
	else if (t->kind == P4E_TRIG_CT_SET)
		ct->val = t->ct_val;
	else {
		ct->val.success += t->ct_val.success;
		ct->val.failure += t->ct_val.failure;
	}
	p4e_trig_collect(dom, ct);
	if (ct->notify)
		ct->notify(ct->notify_ctx, t->target_ct, &ct->val);
}

/* Worker held: run one NI op. 0 done (or failed for good), -FI_EAGAIN. */
static int p4e_trig_fire(struct p4e_trig_op *t)
{
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
	case P4E_TRIG_ME_APPEND:
		ret = p4e_me_trig_link(t->ni, t->me);
		break;
	case P4E_TRIG_ME_UNLINK:
		ret = p4e_me_unlink(t->ni, t->me, 0);
		if (ret == -FI_EBUSY)
			ret = -FI_EAGAIN;
		break;
	default:
		break;
	}
	if (ret && ret != -FI_EAGAIN) {
		p4u_warn(P4U_LOG_ENGINE, "triggered operation %d failed: %d",
			 t->kind, ret);
		ret = 0;
	}
	return ret;
}

/*
 * Run what is due on ni, in order, the domain lock taken only to pop and
 * free (an op's events and counts take it again). An op the transport
 * cannot take yet (-FI_EAGAIN) goes back to the head till the next call.
 */
int p4e_trig_run_ni(struct p4e_ni *ni)
{
	struct p4e_dom *dom = ni->dom;
	struct p4e_trig_op *t;
	int done = 0;

	P4E_NI_ASSERT(ni);
	/* unlocked peek: an op appended meanwhile also kicked the worker */
	if (p4u_list_empty(&ni->trig_due))
		return 0;
	for (;;) {
		p4u_lock_acquire(&dom->lock);
		t = p4u_list_first_entry(&ni->trig_due, struct p4e_trig_op,
					 link);
		if (t)
			p4u_list_remove(&t->link);
		if (t && t->dropped) {
			p4e_trig_discard(dom, t);
			p4u_lock_release(&dom->lock);
			continue;
		}
		p4u_lock_release(&dom->lock);
		if (!t)
			break;
		if (p4e_trig_fire(t) == -FI_EAGAIN) {
			p4u_lock_acquire(&dom->lock);
			p4u_list_insert_head(&ni->trig_due, &t->link);
			p4u_lock_release(&dom->lock);
			break;
		}
		p4u_lock_acquire(&dom->lock);
		p4e_trig_free(dom, t);
		p4u_lock_release(&dom->lock);
		done++;
	}
	return done;
}

/* ---- posting ------------------------------------------------------------ */

/*
 * Insert t (allocated by the caller, who holds dom->lock) on trig's CT:
 * what is due already is collected at once. On failure t is freed.
 */
static int p4e_trig_post_locked(struct p4e_dom *dom, struct p4e_trig_op *t,
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
	t->cookie = trig->cookie;
	t->seq = dom->trig_seq++;
	p4e_trig_insert(t->flags & P4E_TRIG_SUCCESS_ONLY ? &ct->trig_success :
							    &ct->trig_sum, t);
	p4e_trig_collect(dom, ct);
	return 0;
}

/*
 * Post an NI op (the caller holds ni's worker). Already met: it fires
 * before the call returns (rule 9), with the domain lock released.
 */
static int p4e_trig_post_ni(struct p4e_ni *ni, struct p4e_trig_op *t,
			    const struct p4e_trig *trig)
{
	struct p4e_dom *dom = ni->dom;
	int ret;

	t->ni = ni;
	ret = p4e_trig_post_locked(dom, t, trig);
	p4u_lock_release(&dom->lock);
	if (!ret)
		p4e_trig_run_ni(ni);
	return ret;
}

/* An op from the pool, with dom->lock held on success. */
static struct p4e_trig_op *p4e_trig_alloc(struct p4e_dom *dom,
					  enum p4e_trig_kind kind)
{
	struct p4e_trig_op *t;

	p4u_lock_acquire(&dom->lock);
	t = p4u_pool_alloc(&dom->trigs);
	if (!t) {
		p4u_lock_release(&dom->lock);
		return NULL;
	}
	t->kind = kind;
	return t;
}

static int p4e_trig_xfer(struct p4e_ni *ni, enum p4e_trig_kind kind,
			 const struct p4e_xfer *xfer,
			 const struct p4e_trig *trig)
{
	struct p4e_md *md, *get_md = NULL;
	struct p4e_trig_op *t;
	struct iovec *iov = NULL;
	int ret;

	if (!ni || !xfer || !trig)
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	ret = p4e_ini_check(ni, p4e_trig_wire_type[kind], xfer);
	if (ret)
		return ret;
	/* the caller's iovec array may be gone when the op fires */
	if (xfer->iovcnt) {
		iov = malloc(xfer->iovcnt * sizeof(*iov));
		if (!iov)
			return -FI_ENOMEM;
		memcpy(iov, xfer->iov, xfer->iovcnt * sizeof(*iov));
	}
	t = p4e_trig_alloc(ni->dom, kind);
	if (!t) {
		free(iov);
		return -FI_ENOSPC;
	}
	t->xfer = *xfer;
	t->xfer.iov = iov;
	md = p4u_pool_lookup(&ni->mds, xfer->md);
	if (md)
		md->pending++;
	if (kind == P4E_TRIG_FETCH || kind == P4E_TRIG_SWAP) {
		get_md = p4u_pool_lookup(&ni->mds, xfer->get_md);
		if (get_md)
			get_md->pending++;
	}
	ret = p4e_trig_post_ni(ni, t, trig);
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

/* Counter ops belong to no NI: applied by whoever collects them. */
static int p4e_trig_ct(struct p4e_dom *dom, enum p4e_trig_kind kind,
		       uint64_t ct, struct p4e_ct_event val,
		       const struct p4e_trig *trig)
{
	struct p4e_trig_op *t;
	int ret;

	if (!dom || !trig)
		return -FI_EINVAL;
	t = p4e_trig_alloc(dom, kind);
	if (!t)
		return -FI_ENOSPC;
	if (!p4e_ct_lookup(dom, ct)) {
		p4u_pool_free(&dom->trigs, t);
		p4u_lock_release(&dom->lock);
		return -FI_EINVAL;
	}
	t->target_ct = ct;
	t->ct_val = val;
	ret = p4e_trig_post_locked(dom, t, trig);
	p4u_lock_release(&dom->lock);
	return ret;
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
	P4E_NI_ASSERT(ni);
	ret = p4e_me_trig_create(ni, pt_index, desc, list, user_ptr,
				 user_flags, &me);
	if (ret)
		return ret;
	t = p4e_trig_alloc(ni->dom, P4E_TRIG_ME_APPEND);
	if (!t) {
		p4e_me_trig_cancel(ni, me);
		return -FI_ENOSPC;
	}
	t->me = me;
	ret = p4e_trig_post_ni(ni, t, trig);
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

	if (!ni || !trig)
		return -FI_EINVAL;
	P4E_NI_ASSERT(ni);
	if (!p4u_pool_lookup(&ni->mes, me))
		return -FI_EINVAL;
	t = p4e_trig_alloc(ni->dom, P4E_TRIG_ME_UNLINK);
	if (!t)
		return -FI_ENOSPC;
	t->me = me;
	return p4e_trig_post_ni(ni, t, trig);
}
