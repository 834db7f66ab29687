/*
 * mpi_common.h - what every fabtests-ext MPI program shares: start-up with
 * a watchdog alarm, checks that abort the whole job with the rank, the
 * source line and a readable message, a pass count printed at the end, and
 * byte patterns that tell one message from another.
 *
 * Header only (static inline, so a program need not use every helper):
 * each program is one .c file plus this header, compiled with plain mpicc
 * outside the autotools C toolchain. What a program tests lives in that
 * program, not here.
 *
 * Conventions the programs follow:
 * - exit status 0 only if every check passed; the first failed check calls
 *   MPI_Abort, so mpirun returns non-zero;
 * - no check depends on timing except where a program says so and why;
 * - sleeps are never used to order events between ranks: handshake
 *   messages are ("go" from the receiver once its receives are posted,
 *   "done" from the sender once its messages are sent; per-pair ordering
 *   then says the earlier messages have arrived).
 */
#ifndef MPI_COMMON_H
#define MPI_COMMON_H

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int mt_rank = -1;
static int mt_nranks;
static const char *mt_name = "mpi test";
static unsigned long mt_checks;		/* checks passed on this rank */
static char mt_alarm_msg[160];
static size_t mt_alarm_len;
static char mt_stage_msg[160] = "(start-up)\n";
static volatile size_t mt_stage_len = 11;

/* A hung rank must not hang CI: the watchdog prints which program and rank
 * gave up and leaves at once; mpirun then tears the job down. Only
 * async-signal-safe calls here. */
static inline void mt_alarm_handler(int sig)
{
	ssize_t ret;

	(void)sig;
	ret = write(STDERR_FILENO, mt_alarm_msg, mt_alarm_len);
	ret = write(STDERR_FILENO, mt_stage_msg, mt_stage_len);
	(void)ret;
	_exit(3);
}

static inline void mt_fail_at(const char *file, int line,
			      const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

static inline void mt_fail_at(const char *file, int line,
			      const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: rank %d: FAIL (%s:%d): ", mt_name, mt_rank,
		file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);		/* MPI_Abort does not return; be sure */
}

#define MT_FAIL(...) mt_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* Every passed check is counted so the final line shows the program did
 * check something (a program that silently skipped its work would print
 * a suspiciously small number). */
#define MT_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			MT_FAIL(__VA_ARGS__);				\
		mt_checks++;						\
	} while (0)

static inline void mt_fail_call(const char *file, int line,
				const char *call, int rc)
	__attribute__((noreturn));

static inline void mt_fail_call(const char *file, int line,
				const char *call, int rc)
{
	char str[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, str, &len) != MPI_SUCCESS)
		snprintf(str, sizeof(str), "error %d", rc);
	mt_fail_at(file, line, "%s returned %d (%s)", call, rc, str);
}

/* For calls made under MPI_ERRORS_RETURN; under the default
 * MPI_ERRORS_ARE_FATAL a failing call aborts by itself. */
#define MT_CALL(call)							\
	do {								\
		int mt_rc_ = (call);					\
		if (mt_rc_ != MPI_SUCCESS)				\
			mt_fail_call(__FILE__, __LINE__, #call, mt_rc_); \
	} while (0)

static inline void mt_init(int *argc, char ***argv, const char *name,
		    unsigned int timeout_s)
{
	const char *env = getenv("MPI_TEST_TIMEOUT");

	mt_name = name;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_nranks);
	if (env && atoi(env) > 0)
		timeout_s = (unsigned int)atoi(env);
	snprintf(mt_alarm_msg, sizeof(mt_alarm_msg),
		 "%s: rank %d: FAIL: watchdog: no result after %u s, "
		 "stuck in: ",
		 name, mt_rank, timeout_s);
	mt_alarm_len = strlen(mt_alarm_msg);
	signal(SIGALRM, mt_alarm_handler);
	alarm(timeout_s);
}

/* What the rank is doing now, for the watchdog's message: a hang is
 * reported with the step that never finished. */
static inline void mt_stage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void mt_stage(const char *fmt, ...)
{
	va_list ap;
	int len;

	mt_stage_len = 0;	/* the handler prints nothing half-written */
	va_start(ap, fmt);
	len = vsnprintf(mt_stage_msg, sizeof(mt_stage_msg) - 1, fmt, ap);
	va_end(ap);
	if (len < 0)
		len = 0;
	if (len > (int)sizeof(mt_stage_msg) - 2)
		len = (int)sizeof(mt_stage_msg) - 2;
	mt_stage_msg[len] = '\n';
	mt_stage_len = (size_t)len + 1;
}

static inline void mt_need_ranks(int min)
{
	if (mt_nranks < min)
		MT_FAIL("needs at least %d ranks, got %d", min, mt_nranks);
}

/* Reached only when every check on every rank passed: rank 0 prints the
 * summed count. */
static inline int mt_finish(void)
{
	unsigned long total = 0;

	mt_stage("final MPI_Reduce of the check counts / MPI_Finalize");
	MPI_Reduce(&mt_checks, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (mt_rank == 0)
		printf("%s: PASS (%lu checks on %d ranks)\n", mt_name, total,
		       mt_nranks);
	fflush(stdout);
	alarm(0);
	MPI_Finalize();
	return 0;
}

/* Wall clock shared by every process on the host (CLOCK_MONOTONIC is
 * system-wide), unlike MPI_Wtime, which may read a per-core counter. */
static inline double mt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Spin without calling MPI: used where a rank must visibly *not* act for a
 * while (the checks never rely on the length, only on what the other rank
 * may or may not have seen). */
static inline void mt_spin(double seconds)
{
	double end = mt_now() + seconds;

	while (mt_now() < end)
		;
}

/* ---- byte patterns ------------------------------------------------------ */

/* Byte i of the message with this seed. Neighbouring bytes differ, and two
 * seeds give patterns that are far-apart shifts of each other, so a message
 * placed in the wrong buffer, at the wrong offset or truncated is caught. */
static inline unsigned char mt_byte(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i + seed * 2654435761u;

	x ^= x >> 7;
	x *= 0x9e3779b1u;
	return (unsigned char)(x >> 24);
}

static inline void mt_fill(void *buf, size_t len, uint32_t seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = mt_byte(seed, i);
}

/* Differs from the pattern at every byte, so a receive that writes nothing
 * cannot pass the data check, whatever the message length. */
static inline void mt_poison(void *buf, size_t len, uint32_t seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)~mt_byte(seed, i);
}

/* Offset of the first byte that is not the pattern, or -1. */
static inline long mt_verify(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != mt_byte(seed, i))
			return (long)i;
	return -1;
}

/* Offset of the first byte that is no longer poison, or -1. */
static inline long mt_verify_poison(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)~mt_byte(seed, i))
			return (long)i;
	return -1;
}

#define MT_CHECK_DATA(buf, len, seed, ...)				\
	do {								\
		long mt_off_ = mt_verify((buf), (len), (seed));		\
		if (mt_off_ >= 0) {					\
			fprintf(stderr, "%s: rank %d: byte %ld of %zu is " \
				"0x%02x, expected 0x%02x (seed %u)\n",	\
				mt_name, mt_rank, mt_off_, (size_t)(len), \
				((const unsigned char *)(buf))[mt_off_], \
				mt_byte((seed), (size_t)mt_off_),	\
				(unsigned)(seed));			\
			MT_FAIL(__VA_ARGS__);				\
		}							\
		mt_checks++;						\
	} while (0)

static inline void *mt_malloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		MT_FAIL("out of memory (%zu bytes)", len);
	return p;
}

static inline int mt_count(const MPI_Status *st, MPI_Datatype type)
{
	int count = -1;

	MPI_Get_count(st, type, &count);
	return count;
}

/* ---- one-sided windows -------------------------------------------------- */

/* The two window flavours the one-sided programs (mpi_osc_*) run with:
 * memory MPI allocates (MPI_Win_allocate; an implementation may place it
 * in shared memory or register it) and the program's own memory handed to
 * MPI_Win_create. They take different paths in Open MPI's one-sided
 * components, so each program runs with both unless -w names one. */
#define MT_WIN_ALLOCATE	1u
#define MT_WIN_CREATE	2u

static inline const char *mt_flavor_name(unsigned int flavor)
{
	return flavor == MT_WIN_ALLOCATE ? "MPI_Win_allocate" :
					   "MPI_Win_create";
}

/* The argument of -w: allocate, create or both; a mask of MT_WIN_*. */
static inline unsigned int mt_flavors_parse(const char *arg)
{
	if (!strcmp(arg, "allocate"))
		return MT_WIN_ALLOCATE;
	if (!strcmp(arg, "create"))
		return MT_WIN_CREATE;
	if (!strcmp(arg, "both"))
		return MT_WIN_ALLOCATE | MT_WIN_CREATE;
	MT_FAIL("-w takes allocate, create or both, not '%s'", arg);
}

/* A window of `size` bytes on MPI_COMM_WORLD; returns its base. */
static inline void *mt_win_open(unsigned int flavor, size_t size,
				int disp_unit, MPI_Win *win)
{
	void *base = NULL;

	mt_stage("%s of %zu bytes", mt_flavor_name(flavor), size);
	if (flavor == MT_WIN_ALLOCATE) {
		MT_CALL(MPI_Win_allocate((MPI_Aint)size, disp_unit,
					 MPI_INFO_NULL, MPI_COMM_WORLD, &base,
					 win));
	} else {
		base = mt_malloc(size);
		MT_CALL(MPI_Win_create(base, (MPI_Aint)size, disp_unit,
				       MPI_INFO_NULL, MPI_COMM_WORLD, win));
	}
	MT_CHECK(base != NULL || size == 0, "%s gave no memory",
		 mt_flavor_name(flavor));
	return base;
}

static inline void mt_win_close(unsigned int flavor, void *base,
				MPI_Win *win)
{
	mt_stage("MPI_Win_free (%s)", mt_flavor_name(flavor));
	MT_CALL(MPI_Win_free(win));
	if (flavor == MT_WIN_CREATE)
		free(base);
}

#endif /* MPI_COMMON_H */
