/*
 * ptl_trig.c - triggered data movement: PtlTriggeredPut/Get/Atomic/
 * FetchAtomic/Swap. The engine copies the arguments at post time, reads
 * the buffers when the op fires (success + failure >= threshold), and
 * fires a post whose threshold is already met before returning. The
 * triggered CT and ME forms are in ptl_ct.c and ptl_me.c.
 */
#include "ptl_data.h"

PTL_EXPORT int PtlTriggeredPut(ptl_handle_md_t md_handle,
			       ptl_size_t local_offset, ptl_size_t length,
			       ptl_ack_req_t ack_req, ptl_process_t target_id,
			       ptl_pt_index_t pt_index,
			       ptl_match_bits_t match_bits,
			       ptl_size_t remote_offset, void *user_ptr,
			       ptl_hdr_data_t hdr_data,
			       ptl_handle_ct_t trig_ct_handle,
			       ptl_size_t threshold)
{
	struct ptl_xfer_args a = {
		.kind = PTL_XFER_PUT, .md = md_handle,
		.local_offset = local_offset, .length = length,
		.ack_req = ack_req, .target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.trig_ct = trig_ct_handle, .threshold = threshold,
	};

	return ptl_xfer_post(&a, true);
}

PTL_EXPORT int PtlTriggeredGet(ptl_handle_md_t md_handle,
			       ptl_size_t local_offset, ptl_size_t length,
			       ptl_process_t target_id, ptl_pt_index_t pt_index,
			       ptl_match_bits_t match_bits,
			       ptl_size_t remote_offset, void *user_ptr,
			       ptl_handle_ct_t trig_ct_handle,
			       ptl_size_t threshold)
{
	struct ptl_xfer_args a = {
		.kind = PTL_XFER_GET, .md = md_handle,
		.local_offset = local_offset, .length = length,
		.target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr,
		.trig_ct = trig_ct_handle, .threshold = threshold,
	};

	return ptl_xfer_post(&a, true);
}

PTL_EXPORT int PtlTriggeredAtomic(ptl_handle_md_t md_handle,
				  ptl_size_t local_offset, ptl_size_t length,
				  ptl_ack_req_t ack_req,
				  ptl_process_t target_id,
				  ptl_pt_index_t pt_index,
				  ptl_match_bits_t match_bits,
				  ptl_size_t remote_offset, void *user_ptr,
				  ptl_hdr_data_t hdr_data, ptl_op_t operation,
				  ptl_datatype_t datatype,
				  ptl_handle_ct_t trig_ct_handle,
				  ptl_size_t threshold)
{
	struct ptl_xfer_args a = {
		.kind = PTL_XFER_ATOMIC, .md = md_handle,
		.local_offset = local_offset, .length = length,
		.ack_req = ack_req, .target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.op = operation, .type = datatype,
		.trig_ct = trig_ct_handle, .threshold = threshold,
	};

	return ptl_xfer_post(&a, true);
}

PTL_EXPORT int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md_handle,
				       ptl_size_t local_get_offset,
				       ptl_handle_md_t put_md_handle,
				       ptl_size_t local_put_offset,
				       ptl_size_t length,
				       ptl_process_t target_id,
				       ptl_pt_index_t pt_index,
				       ptl_match_bits_t match_bits,
				       ptl_size_t remote_offset,
				       void *user_ptr, ptl_hdr_data_t hdr_data,
				       ptl_op_t operation,
				       ptl_datatype_t datatype,
				       ptl_handle_ct_t trig_ct_handle,
				       ptl_size_t threshold)
{
	struct ptl_xfer_args a = {
		.kind = PTL_XFER_FETCH, .md = put_md_handle,
		.local_offset = local_put_offset, .length = length,
		.get_md = get_md_handle, .get_md_used = true,
		.get_local_offset = local_get_offset,
		.target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.op = operation, .type = datatype,
		.trig_ct = trig_ct_handle, .threshold = threshold,
	};

	return ptl_xfer_post(&a, true);
}

PTL_EXPORT int PtlTriggeredSwap(ptl_handle_md_t get_md_handle,
				ptl_size_t local_get_offset,
				ptl_handle_md_t put_md_handle,
				ptl_size_t local_put_offset, ptl_size_t length,
				ptl_process_t target_id,
				ptl_pt_index_t pt_index,
				ptl_match_bits_t match_bits,
				ptl_size_t remote_offset, void *user_ptr,
				ptl_hdr_data_t hdr_data, const void *operand,
				ptl_op_t operation, ptl_datatype_t datatype,
				ptl_handle_ct_t trig_ct_handle,
				ptl_size_t threshold)
{
	struct ptl_xfer_args a = {
		.kind = PTL_XFER_SWAP, .md = put_md_handle,
		.local_offset = local_put_offset, .length = length,
		.get_md = get_md_handle, .get_md_used = true,
		.get_local_offset = local_get_offset,
		.target = target_id, .pt_index = pt_index,
		.match_bits = match_bits, .remote_offset = remote_offset,
		.user_ptr = user_ptr, .hdr_data = hdr_data,
		.operand = operand, .op = operation, .type = datatype,
		.trig_ct = trig_ct_handle, .threshold = threshold,
	};

	return ptl_xfer_post(&a, true);
}
