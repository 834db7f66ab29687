/*
 * p4t_tcp_hs.c - the HELLO / HELLO_ACK / BYE handshake of TCP links, with
 * its collision and restart rules (p4t_tcp_hs_event, called for sockets
 * that are not yet a link's).
 *
 * Socket life: an outgoing socket is CONNECTING, then HELLO_SENT once its
 * connect completed, then ESTABLISHED on a valid HELLO_ACK; a BYE instead
 * means the peer keeps its own socket to us (collision) and the link
 * waits for it. An accepted socket is HELLO_WAIT until a valid HELLO,
 * then either becomes the link's socket (answered HELLO_ACK) or is
 * answered BYE and closed. Handshake reads take exactly one message:
 * what follows belongs to the link. A connect refused by the peer's host
 * is retried (p4t_tcp_conn_retry_later in p4t_tcp_conn.c).
 *
 * Pipelined: the caller does not wait for the HELLO_ACK. As soon as its
 * connect completed (checked right after connect(), at every send and
 * in progress: p4t_tcp_hs_pipeline), the HELLO and the whole messages
 * queued behind it are written, so the kernel delivers them without
 * another call of the sender's (docs/tcp.md). The callee reads
 * the HELLO alone and, if it takes the socket, the rest as the link's.
 * Written messages wait on conn->unconfirmed: the HELLO_ACK confirms
 * them (p4t_tcp_hs_confirm, at adopt); if that socket does not become
 * the link (BYE: the peer keeps its socket; our attempt closed for the
 * peer's; a refusal), the peer read none of them past the HELLO and they
 * go back, whole and in order, to the head of txq for the socket that
 * does (p4t_tcp_hs_rewind, at p4t_tcp_sock_close). The side that answers
 * BYE drains the losing socket before closing it (p4t_tcp_sock_close),
 * so the loser reads the BYE, not a reset, and nothing is lost or
 * delivered twice.
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* ---- pipelining ---------------------------------------------------------------- */

/* The HELLO_ACK came on the socket that carried them: they are sent. */
void p4t_tcp_hs_confirm(struct p4t_tcp_conn *conn)
{
	struct p4u_list *node;
	struct p4t_tcp_tx *tx;

	while ((node = p4u_list_pop_head(&conn->unconfirmed))) {
		tx = container_of(node, struct p4t_tcp_tx, ev.node);
		p4t_tcp_tx_done(conn->iface, tx);
	}
}

/*
 * The socket that carried them is gone unanswered: the peer took nothing
 * past its HELLO. Back to the head of txq, in order, whole (a message cut
 * by the socket's end too), for the next socket.
 */
void p4t_tcp_hs_rewind(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_tx *tx;
	struct p4u_list *node;

	tx = p4u_list_first_entry(&conn->txq, struct p4t_tcp_tx, ev.node);
	if (tx && tx->kind == P4T_TCP_TX_MSG)
		tx->done = 0;
	while (!p4u_list_empty(&conn->unconfirmed)) {
		node = conn->unconfirmed.prev;
		p4u_list_remove(node);
		tx = container_of(node, struct p4t_tcp_tx, ev.node);
		tx->done = 0;
		conn->txq_bytes += tx->len;
		p4u_list_insert_head(&conn->txq, node);
	}
	conn->wblocked = false;
}

/*
 * Write what the link's attempt may carry now: once its connect
 * completed, the HELLO and the messages queued behind it. Called right
 * after connect(), at each send on the link and from progress; a connect
 * still in flight (a remote host: a round trip) is left to progress.
 */
void p4t_tcp_hs_pipeline(struct p4t_tcp_conn *conn)
{
	struct p4t_tcp_sock *sock = conn->sock;
	struct pollfd pfd;

	if (!sock || !sock->outgoing)
		return;
	if (sock->state == P4T_TCP_SOCK_CONNECTING) {
		pfd.fd = sock->fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 1 && pfd.revents)
			p4t_tcp_hs_event(sock, (uint32_t)pfd.revents);
		return;
	}
	if (sock->state == P4T_TCP_SOCK_HELLO_SENT &&
	    p4t_tcp_conn_write(conn) < 0)
		p4t_tcp_hs_event(sock, EPOLLIN | EPOLLERR);
}

/* ---- the handshake ------------------------------------------------------------- */

/* Write the socket's handshake bytes; < 0 on a socket error. */
static int p4t_tcp_hs_write(struct p4t_tcp_sock *sock)
{
	ssize_t n;

	while (sock->ctl_off < sock->ctl_len) {
		n = send(sock->fd, sock->ctl + sock->ctl_off,
			 sock->ctl_len - sock->ctl_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return p4t_tcp_errno_status(errno);
		sock->ctl_off += (size_t)n;
	}
	return p4t_tcp_sock_watch(sock, EPOLLIN | (sock->ctl_off < sock->ctl_len ?
						   EPOLLOUT : 0));
}

/*
 * Read one handshake message (HELLO, HELLO_ACK or BYE) and no byte more:
 * what follows belongs to the link. 1 when whole, 0 for more, < 0 error.
 */
static int p4t_tcp_hs_read(struct p4t_tcp_sock *sock, struct p4w_hdr *hdr)
{
	size_t need = P4T_TCP_HDR_LEN;
	ssize_t n;
	int ret;

	for (;;) {
		if (sock->hs_got >= P4T_TCP_HDR_LEN) {
			ret = p4w_hdr_unpack(sock->hs, sock->hs_got, hdr);
			if (ret)
				return ret;
			if (hdr->type != P4W_T_HELLO &&
			    hdr->type != P4W_T_HELLO_ACK &&
			    hdr->type != P4W_T_BYE)
				return -FI_EBADMSG;
			need = hdr->length;	/* fixed sizes, <= sizeof(hs) */
			if (sock->hs_got == need)
				return 1;
		}
		n = recv(sock->fd, sock->hs + sock->hs_got, need - sock->hs_got,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return n ? p4t_tcp_errno_status(errno) : -FI_ECONNRESET;
		sock->hs_got += (size_t)n;
	}
}

/* Validate a HELLO / HELLO_ACK body against our auth_key. */
static int p4t_tcp_hello_check(struct p4t_tcp_iface *iface,
			       struct p4t_tcp_sock *sock,
			       struct p4w_hello *hello,
			       struct sockaddr_storage *ss, socklen_t *len_p)
{
	int ret;

	ret = p4w_hello_unpack(sock->hs + P4T_TCP_HDR_LEN,
			       P4T_TCP_HELLO_LEN - P4T_TCP_HDR_LEN, hello);
	if (ret)
		return ret;
	if (hello->auth_key != iface->auth_key) {
		iface->stats.auth_refused++;
		return -FI_EACCES;
	}
	ret = p4t_tcp_addr_parse(hello->addr, hello->addrlen, ss, len_p);
	return ret ? -FI_EBADMSG : 0;
}

/* Our outgoing socket got its answer. */
static void p4t_tcp_hs_answer(struct p4t_tcp_sock *sock,
			      const struct p4w_hdr *hdr)
{
	struct p4t_tcp_iface *iface = sock->iface;
	struct p4t_tcp_conn *conn = sock->conn;
	struct sockaddr_storage ss;
	struct p4w_hello hello;
	socklen_t len;
	int ret;

	if (hdr->type == P4W_T_BYE) {
		/* the peer keeps its socket to us: wait for it, the peer
		 * timeout from now (armed as the socket closes) */
		iface->stats.collisions++;
		conn->deadline_ns = p4u_time_ns() +
				    iface->peer_timeout_ms * 1000000ull;
		p4t_tcp_sock_close(sock);
		return;
	}
	ret = hdr->type == P4W_T_HELLO_ACK ?
	      p4t_tcp_hello_check(iface, sock, &hello, &ss, &len) :
	      -FI_EBADMSG;
	if (!ret) {
		conn->session = hello.session;
		conn->has_session = true;
		ret = p4t_tcp_conn_adopt(conn, sock);
	}
	if (ret) {
		if (ret != -FI_EACCES)
			iface->stats.malformed++;
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: bad handshake answer: %s",
				fi_strerror(-ret));
		p4t_tcp_conn_fail(conn, -FI_ECONNREFUSED);
		return;
	}
	(void)p4t_tcp_conn_flush(conn);
}

/* A new peer: conn_new decides; then HELLO_ACK and the link is up. */
static void p4t_tcp_hs_new_peer(struct p4t_tcp_sock *sock,
				const struct p4w_hello *hello,
				const struct sockaddr_storage *ss,
				socklen_t len)
{
	struct p4t_tcp_iface *iface = sock->iface;
	struct p4t_tcp_conn *conn = p4t_tcp_conn_create(iface, ss, len);
	struct sockaddr_storage addr = *ss;
	int ret;

	if (!conn) {
		p4t_tcp_sock_reject(sock, -FI_ENOMEM, "no memory");
		return;
	}
	conn->session = hello->session;
	conn->has_session = true;
	conn->busy = true;
	ret = iface->upcalls->conn_new(iface->upcall_ctx, &conn->base, &addr,
				       len);
	conn->busy = false;
	if (ret < 0) {
		p4u_info(P4U_LOG_TRANSPORT, "tcp: connection refused: %s",
			 fi_strerror(-ret));
		p4t_tcp_sock_close(sock);
		p4t_tcp_conn_fail(conn, ret);	/* unknown: no conn_failed */
		return;
	}
	conn->known = true;
	if (conn->state != P4T_TCP_CONN_CONNECTING) {
		p4t_tcp_sock_close(sock);
		return;
	}
	p4t_tcp_hello_pack(iface, P4W_T_HELLO_ACK, sock->ctl);
	sock->ctl_len = P4T_TCP_HELLO_LEN;
	sock->ctl_off = 0;
	ret = p4t_tcp_conn_adopt(conn, sock);
	if (ret)
		p4t_tcp_conn_fail(conn, ret);
	else
		(void)p4t_tcp_conn_flush(conn);
}

/*
 * A HELLO from the address of a link we already have. Established: the
 * same session means a leftover of a simultaneous connect (unless the
 * old socket turns out to be dead), another session a restarted peer.
 * Connecting: the socket opened by the lower address wins.
 */
static void p4t_tcp_hs_known_peer(struct p4t_tcp_sock *sock,
				  struct p4t_tcp_conn *conn,
				  const struct p4w_hello *hello,
				  const struct sockaddr_storage *ss,
				  socklen_t len)
{
	struct p4t_tcp_iface *iface = sock->iface;
	int ret;

	if (conn->state == P4T_TCP_CONN_ESTABLISHED) {
		if (conn->has_session && conn->session != hello->session) {
			iface->stats.restarts++;
			p4t_tcp_conn_fail(conn, -FI_ECONNRESET);
		} else {
			(void)p4t_tcp_conn_rx(conn, 64);  /* dead after all? */
		}
		if (conn->state == P4T_TCP_CONN_ESTABLISHED) {
			iface->stats.collisions++;
			p4t_tcp_sock_bye(sock);
			return;
		}
		/* the old link's failure is reported before the new link */
		(void)p4t_tcp_events_run(iface, INT32_MAX);
		p4t_tcp_hs_new_peer(sock, hello, ss, len);
		return;
	}
	if (conn->sock && p4t_tcp_addr_cmp(&iface->addr, iface->addrlen,
					   ss, len) < 0) {
		iface->stats.collisions++;
		p4t_tcp_sock_bye(sock);
		return;
	}
	if (conn->sock)
		iface->stats.collisions++;
	conn->session = hello->session;
	conn->has_session = true;
	p4t_tcp_hello_pack(iface, P4W_T_HELLO_ACK, sock->ctl);
	sock->ctl_len = P4T_TCP_HELLO_LEN;
	sock->ctl_off = 0;
	ret = p4t_tcp_conn_adopt(conn, sock);
	if (ret)
		p4t_tcp_conn_fail(conn, ret);
	else
		(void)p4t_tcp_conn_flush(conn);
}

/* An accepted socket presented its HELLO. */
static void p4t_tcp_hs_hello(struct p4t_tcp_sock *sock,
			     const struct p4w_hdr *hdr)
{
	struct p4t_tcp_iface *iface = sock->iface;
	struct sockaddr_storage ss;
	struct p4t_tcp_conn *conn;
	struct p4w_hello hello;
	socklen_t len;
	int ret;

	ret = hdr->type == P4W_T_HELLO ?
	      p4t_tcp_hello_check(iface, sock, &hello, &ss, &len) :
	      -FI_EBADMSG;
	if (!ret && p4t_tcp_addr_eq(&ss, len, &iface->addr, iface->addrlen))
		ret = -FI_EBADMSG;	/* claims to be us */
	if (ret) {
		p4t_tcp_sock_reject(sock, ret, ret == -FI_EACCES ?
				    "auth_key mismatch" : "bad hello");
		return;
	}
	conn = p4t_tcp_conn_find(iface, &ss, len);
	if (conn)
		p4t_tcp_hs_known_peer(sock, conn, &hello, &ss, len);
	else
		p4t_tcp_hs_new_peer(sock, &hello, &ss, len);
}

/* Events on a socket that is not (yet) a link's. */
void p4t_tcp_hs_event(struct p4t_tcp_sock *sock, uint32_t events)
{
	struct p4t_tcp_conn *conn = sock->conn;
	struct p4w_hdr hdr;
	socklen_t elen = sizeof(int);
	bool write_failed = false;
	int ret, err = 0;

	if (sock->state == P4T_TCP_SOCK_CONNECTING) {
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(sock->fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = errno;
		if (err) {
			if (err == ECONNREFUSED && p4t_tcp_conn_retry_later(conn))
				return;
			p4t_tcp_conn_fail(conn, err == ECONNREFUSED ?
					  -FI_ECONNREFUSED : -err);
			return;
		}
		sock->state = P4T_TCP_SOCK_HELLO_SENT;
	}
	if (sock->outgoing) {
		/* the HELLO and what is queued behind it; on an error, read
		 * first what the peer said (a BYE comes before its reset) */
		if (p4t_tcp_conn_write(conn) < 0) {
			write_failed = true;
			events |= EPOLLERR;
		}
	} else if (sock->ctl_off < sock->ctl_len) {
		ret = p4t_tcp_hs_write(sock);
		if (ret < 0) {
			p4t_tcp_sock_reject(sock, ret, "write error");
			return;
		}
	}
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	ret = p4t_tcp_hs_read(sock, &hdr);
	if (ret == 0 && write_failed)
		ret = -FI_ECONNRESET;
	if (ret == 0)
		return;
	if (ret < 0 && sock->outgoing) {
		/* nobody answered as a peer: refused (closed, reset, junk) */
		if (ret == -FI_EBADMSG || ret == -FI_EPROTO ||
		    ret == -FI_EMSGSIZE)
			sock->iface->stats.malformed++;
		p4t_tcp_conn_fail(conn, -FI_ECONNREFUSED);
	} else if (ret < 0) {
		p4t_tcp_sock_reject(sock, ret, "no hello");
	} else if (sock->outgoing) {
		p4t_tcp_hs_answer(sock, &hdr);
	} else {
		p4t_tcp_hs_hello(sock, &hdr);
	}
}
