/*
 * p4t_verbs_mr.c - application memory registered with the device ahead of
 * its transfers (p4t_ops.mr_reg / mr_dereg, called at fi_mr_reg and
 * fi_close of an MR), and the lookup the data path makes before it
 * registers a buffer on demand.
 *
 * A registration is not tied to an iface (fi_mr_reg is a domain call,
 * possibly before any endpoint exists, and each iface has a protection
 * domain of its own): the registry keeps every application region and
 * every open iface of the process, and registers each region with each
 * iface's PD, at mr_reg for the ifaces open then and at iface open for the
 * regions registered before. One mutex guards the registry: mr_reg comes
 * from any domain's thread, the data path from the iface's own.
 *
 * Lifetime: a transfer or exposure that uses a registration holds a
 * reference on it; mr_dereg takes the region off the registry at once
 * (nothing new finds it) but deregisters a PD's copy only when its last
 * user is done, so an operation the application did not wait for never
 * meets a stale key. An iface closes with nothing in flight (p4t.h), so it
 * drops its copies outright.
 *
 * The lookup scans the iface's registrations (applications register few,
 * large regions; mr_mode 0 consumers none at all): O(registrations).
 *
 * Not here: on-demand registration and the transfers themselves
 * (p4t_verbs_data.c).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>

#include "p4t_verbs_priv.h"
#include "p4u_log.h"

static pthread_mutex_t p4t_verbs_mr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct p4u_list p4t_verbs_mr_amrs =
	P4U_LIST_INITIALIZER(p4t_verbs_mr_amrs);
static struct p4u_list p4t_verbs_mr_ifaces =
	P4U_LIST_INITIALIZER(p4t_verbs_mr_ifaces);

/*
 * What the device must allow: local writes always (pulls land in it);
 * remote reads when peers may pull from its exposures (rendezvous sends,
 * large writes), remote writes when they may push into them (large reads).
 */
static int p4t_verbs_mr_flags(unsigned access)
{
	int flags = IBV_ACCESS_LOCAL_WRITE;

	if (access & P4T_ACCESS_READ)
		flags |= IBV_ACCESS_REMOTE_READ;
	if (access & P4T_ACCESS_WRITE)
		flags |= IBV_ACCESS_REMOTE_WRITE;
	return flags;
}

/* Register amr with iface's PD. With the registry lock held. */
static int p4t_verbs_mr_reg_add_locked(struct p4t_verbs_amr *amr,
				       struct p4t_verbs_iface *iface)
{
	struct p4t_verbs_reg *reg = calloc(1, sizeof(*reg));
	int err;

	if (!reg)
		return -FI_ENOMEM;
	reg->mr = ibv_reg_mr(iface->pd, (void *)amr->base, amr->len,
			     amr->flags);
	if (!reg->mr) {
		err = errno;
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: registering %zu "
				"application bytes failed: %s", amr->len,
				strerror(err));
		free(reg);
		return err == ENOMEM ? -FI_ENOMEM : -FI_EFAULT;
	}
	reg->amr = amr;
	reg->iface = iface;
	reg->base = amr->base;
	reg->len = amr->len;
	reg->flags = amr->flags;
	p4u_list_insert_tail(&amr->regs, &reg->amr_link);
	p4u_list_insert_tail(&iface->regs, &reg->iface_link);
	iface->stats.app_regs++;
	return 0;
}

/* Deregister one PD's copy. With the registry lock held. */
static void p4t_verbs_mr_reg_destroy_locked(struct p4t_verbs_reg *reg)
{
	if (ibv_dereg_mr(reg->mr))
		p4u_warn_sparse(P4U_LOG_TRANSPORT, "verbs: dereg mr: %s",
				strerror(errno));
	p4u_list_remove(&reg->amr_link);
	p4u_list_remove(&reg->iface_link);
	free(reg);
}

/* A region the application dropped goes with its last copy. */
static void p4t_verbs_mr_amr_release_locked(struct p4t_verbs_amr *amr)
{
	if (amr->dead && p4u_list_empty(&amr->regs))
		free(amr);
}

int p4t_verbs_mr_reg(const void *buf, size_t len, unsigned access,
		     struct p4t_mr **mr_p)
{
	struct p4t_verbs_iface *iface;
	struct p4t_verbs_amr *amr;
	struct p4t_verbs_reg *reg;
	int ret = 0;

	if (!buf || !len || (access & ~(P4T_ACCESS_READ | P4T_ACCESS_WRITE)) ||
	    len - 1 > UINTPTR_MAX - (uintptr_t)buf)
		return -FI_EINVAL;
	amr = calloc(1, sizeof(*amr));
	if (!amr)
		return -FI_ENOMEM;
	p4u_list_node_init(&amr->link);
	p4u_list_init(&amr->regs);
	amr->base = (uintptr_t)buf;
	amr->len = len;
	amr->flags = p4t_verbs_mr_flags(access);

	pthread_mutex_lock(&p4t_verbs_mr_lock);
	p4u_list_foreach_entry(&p4t_verbs_mr_ifaces, iface,
			       struct p4t_verbs_iface, reg_link) {
		ret = p4t_verbs_mr_reg_add_locked(amr, iface);
		if (ret)
			break;
	}
	if (ret) {
		/* what cannot be registered now never will: say so */
		while (!p4u_list_empty(&amr->regs)) {
			reg = p4u_list_first_entry(&amr->regs,
						   struct p4t_verbs_reg,
						   amr_link);
			p4t_verbs_mr_reg_destroy_locked(reg);
		}
	} else {
		p4u_list_insert_tail(&p4t_verbs_mr_amrs, &amr->link);
	}
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
	if (ret) {
		free(amr);
		return ret;
	}
	*mr_p = (struct p4t_mr *)amr;
	return 0;
}

void p4t_verbs_mr_dereg(struct p4t_mr *mr)
{
	struct p4t_verbs_amr *amr = (struct p4t_verbs_amr *)mr;
	struct p4t_verbs_reg *reg, *tmp;

	if (!amr)
		return;
	pthread_mutex_lock(&p4t_verbs_mr_lock);
	p4u_list_remove(&amr->link);
	amr->dead = true;
	p4u_list_foreach_entry_safe(&amr->regs, reg, tmp, struct p4t_verbs_reg,
				    amr_link)
		if (!reg->refs)
			p4t_verbs_mr_reg_destroy_locked(reg);
	p4t_verbs_mr_amr_release_locked(amr);
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
}

void p4t_verbs_mr_iface_add(struct p4t_verbs_iface *iface)
{
	struct p4t_verbs_amr *amr;

	pthread_mutex_lock(&p4t_verbs_mr_lock);
	p4u_list_insert_tail(&p4t_verbs_mr_ifaces, &iface->reg_link);
	/* a region this PD cannot take is reached by on-demand
	 * registration instead (the warning says why) */
	p4u_list_foreach_entry(&p4t_verbs_mr_amrs, amr, struct p4t_verbs_amr,
			       link)
		p4t_verbs_mr_reg_add_locked(amr, iface);
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
}

void p4t_verbs_mr_iface_remove(struct p4t_verbs_iface *iface)
{
	struct p4t_verbs_reg *reg;
	struct p4t_verbs_amr *amr;

	if (!p4u_list_node_linked(&iface->reg_link))
		return;		/* never added (open failed early) */
	pthread_mutex_lock(&p4t_verbs_mr_lock);
	p4u_list_remove(&iface->reg_link);
	while (!p4u_list_empty(&iface->regs)) {
		reg = p4u_list_first_entry(&iface->regs, struct p4t_verbs_reg,
					   iface_link);
		if (reg->refs)
			p4u_warn(P4U_LOG_TRANSPORT, "verbs: close: an "
				 "application registration still in use");
		amr = reg->amr;
		p4t_verbs_mr_reg_destroy_locked(reg);
		p4t_verbs_mr_amr_release_locked(amr);
	}
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
}

struct p4t_verbs_reg *p4t_verbs_mr_find(struct p4t_verbs_iface *iface,
					const void *addr, size_t len,
					int flags)
{
	uintptr_t start = (uintptr_t)addr;
	struct p4t_verbs_reg *reg, *found = NULL;

	pthread_mutex_lock(&p4t_verbs_mr_lock);
	p4u_list_foreach_entry(&iface->regs, reg, struct p4t_verbs_reg,
			       iface_link) {
		/* inside, never wrapping; a dead region finds no new user */
		if (start >= reg->base && len <= reg->len &&
		    start - reg->base <= reg->len - len &&
		    (reg->flags & flags) == flags && !reg->amr->dead) {
			reg->refs++;
			found = reg;
			break;
		}
	}
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
	return found;
}

void p4t_verbs_mr_put(struct p4t_verbs_reg *reg)
{
	struct p4t_verbs_amr *amr = reg->amr;

	pthread_mutex_lock(&p4t_verbs_mr_lock);
	if (!--reg->refs && amr->dead) {
		p4t_verbs_mr_reg_destroy_locked(reg);
		p4t_verbs_mr_amr_release_locked(amr);
	}
	pthread_mutex_unlock(&p4t_verbs_mr_lock);
}
