/*
 * p4e_dom.c - the engine domain: the scope libfabric gives counters and
 * MRs. Owns the CT and triggered-op pools and the peer table that names
 * remote NIs by transport address with ids valid for every NI of the
 * domain. Domain-wide progress walks its NIs.
 */
#include <config.h>

#include <stdlib.h>

#include "p4e_priv.h"

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
	p4u_list_init(&dom->nis);
	p4u_list_init(&dom->trig_due);
	dom->max_peers = attr && attr->max_peers ? attr->max_peers :
						   P4E_DEFAULT_MAX_PEERS;
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
	free(dom);
	return ret;
}

int p4e_dom_destroy(struct p4e_dom *dom)
{
	uint32_t i;

	if (!dom)
		return -FI_EINVAL;
	if (!p4u_list_empty(&dom->nis))
		return -FI_EBUSY;
	/* CTs still allocated are freed with their pending triggered ops */
	for (i = 0; i < p4u_pool_capacity(&dom->cts); i++) {
		struct p4e_ct *ct = p4u_pool_at(&dom->cts, i);

		if (ct)
			p4e_trig_drop_ct(dom, ct);
	}
	for (i = 0; i < dom->npeers; i++)
		free(dom->peers[i]);
	free(dom->peers);
	p4u_hash_fini(&dom->peer_hash);
	p4u_pool_fini(&dom->trigs);
	p4u_pool_fini(&dom->cts);
	free(dom);
	return 0;
}

int p4e_dom_progress(struct p4e_dom *dom, int budget)
{
	struct p4e_ni *ni;
	int done = 0;

	p4u_list_foreach_entry(&dom->nis, ni, struct p4e_ni, dom_link)
		done += p4e_ni_progress(ni, budget);
	if (!p4u_list_empty(&dom->trig_due))
		p4e_trig_run_due(dom);
	return done;
}

bool p4e_dom_ack_held(struct p4e_dom *dom)
{
	struct p4e_ni *ni;

	p4u_list_foreach_entry(&dom->nis, ni, struct p4e_ni, dom_link)
		if (!p4u_list_empty(&ni->ack_pending))
			return true;
	return false;
}

void p4e_dom_ack_all(struct p4e_dom *dom)
{
	struct p4e_ni *ni;

	p4u_list_foreach_entry(&dom->nis, ni, struct p4e_ni, dom_link)
		p4e_fc_ack_all(ni);
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
	return id < dom->npeers ? dom->peers[id] : NULL;
}

int p4e_peer_lookup(struct p4e_dom *dom, const void *addr, size_t addrlen,
		    uint32_t *peer_p)
{
	struct p4e_peer_addr *pa, **peers;
	uint64_t h;

	if (!dom || !addr || !addrlen || addrlen > P4W_ADDR_MAX || !peer_p)
		return -FI_EINVAL;
	h = p4e_peer_hash_addr(addr, addrlen);
	p4u_hash_foreach(&dom->peer_hash, h, pa, struct p4e_peer_addr, hnode) {
		if (pa->addrlen == addrlen && !memcmp(pa->addr, addr, addrlen)) {
			*peer_p = pa->id;
			return 0;
		}
	}
	if (dom->npeers >= dom->max_peers)
		return -FI_ENOSPC;
	if (dom->npeers == dom->peers_cap) {
		uint32_t cap = dom->peers_cap ? dom->peers_cap * 2 : 64;

		peers = realloc(dom->peers, cap * sizeof(*peers));
		if (!peers)
			return -FI_ENOMEM;
		dom->peers = peers;
		dom->peers_cap = cap;
	}
	pa = calloc(1, sizeof(*pa));
	if (!pa)
		return -FI_ENOMEM;
	pa->id = dom->npeers;
	pa->addrlen = (uint32_t)addrlen;
	memcpy(pa->addr, addr, addrlen);
	dom->peers[dom->npeers++] = pa;
	p4u_hash_insert(&dom->peer_hash, &pa->hnode, h);
	*peer_p = pa->id;
	return 0;
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
