/*
 * p4f_getinfo_test.h - what the getinfo tests (test_getinfo.c, suite
 * "getinfo" through fi_getinfo) and the filter tests (test_attr.c, suite
 * "attr" on synthetic infos) share: the API versions they ask for and the
 * provider parameters' defaults.
 *
 * The copy of the provider linked into a test binary has its own
 * p4f_params, which FI_EXT_INI never fills: each suite's init sets the
 * documented defaults with gi_init().
 */
#ifndef P4F_GETINFO_TEST_H
#define P4F_GETINFO_TEST_H

#include <stdlib.h>
#include <string.h>

#include "p4f.h"
#include "p4f_test.h"

#define V1_4		FI_VERSION(1, 4)
#define V_NOW		TEST_FI_VERSION

static inline void gi_init(void)
{
	/* the defaults man/fi_portals.7.md documents */
	memset(&p4f_params, 0, sizeof(p4f_params));
	p4f_params.iface = getenv("FI_PORTALS_IFACE");
	p4f_params.tx_size = 4096;
	p4f_params.rx_size = 65536;
	p4f_params.inject_size = 4096;
	p4f_params.oflow_buf_size = 1 << 20;
	p4f_params.oflow_buf_count = 64;
}

#endif /* P4F_GETINFO_TEST_H */
