/*
 * p4f_mr.c - memory registration (fi_mr(3)): fi_mr_reg/regv/regattr
 * through p4f_mr_ops, the domain's key table (a hash on the key, O(1)
 * lookup for the RMA target), provider-chosen or application keys,
 * counter binding, fi_mr_enable, and the bounds/access check the RMA
 * target path runs (p4f_mr_check_access).
 *
 * Not here: moving data (p4f_rma.c and the engine), device memory
 * (FI_HMEM), authorization keys, raw keys and fi_mr_refresh (-FI_ENOSYS:
 * the provider never sets FI_MR_RAW or FI_MR_MMU_NOTIFY), and binding to
 * endpoints (FI_MR_ENDPOINT is never required).
 *
 * Target side of RMA and atomics: every enabled MR is a set of engine
 * entries (one per iov with FI_MR_VIRT_ADDR, else one) on the RMA PT of
 * every enabled endpoint of the domain: match bits = key, ignore 0,
 * OP_PUT/OP_GET from the remote access bits, NO_TRUNCATE + BOUNDS_FAIL
 * (an access outside the MR fails on it, untouched, with an event that
 * counts on the MR's counter), VIRT_ADDR or the offset argument as base.
 * Chosen over a key-lookup hook inside the engine because the engine
 * already matches persistent entries in O(1) (one hash per ignore mask;
 * ignore 0 here), already does bounds, permissions, rendezvous pulls and
 * atomics on entries, and keeps its entries alive while a pull uses them;
 * a hook would need transient entries with their own lifetime rules. The
 * cost is E x M entries for E endpoints and M MRs, appended on the
 * control path (fi_mr_reg, fi_mr_enable, fi_enable) and unlinked at
 * fi_close.
 *
 * Registration with the device: an MR's iovs are handed to the
 * domain's transport (p4t_mr_reg: verbs registers them, tcp and loop have
 * nothing to do), so transfers inside them need no registration of their
 * own; they are kept next to the MR (struct p4f_mr_full) and dropped at
 * fi_close.
 *
 * Locks (p4f.h): the list of MRs, registration, publishing and
 * withdrawal run under domain->lock, taking each endpoint's worker lock in
 * turn to append or unlink its entries; the key table, each MR's enabled
 * flag and counter binding are guarded by the table's own lock, a leaf the
 * RMA sink takes (under a worker lock) to count a remote access.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "p4f.h"
#include "p4u_time.h"

#define P4F_MR_ACCESS	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)
#define P4F_MR_CNTR_FLAGS (FI_REMOTE_READ | FI_REMOTE_WRITE)

/* The entries of one MR on one endpoint's RMA PT. */
struct p4f_mr_ep {
	struct p4u_list link;	/* in mr->eps */
	struct p4f_ep *ep;
	size_t count;
	uint64_t me[P4F_MR_IOV_LIMIT];
};

/* An MR and its transport registrations (one per non-empty iov). */
struct p4f_mr_full {
	struct p4f_mr mr;
	struct p4t_mr *xport[P4F_MR_IOV_LIMIT];
};

struct p4f_mr_table {
	struct p4u_lock lock;	/* keys, enabled flags, counter bindings */
	struct p4u_list mrs;	/* every MR, enabled or not (domain lock) */
	struct p4u_hash keys;	/* struct p4f_mr by key, enabled or not */
	uint32_t counter;	/* provider keys issued (low half) */
	uint32_t secret;	/* scrambles the counter */
	uint64_t rng;		/* splitmix64 state for the random high half */
};

/* ---- the key table ----------------------------------------------------- */

/* Seed from the kernel; a weaker mix if getrandom is unavailable. */
static void p4f_mr_table_seed(struct p4f_mr_table *table)
{
	uint64_t seed[2];
	struct timespec ts;

	if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed[0] = p4u_hash_combine((uint64_t)ts.tv_nsec,
					   (uint64_t)getpid());
		seed[1] = p4u_hash_combine((uint64_t)(uintptr_t)table,
					   (uint64_t)ts.tv_sec);
	}
	table->secret = (uint32_t)seed[0];
	table->counter = (uint32_t)(seed[0] >> 32);
	table->rng = seed[1];
}

int p4f_mr_table_create(bool locked, struct p4f_mr_table **table_p)
{
	struct p4f_mr_table *table;
	int ret;

	table = calloc(1, sizeof(*table));
	if (!table)
		return -FI_ENOMEM;
	ret = p4u_hash_init(&table->keys, 64);
	if (ret) {
		free(table);
		return ret;
	}
	p4f_mr_table_seed(table);
	p4u_list_init(&table->mrs);
	p4u_lock_init(&table->lock, locked);
	*table_p = table;
	return 0;
}

void p4f_mr_table_destroy(struct p4f_mr_table *table)
{
	if (!table)
		return;
	/* the domain closes only when no MR is left */
	p4u_hash_fini(&table->keys);
	p4u_lock_fini(&table->lock);
	free(table);
}

static struct p4f_mr *p4f_mr_find_locked(struct p4f_mr_table *table,
					 uint64_t key)
{
	uint64_t hval = p4u_hash_u64(key);
	struct p4f_mr *mr;

	p4u_hash_foreach(&table->keys, hval, mr, struct p4f_mr, node)
		if (mr->mr_fid.key == key)
			return mr;
	return NULL;
}

struct p4f_mr *p4f_mr_lookup(struct p4f_domain *domain, uint64_t key)
{
	struct p4f_mr *mr;

	p4u_lock_acquire(&domain->mr_table->lock);
	mr = p4f_mr_find_locked(domain->mr_table, key);
	if (mr && !mr->enabled)
		mr = NULL;
	p4u_lock_release(&domain->mr_table->lock);
	return mr;
}

void p4f_mr_count_remote(struct p4f_domain *domain, uint64_t key,
			 uint64_t access, bool ok)
{
	struct p4f_mr_table *table = domain->mr_table;
	struct p4f_mr *mr;

	/* under the table lock: an MR closing meanwhile keeps its counter
	 * (and the counter its life) until it has left the table */
	p4u_lock_acquire(&table->lock);
	mr = p4f_mr_find_locked(table, key);
	if (mr && mr->enabled && mr->cntr && (mr->cntr_flags & access)) {
		if (ok)
			p4f_cntr_inc(mr->cntr, 1);
		else
			p4f_cntr_inc_err(mr->cntr, 1);
	}
	p4u_lock_release(&table->lock);
}

/* A bijection on 32 bits: distinct counters give distinct results. */
static uint32_t p4f_mr_scramble(uint32_t x, uint32_t secret)
{
	x ^= secret;
	x *= 0x9e3779b1u;
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	return x;
}

/*
 * A fresh provider key: the low half is the scrambled counter, so keys are
 * unique for 2^32 registrations without looking; the high half is random,
 * so a peer cannot guess a neighbour's key from its own. The table check
 * keeps uniqueness after the counter wraps; 0 and FI_KEY_NOTAVAIL are
 * never handed out.
 */
static uint64_t p4f_mr_key_new_locked(struct p4f_mr_table *table)
{
	uint64_t key;

	do {
		table->rng += 0x9e3779b97f4a7c15ULL;
		key = (p4u_hash_u64(table->rng) & 0xffffffff00000000ULL) |
		      p4f_mr_scramble(table->counter++, table->secret);
	} while (!key || key == FI_KEY_NOTAVAIL ||
		 p4f_mr_find_locked(table, key));
	return key;
}

/* fi_mr(3): FI_MR_BASIC means VIRT_ADDR | ALLOCATED | PROV_KEY. */
static uint64_t p4f_mr_mode(const struct p4f_domain *domain)
{
	if (domain->mr_mode == FI_MR_BASIC)
		return FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	if (domain->mr_mode == FI_MR_SCALABLE)
		return 0;
	return domain->mr_mode;
}

static int p4f_mr_key_assign(struct p4f_domain *domain, struct p4f_mr *mr,
			     uint64_t requested_key)
{
	struct p4f_mr_table *table = domain->mr_table;
	uint64_t key;
	int ret = 0;

	p4u_lock_acquire(&table->lock);
	if (p4f_mr_mode(domain) & FI_MR_PROV_KEY) {
		key = p4f_mr_key_new_locked(table);
	} else {
		if (requested_key == FI_KEY_NOTAVAIL) {
			ret = -FI_EKEYREJECTED;
		} else if (p4f_mr_find_locked(table, requested_key)) {
			FI_INFO(&p4f_prov, FI_LOG_MR,
				"key %#" PRIx64 " already in use\n",
				requested_key);
			ret = -FI_ENOKEY;
		}
		key = requested_key;
	}
	if (!ret) {
		mr->mr_fid.key = key;
		p4u_hash_insert(&table->keys, &mr->node, p4u_hash_u64(key));
	}
	p4u_lock_release(&table->lock);
	return ret;
}

static void p4f_mr_key_remove(struct p4f_domain *domain, struct p4f_mr *mr)
{
	p4u_lock_acquire(&domain->mr_table->lock);
	p4u_hash_remove(&domain->mr_table->keys, &mr->node);
	p4u_lock_release(&domain->mr_table->lock);
}

/* ---- address checks ---------------------------------------------------- */

/* Is [addr, addr + len) inside [base, base + size)? Never wraps. */
static bool p4f_mr_in_range(uint64_t base, uint64_t size, uint64_t addr,
			    uint64_t len)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

static int p4f_mr_check_virt(const struct p4f_mr *mr, uint64_t addr,
			     uint64_t len, uint64_t *offset_p)
{
	uint64_t skipped = 0, base;
	size_t i;

	/* an access by virtual address cannot span two iovs that need not
	 * be adjacent: it must fit one */
	for (i = 0; i < mr->iov_count; i++) {
		base = (uint64_t)(uintptr_t)mr->iov[i].iov_base;
		if (p4f_mr_in_range(base, mr->iov[i].iov_len, addr, len)) {
			*offset_p = skipped + (addr - base);
			return 0;
		}
		skipped += mr->iov[i].iov_len;
	}
	return -FI_EINVAL;
}

int p4f_mr_check_access(const struct p4f_mr *mr, uint64_t addr, uint64_t len,
			uint64_t access, uint64_t *offset_p)
{
	if (!access || (access & ~P4F_MR_ACCESS))
		return -FI_EINVAL;
	if ((mr->access & access) != access)
		return -FI_EACCES;
	if (p4f_mr_mode(mr->domain) & FI_MR_VIRT_ADDR)
		return p4f_mr_check_virt(mr, addr, len, offset_p);
	if (!p4f_mr_in_range(mr->offset, mr->length, addr, len))
		return -FI_EINVAL;
	*offset_p = addr - mr->offset;
	return 0;
}

/* ---- engine entries ------------------------------------------------------ */

static void p4f_mr_me_desc(const struct p4f_mr *mr, size_t i, size_t n,
			   struct p4e_me_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->ct = P4E_HANDLE_NONE;
	d->uid = P4E_UID_ANY;
	d->match_id = P4E_ID_ANY;
	d->match_bits = mr->mr_fid.key;
	d->ignore_bits = 0;
	d->options = P4E_ME_NO_TRUNCATE | P4E_ME_EVENT_FAIL |
		     P4E_ME_EVENT_LINK_DISABLE | P4E_ME_EVENT_UNLINK_DISABLE;
	if (mr->access & FI_REMOTE_WRITE)
		d->options |= P4E_ME_OP_PUT;
	if (mr->access & FI_REMOTE_READ)
		d->options |= P4E_ME_OP_GET;
	/* the last entry of the key refuses what does not fit: the ones
	 * before it let an access by address try the next iov */
	if (i == n - 1)
		d->options |= P4E_ME_BOUNDS_FAIL;
	if (p4f_mr_mode(mr->domain) & FI_MR_VIRT_ADDR) {
		d->options |= P4E_ME_VIRT_ADDR;
		d->start = mr->iov[i].iov_base;
		d->length = mr->iov[i].iov_len;
	} else if (mr->iov_count == 1) {
		d->start = mr->iov[0].iov_base;
		d->length = mr->iov[0].iov_len;
		d->base = mr->offset;
	} else {
		d->options |= P4E_ME_IOVEC;	/* the engine copies the array */
		d->start = mr->iov;
		d->length = mr->iov_count;
		d->base = mr->offset;
	}
}

/*
 * Busy only while a rendezvous pull into the entry is in flight: progress
 * this endpoint's NI (it may already be off the domain's list, at
 * fi_close) until the pull finished or failed, which the peer timeout
 * bounds. Past that the entry is left to the NI's destruction; its events
 * find the MR by key (p4f_sink_rma.c), so nothing dangles. Domain lock
 * held; takes the endpoint's worker lock.
 */
static void p4f_mr_ep_unlink_locked(struct p4f_mr_ep *rec)
{
	struct p4f_ep *ep = rec->ep;
	uint64_t deadline = p4u_time_ms() + p4f_params.peer_timeout_ms + 1000;
	int ret;

	p4f_ep_lock(ep);
	while (rec->count) {
		while ((ret = p4e_me_unlink(ep->ni, rec->me[rec->count - 1],
					    0)) == -FI_EBUSY &&
		       p4u_time_ms() < deadline)
			p4e_ni_progress(ep->ni, 64);
		if (ret)
			FI_WARN(&p4f_prov, FI_LOG_MR,
				"cannot unlink MR entry: %s\n",
				fi_strerror(-ret));
		rec->count--;
	}
	p4f_ep_unlock(ep);
}

/* Only MRs a peer may access get entries: an access to one without
 * remote rights would be refused anyway (as an unknown key, FI_EACCES),
 * and applications register many buffers for local use only. */
static bool p4f_mr_is_remote(const struct p4f_mr *mr)
{
	return mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE);
}

/* Entries for mr on ep's RMA PT. */
static int p4f_mr_ep_add_locked(struct p4f_mr *mr, struct p4f_ep *ep)
{
	size_t n = (p4f_mr_mode(mr->domain) & FI_MR_VIRT_ADDR) ?
		   mr->iov_count : 1, i;
	struct p4e_me_desc d;
	struct p4f_mr_ep *rec;
	int ret = 0;

	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -FI_ENOMEM;
	rec->ep = ep;
	p4f_ep_lock(ep);
	for (i = 0; i < n; i++) {
		if (!mr->iov[i].iov_len && i != n - 1)
			continue;	/* nothing to reach there */
		p4f_mr_me_desc(mr, i, n, &d);
		/* no pointer to mr in the entry: the sink looks the key up */
		ret = p4e_me_append(ep->ni, P4F_PT_RMA, &d, P4E_PRIORITY_LIST,
				    NULL, 0, &rec->me[rec->count]);
		if (ret)
			break;
		rec->count++;
	}
	p4f_ep_unlock(ep);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "cannot expose MR: %s\n",
			fi_strerror(-ret));
		p4f_mr_ep_unlink_locked(rec);
		free(rec);
		return ret == -FI_ENOSPC ? -FI_ENOMEM : ret;
	}
	p4u_list_insert_tail(&mr->eps, &rec->link);
	return 0;
}

static void p4f_mr_unpublish_locked(struct p4f_mr *mr)
{
	struct p4f_mr_ep *rec, *tmp;

	p4u_list_foreach_entry_safe(&mr->eps, rec, tmp, struct p4f_mr_ep,
				    link) {
		p4f_mr_ep_unlink_locked(rec);
		p4u_list_remove(&rec->link);
		free(rec);
	}
}

/* An MR just became enabled: every enabled endpoint reaches it. */
static int p4f_mr_publish_locked(struct p4f_mr *mr)
{
	struct p4f_ep *ep;
	int ret;

	if (!p4f_mr_is_remote(mr))
		return 0;
	p4u_list_foreach_entry(&mr->domain->eps, ep, struct p4f_ep, dom_link) {
		ret = p4f_mr_ep_add_locked(mr, ep);
		if (ret) {
			p4f_mr_unpublish_locked(mr);
			return ret;
		}
	}
	return 0;
}

int p4f_mr_ep_attach_locked(struct p4f_ep *ep)
{
	struct p4f_mr *mr;
	int ret;

	p4u_lock_assert_held(&ep->domain->lock);
	p4u_list_foreach_entry(&ep->domain->mr_table->mrs, mr, struct p4f_mr,
			       link) {
		/* enabled changes under the domain lock too: no race */
		if (!mr->enabled || !p4f_mr_is_remote(mr))
			continue;
		ret = p4f_mr_ep_add_locked(mr, ep);
		if (ret) {
			p4f_mr_ep_detach_locked(ep);
			return ret;
		}
	}
	return 0;
}

void p4f_mr_ep_detach_locked(struct p4f_ep *ep)
{
	struct p4f_mr_ep *rec, *tmp;
	struct p4f_mr *mr;

	p4u_lock_assert_held(&ep->domain->lock);
	p4u_list_foreach_entry(&ep->domain->mr_table->mrs, mr, struct p4f_mr,
			       link) {
		p4u_list_foreach_entry_safe(&mr->eps, rec, tmp,
					    struct p4f_mr_ep, link) {
			if (rec->ep != ep)
				continue;
			p4f_mr_ep_unlink_locked(rec);
			p4u_list_remove(&rec->link);
			free(rec);
		}
	}
}

/* ---- fi_ops ------------------------------------------------------------ */

static struct p4f_mr *p4f_mr_of_fid(struct fid *fid)
{
	return container_of(fid, struct p4f_mr, mr_fid.fid);
}

static void p4f_mr_free(struct p4f_mr *mr)
{
	struct p4f_mr_full *full = container_of(mr, struct p4f_mr_full, mr);
	size_t i;

	for (i = 0; i < mr->iov_count; i++)
		p4t_mr_dereg(mr->domain->transport, full->xport[i]);
	free(mr->iov);
	free(full);
}

/*
 * Register mr's memory with the transport. What peers may do through it:
 * pull from what is sent or written (rendezvous), push into what is read
 * (large get replies).
 */
static int p4f_mr_xport_reg(struct p4f_mr *mr)
{
	struct p4f_mr_full *full = container_of(mr, struct p4f_mr_full, mr);
	unsigned access = 0;
	size_t i;
	int ret;

	if (mr->access & (FI_SEND | FI_WRITE))
		access |= P4T_ACCESS_READ;
	if (mr->access & FI_READ)
		access |= P4T_ACCESS_WRITE;
	for (i = 0; i < mr->iov_count; i++) {
		if (!mr->iov[i].iov_len)
			continue;
		ret = p4t_mr_reg(mr->domain->transport, mr->iov[i].iov_base,
				 mr->iov[i].iov_len, access, &full->xport[i]);
		if (ret) {
			FI_WARN(&p4f_prov, FI_LOG_MR, "cannot register with "
				"the %s transport: %s\n",
				mr->domain->transport->name, fi_strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int p4f_mr_close(struct fid *fid)
{
	struct p4f_mr *mr = p4f_mr_of_fid(fid);
	struct p4f_domain *domain = mr->domain;

	/* the key leaves the table and the wire first: no lookup and no
	 * remote access can reach mr after */
	p4u_lock_acquire(&domain->lock);
	p4f_mr_key_remove(domain, mr);
	p4f_mr_unpublish_locked(mr);
	p4u_list_remove(&mr->link);
	p4u_lock_release(&domain->lock);
	if (mr->cntr)
		p4f_cntr_put(mr->cntr);
	p4f_mr_free(mr);
	atomic_fetch_sub(&domain->ref, 1);
	return 0;
}

static int p4f_mr_bind_cntr_locked(struct p4f_mr *mr, struct p4f_cntr *cntr,
				   uint64_t flags)
{
	if (p4f_cntr_domain(cntr) != mr->domain)
		return -FI_EINVAL;
	if (mr->bind_closed)
		return -FI_EOPBADSTATE;	/* fi_mr(3): no binding after enable */
	if ((p4f_mr_mode(mr->domain) & FI_MR_RMA_EVENT) &&
	    !(mr->flags & FI_RMA_EVENT)) {
		FI_WARN(&p4f_prov, FI_LOG_MR,
			"FI_MR_RMA_EVENT: register with FI_RMA_EVENT to bind a counter\n");
		return -FI_EINVAL;
	}
	/* one counter per MR, as a Portals ME has one CT */
	if (mr->cntr && mr->cntr != cntr)
		return -FI_EINVAL;
	if (!mr->cntr) {
		p4f_cntr_get(cntr);	/* the counter cannot close under us */
		mr->cntr = cntr;
	}
	mr->cntr_flags |= flags;
	return 0;
}

static int p4f_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct p4f_mr *mr = p4f_mr_of_fid(fid);
	struct p4f_cntr *cntr;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (bfid->fclass == FI_CLASS_EP)
		return -FI_ENOSYS;	/* FI_MR_ENDPOINT is never required */
	if (bfid->fclass != FI_CLASS_CNTR)
		return -FI_EINVAL;
	if (!flags || (flags & ~P4F_MR_CNTR_FLAGS))
		return -FI_EBADFLAGS;
	cntr = p4f_cntr_of(container_of(bfid, struct fid_cntr, fid));
	if (!cntr)
		return -FI_EINVAL;

	p4u_lock_acquire(&mr->domain->mr_table->lock);
	ret = p4f_mr_bind_cntr_locked(mr, cntr, flags);
	p4u_lock_release(&mr->domain->mr_table->lock);
	return ret;
}

static int p4f_mr_control(struct fid *fid, int command, void *arg)
{
	struct p4f_mr *mr = p4f_mr_of_fid(fid);
	int ret;

	switch (command) {
	case FI_ENABLE:
		p4u_lock_acquire(&mr->domain->lock);
		ret = mr->enabled ? 0 : p4f_mr_publish_locked(mr);
		if (!ret) {
			p4u_lock_acquire(&mr->domain->mr_table->lock);
			mr->enabled = true;
			mr->bind_closed = true;
			p4u_lock_release(&mr->domain->mr_table->lock);
		}
		p4u_lock_release(&mr->domain->lock);
		return ret;
	case FI_REFRESH:	/* FI_MR_MMU_NOTIFY is never required */
	case FI_GET_RAW_MR:	/* FI_MR_RAW is never required */
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops p4f_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_mr_close,
	.bind = p4f_mr_bind,
	.control = p4f_mr_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

/* ---- registration ------------------------------------------------------ */

/* Sum of the iov lengths, checking every range is sane. */
static int p4f_mr_check_iov(const struct iovec *iov, size_t count,
			    size_t *length_p)
{
	uint64_t base;
	size_t i, length = 0;

	if (!iov || !count || count > P4F_MR_IOV_LIMIT)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		base = (uint64_t)(uintptr_t)iov[i].iov_base;
		/* NULL is never a real buffer; a range may not wrap */
		if (!base || iov[i].iov_len - 1 > UINT64_MAX - base)
			return -FI_EINVAL;
		if (iov[i].iov_len > SIZE_MAX - length)
			return -FI_EINVAL;
		length += iov[i].iov_len;
	}
	if (!length)
		return -FI_EINVAL;	/* fi_mr(3): len must be > 0 */
	*length_p = length;
	return 0;
}

/* The parts of fi_mr_attr an application of this API version has. */
static int p4f_mr_check_attr_version(const struct p4f_domain *domain,
				     const struct fi_mr_attr *attr)
{
	if (FI_VERSION_GE(domain->api_version, FI_VERSION(1, 5)) &&
	    attr->auth_key_size) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "auth_key not supported yet\n");
		return -FI_ENOSYS;
	}
	/* iface exists from 1.10; only host memory can be copied */
	if (FI_VERSION_GE(domain->api_version, FI_VERSION(1, 10)) &&
	    attr->iface != FI_HMEM_SYSTEM) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "device memory not supported\n");
		return -FI_ENOSYS;
	}
	return 0;
}

static int p4f_mr_check_attr(const struct p4f_domain *domain,
			     const struct fi_mr_attr *attr, uint64_t flags,
			     size_t *length_p)
{
	int ret;

	if (flags & ~FI_RMA_EVENT) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "unsupported flags %#" PRIx64 "\n",
			flags & ~(uint64_t)FI_RMA_EVENT);
		return -FI_EBADFLAGS;
	}
	/* 0 is accepted: an MR nothing may access (fabtests registers it) */
	if (attr->access & ~P4F_MR_ACCESS) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "unsupported access %#" PRIx64 "\n",
			attr->access & ~(uint64_t)P4F_MR_ACCESS);
		return -FI_EINVAL;
	}
	ret = p4f_mr_check_attr_version(domain, attr);
	if (ret)
		return ret;
	ret = p4f_mr_check_iov(attr->mr_iov, attr->iov_count, length_p);
	if (ret)
		return ret;
	/* offset addressing: the last byte's address must not wrap */
	if (!(p4f_mr_mode(domain) & FI_MR_VIRT_ADDR) &&
	    *length_p - 1 > UINT64_MAX - attr->offset)
		return -FI_EINVAL;
	return 0;
}

static int p4f_mr_create(struct p4f_domain *domain,
			 const struct fi_mr_attr *attr, uint64_t flags,
			 size_t length, struct p4f_mr **mr_p)
{
	struct p4f_mr_full *full;
	struct p4f_mr *mr;

	full = calloc(1, sizeof(*full));
	if (!full)
		return -FI_ENOMEM;
	mr = &full->mr;
	mr->iov = calloc(attr->iov_count, sizeof(*mr->iov));
	if (!mr->iov) {
		free(full);
		return -FI_ENOMEM;
	}
	memcpy(mr->iov, attr->mr_iov, attr->iov_count * sizeof(*mr->iov));
	mr->iov_count = attr->iov_count;
	mr->length = length;
	mr->domain = domain;
	mr->access = attr->access;
	mr->flags = flags;
	mr->offset = attr->offset;
	/* fi_mr(3): with FI_MR_RMA_EVENT, FI_RMA_EVENT MRs wait for
	 * fi_mr_enable (after their counters are bound) */
	mr->enabled = !((flags & FI_RMA_EVENT) &&
			(p4f_mr_mode(domain) & FI_MR_RMA_EVENT));
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &p4f_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	p4u_list_init(&mr->link);
	p4u_list_init(&mr->eps);
	*mr_p = mr;
	return 0;
}

/* A domain bound to an EQ with FI_REG_MR reports every registration. */
static int p4f_mr_report(struct p4f_domain *domain, struct p4f_mr *mr)
{
	struct fi_eq_entry entry = {
		.fid = &mr->mr_fid.fid,
		.context = mr->mr_fid.fid.context,
	};
	ssize_t ret;

	if (!domain->eq || !(domain->eq_flags & FI_REG_MR))
		return 0;
	ret = p4f_eq_write_event(p4f_eq_of(domain->eq), FI_MR_COMPLETE, &entry,
				 sizeof(entry), 0);
	return ret < 0 ? (int)ret : 0;
}

static int p4f_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr_p)
{
	struct p4f_domain *domain =
		container_of(fid, struct p4f_domain, domain_fid.fid);
	struct fid_mr *old;
	struct p4f_mr *mr;
	size_t length;
	int ret;

	if (!attr || !mr_p)
		return -FI_EINVAL;
	ret = p4f_mr_check_attr(domain, attr, flags, &length);
	if (ret)
		return ret;
	ret = p4f_mr_create(domain, attr, flags, length, &mr);
	if (ret)
		return ret;
	ret = p4f_mr_xport_reg(mr);
	if (ret) {
		p4f_mr_free(mr);
		return ret;
	}

	p4u_lock_acquire(&domain->lock);
	ret = p4f_mr_key_assign(domain, mr, attr->requested_key);
	if (!ret && mr->enabled) {
		ret = p4f_mr_publish_locked(mr);
		if (ret)
			p4f_mr_key_remove(domain, mr);
	}
	if (!ret)
		p4u_list_insert_tail(&domain->mr_table->mrs, &mr->link);
	p4u_lock_release(&domain->lock);
	if (ret) {
		p4f_mr_free(mr);
		return ret;
	}
	atomic_fetch_add(&domain->ref, 1);

	/* fi_mr(3): *mr is written before the event can be read */
	old = *mr_p;
	*mr_p = &mr->mr_fid;
	ret = p4f_mr_report(domain, mr);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_MR, "cannot report MR: %s\n",
			fi_strerror(-ret));
		*mr_p = old;
		p4f_mr_close(&mr->mr_fid.fid);
	}
	return ret;
}

static int p4f_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags,
		       struct fid_mr **mr_p, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return p4f_mr_regattr(fid, &attr, flags, mr_p);
}

static int p4f_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr_p, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return p4f_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			   mr_p, context);
}

struct fi_ops_mr p4f_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = p4f_mr_reg,
	.regv = p4f_mr_regv,
	.regattr = p4f_mr_regattr,
};
