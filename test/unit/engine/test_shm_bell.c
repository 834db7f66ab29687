/*
 * test_shm_bell.c - the shared-memory transport's doorbells
 * (p4t_shm_bell.c): with more links than P4T_SHM_BELL_LINKS a progress
 * call reads only the rings whose bell rang, and those it must read (new
 * links, records a call left behind, links that brought records lately).
 * Here the receiver mostly reads by its bells alone (p4t_shm_set_bells:
 * from the first link, no full reads, no link read for having brought
 * records), so a bell that is not rung, or cleared and not looked at,
 * leaves a message unread and the test times out: bursts larger than a
 * call's budget from two peers, both ways; two producer threads against
 * one consumer; a flood that must not starve the other link. An active
 * link costs no bell; idle links cost no ring read; a peer that does not
 * ring is still read by the periodic full read, and only by it.
 *
 * Not here: the handshake's refusal of bad doorbells
 * (test_shm_hostile.c); doorbell pages unmapped when a peer dies
 * (test_shm_fail.c).
 */
#include <config.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#define SHM_SUITE	shm_bell
#include "p4t_shm_test.h"

/* sc, the receiver, reads by its bells only from its first link on */
static void bell_setup(void)
{
	shm_setup();
	shm_side_open(&sc, 0);
	p4t_shm_set_bells(sc.iface, 0, 0, 0, true);
}

TestSuite(shm_bell, .init = bell_setup, .fini = shm_teardown, .timeout = 120);

/* Progress s until its links that brought records are no longer read
 * directly (P4T_SHM_BELL_HOT calls without records). */
static void cool(struct side *s)
{
	int i;

	for (i = 0; i <= P4T_SHM_BELL_HOT; i++)
		(void)p4t_progress(s->iface, 64);
}

/* seq's payload length: mostly small, now and then over a record */
static size_t burst_len(uint32_t seq)
{
	return seq % 97 == 5 ? 100000 + seq : (seq * 31) % 1500;
}

/*
 * Bursts of 300 (more than a call reads) from sa and sb to sc, and sc's
 * answers: every message arrives, in order per link, though sc reads
 * only by its bells (and the links a call left records in).
 */
SHM_TEST(bells_alone_deliver_bursts_from_two_peers)
{
	struct p4t_conn *x, *y, *xin, *yin;
	uint32_t round, i, na = 0, nb = 0, seq;
	size_t k, from_a, from_b;

	x = link_up(&sa, &sc, &xin);
	y = link_up(&sb, &sc, &yin);
	pump_quiet(20);
	side_forget(&sc);
	sa.free_on_done = sb.free_on_done = sc.free_on_done = true;
	for (round = 0; round < 5; round++) {
		for (i = 0; i < 300; i++) {
			seq = round * 300 + i;
			cr_assert_geq(send_msg(&sa, x, P4W_ACK, seq,
					       burst_len(seq), true), 0);
			cr_assert_geq(send_msg(&sb, y, P4W_ACK, seq,
					       burst_len(seq + 1), true), 0);
		}
		PUMP_UNTIL(count(&sc, UP_RECV) == 600);
		for (k = 0, from_a = 0, from_b = 0; k < sc.nev; k++) {
			if (sc.ev[k].kind != UP_RECV)
				continue;
			if (sc.ev[k].conn == xin)
				expect_msg(&sc.ev[k], na + (uint32_t)from_a,
					   burst_len(na + (uint32_t)from_a)),
					from_a++;
			else
				expect_msg(&sc.ev[k], nb + (uint32_t)from_b,
					   burst_len(nb + (uint32_t)from_b + 1)),
					from_b++;
		}
		cr_assert_eq(from_a, 300);
		cr_assert_eq(from_b, 300);
		na += 300;
		nb += 300;
		side_forget(&sc);
		/* and back: sa and sb read by their own rings */
		cr_assert_geq(send_msg(&sc, xin, P4W_ACK, round, 10, true), 0);
		cr_assert_geq(send_msg(&sc, yin, P4W_ACK, round, 20, true), 0);
		PUMP_UNTIL(count(&sa, UP_RECV) == 1 && count(&sb, UP_RECV) == 1);
		expect_msg(last_recv(&sa), round, 10);
		expect_msg(last_recv(&sb), round, 20);
		side_forget(&sa);
		side_forget(&sb);
	}
	cr_expect_gt(stats_of(&sc).bell_polls, 0);
	cr_expect_eq(stats_of(&sc).full_polls, 0);
}

/* ---- two producer threads, one consumer ------------------------------------ */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RING_MSGS	20000u
#else
#define RING_MSGS	200000u
#endif

struct producer {
	struct side *side;
	struct p4t_conn *conn;
	struct p4t_conn *in;		/* sc's link from it */
	uint32_t next;			/* the seq sc expects from it */
	uint32_t bad;
};

static struct producer prods[2];
static bool ring_stop;		/* the consumer gave up: producers stop */

static void ring_check(struct side *s, struct p4t_conn *conn, const void *msg,
		       size_t len)
{
	const uint8_t *p = msg;
	struct producer *pr = conn == prods[0].in ? &prods[0] : &prods[1];
	uint32_t seq;

	memcpy(&seq, p + 8, sizeof(seq));
	if (seq != pr->next || len != HL + seq % 50)
		pr->bad++;
	__atomic_store_n(&pr->next, pr->next + 1, __ATOMIC_RELEASE);
	side_forget(s);
}

static void *ring_send(void *arg)
{
	struct producer *pr = arg;
	uint32_t seq = 0;

	while (seq < RING_MSGS &&
	       !__atomic_load_n(&ring_stop, __ATOMIC_RELAXED)) {
		if (send_msg(pr->side, pr->conn, P4W_PUT, seq, seq % 50,
			     false) != P4T_DONE) {
			(void)p4t_progress(pr->side->iface, 64);
			continue;
		}
		/* every other thousand in lockstep: each message then
		 * has its bell alone, and one lost is never read */
		while ((seq / 1000) % 2 &&
		       __atomic_load_n(&pr->next, __ATOMIC_ACQUIRE) <= seq &&
		       !__atomic_load_n(&ring_stop, __ATOMIC_RELAXED))
			sched_yield();
		seq++;
	}
	while (p4t_owes(pr->side->iface) &&
	       !__atomic_load_n(&ring_stop, __ATOMIC_RELAXED))
		(void)p4t_progress(pr->side->iface, 64);
	return NULL;
}

/*
 * sa and sb each in a thread of their own write to sc, which the main
 * thread progresses (each iface in one thread, as the engine does): a
 * bell rung while sc clears that very word, or a ring sc looks at
 * before the record that rang is visible, must still be read.
 */
SHM_TEST(two_producer_threads_ring_one_consumer)
{
	pthread_t th[2];
	uint64_t t0 = now_ms();
	int i;

	prods[0] = (struct producer){ .side = &sa };
	prods[1] = (struct producer){ .side = &sb };
	prods[0].conn = link_up(&sa, &sc, &prods[0].in);
	prods[1].conn = link_up(&sb, &sc, &prods[1].in);
	pump_quiet(20);
	side_forget(&sa);
	side_forget(&sb);
	side_forget(&sc);
	sc.on_recv = ring_check;
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, ring_send,
					    &prods[i]), 0);
	while ((prods[0].next < RING_MSGS || prods[1].next < RING_MSGS) &&
	       now_ms() - t0 < 60000)
		(void)p4t_progress(sc.iface, 64);
	__atomic_store_n(&ring_stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	sc.on_recv = NULL;
	for (i = 0; i < 2; i++) {
		cr_expect_eq(prods[i].next, RING_MSGS, "producer %d: %u of %u",
			     i, prods[i].next, RING_MSGS);
		cr_expect_eq(prods[i].bad, 0, "producer %d: %u out of order",
			     i, prods[i].bad);
	}
	cr_expect_eq(stats_of(&sc).full_polls, 0);
}

/* The flood of test_shm and test_tcp, with sc reading by its bells. */
SHM_TEST(a_flooding_link_does_not_starve_the_others)
{
	struct p4t_conn *x, *y, *in;

	x = link_up(&sa, &sc, &in);
	y = link_up(&sb, &sc, &in);
	pump_quiet(20);
	xport_flood_fairness(x, y);
	cr_expect_eq(stats_of(&sc).full_polls, 0);
}

/*
 * A link that brought records is read directly for a while, its bit left
 * set: a hundred messages one at a time cost no bell (neither the
 * producer's atomic OR nor sc's exchange); once it cooled, the next
 * message is found by its bell.
 */
SHM_TEST(an_active_link_is_read_without_its_bell)
{
	struct p4t_conn *x, *y, *in;
	uint64_t bells;
	uint32_t i;

	p4t_shm_set_bells(sc.iface, 0, 0, P4T_SHM_BELL_HOT, true);
	x = link_up(&sa, &sc, &in);
	y = link_up(&sb, &sc, &in);
	(void)y;
	pump_quiet(20);
	side_forget(&sc);
	bells = stats_of(&sc).bell_polls;
	for (i = 0; i < 100; i++) {
		cr_assert_eq(send_seq(&sa, x, i, 8), P4T_DONE);
		PUMP_UNTIL(count(&sc, UP_RECV) == i + 1);
	}
	cr_expect_eq(stats_of(&sc).bell_polls, bells,
		     "%llu bells for an active link",
		     (unsigned long long)(stats_of(&sc).bell_polls - bells));
	cool(&sc);
	bells = stats_of(&sc).bell_polls;
	cr_assert_eq(send_seq(&sa, x, 100, 8), P4T_DONE);
	PUMP_UNTIL(count(&sc, UP_RECV) == 101);
	cr_expect_eq(stats_of(&sc).bell_polls, bells + 1);
	expect_msg(last_recv(&sc), 100, 8);
}

/* ---- what an idle call costs; the full read ------------------------------- */

#define IDLE_PEERS	6

/*
 * Six idle links: a thousand progress calls of sc read no ring at all
 * by bells, six thousand without them (the number of links is past
 * P4T_SHM_BELL_LINKS, each call reads every ring), and one in
 * P4T_SHM_BELL_FULL reads them all by default.
 */
SHM_TEST(idle_links_cost_no_ring_read)
{
	static struct side peers[IDLE_PEERS];
	struct p4t_conn *in;
	uint64_t before;
	int i;

	for (i = 0; i < IDLE_PEERS; i++) {
		shm_side_open(&peers[i], 0);
		(void)link_up(&peers[i], &sc, &in);
		pump_quiet(5);
		while (p4t_progress(peers[i].iface, 64))
			;
	}
	cool(&sc);
	before = stats_of(&sc).ring_polls;
	for (i = 0; i < 1000; i++)
		(void)p4t_progress(sc.iface, 64);
	cr_expect_eq(stats_of(&sc).ring_polls - before, 0,
		     "%llu ring reads in 1000 idle calls",
		     (unsigned long long)(stats_of(&sc).ring_polls - before));
	/* the default: a full read every P4T_SHM_BELL_FULL-th call */
	p4t_shm_set_bells(sc.iface, P4T_SHM_BELL_LINKS, P4T_SHM_BELL_FULL,
			  P4T_SHM_BELL_HOT, true);
	before = stats_of(&sc).ring_polls;
	for (i = 0; i < 64 * P4T_SHM_BELL_FULL; i++)
		(void)p4t_progress(sc.iface, 64);
	cr_expect_eq(stats_of(&sc).ring_polls - before, 64 * IDLE_PEERS);
	/* without bells */
	p4t_shm_set_bells(sc.iface, 1000, 0, 0, true);
	before = stats_of(&sc).ring_polls;
	for (i = 0; i < 1000; i++)
		(void)p4t_progress(sc.iface, 64);
	cr_expect_eq(stats_of(&sc).ring_polls - before, 1000 * IDLE_PEERS);
	for (i = 0; i < IDLE_PEERS; i++) {
		side_close(&peers[i]);
		side_forget(&peers[i]);
		free(peers[i].ev);
	}
}

/*
 * A peer that does not ring (a broken one, or one that cleared the bell):
 * with no full reads its message stays unread; the full read finds it.
 */
SHM_TEST(a_peer_that_does_not_ring_is_read_by_the_full_read)
{
	struct p4t_conn *x, *y, *in;
	int i;

	p4t_shm_set_bells(sa.iface, 0, 0, 0, false);
	x = link_up(&sa, &sc, &in);
	y = link_up(&sb, &sc, &in);
	(void)y;
	pump_quiet(20);
	cool(&sc);
	side_forget(&sc);
	cr_assert_eq(send_seq(&sa, x, 77, 100), P4T_DONE);
	for (i = 0; i < 200; i++)
		(void)p4t_progress(sc.iface, 64);
	cr_assert_eq(count(&sc, UP_RECV), 0, "read without a bell");
	p4t_shm_set_bells(sc.iface, 0, 4, 0, true);
	for (i = 0; i < 4; i++)
		(void)p4t_progress(sc.iface, 64);
	cr_assert_eq(count(&sc, UP_RECV), 1);
	expect_msg(last_recv(&sc), 77, 100);
	cr_expect_eq(stats_of(&sc).full_polls, 1);
}
