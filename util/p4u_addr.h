/*
 * p4u_addr.h - the host token in an endpoint's address.
 *
 * Endpoint addresses are struct sockaddr_in or sockaddr_in6. Processes
 * that can reach each other through shared memory (same kernel boot, same
 * network, PID and user namespaces) compute the same 64-bit host token;
 * it travels in the bytes of the sockaddr that do not identify the peer
 * (sin_zero, 8 bytes; sin6_flowinfo, its low 32 bits), so a peer's name
 * says whether shared memory is worth trying, and an address without a
 * token (resolved from a host name) says nothing. The token is a hint:
 * the shared-memory transport checks the peer itself before using it
 * (a connect in its network namespace, the peer's credentials).
 * Identity ignores it: p4u_addr_clear gives the form peers compare.
 */
#ifndef P4U_ADDR_H
#define P4U_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* This process's token (never 0); computed once, thread-safe. */
uint64_t p4u_host_token(void);
/* The token in addr (0: none, or not a sockaddr_in/in6 of its size). */
uint64_t p4u_addr_token(const void *addr, size_t len);
/* Put token into addr (as much of it as the family has room for). */
void p4u_addr_stamp(void *addr, size_t len, uint64_t token);
/* Clear the token: the form in which addresses identify peers. */
void p4u_addr_clear(void *addr, size_t len);
/*
 * Whether addr may be on this host as far as its token tells: it carries
 * none, or one equal to p4u_host_token() (its first 32 bits for IPv6).
 */
bool p4u_addr_maybe_local(const void *addr, size_t len);

#endif /* P4U_ADDR_H */
