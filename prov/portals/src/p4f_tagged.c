/*
 * p4f_tagged.c - fi_tagged: tagged sends and receives on the endpoint's TAG
 * portal table entry (tag = match bits, ignore = ignore bits), incl.
 * FI_PEEK, FI_CLAIM and FI_DISCARD. The work is in p4f_xfer.c; this file
 * only maps the calls.
 */
#include <config.h>

#include "p4f.h"

static ssize_t p4f_tagged_recv(struct fid_ep *fid, void *buf, size_t len,
			       void *desc, fi_addr_t src_addr, uint64_t tag,
			       uint64_t ignore, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = src_addr, .tag = tag,
		.ignore = ignore, .context = context, .flags = ep->rx_op_flags,
	};

	return p4f_xfer_recv(ep, P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_recvv(struct fid_ep *fid, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t src_addr,
				uint64_t tag, uint64_t ignore, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct p4f_xfer_args a = {
		.iov = iov, .count = count, .addr = src_addr, .tag = tag,
		.ignore = ignore, .context = context, .flags = ep->rx_op_flags,
	};

	return p4f_xfer_recv(ep, P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_recvmsg(struct fid_ep *fid,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	struct p4f_xfer_args a;

	if (!msg)
		return -FI_EINVAL;
	a = (struct p4f_xfer_args){
		.iov = msg->msg_iov, .count = msg->iov_count,
		.addr = msg->addr, .tag = msg->tag, .ignore = msg->ignore,
		.context = msg->context, .flags = flags,
	};
	return p4f_xfer_recv(p4f_ep_of(fid), P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_send(struct fid_ep *fid, const void *buf, size_t len,
			       void *desc, fi_addr_t dest_addr, uint64_t tag,
			       void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .tag = tag,
		.context = context, .flags = ep->tx_op_flags,
	};

	return p4f_xfer_send(ep, P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_sendv(struct fid_ep *fid, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest_addr,
				uint64_t tag, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct p4f_xfer_args a = {
		.iov = iov, .count = count, .addr = dest_addr, .tag = tag,
		.context = context, .flags = ep->tx_op_flags,
	};

	return p4f_xfer_send(ep, P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_sendmsg(struct fid_ep *fid,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	struct p4f_xfer_args a;

	if (!msg)
		return -FI_EINVAL;
	a = (struct p4f_xfer_args){
		.iov = msg->msg_iov, .count = msg->iov_count,
		.addr = msg->addr, .data = msg->data, .tag = msg->tag,
		.context = msg->context, .flags = flags,
	};
	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_inject(struct fid_ep *fid, const void *buf,
				 size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .tag = tag,
		.flags = FI_INJECT | P4F_XFER_INJECT_CALL,
	};

	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_senddata(struct fid_ep *fid, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t tag,
				   void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .data = data,
		.tag = tag, .context = context,
		.flags = ep->tx_op_flags | FI_REMOTE_CQ_DATA,
	};

	return p4f_xfer_send(ep, P4F_PT_TAG, &a);
}

static ssize_t p4f_tagged_injectdata(struct fid_ep *fid, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest_addr, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .data = data,
		.tag = tag, .flags = FI_INJECT | FI_REMOTE_CQ_DATA |
			 P4F_XFER_INJECT_CALL,
	};

	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_TAG, &a);
}

struct fi_ops_tagged p4f_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = p4f_tagged_recv,
	.recvv = p4f_tagged_recvv,
	.recvmsg = p4f_tagged_recvmsg,
	.send = p4f_tagged_send,
	.sendv = p4f_tagged_sendv,
	.sendmsg = p4f_tagged_sendmsg,
	.inject = p4f_tagged_inject,
	.senddata = p4f_tagged_senddata,
	.injectdata = p4f_tagged_injectdata,
};
