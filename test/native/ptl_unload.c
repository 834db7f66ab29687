/*
 * ptl_unload.c - libportals unloaded while initialized: a plug-in that
 * called PtlInit (and PtlNIInit) without ever calling PtlFini is dlclosed,
 * as Open MPI 4.1's osc portals4 component is at MPI_Finalize. The
 * progress thread must be gone when dlclose returns: left running, it
 * wakes into unmapped code and the process dies of SIGSEGV after its
 * work is done. Also: a child of fork that exits with exit() (so runs the
 * library's destructors) ends at once and leaves the parent's library
 * working.
 *
 *   ptl_unload LIBPORTALS_SO
 *
 * Not linked with libportals: it is reached only through dlopen, so
 * dlclose really unloads it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>

#include "ptl_threads.h"

static int fails;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "ptl_unload: FAIL: " __VA_ARGS__); \
			fputc('\n', stderr);				\
			fails++;					\
		}							\
	} while (0)

struct lib {
	void *h;
	int (*init)(void);
	void (*fini)(void);
	int (*ni_init)(ptl_interface_t, unsigned int, ptl_pid_t,
		       const ptl_ni_limits_t *, ptl_ni_limits_t *,
		       ptl_handle_ni_t *);
	int (*get_id)(ptl_handle_ni_t, ptl_process_t *);
};

static int lib_open(const char *path, struct lib *l)
{
	l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->h) {
		fprintf(stderr, "ptl_unload: dlopen %s: %s\n", path,
			dlerror());
		return -1;
	}
	*(void **)&l->init = dlsym(l->h, "PtlInit");
	*(void **)&l->fini = dlsym(l->h, "PtlFini");
	*(void **)&l->ni_init = dlsym(l->h, "PtlNIInit");
	*(void **)&l->get_id = dlsym(l->h, "PtlGetId");
	if (!l->init || !l->fini || !l->ni_init || !l->get_id) {
		fprintf(stderr, "ptl_unload: a Ptl symbol is missing\n");
		return -1;
	}
	return 0;
}

/* PtlInit n times, PtlFini m < n times, one NI; returns its NI. */
static ptl_handle_ni_t lib_start(struct lib *l, int n, int m)
{
	ptl_handle_ni_t ni;
	int i, ret;

	for (i = 0; i < n; i++)
		CHECK(l->init() == PTL_OK, "PtlInit");
	ret = l->ni_init(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			 PTL_PID_ANY, NULL, NULL, &ni);
	CHECK(ret == PTL_OK, "PtlNIInit returned %d", ret);
	for (i = 0; i < m; i++)
		l->fini();
	return ni;
}

int main(int argc, char **argv)
{
	struct lib l;
	ptl_handle_ni_t ni;
	ptl_process_t id;
	int round, status;
	pid_t child;

	if (argc != 2) {
		fprintf(stderr, "usage: ptl_unload LIBPORTALS_SO\n");
		return 2;
	}
	alarm(60);	/* a join that never ends must not hang make check */
	CHECK(ptl_threads_named("ptl_progress") == 0, "a progress thread before");
	/* round 0: PtlInit never matched; round 1: two PtlInit, one PtlFini */
	for (round = 0; round < 2; round++) {
		if (lib_open(argv[1], &l))
			return 1;
		(void)lib_start(&l, round + 1, round);
		CHECK(ptl_threads_named("ptl_progress") == 1,
		      "round %d: no progress thread while initialized", round);
		CHECK(dlclose(l.h) == 0, "dlclose: %s", dlerror());
		CHECK(ptl_threads_gone("ptl_progress") == 0,
		      "round %d: the progress thread outlived dlclose", round);
	}
	/* a child that exits with exit() leaves the parent's library be */
	if (lib_open(argv[1], &l))
		return 1;
	ni = lib_start(&l, 1, 0);
	fflush(NULL);
	child = fork();
	if (child == 0)
		exit(0);	/* runs the destructors, in a copy of us */
	CHECK(child > 0, "fork");
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the child did not exit cleanly");
	CHECK(ptl_threads_named("ptl_progress") == 1,
	      "the parent lost its progress thread");
	CHECK(l.get_id(ni, &id) == PTL_OK, "PtlGetId after the child's exit");
	l.fini();
	CHECK(ptl_threads_gone("ptl_progress") == 0,
	      "PtlFini left the progress thread");
	CHECK(dlclose(l.h) == 0, "dlclose: %s", dlerror());
	/* a stray thread would crash meanwhile */
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	if (fails)
		return 1;
	printf("ptl_unload: PASS\n");
	return 0;
}
