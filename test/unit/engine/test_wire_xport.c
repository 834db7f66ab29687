/*
 * test_wire_xport.c - the transport messages of the wire protocol
 * (include/p4_wire.h, p4e_wire.c): HELLO, PULL_REQ and PULL_DATA /
 * PUSH_DATA. Byte-exact layout against hand-written bytes, then one test
 * per validation rule (magic, version, address length and tail, the
 * pulled range, last, status, data lengths and offsets without wrapping,
 * short buffers, the data length against the header, the push range);
 * each passes the bad message if its check is removed.
 *
 * Not here: the engine's messages (test_wire.c, test_wire_parse.c).
 * Message builders and exact-size copies (wire_dup): p4w_test.h.
 */
#include "p4w_test.h"

TestSuite(wire, .init = wire_setup, .fini = wire_teardown, .timeout = 60);

/* ---- layout: hand-written little-endian bytes ------------------------- */

Test(wire, layout_hello)
{
	static const uint8_t want[56] = {
		0x31, 0x46, 0x34, 0x50,		/* magic "1F4P" */
		0x02, 0x00,			/* version */
		0x04, 0x00,			/* addrlen */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* auth_key */
		0xc0, 0xa8, 0x01, 0x02, 0, 0, 0, 0,		/* addr */
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct p4w_hello hello = {
		.magic = P4W_MAGIC, .version = 2, .addrlen = 4,
		.session = 0x0102030405060708ULL,
		.auth_key = 0x1112131415161718ULL,
		.addr = { 0xc0, 0xa8, 0x01, 0x02 },
	};
	struct p4w_hello out;
	uint8_t buf[56];

	p4w_hello_pack(buf, &hello);
	check_bytes(buf, want, sizeof(want));
	cr_assert_eq(p4w_hello_unpack(want, sizeof(want), &out), 0);
	cr_assert_eq(memcmp(&out, &hello, sizeof(hello)), 0);
}

Test(wire, layout_pull_req_data)
{
	static const uint8_t want_pull[48] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* pull_id */
		0x10, 0, 0, 0, 0, 0, 0, 0,			/* offset */
		0x20, 0, 0, 0, 0, 0, 0, 0,			/* length */
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* src.addr */
		0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31, /* src.key */
		0x40, 0, 0, 0, 0, 0, 0, 0,			/* src.length */
	};
	static const uint8_t want_data[56] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* id */
		0x10, 0, 0, 0, 0, 0, 0, 0,			/* offset */
		0, 0, 0, 0, 0, 0, 0, 0,				/* length */
		0x01, 0x00, 0x00, 0x00,				/* last */
		0xf5, 0xff, 0xff, 0xff,				/* status -11 */
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* dst.addr */
		0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31, /* dst.key */
		0x40, 0, 0, 0, 0, 0, 0, 0,			/* dst.length */
	};
	struct p4w_cookie c = {
		.addr = 0x2122232425262728ULL,
		.key = 0x3132333435363738ULL,
		.length = 0x40,
	};
	struct p4w_pull_req pull = {
		.pull_id = 0x0102030405060708ULL,
		.offset = 0x10, .length = 0x20, .src = c,
	};
	struct p4w_data data = {
		.id = 0x0102030405060708ULL, .offset = 0x10, .length = 0,
		.last = 1, .status = -11, .dst = c,
	};
	struct p4w_pull_req pout;
	struct p4w_data dout;
	uint8_t buf[56];

	p4w_pull_req_pack(buf, &pull);
	check_bytes(buf, want_pull, sizeof(want_pull));
	cr_assert_eq(p4w_pull_req_unpack(want_pull, 48, &pout), 0);
	cr_assert_eq(memcmp(&pout, &pull, sizeof(pull)), 0);

	p4w_data_pack(buf, &data);
	check_bytes(buf, want_data, sizeof(want_data));
	cr_assert_eq(p4w_data_unpack(want_data, 56, &dout), 0);
	cr_assert_eq(memcmp(&dout, &data, sizeof(data)), 0);
}

/* ---- transport rules -------------------------------------------------- */

static int hello_try(const struct p4w_hello *hello, size_t poke, uint8_t val)
{
	uint8_t buf[sizeof(*hello)];
	struct p4w_hello out;

	p4w_hello_pack(buf, hello);
	if (poke < sizeof(buf))
		buf[poke] = val;
	return p4w_hello_unpack(wire_dup(buf, sizeof(buf)), sizeof(buf), &out);
}

Test(wire, hello_magic)
{
	struct p4w_hello hello = hello_default();

	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), 0);
	cr_assert_eq(hello_try(&hello, 3, 0x51), -FI_EBADMSG);
	hello.magic = 0;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), -FI_EBADMSG);
}

Test(wire, hello_version)
{
	struct p4w_hello hello = hello_default();

	hello.version = P4W_VERSION + 1;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), -FI_EPROTO);
	hello.version = 0;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), -FI_EPROTO);
	cr_assert_eq(hello_try(&hello, 4, P4W_VERSION), 0);
}

Test(wire, hello_addrlen)
{
	struct p4w_hello hello = hello_default();

	hello.addrlen = P4W_ADDR_MAX;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), 0);
	hello.addrlen = 0;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), 0);
	hello.addrlen = P4W_ADDR_MAX + 1;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), -FI_EMSGSIZE);
	hello.addrlen = UINT16_MAX;
	cr_assert_eq(hello_try(&hello, SIZE_MAX, 0), -FI_EMSGSIZE);
}

Test(wire, hello_addr_tail_zero)
{
	struct p4w_hello hello = hello_default();

	/* addrlen 16: bytes 24..39 are the address, 40..55 must be zero. */
	cr_assert_eq(hello_try(&hello, 24 + 15, 0xff), 0);
	cr_assert_eq(hello_try(&hello, 24 + 16, 1), -FI_EBADMSG);
	cr_assert_eq(hello_try(&hello, 55, 0x80), -FI_EBADMSG);
}

Test(wire, hello_short_buffer)
{
	struct p4w_hello hello = hello_default(), out;
	uint8_t buf[sizeof(hello)];
	size_t len;

	p4w_hello_pack(buf, &hello);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_hello_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE);
}

static int pull_try(uint64_t offset, uint64_t length, uint64_t src_len)
{
	struct p4w_pull_req pull = pull_default(), out;
	uint8_t buf[sizeof(pull)];

	pull.offset = offset;
	pull.length = length;
	pull.src.length = src_len;
	p4w_pull_req_pack(buf, &pull);
	return p4w_pull_req_unpack(wire_dup(buf, sizeof(buf)), sizeof(buf),
				   &out);
}

/* The range pulled stays inside the source cookie, without wrapping. */
Test(wire, pull_req_range)
{
	struct p4w_pull_req out;
	uint8_t buf[sizeof(out)];
	size_t len;

	cr_assert_eq(pull_try(0, 64, 64), 0);
	cr_assert_eq(pull_try(60, 4, 64), 0);
	cr_assert_eq(pull_try(64, 0, 64), 0);
	cr_assert_eq(pull_try(61, 4, 64), -FI_EMSGSIZE);
	cr_assert_eq(pull_try(65, 0, 64), -FI_EMSGSIZE);
	cr_assert_eq(pull_try(0, 65, 64), -FI_EMSGSIZE);
	/* (2^64 - 4) + 5 == 1 <= 8 for a naive sum */
	cr_assert_eq(pull_try(UINT64_MAX - 3, 5, 8), -FI_EMSGSIZE);
	cr_assert_eq(pull_try(1, UINT64_MAX, UINT64_MAX), -FI_EMSGSIZE);
	cr_assert_eq(pull_try(1, UINT64_MAX - 1, UINT64_MAX), 0);

	memset(buf, 0, sizeof(buf));
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_pull_req_unpack(wire_dup(buf, len), len,
						 &out), -FI_EMSGSIZE);
}

static int data_try(const struct p4w_data *data)
{
	uint8_t buf[sizeof(*data)];
	struct p4w_data out;

	p4w_data_pack(buf, data);
	return p4w_data_unpack(wire_dup(buf, sizeof(buf)), sizeof(buf), &out);
}

Test(wire, data_last)
{
	struct p4w_data data = { .length = 1, .last = 1 };

	cr_assert_eq(data_try(&data), 0);
	data.last = 2;
	cr_assert_eq(data_try(&data), -FI_EBADMSG);
	data.last = UINT32_MAX;
	cr_assert_eq(data_try(&data), -FI_EBADMSG);
}

Test(wire, data_status)
{
	struct p4w_data data = { .length = 0 };

	data.status = -FI_EIO;
	cr_assert_eq(data_try(&data), 0);
	data.status = -4095;
	cr_assert_eq(data_try(&data), 0);
	data.status = 1;
	cr_assert_eq(data_try(&data), -FI_EBADMSG);
	data.status = -4096;
	cr_assert_eq(data_try(&data), -FI_EBADMSG);
	data.status = INT32_MIN;
	cr_assert_eq(data_try(&data), -FI_EBADMSG);
}

Test(wire, data_status_without_data)
{
	struct p4w_data data = { .length = 1, .status = -FI_EIO };

	cr_assert_eq(data_try(&data), -FI_EBADMSG);
}

Test(wire, data_length_max)
{
	struct p4w_data data = { .length = P4W_MAX_MSG - DATA_END };

	cr_assert_eq(data_try(&data), 0);
	data.length++;
	cr_assert_eq(data_try(&data), -FI_EMSGSIZE);
	data.length = UINT64_MAX;
	cr_assert_eq(data_try(&data), -FI_EMSGSIZE);
}

Test(wire, data_offset_wrap)
{
	struct p4w_data data = { .offset = UINT64_MAX, .length = 0 };

	cr_assert_eq(data_try(&data), 0);
	data.length = 1;
	cr_assert_eq(data_try(&data), -FI_EMSGSIZE);
	data.offset = UINT64_MAX - 1;
	cr_assert_eq(data_try(&data), 0);
}

Test(wire, data_short_buffer)
{
	struct p4w_data data = { .length = 1 }, out;
	uint8_t buf[sizeof(data)];
	size_t len;

	p4w_data_pack(buf, &data);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_data_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE);
}

/* hdr.length == body + data->length, exactly. */
Test(wire, data_check_length)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_T_PULL_DATA,
		.length = DATA_END + 10,
	};
	struct p4w_data data = { .length = 10 };

	cr_assert_eq(p4w_data_check(&hdr, &data), 0);
	data.length = 9;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.length = 11;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.length = (1ULL << 32) + 10;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	hdr.length = DATA_END - 1;
	data.length = 0;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
	hdr.length = P4W_MAX_MSG + 1;
	data.length = P4W_MAX_MSG + 1 - DATA_END;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
}

/* A push lands inside its dst cookie; a pull's dst is not looked at. */
Test(wire, data_check_push_range)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_T_PUSH_DATA,
		.length = DATA_END + 8,
	};
	struct p4w_data data = {
		.offset = 56, .length = 8, .dst = cookie_make(64),
	};

	cr_assert_eq(p4w_data_check(&hdr, &data), 0);
	data.offset = 57;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
	data.offset = 65;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
	/* offset 2^64 - 4 plus 8 wraps to 4 <= 64 */
	data.offset = UINT64_MAX - 3;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
	hdr.type = P4W_T_PULL_DATA;
	data.offset = 57;
	cr_assert_eq(p4w_data_check(&hdr, &data), 0);
}

/* An offer is one whole chunk of its source: from offset 0, the last,
 * no status, no id, no longer than the source. */
Test(wire, data_check_offer_whole)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_T_OFFER,
		.length = DATA_END + 64,
	};
	struct p4w_data data = {
		.length = 64, .last = 1, .dst = cookie_make(64),
	};

	cr_assert_eq(p4w_data_check(&hdr, &data), 0);
	data.offset = 1;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.offset = 0;
	data.last = 0;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.last = 1;
	data.id = 7;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.id = 0;
	data.dst = cookie_make(63);
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.dst = cookie_make(64);
	data.status = -FI_EIO;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
}

/* An announcement is the body alone, announcing an offer as above of 1
 * to dst.length bytes. */
Test(wire, data_check_offer_announce)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_T_OFFER_ANNOUNCE,
		.length = DATA_END,
	};
	struct p4w_data data = {
		.length = 64, .last = 1, .dst = cookie_make(64),
	};

	cr_assert_eq(p4w_data_check(&hdr, &data), 0);
	hdr.length = DATA_END + 64;	/* data belongs in the OFFER */
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EMSGSIZE);
	hdr.length = DATA_END;
	data.length = 0;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG, "nothing");
	data.length = 65;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG, "past dst");
	data.length = 64;
	data.offset = 1;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.offset = 0;
	data.last = 0;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.last = 1;
	data.id = 7;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
	data.id = 0;
	data.status = -FI_EIO;
	cr_assert_eq(p4w_data_check(&hdr, &data), -FI_EBADMSG);
}
