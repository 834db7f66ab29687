/*
 * p4t_verbs_dev.c - the verbs transport's devices and ports: which ports
 * are usable (active, with a GID to route by), the RoCE v2 GID a port
 * routes by (the one holding the iface's IPv4 address, else the first
 * with one), the list fi_getinfo offers (p4t_verbs_devices), and opening
 * the device and port an iface serves.
 *
 * Not here: the iface, links and their bootstrap (p4t_verbs.c), sends,
 * receives and RMA (p4t_verbs_data.c), application memory registrations
 * (p4t_verbs_mr.c).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>

#include "p4t_verbs_priv.h"
#include "p4u_compiler.h"
#include "p4u_log.h"

/* ---- devices and ports --------------------------------------------------- */

static bool p4t_verbs_gid_v4(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					    0xff, 0xff };

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

/*
 * The GID to route a RoCE port by: the RoCE v2 entry holding want (an
 * IPv4 address, or 0 for any), else the first RoCE v2 entry with an IPv4
 * address, else the first RoCE v2 entry. -1 if none.
 */
static int p4t_verbs_gid_pick(struct ibv_context *ctx, uint8_t port,
			      int tbl_len, uint32_t want, union ibv_gid *gid_p)
{
	struct ibv_gid_entry entry;
	int idx, any = -1, v4 = -1;
	union ibv_gid any_gid, v4_gid;

	for (idx = 0; idx < tbl_len; idx++) {
		if (ibv_query_gid_ex(ctx, port, (uint32_t)idx, &entry, 0))
			continue;
		if (entry.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (p4t_verbs_gid_v4(&entry.gid)) {
			if (want && !memcmp(&entry.gid.raw[12], &want, 4)) {
				*gid_p = entry.gid;
				return idx;
			}
			if (v4 < 0) {
				v4 = idx;
				v4_gid = entry.gid;
			}
		} else if (any < 0) {
			any = idx;
			any_gid = entry.gid;
		}
	}
	if (want)
		return -1;
	if (v4 >= 0) {
		*gid_p = v4_gid;
		return v4;
	}
	if (any >= 0)
		*gid_p = any_gid;
	return any;
}

struct p4t_verbs_port {
	struct ibv_device *dev;
	uint8_t port;
	uint8_t link_layer;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid;
	enum ibv_mtu mtu;
	uint32_t max_msg;
};

/* Is port usable? Fills what routing by it needs (want: see gid_pick). */
static bool p4t_verbs_port_usable(struct ibv_context *ctx, uint8_t port,
				  uint32_t want, struct p4t_verbs_port *out)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, port, &pa) || pa.state != IBV_PORT_ACTIVE)
		return false;
	out->port = port;
	out->link_layer = pa.link_layer;
	out->lid = pa.lid;
	out->mtu = pa.active_mtu;
	out->max_msg = pa.max_msg_sz;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		out->gid_index = p4t_verbs_gid_pick(ctx, port, pa.gid_tbl_len,
						    want, &out->gid);
		return out->gid_index >= 0;
	}
	if (want)
		return false;	/* InfiniBand: no IP in its GIDs */
	out->gid_index = 0;
	return !ibv_query_gid(ctx, port, 0, &out->gid);
}

int p4t_verbs_devices(struct p4t_verbs_dev **devs_p, size_t *count_p)
{
	struct ibv_device **list;
	struct p4t_verbs_dev *devs = NULL, *grown;
	struct ibv_device_attr da;
	struct p4t_verbs_port vp;
	struct ibv_context *ctx;
	struct sockaddr_in *sin;
	size_t count = 0;
	int n = 0, i;
	uint8_t port;

	*devs_p = NULL;
	*count_p = 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return 0;
	for (i = 0; i < n; i++) {
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		if (ibv_query_device(ctx, &da)) {
			ibv_close_device(ctx);
			continue;
		}
		for (port = 1; port <= da.phys_port_cnt; port++) {
			if (!p4t_verbs_port_usable(ctx, port, 0, &vp))
				continue;
			grown = realloc(devs, (count + 1) * sizeof(*devs));
			if (!grown)
				break;
			devs = grown;
			memset(&devs[count], 0, sizeof(devs[count]));
			snprintf(devs[count].name, sizeof(devs[count].name),
				 "%s", ibv_get_device_name(list[i]));
			devs[count].port = port;
			if (vp.link_layer == IBV_LINK_LAYER_ETHERNET &&
			    p4t_verbs_gid_v4(&vp.gid)) {
				sin = (struct sockaddr_in *)&devs[count].addr;
				sin->sin_family = AF_INET;
				memcpy(&sin->sin_addr, &vp.gid.raw[12], 4);
			}
			count++;
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	*devs_p = devs;
	*count_p = count;
	return 0;
}

/* Open the device and port the iface serves (see p4t_verbs.h). */
int p4t_verbs_open_port(struct p4t_verbs_iface *iface,
			const struct p4t_iface_config *cfg)
{
	const struct sockaddr_in *sin = cfg->addr;
	uint32_t want = 0;
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct p4t_verbs_port vp;
	struct ibv_context *ctx;
	int n = 0, i, pass;
	uint8_t port;

	if (sin && cfg->addrlen == sizeof(*sin) && sin->sin_family == AF_INET)
		want = sin->sin_addr.s_addr;
	list = ibv_get_device_list(&n);
	if (!list)
		return -FI_ENODEV;
	/* first the port that holds our address, then any */
	for (pass = want ? 0 : 1; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				continue;
			if (ibv_query_device(ctx, &da))
				goto next;
			for (port = 1; port <= da.phys_port_cnt; port++)
				if (p4t_verbs_port_usable(ctx, port,
							  pass ? 0 : want, &vp))
					break;
			if (port > da.phys_port_cnt)
				goto next;
			iface->ctx = ctx;
			iface->port = vp.port;
			iface->link_layer = vp.link_layer;
			iface->gid_index = vp.gid_index;
			iface->gid = vp.gid;
			iface->lid = vp.lid;
			iface->mtu = vp.mtu;
			iface->max_rma = vp.max_msg ? vp.max_msg : (1u << 30);
			iface->max_sge = P4U_MIN((uint32_t)da.max_sge,
						 (uint32_t)P4T_VERBS_MAX_SGE);
			iface->rd_atom = P4U_MIN((uint32_t)da.max_qp_rd_atom,
						 (uint32_t)P4T_VERBS_RD_ATOM);
			p4u_info(P4U_LOG_TRANSPORT, "verbs: %s port %u gid "
				 "index %d", ibv_get_device_name(list[i]),
				 vp.port, vp.gid_index);
			ibv_free_device_list(list);
			return 0;
next:
			ibv_close_device(ctx);
		}
	}
	ibv_free_device_list(list);
	return -FI_ENODEV;
}
