/* Read Ethernet captures (internal; used by `ferry rocedump` and
 * the tests).
 *
 * Reads classic pcap (either byte order, microsecond or nanosecond
 * timestamps) and pcapng (SHB, IDB with if_tsresol and if_tsoffset, EPB,
 * SPB; other blocks are skipped; a new SHB starts a new section, with its
 * own byte order and interfaces). Only linktype 1 (Ethernet) is accepted.
 * Formats: draft-ietf-opsawg-pcap and draft-ietf-opsawg-pcapng
 * (the tcpdump.org / pcapng.com specifications).
 *
 * Memory is bounded: one buffer of FERRY_PCAP_MAX_FRAME bytes and the
 * interface table of the current pcapng section (FERRY_PCAP_MAX_IFS at
 * most); blocks and options are skipped without being held.
 */
#ifndef FERRY_ROCE_PCAP_H
#define FERRY_ROCE_PCAP_H

#include <stdint.h>
#include <stdio.h>

#define FERRY_PCAP_MAX_FRAME 262144u /* libpcap's largest snapshot length */
#define FERRY_PCAP_MAX_IFS 4096u

struct ferry_pcap_frame {
	uint64_t ts_ns;      /* capture time, ns since the epoch (0 for SPB) */
	const uint8_t *data; /* valid during the callback only */
	uint32_t caplen;     /* bytes in data */
	uint32_t len;        /* bytes the frame had on the wire */
	uint64_t offset;     /* where its record starts in the file */
};

/* Called once per frame, in file order. Return 0 to go on; anything else
 * stops the reading, and ferry__pcap_read() returns it. */
typedef int (*ferry_pcap_fn)(const struct ferry_pcap_frame *f, void *arg);

/* Read the capture in f (positioned at its start) to its end, calling fn
 * for each frame. Returns 0 at the end of the file; what fn returned when
 * it stopped the reading; -ENOMEM; -EIO when reading fails; -FERRY_EPROTO
 * for a file that is not a well-formed pcap or pcapng capture of Ethernet
 * frames, or a frame over FERRY_PCAP_MAX_FRAME bytes. On -FERRY_EPROTO
 * and -EIO, why (if not NULL) receives a reason with the file offset. */
int ferry__pcap_read(FILE *f, ferry_pcap_fn fn, void *arg, char *why,
		     size_t why_len);

#endif
