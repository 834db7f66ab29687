/*
 * ptl_pt.c - portal table entries (PtlPTAlloc/Free/Disable/Enable). Every
 * PT reports to its ptl_pt_sink (ptl_eq.c), which forwards to the EQ the
 * application gave, if any.
 */
#include "ptl_priv.h"

static unsigned ptl_pt_options(unsigned o)
{
	return (o & PTL_PT_ONLY_USE_ONCE ? P4E_PT_ONLY_USE_ONCE : 0) |
	       (o & PTL_PT_FLOWCTRL ? P4E_PT_FLOWCTRL : 0) |
	       (o & PTL_PT_ONLY_TRUNCATE ? P4E_PT_ONLY_TRUNCATE : 0) |
	       (o & PTL_PT_ALLOC_DISABLED ? P4E_PT_ALLOC_DISABLED : 0) |
	       (o & PTL_PT_MATCH_UNORDERED ? P4E_PT_MATCH_UNORDERED : 0);
}

PTL_EXPORT int PtlPTAlloc(ptl_handle_ni_t ni_handle, unsigned int options,
			  ptl_handle_eq_t eq_handle,
			  ptl_pt_index_t pt_index_req, ptl_pt_index_t *pt_index)
{
	struct ptl_pt_sink *sink;
	struct ptl_eq *eq;
	struct ptl_ni *ni;
	uint32_t idx, max, got;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!pt_index || (options & ~PTL_PT_ALLOC_OPTIONS_MASK)) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	eq = ptl_eq_lookup(ni, eq_handle, &ret);
	if (ret)
		goto out;
	if ((options & PTL_PT_FLOWCTRL) && !eq) {
		ret = PTL_PT_EQ_NEEDED;
		goto out;
	}
	max = (uint32_t)ni->limits.max_pt_index;
	if (pt_index_req == PTL_PT_ANY) {
		/* the lowest free index */
		for (idx = 0; idx <= max && ni->pts[idx].allocated; idx++)
			;
		if (idx > max) {
			ret = PTL_PT_FULL;
			goto out;
		}
	} else if (pt_index_req > max) {
		ret = PTL_ARG_INVALID;
		goto out;
	} else if (ni->pts[pt_index_req].allocated) {
		ret = PTL_PT_IN_USE;
		goto out;
	} else {
		idx = pt_index_req;
	}
	sink = &ni->pts[idx];
	sink->eq = eq;
	ret = p4e_pt_alloc(ni->eni, ptl_pt_options(options), &sink->base, idx,
			   &got);
	if (ret) {
		sink->eq = NULL;
		ret = ret == -FI_EBUSY ? PTL_PT_IN_USE : ptl_errno(ret);
		goto out;
	}
	sink->allocated = true;
	if (eq)
		eq->refs++;
	*pt_index = got;
out:
	ptl_leave();
	return ret;
}

static int ptl_pt_enter(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			struct ptl_ni **ni_p)
{
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (pt_index > (uint32_t)ni->limits.max_pt_index ||
	    !ni->pts[pt_index].allocated) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	*ni_p = ni;
	return PTL_OK;
}

PTL_EXPORT int PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	struct ptl_pt_sink *sink;
	struct ptl_ni *ni;
	int ret = ptl_pt_enter(ni_handle, pt_index, &ni);

	if (ret)
		return ret;
	ret = p4e_pt_free(ni->eni, pt_index);
	if (ret) {
		/* entries still attached */
		ret = ret == -FI_EBUSY ? PTL_PT_IN_USE : ptl_errno(ret);
	} else {
		sink = &ni->pts[pt_index];
		if (sink->eq)
			ptl_eq_unref(ni, sink->eq);
		sink->eq = NULL;
		sink->allocated = false;
	}
	ptl_leave();
	return ret;
}

static int ptl_pt_set_enabled(ptl_handle_ni_t ni_handle,
			      ptl_pt_index_t pt_index, bool enable)
{
	struct ptl_ni *ni;
	int ret = ptl_pt_enter(ni_handle, pt_index, &ni);

	if (ret)
		return ret;
	ret = ptl_errno(enable ? p4e_pt_enable(ni->eni, pt_index) :
				 p4e_pt_disable(ni->eni, pt_index));
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	return ptl_pt_set_enabled(ni_handle, pt_index, false);
}

PTL_EXPORT int PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	return ptl_pt_set_enabled(ni_handle, pt_index, true);
}
