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
#include <stdlib.h>
#include <string.h>

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

/* fi_getinfo + fi_fabric + fi_domain on the first entry. hints may be NULL. */
/* As test_env_open, with mr_mode bits set on the info fi_domain gets (an
 * application's choice among the modes its hints offered). */
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

#endif /* P4F_TEST_H */
