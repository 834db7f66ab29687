/* p4e_atomic.h - being written. */
