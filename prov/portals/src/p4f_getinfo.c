/*
 * p4f_getinfo.c - the provider's fi_getinfo: one FI_EP_RDM entry per
 * usable interface address, in p4f_iface_list() order (routable interfaces
 * first, IPv4 before IPv6, loopback last, so a consumer that takes the
 * first entry publishes a routable address), each filtered and narrowed by
 * p4f_check_info()/p4f_alter_info() (p4f_attr.c).
 *
 * Also here: what node, service, FI_SOURCE/FI_NUMERICHOST and the hints'
 * src_addr/dest_addr mean for the entries:
 *   - without FI_SOURCE, node[:service] is a destination: it is resolved,
 *     becomes dest_addr, and only entries of its family remain; the entries
 *     whose address the kernel would send from come first;
 *   - with FI_SOURCE, node[:service] is a local address: only the entries
 *     of interfaces that have it (every entry when node is NULL or a
 *     wildcard), with src_addr carrying the port;
 *   - hints->src_addr must be one of the interface addresses (its port is
 *     kept), hints->dest_addr selects the entries of its family.
 *
 * Also the transport choice (FI_PORTALS_TRANSPORT): with verbs ports
 * (auto or verbs), one entry per active port, named after its device,
 * listed before the TCP interfaces (auto) or alone (verbs).
 *
 * Not here: the attribute rules (p4f_attr.c), the interface list and
 * address helpers (p4f_addr.c).
 */
#include <config.h>

#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p4f.h"
#ifdef HAVE_VERBS
#include "p4t_verbs.h"
#endif

/*
 * Flag bits the libfabric core passes for its own use (ofi.h:
 * OFI_GETINFO_INTERNAL, OFI_CORE_PROV_ONLY, OFI_GETINFO_HIDDEN,
 * OFI_OFFLOAD_PROV_ONLY): they say nothing about what to return.
 */
#define P4F_GETINFO_CORE_FLAGS	(0xfULL << 58)

/* Local addresses node may resolve to (e.g. a name with several A/AAAA
 * records); more than this is not a host name one binds to. */
#define P4F_GETINFO_MAX_SRC	16

/* Per-family slots: 0 IPv4, 1 IPv6. */
#define P4F_GETINFO_FAMILIES	2

/* What node, service, flags and the hints' addresses ask of the entries. */
struct p4f_getinfo_addrs {
	bool src_set;				/* entries are restricted */
	bool src_any[P4F_GETINFO_FAMILIES];	/* any interface address */
	union p4f_sockaddr src[P4F_GETINFO_MAX_SRC];
	size_t src_count;
	in_port_t src_port;			/* network order */
	bool dest_set[P4F_GETINFO_FAMILIES];
	union p4f_sockaddr dest[P4F_GETINFO_FAMILIES];
	bool have_dest;
};

/* Where p4f_getinfo_lookup() puts each address it resolves. */
typedef void (*p4f_getinfo_add_func_t)(struct p4f_getinfo_addrs *addrs,
				       const union p4f_sockaddr *addr);

/* ---- address helpers --------------------------------------------------- */

static int p4f_getinfo_slot(int family)
{
	return family == AF_INET ? 0 : family == AF_INET6 ? 1 : -1;
}

static in_port_t p4f_getinfo_port(const union p4f_sockaddr *addr)
{
	return addr->sa.sa_family == AF_INET ? addr->sin.sin_port :
					       addr->sin6.sin6_port;
}

static void p4f_getinfo_set_port(union p4f_sockaddr *addr, in_port_t port)
{
	if (addr->sa.sa_family == AF_INET)
		addr->sin.sin_port = port;
	else
		addr->sin6.sin6_port = port;
}

/* Same family and IP address; ports are not compared. */
static bool p4f_getinfo_same_host(const struct sockaddr *a,
				  const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return IN6_ARE_ADDR_EQUAL(&((const struct sockaddr_in6 *)a)->sin6_addr,
				  &((const struct sockaddr_in6 *)b)->sin6_addr);
}

static bool p4f_getinfo_is_wildcard(const union p4f_sockaddr *addr)
{
	if (addr->sa.sa_family == AF_INET)
		return addr->sin.sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&addr->sin6.sin6_addr);
}

/* A struct sockaddr_in/in6 of a usable length, copied into *addr_p. */
static int p4f_getinfo_copy_addr(const void *addr, size_t len,
				 union p4f_sockaddr *addr_p)
{
	if (!p4f_sockaddr_valid(addr, len)) {
		FI_INFO(&p4f_prov, FI_LOG_CORE,
			"address of length %zu is not a sockaddr_in/in6\n",
			len);
		return -FI_ENODATA;
	}
	memset(addr_p, 0, sizeof(*addr_p));
	memcpy(addr_p, addr, p4f_sockaddr_len(addr));
	return 0;
}

/* ---- what node/service/hints ask --------------------------------------- */

static void p4f_getinfo_add_src(struct p4f_getinfo_addrs *addrs,
				const union p4f_sockaddr *addr)
{
	int slot = p4f_getinfo_slot(addr->sa.sa_family);

	addrs->src_set = true;
	addrs->src_port = p4f_getinfo_port(addr);
	if (p4f_getinfo_is_wildcard(addr))
		addrs->src_any[slot] = true;
	else if (addrs->src_count < P4F_GETINFO_MAX_SRC)
		addrs->src[addrs->src_count++] = *addr;
}

/* The first address of each family is the destination for that family. */
static void p4f_getinfo_add_dest(struct p4f_getinfo_addrs *addrs,
				 const union p4f_sockaddr *addr)
{
	int slot = p4f_getinfo_slot(addr->sa.sa_family);

	addrs->have_dest = true;
	if (addrs->dest_set[slot])
		return;
	addrs->dest[slot] = *addr;
	addrs->dest_set[slot] = true;
}

/* The family the hints' address format allows getaddrinfo to return. */
static int p4f_getinfo_family(const struct fi_info *hints)
{
	if (hints && hints->addr_format == FI_SOCKADDR_IN)
		return AF_INET;
	if (hints && hints->addr_format == FI_SOCKADDR_IN6)
		return AF_INET6;
	return AF_UNSPEC;
}

/* Resolve node/service; each IPv4/IPv6 result goes to add(). */
static int p4f_getinfo_lookup(const char *node, const char *service,
			      uint64_t flags, const struct fi_info *hints,
			      struct p4f_getinfo_addrs *addrs,
			      p4f_getinfo_add_func_t add)
{
	struct addrinfo ai_hints, *res, *ai;
	union p4f_sockaddr addr;
	int ret;

	memset(&ai_hints, 0, sizeof(ai_hints));
	ai_hints.ai_family = p4f_getinfo_family(hints);
	ai_hints.ai_socktype = SOCK_STREAM;
	if (flags & FI_SOURCE)
		ai_hints.ai_flags |= AI_PASSIVE;
	if (flags & FI_NUMERICHOST)
		ai_hints.ai_flags |= AI_NUMERICHOST;
	ret = getaddrinfo(node, service, &ai_hints, &res);
	if (ret) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "cannot resolve %s:%s: %s\n",
			node ? node : "", service ? service : "",
			gai_strerror(ret));
		return -FI_ENODATA;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if (p4f_getinfo_slot(ai->ai_family) < 0 ||
		    p4f_getinfo_copy_addr(ai->ai_addr, ai->ai_addrlen, &addr))
			continue;
		add(addrs, &addr);
	}
	freeaddrinfo(res);
	return 0;
}

/* FI_SOURCE: node/service is the local address; the hints' dest stays. */
static int p4f_getinfo_resolve_src(const char *node, const char *service,
				   uint64_t flags, const struct fi_info *hints,
				   struct p4f_getinfo_addrs *addrs)
{
	union p4f_sockaddr addr;
	int ret;

	if (!node && !service) {
		FI_INFO(&p4f_prov, FI_LOG_CORE,
			"FI_SOURCE without node or service\n");
		return -FI_EINVAL;
	}
	ret = p4f_getinfo_lookup(node, service, flags, hints, addrs,
				 p4f_getinfo_add_src);
	if (ret)
		return ret;
	if (!addrs->src_set) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "%s is not an IP address\n",
			node ? node : "");
		return -FI_ENODATA;
	}
	if (hints && hints->dest_addr) {
		ret = p4f_getinfo_copy_addr(hints->dest_addr,
					    hints->dest_addrlen, &addr);
		if (ret)
			return ret;
		p4f_getinfo_add_dest(addrs, &addr);
	}
	return 0;
}

/* No FI_SOURCE: node/service (else hints->dest_addr) is the destination,
 * hints->src_addr the local address. */
static int p4f_getinfo_resolve_dest(const char *node, const char *service,
				    uint64_t flags, const struct fi_info *hints,
				    struct p4f_getinfo_addrs *addrs)
{
	union p4f_sockaddr addr;
	int ret = 0;

	if (node || service) {
		ret = p4f_getinfo_lookup(node, service, flags, hints, addrs,
					 p4f_getinfo_add_dest);
		if (!ret && !addrs->have_dest)
			ret = -FI_ENODATA;
	} else if (hints && hints->dest_addr) {
		ret = p4f_getinfo_copy_addr(hints->dest_addr,
					    hints->dest_addrlen, &addr);
		if (!ret)
			p4f_getinfo_add_dest(addrs, &addr);
	}
	if (ret || !hints || !hints->src_addr)
		return ret;
	ret = p4f_getinfo_copy_addr(hints->src_addr, hints->src_addrlen,
				    &addr);
	if (!ret)
		p4f_getinfo_add_src(addrs, &addr);
	return ret;
}

/* ---- entries ----------------------------------------------------------- */

/* Is iface one of the local addresses asked for? *src_p gets the port. */
static bool p4f_getinfo_src_match(const struct p4f_getinfo_addrs *addrs,
				  const struct p4f_iface *iface,
				  union p4f_sockaddr *src_p)
{
	int slot = p4f_getinfo_slot(iface->addr.sa.sa_family);
	bool match = !addrs->src_set || addrs->src_any[slot];
	size_t i;

	for (i = 0; !match && i < addrs->src_count; i++)
		match = p4f_getinfo_same_host(&addrs->src[i].sa,
					      &iface->addr.sa);
	if (!match)
		return false;
	*src_p = iface->addr;
	p4f_getinfo_set_port(src_p, addrs->src_set ? addrs->src_port : 0);
	return true;
}

static int p4f_getinfo_set_addrs(struct fi_info *info,
				 const struct p4f_iface *iface,
				 const union p4f_sockaddr *src,
				 const union p4f_sockaddr *dest)
{
	size_t len = p4f_sockaddr_len(&src->sa);

	info->addr_format = src->sa.sa_family == AF_INET ? FI_SOCKADDR_IN :
							   FI_SOCKADDR_IN6;
	info->domain_attr->name = strdup(iface->name);
	info->src_addr = malloc(len);
	if (!info->domain_attr->name || !info->src_addr)
		return -FI_ENOMEM;
	memcpy(info->src_addr, src, len);
	info->src_addrlen = len;
	if (!dest)
		return 0;
	info->dest_addr = malloc(len);
	if (!info->dest_addr)
		return -FI_ENOMEM;
	memcpy(info->dest_addr, dest, len);
	info->dest_addrlen = len;
	return 0;
}

/* The entry for one interface address, or -FI_ENODATA if it does not fit. */
static int p4f_getinfo_entry(uint32_t version, const struct p4f_iface *iface,
			     const struct p4f_getinfo_addrs *addrs,
			     const struct fi_info *hints,
			     struct fi_info **info_p)
{
	int slot = p4f_getinfo_slot(iface->addr.sa.sa_family);
	const union p4f_sockaddr *dest = NULL;
	union p4f_sockaddr src;
	struct fi_info *info;
	int ret;

	if (!p4f_getinfo_src_match(addrs, iface, &src))
		return -FI_ENODATA;
	if (addrs->have_dest) {
		if (!addrs->dest_set[slot])
			return -FI_ENODATA;	/* not the destination's family */
		dest = &addrs->dest[slot];
	}

	info = fi_allocinfo();
	if (!info)
		return -FI_ENOMEM;
	ret = p4f_info_from_template(info);
	if (!ret)
		ret = p4f_getinfo_set_addrs(info, iface, &src, dest);
	if (!ret)
		ret = p4f_check_info(version, info, hints);
	if (ret) {
		fi_freeinfo(info);
		return ret;
	}
	p4f_alter_info(version, info, hints);
	*info_p = info;
	return 0;
}

/* ---- ordering ---------------------------------------------------------- */

/* The address the kernel would send from to reach dest. A UDP connect
 * only looks the route up; nothing is sent. */
static bool p4f_getinfo_route_src(const union p4f_sockaddr *dest,
				  union p4f_sockaddr *src_p)
{
	union p4f_sockaddr src;
	socklen_t len = sizeof(src);
	bool found;
	int fd;

	fd = socket(dest->sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	found = !connect(fd, &dest->sa, p4f_sockaddr_len(&dest->sa)) &&
		!getsockname(fd, &src.sa, &len);
	close(fd);
	if (found)
		*src_p = src;
	return found;
}

static bool p4f_getinfo_routed(const struct fi_info *info,
			       const union p4f_sockaddr *route,
			       const bool *have_route)
{
	const struct sockaddr *src = info->src_addr;
	int slot = p4f_getinfo_slot(src->sa_family);

	return have_route[slot] && p4f_getinfo_same_host(src, &route[slot].sa);
}

/*
 * With a destination, a consumer that takes the first entry should get the
 * interface that reaches it (loopback for 127.0.0.1, the right NIC on a
 * multi-homed host): move the entries the route uses to the front, the
 * others keep their order.
 */
static void p4f_getinfo_route_first(struct fi_info **head_p,
				    const struct p4f_getinfo_addrs *addrs)
{
	union p4f_sockaddr route[P4F_GETINFO_FAMILIES];
	bool have_route[P4F_GETINFO_FAMILIES];
	struct fi_info *first = NULL, **first_tail = &first;
	struct fi_info *rest = NULL, **rest_tail = &rest;
	struct fi_info *info, *next;
	int slot;

	for (slot = 0; slot < P4F_GETINFO_FAMILIES; slot++)
		have_route[slot] = addrs->dest_set[slot] &&
			p4f_getinfo_route_src(&addrs->dest[slot], &route[slot]);

	for (info = *head_p; info; info = next) {
		next = info->next;
		info->next = NULL;
		if (p4f_getinfo_routed(info, route, have_route)) {
			*first_tail = info;
			first_tail = &info->next;
		} else {
			*rest_tail = info;
			rest_tail = &info->next;
		}
	}
	*first_tail = rest;
	*head_p = first;
}

/* ---- transports: FI_PORTALS_TRANSPORT and verbs ports ------------------ */

enum p4f_xport p4f_xport_mode(void)
{
	const char *name = p4f_params.transport;

	if (!name || !*name || !strcmp(name, "auto"))
		return P4F_XPORT_AUTO;
	if (!strcmp(name, "tcp"))
		return P4F_XPORT_TCP;
	if (!strcmp(name, "verbs"))
		return P4F_XPORT_VERBS;
	if (!strcmp(name, "loop"))
		return P4F_XPORT_LOOP;
	FI_WARN(&p4f_prov, FI_LOG_CORE,
		"unknown FI_PORTALS_TRANSPORT %s: using auto\n", name);
	return P4F_XPORT_AUTO;
}

/*
 * The verbs ports as interfaces of family (AF_UNSPEC: any): per port, the
 * address of its RoCE GID first, then every other usable interface
 * address (the bootstrap TCP listener may sit on any of them, e.g. the
 * 127.0.0.1 a test binds to; the QPs route by the port's GID anyway).
 */
static int p4f_getinfo_verbs_ports(int family, struct p4f_iface **ifaces_p,
				   size_t *count_p)
{
	*ifaces_p = NULL;
	*count_p = 0;
#ifdef HAVE_VERBS
	struct p4t_verbs_dev *devs;
	struct p4f_iface *ifaces, *tcp = NULL, *out;
	size_t count, ntcp = 0, i, j, n = 0;
	int ret;

	ret = p4t_verbs_devices(&devs, &count);
	if (ret || !count)
		return ret;
	if (p4f_iface_list(family, &tcp, &ntcp))
		ntcp = 0;
	ifaces = calloc(count * (ntcp + 1), sizeof(*ifaces));
	if (!ifaces) {
		free(devs);
		free(tcp);
		return -FI_ENOMEM;
	}
	for (i = 0; i < count; i++) {
		/* the domain name must come back unchanged in fi_domain */
		if (strlen(devs[i].name) >= sizeof(ifaces[n].name))
			continue;
		out = &ifaces[n];
		if (devs[i].addr.ss_family == AF_INET &&
		    (family == AF_UNSPEC || family == AF_INET)) {
			memcpy(&out->addr.sin, &devs[i].addr,
			       sizeof(out->addr.sin));
			memcpy(out->name, devs[i].name,
			       strlen(devs[i].name) + 1);
			out->verbs = true;
			n++;
		}
		for (j = 0; j < ntcp; j++) {
			if (out->verbs && tcp[j].addr.sa.sa_family == AF_INET &&
			    tcp[j].addr.sin.sin_addr.s_addr ==
			    out->addr.sin.sin_addr.s_addr)
				continue;
			ifaces[n] = tcp[j];
			memcpy(ifaces[n].name, devs[i].name,
			       strlen(devs[i].name) + 1);
			ifaces[n].verbs = true;
			n++;
		}
	}
	free(devs);
	free(tcp);
	*ifaces_p = ifaces;
	*count_p = n;
#else
	(void)family;
#endif
	return 0;
}

int p4f_xport_iface_list(int family, struct p4f_iface **ifaces_p,
			 size_t *count_p)
{
	enum p4f_xport mode = p4f_xport_mode();
	struct p4f_iface *verbs = NULL, *tcp = NULL, *all;
	size_t nverbs = 0, ntcp = 0;
	int ret;

	if (mode == P4F_XPORT_AUTO || mode == P4F_XPORT_VERBS) {
		ret = p4f_getinfo_verbs_ports(family, &verbs, &nverbs);
		if (ret)
			return ret;
	}
	if (mode != P4F_XPORT_VERBS) {
		ret = p4f_iface_list(family, &tcp, &ntcp);
		if (ret && !nverbs) {
			free(verbs);
			return ret;
		}
	}
	if (!nverbs && !ntcp) {
		free(verbs);
		free(tcp);
		return -FI_ENODATA;
	}
	all = calloc(nverbs + ntcp, sizeof(*all));
	if (!all) {
		free(verbs);
		free(tcp);
		return -FI_ENOMEM;
	}
	if (nverbs)
		memcpy(all, verbs, nverbs * sizeof(*all));
	if (ntcp)
		memcpy(all + nverbs, tcp, ntcp * sizeof(*all));
	free(verbs);
	free(tcp);
	*ifaces_p = all;
	*count_p = nverbs + ntcp;
	return 0;
}

int p4f_xport_iface_lookup(const char *name, int family,
			   struct p4f_iface *iface_p)
{
	struct p4f_iface *ifaces;
	size_t n, i;
	int ret;

	ret = p4f_xport_iface_list(family, &ifaces, &n);
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

/* ---- entry point ------------------------------------------------------- */

static int p4f_getinfo_resolve(const char *node, const char *service,
			       uint64_t flags, const struct fi_info *hints,
			       struct p4f_getinfo_addrs *addrs)
{
	memset(addrs, 0, sizeof(*addrs));
	if (flags & FI_SOURCE)
		return p4f_getinfo_resolve_src(node, service, flags, hints,
					       addrs);
	return p4f_getinfo_resolve_dest(node, service, flags, hints, addrs);
}

int p4f_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info_p)
{
	struct fi_info *head = NULL, **tail = &head, *info;
	struct p4f_getinfo_addrs addrs;
	struct p4f_iface *ifaces;
	size_t count, i;
	int ret;

	if (!info_p)
		return -FI_EINVAL;
	flags &= ~P4F_GETINFO_CORE_FLAGS;
	/* the template bounds every entry: refuse early, before any lookup */
	ret = p4f_check_info(version, &p4f_info_template, hints);
	if (ret)
		return ret;
	ret = p4f_getinfo_resolve(node, service, flags, hints, &addrs);
	if (ret)
		return ret;
	ret = p4f_xport_iface_list(AF_UNSPEC, &ifaces, &count);
	if (ret) {
		FI_INFO(&p4f_prov, FI_LOG_CORE, "no usable interface: %s\n",
			fi_strerror(-ret));
		return ret;
	}

	for (i = 0; i < count; i++) {
		ret = p4f_getinfo_entry(version, &ifaces[i], &addrs, hints,
					&info);
		if (ret == -FI_ENODATA)
			continue;
		if (ret)
			goto err_free_list;
		*tail = info;
		tail = &info->next;
	}
	free(ifaces);
	if (!head)
		return -FI_ENODATA;
	if (addrs.have_dest && !addrs.src_set)
		p4f_getinfo_route_first(&head, &addrs);
	*info_p = head;
	return 0;

err_free_list:
	fi_freeinfo(head);
	free(ifaces);
	return ret;
}
