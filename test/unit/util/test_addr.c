/*
 * test_addr.c - the host token in endpoint addresses (p4u_addr.h): where
 * it goes in each family, that identity ignores it, and what "maybe
 * local" answers for no token, ours and another host's.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "p4u_addr.h"

static struct sockaddr_in v4(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(4242) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static struct sockaddr_in6 v6(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(4242) };

	a.sin6_addr = in6addr_loopback;
	return a;
}

Test(addr, token_is_stable_and_never_zero)
{
	uint64_t t = p4u_host_token();

	cr_expect_neq(t, 0);
	cr_expect_neq(t & 0xffffffffull, 0, "IPv6 carries the low 32 bits");
	cr_expect_eq(p4u_host_token(), t);
}

Test(addr, v4_token_in_sin_zero_only)
{
	struct sockaddr_in a = v4(), plain = v4();

	cr_expect_eq(p4u_addr_token(&a, sizeof(a)), 0);
	p4u_addr_stamp(&a, sizeof(a), 0x1122334455667788ull);
	cr_expect_eq(p4u_addr_token(&a, sizeof(a)), 0x1122334455667788ull);
	cr_expect_eq(a.sin_port, plain.sin_port);
	cr_expect_eq(a.sin_addr.s_addr, plain.sin_addr.s_addr);
	p4u_addr_clear(&a, sizeof(a));
	cr_expect_eq(memcmp(&a, &plain, sizeof(a)), 0);
}

Test(addr, v6_token_in_flowinfo_32_bits)
{
	struct sockaddr_in6 a = v6(), plain = v6();

	p4u_addr_stamp(&a, sizeof(a), 0x1122334455667788ull);
	cr_expect_eq(p4u_addr_token(&a, sizeof(a)), 0x55667788ull);
	cr_expect_eq(memcmp(&a.sin6_addr, &plain.sin6_addr,
			    sizeof(a.sin6_addr)), 0);
	p4u_addr_clear(&a, sizeof(a));
	cr_expect_eq(memcmp(&a, &plain, sizeof(a)), 0);
}

Test(addr, other_sizes_and_families_carry_nothing)
{
	struct sockaddr_in a = v4();
	uint8_t junk[16] = { 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	p4u_addr_stamp(&a, sizeof(a), 7);
	cr_expect_eq(p4u_addr_token(&a, sizeof(a) - 1), 0);
	cr_expect_eq(p4u_addr_token(junk, sizeof(junk)), 0);
	cr_expect_eq(p4u_addr_token(NULL, 16), 0);
	p4u_addr_stamp(junk, sizeof(junk), 0);	/* not a sockaddr_in */
	cr_expect_eq(junk[8], 7, "left untouched");
}

Test(addr, maybe_local_for_no_token_and_ours_only)
{
	struct sockaddr_in a = v4();
	struct sockaddr_in6 b = v6();
	uint64_t mine = p4u_host_token();

	cr_expect(p4u_addr_maybe_local(&a, sizeof(a)), "no token: try");
	p4u_addr_stamp(&a, sizeof(a), mine);
	cr_expect(p4u_addr_maybe_local(&a, sizeof(a)));
	p4u_addr_stamp(&a, sizeof(a), mine ^ 0x100000000ull);
	cr_expect_not(p4u_addr_maybe_local(&a, sizeof(a)),
		      "another host's token");
	p4u_addr_stamp(&b, sizeof(b), mine);
	cr_expect(p4u_addr_maybe_local(&b, sizeof(b)));
	p4u_addr_stamp(&b, sizeof(b), mine ^ 1);
	cr_expect_not(p4u_addr_maybe_local(&b, sizeof(b)));
}
