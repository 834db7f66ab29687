/*
 * p4t_verbs_priv.h - internals of the verbs transport shared by its files:
 * p4t_verbs_dev.c (devices, ports, GIDs, opening the port an iface
 * serves), p4t_verbs.c (iface, links, bootstrap, failure, progress),
 * p4t_verbs_data.c (sends, receives, RMA, registration, completions) and
 * p4t_verbs_mr.c (application memory registered ahead, p4t_ops.mr_reg).
 * Behaviour is described in p4t_verbs.h.
 */
#ifndef P4T_VERBS_PRIV_H
#define P4T_VERBS_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "p4t.h"
#include "p4t_verbs.h"
#include "p4u_list.h"

#define P4T_VERBS_SRQ_LIMIT	64	/* limit event below this many */
#define P4T_VERBS_REPOST_BATCH	32	/* reposted together */
#define P4T_VERBS_QP_WR		128	/* send queue depth per QP */
#define P4T_VERBS_CQ_SIZE	4096
#define P4T_VERBS_WRS		(P4T_VERBS_CQ_SIZE - P4T_VERBS_RECV_BUFS - 64)
#define P4T_VERBS_MAX_SGE	16
#define P4T_VERBS_INLINE	256
#define P4T_VERBS_RD_ATOM	16	/* outstanding RDMA READs per QP */
#define P4T_VERBS_RECV_TAG	(1ull << 63)	/* wr_id of a receive */

/* Bootstrap records ride the TCP link as the transport's own messages
 * (P4T_SEND_XPORT, xport_recv): see p4t_verbs.c. */
#define P4T_VERBS_BOOT_MAGIC	0x70347662u
#define P4T_VERBS_BOOT_VERSION	1

enum p4t_verbs_boot_kind {
	P4T_VERBS_BOOT = 1,	/* here is my QP */
	P4T_VERBS_READY = 2,	/* my QP is in RTR/RTS: send */
};

/* Wire form, little-endian. */
struct p4t_verbs_boot {
	uint32_t magic;
	uint16_t version;
	uint8_t kind;
	uint8_t link_layer;	/* IBV_LINK_LAYER_* */
	uint32_t qpn;
	uint32_t psn;
	uint32_t mtu;		/* enum ibv_mtu */
	uint16_t lid;
	uint16_t reserved;
	uint8_t gid[16];
};

enum p4t_verbs_conn_state {
	P4T_VERBS_CONN_BOOT,	/* QP in INIT, waiting for the peer's BOOT */
	P4T_VERBS_CONN_READY_WAIT,	/* RTS, waiting for the peer's READY */
	P4T_VERBS_CONN_UP,
	P4T_VERBS_CONN_FAILING,	/* QP in error: waiting for its flushes */
	P4T_VERBS_CONN_SELF,	/* to our own address: all on TCP */
};

struct p4t_verbs_iface;

/*
 * Application memory (p4t_ops.mr_reg): one per registration, on the
 * process-wide list until mr_dereg, with one struct p4t_verbs_reg per
 * open iface (each iface has its own protection domain). All of it is
 * guarded by one process-wide mutex (p4t_verbs_mr.c): mr_reg comes from
 * any domain's thread.
 */
struct p4t_verbs_amr {
	struct p4u_list link;		/* the registry's, until mr_dereg */
	struct p4u_list regs;		/* struct p4t_verbs_reg by amr_link */
	uintptr_t base;
	size_t len;
	int flags;			/* IBV_ACCESS_* */
	bool dead;			/* mr_dereg called: freed once unused */
};

/* An application registration as one iface's PD has it. */
struct p4t_verbs_reg {
	struct p4u_list amr_link;
	struct p4u_list iface_link;	/* iface->regs */
	struct p4t_verbs_amr *amr;
	struct p4t_verbs_iface *iface;
	struct ibv_mr *mr;
	uintptr_t base;			/* copies of amr's, for the lookup */
	size_t len;
	int flags;
	unsigned refs;			/* transfers and exposures using it */
};

struct p4t_verbs_conn {
	struct p4t_conn base;		/* first: the engine's view */
	struct p4t_verbs_iface *iface;
	struct p4t_conn *tcp;		/* the inner link, NULL once gone */
	struct ibv_qp *qp;
	uint32_t psn;
	enum p4t_verbs_conn_state state;
	bool closed;			/* by the engine: no conn_failed */
	bool failed_reported;
	int fail_status;
	unsigned sq_posted;		/* WRs on the QP not completed */
	struct p4u_list pending;	/* struct p4t_verbs_pend, in order */
	struct p4u_list link;		/* iface->conns or iface->failing */
};

enum p4t_verbs_pend_kind {
	P4T_VERBS_PEND_SEND,
	P4T_VERBS_PEND_PULL,
	P4T_VERBS_PEND_PUSH,
};

/* Work waiting for a QP (not up yet, or its send queue is full). */
struct p4t_verbs_pend {
	struct p4u_list link;
	enum p4t_verbs_pend_kind kind;
	void *op_ctx;
	size_t len;
	/* RMA */
	struct p4w_cookie remote;
	uint64_t remote_off;
	size_t iovcnt;
	struct iovec *iov;		/* points into data */
	uint8_t data[];			/* SEND: the message; RMA: iovecs */
};

enum p4t_verbs_wr_kind {
	P4T_VERBS_WR_FREE,
	P4T_VERBS_WR_SEND,
	P4T_VERBS_WR_READ,
	P4T_VERBS_WR_WRITE,
	P4T_VERBS_WR_PART,	/* a READ / WRITE chunk before the last */
};

/* One posted send-queue work request; wr_id = its index + 1. */
struct p4t_verbs_wr {
	enum p4t_verbs_wr_kind kind;
	struct p4t_verbs_conn *conn;
	void *op_ctx;
	int sendbuf;			/* index, or -1 */
	size_t nmr;
	struct ibv_mr *mr[P4T_VERBS_MAX_SGE];
	/* application registrations the pieces used (references) */
	size_t nreg;
	struct p4t_verbs_reg *reg[P4T_VERBS_MAX_SGE];
	/* bounce for a READ whose local iovecs the device cannot take */
	void *bounce;
	size_t len;
	size_t iovcnt;
	struct iovec iov[P4T_VERBS_MAX_SGE * 4];
	uint32_t next_free;
};

struct p4t_verbs_mem {
	struct p4u_list link;		/* iface->mems */
	struct p4t_mem *tcp_mem;	/* exposed through TCP (self) */
	struct ibv_mr *mr;		/* its own, or reg's */
	struct p4t_verbs_reg *reg;	/* inside an application MR */
	void *bounce;			/* several iovecs: contiguous copy */
	unsigned access;
	size_t iovcnt;
	struct iovec *iov;		/* for the copy back (WRITE) */
};

struct p4t_verbs_iface {
	struct p4t_iface_base base;
	struct p4t_iface *tcp;
	const struct p4t_upcalls *upcalls;
	void *upcall_ctx;
	struct sockaddr_storage self_addr;
	size_t self_addrlen;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	uint8_t port;
	uint8_t link_layer;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid;
	enum ibv_mtu mtu;
	uint32_t max_inline;
	uint32_t max_sge;
	uint32_t rd_atom;
	size_t max_rma;

	uint8_t *recv_mem;		/* RECV_BUFS x BUF_SIZE */
	struct ibv_mr *recv_mr;
	uint32_t *recv_free;		/* indexes not posted */
	size_t recv_nfree;
	uint8_t *send_mem;		/* SEND_BUFS x BUF_SIZE */
	struct ibv_mr *send_mr;
	int send_free[P4T_VERBS_SEND_BUFS];
	size_t send_nfree;

	struct p4t_verbs_wr *wrs;	/* P4T_VERBS_WRS */
	uint32_t wr_free;		/* head index + 1, 0 = none */
	size_t wrs_posted;

	struct p4u_list conns;		/* live links */
	struct p4u_list failing;	/* waiting for flushes / report */
	struct p4t_verbs_conn *last_hit;	/* qpn lookup cache */
	struct p4u_list mems;
	size_t pending_bytes;
	struct p4u_list regs;		/* struct p4t_verbs_reg (registry lock) */
	struct p4u_list reg_link;	/* in the registry's iface list */

	int epfd;
	int kickfd;			/* eventfd: work for progress */
	bool closing;
	struct p4t_verbs_stats stats;
};

static inline struct p4t_verbs_iface *p4t_verbs_iface_of(struct p4t_iface *i)
{
	return (struct p4t_verbs_iface *)i;
}

/* p4t_verbs_dev.c */
int p4t_verbs_open_port(struct p4t_verbs_iface *iface,
			const struct p4t_iface_config *cfg);

/* p4t_verbs.c */
void p4t_verbs_conn_fail(struct p4t_verbs_conn *conn, int status);
void p4t_verbs_kick(struct p4t_verbs_iface *iface);
struct p4t_verbs_conn *p4t_verbs_conn_by_qpn(struct p4t_verbs_iface *iface,
					     uint32_t qpn);

/* p4t_verbs_data.c */
int p4t_verbs_data_init(struct p4t_verbs_iface *iface);
void p4t_verbs_data_fini(struct p4t_verbs_iface *iface);
int p4t_verbs_recv_repost(struct p4t_verbs_iface *iface, bool all);
int p4t_verbs_cq_poll(struct p4t_verbs_iface *iface, int budget);
void p4t_verbs_pend_flush(struct p4t_verbs_conn *conn);
void p4t_verbs_pend_fail(struct p4t_verbs_conn *conn, int status);
int p4t_verbs_wc_status(enum ibv_wc_status status);

int p4t_verbs_send(struct p4t_iface *iface, struct p4t_conn *conn,
		   const void *hdr, size_t hdr_len, const struct iovec *iov,
		   size_t iovcnt, void *op_ctx, unsigned flags);
int p4t_verbs_mem_expose(struct p4t_iface *iface, struct p4t_conn *conn,
			 const struct iovec *iov, size_t iovcnt,
			 unsigned access, struct p4w_cookie *cookie,
			 struct p4t_mem **mem_p);
void p4t_verbs_mem_unexpose(struct p4t_iface *iface, struct p4t_mem *mem);
void p4t_verbs_mem_release(struct p4t_verbs_iface *iface,
			   struct p4t_verbs_mem *mem);
int p4t_verbs_pull(struct p4t_iface *iface, struct p4t_conn *conn,
		   const struct p4w_cookie *remote, uint64_t remote_off,
		   const struct iovec *local, size_t iovcnt, size_t len,
		   void *op_ctx);
int p4t_verbs_push(struct p4t_iface *iface, struct p4t_conn *conn,
		   const struct iovec *local, size_t iovcnt, size_t len,
		   const struct p4w_cookie *remote, uint64_t remote_off,
		   void *op_ctx);

/* p4t_verbs_mr.c */
int p4t_verbs_mr_reg(const void *buf, size_t len, unsigned access,
		     struct p4t_mr **mr_p);
void p4t_verbs_mr_dereg(struct p4t_mr *mr);
/* At open (PD ready): register what the application registered so far. */
void p4t_verbs_mr_iface_add(struct p4t_verbs_iface *iface);
/* At close (nothing in flight): this iface's registrations go. */
void p4t_verbs_mr_iface_remove(struct p4t_verbs_iface *iface);
/*
 * The registration of iface covering [addr, addr + len) with every bit
 * of flags, referenced (drop with p4t_verbs_mr_put), or NULL.
 */
struct p4t_verbs_reg *p4t_verbs_mr_find(struct p4t_verbs_iface *iface,
					const void *addr, size_t len,
					int flags);
void p4t_verbs_mr_put(struct p4t_verbs_reg *reg);

#endif /* P4T_VERBS_PRIV_H */
