/*
 * p4e_pt.c - portal table entries: allocation with their options, enable
 * and disable, free (refused while anything still names the PT), and
 * teardown.
 */
#include <config.h>

#include "p4e_priv.h"

#define P4E_PT_OPTIONS (P4E_PT_ONLY_USE_ONCE | P4E_PT_FLOWCTRL | \
			P4E_PT_ONLY_TRUNCATE | P4E_PT_ALLOC_DISABLED | \
			P4E_PT_MATCH_UNORDERED | P4E_PT_FC_RESEND | \
			P4E_PT_NO_MATCH_DROP)

int p4e_pt_alloc(struct p4e_ni *ni, unsigned options, struct p4e_eq *eq,
		 uint32_t req_index, uint32_t *index_p)
{
	bool matching;
	struct p4e_pt *pt;
	uint32_t i;
	int ret;

	P4E_NI_ASSERT(ni);
	if (!ni || !index_p || (options & ~P4E_PT_OPTIONS))
		return -FI_EINVAL;
	/* Portals: flow control needs an EQ to report PT_DISABLED on */
	if ((options & P4E_PT_FLOWCTRL) && !eq)
		return -FI_EINVAL;
	if (req_index == P4E_PT_ANY) {
		for (i = 0; i <= ni->limits.max_pt_index; i++)
			if (!ni->pts[i].allocated)
				break;
		if (i > ni->limits.max_pt_index)
			return -FI_ENOSPC;
	} else {
		if (req_index > ni->limits.max_pt_index)
			return -FI_EINVAL;
		if (ni->pts[req_index].allocated)
			return -FI_EBUSY;
		i = req_index;
	}
	pt = &ni->pts[i];
	matching = ni->options & P4E_NI_MATCHING;
	ret = p4e_mlist_init(&pt->prio, matching);
	if (ret)
		return ret;
	ret = p4e_mlist_init(&pt->oflow, matching);
	if (ret)
		goto err_prio;
	ret = p4e_uindex_init(&pt->uhs, matching);
	if (ret)
		goto err_oflow;
	pt->allocated = true;
	pt->enabled = !(options & P4E_PT_ALLOC_DISABLED);
	pt->options = options;
	pt->eq = eq;
	pt->resources_freed = false;
	p4u_list_init(&pt->blocked);
	*index_p = i;
	return 0;

err_oflow:
	p4e_mlist_fini(&pt->oflow);
err_prio:
	p4e_mlist_fini(&pt->prio);
	return ret;
}

/*
 * Does anything still name the PT? Linked entries, but also entries off
 * their list that will still report on it (a pull in flight, an overflow
 * entry kept for its headers, a triggered append) and unexpected headers,
 * claimed ones included. A walk of the pools: this is no data path.
 */
static bool p4e_pt_in_use(struct p4e_ni *ni, struct p4e_pt *pt, uint32_t index)
{
	uint32_t i, n;

	if (pt->prio.count || pt->oflow.count || pt->uhs.count)
		return true;
	n = p4u_pool_capacity(&ni->mes);
	for (i = 0; i < n; i++) {
		struct p4e_me *me = p4u_pool_at(&ni->mes, i);

		if (me && me->pt_index == index)
			return true;
	}
	n = p4u_pool_capacity(&ni->uhs);
	for (i = 0; i < n; i++) {
		struct p4e_uh *uh = p4u_pool_at(&ni->uhs, i);

		if (uh && uh->pt_index == index)
			return true;
	}
	return false;
}

/* Initiators held back by this PT's flow control resend: what they resend
 * to a freed PT is dropped, and what follows it gets through. */
static void p4e_pt_release_blocked(struct p4e_ni *ni, struct p4e_pt *pt)
{
	struct p4e_npeer *np, *tmp;

	p4u_list_foreach_entry_safe(&pt->blocked, np, tmp, struct p4e_npeer,
				    block_link) {
		p4u_list_remove(&np->block_link);
		ni->fc_blocked--;
		np->rx_blocked = false;
		p4e_fc_send_ctrl(np, P4W_RESUME, np->rx_expect);
	}
}

int p4e_pt_free(struct p4e_ni *ni, uint32_t index)
{
	struct p4e_pt *pt;

	P4E_NI_ASSERT(ni);
	if (!ni)
		return -FI_EINVAL;
	pt = p4e_pt_get(ni, index);
	if (!pt)
		return -FI_EINVAL;
	/* Portals: a PT with entries attached is in use */
	if (p4e_pt_in_use(ni, pt, index))
		return -FI_EBUSY;
	p4e_pt_release_blocked(ni, pt);
	p4e_pt_teardown(ni, pt);
	return 0;
}

int p4e_pt_disable(struct p4e_ni *ni, uint32_t index)
{
	struct p4e_pt *pt = ni ? p4e_pt_get(ni, index) : NULL;

	P4E_NI_ASSERT(ni);
	if (!pt)
		return -FI_EINVAL;
	pt->enabled = false;
	return 0;
}

int p4e_pt_enable(struct p4e_ni *ni, uint32_t index)
{
	struct p4e_pt *pt = ni ? p4e_pt_get(ni, index) : NULL;

	P4E_NI_ASSERT(ni);
	if (!pt)
		return -FI_EINVAL;
	pt->enabled = true;
	/* held initiators may try again */
	p4e_fc_pt_freed(ni, pt);
	return 0;
}

static void p4e_pt_free_list(struct p4e_ni *ni, struct p4e_mlist *list)
{
	struct p4e_mentry *e, *tmp;

	p4u_list_foreach_entry_safe(&list->order, e, tmp, struct p4e_mentry,
				    order) {
		struct p4e_me *me = container_of(e, struct p4e_me, ment);

		p4e_mlist_remove(list, e);
		p4u_pool_free(&ni->mes, me);
		ni->entries--;
	}
	p4e_mlist_fini(list);
}

void p4e_pt_teardown(struct p4e_ni *ni, struct p4e_pt *pt)
{
	struct p4e_uentry *u, *tmp;
	struct p4e_npeer *np, *ntmp;

	p4u_list_foreach_entry_safe(&pt->uhs.order, u, tmp, struct p4e_uentry,
				    order) {
		p4e_uindex_remove(&pt->uhs, u);
		p4u_pool_free(&ni->uhs, container_of(u, struct p4e_uh, uent));
	}
	p4e_uindex_fini(&pt->uhs);
	p4e_pt_free_list(ni, &pt->prio);
	p4e_pt_free_list(ni, &pt->oflow);
	p4u_list_foreach_entry_safe(&pt->blocked, np, ntmp, struct p4e_npeer,
				    block_link)
		p4u_list_remove(&np->block_link);
	pt->allocated = false;
	pt->enabled = false;
}
