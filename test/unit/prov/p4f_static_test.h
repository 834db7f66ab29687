/*
 * p4f_static_test.h - a fabric (and domain) opened through the provider
 * code linked into the test binary (p4f_getinfo -> p4f_fabric_open ->
 * fi_domain) rather than the plug-in, so that a test can call internal
 * entry points (p4f_cq_write, p4f_cntr_inc, ...) on the
 * objects the way the data path does. Used by test_cq*.c, test_cntr.c and
 * test_eq.c.
 *
 * One test binary includes it once: the env is the binary's own.
 */
#ifndef P4F_STATIC_TEST_H
#define P4F_STATIC_TEST_H

#include "p4f.h"
#include "p4f_test.h"

struct static_env {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;	/* NULL: static_setup_fabric() */
};

static struct static_env env;

static inline void static_env_open(bool with_domain)
{
	struct fi_info *hints = test_hints();
	int ret;

	ret = p4f_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &env.info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "p4f_getinfo: %s", fi_strerror(-ret));
	ret = p4f_fabric_open(env.info->fabric_attr, &env.fabric, NULL);
	cr_assert_eq(ret, 0, "p4f_fabric_open: %s", fi_strerror(-ret));
	if (!with_domain)
		return;
	ret = fi_domain(env.fabric, env.info, &env.domain, NULL);
	cr_assert_eq(ret, 0, "fi_domain: %s", fi_strerror(-ret));
}

/* Suite .init: a fabric and a domain. */
static inline void static_setup(void)
{
	static_env_open(true);
}

/* Suite .init: a fabric only. */
static inline void static_setup_fabric(void)
{
	static_env_open(false);
}

/*
 * Suite .fini. fi_close returning 0 on the domain and the fabric also
 * proves that every object, set and binding the test made gave its
 * reference back.
 */
static inline void static_teardown(void)
{
	if (env.domain)
		cr_expect_eq(fi_close(&env.domain->fid), 0);
	if (env.fabric)
		cr_expect_eq(fi_close(&env.fabric->fid), 0);
	fi_freeinfo(env.info);
	memset(&env, 0, sizeof(env));
}

/*
 * Bind fid (a CQ or counter of env.domain) to a new endpoint with flags:
 * closing fid must then fail with -FI_EBUSY, and succeed once the endpoint
 * is gone. Closes both.
 */
static inline void static_close_while_bound(struct fid *fid, uint64_t flags)
{
	struct fid_ep *ep;
	int ret;

	ret = fi_endpoint(env.domain, env.info, &ep, NULL);
	cr_assert_eq(ret, 0, "fi_endpoint: %s", fi_strerror(-ret));
	cr_assert_eq(fi_ep_bind(ep, fid, flags), 0);
	cr_expect_eq(fi_close(fid), -FI_EBUSY);
	test_close_ok(&ep->fid);
	test_close_ok(fid);
}

#endif /* P4F_STATIC_TEST_H */
