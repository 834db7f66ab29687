/*
 * p4f_cntr.c - counters (FI_CNTR_EVENTS_COMP): a success and an error
 * value, fi_cntr_read/readerr/add/adderr/set/seterr/wait, and the data
 * path's p4f_cntr_inc_locked / p4f_cntr_inc_err_locked.
 *
 * The two values are reached only through the accessors below
 * (p4f_cntr_success/failure and p4f_cntr_store_locked): the engine's
 * counting events (CTs) will back them, and triggered operations will hang
 * off the store. State is guarded by the domain lock; fi_cntr_wait sleeps
 * in poll(2) without it. fi_cntr_wait is refused (-FI_EINVAL) without a
 * wait object and accepted on an FI_WAIT_SET member (fabtests does that).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

struct p4f_cntr {
	struct fid_cntr cntr_fid;
	struct p4f_domain *domain;
	atomic_int ref;			/* endpoint and poll set bindings */
	uint64_t op_flags;		/* FI_GETOPSFLAG / FI_SETOPSFLAG */

	/* the values: only the accessors touch these two */
	uint64_t success;
	uint64_t failure;

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

static uint64_t p4f_cntr_success(const struct p4f_cntr *cntr)
{
	return cntr->success;
}

static uint64_t p4f_cntr_failure(const struct p4f_cntr *cntr)
{
	return cntr->failure;
}

/*
 * Every change goes through here. A sleeper is woken when the success
 * value reaches what it waits for or the error value changes (fi_cntr(3):
 * any error change unblocks fi_cntr_wait); FD users (wake_threshold 0) on
 * any change.
 */
static void p4f_cntr_store_locked(struct p4f_cntr *cntr, uint64_t success,
				  uint64_t failure)
{
	bool err_changed = failure != cntr->failure;

	p4u_lock_assert_held(&cntr->domain->lock);
	cntr->success = success;
	cntr->failure = failure;
	if (p4f_wait_enabled(&cntr->wait) &&
	    (err_changed || success >= cntr->wake_threshold))
		p4f_wait_signal(&cntr->wait);
}

void p4f_cntr_inc_locked(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_store_locked(cntr, p4f_cntr_success(cntr) + n,
			      p4f_cntr_failure(cntr));
}

void p4f_cntr_inc_err_locked(struct p4f_cntr *cntr, uint64_t n)
{
	p4f_cntr_store_locked(cntr, p4f_cntr_success(cntr),
			      p4f_cntr_failure(cntr) + n);
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

/* Apply (value or increment) to the success (err = false) or error value. */
static int p4f_cntr_update(struct fid_cntr *cntr_fid, uint64_t value,
			   bool add, bool err)
{
	struct p4f_cntr *cntr = p4f_cntr_of(cntr_fid);
	uint64_t success, failure;

	p4u_lock_acquire(&cntr->domain->lock);
	success = p4f_cntr_success(cntr);
	failure = p4f_cntr_failure(cntr);
	if (err)
		failure = add ? failure + value : value;
	else
		success = add ? success + value : value;
	p4f_cntr_store_locked(cntr, success, failure);
	if (!err)
		p4f_cntr_poll_checkpoint_locked(cntr);
	p4u_lock_release(&cntr->domain->lock);
	return 0;
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

	if (!p4f_wait_enabled(&cntr->wait)) {
		FI_WARN(&p4f_prov, FI_LOG_CNTR,
			"fi_cntr_wait on a counter without wait object\n");
		return -FI_EINVAL;
	}
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
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &p4f_cntr_fi_ops;
	cntr->cntr_fid.ops = &p4f_cntr_ops;

	/* last: joining a wait set makes the counter visible to fi_wait */
	ret = p4f_wait_init(&cntr->wait, domain->fabric, &cntr->cntr_fid.fid,
			    attr->wait_obj, attr->wait_set);
	if (ret) {
		free(cntr);
		return ret;
	}
	atomic_fetch_add(&domain->ref, 1);
	*cntr_p = &cntr->cntr_fid;
	return 0;
}
