/*
 * test_shm_rma.c - pull and push on the shared-memory transport, by
 * cross-memory attach and through the ring (forced with the test hook
 * or FI_PORTALS_SHM_CMA=0): data lands where it should and nowhere else,
 * and the owner's refusals (out of range, wrong key, missing access,
 * after unexpose) complete with -FI_EINVAL / -FI_EACCES, memory
 * untouched, on both paths.
 *
 * Not here: messages (test_shm.c), failures (test_shm_fail.c), a pull
 * read from both ends (test_shm_coop.c).
 */
#include <config.h>

#include <stdlib.h>

#define SHM_SUITE	shm_rma
#include "p4t_shm_test.h"

TestSuite(shm_rma, .init = shm_setup, .fini = shm_teardown, .timeout = 120);

#define TBUF	((size_t)1 << 20)

static uint8_t *tbuf;	/* sb's exposed memory */

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

/* Reopen both sides with cross-memory attach on or off, link them. */
static struct p4t_conn *rma_sides(bool cma, struct p4t_conn **y_p)
{
	if (!cma) {
		p4t_shm_set_cma(sa.iface, false);
		p4t_shm_set_cma(sb.iface, false);
	}
	tbuf = malloc(TBUF);
	cr_assert(tbuf);
	fill(tbuf, TBUF, 7);
	return link_up(&sa, &sb, y_p);
}

static int rma_wait(void *ctx)
{
	long i;

	PUMP_UNTIL(find_ctx(&sa, ctx) >= 0);
	i = find_ctx(&sa, ctx);
	return sa.ev[i].status;
}

static void rma_roundtrip(bool cma)
{
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo = { 0 }, loc[3];
	size_t len = 700000, off = 100, plen = 300000, poff = 5000;
	uint8_t *lbuf = malloc(len), *ref = malloc(TBUF);
	struct p4t_shm_stats st, a0, b0;

	cr_assert(lbuf && ref);
	x = rma_sides(cma, &y);
	a0 = stats_of(&sa);	/* the handshake's probes read 8 bytes */
	b0 = stats_of(&sb);
	expo.iov_base = tbuf;
	expo.iov_len = TBUF;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1,
				    P4T_ACCESS_READ | P4T_ACCESS_WRITE, &ck,
				    &mem), 0);
	/* pull into three pieces */
	memset(lbuf, 0xee, len);
	loc[0].iov_base = lbuf;
	loc[0].iov_len = 1000;
	loc[1].iov_base = lbuf + 1000;
	loc[1].iov_len = 0;
	loc[2].iov_base = lbuf + 1000;
	loc[2].iov_len = len - 1000;
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, off, loc, 3, len, lbuf), 0);
	cr_assert_eq(rma_wait(lbuf), 0);
	cr_expect_eq(memcmp(lbuf, tbuf + off, len), 0, "pulled bytes differ");
	/* push from two pieces; nothing outside the range moves */
	fill(lbuf, plen, 99);
	memcpy(ref, tbuf, TBUF);
	memcpy(ref + poff, lbuf, plen);
	loc[0].iov_len = 77;
	loc[2].iov_base = lbuf + 77;
	loc[2].iov_len = plen - 77;
	cr_assert_eq(p4t_push(sa.iface, x, loc, 3, plen, &ck, poff, ref), 0);
	cr_assert_eq(rma_wait(ref), 0);
	cr_expect_eq(memcmp(tbuf, ref, TBUF), 0, "pushed bytes differ");
	st = stats_of(&sa);
	if (cma) {
		/* the pull from both ends, each byte once; the push read by
		 * the owner */
		cr_expect_eq(st.cma_bytes - a0.cma_bytes + st.ring_rma_bytes,
			     len);
		cr_expect_gt(st.cma_bytes, a0.cma_bytes);
		cr_expect_eq(stats_of(&sb).cma_bytes - b0.cma_bytes, plen);
	} else {
		cr_expect_eq(st.cma_bytes + stats_of(&sb).cma_bytes, 0);
		cr_expect_geq(st.ring_rma_bytes, len);
		cr_expect_geq(stats_of(&sb).ring_rma_bytes, plen);
	}
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	p4t_mem_unexpose(sb.iface, mem);
	free(lbuf);
	free(ref);
	free(tbuf);
}

SHM_TEST(pull_and_push_by_cross_memory_attach)
{
	rma_roundtrip(true);
}

SHM_TEST(pull_and_push_through_the_ring_when_forced)
{
	rma_roundtrip(false);
}

/*
 * Progress sa, and other unless NULL, until sa has the completion of
 * op_ctx (a pull or push named what), checking that no round reads more
 * than P4T_SHM_CMA_STEP into reader's memory; the count of rounds that
 * read.
 */
static int steps_until_done(struct side *reader, struct side *other,
			    void *op_ctx, const char *what)
{
	uint64_t before, moved, calls = 0;
	int steps = 0;

	while (find_ctx(&sa, op_ctx) < 0) {
		before = stats_of(reader).cma_bytes;
		if (other)
			(void)p4t_progress(other->iface, 64);
		(void)p4t_progress(sa.iface, 64);
		moved = stats_of(reader).cma_bytes - before;
		cr_assert_leq(moved, P4T_SHM_CMA_STEP,
			      "one progress call read %llu bytes",
			      (unsigned long long)moved);
		steps += moved > 0;
		cr_assert_lt(++calls, 10000000, "the %s never completed",
			     what);
	}
	return steps;
}

/*
 * A pull of many steps: no progress call of the puller reads more than
 * P4T_SHM_CMA_STEP (a 5 MiB copy in one call holds the worker and every
 * other link for milliseconds), and the bytes still arrive whole, into
 * pieces whose edges fall inside steps. The owner progresses only until
 * it granted the pull (its stream through the ring then waits), so
 * cross-memory attach reads all but the ring's first chunks.
 */
SHM_TEST(a_large_pull_is_read_a_step_per_progress_call)
{
	const size_t big = 5 * ((size_t)1 << 20) + 3, off = 11;
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo, loc[2];
	uint8_t *src = malloc(big + off), *dst = malloc(big);
	int steps;

	cr_assert(src && dst);
	x = rma_sides(true, &y);
	fill(src, big + off, 3);
	memset(dst, 0, big);
	expo.iov_base = src;
	expo.iov_len = big + off;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_READ,
				    &ck, &mem), 0);
	loc[0].iov_base = dst;
	loc[0].iov_len = P4T_SHM_CMA_STEP + 5;
	loc[1].iov_base = dst + loc[0].iov_len;
	loc[1].iov_len = big - loc[0].iov_len;
	/* a pause of the loaded machine must not lift the cap here */
	p4t_shm_set_starved_ns(sa.iface, UINT64_MAX);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, off, loc, 2, big, dst), 0);
	(void)p4t_progress(sb.iface, 64);	/* the grant */
	steps = steps_until_done(&sa, NULL, dst, "pull");
	cr_expect_eq(sa.ev[find_ctx(&sa, dst)].status, 0);
	cr_expect_geq(steps, (int)((big - P4T_SHM_RING) / P4T_SHM_CMA_STEP));
	cr_expect_geq(stats_of(&sa).cma_bytes, big - P4T_SHM_RING);
	cr_expect_eq(memcmp(dst, src + off, big), 0, "pulled bytes differ");
	p4t_mem_unexpose(sb.iface, mem);
	free(src);
	free(dst);
	free(tbuf);
}

/*
 * The owner reads a large push a step per progress call too, and the
 * bytes land whole; unexposing while it reads refuses the rest: the
 * pusher gets -FI_EACCES, and nothing past what was read changes.
 */
SHM_TEST(a_large_push_is_read_a_step_per_progress_call)
{
	const size_t big = 5 * ((size_t)1 << 20) + 7, off = 5;
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo, loc;
	uint8_t *src = malloc(big), *dst = malloc(big + off), *ref;
	uint64_t calls = 0, tag1, tag2;
	int steps, i;

	cr_assert(src && dst);
	x = rma_sides(true, &y);
	fill(src, big, 21);
	memset(dst, 0x5a, big + off);
	expo.iov_base = dst;
	expo.iov_len = big + off;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_WRITE,
				    &ck, &mem), 0);
	loc.iov_base = src;
	loc.iov_len = big;
	p4t_shm_set_starved_ns(sb.iface, UINT64_MAX);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, big, &ck, off, &tag1), 0);
	steps = steps_until_done(&sb, &sb, &tag1, "push");
	cr_expect_eq(sa.ev[find_ctx(&sa, &tag1)].status, 0);
	cr_expect_geq(steps, (int)(big / P4T_SHM_CMA_STEP));
	cr_expect_eq(memcmp(dst + off, src, big), 0, "pushed bytes differ");
	for (i = 0; i < (int)off; i++)
		cr_expect_eq(dst[i], 0x5a);

	/* again, and unexpose after the first step */
	ref = malloc(big + off);
	cr_assert(ref);
	fill(src, big, 77);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, big, &ck, off, &tag2), 0);
	do {
		(void)p4t_progress(sa.iface, 64);
		(void)p4t_progress(sb.iface, 64);
		cr_assert_lt(++calls, 10000000, "the push was never read");
	} while (stats_of(&sb).cma_bytes < 2 * big - big / 2 &&
		 find_ctx(&sa, &tag2) < 0);
	memcpy(ref, dst, big + off);
	p4t_mem_unexpose(sb.iface, mem);
	PUMP_UNTIL(find_ctx(&sa, &tag2) >= 0);
	cr_expect_eq(sa.ev[find_ctx(&sa, &tag2)].status, -FI_EACCES);
	cr_expect_eq(memcmp(dst, ref, big + off), 0,
		     "bytes changed after the exposure went");
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED),
		     0);
	free(ref);
	free(src);
	free(dst);
	free(tbuf);
}

/* FI_PORTALS_SHM_CMA=0 at open: the ring, as with the hook. */
SHM_TEST(env_turns_cross_memory_attach_off)
{
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo;
	uint8_t got[5000];
	struct iovec loc = { got, sizeof(got) };

	xport_teardown();
	setenv("FI_PORTALS_SHM_CMA", "0", 1);
	shm_setup();
	unsetenv("FI_PORTALS_SHM_CMA");
	x = rma_sides(true, &y);
	expo.iov_base = tbuf;
	expo.iov_len = TBUF;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_READ,
				    &ck, &mem), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 10, &loc, 1, sizeof(got),
			      got), 0);
	cr_assert_eq(rma_wait(got), 0);
	cr_expect_eq(memcmp(got, tbuf + 10, sizeof(got)), 0);
	cr_expect_eq(stats_of(&sa).cma_bytes, 0);
	cr_expect_geq(stats_of(&sa).ring_rma_bytes, sizeof(got));
	p4t_mem_unexpose(sb.iface, mem);
	free(tbuf);
}

/*
 * Every refusal completes with its error, and neither the exposed
 * memory nor the puller's buffer changes.
 */
static void rma_refusals(bool cma)
{
	struct p4t_conn *x, *y;
	struct p4t_mem *rw, *ro, *wo, *gone;
	struct p4w_cookie crw, cro, cwo, cgone, bad;
	struct iovec expo, loc;
	uint8_t *ref = malloc(TBUF), buf[4096], keep[4096];
	int tag[16];

	cr_assert(ref);
	x = rma_sides(cma, &y);
	memcpy(ref, tbuf, TBUF);
	expo.iov_base = tbuf;
	expo.iov_len = TBUF / 2;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1,
				    P4T_ACCESS_READ | P4T_ACCESS_WRITE, &crw,
				    &rw), 0);
	expo.iov_base = tbuf + TBUF / 2;
	expo.iov_len = 65536;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_READ,
				    &cro, &ro), 0);
	expo.iov_base = tbuf + TBUF / 2 + 65536;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_WRITE,
				    &cwo, &wo), 0);
	expo.iov_base = tbuf + TBUF / 2 + 2 * 65536;
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1,
				    P4T_ACCESS_READ | P4T_ACCESS_WRITE,
				    &cgone, &gone), 0);
	p4t_mem_unexpose(sb.iface, gone);
	fill(buf, sizeof(buf), 200);
	memcpy(keep, buf, sizeof(buf));
	loc.iov_base = buf;
	loc.iov_len = sizeof(buf);

	/* out of the cookie's range: refused here, no traffic */
	cr_assert_eq(p4t_pull(sa.iface, x, &crw, TBUF / 2 - 100, &loc, 1,
			      sizeof(buf), &tag[0]), 0);
	cr_expect_eq(rma_wait(&tag[0]), -FI_EINVAL);
	/* a cookie claiming more than was exposed: the owner refuses */
	bad = crw;
	bad.length = TBUF;
	cr_assert_eq(p4t_pull(sa.iface, x, &bad, TBUF / 2 - 100, &loc, 1,
			      sizeof(buf), &tag[1]), 0);
	cr_expect_eq(rma_wait(&tag[1]), -FI_EINVAL);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, sizeof(buf), &bad,
			      TBUF / 2 - 100, &tag[2]), 0);
	cr_expect_eq(rma_wait(&tag[2]), -FI_EINVAL);
	/* a wrong key */
	bad = crw;
	bad.key ^= 0x10001;
	cr_assert_eq(p4t_pull(sa.iface, x, &bad, 0, &loc, 1, sizeof(buf),
			      &tag[3]), 0);
	cr_expect_eq(rma_wait(&tag[3]), -FI_EACCES);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, sizeof(buf), &bad, 0,
			      &tag[4]), 0);
	cr_expect_eq(rma_wait(&tag[4]), -FI_EACCES);
	/* missing access: push into read-only, pull from write-only */
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, sizeof(buf), &cro, 0,
			      &tag[5]), 0);
	cr_expect_eq(rma_wait(&tag[5]), -FI_EACCES);
	cr_assert_eq(p4t_pull(sa.iface, x, &cwo, 0, &loc, 1, sizeof(buf),
			      &tag[6]), 0);
	cr_expect_eq(rma_wait(&tag[6]), -FI_EACCES);
	/* after unexpose */
	cr_assert_eq(p4t_pull(sa.iface, x, &cgone, 0, &loc, 1, sizeof(buf),
			      &tag[7]), 0);
	cr_expect_eq(rma_wait(&tag[7]), -FI_EACCES);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, sizeof(buf), &cgone, 0,
			      &tag[8]), 0);
	cr_expect_eq(rma_wait(&tag[8]), -FI_EACCES);

	cr_expect_eq(memcmp(tbuf, ref, TBUF), 0, "exposed memory changed");
	cr_expect_eq(memcmp(buf, keep, sizeof(buf)), 0, "local buffer changed");
	cr_expect_geq(stats_of(&sb).rma_refused, 7);
	/* the link is fine: a good pull still works */
	cr_assert_eq(p4t_pull(sa.iface, x, &cro, 8, &loc, 1, sizeof(buf),
			      &tag[9]), 0);
	cr_expect_eq(rma_wait(&tag[9]), 0);
	cr_expect_eq(memcmp(buf, tbuf + TBUF / 2 + 8, sizeof(buf)), 0);
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED),
		     0);
	p4t_mem_unexpose(sb.iface, rw);
	p4t_mem_unexpose(sb.iface, ro);
	p4t_mem_unexpose(sb.iface, wo);
	free(ref);
	free(tbuf);
}

SHM_TEST(refusals_leave_memory_untouched_cma)
{
	rma_refusals(true);
}

SHM_TEST(refusals_leave_memory_untouched_ring)
{
	rma_refusals(false);
}
