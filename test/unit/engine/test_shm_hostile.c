/*
 * test_shm_hostile.c - hostile bytes in a shared-memory ring. The ring
 * is the peer's to write, so everything the consumer reads from it may
 * be wrong: a tail past the ring, record lengths past the ring or the
 * tail, fragments out of order, frames of unknown types, RMA frames too
 * short for their control block or naming pulls and pushes that do not
 * exist. Here a producer side forges such records into its link's ring
 * (past the transport's send path, as a broken or hostile peer would);
 * the consumer must count the input as malformed, fail that one link
 * after delivering what came before, and keep serving its other peers,
 * with nothing read or written out of bounds (the ASan build runs it).
 *
 * The handshake is the peer's too: a HELLO whose wake-up descriptor
 * would block our writes, or whose doorbells are not what they say, is
 * refused, and connections that never send one are bounded in number
 * and closed at their deadline.
 *
 * Not here: the engine's parsing of what a well-formed record carries
 * (fuzz/, test_wire_parse.c); a peer that dies (test_shm_fail.c).
 */
#include <config.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define SHM_SUITE	shm_hostile
#include "p4t_shm_test.h"
#include "p4t_shm_priv.h"

TestSuite(shm_hostile, .init = shm_setup, .fini = shm_teardown,
	  .timeout = 120);

/*
 * Forge a record at the producer's position of x's ring: header h, then
 * body, and publish a tail adv bytes further (the record's true size, or
 * a lie). The transport's own producer state moves along, as if it had
 * written it.
 */
static void forge(struct p4t_conn *x, const struct p4t_shm_rec *h,
		  const void *body, size_t blen, uint64_t adv)
{
	struct p4t_shm_ring *r = &p4t_shm_conn_of(x)->tx;
	uint64_t off = r->pos & r->mask;

	cr_assert_leq(off + P4T_SHM_REC_HDR + blen, r->size,
		      "the forged record must fit where it is written");
	memcpy(r->data + off, h, sizeof(*h));
	if (blen)
		memcpy(r->data + off + P4T_SHM_REC_HDR, body, blen);
	r->pos += adv;
	__atomic_store_n(&r->ctl->tail, r->pos, __ATOMIC_RELEASE);
}

/* One record of a whole frame: type, len bytes of body. */
static void forge_frame(struct p4t_conn *x, uint16_t type, const void *body,
			uint32_t len)
{
	struct p4t_shm_rec h = {
		.len = len, .type = type,
		.flags = P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST, .total = len,
	};

	forge(x, &h, body, len, p4t_shm_rec_size(len));
}

/* An RMA frame: the control block, then extra bytes of pieces or data. */
static void forge_ctl(struct p4t_conn *x, uint16_t type,
		      const struct p4t_shm_ctl *ctl, size_t extra)
{
	uint8_t body[sizeof(*ctl) + 256] = { 0 };

	cr_assert_leq(extra, 256);
	memcpy(body, ctl, sizeof(*ctl));
	memset(body + sizeof(*ctl), 0x5a, extra);
	forge_frame(x, type, body, (uint32_t)(sizeof(*ctl) + extra));
}

enum bad_kind {
	BAD_TAIL_PAST_RING,
	BAD_LEN_PAST_RING,
	BAD_LEN_PAST_TAIL,
	BAD_PAD_PAST_TAIL,
	BAD_MIDDLE_FIRST,
	BAD_LAST_FIRST,
	BAD_TOTAL_ABOVE_MAX,
	BAD_WHOLE_TOTAL_DIFFERS,
	BAD_UNKNOWN_TYPE,
	BAD_INFO_SHORT,
	BAD_CTL_SHORT,
	BAD_PULL_DATA_NO_PULL,
	BAD_PULL_DONE_NO_PULL,
	BAD_GRANT_NO_PULL,
	BAD_PUSH_DATA_NO_PUSH,
	BAD_PUSH_DONE_NO_PUSH,
	BAD_PUSH_REQ_PIECES_MISSING,
	BAD_NKINDS
};

static const char *const bad_names[BAD_NKINDS] = {
	"tail past the ring", "record length past the ring",
	"record past the tail", "pad past the tail",
	"middle fragment without a first", "last fragment without a first",
	"frame total above the maximum", "whole record with another total",
	"unknown frame type", "info of the wrong length",
	"rma frame shorter than its control block", "pull data for no pull",
	"pull done for no pull", "grant for no pull",
	"push data without a push", "push done for no push",
	"push request naming more pieces than it carries",
};

static void forge_bad(struct p4t_conn *x, enum bad_kind kind)
{
	struct p4t_shm_ring *r = &p4t_shm_conn_of(x)->tx;
	struct p4t_shm_ctl ctl = { .id = 0x1234567, .len = 64 };
	struct p4t_shm_rec h = { .type = P4T_SHM_F_MSG, .len = 32,
				 .total = 32 };
	uint8_t body[32] = { 0 };

	switch (kind) {
	case BAD_TAIL_PAST_RING:
		r->pos += 2 * r->size;
		__atomic_store_n(&r->ctl->tail, r->pos, __ATOMIC_RELEASE);
		return;
	case BAD_LEN_PAST_RING:
		h.len = UINT32_MAX;
		h.total = UINT32_MAX;
		h.flags = P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST;
		forge(x, &h, NULL, 0, P4T_SHM_REC_ALIGN);
		return;
	case BAD_LEN_PAST_TAIL:
		h.len = h.total = 4000;
		h.flags = P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST;
		forge(x, &h, NULL, 0, P4T_SHM_REC_ALIGN);
		return;
	case BAD_PAD_PAST_TAIL:
		h.type = P4T_SHM_F_PAD;
		forge(x, &h, NULL, 0, P4T_SHM_REC_ALIGN);
		return;
	case BAD_MIDDLE_FIRST:
		h.flags = 0;
		break;
	case BAD_LAST_FIRST:
		h.flags = P4T_SHM_REC_LAST;
		break;
	case BAD_TOTAL_ABOVE_MAX:
		h.flags = P4T_SHM_REC_FIRST;
		h.total = (uint64_t)P4T_SHM_FRAME_MAX + 1;
		break;
	case BAD_WHOLE_TOTAL_DIFFERS:
		h.flags = P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST;
		h.total = UINT64_MAX;
		break;
	case BAD_UNKNOWN_TYPE:
		forge_frame(x, P4T_SHM_F_MAX, body, sizeof(body));
		return;
	case BAD_INFO_SHORT:
		forge_frame(x, P4T_SHM_F_INFO, body, 4);
		return;
	case BAD_CTL_SHORT:
		forge_frame(x, P4T_SHM_F_PULL_DATA, body, 8);
		return;
	case BAD_PULL_DATA_NO_PULL:
		forge_ctl(x, P4T_SHM_F_PULL_DATA, &ctl, 64);
		return;
	case BAD_PULL_DONE_NO_PULL:
		forge_ctl(x, P4T_SHM_F_PULL_DONE, &ctl, 0);
		return;
	case BAD_GRANT_NO_PULL:
		ctl.niov = 1;
		forge_ctl(x, P4T_SHM_F_PULL_GRANT, &ctl,
			  sizeof(struct p4t_shm_piece));
		return;
	case BAD_PUSH_DATA_NO_PUSH:
		/* a last piece with no first one before it */
		ctl.flags = P4T_SHM_CTL_LAST;
		forge_ctl(x, P4T_SHM_F_PUSH_DATA, &ctl, 64);
		return;
	case BAD_PUSH_DONE_NO_PUSH:
		forge_ctl(x, P4T_SHM_F_PUSH_DONE, &ctl, 0);
		return;
	case BAD_PUSH_REQ_PIECES_MISSING:
		ctl.niov = 1000;
		forge_ctl(x, P4T_SHM_F_PUSH_REQ, &ctl,
			  sizeof(struct p4t_shm_piece));
		return;
	case BAD_NKINDS:
		cr_assert_fail("no such kind %d", kind);
		return;
	}
	/* the fragment kinds: one record of a 32-byte body under h */
	forge(x, &h, body, sizeof(body), p4t_shm_rec_size(sizeof(body)));
}

/* Close the three sides and open them again on new addresses: a failed
 * link's address would otherwise be reused while it is reaped. */
static void sides_renew(void)
{
	struct side *sides[] = { &sa, &sb, &sc };
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(sides); i++) {
		side_close(sides[i]);
		side_forget(sides[i]);
		shm_side_open(sides[i], 0);
	}
}

/*
 * Each kind on a link of its own: a message first, then the forged
 * record. The consumer delivers the message, counts one malformed input,
 * fails the link (conn_failed -FI_EPROTO), and the producer's side sees
 * its link fail too; a third side then reaches the consumer as before.
 */
SHM_TEST(each_malformed_record_fails_its_link_only)
{
	struct p4t_conn *x, *y, *z;
	int kind;

	shm_side_open(&sc, 0);
	for (kind = 0; kind < BAD_NKINDS; kind++) {
		uint64_t malformed;

		x = link_up(&sa, &sb, &y);
		malformed = stats_of(&sb).malformed;
		cr_assert_eq(send_seq(&sa, x, (uint32_t)kind, 100), P4T_DONE);
		forge_bad(x, (enum bad_kind)kind);
		PUMP_UNTIL(count(&sb, UP_CONN_FAILED) > 0 &&
			   count(&sa, UP_CONN_FAILED) > 0);
		/* a tail past the ring says nothing of where the records
		 * end: the link fails before any is read */
		cr_assert_eq(count(&sb, UP_RECV),
			     kind == BAD_TAIL_PAST_RING ? 0 : 1,
			     "%s: the message before it", bad_names[kind]);
		if (kind != BAD_TAIL_PAST_RING)
			expect_msg(last_recv(&sb), (uint32_t)kind, 100);
		cr_assert_eq(stats_of(&sb).malformed, malformed + 1, "%s",
			     bad_names[kind]);
		cr_assert_eq(sb.ev[sb.nev - 1].kind, UP_CONN_FAILED);
		cr_assert_eq(sb.ev[sb.nev - 1].conn, y);
		cr_assert_eq(sb.ev[sb.nev - 1].status, -FI_EPROTO, "%s: %d",
			     bad_names[kind], sb.ev[sb.nev - 1].status);
		side_forget(&sa);
		side_forget(&sb);

		/* the consumer serves its other peers */
		z = conn_to(&sc, &sb);
		cr_assert_eq(send_seq(&sc, z, 7, 10), P4T_DONE);
		PUMP_UNTIL(count(&sb, UP_RECV) > 0);
		expect_msg(last_recv(&sb), 7, 10);
		sides_renew();
	}
}

/*
 * Not malformed: a PULL_STOP naming no stream of ours. The owner's
 * stream may have sent its last chunk and ended before the puller's stop
 * arrived, so the stop is dropped and the link goes on.
 */
SHM_TEST(a_stop_for_a_stream_already_over_is_dropped)
{
	struct p4t_shm_ctl ctl = { .id = 0x1234567 };
	struct p4t_conn *x, *y;

	x = link_up(&sa, &sb, &y);
	forge_ctl(x, P4T_SHM_F_PULL_STOP, &ctl, 0);
	cr_assert_eq(send_seq(&sa, x, 3, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) > 0);
	expect_msg(last_recv(&sb), 3, 100);
	pump_quiet(20);
	cr_assert_eq(stats_of(&sb).malformed, 0);
	cr_assert_eq(count(&sb, UP_CONN_FAILED), 0);
	cr_assert_eq(count(&sa, UP_CONN_FAILED), 0);
}

/* A small xorshift: the same records on every run. */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define RND_BODY	(sizeof(struct p4t_shm_ctl) + 64)

/*
 * One random record into h and body (RND_BODY bytes): its length in
 * *len_p; returns how far the tail moves past it. Three of four are well
 * framed: a whole frame of a known type (half of them messages), its
 * control block random but for a count and a length that often fit.
 * The rest are random throughout, now and then huge, and their tail
 * moves by the record's size or by a random count of 64-byte steps.
 */
static uint64_t random_record(uint64_t *seed, struct p4t_shm_rec *h,
			      uint8_t *body, uint32_t *len_p)
{
	uint64_t v = rnd_next(seed);
	struct p4t_shm_ctl ctl;
	uint32_t len;
	size_t k;

	for (k = 0; k < RND_BODY; k++)
		body[k] = (uint8_t)rnd_next(seed);
	if (v & 3) {
		len = (uint32_t)(sizeof(ctl) + (v >> 8) % 65);
		h->len = len;
		h->type = (uint16_t)(1 + (v >> 16) % (P4T_SHM_F_MAX - 1));
		if ((v >> 29) & 1)
			h->type = P4T_SHM_F_MSG;
		h->flags = P4T_SHM_REC_FIRST | P4T_SHM_REC_LAST;
		h->total = len;
		memcpy(&ctl, body, sizeof(ctl));
		ctl.niov = (uint32_t)((v >> 24) % 4);
		ctl.flags &= 0xf;
		if ((v >> 28) & 1)
			ctl.len = len - sizeof(ctl);
		memcpy(body, &ctl, sizeof(ctl));
		*len_p = len;
		return p4t_shm_rec_size(len);
	}
	len = (uint32_t)((v >> 8) % (RND_BODY + 1));
	if (!(v >> 60))
		len = (uint32_t)(v >> 8);
	h->len = len;
	h->type = (uint16_t)((v >> 16) % (P4T_SHM_F_MAX + 2));
	h->flags = (uint16_t)((v >> 24) & 3);
	h->total = (v >> 32) & 1 ? len : rnd_next(seed) % 4096;
	*len_p = len;
	return (v >> 40) & 1 ? p4t_shm_rec_size(len % 4096) :
	       P4T_SHM_REC_ALIGN * (1 + (v >> 44) % 8);
}

/*
 * Random records: type, flags, lengths, totals, control fields and the
 * tail's advance drawn at random, one to four per link. Whatever the
 * consumer makes of them (a refusal answered on the link, a dropped
 * frame, a failed link), it neither crashes nor reads outside the ring,
 * and a third side reaches it afterwards.
 */
SHM_TEST(random_records_never_crash_the_consumer)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct p4t_conn *x, *y, *z;
	uint64_t malformed = 0, failed_links = 0;
	int round, i;

	shm_side_open(&sc, 0);
	for (round = 0; round < 60; round++) {
		x = link_up(&sa, &sb, &y);
		(void)y;
		for (i = 0; i < 1 + round % 4; i++) {
			struct p4t_shm_ring *r = &p4t_shm_conn_of(x)->tx;
			uint8_t body[RND_BODY];
			struct p4t_shm_rec h;
			uint64_t adv, room;
			uint32_t len;

			adv = random_record(&seed, &h, body, &len);
			room = r->size - (r->pos & r->mask);
			if (room < p4t_shm_rec_size(sizeof(body)) || room < adv)
				break;	/* the forged record would wrap */
			forge(x, &h, body, P4U_MIN((size_t)len, sizeof(body)),
			      adv);
			if (!p4t_shm_conn_live(p4t_shm_conn_of(x)))
				break;
		}
		pump_quiet(20);
		side_forget(&sb);
		z = conn_to(&sc, &sb);
		cr_assert_eq(send_seq(&sc, z, 8, 10), P4T_DONE);
		PUMP_UNTIL(count(&sb, UP_RECV) > 0);
		expect_msg(last_recv(&sb), 8, 10);
		malformed += stats_of(&sb).malformed;
		failed_links += count(&sa, UP_CONN_FAILED) > 0;
		sides_renew();
	}
	/* the records did reach the checks (not all refused, not all
	 * taken: some links lived through their four records) */
	cr_log_info("%llu malformed inputs, %llu of 60 links failed",
		    (unsigned long long)malformed,
		    (unsigned long long)failed_links);
	cr_assert_gt(malformed, 0);
	cr_assert_lt(failed_links, 60);
}

/* ---- the handshake ------------------------------------------------------------- */

/* A pipe left full, then made blocking: writing it would never return. */
static void full_blocking_pipe(int p[2])
{
	char fill[4096] = { 0 };
	int fl;

	cr_assert_eq(pipe(p), 0);
	fl = fcntl(p[1], F_GETFL);
	cr_assert_eq(fcntl(p[1], F_SETFL, fl | O_NONBLOCK), 0);
	while (write(p[1], fill, sizeof(fill)) > 0)
		;
	cr_assert_eq(fcntl(p[1], F_SETFL, fl & ~O_NONBLOCK), 0);
}

/* The next handshake message on sock (spinning: it is coming). */
static void hs_wait(int sock, struct p4t_shm_hs *hs, int *fds, size_t *nfds)
{
	uint64_t t0 = now_ms();
	int ret;

	while ((ret = p4t_shm_hs_recv(sock, hs, fds, 3, nfds)) == -EAGAIN)
		cr_assert_lt(now_ms() - t0, 10000, "no handshake message");
	cr_assert_eq(ret, 1);
}

/* A segment as a connector makes it, its size sealed. */
static int forge_segment(void)
{
	size_t size = p4t_shm_seg_bytes();
	struct p4t_shm_seg *seg;
	int fd = memfd_create("forged", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	cr_assert_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			   F_SEAL_SEAL), 0);
	seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(seg, MAP_FAILED);
	p4t_shm_seg_init(seg, size);
	/* we "sleep": the acceptor's first write into ring 1 (its INFO)
	 * writes our wake-up descriptor */
	seg->ctl[1].armed = 1;
	munmap(seg, size);
	return fd;
}

/*
 * A HELLO, well formed but for its wake-up descriptor: a pipe in
 * blocking mode, already full. The acceptor writes that descriptor
 * whenever the connector's armed word asks; a blocking one would stop it
 * in write(2) for good. It is refused (BYE, counted malformed, no link),
 * and the acceptor serves its other peers.
 */
SHM_TEST(a_hello_with_a_blocking_wake_fd_is_refused, .timeout = 30)
{
	struct sockaddr_in to;
	struct sockaddr_un sun;
	struct p4t_shm_hs hs;
	struct p4t_conn *x;
	int p[2], fds[3], sock;
	size_t nfds;
	socklen_t len;

	full_blocking_pipe(p);
	/* sc's address and HELLO, sent by us on a socket of our own */
	shm_side_open(&sc, 0);
	memcpy(&to, &sb.addr, sizeof(to));
	memset(to.sin_zero, 0, sizeof(to.sin_zero));
	len = shm_name_of(&to, &sun);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(sock, 0);
	cr_assert_eq(connect(sock, (struct sockaddr *)&sun, len), 0);
	p4t_shm_hs_fill(p4t_shm_iface_of(sc.iface), P4T_SHM_HS_HELLO, &hs);
	fds[0] = forge_segment();
	fds[1] = p[1];
	fds[2] = p4t_shm_iface_of(sc.iface)->inbox_fd;
	cr_assert_eq(p4t_shm_hs_send(sock, &hs, fds, 3), 0);
	close(fds[0]);

	PUMP_UNTIL(stats_of(&sb).malformed > 0);
	cr_assert_eq(count(&sb, UP_CONN_NEW), 0);
	cr_assert_eq(stats_of(&sb).accepts, 0);
	/* the answer on our socket: BYE, refused */
	hs_wait(sock, &hs, fds, &nfds);
	cr_assert_eq(nfds, 0);
	cr_assert_eq(hs.type, P4T_SHM_HS_BYE);
	cr_assert_eq(hs.reason, P4T_SHM_BYE_REFUSED);
	close(sock);
	close(p[0]);
	close(p[1]);

	/* and the acceptor goes on */
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 5, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) > 0);
	expect_msg(last_recv(&sb), 5, 100);
}

/*
 * The same from an acceptor: its HELLO_ACK hands the connector a
 * blocking descriptor, and the connector's next message would write it
 * (the acceptor's armed word asks). The link fails as malformed instead,
 * and the process goes on.
 */
SHM_TEST(a_hello_ack_with_a_blocking_wake_fd_fails_the_link, .timeout = 30)
{
	struct sockaddr_in to = shm_addr(1600);
	struct sockaddr_un sun;
	socklen_t len = shm_name_of(&to, &sun);
	struct p4t_shm_seg *seg;
	struct p4t_shm_hs hs;
	struct p4t_conn *x = NULL;
	int p[2], fds[3], lfd, sock;
	size_t nfds;

	full_blocking_pipe(p);
	/* a listener of our own on an address's name */
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sun, len), 0);
	cr_assert_eq(listen(lfd, 4), 0);
	cr_assert_eq(p4t_conn_get(sa.iface, &to, sizeof(to), &x), 0);
	cr_assert_not_null(x);
	sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(sock, 0);
	hs_wait(sock, &hs, fds, &nfds);
	cr_assert_eq(hs.type, P4T_SHM_HS_HELLO);
	cr_assert_eq(nfds, 3);
	close(fds[2]);

	/* map the connector's segment; "sleep" on ring 0, which it writes */
	seg = mmap(NULL, p4t_shm_seg_bytes(), PROT_READ | PROT_WRITE,
		   MAP_SHARED, fds[0], 0);
	cr_assert_neq(seg, MAP_FAILED);
	seg->ctl[0].armed = 1;
	close(fds[0]);
	close(fds[1]);

	/* the answer: our HELLO_ACK, with the pipe to wake us */
	shm_side_open(&sc, 0);
	p4t_shm_hs_fill(p4t_shm_iface_of(sc.iface), P4T_SHM_HS_ACK, &hs);
	fds[0] = p[1];
	fds[1] = p4t_shm_iface_of(sc.iface)->inbox_fd;
	cr_assert_eq(p4t_shm_hs_send(sock, &hs, fds, 2), 0);
	side_close(&sc);

	PUMP_UNTIL(count(&sa, UP_CONN_FAILED) > 0);
	cr_assert_eq(sa.ev[sa.nev - 1].status, -FI_EPROTO);
	cr_assert_eq(stats_of(&sa).malformed, 1);

	munmap(seg, p4t_shm_seg_bytes());
	close(sock);
	close(lfd);
	close(p[0]);
	close(p[1]);
}

/*
 * HELLOs whose doorbells are not what they say: a slot past
 * P4T_SHM_BELLS, a file of another size, a file that may shrink (our
 * bell writes would fault), no file of the kind at all (a pipe). Each is
 * refused (BYE, counted malformed, no link) and the acceptor goes on.
 */
SHM_TEST(hellos_with_bad_doorbells_are_refused)
{
	struct sockaddr_in to;
	struct sockaddr_un sun;
	struct p4t_shm_hs hs;
	struct p4t_conn *x;
	int fds[3], sock, bad, p[2], i;
	uint64_t malformed;
	size_t nfds;
	socklen_t len;

	shm_side_open(&sc, 0);
	memcpy(&to, &sb.addr, sizeof(to));
	memset(to.sin_zero, 0, sizeof(to.sin_zero));
	len = shm_name_of(&to, &sun);
	cr_assert_eq(pipe(p), 0);
	for (i = 0; i < 4; i++) {
		p4t_shm_hs_fill(p4t_shm_iface_of(sc.iface), P4T_SHM_HS_HELLO,
				&hs);
		bad = -1;
		if (i == 0) {
			hs.bell = P4T_SHM_BELLS;
		} else if (i == 1 || i == 2) {
			bad = memfd_create("bells", MFD_CLOEXEC |
					   MFD_ALLOW_SEALING);
			cr_assert_geq(bad, 0);
			cr_assert_eq(ftruncate(bad, i == 1 ? 8192 : 4096), 0);
			if (i == 1)
				cr_assert_eq(fcntl(bad, F_ADD_SEALS,
						   F_SEAL_SHRINK), 0);
		}
		sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		cr_assert_geq(sock, 0);
		cr_assert_eq(connect(sock, (struct sockaddr *)&sun, len), 0);
		fds[0] = forge_segment();
		fds[1] = p4t_shm_iface_of(sc.iface)->wake_fd;
		fds[2] = i == 3 ? p[0] : bad >= 0 ? bad :
			 p4t_shm_iface_of(sc.iface)->inbox_fd;
		malformed = stats_of(&sb).malformed;
		cr_assert_eq(p4t_shm_hs_send(sock, &hs, fds, 3), 0);
		close(fds[0]);
		if (bad >= 0)
			close(bad);
		PUMP_UNTIL(stats_of(&sb).malformed > malformed);
		hs_wait(sock, &hs, fds, &nfds);
		cr_assert_eq(nfds, 0);
		cr_assert_eq(hs.type, P4T_SHM_HS_BYE, "case %d", i);
		cr_assert_eq(hs.reason, P4T_SHM_BYE_REFUSED, "case %d", i);
		close(sock);
	}
	close(p[0]);
	close(p[1]);
	cr_assert_eq(count(&sb, UP_CONN_NEW), 0);
	cr_assert_eq(stats_of(&sb).accepts, 0);

	/* and the acceptor goes on */
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 5, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) > 0);
	expect_msg(last_recv(&sb), 5, 100);
}

/* Whether the peer closed sock (EOF), without waiting. */
static bool sock_closed(int sock)
{
	char c;

	return recv(sock, &c, 1, MSG_DONTWAIT) == 0;
}

/*
 * Silent connections (connect, never a HELLO) to a side whose HELLO
 * deadline is 300 ms: beyond P4T_SHM_PENDING_MAX waiting at once, each
 * new one closes the oldest; the rest are closed at their deadline; a
 * real peer gets through all the while.
 */
SHM_TEST(silent_connections_are_bounded_and_timed_out)
{
	enum { N = P4T_SHM_PENDING_MAX + 44 };
	struct sockaddr_in at = shm_addr(1700);
	struct p4t_iface_config cfg = {
		.addr = &at, .addrlen = sizeof(at), .peer_timeout_ms = 300,
	};
	struct sockaddr_un sun;
	socklen_t len = shm_name_of(&at, &sun);
	struct p4t_conn *x;
	static int socks[N];
	int i, evicted = 0;

	side_close(&sb);
	cr_assert_eq(side_open_cfg(&sb, &cfg), 0);
	for (i = 0; i < N; i++) {
		socks[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
				  SOCK_NONBLOCK, 0);
		cr_assert_geq(socks[i], 0);
		while (connect(socks[i], (struct sockaddr *)&sun, len)) {
			/* the backlog is full: let the side accept */
			cr_assert_eq(errno, EAGAIN, "connect: %s",
				     strerror(errno));
			p4t_progress(sb.iface, 64);
		}
		p4t_progress(sb.iface, 64);
	}
	/* every one accepted (an empty backlog), the oldest closed */
	for (i = 0; i < 20; i++)
		p4t_progress(sb.iface, 64);
	for (i = 0; i < N; i++)
		evicted += sock_closed(socks[i]);
	cr_assert_eq(evicted, N - P4T_SHM_PENDING_MAX);
	for (i = 0; i < N - P4T_SHM_PENDING_MAX; i++)
		cr_assert(sock_closed(socks[i]), "socket %d of %d open", i, N);
	cr_assert_eq(stats_of(&sb).silent_closed,
		     (uint64_t)(N - P4T_SHM_PENDING_MAX));

	/* a real peer meanwhile */
	x = conn_to(&sa, &sb);
	cr_assert_eq(send_seq(&sa, x, 4, 100), P4T_DONE);
	PUMP_UNTIL(count(&sb, UP_RECV) > 0);
	expect_msg(last_recv(&sb), 4, 100);

	/* and the rest at their deadline */
	PUMP_UNTIL(stats_of(&sb).silent_closed == N);
	for (i = 0; i < N; i++) {
		cr_assert(sock_closed(socks[i]), "socket %d of %d open", i, N);
		close(socks[i]);
	}
}
