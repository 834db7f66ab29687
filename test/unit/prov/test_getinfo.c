/*
 * test_getinfo.c - fi_getinfo for the portals provider (p4f_getinfo.c,
 * p4f_attr.c), suite "getinfo": it goes through fi_getinfo, the real
 * libfabric loads the plug-in just built, so what is tested is what an
 * application gets. The filter itself on synthetic infos (suite "attr",
 * p4f_check_info()/p4f_alter_info() called directly) is in test_attr.c;
 * the versions and parameter defaults both use are in p4f_getinfo_test.h.
 *
 * Criterion runs each test in its own process, so a test may set
 * FI_PORTALS_* before its first fi_getinfo (the plug-in reads them when
 * libfabric loads it).
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include "p4f.h"
#include "p4f_test.h"
#include "p4f_getinfo_test.h"

#define TAG_FORMAT_64	0xAAAAAAAAAAAAAAAAULL

TestSuite(getinfo, .init = gi_init, .timeout = 30);

/* ---- helpers ----------------------------------------------------------- */

static size_t gi_count(const struct fi_info *info)
{
	size_t n = 0;

	for (; info; info = info->next)
		n++;
	return n;
}

/* fi_getinfo restricted to portals (the hints are freed). */
static int gi_get(uint32_t version, const char *node, const char *service,
		  uint64_t flags, struct fi_info *hints, struct fi_info **info)
{
	int ret;

	*info = NULL;
	ret = fi_getinfo(version, node, service, flags, hints, info);
	fi_freeinfo(hints);
	cr_assert(ret == 0 || ret == -FI_ENODATA, "fi_getinfo: %s",
		  fi_strerror(-ret));
	return ret;
}

/* The list for hints, which must match (the hints are freed). */
static struct fi_info *gi_list(uint32_t version, const char *node,
			       const char *service, uint64_t flags,
			       struct fi_info *hints)
{
	struct fi_info *info;

	cr_assert_eq(gi_get(version, node, service, flags, hints, &info), 0,
		     "no entry for %s:%s", node ? node : "",
		     service ? service : "");
	return info;
}

static void gi_expect_none(uint32_t version, struct fi_info *hints,
			   const char *why)
{
	struct fi_info *info;

	cr_expect_eq(gi_get(version, NULL, NULL, 0, hints, &info),
		     -FI_ENODATA, "%s: expected no entry", why);
	fi_freeinfo(info);
}

/* Hints changed by stmt (on h) must find no entry. */
#define GI_REFUSED(version, stmt)					\
	do {								\
		struct fi_info *h = test_hints();			\
		stmt;							\
		gi_expect_none((version), h, #stmt);			\
	} while (0)

/* The first entry for hints (the list is in *list_p, to free). */
static struct fi_info *gi_first(struct fi_info *hints, struct fi_info **list_p)
{
	*list_p = gi_list(V_NOW, NULL, NULL, 0, hints);
	return *list_p;
}

/* With hints changed by stmt (on h), the first entry's field is expected. */
#define GI_REPORTS(stmt, field, expected)				\
	do {								\
		struct fi_info *l_, *i_ = GI_WITH(stmt, &l_);		\
		cr_expect_eq(i_->field, (expected), "%s: " #field,	\
			     #stmt);					\
		fi_freeinfo(l_);					\
	} while (0)

/* The first entry for hints changed by stmt (on h). */
#define GI_WITH(stmt, list_p)						\
	({								\
		struct fi_info *h = test_hints();			\
		stmt;							\
		gi_first(h, (list_p));					\
	})

static void gi_ifaces(int family, struct p4f_iface **ifaces, size_t *count)
{
	int ret = p4f_iface_list(family, ifaces, count);

	if (ret == -FI_ENODATA) {
		*ifaces = NULL;
		*count = 0;
		return;
	}
	cr_assert_eq(ret, 0, "p4f_iface_list: %s", fi_strerror(-ret));
}

static const struct sockaddr_in *gi_sin(const void *addr)
{
	return addr;
}

static bool gi_is_loopback(const struct fi_info *info)
{
	const struct sockaddr *sa = info->src_addr;

	if (sa->sa_family == AF_INET)
		return ntohl(gi_sin(sa)->sin_addr.s_addr) >> 24 == 127;
	return IN6_IS_ADDR_LOOPBACK(
		&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static struct sockaddr_in gi_ipv4(const char *host, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, host, &sin.sin_addr), 1);
	return sin;
}

static void gi_set_addr(void **addr_p, size_t *len_p,
			const struct sockaddr_in *sin)
{
	*addr_p = malloc(sizeof(*sin));
	cr_assert_not_null(*addr_p);
	memcpy(*addr_p, sin, sizeof(*sin));
	*len_p = sizeof(*sin);
}

/* ---- the list ---------------------------------------------------------- */

Test(getinfo, null_hints_list_portals_entries)
{
	struct p4f_iface *ifaces;
	struct fi_info *list, *info;
	size_t count, found = 0;

	gi_ifaces(AF_UNSPEC, &ifaces, &count);
	cr_assert_eq(fi_getinfo(V_NOW, NULL, NULL, 0, NULL, &list), 0);
	for (info = list; info; info = info->next) {
		if (strcmp(info->fabric_attr->prov_name, P4F_PROV_NAME))
			continue;
		found++;
		cr_expect_not_null(info->src_addr);
		cr_expect_eq(info->ep_attr->type, FI_EP_RDM);
		cr_expect_eq(info->mode, 0);
	}
	cr_expect_eq(found, count, "%zu portals entries, %zu interfaces",
		     found, count);
	fi_freeinfo(list);
	free(ifaces);
}

Test(getinfo, one_entry_per_interface_in_order)
{
	struct fi_info *list = gi_list(V_NOW, NULL, NULL, 0, test_hints());
	struct fi_info *info = list;
	struct p4f_iface *ifaces;
	size_t count, i;

	gi_ifaces(AF_UNSPEC, &ifaces, &count);
	cr_assert_eq(gi_count(list), count);
	for (i = 0; i < count; i++, info = info->next) {
		int family = ifaces[i].addr.sa.sa_family;

		cr_expect_str_eq(info->domain_attr->name, ifaces[i].name);
		cr_expect_eq(info->addr_format, family == AF_INET ?
			     FI_SOCKADDR_IN : FI_SOCKADDR_IN6);
		cr_assert_eq(info->src_addrlen,
			     p4f_sockaddr_len(&ifaces[i].addr.sa));
		/* the interface address itself, port 0 */
		cr_expect_eq(memcmp(info->src_addr, &ifaces[i].addr,
				    info->src_addrlen), 0);
		cr_expect_null(info->dest_addr);
	}
	free(ifaces);
	fi_freeinfo(list);
}

Test(getinfo, loopback_entries_last)
{
	struct fi_info *list = gi_list(V_NOW, NULL, NULL, 0, test_hints());
	struct fi_info *info;
	bool seen_loopback = false;

	for (info = list; info; info = info->next) {
		if (seen_loopback)
			cr_expect(gi_is_loopback(info),
				  "%s after a loopback entry",
				  info->domain_attr->name);
		seen_loopback |= gi_is_loopback(info);
	}
	cr_expect(seen_loopback, "no loopback entry at all");
	fi_freeinfo(list);
}

/* p4f_attr.c: RMA and atomics, and the orderings atomics keep */
#define ONE_SIDED_CAPS	(FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT | \
			 FI_FENCE)
#define ATOMIC_ORDER	(FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | \
			 FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW)

Test(getinfo, entry_attributes)
{
	struct fi_info *list, *info = gi_first(test_hints(), &list);

	cr_expect_str_eq(info->fabric_attr->name, P4F_FABRIC_NAME);
	cr_expect_str_eq(info->fabric_attr->prov_name, P4F_PROV_NAME);
	cr_expect_eq(info->fabric_attr->prov_version, P4F_PROV_VERSION);
	cr_expect_eq(info->caps, FI_MSG | FI_TAGGED | FI_SEND | FI_RECV |
				  FI_DIRECTED_RECV | FI_MULTI_RECV |
				  FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM |
				  FI_TRIGGER | ONE_SIDED_CAPS);
	cr_expect_eq(info->mode, 0);
	/* messaging and one-sided work: their caps, split by direction */
	cr_expect_eq(info->tx_attr->caps, FI_MSG | FI_TAGGED | FI_SEND |
					   FI_RMA | FI_ATOMIC | FI_READ |
					   FI_WRITE | FI_FENCE | FI_TRIGGER);
	cr_expect_eq(info->rx_attr->caps, FI_TRIGGER |
					   FI_MSG | FI_TAGGED | FI_RECV |
					   FI_DIRECTED_RECV | FI_MULTI_RECV |
					   FI_SOURCE | FI_RMA | FI_ATOMIC |
					   FI_REMOTE_READ | FI_REMOTE_WRITE |
					   FI_RMA_EVENT);
	cr_expect_eq(info->domain_attr->caps, FI_LOCAL_COMM | FI_REMOTE_COMM);
	cr_expect_eq(info->domain_attr->mode, 0);
	cr_expect_eq(info->domain_attr->mr_key_size, P4F_MR_KEY_SIZE);
	cr_expect_eq(info->domain_attr->cq_data_size, P4F_CQ_DATA_SIZE);
	cr_expect_eq(info->domain_attr->mr_iov_limit, P4F_MR_IOV_LIMIT);
	cr_expect_eq(info->domain_attr->max_err_data, P4F_MAX_ERR_DATA);
	cr_expect_eq(info->domain_attr->max_ep_tx_ctx, 1);
	cr_expect_eq(info->domain_attr->max_ep_rx_ctx, 1);
	cr_expect_eq(info->domain_attr->max_ep_stx_ctx, 0);
	cr_expect_eq(info->domain_attr->max_ep_srx_ctx, 0);
	cr_expect_eq(info->domain_attr->auth_key_size, P4F_AUTH_KEY_SIZE);
	cr_expect_gt(info->domain_attr->cq_cnt, 0);
	cr_expect_gt(info->domain_attr->ep_cnt, 0);
	cr_expect_gt(info->domain_attr->cntr_cnt, 0);
	cr_expect_gt(info->domain_attr->mr_cnt, 0);
	cr_expect_eq(info->ep_attr->protocol_version, 1);
	cr_expect_eq(info->ep_attr->msg_prefix_size, 0);
	cr_expect_eq(info->ep_attr->mem_tag_format, TAG_FORMAT_64);
	cr_expect_eq(info->ep_attr->tx_ctx_cnt, 1);
	cr_expect_eq(info->ep_attr->rx_ctx_cnt, 1);
	cr_expect_eq(info->tx_attr->iov_limit, P4F_IOV_LIMIT);
	cr_expect_eq(info->tx_attr->rma_iov_limit, P4F_RMA_IOV_LIMIT);
	cr_expect_eq(info->rx_attr->iov_limit, P4F_IOV_LIMIT);
	cr_expect_eq(info->tx_attr->msg_order, FI_ORDER_SAS | ATOMIC_ORDER);
	cr_expect_eq(info->rx_attr->msg_order, FI_ORDER_SAS | ATOMIC_ORDER);
	/* the atomic orderings hold up to the largest atomic */
	cr_expect_gt(info->ep_attr->max_order_waw_size, 0);
	cr_expect_eq(info->ep_attr->max_order_raw_size,
		     info->ep_attr->max_order_waw_size);
	cr_expect_eq(info->ep_attr->max_order_war_size,
		     info->ep_attr->max_order_waw_size);
	cr_expect_eq(info->tx_attr->comp_order, FI_ORDER_NONE);
	cr_expect_eq(info->tx_attr->mode, 0);
	cr_expect_eq(info->rx_attr->mode, 0);
	fi_freeinfo(list);
}

Test(getinfo, sizes_come_from_the_environment)
{
	struct fi_info *list, *info;

	/* read by the plug-in at its first fi_getinfo in this process */
	setenv("FI_PORTALS_TX_SIZE", "1000", 1);
	setenv("FI_PORTALS_RX_SIZE", "2000", 1);
	setenv("FI_PORTALS_INJECT_SIZE", "100", 1);
	info = gi_first(test_hints(), &list);
	cr_expect_eq(info->tx_attr->size, 1000);
	cr_expect_eq(info->rx_attr->size, 2000);
	cr_expect_eq(info->tx_attr->inject_size, 100);
	fi_freeinfo(list);
}

/* ---- capabilities, mode, endpoint type, address format ----------------- */

Test(getinfo, caps_not_offered_yet)
{
	static const uint64_t caps[] = {
		FI_SHARED_AV, FI_SOURCE_ERR, FI_COLLECTIVE,
	};
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(caps); i++)
		GI_REFUSED(V_NOW, h->caps = caps[i]);
	GI_REFUSED(V_NOW, h->tx_attr->caps = FI_COLLECTIVE);
	GI_REFUSED(V_NOW, h->domain_attr->caps = FI_SHARED_AV);
}

Test(getinfo, messaging_caps_offered)
{
	struct fi_info *list, *info;

	info = GI_WITH(h->caps = FI_TAGGED | FI_DIRECTED_RECV, &list);
	/* the primary caps asked for, both directions implied, and every
	 * secondary cap the provider has */
	cr_expect_eq(info->caps, FI_TAGGED | FI_DIRECTED_RECV | FI_SEND |
				 FI_RECV | FI_MULTI_RECV | FI_SOURCE |
				 FI_LOCAL_COMM | FI_REMOTE_COMM |
				 FI_RMA_EVENT | FI_FENCE | FI_TRIGGER);
	fi_freeinfo(list);
	info = GI_WITH(h->caps = FI_LOCAL_COMM, &list);
	cr_expect_eq(info->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM),
		     FI_LOCAL_COMM | FI_REMOTE_COMM);
	fi_freeinfo(list);
}

Test(getinfo, mode_never_required)
{
	struct fi_info *list, *info;

	info = GI_WITH(h->mode = 0, &list);	/* supports no mode at all */
	fi_freeinfo(list);
	info = GI_WITH(h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX;
		       h->domain_attr->mode = FI_RESTRICTED_COMP, &list);
	cr_expect_eq(info->mode, 0);
	cr_expect_eq(info->domain_attr->mode, 0);
	fi_freeinfo(list);
}

Test(getinfo, ep_type)
{
	struct fi_info *list, *info;

	GI_REFUSED(V_NOW, h->ep_attr->type = FI_EP_MSG);
	GI_REFUSED(V_NOW, h->ep_attr->type = FI_EP_DGRAM);
	GI_WITH(h->ep_attr->type = FI_EP_UNSPEC, &list);
	for (info = list; info; info = info->next)
		cr_expect_eq(info->ep_attr->type, FI_EP_RDM);
	fi_freeinfo(list);
}

/* Entries for addr_format: as many as interfaces of family, all of it. */
static void gi_check_format(uint32_t format, int family)
{
	struct fi_info *list, *info;
	struct p4f_iface *ifaces;
	size_t count;

	gi_ifaces(family, &ifaces, &count);
	free(ifaces);
	if (!count) {
		GI_REFUSED(V_NOW, h->addr_format = format);
		return;
	}
	GI_WITH(h->addr_format = format, &list);
	cr_expect_eq(gi_count(list), count);
	for (info = list; info && family != AF_UNSPEC; info = info->next)
		cr_expect_eq(((struct sockaddr *)info->src_addr)->sa_family,
			     family, "%s: wrong family", info->domain_attr->name);
	fi_freeinfo(list);
}

Test(getinfo, addr_format)
{
	gi_check_format(FI_SOCKADDR_IN, AF_INET);
	gi_check_format(FI_SOCKADDR_IN6, AF_INET6);
	gi_check_format(FI_SOCKADDR, AF_UNSPEC);	/* both families */
	GI_REFUSED(V_NOW, h->addr_format = FI_ADDR_STR);
	GI_REFUSED(V_NOW, h->addr_format = FI_SOCKADDR_IB);
}

Test(getinfo, fabric_name)
{
	struct fi_info *list;

	GI_REFUSED(V_NOW, h->fabric_attr->name = strdup("elsewhere"));
	GI_REFUSED(V_NOW, h->fabric_attr->prov_version = FI_VERSION(99, 0));
	GI_WITH(h->fabric_attr->name = strdup(P4F_FABRIC_NAME), &list);
	fi_freeinfo(list);
}

Test(getinfo, domain_name_is_the_interface)
{
	struct fi_info *list, *info;
	struct p4f_iface *ifaces;
	size_t count, i, j, expected;

	gi_ifaces(AF_UNSPEC, &ifaces, &count);
	for (i = 0; i < count; i++) {
		for (j = 0, expected = 0; j < count; j++)
			expected += !strcmp(ifaces[j].name, ifaces[i].name);
		GI_WITH(h->domain_attr->name = strdup(ifaces[i].name), &list);
		cr_expect_eq(gi_count(list), expected);
		for (info = list; info; info = info->next)
			cr_expect_str_eq(info->domain_attr->name,
					 ifaces[i].name);
		fi_freeinfo(list);
	}
	free(ifaces);
	GI_REFUSED(V_NOW, h->domain_attr->name = strdup("nosuchif0"));
}

/* ---- domain attributes ------------------------------------------------- */

Test(getinfo, threading_reports_the_level_asked)
{
	static const enum fi_threading levels[] = {
		FI_THREAD_DOMAIN, FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT,
		FI_THREAD_FID, FI_THREAD_SAFE,
	};
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(levels); i++)
		GI_REPORTS(h->domain_attr->threading = levels[i],
			   domain_attr->threading, levels[i]);
	GI_REPORTS((void)h, domain_attr->threading, FI_THREAD_SAFE);
}

Test(getinfo, progress)
{
	/* a progress thread when asked for; manual stays the default */
	GI_REPORTS(h->domain_attr->data_progress = FI_PROGRESS_AUTO,
		   domain_attr->data_progress, FI_PROGRESS_AUTO);
	GI_REFUSED(V_NOW, h->domain_attr->data_progress = 77);
	GI_REPORTS(h->domain_attr->data_progress = FI_PROGRESS_MANUAL,
		   domain_attr->data_progress, FI_PROGRESS_MANUAL);
	GI_REPORTS(h->domain_attr->control_progress = FI_PROGRESS_MANUAL,
		   domain_attr->control_progress, FI_PROGRESS_MANUAL);
	GI_REPORTS(h->domain_attr->control_progress = FI_PROGRESS_AUTO,
		   domain_attr->control_progress, FI_PROGRESS_AUTO);
	GI_REPORTS((void)h, domain_attr->control_progress, FI_PROGRESS_AUTO);
	GI_REPORTS((void)h, domain_attr->data_progress, FI_PROGRESS_MANUAL);
}

Test(getinfo, resource_mgmt_and_av_type)
{
	/* the provider protects its resources whatever was asked */
	GI_REPORTS(h->domain_attr->resource_mgmt = FI_RM_DISABLED,
		   domain_attr->resource_mgmt, FI_RM_ENABLED);
	GI_REPORTS(h->domain_attr->resource_mgmt = FI_RM_ENABLED,
		   domain_attr->resource_mgmt, FI_RM_ENABLED);
	GI_REPORTS(h->domain_attr->av_type = FI_AV_MAP,
		   domain_attr->av_type, FI_AV_MAP);
	GI_REPORTS(h->domain_attr->av_type = FI_AV_TABLE,
		   domain_attr->av_type, FI_AV_TABLE);
	GI_REPORTS((void)h, domain_attr->av_type, FI_AV_UNSPEC);
}

Test(getinfo, mr_mode_requires_nothing)
{
	GI_REPORTS(h->domain_attr->mr_mode = 0, domain_attr->mr_mode, 0);
	/* FI_MR_LOCAL supported by the application, not needed by us */
	GI_REPORTS(h->domain_attr->mr_mode = FI_MR_LOCAL,
		   domain_attr->mr_mode, 0);
	/* offered, not needed: application keys and offsets (fabtests'
	 * multi_mr and deferred_wq rely on it, as tcp;ofi_rxm does) */
	GI_REPORTS(h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
		   FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_ENDPOINT | FI_MR_RAW,
		   domain_attr->mr_mode, 0);
	GI_REPORTS(h->domain_attr->mr_mode = FI_MR_PROV_KEY,
		   domain_attr->mr_mode, 0);
}

/* The first entry's mr_mode for API version and hints' mr_mode. */
static int gi_mr_mode(uint32_t version, int mr_mode)
{
	struct fi_info *hints = test_hints(), *list;
	int ret;

	hints->domain_attr->mr_mode = mr_mode;
	list = gi_list(version, NULL, NULL, 0, hints);
	ret = list->domain_attr->mr_mode;
	fi_freeinfo(list);
	return ret;
}

Test(getinfo, mr_mode_legacy)
{
	cr_expect_eq(gi_mr_mode(V1_4, FI_MR_BASIC), FI_MR_BASIC);
	cr_expect_eq(gi_mr_mode(V1_4, FI_MR_SCALABLE), FI_MR_SCALABLE);
	cr_expect_eq(gi_mr_mode(V1_4, FI_MR_UNSPEC), FI_MR_BASIC);
	/* 1.5 bits mean nothing to a 1.4 application */
	GI_REFUSED(V1_4, h->domain_attr->mr_mode = FI_MR_LOCAL);
	/* 1.5+: a legacy mode stands alone */
	cr_expect_eq(gi_mr_mode(V_NOW, FI_MR_BASIC), FI_MR_BASIC);
	GI_REFUSED(V_NOW, h->domain_attr->mr_mode = FI_MR_BASIC |
						    FI_MR_VIRT_ADDR);
}

Test(getinfo, domain_limits)
{
	GI_REPORTS(h->domain_attr->cq_data_size = P4F_CQ_DATA_SIZE,
		   domain_attr->cq_data_size, P4F_CQ_DATA_SIZE);
	GI_REPORTS(h->domain_attr->mr_key_size = P4F_MR_KEY_SIZE,
		   domain_attr->mr_key_size, P4F_MR_KEY_SIZE);
	GI_REPORTS(h->domain_attr->max_ep_tx_ctx = 1,
		   domain_attr->max_ep_tx_ctx, 1);
	GI_REFUSED(V_NOW, h->domain_attr->cq_data_size = P4F_CQ_DATA_SIZE + 1);
	GI_REFUSED(V_NOW, h->domain_attr->mr_key_size = P4F_MR_KEY_SIZE + 1);
	GI_REFUSED(V_NOW, h->domain_attr->mr_iov_limit = P4F_MR_IOV_LIMIT + 1);
	GI_REFUSED(V_NOW, h->domain_attr->max_err_data = P4F_MAX_ERR_DATA + 1);
	GI_REFUSED(V_NOW, h->domain_attr->max_ep_tx_ctx = 2);
	GI_REFUSED(V_NOW, h->domain_attr->max_ep_rx_ctx = 2);
	GI_REFUSED(V_NOW, h->domain_attr->max_ep_stx_ctx = 1);
	GI_REFUSED(V_NOW, h->domain_attr->max_ep_srx_ctx = 1);
	GI_REFUSED(V_NOW, h->domain_attr->cq_cnt = SIZE_MAX);
	GI_REFUSED(V_NOW, h->domain_attr->ep_cnt = SIZE_MAX);
	GI_REFUSED(V_NOW, h->domain_attr->cntr_cnt = SIZE_MAX);
	GI_REFUSED(V_NOW, h->domain_attr->mr_cnt = SIZE_MAX);
	GI_REFUSED(V_NOW, h->domain_attr->tx_ctx_cnt = SIZE_MAX);
	GI_REFUSED(V_NOW, h->domain_attr->rx_ctx_cnt = SIZE_MAX);
}

/* 8-byte keys (P4F_AUTH_KEY_SIZE), returned as asked; other sizes not */
Test(getinfo, auth_key_size_and_copy)
{
	struct fi_info *list, *info;

	GI_REFUSED(V_NOW, h->domain_attr->auth_key = calloc(1, 4);
		   h->domain_attr->auth_key_size = 4);
	GI_REFUSED(V_NOW, h->ep_attr->auth_key = calloc(1, 16);
		   h->ep_attr->auth_key_size = 16);
	info = GI_WITH(h->domain_attr->auth_key = calloc(1, 8);
		       h->domain_attr->auth_key[0] = 0x42;
		       h->domain_attr->auth_key_size = 8, &list);
	cr_expect_eq(info->domain_attr->auth_key_size, 8);
	cr_assert_not_null(info->domain_attr->auth_key);
	cr_expect_eq(info->domain_attr->auth_key[0], 0x42);
	fi_freeinfo(list);
	info = GI_WITH(h->ep_attr->auth_key = calloc(1, 8);
		       h->ep_attr->auth_key[7] = 0x17;
		       h->ep_attr->auth_key_size = 8, &list);
	cr_assert_not_null(info->ep_attr->auth_key);
	cr_expect_eq(info->ep_attr->auth_key[7], 0x17);
	fi_freeinfo(list);
}

/* ---- endpoint and context attributes ----------------------------------- */

Test(getinfo, tx_rx_limits)
{
	struct fi_info *list, *dflt = gi_list(V_NOW, NULL, NULL, 0,
					      test_hints());
	size_t tx_size = dflt->tx_attr->size, rx_size = dflt->rx_attr->size;

	GI_REFUSED(V_NOW, h->tx_attr->size = tx_size + 1);
	GI_REFUSED(V_NOW, h->rx_attr->size = rx_size + 1);
	GI_REFUSED(V_NOW,
		   h->tx_attr->inject_size = dflt->tx_attr->inject_size + 1);
	GI_REFUSED(V_NOW, h->tx_attr->iov_limit = P4F_IOV_LIMIT + 1);
	GI_REFUSED(V_NOW, h->rx_attr->iov_limit = P4F_IOV_LIMIT + 1);
	GI_REFUSED(V_NOW, h->tx_attr->rma_iov_limit = P4F_RMA_IOV_LIMIT + 1);
	fi_freeinfo(dflt);

	/* smaller requests are what the entry reports */
	GI_WITH(h->tx_attr->size = tx_size / 2; h->rx_attr->size = rx_size / 2;
		h->tx_attr->iov_limit = 1, &list);
	cr_expect_eq(list->tx_attr->size, tx_size / 2);
	cr_expect_eq(list->rx_attr->size, rx_size / 2);
	cr_expect_eq(list->tx_attr->iov_limit, 1);
	fi_freeinfo(list);
}

Test(getinfo, ordering)
{
	GI_REPORTS(h->tx_attr->msg_order = FI_ORDER_SAS;
		   h->rx_attr->msg_order = FI_ORDER_SAS,
		   tx_attr->msg_order & FI_ORDER_SAS, FI_ORDER_SAS);
	GI_REFUSED(V_NOW, h->tx_attr->msg_order = FI_ORDER_RAW);
	GI_REFUSED(V_NOW, h->rx_attr->msg_order = FI_ORDER_STRICT);
	GI_REFUSED(V_NOW, h->tx_attr->comp_order = FI_ORDER_STRICT);
}

Test(getinfo, op_flags)
{
	GI_REPORTS(h->tx_attr->op_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE,
		   tx_attr->op_flags, FI_COMPLETION | FI_DELIVERY_COMPLETE);
	GI_REPORTS(h->rx_attr->op_flags = FI_COMPLETION, rx_attr->op_flags,
		   FI_COMPLETION);
	/* none asked: none imposed (FI_COMPLETION would defeat selective
	 * completion) */
	GI_REPORTS((void)h, tx_attr->op_flags, 0);
	GI_REPORTS((void)h, rx_attr->op_flags, 0);
	GI_REPORTS(h->caps = FI_MSG | FI_MULTI_RECV;
		   h->rx_attr->op_flags = FI_MULTI_RECV, rx_attr->op_flags,
		   FI_MULTI_RECV);
	GI_REFUSED(V_NOW, h->tx_attr->op_flags = FI_COMMIT_COMPLETE);
}

Test(getinfo, ep_attributes)
{
	GI_REFUSED(V_NOW, h->ep_attr->msg_prefix_size = 16);
	GI_REFUSED(V_NOW, h->ep_attr->protocol = FI_PROTO_SOCK_TCP);
	GI_REFUSED(V_NOW, h->ep_attr->protocol_version = 2);
	GI_REFUSED(V_NOW, h->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT);
	GI_REFUSED(V_NOW, h->ep_attr->rx_ctx_cnt = 2);
	/* 64 tag bits, any mask */
	GI_REPORTS(h->ep_attr->mem_tag_format = 0xFFFFFFFFFFFFFFFFULL,
		   ep_attr->mem_tag_format, TAG_FORMAT_64);
	GI_REPORTS(h->ep_attr->tx_ctx_cnt = 1, ep_attr->tx_ctx_cnt, 1);
	GI_REPORTS(h->ep_attr->max_msg_size = (size_t)1 << 40,
		   ep_attr->max_msg_size >= (size_t)1 << 40, true);
}

/* ---- node, service, addresses ------------------------------------------ */

/* The loopback interface's name, from the interface list. */
static void gi_loopback_name(char *name)
{
	struct p4f_iface *ifaces;
	size_t count, i;

	gi_ifaces(AF_INET, &ifaces, &count);
	for (i = 0; i < count; i++)
		if (ifaces[i].loopback) {
			strcpy(name, ifaces[i].name);
			free(ifaces);
			return;
		}
	free(ifaces);
	cr_skip_test("no IPv4 loopback interface");
}

static void gi_expect_ipv4(const void *addr, const char *host, uint16_t port)
{
	struct sockaddr_in want = gi_ipv4(host, port);
	const struct sockaddr_in *sin = gi_sin(addr);

	cr_assert_not_null(sin);
	cr_expect_eq(sin->sin_family, AF_INET);
	cr_expect_eq(sin->sin_addr.s_addr, want.sin_addr.s_addr);
	cr_expect_eq(ntohs(sin->sin_port), port);
}

Test(getinfo, source_node_and_service)
{
	struct fi_info *list;
	char lo[IF_NAMESIZE];

	gi_loopback_name(lo);
	list = gi_list(V_NOW, "127.0.0.1", "4000", FI_SOURCE, test_hints());
	cr_assert_eq(gi_count(list), 1);
	cr_expect_str_eq(list->domain_attr->name, lo);
	gi_expect_ipv4(list->src_addr, "127.0.0.1", 4000);
	cr_expect_null(list->dest_addr);
	fi_freeinfo(list);

	list = gi_list(V_NOW, "127.0.0.1", NULL, FI_SOURCE, test_hints());
	cr_assert_eq(gi_count(list), 1);
	gi_expect_ipv4(list->src_addr, "127.0.0.1", 0);
	fi_freeinfo(list);
}

Test(getinfo, source_service_only_is_every_interface)
{
	struct fi_info *list, *info;
	struct p4f_iface *ifaces;
	size_t count;

	gi_ifaces(AF_UNSPEC, &ifaces, &count);
	list = gi_list(V_NOW, NULL, "4000", FI_SOURCE, test_hints());
	cr_expect_eq(gi_count(list), count);
	for (info = list; info; info = info->next) {
		const struct sockaddr *sa = info->src_addr;
		in_port_t port = sa->sa_family == AF_INET ?
			gi_sin(sa)->sin_port :
			((const struct sockaddr_in6 *)sa)->sin6_port;

		cr_expect_eq(ntohs(port), 4000);
	}
	fi_freeinfo(list);
	free(ifaces);
}

Test(getinfo, source_must_be_local)
{
	struct fi_info *list;
	int ret;

	/* TEST-NET-3: documentation only, never configured here */
	cr_expect_eq(gi_get(V_NOW, "203.0.113.77", "4000", FI_SOURCE,
			    test_hints(), &list), -FI_ENODATA);
	fi_freeinfo(list);
	/* fi_getinfo(3): FI_SOURCE needs node or service */
	ret = p4f_getinfo(V_NOW, NULL, NULL, FI_SOURCE, NULL, &list);
	cr_expect_eq(ret, -FI_EINVAL);
}

Test(getinfo, destination_sets_dest_addr)
{
	struct fi_info *list, *info;
	char lo[IF_NAMESIZE];

	gi_loopback_name(lo);
	list = gi_list(V_NOW, "127.0.0.1", "4000", 0, test_hints());
	for (info = list; info; info = info->next) {
		cr_expect_eq(info->addr_format, FI_SOCKADDR_IN,
			     "an IPv6 entry for an IPv4 destination");
		cr_expect_not_null(info->src_addr);
		gi_expect_ipv4(info->dest_addr, "127.0.0.1", 4000);
	}
	/* the interface the route uses comes first */
	cr_expect_str_eq(list->domain_attr->name, lo);
	fi_freeinfo(list);

	/* names resolve too */
	list = gi_list(V_NOW, "localhost", "4000", 0, test_hints());
	cr_expect_not_null(list->dest_addr);
	fi_freeinfo(list);
}

Test(getinfo, numerichost)
{
	struct fi_info *list;

	cr_expect_eq(gi_get(V_NOW, "localhost", "4000", FI_NUMERICHOST,
			    test_hints(), &list), -FI_ENODATA,
		     "FI_NUMERICHOST resolved a name");
	fi_freeinfo(list);
	list = gi_list(V_NOW, "127.0.0.1", "4000", FI_NUMERICHOST,
		       test_hints());
	gi_expect_ipv4(list->dest_addr, "127.0.0.1", 4000);
	fi_freeinfo(list);
}

Test(getinfo, destination_ipv6)
{
	struct fi_info *hints = test_hints(), *list, *info;
	struct p4f_iface *ifaces;
	size_t count;

	gi_ifaces(AF_INET6, &ifaces, &count);
	free(ifaces);
	if (!count) {
		fi_freeinfo(hints);
		cr_skip_test("no usable IPv6 address");
	}
	hints->addr_format = FI_SOCKADDR_IN6;
	cr_expect_eq(gi_get(V_NOW, "127.0.0.1", "4000", FI_NUMERICHOST, hints,
			    &list), -FI_ENODATA, "IPv4 destination, IPv6 format");
	list = gi_list(V_NOW, "::1", "4000", FI_NUMERICHOST, test_hints());
	cr_expect_eq(gi_count(list), count);
	for (info = list; info; info = info->next) {
		const struct sockaddr_in6 *dest = info->dest_addr;

		cr_expect_eq(info->addr_format, FI_SOCKADDR_IN6);
		cr_assert_not_null(dest);
		cr_expect(IN6_IS_ADDR_LOOPBACK(&dest->sin6_addr));
		cr_expect_eq(ntohs(dest->sin6_port), 4000);
	}
	fi_freeinfo(list);
}

Test(getinfo, hints_src_addr)
{
	struct sockaddr_in sin = gi_ipv4("127.0.0.1", 5000);
	struct fi_info *hints = test_hints(), *list;
	char lo[IF_NAMESIZE];

	gi_loopback_name(lo);
	hints->addr_format = FI_SOCKADDR_IN;
	gi_set_addr(&hints->src_addr, &hints->src_addrlen, &sin);
	list = gi_list(V_NOW, NULL, NULL, 0, hints);
	cr_assert_eq(gi_count(list), 1);
	cr_expect_str_eq(list->domain_attr->name, lo);
	gi_expect_ipv4(list->src_addr, "127.0.0.1", 5000);
	fi_freeinfo(list);

	/* TEST-NET-3: documentation only, never configured here */
	sin = gi_ipv4("203.0.113.77", 5000);
	GI_REFUSED(V_NOW, gi_set_addr(&h->src_addr, &h->src_addrlen, &sin));
}

Test(getinfo, hints_dest_addr)
{
	struct sockaddr_in sin = gi_ipv4("127.0.0.1", 6000);
	struct fi_info *hints = test_hints(), *list, *info;
	struct p4f_iface *ifaces;
	size_t count;

	gi_ifaces(AF_INET, &ifaces, &count);
	free(ifaces);
	gi_set_addr(&hints->dest_addr, &hints->dest_addrlen, &sin);
	list = gi_list(V_NOW, NULL, NULL, 0, hints);
	cr_expect_eq(gi_count(list), count, "only the IPv4 entries");
	for (info = list; info; info = info->next)
		gi_expect_ipv4(info->dest_addr, "127.0.0.1", 6000);
	fi_freeinfo(list);
}

Test(getinfo, core_flag_bits_ignored)
{
	struct fi_info *plain, *flagged, *hints = test_hints();
	uint64_t core_bits = 0xfULL << 58;	/* libfabric's ofi.h */

	cr_assert_eq(p4f_getinfo(V_NOW, "127.0.0.1", "4000", 0, hints,
				 &plain), 0);
	cr_assert_eq(p4f_getinfo(V_NOW, "127.0.0.1", "4000", core_bits, hints,
				 &flagged), 0);
	cr_expect_eq(gi_count(flagged), gi_count(plain));
	/* still a destination, not FI_SOURCE */
	cr_expect_not_null(flagged->dest_addr);
	/* the core names the provider, not us */
	cr_expect_null(flagged->fabric_attr->prov_name);
	fi_freeinfo(plain);
	fi_freeinfo(flagged);
	fi_freeinfo(hints);
}

/* ---- what fi_domain/fi_endpoint are given back ------------------------- */

Test(getinfo, domain_open_accepts_every_entry)
{
	struct fi_info *list = gi_list(V_NOW, NULL, NULL, 0, test_hints());
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_info *info;

	cr_assert_eq(fi_fabric(list->fabric_attr, &fabric, NULL), 0);
	for (info = list; info; info = info->next) {
		cr_expect_eq(p4f_check_info(V_NOW, &p4f_info_template, info),
			     0, "%s rejected", info->domain_attr->name);
		domain = NULL;
		cr_expect_eq(fi_domain(fabric, info, &domain, NULL), 0,
			     "fi_domain on %s", info->domain_attr->name);
		if (domain)
			cr_expect_eq(fi_close(&domain->fid), 0);
	}
	cr_expect_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(list);
}

Test(getinfo, domain_open_accepts_edited_entries)
{
	struct fi_info *hints = test_hints(), *list, *info;

	/* the largest sizes an application may ask for */
	setenv("FI_PORTALS_TX_SIZE", "16777216", 1);
	setenv("FI_PORTALS_INJECT_SIZE", "65536", 1);
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY |
				      FI_MR_ALLOCATED;
	list = gi_list(V_NOW, NULL, NULL, 0, hints);
	for (info = list; info; info = info->next) {
		info->tx_attr->size /= 2;
		info->tx_attr->op_flags = FI_TRANSMIT_COMPLETE;
		info->domain_attr->threading = FI_THREAD_DOMAIN;
		info->domain_attr->av_type = FI_AV_TABLE;
		info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
		cr_expect_eq(p4f_check_info(V_NOW, &p4f_info_template, info),
			     0, "%s rejected", info->domain_attr->name);
	}
	cr_expect_eq(list->tx_attr->size, (size_t)1 << 23);
	cr_expect_eq(list->tx_attr->inject_size, 65536);
	fi_freeinfo(list);

	/* what fi_getinfo would refuse, fi_domain refuses too */
	list = gi_list(V_NOW, NULL, NULL, 0, test_hints());
	list->domain_attr->data_progress = FI_PROGRESS_AUTO;
	cr_expect_eq(p4f_check_info(V_NOW, &p4f_info_template, list), 0);
	list->domain_attr->data_progress = 77;	/* no such model */
	cr_expect_eq(p4f_check_info(V_NOW, &p4f_info_template, list),
		     -FI_ENODATA);
	fi_freeinfo(list);
}
