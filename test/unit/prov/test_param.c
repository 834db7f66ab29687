/*
 * test_param.c - the libfabric layer's glue: p4f_param (FI_<PROV>_*
 * parameters) and p4u_stubs (the -FI_ENOSYS ops tables).
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
#include "p4u_compiler.h"
#include "p4u_stubs.h"

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

/* ---- p4u_stubs ---------------------------------------------------------- */

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
	assert_table_full(&p4u_no_msg_ops, sizeof(struct fi_ops_msg), "msg");
	assert_table_full(&p4u_no_tagged_ops, sizeof(struct fi_ops_tagged),
			  "tagged");
	assert_table_full(&p4u_no_rma_ops, sizeof(struct fi_ops_rma), "rma");
	assert_table_full(&p4u_no_atomic_ops, sizeof(struct fi_ops_atomic),
			  "atomic");
	assert_table_full(&p4u_no_cm_ops, sizeof(struct fi_ops_cm), "cm");
	assert_table_full(&p4u_no_collective_ops,
			  sizeof(struct fi_ops_collective), "collective");
	assert_table_full(&p4u_no_ep_ops, sizeof(struct fi_ops_ep), "ep");
}

/* Every slot of every table, called through its own type. */
Test(stubs, table_slots_return_enosys)
{
	const struct fi_ops_msg *m = &p4u_no_msg_ops;
	const struct fi_ops_tagged *t = &p4u_no_tagged_ops;
	const struct fi_ops_rma *r = &p4u_no_rma_ops;
	const struct fi_ops_atomic *a = &p4u_no_atomic_ops;
	const struct fi_ops_cm *c = &p4u_no_cm_ops;
	const struct fi_ops_collective *co = &p4u_no_collective_ops;
	const struct fi_ops_ep *e = &p4u_no_ep_ops;
	const ssize_t nosys = -FI_ENOSYS;

	cr_assert_eq(m->recv(NULL, NULL, 0, NULL, 0, NULL), nosys);
	cr_assert_eq(m->recvv(NULL, NULL, NULL, 0, 0, NULL), nosys);
	cr_assert_eq(m->recvmsg(NULL, NULL, 0), nosys);
	cr_assert_eq(m->send(NULL, NULL, 0, NULL, 0, NULL), nosys);
	cr_assert_eq(m->sendv(NULL, NULL, NULL, 0, 0, NULL), nosys);
	cr_assert_eq(m->sendmsg(NULL, NULL, 0), nosys);
	cr_assert_eq(m->inject(NULL, NULL, 0, 0), nosys);
	cr_assert_eq(m->senddata(NULL, NULL, 0, NULL, 0, 0, NULL), nosys);
	cr_assert_eq(m->injectdata(NULL, NULL, 0, 0, 0), nosys);

	cr_assert_eq(t->recv(NULL, NULL, 0, NULL, 0, 0, 0, NULL), nosys);
	cr_assert_eq(t->recvv(NULL, NULL, NULL, 0, 0, 0, 0, NULL), nosys);
	cr_assert_eq(t->recvmsg(NULL, NULL, 0), nosys);
	cr_assert_eq(t->send(NULL, NULL, 0, NULL, 0, 0, NULL), nosys);
	cr_assert_eq(t->sendv(NULL, NULL, NULL, 0, 0, 0, NULL), nosys);
	cr_assert_eq(t->sendmsg(NULL, NULL, 0), nosys);
	cr_assert_eq(t->inject(NULL, NULL, 0, 0, 0), nosys);
	cr_assert_eq(t->senddata(NULL, NULL, 0, NULL, 0, 0, 0, NULL), nosys);
	cr_assert_eq(t->injectdata(NULL, NULL, 0, 0, 0, 0), nosys);

	cr_assert_eq(r->read(NULL, NULL, 0, NULL, 0, 0, 0, NULL), nosys);
	cr_assert_eq(r->readv(NULL, NULL, NULL, 0, 0, 0, 0, NULL), nosys);
	cr_assert_eq(r->readmsg(NULL, NULL, 0), nosys);
	cr_assert_eq(r->write(NULL, NULL, 0, NULL, 0, 0, 0, NULL), nosys);
	cr_assert_eq(r->writev(NULL, NULL, NULL, 0, 0, 0, 0, NULL), nosys);
	cr_assert_eq(r->writemsg(NULL, NULL, 0), nosys);
	cr_assert_eq(r->inject(NULL, NULL, 0, 0, 0, 0), nosys);
	cr_assert_eq(r->writedata(NULL, NULL, 0, NULL, 0, 0, 0, 0, NULL), nosys);
	cr_assert_eq(r->injectdata(NULL, NULL, 0, 0, 0, 0, 0), nosys);

	cr_assert_eq(a->write(NULL, NULL, 0, NULL, 0, 0, 0, FI_INT8, FI_SUM,
			      NULL), nosys);
	cr_assert_eq(a->writev(NULL, NULL, NULL, 0, 0, 0, 0, FI_INT8, FI_SUM,
			       NULL), nosys);
	cr_assert_eq(a->writemsg(NULL, NULL, 0), nosys);
	cr_assert_eq(a->inject(NULL, NULL, 0, 0, 0, 0, FI_INT8, FI_SUM), nosys);
	cr_assert_eq(a->readwrite(NULL, NULL, 0, NULL, NULL, NULL, 0, 0, 0,
				  FI_INT8, FI_SUM, NULL), nosys);
	cr_assert_eq(a->readwritev(NULL, NULL, NULL, 0, NULL, NULL, 0, 0, 0, 0,
				   FI_INT8, FI_SUM, NULL), nosys);
	cr_assert_eq(a->readwritemsg(NULL, NULL, NULL, NULL, 0, 0), nosys);
	cr_assert_eq(a->compwrite(NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL,
				  0, 0, 0, FI_INT8, FI_CSWAP, NULL), nosys);
	cr_assert_eq(a->compwritev(NULL, NULL, NULL, 0, NULL, NULL, 0, NULL,
				   NULL, 0, 0, 0, 0, FI_INT8, FI_CSWAP, NULL),
		     nosys);
	cr_assert_eq(a->compwritemsg(NULL, NULL, NULL, NULL, 0, NULL, NULL, 0,
				     0), nosys);
	cr_assert_eq(a->writevalid(NULL, FI_INT8, FI_SUM, NULL), -FI_ENOSYS);
	cr_assert_eq(a->readwritevalid(NULL, FI_INT8, FI_SUM, NULL), -FI_ENOSYS);
	cr_assert_eq(a->compwritevalid(NULL, FI_INT8, FI_CSWAP, NULL),
		     -FI_ENOSYS);

	cr_assert_eq(c->setname(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(c->getname(NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(c->getpeer(NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(c->connect(NULL, NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(c->listen(NULL), -FI_ENOSYS);
	cr_assert_eq(c->accept(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(c->reject(NULL, NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(c->shutdown(NULL, 0), -FI_ENOSYS);
	cr_assert_eq(c->join(NULL, NULL, 0, NULL, NULL), -FI_ENOSYS);

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

	cr_assert_eq(e->cancel(NULL, NULL), nosys);
	cr_assert_eq(e->getopt(NULL, 0, 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(e->setopt(NULL, 0, 0, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(e->tx_ctx(NULL, 0, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(e->rx_ctx(NULL, 0, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(e->rx_size_left(NULL), nosys);
	cr_assert_eq(e->tx_size_left(NULL), nosys);
}

/* A few of the free-standing stubs, including the documented exceptions. */
Test(stubs, representative_stubs)
{
	char buf[16];

	cr_assert_eq(p4u_no_close(NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_bind(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_control(NULL, 0, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_ops_open(NULL, "x", 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_fabric_domain(NULL, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_domain_cq_open(NULL, NULL, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_domain_query_atomic(NULL, FI_INT8, FI_SUM, NULL, 0),
		     -FI_ENOSYS);
	cr_assert_eq(p4u_no_mr_reg(NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL),
		     -FI_ENOSYS);
	cr_assert_eq(p4u_no_cq_read(NULL, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_cq_sread(NULL, NULL, 0, NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_cntr_add(NULL, 1), -FI_ENOSYS);
	cr_assert_eq(p4u_no_cntr_wait(NULL, 1, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_eq_read(NULL, NULL, NULL, 0, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_av_insert(NULL, NULL, 0, NULL, 0, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_av_lookup(NULL, 0, NULL, NULL), -FI_ENOSYS);
	cr_assert_eq(p4u_no_wait_wait(NULL, 0), -FI_ENOSYS);
	cr_assert_eq(p4u_no_poll_poll(NULL, NULL, 0), -FI_ENOSYS);
	/* counter reads have no error channel: 0 */
	cr_assert_eq(p4u_no_cntr_read(NULL), 0);
	cr_assert_eq(p4u_no_cntr_readerr(NULL), 0);
	/* strerror-like slots return no string */
	cr_assert_null(p4u_no_cq_strerror(NULL, 0, NULL, buf, sizeof(buf)));
	cr_assert_null(p4u_no_eq_strerror(NULL, 0, NULL, buf, sizeof(buf)));
	cr_assert_null(p4u_no_av_straddr(NULL, NULL, buf, NULL));
}
