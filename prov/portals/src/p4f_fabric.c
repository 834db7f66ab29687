/*
 * p4f_fabric.c - the fabric object: opens domains, EQs and wait sets.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

static int p4f_fabric_close(struct fid *fid)
{
	struct p4f_fabric *fabric =
		container_of(fid, struct p4f_fabric, fabric_fid.fid);

	if (atomic_load(&fabric->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_FABRIC,
			"fabric still has %d open objects\n",
			atomic_load(&fabric->ref));
		return -FI_EBUSY;
	}
	p4u_lock_fini(&fabric->lock);
	free(fabric->name);
	free(fabric);
	return 0;
}

static struct fi_ops p4f_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_fabric_close,
	.bind = p4f_no_bind,
	.control = p4f_no_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static int p4f_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			      struct fid_domain **domain_p, uint64_t flags,
			      void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return p4f_domain_open(fabric, info, domain_p, context);
}

static struct fi_ops_fabric p4f_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = p4f_domain_open,
	.passive_ep = p4f_no_fabric_passive_ep,
	.eq_open = p4f_eq_open,
	.wait_open = p4f_wait_open,
	.trywait = p4f_trywait,
	.domain2 = p4f_fabric_domain2,
};

int p4f_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_p,
		    void *context)
{
	struct p4f_fabric *fabric;

	if (!attr || !fabric_p)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, P4F_FABRIC_NAME)) {
		FI_INFO(&p4f_prov, FI_LOG_FABRIC, "unknown fabric name %s\n",
			attr->name);
		return -FI_ENODATA;
	}

	fabric = calloc(1, sizeof(*fabric));
	if (!fabric)
		return -FI_ENOMEM;
	fabric->name = strdup(P4F_FABRIC_NAME);
	if (!fabric->name) {
		free(fabric);
		return -FI_ENOMEM;
	}
	p4u_lock_init(&fabric->lock, true);
	atomic_init(&fabric->ref, 0);
	fabric->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fabric->fabric_fid.fid.context = context;
	fabric->fabric_fid.fid.ops = &p4f_fabric_fi_ops;
	fabric->fabric_fid.ops = &p4f_fabric_ops;
	*fabric_p = &fabric->fabric_fid;
	return 0;
}
