/*
 * p4f_attr.h - what p4f_attr.c (the template and the checks) and
 * p4f_attr_alter.c (narrowing a returned info) share: the capability sets,
 * operation flags and ceilings the provider offers, and the mr_mode rules.
 * Private to those two files.
 */
#ifndef P4F_ATTR_H
#define P4F_ATTR_H

#include "p4f.h"

/* ---- capabilities ------------------------------------------------------ */

/*
 * Everything the provider can do today, in one place. It grows as the data
 * path lands: FI_MSG | FI_SEND | FI_RECV with messaging, FI_TAGGED |
 * FI_DIRECTED_RECV with tagged messaging, FI_RMA | FI_READ | FI_WRITE |
 * FI_REMOTE_READ | FI_REMOTE_WRITE with RMA, FI_ATOMIC with atomics,
 * FI_TRIGGER with triggered operations, FI_MULTI_RECV and FI_SOURCE when
 * they are implemented. Tx, rx and domain caps and the op flags below are
 * derived from it; nothing else changes when it grows.
 */
#define P4F_CAPS		(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | \
				 FI_DIRECTED_RECV | FI_MULTI_RECV | FI_SOURCE | \
				 FI_LOCAL_COMM | FI_REMOTE_COMM | FI_TRIGGER | \
				 P4F_CAPS_ONE_SIDED)
/* p4f_rma.c, p4f_atomic.c, p4f_mr.c, p4f_sink_rma.c */
#define P4F_CAPS_ONE_SIDED	(FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | \
				 FI_REMOTE_READ | FI_REMOTE_WRITE | \
				 FI_RMA_EVENT | FI_FENCE)
/*
 * Atomics are applied at the target one message at a time in the order
 * sent, and a fetch's old values are copied out before the next one is
 * applied, so every atomic ordering holds up to the largest atomic
 * (max_order_*_size = FI_PORTALS_EAGER_SIZE). RMA reads and writes make
 * no ordering claim: a large write is pulled by the target after later
 * messages may have been applied.
 */
#define P4F_MSG_ORDER		(FI_ORDER_SAS | FI_ORDER_ATOMIC_RAR | \
				 FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | \
				 FI_ORDER_ATOMIC_WAW)

/*
 * fi_getinfo(3) sorts capabilities into primary ones, primary modifiers
 * (restrict a primary capability to a direction) and secondary ones. A
 * provider enables only the primary capabilities asked for, and may report
 * secondary ones it has. Everything not listed here is secondary.
 */
#define P4F_CAPS_PRIMARY	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
				 FI_MULTICAST | FI_NAMED_RX_CTX | \
				 FI_DIRECTED_RECV | FI_VARIABLE_MSG | \
				 FI_HMEM | FI_COLLECTIVE)
#define P4F_CAPS_MSG_DIR	(FI_SEND | FI_RECV)
#define P4F_CAPS_RMA_DIR	(FI_READ | FI_WRITE | FI_REMOTE_READ | \
				 FI_REMOTE_WRITE)
#define P4F_CAPS_SELECTED	(P4F_CAPS_PRIMARY | P4F_CAPS_MSG_DIR | \
				 P4F_CAPS_RMA_DIR)

/* Which capabilities a transmit context, a receive context and a domain
 * carry (fi_endpoint(3) "caps", fi_domain(3) "caps"). */
#define P4F_CAPS_TX		(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
				 FI_MULTICAST | FI_NAMED_RX_CTX | FI_HMEM | \
				 FI_COLLECTIVE | FI_SEND | FI_READ | \
				 FI_WRITE | FI_TRIGGER | FI_FENCE | \
				 FI_RMA_PMEM)
#define P4F_CAPS_RX		(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
				 FI_DIRECTED_RECV | FI_VARIABLE_MSG | \
				 FI_HMEM | FI_COLLECTIVE | FI_RECV | \
				 FI_REMOTE_READ | FI_REMOTE_WRITE | \
				 FI_MULTI_RECV | FI_TRIGGER | FI_RMA_PMEM | \
				 FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR)
#define P4F_CAPS_DOMAIN		(FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV)

#define P4F_CAPS_DATA		(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC)

/*
 * Default operation flags an application may ask for: the completion
 * levels docs/design.md §3.4 defines, FI_INJECT once some operation can inject,
 * FI_MULTI_RECV with the capability.
 */
#define P4F_TX_OP_FLAGS		(FI_COMPLETION | FI_INJECT_COMPLETE | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
				 ((P4F_CAPS & P4F_CAPS_DATA) ? FI_INJECT : 0))
#define P4F_RX_OP_FLAGS		(FI_COMPLETION | \
				 ((P4F_CAPS & FI_MULTI_RECV) ? \
				  FI_MULTI_RECV : 0))

/* ---- limits ------------------------------------------------------------ */

/*
 * Ceilings the template carries so that p4f_domain_open/p4f_ep_open accept
 * any info fi_getinfo returned; the entries themselves report the
 * FI_PORTALS_* values, which p4f_init.c bounds to these.
 */
#define P4F_QUEUE_SIZE_MAX	((size_t)1 << 24)	/* TX_SIZE, RX_SIZE */
#define P4F_INJECT_SIZE_MAX	((size_t)1 << 16)	/* INJECT_SIZE */

/*
 * Object counts: nothing in the provider is a fixed table, so these are the
 * counts it is built and tested for. An endpoint holds a listening socket
 * and its connections, so endpoints are bounded by descriptors.
 */
#define P4F_EP_CNT		1024
#define P4F_CQ_CNT		1024
#define P4F_CNTR_CNT		1024
#define P4F_MR_CNT		65536

/*
 * Tags: the man page (fi_endpoint(3) "mem_tag_format") counts the tag bits
 * from the highest set bit, and groups of equal bits are fields whose mask
 * bits must be all 0 or all 1. 0xFFFFFFFFFFFFFFFF would be 64 bits as ONE
 * field, so a receive could only ignore all of the tag or none of it; the
 * alternating pattern (libfabric's FI_TAG_GENERIC, not exported) is 64 bits
 * in 64 one-bit fields: every mask is valid, which is what Portals ignore
 * bits (and Open MPI's partial ignore masks) need. Consumers that count tag
 * bits (Open MPI, ofi_max_tag) see 64 either way.
 */
#define P4F_TAG_FORMAT		0xAAAAAAAAAAAAAAAAULL

/*
 * mr_mode bits the provider works with, none of which it requires. Like
 * tcp;ofi_rxm and net it reports none of them (application keys, offset
 * addressing): fabtests such as fi_multi_mr and fi_rdm_deferred_wq offer
 * them in their hints yet address memory by offset with keys of their
 * own. An application that wants them sets them on the info it passes to
 * fi_domain, which honours them (p4f_domain.c, p4f_mr.c).
 */
#define P4F_MR_MODE_USABLE	(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | \
				 FI_MR_ALLOCATED)
#define P4F_MR_MODE_LEGACY	(FI_MR_BASIC | FI_MR_SCALABLE)
/* Bits that only matter to an endpoint that is an RMA target (fi_mr(3)). */
#define P4F_MR_MODE_RMA_TARGET	(FI_MR_RAW | FI_MR_VIRT_ADDR | \
				 FI_MR_PROV_KEY | FI_MR_RMA_EVENT)

/* The mr_mode bits prov requires of an application using caps. */
int p4f_mr_mode_required(int prov_mode, uint64_t caps);
/* The hints' mr_mode, FI_MR_UNSPEC without hints. */
int p4f_hints_mr_mode(const struct fi_info *hints);
/* The application speaks the pre-1.5 mr_mode language (fi_mr(3)). */
bool p4f_mr_mode_is_legacy(uint32_t version, int user_mode);

#endif /* P4F_ATTR_H */
