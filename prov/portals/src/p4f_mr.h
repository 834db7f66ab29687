/*
 * p4f_mr.h - memory registration (p4f_mr.c). Included from p4f.h.
 *
 * MRs are domain objects: every endpoint of the domain reaches them by key
 * through the domain's key table. With FI_MR_PROV_KEY the provider picks
 * keys; otherwise the application's requested_key is used (and must be
 * unique in the domain). With FI_MR_VIRT_ADDR remote addresses are virtual
 * addresses; otherwise they are offsets from the MR's start (+ offset).
 */
#ifndef P4F_MR_H
#define P4F_MR_H

struct p4f_mr {
	struct fid_mr mr_fid;
	struct p4f_domain *domain;
	uint64_t access;		/* FI_SEND, FI_REMOTE_WRITE, ... */
	uint64_t flags;
	uint64_t offset;		/* fi_mr_reg's offset argument */
	size_t iov_count;
	struct iovec *iov;
	size_t length;			/* sum of iov lengths */
	struct p4f_cntr *cntr;		/* fi_mr_bind(cntr) with FI_REMOTE_WRITE */
	uint64_t cntr_flags;
	bool enabled;
};

struct p4f_mr_table;

int p4f_mr_table_create(struct p4f_mr_table **table_p);
void p4f_mr_table_destroy(struct p4f_mr_table *table);
/* fi_ops_mr of a domain */
extern struct fi_ops_mr p4f_mr_ops;
/* The enabled MR with key, or NULL. With the domain lock held. */
struct p4f_mr *p4f_mr_lookup_locked(struct p4f_domain *domain, uint64_t key);

#endif /* P4F_MR_H */
