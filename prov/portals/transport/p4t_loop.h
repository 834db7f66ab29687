/* p4t_loop.h - being written. */
