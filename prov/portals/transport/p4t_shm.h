/*
 * p4t_shm.h - the shared-memory transport: what it guarantees beyond
 * p4t.h, its limits, and the hooks tests and FI_PORTALS_STATS use. It is
 * reached like any other transport, through p4t_shm_ops (p4t.h); its
 * internals are in p4t_shm_priv.h.
 *
 * Addresses: those of the network transport beside it (struct
 * sockaddr_in or sockaddr_in6, exact size), cfg.addr being the network
 * iface's name (required; port 0 is refused). getname returns it stamped
 * with this process's host token (p4u_addr.h); links are keyed by the
 * cleared form. The iface listens on a Unix-domain socket in the abstract
 * namespace named "portals-shm/<euid>/<ip>/<port>" of the cleared
 * address: nothing in the file system, gone with the process. A second
 * iface on the same address gets -FI_EADDRINUSE.
 *
 * Reachability (conn_get): -FI_EHOSTUNREACH at once, with nothing left
 * behind, for an address whose token is another host's, our own address
 * (the network transport's self link serves it), an address nobody
 * listens on, or a listener whose process has another euid, is not
 * visible in our PID namespace, or lives in another PID or user
 * namespace (SO_PEERCRED and /proc/<pid>/ns). The acceptor checks the
 * same facts of the connector, so both ends choose alike. A full backlog
 * (EAGAIN) is not a refusal: the connect is retried (P4T_SHM_RETRY_*_MS)
 * until connect_retry_ms (else peer_timeout_ms) after conn_get.
 *
 * Links: the connector creates the link's segment (memfd_create, sealed
 * size, mapped shared) and sends HELLO (its stamped address, pid,
 * auth_key, session, the segment, its iface's eventfd and doorbell
 * page with the link's slot in it, SCM_RIGHTS)
 * on the connection, which stays open for the link's lifetime: the
 * peer's exit, kill -9 included, is seen as EOF. The link carries
 * messages at once: they wait in the ring until the acceptor maps it.
 * The acceptor checks magic, version, auth_key and credentials, maps the
 * segment, makes conn_new and answers HELLO_ACK (its session, pid,
 * eventfd, doorbell page and slot), after an INFO first in its ring
 * (whether it can read the connector's memory). Each end refuses a peer's
 * wake-up descriptor that is not non-blocking (a HELLO with it is refused,
 * a HELLO_ACK fails the link as malformed): progress writes it whenever
 * the peer asks, and a blocking one could stop it there; so is a doorbell
 * page that is not a sealed file of one page, or a slot past
 * P4T_SHM_BELLS. A refusal (auth_key, conn_new) closes the connection and
 * the connector's link fails with -FI_ECONNREFUSED.
 * When both ends connect at once, the link made by the end with the
 * lower address (bytes of the cleared sockaddr; IPv4 before IPv6) is
 * kept: the other end's HELLO is answered with BYE, unread, and that end
 * moves what it wrote into its ring, then its queue, into the kept link,
 * whole and in order. A HELLO
 * from the address of a link with another session (the peer restarted)
 * fails the old link (conn_failed) before conn_new announces the new.
 *
 * Segment: a header page (magic, sizes) with the control words of two
 * rings, each on a cache line of its own (tail: producer; head: consumer;
 * armed: the consumer sleeps; space: the producer waits for room), then
 * the rings' data, P4T_SHM_RING bytes each (power of two), one per
 * direction. Single producer, single consumer, acquire / release on
 * head and tail, no system call. Records are 64-byte aligned and never
 * wrap (a pad record fills the end); a frame larger than
 * P4T_SHM_FRAG_MAX is cut into records and reassembled into one buffer;
 * a frame in one record is handed to recv in place, in the ring.
 *
 * Reading: progress reads every link's ring while there are at most
 * P4T_SHM_BELL_LINKS links. With more, each process has a doorbell page
 * (struct p4t_shm_inbox, a sealed memfd handed over in HELLO and HELLO_ACK
 * with the slot of the link): a producer sets its link's bit after it
 * published records, and a call reads only the rings whose bit it took (an
 * atomic AND of each word with bits set), the links that are not up yet or
 * have no slot (past P4T_SHM_BELLS), those a call left records in, and for
 * P4T_SHM_BELL_HOT calls those that brought records (their bits left set,
 * so an active peer pays no bell, which costs a cache line transfer per
 * message); every P4T_SHM_BELL_FULL-th call reads all, so a peer that
 * clears bits it does not own delays the others by no more than that.
 * Links are served in turn: a link that fills each call's budget does not
 * keep the others unread.
 *
 * Wake-ups: wait_fd is an epoll set of the listener, the links' sockets,
 * an eventfd for the iface's own deferred work and the eventfd peers
 * write. wait_arm sets each link's armed word, then looks at the rings
 * again (> 0: work is there); a producer that finds its consumer armed
 * clears the word and writes the consumer's eventfd: the only system
 * call of the data path, and only towards a sleeping consumer. An owner
 * that polls wait_fd without wait_arm sees arrivals only when it calls
 * progress. A producer with a queue waiting for room arms the ring's
 * space word the same way in wait_arm; the consumer wakes it.
 *
 * Sends: max_msg P4T_SHM_MAX_MSG and max_inline P4T_SHM_MAX_INLINE, as
 * tcp. With nothing queued the message is written into the ring at once
 * (P4T_DONE; with op_ctx on our link before the peer's HELLO_ACK,
 * P4T_QUEUED: send_done when the ACK comes, an error if the link fails
 * first, as tcp's pipelined handshake). What does not fit is queued in
 * order on the link, copied (P4T_DONE) when op_ctx is NULL or it is at
 * most max_inline, else referenced (P4T_QUEUED, send_done when it is in
 * the ring). Requests
 * (P4T_SEND_SEQ) get -FI_EAGAIN while more than the queue limit
 * (P4T_SHM_QUEUE_LIMIT) is queued; others are never refused. P4T_SEND_BATCH
 * is written at once; flush has nothing to do. P4T_SEND_XPORT: -FI_EINVAL.
 * owes: a queue, or bytes of ours in a ring the peer has not read.
 *
 * RMA (attr.rma_native false: the engine's protocol is unchanged). The
 * owner of an exposure checks every request against its live exposures
 * (key = pool handle ^ salt, the link, the access, the range) before any
 * byte moves; refusals complete the pull or push with -FI_EACCES or
 * -FI_EINVAL, memory untouched. A range outside the cookie's length is
 * -FI_EINVAL without traffic. Cross-memory attach only ever reads, into
 * memory of the process that copies: a pull asks (PULL_REQ), the owner
 * answers with its checked pieces (PULL_GRANT), the puller reads them
 * with process_vm_readv, from the back; the owner also streams the bytes
 * through the ring from the front (PULL_DATA) while it progresses, one
 * pull per link at a time, until the puller, where the two meet, says
 * PULL_STOP: two cores copy, each byte once, and an owner that stops
 * progressing leaves the rest to the puller (p4t_shm_coop.c); a push
 * sends its pieces (PUSH_REQ), the owner
 * checks them and reads them with process_vm_readv into its exposure,
 * then answers PUSH_DONE. Either reader reads at most P4T_SHM_CMA_STEP
 * bytes per progress call (pulls streamed from the front share it, and
 * only P4T_SHM_COOP_STEP while the ring brings their chunks), so a large
 * copy does not hold the worker, and with it every other link, for
 * milliseconds; but a process that did not progress for
 * P4T_SHM_CMA_STARVED_NS (descheduled: more processes than cores) reads
 * up to P4T_SHM_CMA_STARVED_STEP per call, or it would move a step per
 * scheduler round while the sender spins waiting for it; an exposure
 * unexposed while a push is being read, or a pull streamed, refuses the
 * rest (-FI_EACCES at the other end). No
 * process writes into another, so nothing a late copy does can land in
 * memory its owner has taken back. A pull
 * granted just before the owner unexposes may still read the old bytes
 * (it writes nothing there). Fallback: where the kernel refuses
 * (EPERM: Yama, another user; ENOSYS), each end learns it per link from
 * a probe at the handshake (reading the peer's session word) or at the
 * first refusal, and from then on copies through the ring as tcp's
 * emulated RDMA does (PULL_DATA chunks then PULL_DONE; PUSH_DATA chunks,
 * in order with the link's messages, then PUSH_DONE). A push the owner
 * cannot read although its probe could is answered "use the ring" and
 * sent again as data (only if the kernel's policy changed after the
 * handshake; messages sent after that push may then arrive before its
 * data). FI_PORTALS_SHM_CMA=0 in the environment at iface_open, or
 * p4t_shm_set_cma(iface, false) before links are made, forces the ring.
 *
 * Failures: EOF or an error on a link's socket, BYE, a missing HELLO_ACK
 * (peer_timeout_ms), malformed records: what the peer wrote before it
 * went is still read and delivered, then every queued send completes
 * (send_done -FI_ECONNABORTED for P4T_QUEUED ones), every pull and push
 * with rma_done(-FI_ECONNABORTED), then conn_failed (-FI_ECONNREFUSED for
 * a link never acknowledged, -FI_ECONNRESET for a peer that went away,
 * -FI_ETIMEDOUT for a timeout); the segment is unmapped when the link is
 * freed at the end of that progress call. A killed peer is seen when
 * progress next asks the sockets once the kernel closed its own: within
 * P4T_SHM_IDLE_EPOLL_NS while the rings are idle (a dead peer's are),
 * else within 16 calls. While a link is being made, and after a sleep,
 * the sockets are asked at every call; a spinning process with idle
 * rings makes no system call in between.
 *
 * Deadlines on cfg.timers only: connect retries, the HELLO_ACK (and the
 * kept link after a collision) within peer_timeout_ms, an accepted
 * connection's HELLO within P4T_SHM_HELLO_TIMEOUT_MS (or peer_timeout_ms
 * if shorter). At most P4T_SHM_PENDING_MAX accepted connections wait
 * for their HELLO; a newer one closes the oldest, so silent connections
 * cannot take all of the process's descriptors.
 */
#ifndef P4T_SHM_H
#define P4T_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p4t.h"

#define P4T_SHM_MAX_INLINE	4096	/* copied when queued */
#define P4T_SHM_IDLE_EPOLL_NS	100000	/* idle rings: sockets this often */
#define P4T_SHM_MAX_MSG		((size_t)8 << 20)	/* as tcp */
#define P4T_SHM_RING		((size_t)256 << 10)	/* per direction */
/* bytes per record: a quarter of the ring, plus room for the headers of
 * an eager message of 64 KiB (FI_PORTALS_SHM_EAGER_SIZE's default), so
 * that it goes in one record and is handed over in place */
#define P4T_SHM_FRAG_MAX	(P4T_SHM_RING / 4 + 4096)
#define P4T_SHM_QUEUE_LIMIT	((size_t)4 << 20)	/* requests: EAGAIN */
#define P4T_SHM_CMA_STEP	((size_t)512 << 10)	/* CMA read per call */
#define P4T_SHM_COOP_STEP	((size_t)64 << 10)	/* ... while streamed */
#define P4T_SHM_COOP_PATIENCE	16	/* calls: "streamed" after a chunk */
/* a process kept this long from progressing reads more per call */
#define P4T_SHM_CMA_STARVED_NS	1000000
#define P4T_SHM_CMA_STARVED_STEP ((size_t)4 << 20)
#define P4T_SHM_HELLO_TIMEOUT_MS 5000u
/* accepted sockets waiting for their HELLO; past it the oldest is closed
 * (a peer's HELLO follows its connect at once: only silent ones wait) */
#define P4T_SHM_PENDING_MAX	256
/* doorbells: with more live links than P4T_SHM_BELL_LINKS a progress call
 * reads only the rings whose bell rang (and those it must: new links,
 * rings it left records in), and every P4T_SHM_BELL_FULL-th call all */
#define P4T_SHM_BELLS		4096	/* slots per process; links past
					 * them are read every call */
#define P4T_SHM_BELL_LINKS	2
#define P4T_SHM_BELL_FULL	64
/* a link that brought records is read directly for this many calls
 * more: the bell costs a cache line transfer per message, an active
 * peer's ring read costs a few ns a call */
#define P4T_SHM_BELL_HOT	4096
#define P4T_SHM_RETRY_MIN_MS	1
#define P4T_SHM_RETRY_MAX_MS	100

/* Counters of one iface since it was opened. */
struct p4t_shm_stats {
	uint64_t msgs_sent;		/* engine messages accepted by send */
	uint64_t bytes_sent;
	uint64_t msgs_recv;		/* handed to the recv upcall */
	uint64_t bytes_recv;
	uint64_t recv_in_place;		/* ... of them straight from the ring */
	uint64_t queued_copy;		/* sends queued as a copy */
	uint64_t queued_ref;		/* sends queued by reference */
	uint64_t eagain;		/* requests refused: queue full */
	uint64_t sends_dropped;		/* sends on a failed link */
	uint64_t wakeups_sent;		/* eventfd writes to armed peers */
	uint64_t epoll_calls;		/* epoll_wait in progress */
	uint64_t connects;		/* links we made */
	uint64_t connect_retries;	/* connect() said EAGAIN */
	uint64_t accepts;		/* links we accepted */
	uint64_t unreachable;		/* conn_get: -FI_EHOSTUNREACH */
	uint64_t collisions;		/* HELLOs refused or links moved */
	uint64_t auth_refused;
	uint64_t cred_refused;		/* peers failing the credential check */
	uint64_t malformed;
	uint64_t silent_closed;		/* accepted, no HELLO: timed out or
					 * evicted (P4T_SHM_PENDING_MAX) */
	uint64_t link_failures;
	uint64_t restarts;
	uint64_t pulls;			/* posted here */
	uint64_t pushes;
	uint64_t cma_reads;		/* process_vm_readv calls */
	uint64_t cma_starved;		/* read calls after a pause of
					 * P4T_SHM_CMA_STARVED_NS */
	uint64_t cma_bytes;
	uint64_t cma_refused;		/* EPERM / ENOSYS: link to the ring */
	uint64_t ring_rma_bytes;	/* RMA bytes copied through the ring */
	uint64_t ring_rma_dropped;	/* pulled bytes that came both ways */
	uint64_t coop_streams;		/* peers' pulls streamed here too */
	uint64_t rma_refused;		/* requests refused by the owner (here) */
	uint64_t links;			/* live links now */
	uint64_t ring_polls;		/* rings read by progress */
	uint64_t bell_polls;		/* ... because their bell rang */
	uint64_t full_polls;		/* calls that read every ring while
					 * there were doorbells */
};

/* Fill stats for an iface of p4t_shm_ops: 0, or -FI_EINVAL. */
int p4t_shm_stats(struct p4t_iface *iface, struct p4t_shm_stats *stats);

/*
 * Test hooks: whether links made from now on may use cross-memory attach
 * (false: copy through the ring); the bound on bytes queued per link
 * before requests get -FI_EAGAIN (0 = P4T_SHM_QUEUE_LIMIT); the pause
 * after which a read takes P4T_SHM_CMA_STARVED_STEP (UINT64_MAX: never).
 */
void p4t_shm_set_cma(struct p4t_iface *iface, bool on);
void p4t_shm_set_queue_limit(struct p4t_iface *iface, size_t bytes);
void p4t_shm_set_starved_ns(struct p4t_iface *iface, uint64_t ns);
/* Doorbells from more than links links, every full-th call reading all
 * rings (0: never), a link that brought records read directly for hot
 * calls more (0: never); ring: whether this iface rings its peers' bells. */
void p4t_shm_set_bells(struct p4t_iface *iface, unsigned links,
		       unsigned full, unsigned hot, bool ring);

#endif /* P4T_SHM_H */
