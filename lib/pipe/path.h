/* The path plan (internal): streams, socket buffers and ring sized to the
 * path at the start of each session, unless the user fixed them
 * (ferry_opts.fixed).
 *
 * The sender says what it knows in a PATH message before its PROPOSE: its
 * target rate (its --rate, else the speed of the NIC its route to the
 * receiver leaves by), the send-buffer limits of its host and whether it
 * may exceed them, its ring limit, its --sockbuf. The receiver measures
 * the RTT on the control connection (the handshake has crossed it several
 * times by then), lowers the target to its own NIC's speed, and plans with
 * the sizing rule (xport/tcp/tcp_plan.h): over tcp, enough streams whose
 * windows together hold BDP x 5/4; on every transport, a ring that holds
 * it too (the sender's credits keep at most a ring in flight), within
 * both ends' ring limits. It answers with its own PATH (the RTT and
 * target it used, its receive-buffer limits, the socket buffer both ends
 * should ask for) and then ACCEPT with the streams and slots. The sender
 * runs the same plan on the two PATHs and holds the receiver to it.
 *
 * Without a target (no --rate, no NIC speed: loopback) the plan is the
 * defaults. */
#ifndef FERRY_PIPE_PATH_H
#define FERRY_PIPE_PATH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ctrl/msg.h"
#include "ferry/session.h"

struct ferry__path_plan {
	unsigned streams, slots;
	uint64_t sockbuf;  /* to ask for per socket; 0: autotuning */
	uint64_t ring_want; /* the slots the BDP needs (0: none known) */
	double rtt_s, rate_bps;
	char why[320];     /* "RTT 301 ms, target 2 Gb/s, BDP 75 MiB: ..." */
};

/* This end's PATH: the sender's (send buffers, its rate target, its RTT
 * sample) or the receiver's (receive buffers, its NIC's speed). ctrl: the
 * control socket; peer: the other end's address. */
void ferry__path_local(const struct ferry_opts *o, int ctrl,
		       const struct sockaddr *peer, socklen_t peer_len,
		       bool sender, struct ferry_msg_path *out);

/* Receiver: its PATH for the sender's tx, from its own (rx, from
 * ferry__path_local): the RTT measured, else the sender's; the lower of
 * the two targets that are known. */
void ferry__path_answer(const struct ferry_msg_path *tx,
			struct ferry_msg_path *rx);

/* The plan, on both ends alike: from the sender's PATH, the receiver's
 * answer, the proposal (streams and slots: the floor, or the user's; its
 * chunk size and total bytes) and whether the transport is tcp (streams
 * and buffers are planned only there). */
void ferry__path_plan(const struct ferry_msg_path *tx,
		      const struct ferry_msg_path *rx,
		      const struct ferry_params *pr, bool tcp,
		      struct ferry__path_plan *pl);

/* The plan into a session's report (rtt_ms, target_bps, plan), and the
 * log at info level. */
void ferry__path_report(const struct ferry__path_plan *pl,
			struct ferry_report *rep);

#endif
