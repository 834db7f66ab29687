/*
 * p4f_param.h - table-driven FI_<PROV>_* parameters.
 *
 * One table describes every tunable (name, type, help, default, where the
 * value lives, optional bounds). p4f_param_define_all() registers them with
 * fi_param_define (so `fi_info -e` lists them with their defaults) and
 * p4f_param_load_all() stores defaults and then the environment's values,
 * refusing out-of-range values with a warning. The table itself is
 * p4f_param_table (p4f_init.c); only the libfabric layer uses this.
 */
#ifndef P4F_PARAM_H
#define P4F_PARAM_H

#include <stddef.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

enum p4f_param_type {
	P4F_PARAM_SIZE,
	P4F_PARAM_INT,
	P4F_PARAM_BOOL,
	P4F_PARAM_STR,
};

struct p4f_param {
	const char *name;		/* "eager_size" -> FI_<PROV>_EAGER_SIZE */
	enum p4f_param_type type;
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

int p4f_param_define_all(const struct fi_provider *prov,
			 const struct p4f_param *table, size_t count);
void p4f_param_load_all(struct fi_provider *prov,
			const struct p4f_param *table, size_t count);

#endif /* P4F_PARAM_H */
