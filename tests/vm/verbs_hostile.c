/* verbs_hostile: a ferry sender over verbs that turns hostile once its
 * queue pair is up (tests/vm/cases/hostile.sh). It authenticates, proposes
 * a bench session of one stream, connects its QP with the session's token
 * exactly as `ferry bench` does, sends READY, and then, instead of a chunk
 * into a slot it holds a credit for, posts one RDMA WRITE WITH IMMEDIATE:
 *
 *   usage: verbs_hostile MODE HOST PORT
 *   MODE  past    a whole chunk (68 KiB: several packets) just past the
 *                 end of the advertised ring, with the ring's own rkey
 *         stale   one packet (4 KiB) into slot 0, with the rkey of the
 *                 ring of an earlier session: a whole bench session of
 *                 one chunk runs first (as `ferry bench` would) and its
 *                 rkey is kept
 * (rxe refuses the two differently: a refused single-packet write
 * completes a receive buffer with the error; a longer one is refused at
 * its first packet, before any buffer is taken, and only stops the QP.)
 *
 * The receiver's RDMA stack must refuse the write: its completion here is
 * a remote access error. The program prints the completion's status, then
 * waits for the receiver's word on the control channel and prints it.
 * Exit status: 0 when the write was refused (IBV_WC_REM_ACCESS_ERR), 1
 * when it was not (it landed, or failed otherwise), 2 on bad usage or a
 * set-up failure. Key: $FERRY_KEY (file). The receiver's own account of
 * the session (nothing landed, a reason) is the script's to check.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrl/msg.h"
#include "ferry/chunk.h"
#include "ferry/error.h"
#include "pipe/session.h"
#include "util/util.h"
#include "xport/verbs/verbs.h"

#define CHUNK (64u << 10)

static struct ferry_key key;

static void opts(struct ferry_opts *o)
{
	ferry_opts_init(o);
	o->transport = "verbs";
	o->streams = 1;
	o->slots = 2;
	o->chunk_size = CHUNK;
	o->timeout_ms = 5000;
	o->interval = 0;
	o->key = &key;
}

/* Handshake, PROPOSE, ACCEPT, QPs connected, READY: p is a connected
 * sender of one stream. */
static int session(const char *host, const char *port,
		   const struct ferry_opts *o, struct ferry__pipe *p, int *fd,
		   struct ferry_report *rep, char *why, size_t whylen)
{
	struct ferry_xport_attr xa = { 0 };
	struct ferry__xscan xs = { 0 };
	int err;

	err = ferry__opts_check(o, &xs, why, whylen);
	if (err)
		return err;
	memset(p, 0, sizeof(*p));
	p->role = FERRY__SENDER;
	p->timeout_ms = o->timeout_ms;
	p->dp = &ferry__bench_dp;
	memset(rep, 0, sizeof(*rep));
	err = ferry__client_open(host, port, o, fd, &xa, rep, why, whylen);
	if (err)
		return err;
	err = ferry__client_propose(*fd, o, &xa, &xs, FERRY_MODE_BENCH, CHUNK,
				    why, whylen);
	if (!err)
		err = ferry__client_connect(p, *fd, o, &xa, &xs, rep, why,
					    whylen);
	if (!err && strcmp(p->ops->name, "verbs") != 0) {
		ferry__why(why, whylen, "the session runs over %s, not verbs",
			   p->ops->name);
		err = -FERRY_ENOXPORT;
	}
	return err;
}

/* A whole bench session of one chunk, like `ferry bench -n 64K`; its
 * ring's rkey in *rkey. */
static int good_session(const char *host, const char *port,
			const struct ferry_opts *o, uint32_t *rkey)
{
	struct ferry__hooks h = { .wake_fd = -1 };
	struct ferry__pipe p;
	struct ferry_report rep;
	char why[512] = "";
	int fd = -1, err;

	err = session(host, port, o, &p, &fd, &rep, why, sizeof(why));
	if (!err) {
		*rkey = p.x->rkey;
		p.budget = CHUNK;
		err = ferry__client_run(&p, fd, o, &h, &rep, why, sizeof(why));
	}
	ferry__pipe_free(&p);
	if (fd >= 0)
		close(fd);
	if (err)
		fprintf(stderr, "verbs_hostile: the first session: %s\n", why);
	else
		printf("first session: %llu bytes verified by the receiver, its ring's rkey 0x%x\n",
		       (unsigned long long)rep.peer_bytes, *rkey);
	return err;
}

/* Post the hostile write on the stream's QP and wait for its completion. */
static int hostile_write(struct ferry__pipe *p, uint64_t raddr, uint32_t rkey,
			 uint32_t len, struct ibv_wc *wc)
{
	struct verbs_ep *e = &p->x->ep[0];
	uint8_t *lb = p->base;
	struct ferry_chunk_hdr h = { .xfer_id = p->xfer_id, .len = CHUNK };
	struct ibv_sge sge = {
		.addr = p->mr->iova,
		.length = len,
		.lkey = p->mr->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x401,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = 0, /* slot 0, in network order */
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;
	uint64_t deadline = ferry__now_ns() + 30ull * 1000000000ull;
	int n, err;

	memset(lb + FERRY_CHUNK_HDR_SPACE, 0xa5, CHUNK);
	ferry_chunk_seal(&h, lb + FERRY_CHUNK_HDR_SPACE);
	ferry_chunk_encode(&h, lb);
	err = ibv_post_send(e->qp, &wr, &bad);
	if (err) {
		fprintf(stderr, "verbs_hostile: ibv_post_send: %s\n", strerror(err));
		return -err;
	}
	/* the ACK timeout is long (2 s, retried): give it time */
	do {
		n = ibv_poll_cq(e->scq, 1, wc);
		if (n == 0)
			usleep(1000);
	} while (n == 0 && ferry__now_ns() < deadline);
	if (n <= 0) {
		fprintf(stderr, "verbs_hostile: no completion for the write in 30 s\n");
		return -FERRY_ETIMEOUT;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ferry_opts o;
	struct ferry__pipe p;
	struct ferry_report rep;
	struct ferry_msg m;
	struct ibv_wc wc;
	char why[512] = "";
	uint32_t stale = 0;
	uint64_t raddr;
	uint32_t rkey;
	int fd = -1, err;
	bool past;

	if (argc != 4 || (strcmp(argv[1], "past") && strcmp(argv[1], "stale"))) {
		fprintf(stderr, "usage: verbs_hostile past|stale HOST PORT\n");
		return 2;
	}
	past = strcmp(argv[1], "past") == 0;
	if (!getenv("FERRY_KEY") ||
	    ferry_key_load(getenv("FERRY_KEY"), &key, why, sizeof(why))) {
		fprintf(stderr, "verbs_hostile: key ($FERRY_KEY): %s\n", why);
		return 2;
	}
	opts(&o);
	if (!past && good_session(argv[2], argv[3], &o, &stale))
		return 2;

	err = session(argv[2], argv[3], &o, &p, &fd, &rep, why, sizeof(why));
	if (err) {
		fprintf(stderr, "verbs_hostile: %s\n", why);
		ferry__pipe_free(&p);
		return 2;
	}
	rkey = p.x->rkey;
	raddr = p.x->rbase;
	if (past) {
		raddr = p.x->rbase + p.x->rlen;
		printf("ring: rkey 0x%x, base 0x%llx, %llu bytes; writing %u bytes at 0x%llx, just past its end\n",
		       rkey, (unsigned long long)p.x->rbase,
		       (unsigned long long)p.x->rlen,
		       FERRY_CHUNK_HDR_SPACE + CHUNK, (unsigned long long)raddr);
	} else {
		printf("ring: rkey 0x%x, base 0x%llx; writing 4096 bytes into slot 0 with the stale rkey 0x%x\n",
		       rkey, (unsigned long long)raddr, stale);
		if (stale == rkey) {
			/* rxe draws 8 bits of each key at random: 1 in 256 */
			printf("the new ring got the old rkey: nothing stale to use\n");
			ferry__pipe_free(&p);
			close(fd);
			return 3;
		}
		rkey = stale;
	}
	fflush(stdout);
	err = hostile_write(&p, raddr, rkey,
			    past ? FERRY_CHUNK_HDR_SPACE + CHUNK : 4096, &wc);
	if (!err)
		printf("write completion: %s (vendor error 0x%x)\n",
		       ibv_wc_status_str(wc.status), wc.vendor_err);
	/* what the receiver says about it (an ERROR, or it hangs up) */
	int r = ferry__ctrl_recv(fd, &m, 15000);
	if (r == -FERRY_EPEER)
		printf("receiver: %s\n", m.u.error.text);
	else if (r)
		printf("receiver: no word, the control channel: %s\n",
		       ferry_strerror(r));
	else
		printf("receiver: sent %s\n", ferry__ctrl_type_name(m.type));
	ferry__pipe_free(&p);
	close(fd);
	if (err)
		return 1;
	return wc.status == IBV_WC_REM_ACCESS_ERR ? 0 : 1;
}
