/* The seed corpus comes from gen_corpus.py, an encoder written apart from
 * the C codec: check that each seed decodes as that script meant (and,
 * for a PUSH and a STAT reply, that lib/ctrl/req.c reads their data so). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/msg.h"
#include "ctrl/req.h"
#include "ferry/error.h"

static const struct {
	const char *name;
	int ret;
	uint16_t type;
} seeds[] = {
	{ "hello", 0, FERRY_MSG_HELLO },
	{ "hello_noauth", 0, FERRY_MSG_HELLO },
	{ "hello_named", 0, FERRY_MSG_HELLO },
	{ "challenge", 0, FERRY_MSG_CHALLENGE },
	{ "auth", 0, FERRY_MSG_AUTH },
	{ "propose", 0, FERRY_MSG_PROPOSE },
	{ "accept", 0, FERRY_MSG_ACCEPT },
	{ "error", 0, FERRY_MSG_ERROR },
	{ "ready", 0, FERRY_MSG_READY },
	{ "fin", 0, FERRY_MSG_FIN },
	{ "result", 0, FERRY_MSG_RESULT },
	{ "req_stat", 0, FERRY_MSG_REQ },
	{ "req_mkdir", 0, FERRY_MSG_REQ },
	{ "req_push", 0, FERRY_MSG_REQ },
	{ "reply_stat", 0, FERRY_MSG_REPLY },
	{ "reply_cksum", 0, FERRY_MSG_REPLY },
	{ "marker", 0, FERRY_MSG_MARKER },
	{ "path", 0, FERRY_MSG_PATH },
	{ "path_bad_flags", -FERRY_EPROTO, FERRY_MSG_PATH },
	{ "tclass", 0, FERRY_MSG_TCLASS },
	{ "tclass_bad_dscp", -FERRY_EPROTO, FERRY_MSG_TCLASS },
	{ "two_frames", 0, FERRY_MSG_READY },
	{ "version2", -FERRY_EVERSION, FERRY_MSG_HELLO },
	{ "too_big", -FERRY_ETOOBIG, 0 },
	{ "truncated", -EAGAIN, 0 },
	{ "hello_old_layout", -FERRY_EPROTO, FERRY_MSG_HELLO },
	{ "hello_bad_name", -FERRY_EPROTO, FERRY_MSG_HELLO },
	{ "hello_long_name", -FERRY_EPROTO, FERRY_MSG_HELLO },
	{ "req_path_escape", 0, FERRY_MSG_REQ },
	{ "req_path_nul", -FERRY_EPROTO, FERRY_MSG_REQ },
	{ "req_data_too_long", -FERRY_EPROTO, FERRY_MSG_REQ },
	{ "reply_len_past_body", -FERRY_EPROTO, FERRY_MSG_REPLY },
};

/* The PUSH spec in req_push, decoded by lib/ctrl/req.c. */
static int check_push(const struct ferry_msg_req *r)
{
	struct ferry_push_spec p;
	int ok;

	if (r->op != FERRY_REQ_PUSH || ferry__push_decode(r->data, r->len, &p))
		return 0;
	ok = strcmp(p.host, "dest.example.org") == 0 &&
	     strcmp(p.port, "7471") == 0 && strcmp(p.transport, "tcp") == 0 &&
	     strncmp(p.token, "token:a5a5", 10) == 0 && p.secret[31] == 31 &&
	     strcmp(p.dest, "in") == 0 && p.cksum == 2 && p.streams == 4 &&
	     p.flags == 1 && p.marker_ms == 1000 && p.n == 2 &&
	     strcmp(p.items[1].src, "/data/sub/b.txt") == 0 &&
	     strcmp(p.items[1].name, "sub/b.txt") == 0;
	ferry__push_free(&p);
	return ok;
}

/* A few fields, to catch byte-order or field-order drift. */
static int check_fields(const struct ferry_msg *m)
{
	struct ferry_rstat st;

	switch (m->type) {
	case FERRY_MSG_HELLO:
		return m->u.hello.nonce[31] == 31 && m->u.hello.flags <= 1 &&
		       (!m->u.hello.name[0] ||
			strcmp(m->u.hello.name,
			       "token:0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f") == 0);
	case FERRY_MSG_REQ:
		if (m->u.req.op == FERRY_REQ_PUSH)
			return check_push(&m->u.req);
		if (m->u.req.op == FERRY_REQ_MKDIR)
			return m->u.req.flags == FERRY_REQ_PARENTS &&
			       m->u.req.arg == 0755 &&
			       strcmp(m->u.req.path, "a/b/c") == 0;
		return m->u.req.op == FERRY_REQ_STAT && m->u.req.len == 0 &&
		       (strcmp(m->u.req.path, "data/run 7/out.bin") == 0 ||
			strcmp(m->u.req.path, "a\x1b[2Jb") == 0);
	case FERRY_MSG_REPLY:
		if (m->u.reply.op == FERRY_REQ_CKSUM)
			return m->u.reply.arg == 0xdeadbeef &&
			       m->u.reply.len == 0;
		return m->u.reply.op == FERRY_REQ_STAT &&
		       m->u.reply.flags == FERRY_REPLY_LAST &&
		       ferry__rstat_decode(m->u.reply.data, m->u.reply.len,
					   &st) == 0 &&
		       st.type == 1 && st.mode == 0644 && st.size == 12345 &&
		       st.mtime_ns == 1700000000123456789ll;
	case FERRY_MSG_PATH:
		return m->u.path.fixed == 0 && m->u.path.rtt_us == 300000 &&
		       m->u.path.rate_bps == 10000000000ull &&
		       m->u.path.mem_max == 4ull << 30 &&
		       m->u.path.buf_tcp_max == 6u << 20 &&
		       m->u.path.buf_core_max == 212992 &&
		       m->u.path.buf_flags == FERRY_PATH_FORCE &&
		       m->u.path.sockbuf == 0;
	case FERRY_MSG_TCLASS:
		return m->u.tclass.dscp == 46;
	case FERRY_MSG_MARKER:
		return m->u.marker.bytes == 5ull << 30 &&
		       m->u.marker.total == 10ull << 30 &&
		       m->u.marker.rate == 1ull << 30 &&
		       m->u.marker.elapsed_ms == 5000 &&
		       m->u.marker.files_done == 3 &&
		       m->u.marker.files_total == 7;
	case FERRY_MSG_PROPOSE:
		return m->u.propose.mode == FERRY_MODE_FILES &&
		       m->u.propose.transports ==
			       (1u | 4u) && /* tcp, verbs */
		       m->u.propose.chunk_size == 1u << 20 &&
		       m->u.propose.cksum == 1 &&
		       m->u.propose.total_bytes == 10ull << 30 &&
		       m->u.propose.xfer_id == 0x0123456789abcdefull;
	case FERRY_MSG_ACCEPT:
		return m->u.accept.params.depth == 16 &&
		       m->u.accept.ep.len == 30 &&
		       memcmp(m->u.accept.ep.data, "tcp ", 4) == 0;
	case FERRY_MSG_ERROR:
		return m->u.error.code == 28 &&
		       strcmp(m->u.error.text, "no space left on /data") == 0;
	case FERRY_MSG_RESULT:
		return m->u.result.cpu_user_us == 812345 &&
		       m->u.result.status == 0;
	default:
		return 1;
	}
}

/* corpus/req: byte 0 picks the decoder (as fuzz_req.c), the rest is its
 * input. */
static const struct {
	const char *name;
	int ret;
} req_seeds[] = {
	{ "stat_file", 0 },
	{ "stat_other", 0 },
	{ "stat_bad_type", -FERRY_EPROTO },
	{ "stat_bad_mode", -FERRY_EPROTO },
	{ "token", 0 },
	{ "token_bad_name", -FERRY_EPROTO },
	{ "token_short", -FERRY_EPROTO },
	{ "push", 0 },
	{ "push_no_items", 0 },
	{ "push_dotdot", -FERRY_EPROTO },
	{ "push_abs_name", -FERRY_EPROTO },
	{ "push_too_many", -FERRY_EPROTO },
	{ "push_bad_token", -FERRY_EPROTO },
	{ "results", 0 },
	{ "results_skipped2", -FERRY_EPROTO },
	{ "results_escape", -FERRY_EPROTO },
	{ "results_odd_name", 0 },
};

struct results_seen {
	unsigned n;
	bool ok, odd; /* odd: the one result of results_odd_name */
};

static int result_seen(void *arg, const struct ferry_push_result *r)
{
	struct results_seen *s = arg;

	s->odd = s->n == 0 && strcmp(r->name, "a\nb\x1b\xe9") == 0 &&
		 strcmp(r->why, "a\\nb") == 0;
	switch (s->n++) {
	case 0:
		s->ok = strcmp(r->name, "a.bin") == 0 && r->size == 4096 &&
			r->bytes_sent == 4096 && r->adler32 == 1 &&
			r->crc32c == 2;
		break;
	case 1:
		s->ok &= r->status == 13 &&
			 strcmp(r->why, "permission denied") == 0;
		break;
	default:
		s->ok &= r->skipped == 1 && r->adler32 == 0xffffffffu;
	}
	return 0;
}

/* Decode one req seed; on success check a few fields. */
static int req_decode(const uint8_t *b, size_t n, bool *fields_ok)
{
	struct ferry_rstat st;
	struct ferry_token_reply t;
	struct ferry_push_spec p;
	struct results_seen seen = { 0 };
	int ret;

	*fields_ok = false;
	if (n < 1)
		return -EINVAL;
	switch (b[0]) {
	case 0:
		ret = ferry__rstat_decode(b + 1, n - 1, &st);
		*fields_ok = st.type == FERRY_RSTAT_OTHER ?
				     st.mtime_ns == -1 :
				     st.type == 1 && st.mode == 0644 &&
					     st.size == 12345 &&
					     st.mtime_ns ==
						     1700000000123456789ll;
		return ret;
	case 1:
		ret = ferry__token_decode(b + 1, n - 1, &t);
		*fields_ok = strcmp(t.name, "token:0123456789abcdef0123456789"
					    "abcdef") == 0 &&
			     t.secret[0] == 200 && t.secret[31] == 231;
		return ret;
	case 2:
		ret = ferry__push_decode(b + 1, n - 1, &p);
		*fields_ok = strcmp(p.host, "dest.example.org") == 0 &&
			     p.marker_ms == 1000 &&
			     (p.n == 0 ||
			      (p.n == 2 &&
			       strcmp(p.items[0].src, "data/a.bin") == 0));
		ferry__push_free(&p);
		return ret;
	case 3:
		ret = ferry__results_decode(b + 1, n - 1, result_seen, &seen);
		*fields_ok = (seen.n == 3 && seen.ok) ||
			     (seen.n == 1 && seen.odd);
		return ret;
	}
	return -EINVAL;
}

/* Read a seed into buf; returns its length, or (size_t)-1. */
static size_t read_seed(const char *dir, const char *name, uint8_t *buf,
			size_t cap)
{
	char path[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return (size_t)-1;
	}
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static uint8_t buf[FERRY_CTRL_MAX_FRAME + 1];
	int failed = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CTRL_CORPUS_DIR REQ_CORPUS_DIR\n",
			argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct ferry_msg m;
		size_t n, used;
		int ret;

		n = read_seed(argv[1], seeds[i].name, buf, sizeof(buf));
		if (n == (size_t)-1)
			return 1;
		ret = ferry__ctrl_decode(buf, n, &m, &used);
		if (ret != seeds[i].ret ||
		    (seeds[i].type && m.type != seeds[i].type) ||
		    (ret == 0 && !check_fields(&m))) {
			fprintf(stderr, "%s: decode returned %d (%s), type %u\n",
				seeds[i].name, ret, ferry_strerror(ret),
				m.type);
			failed = 1;
		}
	}
	for (size_t i = 0; i < sizeof(req_seeds) / sizeof(req_seeds[0]); i++) {
		bool fields_ok;
		size_t n;
		int ret;

		n = read_seed(argv[2], req_seeds[i].name, buf, sizeof(buf));
		if (n == (size_t)-1)
			return 1;
		ret = req_decode(buf, n, &fields_ok);
		if (ret != req_seeds[i].ret || (ret == 0 && !fields_ok)) {
			fprintf(stderr, "req/%s: decode returned %d (%s)%s\n",
				req_seeds[i].name, ret, ferry_strerror(ret),
				ret == 0 ? ", fields differ" : "");
			failed = 1;
		}
	}
	return failed;
}
