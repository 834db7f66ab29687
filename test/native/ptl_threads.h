/*
 * ptl_threads.h - counting this process's threads by name, for the tests
 * that check libportals' progress thread exists exactly while the library
 * is initialized (test/native/ptl_unload.c,
 * test/unit/native/test_native_wait.c). Header only.
 */
#ifndef PTL_THREADS_H
#define PTL_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Threads of this process whose comm is name; -1 without /proc. */
static inline int ptl_threads_named(const char *name)
{
	char path[300], comm[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	FILE *f;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* exited meanwhile */
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			n += !strcmp(comm, name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * The same once joined threads have left /proc: a thread's entry stays a
 * moment after pthread_join returned (the kernel wakes the joiner before
 * the task is reaped), so look again, for up to a second.
 */
static inline int ptl_threads_gone(const char *name)
{
	struct timespec ten_ms = { 0, 10000000 };
	int n, i;

	for (i = 0; (n = ptl_threads_named(name)) > 0 && i < 100; i++)
		nanosleep(&ten_ms, NULL);
	return n;
}

#endif /* PTL_THREADS_H */
