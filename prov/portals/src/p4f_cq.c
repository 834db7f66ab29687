/*
 * p4f_cq.c - completion queues: the fixed ring the data path writes
 * completions into (p4f_cq_write_locked, p4f_cq_write_error_locked), its
 * ordered overflow list, and fi_cq_read/readfrom/readerr/sread/sreadfrom/
 * signal/strerror. Wait objects and fi_trywait plumbing are in p4f_wait.c.
 *
 * Every entry, success or error, takes one ring slot in completion order;
 * an error slot points to a pooled struct p4f_cq_err holding the full
 * fi_cq_err_entry and a copy of its err_data. fi_cq_read returns successes
 * up to the first error and -FI_EAVAIL when an error is next.
 *
 * FI_RM_ENABLED: a CQ is never overrun. When the ring is full, entries wait
 * in an overflow list (pooled nodes, no malloc in steady state) and move
 * into the ring, in order, as the application reads. The overflow list is
 * non-empty only while the ring is full, so ring-then-list is the order.
 *
 * All state is guarded by the CQ's own lock (a leaf: sinks write under
 * their worker's lock, readers progress the CQ's progress set first with
 * no lock held, then read under it), except signal_gen (an atomic:
 * fi_cq_signal may come from any thread).
 *
 * fi_cq_sread is refused (-FI_EINVAL) without a wait object, and accepted
 * on an FI_WAIT_SET member, which fi_cq(3) calls invalid but fabtests'
 * wait-set mode does: the CQ sleeps on its own fd, which sits in the set.
 * fi_cq_signal without a wait object: -FI_ENOSYS.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"
#include "p4u_pool.h"
#include "p4u_spin.h"

#define P4F_CQ_DEF_SIZE		4096	/* if FI_PORTALS_CQ_SIZE was not read */
#define P4F_CQ_MAX_SIZE		(1u << 24)
#define P4F_CQ_POOL_CHUNK	256
#define P4F_CQ_OFLOW_MAX	(1u << 22)	/* overflow entries per CQ */
#define P4F_CQ_ERR_MAX		(1u << 20)	/* queued error entries per CQ */

/* Each format's entry is a prefix of fi_cq_tagged_entry: copy that much. */
_Static_assert(offsetof(struct fi_cq_msg_entry, len) ==
	       offsetof(struct fi_cq_tagged_entry, len), "msg layout");
_Static_assert(offsetof(struct fi_cq_data_entry, data) ==
	       offsetof(struct fi_cq_tagged_entry, data), "data layout");
_Static_assert(sizeof(struct fi_cq_data_entry) ==
	       offsetof(struct fi_cq_tagged_entry, tag), "data size");

struct p4f_cq_err {
	struct fi_cq_err_entry entry;	/* err_data unused: see data */
	uint8_t data[P4F_MAX_ERR_DATA];
};

struct p4f_cq_slot {
	struct fi_cq_tagged_entry comp;
	fi_addr_t src_addr;
	struct p4f_cq_err *err;		/* set: an error entry */
};

struct p4f_cq_oflow {
	struct p4u_list node;
	struct p4f_cq_slot slot;
};

struct p4f_cq {
	struct fid_cq cq_fid;
	struct p4f_domain *domain;
	struct p4u_lock lock;		/* everything below but signal_gen */
	struct p4f_pset pset;		/* the bound endpoints' workers */
	atomic_int ref;			/* endpoint and poll set bindings */
	enum fi_cq_format format;
	size_t entry_size;
	enum fi_cq_wait_cond wait_cond;

	struct p4f_cq_slot *ring;
	size_t size;
	size_t head;
	size_t count;			/* entries in the ring */
	struct p4u_list oflow;		/* struct p4f_cq_oflow, in order */
	size_t oflow_count;
	struct p4u_pool oflow_pool;	/* created on first overflow */
	struct p4u_pool err_pool;	/* created on first error */
	uint8_t saved_err_data[P4F_MAX_ERR_DATA]; /* readerr's provider buffer */

	struct p4f_wait wait;
	size_t wake_threshold;		/* entries before the fd is signalled */
	int waiters;			/* threads in sread */
	atomic_uint signal_gen;		/* fi_cq_signal calls */
	unsigned int signal_seen;	/* the last one an sread returned for */
	struct p4u_spin spin;		/* empty reads: yield when preempted */
};

struct p4f_cq *p4f_cq_of(struct fid_cq *fid)
{
	return container_of(fid, struct p4f_cq, cq_fid);
}

struct p4f_domain *p4f_cq_domain(const struct p4f_cq *cq)
{
	return cq->domain;
}

void p4f_cq_get(struct p4f_cq *cq)
{
	atomic_fetch_add(&cq->ref, 1);
}

void p4f_cq_put(struct p4f_cq *cq)
{
	atomic_fetch_sub(&cq->ref, 1);
}

int p4f_cq_bind(struct p4f_cq *cq, struct p4f_worker *worker)
{
	int ret;

	p4u_lock_acquire(&cq->lock);
	ret = p4f_pset_add(&cq->pset, &cq->wait, worker);
	p4u_lock_release(&cq->lock);
	if (!ret)
		p4f_cq_get(cq);
	return ret;
}

void p4f_cq_unbind(struct p4f_cq *cq, struct p4f_worker *worker)
{
	p4u_lock_acquire(&cq->lock);
	p4f_pset_del(&cq->pset, &cq->wait, worker);
	p4u_lock_release(&cq->lock);
	p4f_cq_put(cq);
}

int p4f_cq_progress(struct p4f_cq *cq)
{
	return p4f_pset_progress(&cq->pset, &cq->lock);
}

void p4f_cq_lock(struct p4f_cq *cq)
{
	p4u_lock_acquire(&cq->lock);
}

void p4f_cq_unlock(struct p4f_cq *cq)
{
	p4u_lock_release(&cq->lock);
}

struct p4f_wait *p4f_cq_waitobj(struct p4f_cq *cq)
{
	return p4f_wait_enabled(&cq->wait) ? &cq->wait : NULL;
}

/* ---- the ring and the overflow list ------------------------------------ */

static size_t p4f_cq_total_locked(const struct p4f_cq *cq)
{
	return cq->count + cq->oflow_count;
}

static struct p4f_cq_slot *p4f_cq_head_locked(struct p4f_cq *cq)
{
	return cq->count ? &cq->ring[cq->head] : NULL;
}

static void p4f_cq_ring_push(struct p4f_cq *cq, const struct p4f_cq_slot *slot)
{
	cq->ring[(cq->head + cq->count) % cq->size] = *slot;
	cq->count++;
}

/* Pools cost a chunk table each: only CQs that need one pay for it. */
static int p4f_cq_pool_ready(struct p4u_pool *pool, size_t obj_size,
			     uint32_t max)
{
	if (pool->chunks)
		return 0;
	return p4u_pool_init(pool, obj_size, P4F_CQ_POOL_CHUNK, max);
}

static int p4f_cq_oflow_push(struct p4f_cq *cq, const struct p4f_cq_slot *slot)
{
	struct p4f_cq_oflow *node;

	if (p4f_cq_pool_ready(&cq->oflow_pool, sizeof(*node),
			      P4F_CQ_OFLOW_MAX))
		return -FI_ENOMEM;
	node = p4u_pool_alloc(&cq->oflow_pool);
	if (!node) {
		FI_WARN(&p4f_prov, FI_LOG_CQ,
			"CQ overflow list full (%zu entries)\n",
			cq->oflow_count);
		return -FI_ENOMEM;
	}
	node->slot = *slot;
	p4u_list_insert_tail(&cq->oflow, &node->node);
	cq->oflow_count++;
	return 0;
}

/* Wake a sleeper once enough entries are queued for it. */
static void p4f_cq_notify_locked(struct p4f_cq *cq)
{
	if (p4f_wait_enabled(&cq->wait) &&
	    p4f_cq_total_locked(cq) >= cq->wake_threshold)
		p4f_wait_signal(&cq->wait);
}

static int p4f_cq_push_locked(struct p4f_cq *cq, const struct p4f_cq_slot *slot)
{
	int ret = 0;

	if (cq->count < cq->size && !cq->oflow_count)
		p4f_cq_ring_push(cq, slot);
	else
		ret = p4f_cq_oflow_push(cq, slot);
	if (!ret)
		p4f_cq_notify_locked(cq);
	return ret;
}

/* Drop the head slot and refill the ring from the overflow list. */
static void p4f_cq_pop_locked(struct p4f_cq *cq)
{
	struct p4f_cq_oflow *node;

	cq->head = (cq->head + 1) % cq->size;
	cq->count--;
	if (!cq->oflow_count)
		return;
	node = container_of(p4u_list_pop_head(&cq->oflow), struct p4f_cq_oflow,
			    node);
	cq->oflow_count--;
	p4f_cq_ring_push(cq, &node->slot);
	p4u_pool_free(&cq->oflow_pool, node);
}

/* ---- the data path's side ---------------------------------------------- */

int p4f_cq_write(struct p4f_cq *cq, void *op_context, uint64_t flags,
		 size_t len, void *buf, uint64_t data, uint64_t tag,
		 fi_addr_t src_addr)
{
	struct p4f_cq_slot slot = {
		.comp = {
			.op_context = op_context,
			.flags = flags,
			.len = len,
			.buf = buf,
			.data = data,
			.tag = tag,
		},
		.src_addr = src_addr,
		.err = NULL,
	};
	int ret;

	p4u_lock_acquire(&cq->lock);
	ret = p4f_cq_push_locked(cq, &slot);
	p4u_lock_release(&cq->lock);
	return ret;
}

int p4f_cq_write_error(struct p4f_cq *cq, const struct fi_cq_err_entry *err)
{
	struct p4f_cq_slot slot = { .src_addr = FI_ADDR_NOTAVAIL };
	size_t data_len;
	int ret;

	p4u_lock_acquire(&cq->lock);
	if (p4f_cq_pool_ready(&cq->err_pool, sizeof(*slot.err), P4F_CQ_ERR_MAX))
		slot.err = NULL;
	else
		slot.err = p4u_pool_alloc(&cq->err_pool);
	if (!slot.err) {
		p4u_lock_release(&cq->lock);
		return -FI_ENOMEM;
	}
	slot.err->entry = *err;
	/* err_data beyond P4F_MAX_ERR_DATA is cut: it is a debugging aid */
	data_len = err->err_data ? P4U_MIN(err->err_data_size,
					   (size_t)P4F_MAX_ERR_DATA) : 0;
	if (data_len)
		memcpy(slot.err->data, err->err_data, data_len);
	slot.err->entry.err_data = NULL;
	slot.err->entry.err_data_size = data_len;
	ret = p4f_cq_push_locked(cq, &slot);
	if (ret)
		p4u_pool_free(&cq->err_pool, slot.err);
	p4u_lock_release(&cq->lock);
	return ret;
}

size_t p4f_cq_space(struct p4f_cq *cq)
{
	size_t space;

	p4u_lock_acquire(&cq->lock);
	space = cq->oflow_count ? 0 : cq->size - cq->count;
	p4u_lock_release(&cq->lock);
	return space;
}

bool p4f_cq_poll(struct p4f_cq *cq)
{
	bool ret;

	p4u_lock_acquire(&cq->lock);
	ret = p4f_cq_total_locked(cq) != 0;
	p4u_lock_release(&cq->lock);
	return ret;
}

/* ---- reading ----------------------------------------------------------- */

/*
 * Successes up to count or the first error. count == 0 only reports
 * whether something is there (0), as fi_poll-style callers expect.
 */
static ssize_t p4f_cq_read_locked(struct p4f_cq *cq, void *buf, size_t count,
				  fi_addr_t *src_addr)
{
	struct p4f_cq_slot *slot = p4f_cq_head_locked(cq);
	char *dst = buf;
	size_t n = 0;

	if (!slot)
		return -FI_EAGAIN;
	if (slot->err)
		return -FI_EAVAIL;
	while (n < count && slot && !slot->err) {
		memcpy(dst, &slot->comp, cq->entry_size);
		dst += cq->entry_size;
		if (src_addr)
			src_addr[n] = slot->src_addr;
		p4f_cq_pop_locked(cq);
		n++;
		slot = p4f_cq_head_locked(cq);
	}
	return (ssize_t)n;
}

static ssize_t p4f_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	struct p4f_cq *cq = p4f_cq_of(cq_fid);
	bool yield;
	ssize_t ret;

	if (count && !buf)
		return -FI_EINVAL;
	p4f_cq_progress(cq);
	p4u_lock_acquire(&cq->lock);
	ret = p4f_cq_read_locked(cq, buf, count, src_addr);
	/* a caller spinning on empty reads may yield a shared CPU */
	yield = p4u_spin_poll(&cq->spin, ret == -FI_EAGAIN);
	p4u_lock_release(&cq->lock);
	if (yield)
		p4u_spin_yield();
	return ret;
}

static ssize_t p4f_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return p4f_cq_readfrom(cq_fid, buf, count, NULL);
}

/*
 * err_data by API version (fi_cq(3)): from 1.5 on, a caller buffer
 * (err_data + err_data_size) receives a copy; with err_data_size 0, or
 * before 1.5, err_data points to a CQ-owned buffer valid until the next
 * read. Before 1.5 the entry ends at err_data: nothing is written past it.
 */
static void p4f_cq_copy_err_locked(struct p4f_cq *cq,
				   const struct p4f_cq_err *err,
				   struct fi_cq_err_entry *buf)
{
	bool v15 = FI_VERSION_GE(cq->domain->api_version, FI_VERSION(1, 5));
	struct fi_cq_err_entry out = err->entry;
	size_t len = err->entry.err_data_size;

	if (v15 && buf->err_data && buf->err_data_size) {
		out.err_data_size = P4U_MIN(buf->err_data_size, len);
		out.err_data = buf->err_data;
		memcpy(out.err_data, err->data, out.err_data_size);
		*buf = out;
		return;
	}
	memcpy(cq->saved_err_data, err->data, len);
	out.err_data = len ? cq->saved_err_data : NULL;
	if (v15)
		*buf = out;
	else
		memcpy(buf, &out, offsetof(struct fi_cq_err_entry,
					   err_data_size));
}

static ssize_t p4f_cq_readerr(struct fid_cq *cq_fid,
			      struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct p4f_cq *cq = p4f_cq_of(cq_fid);
	struct p4f_cq_slot *slot;
	ssize_t ret = -FI_EAGAIN;

	if (!buf)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	p4f_cq_progress(cq);
	p4u_lock_acquire(&cq->lock);
	slot = p4f_cq_head_locked(cq);
	if (slot && slot->err) {
		p4f_cq_copy_err_locked(cq, slot->err, buf);
		p4u_pool_free(&cq->err_pool, slot->err);
		p4f_cq_pop_locked(cq);
		ret = 1;
	}
	p4u_lock_release(&cq->lock);
	return ret;
}

/* ---- blocking reads ---------------------------------------------------- */

/* FI_CQ_COND_THRESHOLD: entries to wait for; never more than count. */
static size_t p4f_cq_threshold(const struct p4f_cq *cq, const void *cond,
			       size_t count)
{
	size_t threshold = 1;

	if (cq->wait_cond == FI_CQ_COND_THRESHOLD && cond)
		threshold = *(const size_t *)cond;
	return P4U_MAX(P4U_MIN(threshold, count), (size_t)1);
}

struct p4f_cq_sread_req {
	void *buf;
	size_t count;
	fi_addr_t *src_addr;
	size_t threshold;
	unsigned int seen;		/* signal_gen when the call began */
	uint64_t deadline;
};

/*
 * 1 = keep sleeping. Otherwise *ret_p is the call's result: what is there
 * (up to count), -FI_EAVAIL, or -FI_EAGAIN when a signal or the timeout
 * ends the wait with nothing queued.
 */
static int p4f_cq_sread_check_locked(struct p4f_cq *cq,
				     struct p4f_cq_sread_req *req,
				     ssize_t *ret_p)
{
	struct p4f_cq_slot *slot = p4f_cq_head_locked(cq);
	unsigned int gen = atomic_load(&cq->signal_gen);

	if (gen != req->seen)
		cq->signal_seen = gen;	/* this call consumes the signal */
	else if (!(slot && slot->err) &&
		 p4f_cq_total_locked(cq) < req->threshold &&
		 p4f_wait_remaining(req->deadline))
		return 1;
	*ret_p = p4f_cq_read_locked(cq, req->buf, req->count, req->src_addr);
	return 0;
}

/*
 * Progress, look, sleep in poll(2), again. The eventfd is drained and
 * armed under the CQ lock before the last look at the queue and at
 * signal_gen, so a writer or fi_cq_signal that comes after the look makes
 * the fd readable; the workers are prepared for the sleep (held
 * acknowledgements out, deadline timer armed) with no lock held.
 */
static ssize_t p4f_cq_sread_loop(struct p4f_cq *cq,
				 struct p4f_cq_sread_req *req)
{
	ssize_t ret;

	for (;;) {
		p4f_cq_progress(cq);
		p4u_lock_acquire(&cq->lock);
		if (!p4f_cq_sread_check_locked(cq, req, &ret))
			break;
		p4f_wait_clear(&cq->wait);
		if (!p4f_cq_sread_check_locked(cq, req, &ret))
			break;
		if (cq->waiters == 1 || req->threshold < cq->wake_threshold)
			cq->wake_threshold = req->threshold;
		p4u_lock_release(&cq->lock);
		p4f_pset_prepare_sleep(&cq->pset, &cq->lock);
		p4f_wait_block(&cq->wait, p4f_wait_remaining(req->deadline));
	}
	p4u_lock_release(&cq->lock);
	return ret;
}

static ssize_t p4f_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
{
	struct p4f_cq *cq = p4f_cq_of(cq_fid);
	struct p4f_cq_sread_req req = {
		.buf = buf,
		.count = count,
		.src_addr = src_addr,
		.threshold = p4f_cq_threshold(cq, cond, count),
		.deadline = p4f_wait_deadline(timeout),
	};
	ssize_t ret;

	if (!p4f_wait_enabled(&cq->wait)) {
		FI_WARN(&p4f_prov, FI_LOG_CQ, "sread on a CQ without wait object\n");
		return -FI_EINVAL;
	}
	if (!count || !buf)
		return -FI_EINVAL;
	p4u_lock_acquire(&cq->lock);
	req.seen = cq->signal_seen;
	cq->waiters++;
	p4u_lock_release(&cq->lock);
	ret = p4f_cq_sread_loop(cq, &req);
	p4u_lock_acquire(&cq->lock);
	if (--cq->waiters == 0)
		cq->wake_threshold = 1;
	p4u_lock_release(&cq->lock);
	return ret;
}

static ssize_t p4f_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return p4f_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

/*
 * Wake every thread in sread (each returns what is there, or -FI_EAGAIN);
 * with nobody waiting, the next sread returns at once. No lock: it may be
 * called from any thread, even while a reader holds the CQ.
 */
static int p4f_cq_signal(struct fid_cq *cq_fid)
{
	struct p4f_cq *cq = p4f_cq_of(cq_fid);

	if (!p4f_wait_enabled(&cq->wait))
		return -FI_ENOSYS;
	atomic_fetch_add(&cq->signal_gen, 1);
	p4f_wait_kick(&cq->wait);
	return 0;
}

int p4f_cq_trywait(struct p4f_cq *cq)
{
	int ret = 0;

	if (!p4f_wait_enabled(&cq->wait))
		return -FI_EINVAL;
	p4f_cq_progress(cq);
	p4u_lock_acquire(&cq->lock);
	if (p4f_cq_total_locked(cq))
		ret = -FI_EAGAIN;
	else
		p4f_wait_clear(&cq->wait);
	p4u_lock_release(&cq->lock);
	if (!ret)
		p4f_pset_prepare_sleep(&cq->pset, &cq->lock);
	return ret;
}

static const char *p4f_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return p4f_strerror_copy(prov_errno, buf, len);
}

/* ---- object ------------------------------------------------------------ */

static int p4f_cq_close(struct fid *fid)
{
	struct p4f_cq *cq = container_of(fid, struct p4f_cq, cq_fid.fid);

	if (atomic_load(&cq->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_CQ, "CQ still bound to %d objects\n",
			atomic_load(&cq->ref));
		return -FI_EBUSY;
	}
	p4f_pset_fini(&cq->pset);
	p4f_wait_fini(&cq->wait);
	p4u_lock_fini(&cq->lock);
	/* queued entries are lost, as fi_cq(3) says; pools free every node */
	p4u_pool_fini(&cq->oflow_pool);
	p4u_pool_fini(&cq->err_pool);
	free(cq->ring);
	atomic_fetch_sub(&cq->domain->ref, 1);
	free(cq);
	return 0;
}

static int p4f_cq_control(struct fid *fid, int command, void *arg)
{
	struct p4f_cq *cq = container_of(fid, struct p4f_cq, cq_fid.fid);

	return p4f_wait_control(&cq->wait, command, arg);
}

static struct fi_ops p4f_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_cq_close,
	.bind = p4f_no_bind,
	.control = p4f_cq_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static struct fi_ops_cq p4f_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = p4f_cq_read,
	.readfrom = p4f_cq_readfrom,
	.readerr = p4f_cq_readerr,
	.sread = p4f_cq_sread,
	.sreadfrom = p4f_cq_sreadfrom,
	.signal = p4f_cq_signal,
	.strerror = p4f_cq_strerror,
};

/* Entry size of a format (UNSPEC is CONTEXT); 0 = unknown format. */
static size_t p4f_cq_entry_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

static int p4f_cq_check_attr(const struct fi_cq_attr *attr)
{
	if (attr->flags & ~FI_AFFINITY)
		return -FI_EBADFLAGS;
	if (!p4f_cq_entry_size(attr->format)) {
		FI_WARN(&p4f_prov, FI_LOG_CQ, "unknown CQ format %d\n",
			attr->format);
		return -FI_EINVAL;
	}
	/* fi_cq(3): wait_cond is ignored without a wait object */
	if (attr->wait_obj != FI_WAIT_NONE &&
	    attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_EINVAL;
	if (attr->size > P4F_CQ_MAX_SIZE) {
		FI_WARN(&p4f_prov, FI_LOG_CQ, "CQ size %zu above %u\n",
			attr->size, P4F_CQ_MAX_SIZE);
		return -FI_EINVAL;
	}
	return 0;
}

static size_t p4f_cq_default_size(void)
{
	return p4f_params.cq_size ? p4f_params.cq_size : P4F_CQ_DEF_SIZE;
}

int p4f_cq_open(struct fid_domain *domain_fid, struct fi_cq_attr *attr,
		struct fid_cq **cq_p, void *context)
{
	struct p4f_domain *domain = p4f_domain_of(domain_fid);
	struct p4f_cq *cq;
	int ret;

	if (!attr || !cq_p)
		return -FI_EINVAL;
	ret = p4f_cq_check_attr(attr);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->size = attr->size ? attr->size : p4f_cq_default_size();
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (!cq->ring) {
		ret = -FI_ENOMEM;
		goto err_free_cq;
	}
	cq->domain = domain;
	p4u_lock_init(&cq->lock, domain->locked);
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->entry_size = p4f_cq_entry_size(cq->format);
	cq->wait_cond = attr->wait_obj == FI_WAIT_NONE ?
			FI_CQ_COND_NONE : attr->wait_cond;
	cq->wake_threshold = 1;
	p4u_list_init(&cq->oflow);
	atomic_init(&cq->ref, 0);
	atomic_init(&cq->signal_gen, 0);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &p4f_cq_fi_ops;
	cq->cq_fid.ops = &p4f_cq_ops;

	/* last: joining a wait set makes the CQ visible to fi_wait */
	ret = p4f_wait_init(&cq->wait, domain->fabric, &cq->cq_fid.fid,
			    attr->wait_obj, attr->wait_set);
	if (ret)
		goto err_free_ring;
	atomic_fetch_add(&domain->ref, 1);
	*cq_p = &cq->cq_fid;
	return 0;

err_free_ring:
	p4u_lock_fini(&cq->lock);
	free(cq->ring);
err_free_cq:
	free(cq);
	return ret;
}
