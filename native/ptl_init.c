/*
 * ptl_init.c - library life cycle (PtlInit/Fini), the lock, blocking-wait
 * helpers, PtlAbort, the progress thread, and the error mapping from the
 * engine's -FI_E* codes to PTL_* return values.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ptl_priv.h"

struct ptl_lib ptl_lib = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
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

bool ptl_inited_locked(void)
{
	return ptl_lib.init_count > 0;
}

int ptl_enter(void)
{
	pthread_mutex_lock(&ptl_lib.lock);
	if (!ptl_lib.init_count) {
		pthread_mutex_unlock(&ptl_lib.lock);
		return PTL_NO_INIT;
	}
	return PTL_OK;
}

void ptl_leave(void)
{
	pthread_mutex_unlock(&ptl_lib.lock);
}

uint64_t ptl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t ptl_deadline(ptl_time_t timeout)
{
	return timeout == PTL_TIME_FOREVER ? UINT64_MAX :
	       ptl_now_ms() + timeout;
}

int ptl_progress_locked(void)
{
	int i, work = 0;

	for (i = 0; i < PTL_NI_KINDS; i++)
		if (ptl_lib.nis[i])
			work += p4e_dom_progress(ptl_lib.nis[i]->dom, 64);
	return work;
}

/*
 * Sleep on the condition, at most 10 ms at a time: the progress thread
 * (or the sinks) broadcast when something happened; the bound makes a
 * waiter progress itself too, should the thread be busy elsewhere.
 */
void ptl_sleep_locked(uint64_t deadline_ms)
{
	uint64_t now = ptl_now_ms(), until;
	struct timespec ts;

	if (deadline_ms <= now)
		return;
	until = deadline_ms - now > 10 ? 10 : deadline_ms - now;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(until * 1000000);
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&ptl_lib.cond, &ptl_lib.lock, &ts);
}

/*
 * The idle half of a blocking poll's round (lock held), once nothing was
 * found: true to look again (work was progressed, or a sleep ended),
 * false with *ret_p PTL_ABORTED or, past the deadline, timeout_ret.
 */
bool ptl_poll_idle_locked(uint32_t abort_gen, uint64_t deadline,
			  int timeout_ret, int *ret_p)
{
	if (ptl_lib.abort_gen != abort_gen) {
		*ret_p = PTL_ABORTED;
		return false;
	}
	if (ptl_progress_locked() > 0)
		return true;
	if (ptl_now_ms() >= deadline) {
		*ret_p = timeout_ret;
		return false;
	}
	ptl_sleep_locked(deadline);
	return true;
}

void ptl_wake_thread(void)
{
	uint64_t one = 1;

	if (ptl_lib.wake_fd >= 0 &&
	    write(ptl_lib.wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
}

/*
 * The progress thread: the engine moves data only when progressed, and a
 * Portals target need not call in (a get from a process that computes must
 * still be served). It sleeps in poll() on the NIs' transport fds without
 * the lock, then progresses under it.
 */
static void *ptl_progress_thread(void *arg)
{
	struct pollfd pfd[PTL_NI_KINDS + 1];
	uint64_t junk;
	int i, n, work = 0;

	(void)arg;
	pthread_mutex_lock(&ptl_lib.lock);
	while (!ptl_lib.thread_stop) {
		n = 0;
		pfd[n].fd = ptl_lib.wake_fd;
		pfd[n++].events = POLLIN;
		for (i = 0; i < PTL_NI_KINDS; i++) {
			if (!ptl_lib.nis[i])
				continue;
			pfd[n].fd = p4e_ni_wait_fd(ptl_lib.nis[i]->eni);
			pfd[n++].events = POLLIN;
		}
		pthread_mutex_unlock(&ptl_lib.lock);
		/* busy: only look; idle: sleep until an fd or 10 ms */
		poll(pfd, (nfds_t)n, work > 0 ? 0 : 10);
		if (pfd[0].revents & POLLIN &&
		    read(ptl_lib.wake_fd, &junk, sizeof(junk)) < 0)
			junk = 0;
		/* one round per lock hold: application calls get their turn */
		pthread_mutex_lock(&ptl_lib.lock);
		work = ptl_progress_locked();
		if (work > 0)
			pthread_cond_broadcast(&ptl_lib.cond);
	}
	pthread_mutex_unlock(&ptl_lib.lock);
	return NULL;
}

static void ptl_config_read(void)
{
	const char *s = getenv("PTL_TRANSPORT");
	char *end;
	unsigned long v;

	ptl_lib.transport = s && !strcmp(s, "loop") ? &p4t_loop_ops :
						       &p4t_tcp_ops;
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
	pthread_condattr_t ca;
	int ret;

	pthread_mutex_lock(&ptl_lib.lock);
	if (ptl_lib.init_count++) {
		pthread_mutex_unlock(&ptl_lib.lock);
		return PTL_OK;
	}
	ptl_config_read();
	ptl_lib.have_pid = false;
	pthread_condattr_init(&ca);
	pthread_cond_init(&ptl_lib.cond, &ca);
	pthread_condattr_destroy(&ca);
	ptl_lib.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ptl_lib.wake_fd < 0)
		goto err;
	ptl_lib.thread_stop = false;
	ret = pthread_create(&ptl_lib.thread, NULL, ptl_progress_thread, NULL);
	if (ret) {
		close(ptl_lib.wake_fd);
		ptl_lib.wake_fd = -1;
		goto err;
	}
	ptl_lib.thread_on = true;
	pthread_mutex_unlock(&ptl_lib.lock);
	return PTL_OK;
err:
	pthread_cond_destroy(&ptl_lib.cond);
	ptl_lib.init_count = 0;
	pthread_mutex_unlock(&ptl_lib.lock);
	return PTL_FAIL;
}

void ptl_ni_destroy_locked(struct ptl_ni *ni);

PTL_EXPORT void PtlFini(void)
{
	int i;

	pthread_mutex_lock(&ptl_lib.lock);
	if (!ptl_lib.init_count || --ptl_lib.init_count) {
		pthread_mutex_unlock(&ptl_lib.lock);
		return;
	}
	ptl_lib.thread_stop = true;
	ptl_wake_thread();
	pthread_mutex_unlock(&ptl_lib.lock);
	pthread_join(ptl_lib.thread, NULL);
	pthread_mutex_lock(&ptl_lib.lock);
	ptl_lib.thread_on = false;
	for (i = 0; i < PTL_NI_KINDS; i++) {
		if (ptl_lib.nis[i]) {
			ptl_ni_destroy_locked(ptl_lib.nis[i]);
			ptl_lib.nis[i] = NULL;
			ptl_lib.ni_gen[i]++;
		}
	}
	close(ptl_lib.wake_fd);
	ptl_lib.wake_fd = -1;
	ptl_lib.have_pid = false;
	pthread_cond_destroy(&ptl_lib.cond);
	pthread_mutex_unlock(&ptl_lib.lock);
}

/* Every blocking call in progress returns PTL_ABORTED. */
PTL_EXPORT void PtlAbort(void)
{
	pthread_mutex_lock(&ptl_lib.lock);
	if (ptl_lib.init_count) {
		ptl_lib.abort_gen++;
		pthread_cond_broadcast(&ptl_lib.cond);
	}
	pthread_mutex_unlock(&ptl_lib.lock);
}

/* Handles are plain values: equal values name the same object. */
PTL_EXPORT int PtlHandleIsEqual(ptl_handle_any_t handle1,
				ptl_handle_any_t handle2)
{
	return handle1 == handle2;
}

/*
 * Atomics are applied by the engine under the library lock on the host
 * CPU: once an ATOMIC event or ack is seen the result is in memory; a full
 * barrier orders it with the caller's later loads.
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
