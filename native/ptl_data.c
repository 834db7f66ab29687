/*
 * ptl_data.c - data movement: PtlPut, PtlGet, PtlAtomic, PtlFetchAtomic,
 * PtlSwap, through the two entry points of ptl_data.h that the triggered
 * forms in ptl_trig.c share, so each call's arguments are mapped once.
 * Arguments are checked here, translated into a struct p4e_xfer and handed
 * to the engine; when the engine's operation slots are full the call
 * progresses and retries (Portals has no "try again" return).
 */
#include <string.h>

#include "ptl_data.h"

/* Longest sleep of a call waiting for an operation slot (see below). */
#define PTL_XFER_RETRY_MS	1

/* Every argument of a data-movement call, whichever of them it has. */
struct ptl_xfer_args {
	enum ptl_xfer_kind kind;
	ptl_handle_md_t md;		/* put side (or get's sink) */
	ptl_size_t local_offset;
	ptl_size_t length;
	ptl_handle_md_t get_md;		/* fetch / swap: old values */
	bool get_md_used;
	ptl_size_t get_local_offset;
	const void *operand;
	ptl_ack_req_t ack_req;
	ptl_process_t target;
	ptl_pt_index_t pt_index;
	ptl_match_bits_t match_bits;
	ptl_size_t remote_offset;
	void *user_ptr;
	ptl_hdr_data_t hdr_data;
	ptl_op_t op;
	ptl_datatype_t type;
	const struct ptl_xfer_trig *trig;	/* NULL: post now */
};

static int ptl_xfer_md(struct ptl_ni **ni_p, ptl_handle_md_t h, uint64_t *md_p,
		       unsigned *options_p)
{
	struct ptl_ni *ni = NULL;
	struct ptl_slot *slot = ptl_obj_lookup(h, PTL_HT_MD, &ni);

	if (!slot || (*ni_p && *ni_p != ni))
		return PTL_ARG_INVALID;
	*ni_p = ni;
	*md_p = slot->eh;
	if (options_p)
		*options_p = slot->md_options;
	return PTL_OK;
}

/*
 * The size limits of ptl_ni_limits_t that bound one call (the reference
 * header's comments): a message, an atomic, a fetching atomic, and a put
 * or atomic from a PTL_MD_VOLATILE MD. Checked here, before anything is
 * queued, so a refused call sends nothing; the engine would refuse some
 * of them later with a generic failure (PTL_FAIL) instead.
 */
static bool ptl_xfer_size_ok(const struct ptl_ni *ni,
			     const struct ptl_xfer_args *a, unsigned md_options)
{
	const ptl_ni_limits_t *l = &ni->limits;

	if (a->length > l->max_msg_size)
		return false;
	switch (a->kind) {
	case PTL_XFER_ATOMIC:
		if (a->length > l->max_atomic_size)
			return false;
		break;
	case PTL_XFER_FETCH:
	case PTL_XFER_SWAP:
		if (a->length > l->max_fetch_atomic_size)
			return false;
		break;
	case PTL_XFER_GET:
		return true;	/* nothing leaves the MD: volatile is moot */
	default:
		break;
	}
	return !(md_options & PTL_MD_VOLATILE) ||
	       a->length <= l->max_volatile_size;
}

static bool ptl_xfer_op_ok(const struct ptl_xfer_args *a)
{
	bool swap_op = a->op >= PTL_SWAP && a->op <= PTL_MSWAP;

	bool real = a->type == PTL_FLOAT || a->type >= PTL_DOUBLE;

	if (a->op >= PTL_OP_LAST || a->type >= PTL_DATATYPE_LAST)
		return false;
	/* the engine also takes libfabric's logical ops on floating types;
	 * Portals does not define them */
	if (real && (a->op == PTL_LOR || a->op == PTL_LAND ||
		     a->op == PTL_LXOR))
		return false;
	switch (a->kind) {
	case PTL_XFER_ATOMIC:
		return !swap_op && p4e_atomic_valid(a->op, a->type, false);
	case PTL_XFER_FETCH:
		return !swap_op && p4e_atomic_valid(a->op, a->type, true);
	case PTL_XFER_SWAP:
		return swap_op && p4e_atomic_valid(a->op, a->type, true);
	default:
		return true;
	}
}

static int ptl_xfer_engine(struct ptl_ni *ni, const struct ptl_xfer_args *a,
			   const struct p4e_xfer *x, const struct p4e_trig *t)
{
	switch (a->kind) {
	case PTL_XFER_PUT:
		return t ? p4e_trig_put(ni->eni, x, t) : p4e_put(ni->eni, x);
	case PTL_XFER_GET:
		return t ? p4e_trig_get(ni->eni, x, t) : p4e_get(ni->eni, x);
	case PTL_XFER_ATOMIC:
		return t ? p4e_trig_atomic(ni->eni, x, t) :
			   p4e_atomic(ni->eni, x);
	case PTL_XFER_FETCH:
		return t ? p4e_trig_fetch_atomic(ni->eni, x, t) :
			   p4e_fetch_atomic(ni->eni, x);
	default:
		return t ? p4e_trig_swap(ni->eni, x, t) : p4e_swap(ni->eni, x);
	}
}

static int ptl_xfer_post(const struct ptl_xfer_args *a)
{
	bool triggered = a->trig != NULL;
	struct ptl_ni *ni = NULL;
	struct p4e_xfer x;
	struct p4e_trig trig;
	uint32_t abort_gen, ni_handle;
	unsigned md_options = 0;
	int ret = ptl_enter();

	if (ret)
		return ret;
	memset(&x, 0, sizeof(x));
	memset(&trig, 0, sizeof(trig));
	ret = ptl_xfer_md(&ni, a->md, &x.md, &md_options);
	if (!ret && a->get_md_used)
		ret = ptl_xfer_md(&ni, a->get_md, &x.get_md, NULL);
	if (ret)
		goto out;
	if (a->ack_req > PTL_OC_ACK_REQ || !ptl_xfer_op_ok(a) ||
	    (a->kind == PTL_XFER_SWAP && !a->operand &&
	     a->op != PTL_SWAP) ||
	    !ptl_xfer_size_ok(ni, a, md_options) ||
	    ptl_ni_peer(ni, a->target, &x.target) ||
	    a->pt_index > PTL_PT_ANY - 1) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (triggered) {
		if (a->trig->ct == PTL_CT_NONE ||
		    ptl_ct_lookup(ni, a->trig->ct, &trig.ct)) {
			ret = PTL_ARG_INVALID;
			goto out;
		}
		trig.threshold = a->trig->threshold;
	}
	x.local_offset = a->local_offset;
	x.length = a->length;
	x.get_local_offset = a->get_local_offset;
	x.operand = a->operand;
	x.ack_req = (enum p4e_ack_req)a->ack_req;	/* same values */
	x.pt_index = a->pt_index;
	x.match_bits = a->match_bits;
	x.remote_offset = a->remote_offset;
	x.hdr_data = a->hdr_data;
	x.user_ptr = a->user_ptr;
	x.atomic_op = (enum p4e_atomic_op)a->op;	/* same values */
	x.atomic_type = (enum p4e_atomic_type)a->type;
	x.flags = P4E_XFER_HDR_DATA;
	abort_gen = ptl_lib.abort_gen;
	ni_handle = ni->handle;
	for (;;) {
		ret = ptl_xfer_engine(ni, a, &x, triggered ? &trig : NULL);
		if (ret != -FI_EAGAIN)
			break;
		/* slots or transport queues full: drain and retry */
		if (ptl_lib.abort_gen != abort_gen) {
			ptl_leave();
			return PTL_ABORTED;
		}
		/*
		 * A slot the worker's thread frees tells nobody when the MD
		 * has neither EQ nor CT (and the thread may take the worker
		 * fd's wake-up first): the wait is bounded.
		 */
		if (ptl_progress_locked() <= 0)
			ptl_wait_locked(ptl_now_ms() + PTL_XFER_RETRY_MS);
		ni = ptl_ni_lookup(ni_handle);
		if (!ni) {
			ptl_leave();
			return PTL_ARG_INVALID;	/* NI closed meanwhile */
		}
	}
	ret = ptl_errno(ret);
out:
	ptl_leave();
	return ret;
}

int ptl_xfer_post_put(enum ptl_xfer_kind kind, ptl_handle_md_t md_handle,
		      ptl_size_t local_offset, ptl_size_t length,
		      ptl_ack_req_t ack_req, ptl_process_t target_id,
		      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		      ptl_size_t remote_offset, void *user_ptr,
		      ptl_hdr_data_t hdr_data, ptl_op_t operation,
		      ptl_datatype_t datatype,
		      const struct ptl_xfer_trig *trig)
{
	struct ptl_xfer_args a = {
		.kind = kind, .md = md_handle,
		.local_offset = local_offset, .length = length,
		.ack_req = ack_req, .target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.op = operation, .type = datatype, .trig = trig,
	};

	return ptl_xfer_post(&a);
}

int ptl_xfer_post_fetch(enum ptl_xfer_kind kind,
			ptl_handle_md_t get_md_handle,
			ptl_size_t local_get_offset,
			ptl_handle_md_t put_md_handle,
			ptl_size_t local_put_offset, ptl_size_t length,
			ptl_process_t target_id, ptl_pt_index_t pt_index,
			ptl_match_bits_t match_bits, ptl_size_t remote_offset,
			void *user_ptr, ptl_hdr_data_t hdr_data,
			const void *operand, ptl_op_t operation,
			ptl_datatype_t datatype,
			const struct ptl_xfer_trig *trig)
{
	struct ptl_xfer_args a = {
		.kind = kind, .md = put_md_handle,
		.local_offset = local_put_offset, .length = length,
		.get_md = get_md_handle, .get_md_used = true,
		.get_local_offset = local_get_offset,
		.target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.operand = operand, .op = operation, .type = datatype,
		.trig = trig,
	};

	return ptl_xfer_post(&a);
}

PTL_EXPORT int PtlPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		      ptl_size_t length, ptl_ack_req_t ack_req,
		      ptl_process_t target_id, ptl_pt_index_t pt_index,
		      ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		      void *user_ptr, ptl_hdr_data_t hdr_data)
{
	return ptl_xfer_post_put(PTL_XFER_PUT, md_handle, local_offset, length,
				 ack_req, target_id, pt_index, match_bits,
				 remote_offset, user_ptr, hdr_data, 0, 0,
				 NULL);
}

PTL_EXPORT int PtlGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		      ptl_size_t length, ptl_process_t target_id,
		      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		      ptl_size_t remote_offset, void *user_ptr)
{
	return ptl_xfer_post_put(PTL_XFER_GET, md_handle, local_offset, length,
				 PTL_NO_ACK_REQ, target_id, pt_index,
				 match_bits, remote_offset, user_ptr, 0, 0, 0,
				 NULL);
}

PTL_EXPORT int PtlAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
			 ptl_size_t length, ptl_ack_req_t ack_req,
			 ptl_process_t target_id, ptl_pt_index_t pt_index,
			 ptl_match_bits_t match_bits, ptl_size_t remote_offset,
			 void *user_ptr, ptl_hdr_data_t hdr_data,
			 ptl_op_t operation, ptl_datatype_t datatype)
{
	return ptl_xfer_post_put(PTL_XFER_ATOMIC, md_handle, local_offset,
				 length, ack_req, target_id, pt_index,
				 match_bits, remote_offset, user_ptr, hdr_data,
				 operation, datatype, NULL);
}

PTL_EXPORT int PtlFetchAtomic(ptl_handle_md_t get_md_handle,
			      ptl_size_t local_get_offset,
			      ptl_handle_md_t put_md_handle,
			      ptl_size_t local_put_offset, ptl_size_t length,
			      ptl_process_t target_id, ptl_pt_index_t pt_index,
			      ptl_match_bits_t match_bits,
			      ptl_size_t remote_offset, void *user_ptr,
			      ptl_hdr_data_t hdr_data, ptl_op_t operation,
			      ptl_datatype_t datatype)
{
	return ptl_xfer_post_fetch(PTL_XFER_FETCH, get_md_handle,
				   local_get_offset, put_md_handle,
				   local_put_offset, length, target_id,
				   pt_index, match_bits, remote_offset,
				   user_ptr, hdr_data, NULL, operation,
				   datatype, NULL);
}

PTL_EXPORT int PtlSwap(ptl_handle_md_t get_md_handle,
		       ptl_size_t local_get_offset,
		       ptl_handle_md_t put_md_handle,
		       ptl_size_t local_put_offset, ptl_size_t length,
		       ptl_process_t target_id, ptl_pt_index_t pt_index,
		       ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		       void *user_ptr, ptl_hdr_data_t hdr_data,
		       const void *operand, ptl_op_t operation,
		       ptl_datatype_t datatype)
{
	return ptl_xfer_post_fetch(PTL_XFER_SWAP, get_md_handle,
				   local_get_offset, put_md_handle,
				   local_put_offset, length, target_id,
				   pt_index, match_bits, remote_offset,
				   user_ptr, hdr_data, operand, operation,
				   datatype, NULL);
}
