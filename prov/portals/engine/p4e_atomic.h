/*
 * p4e_atomic.h - the engine's atomic operations: apply one op x datatype
 * to a range of target memory, elementwise, atomically per element.
 *
 * What lives here: the target-side executor (p4e_atomic_apply) and small
 * queries about ops that the initiator and the wire code need (which
 * buffers an op reads, names for logs). p4e_atomic_valid() and
 * p4e_atomic_type_size() are declared in p4e.h, being part of the
 * engine's interface to the provider. What does not live here: matching,
 * permissions, offsets, lengths against max_atomic_size, events, the
 * Portals rule that CSWAP / MSWAP carry a single item (the initiator's
 * check); this file only computes.
 *
 * Names of the three data buffers follow libfabric (fi_atomic(3)):
 *   operand  - the initiator's data (libfabric "buf"; Portals: the put MD);
 *   compare  - compare values for CSWAP*, masks for MSWAP (libfabric
 *              "compare"; Portals calls this the PtlSwap "operand");
 *   fetch_out - where old target values go (libfabric "result"; Portals:
 *              the get MD).
 * Semantics, for every element i (t = target[i], o = operand[i],
 * c = compare[i]):
 *   MIN     if (o < t) t = o          MAX      if (o > t) t = o
 *   SUM     t = t + o                 PROD     t = t * o
 *   LOR     t = t || o                LAND     t = t && o      (0 or 1)
 *   LXOR    t = !t != !o              BOR/BAND/BXOR  t = t |,&,^ o
 *   SWAP    t = o                     ATOMIC_WRITE   t = o
 *   ATOMIC_READ  nothing: fetch only, never a store (-0.0 stays -0.0)
 *   CSWAP   if (c == t) t = o         CSWAP_NE if (c != t) t = o
 *   CSWAP_LE if (c <= t) t = o        CSWAP_LT if (c <  t) t = o
 *   CSWAP_GE if (c >= t) t = o        CSWAP_GT if (c >  t) t = o
 *   MSWAP   t = (o & c) | (t & ~c)
 * and fetch_out[i] = the old t. The compare value is the LEFT operand of
 * the CSWAP relations, as in fi_atomic(3) ("if (compare[i] < addr[i])")
 * and the Portals header ("if the value of the operand [= compare] is
 * less than the target value"). Integer SUM/PROD wrap modulo 2^bits for
 * signed types too. See p4e_atomic.c for the op x type matrix, NaN rules
 * and how atomicity is obtained.
 */
#ifndef P4E_ATOMIC_H
#define P4E_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>

#include "p4e.h"

/*
 * Apply op to nbytes / p4e_atomic_type_size(type) elements at target.
 * operand: needed by every op but ATOMIC_READ (may be NULL there).
 * compare: needed by CSWAP* and MSWAP, ignored otherwise.
 * fetch_out: NULL, or receives the old value of each element.
 * Any alignment of the four buffers is accepted; fetch_out must not
 * overlap target. Each element is updated atomically (see p4e_atomic.c),
 * the range as a whole is not.
 * Returns 0; -FI_EINVAL for an op or type out of range, nbytes not a
 * multiple of the element size, or a needed buffer that is NULL;
 * -FI_EOPNOTSUPP for an op x type combination that does not exist.
 * Nothing is written on error. nbytes == 0 is a valid no-op.
 */
int p4e_atomic_apply(enum p4e_atomic_op op, enum p4e_atomic_type type,
		     void *target, const void *operand, const void *compare,
		     void *fetch_out, size_t nbytes);

/* Whether op reads the operand (all but ATOMIC_READ) / compare buffer. */
bool p4e_atomic_op_has_operand(enum p4e_atomic_op op);
bool p4e_atomic_op_has_compare(enum p4e_atomic_op op);

/* "SUM", "CSWAP_LT", "INT64", ... for logs; "?" when out of range. */
const char *p4e_atomic_op_name(enum p4e_atomic_op op);
const char *p4e_atomic_type_name(enum p4e_atomic_type type);

#endif /* P4E_ATOMIC_H */
