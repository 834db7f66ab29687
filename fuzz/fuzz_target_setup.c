/*
 * fuzz_target_setup.c - the world every input of fuzz/fuzz_target runs
 * against, made fresh for each input (p4e_fz_open) and checked on the way
 * out (p4e_fz_close): a domain with NIs A (the initiator) and B (the
 * target) in the configuration byte 0 picks; B's PTs (enum p4e_fz_bpt)
 * with their priority and overflow entries (p4e_fz_b_mes), 15 more ignore
 * masks on the ONCE PT, and counters with triggered operations (a put
 * back to A, a priority append, an increment); A's PT, entries and MDs;
 * two rendezvous puts parked at B as header-only unexpected messages and
 * seven operations left in flight. Setup failures trap: an input must not
 * be blamed for them.
 *
 * Not here: the input format and its decoding, guarded buffers and the
 * event checks (fuzz_target.c). The layout gen_corpus_target.c copies
 * (PT numbers, match bits, masks) is in fuzz_target.h; the entries and
 * operations below are numbered in that layout's terms: keep them in
 * sync with gen_corpus_target.c.
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

#include "fuzz_target.h"

static void p4e_fz_check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "fuzz_target: setup: %s: %d\n", what, ret);
		__builtin_trap();
	}
}

/* How B names A in match_id, and A names B as a target. */
uint32_t p4e_fz_name_of(struct p4e_fz *f, int side)
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

/* One operation from side (0: A to B's PT; 1: B to A's); may fail. */
void p4e_fz_post(struct p4e_fz *f, int side, const struct p4e_fz_op *o)
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

void p4e_fz_open(struct p4e_fz *f, enum p4e_fz_cfg cfg)
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

void p4e_fz_close(struct p4e_fz *f)
{
	struct p4t_loop_stats st;
	int64_t sr[P4E_SR_LAST];
	int i, j;

	for (i = 0; p4e_fz_log_on && i < 2; i++) {
		for (j = 0; j < P4E_SR_LAST; j++)
			p4e_ni_status(f->ni[i], j, &sr[j]);
		p4t_loop_stats_get(f->ni[i]->xp[P4E_XP_NET].iface, &st);
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
