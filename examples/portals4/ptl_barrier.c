/*
 * ptl_barrier.c - an allreduce (sum) offloaded with triggered operations,
 * the Portals way to run a collective without the host: every rank adds
 * its value into rank 0's accumulator with PtlAtomic; rank 0 has posted,
 * up front, triggered puts that broadcast the accumulator when its counter
 * reaches size * (round + 1) arrivals. Every round is also a barrier: no
 * rank leaves it before every rank entered.
 *
 *   ptlrun -n 4 ./ptl_barrier [rounds]
 *
 * Written against portals4.h only (with the ptl_boot.h bootstrap).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptl_boot.h"

#define AR_PT_ACC	1	/* rank 0: the accumulators */
#define AR_PT_RES	2	/* every rank: where the results land */
#define AR_MAX_ROUNDS	64

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 16;
	int64_t acc[AR_MAX_ROUNDS], res[AR_MAX_ROUNDS], mine[AR_MAX_ROUNDS];
	ptl_handle_ct_t acc_ct, res_ct;
	ptl_handle_md_t mine_md, acc_md;
	ptl_handle_me_t acc_me, res_me;
	ptl_handle_ni_t ni;
	ptl_process_t root, dst;
	ptl_pt_index_t pt;
	ptl_ct_event_t ct;
	struct boot b;
	ptl_md_t md;
	ptl_me_t me;
	int64_t want;
	int r, i;

	boot_env(&b);
	if (rounds < 1 || rounds > AR_MAX_ROUNDS)
		return 2;
	memset(acc, 0, sizeof(acc));
	memset(res, 0, sizeof(res));
	for (r = 0; r < rounds; r++)
		mine[r] = (int64_t)(b.rank + 1) * (r + 1);
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	BOOT_CHECK(PtlSetMap(ni, (ptl_size_t)b.size, b.peers));
	boot_init(&b, ni, 1);
	BOOT_CHECK(PtlCTAlloc(ni, &acc_ct));
	BOOT_CHECK(PtlCTAlloc(ni, &res_ct));

	/* every rank: the result entry, counted */
	BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, AR_PT_RES, &pt));
	memset(&me, 0, sizeof(me));
	me.start = res;
	me.length = sizeof(res);
	me.ct_handle = res_ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM;
	me.match_id.rank = PTL_RANK_ANY;
	BOOT_CHECK(PtlMEAppend(ni, AR_PT_RES, &me, PTL_PRIORITY_LIST, NULL,
			       &res_me));
	memset(&md, 0, sizeof(md));
	md.start = mine;
	md.length = sizeof(mine);
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	BOOT_CHECK(PtlMDBind(ni, &md, &mine_md));

	memset(&root, 0, sizeof(root));
	if (b.rank == 0) {
		/* the accumulators, counted; atomics need no match bits */
		BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, AR_PT_ACC, &pt));
		me.start = acc;
		me.length = sizeof(acc);
		me.ct_handle = acc_ct;
		BOOT_CHECK(PtlMEAppend(ni, AR_PT_ACC, &me, PTL_PRIORITY_LIST,
				       NULL, &acc_me));
		md.start = acc;
		md.length = sizeof(acc);
		BOOT_CHECK(PtlMDBind(ni, &md, &acc_md));
		/* the whole broadcast schedule, before any data moves */
		for (r = 0; r < rounds; r++) {
			for (i = 0; i < b.size; i++) {
				memset(&dst, 0, sizeof(dst));
				dst.rank = (ptl_rank_t)i;
				BOOT_CHECK(PtlTriggeredPut(
					acc_md, (ptl_size_t)r * 8, 8,
					PTL_NO_ACK_REQ, dst, AR_PT_RES, 0,
					(ptl_size_t)r * 8, NULL, 0, acc_ct,
					(ptl_size_t)b.size * (ptl_size_t)(r + 1)));
			}
		}
	}
	boot_barrier(&b);

	for (r = 0; r < rounds; r++) {
		BOOT_CHECK(PtlAtomic(mine_md, (ptl_size_t)r * 8, 8,
				     PTL_NO_ACK_REQ, root, AR_PT_ACC, 0,
				     (ptl_size_t)r * 8, NULL, 0, PTL_SUM,
				     PTL_INT64_T));
		BOOT_CHECK(PtlCTWait(res_ct, (ptl_size_t)(r + 1), &ct));
		if (ct.failure) {
			fprintf(stderr, "rank %d: failures %llu\n", b.rank,
				(unsigned long long)ct.failure);
			return 1;
		}
		want = (int64_t)b.size * (b.size + 1) / 2 * (r + 1);
		if (res[r] != want) {
			fprintf(stderr, "rank %d round %d: %lld != %lld\n",
				b.rank, r, (long long)res[r], (long long)want);
			return 1;
		}
	}
	boot_barrier(&b);
	if (b.rank == 0) {
		BOOT_CHECK(PtlMDRelease(acc_md));
		BOOT_CHECK(PtlMEUnlink(acc_me));
		BOOT_CHECK(PtlPTFree(ni, AR_PT_ACC));
	}
	BOOT_CHECK(PtlMDRelease(mine_md));
	BOOT_CHECK(PtlMEUnlink(res_me));
	BOOT_CHECK(PtlPTFree(ni, AR_PT_RES));
	BOOT_CHECK(PtlCTFree(acc_ct));
	BOOT_CHECK(PtlCTFree(res_ct));
	boot_fini(&b);
	BOOT_CHECK(PtlNIFini(ni));
	PtlFini();
	if (b.rank == 0)
		printf("ptl_barrier: %d rounds on %d ranks ok\n", rounds,
		       b.size);
	return 0;
}
