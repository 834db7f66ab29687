/*
 * test_fabric.c - the plug-in as libfabric loads it: fi_getinfo finds it,
 * fi_fabric / fi_domain open and close with the right errors for misuse,
 * and the provider's parameters are registered (fi_info -e lists them).
 */
#include "p4f_test.h"

#include <rdma/fi_ext.h>

TestSuite(fabric, .timeout = 30);

Test(fabric, provider_is_found)
{
	struct fi_info *hints = test_hints(), *info = NULL, *cur;
	size_t n = 0;

	cr_assert_eq(fi_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &info),
		     0);
	for (cur = info; cur; cur = cur->next, n++) {
		cr_expect_str_eq(cur->fabric_attr->prov_name, "portals");
		cr_expect_str_eq(cur->fabric_attr->name, "portals");
		cr_expect_eq(cur->ep_attr->type, FI_EP_RDM);
		cr_expect_eq(cur->mode, 0, "the provider never needs a mode bit");
		cr_expect_not_null(cur->domain_attr->name);
	}
	cr_expect_gt(n, 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

Test(fabric, open_close_fabric_and_domain)
{
	struct test_env env;

	test_env_open(&env, NULL);
	test_env_close(&env);
}

Test(fabric, wrong_fabric_name_is_refused)
{
	struct test_env env;
	struct fi_fabric_attr attr;
	struct fid_fabric *fabric;

	test_env_open(&env, NULL);
	attr = *env.info->fabric_attr;
	attr.name = "not-portals";
	cr_expect_neq(fi_fabric(&attr, &fabric, NULL), 0);
	test_env_close(&env);
}

Test(fabric, close_with_open_domain_is_busy)
{
	struct test_env env;

	test_env_open(&env, NULL);
	cr_expect_eq(fi_close(&env.fabric->fid), -FI_EBUSY);
	test_env_close(&env);
}

Test(fabric, domain_with_unknown_interface_is_refused)
{
	struct test_env env;
	struct fi_info *info;
	struct fid_domain *dom;

	test_env_open(&env, NULL);
	info = fi_dupinfo(env.info);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("no-such-if0");
	cr_expect_neq(fi_domain(env.fabric, info, &dom, NULL), 0);
	fi_freeinfo(info);
	test_env_close(&env);
}

Test(fabric, domain_close_with_open_endpoint_is_busy)
{
	struct test_env env;
	struct fid_ep *ep;

	test_env_open(&env, NULL);
	cr_assert_eq(fi_endpoint(env.domain, env.info, &ep, NULL), 0);
	cr_expect_eq(fi_close(&env.domain->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&ep->fid), 0);
	test_env_close(&env);
}

Test(fabric, unimplemented_domain_ops_say_enosys)
{
	struct test_env env;
	struct fi_tx_attr tx = { 0 };
	struct fid_stx *stx;

	test_env_open(&env, NULL);
	cr_expect_eq(fi_stx_context(env.domain, &tx, &stx, NULL), -FI_ENOSYS);
	/* deferred work is implemented (test_trigger.c); other commands */
	cr_expect_eq(fi_control(&env.domain->fid, FI_GETWAIT, NULL),
		     -FI_ENOSYS);
	cr_expect_eq(fi_control(&env.domain->fid, FI_QUEUE_WORK, NULL),
		     -FI_EINVAL);
	test_env_close(&env);
}

/* fi_info -e shows what fi_param_define registered. */
Test(fabric, parameters_are_registered)
{
	struct fi_param *params = NULL;
	int count = 0, i, found = 0;
	struct fi_info *hints = test_hints(), *info = NULL;

	/* loading the plug-in registers its parameters */
	cr_assert_eq(fi_getinfo(TEST_FI_VERSION, NULL, NULL, 0, hints, &info),
		     0);
	cr_assert_eq(fi_getparams(&params, &count), 0);
	for (i = 0; i < count; i++)
		if (!strncmp(params[i].name, "FI_PORTALS_", 11))
			found++;
	cr_expect_geq(found, 10, "only %d FI_PORTALS_* parameters", found);
	fi_freeparams(params);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
