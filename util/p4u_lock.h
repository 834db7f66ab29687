/*
 * p4u_lock.h - a mutex that can be switched off.
 *
 * Objects used by one thread at a time (FI_THREAD_DOMAIN with manual
 * progress) init their lock inactive: lock/unlock are then a predictable
 * branch and nothing else. Debug builds track the owner so
 * p4u_lock_assert_held() can check the "*_locked()" contract.
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
#if ENABLE_DEBUG
	bool held;
	pthread_t owner;
#endif
};

static inline void p4u_lock_init(struct p4u_lock *lock, bool active)
{
	pthread_mutex_init(&lock->mutex, NULL);
	lock->active = active;
#if ENABLE_DEBUG
	lock->held = false;
#endif
}

static inline void p4u_lock_fini(struct p4u_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
}

static inline void p4u_lock_acquire(struct p4u_lock *lock)
{
	if (lock->active)
		pthread_mutex_lock(&lock->mutex);
#if ENABLE_DEBUG
	assert(!lock->held || !lock->active);
	lock->held = true;
	lock->owner = pthread_self();
#endif
}

static inline void p4u_lock_release(struct p4u_lock *lock)
{
#if ENABLE_DEBUG
	lock->held = false;
#endif
	if (lock->active)
		pthread_mutex_unlock(&lock->mutex);
}

static inline void p4u_lock_assert_held(const struct p4u_lock *lock)
{
#if ENABLE_DEBUG
	assert(lock->held);
	assert(!lock->active || pthread_equal(lock->owner, pthread_self()));
#else
	(void)lock;
#endif
}

#endif /* P4U_LOCK_H */
