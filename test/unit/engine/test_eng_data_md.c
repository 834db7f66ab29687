/*
 * test_eng_data_md.c - memory descriptors and where their data goes
 * (suite eng_data, fixture p4e_data_test.h, as test_eng_data.c): MD
 * options (event suppression, counting events), iovec MDs and entries
 * (also for atomics, which need their target in one piece), and
 * md_release while operations are pending.
 *
 * Every buffer has guard bytes around the region an operation may touch,
 * and every check compares bytes, so a write in the wrong place shows.
 */
#include "p4e_data_test.h"

TestSuite(eng_data, .init = data_setup, .fini = data_teardown,
	  .timeout = 60);

/* ---- MD options ------------------------------------------------------------ */

Test(eng_data, md_event_success_disable)
{
	struct p4e_me_desc d = eng_me_desc(dst, 100, P4E_ME_OP_PUT, 2, 0);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	append_me(dst, 100, P4E_ME_OP_PUT | P4E_ME_OP_GET);
	md = eng_md(&e, 0, src, 3000, P4E_MD_EVENT_SUCCESS_DISABLE,
		    P4E_HANDLE_NONE);
	run_put(md, 0, 10, 0);
	run_put(md, 0, 3000, 0);
	run_get(md, 0, 10, 0);
	eng_no_event(&e, 0);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_PUT);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_GET);
	/* failures are still reported */
	append(1, &d, P4E_PRIORITY_LIST);
	x = eng_xfer(&e, 0, md, 10, 2);
	cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION);
	x = eng_xfer(&e, 0, md, 3000, 3);	/* nothing matches bits 3 */
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_DROPPED);
	eng_no_event(&e, 0);
}

Test(eng_data, md_event_send_disable)
{
	uint64_t md;

	append_me(dst, 100, P4E_ME_OP_PUT);
	md = eng_md(&e, 0, src, 3000, P4E_MD_EVENT_SEND_DISABLE,
		    P4E_HANDLE_NONE);
	run_put(md, 0, 10, 0);
	run_put(md, 0, 3000, 0);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_ACK);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_ACK);
	eng_no_event(&e, 0);
}

/* Counts on the MD's CT for: put 300 into 100 bytes, get 300 of 100. */
static struct p4e_ct_event md_counts(unsigned md_opts)
{
	uint64_t md, me, ct;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	me = append_me(dst, 100, P4E_ME_OP_PUT | P4E_ME_OP_GET);
	md = eng_md(&e, 0, src, 300, md_opts, ct);
	run_put(md, 0, 300, 0);
	run_get(md, 0, 300, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
	drain(0);
	drain(1);
	return eng_ct(e.dom, ct);
}

Test(eng_data, md_counting_events)
{
	const unsigned B = P4E_MD_EVENT_CT_BYTES;

	cr_expect_eq(md_counts(0).success, 0);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_SEND).success, 1);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_ACK).success, 1);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_REPLY).success, 1);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_SEND | P4E_MD_EVENT_CT_ACK |
			       P4E_MD_EVENT_CT_REPLY).success, 3);
	/* bytes: SEND counts the length sent, ACK and REPLY the mlength */
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_SEND | B).success, 300);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_ACK | B).success, 100);
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_REPLY | B).success, 100);
	/* counted even when the full events are off */
	cr_expect_eq(md_counts(P4E_MD_EVENT_CT_SEND | P4E_MD_EVENT_CT_ACK |
			       P4E_MD_EVENT_SEND_DISABLE |
			       P4E_MD_EVENT_SUCCESS_DISABLE).success, 2);
}

/* ---- iovec MDs and entries ------------------------------------------------- */

/* Three separate arrays, as an iovec of lens[]. */
static void make_iov(struct iovec *iov, uint8_t *base, const size_t *lens,
		     int n)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		/* a gap of 16 guard bytes between elements */
		iov[i].iov_base = base + off;
		iov[i].iov_len = lens[i];
		off += lens[i] + 16;
	}
}

/* Gather [off, off + len) of an iovec into out. */
static void iov_gather(const struct iovec *iov, int n, size_t off, size_t len,
		       uint8_t *out)
{
	int i;
	size_t k;

	for (i = 0; i < n && len; i++) {
		for (k = 0; k < iov[i].iov_len && len; k++) {
			if (off) {
				off--;
				continue;
			}
			*out++ = ((uint8_t *)iov[i].iov_base)[k];
			len--;
		}
	}
}

static void iov_md_put(const size_t *lens, int n, size_t loff, size_t len)
{
	static uint8_t want[20000];
	struct iovec iov[4];
	struct p4e_md_desc d = { .start = iov, .length = (uint64_t)n,
				 .options = P4E_MD_IOVEC, .eq = e.eq[0] };
	struct p4e_event ev;
	uint64_t md;

	fill(src, sizeof(src), 0x71);
	make_iov(iov, src, lens, n);
	iov_gather(iov, n, loff, len, want);
	memset(dst, GUARD, len + 64);
	append_me(dst, len, P4E_ME_OP_PUT | P4E_ME_USE_ONCE);
	cr_assert_eq(p4e_md_bind(e.ni[0], &d, &md), 0);
	run_put(md, loff, len, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(memcmp(dst, want, len), 0, "gathered %zu at %zu", len,
		     loff);
	cr_expect(guarded(dst, len, len + 64));
	eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OK);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_data, iovec_md_put)
{
	static const size_t small[] = { 10, 20, 30 };
	static const size_t big[] = { 3000, 5000, 4000 };

	iov_md_put(small, 3, 5, 40);	/* spans all three */
	iov_md_put(small, 3, 10, 20);	/* exactly the second */
	iov_md_put(big, 3, 500, 2000);	/* held eager from one element */
	iov_md_put(big, 3, 500, 11000);	/* rendezvous across all */
}

static void iov_md_get(const size_t *lens, int n, size_t loff, size_t len)
{
	static uint8_t got[20000];
	struct iovec iov[4];
	struct p4e_md_desc d = { .start = iov, .length = (uint64_t)n,
				 .options = P4E_MD_IOVEC, .eq = e.eq[0] };
	struct p4e_event ev;
	size_t total = 0;
	int i;
	uint64_t md;

	memset(src, GUARD, sizeof(src));
	make_iov(iov, src, lens, n);
	for (i = 0; i < n; i++)
		total += lens[i] + 16;
	fill(dst, len, 0x19);
	append_me(dst, len, P4E_ME_OP_GET | P4E_ME_USE_ONCE);
	cr_assert_eq(p4e_md_bind(e.ni[0], &d, &md), 0);
	run_get(md, loff, len, 0);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.mlength, len);
	iov_gather(iov, n, loff, len, got);
	cr_expect_eq(memcmp(got, dst, len), 0, "scattered %zu at %zu", len,
		     loff);
	/* outside [loff, loff + len) of the iovec, and the gaps: guard */
	iov_gather(iov, n, 0, loff, got);
	cr_expect(guarded(got, 0, loff));
	for (i = 0; i < n; i++)
		cr_expect(guarded((uint8_t *)iov[i].iov_base + lens[i], 0, 16));
	cr_expect(guarded(src, total, total + 64));
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	drain(1);
}

Test(eng_data, iovec_md_get)
{
	static const size_t small[] = { 10, 20, 30 };
	static const size_t big[] = { 3000, 5000, 4000 };

	iov_md_get(small, 3, 5, 40);
	iov_md_get(big, 3, 500, 2000);
	iov_md_get(big, 3, 500, 11000);	/* pushed reply */
}

static void iov_me_put_get(const size_t *lens, int n, size_t roff, size_t len)
{
	static uint8_t want[20000];
	struct iovec iov[4];
	struct p4e_me_desc d = eng_me_desc(iov, (uint64_t)n, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET | P4E_ME_IOVEC, 0, 0);
	struct p4e_event ev;
	uint64_t md, me;
	size_t skip = roff;
	int i;

	memset(dst, GUARD, sizeof(dst));
	make_iov(iov, dst, lens, n);
	fill(src, len, 0x3c);
	me = append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	run_put(md, 0, len, roff);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.mlength, len);
	/* the event's start is the address of byte roff of the entry */
	for (i = 0; i < n && skip >= lens[i]; i++)
		skip -= lens[i];
	cr_expect_eq(ev.start, (uint8_t *)iov[i].iov_base + skip);
	iov_gather(iov, n, roff, len, want);
	cr_expect_eq(memcmp(want, src, len), 0, "put %zu at %zu", len, roff);
	for (i = 0; i < n; i++)
		cr_expect(guarded((uint8_t *)iov[i].iov_base + lens[i], 0, 16));
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OK);
	/* and back again */
	memset(src, 0, len);
	run_get(md, 0, len, roff);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_GET);
	cr_expect_eq(eng_event(&e, 0).mlength, len);
	cr_expect_eq(memcmp(want, src, len), 0, "get %zu at %zu", len, roff);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
}

Test(eng_data, iovec_me)
{
	static const size_t small[] = { 16, 16, 100 };
	static const size_t big[] = { 3000, 5000, 6000 };

	iov_me_put_get(small, 3, 8, 40);
	iov_me_put_get(small, 3, 16, 16);
	iov_me_put_get(big, 3, 500, 7000);	/* rendezvous, pushed */
}

/* ---- md_release while operations are pending ------------------------------- */

Test(eng_data, md_release_busy)
{
	static const size_t sizes[] = { 10, 3000, 9000 };
	struct p4e_xfer x;
	uint64_t md;
	size_t i;

	append_me(dst, 10000, P4E_ME_OP_PUT | P4E_ME_OP_GET);
	for (i = 0; i < 3; i++) {
		md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
		x = eng_xfer(&e, 0, md, sizes[i], 0);
		x.ack_req = P4E_NO_ACK_REQ;
		cr_assert_eq(p4e_put(e.ni[0], &x), 0);
		if (sizes[i] == 10 && eng_is_loop()) {
			/* copied: its SEND, the last event of a put without
			 * ack, went at post (the loop sends at once; TCP may
			 * queue, and SEND waits for the write); the copy
			 * waiting for acceptance holds the MD no more */
			cr_expect_eq(p4e_md_release(e.ni[0], md), 0,
				     "put of %zu", sizes[i]);
		} else if (sizes[i] == 10) {
			eng_progress(&e);
			cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
		} else {
			cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EBUSY,
				     "put of %zu", sizes[i]);
			eng_progress(&e);
			cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
		}

		md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
		x.md = md;
		cr_assert_eq(p4e_get(e.ni[0], &x), 0);
		cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EBUSY,
			     "get of %zu", sizes[i]);
		eng_progress(&e);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
		/* a released handle is stale */
		cr_expect_eq(p4e_md_release(e.ni[0], md), -FI_EINVAL);
		cr_expect_eq(p4e_put(e.ni[0], &x), -FI_EINVAL);
	}
}
