/* The decoder behind `ferry rocedump`: a capture of a RoCE fabric, frame
 * by frame and flow by flow.
 *
 * Each Ethernet frame (802.1Q and 802.1ad tags allowed) is classified:
 * RoCEv2 when it holds IPv4 or IPv6 (not a fragment) and UDP to the
 * RoCEv2 port (4791 unless told otherwise); anything else is counted and
 * left alone. A RoCEv2 frame is either decoded or undecodable, never both:
 *  - decoded: the InfiniBand base transport header (BTH) and every
 *    extended header its opcode carries, for every base transport opcode
 *    of RC, UC, RD, UD and XRC (SEND, RDMA WRITE, RDMA READ request and
 *    response, atomics, ACK and NAK with their AETH syndromes, invalidate,
 *    FLUSH, ATOMIC WRITE) and the congestion notification packet (CNP);
 *    a UD SEND to QP 1 is decoded as a MAD, and a communication manager
 *    (CM) MAD is named (REQ, REP, RTU, ...) with its comm IDs. Then the
 *    invariant CRC (ICRC) is checked: ok, bad, or unchecked when the
 *    capture cut the frame short (its snapshot length);
 *  - undecodable: a reserved or vendor opcode, lengths that disagree, a
 *    header cut off, ... with the reason. Its ICRC is not counted as good
 *    or bad.
 * Frames are also summed per flow (one destination QP as reached from one
 * source address, and for datagrams one source QP): frames, payload
 * bytes, PSN gaps, retransmissions, NAKs and CNPs.
 *
 * Field layouts are the InfiniBand Architecture Specification's (vol. 1
 * ch. 9 transport headers, ch. 12 CM messages, ch. 13 MADs; annex A17
 * RoCEv2), as the Linux kernel and Wireshark read them; the sources are
 * cited where each table is.
 */
#ifndef FERRY_ROCEDUMP_H
#define FERRY_ROCEDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FERRY_ROCEDUMP_PORT 4791       /* the RoCEv2 UDP port (IANA) */
#define FERRY_ROCEDUMP_MAX_FLOWS 65536 /* flows tracked; later ones are not */
#define FERRY_ROCE_NO_QP 0xffffffffu   /* ferry_roce_flow.src_qp: none */
#define FERRY_ROCE_NO_VLAN 0xffffu     /* ferry_roce_frame.vlan: untagged */

enum ferry_roce_verdict {
	FERRY_ROCE_OTHER,       /* not RoCEv2 */
	FERRY_ROCE_DECODED,     /* every header decoded; see .icrc */
	FERRY_ROCE_UNDECODABLE, /* RoCEv2 that cannot be decoded; see .why */
};

enum ferry_roce_icrc {
	FERRY_ROCE_ICRC_OK,
	FERRY_ROCE_ICRC_BAD,
	FERRY_ROCE_ICRC_UNCHECKED, /* the capture holds only part of the frame */
};

/* Extended headers a frame carries (ferry_roce_frame.hdrs), in wire
 * order; CNP is the 16 reserved bytes after a RoCEv2 CNP's BTH, MAD a
 * management datagram in a UD SEND to QP 1. */
#define FERRY_ROCE_H_RDETH (1u << 0)
#define FERRY_ROCE_H_DETH (1u << 1)
#define FERRY_ROCE_H_XRCETH (1u << 2)
#define FERRY_ROCE_H_FETH (1u << 3)
#define FERRY_ROCE_H_RETH (1u << 4)
#define FERRY_ROCE_H_ATOMICETH (1u << 5)
#define FERRY_ROCE_H_AETH (1u << 6)
#define FERRY_ROCE_H_ATOMICACKETH (1u << 7)
#define FERRY_ROCE_H_IMMDT (1u << 8)
#define FERRY_ROCE_H_IETH (1u << 9)
#define FERRY_ROCE_H_CNP (1u << 10)
#define FERRY_ROCE_H_MAD (1u << 11)

/* What an AETH says (its syndrome's bits 6-5). */
enum ferry_roce_ack {
	FERRY_ROCE_ACK,      /* low 5 bits: credit count */
	FERRY_ROCE_RNR_NAK,  /* low 5 bits: RNR timer */
	FERRY_ROCE_NAK,      /* low 5 bits: NAK code */
	FERRY_ROCE_ACK_RESERVED,
};

/* Which CM fields ferry_roce_cm holds (its .fields). */
#define FERRY_ROCE_CM_LOCAL_ID (1u << 0)
#define FERRY_ROCE_CM_REMOTE_ID (1u << 1)
#define FERRY_ROCE_CM_QPN (1u << 2)    /* REQ, REP: local QPN; DREQ: remote */
#define FERRY_ROCE_CM_PSN (1u << 3)    /* REQ, REP: starting PSN */
#define FERRY_ROCE_CM_REASON (1u << 4) /* REJ: reason; SIDR_REP: status */

struct ferry_roce_cm {
	const char *name;    /* "REQ", "REP", ...; NULL: an attribute ferry
			      * does not name */
	unsigned fields;     /* FERRY_ROCE_CM_* */
	uint32_t local_id, remote_id; /* comm IDs (SIDR: the request ID) */
	uint32_t qpn, psn;
	uint16_t reason;
};

struct ferry_roce_mad {
	uint8_t base_version, mgmt_class, class_version, method;
	uint16_t status, attr_id;
	uint32_t attr_mod;
	uint64_t tid;
	struct ferry_roce_cm cm; /* management class 0x07 (CM) only */
};

/* One frame, decoded. Fields of headers the frame does not carry are 0. */
struct ferry_roce_frame {
	uint64_t index;           /* 1 for a capture's first frame */
	uint64_t ts_ns;           /* capture time, ns since the epoch */
	uint32_t caplen, len;     /* bytes captured, bytes on the wire */
	enum ferry_roce_verdict verdict;
	const char *why;          /* undecodable: why, one line, static */
	bool has_bth;             /* the BTH fields below were read (an
				   * undecodable frame's too, where they were) */
	/* Ethernet, IP, UDP */
	uint8_t dst_mac[6], src_mac[6];
	uint16_t vlan;            /* innermost VLAN ID, or FERRY_ROCE_NO_VLAN */
	uint8_t ip_version;       /* 4 or 6 */
	uint8_t src_ip[16], dst_ip[16]; /* IPv4: the first 4 bytes */
	uint8_t ecn;              /* the IP header's ECN bits; 3 is CE */
	uint16_t udp_sport, udp_dport;
	/* BTH */
	uint8_t opcode;
	const char *transport;    /* "RC", "UC", "RD", "UD", "XRC", "CNP" */
	const char *op;           /* "SEND_ONLY", "RDMA_READ_REQUEST", ... */
	bool se, migreq, fecn, becn, ackreq;
	uint8_t padcnt, tver;
	uint16_t pkey;
	uint32_t dest_qp, psn;
	/* extended headers */
	unsigned hdrs;            /* FERRY_ROCE_H_* */
	uint32_t ee_context;      /* RDETH */
	uint32_t qkey, src_qp;    /* DETH */
	uint32_t xrc_srq;         /* XRCETH */
	uint32_t feth;            /* FETH: selectivity (bits 5-4), placement
				   * type (bits 3-0) */
	uint64_t va;              /* RETH or AtomicETH */
	uint32_t rkey;            /* RETH or AtomicETH */
	uint32_t dma_len;         /* RETH */
	uint64_t swap_add, compare; /* AtomicETH: swap (or add) data,
				     * compare data */
	uint8_t syndrome;         /* AETH */
	uint32_t msn;             /* AETH */
	enum ferry_roce_ack ack;  /* AETH: the syndrome's kind */
	int credits;              /* ACK: credit count; -1 for code 31 (no
				   * count) */
	uint32_t rnr_us;          /* RNR NAK: the timer, microseconds */
	const char *nak;          /* NAK: "PSN sequence error", ... */
	uint64_t orig_data;       /* AtomicAckETH */
	uint32_t imm;             /* ImmDt */
	uint32_t inv_rkey;        /* IETH */
	struct ferry_roce_mad mad; /* FERRY_ROCE_H_MAD */
	/* payload and ICRC */
	uint32_t payload_off;     /* where the payload starts in the frame */
	uint32_t payload_len;     /* bytes, pad excluded */
	enum ferry_roce_icrc icrc;
	uint32_t icrc_wire, icrc_calc; /* as sent and as computed (checked
					* frames only) */
};

/* Decode frame[0..caplen), the captured part of a frame of len bytes on
 * the wire; port is the RoCEv2 UDP port (0: 4791). Fills *out (its index
 * and ts_ns are left 0) and returns 0; out->verdict says what the frame
 * is. Returns -EINVAL for a NULL argument or caplen > len. */
int ferry_rocedump_decode(const uint8_t *frame, size_t caplen, size_t len,
			  uint16_t port, struct ferry_roce_frame *out);

/* Counts over the frames given to a ferry_rocedump:
 * roce = decoded + undecodable; decoded = icrc_ok + icrc_bad +
 * icrc_unchecked. */
struct ferry_rocedump_totals {
	uint64_t frames, roce, decoded, undecodable;
	uint64_t icrc_ok, icrc_bad, icrc_unchecked;
	uint64_t flows;     /* flows tracked */
	uint64_t untracked; /* decoded frames of flows past the limit */
};

/* One flow: the decoded frames sent from src_ip to dest_qp at dst_ip
 * (from src_qp, for datagrams). PSN gaps and retransmissions are counted
 * over requests (SEND, WRITE, READ request, atomics, ...): a gap is a PSN
 * past the next one due, a retransmission a PSN before it. An RDMA READ
 * request takes as many PSNs as its responses, which the capture does
 * not tell (the path MTU): from len/4096 to len/256, rounded up, are
 * in order. Responses (ACK, READ response) and CNPs are not in that
 * sequence; NAKs, RNR NAKs and CNPs are counted in the flow they reach. */
struct ferry_roce_flow {
	uint8_t ip_version;
	uint8_t src_ip[16], dst_ip[16];
	uint32_t dest_qp;
	uint32_t src_qp;          /* DETH's; FERRY_ROCE_NO_QP without one */
	uint64_t frames, payload_bytes;
	uint64_t psn_gaps, retransmits;
	uint64_t naks, rnr_naks, cnps;
	uint64_t first_ns, last_ns;
};

/* A decoder with its counters and flows. */
struct ferry_rocedump;

/* port: the RoCEv2 UDP port (0: 4791). Returns 0 and *out, or
 * -EINVAL, -ENOMEM. */
int ferry_rocedump_new(uint16_t port, struct ferry_rocedump **out);

void ferry_rocedump_free(struct ferry_rocedump *d);

/* Decode one frame as ferry_rocedump_decode() does, number it (index),
 * count it and add it to its flow. Returns 0, or -EINVAL. */
int ferry_rocedump_add(struct ferry_rocedump *d, const uint8_t *frame,
		       size_t caplen, size_t len, uint64_t ts_ns,
		       struct ferry_roce_frame *out);

/* Called with each frame of a capture once it is counted; frame holds
 * its caplen bytes, valid during the call only. Return 0 to go on;
 * anything else stops the reading and is returned. */
typedef int (*ferry_rocedump_fn)(const struct ferry_roce_frame *f,
				 const uint8_t *frame, void *arg);

/* Read the capture in f (pcap or pcapng of Ethernet frames, positioned at
 * its start) to its end, adding each frame and calling fn (if not NULL).
 * Returns 0 at the end; what fn returned when it stopped; -ENOMEM; -EIO
 * when reading fails; -FERRY_EPROTO for a file that is not a well-formed
 * capture (the frames before the fault are counted). On -EIO and
 * -FERRY_EPROTO why (if not NULL) receives the reason. */
int ferry_rocedump_read(struct ferry_rocedump *d, FILE *f,
			ferry_rocedump_fn fn, void *arg, char *why,
			size_t why_len);

void ferry_rocedump_totals(const struct ferry_rocedump *d,
			   struct ferry_rocedump_totals *t);

/* The i-th flow, in the order their first frames came; NULL past the
 * last. Valid until the next ferry_rocedump_add, _read or _free. */
const struct ferry_roce_flow *ferry_rocedump_flow(const struct ferry_rocedump *d,
						  size_t i);

#endif
