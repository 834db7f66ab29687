/*
 * test_eng_search.c - unexpected headers and how they are found: searches
 * (SEARCH_ONLY, SEARCH_DELETE, no match; never a status register), the
 * claim extension (P4E_SEARCH_CLAIM with p4e_uh_deliver / p4e_uh_discard,
 * eager and rendezvous, stale handles), headers of gets and atomics,
 * NO_TRUNCATE at the target and at append, moving the data of unexpected
 * messages (UH_COPY, RDZV_HDR_ONLY rendezvous), and matching order through
 * the engine (pitfall 1, list order across ignore masks and sources).
 */
#include "p4e_test.h"
#include "p4u_compiler.h"

static struct eng e;

#define OFL ((void *)0x0f1)
#define PRI ((void *)0x9a1)
#define PRI2 ((void *)0x9a2)
#define SRCH ((void *)0x5e1)

static uint8_t src[3][16384];
static uint8_t obuf[16384], pbuf[16384];

static void setup(void)
{
	size_t i;

	eng_open(&e);
	for (i = 0; i < sizeof(src[0]); i++) {
		src[0][i] = (uint8_t)(i * 7 + 1);
		src[1][i] = (uint8_t)(i * 13 + 5);
		src[2][i] = (uint8_t)(i * 3 + 11);
	}
	memset(obuf, 0, sizeof(obuf));
	memset(pbuf, 0, sizeof(pbuf));
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_search, .init = setup, .fini = teardown, .timeout = 30);

/* ---- helpers ------------------------------------------------------------ */

#define ev_is(side, type) eng_ev_is(&e, side, type)
#define ini_done(fail, mlength) eng_ini_done(&e, 0, fail, mlength)
#define sr(side, i) eng_sr(&e, side, i)

/* Put len bytes of src[which] from side 0 to side 1's PT. */
static void put_x(int which, size_t len, uint64_t bits, uint64_t hdr_data,
		  uint64_t remote_offset)
{
	uint64_t md = eng_md(&e, 0, src[which], len, 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(&e, 0, md, len, bits);

	x.hdr_data = hdr_data;
	x.remote_offset = remote_offset;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
}

static void put(int which, size_t len, uint64_t bits, uint64_t hdr_data)
{
	put_x(which, len, bits, hdr_data, 0);
}

static uint64_t append(enum p4e_list list, void *buf, size_t len,
		       unsigned opt, uint64_t bits, void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, opt, bits, 0);

	return eng_append(&e, 1, &d, list, user_ptr);
}

/* An overflow entry (OP_PUT | opt) over obuf for bits, LINK consumed. */
static uint64_t oflow_at(unsigned opt, size_t len, uint64_t bits)
{
	uint64_t me = append(P4E_OVERFLOW_LIST, obuf, len, P4E_ME_OP_PUT | opt,
			     bits, OFL);

	ev_is(1, P4E_EVENT_LINK);
	return me;
}

/* A catch-all persistent overflow entry, not locally managed. */
static uint64_t oflow_all(size_t len)
{
	struct p4e_me_desc d = eng_me_desc(obuf, len, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, UINT64_MAX);
	uint64_t me = eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);

	ev_is(1, P4E_EVENT_LINK);
	return me;
}

/* A persistent catch-all overflow entry over obuf (opt added). */
static uint64_t oflow(unsigned opt)
{
	struct p4e_me_desc d = eng_me_desc(obuf, sizeof(obuf), P4E_ME_OP_PUT |
					   P4E_ME_MANAGE_LOCAL | opt, 0,
					   UINT64_MAX);
	uint64_t me = eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);

	ev_is(1, P4E_EVENT_LINK);
	return me;
}

/* An eager put that lands on the overflow list; drains its events. */
static void land(int which, size_t len, uint64_t bits, uint64_t hdr_data)
{
	put(which, len, bits, hdr_data);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ini_done(P4E_NI_OK, len);
}

/* A rendezvous put whose header alone waits (RDZV_HDR_ONLY overflow). */
static void land_rdzv(int which, size_t len, uint64_t bits, uint64_t hdr_data)
{
	put(which, len, bits, hdr_data);
	eng_progress(&e);
	eng_no_event(&e, 1);
	eng_no_event(&e, 0);
}

static int search(uint64_t bits, uint64_t ignore, uint32_t id,
		  enum p4e_search_op op)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, bits, ignore);

	d.match_id = id;
	return p4e_me_search(e.ni[1], e.pt[1], &d, op, SRCH, 0x77);
}

static void expect_no_match(void)
{
	struct p4e_event ev = ev_is(1, P4E_EVENT_SEARCH);

	cr_expect_eq(ev.ni_fail_type, P4E_NI_NO_MATCH);
	cr_expect_eq(ev.user_ptr, SRCH);
	cr_expect_eq(ev.pt_index, e.pt[1]);
	cr_expect_eq(ev.uh_handle, 0);
}

static void expect_clean_registers(void)
{
	int64_t v;
	int i;

	for (i = 0; i < P4E_SR_LAST; i++) {
		cr_assert_eq(p4e_ni_status(e.ni[1], i, &v), 0);
		cr_expect_eq(v, 0, "status register %d", i);
	}
}

/* ---- SEARCH_ONLY ------------------------------------------------------------ */

Test(eng_search, search_only_reports_and_keeps_the_header)
{
	struct p4e_event ev;
	int i;

	oflow(0);
	land(1, 16, 0x10, 1);
	land(0, 24, 0x22, 0x4d);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(search(0x22, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
		ev = ev_is(1, P4E_EVENT_SEARCH);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		cr_expect_eq(ev.match_bits, 0x22);
		cr_expect_eq(ev.hdr_data, 0x4d);
		cr_expect_eq(ev.rlength, 24);
		cr_expect_eq(ev.mlength, 24);
		cr_expect_eq(ev.initiator, e.id[0]);
		cr_expect_eq(ev.uid, 1000);
		cr_expect_eq(ev.start, obuf + 16, "where its data sits");
		cr_expect_eq(ev.user_ptr, SRCH);
		cr_expect_eq(ev.user_flags, 0x77);
		cr_expect_eq(ev.pt_index, e.pt[1]);
		cr_expect_eq(ev.uh_handle, 0);
		eng_no_event(&e, 1);
	}
	/* still there for an append */
	{
		struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_USE_ONCE,
						   0x22, 0);

		eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
		ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
		cr_expect_eq(ev.hdr_data, 0x4d);
	}
	expect_clean_registers();
}

Test(eng_search, search_only_first_match_in_arrival_order)
{
	struct p4e_event ev;

	oflow(0);
	land(0, 8, 0x31, 1);
	land(1, 8, 0x32, 2);
	cr_assert_eq(search(0x30, 0x3, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 1);
	cr_assert_eq(search(0x32, 0, e.id[0], P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
}

Test(eng_search, search_no_match)
{
	oflow(0);
	cr_assert_eq(search(0x1, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* nothing at all yet */
	land(0, 8, 0x1, 1);
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* other bits */
	cr_assert_eq(search(0x1, 0, e.id[1], P4E_SEARCH_ONLY), 0);
	expect_no_match();		/* another initiator */
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	expect_no_match();
	cr_assert_eq(search(0x2, 0, P4E_ID_ANY, P4E_SEARCH_CLAIM), 0);
	expect_no_match();
	eng_no_event(&e, 1);
	expect_clean_registers();
}

Test(eng_search, search_arguments_checked)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0, 0);

	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1], NULL, P4E_SEARCH_ONLY,
				   NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1], &d,
				   (enum p4e_search_op)7, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_me_search(e.ni[1], e.pt[1] + 1, &d, P4E_SEARCH_ONLY,
				   NULL, 0), -FI_EINVAL, "unallocated PT");
	cr_expect_eq(p4e_me_search(NULL, e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), -FI_EINVAL);
	eng_no_event(&e, 1);
}

Test(eng_search, searches_never_bump_status_registers)
{
	struct p4e_me_desc d = eng_me_desc(NULL, 0, 0, 0x5, 0);

	oflow(0);
	land(0, 8, 0x5, 1);
	/* neither the uid nor the op would be allowed on an append */
	d.uid = 4242;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_ONLY, NULL,
				   0), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).ni_fail_type, P4E_NI_OK);
	d.match_bits = 0x6;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   NULL, 0), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).ni_fail_type, P4E_NI_NO_MATCH);
	d.match_bits = 0x5;
	cr_assert_eq(p4e_me_search(e.ni[1], e.pt[1], &d, P4E_SEARCH_DELETE,
				   NULL, 0), 0);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	expect_clean_registers();
}

/* ---- SEARCH_DELETE ------------------------------------------------------------ */

Test(eng_search, search_delete_removes_every_match)
{
	struct p4e_me_desc d;
	struct p4e_event ev;

	oflow(0);
	land(0, 8, 0x41, 1);
	land(1, 16, 0x50, 2);
	land(2, 24, 0x42, 3);
	cr_assert_eq(search(0x40, 0x3, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(ev.user_ptr, SRCH);
	cr_expect_eq(ev.initiator, e.id[0]);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 3);
	cr_expect_eq(ev.start, obuf + 24);
	eng_no_event(&e, 1);

	cr_assert_eq(search(0x40, 0x3, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();
	/* an append finds only the header that did not match */
	d = eng_me_desc(pbuf, 64, 0, 0, UINT64_MAX);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	ev_is(1, P4E_EVENT_LINK);
	eng_no_event(&e, 1);
}

Test(eng_search, search_delete_completes_a_rendezvous_initiator)
{
	struct p4e_event ev;

	oflow(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(0, 10000, 0x9, 1);
	cr_assert_eq(search(0x9, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(ev.hdr_data, 1);
	eng_no_event(&e, 1);
	eng_progress(&e);
	ev = ini_done(P4E_NI_OK, 0);	/* nothing was taken */
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
}

Test(eng_search, search_delete_frees_an_unlinked_overflow_entry)
{
	struct p4e_me_desc d = eng_me_desc(obuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x3, 0);
	struct p4e_event ev;

	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x3, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	cr_assert_eq(search(0x3, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	ev = ev_is(1, P4E_EVENT_AUTO_FREE);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
}

/* ---- claim, deliver, discard ------------------------------------------------- */

static uint64_t claim(uint64_t bits)
{
	struct p4e_event ev;

	cr_assert_eq(search(bits, 0, P4E_ID_ANY, P4E_SEARCH_CLAIM), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_assert_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_assert_neq(ev.uh_handle, 0);
	cr_expect_eq(ev.match_bits, bits);
	cr_expect_eq(ev.user_ptr, SRCH);
	return ev.uh_handle;
}

static int deliver(uint64_t uh, void *buf, size_t len)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, 0, 0, 0);

	return p4e_uh_deliver(e.ni[1], uh, &d, PRI, 0x99);
}

Test(eng_search, claim_takes_the_first_match_off_the_list)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow(0);
	land(0, 8, 0x7, 1);
	land(1, 8, 0x7, 2);
	uh = claim(0x7);
	eng_no_event(&e, 1);
	/* the first is gone from searches and appends, the second is not */
	cr_assert_eq(search(0x7, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	ev = ev_is(1, P4E_EVENT_SEARCH);
	cr_expect_eq(ev.hdr_data, 2);
	cr_assert_eq(search(0x7, 0, P4E_ID_ANY, P4E_SEARCH_DELETE), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	eng_no_event(&e, 1);
	/* the claimed one is still deliverable */
	cr_assert_eq(deliver(uh, pbuf, 64), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
}

Test(eng_search, claim_then_deliver_eager)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow(0);
	land(1, 32, 0x7, 0);
	land(0, 100, 0x8, 0x3e);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, 256), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.start, pbuf, "the data is in the new buffer");
	cr_expect_eq(ev.mlength, 100);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(ev.hdr_data, 0x3e);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.user_flags, 0x99);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(memcmp(pbuf, src[0], 100), 0);
	eng_no_event(&e, 1);		/* no LINK, no AUTO_UNLINK */
	/* used: the handle is stale now */
	cr_expect_eq(deliver(uh, pbuf, 256), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	eng_no_event(&e, 1);
}

Test(eng_search, claim_then_deliver_truncates_to_the_buffer)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow(0);
	land(0, 100, 0x8, 1);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, 10), 0);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(memcmp(pbuf, src[0], 10), 0);
	cr_expect_eq(pbuf[10], 0, "nothing written past the buffer");
}

Test(eng_search, claim_then_deliver_rendezvous)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(2, 12000, 0x8, 5);
	uh = claim(0x8);
	cr_assert_eq(deliver(uh, pbuf, sizeof(pbuf)), 0);
	eng_no_event(&e, 1);		/* after the pull */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(ev.mlength, 12000);
	cr_expect_eq(ev.hdr_data, 5);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(memcmp(pbuf, src[2], 12000), 0);
	eng_no_event(&e, 1);
	ini_done(P4E_NI_OK, 12000);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
}

Test(eng_search, claim_then_discard_eager)
{
	struct p4e_me_desc d = eng_me_desc(obuf, 64, P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x3, 0);
	struct p4e_event ev;
	uint64_t uh;

	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x3, 1);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	uh = claim(0x3);
	eng_no_event(&e, 1);		/* the claimed header holds the entry */
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	ev = ev_is(1, P4E_EVENT_AUTO_FREE);
	cr_expect_eq(ev.user_ptr, OFL);
	eng_no_event(&e, 1);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	cr_expect_eq(deliver(uh, pbuf, 64), -FI_EINVAL);
	cr_assert_eq(search(0x3, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	expect_no_match();
}

Test(eng_search, claim_then_discard_rendezvous_completes_the_put)
{
	uint64_t uh;

	oflow(P4E_ME_RDZV_HDR_ONLY);
	land_rdzv(0, 10000, 0x8, 1);
	uh = claim(0x8);
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	eng_progress(&e);
	ini_done(P4E_NI_OK, 0);
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(pbuf[0], 0);
}

Test(eng_search, stale_uh_handles_refused)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, 0, 0, 0);
	uint64_t uh;

	cr_expect_eq(p4e_uh_deliver(e.ni[1], 0, &d, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[1], 0xdeadbeef00000001ULL),
		     -FI_EINVAL);
	oflow(0);
	land(0, 8, 0x1, 1);
	uh = claim(0x1);
	cr_expect_eq(p4e_uh_deliver(e.ni[1], uh, NULL, NULL, 0), -FI_EINVAL);
	cr_expect_eq(p4e_uh_discard(e.ni[0], uh), -FI_EINVAL,
		     "another NI's handle");
	cr_assert_eq(p4e_uh_discard(e.ni[1], uh), 0);
	/* the slot is reused by the next header: the old handle stays dead */
	land(1, 8, 0x1, 2);
	cr_expect_eq(p4e_uh_discard(e.ni[1], uh), -FI_EINVAL);
	cr_expect_eq(p4e_uh_deliver(e.ni[1], uh, &d, NULL, 0), -FI_EINVAL);
	/* and a header that was never claimed is no handle to use */
	cr_assert_eq(search(0x1, 0, P4E_ID_ANY, P4E_SEARCH_ONLY), 0);
	cr_expect_eq(ev_is(1, P4E_EVENT_SEARCH).hdr_data, 2);
	eng_no_event(&e, 1);
}

/* ---- gets and atomics on the overflow list, truncation -------------------- */

Test(eng_search, get_on_overflow_leaves_header)
{
	static uint8_t sink[64];
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	memcpy(obuf, src[1], 64);
	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_GET, 0x6, OFL);
	ev_is(1, P4E_EVENT_LINK);
	md = eng_md(&e, 0, sink, sizeof(sink), 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 32, 0x6);
	x.remote_offset = 8;
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_GET);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(0, P4E_EVENT_REPLY);
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(memcmp(sink, src[1] + 8, 32), 0);

	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE, 0x6, PRI);
	ev = ev_is(1, P4E_EVENT_GET_OVERFLOW);
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(ev.remote_offset, 8);
	cr_expect_eq(ev.start, obuf + 8);
	cr_expect_eq(ev.initiator, e.id[0]);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

static void atomic_on_overflow(bool fetch)
{
	static uint64_t operand = 3, old;
	uint64_t *target = (uint64_t *)(void *)obuf;
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	*target = 5;
	append(P4E_OVERFLOW_LIST, obuf, 8, P4E_ME_OP_PUT | P4E_ME_OP_GET, 0xa,
	       OFL);
	ev_is(1, P4E_EVENT_LINK);
	md = eng_md(&e, 0, &operand, 8, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, 8, 0xa);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	if (fetch) {
		x.get_md = eng_md(&e, 0, &old, 8, 0, P4E_HANDLE_NONE);
		cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	} else {
		cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	ev = ev_is(1, fetch ? P4E_EVENT_FETCH_ATOMIC : P4E_EVENT_ATOMIC);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(*target, 8);

	append(P4E_PRIORITY_LIST, pbuf, 8, P4E_ME_USE_ONCE, 0xa, PRI);
	ev = ev_is(1, fetch ? P4E_EVENT_FETCH_ATOMIC_OVERFLOW :
			      P4E_EVENT_ATOMIC_OVERFLOW);
	cr_expect_eq(ev.atomic_op, P4E_SUM);
	cr_expect_eq(ev.atomic_type, P4E_UINT64);
	cr_expect_eq(ev.mlength, 8);
	cr_expect_eq(ev.start, obuf);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	if (fetch)
		cr_expect_eq(old, 5);
}

Test(eng_search, atomic_on_overflow_leaves_header)
{
	atomic_on_overflow(false);
}

Test(eng_search, fetch_atomic_on_overflow_leaves_header)
{
	atomic_on_overflow(true);
}

Test(eng_search, no_truncate_entries_need_room)
{
	struct p4e_event ev;

	/* at the target: a too small NO_TRUNCATE entry is passed over */
	append(P4E_PRIORITY_LIST, pbuf, 8, P4E_ME_OP_PUT | P4E_ME_NO_TRUNCATE,
	       0x1, PRI);
	append(P4E_PRIORITY_LIST, pbuf + 64, 64, P4E_ME_OP_PUT, 0x1, PRI2);
	ev_is(1, P4E_EVENT_LINK);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 16, 0x1, 0);
	put(1, 8, 0x1, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.user_ptr, PRI);
	eng_drain(&e, 0);

	/* at append: a header longer than the entry is left alone */
	oflow_at(0, 256, 0x3);
	land(0, 32, 0x3, 1);
	append(P4E_PRIORITY_LIST, pbuf, 16, P4E_ME_NO_TRUNCATE |
	       P4E_ME_USE_ONCE, 0x3, PRI);
	ev_is(1, P4E_EVENT_LINK);
	append(P4E_PRIORITY_LIST, pbuf, 32, P4E_ME_NO_TRUNCATE |
	       P4E_ME_USE_ONCE, 0x3, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.user_ptr, PRI2);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

/* ---- moving the data of unexpected messages ----------------------------- */

Test(eng_search, uh_copy_moves_data_into_the_entry)
{
	struct p4e_event ev;

	oflow_at(0, 256, 0x9);
	put_x(0, 100, 0x9, 7, 16);	/* lands at obuf + 16 */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.start, obuf + 16);
	ini_done(P4E_NI_OK, 100);

	append(P4E_PRIORITY_LIST, pbuf, 512,
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x9, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf + 16, "start points into the new entry");
	cr_expect_eq(ev.mlength, 100);
	cr_expect_eq(ev.remote_offset, 16);
	cr_expect_eq(memcmp(pbuf + 16, src[0], 100), 0);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
}

Test(eng_search, uh_copy_moves_only_put_data)
{
	static uint8_t sink[16];
	struct p4e_xfer x;
	struct p4e_event ev;
	size_t i;

	memcpy(obuf, src[1], 64);
	memset(pbuf, 0xee, 64);
	append(P4E_OVERFLOW_LIST, obuf, 64, P4E_ME_OP_GET, 0x6, OFL);
	ev_is(1, P4E_EVENT_LINK);
	x = eng_xfer(&e, 0, eng_md(&e, 0, sink, sizeof(sink), 0,
				   P4E_HANDLE_NONE), 16, 0x6);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_GET);
	/* a get read the overflow entry: the new entry gets nothing */
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x6, PRI);
	ev = ev_is(1, P4E_EVENT_GET_OVERFLOW);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 16);
	for (i = 0; i < 64; i++)
		cr_assert_eq(pbuf[i], 0xee, "byte %zu of the entry written", i);
}

Test(eng_search, uh_copy_truncates_to_the_entry)
{
	struct p4e_event ev;

	oflow_at(0, 256, 0x9);
	land(0, 100, 0x9, 1);
	memset(pbuf, 0xee, 64);
	append(P4E_PRIORITY_LIST, pbuf, 10, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x9, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10);
	cr_expect_eq(ev.rlength, 100);
	cr_expect_eq(memcmp(pbuf, src[0], 10), 0);
	cr_expect_eq(pbuf[10], 0xee);
}

Test(eng_search, uh_copy_between_iovecs)
{
	struct iovec oiov[3] = {
		{ obuf, 100 }, { obuf + 200, 5000 }, { obuf + 6000, 9000 },
	};
	struct iovec piov[2] = { { pbuf, 3000 }, { pbuf + 4000, 8000 } };
	struct p4e_me_desc d;
	struct p4e_event ev;

	/* a rendezvous put is pulled into a scattered overflow entry */
	d = eng_me_desc(oiov, 3, P4E_ME_OP_PUT | P4E_ME_IOVEC, 0x2, 0);
	eng_append(&e, 1, &d, P4E_OVERFLOW_LIST, OFL);
	ev_is(1, P4E_EVENT_LINK);
	put(2, 10000, 0x2, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 10000);
	ini_done(P4E_NI_OK, 10000);
	d = eng_me_desc(piov, 2, P4E_ME_OP_PUT | P4E_ME_IOVEC |
			P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x2, 0);
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(ev.start, pbuf);
	cr_expect_eq(memcmp(pbuf, src[2], 3000), 0);
	cr_expect_eq(memcmp(pbuf + 4000, src[2] + 3000, 7000), 0);
	cr_expect_eq(pbuf[3000], 0, "the gap between segments untouched");
}

/* ---- rendezvous and the overflow list ----------------------------------- */

Test(eng_search, rdzv_hdr_only_keeps_the_header_and_pulls_later)
{
	struct p4e_event ev;

	oflow_at(P4E_ME_RDZV_HDR_ONLY, 64, 0x77);
	put(0, 10000, 0x77, 0x1d);
	eng_progress(&e);
	eng_no_event(&e, 1);
	eng_no_event(&e, 0);	/* no SEND, no ACK: nothing moved yet */
	cr_expect_eq(obuf[0], 0, "no overflow space used");

	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x77, PRI);
	eng_no_event(&e, 1);	/* events after the work */
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, pbuf, "the data went straight into the entry");
	cr_expect_eq(ev.mlength, 10000);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(ev.hdr_data, 0x1d);
	cr_expect_eq(memcmp(pbuf, src[0], 10000), 0);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	ini_done(P4E_NI_OK, 10000);
	eng_no_event(&e, 0);
}

Test(eng_search, remote_offsets_past_the_entry_move_nothing)
{
	struct p4e_event ev;

	/* pitfall 4 on the unexpected paths: an offset past the new entry
	 * leaves nothing to move (UBSan: and no pointer formed past it) */
	oflow_at(P4E_ME_RDZV_HDR_ONLY, 64, 0x5);
	put_x(0, 10000, 0x5, 1, UINT64_MAX - 100);
	eng_progress(&e);
	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT | P4E_ME_USE_ONCE,
	       0x5, PRI);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(ev.remote_offset, UINT64_MAX - 100);
	ini_done(P4E_NI_OK, 0);
	eng_drain(&e, 1);
	/* an eager one copied by UH_COPY */
	oflow_at(0, 64, 0x6);
	put_x(1, 8, 0x6, 2, 8);
	eng_progress(&e);
	ev_is(1, P4E_EVENT_PUT);
	append(P4E_PRIORITY_LIST, pbuf, 4, P4E_ME_USE_ONCE | P4E_ME_UH_COPY,
	       0x6, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.mlength, 0);
	cr_expect_eq(pbuf[0], 0);
}

Test(eng_search, remote_offset_past_an_entry_at_the_target)
{
	struct p4e_event ev;

	append(P4E_PRIORITY_LIST, pbuf, 64, P4E_ME_OP_PUT, 0x5, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put_x(0, 8, 0x5, 1, UINT64_MAX - 100);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, 0);
	ini_done(P4E_NI_OK, 0);
}

Test(eng_search, rdzv_without_hdr_only_is_pulled_into_the_overflow_entry)
{
	struct p4e_event ev;

	oflow_at(0, 64, 0x78);
	put(0, 10000, 0x78, 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(ev.rlength, 10000);
	cr_expect_eq(memcmp(obuf, src[0], 64), 0);
	ini_done(P4E_NI_OK, 64);

	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE, 0x78, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.start, obuf);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(ev.rlength, 10000);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
}

Test(eng_search, rdzv_header_not_matchable_before_its_data_is_in)
{
	struct p4e_event ev;

	oflow_at(0, 64, 0x79);
	put(0, 10000, 0x79, 0);
	/* the header reaches the target, the pull is still pending */
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	append(P4E_PRIORITY_LIST, pbuf, sizeof(pbuf),
	       P4E_ME_OP_PUT | P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x79, PRI);
	eng_progress(&e);
	/* the overflow entry got its data first, then the priority entry */
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(memcmp(pbuf, src[0], 64), 0);
}

/* The same through a claim: the delivery waits for the data. */
Test(eng_search, claimed_rdzv_header_delivered_once_its_data_is_in)
{
	struct p4e_event ev;
	uint64_t uh;

	oflow_at(0, 64, 0x7a);
	put(0, 10000, 0x7a, 0);
	cr_assert_eq(p4e_ni_progress(e.ni[1], 1), 1);
	uh = claim(0x7a);
	cr_assert_eq(deliver(uh, pbuf, sizeof(pbuf)), 0);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.user_ptr, PRI);
	cr_expect_eq(ev.mlength, 64);
	cr_expect_eq(memcmp(pbuf, src[0], 64), 0);
	eng_no_event(&e, 1);
}

/* ---- matching order ------------------------------------------------------------ */

/* A third NI on the domain, to have two initiators. */
static struct p4e_ni *third_open(uint32_t *id_p)
{
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = &p4t_loop_ops,
		.eager_size = 4096,
		.uid = 1002,
	};
	struct p4e_ni *ni;
	char addr[64];
	size_t len = sizeof(addr);

	cr_assert_eq(p4e_ni_create(e.dom, &attr, &ni), 0);
	cr_assert_eq(p4e_ni_getname(ni, addr, &len), 0);
	cr_assert_eq(p4e_peer_lookup(e.dom, addr, len, id_p), 0);
	return ni;
}

static void third_put(struct p4e_ni *ni, uint64_t bits, uint64_t hdr_data)
{
	struct p4e_md_desc d = {
		.start = src[2], .length = 8, .eq = NULL, .ct = P4E_HANDLE_NONE,
	};
	struct p4e_xfer x = {
		.length = 8, .ack_req = P4E_ACK_REQ, .target = e.id[1],
		.pt_index = e.pt[1], .match_bits = bits, .hdr_data = hdr_data,
		.get_md = P4E_HANDLE_NONE,
	};

	cr_assert_eq(p4e_md_bind(ni, &d, &x.md), 0);
	cr_assert_eq(p4e_put(ni, &x), 0);
}

static uint64_t append_id(uint64_t bits, uint64_t ignore, uint32_t id,
			  unsigned opt, void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(pbuf, 64, P4E_ME_OP_PUT | opt, bits,
					   ignore);

	d.match_id = id;
	return eng_append(&e, 1, &d, P4E_PRIORITY_LIST, user_ptr);
}

Test(eng_search, match_rule_uses_xor_not_and)
{
	struct p4e_event ev;

	/* pitfall 1: bits set in ignored positions do not stop a match */
	append_id(0xff, 0xf0, P4E_ID_ANY, 0, PRI);
	ev_is(1, P4E_EVENT_LINK);
	put(0, 8, 0x0f, 1);
	put(0, 8, 0xaf, 2);
	put(0, 8, 0x0e, 3);
	eng_progress(&e);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 1);
	ev = ev_is(1, P4E_EVENT_PUT);
	cr_expect_eq(ev.hdr_data, 2);
	eng_no_event(&e, 1);
	cr_expect_eq(sr(1, P4E_SR_DROP_COUNT), 1);
}

Test(eng_search, list_order_with_mixed_masks_and_sources)
{
	static const struct {
		uint64_t bits;
		int from;		/* 0: ni[0], 2: the third NI */
		void *want;
	} plan[] = {
		{ 0x10f, 0, (void *)0xb },	/* A is for the third NI */
		{ 0x10f, 0, (void *)0xc },
		{ 0x10f, 0, (void *)0xd },
		{ 0x1ab, 2, (void *)0xa },
		{ 0x1ab, 2, (void *)0xa },	/* A is persistent */
		{ 0x200, 0, (void *)0xd },	/* E came later than D */
		{ 0x0ff, 2, (void *)0xd },
	};
	struct p4e_event ev;
	struct p4e_ni *ni2;
	uint32_t id2;
	size_t i;

	ni2 = third_open(&id2);
	append_id(0x100, 0x0ff, id2, 0, (void *)0xa);
	append_id(0x1ff, 0x0f0, P4E_ID_ANY, P4E_ME_USE_ONCE, (void *)0xb);
	append_id(0x100, 0x0ff, e.id[0], P4E_ME_USE_ONCE, (void *)0xc);
	append_id(0, UINT64_MAX, P4E_ID_ANY, 0, (void *)0xd);
	append_id(0x200, 0, P4E_ID_ANY, 0, (void *)0xe);
	for (i = 0; i < 5; i++)
		ev_is(1, P4E_EVENT_LINK);
	for (i = 0; i < P4U_ARRAY_SIZE(plan); i++) {
		if (plan[i].from)
			third_put(ni2, plan[i].bits, i);
		else
			put(0, 8, plan[i].bits, i);
		eng_progress(&e);
		ev = ev_is(1, P4E_EVENT_PUT);
		cr_expect_eq(ev.user_ptr, plan[i].want, "put %zu went to %p",
			     i, ev.user_ptr);
		cr_expect_eq(ev.initiator, plan[i].from ? id2 : e.id[0]);
		cr_expect_eq(ev.uid, plan[i].from ? 1002 : 1000);
		while (p4e_eq_ring_get(e.eq[1], &ev) == 0)
			cr_assert_eq(ev.type, P4E_EVENT_AUTO_UNLINK);
	}
	cr_assert_eq(p4e_ni_destroy(ni2), 0);
}

Test(eng_search, unexpected_order_with_masks_and_sources)
{
	struct p4e_event ev;
	struct p4e_ni *ni2;
	uint32_t id2;

	ni2 = third_open(&id2);
	oflow_all(4096);
	put(0, 8, 0x1, 1);
	eng_progress(&e);
	third_put(ni2, 0x2, 2);
	eng_progress(&e);
	put(0, 8, 0x3, 3);
	eng_progress(&e);
	third_put(ni2, 0x1, 4);
	eng_progress(&e);
	while (p4e_eq_ring_get(e.eq[1], &ev) == 0)
		cr_assert_eq(ev.type, P4E_EVENT_PUT);

	/* from the third NI only, any bits: 2 then 4, in arrival order */
	append_id(0, UINT64_MAX, id2, 0, PRI);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 2);
	cr_expect_eq(ev.initiator, id2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 4);
	ev_is(1, P4E_EVENT_LINK);
	/* bit 0 set, bit 1 ignored, anyone: the oldest left is 1, then 3 */
	append_id(0x1, 0x2, P4E_ID_ANY, P4E_ME_USE_ONCE, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 1);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append_id(0x3, 0, e.id[0], P4E_ME_USE_ONCE, PRI2);
	ev = ev_is(1, P4E_EVENT_PUT_OVERFLOW);
	cr_expect_eq(ev.hdr_data, 3);
	ev_is(1, P4E_EVENT_AUTO_UNLINK);
	append_id(0, UINT64_MAX, P4E_ID_ANY, P4E_ME_USE_ONCE, PRI2);
	ev_is(1, P4E_EVENT_LINK);	/* none left */
	cr_assert_eq(p4e_ni_destroy(ni2), 0);
}
