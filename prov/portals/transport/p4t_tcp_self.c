/*
 * p4t_tcp_self.c - messages an iface sends to its own address: never a
 * socket (DESIGN.md §4), a queue of copies delivered from progress, in
 * order, bounded like a link's send queue; the engine refusing one fails
 * the self link as a malformed message fails a socket.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

int p4t_tcp_self_send(struct p4t_tcp_iface *iface, const void *hdr,
		      size_t hdr_len, const struct iovec *iov, size_t iovcnt,
		      size_t len, unsigned flags)
{
	bool req = flags & P4T_SEND_SEQ;
	struct p4t_tcp_selfmsg *msg;

	if (req && iface->selfq_bytes &&
	    (iface->selfq_bytes >= iface->queue_limit ||
	     len > iface->queue_limit - iface->selfq_bytes)) {
		iface->stats.eagain++;
		return -FI_EAGAIN;
	}
	msg = malloc(sizeof(*msg) + len);
	if (!msg)
		return -FI_ENOMEM;
	msg->len = len;
	memcpy(msg->data, hdr, hdr_len);
	p4t_tcp_iov_copy_out(msg->data + hdr_len, iov, iovcnt, 0,
			     len - hdr_len);
	iface->selfq_bytes += len;
	iface->stats.msgs_sent++;
	iface->stats.bytes_sent += len;
	iface->stats.self_msgs++;
	p4u_list_insert_tail(&iface->selfq, &msg->node);
	p4t_tcp_signal(iface);
	return P4T_DONE;
}

/* The engine refused its own message: the self link fails. */
static void p4t_tcp_self_fail(struct p4t_tcp_iface *iface,
			      struct p4t_tcp_conn *self, int status)
{
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&iface->selfq)))
		free(container_of(node, struct p4t_tcp_selfmsg, node));
	iface->selfq_bytes = 0;
	iface->self = NULL;
	p4t_tcp_mem_forget_conn(self);
	iface->stats.malformed++;
	iface->stats.link_failures++;
	p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: self message refused: %s",
			fi_strerror(-status));
	self->state = P4T_TCP_CONN_FAILED;
	self->fail_ev.status = status;
	p4t_tcp_ev_post(iface, &self->fail_ev);
}

int p4t_tcp_self_run(struct p4t_tcp_iface *iface, int budget)
{
	struct p4t_tcp_conn *self = iface->self;
	struct p4t_tcp_selfmsg *msg;
	struct p4u_list *node;
	int done = 0, ret;

	while (self && done < budget && (node = p4u_list_pop_head(&iface->selfq))) {
		msg = container_of(node, struct p4t_tcp_selfmsg, node);
		iface->selfq_bytes -= msg->len;
		self->busy = true;
		ret = iface->upcalls->recv(iface->upcall_ctx, &self->base,
					   msg->data, msg->len);
		self->busy = false;
		iface->stats.msgs_recv++;
		iface->stats.bytes_recv += msg->len;
		free(msg);
		done++;
		if (ret < 0 && self->state == P4T_TCP_CONN_ESTABLISHED)
			p4t_tcp_self_fail(iface, self, ret);
		self = iface->self;
	}
	return done;
}

struct p4t_tcp_conn *p4t_tcp_self_get(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_conn *conn;

	if (iface->self)
		return iface->self;
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->addr = iface->addr;
	conn->addrlen = iface->addrlen;
	conn->self = true;
	conn->known = true;
	conn->state = P4T_TCP_CONN_ESTABLISHED;
	p4u_list_init(&conn->txq);
	p4u_list_init(&conn->pulls);
	p4u_list_node_init(&conn->active);
	p4u_list_node_init(&conn->backlog);
	p4u_list_node_init(&conn->corked);
	p4u_list_node_init(&conn->fail_ev.node);
	conn->fail_ev.kind = P4T_TCP_EV_CONN_FAILED;
	p4u_list_insert_tail(&iface->conns, &conn->node);
	iface->self = conn;
	return conn;
}
