/*
 * p4e_md.c - memory descriptors: the initiator side's view of a buffer,
 * with the options that decide which events and counts its operations
 * produce.
 */
#include <config.h>

#include "p4e_priv.h"

#define P4E_MD_OPTIONS (P4E_MD_EVENT_SUCCESS_DISABLE | \
			P4E_MD_EVENT_SEND_DISABLE | P4E_MD_EVENT_CT_SEND | \
			P4E_MD_EVENT_CT_REPLY | P4E_MD_EVENT_CT_ACK | \
			P4E_MD_EVENT_CT_BYTES | P4E_MD_UNORDERED | \
			P4E_MD_VOLATILE | P4E_MD_UNRELIABLE | P4E_MD_IOVEC)

int p4e_md_bind(struct p4e_ni *ni, const struct p4e_md_desc *desc,
		uint64_t *md_p)
{
	struct p4e_md *md;
	uint64_t length;

	P4E_NI_ASSERT(ni);
	if (!ni || !desc || !md_p || (desc->options & ~P4E_MD_OPTIONS))
		return -FI_EINVAL;
	if (desc->ct != P4E_HANDLE_NONE && !p4e_ct_exists(ni->dom, desc->ct))
		return -FI_EINVAL;
	if (desc->options & P4E_MD_IOVEC) {
		if (desc->length > ni->limits.max_iovecs ||
		    (desc->length && !desc->start))
			return -FI_EINVAL;
		length = p4e_iov_total(desc->start, desc->length);
	} else {
		length = desc->length;
	}
	md = p4u_pool_alloc(&ni->mds);
	if (!md)
		return -FI_ENOSPC;
	md->ni = ni;
	md->start = desc->start;
	md->iovcnt = desc->options & P4E_MD_IOVEC ? (uint32_t)desc->length : 0;
	/* an empty iovec MD is contiguous and empty */
	if ((desc->options & P4E_MD_IOVEC) && !md->iovcnt)
		md->start = NULL;
	md->length = length;
	md->options = desc->options;
	md->eq = desc->eq;
	md->ct = desc->ct;
	*md_p = p4u_pool_handle(&ni->mds, md);
	return 0;
}

int p4e_md_release(struct p4e_ni *ni, uint64_t handle)
{
	struct p4e_md *md;

	P4E_NI_ASSERT(ni);
	if (!ni)
		return -FI_EINVAL;
	md = p4u_pool_lookup(&ni->mds, handle);
	if (!md)
		return -FI_EINVAL;
	if (md->pending)
		return -FI_EBUSY;
	p4u_pool_free(&ni->mds, md);
	return 0;
}
