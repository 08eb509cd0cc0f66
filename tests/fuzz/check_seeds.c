/* The seed corpus comes from gen_corpus.py, an encoder written apart from
 * the C codec: check that each seed decodes as that script meant. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/msg.h"
#include "ferry/error.h"

static const struct {
	const char *name;
	int ret;
	uint16_t type;
} seeds[] = {
	{ "hello", 0, FERRY_MSG_HELLO },
	{ "hello_noauth", 0, FERRY_MSG_HELLO },
	{ "challenge", 0, FERRY_MSG_CHALLENGE },
	{ "auth", 0, FERRY_MSG_AUTH },
	{ "propose", 0, FERRY_MSG_PROPOSE },
	{ "accept", 0, FERRY_MSG_ACCEPT },
	{ "error", 0, FERRY_MSG_ERROR },
	{ "ready", 0, FERRY_MSG_READY },
	{ "fin", 0, FERRY_MSG_FIN },
	{ "result", 0, FERRY_MSG_RESULT },
	{ "two_frames", 0, FERRY_MSG_READY },
	{ "version2", -FERRY_EVERSION, FERRY_MSG_HELLO },
	{ "too_big", -FERRY_ETOOBIG, 0 },
	{ "truncated", -EAGAIN, 0 },
};

/* A few fields, to catch byte-order or field-order drift. */
static int check_fields(const struct ferry_msg *m)
{
	switch (m->type) {
	case FERRY_MSG_HELLO:
		return m->u.hello.nonce[31] == 31 && m->u.hello.flags <= 1;
	case FERRY_MSG_PROPOSE:
		return m->u.propose.mode == FERRY_MODE_FILES &&
		       m->u.propose.transports ==
			       (FERRY_XPORT_TCP | FERRY_XPORT_VERBS) &&
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

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[4096];
		uint8_t buf[4096];
		struct ferry_msg m;
		size_t n, used;
		FILE *f;
		int ret;

		snprintf(path, sizeof(path), "%s/%s", argv[1], seeds[i].name);
		f = fopen(path, "rb");
		if (!f) {
			perror(path);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
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
	return failed;
}
