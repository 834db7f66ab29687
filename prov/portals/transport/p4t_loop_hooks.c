/*
 * p4t_loop_hooks.c - the loop transport's test hooks (p4t_loop.h): any
 * bytes injected as if a peer had sent them, holding an iface's delivery,
 * failing a link, the queue bound, the counters.
 *
 * Not here: the registry, links, send and progress (p4t_loop.c), the
 * exposure table, pull and push (p4t_loop_rma.c).
 */
#include <config.h>

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t.h"
#include "p4t_loop.h"
#include "p4t_loop_priv.h"
#include "p4_wire.h"
#include "p4u_compiler.h"
#include "p4u_list.h"

/* ---- test hooks (p4t_loop.h) ------------------------------------------- */

static struct p4t_loop_iface *p4t_loop_hook_iface(struct p4t_iface *iface)
{
	return iface && p4t_ops_of(iface) == &p4t_loop_ops ?
	       p4t_loop_iface_of(iface) : NULL;
}

int p4t_loop_inject(struct p4t_iface *dst_, const void *from_addr,
		    size_t from_len, const void *bytes, size_t len)
{
	struct p4t_loop_iface *dst = p4t_loop_hook_iface(dst_);
	struct p4t_loop_conn *conn;
	struct p4t_loop_msg *msg = NULL;
	struct sockaddr_in from;
	int ret;

	if (!dst || (len && !bytes))
		return -FI_EINVAL;
	ret = p4t_loop_addr_parse(from_addr, from_len, &from);
	if (ret)
		return ret;
	if (len > P4W_MAX_MSG)
		return -FI_EMSGSIZE;
	p4t_loop_lock_acquire();
	conn = p4t_loop_conn_find_locked(dst, &from);
	if (!conn) {
		conn = p4t_loop_conn_create_locked(dst, &from, false);
		if (conn)
			(void)p4t_loop_link_pair_locked(conn, false);
	}
	ret = -FI_ENOMEM;
	if (conn)
		msg = p4t_loop_msg_queue_locked(conn, len, &ret);
	if (msg) {
		if (len)
			memcpy(msg->data, bytes, len);
		dst->stats.msgs_injected++;
		ret = 0;
	}
	p4t_loop_lock_release();
	return ret;
}

void p4t_loop_hold(struct p4t_iface *iface_, bool hold)
{
	struct p4t_loop_iface *iface = p4t_loop_hook_iface(iface_);

	if (!iface)
		return;
	p4t_loop_lock_acquire();
	iface->held = hold;
	p4t_loop_iface_signal_locked(iface);
	p4t_loop_lock_release();
}

int p4t_loop_fail_link(struct p4t_iface *iface_, const void *addr,
		       size_t addrlen, int status)
{
	struct p4t_loop_iface *iface = p4t_loop_hook_iface(iface_);
	struct p4t_loop_conn *conn;
	struct sockaddr_in sin;
	int ret;

	if (!iface || status >= 0)
		return -FI_EINVAL;
	ret = p4t_loop_addr_parse(addr, addrlen, &sin);
	if (ret)
		return ret;
	p4t_loop_lock_acquire();
	conn = p4t_loop_conn_find_locked(iface, &sin);
	if (conn)
		p4t_loop_link_fail_locked(conn, status, status);
	p4t_loop_lock_release();
	return conn ? 0 : -FI_ENOENT;
}

void p4t_loop_set_queue_limit(struct p4t_iface *iface_, size_t bytes)
{
	struct p4t_loop_iface *iface = p4t_loop_hook_iface(iface_);

	if (!iface)
		return;
	p4t_loop_lock_acquire();
	iface->queue_limit = bytes ? bytes : P4T_LOOP_QUEUE_LIMIT;
	p4t_loop_lock_release();
}

void p4t_loop_stats_get(struct p4t_iface *iface_, struct p4t_loop_stats *stats)
{
	struct p4t_loop_iface *iface = p4t_loop_hook_iface(iface_);
	struct p4t_loop_msg *msg;

	memset(stats, 0, sizeof(*stats));
	if (!iface)
		return;
	p4t_loop_lock_acquire();
	*stats = iface->stats;
	p4u_list_foreach_entry(&iface->msgq, msg, struct p4t_loop_msg, node) {
		stats->queued_msgs++;
		stats->queued_bytes += msg->len;
	}
	p4t_loop_lock_release();
}
