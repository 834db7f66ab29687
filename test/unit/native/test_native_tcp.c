/*
 * test_native_tcp.c - libportals between two processes over TCP on
 * 127.0.0.1: the test forks a target process; the two synchronise over
 * pipes only to know when the target's entries exist. Covers physical
 * addressing (nid = IPv4 address, pid -> port), PTL_PID_IN_USE, put / get
 * / atomic with their acks and replies and the target's event fields, and
 * a put to a process that is not there.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptl_test.h"

#define LO	0x7f000001u

static char tbuf[256];

static void tcp_env(void)
{
	char base[16];

	/* 4 ports per pid, a fresh range per test process */
	snprintf(base, sizeof(base), "%d", 20000 + (getpid() % 500) * 24);
	setenv("PTL_PORT_BASE", base, 1);
	setenv("PTL_TRANSPORT", "tcp", 1);
	setenv("PTL_PID", "3", 1);	/* what PTL_PID_ANY takes */
	unsetenv("PTL_IFACE");
}

static void fini(void)
{
	PtlFini();
}

TestSuite(native_tcp, .fini = fini, .timeout = 120);

/* The target: entries on PT 0, then reports every event it sees. */
static int target_main(int ready_fd, int done_fd)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t h;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	ptl_me_t me;
	char c = 'r';
	int ok = 1, i;

	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 1,
		      NULL, NULL, &ni) != PTL_OK ||
	    PtlEQAlloc(ni, 64, &eq) != PTL_OK ||
	    PtlPTAlloc(ni, 0, eq, 0, &pt) != PTL_OK)
		return 10;
	for (i = 0; i < (int)sizeof(tbuf); i++)
		tbuf[i] = (char)i;
	memset(&me, 0, sizeof(me));
	me.start = tbuf;
	me.length = sizeof(tbuf);
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_LINK_DISABLE;
	me.match_id = t_phys(LO, 2);	/* only the test process */
	me.match_bits = 0x42;
	if (PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h) != PTL_OK)
		return 11;
	if (write(ready_fd, &c, 1) != 1)
		return 12;
	/* put, get, atomic */
	if (PtlEQWait(eq, &ev) != PTL_OK || ev.type != PTL_EVENT_PUT ||
	    ev.initiator.phys.nid != LO || ev.initiator.phys.pid != 2 ||
	    ev.mlength != 16 || ev.remote_offset != 32 ||
	    ev.hdr_data != 0xfeed || ev.match_bits != 0x42 ||
	    ev.start != tbuf + 32)
		ok = 0;
	if (PtlEQWait(eq, &ev) != PTL_OK || ev.type != PTL_EVENT_GET ||
	    ev.mlength != 64)
		ok = 0;
	if (PtlEQWait(eq, &ev) != PTL_OK || ev.type != PTL_EVENT_ATOMIC ||
	    ev.atomic_operation != PTL_SUM ||
	    ev.atomic_type != PTL_UINT64_T)
		ok = 0;
	if (read(done_fd, &c, 1) != 1)
		ok = 0;
	PtlMEUnlink(h);
	PtlNIFini(ni);
	PtlFini();
	return ok ? 0 : 20;
}

static pid_t start_target(int *ready_rd, int *done_wr)
{
	int ready[2], done[2];
	pid_t pid;

	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(done), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		close(ready[0]);
		close(done[1]);
		_exit(target_main(ready[1], done[0]));
	}
	close(ready[1]);
	close(done[0]);
	*ready_rd = ready[0];
	*done_wr = done[1];
	return pid;
}

Test(native_tcp, two_processes)
{
	char src[64], dst[64], c;
	int ready, done, status, i;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md, dmd;
	ptl_process_t target = t_phys(LO, 1), id;
	uint64_t one = 1;
	ptl_event_t ev;
	pid_t child;

	tcp_env();
	child = start_target(&ready, &done);
	cr_assert_eq(read(ready, &c, 1), 1);
	cr_assert_eq(PtlInit(), PTL_OK);
	/* the target process holds pid 1 */
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, 1, NULL,
			       NULL, &ni), PTL_PID_IN_USE);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, 2, NULL,
			       NULL, &ni), PTL_OK);
	cr_assert_eq(PtlGetPhysId(ni, &id), PTL_OK);
	cr_assert_eq(id.phys.nid, LO);
	cr_assert_eq(id.phys.pid, 2);
	cr_assert_eq(PtlEQAlloc(ni, 64, &eq), PTL_OK);
	for (i = 0; i < 64; i++)
		src[i] = (char)(100 + i);
	md = t_md(ni, src, sizeof(src), eq, PTL_CT_NONE,
		  PTL_MD_EVENT_SEND_DISABLE);
	dmd = t_md(ni, dst, sizeof(dst), eq, PTL_CT_NONE, 0);
	cr_assert_eq(PtlPut(md, 0, 16, PTL_ACK_REQ, target, 0, 0x42, 32, NULL,
			    0xfeed), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	cr_assert_eq(ev.mlength, 16);
	cr_assert_eq(PtlGet(dmd, 0, 64, target, 0, 0x42, 0, NULL), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_REPLY);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	for (i = 0; i < 64; i++) {
		if (i >= 32 && i < 48)
			cr_assert_eq(dst[i], (char)(100 + i - 32));
		else
			cr_assert_eq(dst[i], (char)i);
	}
	memcpy(src, &one, 8);
	cr_assert_eq(PtlAtomic(md, 0, 8, PTL_ACK_REQ, target, 0, 0x42, 0, NULL,
			       0, PTL_SUM, PTL_UINT64_T), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_OK);
	/* wrong match bits from here: dropped at the target */
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ, target, 0, 0x43, 0, NULL,
			    0), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_DROPPED);
	cr_assert_eq(write(done, &c, 1), 1);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0);
	close(ready);
	close(done);
}

Test(native_tcp, nobody_there)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_process_t id;
	ptl_event_t ev;
	char buf[8] = { 0 };

	tcp_env();
	/* refused connects are retried this long (it may start late) */
	setenv("PTL_PEER_TIMEOUT", "1000", 1);
	cr_assert_eq(PtlInit(), PTL_OK);
	cr_assert_eq(PtlNIInit(PTL_IFACE_DEFAULT,
			       PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			       NULL, NULL, &ni), PTL_OK);
	cr_assert_eq(PtlEQAlloc(ni, 8, &eq), PTL_OK);
	md = t_md(ni, buf, 8, eq, PTL_CT_NONE, PTL_MD_EVENT_SEND_DISABLE);
	/* the next pid of this host: nobody listens there */
	cr_assert_eq(PtlGetPhysId(ni, &id), PTL_OK);
	cr_assert_eq(id.phys.pid, 3);
	cr_assert_eq(PtlPut(md, 0, 8, PTL_ACK_REQ,
			    t_phys(LO, (id.phys.pid + 1) % PTL_PID_MAX), 0, 0,
			    0, NULL, 0), PTL_OK);
	ev = t_event_type(eq, PTL_EVENT_ACK);
	cr_assert_eq(ev.ni_fail_type, PTL_NI_UNDELIVERABLE);
}
