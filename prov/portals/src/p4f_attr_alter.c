/*
 * p4f_attr_alter.c - p4f_alter_info(): narrow an info fi_getinfo returns
 * (already known to satisfy the hints, p4f_check_info in p4f_attr.c) to
 * what the application asked for: the capabilities it named (secondary
 * ones whenever the provider has them), the mr_mode bits the provider
 * needs, context attributes, op flags and the auth_key it gave.
 */
#include <config.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "p4f_attr.h"

/* ---- narrowing --------------------------------------------------------- */

/*
 * The caps an entry reports when asked for some: the primary caps and
 * modifiers asked, the modifiers they imply (when none were asked, those
 * prov lists), and every secondary cap prov has.
 */
static uint64_t p4f_caps_select(uint64_t asked, uint64_t prov)
{
	uint64_t caps = (asked & P4F_CAPS_SELECTED) |
			(prov & ~P4F_CAPS_SELECTED);

	if ((caps & (FI_MSG | FI_TAGGED)) && !(caps & P4F_CAPS_MSG_DIR))
		caps |= prov & P4F_CAPS_MSG_DIR;
	if ((caps & (FI_RMA | FI_ATOMIC)) && !(caps & P4F_CAPS_RMA_DIR))
		caps |= prov & P4F_CAPS_RMA_DIR;
	return caps;
}

/* A context's caps: the ones asked of it, else those of the (narrowed)
 * endpoint caps the context has, plus its secondary ones. */
static uint64_t p4f_caps_ctx(uint64_t asked, uint64_t info_caps,
			     uint64_t prov, uint64_t applies)
{
	asked &= applies;
	if (asked)
		return p4f_caps_select(asked, prov);
	return (info_caps & prov & P4F_CAPS_SELECTED) |
	       (prov & ~P4F_CAPS_SELECTED);
}

/* The mr_mode an entry reports (the provider's needs were checked). */
static int p4f_mr_mode_select(uint32_t version, int prov_mode, int user_mode,
			      uint64_t caps)
{
	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		if (user_mode == FI_MR_BASIC || user_mode == FI_MR_SCALABLE)
			return user_mode;
		return (prov_mode & FI_MR_BASIC) ? FI_MR_BASIC :
						   FI_MR_SCALABLE;
	}
	if (user_mode & P4F_MR_MODE_LEGACY)
		return user_mode;
	return p4f_mr_mode_required(prov_mode, caps);
}

/* The key asked for is the one the objects will use (checked already). */
static void p4f_alter_auth_key(uint8_t **key_p, size_t *size_p,
			       const uint8_t *user, size_t user_size)
{
	uint8_t *key;

	if (!user || user_size != P4F_AUTH_KEY_SIZE)
		return;
	key = malloc(user_size);
	if (!key)
		return;	/* the entry goes out keyless: the domain's key rules */
	memcpy(key, user, user_size);
	free(*key_p);
	*key_p = key;
	*size_p = user_size;
}

static void p4f_alter_domain_attr(uint32_t version, struct fi_info *info,
				  const struct fi_info *hints)
{
	struct fi_domain_attr *attr = info->domain_attr;
	const struct fi_domain_attr *user = hints ? hints->domain_attr : NULL;

	attr->mr_mode = p4f_mr_mode_select(version, attr->mr_mode,
					   p4f_hints_mr_mode(hints),
					   info->caps);
	/* no thread unless asked for: manual is cheaper when it is enough */
	attr->data_progress = user && user->data_progress ?
			      user->data_progress : FI_PROGRESS_MANUAL;
	if (!user)
		return;
	if (user->caps & P4F_CAPS_DOMAIN)
		attr->caps = p4f_caps_select(user->caps & P4F_CAPS_DOMAIN,
					     attr->caps);
	/* the level asked for when lower: the domain may skip its lock */
	if (user->threading)
		attr->threading = user->threading;
	if (user->control_progress)
		attr->control_progress = user->control_progress;
	if (user->av_type)
		attr->av_type = user->av_type;
	/* resource_mgmt stays FI_RM_ENABLED: the provider always protects */
	p4f_alter_auth_key(&attr->auth_key, &attr->auth_key_size,
			   user->auth_key, user->auth_key_size);
}

static void p4f_alter_ep_attr(struct fi_info *info,
			      const struct fi_ep_attr *user)
{
	struct fi_ep_attr *attr = info->ep_attr;

	if (!user)
		return;
	p4f_alter_auth_key(&attr->auth_key, &attr->auth_key_size,
			   user->auth_key, user->auth_key_size);
	if (info->caps & (FI_RMA | FI_ATOMIC)) {
		if (user->max_order_raw_size)
			attr->max_order_raw_size = user->max_order_raw_size;
		if (user->max_order_war_size)
			attr->max_order_war_size = user->max_order_war_size;
		if (user->max_order_waw_size)
			attr->max_order_waw_size = user->max_order_waw_size;
	}
	if (user->tx_ctx_cnt)
		attr->tx_ctx_cnt = user->tx_ctx_cnt;
	if (user->rx_ctx_cnt)
		attr->rx_ctx_cnt = user->rx_ctx_cnt;
}

/*
 * Default op_flags are the ones asked for, none otherwise: the template's
 * are what an application may ask, not defaults to impose (FI_COMPLETION
 * by default would defeat FI_SELECTIVE_COMPLETION).
 */
static void p4f_alter_tx_attr(struct fi_info *info,
			      const struct fi_tx_attr *user)
{
	struct fi_tx_attr *attr = info->tx_attr;

	attr->caps = p4f_caps_ctx(user ? user->caps : 0, info->caps,
				  attr->caps, P4F_CAPS_TX);
	attr->op_flags = user ? user->op_flags : 0;
	if (!user)
		return;
	if (user->inject_size)
		attr->inject_size = user->inject_size;
	if (user->size)
		attr->size = user->size;
	if (user->iov_limit)
		attr->iov_limit = user->iov_limit;
	if (user->rma_iov_limit)
		attr->rma_iov_limit = user->rma_iov_limit;
}

static void p4f_alter_rx_attr(struct fi_info *info,
			      const struct fi_rx_attr *user)
{
	struct fi_rx_attr *attr = info->rx_attr;

	attr->caps = p4f_caps_ctx(user ? user->caps : 0, info->caps,
				  attr->caps, P4F_CAPS_RX);
	attr->op_flags = user ? user->op_flags : 0;
	if (!user)
		return;
	if (user->size)
		attr->size = user->size;
	if (user->iov_limit)
		attr->iov_limit = user->iov_limit;
	/* total_buffered_recv stays what the overflow pool holds */
}

void p4f_alter_info(uint32_t version, struct fi_info *prov,
		    const struct fi_info *hints)
{
	int prov_mr_mode = prov->domain_attr->mr_mode;

	if (hints && hints->caps)
		prov->caps = p4f_caps_select(hints->caps, prov->caps);
	/* a pre-1.5 application learns about FI_MR_LOCAL from the mode bit */
	if ((prov_mr_mode & FI_MR_LOCAL) &&
	    p4f_mr_mode_is_legacy(version, p4f_hints_mr_mode(hints)))
		prov->mode |= FI_LOCAL_MR;

	p4f_alter_domain_attr(version, prov, hints);
	p4f_alter_ep_attr(prov, hints ? hints->ep_attr : NULL);
	p4f_alter_tx_attr(prov, hints ? hints->tx_attr : NULL);
	p4f_alter_rx_attr(prov, hints ? hints->rx_attr : NULL);
}
