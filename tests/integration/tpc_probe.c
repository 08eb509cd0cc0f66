/* tpc_probe: drive third-party copy's two steps by hand, to show that a
 * token is refused when it is reused, expired or used for other files
 * than it names (tests/integration/tpc_tokens.sh).
 *
 * usage: tpc_probe MODE SRC_HOST SRC_PORT DST_HOST DST_PORT SRC DEST NAME
 *   MODE  once     token for DEST/NAME, one push: must work
 *         reuse    token, push, and the same token again
 *         expire   a token of 1 s, used after 2.5 s
 *         name     token for NAME, push under NAME.other
 *         size     token for one byte more than SRC has
 *         dest     token for DEST, push into DEST.other
 * Key: $FERRY_KEY (file) under $FERRY_KEY_NAME.
 * Prints "ok" or "refused: WHY" for the push that matters; exit 0 when the
 * outcome is the one MODE expects (once: ok; the others: refused with
 * EACCES or FERRY_EAUTH), 1 otherwise, 2 on bad usage or set-up failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/remote.h"
#include "ferry/error.h"

static int token(const char *host, const char *port,
		 const struct ferry_opts *o, struct ferry_copy *cp,
		 uint64_t size, unsigned ttl, char *name, struct ferry_key *k)
{
	struct ferry_remote c;
	char why[512] = "";
	uint64_t expiry;
	int err = ferry__remote_connect(host, port, o, &c, why, sizeof(why));

	if (!err)
		err = ferry__remote_token(&c, cp, &size, ttl, name, k, &expiry,
					  why, sizeof(why));
	ferry__remote_disconnect(&c);
	if (err)
		fprintf(stderr, "tpc_probe: token: %s\n", why);
	return err;
}

static int push(const char *host, const char *port, const char *dhost,
		const char *dport, const struct ferry_opts *o,
		const struct ferry_copy *cp, const char *name,
		const struct ferry_key *k, bool show)
{
	struct ferry_remote c;
	char why[512] = "";
	int err = ferry__remote_connect(host, port, o, &c, why, sizeof(why));

	if (!err)
		err = ferry__remote_push_req(&c, dhost, dport, o, name, k, cp,
					     why, sizeof(why));
	ferry__remote_disconnect(&c);
	if (show) {
		if (err)
			printf("refused: %s (%s)\n", why, ferry_strerror(err));
		else
			printf("ok\n");
	}
	return err;
}

int main(int argc, char **argv)
{
	struct ferry_opts o;
	struct ferry_key key, k;
	struct ferry_remote c;
	struct ferry_remote_stat st;
	char why[512] = "", name[FERRY_KEYNAME_MAX + 1], dest2[4200];
	char other[4200];
	const char *mode, *kp = getenv("FERRY_KEY");
	char *src[1], *names[1], *names2[1];
	struct ferry_copy cp = { .n = 1, .cksum = FERRY_CKSUM_ADLER32 };
	struct ferry_copy cp2;
	uint64_t size;
	int err;

	if (argc != 9 || !kp) {
		fprintf(stderr, "usage: FERRY_KEY=F FERRY_KEY_NAME=N tpc_probe MODE SRC_HOST SRC_PORT DST_HOST DST_PORT SRC DEST NAME\n");
		return 2;
	}
	mode = argv[1];
	ferry_opts_init(&o);
	o.streams = 2;
	o.key_name = getenv("FERRY_KEY_NAME");
	if (ferry_key_load(kp, &key, why, sizeof(why))) {
		fprintf(stderr, "tpc_probe: %s\n", why);
		return 2;
	}
	o.key = &key;
	src[0] = argv[6];
	names[0] = argv[8];
	cp.src = src;
	cp.names = names;
	cp.dest = argv[7];
	err = ferry__remote_connect(argv[2], argv[3], &o, &c, why, sizeof(why));
	if (!err)
		err = ferry_remote_stat(&c, argv[6], &st, why, sizeof(why));
	ferry__remote_disconnect(&c);
	if (err) {
		fprintf(stderr, "tpc_probe: stat %s: %s\n", argv[6], why);
		return 2;
	}
	size = st.size;
	cp2 = cp;
	if (!strcmp(mode, "name")) {
		snprintf(other, sizeof(other), "%s.other", argv[8]);
		names2[0] = other;
		cp2.names = names2;
	} else if (!strcmp(mode, "dest")) {
		snprintf(dest2, sizeof(dest2), "%s.other", argv[7]);
		cp2.dest = dest2;
	} else if (!strcmp(mode, "size")) {
		size++;
	} else if (strcmp(mode, "once") && strcmp(mode, "reuse") &&
		   strcmp(mode, "expire")) {
		fprintf(stderr, "tpc_probe: unknown mode %s\n", mode);
		return 2;
	}
	if (token(argv[4], argv[5], &o, &cp, size,
		  !strcmp(mode, "expire") ? 1 : 0, name, &k))
		return 2;
	if (!strcmp(mode, "reuse")) {
		if (push(argv[2], argv[3], argv[4], argv[5], &o, &cp, name, &k,
			 false)) {
			fprintf(stderr, "tpc_probe: the first use failed\n");
			return 1;
		}
	}
	if (!strcmp(mode, "expire"))
		usleep(2500000);
	err = push(argv[2], argv[3], argv[4], argv[5], &o, &cp2, name, &k,
		   true);
	if (!strcmp(mode, "once"))
		return err ? 1 : 0;
	return err == -EACCES || err == -FERRY_EAUTH ? 0 : 1;
}
