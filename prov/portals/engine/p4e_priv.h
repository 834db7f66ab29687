/*
 * p4e_priv.h - the engine's internal objects, shared by its files:
 *
 *   p4e_worker.c  progress, wait fd, timers, thread
 *   p4e_dom.c     domain, peer table        p4e_ct.c      counting events
 *   p4e_trig.c    triggered operations      p4e_eq.c      ring EQ, event emit
 *   p4e_ni.c      NI, upcalls, progress     p4e_pt.c      portal table
 *   p4e_md.c      memory descriptors        p4e_me.c      append/unlink/search
 *   p4e_iov.c     region copies             p4e_ini.c     initiator side
 *   p4e_copy.c    payload copies            p4e_ini_post.c  posting
 *   p4e_tgt.c     target side               p4e_tgt_op.c  target operations
 *   p4e_fc.c      sequences, acceptance, acknowledgements, flow control
 *   p4e_match.c   entry-list index          p4e_uindex.c  header index
 *                 (both: p4e_match.h, hashing p4e_match_hash.h)
 *   p4e_atomic.c  atomic operations (p4e_atomic.h)
 *   p4e_wire.c    the wire codec (include/p4_wire.h)
 *
 * Nothing here is visible outside the engine (include/p4e.h is the API).
 * NI functions run under the NI's worker lock; the domain's state (CTs,
 * triggered-op lists, the peer table's growth) under dom->lock, a leaf
 * taken inside the engine (docs/design.md §8). Comments cite the engine's
 * rules as "rule N" (docs/conventions.md §2).
 */
#ifndef P4E_PRIV_H
#define P4E_PRIV_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "p4e.h"
#include "p4e_match.h"
#include "p4t.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_hash.h"
#include "p4u_list.h"
#include "p4u_log.h"
#include "p4u_lock.h"
#include "p4u_pool.h"
#include "p4u_timer.h"

/* Largest iovec an MD or ME may have (ptl_ni_limits_t.max_iovecs). */
#define P4E_IOV_MAX		64
/* Room for a request header with both cookies. */
#define P4E_REQ_HDR_MAX	(sizeof(struct p4w_hdr) + sizeof(struct p4w_req) + \
			 2 * sizeof(struct p4w_cookie))
#define P4E_RESP_HDR_MAX (sizeof(struct p4w_hdr) + sizeof(struct p4w_resp))

/*
 * start + offset as an address. Integer arithmetic: an MD may describe the
 * whole address space (start NULL, offsets are addresses), which pointer
 * arithmetic on NULL would make undefined.
 */
static inline void *p4e_addr_add(void *start, uint64_t offset)
{
	return (void *)((uintptr_t)start + (uintptr_t)offset);
}

/* Sequence numbers compare modulo 2^32. */
static inline bool p4e_seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* ---- domain: peers, CTs, triggered ops -------------------------------- */

struct p4e_peer_addr {
	struct p4u_hash_node hnode;
	uint32_t id;
	uint32_t addrlen;
	uint8_t addr[P4W_ADDR_MAX];	/* without a host token (p4u_addr.h) */
	uint64_t token;			/* the first token seen; atomic */
};

/* Peers by id: a fixed table of chunks, so readers need no lock. */
#define P4E_PEER_CHUNK		1024
#define P4E_PEER_CHUNKS_MAX	1024	/* 1 Mi peers */

struct p4e_dom {
	struct p4u_lock lock;		/* CTs, triggered ops, peer inserts */
	struct p4u_list nis;		/* dom->lock */
	struct p4u_pool cts;		/* struct p4e_ct */
	struct p4u_pool trigs;		/* struct p4e_trig_op */
	/* peers[id / CHUNK][id % CHUNK]: written once under the lock,
	 * published with release stores, read without it */
	struct p4e_peer_addr **peer_chunks[P4E_PEER_CHUNKS_MAX];
	uint32_t npeers;		/* atomic reads */
	uint32_t max_peers;
	struct p4u_hash peer_hash;	/* address -> struct p4e_peer_addr */
	struct p4u_list ct_due;		/* counter ops due, applied in order */
	bool ct_running;		/* applying them */
	uint64_t trig_seq;		/* post order, FIFO among equals */
	struct p4e_worker_attr worker_attr;
	struct p4e_worker *worker;	/* the domain's own (lazily) */
};

/* The engine's worker (p4e_worker.c). */
struct p4e_worker {
	struct p4u_lock lock;
	bool locked;
	struct p4u_list nis;		/* struct p4e_ni.worker_link */
	struct p4u_timerq timers;
	int epfd;			/* the wait fd */
	int kick_fd;			/* eventfd */
	int timer_fd;			/* timerfd on timers' earliest */
	uint64_t timer_armed_ns;	/* what timer_fd holds */
	uint64_t now_ns;		/* the clock at its last read here */
	uint32_t clock_tick;		/* progress calls since */
	bool clock_stale;		/* read it next time: we may have slept */
	bool may_sleep;			/* somebody sleeps on epfd at times */
	int kicked;			/* atomic: kick_fd holds a count */
	bool has_thread;
	bool thread_asleep;		/* the thread waits on epfd, armed */
	int stop;			/* atomic: the thread must end */
	pthread_t thread;
};

struct p4e_ct {
	struct p4e_ct_event val;
	struct p4u_list trig_sum;	/* success + failure rule, by threshold */
	struct p4u_list trig_success;	/* success-only rule, by threshold */
	p4e_ct_notify_func_t notify;
	void *notify_ctx;
};

/* dom->lock held */
struct p4e_ct *p4e_ct_lookup(struct p4e_dom *dom, uint64_t ct);
/* Takes dom->lock: whether ct names a CT. */
bool p4e_ct_exists(struct p4e_dom *dom, uint64_t ct);
/*
 * Takes dom->lock: count one event on CT handle ct (P4E_HANDLE_NONE ok):
 * success += (bytes ? mlength : 1), or failure += 1; collects what
 * became due.
 */
void p4e_ct_count(struct p4e_dom *dom, uint64_t ct, bool ok, bool bytes,
		  uint64_t mlength);

enum p4e_trig_kind {
	P4E_TRIG_PUT,
	P4E_TRIG_GET,
	P4E_TRIG_ATOMIC,
	P4E_TRIG_FETCH,
	P4E_TRIG_SWAP,
	P4E_TRIG_CT_INC,
	P4E_TRIG_CT_SET,
	P4E_TRIG_ME_APPEND,
	P4E_TRIG_ME_UNLINK,
};

struct p4e_trig_op {
	struct p4u_list link;		/* a CT list, dom->ct_due, ni->trig_due */
	enum p4e_trig_kind kind;
	uint64_t threshold;
	uint64_t seq;
	unsigned flags;			/* P4E_TRIG_* */
	uint64_t cookie;
	bool dropped;			/* on ni->trig_due to be freed unrun */
	uint64_t ct;			/* the triggering CT */
	struct p4e_ni *ni;
	struct p4e_xfer xfer;		/* .iov: our copy of the caller's */
	uint64_t target_ct;		/* CT_INC / CT_SET */
	struct p4e_ct_event ct_val;
	uint64_t me;			/* ME_APPEND / ME_UNLINK */
};

/*
 * dom->lock held: move the ops of ct that are now due to where they run
 * (an NI op to its NI's due list, kicking its worker; a counter op to
 * dom->ct_due) and apply the counter ops due, in order.
 */
void p4e_trig_collect(struct p4e_dom *dom, struct p4e_ct *ct);
/* dom->lock held: drop every pending op of ct (CT freed or cancelled). */
void p4e_trig_drop_ct(struct p4e_dom *dom, struct p4e_ct *ct);
/* Worker lock held: run (or free, if dropped) the ops due on ni. */
int p4e_trig_run_ni(struct p4e_ni *ni);
/* Worker lock held: drop every pending op of ni (NI destroy). */
void p4e_trig_drop_ni(struct p4e_ni *ni);

/* ---- NI, portal table, entries ----------------------------------------- */

struct p4e_pt {
	bool allocated;
	bool enabled;
	bool resources_freed;		/* FC_RESEND: try to resume peers */
	unsigned options;
	struct p4e_eq *eq;
	struct p4e_mlist prio;
	struct p4e_mlist oflow;
	struct p4e_uindex uhs;
	struct p4u_list blocked;	/* struct p4e_npeer held by FC_RESEND */
};

struct p4e_me {
	struct p4e_mentry ment;
	struct p4e_ni *ni;
	uint32_t pt_index;
	uint8_t list;			/* enum p4e_list */
	bool linked;			/* on its list (matchable) */
	bool unlink_pending;		/* off the list, events to come */
	bool freed_pending;		/* overflow: AUTO_FREE when uh_refs 0 */
	bool link_waiting;		/* append stopped at a header whose data
					 * is still arriving; resumes then */
	bool triggered;			/* waiting for a triggered append */
	unsigned options;
	void *start;			/* bytes, or struct iovec[] */
	uint32_t iovcnt;		/* 0: contiguous */
	uint64_t length;		/* total bytes */
	uint64_t ct;
	uint32_t uid;
	uint64_t min_free;
	uint64_t base;			/* [ext] subtracted from remote offsets */
	bool id_filtered;		/* [ext] id_filter narrows match_id ANY */
	uint64_t id_filter;
	uint64_t local_offset;
	void *user_ptr;
	uint64_t user_flags;
	uint32_t pending;		/* operations using the entry */
	uint32_t uh_refs;		/* unexpected headers with data here */
	bool cancel_event;		/* P4E_UNLINK_CANCEL */
	struct p4e_iovbuf *iovbuf;	/* our copy of a short iovec */
};

/* A copied iovec of an entry (P4E_ME_IOVEC up to P4E_XFER_IOV_MAX) or of
 * an operation (p4e_xfer.iov). */
struct p4e_iovbuf {
	struct iovec iov[P4E_XFER_IOV_MAX];
};

struct p4e_md {
	struct p4e_ni *ni;
	void *start;
	uint32_t iovcnt;		/* 0: contiguous */
	uint64_t length;		/* total bytes */
	unsigned options;
	struct p4e_eq *eq;
	uint64_t ct;
	uint32_t pending;		/* operations using it */
};

/*
 * An unexpected header: a message matched on the overflow list. Kept
 * small, as a receiver may hold millions (docs/design.md §7.2): its
 * match bits and initiator are the index entry's, and a rendezvous
 * header has a source cookie where a header whose data a pull still
 * brings into the overflow entry has that pull.
 */
struct p4e_uh {
	struct p4e_uentry uent;		/* .bits: match bits, .source:
					 * the initiator's peer id */
	uint64_t op_id;
	uint64_t rlength;
	uint64_t mlength;		/* bytes deposited in the overflow entry */
	uint64_t remote_offset;
	uint64_t hdr_data;
	struct p4e_me *oflow_me;	/* where the data is (NULL: header only) */
	uint64_t oflow_offset;
	union {
		struct p4w_cookie src;	/* rendezvous source (no oflow_me) */
		/* a rendezvous pulled into the overflow entry: matchable at
		 * once (order), deliverable only once the pull is done */
		struct {
			struct p4e_tgt_op *filling;	/* that pull, NULL
							 * once the data is in */
			struct p4e_me *waiter;	/* the entry that matched
						 * meanwhile */
		};
	};
	uint32_t uid;
	uint16_t pt_index;		/* limits.max_pt_index < 4096 */
	uint8_t type;			/* enum p4w_type */
	uint8_t ack_req;
	uint8_t atomic_op;
	uint8_t atomic_type;
	uint8_t proto;
	uint8_t ev_flags;		/* P4E_EVENT_F_* */
	bool claimed;			/* detached by P4E_SEARCH_CLAIM */
	uint8_t fail;			/* that pull failed: reported with it */
};

/* The pull still filling uh's overflow space, if any (the union). */
static inline struct p4e_tgt_op *p4e_uh_filling(const struct p4e_uh *uh)
{
	return uh->oflow_me ? uh->filling : NULL;
}

/* Per NI and peer: the link and both directions' protocol state. */
struct p4e_npeer {
	struct p4e_ni *ni;
	uint32_t id;
	struct p4t_conn *conn;
	struct p4e_xport *xp;		/* conn's transport, with conn */
	/* as initiator, towards the peer */
	uint32_t tx_seq;		/* next sequence number to assign */
	uint32_t tx_acked;		/* every seq below was accepted */
	bool tx_held;			/* nacked: waiting for RESUME */
	struct p4u_list tx_queue;	/* posted, not (re)sent yet, in seq order */
	struct p4u_list tx_sent;	/* sent, not accepted yet, in seq order */
	struct p4u_list tx_wait;	/* accepted, response still due */
	struct p4u_list flush_link;	/* in ni->flush while tx_queue waits */
	/* as target, from the peer */
	uint32_t rx_expect;		/* next seq to accept */
	uint32_t rx_told;		/* last ack_seq sent to the peer */
	bool rx_blocked;		/* nacked rx_expect, dropping until resume */
	struct p4u_list block_link;	/* in pt->blocked */
	struct p4u_list ack_link;	/* in ni->ack_pending */
	uint64_t ack_since_ns;		/* when what it is owed began to wait */
	bool ack_now;			/* the peer waits for an acceptance */
	/* acknowledgements held while a rendezvous streams in from the
	 * peer (p4e_fc.c): copies, sent in order at release */
	uint32_t pulls;			/* our pulls from it in flight */
	uint32_t nheld;
	uint8_t (*held)[P4E_RESP_HDR_MAX];	/* P4E_ACK_HOLD_MAX slots */
	/* responses and control messages the transport could not take yet,
	 * in order; requests wait behind them (an ACK must never be passed
	 * by a later cumulative ack) */
	struct p4u_list deferred;	/* struct p4e_defer */
	struct p4u_list defer_link;	/* in ni->deferring */
};

struct p4e_defer {
	struct p4u_list link;
	size_t len;
	uint8_t data[];
};

/* Copies up to this many bytes live inside their operation. */
#define P4E_OP_SMALL	32

/*
 * Copies sized to their payload (p4e_copy.c, docs/design.md §4.1, §7.5):
 * one pool per power of two from 64 bytes up to max_len, each giving its
 * chunks back when a burst is over (util/p4u_pool.h), and a byte budget.
 */
#define P4E_COPY_MIN_SHIFT	6
#define P4E_COPY_CLASSES	16	/* 64 B << 15 = 2 MiB */

struct p4e_copies {
	struct p4u_pool cls[P4E_COPY_CLASSES];
	unsigned ncls;
	size_t max_len;			/* the largest copy */
	uint64_t bytes;			/* taken now, counted by class size */
	uint64_t max_bytes;
};

/*
 * The life of an initiator operation (p4e_ini.c, docs/design.md §4.2,
 * §7.1, §7.2): one state at a time, changed only by p4e_op_step(). The
 * list an operation is on follows from its state.
 */
enum p4e_op_state {
	P4E_OPS_FREE,		/* in the pool, or being prepared by a post */
	P4E_OPS_QUEUED,		/* npeer->tx_queue: never sent yet */
	P4E_OPS_SENT,		/* npeer->tx_sent: sent, not accepted yet */
	P4E_OPS_REWOUND,	/* npeer->tx_queue: sent, nacked, goes again */
	P4E_OPS_WAIT_RESP,	/* npeer->tx_wait: accepted, ACK or REPLY due */
	P4E_OPS_DRAINING,	/* no list: over, the transport still holds
				 * our memory (xmit_refs) */
	P4E_OPS_MAX
};

/* What happens to an initiator operation: the inputs of p4e_op_step(). */
enum p4e_op_event {
	P4E_OPE_POST,		/* posted, its sequence number taken */
	P4E_OPE_XMIT_OK,	/* the transport took it (P4T_DONE) */
	P4E_OPE_XMIT_QUEUED,	/* took it, our memory until send_done */
	P4E_OPE_XMIT_EAGAIN,	/* not now: link full, responses deferred */
	P4E_OPE_XMIT_FAIL,	/* cannot be sent: fails UNDELIVERABLE */
	P4E_OPE_SEND_DONE,	/* the transport let go of one send */
	P4E_OPE_ACCEPTED,	/* a cumulative ack covers it */
	P4E_OPE_REWIND,		/* NACK or RESUME: to be sent again */
	P4E_OPE_RESPONSE,	/* its ACK or REPLY (what it says) */
	P4E_OPE_LINK_FAILED,	/* its link failed: fails UNDELIVERABLE */
	P4E_OPE_MAX
};

struct p4e_op {
	struct p4u_list link;		/* the list of its state */
	struct p4e_ni *ni;
	struct p4e_npeer *peer;
	enum p4e_op_state state;	/* p4e_op_step() only */
	uint8_t type;			/* enum p4w_type */
	uint8_t ack_req;
	uint8_t atomic_op;
	uint8_t atomic_type;
	uint8_t proto;
	uint8_t rflags;			/* P4W_RF_* of its requests */
	/* facts, not states: */
	bool copied;			/* payload (+ compare) in op->bounce */
	bool want_resp;			/* an ACK or REPLY will come */
	bool to_rdzv;			/* resend an eager put as rendezvous */
	bool copy_unsent;		/* a copy the transport queued: its
					 * SEND waits until it is written */
	bool completed;			/* SEND went or a copy is due it:
					 * counted in ni->held */
	bool md_done;			/* its last event went: no longer in
					 * md->pending (p4e_op_md_done) */
	uint16_t xmit_refs;		/* sends the transport holds our
					 * memory for (P4T_QUEUED) */
	uint32_t seq;
	uint32_t pt_index;
	uint32_t target;		/* as the caller named it */
	struct p4e_md *md;
	uint64_t local_offset;
	uint64_t length;
	struct p4e_md *get_md;
	uint64_t get_local_offset;
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t hdr_data;
	void *user_ptr;
	uint64_t user_flags;
	struct p4t_mem *mem;		/* rendezvous source / push sink */
	struct p4t_iface *mem_iface;	/* mem's transport */
	struct p4w_cookie cookie;
	/* copied payload (+ compare): op->small, or a block of ni->copies
	 * sized to bounce_len (docs/design.md §4.1) */
	void *bounce;
	uint64_t bounce_len;
	unsigned xflags;		/* P4E_XFER_* */
	/* the caller's iovec when it gave one (p4e_xfer.iov), copied into
	 * iovbuf, else the region is md's at local_offset: see
	 * p4e_op_region() */
	uint32_t iovcnt;
	struct p4e_iovbuf *iovbuf;
	/* small copies live here: no block to take and give back */
	alignas(16) uint8_t small[P4E_OP_SMALL];
};

/* The local buffer of an operation as (start, iovcnt, offset). */
static inline void p4e_op_region(const struct p4e_op *op, void **start_p,
				 uint32_t *iovcnt_p, uint64_t *offset_p)
{
	if (op->iovcnt) {
		*start_p = (void *)op->iovbuf->iov;
		*iovcnt_p = op->iovcnt;
		*offset_p = 0;
	} else {
		*start_p = op->md->start;
		*iovcnt_p = op->md->iovcnt;
		*offset_p = op->local_offset;
	}
}

/*
 * The life of a target operation (p4e_tgt_op.c, docs/design.md §4.2): one
 * state at a time, changed only by p4e_tgt_step().
 */
enum p4e_tgt_state {
	P4E_TGTS_FREE,		/* in the pool, or being filled */
	P4E_TGTS_MATCHED,	/* accepted, entry reserved, nothing moving */
	P4E_TGTS_PULLING,	/* a rendezvous put's data comes (p4t_pull) */
	P4E_TGTS_PUSHING,	/* a get's reply data goes (p4t_push) */
	P4E_TGTS_MAX
};

/* What happens to a target operation: the inputs of p4e_tgt_step(). */
enum p4e_tgt_event {
	P4E_TGTE_MATCH,		/* filled, accepted, its entry reserved */
	P4E_TGTE_PULL,		/* a pull goes to the transport (p4t_pull) */
	P4E_TGTE_PUSH,		/* a push goes to the transport (p4t_push) */
	P4E_TGTE_DONE,		/* nothing (more) to move: ends with fail */
	P4E_TGTE_RMA_DONE,	/* the pull or push ended (fail) */
	P4E_TGTE_MAX
};

/* Target-side work that outlives one message (pulls, pushes). */
struct p4e_tgt_op {
	enum p4e_tgt_state state;	/* p4e_tgt_step() only */
	struct p4e_ni *ni;
	struct p4e_npeer *peer;
	struct p4e_me *me;
	struct p4e_uh *uh;		/* delivering an unexpected header */
	struct p4e_uh *filling_uh;	/* whose data this pull brings in */
	uint8_t type;
	uint8_t ack_req;
	uint8_t list;
	uint8_t event_type;
	uint8_t atomic_op, atomic_type;
	uint8_t ev_flags;		/* P4E_EVENT_F_* */
	uint32_t pt_index;
	uint32_t initiator;
	uint32_t uid;
	uint64_t op_id;
	uint64_t match_bits;
	uint64_t rlength;
	uint64_t mlength;
	uint64_t offset;
	uint64_t remote_offset;
	uint64_t hdr_data;
	void *start;			/* event start */
};

/*
 * One transport of an NI (p4t.h, several per NI): the network one always,
 * the host-local one (shm) when it opened; a peer's link is on one of
 * them (np->xp), the local one asked first (p4e_npeer_connect).
 */
enum { P4E_XP_NET, P4E_XP_LOCAL, P4E_XP_MAX };

struct p4e_xport {
	struct p4e_ni *ni;		/* upcalls come with this as ctx */
	struct p4t_iface *iface;	/* NULL: not open */
	struct p4t_iface_attr attr;
	uint64_t eager_size;		/* its peers' puts: larger ones rendezvous */
	uint64_t copy_size;		/* its peers' puts: copied up to this */
};

/* The transports of ni that are open, net first. */
#define p4e_ni_foreach_xp(ni, xp)					\
	for ((xp) = (ni)->xp; (xp) < (ni)->xp + P4E_XP_MAX; (xp)++)	\
		if ((xp)->iface)

struct p4e_ni {
	struct p4u_list dom_link;	/* dom->nis */
	struct p4e_dom *dom;
	struct p4e_worker *worker;
	struct p4u_list worker_link;	/* worker->nis */
	struct p4u_list trig_due;	/* dom->lock: triggered ops to run */
	void (*trig_dropped)(void *ctx, void *user_ptr, uint64_t user_flags);
	void *trig_dropped_ctx;
	bool in_progress;		/* sends now are P4T_SEND_BATCH */
	unsigned options;
	struct p4e_ni_limits limits;
	int64_t sr[P4E_SR_LAST];
	uint32_t uid;
	uint64_t eager_size;		/* the least of the transports' */
	uint64_t copy_size;		/* the most of the transports' */
	uint64_t copy_mem_max;		/* attr copy_mem_max (ni->copies) */
	uint64_t ack_delay_ns;
	bool (*id_filter)(void *ctx, uint64_t filter, uint32_t peer);
	void *id_filter_ctx;
	struct p4e_xport xp[P4E_XP_MAX];
	bool closing;
	struct p4e_pt *pts;		/* [limits.max_pt_index + 1] */
	struct p4u_pool mds;		/* struct p4e_md */
	struct p4u_pool mes;		/* struct p4e_me */
	struct p4u_pool ops;		/* struct p4e_op */
	struct p4u_pool tops;		/* struct p4e_tgt_op */
	struct p4u_pool uhs;		/* struct p4e_uh */
	struct p4e_copies copies;	/* payload copies */
	struct p4u_pool iovbufs;	/* struct p4e_iovbuf */
	uint32_t held;			/* ops alive after their SEND */
	uint32_t ops_credit;		/* of max_ops, those not max_held */
	unsigned warned;		/* P4E_WARN_*: logged once already */
	struct p4e_npeer **npeers;	/* by peer id */
	uint32_t npeers_cap;
	uint32_t *map;			/* logical: rank -> peer id */
	uint32_t map_len;
	struct p4u_list flush;		/* peers with queued sends */
	struct p4u_list ack_pending;	/* peers owed acknowledgements */
	struct p4u_timer ack_timer;	/* the earliest one held back */
	struct p4u_list deferring;	/* peers with deferred messages */
	uint32_t entries;		/* MEs in use (limit max_entries) */
	uint32_t fc_blocked;		/* peers held by FC_RESEND */
};

/* ---- cross-file helpers ------------------------------------------------ */

/* p4e_dom.c: the address of peer id, NULL if none (no lock needed) */
struct p4e_peer_addr *p4e_dom_peer(struct p4e_dom *dom, uint32_t id);
/* The domain's own worker, created at the first call. */
int p4e_dom_worker_get(struct p4e_dom *dom, struct p4e_worker **worker_p);

/* p4e_worker.c */
int p4e_worker_attach(struct p4e_worker *w, struct p4e_ni *ni);
void p4e_worker_detach(struct p4e_worker *w, struct p4e_ni *ni);
/* Whether the calling context may touch w's NIs now. */
bool p4e_worker_held(const struct p4e_worker *w);
/* Progress reads the clock every this many calls, and after a sleep
 * (p4e_worker.c: a read costs about 30 ns). */
#define P4E_CLOCK_EVERY	8
/* The clock for deadlines of the engine, as progress last read it
 * (p4e_worker.c): behind by at most a few progress calls. */
uint64_t p4e_worker_now(struct p4e_worker *w);
/* Debug builds: abort unless the NI's worker lock is held. */
#define P4E_NI_ASSERT(ni)						\
	do {								\
		if (ni)							\
			p4e_worker_assert_held((ni)->worker);		\
	} while (0)

/* p4e_ni.c */
struct p4e_npeer *p4e_npeer_get(struct p4e_ni *ni, uint32_t peer_id);
int p4e_npeer_connect(struct p4e_npeer *np);
/* Write what every transport of ni holds back (P4T_SEND_BATCH). */
void p4e_ni_flush(struct p4e_ni *ni);
/* Name of the initiator as events report it (rank on a logical NI). */
uint32_t p4e_ni_event_id(struct p4e_ni *ni, uint32_t peer_id);
/* Peer id of a target named by the caller (rank on a logical NI). */
int p4e_ni_target_peer(struct p4e_ni *ni, uint32_t target, uint32_t *peer_p);
struct p4e_pt *p4e_pt_get(struct p4e_ni *ni, uint32_t index);
/* p4e_pt.c: unlink and free everything of an allocated PT (NI destroy). */
void p4e_pt_teardown(struct p4e_ni *ni, struct p4e_pt *pt);

/* p4e_eq.c: deliver ev to eq if present; counts nothing. */
void p4e_event_deliver(struct p4e_eq *eq, const struct p4e_event *ev);
size_t p4e_eq_space(struct p4e_eq *eq);

/* p4e_iov.c: regions are (start, iovcnt) with iovcnt 0 = contiguous. */
void p4e_region_copy_in(void *start, uint32_t iovcnt, uint64_t offset,
			const void *src, uint64_t len);
void p4e_region_copy_out(const void *start, uint32_t iovcnt, uint64_t offset,
			 void *dst, uint64_t len);
/* Describe [offset, offset + len) as an iovec; returns the count, 0 if it
 * does not fit in max. */
size_t p4e_region_iov(void *start, uint32_t iovcnt, uint64_t offset,
		      uint64_t len, struct iovec *iov, size_t max);
/* Address of byte offset (NULL past the end). */
void *p4e_region_addr(void *start, uint32_t iovcnt, uint64_t offset);
uint64_t p4e_iov_total(const struct iovec *iov, size_t iovcnt);

/* p4e_me.c */
void p4e_me_emit(struct p4e_me *me, struct p4e_event *ev);
void p4e_me_use_done(struct p4e_me *me);
/* After a use of mlength (of rlength): advance a managed offset, unlink a
 * use-once or full entry. */
void p4e_me_used(struct p4e_me *me, uint64_t mlength, uint64_t rlength);	/* pending--, deferred events */
void p4e_me_auto_unlink(struct p4e_me *me);	/* off the list, event later */
void p4e_uh_free(struct p4e_ni *ni, struct p4e_uh *uh);
/* An ACK's list field for an entry, P4E_RESP_NO_ACK (p4e.h) included. */
#define P4E_RESP_LIST(me)						\
	((uint8_t)((me)->list |						\
		   ((me)->options & P4E_ME_ACK_DISABLE ? P4E_RESP_NO_ACK : 0)))
/* The overflow event an unexpected header makes (p4e_me.c). */
void p4e_uh_event_fill(struct p4e_ni *ni, const struct p4e_uh *uh,
		       struct p4e_event *ev);
/* An entry's match_id as the peer id messages carry (logical NIs). */
int p4e_me_match_peer(struct p4e_ni *ni, uint32_t match_id, uint32_t *peer_p);
bool p4e_me_perm_ok(struct p4e_ni *ni, struct p4e_me *me, uint8_t type,
		    uint32_t uid, uint8_t *fail_p);
/* The offset and length an operation gets in me (rule 4). */
void p4e_me_place(struct p4e_me *me, uint64_t remote_offset,
		  uint64_t rlength, bool unexpected, uint64_t *offset_p,
		  uint64_t *mlength_p);
/* Returns 0, -FI_EAGAIN (refused, nothing changed) or P4E_UH_WAITING:
 * the header's data is still arriving, me holds it and gets it then. */
#define P4E_UH_WAITING	1
int p4e_uh_deliver_into(struct p4e_ni *ni, struct p4e_uh *uh,
			struct p4e_me *me, void *user_ptr,
			uint64_t user_flags, bool claimed);
/* The pull that fills uh's overflow space ended (fail: its status). */
void p4e_uh_filled(struct p4e_ni *ni, struct p4e_uh *uh, uint8_t fail);

/* p4e_me.c: triggered appends (the ME exists, unlinked, until it fires) */
int p4e_me_trig_create(struct p4e_ni *ni, uint32_t pt_index,
		       const struct p4e_me_desc *desc, enum p4e_list list,
		       void *user_ptr, uint64_t user_flags, uint64_t *me_p);
int p4e_me_trig_link(struct p4e_ni *ni, uint64_t me);
void p4e_me_trig_cancel(struct p4e_ni *ni, uint64_t me);

/* p4e_copy.c: max_count bounds each class's table, max_bytes them all */
int p4e_copies_init(struct p4e_copies *c, size_t max_len, uint64_t max_bytes,
		    uint32_t max_count);
void p4e_copies_fini(struct p4e_copies *c);
/* A block of at least len (1 .. max_len) bytes; NULL past the budget. */
void *p4e_copy_alloc(struct p4e_copies *c, size_t len);
/* Give back a block taken for len bytes. */
void p4e_copy_free(struct p4e_copies *c, void *buf, size_t len);

/* Give back op's copy, if it has one in a block. */
static inline void p4e_op_copy_drop(struct p4e_op *op)
{
	if (op->bounce && op->bounce != (void *)op->small)
		p4e_copy_free(&op->ni->copies, op->bounce, op->bounce_len);
	op->bounce = NULL;
}

/* Warnings an NI logs once (ni->warned). */
#define P4E_WARN_HELD		0x1	/* max_held or copy_mem_max reached */
#define P4E_WARN_UH		0x2	/* unexpected-header budget spent */
#define P4E_WARN_HELD_BY_PEER	0x4	/* a peer's header budget held us */

/* p4e_ini.c */
/* Validate xfer for a type without side effects. */
int p4e_ini_check(struct p4e_ni *ni, uint8_t type, const struct p4e_xfer *xfer);
/* Initiate (the body of p4e_put & co.). */
int p4e_ini_post(struct p4e_ni *ni, uint8_t type, const struct p4e_xfer *xfer);
int p4e_ini_response(struct p4e_ni *ni, struct p4e_npeer *np,
		     const struct p4w_hdr *hdr, const void *msg);
/* Complete everything of np with P4E_NI_UNDELIVERABLE (link failed). */
void p4e_ini_fail_peer(struct p4e_npeer *np, uint8_t fail);
/* Acceptance reached op (cumulative ack). */
void p4e_ini_accepted(struct p4e_op *op);
/*
 * The one transition function of an initiator operation: ev happened to
 * op (resp: what a P4E_OPE_RESPONSE said, else NULL). Moves it between
 * its peer's lists, delivers the SEND, ACK and REPLY events due and frees
 * it when it is over. An event its state does not expect is a bug:
 * logged, asserted in debug builds, refused (-FI_EINVAL, nothing
 * changed). Wire input is checked before it gets here.
 */
int p4e_op_step(struct p4e_op *op, enum p4e_op_event ev,
		const struct p4w_resp *resp);
const char *p4e_op_state_name(enum p4e_op_state state);
const char *p4e_op_event_name(enum p4e_op_event ev);
/* (Re)send queued ops of np while the transport takes them. */
int p4e_ini_flush(struct p4e_npeer *np);
void p4e_ini_send_done(struct p4e_ni *ni, struct p4e_op *op, int status);
void p4e_ini_rma_done(struct p4e_ni *ni, void *ctx, int status);

/* p4e_tgt.c, p4e_tgt_op.c */
/* Does a request of this type wait for a REPLY (with data or failure)? */
static inline bool p4e_wants_reply(uint8_t type)
{
	return type == P4W_GET || type == P4W_FETCH || type == P4W_SWAP;
}
int p4e_tgt_request(struct p4e_ni *ni, struct p4e_npeer *np,
		    const struct p4w_hdr *hdr, const void *msg);
void p4e_tgt_rma_done(struct p4e_ni *ni, struct p4e_tgt_op *top, int status);
/* Send an ACK / REPLY header (+ data) to np. */
int p4e_tgt_respond(struct p4e_ni *ni, struct p4e_npeer *np, uint8_t type,
		    const struct p4w_resp *resp, const struct iovec *iov,
		    size_t iovcnt);
int p4e_tgt_respond_ctx(struct p4e_ni *ni, struct p4e_npeer *np, uint8_t type,
			const struct p4w_resp *resp, const struct iovec *iov,
			size_t iovcnt, void *op_ctx);
/* Pull a rendezvous' data into top's entry (top filled, entry reserved). */
int p4e_tgt_start_pull(struct p4e_ni *ni, struct p4e_tgt_op *top,
		       const struct p4w_cookie *src);
/*
 * The one transition function of a target operation: ev happened to top
 * (fail: the P4E_NI_* outcome of P4E_TGTE_DONE and _RMA_DONE). Sends the
 * ACK or REPLY due, delivers the entry's event and frees top when it is
 * over. An event its state does not expect is a bug: logged, asserted in
 * debug builds, refused (-FI_EINVAL, nothing changed).
 */
int p4e_tgt_step(struct p4e_tgt_op *top, enum p4e_tgt_event ev, uint8_t fail);
const char *p4e_tgt_state_name(enum p4e_tgt_state state);
/* The entry's event of top's operation, ending with fail (P4E_NI_*). */
void p4e_tgt_event_fill(const struct p4e_tgt_op *top, struct p4e_event *ev,
			uint8_t fail);
void p4e_tgt_fail_peer(struct p4e_npeer *np);
/* An unexpected header is dropped unused: end its rendezvous. */
void p4e_tgt_uh_dropped(struct p4e_ni *ni, struct p4e_uh *uh);

/* p4e_fc.c */
/* The P4T_SEND_* flags of a message to np (docs/design.md §9). */
unsigned p4e_fc_send_flags(struct p4e_npeer *np, bool request, bool more);
void p4e_fc_accepted(struct p4e_npeer *np);	/* rx_expect++ , ack due */
void p4e_fc_tx_acked(struct p4e_npeer *np, uint32_t ack_seq);
void p4e_fc_nack(struct p4e_npeer *np, struct p4e_pt *pt);
void p4e_fc_nacked(struct p4e_npeer *np, uint32_t seq);
void p4e_fc_nack_rdzv(struct p4e_npeer *np);	/* resend as rendezvous */
void p4e_fc_nacked_rdzv(struct p4e_npeer *np, uint32_t seq);
void p4e_fc_resume_req(struct p4e_npeer *np, uint32_t seq);
void p4e_fc_progress(struct p4e_ni *ni);	/* resumes, SEQ_ACKs */
void p4e_fc_ack_all(struct p4e_ni *ni);		/* every SEQ_ACK held back */
void p4e_fc_ack_now(struct p4e_npeer *np);	/* P4W_F_ACK_NOW came */
/*
 * Send the ACK that ends a rendezvous (msg: a whole ACK, stamped): held
 * while other data still streams in from np (docs/design.md §7).
 */
int p4e_fc_send_ack(struct p4e_npeer *np, const void *msg, size_t len);
/* A pull from np started / ended: its acknowledgements wait meanwhile. */
void p4e_fc_pull_started(struct p4e_npeer *np);
void p4e_fc_pull_ended(struct p4e_npeer *np);
/* np's held acknowledgements leave now (before anything else to it). */
void p4e_fc_release(struct p4e_npeer *np);
void p4e_fc_drop_held(struct p4e_npeer *np);
/* The NI's acknowledgement deadline passed (its worker timer). */
void p4e_fc_ack_timer(struct p4u_timer *timer, uint64_t now_ns);
void p4e_fc_pt_freed(struct p4e_ni *ni, struct p4e_pt *pt);
void p4e_fc_uh_freed(struct p4e_ni *ni, struct p4e_pt *pt);
/* Fill hdr's ack fields for a message to np. */
void p4e_fc_stamp(struct p4e_npeer *np, struct p4w_hdr *hdr);
int p4e_fc_send_ctrl(struct p4e_npeer *np, uint8_t type, uint32_t seq);
/*
 * Send a response or control message (hdr already stamped). Never lost:
 * what the transport refuses is copied and sent, in order, from progress.
 */
int p4e_npeer_send_msg(struct p4e_npeer *np, const void *hdr, size_t hdr_len,
		       const struct iovec *iov, size_t iovcnt);
void p4e_npeer_flush_deferred(struct p4e_npeer *np);
void p4e_npeer_drop_deferred(struct p4e_npeer *np);
/* Leave the PT's held list (link failure, PT freed). */
void p4e_fc_unblock(struct p4e_npeer *np);

/* Swaps whose operand carries compare values or masks. */
static inline bool p4e_op_needs_compare(unsigned op)
{
	return (op >= P4E_CSWAP && op <= P4E_CSWAP_GT) || op == P4E_MSWAP;
}

/* Upcall op contexts carry a tag in the low bits of the pointer. */
#define P4E_CTX_OP	0x0
#define P4E_CTX_TOP	0x1
static inline void *p4e_ctx_make(void *obj, uintptr_t tag)
{
	return (void *)((uintptr_t)obj | tag);
}
static inline uintptr_t p4e_ctx_tag(void *ctx)
{
	return (uintptr_t)ctx & 0x7;
}
static inline void *p4e_ctx_obj(void *ctx)
{
	return (void *)((uintptr_t)ctx & ~(uintptr_t)0x7);
}

/*
 * Whether a message from source passes an entry's id filter (filtered:
 * the entry has one). The lists matched bits and match_id already; a
 * filtered entry is indexed as match_id ANY, so the filter is asked of
 * each candidate the index finds.
 */
static inline bool p4e_id_filter_ok(const struct p4e_ni *ni, bool filtered,
				    uint64_t filter, uint32_t source)
{
	return !filtered || ni->id_filter(ni->id_filter_ctx, filter, source);
}

#endif /* P4E_PRIV_H */
