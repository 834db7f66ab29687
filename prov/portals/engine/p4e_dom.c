/*
 * p4e_dom.c - the engine domain: the scope libfabric gives counters and
 * MRs. Owns the CT and triggered-op pools, the peer table that names
 * remote NIs by transport address with ids valid for every NI of the
 * domain, and (lazily) a worker for NIs that bring none of their own.
 * Its lock guards the pools, the triggered-op lists and peer inserts;
 * peers are looked up by id without it (docs/design.md §8).
 */
#include <config.h>

#include <stdlib.h>

#include "p4e_priv.h"
#include "p4u_addr.h"

#define P4E_DEFAULT_MAX_CTS	4096
#define P4E_DEFAULT_MAX_TRIGS	65536
#define P4E_DEFAULT_MAX_PEERS	(1u << 20)

int p4e_dom_create(const struct p4e_dom_attr *attr, struct p4e_dom **dom_p)
{
	uint32_t max_cts = attr && attr->max_cts ? attr->max_cts :
						   P4E_DEFAULT_MAX_CTS;
	uint32_t max_trigs = attr && attr->max_triggered_ops ?
		attr->max_triggered_ops : P4E_DEFAULT_MAX_TRIGS;
	struct p4e_dom *dom;
	int ret;

	if (!dom_p)
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	p4u_lock_init(&dom->lock, attr && attr->locked);
	p4u_list_init(&dom->nis);
	p4u_list_init(&dom->ct_due);
	if (attr)
		dom->worker_attr = attr->worker;
	dom->max_peers = attr && attr->max_peers ? attr->max_peers :
						   P4E_DEFAULT_MAX_PEERS;
	dom->max_peers = P4U_MIN(dom->max_peers,
				 (uint32_t)(P4E_PEER_CHUNK *
					    P4E_PEER_CHUNKS_MAX));
	ret = p4u_pool_init(&dom->cts, sizeof(struct p4e_ct), 64, max_cts);
	if (ret)
		goto err_free;
	ret = p4u_pool_init(&dom->trigs, sizeof(struct p4e_trig_op), 256,
			    max_trigs);
	if (ret)
		goto err_cts;
	ret = p4u_hash_init(&dom->peer_hash, 64);
	if (ret)
		goto err_trigs;
	*dom_p = dom;
	return 0;

err_trigs:
	p4u_pool_fini(&dom->trigs);
err_cts:
	p4u_pool_fini(&dom->cts);
err_free:
	p4u_lock_fini(&dom->lock);
	free(dom);
	return ret;
}

int p4e_dom_destroy(struct p4e_dom *dom)
{
	uint32_t i, c;

	if (!dom)
		return -FI_EINVAL;
	if (!p4u_list_empty(&dom->nis))
		return -FI_EBUSY;
	if (dom->worker && p4e_worker_destroy(dom->worker))
		return -FI_EBUSY;
	dom->worker = NULL;
	/* CTs still allocated are freed with their pending triggered ops
	 * (no NI is left: they are all counter operations) */
	p4u_lock_acquire(&dom->lock);
	for (i = 0; i < p4u_pool_capacity(&dom->cts); i++) {
		struct p4e_ct *ct = p4u_pool_at(&dom->cts, i);

		if (ct)
			p4e_trig_drop_ct(dom, ct);
	}
	p4u_lock_release(&dom->lock);
	for (c = 0; c < P4E_PEER_CHUNKS_MAX && dom->peer_chunks[c]; c++) {
		for (i = 0; i < P4E_PEER_CHUNK; i++)
			free(dom->peer_chunks[c][i]);
		free(dom->peer_chunks[c]);
	}
	p4u_hash_fini(&dom->peer_hash);
	p4u_pool_fini(&dom->trigs);
	p4u_pool_fini(&dom->cts);
	p4u_lock_fini(&dom->lock);
	free(dom);
	return 0;
}

/* The domain's own worker, made at the first NI that needs it. */
int p4e_dom_worker_get(struct p4e_dom *dom, struct p4e_worker **worker_p)
{
	int ret = 0;

	p4u_lock_acquire(&dom->lock);
	if (!dom->worker)
		ret = p4e_worker_create(&dom->worker_attr, &dom->worker);
	p4u_lock_release(&dom->lock);
	if (!ret)
		*worker_p = dom->worker;
	return ret;
}

struct p4e_worker *p4e_dom_worker(struct p4e_dom *dom)
{
	return dom ? dom->worker : NULL;
}

int p4e_dom_progress(struct p4e_dom *dom, int budget)
{
	struct p4e_worker *w = p4e_dom_worker(dom);
	int done;

	if (!w)
		return 0;
	p4e_worker_lock(w);
	done = p4e_worker_progress(w, budget);
	p4e_worker_unlock(w);
	return done;
}

/* ---- peers ------------------------------------------------------------- */

static uint64_t p4e_peer_hash_addr(const void *addr, size_t len)
{
	const uint8_t *p = addr;
	uint64_t h = len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = p4u_hash_combine(h, w);
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	return p4u_hash_combine(h, w);
}

struct p4e_peer_addr *p4e_dom_peer(struct p4e_dom *dom, uint32_t id)
{
	struct p4e_peer_addr **chunk;

	/* pairs with the release stores of p4e_peer_lookup */
	if (id >= __atomic_load_n(&dom->npeers, __ATOMIC_ACQUIRE))
		return NULL;
	chunk = __atomic_load_n(&dom->peer_chunks[id / P4E_PEER_CHUNK],
				__ATOMIC_ACQUIRE);
	return chunk[id % P4E_PEER_CHUNK];
}

/* dom->lock held: a new id for a copy of addr. */
static int p4e_peer_add(struct p4e_dom *dom, const void *addr, size_t addrlen,
			uint64_t h, uint32_t *peer_p)
{
	uint32_t id = dom->npeers, c = id / P4E_PEER_CHUNK;
	struct p4e_peer_addr *pa, **chunk = dom->peer_chunks[c];

	if (id >= dom->max_peers)
		return -FI_ENOSPC;
	if (!chunk) {
		chunk = calloc(P4E_PEER_CHUNK, sizeof(*chunk));
		if (!chunk)
			return -FI_ENOMEM;
		__atomic_store_n(&dom->peer_chunks[c], chunk, __ATOMIC_RELEASE);
	}
	pa = calloc(1, sizeof(*pa));
	if (!pa)
		return -FI_ENOMEM;
	pa->id = id;
	pa->addrlen = (uint32_t)addrlen;
	memcpy(pa->addr, addr, addrlen);
	chunk[id % P4E_PEER_CHUNK] = pa;
	/* the entry is complete before readers may see the id */
	__atomic_store_n(&dom->npeers, id + 1, __ATOMIC_RELEASE);
	p4u_hash_insert(&dom->peer_hash, &pa->hnode, h);
	*peer_p = id;
	return 0;
}

/*
 * Peers are named by their address without the host token (p4u_addr.h):
 * a name with one and without one are the same peer; the token is kept
 * as a hint for the host-local transport.
 */
int p4e_peer_lookup(struct p4e_dom *dom, const void *addr, size_t addrlen,
		    uint32_t *peer_p)
{
	uint8_t key[P4W_ADDR_MAX];
	struct p4e_peer_addr *pa;
	uint64_t h, token;
	int ret;

	if (!dom || !addr || !addrlen || addrlen > P4W_ADDR_MAX || !peer_p)
		return -FI_EINVAL;
	memcpy(key, addr, addrlen);
	token = p4u_addr_token(key, addrlen);
	p4u_addr_clear(key, addrlen);
	h = p4e_peer_hash_addr(key, addrlen);
	p4u_lock_acquire(&dom->lock);
	p4u_hash_foreach(&dom->peer_hash, h, pa, struct p4e_peer_addr, hnode) {
		if (pa->addrlen == addrlen && !memcmp(pa->addr, key, addrlen)) {
			if (token && !__atomic_load_n(&pa->token,
						      __ATOMIC_RELAXED))
				__atomic_store_n(&pa->token, token,
						 __ATOMIC_RELAXED);
			*peer_p = pa->id;
			p4u_lock_release(&dom->lock);
			return 0;
		}
	}
	ret = p4e_peer_add(dom, key, addrlen, h, peer_p);
	if (!ret)
		__atomic_store_n(&p4e_dom_peer(dom, *peer_p)->token, token,
				 __ATOMIC_RELAXED);
	p4u_lock_release(&dom->lock);
	return ret;
}

int p4e_peer_addr(struct p4e_dom *dom, uint32_t peer, void *addr,
		  size_t *addrlen)
{
	struct p4e_peer_addr *pa;

	if (!dom || !addrlen)
		return -FI_EINVAL;
	pa = p4e_dom_peer(dom, peer);
	if (!pa)
		return -FI_EINVAL;
	if (!addr || *addrlen < pa->addrlen) {
		*addrlen = pa->addrlen;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, pa->addr, pa->addrlen);
	*addrlen = pa->addrlen;
	return 0;
}
