/*
 * test_wire_parse.c - the request parse rules of the wire protocol
 * (p4w_req_parse in p4e_wire.c): atomic operations and types, compare
 * operands only in SWAP, rendezvous only for PUT, push only where there is
 * a reply, payloads of exactly rlength, cookies present and covering
 * rlength, the wrong message type, header lengths not from hdr_unpack,
 * and 64-bit rlengths whose sums or doubles would wrap naive arithmetic.
 * One test per rule; each passes the bad message if its check is removed.
 *
 * Not here: the header, request and response bodies (test_wire.c), the
 * transport messages (test_wire_xport.c). Message builders: p4w_test.h.
 */
#include "p4w_test.h"

TestSuite(wire, .init = wire_setup, .fini = wire_teardown, .timeout = 60);

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
