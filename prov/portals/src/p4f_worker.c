/*
 * p4f_worker.c - the provider's side of the engine workers (docs/design.md
 * §8): opening one for a domain or an endpoint, its reference count, its
 * progress (the engine's, then the overflow buffers its endpoints' sinks
 * gave back go in again, outside the engine's callbacks), and progress
 * sets: the workers a CQ or counter progresses when it is read, and whose
 * wait fds its own wait fd holds.
 *
 * Not here: the blocking reads themselves (p4f_cq.c, p4f_cntr.c,
 * p4f_wait.c), which progress their set, prepare it for sleep and poll.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

/* Budget of one progress call: enough to drain a burst, bounded so a
 * reader of one CQ is not held forever by a flood. */
#define P4F_PROGRESS_BUDGET	256
#define P4F_PROGRESS_NAME	"p4f_progress"	/* thread comm, for ps and tests */
/* Workers a set progresses without an allocation. */
#define P4F_PSET_STACK		8

int p4f_worker_open(struct p4f_domain *domain, bool thread,
		    struct p4f_worker **worker_p)
{
	struct p4e_worker_attr attr = {
		.locked = domain->locked,
		.thread = thread,
		.name = P4F_PROGRESS_NAME,
	};
	struct p4f_worker *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	ret = p4e_worker_create(&attr, &w->ew);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN, "cannot open a worker: %s\n",
			fi_strerror(-ret));
		free(w);
		return ret;
	}
	w->domain = domain;
	atomic_init(&w->ref, 1);
	p4u_list_init(&w->eps);
	p4u_list_init(&w->link);
	*worker_p = w;
	return 0;
}

void p4f_worker_get(struct p4f_worker *w)
{
	atomic_fetch_add(&w->ref, 1);
}

void p4f_worker_put(struct p4f_worker *w)
{
	if (atomic_fetch_sub(&w->ref, 1) != 1)
		return;
	/* its endpoints closed their NIs first: it has none left */
	if (p4e_worker_destroy(w->ew))
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN, "worker still busy\n");
	free(w);
}

void p4f_worker_lock(struct p4f_worker *w)
{
	p4e_worker_lock(w->ew);
}

void p4f_worker_unlock(struct p4f_worker *w)
{
	p4e_worker_unlock(w->ew);
}

void p4f_worker_assert_held(struct p4f_worker *w)
{
	p4e_worker_assert_held(w->ew);
}

int p4f_worker_progress_locked(struct p4f_worker *w)
{
	struct p4f_ep *ep;
	int done;

	p4f_worker_assert_held(w);
	done = p4e_worker_progress(w->ew, P4F_PROGRESS_BUDGET);
	p4u_list_foreach_entry(&w->eps, ep, struct p4f_ep, worker_link)
		if (!p4u_list_empty(&ep->oflow_repost))
			p4f_oflow_repost_locked(ep);
	return done;
}

int p4f_worker_wait_fd(struct p4f_worker *w)
{
	return p4e_worker_wait_fd(w->ew);
}

/*
 * Run the triggered operations due on every worker of the domain, each
 * under its lock (no other lock held): a counter update or cancel made by
 * the application (fi_cntr_add, FI_CANCEL_WORK, fi_close of a counter)
 * takes effect before the call returns, as it would on a single worker.
 */
void p4f_domain_run_triggered(struct p4f_domain *domain)
{
	struct p4f_worker *stack[8], **snap = stack, *w;
	size_t n = 0, cap = 8, i;

	p4u_lock_acquire(&domain->lock);
	p4u_list_foreach_entry(&domain->workers, w, struct p4f_worker, link) {
		if (n == cap) {
			struct p4f_worker **more = malloc(cap * 2 *
							  sizeof(*more));

			if (!more)
				break;	/* the rest run at their progress */
			memcpy(more, snap, n * sizeof(*more));
			if (snap != stack)
				free(snap);
			snap = more;
			cap *= 2;
		}
		p4f_worker_get(w);
		snap[n++] = w;
	}
	p4u_lock_release(&domain->lock);
	for (i = 0; i < n; i++) {
		p4f_worker_lock(snap[i]);
		p4e_worker_run_triggered(snap[i]->ew);
		p4f_worker_unlock(snap[i]);
		p4f_worker_put(snap[i]);
	}
	if (snap != stack)
		free(snap);
}

/* ---- progress sets ---------------------------------------------------- */

int p4f_pset_add(struct p4f_pset *set, struct p4f_wait *wait,
		 struct p4f_worker *w)
{
	struct p4f_pset_ent *ents;
	size_t i;
	int ret;

	for (i = 0; i < set->n; i++)
		if (set->ents[i].worker == w) {
			set->ents[i].count++;
			return 0;
		}
	if (set->n == set->cap) {
		ents = realloc(set->ents, (set->cap * 2 + 2) * sizeof(*ents));
		if (!ents)
			return -FI_ENOMEM;
		set->ents = ents;
		set->cap = set->cap * 2 + 2;
	}
	/* a sleeper on the owner's fd wakes when this worker has work */
	if (wait && p4f_wait_enabled(wait)) {
		ret = p4f_wait_add_fd(wait, p4f_worker_wait_fd(w));
		if (ret)
			return ret;
	}
	p4f_worker_get(w);
	set->ents[set->n].worker = w;
	set->ents[set->n++].count = 1;
	return 0;
}

void p4f_pset_del(struct p4f_pset *set, struct p4f_wait *wait,
		  struct p4f_worker *w)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		if (set->ents[i].worker != w)
			continue;
		if (--set->ents[i].count)
			return;
		if (wait && p4f_wait_enabled(wait))
			p4f_wait_del_fd(wait, p4f_worker_wait_fd(w));
		set->ents[i] = set->ents[--set->n];
		p4f_worker_put(w);
		return;
	}
}

void p4f_pset_fini(struct p4f_pset *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		p4f_worker_put(set->ents[i].worker);
	free(set->ents);
	memset(set, 0, sizeof(*set));
}

/*
 * The set's workers, each with a reference, so none goes while it is
 * progressed (an endpoint closing meanwhile). Returns how many; *heap_p
 * is set when they did not fit in the caller's array.
 */
static size_t p4f_pset_snap(struct p4f_pset *set, struct p4u_lock *lock,
			    struct p4f_worker **stack,
			    struct p4f_worker ***out_p)
{
	struct p4f_worker **out = stack;
	size_t i, n;

	p4u_lock_acquire(lock);
	n = set->n;
	if (n > P4F_PSET_STACK) {
		out = malloc(n * sizeof(*out));
		if (!out)	/* progress the first ones only this time */
			n = P4F_PSET_STACK, out = stack;
	}
	for (i = 0; i < n; i++) {
		out[i] = set->ents[i].worker;
		p4f_worker_get(out[i]);
	}
	p4u_lock_release(lock);
	*out_p = out;
	return n;
}

static void p4f_pset_release(struct p4f_worker **snap, size_t n,
			     struct p4f_worker **stack)
{
	size_t i;

	for (i = 0; i < n; i++)
		p4f_worker_put(snap[i]);
	if (snap != stack)
		free(snap);
}

int p4f_pset_progress(struct p4f_pset *set, struct p4u_lock *lock)
{
	struct p4f_worker *stack[P4F_PSET_STACK], **snap;
	size_t i, n;
	int done = 0;

	/*
	 * An inactive lock: the application calls on these objects one
	 * thread at a time, so no other thread binds or closes while we
	 * progress, and the set needs no snapshot nor references (two
	 * atomic operations per worker on every poll otherwise).
	 */
	if (!lock->active) {
		for (i = 0; i < set->n; i++) {
			p4f_worker_lock(set->ents[i].worker);
			done += p4f_worker_progress_locked(set->ents[i].worker);
			p4f_worker_unlock(set->ents[i].worker);
		}
		return done;
	}
	n = p4f_pset_snap(set, lock, stack, &snap);

	for (i = 0; i < n; i++) {
		p4f_worker_lock(snap[i]);
		done += p4f_worker_progress_locked(snap[i]);
		p4f_worker_unlock(snap[i]);
	}
	p4f_pset_release(snap, n, stack);
	return done;
}

void p4f_pset_prepare_sleep(struct p4f_pset *set, struct p4u_lock *lock)
{
	struct p4f_worker *stack[P4F_PSET_STACK], **snap;
	size_t i, n = p4f_pset_snap(set, lock, stack, &snap);

	for (i = 0; i < n; i++) {
		p4f_worker_lock(snap[i]);
		p4e_worker_prepare_sleep(snap[i]->ew);
		p4f_worker_unlock(snap[i]);
	}
	p4f_pset_release(snap, n, stack);
}
