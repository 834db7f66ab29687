/*
 * p4u_param.h - table-driven FI_<PROV>_* parameters.
 *
 * One table describes every tunable (name, type, help, default, where the
 * value lives, optional bounds). p4u_param_define_all() registers them with
 * fi_param_define (so `fi_info -e` lists them with their defaults) and
 * p4u_param_load_all() stores defaults and then the environment's values,
 * refusing out-of-range values with a warning. This is one of the two util
 * files that speak libfabric (with p4u_stubs); the engine never calls it.
 */
#ifndef P4U_PARAM_H
#define P4U_PARAM_H

#include <stddef.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

enum p4u_param_type {
	P4U_PARAM_SIZE,
	P4U_PARAM_INT,
	P4U_PARAM_BOOL,
	P4U_PARAM_STR,
};

struct p4u_param {
	const char *name;		/* "eager_size" -> FI_<PROV>_EAGER_SIZE */
	enum p4u_param_type type;
	const char *help;
	union {
		size_t size;
		int ival;
		int bval;
		const char *str;
	} def;
	void *value;			/* size_t *, int *, int *, char ** */
	long long min, max;		/* numeric bounds, both 0 = none */
};

int p4u_param_define_all(const struct fi_provider *prov,
			 const struct p4u_param *table, size_t count);
void p4u_param_load_all(struct fi_provider *prov,
			const struct p4u_param *table, size_t count);

#endif /* P4U_PARAM_H */
