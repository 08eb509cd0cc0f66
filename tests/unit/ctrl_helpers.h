/* What the control-channel tests (test_ctrl.c, test_auth.c) share. */
#ifndef FERRY_TEST_CTRL_HELPERS_H
#define FERRY_TEST_CTRL_HELPERS_H

#include <string.h>
#include <sys/socket.h>

#include "cu.h"
#include "ctrl/msg.h"

#define IO_MS 5000
#define HELLO_NAME "atlas-2.lab:x_Y"

/* A connected pair of stream sockets. */
static inline void pair(int sv[2])
{
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

/* A HELLO with every field distinct and non-zero. */
static inline void sample_hello(struct ferry_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = FERRY_MSG_HELLO;
	m->version = FERRY_PROTO_VERSION;
	for (int i = 0; i < FERRY_NONCE_LEN; i++)
		m->u.hello.nonce[i] = (uint8_t)(i + 1);
	m->u.hello.flags = 0x80000001u;
	strcpy(m->u.hello.name, HELLO_NAME);
}

#endif
