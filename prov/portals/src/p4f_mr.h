/*
 * p4f_mr.h - memory registration (p4f_mr.c). Included from p4f.h.
 *
 * MRs are domain objects: every endpoint of the domain reaches them by key
 * through the domain's key table (a hash on the key). With FI_MR_PROV_KEY
 * the provider picks keys; otherwise the application's requested_key is
 * used (and must be unique in the domain).
 *
 * Remote addressing (what p4f_mr_check_access() checks):
 *  - FI_MR_VIRT_ADDR: a remote address is a virtual address of the
 *    target; an access must fall inside one of the MR's iovs. fi_mr_reg's
 *    offset argument (reserved, 0 by fi_mr(3)) plays no part.
 *  - otherwise: a remote address is a byte offset into the concatenation
 *    of the iovs, the first byte being at address `offset` (fi_mr_reg's
 *    argument; 0 unless the application chose a base of its own).
 *
 * A registration with FI_RMA_EVENT in a domain with FI_MR_RMA_EVENT starts
 * disabled (fi_mr(3)): it keeps its key but p4f_mr_lookup_locked() does
 * not find it until fi_mr_enable(), after which no binding is accepted.
 *
 * Reaching an MR from the wire: every enabled MR has engine entries on
 * the RMA PT of every enabled endpoint of its domain (p4f_mr.c explains
 * why entries and not a lookup hook), so a remote access is matched by key
 * in O(1) by the engine's hashed matching.
 *
 * Locks: domain->lock for registration and publishing, the key table's
 * own lock (a leaf) for lookups by key (p4f_mr.c).
 */
#ifndef P4F_MR_H
#define P4F_MR_H

#include "p4u_hash.h"

struct p4f_mr {
	struct fid_mr mr_fid;		/* mem_desc = this struct, key */
	struct p4f_domain *domain;
	struct p4u_hash_node node;	/* in the domain's key table */
	uint64_t access;		/* FI_SEND, FI_REMOTE_WRITE, ... */
	uint64_t flags;			/* FI_RMA_EVENT */
	uint64_t offset;		/* fi_mr_reg's offset argument */
	size_t iov_count;
	struct iovec *iov;		/* a copy of the application's */
	size_t length;			/* sum of iov lengths */
	struct p4f_cntr *cntr;		/* fi_mr_bind: counts remote accesses */
	uint64_t cntr_flags;		/* FI_REMOTE_WRITE | FI_REMOTE_READ */
	bool enabled;			/* visible to p4f_mr_count_remote */
	bool bind_closed;		/* fi_mr_enable was called */
	struct p4u_list link;		/* in the table's list of MRs */
	struct p4u_list eps;		/* struct p4f_mr_ep: its RMA entries */
};

struct p4f_mr_table;

int p4f_mr_table_create(bool locked, struct p4f_mr_table **table_p);
void p4f_mr_table_destroy(struct p4f_mr_table *table);
/* fi_ops_mr of a domain */
extern struct fi_ops_mr p4f_mr_ops;
/* The enabled MR with key, or NULL (valid while the caller keeps it
 * open). O(1); takes the key table's lock. */
struct p4f_mr *p4f_mr_lookup(struct p4f_domain *domain, uint64_t key);
/*
 * A remote access (FI_REMOTE_READ or FI_REMOTE_WRITE) to the enabled MR
 * with key, ok or failed: counted on the MR's counter if it has one bound
 * for that access. O(1); takes the key table's lock.
 */
void p4f_mr_count_remote(struct p4f_domain *domain, uint64_t key,
			 uint64_t access, bool ok);

/*
 * May a peer access [addr, addr + len) of mr with access (FI_REMOTE_READ
 * and/or FI_REMOTE_WRITE, or local bits)? Returns 0 and the byte offset of
 * addr in the MR (into the concatenated iovs), -FI_EACCES if mr lacks an
 * access bit, -FI_EINVAL if the range is not inside the MR (overflow-safe:
 * a range that wraps never passes) or access is 0 or unknown. Reads only
 * immutable fields: no lock needed beyond keeping mr alive.
 */
int p4f_mr_check_access(const struct p4f_mr *mr, uint64_t addr, uint64_t len,
			uint64_t access, uint64_t *offset_p);

#endif /* P4F_MR_H */
