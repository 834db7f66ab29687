/*
 * p4e_op_names.c - the names of the initiator operation's states and
 * events (enum p4e_op_state, enum p4e_op_event in p4e_priv.h), for logs
 * and tests. Out of p4e_ini.c, where the state machine lives, to keep it
 * under 900 lines (docs/design.md §2, rule 5).
 */
#include <config.h>

#include "p4e_priv.h"

static const char *const p4e_op_state_names[P4E_OPS_MAX] = {
	[P4E_OPS_FREE] = "free",
	[P4E_OPS_QUEUED] = "queued",
	[P4E_OPS_SENT] = "sent",
	[P4E_OPS_REWOUND] = "rewound",
	[P4E_OPS_WAIT_RESP] = "wait_resp",
	[P4E_OPS_DRAINING] = "draining",
};

static const char *const p4e_op_event_names[P4E_OPE_MAX] = {
	[P4E_OPE_POST] = "post",
	[P4E_OPE_XMIT_OK] = "xmit_ok",
	[P4E_OPE_XMIT_QUEUED] = "xmit_queued",
	[P4E_OPE_XMIT_EAGAIN] = "xmit_eagain",
	[P4E_OPE_XMIT_FAIL] = "xmit_fail",
	[P4E_OPE_SEND_DONE] = "send_done",
	[P4E_OPE_ACCEPTED] = "accepted",
	[P4E_OPE_REWIND] = "rewind",
	[P4E_OPE_RESPONSE] = "response",
	[P4E_OPE_LINK_FAILED] = "link_failed",
};

const char *p4e_op_state_name(enum p4e_op_state state)
{
	return (unsigned)state < P4E_OPS_MAX ? p4e_op_state_names[state] :
					       "invalid";
}

const char *p4e_op_event_name(enum p4e_op_event ev)
{
	return (unsigned)ev < P4E_OPE_MAX ? p4e_op_event_names[ev] :
					    "invalid";
}
