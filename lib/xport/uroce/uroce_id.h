/* uroce as the control channel knows it (internal), in builds with DPDK
 * or without (the registry names a peer's transport: lib/xport/xport.c).
 * The bit is on the wire: it never changes. */
#ifndef FERRY_XPORT_UROCE_ID_H
#define FERRY_XPORT_UROCE_ID_H

#include "ferry/xport.h"

/* Its RC engine's counter families (rc_metrics.c, in every build). */
extern const struct ferry_metric_set ferry__uroce_metrics;

/* after verbs (a NIC does the RC work uroce does on a CPU), before tcp;
 * RoCEv2 on the wire, so a verbs peer pairs with it (uroce_rocev2.c); it
 * pins the rings it registers, over DPDK; it publishes its RC counters */
#define FERRY__UROCE_ID                                                     \
	.name = "uroce", .bit = 1u << 1, .rank = 20,                        \
	.wire = FERRY_WIRE_ROCEV2, .needs = FERRY_XPORT_NEEDS_MEMLOCK,      \
	.runs_on = "DPDK", .metrics = &ferry__uroce_metrics

#endif
