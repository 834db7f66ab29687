/*
 * fuzz_wire.c - libFuzzer target for the wire layer (p4e_wire.c).
 *
 * The input is a byte stream as a TCP receiver sees it: while a whole
 * header and then hdr.length bytes are available, the message is copied
 * into a heap buffer of exactly hdr.length bytes at an odd address (ASan
 * catches any read past it, UBSan any misaligned load), unpacked and
 * parsed by its type. The first malformed message ends the stream, as it
 * would close the connection; a message cut short ends it too (the
 * receiver would wait for more).
 *
 * Beyond "no crash, no leak, no UB", it checks two properties and traps
 * (a crash to libFuzzer) when one fails:
 *   - whatever unpacks packs back to the same bytes: pack inverts unpack,
 *     and a valid message has exactly one encoding;
 *   - parsed parts lie inside the message and add up to hdr.length.
 * Every body unpacker also runs on every message body whatever its type,
 * so each validator sees arbitrary bytes, not only well-typed ones.
 *
 * Built only by the Makefile rule fuzz/fuzz_wire (clang,
 * -fsanitize=fuzzer,address,undefined) with p4e_wire.c alone.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p4e.h"
#include "p4_wire.h"

#define P4W_FUZZ_HDR	sizeof(struct p4w_hdr)
#define P4W_FUZZ_REQ	(P4W_FUZZ_HDR + sizeof(struct p4w_req))
#define P4W_FUZZ_RESP	(P4W_FUZZ_HDR + sizeof(struct p4w_resp))
#define P4W_FUZZ_DATA	(P4W_FUZZ_HDR + sizeof(struct p4w_data))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void p4w_fuzz_check(int cond)
{
	if (!cond)
		__builtin_trap();
}

/* pack(unpacked) must give back the bytes it was unpacked from. */
#define P4W_FUZZ_REPACK(pack, obj, orig)				\
	do {								\
		uint8_t p4w_fuzz_tmp[sizeof(*(obj))];			\
									\
		pack(p4w_fuzz_tmp, (obj));				\
		p4w_fuzz_check(!memcmp(p4w_fuzz_tmp, (orig),		\
				       sizeof(p4w_fuzz_tmp)));		\
	} while (0)

/* Every body unpacker on len arbitrary bytes. */
static void p4w_fuzz_bodies(const uint8_t *body, size_t len)
{
	struct p4w_req req;
	struct p4w_resp resp;
	struct p4w_cookie cookie;
	struct p4w_fc fc;
	struct p4w_hello hello;
	struct p4w_pull_req pull;
	struct p4w_data data;

	if (!p4w_req_unpack(body, len, &req))
		P4W_FUZZ_REPACK(p4w_req_pack, &req, body);
	if (!p4w_resp_unpack(body, len, &resp))
		P4W_FUZZ_REPACK(p4w_resp_pack, &resp, body);
	if (!p4w_cookie_unpack(body, len, &cookie))
		P4W_FUZZ_REPACK(p4w_cookie_pack, &cookie, body);
	if (!p4w_fc_unpack(body, len, &fc))
		P4W_FUZZ_REPACK(p4w_fc_pack, &fc, body);
	if (!p4w_hello_unpack(body, len, &hello)) {
		p4w_fuzz_check(hello.addrlen <= P4W_ADDR_MAX);
		P4W_FUZZ_REPACK(p4w_hello_pack, &hello, body);
	}
	if (!p4w_pull_req_unpack(body, len, &pull)) {
		p4w_fuzz_check(pull.offset <= pull.src.length);
		p4w_fuzz_check(pull.length <= pull.src.length - pull.offset);
		P4W_FUZZ_REPACK(p4w_pull_req_pack, &pull, body);
	}
	if (!p4w_data_unpack(body, len, &data)) {
		p4w_fuzz_check(data.length <= P4W_MAX_MSG);
		P4W_FUZZ_REPACK(p4w_data_pack, &data, body);
	}
}

static int p4w_fuzz_req(const struct p4w_hdr *hdr, const uint8_t *msg)
{
	struct p4w_req_parts parts;
	size_t off = P4W_FUZZ_REQ;
	int ret;

	ret = p4w_req_parse(hdr, msg, &parts);
	if (ret)
		return ret;
	P4W_FUZZ_REPACK(p4w_req_pack, &parts.req, msg + P4W_FUZZ_HDR);
	if (parts.has_src) {
		p4w_fuzz_check(parts.src.length >= parts.req.rlength);
		P4W_FUZZ_REPACK(p4w_cookie_pack, &parts.src, msg + off);
		off += sizeof(struct p4w_cookie);
	}
	if (parts.has_dst) {
		p4w_fuzz_check(parts.dst.length >= parts.req.rlength);
		P4W_FUZZ_REPACK(p4w_cookie_pack, &parts.dst, msg + off);
		off += sizeof(struct p4w_cookie);
	}
	if (!parts.payload) {
		p4w_fuzz_check(!parts.payload_len && !parts.compare);
		p4w_fuzz_check(off == hdr->length);
		return 0;
	}
	p4w_fuzz_check(parts.payload == msg + off);
	p4w_fuzz_check(parts.payload_len == parts.req.rlength);
	off += parts.payload_len;
	if (parts.compare) {
		p4w_fuzz_check(parts.compare == msg + off);
		off += parts.payload_len;
	}
	p4w_fuzz_check(off == hdr->length);
	return 0;
}

static int p4w_fuzz_resp(const struct p4w_hdr *hdr, const uint8_t *msg)
{
	struct p4w_resp_parts parts;
	int ret;

	ret = p4w_resp_parse(hdr, msg, &parts);
	if (ret)
		return ret;
	P4W_FUZZ_REPACK(p4w_resp_pack, &parts.resp, msg + P4W_FUZZ_HDR);
	if (parts.data) {
		p4w_fuzz_check(parts.data == msg + P4W_FUZZ_RESP);
		p4w_fuzz_check(parts.data_len == parts.resp.mlength);
	}
	p4w_fuzz_check(P4W_FUZZ_RESP + parts.data_len == hdr->length);
	return 0;
}

static int p4w_fuzz_data(const struct p4w_hdr *hdr, const uint8_t *msg)
{
	struct p4w_data data;
	int ret;

	ret = p4w_data_unpack(msg + P4W_FUZZ_HDR, hdr->length - P4W_FUZZ_HDR,
			      &data);
	if (ret)
		return ret;
	ret = p4w_data_check(hdr, &data);
	if (ret)
		return ret;
	/* an announcement carries no data: it announces an OFFER's */
	if (hdr->type == P4W_T_OFFER_ANNOUNCE)
		p4w_fuzz_check(hdr->length == P4W_FUZZ_DATA && data.length &&
			       data.length <= data.dst.length);
	else
		p4w_fuzz_check(P4W_FUZZ_DATA + data.length == hdr->length);
	return 0;
}

/* One whole message of hdr->length bytes: what the receiver would do. */
static int p4w_fuzz_msg(const struct p4w_hdr *hdr, const uint8_t *msg)
{
	const uint8_t *body = msg + P4W_FUZZ_HDR;
	size_t blen = hdr->length - P4W_FUZZ_HDR;
	struct p4w_hello hello;
	struct p4w_pull_req pull;
	struct p4w_fc fc;

	P4W_FUZZ_REPACK(p4w_hdr_pack, hdr, msg);
	p4w_fuzz_bodies(body, blen);

	switch (hdr->type) {
	case P4W_PUT:
	case P4W_GET:
	case P4W_ATOMIC:
	case P4W_FETCH:
	case P4W_SWAP:
		p4w_fuzz_check(p4w_type_is_seq(hdr->type));
		return p4w_fuzz_req(hdr, msg);
	case P4W_ACK:
	case P4W_REPLY:
		return p4w_fuzz_resp(hdr, msg);
	case P4W_SEQ_ACK:
	case P4W_T_BYE:
		p4w_fuzz_check(blen == 0);
		return 0;
	case P4W_T_XPORT:
		/* a layered transport's bytes: bounded, never read here */
		p4w_fuzz_check(blen <= P4W_XPORT_MAX);
		return 0;
	case P4W_NACK:
	case P4W_RESUME:
		p4w_fuzz_check(blen == sizeof(fc));
		return p4w_fc_unpack(body, blen, &fc);
	case P4W_T_HELLO:
	case P4W_T_HELLO_ACK:
		p4w_fuzz_check(blen == sizeof(hello));
		return p4w_hello_unpack(body, blen, &hello);
	case P4W_T_PULL_REQ:
		p4w_fuzz_check(blen == sizeof(pull));
		return p4w_pull_req_unpack(body, blen, &pull);
	case P4W_T_PULL_DATA:
	case P4W_T_PUSH_DATA:
	case P4W_T_OFFER:
	case P4W_T_OFFER_ANNOUNCE:
		return p4w_fuzz_data(hdr, msg);
	default:
		/* p4w_hdr_unpack() let through a type nobody handles */
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p4w_hdr hdr;
	uint8_t *copy;
	int ret;

	while (size >= P4W_FUZZ_HDR) {
		if (p4w_hdr_unpack(data, size, &hdr))
			break;
		p4w_fuzz_check(hdr.length >= P4W_FUZZ_HDR &&
			       hdr.length <= P4W_MAX_MSG);
		if (hdr.length > size)
			break;

		/* Exactly hdr.length bytes at an odd address. */
		copy = malloc(hdr.length + 1);
		if (!copy)
			break;
		memcpy(copy + 1, data, hdr.length);
		ret = p4w_fuzz_msg(&hdr, copy + 1);
		free(copy);
		if (ret)
			break;

		data += hdr.length;
		size -= hdr.length;
	}
	return 0;
}
