/*
 * p4f_ep.c - the FI_EP_RDM endpoint: creation (its NI, on its worker:
 * its own, or the domain's, docs/design.md §8), binding to CQs, counters,
 * AV and EQ, enabling, naming, options, cancel and close. Data transfer
 * operations live in p4f_msg.c, p4f_tagged.c, p4f_rma.c and p4f_atomic.c.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p4f.h"

static struct p4f_ep *p4f_ep_of_fid(struct fid *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid.fid);
}

/*
 * The endpoint's auth_key (its own, else the domain's) as the 64-bit key
 * the transport presents and checks when a connection is set up: a peer
 * with another key is refused (fi_portals.7). Sizes were checked when the
 * info was (P4F_AUTH_KEY_SIZE).
 */
static uint64_t p4f_ep_auth_key(const struct p4f_ep *ep)
{
	const struct fi_info *info[2] = { ep->info, ep->domain->info };
	const uint8_t *key = NULL;
	uint64_t val = 0;
	int i;

	if (info[0]->ep_attr->auth_key_size == P4F_AUTH_KEY_SIZE)
		key = info[0]->ep_attr->auth_key;
	for (i = 0; i < 2 && !key; i++)
		if (info[i]->domain_attr &&
		    info[i]->domain_attr->auth_key_size == P4F_AUTH_KEY_SIZE)
			key = info[i]->domain_attr->auth_key;
	for (i = 0; key && i < P4F_AUTH_KEY_SIZE; i++)
		val |= (uint64_t)key[i] << (8 * i);
	return val;
}

/*
 * Eager sends are copied and complete at once: cheaper than holding the
 * buffer until the target's immediate ack. Up to an eager size, at
 * least the inject size's double, at most P4F_COPY_SIZE_MAX.
 */
static size_t p4f_copy_size(const struct p4f_ep *ep, size_t eager)
{
	return P4U_MAX(2 * ep->inject_size, P4U_MIN(eager, P4F_COPY_SIZE_MAX));
}

/*
 * Open the endpoint's engine NI listening at addr (port 0: the kernel's or
 * FI_PORTALS_PORT_LOW..HIGH's choice) and record the address it got: that
 * is what fi_getname returns. The NI exists from fi_endpoint on so the name
 * is known before fi_enable; PTs and buffers come with fi_enable.
 */
static int p4f_ep_ni_open(struct p4f_ep *ep, const union p4f_sockaddr *addr)
{
	struct p4f_domain *domain = ep->domain;
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = domain->transport,
		/* peers on this host through shared memory (loop: tests) */
		.local_transport = p4f_params.shm &&
				   domain->transport != &p4t_loop_ops ?
				   &p4t_shm_ops : NULL,
		.addr = addr,
		.addrlen = p4f_sockaddr_len(&addr->sa),
		.port_low = (uint16_t)p4f_params.port_low,
		.port_high = (uint16_t)p4f_params.port_high,
		.uid = (uint32_t)getuid(),
		.eager_size = p4f_params.eager_size,
		.copy_size = p4f_copy_size(ep, p4f_params.eager_size),
		.local_eager_size = p4f_params.shm_eager_size,
		.local_copy_size = p4f_copy_size(ep, p4f_params.shm_eager_size),
		.worker = ep->worker->ew,
		.trig_dropped = p4f_trigger_dropped,
		.trig_dropped_ctx = ep,
		.rma_chunk = p4f_params.rdzv_chunk,
		.rma_offer = p4f_params.rdzv_offer,
		.no_offers = !p4f_params.rdzv_offer,
		.peer_timeout_ms = p4f_params.peer_timeout_ms,
		.connect_retry_ms = p4f_params.connect_retry_ms,
		/* with a progress thread, whichever thread received a message
		 * may go quiet for long: acknowledge at once */
		.ack_delay_ns = domain->data_progress == FI_PROGRESS_AUTO ? 0 :
				p4f_params.ack_delay_us * 1000,
		.auth_key = p4f_ep_auth_key(ep),
	};
	union p4f_sockaddr bound;
	size_t len = sizeof(bound);
	struct p4e_ni *ni;
	int ret;

	/*
	 * Every send and posted receive may wait on the engine at once, and
	 * completed copied sends stay engine operations until their target
	 * has the payload, which it may take long to pull (a flood) or to
	 * acknowledge (FI_PORTALS_ACK_DELAY_US): those are bounded on their
	 * own (tx_held_max), so the transmit context holds tx_size sends
	 * whatever the peers do (docs/design.md §7.5).
	 */
	attr.desired.max_held = (uint32_t)p4f_params.tx_held_max;
	attr.desired.max_ops = (uint32_t)P4U_MIN(ep->tx_size + ep->rx_size +
						 P4F_ACK_SLACK +
						 p4f_params.tx_held_max,
						 1u << 24);
	attr.copy_mem_max = p4f_params.tx_copy_mem;
	attr.desired.max_volatile_size = ep->inject_size;
	attr.desired.max_unexpected_headers = (uint32_t)p4f_params.unexp_max;
	p4f_ep_lock(ep);
	ret = p4e_ni_create(domain->edom, &attr, &ni);
	if (!ret) {
		ret = p4e_ni_getname(ni, &bound, &len);
		if (ret)
			p4e_ni_destroy(ni);
	}
	if (!ret && ep->ni)
		p4e_ni_destroy(ep->ni);
	p4f_ep_unlock(ep);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"cannot open the endpoint's network interface: %s\n",
			fi_strerror(-ret));
		return ret;
	}
	ep->ni = ni;
	ep->addr = bound;
	return 0;
}

/* ---- fi_ops ------------------------------------------------------------ */

static void p4f_ep_unbind_all(struct p4f_ep *ep)
{
	int i;

	/* each direction took its own reference, even on a shared CQ */
	if (ep->tx_cq)
		p4f_cq_unbind(ep->tx_cq, ep->worker);
	if (ep->rx_cq)
		p4f_cq_unbind(ep->rx_cq, ep->worker);
	ep->tx_cq = ep->rx_cq = NULL;
	for (i = 0; i < P4F_CNTR_MAX; i++) {
		if (ep->cntrs[i])
			p4f_cntr_put(ep->cntrs[i]);
		ep->cntrs[i] = NULL;
	}
	if (ep->av)
		p4f_av_put(ep->av);
	ep->av = NULL;
	if (ep->eq)
		p4f_eq_put(ep->eq);
	ep->eq = NULL;
}

/*
 * The endpoint's worker: the domain's, or one of its own that joins the
 * domain's list and every counter's progress set (counters progress
 * every worker of their domain).
 */
static int p4f_ep_worker_open(struct p4f_ep *ep)
{
	struct p4f_domain *domain = ep->domain;
	int ret;

	if (domain->worker) {
		p4f_worker_get(domain->worker);
		ep->worker = domain->worker;
		return 0;
	}
	ret = p4f_worker_open(domain, false, &ep->worker);
	if (ret)
		return ret;
	p4u_lock_acquire(&domain->lock);
	ret = p4f_cntr_worker_add_all_locked(domain, ep->worker);
	if (!ret)
		p4u_list_insert_tail(&domain->workers, &ep->worker->link);
	p4u_lock_release(&domain->lock);
	if (ret) {
		p4f_worker_put(ep->worker);
		ep->worker = NULL;
	}
	return ret;
}

static void p4f_ep_worker_close(struct p4f_ep *ep)
{
	struct p4f_domain *domain = ep->domain;

	if (ep->worker != domain->worker) {
		p4u_lock_acquire(&domain->lock);
		p4u_list_remove(&ep->worker->link);
		p4f_cntr_worker_del_all_locked(domain, ep->worker);
		p4u_lock_release(&domain->lock);
	}
	p4f_worker_put(ep->worker);
	ep->worker = NULL;
}

/*
 * fi_close lingers (docs/design.md §7.6, fi_portals.7 "Resource
 * management"): sends that completed, or are queued, are the peers' once
 * their targets accepted them. Progress until the engine owes nothing
 * (p4e_ni_owes: every request accepted, responses and acknowledgements
 * sent, the transport's bytes in the peers' kernels), at most
 * FI_PORTALS_LINGER_MS; the transport then closes its sockets gracefully.
 * A peer's answers wake the worker's fd; the peer's kernel acknowledging
 * our last bytes raises no event, hence the 1 ms bound on each sleep. No
 * lock is held while asleep (a progress thread goes on meanwhile).
 */
static void p4f_ep_linger(struct p4f_ep *ep)
{
	struct p4f_worker *w = ep->worker;
	struct pollfd pfd = { .fd = p4f_worker_wait_fd(w), .events = POLLIN };
	uint64_t end = p4u_time_ms() + p4f_params.linger_ms, now;
	bool owes;

	for (;;) {
		p4f_worker_lock(w);
		(void)p4f_worker_progress_locked(w);
		owes = p4e_ni_owes(ep->ni);
		if (owes)	/* what was held back goes now */
			p4e_worker_prepare_sleep(w->ew);
		p4f_worker_unlock(w);
		now = p4u_time_ms();
		if (!owes || now >= end)
			break;
		(void)poll(&pfd, 1, (int)P4U_MIN(end - now, (uint64_t)1));
	}
	if (owes)
		FI_INFO(&p4f_prov, FI_LOG_EP_CTRL, "endpoint closing after "
			"%zu ms with messages its peers did not accept yet\n",
			p4f_params.linger_ms);
}

/* FI_PORTALS_STATS: one line per endpoint, at close. */
static void p4f_ep_stats(struct p4f_ep *ep)
{
	static const char *const name[P4E_SR_LAST] = {
		[P4E_SR_DROP_COUNT] = "dropped",
		[P4E_SR_PERMISSION_VIOLATIONS] = "permission_violations",
		[P4E_SR_OPERATION_VIOLATIONS] = "operation_violations",
		[P4E_SR_MALFORMED] = "malformed",
		[P4E_SR_FLOWCTRL] = "flow_control",
		[P4E_SR_FC_AS_RDZV] = "fc_as_rendezvous",
		[P4E_SR_RESENT_AS_RDZV] = "resent_as_rendezvous",
		[P4E_SR_UH_FULL] = "unexpected_headers_full",
		[P4E_SR_COPY_REFUSED] = "copies_refused",
		[P4E_SR_LINKS_LOCAL] = "links_shm",
		[P4E_SR_LINKS_NET] = "links_net",
	};
	char line[1024];
	size_t len = sizeof(line), off;
	int64_t v;
	int i;

	if (!p4f_params.stats)
		return;
	if (p4f_sockaddr_str(&ep->addr.sa, line, &len))
		snprintf(line, sizeof(line), "?");
	off = strlen(line);
	for (i = 0; i < P4E_SR_LAST && off < sizeof(line); i++)
		if (!p4e_ni_status(ep->ni, i, &v))
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						" %s=%" PRId64, name[i], v);
	fprintf(stderr, "portals: stats: pid %d endpoint %s\n", (int)getpid(),
		line);
}

static int p4f_ep_close(struct fid *fid)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);

	if (atomic_load(&ep->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"endpoint still has %d aliases\n", atomic_load(&ep->ref));
		return -FI_EBUSY;
	}
	p4f_ep_linger(ep);
	p4u_lock_acquire(&ep->domain->lock);
	if (ep->enabled)
		p4u_list_remove(&ep->dom_link);
	/* MRs forget this endpoint before its entries go with the NI */
	p4f_mr_ep_detach_locked(ep);
	p4f_ep_lock(ep);
	p4f_ep_stats(ep);
	p4u_list_remove(&ep->worker_link);
	/* the NI fails what is still pending and drops its triggered ops;
	 * its events go nowhere now */
	p4e_ni_destroy(ep->ni);
	p4f_trigger_ep_fini_locked(ep);
	p4f_oflow_free_all(ep);
	p4f_ep_unlock(ep);
	p4u_lock_release(&ep->domain->lock);
	p4f_ep_unbind_all(ep);
	p4f_ep_worker_close(ep);
	atomic_fetch_sub(&ep->domain->ref, 1);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int p4f_ep_bind_cq(struct p4f_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct p4f_cq *cq = p4f_cq_of(container_of(bfid, struct fid_cq, fid));
	int ret;

	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq)) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL, "CQ already bound\n");
		return -FI_EINVAL;
	}
	/* the CQ progresses (and wakes for) this endpoint's worker */
	if (flags & FI_TRANSMIT) {
		ret = p4f_cq_bind(cq, ep->worker);
		if (ret)
			return ret;
		ep->tx_cq = cq;
		ep->tx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ret = p4f_cq_bind(cq, ep->worker);
		if (ret)
			return ret;
		ep->rx_cq = cq;
		ep->rx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static const struct {
	uint64_t flag;
	enum p4f_ep_cntr_slot slot;
} p4f_ep_cntr_flags[] = {
	{ FI_SEND, P4F_CNTR_SEND },
	{ FI_RECV, P4F_CNTR_RECV },
	{ FI_READ, P4F_CNTR_READ },
	{ FI_WRITE, P4F_CNTR_WRITE },
	{ FI_REMOTE_READ, P4F_CNTR_REMOTE_READ },
	{ FI_REMOTE_WRITE, P4F_CNTR_REMOTE_WRITE },
};

static int p4f_ep_bind_cntr(struct p4f_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct p4f_cntr *cntr =
		p4f_cntr_of(container_of(bfid, struct fid_cntr, fid));
	const uint64_t valid = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			       FI_REMOTE_READ | FI_REMOTE_WRITE;
	size_t i;

	if (!flags || (flags & ~valid))
		return -FI_EBADFLAGS;
	for (i = 0; i < P4U_ARRAY_SIZE(p4f_ep_cntr_flags); i++)
		if ((flags & p4f_ep_cntr_flags[i].flag) &&
		    ep->cntrs[p4f_ep_cntr_flags[i].slot])
			return -FI_EINVAL;
	for (i = 0; i < P4U_ARRAY_SIZE(p4f_ep_cntr_flags); i++) {
		if (!(flags & p4f_ep_cntr_flags[i].flag))
			continue;
		ep->cntrs[p4f_ep_cntr_flags[i].slot] = cntr;
		p4f_cntr_get(cntr);
	}
	return 0;
}

static int p4f_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"bind after fi_enable is not supported\n");
		return -FI_EOPBADSTATE;
	}

	p4u_lock_acquire(&ep->domain->lock);
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		if (p4f_cq_domain(p4f_cq_of(container_of(bfid, struct fid_cq,
							  fid))) != ep->domain) {
			ret = -FI_EINVAL;
			break;
		}
		ret = p4f_ep_bind_cq(ep, bfid, flags);
		break;
	case FI_CLASS_CNTR:
		if (p4f_cntr_domain(p4f_cntr_of(container_of(
			    bfid, struct fid_cntr, fid))) != ep->domain) {
			ret = -FI_EINVAL;
			break;
		}
		ret = p4f_ep_bind_cntr(ep, bfid, flags);
		break;
	case FI_CLASS_AV:
		if (ep->av) {
			ret = -FI_EINVAL;
			break;
		}
		if (p4f_av_domain(p4f_av_of(container_of(bfid, struct fid_av,
							  fid))) != ep->domain) {
			ret = -FI_EINVAL;
			break;
		}
		ep->av = p4f_av_of(container_of(bfid, struct fid_av, fid));
		p4f_av_get(ep->av);
		ret = 0;
		break;
	case FI_CLASS_EQ:
		if (ep->eq) {
			ret = -FI_EINVAL;
			break;
		}
		ep->eq = p4f_eq_of(container_of(bfid, struct fid_eq, fid));
		p4f_eq_get(ep->eq);
		ret = 0;
		break;
	default:
		ret = -FI_EINVAL;
		break;
	}
	p4u_lock_release(&ep->domain->lock);
	return ret;
}

/* PTs, MDs and overflow buffers: what the data path needs. */
static int p4f_ep_engine_setup_locked(struct p4f_ep *ep)
{
	struct p4e_md_desc md = {
		.start = NULL,
		.length = P4E_SIZE_MAX,
		.eq = &ep->tx_sink.eq,
		.ct = P4E_HANDLE_NONE,
	};
	uint32_t pt, index;
	int ret;

	for (pt = 0; pt < P4F_PT_COUNT; pt++) {
		ret = p4e_pt_alloc(ep->ni, P4E_PT_FC_RESEND, &ep->rx_sink.eq,
				   pt, &index);
		if (ret)
			return ret;
	}
	ret = p4e_md_bind(ep->ni, &md, &ep->md_all);
	if (ret)
		return ret;
	md.options = P4E_MD_VOLATILE;
	ret = p4e_md_bind(ep->ni, &md, &ep->md_volatile);
	if (ret)
		return ret;
	ret = p4f_oflow_post_all(ep);
	if (ret)
		return ret;
	/* one-sided: no match is a bad key (dropped, never resent) */
	ret = p4e_pt_alloc(ep->ni, P4E_PT_FC_RESEND | P4E_PT_NO_MATCH_DROP,
			   &ep->rma_sink.eq, P4F_PT_RMA, &index);
	if (ret)
		return ret;
	md.eq = &ep->rma_sink.eq;
	md.options = 0;
	ret = p4e_md_bind(ep->ni, &md, &ep->md_rma);
	if (ret)
		return ret;
	md.options = P4E_MD_VOLATILE;
	return p4e_md_bind(ep->ni, &md, &ep->md_rma_volatile);
}

static int p4f_ep_enable(struct p4f_ep *ep)
{
	int ret;

	if (ep->enabled)
		return 0;
	if (!ep->av) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"an RDM endpoint needs an AV before fi_enable\n");
		return -FI_ENOAV;
	}
	p4u_lock_acquire(&ep->domain->lock);
	p4f_ep_lock(ep);
	ret = p4f_ep_engine_setup_locked(ep);
	if (!ret) {
		ep->enabled = true;
		p4u_list_insert_tail(&ep->worker->eps, &ep->worker_link);
	}
	p4f_ep_unlock(ep);
	/* MRs registered so far get entries on the new RMA PT */
	if (!ret)
		ret = p4f_mr_ep_attach_locked(ep);
	if (!ret)
		p4u_list_insert_tail(&ep->domain->eps, &ep->dom_link);
	p4u_lock_release(&ep->domain->lock);
	if (ret)
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL, "fi_enable failed: %s\n",
			fi_strerror(-ret));
	return ret;
}

static int p4f_ep_control(struct fid *fid, int command, void *arg)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		return p4f_ep_enable(ep);
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) == (FI_TRANSMIT | FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			*flags = ep->tx_op_flags | FI_TRANSMIT;
		else if (*flags & FI_RECV)
			*flags = ep->rx_op_flags | FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) == (FI_TRANSMIT | FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	case FI_ALIAS:
		return p4f_ep_alias_open(ep, arg);	/* p4f_ep_alias.c */
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops p4f_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_ep_close,
	.bind = p4f_ep_bind,
	.control = p4f_ep_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

/* ---- fi_ops_ep --------------------------------------------------------- */

static ssize_t p4f_ep_cancel(fid_t fid, void *context)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);
	ssize_t ret;

	ep = p4f_ep_data(ep);
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4f_ep_lock(ep);
	ret = p4f_ep_cancel_locked(ep, context);
	p4f_ep_unlock(ep);
	return ret;
}

static int p4f_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = ep->min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int p4f_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || optlen != sizeof(size_t))
			return -FI_EINVAL;
		ep->min_multi_recv = *(const size_t *)optval;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static ssize_t p4f_ep_rx_size_left(struct fid_ep *fid)
{
	struct p4f_ep *ep = container_of(fid, struct p4f_ep, ep_fid);

	return ep->enabled ? (ssize_t)(ep->rx_size - ep->rx_pending) :
			     -FI_EOPBADSTATE;
}

static ssize_t p4f_ep_tx_size_left(struct fid_ep *fid)
{
	struct p4f_ep *ep = container_of(fid, struct p4f_ep, ep_fid);

	return ep->enabled ? (ssize_t)(ep->tx_size - ep->tx_pending) :
			     -FI_EOPBADSTATE;
}

static struct fi_ops_ep p4f_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = p4f_ep_cancel,
	.getopt = p4f_ep_getopt,
	.setopt = p4f_ep_setopt,
	.tx_ctx = p4f_no_ep_tx_ctx,
	.rx_ctx = p4f_no_ep_rx_ctx,
	.rx_size_left = p4f_ep_rx_size_left,
	.tx_size_left = p4f_ep_tx_size_left,
};

/* ---- fi_ops_cm --------------------------------------------------------- */

static int p4f_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);
	size_t len = p4f_sockaddr_len(&ep->addr.sa);

	if (!addrlen)
		return -FI_EINVAL;
	if (!addr || *addrlen < len) {
		*addrlen = len;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &ep->addr, len);
	*addrlen = len;
	return 0;
}

static int p4f_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);
	union p4f_sockaddr sa;

	if (!addr || !p4f_sockaddr_valid(addr, addrlen))
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;
	memset(&sa, 0, sizeof(sa));
	memcpy(&sa, addr, addrlen);
	if (sa.sa.sa_family != ep->addr.sa.sa_family)
		return -FI_EINVAL;
	return p4f_ep_ni_open(ep, &sa);
}

static struct fi_ops_cm p4f_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = p4f_ep_setname,
	.getname = p4f_ep_getname,
	.getpeer = p4f_no_cm_getpeer,
	.connect = p4f_no_cm_connect,
	.listen = p4f_no_cm_listen,
	.accept = p4f_no_cm_accept,
	.reject = p4f_no_cm_reject,
	.shutdown = p4f_no_cm_shutdown,
	.join = p4f_no_cm_join,
};

/* ---- creation ---------------------------------------------------------- */

int p4f_ep_open(struct fid_domain *domain_fid, struct fi_info *info,
		struct fid_ep **ep_p, void *context)
{
	struct p4f_domain *domain = p4f_domain_of(domain_fid);
	union p4f_sockaddr addr;
	struct p4f_ep *ep;
	int ret;

	if (!info || !ep_p || !info->ep_attr)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_RDM) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"only FI_EP_RDM endpoints are supported\n");
		return -FI_EINVAL;
	}
	if (p4f_check_info(domain->api_version, &p4f_info_template, info))
		return -FI_EINVAL;

	addr = domain->ifaddr;
	if (info->src_addr) {
		if (!p4f_sockaddr_valid(info->src_addr, info->src_addrlen))
			return -FI_EINVAL;
		memset(&addr, 0, sizeof(addr));
		memcpy(&addr, info->src_addr, info->src_addrlen);
	}

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	ep->domain = domain;
	ep->tx_size = info->tx_attr && info->tx_attr->size ?
		info->tx_attr->size : p4f_params.tx_size;
	ep->rx_size = info->rx_attr && info->rx_attr->size ?
		info->rx_attr->size : p4f_params.rx_size;
	ep->inject_size = info->tx_attr && info->tx_attr->inject_size ?
		info->tx_attr->inject_size : p4f_params.inject_size;
	p4u_list_init(&ep->dom_link);
	p4u_list_init(&ep->worker_link);
	p4u_list_init(&ep->oflow_repost);
	ep->rx_sink.eq.ops = &p4f_sink_rx_ops;
	ep->rx_sink.ep = ep;
	ep->tx_sink.eq.ops = &p4f_sink_tx_ops;
	ep->tx_sink.ep = ep;
	ep->rma_sink.eq.ops = &p4f_sink_rma_ops;
	ep->rma_sink.ep = ep;
	ret = p4f_ep_worker_open(ep);
	if (ret)
		goto err_freeinfo;
	ret = p4f_ep_ni_open(ep, &addr);
	if (ret)
		goto err_worker;

	ep->caps = info->caps;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->min_multi_recv = P4F_MIN_MULTI_RECV_DEFAULT;
	atomic_init(&ep->ref, 0);
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &p4f_ep_fi_ops;
	ep->ep_fid.ops = &p4f_ep_ops;
	ep->ep_fid.cm = &p4f_ep_cm_ops;
	ep->ep_fid.msg = &p4f_msg_ops;
	ep->ep_fid.tagged = &p4f_tagged_ops;
	ep->ep_fid.rma = &p4f_rma_ops;
	ep->ep_fid.atomic = &p4f_atomic_ops;
	ep->ep_fid.collective =
		(struct fi_ops_collective *)&p4f_no_collective_ops;
	atomic_fetch_add(&domain->ref, 1);
	*ep_p = &ep->ep_fid;
	return 0;

err_worker:
	p4f_ep_worker_close(ep);
err_freeinfo:
	fi_freeinfo(ep->info);
err_free:
	free(ep);
	return ret;
}
