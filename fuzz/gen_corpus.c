/*
 * gen_corpus.c - writes the seed corpus of fuzz/fuzz_wire into a directory:
 * one valid message of each type, a few valid variants (rendezvous, push,
 * compare operands, error status), a stream of every message back to
 * back, and some near misses (truncated, wrong version, wrapping rlength).
 *
 * Not part of the build; the checked-in fuzz/corpus/wire was made with
 *   cc -DHAVE_CONFIG_H -I$BUILDDIR -Iinclude fuzz/gen_corpus.c \
 *      prov/portals/engine/p4e_wire.c -o gen_corpus
 *   ./gen_corpus fuzz/corpus/wire
 * Packing goes through p4e_wire.c itself, so the seeds follow the layout.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4e.h"
#include "p4_wire.h"

#define P4W_GEN_MAX	512

struct p4w_gen_msg {
	struct p4w_hdr hdr;
	size_t len;
	uint8_t buf[P4W_GEN_MAX];
};

static const char *p4w_gen_dir;
static uint8_t p4w_gen_stream[16 * P4W_GEN_MAX];
static size_t p4w_gen_stream_len;

static void p4w_gen_begin(struct p4w_gen_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->hdr.version = P4W_VERSION;
	m->hdr.type = type;
	m->hdr.flags = P4W_F_ACK_SEQ;
	m->hdr.seq = p4w_type_is_seq(type) ? 1 : 0;
	m->hdr.ack_seq = 1;
	m->len = sizeof(struct p4w_hdr);
}

static uint8_t *p4w_gen_room(struct p4w_gen_msg *m, size_t n)
{
	uint8_t *p = m->buf + m->len;

	if (m->len + n > sizeof(m->buf))
		abort();
	m->len += n;
	return p;
}

static void p4w_gen_bytes(struct p4w_gen_msg *m, size_t n)
{
	uint8_t *p = p4w_gen_room(m, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(0x41 + i % 26);
}

static void p4w_gen_end(struct p4w_gen_msg *m)
{
	m->hdr.length = (uint32_t)m->len;
	p4w_hdr_pack(m->buf, &m->hdr);
}

static void p4w_gen_write(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", p4w_gen_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Write one message, and append it to the all-types stream if asked. */
static void p4w_gen_emit(const char *name, const struct p4w_gen_msg *m,
			 int in_stream)
{
	p4w_gen_write(name, m->buf, m->len);
	if (!in_stream)
		return;
	memcpy(p4w_gen_stream + p4w_gen_stream_len, m->buf, m->len);
	p4w_gen_stream_len += m->len;
}

static void p4w_gen_req(struct p4w_gen_msg *m, uint8_t type,
			const struct p4w_req *req,
			const struct p4w_cookie *src,
			const struct p4w_cookie *dst, size_t plen)
{
	p4w_gen_begin(m, type);
	p4w_req_pack(p4w_gen_room(m, sizeof(*req)), req);
	if (src)
		p4w_cookie_pack(p4w_gen_room(m, sizeof(*src)), src);
	if (dst)
		p4w_cookie_pack(p4w_gen_room(m, sizeof(*dst)), dst);
	p4w_gen_bytes(m, plen);
	p4w_gen_end(m);
}

static struct p4w_req p4w_gen_req_make(uint64_t rlength, uint8_t op)
{
	struct p4w_req req = {
		.op_id = 0x100000001ULL,
		.match_bits = 0x1234,
		.hdr_data = 7,
		.rlength = rlength,
		.pt_index = 1,
		.ack_req = P4E_ACK_REQ,
		.atomic_op = op,
		.atomic_type = P4E_INT32,
		.proto = P4W_PROTO_EAGER,
	};

	return req;
}

static void p4w_gen_requests(void)
{
	struct p4w_cookie cookie = { .addr = 0x1000, .key = 3, .length = 64 };
	struct p4w_gen_msg m;
	struct p4w_req req;

	req = p4w_gen_req_make(8, 0);
	p4w_gen_req(&m, P4W_PUT, &req, NULL, NULL, 8);
	p4w_gen_emit("put", &m, 1);

	req = p4w_gen_req_make(64, 0);
	req.rflags = P4W_RF_PUSH;
	p4w_gen_req(&m, P4W_GET, &req, NULL, &cookie, 0);
	p4w_gen_emit("get_push", &m, 1);

	req = p4w_gen_req_make(8, P4E_SUM);
	p4w_gen_req(&m, P4W_ATOMIC, &req, NULL, NULL, 8);
	p4w_gen_emit("atomic_sum", &m, 1);

	req = p4w_gen_req_make(8, P4E_ATOMIC_READ);
	req.rflags = P4W_RF_PUSH;
	p4w_gen_req(&m, P4W_FETCH, &req, NULL, &cookie, 8);
	p4w_gen_emit("fetch_push", &m, 1);

	req = p4w_gen_req_make(4, P4E_CSWAP);
	p4w_gen_req(&m, P4W_SWAP, &req, NULL, NULL, 8);
	p4w_gen_emit("swap_cswap", &m, 1);

	req = p4w_gen_req_make(8, P4E_MSWAP);
	req.rflags = P4W_RF_PUSH;
	p4w_gen_req(&m, P4W_SWAP, &req, NULL, &cookie, 16);
	p4w_gen_emit("swap_mswap_push", &m, 0);

	req = p4w_gen_req_make(4, P4E_SWAP);
	p4w_gen_req(&m, P4W_SWAP, &req, NULL, NULL, 4);
	p4w_gen_emit("swap_plain", &m, 0);

	req = p4w_gen_req_make(64, 0);
	req.proto = P4W_PROTO_RDZV;
	p4w_gen_req(&m, P4W_PUT, &req, &cookie, NULL, 0);
	p4w_gen_emit("put_rdzv", &m, 0);

	req = p4w_gen_req_make(0, 0);
	p4w_gen_req(&m, P4W_PUT, &req, NULL, NULL, 0);
	p4w_gen_emit("put_empty", &m, 0);

	/* near miss: 2 * (2^63 + 8) wraps to the 16 bytes present */
	req = p4w_gen_req_make((1ULL << 63) + 8, P4E_CSWAP);
	p4w_gen_req(&m, P4W_SWAP, &req, NULL, NULL, 16);
	p4w_gen_emit("bad_swap_rlength_wrap", &m, 0);

	/* near miss: rendezvous on a GET */
	req = p4w_gen_req_make(64, 0);
	req.proto = P4W_PROTO_RDZV;
	p4w_gen_req(&m, P4W_GET, &req, &cookie, NULL, 0);
	p4w_gen_emit("bad_get_rdzv", &m, 0);
}

static void p4w_gen_responses(void)
{
	struct p4w_resp resp = {
		.op_id = 0x100000001ULL, .mlength = 8, .offset = 0,
		.fail = P4E_NI_OK, .list = P4E_PRIORITY_LIST,
	};
	struct p4w_gen_msg m;

	p4w_gen_begin(&m, P4W_ACK);
	p4w_resp_pack(p4w_gen_room(&m, sizeof(resp)), &resp);
	p4w_gen_end(&m);
	p4w_gen_emit("ack", &m, 1);

	resp.mlength = 5;
	p4w_gen_begin(&m, P4W_REPLY);
	p4w_resp_pack(p4w_gen_room(&m, sizeof(resp)), &resp);
	p4w_gen_bytes(&m, 5);
	p4w_gen_end(&m);
	p4w_gen_emit("reply", &m, 1);

	resp.mlength = 4096;
	resp.pushed = 1;
	resp.list = P4E_OVERFLOW_LIST;
	p4w_gen_begin(&m, P4W_REPLY);
	p4w_resp_pack(p4w_gen_room(&m, sizeof(resp)), &resp);
	p4w_gen_end(&m);
	p4w_gen_emit("reply_pushed", &m, 0);

	resp.fail = P4E_NI_PERM_VIOLATION;
	resp.mlength = 0;
	resp.pushed = 0;
	p4w_gen_begin(&m, P4W_ACK);
	p4w_resp_pack(p4w_gen_room(&m, sizeof(resp)), &resp);
	p4w_gen_end(&m);
	p4w_gen_emit("ack_fail", &m, 0);
}

static void p4w_gen_control(void)
{
	struct p4w_fc fc = { .seq = 5 };
	struct p4w_gen_msg m;

	p4w_gen_begin(&m, P4W_SEQ_ACK);
	p4w_gen_end(&m);
	p4w_gen_emit("seq_ack", &m, 1);

	p4w_gen_begin(&m, P4W_NACK);
	p4w_fc_pack(p4w_gen_room(&m, sizeof(fc)), &fc);
	p4w_gen_end(&m);
	p4w_gen_emit("nack", &m, 1);

	p4w_gen_begin(&m, P4W_RESUME);
	p4w_fc_pack(p4w_gen_room(&m, sizeof(fc)), &fc);
	p4w_gen_end(&m);
	p4w_gen_emit("resume", &m, 1);

	p4w_gen_begin(&m, P4W_T_BYE);
	p4w_gen_end(&m);
	p4w_gen_emit("bye", &m, 1);

	/* near miss: a future version */
	p4w_gen_begin(&m, P4W_SEQ_ACK);
	m.hdr.version = P4W_VERSION + 1;
	p4w_gen_end(&m);
	p4w_gen_emit("bad_version", &m, 0);
}

static void p4w_gen_transport(void)
{
	struct p4w_hello hello = {
		.magic = P4W_MAGIC, .version = P4W_VERSION, .addrlen = 16,
		.session = 0x5e5510, .auth_key = 1,
		.addr = { 2, 0, 0x1f, 0x90, 127, 0, 0, 1 },
	};
	struct p4w_pull_req pull = {
		.pull_id = 2, .offset = 0, .length = 64,
		.src = { .addr = 0x1000, .key = 3, .length = 64 },
	};
	struct p4w_data data = { .id = 2, .length = 6, .last = 1 };
	struct p4w_gen_msg m;

	p4w_gen_begin(&m, P4W_T_HELLO);
	p4w_hello_pack(p4w_gen_room(&m, sizeof(hello)), &hello);
	p4w_gen_end(&m);
	p4w_gen_emit("hello", &m, 1);

	hello.addrlen = P4W_ADDR_MAX;
	memset(hello.addr, 0xfe, sizeof(hello.addr));
	p4w_gen_begin(&m, P4W_T_HELLO_ACK);
	p4w_hello_pack(p4w_gen_room(&m, sizeof(hello)), &hello);
	p4w_gen_end(&m);
	p4w_gen_emit("hello_ack", &m, 1);

	p4w_gen_begin(&m, P4W_T_PULL_REQ);
	p4w_pull_req_pack(p4w_gen_room(&m, sizeof(pull)), &pull);
	p4w_gen_end(&m);
	p4w_gen_emit("pull_req", &m, 1);

	p4w_gen_begin(&m, P4W_T_PULL_DATA);
	p4w_data_pack(p4w_gen_room(&m, sizeof(data)), &data);
	p4w_gen_bytes(&m, 6);
	p4w_gen_end(&m);
	p4w_gen_emit("pull_data", &m, 1);

	data.length = 0;
	data.status = -FI_EIO;
	p4w_gen_begin(&m, P4W_T_PULL_DATA);
	p4w_data_pack(p4w_gen_room(&m, sizeof(data)), &data);
	p4w_gen_end(&m);
	p4w_gen_emit("pull_data_error", &m, 0);

	data = (struct p4w_data){
		.offset = 56, .length = 8, .last = 1,
		.dst = { .addr = 0x2000, .key = 4, .length = 64 },
	};
	p4w_gen_begin(&m, P4W_T_PUSH_DATA);
	p4w_data_pack(p4w_gen_room(&m, sizeof(data)), &data);
	p4w_gen_bytes(&m, 8);
	p4w_gen_end(&m);
	p4w_gen_emit("push_data", &m, 1);

	/* an offer: its announcement (no data), then the OFFER itself */
	data = (struct p4w_data){
		.length = 8, .last = 1,
		.dst = { .addr = 0, .key = 5, .length = 64 },
	};
	p4w_gen_begin(&m, P4W_T_OFFER_ANNOUNCE);
	p4w_data_pack(p4w_gen_room(&m, sizeof(data)), &data);
	p4w_gen_end(&m);
	p4w_gen_emit("offer_announce", &m, 1);
	p4w_gen_begin(&m, P4W_T_OFFER);
	p4w_data_pack(p4w_gen_room(&m, sizeof(data)), &data);
	p4w_gen_bytes(&m, 8);
	p4w_gen_end(&m);
	p4w_gen_emit("offer", &m, 1);

	/* a layered transport's record (verbs' bootstrap is 40 bytes) */
	p4w_gen_begin(&m, P4W_T_XPORT);
	p4w_gen_bytes(&m, 40);
	p4w_gen_end(&m);
	p4w_gen_emit("xport", &m, 1);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	p4w_gen_dir = argv[1];
	p4w_gen_requests();
	p4w_gen_responses();
	p4w_gen_control();
	p4w_gen_transport();

	p4w_gen_write("stream_all", p4w_gen_stream, p4w_gen_stream_len);
	/* the same stream with its last message cut short */
	p4w_gen_write("stream_cut", p4w_gen_stream, p4w_gen_stream_len - 3);
	return 0;
}
