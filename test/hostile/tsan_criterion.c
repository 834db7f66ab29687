/*
 * tsan_criterion.c - lets Criterion's runner start under ThreadSanitizer.
 * test/hostile/tsan.sh builds it (without -fsanitize) and LD_PRELOADs it
 * into the unit-test suites it runs under TSan; nothing else uses it.
 *
 * Criterion 2.4's sandbox (BoxFort) maps its "inheritable arena" with
 * MAP_FIXED at a random address in [0x2000_0000_0000, 0x7f00_0000_0000)
 * and gives up at the first failed mmap. Under TSan most of that range is
 * shadow or metadata, where TSan refuses an application mapping (EINVAL),
 * so nearly every suite aborts at once: "criterion: Could not initialize
 * inheritable arena" (Criterion issue #274). BoxFort draws the address
 * from rand_r(): this rand_r answers the calls that come from
 * libcriterion with offsets that put the arena in TSan's application
 * range for PIE binaries, below where the kernel loads them
 * ([0x5520_0000_0000, 0x5530_0000_0000), 256 MiB apart; BoxFort itself
 * skips a slot that is taken), and hands every other caller to libc's.
 * It changes nothing but where the arena goes; the tests and the code
 * they test run as they do anywhere else.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#define BXF_MMAP_BASE	0x200000000000ULL	/* BoxFort, 64-bit */
#define BXF_MMAP_SHIFT	24			/* base + r << 24 */
#define ARENA_LOW	0x552000000000ULL
#define ARENA_SLOTS	256
#define ARENA_STRIDE	16			/* 256 MiB */

int rand_r(unsigned int *seed)
{
	static int (*real)(unsigned int *);
	static unsigned int next;
	Dl_info info;

	if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libcriterion")) {
		unsigned int k = __atomic_fetch_add(&next, 1,
						    __ATOMIC_RELAXED);

		return (int)((ARENA_LOW - BXF_MMAP_BASE) >> BXF_MMAP_SHIFT) +
		       (int)(k % ARENA_SLOTS) * ARENA_STRIDE;
	}
	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real, (int (*)(unsigned int *))
				 dlsym(RTLD_NEXT, "rand_r"), __ATOMIC_RELEASE);
	return real(seed);
}
