/*
 * test_shm.c - the shared-memory transport (p4t_shm*.c) against the
 * p4t.h contract and what p4t_shm.h promises, two sides in one process:
 * links and messages of every size in order both ways (fragments, ring
 * wrap-around, in-place delivery), a flood (requests refused with
 * -FI_EAGAIN over the queue limit, responses queued, all arriving in
 * order), wake-ups (wait_arm then the wait fd; none when not armed),
 * reachability (foreign token, nobody listening, our own address),
 * simultaneous connects making one link, auth_key and conn_new
 * refusals, a full backlog retried, a restarted peer, and a ring's two
 * ends in two threads.
 *
 * Not here: pull / push (test_shm_rma.c); iface_close with operations
 * pending and a peer process killed mid-stream (test_shm_fail.c).
 */
#include <config.h>

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/un.h>

#define SHM_SUITE	shm
#include "p4t_shm_test.h"

TestSuite(shm, .init = shm_setup, .fini = shm_teardown, .timeout = 120);

SHM_TEST(open_names_and_attrs)
{
	struct sockaddr_in a = shm_addr(1000), *got = (void *)&sa.addr;
	struct p4t_iface_attr attr;
	struct side dup = { 0 };

	cr_expect_eq(sa.addrlen, sizeof(struct sockaddr_in));
	cr_expect_eq(got->sin_port, a.sin_port);
	cr_expect_eq(p4u_addr_token(&sa.addr, sa.addrlen), p4u_host_token());
	p4t_iface_query(sa.iface, &attr);
	cr_expect_eq(attr.max_msg, P4T_SHM_MAX_MSG);
	cr_expect_eq(attr.max_inline, P4T_SHM_MAX_INLINE);
	cr_expect_not(attr.rma_native);
	cr_expect_str_eq(p4t_shm_ops.name, "shm");
	/* the name is taken: a second iface on the address is refused */
	cr_expect_eq(side_open_shm(&dup, 0, 1000), -FI_EADDRINUSE);
	free(dup.ev);
}

SHM_TEST(messages_of_every_size_both_directions_in_order)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 255, 4024, 4096, 65536,
					65400, 100000, 262144, 300000,
					1 << 20, 3 << 20, 8 << 20 };
	const size_t n = P4U_ARRAY_SIZE(sizes);
	struct p4t_conn *x = conn_to(&sa, &sb), *y;
	size_t i, round;
	int ret;

	sa.free_on_done = sb.free_on_done = true;
	/* three rounds: the rings wrap many times */
	for (round = 0; round < 3; round++)
		for (i = 0; i < n; i++) {
			/* requests over the queue limit wait for room */
			while ((ret = send_msg(&sa, x, P4W_PUT,
					       (uint32_t)(round * n + i),
					       sizes[i] - (sizes[i] == 8 << 20 ?
							   HL : 0),
					       true)) == -FI_EAGAIN)
				pump_once();
			cr_assert(ret == P4T_DONE || ret == P4T_QUEUED,
				  "send %zu: %d", i, ret);
		}
	PUMP_UNTIL(count(&sb, UP_RECV) == 3 * n);
	cr_assert_eq(sb.ev[0].kind, UP_CONN_NEW);
	/* the peer is named by its stamped network address */
	cr_expect_eq(memcmp(&sb.ev[0].addr, &sa.addr, sa.addrlen), 0);
	y = sb.ev[0].conn;
	for (i = 0; i < 3 * n; i++)
		expect_msg(&sb.ev[1 + i], (uint32_t)i,
			   sizes[i % n] - (sizes[i % n] == 8 << 20 ? HL : 0));
	cr_expect_gt(stats_of(&sb).recv_in_place, 0);
	/* and back */
	for (i = 0; i < n; i++)
		cr_assert_geq(send_msg(&sb, y, P4W_PUT, (uint32_t)i,
				       sizes[i] / 2, true), 0);
	PUMP_UNTIL(count(&sa, UP_RECV) == n);
	for (i = 0, round = 0; i < sa.nev; i++)
		if (sa.ev[i].kind == UP_RECV)
			expect_msg(&sa.ev[i], (uint32_t)round,
				   sizes[round] / 2), round++;
	cr_expect_eq(count(&sa, UP_CONN_NEW), 0);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	cr_expect_eq(count(&sb, UP_CONN_FAILED), 0);
	/* too large, and a layered transport's message */
	struct iovec big = { .iov_base = sa.ev, .iov_len = P4T_SHM_MAX_MSG };
	uint8_t hdr[HL] = { 0 };

	cr_expect_eq(p4t_send(sa.iface, x, hdr, HL, &big, 1, NULL, 0),
		     -FI_EMSGSIZE);
	cr_expect_eq(p4t_send(sa.iface, x, hdr, 16, NULL, 0, NULL,
			      P4T_SEND_XPORT), -FI_EINVAL);
}

/*
 * The peer does not read: requests fill the queue up to the limit and
 * are then refused; responses are not, and everything arrives in order
 * once the peer reads.
 */
SHM_TEST(flood_refuses_requests_queues_responses_in_order)
{
	struct p4t_conn *x, *y;
	uint32_t seq = 0, refused = 0, i;
	int ret;

	x = link_up(&sa, &sb, &y);
	p4t_shm_set_queue_limit(sa.iface, 256 << 10);
	for (i = 0; i < 4000 && refused < 3; i++) {
		ret = send_msg(&sa, x, P4W_PUT, seq, 2000, false);
		if (ret == -FI_EAGAIN)
			refused++;
		else {
			cr_assert_eq(ret, P4T_DONE);
			seq++;
		}
	}
	cr_assert_eq(refused, 3, "no request was refused");
	cr_expect_gt(stats_of(&sa).eagain, 0);
	cr_expect(p4t_owes(sa.iface));
	/* responses (not P4T_SEND_SEQ) are never refused */
	for (i = 0; i < 300; i++, seq++)
		cr_assert_eq(send_msg(&sa, x, P4W_ACK, seq, 2000, false),
			     P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == seq);
	for (i = 0; i < seq; i++)
		expect_msg(&sb.ev[i], i, 2000);
	PUMP_UNTIL(!p4t_owes(sa.iface));
}

/*
 * Responses (no P4T_SEND_SEQ) are never refused short of memory: past the
 * bound of the transport's buffer pool (65,536 copies of up to 4 KiB)
 * their copies come from the heap. 70,000 of 1,000 B queued behind a
 * ring the peer does not read, then all delivered in order.
 */
SHM_TEST(responses_past_the_buffer_pool_are_queued_not_refused)
{
	const uint32_t n = 70000;
	struct p4t_conn *x, *y;
	uint32_t i;
	int ret;

	x = link_up(&sa, &sb, &y);
	for (i = 0; i < n; i++) {
		ret = send_msg(&sa, x, P4W_ACK, i, 1000, false);
		if (ret != P4T_DONE)
			cr_assert_eq(ret, P4T_DONE, "response %u: %d", i, ret);
	}
	cr_expect_gt(stats_of(&sa).queued_copy, 65536);
	PUMP_UNTIL(count(&sb, UP_RECV) == n);
	for (i = 0; i < n; i += 997)
		expect_msg(&sb.ev[i], i, 1000);
	expect_msg(&sb.ev[n - 1], n - 1, 1000);
	side_forget(&sb);
	PUMP_UNTIL(!p4t_owes(sa.iface));
}

/*
 * Small sends queued behind a full ring cost about their size (their
 * copy inside the tx), not a pooled tx and a P4T_SHM_BUF_SIZE buffer
 * (over 4 KiB each); copies on both sides of that bound arrive whole
 * and in order.
 */
SHM_TEST(queued_small_sends_cost_their_size)
{
	const uint32_t n = 2000, mixed = 64;
	struct p4t_conn *x, *y;
	uint32_t seq = 0, i;
	size_t h0, per;

	x = link_up(&sa, &sb, &y);
	/* sb does not read: the ring fills, then sends are queued */
	while (stats_of(&sa).queued_copy == 0)
		cr_assert_eq(send_seq(&sa, x, seq++, 8), P4T_DONE);
	h0 = heap_in_use();
	for (i = 0; i < n; i++)
		cr_assert_eq(send_seq(&sa, x, seq++, 8), P4T_DONE);
	per = (heap_in_use() - h0) / n;
	cr_expect_leq(per, HL + 8 + 256, "a queued send of 8 B costs %zu B",
		      per);
	for (i = 0; i < mixed; i++, seq++)
		cr_assert_eq(send_seq(&sa, x, seq, 240 + i % 16), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == seq);
	for (i = 0; i < seq; i++)
		expect_msg(&sb.ev[i], i, i < seq - mixed ? 8 :
			   240 + (i - (seq - mixed)) % 16);
}

/*
 * wait_arm: with nothing there it says sleep, and the wait fd is quiet;
 * an arrival then makes it readable. Without arming, no wake-up is sent
 * (progress finds the message).
 */
SHM_TEST(wait_arm_and_wait_fd_wake_on_arrival_only_when_armed)
{
	struct p4t_conn *x, *y;
	struct p4t_shm_stats st;
	uint64_t t0;

	x = link_up(&sa, &sb, &y);
	pump_quiet(50);
	side_forget(&sb);
	while (p4t_progress(sb.iface, 64))
		;
	cr_assert_eq(p4t_wait_arm(sb.iface), 0);
	cr_assert_not(fd_readable(sb.iface, 0));
	st = stats_of(&sa);
	cr_assert_eq(send_seq(&sa, x, 1, 100), P4T_DONE);
	cr_expect_eq(stats_of(&sa).wakeups_sent, st.wakeups_sent + 1);
	t0 = now_ms();
	cr_assert(fd_readable(sb.iface, 5000), "no wake-up");
	cr_expect_lt(now_ms() - t0, 5000);
	/* armed with a message there: do not sleep */
	cr_assert_eq(send_seq(&sa, x, 2, 100), P4T_DONE);
	cr_expect_gt(p4t_wait_arm(sb.iface), 0);
	PUMP_UNTIL(count(&sb, UP_RECV) == 2);
	expect_msg(&sb.ev[0], 1, 100);
	/* progress disarmed: the next message wakes no one */
	while (p4t_progress(sb.iface, 64))
		;
	st = stats_of(&sa);
	cr_assert_eq(send_seq(&sa, x, 3, 100), P4T_DONE);
	cr_expect_eq(stats_of(&sa).wakeups_sent, st.wakeups_sent);
	cr_expect_not(fd_readable(sb.iface, 20));
	cr_expect_gt(p4t_progress(sb.iface, 64), 0);
	cr_expect_eq(count(&sb, UP_RECV), 3);
}

/*
 * Idle rings are spun on without a system call: the sockets are asked
 * once per P4T_SHM_IDLE_EPOLL_NS (a latency ping-pong paid an epoll_wait
 * per call), and a message is still seen at the first call after it.
 */
SHM_TEST(idle_rings_spin_without_epoll)
{
	struct p4t_conn *x, *y;
	struct p4t_shm_stats st;
	uint64_t t0, calls, elapsed_ns;
	int i;

	x = link_up(&sa, &sb, &y);
	pump_quiet(50);
	st = stats_of(&sb);
	t0 = p4u_time_ns();
	for (i = 0; i < 20000; i++)
		(void)p4t_progress(sb.iface, 64);
	elapsed_ns = p4u_time_ns() - t0;
	calls = stats_of(&sb).epoll_calls - st.epoll_calls;
	cr_expect_leq(calls, elapsed_ns / P4T_SHM_IDLE_EPOLL_NS + 1,
		      "%llu epoll_wait in 20000 idle calls (%llu us)",
		      (unsigned long long)calls,
		      (unsigned long long)(elapsed_ns / 1000));
	side_forget(&sb);
	cr_assert_eq(send_seq(&sa, x, 9, 100), P4T_DONE);
	cr_expect_gt(p4t_progress(sb.iface, 64), 0);
	cr_assert_eq(count(&sb, UP_RECV), 1);
	expect_msg(&sb.ev[0], 9, 100);
}

SHM_TEST(unreachable_addresses_are_refused_at_once)
{
	struct sockaddr_in foreign = shm_addr(1001), nobody = shm_addr(1777);
	struct p4t_conn *conn = NULL;

	/* sb's name, with another host's token */
	memcpy(&foreign, &sb.addr, sizeof(foreign));
	p4u_addr_stamp(&foreign, sizeof(foreign), p4u_host_token() ^ 0x10);
	cr_expect_eq(p4t_conn_get(sa.iface, &foreign, sizeof(foreign), &conn),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(p4t_conn_get(sa.iface, &nobody, sizeof(nobody), &conn),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(p4t_conn_get(sa.iface, &sa.addr, sa.addrlen, &conn),
		     -FI_EHOSTUNREACH);
	cr_expect_null(conn);
	cr_expect_eq(stats_of(&sa).unreachable, 3);
	cr_expect_eq(stats_of(&sa).links, 0);
	/* no token (a resolved name) at sb's address: reachable */
	memcpy(&foreign, &sb.addr, sizeof(foreign));
	p4u_addr_clear(&foreign, sizeof(foreign));
	cr_expect_eq(p4t_conn_get(sa.iface, &foreign, sizeof(foreign), &conn),
		     0);
	cr_expect_not_null(conn);
}

/* Both connect at once: one link, nothing lost or reordered. */
SHM_TEST(simultaneous_connects_make_one_link)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
	uint32_t i;

	for (i = 0; i < 40; i++) {
		cr_assert_eq(send_seq(&sa, x, i, 3000 + i), P4T_DONE);
		cr_assert_eq(send_seq(&sb, y, i, 5000 + i), P4T_DONE);
	}
	PUMP_UNTIL(count(&sa, UP_RECV) == 40 && count(&sb, UP_RECV) == 40);
	for (i = 0; i < 40; i++) {
		expect_msg(&sb.ev[i], i, 3000 + i);
		expect_msg(&sa.ev[i], i, 5000 + i);
		cr_expect_eq(sb.ev[i].conn, y);
		cr_expect_eq(sa.ev[i].conn, x);
	}
	cr_expect_eq(count(&sa, UP_CONN_NEW) + count(&sb, UP_CONN_NEW), 0);
	cr_expect_geq(stats_of(&sa).collisions + stats_of(&sb).collisions, 1);
	pump_quiet(50);
	cr_expect_eq(stats_of(&sa).links, 1);
	cr_expect_eq(stats_of(&sb).links, 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED),
		     0);
	/* and the kept link goes on */
	cr_assert_eq(send_seq(&sb, y, 100, 10), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_RECV) == 41);
	expect_msg(&sa.ev[sa.nev - 1], 100, 10);
}

/*
 * The side that loses the collision (sb: the higher address) has filled
 * its ring and queued more before it learns of it: the ring's records,
 * then the queue, go into the kept link in order (the INFO frame of the
 * adopted link must not drain the queue ahead of the moved records).
 */
SHM_TEST(simultaneous_connects_with_a_full_ring_keep_order)
{
	struct p4t_conn *x = conn_to(&sa, &sb), *y = conn_to(&sb, &sa);
	const uint32_t n = 600;
	uint32_t i;

	(void)x;
	for (i = 0; i < n; i++)
		cr_assert_eq(send_seq(&sb, y, i, 1000), P4T_DONE);
	cr_assert_gt(stats_of(&sb).queued_copy, 0, "the ring never filled");
	PUMP_UNTIL(count(&sa, UP_RECV) == n);
	for (i = 0; i < n; i++)
		expect_msg(&sa.ev[i], i, 1000);
	cr_expect_geq(stats_of(&sb).collisions, 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED) + count(&sb, UP_CONN_FAILED),
		     0);
}

SHM_TEST(auth_key_mismatch_is_refused)
{
	struct p4t_conn *x;
	long i;

	shm_side_open(&sc, 7);
	x = conn_to(&sa, &sc);
	cr_assert_eq(send_seq(&sa, x, 1, 10), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	i = (long)sa.nev - 1;
	cr_expect_eq(sa.ev[i].conn, x);
	cr_expect_eq(sa.ev[i].status, -FI_ECONNREFUSED);
	cr_expect_eq(count(&sc, UP_CONN_NEW), 0);
	cr_expect_eq(count(&sc, UP_RECV), 0);
	cr_expect_eq(stats_of(&sc).auth_refused, 1);
}

/* conn_new refusing: the caller's link fails, the refuser has none. */
SHM_TEST(conn_new_refusal_closes)
{
	struct p4t_conn *x;

	sb.conn_new_ret = -FI_EPERM;
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 1, 10), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_eq(sa.ev[sa.nev - 1].status, -FI_ECONNREFUSED);
	cr_expect_eq(count(&sb, UP_RECV), 0);
	cr_expect_eq(stats_of(&sb).links, 0);
}

/*
 * A listener whose backlog is full (connect says EAGAIN) is not a
 * refusal: the link retries, carrying what was sent, until the peer
 * takes it.
 */
SHM_TEST(full_backlog_is_retried_not_refused)
{
	struct sockaddr_in to = shm_addr(1500);
	struct sockaddr_un sun;
	struct p4t_conn *x = NULL;
	socklen_t len = shm_name_of(&to, &sun);
	int lfd, cfd[4], i;

	/* a fake listener on the peer's name, its backlog filled */
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sun, len), 0);
	cr_assert_eq(listen(lfd, 0), 0);
	for (i = 0; i < 4; i++) {
		cfd[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
				SOCK_CLOEXEC, 0);
		cr_assert_geq(cfd[i], 0);
		if (connect(cfd[i], (struct sockaddr *)&sun, len) &&
		    errno == EAGAIN)
			break;
	}
	cr_assert_lt(i, 4, "the backlog never filled");
	while (i >= 0)
		close(cfd[i--]);
	cr_assert_eq(p4t_conn_get(sa.iface, &to, sizeof(to), &x), 0);
	cr_assert_not_null(x);
	cr_expect_gt(stats_of(&sa).connect_retries, 0);
	cr_assert_eq(send_seq(&sa, x, 1, 500), P4T_DONE);
	/* the real peer comes up on that name */
	close(lfd);
	cr_assert_eq(side_open_shm(&sc, 0, 1500), 0);
	PUMP_UNTIL(count(&sc, UP_RECV) == 1);
	expect_msg(&sc.ev[1], 1, 500);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
}

/* A peer that restarts on its address is a new peer. */
static long find_ev(const struct side *s, enum up_kind kind)
{
	size_t i;

	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == kind)
			return (long)i;
	return -1;
}

SHM_TEST(restarted_peer_is_a_new_peer)
{
	struct p4t_conn *x, *y;

	/* sb listens on port 1001 (shm_setup) */
	x = link_up(&sa, &sb, &y);
	side_close(&sb);
	side_forget(&sb);
	cr_assert_eq(side_open_shm(&sb, 0, 1001), 0);
	/* the new process calls before we saw the old one go */
	y = conn_to(&sb, &sa);
	cr_assert_eq(send_seq(&sb, y, 5, 50), P4T_DONE);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1 && count(&sa, UP_RECV) == 1);
	/* the old link failed before the new one was announced */
	cr_expect_eq(sa.ev[find_ev(&sa, UP_CONN_FAILED)].conn, x);
	cr_expect_lt(find_ev(&sa, UP_CONN_FAILED), find_ev(&sa, UP_CONN_NEW));
	cr_expect_neq(sa.ev[find_ev(&sa, UP_CONN_NEW)].conn, x);
	expect_msg(&sa.ev[find_ev(&sa, UP_RECV)], 5, 50);
}

/* ---- two threads on the two ends of a ring --------------------------------- */

/* 10^7 messages (3.6 s in an -O2 build here, 4.3 s in a debug build);
 * a tenth under ASan */
#if defined(__SANITIZE_ADDRESS__)
#define STREAM_MSGS	1000000u
#else
#define STREAM_MSGS	10000000u
#endif

static uint32_t stream_next;	/* the seq the consumer expects */
static uint32_t stream_bad;	/* messages out of order or damaged */

/* mostly one-record frames, every size up to 700 B now and then */
static size_t stream_len(uint32_t seq)
{
	return seq % 64u ? (seq * 37u) % 97u : (seq * 37u) % 700u;
}

/* Consumer (this thread): every message in order and intact. */
static void stream_check(struct side *s, struct p4t_conn *conn,
			 const void *msg, size_t len)
{
	const uint8_t *p = msg;
	uint32_t seq;
	size_t n;

	(void)conn;
	memcpy(&seq, p + 8, sizeof(seq));
	n = stream_len(stream_next);
	if (seq != stream_next || len != HL + n ||
	    (n && (p[HL] != pattern(seq, 0) ||
		   p[HL + n - 1] != pattern(seq, n - 1))))
		stream_bad++;
	stream_next++;
	side_forget(s);
}

/* Producer (its own thread, the only one using sa). */
static void *stream_send(void *arg)
{
	struct p4t_conn *x = arg;
	uint32_t seq = 0;
	int ret;

	while (seq < STREAM_MSGS) {
		ret = send_msg(&sa, x, P4W_PUT, seq, stream_len(seq), false);
		if (ret == P4T_DONE)
			seq++;
		else
			(void)p4t_progress(sa.iface, 64);
	}
	while (p4t_owes(sa.iface))
		(void)p4t_progress(sa.iface, 64);
	return NULL;
}

/*
 * The producer and the consumer of a ring in two threads (each iface
 * used by one thread only, as the engine does): the orderings of head
 * and tail hold under real concurrency, through many wrap-arounds and a
 * ring that is often full.
 */
SHM_TEST(concurrent_producer_and_consumer_threads)
{
	struct p4t_conn *x, *y;
	pthread_t th;
	uint64_t t0 = now_ms();

	x = link_up(&sa, &sb, &y);
	pump_quiet(20);
	side_forget(&sa);
	sb.on_recv = stream_check;
	cr_assert_eq(pthread_create(&th, NULL, stream_send, x), 0);
	while (stream_next < STREAM_MSGS && now_ms() - t0 < 100000)
		(void)p4t_progress(sb.iface, 64);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_expect_eq(stream_next, STREAM_MSGS);
	cr_expect_eq(stream_bad, 0, "%u messages out of order or damaged",
		     stream_bad);
	sb.on_recv = NULL;
}

/* IPv6 addresses: the token in sin6_flowinfo, the name from the address. */
SHM_TEST(ipv6_addresses)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct p4t_iface_config cfg = { .addr = &a, .addrlen = sizeof(a) };
	struct p4t_conn *x;

	xport_teardown();
	a.sin6_port = htons((uint16_t)(20000 + getpid() % 20000));
	cr_assert_eq(side_open_cfg(&sa, &cfg), 0);
	a.sin6_port = htons(ntohs(a.sin6_port) + 1);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	cr_expect_eq(sb.addrlen, sizeof(a));
	cr_expect_eq(p4u_addr_token(&sb.addr, sb.addrlen),
		     p4u_host_token() & 0xffffffffu);
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 3, 3000), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	cr_expect_eq(sb.ev[0].addrlen, sizeof(a));
	cr_expect_eq(memcmp(&sb.ev[0].addr, &sa.addr, sa.addrlen), 0);
	expect_msg(&sb.ev[1], 3, 3000);
}

/* A link that always has a budget's worth waiting starves no other. */
SHM_TEST(a_flooding_link_does_not_starve_the_others)
{
	struct p4t_conn *x, *y, *in;

	shm_side_open(&sc, 0);
	/* sa's link comes up first: the first sc reads */
	x = link_up(&sa, &sc, &in);
	y = link_up(&sb, &sc, &in);
	pump_quiet(20);
	xport_flood_fairness(x, y);
}
