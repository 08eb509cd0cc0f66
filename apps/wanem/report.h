/* ferry-wanem's statistics: the counters of both directions and of the
 * two ports, written as one JSON object (--json) or as text. */
#ifndef WANEM_REPORT_H
#define WANEM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "emu.h"
#include "opts.h"

struct wanem_port_stats {
	uint64_t ipackets, opackets, ibytes, obytes;
	uint64_t imissed, ierrors, oerrors, rx_nombuf;
};

struct wanem_report {
	const char *type;       /* "interval" or "end" */
	double seconds;         /* since forwarding started */
	const struct wanem_attr *attr;
	struct wanem_counters dir[2];
	uint64_t held[2];
	bool have_ports;
	struct wanem_port_stats port[2];
	/* the forwarding loop: the longest time between two of its turns
	 * (the thread was descheduled or held in the kernel), and how many
	 * turns took over 1 ms */
	uint64_t stall_max_ns, stalls_1ms;
	uint64_t rt_pauses; /* 1 ms pauses to stay under the RT throttle */
};

/* One line of JSON: {"type":..., "seconds":..., "seed":..., "config":
 * {...} (end only), "ab": {...}, "ba": {...}, "ports": [...]}. */
void wanem_report_json(FILE *f, const struct wanem_report *r);
/* A few lines for people. */
void wanem_report_text(FILE *f, const struct wanem_report *r);

/* The sum that must hold for a direction: rx + duplicated ==
 * tx + all drops + held. */
bool wanem_counters_add_up(const struct wanem_counters *c, uint64_t held);

#endif
