/*
 * gen_corpus_target.c - writes the seed corpus of fuzz/fuzz_target into a
 * directory: valid messages of every engine type (PUT eager and
 * rendezvous, GET with and without push, ATOMIC, FETCH, SWAP, ACK, REPLY
 * plain and pushed, SEQ_ACK, NACK, RESUME) aimed at the entries, PTs and
 * operations fuzz_target_setup.c sets up, each in the input format
 * described at the top of fuzz_target.c ([configuration][records...]),
 * scenarios that need API actions between messages (unexpected message
 * then append, claim then deliver, flow control and resume, link
 * failure, triggered operations, operations posted mid-input), and one
 * stream of every single-message seed.
 *
 * Not part of the build; the checked-in fuzz/corpus/target was made with
 *   cc -DHAVE_CONFIG_H -I$BUILDDIR -Iinclude fuzz/gen_corpus_target.c \
 *      prov/portals/engine/p4e_wire.c -o gen_corpus_target
 *   rm -rf fuzz/corpus/target && mkdir fuzz/corpus/target
 *   ./gen_corpus_target fuzz/corpus/target
 * Packing goes through p4e_wire.c itself, so the seeds follow the layout.
 * The PT numbers, match bits, routes and action codes below copy those of
 * fuzz_target.h, the operation numbers those of fuzz_target_setup.c: keep
 * them in sync.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4e.h"
#include "p4_wire.h"

/* ---- copied from fuzz_target.h and fuzz_target_setup.c ---------------- */

enum { P4E_FZ_CFG_PLAIN, P4E_FZ_CFG_TIGHT, P4E_FZ_CFG_LOGICAL,
       P4E_FZ_CFG_NOMATCH };
enum { P4E_FZ_PT_TAG, P4E_FZ_PT_FLOW, P4E_FZ_PT_RESEND, P4E_FZ_PT_ONCE,
       P4E_FZ_PT_OFF, P4E_FZ_PT_NOEQ, P4E_FZ_PT_RMA };
/* ctl: route | flags; P4E_FZ_OTHER(n) is route 3 with p4e_fz_routes[n] */
#define P4E_FZ_TO_B		0
#define P4E_FZ_TO_A		1
#define P4E_FZ_ACTION		2
#define P4E_FZ_OTHER(n)		(3 | (n) << 5)
#define P4E_FZ_B_SELF		P4E_FZ_OTHER(0)
#define P4E_FZ_B_UNKNOWN	P4E_FZ_OTHER(1)
#define P4E_FZ_A_UNKNOWN	P4E_FZ_OTHER(2)
#define P4E_FZ_CTL_RAW		0x04
#define P4E_FZ_CTL_HOLD		0x08
#define P4E_FZ_CTL_KEEP		0x10
enum { P4E_FZ_ACT_APPEND, P4E_FZ_ACT_UNLINK, P4E_FZ_ACT_SEARCH,
       P4E_FZ_ACT_UH, P4E_FZ_ACT_PT, P4E_FZ_ACT_POST, P4E_FZ_ACT_CT,
       P4E_FZ_ACT_LINK, P4E_FZ_ACT_STEP, P4E_FZ_ACT_HOLD,
       P4E_FZ_ACT_QLIMIT };
/* p4e_fz_bits[] index of 0x1112 (no TAG priority entry); ignores[] 0 */
#define P4E_FZ_BI_OTHER		14
#define P4E_FZ_IG_NONE		0
#define P4E_FZ_IG_ALL		3
/* p4e_fz_me_flags[] bit numbers */
#define P4E_FZ_MF_PUT		0
#define P4E_FZ_MF_GET		1
#define P4E_FZ_MF_ONCE		2
#define P4E_FZ_MF_UH_COPY	13
/* A's operations (symbolic op ids) and exposures (symbolic cookie keys) */
enum { P4E_FZ_OP_PARK1, P4E_FZ_OP_PARK2, P4E_FZ_OP_PUT, P4E_FZ_OP_GET,
       P4E_FZ_OP_GET_PUSH, P4E_FZ_OP_ATOMIC, P4E_FZ_OP_FETCH,
       P4E_FZ_OP_SWAP, P4E_FZ_OP_CT_PUT };
enum { P4E_FZ_EXP_PARK1, P4E_FZ_EXP_PARK2, P4E_FZ_EXP_GET_PUSH };

#define P4E_FZ_BITS_EXACT	0x1111ULL
#define P4E_FZ_BITS_OMPI_SYNC	0x0005000100000022ULL
#define P4E_FZ_BITS_LOW	0x3312ULL
#define P4E_FZ_BITS_ML		0x4444ULL
#define P4E_FZ_BITS_NOTRUNC	0x5555ULL
#define P4E_FZ_BITS_IOV		0x6666ULL
#define P4E_FZ_BITS_UID		0x7777ULL
#define P4E_FZ_BITS_GETONLY	0x8888ULL
#define P4E_FZ_BITS_VIRT	0x9999ULL
#define P4E_FZ_BITS_OTHER	0x1112ULL

/* ---- messages ----------------------------------------------------------- */

struct p4e_gen_msg {
	struct p4w_hdr hdr;
	size_t len;
	uint8_t buf[1024];
};

static uint8_t *p4e_gen_room(struct p4e_gen_msg *m, size_t n)
{
	uint8_t *p = m->buf + m->len;

	if (m->len + n > sizeof(m->buf))
		abort();
	m->len += n;
	return p;
}

static void p4e_gen_begin(struct p4e_gen_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->hdr.version = P4W_VERSION;
	m->hdr.type = type;
	m->len = sizeof(struct p4w_hdr);
}

/* Finish with n payload bytes (seq is fixed up by the fuzzer). */
static void p4e_gen_end(struct p4e_gen_msg *m, size_t n, uint8_t seed)
{
	uint8_t *p = p4e_gen_room(m, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i);
	m->hdr.length = (uint32_t)m->len;
	p4w_hdr_pack(m->buf, &m->hdr);
}

static struct p4w_req p4e_gen_req(uint32_t pt, uint64_t bits,
				  uint64_t rlength, uint8_t ack,
				  uint64_t op_id)
{
	struct p4w_req req = {
		.op_id = op_id, .match_bits = bits, .rlength = rlength,
		.pt_index = pt, .uid = 1000, .ack_req = ack,
		.proto = P4W_PROTO_EAGER, .hdr_data = 0x5eed,
		.rflags = P4W_RF_HDR_DATA,
	};

	return req;
}

/* A request; cookie keys are symbolic exposure numbers (-1: none). */
static void p4e_gen_request(struct p4e_gen_msg *m, uint8_t type,
			    const struct p4w_req *req, int src_key,
			    int dst_key, size_t plen)
{
	struct p4w_cookie c = { .length = req->rlength };

	p4e_gen_begin(m, type);
	p4w_req_pack(p4e_gen_room(m, sizeof(*req)), req);
	if (src_key >= 0) {
		c.key = (uint64_t)src_key;
		p4w_cookie_pack(p4e_gen_room(m, sizeof(c)), &c);
	}
	if (dst_key >= 0) {
		c.key = (uint64_t)dst_key;
		p4w_cookie_pack(p4e_gen_room(m, sizeof(c)), &c);
	}
	p4e_gen_end(m, plen, 0x30);
}

static void p4e_gen_put(struct p4e_gen_msg *m, uint32_t pt, uint64_t bits,
			size_t len, uint8_t ack)
{
	struct p4w_req req = p4e_gen_req(pt, bits, len, ack, P4E_FZ_OP_PUT);

	p4e_gen_request(m, P4W_PUT, &req, -1, -1, len);
}

/* An atomic, fetch or swap on B's RMA PT. */
static void p4e_gen_atomic(struct p4e_gen_msg *m, uint8_t type, uint8_t op,
			   uint8_t dtype, size_t len, uint64_t roff)
{
	uint64_t op_id = type == P4W_ATOMIC ? P4E_FZ_OP_ATOMIC :
			 type == P4W_FETCH ? P4E_FZ_OP_FETCH : P4E_FZ_OP_SWAP;
	struct p4w_req req = p4e_gen_req(P4E_FZ_PT_RMA, 0, len, P4E_ACK_REQ,
					 op_id);
	bool compare = type == P4W_SWAP && op >= P4E_CSWAP &&
		       op <= P4E_MSWAP;

	req.atomic_op = op;
	req.atomic_type = dtype;
	req.remote_offset = roff;
	p4e_gen_request(m, type, &req, -1, -1, compare ? 2 * len : len);
}

static void p4e_gen_resp(struct p4e_gen_msg *m, uint8_t type,
			 uint64_t op_id, uint64_t mlength, uint8_t fail,
			 bool pushed, size_t dlen)
{
	struct p4w_resp resp = {
		.op_id = op_id, .mlength = mlength, .fail = fail,
		.pushed = pushed,
	};

	p4e_gen_begin(m, type);
	m->hdr.flags = P4W_F_ACK_SEQ;
	m->hdr.ack_seq = 2;
	p4w_resp_pack(p4e_gen_room(m, sizeof(resp)), &resp);
	p4e_gen_end(m, dlen, 0x60);
}

static void p4e_gen_fc(struct p4e_gen_msg *m, uint8_t type, uint32_t seq)
{
	struct p4w_fc fc = { .seq = seq };

	p4e_gen_begin(m, type);
	if (type != P4W_SEQ_ACK)
		p4w_fc_pack(p4e_gen_room(m, sizeof(fc)), &fc);
	m->hdr.flags = P4W_F_ACK_SEQ;
	m->hdr.ack_seq = seq;
	p4e_gen_end(m, 0, 0);
}

/* ---- seeds -------------------------------------------------------------- */

struct p4e_gen_seed {
	size_t len;
	uint8_t buf[8192];
};

static const char *p4e_gen_dir;
static struct p4e_gen_seed p4e_gen_all;	/* single-message seeds, chained */

static void p4e_gen_seed_begin(struct p4e_gen_seed *s, uint8_t cfg)
{
	s->len = 1;
	s->buf[0] = cfg;
}

static void p4e_gen_seed_bytes(struct p4e_gen_seed *s, const void *p,
			       size_t n)
{
	if (s->len + n > sizeof(s->buf))
		abort();
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void p4e_gen_seed_msg(struct p4e_gen_seed *s, uint8_t ctl,
			     const struct p4e_gen_msg *m)
{
	uint8_t rec[3] = { ctl, (uint8_t)m->len, (uint8_t)(m->len >> 8) };

	p4e_gen_seed_bytes(s, rec, sizeof(rec));
	p4e_gen_seed_bytes(s, m->buf, m->len);
}

static void p4e_gen_seed_act(struct p4e_gen_seed *s, uint8_t code,
			     const uint8_t args[8])
{
	uint8_t rec[2] = { P4E_FZ_ACTION, code };

	p4e_gen_seed_bytes(s, rec, sizeof(rec));
	p4e_gen_seed_bytes(s, args, 8);
}

static void p4e_gen_seed_write(const char *name,
			       const struct p4e_gen_seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", p4e_gen_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A seed of one message (also chained into the stream seed). */
static void p4e_gen_one(const char *name, uint8_t cfg, uint8_t ctl,
			const struct p4e_gen_msg *m)
{
	struct p4e_gen_seed s;

	p4e_gen_seed_begin(&s, cfg);
	p4e_gen_seed_msg(&s, ctl, m);
	p4e_gen_seed_write(name, &s);
	if (cfg == P4E_FZ_CFG_PLAIN)
		p4e_gen_seed_msg(&p4e_gen_all, ctl, m);
}

/* Append a USE_ONCE | UH_COPY priority entry at B. */
static void p4e_gen_act_append(struct p4e_gen_seed *s, uint8_t pt,
			       uint8_t bits, uint8_t len4)
{
	uint8_t a[8] = {
		pt, bits, P4E_FZ_IG_NONE,
		1 << P4E_FZ_MF_PUT | 1 << P4E_FZ_MF_GET | 1 << P4E_FZ_MF_ONCE,
		1 << (P4E_FZ_MF_UH_COPY - 8), len4, 0, 1,
	};

	p4e_gen_seed_act(s, P4E_FZ_ACT_APPEND, a);
}

static void p4e_gen_puts(void)
{
	static const struct {
		const char *name;
		uint8_t cfg, ctl, ack;
		uint32_t pt;
		uint64_t bits;
		size_t len;
	} puts[] = {
		{ "put_exact", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, P4E_ACK_REQ,
		  P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16 },
		{ "put_exact_logical", P4E_FZ_CFG_LOGICAL, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16 },
		{ "put_exact_nomatch", P4E_FZ_CFG_NOMATCH, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16 },
		{ "put_unknown_src", P4E_FZ_CFG_PLAIN, P4E_FZ_B_UNKNOWN,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16 },
		{ "put_ompi_sync", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_NO_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_OMPI_SYNC, 100 },
		{ "put_ignore_low_trunc", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_ACCEPT, P4E_FZ_PT_TAG, P4E_FZ_BITS_LOW, 300 },
		{ "put_no_truncate", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_NOTRUNC, 64 },
		{ "put_uid_violation", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_UID, 8 },
		{ "put_op_violation", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_TAG, P4E_FZ_BITS_GETONLY, 8 },
		{ "put_pt_noeq", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_CT_ACK_REQ, P4E_FZ_PT_NOEQ, 0, 24 },
		{ "put_pt_once", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_OC_ACK_REQ, P4E_FZ_PT_ONCE, 7, 40 },
		{ "put_pt_disabled", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_REQ, P4E_FZ_PT_OFF, 7, 8 },
		{ "put_pt_invalid", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B,
		  P4E_ACK_REQ, 40, 7, 8 },
		{ "put_to_a", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, P4E_ACK_REQ, 0,
		  0x77, 32 },
	};
	struct p4e_gen_msg m;
	struct p4w_req req;
	size_t i;

	for (i = 0; i < sizeof(puts) / sizeof(puts[0]); i++) {
		p4e_gen_put(&m, puts[i].pt, puts[i].bits, puts[i].len,
			    puts[i].ack);
		p4e_gen_one(puts[i].name, puts[i].cfg, puts[i].ctl, &m);
	}
	req = p4e_gen_req(P4E_FZ_PT_TAG, P4E_FZ_BITS_IOV, 100, P4E_ACK_REQ,
			  P4E_FZ_OP_PUT);
	req.remote_offset = 10;
	p4e_gen_request(&m, P4W_PUT, &req, -1, -1, 100);
	p4e_gen_one("put_iovec_offset", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, &m);
	req = p4e_gen_req(P4E_FZ_PT_TAG, P4E_FZ_BITS_VIRT, 16, P4E_ACK_REQ,
			  P4E_FZ_OP_PUT);
	req.remote_offset = 0x7f0000000000ULL;
	p4e_gen_request(&m, P4W_PUT, &req, -1, -1, 16);
	p4e_gen_one("put_virt_addr", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, &m);
	req = p4e_gen_req(P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 48, P4E_ACK_REQ,
			  P4E_FZ_OP_PARK1);
	req.proto = P4W_PROTO_RDZV;
	p4e_gen_request(&m, P4W_PUT, &req, P4E_FZ_EXP_PARK1, -1, 0);
	p4e_gen_one("put_rdzv_priority", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, &m);
}

static void p4e_gen_gets_atomics(void)
{
	static const struct {
		const char *name;
		uint8_t cfg, type, op, dtype;
		size_t len;
		uint64_t roff;
	} atomics[] = {
		{ "atomic_sum", P4E_FZ_CFG_PLAIN, P4W_ATOMIC, P4E_SUM,
		  P4E_INT32, 8, 0 },
		{ "atomic_misaligned", P4E_FZ_CFG_PLAIN, P4W_ATOMIC, P4E_PROD,
		  P4E_INT64, 16, 3 },
		{ "atomic_long_double", P4E_FZ_CFG_PLAIN, P4W_ATOMIC, P4E_SUM,
		  P4E_LONG_DOUBLE, 32, 16 },
		{ "fetch_max", P4E_FZ_CFG_PLAIN, P4W_FETCH, P4E_MAX, P4E_INT64,
		  8, 8 },
		{ "fetch_read", P4E_FZ_CFG_PLAIN, P4W_FETCH, P4E_ATOMIC_READ,
		  P4E_DOUBLE, 16, 0 },
		{ "fetch_tight", P4E_FZ_CFG_TIGHT, P4W_FETCH, P4E_BXOR,
		  P4E_UINT8, 96, 0 },
		{ "swap_cswap", P4E_FZ_CFG_PLAIN, P4W_SWAP, P4E_CSWAP,
		  P4E_UINT32, 4, 16 },
		{ "swap_mswap", P4E_FZ_CFG_PLAIN, P4W_SWAP, P4E_MSWAP,
		  P4E_UINT64, 8, 0 },
		{ "swap_plain", P4E_FZ_CFG_PLAIN, P4W_SWAP, P4E_SWAP,
		  P4E_FLOAT_COMPLEX, 8, 0 },
	};
	struct p4e_gen_msg m;
	struct p4w_req req;
	size_t i;

	for (i = 0; i < sizeof(atomics) / sizeof(atomics[0]); i++) {
		p4e_gen_atomic(&m, atomics[i].type, atomics[i].op,
			       atomics[i].dtype, atomics[i].len,
			       atomics[i].roff);
		p4e_gen_one(atomics[i].name, atomics[i].cfg, P4E_FZ_TO_B, &m);
	}
	req = p4e_gen_req(P4E_FZ_PT_RMA, 0, 16, P4E_NO_ACK_REQ,
			  P4E_FZ_OP_GET);
	p4e_gen_request(&m, P4W_GET, &req, -1, -1, 0);
	p4e_gen_one("get", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, &m);
	p4e_gen_one("get_self", P4E_FZ_CFG_PLAIN, P4E_FZ_B_SELF, &m);
	req = p4e_gen_req(P4E_FZ_PT_RMA, 0, 200, P4E_NO_ACK_REQ,
			  P4E_FZ_OP_GET_PUSH);
	req.rflags |= P4W_RF_PUSH;
	p4e_gen_request(&m, P4W_GET, &req, -1, P4E_FZ_EXP_GET_PUSH, 0);
	p4e_gen_one("get_push", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_B, &m);
}

static void p4e_gen_responses(void)
{
	struct p4e_gen_msg m;

	p4e_gen_resp(&m, P4W_ACK, P4E_FZ_OP_PUT, 8, P4E_NI_OK, false, 0);
	p4e_gen_one("ack", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_resp(&m, P4W_ACK, P4E_FZ_OP_PARK1, 0, P4E_NI_PERM_VIOLATION,
		     false, 0);
	p4e_gen_one("ack_fail_rdzv", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_resp(&m, P4W_ACK, 0x500000007ULL, 8, P4E_NI_OK, false, 0);
	p4e_gen_one("ack_stale", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_one("ack_unknown_src", P4E_FZ_CFG_PLAIN, P4E_FZ_A_UNKNOWN, &m);
	p4e_gen_resp(&m, P4W_REPLY, P4E_FZ_OP_GET, 16, P4E_NI_OK, false, 16);
	p4e_gen_one("reply_get_iovec", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_resp(&m, P4W_REPLY, P4E_FZ_OP_GET_PUSH, 600, P4E_NI_OK, true,
		     0);
	p4e_gen_one("reply_pushed", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_resp(&m, P4W_REPLY, P4E_FZ_OP_FETCH, 8, P4E_NI_OK, false, 8);
	p4e_gen_one("reply_fetch", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_resp(&m, P4W_REPLY, P4E_FZ_OP_PUT, 8, P4E_NI_OK, false, 8);
	p4e_gen_one("reply_to_put", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_fc(&m, P4W_SEQ_ACK, 5);
	p4e_gen_one("seq_ack", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_fc(&m, P4W_NACK, 2);
	p4e_gen_one("nack", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
	p4e_gen_fc(&m, P4W_RESUME, 2);
	p4e_gen_one("resume", P4E_FZ_CFG_PLAIN, P4E_FZ_TO_A, &m);
}

/* ---- scenarios ---------------------------------------------------------- */

static void p4e_gen_unexpected(void)
{
	static const uint8_t claim[8] = { P4E_FZ_PT_TAG, P4E_FZ_BI_OTHER,
					  P4E_FZ_IG_NONE, P4E_SEARCH_CLAIM,
					  1 };
	static const uint8_t del[8] = { P4E_FZ_PT_TAG, P4E_FZ_BI_OTHER,
					P4E_FZ_IG_NONE, P4E_SEARCH_DELETE, 1 };
	static const uint8_t deliver[8] = { 0, 0, 0, 1 << P4E_FZ_MF_PUT, 0,
					    16 };
	struct p4e_gen_seed s;
	struct p4e_gen_msg m, rdzv;
	struct p4w_req req;

	/* an eager message, then a receive that copies it out */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_OTHER, 40, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_act_append(&s, P4E_FZ_PT_TAG, P4E_FZ_BI_OTHER, 16);
	p4e_gen_seed_write("unexpected_then_append", &s);

	/* a rendezvous message (header only), then its receive pulls */
	req = p4e_gen_req(P4E_FZ_PT_TAG, P4E_FZ_BITS_OTHER, 100, P4E_ACK_REQ,
			  P4E_FZ_OP_PARK2);
	req.proto = P4W_PROTO_RDZV;
	p4e_gen_request(&rdzv, P4W_PUT, &req, P4E_FZ_EXP_PARK2, -1, 0);
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &rdzv);
	p4e_gen_act_append(&s, P4E_FZ_PT_TAG, P4E_FZ_BI_OTHER, 64);
	p4e_gen_seed_write("rdzv_unexpected_then_append", &s);

	/* claim, then deliver; a search-delete of a rendezvous header */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_SEARCH, claim);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_UH, deliver);
	p4e_gen_seed_write("claim_deliver", &s);
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &rdzv);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_SEARCH, del);
	p4e_gen_seed_write("search_delete_rdzv", &s);

	/* the unexpected-header budget of the tight configuration */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_TIGHT);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_OTHER, 8, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_HOLD, &m);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_HOLD, &m);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("tight_uh_budget", &s);
}

static void p4e_gen_flow(void)
{
	static const uint8_t oflow[8] = {
		P4E_FZ_PT_RESEND | 0x80, 0, P4E_FZ_IG_ALL,
		1 << P4E_FZ_MF_PUT | 1 << P4E_FZ_MF_ONCE, 0, 16, 0, 1,
	};
	struct p4e_gen_seed s;
	struct p4e_gen_msg m;
	int i;

	/* three puts onto a locally managed entry: the last unlinks it */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_ML, 100, P4E_ACK_REQ);
	for (i = 0; i < 3; i++)
		p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_HOLD, &m);
	p4e_gen_seed_write("manage_local_min_free", &s);

	/* Portals flow control: the overflow entry runs out, PT disabled */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_FLOW, 2, 40, P4E_ACK_REQ);
	for (i = 0; i < 4; i++)
		p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_KEEP, &m);
	p4e_gen_seed_write("flowctrl_disable", &s);

	/* flow control that resends: nack, new overflow space, resume */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_RESEND, 2, 40, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_APPEND, oflow);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("fc_resend_resume", &s);
}

static void p4e_gen_misc(void)
{
	static const uint8_t link[8] = { 1 };
	static const uint8_t qlimit[8] = { 1, 1 };
	static const uint8_t ct[8] = { 0, 3 };
	static const uint8_t post_a[8] = { 3, P4E_FZ_PT_RMA, 0, 0, 1, 2,
					   P4E_SUM, P4E_UINT16 };
	static const uint8_t post_b[8] = { 0x80, 0, 0, P4E_ACK_REQ, 4 };
	struct p4e_gen_seed s;
	struct p4e_gen_msg m;
	struct p4w_req req;

	/* a link failure under a pending put; a nearly full queue */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_HOLD, &m);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_LINK, link);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("link_failure", &s);
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_QLIMIT, qlimit);
	req = p4e_gen_req(P4E_FZ_PT_RMA, 0, 200, P4E_NO_ACK_REQ,
			  P4E_FZ_OP_GET);
	p4e_gen_request(&m, P4W_GET, &req, -1, -1, 0);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("queue_limit", &s);

	/* counters: the triggered append, put and increment fire */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_CT, ct);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_LOW, 8, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("triggered", &s);

	/* operations posted mid-input, both ways, and an ack for one */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_POST, post_a);
	p4e_gen_seed_act(&s, P4E_FZ_ACT_POST, post_b);
	p4e_gen_resp(&m, P4W_ACK, 9, 2, P4E_NI_OK, false, 0);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_A, &m);
	p4e_gen_seed_write("posted_ops", &s);

	/* a header whose length disagrees with the message: link closed */
	p4e_gen_seed_begin(&s, P4E_FZ_CFG_PLAIN);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16, P4E_ACK_REQ);
	m.len -= 4;
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B | P4E_FZ_CTL_RAW, &m);
	p4e_gen_put(&m, P4E_FZ_PT_TAG, P4E_FZ_BITS_EXACT, 16, P4E_ACK_REQ);
	p4e_gen_seed_msg(&s, P4E_FZ_TO_B, &m);
	p4e_gen_seed_write("malformed_length", &s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	p4e_gen_dir = argv[1];
	p4e_gen_seed_begin(&p4e_gen_all, P4E_FZ_CFG_PLAIN);
	p4e_gen_puts();
	p4e_gen_gets_atomics();
	p4e_gen_responses();
	p4e_gen_unexpected();
	p4e_gen_flow();
	p4e_gen_misc();
	p4e_gen_seed_write("stream_all", &p4e_gen_all);
	return 0;
}
