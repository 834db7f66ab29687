/*
 * p4f_cq.h - completion objects: wait objects and wait/poll sets
 * (p4f_wait.c), event queues (p4f_eq.c), completion queues (p4f_cq.c) and
 * counters (p4f_cntr.c). Included from p4f.h.
 *
 * What the rest of the provider may call is declared here; the structs'
 * private fields belong to their .c files.
 */
#ifndef P4F_CQ_H
#define P4F_CQ_H

/* ---- wait objects ------------------------------------------------------- */

/*
 * Every CQ, counter and EQ with a wait object owns a struct p4f_wait: an
 * eventfd that is made readable when the object has something to report
 * (or fi_*_signal was called) and an epoll fd that the application gets for
 * FI_WAIT_FD. The domain can add its transports' fds to that epoll set
 * (p4f_wait_add_fd) so that, under manual progress, the fd also becomes
 * readable when the network has data (fi_trywait then tells the caller to
 * progress).
 */
struct p4f_wait {
	int epfd;		/* what FI_GETWAIT hands out */
	int evfd;		/* eventfd: signalled state */
	struct p4f_waitset *set;/* FI_WAIT_SET: the set this object joined */
};

int p4f_wait_init(struct p4f_wait *wait, enum fi_wait_obj wait_obj,
		  struct fid_wait *set);
void p4f_wait_fini(struct p4f_wait *wait);
void p4f_wait_signal(struct p4f_wait *wait);	/* make the fds readable */
void p4f_wait_clear(struct p4f_wait *wait);	/* drain the eventfd */
/* Block until signalled or timeout_ms passed (-1 = forever): 0,
 * -FI_EAGAIN (timeout) or -errno. Never called with a lock held. */
int p4f_wait_block(struct p4f_wait *wait, int timeout_ms);
int p4f_wait_add_fd(struct p4f_wait *wait, int fd);
int p4f_wait_del_fd(struct p4f_wait *wait, int fd);

int p4f_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		  struct fid_wait **waitset_p);
int p4f_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int p4f_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset_p);

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
struct p4f_eq *p4f_eq_of(struct fid_eq *fid);
void p4f_eq_get(struct p4f_eq *eq);	/* a binding holds a reference */
void p4f_eq_put(struct p4f_eq *eq);

/* ---- completion queue -------------------------------------------------- */

struct p4f_cq;

int p4f_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_p, void *context);
struct p4f_cq *p4f_cq_of(struct fid_cq *fid);
struct p4f_domain *p4f_cq_domain(const struct p4f_cq *cq);
void p4f_cq_get(struct p4f_cq *cq);	/* an endpoint binding */
void p4f_cq_put(struct p4f_cq *cq);

/*
 * Write one completion, in the CQ's format (fields the format lacks are
 * dropped). With the domain lock held. A CQ is never overrun: entries that
 * do not fit in the ring wait in an overflow list, in order, and reach the
 * ring as the application reads (FI_RM_ENABLED).
 */
int p4f_cq_write_locked(struct p4f_cq *cq, void *op_context, uint64_t flags,
			size_t len, void *buf, uint64_t data, uint64_t tag,
			fi_addr_t src_addr);
/* Write an error entry (err_data is copied). With the domain lock held. */
int p4f_cq_write_error_locked(struct p4f_cq *cq,
			      const struct fi_cq_err_entry *err);
/* Entries the ring can still take before it overflows. */
size_t p4f_cq_space_locked(const struct p4f_cq *cq);

/* ---- counter ----------------------------------------------------------- */

struct p4f_cntr;

int p4f_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr_p, void *context);
struct p4f_cntr *p4f_cntr_of(struct fid_cntr *fid);
struct p4f_domain *p4f_cntr_domain(const struct p4f_cntr *cntr);
void p4f_cntr_get(struct p4f_cntr *cntr);
void p4f_cntr_put(struct p4f_cntr *cntr);
/* Count successes / errors. With the domain lock held; wakes waiters. */
void p4f_cntr_inc_locked(struct p4f_cntr *cntr, uint64_t n);
void p4f_cntr_inc_err_locked(struct p4f_cntr *cntr, uint64_t n);

#endif /* P4F_CQ_H */
