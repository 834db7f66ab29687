/*
 * p4f_wait.c - what lets an application block: the wait object a CQ,
 * counter or EQ embeds (eventfd + epoll fd), wait sets (fi_wait_open,
 * fi_wait), fi_trywait, and poll sets (fi_poll_open, fi_poll). The objects'
 * own blocking reads (fi_cq_sread, fi_cntr_wait, fi_eq_sread) live in their
 * files and use the helpers here.
 *
 * Only FI_WAIT_FD (and FI_WAIT_UNSPEC, which is FD) is offered: every
 * blocking wait is a poll(2) on an epoll fd, so threads sleep in the kernel
 * and any number of them wake together. FI_WAIT_MUTEX_COND, FI_WAIT_YIELD
 * and FI_WAIT_POLLFD answer -FI_ENOSYS.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "p4f.h"

struct p4f_waitset {
	struct fid_wait wait_fid;
	struct p4f_fabric *fabric;
	struct p4u_lock lock;		/* members; outermost (p4f_cq.h) */
	struct p4u_list members;	/* struct p4f_wait.set_node */
	int epfd;			/* holds every member's epfd */
};

struct p4f_pollset {
	struct fid_poll poll_fid;
	struct p4f_domain *domain;
	struct p4u_list members;	/* struct p4f_poll_member; domain lock */
};

struct p4f_poll_member {
	struct p4u_list node;
	struct fid *fid;		/* a CQ or a counter of the domain */
};

static struct fi_ops p4f_waitset_fi_ops;

/* ---- fd helpers -------------------------------------------------------- */

static int p4f_wait_epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (!epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return 0;
	if (errno == EEXIST)
		return -FI_EALREADY;
	FI_WARN(&p4f_prov, FI_LOG_CORE, "epoll_ctl add fd %d: %s\n", fd,
		strerror(errno));
	return -FI_EINVAL;
}

static int p4f_wait_epoll_del(int epfd, int fd)
{
	if (epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL))
		return errno == ENOENT ? -FI_ENOENT : -FI_EINVAL;
	return 0;
}

/* poll(2) on one fd: 1 readable, 0 timeout; EINTR counts as a wake-up. */
static int p4f_wait_poll_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 1 : -errno;
	return ret;
}

/* ---- wait object ------------------------------------------------------- */

static struct p4f_waitset *p4f_waitset_of(struct fid_wait *fid)
{
	if (!fid || fid->fid.fclass != FI_CLASS_WAIT ||
	    fid->fid.ops != &p4f_waitset_fi_ops)
		return NULL;
	return container_of(fid, struct p4f_waitset, wait_fid);
}

static int p4f_waitset_join(struct p4f_waitset *set, struct p4f_wait *wait)
{
	int ret;

	p4u_lock_acquire(&set->lock);
	ret = p4f_wait_epoll_add(set->epfd, wait->epfd);
	if (!ret) {
		p4u_list_insert_tail(&set->members, &wait->set_node);
		wait->set = set;
	}
	p4u_lock_release(&set->lock);
	return ret;
}

static void p4f_waitset_leave(struct p4f_wait *wait)
{
	struct p4f_waitset *set = wait->set;

	p4u_lock_acquire(&set->lock);
	p4f_wait_epoll_del(set->epfd, wait->epfd);
	p4u_list_remove(&wait->set_node);
	p4u_lock_release(&set->lock);
	wait->set = NULL;
}

static int p4f_wait_open_fds(struct p4f_wait *wait)
{
	int err;

	wait->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wait->evfd < 0)
		goto err;
	wait->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (wait->epfd < 0)
		goto err_close_evfd;
	if (p4f_wait_epoll_add(wait->epfd, wait->evfd))
		goto err_close_epfd;
	return 0;

err_close_epfd:
	err = errno;
	close(wait->epfd);
	wait->epfd = -1;
	errno = err;
err_close_evfd:
	err = errno;
	close(wait->evfd);
	wait->evfd = -1;
	errno = err;
err:
	err = errno;
	FI_WARN(&p4f_prov, FI_LOG_CORE, "cannot create wait fds: %s\n",
		strerror(err));
	return err == EMFILE || err == ENFILE ? -FI_EMFILE : -FI_ENOMEM;
}

int p4f_wait_init(struct p4f_wait *wait, struct p4f_fabric *fabric,
		  struct fid *owner, enum fi_wait_obj wait_obj,
		  struct fid_wait *set_fid)
{
	struct p4f_waitset *set = NULL;
	int ret;

	memset(wait, 0, sizeof(*wait));
	wait->epfd = wait->evfd = -1;
	wait->owner = owner;
	wait->armed = true;	/* nothing signalled yet: the first write may wake */
	p4u_list_node_init(&wait->set_node);

	switch (wait_obj) {
	case FI_WAIT_NONE:
		wait->wait_obj = FI_WAIT_NONE;
		return 0;
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		wait->wait_obj = FI_WAIT_FD;
		break;
	case FI_WAIT_SET:
		set = p4f_waitset_of(set_fid);
		if (!set || set->fabric != fabric)
			return -FI_EINVAL;
		wait->wait_obj = FI_WAIT_SET;
		break;
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
	case FI_WAIT_POLLFD:
		FI_INFO(&p4f_prov, FI_LOG_CORE,
			"only fd wait objects are supported\n");
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}

	ret = p4f_wait_open_fds(wait);
	if (ret)
		return ret;
	if (set) {
		ret = p4f_waitset_join(set, wait);
		if (ret) {
			p4f_wait_fini(wait);
			return ret;
		}
	}
	return 0;
}

void p4f_wait_fini(struct p4f_wait *wait)
{
	if (wait->set)
		p4f_waitset_leave(wait);
	if (wait->epfd >= 0)
		close(wait->epfd);
	if (wait->evfd >= 0)
		close(wait->evfd);
	wait->epfd = wait->evfd = -1;
	wait->wait_obj = FI_WAIT_NONE;
}

void p4f_wait_kick(struct p4f_wait *wait)
{
	uint64_t one = 1;

	if (wait->evfd < 0)
		return;
	/* EAGAIN only if the counter is saturated: it is readable anyway */
	if (write(wait->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FI_WARN(&p4f_prov, FI_LOG_CORE, "eventfd write: %s\n",
			strerror(errno));
}

void p4f_wait_signal(struct p4f_wait *wait)
{
	if (!wait->armed)
		return;
	wait->armed = false;
	p4f_wait_kick(wait);
}

void p4f_wait_clear(struct p4f_wait *wait)
{
	uint64_t value;

	if (wait->evfd < 0)
		return;
	/* non-blocking: EAGAIN when nothing was signalled */
	if (read(wait->evfd, &value, sizeof(value)) < 0 && errno != EAGAIN)
		FI_WARN(&p4f_prov, FI_LOG_CORE, "eventfd read: %s\n",
			strerror(errno));
	wait->armed = true;
}

int p4f_wait_block(struct p4f_wait *wait, int timeout_ms)
{
	int ret;

	if (wait->epfd < 0)
		return -FI_EINVAL;
	ret = p4f_wait_poll_fd(wait->epfd, timeout_ms);
	if (ret < 0)
		return -FI_EINVAL;
	return ret ? 0 : -FI_EAGAIN;
}

int p4f_wait_add_fd(struct p4f_wait *wait, int fd)
{
	if (wait->epfd < 0)
		return -FI_EINVAL;
	return p4f_wait_epoll_add(wait->epfd, fd);
}

int p4f_wait_del_fd(struct p4f_wait *wait, int fd)
{
	if (wait->epfd < 0)
		return -FI_EINVAL;
	return p4f_wait_epoll_del(wait->epfd, fd);
}

int p4f_wait_control(struct p4f_wait *wait, int command, void *arg)
{
	if (!p4f_wait_enabled(wait))
		return command == FI_GETWAIT || command == FI_GETWAITOBJ ?
			-FI_ENODATA : -FI_ENOSYS;
	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		/* a set member hands out the set's fd: that is what it waits on */
		*(int *)arg = wait->set ? wait->set->epfd : wait->epfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

const char *p4f_strerror_copy(int prov_errno, char *buf, size_t len)
{
	const char *str = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (!buf || !len)
		return str;
	strncpy(buf, str, len - 1);
	buf[len - 1] = '\0';
	return buf;
}

/* ---- fi_trywait -------------------------------------------------------- */

static int p4f_waitset_trywait(struct p4f_waitset *set);

/*
 * After an object's own trywait progressed, found nothing and armed its
 * eventfd: is its fd readable all the same? A transport fd in it is when
 * data came in after that progress, or more than one round's budget was
 * waiting. fi_poll(3) wants -FI_EAGAIN then ("blocking could hang"): the
 * caller reads, which progresses, and tries again.
 */
static int p4f_trywait_settled(struct p4f_wait *wait, int ret)
{
	if (ret || !wait)
		return ret;
	return p4f_wait_poll_fd(wait->epfd, 0) > 0 ? -FI_EAGAIN : 0;
}

/* One descriptor: -FI_EAGAIN if it has something to read, 0 if armed. */
static int p4f_trywait_fid(struct fid *fid)
{
	struct p4f_cntr *cntr;
	struct p4f_cq *cq;

	switch (fid->fclass) {
	case FI_CLASS_CQ:
		cq = p4f_cq_of(container_of(fid, struct fid_cq, fid));
		return p4f_trywait_settled(p4f_cq_waitobj(cq),
					   p4f_cq_trywait(cq));
	case FI_CLASS_CNTR:
		cntr = p4f_cntr_of(container_of(fid, struct fid_cntr, fid));
		return p4f_trywait_settled(p4f_cntr_waitobj(cntr),
					   p4f_cntr_trywait(cntr));
	case FI_CLASS_EQ:
		return p4f_eq_trywait(p4f_eq_of(container_of(fid, struct fid_eq,
							    fid)));
	case FI_CLASS_WAIT: {
		struct p4f_waitset *set =
			p4f_waitset_of(container_of(fid, struct fid_wait, fid));

		return set ? p4f_waitset_trywait(set) : -FI_EINVAL;
	}
	default:
		return -FI_EINVAL;
	}
}

int p4f_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	int i, ret;

	if (!fids || count <= 0)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (!fids[i])
			return -FI_EINVAL;
		ret = p4f_trywait_fid(fids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- wait sets --------------------------------------------------------- */

/* Every member armed and empty: 0; one has something: -FI_EAGAIN. */
static int p4f_waitset_trywait(struct p4f_waitset *set)
{
	struct p4f_wait *wait;
	int ret = 0;

	p4u_lock_acquire(&set->lock);
	p4u_list_foreach_entry(&set->members, wait, struct p4f_wait, set_node) {
		ret = p4f_trywait_fid(wait->owner);
		if (ret)
			break;
	}
	p4u_lock_release(&set->lock);
	return ret;
}

/*
 * Return at once if a member already has something; otherwise sleep until
 * a member's fd becomes readable (an entry, a counter change, a signal, a
 * transport fd) or the timeout passes. A wake-up may be spurious, as
 * fi_poll(3) allows: the caller reads and waits again.
 */
static int p4f_waitset_wait(struct fid_wait *wait_fid, int timeout)
{
	struct p4f_waitset *set =
		container_of(wait_fid, struct p4f_waitset, wait_fid);
	int ret;

	ret = p4f_waitset_trywait(set);
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret)
		return ret;
	ret = p4f_wait_poll_fd(set->epfd, timeout < 0 ? -1 : timeout);
	if (ret < 0)
		return -FI_EINVAL;
	return ret ? 0 : -FI_ETIMEDOUT;
}

static int p4f_waitset_close(struct fid *fid)
{
	struct p4f_waitset *set =
		container_of(fid, struct p4f_waitset, wait_fid.fid);
	bool busy;

	p4u_lock_acquire(&set->lock);
	busy = !p4u_list_empty(&set->members);
	p4u_lock_release(&set->lock);
	if (busy) {
		FI_WARN(&p4f_prov, FI_LOG_CORE, "wait set still has members\n");
		return -FI_EBUSY;
	}
	close(set->epfd);
	p4u_lock_fini(&set->lock);
	atomic_fetch_sub(&set->fabric->ref, 1);
	free(set);
	return 0;
}

static int p4f_waitset_control(struct fid *fid, int command, void *arg)
{
	struct p4f_waitset *set =
		container_of(fid, struct p4f_waitset, wait_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		*(int *)arg = set->epfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops p4f_waitset_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_waitset_close,
	.bind = p4f_no_bind,
	.control = p4f_waitset_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static struct fi_ops_wait p4f_waitset_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = p4f_waitset_wait,
};

int p4f_wait_open(struct fid_fabric *fabric_fid, struct fi_wait_attr *attr,
		  struct fid_wait **waitset_p)
{
	struct p4f_fabric *fabric =
		container_of(fabric_fid, struct p4f_fabric, fabric_fid);
	struct p4f_waitset *set;

	if (!attr || !waitset_p)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
	case FI_WAIT_POLLFD:
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}

	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	set->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (set->epfd < 0) {
		free(set);
		return -FI_EMFILE;
	}
	p4u_lock_init(&set->lock, true);
	p4u_list_init(&set->members);
	set->fabric = fabric;
	set->wait_fid.fid.fclass = FI_CLASS_WAIT;
	set->wait_fid.fid.context = NULL;
	set->wait_fid.fid.ops = &p4f_waitset_fi_ops;
	set->wait_fid.ops = &p4f_waitset_ops;
	atomic_fetch_add(&fabric->ref, 1);
	*waitset_p = &set->wait_fid;
	return 0;
}

/* ---- poll sets --------------------------------------------------------- */

static struct p4f_domain *p4f_poll_fid_domain(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		return p4f_cq_domain(p4f_cq_of(container_of(fid, struct fid_cq,
							   fid)));
	case FI_CLASS_CNTR:
		return p4f_cntr_domain(p4f_cntr_of(
			container_of(fid, struct fid_cntr, fid)));
	default:
		return NULL;
	}
}

/* A member holds a reference, so the CQ or counter cannot be closed. */
static void p4f_poll_fid_ref(struct fid *fid, bool get)
{
	struct p4f_cq *cq;
	struct p4f_cntr *cntr;

	if (fid->fclass == FI_CLASS_CQ) {
		cq = p4f_cq_of(container_of(fid, struct fid_cq, fid));
		if (get)
			p4f_cq_get(cq);
		else
			p4f_cq_put(cq);
		return;
	}
	cntr = p4f_cntr_of(container_of(fid, struct fid_cntr, fid));
	if (get)
		p4f_cntr_get(cntr);
	else
		p4f_cntr_put(cntr);
}

static struct p4f_poll_member *p4f_poll_find_locked(struct p4f_pollset *ps,
						    const struct fid *fid)
{
	struct p4f_poll_member *member;

	p4u_list_foreach_entry(&ps->members, member, struct p4f_poll_member,
			       node)
		if (member->fid == fid)
			return member;
	return NULL;
}

static int p4f_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct p4f_pollset *ps =
		container_of(poll_fid, struct p4f_pollset, poll_fid);
	struct p4f_poll_member *member;
	int ret = 0;

	if (!event_fid)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (p4f_poll_fid_domain(event_fid) != ps->domain) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
			"poll sets take CQs and counters of their domain\n");
		return -FI_EINVAL;
	}
	member = calloc(1, sizeof(*member));
	if (!member)
		return -FI_ENOMEM;
	member->fid = event_fid;

	p4u_lock_acquire(&ps->domain->lock);
	if (p4f_poll_find_locked(ps, event_fid)) {
		ret = -FI_EALREADY;
	} else {
		p4u_list_insert_tail(&ps->members, &member->node);
		p4f_poll_fid_ref(event_fid, true);
	}
	p4u_lock_release(&ps->domain->lock);
	if (ret)
		free(member);
	return ret;
}

static int p4f_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct p4f_pollset *ps =
		container_of(poll_fid, struct p4f_pollset, poll_fid);
	struct p4f_poll_member *member;

	if (flags)
		return -FI_EBADFLAGS;
	p4u_lock_acquire(&ps->domain->lock);
	member = p4f_poll_find_locked(ps, event_fid);
	if (member)
		p4u_list_remove(&member->node);
	p4u_lock_release(&ps->domain->lock);
	if (!member)
		return -FI_EINVAL;
	p4f_poll_fid_ref(event_fid, false);
	free(member);
	return 0;
}

static bool p4f_poll_member_ready(struct p4f_poll_member *member)
{
	if (member->fid->fclass == FI_CLASS_CQ)
		return p4f_cq_poll(p4f_cq_of(
			container_of(member->fid, struct fid_cq, fid)));
	return p4f_cntr_poll(p4f_cntr_of(
		container_of(member->fid, struct fid_cntr, fid)));
}

static void p4f_poll_member_progress(struct p4f_poll_member *member)
{
	if (member->fid->fclass == FI_CLASS_CQ)
		p4f_cq_progress(p4f_cq_of(
			container_of(member->fid, struct fid_cq, fid)));
	else
		p4f_cntr_progress(p4f_cntr_of(
			container_of(member->fid, struct fid_cntr, fid)));
}

/*
 * Progress first, so what the network delivered is counted; then report
 * every CQ that holds an entry and every counter that changed, in the
 * order they were added, up to count.
 */
static int p4f_poll_poll(struct fid_poll *poll_fid, void **context, int count)
{
	struct p4f_pollset *ps =
		container_of(poll_fid, struct p4f_pollset, poll_fid);
	struct p4f_poll_member *member;
	int n = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	p4u_lock_acquire(&ps->domain->lock);
	p4u_list_foreach_entry(&ps->members, member, struct p4f_poll_member,
			       node)
		p4f_poll_member_progress(member);
	p4u_list_foreach_entry(&ps->members, member, struct p4f_poll_member,
			       node) {
		if (n == count)
			break;
		if (p4f_poll_member_ready(member))
			context[n++] = member->fid->context;
	}
	p4u_lock_release(&ps->domain->lock);
	return n;
}

static int p4f_poll_close(struct fid *fid)
{
	struct p4f_pollset *ps =
		container_of(fid, struct p4f_pollset, poll_fid.fid);
	struct p4f_poll_member *member, *tmp;

	/* members are released, not leaked: they are references, not users */
	p4u_list_foreach_entry_safe(&ps->members, member, tmp,
				    struct p4f_poll_member, node) {
		p4u_list_remove(&member->node);
		p4f_poll_fid_ref(member->fid, false);
		free(member);
	}
	atomic_fetch_sub(&ps->domain->ref, 1);
	free(ps);
	return 0;
}

static struct fi_ops p4f_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_poll_close,
	.bind = p4f_no_bind,
	.control = p4f_no_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static struct fi_ops_poll p4f_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = p4f_poll_poll,
	.poll_add = p4f_poll_add,
	.poll_del = p4f_poll_del,
};

int p4f_poll_open(struct fid_domain *domain_fid, struct fi_poll_attr *attr,
		  struct fid_poll **pollset_p)
{
	struct p4f_domain *domain = p4f_domain_of(domain_fid);
	struct p4f_pollset *ps;

	if (!pollset_p)
		return -FI_EINVAL;
	if (attr && attr->flags)
		return -FI_EBADFLAGS;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ps->domain = domain;
	p4u_list_init(&ps->members);
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &p4f_poll_fi_ops;
	ps->poll_fid.ops = &p4f_poll_ops;
	atomic_fetch_add(&domain->ref, 1);
	*pollset_p = &ps->poll_fid;
	return 0;
}
