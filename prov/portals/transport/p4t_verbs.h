/*
 * p4t_verbs.h - the RDMA verbs transport (rdma-core): what it guarantees
 * beyond p4t.h, device discovery for fi_getinfo, and the statistics
 * FI_PORTALS_STATS and the tests read. Reached like any transport through
 * p4t_verbs_ops; internals in p4t_verbs_priv.h. Built only when configure
 * found libibverbs (HAVE_VERBS).
 *
 * Device and port: the iface serves the active port whose RoCE v2 GID
 * holds cfg.addr's IPv4 address (::ffff:a.b.c.d), else the first active
 * port (RoCE: its first RoCE v2 GID; InfiniBand: LID routing).
 *
 * Links: every link rides on a link of an inner TCP iface listening at
 * cfg.addr (addresses, connection set-up, simultaneous connects, auth_key,
 * peer restarts and dead-peer detection are the TCP transport's, see
 * p4t_tcp.h). Once the TCP link is up both sides create an RC QP and
 * exchange, over TCP, BOOT {GID, LID, QPN, PSN, MTU} as messages of
 * their own (P4T_SEND_XPORT, received through xport_recv: the engine's
 * messages are never parsed here); on the peer's BOOT a
 * side moves its QP to RTR and RTS and answers READY; on READY (the peer's
 * QP can receive) the link is up. No engine message is sent over TCP:
 * what the engine sends before the link is up is queued (copied) and
 * posted in order once it is, so nothing sent earlier is overtaken.
 * Messages to the iface's own address use the TCP transport's self queue.
 *
 * Messages: one RC SEND each, at most P4T_VERBS_BUF_SIZE bytes (attr.max_msg;
 * larger ones -FI_EMSGSIZE). Up to the QP's inline size they are posted
 * inline; larger ones are copied into a registered send buffer. Every send
 * returns P4T_DONE. Receives land in a shared receive queue of
 * P4T_VERBS_RECV_BUFS buffers; used buffers are reposted in batches, and
 * all at once when the SRQ limit event says it ran low. RNR retry is
 * infinite (7): a peer that outruns the SRQ is slowed, never dropped.
 *
 * RMA: pull = RDMA READ, push = RDMA WRITE, straight between the user's
 * buffers: exposed memory is registered for remote access and its cookie
 * carries {virtual address, rkey, length}; the local side of a pull or
 * push is registered too. Memory inside an application MR (p4t_ops.mr_reg,
 * at fi_mr_reg; p4t_verbs_mr.c) uses that registration, made once with
 * the device. Any other buffer (mr_mode 0 consumers register nothing) is
 * registered on demand for the time of the transfer or exposure, with no
 * cache: a registration never outlives the operation, so memory the
 * application frees or unmaps is never reached through a stale one.
 * Exposures of more than one iovec, and transfers with more iovecs than
 * the device takes, go through a contiguous bounce buffer.
 *
 * Failures: a work completion in error (retry exceeded, remote access
 * error, ...) or a QP fatal event fails the link: the QP goes to the error
 * state, every outstanding pull or push completes with rma_done(error)
 * (-FI_EACCES for a remote access error, -FI_ETIMEDOUT for retries
 * exceeded, -FI_ECONNABORTED when flushed), the TCP link is closed (so the
 * peer fails its end too) and conn_failed follows. A TCP link failure
 * fails the QP the same way. All reported from progress.
 *
 * Progress and waiting: the wait fd is an epoll fd over the TCP iface's
 * wait fd, the CQ's completion channel, the device's async event fd and an
 * eventfd for work queued inside calls.
 */
#ifndef P4T_VERBS_H
#define P4T_VERBS_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "p4t.h"

#define P4T_VERBS_BUF_SIZE	((size_t)40 << 10)	/* largest message */
#define P4T_VERBS_RECV_BUFS	256	/* SRQ depth */
#define P4T_VERBS_SEND_BUFS	128	/* registered send buffers */
#define P4T_VERBS_QUEUE_LIMIT	((size_t)16 << 20)	/* requests: EAGAIN */

/* An active port fi_getinfo can offer as a domain. */
struct p4t_verbs_dev {
	char name[64];			/* device name, e.g. rxe0 */
	uint8_t port;
	/* the IPv4 address of its RoCE v2 GID (port 0), or AF_UNSPEC */
	struct sockaddr_storage addr;
};

/*
 * The usable verbs ports (active, with a GID to route by), in device
 * order. *devs_p is NULL and *count_p 0 when there is none (no rdma-core
 * device, no permission). Free with free().
 */
int p4t_verbs_devices(struct p4t_verbs_dev **devs_p, size_t *count_p);

/* Counters of one iface since it was opened. */
struct p4t_verbs_stats {
	uint64_t msgs_sent;		/* posted as SEND */
	uint64_t inline_sent;		/* ... of them inline */
	uint64_t bytes_sent;
	uint64_t msgs_recv;
	uint64_t bytes_recv;
	uint64_t queued;		/* sends queued (link not up, SQ full) */
	uint64_t eagain;
	uint64_t reads;			/* RDMA READs posted (pulls) */
	uint64_t read_bytes;
	uint64_t writes;		/* RDMA WRITEs posted (pushes) */
	uint64_t write_bytes;
	uint64_t bounced;		/* transfers through a bounce buffer */
	uint64_t regs;			/* on-demand ibv_reg_mr calls */
	uint64_t app_regs;		/* application MRs registered here */
	uint64_t app_mr_hits;		/* buffers found inside one of them */
	uint64_t srq_limit_events;
	uint64_t srq_reposts;		/* ibv_post_srq_recv calls */
	uint64_t qps_up;		/* links that reached READY */
	uint64_t wc_errors;		/* completions in error (not flush) */
	uint64_t link_failures;
	uint64_t links;			/* live links now */
};

/* Fill stats for an iface of p4t_verbs_ops: 0, or -FI_EINVAL. */
int p4t_verbs_stats(struct p4t_iface *iface, struct p4t_verbs_stats *stats);

#endif /* P4T_VERBS_H */
