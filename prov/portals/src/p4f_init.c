/*
 * p4f_init.c - the plug-in entry point: the struct fi_provider libfabric
 * loads, the FI_PORTALS_* parameters, and the log sink that forwards the
 * engine's and transports' messages to fi_log.
 */
#include <config.h>

#include <errno.h>

#include "p4f.h"
#include "p4u_log.h"
#include "p4f_param.h"

/*
 * util returns errno values (-EINVAL, -ENOMEM, -ENOSPC) where its callers,
 * up to the application, compare with -FI_E*: the two must be one number.
 */
_Static_assert(FI_EINVAL == EINVAL, "util's -EINVAL must be -FI_EINVAL");
_Static_assert(FI_ENOMEM == ENOMEM, "util's -ENOMEM must be -FI_ENOMEM");
_Static_assert(FI_ENOSPC == ENOSPC, "util's -ENOSPC must be -FI_ENOSPC");

/* Defaults, used by the table below and by the static initialiser (the
 * copy of the provider linked into unit tests never runs fi_prov_ini). */
#define P4F_DEF_EAGER_SIZE	16384
#define P4F_DEF_SHM_EAGER_SIZE	65536
#define P4F_DEF_RDZV_CHUNK	262144
#define P4F_DEF_RDZV_OFFER	262144
#define P4F_DEF_ACK_DELAY_US	1000
#define P4F_DEF_INJECT_SIZE	4096
#define P4F_DEF_CQ_SIZE		4096
#define P4F_DEF_TX_SIZE		4096
#define P4F_DEF_RX_SIZE		65536
#define P4F_DEF_OFLOW_BUF_SIZE	(256 << 10)
#define P4F_DEF_OFLOW_BUF_COUNT	16
#define P4F_DEF_UNEXP_MAX	(2 << 20)
#define P4F_DEF_TX_HELD_MAX	(2 << 20)
#define P4F_DEF_TX_COPY_MEM	(256 << 20)
#define P4F_DEF_PEER_TIMEOUT	30000
#define P4F_DEF_CONNECT_RETRY	2000
#define P4F_DEF_LINGER		2000

struct p4f_params p4f_params = {
	.eager_size = P4F_DEF_EAGER_SIZE,
	.rdzv_chunk = P4F_DEF_RDZV_CHUNK,
	.rdzv_offer = P4F_DEF_RDZV_OFFER,
	.inject_size = P4F_DEF_INJECT_SIZE,
	.cq_size = P4F_DEF_CQ_SIZE,
	.tx_size = P4F_DEF_TX_SIZE,
	.rx_size = P4F_DEF_RX_SIZE,
	.oflow_buf_size = P4F_DEF_OFLOW_BUF_SIZE,
	.oflow_buf_count = P4F_DEF_OFLOW_BUF_COUNT,
	.unexp_max = P4F_DEF_UNEXP_MAX,
	.tx_held_max = P4F_DEF_TX_HELD_MAX,
	.tx_copy_mem = P4F_DEF_TX_COPY_MEM,
	.peer_timeout_ms = P4F_DEF_PEER_TIMEOUT,
	.connect_retry_ms = P4F_DEF_CONNECT_RETRY,
	.linger_ms = P4F_DEF_LINGER,
	.ack_delay_us = P4F_DEF_ACK_DELAY_US,
	.shm_eager_size = P4F_DEF_SHM_EAGER_SIZE,
};

/*
 * Every tunable, once. Defaults here are the ones the man page documents
 * (man/fi_portals.7.md); `fi_info -e -p portals` lists them.
 */
static const struct p4f_param p4f_param_table[] = {
	{ "iface", P4F_PARAM_STR,
	  "Only use this network interface (e.g. eth0) instead of every "
	  "usable one",
	  { .str = NULL }, &p4f_params.iface, 0, 0 },
	{ "port_low", P4F_PARAM_SIZE,
	  "Lowest TCP port an endpoint listens on (0 = any port)",
	  { .size = 0 }, &p4f_params.port_low, 0, 65535 },
	{ "port_high", P4F_PARAM_SIZE,
	  "Highest TCP port an endpoint listens on (0 = any port)",
	  { .size = 0 }, &p4f_params.port_high, 0, 65535 },
	{ "eager_size", P4F_PARAM_SIZE,
	  "Largest message sent eagerly; larger ones use rendezvous",
	  { .size = P4F_DEF_EAGER_SIZE }, &p4f_params.eager_size, 0, 1 << 20 },
	{ "rdzv_chunk", P4F_PARAM_SIZE,
	  "Rendezvous pull chunk, so large transfers interleave with small ones",
	  { .size = P4F_DEF_RDZV_CHUNK }, &p4f_params.rdzv_chunk, 4096, 1 << 30 },
	{ "rdzv_offer", P4F_PARAM_SIZE,
	  "TCP: rendezvous messages up to this size (at most the chunk) send "
	  "their data right behind the header, placed without a round trip "
	  "when a receive matches (dropped, then pulled, when none does); "
	  "0 = never",
	  { .size = P4F_DEF_RDZV_OFFER }, &p4f_params.rdzv_offer, 0, 1 << 30 },
	{ "inject_size", P4F_PARAM_SIZE,
	  "Largest payload fi_inject and friends accept",
	  { .size = P4F_DEF_INJECT_SIZE }, &p4f_params.inject_size, 0, 1 << 16 },
	{ "cq_size", P4F_PARAM_SIZE,
	  "Default CQ depth when the application gives none",
	  { .size = P4F_DEF_CQ_SIZE }, &p4f_params.cq_size, 1, 1 << 24 },
	{ "tx_size", P4F_PARAM_SIZE,
	  "Transmit context depth (outstanding sends per endpoint)",
	  { .size = P4F_DEF_TX_SIZE }, &p4f_params.tx_size, 1, 1 << 24 },
	{ "rx_size", P4F_PARAM_SIZE,
	  "Receive context depth (posted receives per endpoint)",
	  { .size = P4F_DEF_RX_SIZE }, &p4f_params.rx_size, 1, 1 << 24 },
	{ "oflow_buf_size", P4F_PARAM_SIZE,
	  "Size of one overflow buffer for unexpected eager data",
	  { .size = P4F_DEF_OFLOW_BUF_SIZE }, &p4f_params.oflow_buf_size, 65536, 1 << 30 },
	{ "oflow_buf_count", P4F_PARAM_SIZE,
	  "Overflow buffers per receive portal (tagged and untagged each); "
	  "beyond them flow control holds senders",
	  { .size = P4F_DEF_OFLOW_BUF_COUNT }, &p4f_params.oflow_buf_count, 1, 1 << 20 },
	{ "unexp_max", P4F_PARAM_SIZE,
	  "Unexpected messages an endpoint keeps (their headers; their data "
	  "too while the overflow buffers have room, else the sender keeps "
	  "it); beyond them flow control holds the sender that sent more "
	  "until receives consume some (logged once)",
	  { .size = P4F_DEF_UNEXP_MAX }, &p4f_params.unexp_max, 1024, 1 << 24 },
	{ "tx_held_max", P4F_PARAM_SIZE,
	  "Completed sends an endpoint keeps a copy of until their targets "
	  "take the data (small sends and injects complete at once); beyond "
	  "them sends are not copied and complete when accepted, and "
	  "injects return -FI_EAGAIN (logged once)",
	  { .size = P4F_DEF_TX_HELD_MAX }, &p4f_params.tx_held_max, 1024,
	  1 << 24 },
	{ "tx_copy_mem", P4F_PARAM_SIZE,
	  "Bytes the copies of an endpoint's sends may take (each sized to "
	  "its payload); beyond them as beyond FI_PORTALS_TX_HELD_MAX",
	  { .size = P4F_DEF_TX_COPY_MEM }, &p4f_params.tx_copy_mem, 1 << 20,
	  (size_t)1 << 40 },
	{ "peer_timeout", P4F_PARAM_SIZE,
	  "Milliseconds without progress after which a peer is declared dead",
	  { .size = P4F_DEF_PEER_TIMEOUT }, &p4f_params.peer_timeout_ms, 100, 3600000 },
	{ "connect_retry_ms", P4F_PARAM_SIZE,
	  "Milliseconds a connect the peer's host refuses (nothing listens "
	  "yet) is retried before the operations to it fail with "
	  "FI_ECONNREFUSED (at most the peer timeout)",
	  { .size = P4F_DEF_CONNECT_RETRY }, &p4f_params.connect_retry_ms,
	  20, 3600000 },
	{ "linger_ms", P4F_PARAM_SIZE,
	  "Milliseconds fi_close of an endpoint waits for what it still "
	  "owes its peers (sends completed or queued, not yet accepted by "
	  "the target) to be delivered; 0 = do not wait",
	  { .size = P4F_DEF_LINGER }, &p4f_params.linger_ms, 0, 600000 },
	{ "progress_thread", P4F_PARAM_BOOL,
	  "Run a progress thread per domain even when the application asked "
	  "for manual progress",
	  { .bval = 0 }, &p4f_params.progress_thread, 0, 0 },
	{ "stats", P4F_PARAM_BOOL,
	  "Print each endpoint's statistics to stderr when it closes: its "
	  "links to peers per transport (shm, network) and its status "
	  "registers (drops, violations, flow control)",
	  { .bval = 0 }, &p4f_params.stats, 0, 0 },
	{ "shm", P4F_PARAM_BOOL,
	  "Shared memory for peers on this host (the same kernel, network, "
	  "PID and user namespaces, the same user); the others use the "
	  "transport. 0: every peer uses the transport",
	  { .bval = 1 }, &p4f_params.shm, 0, 0 },
	/* read by the shm transport itself at iface_open (p4t_shm.h) */
	{ "shm_cma", P4F_PARAM_BOOL,
	  "Read rendezvous and RMA data between processes of one host by "
	  "cross-memory attach where the kernel allows it (rendezvous sends "
	  "and RMA writes together with the sender's copy through the "
	  "ring); 0: always through the shared-memory rings",
	  { .bval = 1 }, &p4f_params.shm_cma, 0, 0 },
	{ "shm_eager_size", P4F_PARAM_SIZE,
	  "Largest message sent eagerly to a peer on shared memory (copied "
	  "through the ring; larger ones use rendezvous)",
	  { .size = P4F_DEF_SHM_EAGER_SIZE }, &p4f_params.shm_eager_size, 0,
	  1 << 20 },
	{ "transport", P4F_PARAM_STR,
	  "Transport: auto (RDMA verbs ports when there are any, then tcp), "
	  "tcp, verbs, or loop (in-process only, for the provider's own "
	  "tests)",
	  { .str = "auto" }, &p4f_params.transport, 0, 0 },
	{ "ack_delay_us", P4F_PARAM_SIZE,
	  "Microseconds a receiver may hold back the acknowledgement of "
	  "messages whose sender does not wait for it (small, copied "
	  "sends), hoping to send it with a reply; 0 acknowledges every "
	  "message at once",
	  { .size = P4F_DEF_ACK_DELAY_US }, &p4f_params.ack_delay_us, 0,
	  1000000 },
};

static void p4f_cleanup(void)
{
	p4u_log_set_sink(NULL, NULL);
}

struct fi_provider p4f_prov = {
	.name = P4F_PROV_NAME,
	.version = P4F_PROV_VERSION,
	.fi_version = P4F_FI_VERSION,
	.getinfo = p4f_getinfo,
	.fabric = p4f_fabric_open,
	.cleanup = p4f_cleanup,
};

/* Engine and transport subsystems map onto libfabric's. */
static enum fi_log_subsys p4f_log_subsys(enum p4u_log_subsys subsys)
{
	switch (subsys) {
	case P4U_LOG_ENGINE:
	case P4U_LOG_TRANSPORT:
	case P4U_LOG_WIRE:
		return FI_LOG_EP_DATA;
	case P4U_LOG_CORE:
	default:
		return FI_LOG_CORE;
	}
}

static bool p4f_log_enabled(enum p4u_log_level level,
			    enum p4u_log_subsys subsys)
{
	return fi_log_enabled(&p4f_prov, (enum fi_log_level)level,
			      p4f_log_subsys(subsys));
}

static void p4f_log_write(enum p4u_log_level level, enum p4u_log_subsys subsys,
			  const char *func, int line, const char *msg)
{
	fi_log(&p4f_prov, (enum fi_log_level)level, p4f_log_subsys(subsys),
	       func, line, "%s\n", msg);
}

FI_EXT_INI
{
	if (p4f_param_define_all(&p4f_prov, p4f_param_table,
				 P4U_ARRAY_SIZE(p4f_param_table)))
		return NULL;
	p4f_param_load_all(&p4f_prov, p4f_param_table,
			   P4U_ARRAY_SIZE(p4f_param_table));
	if (p4f_params.port_high < p4f_params.port_low) {
		FI_WARN(&p4f_prov, FI_LOG_CORE,
			"FI_PORTALS_PORT_HIGH (%zu) < FI_PORTALS_PORT_LOW (%zu): "
			"ignoring the port range\n",
			p4f_params.port_high, p4f_params.port_low);
		p4f_params.port_low = p4f_params.port_high = 0;
	}
	p4u_log_set_sink(p4f_log_enabled, p4f_log_write);
	return &p4f_prov;
}
