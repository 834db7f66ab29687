/*
 * p4u_lock.h - a mutex that can be switched off.
 *
 * Objects used by one thread at a time (FI_THREAD_DOMAIN with manual
 * progress) init their lock inactive: lock/unlock then take no mutex, only
 * note the holder. Every build notes the holder, so p4u_lock_held() works
 * everywhere and debug builds can assert the "*_locked()" contract with
 * p4u_lock_assert_held().
 *
 * The layout and the bookkeeping do not depend on ENABLE_DEBUG: files that
 * include config.h and files that do not (util, tests) share one struct
 * and agree on what acquire/release record. Only the asserts are debug.
 */
#ifndef P4U_LOCK_H
#define P4U_LOCK_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

#include "p4u_compiler.h"

struct p4u_lock {
	pthread_mutex_t mutex;
	bool active;
	bool held;		/* atomic: read by threads that do not hold it */
	pthread_t owner;	/* valid while held; written before held */
};

static inline void p4u_lock_init(struct p4u_lock *lock, bool active)
{
	pthread_mutex_init(&lock->mutex, NULL);
	lock->active = active;
	lock->held = false;
	lock->owner = pthread_self();
}

static inline void p4u_lock_fini(struct p4u_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
}

/*
 * True if the calling thread holds the lock. An inactive lock has one user
 * at a time, so for it this is "acquired and not yet released".
 */
static inline bool p4u_lock_held(const struct p4u_lock *lock)
{
	pthread_t owner;

	/* acquire pairs with the release in p4u_lock_acquire: owner is current */
	if (!__atomic_load_n(&lock->held, __ATOMIC_ACQUIRE))
		return false;
	if (!lock->active)
		return true;
	__atomic_load(&lock->owner, &owner, __ATOMIC_RELAXED);
	return pthread_equal(owner, pthread_self());
}

static inline void p4u_lock_acquire(struct p4u_lock *lock)
{
	pthread_t self = pthread_self();

	if (lock->active)
		pthread_mutex_lock(&lock->mutex);
#if ENABLE_DEBUG
	/* an active lock is never taken twice: that would have deadlocked */
	assert(!lock->held || !lock->active);
#endif
	__atomic_store(&lock->owner, &self, __ATOMIC_RELAXED);
	__atomic_store_n(&lock->held, true, __ATOMIC_RELEASE);
}

static inline void p4u_lock_release(struct p4u_lock *lock)
{
#if ENABLE_DEBUG
	assert(!lock->active || p4u_lock_held(lock));
#endif
	__atomic_store_n(&lock->held, false, __ATOMIC_RELEASE);
	if (lock->active)
		pthread_mutex_unlock(&lock->mutex);
}

static inline void p4u_lock_assert_held(const struct p4u_lock *lock)
{
#if ENABLE_DEBUG
	assert(p4u_lock_held(lock));
#else
	(void)lock;
#endif
}

#endif /* P4U_LOCK_H */
