/*
 * test_eng_fc_ack.c - acceptance and the acknowledgement policy: SEQ_ACKs
 * complete ACCEPT-acked ops (no per-operation ack travels), a lazy target
 * holds acks nobody waits for (copied payloads) up to the 16th or until
 * told, acks at once what an initiator waits for (held buffers, ACCEPT
 * acks, an initiator short of operations; copy_size), lets reverse
 * traffic carry the ack; SEQ_ACKs and responses that do not fit on the
 * link are sent later, not lost; forged SEQ_ACKs are ignored.
 * Several NIs of one domain; the loop hooks (hold, inject, queue limit)
 * order what happens.
 *
 * Not here: flow control (test_eng_fc.c, test_eng_fc_resend.c,
 * test_eng_fc_keeper.c) and link failures (test_eng_fc.c). The fixture is
 * eng_fc_test.h.
 */
#include "eng_fc_test.h"
#include <unistd.h>

#include "p4u_time.h"

TestSuite(eng_fc, .init = setup, .fini = teardown, .timeout = 60);

/* Message lengths, as in test_eng_fc_resend.c. */
static size_t mixed_len(int i)
{
	static const size_t lens[] = { 100, 2000, 3000, 64 };

	return lens[i % 4];
}

static size_t small_len(int i)
{
	return 40 + (size_t)i;
}

/* Above the fixture's eager size (4096): a rendezvous. */
static size_t rdzv_len(int i)
{
	return 6000 + (size_t)i;
}

/* ---- acceptance --------------------------------------------------------- */

Test(eng_fc, seq_ack_completes_accept_ops)
{
	struct p4t_loop_stats st;
	uint64_t md;
	struct p4e_xfer x;
	int i;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	eng_node_close(&na);
	open_node(&na, 0, 4, 0, 1024);
	append(&nb, rbuf, sizeof(rbuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0x5, 0, P4E_PRIORITY_LIST, 0, NULL);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* not copied: the buffer is held until the target accepts */
	flood_mixed(&na, md, 0, 4, mixed_len, P4E_ACK_ACCEPT);
	x = xfer_to(&nb, md, 8, 0x5, P4E_ACK_ACCEPT);
	cr_expect_eq(p4e_put(na.ni, &x), -FI_EAGAIN, "max_ops not in force");
	progress();
	eng_txlog_drain(na.eq, &tx);
	for (i = 0; i < 4; i++) {
		cr_expect_eq(tx.send[i][P4E_NI_OK], 1);
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "op %d not completed", i);
	}
	/* no per-operation ack travelled, and the slots are free again */
	p4t_loop_stats_get(nb.ni->xp[P4E_XP_NET].iface, &st);
	cr_expect_lt(st.msgs_sent, 4, "%lu messages for 4 accept acks",
		     (unsigned long)st.msgs_sent);
	flood_mixed(&na, md, 4, 4, mixed_len, P4E_ACK_ACCEPT);
	progress();
	eng_txlog_drain(na.eq, &tx);
	for (i = 4; i < 8; i++)
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* b acknowledges lazily (one second: the timer never decides here). */
static void open_lazy_b(void)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	attr.ack_delay_ns = 1000000000ULL;
	eng_node_open(&nb, dom, &attr, 0, 1024);
	append(&nb, rbuf, sizeof(rbuf), P4E_ME_OP_PUT | P4E_ME_MANAGE_LOCAL,
	       0x5, 0, P4E_PRIORITY_LIST, 0, NULL);
}

static uint64_t msgs_sent_by(struct eng_node *n)
{
	struct p4t_loop_stats st;

	p4t_loop_stats_get(n->ni->xp[P4E_XP_NET].iface, &st);
	return st.msgs_sent;
}

static size_t copied_len(int i)
{
	return 8 + (size_t)i;
}

/*
 * Copied payloads: their initiator does not wait for acceptance, so a
 * lazy target sends no SEQ_ACK for them (they stay the initiator's until
 * one comes), but does so at the 16th and before its worker sleeps
 * (p4e_worker_prepare_sleep).
 */
Test(eng_fc, lazy_ack_held_for_copied_payloads)
{
	uint64_t md;

	loop_only();
	open_lazy_b();
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 4, copied_len, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[3][P4E_NI_OK], 1, "copied: SEND at once");
	cr_expect_eq(msgs_sent_by(&nb), 0, "an ack nobody waits for");
	cr_expect(p4e_ni_ack_held(nb.ni));
	/* the copies are kept for a resend, but SEND was their last event:
	 * they hold the MD no more */
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "SEND freed the MD");
	p4e_worker_prepare_sleep(p4e_dom_worker(dom));
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 1);
	cr_expect_not(p4e_ni_ack_held(nb.ni));
	/* at most 16 wait for their ack */
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 24, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 2, "one ack for the first 16");
}

/* The initiator waits: a held buffer (SEND at acceptance) or an ACCEPT
 * ack. Those requests are acknowledged at once; so are copied ones when
 * the initiator runs short of operations. */
Test(eng_fc, lazy_ack_not_for_waited_requests)
{
	uint64_t md;

	loop_only();
	open_lazy_b();
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	fill_msg(0, 2000);
	put_msg(&na, md, 0, 2000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[0][P4E_NI_OK], 1, "held buffer: acked at once");
	fill_msg(1, 8);
	put_msg(&na, md, 1, 8, P4E_ACK_ACCEPT);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[1][P4E_NI_OK], 1, "ACCEPT ack: acked at once");
	cr_expect_eq(msgs_sent_by(&nb), 2);
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
	/* a's last free operations: every request says "ack now" */
	eng_node_close(&na);
	open_node(&na, 0, 4, 0, 1024);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 4, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "acked under pressure");
}

/* copy_size: an initiator that copies 2000-byte payloads completes them
 * at once and, not waiting, lets the target hold its ack back; a larger
 * payload is held (and acked at once). Bounce blocks grow to copy_size
 * (here above twice max_volatile_size). */
Test(eng_fc, copy_size_copies_up_to_copy_size)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);
	uint64_t md;

	loop_only();
	open_lazy_b();
	eng_node_close(&na);
	attr.copy_size = 2000;
	attr.desired.max_volatile_size = 256;	/* 512-byte blocks if not */
	eng_node_open(&na, dom, &attr, 0, 1024);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	fill_msg(0, 2000);
	put_msg(&na, md, 0, 2000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[0][P4E_NI_OK], 1, "copied: SEND at once");
	cr_expect_eq(msgs_sent_by(&nb), 0, "nobody waits: no ack yet");
	fill_msg(1, 3000);
	put_msg(&na, md, 1, 3000, P4E_NO_ACK_REQ);
	progress();
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.send[1][P4E_NI_OK], 1, "held: SEND at acceptance");
	cr_expect_eq(msgs_sent_by(&nb), 1, "acked at once");
	cr_expect_eq(p4e_md_release(na.ni, md), 0);
}

/* A lazy b, and the way back: a's entry 0x9 and b's md (*mdb) to put to
 * it, beside a's md (*md) for requests. */
static void open_lazy_b_with_reply(uint64_t *md, uint64_t *mdb)
{
	loop_only();
	open_lazy_b();
	append(&na, obuf, 64, P4E_ME_OP_PUT, 0x9, 0, P4E_PRIORITY_LIST, 0,
	       NULL);
	*md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	*mdb = md_bind(&nb, src, 64, P4E_HANDLE_NONE, 0);
}

/* A message going back carries the acknowledgement: no SEQ_ACK at all. */
Test(eng_fc, lazy_ack_rides_on_reverse_traffic)
{
	struct p4e_xfer x;
	uint64_t md, mdb;

	open_lazy_b_with_reply(&md, &mdb);
	flood_mixed(&na, md, 0, 3, copied_len, P4E_NO_ACK_REQ);
	progress();
	x = xfer_to(&na, mdb, 8, 0x9, P4E_NO_ACK_REQ);
	cr_assert_eq(p4e_put(nb.ni, &x), 0);
	progress();
	cr_expect_eq(msgs_sent_by(&nb), 1, "only the reply travelled");
	cr_expect_eq(p4e_md_release(na.ni, md), 0, "its ack_seq accepted all");
	cr_expect_not(p4e_ni_ack_held(nb.ni));
}

/* A SEQ_ACK that does not fit on the link is sent later, not lost. */
Test(eng_fc, seq_ack_retried_on_full_link)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 3, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* a reads nothing: op 0's ACK (48 bytes) fills its queue */
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, true);
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 48);
	flood_mixed(&na, md, 0, 1, small_len, P4E_ACK_REQ);
	flood_mixed(&na, md, 1, 2, small_len, P4E_ACK_ACCEPT);
	progress();
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 0);
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(3, small_len, &rx, &tx, P4E_ACK_ACCEPT);
}

static void inject_seq_ack(struct eng_node *to, struct eng_node *from,
			   uint32_t ack_seq)
{
	uint8_t buf[sizeof(struct p4w_hdr)];
	struct p4w_hdr h = {
		.version = P4W_VERSION, .type = P4W_SEQ_ACK,
		.flags = P4W_F_ACK_SEQ, .length = sizeof(buf),
		.ack_seq = ack_seq,
	};
	char addr[64];
	size_t len;

	addr_of(from, addr, &len);
	p4w_hdr_pack(buf, &h);
	cr_assert_eq(p4t_loop_inject(to->ni->xp[P4E_XP_NET].iface, addr, len, buf,
				     sizeof(buf)), 0);
}

static void accept_acked_once(int n)
{
	int i;

	logs_reset();
	eng_txlog_drain(na.eq, &tx);
	eng_rxlog_drain(nb.eq, &rx);
	for (i = 0; i < n; i++) {
		cr_expect_eq(tx.ack[i][P4E_NI_OK], 1, "op %d acked %d times",
			     i, tx.ack[i][P4E_NI_OK]);
		cr_expect_eq(rx.got[i], 1);
	}
}

/*
 * A forged SEQ_ACK is ignored: for seqs never assigned, or (queue_limit:
 * the second message does not fit in b's queue and waits at a) for an op
 * still queued, never sent. The real acks then complete each op once.
 */
static void forged_ack_ignored(uint32_t forged, size_t queue_limit)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 2, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, true);
	p4t_loop_set_queue_limit(nb.ni->xp[P4E_XP_NET].iface, queue_limit);
	flood_mixed(&na, md, 0, 2, mixed_len, P4E_ACK_ACCEPT);
	inject_seq_ack(&na, &nb, forged);
	cr_assert_eq(p4e_ni_progress(na.ni, 64), 1);
	eng_txlog_drain(na.eq, &tx);
	cr_expect_eq(tx.ack[0][P4E_NI_OK] + tx.ack[1][P4E_NI_OK], 0,
		     "a forged ack completed an op");
	p4t_loop_set_queue_limit(nb.ni->xp[P4E_XP_NET].iface, 0);
	p4t_loop_hold(nb.ni->xp[P4E_XP_NET].iface, false);
	progress();
	accept_acked_once(2);
}

Test(eng_fc, forged_ack_beyond_sent_ignored)
{
	forged_ack_ignored(1000, 0);
}

Test(eng_fc, forged_ack_for_unsent_ignored)
{
	forged_ack_ignored(2, 1000);
}

/* A response that does not fit on the link at once is not lost. */
Test(eng_fc, response_not_lost_on_full_link)
{
	uint64_t md;

	loop_only();
	open_node(&nb, 0, 0, 0, 1024);
	post_receives(0, 3, SSLOT);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	/* a reads nothing and takes one ACK (48 bytes) at a time */
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, true);
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 48);
	flood_mixed(&na, md, 0, 3, small_len, P4E_ACK_REQ);
	progress();
	p4t_loop_set_queue_limit(na.ni->xp[P4E_XP_NET].iface, 0);
	p4t_loop_hold(na.ni->xp[P4E_XP_NET].iface, false);
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(3, small_len, &rx, &tx, P4E_ACK_REQ);
}

/* ---- acknowledgements on timers (docs/design.md §7) -------------------- */

/* What a timer may be late by in these tests: far below the 100 ms tick
 * deadlines once waited for, with room for a loaded 2-core machine. */
#define ACK_GRANULARITY_NS	(20ULL * 1000000)

/* The one step of b's NI: budget 1 is one message or one completion. */
static void step_b(void)
{
	p4e_worker_lock(nb.ni->worker);
	p4e_ni_progress(nb.ni, 1);
	p4e_worker_unlock(nb.ni->worker);
}

static void open_b_delay(uint64_t ack_delay_ns)
{
	struct p4e_ni_attr attr = eng_ni_attr(4096);

	attr.ack_delay_ns = ack_delay_ns;
	eng_node_open(&nb, dom, &attr, 0, 1024);
	post_receives(0, 4, SSLOT);
}

/*
 * The ack delay is a worker timer: a target that only sleeps on its
 * worker's wait fd (as an application sleeps on the fd of FI_GETWAIT)
 * wakes at the deadline, and the SEQ_ACK leaves then, late by no more
 * than the granularity. (A delay checked only when progress is called
 * never wakes a sleeper: the poll below would run to its 2 s timeout.)
 */
Test(eng_fc, ack_delay_timer_wakes_a_sleeper_on_time)
{
	const uint64_t delay = 60ULL * 1000000;
	struct p4e_worker *w;
	struct pollfd pfd;
	uint64_t t0, t1 = 0, md;

	loop_only();
	open_b_delay(delay);
	w = p4e_dom_worker(dom);
	/* someone sleeps on this worker: its timerfd follows the deadlines
	 * (nothing is held yet, so this sends nothing) */
	p4e_worker_lock(w);
	p4e_worker_prepare_sleep(w);
	p4e_worker_unlock(w);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 1, copied_len, P4E_NO_ACK_REQ);
	progress();
	t0 = p4u_time_ns();
	cr_assert(p4e_ni_ack_held(nb.ni), "the acceptance waits");
	cr_assert_eq(msgs_sent_by(&nb), 0);
	pfd.fd = p4e_worker_wait_fd(w);
	pfd.events = POLLIN;
	while (msgs_sent_by(&nb) == 0 && p4u_time_ns() - t0 < 2000000000ULL) {
		(void)poll(&pfd, 1, 2000);
		t1 = p4u_time_ns();
		progress();
	}
	cr_assert_eq(msgs_sent_by(&nb), 1, "no SEQ_ACK after 2 s");
	cr_expect_geq(t1 - t0, delay - 1000000, "woke %llu us early",
		      (unsigned long long)((delay - (t1 - t0)) / 1000));
	cr_expect_leq(t1 - t0, delay + ACK_GRANULARITY_NS,
		      "the SEQ_ACK left %llu ms after the acceptance (delay "
		      "%llu ms)", (unsigned long long)((t1 - t0) / 1000000),
		      (unsigned long long)(delay / 1000000));
	cr_expect_not(p4e_ni_ack_held(nb.ni));
}

/*
 * While a rendezvous streams in from a peer, what it is owed waits for
 * the stream: the acceptance of the put rides on the ACK that ends it,
 * one message where an immediate SEQ_ACK made two (b acknowledges at
 * once otherwise: ack_delay 0, as with a progress thread).
 */
Test(eng_fc, acks_wait_while_a_rendezvous_streams_in)
{
	uint64_t md;

	loop_only();
	open_b_delay(0);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 1, rdzv_len, P4E_ACK_REQ);
	step_b();	/* the header: matched, accepted, its pull started */
	cr_expect_eq(msgs_sent_by(&nb), 0, "no SEQ_ACK while it streams in");
	cr_expect(p4e_ni_ack_held(nb.ni));
	step_b();	/* the pull ends: the ACK carries the acceptance */
	cr_expect_eq(msgs_sent_by(&nb), 1, "%lu messages",
		     (unsigned long)msgs_sent_by(&nb));
	cr_expect_not(p4e_ni_ack_held(nb.ni));
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(1, rdzv_len, &rx, &tx, P4E_ACK_REQ);
}

/* ... but not longer than the hold time: its timer sends them. */
Test(eng_fc, held_acks_leave_at_the_hold_deadline)
{
	uint64_t md, t0;

	loop_only();
	open_b_delay(0);
	md = md_bind(&na, src, sizeof(src), P4E_HANDLE_NONE, 0);
	flood_mixed(&na, md, 0, 1, rdzv_len, P4E_ACK_REQ);
	step_b();
	t0 = p4u_time_ns();
	cr_assert_eq(msgs_sent_by(&nb), 0);
	/* the pull never ends here: only b's timers run */
	while (msgs_sent_by(&nb) == 0 && p4u_time_ns() - t0 < 1000000000ULL)
		(void)p4u_timerq_run(&nb.ni->worker->timers, p4u_time_ns());
	cr_assert_eq(msgs_sent_by(&nb), 1, "the SEQ_ACK left by its deadline");
	cr_expect_leq(p4u_time_ns() - t0, ACK_GRANULARITY_NS);
	step_b();
	cr_expect_eq(msgs_sent_by(&nb), 2, "then the ACK");
	progress();
	eng_rxlog_drain(nb.eq, &rx);
	eng_txlog_drain(na.eq, &tx);
	expect_all(1, rdzv_len, &rx, &tx, P4E_ACK_REQ);
}

/*
 * The ack timer is armed once for a run of requests, not moved with each
 * (a heap removal and insertion per message in a ping-pong, where each
 * request owes an ack and each reply pays it): a request after a reply
 * leaves the deadline as it was. The timer then fires early for that
 * request, looks again and re-arms for its own deadline, sending nothing.
 */
Test(eng_fc, ack_timer_not_moved_by_each_request)
{
	struct p4u_timer *t;
	uint64_t md, mdb, first;
	struct p4e_xfer x;

	open_lazy_b_with_reply(&md, &mdb);
	t = &nb.ni->ack_timer;
	flood_mixed(&na, md, 0, 1, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_assert(p4u_timer_armed(t), "the acceptance waits on the timer");
	first = t->deadline_ns;
	/* the reply carries the acceptance */
	x = xfer_to(&na, mdb, 8, 0x9, P4E_NO_ACK_REQ);
	cr_assert_eq(p4e_put(nb.ni, &x), 0);
	progress();
	cr_expect_not(p4e_ni_ack_held(nb.ni));
	usleep(2000);
	flood_mixed(&na, md, 1, 1, copied_len, P4E_NO_ACK_REQ);
	progress();
	cr_assert(p4e_ni_ack_held(nb.ni));
	cr_expect(p4u_timer_armed(t));
	cr_expect_eq(t->deadline_ns, first, "the deadline moved %llu us with "
		     "the next request",
		     (unsigned long long)((t->deadline_ns - first) / 1000));
	cr_expect_eq(msgs_sent_by(&nb), 1, "only the reply travelled");
	/* it fires at the first deadline: the second request's is later */
	cr_expect_eq(p4u_timerq_run(&nb.ni->worker->timers, first), 1);
	cr_expect_eq(msgs_sent_by(&nb), 1, "an ack before its deadline");
	cr_expect(p4e_ni_ack_held(nb.ni));
	cr_expect(p4u_timer_armed(t), "armed for the second request");
	cr_expect_gt(t->deadline_ns, first);
}

static int fired;

static void count_fire(struct p4u_timer *timer, uint64_t now_ns)
{
	(void)timer;
	(void)now_ns;
	fired++;
}

/*
 * Progress reads the clock every P4E_CLOCK_EVERY calls (a read costs
 * about 30 ns): a spinning caller sees a due deadline within
 * that many calls, and the first call after p4e_worker_prepare_sleep
 * (a sleeper woken) reads it at once.
 */
Test(eng_fc, due_deadlines_run_within_the_clock_period)
{
	struct p4e_worker *w = p4e_dom_worker(dom);
	struct p4u_timer timer;
	int calls = 0;

	cr_assert(w);
	p4u_timer_init(&timer, count_fire);
	fired = 0;
	p4e_worker_lock(w);
	p4u_timer_arm(&w->timers, &timer, p4u_time_ns());
	while (!fired && calls < 4 * P4E_CLOCK_EVERY) {
		p4e_worker_progress(w, 0);
		calls++;
	}
	cr_expect_eq(fired, 1);
	cr_expect_leq(calls, P4E_CLOCK_EVERY, "due, seen after %d calls",
		      calls);
	/* the clock was read by the last call: the next would not read it */
	p4u_timer_arm(&w->timers, &timer, p4u_time_ns());
	p4e_worker_prepare_sleep(w);
	p4e_worker_progress(w, 0);
	cr_expect_eq(fired, 2, "the first call after a sleep missed a due "
		     "deadline");
	p4u_timer_cancel(&w->timers, &timer);
	p4e_worker_unlock(w);
}
