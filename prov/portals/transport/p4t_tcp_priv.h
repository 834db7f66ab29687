/*
 * p4t_tcp_priv.h - the TCP transport's internal objects, shared by its
 * files:
 *
 *   p4t_tcp.c       iface: events (deferred upcalls), progress (which
 *                   sockets to look at, and when), listen, open / close,
 *                   the ops table, test hooks
 *   p4t_tcp_addr.c  addresses: parse, normalise, compare, hash, print
 *   p4t_tcp_sock.c  sockets before they are a link's: options, epoll,
 *                   close, handshake deadlines, accept and its limit
 *   p4t_tcp_hs.c    the handshake (HELLO / HELLO_ACK / BYE), collisions,
 *                   restarts
 *   p4t_tcp_conn.c  links: connect, retries and the link's deadlines,
 *                   adopting a socket, failures and close; iov helpers
 *   p4t_tcp_send.c  the send path: direct sends, the write queue,
 *                   batching, offers, layered messages, flushing
 *   p4t_tcp_rx.c    the receive path: staging, in-place delivery,
 *                   transport messages, where chunk data lands
 *   p4t_tcp_rma.c   exposures, emulated pull / push, serving pulls
 *   p4t_tcp_self.c  messages to the iface's own address
 *
 * What the transport promises is in p4t_tcp.h; this header is not for
 * anyone else. There are no locks: an iface is used by one thread at a
 * time (the engine's domain rule) and ifaces share nothing.
 *
 * Objects and who frees them:
 * - struct p4t_tcp_conn: the logical link the engine holds, one per peer
 *   listening address. It survives the socket changing under it during a
 *   simultaneous connect. A failed or closed link moves to iface->dead and
 *   is freed by p4t_tcp_reap() at the end of progress (never while an
 *   upcall on it runs, never while epoll results may still name it).
 * - struct p4t_tcp_sock: one TCP socket. Pending sockets (outgoing ones
 *   connecting or handshaking on iface->pending, accepted ones waiting
 *   for HELLO on iface->accepted, oldest first, at most pending_max of
 *   them) have their handshake deadline armed on the owner's timer
 *   queue; an
 *   established one belongs to its link. Closed sockets also go to the
 *   dead list first (epoll results of the current round may point at
 *   them); their timer is cancelled when they close.
 * - struct p4t_tcp_tx: a queued message or chunk on conn->txq (pooled).
 * - struct p4t_tcp_rma: a pull (puller side), a stream of PULL_DATA
 *   chunks (owner side) or a push (pooled; a pull's handle is its id).
 * - struct p4t_tcp_mem: an exposure (pooled; its handle is the key).
 *
 * Upcalls other than recv and conn_new are never made inline: completions
 * and failures are events on iface->evq, reported in FIFO order by
 * progress, so the order "sends, then pulls / pushes, then conn_failed"
 * of a failing link is the order they were queued in.
 */
#ifndef P4T_TCP_PRIV_H
#define P4T_TCP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "p4t.h"
#include "p4t_tcp.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_iov.h"
#include "p4u_hash.h"
#include "p4u_list.h"
#include "p4u_log.h"
#include "p4u_pool.h"
#include "p4u_time.h"
#include "p4u_timer.h"

#define P4T_TCP_HDR_LEN		sizeof(struct p4w_hdr)
#define P4T_TCP_HELLO_LEN	(P4T_TCP_HDR_LEN + sizeof(struct p4w_hello))
#define P4T_TCP_DATA_LEN	(P4T_TCP_HDR_LEN + sizeof(struct p4w_data))
#define P4T_TCP_PULL_REQ_LEN	(P4T_TCP_HDR_LEN + sizeof(struct p4w_pull_req))
#define P4T_TCP_HEAD_MAX	256	/* header bytes kept inside a tx (an
					 * offer: OFFER_ANNOUNCE, a request,
					 * the OFFER header) */
#define P4T_TCP_BATCH_MAX	65536	/* batched bytes written at once */
#define P4T_TCP_BATCH_REF_MAX	32768	/* larger sends are not batched */
#define P4T_TCP_TX_IOV		4	/* caller iovecs kept inside a tx */
#define P4T_TCP_OFFER_IOV	64	/* source pieces an offer may have */
#define P4T_TCP_WRITEV_MAX	1024	/* IOV_MAX on Linux */
#define P4T_TCP_WRITEV_BYTES	((size_t)4 << 20)	/* per writev */
#define P4T_TCP_MAX_IOV		1024	/* per exposure / pull / push */
#define P4T_TCP_READS		8	/* reads per link per progress */
#define P4T_TCP_ACCEPTS		16	/* accepts per progress */
#define P4T_TCP_DIRECT_LINKS	8	/* up to this many: poll each link */
#define P4T_TCP_EPOLL_EVERY	8	/* ... and epoll every n-th call */
#define P4T_TCP_EPOLL_EVENTS	64
#define P4T_TCP_CHUNK_DEFAULT	((size_t)128 << 10)
#define P4T_TCP_TIMEOUT_DEFAULT	30000u	/* peer_timeout_ms when 0 */
/* pooled copies: up to an inline payload with its engine headers */
#define P4T_TCP_BUF_SIZE	(P4T_TCP_MAX_INLINE + 256)
#define P4T_TCP_SCRATCH		((size_t)64 << 10)
/* staged per read while chunks stream (see p4t_tcp_rx_fill) */
#define P4T_TCP_BULK_PEEK	((size_t)4 << 10)

/* ---- events (deferred upcalls) ------------------------------------------ */

enum p4t_tcp_ev_kind {
	P4T_TCP_EV_SEND_DONE,	/* a struct p4t_tcp_tx */
	P4T_TCP_EV_RMA_DONE,	/* a struct p4t_tcp_rma */
	P4T_TCP_EV_CONN_FAILED,	/* a struct p4t_tcp_conn */
};

struct p4t_tcp_ev {
	struct p4u_list node;	/* tx: on conn->txq first; then iface->evq */
	uint8_t kind;
	int status;
};

/* ---- the send queue ----------------------------------------------------- */

enum p4t_tcp_tx_kind {
	P4T_TCP_TX_MSG,		/* a whole message (engine or control) */
	P4T_TCP_TX_STREAM,	/* PULL_DATA chunks, rotating with others */
	P4T_TCP_TX_PUSH,	/* PUSH_DATA chunks, in stream order */
};

enum p4t_tcp_buf_kind {
	P4T_TCP_BUF_NONE,	/* body is the caller's (P4T_QUEUED) */
	P4T_TCP_BUF_POOL,	/* iface->bufs */
	P4T_TCP_BUF_HEAP,	/* malloc */
};

struct p4t_tcp_rma;

/*
 * What a tx writes: head[0, head_len) and then len - head_len bytes of
 * body starting body_off bytes into it; done of those len bytes are
 * written. A stream or push tx describes its current chunk and is
 * re-armed for the next one when it is written.
 */
struct p4t_tcp_tx {
	struct p4t_tcp_ev ev;
	uint8_t kind;
	uint8_t buf_kind;
	bool notify;			/* send_done(op_ctx) owed */
	bool final;			/* STREAM / PUSH: the last chunk */
	bool pooled;			/* from iface->txs (not in an rma) */
	uint32_t head_len;
	size_t len;
	size_t done;
	void *op_ctx;
	const struct iovec *body;
	size_t body_cnt;
	uint64_t body_off;
	void *buf;			/* owned copy, see buf_kind */
	struct iovec one;		/* body of a copy */
	struct iovec *iov_heap;		/* caller iovecs beyond iov_inline */
	struct iovec iov_inline[P4T_TCP_TX_IOV];
	struct p4t_tcp_rma *rma;	/* STREAM / PUSH */
	uint8_t head[P4T_TCP_HEAD_MAX];
};

/* ---- receive staging ------------------------------------------------------ */

enum p4t_tcp_rx_mode {
	P4T_TCP_RX_PARSE,	/* messages are parsed in buf */
	P4T_TCP_RX_LAND,	/* chunk payload read straight into place */
	P4T_TCP_RX_BIG,		/* an engine message larger than buf */
};

struct p4t_tcp_mem;

/* Where an offer the peer announced stands (p4_wire.h, Offers). */
enum p4t_tcp_offer_state {
	P4T_TCP_OFFER_NONE,
	P4T_TCP_OFFER_ANNOUNCED,	/* OFFER_ANNOUNCE read: its engine
					 * message comes next */
	P4T_TCP_OFFER_UPCALL,		/* that message's recv upcall runs:
					 * a pull of the offer is held */
	P4T_TCP_OFFER_DATA,		/* the OFFER comes next */
};

struct p4t_tcp_rx {
	uint8_t *buf;			/* P4T_TCP_STAGE bytes */
	size_t head, tail;		/* staged bytes: [head, tail) */
	enum p4t_tcp_rx_mode mode;
	/* LAND: left bytes go to iov at off (discard: to scratch) */
	const struct iovec *iov;
	size_t iovcnt;
	uint64_t off;
	size_t left;
	bool discard;
	bool last;
	bool bulk;			/* chunks are streaming in */
	struct p4t_tcp_rma *pull;	/* PULL_DATA: whose chunk */
	struct p4t_tcp_mem *mem;	/* PUSH_DATA: the exposure */
	/* an announced offer: its source, bytes, and the pull its recv
	 * upcall made of exactly them (p4t_tcp_pull), which its OFFER's
	 * bytes land in */
	enum p4t_tcp_offer_state offer;
	struct p4w_cookie offer_src;
	uint64_t offer_len;
	struct p4t_tcp_rma *offer_pull;
	/* BIG */
	uint8_t *big;
	size_t big_len, big_got;
};

/* ---- sockets and links ---------------------------------------------------- */

enum p4t_tcp_sock_state {
	P4T_TCP_SOCK_CONNECTING,	/* outgoing, connect() in flight */
	P4T_TCP_SOCK_HELLO_SENT,	/* outgoing, waiting for HELLO_ACK */
	P4T_TCP_SOCK_HELLO_WAIT,	/* accepted, waiting for HELLO */
	P4T_TCP_SOCK_ESTABLISHED,	/* a link's socket */
	P4T_TCP_SOCK_DEAD,		/* closed, on iface->dead_socks */
};

struct p4t_tcp_iface;
struct p4t_tcp_conn;

struct p4t_tcp_sock {
	struct p4u_list node;		/* iface->pending or ->accepted, or
					 * dead_socks */
	struct p4t_tcp_iface *iface;
	struct p4t_tcp_conn *conn;	/* outgoing or adopted; NULL before */
	int fd;
	enum p4t_tcp_sock_state state;
	bool outgoing;
	uint32_t events;		/* registered with epoll */
	struct p4u_timer timer;		/* pending: handshake deadline */
	size_t ctl_len, ctl_off;	/* handshake bytes to write first */
	uint8_t ctl[P4T_TCP_HELLO_LEN];
	size_t hs_got;			/* handshake bytes read */
	uint8_t hs[P4T_TCP_HELLO_LEN];
};

enum p4t_tcp_conn_state {
	P4T_TCP_CONN_CONNECTING,	/* no established socket yet */
	P4T_TCP_CONN_ESTABLISHED,
	P4T_TCP_CONN_FAILED,		/* conn_failed queued or running */
	P4T_TCP_CONN_CLOSED,		/* the engine closed it / reported */
};

struct p4t_tcp_conn {
	struct p4t_conn base;		/* first: what the engine holds */
	struct p4t_tcp_iface *iface;
	struct p4u_hash_node hnode;	/* iface->by_addr while findable */
	struct p4u_list node;		/* iface->conns, then iface->dead */
	struct p4u_list active;		/* iface->established */
	struct p4u_list backlog;	/* iface->backlog: staged work left */
	struct p4u_list corked;		/* iface->corked: batched sends */
	struct sockaddr_storage addr;	/* the peer's listening address */
	socklen_t addrlen;
	enum p4t_tcp_conn_state state;
	bool self;			/* our own address: no socket */
	bool known;			/* the engine has it */
	bool busy;			/* an upcall on it is running */
	bool hashed;
	bool wblocked;			/* the socket said EAGAIN */
	bool rx_idle;			/* the last recv found nothing */
	bool has_session;
	uint64_t session;		/* the peer's, from its HELLO(_ACK) */
	/*
	 * CONNECTING: the link's own deadline, armed while no attempt of
	 * ours is in flight (an attempt is timed by its socket's timer):
	 * waiting to retry after a refusal, or for the peer's socket after
	 * a collision. retry_timer: connect again after a refusal.
	 */
	uint64_t deadline_ns;
	struct p4u_timer deadline_timer;
	struct p4u_timer retry_timer;
	uint32_t backoff_ms;		/* the pause after the next refusal */
	struct p4t_tcp_sock *sock;	/* CONNECTING: the attempt, if any */
	struct p4u_list txq;		/* struct p4t_tcp_tx, in write order */
	/*
	 * Messages written on our attempt (conn->sock) behind its HELLO,
	 * before the HELLO_ACK (a pipelined handshake, p4t_tcp_hs.c):
	 * completed when that socket becomes the link, back at the head of
	 * txq, whole, when it does not (a collision's BYE, a refusal).
	 */
	struct p4u_list unconfirmed;
	uint64_t retry_end_ns;		/* refused connects retried till */
	size_t txq_bytes;
	size_t nstreams;		/* stream txs on txq */
	struct p4u_list pulls;		/* our pulls waiting for data */
	struct p4t_tcp_rx rx;
	struct p4t_tcp_ev fail_ev;
};

/* ---- emulated RDMA ---------------------------------------------------------- */

enum p4t_tcp_rma_kind {
	P4T_TCP_RMA_PULL,	/* ours: waiting for PULL_DATA */
	P4T_TCP_RMA_STREAM,	/* the peer's pull: we send PULL_DATA */
	P4T_TCP_RMA_PUSH,	/* ours: we send PUSH_DATA */
};

struct p4t_tcp_rma {
	struct p4t_tcp_ev ev;		/* completion (PULL, PUSH) */
	struct p4u_list link;		/* PULL: conn->pulls; STREAM: mem */
	struct p4t_tcp_tx tx;		/* STREAM, PUSH: the current chunk */
	enum p4t_tcp_rma_kind kind;
	struct p4t_tcp_conn *conn;
	void *op_ctx;
	uint64_t id;			/* STREAM: the puller's pull id */
	size_t len, pos;		/* PULL: received; others: produced */
	int status;			/* STREAM: refuse from pos on */
	struct p4t_tcp_mem *mem;	/* STREAM: the source */
	uint64_t mem_off;
	struct p4w_cookie remote;	/* PUSH */
	uint64_t remote_off;
	void *chunk_copy;		/* STREAM: chunk saved at unexpose */
	size_t iovcnt;
	struct iovec *iov;		/* PULL: dest; PUSH: source */
	struct iovec iov_inline[P4T_TCP_TX_IOV];
};

struct p4t_tcp_mem {
	struct p4t_tcp_conn *conn;	/* the only user; NULL once gone */
	unsigned access;
	size_t len;
	size_t iovcnt;
	struct iovec *iov;
	struct p4u_list streams;	/* struct p4t_tcp_rma reading it */
};

/* ---- the iface --------------------------------------------------------- */

struct p4t_tcp_iface {
	struct p4t_iface_base base;	/* first: p4t_ops_of() */
	struct sockaddr_storage addr;	/* bound listening address */
	socklen_t addrlen;
	int listen_fd;
	int epfd;			/* the wait fd */
	int efd;			/* eventfd: events, self queue, backlog */
	uint64_t session;
	uint64_t auth_key;
	uint64_t salt;			/* cookie key = handle ^ salt */
	uint64_t peer_timeout_ms;
	uint64_t connect_retry_ms;
	size_t chunk;
	size_t offer_max;		/* attr.max_offer */
	const struct p4t_upcalls *upcalls;
	void *upcall_ctx;
	struct p4u_hash by_addr;	/* findable links */
	struct p4u_list conns;		/* every live link */
	struct p4u_list established;	/* links with a socket to poll */
	struct p4u_list backlog;
	struct p4u_list dead;		/* links to free in reap */
	struct p4u_list pending;	/* outgoing handshaking sockets */
	struct p4u_list accepted;	/* HELLO_WAIT sockets, oldest first */
	size_t naccepted;
	size_t pending_max;		/* naccepted at most */
	struct p4u_list dead_socks;
	struct p4u_list evq;
	struct p4u_list selfq;		/* struct p4t_tcp_selfmsg */
	struct p4t_tcp_conn *self;
	size_t selfq_bytes;
	size_t nestablished;
	size_t nconnecting;
	struct p4u_pool txs;		/* struct p4t_tcp_tx */
	struct p4u_pool bufs;		/* P4T_TCP_BUF_SIZE copies */
	struct p4u_pool rmas;		/* struct p4t_tcp_rma */
	struct p4u_pool mems;		/* struct p4t_tcp_mem */
	size_t queue_limit;
	struct p4u_timerq *timers;	/* the owner's (cfg) */
	int sndbuf, rcvbuf;		/* test hook; 0 = kernel default */
	unsigned tick;
	uint64_t idle_epoll_ns;		/* last epoll with no link */
	bool signaled;			/* efd holds a count */
	bool closing;
	bool in_progress;		/* sends now come from upcalls */
	struct p4u_list corked;		/* links with batched sends queued */
	struct iovec *wiov;		/* P4T_TCP_WRITEV_MAX, for writev */
	uint8_t *scratch;		/* discarded payload lands here */
	struct p4t_tcp_stats stats;
};

struct p4t_tcp_selfmsg {
	struct p4u_list node;
	size_t len;
	bool req;
	uint8_t data[];
};

static inline struct p4t_tcp_iface *p4t_tcp_iface_of(struct p4t_iface *iface)
{
	return (struct p4t_tcp_iface *)iface;
}

static inline struct p4t_tcp_conn *p4t_tcp_conn_of(struct p4t_conn *conn)
{
	return container_of(conn, struct p4t_tcp_conn, base);
}

/* ---- p4t_tcp_addr.c ------------------------------------------------------- */

int p4t_tcp_addr_parse(const void *addr, size_t addrlen,
		       struct sockaddr_storage *ss, socklen_t *len_p);
bool p4t_tcp_addr_eq(const struct sockaddr_storage *a, socklen_t alen,
		     const struct sockaddr_storage *b, socklen_t blen);
int p4t_tcp_addr_cmp(const struct sockaddr_storage *a, socklen_t alen,
		     const struct sockaddr_storage *b, socklen_t blen);
uint64_t p4t_tcp_addr_hash(const struct sockaddr_storage *ss, socklen_t len);
const char *p4t_tcp_addr_str(const struct sockaddr_storage *ss, char *buf,
			     size_t len);

/* ---- p4t_tcp.c ------------------------------------------------------------ */

void p4t_tcp_signal(struct p4t_tcp_iface *iface);
void p4t_tcp_ev_post(struct p4t_tcp_iface *iface, struct p4t_tcp_ev *ev);
void p4t_tcp_ev_post_conn(struct p4t_tcp_conn *conn, struct p4t_tcp_ev *ev);
int p4t_tcp_events_run(struct p4t_tcp_iface *iface, int budget);

/* ---- p4t_tcp_sock.c ------------------------------------------------------- */

int p4t_tcp_sock_setup(struct p4t_tcp_iface *iface, int fd);
struct p4t_tcp_sock *p4t_tcp_sock_new(struct p4t_tcp_iface *iface, int fd);
int p4t_tcp_sock_watch(struct p4t_tcp_sock *sock, uint32_t events);
void p4t_tcp_sock_close(struct p4t_tcp_sock *sock);
void p4t_tcp_pending_add(struct p4t_tcp_sock *sock, uint64_t timeout_ms);
void p4t_tcp_timer_arm_ms(struct p4t_tcp_iface *iface, struct p4u_timer *timer,
			  uint64_t from_ns, uint64_t ms);
void p4t_tcp_hello_pack(struct p4t_tcp_iface *iface, uint8_t type,
			uint8_t *buf);
void p4t_tcp_sock_reject(struct p4t_tcp_sock *sock, int ret, const char *why);
void p4t_tcp_sock_bye(struct p4t_tcp_sock *sock);
void p4t_tcp_accept(struct p4t_tcp_iface *iface);

/* ---- p4t_tcp_hs.c --------------------------------------------------------- */

void p4t_tcp_hs_event(struct p4t_tcp_sock *sock, uint32_t events);
void p4t_tcp_hs_pipeline(struct p4t_tcp_conn *conn);
void p4t_tcp_hs_confirm(struct p4t_tcp_conn *conn);
void p4t_tcp_hs_rewind(struct p4t_tcp_conn *conn);

/* ---- p4t_tcp_self.c ------------------------------------------------------- */

int p4t_tcp_self_send(struct p4t_tcp_iface *iface, const void *hdr,
		      size_t hdr_len, const struct iovec *iov, size_t iovcnt,
		      size_t len, unsigned flags);
int p4t_tcp_self_run(struct p4t_tcp_iface *iface, int budget);
struct p4t_tcp_conn *p4t_tcp_self_get(struct p4t_tcp_iface *iface);

/* ---- p4t_tcp_conn.c ------------------------------------------------------- */

size_t p4t_tcp_iov_slice(const struct iovec *iov, size_t iovcnt,
			 uint64_t off, size_t len, struct iovec *out,
			 size_t max);
void p4t_tcp_iov_copy_in(const struct iovec *iov, size_t iovcnt, uint64_t off,
			 const void *src, size_t len);
void p4t_tcp_iov_copy_out(void *dst, const struct iovec *iov, size_t iovcnt,
			  uint64_t off, size_t len);
int p4t_tcp_errno_status(int err);
struct p4t_tcp_conn *p4t_tcp_conn_find(struct p4t_tcp_iface *iface,
				       const struct sockaddr_storage *ss,
				       socklen_t len);
struct p4t_tcp_conn *p4t_tcp_conn_create(struct p4t_tcp_iface *iface,
					 const struct sockaddr_storage *ss,
					 socklen_t len);
int p4t_tcp_conn_connect(struct p4t_tcp_conn *conn);
void p4t_tcp_conn_reconnect(struct p4t_tcp_conn *conn);
bool p4t_tcp_conn_retry_later(struct p4t_tcp_conn *conn);
void p4t_tcp_conn_wait_peer(struct p4t_tcp_conn *conn);
int p4t_tcp_conn_adopt(struct p4t_tcp_conn *conn, struct p4t_tcp_sock *sock);
void p4t_tcp_conn_want_out(struct p4t_tcp_conn *conn);
void p4t_tcp_conn_fail(struct p4t_tcp_conn *conn, int status);
void p4t_tcp_conn_free(struct p4t_tcp_conn *conn);
void p4t_tcp_conn_bye(struct p4t_tcp_conn *conn);
void p4t_tcp_conn_close(struct p4t_iface *iface, struct p4t_conn *conn);

/* ---- p4t_tcp_send.c ------------------------------------------------------- */

void p4t_tcp_tx_free(struct p4t_tcp_iface *iface, struct p4t_tcp_tx *tx);
void p4t_tcp_tx_done(struct p4t_tcp_iface *iface, struct p4t_tcp_tx *tx);
void p4t_tcp_txq_append(struct p4t_tcp_conn *conn, struct p4t_tcp_tx *tx);
struct p4t_tcp_tx *p4t_tcp_tx_ctl(struct p4t_tcp_conn *conn, const void *msg,
				  size_t len);
void p4t_tcp_conn_kick(struct p4t_tcp_conn *conn);
int p4t_tcp_conn_flush(struct p4t_tcp_conn *conn);
int p4t_tcp_conn_write(struct p4t_tcp_conn *conn);
bool p4t_tcp_conn_has_out(const struct p4t_tcp_conn *conn);
void p4t_tcp_corked_flush(struct p4t_tcp_iface *iface);
int p4t_tcp_send(struct p4t_iface *iface, struct p4t_conn *conn,
		 const void *hdr, size_t hdr_len, const struct iovec *iov,
		 size_t iovcnt, void *op_ctx, unsigned flags);
int p4t_tcp_send_offer(struct p4t_iface *iface, struct p4t_conn *conn,
		       const void *hdr, size_t hdr_len, struct p4t_mem *mem,
		       size_t len, void *op_ctx, unsigned flags);

/* ---- p4t_tcp_rx.c --------------------------------------------------------- */

int p4t_tcp_conn_rx(struct p4t_tcp_conn *conn, int budget);
void p4t_tcp_conn_malformed(struct p4t_tcp_conn *conn, int ret,
			    const char *what);

/* ---- p4t_tcp_rma.c -------------------------------------------------------- */

int p4t_tcp_mem_expose(struct p4t_iface *iface, struct p4t_conn *conn,
		       const struct iovec *iov, size_t iovcnt, unsigned access,
		       struct p4w_cookie *cookie, struct p4t_mem **mem_p);
void p4t_tcp_mem_unexpose(struct p4t_iface *iface, struct p4t_mem *mem);
void p4t_tcp_mem_cookie(struct p4t_tcp_iface *iface,
			const struct p4t_tcp_mem *mem, struct p4w_cookie *cookie);
int p4t_tcp_mem_lookup(struct p4t_tcp_iface *iface, struct p4t_tcp_conn *conn,
		       uint64_t key, uint64_t off, uint64_t len,
		       unsigned access, struct p4t_tcp_mem **mem_p);
void p4t_tcp_mem_forget_conn(struct p4t_tcp_conn *conn);
void p4t_tcp_mem_free_all(struct p4t_tcp_iface *iface);
int p4t_tcp_pull(struct p4t_iface *iface, struct p4t_conn *conn,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 void *op_ctx);
int p4t_tcp_push(struct p4t_iface *iface, struct p4t_conn *conn,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 void *op_ctx);
int p4t_tcp_rx_pull_req(struct p4t_tcp_conn *conn, const uint8_t *msg);
void p4t_tcp_rma_chunk_written(struct p4t_tcp_tx *tx);
void p4t_tcp_rma_abort(struct p4t_tcp_rma *rma, int status);
void p4t_tcp_rma_free(struct p4t_tcp_iface *iface, struct p4t_tcp_rma *rma);

#endif /* P4T_TCP_PRIV_H */
