/*
 * ptl_trigchain.c - a chain of triggered operations between two processes
 * over TCP, on a non-matching logical NI (LEs): counter A fires a put and
 * a CT increment of B; B fires a get, then atomics, a fetch-atomic and a
 * swap; a triggered CT set resets A; a cancelled triggered put never
 * happens. Buffers are read when an operation fires, not when it is
 * posted, which the test checks.
 *
 *   ptlrun -n 2 ./ptl_trigchain
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define TC_PT	4

static int64_t tbuf[8];		/* rank 1: the target */
static int64_t src[8], dst[8];	/* rank 0 */

static void expect_eq(const char *what, int64_t got, int64_t want, int *err)
{
	if (got != want) {
		fprintf(stderr, "ptl_trigchain: %s = %lld, want %lld\n", what,
			(long long)got, (long long)want);
		(*err)++;
	}
}

int main(void)
{
	ptl_ct_event_t one = { 1, 0 }, zero = { 0, 0 }, five = { 5, 0 }, ev;
	ptl_handle_ct_t a, bct, c, d, tct;
	ptl_handle_md_t src_md, dst_md;
	ptl_handle_le_t le_h;
	ptl_handle_ni_t ni;
	ptl_process_t peer;
	ptl_pt_index_t pt;
	int64_t cmp = 0, opnd;
	struct boot b;
	ptl_md_t md;
	ptl_le_t le;
	int err = 0;

	boot_env(&b);
	if (b.size != 2)
		return 2;
	BOOT_CHECK(PtlInit());
	/* the barrier needs a matching NI; the test runs on a non-matching
	 * one: both logical, both with the same map */
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_NO_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	BOOT_CHECK(PtlSetMap(ni, (ptl_size_t)b.size, b.peers));
	{
		ptl_handle_ni_t mni;

		BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
				     PTL_NI_MATCHING | PTL_NI_LOGICAL,
				     PTL_PID_ANY, NULL, NULL, &mni));
		BOOT_CHECK(PtlSetMap(mni, (ptl_size_t)b.size, b.peers));
		boot_init(&b, mni, 1);
	}
	memset(&peer, 0, sizeof(peer));
	peer.rank = 1;
	if (b.rank == 1) {
		BOOT_CHECK(PtlCTAlloc(ni, &tct));
		BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, TC_PT, &pt));
		memset(&le, 0, sizeof(le));
		le.start = tbuf;
		le.length = sizeof(tbuf);
		le.ct_handle = tct;
		le.uid = PTL_UID_ANY;
		le.options = PTL_LE_OP_PUT | PTL_LE_OP_GET |
			     PTL_LE_EVENT_CT_COMM;
		BOOT_CHECK(PtlLEAppend(ni, TC_PT, &le, PTL_PRIORITY_LIST, NULL,
				       &le_h));
		tbuf[2] = 1000;
		boot_barrier(&b);
		boot_barrier(&b);	/* rank 0 is done */
		BOOT_CHECK(PtlCTGet(tct, &ev));
		/* put, get, atomic, fetch-atomic, swap: not the cancelled */
		expect_eq("target ops", (int64_t)ev.success, 5, &err);
		expect_eq("tbuf[0]", tbuf[0], 111, &err);
		expect_eq("tbuf[1]", tbuf[1], 5 + 7, &err);
		expect_eq("tbuf[2]", tbuf[2], 42, &err);
		expect_eq("tbuf[3]", tbuf[3], 0, &err);
		BOOT_CHECK(PtlLEUnlink(le_h));
		BOOT_CHECK(PtlPTFree(ni, TC_PT));
		BOOT_CHECK(PtlCTFree(tct));
		goto out;
	}
	BOOT_CHECK(PtlCTAlloc(ni, &a));
	BOOT_CHECK(PtlCTAlloc(ni, &bct));
	BOOT_CHECK(PtlCTAlloc(ni, &c));
	BOOT_CHECK(PtlCTAlloc(ni, &d));
	memset(&md, 0, sizeof(md));
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = c;
	md.options = PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_CT_ACK;
	md.start = src;
	md.length = sizeof(src);
	BOOT_CHECK(PtlMDBind(ni, &md, &src_md));
	md.start = dst;
	md.length = sizeof(dst);
	BOOT_CHECK(PtlMDBind(ni, &md, &dst_md));
	boot_barrier(&b);

	/* stage 1: A >= 1 fires a put of src[0] and B += 1 */
	BOOT_CHECK(PtlTriggeredPut(src_md, 0, 8, PTL_CT_ACK_REQ, peer, TC_PT,
				   0, 0, NULL, 0, a, 1));
	BOOT_CHECK(PtlTriggeredCTInc(bct, one, a, 1));
	/* stage 2: B >= 1 fires a get of what the put wrote */
	BOOT_CHECK(PtlTriggeredGet(dst_md, 0, 8, peer, TC_PT, 0, 0, NULL,
				   bct, 1));
	/* a cancelled op (on D: cancelling discards all of a CT's) */
	BOOT_CHECK(PtlTriggeredPut(src_md, 24, 8, PTL_CT_ACK_REQ, peer,
				   TC_PT, 0, 24, NULL, 0, d, 1));
	BOOT_CHECK(PtlCTCancelTriggered(d));
	BOOT_CHECK(PtlCTInc(d, one));
	src[0] = 111;		/* after posting: read when the op fires */
	src[3] = 99;
	BOOT_CHECK(PtlCTInc(a, one));
	BOOT_CHECK(PtlCTWait(c, 2, &ev));	/* put's ack, get's reply */
	expect_eq("get", dst[0], 111, &err);
	expect_eq("failures", (int64_t)ev.failure, 0, &err);

	/* stage 3: B >= 2 fires atomics and resets A */
	src[1] = 5;
	src[4] = 7;
	opnd = 42;
	memcpy(&src[2], &opnd, 8);
	BOOT_CHECK(PtlTriggeredAtomic(src_md, 8, 8, PTL_CT_ACK_REQ, peer,
				      TC_PT, 0, 8, NULL, 0, PTL_SUM,
				      PTL_INT64_T, bct, 2));
	BOOT_CHECK(PtlTriggeredFetchAtomic(dst_md, 8, src_md, 32, 8, peer,
					   TC_PT, 0, 8, NULL, 0, PTL_SUM,
					   PTL_INT64_T, bct, 2));
	BOOT_CHECK(PtlTriggeredSwap(dst_md, 16, src_md, 16, 8, peer, TC_PT,
				    0, 16, NULL, 0, &cmp, PTL_SWAP,
				    PTL_INT64_T, bct, 2));
	BOOT_CHECK(PtlTriggeredCTSet(a, zero, bct, 2));
	BOOT_CHECK(PtlCTInc(a, five));	/* nothing is left on A */
	BOOT_CHECK(PtlCTInc(bct, one));
	BOOT_CHECK(PtlCTWait(c, 5, &ev));
	expect_eq("failures", (int64_t)ev.failure, 0, &err);
	expect_eq("fetched", dst[1], 5, &err);
	expect_eq("swapped out", dst[2], 1000, &err);
	BOOT_CHECK(PtlCTGet(a, &ev));
	expect_eq("A after the triggered set", (int64_t)ev.success, 0, &err);
	boot_barrier(&b);
	BOOT_CHECK(PtlMDRelease(src_md));
	BOOT_CHECK(PtlMDRelease(dst_md));
	BOOT_CHECK(PtlCTFree(a));
	BOOT_CHECK(PtlCTFree(bct));
	BOOT_CHECK(PtlCTFree(c));
	BOOT_CHECK(PtlCTFree(d));
	if (!err)
		printf("ptl_trigchain: ok\n");
out:
	boot_fini(&b);
	PtlFini();
	return err ? 1 : 0;
}
