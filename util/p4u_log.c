/*
 * p4u_log.c - the log sink switch and the stderr default sink.
 *
 * Any thread may log at any time, also while the provider installs or
 * removes its sink, so the sink pointers, the cached stderr level and the
 * rate-limit stamps are read and written atomically.
 */
#include <config.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "p4u_log.h"
#include "p4u_time.h"

static p4u_log_enabled_func_t p4u_log_enabled_fn;
static p4u_log_write_func_t p4u_log_write_fn;

static const char *const p4u_log_level_names[] = {
	[P4U_LOG_WARN] = "warn",
	[P4U_LOG_TRACE] = "trace",
	[P4U_LOG_INFO] = "info",
	[P4U_LOG_DEBUG] = "debug",
};

static const char *const p4u_log_subsys_names[] = {
	[P4U_LOG_CORE] = "core",
	[P4U_LOG_ENGINE] = "engine",
	[P4U_LOG_TRANSPORT] = "transport",
	[P4U_LOG_WIRE] = "wire",
};

void p4u_log_set_sink(p4u_log_enabled_func_t enabled, p4u_log_write_func_t write)
{
	__atomic_store_n(&p4u_log_enabled_fn, enabled, __ATOMIC_RELEASE);
	__atomic_store_n(&p4u_log_write_fn, write, __ATOMIC_RELEASE);
}

/*
 * P4U_LOG_LEVEL is read once. The level is worked out in a local and
 * published in one store, so a thread racing the first call never sees a
 * half-computed value.
 */
static int p4u_log_stderr_level(void)
{
	static int cached = -1;
	const char *env;
	int level, i;

	level = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (level >= 0)
		return level;
	level = P4U_LOG_WARN;
	env = getenv("P4U_LOG_LEVEL");
	for (i = 0; env && i < (int)P4U_ARRAY_SIZE(p4u_log_level_names); i++)
		if (!strcasecmp(env, p4u_log_level_names[i]))
			level = i;
	__atomic_store_n(&cached, level, __ATOMIC_RELAXED);
	return level;
}

bool p4u_log_enabled(enum p4u_log_level level, enum p4u_log_subsys subsys)
{
	p4u_log_enabled_func_t enabled =
		__atomic_load_n(&p4u_log_enabled_fn, __ATOMIC_ACQUIRE);

	if (enabled)
		return enabled(level, subsys);
	return (int)level <= p4u_log_stderr_level();
}

static const char *p4u_log_name(const char *const *names, size_t count,
				unsigned int value)
{
	return value < count && names[value] ? names[value] : "?";
}

void p4u_log_write(enum p4u_log_level level, enum p4u_log_subsys subsys,
		   const char *func, int line, const char *fmt, ...)
{
	p4u_log_write_func_t write =
		__atomic_load_n(&p4u_log_write_fn, __ATOMIC_ACQUIRE);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (write) {
		write(level, subsys, func, line, msg);
		return;
	}
	fprintf(stderr, "portals:%s:%s:%s():%d: %s\n",
		p4u_log_name(p4u_log_level_names,
			     P4U_ARRAY_SIZE(p4u_log_level_names), level),
		p4u_log_name(p4u_log_subsys_names,
			     P4U_ARRAY_SIZE(p4u_log_subsys_names), subsys),
		func, line, msg);
}

/*
 * One caller per second wins, also when threads share *last_ns: the stamp
 * is read before the clock (so a stamp we see is never later than our
 * now) and claimed with a compare-and-swap (so two threads that both saw
 * an old stamp cannot both log). 0 means "never logged".
 */
bool p4u_log_ready(uint64_t *last_ns)
{
	uint64_t last = __atomic_load_n(last_ns, __ATOMIC_ACQUIRE);
	uint64_t now = p4u_time_ns();

	if (last && (int64_t)(now - last) < 1000000000LL)
		return false;
	return __atomic_compare_exchange_n(last_ns, &last, now ? now : 1, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
