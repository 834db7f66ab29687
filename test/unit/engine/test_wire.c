/*
 * test_wire.c - the wire protocol (include/p4_wire.h, p4e_wire.c), for the
 * header, requests, responses, cookies and flow control: byte-exact
 * little-endian layout against hand-written bytes, round trips of every
 * struct, every valid message and its parts, stream framing, one test per
 * validation rule of the header, the request and response bodies (each
 * passes the bad message if its check is removed), truncation at every
 * length, unaligned buffers, and outputs left alone on failure.
 *
 * Elsewhere: the request parse rules, where 64-bit lengths would wrap
 * naive arithmetic (test_wire_parse.c), and the transport messages, hello,
 * pull request and data (test_wire_xport.c). The message builders and the
 * receiver path are in p4w_test.h; messages under test are copied into
 * heap buffers of exactly their length (wire_dup), so the
 * --enable-sanitize build catches any read past len.
 */
#include "p4w_test.h"

static const uint8_t all_types[] = {
	P4W_PUT, P4W_GET, P4W_ATOMIC, P4W_FETCH, P4W_SWAP,
	P4W_ACK, P4W_REPLY, P4W_SEQ_ACK, P4W_NACK, P4W_RESUME,
	P4W_T_HELLO, P4W_T_HELLO_ACK, P4W_T_PULL_REQ, P4W_T_PULL_DATA,
	P4W_T_PUSH_DATA, P4W_T_BYE, P4W_T_OFFER, P4W_T_OFFER_ANNOUNCE,
	P4W_T_XPORT,
};

/* hdr.length bounds per type, written out independently of the code. */
static const struct {
	uint8_t type;
	uint32_t min, max;
} type_bounds[] = {
	{ P4W_PUT, 72, P4W_MAX_MSG },
	{ P4W_GET, 72, 96 },
	{ P4W_ATOMIC, 72, P4W_MAX_MSG },
	{ P4W_FETCH, 72, P4W_MAX_MSG },
	{ P4W_SWAP, 72, P4W_MAX_MSG },
	{ P4W_ACK, 48, 48 },
	{ P4W_REPLY, 48, P4W_MAX_MSG },
	{ P4W_SEQ_ACK, 16, 16 },
	{ P4W_NACK, 24, 24 },
	{ P4W_RESUME, 24, 24 },
	{ P4W_T_HELLO, 72, 72 },
	{ P4W_T_HELLO_ACK, 72, 72 },
	{ P4W_T_PULL_REQ, 64, 64 },
	{ P4W_T_PULL_DATA, 72, P4W_MAX_MSG },
	{ P4W_T_PUSH_DATA, 72, P4W_MAX_MSG },
	{ P4W_T_BYE, 16, 16 },
	{ P4W_T_OFFER, 72, P4W_MAX_MSG },
	{ P4W_T_OFFER_ANNOUNCE, 72, 72 },
	{ P4W_T_XPORT, 16, 16 + 4096 },
};

TestSuite(wire, .init = wire_setup, .fini = wire_teardown, .timeout = 60);

/* ---- layout: hand-written little-endian bytes ------------------------- */

Test(wire, layout_hdr)
{
	static const uint8_t want[16] = {
		0x02,				/* version */
		0x07,				/* type: REPLY */
		0x01, 0x00,			/* flags: ACK_SEQ */
		0x30, 0x02, 0x01, 0x00,		/* length 0x10230 */
		0xef, 0xcd, 0xab, 0x89,		/* seq */
		0x04, 0x03, 0x02, 0x01,		/* ack_seq */
	};
	struct p4w_hdr hdr = {
		.version = 2, .type = P4W_REPLY, .flags = P4W_F_ACK_SEQ,
		.length = 0x10230, .seq = 0x89abcdef, .ack_seq = 0x01020304,
	};
	struct p4w_hdr out;
	uint8_t buf[16];

	cr_assert_eq(P4W_REPLY, 7);
	p4w_hdr_pack(buf, &hdr);
	check_bytes(buf, want, sizeof(want));
	cr_assert_eq(p4w_hdr_unpack(want, sizeof(want), &out), 0);
	cr_assert_eq(memcmp(&out, &hdr, sizeof(hdr)), 0);
}

Test(wire, layout_req)
{
	static const uint8_t want[56] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* op_id */
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* match */
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* offset */
		0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31, /* hdr_data */
		0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41, /* rlength */
		0x54, 0x53, 0x52, 0x51,				/* pt_index */
		0x64, 0x63, 0x62, 0x61,				/* uid */
		0x02, 0x03, 0x04, 0x01,		/* ack_req op type proto */
		0x01, 0x00,			/* rflags: PUSH */
		0x00, 0x00,			/* reserved */
	};
	struct p4w_req req = {
		.op_id = 0x0102030405060708ULL,
		.match_bits = 0x1112131415161718ULL,
		.remote_offset = 0x2122232425262728ULL,
		.hdr_data = 0x3132333435363738ULL,
		.rlength = 0x4142434445464748ULL,
		.pt_index = 0x51525354, .uid = 0x61626364,
		.ack_req = 2, .atomic_op = 3, .atomic_type = 4, .proto = 1,
		.rflags = P4W_RF_PUSH,
	};
	struct p4w_req out;
	uint8_t buf[56];

	p4w_req_pack(buf, &req);
	check_bytes(buf, want, sizeof(want));
	cr_assert_eq(p4w_req_unpack(want, sizeof(want), &out), 0);
	cr_assert_eq(memcmp(&out, &req, sizeof(req)), 0);
}

Test(wire, layout_resp)
{
	static const uint8_t want[32] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* op_id */
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* mlength */
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* offset */
		0x03, 0x01, 0x01,		/* fail list pushed */
		0x00, 0x00, 0x00, 0x00, 0x00,	/* reserved */
	};
	struct p4w_resp resp = {
		.op_id = 0x0102030405060708ULL,
		.mlength = 0x1112131415161718ULL,
		.offset = 0x2122232425262728ULL,
		.fail = 3, .list = 1, .pushed = 1,
	};
	struct p4w_resp out;
	uint8_t buf[32];

	p4w_resp_pack(buf, &resp);
	check_bytes(buf, want, sizeof(want));
	cr_assert_eq(p4w_resp_unpack(want, sizeof(want), &out), 0);
	cr_assert_eq(memcmp(&out, &resp, sizeof(resp)), 0);
}

Test(wire, layout_cookie_fc)
{
	static const uint8_t want_cookie[24] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* addr */
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* key */
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* length */
	};
	static const uint8_t want_fc[8] = {
		0x04, 0x03, 0x02, 0x01,		/* seq */
		0x00, 0x00, 0x00, 0x00,		/* reserved */
	};
	struct p4w_cookie cookie = {
		.addr = 0x0102030405060708ULL,
		.key = 0x1112131415161718ULL,
		.length = 0x2122232425262728ULL,
	};
	struct p4w_fc fc = { .seq = 0x01020304 };
	struct p4w_cookie cout;
	struct p4w_fc fout;
	uint8_t buf[24];

	p4w_cookie_pack(buf, &cookie);
	check_bytes(buf, want_cookie, sizeof(want_cookie));
	cr_assert_eq(p4w_cookie_unpack(want_cookie, 24, &cout), 0);
	cr_assert_eq(memcmp(&cout, &cookie, sizeof(cookie)), 0);

	p4w_fc_pack(buf, &fc);
	check_bytes(buf, want_fc, sizeof(want_fc));
	cr_assert_eq(p4w_fc_unpack(want_fc, 8, &fout), 0);
	cr_assert_eq(memcmp(&fout, &fc, sizeof(fc)), 0);
}

/* Pack writes exactly its struct's size and clears reserved fields. */
Test(wire, pack_bounds_and_reserved)
{
	struct p4w_req req = req_default(P4W_PUT, 1);
	struct p4w_resp resp = resp_default(1);
	struct p4w_fc fc = { .seq = 1 };
	struct p4w_hello hello = hello_default();
	uint8_t buf[8 + 64 + 8];
	size_t i;

	req.reserved = 0xffff;
	memset(resp.reserved, 0xff, sizeof(resp.reserved));
	hello.addrlen = 4;
	memset(hello.addr + 4, 0xff, P4W_ADDR_MAX - 4);

	memset(buf, 0xee, sizeof(buf));
	p4w_req_pack(buf + 8, &req);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(buf[i], 0xee);
		cr_assert_eq(buf[8 + 56 + i], 0xee);
	}
	cr_assert_eq(buf[8 + 54] | buf[8 + 55], 0, "req.reserved on the wire");

	memset(buf, 0xee, sizeof(buf));
	p4w_resp_pack(buf + 8, &resp);
	for (i = 0; i < 8; i++)
		cr_assert_eq(buf[8 + 32 + i], 0xee);
	for (i = 27; i < 32; i++)
		cr_assert_eq(buf[8 + i], 0, "resp.reserved[%zu]", i - 27);

	memset(buf, 0xee, sizeof(buf));
	p4w_fc_pack(buf + 8, &fc);
	cr_assert_eq(buf[8 + 8], 0xee);
	for (i = 4; i < 8; i++)
		cr_assert_eq(buf[8 + i], 0, "fc.flags when none");

	memset(buf, 0xee, sizeof(buf));
	p4w_hello_pack(buf + 8, &hello);
	cr_assert_eq(buf[8 + 56], 0xee);
	for (i = 24 + 4; i < 56; i++)
		cr_assert_eq(buf[8 + i], 0, "hello.addr past addrlen");
}

/* ---- round trips ------------------------------------------------------ */

Test(wire, roundtrip_all_structs)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION, .type = P4W_T_PUSH_DATA,
		.flags = P4W_F_ACK_SEQ, .length = P4W_MAX_MSG,
		.seq = 0xfffffffe, .ack_seq = 0x80000001,
	}, hdr2;
	struct p4w_req req = {
		.op_id = UINT64_MAX, .match_bits = 0x8000000000000001ULL,
		.remote_offset = 0x7fffffffffffffffULL, .hdr_data = 1,
		.rlength = 0xdeadbeefcafef00dULL, .pt_index = UINT32_MAX,
		.uid = 0x80000000, .ack_req = P4E_ACK_REQ_MAX - 1,
		.atomic_op = P4E_ATOMIC_OP_MAX - 1,
		.atomic_type = P4E_ATOMIC_TYPE_MAX - 1,
		.proto = P4W_PROTO_RDZV, .rflags = P4W_RF_PUSH,
	}, req2;
	struct p4w_resp resp = {
		.op_id = 0x8000000000000000ULL, .mlength = UINT64_MAX,
		.offset = 0x0123456789abcdefULL, .fail = P4E_NI_FAIL_MAX - 1,
		.list = P4E_OVERFLOW_LIST, .pushed = 1,
	}, resp2;
	struct p4w_cookie cookie = {
		.addr = 0xfedcba9876543210ULL, .key = 1ULL << 63,
		.length = UINT64_MAX,
	}, cookie2;
	struct p4w_fc fc = { .seq = 0xa5a5a5a5 }, fc2;
	struct p4w_hello hello = hello_default(), hello2;
	struct p4w_pull_req pull = {
		.pull_id = UINT64_MAX, .offset = UINT64_MAX - 1, .length = 1,
		.src = { .addr = 3, .key = 4, .length = UINT64_MAX },
	}, pull2;
	struct p4w_data data = {
		.id = 0x8badf00d, .offset = UINT64_MAX - 10, .length = 10,
		.last = 1, .status = 0,
		.dst = { .addr = 5, .key = 6, .length = 7 },
	}, data2;
	uint8_t buf[64];
	size_t i;

	hello.addrlen = P4W_ADDR_MAX;
	for (i = 0; i < P4W_ADDR_MAX; i++)
		hello.addr[i] = (uint8_t)(0xff - i);

	p4w_hdr_pack(buf, &hdr);
	cr_assert_eq(p4w_hdr_unpack(buf, sizeof(hdr), &hdr2), 0);
	cr_assert_eq(memcmp(&hdr, &hdr2, sizeof(hdr)), 0);
	p4w_req_pack(buf, &req);
	cr_assert_eq(p4w_req_unpack(buf, sizeof(req), &req2), 0);
	cr_assert_eq(memcmp(&req, &req2, sizeof(req)), 0);
	p4w_resp_pack(buf, &resp);
	cr_assert_eq(p4w_resp_unpack(buf, sizeof(resp), &resp2), 0);
	cr_assert_eq(memcmp(&resp, &resp2, sizeof(resp)), 0);
	p4w_cookie_pack(buf, &cookie);
	cr_assert_eq(p4w_cookie_unpack(buf, sizeof(cookie), &cookie2), 0);
	cr_assert_eq(memcmp(&cookie, &cookie2, sizeof(cookie)), 0);
	p4w_fc_pack(buf, &fc);
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(fc), &fc2), 0);
	cr_assert_eq(memcmp(&fc, &fc2, sizeof(fc)), 0);
	p4w_hello_pack(buf, &hello);
	cr_assert_eq(p4w_hello_unpack(buf, sizeof(hello), &hello2), 0);
	cr_assert_eq(memcmp(&hello, &hello2, sizeof(hello)), 0);
	p4w_pull_req_pack(buf, &pull);
	cr_assert_eq(p4w_pull_req_unpack(buf, sizeof(pull), &pull2), 0);
	cr_assert_eq(memcmp(&pull, &pull2, sizeof(pull)), 0);
	p4w_data_pack(buf, &data);
	cr_assert_eq(p4w_data_unpack(buf, sizeof(data), &data2), 0);
	cr_assert_eq(memcmp(&data, &data2, sizeof(data)), 0);

	/* A negative status survives the trip with its sign. */
	data.length = 0;
	data.status = -FI_EAGAIN;
	p4w_data_pack(buf, &data);
	cr_assert_eq(p4w_data_unpack(buf, sizeof(data), &data2), 0);
	cr_assert_eq(data2.status, -FI_EAGAIN);
}

/* Every valid message parses, and its parts point where they should. */
Test(wire, valid_messages_and_parts)
{
	struct p4w_req_parts rp;
	struct p4w_resp_parts sp;
	struct wmsg m;
	const uint8_t *msg;
	size_t i;

	for (i = 0; i < sizeof(all_types); i++) {
		msg_valid(&m, all_types[i]);
		cr_assert_eq(msg_recv(&m), 0, "type %#x", all_types[i]);
	}

	msg_valid(&m, P4W_SWAP);
	msg = wire_dup(m.buf, m.len);
	cr_assert_eq(p4w_req_parse(&m.hdr, msg, &rp), 0);
	cr_assert_eq(rp.req.atomic_op, P4E_CSWAP);
	cr_assert(!rp.has_src && !rp.has_dst);
	cr_assert_eq(rp.payload, msg + REQ_END);
	cr_assert_eq(rp.payload_len, 4);
	cr_assert_eq(rp.compare, msg + REQ_END + 4);

	msg_valid(&m, P4W_FETCH);
	msg = wire_dup(m.buf, m.len);
	cr_assert_eq(p4w_req_parse(&m.hdr, msg, &rp), 0);
	cr_assert(rp.has_dst && !rp.has_src);
	cr_assert_eq(rp.dst.length, 64);
	cr_assert_eq(rp.dst.key, 0x55);
	cr_assert_eq(rp.payload, msg + REQ_END + COOKIE_LEN);
	cr_assert_eq(rp.payload_len, 8);
	cr_assert_null(rp.compare);

	msg_valid(&m, P4W_GET);
	cr_assert_eq(msg_req_parse(&m, &rp), 0);
	cr_assert(rp.has_dst);
	cr_assert_null(rp.payload);
	cr_assert_eq(rp.payload_len, 0);

	msg_valid(&m, P4W_REPLY);
	msg = wire_dup(m.buf, m.len);
	cr_assert_eq(p4w_resp_parse(&m.hdr, msg, &sp), 0);
	cr_assert_eq(sp.data, msg + RESP_END);
	cr_assert_eq(sp.data_len, 5);
	cr_assert_eq(sp.data[0], 0x80);

	msg_valid(&m, P4W_ACK);
	cr_assert_eq(msg_resp_parse(&m, &sp), 0);
	cr_assert_null(sp.data);
	cr_assert_eq(sp.data_len, 0);
	cr_assert_eq(sp.resp.mlength, 8);
}

/* A byte stream of every message back to back frames by hdr.length. */
Test(wire, stream_framing)
{
	static uint8_t stream[16 * MSG_MAX];
	struct p4w_hdr hdr;
	struct wmsg m;
	size_t len = 0, off = 0, n = 0, i;

	for (i = 0; i < sizeof(all_types); i++) {
		msg_valid(&m, all_types[i]);
		memcpy(stream + len, m.buf, m.len);
		len += m.len;
	}
	while (len - off >= HDR_LEN) {
		cr_assert_eq(p4w_hdr_unpack(stream + off, len - off, &hdr), 0);
		cr_assert_eq(hdr.type, all_types[n]);
		cr_assert_leq(hdr.length, len - off);
		cr_assert_eq(wire_recv(wire_dup(stream + off, hdr.length),
				       hdr.length), 0);
		off += hdr.length;
		n++;
	}
	cr_assert_eq(off, len);
	cr_assert_eq(n, sizeof(all_types));
}

/* ---- header rules ----------------------------------------------------- */

Test(wire, hdr_short_buffer)
{
	struct p4w_hdr out;
	struct wmsg m;
	size_t len;

	msg_valid(&m, P4W_T_BYE);
	for (len = 0; len < HDR_LEN; len++) {
		memset(&out, 0xa5, sizeof(out));
		cr_assert_eq(p4w_hdr_unpack(wire_dup(m.buf, len), len, &out),
			     -FI_EMSGSIZE, "len %zu", len);
		cr_assert_eq(out.version, 0xa5, "output written on failure");
	}
	cr_assert_eq(p4w_hdr_unpack(wire_dup(m.buf, len), len, &out), 0);
}

Test(wire, hdr_version)
{
	/* 1: before offers were announced in frames of their own */
	static const uint8_t bad[] = { 0, 1, 3, 0x81, 0xff };
	struct p4w_hdr out;
	struct wmsg m;
	size_t i;

	msg_valid(&m, P4W_SEQ_ACK);
	cr_assert_eq(p4w_hdr_unpack(m.buf, m.len, &out), 0);
	for (i = 0; i < sizeof(bad); i++) {
		m.buf[0] = bad[i];
		cr_assert_eq(p4w_hdr_unpack(m.buf, m.len, &out), -FI_EPROTO,
			     "version %u", bad[i]);
	}
}

/* Exactly the known types (all_types) pass, each at its minimum length. */
Test(wire, hdr_type_known)
{
	struct p4w_hdr hdr = { .version = P4W_VERSION }, out;
	uint8_t buf[HDR_LEN];
	unsigned type;
	size_t i;

	for (type = 0; type < 256; type++) {
		int want = -FI_EBADMSG;

		hdr.type = (uint8_t)type;
		hdr.length = HDR_LEN;
		for (i = 0; i < sizeof(type_bounds) / sizeof(type_bounds[0]);
		     i++) {
			if (type_bounds[i].type == type) {
				hdr.length = type_bounds[i].min;
				want = 0;
			}
		}
		p4w_hdr_pack(buf, &hdr);
		cr_assert_eq(p4w_hdr_unpack(buf, sizeof(buf), &out), want,
			     "type %#x", type);
	}
}

Test(wire, hdr_flags_known)
{
	struct p4w_hdr out;
	struct wmsg m;
	unsigned bit;

	msg_valid(&m, P4W_SEQ_ACK);
	m.hdr.flags = P4W_F_ACK_SEQ | P4W_F_ACK_NOW;
	p4w_hdr_pack(m.buf, &m.hdr);
	cr_assert_eq(p4w_hdr_unpack(m.buf, m.len, &out), 0);
	cr_assert_eq(out.flags, P4W_F_ACK_SEQ | P4W_F_ACK_NOW);
	/* every other bit is refused, version 1's transport flag OFFER
	 * (0x4) too: offers are announced in a frame of their own now */
	for (bit = 2; bit < 16; bit++) {
		m.hdr.flags = (uint16_t)(P4W_F_ACK_SEQ | (1u << bit));
		p4w_hdr_pack(m.buf, &m.hdr);
		cr_assert_eq(p4w_hdr_unpack(m.buf, m.len, &out), -FI_EBADMSG,
			     "flag bit %u", bit);
	}
	m.hdr.flags = 0;
	p4w_hdr_pack(m.buf, &m.hdr);
	cr_assert_eq(p4w_hdr_unpack(m.buf, m.len, &out), 0);
}

/* Below the header size, below each type's minimum: -FI_EMSGSIZE. */
Test(wire, hdr_length_min)
{
	struct p4w_hdr hdr = { .version = P4W_VERSION }, out;
	uint8_t buf[HDR_LEN];
	uint32_t len;
	size_t i;

	for (i = 0; i < sizeof(type_bounds) / sizeof(type_bounds[0]); i++) {
		hdr.type = type_bounds[i].type;
		for (len = 0; len < type_bounds[i].min; len++) {
			hdr.length = len;
			p4w_hdr_pack(buf, &hdr);
			cr_assert_eq(p4w_hdr_unpack(buf, sizeof(buf), &out),
				     -FI_EMSGSIZE, "type %#x length %u",
				     hdr.type, len);
		}
	}
}

/* Above P4W_MAX_MSG, or above a fixed-size type's size: -FI_EMSGSIZE. */
Test(wire, hdr_length_max)
{
	struct p4w_hdr hdr = { .version = P4W_VERSION }, out;
	uint8_t buf[HDR_LEN];
	size_t i;

	for (i = 0; i < sizeof(type_bounds) / sizeof(type_bounds[0]); i++) {
		hdr.type = type_bounds[i].type;
		hdr.length = type_bounds[i].max;
		p4w_hdr_pack(buf, &hdr);
		cr_assert_eq(p4w_hdr_unpack(buf, sizeof(buf), &out), 0,
			     "type %#x at its max", hdr.type);
		cr_assert_eq(out.length, type_bounds[i].max);
		hdr.length = type_bounds[i].max + 1;
		p4w_hdr_pack(buf, &hdr);
		cr_assert_eq(p4w_hdr_unpack(buf, sizeof(buf), &out),
			     -FI_EMSGSIZE, "type %#x above its max", hdr.type);
		hdr.length = UINT32_MAX;
		p4w_hdr_pack(buf, &hdr);
		cr_assert_eq(p4w_hdr_unpack(buf, sizeof(buf), &out),
			     -FI_EMSGSIZE, "type %#x length ~0", hdr.type);
	}
}

Test(wire, type_is_seq)
{
	unsigned type;

	for (type = 0; type < 256; type++) {
		bool want = type == P4W_PUT || type == P4W_GET ||
			    type == P4W_ATOMIC || type == P4W_FETCH ||
			    type == P4W_SWAP;

		cr_assert_eq(p4w_type_is_seq((uint8_t)type), want,
			     "type %#x", type);
	}
}

/* ---- request body rules ----------------------------------------------- */

static int req_bytes_unpack(const struct p4w_req *req, size_t at,
			    uint8_t val)
{
	uint8_t buf[sizeof(*req)];
	struct p4w_req out;

	p4w_req_pack(buf, req);
	buf[at] = val;
	return p4w_req_unpack(wire_dup(buf, sizeof(buf)), sizeof(buf), &out);
}

Test(wire, req_short_buffer)
{
	struct p4w_req req = req_default(P4W_PUT, 0), out;
	uint8_t buf[sizeof(req)];
	size_t len;

	p4w_req_pack(buf, &req);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_req_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE, "len %zu", len);
}

Test(wire, req_ack_req)
{
	struct p4w_req req = req_default(P4W_PUT, 0);

	cr_assert_eq(req_bytes_unpack(&req, 48, P4E_ACK_REQ_MAX - 1), 0);
	cr_assert_eq(req_bytes_unpack(&req, 48, P4E_ACK_REQ_MAX),
		     -FI_EBADMSG);
	cr_assert_eq(req_bytes_unpack(&req, 48, 0xff), -FI_EBADMSG);
}

Test(wire, req_proto)
{
	struct p4w_req req = req_default(P4W_PUT, 0);

	cr_assert_eq(req_bytes_unpack(&req, 51, P4W_PROTO_RDZV), 0);
	cr_assert_eq(req_bytes_unpack(&req, 51, 2), -FI_EBADMSG);
	cr_assert_eq(req_bytes_unpack(&req, 51, 0xff), -FI_EBADMSG);
}

Test(wire, req_rflags)
{
	struct p4w_req req = req_default(P4W_GET, 0);
	unsigned bit;

	for (bit = 2; bit < 16; bit++) {
		req.rflags = (uint16_t)(1u << bit);
		cr_assert_eq(req_bytes_unpack(&req, 0, 0x42), -FI_EBADMSG,
			     "rflags bit %u", bit);
	}
	req.rflags = P4W_RF_PUSH;
	cr_assert_eq(req_bytes_unpack(&req, 0, 0x42), 0);
	req.rflags = P4W_RF_PUSH | P4W_RF_HDR_DATA;
	cr_assert_eq(req_bytes_unpack(&req, 0, 0x42), 0);
}

Test(wire, req_reserved)
{
	struct p4w_req req = req_default(P4W_PUT, 0);

	cr_assert_eq(req_bytes_unpack(&req, 54, 0), 0);
	cr_assert_eq(req_bytes_unpack(&req, 54, 1), -FI_EBADMSG);
	cr_assert_eq(req_bytes_unpack(&req, 55, 0x80), -FI_EBADMSG);
}

/* ---- response rules --------------------------------------------------- */

static int resp_bytes_unpack(size_t at, uint8_t val)
{
	struct p4w_resp resp = resp_default(0), out;
	uint8_t buf[sizeof(resp)];

	p4w_resp_pack(buf, &resp);
	buf[at] = val;
	return p4w_resp_unpack(wire_dup(buf, sizeof(buf)), sizeof(buf), &out);
}

Test(wire, resp_short_buffer)
{
	struct p4w_resp resp = resp_default(0), out;
	uint8_t buf[sizeof(resp)];
	size_t len;

	p4w_resp_pack(buf, &resp);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_resp_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE, "len %zu", len);
}

Test(wire, resp_fail)
{
	cr_assert_eq(resp_bytes_unpack(24, P4E_NI_FAIL_MAX - 1), 0);
	cr_assert_eq(resp_bytes_unpack(24, P4E_NI_FAIL_MAX), -FI_EBADMSG);
	cr_assert_eq(resp_bytes_unpack(24, 0xff), -FI_EBADMSG);
}

Test(wire, resp_list)
{
	cr_assert_eq(resp_bytes_unpack(25, P4E_OVERFLOW_LIST), 0);
	cr_assert_eq(resp_bytes_unpack(25, 2), -FI_EBADMSG);
	/* either list with the no-ack mark (P4E_ME_ACK_DISABLE), no other */
	cr_assert_eq(resp_bytes_unpack(25, P4E_RESP_NO_ACK), 0);
	cr_assert_eq(resp_bytes_unpack(25, P4E_RESP_NO_ACK | 1), 0);
	cr_assert_eq(resp_bytes_unpack(25, P4E_RESP_NO_ACK | 2), -FI_EBADMSG);
	cr_assert_eq(resp_bytes_unpack(25, 0x40), -FI_EBADMSG);
}

Test(wire, resp_pushed)
{
	cr_assert_eq(resp_bytes_unpack(26, 1), 0);
	cr_assert_eq(resp_bytes_unpack(26, 2), -FI_EBADMSG);
}

Test(wire, resp_reserved)
{
	size_t at;

	for (at = 27; at < 32; at++)
		cr_assert_eq(resp_bytes_unpack(at, 1), -FI_EBADMSG,
			     "reserved byte %zu", at - 27);
}

Test(wire, ack_no_data)
{
	struct p4w_resp_parts parts;
	struct p4w_resp resp = resp_default(8);
	struct wmsg m;

	msg_resp(&m, P4W_ACK, &resp, 1);
	cr_assert_eq(msg_recv(&m), -FI_EMSGSIZE);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, ack_not_pushed)
{
	struct p4w_resp_parts parts;
	struct p4w_resp resp = resp_default(8);
	struct wmsg m;

	resp.pushed = 1;
	msg_resp(&m, P4W_ACK, &resp, 0);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, reply_data_is_mlength)
{
	struct p4w_resp_parts parts;
	struct p4w_resp resp = resp_default(10);
	struct wmsg m;

	msg_resp(&m, P4W_REPLY, &resp, 10);
	cr_assert_eq(msg_resp_parse(&m, &parts), 0);
	cr_assert_eq(parts.data_len, 10);
	msg_resp(&m, P4W_REPLY, &resp, 9);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
	msg_resp(&m, P4W_REPLY, &resp, 11);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);

	/* Neither a wrapped nor a truncated-to-32-bit mlength matches. */
	resp.mlength = (1ULL << 32) + 10;
	msg_resp(&m, P4W_REPLY, &resp, 10);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
	resp.mlength = UINT64_MAX;
	msg_resp(&m, P4W_REPLY, &resp, 10);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, reply_pushed_no_data)
{
	struct p4w_resp_parts parts;
	struct p4w_resp resp = resp_default(100);
	struct wmsg m;

	resp.pushed = 1;
	msg_resp(&m, P4W_REPLY, &resp, 0);
	cr_assert_eq(msg_resp_parse(&m, &parts), 0);
	cr_assert_eq(parts.data_len, 0);
	cr_assert_null(parts.data);
	cr_assert_eq(parts.resp.mlength, 100);
	msg_resp(&m, P4W_REPLY, &resp, 100);
	cr_assert_eq(msg_resp_parse(&m, &parts), -FI_EBADMSG);
}

/* ---- cookies and flow control ----------------------------------------- */

Test(wire, cookie_short_buffer)
{
	struct p4w_cookie cookie = cookie_make(1), out;
	uint8_t buf[sizeof(cookie)];
	size_t len;

	p4w_cookie_pack(buf, &cookie);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_cookie_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE, "len %zu", len);
	cr_assert_eq(p4w_cookie_unpack(wire_dup(buf, len), len, &out), 0);
}

Test(wire, fc_rules)
{
	struct p4w_fc fc = { .seq = 5 }, out;
	uint8_t buf[sizeof(fc)];
	size_t len;

	p4w_fc_pack(buf, &fc);
	for (len = 0; len < sizeof(buf); len++)
		cr_assert_eq(p4w_fc_unpack(wire_dup(buf, len), len, &out),
			     -FI_EMSGSIZE);
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(buf), &out), 0);
	/* the one flag there is, little-endian at byte 4 */
	fc.flags = P4W_FC_AS_RDZV;
	p4w_fc_pack(buf, &fc);
	cr_assert_eq(buf[4], 1);
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(buf), &out), 0);
	cr_assert_eq(out.flags, P4W_FC_AS_RDZV);
	/* unknown flags are refused */
	buf[4] = 2;
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(buf), &out), -FI_EBADMSG);
	buf[4] = 1;
	buf[7] = 1;
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(buf), &out), -FI_EBADMSG);
}

/* ---- truncation, alignment, outputs ----------------------------------- */

/*
 * Every prefix of every valid message: fewer than 16 bytes fail the
 * header; a complete header with its true length unpacks (the receiver
 * waits for the rest); a header claiming the prefix as the whole message
 * fails everywhere short of the real length, but for XPORT, whose bytes
 * are opaque: every prefix is a whole, shorter one.
 */
Test(wire, truncated_every_length)
{
	struct p4w_hdr hdr;
	struct wmsg m;
	size_t i, len;

	for (i = 0; i < sizeof(all_types); i++) {
		msg_valid(&m, all_types[i]);
		for (len = 0; len <= m.len; len++) {
			struct wmsg t = m;
			const uint8_t *buf = wire_dup(t.buf, len);

			if (len < HDR_LEN) {
				cr_assert_eq(p4w_hdr_unpack(buf, len, &hdr),
					     -FI_EMSGSIZE);
				continue;
			}
			cr_assert_eq(p4w_hdr_unpack(buf, len, &hdr), 0);
			cr_assert_eq(hdr.length, m.len);

			msg_set_length(&t, (uint32_t)len);
			if (len == m.len || all_types[i] == P4W_T_XPORT)
				cr_assert_eq(wire_recv(wire_dup(t.buf, len),
						       len), 0);
			else
				cr_assert_neq(wire_recv(wire_dup(t.buf, len),
							len), 0,
					      "type %#x cut to %zu",
					      all_types[i], len);
		}
	}
}

/* Nothing depends on the buffer's alignment (UBSan checks the loads). */
Test(wire, unaligned_buffers)
{
	static uint8_t raw[MSG_MAX + 16] __attribute__((aligned(16)));
	struct p4w_req req = req_default(P4W_PUT, 5), req2;
	struct p4w_resp resp = resp_default(5), resp2;
	struct p4w_data data = { .id = 1, .length = 2 }, data2;
	struct p4w_hdr hdr = { .version = P4W_VERSION, .type = P4W_T_BYE,
			       .length = HDR_LEN, .seq = 0x01020304 }, hdr2;
	struct wmsg m;
	size_t off, i;

	for (off = 1; off < 16; off++) {
		p4w_hdr_pack(raw + off, &hdr);
		cr_assert_eq(p4w_hdr_unpack(raw + off, HDR_LEN, &hdr2), 0);
		cr_assert_eq(memcmp(&hdr, &hdr2, sizeof(hdr)), 0);
		p4w_req_pack(raw + off, &req);
		cr_assert_eq(p4w_req_unpack(raw + off, sizeof(req), &req2), 0);
		cr_assert_eq(memcmp(&req, &req2, sizeof(req)), 0);
		p4w_resp_pack(raw + off, &resp);
		cr_assert_eq(p4w_resp_unpack(raw + off, sizeof(resp), &resp2),
			     0);
		cr_assert_eq(memcmp(&resp, &resp2, sizeof(resp)), 0);
		p4w_data_pack(raw + off, &data);
		cr_assert_eq(p4w_data_unpack(raw + off, sizeof(data), &data2),
			     0);
		cr_assert_eq(memcmp(&data, &data2, sizeof(data)), 0);

		for (i = 0; i < sizeof(all_types); i++) {
			msg_valid(&m, all_types[i]);
			memcpy(raw + off, m.buf, m.len);
			cr_assert_eq(wire_recv(raw + off, m.len), 0,
				     "type %#x at offset %zu", all_types[i],
				     off);
		}
	}
}

/* Outputs are written only on success. */
Test(wire, outputs_untouched_on_failure)
{
	struct p4w_req_parts rp;
	struct p4w_resp_parts sp;
	struct p4w_hello hello;
	struct p4w_req req;
	struct wmsg m;
	uint8_t zero[64] = { 0 };

	msg_valid(&m, P4W_PUT);
	m.hdr.length--;
	memset(&rp, 0xa5, sizeof(rp));
	cr_assert_neq(msg_req_parse(&m, &rp), 0);
	cr_assert_eq(rp.req.op_id, 0xa5a5a5a5a5a5a5a5ULL);
	cr_assert_eq(rp.payload_len, (size_t)0xa5a5a5a5a5a5a5a5ULL);

	msg_valid(&m, P4W_REPLY);
	m.hdr.length--;
	memset(&sp, 0xa5, sizeof(sp));
	cr_assert_neq(msg_resp_parse(&m, &sp), 0);
	cr_assert_eq(sp.resp.op_id, 0xa5a5a5a5a5a5a5a5ULL);

	memset(&req, 0xa5, sizeof(req));
	zero[48] = 0xff;	/* bad ack_req after a valid op_id */
	cr_assert_neq(p4w_req_unpack(zero, sizeof(zero), &req), 0);
	cr_assert_eq(req.op_id, 0xa5a5a5a5a5a5a5a5ULL);

	memset(&hello, 0xa5, sizeof(hello));
	cr_assert_neq(p4w_hello_unpack(zero, sizeof(zero), &hello), 0);
	cr_assert_eq(hello.magic, 0xa5a5a5a5);
}
