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
	struct ptl_xfer_trig t = { trig_ct_handle, threshold };

	return ptl_xfer_post_put(PTL_XFER_PUT, md_handle, local_offset, length,
				 ack_req, target_id, pt_index, match_bits,
				 remote_offset, user_ptr, hdr_data, 0, 0, &t);
}

PTL_EXPORT int PtlTriggeredGet(ptl_handle_md_t md_handle,
			       ptl_size_t local_offset, ptl_size_t length,
			       ptl_process_t target_id, ptl_pt_index_t pt_index,
			       ptl_match_bits_t match_bits,
			       ptl_size_t remote_offset, void *user_ptr,
			       ptl_handle_ct_t trig_ct_handle,
			       ptl_size_t threshold)
{
	struct ptl_xfer_trig t = { trig_ct_handle, threshold };

	return ptl_xfer_post_put(PTL_XFER_GET, md_handle, local_offset, length,
				 PTL_NO_ACK_REQ, target_id, pt_index,
				 match_bits, remote_offset, user_ptr, 0, 0, 0,
				 &t);
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
	struct ptl_xfer_trig t = { trig_ct_handle, threshold };

	return ptl_xfer_post_put(PTL_XFER_ATOMIC, md_handle, local_offset,
				 length, ack_req, target_id, pt_index,
				 match_bits, remote_offset, user_ptr, hdr_data,
				 operation, datatype, &t);
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
	struct ptl_xfer_trig t = { trig_ct_handle, threshold };

	return ptl_xfer_post_fetch(PTL_XFER_FETCH, get_md_handle,
				   local_get_offset, put_md_handle,
				   local_put_offset, length, target_id,
				   pt_index, match_bits, remote_offset,
				   user_ptr, hdr_data, NULL, operation,
				   datatype, &t);
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
	struct ptl_xfer_trig t = { trig_ct_handle, threshold };

	return ptl_xfer_post_fetch(PTL_XFER_SWAP, get_md_handle,
				   local_get_offset, put_md_handle,
				   local_put_offset, length, target_id,
				   pt_index, match_bits, remote_offset,
				   user_ptr, hdr_data, operand, operation,
				   datatype, &t);
}
