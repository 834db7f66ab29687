/*
 * ptl_names.c - compile check: every name of the Portals 4 reference
 * header (types, struct fields, constants, enum values, functions) used
 * against include/portals4.h, and the calls that must work before PtlInit.
 * Generated once from the reference header; edit by hand since.
 */
#include <stdio.h>
#include <string.h>

#include <portals4.h>

static long long sink;

static void use(long long v)
{
	sink += v;
}

int main(void)
{
	ptl_handle_ni_t ni;
	ptl_event_t ev;
	ptl_md_t md;
	ptl_me_t me;
	ptl_le_t le;
	ptl_iovec_t iov;
	ptl_ni_limits_t lim;
	ptl_process_t proc;
	ptl_ct_event_t ct;
	int bad = 0;

	/* constants and enum values */
	use((long long)PTL_STATUS_LAST);
	use((long long)PTL_SR_LAST);
	use((long long)PTL_IOVEC);
	use((long long)PTL_EQ_NONE);
	use((long long)PTL_CT_NONE);
	use((long long)PTL_INVALID_HANDLE);
	use((long long)PTL_IFACE_DEFAULT);
	use((long long)PTL_PID_ANY);
	use((long long)PTL_PID_MAX);
	use((long long)PTL_NID_ANY);
	use((long long)PTL_UID_ANY);
	use((long long)PTL_PT_ANY);
	use((long long)PTL_RANK_ANY);
	use((long long)PTL_TIME_FOREVER);
	use((long long)PTL_SIZE_MAX);
	use((long long)PTL_NI_MATCHING);
	use((long long)PTL_NI_NO_MATCHING);
	use((long long)PTL_NI_LOGICAL);
	use((long long)PTL_NI_PHYSICAL);
	use((long long)PTL_NI_INIT_OPTIONS_MASK);
	use((long long)PTL_NI_OK);
	use((long long)PTL_NI_UNDELIVERABLE);
	use((long long)PTL_NI_DROPPED);
	use((long long)PTL_NI_PT_DISABLED);
	use((long long)PTL_NI_PERM_VIOLATION);
	use((long long)PTL_NI_OP_VIOLATION);
	use((long long)PTL_NI_NO_MATCH);
	use((long long)PTL_NI_SEGV);
	use((long long)PTL_TARGET_BIND_INACCESSIBLE);
	use((long long)PTL_TOTAL_DATA_ORDERING);
	use((long long)PTL_COHERENT_ATOMICS);
	use((long long)PTL_PT_ONLY_USE_ONCE);
	use((long long)PTL_PT_FLOWCTRL);
	use((long long)PTL_PT_ONLY_TRUNCATE);
	use((long long)PTL_PT_ALLOC_DISABLED);
	use((long long)PTL_PT_MATCH_UNORDERED);
	use((long long)PTL_PT_ALLOC_OPTIONS_MASK);
	use((long long)PTL_MD_EVENT_SUCCESS_DISABLE);
	use((long long)PTL_MD_EVENT_SEND_DISABLE);
	use((long long)PTL_MD_EVENT_CT_SEND);
	use((long long)PTL_MD_EVENT_CT_REPLY);
	use((long long)PTL_MD_EVENT_CT_ACK);
	use((long long)PTL_MD_EVENT_CT_BYTES);
	use((long long)PTL_MD_UNORDERED);
	use((long long)PTL_MD_VOLATILE);
	use((long long)PTL_MD_UNRELIABLE);
	use((long long)PTL_MD_OPTIONS_MASK);
	use((long long)PTL_PRIORITY_LIST);
	use((long long)PTL_OVERFLOW_LIST);
	use((long long)PTL_SEARCH_ONLY);
	use((long long)PTL_SEARCH_DELETE);
	use((long long)PTL_LE_OP_PUT);
	use((long long)PTL_LE_OP_GET);
	use((long long)PTL_LE_USE_ONCE);
	use((long long)PTL_LE_UNEXPECTED_HDR_DISABLE);
	use((long long)PTL_LE_IS_ACCESSIBLE);
	use((long long)PTL_LE_EVENT_LINK_DISABLE);
	use((long long)PTL_LE_EVENT_COMM_DISABLE);
	use((long long)PTL_LE_EVENT_FLOWCTRL_DISABLE);
	use((long long)PTL_LE_EVENT_SUCCESS_DISABLE);
	use((long long)PTL_LE_EVENT_OVER_DISABLE);
	use((long long)PTL_LE_EVENT_UNLINK_DISABLE);
	use((long long)PTL_LE_EVENT_CT_COMM);
	use((long long)PTL_LE_EVENT_CT_OVERFLOW);
	use((long long)PTL_LE_EVENT_CT_BYTES);
	use((long long)PTL_LE_APPEND_OPTIONS_MASK);
	use((long long)PTL_ME_OP_PUT);
	use((long long)PTL_ME_OP_GET);
	use((long long)PTL_ME_USE_ONCE);
	use((long long)PTL_ME_UNEXPECTED_HDR_DISABLE);
	use((long long)PTL_ME_IS_ACCESSIBLE);
	use((long long)PTL_ME_EVENT_LINK_DISABLE);
	use((long long)PTL_ME_EVENT_COMM_DISABLE);
	use((long long)PTL_ME_EVENT_FLOWCTRL_DISABLE);
	use((long long)PTL_ME_EVENT_SUCCESS_DISABLE);
	use((long long)PTL_ME_EVENT_OVER_DISABLE);
	use((long long)PTL_ME_EVENT_UNLINK_DISABLE);
	use((long long)PTL_ME_EVENT_CT_COMM);
	use((long long)PTL_ME_EVENT_CT_OVERFLOW);
	use((long long)PTL_ME_EVENT_CT_BYTES);
	use((long long)PTL_ME_MANAGE_LOCAL);
	use((long long)PTL_ME_NO_TRUNCATE);
	use((long long)PTL_ME_MAY_ALIGN);
	use((long long)PTL_ME_LOCAL_INC_UH_RLENGTH);
	use((long long)PTL_ME_APPEND_OPTIONS_MASK);
	use((long long)PTL_NO_ACK_REQ);
	use((long long)PTL_ACK_REQ);
	use((long long)PTL_CT_ACK_REQ);
	use((long long)PTL_OC_ACK_REQ);
	use((long long)PTL_MIN);
	use((long long)PTL_MAX);
	use((long long)PTL_SUM);
	use((long long)PTL_PROD);
	use((long long)PTL_LOR);
	use((long long)PTL_LAND);
	use((long long)PTL_BOR);
	use((long long)PTL_BAND);
	use((long long)PTL_LXOR);
	use((long long)PTL_BXOR);
	use((long long)PTL_SWAP);
	use((long long)PTL_CSWAP);
	use((long long)PTL_CSWAP_NE);
	use((long long)PTL_CSWAP_LE);
	use((long long)PTL_CSWAP_LT);
	use((long long)PTL_CSWAP_GE);
	use((long long)PTL_CSWAP_GT);
	use((long long)PTL_MSWAP);
	use((long long)PTL_OP_LAST);
	use((long long)PTL_INT8_T);
	use((long long)PTL_UINT8_T);
	use((long long)PTL_INT16_T);
	use((long long)PTL_UINT16_T);
	use((long long)PTL_INT32_T);
	use((long long)PTL_UINT32_T);
	use((long long)PTL_FLOAT);
	use((long long)PTL_INT64_T);
	use((long long)PTL_UINT64_T);
	use((long long)PTL_DOUBLE);
	use((long long)PTL_FLOAT_COMPLEX);
	use((long long)PTL_DOUBLE_COMPLEX);
	use((long long)PTL_LONG_DOUBLE);
	use((long long)PTL_LONG_DOUBLE_COMPLEX);
	use((long long)PTL_DATATYPE_LAST);
	use((long long)PTL_EVENT_GET);
	use((long long)PTL_EVENT_GET_OVERFLOW);
	use((long long)PTL_EVENT_PUT);
	use((long long)PTL_EVENT_PUT_OVERFLOW);
	use((long long)PTL_EVENT_ATOMIC);
	use((long long)PTL_EVENT_ATOMIC_OVERFLOW);
	use((long long)PTL_EVENT_FETCH_ATOMIC);
	use((long long)PTL_EVENT_FETCH_ATOMIC_OVERFLOW);
	use((long long)PTL_EVENT_REPLY);
	use((long long)PTL_EVENT_SEND);
	use((long long)PTL_EVENT_ACK);
	use((long long)PTL_EVENT_PT_DISABLED);
	use((long long)PTL_EVENT_LINK);
	use((long long)PTL_EVENT_AUTO_UNLINK);
	use((long long)PTL_EVENT_AUTO_FREE);
	use((long long)PTL_EVENT_SEARCH);
	use((long long)PTL_OK);
	use((long long)PTL_ARG_INVALID);
	use((long long)PTL_CT_NONE_REACHED);
	use((long long)PTL_EQ_DROPPED);
	use((long long)PTL_EQ_EMPTY);
	use((long long)PTL_FAIL);
	use((long long)PTL_IGNORED);
	use((long long)PTL_IN_USE);
	use((long long)PTL_LIST_TOO_LONG);
	use((long long)PTL_NO_INIT);
	use((long long)PTL_NO_SPACE);
	use((long long)PTL_PID_IN_USE);
	use((long long)PTL_PT_FULL);
	use((long long)PTL_PT_EQ_NEEDED);
	use((long long)PTL_PT_IN_USE);
	use((long long)PTL_ABORTED);
	use((long long)PTL_SR_DROP_COUNT);
	use((long long)PTL_SR_PERMISSION_VIOLATIONS);
	use((long long)PTL_SR_OPERATION_VIOLATIONS);
	use((long long)NI_T_MATCHING);
	use((long long)NI_T_NMATCHING);
	use((long long)NI_T_LOGICAL);
	use((long long)NI_T_PHYSICAL);
	use((long long)NI_T_OPTIONS_MASK);
	use((long long)NI_BIND_INACCESSIBLE);
	use((long long)NI_DATA_ORDERING);
	use((long long)NI_COHERENT_ATOMICS);
	use((long long)NI_OPTIONS_MASK);
	use((long long)ONLY_USE_ONCE);
	use((long long)FLOWCTRL);
	use((long long)ONLY_TRUNCATE);
	use((long long)MATCH_UNORDERED);
	use((long long)PT_ALLOC_DISABLED);
	use((long long)PT_OPTIONS_MASK);
	use((long long)MD_EVNT_CT_SEND);
	use((long long)MD_EVNT_CT_REPLY);
	use((long long)MD_EVNT_CT_ACK);
	use((long long)MD_UNORDERED);
	use((long long)MD_EVNT_SUCCESS_DISABLE);
	use((long long)MD_VOLATILE);
	use((long long)MD_EVNT_SEND_DISABLE);
	use((long long)MD_UNRELIABLE);
	use((long long)MD_OPTIONS_MASK);
	use((long long)MELE_IOVEC);
	use((long long)MELE_OP_PUT);
	use((long long)MELE_OP_GET);
	use((long long)MELE_USE_ONCE);
	use((long long)MELE_UNEXPECTED_HDR_DISABLE);
	use((long long)MELE_IS_ACCESSIBLE);
	use((long long)MELE_EVNT_LINK_DISABLE);
	use((long long)MELE_EVNT_COMM_DISABLE);
	use((long long)MELE_EVNT_FLOWCTRL_DISABLE);
	use((long long)MELE_EVNT_SUCCESS_DISABLE);
	use((long long)MELE_EVNT_OVER_DISABLE);
	use((long long)MELE_EVNT_UNLINK_DISABLE);
	use((long long)MELE_EVNT_CT_COMM);
	use((long long)MELE_EVNT_CT_OVERFLOW);
	use((long long)MELE_EVNT_CT_BYTES);
	use((long long)LE_OPTIONS_MASK);
	use((long long)ME_MANAGE_LOCAL);
	use((long long)ME_NO_TRUNCATE);
	use((long long)ME_MAY_ALIGN);
	use((long long)ME_LOCAL_INC_UH_RLENGTH);
	use((long long)ME_OPTIONS_MASK);
	use((long long)PTL_CT_OPERATION);
	use((long long)PTL_CT_BYTE);
	/* types */
	use((long long)sizeof(ptl_ack_req_t));
	use((long long)sizeof(ptl_ct_event_t));
	use((long long)sizeof(ptl_ct_type_t));
	use((long long)sizeof(ptl_datatype_t));
	use((long long)sizeof(ptl_event_kind_t));
	use((long long)sizeof(ptl_event_t));
	use((long long)sizeof(ptl_handle_any_t));
	use((long long)sizeof(ptl_handle_ct_t));
	use((long long)sizeof(ptl_handle_eq_t));
	use((long long)sizeof(ptl_handle_le_t));
	use((long long)sizeof(ptl_handle_md_t));
	use((long long)sizeof(ptl_handle_me_t));
	use((long long)sizeof(ptl_handle_ni_t));
	use((long long)sizeof(ptl_hdr_data_t));
	use((long long)sizeof(ptl_interface_t));
	use((long long)sizeof(ptl_iovec_t));
	use((long long)sizeof(ptl_le_t));
	use((long long)sizeof(ptl_list_t));
	use((long long)sizeof(ptl_match_bits_t));
	use((long long)sizeof(ptl_md_t));
	use((long long)sizeof(ptl_me_t));
	use((long long)sizeof(ptl_ni_fail_t));
	use((long long)sizeof(ptl_ni_limits_t));
	use((long long)sizeof(ptl_nid_t));
	use((long long)sizeof(ptl_op_t));
	use((long long)sizeof(ptl_pid_t));
	use((long long)sizeof(ptl_process_t));
	use((long long)sizeof(ptl_pt_index_t));
	use((long long)sizeof(ptl_rank_t));
	use((long long)sizeof(ptl_search_op_t));
	use((long long)sizeof(ptl_size_t));
	use((long long)sizeof(ptl_sr_index_t));
	use((long long)sizeof(ptl_sr_value_t));
	use((long long)sizeof(ptl_time_t));
	use((long long)sizeof(ptl_uid_t));
	/* struct fields */
	use((long long)sizeof(md.start));
	use((long long)sizeof(md.length));
	use((long long)sizeof(md.options));
	use((long long)sizeof(md.eq_handle));
	use((long long)sizeof(md.ct_handle));
	use((long long)sizeof(iov.iov_base));
	use((long long)sizeof(iov.iov_len));
	use((long long)sizeof(le.start));
	use((long long)sizeof(le.length));
	use((long long)sizeof(le.ct_handle));
	use((long long)sizeof(le.uid));
	use((long long)sizeof(le.options));
	use((long long)sizeof(lim.max_entries));
	use((long long)sizeof(lim.max_unexpected_headers));
	use((long long)sizeof(lim.max_mds));
	use((long long)sizeof(lim.max_cts));
	use((long long)sizeof(lim.max_eqs));
	use((long long)sizeof(lim.max_pt_index));
	use((long long)sizeof(lim.max_iovecs));
	use((long long)sizeof(lim.max_list_size));
	use((long long)sizeof(lim.max_triggered_ops));
	use((long long)sizeof(lim.max_msg_size));
	use((long long)sizeof(lim.max_atomic_size));
	use((long long)sizeof(lim.max_fetch_atomic_size));
	use((long long)sizeof(lim.max_waw_ordered_size));
	use((long long)sizeof(lim.max_war_ordered_size));
	use((long long)sizeof(lim.max_volatile_size));
	use((long long)sizeof(lim.features));
	use((long long)sizeof(me.start));
	use((long long)sizeof(me.length));
	use((long long)sizeof(me.ct_handle));
	use((long long)sizeof(me.uid));
	use((long long)sizeof(me.options));
	use((long long)sizeof(me.match_id));
	use((long long)sizeof(me.match_bits));
	use((long long)sizeof(me.ignore_bits));
	use((long long)sizeof(me.min_free));
	use((long long)sizeof(ct.success));
	use((long long)sizeof(ct.failure));
	use((long long)sizeof(ev.start));
	use((long long)sizeof(ev.user_ptr));
	use((long long)sizeof(ev.hdr_data));
	use((long long)sizeof(ev.match_bits));
	use((long long)sizeof(ev.rlength));
	use((long long)sizeof(ev.mlength));
	use((long long)sizeof(ev.remote_offset));
	use((long long)sizeof(ev.initiator));
	use((long long)sizeof(ev.uid));
	use((long long)sizeof(ev.pt_index));
	use((long long)sizeof(ev.type));
	use((long long)sizeof(ev.ptl_list));
	use((long long)sizeof(ev.ni_fail_type));
	use((long long)sizeof(ev.atomic_operation));
	use((long long)sizeof(ev.atomic_type));
	use((long long)sizeof(proc.rank) + (long long)sizeof(proc.phys.nid) +
	    (long long)sizeof(proc.phys.pid));
	/* functions, with the reference prototypes */
	{
		void (*volatile fp)(void) = PtlAbort;

		use(fp != 0);
	}
	{
		int (*volatile fp)(void) = PtlInit;

		use(fp != 0);
	}
	{
		void (*volatile fp)(void) = PtlFini;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_interface_t iface, unsigned int options, ptl_pid_t pid, const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle) = PtlNIInit;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle) = PtlNIFini;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_sr_index_t status_register, ptl_sr_value_t *status) = PtlNIStatus;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle) = PtlNIHandle;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_size_t map_size, const ptl_process_t *mapping) = PtlSetMap;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_size_t map_size, ptl_process_t *mapping, ptl_size_t *actual_map_size) = PtlGetMap;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, unsigned int options, ptl_handle_eq_t eq_handle, ptl_pt_index_t pt_index_req, ptl_pt_index_t *pt_index) = PtlPTAlloc;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index) = PtlPTFree;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index) = PtlPTDisable;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index) = PtlPTEnable;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_uid_t *uid) = PtlGetUid;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_process_t *id) = PtlGetId;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_process_t *id) = PtlGetPhysId;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, const ptl_md_t *md, ptl_handle_md_t *md_handle) = PtlMDBind;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle) = PtlMDRelease;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_le_t *le, ptl_list_t ptl_list, void *user_ptr, ptl_handle_le_t *le_handle) = PtlLEAppend;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_le_t le_handle) = PtlLEUnlink;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_le_t *le, ptl_search_op_t ptl_search_op, void *user_ptr) = PtlLESearch;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr, ptl_handle_me_t *me_handle) = PtlMEAppend;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_me_t me_handle) = PtlMEUnlink;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t *me, ptl_search_op_t ptl_search_op, void *user_ptr) = PtlMESearch;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle) = PtlCTAlloc;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle) = PtlCTFree;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle) = PtlCTCancelTriggered;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_ct_event_t *event) = PtlCTGet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_size_t test, ptl_ct_event_t *event) = PtlCTWait;

		use(fp != 0);
	}
	{
		int (*volatile fp)(const ptl_handle_ct_t *ct_handles, const ptl_size_t *tests, unsigned int size, ptl_time_t timeout, ptl_ct_event_t *event, unsigned int *which) = PtlCTPoll;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct) = PtlCTSet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment) = PtlCTInc;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data) = PtlPut;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr) = PtlGet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype) = PtlAtomic;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype) = PtlFetchAtomic;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, const void *operand, ptl_op_t operation, ptl_datatype_t datatype) = PtlSwap;

		use(fp != 0);
	}
	{
		int (*volatile fp)(void) = PtlAtomicSync;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_handle_eq_t *eq_handle) = PtlEQAlloc;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_eq_t eq_handle) = PtlEQFree;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_eq_t eq_handle, ptl_event_t *event) = PtlEQGet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_eq_t eq_handle, ptl_event_t *event) = PtlEQWait;

		use(fp != 0);
	}
	{
		int (*volatile fp)(const ptl_handle_eq_t *eq_handles, unsigned int size, ptl_time_t timeout, ptl_event_t *event, unsigned int *which) = PtlEQPoll;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredPut;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredGet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredAtomic;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredFetchAtomic;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data, const void *operand, ptl_op_t operation, ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredSwap;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredCTInc;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredCTSet;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_me_t *me_init, ptl_list_t ptl_list, void *user_ptr, ptl_handle_me_t *me_handle_p, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredMEAppend;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_me_t me_handle, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold) = PtlTriggeredMEUnlink;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle) = PtlStartBundle;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_ni_t ni_handle) = PtlEndBundle;

		use(fp != 0);
	}
	{
		int (*volatile fp)(ptl_handle_any_t handle1, ptl_handle_any_t handle2) = PtlHandleIsEqual;

		use(fp != 0);
	}

	/* before PtlInit: handles compare, every other call says NO_INIT */
	if (!PtlHandleIsEqual(PTL_INVALID_HANDLE, PTL_INVALID_HANDLE) ||
	    PtlHandleIsEqual(PTL_EQ_NONE, PTL_CT_NONE))
		bad++;
	if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &ni) != PTL_NO_INIT)
		bad++;
	if (PtlCTGet(PTL_CT_NONE, &ct) != PTL_NO_INIT ||
	    PtlEQGet(PTL_EQ_NONE, &ev) != PTL_NO_INIT)
		bad++;
	if (PTL_OK != 0 || sizeof(ptl_handle_any_t) != 4 ||
	    sizeof(ptl_ct_event_t) != 2 * sizeof(ptl_size_t))
		bad++;
	memset(&ct, 0, sizeof(ct));
	ct.success = 1;
	ct.failure = 2;
	if (ct.success + ct.failure != 3)
		bad++;
	if (bad) {
		fprintf(stderr, "ptl_names: %d checks failed\n", bad);
		return 1;
	}
	printf("ptl_names: ok (%d)\n", sink != 0);
	return 0;
}
