/* p4f_getinfo.c - INTERIM: one entry per interface, minimal filtering. */
#include <config.h>
#include <stdlib.h>
#include <string.h>
#include "p4f.h"

int p4f_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info_p)
{
	struct fi_info *head = NULL, *tail = NULL, *info;
	struct p4f_iface *ifaces;
	size_t n, i;
	int ret;

	if (p4f_check_info(version, &p4f_info_template, hints))
		return -FI_ENODATA;
	ret = p4f_iface_list(AF_UNSPEC, &ifaces, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		info = fi_allocinfo();
		if (!info || p4f_info_from_template(info)) {
			fi_freeinfo(info);
			continue;
		}
		info->domain_attr->name = strdup(ifaces[i].name);
		info->addr_format = ifaces[i].addr.sa.sa_family == AF_INET ?
			FI_SOCKADDR_IN : FI_SOCKADDR_IN6;
		info->src_addrlen = p4f_sockaddr_len(&ifaces[i].addr.sa);
		info->src_addr = malloc(info->src_addrlen);
		memcpy(info->src_addr, &ifaces[i].addr, info->src_addrlen);
		if (tail)
			tail->next = info;
		else
			head = info;
		tail = info;
	}
	free(ifaces);
	*info_p = head;
	return head ? 0 : -FI_ENODATA;
}
