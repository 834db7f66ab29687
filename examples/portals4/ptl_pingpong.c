/*
 * ptl_pingpong.c - Portals 4 ping-pong between ranks 0 and 1 (logical NI,
 * puts into a persistent matching entry), data checked every round, then
 * a get of the peer's buffer. Prints the half round-trip time per size.
 *
 *   ptlrun -n 2 ./ptl_pingpong [iterations]
 *
 * Written against portals4.h only (with the ptl_boot.h bootstrap).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptl_boot.h"

#define PP_PT		0
#define PP_BITS		0x1234
#define PP_MAX		(1 << 20)

static unsigned char pattern(size_t i, int iter, size_t len)
{
	return (unsigned char)(i * 7 + (size_t)iter * 13 + len);
}

/* Next event of the given type; events of other types are checked. */
static void wait_event(ptl_handle_eq_t eq, ptl_event_kind_t type,
		       ptl_event_t *ev)
{
	for (;;) {
		BOOT_CHECK(PtlEQWait(eq, ev));
		if (ev->ni_fail_type != PTL_NI_OK) {
			fprintf(stderr, "event %d failed: %d\n", ev->type,
				ev->ni_fail_type);
			exit(1);
		}
		if (ev->type == type)
			return;
	}
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 64, 4096, 65536, PP_MAX };
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	unsigned char *sbuf = malloc(PP_MAX), *rbuf = malloc(PP_MAX);
	ptl_process_t peer;
	ptl_handle_me_t me_h;
	ptl_handle_md_t md_h;
	ptl_handle_eq_t eq;
	ptl_handle_ni_t ni;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	struct boot b;
	ptl_md_t md;
	ptl_me_t me;
	size_t s, i, len;
	double t0;
	int it;

	boot_env(&b);
	if (b.size != 2 || !sbuf || !rbuf)
		return 2;
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	BOOT_CHECK(PtlSetMap(ni, (ptl_size_t)b.size, b.peers));
	boot_init(&b, ni, 1);
	BOOT_CHECK(PtlEQAlloc(ni, 256, &eq));
	BOOT_CHECK(PtlPTAlloc(ni, 0, eq, PP_PT, &pt));
	memset(&me, 0, sizeof(me));
	me.start = rbuf;
	me.length = PP_MAX;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET;
	me.match_id.rank = PTL_RANK_ANY;
	me.match_bits = PP_BITS;
	BOOT_CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &me_h));
	wait_event(eq, PTL_EVENT_LINK, &ev);
	memset(&md, 0, sizeof(md));
	md.start = sbuf;
	md.length = PP_MAX;
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	BOOT_CHECK(PtlMDBind(ni, &md, &md_h));
	boot_barrier(&b);

	memset(&peer, 0, sizeof(peer));
	peer.rank = (ptl_rank_t)(1 - b.rank);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		len = sizes[s];
		t0 = now_us();
		for (it = 0; it < iters; it++) {
			if (b.rank == 0) {
				for (i = 0; i < len; i++)
					sbuf[i] = pattern(i, it, len);
				BOOT_CHECK(PtlPut(md_h, 0, len, PTL_NO_ACK_REQ,
						  peer, pt, PP_BITS, 0, NULL,
						  (ptl_hdr_data_t)it));
			}
			wait_event(eq, PTL_EVENT_PUT, &ev);
			if (ev.mlength != len || ev.rlength != len ||
			    ev.hdr_data != (ptl_hdr_data_t)it ||
			    ev.initiator.rank != peer.rank ||
			    ev.match_bits != PP_BITS || ev.start != rbuf) {
				fprintf(stderr, "bad PUT event fields\n");
				return 1;
			}
			for (i = 0; i < len; i++) {
				if (rbuf[i] != pattern(i, it, len)) {
					fprintf(stderr, "bad data at %zu\n", i);
					return 1;
				}
			}
			if (b.rank == 1) {
				memcpy(sbuf, rbuf, len);
				BOOT_CHECK(PtlPut(md_h, 0, len, PTL_NO_ACK_REQ,
						  peer, pt, PP_BITS, 0, NULL,
						  (ptl_hdr_data_t)it));
			}
		}
		if (b.rank == 0)
			printf("%8zu bytes  %10.2f us\n", len,
			       (now_us() - t0) / iters / 2);
	}
	/* rank 1's buffer still holds the last message: get it back */
	boot_barrier(&b);
	if (b.rank == 0) {
		memset(sbuf, 0, PP_MAX);
		BOOT_CHECK(PtlGet(md_h, 0, 4096, peer, pt, PP_BITS, 16, NULL));
		wait_event(eq, PTL_EVENT_REPLY, &ev);
		for (i = 0; i < 4096; i++) {
			if (ev.mlength != 4096 ||
			    sbuf[i] != pattern(i + 16, iters - 1, PP_MAX)) {
				fprintf(stderr, "bad get data at %zu\n", i);
				return 1;
			}
		}
	}
	boot_barrier(&b);
	BOOT_CHECK(PtlMDRelease(md_h));
	BOOT_CHECK(PtlMEUnlink(me_h));
	BOOT_CHECK(PtlPTFree(ni, pt));
	BOOT_CHECK(PtlEQFree(eq));
	boot_fini(&b);
	BOOT_CHECK(PtlNIFini(ni));
	PtlFini();
	free(sbuf);
	free(rbuf);
	if (b.rank == 0)
		printf("ptl_pingpong: ok\n");
	return 0;
}
