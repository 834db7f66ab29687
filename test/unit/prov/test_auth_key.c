/*
 * test_auth_key.c - auth_key (domain and endpoint attribute) through the
 * real libfabric on the loop transport: endpoints with the same key talk,
 * an endpoint with another key (its own ep_attr key, or none against a
 * keyed domain) is refused at connection set-up and the send fails with
 * an error completion, nothing delivered. The TCP transport's handshake
 * check is covered in test/unit/engine/test_tcp_fail.c.
 */
#include "p4f_test.h"

#include <rdma/fi_tagged.h>

static struct test_env env;

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	char name[64];
	size_t namelen;
};

static void key_fill(uint8_t *key, uint8_t seed)
{
	int i;

	for (i = 0; i < 8; i++)
		key[i] = (uint8_t)(seed + i);
}

static void setup(void)
{
	struct fi_info *hints = test_hints();

	setenv("FI_PORTALS_TRANSPORT", "loop", 1);
	hints->caps = FI_TAGGED;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->auth_key = malloc(8);
	key_fill(hints->domain_attr->auth_key, 1);
	hints->domain_attr->auth_key_size = 8;
	test_env_open(&env, hints);
}

static void teardown(void)
{
	test_env_close(&env);
}

TestSuite(auth_key, .init = setup, .fini = teardown, .timeout = 60);

/* An endpoint; ep_key_seed 0: no key of its own (the domain's). */
static void side_open(struct side *s, uint8_t ep_key_seed)
{
	struct fi_info *info = fi_dupinfo(env.info);
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };

	cr_assert_not_null(info);
	if (ep_key_seed) {
		free(info->ep_attr->auth_key);
		info->ep_attr->auth_key = malloc(8);
		key_fill(info->ep_attr->auth_key, ep_key_seed);
		info->ep_attr->auth_key_size = 8;
	}
	cr_assert_eq(fi_endpoint(env.domain, info, &s->ep, NULL), 0);
	fi_freeinfo(info);
	cr_assert_eq(fi_cq_open(env.domain, &ca, &s->cq, NULL), 0);
	cr_assert_eq(fi_av_open(env.domain, &aa, &s->av, NULL), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	cr_assert_eq(fi_enable(s->ep), 0);
	s->namelen = sizeof(s->name);
	cr_assert_eq(fi_getname(&s->ep->fid, s->name, &s->namelen), 0);
}

static void side_close(struct side *s)
{
	cr_expect_eq(fi_close(&s->ep->fid), 0);
	cr_expect_eq(fi_close(&s->cq->fid), 0);
	cr_expect_eq(fi_close(&s->av->fid), 0);
}

/* Send a tagged message from a to b; 1: delivered, 0: refused. */
static int try_send(struct side *a, struct side *b)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char src[8] = "key", dst[8] = { 0 };
	fi_addr_t peer = FI_ADDR_UNSPEC;
	ssize_t ret = -FI_EAGAIN;
	long i;
	struct iovec iov = { .iov_base = src, .iov_len = sizeof(src) };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = peer, .tag = 1,
	};

	cr_assert_eq(fi_av_insert(a->av, b->name, 1, &peer, 0, NULL), 1);
	msg.addr = peer;
	cr_assert_eq(fi_trecv(b->ep, dst, sizeof(dst), NULL, FI_ADDR_UNSPEC,
			      1, 0, NULL), 0);
	/* completes when the target accepted it: a refusal shows */
	cr_assert_eq(fi_tsendmsg(a->ep, &msg, FI_TRANSMIT_COMPLETE), 0);
	for (i = 0; i < 1000000 && ret == -FI_EAGAIN; i++) {
		ret = fi_cq_read(a->cq, &e, 1);
		fi_cq_read(b->cq, NULL, 0);
	}
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		cr_assert_eq(fi_cq_readerr(a->cq, &err, 0), 1);
		cr_expect_neq(err.err, 0);
		for (i = 0; i < 1000; i++)
			cr_assert_eq(fi_cq_read(b->cq, &e, 1), -FI_EAGAIN,
				     "nothing delivered");
		cr_expect_str_eq(dst, "");
		/* take the receive back (its cancel entry too) */
		cr_expect_eq(fi_cancel(&b->ep->fid, NULL), 0);
		cr_expect_eq(fi_cq_read(b->cq, &e, 1), -FI_EAVAIL);
		cr_assert_eq(fi_cq_readerr(b->cq, &err, 0), 1);
		cr_expect_eq(err.err, FI_ECANCELED);
		return 0;
	}
	cr_assert_eq(ret, 1, "send completion");
	for (i = 0; i < 1000000; i++) {
		ret = fi_cq_read(b->cq, &e, 1);
		if (ret != -FI_EAGAIN)
			break;
	}
	cr_assert_eq(ret, 1);
	cr_expect_str_eq(dst, "key");
	return 1;
}

Test(auth_key, same_domain_key_talks)
{
	struct side a, b;

	side_open(&a, 0);
	side_open(&b, 0);
	cr_expect_eq(try_send(&a, &b), 1);
	side_close(&a);
	side_close(&b);
}

Test(auth_key, endpoint_key_overrides_and_must_match)
{
	struct side a, b, c;

	side_open(&a, 0);	/* the domain's key (seed 1) */
	side_open(&b, 9);	/* another key */
	side_open(&c, 1);	/* the domain's key given on the endpoint */
	cr_expect_eq(try_send(&a, &b), 0, "another key is refused");
	cr_expect_eq(try_send(&b, &a), 0, "both ways");
	cr_expect_eq(try_send(&a, &c), 1, "the same key talks");
	side_close(&a);
	side_close(&b);
	side_close(&c);
}

Test(auth_key, bad_key_size_refused_at_open)
{
	struct fi_info *info = fi_dupinfo(env.info);
	struct fid_ep *ep;

	free(info->ep_attr->auth_key);
	info->ep_attr->auth_key = calloc(1, 3);
	info->ep_attr->auth_key_size = 3;
	cr_expect_neq(fi_endpoint(env.domain, info, &ep, NULL), 0);
	fi_freeinfo(info);
}
