/*
 * p4t_loop_priv.h - the loop transport's internal objects, shared by its
 * files:
 *
 *   p4t_loop.c        the registry (address -> iface), links (a pair of
 *                     struct p4t_loop_conn, one per end), the inbound
 *                     message queue and event queue of each iface, send,
 *                     progress, the ops table
 *   p4t_loop_rma.c    the exposure table, pull and push
 *   p4t_loop_hooks.c  the test hooks of p4t_loop.h
 *
 * What the transport promises is in p4t_loop.h; this header is not for
 * anyone else.
 *
 * Locking: one process-wide mutex (p4t_loop_lock, in p4t_loop.c, taken
 * with p4t_loop_lock_acquire / _release) guards the registry and every
 * iface's lists, conns, exposures and counters, because a send, pull or
 * push reaches into the peer iface, which another thread may be
 * progressing. It is never held across an upcall (the engine may call
 * back in, and its domain lock comes before ours). What makes dropping it
 * safe: a conn is freed only by a call on its own iface (others only mark
 * it failed), and an item popped by progress is on no list during its
 * upcall, so nobody else can reach it. Functions named *_locked need the
 * lock.
 */
#ifndef P4T_LOOP_PRIV_H
#define P4T_LOOP_PRIV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "p4t.h"
#include "p4t_loop.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_iov.h"
#include "p4u_list.h"
#include "p4u_pool.h"

#define P4T_LOOP_MAX_INLINE	256
#define P4T_LOOP_PORT_FIRST	49152u	/* counter-assigned ports: 49152.. */
#define P4T_LOOP_PORT_LAST	65535u
#define P4T_LOOP_MAX_IOV	1024	/* per pull / push / exposure */
#define P4T_LOOP_MEM_CHUNK	64
#define P4T_LOOP_MEM_MAX	(1u << 24)

enum p4t_loop_ev_kind {
	P4T_LOOP_EV_RMA,		/* a struct p4t_loop_op to report */
	P4T_LOOP_EV_CONN_FAILED,	/* a struct p4t_loop_conn to report */
};

struct p4t_loop_ev {
	struct p4u_list node;		/* on iface->evq */
	enum p4t_loop_ev_kind kind;
};

enum p4t_loop_conn_state {
	P4T_LOOP_CONN_ACTIVE,	/* found by address; may be paired */
	P4T_LOOP_CONN_FAILED,	/* unpaired; fail_ev queued or being reported */
	P4T_LOOP_CONN_CLOSED,	/* the engine closed it; freed after its upcall */
};

struct p4t_loop_iface;

struct p4t_loop_conn {
	struct p4t_conn base;		/* first: what the engine holds */
	struct p4t_loop_iface *iface;	/* owner: the only one to free it */
	struct sockaddr_in addr;	/* the peer's listening address */
	struct p4t_loop_conn *peer;	/* the link's other end, or NULL */
	struct p4u_list node;		/* on iface->conns (every state) */
	struct p4u_list ops;		/* posted pulls / pushes not yet aborted */
	struct p4t_loop_ev fail_ev;
	enum p4t_loop_conn_state state;
	int fail_status;
	size_t inq_bytes;		/* queued on iface->msgq for this end */
	bool known;			/* the engine has it (conn_get / conn_new) */
	bool busy;			/* an upcall on it is running */
};

struct p4t_loop_msg {
	struct p4u_list node;		/* on the receiving iface's msgq */
	struct p4t_loop_conn *conn;	/* receiving end, ACTIVE while queued */
	size_t len;
	uint8_t data[];
};

enum p4t_loop_op_kind {
	P4T_LOOP_OP_PULL,
	P4T_LOOP_OP_PUSH,
};

struct p4t_loop_op {
	struct p4t_loop_ev ev;		/* on the poster's evq until reported */
	struct p4u_list conn_node;	/* on conn->ops while conn is set */
	struct p4t_loop_conn *conn;	/* NULL once detached (aborted) */
	enum p4t_loop_op_kind kind;
	int status;
	void *op_ctx;
	struct p4w_cookie remote;	/* pull: copied at post time */
	uint64_t remote_off;
	size_t len;
	size_t iovcnt;
	struct iovec iov[];		/* pull: the local destination */
};

struct p4t_loop_mem {
	struct p4t_loop_conn *conn;	/* the only user; NULL once it is gone */
	unsigned access;
	size_t len;
	size_t iovcnt;
	struct iovec *iov;
};

struct p4t_loop_iface {
	struct p4t_iface_base base;	/* first: p4t_ops_of() */
	struct p4u_list node;		/* on p4t_loop_registry */
	struct sockaddr_in addr;
	uint64_t auth_key;
	uint64_t key_salt;		/* cookie key = pool handle ^ salt */
	const struct p4t_upcalls *upcalls;
	void *upcall_ctx;
	struct p4u_list conns;
	struct p4u_list msgq;		/* inbound messages, arrival order */
	struct p4u_list evq;		/* completions and failures */
	struct p4u_pool mems;		/* struct p4t_loop_mem */
	size_t queue_limit;
	int efd;
	bool signaled;			/* efd holds a count */
	bool held;
	struct p4t_loop_stats stats;
};

static inline struct p4t_loop_iface *p4t_loop_iface_of(struct p4t_iface *iface)
{
	return (struct p4t_loop_iface *)iface;
}

static inline struct p4t_loop_conn *p4t_loop_conn_of(struct p4t_conn *conn)
{
	return container_of(conn, struct p4t_loop_conn, base);
}

/* ---- p4t_loop.c ---------------------------------------------------------- */

void p4t_loop_lock_acquire(void);
void p4t_loop_lock_release(void);
void p4t_loop_iface_signal_locked(struct p4t_loop_iface *iface);
void p4t_loop_iov_copy(const struct iovec *dst, uint64_t dst_off,
		       const struct iovec *src, uint64_t src_off, size_t len);
int p4t_loop_link_connect_locked(struct p4t_loop_conn *conn);
int p4t_loop_addr_parse(const void *addr, size_t addrlen,
			struct sockaddr_in *sin_p);
struct p4t_loop_conn *
p4t_loop_conn_find_locked(struct p4t_loop_iface *iface,
			  const struct sockaddr_in *addr);
struct p4t_loop_conn *
p4t_loop_conn_create_locked(struct p4t_loop_iface *iface,
			    const struct sockaddr_in *addr, bool known);
int p4t_loop_link_pair_locked(struct p4t_loop_conn *conn, bool create);
void p4t_loop_link_fail_locked(struct p4t_loop_conn *conn, int status,
			       int peer_status);
struct p4t_loop_msg *p4t_loop_msg_queue_locked(struct p4t_loop_conn *dst,
					       size_t len, int *ret_p);

/* ---- p4t_loop_rma.c ------------------------------------------------------ */

int p4t_loop_mem_expose(struct p4t_iface *iface, struct p4t_conn *conn,
			const struct iovec *iov, size_t iovcnt,
			unsigned access, struct p4w_cookie *cookie,
			struct p4t_mem **mem_p);
void p4t_loop_mem_unexpose(struct p4t_iface *iface, struct p4t_mem *mem);
int p4t_loop_pull(struct p4t_iface *iface, struct p4t_conn *conn,
		  const struct p4w_cookie *remote, uint64_t remote_off,
		  const struct iovec *local, size_t iovcnt, size_t len,
		  void *op_ctx);
int p4t_loop_push(struct p4t_iface *iface, struct p4t_conn *conn,
		  const struct iovec *local, size_t iovcnt, size_t len,
		  const struct p4w_cookie *remote, uint64_t remote_off,
		  void *op_ctx);
int p4t_loop_pull_exec_locked(struct p4t_loop_op *op);
void p4t_loop_conn_forget_mems_locked(struct p4t_loop_conn *conn);

#endif /* P4T_LOOP_PRIV_H */
