/*
 * test_attr.c - the fi_info filter of the portals provider (p4f_attr.c):
 * p4f_check_info()/p4f_alter_info() called on synthetic infos from the
 * copy of the provider linked into this binary. One synthetic provider
 * info has every capability, so the filter rules stay tested for what the
 * provider cannot do yet: capabilities and their modifiers, context caps,
 * the MR mode rules (also as API 1.4 had them), required mode bits, tag
 * bits, RMA ordering sizes, the fixed threading / AV / progress models,
 * shared contexts and auth keys, and the template copy.
 *
 * Not here: what fi_getinfo returns (test_getinfo.c). The versions and
 * the parameter defaults (gi_init) are in p4f_getinfo_test.h.
 */
#include <config.h>

#include "p4f.h"
#include "p4f_test.h"
#include "p4f_getinfo_test.h"

/* Every capability the filter has rules for. */
#define ALL_TX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | \
			 FI_READ | FI_WRITE | FI_TRIGGER | FI_FENCE)
#define ALL_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | \
			 FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_TRIGGER)
#define ALL_DOM_CAPS	(FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV)
#define ALL_CAPS	(ALL_TX_CAPS | ALL_RX_CAPS | ALL_DOM_CAPS)
#define SECONDARY_CAPS	(FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | \
			 FI_TRIGGER | FI_FENCE | ALL_DOM_CAPS)

/* p4f_check_info() on a provider info, with the line in the message. */
#define GI_CHECK(version, prov, hints, expected)			\
	cr_expect_eq(p4f_check_info((version), (prov), (hints)),	\
		     (expected), "line %d", __LINE__)

/* A synthetic provider info that has every capability. */
static struct fi_info *gi_synthetic(void)
{
	struct fi_info *prov = fi_allocinfo();

	cr_assert_not_null(prov);
	cr_assert_eq(p4f_info_from_template(prov), 0);
	prov->caps = ALL_CAPS;
	prov->tx_attr->caps = ALL_TX_CAPS;
	prov->rx_attr->caps = ALL_RX_CAPS;
	prov->domain_attr->caps = ALL_DOM_CAPS;
	prov->tx_attr->op_flags |= FI_INJECT;
	prov->rx_attr->op_flags |= FI_MULTI_RECV;
	prov->tx_attr->msg_order |= FI_ORDER_RAW | FI_ORDER_WAW;
	prov->ep_attr->max_order_raw_size = 4096;
	prov->ep_attr->max_order_waw_size = 4096;
	return prov;
}

/* ---- the filter on synthetic infos ------------------------------------- */

/* syn: a provider info with every capability; ask: empty hints. */
static struct fi_info *syn, *ask;

static void attr_init(void)
{
	gi_init();
	syn = gi_synthetic();
	ask = fi_allocinfo();
	cr_assert_not_null(ask);
}

static void attr_fini(void)
{
	fi_freeinfo(syn);
	fi_freeinfo(ask);
}

TestSuite(attr, .init = attr_init, .fini = attr_fini, .timeout = 30);

Test(attr, null_hints)
{
	GI_CHECK(V_NOW, syn, NULL, 0);
	GI_CHECK(V_NOW, &p4f_info_template, NULL, 0);
	p4f_alter_info(V_NOW, syn, NULL);
	cr_expect_eq(syn->caps, ALL_CAPS);
	cr_expect_eq(syn->tx_attr->caps, ALL_TX_CAPS);
	cr_expect_eq(syn->tx_attr->op_flags, 0);
	cr_expect_eq(syn->domain_attr->mr_mode, 0);
	cr_expect_eq(syn->domain_attr->threading, FI_THREAD_SAFE);
}

Test(attr, template_copy)
{
	struct fi_info *info = fi_allocinfo();

	p4f_params.tx_size = 123;
	p4f_params.rx_size = (size_t)1 << 30;	/* above the ceiling */
	cr_assert_eq(p4f_info_from_template(info), 0);
	cr_expect_eq(info->tx_attr->size, 123);
	cr_expect_eq(info->rx_attr->size, p4f_info_template.rx_attr->size);
	cr_expect_eq(info->rx_attr->total_buffered_recv,
		     p4f_params.oflow_buf_size * p4f_params.oflow_buf_count);
	cr_expect_str_eq(info->fabric_attr->name, P4F_FABRIC_NAME);
	cr_expect_neq(info->fabric_attr->name,
		      p4f_info_template.fabric_attr->name, "not a deep copy");
	cr_expect_neq(info->tx_attr, p4f_info_template.tx_attr);
	cr_expect_eq(info->addr_format, FI_SOCKADDR);
	cr_expect_eq(info->caps, p4f_info_template.caps);
	/* narrowed like a returned entry, it passes the checks
	 * p4f_domain_open/p4f_ep_open apply */
	p4f_alter_info(V_NOW, info, NULL);
	GI_CHECK(V_NOW, &p4f_info_template, info, 0);
	fi_freeinfo(info);
}

Test(attr, caps_subset_of_the_provider)
{
	ask->caps = FI_RMA | FI_ATOMIC;
	GI_CHECK(V_NOW, &p4f_info_template, ask, 0);
	GI_CHECK(V_NOW, syn, ask, 0);
	ask->caps = FI_TAGGED;
	GI_CHECK(V_NOW, &p4f_info_template, ask, 0);
	ask->caps = FI_TAGGED | FI_COLLECTIVE;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	/* FI_MSG alone implies both directions: a provider listing only FI_MSG
	 * can be asked for FI_SEND */
	syn->caps = FI_MSG;
	ask->caps = FI_MSG | FI_SEND;
	GI_CHECK(V_NOW, syn, ask, 0);
}

Test(attr, primary_caps_only_when_asked)
{
	ask->caps = FI_TAGGED;
	cr_assert_eq(p4f_check_info(V_NOW, syn, ask), 0);
	p4f_alter_info(V_NOW, syn, ask);
	/* asked + implied modifiers + every secondary cap */
	cr_expect_eq(syn->caps, FI_TAGGED | FI_SEND | FI_RECV |
				 SECONDARY_CAPS);
	cr_expect_eq(syn->tx_attr->caps, FI_TAGGED | FI_SEND | FI_TRIGGER |
					  FI_FENCE);
	cr_expect_eq(syn->rx_attr->caps, FI_TAGGED | FI_RECV | FI_MULTI_RECV |
					  FI_SOURCE | FI_RMA_EVENT |
					  FI_TRIGGER);
	cr_expect_eq(syn->domain_attr->caps, ALL_DOM_CAPS);
}

Test(attr, modifiers_restrict)
{
	ask->caps = FI_MSG | FI_RECV | FI_RMA | FI_REMOTE_WRITE;
	cr_assert_eq(p4f_check_info(V_NOW, syn, ask), 0);
	p4f_alter_info(V_NOW, syn, ask);
	cr_expect_eq(syn->caps & (FI_SEND | FI_READ | FI_WRITE |
				   FI_REMOTE_READ), 0);
	cr_expect_eq(syn->rx_attr->caps & (FI_RECV | FI_REMOTE_WRITE),
		     FI_RECV | FI_REMOTE_WRITE);
	cr_expect_eq(syn->tx_attr->caps & (FI_SEND | FI_READ | FI_WRITE), 0);
}

Test(attr, ctx_caps)
{
	/* receive-only caps in tx_attr are ignored, as libfabric does */
	ask->tx_attr->caps = FI_COLLECTIVE | FI_DIRECTED_RECV | FI_RECV;
	GI_CHECK(V_NOW, &p4f_info_template, ask, -FI_ENODATA);
	ask->tx_attr->caps = FI_RMA | FI_DIRECTED_RECV | FI_RECV;
	GI_CHECK(V_NOW, &p4f_info_template, ask, 0);
	ask->tx_attr->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_RECV;
	GI_CHECK(V_NOW, syn, ask, 0);
	p4f_alter_info(V_NOW, syn, ask);
	cr_expect_eq(syn->tx_attr->caps & (FI_DIRECTED_RECV | FI_RECV), 0);
	cr_expect_eq(syn->tx_attr->caps & (FI_TAGGED | FI_SEND),
		     FI_TAGGED | FI_SEND);
	fi_freeinfo(syn);

	/* a context's caps are a subset of the endpoint's */
	syn = gi_synthetic();
	ask->caps = FI_MSG;
	ask->tx_attr->caps = FI_TAGGED;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->caps = 0;
	ask->tx_attr->caps = 0;
	ask->rx_attr->caps = FI_COLLECTIVE;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
}

Test(attr, mr_local_rule)
{
	syn->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_BASIC;
	ask->domain_attr->mr_mode = 0;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->domain_attr->mr_mode = FI_MR_LOCAL;
	GI_CHECK(V_NOW, syn, ask, 0);
	/* the old mode bit says the same */
	ask->domain_attr->mr_mode = 0;
	ask->mode = FI_LOCAL_MR;
	GI_CHECK(V_NOW, syn, ask, 0);
	ask->mode = 0;
	ask->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR;
	p4f_alter_info(V_NOW, syn, ask);
	/* what the provider requires, not every bit the application offers */
	cr_expect_eq(syn->domain_attr->mr_mode, FI_MR_LOCAL);
	cr_expect_eq(syn->mode & FI_LOCAL_MR, 0);
}

Test(attr, mr_local_rule_api_1_4)
{
	syn->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_BASIC;
	ask->domain_attr->mr_mode = FI_MR_BASIC;
	GI_CHECK(V1_4, syn, ask, -FI_ENODATA);
	ask->mode = FI_LOCAL_MR;
	GI_CHECK(V1_4, syn, ask, 0);
	p4f_alter_info(V1_4, syn, ask);
	cr_expect_eq(syn->domain_attr->mr_mode, FI_MR_BASIC);
	cr_expect_eq(syn->mode & FI_LOCAL_MR, FI_LOCAL_MR);
	/* a provider without FI_MR_BASIC cannot serve FI_MR_BASIC */
	syn->domain_attr->mr_mode = FI_MR_SCALABLE;
	GI_CHECK(V1_4, syn, ask, -FI_ENODATA);
}

Test(attr, mr_required_bits)
{
	syn->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	ask->caps = FI_RMA;
	ask->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	GI_CHECK(V_NOW, syn, ask, 0);
	/* RMA-target bits do not apply to an endpoint that is no target */
	ask->caps = FI_MSG;
	ask->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
	GI_CHECK(V_NOW, syn, ask, 0);
}

Test(attr, required_mode)
{
	syn->mode = FI_CONTEXT;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->mode = FI_CONTEXT | FI_CONTEXT2;
	GI_CHECK(V_NOW, syn, ask, 0);
	p4f_alter_info(V_NOW, syn, ask);
	cr_expect_eq(syn->mode, FI_CONTEXT, "only the mode it needs");
}

Test(attr, tag_bits)
{
	ask->caps = FI_TAGGED;
	ask->ep_attr->mem_tag_format = 0xFFFFFFFFFFFFFFFFULL;
	GI_CHECK(V_NOW, syn, ask, 0);
	syn->ep_attr->mem_tag_format = 0xAAAAAAAAULL;	/* 32 bits */
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->ep_attr->mem_tag_format = 0x30FF;	/* 14 bits */
	GI_CHECK(V_NOW, syn, ask, 0);
}

Test(attr, rma_order_sizes)
{
	ask->caps = FI_RMA;
	ask->tx_attr->msg_order = FI_ORDER_RAW;
	ask->ep_attr->max_order_raw_size = 4097;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->ep_attr->max_order_raw_size = 1024;
	GI_CHECK(V_NOW, syn, ask, 0);
	p4f_alter_info(V_NOW, syn, ask);
	cr_expect_eq(syn->ep_attr->max_order_raw_size, 1024);
	/* not an RMA endpoint: the sizes do not matter */
	fi_freeinfo(syn);
	syn = gi_synthetic();
	ask->caps = FI_MSG;
	ask->tx_attr->msg_order = 0;
	ask->ep_attr->max_order_raw_size = 1 << 20;
	GI_CHECK(V_NOW, syn, ask, 0);
}

Test(attr, fixed_models)
{
	syn->domain_attr->threading = FI_THREAD_DOMAIN;
	syn->domain_attr->av_type = FI_AV_TABLE;
	syn->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	ask->domain_attr->threading = FI_THREAD_SAFE;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->domain_attr->threading = FI_THREAD_DOMAIN;
	GI_CHECK(V_NOW, syn, ask, 0);
	ask->domain_attr->av_type = FI_AV_MAP;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->domain_attr->av_type = FI_AV_TABLE;
	ask->domain_attr->control_progress = FI_PROGRESS_AUTO;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
	ask->domain_attr->control_progress = 0;
	ask->domain_attr->threading = 77;	/* no such level */
	GI_CHECK(V_NOW, &p4f_info_template, ask, -FI_ENODATA);
}

Test(attr, shared_contexts_and_auth_keys)
{
	syn->domain_attr->max_ep_stx_ctx = 1;
	syn->ep_attr->auth_key_size = 8;
	ask->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	GI_CHECK(V_NOW, syn, ask, 0);
	GI_CHECK(V_NOW, &p4f_info_template, ask, -FI_ENODATA);
	ask->ep_attr->tx_ctx_cnt = 0;
	ask->ep_attr->auth_key = calloc(1, 8);
	ask->ep_attr->auth_key_size = 8;
	GI_CHECK(V_NOW, syn, ask, 0);
	ask->ep_attr->auth_key_size = 4;
	GI_CHECK(V_NOW, syn, ask, -FI_ENODATA);
}
