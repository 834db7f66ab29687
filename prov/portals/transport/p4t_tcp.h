/*
 * p4t_tcp.h - the TCP transport: what it guarantees beyond p4t.h, its
 * limits, and the hooks tests and FI_PORTALS_STATS use. The transport is
 * reached like any other, through p4t_tcp_ops (p4t.h); its internals are
 * in p4t_tcp_priv.h.
 *
 * Addresses: struct sockaddr_in or sockaddr_in6 (exact size). cfg.addr is
 * where the iface listens (NULL: 127.0.0.1); port 0 takes the first free
 * port of [port_low, port_high] when a range is set, else the kernel's
 * choice. getname returns the bound address, normalised (sin_zero,
 * sin6_flowinfo zero) so peers compare it byte for byte. Listen on a
 * specific address: a wildcard listener announces the wildcard in its
 * handshake, and peers that dialled another alias see a second peer.
 *
 * Links: one per peer listening address, made by conn_get, which starts a
 * non-blocking connect at once; sends, pulls and pushes on a link still
 * connecting are queued. The caller sends HELLO, the callee checks magic,
 * version and auth_key, makes conn_new and answers HELLO_ACK. Pipelined:
 * once the caller's connect completed (checked right after connect(), at
 * each send and in progress) it writes the HELLO and the whole messages
 * queued behind it without waiting for the HELLO_ACK; a send queued on a
 * link still connecting returns P4T_QUEUED when it has an op_ctx (a copy
 * too), and its send_done comes when the HELLO_ACK confirmed it. When both
 * sides connect at once, the socket
 * opened by the side with the lower address (bytes of the normalised
 * sockaddr) is kept; the other side's HELLO is answered with BYE (the
 * socket drained, then closed) and its link waits for that socket,
 * keeping its queue, what it pipelined on the lost socket first, whole
 * and in order (the peer read none of it). A HELLO from the address
 * of an established link with another session (the peer restarted) fails
 * the old link (conn_failed) before the new one is announced.
 *
 * Sends: with nothing queued on the link, one sendmsg straight from the
 * caller's memory; P4T_DONE when it all went. What does not go at once is
 * queued: copied (P4T_DONE) when the rest is at most P4T_TCP_MAX_INLINE
 * bytes or op_ctx is NULL, else referenced (P4T_QUEUED, send_done later).
 * Queued messages leave in one writev each time the socket takes them
 * (coalescing, up to IOV_MAX iovecs). Batching: a send flagged
 * P4T_SEND_BATCH up to 32 KiB is queued (copied up to P4T_TCP_MAX_INLINE
 * + headers, referenced above) and written with the others at the next
 * p4t_flush or progress call; so is what the transport itself sends from
 * inside its progress (pull requests, data chunks). Requests
 * (P4T_SEND_SEQ) get -FI_EAGAIN while the link has more than the queue
 * limit (P4T_TCP_QUEUE_LIMIT) queued; other messages are never refused. Messages above P4T_TCP_MAX_MSG are refused with -FI_EMSGSIZE
 * (attr.max_msg); those above the staging buffer (P4T_TCP_STAGE) are
 * received into a buffer of their own.
 *
 * Receiving: one recv into a per-link staging buffer, every whole message
 * handed to the recv upcall in place. PULL_DATA / PUSH_DATA payloads land
 * directly: what is staged is copied, the rest is read with readv into the
 * destination; while chunks stream in, each read stages only a few KiB
 * behind the destination (the next chunk's header), so payloads are not
 * copied out of staging. Malformed input, a recv upcall returning < 0, or a refused
 * push fail the link; the peer sees EOF.
 *
 * Emulated RDMA: cookies carry offset addressing (addr 0), the exposure's
 * pool handle (index | generation) xor a per-iface salt as key, and the
 * length. A pull sends PULL_REQ; the owner checks the key, READ access,
 * the link and the range (refusals complete the pull with -FI_EACCES or
 * -FI_EINVAL, memory untouched) and streams cfg.rma_chunk chunks, one at
 * a time on the write queue, rotating with the link's other messages (a
 * write gathers the current chunks of every stream queued, and what lies
 * between them). A
 * push sends PUSH_DATA chunks in stream order (a later send arrives
 * after them); rma_done comes when the last is written to the socket. A
 * pull or push whose range is outside the cookie's length completes with
 * -FI_EINVAL without any traffic.
 *
 * Offers (send_offer, up to attr.max_offer = min(cfg.rma_offer or the
 * chunk, the chunk)): OFFER_ANNOUNCE (the source's cookie and the bytes
 * offered), the engine's message as it was given, then an OFFER with the
 * bytes, queued as one unit (batched ones: written together at the
 * flush, by reference). The receiver serves a pull of exactly [0, len)
 * of that cookie made in the message's recv upcall from the OFFER,
 * landing its bytes straight in the pull's memory; other pulls ask at
 * once, and an OFFER nobody took is read and dropped (offers_dropped).
 * Frames out of that order, or an OFFER other than the one announced,
 * are malformed.
 *
 * Layering: a transport built on this one (verbs) sends messages of its
 * own with P4T_SEND_XPORT (at most P4W_XPORT_MAX bytes, copied; not on
 * the self link): framed as P4W_T_XPORT, in order with the link's other
 * messages (queued while the link connects), delivered to the peer's
 * xport_recv upcall. An iface without xport_recv (the engine's) treats
 * one as malformed input: the link fails, nothing reaches recv.
 *
 * Self: messages, pulls and pushes to the iface's own address go through
 * an in-process queue delivered in progress; no socket.
 *
 * Closing: every socket ends with shutdown(SHUT_WR), what arrived is
 * read and dropped (bounded), then close(): a FIN, not a reset, so what
 * was written survives the close and the process's exit. owes (p4t.h)
 * says whether a link still has queued or unconfirmed messages, or
 * bytes the peer's host has not acknowledged (SIOCOUTQ).
 *
 * Failures: EOF, resets, refused or timed-out connects (peer_timeout_ms),
 * a HELLO_ACK missing within it, BYE: every queued send completes
 * (send_done with -FI_ECONNABORTED for P4T_QUEUED ones), every pull and
 * push of the link with rma_done(-FI_ECONNABORTED), then conn_failed:
 * -FI_ECONNREFUSED for a link that never got its HELLO_ACK (nobody
 * listening, auth_key mismatch, refused by conn_new), -FI_ECONNRESET for
 * a peer that went away, -FI_ETIMEDOUT for a silent one, the recv
 * upcall's value or the wire error otherwise. Reported from progress,
 * never from inside a call. A silent peer is detected by TCP_USER_TIMEOUT
 * = peer_timeout_ms while data is unacknowledged, and on idle links by
 * keepalive (idle = peer_timeout / 2, interval = peer_timeout / 6, 3
 * probes, whole seconds, at least 1 s each), bounded by the user timeout:
 * detection takes peer_timeout_ms plus up to one probe interval, and never
 * less than ~2 s on an idle link.
 *
 * Deadlines: timers on the owner's queue (cfg.timers), one per object
 * timed, each firing at its own time when the owner runs the queue (the
 * engine's worker, before it progresses; tests run it in their pump), so
 * any number of them fire in one run and none waits for a tick. An
 * accepted socket that sends no valid HELLO within
 * min(P4T_TCP_HELLO_TIMEOUT_MS, peer_timeout_ms) of its accept is closed.
 * An outgoing attempt has peer_timeout_ms from its connect() to the
 * HELLO_ACK, else its link fails with -FI_ETIMEDOUT. A connect refused by
 * the peer's host is tried again after a pause (P4T_TCP_RETRY_MIN_MS,
 * doubling up to P4T_TCP_RETRY_MAX_MS) as long as the retry comes before
 * connect_retry_ms (at most peer_timeout_ms) after conn_get, else the
 * link fails with
 * -FI_ECONNREFUSED at that refusal; a link waiting for the peer's socket
 * after a collision fails with -FI_ETIMEDOUT peer_timeout_ms after the
 * BYE. Timers go with what they time (socket closed, link up, failed or
 * closed, iface closed). A failure a timer causes is reported, like
 * every failure, by the next progress call (the iface's wait fd is
 * readable then).
 *
 * Handshaking sockets: at most P4T_TCP_PENDING_MAX accepted sockets wait
 * for their HELLO at a time; accepting one more closes the oldest of them
 * first (counted in hs_evicted, hs_failed and rejected). The oldest, not
 * the newest: sockets held open in silence to block the endpoint are the
 * old ones, while a real peer sends its HELLO as soon as its connect
 * completes, so it is read within a progress call or two of its accept,
 * long before 256 newer connections (at most P4T_TCP_ACCEPTS = 16 are
 * accepted per progress call) could push it out; refusing the newest
 * instead would lock real peers out for a whole handshake timeout. 256:
 * far above what a burst of real peers keeps waiting at once (each leaves
 * the list a round after its accept), and far below the 1024 descriptors
 * a process commonly gets (RLIMIT_NOFILE), so silent connections cannot
 * take the descriptors the process needs for its real links. Established
 * links are not touched: an accept and an eviction cost O(1), and no
 * more than P4T_TCP_ACCEPTS happen per progress call.
 *
 * Progress: events first (completions, failures), then the self queue,
 * then sockets. Up to P4T_TCP_DIRECT_LINKS established links are polled
 * directly (recv / writev with MSG_DONTWAIT) while they stream, and epoll
 * is asked every few calls (new connections, handshakes); a link whose
 * last recv found nothing, or whose socket is full, waits for epoll
 * (which takes no socket lock) instead. With more links only the
 * sockets epoll reports are touched. With no link and no handshake
 * (every peer on another transport) epoll is asked at most once per
 * P4T_TCP_IDLE_EPOLL_NS, so a new connection waits that long (and 16
 * progress calls) at most.
 * The wait fd is the iface's epoll fd:
 * readable when any socket is readable (or writable with data queued),
 * or when completions, self messages or staged messages are waiting. It
 * holds nothing for deadlines: who sleeps on it also waits for the
 * owner's earliest deadline (the worker's timerfd).
 */
#ifndef P4T_TCP_H
#define P4T_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "p4t.h"

#define P4T_TCP_MAX_INLINE	4096	/* copied when queued (whole message) */
#define P4T_TCP_STAGE		((size_t)256 << 10)	/* per-link staging */
#define P4T_TCP_MAX_MSG		((size_t)8 << 20)	/* largest message */
#define P4T_TCP_QUEUE_LIMIT	((size_t)16 << 20)	/* requests: EAGAIN */
#define P4T_TCP_HELLO_TIMEOUT_MS 5000u
#define P4T_TCP_PENDING_MAX	256	/* accepted, waiting for HELLO */
#define P4T_TCP_IDLE_EPOLL_NS	100000	/* no link: epoll this often */
/* A refused connect is tried again after a pause doubling from MIN to
 * MAX, while the retry still comes before the link's deadline. */
#define P4T_TCP_RETRY_MIN_MS	20
#define P4T_TCP_RETRY_MAX_MS	1000

/* Counters of one iface since it was opened. */
struct p4t_tcp_stats {
	uint64_t msgs_sent;		/* engine messages accepted by send */
	uint64_t bytes_sent;
	uint64_t msgs_recv;		/* handed to the recv upcall */
	uint64_t bytes_recv;
	uint64_t sendmsg_calls;		/* direct sends */
	uint64_t writev_calls;		/* queue flushes */
	uint64_t recv_calls;		/* recv and readv */
	uint64_t epoll_calls;		/* epoll_wait in progress */
	uint64_t queued_copy;		/* sends queued as a copy */
	uint64_t queued_ref;		/* sends queued by reference */
	uint64_t eagain;		/* requests refused: queue full */
	uint64_t sends_dropped;		/* sends on a failed link */
	uint64_t connects;		/* outgoing sockets */
	uint64_t accepts;
	uint64_t handshakes;		/* links established */
	uint64_t collisions;		/* sockets dropped by address order */
	uint64_t auth_refused;
	uint64_t malformed;		/* malformed input: socket or link closed */
	uint64_t rejected;		/* peer sockets / links closed for bad
					 * input (handshake or later) */
	uint64_t hs_failed;		/* stray sockets closed before a link */
	uint64_t hs_evicted;		/* ... for newer ones (the limit) */
	uint64_t link_failures;		/* links failed (conn_failed due) */
	uint64_t restarts;		/* links failed by a new peer session */
	uint64_t pulls;			/* pulls posted here */
	uint64_t pushes;		/* pushes posted here */
	uint64_t streams;		/* pulls served here */
	uint64_t offers_sent;		/* send_offer: data sent unasked */
	uint64_t offers_taken;		/* offers that served a pull here */
	uint64_t offers_dropped;	/* offers nobody pulled: read, dropped */
	uint64_t rma_bytes_out;		/* PULL_DATA + PUSH_DATA bytes sent */
	uint64_t rma_bytes_in;		/* landed here */
	uint64_t rma_bytes_staged;	/* ... of them copied out of staging */
	uint64_t self_msgs;
	uint64_t xport_sent;		/* P4T_SEND_XPORT messages sent */
	uint64_t xport_recv;		/* ... handed to xport_recv */
	uint64_t links;			/* live links now */
};

/*
 * Fill stats for iface (an iface of p4t_tcp_ops): 0, or -FI_EINVAL for
 * another transport.
 */
int p4t_tcp_stats(struct p4t_iface *iface, struct p4t_tcp_stats *stats);

/*
 * Test hooks. SO_SNDBUF / SO_RCVBUF (bytes, 0 = kernel default) for the
 * sockets iface opens or accepts from now on; the bound on bytes queued
 * per link before requests get -FI_EAGAIN (0 = P4T_TCP_QUEUE_LIMIT); the
 * number of accepted sockets waiting for their HELLO at once (0 =
 * P4T_TCP_PENDING_MAX; those over a lowered limit go at the next accept).
 */
void p4t_tcp_set_sockbuf(struct p4t_iface *iface, int sndbuf, int rcvbuf);
void p4t_tcp_set_queue_limit(struct p4t_iface *iface, size_t bytes);
void p4t_tcp_set_pending_max(struct p4t_iface *iface, size_t max);

#endif /* P4T_TCP_H */
