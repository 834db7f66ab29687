/*
 * p4t_tcp_sock.c - the TCP transport's sockets before they are a link's:
 * options (no Nagle, keepalive, user timeout), epoll registration and
 * close, the handshake deadline of every pending socket (a timer on the
 * owner's queue, p4t_tcp.h "Deadlines"), the HELLO packer, rejecting a
 * stray socket, accept and the limit on accepted sockets waiting for
 * their HELLO (the oldest goes).
 *
 * Not here: what the handshake says (p4t_tcp_hs.c), outgoing connects,
 * retries and a link's own deadline (p4t_tcp_conn.c), when sockets are
 * looked at (progress, p4t_tcp.c).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_tcp_priv.h"

/* ---- sockets ------------------------------------------------------------------ */

/*
 * Options of every link socket: no Nagle, and a silent peer detected
 * within about peer_timeout_ms: TCP_USER_TIMEOUT bounds unacknowledged
 * data (and, with keepalive on, the probes), keepalive covers idle links.
 */
int p4t_tcp_sock_setup(struct p4t_tcp_iface *iface, int fd)
{
	unsigned int tmo = (unsigned int)P4U_MIN(iface->peer_timeout_ms,
						 (uint64_t)INT32_MAX);
	int one = 1, cnt = 3, idle, intvl, ret = 0;

	idle = (int)P4U_MAX(1u, tmo / 2000);
	intvl = (int)P4U_MAX(1u, tmo / 6000);
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &tmo, sizeof(tmo)))
		ret = -errno;
	if (iface->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF,
					&iface->sndbuf, sizeof(int)))
		ret = -errno;
	if (iface->rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF,
					&iface->rcvbuf, sizeof(int)))
		ret = -errno;
	if (ret)
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: socket options: %s",
				fi_strerror(-ret));
	return ret;
}

int p4t_tcp_sock_watch(struct p4t_tcp_sock *sock, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = sock };
	int op = sock->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

	if (sock->events == events || sock->fd < 0)
		return 0;
	if (epoll_ctl(sock->iface->epfd, op, sock->fd, &ev)) {
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: epoll_ctl: %s",
				fi_strerror(errno));
		return -errno;
	}
	sock->events = events;
	return 0;
}

/*
 * A graceful close: what we wrote survives our close and our process's
 * exit only if the kernel ends the stream with a FIN, and it sends a
 * reset instead (dropping what it still holds for the peer) when unread
 * bytes sit in our receive queue. So: FIN after our bytes
 * (shutdown(SHUT_WR)), then read and drop what arrived (bounded: a peer
 * that streams on gets its reset), then close.
 */
static void p4t_tcp_fd_close(struct p4t_tcp_iface *iface, int fd)
{
	ssize_t n;
	int i;

	(void)shutdown(fd, SHUT_WR);
	for (i = 0; i < 4; i++) {
		n = recv(fd, iface->scratch, P4T_TCP_SCRATCH, MSG_DONTWAIT);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
	}
	close(fd);
}

/*
 * Closed now, freed by reap (this round's epoll results may name it); its
 * deadline goes with it. A link whose attempt this was is timed by its
 * own deadline again while it keeps connecting (p4t_tcp_conn_wait_peer),
 * and gets back, to send again, what it pipelined on it.
 */
void p4t_tcp_sock_close(struct p4t_tcp_sock *sock)
{
	struct p4t_tcp_conn *conn = sock->conn;

	if (sock->state == P4T_TCP_SOCK_DEAD)
		return;
	p4u_timer_cancel(sock->iface->timers, &sock->timer);
	if (sock->state == P4T_TCP_SOCK_HELLO_WAIT)
		sock->iface->naccepted--;
	if (sock->fd >= 0)
		p4t_tcp_fd_close(sock->iface, sock->fd);
	sock->fd = -1;
	sock->state = P4T_TCP_SOCK_DEAD;
	sock->conn = NULL;
	p4u_list_remove(&sock->node);
	p4u_list_insert_tail(&sock->iface->dead_socks, &sock->node);
	if (conn && conn->sock == sock) {
		conn->sock = NULL;
		if (conn->state == P4T_TCP_CONN_CONNECTING) {
			p4t_tcp_hs_rewind(conn);
			p4t_tcp_conn_wait_peer(conn);
		}
	}
}

/* Arm timer ms milliseconds after from_ns on the owner's queue. */
void p4t_tcp_timer_arm_ms(struct p4t_tcp_iface *iface, struct p4u_timer *timer,
			  uint64_t from_ns, uint64_t ms)
{
	p4u_timer_arm(iface->timers, timer, from_ns + ms * 1000000ull);
}

/*
 * A handshaking socket's deadline passed: an outgoing one fails its link
 * (no HELLO_ACK within the peer timeout, or the connect itself hung), an
 * accepted one that sent no HELLO is closed. Runs from the owner's timer
 * queue, outside progress: what it fails is reported by the next
 * progress call, as every failure is.
 */
static void p4t_tcp_sock_expired(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4t_tcp_sock *sock = container_of(timer, struct p4t_tcp_sock,
						 timer);

	(void)now_ns;
	if (sock->conn)
		p4t_tcp_conn_fail(sock->conn, -FI_ETIMEDOUT);
	if (sock->state != P4T_TCP_SOCK_DEAD)
		p4t_tcp_sock_reject(sock, -FI_ETIMEDOUT, "no hello in time");
}

/* A socket of iface, not yet on any list; NULL without memory. */
struct p4t_tcp_sock *p4t_tcp_sock_new(struct p4t_tcp_iface *iface, int fd)
{
	struct p4t_tcp_sock *sock = calloc(1, sizeof(*sock));

	if (!sock)
		return NULL;
	sock->iface = iface;
	sock->fd = fd;
	p4u_list_node_init(&sock->node);
	p4u_timer_init(&sock->timer, p4t_tcp_sock_expired);
	return sock;
}

/*
 * Handshaking from now on: closed (or its link failed) in timeout_ms. An
 * accepted socket (HELLO_WAIT) joins the tail of iface->accepted.
 */
void p4t_tcp_pending_add(struct p4t_tcp_sock *sock, uint64_t timeout_ms)
{
	struct p4t_tcp_iface *iface = sock->iface;

	if (sock->state == P4T_TCP_SOCK_HELLO_WAIT) {
		p4u_list_insert_tail(&iface->accepted, &sock->node);
		iface->naccepted++;
	} else {
		p4u_list_insert_tail(&iface->pending, &sock->node);
	}
	p4t_tcp_timer_arm_ms(iface, &sock->timer, p4u_time_ns(), timeout_ms);
}

void p4t_tcp_hello_pack(struct p4t_tcp_iface *iface, uint8_t type,
			uint8_t *buf)
{
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = type,
		.length = P4T_TCP_HELLO_LEN,
	};
	struct p4w_hello hello = {
		.magic = P4W_MAGIC,
		.version = P4W_VERSION,
		.addrlen = (uint16_t)iface->addrlen,
		.session = iface->session,
		.auth_key = iface->auth_key,
	};

	memcpy(hello.addr, &iface->addr, iface->addrlen);
	p4w_hdr_pack(buf, &hdr);
	p4w_hello_pack(buf + P4T_TCP_HDR_LEN, &hello);
}

/* A stray socket goes without disturbing anyone. */
void p4t_tcp_sock_reject(struct p4t_tcp_sock *sock, int ret,
				const char *why)
{
	struct p4t_tcp_iface *iface = sock->iface;

	iface->stats.hs_failed++;
	iface->stats.rejected++;
	if (ret == -FI_EBADMSG || ret == -FI_EPROTO || ret == -FI_EMSGSIZE)
		iface->stats.malformed++;
	p4u_warn_sparse(P4U_LOG_TRANSPORT, "tcp: connection closed: %s (%s)",
			why, fi_strerror(-ret));
	p4t_tcp_sock_close(sock);
}

/* BYE on a socket we do not keep, then close it. */
void p4t_tcp_sock_bye(struct p4t_tcp_sock *sock)
{
	uint8_t bye[P4T_TCP_HDR_LEN];
	struct p4w_hdr hdr = {
		.version = P4W_VERSION,
		.type = P4W_T_BYE,
		.length = P4T_TCP_HDR_LEN,
	};

	p4w_hdr_pack(bye, &hdr);
	(void)send(sock->fd, bye, sizeof(bye), MSG_DONTWAIT | MSG_NOSIGNAL);
	p4t_tcp_sock_close(sock);
}

/* ---- accept -------------------------------------------------------------- */

/*
 * Room for one more accepted socket: the oldest waiting for its HELLO go
 * (p4t_tcp.h says why the oldest).
 */
static void p4t_tcp_accept_room(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_sock *old;

	while (iface->naccepted >= iface->pending_max) {
		old = p4u_list_first_entry(&iface->accepted,
					   struct p4t_tcp_sock, node);
		iface->stats.hs_evicted++;
		p4t_tcp_sock_reject(old, -FI_EAGAIN,
				    "too many handshakes, the oldest goes");
	}
}

/* Take new connections (a few per call): HELLO_WAIT, their deadline on. */
void p4t_tcp_accept(struct p4t_tcp_iface *iface)
{
	struct p4t_tcp_sock *sock;
	int i, fd;

	for (i = 0; i < P4T_TCP_ACCEPTS; i++) {
		fd = accept4(iface->listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				p4u_warn_sparse(P4U_LOG_TRANSPORT,
						"tcp: accept: %s",
						fi_strerror(errno));
			return;
		}
		sock = p4t_tcp_sock_new(iface, fd);
		if (!sock) {
			close(fd);
			return;
		}
		sock->state = P4T_TCP_SOCK_HELLO_WAIT;
		(void)p4t_tcp_sock_setup(iface, fd);
		iface->stats.accepts++;
		p4t_tcp_accept_room(iface);
		p4t_tcp_pending_add(sock, P4U_MIN((uint64_t)P4T_TCP_HELLO_TIMEOUT_MS,
						  iface->peer_timeout_ms));
		if (p4t_tcp_sock_watch(sock, EPOLLIN))
			p4t_tcp_sock_close(sock);
	}
}
