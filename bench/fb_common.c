/*
 * fb_common.c - what the benchmark programs share outside libfabric (see
 * fb_common.h): the command line and the run's lifetime (the alarm, FAIL
 * and log lines), result lines, the out-of-band (OOB) TCP socket and its
 * exchanges, and timing.
 *
 * Not here: anything that calls libfabric (fabric, domain and endpoint
 * set-up, memory registration and data patterns, CQ progress, posting,
 * control messages and rounds), which is in fb_fabric.c.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fb_common.h"

static const char *fb_prog = "fb";
static const char *fb_role = "?";
static int fb_timeout;

/* ---- command line, lifetime --------------------------------------- */

static void fb_usage(const char *prog, const char *extra)
{
	fprintf(stderr,
		"usage: %s [options]            (server)\n"
		"       %s [options] <server>   (client)\n"
		"  -p <prov>   provider (e.g. portals, net, \"tcp;ofi_rxm\")\n"
		"  -s <addr>   local address (default 127.0.0.1)\n"
		"  -B <port>   server: OOB listen port (0: any, printed as\n"
		"              \"# oob_port N\"), default %d\n"
		"  -P <port>   client: OOB port of the server, default %d\n"
		"  -S <size>   one size instead of the program's list\n"
		"  -I <n>      iterations\n"
		"  -W <n>      window\n"
		"  -t <sec>    time budget per measured point\n"
		"  -T <sec>    time limit for the whole run (default %d)\n"
		"  -Q          quick: fewer iterations (smoke check)\n"
		"  -J          never use fi_tinject\n"
		"  -m <mode>   program specific mode\n"
		"  -l <list>   program specific list\n%s",
		prog, prog, FB_DEFAULT_OOB_PORT, FB_DEFAULT_OOB_PORT,
		FB_DEFAULT_TIMEOUT, extra ? extra : "");
}

static void fb_alarm(int sig)
{
	char msg[160];
	int len;

	(void)sig;
	len = snprintf(msg, sizeof(msg), "%s[%s]: FAIL: timeout after %d s\n",
		       fb_prog, fb_role, fb_timeout);
	if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0)
		_exit(124);
	_exit(124);
}

static size_t fb_parse_size(const char *arg)
{
	char *end;
	double val = strtod(arg, &end);

	if (*end == 'k' || *end == 'K')
		val *= FB_KIB;
	else if (*end == 'm' || *end == 'M')
		val *= FB_MIB;
	return (size_t)val;
}

void fb_init(struct fb_ctx *ctx, int argc, char **argv, const char *prog,
	     const char *usage_extra)
{
	struct fb_opts *opts = &ctx->opts;
	int opt;

	memset(ctx, 0, sizeof(*ctx));
	ctx->prog = prog;
	ctx->oob_fd = -1;
	fb_prog = prog;
	opts->src_addr = "127.0.0.1";
	opts->src_port = FB_DEFAULT_OOB_PORT;
	opts->dst_port = FB_DEFAULT_OOB_PORT;
	opts->timeout = FB_DEFAULT_TIMEOUT;

	while ((opt = getopt(argc, argv, "p:s:B:P:S:I:W:t:T:QJm:l:h")) != -1) {
		switch (opt) {
		case 'p': opts->prov = optarg; break;
		case 's': opts->src_addr = optarg; break;
		case 'B': opts->src_port = atoi(optarg); break;
		case 'P': opts->dst_port = atoi(optarg); break;
		case 'S': opts->size = fb_parse_size(optarg); break;
		case 'I': opts->iters = atoi(optarg); break;
		case 'W': opts->window = atoi(optarg); break;
		case 't': opts->cap = atof(optarg); break;
		case 'T': opts->timeout = atoi(optarg); break;
		case 'Q': opts->quick = true; break;
		case 'J': opts->no_inject = true; break;
		case 'm': opts->mode = optarg; break;
		case 'l': opts->list = optarg; break;
		default:
			fb_usage(prog, usage_extra);
			exit(opt == 'h' ? 0 : 2);
		}
	}
	if (optind < argc)
		opts->dst_addr = argv[optind];
	ctx->server = opts->dst_addr == NULL;
	fb_role = ctx->server ? "server" : "client";

	signal(SIGPIPE, SIG_IGN);
	fb_timeout = opts->timeout;
	if (opts->timeout > 0) {
		signal(SIGALRM, fb_alarm);
		alarm((unsigned)opts->timeout);
	}
}

void fb_fail(struct fb_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	fflush(stdout);
	fprintf(stderr, "%s[%s]: FAIL: ", fb_prog, fb_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void fb_log(struct fb_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	fprintf(stderr, "%s[%s]: ", fb_prog, fb_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- results ------------------------------------------------------ */

void fb_result(struct fb_ctx *ctx, const char *test, const char *param,
	       double value)
{
	if (ctx->server)
		return;
	printf("RESULT %s %s %.6g\n", test, param, value);
	fflush(stdout);
}

void fb_result_na(struct fb_ctx *ctx, const char *test, const char *param,
		  const char *fmt, ...)
{
	va_list ap;

	if (ctx->server)
		return;
	printf("NA %s %s ", test, param);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void fb_size_str(size_t size, char *buf, size_t len)
{
	snprintf(buf, len, "%zu", size);
}

/* ---- out-of-band socket ------------------------------------------- */

static int fb_oob_sockaddr(struct fb_ctx *ctx, const char *host, int port,
			   struct sockaddr_storage *ss, socklen_t *len_p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char service[16];
	int ret;

	snprintf(service, sizeof(service), "%d", port);
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret)
		fb_fail(ctx, "getaddrinfo(%s): %s", host, gai_strerror(ret));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len_p = res->ai_addrlen;
	ret = res->ai_family;
	freeaddrinfo(res);
	return ret;
}

static void fb_oob_listen_accept(struct fb_ctx *ctx)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd, family;

	family = fb_oob_sockaddr(ctx, ctx->opts.src_addr, ctx->opts.src_port,
				 &ss, &len);
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		fb_fail(ctx, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1))
		fb_fail(ctx, "oob bind/listen %s:%d: %s", ctx->opts.src_addr,
			ctx->opts.src_port, strerror(errno));
	if (ctx->opts.src_port == 0) {
		len = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &len);
		printf("# oob_port %d\n", ntohs(family == AF_INET6 ?
			((struct sockaddr_in6 *)&ss)->sin6_port :
			((struct sockaddr_in *)&ss)->sin_port));
		fflush(stdout);
	}
	ctx->oob_fd = accept(fd, NULL, NULL);
	if (ctx->oob_fd < 0)
		fb_fail(ctx, "oob accept: %s", strerror(errno));
	close(fd);
}

static void fb_oob_connect(struct fb_ctx *ctx)
{
	struct sockaddr_storage ss;
	socklen_t len;
	double end = fb_now() + 20.0;
	int family, fd;

	family = fb_oob_sockaddr(ctx, ctx->opts.dst_addr, ctx->opts.dst_port,
				 &ss, &len);
	for (;;) {
		fd = socket(family, SOCK_STREAM, 0);
		if (fd < 0)
			fb_fail(ctx, "socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&ss, len))
			break;
		close(fd);
		if (fb_now() > end)
			fb_fail(ctx, "oob connect %s:%d: %s", ctx->opts.dst_addr,
				ctx->opts.dst_port, strerror(errno));
		usleep(10000);
	}
	ctx->oob_fd = fd;
}

void fb_oob_open(struct fb_ctx *ctx)
{
	int one = 1;

	if (ctx->server)
		fb_oob_listen_accept(ctx);
	else
		fb_oob_connect(ctx);
	setsockopt(ctx->oob_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void fb_oob_close(struct fb_ctx *ctx)
{
	if (ctx->oob_fd >= 0)
		close(ctx->oob_fd);
	ctx->oob_fd = -1;
}

void fb_oob_send(struct fb_ctx *ctx, const void *buf, size_t len)
{
	const char *ptr = buf;
	ssize_t ret;

	while (len) {
		ret = send(ctx->oob_fd, ptr, len, 0);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			fb_fail(ctx, "oob send: %s", strerror(errno));
		ptr += ret;
		len -= (size_t)ret;
	}
}

void fb_oob_recv(struct fb_ctx *ctx, void *buf, size_t len)
{
	char *ptr = buf;
	ssize_t ret;

	while (len) {
		/*
		 * Keep the endpoint progressing while we wait: under manual
		 * progress a provider may still owe the peer an ack (e.g. for
		 * our last receive) that its last send's completion waits for.
		 */
		while (ctx->cq && !fb_oob_readable(ctx))
			fb_progress(ctx);
		ret = recv(ctx->oob_fd, ptr, len, 0);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret == 0)
			fb_fail(ctx, "oob: peer closed");
		if (ret < 0)
			fb_fail(ctx, "oob recv: %s", strerror(errno));
		ptr += ret;
		len -= (size_t)ret;
	}
}

void fb_oob_xchg(struct fb_ctx *ctx, const void *out, void *in, size_t len)
{
	/* small payloads: both sides send first, the socket buffers them */
	fb_oob_send(ctx, out, len);
	fb_oob_recv(ctx, in, len);
}

void fb_oob_sync(struct fb_ctx *ctx)
{
	char out = 's', in;

	fb_oob_xchg(ctx, &out, &in, 1);
	if (in != 's')
		fb_fail(ctx, "oob sync: unexpected byte 0x%x", in);
}

void fb_oob_totals_agree(struct fb_ctx *ctx, uint64_t total)
{
	uint64_t peer_total;

	fb_oob_xchg(ctx, &total, &peer_total, sizeof(peer_total));
	if (peer_total != total)
		fb_fail(ctx, "messages: %llu here, %llu at the peer",
			(unsigned long long)total,
			(unsigned long long)peer_total);
}

bool fb_oob_agree(struct fb_ctx *ctx, bool ok)
{
	uint8_t out = ok ? 1 : 0, in;

	fb_oob_xchg(ctx, &out, &in, 1);
	return ok && in == 1;
}

bool fb_oob_readable(struct fb_ctx *ctx)
{
	struct pollfd pfd = { .fd = ctx->oob_fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* ---- time --------------------------------------------------------- */

double fb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double fb_cap(struct fb_ctx *ctx, double full, double quick)
{
	if (ctx->opts.cap > 0)
		return ctx->opts.cap;
	return ctx->opts.quick ? quick : full;
}

int fb_iters(struct fb_ctx *ctx, int full)
{
	if (ctx->opts.iters > 0)
		return ctx->opts.iters;
	if (ctx->opts.quick)
		return full / 10 > 0 ? full / 10 : 1;
	return full;
}
