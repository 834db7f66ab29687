/*
 * p4f_av.h - address vectors (p4f_av.c). Included from p4f.h.
 *
 * Addresses are the provider's native format, struct sockaddr_in or
 * sockaddr_in6 (each endpoint listens on its own port). FI_AV_MAP and
 * FI_AV_TABLE both hand out fi_addr_t = index into the AV's table, so
 * TABLE indexes are the logical ranks the engine uses. An insert takes the
 * lowest free index (fi_av(3)); a removed index may be handed out again by
 * a later insert, as fi_av(3) allows. Entries never move once inserted, so
 * a pointer returned by a lookup stays valid until that index is removed.
 *
 * Every AV belongs to one domain and is guarded by its own lock, a leaf
 * (p4f.h): the data path looks peers up under an endpoint's worker lock.
 */
#ifndef P4F_AV_H
#define P4F_AV_H

struct p4f_av;

int p4f_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av_p, void *context);
struct p4f_av *p4f_av_of(struct fid_av *fid);
struct p4f_domain *p4f_av_domain(const struct p4f_av *av);
/* An endpoint binding holds a reference: fi_close(av) is -FI_EBUSY. */
void p4f_av_get(struct p4f_av *av);
void p4f_av_put(struct p4f_av *av);
/* The AV's lock, for callers of the *_locked lookups. */
void p4f_av_lock(struct p4f_av *av);
void p4f_av_unlock(struct p4f_av *av);
/* The address behind fi_addr, or NULL. With the AV's lock held; O(1). */
const union p4f_sockaddr *p4f_av_lookup_locked(struct p4f_av *av,
					       fi_addr_t fi_addr);
/*
 * fi_addr of a source address (FI_SOURCE), or FI_ADDR_NOTAVAIL. Family,
 * address and port must match (and the scope id for IPv6); a hash lookup.
 * With the AV's lock held.
 */
fi_addr_t p4f_av_reverse_lookup_locked(struct p4f_av *av,
				       const struct sockaddr *sa);
/* The engine peer id of fi_addr (sends, directed receives). */
int p4f_av_peer(struct p4f_av *av, fi_addr_t fi_addr, uint32_t *peer_p);
/* fi_addr of an engine peer id (FI_SOURCE), or FI_ADDR_NOTAVAIL. O(1). */
fi_addr_t p4f_av_peer_addr(struct p4f_av *av, uint32_t peer);

/* ---- between p4f_av.c and p4f_av_name.c -------------------------------- */

/* An address resolved ahead of the insert (insertsvc, insertsym). */
struct p4f_av_resolved {
	union p4f_sockaddr addr;
	int err;			/* negative: this address failed */
};

/* family is one the AV takes (its domain's format, or either if unset) */
bool p4f_av_family_ok(const struct p4f_av *av, sa_family_t family);
/* The AV's address family for getaddrinfo: AF_INET, AF_INET6, AF_UNSPEC. */
int p4f_av_family(const struct p4f_av *av);
/* fi_av_insert of addresses resolved beforehand (takes the lock). */
int p4f_av_insert_resolved(struct p4f_av *av,
			   const struct p4f_av_resolved *res, size_t count,
			   fi_addr_t *fi_addr, uint64_t flags, void *context);
int p4f_av_insertsvc(struct fid_av *fid, const char *node,
		     const char *service, fi_addr_t *fi_addr, uint64_t flags,
		     void *context);
int p4f_av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt,
		     const char *service, size_t svccnt, fi_addr_t *fi_addr,
		     uint64_t flags, void *context);

#endif /* P4F_AV_H */
