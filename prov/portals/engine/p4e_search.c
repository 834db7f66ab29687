/*
 * p4e_search.c - PtlMESearch/PtlLESearch on the engine (p4e_me_search):
 * look through a PT's unexpected headers as an append of the described
 * entry would, report (SEARCH_ONLY), claim (the [ext] SEARCH_CLAIM) or
 * delete (SEARCH_DELETE, one overflow event per header) what matches.
 */
#include <config.h>

#include "p4e_priv.h"

/* A search: what it reports (ev: pt_index, user_*), the id filter. */
struct p4e_me_search_ctx {
	struct p4e_ni *ni;
	uint64_t filter;
	bool filtered;
	struct p4e_pt *pt;
	struct p4e_event ev;
	unsigned found;
};

static bool p4e_me_search_accept(struct p4e_uentry *u, void *ctx)
{
	struct p4e_me_search_ctx *c = ctx;

	return !c->filtered || p4e_id_filter_ok(c->ni, true, c->filter,
						u->source);
}

/* The event about uh (type and uh_handle are the caller's). */
static void p4e_me_search_ev(struct p4e_me_search_ctx *c, struct p4e_uh *uh,
			     struct p4e_event *ev)
{
	p4e_uh_event_fill(c->ni, uh, ev);
	ev->pt_index = c->ev.pt_index;
	ev->list = P4E_OVERFLOW_LIST;
	ev->user_ptr = c->ev.user_ptr;
	ev->user_flags = c->ev.user_flags;
}

/*
 * A Portals search (P4E_ME_SEARCH_EACH) with a persistent entry: "event
 * generation for the search functions works just as it would for an
 * append function", and such an entry would match every one of these
 * headers, so each gets a SEARCH event. The find offers the matching headers in arrival order to its
 * accept function: this one reports each and declines it, so the find
 * goes through them all and takes nothing (the sink only queues events).
 */
static bool p4e_me_search_each(struct p4e_uentry *u, void *ctx)
{
	struct p4e_me_search_ctx *c = ctx;
	struct p4e_event ev;

	if (!p4e_me_search_accept(u, c))
		return false;
	p4e_me_search_ev(c, container_of(u, struct p4e_uh, uent), &ev);
	ev.type = P4E_EVENT_SEARCH;
	p4e_event_deliver(c->pt->eq, &ev);
	c->found++;
	return false;
}

int p4e_me_search(struct p4e_ni *ni, uint32_t pt_index,
		  const struct p4e_me_desc *desc, enum p4e_search_op op,
		  void *user_ptr, uint64_t user_flags)
{
	struct p4e_me_search_ctx c = { .ni = ni };
	struct p4e_uentry *u;
	struct p4e_uh *uh;
	struct p4e_event ev;
	uint64_t bits = 0, ignore = UINT64_MAX;
	uint32_t peer, id = P4E_ID_ANY;
	bool each = op == P4E_SEARCH_ONLY && desc &&
		    (desc->options & P4E_ME_SEARCH_EACH) &&
		    !(desc->options & P4E_ME_USE_ONCE);

	P4E_NI_ASSERT(ni);
	c.pt = ni ? p4e_pt_get(ni, pt_index) : NULL;
	if (!c.pt || !desc || op > P4E_SEARCH_CLAIM)
		return -FI_EINVAL;
	if (p4e_me_match_peer(ni, desc->match_id, &peer))
		return -FI_EINVAL;
	if (ni->options & P4E_NI_MATCHING) {
		bits = desc->match_bits;
		ignore = desc->ignore_bits;
		id = peer;
	}
	c.filtered = desc->id_filtered;
	c.filter = desc->id_filter;
	if (c.filtered && (!(ni->options & P4E_NI_MATCHING) ||
			   desc->match_id != P4E_ID_ANY || !ni->id_filter))
		return -FI_EINVAL;
	c.ev.pt_index = pt_index;
	c.ev.user_ptr = user_ptr;
	c.ev.user_flags = user_flags;
	u = p4e_uindex_find(&c.pt->uhs, bits, ignore, id,
			    each ? p4e_me_search_each : p4e_me_search_accept,
			    &c);
	if (!u) {
		ev = c.ev;
		ev.type = P4E_EVENT_SEARCH;
		ev.ni_fail_type = P4E_NI_NO_MATCH;
		ev.initiator = P4E_ID_ANY;
		if (!c.found)
			p4e_event_deliver(c.pt->eq, &ev);
		return 0;
	}
	uh = container_of(u, struct p4e_uh, uent);
	p4e_me_search_ev(&c, uh, &ev);
	switch (op) {
	case P4E_SEARCH_ONLY:
		ev.type = P4E_EVENT_SEARCH;
		p4e_event_deliver(c.pt->eq, &ev);
		return 0;
	case P4E_SEARCH_CLAIM:
		p4e_uindex_remove(&c.pt->uhs, &uh->uent);
		uh->claimed = true;
		ev.type = P4E_EVENT_SEARCH;
		ev.uh_handle = p4u_pool_handle(&ni->uhs, uh);
		p4e_event_deliver(c.pt->eq, &ev);
		return 0;
	case P4E_SEARCH_DELETE:
	default:
		/* every matching header goes, each with its overflow event */
		do {
			uh = container_of(u, struct p4e_uh, uent);
			p4e_me_search_ev(&c, uh, &ev);
			p4e_event_deliver(c.pt->eq, &ev);
			p4e_tgt_uh_dropped(ni, uh);
			p4e_uh_free(ni, uh);
			/* a use-once entry, as its append would, takes one */
			if (desc->options & P4E_ME_USE_ONCE)
				break;
			u = p4e_uindex_find(&c.pt->uhs, bits, ignore, id,
					    p4e_me_search_accept, &c);
		} while (u);
		return 0;
	}
}
