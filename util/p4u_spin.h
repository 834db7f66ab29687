/*
 * p4u_spin.h - a polled object that keeps being found empty yields the
 * CPU, but only while the process is being preempted.
 *
 * Open MPI's blocking calls spin on fi_cq_read without ever yielding
 * (mtl_ofi: while (pending) ompi_mtl_ofi_progress()), so with more ranks
 * than cores a waiting rank holds its CPU for a whole time slice while
 * the rank it waits for cannot run, and every message costs a scheduler
 * round. sched_yield on every empty poll would fix that and cost a
 * system call per poll on a core of its own. So every P4U_SPIN_CHECK
 * empty polls in a row the process asks the kernel (getrusage: its
 * involuntary context switches) whether it is being preempted; if so,
 * every P4U_SPIN_YIELD-th empty poll yields, for the next P4U_SPIN_SPELL
 * looks (renewed while preemptions go on). A poll that finds something
 * resets the count.
 *
 * The state lives in the polled object (a CQ), under its lock: no
 * thread-local storage (LeakSanitizer's tracer faults on the dynamic TLS
 * of a dlopen'ed provider), and process-wide counts, since several
 * threads may poll one object.
 */
#ifndef P4U_SPIN_H
#define P4U_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define P4U_SPIN_CHECK	1024	/* empty polls between two looks */
#define P4U_SPIN_YIELD	16	/* empty polls between yields */
#define P4U_SPIN_SPELL	16	/* looks a preemption keeps us yielding */

struct p4u_spin {
	unsigned idle;		/* empty polls in a row */
	unsigned spell;		/* looks left to yield for */
	long nivcsw;		/* involuntary switches at the last look */
	uint64_t checks;	/* getrusage calls */
	uint64_t yields;	/* yields asked for */
};

/* One poll (empty: found nothing), under the object's lock; true: the
 * caller yields (p4u_spin_yield) once it released the lock. */
bool p4u_spin_poll(struct p4u_spin *spin, bool empty);
void p4u_spin_yield(void);

#endif /* P4U_SPIN_H */
