/*
 * p4f_av.c - address vectors (fi_av(3)): open/bind/close, the insert
 * family (insert, insertsvc, insertsym; synchronous, FI_SYNC_ERR, or
 * FI_EVENT completions on a bound EQ), remove, lookup, straddr, and the
 * data-path lookups p4f_av_lookup_locked() (fi_addr -> address, O(1)) and
 * p4f_av_reverse_lookup_locked() (address -> fi_addr, hashed, for
 * FI_SOURCE).
 *
 * Not here: connections to the peers (the transport makes them lazily on
 * first send), named/shared AVs and AV sets (-FI_ENOSYS), FI_AV_USER_ID.
 *
 * Not here either: fi_av_insertsvc and fi_av_insertsym, which turn names
 * and ranges into addresses first (p4f_av_name.c) and insert them through
 * p4f_av_insert_resolved().
 *
 * Every entry point takes av->lock, a leaf below the endpoints' worker
 * locks (the data path looks peers up under them; p4f.h).
 */
#include <config.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4f.h"
#include "p4u_hash.h"

/*
 * Entries live in fixed-size chunks reached through a directory, so they
 * never move when the AV grows: a lookup is two loads, the hash links stay
 * valid, and pointers handed to the data path survive later inserts.
 */
#define P4F_AV_CHUNK_SHIFT	8
#define P4F_AV_CHUNK_SIZE	((size_t)1 << P4F_AV_CHUNK_SHIFT)
#define P4F_AV_CHUNK_MASK	(P4F_AV_CHUNK_SIZE - 1)
#define P4F_AV_DEFAULT_COUNT	64	/* attr->count == 0 */
/* attr->count is only a hint: never size memory from it beyond this */
#define P4F_AV_MAX_HINT		((size_t)1 << 16)

struct p4f_av_entry {
	union p4f_sockaddr addr;
	struct p4u_hash_node node;	/* in av->addr_hash while used */
	fi_addr_t index;
	uint32_t peer;			/* the engine's peer id, or UINT32_MAX */
	bool used;
};

struct p4f_av {
	struct fid_av av_fid;
	struct p4f_domain *domain;
	struct p4u_lock lock;		/* everything below */
	atomic_int ref;			/* endpoints bound to the AV */
	enum fi_av_type type;
	uint64_t flags;			/* FI_EVENT, FI_SYMMETRIC */
	int family;			/* the domain's format, AF_* */
	size_t stride;			/* bytes per address in fi_av_insert */
	struct p4f_eq *eq;		/* fi_av_bind */
	struct p4f_av_entry **chunks;	/* directory of chunks */
	size_t nchunks;			/* directory slots */
	size_t high;			/* every index below high has a slot */
	size_t holes;			/* unused indexes below high */
	size_t first_free;		/* no unused index below this one */
	struct p4u_hash addr_hash;	/* used entries, by address */
	fi_addr_t *by_peer;		/* engine peer id -> fi_addr (FI_SOURCE) */
	size_t by_peer_cap;
};

/* The i-th address of an insert call: 0, or a negative error for it alone. */
typedef int (*p4f_av_addr_func_t)(struct p4f_av *av, const void *arg,
				  size_t i, union p4f_sockaddr *sa_p);

struct p4f_av_insert_req {
	size_t count;
	p4f_av_addr_func_t get;
	const void *arg;
	fi_addr_t *fi_addr;
	uint64_t flags;
	void *context;
};

struct p4f_av *p4f_av_of(struct fid_av *fid)
{
	return container_of(fid, struct p4f_av, av_fid);
}

struct p4f_domain *p4f_av_domain(const struct p4f_av *av)
{
	return av->domain;
}

void p4f_av_get(struct p4f_av *av)
{
	atomic_fetch_add(&av->ref, 1);
}

void p4f_av_put(struct p4f_av *av)
{
	atomic_fetch_sub(&av->ref, 1);
}

/* ---- addresses --------------------------------------------------------- */

int p4f_av_family(const struct p4f_av *av)
{
	return av->family;
}

/* The domain's format: AF_INET or AF_INET6, or AF_UNSPEC for either. */
bool p4f_av_family_ok(const struct p4f_av *av, sa_family_t family)
{
	if (av->family != AF_UNSPEC)
		return family == av->family;
	return family == AF_INET || family == AF_INET6;
}

/*
 * Whether sa can name a peer endpoint, normalised in place: an endpoint
 * always listens on a real unicast address and a non-zero port, so a
 * wildcard, multicast or broadcast address, or port 0, is invalid. The
 * fields that do not identify the peer (sin_zero, flowinfo) are kept: they
 * carry the peer's host token (p4u_addr.h); hash and equality ignore them.
 */
static int p4f_av_addr_check(const struct p4f_av *av, union p4f_sockaddr *sa)
{
	if (!p4f_av_family_ok(av, sa->sa.sa_family))
		return -FI_EINVAL;
	if (sa->sa.sa_family == AF_INET) {
		in_addr_t a = ntohl(sa->sin.sin_addr.s_addr);

		if (!sa->sin.sin_port || a == INADDR_ANY ||
		    a == INADDR_BROADCAST || IN_MULTICAST(a))
			return -FI_EINVAL;
		return 0;
	}
	if (!sa->sin6.sin6_port ||
	    IN6_IS_ADDR_UNSPECIFIED(&sa->sin6.sin6_addr) ||
	    IN6_IS_ADDR_MULTICAST(&sa->sin6.sin6_addr))
		return -FI_EINVAL;
	return 0;
}

/* Copy one address out of the caller's (possibly unaligned) buffer. */
static int p4f_av_addr_copy(const struct p4f_av *av, const void *raw,
			    union p4f_sockaddr *sa)
{
	sa_family_t family;
	size_t len;

	memcpy(&family, (const char *)raw + offsetof(struct sockaddr, sa_family),
	       sizeof(family));
	if (!p4f_av_family_ok(av, family))
		return -FI_EINVAL;
	len = family == AF_INET ? sizeof(struct sockaddr_in) :
				  sizeof(struct sockaddr_in6);
	memset(sa, 0, sizeof(*sa));
	memcpy(sa, raw, len);
	return p4f_av_addr_check(av, sa);
}

static uint64_t p4f_av_addr_hash(const union p4f_sockaddr *sa)
{
	uint64_t hi, lo;

	if (sa->sa.sa_family == AF_INET)
		return p4u_hash_u64(((uint64_t)AF_INET << 48) |
				    ((uint64_t)sa->sin.sin_port << 32) |
				    sa->sin.sin_addr.s_addr);
	memcpy(&hi, &sa->sin6.sin6_addr.s6_addr[0], sizeof(hi));
	memcpy(&lo, &sa->sin6.sin6_addr.s6_addr[8], sizeof(lo));
	return p4u_hash_combine(p4u_hash_combine(hi, lo),
				((uint64_t)sa->sin6.sin6_scope_id << 16) |
				sa->sin6.sin6_port);
}

static bool p4f_av_addr_equal(const union p4f_sockaddr *a,
			      const union p4f_sockaddr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_port == b->sin.sin_port &&
		       a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr;
	return a->sin6.sin6_port == b->sin6.sin6_port &&
	       a->sin6.sin6_scope_id == b->sin6.sin6_scope_id &&
	       !memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr,
		       sizeof(a->sin6.sin6_addr));
}

/* ---- the table --------------------------------------------------------- */

static struct p4f_av_entry *p4f_av_entry_at(const struct p4f_av *av,
					    size_t index)
{
	return &av->chunks[index >> P4F_AV_CHUNK_SHIFT][index &
							P4F_AV_CHUNK_MASK];
}

/* Make room for index av->high: a directory slot and its chunk. */
static int p4f_av_grow_locked(struct p4f_av *av)
{
	size_t chunk = av->high >> P4F_AV_CHUNK_SHIFT, n;
	struct p4f_av_entry **dir;

	if (av->high >= (size_t)INT64_MAX)
		return -FI_ENOSPC;	/* fi_addr_t values stay below ~0 */
	if (chunk >= av->nchunks) {
		n = av->nchunks * 2;
		dir = realloc(av->chunks, n * sizeof(*dir));
		if (!dir)
			return -FI_ENOMEM;
		memset(dir + av->nchunks, 0, (n - av->nchunks) * sizeof(*dir));
		av->chunks = dir;
		av->nchunks = n;
	}
	if (!av->chunks[chunk]) {
		av->chunks[chunk] = calloc(P4F_AV_CHUNK_SIZE,
					   sizeof(struct p4f_av_entry));
		if (!av->chunks[chunk])
			return -FI_ENOMEM;
	}
	return 0;
}

/* The lowest unused index (fi_av(3) for FI_AV_TABLE; MAP does the same). */
static int p4f_av_slot_alloc_locked(struct p4f_av *av, size_t *index_p)
{
	size_t i;
	int ret;

	if (av->holes) {
		for (i = av->first_free; p4f_av_entry_at(av, i)->used; i++)
			;	/* a hole exists below high: the scan ends there */
		av->holes--;
		av->first_free = i + 1;
		*index_p = i;
		return 0;
	}
	ret = p4f_av_grow_locked(av);
	if (ret)
		return ret;
	*index_p = av->high++;
	av->first_free = av->high;
	return 0;
}

/*
 * Name the entry's address in the engine (peer ids are domain-wide, like
 * the AV) and remember the reverse, so sends find their peer and FI_SOURCE
 * finds its fi_addr in O(1). With duplicates the earliest insert answers.
 */
static void p4f_av_peer_bind_locked(struct p4f_av *av,
				    struct p4f_av_entry *entry)
{
	fi_addr_t *by_peer;
	size_t cap, i;
	uint32_t peer;

	if (p4e_peer_lookup(av->domain->edom, &entry->addr,
			    p4f_sockaddr_len(&entry->addr.sa), &peer))
		return;	/* out of peers: sends to it will fail */
	entry->peer = peer;
	if (peer >= av->by_peer_cap) {
		cap = av->by_peer_cap ? av->by_peer_cap : 64;
		while (cap <= peer)
			cap *= 2;
		by_peer = realloc(av->by_peer, cap * sizeof(*by_peer));
		if (!by_peer)
			return;
		for (i = av->by_peer_cap; i < cap; i++)
			by_peer[i] = FI_ADDR_NOTAVAIL;
		av->by_peer = by_peer;
		av->by_peer_cap = cap;
	}
	if (av->by_peer[peer] == FI_ADDR_NOTAVAIL)
		av->by_peer[peer] = entry->index;
}

static int p4f_av_add_locked(struct p4f_av *av, const union p4f_sockaddr *sa,
			     fi_addr_t *fi_addr_p)
{
	struct p4f_av_entry *entry;
	size_t index;
	int ret;

	ret = p4f_av_slot_alloc_locked(av, &index);
	if (ret)
		return ret;
	entry = p4f_av_entry_at(av, index);
	entry->addr = *sa;
	entry->index = index;
	entry->used = true;
	entry->peer = UINT32_MAX;
	p4u_hash_insert(&av->addr_hash, &entry->node, p4f_av_addr_hash(sa));
	p4f_av_peer_bind_locked(av, entry);
	*fi_addr_p = index;
	return 0;
}

static struct p4f_av_entry *p4f_av_entry_find_locked(struct p4f_av *av,
						     fi_addr_t fi_addr)
{
	struct p4f_av_entry *entry;

	if (fi_addr >= av->high)
		return NULL;
	entry = p4f_av_entry_at(av, fi_addr);
	return entry->used ? entry : NULL;
}

static void p4f_av_del_locked(struct p4f_av *av, struct p4f_av_entry *entry)
{
	p4u_hash_remove(&av->addr_hash, &entry->node);
	if (entry->peer < av->by_peer_cap &&
	    av->by_peer[entry->peer] == entry->index)
		/* a duplicate of the address may still answer for the peer */
		av->by_peer[entry->peer] =
			p4f_av_reverse_lookup_locked(av, &entry->addr.sa);
	entry->used = false;
	av->holes++;
	if (entry->index < av->first_free)
		av->first_free = entry->index;
}

void p4f_av_lock(struct p4f_av *av)
{
	p4u_lock_acquire(&av->lock);
}

void p4f_av_unlock(struct p4f_av *av)
{
	p4u_lock_release(&av->lock);
}

const union p4f_sockaddr *p4f_av_lookup_locked(struct p4f_av *av,
					       fi_addr_t fi_addr)
{
	struct p4f_av_entry *entry;

	p4u_lock_assert_held(&av->lock);
	entry = p4f_av_entry_find_locked(av, fi_addr);
	return entry ? &entry->addr : NULL;
}

int p4f_av_peer(struct p4f_av *av, fi_addr_t fi_addr, uint32_t *peer_p)
{
	struct p4f_av_entry *entry;
	int ret = 0;

	p4u_lock_acquire(&av->lock);
	entry = p4f_av_entry_find_locked(av, fi_addr);
	if (entry && entry->peer == UINT32_MAX)
		p4f_av_peer_bind_locked(av, entry);
	if (!entry)
		ret = -FI_EINVAL;
	else if (entry->peer == UINT32_MAX)
		ret = -FI_ENOMEM;
	else
		*peer_p = entry->peer;
	p4u_lock_release(&av->lock);
	return ret;
}

fi_addr_t p4f_av_peer_addr(struct p4f_av *av, uint32_t peer)
{
	fi_addr_t addr;

	p4u_lock_acquire(&av->lock);
	addr = peer < av->by_peer_cap ? av->by_peer[peer] : FI_ADDR_NOTAVAIL;
	p4u_lock_release(&av->lock);
	return addr;
}

fi_addr_t p4f_av_reverse_lookup_locked(struct p4f_av *av,
				       const struct sockaddr *sa)
{
	union p4f_sockaddr key;
	struct p4f_av_entry *entry;
	uint64_t hval;
	size_t len;

	p4u_lock_assert_held(&av->lock);
	if (!sa || !(len = p4f_sockaddr_len(sa)))
		return FI_ADDR_NOTAVAIL;
	memset(&key, 0, sizeof(key));
	memcpy(&key, sa, len);
	hval = p4f_av_addr_hash(&key);
	/* with duplicates, the earliest insert wins (bucket order) */
	p4u_hash_foreach(&av->addr_hash, hval, entry, struct p4f_av_entry, node)
		if (p4f_av_addr_equal(&entry->addr, &key))
			return entry->index;
	return FI_ADDR_NOTAVAIL;
}

/* ---- insert ------------------------------------------------------------ */

/* What can be refused before touching anything. */
static int p4f_av_insert_check(const struct p4f_av *av,
			       const struct p4f_av_insert_req *req)
{
	if (req->flags & ~(FI_MORE | FI_SYNC_ERR)) {
		FI_WARN(&p4f_prov, FI_LOG_AV,
			"unsupported insert flags %#" PRIx64 "\n",
			req->flags & ~(uint64_t)(FI_MORE | FI_SYNC_ERR));
		return -FI_EBADFLAGS;
	}
	if (req->flags & FI_SYNC_ERR) {
		if (av->flags & FI_EVENT)
			return -FI_EBADFLAGS;	/* synchronous inserts only */
		if (!req->context)
			return -FI_EINVAL;
	}
	if (req->count > INT_MAX)
		return -FI_EINVAL;	/* the count must fit the return value */
	return 0;
}

/* Undo the inserts of a call whose completion could not be reported. */
static void p4f_av_insert_undo_locked(struct p4f_av *av, fi_addr_t *fi_addr,
				      size_t count)
{
	struct p4f_av_entry *entry;
	size_t i;

	for (i = 0; i < count; i++) {
		entry = p4f_av_entry_find_locked(av, fi_addr[i]);
		if (entry)
			p4f_av_del_locked(av, entry);
		fi_addr[i] = FI_ADDR_NOTAVAIL;
	}
}

/*
 * FI_EVENT: one error entry per failed address (data = its index in the
 * call), then one FI_AV_COMPLETE (data = how many were inserted). The
 * work is done by now; only the report is "asynchronous".
 */
static int p4f_av_report_locked(struct p4f_av *av,
				const struct p4f_av_insert_req *req,
				const int *errs, size_t done)
{
	struct fi_eq_entry entry = {
		.fid = &av->av_fid.fid,
		.context = req->context,
		.data = done,
	};
	ssize_t ret;
	size_t i;

	for (i = 0; i < req->count; i++) {
		if (!errs[i])
			continue;
		ret = p4f_eq_write_error(av->eq, &av->av_fid.fid, req->context,
					 i, errs[i], 0);
		if (ret < 0)
			return (int)ret;
	}
	ret = p4f_eq_write_event(av->eq, FI_AV_COMPLETE, &entry, sizeof(entry),
				 0);
	return ret < 0 ? (int)ret : 0;
}

/*
 * Insert every address of req. errs (count ints, positive FI_E*) receives
 * each address's status; fi_addr (count entries) its index or
 * FI_ADDR_NOTAVAIL. Returns how many were inserted.
 */
static size_t p4f_av_insert_all_locked(struct p4f_av *av,
				       const struct p4f_av_insert_req *req,
				       fi_addr_t *fi_addr, int *errs)
{
	union p4f_sockaddr sa;
	size_t i, done = 0;
	int ret;

	for (i = 0; i < req->count; i++) {
		fi_addr[i] = FI_ADDR_NOTAVAIL;
		ret = req->get(av, req->arg, i, &sa);
		if (!ret)
			ret = p4f_av_add_locked(av, &sa, &fi_addr[i]);
		errs[i] = -ret;
		if (!ret)
			done++;
	}
	return done;
}

static int p4f_av_insert_run(struct p4f_av *av,
			     const struct p4f_av_insert_req *req)
{
	fi_addr_t *fi_addr = req->fi_addr, *tmp_addr = NULL;
	int *errs = NULL, ret;
	size_t done;

	ret = p4f_av_insert_check(av, req);
	if (ret)
		return ret;
	/* scratch before the lock: fi_addr may be NULL (TABLE), and
	 * FI_EVENT needs the indexes to undo a call it cannot report */
	if (!fi_addr && req->count)
		fi_addr = tmp_addr = calloc(req->count, sizeof(*fi_addr));
	if (req->flags & FI_SYNC_ERR)
		errs = req->context;
	else if (req->count)
		errs = calloc(req->count, sizeof(*errs));
	if (req->count && (!fi_addr || !errs)) {
		ret = -FI_ENOMEM;
		goto out;
	}

	p4u_lock_acquire(&av->lock);
	if ((av->flags & FI_EVENT) && !av->eq) {
		FI_WARN(&p4f_prov, FI_LOG_AV,
			"FI_EVENT AV: bind an EQ before inserting\n");
		ret = -FI_ENOEQ;
		goto out_unlock;
	}
	done = p4f_av_insert_all_locked(av, req, fi_addr, errs);
	ret = (int)done;
	if (av->flags & FI_EVENT) {
		ret = p4f_av_report_locked(av, req, errs, done);
		if (ret) {
			FI_WARN(&p4f_prov, FI_LOG_AV,
				"cannot report AV insert: %s\n",
				fi_strerror(-ret));
			p4f_av_insert_undo_locked(av, fi_addr, req->count);
		}
	}
out_unlock:
	p4u_lock_release(&av->lock);
out:
	if (!(req->flags & FI_SYNC_ERR))
		free(errs);
	free(tmp_addr);
	return ret;
}

static int p4f_av_get_raw(struct p4f_av *av, const void *arg, size_t i,
			  union p4f_sockaddr *sa_p)
{
	return p4f_av_addr_copy(av, (const char *)arg + i * av->stride, sa_p);
}

static int p4f_av_insert(struct fid_av *fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct p4f_av_insert_req req = {
		.count = count, .get = p4f_av_get_raw, .arg = addr,
		.fi_addr = fi_addr, .flags = flags, .context = context,
	};

	if (count && !addr)
		return -FI_EINVAL;
	return p4f_av_insert_run(p4f_av_of(fid), &req);
}

static int p4f_av_get_resolved(struct p4f_av *av, const void *arg, size_t i,
			       union p4f_sockaddr *sa_p)
{
	const struct p4f_av_resolved *res = arg;

	if (res[i].err)
		return res[i].err;
	*sa_p = res[i].addr;
	return p4f_av_addr_check(av, sa_p);
}

int p4f_av_insert_resolved(struct p4f_av *av,
			   const struct p4f_av_resolved *res, size_t count,
			   fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct p4f_av_insert_req req = {
		.count = count, .get = p4f_av_get_resolved, .arg = res,
		.fi_addr = fi_addr, .flags = flags, .context = context,
	};

	return p4f_av_insert_run(av, &req);
}

/* ---- remove, lookup, straddr ------------------------------------------- */

/* All or nothing: an unknown fi_addr fails the call before any removal. */
static int p4f_av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count,
			 uint64_t flags)
{
	struct p4f_av *av = p4f_av_of(fid);
	struct p4f_av_entry *entry;
	size_t i;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;

	p4u_lock_acquire(&av->lock);
	for (i = 0; i < count; i++) {
		if (!p4f_av_entry_find_locked(av, fi_addr[i])) {
			FI_WARN(&p4f_prov, FI_LOG_AV,
				"remove: no address at fi_addr %#" PRIx64 "\n",
				(uint64_t)fi_addr[i]);
			ret = -FI_EINVAL;
			goto out;
		}
	}
	for (i = 0; i < count; i++) {
		entry = p4f_av_entry_find_locked(av, fi_addr[i]);
		if (entry)	/* NULL: listed twice, already gone */
			p4f_av_del_locked(av, entry);
	}
out:
	p4u_lock_release(&av->lock);
	return ret;
}

static int p4f_av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct p4f_av *av = p4f_av_of(fid);
	const union p4f_sockaddr *sa;
	size_t len;

	if (!addrlen || (*addrlen && !addr))
		return -FI_EINVAL;

	p4u_lock_acquire(&av->lock);
	sa = p4f_av_lookup_locked(av, fi_addr);
	if (sa) {
		/* fi_av(3): truncate to the buffer, report the full length */
		len = p4f_sockaddr_len(&sa->sa);
		if (*addrlen)
			memcpy(addr, sa, P4U_MIN(len, *addrlen));
		*addrlen = len;
	}
	p4u_lock_release(&av->lock);
	return sa ? 0 : -FI_EINVAL;
}

static const char *p4f_av_straddr(struct fid_av *fid, const void *addr,
				  char *buf, size_t *len)
{
	union p4f_sockaddr sa;
	size_t salen;

	if (!addr || !len)
		return NULL;
	/* addr need not be aligned, nor in the AV */
	memset(&sa, 0, sizeof(sa));
	memcpy(&sa.sa.sa_family,
	       (const char *)addr + offsetof(struct sockaddr, sa_family),
	       sizeof(sa.sa.sa_family));
	salen = p4f_sockaddr_len(&sa.sa);
	if (salen)
		memcpy(&sa, addr, salen);
	if (p4f_sockaddr_str(&sa.sa, buf, len))
		return NULL;
	return buf;
}

/* ---- fi_ops ------------------------------------------------------------ */

static int p4f_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct p4f_av *av = container_of(fid, struct p4f_av, av_fid.fid);
	int ret = 0;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;	/* fi_av(3): reserved, must be 0 */

	p4u_lock_acquire(&av->lock);
	if (av->eq) {
		ret = -FI_EINVAL;	/* one EQ per AV */
	} else {
		av->eq = p4f_eq_of(container_of(bfid, struct fid_eq, fid));
		if (av->eq)
			p4f_eq_get(av->eq);
	}
	p4u_lock_release(&av->lock);
	return ret;
}

static int p4f_av_close(struct fid *fid)
{
	struct p4f_av *av = container_of(fid, struct p4f_av, av_fid.fid);
	struct p4f_domain *domain = av->domain;
	size_t i;

	if (atomic_load(&av->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_AV, "AV still bound to %d endpoints\n",
			atomic_load(&av->ref));
		return -FI_EBUSY;
	}
	if (av->eq)
		p4f_eq_put(av->eq);
	for (i = 0; i < av->nchunks; i++)
		free(av->chunks[i]);
	free(av->chunks);
	p4u_hash_fini(&av->addr_hash);
	free(av->by_peer);
	p4u_lock_fini(&av->lock);
	free(av);
	atomic_fetch_sub(&domain->ref, 1);
	return 0;
}

static struct fi_ops p4f_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_av_close,
	.bind = p4f_av_bind,
	.control = p4f_no_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static struct fi_ops_av p4f_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = p4f_av_insert,
	.insertsvc = p4f_av_insertsvc,
	.insertsym = p4f_av_insertsym,
	.remove = p4f_av_remove,
	.lookup = p4f_av_lookup,
	.straddr = p4f_av_straddr,
	.av_set = p4f_no_av_av_set,
};

/* ---- open -------------------------------------------------------------- */

static int p4f_av_check_attr(const struct p4f_domain *domain,
			     const struct fi_av_attr *attr)
{
	uint32_t fmt;

	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->rx_ctx_bits < 0)
		return -FI_EINVAL;
	if (attr->rx_ctx_bits) {
		/* receive context bits only serve scalable endpoints */
		FI_WARN(&p4f_prov, FI_LOG_AV, "rx_ctx_bits not supported\n");
		return -FI_ENOSYS;
	}
	if (attr->flags & ~(FI_EVENT | FI_SYMMETRIC | FI_READ))
		return -FI_EBADFLAGS;
	if ((attr->flags & FI_READ) && !attr->name)
		return -FI_EINVAL;	/* read-only must name an existing AV */
	if (attr->name) {
		FI_WARN(&p4f_prov, FI_LOG_AV, "named (shared) AVs not supported\n");
		return -FI_ENOSYS;
	}
	fmt = domain->info->addr_format;
	if (fmt != FI_SOCKADDR_IN && fmt != FI_SOCKADDR_IN6 &&
	    fmt != FI_SOCKADDR && fmt != FI_FORMAT_UNSPEC)
		return -FI_EINVAL;	/* not a format this AV can hold */
	return 0;
}

/* fi_av(3): UNSPEC lets the provider choose; the domain's wish first. */
static enum fi_av_type p4f_av_pick_type(const struct p4f_domain *domain,
					enum fi_av_type type)
{
	if (type != FI_AV_UNSPEC)
		return type;
	if (domain->info->domain_attr &&
	    domain->info->domain_attr->av_type != FI_AV_UNSPEC)
		return domain->info->domain_attr->av_type;
	return FI_AV_TABLE;
}

static int p4f_av_init_table(struct p4f_av *av, size_t count)
{
	size_t hint = P4U_MIN(count ? count : P4F_AV_DEFAULT_COUNT,
			      P4F_AV_MAX_HINT);

	av->nchunks = (hint + P4F_AV_CHUNK_SIZE - 1) >> P4F_AV_CHUNK_SHIFT;
	av->chunks = calloc(av->nchunks, sizeof(*av->chunks));
	if (!av->chunks)
		return -FI_ENOMEM;
	/* the hash holds two entries per bucket before it grows */
	if (p4u_hash_init(&av->addr_hash, hint / 2)) {
		free(av->chunks);
		return -FI_ENOMEM;
	}
	return 0;
}

int p4f_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		struct fid_av **av_p, void *context)
{
	struct p4f_domain *domain = p4f_domain_of(domain_fid);
	struct p4f_av *av;
	int ret;

	if (!attr || !av_p)
		return -FI_EINVAL;
	ret = p4f_av_check_attr(domain, attr);
	if (ret)
		return ret;

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = p4f_av_init_table(av, attr->count);
	if (ret) {
		free(av);
		return ret;
	}
	av->domain = domain;
	p4u_lock_init(&av->lock, domain->locked);
	av->type = p4f_av_pick_type(domain, attr->type);
	attr->type = av->type;
	av->flags = attr->flags & (FI_EVENT | FI_SYMMETRIC);
	av->family = domain->info->addr_format == FI_SOCKADDR_IN ? AF_INET :
		     domain->info->addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
		     AF_UNSPEC;
	/* addresses of one family are packed at its size; the generic
	 * format at the largest, like libfabric's own providers */
	av->stride = av->family == AF_INET ? sizeof(struct sockaddr_in) :
					     sizeof(struct sockaddr_in6);
	atomic_init(&av->ref, 0);
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &p4f_av_fi_ops;
	av->av_fid.ops = &p4f_av_ops;
	atomic_fetch_add(&domain->ref, 1);
	*av_p = &av->av_fid;
	return 0;
}
