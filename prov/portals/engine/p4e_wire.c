/*
 * p4e_wire.c - pack, unpack and validate the messages of p4_wire.h.
 *
 * Every function here is a pure function of its arguments: no engine
 * state, no allocation, no logging. The fuzz target links this file alone,
 * and the caller that drops a malformed message is the one that counts it
 * and logs it rate-limited. What needs engine state (PT index, op ids,
 * offsets against an entry, op x datatype support and element sizes,
 * sequence windows) is checked by the engine before use.
 *
 * Wire layout = C layout of the p4_wire.h structs in little-endian order
 * (sizes asserted there, field offsets below), so a message is moved with
 * one memcpy and then converted field by field; nothing is ever read
 * through a cast pointer into the stream, so any alignment works.
 *
 * Reserved fields and the unused tail of hello.addr are written as zero by
 * pack and refused when non-zero by unpack: a valid message has exactly
 * one encoding, and the fuzz target checks unpack(pack(x)) against that.
 *
 * Errors:
 *   -FI_EPROTO    wrong protocol version (header, hello);
 *   -FI_EMSGSIZE  a length outside its range: a buffer shorter than the
 *                 fixed part, hdr.length outside the type's bounds, an
 *                 address, chunk or pull range too long;
 *   -FI_EBADMSG   anything else malformed: unknown type, bits or enum
 *                 value, non-zero reserved field, parts that do not add up
 *                 exactly to hdr.length;
 *   -FI_EINVAL    a parse/check function given a header of the wrong type
 *                 (a caller bug, not wire data).
 */
#include <config.h>

#include <endian.h>
#include <stddef.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "p4e.h"
#include "p4_wire.h"

/* The memcpy-then-convert scheme relies on these offsets (no hidden padding). */
_Static_assert(offsetof(struct p4w_hdr, length) == 4, "wire layout");
_Static_assert(offsetof(struct p4w_hdr, ack_seq) == 12, "wire layout");
_Static_assert(offsetof(struct p4w_req, pt_index) == 40, "wire layout");
_Static_assert(offsetof(struct p4w_req, ack_req) == 48, "wire layout");
_Static_assert(offsetof(struct p4w_req, rflags) == 52, "wire layout");
_Static_assert(offsetof(struct p4w_resp, fail) == 24, "wire layout");
_Static_assert(offsetof(struct p4w_hello, session) == 8, "wire layout");
_Static_assert(offsetof(struct p4w_hello, addr) == 24, "wire layout");
_Static_assert(offsetof(struct p4w_pull_req, src) == 24, "wire layout");
_Static_assert(offsetof(struct p4w_data, last) == 24, "wire layout");
_Static_assert(offsetof(struct p4w_data, dst) == 32, "wire layout");
/* hdr.length is 32-bit and size_t arithmetic below must not wrap. */
_Static_assert(P4W_MAX_MSG <= UINT32_MAX, "wire layout");

#define P4W_HDR_LEN	sizeof(struct p4w_hdr)
#define P4W_REQ_MIN	(P4W_HDR_LEN + sizeof(struct p4w_req))
#define P4W_RESP_MIN	(P4W_HDR_LEN + sizeof(struct p4w_resp))
#define P4W_DATA_MIN	(P4W_HDR_LEN + sizeof(struct p4w_data))

/*
 * A PULL_DATA status is 0 or -FI_E* (errno values and FI_ERRNO_OFFSET +
 * small numbers). Anything below this is garbage, and INT32_MIN would make
 * fi_strerror(-status) undefined.
 */
#define P4W_STATUS_MIN	(-4095)

/* ---- header ---------------------------------------------------------- */

/*
 * Bounds of hdr.length per type. Fixed-size messages have min == max, so
 * a peer cannot hide trailing bytes in them; a GET carries no payload,
 * only an optional reply cookie.
 */
static bool p4w_type_limits(uint8_t type, size_t *min_p, size_t *max_p)
{
	size_t min, max;

	switch (type) {
	case P4W_PUT:
	case P4W_ATOMIC:
	case P4W_FETCH:
	case P4W_SWAP:
		min = P4W_REQ_MIN;
		max = P4W_MAX_MSG;
		break;
	case P4W_GET:
		min = P4W_REQ_MIN;
		max = P4W_REQ_MIN + sizeof(struct p4w_cookie);
		break;
	case P4W_ACK:
		min = max = P4W_RESP_MIN;
		break;
	case P4W_REPLY:
		min = P4W_RESP_MIN;
		max = P4W_MAX_MSG;
		break;
	case P4W_SEQ_ACK:
	case P4W_T_BYE:
		min = max = P4W_HDR_LEN;
		break;
	case P4W_NACK:
	case P4W_RESUME:
		min = max = P4W_HDR_LEN + sizeof(struct p4w_fc);
		break;
	case P4W_T_HELLO:
	case P4W_T_HELLO_ACK:
		min = max = P4W_HDR_LEN + sizeof(struct p4w_hello);
		break;
	case P4W_T_PULL_REQ:
		min = max = P4W_HDR_LEN + sizeof(struct p4w_pull_req);
		break;
	case P4W_T_OFFER_ANNOUNCE:
		min = max = P4W_DATA_MIN;
		break;
	case P4W_T_XPORT:
		min = P4W_HDR_LEN;
		max = P4W_HDR_LEN + P4W_XPORT_MAX;
		break;
	case P4W_T_PULL_DATA:
	case P4W_T_PUSH_DATA:
	case P4W_T_OFFER:
		min = P4W_DATA_MIN;
		max = P4W_MAX_MSG;
		break;
	default:
		return false;
	}
	*min_p = min;
	*max_p = max;
	return true;
}

void p4w_hdr_pack(void *buf, const struct p4w_hdr *hdr)
{
	struct p4w_hdr wire = {
		.version = hdr->version,
		.type = hdr->type,
		.flags = htole16(hdr->flags),
		.length = htole32(hdr->length),
		.seq = htole32(hdr->seq),
		.ack_seq = htole32(hdr->ack_seq),
	};

	memcpy(buf, &wire, sizeof(wire));
}

int p4w_hdr_unpack(const void *buf, size_t len, struct p4w_hdr *hdr)
{
	struct p4w_hdr h;
	size_t min, max;

	if (len < sizeof(h))
		return -FI_EMSGSIZE;
	memcpy(&h, buf, sizeof(h));
	h.flags = le16toh(h.flags);
	h.length = le32toh(h.length);
	h.seq = le32toh(h.seq);
	h.ack_seq = le32toh(h.ack_seq);

	/* Version first: another version may define everything else anew. */
	if (h.version != P4W_VERSION)
		return -FI_EPROTO;
	if (!p4w_type_limits(h.type, &min, &max))
		return -FI_EBADMSG;
	if (h.flags & ~(P4W_F_ACK_SEQ | P4W_F_ACK_NOW))
		return -FI_EBADMSG;
	if (h.length < min || h.length > max)
		return -FI_EMSGSIZE;
	*hdr = h;
	return 0;
}

bool p4w_type_is_seq(uint8_t type)
{
	switch (type) {
	case P4W_PUT:
	case P4W_GET:
	case P4W_ATOMIC:
	case P4W_FETCH:
	case P4W_SWAP:
		return true;
	default:
		return false;
	}
}

bool p4w_type_is_ack(uint8_t type)
{
	return type == P4W_ACK || type == P4W_SEQ_ACK;
}

/* ---- cookie ---------------------------------------------------------- */

void p4w_cookie_pack(void *buf, const struct p4w_cookie *cookie)
{
	struct p4w_cookie wire = {
		.addr = htole64(cookie->addr),
		.key = htole64(cookie->key),
		.length = htole64(cookie->length),
	};

	memcpy(buf, &wire, sizeof(wire));
}

static void p4w_cookie_to_host(struct p4w_cookie *cookie)
{
	cookie->addr = le64toh(cookie->addr);
	cookie->key = le64toh(cookie->key);
	cookie->length = le64toh(cookie->length);
}

/* Addresses and keys are the exposing side's business: nothing to check. */
int p4w_cookie_unpack(const void *buf, size_t len, struct p4w_cookie *cookie)
{
	struct p4w_cookie c;

	if (len < sizeof(c))
		return -FI_EMSGSIZE;
	memcpy(&c, buf, sizeof(c));
	p4w_cookie_to_host(&c);
	*cookie = c;
	return 0;
}

/* ---- requests -------------------------------------------------------- */

void p4w_req_pack(void *buf, const struct p4w_req *req)
{
	struct p4w_req wire = {
		.op_id = htole64(req->op_id),
		.match_bits = htole64(req->match_bits),
		.remote_offset = htole64(req->remote_offset),
		.hdr_data = htole64(req->hdr_data),
		.rlength = htole64(req->rlength),
		.pt_index = htole32(req->pt_index),
		.uid = htole32(req->uid),
		.ack_req = req->ack_req,
		.atomic_op = req->atomic_op,
		.atomic_type = req->atomic_type,
		.proto = req->proto,
		.rflags = htole16(req->rflags),
		.reserved = 0,
	};

	memcpy(buf, &wire, sizeof(wire));
}

/*
 * Type-independent checks only: the atomic fields of a PUT or GET are not
 * looked at (the initiator need not clear them); p4w_req_parse() checks
 * them, and everything else that depends on the message type.
 */
int p4w_req_unpack(const void *buf, size_t len, struct p4w_req *req)
{
	struct p4w_req r;

	if (len < sizeof(r))
		return -FI_EMSGSIZE;
	memcpy(&r, buf, sizeof(r));
	r.op_id = le64toh(r.op_id);
	r.match_bits = le64toh(r.match_bits);
	r.remote_offset = le64toh(r.remote_offset);
	r.hdr_data = le64toh(r.hdr_data);
	r.rlength = le64toh(r.rlength);
	r.pt_index = le32toh(r.pt_index);
	r.uid = le32toh(r.uid);
	r.rflags = le16toh(r.rflags);
	r.reserved = le16toh(r.reserved);

	if (r.ack_req >= P4E_ACK_REQ_MAX)
		return -FI_EBADMSG;
	if (r.proto != P4W_PROTO_EAGER && r.proto != P4W_PROTO_RDZV)
		return -FI_EBADMSG;
	if (r.rflags & ~(P4W_RF_PUSH | P4W_RF_HDR_DATA))
		return -FI_EBADMSG;
	if (r.reserved)
		return -FI_EBADMSG;
	*req = r;
	return 0;
}

/* Ops whose SWAP message carries a second operand (compare values, mask). */
static bool p4w_op_has_compare(uint8_t op)
{
	switch (op) {
	case P4E_CSWAP:
	case P4E_CSWAP_NE:
	case P4E_CSWAP_LE:
	case P4E_CSWAP_LT:
	case P4E_CSWAP_GE:
	case P4E_CSWAP_GT:
	case P4E_MSWAP:
		return true;
	default:
		return false;
	}
}

/* What the message type allows of a request body. */
static int p4w_req_check_type(uint8_t type, const struct p4w_req *req)
{
	bool atomic = type == P4W_ATOMIC || type == P4W_FETCH ||
		      type == P4W_SWAP;
	bool replies = type == P4W_GET || type == P4W_FETCH ||
		       type == P4W_SWAP;

	if (atomic && (req->atomic_op >= P4E_ATOMIC_OP_MAX ||
		       req->atomic_type >= P4E_ATOMIC_TYPE_MAX))
		return -FI_EBADMSG;
	/* Only a SWAP has room for the compare operand such an op needs. */
	if (atomic && type != P4W_SWAP && p4w_op_has_compare(req->atomic_op))
		return -FI_EBADMSG;
	if (req->proto == P4W_PROTO_RDZV && type != P4W_PUT)
		return -FI_EBADMSG;
	if ((req->rflags & P4W_RF_PUSH) && !replies)
		return -FI_EBADMSG;
	return 0;
}

/*
 * A cookie inside a request: missing bytes mean the parts do not add up
 * (-FI_EBADMSG), and the cookie must cover rlength, so pulling or pushing
 * [0, rlength) never leaves what the initiator exposed.
 */
static int p4w_req_cookie(const uint8_t *buf, size_t len, uint64_t rlength,
			  struct p4w_cookie *cookie)
{
	struct p4w_cookie c;

	if (p4w_cookie_unpack(buf, len, &c))
		return -FI_EBADMSG;
	if (c.length < rlength)
		return -FI_EBADMSG;
	*cookie = c;
	return 0;
}

/*
 * The eager payload: rest bytes are left after the fixed parts and must be
 * exactly rlength (twice that for a SWAP with a compare operand).
 * rlength is 64-bit and the peer's; rest <= P4W_MAX_MSG. Comparing
 * rlength against rest before any arithmetic keeps it from wrapping
 * (2 * (2^63 + 8) would otherwise pass as 16).
 */
static int p4w_req_payload(uint8_t type, const uint8_t *buf, size_t rest,
			   struct p4w_req_parts *parts)
{
	uint64_t rlength = parts->req.rlength;

	if (type == P4W_GET || parts->req.proto == P4W_PROTO_RDZV)
		return rest ? -FI_EBADMSG : 0;
	if (rlength > rest)
		return -FI_EBADMSG;
	if (type == P4W_SWAP && p4w_op_has_compare(parts->req.atomic_op)) {
		if (rest - rlength != rlength)
			return -FI_EBADMSG;
		parts->compare = buf + rlength;
	} else if (rest != rlength) {
		return -FI_EBADMSG;
	}
	parts->payload = buf;
	parts->payload_len = rlength;
	return 0;
}

int p4w_req_parse(const struct p4w_hdr *hdr, const void *msg,
		  struct p4w_req_parts *parts)
{
	const uint8_t *buf = msg;
	struct p4w_req_parts out;
	size_t len = hdr->length;
	size_t off = P4W_HDR_LEN;
	int ret;

	if (!p4w_type_is_seq(hdr->type))
		return -FI_EINVAL;
	/* hdr may not come from p4w_hdr_unpack(): bound it again. */
	if (len < P4W_REQ_MIN || len > P4W_MAX_MSG)
		return -FI_EMSGSIZE;

	memset(&out, 0, sizeof(out));
	ret = p4w_req_unpack(buf + off, len - off, &out.req);
	if (ret)
		return ret;
	off += sizeof(struct p4w_req);
	ret = p4w_req_check_type(hdr->type, &out.req);
	if (ret)
		return ret;

	if (out.req.proto == P4W_PROTO_RDZV) {
		ret = p4w_req_cookie(buf + off, len - off, out.req.rlength,
				     &out.src);
		if (ret)
			return ret;
		out.has_src = true;
		off += sizeof(struct p4w_cookie);
	}
	if (out.req.rflags & P4W_RF_PUSH) {
		ret = p4w_req_cookie(buf + off, len - off, out.req.rlength,
				     &out.dst);
		if (ret)
			return ret;
		out.has_dst = true;
		off += sizeof(struct p4w_cookie);
	}

	ret = p4w_req_payload(hdr->type, buf + off, len - off, &out);
	if (ret)
		return ret;
	*parts = out;
	return 0;
}

/* ---- responses ------------------------------------------------------- */

void p4w_resp_pack(void *buf, const struct p4w_resp *resp)
{
	struct p4w_resp wire = {
		.op_id = htole64(resp->op_id),
		.mlength = htole64(resp->mlength),
		.offset = htole64(resp->offset),
		.fail = resp->fail,
		.list = resp->list,
		.pushed = resp->pushed,
	};

	memcpy(buf, &wire, sizeof(wire));
}

int p4w_resp_unpack(const void *buf, size_t len, struct p4w_resp *resp)
{
	static const uint8_t zero[sizeof(resp->reserved)];
	struct p4w_resp r;

	if (len < sizeof(r))
		return -FI_EMSGSIZE;
	memcpy(&r, buf, sizeof(r));
	r.op_id = le64toh(r.op_id);
	r.mlength = le64toh(r.mlength);
	r.offset = le64toh(r.offset);

	if (r.fail >= P4E_NI_FAIL_MAX)
		return -FI_EBADMSG;
	/* with P4E_RESP_NO_ACK when the entry sends no ack (p4e_priv.h) */
	if ((r.list & ~P4E_RESP_NO_ACK) != P4E_PRIORITY_LIST &&
	    (r.list & ~P4E_RESP_NO_ACK) != P4E_OVERFLOW_LIST)
		return -FI_EBADMSG;
	if (r.pushed > 1)
		return -FI_EBADMSG;
	if (memcmp(r.reserved, zero, sizeof(zero)))
		return -FI_EBADMSG;
	*resp = r;
	return 0;
}

int p4w_resp_parse(const struct p4w_hdr *hdr, const void *msg,
		   struct p4w_resp_parts *parts)
{
	const uint8_t *buf = msg;
	struct p4w_resp_parts out;
	size_t len = hdr->length;
	size_t rest;
	int ret;

	if (hdr->type != P4W_ACK && hdr->type != P4W_REPLY)
		return -FI_EINVAL;
	if (len < P4W_RESP_MIN || len > P4W_MAX_MSG)
		return -FI_EMSGSIZE;

	memset(&out, 0, sizeof(out));
	ret = p4w_resp_unpack(buf + P4W_HDR_LEN, len - P4W_HDR_LEN,
			      &out.resp);
	if (ret)
		return ret;
	rest = len - P4W_RESP_MIN;

	if (hdr->type == P4W_ACK) {
		/* An ack carries no data and cannot have pushed any. */
		if (out.resp.pushed || rest)
			return -FI_EBADMSG;
	} else if (out.resp.pushed) {
		if (rest)
			return -FI_EBADMSG;
	} else {
		/* mlength is the peer's 64-bit value; rest is bounded. */
		if (out.resp.mlength != rest)
			return -FI_EBADMSG;
		out.data = buf + P4W_RESP_MIN;
		out.data_len = rest;
	}
	*parts = out;
	return 0;
}

/* ---- flow control ---------------------------------------------------- */

void p4w_fc_pack(void *buf, const struct p4w_fc *fc)
{
	struct p4w_fc wire = {
		.seq = htole32(fc->seq),
		.flags = htole32(fc->flags),
	};

	memcpy(buf, &wire, sizeof(wire));
}

int p4w_fc_unpack(const void *buf, size_t len, struct p4w_fc *fc)
{
	struct p4w_fc f;

	if (len < sizeof(f))
		return -FI_EMSGSIZE;
	memcpy(&f, buf, sizeof(f));
	f.seq = le32toh(f.seq);
	f.flags = le32toh(f.flags);
	if (f.flags & ~(uint32_t)P4W_FC_AS_RDZV)
		return -FI_EBADMSG;
	*fc = f;
	return 0;
}

/* ---- transport messages ---------------------------------------------- */

void p4w_hello_pack(void *buf, const struct p4w_hello *hello)
{
	struct p4w_hello wire = {
		.magic = htole32(hello->magic),
		.version = htole16(hello->version),
		.addrlen = htole16(hello->addrlen),
		.session = htole64(hello->session),
		.auth_key = htole64(hello->auth_key),
	};
	size_t addrlen = hello->addrlen;

	/* Bytes past addrlen go out as zero: one encoding per address. */
	if (addrlen > sizeof(wire.addr))
		addrlen = sizeof(wire.addr);
	memcpy(wire.addr, hello->addr, addrlen);
	memcpy(buf, &wire, sizeof(wire));
}

int p4w_hello_unpack(const void *buf, size_t len, struct p4w_hello *hello)
{
	struct p4w_hello h;
	size_t i;

	if (len < sizeof(h))
		return -FI_EMSGSIZE;
	memcpy(&h, buf, sizeof(h));
	h.magic = le32toh(h.magic);
	h.version = le16toh(h.version);
	h.addrlen = le16toh(h.addrlen);
	h.session = le64toh(h.session);
	h.auth_key = le64toh(h.auth_key);

	/* Not our protocol at all, rather than another version of it. */
	if (h.magic != P4W_MAGIC)
		return -FI_EBADMSG;
	if (h.version != P4W_VERSION)
		return -FI_EPROTO;
	if (h.addrlen > P4W_ADDR_MAX)
		return -FI_EMSGSIZE;
	for (i = h.addrlen; i < P4W_ADDR_MAX; i++) {
		if (h.addr[i])
			return -FI_EBADMSG;
	}
	*hello = h;
	return 0;
}

void p4w_pull_req_pack(void *buf, const struct p4w_pull_req *req)
{
	struct p4w_pull_req wire = {
		.pull_id = htole64(req->pull_id),
		.offset = htole64(req->offset),
		.length = htole64(req->length),
		.src = {
			.addr = htole64(req->src.addr),
			.key = htole64(req->src.key),
			.length = htole64(req->src.length),
		},
	};

	memcpy(buf, &wire, sizeof(wire));
}

int p4w_pull_req_unpack(const void *buf, size_t len, struct p4w_pull_req *req)
{
	struct p4w_pull_req r;

	if (len < sizeof(r))
		return -FI_EMSGSIZE;
	memcpy(&r, buf, sizeof(r));
	r.pull_id = le64toh(r.pull_id);
	r.offset = le64toh(r.offset);
	r.length = le64toh(r.length);
	p4w_cookie_to_host(&r.src);

	/* The range asked for stays inside the cookie; written not to wrap. */
	if (r.offset > r.src.length || r.length > r.src.length - r.offset)
		return -FI_EMSGSIZE;
	*req = r;
	return 0;
}

void p4w_data_pack(void *buf, const struct p4w_data *data)
{
	struct p4w_data wire = {
		.id = htole64(data->id),
		.offset = htole64(data->offset),
		.length = htole64(data->length),
		.last = htole32(data->last),
		.status = (int32_t)htole32((uint32_t)data->status),
		.dst = {
			.addr = htole64(data->dst.addr),
			.key = htole64(data->dst.key),
			.length = htole64(data->dst.length),
		},
	};

	memcpy(buf, &wire, sizeof(wire));
}

int p4w_data_unpack(const void *buf, size_t len, struct p4w_data *data)
{
	struct p4w_data d;

	if (len < sizeof(d))
		return -FI_EMSGSIZE;
	memcpy(&d, buf, sizeof(d));
	d.id = le64toh(d.id);
	d.offset = le64toh(d.offset);
	d.length = le64toh(d.length);
	d.last = le32toh(d.last);
	d.status = (int32_t)le32toh((uint32_t)d.status);
	p4w_cookie_to_host(&d.dst);

	if (d.last > 1)
		return -FI_EBADMSG;
	if (d.status > 0 || d.status < P4W_STATUS_MIN)
		return -FI_EBADMSG;
	/* A failed pull says so instead of sending data. */
	if (d.status && d.length)
		return -FI_EBADMSG;
	if (d.length > P4W_MAX_MSG - P4W_DATA_MIN)
		return -FI_EMSGSIZE;
	if (d.offset > UINT64_MAX - d.length)
		return -FI_EMSGSIZE;
	*data = d;
	return 0;
}

int p4w_data_check(const struct p4w_hdr *hdr, const struct p4w_data *data)
{
	if (hdr->type == P4W_T_OFFER_ANNOUNCE) {
		/* the body alone; what it announces comes in an OFFER */
		if (hdr->length != P4W_DATA_MIN)
			return -FI_EMSGSIZE;
		return data->id || data->offset || !data->last ||
		       data->status || !data->length ||
		       data->length > data->dst.length ? -FI_EBADMSG : 0;
	}
	if (hdr->type != P4W_T_PULL_DATA && hdr->type != P4W_T_PUSH_DATA &&
	    hdr->type != P4W_T_OFFER)
		return -FI_EINVAL;
	if (hdr->length < P4W_DATA_MIN || hdr->length > P4W_MAX_MSG)
		return -FI_EMSGSIZE;
	if (data->length != hdr->length - P4W_DATA_MIN)
		return -FI_EBADMSG;
	/* an offer is one whole chunk of its source, from its start */
	if (hdr->type == P4W_T_OFFER &&
	    (data->id || data->offset || !data->last || data->status ||
	     data->length > data->dst.length))
		return -FI_EBADMSG;
	if (hdr->type == P4W_T_PUSH_DATA &&
	    (data->offset > data->dst.length ||
	     data->length > data->dst.length - data->offset))
		return -FI_EMSGSIZE;
	return 0;
}
