/*
 * ptl_handle.c - handle tables: 32-bit handles (layout in ptl_priv.h) to
 * slots, with a generation per slot so a stale handle is refused, and the
 * lookups every API call starts with. Called with the library lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "ptl_priv.h"

/*
 * The arrays are sized for cap but touched only as far as the table is
 * used (calloc and malloc of large sizes map zero pages lazily), so a cap
 * of a million entries costs nothing until the entries exist.
 */
int ptl_tab_init(struct ptl_tab *tab, unsigned type, uint32_t cap)
{
	memset(tab, 0, sizeof(*tab));
	if (cap > PTL_H_IDX_MAX + 1)
		cap = PTL_H_IDX_MAX + 1;
	tab->type = type;
	tab->cap = cap;
	tab->slots = calloc(cap ? cap : 1, sizeof(*tab->slots));
	tab->free = malloc((cap ? cap : 1) * sizeof(*tab->free));
	if (!tab->slots || !tab->free) {
		ptl_tab_fini(tab);
		return -FI_ENOMEM;
	}
	return 0;
}

void ptl_tab_fini(struct ptl_tab *tab)
{
	free(tab->slots);
	free(tab->free);
	tab->slots = NULL;
	tab->free = NULL;
	tab->cap = tab->nfree = tab->fresh = 0;
}

int ptl_tab_alloc(struct ptl_tab *tab, unsigned kind, uint32_t *handle_p)
{
	struct ptl_slot *slot;
	uint32_t idx;

	/* the last freed first, then the lowest never used: handles are
	 * reproducible run to run */
	if (tab->nfree)
		idx = tab->free[--tab->nfree];
	else if (tab->fresh < tab->cap)
		idx = tab->fresh++;
	else
		return -FI_ENOSPC;
	slot = &tab->slots[idx];
	slot->used = 1;
	slot->obj = NULL;
	slot->eh = 0;
	slot->me_nomatch = 0;
	tab->used++;
	*handle_p = ptl_h_make(tab->type, kind, slot->gen, idx);
	return 0;
}

void ptl_tab_free(struct ptl_tab *tab, uint32_t handle)
{
	struct ptl_slot *slot = ptl_tab_get(tab, handle);

	if (!slot)
		return;
	slot->used = 0;
	slot->gen = (uint8_t)((slot->gen + 1) & PTL_H_GEN_MASK);
	tab->free[tab->nfree++] = ptl_h_idx(handle);
	tab->used--;
}

struct ptl_slot *ptl_tab_get(struct ptl_tab *tab, uint32_t handle)
{
	uint32_t idx = ptl_h_idx(handle);
	struct ptl_slot *slot;

	if (ptl_h_type(handle) != tab->type || idx >= tab->cap)
		return NULL;
	slot = &tab->slots[idx];
	if (!slot->used || slot->gen != ptl_h_gen(handle))
		return NULL;
	return slot;
}

struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t handle)
{
	unsigned kind = ptl_h_kind(handle);
	struct ptl_ni *ni = ptl_lib.nis[kind];

	if (ptl_h_type(handle) != PTL_HT_NI || !ni || ni->handle != handle)
		return NULL;
	return ni;
}

static struct ptl_tab *ptl_ni_tab(struct ptl_ni *ni, unsigned type)
{
	switch (type) {
	case PTL_HT_EQ:
		return &ni->eqs;
	case PTL_HT_CT:
		return &ni->cts;
	case PTL_HT_MD:
		return &ni->mds;
	case PTL_HT_ME:
		return &ni->mes;
	default:
		return NULL;
	}
}

struct ptl_slot *ptl_obj_lookup(uint32_t handle, unsigned type,
				struct ptl_ni **ni_p)
{
	struct ptl_ni *ni = ptl_lib.nis[ptl_h_kind(handle)];
	struct ptl_tab *tab;
	struct ptl_slot *slot;

	if (!ni || ptl_h_type(handle) != type)
		return NULL;
	tab = ptl_ni_tab(ni, type);
	slot = tab ? ptl_tab_get(tab, handle) : NULL;
	if (slot && ni_p)
		*ni_p = ni;
	return slot;
}

int ptl_ni_enter(ptl_handle_ni_t handle, struct ptl_ni **ni_p)
{
	int ret = ptl_enter();

	if (ret)
		return ret;
	*ni_p = ptl_ni_lookup(handle);
	if (!*ni_p) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	return PTL_OK;
}

int ptl_obj_enter(uint32_t handle, unsigned type, struct ptl_ni **ni_p,
		  struct ptl_slot **slot_p)
{
	int ret = ptl_enter();

	if (ret)
		return ret;
	*slot_p = ptl_obj_lookup(handle, type, ni_p);
	if (!*slot_p) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	return PTL_OK;
}

struct ptl_ni *ptl_ni_of(uint32_t handle, unsigned type)
{
	struct ptl_ni *ni = NULL;

	if (type == PTL_HT_NI)
		return ptl_ni_lookup(handle);
	return ptl_obj_lookup(handle, type, &ni) ? ni : NULL;
}

PTL_EXPORT int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
	struct ptl_ni *ni;
	int ret = ptl_enter();

	if (ret)
		return ret;
	ni = ptl_ni_of(handle, ptl_h_type(handle));
	if (!ni || !ni_handle) {
		ptl_leave();
		return PTL_ARG_INVALID;
	}
	*ni_handle = ni->handle;
	ptl_leave();
	return PTL_OK;
}
