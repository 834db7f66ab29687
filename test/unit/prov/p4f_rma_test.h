/*
 * p4f_rma_test.h - the two-endpoint fixture of p4f_pair.h set up for
 * one-sided tests: FI_RMA | FI_ATOMIC with a chosen mr_mode, the tx
 * counter bound to FI_SEND | FI_WRITE | FI_READ and the rx counter to
 * FI_RECV | FI_REMOTE_WRITE | FI_REMOTE_READ, and helpers to register
 * memory and wait for completions and counters.
 */
#ifndef P4F_RMA_TEST_H
#define P4F_RMA_TEST_H

#include "p4f_pair.h"

#define RP_CAPS (FI_MSG | FI_RMA | FI_ATOMIC | FI_RMA_EVENT)

static inline void rpair_open(struct pair *p, int mr_mode, uint64_t cq_flags)
{
	struct fi_info *hints = test_hints();
	char name[2][64];
	size_t len[2];
	int i;

	setenv("FI_PORTALS_TRANSPORT", "loop", 1);
	memset(p, 0, sizeof(*p));
	hints->caps = RP_CAPS;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = mr_mode;
	/* fi_getinfo asks for none of them: the application chooses */
	test_env_open_mr(&p->env, hints, mr_mode);
	cr_assert_eq(p->env.info->domain_attr->mr_mode & ~FI_MR_ALLOCATED,
		     mr_mode & ~FI_MR_ALLOCATED, "mr_mode %#x",
		     p->env.info->domain_attr->mr_mode);
	for (i = 0; i < 2; i++) {
		struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA,
					 .wait_obj = FI_WAIT_UNSPEC };
		struct fi_av_attr aa = { .type = FI_AV_TABLE };
		struct fi_cntr_attr cta = { .events = FI_CNTR_EVENTS_COMP,
					    .wait_obj = FI_WAIT_UNSPEC };
		struct pair_side *s = &p->s[i];

		cr_assert_eq(fi_endpoint(p->env.domain, p->env.info, &s->ep,
					 NULL), 0);
		cr_assert_eq(fi_cq_open(p->env.domain, &ca, &s->cq, NULL), 0);
		cr_assert_eq(fi_av_open(p->env.domain, &aa, &s->av, NULL), 0);
		cr_assert_eq(fi_cntr_open(p->env.domain, &cta, &s->tx_cntr,
					  NULL), 0);
		cr_assert_eq(fi_cntr_open(p->env.domain, &cta, &s->rx_cntr,
					  NULL), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid,
					FI_TRANSMIT | FI_RECV | cq_flags), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->tx_cntr->fid,
					FI_SEND | FI_WRITE | FI_READ), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->rx_cntr->fid,
					FI_RECV | FI_REMOTE_WRITE |
					FI_REMOTE_READ), 0);
		cr_assert_eq(fi_enable(s->ep), 0);
		len[i] = sizeof(name[i]);
		cr_assert_eq(fi_getname(&s->ep->fid, name[i], &len[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		cr_assert_eq(fi_av_insert(p->s[i].av, name[!i], 1,
					  &p->s[i].peer, 0, NULL), 1);
		cr_assert_eq(fi_av_insert(p->s[i].av, name[i], 1,
					  &p->s[i].self, 0, NULL), 1);
	}
}

static inline struct fid_mr *rp_reg(struct pair *p, void *buf, size_t len,
				    uint64_t access, uint64_t key)
{
	struct fid_mr *mr = NULL;
	int ret;

	ret = fi_mr_reg(p->env.domain, buf, len, access, 0, key, 0, &mr,
			NULL);
	cr_assert_eq(ret, 0, "fi_mr_reg: %s", fi_strerror(-ret));
	return mr;
}

/* The remote address of byte off of buf in mr, for the domain's mode. */
static inline uint64_t rp_addr(struct pair *p, void *buf, uint64_t off)
{
	return (p->env.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
	       (uint64_t)(uintptr_t)buf + off : off;
}

static inline void rp_progress(struct pair *p)
{
	int k;

	for (k = 0; k < 200; k++) {
		fi_cq_read(p->s[0].cq, NULL, 0);
		fi_cq_read(p->s[1].cq, NULL, 0);
	}
}

/* Progress until cntr (success, or error with err) reaches want. */
static inline void rp_wait_cntr(struct pair *p, struct fid_cntr *cntr,
				uint64_t want, bool err)
{
	long tries;

	for (tries = 0; tries < 100000; tries++) {
		if ((err ? fi_cntr_readerr(cntr) : fi_cntr_read(cntr)) >= want)
			return;
		fi_cq_read(p->s[0].cq, NULL, 0);
		fi_cq_read(p->s[1].cq, NULL, 0);
	}
	cr_assert_fail("counter stuck at %" PRIu64 " (want %" PRIu64 ")",
		       err ? fi_cntr_readerr(cntr) : fi_cntr_read(cntr),
		       want);
}

/* One completion on side i for context ctx with flags; 1 or -FI_EAVAIL. */
static inline ssize_t rp_comp(struct pair *p, int i,
			      struct fi_cq_tagged_entry *e,
			      struct fi_cq_err_entry *err)
{
	return pair_read(p, i, e, err);
}

#endif /* P4F_RMA_TEST_H */
