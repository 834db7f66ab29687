/*
 * p4t_shm_conn.c - the shared-memory transport's links (behaviour:
 * p4t_shm.h): addresses and the abstract name, the peer check, creating
 * segments, the handshake messages on the link's socket (HELLO,
 * HELLO_ACK, BYE), connect and its retries, the link's state machine
 * (p4t_shm_conn_step), the peer leaving, failure and close.
 *
 * Not here: the accepting side, collisions and restarts
 * (p4t_shm_accept.c); what moves through the segment (p4t_shm_ring.c,
 * p4t_shm_send.c, p4t_shm_rma.c); the iface (p4t_shm.c).
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"
#include "p4u_addr.h"

/* ---- addresses ------------------------------------------------------------ */

/* A sockaddr_in / sockaddr_in6 of its exact size, with the token cleared. */
int p4t_shm_addr_parse(const void *addr, size_t len,
		       struct sockaddr_storage *ss, socklen_t *len_p)
{
	const struct sockaddr *sa = addr;

	if (!addr || !((len == sizeof(struct sockaddr_in) &&
			sa->sa_family == AF_INET) ||
		       (len == sizeof(struct sockaddr_in6) &&
			sa->sa_family == AF_INET6)))
		return -FI_EINVAL;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, addr, len);
	p4u_addr_clear(ss, len);
	*len_p = (socklen_t)len;
	return 0;
}

/* The collision order: IPv4 before IPv6, then the bytes. */
int p4t_shm_addr_cmp(const struct sockaddr_storage *a, socklen_t alen,
		     const struct sockaddr_storage *b, socklen_t blen)
{
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return memcmp(a, b, alen);
}

uint64_t p4t_shm_addr_hash(const struct sockaddr_storage *ss, socklen_t len)
{
	const uint8_t *p = (const uint8_t *)ss;
	uint64_t h = 0;
	socklen_t i;

	for (i = 0; i < len; i++)
		h = p4u_hash_combine(h, p[i]);
	return h;
}

/* "\0portals-shm/<euid>/<ip>/<port>": per user, nothing in the fs. */
int p4t_shm_name(const struct sockaddr_storage *ss, char *name,
		 socklen_t *len_p)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	char ip[INET6_ADDRSTRLEN];
	bool v6 = ss->ss_family == AF_INET6;
	int n;

	if (!inet_ntop(ss->ss_family, v6 ? (const void *)&sin6->sin6_addr :
					   (const void *)&sin->sin_addr,
		       ip, sizeof(ip)))
		return -FI_EINVAL;
	name[0] = '\0';
	n = snprintf(name + 1, P4T_SHM_NAME_MAX - 1, "portals-shm/%u/%s/%u",
		     (unsigned)geteuid(), ip,
		     ntohs(v6 ? sin6->sin6_port : sin->sin_port));
	if (n < 0 || n >= P4T_SHM_NAME_MAX - 1)
		return -FI_EINVAL;
	*len_p = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	return 0;
}

static int p4t_shm_sun(const struct sockaddr_storage *ss,
		       struct sockaddr_un *sun, socklen_t *len_p)
{
	char name[P4T_SHM_NAME_MAX];
	int ret;

	ret = p4t_shm_name(ss, name, len_p);
	if (ret)
		return ret;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, name,
	       *len_p - offsetof(struct sockaddr_un, sun_path));
	return 0;
}

/* ---- the peer check ---------------------------------------------------- */

/*
 * Whether pid's namespace ns is ours. A process that has exited already
 * (no /proc/<pid>: it connected, wrote and died before we looked) counts
 * as ours: what it wrote is delivered and its EOF fails the link at
 * once, as over TCP, instead of its messages vanishing unread.
 */
static bool p4t_shm_ns_same(pid_t pid, const char *ns)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &mine))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	if (stat(path, &theirs)) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		return errno == ENOENT && stat(path, &theirs) &&
		       errno == ENOENT;
	}
	return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/*
 * May we share memory with the process at the other end of fd? Same
 * euid, visible in our PID namespace (pid != 0), the same PID and user
 * namespaces: what cross-memory attach by pid and mapping its segment
 * need. The other end asks the same of us, so both decide alike.
 */
bool p4t_shm_peer_ok(struct p4t_shm_iface *iface, int fd,
			    struct ucred *cred_p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    len != sizeof(cred) || cred.uid != geteuid() || cred.pid <= 0 ||
	    !p4t_shm_ns_same(cred.pid, "pid") ||
	    !p4t_shm_ns_same(cred.pid, "user")) {
		iface->stats.cred_refused++;
		return false;
	}
	*cred_p = cred;
	return true;
}

/* ---- segments -------------------------------------------------------------- */

size_t p4t_shm_seg_bytes(void)
{
	return P4T_SHM_HDR_PAGE + 2 * P4T_SHM_RING;
}

/* The header a new segment starts with; the acceptor checks each field. */
void p4t_shm_seg_init(struct p4t_shm_seg *seg, size_t size)
{
	seg->magic = P4T_SHM_MAGIC;
	seg->version = P4T_SHM_VERSION;
	seg->size = size;
	seg->ring_size = P4T_SHM_RING;
	seg->ring_off[0] = P4T_SHM_HDR_PAGE;
	seg->ring_off[1] = P4T_SHM_HDR_PAGE + P4T_SHM_RING;
}

/* An anonymous file of size bytes, its size sealed, mapped shared. */
int p4t_shm_memfd_make(const char *name, size_t size, int *fd_p,
		       void **map_p)
{
	void *map;
	int fd, ret;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*fd_p = fd;
	*map_p = map;
	return 0;
}

/* Map a peer's file of size bytes, once sure it cannot shrink under us
 * (a shrunk file would fault our reads). */
int p4t_shm_memfd_map(int fd, size_t size, void **map_p)
{
	struct stat st;
	void *map;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) || (uint64_t)st.st_size != size || seals < 0 ||
	    !(seals & F_SEAL_SHRINK))
		return -FI_EINVAL;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	*map_p = map;
	return 0;
}

/* An anonymous segment, its size sealed (the peer maps it whole). */
static int p4t_shm_seg_create(struct p4t_shm_conn *conn)
{
	size_t size = p4t_shm_seg_bytes();
	void *map;
	int fd, ret;

	ret = p4t_shm_memfd_make("portals-shm", size, &fd, &map);
	if (ret)
		return ret;
	p4t_shm_seg_init(map, size);
	conn->seg = map;
	conn->seg_size = size;
	conn->memfd = fd;
	p4t_shm_ring_attach(conn, true);
	return 0;
}

/* ---- handshake messages ---------------------------------------------------- */

void p4t_shm_hs_fill(struct p4t_shm_iface *iface, uint8_t type,
			    struct p4t_shm_hs *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->magic = P4T_SHM_MAGIC;
	hs->version = P4T_SHM_VERSION;
	hs->type = type;
	hs->pid = (uint32_t)getpid();
	hs->auth_key = iface->auth_key;
	hs->session = iface->session;
	hs->probe = (uint64_t)(uintptr_t)&iface->session;
	hs->seg_size = p4t_shm_seg_bytes();
	hs->ring_size = P4T_SHM_RING;
	hs->addrlen = (uint8_t)iface->addrlen;
	memcpy(hs->addr, &iface->addr, iface->addrlen);
}

int p4t_shm_hs_send(int fd, const struct p4t_shm_hs *hs,
			   const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = (void *)hs, .iov_len = sizeof(*hs) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(&cm, 0, sizeof(cm));
	if (nfds) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(*hs))
		return errno ? -errno : -FI_EIO;
	return 0;
}

void p4t_shm_bye(int fd, struct p4t_shm_iface *iface, uint8_t why)
{
	struct p4t_shm_hs hs;

	p4t_shm_hs_fill(iface, P4T_SHM_HS_BYE, &hs);
	hs.reason = why;
	(void)p4t_shm_hs_send(fd, &hs, NULL, 0);
}

/*
 * One handshake message: > 0 when one came (whole and of our version,
 * with *nfds_p descriptors, closed if more than max), 0 at EOF, -EAGAIN
 * when none is there, another < 0 on errors and malformed input.
 */
int p4t_shm_hs_recv(int fd, struct p4t_shm_hs *hs, int *fds,
			   size_t max, size_t *nfds_p)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = hs, .iov_len = sizeof(*hs) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	struct cmsghdr *c;
	size_t i, n = 0;
	int *got;
	ssize_t len;

	len = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (len < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		got = (int *)CMSG_DATA(c);
		for (i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			if (n < max)
				fds[n++] = got[i];
			else
				close(got[i]);
		}
	}
	*nfds_p = n;
	if (len == 0 && !n)
		return 0;
	if ((size_t)len != sizeof(*hs) || (mh.msg_flags & MSG_CTRUNC) ||
	    hs->magic != P4T_SHM_MAGIC || hs->version != P4T_SHM_VERSION) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		*nfds_p = 0;
		return -FI_EINVAL;
	}
	return 1;
}

/*
 * The descriptor a peer hands us to wake it: we write it from progress,
 * whenever the peer's armed word asks (a word the peer writes), so a
 * write must never block. Ours is an eventfd opened non-blocking; the
 * flag lives in the open file, which SCM_RIGHTS shares. A peer that
 * passes a blocking descriptor (a pipe it lets fill) would otherwise
 * stop our process in write(2): its handshake is refused instead.
 */
bool p4t_shm_wake_fd_ok(int fd)
{
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	return fl >= 0 && (fl & O_NONBLOCK);
}

/* ---- links ------------------------------------------------------------------- */

struct p4t_shm_conn *p4t_shm_conn_find(struct p4t_shm_iface *iface,
				       const struct sockaddr_storage *ss,
				       socklen_t len)
{
	struct p4t_shm_conn *conn;

	p4u_hash_foreach(&iface->by_addr, p4t_shm_addr_hash(ss, len), conn,
			 struct p4t_shm_conn, hnode)
		if (!p4t_shm_addr_cmp(&conn->addr, conn->addrlen, ss, len))
			return conn;
	return NULL;
}

static void p4t_shm_conn_timeout(struct p4u_timer *timer, uint64_t now_ns);

struct p4t_shm_conn *p4t_shm_conn_create(struct p4t_shm_iface *iface,
					 const struct sockaddr_storage *ss,
					 socklen_t len)
{
	struct p4t_shm_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->iface = iface;
	conn->addr = *ss;
	conn->addrlen = len;
	conn->fd = conn->memfd = conn->peer_wake = -1;
	conn->watch.kind = P4T_SHM_W_CONN;
	conn->watch.obj = conn;
	conn->fail_ev.kind = P4T_SHM_EV_CONN_FAILED;
	p4u_list_node_init(&conn->fail_ev.node);
	p4u_list_node_init(&conn->backlog);
	p4u_list_init(&conn->txq);
	p4u_list_init(&conn->unconfirmed);
	p4u_list_init(&conn->rmas);
	p4u_list_init(&conn->coops);
	p4u_timer_init(&conn->timer, p4t_shm_conn_timeout);
	p4u_list_insert_tail(&iface->conns, &conn->node);
	p4t_shm_bell_attach(conn);
	p4u_hash_insert(&iface->by_addr, &conn->hnode,
			p4t_shm_addr_hash(ss, len));
	conn->hashed = true;
	iface->stats.links++;
	return conn;
}

static void p4t_shm_conn_unmap(struct p4t_shm_conn *conn)
{
	if (conn->seg)
		munmap(conn->seg, conn->seg_size);
	conn->seg = NULL;
	p4t_shm_bell_unmap(conn);
	free(conn->rxa.buf);
	memset(&conn->rxa, 0, sizeof(conn->rxa));
}

void p4t_shm_fd_close(struct p4t_shm_iface *iface, int *fd)
{
	if (*fd < 0)
		return;
	(void)epoll_ctl(iface->epfd, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

/* Everything of a link that goes when it fails or is closed. */
static void p4t_shm_conn_down(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;

	p4u_timer_cancel(iface->timers, &conn->timer);
	if (conn->hashed)
		p4u_hash_remove(&iface->by_addr, &conn->hnode);
	conn->hashed = false;
	p4u_list_remove(&conn->backlog);
	p4t_shm_bell_detach(conn);
	p4t_shm_fd_close(iface, &conn->fd);
	p4t_shm_fd_close(iface, &conn->memfd);
	p4t_shm_fd_close(iface, &conn->peer_wake);
	p4t_shm_txq_fail(conn);
	p4t_shm_rma_fail_conn(conn, -FI_ECONNABORTED);
	p4t_shm_mem_forget_conn(conn);
	iface->stats.links--;
}

void p4t_shm_conn_free(struct p4t_shm_conn *conn)
{
	p4t_shm_conn_unmap(conn);
	free(conn);
}

/* Connect to the peer's name: 0, -FI_EAGAIN (backlog full), or < 0. */
static int p4t_shm_conn_try(struct p4t_shm_conn *conn, struct ucred *cred_p)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct sockaddr_un sun;
	socklen_t len;
	int fd, ret;

	ret = p4t_shm_sun(&conn->addr, &sun, &len);
	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, len)) {
		ret = errno == EAGAIN || errno == EWOULDBLOCK ? -FI_EAGAIN :
		      -FI_EHOSTUNREACH;
		close(fd);
		return ret;
	}
	iface->stats.connects++;
	if (!p4t_shm_peer_ok(iface, fd, cred_p)) {
		close(fd);
		return -FI_EHOSTUNREACH;
	}
	conn->fd = fd;
	return 0;
}

/* The connect went: send HELLO with the segment, our eventfd and our
 * doorbells. */
static int p4t_shm_conn_hello(struct p4t_shm_conn *conn,
			      const struct ucred *cred)
{
	struct p4t_shm_iface *iface = conn->iface;
	int fds[3] = { conn->memfd, iface->wake_fd, iface->inbox_fd };
	struct p4t_shm_hs hs;
	int ret;

	conn->peer_pid = cred->pid;
	p4t_shm_hs_fill(iface, P4T_SHM_HS_HELLO, &hs);
	hs.bell = (uint32_t)conn->bell;
	ret = p4t_shm_hs_send(conn->fd, &hs, fds, 3);
	if (!ret)
		ret = p4t_shm_watch_add(iface, conn->fd, &conn->watch);
	if (ret)
		return ret;
	/* the mapping stays; the peer has its own descriptor now */
	close(conn->memfd);
	conn->memfd = -1;
	return 0;
}

/* One connect attempt of a link in RETRY; the outcome drives its state. */
static void p4t_shm_conn_attempt(struct p4t_shm_conn *conn)
{
	struct ucred cred;
	int ret;

	ret = p4t_shm_conn_try(conn, &cred);
	if (ret == -FI_EAGAIN) {
		conn->iface->stats.connect_retries++;
		p4t_shm_conn_step(conn, P4T_SHM_IN_AGAIN, 0);
		return;
	}
	if (!ret)
		ret = p4t_shm_conn_hello(conn, &cred);
	if (ret)
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ECONNREFUSED);
	else
		p4t_shm_conn_step(conn, P4T_SHM_IN_CONNECTED, 0);
}

/*
 * conn_get for an address with no link: connect first, so a peer that
 * is not there (or not ours to share memory with) leaves nothing behind
 * (-FI_EHOSTUNREACH); a full backlog gets a link that retries.
 */
int p4t_shm_conn_open(struct p4t_shm_iface *iface,
		      const struct sockaddr_storage *ss, socklen_t len,
		      struct p4t_shm_conn **conn_p)
{
	struct p4t_shm_conn probe = { .iface = iface, .addr = *ss,
				      .addrlen = len, .fd = -1 };
	struct p4t_shm_conn *conn;
	struct ucred cred;
	int ret;

	ret = p4t_shm_conn_try(&probe, &cred);
	if (ret && ret != -FI_EAGAIN)
		return ret;
	conn = p4t_shm_conn_create(iface, ss, len);
	if (!conn) {
		if (probe.fd >= 0)
			close(probe.fd);
		return -FI_ENOMEM;
	}
	conn->outgoing = true;
	conn->cma = iface->cma;
	conn->fd = probe.fd;
	conn->state = P4T_SHM_CONN_RETRY;
	conn->deadline_ns = p4u_time_ns() + iface->connect_retry_ms * 1000000;
	conn->backoff_ms = P4T_SHM_RETRY_MIN_MS;
	ret = p4t_shm_seg_create(conn);
	if (ret) {
		/* never the engine's: no conn_failed, freed at reap */
		p4t_shm_conn_step(conn, P4T_SHM_IN_CLOSE, 0);
		return ret;
	}
	if (conn->fd < 0) {
		iface->stats.connect_retries++;
		p4t_shm_conn_step(conn, P4T_SHM_IN_AGAIN, 0);
	} else if (p4t_shm_conn_hello(conn, &cred)) {
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ECONNREFUSED);
	} else {
		p4t_shm_conn_step(conn, P4T_SHM_IN_CONNECTED, 0);
	}
	*conn_p = conn;
	return 0;
}

/* ---- the state machine ------------------------------------------------------ */

static const char *const p4t_shm_conn_state_names[] = {
	[P4T_SHM_CONN_RETRY] = "retry",
	[P4T_SHM_CONN_HELLO] = "hello",
	[P4T_SHM_CONN_LOST] = "lost",
	[P4T_SHM_CONN_UP] = "up",
	[P4T_SHM_CONN_FAILED] = "failed",
	[P4T_SHM_CONN_CLOSED] = "closed",
};

/* Sends, pulls and pushes fail first, then conn_failed (events, FIFO). */
static enum p4t_shm_conn_state p4t_shm_conn_fail(struct p4t_shm_conn *conn,
						 int status)
{
	struct p4t_shm_iface *iface = conn->iface;

	p4u_info(P4U_LOG_TRANSPORT, "shm: link to pid %d failed in state %s: %s",
		 (int)conn->peer_pid, p4t_shm_conn_state_names[conn->state],
		 fi_strerror(-status));
	p4t_shm_conn_down(conn);
	iface->stats.link_failures++;
	conn->fail_ev.status = status;
	p4t_shm_ev_post(iface, &conn->fail_ev);
	return P4T_SHM_CONN_FAILED;
}

static enum p4t_shm_conn_state p4t_shm_conn_retry(struct p4t_shm_conn *conn)
{
	struct p4t_shm_iface *iface = conn->iface;
	uint64_t at = p4u_time_ns() + (uint64_t)conn->backoff_ms * 1000000;

	if (at > conn->deadline_ns)
		return p4t_shm_conn_fail(conn, -FI_ECONNREFUSED);
	p4t_shm_timer_arm_ms(iface, &conn->timer, conn->backoff_ms);
	conn->backoff_ms = P4U_MIN(conn->backoff_ms * 2, P4T_SHM_RETRY_MAX_MS);
	return P4T_SHM_CONN_RETRY;
}

/*
 * The link's one transition function: the state after input in (status
 * for P4T_SHM_IN_FAIL). Inputs that do not apply to a state leave it.
 */
void p4t_shm_conn_step(struct p4t_shm_conn *conn,
		       enum p4t_shm_conn_input in, int status)
{
	struct p4t_shm_iface *iface = conn->iface;
	enum p4t_shm_conn_state next = conn->state;

	if (in == P4T_SHM_IN_CLOSE) {
		if (p4t_shm_conn_live(conn))
			p4t_shm_conn_down(conn);
		/* the engine closed it (or never had it): no conn_failed */
		p4u_list_remove(&conn->fail_ev.node);
		conn->state = P4T_SHM_CONN_CLOSED;
		p4u_list_remove(&conn->node);
		p4u_list_insert_tail(&iface->dead, &conn->node);
		p4t_shm_signal(iface);
		return;
	}
	if (!p4t_shm_conn_live(conn))
		return;
	switch (in) {
	case P4T_SHM_IN_CONNECTED:
		if (conn->state != P4T_SHM_CONN_RETRY)
			break;
		p4u_timer_cancel(iface->timers, &conn->timer);
		p4t_shm_timer_arm_ms(iface, &conn->timer,
				     iface->peer_timeout_ms);
		next = P4T_SHM_CONN_HELLO;
		break;
	case P4T_SHM_IN_AGAIN:
		if (conn->state == P4T_SHM_CONN_RETRY)
			next = p4t_shm_conn_retry(conn);
		break;
	case P4T_SHM_IN_ACK:
		if (conn->state != P4T_SHM_CONN_HELLO)
			break;
		p4u_timer_cancel(iface->timers, &conn->timer);
		next = P4T_SHM_CONN_UP;
		break;
	case P4T_SHM_IN_BYE_COLLISION:
		if (conn->state != P4T_SHM_CONN_HELLO)
			break;
		/* the peer's link comes; wait for it as long as for an ACK */
		p4t_shm_timer_arm_ms(iface, &conn->timer,
				     iface->peer_timeout_ms);
		next = P4T_SHM_CONN_LOST;
		break;
	case P4T_SHM_IN_ADOPT:
		p4u_timer_cancel(iface->timers, &conn->timer);
		next = P4T_SHM_CONN_UP;
		break;
	case P4T_SHM_IN_FAIL:
		next = p4t_shm_conn_fail(conn, status);
		break;
	default:
		break;
	}
	conn->state = next;
	/* read its ring directly until it is up and empty */
	p4t_shm_bell_rescan(conn);
}

static void p4t_shm_conn_timeout(struct p4u_timer *timer, uint64_t now_ns)
{
	struct p4t_shm_conn *conn = container_of(timer, struct p4t_shm_conn,
						 timer);

	(void)now_ns;
	if (conn->state == P4T_SHM_CONN_RETRY)
		p4t_shm_conn_attempt(conn);
	else
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ETIMEDOUT);
}

/*
 * The peer went (EOF, reset, BYE): what it wrote before is still in the
 * ring and is delivered first, as a stream socket would.
 */
void p4t_shm_conn_gone(struct p4t_shm_conn *conn, int status)
{
	if (conn->mapped_by_peer) {
		conn->eof = true;
		while (p4t_shm_conn_live(conn) &&
		       p4t_shm_ring_rx(conn, 1 << 20) > 0)
			;
	} else {
		status = -FI_ECONNREFUSED;
	}
	p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, status);
}

static void p4t_shm_conn_ack(struct p4t_shm_conn *conn,
			     const struct p4t_shm_hs *hs, int wake, int bells)
{
	struct p4t_shm_iface *iface = conn->iface;
	struct p4t_shm_ctl info = { 0 };
	struct p4t_shm_inbox *inbox = NULL;

	if (hs->pid != (uint32_t)conn->peer_pid || !p4t_shm_wake_fd_ok(wake) ||
	    p4t_shm_bell_map(bells, hs->bell, &inbox)) {
		close(wake);
		close(bells);
		iface->stats.malformed++;
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_EPROTO);
		return;
	}
	close(bells);
	p4t_shm_bell_peer(conn, inbox, hs->bell);
	conn->peer_wake = wake;
	conn->peer_session = hs->session;
	conn->has_session = true;
	conn->peer_reads = hs->reads_peer;
	conn->mapped_by_peer = true;
	conn->cma = conn->cma && p4t_shm_cma_probe(conn, hs->probe,
						   hs->session);
	p4t_shm_conn_step(conn, P4T_SHM_IN_ACK, 0);
	p4t_shm_confirm(conn);
	info.status = conn->cma;
	if (p4t_shm_ctl_send(conn, P4T_SHM_F_INFO, &info, NULL, 0) < 0)
		p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_ENOMEM);
	/* written before the peer's eventfd and bell were known: it may
	 * sleep, or read by its bells */
	p4t_shm_ring_wake_peer(conn);
}

/* The link's socket is readable: handshake messages, or the peer left. */
void p4t_shm_conn_sock_event(struct p4t_shm_conn *conn)
{
	struct p4t_shm_hs hs;
	size_t nfds;
	int fds[2], ret;

	while (p4t_shm_conn_live(conn) && conn->fd >= 0) {
		ret = p4t_shm_hs_recv(conn->fd, &hs, fds, 2, &nfds);
		if (ret == -EAGAIN || ret == -EWOULDBLOCK)
			return;
		if (ret <= 0) {
			if (conn->state == P4T_SHM_CONN_LOST) {
				/* our refused socket: we wait for theirs */
				p4t_shm_fd_close(conn->iface, &conn->fd);
				return;
			}
			p4t_shm_conn_gone(conn, -FI_ECONNRESET);
			return;
		}
		if (hs.type == P4T_SHM_HS_ACK && nfds == 2 &&
		    conn->state == P4T_SHM_CONN_HELLO) {
			p4t_shm_conn_ack(conn, &hs, fds[0], fds[1]);
			continue;
		}
		while (nfds)
			close(fds[--nfds]);
		if (hs.type == P4T_SHM_HS_BYE &&
		    hs.reason == P4T_SHM_BYE_COLLISION &&
		    conn->state == P4T_SHM_CONN_HELLO) {
			conn->iface->stats.collisions++;
			p4t_shm_conn_step(conn, P4T_SHM_IN_BYE_COLLISION, 0);
		} else if (hs.type == P4T_SHM_HS_BYE) {
			p4t_shm_conn_gone(conn,
					  hs.reason == P4T_SHM_BYE_REFUSED ?
					  -FI_ECONNREFUSED : -FI_ECONNRESET);
		} else {
			conn->iface->stats.malformed++;
			p4t_shm_conn_step(conn, P4T_SHM_IN_FAIL, -FI_EPROTO);
		}
	}
}

void p4t_shm_conn_close(struct p4t_iface *iface, struct p4t_conn *conn_)
{
	struct p4t_shm_conn *conn = p4t_shm_conn_of(conn_);

	(void)iface;
	if (conn->state != P4T_SHM_CONN_CLOSED)
		p4t_shm_conn_step(conn, P4T_SHM_IN_CLOSE, 0);
}

