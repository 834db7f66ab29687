/*
 * raw_socket.c - the floor: the same measurements as fb_lat and fb_bw on
 * one TCP_NODELAY socket, no libfabric. Both sides busy-poll: the socket
 * is nonblocking, recv/send use MSG_DONTWAIT; on EAGAIN they spin on
 * poll(0) (lockless) until the socket is ready, not on recv/send, whose
 * socket lock would delay the softirq delivering what they wait for.
 *
 *   -m lat  (default) ping-pong 1 B .. 8 MiB, one way     RESULT lat <size> <usec>
 *   -m bw   window 64 of 1 KiB .. 8 MiB messages, ack     RESULT bw <size> <MB/s>
 *   -m rate 8 B messages, windows 1,4,16,64,256, ack      RESULT rate <w> <Mmsg/s>
 *
 * Same iteration counts, warm-up and stop rule as the libfabric
 * programs; the first exchange of every point checks the data and the
 * byte counts are compared at the end.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fb_common.h"

#define RAW_MAX_SIZE	(8 * FB_MIB)
#define RAW_RX_REGION	(64 * FB_MIB)
#define RAW_WARM	1

struct raw {
	struct fb_ctx fb;
	int fd;
	char *tx, *rx;
	uint64_t bytes;		/* payload bytes received + sent, all points */
};

/* Spin until the socket is ready for events (poll takes no socket lock). */
static void raw_wait(struct raw *raw, short events)
{
	struct pollfd pfd = { .fd = raw->fd, .events = events };

	while (poll(&pfd, 1, 0) == 0 ||
	       (pfd.revents & (events | POLLERR | POLLHUP)) == 0)
		;
}

static void raw_send(struct raw *raw, const void *buf, size_t len)
{
	const char *ptr = buf;
	ssize_t ret;

	while (len) {
		ret = send(raw->fd, ptr, len, MSG_DONTWAIT);
		if (ret > 0) {
			ptr += ret;
			len -= (size_t)ret;
		} else if (ret < 0 && errno == EAGAIN) {
			raw_wait(raw, POLLOUT);
		} else if (ret < 0 && errno != EINTR) {
			fb_fail(&raw->fb, "send: %s", strerror(errno));
		}
	}
}

static void raw_recv(struct raw *raw, void *buf, size_t len)
{
	char *ptr = buf;
	ssize_t ret;

	while (len) {
		ret = recv(raw->fd, ptr, len, MSG_DONTWAIT);
		if (ret > 0) {
			ptr += ret;
			len -= (size_t)ret;
		} else if (ret == 0) {
			fb_fail(&raw->fb, "peer closed");
		} else if (errno == EAGAIN) {
			raw_wait(raw, POLLIN);
		} else if (errno != EINTR) {
			fb_fail(&raw->fb, "recv: %s", strerror(errno));
		}
	}
}

static void raw_check(struct raw *raw, const void *buf, size_t size,
		      uint64_t seed)
{
	ssize_t bad = fb_check(buf, size, seed);

	if (bad >= 0)
		fb_fail(&raw->fb, "size %zu: data differs at byte %zd", size, bad);
}

/* both sides reach the same point; the socket is empty afterwards */
static void raw_sync(struct raw *raw)
{
	char out = 's', in = 0;

	raw_send(raw, &out, 1);
	raw_recv(raw, &in, 1);
	if (in != 's')
		fb_fail(&raw->fb, "sync: unexpected byte 0x%x", in);
}

/* ---- latency ------------------------------------------------------ */

static int raw_lat_iters(struct fb_ctx *ctx, size_t size)
{
	size_t full = (64 * FB_MIB) / size;

	if (full > 1000)
		full = 1000;
	if (full < 10)
		full = 10;
	return fb_iters(ctx, (int)full);
}

static void raw_lat_size(struct raw *raw, size_t size)
{
	struct fb_ctx *ctx = &raw->fb;
	int iters = raw_lat_iters(ctx, size);
	int warm = iters / 10 > 2 ? iters / 10 : 2;
	int total = warm + iters, i;
	uint64_t peer_seed = size * 2 + !ctx->server;
	double start = 0.0, end;
	char param[32];

	fb_fill(raw->tx, size, size * 2 + ctx->server);
	memset(raw->rx, 0, size);
	raw_sync(raw);
	for (i = 0; i < total; i++) {
		if (i == warm)
			start = fb_now();
		if (ctx->server) {
			raw_recv(raw, raw->rx, size);
			if (i == 0)
				raw_check(raw, raw->rx, size, peer_seed);
			raw_send(raw, raw->tx, size);
		} else {
			raw_send(raw, raw->tx, size);
			raw_recv(raw, raw->rx, size);
			if (i == 0)
				raw_check(raw, raw->rx, size, peer_seed);
		}
	}
	end = fb_now();
	raw->bytes += 2 * (uint64_t)total * size;
	fb_size_str(size, param, sizeof(param));
	fb_result(ctx, "lat", param, (end - start) * 1e6 / iters / 2.0);
}

/* ---- windows: bandwidth and rate ---------------------------------- */

static int raw_max_windows(struct raw *raw, size_t size, int window,
			   bool rate)
{
	double bytes = rate ? 1e6 * 8 : 512.0 * FB_MIB;
	double win = bytes / ((double)size * window);

	if (raw->fb.opts.iters > 0)
		return raw->fb.opts.iters;
	if (win > 100000)
		win = 100000;
	return win < 2 ? 2 : (int)win;
}

static void raw_win_server(struct raw *raw, size_t size, int window, bool rate)
{
	struct fb_ctx *ctx = &raw->fb;
	double cap = fb_cap(ctx, rate ? 0.2 : 0.15, 0.03), start = 0.0;
	int max_win = raw_max_windows(raw, size, window, rate);
	int min_win = ctx->opts.quick ? 1 : 2, w, k, timed;
	size_t nbuf = RAW_RX_REGION / size;
	uint64_t ack;
	bool stop;

	if (nbuf > (size_t)window)
		nbuf = (size_t)window;
	memset(raw->rx, 0, nbuf * size);
	for (w = 0;; w++) {
		for (k = 0; k < window; k++)
			raw_recv(raw, raw->rx + (k % nbuf) * size, size);
		if (w == 0)
			for (k = 0; k < (int)nbuf; k++)
				raw_check(raw, raw->rx + k * size, size, size);
		timed = w + 1 - RAW_WARM;
		if (timed == 0)
			start = fb_now();
		stop = timed >= max_win ||
		       (timed >= min_win && fb_now() - start >= cap);
		ack = stop ? FB_ACK_STOP : FB_ACK_MORE;
		raw_send(raw, &ack, sizeof(ack));
		if (stop)
			break;
	}
	raw->bytes += (uint64_t)(w + 1) * window * size;
}

static void raw_win_client(struct raw *raw, size_t size, int window, bool rate)
{
	struct fb_ctx *ctx = &raw->fb;
	double start = 0.0, end, msgs;
	uint64_t ack;
	char param[32];
	int w, k;

	for (w = 0;; w++) {
		if (w == RAW_WARM)
			start = fb_now();
		for (k = 0; k < window; k++)
			raw_send(raw, raw->tx, size);
		raw_recv(raw, &ack, sizeof(ack));
		if (ack == FB_ACK_STOP)
			break;
		if (ack != FB_ACK_MORE)
			fb_fail(ctx, "bad ack 0x%llx", (unsigned long long)ack);
	}
	end = fb_now();
	raw->bytes += (uint64_t)(w + 1) * window * size;
	msgs = (double)(w + 1 - RAW_WARM) * window;
	if (rate) {
		snprintf(param, sizeof(param), "%d", window);
		fb_result(ctx, "rate", param, msgs / (end - start) / 1e6);
	} else {
		fb_size_str(size, param, sizeof(param));
		fb_result(ctx, "bw", param, msgs * (double)size / (end - start) / 1e6);
	}
}

static void raw_win_point(struct raw *raw, size_t size, int window, bool rate)
{
	fb_fill(raw->tx, size, size);
	raw_sync(raw);
	if (raw->fb.server)
		raw_win_server(raw, size, window, rate);
	else
		raw_win_client(raw, size, window, rate);
}

static void raw_run(struct raw *raw, const char *mode)
{
	struct fb_ctx *ctx = &raw->fb;
	const char *list = ctx->opts.list ? ctx->opts.list : "1,4,16,64,256";
	int window = ctx->opts.window ? ctx->opts.window : 64;
	char *copy, *tok, *save;
	size_t size;

	if (!strcmp(mode, "lat")) {
		if (ctx->opts.size)
			raw_lat_size(raw, ctx->opts.size);
		else
			for (size = 1; size <= RAW_MAX_SIZE; size *= 2)
				raw_lat_size(raw, size);
	} else if (!strcmp(mode, "bw")) {
		if (ctx->opts.size)
			raw_win_point(raw, ctx->opts.size, window, false);
		else
			for (size = FB_KIB; size <= RAW_MAX_SIZE; size *= 2)
				raw_win_point(raw, size, window, false);
	} else if (!strcmp(mode, "rate")) {
		size = ctx->opts.size ? ctx->opts.size : 8;
		if (ctx->opts.window) {
			raw_win_point(raw, size, window, true);
			return;
		}
		copy = strdup(list);
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			raw_win_point(raw, size, atoi(tok) > 0 ? atoi(tok) : 1, true);
		free(copy);
	} else {
		fb_fail(ctx, "-m: lat, bw or rate");
	}
}

int main(int argc, char **argv)
{
	struct raw raw;
	struct fb_ctx *ctx = &raw.fb;
	uint64_t peer_bytes;
	int one = 1;

	memset(&raw, 0, sizeof(raw));
	fb_init(ctx, argc, argv, "raw_socket", NULL);
	if (ctx->opts.size > RAW_MAX_SIZE)
		fb_fail(ctx, "-S: at most %lu bytes", RAW_MAX_SIZE);
	fb_oob_open(ctx);
	raw.tx = fb_alloc(ctx, RAW_MAX_SIZE);
	raw.rx = fb_alloc(ctx, RAW_RX_REGION);
	fb_oob_sync(ctx);

	/* the OOB connection becomes the data socket */
	raw.fd = ctx->oob_fd;
	setsockopt(raw.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fcntl(raw.fd, F_SETFL, fcntl(raw.fd, F_GETFL) | O_NONBLOCK))
		fb_fail(ctx, "fcntl: %s", strerror(errno));
	raw_run(&raw, ctx->opts.mode ? ctx->opts.mode : "lat");

	/* both sides moved the same number of payload bytes */
	raw_send(&raw, &raw.bytes, sizeof(raw.bytes));
	raw_recv(&raw, &peer_bytes, sizeof(peer_bytes));
	if (peer_bytes != raw.bytes)
		fb_fail(ctx, "bytes: %llu here, %llu at the peer",
			(unsigned long long)raw.bytes,
			(unsigned long long)peer_bytes);
	fb_oob_close(ctx);
	free(raw.tx);
	free(raw.rx);
	return 0;
}
