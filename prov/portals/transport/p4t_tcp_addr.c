/*
 * p4t_tcp_addr.c - the TCP transport's addresses: parsing what the engine
 * hands in (IPv4 / IPv6 sockaddrs), comparing, hashing and printing them.
 * Links are looked up and ordered (simultaneous connects) by these.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* Only family, port, address (and IPv6 scope) count: one byte encoding. */
int p4t_tcp_addr_parse(const void *addr, size_t addrlen,
		       struct sockaddr_storage *ss, socklen_t *len_p)
{
	struct sockaddr_in sin, *out4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 sin6, *out6 = (struct sockaddr_in6 *)ss;

	if (!addr)
		return -FI_EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (addrlen == sizeof(sin)) {
		memcpy(&sin, addr, sizeof(sin));	/* may be unaligned */
		if (sin.sin_family != AF_INET)
			return -FI_EINVAL;
		out4->sin_family = AF_INET;
		out4->sin_port = sin.sin_port;
		out4->sin_addr = sin.sin_addr;
		*len_p = sizeof(sin);
		return 0;
	}
	if (addrlen == sizeof(sin6)) {
		memcpy(&sin6, addr, sizeof(sin6));
		if (sin6.sin6_family != AF_INET6)
			return -FI_EINVAL;
		out6->sin6_family = AF_INET6;
		out6->sin6_port = sin6.sin6_port;
		out6->sin6_addr = sin6.sin6_addr;
		out6->sin6_scope_id = sin6.sin6_scope_id;
		*len_p = sizeof(sin6);
		return 0;
	}
	return -FI_EINVAL;
}

bool p4t_tcp_addr_eq(const struct sockaddr_storage *a, socklen_t alen,
		     const struct sockaddr_storage *b, socklen_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* Both ends compare the same normalised bytes, so both agree. */
int p4t_tcp_addr_cmp(const struct sockaddr_storage *a, socklen_t alen,
			    const struct sockaddr_storage *b, socklen_t blen)
{
	int c = memcmp(a, b, P4U_MIN(alen, blen));

	return c ? c : (int)alen - (int)blen;
}

uint64_t p4t_tcp_addr_hash(const struct sockaddr_storage *ss, socklen_t len)
{
	const uint8_t *p = (const uint8_t *)ss;
	uint64_t h = 0xcbf29ce484222325ULL;
	socklen_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return p4u_hash_u64(h);
}

const char *p4t_tcp_addr_str(const struct sockaddr_storage *ss, char *buf,
			     size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else {
		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(sin->sin_port));
	}
	return buf;
}
