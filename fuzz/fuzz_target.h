/*
 * fuzz_target.h - what the two files of fuzz/fuzz_target share:
 *
 *   fuzz_target.c        the input format and its decoding (messages with
 *                        their fix-ups, API actions), guarded buffers and
 *                        the checks on events, progress, the entry point
 *   fuzz_target_setup.c  each input's world: domain, NIs, PTs, entries,
 *                        MDs, counters and triggered operations, parked
 *                        and in-flight operations; its teardown
 *
 * Here: the layout gen_corpus_target.c copies (configurations, B's PTs,
 * match bits and ignore masks, append options, routes, actions), the
 * state of one input (struct p4e_fz) and the functions each file offers
 * the other. Built into fuzz/fuzz_target only (see Makefile.am).
 */
#ifndef FUZZ_TARGET_H
#define FUZZ_TARGET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "p4e.h"

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

/* ---- fuzz_target.c ------------------------------------------------------- */

extern bool p4e_fz_log_on;	/* FUZZ_TARGET_LOG=1 */

void *p4e_fz_buf_new(struct p4e_fz *f, size_t len, bool iov);
void p4e_fz_bufs_check_free(struct p4e_fz *f);
struct iovec *p4e_fz_iov_new(struct p4e_fz *f, size_t len);
void p4e_fz_add(uint64_t *tab, unsigned *n, unsigned max, uint64_t v);
void p4e_fz_ops_scan(struct p4e_fz *f);
void p4e_fz_drain(struct p4e_fz *f);
void p4e_fz_progress(struct p4e_fz *f);

/* ---- fuzz_target_setup.c ------------------------------------------------- */

uint32_t p4e_fz_name_of(struct p4e_fz *f, int side);
void p4e_fz_post(struct p4e_fz *f, int side, const struct p4e_fz_op *o);
void p4e_fz_open(struct p4e_fz *f, enum p4e_fz_cfg cfg);
void p4e_fz_close(struct p4e_fz *f);

#endif /* FUZZ_TARGET_H */
