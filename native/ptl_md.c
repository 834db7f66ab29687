/*
 * ptl_md.c - memory descriptors (PtlMDBind/Release): the initiator's view
 * of a buffer, with the EQ and CT its operations report to.
 */
#include <stddef.h>
#include <sys/uio.h>

#include "ptl_priv.h"

/* ptl_iovec_t must be a struct iovec: the engine reads them as such. */
_Static_assert(sizeof(ptl_iovec_t) == sizeof(struct iovec) &&
	       offsetof(ptl_iovec_t, iov_len) == offsetof(struct iovec, iov_len),
	       "ptl_iovec_t layout");

static unsigned ptl_md_options(unsigned o)
{
	return (o & PTL_MD_EVENT_SUCCESS_DISABLE ?
		P4E_MD_EVENT_SUCCESS_DISABLE : 0) |
	       (o & PTL_MD_EVENT_SEND_DISABLE ? P4E_MD_EVENT_SEND_DISABLE : 0) |
	       (o & PTL_MD_EVENT_CT_SEND ? P4E_MD_EVENT_CT_SEND : 0) |
	       (o & PTL_MD_EVENT_CT_REPLY ? P4E_MD_EVENT_CT_REPLY : 0) |
	       (o & PTL_MD_EVENT_CT_ACK ? P4E_MD_EVENT_CT_ACK : 0) |
	       (o & PTL_MD_EVENT_CT_BYTES ? P4E_MD_EVENT_CT_BYTES : 0) |
	       (o & PTL_MD_UNORDERED ? P4E_MD_UNORDERED : 0) |
	       (o & PTL_MD_VOLATILE ? P4E_MD_VOLATILE : 0) |
	       (o & PTL_MD_UNRELIABLE ? P4E_MD_UNRELIABLE : 0) |
	       (o & PTL_IOVEC ? P4E_MD_IOVEC : 0);
}

PTL_EXPORT int PtlMDBind(ptl_handle_ni_t ni_handle, const ptl_md_t *md,
			 ptl_handle_md_t *md_handle)
{
	struct p4e_md_desc desc;
	struct ptl_slot *slot;
	struct ptl_eq *eq;
	struct ptl_ni *ni;
	uint32_t h;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!md || !md_handle || (md->options & ~PTL_MD_OPTIONS_MASK) ||
	    ((md->options & PTL_IOVEC) &&
	     (md->length > (ptl_size_t)ni->limits.max_iovecs ||
	      (md->length && !md->start)))) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	eq = ptl_eq_lookup(ni, md->eq_handle, &ret);
	if (ret)
		goto out;
	desc.start = md->start;
	desc.length = md->length;
	desc.options = ptl_md_options(md->options);
	desc.eq = eq ? &eq->base : NULL;
	if (ptl_ct_lookup(ni, md->ct_handle, &desc.ct)) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (ptl_tab_alloc(&ni->mds, ni->kind, &h)) {
		ret = PTL_NO_SPACE;
		goto out;
	}
	slot = ptl_tab_get(&ni->mds, h);
	ret = ptl_errno(p4e_md_bind(ni->eni, &desc, &slot->eh));
	if (ret) {
		ptl_tab_free(&ni->mds, h);
		goto out;
	}
	slot->obj = eq;
	slot->md_options = md->options;
	if (eq)
		eq->refs++;
	*md_handle = h;
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlMDRelease(ptl_handle_md_t md_handle)
{
	struct ptl_slot *slot;
	struct ptl_eq *eq;
	struct ptl_ni *ni;
	int ret = ptl_obj_enter(md_handle, PTL_HT_MD, &ni, &slot);

	if (ret)
		return ret;
	ret = ptl_errno(p4e_md_release(ni->eni, slot->eh));
	if (!ret) {
		eq = slot->obj;
		if (eq)
			ptl_eq_unref(ni, eq);
		ptl_tab_free(&ni->mds, md_handle);
	}
	ptl_leave();
	return ret;
}
