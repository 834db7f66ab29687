/* p4t_loop.c - being written. */
#include <config.h>
