/*
 * test_log.c - p4u_log: sinks, the stderr default, rate limiting.
 *
 * Criterion runs every test in its own process: environment changes and
 * the log's once-read P4U_LOG_LEVEL do not leak between tests.
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
#include "p4u_time.h"

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
