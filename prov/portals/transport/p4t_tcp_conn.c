/*
 * p4t_tcp_conn.c - TCP links: creation and lookup, the outgoing connect
 * (retried while refused) and the link's own deadlines (timers on the
 * owner's queue), adopting the socket a handshake made, failures
 * (operations aborted, conn_failed queued), conn_close; and the iovec
 * and errno helpers the other files share.
 *
 * Not here: sockets before they are a link's, accept and their deadlines
 * (p4t_tcp_sock.c), the handshake (p4t_tcp_hs.c), the send path and the
 * write queue (p4t_tcp_send.c), the receive path (p4t_tcp_rx.c),
 * emulated RDMA (p4t_tcp_rma.c).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* ---- iovec helpers --------------------------------------------------------- */

/* Describe [off, off + len) of iov in at most max entries; returns count. */
size_t p4t_tcp_iov_slice(const struct iovec *iov, size_t iovcnt,
			 uint64_t off, size_t len, struct iovec *out,
			 size_t max)
{
	size_t i, n = 0, take;

	for (i = 0; i < iovcnt && len && n < max; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

void p4t_tcp_iov_copy_in(const struct iovec *iov, size_t iovcnt, uint64_t off,
			 const void *src, size_t len)
{
	const uint8_t *p = src;
	size_t i, take;

	for (i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		memcpy((uint8_t *)iov[i].iov_base + off, p, take);
		p += take;
		len -= take;
		off = 0;
	}
}

void p4t_tcp_iov_copy_out(void *dst, const struct iovec *iov, size_t iovcnt,
			  uint64_t off, size_t len)
{
	uint8_t *p = dst;
	size_t i, take;

	for (i = 0; i < iovcnt && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = P4U_MIN(len, iov[i].iov_len - off);
		memcpy(p, (const uint8_t *)iov[i].iov_base + off, take);
		p += take;
		len -= take;
		off = 0;
	}
}

/* A socket errno as a link status; fi_errno values are errno values. */
int p4t_tcp_errno_status(int err)
{
	switch (err) {
	case EPIPE:
	case ECONNRESET:
		return -FI_ECONNRESET;
	case 0:
		return -FI_EIO;
	default:
		return -err;
	}
}

/* ---- links ---------------------------------------------------------------- */

struct p4t_tcp_conn *p4t_tcp_conn_find(struct p4t_tcp_iface *iface,
				       const struct sockaddr_storage *ss,
				       socklen_t len)
{
	uint64_t h = p4t_tcp_addr_hash(ss, len);
	struct p4t_tcp_conn *conn;

	p4u_hash_foreach(&iface->by_addr, h, conn, struct p4t_tcp_conn, hnode)
		if (p4t_tcp_addr_eq(&conn->addr, conn->addrlen, ss, len))
			return conn;
	return NULL;
}

/*
 * A connecting link's own deadline passed with no attempt of ours in
 * flight: the peer we wait for after a collision never connected, or
 * (refused, a retry still pending) the time for retries ran out.
 */
static void p4t_tcp_conn_expired(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4t_tcp_conn *conn = container_of(timer, struct p4t_tcp_conn,
						 deadline_timer);

	(void)now_ns;
	p4t_tcp_conn_fail(conn, p4u_timer_armed(&conn->retry_timer) ?
			  -FI_ECONNREFUSED : -FI_ETIMEDOUT);
}

/* The pause after a refusal is over: connect again. */
static void p4t_tcp_conn_retry(struct p4u_timer *timer, uint64_t now_ns)
{
	(void)now_ns;
	p4t_tcp_conn_reconnect(container_of(timer, struct p4t_tcp_conn,
					    retry_timer));
}

/* Stop timing conn: it is up, failed or closed. */
static void p4t_tcp_conn_timers_cancel(struct p4t_tcp_conn *conn)
{
	p4u_timer_cancel(conn->iface->timers, &conn->deadline_timer);
	p4u_timer_cancel(conn->iface->timers, &conn->retry_timer);
}

/*
 * A connecting link with no attempt in flight waits for its own deadline
 * (set at creation or by a collision): a retry, or the peer's socket, has
 * to make it before.
 */
void p4t_tcp_conn_wait_peer(struct p4t_tcp_conn *conn)
{
	p4u_timer_arm(conn->iface->timers, &conn->deadline_timer,
		      conn->deadline_ns);
}

struct p4t_tcp_conn *p4t_tcp_conn_create(struct p4t_tcp_iface *iface,
					 const struct sockaddr_storage *ss,
					 socklen_t len)
{
	struct p4t_tcp_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->addr = *ss;
	conn->addrlen = len;
	conn->state = P4T_TCP_CONN_CONNECTING;
	conn->deadline_ns = p4u_time_ns() +
			    iface->peer_timeout_ms * 1000000ull;
	conn->retry_end_ns = p4u_time_ns() +
			     iface->connect_retry_ms * 1000000ull;
	p4u_timer_init(&conn->deadline_timer, p4t_tcp_conn_expired);
	p4u_timer_init(&conn->retry_timer, p4t_tcp_conn_retry);
	p4t_tcp_conn_wait_peer(conn);
	p4u_list_init(&conn->txq);
	p4u_list_init(&conn->unconfirmed);
	p4u_list_init(&conn->pulls);
	p4u_list_node_init(&conn->active);
	p4u_list_node_init(&conn->backlog);
	p4u_list_node_init(&conn->corked);
	p4u_list_node_init(&conn->fail_ev.node);
	conn->fail_ev.kind = P4T_TCP_EV_CONN_FAILED;
	p4u_hash_insert(&iface->by_addr, &conn->hnode,
			p4t_tcp_addr_hash(ss, len));
	conn->hashed = true;
	p4u_list_insert_tail(&iface->conns, &conn->node);
	iface->nconnecting++;
	iface->stats.links++;
	return conn;
}

/* Start the outgoing socket of a CONNECTING link. */
int p4t_tcp_conn_connect(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4t_tcp_sock *sock;
	int fd, ret;

	fd = socket(conn->addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sock = p4t_tcp_sock_new(iface, fd);
	if (!sock) {
		close(fd);
		return -FI_ENOMEM;
	}
	sock->outgoing = true;
	sock->conn = conn;
	sock->state = P4T_TCP_SOCK_CONNECTING;
	(void)p4t_tcp_sock_setup(iface, fd);
	if (connect(fd, (struct sockaddr *)&conn->addr, conn->addrlen) &&
	    errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		free(sock);
		return ret;
	}
	p4t_tcp_hello_pack(iface, P4W_T_HELLO, sock->ctl);
	sock->ctl_len = P4T_TCP_HELLO_LEN;
	ret = p4t_tcp_sock_watch(sock, EPOLLOUT | EPOLLIN);
	if (ret) {
		close(fd);
		free(sock);
		return ret;
	}
	/* the attempt has the peer timeout to connect and be answered */
	p4t_tcp_pending_add(sock, iface->peer_timeout_ms);
	conn->sock = sock;
	p4u_timer_cancel(iface->timers, &conn->deadline_timer);
	iface->stats.connects++;
	/*
	 * A local peer's kernel has usually completed the connect by now:
	 * the HELLO and what is queued go at once (p4t_tcp_hs_pipeline), so
	 * they need no further call of ours.
	 */
	p4t_tcp_hs_pipeline(conn);
	return 0;
}

/* Connect, or after a refusal, connect again (or wait and retry). */
void p4t_tcp_conn_reconnect(struct p4t_tcp_conn *conn)
{
	int ret = p4t_tcp_conn_connect(conn);

	if (!ret || (ret == -ECONNREFUSED && p4t_tcp_conn_retry_later(conn)))
		return;
	/* reported from progress, as on a network */
	p4t_tcp_conn_fail(conn, ret == -ECONNREFUSED ? -FI_ECONNREFUSED : ret);
}

/*
 * A connect refused by the peer's host: its process may simply not listen
 * yet (jobs start in any order, and tcp;ofi_rxm and net wait for it too).
 * Failing the link would fail what was queued for it, and an eager send
 * copied out already reported success: the message would be lost. So the
 * link stays CONNECTING and its retry timer connects again after a
 * pause, till the peer timeout; false when that has run out.
 */
bool p4t_tcp_conn_retry_later(struct p4t_tcp_conn *conn)
{
	uint64_t now = p4u_time_ns();

	conn->backoff_ms = conn->backoff_ms ?
		P4U_MIN(conn->backoff_ms * 2, (uint32_t)P4T_TCP_RETRY_MAX_MS) :
		P4T_TCP_RETRY_MIN_MS;
	/* retried for connect_retry_ms (a peer starting), never past the
	 * link's deadline: then the refusal is the answer */
	if (now + conn->backoff_ms * 1000000ull >=
	    P4U_MIN(conn->deadline_ns, conn->retry_end_ns))
		return false;
	/* the link's deadline, after the retry, times it again from here */
	if (conn->sock)
		p4t_tcp_sock_close(conn->sock);
	p4t_tcp_timer_arm_ms(conn->iface, &conn->retry_timer, now,
			     conn->backoff_ms);
	return true;
}

/* sock finished its handshake for conn: from now on it is the link. */
int p4t_tcp_conn_adopt(struct p4t_tcp_conn *conn, struct p4t_tcp_sock *sock)
{
	struct p4t_tcp_iface *iface = conn->iface;

	if (!conn->rx.buf) {
		conn->rx.buf = malloc(P4T_TCP_STAGE);
		if (!conn->rx.buf)
			return -FI_ENOMEM;
	}
	/* our own attempt, if another socket wins, gives its pipelined
	 * messages back to txq (p4t_tcp_sock_close) */
	if (conn->sock && conn->sock != sock)
		p4t_tcp_sock_close(conn->sock);
	p4u_list_remove(&sock->node);
	p4u_timer_cancel(iface->timers, &sock->timer);
	if (sock->state == P4T_TCP_SOCK_HELLO_WAIT)
		iface->naccepted--;
	sock->state = P4T_TCP_SOCK_ESTABLISHED;
	sock->conn = conn;
	conn->sock = sock;
	conn->state = P4T_TCP_CONN_ESTABLISHED;
	/* a retry may still be pending: the peer's own socket got here */
	p4t_tcp_conn_timers_cancel(conn);
	conn->wblocked = false;
	iface->nconnecting--;
	iface->nestablished++;
	p4u_list_insert_tail(&iface->established, &conn->active);
	iface->stats.handshakes++;
	/* what went behind this socket's HELLO is the link's now */
	p4t_tcp_hs_confirm(conn);
	p4t_tcp_conn_want_out(conn);
	return 0;
}

/*
 * EPOLLOUT only while something waits to be written: on the link's
 * socket, or on our attempt once it connected (HELLO_SENT: pipelined).
 */
void p4t_tcp_conn_want_out(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_sock *sock = conn->sock;
	uint32_t ev = EPOLLIN;

	if (!sock || (sock->state != P4T_TCP_SOCK_ESTABLISHED &&
		      sock->state != P4T_TCP_SOCK_HELLO_SENT))
		return;
	if (p4t_tcp_conn_has_out(conn))
		ev |= EPOLLOUT;
	(void)p4t_tcp_sock_watch(sock, ev);
}

/* ---- failure and close ------------------------------------------------------- */

static void p4t_tcp_conn_abort_txq(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;
	struct p4u_list *node;
	struct p4t_tcp_tx *tx;

	while ((node = p4u_list_pop_head(&conn->txq))) {
		tx = container_of(node, struct p4t_tcp_tx, ev.node);
		if (tx->kind != P4T_TCP_TX_MSG) {
			p4t_tcp_rma_abort(tx->rma, -FI_ECONNABORTED);
		} else if (tx->notify) {
			tx->ev.kind = P4T_TCP_EV_SEND_DONE;
			tx->ev.status = -FI_ECONNABORTED;
			p4t_tcp_ev_post(iface, &tx->ev);
		} else {
			p4t_tcp_tx_free(iface, tx);
		}
	}
	conn->txq_bytes = 0;
	conn->nstreams = 0;
}

static void p4t_tcp_conn_abort_pulls(struct p4t_tcp_conn *conn)
{
	struct p4u_list *node;

	while ((node = p4u_list_pop_head(&conn->pulls)))
		p4t_tcp_rma_abort(container_of(node, struct p4t_tcp_rma, link),
				  -FI_ECONNABORTED);
}

/* Unfindable, socket closed, operations aborted (events queued). */
static void p4t_tcp_conn_down(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_iface *iface = conn->iface;

	if (conn->hashed)
		p4u_hash_remove(&iface->by_addr, &conn->hnode);
	conn->hashed = false;
	if (conn->state == P4T_TCP_CONN_CONNECTING)
		iface->nconnecting--;
	if (p4u_list_node_linked(&conn->active)) {
		p4u_list_remove(&conn->active);
		iface->nestablished--;
	}
	p4u_list_remove(&conn->backlog);
	p4u_list_remove(&conn->corked);
	if (conn->sock)
		p4t_tcp_sock_close(conn->sock);
	conn->sock = NULL;
	p4t_tcp_hs_rewind(conn);	/* aborted with txq below */
	p4t_tcp_conn_timers_cancel(conn);
	free(conn->rx.big);
	conn->rx.big = NULL;
	conn->rx.pull = NULL;
	conn->rx.mem = NULL;
	conn->rx.offer = P4T_TCP_OFFER_NONE;
	conn->rx.offer_pull = NULL;	/* on conn->pulls: aborted below */
	conn->rx.mode = P4T_TCP_RX_PARSE;
	conn->rx.head = conn->rx.tail = 0;
	p4t_tcp_conn_abort_txq(conn);
	p4t_tcp_conn_abort_pulls(conn);
	p4t_tcp_mem_forget_conn(conn);
	iface->stats.links--;
}

/* The link fails: its operations complete with errors, then conn_failed. */
void p4t_tcp_conn_fail(struct p4t_tcp_conn *conn, int status)
{
	char buf[64];

	if (conn->state != P4T_TCP_CONN_CONNECTING &&
	    conn->state != P4T_TCP_CONN_ESTABLISHED)
		return;
	p4u_info(P4U_LOG_TRANSPORT, "tcp: link to %s down: %s",
		 p4t_tcp_addr_str(&conn->addr, buf, sizeof(buf)),
		 fi_strerror(-status));
	p4t_tcp_conn_down(conn);
	conn->state = P4T_TCP_CONN_FAILED;
	conn->iface->stats.link_failures++;
	conn->fail_ev.status = status;
	p4t_tcp_ev_post(conn->iface, &conn->fail_ev);
}

void p4t_tcp_conn_free(struct p4t_tcp_conn *conn)
{
	/* not armed past conn_down; the self link never armed them */
	if (!conn->self)
		p4t_tcp_conn_timers_cancel(conn);
	free(conn->rx.buf);
	free(conn->rx.big);
	free(conn);
}

/* Best effort: a BYE when no message is half written. */
void p4t_tcp_conn_bye(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_tx *tx;
	uint8_t bye[P4T_TCP_HDR_LEN];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_BYE,
		.length = P4T_TCP_HDR_LEN,
	};

	if (conn->state != P4T_TCP_CONN_ESTABLISHED)
		return;
	tx = p4u_list_first_entry(&conn->txq, struct p4t_tcp_tx, ev.node);
	if ((tx && tx->done) || conn->sock->ctl_off != conn->sock->ctl_len)
		return;
	p4w_hdr_pack(bye, &hdr);
	(void)send(conn->sock->fd, bye, sizeof(bye),
		   MSG_DONTWAIT | MSG_NOSIGNAL);
}

void p4t_tcp_conn_close(struct p4t_iface *iface_, struct p4t_conn *conn_)
{
	struct p4t_tcp_iface *iface = p4t_tcp_iface_of(iface_);
	struct p4t_tcp_conn *conn = p4t_tcp_conn_of(conn_);
	struct p4t_tcp_selfmsg *msg;
	struct p4u_list *node;

	if (conn->state == P4T_TCP_CONN_CLOSED)
		return;
	if (conn->self) {
		while ((node = p4u_list_pop_head(&iface->selfq))) {
			msg = container_of(node, struct p4t_tcp_selfmsg, node);
			free(msg);
		}
		iface->selfq_bytes = 0;
		iface->self = NULL;
		p4t_tcp_mem_forget_conn(conn);
	} else if (conn->state != P4T_TCP_CONN_FAILED) {
		p4t_tcp_conn_bye(conn);
		p4t_tcp_conn_down(conn);
	}
	/* the engine closed it: no conn_failed */
	p4u_list_remove(&conn->fail_ev.node);
	conn->state = P4T_TCP_CONN_CLOSED;
	p4u_list_remove(&conn->node);
	p4u_list_insert_tail(&iface->dead, &conn->node);
	p4t_tcp_signal(iface);
}
