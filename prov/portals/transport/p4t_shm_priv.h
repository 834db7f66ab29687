/*
 * p4t_shm_priv.h - the shared-memory transport's internal objects, shared
 * by its files:
 *
 *   p4t_shm.c       iface: deferred events, progress, wait_fd / wait_arm,
 *                   owes, open / close, conn_get, the ops table, hooks
 *   p4t_shm_conn.c  links: the abstract name, the peer check, segments,
 *                   HELLO / HELLO_ACK / BYE, connect and its retries, the
 *                   link's state machine, failure, close
 *   p4t_shm_accept.c  the accepting side: HELLO checks, conn_new,
 *                   collisions, restarts
 *   p4t_shm_ring.c  the rings: writing records (fragments, pads), reading
 *                   and reassembling them, wake-ups
 *   p4t_shm_send.c  the send path: send, the link's queue and its drain
 *   p4t_shm_rma.c   exposures, pull and push (cross-memory attach and
 *                   the ring fallback), serving the peer's requests
 *   p4t_shm_coop.c  pulls read from both ends: the owner's stream through
 *                   the ring, the puller's cross-memory reads
 *   p4t_shm_bell.c  doorbells: which rings a progress call reads when
 *                   there are many
 *
 * What the transport promises is in p4t_shm.h; this header is not for
 * anyone else. No locks: an iface is used by one thread at a time (the
 * engine's domain rule); the only memory shared with another process is
 * a link's segment, whose words are touched with __atomic operations
 * (p4t_shm_ring.c says which side writes which).
 *
 * Objects and who frees them:
 * - struct p4t_shm_conn: the logical link the engine holds, one per peer
 *   address. It keeps its identity when a collision moves it to the
 *   peer's segment. Failed or closed links go to iface->dead and are
 *   freed (segment unmapped) by p4t_shm_reap() at the end of progress,
 *   never while an upcall on them runs: a message handed in place lies
 *   in the segment.
 * - struct p4t_shm_pend: an accepted connection waiting for its HELLO.
 * - struct p4t_shm_tx: a queued frame on conn->txq (pooled, or inside an
 *   rma for ring-mode data).
 * - struct p4t_shm_rma: a pull or push posted here, or a stream serving
 *   the peer's ring-mode pull (pooled; its handle is the wire id).
 * - struct p4t_shm_mem: an exposure (pooled; its handle ^ salt is the key).
 */
#ifndef P4T_SHM_PRIV_H
#define P4T_SHM_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "p4t.h"
#include "p4t_shm.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_hash.h"
#include "p4u_iov.h"
#include "p4u_list.h"
#include "p4u_log.h"
#include "p4u_pool.h"
#include "p4u_time.h"
#include "p4u_timer.h"

#define P4T_SHM_MAGIC		0x50345348u	/* "P4SH" */
#define P4T_SHM_VERSION		2
#define P4T_SHM_CL		64		/* cache line */
#define P4T_SHM_REC_HDR		16
#define P4T_SHM_REC_ALIGN	64
#define P4T_SHM_HDR_PAGE	4096		/* segment header */
#define P4T_SHM_NAME_MAX	108		/* sun_path */
#define P4T_SHM_TX_IOV		4		/* caller iovecs inside a tx */
#define P4T_SHM_HEAD_MAX	256		/* header bytes inside a tx */
#define P4T_SHM_MAX_IOV		1024		/* per exposure / pull / push */
#define P4T_SHM_READS		64		/* records per link per call */
#define P4T_SHM_EPOLL_EVERY	16		/* epoll every n-th progress */
#define P4T_SHM_EPOLL_EVENTS	32
#define P4T_SHM_TIMEOUT_DEFAULT	30000u		/* peer_timeout_ms when 0 */
#define P4T_SHM_BUF_SIZE	(P4T_SHM_MAX_INLINE + P4T_SHM_HEAD_MAX)
/* largest frame: an engine message, or a control frame with its pieces */
#define P4T_SHM_FRAME_MAX	(P4T_SHM_MAX_MSG + 64 * 1024)
/* ring-mode RMA data per frame: one record */
#define P4T_SHM_CHUNK		(P4T_SHM_FRAG_MAX - P4T_SHM_REC_HDR - \
				 sizeof(struct p4t_shm_ctl))

/* ---- the segment (shared with the peer) ------------------------------ */

/*
 * One direction's control words, each on its own line: tail is written
 * only by the producer, head only by the consumer; armed is set by the
 * consumer before it sleeps and cleared by whoever wakes it; space is
 * set by a producer waiting for room and cleared by the consumer.
 */
struct p4t_shm_ring_ctl {
	_Alignas(P4T_SHM_CL) uint64_t tail;
	_Alignas(P4T_SHM_CL) uint64_t head;
	_Alignas(P4T_SHM_CL) uint32_t armed;
	_Alignas(P4T_SHM_CL) uint32_t space;
};

/* ring 0: connector to acceptor; ring 1: acceptor to connector */
struct p4t_shm_seg {
	uint32_t magic;
	uint32_t version;
	uint64_t size;			/* the whole segment */
	uint64_t ring_size;		/* data bytes of each ring */
	uint64_t ring_off[2];		/* where each ring's data starts */
	_Alignas(P4T_SHM_CL) struct p4t_shm_ring_ctl ctl[2];
};

/*
 * A process's doorbells (p4t_shm_bell.c), a sealed page of its own that
 * every peer maps: bit n of bits is the bell of the link the owner gave
 * slot n (told in HELLO / HELLO_ACK). The producer rings it after it
 * published tail; the owner clears the bits it sees set and then reads
 * those rings, so it looks at one word per 64 links instead of at every
 * ring.
 */
struct p4t_shm_inbox {
	uint32_t magic;
	uint32_t version;
	_Alignas(P4T_SHM_CL) uint64_t bits[P4T_SHM_BELLS / 64];
};

#define P4T_SHM_INBOX_BYTES	4096

/* A record: this header, then len bytes; 64-byte aligned, never wraps. */
struct p4t_shm_rec {
	uint32_t len;
	uint16_t type;			/* enum p4t_shm_frame */
	uint16_t flags;			/* P4T_SHM_REC_* */
	uint64_t total;			/* FIRST: the frame's length */
};

#define P4T_SHM_REC_FIRST	0x1
#define P4T_SHM_REC_LAST	0x2

/* The ring bytes a record of len bytes takes, header and padding. */
static inline uint64_t p4t_shm_rec_size(uint64_t len)
{
	return P4U_ALIGN_UP(len + P4T_SHM_REC_HDR,
			    (uint64_t)P4T_SHM_REC_ALIGN);
}

enum p4t_shm_frame {
	P4T_SHM_F_PAD = 0,	/* skip to the end of the ring */
	P4T_SHM_F_MSG,		/* an engine message */
	P4T_SHM_F_INFO,		/* ctl.status: 1 if we can read the peer */
	P4T_SHM_F_PULL_REQ,	/* ctl: id key off len, flags RING */
	P4T_SHM_F_PULL_GRANT,	/* ctl: id niov, then the owner's pieces */
	P4T_SHM_F_PULL_DATA,	/* ctl: id off, then data (ring mode) */
	P4T_SHM_F_PULL_DONE,	/* ctl: id status */
	P4T_SHM_F_PUSH_REQ,	/* ctl: id key off len niov, then our pieces */
	P4T_SHM_F_PUSH_DATA,	/* ctl: id key off flags FIRST/LAST, data */
	P4T_SHM_F_PUSH_DONE,	/* ctl: id status (P4T_SHM_ST_RING: resend) */
	P4T_SHM_F_PULL_STOP,	/* ctl: id; the pull is over (COOP) */
	P4T_SHM_F_MAX,
};

/* the body of every frame but MSG */
struct p4t_shm_ctl {
	uint64_t id;
	uint64_t key;
	uint64_t off;
	uint64_t len;
	int32_t status;
	uint32_t flags;			/* P4T_SHM_CTL_* */
	uint32_t niov;
	uint32_t pad;
};

struct p4t_shm_piece {
	uint64_t addr;
	uint64_t len;
};

#define P4T_SHM_CTL_RING	0x1	/* PULL_REQ: send the data in frames */
#define P4T_SHM_CTL_FIRST	0x2	/* PUSH_DATA */
#define P4T_SHM_CTL_LAST	0x4	/* PUSH_DATA */
#define P4T_SHM_CTL_COOP	0x8	/* PULL_*: read from both ends */
#define P4T_SHM_ST_RING		1	/* PUSH_DONE: resend through the ring */

/* ---- the handshake (on the link's socket) --------------------------- */

enum p4t_shm_hs_type {
	P4T_SHM_HS_HELLO = 1,	/* + SCM_RIGHTS: segment, eventfd, inbox */
	P4T_SHM_HS_ACK,		/* + SCM_RIGHTS: eventfd, inbox */
	P4T_SHM_HS_BYE,		/* reason: enum p4t_shm_bye */
};

enum p4t_shm_bye {
	P4T_SHM_BYE_CLOSE,	/* the link is closed */
	P4T_SHM_BYE_COLLISION,	/* the other link of the pair is kept */
	P4T_SHM_BYE_REFUSED,	/* auth_key, conn_new */
};

struct p4t_shm_hs {
	uint32_t magic;
	uint32_t version;
	uint8_t type;
	uint8_t reason;
	uint8_t reads_peer;	/* ACK: the acceptor can read the caller */
	uint8_t addrlen;
	uint32_t pid;
	uint32_t bell;		/* HELLO, ACK: our slot for this link */
	uint64_t auth_key;
	uint64_t session;
	uint64_t probe;		/* address of our session word */
	uint64_t seg_size;
	uint64_t ring_size;
	uint8_t addr[P4W_ADDR_MAX];	/* our stamped address */
};

/* ---- events (deferred upcalls) --------------------------------------- */

enum p4t_shm_ev_kind {
	P4T_SHM_EV_SEND_DONE,	/* a struct p4t_shm_tx */
	P4T_SHM_EV_RMA_DONE,	/* a struct p4t_shm_rma */
	P4T_SHM_EV_CONN_FAILED,	/* a struct p4t_shm_conn */
};

struct p4t_shm_ev {
	struct p4u_list node;	/* tx: conn->txq first, then iface->evq */
	uint8_t kind;
	int status;
};

/* ---- the send queue ---------------------------------------------------- */

enum p4t_shm_buf_kind {
	P4T_SHM_BUF_NONE,	/* body is the caller's (P4T_QUEUED) */
	P4T_SHM_BUF_POOL,	/* iface->bufs */
	P4T_SHM_BUF_HEAP,
	P4T_SHM_BUF_SMALL,	/* inside the tx, one malloc (p4t_shm_send.c) */
};

struct p4t_shm_rma;

/*
 * A frame of type, len bytes: head[0, head_len) then the body from
 * body_off; done of them are in the ring. A raw tx (moved from a lost
 * ring) rewrites one record with its own flags and total. iov_inline and
 * head come last: a small copy's tx ends where they begin, its bytes in
 * their place (P4T_SHM_BUF_SMALL).
 */
struct p4t_shm_tx {
	struct p4t_shm_ev ev;
	uint16_t type;
	uint8_t buf_kind;
	bool notify;			/* send_done(op_ctx) owed */
	bool pooled;			/* from iface->txs */
	bool raw;
	uint16_t raw_flags;
	uint64_t raw_total;
	uint32_t head_len;
	size_t len;
	size_t done;
	size_t skip;			/* frame bytes before the body (a copy
					 * of what was left) */
	void *op_ctx;
	const struct iovec *body;
	size_t body_cnt;
	uint64_t body_off;
	void *buf;
	struct iovec one;
	struct iovec *iov_heap;
	struct p4t_shm_rma *rma;	/* ring-mode data: the next chunk */
	struct iovec iov_inline[P4T_SHM_TX_IOV];
	uint8_t head[P4T_SHM_HEAD_MAX];
};

/* ---- links ------------------------------------------------------------ */

/*
 * The link's state machine (p4t_shm_conn_step):
 *
 *   RETRY --connected--> HELLO --ack--> UP
 *     |                   |  \--bye(collision)--> LOST --adopt--> UP
 *     |                   \--adopt (the peer's link is kept)--> UP
 *     \--any of: eof, timeout, error, close--> FAILED / CLOSED
 *   accepted links start UP.
 */
enum p4t_shm_conn_state {
	P4T_SHM_CONN_RETRY,	/* connect() said EAGAIN: trying again */
	P4T_SHM_CONN_HELLO,	/* ours: HELLO sent, waiting for HELLO_ACK */
	P4T_SHM_CONN_LOST,	/* ours lost a collision: waiting for the
				 * peer's link */
	P4T_SHM_CONN_UP,	/* both ends have the segment */
	P4T_SHM_CONN_FAILED,	/* conn_failed queued or running */
	P4T_SHM_CONN_CLOSED,	/* closed by the engine, or reported */
};

enum p4t_shm_conn_input {
	P4T_SHM_IN_CONNECTED,	/* connect() and HELLO went */
	P4T_SHM_IN_AGAIN,	/* connect() said EAGAIN */
	P4T_SHM_IN_ACK,
	P4T_SHM_IN_BYE_COLLISION,
	P4T_SHM_IN_ADOPT,	/* the peer's link replaces ours */
	P4T_SHM_IN_FAIL,	/* eof, error, timeout, refusal: status */
	P4T_SHM_IN_CLOSE,	/* conn_close */
};

enum p4t_shm_watch_kind {
	P4T_SHM_W_LISTEN,
	P4T_SHM_W_EVENTS,	/* iface->efd */
	P4T_SHM_W_WAKE,		/* iface->wake_fd */
	P4T_SHM_W_CONN,
	P4T_SHM_W_PEND,
};

struct p4t_shm_watch {
	enum p4t_shm_watch_kind kind;
	void *obj;
};

struct p4t_shm_iface;

/* One direction of a mapped ring, as this end sees it. */
struct p4t_shm_ring {
	struct p4t_shm_ring_ctl *ctl;
	uint8_t *data;
	uint64_t size, mask;
	uint64_t pos;			/* producer: tail; consumer: head */
	uint64_t other;			/* producer: the head last seen */
};

/* A frame being reassembled from records. */
struct p4t_shm_asm {
	uint8_t *buf;
	size_t total, got;
	uint16_t type;
	bool busy;
};

struct p4t_shm_conn {
	struct p4t_conn base;		/* first: what the engine holds */
	struct p4t_shm_iface *iface;
	struct p4u_hash_node hnode;	/* iface->by_addr while findable */
	struct p4u_list node;		/* iface->conns, then iface->dead */
	struct p4u_list backlog;	/* iface->backlog: txq not empty */
	struct p4t_shm_watch watch;
	struct sockaddr_storage addr;	/* the peer's address, cleared */
	socklen_t addrlen;
	enum p4t_shm_conn_state state;
	bool outgoing;			/* we made the segment */
	bool known;			/* the engine has it */
	bool busy;			/* an upcall on it runs */
	bool hashed;
	bool mapped_by_peer;		/* HELLO_ACK seen, or accepted */
	bool eof;			/* socket done: read the ring, fail */
	bool cma;			/* we may read the peer */
	bool peer_reads;		/* the peer may read us */
	int fd;				/* the link's socket */
	int memfd;			/* ours until HELLO went */
	int peer_wake;			/* the peer iface's eventfd */
	int bell;			/* our slot for it, -1: none */
	struct p4t_shm_inbox *peer_inbox;	/* the peer's doorbells */
	uint64_t *peer_bell;		/* our bell's word in them */
	uint64_t peer_bell_bit;
	struct p4u_list rescan;		/* iface->rescan: read it directly */
	unsigned hot;			/* calls it stays on rescan after it
					 * brought records */
	pid_t peer_pid;
	uint64_t peer_session;
	bool has_session;
	struct p4t_shm_seg *seg;
	size_t seg_size;
	struct p4t_shm_ring tx, rx;
	struct p4t_shm_asm rxa;
	struct p4u_timer timer;		/* retry, HELLO_ACK, LOST */
	uint64_t deadline_ns;		/* RETRY: give up */
	uint32_t backoff_ms;
	struct p4u_list txq;		/* struct p4t_shm_tx, in order */
	size_t txq_bytes;
	/* txs in the ring before the peer mapped it (HELLO_ACK): their
	 * send_done waits for it, as over TCP (p4t_shm_confirm) */
	struct p4u_list unconfirmed;
	struct p4u_list rmas;		/* ours waiting for the peer */
	struct p4u_list coops;		/* our streams of the peer's pulls
					 * read from both ends; the first
					 * runs (p4t_shm_coop.c) */
	uint64_t push_id;		/* ring-mode push landing here */
	int push_status;
	struct p4t_shm_ev fail_ev;
};

struct p4t_shm_pend {
	struct p4u_list node;		/* iface->pend */
	struct p4t_shm_iface *iface;
	struct p4t_shm_watch watch;
	struct p4u_timer timer;
	int fd;
	struct ucred cred;
};

/* ---- RMA -------------------------------------------------------------- */

enum p4t_shm_rma_kind {
	P4T_SHM_RMA_PULL,	/* ours: waiting for GRANT or data */
	P4T_SHM_RMA_PUSH,	/* ours: waiting for PUSH_DONE */
	P4T_SHM_RMA_STREAM,	/* the peer's ring-mode pull, served here */
	P4T_SHM_RMA_FILL,	/* the peer's push, read here by steps */
};

struct p4t_shm_mem;

struct p4t_shm_rma {
	struct p4t_shm_ev ev;		/* completion (PULL, PUSH) */
	struct p4u_list link;		/* PULL, PUSH: conn->rmas;
					 * STREAM, FILL: mem->streams */
	struct p4t_shm_tx tx;		/* ring-mode data: the next chunk */
	enum p4t_shm_rma_kind kind;
	struct p4t_shm_conn *conn;
	void *op_ctx;
	uint64_t id;			/* STREAM, FILL: the peer's id */
	size_t len, pos;		/* coop PULL: pos ends the ring's
					 * bytes, back starts the attached */
	size_t back;
	bool ring;			/* data through the ring */
	bool coop;			/* PULL, STREAM: read from both ends */
	bool in_txq;
	int status;
	struct p4t_shm_mem *mem;	/* STREAM: the source; FILL: the
					 * destination */
	uint64_t mem_off;
	struct p4w_cookie remote;
	uint64_t remote_off;
	struct p4t_shm_ctl hdr;		/* the chunk's header */
	struct p4u_list cma_node;	/* PULL, FILL being read:
					 * iface->cma_reads */
	struct p4u_list coop_node;	/* coop STREAM: conn->coops */
	struct iovec *granted;		/* PULL, FILL: the peer's pieces */
	uint64_t cma_gen;		/* p4t_shm_cma_run's last round */
	size_t ngranted;
	size_t iovcnt;
	struct iovec *iov;		/* PULL: destination; PUSH: source */
	struct iovec iov_inline[P4T_SHM_TX_IOV];
};

struct p4t_shm_mem {
	struct p4t_shm_conn *conn;	/* the only user; NULL once gone */
	unsigned access;
	size_t len;
	size_t iovcnt;
	struct iovec *iov;
	struct p4u_list streams;
};

/* ---- the iface ---------------------------------------------------------- */

struct p4t_shm_iface {
	struct p4t_iface_base base;	/* first: p4t_ops_of() */
	struct sockaddr_storage addr;	/* stamped: getname */
	struct sockaddr_storage key;	/* cleared: identity */
	socklen_t addrlen;
	char name[P4T_SHM_NAME_MAX];	/* abstract name, name[0] = 0 */
	socklen_t name_len;
	int listen_fd;
	int epfd;			/* the wait fd */
	int efd;			/* our deferred work */
	int wake_fd;			/* peers write it when we are armed */
	struct p4t_shm_watch w_listen, w_events, w_wake;
	uint64_t session;
	uint64_t auth_key;
	uint64_t salt;
	uint64_t peer_timeout_ms;
	uint64_t connect_retry_ms;
	bool cma;
	bool armed;			/* wait_arm ran since the last progress */
	bool signaled;			/* efd holds a count */
	bool in_progress;
	bool closing;
	unsigned tick;
	unsigned idle_tick;		/* idle calls: the clock every 16th */
	uint64_t idle_epoll_ns;		/* last epoll while the rings idled */
	size_t queue_limit;
	const struct p4t_upcalls *upcalls;
	void *upcall_ctx;
	struct p4u_timerq *timers;
	struct p4u_hash by_addr;
	struct p4u_list conns;		/* live links */
	struct p4u_list backlog;	/* links with a queue */
	struct p4u_list dead;
	/* doorbells (p4t_shm_bell.c) */
	int inbox_fd;
	struct p4t_shm_inbox *inbox;
	struct p4t_shm_conn **bell_conn;	/* by slot */
	uint64_t *bell_hot;		/* slots read directly: their bits
					 * are left set (a producer that
					 * sees its bit set writes nothing) */
	int bell_hi;			/* slots ever used */
	struct p4u_list rescan;		/* links read every call */
	size_t nrescan;
	unsigned bell_links;		/* more links: doorbells */
	unsigned bell_full;		/* every n-th call reads all */
	unsigned bell_hot_calls;	/* P4T_SHM_BELL_HOT (test hook) */
	unsigned full_tick;
	bool bell_ring;			/* ours are rung (test hook) */
	struct p4u_list pend;		/* struct p4t_shm_pend, oldest first */
	size_t npend;
	struct p4u_list dead_pend;	/* closed: freed at reap */
	struct p4u_list evq;
	struct p4u_list cma_reads;	/* pulls, fills still to read */
	uint64_t cma_gen;
	unsigned coop_quiet;		/* p4t_shm_cma_run calls since an
					 * owner's chunk or grant came */
	uint64_t cma_last_ns;		/* the end of the last
					 * p4t_shm_cma_run, or the first
					 * read queued after none */
	uint64_t cma_starved_ns;	/* P4T_SHM_CMA_STARVED_NS (test hook) */
	struct p4u_pool txs;
	struct p4u_pool bufs;
	struct p4u_pool rmas;
	struct p4u_pool mems;
	struct p4t_shm_stats stats;
};

static inline struct p4t_shm_iface *p4t_shm_iface_of(struct p4t_iface *iface)
{
	return (struct p4t_shm_iface *)iface;
}

static inline struct p4t_shm_conn *p4t_shm_conn_of(struct p4t_conn *conn)
{
	return container_of(conn, struct p4t_shm_conn, base);
}

static inline bool p4t_shm_conn_live(const struct p4t_shm_conn *conn)
{
	return conn->state < P4T_SHM_CONN_FAILED;
}

/* ---- p4t_shm.c ------------------------------------------------------------ */

void p4t_shm_signal(struct p4t_shm_iface *iface);
void p4t_shm_ev_post(struct p4t_shm_iface *iface, struct p4t_shm_ev *ev);
void p4t_shm_ev_post_conn(struct p4t_shm_conn *conn, struct p4t_shm_ev *ev);
int p4t_shm_events_run(struct p4t_shm_iface *iface, int budget);
int p4t_shm_watch_add(struct p4t_shm_iface *iface, int fd,
		      struct p4t_shm_watch *watch);
void p4t_shm_timer_arm_ms(struct p4t_shm_iface *iface,
			  struct p4u_timer *timer, uint64_t ms);

/* ---- p4t_shm_conn.c ------------------------------------------------------- */

int p4t_shm_memfd_make(const char *name, size_t size, int *fd_p,
		       void **map_p);
int p4t_shm_memfd_map(int fd, size_t size, void **map_p);
int p4t_shm_addr_parse(const void *addr, size_t len,
		       struct sockaddr_storage *ss, socklen_t *len_p);
int p4t_shm_addr_cmp(const struct sockaddr_storage *a, socklen_t alen,
		     const struct sockaddr_storage *b, socklen_t blen);
uint64_t p4t_shm_addr_hash(const struct sockaddr_storage *ss, socklen_t len);
int p4t_shm_name(const struct sockaddr_storage *ss, char *name,
		 socklen_t *len_p);
int p4t_shm_conn_open(struct p4t_shm_iface *iface,
		      const struct sockaddr_storage *ss, socklen_t len,
		      struct p4t_shm_conn **conn_p);
struct p4t_shm_conn *p4t_shm_conn_find(struct p4t_shm_iface *iface,
				       const struct sockaddr_storage *ss,
				       socklen_t len);
void p4t_shm_conn_step(struct p4t_shm_conn *conn,
		       enum p4t_shm_conn_input in, int status);
void p4t_shm_conn_sock_event(struct p4t_shm_conn *conn);
void p4t_shm_conn_free(struct p4t_shm_conn *conn);
void p4t_shm_conn_close(struct p4t_iface *iface, struct p4t_conn *conn);
bool p4t_shm_peer_ok(struct p4t_shm_iface *iface, int fd,
		     struct ucred *cred_p);
size_t p4t_shm_seg_bytes(void);
void p4t_shm_hs_fill(struct p4t_shm_iface *iface, uint8_t type,
		     struct p4t_shm_hs *hs);
int p4t_shm_hs_send(int fd, const struct p4t_shm_hs *hs, const int *fds,
		    size_t nfds);
int p4t_shm_hs_recv(int fd, struct p4t_shm_hs *hs, int *fds, size_t max,
		    size_t *nfds_p);
void p4t_shm_bye(int fd, struct p4t_shm_iface *iface, uint8_t why);
bool p4t_shm_wake_fd_ok(int fd);
void p4t_shm_seg_init(struct p4t_shm_seg *seg, size_t size);
void p4t_shm_fd_close(struct p4t_shm_iface *iface, int *fd);
struct p4t_shm_conn *p4t_shm_conn_create(struct p4t_shm_iface *iface,
					 const struct sockaddr_storage *ss,
					 socklen_t len);
void p4t_shm_conn_gone(struct p4t_shm_conn *conn, int status);

/* ---- p4t_shm_accept.c ----------------------------------------------------- */

void p4t_shm_accept(struct p4t_shm_iface *iface);
void p4t_shm_pend_event(struct p4t_shm_pend *pend);
void p4t_shm_pend_close(struct p4t_shm_pend *pend);

/* ---- p4t_shm_ring.c ------------------------------------------------------- */

void p4t_shm_ring_attach(struct p4t_shm_conn *conn, bool outgoing);
size_t p4t_shm_src_copy(void *dst, const uint8_t *head, size_t head_len,
			const struct iovec *body, size_t body_cnt,
			uint64_t body_off, uint64_t off, size_t len);
bool p4t_shm_ring_put(struct p4t_shm_conn *conn, struct p4t_shm_tx *tx);
bool p4t_shm_ring_framev(struct p4t_shm_conn *conn, uint16_t type,
			 const void *a, size_t alen, const struct iovec *iov,
			 size_t iovcnt, size_t len);
bool p4t_shm_ring_frame(struct p4t_shm_conn *conn, uint16_t type,
			const void *a, size_t alen, const void *b, size_t blen);
void p4t_shm_ring_wake_peer(struct p4t_shm_conn *conn);
int p4t_shm_ring_rx(struct p4t_shm_conn *conn, int budget);
bool p4t_shm_ring_pending(const struct p4t_shm_conn *conn);
bool p4t_shm_ring_unread(const struct p4t_shm_conn *conn);
int p4t_shm_ring_arm(struct p4t_shm_conn *conn);
void p4t_shm_ring_disarm(struct p4t_shm_conn *conn);
int p4t_shm_ring_take_lost(struct p4t_shm_conn *conn,
			   const struct p4t_shm_ring *old);

/* ---- p4t_shm_send.c ------------------------------------------------------- */

void p4t_shm_tx_free(struct p4t_shm_iface *iface, struct p4t_shm_tx *tx);
struct p4t_shm_tx *p4t_shm_tx_copy(struct p4t_shm_conn *conn, uint16_t type,
				   const void *a, size_t alen, const void *b,
				   size_t blen);
void p4t_shm_txq_add(struct p4t_shm_conn *conn, struct p4t_shm_tx *tx,
		     bool head);
int p4t_shm_txq_drain(struct p4t_shm_conn *conn);
void p4t_shm_txq_fail(struct p4t_shm_conn *conn);
void p4t_shm_confirm(struct p4t_shm_conn *conn);
int p4t_shm_ctl_send(struct p4t_shm_conn *conn, uint16_t type,
		     const struct p4t_shm_ctl *ctl, const void *more,
		     size_t more_len);
int p4t_shm_send(struct p4t_iface *iface, struct p4t_conn *conn,
		 const void *hdr, size_t hdr_len, const struct iovec *iov,
		 size_t iovcnt, void *op_ctx, unsigned flags);

/* ---- p4t_shm_mem.c -------------------------------------------------------- */

int p4t_shm_mem_expose(struct p4t_iface *iface, struct p4t_conn *conn,
		       const struct iovec *iov, size_t iovcnt, unsigned access,
		       struct p4w_cookie *cookie, struct p4t_mem **mem_p);
void p4t_shm_mem_unexpose(struct p4t_iface *iface, struct p4t_mem *mem);
void p4t_shm_mem_forget_conn(struct p4t_shm_conn *conn);
void p4t_shm_mem_free_all(struct p4t_shm_iface *iface);
int p4t_shm_mem_lookup(struct p4t_shm_conn *conn, uint64_t key, uint64_t off,
		       uint64_t len, unsigned access,
		       struct p4t_shm_mem **mem_p);

/* ---- p4t_shm_rma.c -------------------------------------------------------- */

int p4t_shm_pull(struct p4t_iface *iface, struct p4t_conn *conn,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 void *op_ctx);
int p4t_shm_push(struct p4t_iface *iface, struct p4t_conn *conn,
		 const struct iovec *local, size_t iovcnt, size_t len,
		 const struct p4w_cookie *remote, uint64_t remote_off,
		 void *op_ctx);
int p4t_shm_rma_frame(struct p4t_shm_conn *conn, uint16_t type,
		      const uint8_t *body, size_t len);
void p4t_shm_rma_chunk_written(struct p4t_shm_tx *tx);
void p4t_shm_stream_cut(struct p4t_shm_rma *rma, int status);
void p4t_shm_stream_drop(struct p4t_shm_rma *rma);
void p4t_shm_rma_stream(struct p4t_shm_rma *rma, bool drain);
struct p4t_shm_rma *p4t_shm_rma_alloc(struct p4t_shm_conn *conn,
				      enum p4t_shm_rma_kind kind,
				      const struct iovec *iov, size_t iovcnt);
uint64_t p4t_shm_rma_id(struct p4t_shm_rma *rma);
void p4t_shm_rma_complete(struct p4t_shm_rma *rma, int status);
void p4t_shm_iov_put(const struct iovec *iov, size_t cnt, uint64_t off,
		     const uint8_t *src, size_t len);
int p4t_shm_cma_read(struct p4t_shm_conn *conn, const struct iovec *local,
		     size_t lcnt, uint64_t loff, const struct iovec *remote,
		     size_t rcnt, uint64_t roff, size_t len);
bool p4t_shm_cma_refused(int err);
int p4t_shm_cma_fail_status(int ret);
void p4t_shm_cma_off(struct p4t_shm_conn *conn);
void p4t_shm_cma_forget(struct p4t_shm_rma *rma);
void p4t_shm_rma_fail_conn(struct p4t_shm_conn *conn, int status);
void p4t_shm_cma_queue(struct p4t_shm_rma *rma);
int p4t_shm_cma_run(struct p4t_shm_iface *iface);
void p4t_shm_rma_free(struct p4t_shm_iface *iface, struct p4t_shm_rma *rma);
bool p4t_shm_cma_probe(struct p4t_shm_conn *conn, uint64_t addr,
		       uint64_t want);

/* ---- p4t_shm_coop.c ------------------------------------------------------- */

struct p4t_shm_rma *p4t_shm_coop_offer(struct p4t_shm_conn *conn,
				       const struct p4t_shm_ctl *req,
				       struct p4t_shm_mem *mem);
void p4t_shm_coop_next(struct p4t_shm_conn *conn, bool drain);
int p4t_shm_coop_stop(struct p4t_shm_conn *conn, const struct p4t_shm_ctl *ctl);
void p4t_shm_coop_fail_conn(struct p4t_shm_conn *conn);
void p4t_shm_coop_granted(struct p4t_shm_rma *rma);
size_t p4t_shm_coop_step(struct p4t_shm_rma *rma, size_t max);
int p4t_shm_coop_data(struct p4t_shm_conn *conn, struct p4t_shm_rma *rma,
		      uint16_t type, const struct p4t_shm_ctl *ctl,
		      const uint8_t *data, size_t n);

/* ---- p4t_shm_bell.c ------------------------------------------------------- */

int p4t_shm_inbox_open(struct p4t_shm_iface *iface);
void p4t_shm_inbox_close(struct p4t_shm_iface *iface);
void p4t_shm_bell_attach(struct p4t_shm_conn *conn);
void p4t_shm_bell_detach(struct p4t_shm_conn *conn);
int p4t_shm_bell_map(int fd, uint32_t slot, struct p4t_shm_inbox **inbox_p);
void p4t_shm_bell_peer(struct p4t_shm_conn *conn, struct p4t_shm_inbox *inbox,
		       uint32_t slot);
void p4t_shm_bell_unmap(struct p4t_shm_conn *conn);
void p4t_shm_bell_rescan(struct p4t_shm_conn *conn);
bool p4t_shm_bells_due(struct p4t_shm_iface *iface);
int p4t_shm_bells_run(struct p4t_shm_iface *iface, int budget, int done,
		      bool *settling);

/* After the fence that follows a published tail: ring the peer's bell
 * (a load only, while it is still set: no write to a line the owner
 * reads, and none shared by every producer when the owner polls its
 * rings directly). */
static inline void p4t_shm_bell_ring(struct p4t_shm_conn *conn)
{
	if (conn->peer_bell &&
	    !(__atomic_load_n(conn->peer_bell, __ATOMIC_RELAXED) &
	      conn->peer_bell_bit))
		__atomic_fetch_or(conn->peer_bell, conn->peer_bell_bit,
				  __ATOMIC_RELAXED);
}

#endif /* P4T_SHM_PRIV_H */
