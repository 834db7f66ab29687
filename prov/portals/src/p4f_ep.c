/*
 * p4f_ep.c - the FI_EP_RDM endpoint: creation, binding to CQs, counters,
 * AV and EQ, enabling, naming, options, cancel and close. Data transfer
 * operations live in p4f_msg.c, p4f_tagged.c, p4f_rma.c and p4f_atomic.c
 * as they land; until then their tables answer -FI_ENOSYS.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/tcp.h>

#include "p4f.h"

static struct p4f_ep *p4f_ep_of_fid(struct fid *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid.fid);
}

/* Bind the listening socket to addr, honouring the port range. */
static int p4f_ep_listen_bind(int fd, union p4f_sockaddr *addr)
{
	socklen_t len = p4f_sockaddr_len(&addr->sa);
	in_port_t *port = addr->sa.sa_family == AF_INET ?
		&addr->sin.sin_port : &addr->sin6.sin6_port;
	size_t p;

	if (*port || !p4f_params.port_low)
		return bind(fd, &addr->sa, len) ? -errno : 0;

	for (p = p4f_params.port_low; p <= p4f_params.port_high; p++) {
		*port = htons((uint16_t)p);
		if (!bind(fd, &addr->sa, len))
			return 0;
		if (errno != EADDRINUSE)
			return -errno;
	}
	*port = 0;
	return -EADDRINUSE;
}

/*
 * Create the endpoint's socket at addr (port 0 = let the kernel choose)
 * and record the address it got: that is what fi_getname returns.
 */
static int p4f_ep_open_socket(struct p4f_ep *ep, const union p4f_sockaddr *addr)
{
	union p4f_sockaddr bound = *addr;
	socklen_t len = sizeof(bound);
	int fd, ret, one = 1;

	fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ret = p4f_ep_listen_bind(fd, &bound);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL, "bind failed: %s\n",
			strerror(-ret));
		close(fd);
		return ret == -EADDRINUSE ? -FI_EADDRINUSE : -FI_EINVAL;
	}
	if (getsockname(fd, &bound.sa, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (ep->listen_fd >= 0)
		close(ep->listen_fd);
	ep->listen_fd = fd;
	ep->addr = bound;
	return 0;
}

/* ---- fi_ops ------------------------------------------------------------ */

static void p4f_ep_unbind_all(struct p4f_ep *ep)
{
	int i;

	/* each direction took its own reference, even on a shared CQ */
	if (ep->tx_cq)
		p4f_cq_put(ep->tx_cq);
	if (ep->rx_cq)
		p4f_cq_put(ep->rx_cq);
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

static int p4f_ep_close(struct fid *fid)
{
	struct p4f_ep *ep = p4f_ep_of_fid(fid);

	if (atomic_load(&ep->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"endpoint still has %d aliases\n", atomic_load(&ep->ref));
		return -FI_EBUSY;
	}
	p4f_ep_unbind_all(ep);
	if (ep->listen_fd >= 0)
		close(ep->listen_fd);
	atomic_fetch_sub(&ep->domain->ref, 1);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int p4f_ep_bind_cq(struct p4f_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct p4f_cq *cq = p4f_cq_of(container_of(bfid, struct fid_cq, fid));

	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq)) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL, "CQ already bound\n");
		return -FI_EINVAL;
	}
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
		p4f_cq_get(cq);
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
		p4f_cq_get(cq);
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

static int p4f_ep_enable(struct p4f_ep *ep)
{
	if (ep->enabled)
		return 0;
	if (!ep->av) {
		FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
			"an RDM endpoint needs an AV before fi_enable\n");
		return -FI_ENOAV;
	}
	if (listen(ep->listen_fd, SOMAXCONN))
		return -errno;
	ep->enabled = true;
	return 0;
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
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops p4f_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_ep_close,
	.bind = p4f_ep_bind,
	.control = p4f_ep_control,
	.ops_open = p4u_no_ops_open,
	.tostr = p4u_no_tostr,
	.ops_set = p4u_no_ops_set,
};

/* ---- fi_ops_ep --------------------------------------------------------- */

static ssize_t p4f_ep_cancel(fid_t fid, void *context)
{
	/* Nothing is ever queued until messaging lands: nothing to cancel. */
	return -FI_ENOENT;
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

	return ep->enabled ? (ssize_t)ep->info->rx_attr->size : -FI_EOPBADSTATE;
}

static ssize_t p4f_ep_tx_size_left(struct fid_ep *fid)
{
	struct p4f_ep *ep = container_of(fid, struct p4f_ep, ep_fid);

	return ep->enabled ? (ssize_t)ep->info->tx_attr->size : -FI_EOPBADSTATE;
}

static struct fi_ops_ep p4f_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = p4f_ep_cancel,
	.getopt = p4f_ep_getopt,
	.setopt = p4f_ep_setopt,
	.tx_ctx = p4u_no_ep_tx_ctx,
	.rx_ctx = p4u_no_ep_rx_ctx,
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
	return p4f_ep_open_socket(ep, &sa);
}

static struct fi_ops_cm p4f_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = p4f_ep_setname,
	.getname = p4f_ep_getname,
	.getpeer = p4u_no_cm_getpeer,
	.connect = p4u_no_cm_connect,
	.listen = p4u_no_cm_listen,
	.accept = p4u_no_cm_accept,
	.reject = p4u_no_cm_reject,
	.shutdown = p4u_no_cm_shutdown,
	.join = p4u_no_cm_join,
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
	ep->listen_fd = -1;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	ret = p4f_ep_open_socket(ep, &addr);
	if (ret)
		goto err_freeinfo;

	ep->domain = domain;
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
	ep->ep_fid.msg = (struct fi_ops_msg *)&p4u_no_msg_ops;
	ep->ep_fid.tagged = (struct fi_ops_tagged *)&p4u_no_tagged_ops;
	ep->ep_fid.rma = (struct fi_ops_rma *)&p4u_no_rma_ops;
	ep->ep_fid.atomic = (struct fi_ops_atomic *)&p4u_no_atomic_ops;
	ep->ep_fid.collective =
		(struct fi_ops_collective *)&p4u_no_collective_ops;
	atomic_fetch_add(&domain->ref, 1);
	*ep_p = &ep->ep_fid;
	return 0;

err_freeinfo:
	fi_freeinfo(ep->info);
err_free:
	free(ep);
	return ret;
}
