/* Session statistics: goodput per interval and in total, per stream and
 * summed, chunks, credit stalls, CPU time of each side, and a JSON report
 * that is a superset of iperf3 -J's (start, intervals, end, error).
 *
 * Goodput counts payload bytes only (not chunk headers or framing), in
 * Gb/s = 1e9 bits per second.
 */
#ifndef FERRY_STATS_H
#define FERRY_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FERRY_REPORT_MAX_IV 3600 /* intervals kept; later ones are dropped */
/* Streams whose bytes each interval keeps (the sum covers them all). */
#define FERRY_REPORT_IV_STREAMS 32
/* Streams whose totals the report keeps: FERRY_MAX_STREAMS. */
#define FERRY_REPORT_STREAMS 256

struct ferry_interval {
	double start, end; /* seconds since the data phase began */
	uint64_t bytes, chunks, stalls;
	uint64_t stream_bytes[FERRY_REPORT_IV_STREAMS]; /* of the first
					     FERRY_REPORT_IV_STREAMS streams */
	uint64_t retransmits; /* packets sent again, every stream (where the
				 report has_retransmits) */
	uint32_t stream_retransmits[FERRY_REPORT_IV_STREAMS];
};

struct ferry_report {
	char role[12];       /* "sender" or "receiver" */
	char transport[12];  /* "tcp", "uroce", "verbs" */
	char peer[80];       /* the other side, host:port */
	char transport_why[160]; /* why this transport was chosen */
	char peer_transport[12]; /* the other side's: the same, or another
				    of its wire family (uroce and verbs
				    both speak RoCEv2); "" unknown */
	char poll[8];        /* "busy" or "event": how completions are awaited */
	int dscp;            /* the DSCP this side marked its packets with
				(ferry_opts.dscp: a receiver's is the
				sender's); -1: none, the system's default */
	unsigned streams, slots, depth;
	uint64_t chunk_size;
	/* the path plan (ferry_opts.fixed): the RTT measured at the start
	 * (ms; 0: none), the rate planned for (0: none), and what it chose
	 * and why ("" when the peer did not plan) */
	double rtt_ms;
	uint64_t target_bps;
	char plan[320];
	/* the stream ramp (a sender whose plan's target was its NIC's speed
	 * and opened more streams than the floor): how many carried data at
	 * the end, the most that ever did, and why ("" when there was none;
	 * streams_used = streams_peak = streams) */
	unsigned streams_used, streams_peak;
	char ramp[224];
	/* a receiver's windows that follow the rate (a tcp path of 5 ms and
	 * more): the streams whose window it held to their rate, and those
	 * windows' sum at the end (0: none held) */
	unsigned fit_streams;
	uint64_t fit_bytes;
	/* what was asked: seconds (0: not time-bounded) or bytes (0: not
	 * size-bounded); when it began, seconds since the epoch (UTC) */
	double test_seconds;
	uint64_t test_bytes;
	int64_t start_time;
	/* memory */
	char page_kind[8];
	uint64_t pool_bytes;
	int numa_node;
	char placement[256];
	/* totals */
	double seconds;
	uint64_t bytes, chunks, stalls, crc_errors;
	uint64_t stream_bytes[FERRY_REPORT_STREAMS]; /* per stream, this side */
	bool has_retransmits; /* the transport counts them (a sender's tcp) */
	uint64_t retransmits; /* packets sent again, every stream */
	uint64_t stream_retransmits[FERRY_REPORT_STREAMS];
	double cpu_user, cpu_sys;           /* this side, seconds */
	double peer_cpu_user, peer_cpu_sys; /* other side; < 0 unknown */
	uint64_t peer_bytes;                /* what the other side counted */
	/* file sessions */
	uint64_t files_total, files_done, files_skipped, files_failed;
	uint64_t files_resumed, bytes_total; /* bytes_total: of all files */
	/* daemon connections (ferry_server_exports) */
	char client[72];     /* the key name the client gave, or its token */
	uint64_t requests;   /* requests served (stat, list, push, ...) */
	/* intervals */
	unsigned n_iv;
	uint64_t iv_dropped;
	struct ferry_interval iv[FERRY_REPORT_MAX_IV];
};

/* Gb/s of bytes over seconds (0 when seconds <= 0). */
double ferry_gbps(uint64_t bytes, double seconds);

/* CPU-seconds per GB (1e9 bytes) moved; < 0 when nothing moved. */
double ferry_cpu_per_gb(double cpu_seconds, uint64_t bytes);

/* Append an interval (dropped and counted once the array is full). */
void ferry_report_add_interval(struct ferry_report *r,
			       const struct ferry_interval *iv);

/* Write the report as one JSON document to out, iperf3 -J's members
 * beside ferry's own: start (version, timestamp, connecting_to or
 * accepted_connection, test_start), intervals[] (streams[] and sum, each
 * with start, end, seconds, bytes, bits_per_second), end (streams[] with
 * sender and receiver, sum_sent, sum_received, cpu_utilization_percent).
 * Returns 0 or -errno. */
int ferry_report_json(const struct ferry_report *r, FILE *out);

/* Write str to out as a JSON string, quotes included: quotes,
 * backslashes and control characters escaped, valid UTF-8 kept as is,
 * every byte that is not UTF-8 (a file name in Latin-1, say) written as
 * U+FFFD, so the document stays valid whatever the string held. */
void ferry_json_str(FILE *out, const char *str);

/* The same, with extra top-level members written by extra (which starts
 * each member with ",\n  \"name\": "). */
int ferry_report_json_ex(const struct ferry_report *r, FILE *out,
			 void (*extra)(FILE *out, void *arg), void *arg);

#endif
