/*
 * ptl_me.c - list entries: PtlMEAppend/Unlink/Search, their LE forms on
 * non-matching NIs, and the PtlTriggeredMEAppend/MEUnlink extensions.
 *
 * An entry's handle lives until the entry is unlinked: by PtlMEUnlink, or
 * by the engine (use-once consumed, min_free crossed), which the PT's sink
 * sees as AUTO_UNLINK. So the engine always reports AUTO_UNLINK to us
 * (PTL_ME_EVENT_UNLINK_DISABLE is applied in the sink), and the entry's
 * user_flags carry its handle.
 */
#include <string.h>

#include "ptl_priv.h"

static unsigned ptl_me_options(unsigned o)
{
	static const struct {
		unsigned ptl, p4e;
	} map[] = {
		{ PTL_ME_OP_PUT, P4E_ME_OP_PUT },
		{ PTL_ME_OP_GET, P4E_ME_OP_GET },
		{ PTL_ME_USE_ONCE, P4E_ME_USE_ONCE },
		{ PTL_ME_UNEXPECTED_HDR_DISABLE, P4E_ME_UNEXPECTED_HDR_DISABLE },
		{ PTL_ME_IS_ACCESSIBLE, P4E_ME_IS_ACCESSIBLE },
		{ PTL_ME_EVENT_LINK_DISABLE, P4E_ME_EVENT_LINK_DISABLE },
		{ PTL_ME_EVENT_COMM_DISABLE, P4E_ME_EVENT_COMM_DISABLE },
		{ PTL_ME_EVENT_FLOWCTRL_DISABLE, P4E_ME_EVENT_FLOWCTRL_DISABLE },
		{ PTL_ME_EVENT_SUCCESS_DISABLE, P4E_ME_EVENT_SUCCESS_DISABLE },
		{ PTL_ME_EVENT_OVER_DISABLE, P4E_ME_EVENT_OVER_DISABLE },
		{ PTL_ME_EVENT_CT_COMM, P4E_ME_EVENT_CT_COMM },
		{ PTL_ME_EVENT_CT_OVERFLOW, P4E_ME_EVENT_CT_OVERFLOW },
		{ PTL_ME_EVENT_CT_BYTES, P4E_ME_EVENT_CT_BYTES },
		{ PTL_ME_MANAGE_LOCAL, P4E_ME_MANAGE_LOCAL },
		{ PTL_ME_NO_TRUNCATE, P4E_ME_NO_TRUNCATE },
		{ PTL_ME_MAY_ALIGN, P4E_ME_MAY_ALIGN },
		{ PTL_ME_LOCAL_INC_UH_RLENGTH, P4E_ME_LOCAL_INC_UH_RLENGTH },
		{ PTL_IOVEC, P4E_ME_IOVEC },
		/* Portals 4.0 compatibility (portals4.h, PTL_COMPAT_40) */
		{ PTL_ME_ACK_DISABLE, P4E_ME_ACK_DISABLE },
	};
	unsigned i, out = 0;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (o & map[i].ptl)
			out |= map[i].p4e;
	return out;
}

/* Check and translate an entry; PTL_OK or PTL_ARG_INVALID. */
int ptl_me_desc(struct ptl_ni *ni, const ptl_me_t *me, bool is_le,
		struct p4e_me_desc *desc)
{
	/* plus the 4.0 compatibility option, outside the 4.3 masks */
	unsigned mask = (is_le ? PTL_LE_APPEND_OPTIONS_MASK :
				 PTL_ME_APPEND_OPTIONS_MASK) |
			PTL_ME_ACK_DISABLE;

	memset(desc, 0, sizeof(*desc));
	if (!me || (me->options & ~mask) ||
	    ((me->options & PTL_IOVEC) &&
	     (me->length > (ptl_size_t)ni->limits.max_iovecs ||
	      (me->length && !me->start))))
		return PTL_ARG_INVALID;
	if (ptl_ct_lookup(ni, me->ct_handle, &desc->ct))
		return PTL_ARG_INVALID;
	desc->start = me->start;
	desc->length = me->length;
	desc->uid = me->uid == PTL_UID_ANY ? P4E_UID_ANY : me->uid;
	desc->options = ptl_me_options(me->options) &
			~(unsigned)P4E_ME_EVENT_UNLINK_DISABLE;
	if (is_le) {
		desc->match_id = P4E_ID_ANY;
		return PTL_OK;
	}
	if (ptl_ni_match_id(ni, me->match_id, desc))
		return PTL_ARG_INVALID;
	desc->match_bits = me->match_bits;
	desc->ignore_bits = me->ignore_bits;
	desc->min_free = me->min_free;
	return PTL_OK;
}

/* The PT sink saw AUTO_UNLINK for the entry whose user_flags these are. */
void ptl_me_unlinked_locked(struct ptl_ni *ni, uint64_t user_flags)
{
	uint32_t h = (uint32_t)user_flags;

	if (ptl_h_type(h) == PTL_HT_ME && ptl_tab_get(&ni->mes, h))
		ptl_tab_free(&ni->mes, h);
}

/* Append and search: the PT must be allocated and the entry of the NI's
 * kind (an LE on a non-matching NI); then the entry is translated. */
static int ptl_me_pt_desc(struct ptl_ni *ni, ptl_pt_index_t pt_index,
			  const ptl_me_t *me, bool is_le,
			  struct p4e_me_desc *desc)
{
	if (is_le != !(ni->options & PTL_NI_MATCHING) ||
	    pt_index > (uint32_t)ni->limits.max_pt_index ||
	    !ni->pts[pt_index].allocated)
		return PTL_ARG_INVALID;
	return ptl_me_desc(ni, me, is_le, desc);
}

static int ptl_me_append_common(ptl_handle_ni_t ni_handle,
				ptl_pt_index_t pt_index, const ptl_me_t *me,
				ptl_list_t ptl_list, void *user_ptr,
				ptl_handle_me_t *me_handle, bool is_le,
				ptl_handle_ct_t trig_ct, ptl_size_t threshold,
				bool triggered)
{
	struct p4e_me_desc desc;
	struct p4e_trig trig;
	struct ptl_slot *slot;
	struct ptl_ni *ni;
	uint64_t uf, eh = 0;
	uint32_t h;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!me_handle || ptl_list > PTL_OVERFLOW_LIST) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	ret = ptl_me_pt_desc(ni, pt_index, me, is_le, &desc);
	if (ret)
		goto out;
	memset(&trig, 0, sizeof(trig));
	if (triggered) {
		if (trig_ct == PTL_CT_NONE ||
		    ptl_ct_lookup(ni, trig_ct, &trig.ct)) {
			ret = PTL_ARG_INVALID;
			goto out;
		}
		trig.threshold = threshold;
	}
	if (ptl_tab_alloc(&ni->mes, ni->kind, &h)) {
		ret = PTL_NO_SPACE;	/* max_entries reached */
		goto out;
	}
	uf = h | (me->options & PTL_ME_EVENT_UNLINK_DISABLE ?
		  PTL_ME_UF_NO_UNLINK_EV : 0);
	if (triggered)
		ret = p4e_trig_me_append(ni->eni, pt_index, &desc, ptl_list,
					 user_ptr, uf, &trig, &eh);
	else
		ret = p4e_me_append(ni->eni, pt_index, &desc, ptl_list,
				    user_ptr, uf, &eh);
	/* a use-once entry may already be consumed (and its slot freed) */
	slot = ptl_tab_get(&ni->mes, h);
	if (ret) {
		if (slot)
			ptl_tab_free(&ni->mes, h);
		/* entries are within max_entries: the list is the limit */
		ret = ret == -FI_ENOSPC ? PTL_LIST_TOO_LONG : ptl_errno(ret);
		goto out;
	}
	if (slot) {
		slot->eh = eh;
		slot->me_nomatch = is_le;
	}
	*me_handle = h;
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			   const ptl_me_t *me, ptl_list_t ptl_list,
			   void *user_ptr, ptl_handle_me_t *me_handle)
{
	return ptl_me_append_common(ni_handle, pt_index, me, ptl_list,
				    user_ptr, me_handle, false, PTL_CT_NONE,
				    0, false);
}

PTL_EXPORT int PtlTriggeredMEAppend(ptl_handle_ni_t ni_handle,
				    ptl_pt_index_t pt_index, ptl_me_t *me_init,
				    ptl_list_t ptl_list, void *user_ptr,
				    ptl_handle_me_t *me_handle_p,
				    ptl_handle_ct_t trig_ct_handle,
				    ptl_size_t threshold)
{
	return ptl_me_append_common(ni_handle, pt_index, me_init, ptl_list,
				    user_ptr, me_handle_p, false,
				    trig_ct_handle, threshold, true);
}

/* An LE as the ME it is (no match bits), in *me; NULL stays NULL. */
static const ptl_me_t *ptl_le_to_me(const ptl_le_t *le, ptl_me_t *me)
{
	if (!le)
		return NULL;
	memset(me, 0, sizeof(*me));
	me->start = le->start;
	me->length = le->length;
	me->ct_handle = le->ct_handle;
	me->uid = le->uid;
	me->options = le->options;
	return me;
}

PTL_EXPORT int PtlLEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			   const ptl_le_t *le, ptl_list_t ptl_list,
			   void *user_ptr, ptl_handle_le_t *le_handle)
{
	ptl_me_t me;

	return ptl_me_append_common(ni_handle, pt_index, ptl_le_to_me(le, &me),
				    ptl_list, user_ptr, le_handle, true,
				    PTL_CT_NONE, 0, false);
}

static int ptl_me_unlink_common(ptl_handle_me_t me_handle, bool is_le,
				ptl_handle_ct_t trig_ct, ptl_size_t threshold,
				bool triggered)
{
	struct p4e_trig trig;
	struct ptl_slot *slot;
	struct ptl_ni *ni;
	int ret = ptl_obj_enter(me_handle, PTL_HT_ME, &ni, &slot);

	if (ret)
		return ret;
	if (slot->me_nomatch != is_le) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (triggered) {
		memset(&trig, 0, sizeof(trig));
		trig.threshold = threshold;
		if (trig_ct == PTL_CT_NONE ||
		    ptl_ct_lookup(ni, trig_ct, &trig.ct)) {
			ret = PTL_ARG_INVALID;
			goto out;
		}
		/* the handle stays valid until the unlink happens */
		ret = ptl_errno(p4e_trig_me_unlink(ni->eni, slot->eh, &trig));
		goto out;
	}
	ret = ptl_errno(p4e_me_unlink(ni->eni, slot->eh, 0));
	if (!ret)
		ptl_tab_free(&ni->mes, me_handle);
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlMEUnlink(ptl_handle_me_t me_handle)
{
	return ptl_me_unlink_common(me_handle, false, PTL_CT_NONE, 0, false);
}

PTL_EXPORT int PtlLEUnlink(ptl_handle_le_t le_handle)
{
	return ptl_me_unlink_common(le_handle, true, PTL_CT_NONE, 0, false);
}

PTL_EXPORT int PtlTriggeredMEUnlink(ptl_handle_me_t me_handle,
				    ptl_handle_ct_t trig_ct_handle,
				    ptl_size_t threshold)
{
	return ptl_me_unlink_common(me_handle, false, trig_ct_handle,
				    threshold, true);
}

static int ptl_me_search_common(ptl_handle_ni_t ni_handle,
				ptl_pt_index_t pt_index, const ptl_me_t *me,
				ptl_search_op_t op, void *user_ptr, bool is_le)
{
	struct p4e_me_desc desc;
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (op > PTL_SEARCH_DELETE) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	ret = ptl_me_pt_desc(ni, pt_index, me, is_le, &desc);
	if (ret)
		goto out;
	/* a persistent entry: one event per matching message (portals4.7) */
	desc.options |= P4E_ME_SEARCH_EACH;
	ret = ptl_errno(p4e_me_search(ni->eni, pt_index, &desc,
				      op == PTL_SEARCH_ONLY ? P4E_SEARCH_ONLY :
				      P4E_SEARCH_DELETE, user_ptr, 0));
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlMESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			   const ptl_me_t *me, ptl_search_op_t ptl_search_op,
			   void *user_ptr)
{
	return ptl_me_search_common(ni_handle, pt_index, me, ptl_search_op,
				    user_ptr, false);
}

PTL_EXPORT int PtlLESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			   const ptl_le_t *le, ptl_search_op_t ptl_search_op,
			   void *user_ptr)
{
	ptl_me_t me;

	return ptl_me_search_common(ni_handle, pt_index, ptl_le_to_me(le, &me),
				    ptl_search_op, user_ptr, true);
}
