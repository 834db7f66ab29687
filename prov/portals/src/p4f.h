/*
 * p4f.h - the libfabric layer of the portals provider: provider-wide state,
 * the fabric, domain and endpoint objects, and the entry points every
 * p4f_*.c file offers the others. Objects with a header of their own
 * (p4f_cq.h: CQ, counter, EQ, wait objects; p4f_av.h; p4f_mr.h) are
 * included at the bottom.
 *
 * Progress and threads (docs/design.md §8): every endpoint's NI belongs to
 * an engine worker, wrapped here as struct p4f_worker (p4f_worker.c).
 * Thread levels map onto workers: FI_THREAD_DOMAIN with manual progress,
 * one worker for the domain and no locks at all; FI_PROGRESS_AUTO, one
 * locked worker for the domain with its progress thread; the other levels
 * with manual progress, a locked worker per endpoint, so threads that own
 * endpoints never contend. A CQ or counter read progresses the workers of
 * its "progress set" (struct p4f_pset): for a CQ the workers of the
 * endpoints bound to it, for a counter every worker of the domain.
 *
 * Locks (the whole design), in the order they are taken:
 *
 *   waitset->lock  a wait set's member list (p4f_wait.c); outermost.
 *   domain->lock   the control path's: the domain's lists of endpoints,
 *                  workers and counters, MR registration and publishing,
 *                  endpoint enable and close.
 *   worker lock    (p4f_worker_lock) everything of the endpoints the
 *                  worker serves: their NI and engine objects, sinks,
 *                  pending counts, overflow buffers. Held by the data
 *                  path (fi_tsend, fi_read, ...) and by progress; sinks
 *                  run under it.
 *   av->lock, mr_table lock   leaves of their objects (lookups from the
 *                  data path and sinks).
 *   the engine domain's lock  (inside p4e_ct_*, p4e_peer_*); CT notify
 *                  callbacks run under it.
 *   cq->lock, cntr->lock, eq->lock   leaves.
 *   fabric->lock   the fabric object (control path only).
 *
 * In FI_THREAD_DOMAIN domains every lock but waitset->lock and eq->lock is
 * inactive (a branch, no atomic). No function drops a lock its caller
 * holds, and nothing blocks (poll/read on an fd) while holding one:
 * blocking reads progress, prepare the workers for sleep, and poll with
 * no lock held. Functions named *_locked() expect their object's lock
 * (the endpoint's: its worker) held and assert it.
 */
#ifndef P4F_H
#define P4F_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <net/if.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "p4e.h"
#include "p4u_compiler.h"
#include "p4u_list.h"
#include "p4u_lock.h"
#include "p4f_stubs.h"

#define P4F_PROV_NAME		"portals"
#define P4F_PROV_VERSION	FI_VERSION(0, 1)
#define P4F_FABRIC_NAME		"portals"
/* The API version of the libfabric we build against is the one we speak. */
#define P4F_FI_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Limits advertised by fi_getinfo and enforced by the objects. */
#define P4F_IOV_LIMIT		8	/* tx/rx iov_limit */
#define P4F_RMA_IOV_LIMIT	1
#define P4F_MR_IOV_LIMIT	8
#define P4F_CQ_DATA_SIZE	8
#define P4F_MR_KEY_SIZE		8
#define P4F_MAX_ERR_DATA	64	/* bytes of provider error data */
/* auth_key: 8 bytes, little-endian, the transport's 64-bit key checked
 * at connection set-up (all zero = no key) */
#define P4F_AUTH_KEY_SIZE	8

extern struct fi_provider p4f_prov;

/* Tunables, filled once from FI_PORTALS_* by p4f_init.c (see the man page). */
struct p4f_params {
	char *iface;		/* restrict getinfo to this interface */
	size_t port_low;	/* listening port range, 0 = any */
	size_t port_high;
	size_t eager_size;
	size_t rdzv_chunk;
	size_t rdzv_offer;
	size_t cq_size;		/* default CQ depth */
	size_t tx_size;
	size_t rx_size;
	size_t inject_size;
	size_t oflow_buf_size;
	size_t oflow_buf_count;
	size_t unexp_max;	/* unexpected headers kept per endpoint */
	size_t tx_held_max;	/* completed sends kept for their targets */
	size_t tx_copy_mem;	/* bytes of copies per endpoint */
	size_t peer_timeout_ms;
	size_t connect_retry_ms;	/* refused connects retried this long */
	size_t linger_ms;	/* fi_close waits this long for deliveries */
	int progress_thread;
	int shm;
	int shm_cma;	/* listed here; the shm transport reads it */
	size_t shm_eager_size;	/* eager_size towards shm peers */
	int stats;
	char *transport;	/* auto (default), tcp, verbs, loop */
	size_t ack_delay_us;
};

extern struct p4f_params p4f_params;

/*
 * The eager size an endpoint's limits are given in (atomic sizes, the
 * max_order_* sizes): the least over its transports, as the engine's NI
 * takes it (shm peers have FI_PORTALS_SHM_EAGER_SIZE, 0: as the rest).
 */
static inline size_t p4f_eager_min(void)
{
	if (p4f_params.shm && p4f_params.shm_eager_size &&
	    p4f_params.shm_eager_size < p4f_params.eager_size)
		return p4f_params.shm_eager_size;
	return p4f_params.eager_size;
}

/* An address as the AV stores it and fi_getname returns it. */
union p4f_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* A usable local interface address (p4f_addr.c). */
struct p4f_iface {
	char name[IF_NAMESIZE];
	union p4f_sockaddr addr;	/* port 0 */
	bool loopback;
	bool verbs;			/* an RDMA verbs port (name: device) */
};

/*
 * The usable interfaces: up, with an IPv4 or a global IPv6 address, in
 * the order fi_getinfo lists them (non-loopback first, IPv4 before IPv6 per
 * interface, loopback last), restricted to FI_PORTALS_IFACE when set.
 * family is AF_INET, AF_INET6 or AF_UNSPEC. Free with free().
 */
int p4f_iface_list(int family, struct p4f_iface **ifaces_p, size_t *count_p);
/* The first usable address of interface name in family (AF_UNSPEC: any). */
int p4f_iface_lookup(const char *name, int family, struct p4f_iface *iface_p);

/*
 * FI_PORTALS_TRANSPORT (p4f_getinfo.c): auto (default: verbs ports first,
 * then the TCP interfaces), tcp, verbs (only verbs ports) or loop.
 */
enum p4f_xport { P4F_XPORT_AUTO, P4F_XPORT_TCP, P4F_XPORT_VERBS,
		 P4F_XPORT_LOOP };
enum p4f_xport p4f_xport_mode(void);
/*
 * The interfaces fi_getinfo lists for the mode: verbs ports (named after
 * the device; the address is the one of its RoCE GID, else the first
 * usable interface's, where the bootstrap TCP listener goes) and/or
 * p4f_iface_list(). Free with free().
 */
int p4f_xport_iface_list(int family, struct p4f_iface **ifaces_p,
			 size_t *count_p);
/* Like p4f_iface_lookup over p4f_xport_iface_list (name NULL: first). */
int p4f_xport_iface_lookup(const char *name, int family,
			   struct p4f_iface *iface_p);

size_t p4f_sockaddr_len(const struct sockaddr *sa);
bool p4f_sockaddr_valid(const void *addr, size_t len);
/* "fi_sockaddr_in://1.2.3.4:5" / "fi_sockaddr_in6://[::1]:5" */
int p4f_sockaddr_str(const struct sockaddr *sa, char *buf, size_t *len);

/* ---- fabric ------------------------------------------------------------ */

struct p4f_fabric {
	struct fid_fabric fabric_fid;
	atomic_int ref;			/* domains, EQs, wait sets */
	struct p4u_lock lock;
	char *name;
};

int p4f_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_p,
		    void *context);

/* ---- domain ------------------------------------------------------------ */

struct p4f_worker;

struct p4f_domain {
	struct fid_domain domain_fid;
	struct p4f_fabric *fabric;
	atomic_int ref;			/* endpoints, CQs, counters, AVs, MRs */
	struct p4u_lock lock;		/* the control path (above) */
	bool locked;			/* objects below it take mutexes */
	struct fi_info *info;		/* what the domain was opened with */
	uint32_t api_version;		/* the application's, from fi_fabric */
	char ifname[IF_NAMESIZE];
	union p4f_sockaddr ifaddr;	/* the interface address, port 0 */
	uint64_t mr_mode;
	enum fi_threading threading;
	enum fi_progress data_progress;
	struct p4f_mr_table *mr_table;	/* p4f_mr.h */
	struct fid_eq *eq;		/* fi_domain_bind(eq) */
	uint64_t eq_flags;
	struct p4e_dom *edom;		/* the engine's domain */
	const struct p4t_ops *transport;
	/* the domain's worker (FI_THREAD_DOMAIN, FI_PROGRESS_AUTO), or NULL:
	 * every endpoint has one of its own */
	struct p4f_worker *worker;
	struct p4u_list workers;	/* every worker of the domain (lock) */
	struct p4u_list cntrs;		/* every counter (lock) */
	struct p4u_list eps;		/* enabled endpoints (lock) */
};

int p4f_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain_p, void *context);

/* Engine operations beyond the context sizes (p4f_ep.c): two targets'
 * worth of held-back acknowledgements (P4E_ACK_EVERY each). */
#define P4F_ACK_SLACK	32
/* Sends are copied up to the eager size, but at most this (p4f_ep.c):
 * each copy takes a block sized to it until its target has the payload. */
#define P4F_COPY_SIZE_MAX	((size_t)64 << 10)

/*
 * p4f_worker.c: the provider's side of an engine worker: which endpoints
 * it serves (their overflow buffers go back in after its progress), its
 * place in the domain and a reference count (progress sets take a
 * reference while they progress it, so a worker outlives a racing
 * endpoint close).
 */
struct p4f_worker {
	struct p4e_worker *ew;
	struct p4f_domain *domain;
	atomic_int ref;
	struct p4u_list link;		/* domain->workers */
	struct p4u_list eps;		/* struct p4f_ep.worker_link (lock) */
};

/* A worker of the domain (thread: with a progress thread); ref 1. */
int p4f_worker_open(struct p4f_domain *domain, bool thread,
		    struct p4f_worker **worker_p);
void p4f_worker_get(struct p4f_worker *worker);
/* The last reference destroys it (its endpoints are gone by then). */
void p4f_worker_put(struct p4f_worker *worker);
void p4f_worker_lock(struct p4f_worker *worker);
void p4f_worker_unlock(struct p4f_worker *worker);
void p4f_worker_assert_held(struct p4f_worker *worker);
/* Lock held: progress the engine worker, then put back the overflow
 * buffers its endpoints' sinks gave back. Returns the work done. */
int p4f_worker_progress_locked(struct p4f_worker *worker);
int p4f_worker_wait_fd(struct p4f_worker *worker);
/* No lock held: run what the triggered-op lists made due, on every worker
 * of the domain (after an application's counter update or cancel). */
void p4f_domain_run_triggered(struct p4f_domain *domain);

/*
 * A progress set: the workers a CQ or counter progresses, with how many
 * bindings put each there, guarded by its owner's lock. The owner's wait
 * object holds each worker's wait fd while the worker is in the set.
 */
struct p4f_pset_ent {
	struct p4f_worker *worker;
	unsigned count;
};

struct p4f_pset {
	struct p4f_pset_ent *ents;
	size_t n, cap;
};

struct p4f_wait;
/* Owner's lock held: add / remove one binding of worker. */
int p4f_pset_add(struct p4f_pset *set, struct p4f_wait *wait,
		 struct p4f_worker *worker);
void p4f_pset_del(struct p4f_pset *set, struct p4f_wait *wait,
		  struct p4f_worker *worker);
void p4f_pset_fini(struct p4f_pset *set);
/*
 * Progress every worker of the set once, each under its own lock; lock is
 * the owner's lock, taken here only to look at the set (not held on
 * entry). Returns the work done. With sleep, then prepares each for a
 * sleep on its wait fd instead (acknowledgements out, deadline timer
 * armed).
 */
int p4f_pset_progress(struct p4f_pset *set, struct p4u_lock *lock);
void p4f_pset_prepare_sleep(struct p4f_pset *set, struct p4u_lock *lock);

static inline struct p4f_domain *p4f_domain_of(struct fid_domain *fid)
{
	return container_of(fid, struct p4f_domain, domain_fid);
}

/* ---- endpoint ---------------------------------------------------------- */

struct p4f_cq;
struct p4f_cntr;
struct p4f_av;
struct p4f_eq;

enum p4f_ep_cntr_slot {
	P4F_CNTR_SEND,
	P4F_CNTR_RECV,
	P4F_CNTR_READ,
	P4F_CNTR_WRITE,
	P4F_CNTR_REMOTE_READ,
	P4F_CNTR_REMOTE_WRITE,
	P4F_CNTR_MAX,
};

/* FI_OPT_MIN_MULTI_RECV until the application sets it. */
#define P4F_MIN_MULTI_RECV_DEFAULT	64

/* An event sink of an endpoint: engine events become CQ entries. */
struct p4f_sink {
	struct p4e_eq eq;
	struct p4f_ep *ep;
};

/* One overflow buffer for unexpected eager data (p4f_sink.c). */
struct p4f_oflow {
	struct p4u_list link;		/* in ep->oflow_repost while unlinked */
	uint32_t pt;
	void *buf;
	uint64_t me;
};

/* The portal table indexes of an endpoint's NI (docs/design.md §3.2). */
enum p4f_pt_index {
	P4F_PT_TAG = 0,
	P4F_PT_MSG = 1,
	P4F_PT_COUNT,			/* the two-sided PTs (overflow buffers) */
	P4F_PT_RMA = P4F_PT_COUNT,	/* MR entries (p4f_mr.c), no overflow */
};

struct p4f_ep {
	struct fid_ep ep_fid;
	struct p4f_domain *domain;
	struct p4f_worker *worker;	/* its own, the domain's, or its
					 * parent's (alias) */
	struct p4u_list worker_link;	/* worker->eps */
	struct fi_info *info;
	struct p4f_ep *parent;		/* fi_ep_alias: the endpoint aliased */
	atomic_int ref;			/* aliases */
	uint64_t caps;
	uint64_t tx_op_flags;
	uint64_t rx_op_flags;
	bool enabled;
	struct p4f_cq *tx_cq;
	uint64_t tx_cq_flags;		/* FI_SELECTIVE_COMPLETION */
	struct p4f_cq *rx_cq;
	uint64_t rx_cq_flags;
	struct p4f_cntr *cntrs[P4F_CNTR_MAX];
	struct p4f_av *av;
	struct p4f_eq *eq;
	size_t min_multi_recv;
	union p4f_sockaddr addr;	/* what fi_getname returns */
	/* engine state */
	struct p4e_ni *ni;
	struct p4u_list dom_link;	/* in domain->eps once enabled */
	struct p4f_sink rx_sink;	/* PT events: receives */
	struct p4f_sink tx_sink;	/* MD events: sends */
	uint64_t md_all;		/* the whole address space */
	uint64_t md_volatile;		/* the same, copied at post (inject) */
	struct p4f_sink rma_sink;	/* RMA PT and RMA MD events */
	uint64_t md_rma;		/* md_all / md_volatile for one-sided */
	uint64_t md_rma_volatile;	/* ops, reporting to rma_sink */
	struct p4f_oflow *oflow;	/* P4F_PT_COUNT * p4f_params count */
	size_t noflow;
	struct p4u_list oflow_repost;
	size_t tx_pending;		/* sends posted, not completed */
	size_t rx_pending;		/* receives posted, not completed */
	size_t tx_size, rx_size;	/* limits: beyond them -FI_EAGAIN */
	size_t inject_size;
	uint64_t peek_discard;		/* FI_PEEK | FI_DISCARD: found message */
	struct p4f_ep_trig *trig;	/* p4f_trigger.c: deferred-work MDs */
};

int p4f_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_p, void *context);

static inline struct p4f_ep *p4f_ep_of(struct fid_ep *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid);
}

/*
 * fi_ep_alias (p4f_ep_alias.c): an alias is a struct p4f_ep whose only
 * own state is its op_flags; data paths read the flags from the endpoint
 * they were called on, then work on p4f_ep_data(ep), which owns the NI,
 * the sinks and the pending counts.
 */
static inline struct p4f_ep *p4f_ep_data(struct p4f_ep *ep)
{
	return ep->parent ? ep->parent : ep;
}
int p4f_ep_alias_open(struct p4f_ep *ep, struct fi_alias *alias);

/* The endpoint's worker lock (an alias takes its parent's). */
static inline void p4f_ep_lock(struct p4f_ep *ep)
{
	p4f_worker_lock(ep->worker);
}

static inline void p4f_ep_unlock(struct p4f_ep *ep)
{
	p4f_worker_unlock(ep->worker);
}

/* p4f_sink.c: event sinks, overflow buffers */
extern const struct p4e_eq_ops p4f_sink_rx_ops;
extern const struct p4e_eq_ops p4f_sink_tx_ops;
int p4f_oflow_post_all(struct p4f_ep *ep);
void p4f_oflow_free_all(struct p4f_ep *ep);
/* Append again the overflow buffers the engine gave back (not from a sink). */
void p4f_oflow_repost_locked(struct p4f_ep *ep);
/* fi_addr of an engine peer id for FI_SOURCE. */
fi_addr_t p4f_ep_src_addr(struct p4f_ep *ep, uint32_t peer);

/* p4f_xfer.c: the message and tagged data path shared by p4f_msg.c and
 * p4f_tagged.c */
struct p4f_trig_req;
struct p4f_xfer_args {
	const struct iovec *iov;
	size_t count;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;
	uint64_t data;
	void *context;
	uint64_t flags;
	const struct p4f_trig_req *trig;	/* deferred work, or NULL */
};

/*
 * Provider-internal operation flag (bit 63, unused by libfabric's op
 * flags, never copied to a CQ entry): the operation came from an
 * fi_inject* call, which writes no completion (fi_msg(3)). FI_INJECT
 * itself only says the buffer is free on return: fi_sendmsg(FI_INJECT)
 * and FI_INJECT in the op_flags still complete.
 */
#define P4F_XFER_INJECT_CALL	(1ULL << 63)
/*
 * Provider-internal (bit 62, never copied to a CQ entry either): a
 * triggered operation that took a tx or rx slot at post; one cancelled
 * before it fires gives the slot back (p4f_trigger.c).
 */
#define P4F_XFER_SLOT		(1ULL << 62)
#define P4F_XFER_INTERNAL	(P4F_XFER_INJECT_CALL | P4F_XFER_SLOT)

ssize_t p4f_xfer_send(struct p4f_ep *ep, uint32_t pt,
		      const struct p4f_xfer_args *a);
ssize_t p4f_xfer_recv(struct p4f_ep *ep, uint32_t pt,
		      const struct p4f_xfer_args *a);
ssize_t p4f_ep_cancel_locked(struct p4f_ep *ep, void *context);

extern struct fi_ops_msg p4f_msg_ops;
extern struct fi_ops_tagged p4f_tagged_ops;

/*
 * p4f_trigger.c: triggered operations. An operation posted with FI_TRIGGER
 * (its context a struct fi_triggered_context; fires on the counter's
 * success value) or queued as deferred work (a p4f_trig_req; fires on
 * success + error) becomes an engine triggered operation on the
 * counter's CT. The data paths build the engine arguments as for an
 * immediate post (user_ptr, user_flags, md set) and call these instead,
 * with the endpoint's worker lock held, on p4f_ep_data(ep).
 */
struct p4f_trig_req {
	struct p4f_cntr *cntr;		/* triggering counter */
	uint64_t threshold;
	struct p4f_cntr *completion_cntr;	/* or NULL */
	const void *work;		/* the fi_deferred_work, for cancel */
};
enum p4f_trig_xfer_op {
	P4F_TRIG_OP_PUT,
	P4F_TRIG_OP_GET,
	P4F_TRIG_OP_ATOMIC,
	P4F_TRIG_OP_FETCH,
	P4F_TRIG_OP_SWAP,
};
/* req NULL: FI_TRIGGER with context a struct fi_triggered_context. */
ssize_t p4f_trigger_xfer_locked(struct p4f_ep *ep, enum p4f_trig_xfer_op op,
				struct p4e_xfer *x, void *context,
				uint64_t flags, const struct p4f_trig_req *req);
ssize_t p4f_trigger_append_locked(struct p4f_ep *ep, uint32_t pt,
				  const struct p4e_me_desc *d, void *context,
				  uint64_t flags, const struct p4f_trig_req *req);
/* FI_TRIGGER on fi_read, fi_write and the atomics (p4f_rma.h args):
 * the RMA layer hands such calls here; the lock is taken inside. */
struct p4f_rma_args;
struct p4f_atomic_args;
ssize_t p4f_trigger_rma(struct p4f_ep *ep, const struct p4f_rma_args *a,
			bool write);
ssize_t p4f_trigger_atomic(struct p4f_ep *ep,
			   const struct p4f_atomic_args *a);
/* fi_control(domain, FI_QUEUE_WORK / FI_CANCEL_WORK / FI_FLUSH_WORK) */
int p4f_trigger_control(struct p4f_domain *domain, int command, void *arg);
/* The NI's trig_dropped callback (ctx: the endpoint): a triggered op
 * cancelled before it fired gives back its slot. Worker lock held. */
void p4f_trigger_dropped(void *ctx, void *user_ptr, uint64_t user_flags);
/* Endpoint close: the per-endpoint MDs of deferred work go with the NI. */
void p4f_trigger_ep_fini_locked(struct p4f_ep *ep);

/* ---- getinfo / attributes (p4f_getinfo.c, p4f_attr.c) ------------------ */

int p4f_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info_p);

/* The provider's capabilities and ceilings (addr_format FI_SOCKADDR: IN and
 * IN6 entries are both checked against it). */
extern const struct fi_info p4f_info_template;
/* Fill a freshly fi_allocinfo()ed info with the template (deep copy). */
int p4f_info_from_template(struct fi_info *info);
/* 0 if prov (one of ours) can satisfy hints, else -FI_ENODATA (logs why). */
int p4f_check_info(uint32_t version, const struct fi_info *prov,
		   const struct fi_info *hints);
/* Narrow prov to what hints asked for (caps, modes, threading, ...). */
void p4f_alter_info(uint32_t version, struct fi_info *prov,
		    const struct fi_info *hints);

/* ---- shared helpers ---------------------------------------------------- */

/*
 * Whether a domain's objects need mutexes: only FI_THREAD_DOMAIN with
 * manual progress guarantees one thread at a time in the whole domain.
 * (FI_THREAD_COMPLETION does not: threads may use endpoints with
 * separate CQs at once, and control calls are thread safe at every
 * level.)
 */
static inline bool p4f_domain_locked(enum fi_threading threading,
				     enum fi_progress progress)
{
	return progress == FI_PROGRESS_AUTO || threading != FI_THREAD_DOMAIN;
}

/* Whether every endpoint gets a worker of its own (docs/design.md §8). */
static inline bool p4f_domain_worker_per_ep(enum fi_threading threading,
					    enum fi_progress progress)
{
	return progress != FI_PROGRESS_AUTO && threading != FI_THREAD_DOMAIN;
}

#include "p4f_cq.h"
#include "p4f_av.h"
#include "p4f_mr.h"
#include "p4f_rma.h"

#endif /* P4F_H */
