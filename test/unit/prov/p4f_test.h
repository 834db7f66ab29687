/*
 * p4f_test.h - shared fixture for the provider's object tests.
 *
 * Tests go through the real libfabric: fi_getinfo loads the plug-in just
 * built (make check sets FI_PROVIDER_PATH to the build's .libs), so what is
 * tested is what an application gets.
 */
#ifndef P4F_TEST_H
#define P4F_TEST_H

#include <criterion/criterion.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define TEST_FI_VERSION FI_VERSION(1, 17)

struct test_env {
	struct fi_info *hints;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

/* Hints that select the portals provider and nothing else. */
static inline struct fi_info *test_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("portals");
	hints->ep_attr->type = FI_EP_RDM;
	return hints;
}

/*
 * fi_getinfo + fi_fabric + fi_domain on the first entry (hints may be
 * NULL), with mr_mode bits set on the info fi_domain gets (an
 * application's choice among the modes its hints offered).
 */
static inline void test_env_open_mr(struct test_env *env,
				    struct fi_info *hints, int mr_mode)
{
	int ret;

	memset(env, 0, sizeof(*env));
	env->hints = hints ? hints : test_hints();
	ret = fi_getinfo(TEST_FI_VERSION, NULL, NULL, 0, env->hints, &env->info);
	cr_assert_eq(ret, 0, "fi_getinfo: %s (is FI_PROVIDER_PATH set?)",
		     fi_strerror(-ret));
	cr_assert_str_eq(env->info->fabric_attr->prov_name, "portals");
	env->info->domain_attr->mr_mode |= mr_mode;
	ret = fi_fabric(env->info->fabric_attr, &env->fabric, NULL);
	cr_assert_eq(ret, 0, "fi_fabric: %s", fi_strerror(-ret));
	ret = fi_domain(env->fabric, env->info, &env->domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
}

static inline void test_env_open(struct test_env *env, struct fi_info *hints)
{
	test_env_open_mr(env, hints, 0);
}

static inline void test_env_close(struct test_env *env)
{
	if (env->domain)
		cr_expect_eq(fi_close(&env->domain->fid), 0);
	if (env->fabric)
		cr_expect_eq(fi_close(&env->fabric->fid), 0);
	fi_freeinfo(env->info);
	fi_freeinfo(env->hints);
	memset(env, 0, sizeof(*env));
}

/* ---- small helpers ------------------------------------------------------- */

static inline uint64_t test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void test_close_ok(struct fid *fid)
{
	int ret = fi_close(fid);

	cr_assert_eq(ret, 0, "fi_close: %s", fi_strerror(-ret));
}

/* poll(2) on one fd for POLLIN: 1 readable, 0 not within timeout ms. */
static inline int test_poll_fd(int fd, int timeout)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout);
}

/*
 * Wait until thread tid sleeps in poll(2), so that what ends its wait is
 * the wake-up under test. Reads /proc/self/task/<tid>/syscall; should that
 * be unavailable, falls back to a short pause.
 */
static inline void test_wait_until_polling(_Atomic pid_t *tid)
{
	char path[64];
	pid_t t;
	long nr;
	FILE *f;
	int i;

	while (!(t = atomic_load(tid)))
		sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)t);
	for (i = 0; i < 50000; i++) {
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%ld", &nr) != 1)
			nr = -1;
		fclose(f);
		if (nr == SYS_poll || nr == SYS_ppoll)
			return;
		usleep(100);
	}
	usleep(50 * 1000);
}

#endif /* P4F_TEST_H */
