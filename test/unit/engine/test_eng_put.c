/*
 * test_eng_put.c - put and get through two NIs on the loop transport:
 * data lands, the events of both sides come in order with the right
 * fields, ack kinds, offsets, truncation, hdr_data, eager and rendezvous.
 */
#include "p4e_test.h"

static struct eng e;

static void setup(void)
{
	eng_open(&e);
}

static void teardown(void)
{
	eng_close(&e);
}

TestSuite(eng_put, .init = setup, .fini = teardown, .timeout = 30);

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

static void put_and_check(size_t len)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	struct p4e_me_desc d = eng_me_desc(dst, sizeof(dst), P4E_ME_OP_PUT |
					   P4E_ME_USE_ONCE, 0x42, 0);
	struct p4e_xfer x;
	struct p4e_event ev;
	uint64_t md;

	fill(src, len, 3);
	memset(dst, 0, sizeof(dst));
	eng_append(&e, 1, &d, P4E_PRIORITY_LIST, (void *)0x1111);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_LINK);
	md = eng_md(&e, 0, src, len, 0, P4E_HANDLE_NONE);
	x = eng_xfer(&e, 0, md, len, 0x42);
	x.user_ptr = (void *)0x2222;
	x.hdr_data = 0xfeedULL;
	cr_assert_eq(p4e_put(e.ni[0], &x), 0);
	eng_progress(&e);

	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_PUT);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(ev.rlength, len);
	cr_expect_eq(ev.match_bits, 0x42);
	cr_expect_eq(ev.hdr_data, 0xfeedULL);
	cr_expect_eq(ev.user_ptr, (void *)0x1111);
	cr_expect_eq(ev.initiator, e.id[0]);
	cr_expect_eq(ev.uid, 1000);
	cr_expect_eq(ev.start, dst);
	ev = eng_event(&e, 1);
	cr_expect_eq(ev.type, P4E_EVENT_AUTO_UNLINK);
	eng_no_event(&e, 1);
	cr_expect_eq(memcmp(src, dst, len), 0, "data of %zu bytes", len);

	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	cr_expect_eq(ev.user_ptr, (void *)0x2222);
	ev = eng_event(&e, 0);
	cr_expect_eq(ev.type, P4E_EVENT_ACK);
	cr_expect_eq(ev.mlength, len);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	eng_no_event(&e, 0);
	cr_expect_eq(p4e_md_release(e.ni[0], md), 0);
}

Test(eng_put, small)
{
	put_and_check(8);
}

Test(eng_put, zero_bytes)
{
	put_and_check(0);
}

Test(eng_put, eager_limit)
{
	put_and_check(4096);
}

Test(eng_put, rendezvous)
{
	put_and_check(4097);
	put_and_check(1 << 20);
}
