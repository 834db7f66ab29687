/*
 * p4f_attr.c - what the provider offers and the rules that hold an
 * application's fi_info against it:
 *
 *   p4f_info_template        capabilities, defaults and ceilings;
 *   p4f_info_from_template() its runtime copy (sizes from FI_PORTALS_*);
 *   p4f_check_info()         can an info (ours) satisfy the hints?
 *
 * and, in p4f_attr_alter.c, p4f_alter_info(): narrow a returned info to
 * what was asked. The capability sets and ceilings are in p4f_attr.h.
 *
 * The rules are those libfabric's built-in providers apply (fi_getinfo(3),
 * fi_domain(3), fi_endpoint(3), fi_mr(3)): a non-zero hint is a requirement
 * and zero a wildcard, except for mode bits where zero means "the
 * application supports none"; primary capabilities and their modifiers are
 * reported only when asked for, secondary ones whenever the provider has
 * them. The filter takes the provider info as a parameter, so it is tested
 * against infos with capabilities the provider does not have yet.
 *
 * Not here: interfaces, addresses and the list fi_getinfo returns
 * (p4f_getinfo.c, p4f_addr.c).
 */
#include <config.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "p4f_attr.h"

/* ---- the template ------------------------------------------------------ */

/* Not const: fi_info points to mutable attributes; nothing writes them. */
static struct fi_tx_attr p4f_tx_attr_template = {
	.caps = P4F_CAPS & P4F_CAPS_TX,
	.mode = 0,
	.op_flags = P4F_TX_OP_FLAGS,
	.msg_order = P4F_MSG_ORDER,
	.comp_order = FI_ORDER_NONE,
	.inject_size = P4F_INJECT_SIZE_MAX,
	.size = P4F_QUEUE_SIZE_MAX,
	.iov_limit = P4F_IOV_LIMIT,
	.rma_iov_limit = P4F_RMA_IOV_LIMIT,
};

static struct fi_rx_attr p4f_rx_attr_template = {
	.caps = P4F_CAPS & P4F_CAPS_RX,
	.mode = 0,
	.op_flags = P4F_RX_OP_FLAGS,
	.msg_order = P4F_MSG_ORDER,
	.comp_order = FI_ORDER_NONE,
	.total_buffered_recv = 0,	/* the overflow pool, set at runtime */
	.size = P4F_QUEUE_SIZE_MAX,
	.iov_limit = P4F_IOV_LIMIT,
};

static struct fi_ep_attr p4f_ep_attr_template = {
	.type = FI_EP_RDM,
	.protocol = FI_PROTO_UNSPEC,
	.protocol_version = 1,
	/* rendezvous pulls any length in chunks: no limit below size_t */
	.max_msg_size = SIZE_MAX,
	.msg_prefix_size = 0,
	/* ceilings; entries report FI_PORTALS_EAGER_SIZE (P4F_MSG_ORDER) */
	.max_order_raw_size = SIZE_MAX,
	.max_order_war_size = SIZE_MAX,
	.max_order_waw_size = SIZE_MAX,
	.mem_tag_format = P4F_TAG_FORMAT,
	.tx_ctx_cnt = 1,
	.rx_ctx_cnt = 1,
	.auth_key_size = P4F_AUTH_KEY_SIZE,
};

static struct fi_domain_attr p4f_domain_attr_template = {
	.name = NULL,			/* any interface; entries name theirs */
	.threading = FI_THREAD_SAFE,
	/* control operations (AV, MR, CQ setup) complete in the call */
	.control_progress = FI_PROGRESS_AUTO,
	/*
	 * Reading a CQ, counter or EQ progresses the domain; hints asking
	 * FI_PROGRESS_AUTO get a progress thread per domain as well
	 * (p4f_progress.c). Reported: what the hints asked, else MANUAL
	 * (p4f_alter_domain_attr).
	 */
	.data_progress = FI_PROGRESS_AUTO,
	.resource_mgmt = FI_RM_ENABLED,
	.av_type = FI_AV_UNSPEC,
	/* no bit required; the legacy modes it can serve (API < 1.5) */
	.mr_mode = P4F_MR_MODE_LEGACY,
	.mr_key_size = P4F_MR_KEY_SIZE,
	.cq_data_size = P4F_CQ_DATA_SIZE,
	.cq_cnt = P4F_CQ_CNT,
	.ep_cnt = P4F_EP_CNT,
	.tx_ctx_cnt = P4F_EP_CNT,
	.rx_ctx_cnt = P4F_EP_CNT,
	.max_ep_tx_ctx = 1,
	.max_ep_rx_ctx = 1,
	.max_ep_stx_ctx = 0,
	.max_ep_srx_ctx = 0,
	.cntr_cnt = P4F_CNTR_CNT,
	.mr_iov_limit = P4F_MR_IOV_LIMIT,
	.caps = P4F_CAPS & P4F_CAPS_DOMAIN,
	.mode = 0,
	.auth_key_size = P4F_AUTH_KEY_SIZE,
	.max_err_data = P4F_MAX_ERR_DATA,
	.mr_cnt = P4F_MR_CNT,
};

static char p4f_fabric_name[] = P4F_FABRIC_NAME;

static struct fi_fabric_attr p4f_fabric_attr_template = {
	.name = p4f_fabric_name,
	.prov_name = NULL,		/* the core sets it */
	.prov_version = P4F_PROV_VERSION,
};

const struct fi_info p4f_info_template = {
	.caps = P4F_CAPS,
	.mode = 0,			/* no FI_CONTEXT etc.: docs/design.md §3.3 */
	.addr_format = FI_SOCKADDR,	/* IN and IN6 */
	.tx_attr = &p4f_tx_attr_template,
	.rx_attr = &p4f_rx_attr_template,
	.ep_attr = &p4f_ep_attr_template,
	.domain_attr = &p4f_domain_attr_template,
	.fabric_attr = &p4f_fabric_attr_template,
};

/* Release what a reused info owns before the template replaces it. */
static void p4f_attr_release(struct fi_info *info)
{
	free(info->src_addr);
	free(info->dest_addr);
	info->src_addr = info->dest_addr = NULL;
	info->src_addrlen = info->dest_addrlen = 0;
	free(info->ep_attr->auth_key);
	free(info->domain_attr->name);
	free(info->domain_attr->auth_key);
	free(info->fabric_attr->name);
	free(info->fabric_attr->prov_name);
}

int p4f_info_from_template(struct fi_info *info)
{
	const struct fi_info *tmpl = &p4f_info_template;
	size_t oflow;

	if (!info || !info->tx_attr || !info->rx_attr || !info->ep_attr ||
	    !info->domain_attr || !info->fabric_attr)
		return -FI_EINVAL;
	p4f_attr_release(info);

	info->caps = tmpl->caps;
	info->mode = tmpl->mode;
	info->addr_format = tmpl->addr_format;
	*info->tx_attr = *tmpl->tx_attr;
	*info->rx_attr = *tmpl->rx_attr;
	*info->ep_attr = *tmpl->ep_attr;
	*info->domain_attr = *tmpl->domain_attr;
	*info->fabric_attr = *tmpl->fabric_attr;
	info->fabric_attr->name = strdup(tmpl->fabric_attr->name);
	if (!info->fabric_attr->name)
		return -FI_ENOMEM;

	/* what this process was configured with, within the ceilings */
	info->tx_attr->size = P4U_MIN(p4f_params.tx_size,
					   tmpl->tx_attr->size);
	info->tx_attr->inject_size = P4U_MIN(p4f_params.inject_size,
						  tmpl->tx_attr->inject_size);
	info->rx_attr->size = P4U_MIN(p4f_params.rx_size,
					   tmpl->rx_attr->size);
	/* the largest atomic: what the atomic orderings cover */
	info->ep_attr->max_order_raw_size = P4U_MIN(p4f_eager_min(),
						tmpl->ep_attr->max_order_raw_size);
	info->ep_attr->max_order_war_size = P4U_MIN(p4f_eager_min(),
						tmpl->ep_attr->max_order_war_size);
	info->ep_attr->max_order_waw_size = P4U_MIN(p4f_eager_min(),
						tmpl->ep_attr->max_order_waw_size);
	oflow = p4f_params.oflow_buf_size * p4f_params.oflow_buf_count;
	if (p4f_params.oflow_buf_count &&
	    oflow / p4f_params.oflow_buf_count != p4f_params.oflow_buf_size)
		oflow = SIZE_MAX;
	info->rx_attr->total_buffered_recv = oflow;
	return 0;
}

/* ---- checks: helpers --------------------------------------------------- */

static void p4f_attr_log_bits(const char *what, uint64_t bits,
			      enum fi_type type)
{
	char buf[512];

	if (!fi_log_enabled(&p4f_prov, FI_LOG_INFO, FI_LOG_CORE))
		return;
	FI_INFO(&p4f_prov, FI_LOG_CORE, "%s not supported: %s\n", what,
		fi_tostr_r(buf, sizeof(buf), &bits, type));
}

/* 0 if every bit of user is in prov; logs the missing ones otherwise. */
static int p4f_attr_check_bits(const char *what, uint64_t user, uint64_t prov,
			       enum fi_type type)
{
	if (!(user & ~prov))
		return 0;
	p4f_attr_log_bits(what, user & ~prov, type);
	return -FI_ENODATA;
}

/* 0 if the application supports every mode bit prov requires. */
static int p4f_attr_check_mode(const char *what, uint64_t user, uint64_t prov)
{
	uint64_t missing = prov & ~user;

	if (!missing)
		return 0;
	p4f_attr_log_bits(what, missing, FI_TYPE_MODE);
	return -FI_ENODATA;
}

/*
 * A size_t attribute the hints may not exceed. Tables of them keep the
 * checks below short and make adding a field one line.
 */
struct p4f_attr_limit {
	const char *name;
	size_t offset;
};

#define P4F_LIMIT(type, field)	{ #field, offsetof(struct type, field) }

static const struct p4f_attr_limit p4f_tx_limits[] = {
	P4F_LIMIT(fi_tx_attr, inject_size),
	P4F_LIMIT(fi_tx_attr, size),
	P4F_LIMIT(fi_tx_attr, iov_limit),
	P4F_LIMIT(fi_tx_attr, rma_iov_limit),
};

/* total_buffered_recv is a hint the provider may adjust (fi_endpoint(3)):
 * not a limit. */
static const struct p4f_attr_limit p4f_rx_limits[] = {
	P4F_LIMIT(fi_rx_attr, size),
	P4F_LIMIT(fi_rx_attr, iov_limit),
};

static const struct p4f_attr_limit p4f_ep_limits[] = {
	P4F_LIMIT(fi_ep_attr, max_msg_size),
	/* a prefix asked for is one the provider does not use */
	P4F_LIMIT(fi_ep_attr, msg_prefix_size),
};

static const struct p4f_attr_limit p4f_ep_order_limits[] = {
	P4F_LIMIT(fi_ep_attr, max_order_raw_size),
	P4F_LIMIT(fi_ep_attr, max_order_war_size),
	P4F_LIMIT(fi_ep_attr, max_order_waw_size),
};

static const struct p4f_attr_limit p4f_domain_limits[] = {
	P4F_LIMIT(fi_domain_attr, mr_key_size),
	P4F_LIMIT(fi_domain_attr, cq_data_size),
	P4F_LIMIT(fi_domain_attr, cq_cnt),
	P4F_LIMIT(fi_domain_attr, ep_cnt),
	P4F_LIMIT(fi_domain_attr, tx_ctx_cnt),
	P4F_LIMIT(fi_domain_attr, rx_ctx_cnt),
	P4F_LIMIT(fi_domain_attr, max_ep_tx_ctx),
	P4F_LIMIT(fi_domain_attr, max_ep_rx_ctx),
	P4F_LIMIT(fi_domain_attr, max_ep_stx_ctx),
	P4F_LIMIT(fi_domain_attr, max_ep_srx_ctx),
	P4F_LIMIT(fi_domain_attr, cntr_cnt),
	P4F_LIMIT(fi_domain_attr, mr_iov_limit),
	P4F_LIMIT(fi_domain_attr, max_err_data),
	P4F_LIMIT(fi_domain_attr, mr_cnt),
};

static size_t p4f_attr_field(const void *attr, size_t offset)
{
	size_t value;

	memcpy(&value, (const char *)attr + offset, sizeof(value));
	return value;
}

static int p4f_attr_check_limits(const char *what, const void *prov,
				 const void *user,
				 const struct p4f_attr_limit *limits,
				 size_t count)
{
	size_t i, prov_value, user_value;

	for (i = 0; i < count; i++) {
		prov_value = p4f_attr_field(prov, limits[i].offset);
		user_value = p4f_attr_field(user, limits[i].offset);
		if (user_value <= prov_value)
			continue;
		FI_INFO(&p4f_prov, FI_LOG_CORE,
			"%s %s %zu exceeds the supported %zu\n", what,
			limits[i].name, user_value, prov_value);
		return -FI_ENODATA;
	}
	return 0;
}

/* FI_MSG alone means send and receive, FI_RMA alone both directions
 * (fi_getinfo(3)): the modifiers a capability set implies. */
static uint64_t p4f_caps_expand(uint64_t caps)
{
	if ((caps & (FI_MSG | FI_TAGGED)) && !(caps & P4F_CAPS_MSG_DIR))
		caps |= P4F_CAPS_MSG_DIR;
	if ((caps & (FI_RMA | FI_ATOMIC)) && !(caps & P4F_CAPS_RMA_DIR))
		caps |= P4F_CAPS_RMA_DIR;
	return caps;
}

static bool p4f_caps_rma_target(uint64_t caps)
{
	if (!(caps & (FI_RMA | FI_ATOMIC)))
		return false;
	return (caps & (FI_REMOTE_READ | FI_REMOTE_WRITE)) ||
	       !(caps & (FI_READ | FI_WRITE));
}

/* ---- checks: memory registration --------------------------------------- */

/* The mr_mode bits prov requires of an application using caps. */
int p4f_mr_mode_required(int prov_mode, uint64_t caps)
{
	int mode = prov_mode & ~P4F_MR_MODE_LEGACY;

	if (!p4f_caps_rma_target(caps))
		mode &= ~P4F_MR_MODE_RMA_TARGET;
	if (!(caps & FI_HMEM))
		mode &= ~FI_MR_HMEM;
	return mode;
}

int p4f_hints_mr_mode(const struct fi_info *hints)
{
	return hints && hints->domain_attr ? hints->domain_attr->mr_mode :
					     FI_MR_UNSPEC;
}

/* The application speaks the pre-1.5 mr_mode language (fi_mr(3)). */
bool p4f_mr_mode_is_legacy(uint32_t version, int user_mode)
{
	return FI_VERSION_LT(version, FI_VERSION(1, 5)) ||
	       (user_mode & P4F_MR_MODE_LEGACY);
}

/*
 * A provider that needs local buffers registered (FI_MR_LOCAL) is usable
 * only by an application that says it registers them: FI_MR_LOCAL in
 * mr_mode (API >= 1.5) or the older FI_LOCAL_MR mode bit.
 */
static int p4f_check_mr_local(uint32_t version, int prov_mode,
			      const struct fi_info *hints)
{
	int user_mode = p4f_hints_mr_mode(hints);

	if (!(prov_mode & FI_MR_LOCAL) || (hints->mode & FI_LOCAL_MR))
		return 0;
	if (!p4f_mr_mode_is_legacy(version, user_mode) &&
	    (user_mode & FI_MR_LOCAL))
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE,
		"FI_MR_LOCAL required and not supported by the application\n");
	return -FI_ENODATA;
}

/* API < 1.5, or FI_MR_BASIC/FI_MR_SCALABLE: exactly one legacy mode. */
static int p4f_check_mr_legacy(int prov_mode, int user_mode)
{
	switch (user_mode) {
	case FI_MR_UNSPEC:
		if (prov_mode & P4F_MR_MODE_LEGACY)
			return 0;
		break;
	case FI_MR_BASIC:
	case FI_MR_SCALABLE:
		if (prov_mode & user_mode)
			return 0;
		break;
	default:
		break;
	}
	FI_INFO(&p4f_prov, FI_LOG_CORE, "mr_mode 0x%x not supported\n",
		user_mode);
	return -FI_ENODATA;
}

static int p4f_check_mr_mode(uint32_t version, const struct fi_info *prov,
			     const struct fi_info *hints)
{
	int prov_mode = prov->domain_attr->mr_mode;
	int user_mode = p4f_hints_mr_mode(hints);
	int required;
	int ret;

	ret = p4f_check_mr_local(version, prov_mode, hints);
	if (ret)
		return ret;
	if (p4f_mr_mode_is_legacy(version, user_mode))
		return p4f_check_mr_legacy(prov_mode, user_mode);

	/* mr_mode 0 accepts what the provider needs (FI_MR_LOCAL aside) */
	required = p4f_mr_mode_required(prov_mode,
					hints->caps ? hints->caps : prov->caps);
	if (user_mode == FI_MR_UNSPEC || (user_mode & required) == required)
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE,
		"mr_mode 0x%x lacks required bits 0x%x\n", user_mode,
		required & ~user_mode);
	return -FI_ENODATA;
}

/* ---- checks: domain ---------------------------------------------------- */

/*
 * Threading, progress and resource-management models, from the least to
 * the most demanding of the provider: a provider offering one offers the
 * ones before it too.
 */
static const int p4f_thread_order[] = {
	FI_THREAD_UNSPEC, FI_THREAD_DOMAIN, FI_THREAD_COMPLETION,
	FI_THREAD_ENDPOINT, FI_THREAD_FID, FI_THREAD_SAFE,
};
static const int p4f_progress_order[] = {
	FI_PROGRESS_UNSPEC, FI_PROGRESS_MANUAL, FI_PROGRESS_AUTO,
};
static const int p4f_rm_order[] = {
	FI_RM_UNSPEC, FI_RM_DISABLED, FI_RM_ENABLED,
};

/* The position of model in order, -1 if it is not a valid value. */
static int p4f_model_rank(int model, const int *order, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (order[i] == model)
			return (int)i;
	return -1;
}

#define P4F_RANK(model, order)	\
	p4f_model_rank((int)(model), order, P4U_ARRAY_SIZE(order))

/* A model the provider offers: known, and no more demanding than prov's. */
static int p4f_check_rank(const char *what, int user_rank, int prov_rank)
{
	if (user_rank >= 0 && user_rank <= prov_rank)
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE, "%s not supported\n", what);
	return -FI_ENODATA;
}

static int p4f_check_models(const struct fi_domain_attr *prov,
			    const struct fi_domain_attr *user)
{
	int ret;

	ret = p4f_check_rank("threading",
			     P4F_RANK(user->threading, p4f_thread_order),
			     P4F_RANK(prov->threading, p4f_thread_order));
	if (!ret)
		ret = p4f_check_rank("control progress",
				     P4F_RANK(user->control_progress,
					      p4f_progress_order),
				     P4F_RANK(prov->control_progress,
					      p4f_progress_order));
	if (!ret)
		ret = p4f_check_rank("data progress",
				     P4F_RANK(user->data_progress,
					      p4f_progress_order),
				     P4F_RANK(prov->data_progress,
					      p4f_progress_order));
	if (!ret)
		ret = p4f_check_rank("resource management",
				     P4F_RANK(user->resource_mgmt, p4f_rm_order),
				     P4F_RANK(prov->resource_mgmt, p4f_rm_order));
	if (ret)
		return ret;

	/* FI_AV_UNSPEC in prov: both kinds */
	if (user->av_type == FI_AV_UNSPEC ||
	    ((user->av_type == FI_AV_MAP || user->av_type == FI_AV_TABLE) &&
	     (prov->av_type == FI_AV_UNSPEC || prov->av_type == user->av_type)))
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE, "av_type %d not supported\n",
		user->av_type);
	return -FI_ENODATA;
}

/* Authentication keys are not supported yet: asking for one finds nothing
 * unless prov has keys of that size. */
static int p4f_check_auth_key(const char *what, size_t prov_size,
			      size_t user_size, const void *user_key)
{
	if (!user_size && !user_key)
		return 0;
	if (prov_size && user_size == prov_size)
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE, "%s auth_key not supported\n", what);
	return -FI_ENODATA;
}

static int p4f_check_domain_attr(const struct fi_info *prov,
				 const struct fi_info *hints)
{
	const struct fi_domain_attr *p = prov->domain_attr;
	const struct fi_domain_attr *u = hints->domain_attr;
	int ret;

	if (p->name && u->name && strcmp(p->name, u->name)) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "domain %s is not %s\n",
			u->name, p->name);
		return -FI_ENODATA;
	}
	ret = p4f_check_models(p, u);
	if (!ret)
		ret = p4f_attr_check_limits("domain", p, u, p4f_domain_limits,
					    P4U_ARRAY_SIZE(p4f_domain_limits));
	if (!ret)
		ret = p4f_attr_check_bits("domain caps", u->caps,
					  p4f_caps_expand(p->caps),
					  FI_TYPE_CAPS);
	if (!ret)
		ret = p4f_attr_check_mode("domain mode", u->mode, p->mode);
	if (!ret)
		ret = p4f_check_auth_key("domain", p->auth_key_size,
					 u->auth_key_size, u->auth_key);
	/* tclass is a hint (fi_domain(3)): accepted, not enforced */
	return ret;
}

/* ---- checks: endpoint, contexts ----------------------------------------- */

static int p4f_tag_bits(uint64_t format)
{
	int bits = 0;

	for (; format; format >>= 1)
		bits++;
	return bits;
}

/* tx_ctx_cnt / rx_ctx_cnt: FI_SHARED_CONTEXT needs shared contexts. */
static int p4f_check_ctx_cnt(const char *what, size_t user, size_t max_ctx,
			     size_t max_shared)
{
	if (user == FI_SHARED_CONTEXT ? max_shared != 0 : user <= max_ctx)
		return 0;
	FI_INFO(&p4f_prov, FI_LOG_CORE, "%s %zu not supported\n", what, user);
	return -FI_ENODATA;
}

static int p4f_check_ep_attr(const struct fi_info *prov,
			     const struct fi_info *hints)
{
	const struct fi_ep_attr *p = prov->ep_attr, *u = hints->ep_attr;
	const struct fi_domain_attr *dom = prov->domain_attr;
	uint64_t caps = hints->caps ? hints->caps : prov->caps;
	int ret;

	if ((u->protocol != FI_PROTO_UNSPEC && u->protocol != p->protocol) ||
	    u->protocol_version > p->protocol_version) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "protocol %u v%u not offered\n",
			u->protocol, u->protocol_version);
		return -FI_ENODATA;
	}
	if (u->mem_tag_format &&
	    p4f_tag_bits(u->mem_tag_format) > p4f_tag_bits(p->mem_tag_format)) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "%d tag bits not offered\n",
			p4f_tag_bits(u->mem_tag_format));
		return -FI_ENODATA;
	}
	ret = p4f_attr_check_limits("endpoint", p, u, p4f_ep_limits,
				    P4U_ARRAY_SIZE(p4f_ep_limits));
	if (!ret && (caps & (FI_RMA | FI_ATOMIC)))
		ret = p4f_attr_check_limits("endpoint", p, u,
					    p4f_ep_order_limits,
					    P4U_ARRAY_SIZE(p4f_ep_order_limits));
	if (!ret)
		ret = p4f_check_ctx_cnt("tx_ctx_cnt", u->tx_ctx_cnt,
					dom->max_ep_tx_ctx, dom->max_ep_stx_ctx);
	if (!ret)
		ret = p4f_check_ctx_cnt("rx_ctx_cnt", u->rx_ctx_cnt,
					dom->max_ep_rx_ctx, dom->max_ep_srx_ctx);
	if (!ret)
		ret = p4f_check_auth_key("endpoint", p->auth_key_size,
					 u->auth_key_size, u->auth_key);
	return ret;
}

/*
 * The part of an attribute's caps that applies to it: receive-only caps in
 * tx_attr (and the reverse) are ignored, as libfabric does for older
 * applications that copied info->caps into both.
 */
static int p4f_check_ctx_caps(const char *what, uint64_t user, uint64_t prov,
			      uint64_t applies, const struct fi_info *hints)
{
	int ret;

	user &= applies;
	ret = p4f_attr_check_bits(what, user, p4f_caps_expand(prov),
				  FI_TYPE_CAPS);
	if (ret || !hints->caps)
		return ret;
	/* a context's caps are a subset of the endpoint's (fi_endpoint(3)) */
	return p4f_attr_check_bits(what, user, p4f_caps_expand(hints->caps),
				   FI_TYPE_CAPS);
}

static int p4f_check_tx_attr(const struct fi_info *prov,
			     const struct fi_info *hints)
{
	const struct fi_tx_attr *p = prov->tx_attr, *u = hints->tx_attr;
	int ret;

	ret = p4f_check_ctx_caps("tx caps", u->caps, p->caps, P4F_CAPS_TX,
				 hints);
	if (!ret)
		ret = p4f_attr_check_mode("tx mode",
					  u->mode ? u->mode : hints->mode,
					  p->mode);
	if (!ret)
		ret = p4f_attr_check_bits("tx op_flags", u->op_flags,
					  p->op_flags, FI_TYPE_OP_FLAGS);
	if (!ret)
		ret = p4f_attr_check_bits("tx msg_order", u->msg_order,
					  p->msg_order, FI_TYPE_MSG_ORDER);
	if (!ret)
		ret = p4f_attr_check_bits("tx comp_order", u->comp_order,
					  p->comp_order, FI_TYPE_MSG_ORDER);
	if (!ret)
		ret = p4f_attr_check_limits("tx", p, u, p4f_tx_limits,
					    P4U_ARRAY_SIZE(p4f_tx_limits));
	return ret;
}

static int p4f_check_rx_attr(const struct fi_info *prov,
			     const struct fi_info *hints)
{
	const struct fi_rx_attr *p = prov->rx_attr, *u = hints->rx_attr;
	int ret;

	ret = p4f_check_ctx_caps("rx caps", u->caps, p->caps, P4F_CAPS_RX,
				 hints);
	if (!ret)
		ret = p4f_attr_check_mode("rx mode",
					  u->mode ? u->mode : hints->mode,
					  p->mode);
	if (!ret)
		ret = p4f_attr_check_bits("rx op_flags", u->op_flags,
					  p->op_flags, FI_TYPE_OP_FLAGS);
	if (!ret)
		ret = p4f_attr_check_bits("rx msg_order", u->msg_order,
					  p->msg_order, FI_TYPE_MSG_ORDER);
	if (!ret)
		ret = p4f_attr_check_bits("rx comp_order", u->comp_order,
					  p->comp_order, FI_TYPE_MSG_ORDER);
	if (!ret)
		ret = p4f_attr_check_limits("rx", p, u, p4f_rx_limits,
					    P4U_ARRAY_SIZE(p4f_rx_limits));
	return ret;
}

/* ---- checks: the whole info -------------------------------------------- */

/*
 * fi_getinfo(3) addressing formats: FI_SOCKADDR means either family;
 * an IPv4 entry serves IPv4 requests only, an IPv6 entry IPv6 ones.
 */
static bool p4f_addr_format_ok(uint32_t prov, uint32_t user)
{
	if (user == FI_FORMAT_UNSPEC || prov == FI_FORMAT_UNSPEC ||
	    user == prov)
		return true;
	switch (prov) {
	case FI_SOCKADDR:
		return user == FI_SOCKADDR_IN || user == FI_SOCKADDR_IN6;
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR_IN6:
		return user == FI_SOCKADDR;
	default:
		return false;
	}
}

static int p4f_check_fabric_attr(const struct fi_fabric_attr *prov,
				 const struct fi_fabric_attr *user)
{
	/* prov_name is the core's business (it picked us by name) */
	if (prov->name && user->name && strcmp(prov->name, user->name)) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "fabric %s is not %s\n",
			user->name, prov->name);
		return -FI_ENODATA;
	}
	if (user->prov_version > prov->prov_version) {
		FI_INFO(&p4f_prov, FI_LOG_CORE,
			"provider version %u.%u asked, %u.%u offered\n",
			FI_MAJOR(user->prov_version),
			FI_MINOR(user->prov_version),
			FI_MAJOR(prov->prov_version),
			FI_MINOR(prov->prov_version));
		return -FI_ENODATA;
	}
	return 0;
}

/* The fields of fi_info itself (not of its attributes). */
static int p4f_check_info_base(uint32_t version, const struct fi_info *prov,
			       const struct fi_info *hints)
{
	int ret;

	if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != prov->ep_attr->type) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "endpoint type %d not offered\n",
			hints->ep_attr->type);
		return -FI_ENODATA;
	}
	ret = p4f_attr_check_bits("capabilities", hints->caps,
				  p4f_caps_expand(prov->caps), FI_TYPE_CAPS);
	if (!ret)
		ret = p4f_attr_check_mode("mode", hints->mode, prov->mode);
	if (!ret && !p4f_addr_format_ok(prov->addr_format,
					hints->addr_format)) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "address format %u not offered\n",
			hints->addr_format);
		ret = -FI_ENODATA;
	}
	if (!ret)
		ret = p4f_check_mr_mode(version, prov, hints);
	return ret;
}

int p4f_check_info(uint32_t version, const struct fi_info *prov,
		   const struct fi_info *hints)
{
	int ret;

	if (!hints)
		return 0;
	ret = p4f_check_info_base(version, prov, hints);
	if (!ret && hints->fabric_attr)
		ret = p4f_check_fabric_attr(prov->fabric_attr,
					    hints->fabric_attr);
	if (!ret && hints->domain_attr)
		ret = p4f_check_domain_attr(prov, hints);
	if (!ret && hints->ep_attr)
		ret = p4f_check_ep_attr(prov, hints);
	if (!ret && hints->tx_attr)
		ret = p4f_check_tx_attr(prov, hints);
	if (!ret && hints->rx_attr)
		ret = p4f_check_rx_attr(prov, hints);
	return ret;
}
