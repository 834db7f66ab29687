/*
 * common.h - what every fabtests-ext program shares: command line, set-up
 * of one RDM endpoint and its CQs, counters and AV, the out-of-band (OOB)
 * address exchange over a plain TCP socket on 127.0.0.1, CQ waits that
 * give up after a timeout, data patterns, and failure reporting.
 *
 * Not here: anything a single program checks (that stays in its own file).
 *
 * Conventions (the fabtests ones): a server is started without a
 * destination, a client with the server's address as its last argument;
 * both sides take the same options. Every check that fails ends the
 * process at once with "<prog>[<role>]: FAIL: ...", exit status 1; the
 * peer then sees its OOB socket close and fails too. An alarm() bounds the
 * whole run (-T), so nothing hangs.
 */
#ifndef FX_COMMON_H
#define FX_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define FX_MAX_PEERS		16
#define FX_DEFAULT_OOB_PORT	47592
#define FX_DEFAULT_TIMEOUT	60	/* seconds, whole run (-T) */
#define FX_WAIT_MS		20000	/* one CQ/counter/OOB wait */
#define FX_KIB			1024UL
#define FX_MIB			(1024UL * 1024UL)

enum fx_xfer {
	FX_XFER_TAGGED,		/* fi_tsend / fi_trecv (default) */
	FX_XFER_MSG,		/* -e msg: fi_send / fi_recv */
};

struct fx_opts {
	const char *prov;	/* -p: provider name */
	const char *src_addr;	/* -s: local address for fi_getinfo */
	const char *dst_addr;	/* last argument: the server (client mode) */
	int src_port;		/* -B: server's OOB listen port, 0 = any */
	int dst_port;		/* -P: client's OOB destination port */
	size_t size;		/* -S <n> */
	bool size_set;
	bool all_sizes;		/* -S all */
	int iters;		/* -I, 0 = program default */
	bool verify;		/* -v: check data */
	enum fx_xfer xfer;	/* -e tagged|msg */
	int timeout;		/* -T: seconds for the whole run */
	int nclients;		/* -n: clients a server expects */
	int count;		/* -N: messages (program specific), 0 = default */
	int window;		/* -W: window (program specific), 0 = default */
	int threads;		/* -t: threads (program specific), 0 = default */
	bool sread;		/* -c sread: blocking CQ reads on a wait object */
	bool auto_progress;	/* -a: FI_PROGRESS_AUTO in the hints */
	enum fi_threading threading;	/* -L: hints' threading, 0 = the
					   program's (fx_setup) */
};

/* What a program needs from its endpoint. */
struct fx_setup {
	uint64_t caps;			/* hints->caps */
	enum fi_threading threading;	/* 0: FI_THREAD_DOMAIN; -L wins */
	uint64_t cq_bind_flags;		/* e.g. FI_SELECTIVE_COMPLETION */
	size_t cq_size;			/* 0: 1024 */
	size_t min_multi_recv;		/* set before fi_enable when nonzero */
	size_t cq_data_size;		/* hints->domain_attr->cq_data_size */
	size_t tx_size, rx_size;	/* hints tx/rx_attr->size, 0: any */
};

struct fx_ctx {
	const struct fx_opts *opts;
	bool server;
	int rank;			/* client: index the server gave it */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cq *txcq, *rxcq;
	struct fid_cntr *txcntr, *rxcntr;
	int oob_fd[FX_MAX_PEERS];	/* server: one per client */
	fi_addr_t peer[FX_MAX_PEERS];	/* AV address of each OOB peer */
	int npeers;
};

/* One CQ entry, with what fi_cq_readfrom / fi_cq_readerr can add. */
struct fx_comp {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;			/* FI_ADDR_NOTAVAIL if not asked */
	int err;			/* 0, or the positive FI_Exxx */
	size_t olen;			/* for errors */
	int prov_errno;
};

extern const char *fx_prog;
extern const char *fx_role;

/* ---- failure reporting ---------------------------------------------- */

void fx_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define FX_FAIL(...) fx_fail(__FILE__, __LINE__, __VA_ARGS__)
#define FX_CHECK(cond, ...)					\
	do {							\
		if (!(cond))					\
			fx_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)
/* a libfabric call that must return 0 */
#define FX_CALL(call)						\
	do {							\
		int fx_ret_ = (int)(call);			\
		if (fx_ret_)					\
			fx_fail(__FILE__, __LINE__, "%s: %d (%s)", \
				#call, fx_ret_, fi_strerror(-fx_ret_)); \
	} while (0)

void fx_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- command line --------------------------------------------------- */

/*
 * Parses the common options into opts (defaults first) and arms the
 * overall alarm. usage_extra describes the program's own use of -N -W -t.
 * With no argument at all the program runs its server/client cases
 * through run.sh, which is what `make check` does.
 */
void fx_parse(int argc, char **argv, const char *summary,
	      const char *usage_extra, struct fx_opts *opts);

/* sizes for -S: all = 0, 1, 2, 3, 4, 6, 8, 12 ... within [min, max] */
size_t fx_sizes(const struct fx_opts *opts, size_t min, size_t max,
		size_t def, size_t *sizes, size_t cap);
/* iterations at a size: -I, or def scaled down for large messages */
int fx_iters(const struct fx_opts *opts, size_t size, int def);

/* ---- set-up ----------------------------------------------------------- */

/* fabric, domain, AV, CQs, counters, endpoint, OOB exchange, AV inserts */
void fx_init(struct fx_ctx *ctx, const struct fx_opts *opts,
	     const struct fx_setup *setup);
void fx_fini(struct fx_ctx *ctx);
/* The same without the closing handshake (a peer may be gone); objects
 * fx_init did not open (NULL) are skipped. */
void fx_fini_nosync(struct fx_ctx *ctx);

/* one more endpoint on ctx's domain and AV, with its own CQ (tx and rx) */
void fx_ep_open(struct fx_ctx *ctx, const struct fx_setup *setup,
		struct fid_ep **ep_p, struct fid_cq **cq_p);
/* a CQ of ctx's domain (the format and size fx_init's have) */
void fx_cq_open(struct fx_ctx *ctx, const struct fx_setup *setup,
		struct fid_cq **cq_p);
/* one more endpoint on ctx's domain and AV, bound to cq (tx and rx) */
void fx_ep_open_on(struct fx_ctx *ctx, const struct fx_setup *setup,
		   struct fid_cq *cq, struct fid_ep **ep_p);
/* the -L name of a threading level ("safe", ...) */
const char *fx_threading_str(enum fi_threading threading);

/* ---- OOB ----------------------------------------------------------- */

/* all clients and the server meet; progresses the endpoint meanwhile */
void fx_oob_sync(struct fx_ctx *ctx);
void fx_oob_send_u64(struct fx_ctx *ctx, int peer, uint64_t val);
uint64_t fx_oob_recv_u64(struct fx_ctx *ctx, int peer);
/* fails if a peer's OOB socket reads EOF (it failed or exited) */
void fx_oob_check_peers(struct fx_ctx *ctx);
/* raw bytes, e.g. an extra endpoint's name */
void fx_oob_send(struct fx_ctx *ctx, int peer, const void *buf, size_t len);
size_t fx_oob_recv(struct fx_ctx *ctx, int peer, void *buf, size_t cap);

/* ---- completions ---------------------------------------------------- */

/* Drives manual progress without taking anything out of the CQs. */
void fx_progress(struct fx_ctx *ctx);

/*
 * Reads one entry (or error entry) from cq, waiting up to FX_WAIT_MS.
 * Fails the run on timeout. Returns 0 for a completion, the positive
 * error code for an error entry (c->err set too).
 */
int fx_cq_wait(struct fx_ctx *ctx, struct fid_cq *cq, struct fx_comp *c);
/* a completion that must not be an error */
void fx_cq_wait_ok(struct fx_ctx *ctx, struct fid_cq *cq, struct fx_comp *c,
		   const char *what);
/* n successful completions, contents discarded (e.g. sends) */
void fx_cq_drain(struct fx_ctx *ctx, struct fid_cq *cq, size_t n,
		 const char *what);
/* fails if cq yields anything within ms milliseconds of progress */
void fx_cq_expect_empty(struct fx_ctx *ctx, struct fid_cq *cq, int ms,
			const char *what);
/* waits until cntr reaches val (or errors reach err, if err >= 0) */
void fx_cntr_wait(struct fx_ctx *ctx, struct fid_cntr *cntr, uint64_t val,
		  const char *what);

/*
 * Posts with one libfabric call, retrying while it returns -FI_EAGAIN
 * (the provider is out of resources until progress completes earlier
 * operations); any other error, or no success within FX_WAIT_MS, fails.
 */
#define FX_RETRY(ctx, what, call)					\
	do {								\
		uint64_t fx_t0_ = 0;					\
		while (fx_retry_again((ctx), (call), (what), &fx_t0_))	\
			;						\
	} while (0)
bool fx_retry_again(struct fx_ctx *ctx, ssize_t ret, const char *what,
		    uint64_t *t0);

/* checks a completion's context and flags, and len and tag if a receive */
void fx_check_comp(const struct fx_comp *c, const void *op_context,
		   uint64_t flags, size_t len, uint64_t tag, const char *what);

/*
 * Which of n operations (contexts ctxs[0..n-1]) a completion is for;
 * fails if it is none of them or one already seen (seen[] is updated).
 */
int fx_slot_of(const struct fx_comp *c, const struct fi_context *ctxs, int n,
	       uint8_t *seen, const char *what);

/* ---- tagged or untagged, as -e says (ignored by fi_send/fi_recv) ---- */

uint64_t fx_xfer_flag(const struct fx_ctx *ctx);	/* FI_TAGGED / FI_MSG */
void fx_send(struct fx_ctx *ctx, const void *buf, size_t len, fi_addr_t dest,
	     uint64_t tag, void *context);
void fx_recv(struct fx_ctx *ctx, void *buf, size_t len, fi_addr_t src,
	     uint64_t tag, uint64_t ignore, void *context);

/* ---- data ---------------------------------------------------------- */

/* Fills buf with the pattern of seed for message offsets [off, off+len). */
void fx_fill_at(void *buf, size_t off, size_t len, uint64_t seed);
static inline void fx_fill(void *buf, size_t len, uint64_t seed)
{
	fx_fill_at(buf, 0, len, seed);
}
/* Fails with the first differing offset. */
void fx_check_at(const void *buf, size_t off, size_t len, uint64_t seed,
		 const char *what);
static inline void fx_check(const void *buf, size_t len, uint64_t seed,
			    const char *what)
{
	fx_check_at(buf, 0, len, seed, what);
}
/* every byte of buf is val (guard areas, untouched buffers) */
void fx_check_byte(const void *buf, size_t len, uint8_t val,
		   const char *what);

void *fx_alloc(size_t len);
uint64_t fx_now_us(void);
const char *fx_flags_str(uint64_t flags, char *buf, size_t cap);

#endif /* FX_COMMON_H */
