/*
 * p4f_pair.h - two enabled endpoints of one domain that know each other,
 * for data-path tests through the real libfabric. The transport is the
 * in-process loop (FI_PORTALS_TRANSPORT=loop) so nothing depends on the
 * network and progress happens only when the test reads a CQ.
 */
#ifndef P4F_PAIR_H
#define P4F_PAIR_H

#include "p4f_test.h"

struct pair_side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_cntr *tx_cntr, *rx_cntr;
	fi_addr_t peer;		/* the other side */
	fi_addr_t self;
};

struct pair {
	struct test_env env;
	struct pair_side s[2];
};

/* How pair_open_opts builds the pair. */
struct pair_opts {
	uint64_t caps;			/* hints->caps */
	int mr_mode;			/* hints' mr_mode and what is asked for */
	enum fi_cq_format cq_format;
	uint64_t cq_flags;		/* FI_SELECTIVE_COMPLETION or 0 */
	uint64_t tx_cntr_flags;		/* bind flags of each side's counters */
	uint64_t rx_cntr_flags;
};

static inline void pair_side_open(struct pair *p, struct pair_side *s,
				  const struct pair_opts *o)
{
	struct fi_cq_attr ca = { .format = o->cq_format,
				 .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cntr_attr cta = { .events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_UNSPEC };

	cr_assert_eq(fi_endpoint(p->env.domain, p->env.info, &s->ep, NULL), 0);
	cr_assert_eq(fi_cq_open(p->env.domain, &ca, &s->cq, NULL), 0);
	cr_assert_eq(fi_av_open(p->env.domain, &aa, &s->av, NULL), 0);
	cr_assert_eq(fi_cntr_open(p->env.domain, &cta, &s->tx_cntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(p->env.domain, &cta, &s->rx_cntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid,
				FI_TRANSMIT | FI_RECV | o->cq_flags), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->tx_cntr->fid, o->tx_cntr_flags), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->rx_cntr->fid, o->rx_cntr_flags), 0);
	cr_assert_eq(fi_enable(s->ep), 0);
}

static inline void pair_open_opts(struct pair *p, const struct pair_opts *o)
{
	struct fi_info *hints = test_hints();
	char name[2][64];
	size_t len[2];
	int i;

	setenv("FI_PORTALS_TRANSPORT", "loop", 1);
	memset(p, 0, sizeof(*p));
	hints->caps = o->caps;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = o->mr_mode;
	/* fi_getinfo asks for none of them: the application chooses */
	test_env_open_mr(&p->env, hints, o->mr_mode);
	for (i = 0; i < 2; i++) {
		pair_side_open(p, &p->s[i], o);
		len[i] = sizeof(name[i]);
		cr_assert_eq(fi_getname(&p->s[i].ep->fid, name[i], &len[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		/* index 0 is the other side, index 1 oneself */
		cr_assert_eq(fi_av_insert(p->s[i].av, name[!i], 1,
					  &p->s[i].peer, 0, NULL), 1);
		cr_assert_eq(fi_av_insert(p->s[i].av, name[i], 1,
					  &p->s[i].self, 0, NULL), 1);
	}
}

/* Two-sided: caps: hints->caps; cq_flags: FI_SELECTIVE_COMPLETION or 0 */
static inline void pair_open(struct pair *p, uint64_t caps, uint64_t cq_flags)
{
	struct pair_opts o = {
		.caps = caps, .cq_format = FI_CQ_FORMAT_TAGGED,
		.cq_flags = cq_flags, .tx_cntr_flags = FI_SEND,
		.rx_cntr_flags = FI_RECV,
	};

	pair_open_opts(p, &o);
}

static inline void pair_close(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct pair_side *s = &p->s[i];

		cr_expect_eq(fi_close(&s->ep->fid), 0);
		cr_expect_eq(fi_close(&s->cq->fid), 0);
		cr_expect_eq(fi_close(&s->av->fid), 0);
		cr_expect_eq(fi_close(&s->tx_cntr->fid), 0);
		cr_expect_eq(fi_close(&s->rx_cntr->fid), 0);
	}
	test_env_close(&p->env);
}

/*
 * Read one completion from side i's CQ, progressing both sides (each CQ
 * read progresses the whole domain). Returns 1 and *e, or the negative
 * error fi_cq_read gave (-FI_EAVAIL: *err filled). Fails after many tries.
 */
static inline ssize_t pair_read(struct pair *p, int i,
				struct fi_cq_tagged_entry *e,
				struct fi_cq_err_entry *err)
{
	long tries;
	ssize_t ret;

	for (tries = 0; tries < 1000000; tries++) {
		ret = fi_cq_read(p->s[i].cq, e, 1);
		if (ret == -FI_EAGAIN) {
			fi_cq_read(p->s[!i].cq, NULL, 0);
			continue;
		}
		if (ret == -FI_EAVAIL && err) {
			memset(err, 0, sizeof(*err));
			cr_assert_eq(fi_cq_readerr(p->s[i].cq, err, 0), 1);
		}
		return ret;
	}
	cr_assert_fail("no completion on side %d", i);
	return -FI_EAGAIN;
}

/* Nothing more on side i's CQ after some progress. */
static inline void pair_quiet(struct pair *p, int i)
{
	struct fi_cq_tagged_entry e;
	int k;

	for (k = 0; k < 1000; k++)
		fi_cq_read(p->s[!i].cq, NULL, 0);
	cr_assert_eq(fi_cq_read(p->s[i].cq, &e, 1), -FI_EAGAIN,
		     "unexpected completion on side %d (ctx %p)", i,
		     e.op_context);
}

/* fi_tx/rx_size_left are deprecated in the API, not in the provider */
static inline ssize_t pair_tx_left(struct fid_ep *ep)
{
	return ep->ops->tx_size_left(ep);
}

static inline ssize_t pair_rx_left(struct fid_ep *ep)
{
	return ep->ops->rx_size_left(ep);
}

#endif /* P4F_PAIR_H */
