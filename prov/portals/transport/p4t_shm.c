/*
 * p4t_shm.c - the shared-memory transport's iface (behaviour:
 * p4t_shm.h): deferred events (completions and failures in order),
 * progress, wait_fd and wait_arm, owes, the listening socket, open and
 * close, conn_get, the ops table and the hooks.
 *
 * Not here: links and the handshake (p4t_shm_conn.c), the rings
 * (p4t_shm_ring.c), the send path (p4t_shm_send.c), RMA (p4t_shm_rma.c).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"
#include "p4u_addr.h"

/* ---- events -------------------------------------------------------------------- */

/* Events, reads or dead links wait for progress, whatever the rings say. */
static bool p4t_shm_queued(const struct p4t_shm_iface *iface)
{
	return !p4u_list_empty(&iface->evq) ||
	       !p4u_list_empty(&iface->cma_reads) ||
	       !p4u_list_empty(&iface->dead);
}

/* efd readable iff events or queues wait for progress. */
void p4t_shm_signal(struct p4t_shm_iface *iface)
{
	bool work = p4t_shm_queued(iface);
	uint64_t val = 1;

	if (work == iface->signaled)
		return;
	if (work ? write(iface->efd, &val, sizeof(val)) != sizeof(val) :
		   read(iface->efd, &val, sizeof(val)) != sizeof(val))
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "shm: eventfd %s failed",
				work ? "write" : "read");
	iface->signaled = work;
}

void p4t_shm_ev_post(struct p4t_shm_iface *iface, struct p4t_shm_ev *ev)
{
	p4u_list_insert_tail(&iface->evq, &ev->node);
	if (!iface->in_progress)
		p4t_shm_signal(iface);
}

/* On a failed link, ahead of its conn_failed. */
void p4t_shm_ev_post_conn(struct p4t_shm_conn *conn, struct p4t_shm_ev *ev)
{
	if (p4u_list_node_linked(&conn->fail_ev.node)) {
		p4u_list_insert_before(&conn->fail_ev.node, &ev->node);
		p4t_shm_signal(conn->iface);
	} else {
		p4t_shm_ev_post(conn->iface, ev);
	}
}

static void p4t_shm_ev_run(struct p4t_shm_iface *iface, struct p4t_shm_ev *ev)
{
	const struct p4t_upcalls *up = iface->upcalls;
	struct p4t_shm_conn *conn;
	struct p4t_shm_rma *rma;
	struct p4t_shm_tx *tx;
	void *op_ctx;
	int status = ev->status;

	switch (ev->kind) {
	case P4T_SHM_EV_SEND_DONE:
		tx = container_of(ev, struct p4t_shm_tx, ev);
		op_ctx = tx->op_ctx;
		p4t_shm_tx_free(iface, tx);
		up->send_done(iface->upcall_ctx, op_ctx, status);
		break;
	case P4T_SHM_EV_RMA_DONE:
		rma = container_of(ev, struct p4t_shm_rma, ev);
		op_ctx = rma->op_ctx;
		p4t_shm_rma_free(iface, rma);
		up->rma_done(iface->upcall_ctx, op_ctx, status);
		break;
	default:
		conn = container_of(ev, struct p4t_shm_conn, fail_ev);
		if (conn->known) {
			conn->busy = true;
			up->conn_failed(iface->upcall_ctx, &conn->base, status);
			conn->busy = false;
		}
		conn->state = P4T_SHM_CONN_CLOSED;
		p4u_list_remove(&conn->node);
		p4u_list_insert_tail(&iface->dead, &conn->node);
		break;
	}
}

int p4t_shm_events_run(struct p4t_shm_iface *iface, int budget)
{
	struct p4u_list *node;
	int done = 0;

	while (done < budget && (node = p4u_list_pop_head(&iface->evq))) {
		p4t_shm_ev_run(iface, container_of(node, struct p4t_shm_ev,
						   node));
		done++;
	}
	return done;
}

int p4t_shm_watch_add(struct p4t_shm_iface *iface, int fd,
		      struct p4t_shm_watch *watch)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
				  .data.ptr = watch };

	return epoll_ctl(iface->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void p4t_shm_timer_arm_ms(struct p4t_shm_iface *iface,
			  struct p4u_timer *timer, uint64_t ms)
{
	p4u_timer_arm(iface->timers, timer, p4u_time_ns() + ms * 1000000);
}

/* ---- progress ---------------------------------------------------------------------- */

static int p4t_shm_epoll_run(struct p4t_shm_iface *iface)
{
	struct epoll_event evs[P4T_SHM_EPOLL_EVENTS];
	struct p4t_shm_watch *w;
	uint64_t val;
	int i, n;

	iface->stats.epoll_calls++;
	n = epoll_wait(iface->epfd, evs, P4T_SHM_EPOLL_EVENTS, 0);
	for (i = 0; i < n; i++) {
		w = evs[i].data.ptr;
		switch (w->kind) {
		case P4T_SHM_W_LISTEN:
			p4t_shm_accept(iface);
			break;
		case P4T_SHM_W_WAKE:
			/* the rings are read below whatever it says */
			if (read(iface->wake_fd, &val, sizeof(val)) < 0)
				val = 0;
			break;
		case P4T_SHM_W_CONN:
			p4t_shm_conn_sock_event(w->obj);
			break;
		case P4T_SHM_W_PEND:
			p4t_shm_pend_event(w->obj);
			break;
		default:
			break;	/* efd: the event queue is run anyway */
		}
	}
	return n > 0 ? n : 0;
}

/* Free what died; nothing may point at it once progress returns. */
static void p4t_shm_reap(struct p4t_shm_iface *iface)
{
	struct p4t_shm_conn *conn, *ctmp;
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&iface->dead_pend)))
		free(container_of(node, struct p4t_shm_pend, node));
	p4u_list_foreach_entry_safe(&iface->dead, conn, ctmp,
				    struct p4t_shm_conn, node) {
		if (conn->busy)
			continue;
		p4u_list_remove(&conn->node);
		p4t_shm_conn_free(conn);
	}
}

/*
 * *settling: a link is still being made (its socket has news soon). Few
 * links: every ring is read; more: those the doorbells name
 * (p4t_shm_bell.c).
 */
static int p4t_shm_rings_run(struct p4t_shm_iface *iface, int budget,
			     bool *settling)
{
	struct p4t_shm_conn *conn, *tmp;
	int done = 0;

	p4u_list_foreach_entry_safe(&iface->backlog, conn, tmp,
				    struct p4t_shm_conn, backlog)
		done += p4t_shm_txq_drain(conn);
	*settling = !p4u_list_empty(&iface->pend);
	if (p4t_shm_bells_due(iface))
		return done + p4t_shm_bells_run(iface, budget, done, settling);
	p4u_list_foreach_entry_safe(&iface->conns, conn, tmp,
				    struct p4t_shm_conn, node) {
		if (done >= budget) {
			/* the next call starts here: a link that always has
			 * a budget's worth waiting must not starve the rest */
			p4u_list_rotate_to(&iface->conns, &conn->node);
			break;
		}
		if (conn->state != P4T_SHM_CONN_UP)
			*settling = true;
		iface->stats.ring_polls++;
		done += p4t_shm_ring_rx(conn, P4U_MIN(budget - done,
						      P4T_SHM_READS));
	}
	return done;
}

/*
 * Sockets (new links, handshakes, peers leaving) are asked every few
 * calls while the rings stream; when they are idle, at once after a
 * sleep or while a link is being made, else every P4T_SHM_IDLE_EPOLL_NS:
 * a waiting process spins on the rings without a system call. The clock
 * (about 30 ns a read) is looked at only every 16th idle call, as the
 * TCP transport does.
 */
static bool p4t_shm_epoll_due(struct p4t_shm_iface *iface, int rings,
			      bool woke, bool settling)
{
	if (rings)
		return !(iface->tick++ % P4T_SHM_EPOLL_EVERY);
	if (woke || settling) {
		iface->idle_epoll_ns = p4u_time_ns();
		return true;
	}
	return !(++iface->idle_tick % 16) &&
	       p4u_time_due(&iface->idle_epoll_ns, P4T_SHM_IDLE_EPOLL_NS);
}

static int p4t_shm_progress(struct p4t_iface *iface_, int budget)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn;
	bool woke = iface->armed, settling;
	int done, rings;

	iface->in_progress = true;
	if (woke) {
		/* we slept: peers may write our eventfd no more */
		iface->armed = false;
		p4u_list_foreach_entry(&iface->conns, conn,
				       struct p4t_shm_conn, node)
			p4t_shm_ring_disarm(conn);
		iface->tick = 0;
	}
	done = p4u_list_empty(&iface->cma_reads) ? 0 : p4t_shm_cma_run(iface);
	done += p4t_shm_events_run(iface, budget);
	rings = p4t_shm_rings_run(iface, budget > done ? budget - done : 1,
				  &settling);
	done += rings;
	if (p4t_shm_epoll_due(iface, rings, woke, settling))
		done += p4t_shm_epoll_run(iface);
	if (done < budget)
		done += p4t_shm_events_run(iface, budget - done);
	iface->in_progress = false;
	if (!p4u_list_empty(&iface->dead) || !p4u_list_empty(&iface->dead_pend))
		p4t_shm_reap(iface);
	p4t_shm_signal(iface);
	return done;
}

static int p4t_shm_wait_fd(struct p4t_iface *iface)
{
	return p4t_shm_iface_of(iface)->epfd;
}

static int p4t_shm_wait_arm(struct p4t_iface *iface_)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn;
	uint64_t val;
	int work = 0;

	/* a stale count from an earlier wake-up must not wake us now */
	if (read(iface->wake_fd, &val, sizeof(val)) < 0)
		val = 0;
	iface->armed = true;
	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_shm_conn, node)
		work += p4t_shm_ring_arm(conn);
	if (p4t_shm_queued(iface))
		work++;
	return work;
}

static void p4t_shm_flush(struct p4t_iface *iface)
{
	(void)iface;	/* batched sends went at once */
}

static bool p4t_shm_owes(struct p4t_iface *iface_)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn;

	p4u_list_foreach_entry(&iface->conns, conn, struct p4t_shm_conn,
			       node) {
		if (!p4t_shm_conn_live(conn))
			continue;
		if (!p4u_list_empty(&conn->txq) || p4t_shm_ring_unread(conn))
			return true;
	}
	return false;
}

/* ---- open and close ------------------------------------------------------------------ */

static uint64_t p4t_shm_random(void)
{
	uint64_t val;

	if (getrandom(&val, sizeof(val), GRND_NONBLOCK) == sizeof(val))
		return val;
	/* no entropy yet (early boot): unique enough per process and time */
	return p4u_hash_combine(p4u_time_ns(), (uint64_t)getpid());
}

static int p4t_shm_listen(struct p4t_shm_iface *iface)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd, ret;

	ret = p4t_shm_name(&iface->key, iface->name, &iface->name_len);
	if (ret)
		return ret;
	memcpy(sun.sun_path, iface->name,
	       iface->name_len - offsetof(struct sockaddr_un, sun_path));
	len = iface->name_len;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, len) || listen(fd, 1024)) {
		ret = errno == EADDRINUSE ? -FI_EADDRINUSE : -errno;
		close(fd);
		return ret;
	}
	iface->listen_fd = fd;
	return 0;
}

static int p4t_shm_fds_open(struct p4t_shm_iface *iface)
{
	int ret;

	iface->epfd = epoll_create1(EPOLL_CLOEXEC);
	iface->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	iface->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (iface->epfd < 0 || iface->efd < 0 || iface->wake_fd < 0)
		return -errno;
	ret = p4t_shm_listen(iface);
	if (!ret)
		ret = p4t_shm_watch_add(iface, iface->listen_fd,
					&iface->w_listen);
	if (!ret)
		ret = p4t_shm_watch_add(iface, iface->efd, &iface->w_events);
	if (!ret)
		ret = p4t_shm_watch_add(iface, iface->wake_fd, &iface->w_wake);
	return ret;
}

static int p4t_shm_pools_init(struct p4t_shm_iface *iface)
{
	int ret;

	ret = p4u_pool_init(&iface->txs, sizeof(struct p4t_shm_tx), 256,
			    1u << 22);
	if (!ret)
		ret = p4u_pool_init(&iface->bufs, P4T_SHM_BUF_SIZE, 16,
				    1u << 16);
	if (!ret)
		ret = p4u_pool_init(&iface->rmas, sizeof(struct p4t_shm_rma),
				    64, 1u << 20);
	if (!ret)
		ret = p4u_pool_init(&iface->mems, sizeof(struct p4t_shm_mem),
				    256, 1u << 24);
	if (!ret)
		ret = p4u_hash_init(&iface->by_addr, 64);
	return ret;
}

static void p4t_shm_iface_free(struct p4t_shm_iface *iface)
{
	if (iface->listen_fd >= 0)
		close(iface->listen_fd);
	if (iface->efd >= 0)
		close(iface->efd);
	if (iface->wake_fd >= 0)
		close(iface->wake_fd);
	if (iface->epfd >= 0)
		close(iface->epfd);
	p4t_shm_inbox_close(iface);
	p4u_hash_fini(&iface->by_addr);
	p4u_pool_fini(&iface->mems);
	p4u_pool_fini(&iface->rmas);
	p4u_pool_fini(&iface->bufs);
	p4u_pool_fini(&iface->txs);
	free(iface);
}

static void p4t_shm_iface_init(struct p4t_shm_iface *iface,
			       const struct p4t_iface_config *cfg)
{
	const char *cma = getenv("FI_PORTALS_SHM_CMA");

	iface->base.ops = &p4t_shm_ops;
	iface->listen_fd = iface->epfd = iface->efd = iface->wake_fd = -1;
	iface->inbox_fd = -1;
	iface->w_listen.kind = P4T_SHM_W_LISTEN;
	iface->w_events.kind = P4T_SHM_W_EVENTS;
	iface->w_wake.kind = P4T_SHM_W_WAKE;
	iface->auth_key = cfg->auth_key;
	iface->upcalls = cfg->upcalls;
	iface->upcall_ctx = cfg->upcall_ctx;
	iface->timers = cfg->timers;
	iface->peer_timeout_ms = cfg->peer_timeout_ms ? cfg->peer_timeout_ms :
				 P4T_SHM_TIMEOUT_DEFAULT;
	iface->connect_retry_ms = cfg->connect_retry_ms ?
				  P4U_MIN(cfg->connect_retry_ms,
					  iface->peer_timeout_ms) :
				  iface->peer_timeout_ms;
	iface->queue_limit = P4T_SHM_QUEUE_LIMIT;
	iface->cma = !(cma && !strcmp(cma, "0"));
	iface->session = p4t_shm_random();
	iface->salt = p4t_shm_random();
	p4u_list_init(&iface->conns);
	p4u_list_init(&iface->backlog);
	p4u_list_init(&iface->dead);
	p4u_list_init(&iface->pend);
	p4u_list_init(&iface->dead_pend);
	p4u_list_init(&iface->evq);
	p4u_list_init(&iface->cma_reads);
	p4u_list_init(&iface->rescan);
	iface->bell_links = P4T_SHM_BELL_LINKS;
	iface->bell_full = P4T_SHM_BELL_FULL;
	iface->bell_hot_calls = P4T_SHM_BELL_HOT;
	iface->bell_ring = true;
	iface->cma_gen = 0;
	iface->cma_starved_ns = P4T_SHM_CMA_STARVED_NS;
}

/* The network address with a port; stamped for getname, cleared as key. */
static int p4t_shm_iface_addr(struct p4t_shm_iface *iface,
			      const struct p4t_iface_config *cfg)
{
	const struct sockaddr_in *sin = cfg->addr;
	const struct sockaddr_in6 *sin6 = cfg->addr;
	int ret;

	ret = p4t_shm_addr_parse(cfg->addr, cfg->addrlen, &iface->key,
				 &iface->addrlen);
	if (ret)
		return ret;
	if (iface->key.ss_family == AF_INET ? !sin->sin_port :
					      !sin6->sin6_port)
		return -FI_EINVAL;
	iface->addr = iface->key;
	p4u_addr_stamp(&iface->addr, iface->addrlen, p4u_host_token());
	return 0;
}

static int p4t_shm_iface_open(const struct p4t_iface_config *cfg,
			      struct p4t_iface **iface_p)
{
	const struct p4t_upcalls *up = cfg ? cfg->upcalls : NULL;
	struct p4t_shm_iface *iface;
	int ret;

	if (!cfg || !iface_p || !up || !cfg->timers || !cfg->addr ||
	    !up->recv || !up->send_done || !up->rma_done || !up->conn_new ||
	    !up->conn_failed)
		return -FI_EINVAL;
	iface = calloc(1, sizeof(*iface));
	if (!iface)
		return -FI_ENOMEM;
	p4t_shm_iface_init(iface, cfg);
	ret = p4t_shm_iface_addr(iface, cfg);
	if (!ret)
		ret = p4t_shm_pools_init(iface);
	if (!ret)
		ret = p4t_shm_fds_open(iface);
	if (!ret)
		ret = p4t_shm_inbox_open(iface);
	if (ret) {
		p4u_info(P4U_LOG_TRANSPORT, "shm: iface open failed: %s",
			 fi_strerror(-ret));
		p4t_shm_iface_free(iface);
		return ret;
	}
	p4u_info(P4U_LOG_TRANSPORT, "shm: listening on @%s%s",
		 iface->name + 1, iface->cma ? "" : " (no cross-memory attach)");
	*iface_p = (struct p4t_iface *)iface;
	return 0;
}

/*
 * Every link goes (peers see EOF and conn_failed once they read what we
 * wrote); pending pulls and pushes complete here with
 * rma_done(-FI_ECONNABORTED); no other upcall.
 */
static void p4t_shm_iface_close(struct p4t_iface *iface_)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn, *ctmp;
	struct p4t_shm_pend *pend, *ptmp;
	struct p4t_shm_ev *ev;
	struct p4u_list *node;

	if (iface->stats.malformed || iface->stats.auth_refused ||
	    iface->stats.cred_refused || iface->stats.silent_closed)
		p4u_warn(P4U_LOG_TRANSPORT, "shm: @%s closing: %llu malformed, "
			 "%llu auth refused, %llu credentials refused, %llu "
			 "silent connections closed",
			 iface->name + 1,
			 (unsigned long long)iface->stats.malformed,
			 (unsigned long long)iface->stats.auth_refused,
			 (unsigned long long)iface->stats.cred_refused,
			 (unsigned long long)iface->stats.silent_closed);
	p4u_info(P4U_LOG_TRANSPORT, "shm: @%s closing: %llu messages sent, "
		 "%llu received (%llu in place); %llu pulls, %llu pushes, "
		 "%llu KiB by cross-memory attach (%llu read steps after a "
		 "stall), %llu KiB through the ring; %llu wake-ups sent; "
		 "%llu ring reads, %llu of them rung, %llu calls read all",
		 iface->name + 1,
		 (unsigned long long)iface->stats.msgs_sent,
		 (unsigned long long)iface->stats.msgs_recv,
		 (unsigned long long)iface->stats.recv_in_place,
		 (unsigned long long)iface->stats.pulls,
		 (unsigned long long)iface->stats.pushes,
		 (unsigned long long)(iface->stats.cma_bytes >> 10),
		 (unsigned long long)iface->stats.cma_starved,
		 (unsigned long long)(iface->stats.ring_rma_bytes >> 10),
		 (unsigned long long)iface->stats.wakeups_sent,
		 (unsigned long long)iface->stats.ring_polls,
		 (unsigned long long)iface->stats.bell_polls,
		 (unsigned long long)iface->stats.full_polls);
	iface->closing = true;
	p4u_list_foreach_entry_safe(&iface->conns, conn, ctmp,
				    struct p4t_shm_conn, node)
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ECONNABORTED);
	while ((node = p4u_list_pop_head(&iface->evq))) {
		ev = container_of(node, struct p4t_shm_ev, node);
		if (ev->kind == P4T_SHM_EV_RMA_DONE)
			p4t_shm_ev_run(iface, ev);
		else if (ev->kind == P4T_SHM_EV_SEND_DONE)
			p4t_shm_tx_free(iface, container_of(ev,
					struct p4t_shm_tx, ev));
	}
	p4u_list_foreach_entry_safe(&iface->pend, pend, ptmp,
				    struct p4t_shm_pend, node)
		p4t_shm_pend_close(pend);
	p4u_list_splice_tail(&iface->dead, &iface->conns);
	p4u_list_foreach_entry(&iface->dead, conn, struct p4t_shm_conn, node)
		conn->busy = false;
	p4t_shm_reap(iface);
	p4t_shm_mem_free_all(iface);
	p4t_shm_iface_free(iface);
}

static void p4t_shm_iface_query(struct p4t_iface *iface_,
				struct p4t_iface_attr *attr)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);

	attr->max_inline = P4T_SHM_MAX_INLINE;
	attr->max_msg = P4T_SHM_MAX_MSG;
	attr->max_rma = SIZE_MAX;
	attr->rma_native = false;
	attr->max_offer = 0;
	attr->addr_len = iface->addrlen;
}

static int p4t_shm_getname(struct p4t_iface *iface_, void *addr,
			   size_t *addrlen)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);

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

/* The link to addr, made now; -FI_EHOSTUNREACH: use another transport. */
static int p4t_shm_conn_get(struct p4t_iface *iface_, const void *addr,
			    size_t addrlen, struct p4t_conn **conn_p)
{
	struct p4t_shm_iface *iface = p4t_shm_iface_of(iface_);
	struct p4t_shm_conn *conn;
	struct sockaddr_storage ss;
	socklen_t len;
	int ret;

	ret = p4t_shm_addr_parse(addr, addrlen, &ss, &len);
	if (ret || !conn_p)
		return ret ? ret : -FI_EINVAL;
	if (!p4u_addr_maybe_local(addr, addrlen) ||
	    !p4t_shm_addr_cmp(&ss, len, &iface->key, iface->addrlen)) {
		iface->stats.unreachable++;
		return -FI_EHOSTUNREACH;
	}
	conn = p4t_shm_conn_find(iface, &ss, len);
	if (!conn) {
		ret = p4t_shm_conn_open(iface, &ss, len, &conn);
		if (ret) {
			if (ret == -FI_EHOSTUNREACH)
				iface->stats.unreachable++;
			return ret;
		}
	}
	conn->known = true;
	*conn_p = &conn->base;
	return 0;
}

const struct p4t_ops p4t_shm_ops = {
	.name = "shm",
	.iface_open = p4t_shm_iface_open,
	.iface_close = p4t_shm_iface_close,
	.iface_query = p4t_shm_iface_query,
	.getname = p4t_shm_getname,
	.conn_get = p4t_shm_conn_get,
	.send = p4t_shm_send,
	.mem_expose = p4t_shm_mem_expose,
	.mem_unexpose = p4t_shm_mem_unexpose,
	.pull = p4t_shm_pull,
	.push = p4t_shm_push,
	.conn_close = p4t_shm_conn_close,
	.progress = p4t_shm_progress,
	.flush = p4t_shm_flush,
	.wait_fd = p4t_shm_wait_fd,
	.wait_arm = p4t_shm_wait_arm,
	.owes = p4t_shm_owes,
};

/* ---- hooks (p4t_shm.h) -------------------------------------------------------------- */

static struct p4t_shm_iface *p4t_shm_hook_iface(struct p4t_iface *iface)
{
	return iface && p4t_ops_of(iface) == &p4t_shm_ops ?
	       p4t_shm_iface_of(iface) : NULL;
}

int p4t_shm_stats(struct p4t_iface *iface_, struct p4t_shm_stats *stats)
{
	struct p4t_shm_iface *iface = p4t_shm_hook_iface(iface_);

	if (!iface || !stats)
		return -FI_EINVAL;
	*stats = iface->stats;
	return 0;
}

void p4t_shm_set_cma(struct p4t_iface *iface_, bool on)
{
	struct p4t_shm_iface *iface = p4t_shm_hook_iface(iface_);

	if (iface)
		iface->cma = on;
}

void p4t_shm_set_bells(struct p4t_iface *iface_, unsigned links,
		       unsigned full, unsigned hot, bool ring)
{
	struct p4t_shm_iface *iface = p4t_shm_hook_iface(iface_);

	if (!iface)
		return;
	iface->bell_links = links;
	iface->bell_full = full;
	iface->bell_hot_calls = hot;
	iface->bell_ring = ring;
}

void p4t_shm_set_starved_ns(struct p4t_iface *iface_, uint64_t ns)
{
	struct p4t_shm_iface *iface = p4t_shm_hook_iface(iface_);

	if (iface)
		iface->cma_starved_ns = ns;
}

void p4t_shm_set_queue_limit(struct p4t_iface *iface_, size_t bytes)
{
	struct p4t_shm_iface *iface = p4t_shm_hook_iface(iface_);

	if (iface)
		iface->queue_limit = bytes ? bytes : P4T_SHM_QUEUE_LIMIT;
}
