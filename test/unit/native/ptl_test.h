/*
 * ptl_test.h - helpers for the libportals tests: open the library on the
 * loop transport (one process, deterministic addresses, no sockets) or on
 * TCP, open an NI with an EQ and a PT, bind MDs, append entries, and wait
 * for events with a generous timeout.
 */
#ifndef PTL_TEST_H
#define PTL_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "portals4.h"

#define T_TIMEOUT_MS	20000

/*
 * PtlInit on the loop transport, pid 7 (PTL_PID); PTL_TEST_TRANSPORT=tcp
 * runs the same tests over TCP on 127.0.0.1 (a port range per process).
 */
static inline void t_init_loop(void)
{
	const char *t = getenv("PTL_TEST_TRANSPORT");
	char base[16];

	if (t && !strcmp(t, "tcp")) {
		snprintf(base, sizeof(base), "%d",
			 20000 + (getpid() % 375) * 32);
		setenv("PTL_PORT_BASE", base, 1);
		setenv("PTL_TRANSPORT", "tcp", 1);
	} else {
		setenv("PTL_TRANSPORT", "loop", 1);
	}
	setenv("PTL_PID", "7", 1);
	unsetenv("PTL_IFACE");
	cr_assert_eq(PtlInit(), PTL_OK);
}

static inline ptl_process_t t_phys(ptl_nid_t nid, ptl_pid_t pid)
{
	ptl_process_t p;

	memset(&p, 0, sizeof(p));
	p.phys.nid = nid;
	p.phys.pid = pid;
	return p;
}

static inline ptl_process_t t_rank(ptl_rank_t r)
{
	ptl_process_t p;

	memset(&p, 0, sizeof(p));
	p.rank = r;
	return p;
}

static inline ptl_process_t t_any(void)
{
	return t_phys(PTL_NID_ANY, PTL_PID_ANY);
}

static inline ptl_handle_ni_t t_ni(unsigned options)
{
	ptl_handle_ni_t ni;

	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT, options, PTL_PID_ANY, NULL,
			       NULL, &ni), PTL_OK);
	return ni;
}

/* A matching, physical NI on loop with a 64-event EQ and one PT. */
static inline void t_open_pt(ptl_handle_ni_t *ni, ptl_handle_eq_t *eq,
			     ptl_pt_index_t *pt, ptl_process_t *self)
{
	t_init_loop();
	*ni = t_ni(PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	cr_assert_eq(PtlEQAlloc(*ni, 64, eq), PTL_OK);
	cr_assert_eq(PtlPTAlloc(*ni, 0, *eq, PTL_PT_ANY, pt), PTL_OK);
	cr_assert_eq(PtlGetId(*ni, self), PTL_OK);
}

static inline ptl_handle_md_t t_md(ptl_handle_ni_t ni, void *buf,
				   ptl_size_t len, ptl_handle_eq_t eq,
				   ptl_handle_ct_t ct, unsigned options)
{
	ptl_handle_md_t h;
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = len;
	md.eq_handle = eq;
	md.ct_handle = ct;
	md.options = options;
	cr_assert_eq(PtlMDBind(ni, &md, &h), PTL_OK);
	return h;
}

static inline ptl_me_t t_me_desc(void *buf, ptl_size_t len, unsigned options,
				 ptl_match_bits_t bits, ptl_handle_ct_t ct)
{
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = options;
	me.match_id = t_any();
	me.match_bits = bits;
	return me;
}

/* Append an ME; returns its handle. */
static inline ptl_handle_me_t t_me(ptl_handle_ni_t ni, ptl_pt_index_t pt,
				   void *buf, ptl_size_t len, unsigned options,
				   ptl_match_bits_t bits, ptl_list_t list,
				   ptl_handle_ct_t ct)
{
	ptl_me_t me = t_me_desc(buf, len, options, bits, ct);
	ptl_handle_me_t h;

	cr_assert_eq(PtlMEAppend(ni, pt, &me, list, NULL, &h), PTL_OK);
	return h;
}

/* The next event (fails the test after T_TIMEOUT_MS). */
static inline ptl_event_t t_event(ptl_handle_eq_t eq)
{
	ptl_event_t ev;
	unsigned which;
	int ret;

	ret = PtlEQPoll(&eq, 1, T_TIMEOUT_MS, &ev, &which);
	cr_assert(ret == PTL_OK || ret == PTL_EQ_DROPPED,
		  "no event: %d", ret);
	return ev;
}

/* The next event of a type, skipping others. */
static inline ptl_event_t t_event_type(ptl_handle_eq_t eq,
				       ptl_event_kind_t type)
{
	ptl_event_t ev;
	int n;

	for (n = 0; n < 64; n++) {
		ev = t_event(eq);
		if (ev.type == type)
			return ev;
	}
	cr_assert_fail("no event of type %d", type);
	return ev;
}

static inline void t_no_event(ptl_handle_eq_t eq)
{
	ptl_event_t ev;
	unsigned which;

	cr_assert_eq(PtlEQPoll(&eq, 1, 50, &ev, &which), PTL_EQ_EMPTY,
		     "unexpected event type %d", ev.type);
}

/* CLOCK_MONOTONIC in ns, for tests that time a wait. */
static inline uint64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The fixture of most native suites: before each test an NI on loop with
 * an EQ and a PT (t_open_pt) in ni, eq, pt and self; PtlFini after it.
 */
#define T_PT_SUITE(suite)						\
	static ptl_handle_ni_t ni;					\
	static ptl_handle_eq_t eq;					\
	static ptl_pt_index_t pt;					\
	static ptl_process_t self;					\
	static void t_suite_setup(void)					\
	{								\
		t_open_pt(&ni, &eq, &pt, &self);			\
	}								\
	static void t_suite_teardown(void)				\
	{								\
		PtlFini();						\
	}								\
	TestSuite(suite, .init = t_suite_setup,				\
		  .fini = t_suite_teardown, .timeout = 60)

#endif /* PTL_TEST_H */
