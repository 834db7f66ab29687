/*
 * fuzz_target.c - libFuzzer target for the engine's message handling: the
 * transport upcalls of p4e_ni.c and everything behind them (target state
 * machine p4e_tgt.c, responses in p4e_ini.c, flow control p4e_fc.c, the
 * matching structures, unexpected headers, events, counters, triggered
 * operations), run through the whole engine on the loop transport.
 *
 * Every input gets a fresh domain with two NIs, A (index 0, the
 * initiator) and B (index 1, the target), set up the same way
 * (p4e_fz_open): B has PTs with a mix of priority entries (exact, Open
 * MPI's ignore mask, other masks, USE_ONCE, MANAGE_LOCAL with min_free,
 * NO_TRUNCATE, iovec, uid- and op-restricted, VIRT_ADDR), overflow entries
 * (one with P4E_ME_RDZV_HDR_ONLY, one iovec), a P4E_PT_FLOWCTRL PT with a
 * 4-event EQ, a P4E_PT_FC_RESEND PT, a PT whose priority list has 16
 * ignore masks (one more takes the slow list), a disabled PT, a PT
 * without EQ, an "RMA" PT for atomics, and counters with triggered
 * operations (a put back to A, a priority append, an increment); A has
 * MDs, a PT of its own, two rendezvous puts parked at B as header-only
 * unexpected messages (their memory stays exposed) and seven operations
 * in flight (put, get, get with push, atomic, fetch, swap, counting put),
 * so responses with live and stale operation ids exist. Setting all this
 * up again for every input keeps inputs independent and costs about as
 * much as running a typical one.
 *
 * Input: byte 0 picks a configuration (enum p4e_fz_cfg), the rest is
 * records, each [ctl][...]:
 *   ctl & 3   0: a message to B from A's address     [len lo][len hi][bytes]
 *             1: a message to A from B's address     (same)
 *             2: an API action                       [code][8 argument bytes]
 *             3: another route, ctl >> 5 picks it    [len lo][len hi][bytes]
 *                (p4e_fz_routes: to B from itself, from strangers, ...)
 *   ctl & 4   raw: no header fix-ups (else hdr.length := the record's length
 *             and a request's seq := what the receiver expects next)
 *   ctl & 8   hold: no progress after this record (messages queue up)
 *   ctl & 16  keep: no event drain after this record (EQs can fill)
 * Messages are delivered with p4t_loop_inject. Whatever the raw bit, an
 * op_id below 256 in a request or response is symbolic: it becomes the
 * handle of A's operation number op_id (in order of first sight, stale
 * ones included), and a cookie key below 256 becomes the key of A's
 * exposure number key (rendezvous sources and push sinks, in order of
 * first sight). fuzz/gen_corpus_target.c writes seeds in this format.
 *
 * Checks, beyond "no crash, no leak, no UB":
 *   - every buffer the engine may touch (entries, MDs, iovec elements) is
 *     surrounded by guard bytes, poisoned for ASan (any access traps at
 *     once) and compared after the input (a write there traps);
 *   - events: known kinds and failure types, mlength <= rlength for
 *     successful data events, and [start, start + mlength) inside one of
 *     our buffers (inside an iovec element: start only);
 *   - setup and teardown succeed (dom_destroy finds no NI left).
 * FUZZ_TARGET_LOG=1 shows the engine's log (silenced otherwise), every
 * event and the status registers, to see what an input does.
 *
 * Built only by the Makefile rule fuzz/fuzz_target (clang,
 * -fsanitize=fuzzer,address,undefined) with every engine, loop-transport
 * and util source; it reads engine internals (p4e_priv.h) for the
 * fix-ups only, never to change engine state.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4e.h"
#include "p4e_priv.h"
#include "p4t_loop.h"
#include "p4_wire.h"
#include "p4u_log.h"
#include "p4u_pool.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define P4E_FZ_ASAN 1
#endif
#endif
#ifdef P4E_FZ_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/*
 * libfabric pulls in libraries (libinfinipath) that install signal
 * handlers calling exit(): let ASan report traps and aborts itself.
 */
const char *__asan_default_options(void)
{
	return "handle_abort=1:handle_sigill=1:allow_user_segv_handler=0";
}

/* ---- layout shared with gen_corpus_target.c (keep in sync) --------------- */

enum p4e_fz_cfg {
	P4E_FZ_CFG_PLAIN,	/* physical, matching, roomy limits */
	P4E_FZ_CFG_TIGHT,	/* B: 1 op slot, 2 headers, 128-byte bounces */
	P4E_FZ_CFG_LOGICAL,	/* logical NIs, ranks 0 (A) and 1 (B) */
	P4E_FZ_CFG_NOMATCH,	/* non-matching NIs (LEs) */
	P4E_FZ_NCFG
};

/* B's PTs, allocated in this order (indexes 0..6). */
enum p4e_fz_bpt {
	P4E_FZ_PT_TAG,		/* the entry mix; overflow: RDZV_HDR_ONLY */
	P4E_FZ_PT_FLOW,		/* FLOWCTRL, 4-event EQ, iovec overflow */
	P4E_FZ_PT_RESEND,	/* FC_RESEND, one small overflow entry */
	P4E_FZ_PT_ONCE,		/* ONLY_USE_ONCE|TRUNCATE|UNORDERED, 16 masks */
	P4E_FZ_PT_OFF,		/* allocated disabled */
	P4E_FZ_PT_NOEQ,		/* no EQ, a counting entry */
	P4E_FZ_PT_RMA,		/* persistent entries for atomics (one iovec) */
	P4E_FZ_NPT
};

#define P4E_FZ_OMPI_SYNC	0x100000000ULL
#define P4E_FZ_PARK_BIT		0x8000000000000000ULL

static const uint64_t p4e_fz_bits[16] = {
	0x1111,				/* 0 exact, USE_ONCE, from A */
	0x0005000000000022ULL,		/* 1 Open MPI: context 5, tag 0x22 */
	0x0005000100000022ULL,		/* 2 the same with the sync bit */
	0x337f,				/* 3 low byte ignored, counting */
	0x4444,				/* 4 MANAGE_LOCAL, min_free */
	0x5555,				/* 5 NO_TRUNCATE */
	0x6666,				/* 6 iovec */
	0x7777,				/* 7 uid 4321 only */
	0x8888,				/* 8 GET only */
	0x9999,				/* 9 VIRT_ADDR */
	P4E_FZ_PARK_BIT | 0xaaaa,	/* 10 parked rendezvous put 1 */
	P4E_FZ_PARK_BIT | 0xbbbb,	/* 11 parked rendezvous put 2 */
	0,				/* 12 with ignore ~0: wildcards */
	1,				/* 13 RMA iovec entry */
	0x1112,				/* 14 matches no TAG priority entry */
	0x0005000000000023ULL,		/* 15 */
};

static const uint64_t p4e_fz_ignores[8] = {
	0, P4E_FZ_OMPI_SYNC, 0xff, UINT64_MAX, ~P4E_FZ_PARK_BIT,
	0xffffffff00000000ULL, 0xffff, 1,
};

/* Option bits an API append may combine (argument bytes 3 and 4). */
static const unsigned p4e_fz_me_flags[16] = {
	P4E_ME_OP_PUT, P4E_ME_OP_GET, P4E_ME_USE_ONCE,
	P4E_ME_UNEXPECTED_HDR_DISABLE, P4E_ME_EVENT_COMM_DISABLE,
	P4E_ME_EVENT_SUCCESS_DISABLE, P4E_ME_EVENT_OVER_DISABLE,
	P4E_ME_EVENT_UNLINK_DISABLE,
	P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_CT_OVERFLOW,
	P4E_ME_EVENT_CT_BYTES, P4E_ME_MANAGE_LOCAL, P4E_ME_NO_TRUNCATE,
	P4E_ME_LOCAL_INC_UH_RLENGTH, P4E_ME_UH_COPY, P4E_ME_VIRT_ADDR,
	P4E_ME_RDZV_HDR_ONLY,
};

enum p4e_fz_route {
	P4E_FZ_ROUTE_TO_B,
	P4E_FZ_ROUTE_TO_A,
	P4E_FZ_ROUTE_ACTION,
	P4E_FZ_ROUTE_OTHER,
};

#define P4E_FZ_CTL_RAW		0x04
#define P4E_FZ_CTL_HOLD		0x08
#define P4E_FZ_CTL_KEEP		0x10

/* Senders: the other NI, the receiver itself, two strangers. */
enum p4e_fz_src {
	P4E_FZ_SRC_PEER,
	P4E_FZ_SRC_SELF,
	P4E_FZ_SRC_UNKNOWN1,
	P4E_FZ_SRC_UNKNOWN2,
	P4E_FZ_NSRC
};

/* ctl >> 5 of P4E_FZ_ROUTE_OTHER: (receiving NI, sender) */
static const struct {
	int dst;
	enum p4e_fz_src src;
} p4e_fz_routes[8] = {
	{ 1, P4E_FZ_SRC_SELF }, { 1, P4E_FZ_SRC_UNKNOWN1 },
	{ 0, P4E_FZ_SRC_UNKNOWN2 }, { 0, P4E_FZ_SRC_SELF },
	{ 1, P4E_FZ_SRC_UNKNOWN2 }, { 0, P4E_FZ_SRC_UNKNOWN1 },
	{ 1, P4E_FZ_SRC_PEER }, { 0, P4E_FZ_SRC_PEER },
};

/* Actions at B (A for POST) and their argument bytes. */
enum p4e_fz_act {
	P4E_FZ_ACT_APPEND,	/* pt|overflow<<7, bits, ignore, opt lo,
				 * opt hi, len/4, min_free,
				 * any|iov<<1|ct<<2|uid<<3|uid1000<<4 */
	P4E_FZ_ACT_UNLINK,	/* me|pt, cancel<<0|by user_ptr<<1,
				 * NULL user_ptr */
	P4E_FZ_ACT_SEARCH,	/* pt, bits, ignore, op, any */
	P4E_FZ_ACT_UH,		/* uh, discard, -, opt lo, opt hi, len/4 */
	P4E_FZ_ACT_PT,		/* pt, enable */
	P4E_FZ_ACT_POST,	/* kind|fromB<<7, pt, bits|hdr_data<<4,
				 * ack, len/8, roff/4, atomic op, type */
	P4E_FZ_ACT_CT,		/* ct, success, failure */
	P4E_FZ_ACT_LINK,	/* side: fail the link at that NI */
	P4E_FZ_ACT_STEP,	/* side, budget: progress one NI a little */
	P4E_FZ_ACT_HOLD,	/* side, on */
	P4E_FZ_ACT_QLIMIT,	/* side, limit/64 (0: default) */
	P4E_FZ_NACT
};
#define P4E_FZ_ACT_ARGS		8

#define P4E_FZ_A_EAGER		256
#define P4E_FZ_B_EAGER		1024

/* ---- state --------------------------------------------------------------- */

#define P4E_FZ_GUARD		64
#define P4E_FZ_GUARD_BYTE	0xa5
#define P4E_FZ_MAX_BUFS		96
#define P4E_FZ_MAX_IOVS		24
#define P4E_FZ_MAX_MES		64
#define P4E_FZ_MAX_OPS		48
#define P4E_FZ_MAX_COOKIES	16
#define P4E_FZ_MAX_UHS		16
#define P4E_FZ_NEQ		3	/* A's, B's, B's small (FLOWCTRL PT) */
#define P4E_FZ_NCT		3	/* two of B's entries, A's MD */
#define P4E_FZ_NMD		4	/* A: plain, iovec, fetch; B: trig */

struct p4e_fz_buf {
	uint8_t *raw;		/* P4E_FZ_GUARD | len | P4E_FZ_GUARD */
	size_t len;
	bool iov;		/* an iovec element: events may run past it */
};

struct p4e_fz {
	enum p4e_fz_cfg cfg;
	struct p4e_dom *dom;
	struct p4e_ni *ni[2];
	struct sockaddr_in addr[2];
	struct sockaddr_in unknown[2];
	uint32_t id[2];
	struct p4e_eq *eq[P4E_FZ_NEQ];
	uint64_t ct[P4E_FZ_NCT];
	uint64_t md[P4E_FZ_NMD];
	uint32_t a_pt;
	struct p4e_fz_buf bufs[P4E_FZ_MAX_BUFS];
	unsigned nbufs;
	struct iovec *iovs[P4E_FZ_MAX_IOVS];
	unsigned niovs;
	uint64_t mes[P4E_FZ_MAX_MES];		/* B's entries */
	unsigned nmes;
	uint64_t ops[P4E_FZ_MAX_OPS];		/* A's ops, first sight order */
	unsigned nops;
	uint64_t cookies[P4E_FZ_MAX_COOKIES];	/* A's exposure keys */
	unsigned ncookies;
	uint64_t uhs[P4E_FZ_MAX_UHS];		/* claimed headers at B */
	unsigned nuhs;
	unsigned pending[2][P4E_FZ_NSRC];	/* fixed-up, not delivered */
};

static struct p4e_fz p4e_fz_state;
static bool p4e_fz_log_on;	/* FUZZ_TARGET_LOG=1 */

static void p4e_fz_bug(const char *what)
{
	fprintf(stderr, "fuzz_target: %s\n", what);
	__builtin_trap();
}

static void p4e_fz_check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "fuzz_target: setup: %s: %d\n", what, ret);
		__builtin_trap();
	}
}

static bool p4e_fz_log_enabled(enum p4u_log_level level,
			       enum p4u_log_subsys subsys)
{
	(void)subsys;
	return p4e_fz_log_on && level <= P4U_LOG_INFO;
}

static void p4e_fz_log_write(enum p4u_log_level level,
			     enum p4u_log_subsys subsys, const char *func,
			     int line, const char *msg)
{
	fprintf(stderr, "p4 %d/%d %s:%d %s\n", level, subsys, func, line, msg);
}

static uint64_t p4e_fz_le_get(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static void p4e_fz_le_put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---- guarded buffers ----------------------------------------------------- */

/* len bytes between poisoned guards, filled with a pattern; NULL if full. */
static void *p4e_fz_buf_new(struct p4e_fz *f, size_t len, bool iov)
{
	struct p4e_fz_buf *b = &f->bufs[f->nbufs];
	uint8_t *user;
	size_t i;

	if (f->nbufs == P4E_FZ_MAX_BUFS)
		return NULL;
	b->raw = malloc(len + 2 * P4E_FZ_GUARD);
	if (!b->raw)
		return NULL;
	b->len = len;
	b->iov = iov;
	user = b->raw + P4E_FZ_GUARD;
	memset(b->raw, P4E_FZ_GUARD_BYTE, P4E_FZ_GUARD);
	memset(user + len, P4E_FZ_GUARD_BYTE, P4E_FZ_GUARD);
	for (i = 0; i < len; i++)
		user[i] = (uint8_t)(f->nbufs * 31 + i);
	ASAN_POISON_MEMORY_REGION(b->raw, P4E_FZ_GUARD);
	ASAN_POISON_MEMORY_REGION(user + len, P4E_FZ_GUARD);
	f->nbufs++;
	return user;
}

static void p4e_fz_bufs_check_free(struct p4e_fz *f)
{
	struct p4e_fz_buf *b;
	unsigned i, j;

	for (i = 0; i < f->nbufs; i++) {
		b = &f->bufs[i];
		ASAN_UNPOISON_MEMORY_REGION(b->raw, P4E_FZ_GUARD);
		ASAN_UNPOISON_MEMORY_REGION(b->raw + P4E_FZ_GUARD + b->len,
					    P4E_FZ_GUARD);
		for (j = 0; j < P4E_FZ_GUARD; j++)
			if (b->raw[j] != P4E_FZ_GUARD_BYTE ||
			    b->raw[P4E_FZ_GUARD + b->len + j] !=
			    P4E_FZ_GUARD_BYTE)
				p4e_fz_bug("guard bytes overwritten");
		free(b->raw);
	}
	f->nbufs = 0;
	for (i = 0; i < f->niovs; i++)
		free(f->iovs[i]);
	f->niovs = 0;
}

/* An iovec of three guarded elements (a, 0, len - a); NULL if full. */
static struct iovec *p4e_fz_iov_new(struct p4e_fz *f, size_t len)
{
	struct iovec *iov;
	size_t i, lens[3] = { len / 3, 0, len - len / 3 };

	if (f->niovs == P4E_FZ_MAX_IOVS || f->nbufs + 3 > P4E_FZ_MAX_BUFS)
		return NULL;
	iov = calloc(3, sizeof(*iov));
	if (!iov)
		return NULL;
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = p4e_fz_buf_new(f, lens[i], true);
		iov[i].iov_len = lens[i];
	}
	f->iovs[f->niovs++] = iov;
	return iov;
}

/* [start, start + len) must lie in one buffer (an iovec element: start). */
static void p4e_fz_range_check(struct p4e_fz *f, const void *start,
			       uint64_t len)
{
	const uint8_t *p = start, *user;
	unsigned i;

	for (i = 0; i < f->nbufs; i++) {
		user = f->bufs[i].raw + P4E_FZ_GUARD;
		if (p < user || p > user + f->bufs[i].len)
			continue;
		if (f->bufs[i].iov ||
		    len <= (uint64_t)(user + f->bufs[i].len - p))
			return;
	}
	p4e_fz_bug("event data range outside every buffer");
}

/* ---- handles seen -------------------------------------------------------- */

static void p4e_fz_add(uint64_t *tab, unsigned *n, unsigned max, uint64_t v)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (tab[i] == v)
			return;
	if (*n < max)
		tab[(*n)++] = v;
}

/* Record A's operations and exposures (stale ones stay listed). */
static void p4e_fz_ops_scan(struct p4e_fz *f)
{
	struct p4e_ni *ni = f->ni[0];
	struct p4e_op *op;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&ni->ops); i++) {
		op = p4u_pool_at(&ni->ops, i);
		if (!op)
			continue;
		p4e_fz_add(f->ops, &f->nops, P4E_FZ_MAX_OPS,
			   p4u_pool_handle(&ni->ops, op));
		if (op->mem)
			p4e_fz_add(f->cookies, &f->ncookies,
				   P4E_FZ_MAX_COOKIES, op->cookie.key);
	}
}

/* ---- events and progress ------------------------------------------------- */

/* Events whose start and mlength describe data. */
#define P4E_FZ_DATA_EVENTS						\
	(1u << P4E_EVENT_GET | 1u << P4E_EVENT_GET_OVERFLOW |		\
	 1u << P4E_EVENT_PUT | 1u << P4E_EVENT_PUT_OVERFLOW |		\
	 1u << P4E_EVENT_ATOMIC | 1u << P4E_EVENT_ATOMIC_OVERFLOW |	\
	 1u << P4E_EVENT_FETCH_ATOMIC |					\
	 1u << P4E_EVENT_FETCH_ATOMIC_OVERFLOW |			\
	 1u << P4E_EVENT_REPLY | 1u << P4E_EVENT_SEND | 1u << P4E_EVENT_ACK)

static void p4e_fz_event_check(struct p4e_fz *f, const struct p4e_event *ev)
{
	if (p4e_fz_log_on)
		fprintf(stderr, "event type %u fail %u pt %u list %u init %u "
			"rlen %llu mlen %llu roff %llu bits %#llx start %p\n",
			ev->type, ev->ni_fail_type, ev->pt_index, ev->list,
			ev->initiator, (unsigned long long)ev->rlength,
			(unsigned long long)ev->mlength,
			(unsigned long long)ev->remote_offset,
			(unsigned long long)ev->match_bits, ev->start);
	if (ev->type >= P4E_EVENT_KIND_MAX ||
	    ev->ni_fail_type >= P4E_NI_FAIL_MAX)
		p4e_fz_bug("event of unknown kind or failure type");
	if (ev->type == P4E_EVENT_SEARCH && ev->uh_handle)
		p4e_fz_add(f->uhs, &f->nuhs, P4E_FZ_MAX_UHS, ev->uh_handle);
	if (ev->ni_fail_type != P4E_NI_OK ||
	    !(P4E_FZ_DATA_EVENTS & 1u << ev->type))
		return;
	if (ev->mlength > ev->rlength)
		p4e_fz_bug("event mlength > rlength");
	if (ev->start && ev->mlength)
		p4e_fz_range_check(f, ev->start, ev->mlength);
}

static void p4e_fz_drain(struct p4e_fz *f)
{
	struct p4e_event ev;
	int i;

	for (i = 0; i < P4E_FZ_NEQ; i++)
		while (p4e_eq_ring_get(f->eq[i], &ev) >= 0)
			p4e_fz_event_check(f, &ev);
}

static void p4e_fz_progress(struct p4e_fz *f)
{
	int idle = 0, rounds = 0;

	while (idle < 2 && rounds++ < 256)
		idle = p4e_dom_progress(f->dom, 64) ? 0 : idle + 1;
	memset(f->pending, 0, sizeof(f->pending));
}

/* ---- setup --------------------------------------------------------------- */

/* How B names A in match_id, and A names B as a target. */
static uint32_t p4e_fz_name_of(struct p4e_fz *f, int side)
{
	return f->cfg == P4E_FZ_CFG_LOGICAL ? (uint32_t)side : f->id[side];
}

static int p4e_fz_ni_open(struct p4e_fz *f, int side)
{
	struct p4e_ni_attr attr;
	size_t len = sizeof(f->addr[side]);
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.options = f->cfg == P4E_FZ_CFG_NOMATCH ? P4E_NI_NO_MATCHING :
						      P4E_NI_MATCHING;
	attr.options |= f->cfg == P4E_FZ_CFG_LOGICAL ? P4E_NI_LOGICAL :
						       P4E_NI_PHYSICAL;
	attr.transport = &p4t_loop_ops;
	attr.eager_size = side ? P4E_FZ_B_EAGER : P4E_FZ_A_EAGER;
	attr.uid = 1000 + side;
	if (side && f->cfg == P4E_FZ_CFG_TIGHT) {
		attr.desired.max_ops = 1;
		attr.desired.max_unexpected_headers = 2;
		attr.desired.max_volatile_size = 64;
	}
	ret = p4e_ni_create(f->dom, &attr, &f->ni[side]);
	if (!ret)
		ret = p4e_ni_getname(f->ni[side], &f->addr[side], &len);
	if (!ret)
		ret = p4e_peer_lookup(f->dom, &f->addr[side], len,
				      &f->id[side]);
	return ret;
}

/* An entry of the setup: bits and ignore are indexes in the tables. */
struct p4e_fz_me_init {
	uint8_t pt;
	uint8_t list;
	uint8_t bits;
	uint8_t ignore;
	unsigned options;
	uint16_t len;		/* bytes; iovec: total of three elements */
	uint8_t min_free;
};

#define P4E_FZ_RW	(P4E_ME_OP_PUT | P4E_ME_OP_GET)
#define P4E_FZ_ONCE	(P4E_FZ_RW | P4E_ME_USE_ONCE)
#define P4E_FZ_CT	(P4E_ME_EVENT_CT_COMM | P4E_ME_EVENT_CT_BYTES)
#define P4E_FZ_PRIO	P4E_PRIORITY_LIST
#define P4E_FZ_OFLOW	P4E_OVERFLOW_LIST

/* B's entries, appended in this order. */
static const struct p4e_fz_me_init p4e_fz_b_mes[] = {
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 0, 0, P4E_FZ_ONCE, 64, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 1, 1, P4E_FZ_ONCE, 128, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 3, 2, P4E_FZ_RW | P4E_FZ_CT, 256, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 4, 0,
	  P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 256, 32 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 5, 0, P4E_FZ_ONCE | P4E_ME_NO_TRUNCATE,
	  32, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 6, 0, P4E_FZ_RW | P4E_ME_IOVEC, 120, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 7, 0, P4E_FZ_RW, 64, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 8, 0, P4E_ME_OP_GET, 64, 0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_PRIO, 9, 0, P4E_FZ_RW | P4E_ME_VIRT_ADDR, 64,
	  0 },
	{ P4E_FZ_PT_TAG, P4E_FZ_OFLOW, 12, 3, P4E_FZ_RW | P4E_ME_MANAGE_LOCAL |
	  P4E_ME_RDZV_HDR_ONLY, 512, 64 },
	{ P4E_FZ_PT_TAG, P4E_FZ_OFLOW, 12, 3, P4E_FZ_RW | P4E_ME_MANAGE_LOCAL |
	  P4E_ME_LOCAL_INC_UH_RLENGTH, 256, 0 },
	{ P4E_FZ_PT_FLOW, P4E_FZ_PRIO, 0, 0, P4E_FZ_ONCE, 64, 0 },
	{ P4E_FZ_PT_FLOW, P4E_FZ_OFLOW, 12, 3, P4E_FZ_ONCE | P4E_ME_IOVEC, 96,
	  0 },
	{ P4E_FZ_PT_RESEND, P4E_FZ_PRIO, 0, 0, P4E_FZ_ONCE, 64, 0 },
	{ P4E_FZ_PT_RESEND, P4E_FZ_OFLOW, 12, 3, P4E_FZ_ONCE, 64, 0 },
	{ P4E_FZ_PT_ONCE, P4E_FZ_PRIO, 12, 3, P4E_FZ_ONCE, 32, 0 },
	/* refused: NO_TRUNCATE on an ONLY_TRUNCATE PT */
	{ P4E_FZ_PT_ONCE, P4E_FZ_PRIO, 12, 3, P4E_FZ_ONCE | P4E_ME_NO_TRUNCATE,
	  32, 0 },
	{ P4E_FZ_PT_ONCE, P4E_FZ_OFLOW, 12, 3,
	  P4E_FZ_ONCE | P4E_ME_UNEXPECTED_HDR_DISABLE, 64, 0 },
	{ P4E_FZ_PT_OFF, P4E_FZ_PRIO, 12, 3, P4E_FZ_RW, 64, 0 },
	{ P4E_FZ_PT_NOEQ, P4E_FZ_PRIO, 12, 3, P4E_FZ_RW | P4E_FZ_CT, 64, 0 },
	{ P4E_FZ_PT_RMA, P4E_FZ_PRIO, 13, 0, P4E_FZ_RW | P4E_ME_IOVEC, 96, 0 },
	{ P4E_FZ_PT_RMA, P4E_FZ_PRIO, 12, 3, P4E_FZ_RW, 256, 0 },
};

/* Append at side (1: B); failures are fine (LEs refuse some options). */
static void p4e_fz_me(struct p4e_fz *f, int side, uint32_t pt,
		      const struct p4e_fz_me_init *in)
{
	uint64_t bits = p4e_fz_bits[in->bits], me;
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.options = in->options, .match_id = P4E_ID_ANY,
		.match_bits = bits, .ignore_bits = p4e_fz_ignores[in->ignore],
		.min_free = in->min_free,
	};

	if (in->options & P4E_ME_IOVEC) {
		d.start = p4e_fz_iov_new(f, in->len);
		d.length = 3;
	} else {
		d.start = p4e_fz_buf_new(f, in->len, false);
		d.length = in->len;
	}
	if (!d.start)
		return;
	if (in->options & P4E_ME_EVENT_CT_COMM)
		d.ct = f->ct[pt == P4E_FZ_PT_NOEQ ? 1 : 0];
	if (in->bits == 0)
		d.match_id = p4e_fz_name_of(f, 0);
	if (in->bits == 7)
		d.uid = 4321;
	if (!p4e_me_append(f->ni[side], pt, &d, in->list,
			   (void *)(uintptr_t)(pt + 1), 0, &me) && side)
		p4e_fz_add(f->mes, &f->nmes, P4E_FZ_MAX_MES, me);
}

/*
 * 15 more ignore masks on the ONCE PT: with its wildcards' that is 16,
 * P4E_MLIST_MAX_MASKS, so the next new mask an input appends goes to the
 * slow list.
 */
static void p4e_fz_b_masks(struct p4e_fz *f)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.options = P4E_FZ_ONCE, .match_id = P4E_ID_ANY,
		.match_bits = p4e_fz_bits[15], .length = 8,
	};
	uint64_t me;
	int i;

	for (i = 0; i < 15; i++) {
		d.start = p4e_fz_buf_new(f, 8, false);
		d.ignore_bits = 1ULL << (40 + i);
		if (d.start && !p4e_me_append(f->ni[1], P4E_FZ_PT_ONCE, &d,
					      P4E_PRIORITY_LIST, NULL, 0, &me))
			p4e_fz_add(f->mes, &f->nmes, P4E_FZ_MAX_MES, me);
	}
}

/* Counters on B's entries fire: a put back to A, an append, an increment. */
static void p4e_fz_b_triggers(struct p4e_fz *f)
{
	struct p4e_trig trig = { .ct = f->ct[0], .threshold = 2 };
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.options = P4E_FZ_ONCE | P4E_ME_UH_COPY,
		.match_id = P4E_ID_ANY, .ignore_bits = ~P4E_FZ_PARK_BIT,
		.length = 64,
	};
	struct p4e_xfer x = {
		.md = f->md[3], .length = 32, .ack_req = P4E_ACK_REQ,
		.target = p4e_fz_name_of(f, 0), .pt_index = f->a_pt,
		.get_md = P4E_HANDLE_NONE,
	};
	struct p4e_ct_event one = { .success = 1 };
	uint64_t me;

	d.start = p4e_fz_buf_new(f, 64, false);
	p4e_trig_me_append(f->ni[1], P4E_FZ_PT_TAG, &d, P4E_PRIORITY_LIST,
			   NULL, 0, &trig, &me);
	trig.threshold = 3;
	p4e_trig_put(f->ni[1], &x, &trig);
	trig.threshold = 1;
	p4e_trig_ct_inc(f->dom, f->ct[1], one, &trig);
}

static void p4e_fz_setup_b(struct p4e_fz *f)
{
	static const unsigned opts[P4E_FZ_NPT] = {
		[P4E_FZ_PT_FLOW] = P4E_PT_FLOWCTRL,
		[P4E_FZ_PT_RESEND] = P4E_PT_FC_RESEND,
		[P4E_FZ_PT_ONCE] = P4E_PT_ONLY_USE_ONCE |
				   P4E_PT_ONLY_TRUNCATE |
				   P4E_PT_MATCH_UNORDERED,
		[P4E_FZ_PT_OFF] = P4E_PT_ALLOC_DISABLED,
	};
	struct p4e_eq *eq;
	uint32_t i, index;

	for (i = 0; i < P4E_FZ_NPT; i++) {
		eq = i == P4E_FZ_PT_FLOW ? f->eq[2] :
		     i == P4E_FZ_PT_NOEQ ? NULL : f->eq[1];
		p4e_fz_check(p4e_pt_alloc(f->ni[1], opts[i], eq, i, &index),
			     "pt alloc");
	}
	for (i = 0; i < P4U_ARRAY_SIZE(p4e_fz_b_mes); i++)
		p4e_fz_me(f, 1, p4e_fz_b_mes[i].pt, &p4e_fz_b_mes[i]);
	p4e_fz_b_masks(f);
	p4e_fz_b_triggers(f);
}

static void p4e_fz_setup_mds(struct p4e_fz *f)
{
	struct p4e_md_desc d = { .eq = f->eq[0], .ct = f->ct[2] };

	d.start = p4e_fz_buf_new(f, 2048, false);
	d.length = 2048;
	d.options = P4E_MD_EVENT_CT_ACK | P4E_MD_EVENT_CT_REPLY |
		    P4E_MD_EVENT_CT_BYTES;
	p4e_fz_check(p4e_md_bind(f->ni[0], &d, &f->md[0]), "md");
	d.start = p4e_fz_iov_new(f, 1024);
	d.length = 3;
	d.options = P4E_MD_IOVEC;
	p4e_fz_check(p4e_md_bind(f->ni[0], &d, &f->md[1]), "iovec md");
	d.start = p4e_fz_buf_new(f, 256, false);
	d.length = 256;
	d.options = P4E_MD_EVENT_CT_REPLY;
	p4e_fz_check(p4e_md_bind(f->ni[0], &d, &f->md[2]), "fetch md");
	d.start = p4e_fz_buf_new(f, 64, false);
	d.length = 64;
	d.options = 0;
	d.eq = f->eq[1];
	d.ct = P4E_HANDLE_NONE;
	p4e_fz_check(p4e_md_bind(f->ni[1], &d, &f->md[3]), "b md");
}

/* An operation: P4W_* kind, MD index, bits index (A's MDs, B's PTs). */
struct p4e_fz_op {
	uint8_t kind;
	uint8_t md;
	uint16_t len;
	uint16_t loff;
	uint8_t pt;
	uint8_t bits;
	uint8_t ack;
	uint8_t aop;
	uint8_t atype;
	uint16_t roff;
	unsigned flags;		/* P4E_XFER_* */
};

/* One operation from side (0: A to B's PT; 1: B to A's); may fail. */
static void p4e_fz_post(struct p4e_fz *f, int side, const struct p4e_fz_op *o)
{
	static int (*const post[])(struct p4e_ni *, const struct p4e_xfer *) = {
		[P4W_PUT] = p4e_put, [P4W_GET] = p4e_get,
		[P4W_ATOMIC] = p4e_atomic, [P4W_FETCH] = p4e_fetch_atomic,
		[P4W_SWAP] = p4e_swap,
	};
	static uint8_t operand[2048];
	struct p4e_xfer x = {
		.md = f->md[o->md], .local_offset = o->loff, .length = o->len,
		.ack_req = o->ack, .target = p4e_fz_name_of(f, !side),
		.pt_index = side ? f->a_pt : o->pt,
		.match_bits = p4e_fz_bits[o->bits % 16],
		.remote_offset = o->roff, .get_md = f->md[2],
		.operand = operand, .atomic_op = o->aop,
		.atomic_type = o->atype, .flags = o->flags,
	};

	post[o->kind](f->ni[side], &x);
}

/* Two rendezvous puts that park at B as header-only unexpected messages
 * (ops 0 and 1, exposures 0 and 1), ... */
static const struct p4e_fz_op p4e_fz_a_parked[] = {
	{ P4W_PUT, 0, 600, 0, P4E_FZ_PT_TAG, 10, P4E_ACK_REQ, 0, 0, 0 },
	{ P4W_PUT, 0, 700, 100, P4E_FZ_PT_TAG, 11, P4E_ACK_ACCEPT, 0, 0, 0 },
};

/* ... then seven left in flight (ops 2..8; op 4 pushes: exposure 2). */
static const struct p4e_fz_op p4e_fz_a_flying[] = {
	{ P4W_PUT, 0, 8, 0, P4E_FZ_PT_TAG, 3, P4E_ACK_REQ, 0, 0, 0 },
	{ P4W_GET, 1, 16, 0, P4E_FZ_PT_RMA, 12, 0, 0, 0, 0 },
	{ P4W_GET, 0, 600, 1000, P4E_FZ_PT_RMA, 12, 0, 0, 0, 0 },
	{ P4W_ATOMIC, 0, 8, 0, P4E_FZ_PT_RMA, 12, P4E_ACK_REQ, P4E_SUM,
	  P4E_INT32, 0 },
	{ P4W_FETCH, 0, 8, 8, P4E_FZ_PT_RMA, 12, 0, P4E_MAX, P4E_INT64, 0 },
	{ P4W_SWAP, 0, 4, 16, P4E_FZ_PT_RMA, 12, 0, P4E_CSWAP, P4E_UINT32, 0 },
	{ P4W_PUT, 0, 4, 0, P4E_FZ_PT_NOEQ, 12, P4E_CT_ACK_REQ, 0, 0, 0 },
};

static void p4e_fz_setup_a(struct p4e_fz *f)
{
	static const struct p4e_fz_me_init mes[] = {
		{ 0, P4E_FZ_PRIO, 12, 3, P4E_FZ_RW, 128, 0 },
		{ 0, P4E_FZ_OFLOW, 12, 3,
		  P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL, 128, 0 },
	};
	size_t i;

	p4e_fz_check(p4e_pt_alloc(f->ni[0], 0, f->eq[0], P4E_PT_ANY,
				  &f->a_pt), "pt A");
	for (i = 0; i < P4U_ARRAY_SIZE(mes); i++)
		p4e_fz_me(f, 0, f->a_pt, &mes[i]);
	p4e_fz_setup_mds(f);
}

static void p4e_fz_open(struct p4e_fz *f, enum p4e_fz_cfg cfg)
{
	uint32_t map[2];
	size_t i;

	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	for (i = 0; i < 2; i++) {
		f->unknown[i].sin_family = AF_INET;
		f->unknown[i].sin_port = htons((uint16_t)(7 + i));
		f->unknown[i].sin_addr.s_addr = htonl(0x0aff0001u + i);
	}
	p4e_fz_check(p4e_dom_create(NULL, &f->dom), "dom");
	p4e_fz_check(p4e_fz_ni_open(f, 0), "ni A");
	p4e_fz_check(p4e_fz_ni_open(f, 1), "ni B");
	if (cfg == P4E_FZ_CFG_LOGICAL) {
		map[0] = f->id[0];
		map[1] = f->id[1];
		p4e_fz_check(p4e_ni_set_map(f->ni[0], map, 2), "map A");
		p4e_fz_check(p4e_ni_set_map(f->ni[1], map, 2), "map B");
	}
	p4e_fz_check(p4e_eq_ring_create(64, &f->eq[0]), "eq");
	p4e_fz_check(p4e_eq_ring_create(64, &f->eq[1]), "eq");
	p4e_fz_check(p4e_eq_ring_create(4, &f->eq[2]), "eq");
	for (i = 0; i < P4E_FZ_NCT; i++)
		p4e_fz_check(p4e_ct_alloc(f->dom, &f->ct[i]), "ct");
	p4e_fz_setup_a(f);
	p4e_fz_setup_b(f);
	for (i = 0; i < P4U_ARRAY_SIZE(p4e_fz_a_parked); i++)
		p4e_fz_post(f, 0, &p4e_fz_a_parked[i]);
	p4e_fz_progress(f);
	p4e_fz_drain(f);
	for (i = 0; i < P4U_ARRAY_SIZE(p4e_fz_a_flying); i++)
		p4e_fz_post(f, 0, &p4e_fz_a_flying[i]);
	p4e_fz_ops_scan(f);
}

static void p4e_fz_close(struct p4e_fz *f)
{
	struct p4t_loop_stats st;
	int64_t sr[P4E_SR_LAST];
	int i, j;

	for (i = 0; p4e_fz_log_on && i < 2; i++) {
		for (j = 0; j < P4E_SR_LAST; j++)
			p4e_ni_status(f->ni[i], j, &sr[j]);
		p4t_loop_stats_get(f->ni[i]->iface, &st);
		fprintf(stderr, "ni %c: dropped %lld perm %lld op %lld "
			"malformed %lld flowctrl %lld; delivered %llu "
			"injected %llu\n", 'A' + i, (long long)sr[0],
			(long long)sr[1], (long long)sr[2], (long long)sr[3],
			(long long)sr[4],
			(unsigned long long)st.msgs_delivered,
			(unsigned long long)st.msgs_injected);
	}
	for (i = 0; i < 2; i++)
		p4e_fz_check(p4e_ni_destroy(f->ni[i]), "ni destroy");
	for (i = 0; i < P4E_FZ_NEQ; i++)
		p4e_eq_ring_destroy(f->eq[i]);
	p4e_fz_check(p4e_dom_destroy(f->dom), "dom destroy");
	p4e_fz_bufs_check_free(f);
}

/* ---- messages ------------------------------------------------------------ */

static const struct sockaddr_in *p4e_fz_src_addr(struct p4e_fz *f, int dst,
						 enum p4e_fz_src src)
{
	switch (src) {
	case P4E_FZ_SRC_PEER:
		return &f->addr[!dst];
	case P4E_FZ_SRC_SELF:
		return &f->addr[dst];
	case P4E_FZ_SRC_UNKNOWN1:
		return &f->unknown[0];
	default:
		return &f->unknown[1];
	}
}

/* ni's state for the peer at a, if it has any (no peer id is made). */
static struct p4e_npeer *p4e_fz_npeer(struct p4e_ni *ni,
				      const struct sockaddr_in *a)
{
	struct p4e_dom *dom = ni->dom;
	struct p4e_peer_addr *pa;
	uint32_t i;

	for (i = 0; i < dom->npeers; i++) {
		pa = dom->peers[i];
		if (pa->addrlen == sizeof(*a) &&
		    !memcmp(pa->addr, a, sizeof(*a)))
			return i < ni->npeers_cap ? ni->npeers[i] : NULL;
	}
	return NULL;
}

/*
 * The seq the receiver accepts next from src: its rx_expect, or, from the
 * other NI, that NI's next seq if later (its requests still on the way
 * get there first), plus the fixed-up requests queued since.
 */
static uint32_t p4e_fz_seq_expect(struct p4e_fz *f, int dst,
				  enum p4e_fz_src src)
{
	const struct sockaddr_in *a = p4e_fz_src_addr(f, dst, src);
	struct p4e_npeer *np = p4e_fz_npeer(f->ni[dst], a), *snp;
	uint32_t seq = np ? np->rx_expect : 0;

	if (src == P4E_FZ_SRC_PEER) {
		snp = p4e_fz_npeer(f->ni[!dst], &f->addr[dst]);
		if (snp && p4e_seq_before(seq, snp->tx_seq))
			seq = snp->tx_seq;
	}
	return seq + f->pending[dst][src];
}

/* Symbolic op ids and cookie keys (below 256) become real ones. */
static void p4e_fz_symbolic(struct p4e_fz *f, uint8_t *msg, size_t len)
{
	const size_t body = sizeof(struct p4w_hdr);
	size_t off = body + sizeof(struct p4w_req);
	uint64_t v;
	int i;

	if (len < body + sizeof(struct p4w_resp))
		return;
	v = p4e_fz_le_get(msg + body, 8);
	if (v < 256 && f->nops)
		p4e_fz_le_put(msg + body, f->ops[v % f->nops], 8);
	if (!p4w_type_is_seq(msg[1]) || len < off)
		return;
	for (i = 0; i < 2; i++) {
		/* proto RDZV: a source cookie; rflags PUSH: a sink cookie */
		if (!(i ? msg[body + offsetof(struct p4w_req, rflags)] &
			  P4W_RF_PUSH :
			  msg[body + offsetof(struct p4w_req, proto)] ==
			  P4W_PROTO_RDZV))
			continue;
		if (len < off + sizeof(struct p4w_cookie))
			return;
		v = p4e_fz_le_get(msg + off + 8, 8);
		if (v < 256 && f->ncookies)
			p4e_fz_le_put(msg + off + 8,
				      f->cookies[v % f->ncookies], 8);
		off += sizeof(struct p4w_cookie);
	}
}

static void p4e_fz_message(struct p4e_fz *f, uint8_t ctl, const uint8_t *data,
			   size_t len)
{
	int dst = (ctl & 3) == P4E_FZ_ROUTE_TO_A ? 0 : 1;
	enum p4e_fz_src src = P4E_FZ_SRC_PEER;
	uint8_t *msg;

	if ((ctl & 3) == P4E_FZ_ROUTE_OTHER) {
		dst = p4e_fz_routes[ctl >> 5].dst;
		src = p4e_fz_routes[ctl >> 5].src;
	}
	msg = malloc(len ? len : 1);
	if (!msg)
		return;
	memcpy(msg, data, len);
	if (!(ctl & P4E_FZ_CTL_RAW) && len >= sizeof(struct p4w_hdr)) {
		p4e_fz_le_put(msg + offsetof(struct p4w_hdr, length), len, 4);
		if (p4w_type_is_seq(msg[1])) {
			p4e_fz_le_put(msg + offsetof(struct p4w_hdr, seq),
				      p4e_fz_seq_expect(f, dst, src), 4);
			f->pending[dst][src]++;
		}
	}
	p4e_fz_symbolic(f, msg, len);
	p4t_loop_inject(f->ni[dst]->iface, p4e_fz_src_addr(f, dst, src),
			sizeof(struct sockaddr_in), msg, len);
	free(msg);
}

/* ---- API actions --------------------------------------------------------- */

/* The common masks, or one of 240 others (past 16 masks: the slow list). */
static uint64_t p4e_fz_ignore(uint8_t v)
{
	return v < 16 ? p4e_fz_ignores[v % 8] : (uint64_t)v << (v % 48);
}

static unsigned p4e_fz_me_options(uint8_t lo, uint8_t hi)
{
	unsigned bits = lo | (unsigned)hi << 8, opt = 0, i;

	for (i = 0; i < 16; i++)
		if (bits & (1u << i))
			opt |= p4e_fz_me_flags[i];
	return opt;
}

static void p4e_fz_act_append(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = (a[7] & 4) ? f->ct[0] : P4E_HANDLE_NONE,
		.uid = !(a[7] & 8) ? P4E_UID_ANY : (a[7] & 16) ? 1000 : 4321,
		.options = p4e_fz_me_options(a[3], a[4]),
		.match_id = (a[7] & 1) ? P4E_ID_ANY : p4e_fz_name_of(f, 0),
		.match_bits = p4e_fz_bits[a[1] % 16],
		.ignore_bits = p4e_fz_ignore(a[2]),
		.min_free = a[6],
	};
	size_t len = (size_t)a[5] * 4;
	uint64_t me;

	if (a[7] & 2) {
		d.options |= P4E_ME_IOVEC;
		d.start = p4e_fz_iov_new(f, len);
		d.length = 3;
	} else {
		d.start = p4e_fz_buf_new(f, len, false);
		d.length = len;
	}
	if (d.start &&
	    !p4e_me_append(f->ni[1], (a[0] & 0x7f) % P4E_FZ_NPT, &d,
			   (a[0] & 0x80) ? P4E_OVERFLOW_LIST :
					   P4E_PRIORITY_LIST,
			   NULL, a[6], &me))
		p4e_fz_add(f->mes, &f->nmes, P4E_FZ_MAX_MES, me);
}

static void p4e_fz_act_search(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.match_id = (a[4] & 1) ? P4E_ID_ANY : p4e_fz_name_of(f, 0),
		.match_bits = p4e_fz_bits[a[1] % 16],
		.ignore_bits = p4e_fz_ignore(a[2]),
	};

	p4e_me_search(f->ni[1], a[0] % P4E_FZ_NPT, &d, a[3] % 3, NULL, 0);
}

static void p4e_fz_act_uh(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.options = p4e_fz_me_options(a[3], a[4]) & ~P4E_ME_IOVEC,
		.match_id = P4E_ID_ANY, .length = (uint64_t)a[5] * 4,
	};
	uint64_t uh;

	if (!f->nuhs)
		return;
	uh = f->uhs[a[0] % f->nuhs];
	if (a[1] & 1) {
		p4e_uh_discard(f->ni[1], uh);
		return;
	}
	d.start = p4e_fz_buf_new(f, d.length, false);
	if (d.start)
		p4e_uh_deliver(f->ni[1], uh, &d, NULL, 0);
}

static void p4e_fz_act_post(struct p4e_fz *f, const uint8_t *a)
{
	static const uint8_t kinds[7] = {
		P4W_PUT, P4W_GET, P4W_ATOMIC, P4W_FETCH, P4W_SWAP, P4W_PUT,
		P4W_GET,
	};
	int kind = (a[0] & 0x7f) % 7, side = a[0] >> 7;
	struct p4e_fz_op o = {
		.kind = kinds[kind], .md = side ? 3 : kind >= 5 ? 1 : 0,
		.len = (uint16_t)(a[4] * 8), .pt = a[1] % P4E_FZ_NPT,
		.bits = a[2], .ack = a[3] % P4E_ACK_REQ_MAX,
		.aop = a[6] % P4E_ATOMIC_OP_MAX,
		.atype = a[7] % P4E_ATOMIC_TYPE_MAX,
		.roff = (uint16_t)(a[5] * 4),
		.flags = (a[2] & 16) ? P4E_XFER_HDR_DATA : 0,
	};

	if (side)
		o.len = P4U_MIN(o.len, 64);	/* B's MD */
	p4e_fz_post(f, side, &o);
	p4e_fz_ops_scan(f);
}

static void p4e_fz_action(struct p4e_fz *f, uint8_t code, const uint8_t *a)
{
	struct p4e_ct_event inc = { .success = a[1], .failure = a[2] & 1 };
	struct p4t_iface *iface = f->ni[a[0] & 1]->iface;

	switch (code % P4E_FZ_NACT) {
	case P4E_FZ_ACT_APPEND:
		p4e_fz_act_append(f, a);
		break;
	case P4E_FZ_ACT_UNLINK:
		if (a[1] & 2)	/* setup entries have user_ptr pt + 1 */
			p4e_me_cancel(f->ni[1], a[0] % P4E_FZ_NPT,
				      (a[1] & 4) ? NULL : (void *)(uintptr_t)
				      (a[0] % P4E_FZ_NPT + 1));
		else if (f->nmes)
			p4e_me_unlink(f->ni[1], f->mes[a[0] % f->nmes],
				      (a[1] & 1) ? P4E_UNLINK_CANCEL : 0);
		break;
	case P4E_FZ_ACT_SEARCH:
		p4e_fz_act_search(f, a);
		break;
	case P4E_FZ_ACT_UH:
		p4e_fz_act_uh(f, a);
		break;
	case P4E_FZ_ACT_PT:
		if (a[1] & 1)
			p4e_pt_enable(f->ni[1], a[0] % P4E_FZ_NPT);
		else
			p4e_pt_disable(f->ni[1], a[0] % P4E_FZ_NPT);
		break;
	case P4E_FZ_ACT_POST:
		p4e_fz_act_post(f, a);
		break;
	case P4E_FZ_ACT_CT:
		p4e_ct_inc(f->dom, f->ct[a[0] % P4E_FZ_NCT], inc);
		break;
	case P4E_FZ_ACT_LINK:
		p4t_loop_fail_link(iface, &f->addr[!(a[0] & 1)],
				   sizeof(f->addr[0]), -FI_ECONNRESET);
		break;
	case P4E_FZ_ACT_STEP:
		p4e_ni_progress(f->ni[a[0] & 1], a[1] % 4 + 1);
		break;
	case P4E_FZ_ACT_HOLD:
		p4t_loop_hold(iface, a[1] & 1);
		break;
	default:
		p4t_loop_set_queue_limit(iface, (size_t)a[1] * 64);
		break;
	}
}

/* ---- the target ---------------------------------------------------------- */

static void p4e_fz_run(struct p4e_fz *f, const uint8_t *data, size_t size)
{
	uint8_t ctl, args[1 + P4E_FZ_ACT_ARGS];
	size_t len;

	while (size) {
		ctl = data[0];
		if ((ctl & 3) == P4E_FZ_ROUTE_ACTION) {
			memset(args, 0, sizeof(args));
			len = P4U_MIN(size - 1, sizeof(args));
			memcpy(args, data + 1, len);
			p4e_fz_action(f, args[0], args + 1);
			data += 1 + len;
			size -= 1 + len;
		} else {
			if (size < 3)
				break;
			len = (data[1] | (size_t)data[2] << 8) & 0x1fff;
			len = P4U_MIN(len, size - 3);
			p4e_fz_message(f, ctl, data + 3, len);
			data += 3 + len;
			size -= 3 + len;
		}
		if (!(ctl & P4E_FZ_CTL_HOLD))
			p4e_fz_progress(f);
		if (!(ctl & P4E_FZ_CTL_KEEP))
			p4e_fz_drain(f);
	}
	p4t_loop_hold(f->ni[0]->iface, false);
	p4t_loop_hold(f->ni[1]->iface, false);
	p4e_fz_progress(f);
	p4e_fz_drain(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct p4e_fz *f = &p4e_fz_state;

	if (!init) {
		const char *env = getenv("FUZZ_TARGET_LOG");

		p4e_fz_log_on = env && *env == '1';
		p4u_log_set_sink(p4e_fz_log_enabled, p4e_fz_log_write);
		init = true;
	}
	if (!size)
		return 0;
	p4e_fz_open(f, data[0] % P4E_FZ_NCFG);
	p4e_fz_run(f, data + 1, size - 1);
	p4e_fz_close(f);
	return 0;
}
