/*
 * test_shm_coop.c - a pull read from both ends on the shared-memory
 * transport: the owner streams it through the ring from the front while
 * it progresses, the puller reads it by cross-memory attach from the
 * back. Each byte is copied once; several pulls at once all land whole;
 * the puller reads small steps while the owner streams, full ones once
 * it is silent; chunks that come after the pull is over are dropped and
 * never reach a later pull; an exposure taken back before the two ends
 * meet fails the pull.
 *
 * Not here: the owner that stops progressing after its grant
 * (test_shm_rma.c, a_large_pull_is_read_a_step_per_progress_call).
 */
#include <config.h>

#include <stdlib.h>
#include <unistd.h>

#define SHM_SUITE	shm_coop
#include "p4t_shm_test.h"

TestSuite(shm_coop, .init = shm_setup, .fini = shm_teardown, .timeout = 120);

#define BIG	(5 * ((size_t)1 << 20) + 3)
#define MID	((size_t)1 << 20)

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

/* sb exposes len bytes of a fresh buffer filled with seed, for reading. */
static uint8_t *exposed(struct p4t_conn *y, size_t len, uint8_t seed,
			struct p4w_cookie *ck, struct p4t_mem **mem)
{
	uint8_t *src = malloc(len);
	struct iovec expo = { src, len };

	cr_assert(src);
	fill(src, len, seed);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_READ,
				    ck, mem), 0);
	return src;
}

static int pull_wait(void *ctx)
{
	PUMP_UNTIL(find_ctx(&sa, ctx) >= 0);
	return sa.ev[find_ctx(&sa, ctx)].status;
}

/* Once the link is quiet the owner owes nothing (its streams ended) and
 * no link failed; then mem goes and both buffers are freed. */
static void quiet_and_done(struct p4t_mem *mem, uint8_t *src, uint8_t *dst)
{
	pump_quiet(50);
	cr_expect(!p4t_owes(sb.iface), "a stream never ended");
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED),
		     0);
	if (mem)
		p4t_mem_unexpose(sb.iface, mem);
	free(src);
	free(dst);
}

/* A pull of BIG bytes from sb's fresh exposure, granted: sb progressed
 * once (its grant and a ring of chunks are written), sa not yet. */
struct big_pull {
	struct p4t_mem *mem;
	uint8_t *src, *dst;
};

static void big_pull_granted(struct big_pull *p, uint8_t seed)
{
	struct p4t_conn *x, *y;
	struct p4w_cookie ck;
	struct iovec loc;

	p->dst = malloc(BIG);
	cr_assert(p->dst);
	x = link_up(&sa, &sb, &y);
	p->src = exposed(y, BIG, seed, &ck, &p->mem);
	loc.iov_base = p->dst;
	loc.iov_len = BIG;
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &loc, 1, BIG, p->dst), 0);
	(void)p4t_progress(sb.iface, 64);
}

/* Both sides progress: both ends copy, each byte once, and the owner's
 * stream ends (nothing owed once the link is quiet). */
SHM_TEST(a_pull_is_read_from_both_ends_each_byte_once)
{
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	uint8_t *src, *dst = malloc(BIG);
	struct iovec loc[2];
	struct p4t_shm_stats st, st0;

	cr_assert(dst);
	x = link_up(&sa, &sb, &y);
	src = exposed(y, BIG + 9, 41, &ck, &mem);
	memset(dst, 0, BIG);
	loc[0].iov_base = dst;
	loc[0].iov_len = 100000;
	loc[1].iov_base = dst + 100000;
	loc[1].iov_len = BIG - 100000;
	st0 = stats_of(&sa);	/* the handshake's probe read 8 bytes */
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 9, loc, 2, BIG, dst), 0);
	cr_expect_eq(pull_wait(dst), 0);
	cr_expect_eq(memcmp(dst, src + 9, BIG), 0, "pulled bytes differ");
	st = stats_of(&sa);
	st.cma_bytes -= st0.cma_bytes;
	st.ring_rma_bytes -= st0.ring_rma_bytes;
	cr_expect_gt(st.cma_bytes, 0, "nothing read by cross-memory attach");
	cr_expect_gt(st.ring_rma_bytes, 0, "nothing came through the ring");
	cr_expect_eq(st.cma_bytes + st.ring_rma_bytes, BIG,
		     "%llu + %llu bytes copied for %zu",
		     (unsigned long long)st.cma_bytes,
		     (unsigned long long)st.ring_rma_bytes, BIG);
	cr_expect_eq(stats_of(&sb).coop_streams, 1);
	quiet_and_done(mem, src, dst);
}

/*
 * Eight pulls at once, from pieces of one exposure into one buffer: the
 * owner streams one at a time and the puller reads the others from their
 * ends; every one completes once, whole.
 */
SHM_TEST(pulls_at_once_all_land_whole)
{
	enum { NPULL = 8 };
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	uint8_t *src, *dst = malloc(NPULL * MID);
	struct iovec loc;
	uint64_t before;
	int i;

	cr_assert(dst);
	x = link_up(&sa, &sb, &y);
	src = exposed(y, NPULL * MID, 5, &ck, &mem);
	memset(dst, 0, NPULL * MID);
	before = stats_of(&sa).cma_bytes + stats_of(&sa).ring_rma_bytes;
	for (i = 0; i < NPULL; i++) {
		loc.iov_base = dst + (size_t)i * MID;
		loc.iov_len = MID;
		cr_assert_eq(p4t_pull(sa.iface, x, &ck, (size_t)i * MID, &loc,
				      1, MID, loc.iov_base), 0);
	}
	for (i = 0; i < NPULL; i++)
		cr_expect_eq(pull_wait(dst + (size_t)i * MID), 0);
	pump_quiet(50);		/* no completion comes twice */
	cr_expect_eq(count(&sa, UP_RMA_DONE), NPULL, "%zu completions",
		     count(&sa, UP_RMA_DONE));
	cr_expect_eq(memcmp(dst, src, NPULL * MID), 0, "pulled bytes differ");
	cr_expect_eq(stats_of(&sa).cma_bytes + stats_of(&sa).ring_rma_bytes -
		     before, NPULL * MID);
	cr_expect_eq(stats_of(&sb).coop_streams, NPULL);
	quiet_and_done(mem, src, dst);
}

/*
 * The owner stops after its grant, so the puller finishes alone while
 * the stream still has chunks to send. When the owner goes on, it sends
 * them before it reads PULL_STOP: they are dropped, and a pull made
 * meanwhile, into the same buffer from other bytes, gets only its own.
 */
SHM_TEST(late_chunks_of_a_finished_pull_are_dropped)
{
	struct p4t_conn *x, *y;
	struct p4t_mem *m1, *m2;
	struct p4w_cookie c1, c2;
	uint8_t *s1, *s2, *dst = malloc(MID);
	struct iovec loc = { dst, MID };
	uint64_t calls = 0;

	cr_assert(dst);
	x = link_up(&sa, &sb, &y);
	s1 = exposed(y, MID, 1, &c1, &m1);
	s2 = exposed(y, MID, 2, &c2, &m2);
	cr_assert_eq(p4t_pull(sa.iface, x, &c1, 0, &loc, 1, MID, s1), 0);
	(void)p4t_progress(sb.iface, 64);	/* the grant, a ring of chunks */
	while (find_ctx(&sa, s1) < 0) {
		(void)p4t_progress(sa.iface, 64);
		cr_assert_lt(++calls, 1000000, "the pull never completed");
	}
	cr_expect_eq(sa.ev[find_ctx(&sa, s1)].status, 0);
	cr_expect_eq(memcmp(dst, s1, MID), 0, "first pull differs");
	cr_expect_eq(stats_of(&sa).ring_rma_dropped, 0);

	cr_assert_eq(p4t_pull(sa.iface, x, &c2, 0, &loc, 1, MID, s2), 0);
	cr_expect_eq(pull_wait(s2), 0);
	cr_expect_eq(memcmp(dst, s2, MID), 0, "second pull differs");
	cr_expect_gt(stats_of(&sa).ring_rma_dropped, 0,
		     "no late chunk: the test did not test");
	p4t_mem_unexpose(sb.iface, m1);
	free(s1);
	quiet_and_done(m2, s2, dst);
}

/*
 * Just after a grant, or a chunk, the puller reads P4T_SHM_COOP_STEP a
 * call by cross-memory attach, leaving the front to the owner's stream
 * (read whole at once, a 256 KiB pull took longer than by cross-memory
 * attach alone); once the owner is silent for P4T_SHM_COOP_PATIENCE
 * calls, a full P4T_SHM_CMA_STEP.
 */
SHM_TEST(cross_memory_reads_leave_the_front_to_a_streaming_owner)
{
	struct big_pull p;
	uint64_t before, moved, most = 0;
	int calls;

	big_pull_granted(&p, 4);
	/* pauses of a loaded machine must not lift the cap */
	p4t_shm_set_starved_ns(sa.iface, UINT64_MAX);
	(void)p4t_progress(sa.iface, 64);	/* read: the grant, the chunks */
	cr_assert_gt(stats_of(&sa).ring_rma_bytes, 0);
	for (calls = 0; find_ctx(&sa, p.dst) < 0; calls++) {
		cr_assert_lt(calls, 100000, "the pull never completed");
		before = stats_of(&sa).cma_bytes;
		(void)p4t_progress(sa.iface, 64);
		moved = stats_of(&sa).cma_bytes - before;
		if (calls < P4T_SHM_COOP_PATIENCE)
			cr_assert_leq(moved, P4T_SHM_COOP_STEP,
				      "call %d after the chunks read %llu", calls,
				      (unsigned long long)moved);
		most = moved > most ? moved : most;
	}
	cr_expect_eq(most, P4T_SHM_CMA_STEP, "the silent owner's pull was "
		     "read %llu bytes a call at most",
		     (unsigned long long)most);
	cr_expect_eq(sa.ev[find_ctx(&sa, p.dst)].status, 0);
	cr_expect_eq(memcmp(p.dst, p.src, BIG), 0, "pulled bytes differ");
	quiet_and_done(p.mem, p.src, p.dst);
}

/*
 * A puller kept from progressing for P4T_SHM_CMA_STARVED_NS (more
 * processes than cores: it waits for the scheduler while its sender
 * spins through its time slice) reads up to P4T_SHM_CMA_STARVED_STEP in
 * its next call, not a step: after a pause before each call, what the
 * ring did not bring of the 5 MiB pull takes two calls, not ten (at one
 * step per scheduler round, a 16 MiB message of an oversubscribed MPI
 * job took hundreds of milliseconds).
 */
SHM_TEST(a_puller_kept_from_progressing_reads_more_per_call)
{
	struct big_pull p;
	uint64_t before, moved;
	int calls;

	big_pull_granted(&p, 6);
	(void)p4t_progress(sa.iface, 64);	/* the grant, the chunks */
	for (calls = 0; find_ctx(&sa, p.dst) < 0; calls++) {
		cr_assert_lt(calls, 2, "still not over after %d calls", calls);
		usleep(3 * P4T_SHM_CMA_STARVED_NS / 1000);
		before = stats_of(&sa).cma_bytes;
		(void)p4t_progress(sa.iface, 64);
		moved = stats_of(&sa).cma_bytes - before;
		if (!calls)
			cr_assert_gt(moved, P4T_SHM_CMA_STEP, "after a pause, "
				     "a call read %llu bytes",
				     (unsigned long long)moved);
	}
	cr_expect_geq(stats_of(&sa).cma_starved, 1);
	cr_expect_eq(sa.ev[find_ctx(&sa, p.dst)].status, 0);
	cr_expect_eq(memcmp(p.dst, p.src, BIG), 0, "pulled bytes differ");
	quiet_and_done(p.mem, p.src, p.dst);
}

/* The exposure goes after the grant, before the ends meet: the pull
 * fails with -FI_EACCES, and the link stays up. */
SHM_TEST(unexposed_before_the_ends_meet_fails_the_pull)
{
	struct big_pull p;

	big_pull_granted(&p, 3);
	p4t_mem_unexpose(sb.iface, p.mem);
	cr_expect_eq(pull_wait(p.dst), -FI_EACCES);
	quiet_and_done(NULL, p.src, p.dst);
}
