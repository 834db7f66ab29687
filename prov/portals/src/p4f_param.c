/*
 * p4f_param.c - define and read the provider's parameters from one table.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "p4f_param.h"

static enum fi_param_type p4f_param_fi_type(enum p4f_param_type type)
{
	switch (type) {
	case P4F_PARAM_SIZE:
		return FI_PARAM_SIZE_T;
	case P4F_PARAM_INT:
		return FI_PARAM_INT;
	case P4F_PARAM_BOOL:
		return FI_PARAM_BOOL;
	case P4F_PARAM_STR:
	default:
		return FI_PARAM_STRING;
	}
}

int p4f_param_define_all(const struct fi_provider *prov,
			 const struct p4f_param *table, size_t count)
{
	char def[64];
	size_t i;
	int ret;

	for (i = 0; i < count; i++) {
		const struct p4f_param *p = &table[i];

		switch (p->type) {
		case P4F_PARAM_SIZE:
			snprintf(def, sizeof(def), "%zu", p->def.size);
			break;
		case P4F_PARAM_INT:
			snprintf(def, sizeof(def), "%d", p->def.ival);
			break;
		case P4F_PARAM_BOOL:
			snprintf(def, sizeof(def), "%s", p->def.bval ? "1" : "0");
			break;
		case P4F_PARAM_STR:
			snprintf(def, sizeof(def), "%s",
				 p->def.str && *p->def.str ? p->def.str : "unset");
			break;
		}
		ret = fi_param_define(prov, p->name, p4f_param_fi_type(p->type),
				      "%s (default: %s)", p->help, def);
		if (ret)
			return ret;
	}
	return 0;
}

static int p4f_param_in_range(const struct p4f_param *p, long long v)
{
	if (!p->min && !p->max)
		return 1;
	return v >= p->min && v <= p->max;
}

void p4f_param_load_all(struct fi_provider *prov,
			const struct p4f_param *table, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		const struct p4f_param *p = &table[i];
		size_t sval;
		int ival, ret;
		char *str;

		switch (p->type) {
		case P4F_PARAM_SIZE:
			*(size_t *)p->value = p->def.size;
			if (!fi_param_get_size_t(prov, p->name, &sval)) {
				if (p4f_param_in_range(p, (long long)sval))
					*(size_t *)p->value = sval;
				else
					FI_WARN(prov, FI_LOG_CORE,
						"%s=%zu out of range [%lld, %lld]; using %zu\n",
						p->name, sval, p->min, p->max,
						p->def.size);
			}
			break;
		case P4F_PARAM_INT:
			*(int *)p->value = p->def.ival;
			if (!fi_param_get_int(prov, p->name, &ival)) {
				if (p4f_param_in_range(p, ival))
					*(int *)p->value = ival;
				else
					FI_WARN(prov, FI_LOG_CORE,
						"%s=%d out of range [%lld, %lld]; using %d\n",
						p->name, ival, p->min, p->max,
						p->def.ival);
			}
			break;
		case P4F_PARAM_BOOL:
			*(int *)p->value = p->def.bval;
			ret = fi_param_get_bool(prov, p->name, &ival);
			if (!ret)
				*(int *)p->value = !!ival;
			else if (ret == -FI_EINVAL)
				FI_WARN(prov, FI_LOG_CORE,
					"%s is not a boolean (0/1, yes/no, "
					"on/off, true/false); using %d\n",
					p->name, p->def.bval);
			break;
		case P4F_PARAM_STR:
			*(const char **)p->value = p->def.str;
			if (!fi_param_get_str(prov, p->name, &str) && str && *str)
				*(char **)p->value = str;
			break;
		}
	}
}
