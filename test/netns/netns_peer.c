/*
 * netns_peer.c - one end of the multi-host test (test/netns/run.sh): a
 * Portals engine NI over the TCP transport, run in a network namespace of
 * its own, exchanging an eager put, a rendezvous put and a large get with
 * the other end, checking every byte.
 *
 *   netns_peer target    <listen-ip> <port> <ready-file>
 *   netns_peer initiator <listen-ip> <port> <target-ip> <target-port>
 *   netns_peer serve     <listen-ip> <port> <ready-file>
 *   netns_peer cut       <listen-ip> <port> <target-ip> <target-port>
 *                        <ready-file> <go-file>
 *
 * serve / cut test a silent link cut: cut puts once (acked), writes
 * ready-file, waits for go-file (run.sh drops every packet meanwhile),
 * then puts again: that put must fail, within peer_timeout_ms (3 s here)
 * plus slack, because its data is never acknowledged (TCP_USER_TIMEOUT).
 *
 * The target appends three entries (bits 1: eager puts, 2: rendezvous
 * puts, 3: get source), writes ready-file once listening, waits for the
 * three events, then keeps progressing a moment so its responses leave.
 * The initiator sends, waits for its ACKs and REPLY, checks the get data.
 * Exit 0 on success, 1 on a failed check or timeout, 77 when run without
 * arguments (so a test harness that runs every check program skips it).
 */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p4e.h"
#include "p4t.h"

#define NP_EAGER	1000
#define NP_RDZV		(1u << 20)
#define NP_GET		(3u << 20)
#define NP_EAGER_SIZE	4096
#define NP_TIMEOUT_MS	20000

static uint8_t np_buf[3][NP_GET];

static uint64_t np_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint8_t np_pattern(int which, size_t i)
{
	return (uint8_t)(which * 71 + i * 13 + (i >> 10));
}

static void np_fill(uint8_t *buf, size_t len, int which)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = np_pattern(which, i);
}

static int np_check(const uint8_t *buf, size_t len, int which,
		    const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != np_pattern(which, i)) {
			fprintf(stderr, "netns_peer: %s: byte %zu differs\n",
				what, i);
			return 1;
		}
	}
	return 0;
}

struct np_node {
	struct p4e_dom *dom;
	struct p4e_ni *ni;
	struct p4e_eq *eq;
	uint32_t pt;
};

static uint64_t np_peer_timeout_ms = 10000;

static int np_open(struct np_node *n, const char *ip, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct p4e_ni_attr attr = {
		.options = P4E_NI_MATCHING | P4E_NI_PHYSICAL,
		.transport = &p4t_tcp_ops,
		.addr = &sin,
		.addrlen = sizeof(sin),
		.eager_size = NP_EAGER_SIZE,
		.peer_timeout_ms = np_peer_timeout_ms,
	};

	sin.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return -1;
	if (p4e_dom_create(NULL, &n->dom) ||
	    p4e_ni_create(n->dom, &attr, &n->ni) ||
	    p4e_eq_ring_create(256, &n->eq) ||
	    p4e_pt_alloc(n->ni, 0, n->eq, 0, &n->pt))
		return -1;
	return 0;
}

static void np_close(struct np_node *n)
{
	p4e_ni_destroy(n->ni);
	p4e_eq_ring_destroy(n->eq);
	p4e_dom_destroy(n->dom);
}

/* Progress until an event arrives; its type, or -1 on timeout. */
static int np_wait_event(struct np_node *n, struct p4e_event *ev)
{
	uint64_t t0 = np_now_ms();
	int ret;

	while (np_now_ms() - t0 < NP_TIMEOUT_MS) {
		ret = p4e_eq_ring_get(n->eq, ev);
		if (ret == 0) {
			if (ev->ni_fail_type != P4E_NI_OK) {
				fprintf(stderr, "netns_peer: event %d failed "
					"(%d)\n", ev->type, ev->ni_fail_type);
				return -1;
			}
			return ev->type;
		}
		p4e_dom_progress(n->dom, 64);
	}
	fprintf(stderr, "netns_peer: timed out waiting for an event\n");
	return -1;
}

static int np_append(struct np_node *n, void *buf, size_t len, unsigned op,
		     uint64_t bits)
{
	struct p4e_me_desc d = {
		.start = buf, .length = len, .ct = P4E_HANDLE_NONE,
		.uid = P4E_UID_ANY, .options = op, .match_id = P4E_ID_ANY,
		.match_bits = bits,
	};
	struct p4e_event ev;
	uint64_t me;

	if (p4e_me_append(n->ni, n->pt, &d, P4E_PRIORITY_LIST, NULL, 0, &me))
		return -1;
	return np_wait_event(n, &ev) == P4E_EVENT_LINK ? 0 : -1;
}

static int np_target(const char *ip, const char *port, const char *ready)
{
	struct np_node n;
	struct p4e_event ev;
	int i, puts = 0, gets = 0;
	uint64_t t0;
	FILE *f;

	np_fill(np_buf[2], NP_GET, 3);
	if (np_open(&n, ip, port) ||
	    np_append(&n, np_buf[0], NP_EAGER, P4E_ME_OP_PUT, 1) ||
	    np_append(&n, np_buf[1], NP_RDZV, P4E_ME_OP_PUT, 2) ||
	    np_append(&n, np_buf[2], NP_GET, P4E_ME_OP_GET, 3))
		return 1;
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fclose(f);
	for (i = 0; i < 3; i++) {
		switch (np_wait_event(&n, &ev)) {
		case P4E_EVENT_PUT:
			puts++;
			break;
		case P4E_EVENT_GET:
			gets++;
			break;
		default:
			return 1;
		}
	}
	if (puts != 2 || gets != 1 ||
	    np_check(np_buf[0], NP_EAGER, 1, "eager put") ||
	    np_check(np_buf[1], NP_RDZV, 2, "rendezvous put"))
		return 1;
	/* let the last responses leave before the sockets close */
	for (t0 = np_now_ms(); np_now_ms() - t0 < 1000;)
		p4e_dom_progress(n.dom, 64);
	np_close(&n);
	printf("netns_peer target: eager put, rendezvous put, get: ok\n");
	return 0;
}

static int np_xfer(struct np_node *n, int get, uint64_t md, size_t len,
		   uint64_t bits, uint32_t target)
{
	struct p4e_xfer x = {
		.md = md, .length = len, .ack_req = P4E_ACK_REQ,
		.target = target, .pt_index = 0, .match_bits = bits,
		.get_md = P4E_HANDLE_NONE,
	};

	return get ? p4e_get(n->ni, &x) : p4e_put(n->ni, &x);
}

static int np_initiator(const char *ip, const char *port, const char *tip,
			const char *tport)
{
	struct sockaddr_in tsin = { .sin_family = AF_INET };
	struct p4e_md_desc d = { .length = NP_GET };
	int want[3] = { 0 }, i;	/* SEND, ACK, REPLY */
	struct p4e_event ev;
	struct np_node n;
	uint64_t md[3];
	uint32_t target;

	tsin.sin_port = htons((uint16_t)atoi(tport));
	if (inet_pton(AF_INET, tip, &tsin.sin_addr) != 1 ||
	    np_open(&n, ip, port) ||
	    p4e_peer_lookup(n.dom, &tsin, sizeof(tsin), &target))
		return 1;
	np_fill(np_buf[0], NP_EAGER, 1);
	np_fill(np_buf[1], NP_RDZV, 2);
	memset(np_buf[2], 0, NP_GET);
	for (i = 0; i < 3; i++) {
		d.start = np_buf[i];
		d.eq = n.eq;
		if (p4e_md_bind(n.ni, &d, &md[i]))
			return 1;
	}
	if (np_xfer(&n, 0, md[0], NP_EAGER, 1, target) ||
	    np_xfer(&n, 0, md[1], NP_RDZV, 2, target) ||
	    np_xfer(&n, 1, md[2], NP_GET, 3, target))
		return 1;
	/* two puts: SEND + ACK each; the get: REPLY */
	for (i = 0; i < 5; i++) {
		switch (np_wait_event(&n, &ev)) {
		case P4E_EVENT_SEND:
			want[0]++;
			break;
		case P4E_EVENT_ACK:
			want[1]++;
			break;
		case P4E_EVENT_REPLY:
			want[2]++;
			break;
		default:
			fprintf(stderr, "netns_peer: initiator saw %d send, "
				"%d ack, %d reply events\n", want[0], want[1],
				want[2]);
			return 1;
		}
	}
	if (want[0] != 2 || want[1] != 2 || want[2] != 1 ||
	    np_check(np_buf[2], NP_GET, 3, "get"))
		return 1;
	np_close(&n);
	printf("netns_peer initiator: 2 puts acked, %u bytes got: ok\n",
	       NP_GET);
	return 0;
}

/* Append bits 1 and progress until killed (or a minute passes). */
static int np_serve(const char *ip, const char *port, const char *ready)
{
	struct np_node n;
	uint64_t t0 = np_now_ms();
	struct p4e_event ev;
	FILE *f;

	if (np_open(&n, ip, port) ||
	    np_append(&n, np_buf[0], NP_EAGER, P4E_ME_OP_PUT, 1))
		return 1;
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fclose(f);
	while (np_now_ms() - t0 < 60000) {
		p4e_dom_progress(n.dom, 64);
		(void)p4e_eq_ring_get(n.eq, &ev);
	}
	return 0;
}

static int np_file_wait(const char *path)
{
	uint64_t t0 = np_now_ms();
	FILE *f;

	while (np_now_ms() - t0 < NP_TIMEOUT_MS) {
		f = fopen(path, "r");
		if (f) {
			fclose(f);
			return 0;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	return -1;
}

/* Wait for the put's ACK; its failure kind, or -1 on timeout. */
static int np_ack_fail(struct np_node *n, uint64_t limit_ms)
{
	uint64_t t0 = np_now_ms();
	struct p4e_event ev;

	while (np_now_ms() - t0 < limit_ms) {
		if (!p4e_eq_ring_get(n->eq, &ev) && ev.type == P4E_EVENT_ACK)
			return ev.ni_fail_type;
		p4e_dom_progress(n->dom, 64);
	}
	return -1;
}

static int np_cut(char **argv)
{
	struct sockaddr_in tsin = { .sin_family = AF_INET };
	struct p4e_md_desc d = { .start = np_buf[0], .length = NP_EAGER };
	struct np_node n;
	uint32_t target;
	uint64_t md, t0;
	FILE *f;
	int fail;

	np_peer_timeout_ms = 3000;
	tsin.sin_port = htons((uint16_t)atoi(argv[5]));
	if (inet_pton(AF_INET, argv[4], &tsin.sin_addr) != 1 ||
	    np_open(&n, argv[2], argv[3]) ||
	    p4e_peer_lookup(n.dom, &tsin, sizeof(tsin), &target))
		return 1;
	d.eq = n.eq;
	if (p4e_md_bind(n.ni, &d, &md) ||
	    np_xfer(&n, 0, md, NP_EAGER, 1, target) ||
	    np_ack_fail(&n, NP_TIMEOUT_MS) != P4E_NI_OK)
		return 1;
	f = fopen(argv[6], "w");
	if (!f)
		return 1;
	fclose(f);
	if (np_file_wait(argv[7]))
		return 1;
	t0 = np_now_ms();
	if (np_xfer(&n, 0, md, NP_EAGER, 1, target))
		return 1;
	fail = np_ack_fail(&n, np_peer_timeout_ms + 10000);
	if (fail <= P4E_NI_OK) {
		fprintf(stderr, "netns_peer cut: put %s after the cut\n",
			fail ? "not failed in time" : "succeeded");
		return 1;
	}
	printf("netns_peer cut: link failure seen after %llu ms "
	       "(peer_timeout 3000 ms)\n",
	       (unsigned long long)(np_now_ms() - t0));
	np_close(&n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "target"))
		return np_target(argv[2], argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "initiator"))
		return np_initiator(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return np_serve(argv[2], argv[3], argv[4]);
	if (argc == 8 && !strcmp(argv[1], "cut"))
		return np_cut(argv);
	fprintf(stderr, "usage: %s target <ip> <port> <ready-file>\n"
		"       %s initiator <ip> <port> <target-ip> <target-port>\n"
		"       %s serve <ip> <port> <ready-file>\n"
		"       %s cut <ip> <port> <target-ip> <target-port> "
		"<ready-file> <go-file>\n"
		"(run by test/netns/run.sh)\n", argv[0], argv[0], argv[0],
		argv[0]);
	return 77;
}
