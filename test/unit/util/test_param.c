/*
 * test_param.c - the util files that touch libfabric or the outside world:
 * p4u_param (FI_<PROV>_* parameters), p4u_log (sinks, the stderr default,
 * rate limiting) and p4u_stubs (the -FI_ENOSYS ops tables).
 *
 * Parameters are defined on a test provider named "p4utest", so they are
 * read from FI_P4UTEST_<NAME>. libfabric reads the environment when the
 * value is fetched, so each test sets it before p4u_param_load_all().
 * Criterion runs every test in its own process: environment changes and
 * the log's once-read P4U_LOG_LEVEL do not leak between tests. Parameter
 * structs hold strings by value: the worker process may not map the
 * parent's string literals at the same addresses.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "p4u_log.h"
#include "p4u_param.h"
#include "p4u_stubs.h"
#include "p4u_time.h"

/* ---- p4u_param ---------------------------------------------------------- */

static struct fi_provider test_prov = {
	.name = "p4utest",
};

static const char *const param_env_names[] = {
	"FI_P4UTEST_SIZE", "FI_P4UTEST_RANGED_SIZE", "FI_P4UTEST_INT",
	"FI_P4UTEST_RANGED_INT", "FI_P4UTEST_FLAG", "FI_P4UTEST_NAME",
	"FI_P4UTEST_NAME_DEF",
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

static const struct p4u_param param_table[] = {
	{ "size", P4U_PARAM_SIZE, "a size", { .size = 4096 }, &pv.size, 0, 0 },
	{ "ranged_size", P4U_PARAM_SIZE, "a bounded size", { .size = 64 },
	  &pv.ranged_size, 16, 1 << 20 },
	{ "int", P4U_PARAM_INT, "an int", { .ival = -7 }, &pv.ival, 0, 0 },
	{ "ranged_int", P4U_PARAM_INT, "a bounded int", { .ival = 5 },
	  &pv.ranged_int, -10, 10 },
	{ "flag", P4U_PARAM_BOOL, "a flag", { .bval = 1 }, &pv.flag, 0, 0 },
	{ "name", P4U_PARAM_STR, "a string", { .str = NULL }, &pv.name, 0, 0 },
	{ "name_def", P4U_PARAM_STR, "a string with a default",
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
	cr_assert_eq(p4u_param_define_all(&test_prov, param_table,
					  P4U_ARRAY_SIZE(param_table)), 0);
	p4u_param_load_all(&test_prov, param_table,
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
	setenv("FI_P4UTEST_SIZE", "123456789", 1);
	setenv("FI_P4UTEST_RANGED_SIZE", "0x100", 1);
	setenv("FI_P4UTEST_INT", "-42", 1);
	setenv("FI_P4UTEST_RANGED_INT", "-10", 1);
	setenv("FI_P4UTEST_FLAG", "0", 1);
	setenv("FI_P4UTEST_NAME", "eth7", 1);
	setenv("FI_P4UTEST_NAME_DEF", "ib0", 1);
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
 * The definitions reach libfabric under FI_P4UTEST_*, defaults in the
 * help. fi_getparams() initialises libfabric, which starts a fresh
 * parameter list, so it is called once before defining.
 */
Test(param, define_registers_with_defaults)
{
	struct fi_param *params;
	int count, i, found = 0;

	cr_assert_eq(fi_getparams(&params, &count), 0);
	fi_freeparams(params);
	cr_assert_eq(p4u_param_define_all(&test_prov, param_table,
					  P4U_ARRAY_SIZE(param_table)), 0);
	cr_assert_eq(fi_getparams(&params, &count), 0);
	for (i = 0; i < count; i++) {
		if (!strcmp(params[i].name, "FI_P4UTEST_RANGED_SIZE")) {
			cr_assert_eq(params[i].type, FI_PARAM_SIZE_T);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: 64)"),
					   "help: %s", params[i].help_string);
			found++;
		} else if (!strcmp(params[i].name, "FI_P4UTEST_FLAG")) {
			cr_assert_eq(params[i].type, FI_PARAM_BOOL);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: 1)"));
			found++;
		} else if (!strcmp(params[i].name, "FI_P4UTEST_NAME")) {
			cr_assert_eq(params[i].type, FI_PARAM_STRING);
			cr_assert_not_null(strstr(params[i].help_string,
						  "(default: unset)"));
			found++;
		} else if (!strcmp(params[i].name, "FI_P4UTEST_INT")) {
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
		{ "FI_P4UTEST_RANGED_SIZE", "16", 16 },
		{ "FI_P4UTEST_RANGED_SIZE", "1048576", 1048576 },
		{ "FI_P4UTEST_RANGED_SIZE", "15", 64 },
		{ "FI_P4UTEST_RANGED_SIZE", "1048577", 64 },
		{ "FI_P4UTEST_RANGED_SIZE", "0", 64 },
		{ "FI_P4UTEST_RANGED_SIZE", "-1", 64 },
		{ "FI_P4UTEST_RANGED_SIZE", "-100", 64 },
		{ "FI_P4UTEST_RANGED_SIZE", "99999999999999999999", 64 },
		{ "FI_P4UTEST_RANGED_INT", "10", 10 },
		{ "FI_P4UTEST_RANGED_INT", "-10", -10 },
		{ "FI_P4UTEST_RANGED_INT", "0", 0 },
		{ "FI_P4UTEST_RANGED_INT", "11", 5 },
		{ "FI_P4UTEST_RANGED_INT", "-11", 5 },
		{ "FI_P4UTEST_RANGED_INT", "100000", 5 },
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
	got = !strcmp(c->env, "FI_P4UTEST_RANGED_SIZE") ?
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
	struct p4u_param table[] = {
		{ "flag", P4U_PARAM_BOOL, "a flag", { .bval = c->def }, &pv.flag,
		  0, 0 },
	};

	param_setup();
	setenv("FI_P4UTEST_FLAG", c->value, 1);
	cr_assert_eq(p4u_param_define_all(&test_prov, table, 1), 0);
	p4u_param_load_all(&test_prov, table, 1);
	cr_assert_eq(pv.flag, c->want, "\"%s\" (default %d) gave %d", c->value,
		     c->def, pv.flag);
}

Test(param, empty_string_keeps_default)
{
	setenv("FI_P4UTEST_NAME", "", 1);
	setenv("FI_P4UTEST_NAME_DEF", "", 1);
	param_load();
	cr_assert_null(pv.name);
	cr_assert_str_eq(pv.name_def, "lo");
}

Test(param, load_twice_resets_to_defaults)
{
	setenv("FI_P4UTEST_SIZE", "77", 1);
	param_load();
	cr_assert_eq(pv.size, 77);
	unsetenv("FI_P4UTEST_SIZE");
	p4u_param_load_all(&test_prov, param_table,
			   P4U_ARRAY_SIZE(param_table));
	cr_assert_eq(pv.size, 4096);
}

/* ---- p4u_log ------------------------------------------------------------ */

#define LOG_MAX 64

static struct {
	int calls;
	int enabled_calls;
	enum p4u_log_level level[LOG_MAX];
	enum p4u_log_subsys subsys[LOG_MAX];
	int line[LOG_MAX];
	char func[LOG_MAX][64];
	char msg[LOG_MAX][600];
	enum p4u_log_level threshold;
	bool off;		/* the sink enables nothing */
} sink;

static pthread_mutex_t sink_mutex = PTHREAD_MUTEX_INITIALIZER;

static bool sink_enabled(enum p4u_log_level level, enum p4u_log_subsys subsys)
{
	__atomic_add_fetch(&sink.enabled_calls, 1, __ATOMIC_RELAXED);
	return !sink.off && level <= sink.threshold;
}

static void sink_write(enum p4u_log_level level, enum p4u_log_subsys subsys,
		       const char *func, int line, const char *msg)
{
	int i;

	pthread_mutex_lock(&sink_mutex);
	i = sink.calls++;
	if (i < LOG_MAX) {
		sink.level[i] = level;
		sink.subsys[i] = subsys;
		sink.line[i] = line;
		snprintf(sink.func[i], sizeof(sink.func[i]), "%s", func);
		snprintf(sink.msg[i], sizeof(sink.msg[i]), "%s", msg);
	}
	pthread_mutex_unlock(&sink_mutex);
}

static int saved_stderr = -1;
static FILE *captured;

static void capture_stderr(void)
{
	fflush(stderr);
	captured = tmpfile();
	cr_assert_not_null(captured);
	saved_stderr = dup(STDERR_FILENO);
	cr_assert_geq(saved_stderr, 0);
	cr_assert_geq(dup2(fileno(captured), STDERR_FILENO), 0);
}

/* Stop capturing; returns what was written (static buffer). */
static const char *captured_stderr(void)
{
	static char buf[8192];
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	rewind(captured);
	n = fread(buf, 1, sizeof(buf) - 1, captured);
	buf[n] = '\0';
	fclose(captured);
	captured = NULL;
	return buf;
}

static void log_setup(void)
{
	memset(&sink, 0, sizeof(sink));
	sink.threshold = P4U_LOG_INFO;
	p4u_log_set_sink(NULL, NULL);
}

static void log_teardown(void)
{
	p4u_log_set_sink(NULL, NULL);
	if (captured)
		(void)captured_stderr();
}

TestSuite(log, .init = log_setup, .fini = log_teardown, .timeout = 30);

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

Test(log, sink_receives_formatted_messages)
{
	int line;

	p4u_log_set_sink(sink_enabled, sink_write);
	p4u_warn(P4U_LOG_ENGINE, "match bits %#llx", 0xabcULL); line = __LINE__;
	p4u_info(P4U_LOG_WIRE, "%d-%s", 42, "x");
	p4u_log(P4U_LOG_DEBUG, P4U_LOG_CORE, "filtered by the sink");
	cr_assert_eq(sink.calls, 2);
	cr_assert_eq(sink.enabled_calls, 3, "the sink decides what is enabled");
	cr_assert_eq(sink.level[0], P4U_LOG_WARN);
	cr_assert_eq(sink.subsys[0], P4U_LOG_ENGINE);
	cr_assert_str_eq(sink.msg[0], "match bits 0xabc");
	cr_assert_str_eq(sink.func[0], __func__);
	cr_assert_eq(sink.line[0], line);
	cr_assert_eq(sink.level[1], P4U_LOG_INFO);
	cr_assert_eq(sink.subsys[1], P4U_LOG_WIRE);
	cr_assert_str_eq(sink.msg[1], "42-x");
}

Test(log, sink_switching)
{
	const char *out;

	unsetenv("P4U_LOG_LEVEL");
	capture_stderr();
	p4u_warn(P4U_LOG_CORE, "to stderr 1");
	p4u_log_set_sink(sink_enabled, sink_write);
	p4u_warn(P4U_LOG_CORE, "to sink");
	p4u_log_set_sink(NULL, NULL);
	p4u_warn(P4U_LOG_TRANSPORT, "to stderr 2");
	out = captured_stderr();

	cr_assert_eq(sink.calls, 1);
	cr_assert_str_eq(sink.msg[0], "to sink");
	cr_assert_eq(count_lines(out), 2, "stderr got: %s", out);
	cr_assert_not_null(strstr(out, "to stderr 1"));
	cr_assert_not_null(strstr(out, "portals:warn:transport:"), "%s", out);
	cr_assert_not_null(strstr(out, "to stderr 2"));
	cr_assert_null(strstr(out, "to sink"));
}

Test(log, long_message_truncated)
{
	char big[2000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	p4u_log_set_sink(sink_enabled, sink_write);
	p4u_warn(P4U_LOG_CORE, "%s", big);
	cr_assert_eq(sink.calls, 1);
	cr_assert_eq(strlen(sink.msg[0]), 511);
}

struct level_case {
	bool unset;		/* P4U_LOG_LEVEL not set at all */
	char env[16];
	bool want[4];		/* enabled for warn, trace, info, debug */
};

ParameterizedTestParameters(log, stderr_level_from_env)
{
	static struct level_case cases[] = {
		{ true, "", { true, false, false, false } },
		{ false, "warn", { true, false, false, false } },
		{ false, "trace", { true, true, false, false } },
		{ false, "info", { true, true, true, false } },
		{ false, "debug", { true, true, true, true } },
		{ false, "DEBUG", { true, true, true, true } },
		{ false, "Info", { true, true, true, false } },
		{ false, "bogus", { true, false, false, false } },
		{ false, "", { true, false, false, false } },
	};

	return cr_make_param_array(struct level_case, cases,
				   P4U_ARRAY_SIZE(cases));
}

ParameterizedTest(struct level_case *c, log, stderr_level_from_env)
{
	static const enum p4u_log_level levels[] = {
		P4U_LOG_WARN, P4U_LOG_TRACE, P4U_LOG_INFO, P4U_LOG_DEBUG,
	};
	const char *out;
	int i, want_lines = 0;

	if (c->unset)
		unsetenv("P4U_LOG_LEVEL");
	else
		setenv("P4U_LOG_LEVEL", c->env, 1);
	for (i = 0; i < 4; i++)
		cr_assert_eq(p4u_log_enabled(levels[i], P4U_LOG_ENGINE),
			     c->want[i], "P4U_LOG_LEVEL=%s level %d",
			     c->unset ? "(unset)" : c->env, i);

	capture_stderr();
	for (i = 0; i < 4; i++) {
		p4u_log(levels[i], P4U_LOG_ENGINE, "level %d", i);
		want_lines += c->want[i];
	}
	out = captured_stderr();
	cr_assert_eq(count_lines(out), want_lines, "got: %s", out);
	if (c->want[3])
		cr_assert_not_null(strstr(out, "portals:debug:engine:"));
}

static void warn_sparse_site(void)
{
	p4u_warn_sparse(P4U_LOG_WIRE, "bad packet");
}

Test(log, warn_sparse_one_line_per_call_site)
{
	uint64_t start = p4u_time_ns();
	int i;

	p4u_log_set_sink(sink_enabled, sink_write);
	for (i = 0; i < 1000; i++)
		warn_sparse_site();
	for (i = 0; i < 1000; i++)
		p4u_warn_sparse(P4U_LOG_WIRE, "another site %d", i);
	/* both loops take far less than the one-second window */
	cr_assert_lt(p4u_time_ns() - start, 900000000ULL);
	cr_assert_eq(sink.calls, 2, "%d lines for 2 call sites", sink.calls);
	cr_assert_str_eq(sink.msg[0], "bad packet");
	cr_assert_str_eq(sink.msg[1], "another site 0");
}

Test(log, warn_sparse_respects_enabled)
{
	int i;

	p4u_log_set_sink(sink_enabled, sink_write);
	sink.off = true;
	for (i = 0; i < 10; i++)
		warn_sparse_site();
	cr_assert_eq(sink.calls, 0);
	/* a disabled call did not use up the site's second */
	sink.off = false;
	warn_sparse_site();
	cr_assert_eq(sink.calls, 1);
}

Test(log, ready_window)
{
	uint64_t last = 0;

	cr_assert(p4u_log_ready(&last), "first call must log");
	cr_assert_neq(last, 0);
	cr_assert_not(p4u_log_ready(&last));
	last = p4u_time_ns() - 2000000000ULL;
	cr_assert(p4u_log_ready(&last), "a stamp 2 s old must allow a line");
	cr_assert_not(p4u_log_ready(&last));
}

/*
 * Fixed bug: a stamp slightly later than this thread's clock reading
 * (another thread logged after we read the clock) made now - last wrap to
 * a huge value, so both threads logged. A stamp in the future is "just
 * logged".
 */
Test(log, ready_stamp_in_the_future_is_recent)
{
	uint64_t last = p4u_time_ns() + 500000000ULL;

	cr_assert_not(p4u_log_ready(&last));
}

#define SPARSE_THREADS 8
#define SPARSE_CALLS 20000

static pthread_barrier_t sparse_barrier;

static void *sparse_thread(void *arg)
{
	int i;

	(void)arg;
	pthread_barrier_wait(&sparse_barrier);
	for (i = 0; i < SPARSE_CALLS; i++)
		warn_sparse_site();
	return NULL;
}

/* Many threads on one call site within a second: one line in all. */
Test(log, warn_sparse_threads_share_the_limit)
{
	pthread_t thr[SPARSE_THREADS];
	int i;

	p4u_log_set_sink(sink_enabled, sink_write);
	cr_assert_eq(pthread_barrier_init(&sparse_barrier, NULL,
					  SPARSE_THREADS), 0);
	for (i = 0; i < SPARSE_THREADS; i++)
		cr_assert_eq(pthread_create(&thr[i], NULL, sparse_thread, NULL),
			     0);
	for (i = 0; i < SPARSE_THREADS; i++)
		pthread_join(thr[i], NULL);
	pthread_barrier_destroy(&sparse_barrier);
	cr_assert_eq(sink.calls, 1, "%d lines from one site within a second",
		     sink.calls);
}

#define READY_ROUNDS 20000

static uint64_t ready_stamp;
static int ready_go, ready_done, ready_wins;

static void ready_race_call(void)
{
	if (p4u_log_ready(&ready_stamp))
		__atomic_add_fetch(&ready_wins, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ready_done, 1, __ATOMIC_RELEASE);
}

static void *ready_race_helper(void *arg)
{
	int round;

	(void)arg;
	for (round = 1; round <= READY_ROUNDS; round++) {
		while (__atomic_load_n(&ready_go, __ATOMIC_ACQUIRE) < round)
			;
		ready_race_call();
	}
	return NULL;
}

/*
 * Fixed bug: the stamp was read and written without atomics, so two
 * threads that both saw an old stamp both logged. Each round clears the
 * stamp, releases a helper thread and calls p4u_log_ready() itself after
 * a delay that sweeps across rounds, so some rounds line the two calls up;
 * exactly one of the two may win every round. Without the fix a few
 * percent of rounds had two winners.
 */
Test(log, ready_one_winner_per_window)
{
	pthread_t thr;
	int round, bad = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs two CPUs to race");
	cr_assert_eq(pthread_create(&thr, NULL, ready_race_helper, NULL), 0);
	for (round = 1; round <= READY_ROUNDS; round++) {
		__atomic_store_n(&ready_stamp, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ready_go, round, __ATOMIC_RELEASE);
		for (volatile int spin = 0; spin < (round % 32) * 4; spin++)
			;
		ready_race_call();
		while (__atomic_load_n(&ready_done, __ATOMIC_ACQUIRE) < 2 * round)
			;
		if (__atomic_load_n(&ready_wins, __ATOMIC_RELAXED) != round + bad)
			bad = __atomic_load_n(&ready_wins, __ATOMIC_RELAXED) - round;
	}
	pthread_join(thr, NULL);
	cr_assert_eq(bad, 0, "%d rounds of %d had two winners", bad,
		     READY_ROUNDS);
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
