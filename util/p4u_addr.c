/*
 * p4u_addr.c - the host token (p4u_addr.h): a hash of the kernel's boot
 * id and of the namespaces shared memory between two processes needs
 * (network: the abstract Unix socket the segments are handed over;
 * PID: cross-memory attach names the peer by its pid; user: who may
 * attach), read from /proc once.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "p4u_addr.h"

static uint64_t p4u_token;
static pthread_once_t p4u_token_once = PTHREAD_ONCE_INIT;

/* FNV-1a, 64 bit: enough to tell hosts apart (the token is a hint). */
static uint64_t p4u_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static void p4u_token_init(void)
{
	static const char *const ns[] = {
		"/proc/self/ns/net", "/proc/self/ns/pid", "/proc/self/ns/user",
	};
	uint64_t h = 0xcbf29ce484222325ull;
	char boot[64] = "";
	struct stat st;
	FILE *f;
	size_t i;

	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = '\0';
		fclose(f);
	}
	h = p4u_fnv(h, boot, strlen(boot));
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (stat(ns[i], &st))
			memset(&st, 0, sizeof(st));
		h = p4u_fnv(h, &st.st_dev, sizeof(st.st_dev));
		h = p4u_fnv(h, &st.st_ino, sizeof(st.st_ino));
	}
	/* 0 means "no token"; IPv6 carries the first 32 bits */
	if (!(h & 0xffffffffull))
		h |= 1;
	p4u_token = h;
}

uint64_t p4u_host_token(void)
{
	(void)pthread_once(&p4u_token_once, p4u_token_init);
	return p4u_token;
}

uint64_t p4u_addr_token(const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;
	uint64_t t = 0;
	uint32_t t32;

	if (!addr)
		return 0;
	if (len == sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
		memcpy(&t, ((const struct sockaddr_in *)addr)->sin_zero,
		       sizeof(t));
		return t;
	}
	if (len == sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
		t32 = ntohl(((const struct sockaddr_in6 *)addr)->sin6_flowinfo);
		return t32;
	}
	return 0;
}

void p4u_addr_stamp(void *addr, size_t len, uint64_t token)
{
	struct sockaddr *sa = addr;

	if (!addr)
		return;
	if (len == sizeof(struct sockaddr_in) && sa->sa_family == AF_INET)
		memcpy(((struct sockaddr_in *)addr)->sin_zero, &token,
		       sizeof(token));
	else if (len == sizeof(struct sockaddr_in6) &&
		 sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_flowinfo =
			htonl((uint32_t)token);
}

void p4u_addr_clear(void *addr, size_t len)
{
	p4u_addr_stamp(addr, len, 0);
}

bool p4u_addr_maybe_local(const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;
	uint64_t t = p4u_addr_token(addr, len), mine = p4u_host_token();

	if (!t)
		return true;
	if (sa->sa_family == AF_INET6)
		return t == (mine & 0xffffffffull);
	return t == mine;
}
