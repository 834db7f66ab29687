/*
 * hostile_peer.c - a raw-socket peer that attacks a live provider
 * endpoint (test/hostile/victim.c) over TCP with malformed and unexpected
 * wire input, one connection per case, and checks what the endpoint does:
 *
 *   CLOSE  it must close that connection (EOF or reset) within a bound;
 *   OPEN   it must tolerate the message (Portals semantics say drop or
 *          answer with a failure) and keep the connection open; where an
 *          answer is due, the answer must come and carry a failure.
 *
 * Well-formed pieces are built with the project's own wire packers
 * (p4_wire.h), then broken on purpose. Nothing here talks libfabric: the
 * victim's health (a good client keeps exchanging verified data with it
 * meanwhile) is checked by the victim and run.sh.
 *
 *   hostile_peer <victim-ip> <victim-port> [case ...]
 *   hostile_peer -l            list the cases
 *
 * Exit 0 when every case behaved as expected, 1 otherwise. Prints one
 * line per case and, last, "hostile_expect_closed N" (how many cases the
 * victim had to reject) for run.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "p4_wire.h"
#include "p4e.h"

#define HP_CLOSE_MS	15000	/* a rejection must come within this */
#define HP_OPEN_MS	1000	/* a tolerated message: still open after */
#define HP_ACK_MS	10000	/* an answer due must come within this */
#define HP_VICTIM_KEY	0x4b1dull	/* victim.c's window */
#define HP_VICTIM_LEN	4096

enum hp_expect {
	HP_CLOSE,
	HP_OPEN,
	HP_OPEN_ACK_FAIL,	/* open, and an ACK with fail != 0 arrives */
	HP_OPEN_PULL_REFUSED,	/* open, and PULL_DATA with status < 0 */
};

static struct sockaddr_in hp_victim;
static uint64_t hp_session = 0x686f7374696c6531ull;	/* "hostile1" */
/*
 * Our claimed listening address: 127.66.x.y port 1, a new one per
 * handshake. Nobody listens there, so a victim that tries to call back
 * gets a refusal, not some unrelated service.
 */
static uint16_t hp_fake_host = 1;
static uint32_t hp_rand_state = 12345;

static uint32_t hp_rand(void)
{
	/* xorshift: the "random" bytes are the same on every run */
	hp_rand_state ^= hp_rand_state << 13;
	hp_rand_state ^= hp_rand_state >> 17;
	hp_rand_state ^= hp_rand_state << 5;
	return hp_rand_state;
}

static uint64_t hp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int hp_connect(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;

	if (fd < 0) {
		perror("socket");
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&hp_victim, sizeof(hp_victim))) {
		perror("connect");
		close(fd);
		return -1;
	}
	return fd;
}

static bool hp_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;	/* the victim may close mid-write */
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * Reads until len bytes came (1), EOF or reset (0), or ms passed (-1).
 */
static int hp_read(int fd, void *buf, size_t len, int ms)
{
	uint8_t *p = buf;
	uint64_t end = hp_now_ms() + (uint64_t)ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int64_t left;

	while (len) {
		left = (int64_t)(end - hp_now_ms());
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
			return -1;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= (size_t)n;
	}
	return 1;
}

/* Whether the victim closed fd within ms, discarding what it sends. */
static bool hp_closed_within(int fd, int ms)
{
	uint8_t junk[4096];
	uint64_t end = hp_now_ms() + (uint64_t)ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t left;
	ssize_t n;

	for (;;) {
		left = (int64_t)(end - hp_now_ms());
		if (left <= 0)
			return false;
		if (poll(&pfd, 1, (int)left) == 0)
			return false;
		n = recv(fd, junk, sizeof(junk), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
	}
}

static void hp_hdr(uint8_t *buf, uint8_t type, uint32_t length, uint32_t seq)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
		.length = length,
		.seq = seq,
	};

	p4w_hdr_pack(buf, &hdr);
}

static size_t hp_hello(uint8_t *buf)
{
	struct sockaddr_in me = {
		.sin_family = AF_INET,
		.sin_port = htons(1),
		.sin_addr.s_addr = htonl(0x7f420000u | hp_fake_host),
	};
	struct p4w_hello hello = {
		.magic = P4W_MAGIC,
		.version = P4W_VERSION,
		.addrlen = sizeof(me),
		.session = hp_session,
	};

	memcpy(hello.addr, &me, sizeof(me));
	hp_hdr(buf, P4W_T_HELLO, sizeof(struct p4w_hdr) + sizeof(hello), 0);
	p4w_hello_pack(buf + sizeof(struct p4w_hdr), &hello);
	return sizeof(struct p4w_hdr) + sizeof(hello);
}

/*
 * A valid handshake: HELLO with a fresh session and claimed address (so
 * no case is taken for another's restart), then HELLO_ACK expected.
 */
static int hp_handshake(void)
{
	uint8_t buf[128], ack[sizeof(struct p4w_hdr) + sizeof(struct p4w_hello)];
	struct p4w_hdr hdr;
	size_t len;
	int fd;

	hp_session++;
	hp_fake_host++;
	fd = hp_connect();
	if (fd < 0)
		return -1;
	len = hp_hello(buf);
	if (!hp_write(fd, buf, len) ||
	    hp_read(fd, ack, sizeof(ack), HP_ACK_MS) != 1 ||
	    p4w_hdr_unpack(ack, sizeof(ack), &hdr) ||
	    hdr.type != P4W_T_HELLO_ACK) {
		fprintf(stderr, "hostile_peer: handshake failed\n");
		close(fd);
		return -1;
	}
	return fd;
}

static size_t hp_req(uint8_t *buf, uint8_t type, uint32_t seq,
		     const struct p4w_req *req, size_t payload)
{
	size_t len = sizeof(struct p4w_hdr) + sizeof(*req) + payload;

	hp_hdr(buf, type, (uint32_t)len, seq);
	p4w_req_pack(buf + sizeof(struct p4w_hdr), req);
	memset(buf + sizeof(struct p4w_hdr) + sizeof(*req), 0xa5, payload);
	return len;
}

/* ---- the cases ------------------------------------------------------- */

/* Each writes its attack on a fresh socket and returns it (-1: failed). */
typedef int (*hp_case_func_t)(void);

static int hp_pre_random(void)
{
	uint8_t buf[4096];
	size_t i;
	int fd = hp_connect();

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)hp_rand();
	buf[1] = P4W_T_HELLO;	/* even one that looks half right */
	if (fd >= 0)
		hp_write(fd, buf, sizeof(buf));
	return fd;
}

static int hp_pre_truncated(void)
{
	uint8_t buf[128];
	int fd = hp_connect();

	hp_hello(buf);
	if (fd >= 0) {
		hp_write(fd, buf, 10);
		shutdown(fd, SHUT_WR);	/* half a header, then EOF */
	}
	return fd;
}

static int hp_pre_mutate(size_t off, uint8_t val)
{
	uint8_t buf[128];
	size_t len = hp_hello(buf);
	int fd = hp_connect();

	buf[off] = val;
	if (fd >= 0)
		hp_write(fd, buf, len);
	return fd;
}

static int hp_pre_version(void)
{
	return hp_pre_mutate(0, 7);	/* header version */
}

static int hp_pre_magic(void)
{
	return hp_pre_mutate(sizeof(struct p4w_hdr), 0);
}

static int hp_pre_hello_version(void)
{
	/* hello.version (after magic) */
	return hp_pre_mutate(sizeof(struct p4w_hdr) + 4, 9);
}

static int hp_pre_huge(void)
{
	uint8_t buf[128];
	size_t len = hp_hello(buf);
	int fd = hp_connect();

	memset(buf + 4, 0xff, 4);	/* length 4 GiB - 1 */
	if (fd >= 0)
		hp_write(fd, buf, len);
	return fd;
}

static int hp_pre_auth(void)
{
	/* auth_key at hello offset 16 */
	return hp_pre_mutate(sizeof(struct p4w_hdr) + 16, 0x5a);
}

static int hp_pre_addrlen(void)
{
	/* hello.addrlen 200 > P4W_ADDR_MAX */
	return hp_pre_mutate(sizeof(struct p4w_hdr) + 6, 200);
}

static int hp_pre_silent(void)
{
	return hp_connect();	/* says nothing: the hello timer ends it */
}

static int hp_post_bytes(const void *msg, size_t len)
{
	int fd = hp_handshake();

	if (fd >= 0)
		hp_write(fd, msg, len);
	return fd;
}

static int hp_post_short_len(void)
{
	uint8_t buf[16];

	hp_hdr(buf, P4W_PUT, 8, 0);	/* shorter than the header itself */
	return hp_post_bytes(buf, sizeof(buf));
}

static int hp_post_version(void)
{
	uint8_t buf[256];
	struct p4w_req req = { .pt_index = 0, .rlength = 8 };
	size_t len = hp_req(buf, P4W_PUT, 0, &req, 8);

	buf[0] = P4W_VERSION + 1;
	return hp_post_bytes(buf, len);
}

static int hp_post_unknown_type(void)
{
	uint8_t buf[64];

	hp_hdr(buf, 0x20, 64, 0);
	memset(buf + 16, 0, 48);
	return hp_post_bytes(buf, sizeof(buf));
}

static int hp_post_transport_type(void)
{
	uint8_t buf[64];

	hp_hdr(buf, 0x7f, 64, 0);	/* past every transport type */
	memset(buf + 16, 0, 48);
	return hp_post_bytes(buf, sizeof(buf));
}

static int hp_post_huge(void)
{
	uint8_t buf[256];
	struct p4w_req req = { .pt_index = 0, .rlength = 8 };
	size_t len = hp_req(buf, P4W_PUT, 0, &req, 8);

	memcpy(buf + 4, &(uint32_t){ htole32(0x7ffffff0u) }, 4);
	return hp_post_bytes(buf, len);
}

static int hp_post_rlength(void)
{
	uint8_t buf[256];
	struct p4w_req req = { .pt_index = 0, .rlength = 1 << 20 };
	/* claims 1 MiB of payload, carries 64 bytes: lengths do not add up */
	size_t len = hp_req(buf, P4W_PUT, 0, &req, 64);

	return hp_post_bytes(buf, len);
}

static int hp_post_rlength_huge(void)
{
	uint8_t buf[256];
	struct p4w_req req = {
		.pt_index = 0,
		.rlength = UINT64_MAX - 8,	/* wraps a careless sum */
		.proto = P4W_PROTO_RDZV,
	};
	struct p4w_cookie ck = { .key = 1, .length = UINT64_MAX };
	size_t len = hp_req(buf, P4W_PUT, 0, &req, sizeof(ck));

	p4w_cookie_pack(buf + len - sizeof(ck), &ck);
	return hp_post_bytes(buf, len);
}

static int hp_post_bad_enum(void)
{
	uint8_t buf[256];
	struct p4w_req req = { .pt_index = 0, .rlength = 8, .ack_req = 99 };
	size_t len = hp_req(buf, P4W_PUT, 0, &req, 8);

	return hp_post_bytes(buf, len);
}

static int hp_post_garbage(void)
{
	uint8_t buf[4096];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)hp_rand();
	buf[0] = P4W_VERSION;	/* get past the first check at least */
	return hp_post_bytes(buf, sizeof(buf));
}

static int hp_post_bad_pt(void)
{
	uint8_t buf[256];
	struct p4w_req req = {
		.op_id = 0x1234,
		.pt_index = 4000,	/* no such portal table entry */
		.rlength = 8,
		.ack_req = P4E_ACK_REQ,
	};
	size_t len = hp_req(buf, P4W_PUT, 0, &req, 8);

	return hp_post_bytes(buf, len);
}

/* A PUT to the RMA portal (index 2): match bits are the MR key. */
static int hp_post_rma(uint64_t key, uint64_t offset, uint64_t rlength)
{
	uint8_t buf[256];
	struct p4w_req req = {
		.op_id = 0x4321,
		.match_bits = key,
		.remote_offset = offset,
		.pt_index = 2,
		.rlength = rlength,
		.uid = (uint32_t)getuid(),	/* the victim's: only bounds fail */
		.ack_req = P4E_ACK_REQ,
	};
	size_t len = hp_req(buf, P4W_PUT, 0, &req, (size_t)rlength);

	return hp_post_bytes(buf, len);
}

static int hp_post_rma_bad_key(void)
{
	return hp_post_rma(0x6b657921, 0, 8);	/* no MR has this key */
}

static int hp_post_rma_past_end(void)
{
	return hp_post_rma(HP_VICTIM_KEY, HP_VICTIM_LEN - 6, 64);
}

static int hp_post_rma_wrap(void)
{
	return hp_post_rma(HP_VICTIM_KEY, UINT64_MAX - 4, 8);
}

static int hp_post_resp(uint8_t type)
{
	uint8_t buf[128];
	struct p4w_resp resp = { .op_id = 0xdead00000007ull, .mlength = 16 };
	size_t len = sizeof(struct p4w_hdr) + sizeof(resp) +
		     (type == P4W_REPLY ? 16 : 0);

	hp_hdr(buf, type, (uint32_t)len, 0);
	p4w_resp_pack(buf + sizeof(struct p4w_hdr), &resp);
	memset(buf + sizeof(struct p4w_hdr) + sizeof(resp), 0xee, 16);
	return hp_post_bytes(buf, len);
}

static int hp_post_ack_unknown(void)
{
	return hp_post_resp(P4W_ACK);
}

static int hp_post_reply_unknown(void)
{
	return hp_post_resp(P4W_REPLY);
}

static int hp_post_fc(uint8_t type, uint32_t seq, uint16_t flags)
{
	uint8_t buf[32];
	struct p4w_fc fc = { .seq = seq };
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
		.flags = flags,
		.length = sizeof(buf) - 8,
		.ack_seq = 0x70000000,
	};

	p4w_hdr_pack(buf, &hdr);
	p4w_fc_pack(buf + sizeof(struct p4w_hdr), &fc);
	return hp_post_bytes(buf, hdr.length);
}

static int hp_post_nack_unknown(void)
{
	return hp_post_fc(P4W_NACK, 777, P4W_F_ACK_SEQ);
}

static int hp_post_resume_unknown(void)
{
	return hp_post_fc(P4W_RESUME, 0x7fffffff, 0);
}

static int hp_post_pull_data_unknown(void)
{
	uint8_t buf[256];
	struct p4w_data data = { .id = 0xbad0bad, .length = 64, .last = 1 };
	size_t len = sizeof(struct p4w_hdr) + sizeof(data) + 64;

	hp_hdr(buf, P4W_T_PULL_DATA, (uint32_t)len, 0);
	p4w_data_pack(buf + sizeof(struct p4w_hdr), &data);
	memset(buf + len - 64, 0x11, 64);
	return hp_post_bytes(buf, len);
}

static int hp_post_push_bad_key(void)
{
	uint8_t buf[256];
	struct p4w_data data = {
		.length = 64,
		.last = 1,
		.dst = { .key = 0x1111222233334444ull, .length = 64 },
	};
	size_t len = sizeof(struct p4w_hdr) + sizeof(data) + 64;

	hp_hdr(buf, P4W_T_PUSH_DATA, (uint32_t)len, 0);
	p4w_data_pack(buf + sizeof(struct p4w_hdr), &data);
	memset(buf + len - 64, 0x22, 64);
	return hp_post_bytes(buf, len);
}

static int hp_post_pull_req(uint64_t offset)
{
	uint8_t buf[128];
	struct p4w_pull_req req = {
		.pull_id = 99,
		.offset = offset,
		.length = 4096,
		.src = { .key = 0x5555666677778888ull, .length = 4096 },
	};
	size_t len = sizeof(struct p4w_hdr) + sizeof(req);

	hp_hdr(buf, P4W_T_PULL_REQ, (uint32_t)len, 0);
	p4w_pull_req_pack(buf + sizeof(struct p4w_hdr), &req);
	return hp_post_bytes(buf, len);
}

/* well formed, but the key is nobody's: refused, memory untouched */
static int hp_post_pull_req_bad_key(void)
{
	return hp_post_pull_req(0);
}

/* asks past the end of its own cookie: malformed on its face */
static int hp_post_pull_req_past_end(void)
{
	return hp_post_pull_req(1 << 20);
}

static int hp_post_second_hello(void)
{
	uint8_t buf[128];
	size_t len = hp_hello(buf);

	return hp_post_bytes(buf, len);	/* a HELLO on a live link */
}

static int hp_post_unexpected_rdzv(void)
{
	uint8_t buf[256];
	struct p4w_req req = {
		.op_id = 0x77,
		.match_bits = 0xdeadbeef00000000ull,	/* nobody posts it */
		.pt_index = 0,
		.rlength = 1 << 20,
		.proto = P4W_PROTO_RDZV,
	};
	struct p4w_cookie ck = { .key = 0xabcdef, .length = 1 << 20 };
	size_t len = hp_req(buf, P4W_PUT, 0, &req, sizeof(ck));

	p4w_cookie_pack(buf + len - sizeof(ck), &ck);
	return hp_post_bytes(buf, len);
}

/* An OFFER of 64 bytes of the source ck (what follows an offered PUT). */
static size_t hp_offer(uint8_t *buf, const struct p4w_cookie *ck)
{
	struct p4w_data data = { .length = 64, .last = 1, .dst = *ck };
	size_t len = sizeof(struct p4w_hdr) + sizeof(data) + 64;

	hp_hdr(buf, P4W_T_OFFER, (uint32_t)len, 0);
	p4w_data_pack(buf + sizeof(struct p4w_hdr), &data);
	memset(buf + len - 64, 0x33, 64);
	return len;
}

/*
 * A rendezvous PUT of 64 bytes nobody receives, announced as offered: an
 * OFFER_ANNOUNCE of 64 bytes of ck, then the PUT (its OFFER is next).
 */
static size_t hp_offered_put(uint8_t *buf, const struct p4w_cookie *ck)
{
	struct p4w_data data = { .length = 64, .last = 1, .dst = *ck };
	struct p4w_req req = {
		.op_id = 0x78,
		.match_bits = 0xdeadbeef00000001ull,	/* nobody posts it */
		.rlength = 64,
		.proto = P4W_PROTO_RDZV,
	};
	size_t alen = sizeof(struct p4w_hdr) + sizeof(data), len;

	hp_hdr(buf, P4W_T_OFFER_ANNOUNCE, (uint32_t)alen, 0);
	p4w_data_pack(buf + sizeof(struct p4w_hdr), &data);
	len = hp_req(buf + alen, P4W_PUT, 0, &req, sizeof(*ck));
	p4w_cookie_pack(buf + alen + len - sizeof(*ck), ck);
	return alen + len;
}

static int hp_post_offer_unasked(void)
{
	struct p4w_cookie ck = { .key = 0xabcdef, .length = 64 };
	uint8_t buf[256];

	return hp_post_bytes(buf, hp_offer(buf, &ck));
}

static int hp_post_offer_missing(void)
{
	struct p4w_cookie ck = { .key = 0xabcdef, .length = 64 };
	uint8_t buf[256];
	size_t len = hp_offered_put(buf, &ck);

	hp_hdr(buf + len, P4W_SEQ_ACK, sizeof(struct p4w_hdr), 0);
	return hp_post_bytes(buf, len + sizeof(struct p4w_hdr));
}

/* the OFFER that follows is not the one announced (another source) */
static int hp_post_offer_mismatch(void)
{
	struct p4w_cookie ck = { .key = 0xabcdef, .length = 64 };
	uint8_t buf[512];
	size_t len = hp_offered_put(buf, &ck);

	ck.key++;
	len += hp_offer(buf + len, &ck);
	return hp_post_bytes(buf, len);
}

/* a layered transport's record (verbs' bootstrap) to an endpoint that
 * has none layered on its TCP: malformed, never shown to the engine */
static int hp_post_xport_unlayered(void)
{
	uint8_t buf[sizeof(struct p4w_hdr) + 40];

	hp_hdr(buf, P4W_T_XPORT, sizeof(buf), 0);
	memset(buf + sizeof(struct p4w_hdr), 0x62, 40);
	return hp_post_bytes(buf, sizeof(buf));
}

static int hp_post_offer_unexpected(void)
{
	struct p4w_cookie ck = { .key = 0xabcdef, .length = 64 };
	uint8_t buf[512];
	size_t len = hp_offered_put(buf, &ck);

	len += hp_offer(buf + len, &ck);
	return hp_post_bytes(buf, len);
}

struct hp_case {
	const char *name;
	hp_case_func_t run;
	enum hp_expect expect;
	const char *what;
};

static const struct hp_case hp_cases[] = {
	{ "pre_random", hp_pre_random, HP_CLOSE, "4 KiB of random bytes" },
	{ "pre_truncated", hp_pre_truncated, HP_CLOSE,
	  "10 bytes of a HELLO, then EOF" },
	{ "pre_version", hp_pre_version, HP_CLOSE, "header version 7" },
	{ "pre_magic", hp_pre_magic, HP_CLOSE, "HELLO with a wrong magic" },
	{ "pre_hello_version", hp_pre_hello_version, HP_CLOSE,
	  "HELLO protocol version 9" },
	{ "pre_huge", hp_pre_huge, HP_CLOSE, "HELLO claiming 4 GiB" },
	{ "pre_auth", hp_pre_auth, HP_CLOSE, "wrong auth_key" },
	{ "pre_addrlen", hp_pre_addrlen, HP_CLOSE, "HELLO addrlen 200" },
	{ "pre_silent", hp_pre_silent, HP_CLOSE,
	  "connects and says nothing" },
	{ "short_len", hp_post_short_len, HP_CLOSE,
	  "header length 8 (< header)" },
	{ "version", hp_post_version, HP_CLOSE, "PUT with the next version" },
	{ "unknown_type", hp_post_unknown_type, HP_CLOSE, "type 0x20" },
	{ "transport_type", hp_post_transport_type, HP_CLOSE, "type 0x7f" },
	{ "huge_len", hp_post_huge, HP_CLOSE, "PUT claiming 2 GiB" },
	{ "rlength", hp_post_rlength, HP_CLOSE,
	  "rlength 1 MiB, 64 bytes sent" },
	{ "rlength_huge", hp_post_rlength_huge, HP_CLOSE,
	  "rendezvous rlength 2^64-9" },
	{ "bad_enum", hp_post_bad_enum, HP_CLOSE, "ack_req 99" },
	{ "garbage", hp_post_garbage, HP_CLOSE,
	  "valid handshake, then 4 KiB of random bytes" },
	{ "pull_data_unknown", hp_post_pull_data_unknown, HP_CLOSE,
	  "PULL_DATA for a pull that does not exist" },
	{ "push_bad_key", hp_post_push_bad_key, HP_CLOSE,
	  "PUSH_DATA to a key nobody exposed" },
	{ "pull_past_end", hp_post_pull_req_past_end, HP_CLOSE,
	  "PULL_REQ past the end of its own cookie" },
	{ "second_hello", hp_post_second_hello, HP_CLOSE,
	  "HELLO on an established link" },
	{ "offer_unasked", hp_post_offer_unasked, HP_CLOSE,
	  "OFFER with no message announcing it" },
	{ "offer_missing", hp_post_offer_missing, HP_CLOSE,
	  "an offered PUT, then no OFFER" },
	{ "offer_mismatch", hp_post_offer_mismatch, HP_CLOSE,
	  "an offered PUT, then an OFFER of another source" },
	{ "xport_unlayered", hp_post_xport_unlayered, HP_CLOSE,
	  "a layered transport's record, nothing layered here" },
	{ "bad_pt", hp_post_bad_pt, HP_OPEN_ACK_FAIL,
	  "PUT to PT index 4000 (ack: dropped)" },
	{ "rma_bad_key", hp_post_rma_bad_key, HP_OPEN_ACK_FAIL,
	  "RMA PUT with a key nobody registered" },
	{ "rma_past_end", hp_post_rma_past_end, HP_OPEN_ACK_FAIL,
	  "RMA PUT of 64 B at 4090 into a 4 KiB window" },
	{ "rma_wrap", hp_post_rma_wrap, HP_OPEN_ACK_FAIL,
	  "RMA PUT into the window at offset 2^64-5" },
	{ "pull_req_bad_key", hp_post_pull_req_bad_key, HP_OPEN_PULL_REFUSED,
	  "PULL_REQ with a key nobody exposed" },
	{ "ack_unknown", hp_post_ack_unknown, HP_OPEN,
	  "ACK for an operation that does not exist" },
	{ "reply_unknown", hp_post_reply_unknown, HP_OPEN,
	  "REPLY for an operation that does not exist" },
	{ "nack_unknown", hp_post_nack_unknown, HP_OPEN,
	  "NACK and ack_seq for sequences never sent" },
	{ "resume_unknown", hp_post_resume_unknown, HP_OPEN,
	  "RESUME from a sequence never sent" },
	{ "unexpected_rdzv", hp_post_unexpected_rdzv, HP_OPEN,
	  "a rendezvous PUT nobody receives" },
	{ "offer_unexpected", hp_post_offer_unexpected, HP_OPEN,
	  "an offered rendezvous PUT nobody receives (dropped)" },
};

#define HP_NCASES (sizeof(hp_cases) / sizeof(hp_cases[0]))

/* Wait for one message of type on fd (skipping others); its body in body. */
static bool hp_wait_msg(int fd, uint8_t type, void *body, size_t body_len)
{
	uint8_t head[sizeof(struct p4w_hdr)], skip[4096];
	uint64_t end = hp_now_ms() + HP_ACK_MS;
	struct p4w_hdr hdr;
	size_t rest;
	int64_t left;

	for (;;) {
		left = (int64_t)(end - hp_now_ms());
		if (left <= 0 || hp_read(fd, head, sizeof(head), (int)left) != 1 ||
		    p4w_hdr_unpack(head, sizeof(head), &hdr))
			return false;
		rest = hdr.length - sizeof(head);
		if (rest > sizeof(skip))
			return false;
		if (rest && hp_read(fd, skip, rest, HP_ACK_MS) != 1)
			return false;
		if (hdr.type == type && rest >= body_len) {
			memcpy(body, skip, body_len);
			return true;
		}
	}
}

static bool hp_check_open(int fd, enum hp_expect expect, char *why,
			  size_t whylen)
{
	uint8_t body[64];
	struct p4w_resp resp;
	struct p4w_data data;

	if (expect == HP_OPEN_ACK_FAIL) {
		if (!hp_wait_msg(fd, P4W_ACK, body, sizeof(resp)) ||
		    p4w_resp_unpack(body, sizeof(resp), &resp)) {
			snprintf(why, whylen, "no ACK came back");
			return false;
		}
		if (resp.fail == P4E_NI_OK) {
			snprintf(why, whylen, "ACK reported success");
			return false;
		}
		snprintf(why, whylen, "ACK fail %u, ", resp.fail);
	} else if (expect == HP_OPEN_PULL_REFUSED) {
		if (!hp_wait_msg(fd, P4W_T_PULL_DATA, body, sizeof(data)) ||
		    p4w_data_unpack(body, sizeof(data), &data)) {
			snprintf(why, whylen, "no PULL_DATA came back");
			return false;
		}
		if (data.status >= 0 || data.length) {
			snprintf(why, whylen, "pull not refused (status %d)",
				 data.status);
			return false;
		}
		snprintf(why, whylen, "pull refused %d, ", data.status);
	} else {
		why[0] = '\0';
	}
	if (hp_closed_within(fd, HP_OPEN_MS)) {
		snprintf(why + strlen(why), whylen - strlen(why),
			 "but the connection was closed");
		return false;
	}
	snprintf(why + strlen(why), whylen - strlen(why), "still open");
	return true;
}

static bool hp_run(const struct hp_case *c)
{
	char why[160];
	uint64_t t0 = hp_now_ms();
	bool ok;
	int fd;

	fd = c->run();
	if (fd < 0) {
		printf("FAIL %-18s %s: could not set up\n", c->name, c->what);
		return false;
	}
	if (c->expect == HP_CLOSE) {
		ok = hp_closed_within(fd, HP_CLOSE_MS);
		snprintf(why, sizeof(why), ok ? "closed after %llu ms" :
			 "still open after %llu ms",
			 (unsigned long long)(hp_now_ms() - t0));
	} else {
		ok = hp_check_open(fd, c->expect, why, sizeof(why));
	}
	close(fd);
	printf("%s %-18s %s: %s\n", ok ? "ok  " : "FAIL", c->name, c->what,
	       why);
	fflush(stdout);
	return ok;
}

int main(int argc, char **argv)
{
	unsigned long port;
	size_t i, nclose = 0;
	int a, failed = 0;
	bool any;

	if (argc == 2 && !strcmp(argv[1], "-l")) {
		for (i = 0; i < HP_NCASES; i++)
			printf("%-18s %s\n", hp_cases[i].name, hp_cases[i].what);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s <victim-ip> <victim-port> "
			"[case ...] | -l\n", argv[0]);
		return 2;
	}
	hp_victim.sin_family = AF_INET;
	port = strtoul(argv[2], NULL, 10);
	if (inet_pton(AF_INET, argv[1], &hp_victim.sin_addr) != 1 ||
	    !port || port > 65535) {
		fprintf(stderr, "%s: bad address %s %s\n", argv[0], argv[1],
			argv[2]);
		return 2;
	}
	hp_victim.sin_port = htons((uint16_t)port);
	for (i = 0; i < HP_NCASES; i++) {
		any = argc == 3;
		for (a = 3; a < argc && !any; a++)
			any = !strcmp(argv[a], hp_cases[i].name);
		if (!any)
			continue;
		if (!hp_run(&hp_cases[i]))
			failed++;
		if (hp_cases[i].expect == HP_CLOSE)
			nclose++;
	}
	printf("hostile_expect_closed %zu\n", nclose);
	printf("hostile_failed %d\n", failed);
	return failed ? 1 : 0;
}
