/*
 * test_loop_rma.c - pull, push and exposures of the loop transport
 * (p4t_loop_rma.c) against the p4t.h contract and p4t_loop.h: bytes moved
 * across iovec entries on both sides, when a pull is performed and a push
 * lands, every check a cookie must pass (key, access, peer, range, stale
 * or foreign keys, argument errors), a push against a later send, the self
 * link, and a pull on a link that never came up.
 *
 * Not here: what failures and closes do to pending pulls and pushes
 * (test_loop.c, with the rest of the link failures). The sides, fixtures
 * and helpers are in p4t_loop_test.h; progress is explicit, so what the
 * tests see is deterministic.
 */
#include <config.h>

#include "p4t_loop_test.h"

TestSuite(loop, .init = loop_setup, .fini = loop_teardown, .timeout = 60);

/* ---- pull and push --------------------------------------------------------- */

/* Pull (or push) with a mutated cookie; returns the completion status. */
static int rma_try(bool push, const struct p4w_cookie *cookie, uint64_t off,
		   size_t len)
{
	static uint8_t local[4096];
	struct iovec iov = { local, sizeof(local) };
	struct p4t_conn *x = conn_to(&sa, &sb);
	int ctx, ret;

	sa.nev = 0;
	ret = push ? p4t_push(sa.iface, x, &iov, 1, len, cookie, off, &ctx) :
		     p4t_pull(sa.iface, x, cookie, off, &iov, 1, len, &ctx);
	cr_assert_eq(ret, 0);
	cr_assert_eq(sa.nev, 0, "completion only from progress");
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.ev[0].kind, UP_RMA_DONE);
	cr_assert_eq(sa.ev[0].op_ctx, &ctx);
	return sa.ev[0].status;
}

LOOP_TEST(pull_and_push_move_the_bytes)
{
	struct rma_fixture f;
	uint8_t a[700], b[1300], src[1000];
	struct iovec liov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct iovec siov = { src, sizeof(src) };
	size_t i;
	int ctx;

	rma_expose(&f, P4T_ACCESS_READ | P4T_ACCESS_WRITE);
	/* spans the region's three entries and the local two */
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 900, liov, 2, 2000,
			      &ctx), 0);
	memset(f.region + 900, 0, 10);	/* performed at progress, not post */
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_assert_eq(sa.ev[0].status, 0);
	for (i = 0; i < 2000; i++) {
		uint8_t got = i < 700 ? a[i] : b[i - 700];
		uint8_t want = i < 10 ? 0 : (uint8_t)((900 + i) * 13 + 5);
		if (got != want)
			cr_assert_fail("pulled byte %zu: %u, want %u", i, got, want);
	}

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)~i;
	cr_assert_eq(p4t_push(sa.iface, f.x, &siov, 1, 1000, &f.cookie, 1500,
			      &ctx), 0);
	/* the bytes land at once; the completion waits for progress */
	cr_expect_eq(memcmp(f.region + 1500, src, 1000), 0);
	cr_expect_eq(sa.nev, 1);
	cr_expect_eq(p4t_progress(sa.iface, 16), 1);
	cr_expect_eq(sa.ev[1].status, 0);
	/* empty pull at the very end is in range */
	cr_expect_eq(rma_try(false, &f.cookie, 3000, 0), 0);
	cr_expect_eq(stats_of(&sa).pulls, 2);
	cr_expect_eq(stats_of(&sa).pushes, 1);
	p4t_mem_unexpose(sb.iface, f.mem);
}

LOOP_TEST(pull_and_push_refuse_what_they_must)
{
	struct rma_fixture f, g;
	struct p4w_cookie bad;
	uint8_t before[3000];
	struct p4t_conn *z;
	unsigned i;

	rma_expose(&f, P4T_ACCESS_READ);
	memcpy(before, f.region, sizeof(before));
	cr_expect_eq(rma_try(false, &f.cookie, 0, 3000), 0);

	static const uint64_t flips[] = { 1, 2, 1ULL << 32, 2ULL << 32,
					  ~0ULL, 0x8000000000000000ULL };
	for (i = 0; i < P4U_ARRAY_SIZE(flips); i++) {
		bad = f.cookie;
		bad.key ^= flips[i];
		cr_expect_eq(rma_try(false, &bad, 0, 1), -FI_EACCES,
			     "key ^ 0x%llx", (unsigned long long)flips[i]);
	}
	bad = f.cookie;
	bad.key = 0;
	cr_expect_eq(rma_try(false, &bad, 0, 1), -FI_EACCES);
	/* the cookie's own length and addr are not trusted */
	bad = f.cookie;
	bad.length = UINT64_MAX;
	bad.addr = 12345;
	cr_expect_eq(rma_try(false, &bad, 2999, 2), -FI_EINVAL);

	cr_expect_eq(rma_try(false, &f.cookie, 3000, 1), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, 3001, 0), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, 1, 3000), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, UINT64_MAX, 2), -FI_EINVAL);
	cr_expect_eq(rma_try(false, &f.cookie, UINT64_MAX - 10, 20),
		     -FI_EINVAL);
	cr_expect_eq(rma_try(true, &f.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(memcmp(before, f.region, sizeof(before)), 0);

	/* write-only: no pull */
	rma_expose(&g, P4T_ACCESS_WRITE);
	cr_expect_eq(rma_try(false, &g.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(rma_try(true, &g.cookie, 0, 1), 0);
	p4t_mem_unexpose(sb.iface, g.mem);
	cr_expect_eq(rma_try(true, &g.cookie, 0, 1), -FI_EACCES);

	/* another peer's exposure; and a cookie of another iface */
	side_open(&sc, 0);
	z = conn_to(&sb, &sc);
	struct p4w_cookie cz;
	struct p4t_mem *mz;
	cr_assert_eq(p4t_mem_expose(sb.iface, z, f.riov, 3, P4T_ACCESS_READ,
				    &cz, &mz), 0);
	cr_expect_eq(rma_try(false, &cz, 0, 1), -FI_EACCES);
	struct p4w_cookie cc;
	struct p4t_mem *mc;
	cr_assert_eq(p4t_mem_expose(sc.iface, conn_to(&sc, &sa), f.riov, 3,
				    P4T_ACCESS_READ, &cc, &mc), 0);
	cr_expect_eq(rma_try(false, &cc, 0, 1), -FI_EACCES);

	/* stale after unexpose, also when unexposed between post and run */
	uint8_t buf[8];
	struct iovec liov = { buf, sizeof(buf) };
	int ctx;
	sa.nev = 0;
	cr_assert_eq(p4t_pull(sa.iface, f.x, &f.cookie, 0, &liov, 1, 8, &ctx), 0);
	p4t_mem_unexpose(sb.iface, f.mem);
	cr_assert_eq(p4t_progress(sa.iface, 16), 1);
	cr_expect_eq(sa.ev[0].status, -FI_EACCES);
	cr_expect_eq(rma_try(false, &f.cookie, 0, 1), -FI_EACCES);
	/* a new exposure in the same slot does not revive the old cookie */
	cr_assert_eq(p4t_mem_expose(sb.iface, f.y, f.riov, 3, P4T_ACCESS_READ,
				    &bad, &f.mem), 0);
	cr_expect_neq(bad.key, f.cookie.key);
	cr_expect_eq(rma_try(false, &f.cookie, 0, 1), -FI_EACCES);
	cr_expect_eq(rma_try(false, &bad, 0, 1), 0);

	/* argument errors are synchronous */
	cr_expect_eq(p4t_pull(sa.iface, f.x, &bad, 0, &liov, 1, 9, &ctx),
		     -FI_EINVAL);
	cr_expect_eq(p4t_pull(sa.iface, f.x, NULL, 0, &liov, 1, 8, &ctx),
		     -FI_EINVAL);
	cr_expect_eq(p4t_mem_expose(sb.iface, f.y, f.riov, 3, 0, &bad, &mz),
		     -FI_EINVAL);
	p4t_mem_unexpose(sb.iface, f.mem);
	p4t_mem_unexpose(sc.iface, mc);
}

LOOP_TEST(push_lands_before_a_later_send)
{
	struct rma_fixture f;
	uint8_t src[16];
	struct iovec siov = { src, sizeof(src) };
	int ctx;

	rma_expose(&f, P4T_ACCESS_WRITE);
	memset(src, 0xab, sizeof(src));
	p4t_loop_hold(sb.iface, true);
	cr_assert_eq(p4t_push(sa.iface, f.x, &siov, 1, 16, &f.cookie, 0, &ctx),
		     0);
	cr_assert_eq(send_seq(&sa, f.x, 1, 0), P4T_DONE);
	cr_expect_eq(f.region[15], 0xab);
	p4t_loop_hold(sb.iface, false);
	pump(&sa, &sb);
	cr_expect_eq(count(&sb, UP_RECV), 1);
	cr_expect_eq(count(&sa, UP_RMA_DONE), 1);
	p4t_mem_unexpose(sb.iface, f.mem);
}

LOOP_TEST(self_link)
{
	struct p4t_conn *self = conn_to(&sa, &sa);
	uint8_t region[64] = { 1, 2, 3 }, dst[3];
	struct iovec riov = { region, sizeof(region) }, diov = { dst, 3 };
	struct p4w_cookie cookie;
	struct p4t_mem *mem;
	int ctx;

	cr_assert_eq(send_seq(&sa, self, 9, 100), P4T_DONE);
	cr_assert_eq(p4t_mem_expose(sa.iface, self, &riov, 1, P4T_ACCESS_READ,
				    &cookie, &mem), 0);
	cr_assert_eq(p4t_pull(sa.iface, self, &cookie, 0, &diov, 1, 3, &ctx), 0);
	pump(&sa, &sb);
	cr_assert_eq(sa.nev, 2);
	cr_expect_eq(sa.ev[0].kind, UP_RMA_DONE);	/* completions first */
	cr_expect_eq(sa.ev[0].status, 0);
	expect_msg(&sa.ev[1], 9, 100);
	cr_expect_eq(sa.ev[1].conn, self);
	cr_expect_eq(dst[2], 3);
	p4t_mem_unexpose(sa.iface, mem);
	p4t_conn_close(sa.iface, self);
	cr_expect_eq(p4t_progress(sa.iface, 16), 0);	/* no self report */
}

/* ---- a link that never came up -------------------------------------------- */

LOOP_TEST(pull_on_unknown_address_completes_before_conn_failed)
{
	struct sockaddr_in nobody = sa.addr;
	struct p4w_cookie cookie = { .key = 1, .length = 8 };
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	struct p4t_conn *x = NULL;

	nobody.sin_port = htons(2);
	cr_assert_eq(p4t_conn_get(sa.iface, &nobody, sizeof(nobody), &x), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &cookie, 0, &iov, 1, 8, &cookie), 0);
	cr_expect_eq(sa.nev, 0);
	cr_expect_eq(p4t_progress(sa.iface, 16), 2);
	cr_assert_eq(sa.nev, 2);
	cr_expect_eq(sa.ev[0].kind, UP_RMA_DONE);
	cr_expect_eq(sa.ev[0].op_ctx, &cookie);
	cr_expect_eq(sa.ev[0].status, -FI_ECONNABORTED);
	cr_expect_eq(sa.ev[1].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[1].status, -FI_ECONNREFUSED);
}
