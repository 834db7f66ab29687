/*
 * fuzz_target.c - libFuzzer target for the engine's message handling: the
 * transport upcalls of p4e_ni.c and everything behind them (target state
 * machine p4e_tgt.c, responses in p4e_ini.c, flow control p4e_fc.c, the
 * matching structures, unexpected headers, events, counters, triggered
 * operations), run through the whole engine on the loop transport.
 *
 * Every input gets a fresh domain with two NIs, A (index 0, the
 * initiator) and B (index 1, the target), set up the same way
 * (p4e_fz_open, fuzz_target_setup.c): B has PTs with a mix of priority entries (exact, Open
 * MPI's ignore mask, other masks, USE_ONCE, MANAGE_LOCAL with min_free,
 * NO_TRUNCATE, iovec, uid- and op-restricted, VIRT_ADDR), overflow entries
 * (one with P4E_ME_RDZV_HDR_ONLY, one iovec), a P4E_PT_FLOWCTRL PT with a
 * 4-event EQ, a P4E_PT_FC_RESEND PT, a PT whose priority list has 16
 * ignore masks (one more takes the slow list), a disabled PT, a PT
 * without EQ, an "RMA" PT for atomics, and counters with triggered
 * operations (a put back to A, a priority append, an increment); A has
 * MDs, a PT of its own, two rendezvous puts parked at B as header-only
 * unexpected messages (their memory stays exposed) and seven operations
 * in flight (put, get, get with push, atomic, fetch, swap, counting put),
 * so responses with live and stale operation ids exist. Setting all this
 * up again for every input keeps inputs independent and costs about as
 * much as running a typical one.
 *
 * Input: byte 0 picks a configuration (enum p4e_fz_cfg), the rest is
 * records, each [ctl][...]:
 *   ctl & 3   0: a message to B from A's address     [len lo][len hi][bytes]
 *             1: a message to A from B's address     (same)
 *             2: an API action                       [code][8 argument bytes]
 *             3: another route, ctl >> 5 picks it    [len lo][len hi][bytes]
 *                (p4e_fz_routes: to B from itself, from strangers, ...)
 *   ctl & 4   raw: no header fix-ups (else hdr.length := the record's length
 *             and a request's seq := what the receiver expects next)
 *   ctl & 8   hold: no progress after this record (messages queue up)
 *   ctl & 16  keep: no event drain after this record (EQs can fill)
 * Messages are delivered with p4t_loop_inject. Whatever the raw bit, an
 * op_id below 256 in a request or response is symbolic: it becomes the
 * handle of A's operation number op_id (in order of first sight, stale
 * ones included), and a cookie key below 256 becomes the key of A's
 * exposure number key (rendezvous sources and push sinks, in order of
 * first sight). fuzz/gen_corpus_target.c writes seeds in this format.
 *
 * Checks, beyond "no crash, no leak, no UB":
 *   - every buffer the engine may touch (entries, MDs, iovec elements) is
 *     surrounded by guard bytes, poisoned for ASan (any access traps at
 *     once) and compared after the input (a write there traps);
 *   - events: known kinds and failure types, mlength <= rlength for
 *     successful data events, and [start, start + mlength) inside one of
 *     our buffers (inside an iovec element: start only);
 *   - setup and teardown succeed (dom_destroy finds no NI left).
 * FUZZ_TARGET_LOG=1 shows the engine's log (silenced otherwise), every
 * event and the status registers, to see what an input does.
 *
 * Here: the input format and its decoding (messages and their fix-ups,
 * API actions), guarded buffers, the event checks, progress and the
 * entry point. Not here: the setup and teardown of each input's world
 * (fuzz_target_setup.c); the layout gen_corpus_target.c copies and the
 * state both files share are in fuzz_target.h.
 *
 * Built only by the Makefile rule fuzz/fuzz_target (clang,
 * -fsanitize=fuzzer,address,undefined) from fuzz_target.c and
 * fuzz_target_setup.c with every engine, loop-transport and util source;
 * it reads engine internals (p4e_priv.h) for the fix-ups only, never to
 * change engine state.
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p4e.h"
#include "p4e_priv.h"
#include "p4t_loop.h"
#include "p4_wire.h"
#include "p4u_log.h"
#include "p4u_pool.h"

#include "fuzz_target.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define P4E_FZ_ASAN 1
#endif
#endif
#ifdef P4E_FZ_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/*
 * libfabric pulls in libraries (libinfinipath) that install signal
 * handlers calling exit(): let ASan report traps and aborts itself.
 */
const char *__asan_default_options(void)
{
	return "handle_abort=1:handle_sigill=1:allow_user_segv_handler=0";
}

/* ---- state (its layout: fuzz_target.h) ---------------------------------- */

static struct p4e_fz p4e_fz_state;
bool p4e_fz_log_on;	/* FUZZ_TARGET_LOG=1 */

static void p4e_fz_bug(const char *what)
{
	fprintf(stderr, "fuzz_target: %s\n", what);
	__builtin_trap();
}

static bool p4e_fz_log_enabled(enum p4u_log_level level,
			       enum p4u_log_subsys subsys)
{
	(void)subsys;
	return p4e_fz_log_on && level <= P4U_LOG_INFO;
}

static void p4e_fz_log_write(enum p4u_log_level level,
			     enum p4u_log_subsys subsys, const char *func,
			     int line, const char *msg)
{
	fprintf(stderr, "p4 %d/%d %s:%d %s\n", level, subsys, func, line, msg);
}

static uint64_t p4e_fz_le_get(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static void p4e_fz_le_put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---- guarded buffers ----------------------------------------------------- */

/* len bytes between poisoned guards, filled with a pattern; NULL if full. */
void *p4e_fz_buf_new(struct p4e_fz *f, size_t len, bool iov)
{
	struct p4e_fz_buf *b = &f->bufs[f->nbufs];
	uint8_t *user;
	size_t i;

	if (f->nbufs == P4E_FZ_MAX_BUFS)
		return NULL;
	b->raw = malloc(len + 2 * P4E_FZ_GUARD);
	if (!b->raw)
		return NULL;
	b->len = len;
	b->iov = iov;
	user = b->raw + P4E_FZ_GUARD;
	memset(b->raw, P4E_FZ_GUARD_BYTE, P4E_FZ_GUARD);
	memset(user + len, P4E_FZ_GUARD_BYTE, P4E_FZ_GUARD);
	for (i = 0; i < len; i++)
		user[i] = (uint8_t)(f->nbufs * 31 + i);
	ASAN_POISON_MEMORY_REGION(b->raw, P4E_FZ_GUARD);
	ASAN_POISON_MEMORY_REGION(user + len, P4E_FZ_GUARD);
	f->nbufs++;
	return user;
}

void p4e_fz_bufs_check_free(struct p4e_fz *f)
{
	struct p4e_fz_buf *b;
	unsigned i, j;

	for (i = 0; i < f->nbufs; i++) {
		b = &f->bufs[i];
		ASAN_UNPOISON_MEMORY_REGION(b->raw, P4E_FZ_GUARD);
		ASAN_UNPOISON_MEMORY_REGION(b->raw + P4E_FZ_GUARD + b->len,
					    P4E_FZ_GUARD);
		for (j = 0; j < P4E_FZ_GUARD; j++)
			if (b->raw[j] != P4E_FZ_GUARD_BYTE ||
			    b->raw[P4E_FZ_GUARD + b->len + j] !=
			    P4E_FZ_GUARD_BYTE)
				p4e_fz_bug("guard bytes overwritten");
		free(b->raw);
	}
	f->nbufs = 0;
	for (i = 0; i < f->niovs; i++)
		free(f->iovs[i]);
	f->niovs = 0;
}

/* An iovec of three guarded elements (a, 0, len - a); NULL if full. */
struct iovec *p4e_fz_iov_new(struct p4e_fz *f, size_t len)
{
	struct iovec *iov;
	size_t i, lens[3] = { len / 3, 0, len - len / 3 };

	if (f->niovs == P4E_FZ_MAX_IOVS || f->nbufs + 3 > P4E_FZ_MAX_BUFS)
		return NULL;
	iov = calloc(3, sizeof(*iov));
	if (!iov)
		return NULL;
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = p4e_fz_buf_new(f, lens[i], true);
		iov[i].iov_len = lens[i];
	}
	f->iovs[f->niovs++] = iov;
	return iov;
}

/* [start, start + len) must lie in one buffer (an iovec element: start). */
static void p4e_fz_range_check(struct p4e_fz *f, const void *start,
			       uint64_t len)
{
	const uint8_t *p = start, *user;
	unsigned i;

	for (i = 0; i < f->nbufs; i++) {
		user = f->bufs[i].raw + P4E_FZ_GUARD;
		if (p < user || p > user + f->bufs[i].len)
			continue;
		if (f->bufs[i].iov ||
		    len <= (uint64_t)(user + f->bufs[i].len - p))
			return;
	}
	p4e_fz_bug("event data range outside every buffer");
}

/* ---- handles seen -------------------------------------------------------- */

void p4e_fz_add(uint64_t *tab, unsigned *n, unsigned max, uint64_t v)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (tab[i] == v)
			return;
	if (*n < max)
		tab[(*n)++] = v;
}

/* Record A's operations and exposures (stale ones stay listed). */
void p4e_fz_ops_scan(struct p4e_fz *f)
{
	struct p4e_ni *ni = f->ni[0];
	struct p4e_op *op;
	uint32_t i;

	for (i = 0; i < p4u_pool_capacity(&ni->ops); i++) {
		op = p4u_pool_at(&ni->ops, i);
		if (!op)
			continue;
		p4e_fz_add(f->ops, &f->nops, P4E_FZ_MAX_OPS,
			   p4u_pool_handle(&ni->ops, op));
		if (op->mem)
			p4e_fz_add(f->cookies, &f->ncookies,
				   P4E_FZ_MAX_COOKIES, op->cookie.key);
	}
}

/* ---- events and progress ------------------------------------------------- */

/* Events whose start and mlength describe data. */
#define P4E_FZ_DATA_EVENTS						\
	(1u << P4E_EVENT_GET | 1u << P4E_EVENT_GET_OVERFLOW |		\
	 1u << P4E_EVENT_PUT | 1u << P4E_EVENT_PUT_OVERFLOW |		\
	 1u << P4E_EVENT_ATOMIC | 1u << P4E_EVENT_ATOMIC_OVERFLOW |	\
	 1u << P4E_EVENT_FETCH_ATOMIC |					\
	 1u << P4E_EVENT_FETCH_ATOMIC_OVERFLOW |			\
	 1u << P4E_EVENT_REPLY | 1u << P4E_EVENT_SEND | 1u << P4E_EVENT_ACK)

static void p4e_fz_event_check(struct p4e_fz *f, const struct p4e_event *ev)
{
	if (p4e_fz_log_on)
		fprintf(stderr, "event type %u fail %u pt %u list %u init %u "
			"rlen %llu mlen %llu roff %llu bits %#llx start %p\n",
			ev->type, ev->ni_fail_type, ev->pt_index, ev->list,
			ev->initiator, (unsigned long long)ev->rlength,
			(unsigned long long)ev->mlength,
			(unsigned long long)ev->remote_offset,
			(unsigned long long)ev->match_bits, ev->start);
	if (ev->type >= P4E_EVENT_KIND_MAX ||
	    ev->ni_fail_type >= P4E_NI_FAIL_MAX)
		p4e_fz_bug("event of unknown kind or failure type");
	if (ev->type == P4E_EVENT_SEARCH && ev->uh_handle)
		p4e_fz_add(f->uhs, &f->nuhs, P4E_FZ_MAX_UHS, ev->uh_handle);
	if (ev->ni_fail_type != P4E_NI_OK ||
	    !(P4E_FZ_DATA_EVENTS & 1u << ev->type))
		return;
	if (ev->mlength > ev->rlength)
		p4e_fz_bug("event mlength > rlength");
	if (ev->start && ev->mlength)
		p4e_fz_range_check(f, ev->start, ev->mlength);
}

void p4e_fz_drain(struct p4e_fz *f)
{
	struct p4e_event ev;
	int i;

	for (i = 0; i < P4E_FZ_NEQ; i++)
		while (p4e_eq_ring_get(f->eq[i], &ev) >= 0)
			p4e_fz_event_check(f, &ev);
}

void p4e_fz_progress(struct p4e_fz *f)
{
	int idle = 0, rounds = 0;

	while (idle < 2 && rounds++ < 256)
		idle = p4e_dom_progress(f->dom, 64) ? 0 : idle + 1;
	memset(f->pending, 0, sizeof(f->pending));
}

/* ---- messages ------------------------------------------------------------ */

static const struct sockaddr_in *p4e_fz_src_addr(struct p4e_fz *f, int dst,
						 enum p4e_fz_src src)
{
	switch (src) {
	case P4E_FZ_SRC_PEER:
		return &f->addr[!dst];
	case P4E_FZ_SRC_SELF:
		return &f->addr[dst];
	case P4E_FZ_SRC_UNKNOWN1:
		return &f->unknown[0];
	default:
		return &f->unknown[1];
	}
}

/* ni's state for the peer at a, if it has any (no peer id is made). */
static struct p4e_npeer *p4e_fz_npeer(struct p4e_ni *ni,
				      const struct sockaddr_in *a)
{
	struct p4e_dom *dom = ni->dom;
	struct p4e_peer_addr *pa;
	uint32_t i;

	for (i = 0; i < dom->npeers; i++) {
		pa = p4e_dom_peer(dom, i);
		if (pa->addrlen == sizeof(*a) &&
		    !memcmp(pa->addr, a, sizeof(*a)))
			return i < ni->npeers_cap ? ni->npeers[i] : NULL;
	}
	return NULL;
}

/*
 * The seq the receiver accepts next from src: its rx_expect, or, from the
 * other NI, that NI's next seq if later (its requests still on the way
 * get there first), plus the fixed-up requests queued since.
 */
static uint32_t p4e_fz_seq_expect(struct p4e_fz *f, int dst,
				  enum p4e_fz_src src)
{
	const struct sockaddr_in *a = p4e_fz_src_addr(f, dst, src);
	struct p4e_npeer *np = p4e_fz_npeer(f->ni[dst], a), *snp;
	uint32_t seq = np ? np->rx_expect : 0;

	if (src == P4E_FZ_SRC_PEER) {
		snp = p4e_fz_npeer(f->ni[!dst], &f->addr[dst]);
		if (snp && p4e_seq_before(seq, snp->tx_seq))
			seq = snp->tx_seq;
	}
	return seq + f->pending[dst][src];
}

/* Symbolic op ids and cookie keys (below 256) become real ones. */
static void p4e_fz_symbolic(struct p4e_fz *f, uint8_t *msg, size_t len)
{
	const size_t body = sizeof(struct p4w_hdr);
	size_t off = body + sizeof(struct p4w_req);
	uint64_t v;
	int i;

	if (len < body + sizeof(struct p4w_resp))
		return;
	v = p4e_fz_le_get(msg + body, 8);
	if (v < 256 && f->nops)
		p4e_fz_le_put(msg + body, f->ops[v % f->nops], 8);
	if (!p4w_type_is_seq(msg[1]) || len < off)
		return;
	for (i = 0; i < 2; i++) {
		/* proto RDZV: a source cookie; rflags PUSH: a sink cookie */
		if (!(i ? msg[body + offsetof(struct p4w_req, rflags)] &
			  P4W_RF_PUSH :
			  msg[body + offsetof(struct p4w_req, proto)] ==
			  P4W_PROTO_RDZV))
			continue;
		if (len < off + sizeof(struct p4w_cookie))
			return;
		v = p4e_fz_le_get(msg + off + 8, 8);
		if (v < 256 && f->ncookies)
			p4e_fz_le_put(msg + off + 8,
				      f->cookies[v % f->ncookies], 8);
		off += sizeof(struct p4w_cookie);
	}
}

static void p4e_fz_message(struct p4e_fz *f, uint8_t ctl, const uint8_t *data,
			   size_t len)
{
	int dst = (ctl & 3) == P4E_FZ_ROUTE_TO_A ? 0 : 1;
	enum p4e_fz_src src = P4E_FZ_SRC_PEER;
	uint8_t *msg;

	if ((ctl & 3) == P4E_FZ_ROUTE_OTHER) {
		dst = p4e_fz_routes[ctl >> 5].dst;
		src = p4e_fz_routes[ctl >> 5].src;
	}
	msg = malloc(len ? len : 1);
	if (!msg)
		return;
	memcpy(msg, data, len);
	if (!(ctl & P4E_FZ_CTL_RAW) && len >= sizeof(struct p4w_hdr)) {
		p4e_fz_le_put(msg + offsetof(struct p4w_hdr, length), len, 4);
		if (p4w_type_is_seq(msg[1])) {
			p4e_fz_le_put(msg + offsetof(struct p4w_hdr, seq),
				      p4e_fz_seq_expect(f, dst, src), 4);
			f->pending[dst][src]++;
		}
	}
	p4e_fz_symbolic(f, msg, len);
	p4t_loop_inject(f->ni[dst]->xp[P4E_XP_NET].iface, p4e_fz_src_addr(f, dst, src),
			sizeof(struct sockaddr_in), msg, len);
	free(msg);
}

/* ---- API actions --------------------------------------------------------- */

/* The common masks, or one of 240 others (past 16 masks: the slow list). */
static uint64_t p4e_fz_ignore(uint8_t v)
{
	return v < 16 ? p4e_fz_ignores[v % 8] : (uint64_t)v << (v % 48);
}

static unsigned p4e_fz_me_options(uint8_t lo, uint8_t hi)
{
	unsigned bits = lo | (unsigned)hi << 8, opt = 0, i;

	for (i = 0; i < 16; i++)
		if (bits & (1u << i))
			opt |= p4e_fz_me_flags[i];
	return opt;
}

static void p4e_fz_act_append(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = (a[7] & 4) ? f->ct[0] : P4E_HANDLE_NONE,
		.uid = !(a[7] & 8) ? P4E_UID_ANY : (a[7] & 16) ? 1000 : 4321,
		.options = p4e_fz_me_options(a[3], a[4]),
		.match_id = (a[7] & 1) ? P4E_ID_ANY : p4e_fz_name_of(f, 0),
		.match_bits = p4e_fz_bits[a[1] % 16],
		.ignore_bits = p4e_fz_ignore(a[2]),
		.min_free = a[6],
	};
	size_t len = (size_t)a[5] * 4;
	uint64_t me;

	if (a[7] & 2) {
		d.options |= P4E_ME_IOVEC;
		d.start = p4e_fz_iov_new(f, len);
		d.length = 3;
	} else {
		d.start = p4e_fz_buf_new(f, len, false);
		d.length = len;
	}
	if (d.start &&
	    !p4e_me_append(f->ni[1], (a[0] & 0x7f) % P4E_FZ_NPT, &d,
			   (a[0] & 0x80) ? P4E_OVERFLOW_LIST :
					   P4E_PRIORITY_LIST,
			   NULL, a[6], &me))
		p4e_fz_add(f->mes, &f->nmes, P4E_FZ_MAX_MES, me);
}

static void p4e_fz_act_search(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.match_id = (a[4] & 1) ? P4E_ID_ANY : p4e_fz_name_of(f, 0),
		.match_bits = p4e_fz_bits[a[1] % 16],
		.ignore_bits = p4e_fz_ignore(a[2]),
	};

	p4e_me_search(f->ni[1], a[0] % P4E_FZ_NPT, &d, a[3] % 3, NULL, 0);
}

static void p4e_fz_act_uh(struct p4e_fz *f, const uint8_t *a)
{
	struct p4e_me_desc d = {
		.ct = P4E_HANDLE_NONE, .uid = P4E_UID_ANY,
		.options = p4e_fz_me_options(a[3], a[4]) & ~P4E_ME_IOVEC,
		.match_id = P4E_ID_ANY, .length = (uint64_t)a[5] * 4,
	};
	uint64_t uh;

	if (!f->nuhs)
		return;
	uh = f->uhs[a[0] % f->nuhs];
	if (a[1] & 1) {
		p4e_uh_discard(f->ni[1], uh);
		return;
	}
	d.start = p4e_fz_buf_new(f, d.length, false);
	if (d.start)
		p4e_uh_deliver(f->ni[1], uh, &d, NULL, 0);
}

static void p4e_fz_act_post(struct p4e_fz *f, const uint8_t *a)
{
	static const uint8_t kinds[7] = {
		P4W_PUT, P4W_GET, P4W_ATOMIC, P4W_FETCH, P4W_SWAP, P4W_PUT,
		P4W_GET,
	};
	int kind = (a[0] & 0x7f) % 7, side = a[0] >> 7;
	struct p4e_fz_op o = {
		.kind = kinds[kind], .md = side ? 3 : kind >= 5 ? 1 : 0,
		.len = (uint16_t)(a[4] * 8), .pt = a[1] % P4E_FZ_NPT,
		.bits = a[2], .ack = a[3] % P4E_ACK_REQ_MAX,
		.aop = a[6] % P4E_ATOMIC_OP_MAX,
		.atype = a[7] % P4E_ATOMIC_TYPE_MAX,
		.roff = (uint16_t)(a[5] * 4),
		.flags = (a[2] & 16) ? P4E_XFER_HDR_DATA : 0,
	};

	if (side)
		o.len = P4U_MIN(o.len, 64);	/* B's MD */
	p4e_fz_post(f, side, &o);
	p4e_fz_ops_scan(f);
}

static void p4e_fz_action(struct p4e_fz *f, uint8_t code, const uint8_t *a)
{
	struct p4e_ct_event inc = { .success = a[1], .failure = a[2] & 1 };
	struct p4t_iface *iface = f->ni[a[0] & 1]->xp[P4E_XP_NET].iface;

	switch (code % P4E_FZ_NACT) {
	case P4E_FZ_ACT_APPEND:
		p4e_fz_act_append(f, a);
		break;
	case P4E_FZ_ACT_UNLINK:
		if (a[1] & 2)	/* setup entries have user_ptr pt + 1 */
			p4e_me_cancel(f->ni[1], a[0] % P4E_FZ_NPT,
				      (a[1] & 4) ? NULL : (void *)(uintptr_t)
				      (a[0] % P4E_FZ_NPT + 1));
		else if (f->nmes)
			p4e_me_unlink(f->ni[1], f->mes[a[0] % f->nmes],
				      (a[1] & 1) ? P4E_UNLINK_CANCEL : 0);
		break;
	case P4E_FZ_ACT_SEARCH:
		p4e_fz_act_search(f, a);
		break;
	case P4E_FZ_ACT_UH:
		p4e_fz_act_uh(f, a);
		break;
	case P4E_FZ_ACT_PT:
		if (a[1] & 1)
			p4e_pt_enable(f->ni[1], a[0] % P4E_FZ_NPT);
		else
			p4e_pt_disable(f->ni[1], a[0] % P4E_FZ_NPT);
		break;
	case P4E_FZ_ACT_POST:
		p4e_fz_act_post(f, a);
		break;
	case P4E_FZ_ACT_CT:
		p4e_ct_inc(f->dom, f->ct[a[0] % P4E_FZ_NCT], inc);
		break;
	case P4E_FZ_ACT_LINK:
		p4t_loop_fail_link(iface, &f->addr[!(a[0] & 1)],
				   sizeof(f->addr[0]), -FI_ECONNRESET);
		break;
	case P4E_FZ_ACT_STEP:
		p4e_ni_progress(f->ni[a[0] & 1], a[1] % 4 + 1);
		break;
	case P4E_FZ_ACT_HOLD:
		p4t_loop_hold(iface, a[1] & 1);
		break;
	default:
		p4t_loop_set_queue_limit(iface, (size_t)a[1] * 64);
		break;
	}
}

/* ---- the target ---------------------------------------------------------- */

static void p4e_fz_run(struct p4e_fz *f, const uint8_t *data, size_t size)
{
	uint8_t ctl, args[1 + P4E_FZ_ACT_ARGS];
	size_t len;

	while (size) {
		ctl = data[0];
		if ((ctl & 3) == P4E_FZ_ROUTE_ACTION) {
			memset(args, 0, sizeof(args));
			len = P4U_MIN(size - 1, sizeof(args));
			memcpy(args, data + 1, len);
			p4e_fz_action(f, args[0], args + 1);
			data += 1 + len;
			size -= 1 + len;
		} else {
			if (size < 3)
				break;
			len = (data[1] | (size_t)data[2] << 8) & 0x1fff;
			len = P4U_MIN(len, size - 3);
			p4e_fz_message(f, ctl, data + 3, len);
			data += 3 + len;
			size -= 3 + len;
		}
		if (!(ctl & P4E_FZ_CTL_HOLD))
			p4e_fz_progress(f);
		if (!(ctl & P4E_FZ_CTL_KEEP))
			p4e_fz_drain(f);
	}
	p4t_loop_hold(f->ni[0]->xp[P4E_XP_NET].iface, false);
	p4t_loop_hold(f->ni[1]->xp[P4E_XP_NET].iface, false);
	p4e_fz_progress(f);
	p4e_fz_drain(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct p4e_fz *f = &p4e_fz_state;

	if (!init) {
		const char *env = getenv("FUZZ_TARGET_LOG");

		p4e_fz_log_on = env && *env == '1';
		p4u_log_set_sink(p4e_fz_log_enabled, p4e_fz_log_write);
		init = true;
	}
	if (!size)
		return 0;
	p4e_fz_open(f, data[0] % P4E_FZ_NCFG);
	p4e_fz_run(f, data + 1, size - 1);
	p4e_fz_close(f);
	return 0;
}
