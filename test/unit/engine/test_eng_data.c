/*
 * test_eng_data.c - where data goes and what a refused operation leaves:
 * remote and local offsets, locally managed offsets, truncation of puts
 * and gets, NO_TRUNCATE, P4E_ME_VIRT_ADDR, offsets past the end
 * (rule 4), permission and operation violations (rule 2: nothing
 * changes), the list an ACK reports and a get that matches nothing. MD
 * options, iovec MDs and entries and md_release are in test_eng_data_md.c
 * (same suite and fixture, p4e_data_test.h).
 *
 * Every buffer has guard bytes around the region an operation may touch,
 * and every check compares bytes, so a write in the wrong place shows.
 */
#include "p4e_data_test.h"

TestSuite(eng_data, .init = data_setup, .fini = data_teardown,
	  .timeout = 60);

/* what dst held before a refused operation */
static uint8_t pat[65536];

/* ---- offsets ------------------------------------------------------------- */

Test(eng_data, remote_and_local_offsets)
{
	static const size_t sizes[] = { 40, 3000, 9000 };
	struct p4e_event ev;
	uint64_t md;
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = sizes[i];
		fill(src, 20000, (uint8_t)i);
		memset(dst, GUARD, 20000);
		append_me(dst, 20000, P4E_ME_OP_PUT | P4E_ME_USE_ONCE);
		md = eng_md(&e, 0, src, 20000, 0, P4E_HANDLE_NONE);
		run_put(md, 100, n, 5000);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.start, dst + 5000);
		cr_expect_eq(ev.remote_offset, 5000);
		cr_expect_eq(ev.mlength, n);
		cr_expect_eq(memcmp(dst + 5000, src + 100, n), 0);
		cr_expect(guarded(dst, 0, 5000));
		cr_expect(guarded(dst, 5000 + n, 20000));
		eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
		cr_expect_eq(eng_event(&e, 0).start, src + 100, "SEND start");
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_ACK);
		cr_expect_eq(ev.start, src + 100);
		cr_expect_eq(ev.remote_offset, 5000);
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
}

Test(eng_data, get_remote_and_local_offsets)
{
	static const size_t sizes[] = { 40, 3000, 9000 };
	struct p4e_event ev;
	uint64_t md;
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = sizes[i];
		fill(dst, 20000, (uint8_t)(i + 7));
		memset(src, GUARD, 20000);
		append_me(dst, 20000, P4E_ME_OP_GET | P4E_ME_USE_ONCE);
		md = eng_md(&e, 0, src, 20000, 0, P4E_HANDLE_NONE);
		run_get(md, 300, n, 4000);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_GET);
		cr_expect_eq(ev.start, dst + 4000);
		cr_expect_eq(ev.remote_offset, 4000);
		eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_REPLY);
		cr_expect_eq(ev.start, src + 300);
		cr_expect_eq(ev.remote_offset, 4000);
		cr_expect_eq(ev.mlength, n);
		cr_expect_eq(memcmp(src + 300, dst + 4000, n), 0);
		cr_expect(guarded(src, 0, 300));
		cr_expect(guarded(src, 300 + n, 20000));
		cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
	}
}

Test(eng_data, manage_local_offsets_and_min_free)
{
	static const size_t sizes[] = { 100, 200, 6000, 50 };
	static const uint64_t offs[] = { 0, 100, 300, 6300 };
	struct p4e_me_desc d = eng_me_desc(dst, 6400, P4E_ME_OP_PUT |
					   P4E_ME_MANAGE_LOCAL, 0, 0);
	struct p4e_event ev;
	uint64_t md;
	size_t i;

	/* after the third put 100 bytes are free: not below min_free */
	d.min_free = 100;
	memset(dst, GUARD, sizeof(dst));
	fill(src, 8000, 3);
	append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 8000, 0, P4E_HANDLE_NONE);
	for (i = 0; i < 4; i++) {
		/* the initiator's remote offset is ignored */
		run_put(md, i, sizes[i], 99999);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.start, dst + offs[i], "put %zu", i);
		cr_expect_eq(ev.mlength, sizes[i]);
		cr_expect_eq(memcmp(dst + offs[i], src + i, sizes[i]), 0);
		ev = put_ack();
		cr_expect_eq(ev.remote_offset, offs[i], "ACK %zu", i);
		if (i < 3)
			eng_no_event(&e, 1);
	}
	/* 50 free is below min_free: unlinked after the last use */
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_AUTO_UNLINK);
	cr_expect(guarded(dst, 6350, 7000));
}

/* Rule 4: a managed offset advances by mlength and never underflows. */
Test(eng_data, manage_local_truncation)
{
	static const size_t sizes[] = { 80, 80, 10 };
	static const uint64_t mlen[] = { 80, 20, 0 };
	static const uint64_t offs[] = { 0, 80, 100 };
	struct p4e_event ev;
	uint64_t md;
	size_t i;

	memset(dst, GUARD, 200);
	fill(src, 300, 1);
	append_me(dst, 100, P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL);
	md = eng_md(&e, 0, src, 300, 0, P4E_HANDLE_NONE);
	for (i = 0; i < 3; i++) {
		run_put(md, 100 * i, sizes[i], 0);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.mlength, mlen[i], "put %zu", i);
		cr_expect_eq(ev.rlength, sizes[i]);
		ev = put_ack();
		cr_expect_eq(ev.mlength, mlen[i]);
		cr_expect_eq(ev.remote_offset, offs[i]);
	}
	cr_expect_eq(memcmp(dst, src, 80), 0);
	cr_expect_eq(memcmp(dst + 80, src + 100, 20), 0);
	cr_expect(guarded(dst, 100, 200));
}

/* ---- truncation ------------------------------------------------------------ */

static void truncated_put(size_t me_len, size_t len)
{
	struct p4e_event ev;
	uint64_t md;

	memset(dst, GUARD, me_len + 4096);
	fill(src, len, 0x11);
	append_me(dst, me_len, P4E_ME_OP_PUT | P4E_ME_USE_ONCE);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	run_put(md, 0, len, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.mlength, me_len);
	cr_expect_eq(ev.rlength, len);
	eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
	ev = put_ack();
	cr_expect_eq(ev.mlength, me_len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(memcmp(dst, src, me_len), 0);
	cr_expect(guarded(dst, me_len, me_len + 4096), "past the entry");
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_data, truncate_put)
{
	truncated_put(100, 300);	/* eager */
	truncated_put(5000, 9000);	/* rendezvous: pulls mlength only */
	truncated_put(0, 64);
	truncated_put(0, 9000);		/* nothing to pull */
}

static void truncated_get(size_t me_len, size_t len)
{
	struct p4e_event ev;
	uint64_t md;

	fill(dst, me_len, 0x22);
	memset(src, GUARD, len + 64);
	append_me(dst, me_len, P4E_ME_OP_GET | P4E_ME_USE_ONCE);
	md = eng_md(&e, 0, src, len + 64, 0, P4E_HANDLE_NONE);
	run_get(md, 0, len, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_GET);
	cr_expect_eq(ev.mlength, me_len);
	cr_expect_eq(ev.rlength, len);
	eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.mlength, me_len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(memcmp(src, dst, me_len), 0);
	cr_expect(guarded(src, me_len, len + 64), "past the reply");
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_data, truncate_get)
{
	truncated_get(100, 300);	/* inline reply */
	truncated_get(6000, 9000);	/* pushed reply */
	truncated_get(0, 10);
	truncated_get(0, 9000);		/* nothing to push */
}

/* A get that matches nothing: DROPPED, the buffer untouched. */
Test(eng_data, get_no_match)
{
	static const size_t sizes[] = { 10, 9000 };
	int64_t drops = status_reg(1, P4E_SR_DROP_COUNT);
	struct p4e_event ev;
	uint64_t md;
	size_t i;

	memset(src, GUARD, 10000);
	md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
	for (i = 0; i < 2; i++) {
		run_get(md, 0, sizes[i], 0);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_REPLY);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_DROPPED);
		cr_expect_eq(ev.mlength, 0);
	}
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
	cr_expect(guarded(src, 0, 10000));
	cr_expect_eq(status_reg(1, P4E_SR_DROP_COUNT) - drops, 2);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_data, no_truncate_skips_entry)
{
	static uint8_t small[100];
	struct p4e_event ev;
	uint64_t md;

	memset(small, GUARD, sizeof(small));
	memset(dst, GUARD, 1000);
	fill(src, 300, 4);
	append_me(small, 100, P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
		  P4E_ME_NO_TRUNCATE);
	append_me(dst, 1000, P4E_ME_OP_PUT | P4E_ME_USE_ONCE);
	md = eng_md(&e, 0, src, 300, 0, P4E_HANDLE_NONE);
	/* 300 bytes do not fit the first entry: the second one takes it */
	run_put(md, 0, 300, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.start, dst);
	cr_expect_eq(ev.mlength, 300);
	eng_event_type(&e, 1, P4E_EVENT_AUTO_UNLINK);
	cr_expect(guarded(small, 0, 100));
	put_ack();
	/* 60 bytes at offset 50 do not fit either: dropped, no other entry */
	run_put(md, 0, 60, 50);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_DROPPED);
	eng_no_event(&e, 1);
	/* the first entry is still there for what fits */
	run_put(md, 0, 50, 50);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.start, small + 50);
	cr_expect_eq(ev.mlength, 50);
	cr_expect_eq(memcmp(small + 50, src, 50), 0);
	cr_expect(guarded(small, 0, 50));
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OK);
}

Test(eng_data, virt_addr)
{
	uint64_t base = (uint64_t)(uintptr_t)dst;
	struct p4e_event ev;
	uint64_t md;

	memset(dst, GUARD, 512);
	fill(src, 64, 8);
	append_me(dst, 256, P4E_ME_OP_PUT | P4E_ME_OP_GET | P4E_ME_VIRT_ADDR);
	md = eng_md(&e, 0, src, 64, 0, P4E_HANDLE_NONE);
	run_put(md, 0, 32, base + 64);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.start, dst + 64);
	cr_expect_eq(ev.remote_offset, base + 64, "as the initiator sent it");
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(memcmp(dst + 64, src, 32), 0);
	cr_expect(guarded(dst, 0, 64));
	cr_expect(guarded(dst, 96, 512));
	ev = put_ack();
	cr_expect_eq(ev.remote_offset, 64, "the offset used at the target");
	/* truncated at the end of the entry */
	run_put(md, 0, 64, base + 240);
	cr_expect_eq(eng_event(&e, 1).mlength, 16);
	cr_expect_eq(put_ack().mlength, 16);
	cr_expect(guarded(dst, 256, 512));
	/* an address below the entry: nothing fits */
	run_put(md, 0, 32, base - 16);
	cr_expect_eq(eng_event(&e, 1).mlength, 0);
	cr_expect_eq(put_ack().mlength, 0);
	cr_expect(guarded(dst, 0, 64));
	/* a get by address */
	memset(src, 0, 64);
	run_get(md, 0, 32, base + 64);
	cr_expect_eq(eng_event(&e, 1).type, P4E_EVENT_GET);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.mlength, 32);
	cr_expect_eq(memcmp(src, dst + 64, 32), 0);
}

/* Rule 4: a remote offset past the end gives mlength 0, no underflow. */
Test(eng_data, offset_past_end)
{
	static const uint64_t offs[] = { 100, 200, UINT64_MAX - 10 };
	struct p4e_event ev;
	uint64_t md;
	size_t i;

	memset(dst, GUARD, 512);
	memset(src, 0x77, 64);
	append_me(dst, 100, P4E_ME_OP_PUT | P4E_ME_OP_GET);
	md = eng_md(&e, 0, src, 64, 0, P4E_HANDLE_NONE);
	for (i = 0; i < 3; i++) {
		run_put(md, 0, 50, offs[i]);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.type, P4E_EVENT_PUT);
		cr_expect_eq(ev.mlength, 0, "offset %lu", (unsigned long)offs[i]);
		cr_expect_eq(ev.rlength, 50);
		/* the end of the entry is an address; beyond it, none */
		cr_expect_eq(ev.start, offs[i] == 100 ? dst + 100 : NULL);
		ev = put_ack();
		cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
		cr_expect_eq(ev.mlength, 0);
		run_get(md, 0, 50, offs[i]);
		ev = eng_event(&e, 1);
		cr_expect_eq(ev.mlength, 0);
		cr_expect_eq(ev.start, offs[i] == 100 ? dst + 100 : NULL);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_REPLY);
		cr_expect_eq(ev.mlength, 0);
		cr_expect_eq(src[0], 0x77, "nothing came back");
	}
	cr_expect(guarded(dst, 0, 512));
}

/* ---- violations: reported, counted, and nothing changes (rule 2) ----- */

Test(eng_data, permission_violation)
{
	static const size_t sizes[] = { 16, 3000, 9000 };
	int64_t perm = status_reg(1, P4E_SR_PERMISSION_VIOLATIONS);
	struct p4e_me_desc d = eng_me_desc(dst, 10000, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET | P4E_ME_USE_ONCE |
					   P4E_ME_EVENT_CT_COMM, 0, 0);
	struct p4e_event ev;
	uint64_t md, me, ct;
	size_t i;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	d.ct = ct;
	d.uid = 999;	/* not side 0's uid (1000) */
	memset(dst, GUARD, 10000);
	memset(src, 0x31, 10000);
	me = append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
	for (i = 0; i < 3; i++) {
		run_put(md, 0, sizes[i], 0);
		ev = put_ack();
		cr_expect_eq(ev.ni_fail_type, P4E_NI_PERM_VIOLATION);
		cr_expect_eq(ev.mlength, 0);
		run_get(md, 0, sizes[i], 0);
		ev = eng_event(&e, 0);
		cr_expect_eq(ev.type, P4E_EVENT_REPLY);
		cr_expect_eq(ev.ni_fail_type, P4E_NI_PERM_VIOLATION);
		cr_expect_eq(ev.mlength, 0);
	}
	eng_no_event(&e, 0);
	eng_no_event(&e, 1);
	cr_expect_eq(status_reg(1, P4E_SR_PERMISSION_VIOLATIONS) - perm, 6);
	cr_expect(guarded(dst, 0, 10000), "no data written");
	cr_expect_eq(src[0], 0x31, "no data returned");
	cr_expect_eq(eng_ct(e.dom, ct).success, 0);
	/* the use-once entry was not consumed */
	cr_expect_eq(p4e_me_unlink(e.ni[1], me, 0), 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);

	/* the right uid gets through */
	d.uid = 1000;
	append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 16, 0, P4E_HANDLE_NONE);
	run_put(md, 0, 16, 0);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OK);
	cr_expect_eq(eng_ct(e.dom, ct).success, 1);
}

Test(eng_data, operation_violation)
{
	int64_t opv = status_reg(1, P4E_SR_OPERATION_VIOLATIONS);
	struct p4e_me_desc d = eng_me_desc(dst, 1000, P4E_ME_OP_GET |
					   P4E_ME_MANAGE_LOCAL |
					   P4E_ME_EVENT_CT_COMM, 0, 0);
	struct p4e_event ev;
	uint64_t md, ct;

	cr_assert_eq(p4e_ct_alloc(e.dom, &ct), 0);
	d.ct = ct;
	fill(dst, 1000, 0x61);
	memcpy(pat, dst, 1000);
	memset(src, 0x44, 10000);
	append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
	/* no OP_PUT: eager and rendezvous puts refused */
	run_put(md, 0, 100, 0);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OP_VIOLATION);
	run_put(md, 0, 9000, 0);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OP_VIOLATION);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(dst, pat, 1000), 0, "no data written");
	cr_expect_eq(eng_ct(e.dom, ct).success, 0);
	cr_expect_eq(eng_ct(e.dom, ct).failure, 0);
	/* the managed offset did not move: a get still starts at 0 */
	run_get(md, 0, 10, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_GET);
	cr_expect_eq(ev.start, dst);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.remote_offset, 0);
	cr_expect_eq(memcmp(src, dst, 10), 0);
	cr_expect_eq(eng_ct(e.dom, ct).success, 1);
	cr_expect_eq(status_reg(1, P4E_SR_OPERATION_VIOLATIONS) - opv, 2);
	/* the MD is free again: the rendezvous exposure was dropped */
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);

	/* no OP_GET: gets refused, the initiator's buffer untouched */
	d = eng_me_desc(dst, 1000, P4E_ME_OP_PUT, 1, 0);
	append(1, &d, P4E_PRIORITY_LIST);
	md = eng_md(&e, 0, src, 10000, 0, P4E_HANDLE_NONE);
	memset(src, 0x44, 10000);
	{
		struct p4e_xfer x = eng_xfer(&e, 0, md, 100, 1);

		cr_assert_eq(p4e_get(e.ni[0], &x), 0);
		x.length = 9000;
		cr_assert_eq(p4e_get(e.ni[0], &x), 0);
	}
	eng_progress(&e);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_REPLY);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OP_VIOLATION);
	cr_expect_eq(src[0], 0x44);
	cr_expect_eq(src[8999], 0x44);
	cr_expect_eq(status_reg(1, P4E_SR_OPERATION_VIOLATIONS) - opv, 4);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

/* Atomics need their target in one piece: across iovec elements, SEGV
 * (the atomic matrix itself is in test_eng_atomic.c). */
Test(eng_data, atomic_iovec_entry)
{
	static uint64_t a[2], b[4], opnd[2] = { 5, 6 };
	struct iovec iov[2] = { { a, 12 }, { b, 32 } };
	struct p4e_me_desc d = eng_me_desc(iov, 2, P4E_ME_OP_PUT |
					   P4E_ME_IOVEC, 0, 0);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t me;

	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	cr_assert_eq(eng_event(&e, 1).type, P4E_EVENT_LINK);
	x = eng_xfer(&e, 0, eng_md(&e, 0, opnd, 16, 0, P4E_HANDLE_NONE), 16,
		     0);
	x.atomic_op = P4E_SUM;
	x.atomic_type = P4E_UINT64;
	x.remote_offset = 8;	/* bytes 8..24: 4 in a, 12 in b */
	cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	eng_progress(&e);
	ev = put_ack();
	cr_expect_eq(ev.ni_fail_type, P4E_NI_SEGV);
	cr_expect_eq(ev.mlength, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_ATOMIC);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_SEGV);
	cr_expect(!a[0] && !a[1] && !b[0] && !b[1], "nothing applied");
	/* inside one element it works: bytes 12..28 are b[0], b[1] */
	x.remote_offset = 12;
	cr_assert_eq(p4e_atomic(e.ni[0], &x), 0);
	eng_progress(&e);
	cr_expect_eq(put_ack().ni_fail_type, P4E_NI_OK);
	cr_expect_eq(b[0], 5);
	cr_expect_eq(b[1], 6);
}

Test(eng_data, atomic_uid_mismatch)
{
	static uint64_t tgt = 5, opnd = 1, res = 9;
	int64_t perm = status_reg(1, P4E_SR_PERMISSION_VIOLATIONS);
	struct p4e_me_desc d = eng_me_desc(&tgt, 8, P4E_ME_OP_PUT |
					   P4E_ME_OP_GET, 0, 0);
	struct p4e_xfer x;
	uint64_t me;

	d.uid = 4242;
	cr_assert_eq(p4e_me_append(e.ni[1], e.pt[1], &d, P4E_PRIORITY_LIST,
				   NULL, 0, &me), 0);
	x = eng_xfer(&e, 0, eng_md(&e, 0, &opnd, 8, 0, P4E_HANDLE_NONE), 8, 0);
	x.get_md = eng_md(&e, 0, &res, 8, 0, P4E_HANDLE_NONE);
	x.atomic_type = P4E_UINT64;
	x.atomic_op = P4E_SUM;
	cr_assert_eq(p4e_fetch_atomic(e.ni[0], &x), 0);
	eng_progress(&e);
	cr_expect_eq(eng_event(&e, 0).type, P4E_EVENT_SEND);
	cr_expect_eq(eng_event_type(&e, 0, P4E_EVENT_REPLY).ni_fail_type,
		     P4E_NI_PERM_VIOLATION);
	cr_expect_eq(tgt, 5);
	cr_expect_eq(res, 9);
	cr_expect_eq(status_reg(1, P4E_SR_PERMISSION_VIOLATIONS) - perm, 1);
}

/* The ACK says which list the message was delivered on. */
Test(eng_data, ack_reports_overflow_list)
{
	struct p4e_me_desc d = eng_me_desc(dst, 1000, P4E_ME_OP_PUT, 0, 0);
	struct p4e_event ev;
	uint64_t md;

	append(1, &d, P4E_OVERFLOW_LIST);
	md = eng_md(&e, 0, src, 10, 0, P4E_HANDLE_NONE);
	run_put(md, 0, 10, 0);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
	ev = put_ack();
	cr_expect_eq(ev.list, P4E_OVERFLOW_LIST);
}
