/* p4f_attr.c - INTERIM: minimal template until the full filter lands. */
#include <config.h>
#include <stdlib.h>
#include <string.h>
#include "p4f.h"

static struct fi_tx_attr p4f_tx_attr = {
	.caps = 0, .msg_order = FI_ORDER_SAS, .size = 4096, .iov_limit = 4,
	.rma_iov_limit = 1, .inject_size = 4096,
};
static struct fi_rx_attr p4f_rx_attr = {
	.caps = 0, .msg_order = FI_ORDER_SAS, .size = 65536, .iov_limit = 4,
};
static struct fi_ep_attr p4f_ep_attr = {
	.type = FI_EP_RDM, .protocol_version = 1, .max_msg_size = SIZE_MAX,
	.tx_ctx_cnt = 1, .rx_ctx_cnt = 1,
};
static struct fi_domain_attr p4f_domain_attr = {
	.threading = FI_THREAD_SAFE, .control_progress = FI_PROGRESS_MANUAL,
	.data_progress = FI_PROGRESS_MANUAL, .resource_mgmt = FI_RM_ENABLED,
	.av_type = FI_AV_UNSPEC, .mr_key_size = 8, .cq_data_size = 8,
	.cq_cnt = 256, .ep_cnt = 256, .tx_ctx_cnt = 256, .rx_ctx_cnt = 256,
	.max_ep_tx_ctx = 1, .max_ep_rx_ctx = 1, .cntr_cnt = 256,
	.mr_iov_limit = 8, .mr_cnt = 65536,
};
static struct fi_fabric_attr p4f_fabric_attr = {
	.name = P4F_FABRIC_NAME, .prov_version = P4F_PROV_VERSION,
};

const struct fi_info p4f_info_template = {
	.caps = FI_LOCAL_COMM | FI_REMOTE_COMM,
	.addr_format = FI_SOCKADDR,
	.tx_attr = &p4f_tx_attr, .rx_attr = &p4f_rx_attr,
	.ep_attr = &p4f_ep_attr, .domain_attr = &p4f_domain_attr,
	.fabric_attr = &p4f_fabric_attr,
};

int p4f_info_from_template(struct fi_info *info)
{
	*info->tx_attr = p4f_tx_attr;
	*info->rx_attr = p4f_rx_attr;
	*info->ep_attr = p4f_ep_attr;
	*info->domain_attr = p4f_domain_attr;
	info->domain_attr->name = NULL;
	*info->fabric_attr = p4f_fabric_attr;
	info->fabric_attr->name = strdup(P4F_FABRIC_NAME);
	info->caps = p4f_info_template.caps;
	info->addr_format = p4f_info_template.addr_format;
	return info->fabric_attr->name ? 0 : -FI_ENOMEM;
}

int p4f_check_info(uint32_t version, const struct fi_info *prov,
		   const struct fi_info *hints)
{
	if (!hints)
		return 0;
	if (hints->caps & ~prov->caps)
		return -FI_ENODATA;
	if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_RDM)
		return -FI_ENODATA;
	return 0;
}

void p4f_alter_info(uint32_t version, struct fi_info *prov,
		    const struct fi_info *hints)
{
}
