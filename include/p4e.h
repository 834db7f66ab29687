/*
 * p4e.h - the Portals 4 engine: its whole interface to the layers above.
 *
 * The engine implements Portals 4 semantics (docs/design.md §3-§7) on top
 * of a transport (p4t.h). It knows nothing of libfabric objects: the
 * provider (prov/portals/src) and the native Portals API (native/) sit on
 * top and translate.
 *
 * Scopes: a domain (struct p4e_dom) owns what libfabric makes domain-wide:
 * counting events (CTs) with their triggered operations, and the peer
 * table (addresses <-> peer ids, so an AV can cache ids for every endpoint
 * of a domain). Each NI (one per libfabric endpoint) owns a portal table,
 * MEs/LEs, MDs, its transport instance and per-peer protocol state. A
 * worker (struct p4e_worker) owns the progress of the NIs attached to it.
 *
 * Threads (docs/design.md §8): every call on an NI and its objects (PTs,
 * MDs, MEs, data movement, triggered operations posted on it) is made
 * under the lock of the NI's worker (p4e_worker_lock), which debug
 * builds assert; event sinks run under it and must not call back into
 * the engine except where marked "safe from a sink". Domain calls (CTs,
 * peers, triggered counter operations) take the domain's own lock inside
 * and may be made from any thread; CT notify callbacks run under that
 * lock and must not call into the engine.
 *
 * Handles (MDs, MEs, CTs, unexpected headers) are 64-bit index|generation
 * values; a stale handle is refused with -FI_EINVAL, never dereferenced.
 * Every function returns 0 or -FI_E*; outputs are written only on success.
 * Extensions beyond Portals 4 are marked [ext].
 */
#ifndef P4E_H
#define P4E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fi_errno.h>

#include "p4t.h"

struct p4e_dom;
struct p4e_ni;
struct p4e_worker;

#define P4E_HANDLE_NONE		0ULL	/* no MD / ME / CT */
#define P4E_ID_ANY		UINT32_MAX	/* any initiator (match_id) */
#define P4E_PT_ANY		UINT32_MAX
#define P4E_UID_ANY		UINT32_MAX
#define P4E_SIZE_MAX		UINT64_MAX

/* ---- events ----------------------------------------------------------- */

enum p4e_event_kind {
	P4E_EVENT_GET,
	P4E_EVENT_GET_OVERFLOW,
	P4E_EVENT_PUT,
	P4E_EVENT_PUT_OVERFLOW,
	P4E_EVENT_ATOMIC,
	P4E_EVENT_ATOMIC_OVERFLOW,
	P4E_EVENT_FETCH_ATOMIC,
	P4E_EVENT_FETCH_ATOMIC_OVERFLOW,
	P4E_EVENT_REPLY,
	P4E_EVENT_SEND,
	P4E_EVENT_ACK,
	P4E_EVENT_PT_DISABLED,
	P4E_EVENT_LINK,
	P4E_EVENT_AUTO_UNLINK,
	P4E_EVENT_AUTO_FREE,
	P4E_EVENT_SEARCH,
	P4E_EVENT_KIND_MAX,
};

enum p4e_ni_fail {
	P4E_NI_OK,
	P4E_NI_UNDELIVERABLE,	/* the peer is gone or unreachable */
	P4E_NI_DROPPED,
	P4E_NI_PT_DISABLED,
	P4E_NI_PERM_VIOLATION,
	P4E_NI_OP_VIOLATION,
	P4E_NI_NO_MATCH,
	P4E_NI_SEGV,
	P4E_NI_CANCELED,	/* [ext] unlinked by p4e_me_unlink with
				 * P4E_UNLINK_CANCEL while waiting */
	P4E_NI_CONN_REFUSED,	/* [ext] undeliverable: the connection to
				 * the peer was refused (nothing listens, a
				 * wrong auth_key); nothing was delivered */
	P4E_NI_FAIL_MAX,
};

/* Did the message never get to the target (a SEND reports it)? */
static inline bool p4e_fail_undelivered(uint8_t fail)
{
	return fail == P4E_NI_UNDELIVERABLE || fail == P4E_NI_CONN_REFUSED;
}

enum p4e_list {
	P4E_PRIORITY_LIST,
	P4E_OVERFLOW_LIST,
};

struct p4e_event {
	uint8_t type;		/* enum p4e_event_kind */
	uint8_t ni_fail_type;	/* enum p4e_ni_fail */
	uint8_t list;		/* enum p4e_list of the matching entry */
	uint8_t atomic_op;
	uint8_t atomic_type;
	uint8_t flags;		/* [ext] P4E_EVENT_F_* */
	uint32_t pt_index;
	uint32_t initiator;	/* peer id, or rank on a logical NI */
	uint32_t uid;
	void *start;		/* where the data is (see the Portals spec) */
	void *user_ptr;
	uint64_t user_flags;	/* [ext] passed through from the op / entry */
	uint64_t hdr_data;
	uint64_t match_bits;
	uint64_t rlength;
	uint64_t mlength;
	uint64_t remote_offset;
	uint64_t uh_handle;	/* [ext] SEARCH with P4E_SEARCH_CLAIM */
};

/* event.flags: the initiator sent hdr_data (libfabric FI_REMOTE_CQ_DATA) */
#define P4E_EVENT_F_HDR_DATA	0x01

/*
 * An event sink: what Portals calls an event queue. The engine calls
 * ops->deliver() for every full event; ops->space() tells how many more
 * events fit (SIZE_MAX if unbounded), so a PT with P4E_PT_FLOWCTRL can
 * refuse work it could not report. Embed struct p4e_eq in your object.
 */
struct p4e_eq;
struct p4e_eq_ops {
	void (*deliver)(struct p4e_eq *eq, const struct p4e_event *ev);
	size_t (*space)(struct p4e_eq *eq);
};
struct p4e_eq {
	const struct p4e_eq_ops *ops;
};

/* A ring-buffer event queue with Portals' PTL_EQ_DROPPED semantics. */
int p4e_eq_ring_create(size_t size, struct p4e_eq **eq_p);
void p4e_eq_ring_destroy(struct p4e_eq *eq);
/* 0 and *ev; P4E_EQ_DROPPED and *ev (events were lost before it);
 * -FI_EAGAIN when empty. */
#define P4E_EQ_DROPPED 1
int p4e_eq_ring_get(struct p4e_eq *eq, struct p4e_event *ev);

/* ---- worker ---------------------------------------------------------- */

/*
 * A worker owns progress (docs/design.md §8): a lock, the NIs attached to
 * it, one wait fd, the timer queue their transports and flow control arm
 * deadlines on, and optionally a thread that progresses it.
 */
struct p4e_worker_attr {
	/* a mutex guards it: any thread may lock it. Off: the caller
	 * guarantees one thread at a time (locking is only bookkeeping). */
	bool locked;
	/* a progress thread (implies locked) that sleeps on the wait fd and
	 * progresses whenever it turns readable or a deadline is due */
	bool thread;
	const char *name;	/* the thread's name (15 chars), or NULL */
};

int p4e_worker_create(const struct p4e_worker_attr *attr,
		      struct p4e_worker **worker_p);
/* Stops and joins the thread; -FI_EBUSY while NIs are attached. */
int p4e_worker_destroy(struct p4e_worker *worker);
void p4e_worker_lock(struct p4e_worker *worker);
void p4e_worker_unlock(struct p4e_worker *worker);
/* Debug builds: abort unless the calling thread holds it (locked) or
 * somebody does (not locked). */
void p4e_worker_assert_held(const struct p4e_worker *worker);
/*
 * Lock held: run the deadlines that are due (the clock is read every 8th
 * call, and on the first call after p4e_worker_prepare_sleep: a deadline
 * is seen at most 8 calls late), progress every NI (the
 * transport, sends waiting for room, flow control, acknowledgements) and
 * run the triggered operations that became due for them. Returns the
 * work done (>= 0).
 */
int p4e_worker_progress(struct p4e_worker *worker, int budget);
/*
 * Lock held: run (only) the triggered operations that became due on the
 * worker's NIs, e.g. right after a CT update made outside progress
 * (PtlCTInc). Returns how many ran.
 */
int p4e_worker_run_triggered(struct p4e_worker *worker);
/*
 * An fd that turns readable when progress has work: data on a transport,
 * a deadline due (once p4e_worker_prepare_sleep armed it), a kick. Lock
 * held: before sleeping on it, call p4e_worker_prepare_sleep (it sends
 * the acknowledgements held back and arms the deadline timer).
 */
int p4e_worker_wait_fd(struct p4e_worker *worker);
void p4e_worker_prepare_sleep(struct p4e_worker *worker);
/* Any thread, no lock: make the wait fd readable (wake sleepers). */
void p4e_worker_kick(struct p4e_worker *worker);

/* ---- domain ---------------------------------------------------------- */

struct p4e_dom_attr {
	uint32_t max_cts;
	uint32_t max_triggered_ops;
	uint32_t max_peers;
	/* the domain lock is a mutex (several workers may use the domain
	 * at once); off: one thread at a time */
	bool locked;
	/* NIs created without a worker share the domain's own, made with
	 * this at the first such NI */
	struct p4e_worker_attr worker;
};

int p4e_dom_create(const struct p4e_dom_attr *attr, struct p4e_dom **dom_p);
/* -FI_EBUSY while NIs are open. */
int p4e_dom_destroy(struct p4e_dom *dom);
/*
 * The domain's own worker (NULL until an NI without a worker of its own
 * was created), and progress of it, taking and releasing its lock.
 */
struct p4e_worker *p4e_dom_worker(struct p4e_dom *dom);
int p4e_dom_progress(struct p4e_dom *dom, int budget);

/* ---- counting events and triggered operations -------------------------- */

struct p4e_ct_event {
	uint64_t success;
	uint64_t failure;
};

int p4e_ct_alloc(struct p4e_dom *dom, uint64_t *ct_p);
int p4e_ct_free(struct p4e_dom *dom, uint64_t ct);
int p4e_ct_get(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event *ev);
/* Set / increment; collects the triggered operations that became due. */
int p4e_ct_set(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event ev);
int p4e_ct_inc(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event inc);
/* [ext] Set the success (failure: the failure) value alone, keeping the
 * other, in one step (libfabric fi_cntr_set / fi_cntr_seterr). */
int p4e_ct_set_one(struct p4e_dom *dom, uint64_t ct, uint64_t value,
		   bool failure);
/* Discard the CT's pending triggered operations (see p4e_trig_cancel). */
int p4e_ct_cancel_triggered(struct p4e_dom *dom, uint64_t ct);
/*
 * [ext] Called after every change of the CT's value, with the new value,
 * under the domain's lock (it must not call into the engine), e.g. to
 * wake a libfabric counter's waiters.
 */
typedef void (*p4e_ct_notify_func_t)(void *ctx, uint64_t ct,
				     const struct p4e_ct_event *val);
int p4e_ct_set_notify(struct p4e_dom *dom, uint64_t ct,
		      p4e_ct_notify_func_t fn, void *ctx);

/* ---- network interface ------------------------------------------------ */

#define P4E_NI_MATCHING		0x1
#define P4E_NI_NO_MATCHING	0x2
#define P4E_NI_LOGICAL		0x4
#define P4E_NI_PHYSICAL		0x8

struct p4e_ni_limits {
	uint32_t max_entries;
	uint32_t max_unexpected_headers;
	uint32_t max_mds;
	uint32_t max_cts;		/* of the domain */
	uint32_t max_eqs;
	uint32_t max_pt_index;
	uint32_t max_iovecs;
	uint32_t max_list_size;
	uint32_t max_triggered_ops;	/* of the domain */
	uint64_t max_msg_size;
	uint64_t max_atomic_size;
	uint64_t max_fetch_atomic_size;
	uint64_t max_waw_ordered_size;
	uint64_t max_war_ordered_size;
	uint64_t max_volatile_size;
	uint32_t features;
	uint32_t max_ops;		/* [ext] outstanding initiator ops */
	/*
	 * [ext] Of max_ops, how many may live on after their SEND event
	 * (copied payloads the target has not taken yet: accepted, or
	 * pulled after a resend as rendezvous, docs/design.md §7.2). A
	 * copy past it, or past copy_mem_max, is not made: the operation
	 * holds the caller's buffer instead (SEND at acceptance), and one
	 * that must be copied (a VOLATILE MD, compare values) gets
	 * -FI_EAGAIN. Default (0): max_ops.
	 */
	uint32_t max_held;
};

enum p4e_sr_index {
	P4E_SR_DROP_COUNT,
	P4E_SR_PERMISSION_VIOLATIONS,
	P4E_SR_OPERATION_VIOLATIONS,
	P4E_SR_MALFORMED,		/* [ext] messages rejected as malformed */
	P4E_SR_FLOWCTRL,		/* [ext] flow-control episodes */
	P4E_SR_FC_AS_RDZV,		/* [ext] eager puts sent back to come
					 * again as rendezvous (target) */
	P4E_SR_RESENT_AS_RDZV,		/* [ext] ours resent so (initiator) */
	P4E_SR_UH_FULL,			/* [ext] requests held for want of an
					 * unexpected header (target) */
	P4E_SR_COPY_REFUSED,		/* [ext] copies not made: max_held or
					 * copy_mem_max reached (initiator) */
	P4E_SR_LINKS_LOCAL,		/* [ext] links to peers made over the
					 * host-local transport (shm) */
	P4E_SR_LINKS_NET,		/* [ext] links over the network one */
	P4E_SR_LAST,
};

struct p4e_ni_attr {
	unsigned options;		/* P4E_NI_* */
	struct p4e_ni_limits desired;	/* 0 fields take defaults */
	const struct p4t_ops *transport;
	/*
	 * [ext] The host-local transport (p4t_shm_ops), opened beside
	 * transport on its address and asked first for each peer (p4t.h:
	 * several transports per NI); NULL: none. When it cannot open, the
	 * NI goes on without it (logged).
	 */
	const struct p4t_ops *local_transport;
	const void *addr;		/* where to listen */
	size_t addrlen;
	uint16_t port_low, port_high;
	uint32_t uid;			/* carried to targets */
	uint64_t auth_key;
	size_t eager_size;		/* larger puts use rendezvous */
	/*
	 * [ext] Puts and atomics up to this many bytes are copied at post
	 * (their SEND event comes when they are handed to the transport)
	 * into a block sized to the payload; larger ones hold the caller's
	 * buffer until the target accepts them. A VOLATILE MD's payloads
	 * up to max_volatile_size are copied too. 0: 1024.
	 */
	size_t copy_size;
	/*
	 * [ext] eager_size and copy_size for peers on the host-local
	 * transport (0: as for the network one). Through shared memory a
	 * copy in cache costs less than the rendezvous's pull (design.md
	 * §10.4), so it may send larger messages eagerly.
	 */
	size_t local_eager_size;
	size_t local_copy_size;
	/*
	 * [ext] Bytes all copies kept by the NI may take (payloads of
	 * copied operations, a fetch's old values at the target); past
	 * it copies are refused as past limits.max_held. 0: 256 MiB.
	 */
	size_t copy_mem_max;
	size_t rma_chunk;
	/*
	 * [ext] Rendezvous puts up to this size send their data unasked
	 * behind the header where the transport can (p4t_send_offer): a
	 * matched one is then placed without the pull's round trip, an
	 * unexpected one costs the bytes dropped. 0: the transport's
	 * default; no_offers: never.
	 */
	size_t rma_offer;
	bool no_offers;
	/* the worker that progresses the NI; NULL: the domain's own */
	struct p4e_worker *worker;
	/*
	 * [ext] Called, under the worker, for each triggered operation of
	 * the NI discarded without running (CT freed, p4e_trig_cancel,
	 * p4e_ct_cancel_triggered) with the user_ptr and user_flags it was
	 * posted with. Not called at NI destroy. NULL: not told.
	 */
	void (*trig_dropped)(void *ctx, void *user_ptr, uint64_t user_flags);
	void *trig_dropped_ctx;
	uint64_t peer_timeout_ms;
	/* [ext] how long a refused connect is retried (0: peer_timeout_ms) */
	uint64_t connect_retry_ms;
	/*
	 * [ext] How long a target may keep acceptance to itself hoping to
	 * piggyback it on a message going back, for requests whose initiator
	 * does not wait for it (copied payloads: acceptance only frees the
	 * initiator's copy). Requests it waits for (P4W_F_ACK_NOW), every
	 * 16th request and p4e_worker_prepare_sleep() are acknowledged at
	 * the end of the progress call; the others at the latest when this
	 * delay (a worker timer) expires. 0: everything is at once.
	 */
	uint64_t ack_delay_ns;
	/*
	 * [ext] Decides the entries appended with id_filtered (struct
	 * p4e_me_desc): true when a message from initiator peer matches the
	 * entry's id_filter. Called while matching, under the caller's
	 * serialisation; it must not call into the engine except
	 * p4e_peer_addr. NULL: such entries are refused.
	 */
	bool (*id_filter)(void *ctx, uint64_t filter, uint32_t peer);
	void *id_filter_ctx;
};

int p4e_ni_create(struct p4e_dom *dom, const struct p4e_ni_attr *attr,
		  struct p4e_ni **ni_p);
/* Fails pending operations, unlinks everything; -FI_EBUSY never. */
int p4e_ni_destroy(struct p4e_ni *ni);
void p4e_ni_limits_get(struct p4e_ni *ni, struct p4e_ni_limits *limits);
int p4e_ni_status(struct p4e_ni *ni, enum p4e_sr_index index, int64_t *val);
int p4e_ni_getname(struct p4e_ni *ni, void *addr, size_t *addrlen);
/*
 * [ext] Is anything still owed to peers: a request not yet accepted by its
 * target (queued, held by flow control, sent and unacknowledged), a
 * response or acknowledgement not sent, or bytes the transport has not
 * delivered (p4t_owes)? An endpoint closing progresses until this is false
 * or its linger time is over (docs/design.md §7.6). Worker lock held.
 */
bool p4e_ni_owes(struct p4e_ni *ni);
/* Progress this NI alone (p4e_worker_progress does every NI of a worker). */
int p4e_ni_progress(struct p4e_ni *ni, int budget);
/* The network transport's fd (part of the worker's wait fd), or -1. */
int p4e_ni_wait_fd(struct p4e_ni *ni);
/* The worker the NI belongs to. */
struct p4e_worker *p4e_ni_worker(struct p4e_ni *ni);
/* [ext] Does the NI hold acknowledgements back now (ack_delay_ns)? */
bool p4e_ni_ack_held(struct p4e_ni *ni);

/*
 * Peers. A peer id names a remote NI by its transport address, domain-wide
 * (every NI of the domain uses the same id for the same address).
 */
int p4e_peer_lookup(struct p4e_dom *dom, const void *addr, size_t addrlen,
		    uint32_t *peer_p);
int p4e_peer_addr(struct p4e_dom *dom, uint32_t peer, void *addr,
		  size_t *addrlen);

/* Logical NIs: rank i is peer ids[i]. Physical NIs address peer ids. */
int p4e_ni_set_map(struct p4e_ni *ni, const uint32_t *peer_ids, size_t count);
int p4e_ni_get_map(struct p4e_ni *ni, uint32_t *peer_ids, size_t count,
		   size_t *count_p);

/* ---- portal table ---------------------------------------------------- */

#define P4E_PT_ONLY_USE_ONCE	0x01
#define P4E_PT_FLOWCTRL		0x02
#define P4E_PT_ONLY_TRUNCATE	0x04
#define P4E_PT_ALLOC_DISABLED	0x08
#define P4E_PT_MATCH_UNORDERED	0x10
/*
 * [ext] Flow control that loses nothing: instead of disabling the PT and
 * failing the initiator's operation, exhaustion nacks the message and
 * holds back that initiator alone; when resources are back (an overflow
 * entry appended, an unexpected header consumed) the initiator resends
 * from that message, in order. Other initiators are not stalled.
 */
#define P4E_PT_FC_RESEND	0x20
/*
 * [ext] A message that matches no entry is dropped (P4E_NI_DROPPED to the
 * initiator) even with P4E_PT_FC_RESEND: on a PT whose entries are all
 * persistent (libfabric's RMA windows) no match is an addressing error,
 * not exhaustion, and resending would never succeed.
 */
#define P4E_PT_NO_MATCH_DROP	0x40

int p4e_pt_alloc(struct p4e_ni *ni, unsigned options, struct p4e_eq *eq,
		 uint32_t req_index, uint32_t *index_p);
int p4e_pt_free(struct p4e_ni *ni, uint32_t index);
int p4e_pt_disable(struct p4e_ni *ni, uint32_t index);
int p4e_pt_enable(struct p4e_ni *ni, uint32_t index);

/* ---- memory descriptors ---------------------------------------------- */

#define P4E_MD_EVENT_SUCCESS_DISABLE	0x001
#define P4E_MD_EVENT_SEND_DISABLE	0x002
#define P4E_MD_EVENT_CT_SEND		0x004
#define P4E_MD_EVENT_CT_REPLY		0x008
#define P4E_MD_EVENT_CT_ACK		0x010
#define P4E_MD_EVENT_CT_BYTES		0x020
#define P4E_MD_UNORDERED		0x040
#define P4E_MD_VOLATILE			0x080
#define P4E_MD_UNRELIABLE		0x100
#define P4E_MD_IOVEC			0x200	/* start is a struct iovec[] */

struct p4e_md_desc {
	void *start;		/* or struct iovec * with P4E_MD_IOVEC */
	uint64_t length;	/* bytes, or iovec count with P4E_MD_IOVEC */
	unsigned options;
	struct p4e_eq *eq;	/* NULL: no full events */
	uint64_t ct;		/* P4E_HANDLE_NONE: no counting */
};

int p4e_md_bind(struct p4e_ni *ni, const struct p4e_md_desc *desc,
		uint64_t *md_p);
/* -FI_EBUSY while operations on it are pending. */
int p4e_md_release(struct p4e_ni *ni, uint64_t md);

/* ---- list entries ---------------------------------------------------- */

#define P4E_ME_OP_PUT			0x00001
#define P4E_ME_OP_GET			0x00002
#define P4E_ME_USE_ONCE			0x00004
#define P4E_ME_UNEXPECTED_HDR_DISABLE	0x00008
#define P4E_ME_IS_ACCESSIBLE		0x00010
#define P4E_ME_EVENT_LINK_DISABLE	0x00020
#define P4E_ME_EVENT_COMM_DISABLE	0x00040
#define P4E_ME_EVENT_FLOWCTRL_DISABLE	0x00080
#define P4E_ME_EVENT_SUCCESS_DISABLE	0x00100
#define P4E_ME_EVENT_OVER_DISABLE	0x00200
#define P4E_ME_EVENT_UNLINK_DISABLE	0x00400
#define P4E_ME_EVENT_CT_COMM		0x00800
#define P4E_ME_EVENT_CT_OVERFLOW	0x01000
#define P4E_ME_EVENT_CT_BYTES		0x02000
#define P4E_ME_MANAGE_LOCAL		0x04000
#define P4E_ME_NO_TRUNCATE		0x08000
#define P4E_ME_MAY_ALIGN		0x10000
#define P4E_ME_LOCAL_INC_UH_RLENGTH	0x20000
#define P4E_ME_IOVEC			0x40000	/* start is a struct iovec[]; up to
						 * P4E_XFER_IOV_MAX elements are
						 * copied, longer arrays must stay
						 * valid while the entry lives */
/*
 * [ext] When this priority entry matches unexpected headers, the engine
 * moves the data into the entry (copy from the overflow buffer, or pull a
 * rendezvous) before the *_OVERFLOW event, whose start then points into
 * this entry. Portals leaves that copy to the application.
 */
#define P4E_ME_UH_COPY			0x80000
/*
 * [ext] The remote offset of an incoming operation is a virtual address:
 * the offset used is remote_offset - start (libfabric FI_MR_VIRT_ADDR).
 */
#define P4E_ME_VIRT_ADDR		0x100000
/*
 * [ext] Overflow entries: a rendezvous message that matches keeps only its
 * header here (no overflow space used); the data is pulled straight into
 * the priority entry that later matches it. Without it, Portals semantics:
 * the data is pulled into the overflow entry like any put.
 */
#define P4E_ME_RDZV_HDR_ONLY		0x200000
/*
 * [ext] With P4E_ME_NO_TRUNCATE: an operation that does not fit is refused
 * by this entry (P4E_NI_SEGV to the initiator) instead of passing on to
 * the next entry (libfabric: an access outside a registered region).
 */
#define P4E_ME_BOUNDS_FAIL		0x400000
/*
 * [ext] An operation this entry refuses (uid, operation or bounds) still
 * produces its full event, with the failure kind and mlength 0, and
 * counts as a failure on the entry's CT with P4E_ME_EVENT_CT_COMM
 * (libfabric counts remote access errors on the MR's counter).
 */
#define P4E_ME_EVENT_FAIL		0x800000
/*
 * [ext] An overflow entry of last resort that keeps headers only: it takes
 * a put only when no other overflow entry does. A rendezvous or empty put
 * leaves its header (an unexpected header, no data); an eager put with
 * data, on a P4E_PT_FC_RESEND portal, makes its initiator resend it (and
 * what follows it to that portal) as rendezvous. Receivers that wait for
 * a message queued behind a flood their overflow buffers cannot hold
 * thereby still get it, as long as unexpected headers are left.
 * Overflow list only; length 0.
 */
#define P4E_ME_HDR_ONLY			0x1000000
/*
 * [ext] Send no acknowledgment (Portals 4.0's PTL_ME_ACK_DISABLE): a put
 * or atomic it accepts gets no ACK event or ack count at its initiator,
 * even if asked for; the operation ends there with its SEND.
 */
#define P4E_ME_ACK_DISABLE		0x2000000
/*
 * [ext] For p4e_me_search with P4E_SEARCH_ONLY (Portals searches): an
 * entry without P4E_ME_USE_ONCE reports every matching header, one
 * SEARCH event each in arrival order, as an append of it would match them
 * all. Without it a search reports the first only (libfabric's FI_PEEK).
 */
#define P4E_ME_SEARCH_EACH		0x4000000
/*
 * The ACKs an entry with P4E_ME_ACK_DISABLE sends carry this bit in their
 * list field (struct p4w_resp, include/p4_wire.h): the initiator ends the
 * put or atomic without an ACK event or count. A bit above the two list
 * values; the parser takes it, the initiator strips it from every event
 * (a REPLY never carries it).
 */
#define P4E_RESP_NO_ACK			0x80

struct p4e_me_desc {
	void *start;		/* or struct iovec * with P4E_ME_IOVEC */
	uint64_t length;	/* bytes, or iovec count with P4E_ME_IOVEC */
	uint64_t ct;
	uint32_t uid;		/* P4E_UID_ANY: anyone */
	unsigned options;
	uint32_t match_id;	/* peer id / rank, or P4E_ID_ANY */
	uint64_t match_bits;
	uint64_t ignore_bits;	/* 1 = don't care */
	uint64_t min_free;
	/*
	 * [ext] Subtracted from the remote offset of incoming operations
	 * (offsets below it fit nothing): libfabric's MR offset argument.
	 * Ignored with P4E_ME_MANAGE_LOCAL or P4E_ME_VIRT_ADDR.
	 */
	uint64_t base;
	/*
	 * [ext] With match_id P4E_ID_ANY on a matching NI: only initiators
	 * the NI's id_filter (attr) accepts for id_filter match (the
	 * Portals half wildcards, {nid, PTL_PID_ANY} and {PTL_NID_ANY,
	 * pid}, which name a set of peers the engine's ids cannot).
	 */
	bool id_filtered;
	uint64_t id_filter;
};

/* On a non-matching NI the match fields are ignored (an LE). */
int p4e_me_append(struct p4e_ni *ni, uint32_t pt_index,
		  const struct p4e_me_desc *desc, enum p4e_list list,
		  void *user_ptr, uint64_t user_flags, uint64_t *me_p);
/*
 * Unlink. -FI_EBUSY while an operation is using the entry (a rendezvous
 * pull in flight). [ext] With P4E_UNLINK_CANCEL the entry produces one
 * full event with ni_fail_type P4E_NI_CANCELED (libfabric fi_cancel).
 */
#define P4E_UNLINK_CANCEL 0x1
int p4e_me_unlink(struct p4e_ni *ni, uint64_t me, unsigned flags);
/*
 * [ext] Unlink, as P4E_UNLINK_CANCEL, the oldest priority entry of the PT
 * whose user_ptr is user_ptr (libfabric fi_cancel by context): 0,
 * -FI_ENOENT if there is none, -FI_EBUSY if it is in use.
 */
int p4e_me_cancel(struct p4e_ni *ni, uint32_t pt_index, void *user_ptr);

enum p4e_search_op {
	P4E_SEARCH_ONLY,
	P4E_SEARCH_DELETE,
	/*
	 * [ext] Like SEARCH_ONLY, but the first matching header is detached
	 * from the list with its data and handed to the caller as
	 * event.uh_handle, for p4e_uh_deliver / p4e_uh_discard
	 * (libfabric FI_PEEK | FI_CLAIM).
	 */
	P4E_SEARCH_CLAIM,
};

int p4e_me_search(struct p4e_ni *ni, uint32_t pt_index,
		  const struct p4e_me_desc *desc, enum p4e_search_op op,
		  void *user_ptr, uint64_t user_flags);
/*
 * [ext] Deliver a claimed message into a buffer (as if desc had been
 * appended with P4E_ME_USE_ONCE | P4E_ME_UH_COPY and matched it): one
 * *_OVERFLOW event to the PT's sink when the data is in place.
 */
int p4e_uh_deliver(struct p4e_ni *ni, uint64_t uh,
		   const struct p4e_me_desc *desc, void *user_ptr,
		   uint64_t user_flags);
/* [ext] Drop a claimed message; a rendezvous initiator is told it is done. */
int p4e_uh_discard(struct p4e_ni *ni, uint64_t uh);

/* ---- data movement ---------------------------------------------------- */

enum p4e_ack_req {
	P4E_NO_ACK_REQ,
	P4E_ACK_REQ,
	P4E_CT_ACK_REQ,
	P4E_OC_ACK_REQ,
	/*
	 * [ext] One ACK event (counted like P4E_ACK_REQ) once the target
	 * accepted the message: eager data matched or buffered, rendezvous
	 * data pulled. No per-message ack travels unless the target failed
	 * the operation: acceptance rides on cumulative sequence acks.
	 */
	P4E_ACK_ACCEPT,
	P4E_ACK_REQ_MAX,
};

enum p4e_atomic_op {
	P4E_MIN,
	P4E_MAX,
	P4E_SUM,
	P4E_PROD,
	P4E_LOR,
	P4E_LAND,
	P4E_BOR,
	P4E_BAND,
	P4E_LXOR,
	P4E_BXOR,
	P4E_SWAP,
	P4E_CSWAP,
	P4E_CSWAP_NE,
	P4E_CSWAP_LE,
	P4E_CSWAP_LT,
	P4E_CSWAP_GE,
	P4E_CSWAP_GT,
	P4E_MSWAP,
	P4E_ATOMIC_READ,	/* [ext] return the target, change nothing */
	P4E_ATOMIC_WRITE,	/* [ext] store the operand */
	P4E_ATOMIC_OP_MAX,
};

enum p4e_atomic_type {
	P4E_INT8,
	P4E_UINT8,
	P4E_INT16,
	P4E_UINT16,
	P4E_INT32,
	P4E_UINT32,
	P4E_FLOAT,
	P4E_INT64,
	P4E_UINT64,
	P4E_DOUBLE,
	P4E_FLOAT_COMPLEX,
	P4E_DOUBLE_COMPLEX,
	P4E_LONG_DOUBLE,
	P4E_LONG_DOUBLE_COMPLEX,
	P4E_ATOMIC_TYPE_MAX,
};

/* Arguments of put, get, atomic, fetch-atomic and swap. */
struct p4e_xfer {
	uint64_t md;			/* source (put/atomic) or sink (get) */
	uint64_t local_offset;
	uint64_t length;
	uint64_t get_md;		/* fetch/swap: where old values land */
	uint64_t get_local_offset;
	const void *operand;		/* swap: length bytes of compare
					 * values (CSWAP*) or masks (MSWAP) */
	enum p4e_ack_req ack_req;
	uint32_t target;		/* peer id, or rank on a logical NI */
	uint32_t pt_index;
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t hdr_data;
	void *user_ptr;
	uint64_t user_flags;		/* [ext] passed back in events */
	enum p4e_atomic_op atomic_op;
	enum p4e_atomic_type atomic_type;
	unsigned flags;			/* [ext] P4E_XFER_* */
	/*
	 * [ext] With iovcnt > 0 the operation's local buffer is iov (the
	 * array is copied; at most P4E_XFER_IOV_MAX elements) instead of
	 * md's region at local_offset; md still gives the options, event
	 * queue and counter, and length must be the iov total.
	 */
	const struct iovec *iov;
	size_t iovcnt;
};

#define P4E_XFER_IOV_MAX	8

/* [ext] xfer.flags: hdr_data is meaningful (target events get
 * P4E_EVENT_F_HDR_DATA), as libfabric's *data calls need. */
#define P4E_XFER_HDR_DATA	0x1
/* [ext] more requests follow at once (libfabric's FI_MORE): this one may
 * wait on the link to leave with them, at the latest at the next call
 * that progresses the NI. Without it a request leaves now. */
#define P4E_XFER_MORE		0x2

/*
 * Initiate. -FI_EAGAIN when the NI's operation slots (max_ops) or the
 * transport's queues are full: progress and retry. Invalid arguments
 * -FI_EINVAL; an unsupported op x type -FI_EOPNOTSUPP.
 */
int p4e_put(struct p4e_ni *ni, const struct p4e_xfer *xfer);
int p4e_get(struct p4e_ni *ni, const struct p4e_xfer *xfer);
int p4e_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer);
int p4e_fetch_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer);
int p4e_swap(struct p4e_ni *ni, const struct p4e_xfer *xfer);

/* Atomic op x type validity and element size (p4e_atomic.c). */
bool p4e_atomic_valid(enum p4e_atomic_op op, enum p4e_atomic_type type,
		      bool fetch);
size_t p4e_atomic_type_size(enum p4e_atomic_type type);

/* ---- triggered operations ---------------------------------------------- */

/*
 * A triggered operation fires when its CT reaches threshold. Default rule
 * (Portals, and libfabric deferred work): success + failure >= threshold.
 * With P4E_TRIG_SUCCESS_ONLY: success >= threshold (libfabric FI_TRIGGER).
 * Arguments are copied at post; buffers are read when the op fires. Ops
 * due together fire in threshold order, FIFO among equal thresholds. A
 * CT update only collects what became due: an NI operation runs in its
 * worker's next progress (the worker is kicked), a counter operation
 * (p4e_trig_ct_inc / _set) is applied at once. A post on an NI whose
 * threshold is already met fires before the call returns.
 */
#define P4E_TRIG_SUCCESS_ONLY 0x1
/* [ext] p4e_trig_ct_set: set the success value only, keep the failure
 * value (libfabric's deferred FI_OP_CNTR_SET, like fi_cntr_set). */
#define P4E_TRIG_SET_SUCCESS 0x2

struct p4e_trig {
	uint64_t ct;
	uint64_t threshold;
	unsigned flags;
	uint64_t cookie;	/* [ext] the caller's name for it (p4e_trig_cancel) */
};

/*
 * [ext] Cancel the pending triggered operations posted with exactly
 * trig's ct, threshold and cookie. Returns how many (>= 0). An NI
 * operation cancelled is freed under its worker: at once when the caller
 * holds that worker, else at its next progress (the NI's trig_dropped
 * callback runs then).
 */
int p4e_trig_cancel(struct p4e_dom *dom, const struct p4e_trig *trig);

int p4e_trig_put(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		 const struct p4e_trig *trig);
int p4e_trig_get(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		 const struct p4e_trig *trig);
int p4e_trig_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		    const struct p4e_trig *trig);
int p4e_trig_fetch_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer,
			  const struct p4e_trig *trig);
int p4e_trig_swap(struct p4e_ni *ni, const struct p4e_xfer *xfer,
		  const struct p4e_trig *trig);
int p4e_trig_ct_inc(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event inc,
		    const struct p4e_trig *trig);
int p4e_trig_ct_set(struct p4e_dom *dom, uint64_t ct, struct p4e_ct_event ev,
		    const struct p4e_trig *trig);
int p4e_trig_me_append(struct p4e_ni *ni, uint32_t pt_index,
		       const struct p4e_me_desc *desc, enum p4e_list list,
		       void *user_ptr, uint64_t user_flags,
		       const struct p4e_trig *trig, uint64_t *me_p);
int p4e_trig_me_unlink(struct p4e_ni *ni, uint64_t me,
		       const struct p4e_trig *trig);

#endif /* P4E_H */
