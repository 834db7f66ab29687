/*
 * test_eng_local.c - an NI's sizes follow the transport of each peer's
 * link: two NIs in processes of their own (own domains) on TCP, with the
 * shared-memory transport beside it, so that their link is on shm. A put
 * up to local_eager_size goes eagerly to such a peer (nothing pulled),
 * one above it by rendezvous; a put up to local_copy_size is copied (its
 * SEND comes before the target has done anything). The NI's own eager
 * size, in which its limits are given, is the least of the two.
 *
 * Not here: the shm transport itself (test_shm*.c), protocols over one
 * transport (test_eng_put.c).
 */
#include <config.h>

#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "p4e_test.h"
#include "p4e_priv.h"
#include "p4t_shm.h"
#include "p4t_tcp.h"

#define LEN	((size_t)32 << 10)	/* between the two eager sizes */
#define NET_EAGER	4096

static struct eng_node na, nb;
static uint8_t src[LEN], dst[LEN];

static void local_teardown(void)
{
	eng_node_close(&na);
	eng_node_close(&nb);
}

TestSuite(eng_local, .fini = local_teardown, .timeout = 60);

/* Two NIs, each in a domain of its own, TCP with shm beside it. */
static void open_pair(size_t local_eager, size_t local_copy)
{
	static struct sockaddr_in lo;
	struct p4e_ni_attr attr;
	struct eng_node *n[2] = { &na, &nb };
	int i;

	lo.sin_family = AF_INET;
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL;
		attr.transport = &p4t_tcp_ops;
		attr.local_transport = &p4t_shm_ops;
		attr.addr = &lo;
		attr.addrlen = sizeof(lo);
		attr.uid = 3000;
		attr.eager_size = NET_EAGER;
		attr.local_eager_size = local_eager;
		attr.local_copy_size = local_copy;
		eng_node_open(n[i], NULL, &attr, 0, 64);
		if (!n[i]->ni->xp[P4E_XP_LOCAL].iface)
			cr_skip_test("the shm transport did not open here");
	}
}

static struct p4t_shm_stats shm_stats(struct eng_node *n)
{
	struct p4t_shm_stats st;

	cr_assert_eq(p4t_shm_stats(n->ni->xp[P4E_XP_LOCAL].iface, &st), 0);
	return st;
}

/* A put of LEN bytes from na to a use-once entry on nb. */
static void put_len(void)
{
	struct p4e_md_desc md = {
		.start = src, .length = LEN, .eq = na.eq, .ct = P4E_HANDLE_NONE,
	};
	struct p4e_me_desc me = {
		.start = dst, .length = LEN, .ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY, .match_id = P4E_ID_ANY, .match_bits = 7,
		.options = P4E_ME_OP_PUT | P4E_ME_USE_ONCE |
			   P4E_ME_EVENT_LINK_DISABLE,
	};
	struct p4e_xfer x = {
		.length = LEN, .ack_req = P4E_NO_ACK_REQ,
		.target = eng_peer_of(na.dom, nb.ni), .pt_index = nb.pt,
		.match_bits = 7, .get_md = P4E_HANDLE_NONE,
	};
	uint64_t mdh, meh;
	size_t i;

	for (i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 9));
	memset(dst, 0, sizeof(dst));
	cr_assert_eq(p4e_me_append(nb.ni, nb.pt, &me, P4E_PRIORITY_LIST, NULL,
				   0, &meh), 0);
	cr_assert_eq(p4e_md_bind(na.ni, &md, &mdh), 0);
	x.md = mdh;
	cr_assert_eq(p4e_put(na.ni, &x), 0);
}

/*
 * Progress both until eq has an event other than AUTO_UNLINK (10 s at
 * most): a rendezvous needs the initiator too (it serves the pull).
 */
static struct p4e_event await_both(struct p4e_eq *eq)
{
	uint64_t t0 = eng_now_ms();
	struct p4e_event ev;
	int ret;

	do {
		while ((ret = p4e_eq_ring_get(eq, &ev)) == -FI_EAGAIN &&
		       eng_now_ms() - t0 < 10000) {
			p4e_dom_progress(na.dom, 64);
			p4e_dom_progress(nb.dom, 64);
		}
		cr_assert_eq(ret, 0, "no event within 10 s");
	} while (ev.type == P4E_EVENT_AUTO_UNLINK);
	return ev;
}

/* nb has the put, all of its data. */
static void delivered(void)
{
	struct p4e_event ev = await_both(nb.eq);

	cr_assert_eq(ev.type, P4E_EVENT_PUT);
	cr_assert_eq(ev.ni_fail_type, P4E_NI_OK);
	cr_assert_eq(ev.mlength, LEN);
	cr_assert_eq(memcmp(dst, src, LEN), 0, "the data differs");
}

/* na has the SEND of its put. */
static void sent(void)
{
	struct p4e_event ev = await_both(na.eq);

	cr_assert_eq(ev.type, P4E_EVENT_SEND);
	cr_assert_eq(ev.ni_fail_type, P4E_NI_OK);
}

/* A pair with these sizes, and a first put over their shm link. */
static void first_put(size_t local_eager, size_t local_copy)
{
	open_pair(local_eager, local_copy);
	put_len();
	delivered();
	cr_expect_eq(na.ni->sr[P4E_SR_LINKS_LOCAL], 1, "not a shm link");
}

Test(eng_local, sizes_of_each_transport)
{
	open_pair(65536, 65536);
	cr_expect_eq(na.ni->xp[P4E_XP_NET].eager_size, NET_EAGER);
	cr_expect_eq(na.ni->xp[P4E_XP_LOCAL].eager_size, 65536);
	cr_expect_eq(na.ni->xp[P4E_XP_LOCAL].copy_size, 65536);
	/* limits are given in the least: a net peer's atomics must fit */
	cr_expect_eq(na.ni->eager_size, NET_EAGER);
	cr_expect_eq(na.ni->copy_size, 65536);
	eng_node_close(&na);
	eng_node_close(&nb);
	/* 0: as the network transport */
	open_pair(0, 0);
	cr_expect_eq(na.ni->xp[P4E_XP_LOCAL].eager_size, NET_EAGER);
	cr_expect_eq(na.ni->xp[P4E_XP_LOCAL].copy_size,
		     na.ni->xp[P4E_XP_NET].copy_size);
}

/* Above the network's eager size, within the local one: sent eagerly
 * over shm, nothing pulled. */
Test(eng_local, eager_up_to_the_local_size)
{
	first_put(65536, 0);
	cr_expect_eq(shm_stats(&nb).pulls, 0, "a pull: not eager");
	cr_expect_lt(shm_stats(&nb).cma_bytes, LEN, "%" PRIu64 " bytes by CMA",
		     shm_stats(&nb).cma_bytes);
	cr_expect_geq(shm_stats(&nb).bytes_recv, LEN);
}

/* The same put with the local eager size below it: rendezvous. */
Test(eng_local, rendezvous_above_the_local_size)
{
	first_put(8192, 0);
	cr_expect_geq(shm_stats(&nb).pulls, 1, "no pull: not a rendezvous");
}

/*
 * Copied up to local_copy_size: the SEND comes as the put goes into the
 * ring, before the target has progressed at all (first message included:
 * the link is made first, by a put both sides see through).
 */
Test(eng_local, copied_up_to_the_local_copy_size)
{
	struct p4e_event ev;

	first_put(65536, 65536);
	sent();
	put_len();
	p4e_dom_progress(na.dom, 64);
	ev = eng_eq_event(na.eq);
	cr_expect_eq(ev.type, P4E_EVENT_SEND);
	cr_expect_eq(ev.ni_fail_type, P4E_NI_OK);
	delivered();
}

/* Not copied (local_copy_size at the default): the SEND waits for the
 * target to accept the put. */
Test(eng_local, not_copied_waits_for_the_target)
{
	struct p4e_event ev;

	first_put(65536, 0);
	sent();
	put_len();
	p4e_dom_progress(na.dom, 64);
	cr_expect_eq(p4e_eq_ring_get(na.eq, &ev), -FI_EAGAIN,
		     "a SEND (type %d) before the target took the put",
		     ev.type);
	delivered();
	sent();
}
