/* verbs as the control channel knows it (internal), in builds with
 * rdma-core or without (the registry names a peer's transport:
 * lib/xport/xport.c). The bit is on the wire: it never changes. */
#ifndef FERRY_XPORT_VERBS_ID_H
#define FERRY_XPORT_VERBS_ID_H

#include "ferry/xport.h"

/* the first choice: the NIC moves the bytes, no CPU per packet; RoCEv2,
 * so a uroce peer pairs with it (QPs brought up by hand: verbs_rc.c) */
#define FERRY__VERBS_ID                                                     \
	.name = "verbs", .bit = 1u << 2, .rank = 10,                        \
	.wire = FERRY_WIRE_ROCEV2

#endif
