/*
 * p4e_ini_post.c - posting an initiator operation (p4e_put & co.): the
 * checks, the choice of protocol (docs/design.md §4.1: copied eager,
 * eager holding the caller's buffer, rendezvous, pushed reply), the copy
 * and its bounds (§7.5), and the hand-over to the state machine and the
 * send path in p4e_ini.c.
 *
 * A copy lets the SEND event come as soon as the operation is handed to
 * the transport, but it keeps its operation alive until the target has
 * the payload, which a flood may make long (§7.2: the target takes the
 * header and pulls the payload when a receive matches). So copies are
 * bounded, by count (limits.max_held: operations alive after their SEND)
 * and bytes (copy_mem_max); past either a payload is not copied and its
 * operation holds the caller's buffer, completing at acceptance like a
 * large eager one, so the caller's own credits bound it. Only what must
 * be copied (a VOLATILE MD, compare values) then waits (-FI_EAGAIN).
 */
#include <config.h>

#include <assert.h>
#include <inttypes.h>

#include "p4e_priv.h"
#include "p4e_atomic.h"

static bool p4e_ini_range_ok(const struct p4e_md *md, uint64_t offset,
			     uint64_t length)
{
	return offset <= md->length && length <= md->length - offset;
}

int p4e_ini_check(struct p4e_ni *ni, uint8_t type, const struct p4e_xfer *x)
{
	struct p4e_md *md, *get_md;
	uint32_t peer;
	bool fetch = type == P4W_FETCH || type == P4W_SWAP;

	if (!ni || !x)
		return -FI_EINVAL;
	md = p4u_pool_lookup(&ni->mds, x->md);
	if (!md)
		return -FI_EINVAL;
	if (x->iovcnt) {
		if (x->iovcnt > P4E_XFER_IOV_MAX || !x->iov ||
		    p4e_iov_total(x->iov, x->iovcnt) != x->length)
			return -FI_EINVAL;
	} else if (!p4e_ini_range_ok(md, x->local_offset, x->length)) {
		return -FI_EINVAL;
	}
	if (x->flags & ~(P4E_XFER_HDR_DATA | P4E_XFER_MORE))
		return -FI_EINVAL;
	if (x->length > ni->limits.max_msg_size)
		return -FI_EMSGSIZE;
	if ((unsigned)x->ack_req >= P4E_ACK_REQ_MAX)
		return -FI_EINVAL;
	if (p4e_ni_target_peer(ni, x->target, &peer))
		return -FI_EINVAL;
	if (type == P4W_PUT || type == P4W_GET)
		return 0;
	if ((unsigned)x->atomic_op >= P4E_ATOMIC_OP_MAX ||
	    (unsigned)x->atomic_type >= P4E_ATOMIC_TYPE_MAX)
		return -FI_EINVAL;
	if (!p4e_atomic_valid(x->atomic_op, x->atomic_type, fetch))
		return -FI_EOPNOTSUPP;
	/* only a swap message carries compare values; PtlSwap only swaps */
	if ((type == P4W_SWAP) !=
	    (p4e_op_needs_compare(x->atomic_op) || x->atomic_op == P4E_SWAP))
		return -FI_EINVAL;
	if (x->length % p4e_atomic_type_size(x->atomic_type))
		return -FI_EINVAL;
	if (x->length > (fetch ? ni->limits.max_fetch_atomic_size :
				 ni->limits.max_atomic_size))
		return -FI_EMSGSIZE;
	if (!fetch)
		return 0;
	get_md = p4u_pool_lookup(&ni->mds, x->get_md);
	if (!get_md || !p4e_ini_range_ok(get_md, x->get_local_offset,
					 x->length))
		return -FI_EINVAL;
	if (type == P4W_SWAP && p4e_op_needs_compare(x->atomic_op)) {
		if (!x->operand && x->length)
			return -FI_EINVAL;
		/* compare values travel in a copy with the data */
		if (x->length > ni->copies.max_len / 2)
			return -FI_EMSGSIZE;
	}
	return 0;
}

/*
 * No copy now (max_held operations live after their SEND, or the copies'
 * bytes spent): said once in the log, counted. 0 when the operation can
 * hold the caller's buffer instead.
 */
static int p4e_ini_copy_refused(struct p4e_op *op, bool must)
{
	struct p4e_ni *ni = op->ni;

	ni->sr[P4E_SR_COPY_REFUSED]++;
	if (!(ni->warned & P4E_WARN_HELD)) {
		ni->warned |= P4E_WARN_HELD;
		p4u_warn(P4U_LOG_ENGINE, "initiator: %u operations live on "
			 "after completing (bound %u) in %" PRIu64 " bytes of "
			 "copies (bound %" PRIu64 "): payloads are not copied "
			 "until targets take some; sends hold their buffers "
			 "till accepted, volatile ones wait", ni->held,
			 ni->limits.max_held, ni->copies.bytes,
			 ni->copies.max_bytes);
	}
	return must ? -FI_EAGAIN : 0;
}

/*
 * Copy the payload (and a swap's compare values): into the operation
 * itself when small, else into a block sized to it (p4e_copy.c). What no
 * block holds is not copied: the op holds the caller's buffer instead
 * (SEND at acceptance; Portals honours VOLATILE only up to
 * max_volatile_size), except compare values, which live in no MD.
 */
static int p4e_ini_copy(struct p4e_op *op, const struct p4e_xfer *x)
{
	struct p4e_ni *ni = op->ni;
	bool compare = op->type == P4W_SWAP &&
		       p4e_op_needs_compare(op->atomic_op);
	bool must = compare || (op->md->options & P4E_MD_VOLATILE);
	uint64_t need = op->length * (compare ? 2 : 1);
	void *start;
	uint32_t iovcnt;
	uint64_t off;

	if (need > ni->copies.max_len)
		return compare ? -FI_EMSGSIZE : 0;
	if (ni->held >= ni->limits.max_held)
		return p4e_ini_copy_refused(op, must);
	if (need <= P4E_OP_SMALL) {
		op->bounce = op->small;
	} else {
		op->bounce = p4e_copy_alloc(&ni->copies, need);
		if (!op->bounce)
			return p4e_ini_copy_refused(op, must);
	}
	p4e_op_region(op, &start, &iovcnt, &off);
	p4e_region_copy_out(start, iovcnt, off, op->bounce, op->length);
	op->bounce_len = need;
	if (compare && op->length)
		memcpy((uint8_t *)op->bounce + op->length, x->operand,
		       op->length);
	op->copied = true;
	/* held from the copy on: its SEND needs nothing of the target (it
	 * comes at once, or on a link being set up once the copy is
	 * written, §7.6), so it counts against max_held already */
	op->completed = true;
	ni->held++;
	return 0;
}

/* Choose eager / copy / rendezvous / push and prepare the op for it. */
static int p4e_ini_prepare(struct p4e_op *op, const struct p4e_xfer *x)
{
	/* the sizes of the transport the peer's link is on */
	const struct p4e_xport *xp = op->peer->xp;
	struct iovec iov[P4E_IOV_MAX];
	void *start;
	uint32_t iovcnt;
	uint64_t off;
	size_t cnt;
	int ret;

	p4e_op_region(op, &start, &iovcnt, &off);
	if (op->type == P4W_GET) {
		if (op->length <= xp->eager_size)
			return 0;
		/* a large reply is pushed straight into our buffer */
		cnt = p4e_region_iov(start, iovcnt, off, op->length, iov,
				     P4E_IOV_MAX);
		op->mem_iface = xp->iface;
		ret = p4t_mem_expose(op->mem_iface, op->peer->conn, iov, cnt,
				     P4T_ACCESS_WRITE, &op->cookie, &op->mem);
		if (!ret)
			op->rflags |= P4W_RF_PUSH;
		return ret;
	}
	if (op->type == P4W_PUT && op->length > xp->eager_size) {
		cnt = p4e_region_iov(start, iovcnt, off, op->length, iov,
				     P4E_IOV_MAX);
		op->mem_iface = xp->iface;
		ret = p4t_mem_expose(op->mem_iface, op->peer->conn, iov, cnt,
				     P4T_ACCESS_READ, &op->cookie, &op->mem);
		if (!ret)
			op->proto = P4W_PROTO_RDZV;
		return ret;
	}
	/* fetching ops and volatile or small payloads are copied */
	if (op->type == P4W_FETCH || op->type == P4W_SWAP ||
	    (op->md->options & P4E_MD_VOLATILE) || op->length <= xp->copy_size)
		return p4e_ini_copy(op, x);
	return 0;
}

static int p4e_ini_fill(struct p4e_op *op, uint8_t type,
			const struct p4e_xfer *x, struct p4e_npeer *np)
{
	op->ni = np->ni;
	op->peer = np;
	op->type = type;
	op->ack_req = type == P4W_GET ? P4E_NO_ACK_REQ : x->ack_req;
	op->atomic_op = x->atomic_op;
	op->atomic_type = x->atomic_type;
	op->proto = P4W_PROTO_EAGER;
	op->pt_index = x->pt_index;
	op->target = x->target;
	op->local_offset = x->local_offset;
	op->length = x->length;
	op->get_local_offset = x->get_local_offset;
	op->match_bits = x->match_bits;
	op->remote_offset = x->remote_offset;
	op->hdr_data = x->hdr_data;
	op->user_ptr = x->user_ptr;
	op->user_flags = x->user_flags;
	op->xflags = x->flags;
	if (x->flags & P4E_XFER_HDR_DATA)
		op->rflags |= P4W_RF_HDR_DATA;
	/* an ACCEPT ack rides on the cumulative acknowledgement */
	op->want_resp = (type != P4W_PUT && type != P4W_ATOMIC) ||
			(op->ack_req != P4E_NO_ACK_REQ &&
			 op->ack_req != P4E_ACK_ACCEPT);
	op->iovcnt = (uint32_t)x->iovcnt;
	if (!x->iovcnt)
		return 0;
	/* only operations with an iovec pay for one */
	op->iovbuf = p4u_pool_alloc_raw(&np->ni->iovbufs);
	if (!op->iovbuf)
		return -FI_EAGAIN;
	memcpy(op->iovbuf->iov, x->iov, x->iovcnt * sizeof(*x->iov));
	return 0;
}

/* A post that failed after its op was taken: back, nothing else changed. */
static void p4e_ini_unpost(struct p4e_op *op)
{
	struct p4e_ni *ni = op->ni;

	p4e_op_copy_drop(op);
	if (op->iovbuf)
		p4u_pool_free(&ni->iovbufs, op->iovbuf);
	if (op->completed)
		ni->held--;
	p4u_pool_free(&ni->ops, op);
}

int p4e_ini_post(struct p4e_ni *ni, uint8_t type, const struct p4e_xfer *x)
{
	struct p4e_npeer *np;
	struct p4e_op *op;
	uint32_t peer;
	int ret;

	ret = p4e_ini_check(ni, type, x);
	if (ret)
		return ret;
	p4e_ni_target_peer(ni, x->target, &peer);
	np = p4e_npeer_get(ni, peer);
	if (!np)
		return -FI_ENOMEM;
	ret = p4e_npeer_connect(np);
	if (ret)
		return ret;
	op = p4u_pool_alloc(&ni->ops);
	if (!op)
		return -FI_EAGAIN;
	p4u_list_node_init(&op->link);
	op->ni = ni;
	ret = p4e_ini_fill(op, type, x, np);
	op->md = p4u_pool_lookup(&ni->mds, x->md);
	if (type == P4W_FETCH || type == P4W_SWAP)
		op->get_md = p4u_pool_lookup(&ni->mds, x->get_md);
	if (!ret)
		ret = p4e_ini_prepare(op, x);
	if (ret) {
		p4e_ini_unpost(op);
		return ret;
	}
	/* a rendezvous always ends with the target's ACK */
	if (op->proto == P4W_PROTO_RDZV)
		op->want_resp = true;
	op->md_done = false;	/* until its last event: p4e_op_md_done */
	op->md->pending++;
	if (op->get_md)
		op->get_md->pending++;
	op->seq = np->tx_seq++;
	p4e_op_step(op, P4E_OPE_POST, NULL);
	p4e_ini_flush(np);
	return 0;
}

int p4e_put(struct p4e_ni *ni, const struct p4e_xfer *xfer)
{
	P4E_NI_ASSERT(ni);
	return p4e_ini_post(ni, P4W_PUT, xfer);
}

int p4e_get(struct p4e_ni *ni, const struct p4e_xfer *xfer)
{
	P4E_NI_ASSERT(ni);
	return p4e_ini_post(ni, P4W_GET, xfer);
}

int p4e_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer)
{
	P4E_NI_ASSERT(ni);
	return p4e_ini_post(ni, P4W_ATOMIC, xfer);
}

int p4e_fetch_atomic(struct p4e_ni *ni, const struct p4e_xfer *xfer)
{
	P4E_NI_ASSERT(ni);
	return p4e_ini_post(ni, P4W_FETCH, xfer);
}

int p4e_swap(struct p4e_ni *ni, const struct p4e_xfer *xfer)
{
	P4E_NI_ASSERT(ni);
	return p4e_ini_post(ni, P4W_SWAP, xfer);
}
