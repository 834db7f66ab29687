/*
 * test_wire.c - the wire protocol (include/p4_wire.h, p4e_wire.c):
 * byte-exact little-endian layout against hand-written bytes, round trips
 * of every struct, one test per validation rule (each passes the bad
 * message if its check is removed), truncation at every length, unaligned
 * buffers, and 64-bit lengths that would wrap naive arithmetic.
 *
 * Messages under test are copied into heap buffers of exactly their
 * length (wire_dup), so the --enable-sanitize build catches any read past
 * len.
 */
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <rdma/fi_errno.h>

#include "p4e.h"
#include "p4_wire.h"

#define HDR_LEN		sizeof(struct p4w_hdr)
#define REQ_END		(HDR_LEN + sizeof(struct p4w_req))
#define RESP_END	(HDR_LEN + sizeof(struct p4w_resp))
#define DATA_END	(HDR_LEN + sizeof(struct p4w_data))
#define COOKIE_LEN	sizeof(struct p4w_cookie)
#define MSG_MAX		512

/* A message being built: header fields, then the bytes so far. */
struct wmsg {
	struct p4w_hdr hdr;
	size_t len;
	uint8_t buf[MSG_MAX];
};

static const uint8_t all_types[] = {
	P4W_PUT, P4W_GET, P4W_ATOMIC, P4W_FETCH, P4W_SWAP,
	P4W_ACK, P4W_REPLY, P4W_SEQ_ACK, P4W_NACK, P4W_RESUME,
	P4W_T_HELLO, P4W_T_HELLO_ACK, P4W_T_PULL_REQ, P4W_T_PULL_DATA,
	P4W_T_PUSH_DATA, P4W_T_BYE,
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
};

/* The current exact-size copy; one at a time, freed by the next or fini. */
static uint8_t *dup_buf;

static void wire_setup(void)
{
	dup_buf = NULL;
}

static void wire_teardown(void)
{
	free(dup_buf);
	dup_buf = NULL;
}

TestSuite(wire, .init = wire_setup, .fini = wire_teardown, .timeout = 60);

static const uint8_t *wire_dup(const void *src, size_t len)
{
	free(dup_buf);
	dup_buf = malloc(len);
	cr_assert(dup_buf || !len);
	if (len)
		memcpy(dup_buf, src, len);
	return dup_buf;
}

/* ---- building messages ------------------------------------------------ */

static void msg_begin(struct wmsg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->hdr.version = P4W_VERSION;
	m->hdr.type = type;
	m->hdr.flags = P4W_F_ACK_SEQ;
	m->hdr.seq = p4w_type_is_seq(type) ? 7 : 0;
	m->hdr.ack_seq = 3;
	m->len = HDR_LEN;
}

static uint8_t *msg_room(struct wmsg *m, size_t n)
{
	uint8_t *p = m->buf + m->len;

	cr_assert_leq(m->len + n, MSG_MAX);
	m->len += n;
	return p;
}

static void msg_bytes(struct wmsg *m, size_t n)
{
	uint8_t *p = msg_room(m, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(0x80 + i);
}

/* Header length = bytes written, then the header packed in front. */
static void msg_end(struct wmsg *m)
{
	m->hdr.length = (uint32_t)m->len;
	p4w_hdr_pack(m->buf, &m->hdr);
}

/* Re-pack the header with another length field (bytes unchanged). */
static void msg_set_length(struct wmsg *m, uint32_t length)
{
	m->hdr.length = length;
	p4w_hdr_pack(m->buf, &m->hdr);
}

static struct p4w_req req_default(uint8_t type, uint64_t rlength)
{
	struct p4w_req req = {
		.op_id = 0x1000000000000042ULL,
		.match_bits = 0xfeedfacecafeULL,
		.remote_offset = 16,
		.hdr_data = 0xdada,
		.rlength = rlength,
		.pt_index = 2,
		.uid = 1000,
		.ack_req = P4E_ACK_REQ,
		.proto = P4W_PROTO_EAGER,
	};

	if (type == P4W_ATOMIC || type == P4W_FETCH) {
		req.atomic_op = P4E_SUM;
		req.atomic_type = P4E_INT32;
	} else if (type == P4W_SWAP) {
		req.atomic_op = P4E_CSWAP;
		req.atomic_type = P4E_INT32;
	}
	return req;
}

static struct p4w_cookie cookie_make(uint64_t length)
{
	struct p4w_cookie c = {
		.addr = 0x7f0000001000ULL,
		.key = 0x55,
		.length = length,
	};

	return c;
}

/* A request message: body, optional cookies, plen payload bytes. */
static void msg_req(struct wmsg *m, uint8_t type, const struct p4w_req *req,
		    const struct p4w_cookie *src, const struct p4w_cookie *dst,
		    size_t plen)
{
	msg_begin(m, type);
	p4w_req_pack(msg_room(m, sizeof(*req)), req);
	if (src)
		p4w_cookie_pack(msg_room(m, COOKIE_LEN), src);
	if (dst)
		p4w_cookie_pack(msg_room(m, COOKIE_LEN), dst);
	msg_bytes(m, plen);
	msg_end(m);
}

static void msg_resp(struct wmsg *m, uint8_t type,
		     const struct p4w_resp *resp, size_t dlen)
{
	msg_begin(m, type);
	p4w_resp_pack(msg_room(m, sizeof(*resp)), resp);
	msg_bytes(m, dlen);
	msg_end(m);
}

static struct p4w_resp resp_default(uint64_t mlength)
{
	struct p4w_resp resp = {
		.op_id = 0x2000000000000007ULL,
		.mlength = mlength,
		.offset = 32,
		.fail = P4E_NI_OK,
		.list = P4E_PRIORITY_LIST,
	};

	return resp;
}

static struct p4w_hello hello_default(void)
{
	struct p4w_hello hello = {
		.magic = P4W_MAGIC,
		.version = P4W_VERSION,
		.addrlen = 16,
		.session = 0x5e55105e55105eULL,
		.auth_key = 42,
		.addr = { 2, 0, 0x1f, 0x90, 127, 0, 0, 1 },
	};

	return hello;
}

static struct p4w_pull_req pull_default(void)
{
	struct p4w_pull_req pull = {
		.pull_id = 9,
		.offset = 4,
		.length = 8,
		.src = cookie_make(64),
	};

	return pull;
}

static void msg_data(struct wmsg *m, uint8_t type,
		     const struct p4w_data *data, size_t dlen)
{
	msg_begin(m, type);
	p4w_data_pack(msg_room(m, sizeof(*data)), data);
	msg_bytes(m, dlen);
	msg_end(m);
}

/* One valid message of each type, with a non-trivial shape. */
static void msg_valid(struct wmsg *m, uint8_t type)
{
	struct p4w_req req = req_default(type, 8);
	struct p4w_cookie dst = cookie_make(64);
	struct p4w_resp resp = resp_default(8);
	struct p4w_fc fc = { .seq = 7 };
	struct p4w_hello hello = hello_default();
	struct p4w_pull_req pull = pull_default();
	struct p4w_data data = { .id = 9, .offset = 4, .length = 3, .last = 1 };

	switch (type) {
	case P4W_PUT:
	case P4W_ATOMIC:
		msg_req(m, type, &req, NULL, NULL, 8);
		break;
	case P4W_GET:
		req.rlength = 64;
		req.rflags = P4W_RF_PUSH;
		msg_req(m, type, &req, NULL, &dst, 0);
		break;
	case P4W_FETCH:
		req.rflags = P4W_RF_PUSH;
		msg_req(m, type, &req, NULL, &dst, 8);
		break;
	case P4W_SWAP:
		req.rlength = 4;
		msg_req(m, type, &req, NULL, NULL, 8);
		break;
	case P4W_ACK:
		msg_resp(m, type, &resp, 0);
		break;
	case P4W_REPLY:
		resp.mlength = 5;
		msg_resp(m, type, &resp, 5);
		break;
	case P4W_SEQ_ACK:
	case P4W_T_BYE:
		msg_begin(m, type);
		msg_end(m);
		break;
	case P4W_NACK:
	case P4W_RESUME:
		msg_begin(m, type);
		p4w_fc_pack(msg_room(m, sizeof(fc)), &fc);
		msg_end(m);
		break;
	case P4W_T_HELLO:
	case P4W_T_HELLO_ACK:
		msg_begin(m, type);
		p4w_hello_pack(msg_room(m, sizeof(hello)), &hello);
		msg_end(m);
		break;
	case P4W_T_PULL_REQ:
		msg_begin(m, type);
		p4w_pull_req_pack(msg_room(m, sizeof(pull)), &pull);
		msg_end(m);
		break;
	case P4W_T_PULL_DATA:
		msg_data(m, type, &data, 3);
		break;
	case P4W_T_PUSH_DATA:
		data.id = 0;
		data.offset = 60;
		data.length = 4;
		data.dst = cookie_make(64);
		msg_data(m, type, &data, 4);
		break;
	default:
		cr_assert_fail("no valid message for type %u", type);
	}
}

/* ---- the receiver path ------------------------------------------------ */

/* What a transport does with one complete message of len bytes. */
static int wire_recv(const uint8_t *buf, size_t len)
{
	const uint8_t *body = buf + HDR_LEN;
	struct p4w_req_parts req;
	struct p4w_resp_parts resp;
	struct p4w_fc fc;
	struct p4w_hello hello;
	struct p4w_pull_req pull;
	struct p4w_data data;
	struct p4w_hdr hdr;
	size_t blen;
	int ret;

	ret = p4w_hdr_unpack(buf, len, &hdr);
	if (ret)
		return ret;
	cr_assert_eq(hdr.length, len, "caller passes whole messages");
	blen = len - HDR_LEN;

	switch (hdr.type) {
	case P4W_PUT:
	case P4W_GET:
	case P4W_ATOMIC:
	case P4W_FETCH:
	case P4W_SWAP:
		return p4w_req_parse(&hdr, buf, &req);
	case P4W_ACK:
	case P4W_REPLY:
		return p4w_resp_parse(&hdr, buf, &resp);
	case P4W_SEQ_ACK:
	case P4W_T_BYE:
		return 0;
	case P4W_NACK:
	case P4W_RESUME:
		return p4w_fc_unpack(body, blen, &fc);
	case P4W_T_HELLO:
	case P4W_T_HELLO_ACK:
		return p4w_hello_unpack(body, blen, &hello);
	case P4W_T_PULL_REQ:
		return p4w_pull_req_unpack(body, blen, &pull);
	case P4W_T_PULL_DATA:
	case P4W_T_PUSH_DATA:
		ret = p4w_data_unpack(body, blen, &data);
		return ret ? ret : p4w_data_check(&hdr, &data);
	default:
		cr_assert_fail("hdr_unpack passed type %#x", hdr.type);
		return -FI_EINVAL;
	}
}

static int msg_recv(const struct wmsg *m)
{
	return wire_recv(wire_dup(m->buf, m->len), m->len);
}

/* Parse without hdr_unpack, so its length bounds do not hide the rule. */
static int msg_req_parse(const struct wmsg *m, struct p4w_req_parts *parts)
{
	return p4w_req_parse(&m->hdr, wire_dup(m->buf, m->len), parts);
}

static int msg_resp_parse(const struct wmsg *m, struct p4w_resp_parts *parts)
{
	return p4w_resp_parse(&m->hdr, wire_dup(m->buf, m->len), parts);
}

/* ---- layout: hand-written little-endian bytes ------------------------- */

static void check_bytes(const uint8_t *got, const uint8_t *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "byte %zu: %#x, want %#x",
			     i, got[i], want[i]);
}

Test(wire, layout_hdr)
{
	static const uint8_t want[16] = {
		0x01,				/* version */
		0x07,				/* type: REPLY */
		0x01, 0x00,			/* flags: ACK_SEQ */
		0x30, 0x02, 0x01, 0x00,		/* length 0x10230 */
		0xef, 0xcd, 0xab, 0x89,		/* seq */
		0x04, 0x03, 0x02, 0x01,		/* ack_seq */
	};
	struct p4w_hdr hdr = {
		.version = 1, .type = P4W_REPLY, .flags = P4W_F_ACK_SEQ,
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

Test(wire, layout_hello)
{
	static const uint8_t want[56] = {
		0x31, 0x46, 0x34, 0x50,		/* magic "1F4P" */
		0x01, 0x00,			/* version */
		0x04, 0x00,			/* addrlen */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* auth_key */
		0xc0, 0xa8, 0x01, 0x02, 0, 0, 0, 0,		/* addr */
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct p4w_hello hello = {
		.magic = P4W_MAGIC, .version = 1, .addrlen = 4,
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

/* Pack writes exactly its struct's size and clears reserved fields. */
Test(wire, pack_bounds_and_reserved)
{
	struct p4w_req req = req_default(P4W_PUT, 1);
	struct p4w_resp resp = resp_default(1);
	struct p4w_fc fc = { .seq = 1, .reserved = 0xffffffff };
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
		cr_assert_eq(buf[8 + i], 0);

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
	static const uint8_t bad[] = { 0, 2, 0x81, 0xff };
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

/* Exactly the 16 known types pass, each at its minimum length. */
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
	for (bit = 1; bit < 16; bit++) {
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

/* ---- request parse rules ---------------------------------------------- */

static const uint8_t atomic_types[] = { P4W_ATOMIC, P4W_FETCH, P4W_SWAP };

/* An atomic request of type with the given op and rlength 4, no push. */
static void msg_atomic(struct wmsg *m, uint8_t type, uint8_t op,
		       uint8_t atype)
{
	struct p4w_req req = req_default(type, 4);
	bool compare = type == P4W_SWAP && op >= P4E_CSWAP &&
		       op <= P4E_MSWAP;

	req.atomic_op = op;
	req.atomic_type = atype;
	msg_req(m, type, &req, NULL, NULL, compare ? 8 : 4);
}

Test(wire, parse_atomic_op_max)
{
	struct p4w_req_parts parts;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(atomic_types); i++) {
		uint8_t type = atomic_types[i];
		uint8_t ok = type == P4W_SWAP ? P4E_SWAP : P4E_ATOMIC_OP_MAX - 1;

		msg_atomic(&m, type, ok, P4E_INT32);
		cr_assert_eq(msg_req_parse(&m, &parts), 0, "type %#x", type);
		msg_atomic(&m, type, P4E_ATOMIC_OP_MAX, P4E_INT32);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x", type);
		msg_atomic(&m, type, 0xff, P4E_INT32);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x", type);
	}
	/* A PUT's atomic fields mean nothing and are not looked at. */
	msg_atomic(&m, P4W_PUT, 0xff, 0xff);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
}

Test(wire, parse_atomic_type_max)
{
	struct p4w_req_parts parts;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(atomic_types); i++) {
		uint8_t type = atomic_types[i];

		msg_atomic(&m, type, P4E_SWAP, P4E_ATOMIC_TYPE_MAX - 1);
		cr_assert_eq(msg_req_parse(&m, &parts), 0, "type %#x", type);
		msg_atomic(&m, type, P4E_SWAP, P4E_ATOMIC_TYPE_MAX);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x", type);
	}
	msg_atomic(&m, P4W_GET, 0, 0xff);
	msg_set_length(&m, REQ_END);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
}

/* CSWAP* / MSWAP need a compare operand only a SWAP message carries. */
Test(wire, parse_compare_op_only_in_swap)
{
	static const uint8_t ops[] = {
		P4E_CSWAP, P4E_CSWAP_NE, P4E_CSWAP_LE, P4E_CSWAP_LT,
		P4E_CSWAP_GE, P4E_CSWAP_GT, P4E_MSWAP,
	};
	struct p4w_req_parts parts;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(ops); i++) {
		msg_atomic(&m, P4W_SWAP, ops[i], P4E_UINT32);
		cr_assert_eq(msg_req_parse(&m, &parts), 0, "op %u", ops[i]);
		cr_assert_not_null(parts.compare);
		msg_atomic(&m, P4W_ATOMIC, ops[i], P4E_UINT32);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "atomic op %u", ops[i]);
		msg_atomic(&m, P4W_FETCH, ops[i], P4E_UINT32);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "fetch op %u", ops[i]);
	}
}

Test(wire, parse_rdzv_only_put)
{
	static const uint8_t others[] = {
		P4W_GET, P4W_ATOMIC, P4W_FETCH, P4W_SWAP,
	};
	struct p4w_req_parts parts;
	struct p4w_cookie src = cookie_make(4096);
	struct p4w_req req;
	struct wmsg m;
	size_t i;

	req = req_default(P4W_PUT, 4096);
	req.proto = P4W_PROTO_RDZV;
	msg_req(&m, P4W_PUT, &req, &src, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
	cr_assert(parts.has_src);
	cr_assert_eq(parts.src.length, 4096);
	cr_assert_null(parts.payload);

	for (i = 0; i < sizeof(others); i++) {
		req = req_default(others[i], 4096);
		req.proto = P4W_PROTO_RDZV;
		if (others[i] == P4W_SWAP)
			req.atomic_op = P4E_SWAP;
		msg_req(&m, others[i], &req, &src, NULL, 0);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x", others[i]);
	}
}

Test(wire, parse_push_only_replying)
{
	static const uint8_t yes[] = { P4W_GET, P4W_FETCH, P4W_SWAP };
	static const uint8_t no[] = { P4W_PUT, P4W_ATOMIC };
	struct p4w_req_parts parts;
	struct p4w_cookie dst = cookie_make(8);
	struct p4w_req req;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(yes); i++) {
		req = req_default(yes[i], 8);
		req.rflags = P4W_RF_PUSH;
		req.atomic_op = P4E_SWAP;
		msg_req(&m, yes[i], &req, NULL, &dst,
			yes[i] == P4W_GET ? 0 : 8);
		cr_assert_eq(msg_req_parse(&m, &parts), 0, "type %#x", yes[i]);
		cr_assert(parts.has_dst);
	}
	for (i = 0; i < sizeof(no); i++) {
		req = req_default(no[i], 8);
		req.rflags = P4W_RF_PUSH;
		msg_req(&m, no[i], &req, NULL, &dst, 8);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x", no[i]);
	}
}

/* Eager PUT / ATOMIC / FETCH: payload exactly rlength, not one off. */
Test(wire, parse_eager_payload_exact)
{
	static const uint8_t types[] = { P4W_PUT, P4W_ATOMIC, P4W_FETCH };
	struct p4w_req_parts parts;
	struct p4w_req req;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(types); i++) {
		req = req_default(types[i], 16);
		msg_req(&m, types[i], &req, NULL, NULL, 16);
		cr_assert_eq(msg_req_parse(&m, &parts), 0);
		cr_assert_eq(parts.payload_len, 16);
		msg_req(&m, types[i], &req, NULL, NULL, 15);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x short", types[i]);
		msg_req(&m, types[i], &req, NULL, NULL, 17);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "type %#x long", types[i]);
		req.rlength = 0;
		msg_req(&m, types[i], &req, NULL, NULL, 0);
		cr_assert_eq(msg_req_parse(&m, &parts), 0);
		cr_assert_eq(parts.payload_len, 0);
	}
}

/* SWAP: rlength of data, plus rlength of compare for CSWAP* / MSWAP. */
Test(wire, parse_swap_operands_exact)
{
	struct p4w_req_parts parts;
	struct p4w_req req = req_default(P4W_SWAP, 8);
	struct wmsg m;

	req.atomic_op = P4E_MSWAP;
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 16);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
	cr_assert_eq(parts.payload_len, 8);
	cr_assert_eq(parts.compare, parts.payload + 8);
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 8);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 15);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 17);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);

	/* Plain SWAP has no compare operand. */
	req.atomic_op = P4E_SWAP;
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 8);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
	cr_assert_null(parts.compare);
	msg_req(&m, P4W_SWAP, &req, NULL, NULL, 16);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, parse_get_no_payload)
{
	struct p4w_req_parts parts;
	struct p4w_req req = req_default(P4W_GET, 8);
	struct wmsg m;

	msg_req(&m, P4W_GET, &req, NULL, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
	msg_req(&m, P4W_GET, &req, NULL, NULL, 8);
	cr_assert_eq(msg_recv(&m), -FI_EBADMSG);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, parse_rdzv_cookie_present)
{
	struct p4w_req_parts parts;
	struct p4w_cookie src = cookie_make(64);
	struct p4w_req req = req_default(P4W_PUT, 64);
	struct wmsg m;
	size_t cut;

	req.proto = P4W_PROTO_RDZV;
	msg_req(&m, P4W_PUT, &req, &src, NULL, 0);
	for (cut = 1; cut <= COOKIE_LEN; cut++) {
		struct wmsg t = m;

		msg_set_length(&t, (uint32_t)(t.len - cut));
		t.len -= cut;
		cr_assert_eq(msg_req_parse(&t, &parts), -FI_EBADMSG,
			     "cookie short by %zu", cut);
	}
}

Test(wire, parse_rdzv_no_payload)
{
	struct p4w_req_parts parts;
	struct p4w_cookie src = cookie_make(64);
	struct p4w_req req = req_default(P4W_PUT, 64);
	struct wmsg m;

	req.proto = P4W_PROTO_RDZV;
	msg_req(&m, P4W_PUT, &req, &src, NULL, 1);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	msg_req(&m, P4W_PUT, &req, &src, NULL, 64);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
}

Test(wire, parse_push_cookie_present)
{
	struct p4w_req_parts parts;
	struct p4w_req req = req_default(P4W_FETCH, 8);
	struct wmsg m;

	/* FETCH claims a push cookie but sends only the 8-byte operand. */
	req.rflags = P4W_RF_PUSH;
	msg_req(&m, P4W_FETCH, &req, NULL, NULL, 8);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	msg_req(&m, P4W_GET, &req, NULL, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
}

/* A cookie must cover rlength, or pulling / pushing it overruns. */
Test(wire, parse_cookie_covers_rlength)
{
	struct p4w_req_parts parts;
	struct p4w_cookie c = cookie_make(99);
	struct p4w_req req = req_default(P4W_PUT, 100);
	struct wmsg m;

	req.proto = P4W_PROTO_RDZV;
	msg_req(&m, P4W_PUT, &req, &c, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	c.length = 100;
	msg_req(&m, P4W_PUT, &req, &c, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);

	req = req_default(P4W_GET, 100);
	req.rflags = P4W_RF_PUSH;
	c.length = 99;
	msg_req(&m, P4W_GET, &req, NULL, &c, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG);
	c.length = UINT64_MAX;
	msg_req(&m, P4W_GET, &req, NULL, &c, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
}

Test(wire, parse_wrong_type)
{
	struct p4w_req_parts rp;
	struct p4w_resp_parts sp;
	struct p4w_data data = { .length = 0 };
	struct wmsg m;

	msg_valid(&m, P4W_REPLY);
	cr_assert_eq(msg_req_parse(&m, &rp), -FI_EINVAL);
	msg_valid(&m, P4W_PUT);
	cr_assert_eq(msg_resp_parse(&m, &sp), -FI_EINVAL);
	cr_assert_eq(p4w_data_check(&m.hdr, &data), -FI_EINVAL);
}

/* A header that did not come from hdr_unpack is bounded again. */
Test(wire, parse_hdr_length_bounds)
{
	struct p4w_req_parts rp;
	struct p4w_resp_parts sp;
	struct wmsg m;

	msg_valid(&m, P4W_PUT);
	m.hdr.length = REQ_END - 1;
	cr_assert_eq(msg_req_parse(&m, &rp), -FI_EMSGSIZE);
	m.hdr.length = P4W_MAX_MSG + 1;
	cr_assert_eq(p4w_req_parse(&m.hdr, m.buf, &rp), -FI_EMSGSIZE);
	/* below the header itself: len - 16 must not wrap */
	m.hdr.length = HDR_LEN - 8;
	cr_assert_eq(msg_req_parse(&m, &rp), -FI_EMSGSIZE);
	msg_valid(&m, P4W_REPLY);
	m.hdr.length = RESP_END - 1;
	cr_assert_eq(msg_resp_parse(&m, &sp), -FI_EMSGSIZE);
	m.hdr.length = HDR_LEN - 8;
	cr_assert_eq(msg_resp_parse(&m, &sp), -FI_EMSGSIZE);
	m.hdr.length = P4W_MAX_MSG + 1;
	cr_assert_eq(p4w_resp_parse(&m.hdr, m.buf, &sp), -FI_EMSGSIZE);
}

/*
 * rlength is 64 bits from the peer. Values whose sums or doubles wrap to
 * the bytes actually present (or whose low 32 bits match) are refused.
 */
Test(wire, parse_rlength_overflow)
{
	static const uint64_t huge[] = {
		UINT64_MAX, 1ULL << 63, (1ULL << 63) + 8, (1ULL << 32) + 16,
		UINT64_MAX - REQ_END + 1 + 16, (1ULL << 63) + 4,
	};
	struct p4w_req_parts parts;
	struct p4w_cookie c = cookie_make(UINT64_MAX);
	struct p4w_req req;
	struct wmsg m;
	size_t i;

	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		req = req_default(P4W_PUT, huge[i]);
		msg_req(&m, P4W_PUT, &req, NULL, NULL, 16);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "put rlength %#llx", (unsigned long long)huge[i]);

		/* 2 * (2^63 + 8) == 16 (mod 2^64) */
		req = req_default(P4W_SWAP, huge[i]);
		msg_req(&m, P4W_SWAP, &req, NULL, NULL, 16);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "swap rlength %#llx", (unsigned long long)huge[i]);
		msg_req(&m, P4W_SWAP, &req, NULL, NULL, 0);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "swap rlength %#llx, no data",
			     (unsigned long long)huge[i]);

		/* cookie + payload: 24 + rlength must not wrap either */
		req = req_default(P4W_FETCH, huge[i]);
		req.rflags = P4W_RF_PUSH;
		msg_req(&m, P4W_FETCH, &req, NULL, &c, 16);
		cr_assert_eq(msg_req_parse(&m, &parts), -FI_EBADMSG,
			     "fetch rlength %#llx", (unsigned long long)huge[i]);
	}

	/* Rendezvous carries no payload: a huge rlength is the engine's call. */
	req = req_default(P4W_PUT, UINT64_MAX);
	req.proto = P4W_PROTO_RDZV;
	msg_req(&m, P4W_PUT, &req, &c, NULL, 0);
	cr_assert_eq(msg_req_parse(&m, &parts), 0);
	cr_assert_eq(parts.req.rlength, UINT64_MAX);
	cr_assert_eq(parts.payload_len, 0);
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

/* ---- flow control and transport rules -------------------------------- */

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
	buf[7] = 1;
	cr_assert_eq(p4w_fc_unpack(buf, sizeof(buf), &out), -FI_EBADMSG);
}

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

/* ---- truncation, alignment, outputs ----------------------------------- */

/*
 * Every prefix of every valid message: fewer than 16 bytes fail the
 * header; a complete header with its true length unpacks (the receiver
 * waits for the rest); a header claiming the prefix as the whole message
 * fails everywhere short of the real length.
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
			if (len == m.len)
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
