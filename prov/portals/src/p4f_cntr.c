/*
 * p4f_cntr.c - counters (FI_CNTR_EVENTS_COMP) on engine counting events:
 * each counter owns a CT of the domain's engine domain, which holds its
 * success and error values and the triggered operations waiting on it
 * (p4f_trigger.c). fi_cntr_read/readerr/add/adderr/set/seterr/wait, and
 * the data path's p4f_cntr_inc_locked / p4f_cntr_inc_err_locked.
 *
 * The sinks count from inside engine callbacks, where the engine must not
 * be re-entered (a CT change there would fire triggered operations in the
 * middle of another operation): their counts wait in pend_* until
 * p4f_domain_progress (or the next API call on a counter) moves them onto
 * the CT. Readers see CT + pending. The CT's notify callback wakes
 * sleepers after every change, including changes made by the engine
 * (deferred counter operations, completion counters on MDs and MEs).
 * State is guarded by the domain lock; fi_cntr_wait sleeps in poll(2)
 * without it. fi_cntr_wait(3) on a counter without a wait object (invalid
 * for applications, but fabtests does it) polls with sched_yield; it is
 * accepted on an FI_WAIT_SET member too (fabtests does that as well).
 */
#include <config.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "p4f.h"

struct p4f_cntr {
	struct fid_cntr cntr_fid;
	struct p4f_domain *domain;
	atomic_int ref;			/* endpoint and poll set bindings */
	uint64_t op_flags;		/* FI_GETOPSFLAG / FI_SETOPSFLAG */

	uint64_t ct;			/* the values live here */
	uint64_t pend_success;		/* sink counts not yet on the CT */
	uint64_t pend_failure;
	struct p4u_list dirty_link;	/* in domain->cntr_dirty */
	uint64_t seen_failure;		/* error value at the last wake check */
	/* p4f_trigger.c's records of the ops pending on the CT, by threshold:
	 * [0] success + error rule, [1] success only */
	struct p4u_list trig_recs[2];

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

/* ---- the values -------------------------------------------------------- */

static struct p4e_ct_event p4f_cntr_value(const struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev = { 0, 0 };

	/* the handle is ours for the counter's life: this cannot fail */
	(void)p4e_ct_get(cntr->domain->edom, cntr->ct, &ev);
	ev.success += cntr->pend_success;
	ev.failure += cntr->pend_failure;
	return ev;
}

static uint64_t p4f_cntr_success(const struct p4f_cntr *cntr)
{
	return p4f_cntr_value(cntr).success;
}

static uint64_t p4f_cntr_failure(const struct p4f_cntr *cntr)
{
	return p4f_cntr_value(cntr).failure;
}

/*
 * After every change: a sleeper is woken when the success value reaches
 * what it waits for or the error value changes (fi_cntr(3): any error
 * change unblocks fi_cntr_wait); FD users (wake_threshold 0) on any change.
 */
static void p4f_cntr_wake_check_locked(struct p4f_cntr *cntr)
{
	struct p4e_ct_event ev = p4f_cntr_value(cntr);
	bool err_changed = ev.failure != cntr->seen_failure;

	cntr->seen_failure = ev.failure;
	if (p4f_wait_enabled(&cntr->wait) &&
	    (err_changed || ev.success >= cntr->wake_threshold))
		p4f_wait_signal(&cntr->wait);
}

/*
 * The CT changed (our own update, or the engine's): the engine collected
 * the triggered ops that became due, p4f_trigger.c forgets their records
 * the same way. Then wake sleepers.
 */
static void p4f_cntr_notify(void *ctx, uint64_t ct)
{
	struct p4f_cntr *cntr = ctx;
	struct p4e_ct_event ev;

	if (!p4e_ct_get(cntr->domain->edom, ct, &ev))
		p4f_trigger_cntr_changed_locked(cntr, &ev);
	p4f_cntr_wake_check_locked(cntr);
}

struct p4u_list *p4f_cntr_trig_list(struct p4f_cntr *cntr, bool success_only)
{
	return &cntr->trig_recs[success_only];
}

static void p4f_cntr_pend_locked(struct p4f_cntr *cntr, uint64_t success,
				 uint64_t failure)
{
	p4u_lock_assert_held(&cntr->domain->lock);
	cntr->pend_success += success;
	cntr->pend_failure += failure;
	if (!p4u_list_node_linked(&cntr->dirty_link))
		p4u_list_insert_tail(&cntr->domain->cntr_dirty,
				     &cntr->dirty_link);
	p4f_cntr_wake_check_locked(cntr);
}

void p4f_cntr_inc_locked(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_pend_locked(cntr, n, 0);
}

void p4f_cntr_inc_err_locked(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_pend_locked(cntr, 0, n);
}

/* Move one counter's pending counts onto its CT. */
static void p4f_cntr_flush_one_locked(struct p4f_cntr *cntr)
{
	struct p4e_ct_event inc = {
		.success = cntr->pend_success,
		.failure = cntr->pend_failure,
	};
	int ret;

	if (p4u_list_node_linked(&cntr->dirty_link))
		p4u_list_remove(&cntr->dirty_link);
	if (!inc.success && !inc.failure)
		return;
	cntr->pend_success = cntr->pend_failure = 0;
	/* runs the triggered operations that became due */
	ret = p4e_ct_inc(cntr->domain->edom, cntr->ct, inc);
	if (ret)
		FI_WARN(&p4f_prov, FI_LOG_CNTR, "counter update failed: %s\n",
			fi_strerror(-ret));
}

/*
 * Operations fired here may complete at once and count again (a chain):
 * the list is drained until it stays empty; each triggered operation
 * fires once, so this ends.
 */
void p4f_cntr_flush_locked(struct p4f_domain *domain)
{
	struct p4f_cntr *cntr;

	p4u_lock_assert_held(&domain->lock);
	while ((cntr = p4u_list_first_entry(&domain->cntr_dirty,
					    struct p4f_cntr, dirty_link)))
		p4f_cntr_flush_one_locked(cntr);
}

/* fi_poll(3): set and add are the application's own changes, not events. */
static void p4f_cntr_poll_checkpoint_locked(struct p4f_cntr *cntr)
{
	cntr->poll_success = p4f_cntr_success(cntr);
	cntr->poll_failure = p4f_cntr_failure(cntr);
}

bool p4f_cntr_poll_locked(struct p4f_cntr *cntr)
{
	if (cntr->poll_success == p4f_cntr_success(cntr) &&
	    cntr->poll_failure == p4f_cntr_failure(cntr))
		return false;
	p4f_cntr_poll_checkpoint_locked(cntr);
	return true;
}

/* ---- fi_ops_cntr ------------------------------------------------------- */

static uint64_t p4f_cntr_read(struct fid_cntr *cntr_fid)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	uint64_t value;

	p4u_lock_acquire(&cntr->domain->lock);
	p4f_domain_progress(cntr->domain);
	value = p4f_cntr_success(cntr);
	p4u_lock_release(&cntr->domain->lock);
	return value;
}

static uint64_t p4f_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	uint64_t value;

	p4u_lock_acquire(&cntr->domain->lock);
	p4f_domain_progress(cntr->domain);
	value = p4f_cntr_failure(cntr);
	p4u_lock_release(&cntr->domain->lock);
	return value;
}

/*
 * Apply (value or increment) to the success (err = false) or error value.
 * Counts the sinks made before this call land first, so a set overrides
 * them; the CT update runs the triggered operations it made due, and
 * what those complete at once is flushed too.
 */
static int p4f_cntr_update(struct fid_cntr *cntr_fid, uint64_t value,
			   bool add, bool err)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	struct p4f_domain *domain = cntr->domain;
	struct p4e_ct_event ev = { 0, 0 };
	int ret;

	p4u_lock_acquire(&domain->lock);
	p4f_cntr_flush_one_locked(cntr);
	if (add) {
		if (err)
			ev.failure = value;
		else
			ev.success = value;
		ret = p4e_ct_inc(domain->edom, cntr->ct, ev);
	} else {
		ret = p4e_ct_get(domain->edom, cntr->ct, &ev);
		if (!ret) {
			if (err)
				ev.failure = value;
			else
				ev.success = value;
			ret = p4e_ct_set(domain->edom, cntr->ct, ev);
		}
	}
	p4f_cntr_flush_locked(domain);
	if (!ret && !err)
		p4f_cntr_poll_checkpoint_locked(cntr);
	p4u_lock_release(&domain->lock);
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
static int p4f_cntr_wait_check_locked(struct p4f_cntr *cntr,
				      uint64_t threshold, uint64_t failure0,
				      uint64_t deadline, int *ret_p)
{
	if (p4f_cntr_success(cntr) >= threshold)
		*ret_p = 0;
	else if (p4f_cntr_failure(cntr) != failure0)
		*ret_p = -FI_EAVAIL;
	else if (!p4f_wait_remaining(deadline))
		*ret_p = -FI_ETIMEDOUT;
	else
		return 1;
	return 0;
}

/*
 * Sleep in poll(2) without the lock until the success value reaches
 * threshold, the error value changes, or the timeout passes. The eventfd
 * is drained and armed under the lock before the last look, so a change
 * after that look makes the fd readable.
 */
static int p4f_cntr_wait_locked(struct p4f_cntr *cntr, uint64_t threshold,
				uint64_t deadline)
{
	uint64_t failure0 = p4f_cntr_failure(cntr);
	int ret;

	for (;;) {
		p4f_domain_progress(cntr->domain);
		if (!p4f_cntr_wait_check_locked(cntr, threshold, failure0,
						deadline, &ret))
			return ret;
		if (!p4f_wait_enabled(&cntr->wait)) {
			/* FI_WAIT_NONE: poll (fabtests wait on such counters) */
			p4u_lock_release(&cntr->domain->lock);
			sched_yield();
			p4u_lock_acquire(&cntr->domain->lock);
			continue;
		}
		p4f_domain_before_sleep_locked(cntr->domain);
		p4f_wait_clear(&cntr->wait);
		if (cntr->waiters == 1 || threshold < cntr->wake_threshold)
			cntr->wake_threshold = threshold;
		p4u_lock_release(&cntr->domain->lock);
		p4f_wait_block(&cntr->wait, p4f_wait_remaining(deadline));
		p4u_lock_acquire(&cntr->domain->lock);
	}
}

static int p4f_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			 int timeout)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	uint64_t deadline = p4f_wait_deadline(timeout);
	int ret;

	p4u_lock_acquire(&cntr->domain->lock);
	cntr->waiters++;
	ret = p4f_cntr_wait_locked(cntr, threshold, deadline);
	if (--cntr->waiters == 0)
		cntr->wake_threshold = 0;
	p4u_lock_release(&cntr->domain->lock);
	return ret;
}

int p4f_cntr_trywait(struct p4f_cntr *cntr)
{
	int ret = 0;

	if (!p4f_wait_enabled(&cntr->wait))
		return -FI_EINVAL;
	p4u_lock_acquire(&cntr->domain->lock);
	p4f_domain_progress(cntr->domain);
	if (cntr->try_success != p4f_cntr_success(cntr) ||
	    cntr->try_failure != p4f_cntr_failure(cntr)) {
		/* reported once: the caller reads the counter, then retries */
		cntr->try_success = p4f_cntr_success(cntr);
		cntr->try_failure = p4f_cntr_failure(cntr);
		ret = -FI_EAGAIN;
	} else {
		p4f_domain_before_sleep_locked(cntr->domain);
		p4f_wait_clear(&cntr->wait);
	}
	p4u_lock_release(&cntr->domain->lock);
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

static int p4f_cntr_close(struct fid *fid)
{
	struct p4f_cntr *cntr = container_of(fid, struct p4f_cntr,
					     cntr_fid.fid);

	if (atomic_load(&cntr->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_CNTR,
			"counter still bound to %d objects\n",
			atomic_load(&cntr->ref));
		return -FI_EBUSY;
	}
	p4u_lock_acquire(&cntr->domain->lock);
	if (p4u_list_node_linked(&cntr->dirty_link))
		p4u_list_remove(&cntr->dirty_link);
	p4f_trigger_cntr_fini_locked(cntr);
	/* discards the triggered operations still waiting on it */
	p4e_ct_free(cntr->domain->edom, cntr->ct);
	p4u_lock_release(&cntr->domain->lock);
	p4f_wait_fini(&cntr->wait);
	atomic_fetch_sub(&cntr->domain->ref, 1);
	free(cntr);
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
	.bind = p4u_no_bind,
	.control = p4f_cntr_control,
	.ops_open = p4u_no_ops_open,
	.tostr = p4u_no_tostr,
	.ops_set = p4u_no_ops_set,
};

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
	p4u_list_init(&cntr->dirty_link);
	p4u_list_init(&cntr->trig_recs[0]);
	p4u_list_init(&cntr->trig_recs[1]);
	p4u_lock_acquire(&domain->lock);
	ret = p4e_ct_alloc(domain->edom, &cntr->ct);
	if (!ret)
		ret = p4e_ct_set_notify(domain->edom, cntr->ct,
					p4f_cntr_notify, cntr);
	p4u_lock_release(&domain->lock);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_CNTR, "no counting event left: %s\n",
			fi_strerror(-ret));
		free(cntr);
		return ret;
	}
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &p4f_cntr_fi_ops;
	cntr->cntr_fid.ops = &p4f_cntr_ops;

	/* last: joining a wait set makes the counter visible to fi_wait */
	ret = p4f_wait_init(&cntr->wait, domain->fabric, &cntr->cntr_fid.fid,
			    attr->wait_obj, attr->wait_set);
	if (ret) {
		p4u_lock_acquire(&domain->lock);
		p4e_ct_free(domain->edom, cntr->ct);
		p4u_lock_release(&domain->lock);
		free(cntr);
		return ret;
	}
	atomic_fetch_add(&domain->ref, 1);
	*cntr_p = &cntr->cntr_fid;
	return 0;
}
