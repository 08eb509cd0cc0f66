/* The RoCEv2 wire family's shared endpoint description (internal): what a
 * verbs transport and a uroce transport tell each other over the control
 * channel when they are the two ends of one session (attr.family).
 *
 * Both speak RoCEv2 reliable connections; neither needs the other's
 * connection manager. Each end creates its n_ep RC queue pairs, describes
 * them here, and brings them to ready-to-send with what the other end
 * described: the peer's QP number, its first PSN (this end's expected
 * PSN), its address (GID ::ffff:IPv4) and the path MTU, as perftest's
 * ib_write_bw does without -R (its QP attributes go over a TCP socket).
 * A ConnectX, rxe or uroce accepts a QP set up so; the IB CM would add
 * MADs on QP 1 and a state machine for nothing the control channel does
 * not already give.
 *
 * Order: the receiver's listen creates its QPs and describes them (role
 * RECEIVER, with its ring); the sender's connect takes that, creates its
 * own QPs, brings them up and describes them (role SENDER, with the path
 * MTU it chose); the receiver's accept brings its QPs up, then sends one
 * hello on each. The sender posts nothing on a QP before that hello
 * arrived: a write reaching a receiver QP not yet ready would be dropped
 * and cost a retransmission timeout.
 *
 * Encoding, little-endian, FERRY__ROCEV2_LEN(n_ep) bytes:
 *    0 u32 magic "RCv2" (0x32764352)
 *    4 u8  version 1
 *    5 u8  role: 1 receiver, 2 sender
 *    6 u16 n_ep
 *    8 u16 path MTU in bytes: the receiver's largest; the sender's choice
 *   10 u16 zero
 *   12 u8  mac[6]   this end's Ethernet address (uroce, which has no ARP,
 *                   sends to it; a verbs end lets the kernel resolve)
 *   18 u16 zero
 *   20 u8  ipv4[4]  this end's address: its GID is ::ffff:ipv4
 *   24 u32 rkey     the ring the peer writes into: the receiver's; a
 *                   sender's only when it takes writes too, else 0
 *   28 u32 rx_hint  packets this end's port can take in one burst (0: no
 *                   limit known): the peer keeps fewer in flight
 *   32 u64 ring base: the RETH address of ring offset 0
 *   40 u64 ring length (0 with rkey 0)
 *   48 per QP i: u32 QPN (24 bits), u32 first PSN (24 bits)
 */
#ifndef FERRY_XPORT_ROCEV2_H
#define FERRY_XPORT_ROCEV2_H

#include <stddef.h>
#include <stdint.h>

#include "ferry/xport.h"

#define FERRY__ROCEV2_MAGIC 0x32764352u
#define FERRY__ROCEV2_VERSION 1
#define FERRY__ROCEV2_RECEIVER 1
#define FERRY__ROCEV2_SENDER 2
#define FERRY__ROCEV2_HDR 48
#define FERRY__ROCEV2_MAX_EP 256
#define FERRY__ROCEV2_LEN(n) (FERRY__ROCEV2_HDR + 8 * (size_t)(n))
/* The receiver's hello, one SEND per QP (16 bytes: Wireshark's RPC-over-
 * RDMA heuristic calls shorter SENDs malformed). */
#define FERRY__ROCEV2_HELLO "ferry roce hello"
#define FERRY__ROCEV2_HELLO_LEN 16

_Static_assert(FERRY__ROCEV2_LEN(FERRY__ROCEV2_MAX_EP) <= FERRY_EP_MAX,
	       "a description of the most QPs fits the control channel");
_Static_assert(sizeof(FERRY__ROCEV2_HELLO) == FERRY__ROCEV2_HELLO_LEN + 1,
	       "the hello is 16 bytes");

struct ferry__rocev2_qp {
	uint32_t qpn, psn;
};

struct ferry__rocev2_ep {
	uint8_t role;
	uint16_t n_ep;
	uint16_t mtu;
	uint8_t mac[6];
	uint32_t ip;     /* host order */
	uint32_t rkey, rx_hint;
	uint64_t ring_base, ring_len;
	struct ferry__rocev2_qp qp[FERRY__ROCEV2_MAX_EP];
};

/* Encode e into buf (*len in: capacity, out: used). 0, or -ENOSPC, or
 * -EINVAL when e is not one a peer would accept (see decode). */
int ferry__rocev2_encode(const struct ferry__rocev2_ep *e, void *buf,
			 size_t *len);

/* Decode a peer's description of role, for a session of n_ep QPs. 0,
 * -FERRY_EVERSION (another version), or -FERRY_EPROTO with why: wrong
 * magic, role, length or QP count; an MTU that is not 256 .. 4096 and a
 * power of two; a QPN of 0, 1 or above 24 bits, or twice; a PSN above 24
 * bits; no IPv4 address; a ring that wraps, or a receiver without one. */
int ferry__rocev2_decode(const void *buf, size_t len, uint8_t role,
			 unsigned n_ep, struct ferry__rocev2_ep *e, char *why,
			 size_t whylen);

/* A peer's description of role, as the other end takes it: decoded (as
 * above), then the path MTU settled. *mtu is in: the largest this end
 * takes; out: the session's. The sender takes the receiver's and chooses
 * the smaller of the two; the receiver takes the sender's choice, or
 * refuses one larger than its own with -FERRY_ENEGOTIATE and why. */
int ferry__rocev2_take(const void *buf, size_t len, uint8_t role,
		       unsigned n_ep, uint32_t *mtu, struct ferry__rocev2_ep *e,
		       char *why, size_t whylen);

#endif
