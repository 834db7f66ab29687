/*
 * ptl_quiet_target.c - a target that makes no Portals call while data
 * arrives still gets it: the progress thread delivers. The target's
 * application thread first makes one call that progresses (PtlEQGet,
 * finding nothing) while the progress thread sleeps, then only reads
 * memory, as a SHMEM program's wait-until loop does. Rank 0 puts a value
 * into that memory a moment later; rank 1 must see it without calling
 * the library.
 *
 * Each round: a barrier, rank 1 waits 100 ms (the progress thread goes to
 * sleep), calls PtlEQGet once (PTL_EQ_EMPTY), then spins on the value for
 * up to 3 s; rank 0 waits 300 ms after the barrier and puts the round's
 * number. A late rank 1 can make a round pass by luck (the PtlEQGet then
 * finds the put), never fail one.
 *
 *   ptlrun -n 2 ./ptl_quiet_target
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define QT_PT		6
#define QT_ROUNDS	5

static volatile uint64_t target_word;
static uint64_t src_word;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	ptl_handle_me_t me;
	ptl_handle_ct_t sct;
	ptl_ct_event_t ct;
	ptl_event_t ev;
	ptl_pt_index_t pt;
	ptl_md_t mdd;
	ptl_me_t med;
	struct boot b;
	double end;
	int r, err = 0;

	boot_env(&b);
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	boot_init(&b, ni, 0);
	BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, QT_PT, &pt));
	if (b.rank == 1) {
		memset(&med, 0, sizeof(med));
		med.start = (void *)&target_word;
		med.length = sizeof(target_word);
		med.ct_handle = PTL_CT_NONE;
		med.uid = PTL_UID_ANY;
		med.match_id.phys.nid = PTL_NID_ANY;
		med.match_id.phys.pid = PTL_PID_ANY;
		med.options = PTL_ME_OP_PUT | PTL_ME_EVENT_COMM_DISABLE |
			      PTL_ME_EVENT_LINK_DISABLE;
		BOOT_CHECK(PtlMEAppend(ni, QT_PT, &med, PTL_PRIORITY_LIST,
				       NULL, &me));
	} else {
		BOOT_CHECK(PtlCTAlloc(ni, &sct));
		memset(&mdd, 0, sizeof(mdd));
		mdd.start = &src_word;
		mdd.length = sizeof(src_word);
		mdd.eq_handle = PTL_EQ_NONE;
		mdd.ct_handle = sct;
		mdd.options = PTL_MD_EVENT_CT_SEND;
		BOOT_CHECK(PtlMDBind(ni, &mdd, &md));
	}
	/*
	 * Both NIs listen before the first message: a process that sends to
	 * a peer whose shared-memory listener is not up yet talks TCP to it
	 * for good, and over TCP a socket wakes the thread anyway.
	 */
	boot_sleep_ms(300);
	for (r = 1; r <= QT_ROUNDS; r++) {
		boot_barrier(&b);
		if (b.rank == 0) {
			boot_sleep_ms(300);
			src_word = (uint64_t)r;
			BOOT_CHECK(PtlPut(md, 0, sizeof(src_word),
					  PTL_NO_ACK_REQ, b.peers[1], QT_PT, 0,
					  0, NULL, 0));
			BOOT_CHECK(PtlCTWait(sct, (ptl_size_t)r, &ct));
			continue;
		}
		boot_sleep_ms(100);
		/* one call that progresses, while the thread sleeps */
		if (PtlEQGet(b.eq, &ev) != PTL_EQ_EMPTY)
			fprintf(stderr, "ptl_quiet_target: an event? (ignored)\n");
		end = now_s() + 3.0;
		while (target_word != (uint64_t)r && now_s() < end)
			;
		if (target_word != (uint64_t)r) {
			fprintf(stderr, "ptl_quiet_target: round %d: the put "
				"never landed while the target made no call "
				"(word %llu)\n", r,
				(unsigned long long)target_word);
			err++;	/* the rounds go on in step with rank 0 */
		}
	}
	/* a failed round leaves the put in flight: the next call takes it */
	boot_barrier(&b);
	if (b.rank == 1) {
		BOOT_CHECK(PtlMEUnlink(me));
	} else {
		BOOT_CHECK(PtlMDRelease(md));
		BOOT_CHECK(PtlCTFree(sct));
	}
	BOOT_CHECK(PtlPTFree(ni, QT_PT));
	boot_fini(&b);
	BOOT_CHECK(PtlNIFini(ni));
	PtlFini();
	if (!err && b.rank == 1)
		printf("ptl_quiet_target: %d rounds passed\n", QT_ROUNDS);
	return err ? 1 : 0;
}
