/*
 * fx_threads.c - the thread-level matrix: several threads post tagged
 * sends and receives and read completions at the same time, at the
 * threading level -L asks for (default safe), obeying what fi_domain(3)
 * says that level allows; every byte checked.
 *
 * Both sides run the same code. Thread t sends -N messages to the peer
 * with tags TAG(phase, t, i) and receives the peer's -N messages with the
 * same tags (exact tags, so a message can only land in its own buffer),
 * -W of each in flight; sizes cycle through empty, small, the eager limit
 * and rendezvous sizes. Every receive is checked: length, tag, completion
 * flags, payload (a pattern seeded by side, phase, thread and message)
 * and the guard bytes after the buffer; every send's flags too.
 *
 * The shapes a run is made of (the phase number is in every tag):
 *
 * Phase 1 (one endpoint): the -t threads use the one endpoint of fx_init
 *          and its tx and rx CQs. Any thread may read any thread's
 *          completion, so completions are handed to their owner through
 *          a table found from the operation context (the op table). The
 *          bound counters must count every send and receive of every
 *          thread.
 * Phase 2 (an endpoint and a CQ per thread): each thread has its own
 *          endpoint and CQ on the shared domain and AV and talks to the
 *          peer's endpoint of the same index. The names are exchanged
 *          over OOB and inserted into the AV before the threads start
 *          (fi_av_insert is a control call, not the threads' business).
 * Phase 3 (an endpoint per thread, one CQ): as phase 2, but every
 *          endpoint is bound (tx and rx) to one CQ all threads read;
 *          completions are handed over through the op table as in
 *          phase 1.
 *
 * What each level runs, and why (fi_domain(3), "threading"):
 *
 *   safe        phases 1 and 2, no application lock: any object may be
 *               used from any thread at any time.
 *   fid         phases 2 and 3. The same object must not be used by two
 *               threads at once; different objects may, and a thread may
 *               post on an endpoint while another reads the endpoint's
 *               CQ. Phase 2 needs no lock. In phase 3 each thread posts
 *               on the endpoint it owns without a lock, while every read
 *               of the shared CQ is serialised by an application mutex.
 *   endpoint    as fid (it adds only that the contexts of one endpoint
 *               are serialised too; each endpoint here has one thread).
 *   completion  phase 2 only, without any application lock: objects tied
 *               together by a CQ (an endpoint, its CQ and counters) must
 *               be used by one thread at a time, and here they are each
 *               one thread's own; nothing else is shared but the domain
 *               and the AV. Phases 1 and 3 would need a lock around every
 *               call, which is what domain tests.
 *   domain      phase 1, with one application mutex around EVERY
 *               libfabric call the threads make (posts, CQ reads); the
 *               counters of fx_init are read under it too, by the main
 *               thread once the threads are joined.
 *
 * fi_getinfo must return exactly the level asked for (and with -a,
 * FI_PROGRESS_AUTO), or the run fails: a provider that substituted
 * another level would have the matrix test something else. A thread that
 * gets -FI_EAGAIN from a post progresses by reading its own CQs, under
 * the same rules as any other read, never through fx_init's counters
 * (below safe they belong to an endpoint the thread does not own).
 *
 * -c sread makes every CQ read a blocking fi_cq_sread (in phase 1 at
 * safe, several threads sleep on one CQ at once); -a asks for
 * FI_PROGRESS_AUTO (the provider's progress thread runs alongside).
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_TH_MAX	16
#define FX_TH_DEF	4	/* threads */
#define FX_TH_N		200	/* messages each way per thread */
#define FX_TH_W		8	/* window */
#define FX_TH_MAXLEN	(200 * 1000)
#define FX_TH_GUARD	64	/* bytes after each receive buffer */
#define FX_TH_POISON	0xee
#define FX_TH_BATCH	8	/* entries per CQ read */

static const size_t fx_th_sizes[] = {
	0, 1, 64, 1000, 4096, 16384, 16385, 70000, FX_TH_MAXLEN,
};
#define FX_TH_NSIZES	(sizeof(fx_th_sizes) / sizeof(fx_th_sizes[0]))

/* one operation of a thread's window */
struct fx_th_op {
	struct fi_context ctx;
	atomic_int done;		/* set by whichever thread read it */
	int err;
	size_t len;
	uint64_t tag;
	uint64_t flags;
};

struct fx_th {
	struct fx_th_run *run;
	int idx;
	pthread_t thread;
	struct fid_ep *ep;
	struct fid_cq *txcq, *rxcq;	/* the same CQ in phases 2 and 3 */
	fi_addr_t peer;
	char *sbuf[FX_TH_W], *rbuf[FX_TH_W];
	struct fx_th_op sop[FX_TH_W], rop[FX_TH_W];
	size_t sent, received;
};

struct fx_th_run {
	struct fx_ctx *ctx;
	enum fi_threading level;
	int phase;
	int nthreads;
	int n;
	int window;
	/*
	 * The application's one mutex, and what it serialises in the
	 * current phase: the CQ reads (phase 3, and domain), the posts
	 * (domain: with the reads, every libfabric call of the threads).
	 */
	pthread_mutex_t lock;
	bool lock_reads;
	bool lock_posts;
	struct fx_th th[FX_TH_MAX];
};

static uint64_t fx_th_tag(int phase, int t, int i)
{
	return (uint64_t)phase << 56 | (uint64_t)t << 32 | (uint64_t)i;
}

static size_t fx_th_size(int t, int i)
{
	return fx_th_sizes[(size_t)(i * 7 + t) % FX_TH_NSIZES];
}

/* the sender's side goes in, so the two directions never look alike */
static uint64_t fx_th_seed(bool from_server, int phase, int t, int i)
{
	return (uint64_t)from_server << 63 | fx_th_tag(phase, t, i);
}

static void fx_th_lock(struct fx_th_run *run, bool take)
{
	int ret;

	if (!take)
		return;
	ret = pthread_mutex_lock(&run->lock);
	FX_CHECK(!ret, "pthread_mutex_lock: %s", strerror(ret));
}

static void fx_th_unlock(struct fx_th_run *run, bool held)
{
	int ret;

	if (!held)
		return;
	ret = pthread_mutex_unlock(&run->lock);
	FX_CHECK(!ret, "pthread_mutex_unlock: %s", strerror(ret));
}

/* the operation a context belongs to, in any thread of the run */
static struct fx_th_op *fx_th_op_of(struct fx_th_run *run, void *context)
{
	int t;

	for (t = 0; t < run->nthreads; t++) {
		struct fx_th *th = &run->th[t];
		struct fx_th_op *op = context;

		if (op >= th->sop && op < th->sop + FX_TH_W)
			return op;
		if (op >= th->rop && op < th->rop + FX_TH_W)
			return op;
	}
	FX_FAIL("completion for context %p, not an operation of this run",
		context);
}

static void fx_th_record(struct fx_th_run *run,
			 const struct fi_cq_tagged_entry *e, int err)
{
	struct fx_th_op *op = fx_th_op_of(run, e->op_context);

	FX_CHECK(!atomic_load(&op->done), "context %p completed twice",
		 e->op_context);
	op->err = err;
	op->len = e->len;
	op->tag = e->tag;
	op->flags = e->flags;
	atomic_store_explicit(&op->done, 1, memory_order_release);
}

/*
 * Reads what one CQ has (or, with sread, what comes within 10 ms) and
 * hands each completion to its operation; returns how many it read. The
 * read and, after -FI_EAVAIL, the error read are one critical section
 * when reads are serialised.
 */
static ssize_t fx_th_poll_cq(struct fx_th_run *run, struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e[FX_TH_BATCH];
	bool locked = run->lock_reads;
	struct fi_cq_err_entry err;
	ssize_t ret, eret = 0, k;

	fx_th_lock(run, locked);
	ret = run->ctx->opts->sread ? fi_cq_sread(cq, e, FX_TH_BATCH, NULL,
						  10)
				    : fi_cq_read(cq, e, FX_TH_BATCH);
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		eret = fi_cq_readerr(cq, &err, 0);
	}
	fx_th_unlock(run, locked);
	if (ret == -FI_EAGAIN || ret == -FI_ETIMEDOUT)
		return 0;
	if (ret == -FI_EAVAIL) {
		if (eret == -FI_EAGAIN)
			return 0;	/* another thread took it */
		FX_CHECK(eret == 1, "fi_cq_readerr: %zd (%s)", eret,
			 fi_strerror((int)-eret));
		FX_FAIL("phase %d: error completion: %s (err %d, prov_errno "
			"%d, context %p, len %zu, olen %zu, tag 0x%llx)",
			run->phase, fi_strerror(err.err), err.err,
			err.prov_errno, err.op_context, err.len, err.olen,
			(unsigned long long)err.tag);
	}
	FX_CHECK(ret > 0, "reading a CQ: %zd (%s)", ret,
		 fi_strerror((int)-ret));
	for (k = 0; k < ret; k++)
		fx_th_record(run, &e[k], 0);
	return ret;
}

/* progress: th's own CQs (the shared ones where they are shared) */
static void fx_th_progress(struct fx_th *th)
{
	struct fx_th_run *run = th->run;
	ssize_t got;

	got = fx_th_poll_cq(run, th->rxcq);
	if (th->txcq != th->rxcq)
		got += fx_th_poll_cq(run, th->txcq);
	/* an empty read under the mutex: let a thread waiting for it in */
	if (!got && (run->lock_reads || run->lock_posts))
		sched_yield();
}

/* until every operation of th's window is done, reading CQs meanwhile */
static void fx_th_wait(struct fx_th *th, int count)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ULL;
	struct fx_th_run *run = th->run;
	int j, pending;

	for (;;) {
		pending = 0;
		for (j = 0; j < count; j++)
			pending += !atomic_load_explicit(&th->sop[j].done,
							 memory_order_acquire) +
				   !atomic_load_explicit(&th->rop[j].done,
							 memory_order_acquire);
		if (!pending)
			return;
		FX_CHECK(fx_now_us() < deadline, "phase %d thread %d: %d of "
			 "%d operations not complete within %d ms", run->phase,
			 th->idx, pending, 2 * count, FX_WAIT_MS);
		fx_th_progress(th);
	}
}

/*
 * Posts operation j (a receive, or a send), retrying while the provider
 * says -FI_EAGAIN; meanwhile the thread progresses its own CQs (never
 * fx_progress(): fx_init's counters are not the thread's below safe).
 */
static void fx_th_post(struct fx_th *th, int j, int i, bool send)
{
	struct fx_th_run *run = th->run;
	uint64_t tag = fx_th_tag(run->phase, th->idx, i);
	size_t len = fx_th_size(th->idx, i);
	bool locked = run->lock_posts;
	uint64_t t0 = 0;
	ssize_t ret;

	for (;;) {
		fx_th_lock(run, locked);
		ret = send ? fi_tsend(th->ep, th->sbuf[j], len, NULL,
				      th->peer, tag, &th->sop[j].ctx)
			   : fi_trecv(th->ep, th->rbuf[j], len, NULL,
				      FI_ADDR_UNSPEC, tag, 0,
				      &th->rop[j].ctx);
		fx_th_unlock(run, locked);
		if (!ret)
			return;
		FX_CHECK(ret == -FI_EAGAIN, "phase %d thread %d: %s: %zd "
			 "(%s)", run->phase, th->idx,
			 send ? "fi_tsend" : "fi_trecv", ret,
			 fi_strerror((int)-ret));
		if (!t0)
			t0 = fx_now_us();
		else
			FX_CHECK(fx_now_us() - t0 <= FX_WAIT_MS * 1000ULL,
				 "phase %d thread %d: %s still -FI_EAGAIN "
				 "after %d ms", run->phase, th->idx,
				 send ? "fi_tsend" : "fi_trecv", FX_WAIT_MS);
		fx_oob_check_peers(run->ctx);
		fx_th_progress(th);
	}
}

static void fx_th_check_window(struct fx_th *th, int first, int count)
{
	struct fx_th_run *run = th->run;
	bool peer_is_server = !run->ctx->server;
	char what[96];
	int j, i;

	for (j = 0; j < count; j++) {
		struct fx_th_op *r = &th->rop[j], *s = &th->sop[j];
		size_t len;

		i = first + j;
		len = fx_th_size(th->idx, i);
		snprintf(what, sizeof(what), "phase %d thread %d message %d "
			 "(%zu bytes)", run->phase, th->idx, i, len);
		FX_CHECK(s->flags == (FI_SEND | FI_TAGGED), "%s: send "
			 "completion flags 0x%llx", what,
			 (unsigned long long)s->flags);
		FX_CHECK(r->flags == (FI_RECV | FI_TAGGED), "%s: receive "
			 "completion flags 0x%llx", what,
			 (unsigned long long)r->flags);
		FX_CHECK(r->len == len, "%s: received %zu bytes", what,
			 r->len);
		FX_CHECK(r->tag == fx_th_tag(run->phase, th->idx, i),
			 "%s: tag 0x%llx", what, (unsigned long long)r->tag);
		fx_check(th->rbuf[j], len, fx_th_seed(peer_is_server,
						      run->phase, th->idx, i),
			 what);
		fx_check_byte(th->rbuf[j] + len, FX_TH_GUARD, FX_TH_POISON,
			      "after a received message");
	}
}

static void *fx_th_main(void *arg)
{
	struct fx_th *th = arg;
	struct fx_th_run *run = th->run;
	struct fx_ctx *ctx = run->ctx;
	int first, count, j, i;

	for (first = 0; first < run->n; first += count) {
		count = run->n - first < run->window ? run->n - first
						     : run->window;
		for (j = 0; j < count; j++) {
			size_t len;

			i = first + j;
			len = fx_th_size(th->idx, i);
			atomic_store(&th->sop[j].done, 0);
			atomic_store(&th->rop[j].done, 0);
			memset(th->rbuf[j], FX_TH_POISON, len + FX_TH_GUARD);
			fx_th_post(th, j, i, false);
			fx_fill(th->sbuf[j], len,
				fx_th_seed(ctx->server, run->phase, th->idx,
					   i));
			fx_th_post(th, j, i, true);
		}
		fx_th_wait(th, count);
		fx_th_check_window(th, first, count);
		th->sent += (size_t)count;
		th->received += (size_t)count;
	}
	return NULL;
}

static void fx_th_start_all(struct fx_th_run *run)
{
	int t, ret;

	for (t = 0; t < run->nthreads; t++) {
		ret = pthread_create(&run->th[t].thread, NULL, fx_th_main,
				     &run->th[t]);
		FX_CHECK(!ret, "pthread_create: %s", strerror(ret));
	}
	for (t = 0; t < run->nthreads; t++) {
		ret = pthread_join(run->th[t].thread, NULL);
		FX_CHECK(!ret, "pthread_join: %s", strerror(ret));
		FX_CHECK(run->th[t].sent == (size_t)run->n &&
			 run->th[t].received == (size_t)run->n,
			 "phase %d thread %d: %zu sent, %zu received, "
			 "expected %d each", run->phase, t, run->th[t].sent,
			 run->th[t].received, run->n);
	}
}

/*
 * Phase 1: every thread on fx_init's endpoint and CQs. locked: the
 * domain level, every libfabric call under the application's mutex.
 */
static void fx_th_phase_shared(struct fx_th_run *run, bool locked)
{
	struct fx_ctx *ctx = run->ctx;
	uint64_t want = (uint64_t)run->nthreads * (uint64_t)run->n;
	uint64_t tx0, rx0, tx, rx;
	int t;

	run->lock_reads = run->lock_posts = locked;
	for (t = 0; t < run->nthreads; t++) {
		run->th[t].ep = ctx->ep;
		run->th[t].txcq = ctx->txcq;
		run->th[t].rxcq = ctx->rxcq;
		run->th[t].peer = ctx->peer[0];
		run->th[t].sent = run->th[t].received = 0;
	}
	fx_th_lock(run, locked);
	tx0 = fi_cntr_read(ctx->txcntr);
	rx0 = fi_cntr_read(ctx->rxcntr);
	fx_th_unlock(run, locked);
	fx_oob_sync(ctx);
	fx_th_start_all(run);
	/*
	 * Counters are written by whichever thread progressed. The threads
	 * are joined, so this thread is alone; it still takes the mutex the
	 * domain level puts around every call.
	 */
	fx_th_lock(run, locked);
	fx_cntr_wait(ctx, ctx->txcntr, tx0 + want, "send counter");
	fx_cntr_wait(ctx, ctx->rxcntr, rx0 + want, "receive counter");
	tx = fi_cntr_read(ctx->txcntr);
	rx = fi_cntr_read(ctx->rxcntr);
	FX_CHECK(tx == tx0 + want && rx == rx0 + want,
		 "counters at %llu sends and %llu receives, expected %llu "
		 "each", (unsigned long long)(tx - tx0),
		 (unsigned long long)(rx - rx0), (unsigned long long)want);
	FX_CHECK(!fi_cntr_readerr(ctx->txcntr) && !fi_cntr_readerr(ctx->rxcntr),
		 "counter errors: %llu sends, %llu receives",
		 (unsigned long long)fi_cntr_readerr(ctx->txcntr),
		 (unsigned long long)fi_cntr_readerr(ctx->rxcntr));
	fx_th_unlock(run, locked);
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->txcq, 10, "tx CQ after the threads");
	fx_cq_expect_empty(ctx, ctx->rxcq, 10, "rx CQ after the threads");
	run->lock_reads = run->lock_posts = false;
}

/*
 * Phase 2 (shared_cq false): an endpoint and a CQ per thread, no lock.
 * Phase 3 (shared_cq true): an endpoint per thread, all bound to one CQ
 * whose reads the application's mutex serialises; posts are not.
 */
static void fx_th_phase_eps(struct fx_th_run *run,
			    const struct fx_setup *setup, bool shared_cq)
{
	struct fx_ctx *ctx = run->ctx;
	struct fid_cq *cq = NULL;
	char name[FI_NAME_MAX];
	size_t len;
	int t, ret;

	if (shared_cq)
		fx_cq_open(ctx, setup, &cq);
	for (t = 0; t < run->nthreads; t++) {
		struct fx_th *th = &run->th[t];

		if (shared_cq) {
			fx_ep_open_on(ctx, setup, cq, &th->ep);
			th->txcq = cq;
		} else {
			fx_ep_open(ctx, setup, &th->ep, &th->txcq);
		}
		th->rxcq = th->txcq;
		th->sent = th->received = 0;
		len = sizeof(name);
		FX_CALL(fi_getname(&th->ep->fid, name, &len));
		fx_oob_send(ctx, 0, name, len);
	}
	/* control calls, all made before any thread starts */
	for (t = 0; t < run->nthreads; t++) {
		len = fx_oob_recv(ctx, 0, name, sizeof(name));
		ret = fi_av_insert(ctx->av, name, 1, &run->th[t].peer, 0,
				   NULL);
		FX_CHECK(ret == 1, "fi_av_insert of the peer's endpoint %d: "
			 "%d (%s)", t, ret, fi_strerror(-ret));
	}
	run->lock_reads = shared_cq;
	run->lock_posts = false;
	fx_oob_sync(ctx);
	fx_th_start_all(run);
	run->lock_reads = false;
	fx_oob_sync(ctx);
	for (t = 0; t < run->nthreads; t++) {
		struct fx_th *th = &run->th[t];

		if (!shared_cq || !t)
			fx_cq_expect_empty(ctx, th->txcq, 10,
					   "a thread's CQ after the threads");
		FX_CALL(fi_close(&th->ep->fid));
		if (!shared_cq)
			FX_CALL(fi_close(&th->txcq->fid));
		th->ep = NULL;
		th->txcq = th->rxcq = NULL;
	}
	if (shared_cq)
		FX_CALL(fi_close(&cq->fid));
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED };
	enum fi_threading got;
	struct fx_th_run run;
	struct fx_opts opts;
	struct fx_ctx ctx;
	const char *lvl;
	int t, j, ret;

	fx_parse(argc, argv, "the thread-level matrix: tagged traffic from "
		 "several threads at the threading level -L asks for, on one "
		 "endpoint, an endpoint and CQ each, or an endpoint each on "
		 "one CQ",
		 "  -L (default safe): safe: one endpoint, then one each; "
		 "endpoint, fid: one\n"
		 "                each with a CQ each, then all on one CQ; "
		 "completion: one\n"
		 "                each with a CQ each; domain: one endpoint, "
		 "every call under\n"
		 "                a mutex\n"
		 "  -t <n>        threads (default 4, at most 16)\n"
		 "  -N <n>        messages each way per thread (default 200)\n"
		 "  -W <n>        window per thread (default 8)\n", &opts);
	FX_CHECK(opts.nclients == 1, "one client only");
	memset(&run, 0, sizeof(run));
	run.ctx = &ctx;
	run.level = opts.threading ? opts.threading : FI_THREAD_SAFE;
	run.nthreads = opts.threads ? opts.threads : FX_TH_DEF;
	run.n = opts.count ? opts.count : FX_TH_N;
	run.window = opts.window ? opts.window : FX_TH_W;
	FX_CHECK(run.nthreads <= FX_TH_MAX && run.window <= FX_TH_W,
		 "at most %d threads and a window of %d", FX_TH_MAX, FX_TH_W);
	ret = pthread_mutex_init(&run.lock, NULL);
	FX_CHECK(!ret, "pthread_mutex_init: %s", strerror(ret));
	lvl = fx_threading_str(run.level);
	setup.threading = run.level;
	fx_init(&ctx, &opts, &setup);
	got = ctx.info->domain_attr->threading;
	FX_CHECK(got == run.level, "asked for FI_THREAD_%s (-L %s), "
		 "fi_getinfo returned %s", lvl, lvl,
		 fi_tostr(&got, FI_TYPE_THREADING));
	FX_CHECK(!opts.auto_progress ||
		 ctx.info->domain_attr->data_progress == FI_PROGRESS_AUTO,
		 "-a: the domain's data progress is not FI_PROGRESS_AUTO");
	for (t = 0; t < run.nthreads; t++) {
		run.th[t].run = &run;
		run.th[t].idx = t;
		for (j = 0; j < FX_TH_W; j++) {
			run.th[t].sbuf[j] = fx_alloc(FX_TH_MAXLEN);
			run.th[t].rbuf[j] = fx_alloc(FX_TH_MAXLEN +
						     FX_TH_GUARD);
		}
	}

	switch (run.level) {
	case FI_THREAD_SAFE:
	case FI_THREAD_DOMAIN:
		run.phase = 1;
		fx_th_phase_shared(&run, run.level == FI_THREAD_DOMAIN);
		fx_info("%s, phase 1: %d threads on one endpoint and its CQs%s, "
			"%d messages each way per thread, data and counters "
			"checked", lvl, run.nthreads,
			run.level == FI_THREAD_DOMAIN ?
				", every call under one mutex" : "",
			run.n);
		break;
	default:
		break;
	}
	switch (run.level) {
	case FI_THREAD_SAFE:
	case FI_THREAD_FID:
	case FI_THREAD_ENDPOINT:
	case FI_THREAD_COMPLETION:
		run.phase = 2;
		fx_th_phase_eps(&run, &setup, false);
		fx_info("%s, phase 2: %d threads with an endpoint and a CQ "
			"each, no lock, %d messages each way per thread, data "
			"checked", lvl, run.nthreads, run.n);
		break;
	default:
		break;
	}
	switch (run.level) {
	case FI_THREAD_FID:
	case FI_THREAD_ENDPOINT:
		run.phase = 3;
		fx_th_phase_eps(&run, &setup, true);
		fx_info("%s, phase 3: %d threads with an endpoint each on one "
			"CQ, its reads under one mutex, %d messages each way "
			"per thread, data checked", lvl, run.nthreads, run.n);
		break;
	default:
		break;
	}

	fx_fini(&ctx);
	pthread_mutex_destroy(&run.lock);
	for (t = 0; t < run.nthreads; t++) {
		for (j = 0; j < FX_TH_W; j++) {
			free(run.th[t].sbuf[j]);
			free(run.th[t].rbuf[j]);
		}
	}
	fx_info("PASS");
	return 0;
}
