/*
 * p4u_spin.h - a polling thread that finds nothing yields the CPU, but
 * only while the CPU is shared.
 *
 * Open MPI's blocking calls spin on fi_cq_read without ever yielding
 * (mtl_ofi: while (pending) ompi_mtl_ofi_progress()), so with more ranks
 * than cores a waiting rank holds its CPU for a whole time slice while
 * the rank it waits for cannot run, and every message costs a scheduler
 * round. sched_yield on every idle poll would fix that and cost a system
 * call per poll on a core of its own. So a thread asks the kernel, every
 * P4U_SPIN_CHECK idle polls (getrusage: its involuntary context
 * switches), whether it is being preempted; if so, it yields every
 * P4U_SPIN_YIELD idle polls for the next P4U_SPIN_SPELL checks (renewed
 * while preemptions go on). A poll that finds work resets the count.
 * State is per thread.
 */
#ifndef P4U_SPIN_H
#define P4U_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define P4U_SPIN_CHECK	1024	/* idle polls between two looks */
#define P4U_SPIN_YIELD	16	/* idle polls between yields */
#define P4U_SPIN_SPELL	16	/* looks a preemption keeps us yielding */

/* Counters of the calling thread since it started. */
struct p4u_spin_stats {
	uint64_t idle;		/* idle polls */
	uint64_t checks;	/* getrusage calls */
	uint64_t yields;	/* sched_yield calls */
};

/* One poll of a waiting thread: idle if it found nothing. */
void p4u_spin_poll(bool idle);
void p4u_spin_stats(struct p4u_spin_stats *stats);

#endif /* P4U_SPIN_H */
