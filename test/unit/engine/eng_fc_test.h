/*
 * eng_fc_test.h - the fixture of the flow-control tests (test_eng_fc.c,
 * test_eng_fc_resend.c, test_eng_fc_ack.c, test_eng_fc_keeper.c): nodes
 * a, b, c of one domain, message slots with checkable data, floods of
 * puts from a to b, receives for them, and the checks that every message
 * arrived once, in order, with its data; skipping off the loop transport,
 * failing a link through its hook, and checking that a new op still works
 * after a failure.
 *
 * Not here: the tests' own message lengths (each file has those it
 * needs) and the set-ups of one kind of test.
 */
#ifndef ENG_FC_TEST_H
#define ENG_FC_TEST_H

#include "p4e_test.h"
#include "p4e_priv.h"

#define SSLOT	8192		/* per-message slots in src / rbuf */
#define NMAX	48

static struct p4e_dom *dom;
static struct eng_node na, nb, nc;
static uint8_t src[NMAX * SSLOT], rbuf[NMAX * SSLOT], obuf[1 << 16];

/* What the tests saw, zeroed for each test (helpers zero them again). */
static struct eng_rxlog rx;
static struct eng_txlog tx;

static inline void logs_reset(void)
{
	memset(&rx, 0, sizeof(rx));
	memset(&tx, 0, sizeof(tx));
}

static inline void setup(void)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	cr_assert_eq(p4e_dom_create(NULL, &dom), 0);
	eng_node_open(&na, dom, &attr, 0, 1024);
	logs_reset();
	memset(rbuf, 0, sizeof(rbuf));
}

static inline void teardown(void)
{
	eng_node_close(&nc);
	eng_node_close(&nb);
	eng_node_close(&na);
	cr_expect_eq(p4e_dom_destroy(dom), 0);
}

/* ---- helpers ------------------------------------------------------------ */

static inline void open_node(struct eng_node *n, uint32_t max_uh,
			     uint32_t max_ops, unsigned pt_options,
			     size_t eq_size)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	attr.desired.max_unexpected_headers = max_uh;
	attr.desired.max_ops = max_ops;
	eng_node_open(n, dom, &attr, pt_options, eq_size);
}

static inline void progress(void)
{
	eng_progress_doms(&dom, 1);
}

static inline uint64_t md_bind(struct eng_node *n, void *buf, size_t len,
			       uint64_t ct, unsigned options)
{
	struct p4e_md_desc d = { .start = buf, .length = len, .eq = n->eq,
				 .ct = ct, .options = options };
	uint64_t md;

	cr_assert_eq(p4e_md_bind(n->ni, &d, &md), 0);
	return md;
}

static inline uint64_t append(struct eng_node *n, void *buf, size_t len,
			      unsigned options, uint64_t bits, uint64_t ignore,
			      enum p4e_list list, uint64_t min_free,
			      void *user_ptr)
{
	struct p4e_me_desc d = eng_me_desc(buf, len, options, bits, ignore);
	uint64_t me;

	d.min_free = min_free;
	cr_assert_eq(p4e_me_append(n->ni, n->pt, &d, list, user_ptr, 0, &me),
		     0);
	return me;
}

static inline struct p4e_xfer xfer_to(struct eng_node *to, uint64_t md,
				      size_t len, uint64_t bits,
				      enum p4e_ack_req ack)
{
	struct p4e_xfer x;

	memset(&x, 0, sizeof(x));
	x.md = md;
	x.length = len;
	x.ack_req = ack;
	x.target = eng_peer_of(dom, to->ni);
	x.pt_index = to->pt;
	x.match_bits = bits;
	return x;
}

/* Message i (user_ptr and hdr_data i, from src slot i) to b, bits 0x5. */
static inline void put_msg(struct eng_node *from, uint64_t md, int i,
			   size_t len, enum p4e_ack_req ack)
{
	struct p4e_xfer x = xfer_to(&nb, md, len, 0x5, ack);

	x.local_offset = (uint64_t)i * SSLOT;
	x.hdr_data = i;
	x.user_ptr = (void *)(intptr_t)i;
	cr_assert_eq(p4e_put(from->ni, &x), 0);
}

static inline void fill_msg(int i, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		src[i * SSLOT + k] = (uint8_t)(i * 31 + k * 7 + 1);
	memcpy(src + i * SSLOT, &i, sizeof(i));
}

static inline int64_t status_of(struct eng_node *n, enum p4e_sr_index idx)
{
	int64_t v;

	cr_assert_eq(p4e_ni_status(n->ni, idx, &v), 0);
	return v;
}

/* n puts of len bytes from a to b, ACK_REQ, message i = user_ptr i. */
static inline void flood(int first, int n, size_t len, uint64_t md)
{
	int i;

	for (i = first; i < first + n; i++) {
		fill_msg(i, len);
		put_msg(&na, md, i, len, P4E_ACK_REQ);
	}
}

/* Receives for messages first.. (use-once, data copied in). */
static inline void post_receives(int first, int n, size_t len)
{
	int i;

	for (i = first; i < first + n; i++)
		append(&nb, rbuf + i * SSLOT, len, P4E_ME_OP_PUT |
		       P4E_ME_USE_ONCE | P4E_ME_UH_COPY, 0x5, 0,
		       P4E_PRIORITY_LIST, 0, (void *)(intptr_t)i);
}

static inline void expect_data(int first, int n, size_t len)
{
	for (; n--; first++)
		cr_expect_eq(memcmp(rbuf + first * SSLOT, src + first * SSLOT,
				    len), 0, "message %d: wrong data", first);
}

static inline void flood_mixed(struct eng_node *from, uint64_t md, int first,
			       int n, size_t (*len)(int), enum p4e_ack_req ack)
{
	int i;

	for (i = first; i < first + n; i++) {
		fill_msg(i, len(i));
		put_msg(from, md, i, len(i), ack);
	}
}

static inline void loop_only(void)
{
	if (!eng_is_loop())
		cr_skip_test("needs the loop transport's hooks");
}

static inline void addr_of(struct eng_node *n, char *addr, size_t *len)
{
	*len = 64;
	cr_assert_eq(p4e_ni_getname(n->ni, addr, len), 0);
}

/* Fail from's link to to, as a network fault would. */
static inline void fail_link(struct eng_node *from, struct eng_node *to)
{
	char addr[64];
	size_t len;

	addr_of(to, addr, &len);
	cr_assert_eq(p4t_loop_fail_link(from->ni->xp[P4E_XP_NET].iface, addr, len,
					-FI_ECONNRESET), 0);
}

/* A new op from a to b (looked up again) works. */
static inline void expect_new_op_fine(void)
{
	struct p4e_xfer x;
	uint64_t md;

	append(&nb, obuf + 1024, 64, P4E_ME_OP_PUT, 0x77, 0, P4E_PRIORITY_LIST,
	       0, NULL);
	md = md_bind(&na, src, 64, P4E_HANDLE_NONE, 0);
	x = xfer_to(&nb, md, 16, 0x77, P4E_ACK_REQ);
	x.user_ptr = (void *)5;
	cr_assert_eq(p4e_put(na.ni, &x), 0);
	progress();
	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[5][P4E_NI_OK], 1, "new op after the failure");
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* Every message exactly once, in order, with its data; every op acked. */
static inline void expect_all(int n, size_t (*len)(int),
			      struct eng_rxlog *rx, struct eng_txlog *tx,
			      enum p4e_ack_req ack)
{
	int i;

	for (i = 0; i < n; i++) {
		cr_expect_eq(rx->got[i], 1, "message %d delivered %d times", i,
			     rx->got[i]);
		cr_expect_eq(memcmp(rbuf + i * SSLOT, src + i * SSLOT, len(i)),
			     0, "message %d: wrong data", i);
		if (ack != P4E_NO_ACK_REQ)
			cr_expect_eq(tx->ack[i][P4E_NI_OK], 1,
				     "op %d acked %d times", i,
				     tx->ack[i][P4E_NI_OK]);
		cr_expect_eq(tx->send[i][P4E_NI_OK], 1);
	}
	cr_expect_eq(rx->delivered, n);
	cr_expect_eq(rx->errors, 0);
	cr_expect_not(rx->dropped);
}

#endif
