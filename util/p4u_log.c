/*
 * p4u_log.c - the log sink switch and the stderr default sink.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	p4u_log_enabled_fn = enabled;
	p4u_log_write_fn = write;
}

static int p4u_log_stderr_level(void)
{
	static int level = -1;
	const char *env;
	int i;

	if (level >= 0)
		return level;
	level = P4U_LOG_WARN;
	env = getenv("P4U_LOG_LEVEL");
	for (i = 0; env && i < (int)P4U_ARRAY_SIZE(p4u_log_level_names); i++)
		if (!strcasecmp(env, p4u_log_level_names[i]))
			level = i;
	return level;
}

bool p4u_log_enabled(enum p4u_log_level level, enum p4u_log_subsys subsys)
{
	if (p4u_log_enabled_fn)
		return p4u_log_enabled_fn(level, subsys);
	return (int)level <= p4u_log_stderr_level();
}

void p4u_log_write(enum p4u_log_level level, enum p4u_log_subsys subsys,
		   const char *func, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (p4u_log_write_fn) {
		p4u_log_write_fn(level, subsys, func, line, msg);
		return;
	}
	fprintf(stderr, "portals:%s:%s:%s():%d: %s\n",
		p4u_log_level_names[level], p4u_log_subsys_names[subsys],
		func, line, msg);
}

bool p4u_log_ready(uint64_t *last_ns)
{
	uint64_t now = p4u_time_ns();

	if (*last_ns && now - *last_ns < 1000000000ULL)
		return false;
	*last_ns = now;
	return true;
}
