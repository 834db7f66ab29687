/*
 * p4u_log.h - logging for the layers below libfabric.
 *
 * The engine and transports log through these macros; the provider installs
 * a sink that forwards to fi_log (so FI_LOG_LEVEL / FI_LOG_PROV apply), and
 * unit tests get the default sink, which writes to stderr at the level named
 * by P4U_LOG_LEVEL (warn, info, debug; default warn).
 */
#ifndef P4U_LOG_H
#define P4U_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "p4u_compiler.h"

/* Same order as libfabric's enum fi_log_level. */
enum p4u_log_level {
	P4U_LOG_WARN,
	P4U_LOG_TRACE,
	P4U_LOG_INFO,
	P4U_LOG_DEBUG,
};

enum p4u_log_subsys {
	P4U_LOG_CORE,
	P4U_LOG_ENGINE,
	P4U_LOG_TRANSPORT,
	P4U_LOG_WIRE,
};

typedef bool (*p4u_log_enabled_func_t)(enum p4u_log_level level,
				       enum p4u_log_subsys subsys);
typedef void (*p4u_log_write_func_t)(enum p4u_log_level level,
				     enum p4u_log_subsys subsys,
				     const char *func, int line,
				     const char *msg);

/* Install (or, with NULLs, remove) a sink. */
void p4u_log_set_sink(p4u_log_enabled_func_t enabled,
		      p4u_log_write_func_t write);

bool p4u_log_enabled(enum p4u_log_level level, enum p4u_log_subsys subsys);
void p4u_log_write(enum p4u_log_level level, enum p4u_log_subsys subsys,
		   const char *func, int line, const char *fmt, ...)
	P4U_PRINTF(5, 6);
/* Rate limit: true at most once per second per *last_ns slot. */
bool p4u_log_ready(uint64_t *last_ns);

#define p4u_log(level, subsys, ...)					\
	do {								\
		if (p4u_log_enabled(level, subsys))			\
			p4u_log_write(level, subsys, __func__, __LINE__,\
				      __VA_ARGS__);			\
	} while (0)

#define p4u_warn(subsys, ...)	p4u_log(P4U_LOG_WARN, subsys, __VA_ARGS__)
#define p4u_info(subsys, ...)	p4u_log(P4U_LOG_INFO, subsys, __VA_ARGS__)

/* For per-packet warnings: at most one line a second per call site. */
#define p4u_warn_sparse(subsys, ...)					\
	do {								\
		static uint64_t p4u_last_ns_;				\
		if (p4u_log_enabled(P4U_LOG_WARN, subsys) &&		\
		    p4u_log_ready(&p4u_last_ns_))			\
			p4u_log_write(P4U_LOG_WARN, subsys, __func__,	\
				      __LINE__, __VA_ARGS__);		\
	} while (0)

#if ENABLE_DEBUG
#define p4u_dbg(subsys, ...)	p4u_log(P4U_LOG_DEBUG, subsys, __VA_ARGS__)
#else
#define p4u_dbg(subsys, ...)	do { } while (0)
#endif

#endif /* P4U_LOG_H */
