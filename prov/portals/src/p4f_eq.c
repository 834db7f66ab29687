/*
 * p4f_eq.c - event queues: a fixed ring of exactly `size` events, filled by
 * fi_eq_write (FI_WRITE EQs) and by the provider's control path (AV
 * asynchronous inserts, MR events, endpoint errors) through
 * p4f_eq_write_event / p4f_eq_write_error, and read with fi_eq_read
 * (FI_PEEK), fi_eq_readerr, fi_eq_sread.
 *
 * Events and errors share one ordered queue: an error entry at the head
 * makes fi_eq_read answer -FI_EAVAIL until fi_eq_readerr takes it, and an
 * error behind ordinary events waits its turn. An EQ is a fabric object
 * written from any domain, so it has its own always-active mutex (taken
 * after a domain lock, never before). Connection-management events are
 * queued like any other; nothing in this provider generates them yet.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

#define P4F_EQ_DEF_SIZE		1024	/* attr->size == 0 */
#define P4F_EQ_MAX_SIZE		(1u << 20)
#define P4F_EQ_MAX_ENTRY	4096	/* bytes of one event, CM data incl. */
#define P4F_EQ_INLINE		64	/* events this small need no malloc */

struct p4f_eq_slot {
	uint32_t event;
	bool err;		/* data is a struct fi_eq_err_entry */
	size_t len;
	void *data;		/* inline_buf, or malloc()ed when larger */
	union {
		uint8_t bytes[P4F_EQ_INLINE];
		struct fi_eq_err_entry err_entry;	/* err_data malloc()ed */
	} inline_buf;
};

struct p4f_eq {
	struct fid_eq eq_fid;
	struct p4f_fabric *fabric;
	atomic_int ref;			/* bindings: domain, endpoints, AVs */
	struct p4u_lock lock;		/* everything below */
	uint64_t flags;			/* FI_WRITE */
	uint32_t api_version;
	struct p4f_eq_slot *ring;
	size_t size;
	size_t head;
	size_t count;
	void *saved_err_data;		/* provider-owned err_data handed out */
	struct p4f_wait wait;
};

struct p4f_eq *p4f_eq_of(struct fid_eq *fid)
{
	return container_of(fid, struct p4f_eq, eq_fid);
}

void p4f_eq_get(struct p4f_eq *eq)
{
	atomic_fetch_add(&eq->ref, 1);
}

void p4f_eq_put(struct p4f_eq *eq)
{
	atomic_fetch_sub(&eq->ref, 1);
}

struct p4f_wait *p4f_eq_waitobj(struct p4f_eq *eq)
{
	return p4f_wait_enabled(&eq->wait) ? &eq->wait : NULL;
}

/* ---- the ring ---------------------------------------------------------- */

/* Smallest buffer an event of this kind fits in; 0 = not an EQ event. */
static size_t p4f_eq_min_len(uint32_t event)
{
	switch (event) {
	case FI_NOTIFY:
	case FI_MR_COMPLETE:
	case FI_AV_COMPLETE:
	case FI_JOIN_COMPLETE:
		return sizeof(struct fi_eq_entry);
	case FI_CONNREQ:
	case FI_CONNECTED:
	case FI_SHUTDOWN:
		return sizeof(struct fi_eq_cm_entry);
	default:
		return 0;
	}
}

/* Connection events: struct fi_eq_cm_entry + application data. */
static bool p4f_eq_is_cm(uint32_t event)
{
	return event == FI_CONNREQ || event == FI_CONNECTED ||
	       event == FI_SHUTDOWN;
}

static void p4f_eq_slot_release(struct p4f_eq_slot *slot)
{
	if (slot->err)
		free(slot->inline_buf.err_entry.err_data);
	if (slot->data != slot->inline_buf.bytes)
		free(slot->data);
	slot->data = NULL;
}

static void p4f_eq_pop_locked(struct p4f_eq *eq)
{
	p4f_eq_slot_release(&eq->ring[eq->head]);
	eq->head = (eq->head + 1) % eq->size;
	eq->count--;
}

/* The tail slot, or NULL when the EQ already holds `size` events. */
static struct p4f_eq_slot *p4f_eq_tail_locked(struct p4f_eq *eq)
{
	if (eq->count == eq->size)
		return NULL;
	return &eq->ring[(eq->head + eq->count) % eq->size];
}

static void p4f_eq_push_locked(struct p4f_eq *eq)
{
	eq->count++;
	if (p4f_wait_enabled(&eq->wait))
		p4f_wait_signal(&eq->wait);
}

/* ---- writing ----------------------------------------------------------- */

ssize_t p4f_eq_write_event(struct p4f_eq *eq, uint32_t event, const void *buf,
			   size_t len, uint64_t flags)
{
	struct p4f_eq_slot *slot;
	void *heap = NULL;
	size_t min = p4f_eq_min_len(event);

	if (!buf || !min || len < min || len > P4F_EQ_MAX_ENTRY)
		return -FI_EINVAL;
	if (len > P4F_EQ_INLINE) {
		heap = malloc(len);
		if (!heap)
			return -FI_ENOMEM;
		memcpy(heap, buf, len);
	}

	p4u_lock_acquire(&eq->lock);
	slot = p4f_eq_tail_locked(eq);
	if (slot) {
		slot->event = event;
		slot->err = false;
		slot->len = len;
		slot->data = heap ? heap : slot->inline_buf.bytes;
		if (!heap)
			memcpy(slot->inline_buf.bytes, buf, len);
		p4f_eq_push_locked(eq);
	}
	p4u_lock_release(&eq->lock);
	if (!slot) {
		free(heap);
		return -FI_EAGAIN;
	}
	return (ssize_t)len;
}

ssize_t p4f_eq_write_err_entry(struct p4f_eq *eq,
			       const struct fi_eq_err_entry *err)
{
	struct p4f_eq_slot *slot;
	void *err_data = NULL;
	size_t err_size = err->err_data ? err->err_data_size : 0;

	if (err_size) {
		err_data = malloc(err_size);
		if (!err_data)
			return -FI_ENOMEM;
		memcpy(err_data, err->err_data, err_size);
	}

	p4u_lock_acquire(&eq->lock);
	slot = p4f_eq_tail_locked(eq);
	if (slot) {
		slot->event = 0;
		slot->err = true;
		slot->len = sizeof(*err);
		slot->data = slot->inline_buf.bytes;
		slot->inline_buf.err_entry = *err;
		slot->inline_buf.err_entry.err_data = err_data;
		slot->inline_buf.err_entry.err_data_size = err_size;
		p4f_eq_push_locked(eq);
	}
	p4u_lock_release(&eq->lock);
	if (!slot) {
		free(err_data);
		return -FI_EAGAIN;
	}
	return sizeof(*err);
}

ssize_t p4f_eq_write_error(struct p4f_eq *eq, fid_t fid, void *context,
			   uint64_t data, int err, int prov_errno)
{
	struct fi_eq_err_entry entry = {
		.fid = fid,
		.context = context,
		.data = data,
		.err = err < 0 ? -err : err,
		.prov_errno = prov_errno,
	};

	return p4f_eq_write_err_entry(eq, &entry);
}

static ssize_t p4f_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct p4f_eq *eq = p4f_eq_of(eq_fid);

	if (!(eq->flags & FI_WRITE)) {
		FI_WARN(&p4f_prov, FI_LOG_EQ,
			"fi_eq_write on an EQ opened without FI_WRITE\n");
		return -FI_EINVAL;
	}
	if (flags)
		return -FI_EBADFLAGS;
	return p4f_eq_write_event(eq, event, buf, len, 0);
}

/* ---- reading ----------------------------------------------------------- */

/*
 * Copy the head event out. CM events may carry application data after the
 * fixed entry: it is cut to the caller's buffer, as fi_eq(3) says; any
 * other event must fit whole.
 */
static ssize_t p4f_eq_read_locked(struct p4f_eq *eq, uint32_t *event,
				  void *buf, size_t len, uint64_t flags)
{
	struct p4f_eq_slot *slot;
	size_t n;

	if (!eq->count)
		return -FI_EAGAIN;
	slot = &eq->ring[eq->head];
	if (slot->err)
		return -FI_EAVAIL;
	if (!buf || len < p4f_eq_min_len(slot->event))
		return -FI_ETOOSMALL;
	if (len < slot->len && !p4f_eq_is_cm(slot->event))
		return -FI_ETOOSMALL;
	n = P4U_MIN(len, slot->len);
	memcpy(buf, slot->data, n);
	if (event)
		*event = slot->event;
	if (!(flags & FI_PEEK))
		p4f_eq_pop_locked(eq);
	return (ssize_t)n;
}

static ssize_t p4f_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct p4f_eq *eq = p4f_eq_of(eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	p4u_lock_acquire(&eq->lock);
	ret = p4f_eq_read_locked(eq, event, buf, len, flags);
	p4u_lock_release(&eq->lock);
	return ret;
}

/*
 * err_data by API version (fi_eq(3)): from 1.5 on, a caller buffer
 * (err_data + err_data_size) receives a copy; with err_data_size 0, or
 * before 1.5, err_data points to a provider buffer valid until the next
 * fi_eq_readerr. Before 1.5 the entry has no err_data_size field.
 */
static ssize_t p4f_eq_copy_err_locked(struct p4f_eq *eq,
				      struct fi_eq_err_entry *stored,
				      struct fi_eq_err_entry *buf,
				      uint64_t flags)
{
	bool v15 = FI_VERSION_GE(eq->api_version, FI_VERSION(1, 5));
	struct fi_eq_err_entry out = *stored;
	size_t n;

	if (v15 && buf->err_data && buf->err_data_size) {
		n = P4U_MIN(buf->err_data_size, stored->err_data_size);
		if (n)
			memcpy(buf->err_data, stored->err_data, n);
		out.err_data = buf->err_data;
		out.err_data_size = n;
		*buf = out;
		return sizeof(*buf);
	}
	if (!(flags & FI_PEEK) && stored->err_data) {
		/* hand the stored copy over; the slot will not free it */
		free(eq->saved_err_data);
		eq->saved_err_data = stored->err_data;
		stored->err_data = NULL;
	}
	if (!v15) {
		memcpy(buf, &out, offsetof(struct fi_eq_err_entry,
					   err_data_size));
		return offsetof(struct fi_eq_err_entry, err_data_size);
	}
	*buf = out;
	return sizeof(*buf);
}

static ssize_t p4f_eq_readerr(struct fid_eq *eq_fid,
			      struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct p4f_eq *eq = p4f_eq_of(eq_fid);
	struct p4f_eq_slot *slot;
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	p4u_lock_acquire(&eq->lock);
	slot = eq->count ? &eq->ring[eq->head] : NULL;
	if (!slot || !slot->err) {
		ret = -FI_EAGAIN;
	} else {
		ret = p4f_eq_copy_err_locked(eq, &slot->inline_buf.err_entry,
					     buf, flags);
		if (!(flags & FI_PEEK))
			p4f_eq_pop_locked(eq);
	}
	p4u_lock_release(&eq->lock);
	return ret;
}

/*
 * Read; if empty, arm the eventfd under the lock (so a writer that comes
 * after must wake us) and sleep outside it. Timeout: -FI_EAGAIN (fi_eq(3)).
 */
static ssize_t p4f_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct p4f_eq *eq = p4f_eq_of(eq_fid);
	uint64_t deadline = p4f_wait_deadline(timeout);
	int remaining;
	ssize_t ret;

	if (!p4f_wait_enabled(&eq->wait))
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	for (;;) {
		p4u_lock_acquire(&eq->lock);
		ret = p4f_eq_read_locked(eq, event, buf, len, flags);
		remaining = p4f_wait_remaining(deadline);
		if (ret == -FI_EAGAIN && remaining)
			p4f_wait_clear(&eq->wait);
		p4u_lock_release(&eq->lock);
		if (ret != -FI_EAGAIN || !remaining)
			return ret;
		p4f_wait_block(&eq->wait, remaining);
	}
}

int p4f_eq_trywait(struct p4f_eq *eq)
{
	int ret = 0;

	if (!p4f_wait_enabled(&eq->wait))
		return -FI_EINVAL;
	p4u_lock_acquire(&eq->lock);
	if (eq->count)
		ret = -FI_EAGAIN;
	else
		p4f_wait_clear(&eq->wait);
	p4u_lock_release(&eq->lock);
	return ret;
}

static const char *p4f_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return p4f_strerror_copy(prov_errno, buf, len);
}

/* ---- object ------------------------------------------------------------ */

static int p4f_eq_close(struct fid *fid)
{
	struct p4f_eq *eq = container_of(fid, struct p4f_eq, eq_fid.fid);

	if (atomic_load(&eq->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_EQ, "EQ still bound to %d objects\n",
			atomic_load(&eq->ref));
		return -FI_EBUSY;
	}
	p4f_wait_fini(&eq->wait);
	while (eq->count)
		p4f_eq_pop_locked(eq);	/* nobody else holds a reference */
	free(eq->saved_err_data);
	free(eq->ring);
	p4u_lock_fini(&eq->lock);
	atomic_fetch_sub(&eq->fabric->ref, 1);
	free(eq);
	return 0;
}

static int p4f_eq_control(struct fid *fid, int command, void *arg)
{
	struct p4f_eq *eq = container_of(fid, struct p4f_eq, eq_fid.fid);

	return p4f_wait_control(&eq->wait, command, arg);
}

static struct fi_ops p4f_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_eq_close,
	.bind = p4f_no_bind,
	.control = p4f_eq_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static struct fi_ops_eq p4f_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = p4f_eq_read,
	.readerr = p4f_eq_readerr,
	.write = p4f_eq_write,
	.sread = p4f_eq_sread,
	.strerror = p4f_eq_strerror,
};

static int p4f_eq_check_attr(const struct fi_eq_attr *attr)
{
	if (attr->flags & ~(FI_WRITE | FI_AFFINITY))
		return -FI_EBADFLAGS;
	if (attr->size > P4F_EQ_MAX_SIZE) {
		FI_WARN(&p4f_prov, FI_LOG_EQ, "EQ size %zu above %u\n",
			attr->size, P4F_EQ_MAX_SIZE);
		return -FI_EINVAL;
	}
	return 0;
}

int p4f_eq_open(struct fid_fabric *fabric_fid, struct fi_eq_attr *attr,
		struct fid_eq **eq_p, void *context)
{
	struct p4f_fabric *fabric =
		container_of(fabric_fid, struct p4f_fabric, fabric_fid);
	struct p4f_eq *eq;
	int ret;

	if (!attr || !eq_p)
		return -FI_EINVAL;
	ret = p4f_eq_check_attr(attr);
	if (ret)
		return ret;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->size = attr->size ? attr->size : P4F_EQ_DEF_SIZE;
	eq->ring = calloc(eq->size, sizeof(*eq->ring));
	if (!eq->ring) {
		ret = -FI_ENOMEM;
		goto err_free_eq;
	}
	eq->fabric = fabric;
	eq->flags = attr->flags;
	/* the core fills api_version in fi_fabric(); tests may call us raw */
	eq->api_version = fabric_fid->api_version ?
			  fabric_fid->api_version : P4F_FI_VERSION;
	atomic_init(&eq->ref, 0);
	p4u_lock_init(&eq->lock, true);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &p4f_eq_fi_ops;
	eq->eq_fid.ops = &p4f_eq_ops;

	/* last: joining a wait set makes the EQ visible to fi_wait */
	ret = p4f_wait_init(&eq->wait, fabric, &eq->eq_fid.fid, attr->wait_obj,
			    attr->wait_set);
	if (ret)
		goto err_free_ring;
	atomic_fetch_add(&fabric->ref, 1);
	*eq_p = &eq->eq_fid;
	return 0;

err_free_ring:
	p4u_lock_fini(&eq->lock);
	free(eq->ring);
err_free_eq:
	free(eq);
	return ret;
}
