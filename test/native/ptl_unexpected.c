/*
 * ptl_unexpected.c - the overflow list and unexpected headers between two
 * processes over TCP (physical NI): rank 0 sends puts nobody has posted
 * for; rank 1 buffers them in a locally managed overflow entry, searches
 * the unexpected headers (SEARCH_ONLY, SEARCH_DELETE, no match), then
 * appends priority entries that find their data through PUT_OVERFLOW
 * events, and checks every field and byte. The last message is larger than
 * the eager size: its data is pulled into the overflow entry.
 *
 *   ptlrun -n 2 ./ptl_unexpected
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define UX_PT		5
#define UX_N		9	/* the last one is above the eager size */
#define UX_BIG		40000
#define UX_OFLOW	(64 * 1024)

static unsigned char obuf[UX_OFLOW];
static unsigned char sbuf[(UX_N - 1) * 1024 + UX_BIG];
static int err;

#define FAIL(...)                                                           \
	do {                                                                \
		fprintf(stderr, "ptl_unexpected: " __VA_ARGS__);            \
		fprintf(stderr, "\n");                                      \
		err++;                                                      \
	} while (0)

static size_t len_of(int i)
{
	return i == UX_N - 1 ? UX_BIG : (size_t)(100 * i + 1);
}

static unsigned char pat(int i, size_t k)
{
	return (unsigned char)(i * 31 + k);
}

static void next(ptl_handle_eq_t eq, ptl_event_t *ev)
{
	BOOT_CHECK(PtlEQWait(eq, ev));
}

static void check_data(int i, const unsigned char *p, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++) {
		if (p[k] != pat(i, k)) {
			FAIL("message %d: byte %zu differs", i, k);
			return;
		}
	}
}

static void target(struct boot *b, ptl_handle_ni_t ni)
{
	ptl_handle_me_t of_h, me_h;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	ptl_me_t me;
	int i, n;

	BOOT_CHECK(PtlEQAlloc(ni, 128, &eq));
	BOOT_CHECK(PtlPTAlloc(ni, 0, eq, UX_PT, &pt));
	memset(&me, 0, sizeof(me));
	me.start = obuf;
	me.length = sizeof(obuf);
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
		     PTL_ME_EVENT_LINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.ignore_bits = ~(ptl_match_bits_t)0;
	me.min_free = 1024;
	BOOT_CHECK(PtlMEAppend(ni, UX_PT, &me, PTL_OVERFLOW_LIST, NULL, &of_h));
	boot_barrier(b);
	boot_barrier(b);	/* every put was acknowledged */

	/* the overflow entry took each message, in order */
	for (i = 0; i < UX_N; i++) {
		next(eq, &ev);
		if (ev.type != PTL_EVENT_PUT || ev.ptl_list != PTL_OVERFLOW_LIST ||
		    ev.match_bits != (ptl_match_bits_t)i ||
		    ev.mlength != len_of(i) || ev.rlength != len_of(i) ||
		    ev.hdr_data != (ptl_hdr_data_t)(1000 + i) ||
		    ev.initiator.phys.pid != b->peers[0].phys.pid ||
		    ev.initiator.phys.nid != b->peers[0].phys.nid ||
		    ev.pt_index != UX_PT || ev.ni_fail_type != PTL_NI_OK)
			FAIL("overflow PUT event %d: type %d bits %llu len %llu",
			     i, ev.type, (unsigned long long)ev.match_bits,
			     (unsigned long long)ev.mlength);
		else
			check_data(i, ev.start, len_of(i));
	}
	/* search only: found, nothing changes */
	me.start = NULL;
	me.length = 0;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE;
	me.ignore_bits = 0;
	me.min_free = 0;
	me.match_bits = 3;
	BOOT_CHECK(PtlMESearch(ni, UX_PT, &me, PTL_SEARCH_ONLY, &me));
	next(eq, &ev);
	if (ev.type != PTL_EVENT_SEARCH || ev.ni_fail_type != PTL_NI_OK ||
	    ev.match_bits != 3 || ev.rlength != len_of(3) ||
	    ev.user_ptr != &me)
		FAIL("search-only event: type %d fail %d", ev.type,
		     ev.ni_fail_type);
	me.match_bits = 100;
	BOOT_CHECK(PtlMESearch(ni, UX_PT, &me, PTL_SEARCH_ONLY, NULL));
	next(eq, &ev);
	if (ev.type != PTL_EVENT_SEARCH || ev.ni_fail_type != PTL_NI_NO_MATCH)
		FAIL("search miss: type %d fail %d", ev.type, ev.ni_fail_type);
	/* search and delete message 5 */
	me.match_bits = 5;
	BOOT_CHECK(PtlMESearch(ni, UX_PT, &me, PTL_SEARCH_DELETE, NULL));
	next(eq, &ev);
	if (ev.type != PTL_EVENT_PUT_OVERFLOW || ev.match_bits != 5 ||
	    ev.mlength != len_of(5))
		FAIL("search-delete: type %d", ev.type);
	else
		check_data(5, ev.start, len_of(5));
	/* priority entries find the others' data in the overflow buffer */
	for (i = 0; i < UX_N; i++) {
		me.match_bits = (ptl_match_bits_t)i;
		BOOT_CHECK(PtlMEAppend(ni, UX_PT, &me, PTL_PRIORITY_LIST,
				       (void *)(uintptr_t)(i + 1), &me_h));
		next(eq, &ev);
		if (i == 5) {
			/* its header is gone: the entry is linked */
			if (ev.type != PTL_EVENT_LINK)
				FAIL("append 5: type %d", ev.type);
			BOOT_CHECK(PtlMEUnlink(me_h));
			continue;
		}
		if (ev.type != PTL_EVENT_PUT_OVERFLOW ||
		    ev.user_ptr != (void *)(uintptr_t)(i + 1) ||
		    ev.match_bits != (ptl_match_bits_t)i ||
		    ev.mlength != len_of(i) ||
		    ev.ptl_list != PTL_PRIORITY_LIST) {
			FAIL("append %d: type %d list %d", i, ev.type,
			     ev.ptl_list);
			continue;
		}
		check_data(i, ev.start, len_of(i));
		/* the use-once entry is used up without being linked */
		next(eq, &ev);
		if (ev.type != PTL_EVENT_AUTO_UNLINK)
			FAIL("append %d: then type %d", i, ev.type);
		if (PtlMEUnlink(me_h) != PTL_ARG_INVALID)
			FAIL("append %d: handle still valid", i);
	}
	n = 0;
	while (PtlEQGet(eq, &ev) == PTL_OK)
		n++;
	if (n)
		FAIL("%d stray events", n);
	BOOT_CHECK(PtlMEUnlink(of_h));
	BOOT_CHECK(PtlPTFree(ni, UX_PT));
	BOOT_CHECK(PtlEQFree(eq));
}

static void initiator(struct boot *b, ptl_handle_ni_t ni)
{
	ptl_handle_md_t md_h;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	ptl_md_t md;
	int i, acks = 0;
	size_t k;

	BOOT_CHECK(PtlEQAlloc(ni, 64, &eq));
	for (i = 0; i < UX_N; i++)
		for (k = 0; k < len_of(i); k++)
			sbuf[i * 1024 + k] = pat(i, k);
	memset(&md, 0, sizeof(md));
	md.start = sbuf;
	md.length = sizeof(sbuf);
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	BOOT_CHECK(PtlMDBind(ni, &md, &md_h));
	boot_barrier(b);
	for (i = 0; i < UX_N; i++)
		BOOT_CHECK(PtlPut(md_h, (ptl_size_t)i * 1024, len_of(i),
				  PTL_ACK_REQ, b->peers[1], UX_PT,
				  (ptl_match_bits_t)i, 0, NULL,
				  (ptl_hdr_data_t)(1000 + i)));
	while (acks < UX_N) {
		next(eq, &ev);
		if (ev.type != PTL_EVENT_ACK || ev.ni_fail_type != PTL_NI_OK ||
		    ev.mlength != ev.rlength)
			FAIL("ack: type %d fail %d", ev.type, ev.ni_fail_type);
		acks++;
	}
	boot_barrier(b);
	BOOT_CHECK(PtlMDRelease(md_h));
	BOOT_CHECK(PtlEQFree(eq));
}

int main(void)
{
	ptl_handle_ni_t ni;
	struct boot b;

	boot_env(&b);
	if (b.size != 2)
		return 2;
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	boot_init(&b, ni, 0);
	if (b.rank == 0)
		initiator(&b, ni);
	else
		target(&b, ni);
	boot_barrier(&b);
	boot_fini(&b);
	BOOT_CHECK(PtlNIFini(ni));
	PtlFini();
	if (!err && b.rank == 1)
		printf("ptl_unexpected: ok\n");
	return err ? 1 : 0;
}
