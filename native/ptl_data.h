/*
 * ptl_data.h - the two entry points every data-movement call goes
 * through, written once in ptl_data.c for the immediate calls there and
 * the triggered forms in ptl_trig.c.
 */
#ifndef PTL_DATA_H
#define PTL_DATA_H

#include "ptl_priv.h"

enum ptl_xfer_kind {
	PTL_XFER_PUT,
	PTL_XFER_GET,
	PTL_XFER_ATOMIC,
	PTL_XFER_FETCH,
	PTL_XFER_SWAP,
};

/* A triggered form's trigger: fire when success + failure of ct reach
 * threshold. NULL in its place means post now. */
struct ptl_xfer_trig {
	ptl_handle_ct_t ct;
	ptl_size_t threshold;
};

/* PtlPut, PtlGet, PtlAtomic (one MD) and their triggered forms. A get has
 * no ack_req or hdr_data, a put no operation or datatype: pass 0. */
int ptl_xfer_post_put(enum ptl_xfer_kind kind, ptl_handle_md_t md_handle,
		      ptl_size_t local_offset, ptl_size_t length,
		      ptl_ack_req_t ack_req, ptl_process_t target_id,
		      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		      ptl_size_t remote_offset, void *user_ptr,
		      ptl_hdr_data_t hdr_data, ptl_op_t operation,
		      ptl_datatype_t datatype,
		      const struct ptl_xfer_trig *trig);

/* PtlFetchAtomic, PtlSwap (a get MD for the old values, a put MD) and their
 * triggered forms. A fetch has no operand: pass NULL. */
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
			const struct ptl_xfer_trig *trig);

#endif /* PTL_DATA_H */
