/*
 * common.c - set-up, OOB address exchange, CQ and counter waits with
 * timeouts, data patterns and failure reporting for the fabtests-ext
 * programs (see common.h). Written for these programs; nothing here comes
 * from libfabric's fabtests, only the command-line conventions do. The
 * set-up and the OOB exchange are in common_oob.c.
 *
 * Progress is manual with the portals provider: whoever waits must keep
 * reading a CQ or counter, or a rendezvous transfer the peer waits for
 * never moves. So every wait here, the OOB ones included, keeps
 * progressing the endpoint (through its counters, which takes nothing
 * out of the CQs).
 */
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *fx_prog = "fx";
const char *fx_role = "?";
static bool fx_corrupt;		/* FX_CORRUPT set: see fx_fill_at() */
static int fx_timeout_s;

/* ---- failure reporting ---------------------------------------------- */

void fx_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s[%s]: FAIL: ", fx_prog, fx_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%s:%d)\n", file, line);
	exit(1);
}

void fx_info(const char *fmt, ...)
{
	va_list ap;

	printf("%s[%s]: ", fx_prog, fx_role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * The overall timeout. Only async-signal-safe calls: the message is
 * assembled from constant strings.
 */
static void fx_alarm_handler(int sig)
{
	static const char msg[] = ": FAIL: overall timeout (-T) expired; "
				  "the run hung\n";
	ssize_t rc;

	(void)sig;
	rc = write(2, fx_prog, strlen(fx_prog));
	rc = write(2, "[", 1);
	rc = write(2, fx_role, strlen(fx_role));
	rc = write(2, "]", 1);
	rc = write(2, msg, sizeof(msg) - 1);
	(void)rc;
	_exit(2);
}

/* ---- command line --------------------------------------------------- */

static void fx_usage(const char *summary, const char *usage_extra)
{
	fprintf(stderr,
		"%s: %s\n"
		"usage: %s [options]              server\n"
		"       %s [options] <server>     client\n"
		"       %s                        run the server/client cases "
		"through run.sh\n"
		"  -p <prov>     provider (e.g. portals)\n"
		"  -s <addr>     source address for fi_getinfo and the OOB "
		"socket\n"
		"  -B <port>     server: OOB listen port (0: any, printed as "
		"'fx_oob_port N'; default %d)\n"
		"  -P <port>     client: the server's OOB port (default %d)\n"
		"  -E[=<port>]   accepted for fabtests compatibility: sets both "
		"OOB ports\n"
		"  -S <n|all>    message size, or all sizes\n"
		"  -I <n>        iterations\n"
		"  -v            verify data\n"
		"  -e <tagged|msg>  tagged (default) or untagged messages\n"
		"  -c <spin|sread>  busy-poll CQs (default) or block on their "
		"wait object\n"
		"  -n <n>        server: number of clients (default 1)\n"
		"  -T <s>        overall timeout in seconds (default %d)\n"
		"  -a            ask for FI_PROGRESS_AUTO (a progress thread)\n"
		"  -L <level>    threading level in the hints: domain, "
		"completion,\n"
		"                endpoint, fid or safe (default: the "
		"program's)\n"
		"%s",
		fx_prog, summary, fx_prog, fx_prog, fx_prog,
		FX_DEFAULT_OOB_PORT, FX_DEFAULT_OOB_PORT, FX_DEFAULT_TIMEOUT,
		usage_extra ? usage_extra : "");
	exit(2);
}

static const struct {
	const char *name;
	enum fi_threading threading;
} fx_threadings[] = {
	{ "domain", FI_THREAD_DOMAIN },
	{ "completion", FI_THREAD_COMPLETION },
	{ "endpoint", FI_THREAD_ENDPOINT },
	{ "fid", FI_THREAD_FID },
	{ "safe", FI_THREAD_SAFE },
};
#define FX_NTHREADINGS	(sizeof(fx_threadings) / sizeof(fx_threadings[0]))

const char *fx_threading_str(enum fi_threading threading)
{
	size_t i;

	for (i = 0; i < FX_NTHREADINGS; i++)
		if (fx_threadings[i].threading == threading)
			return fx_threadings[i].name;
	return "?";
}

static int fx_parse_int(const char *arg, int min, int max, char opt)
{
	char *end;
	long val;

	errno = 0;
	val = strtol(arg, &end, 0);
	if (errno || *end || val < min || val > max) {
		fprintf(stderr, "%s: bad value '%s' for -%c\n", fx_prog, arg,
			opt);
		exit(2);
	}
	return (int)val;
}

/*
 * With no argument at all, `make check` (whose harness cannot pass any)
 * is running us: hand over to run.sh, restricted to this program, so the
 * server/client pairs run exactly as the runner defines them.
 */
static void fx_run_self(void)
{
	const char *srcdir = getenv("srcdir");
	char exe[PATH_MAX], script[PATH_MAX + 64];
	ssize_t len;
	char *slash;

	if (srcdir) {
		snprintf(script, sizeof(script), "%s/fabtests-ext/run.sh",
			 srcdir);
	} else {
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len <= 0) {
			perror("readlink /proc/self/exe");
			exit(2);
		}
		exe[len] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(script, sizeof(script), "%s/run.sh", exe);
	}
	if (access(script, R_OK)) {
		fprintf(stderr, "%s: no arguments, and %s not found; give "
			"options to run one side (-h)\n", fx_prog, script);
		exit(2);
	}
	fflush(stdout);
	execlp("bash", "bash", script, fx_prog, (char *)NULL);
	perror("exec bash run.sh");
	exit(2);
}

void fx_parse(int argc, char **argv, const char *summary,
	      const char *usage_extra, struct fx_opts *opts)
{
	const char *base = strrchr(argv[0], '/');
	int opt;

	fx_prog = base ? base + 1 : argv[0];
	/* a libtool wrapper would call us lt-<name> */
	if (!strncmp(fx_prog, "lt-", 3))
		fx_prog += 3;
	if (argc == 1)
		fx_run_self();

	memset(opts, 0, sizeof(*opts));
	opts->src_port = FX_DEFAULT_OOB_PORT;
	opts->dst_port = FX_DEFAULT_OOB_PORT;
	opts->timeout = FX_DEFAULT_TIMEOUT;
	opts->nclients = 1;

	while ((opt = getopt(argc, argv,
			     "p:s:B:P:E::S:I:ve:c:n:T:N:W:t:aL:h")) != -1) {
		switch (opt) {
		case 'p':
			opts->prov = optarg;
			break;
		case 's':
			opts->src_addr = optarg;
			break;
		case 'B':
			opts->src_port = fx_parse_int(optarg, 0, 65535, 'B');
			break;
		case 'P':
			opts->dst_port = fx_parse_int(optarg, 1, 65535, 'P');
			break;
		case 'E':
			if (optarg && optarg[0] == '=' && optarg[1]) {
				opts->src_port = fx_parse_int(optarg + 1, 0,
							      65535, 'E');
				opts->dst_port = opts->src_port;
			}
			break;
		case 'S':
			if (!strcmp(optarg, "all")) {
				opts->all_sizes = true;
			} else {
				opts->size = (size_t)fx_parse_int(optarg, 0,
							INT_MAX, 'S');
				opts->size_set = true;
			}
			break;
		case 'I':
			opts->iters = fx_parse_int(optarg, 1, INT_MAX, 'I');
			break;
		case 'v':
			opts->verify = true;
			break;
		case 'e':
			if (!strcmp(optarg, "msg"))
				opts->xfer = FX_XFER_MSG;
			else if (!strcmp(optarg, "tagged") ||
				 !strcmp(optarg, "rdm"))
				opts->xfer = FX_XFER_TAGGED;
			else
				fx_usage(summary, usage_extra);
			break;
		case 'c':
			if (!strcmp(optarg, "sread"))
				opts->sread = true;
			else if (strcmp(optarg, "spin"))
				fx_usage(summary, usage_extra);
			break;
		case 'n':
			opts->nclients = fx_parse_int(optarg, 1, FX_MAX_PEERS,
						      'n');
			break;
		case 'T':
			opts->timeout = fx_parse_int(optarg, 1, 3600, 'T');
			break;
		case 'N':
			opts->count = fx_parse_int(optarg, 1, 1 << 20, 'N');
			break;
		case 'W':
			opts->window = fx_parse_int(optarg, 1, 4096, 'W');
			break;
		case 't':
			opts->threads = fx_parse_int(optarg, 1, 64, 't');
			break;
		case 'a':
			opts->auto_progress = true;
			break;
		case 'L': {
			size_t i;

			for (i = 0; i < FX_NTHREADINGS; i++)
				if (!strcmp(optarg, fx_threadings[i].name))
					break;
			if (i == FX_NTHREADINGS)
				fx_usage(summary, usage_extra);
			opts->threading = fx_threadings[i].threading;
			break;
		}
		default:
			fx_usage(summary, usage_extra);
		}
	}
	if (optind < argc)
		opts->dst_addr = argv[optind++];
	if (optind < argc)
		fx_usage(summary, usage_extra);

	fx_role = opts->dst_addr ? "client" : "server";
	fx_corrupt = getenv("FX_CORRUPT") != NULL;
	fx_timeout_s = opts->timeout;
	/* a peer that died must show up as an error, not kill us silently */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, fx_alarm_handler);
	alarm((unsigned)opts->timeout);
}

static void fx_sizes_add(size_t *sizes, size_t *n, size_t cap, size_t val)
{
	if (*n < cap)
		sizes[(*n)++] = val;
}

size_t fx_sizes(const struct fx_opts *opts, size_t min, size_t max,
		size_t def, size_t *sizes, size_t cap)
{
	size_t n = 0, pow;

	if (opts->size_set) {
		fx_sizes_add(sizes, &n, cap, opts->size);
		return n;
	}
	if (!opts->all_sizes) {
		fx_sizes_add(sizes, &n, cap, def);
		return n;
	}
	/* powers of two and the halfway points, the fabtests "all" shape */
	if (min == 0)
		fx_sizes_add(sizes, &n, cap, 0);
	for (pow = 1; pow <= max; pow <<= 1) {
		if (pow >= min)
			fx_sizes_add(sizes, &n, cap, pow);
		if (pow >= 2 && pow + pow / 2 <= max && pow + pow / 2 >= min)
			fx_sizes_add(sizes, &n, cap, pow + pow / 2);
	}
	return n;
}

int fx_iters(const struct fx_opts *opts, size_t size, int def)
{
	int iters = opts->iters ? opts->iters : def;

	/* keep large sizes from dominating the run time unless asked */
	if (!opts->iters && size > 64 * FX_KIB) {
		iters = (int)((uint64_t)iters * 64 * FX_KIB / size);
		if (iters < 2)
			iters = 2;
	}
	return iters;
}

/* ---- time, memory, strings ----------------------------------------- */

uint64_t fx_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void *fx_alloc(size_t len)
{
	void *buf = NULL;

	/* page aligned, never zero bytes, so every buffer has an address */
	if (posix_memalign(&buf, 4096, len ? len : 1))
		FX_FAIL("out of memory for %zu bytes", len);
	memset(buf, 0, len ? len : 1);
	return buf;
}

const char *fx_flags_str(uint64_t flags, char *buf, size_t cap)
{
	static const struct {
		uint64_t flag;
		const char *name;
	} names[] = {
		{ FI_SEND, "SEND" }, { FI_RECV, "RECV" },
		{ FI_MSG, "MSG" }, { FI_TAGGED, "TAGGED" },
		{ FI_REMOTE_CQ_DATA, "REMOTE_CQ_DATA" },
		{ FI_MULTI_RECV, "MULTI_RECV" },
		{ FI_COMPLETION, "COMPLETION" },
		{ FI_CLAIM, "CLAIM" }, { FI_PEEK, "PEEK" },
		{ FI_DISCARD, "DISCARD" },
	};
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].flag))
			continue;
		used += (size_t)snprintf(buf + used, cap - used, "%s%s",
					 used ? "|" : "", names[i].name);
		if (used >= cap)
			break;
		flags &= ~names[i].flag;
	}
	if (flags && used < cap)
		snprintf(buf + used, cap - used, "%s0x%llx", used ? "|" : "",
			 (unsigned long long)flags);
	return buf;
}

/* ---- data patterns -------------------------------------------------- */

/*
 * The pattern is a function of (seed, offset in the message): a message
 * placed at the wrong offset, a chunk of a rendezvous transfer written to
 * the wrong place, stale data of another message (another seed) or a
 * neighbour's data all differ from it. One multiply per 8 bytes keeps
 * 16 MiB checks cheap.
 */
static inline uint64_t fx_pattern_word(uint64_t idx, uint64_t seed)
{
	uint64_t x = (idx + 1) * 0x9E3779B97F4A7C15ULL;

	x ^= seed * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
	x ^= x >> 29;
	x *= 0xFF51AFD7ED558CCDULL;
	return x ^ (x >> 32);
}

static inline uint8_t fx_pattern_byte(size_t off, uint64_t seed)
{
	return (uint8_t)(fx_pattern_word(off >> 3, seed) >> ((off & 7) * 8));
}

void fx_fill_at(void *buf, size_t off, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	size_t i = 0;

	while (i < len && ((off + i) & 7))
		p[i] = fx_pattern_byte(off + i, seed), i++;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = fx_pattern_word((off + i) >> 3, seed);
		size_t b;

		for (b = 0; b < 8; b++)
			p[i + b] = (uint8_t)(w >> (b * 8));
	}
	for (; i < len; i++)
		p[i] = fx_pattern_byte(off + i, seed);
	/*
	 * FX_CORRUPT: the negative self-check of the suite (run.sh -n). One
	 * byte of every buffer a sender fills is wrong; every program must
	 * then fail.
	 */
	if (fx_corrupt && len)
		p[len / 2] ^= 0x5a;
}

void fx_check_at(const void *buf, size_t off, size_t len, uint64_t seed,
		 const char *what)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t want = fx_pattern_byte(off + i, seed);

		/* compare a word at a time where aligned, bytes elsewhere */
		if (!((off + i) & 7) && i + 8 <= len) {
			uint64_t w = fx_pattern_word((off + i) >> 3, seed);
			size_t b;

			for (b = 0; b < 8; b++)
				if (p[i + b] != (uint8_t)(w >> (b * 8)))
					break;
			if (b == 8) {
				i += 7;
				continue;
			}
			i += b;
			want = fx_pattern_byte(off + i, seed);
		}
		if (p[i] != want)
			FX_FAIL("%s: data mismatch at offset %zu of %zu: "
				"expected 0x%02x, got 0x%02x (seed %llu)",
				what, off + i, off + len, want, p[i],
				(unsigned long long)seed);
	}
}

void fx_check_byte(const void *buf, size_t len, uint8_t val,
		   const char *what)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != val)
			FX_FAIL("%s: byte %zu is 0x%02x, expected 0x%02x "
				"(written where nothing may be)", what, i,
				p[i], val);
}

/* ---- progress and completions -------------------------------------- */

void fx_progress(struct fx_ctx *ctx)
{
	/* reading a counter progresses the endpoint and consumes nothing */
	if (ctx->txcntr)
		(void)fi_cntr_read(ctx->txcntr);
	if (ctx->rxcntr)
		(void)fi_cntr_read(ctx->rxcntr);
}

static const char *fx_cq_name(struct fx_ctx *ctx, struct fid_cq *cq)
{
	return cq == ctx->txcq ? "tx CQ" : cq == ctx->rxcq ? "rx CQ" : "CQ";
}

static ssize_t fx_cq_read1(struct fx_ctx *ctx, struct fid_cq *cq,
			   struct fx_comp *c)
{
	bool source = ctx->info->caps & FI_SOURCE;

	c->src = FI_ADDR_NOTAVAIL;
	if (ctx->opts->sread)
		return source ? fi_cq_sreadfrom(cq, &c->e, 1, &c->src, NULL,
						100)
			      : fi_cq_sread(cq, &c->e, 1, NULL, 100);
	return source ? fi_cq_readfrom(cq, &c->e, 1, &c->src)
		      : fi_cq_read(cq, &c->e, 1);
}

static int fx_cq_readerr(struct fid_cq *cq, struct fx_comp *c)
{
	struct fi_cq_err_entry err;
	ssize_t ret;

	memset(&err, 0, sizeof(err));
	ret = fi_cq_readerr(cq, &err, 0);
	if (ret != 1)
		FX_FAIL("fi_cq_readerr after -FI_EAVAIL: %zd (%s)", ret,
			fi_strerror((int)-ret));
	c->e.op_context = err.op_context;
	c->e.flags = err.flags;
	c->e.len = err.len;
	c->e.buf = err.buf;
	c->e.data = err.data;
	c->e.tag = err.tag;
	c->olen = err.olen;
	c->err = err.err;
	c->prov_errno = err.prov_errno;
	c->src = FI_ADDR_NOTAVAIL;
	if (!c->err)
		FX_FAIL("error entry with err 0");
	return c->err;
}

int fx_cq_wait(struct fx_ctx *ctx, struct fid_cq *cq, struct fx_comp *c)
{
	uint64_t now = fx_now_us(), deadline = now + FX_WAIT_MS * 1000ULL;
	uint64_t next_check = now + 10000;
	ssize_t ret;

	memset(c, 0, sizeof(*c));
	for (;;) {
		ret = fx_cq_read1(ctx, cq, c);
		if (ret == 1)
			return 0;
		if (ret == -FI_EAVAIL)
			return fx_cq_readerr(cq, c);
		if (ret != -FI_EAGAIN && ret != -FI_ETIMEDOUT)
			FX_FAIL("reading the %s: %zd (%s)",
				fx_cq_name(ctx, cq), ret,
				fi_strerror((int)-ret));
		now = fx_now_us();
		if (now > deadline)
			FX_FAIL("no completion on the %s within %d ms",
				fx_cq_name(ctx, cq), FX_WAIT_MS);
		if (now > next_check) {
			/* no point waiting for a peer that is gone */
			fx_oob_check_peers(ctx);
			next_check = now + 10000;
		}
		/* the other CQ may be the one that holds things up */
		fx_progress(ctx);
	}
}

void fx_cq_wait_ok(struct fx_ctx *ctx, struct fid_cq *cq, struct fx_comp *c,
		   const char *what)
{
	int err = fx_cq_wait(ctx, cq, c);

	if (err)
		FX_FAIL("%s: error completion on the %s: %s (err %d, prov_errno"
			" %d, context %p, len %zu, olen %zu, tag 0x%llx)", what,
			fx_cq_name(ctx, cq), fi_strerror(err), err,
			c->prov_errno, c->e.op_context, c->e.len, c->olen,
			(unsigned long long)c->e.tag);
}

void fx_cq_drain(struct fx_ctx *ctx, struct fid_cq *cq, size_t n,
		 const char *what)
{
	struct fx_comp c;
	size_t i;

	for (i = 0; i < n; i++)
		fx_cq_wait_ok(ctx, cq, &c, what);
}

void fx_cq_expect_empty(struct fx_ctx *ctx, struct fid_cq *cq, int ms,
			const char *what)
{
	uint64_t deadline = fx_now_us() + (uint64_t)ms * 1000;
	struct fx_comp c;
	char flags[128];
	ssize_t ret;

	do {
		memset(&c, 0, sizeof(c));
		ret = fx_cq_read1(ctx, cq, &c);
		if (ret == -FI_EAVAIL)
			fx_cq_readerr(cq, &c);
		if (ret == 1 || ret == -FI_EAVAIL)
			FX_FAIL("%s: unexpected %s on the %s: context %p, "
				"flags %s, len %zu, tag 0x%llx, err %d",
				what, c.err ? "error entry" : "completion",
				fx_cq_name(ctx, cq), c.e.op_context,
				fx_flags_str(c.e.flags, flags, sizeof(flags)),
				c.e.len, (unsigned long long)c.e.tag, c.err);
		if (ret != -FI_EAGAIN && ret != -FI_ETIMEDOUT)
			FX_FAIL("reading the %s: %zd (%s)",
				fx_cq_name(ctx, cq), ret,
				fi_strerror((int)-ret));
		fx_progress(ctx);
	} while (fx_now_us() < deadline);
}

void fx_cntr_wait(struct fx_ctx *ctx, struct fid_cntr *cntr, uint64_t val,
		  const char *what)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ULL;
	uint64_t cur;

	while ((cur = fi_cntr_read(cntr)) < val) {
		fx_oob_check_peers(ctx);
		if (fx_now_us() > deadline)
			FX_FAIL("%s: counter at %llu (errors %llu), expected "
				"%llu within %d ms", what,
				(unsigned long long)cur,
				(unsigned long long)fi_cntr_readerr(cntr),
				(unsigned long long)val, FX_WAIT_MS);
		fx_progress(ctx);
	}
}

bool fx_retry_again(struct fx_ctx *ctx, ssize_t ret, const char *what,
		    uint64_t *t0)
{
	if (!ret)
		return false;
	if (ret != -FI_EAGAIN)
		FX_FAIL("%s: %zd (%s)", what, ret, fi_strerror((int)-ret));
	if (!*t0)
		*t0 = fx_now_us();
	else if (fx_now_us() - *t0 > FX_WAIT_MS * 1000ULL)
		FX_FAIL("%s: still -FI_EAGAIN after %d ms", what, FX_WAIT_MS);
	fx_oob_check_peers(ctx);
	fx_progress(ctx);
	return true;
}

void fx_check_comp(const struct fx_comp *c, const void *op_context,
		   uint64_t flags, size_t len, uint64_t tag, const char *what)
{
	char got[128], want[128];

	FX_CHECK(c->e.op_context == op_context,
		 "%s: completion for context %p, expected %p", what,
		 c->e.op_context, op_context);
	FX_CHECK(c->e.flags == flags, "%s: completion flags %s, expected %s",
		 what, fx_flags_str(c->e.flags, got, sizeof(got)),
		 fx_flags_str(flags, want, sizeof(want)));
	/* len and tag are defined for receive completions only */
	if (!(flags & FI_RECV))
		return;
	FX_CHECK(c->e.len == len, "%s: completion len %zu, expected %zu",
		 what, c->e.len, len);
	if (flags & FI_TAGGED)
		FX_CHECK(c->e.tag == tag, "%s: completion tag 0x%llx, "
			 "expected 0x%llx", what,
			 (unsigned long long)c->e.tag,
			 (unsigned long long)tag);
}

/* ---- tagged or untagged, as -e says ---------------------------------- */

uint64_t fx_xfer_flag(const struct fx_ctx *ctx)
{
	return ctx->opts->xfer == FX_XFER_MSG ? FI_MSG : FI_TAGGED;
}

void fx_send(struct fx_ctx *ctx, const void *buf, size_t len, fi_addr_t dest,
	     uint64_t tag, void *context)
{
	if (ctx->opts->xfer == FX_XFER_MSG)
		FX_RETRY(ctx, "fi_send", fi_send(ctx->ep, buf, len, NULL,
						 dest, context));
	else
		FX_RETRY(ctx, "fi_tsend", fi_tsend(ctx->ep, buf, len, NULL,
						   dest, tag, context));
}

void fx_recv(struct fx_ctx *ctx, void *buf, size_t len, fi_addr_t src,
	     uint64_t tag, uint64_t ignore, void *context)
{
	if (ctx->opts->xfer == FX_XFER_MSG)
		FX_RETRY(ctx, "fi_recv", fi_recv(ctx->ep, buf, len, NULL,
						 src, context));
	else
		FX_RETRY(ctx, "fi_trecv", fi_trecv(ctx->ep, buf, len, NULL,
						   src, tag, ignore,
						   context));
}

int fx_slot_of(const struct fx_comp *c, const struct fi_context *ctxs, int n,
	       uint8_t *seen, const char *what)
{
	const struct fi_context *op = c->e.op_context;
	int slot;

	FX_CHECK(op >= ctxs && op < ctxs + n, "%s: completion for context "
		 "%p, not one of the %d posted", what, c->e.op_context, n);
	slot = (int)(op - ctxs);
	FX_CHECK(!seen[slot], "%s: operation %d completed twice", what, slot);
	seen[slot] = 1;
	return slot;
}
