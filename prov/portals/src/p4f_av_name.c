/*
 * p4f_av_name.c - the address vector calls that start from names rather
 * than addresses: fi_av_insertsvc (node + service through getaddrinfo, or
 * an FI_ADDR_STR "fi_sockaddr_in://host:port" node) and fi_av_insertsym
 * (a range of numeric addresses or of host names with a numeric suffix,
 * times a range of ports). Everything is resolved here, before the AV's
 * lock is taken (getaddrinfo may block), then inserted in one go by
 * p4f_av_insert_resolved() in p4f_av.c, which owns the table.
 */
#include <config.h>

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4f.h"

/* ---- name resolution (insertsvc, insertsym) ----------------------------- */

/* node/service through getaddrinfo, in the AV's family. May block. */
static int p4f_av_resolve(const struct p4f_av *av, const char *node,
			  const char *service, union p4f_sockaddr *sa)
{
	struct addrinfo hints, *ai, *cur;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = p4f_av_family(av);
	hints.ai_socktype = SOCK_STREAM;
	ret = getaddrinfo(node, service, &hints, &ai);
	if (ret) {
		FI_INFO(&p4f_prov, FI_LOG_AV, "cannot resolve %s:%s: %s\n",
			node, service, gai_strerror(ret));
		return -FI_EADDRNOTAVAIL;
	}
	ret = -FI_EADDRNOTAVAIL;
	for (cur = ai; cur; cur = cur->ai_next) {
		if (!p4f_av_family_ok(av, cur->ai_family) ||
		    cur->ai_addrlen > sizeof(*sa))
			continue;
		memset(sa, 0, sizeof(*sa));
		memcpy(sa, cur->ai_addr, cur->ai_addrlen);
		ret = 0;
		break;
	}
	freeaddrinfo(ai);
	return ret;
}

/* A port number: all digits, at most 65535. */
static int p4f_av_parse_port(const char *service, unsigned long *port_p)
{
	unsigned long port;
	char *end;

	if (!service || *service < '0' || *service > '9')
		return -FI_EINVAL;
	port = strtoul(service, &end, 10);
	if (*end || port > 65535)
		return -FI_EINVAL;
	*port_p = port;
	return 0;
}

/*
 * An FI_ADDR_STR node as p4f_sockaddr_str prints it:
 * "fi_sockaddr_in://1.2.3.4:5" or "fi_sockaddr_in6://[::1]:5".
 */
static int p4f_av_parse_str(const char *str, char *host, size_t hostlen,
			    char *port, size_t portlen)
{
	static const char in4[] = "fi_sockaddr_in://";
	static const char in6[] = "fi_sockaddr_in6://";
	const char *start, *end, *colon;

	if (!strncmp(str, in6, sizeof(in6) - 1)) {
		start = str + sizeof(in6) - 1;
		if (*start++ != '[' || !(end = strchr(start, ']')) ||
		    end[1] != ':')
			return -FI_EINVAL;
		colon = end + 1;
	} else if (!strncmp(str, in4, sizeof(in4) - 1)) {
		start = str + sizeof(in4) - 1;
		if (!(colon = strrchr(start, ':')))
			return -FI_EINVAL;
		end = colon;
	} else {
		return -FI_EINVAL;
	}
	if ((size_t)(end - start) >= hostlen || strlen(colon + 1) >= portlen)
		return -FI_EINVAL;
	memcpy(host, start, end - start);
	host[end - start] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

int p4f_av_insertsvc(struct fid_av *fid, const char *node,
		     const char *service, fi_addr_t *fi_addr, uint64_t flags,
		     void *context)
{
	struct p4f_av *av = p4f_av_of(fid);
	struct p4f_av_resolved res = { .err = 0 };
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (!node)
		return -FI_EINVAL;
	if (!service) {
		/* fi_av(3): an FI_ADDR_STR node comes without a service */
		if (p4f_av_parse_str(node, host, sizeof(host), port,
				     sizeof(port)))
			return -FI_EINVAL;
		node = host;
		service = port;
	}
	res.err = p4f_av_resolve(av, node, service, &res.addr);
	return p4f_av_insert_resolved(av, &res, 1, fi_addr, flags, context);
}

/* ---- insertsym --------------------------------------------------------- */

/* The node range of fi_av_insertsym: numeric (IPv4/IPv6) or name + digits. */
struct p4f_av_sym {
	union p4f_sockaddr base;	/* numeric: the first node */
	bool numeric;
	char prefix[NI_MAXHOST];	/* hostname: text before the digits */
	unsigned long long suffix;	/* ... the number they spell */
	int width;			/* ... how many digits (zero padded) */
};

/* Move a numeric address n addresses up; false if the range wraps. */
static bool p4f_av_addr_add(union p4f_sockaddr *sa, uint64_t n)
{
	uint64_t a;
	int i;

	if (sa->sa.sa_family == AF_INET) {
		a = (uint64_t)ntohl(sa->sin.sin_addr.s_addr) + n;
		sa->sin.sin_addr.s_addr = htonl((uint32_t)a);
		return a <= UINT32_MAX;
	}
	for (i = 15; i >= 0 && n; i--) {
		n += sa->sin6.sin6_addr.s6_addr[i];
		sa->sin6.sin6_addr.s6_addr[i] = (uint8_t)n;
		n >>= 8;
	}
	return !n;
}

static int p4f_av_sym_parse_node(const struct p4f_av *av, const char *node,
				 size_t nodecnt, struct p4f_av_sym *sym)
{
	size_t len = strlen(node), digits = 0;

	memset(sym, 0, sizeof(*sym));
	if (inet_pton(AF_INET, node, &sym->base.sin.sin_addr) == 1) {
		sym->base.sin.sin_family = AF_INET;
		sym->numeric = true;
	} else if (inet_pton(AF_INET6, node, &sym->base.sin6.sin6_addr) == 1) {
		sym->base.sin6.sin6_family = AF_INET6;
		sym->numeric = true;
	}
	if (sym->numeric)
		return p4f_av_family_ok(av, sym->base.sa.sa_family) ?
			0 : -FI_EINVAL;

	while (digits < len && digits < 18 &&
	       node[len - digits - 1] >= '0' && node[len - digits - 1] <= '9')
		digits++;
	if (len - digits >= sizeof(sym->prefix))
		return -FI_EINVAL;
	if (!digits) {
		/* fi_av(3): a host name needs a numeric suffix to count on */
		if (nodecnt > 1)
			return -FI_EINVAL;
		strcpy(sym->prefix, node);
		sym->width = 0;
		return 0;
	}
	memcpy(sym->prefix, node, len - digits);
	sym->prefix[len - digits] = '\0';
	sym->suffix = strtoull(node + len - digits, NULL, 10);
	sym->width = (int)digits;
	return 0;
}

/* Node n of the range (port 0): computed, or resolved (may block). */
static int p4f_av_sym_node(const struct p4f_av *av,
			   const struct p4f_av_sym *sym, size_t n,
			   union p4f_sockaddr *sa)
{
	char host[NI_MAXHOST + 24];

	if (sym->numeric) {
		*sa = sym->base;
		return p4f_av_addr_add(sa, n) ? 0 : -FI_EINVAL;
	}
	if (sym->width)
		snprintf(host, sizeof(host), "%s%0*llu", sym->prefix,
			 sym->width, sym->suffix + n);
	else
		snprintf(host, sizeof(host), "%s", sym->prefix);
	return p4f_av_resolve(av, host, "0", sa);
}

/* sin_port and sin6_port share their place: one store sets either. */
_Static_assert(offsetof(struct sockaddr_in, sin_port) ==
	       offsetof(struct sockaddr_in6, sin6_port), "port offsets");

/* Every node with every port, nodes in order, ports within a node. */
static void p4f_av_sym_fill(const struct p4f_av *av,
			    const struct p4f_av_sym *sym, size_t nodecnt,
			    unsigned long port, size_t svccnt,
			    struct p4f_av_resolved *res)
{
	union p4f_sockaddr sa;
	size_t n, s;
	int ret;

	for (n = 0; n < nodecnt; n++) {
		memset(&sa, 0, sizeof(sa));
		ret = p4f_av_sym_node(av, sym, n, &sa);
		for (s = 0; s < svccnt; s++, res++) {
			res->err = ret;
			res->addr = sa;
			res->addr.sin.sin_port = htons((uint16_t)(port + s));
		}
	}
}

int p4f_av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt,
		     const char *service, size_t svccnt, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct p4f_av *av = p4f_av_of(fid);
	struct p4f_av_resolved *res = NULL;
	struct p4f_av_sym sym;
	unsigned long port;
	size_t total;
	int ret;

	if (!node || !service)
		return -FI_EINVAL;
	ret = p4f_av_parse_port(service, &port);
	if (ret)
		return ret;	/* sequential services must be numeric */
	if (svccnt && port + (svccnt - 1) > 65535)
		return -FI_EINVAL;
	if (nodecnt && svccnt > INT_MAX / nodecnt)
		return -FI_EINVAL;
	total = nodecnt * svccnt;
	ret = p4f_av_sym_parse_node(av, node, nodecnt, &sym);
	if (ret)
		return ret;

	if (total) {
		res = calloc(total, sizeof(*res));
		if (!res)
			return -FI_ENOMEM;
		p4f_av_sym_fill(av, &sym, nodecnt, port, svccnt, res);
	}
	ret = p4f_av_insert_resolved(av, res, total, fi_addr, flags, context);
	free(res);
	return ret;
}
