/*
 * test_native_limits.c - every limit of ptl_ni_limits_t that bounds what
 * one call may ask (the reference header, Portals 4.3: counts of EQs, CTs,
 * MDs, entries, entries per list, triggered operations; the largest PT
 * index and iovec count; message, atomic, fetching-atomic and volatile
 * sizes), one row each: a call at the limit succeeds, one over it is
 * refused with the code the header gives, and a refused data movement
 * sends nothing (the target's counter sees only the call at the limit).
 * max_unexpected_headers and the ordering sizes bound no call: they are
 * not here. One process on the loop transport, a fresh NI per row.
 */
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "ptl_test.h"

struct row_ctx {
	ptl_handle_ni_t ni;
	ptl_ni_limits_t lim;
	ptl_pt_index_t pt;
	ptl_process_t self;
	ptl_handle_ct_t tct;		/* the target entry counts here */
	ptl_handle_ct_t trig;		/* triggered rows fire on it */
	char *src, *dst;
	size_t len;
};

struct row {
	const char *name;
	int refused;		/* the code over the limit */
	bool sends;		/* a data movement: nothing may go */
	/* the call at (over false) or over the limit: its return code */
	int (*run)(struct row_ctx *c, bool over);
};

static void fini(void)
{
	PtlFini();
}

TestSuite(native_limits, .fini = fini, .timeout = 60);

/* n allocations of one kind; the return code of the last. */
#define ALLOC_N(n, call)						\
	({								\
		int _r = PTL_OK;					\
		for (int _i = 0; _i < (n) && _r == PTL_OK; _i++)	\
			_r = (call);					\
		_r;							\
	})

static int r_eqs(struct row_ctx *c, bool over)
{
	ptl_handle_eq_t h;

	/* the row's own PT holds none */
	return ALLOC_N(c->lim.max_eqs + over, PtlEQAlloc(c->ni, 4, &h));
}

static int r_cts(struct row_ctx *c, bool over)
{
	ptl_handle_ct_t h;

	/* two are the row's */
	return ALLOC_N(c->lim.max_cts - 2 + over, PtlCTAlloc(c->ni, &h));
}

static int r_mds(struct row_ctx *c, bool over)
{
	ptl_handle_md_t h;
	ptl_md_t md = { c->src, 8, 0, PTL_EQ_NONE, PTL_CT_NONE };

	return ALLOC_N(c->lim.max_mds + over, PtlMDBind(c->ni, &md, &h));
}

/* Entries over several PTs, so no list is too long. */
static int r_entries(struct row_ctx *c, bool over)
{
	ptl_me_t me = t_me_desc(c->dst, 8, PTL_ME_OP_PUT, 77, PTL_CT_NONE);
	ptl_handle_me_t h;
	ptl_pt_index_t p = c->pt;
	int i, n = c->lim.max_entries - 1 + over, ret = PTL_OK;

	/* one is the row's */
	for (i = 0; i < n && ret == PTL_OK; i++) {
		if (i % c->lim.max_list_size == 0)
			cr_assert_eq(PtlPTAlloc(c->ni, 0, PTL_EQ_NONE,
						PTL_PT_ANY, &p), PTL_OK);
		ret = PtlMEAppend(c->ni, p, &me, PTL_OVERFLOW_LIST, NULL, &h);
	}
	return ret;
}

static int r_list(struct row_ctx *c, bool over)
{
	ptl_me_t me = t_me_desc(c->dst, 8, PTL_ME_OP_PUT, 77, PTL_CT_NONE);
	ptl_handle_me_t h;

	/* one is the row's, on the priority list */
	return ALLOC_N(c->lim.max_list_size - 1 + over,
		       PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL,
				   &h));
}

static int r_pt_index(struct row_ctx *c, bool over)
{
	ptl_pt_index_t got;

	return PtlPTAlloc(c->ni, 0, PTL_EQ_NONE,
			  (ptl_pt_index_t)c->lim.max_pt_index + over, &got);
}

static ptl_iovec_t iov[64];

static int r_md_iovecs(struct row_ctx *c, bool over)
{
	ptl_md_t md = { iov, (ptl_size_t)c->lim.max_iovecs + over, PTL_IOVEC,
			PTL_EQ_NONE, PTL_CT_NONE };
	ptl_handle_md_t h;
	int i;

	for (i = 0; i < 64; i++) {
		iov[i].iov_base = c->src + i;
		iov[i].iov_len = 1;
	}
	return PtlMDBind(c->ni, &md, &h);
}

static int r_me_iovecs(struct row_ctx *c, bool over)
{
	ptl_me_t me = t_me_desc(iov, (ptl_size_t)c->lim.max_iovecs + over,
				PTL_ME_OP_PUT | PTL_IOVEC, 77, PTL_CT_NONE);
	ptl_handle_me_t h;
	int i;

	for (i = 0; i < 64; i++) {
		iov[i].iov_base = c->dst + i;
		iov[i].iov_len = 1;
	}
	return PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL, &h);
}

static int r_trig_ops(struct row_ctx *c, bool over)
{
	ptl_md_t md = { c->src, 8, 0, PTL_EQ_NONE, PTL_CT_NONE };
	ptl_handle_md_t h;

	cr_assert_eq(PtlMDBind(c->ni, &md, &h), PTL_OK);
	/* a threshold never reached: they stay outstanding */
	return ALLOC_N(c->lim.max_triggered_ops + over,
		       PtlTriggeredPut(h, 0, 8, PTL_NO_ACK_REQ, c->self,
				       c->pt, 1, 0, NULL, 0, c->trig, 1000));
}

static ptl_handle_md_t row_md(struct row_ctx *c, unsigned options)
{
	return t_md(c->ni, c->src, c->len, PTL_EQ_NONE, PTL_CT_NONE, options);
}

static int r_put(struct row_ctx *c, bool over)
{
	return PtlPut(row_md(c, 0), 0, c->lim.max_msg_size + over,
		      PTL_NO_ACK_REQ, c->self, c->pt, 1, 0, NULL, 0);
}

static int r_get(struct row_ctx *c, bool over)
{
	return PtlGet(row_md(c, 0), 0, c->lim.max_msg_size + over, c->self,
		      c->pt, 1, 0, NULL);
}

static int r_volatile(struct row_ctx *c, bool over)
{
	return PtlPut(row_md(c, PTL_MD_VOLATILE), 0,
		      c->lim.max_volatile_size + over, PTL_NO_ACK_REQ, c->self,
		      c->pt, 1, 0, NULL, 0);
}

static int r_atomic(struct row_ctx *c, bool over)
{
	return PtlAtomic(row_md(c, 0), 0, c->lim.max_atomic_size + over,
			 PTL_NO_ACK_REQ, c->self, c->pt, 1, 0, NULL, 0,
			 PTL_BOR, PTL_UINT8_T);
}

static int r_fetch(struct row_ctx *c, bool over)
{
	return PtlFetchAtomic(row_md(c, 0), 0, row_md(c, 0), 0,
			      c->lim.max_fetch_atomic_size + over, c->self,
			      c->pt, 1, 0, NULL, 0, PTL_BOR, PTL_UINT8_T);
}

static int r_swap(struct row_ctx *c, bool over)
{
	return PtlSwap(row_md(c, 0), 0, row_md(c, 0), 0,
		       c->lim.max_fetch_atomic_size + over, c->self, c->pt, 1,
		       0, NULL, 0, NULL, PTL_SWAP, PTL_UINT8_T);
}

/* The triggered forms fire when the row increments c->trig. */
static int r_trig_atomic(struct row_ctx *c, bool over)
{
	return PtlTriggeredAtomic(row_md(c, 0), 0,
				  c->lim.max_atomic_size + over,
				  PTL_NO_ACK_REQ, c->self, c->pt, 1, 0, NULL,
				  0, PTL_BOR, PTL_UINT8_T, c->trig, 1);
}

static int r_trig_fetch(struct row_ctx *c, bool over)
{
	return PtlTriggeredFetchAtomic(row_md(c, 0), 0, row_md(c, 0), 0,
				       c->lim.max_fetch_atomic_size + over,
				       c->self, c->pt, 1, 0, NULL, 0, PTL_BOR,
				       PTL_UINT8_T, c->trig, 1);
}

static int r_trig_swap(struct row_ctx *c, bool over)
{
	return PtlTriggeredSwap(row_md(c, 0), 0, row_md(c, 0), 0,
				c->lim.max_fetch_atomic_size + over, c->self,
				c->pt, 1, 0, NULL, 0, NULL, PTL_SWAP,
				PTL_UINT8_T, c->trig, 1);
}

static int r_trig_volatile(struct row_ctx *c, bool over)
{
	return PtlTriggeredPut(row_md(c, PTL_MD_VOLATILE), 0,
			       c->lim.max_volatile_size + over,
			       PTL_NO_ACK_REQ, c->self, c->pt, 1, 0, NULL, 0,
			       c->trig, 1);
}

static const struct row rows[] = {
	{ "max_eqs", PTL_NO_SPACE, false, r_eqs },
	{ "max_cts", PTL_NO_SPACE, false, r_cts },
	{ "max_mds", PTL_NO_SPACE, false, r_mds },
	{ "max_entries", PTL_NO_SPACE, false, r_entries },
	{ "max_list_size", PTL_LIST_TOO_LONG, false, r_list },
	{ "max_pt_index", PTL_ARG_INVALID, false, r_pt_index },
	{ "max_iovecs (MD)", PTL_ARG_INVALID, false, r_md_iovecs },
	{ "max_iovecs (ME)", PTL_ARG_INVALID, false, r_me_iovecs },
	{ "max_triggered_ops", PTL_NO_SPACE, false, r_trig_ops },
	{ "max_msg_size (put)", PTL_ARG_INVALID, true, r_put },
	{ "max_msg_size (get)", PTL_ARG_INVALID, true, r_get },
	{ "max_volatile_size", PTL_ARG_INVALID, true, r_volatile },
	{ "max_atomic_size", PTL_ARG_INVALID, true, r_atomic },
	{ "max_fetch_atomic_size (fetch)", PTL_ARG_INVALID, true, r_fetch },
	{ "max_fetch_atomic_size (swap)", PTL_ARG_INVALID, true, r_swap },
	{ "max_atomic_size (triggered)", PTL_ARG_INVALID, true,
	  r_trig_atomic },
	{ "max_fetch_atomic_size (triggered fetch)", PTL_ARG_INVALID, true,
	  r_trig_fetch },
	{ "max_fetch_atomic_size (triggered swap)", PTL_ARG_INVALID, true,
	  r_trig_swap },
	{ "max_volatile_size (triggered)", PTL_ARG_INVALID, true,
	  r_trig_volatile },
};

/* An NI with small limits, a PT with one entry counting what arrives. */
static void row_open(struct row_ctx *c)
{
	ptl_ni_limits_t want;

	memset(c, 0, sizeof(*c));
	memset(&want, 0, sizeof(want));
	want.max_entries = 12;
	want.max_mds = 6;
	want.max_cts = 6;
	want.max_eqs = 3;
	want.max_pt_index = 70;
	want.max_iovecs = 5;
	want.max_list_size = 4;
	want.max_triggered_ops = 4;
	want.max_msg_size = 8192;
	want.max_atomic_size = 64;
	want.max_fetch_atomic_size = 32;
	want.max_volatile_size = 512;
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       &want, &c->lim, &c->ni), PTL_OK);
	/* what the test sizes its buffers and loops on */
	cr_assert(c->lim.max_msg_size > 0 && c->lim.max_msg_size <= 65536);
	cr_assert(c->lim.max_atomic_size > 0 &&
		  c->lim.max_atomic_size < c->lim.max_msg_size);
	cr_assert(c->lim.max_fetch_atomic_size > 0 &&
		  c->lim.max_fetch_atomic_size < c->lim.max_msg_size);
	cr_assert(c->lim.max_volatile_size > 0 &&
		  c->lim.max_volatile_size < c->lim.max_msg_size);
	cr_assert(c->lim.max_iovecs > 0 && c->lim.max_iovecs < 64);
	cr_assert(c->lim.max_eqs <= 16 && c->lim.max_cts <= 16 &&
		  c->lim.max_mds <= 16 && c->lim.max_entries <= 32 &&
		  c->lim.max_triggered_ops <= 16 &&
		  c->lim.max_list_size >= 2 && c->lim.max_pt_index < 1000);
	c->len = c->lim.max_msg_size + 1;
	c->src = calloc(1, c->len);
	c->dst = calloc(1, 2 * c->len);
	cr_assert(c->src && c->dst);
	cr_assert_eq(PtlGetId(c->ni, &c->self), PTL_OK);
	cr_assert_eq(PtlPTAlloc(c->ni, 0, PTL_EQ_NONE, PTL_PT_ANY, &c->pt),
		     PTL_OK);
	cr_assert_eq(PtlCTAlloc(c->ni, &c->tct), PTL_OK);
	cr_assert_eq(PtlCTAlloc(c->ni, &c->trig), PTL_OK);
	t_me(c->ni, c->pt, c->dst, 2 * c->len, PTL_ME_OP_PUT | PTL_ME_OP_GET |
	     PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE, 1,
	     PTL_PRIORITY_LIST, c->tct);
}

static void row_close(struct row_ctx *c)
{
	cr_assert_eq(PtlNIFini(c->ni), PTL_OK);
	free(c->src);
	free(c->dst);
}

static void row_run(const struct row *r)
{
	ptl_ct_event_t cev, one = { 1, 0 };
	struct row_ctx c;
	unsigned which;
	ptl_size_t two = 2;
	int ret;

	/* over the limit first: a refused op that went anyway would be
	 * counted before the one at the limit (the loop keeps order) */
	row_open(&c);
	ret = r->run(&c, true);
	cr_expect_eq(ret, r->refused, "%s over the limit: %d, want %d",
		     r->name, ret, r->refused);
	if (r->sends) {
		ret = r->run(&c, false);
		cr_expect_eq(ret, PTL_OK, "%s at the limit: %d", r->name, ret);
		cr_assert_eq(PtlCTInc(c.trig, one), PTL_OK);
		cr_assert_eq(PtlCTWait(c.tct, 1, &cev), PTL_OK);
		cr_expect_eq(cev.failure, 0, "%s at the limit failed",
			     r->name);
		cr_expect_eq(PtlCTPoll(&c.tct, &two, 1, 100, &cev, &which),
			     PTL_CT_NONE_REACHED, "%s: refused but sent",
			     r->name);
	}
	row_close(&c);
	if (!r->sends) {
		row_open(&c);
		ret = r->run(&c, false);
		cr_expect_eq(ret, PTL_OK, "%s at the limit: %d", r->name, ret);
		row_close(&c);
	}
}

Test(native_limits, each_limit_at_and_over)
{
	size_t i;

	t_init_loop();
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		row_run(&rows[i]);
}

/*
 * With no desired limits an NI takes the entries an MPI library posts, one
 * per receive: Open MPI's mtl portals4 posts 200000 for mpi_isend_flood
 * and got PTL_NO_SPACE at 65536. Freed handles are reused, and a handle
 * of a freed entry is refused.
 */
Test(native_limits, default_entries_take_an_mpi_flood_of_receives)
{
	enum { N = 200000 };
	static ptl_handle_me_t mh[N];
	ptl_ni_limits_t lim;
	ptl_handle_ni_t ni;
	ptl_pt_index_t pt;
	ptl_me_t me;
	ptl_handle_me_t again;
	int i, ret = PTL_OK;

	t_init_loop();
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       NULL, &lim, &ni), PTL_OK);
	cr_assert_geq(lim.max_entries, N, "max_entries %d", lim.max_entries);
	cr_assert_geq(lim.max_list_size, N);
	cr_assert_eq(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PTL_PT_ANY, &pt), PTL_OK);
	me = t_me_desc(NULL, 0, PTL_ME_OP_PUT | PTL_ME_USE_ONCE, 0,
		       PTL_CT_NONE);
	for (i = 0; i < N && ret == PTL_OK; i++) {
		me.match_bits = (ptl_match_bits_t)i;
		ret = PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &mh[i]);
	}
	cr_assert_eq(ret, PTL_OK, "entry %d: %d", i - 1, ret);
	cr_assert_eq(PtlMEUnlink(mh[7]), PTL_OK);
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &again),
		     PTL_OK);
	cr_expect_eq(PtlMEUnlink(mh[7]), PTL_ARG_INVALID, "a stale handle");
	cr_assert_eq(PtlMEUnlink(again), PTL_OK);
	for (i = 0; i < N; i++)
		if (i != 7)
			cr_assert_eq(PtlMEUnlink(mh[i]), PTL_OK, "entry %d", i);
	cr_assert_eq(PtlPTFree(ni, pt), PTL_OK);
	cr_assert_eq(PtlNIFini(ni), PTL_OK);
}

/*
 * With no desired limits the overflow list of a flow-controlled PT keeps
 * the headers of a flood sent before any receive is posted: Open MPI's
 * mtl portals4 recovers from a disabled PT by resending into the same
 * full list, so mpi_isend_flood (200000 and more 8-byte messages) hung
 * once 65536 headers were held.
 */
Test(native_limits, default_unexpected_headers_hold_a_flood)
{
	enum { N = 200000 };
	static char obuf[8 * N];
	uint64_t word = 0x1122334455667788ull;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	ptl_ct_event_t cv;
	ptl_me_t me;
	ptl_handle_me_t mh;
	int i;

	t_init_loop();
	ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlGetId(ni, &self), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 64, &eq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, eq, PTL_PT_ANY, &pt),
		     PTL_OK);
	cr_assert_eq(PtlCTAlloc(ni, &ct), PTL_OK);
	me = t_me_desc(obuf, sizeof(obuf), PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
		       PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		       PTL_ME_EVENT_CT_COMM, 0, ct);
	me.ignore_bits = ~(ptl_match_bits_t)0;
	cr_assert_eq(PtlMEAppend(ni, pt, &me, PTL_OVERFLOW_LIST, NULL, &mh),
		     PTL_OK);
	md = t_md(ni, &word, sizeof(word), PTL_EQ_NONE, PTL_CT_NONE, 0);
	for (i = 0; i < N; i++)
		cr_assert_eq(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt,
				    (ptl_match_bits_t)i, 0, NULL, 0), PTL_OK,
			     "put %d", i);
	cr_assert_eq(PtlCTPoll(&ct, &(ptl_size_t){ N }, 1, 20000, &cv,
			       &(unsigned){ 0 }), PTL_OK, "landed %lu of %d",
		     (unsigned long)cv.success, N);
	cr_expect_eq(cv.success, N);
	cr_expect_eq(cv.failure, 0);
	t_no_event(eq);		/* no PTL_EVENT_PT_DISABLED */
	cr_assert_eq(PtlMEUnlink(mh), PTL_OK);
	/* the headers still sit on the PT: PtlNIFini frees them */
	cr_assert_eq(PtlNIFini(ni), PTL_OK);
}
