/*
 * p4_wire.h - the wire protocol: every message that crosses a transport.
 *
 * One fixed 16-byte header starts every message; its length field frames
 * the byte stream (TCP) or the receive buffer (verbs). Bodies are fixed
 * width, little-endian, naturally aligned, with explicit padding, so the
 * wire layout is the C layout on every supported host (checked below).
 * Receivers never cast the stream: p4w_*_unpack() copy into an aligned
 * struct, convert byte order and validate every field they can check
 * without engine state; the engine validates the rest (PT index, op ids,
 * offsets) against its own limits before use.
 *
 * Types below P4W_T_FIRST are engine messages; types from P4W_T_FIRST on
 * belong to transports (handshake, emulated RDMA), carried on the same
 * stream and never shown to the engine.
 */
#ifndef P4_WIRE_H
#define P4_WIRE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_errno.h>

/*
 * The errors the unpack functions return. libfabric's fi_errno.h (1.17,
 * as Debian 12 ships it) lists these two but leaves them commented out;
 * define them the way it would, as the errno values (fi_strerror() knows
 * those).
 */
#ifndef FI_EBADMSG
#define FI_EBADMSG	EBADMSG
#endif
#ifndef FI_EPROTO
#define FI_EPROTO	EPROTO
#endif

/*
 * 2: offers are announced by a transport frame (P4W_T_OFFER_ANNOUNCE)
 * instead of a flag in the engine's header (version 1's P4W_F_OFFER).
 */
#define P4W_VERSION		2
#define P4W_MAGIC		0x50344631u	/* "P4F1" in the handshake */

/* Largest message a transport must accept: header + bodies + payload. */
#define P4W_MAX_MSG		(1u << 30)

enum p4w_type {
	/* sequenced requests: flow-controlled, matched in send order */
	P4W_PUT = 1,
	P4W_GET,
	P4W_ATOMIC,
	P4W_FETCH,
	P4W_SWAP,
	/* responses: never flow-controlled */
	P4W_ACK,		/* per-operation ack; ends every rendezvous */
	P4W_REPLY,		/* get / fetch / swap data */
	/* acceptance and flow control */
	P4W_SEQ_ACK,		/* only hdr.ack_seq matters */
	P4W_NACK,		/* seq n and later were not accepted: hold them */
	P4W_RESUME,		/* resend from seq n */
	P4W_TYPE_ENGINE_LAST = P4W_RESUME,

	/* transport messages */
	P4W_T_FIRST = 0x40,
	P4W_T_HELLO = P4W_T_FIRST,	/* connection handshake */
	P4W_T_HELLO_ACK,
	P4W_T_PULL_REQ,		/* emulated RDMA read: please send me ... */
	P4W_T_PULL_DATA,	/* ... here it is (a chunk) */
	P4W_T_PUSH_DATA,	/* emulated RDMA write into an exposed region */
	P4W_T_BYE,		/* orderly close */
	P4W_T_OFFER,		/* a rendezvous source's data, unasked */
	P4W_T_OFFER_ANNOUNCE,	/* the next message's source is offered */
	P4W_T_XPORT,		/* a layered transport's own message */
	P4W_TYPE_LAST = P4W_T_XPORT,
};

/* hdr.flags: the engine's; transports neither set nor read them */
#define P4W_F_ACK_SEQ	0x0001	/* hdr.ack_seq is valid */
#define P4W_F_ACK_NOW	0x0002	/* the initiator waits for this request's
				 * acceptance: acknowledge it without delay */

struct p4w_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t length;	/* whole message, header included */
	uint32_t seq;		/* sequenced requests: per-pair sequence */
	uint32_t ack_seq;	/* every sequenced message of the receiver
				 * below this was accepted by the sender */
};

/* Where an initiator exposed memory for the target to pull from or push to. */
struct p4w_cookie {
	uint64_t addr;
	uint64_t key;
	uint64_t length;
};

enum p4w_proto {
	P4W_PROTO_EAGER = 0,	/* payload follows the headers */
	P4W_PROTO_RDZV = 1,	/* a p4w_cookie follows: pull the payload */
};

/*
 * Request body (PUT, GET, ATOMIC, FETCH, SWAP). What follows it, in order:
 *   proto RDZV:        struct p4w_cookie of the source
 *   GET/FETCH/SWAP with P4W_RF_PUSH: struct p4w_cookie of the reply buffer
 *   proto EAGER:       rlength bytes of payload (GET: none); SWAP with
 *                      a compare operand (CSWAP*, MSWAP): rlength bytes of
 *                      data, then rlength bytes of compare values / masks
 */
struct p4w_req {
	uint64_t op_id;		/* initiator's operation handle */
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t hdr_data;
	uint64_t rlength;
	uint32_t pt_index;
	uint32_t uid;
	uint8_t ack_req;	/* enum p4e_ack_req */
	uint8_t atomic_op;	/* enum p4e_atomic_op */
	uint8_t atomic_type;	/* enum p4e_atomic_type */
	uint8_t proto;		/* enum p4w_proto */
	uint16_t rflags;	/* P4W_RF_* */
	uint16_t reserved;
};

#define P4W_RF_PUSH	0x0001	/* reply data is pushed to a cookie */
#define P4W_RF_HDR_DATA	0x0002	/* hdr_data is meaningful */

/* Response body (ACK, REPLY); REPLY data follows unless pushed. */
struct p4w_resp {
	uint64_t op_id;
	uint64_t mlength;
	uint64_t offset;	/* remote offset used at the target */
	uint8_t fail;		/* enum p4e_ni_fail */
	uint8_t list;		/* list that matched (enum p4e_list); an
				 * ACK may add P4E_RESP_NO_ACK (0x80,
				 * p4e.h): its entry has P4E_ME_ACK_DISABLE,
				 * so the initiator ends the put or atomic
				 * without an ACK event or ack count. No
				 * other bit; a REPLY never has it */
	uint8_t pushed;		/* REPLY: data went to the cookie */
	uint8_t reserved[5];
};

/* Flow control body (NACK, RESUME). */
struct p4w_fc {
	uint32_t seq;
	uint32_t flags;		/* P4W_FC_* (NACK only) */
};

/*
 * NACK flag: the target has room for headers but not for this payload:
 * resend from seq at once (no RESUME follows), eager puts to the same
 * portal as rendezvous puts, which leave only their header there.
 */
#define P4W_FC_AS_RDZV	0x0001

/* ---- transport messages ------------------------------------------------ */

#define P4W_ADDR_MAX	32	/* sockaddr_in6 fits */

/*
 * XPORT: the header, then up to P4W_XPORT_MAX bytes that belong to a
 * transport layered on the one carrying them (verbs bootstraps its queue
 * pairs over a TCP link: p4t.h, P4T_SEND_XPORT). The carrying transport
 * frames them and hands them to that transport; neither it nor the
 * engine reads them.
 */
#define P4W_XPORT_MAX	4096

/* HELLO / HELLO_ACK: who is calling, so one connection serves a pair. */
struct p4w_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t addrlen;
	uint64_t session;	/* changes when a process restarts */
	uint64_t auth_key;
	uint8_t addr[P4W_ADDR_MAX];	/* the caller's listening address */
};

/* PULL_REQ: send me [src.addr + offset, + length) for pull pull_id. */
struct p4w_pull_req {
	uint64_t pull_id;
	uint64_t offset;
	uint64_t length;
	struct p4w_cookie src;
};

/*
 * PULL_DATA / PUSH_DATA / OFFER: length bytes follow, to land at offset.
 * An OFFER is one whole chunk (offset 0, last, status 0) of the source
 * named by dst.
 *
 * Offers (p4t_send_offer) take three frames, back to back on the stream:
 *   OFFER_ANNOUNCE  this body alone (no data): dst names the rendezvous
 *                   source of the engine message that comes next, length
 *                   the bytes of it offered (offset 0, last, status 0);
 *   the engine's message, untouched;
 *   OFFER           the offered bytes, the same dst and length.
 * The receiving transport serves a pull of exactly [0, length) of dst
 * made while the engine handles the message from the OFFER's bytes (they
 * land straight in the pull's memory), and drops them otherwise. Nothing
 * of the offer is in the engine's header.
 */
struct p4w_data {
	uint64_t id;		/* PULL_DATA: pull_id; others: unused */
	uint64_t offset;
	uint64_t length;
	uint32_t last;		/* final chunk of this pull / push */
	int32_t status;		/* PULL_DATA: 0 or -FI_E* (then no data) */
	struct p4w_cookie dst;	/* PUSH_DATA: where; OFFER: whose */
};

_Static_assert(sizeof(struct p4w_hdr) == 16, "wire layout");
_Static_assert(sizeof(struct p4w_cookie) == 24, "wire layout");
_Static_assert(sizeof(struct p4w_req) == 56, "wire layout");
_Static_assert(sizeof(struct p4w_resp) == 32, "wire layout");
_Static_assert(sizeof(struct p4w_fc) == 8, "wire layout");
_Static_assert(sizeof(struct p4w_hello) == 56, "wire layout");
_Static_assert(sizeof(struct p4w_pull_req) == 48, "wire layout");
_Static_assert(sizeof(struct p4w_data) == 56, "wire layout");

/*
 * Pack functions write a message's fixed part into buf (which must hold
 * it) in wire byte order. Unpack functions read len bytes from buf (any
 * alignment), validate, and fill the host struct; they return 0 or
 * -FI_EBADMSG / -FI_EMSGSIZE / -FI_EPROTO (wrong version). They never read
 * past len. Reserved fields (and hello.addr past addrlen) are packed as
 * zero and refused when not zero. Fixed-size messages (ACK, SEQ_ACK, NACK,
 * RESUME, HELLO*, PULL_REQ, BYE) must have exactly their size in
 * hdr.length; a GET carries at most its reply cookie.
 */
void p4w_hdr_pack(void *buf, const struct p4w_hdr *hdr);
int p4w_hdr_unpack(const void *buf, size_t len, struct p4w_hdr *hdr);
bool p4w_type_is_seq(uint8_t type);
/* ACK and SEQ_ACK: what an initiator waits for to complete or free */
bool p4w_type_is_ack(uint8_t type);

void p4w_req_pack(void *buf, const struct p4w_req *req);
int p4w_req_unpack(const void *buf, size_t len, struct p4w_req *req);
void p4w_resp_pack(void *buf, const struct p4w_resp *resp);
int p4w_resp_unpack(const void *buf, size_t len, struct p4w_resp *resp);
void p4w_cookie_pack(void *buf, const struct p4w_cookie *cookie);
int p4w_cookie_unpack(const void *buf, size_t len, struct p4w_cookie *cookie);
void p4w_fc_pack(void *buf, const struct p4w_fc *fc);
int p4w_fc_unpack(const void *buf, size_t len, struct p4w_fc *fc);
void p4w_hello_pack(void *buf, const struct p4w_hello *hello);
int p4w_hello_unpack(const void *buf, size_t len, struct p4w_hello *hello);
void p4w_pull_req_pack(void *buf, const struct p4w_pull_req *req);
int p4w_pull_req_unpack(const void *buf, size_t len, struct p4w_pull_req *req);
void p4w_data_pack(void *buf, const struct p4w_data *data);
int p4w_data_unpack(const void *buf, size_t len, struct p4w_data *data);
/*
 * PULL_DATA / PUSH_DATA / OFFER: check an unpacked body against its
 * header. There is no whole-message parse for these (a receiver may read
 * the data that follows straight into place), so this is where
 * hdr->length must cover exactly the body and data->length bytes, a push
 * must land inside its dst cookie and an offer be a whole first chunk.
 * OFFER_ANNOUNCE: the body alone, announcing such an offer (1 to
 * dst.length bytes).
 */
int p4w_data_check(const struct p4w_hdr *hdr, const struct p4w_data *data);

/*
 * Split a whole engine request message (header already unpacked) into its
 * parts, checking that the lengths add up exactly to hdr->length. A
 * cookie's length must cover rlength. -FI_EINVAL if hdr is not a request
 * (p4w_resp_parse: not ACK/REPLY; p4w_data_check: not PULL/PUSH_DATA).
 */
struct p4w_req_parts {
	struct p4w_req req;
	bool has_src;			/* RDZV */
	struct p4w_cookie src;
	bool has_dst;			/* P4W_RF_PUSH */
	struct p4w_cookie dst;
	const uint8_t *payload;		/* EAGER: rlength bytes */
	size_t payload_len;
	const uint8_t *compare;		/* SWAP with compare: rlength bytes */
};

int p4w_req_parse(const struct p4w_hdr *hdr, const void *msg,
		  struct p4w_req_parts *parts);

/* Same for responses: REPLY data (unless pushed) follows the body. */
struct p4w_resp_parts {
	struct p4w_resp resp;
	const uint8_t *data;
	size_t data_len;
};

int p4w_resp_parse(const struct p4w_hdr *hdr, const void *msg,
		   struct p4w_resp_parts *parts);

#endif /* P4_WIRE_H */
