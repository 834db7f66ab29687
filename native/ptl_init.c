/*
 * ptl_init.c - library life cycle (PtlInit/Fini), the library lock, blocking
 * waits, PtlAbort, and the error mapping from the engine's -FI_E* codes to
 * PTL_* return values.
 *
 * Progress (docs/design.md §8.7): PtlInit makes one engine worker with a
 * progress thread ("ptl_progress"), to which every NI attaches; the thread
 * sleeps on the worker's wait fd (the NIs' transport fds, kicks, the
 * deadline timer) and progresses when it turns readable, so a target is
 * served while its application computes. Application calls progress the
 * same worker too (PtlEQGet, the blocking calls), without waiting for the
 * thread. The worker's lock is the library lock (ptl_priv.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ptl_priv.h"

/* Without an eventfd (none could be made) a waiter naps this long. */
#define PTL_NOFD_NAP_MS	1

struct ptl_lib ptl_lib = {
	.init_lock = PTHREAD_MUTEX_INITIALIZER,
};

int ptl_errno(int ret)
{
	switch (ret) {
	case 0:
		return PTL_OK;
	case -FI_EINVAL:
	case -FI_EOPNOTSUPP:
	case -FI_ENOENT:
	case -FI_EBADFLAGS:
	case -FI_ETOOSMALL:
		return PTL_ARG_INVALID;
	case -FI_ENOMEM:
	case -FI_ENOSPC:
		return PTL_NO_SPACE;
	case -FI_EBUSY:
		return PTL_IN_USE;
	case -FI_EADDRINUSE:
		return PTL_PID_IN_USE;
	default:
		return PTL_FAIL;
	}
}

int ptl_enter(void)
{
	/*
	 * init_lock until the worker lock is ours: PtlFini (which takes
	 * init_lock first too) cannot destroy the worker in between.
	 */
	pthread_mutex_lock(&ptl_lib.init_lock);
	if (!ptl_lib.init_count) {
		pthread_mutex_unlock(&ptl_lib.init_lock);
		return PTL_NO_INIT;
	}
	p4e_worker_lock(ptl_lib.worker);
	pthread_mutex_unlock(&ptl_lib.init_lock);
	return PTL_OK;
}

void ptl_leave(void)
{
	p4e_worker_unlock(ptl_lib.worker);
}

uint64_t ptl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The current millisecond counts as begun, so a call waits timeout or
 * more; 0 is a deadline already past (the call never sleeps).
 */
uint64_t ptl_deadline(ptl_time_t timeout)
{
	struct timespec ts;

	if (timeout == PTL_TIME_FOREVER)
		return UINT64_MAX;
	if (!timeout)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 +
	       ((uint64_t)ts.tv_nsec + 999999) / 1000000 + timeout;
}

int ptl_progress_locked(void)
{
	return p4e_worker_progress(ptl_lib.worker, 64);
}

/* ---- waiters ------------------------------------------------------------ */

/* Lock held: an eventfd for a waiter, kept from an earlier one or new. */
static int ptl_wait_fd_get(void)
{
	if (ptl_lib.nwait_fds)
		return ptl_lib.wait_fds[--ptl_lib.nwait_fds];
	return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/* Lock held: a drained eventfd back, kept for the next waiter. */
static void ptl_wait_fd_put(int fd)
{
	if (fd < 0)
		return;
	if (ptl_lib.nwait_fds < PTL_WAIT_FDS)
		ptl_lib.wait_fds[ptl_lib.nwait_fds++] = fd;
	else
		close(fd);
}

/*
 * Runs in sinks and CT notifications (ptl_priv.h: under the library lock
 * even then), so it only writes eventfds: once per waiter and sleep, and
 * not at all in the common case of nobody asleep.
 */
void ptl_wake_locked(void)
{
	static const uint64_t one = 1;
	struct ptl_waiter *wt;

	p4e_worker_assert_held(ptl_lib.worker);
	for (wt = ptl_lib.waiters; wt; wt = wt->next) {
		if (wt->woken)
			continue;
		wt->woken = true;
		/* cannot fail: the count is at most 1 */
		if (wt->fd >= 0 && write(wt->fd, &one, sizeof(one)) < 0)
			continue;
	}
}

/*
 * The caller looked (lock held) and found nothing: whatever could change
 * that (a sink, a CT notification, PtlAbort, a teardown) needs the lock
 * too, so it comes after the waiter is registered and writes its eventfd.
 * The worker's wait fd is polled as well, so data for this process wakes
 * the waiter, which then progresses itself instead of waiting for the
 * thread to do it and wake it.
 */
void ptl_wait_locked(uint64_t deadline_ms)
{
	struct p4e_worker *w = ptl_lib.worker;
	struct ptl_waiter wt;
	struct pollfd pfd[2];
	uint64_t now = ptl_now_ms(), val;
	int timeout;
	nfds_t n = 0;

	if (deadline_ms <= now)
		return;
	if (deadline_ms == UINT64_MAX)
		timeout = -1;
	else	/* a longer one sleeps again after INT_MAX ms */
		timeout = deadline_ms - now > INT_MAX ? INT_MAX :
			  (int)(deadline_ms - now);
	wt.fd = ptl_wait_fd_get();
	wt.woken = false;
	wt.next = ptl_lib.waiters;
	if (wt.next)
		wt.next->pprev = &wt.next;
	wt.pprev = &ptl_lib.waiters;
	ptl_lib.waiters = &wt;
	if (wt.fd >= 0) {
		pfd[n].fd = wt.fd;
		pfd[n++].events = POLLIN;
	} else if (timeout < 0 || timeout > PTL_NOFD_NAP_MS) {
		timeout = PTL_NOFD_NAP_MS;	/* out of fds: degrade */
	}
	pfd[n].fd = p4e_worker_wait_fd(w);
	pfd[n++].events = POLLIN;
	/* what the worker holds back goes now; its timer is armed */
	p4e_worker_prepare_sleep(w);
	p4e_worker_unlock(w);
	/* EINTR and the rest: the caller looks again */
	(void)poll(pfd, n, timeout);
	p4e_worker_lock(w);
	*wt.pprev = wt.next;
	if (wt.next)
		wt.next->pprev = wt.pprev;
	/* written once, under the lock: the read finds the 1 */
	if (wt.woken && wt.fd >= 0 && read(wt.fd, &val, sizeof(val)) < 0)
		val = 0;
	ptl_wait_fd_put(wt.fd);
	/* the last PtlFini waits for every waiter to be out */
	if (ptl_lib.closing)
		ptl_wake_locked();
}

/*
 * The idle half of a blocking poll's round (lock held), once nothing was
 * found: true to look again (work was progressed, or a sleep ended),
 * false with *ret_p PTL_ABORTED or, past the deadline, timeout_ret.
 */
bool ptl_poll_idle_locked(uint32_t abort_gen, uint64_t deadline,
			  int timeout_ret, int *ret_p)
{
	if (ptl_lib.aborted || ptl_lib.abort_gen != abort_gen) {
		*ret_p = PTL_ABORTED;
		return false;
	}
	if (ptl_progress_locked() > 0)
		return true;
	if (ptl_now_ms() >= deadline) {
		*ret_p = timeout_ret;
		return false;
	}
	ptl_wait_locked(deadline);
	return true;
}

static void ptl_config_read(void)
{
	const char *s = getenv("PTL_TRANSPORT");
	char *end;
	unsigned long v;

	ptl_lib.transport = s && !strcmp(s, "loop") ? &p4t_loop_ops :
						       &p4t_tcp_ops;
	/* processes of one host over shared memory unless PTL_SHM=0 */
	s = getenv("PTL_SHM");
	ptl_lib.local_transport = ptl_lib.transport == &p4t_tcp_ops &&
				  !(s && !strcmp(s, "0")) ? &p4t_shm_ops : NULL;
	ptl_lib.port_base = 20000;
	s = getenv("PTL_PORT_BASE");
	if (s) {
		v = strtoul(s, &end, 0);
		if (!*end && v > 0 && v + 4 * PTL_PID_MAX <= 65535)
			ptl_lib.port_base = (uint32_t)v;
	}
	ptl_lib.peer_timeout_ms = 0;
	s = getenv("PTL_PEER_TIMEOUT");
	if (s) {
		v = strtoul(s, &end, 0);
		if (!*end)
			ptl_lib.peer_timeout_ms = v;
	}
	ptl_lib.pid_hint = PTL_PID_ANY;
	s = getenv("PTL_PID");
	if (s) {
		v = strtoul(s, &end, 0);
		if (!*end && v < PTL_PID_MAX)
			ptl_lib.pid_hint = (ptl_pid_t)v;
	}
	ptl_lib.nid = ntohl(htonl(INADDR_LOOPBACK));
	s = getenv("PTL_IFACE");
	if (s) {
		struct in_addr in;

		if (inet_pton(AF_INET, s, &in) == 1)
			ptl_lib.nid = ntohl(in.s_addr);
	}
}

PTL_EXPORT int PtlInit(void)
{
	struct p4e_worker_attr wa = {
		.locked = true,
		.thread = true,
		.name = "ptl_progress",
	};
	int ret = PTL_OK;

	pthread_mutex_lock(&ptl_lib.init_lock);
	if (ptl_lib.init_count) {
		ptl_lib.init_count++;
		goto out;
	}
	/* nobody else looks at ptl_lib before init_count is set */
	ptl_config_read();
	ptl_lib.have_pid = false;
	ptl_lib.aborted = false;	/* a new instance: nothing aborted */
	if (p4e_worker_create(&wa, &ptl_lib.worker)) {
		ret = PTL_FAIL;
		goto out;
	}
	ptl_lib.init_count = 1;
	ptl_lib.init_pid = getpid();
out:
	pthread_mutex_unlock(&ptl_lib.init_lock);
	return ret;
}

PTL_EXPORT void PtlFini(void)
{
	struct p4e_worker *w;
	int i;

	pthread_mutex_lock(&ptl_lib.init_lock);
	if (!ptl_lib.init_count || --ptl_lib.init_count) {
		pthread_mutex_unlock(&ptl_lib.init_lock);
		return;
	}
	/* new calls wait for init_lock, then find PTL_NO_INIT */
	w = ptl_lib.worker;
	p4e_worker_lock(w);
	for (i = 0; i < PTL_NI_KINDS; i++) {
		if (ptl_lib.nis[i]) {
			ptl_ni_destroy_locked(ptl_lib.nis[i]);
			ptl_lib.nis[i] = NULL;
			ptl_lib.ni_gen[i]++;
		}
	}
	ptl_lib.have_pid = false;
	/*
	 * Blocking calls of other threads (woken by the teardown: their
	 * handles are stale) use the worker until they are out of their
	 * sleep; each wakes us as it comes out.
	 */
	ptl_lib.closing = true;
	while (ptl_lib.waiters)
		ptl_wait_locked(UINT64_MAX);
	ptl_lib.closing = false;
	while (ptl_lib.nwait_fds)
		close(ptl_lib.wait_fds[--ptl_lib.nwait_fds]);
	p4e_worker_unlock(w);
	/* stops and joins the thread: nothing holds the worker lock */
	p4e_worker_destroy(w);
	ptl_lib.worker = NULL;
	pthread_mutex_unlock(&ptl_lib.init_lock);
}

/*
 * The library is unloaded (dlclose of the last plug-in that linked it, or
 * exit) while PtlInit calls were left unmatched, as Open MPI 4.1's osc
 * portals4 leaves its own: the progress thread must not outlive the code
 * it runs, so the last PtlFini happens here. Not in a child of fork that
 * exits: the thread was not copied, the NIs' connections are the parent's,
 * and init_lock may have been copied held.
 */
__attribute__((destructor)) static void ptl_unload(void)
{
	if (!__atomic_load_n(&ptl_lib.init_count, __ATOMIC_ACQUIRE) ||
	    ptl_lib.init_pid != getpid())
		return;
	pthread_mutex_lock(&ptl_lib.init_lock);
	if (ptl_lib.init_count)
		ptl_lib.init_count = 1;
	pthread_mutex_unlock(&ptl_lib.init_lock);
	PtlFini();
}

/*
 * Every blocking call in progress returns PTL_ABORTED, woken at once, and
 * so does every later PtlEQWait/EQPoll/CTWait/CTPoll ("subsequent calls to
 * polling and waiting routines must immediately return PTL_ABORTED"), so
 * a thread that was about to wait cannot enter a wait on an object being
 * freed. Non-blocking calls (PtlEQGet, PtlCTGet) are not affected.
 */
PTL_EXPORT void PtlAbort(void)
{
	if (ptl_enter())
		return;
	ptl_lib.aborted = true;
	ptl_lib.abort_gen++;
	ptl_wake_locked();
	ptl_leave();
}

/* Handles are plain values: equal values name the same object. */
PTL_EXPORT int PtlHandleIsEqual(ptl_handle_any_t handle1,
				ptl_handle_any_t handle2)
{
	return handle1 == handle2;
}

/*
 * Atomics are applied by the engine under the library lock (its worker's)
 * on the host CPU: once an ATOMIC event or ack is seen the result is in
 * memory; a full barrier orders it with the caller's later loads.
 */
PTL_EXPORT int PtlAtomicSync(void)
{
	int ret = ptl_enter();

	if (ret)
		return ret;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ptl_leave();
	return PTL_OK;
}
