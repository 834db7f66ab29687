/*
 * ptl_limits.c - the limits table: every limit of ptl_ni_limits_t that
 * the reference header says bounds a call, one call at the limit (it
 * succeeds) and one over it (refused with the code the header gives).
 *
 * Object limits, on a non-matching NI of rank 0 opened with small desired
 * limits, a fresh one per row: max_eqs, max_cts, max_mds, max_entries,
 * max_triggered_ops (PTL_NO_SPACE), max_list_size (PTL_LIST_TOO_LONG),
 * max_pt_index and max_iovecs of an MD and of an LE (PTL_ARG_INVALID).
 * Size limits, from rank 0's matching NI to an entry of rank 1 that counts
 * what arrives: max_msg_size (put, get, triggered put), max_atomic_size
 * (PtlAtomic and its triggered form), max_fetch_atomic_size (PtlFetchAtomic,
 * PtlSwap, their triggered forms), max_volatile_size (a put and a
 * triggered put from a PTL_MD_VOLATILE MD): PTL_ARG_INVALID over the
 * limit, and nothing sent: rank 1 counts exactly the calls at the limit.
 * max_unexpected_headers and the ordered sizes bound no call.
 *
 *   ptlrun -n 2 ./ptl_limits
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define LM_PT		7
#define LM_BUF		(64 * 1024)

static unsigned char src[LM_BUF], dst[LM_BUF], got[LM_BUF];
static ptl_iovec_t iov[64];
static int err;

#define FAIL(...)                                                           \
	do {                                                                \
		fprintf(stderr, "ptl_limits: " __VA_ARGS__);                \
		fprintf(stderr, "\n");                                      \
		err++;                                                      \
	} while (0)

/* A call's return code against the one wanted. */
static void want(const char *row, const char *at, int ret, int wanted)
{
	if (ret != wanted)
		FAIL("%s %s the limit: %d, want %d", row, at, ret, wanted);
}

/* ---- object limits (rank 0, a non-matching NI per row) ------------------ */

struct obj {
	ptl_handle_ni_t ni;
	ptl_ni_limits_t lim;
	ptl_process_t self;
};

static void obj_open(struct obj *o)
{
	ptl_ni_limits_t d;

	memset(&d, 0, sizeof(d));
	d.max_eqs = 3;
	d.max_cts = 4;
	d.max_mds = 5;
	d.max_entries = 10;
	d.max_list_size = 4;
	d.max_pt_index = 40;
	d.max_iovecs = 6;
	d.max_triggered_ops = 4;
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     &d, &o->lim, &o->ni));
	BOOT_CHECK(PtlGetId(o->ni, &o->self));
	/* what the rows size their loops and arrays on */
	if (o->lim.max_eqs > 16 || o->lim.max_cts > 16 ||
	    o->lim.max_mds > 16 || o->lim.max_entries > 32 ||
	    o->lim.max_list_size < 2 || o->lim.max_pt_index > 100 ||
	    o->lim.max_iovecs > 63 || o->lim.max_triggered_ops > 16) {
		fprintf(stderr, "ptl_limits: desired limits not granted\n");
		exit(1);
	}
}

/* n calls of one kind succeed, the next is refused with `over`. */
#define AT_THEN_OVER(row, n, over, call)                                    \
	do {                                                                \
		int i_, r_ = PTL_OK;                                        \
		for (i_ = 0; i_ < (int)(n) && r_ == PTL_OK; i_++)           \
			r_ = (call);                                        \
		want(row, "at", r_, PTL_OK);                                \
		want(row, "over", (call), over);                            \
	} while (0)

static ptl_le_t le_of(void *start, ptl_size_t len, unsigned options)
{
	ptl_le_t le;

	memset(&le, 0, sizeof(le));
	le.start = start;
	le.length = len;
	le.ct_handle = PTL_CT_NONE;
	le.uid = PTL_UID_ANY;
	le.options = PTL_LE_OP_PUT | options;
	return le;
}

static void object_rows(void)
{
	ptl_md_t md = { src, 8, 0, PTL_EQ_NONE, PTL_CT_NONE };
	ptl_le_t le = le_of(dst, 8, 0);
	ptl_handle_md_t md_h;
	ptl_handle_le_t le_h;
	ptl_handle_eq_t eq_h;
	ptl_handle_ct_t ct_h;
	ptl_pt_index_t pt, got_pt;
	struct obj o;
	int i, row;

	for (i = 0; i < 64; i++) {
		iov[i].iov_base = src + i;
		iov[i].iov_len = 1;
	}
	for (row = 0; row < 9; row++) {
		obj_open(&o);
		switch (row) {
		case 0:
			AT_THEN_OVER("max_eqs", o.lim.max_eqs, PTL_NO_SPACE,
				     PtlEQAlloc(o.ni, 4, &eq_h));
			break;
		case 1:
			AT_THEN_OVER("max_cts", o.lim.max_cts, PTL_NO_SPACE,
				     PtlCTAlloc(o.ni, &ct_h));
			break;
		case 2:
			AT_THEN_OVER("max_mds", o.lim.max_mds, PTL_NO_SPACE,
				     PtlMDBind(o.ni, &md, &md_h));
			break;
		case 3:
			/* a PT per max_list_size entries: no list is full */
			pt = 0;
			for (i = 0; i <= o.lim.max_entries; i++) {
				if (i % o.lim.max_list_size == 0)
					BOOT_CHECK(PtlPTAlloc(o.ni, 0,
							      PTL_EQ_NONE,
							      PTL_PT_ANY,
							      &pt));
				want("max_entries",
				     i < o.lim.max_entries ? "at" : "over",
				     PtlLEAppend(o.ni, pt, &le,
						 PTL_OVERFLOW_LIST, NULL,
						 &le_h),
				     i < o.lim.max_entries ? PTL_OK :
							     PTL_NO_SPACE);
			}
			break;
		case 4:
			BOOT_CHECK(PtlPTAlloc(o.ni, 0, PTL_EQ_NONE, PTL_PT_ANY,
					      &pt));
			AT_THEN_OVER("max_list_size", o.lim.max_list_size,
				     PTL_LIST_TOO_LONG,
				     PtlLEAppend(o.ni, pt, &le,
						 PTL_PRIORITY_LIST, NULL,
						 &le_h));
			break;
		case 5:
			want("max_pt_index", "at",
			     PtlPTAlloc(o.ni, 0, PTL_EQ_NONE,
					(ptl_pt_index_t)o.lim.max_pt_index,
					&got_pt), PTL_OK);
			want("max_pt_index", "over",
			     PtlPTAlloc(o.ni, 0, PTL_EQ_NONE,
					(ptl_pt_index_t)o.lim.max_pt_index + 1,
					&got_pt), PTL_ARG_INVALID);
			break;
		case 6:
			md.start = iov;
			md.options = PTL_IOVEC;
			md.length = (ptl_size_t)o.lim.max_iovecs;
			want("max_iovecs (MD)", "at",
			     PtlMDBind(o.ni, &md, &md_h), PTL_OK);
			md.length++;
			want("max_iovecs (MD)", "over",
			     PtlMDBind(o.ni, &md, &md_h), PTL_ARG_INVALID);
			md.start = src;
			md.options = 0;
			md.length = 8;
			break;
		case 7:
			BOOT_CHECK(PtlPTAlloc(o.ni, 0, PTL_EQ_NONE, PTL_PT_ANY,
					      &pt));
			le = le_of(iov, (ptl_size_t)o.lim.max_iovecs,
				   PTL_IOVEC);
			want("max_iovecs (LE)", "at",
			     PtlLEAppend(o.ni, pt, &le, PTL_PRIORITY_LIST,
					 NULL, &le_h), PTL_OK);
			le.length++;
			want("max_iovecs (LE)", "over",
			     PtlLEAppend(o.ni, pt, &le, PTL_PRIORITY_LIST,
					 NULL, &le_h), PTL_ARG_INVALID);
			le = le_of(dst, 8, 0);
			break;
		default:
			/* thresholds never reached: they stay pending */
			BOOT_CHECK(PtlPTAlloc(o.ni, 0, PTL_EQ_NONE, PTL_PT_ANY,
					      &pt));
			BOOT_CHECK(PtlCTAlloc(o.ni, &ct_h));
			BOOT_CHECK(PtlMDBind(o.ni, &md, &md_h));
			AT_THEN_OVER("max_triggered_ops",
				     o.lim.max_triggered_ops, PTL_NO_SPACE,
				     PtlTriggeredPut(md_h, 0, 8,
						     PTL_NO_ACK_REQ, o.self,
						     pt, 0, 0, NULL, 0, ct_h,
						     1000));
			break;
		}
		BOOT_CHECK(PtlNIFini(o.ni));
	}
}

/* ---- size limits (rank 0 to rank 1) ------------------------------------- */

struct sz {
	const ptl_ni_limits_t *lim;
	ptl_process_t to;
	ptl_handle_ni_t ni;
	ptl_handle_md_t md, vmd, gmd;	/* plain, volatile, for replies */
	ptl_handle_ct_t trig[8];	/* a counter per triggered row */
	int ntrig;
};

enum { S_PUT, S_GET, S_VOL, S_ATOMIC, S_FETCH, S_SWAP, S_TPUT, S_TATOMIC,
       S_TFETCH, S_TSWAP, S_TVOL, S_ROWS };

static const char *const size_row[S_ROWS] = {
	"max_msg_size (put)", "max_msg_size (get)", "max_volatile_size",
	"max_atomic_size", "max_fetch_atomic_size (fetch)",
	"max_fetch_atomic_size (swap)", "max_msg_size (triggered put)",
	"max_atomic_size (triggered)",
	"max_fetch_atomic_size (triggered fetch)",
	"max_fetch_atomic_size (triggered swap)",
	"max_volatile_size (triggered)",
};

/* Row r's call with length len; triggered ones wait on ct (threshold 1). */
static int size_call(struct sz *s, int r, ptl_size_t len, ptl_handle_ct_t ct)
{
	switch (r) {
	case S_PUT:
		return PtlPut(s->md, 0, len, PTL_ACK_REQ, s->to, LM_PT, 1, 0,
			      NULL, 0);
	case S_GET:
		return PtlGet(s->gmd, 0, len, s->to, LM_PT, 1, 0, NULL);
	case S_VOL:
		return PtlPut(s->vmd, 0, len, PTL_ACK_REQ, s->to, LM_PT, 1, 0,
			      NULL, 0);
	case S_ATOMIC:
		return PtlAtomic(s->md, 0, len, PTL_ACK_REQ, s->to, LM_PT, 1,
				 0, NULL, 0, PTL_BOR, PTL_UINT8_T);
	case S_FETCH:
		return PtlFetchAtomic(s->gmd, 0, s->md, 0, len, s->to, LM_PT,
				      1, 0, NULL, 0, PTL_BOR, PTL_UINT8_T);
	case S_SWAP:
		return PtlSwap(s->gmd, 0, s->md, 0, len, s->to, LM_PT, 1, 0,
			       NULL, 0, NULL, PTL_SWAP, PTL_UINT8_T);
	case S_TPUT:
		return PtlTriggeredPut(s->md, 0, len, PTL_ACK_REQ, s->to,
				       LM_PT, 1, 0, NULL, 0, ct, 1);
	case S_TATOMIC:
		return PtlTriggeredAtomic(s->md, 0, len, PTL_ACK_REQ, s->to,
					  LM_PT, 1, 0, NULL, 0, PTL_BOR,
					  PTL_UINT8_T, ct, 1);
	case S_TFETCH:
		return PtlTriggeredFetchAtomic(s->gmd, 0, s->md, 0, len, s->to,
					       LM_PT, 1, 0, NULL, 0, PTL_BOR,
					       PTL_UINT8_T, ct, 1);
	case S_TSWAP:
		return PtlTriggeredSwap(s->gmd, 0, s->md, 0, len, s->to, LM_PT,
					1, 0, NULL, 0, NULL, PTL_SWAP,
					PTL_UINT8_T, ct, 1);
	default:
		return PtlTriggeredPut(s->vmd, 0, len, PTL_ACK_REQ, s->to,
				       LM_PT, 1, 0, NULL, 0, ct, 1);
	}
}

static ptl_size_t size_limit(const ptl_ni_limits_t *l, int r)
{
	switch (r) {
	case S_VOL:
	case S_TVOL:
		return l->max_volatile_size;
	case S_ATOMIC:
	case S_TATOMIC:
		return l->max_atomic_size;
	case S_FETCH:
	case S_SWAP:
	case S_TFETCH:
	case S_TSWAP:
		return l->max_fetch_atomic_size;
	default:
		return l->max_msg_size;
	}
}

/* Every row over then at the limit; the calls at it all complete. */
static void size_rows(struct sz *s, ptl_handle_eq_t eq)
{
	ptl_ct_event_t one = { 1, 0 };
	ptl_handle_ct_t ct;
	ptl_size_t lim;
	ptl_event_t ev;
	int r, done;

	for (r = 0; r < S_ROWS; r++) {
		lim = size_limit(s->lim, r);
		ct = PTL_CT_NONE;
		if (r >= S_TPUT) {
			BOOT_CHECK(PtlCTAlloc(s->ni, &ct));
			s->trig[s->ntrig++] = ct;
		}
		want(size_row[r], "over", size_call(s, r, lim + 1, ct),
		     PTL_ARG_INVALID);
		want(size_row[r], "at", size_call(s, r, lim, ct), PTL_OK);
		if (ct != PTL_CT_NONE)
			BOOT_CHECK(PtlCTInc(ct, one));
	}
	/* an ACK or a REPLY for each call at the limit, all fine */
	for (done = 0; done < S_ROWS; done++) {
		BOOT_CHECK(PtlEQWait(eq, &ev));
		if ((ev.type != PTL_EVENT_ACK && ev.type != PTL_EVENT_REPLY) ||
		    ev.ni_fail_type != PTL_NI_OK)
			FAIL("size rows: event type %d fail %d", ev.type,
			     ev.ni_fail_type);
	}
}

static void initiator(struct boot *b, ptl_handle_ni_t ni,
		      const ptl_ni_limits_t *lim)
{
	ptl_md_t md = { src, LM_BUF, PTL_MD_EVENT_SEND_DISABLE, 0,
			PTL_CT_NONE };
	ptl_handle_eq_t eq;
	struct sz s;
	int i;

	object_rows();
	memset(&s, 0, sizeof(s));
	s.lim = lim;
	s.ni = ni;
	s.to = b->peers[1];
	BOOT_CHECK(PtlEQAlloc(ni, 64, &eq));
	md.eq_handle = eq;
	BOOT_CHECK(PtlMDBind(ni, &md, &s.md));
	md.start = got;
	BOOT_CHECK(PtlMDBind(ni, &md, &s.gmd));
	md.start = src;
	md.options |= PTL_MD_VOLATILE;
	BOOT_CHECK(PtlMDBind(ni, &md, &s.vmd));
	boot_barrier(b);	/* rank 1's entry is there */
	size_rows(&s, eq);
	boot_barrier(b);	/* rank 1 counts */
	for (i = 0; i < s.ntrig; i++)
		BOOT_CHECK(PtlCTFree(s.trig[i]));
	BOOT_CHECK(PtlMDRelease(s.md));
	BOOT_CHECK(PtlMDRelease(s.gmd));
	BOOT_CHECK(PtlMDRelease(s.vmd));
	BOOT_CHECK(PtlEQFree(eq));
}

/* Rank 1: an entry that counts every operation reaching it. */
static void target(struct boot *b, ptl_handle_ni_t ni)
{
	ptl_handle_me_t me_h;
	ptl_handle_ct_t ct;
	ptl_ct_event_t cev;
	ptl_pt_index_t pt;
	ptl_me_t me;

	BOOT_CHECK(PtlCTAlloc(ni, &ct));
	BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, LM_PT, &pt));
	memset(&me, 0, sizeof(me));
	me.start = dst;
	me.length = sizeof(dst);
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_LINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 1;
	BOOT_CHECK(PtlMEAppend(ni, LM_PT, &me, PTL_PRIORITY_LIST, NULL,
			       &me_h));
	boot_barrier(b);
	boot_barrier(b);	/* rank 0 saw all its calls complete */
	BOOT_CHECK(PtlCTGet(ct, &cev));
	if (cev.success != S_ROWS || cev.failure)
		FAIL("%llu operations arrived (%llu failed), want the %d at "
		     "the limit", (unsigned long long)cev.success,
		     (unsigned long long)cev.failure, S_ROWS);
	BOOT_CHECK(PtlMEUnlink(me_h));
	BOOT_CHECK(PtlPTFree(ni, LM_PT));
	BOOT_CHECK(PtlCTFree(ct));
}

int main(void)
{
	ptl_ni_limits_t d, lim;
	ptl_handle_ni_t ni;
	struct boot b;

	boot_env(&b);
	if (b.size != 2) {
		fprintf(stderr, "ptl_limits: run with ptlrun -n 2\n");
		return 2;
	}
	BOOT_CHECK(PtlInit());
	memset(&d, 0, sizeof(d));
	d.max_msg_size = 8192;
	d.max_atomic_size = 64;
	d.max_fetch_atomic_size = 32;
	d.max_volatile_size = 512;
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     b.rank == 0 ? &d : NULL, &lim, &ni));
	if (b.rank == 0 &&
	    (lim.max_msg_size == 0 || lim.max_msg_size >= LM_BUF ||
	     lim.max_atomic_size == 0 ||
	     lim.max_atomic_size >= lim.max_msg_size ||
	     lim.max_fetch_atomic_size == 0 ||
	     lim.max_fetch_atomic_size >= lim.max_msg_size ||
	     lim.max_volatile_size == 0 ||
	     lim.max_volatile_size >= lim.max_msg_size)) {
		fprintf(stderr, "ptl_limits: desired sizes not granted\n");
		return 1;
	}
	boot_init(&b, ni, 0);
	if (b.rank == 0)
		initiator(&b, ni, &lim);
	else
		target(&b, ni);
	boot_fini(&b);
	PtlNIFini(ni);
	PtlFini();
	if (err)
		fprintf(stderr, "ptl_limits: rank %d: %d failures\n", b.rank,
			err);
	else
		printf("ptl_limits: rank %d ok\n", b.rank);
	return err ? 1 : 0;
}
