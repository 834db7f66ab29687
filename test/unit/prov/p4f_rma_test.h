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
	struct pair_opts o = {
		.caps = RP_CAPS, .mr_mode = mr_mode,
		.cq_format = FI_CQ_FORMAT_DATA, .cq_flags = cq_flags,
		.tx_cntr_flags = FI_SEND | FI_WRITE | FI_READ,
		.rx_cntr_flags = FI_RECV | FI_REMOTE_WRITE | FI_REMOTE_READ,
	};

	pair_open_opts(p, &o);
	cr_assert_eq(p->env.info->domain_attr->mr_mode & ~FI_MR_ALLOCATED,
		     mr_mode & ~FI_MR_ALLOCATED, "mr_mode %#x",
		     p->env.info->domain_attr->mr_mode);
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
