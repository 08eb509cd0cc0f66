/* One control message of every type, every field distinct and non-zero,
 * for the wire-vector test (test_codec_vectors.c): codec_vectors.h holds
 * the bytes these encoded to before the codec was table-driven, and they
 * must never change (peers of earlier versions read them). */
#ifndef FERRY_TEST_CODEC_SAMPLES_H
#define FERRY_TEST_CODEC_SAMPLES_H

#include <stdio.h>
#include <string.h>

#include "ctrl/msg.h"

static const uint16_t codec_types[] = {
	FERRY_MSG_HELLO,     FERRY_MSG_CHALLENGE, FERRY_MSG_AUTH,
	FERRY_MSG_PROPOSE,   FERRY_MSG_ACCEPT,    FERRY_MSG_ERROR,
	FERRY_MSG_READY,     FERRY_MSG_FIN,       FERRY_MSG_RESULT,
	FERRY_MSG_FILES,     FERRY_MSG_MANIFEST,  FERRY_MSG_PLAN,
	FERRY_MSG_FILE_SUM,  FERRY_MSG_FILE_DONE, FERRY_MSG_REQ,
	FERRY_MSG_REPLY,     FERRY_MSG_MARKER,    FERRY_MSG_FILE_SUMS,
	FERRY_MSG_FILE_DONES, FERRY_MSG_PATH,     FERRY_MSG_TCLASS,
	FERRY_MSG_RANGES,    FERRY_MSG_PUBLISHED,
};

static inline void codec_sample_params(struct ferry_params *p)
{
	p->mode = FERRY_MODE_FILES;
	p->transports = 0x00000005;
	p->streams = 8;
	p->slots = 0x01020304;
	p->depth = 0xfffffffe;
	p->chunk_size = 0x0102030405060708ull;
	p->cksum = 3;
	p->total_bytes = 0xfedcba9876543210ull;
	p->xfer_id = 0x1122334455667788ull;
}

static inline void codec_sample_bytes(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + 13 * i);
}

static inline void codec_sample(uint16_t type, struct ferry_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->version = FERRY_PROTO_VERSION;
	switch (type) {
	case FERRY_MSG_HELLO:
		codec_sample_bytes(m->u.hello.nonce, FERRY_NONCE_LEN, 1);
		m->u.hello.flags = 0x80000001u;
		strcpy(m->u.hello.name, "atlas-2.lab:x_Y");
		break;
	case FERRY_MSG_CHALLENGE:
		codec_sample_bytes(m->u.challenge.nonce, FERRY_NONCE_LEN, 2);
		codec_sample_bytes(m->u.challenge.mac, FERRY_MAC_LEN, 3);
		m->u.challenge.flags = 0x01020304u;
		break;
	case FERRY_MSG_AUTH:
		codec_sample_bytes(m->u.auth.mac, FERRY_MAC_LEN, 4);
		break;
	case FERRY_MSG_PROPOSE:
		codec_sample_params(&m->u.propose);
		break;
	case FERRY_MSG_ACCEPT:
		codec_sample_params(&m->u.accept.params);
		m->u.accept.ep.len = 20;
		codec_sample_bytes(m->u.accept.ep.data, 20, 5);
		break;
	case FERRY_MSG_ERROR:
		m->u.error.code = -7;
		strcpy(m->u.error.text, "disk full\tretry\n");
		break;
	case FERRY_MSG_READY:
		m->u.ready.len = 9;
		codec_sample_bytes(m->u.ready.data, 9, 6);
		break;
	case FERRY_MSG_FIN:
		m->u.fin.bytes = 1ull << 40;
		m->u.fin.chunks = 0x0a0b0c0d0e0f1011ull;
		break;
	case FERRY_MSG_RESULT:
		m->u.result.bytes = 1;
		m->u.result.chunks = 2;
		m->u.result.crc_errors = 3;
		m->u.result.cpu_user_us = 0x1234567890ull;
		m->u.result.cpu_sys_us = UINT64_MAX;
		m->u.result.status = INT32_MIN;
		break;
	case FERRY_MSG_FILES:
		m->u.files.flags = 0x00000003;
		m->u.files.cksum = 2;
		m->u.files.n_entries = 0x0000000100000002ull;
		strcpy(m->u.files.dest, "run 7/\x01out");
		break;
	case FERRY_MSG_MANIFEST:
	case FERRY_MSG_PLAN:
	case FERRY_MSG_FILE_SUMS:
	case FERRY_MSG_FILE_DONES:
	case FERRY_MSG_RANGES:
		m->u.blob.last = type & 1;
		m->u.blob.len = 7 + type;
		codec_sample_bytes(m->u.blob.data, m->u.blob.len, type);
		break;
	case FERRY_MSG_PATH:
		m->u.path.fixed = FERRY_FIXED_STREAMS | FERRY_FIXED_SLOTS;
		m->u.path.rtt_us = 300123;
		m->u.path.rate_bps = 2000000000;
		m->u.path.mem_max = 4ull << 30;
		m->u.path.buf_tcp_max = 6u << 20;
		m->u.path.buf_core_max = 212992;
		m->u.path.buf_flags = FERRY_PATH_FORCE;
		m->u.path.sockbuf = 0x0102030405060708ull;
		break;
	case FERRY_MSG_TCLASS:
		m->u.tclass.dscp = 46; /* EF */
		break;
	case FERRY_MSG_FILE_SUM:
		m->u.file_sum.idx = 0x01020304;
		m->u.file_sum.flags = 1;
		m->u.file_sum.crc32c = 0xdeadbeef;
		m->u.file_sum.adler32 = 0x0badf00d;
		break;
	case FERRY_MSG_FILE_DONE:
		m->u.file_done.idx = 77;
		m->u.file_done.status = -5;
		m->u.file_done.crc32c = 0xcafebabe;
		m->u.file_done.adler32 = 0x12345678;
		strcpy(m->u.file_done.text, "no space");
		break;
	case FERRY_MSG_PUBLISHED:
		m->u.published.idx = 0x00a0b0c0;
		m->u.published.crc32c = 0x89abcdef;
		m->u.published.adler32 = 0x01234567;
		break;
	case FERRY_MSG_REQ:
		m->u.req.op = FERRY_REQ_MKDIR;
		m->u.req.flags = FERRY_REQ_PARENTS;
		m->u.req.arg = 0755;
		strcpy(m->u.req.path, "data/run 7/out.bin");
		m->u.req.len = 11;
		codec_sample_bytes(m->u.req.data, 11, 7);
		break;
	case FERRY_MSG_REPLY:
		m->u.reply.op = FERRY_REQ_LIST;
		m->u.reply.flags = FERRY_REPLY_LAST;
		m->u.reply.arg = 0x0102030405060708ull;
		m->u.reply.len = 13;
		codec_sample_bytes(m->u.reply.data, 13, 8);
		break;
	case FERRY_MSG_MARKER:
		m->u.marker.bytes = 1ull << 33;
		m->u.marker.total = 1ull << 34;
		m->u.marker.rate = 123456789;
		m->u.marker.elapsed_ms = 5000;
		m->u.marker.files_done = 3;
		m->u.marker.files_total = 0xfffffff0u;
		break;
	}
}

#endif
