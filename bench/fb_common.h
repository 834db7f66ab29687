/*
 * fb_common.h - what the side-by-side benchmark programs (bench/fb_*.c)
 * share: command line, out-of-band (OOB) TCP socket for address exchange,
 * fabric/domain/endpoint set-up through the public libfabric API only,
 * memory registration for any mr_mode, busy-polling CQ progress, posting
 * with -FI_EAGAIN retry, timing with CLOCK_MONOTONIC, data patterns and
 * result lines.
 *
 * Not here: the measurements themselves (one program each) and anything
 * provider specific: the same binary runs on any provider named with -p.
 * What is declared here is defined in fb_common.c (command line, OOB,
 * results, timing) and fb_fabric.c (everything that calls libfabric).
 *
 * Conventions (the fabtests ones): the server is started without a
 * destination, the client with the server's address as last argument;
 * both sides take the same options, so both compute the same sizes and
 * iteration counts. The client prints results, one line each:
 *
 *   RESULT <test> <param> <value>
 *   NA <test> <param> <reason>
 *
 * which bench/run.sh collects. A failed check prints
 * "<prog>[<role>]: FAIL: ..." and exits 1; an alarm (-T) bounds a run.
 */
#ifndef FB_COMMON_H
#define FB_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

#define FB_KIB			1024UL
#define FB_MIB			(1024UL * 1024UL)
#define FB_DEFAULT_OOB_PORT	47610
#define FB_DEFAULT_TIMEOUT	120	/* seconds, whole run (-T) */
#define FB_EAGAIN_STUCK_SEC	2.0	/* a post refused this long: a limit */

/* Control tags. Tags stay below 2^60: some providers (net) keep the top
 * bits for themselves. */
#define FB_TAG_ACK		0x0AC0000000000000ULL
#define FB_TAG_MARK		0x0AC1000000000000ULL
#define FB_TAG_SYNC		0x0AC2000000000000ULL

/* Flags carried in an ack's payload. */
#define FB_ACK_MORE		1ULL
#define FB_ACK_STOP		2ULL

struct fb_opts {
	const char *prov;	/* -p: provider name, e.g. "tcp;ofi_rxm" */
	const char *src_addr;	/* -s: local address (default 127.0.0.1) */
	const char *dst_addr;	/* last argument: the server (client mode) */
	int src_port;		/* -B: server's OOB port, 0 = any (printed) */
	int dst_port;		/* -P: client's OOB destination port */
	size_t size;		/* -S: one size instead of the program's list */
	int iters;		/* -I: iterations, 0 = program default */
	int window;		/* -W: window, 0 = program default */
	double cap;		/* -t: seconds per measurement, 0 = default */
	int timeout;		/* -T: seconds for the whole run */
	bool quick;		/* -Q: fewer iterations (smoke check) */
	bool inject;		/* -j: fi_tinject where the size allows */
	bool no_inject;		/* -J: never fi_tinject */
	const char *mode;	/* -m: program specific mode */
	const char *list;	/* -l: program specific list */
};

enum fb_op_kind {
	FB_OP_SEND = 1,
	FB_OP_RECV,
	FB_OP_RMA,
	FB_OP_ATOMIC,
};

/*
 * One outstanding operation. The context must come first: providers with
 * FI_CONTEXT/FI_CONTEXT2 own it until completion, and a triggered
 * operation's context is its struct fi_triggered_context2.
 */
struct fb_op {
	union {
		struct fi_context2 fctx;
		struct fi_triggered_context2 tctx;
	} u;
	enum fb_op_kind kind;
	uint32_t index;		/* the program's slot number */
	uint64_t done;		/* completions seen for this op */
	size_t len;
	uint64_t tag;
	uint64_t data;
	uint64_t flags;
};

struct fb_mr {
	struct fid_mr *mr;
	void *desc;		/* for calls when FI_MR_LOCAL, else NULL */
	uint64_t key;
	uint64_t addr;		/* what a peer passes as RMA address base */
};

/* A peer's registered region, as exchanged over OOB. */
struct fb_rmr {
	uint64_t key;
	uint64_t addr;
	uint64_t len;
};

struct fb_ctx;
typedef void (*fb_complete_func_t)(struct fb_ctx *ctx, struct fb_op *op);

struct fb_ctx {
	struct fb_opts opts;
	const char *prog;
	bool server;
	int oob_fd;

	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	size_t inject_size;
	bool mr_local;

	/* completion counts, advanced by fb_progress() */
	uint64_t tx_cnt;	/* sends, RMA, atomics */
	uint64_t rx_cnt;	/* receives */
	uint64_t rdata_cnt;	/* remote CQ data (fi_writedata) at target */
	uint64_t last_rdata;
	fb_complete_func_t on_complete;	/* optional, per completed op */

	/* control message buffers, registered when FI_MR_LOCAL */
	struct {
		uint64_t rx;
		uint64_t tx;
	} ctrl;
	uint64_t ctrl_tag;
	struct fb_op ctrl_op;
	struct fb_op ctrl_tx_op;
	struct fb_mr ctrl_mr;
};

/* ---- command line, lifetime --------------------------------------- */

/* Parses the common options; extra letters in prog_opts (getopt syntax)
 * go to cb. Exits on a usage error. Sets an alarm for -T. */
void fb_init(struct fb_ctx *ctx, int argc, char **argv, const char *prog,
	     const char *usage_extra);
void fb_fail(struct fb_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void fb_log(struct fb_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- results (client only prints) --------------------------------- */

void fb_result(struct fb_ctx *ctx, const char *test, const char *param,
	       double value);
void fb_result_na(struct fb_ctx *ctx, const char *test, const char *param,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void fb_size_str(size_t size, char *buf, size_t len);

/* ---- out-of-band socket ------------------------------------------- */

void fb_oob_open(struct fb_ctx *ctx);
void fb_oob_close(struct fb_ctx *ctx);
void fb_oob_send(struct fb_ctx *ctx, const void *buf, size_t len);
void fb_oob_recv(struct fb_ctx *ctx, void *buf, size_t len);
void fb_oob_xchg(struct fb_ctx *ctx, const void *out, void *in, size_t len);
void fb_oob_sync(struct fb_ctx *ctx);
/* Both sides moved total messages; fails the program if not. */
void fb_oob_totals_agree(struct fb_ctx *ctx, uint64_t total);
/* Both sides say whether they can go on; true only if both can. */
bool fb_oob_agree(struct fb_ctx *ctx, bool ok);
/* Nonblocking: true once the peer sent something (or closed). */
bool fb_oob_readable(struct fb_ctx *ctx);

/* ---- fabric set-up ------------------------------------------------ */

/* Hints for an RDM endpoint with these caps on the -p provider. */
struct fi_info *fb_hints(struct fb_ctx *ctx, uint64_t caps);
/* fi_getinfo on -s with FI_SOURCE; -FI_ENODATA when nothing matches. */
int fb_getinfo(struct fb_ctx *ctx, struct fi_info *hints);
/* fabric + domain from ctx->info */
void fb_domain_open(struct fb_ctx *ctx);
/*
 * CQ, AV and endpoint, enabled, names exchanged over OOB, peer inserted.
 * rx_size/tx_size > 0 raise the endpoint's queue sizes above the
 * provider's defaults when it accepts that; returns the sizes in effect.
 */
void fb_ep_open(struct fb_ctx *ctx, size_t rx_size, size_t tx_size,
		struct fid_cntr *send_cntr, struct fid_cntr *recv_cntr);
void fb_ep_close(struct fb_ctx *ctx);
void fb_domain_close(struct fb_ctx *ctx);

/* ---- memory ------------------------------------------------------- */

void *fb_alloc(struct fb_ctx *ctx, size_t len);
/* Registers for access (FI_SEND|FI_RECV|FI_REMOTE_*...). */
void fb_mr_reg(struct fb_ctx *ctx, void *buf, size_t len, uint64_t access,
	       struct fb_mr *mr);
void fb_mr_close(struct fb_mr *mr);
/* Exchange a region with the peer. */
void fb_mr_xchg(struct fb_ctx *ctx, const struct fb_mr *mine, size_t len,
		struct fb_rmr *peer);

void fb_fill(void *buf, size_t len, uint64_t seed);
/* index of the first wrong byte, or -1 */
ssize_t fb_check(const void *buf, size_t len, uint64_t seed);

/* ---- progress and posting ----------------------------------------- */

/* Reads the CQ once (busy polling); returns completions handled. */
int fb_progress(struct fb_ctx *ctx);
void fb_wait_tx(struct fb_ctx *ctx, uint64_t count);
void fb_wait_rx(struct fb_ctx *ctx, uint64_t count);
void fb_wait_op(struct fb_ctx *ctx, struct fb_op *op);

/*
 * Posts retry on -FI_EAGAIN, progressing in between. They fail the
 * program on other errors; they return -FI_EAGAIN only when the provider
 * keeps refusing for FB_EAGAIN_STUCK_SEC (a resource limit). fb_trecv
 * also returns -FI_ENOMEM at once when the provider runs out of receive
 * entries that way (shm).
 */
int fb_tsend(struct fb_ctx *ctx, const void *buf, size_t len, void *desc,
	     uint64_t tag, struct fb_op *op);
int fb_tinject(struct fb_ctx *ctx, const void *buf, size_t len,
	       uint64_t tag);
int fb_trecv(struct fb_ctx *ctx, void *buf, size_t len, void *desc,
	     fi_addr_t src, uint64_t tag, uint64_t ignore, struct fb_op *op);
/* fi_tinject when len <= inject size and -J was not given, else fi_tsend
 * and wait for its completion */
void fb_tsend_small(struct fb_ctx *ctx, const void *buf, size_t len,
		    void *desc, uint64_t tag, struct fb_op *op);

/*
 * Control messages (window acks, markers): one 8-byte receive posted at a
 * time per endpoint, on a tag of its own (FB_TAG_ACK, FB_TAG_MARK).
 */
void fb_ctrl_post(struct fb_ctx *ctx, uint64_t tag);
void fb_ctrl_send(struct fb_ctx *ctx, uint64_t tag, uint64_t value);
uint64_t fb_ctrl_wait(struct fb_ctx *ctx);

/*
 * Rounds (fb_bw, fb_trig): the client runs a round of sends, then waits
 * for the server's ack; the server, once a round's receives completed,
 * checks them and acks MORE (after posting the next round's receives) or
 * STOP. FB_WARM_ROUNDS untimed rounds come first; the server stops after
 * max_timed timed rounds, or once at least two (one with -Q) took cap
 * seconds.
 */
#define FB_WARM_ROUNDS	1
struct fb_rounds {
	void *arg;
	void (*round)(void *arg);		/* client: post, complete */
	void (*check)(void *arg, int round);	/* server: round arrived */
	void (*repost)(void *arg);		/* server: next receives */
	uint64_t per_round;			/* server: receives a round */
	double cap;
	int max_timed;
};
/* Client: seconds the timed rounds took; *rounds_p: all rounds run. */
double fb_rounds_client(struct fb_ctx *ctx, const struct fb_rounds *r,
			int *rounds_p);
/* Server, the first round's receives posted: rounds run. */
int fb_rounds_server(struct fb_ctx *ctx, const struct fb_rounds *r);

/* ---- time --------------------------------------------------------- */

double fb_now(void);	/* seconds, CLOCK_MONOTONIC */

/* Measurement budget: seconds per measured point (-t, -Q aware). */
double fb_cap(struct fb_ctx *ctx, double full, double quick);
/* An iteration count: the program's default, scaled down by -Q, or -I. */
int fb_iters(struct fb_ctx *ctx, int full);

#endif /* FB_COMMON_H */
