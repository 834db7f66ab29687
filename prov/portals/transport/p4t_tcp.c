/*
 * p4t_tcp.c - the TCP transport's iface (behaviour: p4t_tcp.h): deferred
 * events (completions and failures reported in order), progress (which
 * sockets to look at, and when), the listening socket, open and close,
 * conn_get, the ops table and the test hooks.
 *
 * Not here: addresses (p4t_tcp_addr.c), sockets, accept and handshake
 * deadlines (p4t_tcp_sock.c), the handshake (p4t_tcp_hs.c), links
 * (p4t_tcp_conn.c), the send path (p4t_tcp_send.c), the receive path
 * (p4t_tcp_rx.c), emulated RDMA (p4t_tcp_rma.c), messages to the iface
 * itself (p4t_tcp_self.c).
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* ---- wake-ups and events ----------------------------------------------------- */

/* efd readable iff events, self messages or staged messages wait. */
void p4t_tcp_signal(struct p4t_tcp_iface *iface)
{
	bool work = !p4u_list_empty(&iface->evq) ||
		    !p4u_list_empty(&iface->selfq) ||
		    !p4u_list_empty(&iface->backlog);
	uint64_t val = 1;

	if (work == iface->signaled)
		return;
	if (work ? write(iface->efd, &val, sizeof(val)) != sizeof(val) :
		   read(iface->efd, &val, sizeof(val)) != sizeof(val))
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: eventfd %s failed",
				work ? "write" : "read");
	iface->signaled = work;
}

void p4t_tcp_ev_post(struct p4t_tcp_iface *iface, struct p4t_tcp_ev *ev)
{
	p4u_list_insert_tail(&iface->evq, &ev->node);
	/* inside progress the call runs events again before it returns and
	 * signals what is left: no eventfd write and read for each one */
	if (!iface->in_progress)
		p4t_tcp_signal(iface);
}

/* On a failed link, ahead of its conn_failed. */
void p4t_tcp_ev_post_conn(struct p4t_tcp_conn *conn, struct p4t_tcp_ev *ev)
{
	if (p4u_list_node_linked(&conn->fail_ev.node)) {
		p4u_list_insert_before(&conn->fail_ev.node, &ev->node);
		p4t_tcp_signal(conn->iface);
	} else {
		p4t_tcp_ev_post(conn->iface, ev);
	}
}

/* Report one event; the conn of a conn_failed is dead afterwards. */
static void p4t_tcp_ev_run(struct p4t_tcp_iface *iface, struct p4t_tcp_ev *ev)
{
	const struct p4t_upcalls *up = iface->upcalls;
	struct p4t_tcp_conn *conn;
	struct p4t_tcp_rma *rma;
	struct p4t_tcp_tx *tx;
	void *op_ctx;
	int status = ev->status;

	switch (ev->kind) {
	case P4T_TCP_EV_SEND_DONE:
		tx = container_of(ev, struct p4t_tcp_tx, ev);
		op_ctx = tx->op_ctx;
		p4t_tcp_tx_free(iface, tx);
		up->send_done(iface->upcall_ctx, op_ctx, status);
		break;
	case P4T_TCP_EV_RMA_DONE:
		rma = container_of(ev, struct p4t_tcp_rma, ev);
		op_ctx = rma->op_ctx;
		p4t_tcp_rma_free(iface, rma);
		up->rma_done(iface->upcall_ctx, op_ctx, status);
		break;
	default:
		conn = container_of(ev, struct p4t_tcp_conn, fail_ev);
		if (conn->known) {
			conn->busy = true;
			up->conn_failed(iface->upcall_ctx, &conn->base, status);
			conn->busy = false;
		}
		conn->state = P4T_TCP_CONN_CLOSED;
		p4u_list_remove(&conn->node);
		p4u_list_insert_tail(&iface->dead, &conn->node);
		break;
	}
}

int p4t_tcp_events_run(struct p4t_tcp_iface *iface, int budget)
{
	struct p4u_list *node;
	int done = 0;

	while (done < budget && (node = p4u_list_pop_head(&iface->evq))) {
		p4t_tcp_ev_run(iface, container_of(node, struct p4t_tcp_ev,
						   node));
		done++;
	}
	return done;
}

/* ---- progress -------------------------------------------------------------------- */

/* tag: what epoll names, a socket or one of the iface's own fds. */
static int p4t_tcp_sock_event(struct p4t_tcp_iface *iface, void *tag,
			      uint32_t events, int budget)
{
	struct p4t_tcp_sock *sock;

	if (tag == &iface->listen_fd) {
		p4t_tcp_accept(iface);
		return 0;
	}
	if (tag == &iface->efd)
		return 0;	/* the lists are looked at directly */
	sock = tag;
	if (sock->state == P4T_TCP_SOCK_DEAD)
		return 0;
	if (sock->state != P4T_TCP_SOCK_ESTABLISHED) {
		p4t_tcp_hs_event(sock, events);
		return 0;
	}
	if ((events & EPOLLOUT) && p4t_tcp_conn_flush(sock->conn))
		return 0;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		return p4t_tcp_conn_rx(sock->conn, budget);
	return 0;
}

static int p4t_tcp_epoll_run(struct p4t_tcp_iface *iface, int budget)
{
	struct epoll_event evs[P4T_TCP_EPOLL_EVENTS];
	int i, n, done = 0;

	iface->stats.epoll_calls++;
	n = epoll_wait(iface->epfd, evs, P4T_TCP_EPOLL_EVENTS, 0);
	/* a readable link gets a message even past the budget: links that
	 * fill it before the others are asked must not starve them */
	for (i = 0; i < n; i++)
		done += p4t_tcp_sock_event(iface, evs[i].data.ptr,
					   evs[i].events,
					   budget > done ? budget - done : 1);
	return done;
}

/*
 * The waiting links of a snapshot (nothing to read last time, or a full
 * socket) asked in one poll(2): the lockless readiness check epoll makes,
 * without epoll_wait's own work (its mutex, the ready list walked and
 * refilled for level-triggered sockets that still hold data), which a
 * waiting process pays on every pass of its loop.
 */
static int p4t_tcp_poll_links(struct p4t_tcp_iface *iface,
			      struct p4t_tcp_conn **snap, size_t n, int budget)
{
	struct pollfd pfd[P4T_TCP_DIRECT_LINKS];
	struct p4t_tcp_conn *which[P4T_TCP_DIRECT_LINKS];
	size_t i, m = 0;
	int done = 0;

	for (i = 0; i < n; i++) {
		short ev = 0;

		if (snap[i]->state != P4T_TCP_CONN_ESTABLISHED)
			continue;
		if (snap[i]->rx_idle)
			ev |= POLLIN;
		if (snap[i]->wblocked && !p4u_list_empty(&snap[i]->txq))
			ev |= POLLOUT;
		if (!ev)
			continue;
		pfd[m].fd = snap[i]->sock->fd;
		pfd[m].events = ev;
		pfd[m].revents = 0;
		which[m++] = snap[i];
	}
	if (!m || poll(pfd, (nfds_t)m, 0) <= 0)
		return 0;
	/* past the budget, one message each (as epoll_run) */
	for (i = 0; i < m; i++)
		if (pfd[i].revents)	/* POLL* and EPOLL* bits are the same */
			done += p4t_tcp_sock_event(iface, which[i]->sock,
						   (uint32_t)pfd[i].revents,
						   budget > done ?
						   budget - done : 1);
	return done;
}

/*
 * Few links: read each directly (a recv that finds nothing costs less
 * than epoll_wait plus a recv that finds something), epoll now and then
 * for the listener, handshakes and wake-ups. Many links: only
 * what epoll reports.
 *
 * A link whose last recv found nothing is left to poll until it has
 * data again, and one whose socket was full until it has room:
 * recv and sendmsg take the socket lock, and spinning on it delays the
 * softirq that is delivering the very data (or acks) we wait for (it
 * queues to the socket backlog, processed only when we release the
 * lock); poll's readiness check takes no lock. So a waiting process
 * polls, a streaming one reads and writes.
 *
 * Snapshot first: upcalls may close links (freed only by reap).
 */
static int p4t_tcp_io_run(struct p4t_tcp_iface *iface, int budget)
{
	struct p4t_tcp_conn *snap[P4T_TCP_DIRECT_LINKS], *conn, *next = NULL;
	size_t i, n = 0;
	bool idle = false;
	int done = 0;

	iface->tick++;
	if (iface->nestablished <= P4T_TCP_DIRECT_LINKS) {
		p4u_list_foreach_entry(&iface->established, conn,
				       struct p4t_tcp_conn, active)
			snap[n++] = conn;
		for (i = 0; i < n; i++) {
			conn = snap[i];
			if (p4u_list_empty(&conn->txq))
				;
			else if (conn->wblocked)
				idle = true;	/* poll says when */
			else if (p4t_tcp_conn_flush(conn))
				continue;
			if (conn->rx_idle)
				idle = true;
			else if (done < budget)
				done += p4t_tcp_conn_rx(conn, budget - done);
			else if (!next)
				next = conn;
		}
		/* the first link left unread goes first next time: one
		 * that always fills the budget must not starve the rest */
		if (next && p4u_list_node_linked(&next->active))
			p4u_list_rotate_to(&iface->established, &next->active);
		if (n && iface->tick % P4T_TCP_EPOLL_EVERY &&
		    p4u_list_empty(&iface->pending) && !iface->naccepted &&
		    !iface->nconnecting) {
			if (idle)
				done += p4t_tcp_poll_links(iface, snap, n,
							   budget > done ?
							   budget - done : 0);
			return done;
		}
	}
	return done + p4t_tcp_epoll_run(iface, budget > done ? budget - done : 0);
}

/* Staged messages left behind by an exhausted budget. */
static int p4t_tcp_backlog_run(struct p4t_tcp_iface *iface, int budget)
{
	struct p4t_tcp_conn *conn;
	int done = 0;

	while (done < budget &&
	       (conn = p4u_list_first_entry(&iface->backlog,
					    struct p4t_tcp_conn, backlog)))
		done += p4t_tcp_conn_rx(conn, budget - done);
	return done;
}

/* Free what died; nothing may point at it once progress returns. */
static void p4t_tcp_reap(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_conn *conn, *ctmp;
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&iface->dead_socks)))
		free(container_of(node, struct p4t_tcp_sock, node));
	p4u_list_foreach_entry_safe(&iface->dead, conn, ctmp,
				    struct p4t_tcp_conn, node) {
		if (conn->busy)
			continue;
		p4u_list_remove(&conn->node);
		p4t_tcp_conn_free(conn);
	}
}

/*
 * No link, no handshake, nothing queued: only a new connection can come,
 * and it can wait P4T_TCP_IDLE_EPOLL_NS. A process whose peers all use
 * another transport then pays neither a system call nor a walk of empty
 * queues per progress call.
 */
static bool p4t_tcp_quiet(const struct p4t_tcp_iface *iface)
{
	return !iface->nestablished && !iface->nconnecting &&
	       !iface->naccepted && !iface->signaled &&
	       p4u_list_empty(&iface->pending) &&
	       p4u_list_empty(&iface->evq) && p4u_list_empty(&iface->selfq) &&
	       p4u_list_empty(&iface->backlog) &&
	       p4u_list_empty(&iface->corked) && p4u_list_empty(&iface->dead) &&
	       p4u_list_empty(&iface->dead_socks);
}

static int p4t_tcp_progress(struct p4t_iface *iface_, int budget)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	int done;

	/* the clock too is read only every 16th quiet call */
	if (p4t_tcp_quiet(iface) &&
	    (++iface->tick % 16 ||
	     !p4u_time_due(&iface->idle_epoll_ns, P4T_TCP_IDLE_EPOLL_NS)))
		return 0;
	/* what was sent since the last call leaves first, together */
	p4t_tcp_corked_flush(iface);
	iface->in_progress = true;
	done = p4t_tcp_events_run(iface, budget);
	if (done < budget)
		done += p4t_tcp_self_run(iface, budget - done);
	/* staged messages get half of what is left, the sockets the rest:
	 * a link whose reads keep a budget's worth staged must not keep
	 * the others' sockets unread */
	if (done < budget)
		done += p4t_tcp_backlog_run(iface, budget - done -
						   (budget - done) / 2);
	done += p4t_tcp_io_run(iface, budget > done ? budget - done : 0);
	if (done < budget)
		done += p4t_tcp_events_run(iface, budget - done);
	iface->in_progress = false;
	/* what this call's messages produced leaves together */
	p4t_tcp_corked_flush(iface);
	p4t_tcp_reap(iface);
	p4t_tcp_signal(iface);
	return done;
}

static int p4t_tcp_wait_fd(struct p4t_iface *iface)
{
	return p4t_tcp_iface_of(iface)->epfd;
}

static void p4t_tcp_flush(struct p4t_iface *iface)
{
	p4t_tcp_corked_flush(p4t_tcp_iface_of(iface));
}

/*
 * p4t.h owes: a link with messages queued, batched or pipelined and not
 * yet confirmed, or a socket whose bytes the peer's host has not
 * acknowledged yet (SIOCOUTQ: once it is 0 they are in the peer's
 * kernel, where our close can no longer lose them).
 */
static bool p4t_tcp_owes(struct p4t_iface *iface_)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn;
	int unacked;

	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_tcp_conn,
			       node) {
		if (conn->self || (conn->state != P4T_TCP_CONN_CONNECTING &&
				   conn->state != P4T_TCP_CONN_ESTABLISHED))
			continue;
		if (!p4u_list_empty(&conn->txq) ||
		    !p4u_list_empty(&conn->unconfirmed))
			return true;
		if (conn->state == P4T_TCP_CONN_ESTABLISHED &&
		    !ioctl(conn->sock->fd, SIOCOUTQ, &unacked) && unacked > 0)
			return true;
	}
	return false;
}

/* ---- open and close ---------------------------------------------------------- */

static int p4t_tcp_random(uint64_t *val)
{
	if (getrandom(val, sizeof(*val), GRND_NONBLOCK) == sizeof(*val))
		return 0;
	/* no entropy yet (early boot): unique enough per process and time */
	*val = p4u_hash_combine(p4u_time_ns(), (uint64_t)getpid());
	return 0;
}

/* Bind to cfg's port, the first free one of its range, or any. */
static int p4t_tcp_listen_bind(struct p4t_tcp_iface *iface,
			       const struct p4t_iface_config *cfg, int fd)
{
	struct sockaddr_storage ss = iface->addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	bool v6 = ss.ss_family == AF_INET6;
	uint16_t port = ntohs(v6 ? sin6->sin6_port : sin->sin_port);
	uint32_t p;

	if (port || (!cfg->port_low && !cfg->port_high))
		return bind(fd, (struct sockaddr *)&ss, iface->addrlen) ?
		       -errno : 0;
	if (!cfg->port_low || cfg->port_low > cfg->port_high)
		return -FI_EINVAL;
	for (p = cfg->port_low; p <= cfg->port_high; p++) {
		if (v6)
			sin6->sin6_port = htons((uint16_t)p);
		else
			sin->sin_port = htons((uint16_t)p);
		if (!bind(fd, (struct sockaddr *)&ss, iface->addrlen))
			return 0;
		if (errno != EADDRINUSE)
			return -errno;
	}
	return -FI_EADDRINUSE;
}

static int p4t_tcp_listen(struct p4t_tcp_iface *iface,
			  const struct p4t_iface_config *cfg)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, one = 1, ret;

	fd = socket(iface->addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a restarted process takes its port back despite TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (iface->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	ret = p4t_tcp_listen_bind(iface, cfg, fd);
	if (!ret && listen(fd, 1024))
		ret = -errno;
	if (!ret && getsockname(fd, (struct sockaddr *)&ss, &len))
		ret = -errno;
	if (!ret)
		ret = p4t_tcp_addr_parse(&ss, len, &iface->addr,
					 &iface->addrlen);
	if (ret) {
		close(fd);
		return ret;
	}
	iface->listen_fd = fd;
	return 0;
}

static int p4t_tcp_epoll_add(struct p4t_tcp_iface *iface, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(iface->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int p4t_tcp_fds_open(struct p4t_tcp_iface *iface,
			    const struct p4t_iface_config *cfg)
{
	int ret;

	iface->epfd = epoll_create1(EPOLL_CLOEXEC);
	iface->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (iface->epfd < 0 || iface->efd < 0)
		return -errno;
	ret = p4t_tcp_listen(iface, cfg);
	if (!ret)
		ret = p4t_tcp_epoll_add(iface, iface->listen_fd,
					&iface->listen_fd);
	if (!ret)
		ret = p4t_tcp_epoll_add(iface, iface->efd, &iface->efd);
	return ret;
}

static int p4t_tcp_pools_init(struct p4t_tcp_iface *iface)
{
	int ret;

	ret = p4u_pool_init(&iface->txs, sizeof(struct p4t_tcp_tx), 256,
			    1u << 22);
	if (!ret)
		ret = p4u_pool_init(&iface->bufs, P4T_TCP_BUF_SIZE, 16,
				    1u << 16);
	if (!ret)
		ret = p4u_pool_init(&iface->rmas, sizeof(struct p4t_tcp_rma),
				    64, 1u << 20);
	/* as many exposures as the engine may keep operations (a flood's
	 * sends resent as rendezvous each expose their payload) */
	if (!ret)
		ret = p4u_pool_init(&iface->mems, sizeof(struct p4t_tcp_mem),
				    256, 1u << 24);
	if (!ret)
		ret = p4u_hash_init(&iface->by_addr, 64);
	return ret;
}

static void p4t_tcp_iface_free(struct p4t_tcp_iface *iface)
{
	if (iface->listen_fd >= 0)
		close(iface->listen_fd);
	if (iface->efd >= 0)
		close(iface->efd);
	if (iface->epfd >= 0)
		close(iface->epfd);
	p4u_hash_fini(&iface->by_addr);
	p4u_pool_fini(&iface->mems);
	p4u_pool_fini(&iface->rmas);
	p4u_pool_fini(&iface->bufs);
	p4u_pool_fini(&iface->txs);
	free(iface->scratch);
	free(iface->wiov);
	free(iface);
}

static void p4t_tcp_iface_init(struct p4t_tcp_iface *iface,
			       const struct p4t_iface_config *cfg)
{
	iface->base.ops = &p4t_tcp_ops;
	iface->listen_fd = iface->epfd = iface->efd = -1;
	iface->auth_key = cfg->auth_key;
	iface->upcalls = cfg->upcalls;
	iface->upcall_ctx = cfg->upcall_ctx;
	iface->peer_timeout_ms = cfg->peer_timeout_ms ? cfg->peer_timeout_ms :
				 P4T_TCP_TIMEOUT_DEFAULT;
	iface->connect_retry_ms = cfg->connect_retry_ms ?
				  P4U_MIN(cfg->connect_retry_ms,
					  iface->peer_timeout_ms) :
				  iface->peer_timeout_ms;
	iface->chunk = cfg->rma_chunk ? cfg->rma_chunk : P4T_TCP_CHUNK_DEFAULT;
	iface->chunk = P4U_MIN(iface->chunk, P4T_TCP_MAX_MSG);
	iface->offer_max = cfg->no_offers ? 0 :
			   P4U_MIN(cfg->rma_offer ? cfg->rma_offer : iface->chunk,
				   iface->chunk);
	iface->queue_limit = P4T_TCP_QUEUE_LIMIT;
	iface->pending_max = P4T_TCP_PENDING_MAX;
	iface->timers = cfg->timers;
	p4u_list_init(&iface->corked);
	p4u_list_init(&iface->conns);
	p4u_list_init(&iface->established);
	p4u_list_init(&iface->backlog);
	p4u_list_init(&iface->dead);
	p4u_list_init(&iface->pending);
	p4u_list_init(&iface->accepted);
	p4u_list_init(&iface->dead_socks);
	p4u_list_init(&iface->evq);
	p4u_list_init(&iface->selfq);
	(void)p4t_tcp_random(&iface->session);
	(void)p4t_tcp_random(&iface->salt);
}

static int p4t_tcp_iface_open(const struct p4t_iface_config *cfg,
			      struct p4t_iface **iface_p)
{
	const struct p4t_upcalls *up = cfg ? cfg->upcalls : NULL;
	struct sockaddr_in lo = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct p4t_tcp_iface *iface;
	char buf[64];
	int ret;

	if (!cfg || !iface_p || !up || !cfg->timers || !up->recv ||
	    !up->send_done ||
	    !up->rma_done || !up->conn_new || !up->conn_failed)
		return -FI_EINVAL;
	iface = calloc(1, sizeof(*iface));
	if (!iface)
		return -FI_ENOMEM;
	p4t_tcp_iface_init(iface, cfg);
	ret = cfg->addr ? p4t_tcp_addr_parse(cfg->addr, cfg->addrlen,
					     &iface->addr, &iface->addrlen) :
			  p4t_tcp_addr_parse(&lo, sizeof(lo), &iface->addr,
					     &iface->addrlen);
	if (!ret)
		ret = p4t_tcp_pools_init(iface);
	iface->wiov = malloc(P4T_TCP_WRITEV_MAX * sizeof(*iface->wiov));
	iface->scratch = malloc(P4T_TCP_SCRATCH);
	if (!ret && (!iface->wiov || !iface->scratch))
		ret = -FI_ENOMEM;
	if (!ret)
		ret = p4t_tcp_fds_open(iface, cfg);
	if (ret) {
		p4u_info(P4U_LOG_TRANSPORT, "tcp: iface open failed: %s",
			 fi_strerror(-ret));
		p4t_tcp_iface_free(iface);
		return ret;
	}
	p4u_info(P4U_LOG_TRANSPORT, "tcp: listening on %s",
		 p4t_tcp_addr_str(&iface->addr, buf, sizeof(buf)));
	*iface_p = (struct p4t_iface *)iface;
	return 0;
}

/* Report the rma completions still queued; drop everything else. */
static void p4t_tcp_close_events(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_ev *ev;
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&iface->evq))) {
		ev = container_of(node, struct p4t_tcp_ev, node);
		if (ev->kind == P4T_TCP_EV_RMA_DONE)
			p4t_tcp_ev_run(iface, ev);
		else if (ev->kind == P4T_TCP_EV_SEND_DONE)
			p4t_tcp_tx_free(iface, container_of(ev,
					struct p4t_tcp_tx, ev));
	}
}

/*
 * Every link goes (a BYE first where a message is not half written), so
 * peers see conn_failed; pending pulls and pushes complete here with
 * rma_done(-FI_ECONNABORTED); no other upcall.
 */
static void p4t_tcp_iface_close(struct p4t_iface *iface_)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn, *ctmp;
	struct p4t_tcp_sock *sock, *stmp;
	struct p4u_list *node;
	char name[64];

	/* what peers did wrong is an operator's business: say it once */
	if (iface->stats.rejected || iface->stats.auth_refused)
		p4u_warn(P4U_LOG_TRANSPORT, "tcp: endpoint %s closing: rejected "
			 "%llu connections (%llu malformed, %llu auth refused, "
			 "%llu evicted), %llu link failures",
			 p4t_tcp_addr_str(&iface->addr, name, sizeof(name)),
			 (unsigned long long)iface->stats.rejected,
			 (unsigned long long)iface->stats.malformed,
			 (unsigned long long)iface->stats.auth_refused,
			 (unsigned long long)iface->stats.hs_evicted,
			 (unsigned long long)iface->stats.link_failures);
	p4u_info(P4U_LOG_TRANSPORT, "tcp: endpoint %s closing: %llu messages "
		 "sent, %llu received; %llu pulls, %llu served; offers %llu "
		 "sent, %llu taken, %llu dropped; system calls: %llu sendmsg, "
		 "%llu writev, %llu recv; %llu KiB landed, %llu KiB of it "
		 "staged",
		 p4t_tcp_addr_str(&iface->addr, name, sizeof(name)),
		 (unsigned long long)iface->stats.msgs_sent,
		 (unsigned long long)iface->stats.msgs_recv,
		 (unsigned long long)iface->stats.pulls,
		 (unsigned long long)iface->stats.streams,
		 (unsigned long long)iface->stats.offers_sent,
		 (unsigned long long)iface->stats.offers_taken,
		 (unsigned long long)iface->stats.offers_dropped,
		 (unsigned long long)iface->stats.sendmsg_calls,
		 (unsigned long long)iface->stats.writev_calls,
		 (unsigned long long)iface->stats.recv_calls,
		 (unsigned long long)(iface->stats.rma_bytes_in >> 10),
		 (unsigned long long)(iface->stats.rma_bytes_staged >> 10));
	/* batched sends the caller saw complete go out before the BYE */
	p4t_tcp_corked_flush(iface);
	iface->closing = true;
	p4u_list_foreach_entry_safe(&iface->conns, conn, ctmp,
				    struct p4t_tcp_conn, node) {
		if (conn->self)
			p4t_tcp_conn_close(iface_, &conn->base);
		else if (conn->state == P4T_TCP_CONN_ESTABLISHED)
			p4t_tcp_conn_bye(conn);
		p4t_tcp_conn_fail(conn, -FI_ECONNABORTED);
	}
	p4t_tcp_close_events(iface);
	p4u_list_foreach_entry_safe(&iface->pending, sock, stmp,
				    struct p4t_tcp_sock, node)
		p4t_tcp_sock_close(sock);
	p4u_list_foreach_entry_safe(&iface->accepted, sock, stmp,
				    struct p4t_tcp_sock, node)
		p4t_tcp_sock_close(sock);
	p4u_list_splice_tail(&iface->dead, &iface->conns);
	while ((node = p4u_list_pop_head(&iface->selfq)))
		free(container_of(node, struct p4t_tcp_selfmsg, node));
	p4t_tcp_reap(iface);
	p4t_tcp_mem_free_all(iface);
	p4t_tcp_iface_free(iface);
}

static void p4t_tcp_iface_query(struct p4t_iface *iface_,
				struct p4t_iface_attr *attr)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);

	attr->max_inline = P4T_TCP_MAX_INLINE;
	attr->max_msg = P4T_TCP_MAX_MSG;
	attr->max_rma = SIZE_MAX;
	attr->rma_native = false;
	attr->max_offer = iface->offer_max;
	attr->addr_len = iface->addrlen;
}

/* As fi_getname: a short buffer gets -FI_ETOOSMALL and the size needed. */
static int p4t_tcp_getname(struct p4t_iface *iface_, void *addr,
			   size_t *addrlen)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);

	if (!addrlen)
		return -FI_EINVAL;
	if (*addrlen < iface->addrlen) {
		*addrlen = iface->addrlen;
		return -FI_ETOOSMALL;
	}
	if (!addr)
		return -FI_EINVAL;
	memcpy(addr, &iface->addr, iface->addrlen);
	*addrlen = iface->addrlen;
	return 0;
}

/* The link to addr: found, or made and its connect started. */
static int p4t_tcp_conn_get(struct p4t_iface *iface_, const void *addr,
			    size_t addrlen, struct p4t_conn **conn_p)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn;
	struct sockaddr_storage ss;
	socklen_t len;
	int ret;

	ret = p4t_tcp_addr_parse(addr, addrlen, &ss, &len);
	if (ret || !conn_p)
		return ret ? ret : -FI_EINVAL;
	if (p4t_tcp_addr_eq(&ss, len, &iface->addr, iface->addrlen))
		conn = p4t_tcp_self_get(iface);
	else
		conn = p4t_tcp_conn_find(iface, &ss, len);
	if (!conn) {
		conn = p4t_tcp_conn_create(iface, &ss, len);
		if (!conn)
			return -FI_ENOMEM;
		p4t_tcp_conn_reconnect(conn);
	}
	conn->known = true;
	*conn_p = &conn->base;
	return 0;
}

const struct p4t_ops p4t_tcp_ops = {
	.name = "tcp",
	.iface_open = p4t_tcp_iface_open,
	.iface_close = p4t_tcp_iface_close,
	.iface_query = p4t_tcp_iface_query,
	.getname = p4t_tcp_getname,
	.conn_get = p4t_tcp_conn_get,
	.send = p4t_tcp_send,
	.send_offer = p4t_tcp_send_offer,
	.mem_expose = p4t_tcp_mem_expose,
	.mem_unexpose = p4t_tcp_mem_unexpose,
	.pull = p4t_tcp_pull,
	.push = p4t_tcp_push,
	.conn_close = p4t_tcp_conn_close,
	.progress = p4t_tcp_progress,
	.flush = p4t_tcp_flush,
	.wait_fd = p4t_tcp_wait_fd,
	.owes = p4t_tcp_owes,
};

/* ---- hooks (p4t_tcp.h) ------------------------------------------------------- */

static struct p4t_tcp_iface *p4t_tcp_hook_iface(struct p4t_iface *iface)
{
	return iface && p4t_ops_of(iface) == &p4t_tcp_ops ?
	       p4t_tcp_iface_of(iface) : NULL;
}

int p4t_tcp_stats(struct p4t_iface *iface_, struct p4t_tcp_stats *stats)
{
	struct p4t_tcp_iface *iface = p4t_tcp_hook_iface(iface_);

	if (!iface || !stats)
		return -FI_EINVAL;
	*stats = iface->stats;
	return 0;
}

void p4t_tcp_set_sockbuf(struct p4t_iface *iface_, int sndbuf, int rcvbuf)
{
	struct p4t_tcp_iface *iface = p4t_tcp_hook_iface(iface_);

	if (!iface)
		return;
	iface->sndbuf = sndbuf;
	iface->rcvbuf = rcvbuf;
}

void p4t_tcp_set_queue_limit(struct p4t_iface *iface_, size_t bytes)
{
	struct p4t_tcp_iface *iface = p4t_tcp_hook_iface(iface_);

	if (iface)
		iface->queue_limit = bytes ? bytes : P4T_TCP_QUEUE_LIMIT;
}

void p4t_tcp_set_pending_max(struct p4t_iface *iface_, size_t max)
{
	struct p4t_tcp_iface *iface = p4t_tcp_hook_iface(iface_);

	if (iface)
		iface->pending_max = max ? max : P4T_TCP_PENDING_MAX;
}
