/*
 * fb_match.c - matching scale: the 8-byte message rate (window 64, as
 * fb_bw -m rate) while N-1 other entries sit ahead of the one each message
 * matches, N = 1, 1 Ki, 16 Ki, 64 Ki (-l).
 *
 *   -m posted:<pattern>  the server pre-posts N-1 receives that never
 *                        match, then the window's receives: every message
 *                        passes the N-1 (it matches a receive posted after
 *                        them, the worst order for a list).
 *   -m unexp:<pattern>   the client first sends N-1 messages nobody has
 *                        asked for yet, then each window's messages and a
 *                        marker; the server posts the window's receives once
 *                        the marker is in, so every receive passes the N-1
 *                        unexpected messages that arrived before its own.
 *
 * Patterns (tag and ignore of the receives):
 *   ign0      tag = index, ignore = 0, directed receives
 *   ompi      Open MPI 4.1 mtl ofi: tag = context id << 52 | rank << 34 |
 *             MPI tag, ignore = 0x100000000 (the sync-send bit) on every
 *             receive, directed receives (FI_DIRECTED_RECV)
 *   ompi_any  ompi with every tenth receive from FI_ADDR_UNSPEC
 *             (MPI_ANY_SOURCE)
 *   wild      ignore = all ones, FI_ADDR_UNSPEC: every receive matches
 *             every message (the N-1 are then consumed in turn and
 *             reposted, so the depth stays N)
 *
 *   RESULT match_<mode>_<pattern> <N> <Mmsg/s>
 *   NA     match_<mode>_<pattern> <N> <reason>   (e.g. a posted receive
 *          limit, or unexpected messages held back)
 *
 * Checks: each window receive's tag and payload (sequence number), or for
 * wild the count and sum of payloads; the N-1 unexpected messages are
 * drained at the end of a cell; counts and sums are compared over OOB.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb_common.h"

#define M_MAX_WINDOW	1024
#define M_FILLER_IDX	0x100000ULL	/* filler tag indexes start here */
#define M_FILLER_SEQ	(1ULL << 40)	/* filler payloads */
#define M_OMPI_CID	5ULL
#define M_OMPI_RANK	1ULL
#define M_OMPI_SYNC	0x100000000ULL
#define M_WARM		1
#define M_HELD_SEC	5.0		/* marker overdue: messages held */

enum m_pat { M_IGN0, M_OMPI, M_OMPI_ANY, M_WILD };
static const char *const m_pat_names[] = { "ign0", "ompi", "ompi_any", "wild" };

struct m_recv {
	struct fb_op op;	/* first: the context */
	uint64_t tag, ignore;
	fi_addr_t src;
};

#define M_REASON_LEN	124

struct m_status {
	int32_t ok;
	char reason[M_REASON_LEN];
};

static void m_strcpy(char *dst, const char *src, size_t len)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct match {
	struct fb_ctx fb;
	bool unexp;
	enum m_pat pat;
	bool directed;		/* FI_DIRECTED_RECV granted */
	int window;
	char test[48];

	/* server: receives */
	struct m_recv *recvs;
	uint64_t *bufs;
	struct fb_mr bufs_mr;
	size_t nrecv;
	uint32_t *done;		/* indexes of completed receives */
	size_t ndone;
	uint64_t posts;		/* receives posted, for the 1-in-10 rule */

	/* client: sends */
	struct fb_op sops[M_MAX_WINDOW];
	uint64_t *sbuf;
	struct fb_mr sbuf_mr;

	/* both: what moved in this cell */
	uint64_t count, sum;
	bool aborted;		/* the server gave up (messages held) */
	bool final_seen;	/* unexp: the server's closing status read */
	char reason[M_REASON_LEN];
};

/* ---- patterns ----------------------------------------------------- */

static uint64_t m_tag(struct match *m, uint64_t idx)
{
	if (m->pat == M_OMPI || m->pat == M_OMPI_ANY)
		return M_OMPI_CID << 52 | M_OMPI_RANK << 34 | (idx & 0xffffffffULL);
	return 0x1000000ULL + idx;
}

static uint64_t m_ignore(struct match *m)
{
	switch (m->pat) {
	case M_OMPI:
	case M_OMPI_ANY:
		return M_OMPI_SYNC;
	case M_WILD:
		return ~0ULL;
	default:
		return 0;
	}
}

static fi_addr_t m_src(struct match *m)
{
	uint64_t n = m->posts++;

	if (m->pat == M_WILD || (m->pat == M_OMPI_ANY && n % 10 == 9))
		return FI_ADDR_UNSPEC;
	return m->fb.peer;
}

/* ---- server: receives --------------------------------------------- */

static void m_on_complete(struct fb_ctx *ctx, struct fb_op *op)
{
	struct match *m = (struct match *)ctx;

	if (op == &ctx->ctrl_op || op == &ctx->ctrl_tx_op || op->kind != FB_OP_RECV)
		return;
	m->done[m->ndone++] = op->index;
}

static int m_post(struct match *m, uint32_t i, uint64_t tag)
{
	struct m_recv *r = &m->recvs[i];

	r->tag = tag;
	r->ignore = m_ignore(m);
	r->src = m_src(m);
	r->op.index = i;
	return fb_trecv(&m->fb, &m->bufs[i], sizeof(uint64_t), m->bufs_mr.desc,
			r->src, r->tag, r->ignore, &r->op);
}

static int m_repost(struct match *m, uint32_t i)
{
	struct m_recv *r = &m->recvs[i];

	/* the same receive again; the 1-in-10 source rule moves on */
	r->src = m_src(m);
	return fb_trecv(&m->fb, &m->bufs[i], sizeof(uint64_t), m->bufs_mr.desc,
			r->src, r->tag, r->ignore, &r->op);
}

/* Account and check the completed receives of one window (or drain). */
static void m_check_done(struct match *m, uint64_t window_no, bool exact)
{
	struct fb_ctx *ctx = &m->fb;
	struct m_recv *r;
	uint64_t val, want;
	size_t d;

	for (d = 0; d < m->ndone; d++) {
		r = &m->recvs[m->done[d]];
		val = m->bufs[m->done[d]];
		if (r->op.len != sizeof(uint64_t))
			fb_fail(ctx, "%s: receive %u: length %zu", m->test,
				m->done[d], r->op.len);
		if (m->pat != M_WILD && r->op.tag != r->tag)
			fb_fail(ctx, "%s: receive for tag 0x%llx got tag 0x%llx",
				m->test, (unsigned long long)r->tag,
				(unsigned long long)r->op.tag);
		if (exact && m->pat != M_WILD) {
			want = window_no * (uint64_t)m->window + m->done[d] + 1;
			if (val != want)
				fb_fail(ctx, "%s: receive %u: payload %llu, want %llu",
					m->test, m->done[d], (unsigned long long)val,
					(unsigned long long)want);
		}
		m->count++;
		m->sum += val;
	}
}

static void m_wait_done(struct match *m, size_t count)
{
	while (m->ndone < count)
		fb_progress(&m->fb);
}

static void m_status_send(struct match *m, bool ok, const char *reason)
{
	struct m_status st = { .ok = ok };

	m_strcpy(st.reason, reason ? reason : "", sizeof(st.reason));
	fb_oob_send(&m->fb, &st, sizeof(st));
}

static bool m_status_recv(struct match *m, char *reason, size_t len)
{
	struct m_status st;

	/* manual-progress providers move our last sends only while we poll */
	while (!fb_oob_readable(&m->fb))
		fb_progress(&m->fb);
	fb_oob_recv(&m->fb, &st, sizeof(st));
	st.reason[sizeof(st.reason) - 1] = '\0';
	m_strcpy(reason, st.reason, len);
	return st.ok;
}

static bool m_stop(struct match *m, int timed, double start)
{
	struct fb_ctx *ctx = &m->fb;
	int min_win = ctx->opts.quick ? 1 : 2;
	int max_win = ctx->opts.iters > 0 ? ctx->opts.iters : 20000;

	return timed >= max_win || (timed >= min_win &&
		fb_now() - start >= fb_cap(ctx, 0.15, 0.03));
}

/* posted: N-1 receives ahead, then windows against posted receives */
static void m_server_posted(struct match *m, size_t n)
{
	struct fb_ctx *ctx = &m->fb;
	int W = m->window, w, timed;
	double start = 0.0;
	char reason[M_REASON_LEN];
	size_t j, d;
	bool stop;

	for (j = 0; j + 1 < n; j++)
		if (m_post(m, (uint32_t)(W + j), m_tag(m, M_FILLER_IDX + j))) {
			snprintf(reason, sizeof(reason),
				 "posted receive limit: %zu accepted", j);
			m_status_send(m, false, reason);
			return;
		}
	for (j = 0; j < (size_t)W; j++)
		if (m_post(m, (uint32_t)j, m_tag(m, j))) {
			snprintf(reason, sizeof(reason),
				 "posted receive limit: %zu accepted", n - 1 + j);
			m_status_send(m, false, reason);
			return;
		}
	m_status_send(m, true, NULL);

	for (w = 0;; w++) {
		m_wait_done(m, (size_t)W);
		m_check_done(m, (uint64_t)w, true);
		timed = w + 1 - M_WARM;
		if (timed == 0)
			start = fb_now();
		stop = m_stop(m, timed, start);
		if (!stop)
			for (d = 0; d < m->ndone; d++)
				if (m_repost(m, m->done[d]))
					fb_fail(ctx, "%s: repost refused", m->test);
		m->ndone = 0;
		fb_ctrl_send(ctx, FB_TAG_ACK, stop ? FB_ACK_STOP : FB_ACK_MORE);
		if (stop)
			break;
	}
}

/* unexp: drain what is left at the end, W receives at a time */
static void m_server_drain(struct match *m, size_t left)
{
	uint64_t idx = 0;
	size_t chunk, j;

	while (left) {
		chunk = left < (size_t)m->window ? left : (size_t)m->window;
		for (j = 0; j < chunk; j++, idx++)
			if (m_post(m, (uint32_t)j, m_tag(m, M_FILLER_IDX + idx)))
				fb_fail(&m->fb, "%s: drain receive refused", m->test);
		m_wait_done(m, chunk);
		m_check_done(m, 0, false);
		m->ndone = 0;
		left -= chunk;
	}
}

static void m_server_unexp(struct match *m, size_t n)
{
	struct fb_ctx *ctx = &m->fb;
	int W = m->window, w, timed;
	double start = 0.0, deadline;
	char reason[M_REASON_LEN];
	bool stop, client_ok;
	size_t j;

	/* the filler phase: wait for the marker behind the N-1 messages */
	fb_ctrl_post(ctx, FB_TAG_MARK);
	m_status_send(m, true, NULL);
	client_ok = m_status_recv(m, reason, sizeof(reason));
	deadline = fb_now() + M_HELD_SEC;
	while (client_ok && !ctx->ctrl_op.done && fb_now() < deadline)
		fb_progress(ctx);
	if (!client_ok)
		return;
	if (!ctx->ctrl_op.done) {
		m_status_send(m, false, "unexpected messages held back "
			      "(marker overdue)");
		return;
	}
	m_status_send(m, true, NULL);
	fb_ctrl_wait(ctx);

	for (w = 0;; w++) {
		fb_ctrl_post(ctx, FB_TAG_MARK);
		fb_ctrl_send(ctx, FB_TAG_ACK, FB_ACK_MORE);	/* go */
		/* the window is in, unexpected; a provider that holds
		 * senders back (flow control) may keep it out for good */
		deadline = fb_now() + M_HELD_SEC;
		while (!ctx->ctrl_op.done && fb_now() < deadline)
			fb_progress(ctx);
		if (!ctx->ctrl_op.done) {
			snprintf(reason, sizeof(reason), "unexpected messages "
				 "held back in window %d (marker overdue)", w);
			m_status_send(m, false, reason);
			m->aborted = true;
			return;
		}
		fb_ctrl_wait(ctx);
		for (j = 0; j < (size_t)W; j++)
			if (m_post(m, (uint32_t)j, m_tag(m, j)))
				fb_fail(ctx, "%s: receive refused", m->test);
		m_wait_done(m, (size_t)W);
		m_check_done(m, (uint64_t)w, true);
		m->ndone = 0;
		timed = w + 1 - M_WARM;
		if (timed == 0)
			start = fb_now();
		stop = m_stop(m, timed, start);
		if (stop) {
			fb_ctrl_send(ctx, FB_TAG_ACK, FB_ACK_STOP);
			break;
		}
	}
	m_server_drain(m, n - 1);
	m_status_send(m, true, NULL);	/* the closing status */
}

/* ---- client: sends ------------------------------------------------ */

/*
 * unexp: the server ends every cell with one status over OOB, ok after
 * its drain or not ok when it gave up. Read it when it comes; false when
 * it says the server gave up.
 */
static bool m_check_final(struct match *m)
{
	if (m->final_seen || !m->unexp || !fb_oob_readable(&m->fb))
		return true;
	m->final_seen = true;
	if (m_status_recv(m, m->reason, sizeof(m->reason)))
		return true;
	m->aborted = true;
	return false;
}

/* waits for the client's sends, or until the server gave up */
static bool m_wait_tx(struct match *m, uint64_t count)
{
	struct fb_ctx *ctx = &m->fb;

	while (ctx->tx_cnt < count) {
		if (!m_check_final(m))
			return false;
		fb_progress(ctx);
	}
	return true;
}

static bool m_wait_ctrl(struct match *m)
{
	struct fb_ctx *ctx = &m->fb;

	while (!ctx->ctrl_op.done) {
		if (!m_check_final(m))
			return false;
		fb_progress(ctx);
	}
	return true;
}

static bool m_send_window(struct match *m, uint64_t window_no)
{
	struct fb_ctx *ctx = &m->fb;
	uint64_t base = ctx->tx_cnt;
	int k, ret;

	for (k = 0; k < m->window; k++) {
		m->sbuf[k] = window_no * (uint64_t)m->window + (uint64_t)k + 1;
		/*
		 * unexp: a provider whose unexpected messages keep its send
		 * resources (shm: the receiver's inject buffers) refuses the
		 * window for good; the server gives up (marker overdue) and
		 * says so over OOB, and the cell is NA.
		 */
		while ((ret = fb_tsend(ctx, &m->sbuf[k], sizeof(uint64_t),
				       m->sbuf_mr.desc, m_tag(m, (uint64_t)k),
				       &m->sops[k])) == -FI_EAGAIN && m->unexp)
			if (!m_check_final(m))
				return false;
		if (ret)
			fb_fail(ctx, "%s: send refused", m->test);
		m->count++;
		m->sum += m->sbuf[k];
	}
	return m_wait_tx(m, base + (uint64_t)m->window);
}

/* fillers go by fi_tinject (no op to track); fi_tsend if it is too small */
static int m_send_filler(struct match *m, uint64_t j)
{
	struct fb_ctx *ctx = &m->fb;
	uint64_t val = M_FILLER_SEQ + j;
	int ret;

	m->sbuf[M_MAX_WINDOW] = val;
	if (ctx->inject_size >= sizeof(uint64_t)) {
		ret = fb_tinject(ctx, &m->sbuf[M_MAX_WINDOW], sizeof(uint64_t),
				 m_tag(m, M_FILLER_IDX + j));
	} else {
		ret = fb_tsend(ctx, &m->sbuf[M_MAX_WINDOW], sizeof(uint64_t),
			       m->sbuf_mr.desc, m_tag(m, M_FILLER_IDX + j),
			       &m->sops[0]);
		if (!ret)
			fb_wait_op(ctx, &m->sops[0]);
	}
	if (!ret) {
		m->count++;
		m->sum += val;
	}
	return ret;
}

/* returns the seconds of the timed windows and their message count */
static double m_client_windows(struct match *m, uint64_t *msgs_p)
{
	struct fb_ctx *ctx = &m->fb;
	double start = 0.0;
	uint64_t flags;
	int w;

	for (w = 0;; w++) {
		if (w == M_WARM)
			start = fb_now();
		if (m->unexp) {
			/* go (or stop), or the server gave up over OOB */
			if (!m_wait_ctrl(m))
				goto aborted;
			flags = fb_ctrl_wait(ctx);
			if (flags == FB_ACK_STOP)
				break;
			fb_ctrl_post(ctx, FB_TAG_ACK);
			if (!m_send_window(m, (uint64_t)w))
				goto aborted;
			fb_ctrl_send(ctx, FB_TAG_MARK, 0);
			continue;
		}
		m_send_window(m, (uint64_t)w);
		flags = fb_ctrl_wait(ctx);
		if (flags == FB_ACK_STOP) {
			w++;
			break;
		}
		fb_ctrl_post(ctx, FB_TAG_ACK);
	}
	*msgs_p = (uint64_t)(w - M_WARM) * (uint64_t)m->window;
	return fb_now() - start;

aborted:
	*msgs_p = 0;
	return 0.0;
}

/* ---- one cell ----------------------------------------------------- */

static void m_cell(struct match *m, size_t n)
{
	struct fb_ctx *ctx = &m->fb;
	size_t W = (size_t)m->window, j;
	char param[32], reason[M_REASON_LEN];
	uint64_t peer[2], mine[2], msgs = 0;
	double secs = 0.0;
	bool ok;

	snprintf(param, sizeof(param), "%zu", n);
	if (m->pat == M_OMPI_ANY && !m->directed) {
		fb_result_na(ctx, m->test, param, "no FI_DIRECTED_RECV");
		return;
	}
	fb_ep_open(ctx, m->unexp ? 0 : n + W + 16, 0, NULL, NULL);
	ctx->on_complete = ctx->server ? m_on_complete : NULL;
	m->count = m->sum = 0;
	m->aborted = false;
	m->final_seen = false;
	m->ndone = 0;
	m->posts = 0;

	if (ctx->server) {
		m->nrecv = W + (m->unexp ? 0 : n);
		m->recvs = calloc(m->nrecv, sizeof(*m->recvs));
		m->done = calloc(m->nrecv, sizeof(*m->done));
		m->bufs = fb_alloc(ctx, m->nrecv * sizeof(uint64_t));
		if (!m->recvs || !m->done)
			fb_fail(ctx, "out of memory");
		if (ctx->mr_local)
			fb_mr_reg(ctx, m->bufs, m->nrecv * sizeof(uint64_t),
				  FI_RECV, &m->bufs_mr);
		if (m->unexp)
			m_server_unexp(m, n);
		else
			m_server_posted(m, n);
		/* the posted-mode fillers are still posted: closing drops them */
	} else {
		m->sbuf = fb_alloc(ctx, (M_MAX_WINDOW + 1) * sizeof(uint64_t));
		if (ctx->mr_local)
			fb_mr_reg(ctx, m->sbuf, (M_MAX_WINDOW + 1) * sizeof(uint64_t),
				  FI_SEND, &m->sbuf_mr);
		ok = m_status_recv(m, reason, sizeof(reason));
		if (ok && m->unexp) {
			for (j = 0; j + 1 < n && ok; j++)
				if (m_send_filler(m, j)) {
					ok = false;
					snprintf(reason, sizeof(reason),
						 "sender held after %zu unexpected "
						 "messages", j);
				}
			if (ok)
				fb_ctrl_send(ctx, FB_TAG_MARK, 0);
			m_status_send(m, ok, reason);
			if (ok)
				ok = m_status_recv(m, reason, sizeof(reason));
			if (ok)
				fb_ctrl_post(ctx, FB_TAG_ACK);
		} else if (ok) {
			fb_ctrl_post(ctx, FB_TAG_ACK);
		}
		if (ok)
			secs = m_client_windows(m, &msgs);
		if (ok && m->unexp && !m->final_seen) {
			m->final_seen = true;
			if (!m_status_recv(m, m->reason, sizeof(m->reason)))
				m->aborted = true;
		}
		if (ok && m->aborted) {
			ok = false;
			m_strcpy(reason, m->reason, sizeof(reason));
		}
		if (ok)
			fb_result(ctx, m->test, param, (double)msgs / secs / 1e6);
		else
			fb_result_na(ctx, m->test, param, "%s", reason);
	}

	/* what the client sent, the server received (when the cell ran) */
	mine[0] = m->count;
	mine[1] = m->sum;
	fb_oob_xchg(ctx, mine, peer, sizeof(mine));
	/* an aborted cell leaves messages held in flight: nothing to compare */
	if (m->aborted)
		;
	else if (ctx->server ? m->count && (peer[0] != m->count || peer[1] != m->sum) :
	    msgs && (peer[0] != m->count || peer[1] != m->sum))
		fb_fail(ctx, "%s N=%zu: %llu messages (sum %llu) here, "
			"%llu (sum %llu) at the peer", m->test, n,
			(unsigned long long)m->count, (unsigned long long)m->sum,
			(unsigned long long)peer[0], (unsigned long long)peer[1]);

	ctx->on_complete = NULL;
	fb_mr_close(&m->bufs_mr);
	fb_mr_close(&m->sbuf_mr);
	fb_ep_close(ctx);
	free(m->recvs);
	free(m->done);
	free(m->bufs);
	free(m->sbuf);
	m->recvs = NULL;
	m->done = NULL;
	m->bufs = NULL;
	m->sbuf = NULL;
}

static void m_parse_mode(struct match *m, const char *mode)
{
	const char *colon = strchr(mode, ':');
	size_t i;

	if (!colon)
		fb_fail(&m->fb, "-m <posted|unexp>:<ign0|ompi|ompi_any|wild>");
	if (!strncmp(mode, "posted", (size_t)(colon - mode)))
		m->unexp = false;
	else if (!strncmp(mode, "unexp", (size_t)(colon - mode)))
		m->unexp = true;
	else
		fb_fail(&m->fb, "-m: mode posted or unexp");
	for (i = 0; i < 4; i++)
		if (!strcmp(colon + 1, m_pat_names[i]))
			break;
	if (i == 4)
		fb_fail(&m->fb, "-m: pattern ign0, ompi, ompi_any or wild");
	m->pat = (enum m_pat)i;
	snprintf(m->test, sizeof(m->test), "match_%s_%s",
		 m->unexp ? "unexp" : "posted", m_pat_names[i]);
}

int main(int argc, char **argv)
{
	struct match *m = calloc(1, sizeof(*m));
	struct fb_ctx *ctx;
	struct fi_info *hints;
	char *copy, *tok, *save;
	bool ok;
	int ret;

	if (!m)
		return 1;
	ctx = &m->fb;
	fb_init(ctx, argc, argv, "fb_match", NULL);
	m_parse_mode(m, ctx->opts.mode ? ctx->opts.mode : "posted:ign0");
	m->window = ctx->opts.window ? ctx->opts.window : 64;
	if (m->window < 1 || m->window > M_MAX_WINDOW)
		fb_fail(ctx, "-W: 1..%d", M_MAX_WINDOW);
	fb_oob_open(ctx);

	hints = fb_hints(ctx, FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV);
	ret = fb_getinfo(ctx, hints);
	m->directed = ret == 0;
	if (ret == -FI_ENODATA) {
		hints->caps &= ~FI_DIRECTED_RECV;
		ret = fb_getinfo(ctx, hints);
	}
	fi_freeinfo(hints);
	ok = fb_oob_agree(ctx, ret == 0);
	m->directed = fb_oob_agree(ctx, m->directed);
	if (!ok) {
		fb_result_na(ctx, m->test, "*", "fi_getinfo offers no FI_TAGGED endpoint");
		fb_oob_close(ctx);
		free(m);
		return 0;
	}
	fb_domain_open(ctx);

	copy = strdup(ctx->opts.list ? ctx->opts.list : "1,1024,16384,65536");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (atol(tok) < 1)
			fb_fail(ctx, "-l: N >= 1");
		m_cell(m, (size_t)atol(tok));
	}
	free(copy);

	fb_oob_sync(ctx);
	fb_domain_close(ctx);
	fb_oob_close(ctx);
	free(m);
	return 0;
}
