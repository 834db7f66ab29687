/*
 * p4t.h - the transport interface: what the engine needs from a network
 * (docs/design.md §9).
 *
 * A transport instance (struct p4t_iface) serves one engine NI: it has one
 * listening address and one link (struct p4t_conn) per peer NI, opened
 * lazily by p4t_conn_get() and shared when both sides connect at once. It
 * moves whole messages (a header of p4_wire.h plus payload) in order per
 * link, and one-sided transfers between exposed memory regions (pull =
 * RDMA read, push = RDMA write; emulated over a byte stream where there is
 * no RDMA). It knows nothing of matching, portal tables or events, and it
 * never reads the engine's header: what the engine wants of a send (is it
 * a flow-controlled request, may it wait for later sends) comes as
 * P4T_SEND_* flags. It calls back into the engine through struct
 * p4t_upcalls.
 *
 * The engine reaches a transport only through the inline wrappers at the
 * bottom, and reads its capabilities once from struct p4t_iface_attr.
 * Every call happens under the lock of the engine worker that owns the
 * NI (docs/design.md §8); upcalls are made from p4t_progress() or from a
 * send on the same thread (and rma_done from p4t_iface_close, see there),
 * never from another thread. An upcall may call send, pull, push,
 * conn_get, conn_close, mem_expose and mem_unexpose; not progress, flush
 * or iface_close on the same iface. Deadlines are armed on the worker's
 * timer queue (p4t_iface_config.timers), whose callbacks run under the
 * same lock: a transport has no timer or tick of its own.
 *
 * Several transports per NI: the engine opens its network transport (tcp
 * or verbs) and, unless turned off, the host-local one (shm) with
 * cfg.addr = the network iface's name. For each new peer it asks the
 * local one first: its conn_get returns -FI_EHOSTUNREACH at once when the
 * peer is not on this host or cannot be reached through it (another
 * network or PID namespace, another user, no listener), and the engine
 * then uses the network transport. Both ends of a pair decide from the
 * same symmetric facts, so they pick the same transport. Addresses of a
 * local transport are the network transport's (struct sockaddr_in or
 * sockaddr_in6) with the host token of p4u_addr.h in the bytes that do not
 * identify the peer: getname returns it stamped, and conn_new names the
 * peer by its network address, stamped, so one peer is one peer whichever
 * transport carries it.
 */
#ifndef P4T_H
#define P4T_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "p4_wire.h"
#include "p4u_timer.h"

struct p4t_iface;
struct p4t_mem;
struct p4t_mr;

/* Transports embed this at the start of their link object. */
struct p4t_conn {
	void *engine_ctx;	/* the engine's per-peer state */
};

struct p4t_iface_attr {
	size_t max_inline;	/* p4t_send copies messages up to this size */
	size_t max_msg;		/* largest message p4t_send accepts */
	size_t max_rma;		/* largest single pull / push */
	bool rma_native;	/* pull / push are real RDMA */
	size_t max_offer;	/* send_offer sends up to this; 0: no offers */
	size_t addr_len;	/* bytes of an address of this transport */
};

/* Calls from the transport into the engine. ctx is upcall_ctx. */
struct p4t_upcalls {
	/*
	 * A whole message arrived on conn: msg holds len bytes (header
	 * included), valid only during the call. Return 0, or a negative
	 * value to have the transport fail the link (malformed input).
	 */
	int (*recv)(void *ctx, struct p4t_conn *conn, const void *msg,
		    size_t len);
	/* A send that returned P4T_QUEUED has left (status 0) or failed. */
	void (*send_done)(void *ctx, void *op_ctx, int status);
	/* A pull or push finished (status 0 or -FI_E*). */
	void (*rma_done)(void *ctx, void *op_ctx, int status);
	/*
	 * A peer we did not call connected (handshake done): addr is its
	 * listening address. Return 0 to accept (set conn->engine_ctx) or a
	 * negative value to refuse (the conn is then gone: no conn_failed for
	 * it). Not made for a conn the engine already got from p4t_conn_get.
	 */
	int (*conn_new)(void *ctx, struct p4t_conn *conn, const void *addr,
			size_t addrlen);
	/*
	 * The link failed or the peer went away. Every send, pull and push on
	 * it has already completed with an error. conn stays valid until the
	 * upcall returns; a later p4t_conn_get for the address makes a new one.
	 */
	void (*conn_failed)(void *ctx, struct p4t_conn *conn, int status);
	/*
	 * Optional, for a transport layered on this one (verbs on tcp): a
	 * message its peer sent with P4T_SEND_XPORT arrived on conn, msg
	 * holding the len bytes it sent, valid during the call; in order with
	 * the link's other messages. Return 0, or < 0 to fail the link. NULL
	 * (the engine): such a message is malformed input and fails the link,
	 * so nothing of it reaches recv.
	 */
	int (*xport_recv)(void *ctx, struct p4t_conn *conn, const void *msg,
			  size_t len);
};

struct p4t_iface_config {
	const void *addr;		/* where to listen; port 0 = any */
	size_t addrlen;
	uint16_t port_low, port_high;	/* range when the port is 0 */
	uint64_t auth_key;		/* peers must present the same */
	uint64_t peer_timeout_ms;	/* silent peer declared dead after */
	/* a connect the peer's host refuses is retried this long (a peer
	 * may be starting); 0: peer_timeout_ms */
	uint64_t connect_retry_ms;
	size_t rma_chunk;		/* emulated RDMA chunk size */
	/* largest send_offer (0: the chunk size, at most it); no_offers:
	 * none, max_offer 0 */
	size_t rma_offer;
	bool no_offers;
	/*
	 * The owner's timer queue: the transport arms its deadlines
	 * (handshakes, connect retries) here; the callbacks run from the
	 * owner's progress, under its lock. Required.
	 */
	struct p4u_timerq *timers;
	const struct p4t_upcalls *upcalls;
	void *upcall_ctx;
};

/*
 * p4t_send / p4t_send_offer flags: the engine's intent for one message.
 *
 * P4T_SEND_SEQ    a sequenced request (flow-controlled by the engine): it
 *                 may be refused with -FI_EAGAIN while the link's queue is
 *                 over the transport's bound. Messages without it
 *                 (responses, acknowledgements, flow control) are not,
 *                 short of exhaustion (the loop transport's queue limit
 *                 refuses them on purpose, for tests); the engine keeps a
 *                 copy of one refused and sends it, in order, from
 *                 progress.
 * P4T_SEND_BATCH  may wait to leave together with later sends: written at
 *                 the latest by the next p4t_flush or p4t_progress of the
 *                 iface. Without it the message goes to the network now
 *                 (or as soon as the link's queue drains).
 * P4T_SEND_XPORT  not the engine's: a transport layered on this one (verbs
 *                 on tcp) sends a message of its own to its peer, hdr
 *                 holding all of it (hdr_len <= P4W_XPORT_MAX, no iov;
 *                 copied, P4T_DONE). The carrying transport frames it
 *                 (P4W_T_XPORT) and the peer's delivers it to xport_recv,
 *                 in order with the link's other messages; the engine
 *                 never sets it and never sees such a message. Only
 *                 transports that carry others accept it (tcp; not on the
 *                 self link); others return -FI_EINVAL.
 */
#define P4T_SEND_SEQ	0x1
#define P4T_SEND_BATCH	0x2
#define P4T_SEND_XPORT	0x4

/* p4t_send results besides -FI_E* */
#define P4T_DONE	1	/* the caller's memory is free again */
#define P4T_QUEUED	0	/* memory in use until send_done(op_ctx) */

/* p4t_mem_expose access */
#define P4T_ACCESS_READ		0x1	/* the peer may pull from it */
#define P4T_ACCESS_WRITE	0x2	/* the peer may push into it */

struct p4t_ops {
	const char *name;
	int (*iface_open)(const struct p4t_iface_config *cfg,
			  struct p4t_iface **iface_p);
	/*
	 * Every link fails (peers get conn_failed); pending pulls and pushes
	 * complete with rma_done(error) before it returns; no other upcall.
	 */
	void (*iface_close)(struct p4t_iface *iface);
	void (*iface_query)(struct p4t_iface *iface,
			    struct p4t_iface_attr *attr);
	int (*getname)(struct p4t_iface *iface, void *addr, size_t *addrlen);
	int (*conn_get)(struct p4t_iface *iface, const void *addr,
			size_t addrlen, struct p4t_conn **conn_p);
	/*
	 * Send hdr (hdr_len bytes, copied) and then iov. With op_ctx NULL
	 * the caller cannot learn when its memory is free again (it frees
	 * or reuses it on return): the transport copies what it cannot
	 * write at once and returns P4T_DONE, never P4T_QUEUED.
	 */
	int (*send)(struct p4t_iface *iface, struct p4t_conn *conn,
		    const void *hdr, size_t hdr_len, const struct iovec *iov,
		    size_t iovcnt, void *op_ctx, unsigned flags);
	/*
	 * Optional (NULL, or attr.max_offer 0: not offered). Send hdr, a
	 * request whose rendezvous source is mem (exposed to conn for
	 * reading), and right behind it the first len (<= max_offer) bytes
	 * of mem, unasked. A pull of exactly [0, len) of mem that the peer
	 * makes while its recv upcall for hdr runs is served from those bytes
	 * without a round trip; otherwise the peer's transport drops them and
	 * its pulls of mem go to the network as usual. Returns as send
	 * (op_ctx is required); mem stays exposed until send_done, or the
	 * link fails.
	 */
	int (*send_offer)(struct p4t_iface *iface, struct p4t_conn *conn,
			  const void *hdr, size_t hdr_len,
			  struct p4t_mem *mem, size_t len, void *op_ctx,
			  unsigned flags);
	/* Make local memory reachable by conn's peer through a cookie. */
	int (*mem_expose)(struct p4t_iface *iface, struct p4t_conn *conn,
			  const struct iovec *iov, size_t iovcnt,
			  unsigned access, struct p4w_cookie *cookie,
			  struct p4t_mem **mem_p);
	void (*mem_unexpose)(struct p4t_iface *iface, struct p4t_mem *mem);
	/* Read len bytes at remote + remote_off into local. */
	int (*pull)(struct p4t_iface *iface, struct p4t_conn *conn,
		    const struct p4w_cookie *remote, uint64_t remote_off,
		    const struct iovec *local, size_t iovcnt, size_t len,
		    void *op_ctx);
	/* Write len bytes of local to remote + remote_off. */
	int (*push)(struct p4t_iface *iface, struct p4t_conn *conn,
		    const struct iovec *local, size_t iovcnt, size_t len,
		    const struct p4w_cookie *remote, uint64_t remote_off,
		    void *op_ctx);
	/*
	 * Drop the link now (its operations fail as for conn_failed, their
	 * completions coming from later progress). conn is invalid on return
	 * and gets no conn_failed; the peer's end does.
	 */
	void (*conn_close)(struct p4t_iface *iface, struct p4t_conn *conn);
	/*
	 * Do up to budget units of work; returns how much was done. Fair
	 * between links: one that always has a budget's worth waiting does
	 * not keep the others unread (the next call starts where the budget
	 * ran out; a link found readable past it still gets one message).
	 */
	int (*progress)(struct p4t_iface *iface, int budget);
	/* Write what P4T_SEND_BATCH sends left waiting (no upcall). */
	void (*flush)(struct p4t_iface *iface);
	/* An fd readable when progress has work (for epoll), or -1. */
	int (*wait_fd)(struct p4t_iface *iface);
	/*
	 * Optional (NULL: wait_fd alone tells). The owner is about to sleep
	 * on wait_fd: a transport whose peers deliver without a syscall
	 * (shared memory) asks them from now on to signal wait_fd as well.
	 * Returns > 0 when work is there already (do not sleep), 0 when
	 * sleeping is safe; the next progress call disarms.
	 */
	int (*wait_arm)(struct p4t_iface *iface);
	/*
	 * Optional (NULL: never). Are bytes of ours still on their way to a
	 * peer: queued, on a link being set up, or (a stream transport)
	 * written but not yet acknowledged by the peer's host? The engine
	 * asks it while an NI closing lingers (p4e_ni_owes); the transport
	 * makes no progress in it.
	 */
	bool (*owes)(struct p4t_iface *iface);
	/*
	 * Optional (NULL: the transport needs no registration, as loop and
	 * tcp). Application memory registered ahead of its transfers
	 * (fi_mr_reg): exposures and the local side of pulls and pushes that
	 * lie inside it then use this registration instead of one of their
	 * own. It serves every iface of the transport in the process, open
	 * now or later, until mr_dereg. access (P4T_ACCESS_*) is what peers
	 * may do through exposures of it. Unlike the other ops these two are
	 * not tied to an iface and may be called from any thread (the
	 * transport serialises them). Transfers still using a registration
	 * keep it alive past mr_dereg until they complete.
	 */
	int (*mr_reg)(const void *buf, size_t len, unsigned access,
		      struct p4t_mr **mr_p);
	void (*mr_dereg)(struct p4t_mr *mr);
};

struct p4t_iface_base {
	const struct p4t_ops *ops;	/* transports embed this first */
};

static inline const struct p4t_ops *p4t_ops_of(struct p4t_iface *iface)
{
	return ((struct p4t_iface_base *)iface)->ops;
}

static inline int p4t_send(struct p4t_iface *iface, struct p4t_conn *conn,
			   const void *hdr, size_t hdr_len,
			   const struct iovec *iov, size_t iovcnt,
			   void *op_ctx, unsigned flags)
{
	return p4t_ops_of(iface)->send(iface, conn, hdr, hdr_len, iov, iovcnt,
				       op_ctx, flags);
}

static inline int p4t_send_offer(struct p4t_iface *iface,
				 struct p4t_conn *conn, const void *hdr,
				 size_t hdr_len, struct p4t_mem *mem,
				 size_t len, void *op_ctx, unsigned flags)
{
	const struct p4t_ops *ops = p4t_ops_of(iface);

	if (!ops->send_offer)
		return -FI_ENOSYS;
	return ops->send_offer(iface, conn, hdr, hdr_len, mem, len, op_ctx,
			       flags);
}

static inline int p4t_conn_get(struct p4t_iface *iface, const void *addr,
			       size_t addrlen, struct p4t_conn **conn_p)
{
	return p4t_ops_of(iface)->conn_get(iface, addr, addrlen, conn_p);
}

static inline void p4t_conn_close(struct p4t_iface *iface,
				  struct p4t_conn *conn)
{
	p4t_ops_of(iface)->conn_close(iface, conn);
}

static inline int p4t_mem_expose(struct p4t_iface *iface,
				 struct p4t_conn *conn,
				 const struct iovec *iov, size_t iovcnt,
				 unsigned access, struct p4w_cookie *cookie,
				 struct p4t_mem **mem_p)
{
	return p4t_ops_of(iface)->mem_expose(iface, conn, iov, iovcnt, access,
					     cookie, mem_p);
}

static inline void p4t_mem_unexpose(struct p4t_iface *iface,
				    struct p4t_mem *mem)
{
	p4t_ops_of(iface)->mem_unexpose(iface, mem);
}

static inline int p4t_pull(struct p4t_iface *iface, struct p4t_conn *conn,
			   const struct p4w_cookie *remote, uint64_t remote_off,
			   const struct iovec *local, size_t iovcnt, size_t len,
			   void *op_ctx)
{
	return p4t_ops_of(iface)->pull(iface, conn, remote, remote_off, local,
				       iovcnt, len, op_ctx);
}

static inline int p4t_push(struct p4t_iface *iface, struct p4t_conn *conn,
			   const struct iovec *local, size_t iovcnt,
			   size_t len, const struct p4w_cookie *remote,
			   uint64_t remote_off, void *op_ctx)
{
	return p4t_ops_of(iface)->push(iface, conn, local, iovcnt, len, remote,
				       remote_off, op_ctx);
}

static inline int p4t_progress(struct p4t_iface *iface, int budget)
{
	return p4t_ops_of(iface)->progress(iface, budget);
}

static inline bool p4t_owes(struct p4t_iface *iface)
{
	const struct p4t_ops *ops = p4t_ops_of(iface);

	return ops->owes ? ops->owes(iface) : false;
}

static inline int p4t_wait_arm(struct p4t_iface *iface)
{
	const struct p4t_ops *ops = p4t_ops_of(iface);

	return ops->wait_arm ? ops->wait_arm(iface) : 0;
}

static inline void p4t_flush(struct p4t_iface *iface)
{
	p4t_ops_of(iface)->flush(iface);
}

static inline int p4t_wait_fd(struct p4t_iface *iface)
{
	return p4t_ops_of(iface)->wait_fd(iface);
}

static inline int p4t_getname(struct p4t_iface *iface, void *addr,
			      size_t *addrlen)
{
	return p4t_ops_of(iface)->getname(iface, addr, addrlen);
}

static inline void p4t_iface_query(struct p4t_iface *iface,
				   struct p4t_iface_attr *attr)
{
	p4t_ops_of(iface)->iface_query(iface, attr);
}

static inline void p4t_iface_close(struct p4t_iface *iface)
{
	p4t_ops_of(iface)->iface_close(iface);
}

/* *mr_p is NULL when the transport has nothing to register. */
static inline int p4t_mr_reg(const struct p4t_ops *ops, const void *buf,
			     size_t len, unsigned access, struct p4t_mr **mr_p)
{
	*mr_p = NULL;
	return ops->mr_reg ? ops->mr_reg(buf, len, access, mr_p) : 0;
}

static inline void p4t_mr_dereg(const struct p4t_ops *ops, struct p4t_mr *mr)
{
	if (mr && ops->mr_dereg)
		ops->mr_dereg(mr);
}

/* The transports built in. */
extern const struct p4t_ops p4t_loop_ops;
extern const struct p4t_ops p4t_tcp_ops;
/* RDMA verbs (p4t_verbs.h); only in builds with libibverbs (HAVE_VERBS). */
extern const struct p4t_ops p4t_verbs_ops;
/* Shared memory between processes of one host (p4t_shm.h). */
extern const struct p4t_ops p4t_shm_ops;

#endif /* P4T_H */
