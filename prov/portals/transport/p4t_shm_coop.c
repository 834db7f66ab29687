/*
 * p4t_shm_coop.c - a pull that both processes copy (behaviour: p4t_shm.h).
 *
 * Why: cross-memory attach copies on the puller's core alone, through the
 * kernel, from memory that is cold. A copy through the ring uses both
 * cores: the owner writes a chunk, the puller reads it while it is still
 * in cache. On the machines we measured (bench/notes.md) the ring moved
 * about twice the bytes per second. But the ring needs the owner to
 * progress for every chunk, and a grant does not. So the owner grants as
 * before and, while it progresses, also streams the pull's bytes through
 * the ring from the front; the puller reads by cross-memory attach from
 * the back; the pull is over where the two meet. An owner that stops
 * progressing slows nothing: the puller reads the rest alone.
 *
 * Owner: one such stream per link at a time, the oldest pull first; its
 * chunks go behind the link's other frames, so grants and messages are
 * not held back by it. It ends after its last chunk, at the puller's
 * PULL_STOP, when the exposure goes (PULL_DONE with the error) or when
 * the link fails.
 *
 * Puller: each byte is copied once. A chunk's bytes at or past the
 * meeting point are dropped, and chunks or PULL_DONEs for a pull already
 * over are ignored: ids are pool handles with a generation, so a late
 * frame never reaches a later pull. The frames carry P4T_SHM_CTL_COOP:
 * only those may name a pull that is gone; any other such frame is
 * malformed, as before.
 */
#include <config.h>

#include <rdma/fi_errno.h>

#include "p4t_shm_priv.h"

/* ---- the owner ----------------------------------------------------------------- */

/* The stream serving the peer's granted pull req of mem too, queued on
 * the link; NULL when no rma is left (the grant alone serves it). */
struct p4t_shm_rma *p4t_shm_coop_offer(struct p4t_shm_conn *conn,
				       const struct p4t_shm_ctl *req,
				       struct p4t_shm_mem *mem)
{
	struct p4t_shm_rma *rma = p4t_shm_rma_alloc(conn, P4T_SHM_RMA_STREAM,
						    NULL, 0);

	if (!rma)
		return NULL;
	rma->id = req->id;
	rma->len = req->len;
	rma->mem = mem;
	rma->mem_off = req->off;
	rma->coop = true;
	p4u_list_insert_tail(&mem->streams, &rma->link);
	p4u_list_insert_tail(&conn->coops, &rma->coop_node);
	conn->iface->stats.coop_streams++;
	return rma;
}

/*
 * The oldest stream of the link starts when none runs. drain: write what
 * the ring takes now; false where the caller is inside a drain or walks
 * a list a drain may change (the next progress call writes it).
 */
void p4t_shm_coop_next(struct p4t_shm_conn *conn, bool drain)
{
	struct p4t_shm_rma *rma;

	if (!p4t_shm_conn_live(conn) || p4u_list_empty(&conn->coops))
		return;
	rma = p4u_list_first_entry(&conn->coops, struct p4t_shm_rma,
				   coop_node);
	if (!rma->ring)
		p4t_shm_rma_stream(rma, drain);
}

/* PULL_STOP: the puller is done with the pull id; its stream ends. */
int p4t_shm_coop_stop(struct p4t_shm_conn *conn, const struct p4t_shm_ctl *ctl)
{
	struct p4t_shm_rma *rma;
	bool running;

	p4u_list_foreach_entry(&conn->coops, rma, struct p4t_shm_rma,
			       coop_node) {
		if (rma->id != ctl->id)
			continue;
		running = rma->ring;
		p4t_shm_stream_drop(rma);
		if (running)
			p4t_shm_coop_next(conn, true);
		return 0;
	}
	return 0;	/* it had ended already */
}

/* The link failed: its streams go, none answered. */
void p4t_shm_coop_fail_conn(struct p4t_shm_conn *conn)
{
	struct p4t_shm_rma *rma, *tmp;

	p4u_list_foreach_entry_safe(&conn->coops, rma, tmp, struct p4t_shm_rma,
				    coop_node)
		p4t_shm_stream_drop(rma);
}

/* ---- the puller ---------------------------------------------------------------- */

/* The owner granted rma and streams it too: read it from the back. */
void p4t_shm_coop_granted(struct p4t_shm_rma *rma)
{
	rma->coop = true;
	/* pos (0 from the grant) ends the ring's bytes; cross-memory
	 * attach reads below back */
	rma->back = rma->len;
	/* its owner progresses now: its first chunk is being written */
	rma->conn->iface->coop_quiet = 0;
	p4t_shm_cma_queue(rma);
}

/* The pull is over (status): complete it, tell the owner to stop. */
static void p4t_shm_coop_end(struct p4t_shm_rma *rma, int status)
{
	struct p4t_shm_ctl stop = {
		.id = p4t_shm_rma_id(rma),
		.flags = P4T_SHM_CTL_COOP,
	};
	struct p4t_shm_conn *conn = rma->conn;

	p4t_shm_rma_complete(rma, status);
	/* if it cannot go, the stream runs to its end, its chunks dropped */
	(void)p4t_shm_ctl_send(conn, P4T_SHM_F_PULL_STOP, &stop, NULL, 0);
}

/*
 * Read up to max bytes below where the pull's cross-memory reads stand;
 * the count read. Refused by the kernel: the link copies through the
 * ring from now on, and the owner's stream brings the rest.
 */
size_t p4t_shm_coop_step(struct p4t_shm_rma *rma, size_t max)
{
	size_t n = P4U_MIN(max, rma->back - rma->pos);
	uint64_t off = rma->back - n;
	int ret;

	ret = p4t_shm_cma_read(rma->conn, rma->iov, rma->iovcnt, off,
			       rma->granted, rma->ngranted, off, n);
	if (p4t_shm_cma_refused(ret)) {
		p4t_shm_cma_forget(rma);
		p4t_shm_cma_off(rma->conn);
		return 0;
	}
	if (ret) {
		p4t_shm_coop_end(rma, p4t_shm_cma_fail_status(ret));
		return 0;
	}
	rma->back = off;
	if (rma->pos >= rma->back)
		p4t_shm_coop_end(rma, 0);
	return n;
}

/*
 * PULL_DATA or PULL_DONE of the owner's stream for rma, or for a pull
 * that is over (rma NULL): 0, or -FI_EPROTO when it is malformed.
 */
int p4t_shm_coop_data(struct p4t_shm_conn *conn, struct p4t_shm_rma *rma,
		      uint16_t type, const struct p4t_shm_ctl *ctl,
		      const uint8_t *data, size_t n)
{
	size_t copy;

	if (!(ctl->flags & P4T_SHM_CTL_COOP) || (rma && !rma->coop))
		return -FI_EPROTO;
	if (type == P4T_SHM_F_PULL_DATA && ctl->len != n)
		return -FI_EPROTO;
	if (!rma) {
		if (type == P4T_SHM_F_PULL_DATA)
			conn->iface->stats.ring_rma_dropped += n;
		return 0;
	}
	if (type == P4T_SHM_F_PULL_DONE) {
		/* the exposure went before the two met */
		p4t_shm_rma_complete(rma, ctl->status < 0 ? ctl->status :
					  -FI_EIO);
		return 0;
	}
	if (ctl->off != rma->pos || n > rma->len - ctl->off)
		return -FI_EPROTO;
	copy = rma->back > ctl->off ? P4U_MIN(n, rma->back - ctl->off) : 0;
	p4t_shm_iov_put(rma->iov, rma->iovcnt, ctl->off, data, copy);
	conn->iface->stats.ring_rma_bytes += copy;
	conn->iface->stats.ring_rma_dropped += n - copy;
	conn->iface->coop_quiet = 0;
	rma->pos += n;
	if (rma->pos >= rma->back)
		p4t_shm_coop_end(rma, 0);
	return 0;
}
