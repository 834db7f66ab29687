/*
 * fx_threads.c - FI_THREAD_SAFE: several threads post tagged sends and
 * receives and read completions at the same time; every byte checked.
 *
 * Both sides run the same code. Thread t sends -N messages to the peer
 * with tags TAG(phase, t, i) and receives the peer's -N messages with the
 * same tags (exact tags, so a message can only land in its own buffer),
 * -W of each in flight; sizes cycle through empty, small, the eager limit
 * and rendezvous sizes.
 *
 * Phase 1 (shared): the -t threads use the one endpoint of fx_init and
 *          its tx and rx CQs. Any thread may read any thread's
 *          completion, so completions are handed to their owner through a
 *          table found from the operation context. The bound counters
 *          must count every send and receive of every thread.
 * Phase 2 (one endpoint per thread): each thread has its own endpoint
 *          and CQ on the shared domain and AV (names exchanged over OOB
 *          first) and talks to the peer's endpoint of the same index.
 *
 * -c sread makes every CQ read a blocking fi_cq_sread (several threads
 * sleep on one CQ in phase 1); -a asks for FI_PROGRESS_AUTO.
 */
#include "common.h"

#include <pthread.h>
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
	struct fid_cq *txcq, *rxcq;	/* the same CQ in phase 2 */
	fi_addr_t peer;
	char *sbuf[FX_TH_W], *rbuf[FX_TH_W];
	struct fx_th_op sop[FX_TH_W], rop[FX_TH_W];
	size_t sent, received;
};

struct fx_th_run {
	struct fx_ctx *ctx;
	int phase;
	int nthreads;
	int n;
	int window;
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

/* reads what one CQ has (or, with sread, what comes within 10 ms) */
static void fx_th_poll_cq(struct fx_th_run *run, struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e[FX_TH_BATCH];
	struct fi_cq_err_entry err;
	ssize_t ret, k;

	ret = run->ctx->opts->sread ? fi_cq_sread(cq, e, FX_TH_BATCH, NULL,
						  10)
				    : fi_cq_read(cq, e, FX_TH_BATCH);
	if (ret == -FI_EAGAIN || ret == -FI_ETIMEDOUT)
		return;
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		ret = fi_cq_readerr(cq, &err, 0);
		if (ret == -FI_EAGAIN)
			return;		/* another thread took it */
		FX_CHECK(ret == 1, "fi_cq_readerr: %zd (%s)", ret,
			 fi_strerror((int)-ret));
		FX_FAIL("error completion: %s (err %d, prov_errno %d, "
			"context %p, len %zu, olen %zu, tag 0x%llx)",
			fi_strerror(err.err), err.err, err.prov_errno,
			err.op_context, err.len, err.olen,
			(unsigned long long)err.tag);
	}
	FX_CHECK(ret > 0, "reading a CQ: %zd (%s)", ret,
		 fi_strerror((int)-ret));
	for (k = 0; k < ret; k++)
		fx_th_record(run, &e[k], 0);
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
		FX_CHECK(fx_now_us() < deadline, "thread %d: %d of %d "
			 "operations not complete within %d ms", th->idx,
			 pending, 2 * count, FX_WAIT_MS);
		fx_th_poll_cq(run, th->rxcq);
		if (th->txcq != th->rxcq)
			fx_th_poll_cq(run, th->txcq);
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
			uint64_t tag;
			size_t len;

			i = first + j;
			tag = fx_th_tag(run->phase, th->idx, i);
			len = fx_th_size(th->idx, i);
			atomic_store(&th->sop[j].done, 0);
			atomic_store(&th->rop[j].done, 0);
			memset(th->rbuf[j], FX_TH_POISON, len + FX_TH_GUARD);
			FX_RETRY(ctx, "fi_trecv",
				 fi_trecv(th->ep, th->rbuf[j], len, NULL,
					  FI_ADDR_UNSPEC, tag, 0,
					  &th->rop[j].ctx));
			fx_fill(th->sbuf[j], len,
				fx_th_seed(ctx->server, run->phase, th->idx,
					   i));
			FX_RETRY(ctx, "fi_tsend",
				 fi_tsend(th->ep, th->sbuf[j], len, NULL,
					  th->peer, tag, &th->sop[j].ctx));
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
	}
}

static void fx_th_phase_shared(struct fx_th_run *run)
{
	struct fx_ctx *ctx = run->ctx;
	uint64_t tx0 = fi_cntr_read(ctx->txcntr);
	uint64_t rx0 = fi_cntr_read(ctx->rxcntr);
	uint64_t want = (uint64_t)run->nthreads * (uint64_t)run->n;
	int t;

	for (t = 0; t < run->nthreads; t++) {
		run->th[t].ep = ctx->ep;
		run->th[t].txcq = ctx->txcq;
		run->th[t].rxcq = ctx->rxcq;
		run->th[t].peer = ctx->peer[0];
	}
	fx_oob_sync(ctx);
	fx_th_start_all(run);
	/* counters are written by whichever thread progressed */
	fx_cntr_wait(ctx, ctx->txcntr, tx0 + want, "send counter");
	fx_cntr_wait(ctx, ctx->rxcntr, rx0 + want, "receive counter");
	FX_CHECK(fi_cntr_read(ctx->txcntr) == tx0 + want &&
		 fi_cntr_read(ctx->rxcntr) == rx0 + want,
		 "counters at %llu sends and %llu receives, expected %llu "
		 "each", (unsigned long long)(fi_cntr_read(ctx->txcntr) - tx0),
		 (unsigned long long)(fi_cntr_read(ctx->rxcntr) - rx0),
		 (unsigned long long)want);
	FX_CHECK(!fi_cntr_readerr(ctx->txcntr) && !fi_cntr_readerr(ctx->rxcntr),
		 "counter errors: %llu sends, %llu receives",
		 (unsigned long long)fi_cntr_readerr(ctx->txcntr),
		 (unsigned long long)fi_cntr_readerr(ctx->rxcntr));
	fx_oob_sync(ctx);
	fx_cq_expect_empty(ctx, ctx->txcq, 10, "tx CQ after the threads");
	fx_cq_expect_empty(ctx, ctx->rxcq, 10, "rx CQ after the threads");
}

static void fx_th_phase_per_ep(struct fx_th_run *run,
			       const struct fx_setup *setup)
{
	struct fx_ctx *ctx = run->ctx;
	char name[FI_NAME_MAX];
	size_t len;
	int t, ret;

	for (t = 0; t < run->nthreads; t++) {
		struct fx_th *th = &run->th[t];

		fx_ep_open(ctx, setup, &th->ep, &th->txcq);
		th->rxcq = th->txcq;
		len = sizeof(name);
		FX_CALL(fi_getname(&th->ep->fid, name, &len));
		fx_oob_send(ctx, 0, name, len);
	}
	for (t = 0; t < run->nthreads; t++) {
		len = fx_oob_recv(ctx, 0, name, sizeof(name));
		ret = fi_av_insert(ctx->av, name, 1, &run->th[t].peer, 0,
				   NULL);
		FX_CHECK(ret == 1, "fi_av_insert of the peer's endpoint %d: "
			 "%d (%s)", t, ret, fi_strerror(-ret));
	}
	fx_oob_sync(ctx);
	fx_th_start_all(run);
	fx_oob_sync(ctx);
	for (t = 0; t < run->nthreads; t++) {
		struct fx_th *th = &run->th[t];

		FX_CALL(fi_close(&th->ep->fid));
		FX_CALL(fi_close(&th->txcq->fid));
		th->ep = NULL;
		th->txcq = th->rxcq = NULL;
	}
}

int main(int argc, char **argv)
{
	struct fx_setup setup = { .caps = FI_TAGGED,
				  .threading = FI_THREAD_SAFE };
	struct fx_th_run run;
	struct fx_opts opts;
	struct fx_ctx ctx;
	int t, j;

	fx_parse(argc, argv, "FI_THREAD_SAFE: tagged traffic from several "
		 "threads, on one endpoint and on one endpoint per thread",
		 "  -t <n>        threads (default 4, at most 16)\n"
		 "  -N <n>        messages each way per thread (default 200)\n"
		 "  -W <n>        window per thread (default 8)\n", &opts);
	FX_CHECK(opts.nclients == 1, "one client only");
	memset(&run, 0, sizeof(run));
	run.ctx = &ctx;
	run.nthreads = opts.threads ? opts.threads : FX_TH_DEF;
	run.n = opts.count ? opts.count : FX_TH_N;
	run.window = opts.window ? opts.window : FX_TH_W;
	FX_CHECK(run.nthreads <= FX_TH_MAX && run.window <= FX_TH_W,
		 "at most %d threads and a window of %d", FX_TH_MAX, FX_TH_W);
	fx_init(&ctx, &opts, &setup);
	FX_CHECK(ctx.info->domain_attr->threading == FI_THREAD_SAFE,
		 "the domain is not FI_THREAD_SAFE");
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

	run.phase = 1;
	fx_th_phase_shared(&run);
	fx_info("phase 1: %d threads on one endpoint, %d messages each way "
		"per thread, data and counters checked", run.nthreads, run.n);
	run.phase = 2;
	fx_th_phase_per_ep(&run, &setup);
	fx_info("phase 2: %d threads with an endpoint each, %d messages "
		"each way per thread, data checked", run.nthreads, run.n);

	fx_fini(&ctx);
	for (t = 0; t < run.nthreads; t++) {
		for (j = 0; j < FX_TH_W; j++) {
			free(run.th[t].sbuf[j]);
			free(run.th[t].rbuf[j]);
		}
	}
	fx_info("PASS");
	return 0;
}
