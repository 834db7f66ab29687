/*
 * test_shm_fail.c - failures on the shared-memory transport: iface_close
 * and conn_close with pulls, pushes and sends pending (rma_done with an
 * error before iface_close returns; the peer reads what was written,
 * then gets conn_failed), and a peer process killed with SIGKILL in the
 * middle of a stream: the survivor gets its error completions and
 * conn_failed within a bounded time, the segment leaves its address
 * space, and nothing is left in /dev/shm.
 *
 * Not here: messages (test_shm.c), RMA refusals (test_shm_rma.c).
 */
#include <config.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#define SHM_SUITE	shm_fail
#include "p4t_shm_test.h"

TestSuite(shm_fail, .init = shm_setup, .fini = shm_teardown, .timeout = 120);

/* Lines of /proc/self/maps naming what. */
static int maps_of(const char *what)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* Our links' segments. */
static int maps_segments(void)
{
	return maps_of("memfd:portals-shm");
}

/* Doorbell pages: each open side's own, and one per link (the peer's). */
static int maps_bells(void)
{
	return maps_of("memfd:portals-bells");
}

/*
 * Entries of /dev/shm that could be ours: named for the transport or for
 * one of the two processes (other programs, Criterion's runner among
 * them, come and go there meanwhile).
 */
static int dev_shm_ours(pid_t kid)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	char me[32], him[32];
	int n = 0;

	if (!d)
		return 0;
	snprintf(me, sizeof(me), "%d", (int)getpid());
	snprintf(him, sizeof(him), "%d", (int)kid);
	while ((e = readdir(d)))
		n += strstr(e->d_name, "portals") ||
		     (strstr(e->d_name, me) && strncmp(e->d_name, "bxfi_", 5)) ||
		     strstr(e->d_name, him);
	closedir(d);
	return n;
}

SHM_TEST(iface_close_completes_pending_operations)
{
	static uint8_t src[1 << 16], dst[1 << 16];
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo = { src, sizeof(src) }, loc = { dst, sizeof(dst) };
	int tag[3];
	uint32_t i;

	x = link_up(&sa, &sb, &y);
	pump_quiet(20);
	cr_assert_gt(maps_segments(), 0);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1,
				    P4T_ACCESS_READ | P4T_ACCESS_WRITE, &ck,
				    &mem), 0);
	/* sb does not progress: these wait for it */
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &loc, 1, 1000, &tag[0]), 0);
	cr_assert_eq(p4t_push(sa.iface, x, &loc, 1, 1000, &ck, 0, &tag[1]), 0);
	sa.free_on_done = true;
	for (i = 0; i < 20; i++)
		cr_assert_geq(send_msg(&sa, x, P4W_ACK, i, 100000, false), 0);
	cr_assert(p4t_owes(sa.iface));
	side_close(&sa);
	/* before it returned, and nothing else: no send_done, no failure */
	cr_expect_eq(count(&sa, UP_RMA_DONE), 2);
	cr_expect_lt(find_ctx(&sa, &tag[0]) >= 0 ?
		     sa.ev[find_ctx(&sa, &tag[0])].status : 0, 0);
	cr_expect_lt(find_ctx(&sa, &tag[1]) >= 0 ?
		     sa.ev[find_ctx(&sa, &tag[1])].status : 0, 0);
	cr_expect_eq(count(&sa, UP_SEND_DONE) + count(&sa, UP_CONN_FAILED), 0);
	/* the peer reads what was written, then sees the link fail */
	PUMP_UNTIL(count(&sb, UP_CONN_FAILED) == 1);
	cr_expect_geq(count(&sb, UP_RECV), 1);
	for (i = 0; i < sb.nev && sb.ev[i].kind == UP_RECV; i++)
		cr_expect_eq(sb.ev[i].seq, i);
	cr_expect_eq(sb.ev[sb.nev - 1].kind, UP_CONN_FAILED);
	cr_expect_eq(sb.ev[sb.nev - 1].status, -FI_ECONNRESET);
	p4t_mem_unexpose(sb.iface, mem);
	pump_quiet(10);
	cr_expect_eq(maps_segments(), 0, "a segment is still mapped");
}

SHM_TEST(conn_close_fails_its_operations_later)
{
	static uint8_t src[4096], dst[4096];
	struct p4t_conn *x, *y;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo = { src, sizeof(src) }, loc = { dst, sizeof(dst) };
	int tag;

	x = link_up(&sa, &sb, &y);
	cr_assert_eq(p4t_mem_expose(sb.iface, y, &expo, 1, P4T_ACCESS_READ,
				    &ck, &mem), 0);
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &loc, 1, 100, &tag), 0);
	p4t_conn_close(sa.iface, x);
	cr_expect_eq(count(&sa, UP_RMA_DONE), 0);
	PUMP_UNTIL(count(&sa, UP_RMA_DONE) == 1 &&
		   count(&sb, UP_CONN_FAILED) == 1);
	cr_expect_eq(sa.ev[find_ctx(&sa, &tag)].status, -FI_ECONNABORTED);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	p4t_mem_unexpose(sb.iface, mem);
}

/* ---- a peer process killed mid-stream ------------------------------------ */

#define KID_BUF		((size_t)4 << 20)
#define KID_PORT	4000

static void kid_fill(uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + (i >> 12));
}

/*
 * The child: connects to sa, exposes KID_BUF bytes, sends their cookie,
 * then streams messages and progresses until it is killed. No Criterion
 * here: a failure exits, and the parent times out.
 */
static void kid_main(struct sockaddr_storage to, size_t tolen)
{
	static uint8_t buf[KID_BUF];
	struct side *s = &sc;
	struct p4t_conn *conn;
	struct p4t_mem *mem;
	struct p4w_cookie ck;
	struct iovec expo = { buf, sizeof(buf) }, iov = { &ck, sizeof(ck) };
	uint8_t hdr[HL] = { 0 };
	uint32_t seq = 1;

	memset(s, 0, sizeof(*s));
	kid_fill(buf, sizeof(buf));
	if (side_open_shm(s, 0, KID_PORT) ||
	    p4t_conn_get(s->iface, &to, tolen, &conn) ||
	    p4t_mem_expose(s->iface, conn, &expo, 1, P4T_ACCESS_READ, &ck,
			   &mem))
		_exit(3);
	hdr_make(hdr, P4W_PUT, HL + sizeof(ck), 0);
	if (p4t_send(s->iface, conn, hdr, HL, &iov, 1, NULL, P4T_SEND_SEQ) < 0)
		_exit(4);
	for (;;) {
		if (send_msg(s, conn, P4W_PUT, seq, 3000, false) == P4T_DONE)
			seq++;
		(void)p4u_timerq_run(&s->timers, p4u_time_ns());
		(void)p4t_progress(s->iface, 64);
		side_forget(s);
	}
}

SHM_TEST(peer_killed_mid_stream)
{
	static uint8_t dst[KID_BUF], want[KID_BUF];
	struct p4w_cookie ck;
	struct p4t_conn *x;
	struct iovec loc = { dst, sizeof(dst) };
	int tag[4], status, i;
	uint64_t t0;
	pid_t kid;

	side_close(&sb);
	kid_fill(want, sizeof(want));
	kid = fork();
	cr_assert_geq(kid, 0);
	if (!kid)
		kid_main(sa.addr, sa.addrlen);
	PUMP_UNTIL(count(&sa, UP_RECV) >= 1);
	cr_assert_eq(sa.ev[0].kind, UP_CONN_NEW);
	x = sa.ev[0].conn;
	cr_assert_eq(sa.ev[1].len, HL + sizeof(ck));
	memcpy(&ck, sa.ev[1].msg + HL, sizeof(ck));
	/* the child's memory, read across processes */
	cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &loc, 1, sizeof(dst),
			      &tag[0]), 0);
	PUMP_UNTIL(find_ctx(&sa, &tag[0]) >= 0);
	cr_assert_eq(sa.ev[find_ctx(&sa, &tag[0])].status, 0);
	cr_expect_eq(memcmp(dst, want, sizeof(dst)), 0);
	/* by cross-memory attach and the child's stream through the ring */
	cr_expect_geq(stats_of(&sa).cma_bytes + stats_of(&sa).ring_rma_bytes,
		      sizeof(dst));
	cr_assert_gt(maps_segments(), 0);
	cr_expect_eq(maps_bells(), 2, "sa's doorbells and the child's");
	cr_expect_eq(dev_shm_ours(kid), 0, "something of ours in /dev/shm");
	/* mid-stream: messages flowing, pulls asked */
	PUMP_UNTIL(count(&sa, UP_RECV) >= 200);
	for (i = 1; i < 4; i++)
		cr_assert_eq(p4t_pull(sa.iface, x, &ck, 0, &loc, 1,
				      sizeof(dst), &tag[i]), 0);
	cr_assert_eq(kill(kid, SIGKILL), 0);
	t0 = now_ms();
	cr_assert_eq(waitpid(kid, &status, 0), kid);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the child ended otherwise (status 0x%x)", status);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_expect_lt(now_ms() - t0, 5000, "failure seen after %llu ms",
		     (unsigned long long)(now_ms() - t0));
	for (i = 1; i < 4; i++)
		cr_expect_geq(find_ctx(&sa, &tag[i]), 0, "pull %d open", i);
	cr_expect_eq(sa.ev[sa.nev - 1].kind, UP_CONN_FAILED);
	cr_expect_eq(sa.ev[sa.nev - 1].status, -FI_ECONNRESET);
	pump_quiet(10);
	cr_expect_eq(maps_segments(), 0, "the segment is still mapped");
	cr_expect_eq(maps_bells(), 1, "the child's doorbells are still mapped");
	cr_expect_eq(stats_of(&sa).links, 0);
	cr_expect_eq(dev_shm_ours(kid), 0, "something of ours in /dev/shm");
}

/* ---- a peer gone before its link is accepted ------------------------------ */

/*
 * The child connects, sends three messages and exits before this side
 * has looked at its connection at all (as a program that sends, then
 * calls _exit): what it wrote is delivered, in order, and then the link
 * fails. Both the credential check (its /proc entry is gone) and the
 * HELLO_ACK (EPIPE) meet a dead peer; either once lost the messages.
 */
SHM_TEST(peer_gone_before_accept_still_delivers)
{
	struct side *s = &sc;
	struct p4t_conn *conn;
	int status, i;
	size_t n;
	pid_t kid;

	side_close(&sb);
	kid = fork();
	cr_assert_geq(kid, 0);
	if (!kid) {
		memset(s, 0, sizeof(*s));
		if (side_open_shm(s, 0, KID_PORT + 1) ||
		    p4t_conn_get(s->iface, &sa.addr, sa.addrlen, &conn))
			_exit(3);
		for (i = 1; i <= 3; i++)
			if (send_msg(s, conn, P4W_PUT, (uint32_t)i, 100 * i,
				     false) != P4T_DONE)
				_exit(4);
		_exit(0);
	}
	cr_assert_eq(waitpid(kid, &status, 0), kid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status),
		  "child status 0x%x", status);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_assert_eq(count(&sa, UP_RECV), 3, "the dead peer's messages");
	for (i = 0, n = 0; i < (int)sa.nev; i++)
		if (sa.ev[i].kind == UP_RECV) {
			n++;
			expect_msg(&sa.ev[i], (uint32_t)n, 100 * n);
		}
	cr_expect_eq(sa.ev[sa.nev - 1].kind, UP_CONN_FAILED);
	pump_quiet(10);
	cr_expect_eq(maps_segments(), 0, "the segment is still mapped");
	cr_expect_eq(maps_bells(), 1, "the child's doorbells are still mapped");
}

/*
 * Fixed bug: a send with op_ctx on our link before the peer answered its
 * HELLO went into the ring and was done at once (P4T_DONE), so a peer
 * that died before it answered (or never mapped the ring) lost it while
 * its sender heard it was sent; a copied eager put then completed with
 * success. As over TCP, its send_done now waits for the HELLO_ACK: an
 * error when the link fails first. The child listens, then stops
 * without ever progressing, and is killed.
 */
SHM_TEST(unanswered_link_sends_wait_then_fail)
{
	struct sockaddr_in to;
	struct p4t_conn *conn;
	int pipefd[2], status, ret;
	char c = 0;
	pid_t kid;
	long i;

	cr_assert_eq(pipe(pipefd), 0);
	kid = fork();
	cr_assert_geq(kid, 0);
	if (!kid) {
		struct side *s = &sc;

		memset(s, 0, sizeof(*s));
		if (side_open_shm(s, 0, KID_PORT + 2))
			_exit(3);
		if (write(pipefd[1], &c, 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	cr_assert_eq(read(pipefd[0], &c, 1), 1);
	to = shm_addr_of(kid, KID_PORT + 2);
	cr_assert_eq(p4t_conn_get(sa.iface, &to, sizeof(to), &conn), 0);
	sa.free_on_done = true;
	ret = send_msg(&sa, conn, P4W_PUT, 1, 100, true);
	cr_expect_eq(ret, P4T_QUEUED, "done (%d) before the peer answered",
		     ret);
	/* answered without op_ctx: nothing to wait for */
	cr_expect_eq(send_msg(&sa, conn, P4W_ACK, 2, 100, false), P4T_DONE);
	pump_quiet(20);
	cr_expect_eq(count(&sa, UP_SEND_DONE), 0, "send_done before an answer");
	cr_assert_eq(kill(kid, SIGKILL), 0);
	cr_assert_eq(waitpid(kid, &status, 0), kid);
	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) == 1);
	cr_assert_eq(count(&sa, UP_SEND_DONE), 1);
	for (i = 0; i < (long)sa.nev; i++)
		if (sa.ev[i].kind == UP_SEND_DONE)
			cr_expect_lt(sa.ev[i].status, 0, "sent to no one");
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The same send on a link the peer answers: done once it has. */
SHM_TEST(answered_link_sends_are_done)
{
	struct p4t_conn *conn;
	long i;
	int ret;

	conn = conn_to(&sa, &sb);
	sa.free_on_done = true;
	ret = send_msg(&sa, conn, P4W_PUT, 1, 100, true);
	cr_expect(ret == P4T_QUEUED || ret == P4T_DONE, "%d", ret);
	PUMP_UNTIL(count(&sb, UP_RECV) == 1);
	if (ret == P4T_QUEUED)
		PUMP_UNTIL(count(&sa, UP_SEND_DONE) == 1);
	cr_expect_eq(count(&sa, UP_CONN_FAILED), 0);
	for (i = 0; i < (long)sa.nev; i++)
		if (sa.ev[i].kind == UP_SEND_DONE)
			cr_expect_eq(sa.ev[i].status, 0);
	/* the link is up: done at once */
	cr_expect_eq(send_msg(&sa, conn, P4W_PUT, 2, 100, true), P4T_DONE);
}
