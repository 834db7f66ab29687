/*
 * p4u_compiler.h - small compiler helpers shared by every layer.
 *
 * Knows nothing of Portals or libfabric.
 */
#ifndef P4U_COMPILER_H
#define P4U_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define p4u_likely(x)	__builtin_expect(!!(x), 1)
#define p4u_unlikely(x)	__builtin_expect(!!(x), 0)

#ifndef container_of
#define container_of(ptr, type, field) \
	((type *)((char *)(ptr) - offsetof(type, field)))
#endif

#define P4U_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define P4U_MIN(a, b)		((a) < (b) ? (a) : (b))
#define P4U_MAX(a, b)		((a) > (b) ? (a) : (b))
#define P4U_ALIGN_UP(x, a)	(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define P4U_UNUSED		__attribute__((unused))
#define P4U_PRINTF(f, a)	__attribute__((format(printf, f, a)))

static inline int p4u_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/*
 * Smallest power of two >= x; 0 when there is none in 64 bits (x > 2^63),
 * so callers sizing tables from untrusted counts can refuse instead of
 * shifting by 64 (undefined) and getting a tiny table.
 */
static inline uint64_t p4u_roundup_pow2(uint64_t x)
{
	if (x <= 1)
		return 1;
	if (x > (1ULL << 63))
		return 0;
	return 1ULL << (64 - __builtin_clzll(x - 1));
}

#endif /* P4U_COMPILER_H */
