/*
 * eng_bench.c - match rate through the whole engine: two NIs on the loop
 * transport, 8-byte eager puts (P4E_NO_ACK_REQ) from A, matching at B,
 * PUT events read from B's EQ. Where bench/match_bench.c measures the
 * matching structures alone, this one shows what is left of their
 * scaling once a message pays for posting, the transport, the sequence
 * and acceptance protocol, placement and its event.
 *
 * Posted receives: N use-once MEs on a PT of B; the puts then match them
 * in the worst order for a list walk (the entry posted last first), each
 * consuming its entry. Appends happen before the timed phase; a timed
 * phase holds at least P4E_EBENCH_BATCH messages (for N = 1, as many PTs
 * with one entry each). Unexpected messages: N puts land first in an
 * overflow entry (untimed); the timed phase then appends N use-once
 * P4E_ME_UH_COPY receives, newest message first, each finding its header
 * and copying its data out (a PUT_OVERFLOW event).
 *
 * Patterns follow Open MPI 4.1's mtl/ofi receives (as match_bench.c does):
 * every receive ignores the synchronous-send bit 0x100000000 (half of the
 * messages set it), the tag bits hold a context id, the source rank and
 * the tag; MPI_ANY_SOURCE receives (10 % in the third pattern) also
 * ignore the source bits and use match_id ANY. "Wildcards behind" adds
 * 1k entries that ignore all bits with match_id ANY after the receives
 * (never matched, but in the structure); its ratios are to the 1-entry
 * rate of Open MPI's pattern. The full-wildcard rows have every entry
 * ignore all bits with match_id ANY: the oldest entry (or header)
 * matches, so their "worst order" is the only order. Every event is
 * checked: a wrong match fails the case.
 *
 * Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so other
 * processes on a shared machine do not count (their cache pollution
 * does); wall-clock rates are reported as well. Each cell is the median
 * of P4E_EBENCH_RUNS runs of at least P4E_EBENCH_PER_RUN messages; the
 * sizes of a row take their runs in turn (see struct p4e_ebench_cell).
 *
 * Usage: eng_bench (the Markdown tables), or eng_bench posted|unexpected
 * PATTERN N for one case (profiling, e.g. under valgrind --tool=callgrind).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p4e.h"
#include "p4u_compiler.h"

#define P4E_EBENCH_SYNC		0x100000000ULL
#define P4E_EBENCH_SRC_SHIFT	33
#define P4E_EBENCH_SRC_MASK	(0x7fffULL << P4E_EBENCH_SRC_SHIFT)
#define P4E_EBENCH_CID_SHIFT	48
#define P4E_EBENCH_CID		5ULL
#define P4E_EBENCH_TAG_MASK	0xffffffffULL
#define P4E_EBENCH_SRC_RANK	3	/* A's rank in the tag bits */
#define P4E_EBENCH_NWILD	1024
#define P4E_EBENCH_RUNS		9
#define P4E_EBENCH_BATCH	1024
#define P4E_EBENCH_PER_RUN	262144	/* messages per run, at least */
#define P4E_EBENCH_WINDOW	256	/* puts in flight before draining */
#define P4E_EBENCH_MAX_PT	(P4E_EBENCH_BATCH + 1)
#define P4E_EBENCH_EQ		8192
#define P4E_EBENCH_LEN		8

enum p4e_ebench_pat {
	P4E_EBENCH_EXACT,	/* ignore 0 */
	P4E_EBENCH_OMPI,	/* ignore the sync bit on every receive */
	P4E_EBENCH_OMPI_ANY,	/* that, with 10% MPI_ANY_SOURCE */
	P4E_EBENCH_BEHIND,	/* Open MPI, 1k full wildcards posted after */
	P4E_EBENCH_WILD,	/* full wildcards only: the head matches */
	P4E_EBENCH_NPATS
};

static const char *const p4e_ebench_names[P4E_EBENCH_NPATS] = {
	[P4E_EBENCH_EXACT] = "ignore 0",
	[P4E_EBENCH_OMPI] = "Open MPI (ignore sync bit)",
	[P4E_EBENCH_OMPI_ANY] = "Open MPI + 10% ANY_SOURCE",
	[P4E_EBENCH_BEHIND] = "Open MPI + 1k full wildcards behind",
	[P4E_EBENCH_WILD] = "full wildcards (ignore ~0, ANY)",
};

static const size_t p4e_ebench_sizes[] = { 1, 1024, 16384, 65536 };
#define P4E_EBENCH_NSIZES	P4U_ARRAY_SIZE(p4e_ebench_sizes)

struct p4e_ebench_result {
	double cpu_rate;	/* messages per second, thread CPU clock */
	double wall_rate;	/* the same, wall clock */
	bool valid;
};

/* Two NIs; A sends, B matches. */
struct p4e_ebench {
	struct p4e_dom *dom;
	struct p4e_ni *ni[2];
	uint32_t id[2];
	struct p4e_eq *eq;		/* B's, shared by its PTs */
	uint32_t pt[P4E_EBENCH_MAX_PT];
	uint64_t md;
	uint8_t src[P4E_EBENCH_LEN];
	uint8_t sink[64];		/* every receive's buffer */
	uint64_t *oflow;		/* overflow entry per PT, or 0 */
	uint8_t *oflow_buf;
	size_t oflow_len;
	void **expect;			/* user_ptr of the k-th event */
	uint64_t *expect_bits;		/* match_bits of the k-th event */
	size_t sent, got;
	bool bad;
};

/* ---- clocks and statistics ----------------------------------------------- */

static double p4e_ebench_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int p4e_ebench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double p4e_ebench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), p4e_ebench_cmp_double);
	return v[n / 2];
}

/* ---- patterns ------------------------------------------------------------ */

static bool p4e_ebench_is_any(enum p4e_ebench_pat pat, size_t i)
{
	return pat == P4E_EBENCH_OMPI_ANY && i % 10 == 3;
}

static uint64_t p4e_ebench_tag(size_t i, uint64_t rank)
{
	return (P4E_EBENCH_CID << P4E_EBENCH_CID_SHIFT) |
	       (rank << P4E_EBENCH_SRC_SHIFT) | (i & P4E_EBENCH_TAG_MASK);
}

/* The match fields of receive i. */
static void p4e_ebench_recv(const struct p4e_ebench *b, enum p4e_ebench_pat pat,
			    size_t i, struct p4e_me_desc *d)
{
	d->match_bits = p4e_ebench_tag(i, P4E_EBENCH_SRC_RANK);
	d->ignore_bits = pat == P4E_EBENCH_EXACT ? 0 : P4E_EBENCH_SYNC;
	d->match_id = b->id[0];
	if (p4e_ebench_is_any(pat, i)) {
		d->match_bits = p4e_ebench_tag(i, 0);
		d->ignore_bits = P4E_EBENCH_SYNC | P4E_EBENCH_SRC_MASK;
		d->match_id = P4E_ID_ANY;
	} else if (pat == P4E_EBENCH_WILD) {
		d->match_bits = 0;
		d->ignore_bits = UINT64_MAX;
		d->match_id = P4E_ID_ANY;
	}
}

/* The bits of the message receive i waits for: half synchronous. */
static uint64_t p4e_ebench_msg(enum p4e_ebench_pat pat, size_t i)
{
	uint64_t bits = p4e_ebench_tag(i, P4E_EBENCH_SRC_RANK);

	if (pat != P4E_EBENCH_EXACT && (i & 1))
		bits |= P4E_EBENCH_SYNC;
	return bits;
}

/* ---- setup --------------------------------------------------------------- */

static int p4e_ebench_open(struct p4e_ebench *b)
{
	struct p4e_ni_attr attr;
	struct p4e_md_desc md = {
		.start = b->src, .length = sizeof(b->src),
		.options = P4E_MD_EVENT_SEND_DISABLE, .ct = P4E_HANDLE_NONE,
	};
	char addr[64];
	size_t len;
	uint32_t i;
	int ret;

	ret = p4e_dom_create(NULL, &b->dom);
	for (i = 0; !ret && i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL;
		attr.transport = &p4t_loop_ops;
		attr.desired.max_pt_index = P4E_EBENCH_MAX_PT;
		attr.desired.max_unexpected_headers = 1u << 17;
		ret = p4e_ni_create(b->dom, &attr, &b->ni[i]);
		len = sizeof(addr);
		if (!ret)
			ret = p4e_ni_getname(b->ni[i], addr, &len);
		if (!ret)
			ret = p4e_peer_lookup(b->dom, addr, len, &b->id[i]);
	}
	if (!ret)
		ret = p4e_eq_ring_create(P4E_EBENCH_EQ, &b->eq);
	for (i = 0; !ret && i < P4E_EBENCH_MAX_PT; i++)
		ret = p4e_pt_alloc(b->ni[1], 0, b->eq, i, &b->pt[i]);
	if (!ret)
		ret = p4e_md_bind(b->ni[0], &md, &b->md);
	if (ret)
		fprintf(stderr, "eng_bench: setup failed: %s\n",
			fi_strerror(-ret));
	return ret;
}

static void p4e_ebench_close(struct p4e_ebench *b)
{
	int i;

	for (i = 0; i < 2; i++)
		if (b->ni[i])
			p4e_ni_destroy(b->ni[i]);
	p4e_eq_ring_destroy(b->eq);
	if (b->dom)
		p4e_dom_destroy(b->dom);
}

/* ---- traffic ------------------------------------------------------------- */

/* Read B's events; every PUT / PUT_OVERFLOW must be the one expected. */
static void p4e_ebench_drain(struct p4e_ebench *b)
{
	struct p4e_event ev;

	while (p4e_eq_ring_get(b->eq, &ev) >= 0) {
		if (ev.type != P4E_EVENT_PUT &&
		    ev.type != P4E_EVENT_PUT_OVERFLOW)
			continue;
		if (b->got == b->sent || ev.ni_fail_type != P4E_NI_OK ||
		    ev.user_ptr != b->expect[b->got] ||
		    ev.match_bits != b->expect_bits[b->got])
			b->bad = true;
		if (b->got < b->sent)
			b->got++;
	}
}

/* Progress until every put sent has its event at B. */
static void p4e_ebench_settle(struct p4e_ebench *b)
{
	int idle = 0;

	while (b->got < b->sent && idle < 1000) {
		idle = p4e_dom_progress(b->dom, 256) ? 0 : idle + 1;
		p4e_ebench_drain(b);
	}
	if (b->got < b->sent)
		b->bad = true;
}

static void p4e_ebench_put(struct p4e_ebench *b, uint32_t pt, uint64_t bits,
			   void *expect)
{
	struct p4e_xfer x = {
		.md = b->md, .length = P4E_EBENCH_LEN,
		.ack_req = P4E_NO_ACK_REQ, .target = b->id[1],
		.pt_index = pt, .match_bits = bits,
		.get_md = P4E_HANDLE_NONE,
	};
	int ret;

	b->expect[b->sent] = expect;
	b->expect_bits[b->sent] = bits;
	while ((ret = p4e_put(b->ni[0], &x)) == -FI_EAGAIN) {
		/* operation slots come back with the target's acceptance */
		p4e_dom_progress(b->dom, 256);
		p4e_ebench_drain(b);
	}
	if (ret) {
		b->bad = true;
		return;
	}
	if (++b->sent - b->got >= P4E_EBENCH_WINDOW)
		p4e_ebench_settle(b);
}

static int p4e_ebench_append(struct p4e_ebench *b, uint32_t pt,
			     struct p4e_me_desc *d, enum p4e_list list,
			     void *user_ptr, uint64_t *me_p)
{
	d->ct = P4E_HANDLE_NONE;
	d->uid = P4E_UID_ANY;
	d->options |= P4E_ME_OP_PUT | P4E_ME_EVENT_LINK_DISABLE |
		      P4E_ME_EVENT_UNLINK_DISABLE;
	return p4e_me_append(b->ni[1], pt, d, list, user_ptr, 0, me_p);
}

/* The entry tag of list l, receive i (events carry it as user_ptr). */
static void *p4e_ebench_cookie(size_t l, size_t i)
{
	return (void *)(uintptr_t)((l << 32 | i) + 1);
}

/* ---- posted receives ----------------------------------------------------- */

struct p4e_ebench_case {
	enum p4e_ebench_pat pat;
	size_t n;		/* receives per list */
	size_t nlists;		/* PTs used, one list each */
	uint64_t *wild;		/* wildcards behind: nlists * NWILD */
};

static int p4e_ebench_post_fill(struct p4e_ebench *b,
				struct p4e_ebench_case *c)
{
	struct p4e_me_desc d = { 0 };
	uint64_t me;
	size_t l, i;
	int ret;

	for (l = 0; l < c->nlists; l++) {
		for (i = 0; i < c->n; i++) {
			memset(&d, 0, sizeof(d));
			p4e_ebench_recv(b, c->pat, i, &d);
			d.start = b->sink;
			d.length = P4E_EBENCH_LEN;
			d.options = P4E_ME_USE_ONCE;
			ret = p4e_ebench_append(b, b->pt[l], &d,
						P4E_PRIORITY_LIST,
						p4e_ebench_cookie(l, i), &me);
			if (ret)
				return ret;
		}
		for (i = 0; c->wild && i < P4E_EBENCH_NWILD; i++) {
			memset(&d, 0, sizeof(d));
			p4e_ebench_recv(b, P4E_EBENCH_WILD, i, &d);
			d.start = b->sink;
			d.length = P4E_EBENCH_LEN;
			ret = p4e_ebench_append(b, b->pt[l], &d,
						P4E_PRIORITY_LIST, NULL,
						&c->wild[l * P4E_EBENCH_NWILD +
							 i]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The timed part: a put for every receive, newest receive first (not
 * inlined, so a profiler can collect in it alone). */
static __attribute__((noinline)) void
p4e_ebench_post_send(struct p4e_ebench *b, const struct p4e_ebench_case *c)
{
	size_t l, i, k;

	for (k = c->n; k-- > 0;) {
		/* wildcards only: the oldest entry, the head, wins */
		i = c->pat == P4E_EBENCH_WILD ? c->n - 1 - k : k;
		for (l = 0; l < c->nlists; l++)
			p4e_ebench_put(b, b->pt[l], p4e_ebench_msg(c->pat, k),
				       p4e_ebench_cookie(l, i));
	}
	p4e_ebench_settle(b);
}

static int p4e_ebench_post_round(struct p4e_ebench *b,
				 struct p4e_ebench_case *c, double *cpu_p,
				 double *wall_p)
{
	double cpu, wall;
	size_t l;
	int ret;

	ret = p4e_ebench_post_fill(b, c);
	if (ret)
		return ret;
	b->sent = b->got = 0;
	cpu = p4e_ebench_clock(CLOCK_THREAD_CPUTIME_ID);
	wall = p4e_ebench_clock(CLOCK_MONOTONIC);
	p4e_ebench_post_send(b, c);
	*cpu_p = p4e_ebench_clock(CLOCK_THREAD_CPUTIME_ID) - cpu;
	*wall_p = p4e_ebench_clock(CLOCK_MONOTONIC) - wall;
	for (l = 0; c->wild && l < c->nlists * P4E_EBENCH_NWILD; l++)
		p4e_me_unlink(b->ni[1], c->wild[l], 0);
	return b->bad ? -FI_EIO : 0;
}

/* ---- unexpected messages ------------------------------------------------- */

/* Untimed: the messages, oldest first, into each list's overflow entry. */
static int p4e_ebench_unexp_fill(struct p4e_ebench *b,
				 struct p4e_ebench_case *c)
{
	struct p4e_me_desc d = { 0 };
	size_t l, i;
	int ret;

	for (l = 0; l < c->nlists; l++) {
		memset(&d, 0, sizeof(d));
		d.start = b->oflow_buf + l * c->n * P4E_EBENCH_LEN;
		d.length = c->n * P4E_EBENCH_LEN;
		d.match_id = P4E_ID_ANY;
		d.ignore_bits = UINT64_MAX;
		d.options = P4E_ME_MANAGE_LOCAL;
		ret = p4e_ebench_append(b, b->pt[l], &d, P4E_OVERFLOW_LIST,
					NULL, &b->oflow[l]);
		if (ret)
			return ret;
	}
	b->sent = b->got = 0;
	for (i = 0; i < c->n; i++)
		for (l = 0; l < c->nlists; l++)
			p4e_ebench_put(b, b->pt[l], p4e_ebench_msg(c->pat, i),
				       NULL);
	p4e_ebench_settle(b);
	return b->bad ? -FI_EIO : 0;
}

/* The timed part: a receive for every message, newest message first. */
static __attribute__((noinline)) void
p4e_ebench_unexp_recv(struct p4e_ebench *b, const struct p4e_ebench_case *c)
{
	struct p4e_me_desc d;
	size_t l, i, k;
	uint64_t me;

	for (k = c->n; k-- > 0;) {
		/* wildcards only: the oldest header, the head, is found */
		i = c->pat == P4E_EBENCH_WILD ? c->n - 1 - k : k;
		for (l = 0; l < c->nlists; l++) {
			memset(&d, 0, sizeof(d));
			p4e_ebench_recv(b, c->pat, k, &d);
			d.start = b->sink;
			d.length = P4E_EBENCH_LEN;
			d.options = P4E_ME_USE_ONCE | P4E_ME_UH_COPY;
			b->expect[b->sent] = p4e_ebench_cookie(l, k);
			b->expect_bits[b->sent++] = p4e_ebench_msg(c->pat, i);
			if (p4e_ebench_append(b, b->pt[l], &d,
					      P4E_PRIORITY_LIST,
					      p4e_ebench_cookie(l, k), &me))
				b->bad = true;
			if (b->sent - b->got >= P4E_EBENCH_WINDOW)
				p4e_ebench_drain(b);
		}
	}
	p4e_ebench_drain(b);
}

static int p4e_ebench_unexp_round(struct p4e_ebench *b,
				  struct p4e_ebench_case *c, double *cpu_p,
				  double *wall_p)
{
	double cpu, wall;
	size_t l;
	int ret;

	ret = p4e_ebench_unexp_fill(b, c);
	if (ret)
		return ret;
	b->sent = b->got = 0;
	cpu = p4e_ebench_clock(CLOCK_THREAD_CPUTIME_ID);
	wall = p4e_ebench_clock(CLOCK_MONOTONIC);
	p4e_ebench_unexp_recv(b, c);
	*cpu_p = p4e_ebench_clock(CLOCK_THREAD_CPUTIME_ID) - cpu;
	*wall_p = p4e_ebench_clock(CLOCK_MONOTONIC) - wall;
	if (b->got != b->sent)
		b->bad = true;
	for (l = 0; l < c->nlists; l++)
		p4e_me_unlink(b->ni[1], b->oflow[l], 0);
	return b->bad ? -FI_EIO : 0;
}

/* ---- runs ---------------------------------------------------------------- */

/*
 * One cell of a table: a pattern at one size, with its own NIs. The sizes
 * of a row are open together and take their runs in turn (run r of every
 * size before run r + 1 of any), so a change in the machine's speed
 * during the row (a shared VM's is large) falls on every size alike
 * instead of on whichever ran last: the ratios stay comparable.
 */
struct p4e_ebench_cell {
	struct p4e_ebench b;
	struct p4e_ebench_case c;
	bool unexp;
	size_t rounds, msgs;
	double cpu_rates[P4E_EBENCH_RUNS];
	double wall_rates[P4E_EBENCH_RUNS];
	int ret;
};

static int p4e_ebench_round(struct p4e_ebench_cell *cell, double *cpu_p,
			    double *wall_p)
{
	return cell->unexp ?
	       p4e_ebench_unexp_round(&cell->b, &cell->c, cpu_p, wall_p) :
	       p4e_ebench_post_round(&cell->b, &cell->c, cpu_p, wall_p);
}

static void p4e_ebench_cell_fini(struct p4e_ebench_cell *cell)
{
	p4e_ebench_close(&cell->b);
	free(cell->c.wild);
	free(cell->b.oflow_buf);
	free(cell->b.oflow);
	free(cell->b.expect_bits);
	free(cell->b.expect);
}

/* Allocate, open and warm up (pools, tables and mask indexes grow once);
 * cell->ret says whether it worked. p4e_ebench_cell_result() closes the
 * cell either way. */
static void p4e_ebench_cell_init(struct p4e_ebench_cell *cell, bool unexp,
				 enum p4e_ebench_pat pat, size_t n)
{
	struct p4e_ebench *b = &cell->b;
	double cpu, wall;
	int ret;

	memset(cell, 0, sizeof(*cell));
	cell->unexp = unexp;
	cell->c.pat = pat;
	cell->c.n = n;
	cell->c.nlists = n < P4E_EBENCH_BATCH ? P4E_EBENCH_BATCH / n : 1;
	cell->msgs = cell->c.nlists * n;
	cell->rounds = (P4E_EBENCH_PER_RUN + cell->msgs - 1) / cell->msgs;
	b->expect = calloc(cell->msgs, sizeof(*b->expect));
	b->expect_bits = calloc(cell->msgs, sizeof(*b->expect_bits));
	b->oflow = calloc(cell->c.nlists, sizeof(*b->oflow));
	b->oflow_buf = calloc(cell->msgs, P4E_EBENCH_LEN);
	if (pat == P4E_EBENCH_BEHIND)
		cell->c.wild = calloc(cell->c.nlists * P4E_EBENCH_NWILD,
				      sizeof(*cell->c.wild));
	ret = -FI_ENOMEM;
	if (b->expect && b->expect_bits && b->oflow && b->oflow_buf &&
	    (pat != P4E_EBENCH_BEHIND || cell->c.wild))
		ret = p4e_ebench_open(b);
	if (!ret)
		ret = p4e_ebench_round(cell, &cpu, &wall);
	cell->ret = ret;
}

static void p4e_ebench_cell_run(struct p4e_ebench_cell *cell, size_t run)
{
	double cpu, wall, cpu_sum = 0, wall_sum = 0;
	size_t r;

	for (r = 0; !cell->ret && r < cell->rounds; r++) {
		cell->ret = p4e_ebench_round(cell, &cpu, &wall);
		cpu_sum += cpu;
		wall_sum += wall;
	}
	cell->cpu_rates[run] = (double)(cell->msgs * cell->rounds) / cpu_sum;
	cell->wall_rates[run] = (double)(cell->msgs * cell->rounds) /
				wall_sum;
}

/* Medians into res, then close; returns the cell's error. */
static int p4e_ebench_cell_result(struct p4e_ebench_cell *cell,
				  struct p4e_ebench_result *res)
{
	int ret = cell->ret;

	memset(res, 0, sizeof(*res));
	if (!ret) {
		res->cpu_rate = p4e_ebench_median(cell->cpu_rates,
						  P4E_EBENCH_RUNS);
		res->wall_rate = p4e_ebench_median(cell->wall_rates,
						   P4E_EBENCH_RUNS);
		res->valid = true;
	}
	p4e_ebench_cell_fini(cell);
	return ret;
}

/* The cells of sizes[0..nsizes-1] (0: skipped), interleaved run by run. */
static int p4e_ebench_cells(bool unexp, enum p4e_ebench_pat pat,
			    const size_t *sizes, size_t nsizes,
			    struct p4e_ebench_result *res)
{
	struct p4e_ebench_cell *cells;
	size_t s, run;
	int ret = 0, err;

	cells = calloc(nsizes, sizeof(*cells));
	if (!cells)
		return -FI_ENOMEM;
	for (s = 0; s < nsizes; s++)
		if (sizes[s])
			p4e_ebench_cell_init(&cells[s], unexp, pat, sizes[s]);
	for (run = 0; run < P4E_EBENCH_RUNS; run++)
		for (s = 0; s < nsizes; s++)
			if (sizes[s] && !cells[s].ret)
				p4e_ebench_cell_run(&cells[s], run);
	for (s = 0; s < nsizes; s++) {
		if (!sizes[s])
			continue;
		err = p4e_ebench_cell_result(&cells[s], &res[s]);
		if (err) {
			fprintf(stderr, "eng_bench: %s %s, %zu: failed: %s\n",
				unexp ? "unexpected" : "posted",
				p4e_ebench_names[pat], sizes[s],
				fi_strerror(-err));
			ret = err;
		}
	}
	free(cells);
	return ret;
}

/* ---- report -------------------------------------------------------------- */

/* r[case][pattern][size]; case 0 posted, 1 unexpected. */
struct p4e_ebench_table {
	struct p4e_ebench_result r[2][P4E_EBENCH_NPATS][P4E_EBENCH_NSIZES];
};

static bool p4e_ebench_skip(bool unexp, int pat, size_t s)
{
	if (unexp)
		return pat == P4E_EBENCH_BEHIND || p4e_ebench_sizes[s] == 16384;
	return pat == P4E_EBENCH_BEHIND && s == 0;
}

/* The 1-message rate a row's ratios are to. */
static double p4e_ebench_base(const struct p4e_ebench_table *t, int u,
			      int pat, bool wall)
{
	const struct p4e_ebench_result *r =
		&t->r[u][pat == P4E_EBENCH_BEHIND ? P4E_EBENCH_OMPI : pat][0];

	return wall ? r->wall_rate : r->cpu_rate;
}

static void p4e_ebench_table(const struct p4e_ebench_table *t, bool wall)
{
	const struct p4e_ebench_result *r;
	double base, rate;
	size_t s;
	int u, pat;

	printf("\n%s: messages matched per second (millions), median of %d "
	       "runs (ratio to 1)\n\n| case | pattern |",
	       wall ? "Wall clock" : "Thread CPU time", P4E_EBENCH_RUNS);
	for (s = 0; s < P4E_EBENCH_NSIZES; s++)
		printf(" %zu |", p4e_ebench_sizes[s]);
	printf("\n|---|---|");
	for (s = 0; s < P4E_EBENCH_NSIZES; s++)
		printf("---|");
	printf("\n");
	for (u = 0; u < 2; u++) {
		for (pat = 0; pat < P4E_EBENCH_NPATS; pat++) {
			if (u && pat == P4E_EBENCH_BEHIND)
				continue;
			base = p4e_ebench_base(t, u, pat, wall);
			printf("| %s | %s |", u ? "unexpected" : "posted",
			       p4e_ebench_names[pat]);
			for (s = 0; s < P4E_EBENCH_NSIZES; s++) {
				r = &t->r[u][pat][s];
				rate = wall ? r->wall_rate : r->cpu_rate;
				if (!r->valid || !base)
					printf(" – |");
				else
					printf(" %.3f (%.2f) |", rate / 1e6,
					       rate / base);
			}
			printf("\n");
		}
	}
}

/* One case, for profiling: eng_bench posted|unexpected PATTERN N. */
static int p4e_ebench_one(char **argv)
{
	struct p4e_ebench_result res;
	int pat = atoi(argv[2]), ret;
	size_t n = strtoul(argv[3], NULL, 0);

	if (pat < 0 || pat >= P4E_EBENCH_NPATS || !n)
		return EXIT_FAILURE;
	ret = p4e_ebench_cells(!strcmp(argv[1], "unexpected"), pat, &n, 1,
			       &res);
	printf("%s %s, %zu: %.3f M/s cpu, %.3f M/s wall\n", argv[1],
	       p4e_ebench_names[pat], n, res.cpu_rate / 1e6,
	       res.wall_rate / 1e6);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	static struct p4e_ebench_table t;
	struct p4e_ebench_result *big, *one;
	size_t sizes[P4E_EBENCH_NSIZES];
	bool target_ok = true;
	int u, pat, ret = 0;
	size_t s;

	if (argc == 4)
		return p4e_ebench_one(argv);
	printf("Engine match rate: 8-byte eager puts, P4E_NO_ACK_REQ, two NIs "
	       "on the loop transport.\nPosted: N use-once receives matched "
	       "newest first. Unexpected: N messages, then\nN use-once "
	       "UH_COPY receives, newest message first.\n");
	fflush(stdout);
	for (u = 0; u < 2; u++) {
		for (pat = 0; pat < P4E_EBENCH_NPATS; pat++) {
			for (s = 0; s < P4E_EBENCH_NSIZES; s++)
				sizes[s] = p4e_ebench_skip(u, pat, s) ? 0 :
					   p4e_ebench_sizes[s];
			ret |= p4e_ebench_cells(u, pat, sizes,
						P4E_EBENCH_NSIZES,
						t.r[u][pat]);
		}
	}
	p4e_ebench_table(&t, false);
	p4e_ebench_table(&t, true);

	for (pat = P4E_EBENCH_EXACT; pat <= P4E_EBENCH_OMPI_ANY; pat++) {
		one = &t.r[0][pat][0];
		big = &t.r[0][pat][P4E_EBENCH_NSIZES - 1];
		if (!one->valid || !big->valid ||
		    big->cpu_rate < 0.8 * one->cpu_rate)
			target_ok = false;
	}
	printf("\nTarget (posted, first three patterns: rate at 64k >= 0.8 x "
	       "rate at 1, CPU clock): %s\n", target_ok ? "met" : "NOT met");
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
