/*
 * p4f_ep_alias.c - fi_ep_alias (fi_endpoint(3)): another fid_ep for an
 * endpoint that differs only by its default operation flags. The alias
 * is a struct p4f_ep with parent set; it shares the parent's NI, CQs,
 * counters and AV. Its message, tagged and atomic tables are the
 * parent's: those read the op_flags from the alias and then work on
 * p4f_ep_data(ep). RMA calls go through the wrappers below to the
 * parent's *msg calls with the alias's flags (FI_TRIGGER ones to
 * p4f_trigger.c). Its control and endpoint calls go to the parent. An alias holds a reference
 * on its parent, which cannot close (-FI_EBUSY) before its aliases.
 */
#include <config.h>

#include <stdlib.h>

#include "p4f.h"

static struct p4f_ep *p4f_alias_of(struct fid *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid.fid);
}

static int p4f_alias_close(struct fid *fid)
{
	struct p4f_ep *alias = p4f_alias_of(fid);

	atomic_fetch_sub(&alias->parent->ref, 1);
	free(alias);
	return 0;
}

/* Bindings belong to the parent (they are shared). */
static int p4f_alias_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	FI_WARN(&p4f_prov, FI_LOG_EP_CTRL,
		"bind the endpoint, not its alias\n");
	return -FI_EINVAL;
}

static int p4f_alias_control(struct fid *fid, int command, void *arg)
{
	struct p4f_ep *alias = p4f_alias_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) ==
		    (FI_TRANSMIT | FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			*flags = alias->tx_op_flags | FI_TRANSMIT;
		else if (*flags & FI_RECV)
			*flags = alias->rx_op_flags | FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) ==
		    (FI_TRANSMIT | FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			alias->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			alias->rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	case FI_ALIAS:
		/* an alias of an alias aliases the endpoint itself */
		return p4f_ep_alias_open(alias->parent, arg);
	default:
		/* FI_ENABLE and the rest act on the shared endpoint */
		return fi_control(&alias->parent->ep_fid.fid, command, arg);
	}
}

static struct fi_ops p4f_alias_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_alias_close,
	.bind = p4f_alias_bind,
	.control = p4f_alias_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

/* ---- fi_ops_ep / fi_ops_cm: the parent's ------------------------------- */

static struct fid_ep *p4f_alias_parent(fid_t fid)
{
	return &p4f_alias_of(fid)->parent->ep_fid;
}

static ssize_t p4f_alias_cancel(fid_t fid, void *context)
{
	return fi_cancel(&p4f_alias_parent(fid)->fid, context);
}

static int p4f_alias_getopt(fid_t fid, int level, int optname, void *optval,
			    size_t *optlen)
{
	return fi_getopt(&p4f_alias_parent(fid)->fid, level, optname, optval,
			 optlen);
}

static int p4f_alias_setopt(fid_t fid, int level, int optname,
			    const void *optval, size_t optlen)
{
	return fi_setopt(&p4f_alias_parent(fid)->fid, level, optname, optval,
			 optlen);
}

static ssize_t p4f_alias_rx_size_left(struct fid_ep *fid)
{
	struct fid_ep *parent = p4f_alias_parent(&fid->fid);

	return parent->ops->rx_size_left(parent);
}

static ssize_t p4f_alias_tx_size_left(struct fid_ep *fid)
{
	struct fid_ep *parent = p4f_alias_parent(&fid->fid);

	return parent->ops->tx_size_left(parent);
}

static struct fi_ops_ep p4f_alias_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = p4f_alias_cancel,
	.getopt = p4f_alias_getopt,
	.setopt = p4f_alias_setopt,
	.tx_ctx = p4f_no_ep_tx_ctx,
	.rx_ctx = p4f_no_ep_rx_ctx,
	.rx_size_left = p4f_alias_rx_size_left,
	.tx_size_left = p4f_alias_tx_size_left,
};

static int p4f_alias_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return fi_getname(&p4f_alias_parent(fid)->fid, addr, addrlen);
}

static struct fi_ops_cm p4f_alias_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = p4f_no_cm_setname,
	.getname = p4f_alias_getname,
	.getpeer = p4f_no_cm_getpeer,
	.connect = p4f_no_cm_connect,
	.listen = p4f_no_cm_listen,
	.accept = p4f_no_cm_accept,
	.reject = p4f_no_cm_reject,
	.shutdown = p4f_no_cm_shutdown,
	.join = p4f_no_cm_join,
};

/* ---- fi_ops_rma: the alias's flags, the parent's data path ------------ */

/* The op flags a call without flags takes from the alias (as the RMA
 * layer takes them from an endpoint); FI_TRIGGER kept. */
#define P4F_ALIAS_RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | \
			     FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
			     FI_FENCE | FI_MORE | FI_TRIGGER)

/*
 * One RMA operation through an alias: with FI_TRIGGER (in the alias's
 * flags or the call's) a triggered one (p4f_trigger.c), otherwise the
 * parent's *msg entry point with these flags.
 */
static ssize_t p4f_alias_rma(struct fid_ep *fid, const struct iovec *iov,
			     size_t count, fi_addr_t addr, uint64_t raddr,
			     uint64_t key, uint64_t data, void *context,
			     uint64_t flags, bool write)
{
	struct p4f_ep *ep = p4f_alias_of(&fid->fid)->parent;
	struct fi_rma_iov riov = { .addr = raddr, .key = key };
	struct fi_msg_rma msg = {
		.msg_iov = iov, .iov_count = count, .addr = addr,
		.rma_iov = &riov, .rma_iov_count = 1, .context = context,
		.data = data,
	};
	size_t i;

	if (flags & FI_TRIGGER) {
		struct p4f_rma_args a = {
			.iov = iov, .count = count, .addr = addr,
			.raddr = raddr, .key = key, .data = data,
			.context = context, .flags = flags,
		};

		return p4f_trigger_rma(ep, &a, write);
	}
	for (i = 0; iov && i < count; i++)
		riov.len += iov[i].iov_len;
	return write ? ep->ep_fid.rma->writemsg(&ep->ep_fid, &msg, flags) :
		       ep->ep_fid.rma->readmsg(&ep->ep_fid, &msg, flags);
}

static uint64_t p4f_alias_rma_flags(struct fid_ep *fid)
{
	return p4f_alias_of(&fid->fid)->tx_op_flags & P4F_ALIAS_RMA_FLAGS;
}

static ssize_t p4f_alias_read(struct fid_ep *fid, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, uint64_t addr,
			      uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)desc;
	return p4f_alias_rma(fid, &iov, 1, src_addr, addr, key, 0, context,
			     p4f_alias_rma_flags(fid) & ~(uint64_t)FI_INJECT,
			     false);
}

static ssize_t p4f_alias_readv(struct fid_ep *fid, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       uint64_t addr, uint64_t key, void *context)
{
	(void)desc;
	return p4f_alias_rma(fid, iov, count, src_addr, addr, key, 0, context,
			     p4f_alias_rma_flags(fid) & ~(uint64_t)FI_INJECT,
			     false);
}

static ssize_t p4f_alias_readmsg(struct fid_ep *fid,
				 const struct fi_msg_rma *msg, uint64_t flags)
{
	struct p4f_ep *ep = p4f_alias_of(&fid->fid)->parent;

	if (msg && (flags & FI_TRIGGER) && msg->rma_iov_count == 1 &&
	    msg->rma_iov)
		return p4f_alias_rma(fid, msg->msg_iov, msg->iov_count,
				     msg->addr, msg->rma_iov[0].addr,
				     msg->rma_iov[0].key, 0, msg->context,
				     flags, false);
	return ep->ep_fid.rma->readmsg(&ep->ep_fid, msg, flags);
}

static ssize_t p4f_alias_write(struct fid_ep *fid, const void *buf,
			       size_t len, void *desc, fi_addr_t dest_addr,
			       uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return p4f_alias_rma(fid, &iov, 1, dest_addr, addr, key, 0, context,
			     p4f_alias_rma_flags(fid), true);
}

static ssize_t p4f_alias_writev(struct fid_ep *fid, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key, void *context)
{
	(void)desc;
	return p4f_alias_rma(fid, iov, count, dest_addr, addr, key, 0, context,
			     p4f_alias_rma_flags(fid), true);
}

static ssize_t p4f_alias_writemsg(struct fid_ep *fid,
				  const struct fi_msg_rma *msg, uint64_t flags)
{
	struct p4f_ep *ep = p4f_alias_of(&fid->fid)->parent;

	if (msg && (flags & FI_TRIGGER) && msg->rma_iov_count == 1 &&
	    msg->rma_iov)
		return p4f_alias_rma(fid, msg->msg_iov, msg->iov_count,
				     msg->addr, msg->rma_iov[0].addr,
				     msg->rma_iov[0].key, msg->data,
				     msg->context, flags, true);
	return ep->ep_fid.rma->writemsg(&ep->ep_fid, msg, flags);
}

static ssize_t p4f_alias_writedata(struct fid_ep *fid, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return p4f_alias_rma(fid, &iov, 1, dest_addr, addr, key, data, context,
			     p4f_alias_rma_flags(fid) | FI_REMOTE_CQ_DATA,
			     true);
}

/* Injects take no flags: the parent's, unchanged. */
static ssize_t p4f_alias_inject_write(struct fid_ep *fid, const void *buf,
				      size_t len, fi_addr_t dest_addr,
				      uint64_t addr, uint64_t key)
{
	struct p4f_ep *ep = p4f_alias_of(&fid->fid)->parent;

	return ep->ep_fid.rma->inject(&ep->ep_fid, buf, len, dest_addr, addr,
				      key);
}

static ssize_t p4f_alias_injectdata(struct fid_ep *fid, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key)
{
	struct p4f_ep *ep = p4f_alias_of(&fid->fid)->parent;

	return ep->ep_fid.rma->injectdata(&ep->ep_fid, buf, len, data,
					  dest_addr, addr, key);
}

static struct fi_ops_rma p4f_alias_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = p4f_alias_read,
	.readv = p4f_alias_readv,
	.readmsg = p4f_alias_readmsg,
	.write = p4f_alias_write,
	.writev = p4f_alias_writev,
	.writemsg = p4f_alias_writemsg,
	.inject = p4f_alias_inject_write,
	.writedata = p4f_alias_writedata,
	.injectdata = p4f_alias_injectdata,
};

/* ---- creation ---------------------------------------------------------- */

int p4f_ep_alias_open(struct p4f_ep *ep, struct fi_alias *arg)
{
	uint64_t dir;
	struct p4f_ep *alias;

	if (!arg || !arg->fid)
		return -FI_EINVAL;
	dir = arg->flags & (FI_TRANSMIT | FI_RECV);
	/* fi_endpoint(3): FI_TRANSMIT or FI_RECV, not both */
	if (dir != FI_TRANSMIT && dir != FI_RECV)
		return -FI_EINVAL;
	ep = p4f_ep_data(ep);
	alias = calloc(1, sizeof(*alias));
	if (!alias)
		return -FI_ENOMEM;
	alias->parent = ep;
	alias->domain = ep->domain;
	alias->worker = ep->worker;	/* the parent outlives its aliases */
	alias->info = ep->info;		/* the parent's: never freed here */
	alias->caps = ep->caps;
	alias->tx_op_flags = ep->tx_op_flags;
	alias->rx_op_flags = ep->rx_op_flags;
	if (dir == FI_TRANSMIT)
		alias->tx_op_flags = arg->flags & ~FI_TRANSMIT;
	else
		alias->rx_op_flags = arg->flags & ~FI_RECV;
	atomic_init(&alias->ref, 0);
	alias->ep_fid.fid.fclass = FI_CLASS_EP;
	alias->ep_fid.fid.context = ep->ep_fid.fid.context;
	alias->ep_fid.fid.ops = &p4f_alias_fi_ops;
	alias->ep_fid.ops = &p4f_alias_ep_ops;
	alias->ep_fid.cm = &p4f_alias_cm_ops;
	alias->ep_fid.msg = ep->ep_fid.msg;
	alias->ep_fid.tagged = ep->ep_fid.tagged;
	/* the RMA layer reads its endpoint's state: the alias goes through
	 * the parent's *msg calls with its own flags */
	alias->ep_fid.rma = (ep->ep_fid.rma == &p4f_rma_ops) ?
			    &p4f_alias_rma_ops : ep->ep_fid.rma;
	alias->ep_fid.atomic = ep->ep_fid.atomic;
	alias->ep_fid.collective = ep->ep_fid.collective;
	atomic_fetch_add(&ep->ref, 1);
	*arg->fid = &alias->ep_fid.fid;
	return 0;
}
