/*
 * p4f_cq.h - completion objects: wait objects and wait/poll sets
 * (p4f_wait.c), event queues (p4f_eq.c), completion queues (p4f_cq.c) and
 * counters (p4f_cntr.c). Included from p4f.h.
 *
 * What the rest of the provider may call is declared here; the structs'
 * private fields belong to their .c files (struct p4f_wait is public only
 * because CQs, counters and EQs embed it).
 *
 * Locks, in addition to the design in p4f.h:
 *   waitset->lock  guards a wait set's member list. It is outermost: taken
 *                  with no other lock held (fi_wait, fi_trywait, object
 *                  open/close), and held while a member's trywait
 *                  progresses workers and takes the member's own lock.
 *   A CQ's state is guarded by cq->lock, a counter's wake-up bookkeeping
 *   by cntr->lock (its values live in the engine's CT, under the engine
 *   domain's lock), an EQ's by eq->lock: leaves, never held while a
 *   worker lock is taken. The "armed" flag of an embedded struct p4f_wait
 *   is guarded by the same lock as its owner.
 */
#ifndef P4F_CQ_H
#define P4F_CQ_H

#include <limits.h>

#include "p4u_time.h"

/* ---- wait objects ------------------------------------------------------- */

struct p4f_waitset;

/*
 * Every CQ, counter and EQ with a wait object owns a struct p4f_wait: an
 * eventfd that is made readable when the object has something to report
 * (or fi_cq_signal was called) and an epoll fd that holds the eventfd and
 * that the application gets for FI_WAIT_FD. The domain can add its
 * transports' fds to that epoll set (p4f_wait_add_fd) so that, under manual
 * progress, the fd also becomes readable when the network has data
 * (fi_trywait then tells the caller to progress). A member of a wait set
 * has the same two fds; its epoll fd sits inside the set's epoll fd.
 *
 * Signalling costs a syscall only when somebody may be asleep: the eventfd
 * is written when "armed", and armed is set when a waiter (sread,
 * fi_cntr_wait, fi_trywait, fi_wait) drained it after finding the object
 * empty. Drain and check happen under the owner's lock, and writers signal
 * under the same lock, so no wake-up is lost.
 */
struct p4f_wait {
	enum fi_wait_obj wait_obj;	/* FI_WAIT_NONE, FI_WAIT_FD, FI_WAIT_SET */
	int epfd;			/* evfd + transport fds; -1 if none */
	int evfd;			/* eventfd: something to report */
	bool armed;			/* drained since the last signal */
	struct fid *owner;		/* the CQ, counter or EQ */
	struct p4f_waitset *set;	/* FI_WAIT_SET: the set joined */
	struct p4u_list set_node;	/* on the set's members */
};

/*
 * wait_obj as the application asked: NONE (no fds), UNSPEC and FD (own
 * fds), SET (own fds joined to set, which must be a wait set of fabric).
 * MUTEX_COND, YIELD and POLLFD: -FI_ENOSYS. Call once the owner is fully
 * initialised: a wait set may call the owner's trywait from then on.
 */
int p4f_wait_init(struct p4f_wait *wait, struct p4f_fabric *fabric,
		  struct fid *owner, enum fi_wait_obj wait_obj,
		  struct fid_wait *set);
void p4f_wait_fini(struct p4f_wait *wait);

static inline bool p4f_wait_enabled(const struct p4f_wait *wait)
{
	return wait->wait_obj != FI_WAIT_NONE;
}

/* Make the fds readable if a waiter may be asleep. Owner's lock held. */
void p4f_wait_signal(struct p4f_wait *wait);
/* Make the fds readable unconditionally; any thread, no lock (signal). */
void p4f_wait_kick(struct p4f_wait *wait);
/* Drain the eventfd and arm it. Owner's lock held; check state after. */
void p4f_wait_clear(struct p4f_wait *wait);
/* Block until readable or timeout_ms passed (-1 = forever): 0 or
 * -FI_EAGAIN (timeout). Never called with a lock held. */
int p4f_wait_block(struct p4f_wait *wait, int timeout_ms);
/*
 * Add (remove) a worker's wait fd to the object's epoll set,
 * level-triggered on input: the object's fd, and its wait set's, then
 * turn readable when the worker has work. The worker's progress consumes
 * what makes its fd readable.
 */
int p4f_wait_add_fd(struct p4f_wait *wait, int fd);
int p4f_wait_del_fd(struct p4f_wait *wait, int fd);
/* fi_control(FI_GETWAIT / FI_GETWAITOBJ) for an object embedding wait. */
int p4f_wait_control(struct p4f_wait *wait, int command, void *arg);

/* Absolute deadline (ns, monotonic) for a timeout in ms; < 0 = never. */
static inline uint64_t p4f_wait_deadline(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return p4u_time_ns() + (uint64_t)timeout_ms * 1000000ULL;
}

/* Milliseconds left before deadline, rounded up: -1 = forever, 0 = due. */
static inline int p4f_wait_remaining(uint64_t deadline)
{
	uint64_t now, left;

	if (deadline == UINT64_MAX)
		return -1;
	now = p4u_time_ns();
	if (now >= deadline)
		return 0;
	left = (deadline - now + 999999ULL) / 1000000ULL;
	return left > INT_MAX ? INT_MAX : (int)left;
}

int p4f_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		  struct fid_wait **waitset_p);
int p4f_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int p4f_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset_p);

/* fi_cq_strerror / fi_eq_strerror: prov_errno is a positive FI_E* code. */
const char *p4f_strerror_copy(int prov_errno, char *buf, size_t len);

/* ---- event queue ------------------------------------------------------- */

struct p4f_eq;

int p4f_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_p, void *context);
/* Queue an event (the EQ copies buf); -FI_EAGAIN if the EQ is full. */
ssize_t p4f_eq_write_event(struct p4f_eq *eq, uint32_t event, const void *buf,
			   size_t len, uint64_t flags);
/* Queue an error entry (err is a positive FI_E* value). */
ssize_t p4f_eq_write_error(struct p4f_eq *eq, fid_t fid, void *context,
			   uint64_t data, int err, int prov_errno);
/* Queue a full error entry; err->err_data (err_data_size bytes) is copied. */
ssize_t p4f_eq_write_err_entry(struct p4f_eq *eq,
			       const struct fi_eq_err_entry *err);
struct p4f_eq *p4f_eq_of(struct fid_eq *fid);
void p4f_eq_get(struct p4f_eq *eq);	/* a binding holds a reference */
void p4f_eq_put(struct p4f_eq *eq);
/* fi_trywait on one EQ: -FI_EAGAIN if an event is queued, else arm; 0. */
int p4f_eq_trywait(struct p4f_eq *eq);
/* The EQ's wait object (for p4f_wait_add_fd), NULL with FI_WAIT_NONE. */
struct p4f_wait *p4f_eq_waitobj(struct p4f_eq *eq);

/* ---- completion queue -------------------------------------------------- */

struct p4f_cq;

int p4f_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_p, void *context);
struct p4f_cq *p4f_cq_of(struct fid_cq *fid);
struct p4f_domain *p4f_cq_domain(const struct p4f_cq *cq);
void p4f_cq_get(struct p4f_cq *cq);	/* an endpoint or poll set binding */
void p4f_cq_put(struct p4f_cq *cq);

/*
 * Write one completion, in the CQ's format (fields the format lacks are
 * dropped). Takes the CQ lock (sinks call it under their worker's). A CQ
 * is never overrun: entries that do not fit in the ring wait in an
 * overflow list, in order, and reach the ring as the application reads
 * (FI_RM_ENABLED). -FI_ENOMEM only if even the overflow pool is exhausted.
 */
int p4f_cq_write(struct p4f_cq *cq, void *op_context, uint64_t flags,
		 size_t len, void *buf, uint64_t data, uint64_t tag,
		 fi_addr_t src_addr);
/* Write an error entry (err_data is copied, at most P4F_MAX_ERR_DATA
 * bytes). Takes the CQ lock. */
int p4f_cq_write_error(struct p4f_cq *cq, const struct fi_cq_err_entry *err);
/* Entries the ring can still take before it overflows. */
size_t p4f_cq_space(struct p4f_cq *cq);
/* fi_poll: true if the CQ holds an entry. */
bool p4f_cq_poll(struct p4f_cq *cq);
/* fi_trywait on one CQ: -FI_EAGAIN if an entry is queued, else arm; 0. */
int p4f_cq_trywait(struct p4f_cq *cq);
/* The CQ's wait object (for p4f_wait_add_fd), NULL with FI_WAIT_NONE. */
struct p4f_wait *p4f_cq_waitobj(struct p4f_cq *cq);
/* An endpoint binds (unbinds) with its worker: a reference each. */
int p4f_cq_bind(struct p4f_cq *cq, struct p4f_worker *worker);
void p4f_cq_unbind(struct p4f_cq *cq, struct p4f_worker *worker);
/* Progress the CQ's workers (no lock held); returns the work done. */
int p4f_cq_progress(struct p4f_cq *cq);
void p4f_cq_lock(struct p4f_cq *cq);
void p4f_cq_unlock(struct p4f_cq *cq);

/* ---- counter ----------------------------------------------------------- */

struct p4f_cntr;

int p4f_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr_p, void *context);
struct p4f_cntr *p4f_cntr_of(struct fid_cntr *fid);
struct p4f_domain *p4f_cntr_domain(const struct p4f_cntr *cntr);
void p4f_cntr_get(struct p4f_cntr *cntr);
void p4f_cntr_put(struct p4f_cntr *cntr);
/* Count successes / errors on the counter's CT (takes the engine's
 * domain lock; its notification wakes waiters). */
void p4f_cntr_inc(struct p4f_cntr *cntr, uint64_t n);
void p4f_cntr_inc_err(struct p4f_cntr *cntr, uint64_t n);
/* fi_poll: true (and checkpoint) if either value changed since the last
 * fi_poll report, fi_cntr_set or fi_cntr_add. */
bool p4f_cntr_poll(struct p4f_cntr *cntr);
/* fi_trywait on one counter: -FI_EAGAIN if a value changed since the last
 * fi_trywait looked, else arm; 0. */
int p4f_cntr_trywait(struct p4f_cntr *cntr);
/* The counter's wait object (for p4f_wait_add_fd), NULL with FI_WAIT_NONE. */
struct p4f_wait *p4f_cntr_waitobj(struct p4f_cntr *cntr);
/* The engine CT that holds the counter's values (triggered operations). */
uint64_t p4f_cntr_ct(const struct p4f_cntr *cntr);
/* FI_FLUSH_WORK without a counter: every counter's triggered ops. */
int p4f_cntr_cancel_triggered_all(struct p4f_domain *domain);
/* Progress the counter's workers (every worker of its domain). */
int p4f_cntr_progress(struct p4f_cntr *cntr);
/*
 * A worker of the domain joins (leaves) every counter's progress set;
 * domain lock held.
 */
int p4f_cntr_worker_add_all_locked(struct p4f_domain *domain,
				   struct p4f_worker *worker);
void p4f_cntr_worker_del_all_locked(struct p4f_domain *domain,
				    struct p4f_worker *worker);

#endif /* P4F_CQ_H */
