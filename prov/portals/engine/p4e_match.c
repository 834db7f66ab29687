/* p4e_match.c - being written. */
#include <config.h>
