/*
 * p4f_rma.c - fi_rma(3) on the engine (docs/design.md §3.3): fi_write* is a put
 * and fi_read* a get to the peer's RMA PT, where the MR with the key
 * matches (p4f_mr.c). Remote addresses are virtual addresses with
 * FI_MR_VIRT_ADDR and offsets otherwise; the engine applies either.
 *
 * Completion: a write completes when the target has placed the data (an
 * acceptance ack, which rides on the cumulative sequence acks unless the
 * target refused it), whatever level was asked: that is the only moment a
 * bad key, range or access can still reach the initiator as an error
 * completion. A read completes when its data is in place. Both report to
 * the endpoint's RMA sink (p4f_sink_rma.c).
 *
 * FI_FENCE: a fenced operation is refused with -FI_EAGAIN (after a round
 * of progress) while any operation of the endpoint is outstanding, so it
 * starts only after all earlier ones completed.
 *
 * Not here: atomics (p4f_atomic.c), the target side (p4f_mr.c,
 * p4f_sink_rma.c).
 */
#include <config.h>

#include <string.h>

#include "p4f.h"
#include "p4u_iov.h"

#define P4F_RMA_OP_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | \
			  FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
			  FI_REMOTE_CQ_DATA | FI_FENCE | FI_MORE | \
			  P4F_XFER_INJECT_CALL)

/* The endpoint's default op flags a call without flags applies: the
 * data flag only comes with the *data calls. */
#define P4F_RMA_DEF_FLAGS(ep) ((ep)->tx_op_flags & P4F_RMA_OP_FLAGS & \
			       ~(uint64_t)FI_REMOTE_CQ_DATA)

static bool p4f_rma_iov_ok(const struct iovec *iov, size_t count,
			   size_t *len_p)
{
	return count <= P4F_IOV_LIMIT && !p4u_iov_len(iov, count, len_p);
}

int p4f_rma_prep_locked(struct p4f_ep *ep, const struct p4f_rma_args *a,
			bool write, struct p4e_xfer *x)
{
	uint64_t flags = a->flags | FI_RMA | (write ? FI_WRITE : FI_READ);
	size_t len;
	int ret;

	p4f_worker_assert_held(ep->worker);
	if (a->flags & ~P4F_RMA_OP_FLAGS & ~(uint64_t)FI_TRIGGER)
		return -FI_EBADFLAGS;
	if (!p4f_rma_iov_ok(a->iov, a->count, &len))
		return -FI_EINVAL;
	if (!write && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && len > ep->inject_size)
		return -FI_EINVAL;
	if (len > ep->info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	memset(x, 0, sizeof(*x));
	ret = p4f_av_peer(ep->av, a->addr, &x->target);
	if (ret)
		return ret;
	x->pt_index = P4F_PT_RMA;
	x->match_bits = a->key;
	x->remote_offset = a->raddr;
	x->get_md = P4E_HANDLE_NONE;
	x->user_ptr = a->context;
	x->user_flags = flags;
	x->length = len;
	if (write && (flags & FI_REMOTE_CQ_DATA)) {
		x->hdr_data = a->data;
		x->flags |= P4E_XFER_HDR_DATA;
	}
	if (flags & FI_MORE)	/* may wait for the next one (§8.5) */
		x->flags |= P4E_XFER_MORE;
	/* writes complete on the target's acceptance (see the header) */
	x->ack_req = write ? P4E_ACK_ACCEPT : P4E_NO_ACK_REQ;
	/* inject copies at the call: the engine's volatile MD */
	x->md = (flags & FI_INJECT) ? ep->md_rma_volatile : ep->md_rma;
	if (a->count == 1) {
		x->local_offset = (uint64_t)(uintptr_t)a->iov[0].iov_base;
	} else if (a->count > 1) {
		x->iov = a->iov;
		x->iovcnt = a->count;
	}
	return 0;
}

/* FI_FENCE and the tx queue depth: -FI_EAGAIN after one round of
 * progress, so a caller spinning on it drives completions. */
static bool p4f_rma_room_locked(struct p4f_ep *ep, uint64_t flags)
{
	if (ep->tx_pending < ep->tx_size &&
	    (!(flags & FI_FENCE) || !ep->tx_pending))
		return true;
	p4f_worker_progress_locked(ep->worker);
	return false;
}

static ssize_t p4f_rma_post(struct p4f_ep *ep, const struct p4f_rma_args *a,
			    bool write)
{
	struct p4e_xfer x;
	ssize_t ret;

	/* triggered operations are built by p4f_rma_prep_locked too, but
	 * handed to the engine's triggered list (p4f_trigger.c) */
	if (a->flags & FI_TRIGGER)
		return p4f_trigger_rma(ep, a, write);
	ep = p4f_ep_data(ep);	/* an alias: its flags are in a already */
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	p4f_ep_lock(ep);
	ret = p4f_rma_prep_locked(ep, a, write, &x);
	if (ret)
		goto out;
	if (!p4f_rma_room_locked(ep, a->flags)) {
		ret = -FI_EAGAIN;
		goto out;
	}
	/* counted first: the completion may come before the call returns */
	ep->tx_pending++;
	ret = write ? p4e_put(ep->ni, &x) : p4e_get(ep->ni, &x);
	if (ret)
		ep->tx_pending--;
	if (ret == -FI_EAGAIN)
		p4f_worker_progress_locked(ep->worker);
out:
	p4f_ep_unlock(ep);
	return ret;
}

ssize_t p4f_rma_write_args(struct p4f_ep *ep, const struct p4f_rma_args *a)
{
	return p4f_rma_post(ep, a, true);
}

ssize_t p4f_rma_read_args(struct p4f_ep *ep, const struct p4f_rma_args *a)
{
	return p4f_rma_post(ep, a, false);
}

/* ---- fi_ops_rma ------------------------------------------------------- */

static struct p4f_ep *p4f_rma_ep(struct fid_ep *fid)
{
	return container_of(fid, struct p4f_ep, ep_fid);
}

static ssize_t p4f_rma_msg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			   uint64_t flags, bool write)
{
	struct p4f_rma_args a = { 0 };
	size_t len;

	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	/* the remote range must cover the local buffers */
	if (!p4f_rma_iov_ok(msg->msg_iov, msg->iov_count, &len) ||
	    msg->rma_iov[0].len < len)
		return -FI_EINVAL;
	a.iov = msg->msg_iov;
	a.count = msg->iov_count;
	a.addr = msg->addr;
	a.raddr = msg->rma_iov[0].addr;
	a.key = msg->rma_iov[0].key;
	a.data = msg->data;
	a.context = msg->context;
	a.flags = flags;
	return p4f_rma_post(p4f_rma_ep(fid), &a, write);
}

static ssize_t p4f_rma_read(struct fid_ep *fid, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct p4f_ep *ep = p4f_rma_ep(fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct p4f_rma_args a = {
		.iov = &iov, .count = 1, .addr = src_addr, .raddr = addr,
		.key = key, .context = context,
		.flags = P4F_RMA_DEF_FLAGS(ep) & ~(uint64_t)FI_INJECT,
	};

	(void)desc;
	return p4f_rma_post(ep, &a, false);
}

static ssize_t p4f_rma_readv(struct fid_ep *fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct p4f_ep *ep = p4f_rma_ep(fid);
	struct p4f_rma_args a = {
		.iov = iov, .count = count, .addr = src_addr, .raddr = addr,
		.key = key, .context = context,
		.flags = P4F_RMA_DEF_FLAGS(ep) & ~(uint64_t)FI_INJECT,
	};

	(void)desc;
	return p4f_rma_post(ep, &a, false);
}

static ssize_t p4f_rma_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			       uint64_t flags)
{
	return p4f_rma_msg(fid, msg, flags, false);
}

static ssize_t p4f_rma_write(struct fid_ep *fid, const void *buf, size_t len,
			     void *desc, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, void *context)
{
	struct p4f_ep *ep = p4f_rma_ep(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_rma_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .raddr = addr,
		.key = key, .context = context,
		.flags = P4F_RMA_DEF_FLAGS(ep),
	};

	(void)desc;
	return p4f_rma_post(ep, &a, true);
}

static ssize_t p4f_rma_writev(struct fid_ep *fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	struct p4f_ep *ep = p4f_rma_ep(fid);
	struct p4f_rma_args a = {
		.iov = iov, .count = count, .addr = dest_addr, .raddr = addr,
		.key = key, .context = context,
		.flags = P4F_RMA_DEF_FLAGS(ep),
	};

	(void)desc;
	return p4f_rma_post(ep, &a, true);
}

static ssize_t p4f_rma_writemsg(struct fid_ep *fid,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	return p4f_rma_msg(fid, msg, flags, true);
}

static ssize_t p4f_rma_inject(struct fid_ep *fid, const void *buf, size_t len,
			      fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_rma_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .raddr = addr,
		.key = key,
		.flags = FI_INJECT | P4F_XFER_INJECT_CALL,
	};

	return p4f_rma_post(p4f_rma_ep(fid), &a, true);
}

static ssize_t p4f_rma_writedata(struct fid_ep *fid, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, void *context)
{
	struct p4f_ep *ep = p4f_rma_ep(fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_rma_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .raddr = addr,
		.key = key, .data = data, .context = context,
		.flags = P4F_RMA_DEF_FLAGS(ep) |
			 FI_REMOTE_CQ_DATA,
	};

	(void)desc;
	return p4f_rma_post(ep, &a, true);
}

static ssize_t p4f_rma_injectdata(struct fid_ep *fid, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr, uint64_t addr,
				  uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct p4f_rma_args a = {
		.iov = &iov, .count = 1, .addr = dest_addr, .raddr = addr,
		.key = key, .data = data,
		.flags = FI_INJECT | P4F_XFER_INJECT_CALL | FI_REMOTE_CQ_DATA,
	};

	return p4f_rma_post(p4f_rma_ep(fid), &a, true);
}

struct fi_ops_rma p4f_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = p4f_rma_read,
	.readv = p4f_rma_readv,
	.readmsg = p4f_rma_readmsg,
	.write = p4f_rma_write,
	.writev = p4f_rma_writev,
	.writemsg = p4f_rma_writemsg,
	.inject = p4f_rma_inject,
	.writedata = p4f_rma_writedata,
	.injectdata = p4f_rma_injectdata,
};
