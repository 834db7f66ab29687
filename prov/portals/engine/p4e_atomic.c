/* p4e_atomic.c - being written. */
#include <config.h>
