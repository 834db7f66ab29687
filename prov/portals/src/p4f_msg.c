/*
 * p4f_msg.c - fi_msg: untagged sends and receives (incl. FI_MULTI_RECV
 * buffers) on the endpoint's MSG portal table entry. The work is in
 * p4f_xfer.c; this file only maps the calls.
 */
#include <config.h>

#include "p4f.h"

static ssize_t p4f_msg_recv(struct fid_ep *fid, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = src_addr,
		.context = context, .flags = ep->rx_op_flags,
	};

	return p4f_xfer_recv(ep, P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_recvv(struct fid_ep *fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct p4f_xfer_args a = {
		.iov = iov, .count = count, .addr = src_addr,
		.context = context, .flags = ep->rx_op_flags,
	};

	return p4f_xfer_recv(ep, P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_recvmsg(struct fid_ep *fid, const struct fi_msg *msg,
			       uint64_t flags)
{
	struct p4f_xfer_args a;

	if (!msg)
		return -FI_EINVAL;
	a = (struct p4f_xfer_args){
		.iov = msg->msg_iov, .count = msg->iov_count,
		.addr = msg->addr, .context = msg->context, .flags = flags,
	};
	return p4f_xfer_recv(p4f_ep_of(fid), P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_send(struct fid_ep *fid, const void *buf, size_t len,
			    void *desc, fi_addr_t dest_addr, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr,
		.context = context, .flags = ep->tx_op_flags,
	};

	return p4f_xfer_send(ep, P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_sendv(struct fid_ep *fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest_addr,
			     void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct p4f_xfer_args a = {
		.iov = iov, .count = count, .addr = dest_addr,
		.context = context, .flags = ep->tx_op_flags,
	};

	return p4f_xfer_send(ep, P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_sendmsg(struct fid_ep *fid, const struct fi_msg *msg,
			       uint64_t flags)
{
	struct p4f_xfer_args a;

	if (!msg)
		return -FI_EINVAL;
	a = (struct p4f_xfer_args){
		.iov = msg->msg_iov, .count = msg->iov_count,
		.addr = msg->addr, .data = msg->data,
		.context = msg->context, .flags = flags,
	};
	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_inject(struct fid_ep *fid, const void *buf, size_t len,
			      fi_addr_t dest_addr)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr,
		.flags = FI_INJECT | P4F_XFER_INJECT_CALL,
	};

	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_senddata(struct fid_ep *fid, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest_addr, void *context)
{
	struct p4f_ep *ep = p4f_ep_of(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .data = data,
		.context = context,
		.flags = ep->tx_op_flags | FI_REMOTE_CQ_DATA,
	};

	return p4f_xfer_send(ep, P4F_PT_MSG, &a);
}

static ssize_t p4f_msg_injectdata(struct fid_ep *fid, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_xfer_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .data = data,
		.flags = FI_INJECT | FI_REMOTE_CQ_DATA |
			 P4F_XFER_INJECT_CALL,
	};

	return p4f_xfer_send(p4f_ep_of(fid), P4F_PT_MSG, &a);
}

struct fi_ops_msg p4f_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = p4f_msg_recv,
	.recvv = p4f_msg_recvv,
	.recvmsg = p4f_msg_recvmsg,
	.send = p4f_msg_send,
	.sendv = p4f_msg_sendv,
	.sendmsg = p4f_msg_sendmsg,
	.inject = p4f_msg_inject,
	.senddata = p4f_msg_senddata,
	.injectdata = p4f_msg_injectdata,
};
