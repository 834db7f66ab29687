/*
 * p4e_test.h - fixture for engine tests: one domain with two NIs ("a" and
 * "b") on the loop transport, a ring EQ each, and helpers to bind MDs,
 * append entries, progress until quiet and read events. Everything is
 * deterministic: nothing moves unless a test calls progress.
 *
 * P4E_TEST_TRANSPORT=tcp runs the same fixture over the TCP transport on
 * 127.0.0.1: progress then also waits until nothing arrives for a few ms
 * (bytes may be in flight). Tests using loop-only hooks (p4t_loop_*) or
 * loop's deterministic interleaving check eng_is_loop() first.
 */
#ifndef P4E_TEST_H
#define P4E_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <criterion/criterion.h>
#include <string.h>

#include "p4e.h"
#include "p4t_loop.h"

/* The fixture's transport: loop unless P4E_TEST_TRANSPORT=tcp. */
static inline bool eng_is_loop(void)
{
	const char *t = getenv("P4E_TEST_TRANSPORT");

	return !t || strcmp(t, "tcp");
}

/* For tests that step the loop transport one message at a time. */
static inline void eng_need_loop(const char *why)
{
	if (!eng_is_loop())
		cr_skip_test("loop transport only: %s", why);
}

/* Transport and listening address of every NI the fixture makes. */
static inline void eng_attr_transport(struct p4e_ni_attr *attr)
{
	static struct sockaddr_in lo;	/* read by p4e_ni_create only */

	attr->transport = eng_is_loop() ? &p4t_loop_ops : &p4t_tcp_ops;
	if (!eng_is_loop()) {
		lo.sin_family = AF_INET;
		lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		attr->addr = &lo;
		attr->addrlen = sizeof(lo);
	}
}

static inline uint64_t eng_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* TCP: whether anything arrives at the fds within ms. */
static inline bool eng_fds_busy(struct p4e_ni *const *nis, int n, int ms)
{
	struct pollfd pfd[8];
	int i;

	for (i = 0; i < n && i < 8; i++) {
		pfd[i].fd = p4e_ni_wait_fd(nis[i]);
		pfd[i].events = POLLIN;
	}
	return poll(pfd, (nfds_t)i, ms) > 0;
}

struct eng {
	struct p4e_dom *dom;
	struct p4e_ni *ni[2];
	struct p4e_eq *eq[2];
	uint32_t id[2];		/* peer id of ni[i] in the domain */
	uint32_t pt[2];		/* a PT on each */
};

static inline void eng_open_opts(struct eng *e, unsigned ni_options,
				 unsigned pt_options, size_t eager)
{
	struct p4e_ni_attr attr;
	char addr[64];
	size_t len;
	int i;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(p4e_dom_create(NULL, &e->dom), 0);
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = ni_options;
		eng_attr_transport(&attr);
		attr.eager_size = eager;
		attr.uid = 1000 + i;
		cr_assert_eq(p4e_ni_create(e->dom, &attr, &e->ni[i]), 0);
		len = sizeof(addr);
		cr_assert_eq(p4e_ni_getname(e->ni[i], addr, &len), 0);
		cr_assert_eq(p4e_peer_lookup(e->dom, addr, len, &e->id[i]), 0);
		cr_assert_eq(p4e_eq_ring_create(256, &e->eq[i]), 0);
		cr_assert_eq(p4e_pt_alloc(e->ni[i], pt_options, e->eq[i],
					  P4E_PT_ANY, &e->pt[i]), 0);
	}
}

static inline void eng_open(struct eng *e)
{
	eng_open_opts(e, P4E_NI_MATCHING | P4E_NI_PHYSICAL, 0, 4096);
}

static inline void eng_close(struct eng *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (e->ni[i])
			cr_expect_eq(p4e_ni_destroy(e->ni[i]), 0);
		p4e_eq_ring_destroy(e->eq[i]);
	}
	cr_expect_eq(p4e_dom_destroy(e->dom), 0);
}

/* Progress both NIs until nothing happens for a few rounds. */
static inline void eng_progress(struct eng *e)
{
	int idle = 0, rounds = 0;

	uint64_t t0 = eng_now_ms();

	while (idle < 3 && rounds++ < 100000) {
		int done = p4e_dom_progress(e->dom, 64);

		if (!done && !eng_is_loop())
			done = eng_fds_busy(e->ni, 2, 3) &&
			       eng_now_ms() - t0 < 10000;
		idle = done ? 0 : idle + 1;
	}
}

static inline uint64_t eng_md(struct eng *e, int side, void *buf, size_t len,
			      unsigned options, uint64_t ct)
{
	struct p4e_md_desc d = {
		.start = buf, .length = len, .options = options,
		.eq = e->eq[side], .ct = ct,
	};
	uint64_t md;

	cr_assert_eq(p4e_md_bind(e->ni[side], &d, &md), 0);
	return md;
}

static inline struct p4e_me_desc eng_me_desc(void *buf, size_t len,
					     unsigned options, uint64_t bits,
					     uint64_t ignore)
{
	struct p4e_me_desc d = {
		.start = buf, .length = len, .ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY, .options = options,
		.match_id = P4E_ID_ANY, .match_bits = bits,
		.ignore_bits = ignore,
	};

	return d;
}

static inline uint64_t eng_append(struct eng *e, int side,
				  const struct p4e_me_desc *d,
				  enum p4e_list list, void *user_ptr)
{
	uint64_t me;

	cr_assert_eq(p4e_me_append(e->ni[side], e->pt[side], d, list, user_ptr,
				   0, &me), 0);
	return me;
}

/* A put from side to the other side's PT. */
static inline struct p4e_xfer eng_xfer(struct eng *e, int side, uint64_t md,
				       size_t len, uint64_t bits)
{
	struct p4e_xfer x = {
		.md = md, .length = len, .ack_req = P4E_ACK_REQ,
		.target = e->id[!side], .pt_index = e->pt[!side],
		.match_bits = bits, .get_md = P4E_HANDLE_NONE,
	};

	return x;
}

/* Next event on side's EQ; fails the test if there is none. */
static inline struct p4e_event eng_event(struct eng *e, int side)
{
	struct p4e_event ev;
	int ret = p4e_eq_ring_get(e->eq[side], &ev);

	cr_assert(ret == 0 || ret == P4E_EQ_DROPPED,
		  "expected an event on side %d, got %d", side, ret);
	return ev;
}

static inline void eng_no_event(struct eng *e, int side)
{
	struct p4e_event ev;

	cr_assert_eq(p4e_eq_ring_get(e->eq[side], &ev), -FI_EAGAIN,
		     "unexpected event type %d on side %d", ev.type, side);
}

/* Pop events until one of type arrives (others must be in skip_mask). */
static inline struct p4e_event eng_event_type(struct eng *e, int side,
					      int type)
{
	struct p4e_event ev;

	for (;;) {
		ev = eng_event(e, side);
		if (ev.type == type)
			return ev;
		cr_assert(ev.type == P4E_EVENT_LINK,
			  "expected event %d on side %d, got %d", type, side,
			  ev.type);
	}
}

/* ---- more NIs: own domains ("processes") or extra NIs in a domain ------- */

/* NI attributes as eng_open uses them (loop transport, physical, matching). */
static inline struct p4e_ni_attr eng_ni_attr(size_t eager)
{
	struct p4e_ni_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL;
	eng_attr_transport(&attr);
	attr.eager_size = eager;
	attr.uid = 2000;
	return attr;
}

/* One NI with a ring EQ of eq_size events and one PT on it. */
struct eng_node {
	struct p4e_dom *dom;
	bool own_dom;		/* created by eng_node_open */
	struct p4e_ni *ni;
	struct p4e_eq *eq;
	uint32_t pt;
};

/* dom NULL: the node gets a domain of its own. */
static inline void eng_node_open(struct eng_node *n, struct p4e_dom *dom,
				 const struct p4e_ni_attr *attr,
				 unsigned pt_options, size_t eq_size)
{
	memset(n, 0, sizeof(*n));
	if (!dom) {
		cr_assert_eq(p4e_dom_create(NULL, &dom), 0);
		n->own_dom = true;
	}
	n->dom = dom;
	cr_assert_eq(p4e_ni_create(dom, attr, &n->ni), 0);
	cr_assert_eq(p4e_eq_ring_create(eq_size, &n->eq), 0);
	cr_assert_eq(p4e_pt_alloc(n->ni, pt_options, n->eq, P4E_PT_ANY,
				  &n->pt), 0);
}

static inline void eng_node_close(struct eng_node *n)
{
	if (n->ni)
		cr_expect_eq(p4e_ni_destroy(n->ni), 0);
	p4e_eq_ring_destroy(n->eq);
	if (n->own_dom)
		cr_expect_eq(p4e_dom_destroy(n->dom), 0);
	memset(n, 0, sizeof(*n));
}

/* The peer id that dom gives ni's address. */
static inline uint32_t eng_peer_of(struct p4e_dom *dom, struct p4e_ni *ni)
{
	char addr[64];
	size_t len = sizeof(addr);
	uint32_t id;

	cr_assert_eq(p4e_ni_getname(ni, addr, &len), 0);
	cr_assert_eq(p4e_peer_lookup(dom, addr, len, &id), 0);
	return id;
}

/* Progress several domains until none has done anything for a while. */
static inline void eng_progress_doms(struct p4e_dom *const *doms, int ndoms)
{
	uint64_t quiet_since = 0;
	int idle = 0, rounds = 0, i;

	while (idle < 3 && rounds++ < 100000) {
		int done = 0;

		for (i = 0; i < ndoms; i++)
			done += p4e_dom_progress(doms[i], 64);
		/* TCP: quiet means 5 ms without work (bytes in flight) */
		if (!done && !eng_is_loop()) {
			if (!quiet_since)
				quiet_since = eng_now_ms();
			if (eng_now_ms() - quiet_since < 5)
				continue;
		}
		quiet_since = done ? 0 : quiet_since;
		idle = done ? 0 : idle + 1;
	}
}

/* Next event on any ring EQ (fails the test if there is none). */
static inline struct p4e_event eng_eq_event(struct p4e_eq *eq)
{
	struct p4e_event ev;
	int ret = p4e_eq_ring_get(eq, &ev);

	cr_assert(ret == 0 || ret == P4E_EQ_DROPPED,
		  "expected an event, got %d", ret);
	return ev;
}

/*
 * Next event on eq, progressing dom until one comes (10 s at most). Over
 * TCP, "quiet for a few ms" is no proof that nothing is in flight on a
 * loaded machine; a test that knows an event is due waits for it here.
 */
static inline struct p4e_event eng_eq_await(struct p4e_dom *dom,
					    struct p4e_eq *eq)
{
	uint64_t t0 = eng_now_ms();
	struct p4e_event ev;
	int ret;

	while ((ret = p4e_eq_ring_get(eq, &ev)) == -FI_EAGAIN &&
	       eng_now_ms() - t0 < 10000)
		p4e_dom_progress(dom, 64);
	cr_assert(ret == 0 || ret == P4E_EQ_DROPPED,
		  "expected an event within 10 s, got %d", ret);
	return ev;
}

/* Pop events from eq until one of type (others must be LINK). */
static inline struct p4e_event eng_eq_event_type(struct p4e_eq *eq, int type)
{
	struct p4e_event ev;

	for (;;) {
		ev = eng_eq_event(eq);
		if (ev.type == type)
			return ev;
		cr_assert(ev.type == P4E_EVENT_LINK,
			  "expected event %d, got %d", type, ev.type);
	}
}

static inline void eng_eq_empty(struct p4e_eq *eq)
{
	struct p4e_event ev;

	cr_assert_eq(p4e_eq_ring_get(eq, &ev), -FI_EAGAIN,
		     "unexpected event type %d", ev.type);
}

static inline struct p4e_ct_event eng_ct(struct p4e_dom *dom, uint64_t ct)
{
	struct p4e_ct_event v;

	cr_assert_eq(p4e_ct_get(dom, ct, &v), 0);
	return v;
}

/* Pop events until one of type; others must have their bit (1 << kind) in
 * skip_mask. */
static inline struct p4e_event eng_event_skip(struct p4e_eq *eq, int type,
					      unsigned skip_mask)
{
	struct p4e_event ev;

	for (;;) {
		ev = eng_eq_event(eq);
		if (ev.type == type)
			return ev;
		cr_assert(skip_mask & (1u << ev.type),
			  "expected event %d, got %d", type, ev.type);
	}
}

/* ---- what initiators and targets saw, by user_ptr (0 .. ENG_LOG_MAX) --- */

#define ENG_LOG_MAX	64
/* Entries whose user_ptr is at least this are not counted as messages. */
#define ENG_LOG_OTHER	(ENG_LOG_MAX - 2)

struct eng_txlog {
	int ack[ENG_LOG_MAX][P4E_NI_FAIL_MAX];
	int reply[ENG_LOG_MAX][P4E_NI_FAIL_MAX];
	int send[ENG_LOG_MAX][P4E_NI_FAIL_MAX];
};

/* Count eq's SEND / ACK / REPLY events by the op's user_ptr and failure. */
static inline void eng_txlog_drain(struct p4e_eq *eq, struct eng_txlog *l)
{
	struct p4e_event ev;
	int idx;

	while (p4e_eq_ring_get(eq, &ev) != -FI_EAGAIN) {
		idx = (int)(intptr_t)ev.user_ptr;
		cr_assert(idx >= 0 && idx < ENG_LOG_MAX &&
			  ev.ni_fail_type < P4E_NI_FAIL_MAX);
		if (ev.type == P4E_EVENT_ACK)
			l->ack[idx][ev.ni_fail_type]++;
		else if (ev.type == P4E_EVENT_REPLY)
			l->reply[idx][ev.ni_fail_type]++;
		else if (ev.type == P4E_EVENT_SEND)
			l->send[idx][ev.ni_fail_type]++;
	}
}

/*
 * A target's view when message i (hdr_data i) is meant for the entry with
 * user_ptr i: got[i] counts its deliveries (PUT on the priority list or
 * PUT_OVERFLOW), which must carry hdr_data i.
 */
struct eng_rxlog {
	int got[ENG_LOG_MAX];
	int delivered;		/* to entries below ENG_LOG_OTHER */
	int other;		/* deliveries to entries from ENG_LOG_OTHER */
	int oflow_puts;		/* PUT on the overflow list */
	int pt_disabled;
	int errors;		/* other events with a failure */
	bool dropped;		/* the EQ said events were lost */
};

static inline void eng_rxlog_drain(struct p4e_eq *eq, struct eng_rxlog *l)
{
	struct p4e_event ev;
	int ret, idx;

	while ((ret = p4e_eq_ring_get(eq, &ev)) != -FI_EAGAIN) {
		l->dropped |= ret == P4E_EQ_DROPPED;
		if (ev.type == P4E_EVENT_PT_DISABLED)
			l->pt_disabled++;
		else if (ev.ni_fail_type != P4E_NI_OK)
			l->errors++;
		if (ev.type == P4E_EVENT_PUT && ev.list == P4E_OVERFLOW_LIST) {
			l->oflow_puts++;
			continue;
		}
		if (ev.type != P4E_EVENT_PUT &&
		    ev.type != P4E_EVENT_PUT_OVERFLOW)
			continue;
		idx = (int)(intptr_t)ev.user_ptr;
		cr_assert(idx >= 0 && idx < ENG_LOG_MAX);
		if (idx >= ENG_LOG_OTHER) {
			l->other++;
			continue;
		}
		cr_expect_eq(ev.hdr_data, (uint64_t)idx,
			     "entry %d got message %lu", idx,
			     (unsigned long)ev.hdr_data);
		l->got[idx]++;
		l->delivered++;
	}
}

/* ---- list and header tests: events of the eng pair by side -------------- */

/* The next event on side, which must be of type. */
static inline struct p4e_event eng_ev_is(struct eng *e, int side, int type)
{
	struct p4e_event ev = eng_event(e, side);

	cr_assert_eq(ev.type, type, "side %d: event %d, expected %d", side,
		     ev.type, type);
	return ev;
}

/* An initiator's SEND then ACK on side, the ACK with fail and mlength. */
static inline struct p4e_event eng_ini_done(struct eng *e, int side,
					    int fail, uint64_t mlength)
{
	struct p4e_event ev;

	eng_ev_is(e, side, P4E_EVENT_SEND);
	ev = eng_ev_is(e, side, P4E_EVENT_ACK);
	cr_expect_eq(ev.ni_fail_type, fail, "ack fail %d, expected %d",
		     ev.ni_fail_type, fail);
	cr_expect_eq(ev.mlength, mlength);
	return ev;
}

/* The next ACK or REPLY on side; SEND events before it are skipped. */
static inline struct p4e_event eng_ack_next(struct eng *e, int side)
{
	struct p4e_event ev;

	do
		ev = eng_event(e, side);
	while (ev.type == P4E_EVENT_SEND);
	cr_assert(ev.type == P4E_EVENT_ACK || ev.type == P4E_EVENT_REPLY,
		  "side %d: event %d", side, ev.type);
	return ev;
}

/* Throw away every event waiting on side. */
static inline void eng_drain(struct eng *e, int side)
{
	struct p4e_event ev;

	while (p4e_eq_ring_get(e->eq[side], &ev) != -FI_EAGAIN)
		;
}

static inline int64_t eng_sr(struct eng *e, int side, enum p4e_sr_index i)
{
	int64_t v;

	cr_assert_eq(p4e_ni_status(e->ni[side], i, &v), 0);
	return v;
}

/* Put len bytes of buf from side to the other side's PT (ACK_REQ). */
static inline void eng_put_buf(struct eng *e, int side, void *buf, size_t len,
			       uint64_t bits, uint64_t hdr_data)
{
	uint64_t md = eng_md(e, side, buf, len, 0, P4E_HANDLE_NONE);
	struct p4e_xfer x = eng_xfer(e, side, md, len, bits);

	x.hdr_data = hdr_data;
	cr_assert_eq(p4e_put(e->ni[side], &x), 0);
}

#endif /* P4E_TEST_H */
