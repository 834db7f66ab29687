/*
 * shm_bench.c - what idle links cost the shared-memory transport, and
 * what its doorbells save: an 8-byte ping-pong between two processes
 * through p4t_shm alone (p4t_send of a 72-byte PUT header plus the
 * payload, echoed from the recv upcall), while a third process holds K
 * more links to each of them and never sends again (as the other ranks
 * of an MPI job on the node, waiting). For each K, the one-way latency
 * and the cost of an idle progress call of the pinging process, with
 * doorbells (the default past P4T_SHM_BELL_LINKS links) and with every
 * ring read at each call (p4t_shm_set_bells), in one run. Prints a
 * Markdown table with ratios.
 *
 *   shm_bench [-i iterations]
 */
#include <config.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "p4t.h"
#include "p4t_shm.h"
#include "p4_wire.h"
#include "p4u_time.h"
#include "p4u_timer.h"

#define SB_HL		72	/* a PUT header and body */
#define SB_IDLE_MAX	63
#define SB_EVERY	100000	/* links: more than any run has */

static const int sb_idle[] = { 0, 3, 15, 63 };
#define SB_NIDLE	(sizeof(sb_idle) / sizeof(sb_idle[0]))

struct sb_side {
	struct p4t_iface *iface;
	struct p4u_timerq timers;
	struct sockaddr_in addr;
};

static int sb_iters = 20000;
static uint16_t sb_port;
static unsigned long sb_recvs;
static uint8_t sb_payload[8];

static double sb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void sb_die(const char *what)
{
	fprintf(stderr, "shm_bench: %s\n", what);
	exit(1);
}

/* ctx non-NULL: the echo server; payload 1 B: read every ring from now
 * on, 2 B: by the doorbells again, 3 B: stop. */
static int sb_recv(void *ctx, struct p4t_conn *conn, const void *msg,
		   size_t len)
{
	struct sb_side *s = ctx;
	const uint8_t *p = msg;

	sb_recvs++;
	if (!s)
		return 0;
	if (len == SB_HL + 1 || len == SB_HL + 2)
		p4t_shm_set_bells(s->iface, len == SB_HL + 1 ? SB_EVERY :
				  P4T_SHM_BELL_LINKS, P4T_SHM_BELL_FULL,
				  P4T_SHM_BELL_HOT, true);
	(void)p4t_send(s->iface, conn, p, SB_HL, &(struct iovec){
		       (void *)(p + SB_HL), len - SB_HL }, 1, NULL,
		       P4T_SEND_SEQ);
	return 0;
}

static void sb_done(void *ctx, void *op_ctx, int status)
{
	(void)ctx; (void)op_ctx; (void)status;
}

static int sb_conn_new(void *ctx, struct p4t_conn *conn, const void *addr,
		       size_t addrlen)
{
	(void)ctx; (void)conn; (void)addr; (void)addrlen;
	return 0;
}

static void sb_conn_failed(void *ctx, struct p4t_conn *conn, int status)
{
	(void)ctx; (void)conn; (void)status;
}

static const struct p4t_upcalls sb_upcalls = {
	.recv = sb_recv,
	.send_done = sb_done,
	.rma_done = sb_done,
	.conn_new = sb_conn_new,
	.conn_failed = sb_conn_failed,
};

/* Side n listens on 127.0.0.1, port sb_port + n. */
static void sb_open(struct sb_side *s, int n, bool server)
{
	struct p4t_iface_config cfg = {
		.addr = &s->addr, .addrlen = sizeof(s->addr),
		.upcalls = &sb_upcalls, .upcall_ctx = server ? s : NULL,
		.timers = &s->timers,
	};

	s->addr.sin_family = AF_INET;
	s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->addr.sin_port = htons((uint16_t)(sb_port + n));
	p4u_timerq_init(&s->timers);
	if (p4t_shm_ops.iface_open(&cfg, &s->iface))
		sb_die("iface open (is another run using its ports?)");
}

static int sb_progress(struct sb_side *s)
{
	if (p4u_timerq_next(&s->timers) != P4U_TIMER_NEVER)
		p4u_timerq_run(&s->timers, p4u_time_ns());
	return p4t_progress(s->iface, 64);
}

static struct p4t_conn *sb_conn(struct sb_side *s, int n)
{
	struct sockaddr_in to = s->addr;
	struct p4t_conn *conn;

	to.sin_port = htons((uint16_t)(sb_port + n));
	if (p4t_conn_get(s->iface, &to, sizeof(to), &conn))
		sb_die("conn_get");
	return conn;
}

static void sb_send(struct sb_side *s, struct p4t_conn *conn, size_t len)
{
	struct p4w_hdr h = { .version = P4W_VERSION, .type = P4W_PUT,
			     .length = (uint32_t)(SB_HL + len) };
	uint8_t hdr[SB_HL] = { 0 };
	struct iovec iov = { sb_payload, len };

	p4w_hdr_pack(hdr, &h);
	if (p4t_send(s->iface, conn, hdr, SB_HL, &iov, 1, NULL,
		     P4T_SEND_SEQ) < 0)
		sb_die("send");
}

/* The server (side 1): echo until told to stop. */
static void sb_server(void)
{
	static struct sb_side b;

	sb_open(&b, 1, true);
	for (;;)	/* until the client kills it */
		(void)sb_progress(&b);
}

/*
 * The idler (sides 2..): on each byte n from cmd, n more sides, each
 * linked to the client (side 0) and the server (side 1) by one message;
 * a byte back on done when they are up. Then it only waits.
 */
static void sb_idler(int cmd, int done)
{
	static struct sb_side idle[SB_IDLE_MAX];
	int have = 0, i;
	uint8_t n;
	double t0;

	while (read(cmd, &n, 1) == 1 && n) {
		for (i = have; i < have + n; i++) {
			sb_open(&idle[i], 2 + i, false);
			sb_send(&idle[i], sb_conn(&idle[i], 0), 0);
			sb_send(&idle[i], sb_conn(&idle[i], 1), 0);
		}
		have += n;
		for (t0 = sb_now_us(); sb_now_us() - t0 < 300000;)
			for (i = 0; i < have; i++)
				(void)sb_progress(&idle[i]);
		if (write(done, &n, 1) != 1)
			sb_die("idler pipe");
	}
	exit(0);
}

static double sb_pingpong(struct sb_side *a, struct p4t_conn *srv)
{
	unsigned long want;
	int k, warm = sb_iters / 10;
	double t0 = 0;

	for (k = 0; k < warm + sb_iters; k++) {
		if (k == warm)
			t0 = sb_now_us();
		want = sb_recvs + 1;
		sb_send(a, srv, sizeof(sb_payload));
		while (sb_recvs < want)
			(void)sb_progress(a);
	}
	return (sb_now_us() - t0) / sb_iters / 2;
}

/* ns per progress call of a with nothing arriving. */
static double sb_idle_call(struct sb_side *a)
{
	int k, n = sb_iters * 20;
	double t0 = sb_now_us();

	for (k = 0; k < n; k++)
		(void)sb_progress(a);
	return (sb_now_us() - t0) * 1e3 / n;
}

/* Switch the server (by a message) and ourselves; wait for its echo. */
static void sb_mode(struct sb_side *a, struct p4t_conn *srv, bool every)
{
	unsigned long want = sb_recvs + 1;

	p4t_shm_set_bells(a->iface, every ? SB_EVERY : P4T_SHM_BELL_LINKS,
			  P4T_SHM_BELL_FULL, P4T_SHM_BELL_HOT, true);
	sb_send(a, srv, every ? 1 : 2);
	while (sb_recvs < want)
		(void)sb_progress(a);
}

int main(int argc, char **argv)
{
	double lat[SB_NIDLE][2], call[SB_NIDLE][2];
	int cmd[2], done[2], status, have = 0, m;
	static struct sb_side a;
	struct p4t_conn *srv;
	pid_t server, idler;
	uint8_t n;
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "-i"))
		sb_iters = atoi(argv[2]);
	if (sb_iters < 100)
		sb_die("usage: shm_bench [-i iterations >= 100]");
	sb_port = (uint16_t)(20000 + getpid() % 20000);
	if (pipe(cmd) || pipe(done))
		sb_die("pipe");
	server = fork();
	if (!server) {
		sb_server();
		exit(0);
	}
	idler = fork();
	if (!idler)
		sb_idler(cmd[0], done[1]);
	if (server < 0 || idler < 0)
		sb_die("fork");
	sb_open(&a, 0, false);
	usleep(200000);		/* the server listens */
	srv = sb_conn(&a, 1);
	(void)fcntl(done[0], F_SETFL, O_NONBLOCK);
	for (i = 0; i < SB_NIDLE; i++) {
		n = (uint8_t)(sb_idle[i] - have);
		if (n) {
			if (write(cmd[1], &n, 1) != 1)
				sb_die("idler pipe");
			while (read(done[0], &n, 1) != 1)
				(void)sb_progress(&a);
			have = sb_idle[i];
		}
		for (m = 0; m < 2; m++) {
			sb_mode(&a, srv, m == 1);
			lat[i][m] = sb_pingpong(&a, srv);
			call[i][m] = sb_idle_call(&a);
		}
		sb_mode(&a, srv, false);
	}
	n = 0;
	if (write(cmd[1], &n, 1) != 1)
		sb_die("idler pipe");
	kill(server, SIGKILL);
	waitpid(server, &status, 0);
	waitpid(idler, &status, 0);
	p4t_iface_close(a.iface);

	printf("\n`bench/shm_bench`: the shared-memory transport alone, "
	       "an 8 B ping-pong between two processes while a third holds "
	       "idle links to both; %d iterations.\n\n", sb_iters);
	printf("| idle links per process | 8 B one-way, doorbells (us) | "
	       "every ring (us) | ratio | idle call, doorbells (ns) | "
	       "every ring (ns) | ratio |\n|---|---|---|---|---|---|---|\n");
	for (i = 0; i < SB_NIDLE; i++)
		printf("| %d | %.3f | %.3f | %.2f | %.1f | %.1f | %.2f |\n",
		       sb_idle[i], lat[i][0], lat[i][1], lat[i][0] / lat[i][1],
		       call[i][0], call[i][1], call[i][0] / call[i][1]);
	return 0;
}
