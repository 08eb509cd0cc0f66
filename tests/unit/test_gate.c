/* The handshake gate (lib/daemon/gate.c): which connection makes room. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cu.h"
#include "daemon/gate.h"
#include "ferry/error.h"
#include "ferry/session.h"

#define N (FERRY_SERVER_HANDSHAKES + 2)

/* Connections as the gate sees them: our end (entered) and the peer's. */
static int ours[N], theirs[N];

static struct sockaddr_storage from(const char *ip)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(40000);
	inet_pton(AF_INET, ip, &a->sin_addr);
	return ss;
}

static void pairs(void)
{
	for (int i = 0; i < N; i++) {
		int sv[2];

		CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		ours[i] = sv[0];
		theirs[i] = sv[1];
	}
}

static void unpair(void)
{
	for (int i = 0; i < N; i++) {
		close(ours[i]);
		close(theirs[i]);
	}
}

/* Was fd shut down by the gate? (it reads EOF) */
static bool closed_fd(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pf, 1, 0) == 1 && recv(fd, &c, 1, MSG_PEEK) == 0;
}

static bool closed(int i)
{
	return closed_fd(ours[i]);
}

static void test_all_full(void)
{
	struct ferry__gate *g;
	char why[256] = "", ip[32];

	pairs();
	CU_ASSERT_EQUAL_FATAL(ferry__gate_open(&g), 0);
	/* 64 from 64 addresses; the first two speak */
	for (int i = 0; i < FERRY_SERVER_HANDSHAKES; i++) {
		struct sockaddr_storage ss;

		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 200, 1 + i % 200);
		ss = from(ip);
		CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[i], &ss), 0);
	}
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(write(theirs[i], "F", 1), 1);
		CU_ASSERT_EQUAL(ferry__gate_first_byte(g, ours[i], 1000), 0);
	}
	CU_ASSERT_EQUAL(ferry__gate_first_byte(g, ours[2], 10),
			-FERRY_ETIMEOUT);
	for (int i = 0; i < FERRY_SERVER_HANDSHAKES; i++)
		CU_ASSERT(!closed(i));
	/* one more: the oldest that has sent nothing makes room */
	struct sockaddr_storage ss = from("10.9.9.9");
	CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[N - 2], &ss), 0);
	CU_ASSERT(!closed(0) && !closed(1));
	CU_ASSERT(closed(2));
	CU_ASSERT(!closed(3) && !closed(N - 2));
	/* it leaves saying why; the others leave quietly */
	CU_ASSERT(ferry__gate_leave(g, ours[2], why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "closed in its handshake to make "
					   "room: 64 connections in all were "
					   "in theirs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "sent nothing"));
	CU_ASSERT(!ferry__gate_leave(g, ours[3], why, sizeof(why)));
	/* room again: the next one closes nobody */
	CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[N - 1], &ss), 0);
	for (int i = 4; i < FERRY_SERVER_HANDSHAKES; i++)
		CU_ASSERT(!closed(i));
	ferry__gate_close(g);
	unpair();
}

static void test_one_address(void)
{
	struct sockaddr_storage a = from("192.0.2.7"), b = from("192.0.2.8");
	struct ferry__gate *g;
	char why[256] = "";

	pairs();
	CU_ASSERT_EQUAL_FATAL(ferry__gate_open(&g), 0);
	for (int i = 0; i < GATE_PER_ADDR; i++)
		CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[i], &a), 0);
	/* another address has room of its own */
	CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[GATE_PER_ADDR], &b), 0);
	for (int i = 0; i <= GATE_PER_ADDR; i++)
		CU_ASSERT(!closed(i));
	/* one more from a: a's oldest goes, b's stays */
	CU_ASSERT_EQUAL(ferry__gate_enter(g, ours[GATE_PER_ADDR + 1], &a), 0);
	CU_ASSERT(closed(0));
	CU_ASSERT(!closed(GATE_PER_ADDR));
	CU_ASSERT(ferry__gate_leave(g, ours[0], why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "16 connections from its address"));
	ferry__gate_close(g);
	unpair();
}

/* Numbers closed without a session (an app that drops a connection
 * unserved) and handed out again: each old entry goes when its number
 * comes back, so the gate never fills with them. */
static void test_stale_numbers(void)
{
	struct sockaddr_storage a = from("192.0.2.9");
	struct ferry__gate *g;
	int ok = 0;

	CU_ASSERT_EQUAL_FATAL(ferry__gate_open(&g), 0);
	for (int i = 0; i < 4 * FERRY_SERVER_HANDSHAKES; i++) {
		int sv[2];

		CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		ok += ferry__gate_enter(g, sv[0], &a) == 0 && !closed_fd(sv[0]);
		close(sv[0]);
		close(sv[1]);
	}
	CU_ASSERT_EQUAL(ok, 4 * FERRY_SERVER_HANDSHAKES);
	ferry__gate_close(g);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "the oldest silent one makes room", test_all_full },
		{ "one address's share", test_one_address },
		{ "stale numbers", test_stale_numbers },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("gate", tests);
}
