/*
 * p4t_shm_bell.c - the shared-memory transport's doorbells (layout:
 * struct p4t_shm_inbox, p4t_shm_priv.h): which rings a progress call
 * reads once a process has many links. Without them every call reads
 * the tail of every ring, a cache line per peer, most of them idle: with
 * 63 idle peers that was 165-250 ns a call here (bench/shm_bench, a
 * transport test), against an 8 B one-way latency of 0.08-0.33 us, and
 * with more processes than cores those lines are rarely in cache.
 *
 * Each process has one inbox page; every peer maps it and sets the bit
 * of its link (the slot we gave it) after publishing a record. The
 * owner clears the bits it sees set (one atomic AND per word) and reads
 * those rings, so an idle call reads one word per 64 links. A bell costs
 * a message a cache line transfer, which a ping-pong pays each way: so a
 * link that brought records is read directly for P4T_SHM_BELL_HOT calls
 * more, its bit left set, and its producer, finding the bit set, writes
 * nothing (bench/shm_bench: the same 8 B latency with 3 idle links,
 * 0.47 to 0.73 times it with 63).
 *
 * Why nothing is missed (the producer publishes tail T, fences, then
 * sets its bit B; the owner clears B, then reads T): if the owner's read
 * misses T, the clear came before T in the owner's order, so the
 * producer's B after its fence comes after the clear and stays set for
 * the next call. The producer skips the atomic OR when it sees its bit
 * set; that load also follows its fence, so a bit seen set was set when
 * T was already visible to the clear that takes it.
 *
 * The owner reads directly, every call, what the bells cannot cover:
 * links on iface->rescan (new ones, those whose state changed, rings a
 * call left records in, links without a slot, hot ones). And every
 * P4T_SHM_BELL_FULL-th call reads every ring: the inbox is writable by
 * every peer, and one that clears bits it does not own must delay the
 * others by no more than that.
 *
 * Not here: the rings themselves (p4t_shm_ring.c), the handshake that
 * hands the inbox and the slot to the peer (p4t_shm_conn.c,
 * p4t_shm_accept.c).
 */
#include <config.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

int p4t_shm_inbox_open(struct p4t_shm_iface *iface)
{
	void *map;
	int ret;

	iface->bell_conn = calloc(P4T_SHM_BELLS, sizeof(*iface->bell_conn));
	iface->bell_hot = calloc(P4T_SHM_BELLS / 64, sizeof(uint64_t));
	if (!iface->bell_conn || !iface->bell_hot)
		return -FI_ENOMEM;
	ret = p4t_shm_memfd_make("portals-bells", P4T_SHM_INBOX_BYTES,
				 &iface->inbox_fd, &map);
	if (ret)
		return ret;
	iface->inbox = map;
	iface->inbox->magic = P4T_SHM_MAGIC;
	iface->inbox->version = P4T_SHM_VERSION;
	return 0;
}

void p4t_shm_inbox_close(struct p4t_shm_iface *iface)
{
	if (iface->inbox)
		munmap(iface->inbox, P4T_SHM_INBOX_BYTES);
	if (iface->inbox_fd >= 0)
		close(iface->inbox_fd);
	free(iface->bell_conn);
	free(iface->bell_hot);
	iface->inbox = NULL;
	iface->inbox_fd = -1;
	iface->bell_conn = NULL;
	iface->bell_hot = NULL;
}

/* A new link: a slot of ours (or none when all are taken), read first. */
void p4t_shm_bell_attach(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;
	int slot;

	p4u_list_node_init(&conn->rescan);
	conn->bell = -1;
	for (slot = 0; slot < iface->bell_hi; slot++)
		if (!iface->bell_conn[slot])
			break;
	if (slot < P4T_SHM_BELLS) {
		iface->bell_conn[slot] = conn;
		conn->bell = slot;
		if (slot == iface->bell_hi)
			iface->bell_hi++;
	}
	p4t_shm_bell_rescan(conn);
}

/* Whether the link is read directly, its bit left set. */
static void p4t_shm_bell_hot(struct p4t_shm_conn *conn, bool hot)
{
	uint64_t bit;

	if (conn->bell < 0)
		return;
	bit = (uint64_t)1 << (conn->bell % 64);
	if (hot)
		conn->iface->bell_hot[conn->bell / 64] |= bit;
	else
		conn->iface->bell_hot[conn->bell / 64] &= ~bit;
}

/* The link is down: its slot is free (a late ring of it is harmless). */
void p4t_shm_bell_detach(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;

	p4t_shm_bell_hot(conn, false);
	conn->hot = 0;
	if (conn->bell >= 0)
		iface->bell_conn[conn->bell] = NULL;
	conn->bell = -1;
	if (p4u_list_node_linked(&conn->rescan)) {
		p4u_list_remove(&conn->rescan);
		iface->nrescan--;
	}
}

/* Map a peer's inbox (fd from its HELLO or HELLO_ACK) after checks;
 * slot UINT32_MAX: the peer has none for us (it reads our ring every
 * call). */
int p4t_shm_bell_map(int fd, uint32_t slot, struct p4t_shm_inbox **inbox_p)
{
	void *map;
	int ret;

	if (slot >= P4T_SHM_BELLS && slot != UINT32_MAX)
		return -FI_EINVAL;
	ret = p4t_shm_memfd_map(fd, P4T_SHM_INBOX_BYTES, &map);
	if (ret)
		return ret;
	*inbox_p = map;
	if ((*inbox_p)->magic != P4T_SHM_MAGIC ||
	    (*inbox_p)->version != P4T_SHM_VERSION) {
		munmap(map, P4T_SHM_INBOX_BYTES);
		return -FI_EINVAL;
	}
	return 0;
}

/* The peer's inbox and our slot in it: our records ring it from now on. */
void p4t_shm_bell_peer(struct p4t_shm_conn *conn, struct p4t_shm_inbox *inbox,
		       uint32_t slot)
{
	p4t_shm_bell_unmap(conn);
	conn->peer_inbox = inbox;
	if (slot == UINT32_MAX || !conn->iface->bell_ring)
		return;
	conn->peer_bell = &inbox->bits[slot / 64];
	conn->peer_bell_bit = (uint64_t)1 << (slot % 64);
}

void p4t_shm_bell_unmap(struct p4t_shm_conn *conn)
{
	if (conn->peer_inbox)
		munmap(conn->peer_inbox, P4T_SHM_INBOX_BYTES);
	conn->peer_inbox = NULL;
	conn->peer_bell = NULL;
}

/* Read this link's ring directly from the next call on, until it is up
 * with a slot and its ring is empty. */
void p4t_shm_bell_rescan(struct p4t_shm_conn *conn)
{
	if (p4u_list_node_linked(&conn->rescan) || !p4t_shm_conn_live(conn))
		return;
	p4u_list_insert_tail(&conn->iface->rescan, &conn->rescan);
	conn->iface->nrescan++;
}

/* Whether this call reads by the bells (else every ring). */
bool p4t_shm_bells_due(struct p4t_shm_iface *iface)
{
	if (iface->stats.links <= iface->bell_links)
		return false;
	if (iface->bell_full && !(++iface->full_tick % iface->bell_full)) {
		iface->stats.full_polls++;
		return false;
	}
	return true;
}

/*
 * One link's ring, up to what is left of the budget. A link that brought
 * records is read directly for P4T_SHM_BELL_HOT calls more, with its bit
 * left alone: an active peer (the other end of a ping-pong) then pays no
 * bell, neither the owner's atomic AND nor the producer's atomic OR (it
 * finds its bit set).
 */
static int p4t_shm_bell_read(struct p4t_shm_conn *conn, int budget, int done,
			     bool *settling)
{
	int n = 0;

	if (conn->state != P4T_SHM_CONN_UP)
		*settling = true;
	if (done < budget) {
		conn->iface->stats.ring_polls++;
		n = p4t_shm_ring_rx(conn, P4U_MIN(budget - done,
						  P4T_SHM_READS));
	}
	if (!p4t_shm_conn_live(conn))
		return n;
	if (n > 0 && !conn->hot && conn->iface->bell_hot_calls)
		p4t_shm_bell_hot(conn, true);
	if (n > 0)
		conn->hot = conn->iface->bell_hot_calls;
	else if (conn->hot && !--conn->hot)
		p4t_shm_bell_hot(conn, false);
	/* hot, left records, not up yet, or no bell of its own: again */
	if (conn->hot || conn->state != P4T_SHM_CONN_UP || conn->bell < 0 ||
	    conn->busy || p4t_shm_ring_pending(conn))
		p4t_shm_bell_rescan(conn);
	return n;
}

/*
 * The rescan list first, each link once and then to the back (a link
 * that always has records goes round with the others), then the bells.
 * A rung link the budget leaves unread goes to the rescan list: its bit
 * is already cleared.
 */
int p4t_shm_bells_run(struct p4t_shm_iface *iface, int budget, int done,
		      bool *settling)
{
	size_t n = iface->nrescan;
	struct p4t_shm_conn *conn;
	struct p4u_list *node;
	uint64_t *bits = iface->inbox->bits, v;
	int w, nw = (iface->bell_hi + 63) / 64, start = done;

	while (n-- && done < budget &&
	       (node = p4u_list_pop_head(&iface->rescan))) {
		iface->nrescan--;
		conn = container_of(node, struct p4t_shm_conn, rescan);
		done += p4t_shm_bell_read(conn, budget, done, settling);
	}
	for (w = 0; w < nw; w++) {
		v = __atomic_load_n(&bits[w], __ATOMIC_RELAXED) &
		    ~iface->bell_hot[w];
		if (!v)
			continue;
		/* take the bits seen (a peer may set another meanwhile) */
		v &= __atomic_fetch_and(&bits[w], ~v, __ATOMIC_SEQ_CST);
		while (v) {
			conn = iface->bell_conn[w * 64 + __builtin_ctzll(v)];
			v &= v - 1;
			if (!conn || !p4t_shm_conn_live(conn))
				continue;
			iface->stats.bell_polls++;
			done += p4t_shm_bell_read(conn, budget, done, settling);
		}
	}
	return done - start;
}
