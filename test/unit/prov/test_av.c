/*
 * test_av.c - address vectors (p4f_av.c) through the real libfabric:
 * open/close, synchronous and FI_EVENT inserts, FI_SYNC_ERR, insertsvc,
 * insertsym, remove, lookup, straddr, close while bound. The data-path
 * lookups (p4f_av_lookup_locked, p4f_av_reverse_lookup_locked) are reached
 * through the statically linked copy of the provider (p4f_getinfo ->
 * p4f_fabric_open -> fi_domain -> fi_av_open), since the plug-in does not
 * export them.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include <rdma/fi_collective.h>

#include "p4f_test.h"
#include "p4f.h"

struct avt_env {
	struct fi_info *info;		/* the whole list */
	struct fi_info *pick;		/* the entry the domain was opened on */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	bool is_static;
};

static struct avt_env env;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_eq *eq;

/* ---- helpers ----------------------------------------------------------- */

static void avt_close(void)
{
	if (ep)
		cr_expect_eq(fi_close(&ep->fid), 0);
	if (av)
		cr_expect_eq(fi_close(&av->fid), 0);
	if (eq)
		cr_expect_eq(fi_close(&eq->fid), 0);
	ep = NULL;
	av = NULL;
	eq = NULL;
	if (env.domain)
		cr_expect_eq(fi_close(&env.domain->fid), 0);
	if (env.fabric)
		cr_expect_eq(fi_close(&env.fabric->fid), 0);
	fi_freeinfo(env.info);
	memset(&env, 0, sizeof(env));
}

/*
 * A domain whose address format is fmt, through the plug-in or through the
 * static copy (is_static) so internal entry points can be called.
 */
static void avt_open(uint32_t fmt, bool is_static)
{
	struct fi_info *hints = test_hints(), *cur;
	int ret;

	avt_close();
	env.is_static = is_static;
	ret = is_static ?
		p4f_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info) :
		fi_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "getinfo: %s", fi_strerror(-ret));
	for (cur = env.info; cur; cur = cur->next)
		if (cur->addr_format == fmt)
			break;
	if (!cur)
		cr_skip_test("no interface with address format %u", fmt);
	env.pick = cur;
	ret = is_static ? p4f_fabric_open(cur->fabric_attr, &env.fabric, NULL) :
			  fi_fabric(cur->fabric_attr, &env.fabric, NULL);
	cr_assert_eq(ret, 0, "fabric: %s", fi_strerror(-ret));
	ret = fi_domain(env.fabric, cur, &env.domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
}

static void avt_init(void)
{
	avt_open(FI_SOCKADDR_IN, false);
}

static void avt_fini(void)
{
	avt_close();
}

static struct fid_av *avt_av_open(enum fi_av_type type, size_t count,
				  uint64_t flags)
{
	struct fi_av_attr attr = { .type = type, .count = count,
				   .flags = flags };
	struct fid_av *new_av;
	int ret;

	ret = fi_av_open(env.domain, &attr, &new_av, NULL);
	cr_assert_eq(ret, 0, "fi_av_open: %s", fi_strerror(-ret));
	return new_av;
}

static struct sockaddr_in avt_sin4(const char *ip, uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

static struct sockaddr_in6 avt_sin6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin6_family = AF_INET6;
	sin.sin6_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET6, ip, &sin.sin6_addr), 1);
	return sin;
}

/* Distinct, valid IPv4 peers: 10.a.b.c, port 1000 + i. */
static struct sockaddr_in avt_peer4(size_t i)
{
	struct sockaddr_in sin = avt_sin4("10.0.0.1", (uint16_t)(1000 + i % 50000));

	sin.sin_addr.s_addr = htonl(ntohl(sin.sin_addr.s_addr) + (uint32_t)i);
	return sin;
}

static void avt_expect_lookup4(struct fid_av *fav, fi_addr_t fi_addr,
			   const struct sockaddr_in *want)
{
	struct sockaddr_in got;
	size_t len = sizeof(got);
	int ret;

	memset(&got, 0xaa, sizeof(got));
	ret = fi_av_lookup(fav, fi_addr, &got, &len);
	cr_assert_eq(ret, 0, "lookup %lu: %s", (unsigned long)fi_addr,
		     fi_strerror(-ret));
	cr_assert_eq(len, sizeof(got));
	cr_assert_eq(got.sin_family, AF_INET);
	cr_assert_eq(got.sin_port, want->sin_port);
	cr_assert_eq(got.sin_addr.s_addr, want->sin_addr.s_addr);
}

/* An EQ on the environment's fabric. */
static struct fid_eq *avt_eq_open(void)
{
	struct fi_eq_attr attr = { .size = 64, .wait_obj = FI_WAIT_NONE };
	struct fid_eq *new_eq;
	int ret;

	ret = fi_eq_open(env.fabric, &attr, &new_eq, NULL);
	cr_assert_eq(ret, 0, "fi_eq_open: %s", fi_strerror(-ret));
	return new_eq;
}

TestSuite(av, .init = avt_init, .fini = avt_fini, .timeout = 30);

/* ---- open / close ------------------------------------------------------ */

Test(av, open_close_types_and_sizes)
{
	enum fi_av_type types[] = { FI_AV_MAP, FI_AV_TABLE };
	size_t counts[] = { 0, 1, 32, 1000, 1 << 16, SIZE_MAX };
	size_t i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < P4U_ARRAY_SIZE(counts); j++) {
			struct fid_av *fav = avt_av_open(types[i], counts[j], 0);

			cr_assert_eq(fav->fid.fclass, FI_CLASS_AV);
			cr_assert_eq(fi_close(&fav->fid), 0);
		}
	}
}

Test(av, unspec_type_is_reported)
{
	struct fi_av_attr attr = { .type = FI_AV_UNSPEC, .count = 8 };

	cr_assert_eq(fi_av_open(env.domain, &attr, &av, NULL), 0);
	cr_assert(attr.type == FI_AV_TABLE || attr.type == FI_AV_MAP);
}

Test(av, open_rejects_unsupported_attributes)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct fid_av *fav;

	attr.rx_ctx_bits = 2;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_ENOSYS);
	attr.rx_ctx_bits = -1;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_EINVAL);
	attr.rx_ctx_bits = 0;

	attr.name = "shared";
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_ENOSYS);
	attr.flags = FI_READ;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_ENOSYS);
	attr.name = NULL;	/* read-only needs a name */
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_EINVAL);

	attr.flags = 1ULL << 40;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_EBADFLAGS);
	attr.flags = FI_SYMMETRIC;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), 0);
	cr_assert_eq(fi_close(&fav->fid), 0);

	attr.flags = 0;
	attr.type = (enum fi_av_type)42;
	cr_assert_eq(fi_av_open(env.domain, &attr, &fav, NULL), -FI_EINVAL);
	cr_assert_eq(fi_av_open(env.domain, NULL, &fav, NULL), -FI_EINVAL);
}

/* ---- synchronous insert ------------------------------------------------ */

Test(av, table_insert_gives_sequential_ranks)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_peer4(1), avt_peer4(2) };
	fi_addr_t fi_addr[3] = { 7, 7, 7 };
	size_t i;

	av = avt_av_open(FI_AV_TABLE, 4, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, NULL), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(fi_addr[i], i);
		avt_expect_lookup4(av, fi_addr[i], &addrs[i]);
	}
	/* indexes accumulate across calls */
	addrs[0] = avt_peer4(3);
	cr_assert_eq(fi_av_insert(av, addrs, 1, fi_addr, 0, NULL), 1);
	cr_assert_eq(fi_addr[0], 3);
}

Test(av, map_insert_lookup_remove)
{
	struct sockaddr_in addrs[2] = { avt_peer4(10), avt_peer4(11) };
	fi_addr_t fi_addr[2];

	av = avt_av_open(FI_AV_MAP, 0, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 2, fi_addr, 0, NULL), 2);
	cr_assert_neq(fi_addr[0], FI_ADDR_NOTAVAIL);
	cr_assert_neq(fi_addr[1], FI_ADDR_NOTAVAIL);
	cr_assert_neq(fi_addr[0], fi_addr[1]);
	avt_expect_lookup4(av, fi_addr[0], &addrs[0]);
	avt_expect_lookup4(av, fi_addr[1], &addrs[1]);
	cr_assert_eq(fi_av_remove(av, &fi_addr[0], 1, 0), 0);
	avt_expect_lookup4(av, fi_addr[1], &addrs[1]);
}

Test(av, table_grows_past_count)
{
	enum { N = 1000 };	/* several chunks, from a count of 4 */
	struct sockaddr_in *addrs = calloc(N, sizeof(*addrs));
	fi_addr_t *fi_addr = calloc(N, sizeof(*fi_addr));
	size_t i;

	cr_assert(addrs && fi_addr);
	av = avt_av_open(FI_AV_TABLE, 4, 0);
	for (i = 0; i < N; i++)
		addrs[i] = avt_peer4(i);
	/* one at a time for the first half, one vector for the rest */
	for (i = 0; i < N / 2; i++)
		cr_assert_eq(fi_av_insert(av, &addrs[i], 1, &fi_addr[i], 0,
					  NULL), 1);
	cr_assert_eq(fi_av_insert(av, &addrs[N / 2], N - N / 2,
				  &fi_addr[N / 2], 0, NULL), N - N / 2);
	for (i = 0; i < N; i++) {
		cr_assert_eq(fi_addr[i], i);
		avt_expect_lookup4(av, i, &addrs[i]);
	}
	free(addrs);
	free(fi_addr);
}

Test(av, bad_addresses_are_refused)
{
	struct sockaddr_in bad[6];
	struct sockaddr_in6 v6 = avt_sin6("fd00::5", 4000);
	fi_addr_t fi_addr[6];
	size_t i;

	memset(&bad[0], 0, sizeof(bad[0]));	/* av_test's invalid address */
	bad[1] = avt_sin4("10.0.0.1", 0);		/* no port */
	bad[2] = avt_sin4("0.0.0.0", 4000);		/* wildcard */
	bad[3] = avt_sin4("224.0.0.1", 4000);	/* multicast */
	bad[4] = avt_sin4("255.255.255.255", 4000);	/* broadcast */
	bad[5] = avt_peer4(0);
	bad[5].sin_family = AF_UNIX;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	for (i = 0; i < 6; i++) {
		fi_addr[i] = 0;
		cr_assert_eq(fi_av_insert(av, &bad[i], 1, &fi_addr[i], 0, NULL),
			     0, "bad address %zu accepted", i);
		cr_assert_eq(fi_addr[i], FI_ADDR_NOTAVAIL);
	}
	/* an IPv6 address in an IPv4 domain */
	fi_addr[0] = 0;
	cr_assert_eq(fi_av_insert(av, &v6, 1, fi_addr, 0, NULL), 0);
	cr_assert_eq(fi_addr[0], FI_ADDR_NOTAVAIL);
	/* none of them took an index */
	bad[0] = avt_peer4(1);
	cr_assert_eq(fi_av_insert(av, &bad[0], 1, fi_addr, 0, NULL), 1);
	cr_assert_eq(fi_addr[0], 0);
}

Test(av, mixed_vector)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_sin4("10.0.0.2", 0),
					avt_peer4(2) };
	fi_addr_t fi_addr[3] = { 9, 9, 9 };

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, NULL), 2);
	cr_assert_eq(fi_addr[0], 0);
	cr_assert_eq(fi_addr[1], FI_ADDR_NOTAVAIL);
	cr_assert_eq(fi_addr[2], 1);	/* the failure took no index */
	avt_expect_lookup4(av, 1, &addrs[2]);
}

Test(av, sync_err_reports_each_address)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_sin4("10.0.0.2", 0),
					avt_peer4(2) };
	int errs[3] = { -1, 0, -1 };

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, NULL, FI_SYNC_ERR, errs), 2);
	cr_assert_eq(errs[0], 0);
	cr_assert_eq(errs[1], FI_EINVAL);
	cr_assert_eq(errs[2], 0);
	avt_expect_lookup4(av, 0, &addrs[0]);
	avt_expect_lookup4(av, 1, &addrs[2]);
	/* FI_SYNC_ERR needs its array */
	cr_assert_eq(fi_av_insert(av, addrs, 1, NULL, FI_SYNC_ERR, NULL),
		     -FI_EINVAL);
}

Test(av, insert_flags)
{
	struct sockaddr_in addr = avt_peer4(0);
	fi_addr_t fi_addr;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, FI_AV_USER_ID, NULL),
		     -FI_EBADFLAGS);
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, 1ULL << 40, NULL),
		     -FI_EBADFLAGS);
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, FI_MORE, NULL), 1);
	cr_assert_eq(fi_addr, 0);
	cr_assert_eq(fi_av_insert(av, NULL, 1, &fi_addr, 0, NULL), -FI_EINVAL);
}

Test(av, table_insert_without_fi_addr)
{
	struct sockaddr_in addrs[2] = { avt_peer4(0), avt_peer4(1) };

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 2, NULL, 0, NULL), 2);
	avt_expect_lookup4(av, 0, &addrs[0]);
	avt_expect_lookup4(av, 1, &addrs[1]);
}

Test(av, ipv6_domain)
{
	struct sockaddr_in6 addrs[2] = { avt_sin6("fd00::10", 5000),
					 avt_sin6("::1", 5001) };
	struct sockaddr_in v4 = avt_peer4(0);
	struct sockaddr_in6 got;
	fi_addr_t fi_addr[2];
	size_t len = sizeof(got);

	avt_open(FI_SOCKADDR_IN6, false);
	av = avt_av_open(FI_AV_TABLE, 0, 0);
	/* IPv6 addresses are packed at sizeof(struct sockaddr_in6) */
	cr_assert_eq(fi_av_insert(av, addrs, 2, fi_addr, 0, NULL), 2);
	cr_assert_eq(fi_av_lookup(av, fi_addr[1], &got, &len), 0);
	cr_assert_eq(len, sizeof(got));
	cr_assert_eq(got.sin6_family, AF_INET6);
	cr_assert_eq(got.sin6_port, htons(5001));
	cr_assert(!memcmp(&got.sin6_addr, &addrs[1].sin6_addr,
			  sizeof(got.sin6_addr)));
	cr_assert_eq(fi_av_insert(av, &v4, 1, fi_addr, 0, NULL), 0);
	cr_assert_eq(fi_addr[0], FI_ADDR_NOTAVAIL);
}

/* ---- remove / lookup / straddr ----------------------------------------- */

Test(av, remove_then_lookup_fails_and_index_is_reused)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_peer4(1), avt_peer4(2) };
	struct sockaddr_in again = avt_peer4(7), got;
	fi_addr_t fi_addr[3], one = 1, bogus[2] = { 0, 99 };
	size_t len = sizeof(got);

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, NULL), 3);
	cr_assert_eq(fi_av_remove(av, &one, 1, 0), 0);
	cr_assert_eq(fi_av_lookup(av, 1, &got, &len), -FI_EINVAL);
	avt_expect_lookup4(av, 0, &addrs[0]);
	avt_expect_lookup4(av, 2, &addrs[2]);
	/* removing it again, or an index never handed out, fails */
	cr_assert_eq(fi_av_remove(av, &one, 1, 0), -FI_EINVAL);
	/* all or nothing: index 0 survives a list with a bad entry */
	cr_assert_eq(fi_av_remove(av, bogus, 2, 0), -FI_EINVAL);
	avt_expect_lookup4(av, 0, &addrs[0]);
	cr_assert_eq(fi_av_remove(av, &one, 1, FI_MORE), -FI_EBADFLAGS);
	/* fi_av(3): the lowest unused index is taken next */
	cr_assert_eq(fi_av_insert(av, &again, 1, fi_addr, 0, NULL), 1);
	cr_assert_eq(fi_addr[0], 1);
	avt_expect_lookup4(av, 1, &again);
}

Test(av, lookup_length_semantics)
{
	struct sockaddr_in addr = avt_peer4(3);
	unsigned char buf[64];
	size_t len;
	fi_addr_t fi_addr;

	av = avt_av_open(FI_AV_MAP, 0, 0);
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, 0, NULL), 1);

	/* too small: truncated copy, full length reported */
	memset(buf, 0xee, sizeof(buf));
	len = 4;
	cr_assert_eq(fi_av_lookup(av, fi_addr, buf, &len), 0);
	cr_assert_eq(len, sizeof(struct sockaddr_in));
	cr_assert(!memcmp(buf, &addr, 4));
	cr_assert_eq(buf[4], 0xee);

	/* no buffer: only the length */
	len = 0;
	cr_assert_eq(fi_av_lookup(av, fi_addr, NULL, &len), 0);
	cr_assert_eq(len, sizeof(struct sockaddr_in));

	/* larger: exactly the address, nothing beyond */
	memset(buf, 0xee, sizeof(buf));
	len = sizeof(buf);
	cr_assert_eq(fi_av_lookup(av, fi_addr, buf, &len), 0);
	cr_assert_eq(len, sizeof(struct sockaddr_in));
	cr_assert(!memcmp(buf, &addr, sizeof(addr)));
	cr_assert_eq(buf[sizeof(addr)], 0xee);

	cr_assert_eq(fi_av_lookup(av, fi_addr, buf, NULL), -FI_EINVAL);
	len = sizeof(buf);
	cr_assert_eq(fi_av_lookup(av, FI_ADDR_NOTAVAIL, buf, &len), -FI_EINVAL);
}

Test(av, straddr_ipv4_and_ipv6)
{
	struct sockaddr_in a4 = avt_sin4("10.1.2.3", 4567);
	struct sockaddr_in6 a6 = avt_sin6("fd00::1", 99);
	char buf[128];
	size_t len = sizeof(buf);
	const char *want4 = "fi_sockaddr_in://10.1.2.3:4567";

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_straddr(av, &a4, buf, &len), buf);
	cr_assert_str_eq(buf, want4);
	cr_assert_eq(len, strlen(want4) + 1);

	len = sizeof(buf);
	cr_assert_eq(fi_av_straddr(av, &a6, buf, &len), buf);
	cr_assert_str_eq(buf, "fi_sockaddr_in6://[fd00::1]:99");

	/* truncated to the buffer, full size reported */
	len = 8;
	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(fi_av_straddr(av, &a4, buf, &len), buf);
	cr_assert_eq(len, strlen(want4) + 1);
	cr_assert_eq(buf[7], '\0');
	cr_assert(!strncmp(buf, want4, 7));
	cr_assert_eq(buf[8], 'x');
}

/* ---- insertsvc / insertsym ---------------------------------------------- */

Test(av, insertsvc)
{
	struct sockaddr_in want = avt_sin4("127.0.0.1", 4242);
	struct sockaddr_in want2 = avt_sin4("127.0.0.1", 4243);
	struct sockaddr_in want3 = avt_sin4("192.0.2.9", 5000);
	fi_addr_t fi_addr = 0;
	int err = 0;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insertsvc(av, "127.0.0.1", "4242", &fi_addr, 0,
				     NULL), 1);
	cr_assert_eq(fi_addr, 0);
	avt_expect_lookup4(av, 0, &want);
	cr_assert_eq(fi_av_insertsvc(av, "localhost", "4243", &fi_addr, 0,
				     NULL), 1);
	avt_expect_lookup4(av, fi_addr, &want2);
	/* an FI_ADDR_STR node comes without a service */
	cr_assert_eq(fi_av_insertsvc(av, "fi_sockaddr_in://192.0.2.9:5000",
				     NULL, &fi_addr, 0, NULL), 1);
	avt_expect_lookup4(av, fi_addr, &want3);
	/* unresolvable or portless: the address fails, the call does not */
	cr_assert_eq(fi_av_insertsvc(av, "no-such-host.invalid", "4242",
				     &fi_addr, FI_SYNC_ERR, &err), 0);
	cr_assert_neq(err, 0);
	cr_assert_eq(fi_addr, FI_ADDR_NOTAVAIL);
	cr_assert_eq(fi_av_insertsvc(av, "127.0.0.1", "0", &fi_addr, 0, NULL),
		     0);
	cr_assert_eq(fi_av_insertsvc(av, NULL, "4242", &fi_addr, 0, NULL),
		     -FI_EINVAL);
	cr_assert_eq(fi_av_insertsvc(av, "127.0.0.1", NULL, &fi_addr, 0, NULL),
		     -FI_EINVAL);
}

Test(av, insertsym_numeric)
{
	const char *want[] = { "10.1.1.1:5000", "10.1.1.1:5001",
			       "10.1.1.2:5000", "10.1.1.2:5001" };
	fi_addr_t fi_addr[4];
	size_t i;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insertsym(av, "10.1.1.1", 2, "5000", 2, fi_addr, 0,
				     NULL), 4);
	for (i = 0; i < 4; i++) {
		char ip[16];
		unsigned port;
		struct sockaddr_in sin;

		cr_assert_eq(sscanf(want[i], "%15[^:]:%u", ip, &port), 2);
		sin = avt_sin4(ip, (uint16_t)port);
		cr_assert_eq(fi_addr[i], i);
		avt_expect_lookup4(av, fi_addr[i], &sin);
	}
}

Test(av, insertsym_named_and_errors)
{
	struct sockaddr_in want = avt_sin4("127.0.0.1", 6000);
	fi_addr_t fi_addr[4];

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_insertsym(av, "localhost", 1, "6000", 2, fi_addr, 0,
				     NULL), 2);
	avt_expect_lookup4(av, fi_addr[0], &want);
	want.sin_port = htons(6001);
	avt_expect_lookup4(av, fi_addr[1], &want);

	/* several host names need a numeric suffix to count on */
	cr_assert_eq(fi_av_insertsym(av, "localhost", 2, "6000", 1, fi_addr, 0,
				     NULL), -FI_EINVAL);
	/* services must be numeric and stay below 65536 */
	cr_assert_eq(fi_av_insertsym(av, "10.0.0.1", 1, "http", 1, fi_addr, 0,
				     NULL), -FI_EINVAL);
	cr_assert_eq(fi_av_insertsym(av, "10.0.0.1", 1, "65535", 2, fi_addr, 0,
				     NULL), -FI_EINVAL);
	/* .254 is fine, .255 is broadcast, the third would wrap */
	cr_assert_eq(fi_av_insertsym(av, "255.255.255.254", 3, "80", 1,
				     fi_addr, FI_SYNC_ERR, (int[3]){ 0 }), 1);
	/* nothing to insert */
	cr_assert_eq(fi_av_insertsym(av, "10.0.0.1", 0, "80", 1, fi_addr, 0,
				     NULL), 0);
}

/* ---- binding ----------------------------------------------------------- */

Test(av, close_while_bound_is_busy)
{
	int ret;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	ret = fi_endpoint(env.domain, env.pick, &ep, NULL);
	cr_assert_eq(ret, 0, "fi_endpoint: %s", fi_strerror(-ret));
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_close(&av->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&ep->fid), 0);
	ep = NULL;
	cr_assert_eq(fi_close(&av->fid), 0);
	av = NULL;
}

Test(av, av_set_not_supported)
{
	struct fi_av_set_attr attr = { .count = 1 };
	struct fid_av_set *set;

	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_set(av, &attr, &set, NULL), -FI_ENOSYS);
}

Test(av, bind_checks)
{
	av = avt_av_open(FI_AV_TABLE, 0, 0);
	cr_assert_eq(fi_av_bind(av, NULL, 0), -FI_EINVAL);
	cr_assert_eq(fi_av_bind(av, &env.domain->fid, 0), -FI_EINVAL);
	eq = avt_eq_open();
	cr_assert_eq(fi_av_bind(av, &eq->fid, 1), -FI_EBADFLAGS);
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), -FI_EINVAL);
	/* the binding holds the EQ */
	cr_assert_eq(fi_close(&eq->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&av->fid), 0);
	av = NULL;
}

/* ---- FI_EVENT ---------------------------------------------------------- */

static void avt_expect_complete(struct fid_av *fav, void *context,
			       uint64_t count)
{
	struct fi_eq_entry entry;
	uint32_t event = 0;

	memset(&entry, 0, sizeof(entry));
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     sizeof(entry));
	cr_assert_eq(event, FI_AV_COMPLETE);
	cr_assert_eq(entry.fid, &fav->fid);
	cr_assert_eq(entry.context, context);
	cr_assert_eq(entry.data, count);
}

Test(av, async_insert_needs_an_eq)
{
	struct sockaddr_in addr = avt_peer4(0);
	fi_addr_t fi_addr;
	int errs[1];

	av = avt_av_open(FI_AV_TABLE, 0, FI_EVENT);
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, 0, NULL), -FI_ENOEQ);
	eq = avt_eq_open();
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	/* FI_SYNC_ERR is for synchronous inserts only */
	cr_assert_eq(fi_av_insert(av, &addr, 1, &fi_addr, FI_SYNC_ERR, errs),
		     -FI_EBADFLAGS);
}

Test(av, async_good_vector)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_peer4(1), avt_peer4(2) };
	fi_addr_t fi_addr[3] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL,
				 FI_ADDR_NOTAVAIL };
	struct fi_eq_entry entry;
	uint32_t event, ctx;

	av = avt_av_open(FI_AV_MAP, 0, FI_EVENT);
	eq = avt_eq_open();
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, &ctx), 0);
	avt_expect_complete(av, &ctx, 3);
	avt_expect_lookup4(av, fi_addr[2], &addrs[2]);
	/* zero addresses still complete */
	cr_assert_eq(fi_av_insert(av, addrs, 0, fi_addr, 0, &ctx), 0);
	avt_expect_complete(av, &ctx, 0);
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     -FI_EAGAIN);
}

Test(av, async_good_and_bad)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_sin4("10.0.0.9", 0),
					avt_peer4(2) };
	fi_addr_t fi_addr[3];
	struct fi_eq_err_entry err;
	struct fi_eq_entry entry;
	uint32_t event, ctx;

	av = avt_av_open(FI_AV_TABLE, 0, FI_EVENT);
	eq = avt_eq_open();
	cr_assert_eq(fi_av_bind(av, &eq->fid, 0), 0);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, &ctx), 0);
	/* the error entries come before the completion */
	cr_assert_eq(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
		     -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_assert_eq(err.fid, &av->fid);
	cr_assert_eq(err.context, &ctx);
	cr_assert_eq(err.data, 1);	/* the index of the failed address */
	cr_assert_eq(err.err, FI_EINVAL);
	avt_expect_complete(av, &ctx, 2);
	cr_assert_eq(fi_addr[0], 0);
	cr_assert_eq(fi_addr[1], FI_ADDR_NOTAVAIL);
	cr_assert_eq(fi_addr[2], 1);
}

/* ---- data-path lookups (static copy) ------------------------------------ */

Test(av, lookup_locked_and_reverse_lookup)
{
	struct sockaddr_in addrs[3] = { avt_peer4(0), avt_peer4(1), avt_peer4(2) };
	struct sockaddr_in other_port = avt_peer4(1), unknown = avt_peer4(50);
	struct p4f_domain *domain;
	const union p4f_sockaddr *sa;
	struct p4f_av *pav;
	fi_addr_t fi_addr[3], one = 1;

	avt_open(FI_SOCKADDR_IN, true);
	domain = p4f_domain_of(env.domain);
	av = avt_av_open(FI_AV_TABLE, 0, 0);
	pav = p4f_av_of(av);
	cr_assert_eq(p4f_av_domain(pav), domain);
	cr_assert_eq(fi_av_insert(av, addrs, 3, fi_addr, 0, NULL), 3);
	other_port.sin_port = htons(9);

	p4f_av_lock(pav);
	sa = p4f_av_lookup_locked(pav, 2);
	cr_assert_not_null(sa);
	cr_assert_eq(sa->sin.sin_addr.s_addr, addrs[2].sin_addr.s_addr);
	cr_assert_eq(sa->sin.sin_port, addrs[2].sin_port);
	cr_assert_null(p4f_av_lookup_locked(pav, 3));
	cr_assert_null(p4f_av_lookup_locked(pav, FI_ADDR_NOTAVAIL));
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
			(struct sockaddr *)&addrs[1]), 1);
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
			(struct sockaddr *)&other_port), FI_ADDR_NOTAVAIL);
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
			(struct sockaddr *)&unknown), FI_ADDR_NOTAVAIL);
	p4f_av_unlock(pav);

	cr_assert_eq(fi_av_remove(av, &one, 1, 0), 0);
	p4f_av_lock(pav);
	cr_assert_null(p4f_av_lookup_locked(pav, 1));
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
			(struct sockaddr *)&addrs[1]), FI_ADDR_NOTAVAIL);
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
			(struct sockaddr *)&addrs[0]), 0);
	p4f_av_unlock(pav);
}

Test(av, reverse_lookup_many_and_ipv6)
{
	enum { N = 600 };
	struct sockaddr_in6 a = avt_sin6("fd00::1:0", 7000), b;
	struct p4f_av *pav;
	fi_addr_t fi_addr;
	size_t i;

	avt_open(FI_SOCKADDR_IN6, true);
	av = avt_av_open(FI_AV_MAP, 2, 0);
	pav = p4f_av_of(av);
	for (i = 0; i < N; i++) {
		b = a;
		b.sin6_addr.s6_addr[15] = (uint8_t)i;
		b.sin6_addr.s6_addr[14] = (uint8_t)(i >> 8);
		cr_assert_eq(fi_av_insert(av, &b, 1, &fi_addr, 0, NULL), 1);
		cr_assert_eq(fi_addr, i);
	}
	p4f_av_lock(pav);
	for (i = 0; i < N; i++) {
		b = a;
		b.sin6_addr.s6_addr[15] = (uint8_t)i;
		b.sin6_addr.s6_addr[14] = (uint8_t)(i >> 8);
		b.sin6_flowinfo = 1234;	/* not part of the identity */
		cr_assert_eq(p4f_av_reverse_lookup_locked(pav,
				(struct sockaddr *)&b), i);
		cr_assert_not_null(p4f_av_lookup_locked(pav, i));
	}
	b.sin6_scope_id = 3;	/* a different scope is another peer */
	cr_assert_eq(p4f_av_reverse_lookup_locked(pav, (struct sockaddr *)&b),
		     FI_ADDR_NOTAVAIL);
	p4f_av_unlock(pav);
}
