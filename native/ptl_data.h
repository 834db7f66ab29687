/*
 * ptl_data.h - the arguments every data-movement call shares, for
 * ptl_data.c (immediate) and ptl_trig.c (triggered).
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
	ptl_handle_ct_t trig_ct;
	ptl_size_t threshold;
};

int ptl_xfer_post(const struct ptl_xfer_args *a, bool triggered);

#endif /* PTL_DATA_H */
