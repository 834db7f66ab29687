/* p4e_wire.c - being written. */
#include <config.h>
