/*
 * p4t_shm_accept.c - the shared-memory transport's accepting side
 * (behaviour: p4t_shm.h): accepted connections waiting for their HELLO,
 * checking a HELLO and mapping its segment, announcing the link
 * (conn_new) and answering HELLO_ACK, collisions (which link of a pair is
 * kept, and moving ours into the peer's) and restarts.
 *
 * Not here: the calling side, the handshake messages and the link's
 * state machine (p4t_shm_conn.c).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

/* Map the peer's segment after checking it is what its HELLO says. */
static int p4t_shm_seg_map(int fd, const struct p4t_shm_hs *hs,
			   struct p4t_shm_seg **seg_p)
{
	size_t size = p4t_shm_seg_bytes();
	struct p4t_shm_seg *seg;
	void *map;
	int ret;

	if (hs->seg_size != size || hs->ring_size != P4T_SHM_RING)
		return -FI_EINVAL;
	ret = p4t_shm_memfd_map(fd, size, &map);
	if (ret)
		return ret;
	seg = map;
	if (seg->magic != P4T_SHM_MAGIC || seg->version != P4T_SHM_VERSION ||
	    seg->size != size || seg->ring_size != P4T_SHM_RING ||
	    seg->ring_off[0] != P4T_SHM_HDR_PAGE ||
	    seg->ring_off[1] != P4T_SHM_HDR_PAGE + P4T_SHM_RING) {
		munmap(seg, size);
		return -FI_EINVAL;
	}
	*seg_p = seg;
	return 0;
}

/* ---- accepting ------------------------------------------------------------------ */

static int p4t_shm_ack_send(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_hs hs;

	int fds[2] = { iface->wake_fd, iface->inbox_fd };

	p4t_shm_hs_fill(iface, P4T_SHM_HS_ACK, &hs);
	hs.reads_peer = conn->cma;
	hs.bell = (uint32_t)conn->bell;
	return p4t_shm_hs_send(conn->fd, &hs, fds, 2);
}

/* What the acceptor learns of the connector from its HELLO. */
static void p4t_shm_conn_peer(struct p4t_shm_conn *conn, int fd, int wake,
			      struct p4t_shm_inbox *inbox,
			      struct p4t_shm_seg *seg,
			      const struct ucred *cred,
			      const struct p4t_shm_hs *hs)
{
	conn->fd = fd;
	conn->peer_wake = wake;
	p4t_shm_bell_peer(conn, inbox, hs->bell);
	conn->peer_pid = cred->pid;
	conn->peer_session = hs->session;
	conn->has_session = true;
	conn->peer_reads = false;	/* until its INFO says */
	conn->mapped_by_peer = true;
	conn->outgoing = false;
	conn->seg = seg;
	conn->seg_size = p4t_shm_seg_bytes();
	p4t_shm_ring_attach(conn, false);
	conn->cma = conn->iface->cma &&
		    p4t_shm_cma_probe(conn, hs->probe, hs->session);
}

/*
 * Tell the connector, first thing in the ring, whether we can read it:
 * its answers to our pull requests depend on it, and it may read them
 * before our HELLO_ACK on the socket. Written into the ring, not queued:
 * the ring is fresh (it fits), and a link we adopt may have a queue,
 * which must not be drained before p4t_shm_ring_take_lost puts the lost
 * ring's records ahead of it (the peer would get our messages out of
 * order, and the engine drops as stale all after a gap in sequence).
 */
static int p4t_shm_info_send(struct p4t_shm_conn *conn)
{
	struct p4t_shm_ctl info = { .status = conn->cma };

	return p4t_shm_ring_frame(conn, P4T_SHM_F_INFO, &info, sizeof(info),
				  NULL, 0) ? 0 : -FI_ENOSPC;
}

/*
 * Answering a link failed (ret < 0). A peer that is gone already (it
 * wrote, then exited before we answered: EPIPE, ECONNRESET) still has
 * what it wrote delivered first, as at its EOF; anything else fails the
 * link at once.
 */
static void p4t_shm_accept_failed(struct p4t_shm_conn *conn, int ret)
{
	if (!ret)
		return;
	if (ret == -EPIPE || ret == -ECONNRESET)
		p4t_shm_conn_gone(conn, -FI_ECONNRESET);
	else
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, ret);
}

/*
 * A collision we lose: the peer's link replaces ours. The peer refuses
 * our HELLO unread, so all we wrote into our ring, then our queue, goes
 * into its segment, in order.
 */
static void p4t_shm_conn_adopt(struct p4t_shm_conn *conn, int fd, int wake,
			       struct p4t_shm_inbox *inbox,
			       struct p4t_shm_seg *seg,
			       const struct ucred *cred,
			       const struct p4t_shm_hs *hs)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_ring old = conn->tx;
	struct p4t_shm_seg *old_seg = conn->seg;
	int ret;

	p4t_shm_fd_close(iface, &conn->fd);
	p4t_shm_fd_close(iface, &conn->memfd);
	p4t_shm_fd_close(iface, &conn->peer_wake);
	free(conn->rxa.buf);
	memset(&conn->rxa, 0, sizeof(conn->rxa));
	conn->cma = iface->cma;
	p4t_shm_conn_peer(conn, fd, wake, inbox, seg, cred, hs);
	ret = p4t_shm_info_send(conn);
	if (!ret)
		ret = p4t_shm_ring_take_lost(conn, &old);
	/* what the lost ring had is now the peer's to read */
	if (!ret)
		p4t_shm_confirm(conn);
	munmap(old_seg, conn->seg_size);
	iface->stats.collisions++;
	p4t_shm_conn_step(conn, P4T_SHM_IN_ADOPT, 0);
	if (!ret)
		ret = p4t_shm_watch_add(iface, fd, &conn->watch);
	if (!ret)
		ret = p4t_shm_ack_send(conn);
	if (!ret)
		(void)p4t_shm_txq_drain(conn);
	p4t_shm_accept_failed(conn, ret);
}

/* A new link from a peer: announced to the engine, then acknowledged. */
static void p4t_shm_conn_accepted(struct p4t_shm_iface *iface, int fd,
				  int wake, struct p4t_shm_inbox *inbox,
				  struct p4t_shm_seg *seg,
				  const struct ucred *cred,
				  const struct p4t_shm_hs *hs,
				  const struct sockaddr_storage *ss,
				  socklen_t len)
{
	const struct p4t_upcalls *up = iface->upcalls;
	struct p4t_shm_conn *conn;
	int ret;

	/* a failure of an earlier link to this peer is reported first */
	(void)p4t_shm_events_run(iface, INT32_MAX);
	conn = p4t_shm_conn_create(iface, ss, len);
	if (!conn) {
		munmap(seg, p4t_shm_seg_bytes());
		munmap(inbox, P4T_SHM_INBOX_BYTES);
		close(wake);
		close(fd);
		return;
	}
	conn->cma = iface->cma;
	p4t_shm_conn_peer(conn, fd, wake, inbox, seg, cred, hs);
	conn->state = P4T_SHM_CONN_UP;
	iface->stats.accepts++;
	if (p4t_shm_info_send(conn)) {
		p4t_shm_bye(fd, iface, P4T_SHM_BYE_REFUSED);
		p4t_shm_conn_step(conn, P4T_SHM_IN_CLOSE, 0);
		return;
	}
	conn->busy = true;
	ret = up->conn_new(iface->upcall_ctx, &conn->base, hs->addr,
			   hs->addrlen);
	conn->busy = false;
	if (ret) {
		p4t_shm_bye(fd, iface, P4T_SHM_BYE_REFUSED);
		p4t_shm_conn_step(conn, P4T_SHM_IN_CLOSE, 0);
		return;
	}
	conn->known = true;
	ret = p4t_shm_watch_add(iface, fd, &conn->watch);
	if (!ret)
		ret = p4t_shm_ack_send(conn);
	p4t_shm_accept_failed(conn, ret);
}

/* Refuse a HELLO: nothing of its segment is read. */
static void p4t_shm_hello_refuse(struct p4t_shm_iface *iface, int fd,
				 int wake, struct p4t_shm_inbox *inbox,
				 struct p4t_shm_seg *seg, uint8_t why)
{
	p4t_shm_bye(fd, iface, why);
	if (seg)
		munmap(seg, p4t_shm_seg_bytes());
	if (inbox)
		munmap(inbox, P4T_SHM_INBOX_BYTES);
	if (wake >= 0)
		close(wake);
	close(fd);
}

static void p4t_shm_hello_in(struct p4t_shm_iface *iface, int fd,
			     const struct ucred *cred,
			     const struct p4t_shm_hs *hs, int memfd, int wake,
			     int bells)
{
	struct p4t_shm_conn *old;
	struct p4t_shm_seg *seg = NULL;
	struct p4t_shm_inbox *inbox = NULL;
	struct sockaddr_storage ss;
	socklen_t len;
	int ret;

	if (hs->auth_key != iface->auth_key) {
		iface->stats.auth_refused++;
		close(memfd);
		close(bells);
		p4t_shm_hello_refuse(iface, fd, wake, NULL, NULL,
				     P4T_SHM_BYE_REFUSED);
		return;
	}
	ret = hs->pid == (uint32_t)cred->pid &&
	      hs->addrlen <= sizeof(hs->addr) ?
	      p4t_shm_addr_parse(hs->addr, hs->addrlen, &ss, &len) : -FI_EINVAL;
	if (!ret && (!p4t_shm_addr_cmp(&ss, len, &iface->key, iface->addrlen) ||
		     !p4t_shm_wake_fd_ok(wake)))
		ret = -FI_EINVAL;
	if (!ret)
		ret = p4t_shm_bell_map(bells, hs->bell, &inbox);
	if (!ret)
		ret = p4t_shm_seg_map(memfd, hs, &seg);
	close(memfd);
	close(bells);
	if (ret) {
		iface->stats.malformed++;
		p4t_shm_hello_refuse(iface, fd, wake, inbox, NULL,
				     P4T_SHM_BYE_REFUSED);
		return;
	}
	old = p4t_shm_conn_find(iface, &ss, len);
	if (old && old->has_session && old->peer_session != hs->session) {
		/* the peer restarted: the old link goes first */
		iface->stats.restarts++;
		p4t_shm_conn_gone(old, -FI_ECONNRESET);
		old = NULL;
	}
	if (old && old->outgoing &&
	    p4t_shm_addr_cmp(&iface->key, iface->addrlen, &ss, len) < 0) {
		/* both connected: the lower address's link is kept */
		iface->stats.collisions++;
		p4t_shm_hello_refuse(iface, fd, wake, inbox, seg,
				     P4T_SHM_BYE_COLLISION);
		return;
	}
	if (old && old->outgoing && old->state != P4T_SHM_CONN_UP) {
		p4t_shm_conn_adopt(old, fd, wake, inbox, seg, cred, hs);
		return;
	}
	if (old)	/* the peer made a new link: its old one is gone */
		p4t_shm_conn_gone(old, -FI_ECONNRESET);
	p4t_shm_conn_accepted(iface, fd, wake, inbox, seg, cred, hs, &ss, len);
}

static void p4t_shm_pend_timeout(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4t_shm_pend *pend = container_of(timer, struct p4t_shm_pend,
						 timer);

	(void)now_ns;
	pend->iface->stats.silent_closed++;
	p4t_shm_pend_close(pend);
}

void p4t_shm_pend_close(struct p4t_shm_pend *pend)
{
	struct p4t_shm_iface *iface = pend->iface;

	p4u_timer_cancel(iface->timers, &pend->timer);
	p4t_shm_fd_close(iface, &pend->fd);
	p4u_list_remove(&pend->node);
	iface->npend--;
	/* epoll results of this round may name it: freed at reap */
	p4u_list_insert_tail(&iface->dead_pend, &pend->node);
}

/* An accepted connection's HELLO, if it is there. */
void p4t_shm_pend_event(struct p4t_shm_pend *pend)
{
	struct p4t_shm_iface *iface = pend->iface;
	struct p4t_shm_hs hs;
	struct ucred cred = pend->cred;
	size_t nfds;
	int fds[3], fd, ret;

	if (pend->fd < 0)
		return;
	ret = p4t_shm_hs_recv(pend->fd, &hs, fds, 3, &nfds);
	if (ret == -EAGAIN || ret == -EWOULDBLOCK)
		return;
	if (ret <= 0 || hs.type != P4T_SHM_HS_HELLO || nfds != 3) {
		while (nfds)
			close(fds[--nfds]);
		if (ret != 0)
			iface->stats.malformed++;
		p4t_shm_pend_close(pend);
		return;
	}
	fd = pend->fd;
	(void)epoll_ctl(iface->epfd, EPOLL_CTL_DEL, fd, NULL);
	pend->fd = -1;
	p4t_shm_pend_close(pend);
	p4t_shm_hello_in(iface, fd, &cred, &hs, fds[0], fds[1], fds[2]);
}

void p4t_shm_accept(struct p4t_shm_iface *iface)
{
	struct p4t_shm_pend *pend;
	struct ucred cred;
	int i, fd;

	for (i = 0; i < 16; i++) {
		fd = accept4(iface->listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (!p4t_shm_peer_ok(iface, fd, &cred) ||
		    !(pend = calloc(1, sizeof(*pend)))) {
			close(fd);
			continue;
		}
		if (iface->npend >= P4T_SHM_PENDING_MAX) {
			/* the oldest silent one makes room */
			iface->stats.silent_closed++;
			p4t_shm_pend_close(p4u_list_first_entry(
				&iface->pend, struct p4t_shm_pend, node));
		}
		pend->iface = iface;
		pend->fd = fd;
		pend->cred = cred;
		pend->watch.kind = P4T_SHM_W_PEND;
		pend->watch.obj = pend;
		p4u_timer_init(&pend->timer, p4t_shm_pend_timeout);
		p4u_list_insert_tail(&iface->pend, &pend->node);
		iface->npend++;
		if (p4t_shm_watch_add(iface, fd, &pend->watch)) {
			p4t_shm_pend_close(pend);
			continue;
		}
		p4t_shm_timer_arm_ms(iface, &pend->timer,
				     P4U_MIN((uint64_t)P4T_SHM_HELLO_TIMEOUT_MS,
					     iface->peer_timeout_ms));
		p4t_shm_pend_event(pend);
	}
}
