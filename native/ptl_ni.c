/*
 * ptl_ni.c - network interfaces (PtlNIInit/Fini/Status, PtlSetMap/GetMap,
 * PtlGetUid/GetId/GetPhysId, bundles) and process addressing.
 *
 * Addressing: a process has one physical id (nid, pid) for all its NIs.
 * nid is the IPv4 address of PTL_IFACE (default 127.0.0.1, host order);
 * the NI of kind k (bit 0 non-matching, bit 1 logical) of process pid
 * listens on TCP port PTL_PORT_BASE + 4 * pid + k. So any peer is reached
 * from its id alone, and an NI talks to the NIs of its own kind.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptl_priv.h"

/*
 * As many as the handle layout allows (ptl_priv.h): MPI libraries post one
 * entry per receive and pass no desired limits (Open MPI's mtl portals4
 * ran out at 65536 posted receives); tables grow only as used.
 */
#define PTL_DEFAULT_ENTRIES	(PTL_H_IDX_MAX + 1)
/*
 * Unexpected headers likewise: an MPI program may send a million messages
 * before their receives are posted (mpi_isend_flood -n 1000000), and Open
 * MPI's mtl portals4 recovers from a disabled PT by resending into the
 * same full list. Headers are allocated as they arrive (about 130 bytes).
 */
#define PTL_DEFAULT_UH		(1u << 20)

static void ptl_ni_addr(unsigned kind, ptl_nid_t nid, ptl_pid_t pid,
			struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(nid);
	sin->sin_port = htons((uint16_t)(ptl_lib.port_base + 4 * pid + kind));
}

/* Physical id -> engine peer id, for sending (no wildcards). */
int ptl_ni_peer(struct ptl_ni *ni, ptl_process_t id, uint32_t *peer_p)
{
	struct sockaddr_in sin;

	if (ni->options & PTL_NI_LOGICAL) {
		if (id.rank >= ni->map_size)
			return -FI_EINVAL;
		*peer_p = id.rank;	/* the engine maps ranks itself */
		return 0;
	}
	if (id.phys.nid == PTL_NID_ANY || id.phys.pid == PTL_PID_ANY ||
	    id.phys.pid >= PTL_PID_MAX)
		return -FI_EINVAL;
	ptl_ni_addr(ni->kind, id.phys.nid, id.phys.pid, &sin);
	return p4e_peer_lookup(ni->dom, &sin, sizeof(sin), peer_p);
}

/*
 * An entry's match_id into desc. The engine's ids name one initiator or
 * any; a physical id with only one of nid / pid wildcarded (every process
 * of a node, a pid on any node) is any initiator narrowed by the NI's
 * id filter (ptl_ni_id_filter), with nid << 32 | pid as the filter.
 */
int ptl_ni_match_id(struct ptl_ni *ni, ptl_process_t id,
		    struct p4e_me_desc *desc)
{
	bool nid_any, pid_any;

	desc->id_filtered = false;
	if (ni->options & PTL_NI_LOGICAL) {
		if (id.rank == PTL_RANK_ANY) {
			desc->match_id = P4E_ID_ANY;
			return 0;
		}
		return ptl_ni_peer(ni, id, &desc->match_id);
	}
	nid_any = id.phys.nid == PTL_NID_ANY;
	pid_any = id.phys.pid == PTL_PID_ANY;
	if (!nid_any && !pid_any)
		return ptl_ni_peer(ni, id, &desc->match_id);
	if (!pid_any && id.phys.pid >= PTL_PID_MAX)
		return -FI_EINVAL;
	desc->match_id = P4E_ID_ANY;
	if (!nid_any || !pid_any) {
		desc->id_filtered = true;
		desc->id_filter = (uint64_t)id.phys.nid << 32 | id.phys.pid;
	}
	return 0;
}

/* The engine asks it of each candidate entry with a half wildcard. */
static bool ptl_ni_id_filter(void *ctx, uint64_t filter, uint32_t peer)
{
	ptl_process_t id = ptl_ni_initiator(ctx, peer);
	ptl_nid_t nid = (ptl_nid_t)(filter >> 32);
	ptl_pid_t pid = (ptl_pid_t)(filter & UINT32_MAX);

	return (nid == PTL_NID_ANY || id.phys.nid == nid) &&
	       (pid == PTL_PID_ANY || id.phys.pid == pid);
}

ptl_process_t ptl_ni_initiator(struct ptl_ni *ni, uint32_t peer)
{
	ptl_process_t id;
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	unsigned port;

	memset(&id, 0, sizeof(id));
	if (ni->options & PTL_NI_LOGICAL) {
		id.rank = peer == P4E_ID_ANY ? PTL_RANK_ANY : peer;
		return id;
	}
	id.phys.nid = PTL_NID_ANY;
	id.phys.pid = PTL_PID_ANY;
	if (peer == P4E_ID_ANY ||
	    p4e_peer_addr(ni->dom, peer, &sin, &len) || len != sizeof(sin))
		return id;
	port = ntohs(sin.sin_port);
	id.phys.nid = ntohl(sin.sin_addr.s_addr);
	if (port >= ptl_lib.port_base)
		id.phys.pid = (port - ptl_lib.port_base) / 4;
	return id;
}

/* ---- limits ------------------------------------------------------------- */

static uint32_t ptl_lim(int v)
{
	return v > 0 ? (uint32_t)v : 0;
}

static int ptl_ilim(uint64_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

static void ptl_limits_in(const ptl_ni_limits_t *d, struct p4e_ni_limits *l,
			  struct p4e_dom_attr *da)
{
	memset(l, 0, sizeof(*l));
	memset(da, 0, sizeof(*da));
	l->max_entries = PTL_DEFAULT_ENTRIES;
	l->max_unexpected_headers = PTL_DEFAULT_UH;
	if (!d)
		return;
	if (d->max_entries > 0)
		l->max_entries = ptl_lim(d->max_entries);
	if (l->max_entries > PTL_H_IDX_MAX + 1)
		l->max_entries = PTL_H_IDX_MAX + 1;
	if (d->max_unexpected_headers > 0)
		l->max_unexpected_headers = ptl_lim(d->max_unexpected_headers);
	l->max_mds = ptl_lim(d->max_mds);
	if (l->max_mds > PTL_H_IDX_MAX + 1)
		l->max_mds = PTL_H_IDX_MAX + 1;
	l->max_eqs = ptl_lim(d->max_eqs);
	l->max_pt_index = ptl_lim(d->max_pt_index);
	l->max_iovecs = ptl_lim(d->max_iovecs);
	l->max_list_size = ptl_lim(d->max_list_size);
	l->max_msg_size = d->max_msg_size;
	l->max_atomic_size = d->max_atomic_size;
	l->max_fetch_atomic_size = d->max_fetch_atomic_size;
	l->max_volatile_size = d->max_volatile_size;
	da->max_cts = ptl_lim(d->max_cts);
	if (da->max_cts > PTL_H_IDX_MAX + 1)
		da->max_cts = PTL_H_IDX_MAX + 1;
	da->max_triggered_ops = ptl_lim(d->max_triggered_ops);
}

static void ptl_limits_out(const struct p4e_ni_limits *l, ptl_ni_limits_t *a)
{
	memset(a, 0, sizeof(*a));
	a->max_entries = ptl_ilim(l->max_entries);
	a->max_unexpected_headers = ptl_ilim(l->max_unexpected_headers);
	a->max_mds = ptl_ilim(l->max_mds);
	a->max_cts = ptl_ilim(l->max_cts);
	a->max_eqs = ptl_ilim(l->max_eqs > PTL_H_IDX_MAX + 1 ?
			      PTL_H_IDX_MAX + 1 : l->max_eqs);
	a->max_pt_index = ptl_ilim(l->max_pt_index);
	a->max_iovecs = ptl_ilim(l->max_iovecs);
	a->max_list_size = ptl_ilim(l->max_list_size);
	a->max_triggered_ops = ptl_ilim(l->max_triggered_ops);
	a->max_msg_size = l->max_msg_size;
	a->max_atomic_size = l->max_atomic_size;
	a->max_fetch_atomic_size = l->max_fetch_atomic_size;
	a->max_waw_ordered_size = l->max_waw_ordered_size;
	a->max_war_ordered_size = l->max_war_ordered_size;
	a->max_volatile_size = l->max_volatile_size;
	/* atomics run on the host CPU under the lock: coherent with it */
	a->features = PTL_COHERENT_ATOMICS;
}

/* ---- create / destroy --------------------------------------------------- */

void ptl_ni_destroy_locked(struct ptl_ni *ni)
{
	uint32_t i;

	/* fails pending work, unlinks entries: events still reach the EQs */
	if (ni->eni)
		p4e_ni_destroy(ni->eni);
	if (ni->dom)
		p4e_dom_destroy(ni->dom);
	for (i = 0; i < ni->eqs.cap; i++) {
		struct ptl_eq *eq = ni->eqs.slots ? ni->eqs.slots[i].obj : NULL;

		if (ni->eqs.slots && ni->eqs.slots[i].used && eq) {
			free(eq->ring);
			free(eq);
		}
	}
	ptl_eq_free_all_freed(ni);
	ptl_tab_fini(&ni->eqs);
	ptl_tab_fini(&ni->cts);
	ptl_tab_fini(&ni->mds);
	ptl_tab_fini(&ni->mes);
	free(ni->pts);
	free(ni->map);
	free(ni);
	/* waiters on its EQs and CTs must notice they are gone */
	ptl_wake_locked();
}

static int ptl_ni_open_engine(struct ptl_ni *ni, ptl_pid_t pid,
			      const struct p4e_ni_limits *desired)
{
	struct sockaddr_in sin;
	struct p4e_ni_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.options = (ni->options & PTL_NI_MATCHING ? P4E_NI_MATCHING :
			P4E_NI_NO_MATCHING) |
		       (ni->options & PTL_NI_LOGICAL ? P4E_NI_LOGICAL :
			P4E_NI_PHYSICAL);
	attr.desired = *desired;
	attr.transport = ptl_lib.transport;
	attr.local_transport = ptl_lib.local_transport;
	ptl_ni_addr(ni->kind, ptl_lib.nid, pid, &sin);
	attr.addr = &sin;
	attr.addrlen = sizeof(sin);
	attr.uid = (uint32_t)getuid();
	attr.peer_timeout_ms = ptl_lib.peer_timeout_ms;
	attr.id_filter = ptl_ni_id_filter;
	attr.id_filter_ctx = ni;
	/* the library's: its thread progresses every NI, its lock is ours */
	attr.worker = ptl_lib.worker;
	return p4e_ni_create(ni->dom, &attr, &ni->eni);
}

/* Open the engine NI at pid, or at the first free pid for PTL_PID_ANY. */
static int ptl_ni_open_pid(struct ptl_ni *ni, ptl_pid_t pid,
			   const struct p4e_ni_limits *desired,
			   ptl_pid_t *pid_p)
{
	ptl_pid_t start, p;
	unsigned n;
	int ret;

	if (pid != PTL_PID_ANY) {
		ret = ptl_ni_open_engine(ni, pid, desired);
		if (!ret)
			*pid_p = pid;
		return ret;
	}
	/* PTL_PID (set by a launcher, which told the peers) is binding */
	if (ptl_lib.pid_hint != PTL_PID_ANY) {
		ret = ptl_ni_open_engine(ni, ptl_lib.pid_hint, desired);
		if (!ret)
			*pid_p = ptl_lib.pid_hint;
		return ret;
	}
	start = (ptl_pid_t)(getpid() % PTL_PID_MAX);
	for (n = 0; n < PTL_PID_MAX; n++) {
		p = (start + n) % PTL_PID_MAX;
		ret = ptl_ni_open_engine(ni, p, desired);
		if (ret != -FI_EADDRINUSE) {
			if (!ret)
				*pid_p = p;
			return ret;
		}
	}
	return -FI_EADDRINUSE;
}

static int ptl_ni_create_locked(unsigned kind, unsigned options,
				ptl_pid_t pid, const ptl_ni_limits_t *desired,
				struct ptl_ni **ni_p)
{
	struct p4e_ni_limits dl, l;
	struct p4e_dom_attr da;
	struct ptl_ni *ni;
	ptl_pid_t got = 0;
	uint32_t i;
	int ret;

	ni = calloc(1, sizeof(*ni));
	if (!ni)
		return -FI_ENOMEM;
	ni->kind = kind;
	ni->options = options;
	ptl_limits_in(desired, &dl, &da);
	/* da.locked off: every call on the domain is made under the worker
	 * lock, the library's one lock */
	ret = p4e_dom_create(&da, &ni->dom);
	if (ret)
		goto err;
	if (ptl_lib.have_pid)
		pid = ptl_lib.pid;
	ret = ptl_ni_open_pid(ni, pid, &dl, &got);
	if (ret)
		goto err;
	p4e_ni_limits_get(ni->eni, &l);
	ptl_limits_out(&l, &ni->limits);
	ret = ptl_tab_init(&ni->eqs, PTL_HT_EQ, (uint32_t)ni->limits.max_eqs);
	if (!ret)
		ret = ptl_tab_init(&ni->cts, PTL_HT_CT,
				   (uint32_t)ni->limits.max_cts);
	if (!ret)
		ret = ptl_tab_init(&ni->mds, PTL_HT_MD,
				   (uint32_t)ni->limits.max_mds);
	if (!ret)
		ret = ptl_tab_init(&ni->mes, PTL_HT_ME,
				   (uint32_t)ni->limits.max_entries);
	if (ret)
		goto err;
	ni->pts = calloc((size_t)ni->limits.max_pt_index + 1, sizeof(*ni->pts));
	if (!ni->pts) {
		ret = -FI_ENOMEM;
		goto err;
	}
	for (i = 0; i <= (uint32_t)ni->limits.max_pt_index; i++)
		ptl_pt_sink_init(&ni->pts[i], ni);
	ptl_lib.have_pid = true;
	ptl_lib.pid = got;
	ni->handle = ptl_h_make(PTL_HT_NI, kind, ptl_lib.ni_gen[kind], 0);
	*ni_p = ni;
	return 0;
err:
	ptl_ni_destroy_locked(ni);
	return ret;
}

PTL_EXPORT int PtlNIInit(ptl_interface_t iface, unsigned int options,
			 ptl_pid_t pid, const ptl_ni_limits_t *desired,
			 ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle)
{
	unsigned kind, m, a;
	struct ptl_ni *ni;
	int ret = ptl_enter();

	if (ret)
		return ret;
	m = options & (PTL_NI_MATCHING | PTL_NI_NO_MATCHING);
	a = options & (PTL_NI_LOGICAL | PTL_NI_PHYSICAL);
	if (!ni_handle || (options & ~PTL_NI_INIT_OPTIONS_MASK) ||
	    (m != PTL_NI_MATCHING && m != PTL_NI_NO_MATCHING) ||
	    (a != PTL_NI_LOGICAL && a != PTL_NI_PHYSICAL) ||
	    (iface != PTL_IFACE_DEFAULT && iface != 0) ||
	    (pid != PTL_PID_ANY && pid >= PTL_PID_MAX) ||
	    (pid != PTL_PID_ANY && ptl_lib.have_pid && pid != ptl_lib.pid)) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	kind = (m == PTL_NI_NO_MATCHING ? 1u : 0u) |
	       (a == PTL_NI_LOGICAL ? 2u : 0u);
	ni = ptl_lib.nis[kind];
	if (!ni) {
		ret = ptl_errno(ptl_ni_create_locked(kind, options, pid,
						     desired, &ni));
		if (ret)
			goto out;
		ptl_lib.nis[kind] = ni;
	}
	ni->refs++;
	if (actual)
		*actual = ni->limits;
	*ni_handle = ni->handle;
out:
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlNIFini(ptl_handle_ni_t ni_handle)
{
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!--ni->refs) {
		ptl_lib.nis[ni->kind] = NULL;
		ptl_lib.ni_gen[ni->kind] =
			(uint8_t)((ptl_lib.ni_gen[ni->kind] + 1) &
				  PTL_H_GEN_MASK);
		ptl_ni_destroy_locked(ni);
	}
	ptl_leave();
	return PTL_OK;
}

PTL_EXPORT int PtlNIStatus(ptl_handle_ni_t ni_handle,
			   ptl_sr_index_t status_register,
			   ptl_sr_value_t *status)
{
	struct ptl_ni *ni;
	int64_t v;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!status || (unsigned)status_register >= PTL_SR_LAST) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	/* PTL_SR_* and P4E_SR_* share their first values */
	ret = ptl_errno(p4e_ni_status(ni->eni,
				      (enum p4e_sr_index)status_register, &v));
	if (!ret)
		*status = v > INT_MAX ? INT_MAX : (ptl_sr_value_t)v;
out:
	ptl_leave();
	return ret;
}

/* ---- logical map -------------------------------------------------------- */

PTL_EXPORT int PtlSetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
			 const ptl_process_t *mapping)
{
	struct sockaddr_in sin;
	ptl_process_t *copy = NULL;
	uint32_t *ids = NULL;
	struct ptl_ni *ni;
	ptl_size_t i;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!(ni->options & PTL_NI_LOGICAL) || !map_size || !mapping ||
	    map_size > UINT32_MAX - 1) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	copy = malloc(map_size * sizeof(*copy));
	ids = malloc(map_size * sizeof(*ids));
	if (!copy || !ids) {
		ret = PTL_NO_SPACE;
		goto out;
	}
	for (i = 0; i < map_size; i++) {
		if (mapping[i].phys.nid == PTL_NID_ANY ||
		    mapping[i].phys.pid >= PTL_PID_MAX) {
			ret = PTL_ARG_INVALID;
			goto out;
		}
		ptl_ni_addr(ni->kind, mapping[i].phys.nid,
			    mapping[i].phys.pid, &sin);
		ret = ptl_errno(p4e_peer_lookup(ni->dom, &sin, sizeof(sin),
						&ids[i]));
		if (ret)
			goto out;
		copy[i] = mapping[i];
	}
	ret = ptl_errno(p4e_ni_set_map(ni->eni, ids, map_size));
	if (ret)
		goto out;
	free(ni->map);
	ni->map = copy;
	ni->map_size = map_size;
	copy = NULL;
out:
	free(copy);
	free(ids);
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlGetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
			 ptl_process_t *mapping, ptl_size_t *actual_map_size)
{
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!(ni->options & PTL_NI_LOGICAL) || !actual_map_size ||
	    (map_size && !mapping)) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (!ni->map) {
		ret = PTL_FAIL;		/* no map set yet */
		goto out;
	}
	if (map_size)
		memcpy(mapping, ni->map, (map_size < ni->map_size ? map_size :
					  ni->map_size) * sizeof(*mapping));
	*actual_map_size = ni->map_size;
out:
	ptl_leave();
	return ret;
}

/* ---- identities --------------------------------------------------------- */

/* Lock held: this process's physical id, the same on every NI. */
static void ptl_ni_phys_id(ptl_process_t *id)
{
	memset(id, 0, sizeof(*id));
	id->phys.nid = ptl_lib.nid;
	id->phys.pid = ptl_lib.pid;
}

PTL_EXPORT int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid)
{
	int ret = ptl_enter();

	if (ret)
		return ret;
	if (!ptl_ni_lookup(ni_handle) || !uid)
		ret = PTL_ARG_INVALID;
	else
		*uid = (ptl_uid_t)getuid();
	ptl_leave();
	return ret;
}

PTL_EXPORT int PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	int ret = ptl_enter();

	if (ret)
		return ret;
	if (!ptl_ni_lookup(ni_handle) || !id)
		ret = PTL_ARG_INVALID;
	else
		ptl_ni_phys_id(id);
	ptl_leave();
	return ret;
}

/* Logical NI: this process's rank is its position in the map. */
PTL_EXPORT int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	struct ptl_ni *ni;
	ptl_size_t i;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!id) {
		ret = PTL_ARG_INVALID;
		goto out;
	}
	if (!(ni->options & PTL_NI_LOGICAL)) {
		ptl_ni_phys_id(id);
		goto out;
	}
	memset(id, 0, sizeof(*id));
	ret = PTL_FAIL;		/* no map, or this process is not in it */
	for (i = 0; i < ni->map_size; i++) {
		if (ni->map[i].phys.nid == ptl_lib.nid &&
		    ni->map[i].phys.pid == ptl_lib.pid) {
			id->rank = (ptl_rank_t)i;
			ret = PTL_OK;
			break;
		}
	}
out:
	ptl_leave();
	return ret;
}

/*
 * Bundles are a hint that a burst of operations follows. The engine
 * already coalesces small sends per link within a progress call, so a
 * bundle only has to be well formed: nesting is counted and checked.
 */
PTL_EXPORT int PtlStartBundle(ptl_handle_ni_t ni_handle)
{
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	ni->bundle_depth++;
	ptl_leave();
	return PTL_OK;
}

PTL_EXPORT int PtlEndBundle(ptl_handle_ni_t ni_handle)
{
	struct ptl_ni *ni;
	int ret = ptl_ni_enter(ni_handle, &ni);

	if (ret)
		return ret;
	if (!ni->bundle_depth)
		ret = PTL_ARG_INVALID;
	else if (!--ni->bundle_depth)
		ptl_progress_locked();	/* push the burst out now */
	ptl_leave();
	return ret;
}
