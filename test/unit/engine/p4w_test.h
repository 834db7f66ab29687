/*
 * p4w_test.h - what the wire protocol's tests (test_wire.c,
 * test_wire_parse.c, test_wire_xport.c) share: exact-size heap copies of
 * the message under test (wire_dup, so the --enable-sanitize build catches
 * any read past its length) and the suite's setup and teardown that free
 * them; building messages (struct wmsg: header fields, then the bytes so
 * far) with default requests, responses, cookies, hellos and pull
 * requests; one valid message of each type; the receiver path a transport
 * runs on a whole message; and byte-by-byte comparison for the layout
 * tests.
 *
 * One test binary includes it once: helpers are static inline.
 */
#ifndef P4W_TEST_H
#define P4W_TEST_H

#include <stdbool.h>
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
/* The current exact-size copy; one at a time, freed by the next or fini. */
static uint8_t *dup_buf;

static inline void wire_setup(void)
{
	dup_buf = NULL;
}

static inline void wire_teardown(void)
{
	free(dup_buf);
	dup_buf = NULL;
}
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

static inline void msg_begin(struct wmsg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->hdr.version = P4W_VERSION;
	m->hdr.type = type;
	m->hdr.flags = P4W_F_ACK_SEQ;
	m->hdr.seq = p4w_type_is_seq(type) ? 7 : 0;
	m->hdr.ack_seq = 3;
	m->len = HDR_LEN;
}

static inline uint8_t *msg_room(struct wmsg *m, size_t n)
{
	uint8_t *p = m->buf + m->len;

	cr_assert_leq(m->len + n, MSG_MAX);
	m->len += n;
	return p;
}

static inline void msg_bytes(struct wmsg *m, size_t n)
{
	uint8_t *p = msg_room(m, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(0x80 + i);
}

/* Header length = bytes written, then the header packed in front. */
static inline void msg_end(struct wmsg *m)
{
	m->hdr.length = (uint32_t)m->len;
	p4w_hdr_pack(m->buf, &m->hdr);
}

/* Re-pack the header with another length field (bytes unchanged). */
static inline void msg_set_length(struct wmsg *m, uint32_t length)
{
	m->hdr.length = length;
	p4w_hdr_pack(m->buf, &m->hdr);
}

static inline struct p4w_req req_default(uint8_t type, uint64_t rlength)
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

static inline struct p4w_cookie cookie_make(uint64_t length)
{
	struct p4w_cookie c = {
		.addr = 0x7f0000001000ULL,
		.key = 0x55,
		.length = length,
	};

	return c;
}

/* A request message: body, optional cookies, plen payload bytes. */
static inline void msg_req(struct wmsg *m, uint8_t type,
			   const struct p4w_req *req,
			   const struct p4w_cookie *src,
			   const struct p4w_cookie *dst, size_t plen)
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

static inline void msg_resp(struct wmsg *m, uint8_t type,
			    const struct p4w_resp *resp, size_t dlen)
{
	msg_begin(m, type);
	p4w_resp_pack(msg_room(m, sizeof(*resp)), resp);
	msg_bytes(m, dlen);
	msg_end(m);
}

static inline struct p4w_resp resp_default(uint64_t mlength)
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

static inline struct p4w_hello hello_default(void)
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

static inline struct p4w_pull_req pull_default(void)
{
	struct p4w_pull_req pull = {
		.pull_id = 9,
		.offset = 4,
		.length = 8,
		.src = cookie_make(64),
	};

	return pull;
}

static inline void msg_data(struct wmsg *m, uint8_t type,
			    const struct p4w_data *data, size_t dlen)
{
	msg_begin(m, type);
	p4w_data_pack(msg_room(m, sizeof(*data)), data);
	msg_bytes(m, dlen);
	msg_end(m);
}

/* One valid message of each type, with a non-trivial shape. */
static inline void msg_valid(struct wmsg *m, uint8_t type)
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
	case P4W_T_OFFER:
		data.id = 0;
		data.offset = 0;
		data.length = 5;
		data.dst = cookie_make(64);
		msg_data(m, type, &data, 5);
		break;
	case P4W_T_XPORT:		/* opaque to the codec */
		msg_begin(m, type);
		msg_bytes(m, 40);
		msg_end(m);
		break;
	case P4W_T_OFFER_ANNOUNCE:	/* the body alone: no data */
		data.id = 0;
		data.offset = 0;
		data.length = 5;
		data.dst = cookie_make(64);
		msg_begin(m, type);
		p4w_data_pack(msg_room(m, sizeof(data)), &data);
		msg_end(m);
		break;
	default:
		cr_assert_fail("no valid message for type %u", type);
	}
}

/* ---- the receiver path ------------------------------------------------ */

/* What a transport does with one complete message of len bytes. */
static inline int wire_recv(const uint8_t *buf, size_t len)
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
	case P4W_T_XPORT:	/* the layered transport's to read */
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
	case P4W_T_OFFER:
	case P4W_T_OFFER_ANNOUNCE:
		ret = p4w_data_unpack(body, blen, &data);
		return ret ? ret : p4w_data_check(&hdr, &data);
	default:
		cr_assert_fail("hdr_unpack passed type %#x", hdr.type);
		return -FI_EINVAL;
	}
}

static inline int msg_recv(const struct wmsg *m)
{
	return wire_recv(wire_dup(m->buf, m->len), m->len);
}

/* Parse without hdr_unpack, so its length bounds do not hide the rule. */
static inline int msg_req_parse(const struct wmsg *m,
				struct p4w_req_parts *parts)
{
	return p4w_req_parse(&m->hdr, wire_dup(m->buf, m->len), parts);
}

static inline int msg_resp_parse(const struct wmsg *m,
				 struct p4w_resp_parts *parts)
{
	return p4w_resp_parse(&m->hdr, wire_dup(m->buf, m->len), parts);
}

/* Bytes as packed against bytes written out by hand. */
static inline void check_bytes(const uint8_t *got, const uint8_t *want,
			       size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "byte %zu: %#x, want %#x",
			     i, got[i], want[i]);
}

#endif /* P4W_TEST_H */
