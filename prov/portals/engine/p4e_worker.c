/*
 * p4e_worker.c - the engine's worker (docs/design.md §8): the one place
 * progress happens. A worker owns
 *
 *   - a lock (a mutex, or bookkeeping only when the caller guarantees one
 *     thread at a time) that every call on its NIs holds;
 *   - the NIs attached to it, progressed in turn by p4e_worker_progress;
 *   - a timer queue (util/p4u_timer.h) where transports and flow control
 *     arm their deadlines, run by progress as they fall due;
 *   - one wait fd: an epoll fd holding every NI's transport fd, an
 *     eventfd for kicks and a timerfd set to the earliest deadline
 *     before anybody sleeps on it;
 *   - optionally, a thread that sleeps on that fd and progresses.
 *
 * The timerfd costs system calls, so it is armed only when somebody may
 * sleep: by p4e_worker_prepare_sleep (a blocking read about to poll), by
 * the thread before it waits, and at unlock when a deadline earlier than
 * the armed one appeared on a worker that sleepers use. A thread that
 * spins on progress never needs it: progress compares the clock with the
 * queue's earliest deadline.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "p4e_priv.h"
#include "p4u_time.h"

#define P4E_WORKER_EVENTS	16

/* ---- lock ------------------------------------------------------------- */

bool p4e_worker_held(const struct p4e_worker *w)
{
	/* without a mutex the caller is the one thread there is */
	return !w->locked || p4u_lock_held(&w->lock);
}

void p4e_worker_assert_held(const struct p4e_worker *w)
{
#if ENABLE_DEBUG
	if (!p4e_worker_held(w)) {
		p4u_warn(P4U_LOG_ENGINE, "worker lock not held");
		abort();
	}
#else
	(void)w;
#endif
}

/* Set timer_fd to fire at the earliest deadline (if that is earlier). */
static void p4e_worker_timer_sync(struct p4e_worker *w)
{
	uint64_t next = p4u_timerq_next(&w->timers);
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (next >= w->timer_armed_ns)
		return;
	/* a deadline already past fires at once: 0 would disarm */
	if (!next)
		next = 1;
	its.it_value.tv_sec = (time_t)(next / 1000000000ULL);
	its.it_value.tv_nsec = (long)(next % 1000000000ULL);
	if (timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL)) {
		p4u_warn_sparse(P4U_LOG_ENGINE, "worker: timerfd_settime: %s",
				strerror(errno));
		return;
	}
	w->timer_armed_ns = next;
}

void p4e_worker_lock(struct p4e_worker *w)
{
	p4u_lock_acquire(&w->lock);
}

void p4e_worker_unlock(struct p4e_worker *w)
{
	/* a sleeper must not miss a deadline armed while it sleeps */
	if (w->may_sleep)
		p4e_worker_timer_sync(w);
	p4u_lock_release(&w->lock);
}

/* ---- kicks ------------------------------------------------------------ */

void p4e_worker_kick(struct p4e_worker *w)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&w->kicked, 1, __ATOMIC_ACQ_REL))
		return;
	/* EAGAIN only when the count is saturated: readable anyway */
	if (write(w->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		p4u_warn_sparse(P4U_LOG_ENGINE, "worker: eventfd write: %s",
				strerror(errno));
}

static void p4e_worker_unkick(struct p4e_worker *w)
{
	uint64_t val;

	if (!__atomic_load_n(&w->kicked, __ATOMIC_ACQUIRE))
		return;
	/*
	 * Drain, then clear: a kick after the clear writes again; one
	 * between the two is for work this progress call looks at anyway
	 * (kicks follow the work they announce).
	 */
	if (read(w->kick_fd, &val, sizeof(val)) < 0 && errno != EAGAIN)
		p4u_warn_sparse(P4U_LOG_ENGINE, "worker: eventfd read: %s",
				strerror(errno));
	__atomic_store_n(&w->kicked, 0, __ATOMIC_RELEASE);
}

/* ---- progress --------------------------------------------------------- */

/*
 * The clock. A read costs about 30 ns on the machines we measure, and a
 * spinning ping-pong client spent a sixth of its time in clock_gettime
 * (perf), where progress needs the clock only to see a deadline go by.
 * So progress reads it every P4E_CLOCK_EVERY calls, and at once after a
 * sleep: a deadline is seen at most that many calls late, which matters
 * only to a caller that progresses seldom and never blocks (its
 * acknowledgements and retries then wait for its calls anyway).
 */
static void p4e_worker_clock_read(struct p4e_worker *w)
{
	w->clock_stale = false;
	w->clock_tick = 0;
	w->now_ns = p4u_time_ns();
}

/* A progress call: true when it read the clock (w->now_ns is new). */
static bool p4e_worker_clock(struct p4e_worker *w)
{
	if (!w->clock_stale && ++w->clock_tick % P4E_CLOCK_EVERY)
		return false;
	p4e_worker_clock_read(w);
	return true;
}

uint64_t p4e_worker_now(struct p4e_worker *w)
{
	if (w->clock_stale || !w->now_ns)
		p4e_worker_clock_read(w);
	return w->now_ns;
}

/* Due deadlines; an expired timerfd is read so it stops waking sleepers. */
static int p4e_worker_timers_run(struct p4e_worker *w)
{
	uint64_t now, val;
	int done = 0;

	/* read with or without deadlines: p4e_worker_now stays recent */
	if (!p4e_worker_clock(w))
		return 0;
	if (p4u_timerq_next(&w->timers) == P4U_TIMER_NEVER &&
	    w->timer_armed_ns == P4U_TIMER_NEVER)
		return 0;
	now = w->now_ns;
	if (p4u_timerq_next(&w->timers) <= now)
		done = p4u_timerq_run(&w->timers, now);
	if (w->timer_armed_ns <= now) {
		if (read(w->timer_fd, &val, sizeof(val)) < 0 &&
		    errno != EAGAIN)
			p4u_warn_sparse(P4U_LOG_ENGINE,
					"worker: timerfd read: %s",
					strerror(errno));
		w->timer_armed_ns = P4U_TIMER_NEVER;
	}
	return done;
}

/*
 * Arm the transports again for the thread asleep on epfd after another
 * thread progressed: that progress took the signals meant for it (a
 * shared-memory link's armed word, the eventfd a peer wrote) and the
 * thread would otherwise sleep through the next arrival, which only
 * progress would then find: a process that stops calling the library
 * (it waits on memory a peer writes) would never see it.
 */
static void p4e_worker_rearm(struct p4e_worker *w)
{
	struct p4e_xport *xp;
	struct p4e_ni *ni;
	bool due = false;

	p4u_list_foreach_entry(&w->nis, ni, struct p4e_ni, worker_link)
		p4e_ni_foreach_xp(ni, xp)
			if (p4t_wait_arm(xp->iface) > 0)
				due = true;
	if (due)
		p4e_worker_kick(w);
}

int p4e_worker_progress(struct p4e_worker *w, int budget)
{
	struct p4e_ni *ni, *tmp;
	int done;

	p4e_worker_assert_held(w);
	p4e_worker_unkick(w);
	done = p4e_worker_timers_run(w);
	p4u_list_foreach_entry_safe(&w->nis, ni, tmp, struct p4e_ni,
				    worker_link)
		done += p4e_ni_progress(ni, budget);
	if (w->thread_asleep)
		p4e_worker_rearm(w);
	return done;
}

int p4e_worker_run_triggered(struct p4e_worker *w)
{
	struct p4e_ni *ni;
	int done = 0;

	p4e_worker_assert_held(w);
	p4u_list_foreach_entry(&w->nis, ni, struct p4e_ni, worker_link) {
		ni->in_progress = true;
		done += p4e_trig_run_ni(ni);
		ni->in_progress = false;
		p4e_ni_flush(ni);
	}
	return done;
}

int p4e_worker_wait_fd(struct p4e_worker *w)
{
	return w->epfd;
}

void p4e_worker_prepare_sleep(struct p4e_worker *w)
{
	struct p4e_xport *xp;
	struct p4e_ni *ni;
	bool due = false;

	p4e_worker_assert_held(w);
	p4u_list_foreach_entry(&w->nis, ni, struct p4e_ni, worker_link) {
		/* no progress call will send what is held back: it goes now */
		p4e_fc_ack_all(ni);
		/* peers writing to shared memory signal our fd from now on;
		 * what came before that is work already */
		p4e_ni_foreach_xp(ni, xp)
			if (p4t_wait_arm(xp->iface) > 0)
				due = true;
		/* triggered ops collected by this worker's own thread after
		 * its NI's turn: the sleeper must not sleep on them */
		p4u_lock_acquire(&ni->dom->lock);
		due |= !p4u_list_empty(&ni->trig_due);
		p4u_lock_release(&ni->dom->lock);
	}
	if (due)
		p4e_worker_kick(w);
	w->may_sleep = true;
	/* whoever wakes finds the clock moved: progress reads it first */
	w->clock_stale = true;
	p4e_worker_timer_sync(w);
}

/* ---- NIs ------------------------------------------------------------- */

int p4e_worker_attach(struct p4e_worker *w, struct p4e_ni *ni)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ni };
	struct p4e_xport *xp, *undo;
	int fd, err;

	p4e_worker_assert_held(w);
	p4e_ni_foreach_xp(ni, xp) {
		fd = p4t_wait_fd(xp->iface);
		if (fd < 0 || !epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev))
			continue;
		err = errno;
		p4u_warn(P4U_LOG_ENGINE, "worker: epoll_ctl add: %s",
			 strerror(err));
		for (undo = ni->xp; undo < xp; undo++)
			if (undo->iface && p4t_wait_fd(undo->iface) >= 0)
				(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL,
						p4t_wait_fd(undo->iface), NULL);
		return err == ENOMEM || err == ENOSPC ? -FI_ENOMEM :
							-FI_EINVAL;
	}
	ni->worker = w;
	p4u_list_insert_tail(&w->nis, &ni->worker_link);
	/* a thread asleep must include the new fd: it does, epoll is live */
	return 0;
}

void p4e_worker_detach(struct p4e_worker *w, struct p4e_ni *ni)
{
	struct p4e_xport *xp;
	int fd;

	p4e_worker_assert_held(w);
	p4e_ni_foreach_xp(ni, xp) {
		fd = p4t_wait_fd(xp->iface);
		if (fd >= 0)
			(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
	}
	p4u_list_remove(&ni->worker_link);
}

/* ---- the thread ------------------------------------------------------ */

/*
 * Progress while there is work, one round per lock hold so application
 * threads get their turn; sleep on the wait fd when a round found
 * nothing. Level-triggered fds wake it again at once for work a round
 * left (budget spent).
 */
static void *p4e_worker_main(void *arg)
{
	struct p4e_worker *w = arg;
	struct epoll_event evs[P4E_WORKER_EVENTS];
	int n;

	p4e_worker_lock(w);
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		if (p4e_worker_progress(w, 256) > 0) {
			p4e_worker_unlock(w);
			p4e_worker_lock(w);
			continue;
		}
		p4e_worker_prepare_sleep(w);
		w->thread_asleep = true;
		p4e_worker_unlock(w);
		n = epoll_wait(w->epfd, evs, P4E_WORKER_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			/* an fd set we own went bad: nothing sane to retry */
			p4u_warn(P4U_LOG_ENGINE, "worker thread: epoll_wait: "
				 "%s; stopping", strerror(errno));
			return NULL;
		}
		p4e_worker_lock(w);
		w->thread_asleep = false;
	}
	p4e_worker_unlock(w);
	return NULL;
}

/* The thread blocks every signal: handlers run on the application's. */
static int p4e_worker_spawn(struct p4e_worker *w, const char *name)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&w->thread, NULL, p4e_worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		p4u_warn(P4U_LOG_ENGINE, "cannot start a progress thread: %s",
			 strerror(ret));
		return ret == EAGAIN ? -FI_EAGAIN : -FI_ENOMEM;
	}
	/* best effort: a name lets ps, gdb and the tests find it */
	if (name)
		(void)pthread_setname_np(w->thread, name);
	w->has_thread = true;
	return 0;
}

/* ---- create / destroy ------------------------------------------------- */

static int p4e_worker_fds_open(struct p4e_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->epfd < 0 || w->kick_fd < 0 || w->timer_fd < 0)
		goto err;
	ev.data.ptr = &w->kick_fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->kick_fd, &ev))
		goto err;
	ev.data.ptr = &w->timer_fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->timer_fd, &ev))
		goto err;
	return 0;
err:
	err = errno;
	p4u_warn(P4U_LOG_ENGINE, "worker: cannot create its fds: %s",
		 strerror(err));
	return err == EMFILE || err == ENFILE ? -FI_EMFILE : -FI_ENOMEM;
}

static void p4e_worker_free(struct p4e_worker *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->kick_fd >= 0)
		close(w->kick_fd);
	if (w->timer_fd >= 0)
		close(w->timer_fd);
	p4u_lock_fini(&w->lock);
	free(w);
}

int p4e_worker_create(const struct p4e_worker_attr *attr,
		      struct p4e_worker **worker_p)
{
	struct p4e_worker *w;
	int ret;

	if (!attr || !worker_p)
		return -FI_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	w->epfd = w->kick_fd = w->timer_fd = -1;
	w->locked = attr->locked || attr->thread;
	p4u_lock_init(&w->lock, w->locked);
	p4u_list_init(&w->nis);
	p4u_timerq_init(&w->timers);
	w->timer_armed_ns = P4U_TIMER_NEVER;
	ret = p4e_worker_fds_open(w);
	if (!ret && attr->thread) {
		/* the thread sleeps on the fd from its first round */
		w->may_sleep = true;
		ret = p4e_worker_spawn(w, attr->name);
	}
	if (ret) {
		p4e_worker_free(w);
		return ret;
	}
	*worker_p = w;
	return 0;
}

int p4e_worker_destroy(struct p4e_worker *w)
{
	bool busy;

	if (!w)
		return -FI_EINVAL;
	p4e_worker_lock(w);
	busy = !p4u_list_empty(&w->nis);
	p4e_worker_unlock(w);
	if (busy)
		return -FI_EBUSY;
	if (w->has_thread) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		p4e_worker_kick(w);
		pthread_join(w->thread, NULL);
		w->has_thread = false;
	}
	p4e_worker_free(w);
	return 0;
}
