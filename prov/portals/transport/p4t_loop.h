/*
 * p4t_loop.h - test hooks of the loop transport.
 *
 * The loop transport itself is reached like any other, through
 * p4t_loop_ops (p4t.h): ifaces in one process exchange real wire messages
 * through in-memory queues, and nothing happens outside p4t_progress(), so
 * engine tests are deterministic. Addresses are struct sockaddr_in (any
 * IPv4 address, 127.0.0.1 for INADDR_ANY; port 0 = a unique port from a
 * process-wide counter).
 *
 * What it guarantees beyond p4t.h, and tests may rely on:
 * - p4t_send returns P4T_DONE (never P4T_QUEUED, so no send_done upcall),
 *   -FI_EINVAL for a message whose p4w_hdr length is not hdr_len + payload
 *   or whose type is a transport type, -FI_EMSGSIZE above P4W_MAX_MSG, or
 *   -FI_EAGAIN when the message would take the link's queue at the
 *   receiver past its limit (64 MiB unless p4t_loop_set_queue_limit says
 *   otherwise; an empty queue takes a message of any size). On a
 *   link that has failed (conn_failed not yet reported) the message is
 *   dropped and P4T_DONE returned; the conn_failed upcall follows.
 * - Messages are delivered in the destination's progress, in the order
 *   they were sent to it (across all its links), one per unit of budget.
 *   Completions and failure reports go first, in the order they arose.
 * - A pull is performed in the puller's progress; a push copies at once
 *   (before a later send is delivered) and completes in the pusher's
 *   progress. Check failures complete with -FI_EACCES (unknown, stale or
 *   forged key; access not granted; another peer's exposure) or -FI_EINVAL
 *   (offset / length outside the exposure); memory is then not touched.
 *   Pulls and pushes caught by a link failure or conn_close complete with
 *   -FI_ECONNABORTED, always before that link's conn_failed.
 * - The first send, pull or push on a conn to an address nobody listens on
 *   (or whose listener has another auth_key) fails the link: conn_failed
 *   with -FI_ECONNREFUSED from the next progress, never synchronously.
 * - A peer's first message makes conn_new (with its listening address)
 *   before the recv upcall, unless the engine got that conn from
 *   p4t_conn_get first. A refusal drops the message; the peer gets
 *   conn_failed(-FI_ECONNREFUSED); the refused conn is never reported.
 * - recv returning < 0 fails the link: conn_failed(that value) here,
 *   conn_failed(-FI_ECONNRESET) at the peer. conn_close and iface_close
 *   make conn_failed(-FI_ECONNRESET) at the peer; the closed conn gets no
 *   conn_failed. iface_close completes its pending pulls and pushes with
 *   rma_done(-FI_ECONNABORTED) before it returns.
 * - Upcalls may call p4t_send, pull, push, conn_get, conn_close and
 *   mem_expose / unexpose, on any iface; not progress or iface_close.
 * - Ifaces may be opened, closed and progressed from several threads (a
 *   process-wide mutex, never held across an upcall); each iface is used
 *   by one thread at a time, as the engine's domain rule says.
 */
#ifndef P4T_LOOP_H
#define P4T_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p4t.h"

/* Default bound on bytes queued at the receiving end of one link. */
#define P4T_LOOP_QUEUE_LIMIT	((size_t)64 << 20)

struct p4t_loop_stats {
	uint64_t msgs_sent;		/* queued to a peer by p4t_send here */
	uint64_t bytes_sent;
	uint64_t sends_dropped;		/* p4t_send here into a failed link */
	uint64_t msgs_delivered;	/* passed to the recv upcall here */
	uint64_t bytes_delivered;
	uint64_t msgs_dropped;		/* queued here, dropped undelivered */
	uint64_t msgs_injected;		/* p4t_loop_inject into this iface */
	uint64_t pulls;			/* pulls performed by this iface */
	uint64_t pushes;		/* pushes performed by this iface */
	uint64_t rma_bytes;		/* bytes they moved */
	uint64_t queued_msgs;		/* now waiting for delivery here */
	uint64_t queued_bytes;
};

/*
 * Queue msg (len bytes, copied, not validated: any bytes at all) for
 * delivery to dst as if the iface at from_addr had sent it. It travels on
 * dst's conn for that address (made, with a conn_new to come, if there is
 * none), behind whatever is queued there. 0, -FI_EINVAL (not a loop iface,
 * bad address), -FI_EMSGSIZE, -FI_EAGAIN (queue full) or -FI_ENOMEM.
 */
int p4t_loop_inject(struct p4t_iface *dst, const void *from_addr,
		    size_t from_len, const void *msg, size_t len);

/*
 * While held, progress delivers no message to iface (they queue, and its
 * wait fd does not report them); completions and failures still go.
 */
void p4t_loop_hold(struct p4t_iface *iface, bool hold);

/*
 * Fail iface's link to the peer at addr as a network fault would: both
 * ends get conn_failed(status) (status < 0) and lose what is queued.
 * 0, -FI_EINVAL, or -FI_ENOENT when iface has no live conn for addr.
 */
int p4t_loop_fail_link(struct p4t_iface *iface, const void *addr,
		       size_t addrlen, int status);

/* Bound (bytes) on each of iface's inbound link queues; 0 = default. */
void p4t_loop_set_queue_limit(struct p4t_iface *iface, size_t bytes);

void p4t_loop_stats_get(struct p4t_iface *iface, struct p4t_loop_stats *stats);

#endif /* P4T_LOOP_H */
