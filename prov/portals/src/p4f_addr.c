/*
 * p4f_addr.c - the provider's address format (struct sockaddr_in /
 * sockaddr_in6: each endpoint listens on its own port) and the list of
 * usable local interfaces fi_getinfo turns into domains.
 */
#include <config.h>

#include <errno.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4f.h"

size_t p4f_sockaddr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

bool p4f_sockaddr_valid(const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;

	if (!addr || len < sizeof(sa_family_t))
		return false;
	if (sa->sa_family == AF_INET)
		return len >= sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return len >= sizeof(struct sockaddr_in6);
	return false;
}

int p4f_sockaddr_str(const struct sockaddr *sa, char *buf, size_t *len)
{
	char host[INET6_ADDRSTRLEN];
	char out[FI_NAME_MAX];
	int n;

	if (!sa || !len)
		return -FI_EINVAL;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		n = snprintf(out, sizeof(out), "fi_sockaddr_in://%s:%u", host,
			     ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		n = snprintf(out, sizeof(out), "fi_sockaddr_in6://[%s]:%u",
			     host, ntohs(sin6->sin6_port));
	} else {
		n = snprintf(out, sizeof(out), "fi_addr_unknown");
	}
	/* like fi_av_straddr: copy what fits, report the full length */
	if (buf && *len)
		snprintf(buf, *len, "%s", out);
	*len = (size_t)n + 1;
	return 0;
}

/* Link-local IPv6 needs a scope id that a peer cannot use: skip it. */
static bool p4f_iface_addr_usable(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return true;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;
		return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_MULTICAST(a);
	}
	return false;
}

/* Sort key: non-loopback before loopback, then IPv4 before IPv6. */
static int p4f_iface_rank(const struct p4f_iface *iface)
{
	return (iface->loopback ? 2 : 0) +
	       (iface->addr.sa.sa_family == AF_INET6 ? 1 : 0);
}

int p4f_iface_list(int family, struct p4f_iface **ifaces_p, size_t *count_p)
{
	struct ifaddrs *ifa_list, *ifa;
	struct p4f_iface *ifaces, tmp;
	size_t n = 0, cap = 0, i, j;

	/* out of descriptors or memory is not "no interface": say so */
	if (getifaddrs(&ifa_list))
		return errno == EMFILE || errno == ENFILE ? -errno :
		       errno == ENOMEM || errno == ENOBUFS ? -FI_ENOMEM :
		       -FI_ENODATA;
	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next)
		cap++;
	ifaces = calloc(cap ? cap : 1, sizeof(*ifaces));
	if (!ifaces) {
		freeifaddrs(ifa_list);
		return -FI_ENOMEM;
	}

	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
			continue;
		if (family != AF_UNSPEC && ifa->ifa_addr->sa_family != family)
			continue;
		if (!p4f_iface_addr_usable(ifa->ifa_addr))
			continue;
		if (p4f_params.iface && *p4f_params.iface &&
		    strcmp(p4f_params.iface, ifa->ifa_name))
			continue;
		memset(&ifaces[n], 0, sizeof(ifaces[n]));
		snprintf(ifaces[n].name, sizeof(ifaces[n].name), "%s",
			 ifa->ifa_name);
		memcpy(&ifaces[n].addr, ifa->ifa_addr,
		       p4f_sockaddr_len(ifa->ifa_addr));
		ifaces[n].loopback = !!(ifa->ifa_flags & IFF_LOOPBACK);
		n++;
	}
	freeifaddrs(ifa_list);

	/* stable insertion sort: keeps the kernel's order within a rank */
	for (i = 1; i < n; i++) {
		tmp = ifaces[i];
		for (j = i; j > 0 && p4f_iface_rank(&ifaces[j - 1]) >
					     p4f_iface_rank(&tmp); j--)
			ifaces[j] = ifaces[j - 1];
		ifaces[j] = tmp;
	}

	if (!n) {
		free(ifaces);
		return -FI_ENODATA;
	}
	*ifaces_p = ifaces;
	*count_p = n;
	return 0;
}

int p4f_iface_lookup(const char *name, int family, struct p4f_iface *iface_p)
{
	struct p4f_iface *ifaces;
	size_t n, i;
	int ret;

	ret = p4f_iface_list(family, &ifaces, &n);
	if (ret)
		return ret;
	ret = -FI_ENODATA;
	for (i = 0; i < n; i++) {
		if (name && strcmp(name, ifaces[i].name))
			continue;
		*iface_p = ifaces[i];
		ret = 0;
		break;
	}
	free(ifaces);
	return ret;
}
