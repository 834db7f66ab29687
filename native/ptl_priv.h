/*
 * ptl_priv.h - internals of libportals, the Portals 4 API (portals4.h) on
 * the engine (p4e.h).
 *
 * One library-wide state (struct ptl_lib): up to four NIs, one per kind
 * (matching / non-matching x logical / physical), each with its own engine
 * domain and NI, its transport instance, and tables that turn the API's
 * 32-bit handles into engine objects.
 *
 * Locking (docs/design.md §8.7): the library has one engine worker
 * (ptl_lib.worker, made at PtlInit with a progress thread) to which every
 * NI attaches, and its lock is the library lock: every call that touches
 * engine objects, tables, EQ rings, NI fields or the waiter list holds it
 * (ptl_enter / ptl_leave), as do the worker's thread while it progresses
 * and so the engine's sinks and CT notifications. A small mutex,
 * ptl_lib.init_lock, guards what exists before the worker (init_count,
 * the worker pointer) and is only ever taken before the worker lock.
 *
 * Sleeping: nothing sleeps holding the worker lock. A blocking call that
 * found nothing registers a struct ptl_waiter (an eventfd of its own),
 * unlocks and polls that fd and the worker's wait fd; sinks, CT changes,
 * PtlAbort and teardowns write the eventfds of the registered waiters
 * (none registered: no system call). One fd per waiter, because with a
 * shared one a waiter that drains it can make another's poll() miss the
 * wake-up, and one that does not drain it makes the others spin.
 *
 * Handles: type (3 bits, top) | NI kind (2) | generation (7) | index (20).
 * Type 0 and index 0xfffff are never handed out, so 0, PTL_EQ_NONE,
 * PTL_CT_NONE and PTL_INVALID_HANDLE never name an object. An NI handle has
 * index 0 and the NI kind's generation (bumped at every NI teardown), so the
 * same call sequence yields the same NI handles in every process.
 */
#ifndef PTL_PRIV_H
#define PTL_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* the library takes the 4.0 compatibility options too */
#define PTL_COMPAT_40
#include "portals4.h"
#include "p4e.h"

#define PTL_EXPORT __attribute__((visibility("default")))

enum ptl_htype {
	PTL_HT_NONE,
	PTL_HT_EQ,		/* 1: PTL_EQ_NONE = 0x3fffffff is of this type */
	PTL_HT_CT,		/* 2: PTL_CT_NONE = 0x5fffffff */
	PTL_HT_MD,
	PTL_HT_ME,		/* MEs and LEs */
	PTL_HT_NI,
};

#define PTL_H_TYPE_SHIFT	29
#define PTL_H_NI_SHIFT		27
#define PTL_H_GEN_SHIFT		20
#define PTL_H_GEN_MASK		0x7fu
#define PTL_H_IDX_MASK		0xfffffu
#define PTL_H_IDX_MAX		(PTL_H_IDX_MASK - 1)	/* largest usable */

#define PTL_NI_KINDS		4

static inline uint32_t ptl_h_make(unsigned type, unsigned kind, unsigned gen,
				  uint32_t idx)
{
	return (uint32_t)type << PTL_H_TYPE_SHIFT |
	       (uint32_t)kind << PTL_H_NI_SHIFT |
	       (gen & PTL_H_GEN_MASK) << PTL_H_GEN_SHIFT | idx;
}
static inline unsigned ptl_h_type(uint32_t h) { return h >> PTL_H_TYPE_SHIFT; }
static inline unsigned ptl_h_kind(uint32_t h) { return (h >> PTL_H_NI_SHIFT) & 3; }
static inline unsigned ptl_h_gen(uint32_t h)
{
	return (h >> PTL_H_GEN_SHIFT) & PTL_H_GEN_MASK;
}
static inline uint32_t ptl_h_idx(uint32_t h) { return h & PTL_H_IDX_MASK; }

/* A handle table: slots with a generation, a stack of free indexes. */
struct ptl_slot {
	void *obj;		/* EQ object, or NULL */
	uint64_t eh;		/* engine handle (MD, ME, CT) */
	uint8_t gen;
	uint8_t used;
	uint8_t me_nomatch;	/* ME slot: an LE (non-matching NI) */
	unsigned md_options;	/* MD slot: its PTL_MD_* (size limits) */
};

struct ptl_tab {
	unsigned type;
	uint32_t cap;
	uint32_t used;
	uint32_t nfree;		/* freed indexes on the free stack */
	uint32_t fresh;		/* indexes below it were used once */
	uint32_t *free;
	struct ptl_slot *slots;
};

struct ptl_ni;

struct ptl_eq {
	struct p4e_eq base;	/* the engine's sink; first */
	struct ptl_ni *ni;
	uint32_t handle;
	ptl_event_t *ring;
	uint64_t size, head, count;
	bool dropped;		/* events were overwritten since the last get */
	uint32_t refs;		/* PTs and MDs that report to it */
	/*
	 * PtlEQFree'd while MDs still report to it (the header leaves that
	 * to the user, and programs free EQs first): the engine's MDs keep
	 * pointing here, so the struct lives on, without ring or handle,
	 * dropping what comes, on ptl_ni.freed_eqs until its last MD goes.
	 */
	bool freed;
	struct ptl_eq *next_freed;
};

/* Every PT gets one, EQ or not: it sees AUTO_UNLINK, freeing ME handles. */
struct ptl_pt_sink {
	struct p4e_eq base;
	struct ptl_ni *ni;
	struct ptl_eq *eq;
	bool allocated;
};

struct ptl_ni {
	unsigned kind;		/* bit 0: non-matching, bit 1: logical */
	unsigned options;	/* PTL_NI_* */
	uint32_t handle;
	unsigned refs;		/* PtlNIInit calls not yet PtlNIFini'd */
	struct p4e_dom *dom;
	struct p4e_ni *eni;
	ptl_ni_limits_t limits;
	struct ptl_tab eqs, cts, mds, mes;
	struct ptl_eq *freed_eqs;	/* freed, MDs still name them */
	struct ptl_pt_sink *pts;	/* max_pt_index + 1 */
	ptl_process_t *map;		/* logical NI: rank -> physical id */
	ptl_size_t map_size;
	unsigned bundle_depth;
};

/* A blocking call asleep, on ptl_lib.waiters (worker lock). */
struct ptl_waiter {
	struct ptl_waiter *next, **pprev;
	int fd;			/* eventfd, or -1: none could be made */
	bool woken;		/* fd was written since it was registered */
};

#define PTL_WAIT_FDS	16	/* eventfds kept for the next waiters */

struct ptl_lib {
	/* taken before the worker lock, never after */
	pthread_mutex_t init_lock;
	int init_count;			/* init_lock */
	pid_t init_pid;			/* the process that initialized */
	/* set under init_lock; its lock is the library lock */
	struct p4e_worker *worker;
	/* the rest: under the worker lock */
	uint32_t abort_gen;	/* bumped by PtlAbort: calls in progress */
	bool aborted;		/* PtlAbort was called: every later wait
				 * returns PTL_ABORTED (till the last
				 * PtlFini) */
	struct ptl_ni *nis[PTL_NI_KINDS];
	uint8_t ni_gen[PTL_NI_KINDS];
	/* the process's physical id, fixed by its first NI */
	bool have_pid;
	ptl_pid_t pid;
	ptl_nid_t nid;
	/* configuration read at PtlInit */
	const struct p4t_ops *transport;
	const struct p4t_ops *local_transport;	/* NULL: PTL_SHM=0 */
	uint32_t port_base;
	uint64_t peer_timeout_ms;	/* PTL_PEER_TIMEOUT, 0: the default */
	ptl_pid_t pid_hint;	/* PTL_PID: what PTL_PID_ANY tries first */
	/* blocking calls asleep, and the eventfds they return */
	struct ptl_waiter *waiters;
	bool closing;		/* the last PtlFini waits for waiters */
	int wait_fds[PTL_WAIT_FDS];
	unsigned nwait_fds;
};

extern struct ptl_lib ptl_lib;

/* ptl_init.c */
int ptl_errno(int ret);
int ptl_enter(void);		/* lock, or PTL_NO_INIT (unlocked) */
void ptl_leave(void);
/* Progress the library's worker once (lock held); returns the work done. */
int ptl_progress_locked(void);
/*
 * Lock held: sleep, without it, until a waiter wake-up (ptl_wake_locked),
 * work for the worker or deadline_ms; returns with the lock held again.
 */
void ptl_wait_locked(uint64_t deadline_ms);
/* Lock held: wake every waiter (an event, a CT change, an abort...). */
void ptl_wake_locked(void);
/* After a poll round found nothing: true to look again, else *ret_p. */
bool ptl_poll_idle_locked(uint32_t abort_gen, uint64_t deadline,
			  int timeout_ret, int *ret_p);
uint64_t ptl_now_ms(void);
uint64_t ptl_deadline(ptl_time_t timeout);

/* ptl_handle.c */
int ptl_tab_init(struct ptl_tab *tab, unsigned type, uint32_t cap);
void ptl_tab_fini(struct ptl_tab *tab);
int ptl_tab_alloc(struct ptl_tab *tab, unsigned kind, uint32_t *handle_p);
void ptl_tab_free(struct ptl_tab *tab, uint32_t handle);
struct ptl_slot *ptl_tab_get(struct ptl_tab *tab, uint32_t handle);
/* The NI a handle of type names (lock held), or NULL. */
struct ptl_ni *ptl_ni_of(uint32_t handle, unsigned type);
struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t handle);
struct ptl_slot *ptl_obj_lookup(uint32_t handle, unsigned type,
				struct ptl_ni **ni_p);
/* ptl_enter() and a lookup: PTL_OK with the lock held; otherwise unlocked
 * with PTL_NO_INIT, or PTL_ARG_INVALID for a bad handle. */
int ptl_ni_enter(ptl_handle_ni_t handle, struct ptl_ni **ni_p);
int ptl_obj_enter(uint32_t handle, unsigned type, struct ptl_ni **ni_p,
		  struct ptl_slot **slot_p);

/* ptl_ni.c */
void ptl_ni_destroy_locked(struct ptl_ni *ni);
/* addressing */
int ptl_ni_peer(struct ptl_ni *ni, ptl_process_t id, uint32_t *peer_p);
int ptl_ni_match_id(struct ptl_ni *ni, ptl_process_t id,
		    struct p4e_me_desc *desc);
ptl_process_t ptl_ni_initiator(struct ptl_ni *ni, uint32_t peer);

/* ptl_eq.c */
struct ptl_eq *ptl_eq_lookup(struct ptl_ni *ni, ptl_handle_eq_t h, int *ret_p);
void ptl_pt_sink_init(struct ptl_pt_sink *sink, struct ptl_ni *ni);
/* An MD or PT stops reporting to eq: the last of a freed EQ frees it. */
void ptl_eq_unref(struct ptl_ni *ni, struct ptl_eq *eq);
/* NI teardown: the freed EQs that MDs kept. */
void ptl_eq_free_all_freed(struct ptl_ni *ni);

/* ptl_ct.c */
int ptl_ct_lookup(struct ptl_ni *ni, ptl_handle_ct_t h, uint64_t *ct_p);
void ptl_ct_notify(void *ctx, uint64_t ct, const struct p4e_ct_event *val);

/* ptl_me.c */
void ptl_me_unlinked_locked(struct ptl_ni *ni, uint64_t user_flags);
int ptl_me_desc(struct ptl_ni *ni, const ptl_me_t *me, bool is_le,
		struct p4e_me_desc *desc);

#define PTL_ME_UF_NO_UNLINK_EV	(1ULL << 32)	/* user disabled them */

#endif /* PTL_PRIV_H */
