/*
 * ptl_atomics.c - two-process atomics over TCP on a physical NI: every
 * Portals atomic op x integer / floating type through PtlAtomic and
 * PtlFetchAtomic, and PtlSwap's SWAP, CSWAP*, MSWAP, each checked against
 * a plain C reference (the fetched old value and the target's final value,
 * read back with PtlGet). Rank 1 only exposes memory.
 *
 *   ptlrun -n 2 ./ptl_atomics
 *
 * Written against portals4.h only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/portals4/ptl_boot.h"

#define AT_PT		3
#define AT_SLOTS	512
#define AT_SLOT		16

static unsigned char target[AT_SLOTS * AT_SLOT];
static unsigned char operand[AT_SLOTS * AT_SLOT];
static unsigned char fetched[AT_SLOTS * AT_SLOT];
static unsigned char expect[AT_SLOTS * AT_SLOT];
static unsigned char readback[AT_SLOTS * AT_SLOT];

/* init value of each slot (both ranks compute the same) */
#define INIT_OF(T)	((T)-5.5)
#define OPND_OF(T)	((T)3.25)

#define REF_BODY(T, op, a, b, r, ok)                                        \
	do {                                                                \
		ok = 1;                                                     \
		switch (op) {                                               \
		case PTL_MIN: r = b < a ? b : a; break;                     \
		case PTL_MAX: r = b > a ? b : a; break;                     \
		case PTL_SUM: r = (T)(a + b); break;                        \
		case PTL_PROD: r = (T)(a * b); break;                       \
		case PTL_LOR: r = (T)(a || b); break;                       \
		case PTL_LAND: r = (T)(a && b); break;                      \
		case PTL_LXOR: r = (T)(!a != !b); break;                    \
		default: ok = 0;                                            \
		}                                                           \
	} while (0)

#define REF_INT(T, op, a, b, r, ok)                                         \
	do {                                                                \
		REF_BODY(T, op, a, b, r, ok);                               \
		if (!ok) {                                                  \
			ok = 1;                                             \
			switch (op) {                                       \
			case PTL_BOR: r = (T)(a | b); break;                \
			case PTL_BAND: r = (T)(a & b); break;               \
			case PTL_BXOR: r = (T)(a ^ b); break;               \
			default: ok = 0;                                    \
			}                                                   \
		}                                                           \
	} while (0)

#define CASE_INT(DT, T)                                                     \
	case DT: {                                                          \
		T a = INIT_OF(T), b = OPND_OF(T), r = 0;                    \
		REF_INT(T, op, a, b, r, ok);                                \
		memcpy(init, &a, sizeof(T));                                \
		memcpy(opnd, &b, sizeof(T));                                \
		memcpy(res, &r, sizeof(T));                                 \
		*size = sizeof(T);                                          \
		break;                                                      \
	}
#define CASE_REAL(DT, T)                                                    \
	case DT: {                                                          \
		T a = INIT_OF(T), b = OPND_OF(T), r = 0;                    \
		REF_BODY(T, op, a, b, r, ok);                               \
		if (op == PTL_LOR || op == PTL_LAND || op == PTL_LXOR)      \
			ok = 0;	/* not Portals ops on reals */              \
		memcpy(init, &a, sizeof(T));                                \
		memcpy(opnd, &b, sizeof(T));                                \
		memcpy(res, &r, sizeof(T));                                 \
		*size = sizeof(T);                                          \
		break;                                                      \
	}

/* Reference for op on type: 0 if the pair is not a Portals atomic. */
static int reference(ptl_op_t op, ptl_datatype_t type, void *init,
		     void *opnd, void *res, size_t *size)
{
	int ok = 0;

	switch (type) {
	CASE_INT(PTL_INT8_T, int8_t)
	CASE_INT(PTL_UINT8_T, uint8_t)
	CASE_INT(PTL_INT16_T, int16_t)
	CASE_INT(PTL_UINT16_T, uint16_t)
	CASE_INT(PTL_INT32_T, int32_t)
	CASE_INT(PTL_UINT32_T, uint32_t)
	CASE_INT(PTL_INT64_T, int64_t)
	CASE_INT(PTL_UINT64_T, uint64_t)
	CASE_REAL(PTL_FLOAT, float)
	CASE_REAL(PTL_DOUBLE, double)
	default:
		break;
	}
	return ok;
}

/* The slots: [atomic cases][fetch-atomic cases][swap cases]. */
static int build(int fill_target, int *nslots)
{
	static const ptl_datatype_t types[] = {
		PTL_INT8_T, PTL_UINT8_T, PTL_INT16_T, PTL_UINT16_T,
		PTL_INT32_T, PTL_UINT32_T, PTL_INT64_T, PTL_UINT64_T,
		PTL_FLOAT, PTL_DOUBLE,
	};
	unsigned char init[16], opnd[16], res[16];
	size_t size, t;
	int k = 0, pass, op;

	for (pass = 0; pass < 2; pass++) {
		for (op = PTL_MIN; op <= PTL_BXOR; op++) {
			for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
				if (!reference((ptl_op_t)op, types[t], init,
					       opnd, res, &size))
					continue;
				if (fill_target)
					memcpy(&target[k * AT_SLOT], init,
					       size);
				memcpy(&operand[k * AT_SLOT], opnd, size);
				memcpy(&expect[k * AT_SLOT], res, size);
				k++;
			}
		}
	}
	*nslots = k;
	return k;
}

static void wait_ct(ptl_handle_ct_t ct, ptl_size_t n)
{
	ptl_ct_event_t ev;

	BOOT_CHECK(PtlCTWait(ct, n, &ev));
	if (ev.failure) {
		fprintf(stderr, "ptl_atomics: %llu failed operations\n",
			(unsigned long long)ev.failure);
		exit(1);
	}
}

int main(void)
{
	static const ptl_datatype_t types[] = {
		PTL_INT8_T, PTL_UINT8_T, PTL_INT16_T, PTL_UINT16_T,
		PTL_INT32_T, PTL_UINT32_T, PTL_INT64_T, PTL_UINT64_T,
		PTL_FLOAT, PTL_DOUBLE,
	};
	unsigned char init[16], opnd[16], res[16];
	ptl_handle_md_t op_md, get_md, rb_md;
	ptl_handle_ct_t ct;
	ptl_handle_me_t me_h;
	ptl_handle_ni_t ni;
	ptl_process_t peer;
	ptl_pt_index_t pt;
	ptl_size_t done = 0;
	struct boot b;
	ptl_md_t md;
	ptl_me_t me;
	int k, n, half, pass, op, errors = 0;
	size_t size, t;
	uint64_t u, cmp, put;

	boot_env(&b);
	if (b.size != 2)
		return 2;
	build(b.rank == 1, &n);
	half = n / 2;
	BOOT_CHECK(PtlInit());
	BOOT_CHECK(PtlNIInit(PTL_IFACE_DEFAULT,
			     PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			     NULL, NULL, &ni));
	boot_init(&b, ni, 0);
	/* swap slots start after the op slots: uint64 values */
	u = 100;
	for (k = n; k < n + 8; k++)
		memcpy(&target[k * AT_SLOT], &u, 8);
	if (b.rank == 1) {
		BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, AT_PT, &pt));
		memset(&me, 0, sizeof(me));
		me.start = target;
		me.length = sizeof(target);
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_COMM_DISABLE;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		BOOT_CHECK(PtlMEAppend(ni, AT_PT, &me, PTL_PRIORITY_LIST, NULL,
				       &me_h));
		boot_barrier(&b);	/* ready */
		boot_barrier(&b);	/* rank 0 finished */
		BOOT_CHECK(PtlMEUnlink(me_h));
		BOOT_CHECK(PtlPTFree(ni, AT_PT));
		goto out;
	}
	peer = b.peers[1];
	BOOT_CHECK(PtlCTAlloc(ni, &ct));
	memset(&md, 0, sizeof(md));
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = ct;
	md.options = PTL_MD_EVENT_CT_ACK | PTL_MD_EVENT_CT_REPLY;
	md.start = operand;
	md.length = sizeof(operand);
	BOOT_CHECK(PtlMDBind(ni, &md, &op_md));
	md.start = fetched;
	md.length = sizeof(fetched);
	BOOT_CHECK(PtlMDBind(ni, &md, &get_md));
	md.start = readback;
	md.length = sizeof(readback);
	BOOT_CHECK(PtlMDBind(ni, &md, &rb_md));
	boot_barrier(&b);

	/* first half through PtlAtomic, second through PtlFetchAtomic */
	k = 0;
	for (pass = 0; pass < 2; pass++) {
		for (op = PTL_MIN; op <= PTL_BXOR; op++) {
			for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
				if (!reference((ptl_op_t)op, types[t], init,
					       opnd, res, &size))
					continue;
				if (pass == 0)
					BOOT_CHECK(PtlAtomic(op_md,
						k * AT_SLOT, size,
						PTL_CT_ACK_REQ, peer, AT_PT, 0,
						k * AT_SLOT, NULL, 0,
						(ptl_op_t)op, types[t]));
				else
					BOOT_CHECK(PtlFetchAtomic(get_md,
						k * AT_SLOT, op_md,
						k * AT_SLOT, size, peer, AT_PT,
						0, k * AT_SLOT, NULL, 0,
						(ptl_op_t)op, types[t]));
				done++;
				k++;
			}
		}
	}
	wait_ct(ct, done);
	/* swaps on uint64 slots n..n+7, target 100 */
	{
		static const struct {
			ptl_op_t op;
			uint64_t cmp, put, want;
		} sw[] = {
			{ PTL_SWAP, 0, 7, 7 },
			{ PTL_CSWAP, 100, 8, 8 },	/* equal: swaps */
			{ PTL_CSWAP, 99, 9, 100 },	/* not equal: keeps */
			{ PTL_CSWAP_NE, 99, 10, 10 },
			{ PTL_CSWAP_GT, 101, 11, 11 },	/* 101 > 100 */
			{ PTL_CSWAP_LT, 101, 12, 100 },
			{ PTL_CSWAP_LE, 100, 13, 13 },
			{ PTL_MSWAP, 0xf0, 0x1234, (100 & ~0xf0ULL) | 0x30 },
		};
		for (k = 0; k < 8; k++) {
			cmp = sw[k].cmp;
			put = sw[k].put;
			memcpy(&operand[(n + k) * AT_SLOT], &put, 8);
			memcpy(&expect[(n + k) * AT_SLOT], &sw[k].want, 8);
			BOOT_CHECK(PtlSwap(get_md, (n + k) * AT_SLOT, op_md,
					   (n + k) * AT_SLOT, 8, peer, AT_PT, 0,
					   (n + k) * AT_SLOT, NULL, 0, &cmp,
					   sw[k].op, PTL_UINT64_T));
			done++;
		}
		wait_ct(ct, done);
		for (k = 0; k < 8; k++) {
			memcpy(&u, &fetched[(n + k) * AT_SLOT], 8);
			if (u != 100) {
				fprintf(stderr, "swap %d fetched %llu\n", k,
					(unsigned long long)u);
				errors++;
			}
		}
	}
	BOOT_CHECK(PtlGet(rb_md, 0, sizeof(readback), peer, AT_PT, 0, 0, NULL));
	done++;
	wait_ct(ct, done);
	for (k = 0; k < n + 8; k++) {
		if (memcmp(&readback[k * AT_SLOT], &expect[k * AT_SLOT],
			   AT_SLOT)) {
			fprintf(stderr, "slot %d: target differs\n", k);
			errors++;
		}
	}
	/* fetch-atomics returned the value before the op: the init value */
	build(1, &n);
	for (k = half; k < n; k++) {
		if (memcmp(&fetched[k * AT_SLOT], &target[k * AT_SLOT],
			   AT_SLOT)) {
			fprintf(stderr, "slot %d: fetched differs\n", k);
			errors++;
		}
	}
	boot_barrier(&b);
	BOOT_CHECK(PtlMDRelease(op_md));
	BOOT_CHECK(PtlMDRelease(get_md));
	BOOT_CHECK(PtlMDRelease(rb_md));
	BOOT_CHECK(PtlCTFree(ct));
	if (!errors)
		printf("ptl_atomics: %d atomic cases + 8 swaps ok\n", n);
out:
	boot_fini(&b);
	BOOT_CHECK(PtlNIFini(ni));
	PtlFini();
	return errors ? 1 : 0;
}
