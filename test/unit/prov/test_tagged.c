/*
 * test_tagged.c - fi_tagged and fi_msg through the real libfabric between
 * two endpoints (loop transport): expected and unexpected, eager and
 * rendezvous sizes, CQ entry contents, remote CQ data, FI_SOURCE, ignore
 * masks, directed receives, truncation, peek / claim / discard, cancel,
 * inject, iovecs, counters, selective completion, completion levels,
 * multi-receive buffers and resource limits.
 */
#include "p4f_pair.h"

#include <rdma/fi_tagged.h>

static struct pair p;

#define CAPS (FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_SOURCE | \
	      FI_MULTI_RECV)

static void setup(void)
{
	pair_open(&p, CAPS, 0);
}

static void teardown(void)
{
	pair_close(&p);
}

TestSuite(tagged, .init = setup, .fini = teardown, .timeout = 60);

static void fill(char *buf, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (char)(i * 31 + seed);
}

/* One tagged message of n bytes, the receive posted before or after. */
static void one_message(size_t n, bool unexpected)
{
	char *src = malloc(n + 1), *dst = calloc(1, n + 1);
	struct fi_cq_tagged_entry e;
	int ctx_tx, ctx_rx;

	fill(src, n, (int)n);
	if (!unexpected)
		cr_assert_eq(fi_trecv(p.s[1].ep, dst, n, NULL, FI_ADDR_UNSPEC,
				      0x1234, 0, &ctx_rx), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, src, n, NULL, p.s[0].peer, 0x1234,
			      &ctx_tx), 0);
	if (unexpected) {
		/* let it arrive first */
		pair_quiet(&p, 1);
		cr_assert_eq(fi_trecv(p.s[1].ep, dst, n, NULL, FI_ADDR_UNSPEC,
				      0x1234, 0, &ctx_rx), 0);
	}
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &ctx_rx);
	cr_expect_eq(e.flags, FI_RECV | FI_TAGGED);
	cr_expect_eq(e.len, n);
	cr_expect_eq(e.tag, 0x1234);
	cr_expect_eq(e.buf, dst);
	cr_expect_eq(memcmp(src, dst, n), 0, "data of %zu bytes", n);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, &ctx_tx);
	cr_expect_eq(e.flags, FI_SEND | FI_TAGGED);
	free(src);
	free(dst);
}

Test(tagged, expected_sizes)
{
	size_t sizes[] = { 0, 1, 8, 4096, 16384, 16385, 1 << 20 }, i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_message(sizes[i], false);
}

Test(tagged, unexpected_sizes)
{
	size_t sizes[] = { 0, 1, 8, 4096, 16384, 16385, 1 << 20 }, i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_message(sizes[i], true);
}

Test(tagged, order_kept_across_sizes)
{
	size_t sizes[] = { 8, 1 << 18, 64, 20000, 1 }, i, k;
	char *bufs[5], *src[5];
	struct fi_cq_tagged_entry e;

	for (i = 0; i < 5; i++) {
		src[i] = malloc(sizes[i]);
		bufs[i] = calloc(1, sizes[i]);
		fill(src[i], sizes[i], (int)i);
		cr_assert_eq(fi_tsend(p.s[0].ep, src[i], sizes[i], NULL,
				      p.s[0].peer, 7, NULL), 0);
	}
	/* same tag: they must match in send order */
	for (i = 0; i < 5; i++)
		cr_assert_eq(fi_trecv(p.s[1].ep, bufs[i], 1 << 18, NULL,
				      FI_ADDR_UNSPEC, 7, 0, bufs[i]), 0);
	for (k = 0; k < 5; k++) {
		cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
		i = 0;
		while (bufs[i] != e.op_context)
			i++;
		cr_expect_eq(e.len, sizes[i], "message %zu matched receive %zu",
			     k, i);
		cr_expect_eq(memcmp(bufs[i], src[i], sizes[i]), 0);
	}
	for (i = 0; i < 5; i++) {
		cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
		free(src[i]);
		free(bufs[i]);
	}
}

Test(tagged, ignore_mask_and_tag_selection)
{
	uint64_t got = 0;
	struct fi_cq_tagged_entry e;
	int i;

	cr_assert_eq(fi_tsend(p.s[0].ep, "a", 1, NULL, p.s[0].peer, 0x100,
			      NULL), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, "b", 1, NULL, p.s[0].peer, 0x2ff,
			      NULL), 0);
	/* tag 0x2xx only: takes the second although the first came first */
	cr_assert_eq(fi_trecv(p.s[1].ep, &got, 1, NULL, FI_ADDR_UNSPEC, 0x200,
			      0xff, &got), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.tag, 0x2ff);
	cr_expect_eq(((char *)&got)[0], 'b');
	for (i = 0; i < 2; i++)
		cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

Test(tagged, remote_cq_data_and_source)
{
	char buf[16] = { 0 };
	struct fi_cq_tagged_entry e;
	fi_addr_t src;

	cr_assert_eq(fi_trecv(p.s[1].ep, buf, sizeof(buf), NULL,
			      FI_ADDR_UNSPEC, 5, 0, NULL), 0);
	cr_assert_eq(fi_tsenddata(p.s[0].ep, "hello", 6, NULL,
				  0xdeadbeefcafeULL, p.s[0].peer, 5, NULL),
		     0);
	for (;;) {
		ssize_t r = fi_cq_readfrom(p.s[1].cq, &e, 1, &src);

		if (r == 1)
			break;
		cr_assert_eq(r, -FI_EAGAIN);
		fi_cq_read(p.s[0].cq, NULL, 0);
	}
	cr_expect_eq(e.flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
	cr_expect_eq(e.data, 0xdeadbeefcafeULL);
	cr_expect_eq(src, p.s[1].peer, "FI_SOURCE names the sender");
	cr_expect_str_eq(buf, "hello");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	/* the data is the target's news: the send completion says only
	 * what completed (as tcp;ofi_rxm reports it) */
	cr_expect_eq(e.flags, FI_SEND | FI_TAGGED);
}

Test(tagged, no_data_flag_without_data)
{
	char buf[4];
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_trecv(p.s[1].ep, buf, 4, NULL, FI_ADDR_UNSPEC, 5, 0,
			      NULL), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, "abc", 4, NULL, p.s[0].peer, 5,
			      NULL), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.flags & FI_REMOTE_CQ_DATA, 0);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

Test(tagged, directed_receive)
{
	char a = 0, b = 0;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	/* from ourselves (side 1 sends to itself) and from side 0 */
	cr_assert_eq(fi_trecv(p.s[1].ep, &a, 1, NULL, p.s[1].peer, 9, 0, &a),
		     0);
	cr_assert_eq(fi_tsend(p.s[1].ep, "s", 1, NULL, p.s[1].self, 9, NULL),
		     0);
	pair_quiet(&p, 0);
	/* our own message must not match the receive directed at side 0 */
	cr_assert_eq(pair_read(&p, 1, &e, &err), 1);
	cr_expect_eq(e.op_context, NULL, "only the send completed");
	cr_assert_eq(fi_tsend(p.s[0].ep, "o", 1, NULL, p.s[0].peer, 9, NULL),
		     0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.op_context, &a);
	cr_expect_eq(a, 'o');
	cr_assert_eq(fi_trecv(p.s[1].ep, &b, 1, NULL, FI_ADDR_UNSPEC, 9, 0,
			      &b), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(b, 's');
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

static void truncation(size_t n)
{
	char *src = calloc(1, n), small[64];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	cr_assert_eq(fi_trecv(p.s[1].ep, small, sizeof(small), NULL,
			      FI_ADDR_UNSPEC, 3, 0, small), 0);
	cr_assert_eq(fi_tsend(p.s[0].ep, src, n, NULL, p.s[0].peer, 3, NULL),
		     0);
	cr_assert_eq(pair_read(&p, 1, &e, &err), -FI_EAVAIL);
	cr_expect_eq(err.err, FI_ETRUNC);
	cr_expect_eq(err.op_context, small);
	cr_expect_eq(err.len, sizeof(small));
	cr_expect_eq(err.olen, n - sizeof(small));
	cr_expect_eq(err.tag, 3);
	cr_expect_eq(fi_cntr_readerr(p.s[1].rx_cntr), 1,
		     "a truncated receive counts as an error");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1, "the send succeeds");
	free(src);
}

Test(tagged, truncation_eager)
{
	truncation(1000);
}

Test(tagged, truncation_rendezvous)
{
	truncation(100000);
}

Test(tagged, peek_claim_discard)
{
	struct fi_context ctx;
	struct fi_msg_tagged msg = { .addr = FI_ADDR_UNSPEC };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char buf[32] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	int i;

	msg.context = &ctx;
	msg.tag = 0xbad;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_PEEK), 0);
	cr_assert_eq(pair_read(&p, 1, &e, &err), -FI_EAVAIL);
	cr_expect_eq(err.err, FI_ENOMSG);

	for (i = 0; i < 3; i++)
		cr_assert_eq(fi_tsend(p.s[0].ep, "peek", 5, NULL, p.s[0].peer,
				      0x900 + i, NULL), 0);
	pair_quiet(&p, 1);
	/* plain peek: found, left in place */
	msg.tag = 0x900;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_PEEK), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.len, 5);
	cr_expect_eq(e.tag, 0x900);
	/* peek + claim, then the claimed receive */
	msg.tag = 0x901;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_PEEK | FI_CLAIM), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.flags, FI_RECV | FI_TAGGED, "no FI_CLAIM in a CQ entry");
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_CLAIM), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.flags, FI_RECV | FI_TAGGED);
	cr_expect_str_eq(buf, "peek");
	cr_expect_eq(e.tag, 0x901);
	/* a claimed message no longer matches ordinary receives */
	msg.msg_iov = NULL;
	msg.iov_count = 0;
	msg.tag = 0x902;
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_PEEK | FI_DISCARD), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_assert_eq(fi_trecvmsg(p.s[1].ep, &msg, FI_PEEK), 0);
	cr_assert_eq(pair_read(&p, 1, &e, &err), -FI_EAVAIL,
		     "discarded: gone");
	cr_expect_eq(err.err, FI_ENOMSG);
	/* the first message is still there for a normal receive */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(fi_trecv(p.s[1].ep, buf, sizeof(buf), NULL,
			      FI_ADDR_UNSPEC, 0x900, 0, NULL), 0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_str_eq(buf, "peek");
	for (i = 0; i < 3; i++)
		cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

Test(tagged, cancel_receive)
{
	char buf[8];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	cr_assert_eq(fi_trecv(p.s[1].ep, buf, 8, NULL, FI_ADDR_UNSPEC, 77, 0,
			      buf), 0);
	cr_assert_eq(fi_cancel(&p.s[1].ep->fid, buf), 0);
	cr_assert_eq(pair_read(&p, 1, &e, &err), -FI_EAVAIL);
	cr_expect_eq(err.err, FI_ECANCELED);
	cr_expect_eq(err.op_context, buf);
	cr_expect_eq(fi_cancel(&p.s[1].ep->fid, buf), -FI_ENOENT);
	/* a message for it now waits as unexpected */
	cr_assert_eq(fi_tsend(p.s[0].ep, "x", 1, NULL, p.s[0].peer, 77, NULL),
		     0);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	pair_quiet(&p, 1);
}

Test(tagged, inject_has_no_completion_but_counts)
{
	char buf[64] = "inject me", dst[64] = { 0 };
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_trecv(p.s[1].ep, dst, 64, NULL, FI_ADDR_UNSPEC, 1, 0,
			      NULL), 0);
	cr_assert_eq(fi_tinject(p.s[0].ep, buf, 64, p.s[0].peer, 1), 0);
	memset(buf, 0, sizeof(buf));	/* reusable at once */
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_str_eq(dst, "inject me");
	pair_quiet(&p, 0);
	cr_expect_eq(fi_cntr_read(p.s[0].tx_cntr), 1);
	cr_expect_eq(fi_cntr_read(p.s[1].rx_cntr), 1);
	cr_expect_eq(fi_tinject(p.s[0].ep, buf, 1 << 20, p.s[0].peer, 1),
		     -FI_EINVAL, "above inject_size");
}

/* FI_INJECT as a flag (fi_tsendmsg, or in the op_flags) frees the buffer
 * at once but, unlike fi_tinject, still completes (fi_msg(3); fabtests'
 * fi_msg_inject -A inject waits for that completion). */
Test(tagged, inject_flag_still_completes)
{
	char buf[16] = "flagged", dst[2][16];
	struct iovec iov = { buf, 8 };
	struct fi_msg_tagged msg = { .msg_iov = &iov, .iov_count = 1,
				     .addr = p.s[0].peer, .tag = 3,
				     .context = buf };
	struct fi_cq_tagged_entry e;
	uint64_t flags = FI_TRANSMIT | FI_INJECT;

	cr_assert_eq(fi_trecv(p.s[1].ep, dst[0], 16, NULL, FI_ADDR_UNSPEC, 3, 0,
			      NULL), 0);
	cr_assert_eq(fi_trecv(p.s[1].ep, dst[1], 16, NULL, FI_ADDR_UNSPEC, 3, 0,
			      NULL), 0);
	cr_assert_eq(fi_tsendmsg(p.s[0].ep, &msg, FI_INJECT | FI_COMPLETION),
		     0);
	memset(buf, 0, sizeof(buf));	/* reusable at once */
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, buf);
	cr_expect_eq(e.flags, FI_SEND | FI_TAGGED);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_str_eq(dst[0], "flagged");

	cr_assert_eq(fi_control(&p.s[0].ep->fid, FI_SETOPSFLAG, &flags), 0);
	memcpy(buf, "opflags", 8);
	cr_assert_eq(fi_tsend(p.s[0].ep, buf, 8, NULL, p.s[0].peer, 3, dst),
		     0);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.op_context, dst);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_str_eq(dst[1], "opflags");
	pair_quiet(&p, 0);
}

Test(tagged, iovecs_both_sides)
{
	char a[3] = "ab", b[5] = "cdef", c[7] = "ghijkl";
	char x[4] = { 0 }, y[6] = { 0 }, z[8] = { 0 };
	struct iovec siov[3] = { { a, 2 }, { b, 4 }, { c, 6 } };
	struct iovec riov[3] = { { x, 3 }, { y, 5 }, { z, 7 } };
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_trecvv(p.s[1].ep, riov, NULL, 3, FI_ADDR_UNSPEC, 4, 0,
			       NULL), 0);
	cr_assert_eq(fi_tsendv(p.s[0].ep, siov, NULL, 3, p.s[0].peer, 4, NULL),
		     0);
	/* the arrays are ours again at once */
	memset(siov, 0, sizeof(siov));
	memset(riov, 0, sizeof(riov));
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.len, 12);
	cr_expect_str_eq(x, "abc");
	cr_expect_str_eq(y, "defgh");
	cr_expect_eq(memcmp(z, "ijkl", 4), 0);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

Test(tagged, transmit_complete_level)
{
	struct fi_msg_tagged msg = { .addr = p.s[0].peer, .tag = 6 };
	char big[20000] = { 1 }, dst[20000];
	struct iovec iov = { big, sizeof(big) };
	struct fi_cq_tagged_entry e;

	msg.msg_iov = &iov;
	msg.iov_count = 1;
	cr_assert_eq(fi_tsendmsg(p.s[0].ep, &msg,
				 FI_DELIVERY_COMPLETE | FI_COMPLETION), 0);
	cr_assert_eq(fi_trecv(p.s[1].ep, dst, sizeof(dst), NULL,
			      FI_ADDR_UNSPEC, 6, 0, NULL), 0);
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
}

Test(tagged, untagged_messages)
{
	char dst[16] = { 0 };
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_recv(p.s[1].ep, dst, sizeof(dst), NULL,
			     FI_ADDR_UNSPEC, dst), 0);
	cr_assert_eq(fi_send(p.s[0].ep, "untagged", 9, NULL, p.s[0].peer, NULL),
		     0);
	cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
	cr_expect_eq(e.flags, FI_RECV | FI_MSG);
	cr_expect_str_eq(dst, "untagged");
	cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
	cr_expect_eq(e.flags, FI_SEND | FI_MSG);
}

Test(tagged, multi_recv_buffer)
{
	char buf[256], fifty[50];
	size_t min = 100;
	struct fi_msg msg = { .addr = FI_ADDR_UNSPEC, .context = buf };
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_cq_tagged_entry e;
	int i, released = 0, placed = 0;
	size_t off = 0;

	cr_assert_eq(fi_setopt(&p.s[1].ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)), 0);
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	/* one unexpected before the buffer is posted */
	cr_assert_eq(fi_send(p.s[0].ep, "0123456789", 10, NULL, p.s[0].peer,
			     NULL), 0);
	pair_quiet(&p, 1);
	cr_assert_eq(fi_recvmsg(p.s[1].ep, &msg, FI_MULTI_RECV), 0);
	memset(fifty, 'x', sizeof(fifty));
	for (i = 1; i < 4; i++)
		cr_assert_eq(fi_send(p.s[0].ep, fifty, sizeof(fifty), NULL,
				     p.s[0].peer, NULL), 0);
	while (!released) {
		cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
		if (e.flags & FI_MULTI_RECV) {
			released = 1;
			cr_expect_eq(e.op_context, buf);
			/* a release of its own reports no message: FI_RECV
			 * would tell the reader len and buf are a message's
			 * (fi_cq(3); fabtests' multi_recv checks it) */
			cr_expect_eq(e.flags, FI_MULTI_RECV);
			cr_expect_eq(e.len, 0);
			continue;
		}
		cr_expect_eq(e.buf, buf + off, "placed one after another");
		off += e.len;
		placed++;
	}
	cr_expect_eq(placed, 4, "10 + 3 * 50 bytes, then < 100 left");
	for (i = 0; i < 4; i++)
		cr_assert_eq(pair_read(&p, 0, &e, NULL), 1);
}

Test(tagged, posted_receives_bounded)
{
	static char buf[8];
	ssize_t ret = 0;
	long n;

	/* rx_size receives fit; the next one is -FI_EAGAIN, not a crash */
	for (n = 0; n < 10000000 && !ret; n++)
		ret = fi_trecv(p.s[1].ep, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
			       NULL);
	cr_expect_eq(ret, -FI_EAGAIN);
	cr_expect_eq(n - 1, (long)p.env.info->rx_attr->size);
}

Test(tagged, many_unexpected_then_receives)
{
	enum { N = 2000, SZ = 8000 };
	static char out[N][SZ];
	static uint32_t in[N];
	struct fi_cq_tagged_entry e;
	uint32_t i;
	ssize_t ret;

	/* more eager data than the overflow buffers hold: flow control
	 * holds the sender, nothing is lost, order is kept. Each send has
	 * its own buffer: it is the sender's until its completion. */
	for (i = 0; i < N; i++) {
		char *big = out[i];

		memcpy(big, &i, 4);
		do {
			ret = fi_tsend(p.s[0].ep, big, SZ, NULL,
				       p.s[0].peer, 11, NULL);
			if (ret == -FI_EAGAIN)
				fi_cq_read(p.s[0].cq, &e, 1);
		} while (ret == -FI_EAGAIN);
		cr_assert_eq(ret, 0);
	}
	for (i = 0; i < N; i++) {
		char big[SZ];

		cr_assert_eq(fi_trecv(p.s[1].ep, big, sizeof(big), NULL,
				      FI_ADDR_UNSPEC, 11, 0, NULL), 0);
		cr_assert_eq(pair_read(&p, 1, &e, NULL), 1);
		memcpy(&in[i], big, 4);
		cr_assert_eq(in[i], i, "message %u arrived as %u", i, in[i]);
	}
}
