/*
 * p4f_domain.c - the domain object: one network interface, its engine
 * domain, its transport, the MR key table, and how its thread level maps
 * onto workers (p4f.h, docs/design.md §8): FI_THREAD_DOMAIN with manual
 * progress, one unlocked worker here; FI_PROGRESS_AUTO (asked for, or
 * forced with FI_PORTALS_PROGRESS_THREAD=1), one locked worker here with
 * its progress thread, from fi_domain to fi_close; any other level, a
 * worker per endpoint (p4f_ep.c).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "p4f.h"

/* The transport of a domain on iface (FI_PORTALS_TRANSPORT, p4f.h). */
static const struct p4t_ops *p4f_domain_transport(const struct p4f_iface *iface)
{
	if (p4f_xport_mode() == P4F_XPORT_LOOP)
		return &p4t_loop_ops;
#ifdef HAVE_VERBS
	if (iface->verbs)
		return &p4t_verbs_ops;
#endif
	return &p4t_tcp_ops;
}

static int p4f_domain_close(struct fid *fid)
{
	struct p4f_domain *domain =
		container_of(fid, struct p4f_domain, domain_fid.fid);

	if (atomic_load(&domain->ref)) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN,
			"domain still has %d open objects\n",
			atomic_load(&domain->ref));
		return -FI_EBUSY;
	}
	/* first: its thread progresses the engine destroyed below */
	if (domain->worker) {
		p4u_list_remove(&domain->worker->link);
		p4f_worker_put(domain->worker);
	}
	if (domain->eq)
		p4f_eq_put(p4f_eq_of(domain->eq));
	p4e_dom_destroy(domain->edom);
	p4f_mr_table_destroy(domain->mr_table);
	atomic_fetch_sub(&domain->fabric->ref, 1);
	fi_freeinfo(domain->info);
	p4u_lock_fini(&domain->lock);
	free(domain);
	return 0;
}

/* fi_domain_bind: an EQ for asynchronous AV and MR events. */
static int p4f_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct p4f_domain *domain =
		container_of(fid, struct p4f_domain, domain_fid.fid);

	if (!bfid)
		return -FI_EINVAL;
	if (bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags & ~FI_REG_MR)
		return -FI_EBADFLAGS;
	if (domain->eq)
		return -FI_EINVAL;	/* one EQ per domain */
	domain->eq = container_of(bfid, struct fid_eq, fid);
	domain->eq_flags = flags;
	p4f_eq_get(p4f_eq_of(domain->eq));
	return 0;
}

static int p4f_domain_control(struct fid *fid, int command, void *arg)
{
	struct p4f_domain *domain =
		container_of(fid, struct p4f_domain, domain_fid.fid);

	/* deferred work: FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK */
	return p4f_trigger_control(domain, command, arg);
}

static struct fi_ops p4f_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = p4f_domain_close,
	.bind = p4f_domain_bind,
	.control = p4f_domain_control,
	.ops_open = p4f_no_ops_open,
	.tostr = p4f_no_tostr,
	.ops_set = p4f_no_ops_set,
};

static int p4f_domain_endpoint2(struct fid_domain *domain,
				struct fi_info *info, struct fid_ep **ep_p,
				uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return p4f_ep_open(domain, info, ep_p, context);
}

static struct fi_ops_domain p4f_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = p4f_av_open,
	.cq_open = p4f_cq_open,
	.endpoint = p4f_ep_open,
	.scalable_ep = p4f_no_domain_scalable_ep,
	.cntr_open = p4f_cntr_open,
	.poll_open = p4f_poll_open,
	.stx_ctx = p4f_no_domain_stx_ctx,
	.srx_ctx = p4f_no_domain_srx_ctx,
	.query_atomic = p4f_query_atomic,
	.query_collective = p4f_no_domain_query_collective,
	.endpoint2 = p4f_domain_endpoint2,
};

/* The interface the domain stands for: its name, or the info's source. */
static int p4f_domain_iface(const struct fi_info *info,
			    struct p4f_iface *iface)
{
	int family = AF_UNSPEC;

	if (info->addr_format == FI_SOCKADDR_IN)
		family = AF_INET;
	else if (info->addr_format == FI_SOCKADDR_IN6)
		family = AF_INET6;

	if (info->domain_attr && info->domain_attr->name)
		return p4f_xport_iface_lookup(info->domain_attr->name, family,
					      iface);
	return p4f_xport_iface_lookup(NULL, family, iface);
}

int p4f_domain_open(struct fid_fabric *fabric_fid, struct fi_info *info,
		    struct fid_domain **domain_p, void *context)
{
	struct p4f_fabric *fabric =
		container_of(fabric_fid, struct p4f_fabric, fabric_fid);
	struct p4f_domain *domain;
	struct p4f_iface iface;
	int ret;

	if (!info || !domain_p)
		return -FI_EINVAL;
	if (info->fabric_attr && info->fabric_attr->name &&
	    strcmp(info->fabric_attr->name, fabric->name))
		return -FI_EINVAL;
	ret = p4f_check_info(fabric_fid->api_version ?
			     fabric_fid->api_version : P4F_FI_VERSION,
			     &p4f_info_template, info);
	/* the core fills api_version in fi_fabric(); tests may call us raw */
	if (ret)
		return -FI_EINVAL;
	ret = p4f_domain_iface(info, &iface);
	if (ret) {
		FI_WARN(&p4f_prov, FI_LOG_DOMAIN, "no usable interface %s\n",
			info->domain_attr && info->domain_attr->name ?
			info->domain_attr->name : "");
		return -FI_ENODEV;
	}

	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	domain->info = fi_dupinfo(info);
	if (!domain->info) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	domain->transport = p4f_domain_transport(&iface);
	p4u_list_init(&domain->eps);
	p4u_list_init(&domain->workers);
	p4u_list_init(&domain->cntrs);

	memcpy(domain->ifname, iface.name, sizeof(domain->ifname));
	domain->ifaddr = iface.addr;
	domain->fabric = fabric;
	domain->api_version = fabric_fid->api_version ?
		fabric_fid->api_version : P4F_FI_VERSION;
	domain->threading = info->domain_attr ?
		info->domain_attr->threading : FI_THREAD_SAFE;
	if (domain->threading == FI_THREAD_UNSPEC)
		domain->threading = FI_THREAD_SAFE;
	domain->data_progress = info->domain_attr ?
		info->domain_attr->data_progress : FI_PROGRESS_MANUAL;
	if (domain->data_progress == FI_PROGRESS_UNSPEC)
		domain->data_progress = FI_PROGRESS_MANUAL;
	/* the thread, once forced, makes progress automatic for everyone */
	if (p4f_params.progress_thread)
		domain->data_progress = FI_PROGRESS_AUTO;
	domain->mr_mode = info->domain_attr ? info->domain_attr->mr_mode : 0;
	domain->locked = p4f_domain_locked(domain->threading,
					   domain->data_progress);
	ret = p4f_mr_table_create(domain->locked, &domain->mr_table);
	if (ret)
		goto err_freeinfo;
	p4u_lock_init(&domain->lock, domain->locked);
	atomic_init(&domain->ref, 0);
	ret = p4e_dom_create(&(struct p4e_dom_attr){ .locked = domain->locked },
			     &domain->edom);
	if (ret)
		goto err_lock;

	domain->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	domain->domain_fid.fid.context = context;
	domain->domain_fid.fid.ops = &p4f_domain_fi_ops;
	domain->domain_fid.ops = &p4f_domain_ops;
	domain->domain_fid.mr = &p4f_mr_ops;
	if (!p4f_domain_worker_per_ep(domain->threading,
				      domain->data_progress)) {
		ret = p4f_worker_open(domain, domain->data_progress ==
				      FI_PROGRESS_AUTO, &domain->worker);
		if (ret)
			goto err_edom;
		p4u_list_insert_tail(&domain->workers, &domain->worker->link);
	}
	atomic_fetch_add(&fabric->ref, 1);
	*domain_p = &domain->domain_fid;
	return 0;

err_edom:
	p4e_dom_destroy(domain->edom);
err_lock:
	p4u_lock_fini(&domain->lock);
	p4f_mr_table_destroy(domain->mr_table);
err_freeinfo:
	fi_freeinfo(domain->info);
err_free:
	free(domain);
	return ret;
}
