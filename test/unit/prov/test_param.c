/*
 * test_param.c - the libfabric layer's glue: p4f_param (FI_<PROV>_*
 * parameters) and p4f_stubs (the -FI_ENOSYS ops slots).
 *
 * Parameters are defined on a test provider named "p4ftest", so they are
 * read from FI_P4FTEST_<NAME>. libfabric reads the environment when the
 * value is fetched, so each test sets it before p4f_param_load_all().
 * Criterion runs every test in its own process: environment changes do
 * not leak between tests. Parameter structs hold strings by value: the
 * worker process may not map the parent's string literals at the same
 * addresses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "p4f_param.h"
#include "p4f_stubs.h"
#include "p4u_compiler.h"

/* ---- p4f_param ---------------------------------------------------------- */

static struct fi_provider test_prov = {
	.name = "p4ftest",
};

static const char *const param_env_names[] = {
	"FI_P4FTEST_SIZE", "FI_P4FTEST_RANGED_SIZE", "FI_P4FTEST_INT",
	"FI_P4FTEST_RANGED_INT", "FI_P4FTEST_FLAG", "FI_P4FTEST_NAME",
	"FI_P4FTEST_NAME_DEF",
};

static struct {
	size_t size;
	size_t ranged_size;
	int ival;
	int ranged_int;
	int flag;
	char *name;
	char *name_def;
} pv;

static const struct p4f_param param_table[] = {
	{ "size", P4F_PARAM_SIZE, "a size", { .size = 4096 }, &pv.size, 0, 0 },
	{ "ranged_size", P4F_PARAM_SIZE, "a bounded size", { .size = 64 },
	  &pv.ranged_size, 16, 1 << 20 },
	{ "int", P4F_PARAM_INT, "an int", { .ival = -7 }, &pv.ival, 0, 0 },
	{ "ranged_int", P4F_PARAM_INT, "a bounded int", { .ival = 5 },
	  &pv.ranged_int, -10, 10 },
	{ "flag", P4F_PARAM_BOOL, "a flag", { .bval = 1 }, &pv.flag, 0, 0 },
	{ "name", P4F_PARAM_STR, "a string", { .str = NULL }, &pv.name, 0, 0 },
	{ "name_def", P4F_PARAM_STR, "a string with a default",
	  { .str = "lo" }, &pv.name_def, 0, 0 },
};

static void param_setup(void)
{
	size_t i;

	for (i = 0; i < P4U_ARRAY_SIZE(param_env_names); i++)
		unsetenv(param_env_names[i]);
	/* values that no default equals, so "left alone" cannot pass */
	memset(&pv, 0x5a, sizeof(pv));
}

static void param_teardown(void)
{
}

TestSuite(param, .init = param_setup, .fini = param_teardown, .timeout = 30);

static void param_load(void)
{
	cr_assert_eq(p4f_param_define_all(&test_prov, param_table,
					  P4U_ARRAY_SIZE(param_table)), 0);
	p4f_param_load_all(&test_prov, param_table,
			   P4U_ARRAY_SIZE(param_table));
}

Test(param, defaults_when_unset)
{
	param_load();
	cr_assert_eq(pv.size, 4096);
	cr_assert_eq(pv.ranged_size, 64);
	cr_assert_eq(pv.ival, -7);
	cr_assert_eq(pv.ranged_int, 5);
	cr_assert_eq(pv.flag, 1);
	cr_assert_null(pv.name);
	cr_assert_str_eq(pv.name_def, "lo");
}

Test(param, env_values_applied)
{
	setenv("FI_P4FTEST_SIZE", "123456789", 1);
	setenv("FI_P4FTEST_RANGED_SIZE", "0x100", 1);
	setenv("FI_P4FTEST_INT", "-42", 1);
	setenv("FI_P4FTEST_RANGED_INT", "-10", 1);
	setenv("FI_P4FTEST_FLAG", "0", 1);
	setenv("FI_P4FTEST_NAME", "eth7", 1);
	setenv("FI_P4FTEST_NAME_DEF", "ib0", 1);
	param_load();
	cr_assert_eq(pv.size, 123456789);
	cr_assert_eq(pv.ranged_size, 256);
	cr_assert_eq(pv.ival, -42);
	cr_assert_eq(pv.ranged_int, -10);
	cr_assert_eq(pv.flag, 0);
	cr_assert_str_eq(pv.name, "eth7");
	cr_assert_str_eq(pv.name_def, "ib0");
}

/*
 * The definitions reach libfabric under FI_P4FTEST_*, defaults in the
 * help. fi_getparams() initialises libfabric, which starts a fresh
 * parameter list, so it is called once before defining.
 */
Test(param, define_registers_with_defaults)
{
	struct fi_param *params;
	int count, i, found = 0;

	cr_assert_eq(fi_getparams(&params, &count), 0);
	fi_freeparams(params);
	cr_assert_eq(p4f_param_define_all(&test_prov, param_table,
					  P4U_ARRAY_SIZE(param_table)), 0);
	cr_assert_eq(fi_getparams(&params, &count), 0);
	for (i = 0; i < count; i++) {
		if (!strcmp(params[i].name, "FI_P4FTEST_RANGED_SIZE")) {
			cr_assert_eq(params[i].type, FI_PARAM_SIZE_T);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: 64)"),
					   "help: %s", params[i].help_string);
			found++;
		} else if (!strcmp(params[i].name, "FI_P4FTEST_FLAG")) {
			cr_assert_eq(params[i].type, FI_PARAM_BOOL);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: 1)"));
			found++;
		} else if (!strcmp(params[i].name, "FI_P4FTEST_NAME")) {
			cr_assert_eq(params[i].type, FI_PARAM_STRING);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: unset)"));
			found++;
		} else if (!strcmp(params[i].name, "FI_P4FTEST_INT")) {
			cr_assert_eq(params[i].type, FI_PARAM_INT);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: -7)"));
			found++;
		}
	}
	cr_assert_eq(found, 4, "found %d of 4 parameters", found);
	fi_freeparams(params);
}

struct range_case {
	char env[32];		/* variable */
	char value[32];
	long long want;		/* value after load */
};

/*
 * Bounds: in range applied, edges applied, out of range keeps the
 * default. Negative sizes wrap in libfabric's parsing and must still be
 * refused by a bounded parameter.
 */
ParameterizedTestParameters(param, range_checks)
{
	static struct range_case cases[] = {
		{ "FI_P4FTEST_RANGED_SIZE", "16", 16 },
		{ "FI_P4FTEST_RANGED_SIZE", "1048576", 1048576 },
		{ "FI_P4FTEST_RANGED_SIZE", "15", 64 },
		{ "FI_P4FTEST_RANGED_SIZE", "1048577", 64 },
		{ "FI_P4FTEST_RANGED_SIZE", "0", 64 },
		{ "FI_P4FTEST_RANGED_SIZE", "-1", 64 },
		{ "FI_P4FTEST_RANGED_SIZE", "-100", 64 },
		{ "FI_P4FTEST_RANGED_SIZE", "99999999999999999999", 64 },
		{ "FI_P4FTEST_RANGED_INT", "10", 10 },
		{ "FI_P4FTEST_RANGED_INT", "-10", -10 },
		{ "FI_P4FTEST_RANGED_INT", "0", 0 },
		{ "FI_P4FTEST_RANGED_INT", "11", 5 },
		{ "FI_P4FTEST_RANGED_INT", "-11", 5 },
		{ "FI_P4FTEST_RANGED_INT", "100000", 5 },
	};

	return cr_make_param_array(struct range_case, cases,
				   P4U_ARRAY_SIZE(cases));
}

ParameterizedTest(struct range_case *c, param, range_checks)
{
	long long got;

	param_setup();
	setenv(c->env, c->value, 1);
	param_load();
	got = !strcmp(c->env, "FI_P4FTEST_RANGED_SIZE") ?
		(long long)pv.ranged_size : (long long)pv.ranged_int;
	cr_assert_eq(got, c->want, "%s=%s gave %lld, want %lld", c->env,
		     c->value, got, c->want);
	/* the unbounded neighbours keep their defaults */
	cr_assert_eq(pv.size, 4096);
	cr_assert_eq(pv.ival, -7);
}

struct bool_case {
	char value[16];
	int def;		/* default for this run */
	int want;
};

ParameterizedTestParameters(param, bool_parsing)
{
	static struct bool_case cases[] = {
		{ "1", 0, 1 }, { "0", 1, 0 }, { "yes", 0, 1 }, { "no", 1, 0 },
		{ "true", 0, 1 }, { "false", 1, 0 }, { "on", 0, 1 },
		{ "off", 1, 0 }, { "YES", 0, 1 }, { "Off", 1, 0 },
		/* not booleans: the default stays, whichever it is */
		{ "maybe", 0, 0 }, { "maybe", 1, 1 }, { "", 1, 1 },
		{ "", 0, 0 }, { "2", 0, 0 },
	};

	return cr_make_param_array(struct bool_case, cases,
				   P4U_ARRAY_SIZE(cases));
}

ParameterizedTest(struct bool_case *c, param, bool_parsing)
{
	struct p4f_param table[] = {
		{ "flag", P4F_PARAM_BOOL, "a flag", { .bval = c->def }, &pv.flag,
		  0, 0 },
	};

	param_setup();
	setenv("FI_P4FTEST_FLAG", c->value, 1);
	cr_assert_eq(p4f_param_define_all(&test_prov, table, 1), 0);
	p4f_param_load_all(&test_prov, table, 1);
	cr_assert_eq(pv.flag, c->want, "\"%s\" (default %d) gave %d", c->value,
		     c->def, pv.flag);
}

Test(param, empty_string_keeps_default)
{
	setenv("FI_P4FTEST_NAME", "", 1);
	setenv("FI_P4FTEST_NAME_DEF", "", 1);
	param_load();
	cr_assert_null(pv.name);
	cr_assert_str_eq(pv.name_def, "lo");
}

Test(param, load_twice_resets_to_defaults)
{
	setenv("FI_P4FTEST_SIZE", "77", 1);
	param_load();
	cr_assert_eq(pv.size, 77);
	unsetenv("FI_P4FTEST_SIZE");
	p4f_param_load_all(&test_prov, param_table,
			   P4U_ARRAY_SIZE(param_table));
	cr_assert_eq(pv.size, 4096);
}

/* ---- p4f_stubs ---------------------------------------------------------- */

static void stubs_setup(void)
{
}

static void stubs_teardown(void)
{
}

TestSuite(stubs, .init = stubs_setup, .fini = stubs_teardown, .timeout = 30);

typedef void (*any_func_t)(void);

/* Every slot after the size field is set, and there is nothing else. */
static void assert_table_full(const void *ops, size_t struct_size,
			      const char *name)
{
	const char *slots = (const char *)ops + sizeof(size_t);
	size_t size, n, i;
	any_func_t fn;

	memcpy(&size, ops, sizeof(size));
	cr_assert_eq(size, struct_size, "%s: size %zu, want %zu", name, size,
		     struct_size);
	cr_assert_eq((size - sizeof(size_t)) % sizeof(any_func_t), 0);
	n = (size - sizeof(size_t)) / sizeof(any_func_t);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++) {
		memcpy(&fn, slots + i * sizeof(fn), sizeof(fn));
		cr_assert_not_null(fn, "%s: slot %zu is NULL", name, i);
	}
}

Test(stubs, tables_have_every_slot)
{
	assert_table_full(&p4f_no_collective_ops,
			  sizeof(struct fi_ops_collective), "collective");
}

/* Every slot of the table, called through its own type. */
Test(stubs, table_slots_return_enosys)
{
	const struct fi_ops_collective *co = &p4f_no_collective_ops;
	const ssize_t nosys = -FI_ENOSYS;

	cr_assert_eq(co->barrier(NULL, 0, NULL), nosys);
	cr_assert_eq(co->broadcast(NULL, NULL, 0, NULL, 0, 0, FI_INT8, 0, NULL),
		     nosys);
	cr_assert_eq(co->alltoall(NULL, NULL, 0, NULL, NULL, NULL, 0, FI_INT8,
				  0, NULL), nosys);
	cr_assert_eq(co->allreduce(NULL, NULL, 0, NULL, NULL, NULL, 0, FI_INT8,
				   FI_SUM, 0, NULL), nosys);
	cr_assert_eq(co->allgather(NULL, NULL, 0, NULL, NULL, NULL, 0, FI_INT8,
				   0, NULL), nosys);
	cr_assert_eq(co->reduce_scatter(NULL, NULL, 0, NULL, NULL, NULL, 0,
					FI_INT8, FI_SUM, 0, NULL), nosys);
	cr_assert_eq(co->reduce(NULL, NULL, 0, NULL, NULL, NULL, 0, 0, FI_INT8,
				FI_SUM, 0, NULL), nosys);
	cr_assert_eq(co->scatter(NULL, NULL, 0, NULL, NULL, NULL, 0, 0, FI_INT8,
				 0, NULL), nosys);
	cr_assert_eq(co->gather(NULL, NULL, 0, NULL, NULL, NULL, 0, 0, FI_INT8,
				0, NULL), nosys);
	cr_assert_eq(co->msg(NULL, NULL, NULL, NULL, 0, 0), nosys);
	cr_assert_eq(co->barrier2(NULL, 0, 0, NULL), nosys);
}

/* Every free-standing stub (the ones the provider's ops tables use). */
Test(stubs, free_stubs_return_enosys)
{
	cr_assert_eq(p4f_no_bind(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_control(NULL, 0, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_ops_open(NULL, "x", 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_tostr(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_ops_set(NULL, "x", 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_fabric_passive_ep(NULL, NULL, NULL, NULL),
		     -FI_ENOSYS);
	cr_assert_eq(p4f_no_domain_scalable_ep(NULL, NULL, NULL, NULL),
		     -FI_ENOSYS);
	cr_assert_eq(p4f_no_domain_stx_ctx(NULL, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_domain_srx_ctx(NULL, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_domain_query_collective(NULL, FI_BARRIER, NULL, 0),
		     -FI_ENOSYS);
	cr_assert_eq(p4f_no_ep_tx_ctx(NULL, 0, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_ep_rx_ctx(NULL, 0, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_setname(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_getpeer(NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_connect(NULL, NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_listen(NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_accept(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_reject(NULL, NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_shutdown(NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4f_no_cm_join(NULL, NULL, 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4f_no_av_av_set(NULL, NULL, NULL, NULL), -FI_ENOSYS);
}
