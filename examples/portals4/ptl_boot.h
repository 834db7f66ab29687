/*
 * ptl_boot.h - bootstrap for Portals 4 programs started by ptlrun: rank,
 * size and the peers' physical ids from the environment (PTL_RANK,
 * PTL_SIZE, PTL_PEERS="a.b.c.d:pid,..."), and a start-up barrier built
 * from Portals calls alone (puts retried until the peer's entry exists).
 * Uses nothing but portals4.h and the C library.
 */
#ifndef PTL_BOOT_H
#define PTL_BOOT_H

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <portals4.h>

#define BOOT_PT		31	/* the portal index the barrier uses */
#define BOOT_MAX	64

#define BOOT_CHECK(call)                                                    \
	do {                                                                \
		int boot_rc_ = (call);                                      \
		if (boot_rc_ != PTL_OK) {                                   \
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__,       \
				__LINE__, #call, boot_rc_);                 \
			exit(1);                                            \
		}                                                           \
	} while (0)

struct boot {
	int rank, size;
	ptl_process_t peers[BOOT_MAX];
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t me;
	char byte;
	unsigned rounds;
	int logical;
};

static inline void boot_env(struct boot *b)
{
	const char *r = getenv("PTL_RANK"), *s = getenv("PTL_SIZE");
	const char *p = getenv("PTL_PEERS");
	char buf[4096], *tok, *save = NULL, *colon;
	struct in_addr in;
	int i = 0;

	memset(b, 0, sizeof(*b));
	if (!r || !s || !p || strlen(p) >= sizeof(buf)) {
		fprintf(stderr, "run me with ptlrun (PTL_RANK/SIZE/PEERS)\n");
		exit(2);
	}
	b->rank = atoi(r);
	b->size = atoi(s);
	strcpy(buf, p);
	for (tok = strtok_r(buf, ",", &save); tok && i < BOOT_MAX;
	     tok = strtok_r(NULL, ",", &save), i++) {
		colon = strchr(tok, ':');
		if (!colon)
			exit(2);
		*colon = 0;
		if (inet_pton(AF_INET, tok, &in) != 1)
			exit(2);
		b->peers[i].phys.nid = ntohl(in.s_addr);
		b->peers[i].phys.pid = (ptl_pid_t)atoi(colon + 1);
	}
	if (i != b->size || b->rank >= b->size)
		exit(2);
}

static inline void boot_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Put one byte to target's barrier entry until it is accepted. */
static inline void boot_send(struct boot *b, ptl_process_t target)
{
	ptl_event_t ev;
	int tries;

	for (tries = 0; tries < 1500; tries++) {	/* 30 s */
		BOOT_CHECK(PtlPut(b->md, 0, 1, PTL_ACK_REQ, target, BOOT_PT, 0,
				  0, NULL, 0));
		do {
			BOOT_CHECK(PtlEQWait(b->eq, &ev));
		} while (ev.type != PTL_EVENT_ACK);
		if (ev.ni_fail_type == PTL_NI_OK)
			return;
		boot_sleep_ms(20);	/* the peer is not up yet */
	}
	fprintf(stderr, "boot: peer %u:%u never answered\n",
		(unsigned)target.phys.nid, (unsigned)target.phys.pid);
	exit(1);
}

/* Set up the barrier entry on a (logical or physical) matching NI. */
static inline void boot_init(struct boot *b, ptl_handle_ni_t ni, int logical)
{
	ptl_md_t md;
	ptl_me_t me;
	ptl_pt_index_t pt;

	b->ni = ni;
	b->logical = logical;
	BOOT_CHECK(PtlEQAlloc(ni, 64, &b->eq));
	BOOT_CHECK(PtlCTAlloc(ni, &b->ct));
	BOOT_CHECK(PtlPTAlloc(ni, 0, PTL_EQ_NONE, BOOT_PT, &pt));
	memset(&md, 0, sizeof(md));
	md.start = &b->byte;
	md.length = 1;
	md.eq_handle = b->eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	BOOT_CHECK(PtlMDBind(ni, &md, &b->md));
	memset(&me, 0, sizeof(me));
	me.start = NULL;
	me.length = 0;
	me.ct_handle = b->ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE;
	if (logical) {
		me.match_id.rank = PTL_RANK_ANY;
	} else {
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
	}
	BOOT_CHECK(PtlMEAppend(ni, BOOT_PT, &me, PTL_PRIORITY_LIST, NULL,
			       &b->me));
}

/* The id of rank i on the barrier's NI. */
static inline ptl_process_t boot_id(const struct boot *b, int i)
{
	ptl_process_t id;

	if (!b->logical)
		return b->peers[i];
	memset(&id, 0, sizeof(id));
	id.rank = (ptl_rank_t)i;
	return id;
}

/* Everyone reports to rank 0, which then releases everyone. */
static inline void boot_barrier(struct boot *b)
{
	ptl_ct_event_t ct;
	int i;

	b->rounds++;
	if (b->rank == 0) {
		BOOT_CHECK(PtlCTWait(b->ct, (ptl_size_t)b->rounds *
				     (ptl_size_t)(b->size - 1), &ct));
		for (i = 1; i < b->size; i++)
			boot_send(b, boot_id(b, i));
	} else {
		boot_send(b, boot_id(b, 0));
		BOOT_CHECK(PtlCTWait(b->ct, b->rounds, &ct));
	}
}

static inline void boot_fini(struct boot *b)
{
	BOOT_CHECK(PtlMEUnlink(b->me));
	BOOT_CHECK(PtlMDRelease(b->md));
	BOOT_CHECK(PtlPTFree(b->ni, BOOT_PT));
	BOOT_CHECK(PtlCTFree(b->ct));
	BOOT_CHECK(PtlEQFree(b->eq));
}

#endif /* PTL_BOOT_H */
