/*
 * peerkill_lib.h - what the two peer-kill programs share (run by
 * test/hostile/peerkill.sh; docs/robustness.md, rows 2 and 11):
 * test/hostile/peerkill.c kills a peer the survivor sends to,
 * test/hostile/peerkill_sender.c one that sends to the survivor. Both have
 * a survivor (server), a doomed client, a healthy client that ping-pongs
 * verified rounds with the survivor all along, and a restarted peer on
 * the doomed one's address.
 *
 * Here: the healthy client and its rounds, the survivor's view of its two
 * clients, the files peerkill.sh and the programs meet through (the
 * ready mark, the kill time, the killed peer's address), the restarted
 * peer's endpoint, and the 8 MiB stream both programs move.
 */
#ifndef PEERKILL_LIB_H
#define PEERKILL_LIB_H

#include "common.h"

#define PK_ROUND_SIZE	4000
#define PK_ROUNDS_AFTER	20
#define PK_EAGER_SIZE	16000
#define PK_TAG_HEALTHY	(1ull << 41)
#define PK_TAG_DOOMED	(1ull << 42)
#define PK_TAG_STREAM	(1ull << 43)	/* | the message's number */
#define PK_STREAM_SIZE	(8 * FX_MIB)
#define PK_STREAM_SEED	1000		/* message i: seed PK_STREAM_SEED + i */
#define PK_WAIT_US	60000000ull	/* any wait of the survivor's */

enum pk_role { PK_DOOMED = 1, PK_HEALTHY = 2 };

/* The survivor: its context, its two clients, its rounds. */
struct pk_srv {
	struct fx_ctx *ctx;
	fi_addr_t doomed, healthy;
	int healthy_oob;		/* index of the healthy one's socket */
	uint8_t *tx, *rx;		/* the rounds' buffers */
	uint64_t round;
	uint64_t bound_ms;		/* $PEERKILL_BOUND_MS */
	uint64_t t_kill;		/* wall clock (us) of the kill, or 0 */
};

/* Learns which client is which (each says its role over OOB). */
void pk_srv_init(struct pk_srv *s, struct fx_ctx *ctx);
/* The doomed client's death is the point: its OOB socket is dropped. */
void pk_srv_forget_doomed(struct pk_srv *s);
/* One verified round with the healthy client; notes the kill time. */
void pk_serve(struct pk_srv *s);
/* Tells the healthy client to stop; fx_fini then meets it alone. */
void pk_srv_fini(struct pk_srv *s);
/* The kill time from $PEERKILL_KILLED once written (also s->t_kill). */
uint64_t pk_kill_time(struct pk_srv *s);
/* Serves the healthy client until path exists (what waits for it). */
void pk_wait_file(struct pk_srv *s, const char *path, const char *what);
/*
 * Writes $PEERKILL_PORT: "<ip> <port>" of the doomed peer (peerkill.sh
 * restarts it there), then extra (a line or more, may be NULL).
 */
void pk_write_peer_file(struct pk_srv *s, const char *extra);

/* The healthy client: rounds until the survivor says stop. */
void pk_healthy(struct fx_ctx *ctx);

/* Creates path (empty): a mark peerkill.sh waits for. */
void pk_touch(const char *path);
/*
 * The survivor has a transfer with the doomed peer in flight: it prints
 * how many shared-memory segments it maps ("peerkill_segments <n>",
 * /proc/self/maps; peerkill.sh compares the count after the errors),
 * writes $PEERKILL_READY and, with $PEERKILL_KILLED set, makes no
 * provider call until the kill is done and written there (peerkill.sh
 * kills at once): nothing of its own progress can finish that transfer
 * first, so the kill lands in the middle of it every time.
 */
void pk_ready(struct pk_srv *s);
uint64_t pk_wall_us(void);

/*
 * The restarted peer's endpoint: on $PEERKILL_IP, the port from
 * FI_PORTALS_PORT_LOW/HIGH (peerkill.sh sets both to the killed peer's),
 * one CQ for both directions; no OOB.
 */
struct pk_reborn {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

void pk_reborn_open(const struct fx_opts *opts, struct pk_reborn *r);
void pk_reborn_close(struct pk_reborn *r);

/* An endpoint name as hex (out: 2 * len + 1 bytes), and back: its length. */
void pk_name_hex(const void *name, size_t len, char *out);
size_t pk_name_unhex(const char *hex, void *name, size_t cap);

#endif /* PEERKILL_LIB_H */
