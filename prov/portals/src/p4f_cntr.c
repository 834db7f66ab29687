/*
 * p4f_cntr.c - counters (FI_CNTR_EVENTS_COMP) on engine counting events:
 * each counter owns a CT of the domain's engine domain, which holds its
 * success and error values and the triggered operations waiting on it
 * (p4f_trigger.c). fi_cntr_read/readerr/add/adderr/set/seterr/wait, and
 * the sinks' p4f_cntr_inc / p4f_cntr_inc_err.
 *
 * Values live only in the CT, under the engine domain's lock: sinks count
 * straight onto it (a CT change only collects the triggered operations it
 * made due; they run in their worker's progress, never inside the sink).
 * The CT's notify callback, run under that lock with the new value, wakes
 * sleepers after every change, including the engine's own (deferred
 * counter operations, completion counters on MDs and MEs). cntr->lock
 * guards the wake-up bookkeeping and the progress set (every worker of
 * the domain: a triggered or deferred operation on any endpoint may count
 * here). fi_cntr_wait progresses, arms, looks again and sleeps in poll(2)
 * with no lock held. fi_cntr_wait(3) on a counter without a wait object
 * (invalid for applications, but fabtests does it) polls with
 * sched_yield; it is accepted on an FI_WAIT_SET member too (fabtests does
 * that as well).
 */
#include <config.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "p4f.h"

struct p4f_cntr {
	struct fid_cntr cntr_fid;
	struct p4f_domain *domain;
	struct p4u_list dom_link;	/* domain->cntrs */
	atomic_int ref;			/* endpoint and poll set bindings */
	uint64_t op_flags;		/* FI_GETOPSFLAG / FI_SETOPSFLAG */
	uint64_t ct;			/* the values live here */

	struct p4u_lock lock;		/* everything below */
	struct p4f_pset pset;		/* every worker of the domain */
	uint64_t seen_failure;		/* error value at the last wake check */
	/* what fi_poll and fi_trywait last saw */
	uint64_t poll_success, poll_failure;
	uint64_t try_success, try_failure;
	struct p4f_wait wait;
	uint64_t wake_threshold;	/* success value a sleeper needs */
	int waiters;			/* threads in fi_cntr_wait */
};

struct p4f_cntr *p4f_cntr_of(struct fid_cntr *fid)
{
	return container_of(fid, struct p4f_cntr, cntr_fid);
}

struct p4f_domain *p4f_cntr_domain(const struct p4f_cntr *cntr)
{
	return cntr->domain;
}

uint64_t p4f_cntr_ct(const struct p4f_cntr *cntr)
{
	return cntr->ct;
}

void p4f_cntr_get(struct p4f_cntr *cntr)
{
	atomic_fetch_add(&cntr->ref, 1);
}

void p4f_cntr_put(struct p4f_cntr *cntr)
{
	atomic_fetch_sub(&cntr->ref, 1);
}

struct p4f_wait *p4f_cntr_waitobj(struct p4f_cntr *cntr)
{
	return p4f_wait_enabled(&cntr->wait) ? &cntr->wait : NULL;
}

int p4f_cntr_progress(struct p4f_cntr *cntr)
{
	return p4f_pset_progress(&cntr->pset, &cntr->lock);
}

int p4f_cntr_worker_add_all_locked(struct p4f_domain *domain,
				   struct p4f_worker *worker)
{
	struct p4f_cntr *cntr;
	int ret = 0;

	p4u_lock_assert_held(&domain->lock);
	p4u_list_foreach_entry(&domain->cntrs, cntr, struct p4f_cntr,
			       dom_link) {
		p4u_lock_acquire(&cntr->lock);
		ret = p4f_pset_add(&cntr->pset, &cntr->wait, worker);
		p4u_lock_release(&cntr->lock);
		if (ret)
			break;
	}
	if (ret)
		p4f_cntr_worker_del_all_locked(domain, worker);
	return ret;
}

/* Also after a partial add: a counter without the worker ignores it. */
void p4f_cntr_worker_del_all_locked(struct p4f_domain *domain,
				    struct p4f_worker *worker)
{
	struct p4f_cntr *cntr;

	p4u_lock_assert_held(&domain->lock);
	p4u_list_foreach_entry(&domain->cntrs, cntr, struct p4f_cntr,
			       dom_link) {
		p4u_lock_acquire(&cntr->lock);
		p4f_pset_del(&cntr->pset, &cntr->wait, worker);
		p4u_lock_release(&cntr->lock);
	}
}

int p4f_cntr_cancel_triggered_all(struct p4f_domain *domain)
{
	struct p4f_cntr *cntr;

	p4u_lock_acquire(&domain->lock);
	p4u_list_foreach_entry(&domain->cntrs, cntr, struct p4f_cntr,
			       dom_link)
		(void)p4e_ct_cancel_triggered(domain->edom, cntr->ct);
	p4u_lock_release(&domain->lock);
	p4f_domain_run_triggered(domain);
	return 0;
}

/* ---- the values -------------------------------------------------------- */

static struct p4e_ct_event p4f_cntr_value(const struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev = { 0, 0 };

	/* the handle is ours for the counter's life: this cannot fail */
	(void)p4e_ct_get(cntr->domain->edom, cntr->ct, &ev);
	return ev;
}

/*
 * After every change (cntr->lock held): a sleeper is woken when the
 * success value reaches what it waits for or the error value changes
 * (fi_cntr(3): any error change unblocks fi_cntr_wait); FD users
 * (wake_threshold 0) on any change.
 */
static void p4f_cntr_wake_check_locked(struct p4f_cntr *cntr,
				       const struct p4e_ct_event *ev)
{
	bool err_changed = ev->failure != cntr->seen_failure;

	cntr->seen_failure = ev->failure;
	if (p4f_wait_enabled(&cntr->wait) &&
	    (err_changed || ev->success >= cntr->wake_threshold))
		p4f_wait_signal(&cntr->wait);
}

/* The CT changed (ours or the engine's); under the engine domain lock. */
static void p4f_cntr_notify(void *ctx, uint64_t ct,
			    const struct p4e_ct_event *val)
{
	struct p4f_cntr *cntr = ctx;

	(void)ct;
	p4u_lock_acquire(&cntr->lock);
	p4f_cntr_wake_check_locked(cntr, val);
	p4u_lock_release(&cntr->lock);
}

static void p4f_cntr_count(struct p4f_cntr *cntr, uint64_t success,
			   uint64_t failure)
{
	struct p4e_ct_event inc = { .success = success, .failure = failure };
	int ret;

	ret = p4e_ct_inc(cntr->domain->edom, cntr->ct, inc);
	if (ret)
		FI_WARN(&p4f_prov, FI_LOG_CNTR, "counter update failed: %s\n",
			fi_strerror(-ret));
}

void p4f_cntr_inc(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_count(cntr, n, 0);
}

void p4f_cntr_inc_err(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_count(cntr, 0, n);
}

/* fi_poll(3): set and add are the application's own changes, not events. */
static void p4f_cntr_poll_checkpoint(struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev = p4f_cntr_value(cntr);

	p4u_lock_acquire(&cntr->lock);
	cntr->poll_success = ev.success;
	cntr->poll_failure = ev.failure;
	p4u_lock_release(&cntr->lock);
}

bool p4f_cntr_poll(struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev = p4f_cntr_value(cntr);
	bool changed;

	p4u_lock_acquire(&cntr->lock);
	changed = cntr->poll_success != ev.success ||
		  cntr->poll_failure != ev.failure;
	cntr->poll_success = ev.success;
	cntr->poll_failure = ev.failure;
	p4u_lock_release(&cntr->lock);
	return changed;
}

/* ---- fi_ops_cntr ------------------------------------------------------- */

static uint64_t p4f_cntr_read(struct fid_cntr *cntr_fid)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);

	p4f_cntr_progress(cntr);
	return p4f_cntr_value(cntr).success;
}

static uint64_t p4f_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);

	p4f_cntr_progress(cntr);
	return p4f_cntr_value(cntr).failure;
}

/*
 * Apply (value or increment) to the success (err = false) or error value.
 * The CT update collects the triggered operations it made due; they run
 * in their workers' progress (the workers are kicked).
 */
static int p4f_cntr_update(struct fid_cntr *cntr_fid, uint64_t value,
			   bool add, bool err)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	struct p4e_dom *edom = cntr->domain->edom;
	struct p4e_ct_event ev = { 0, 0 };
	int ret;

	if (add) {
		if (err)
			ev.failure = value;
		else
			ev.success = value;
		ret = p4e_ct_inc(edom, cntr->ct, ev);
	} else {
		/* set one value, keep the other: one engine call, so no
		 * count can land between reading and writing */
		ret = p4e_ct_set_one(edom, cntr->ct, value, err);
	}
	if (!ret && !err)
		p4f_cntr_poll_checkpoint(cntr);
	/* what the update made due fires before the call returns */
	if (!ret)
		p4f_domain_run_triggered(cntr->domain);
	return ret;
}

static int p4f_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	return p4f_cntr_update(cntr_fid, value, true, false);
}

static int p4f_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	return p4f_cntr_update(cntr_fid, value, false, false);
}

static int p4f_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return p4f_cntr_update(cntr_fid, value, true, true);
}

static int p4f_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return p4f_cntr_update(cntr_fid, value, false, true);
}

/* 1 = keep sleeping; otherwise *ret_p is fi_cntr_wait's result. */
static int p4f_cntr_wait_check(struct p4f_cntr *cntr, uint64_t threshold,
			       uint64_t failure0, uint64_t deadline,
			       int *ret_p)
{
	struct p4e_ct_event ev = p4f_cntr_value(cntr);

	if (ev.success >= threshold)
		*ret_p = 0;
	else if (ev.failure != failure0)
		*ret_p = -FI_EAVAIL;
	else if (!p4f_wait_remaining(deadline))
		*ret_p = -FI_ETIMEDOUT;
	else
		return 1;
	return 0;
}

/*
 * Until the success value reaches threshold, the error value changes, or
 * the timeout passes: progress, look, arm the eventfd (under cntr->lock,
 * where the notifications signal it), look again, sleep in poll(2) with
 * no lock held.
 */
static int p4f_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			 int timeout)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	uint64_t deadline = p4f_wait_deadline(timeout);
	uint64_t failure0 = p4f_cntr_value(cntr).failure;
	int ret;

	p4u_lock_acquire(&cntr->lock);
	cntr->waiters++;
	p4u_lock_release(&cntr->lock);
	for (;;) {
		p4f_cntr_progress(cntr);
		if (!p4f_cntr_wait_check(cntr, threshold, failure0, deadline,
					 &ret))
			break;
		if (!p4f_wait_enabled(&cntr->wait)) {
			/* FI_WAIT_NONE: poll (fabtests wait on such counters) */
			sched_yield();
			continue;
		}
		p4u_lock_acquire(&cntr->lock);
		p4f_wait_clear(&cntr->wait);
		if (cntr->waiters == 1 || threshold < cntr->wake_threshold)
			cntr->wake_threshold = threshold;
		p4u_lock_release(&cntr->lock);
		if (!p4f_cntr_wait_check(cntr, threshold, failure0, deadline,
					 &ret))
			break;
		p4f_pset_prepare_sleep(&cntr->pset, &cntr->lock);
		p4f_wait_block(&cntr->wait, p4f_wait_remaining(deadline));
	}
	p4u_lock_acquire(&cntr->lock);
	if (--cntr->waiters == 0)
		cntr->wake_threshold = 0;
	p4u_lock_release(&cntr->lock);
	return ret;
}

int p4f_cntr_trywait(struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev;
	int ret = 0;

	if (!p4f_wait_enabled(&cntr->wait))
		return -FI_EINVAL;
	p4f_cntr_progress(cntr);
	p4u_lock_acquire(&cntr->lock);
	/* armed before the look: a change after it signals the fd */
	p4f_wait_clear(&cntr->wait);
	p4u_lock_release(&cntr->lock);
	ev = p4f_cntr_value(cntr);
	p4u_lock_acquire(&cntr->lock);
	if (cntr->try_success != ev.success ||
	    cntr->try_failure != ev.failure) {
		/* reported once: the caller reads the counter, then retries */
		cntr->try_success = ev.success;
		cntr->try_failure = ev.failure;
		ret = -FI_EAGAIN;
	}
	p4u_lock_release(&cntr->lock);
	if (!ret)
		p4f_pset_prepare_sleep(&cntr->pset, &cntr->lock);
	return ret;
}

static struct fi_ops_cntr p4f_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = p4f_cntr_read,
	.readerr = p4f_cntr_readerr,
	.add = p4f_cntr_add,
	.set = p4f_cntr_set,
	.wait = p4f_cntr_wait,
	.adderr = p4f_cntr_adderr,
	.seterr = p4f_cntr_seterr,
};

/* ---- object ------------------------------------------------------------ */

static void p4f_cntr_free(struct p4f_cntr *cntr)
{
	p4f_pset_fini(&cntr->pset);
	p4f_wait_fini(&cntr->wait);
	p4u_lock_fini(&cntr->lock);
	free(cntr);
}

static int p4f_cntr_close(struct fid *fid)
{
	struct p4f_cntr *cntr = container_of(fid, struct p4f_cntr,
					     cntr_fid.fid);
	struct p4f_domain *domain = cntr->domain;

	if (atomic_load(&cntr->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_CNTR,
			"counter still bound to %d objects\n",
			atomic_load(&cntr->ref));
		return -FI_EBUSY;
	}
	p4u_lock_acquire(&domain->lock);
	p4u_list_remove(&cntr->dom_link);
	p4u_lock_release(&domain->lock);
	/* discards the triggered operations still waiting on it; no
	 * notification reaches us afterwards; the slots they held come
	 * back before the call returns */
	p4e_ct_free(domain->edom, cntr->ct);
	p4f_cntr_free(cntr);
	p4f_domain_run_triggered(domain);
	atomic_fetch_sub(&domain->ref, 1);
	return 0;
}

static int p4f_cntr_control(struct fid *fid, int command, void *arg)
{
	struct p4f_cntr *cntr = container_of(fid, struct p4f_cntr,
					     cntr_fid.fid);

	switch (command) {
	case FI_GETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		*(uint64_t *)arg = cntr->op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		cntr->op_flags = *(uint64_t *)arg;
		return 0;
	default:
		return p4f_wait_control(&cntr->wait, command, arg);
	}
}

static struct fi_ops p4f_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_cntr_close,
	.bind = p4f_no_bind,
	.control = p4f_cntr_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

/* Join the domain: its workers into the progress set, it into the list. */
static int p4f_cntr_join(struct p4f_domain *domain, struct p4f_cntr *cntr)
{
	struct p4f_worker *w;
	int ret = 0;

	p4u_lock_acquire(&domain->lock);
	p4u_list_foreach_entry(&domain->workers, w, struct p4f_worker, link) {
		p4u_lock_acquire(&cntr->lock);
		ret = p4f_pset_add(&cntr->pset, &cntr->wait, w);
		p4u_lock_release(&cntr->lock);
		if (ret)
			break;
	}
	if (!ret)
		p4u_list_insert_tail(&domain->cntrs, &cntr->dom_link);
	p4u_lock_release(&domain->lock);
	return ret;
}

int p4f_cntr_open(struct fid_domain *domain_fid, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr_p, void *context)
{
	struct p4f_domain *domain = p4f_domain_of(domain_fid);
	struct p4f_cntr *cntr;
	int ret;

	if (!attr || !cntr_p)
		return -FI_EINVAL;
	if (attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr->flags)
		return -FI_EBADFLAGS;
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	cntr->domain = domain;
	atomic_init(&cntr->ref, 0);
	p4u_list_init(&cntr->dom_link);
	p4u_lock_init(&cntr->lock, domain->locked);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &p4f_cntr_fi_ops;
	cntr->cntr_fid.ops = &p4f_cntr_ops;
	ret = p4e_ct_alloc(domain->edom, &cntr->ct);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_CNTR, "no counting event left: %s\n",
			fi_strerror(-ret));
		p4u_lock_fini(&cntr->lock);
		free(cntr);
		return ret;
	}
	/* the wait object before the progress set: it takes worker fds */
	ret = p4f_wait_init(&cntr->wait, domain->fabric, &cntr->cntr_fid.fid,
			    attr->wait_obj, attr->wait_set);
	if (!ret)
		ret = p4e_ct_set_notify(domain->edom, cntr->ct,
					p4f_cntr_notify, cntr);
	if (!ret)
		ret = p4f_cntr_join(domain, cntr);
	if (ret) {
		p4e_ct_free(domain->edom, cntr->ct);
		p4f_cntr_free(cntr);
		return ret;
	}
	atomic_fetch_add(&domain->ref, 1);
	*cntr_p = &cntr->cntr_fid;
	return 0;
}
