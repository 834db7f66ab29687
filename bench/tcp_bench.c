/*
 * tcp_bench.c - the TCP transport through the engine against a raw socket,
 * two processes (fork) over loopback, in one run:
 *
 *   - one-way latency (half the round trip of a ping-pong), 8 B .. 64 KiB:
 *     engine puts on p4t_tcp_ops (no ack; eager up to 16 KiB, rendezvous
 *     above), the transport alone (p4t_send of a 72-byte PUT header plus
 *     the payload, echoed from the recv upcall), and a TCP_NODELAY socket
 *     ping-pong;
 *   - bandwidth of 1 MiB messages: engine rendezvous puts (acked, a window
 *     of 8 in flight) vs. a socket stream of 1 MiB writes.
 *
 * Both sides busy-poll (engine progress / recv with MSG_DONTWAIT), so the
 * raw socket is the floor. Prints a Markdown table with ratios.
 *
 *   tcp_bench [-i iterations]
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "p4e.h"
#include "p4e_priv.h"	/* ni->xp[P4E_XP_NET].iface, for the transport counters */
#include "p4t.h"
#include "p4t_tcp.h"
#include "p4_wire.h"
#include "p4u_time.h"
#include "p4u_timer.h"

#define TB_MAX		(1u << 20)
#define TB_EAGER	16384
#define TB_BW_MSGS	512
#define TB_BW_WINDOW	8
#define TB_BITS_PING	1
#define TB_BITS_STOP	2
#define TB_BITS_BW	3

static const size_t tb_sizes[] = { 8, 64, 512, 4096, 16384, 65536 };
#define TB_NSIZES	(sizeof(tb_sizes) / sizeof(tb_sizes[0]))

static uint8_t tb_buf[TB_MAX], tb_rbuf[TB_MAX];
static int tb_iters = 5000;
static double tb_msgs_per_ping;	/* transport messages per engine put */

static double tb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void tb_die(const char *what)
{
	fprintf(stderr, "tcp_bench: %s\n", what);
	exit(1);
}

static int tb_iters_for(size_t size)
{
	return size >= 65536 ? tb_iters / 5 : tb_iters;
}

/* ---- the engine side ----------------------------------------------------- */

struct tb_node {
	struct p4e_dom *dom;
	struct p4e_ni *ni;
	struct p4e_eq *eq;
	uint64_t md;		/* tb_buf, events only for ACKs */
	uint32_t pt;
};

static void tb_node_open(struct tb_node *n)
{
	struct sockaddr_in lo = { .sin_family = AF_INET };
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = &p4t_tcp_ops,
		.addr = &lo,
		.addrlen = sizeof(lo),
		.eager_size = TB_EAGER,
	};
	struct p4e_md_desc d = { .start = tb_buf, .length = TB_MAX,
				 .options = P4E_MD_EVENT_SEND_DISABLE };
	uint32_t bits[] = { TB_BITS_PING, TB_BITS_STOP, TB_BITS_BW };
	struct p4e_event ev;
	uint64_t me;
	size_t i;

	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (p4e_dom_create(NULL, &n->dom) ||
	    p4e_ni_create(n->dom, &attr, &n->ni) ||
	    p4e_eq_ring_create(4096, &n->eq) ||
	    p4e_pt_alloc(n->ni, 0, n->eq, 0, &n->pt))
		tb_die("engine setup failed");
	d.eq = n->eq;
	if (p4e_md_bind(n->ni, &d, &n->md))
		tb_die("md bind failed");
	for (i = 0; i < 3; i++) {
		struct p4e_me_desc m = {
			.start = tb_rbuf, .length = TB_MAX,
			.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
			.options = P4E_ME_OP_PUT |
				   P4E_ME_EVENT_LINK_DISABLE,
			.match_id = P4E_ID_ANY, .match_bits = bits[i],
		};

		if (p4e_me_append(n->ni, n->pt, &m, P4E_PRIORITY_LIST, NULL,
				  0, &me))
			tb_die("me append failed");
	}
	(void)ev;
}

static void tb_node_close(struct tb_node *n)
{
	p4e_md_release(n->ni, n->md);
	p4e_ni_destroy(n->ni);
	p4e_eq_ring_destroy(n->eq);
	p4e_dom_destroy(n->dom);
}

static void tb_put(struct tb_node *n, uint32_t target, size_t len,
		   uint64_t bits, int ack)
{
	struct p4e_xfer x = {
		.md = n->md, .length = len,
		.ack_req = ack ? P4E_ACK_REQ : P4E_NO_ACK_REQ,
		.target = target, .pt_index = 0, .match_bits = bits,
		.get_md = P4E_HANDLE_NONE,
	};
	int ret;

	while ((ret = p4e_put(n->ni, &x)) == -FI_EAGAIN)
		p4e_dom_progress(n->dom, 64);
	if (ret)
		tb_die("put failed");
}

/* Progress until an event of type comes; returns it. */
static struct p4e_event tb_wait(struct tb_node *n, int type)
{
	struct p4e_event ev;

	for (;;) {
		if (!p4e_eq_ring_get(n->eq, &ev)) {
			if (ev.ni_fail_type != P4E_NI_OK)
				tb_die("operation failed");
			if (ev.type == type)
				return ev;
			continue;
		}
		p4e_dom_progress(n->dom, 64);
	}
}

/* Echo every ping back; count bandwidth puts; stop on request. */
static void tb_engine_server(int wfd)
{
	struct tb_node n;
	struct p4e_event ev;
	char addr[64];
	size_t len = sizeof(addr);

	tb_node_open(&n);
	if (p4e_ni_getname(n.ni, addr, &len) ||
	    write(wfd, addr, len) != (ssize_t)len)
		tb_die("cannot publish the server address");
	for (;;) {
		ev = tb_wait(&n, P4E_EVENT_PUT);
		if (ev.match_bits == TB_BITS_STOP)
			break;
		if (ev.match_bits == TB_BITS_PING)
			tb_put(&n, ev.initiator, ev.mlength, TB_BITS_PING, 0);
	}
	/* let the last responses leave */
	for (double t0 = tb_now_us(); tb_now_us() - t0 < 200000;)
		p4e_dom_progress(n.dom, 64);
	tb_node_close(&n);
	exit(0);
}

static double tb_engine_pingpong(struct tb_node *n, uint32_t srv, size_t size)
{
	int i, iters = tb_iters_for(size), warm = iters / 10;
	double t0 = 0;

	for (i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = tb_now_us();
		tb_put(n, srv, size, TB_BITS_PING, 0);
		tb_wait(n, P4E_EVENT_PUT);
	}
	return (tb_now_us() - t0) / iters / 2;
}

static double tb_engine_bw(struct tb_node *n, uint32_t srv)
{
	int sent = 0, acked = 0;
	double t0 = tb_now_us();

	while (acked < TB_BW_MSGS) {
		while (sent < TB_BW_MSGS && sent - acked < TB_BW_WINDOW) {
			tb_put(n, srv, TB_MAX, TB_BITS_BW, 1);
			sent++;
		}
		tb_wait(n, P4E_EVENT_ACK);
		acked++;
	}
	return (double)TB_BW_MSGS * TB_MAX / (tb_now_us() - t0) / 1e3;
}

static void tb_engine(double *lat, double *bw)
{
	struct tb_node n;
	char addr[64];
	ssize_t len;
	uint32_t srv;
	int pfd[2], status;
	size_t i;
	pid_t pid;

	if (pipe(pfd))
		tb_die("pipe");
	pid = fork();
	if (pid < 0)
		tb_die("fork");
	if (!pid) {
		close(pfd[0]);
		tb_engine_server(pfd[1]);
	}
	close(pfd[1]);
	len = read(pfd[0], addr, sizeof(addr));
	close(pfd[0]);
	if (len <= 0)
		tb_die("no server address");
	tb_node_open(&n);
	if (p4e_peer_lookup(n.dom, addr, (size_t)len, &srv))
		tb_die("peer lookup");
	for (i = 0; i < TB_NSIZES; i++) {
		struct p4t_tcp_stats a, b;

		p4t_tcp_stats(n.ni->xp[P4E_XP_NET].iface, &a);
		lat[i] = tb_engine_pingpong(&n, srv, tb_sizes[i]);
		p4t_tcp_stats(n.ni->xp[P4E_XP_NET].iface, &b);
		if (!i)
			tb_msgs_per_ping = (double)(b.msgs_sent - a.msgs_sent) /
					   (tb_iters_for(tb_sizes[i]) * 11 / 10);
	}
	*bw = tb_engine_bw(&n, srv);
	tb_put(&n, srv, 0, TB_BITS_STOP, 0);
	for (double t0 = tb_now_us(); tb_now_us() - t0 < 100000;)
		p4e_dom_progress(n.dom, 64);
	waitpid(pid, &status, 0);
	tb_node_close(&n);
}

/* ---- the transport alone ---------------------------------------------------- */

#define TB_HL	72	/* a PUT header and body: what the framing needs */

static struct p4t_iface *tb_tiface;
static struct p4u_timerq tb_timers;
static unsigned long tb_trecv;
static int tb_tstop;

static int tb_t_recv(void *ctx, struct p4t_conn *conn, const void *msg,
		     size_t len)
{
	const uint8_t *p = msg;

	tb_trecv++;
	if (ctx && len == TB_HL)	/* the stop message */
		tb_tstop = 1;
	else if (ctx)		/* the server echoes */
		(void)p4t_send(tb_tiface, conn, p, TB_HL, &(struct iovec){
			       (void *)(p + TB_HL), len - TB_HL }, 1, NULL,
			       P4T_SEND_SEQ);
	return 0;
}

static void tb_t_send_done(void *ctx, void *op_ctx, int status)
{
	(void)ctx; (void)op_ctx; (void)status;
}

static int tb_t_conn_new(void *ctx, struct p4t_conn *conn, const void *addr,
			 size_t addrlen)
{
	(void)ctx; (void)conn; (void)addr; (void)addrlen;
	return 0;
}

static void tb_t_conn_failed(void *ctx, struct p4t_conn *conn, int status)
{
	(void)ctx; (void)conn; (void)status;
}

static const struct p4t_upcalls tb_t_upcalls = {
	.recv = tb_t_recv,
	.send_done = tb_t_send_done,
	.rma_done = tb_t_send_done,
	.conn_new = tb_t_conn_new,
	.conn_failed = tb_t_conn_failed,
};

static void tb_t_open(int server)
{
	struct sockaddr_in lo = { .sin_family = AF_INET };
	struct p4t_iface_config cfg = {
		.addr = &lo, .addrlen = sizeof(lo), .upcalls = &tb_t_upcalls,
		.upcall_ctx = server ? &tb_tiface : NULL, .timers = &tb_timers,
	};

	p4u_timerq_init(&tb_timers);
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (p4t_tcp_ops.iface_open(&cfg, &tb_tiface))
		tb_die("iface open");
}

/*
 * Progress, after the deadlines due (as the engine's worker runs them):
 * the clock is read only while one is armed (the handshake), so the
 * timed loop pays nothing for it.
 */
static void tb_t_progress(void)
{
	if (p4u_timerq_next(&tb_timers) != P4U_TIMER_NEVER)
		p4u_timerq_run(&tb_timers, p4u_time_ns());
	p4t_progress(tb_tiface, 64);
}

static void tb_t_send(struct p4t_conn *conn, size_t len)
{
	struct p4w_hdr h = { .version = P4W_VERSION, .type = P4W_PUT,
			     .length = (uint32_t)(TB_HL + len) };
	uint8_t hdr[TB_HL] = { 0 };
	struct iovec iov = { tb_buf, len };

	p4w_hdr_pack(hdr, &h);
	if (p4t_send(tb_tiface, conn, hdr, TB_HL, &iov, 1, NULL,
		     P4T_SEND_SEQ) < 0)
		tb_die("send");
}

static void tb_transport(double *lat)
{
	struct p4t_conn *conn;
	char addr[64];
	size_t alen = sizeof(addr);
	int pfd[2], status, k, iters, warm;
	unsigned long want;
	double t0 = 0;
	size_t i;
	pid_t pid;

	if (pipe(pfd))
		tb_die("pipe");
	pid = fork();
	if (!pid) {
		tb_t_open(1);
		if (p4t_getname(tb_tiface, addr, &alen) ||
		    write(pfd[1], addr, alen) != (ssize_t)alen)
			tb_die("publish");
		while (!tb_tstop)
			tb_t_progress();
		for (double t = tb_now_us(); tb_now_us() - t < 100000;)
			tb_t_progress();
		p4t_iface_close(tb_tiface);
		exit(0);
	}
	if (pid < 0 || read(pfd[0], addr, sizeof(addr)) <= 0)
		tb_die("no server");
	tb_t_open(0);
	if (p4t_conn_get(tb_tiface, addr, sizeof(struct sockaddr_in), &conn))
		tb_die("conn_get");
	for (i = 0; i < TB_NSIZES; i++) {
		iters = tb_iters_for(tb_sizes[i]);
		warm = iters / 10;
		for (k = 0; k < warm + iters; k++) {
			if (k == warm)
				t0 = tb_now_us();
			want = tb_trecv + 1;
			tb_t_send(conn, tb_sizes[i]);
			while (tb_trecv < want)
				tb_t_progress();
		}
		lat[i] = (tb_now_us() - t0) / iters / 2;
	}
	tb_t_send(conn, 0);
	waitpid(pid, &status, 0);
	p4t_iface_close(tb_tiface);
	close(pfd[0]);
	close(pfd[1]);
}

/* ---- the raw socket floor ------------------------------------------------- */

static void tb_raw_io(int fd, void *buf, size_t len, int out)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = out ? send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) :
			  recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			tb_die("raw socket i/o");
		}
	}
}

static void tb_raw_server(int lfd)
{
	uint64_t size;
	int one = 1, fd = accept(lfd, NULL, NULL);
	size_t i;
	int k;

	if (fd < 0)
		tb_die("accept");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; i < TB_NSIZES; i++) {
		for (k = 0; k < tb_iters_for(tb_sizes[i]) * 11 / 10; k++) {
			tb_raw_io(fd, tb_rbuf, tb_sizes[i], 0);
			tb_raw_io(fd, tb_rbuf, tb_sizes[i], 1);
		}
	}
	for (k = 0; k < TB_BW_MSGS; k++)
		tb_raw_io(fd, tb_rbuf, TB_MAX, 0);
	size = 1;
	tb_raw_io(fd, &size, sizeof(size), 1);
	close(fd);
	exit(0);
}

static void tb_raw(double *lat, double *bw)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sin);
	int lfd, fd, one = 1, status, k, iters, warm;
	uint64_t ack;
	double t0 = 0;
	size_t i;
	pid_t pid;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&sin, &slen))
		tb_die("raw listen");
	pid = fork();
	if (pid < 0)
		tb_die("fork");
	if (!pid)
		tb_raw_server(lfd);
	close(lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		tb_die("raw connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; i < TB_NSIZES; i++) {
		iters = tb_iters_for(tb_sizes[i]);
		warm = iters * 11 / 10 - iters;
		for (k = 0; k < warm + iters; k++) {
			if (k == warm)
				t0 = tb_now_us();
			tb_raw_io(fd, tb_buf, tb_sizes[i], 1);
			tb_raw_io(fd, tb_buf, tb_sizes[i], 0);
		}
		lat[i] = (tb_now_us() - t0) / iters / 2;
	}
	t0 = tb_now_us();
	for (k = 0; k < TB_BW_MSGS; k++)
		tb_raw_io(fd, tb_buf, TB_MAX, 1);
	tb_raw_io(fd, &ack, sizeof(ack), 0);
	*bw = (double)TB_BW_MSGS * TB_MAX / (tb_now_us() - t0) / 1e3;
	close(fd);
	waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	double elat[TB_NSIZES], tlat[TB_NSIZES], rlat[TB_NSIZES], ebw, rbw;
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "-i"))
		tb_iters = atoi(argv[2]) > 10 ? atoi(argv[2]) : 10;
	signal(SIGPIPE, SIG_IGN);
	tb_engine(elat, &ebw);
	tb_transport(tlat);
	tb_raw(rlat, &rbw);
	printf("| one-way latency | engine on p4t_tcp (us) | p4t_tcp alone (us) "
	       "| raw TCP socket (us) | engine / raw | p4t_tcp / raw |\n"
	       "|---|---|---|---|---|---|\n");
	for (i = 0; i < TB_NSIZES; i++)
		printf("| %zu B | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
		       tb_sizes[i], elat[i], tlat[i], rlat[i],
		       elat[i] / rlat[i], tlat[i] / rlat[i]);
	printf("\n| bandwidth | engine on p4t_tcp (GB/s) | raw TCP stream "
	       "(GB/s) | engine / raw |\n|---|---|---|---|\n");
	printf("| 1 MiB messages | %.2f | %.2f | %.2f |\n", ebw, rbw, ebw / rbw);
	printf("\nengine: %.2f transport messages sent per 8-byte ping\n",
	       tb_msgs_per_ping);
	return 0;
}
