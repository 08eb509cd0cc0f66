/* uroce's counter families: what its RC engine counts (struct
 * ferry_rc_counters, rc.h), as Prometheus sees it. Built with or without
 * DPDK: the registry lists every transport the control channel knows
 * (lib/xport/xport.c), so the families are in every build's scrapes, at
 * 0 where uroce never runs, and a dashboard finds them everywhere. The
 * endpoint code adds a session's sums when it ends (uroce_ep.c): the
 * counters belong to the polling thread while the session runs. */
#include <stddef.h>

#include "metrics/metrics.h"
#include "util/util.h"
#include "xport/uroce/rc.h"
#include "xport/uroce/uroce_id.h"

/* A counter family of uroce's, its label names after its help; a
 * session adds to it when it ends. */
#define FAMILY(var, name, help, ...)                                        \
	static const struct ferry__m_family var = {                         \
		name, "counter", help " (added when a session ends).",      \
		{ __VA_ARGS__ }                                             \
	}

FAMILY(retx, "ferry_uroce_retransmitted_packets_total",
       "uroce request packets sent again", NULL);
FAMILY(timeouts, "ferry_uroce_retransmit_timeouts_total",
       "uroce retransmit timer expiries", NULL);
FAMILY(naks, "ferry_uroce_naks_total",
       "uroce NAKs received (direction receive) and sent (transmit) by kind", "direction", "kind");
FAMILY(oow, "ferry_uroce_out_of_order_packets_total",
       "uroce requests dropped for arriving ahead of the expected PSN", NULL);
FAMILY(dup, "ferry_uroce_duplicate_packets_total",
       "uroce requests that arrived again and were only acknowledged", NULL);
FAMILY(ce, "ferry_uroce_ecn_marked_packets_total",
       "uroce requests that arrived marked ECN CE", NULL);
FAMILY(cnp, "ferry_uroce_cnps_total",
       "uroce congestion notification packets sent (direction transmit, for marked requests) and received (receive)", "direction");
FAMILY(cuts, "ferry_uroce_rate_cuts_total",
       "uroce sending rate cuts by DCQCN (after a CNP) and window caps after a loss with a queue", "cause");

#define RC(field) offsetof(struct ferry_rc_counters, field)

/* In the order they are written. */
static const struct ferry__m_counter counters[] = {
	{ &retx, { NULL }, RC(retx_pkts) },
	{ &timeouts, { NULL }, RC(timeouts) },
	{ &naks, { "receive", "sequence" }, RC(rx_nak_seq) },
	{ &naks, { "receive", "rnr" }, RC(rx_nak_rnr) },
	{ &naks, { "receive", "access" }, RC(rx_nak_access) },
	{ &naks, { "receive", "other" }, RC(rx_nak_other) },
	{ &naks, { "transmit", "sequence" }, RC(tx_nak_seq) },
	{ &naks, { "transmit", "rnr" }, RC(tx_nak_rnr) },
	{ &naks, { "transmit", "access" }, RC(tx_nak_access) },
	{ &naks, { "transmit", "invalid" }, RC(tx_nak_invalid) },
	{ &oow, { NULL }, RC(oow_drops) },
	{ &dup, { NULL }, RC(dup_pkts) },
	{ &ce, { NULL }, RC(rx_ce) },
	{ &cnp, { "transmit" }, RC(tx_cnp) },
	{ &cnp, { "receive" }, RC(rx_cnp) },
	{ &cuts, { "cnp" }, RC(dcqcn_cuts) },
	{ &cuts, { "loss" }, RC(win_cuts) },
};

const struct ferry_metric_set ferry__uroce_metrics = {
	counters, FERRY__ARRAY_SIZE(counters),
};
