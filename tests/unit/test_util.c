#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/log.h"
#include "util/util.h"

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(ferry_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(ferry_strerror(-FERRY_EAUTH),
			       "authentication failed (the peers' keys differ)");
	CU_ASSERT_STRING_EQUAL(ferry_strerror(-ENOENT),
			       "No such file or directory");
	CU_ASSERT_PTR_NOT_NULL(ferry_strerror(-999999));
}

/* ---- escaping: what a name or a peer's text becomes when printed ---- */

static const struct {
	const char *in, *out;
} esc_cases[] = {
	{ "", "" },
	{ "plain name.root", "plain name.root" },
	{ "a\\b", "a\\b" }, /* the backslash stays */
	{ "a\nb", "a\\nb" },
	{ "\t\r", "\\t\\r" },
	{ "\x1b[31mred", "\\x1b[31mred" },
	{ "\x01\x1f\x7f", "\\x01\\x1f\\x7f" },
	{ "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\xa2", /* é 日 🚢 */
	  "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\xa2" },
	{ "\xc2\x9b" "2J", "\\xc2\\x9b2J" },   /* C1 CSI */
	{ "\xc2\xa0", "\xc2\xa0" },            /* U+00A0 is not a control */
	{ "\x80", "\\x80" },                   /* a lone continuation */
	{ "\xc0\xaf", "\\xc0\\xaf" },          /* overlong '/' */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" }, /* overlong, 3 bytes */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" }, /* a UTF-16 surrogate */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* above U+10FFFF */
	{ "\xff\xfe", "\\xff\\xfe" },
	{ "cut \xe6\x97", "cut \\xe6\\x97" },  /* a character cut short */
	{ "latin1 \xe9t\xe9", "latin1 \\xe9t\\xe9" },
};

static void test_escape(void)
{
	char out[256], again[256];

	for (size_t i = 0; i < FERRY__ARRAY_SIZE(esc_cases); i++) {
		ferry_escape(esc_cases[i].in, out, sizeof(out));
		CU_ASSERT_STRING_EQUAL(out, esc_cases[i].out);
		/* escaping escaped text changes nothing */
		ferry_escape(out, again, sizeof(again));
		CU_ASSERT_STRING_EQUAL(again, out);
	}
	CU_ASSERT_STRING_EQUAL(ferry_escape(NULL, out, sizeof(out)), "");
}

/* Every byte string escapes to printable ASCII and valid UTF-8 without
 * controls, and escaping it again changes nothing. */
static void test_escape_random(void)
{
	char in[64], out[FERRY_ESCAPED_MAX(64)], again[sizeof(out)];
	uint32_t x = 12345;

	for (int round = 0; round < 20000; round++) {
		size_t n = 1 + round % 63;
		bool ok;

		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			in[i] = (char)(1 + (x >> 16) % 255);
		}
		in[n] = '\0';
		ferry_escape(in, out, sizeof(out));
		ok = strlen(out) <= 4 * n;
		for (const unsigned char *p = (unsigned char *)out; ok && *p;
		     p++) {
			int k = ferry__utf8_len(p);

			ok = k > 0 && *p >= 0x20 && *p != 0x7f &&
			     !(p[0] == 0xc2 && p[1] < 0xa0);
			p += k > 0 ? k - 1 : 0;
		}
		ferry_escape(out, again, sizeof(again));
		ok = ok && !strcmp(again, out);
		CU_ASSERT(ok);
		if (!ok)
			break;
	}
}

/* A short buffer cuts between escapes and characters, never inside. */
static void test_escape_cut(void)
{
	char out[8];

	CU_ASSERT_STRING_EQUAL(ferry_escape("\n\n", out, 4), "\\n");
	CU_ASSERT_STRING_EQUAL(ferry_escape("ab\x1b", out, 6), "ab");
	CU_ASSERT_STRING_EQUAL(ferry_escape("ab\x1b", out, 7), "ab\\x1b");
	CU_ASSERT_STRING_EQUAL(ferry_escape("a\xc3\xa9", out, 3), "a");
	CU_ASSERT_STRING_EQUAL(ferry_escape("abc", out, 1), "");
	out[0] = 'z';
	ferry_escape("abc", out, 0); /* nothing written */
	CU_ASSERT_EQUAL(out[0], 'z');
}

/* Reasons and log lines quote names: one line each, whatever the name. */
static char logged[1024];

static void capture(enum ferry_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(logged, sizeof(logged), "%s", msg);
}

static void test_why_and_log(void)
{
	static const char forged[] =
		"x\nferry recv: [session 999 from 10.1.1.1:1] session failed: "
		"\x1b[2Jforged";
	char why[256];

	ferry__why(why, sizeof(why), "cannot open %s: %s", forged, "gone");
	CU_ASSERT_STRING_EQUAL(why,
			       "cannot open x\\nferry recv: [session 999 from "
			       "10.1.1.1:1] session failed: \\x1b[2Jforged: "
			       "gone");
	/* why may quote itself, and escaping twice changes nothing */
	ferry__why(why, sizeof(why), "outer: %s", why);
	CU_ASSERT_EQUAL(strncmp(why, "outer: cannot open x\\nferry", 27), 0);
	CU_ASSERT_PTR_NULL(strchr(why, '\n'));
	/* cut to the buffer */
	ferry__why(why, 8, "%s", "abcdefghij");
	CU_ASSERT_STRING_EQUAL(why, "abcdefg");

	ferry_log_set(capture, NULL, FERRY_LOG_INFO);
	ferry__log(FERRY_LOG_INFO, "published %s", forged);
	CU_ASSERT_EQUAL(strncmp(logged, "published x\\nferry recv: ", 25), 0);
	CU_ASSERT_PTR_NULL(strchr(logged, '\n'));
	CU_ASSERT_PTR_NULL(strchr(logged, '\x1b'));
	ferry_log_set(NULL, NULL, FERRY_LOG_INFO);
}

/* ferry__task_cpu: another thread's CPU time, read while it lives. */
static _Atomic int spin_tid;
static atomic_bool spin_done, spin_exit;

static void *spinner(void *arg)
{
	uint64_t t0 = ferry__now_ns();
	volatile uint64_t x = 0;

	(void)arg;
	atomic_store(&spin_tid, (int)syscall(SYS_gettid));
	while (ferry__now_ns() - t0 < 300000000ull) /* 0.3 s of CPU */
		x++;
	atomic_store(&spin_done, true);
	while (!atomic_load(&spin_exit))
		usleep(1000);
	return NULL;
}

static void test_task_cpu(void)
{
	pthread_t th;
	double u, s;

	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, spinner, NULL), 0);
	while (!atomic_load(&spin_done))
		usleep(1000);
	CU_ASSERT_EQUAL(ferry__task_cpu(atomic_load(&spin_tid), &u, &s), 0);
	/* it spun 0.3 s of wall time; on a loaded host it got less CPU,
	 * but never none, and never more than the wall time */
	CU_ASSERT(u + s > 0.01 && u + s < 1.0);
	atomic_store(&spin_exit, true);
	pthread_join(th, NULL);
	/* a thread that is gone: an error, and zeros */
	CU_ASSERT(ferry__task_cpu(atomic_load(&spin_tid), &u, &s) < 0);
	CU_ASSERT(u == 0 && s == 0);
}

/* ---- DSCP marking (util/dscp.c) ---- */

static int sockopt_int(int fd, int level, int opt)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, level, opt, &v, &l) < 0)
		return -1;
	return v;
}

static void test_dscp(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), sp[2];

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ferry__dscp_set(fd, 10), 0);
	CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IP, IP_TOS), 10 << 2);
	CU_ASSERT_EQUAL(ferry__dscp_set(fd, -1), 0); /* left as it was */
	CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IP, IP_TOS), 10 << 2);
	CU_ASSERT_EQUAL(ferry__dscp_set(fd, 63), 0);
	CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IP, IP_TOS), 0xfc);
	CU_ASSERT_EQUAL(ferry__dscp_set(fd, 64), -EINVAL);
	CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IP, IP_TOS), 0xfc);
	close(fd);

	/* IPv6: the traffic class, and IP_TOS for v4-mapped peers */
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd >= 0) {
		CU_ASSERT_EQUAL(ferry__dscp_set(fd, 46), 0);
		CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IPV6, IPV6_TCLASS),
				46 << 2);
		CU_ASSERT_EQUAL(sockopt_int(fd, IPPROTO_IP, IP_TOS), 46 << 2);
		close(fd);
	}

	/* not an IP socket */
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	CU_ASSERT_EQUAL(ferry__dscp_set(sp[0], 10), -EAFNOSUPPORT);
	CU_ASSERT_EQUAL(ferry__dscp_set(sp[0], -1), 0);
	close(sp[0]);
	close(sp[1]);
}

/* A listener's class goes to the connections it accepts (the receiver
 * marks its control port so), and a dialled one keeps its own. */
static void test_dscp_accepted(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int cfd = socket(AF_INET, SOCK_STREAM, 0), afd;

	CU_ASSERT_FATAL(lfd >= 0 && cfd >= 0);
	CU_ASSERT_EQUAL(ferry__dscp_set(lfd, 26), 0);
	CU_ASSERT_EQUAL(ferry__dscp_set(cfd, 10), 0);
	CU_ASSERT_EQUAL_FATAL(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	CU_ASSERT_EQUAL_FATAL(listen(lfd, 1), 0);
	CU_ASSERT_EQUAL_FATAL(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	CU_ASSERT_EQUAL_FATAL(connect(cfd, (struct sockaddr *)&a, al), 0);
	afd = accept(lfd, NULL, NULL);
	CU_ASSERT_FATAL(afd >= 0);
	/* TCP may set the ECN bits itself: the DSCP is the top six */
	CU_ASSERT_EQUAL(sockopt_int(afd, IPPROTO_IP, IP_TOS) & 0xfc, 26 << 2);
	CU_ASSERT_EQUAL(sockopt_int(cfd, IPPROTO_IP, IP_TOS) & 0xfc, 10 << 2);
	close(afd);
	close(cfd);
	close(lfd);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "strerror", test_strerror },
		{ "a thread's CPU time", test_task_cpu },
		{ "escape", test_escape },
		{ "escape: any bytes", test_escape_random },
		{ "escape: cut to fit", test_escape_cut },
		{ "reasons and log lines are escaped", test_why_and_log },
		{ "DSCP: IP_TOS and IPV6_TCLASS", test_dscp },
		{ "DSCP: an accepted socket has its listener's", test_dscp_accepted },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("util", tests);
}
