/*
 * p4f_progress.c - the progress thread of an FI_PROGRESS_AUTO domain
 * (DESIGN.md §7): one thread per domain, started at fi_domain when the
 * application asked for FI_PROGRESS_AUTO data progress (or
 * FI_PORTALS_PROGRESS_THREAD=1 forces it), stopped and joined at the
 * domain's fi_close.
 *
 * The thread sleeps in epoll_wait on an epoll set of its own holding the
 * transport wait fd of every enabled endpoint's NI (added at fi_enable,
 * removed at fi_close of the endpoint, both under the domain lock) and an
 * eventfd that stops it. When a transport fd turns readable it takes the
 * domain lock, runs one round of p4f_domain_progress and goes back to
 * sleep; the fds are level-triggered, so work a round left behind (budget
 * spent) wakes it again at once, and the lock is free between rounds for
 * the application's threads. Those still progress on their own CQ and
 * counter reads, so latency never depends on this thread waking up.
 *
 * What does not live here: the blocking waits of applications (p4f_wait.c,
 * p4f_cq.c, p4f_cntr.c), which sleep on their own epoll fds.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "p4f.h"

#define P4F_PROGRESS_EVENTS	16	/* fds reported per epoll_wait */
#define P4F_PROGRESS_NAME	"p4f_progress"	/* comm, for ps and tests */

struct p4f_progress {
	struct p4f_domain *domain;
	pthread_t thread;
	int epfd;		/* NI wait fds + stop_fd */
	int stop_fd;		/* eventfd: readable once the thread must end */
	atomic_bool stop;
};

static void *p4f_progress_main(void *arg)
{
	struct p4f_progress *prog = arg;
	struct p4f_domain *domain = prog->domain;
	struct epoll_event evs[P4F_PROGRESS_EVENTS];
	int n;

	for (;;) {
		n = epoll_wait(prog->epfd, evs, P4F_PROGRESS_EVENTS, -1);
		if (atomic_load(&prog->stop))
			break;
		if (n < 0 && errno != EINTR) {
			/* an fd set we own went bad: nothing sane to retry */
			FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
				"progress thread: epoll_wait: %s; stopping\n",
				strerror(errno));
			break;
		}
		p4u_lock_acquire(&domain->lock);
		/* no timer wakes it: its domain acknowledges at once
		 * (FI_PORTALS_ACK_DELAY_US applies to manual progress) */
		p4f_domain_progress(domain);
		p4u_lock_release(&domain->lock);
	}
	return NULL;
}

static int p4f_progress_epoll_ctl(struct p4f_progress *prog, int op, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (!epoll_ctl(prog->epfd, op, fd, op == EPOLL_CTL_DEL ? NULL : &ev))
		return 0;
	/* one NI fd per endpoint: a second add or a stray delete is a bug */
	FI_WARN(&p4f_prov, FI_LOG_DOMAIN, "progress thread: epoll_ctl %s fd %d: "
		"%s\n", op == EPOLL_CTL_DEL ? "del" : "add", fd,
		strerror(errno));
	return errno == ENOMEM || errno == ENOSPC ? -FI_ENOMEM : -FI_EINVAL;
}

int p4f_progress_add_fd_locked(struct p4f_domain *domain, int fd)
{
	p4u_lock_assert_held(&domain->lock);
	if (!domain->progress || fd < 0)
		return 0;
	return p4f_progress_epoll_ctl(domain->progress, EPOLL_CTL_ADD, fd);
}

void p4f_progress_del_fd_locked(struct p4f_domain *domain, int fd)
{
	p4u_lock_assert_held(&domain->lock);
	if (!domain->progress || fd < 0)
		return;
	p4f_progress_epoll_ctl(domain->progress, EPOLL_CTL_DEL, fd);
}

static void p4f_progress_free(struct p4f_progress *prog)
{
	if (prog->epfd >= 0)
		close(prog->epfd);
	if (prog->stop_fd >= 0)
		close(prog->stop_fd);
	free(prog);
}

static int p4f_progress_fds_open(struct p4f_progress *prog)
{
	int err;

	prog->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (prog->epfd < 0)
		goto err;
	prog->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (prog->stop_fd < 0)
		goto err;
	if (p4f_progress_epoll_ctl(prog, EPOLL_CTL_ADD, prog->stop_fd))
		return -FI_ENOMEM;
	return 0;
err:
	err = errno;
	FI_WARN(&p4f_prov, FI_LOG_DOMAIN, "progress thread: cannot create "
		"fds: %s\n", strerror(err));
	return err == EMFILE || err == ENFILE ? -FI_EMFILE : -FI_ENOMEM;
}

/*
 * The thread blocks every signal: the application's handlers run on its
 * own threads, and a signal never interrupts a round of progress that
 * holds the domain lock.
 */
static int p4f_progress_spawn(struct p4f_progress *prog)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&prog->thread, NULL, p4f_progress_main, prog);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
			"cannot start the progress thread: %s\n", strerror(ret));
		return ret == EAGAIN ? -FI_EAGAIN : -FI_ENOMEM;
	}
	/* best effort: a name lets ps, gdb and the tests find it */
	(void)pthread_setname_np(prog->thread, P4F_PROGRESS_NAME);
	return 0;
}

int p4f_progress_start(struct p4f_domain *domain)
{
	struct p4f_progress *prog;
	int ret;

	/* every engine call must be serialised against the thread */
	if (!domain->lock.active) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
			"progress thread on a domain without an active lock\n");
		return -FI_EINVAL;
	}
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return -FI_ENOMEM;
	prog->domain = domain;
	prog->epfd = prog->stop_fd = -1;
	atomic_init(&prog->stop, false);
	ret = p4f_progress_fds_open(prog);
	if (ret)
		goto err_free;
	/* visible before the thread runs: fi_enable adds to the set */
	domain->progress = prog;
	ret = p4f_progress_spawn(prog);
	if (ret)
		goto err_unpublish;
	return 0;

err_unpublish:
	domain->progress = NULL;
err_free:
	p4f_progress_free(prog);
	return ret;
}

void p4f_progress_stop(struct p4f_domain *domain)
{
	struct p4f_progress *prog = domain->progress;
	uint64_t one = 1;

	if (!prog)
		return;
	atomic_store(&prog->stop, true);
	/* the eventfd stays readable: the thread cannot sleep through it */
	if (write(prog->stop_fd, &one, sizeof(one)) != sizeof(one))
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
			"progress thread: eventfd write: %s\n", strerror(errno));
	pthread_join(prog->thread, NULL);
	domain->progress = NULL;
	p4f_progress_free(prog);
}
