/* Control channel authentication: the handshake, key names, the
 * wrapping key and ferry__ctrl_wrap. */
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "cu.h"
#include "ctrl/msg.h"
#include "ctrl_helpers.h"
#include "ferry/error.h"

/* ---- the handshake ---- */

struct server_run {
	int fd;
	const struct ferry_key *key;
	int timeout_ms;
	int ret;
	char why[256];
};

static void *server_main(void *arg)
{
	struct server_run *s = arg;

	s->ret = ferry__ctrl_auth_server(s->fd, s->key, s->timeout_ms, s->why,
					 sizeof(s->why));
	return NULL;
}

/* Run both sides of the handshake; returns the client's result. */
static int handshake(const struct ferry_key *kc, const struct ferry_key *ks,
		     struct server_run *s, char *why, size_t whylen)
{
	pthread_t th;
	int sv[2], ret;

	pair(sv);
	*s = (struct server_run){ .fd = sv[1], .key = ks, .timeout_ms = IO_MS };
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, server_main, s), 0);
	ret = ferry__ctrl_auth_client(sv[0], kc, IO_MS, why, whylen);
	pthread_join(th, NULL);
	if (ret == 0 && s->ret == 0) {
		/* Both sides are in step: the server speaks next. */
		struct ferry_msg m = { .type = FERRY_MSG_READY };

		CU_ASSERT_EQUAL(ferry__ctrl_send(sv[1], &m, IO_MS), 0);
		CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], &m, IO_MS), 0);
		CU_ASSERT_EQUAL(m.type, FERRY_MSG_READY);
	}
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static void test_auth_same_key(void)
{
	struct ferry_key k;
	struct server_run s;
	char why[256] = "";

	CU_ASSERT_EQUAL_FATAL(ferry__random(k.bytes, sizeof(k.bytes)), 0);
	CU_ASSERT_EQUAL(handshake(&k, &k, &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
}

static void test_auth_different_keys(void)
{
	struct ferry_key kc, ks;
	struct server_run s;
	char why[256] = "";

	memset(&kc, 1, sizeof(kc));
	memset(&ks, 1, sizeof(ks));
	ks.bytes[31] ^= 1;
	CU_ASSERT_EQUAL(handshake(&kc, &ks, &s, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "server's key differs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "client refused"));
}

static void test_auth_noauth(void)
{
	struct ferry_key k;
	struct server_run s;
	char why[256] = "";

	memset(&k, 9, sizeof(k));
	/* Both without a key: the loopback-test mode. */
	CU_ASSERT_EQUAL(handshake(NULL, NULL, &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	/* Only the client has a key: it refuses a server without one. */
	CU_ASSERT_EQUAL(handshake(&k, NULL, &s, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "without authentication"));
	/* Only the server has a key: it refuses a client without one. */
	CU_ASSERT_EQUAL(handshake(NULL, &k, &s, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "server refused"));
}

/* A hand-made client: the MAC construction msg.h documents. */
static void client_mac(const struct ferry_key *k, const uint8_t *nonce_s,
		       const uint8_t *nonce_c, uint8_t *mac)
{
	uint8_t data[15 + 64];
	unsigned int n = 0;

	memcpy(data, "ferry-v1 client", 15);
	memcpy(data + 15, nonce_s, 32);
	memcpy(data + 47, nonce_c, 32);
	CU_ASSERT_PTR_NOT_NULL(HMAC(EVP_sha256(), k->bytes, 32, data,
				    sizeof(data), mac, &n));
}

/* One session against a real server, answering with mac (NULL: the
 * right one). Returns the server's result; *mac_out gets our AUTH. */
static int manual_session(const struct ferry_key *k, const uint8_t *mac,
			  uint8_t *mac_out, struct ferry_msg *reply)
{
	struct ferry_msg hello, auth = { .type = FERRY_MSG_AUTH };
	struct server_run s;
	pthread_t th;
	int sv[2];

	pair(sv);
	s = (struct server_run){ .fd = sv[1], .key = k, .timeout_ms = IO_MS };
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, server_main, &s), 0);
	sample_hello(&hello);
	hello.u.hello.flags = 0;
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &hello, IO_MS), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], reply, IO_MS), 0);
	CU_ASSERT_EQUAL(reply->type, FERRY_MSG_CHALLENGE);
	if (mac)
		memcpy(auth.u.auth.mac, mac, FERRY_MAC_LEN);
	else
		client_mac(k, reply->u.challenge.nonce, hello.u.hello.nonce,
			   auth.u.auth.mac);
	memcpy(mac_out, auth.u.auth.mac, FERRY_MAC_LEN);
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &auth, IO_MS), 0);
	pthread_join(th, NULL);
	if (s.ret)
		CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], reply, IO_MS),
				-FERRY_EPEER);
	close(sv[0]);
	close(sv[1]);
	return s.ret;
}

static void test_auth_replay(void)
{
	uint8_t mac1[FERRY_MAC_LEN], mac2[FERRY_MAC_LEN];
	uint8_t nonce1[FERRY_NONCE_LEN];
	struct ferry_msg reply;
	struct ferry_key k;

	memset(&k, 0x5a, sizeof(k));
	/* A correct session, recorded. */
	CU_ASSERT_EQUAL(manual_session(&k, NULL, mac1, &reply), 0);
	memcpy(nonce1, reply.u.challenge.nonce, FERRY_NONCE_LEN);
	/* The same HELLO and the recorded AUTH in a new session. */
	CU_ASSERT_EQUAL(manual_session(&k, mac1, mac2, &reply), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(reply.type, FERRY_MSG_ERROR);
	CU_ASSERT_EQUAL(reply.u.error.code, FERRY_EAUTH);
}

static void test_auth_protocol_errors(void)
{
	uint8_t buf[1024];
	size_t len = 0;
	struct ferry_msg m;
	char why[256] = "";
	int sv[2];

	sample_hello(&m);
	CU_ASSERT_EQUAL_FATAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			      0);

	/* A client of another version gets an ERROR it can print. */
	pair(sv);
	buf[8] = 2;
	CU_ASSERT_EQUAL(write(sv[0], buf, len), (ssize_t)len);
	CU_ASSERT_EQUAL(ferry__ctrl_auth_server(sv[1], NULL, IO_MS, why,
						sizeof(why)),
			-FERRY_EVERSION);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], &m, IO_MS), -FERRY_EPEER);
	CU_ASSERT_EQUAL(m.u.error.code, FERRY_EVERSION);
	close(sv[0]);
	close(sv[1]);

	/* A message out of turn. */
	pair(sv);
	m = (struct ferry_msg){ .type = FERRY_MSG_READY,
				.version = FERRY_PROTO_VERSION };
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &m, IO_MS), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_auth_server(sv[1], NULL, IO_MS, why,
						sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "READY"));
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], &m, IO_MS), -FERRY_EPEER);
	CU_ASSERT_EQUAL(m.u.error.code, FERRY_EPROTO);
	close(sv[0]);
	close(sv[1]);

	/* A silent client. */
	pair(sv);
	CU_ASSERT_EQUAL(ferry__ctrl_auth_server(sv[1], NULL, 200, why,
						sizeof(why)),
			-FERRY_ETIMEOUT);
	close(sv[0]);
	close(sv[1]);
}

/* ---- key names and the wrapping key ---- */

/* A daemon's keys: two names. */
static struct ferry_key key_alice, key_token;
#define TOKEN_NAME "token:00112233445566778899aabbccddeeff"

static int lookup_table(void *arg, const char *name, struct ferry_key *key,
			char *why, size_t whylen)
{
	int *calls = arg;

	++*calls;
	if (strcmp(name, "alice") == 0) {
		*key = key_alice;
		return 0;
	}
	if (strcmp(name, TOKEN_NAME) == 0) {
		*key = key_token;
		return 0;
	}
	if (!name[0])
		snprintf(why, whylen, "this daemon needs a key name");
	else if (strcmp(name, "quiet") != 0) /* quiet: no sentence */
		snprintf(why, whylen, "unknown key name %s", name);
	return -FERRY_EAUTH;
}

struct server_ex_run {
	int fd;
	struct ferry__auth_cfg cfg;
	int ret;
	struct ferry__authed out;
	char why[256];
};

static void *server_ex_main(void *arg)
{
	struct server_ex_run *s = arg;

	s->ret = ferry__ctrl_auth_server_ex(s->fd, &s->cfg, IO_MS, &s->out,
					    s->why, sizeof(s->why));
	return NULL;
}

/* Run both sides, the client with key kc and name; returns the
 * client's result, its wrap in wrap. */
static int handshake_ex(const struct ferry_key *kc, const char *name,
			struct server_ex_run *s, uint8_t *wrap, char *why,
			size_t whylen)
{
	pthread_t th;
	int sv[2], ret;

	pair(sv);
	s->fd = sv[1];
	s->ret = 12345;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, server_ex_main, s),
			      0);
	ret = ferry__ctrl_auth_client_ex(sv[0], kc, name, IO_MS, wrap, why,
					 whylen);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void setup_keys(void)
{
	memset(&key_alice, 0xa1, sizeof(key_alice));
	memset(&key_token, 0x70, sizeof(key_token));
	key_token.bytes[0] = 1;
}

static void test_auth_ex_names(void)
{
	struct server_ex_run s;
	uint8_t wrap[FERRY_KEY_LEN], wrap1[FERRY_KEY_LEN];
	char why[256] = "";
	int calls = 0;

	setup_keys();
	s = (struct server_ex_run){ .cfg = { .lookup = lookup_table,
					     .arg = &calls } };
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "alice", &s, wrap, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_EQUAL(calls, 1);
	CU_ASSERT_STRING_EQUAL(s.out.name, "alice");
	/* Both sides derived the same wrapping key, and it is not zero. */
	CU_ASSERT_EQUAL(memcmp(wrap, s.out.wrap, FERRY_KEY_LEN), 0);
	CU_ASSERT(!all_zero(wrap, FERRY_KEY_LEN));
	memcpy(wrap1, wrap, FERRY_KEY_LEN);

	/* Another connection, another wrapping key (fresh nonces). */
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "alice", &s, wrap, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_EQUAL(memcmp(wrap, s.out.wrap, FERRY_KEY_LEN), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(wrap, wrap1, FERRY_KEY_LEN), 0);

	/* The other name, with its own key. */
	CU_ASSERT_EQUAL(handshake_ex(&key_token, TOKEN_NAME, &s, wrap, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_STRING_EQUAL(s.out.name, TOKEN_NAME);
	CU_ASSERT_EQUAL(memcmp(wrap, s.out.wrap, FERRY_KEY_LEN), 0);

	/* The wrapping key is NULL-able on the client. */
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "alice", &s, NULL, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);

	/* A server with one key takes any name, and reports it. */
	s = (struct server_ex_run){ .cfg = { .key = &key_alice } };
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "whoever", &s, wrap, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_STRING_EQUAL(s.out.name, "whoever");
	CU_ASSERT_EQUAL(memcmp(wrap, s.out.wrap, FERRY_KEY_LEN), 0);
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, NULL, &s, wrap, why,
				     sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_STRING_EQUAL(s.out.name, "");
}

static void test_auth_ex_refused(void)
{
	struct server_ex_run s;
	uint8_t wrap[FERRY_KEY_LEN];
	char why[256] = "";
	int calls = 0;

	setup_keys();
	s = (struct server_ex_run){ .cfg = { .lookup = lookup_table,
					     .arg = &calls } };
	/* An unknown name: the lookup's sentence reaches the client. */
	memset(wrap, 0xee, sizeof(wrap));
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "atlas2", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "server refused: authentication "
					   "failed: unknown key name "
					   "atlas2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "unknown key name atlas2"));
	CU_ASSERT(all_zero(wrap, sizeof(wrap)));
	CU_ASSERT(all_zero(s.out.wrap, sizeof(s.out.wrap)));
	CU_ASSERT_STRING_EQUAL(s.out.name, "");

	/* No name, where the lookup wants one. */
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "this daemon needs a key name"));
	/* A lookup that fails without a sentence still gives one. */
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "quiet", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown key name quiet"));

	/* A known name with the wrong key: the client finds the server's
	 * MAC wrong, and both fail. */
	CU_ASSERT_EQUAL(handshake_ex(&key_token, "alice", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "server's key differs"));
	CU_ASSERT(all_zero(wrap, sizeof(wrap)));
	CU_ASSERT(all_zero(s.out.wrap, sizeof(s.out.wrap)));

	/* A client without a key, against a server with a lookup. */
	calls = 0;
	CU_ASSERT_EQUAL(handshake_ex(NULL, "alice", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "server refused"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "without a key"));
	CU_ASSERT_EQUAL(calls, 0);
}

static void test_auth_ex_noauth(void)
{
	struct server_ex_run s = { .cfg = { 0 } };
	uint8_t wrap[FERRY_KEY_LEN];
	char why[256] = "";

	memset(wrap, 0xee, sizeof(wrap));
	memset(s.out.wrap, 0xee, sizeof(s.out.wrap));
	CU_ASSERT_EQUAL(handshake_ex(NULL, "lo", &s, wrap, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_STRING_EQUAL(s.out.name, "lo");
	CU_ASSERT(all_zero(wrap, sizeof(wrap)));
	CU_ASSERT(all_zero(s.out.wrap, sizeof(s.out.wrap)));
	/* With a key on the client only: refused as before. */
	setup_keys();
	CU_ASSERT_EQUAL(handshake_ex(&key_alice, "alice", &s, wrap, why,
				     sizeof(why)), -FERRY_EAUTH);
	CU_ASSERT_EQUAL(s.ret, -FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "without authentication"));
}

static void test_auth_ex_bad_name(void)
{
	struct pollfd pfd;
	uint8_t wrap[FERRY_KEY_LEN];
	char why[256] = "";
	int sv[2];

	setup_keys();
	pair(sv);
	CU_ASSERT_EQUAL(ferry__ctrl_auth_client_ex(sv[0], &key_alice,
						   "no spaces", IO_MS, wrap,
						   why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "key name"));
	/* Nothing was sent. */
	pfd = (struct pollfd){ .fd = sv[1], .events = POLLIN };
	CU_ASSERT_EQUAL(poll(&pfd, 1, 0), 0);
	close(sv[0]);
	close(sv[1]);
}

/* The wrapping key as msg.h documents it, from a hand-made client. */
static void test_auth_ex_wrap_construction(void)
{
	struct server_ex_run s;
	struct ferry_msg hello, m, auth = { .type = FERRY_MSG_AUTH };
	uint8_t data[13 + 64], want[FERRY_KEY_LEN];
	unsigned int n = 0;
	pthread_t th;
	int sv[2];

	setup_keys();
	pair(sv);
	s = (struct server_ex_run){ .fd = sv[1],
				    .cfg = { .key = &key_alice } };
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, server_ex_main, &s),
			      0);
	sample_hello(&hello);
	hello.u.hello.flags = 0;
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &hello, IO_MS), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[0], &m, IO_MS), 0);
	CU_ASSERT_EQUAL_FATAL(m.type, FERRY_MSG_CHALLENGE);
	client_mac(&key_alice, m.u.challenge.nonce, hello.u.hello.nonce,
		   auth.u.auth.mac);
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &auth, IO_MS), 0);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(s.ret, 0);
	CU_ASSERT_STRING_EQUAL(s.out.name, HELLO_NAME);

	memcpy(data, "ferry-v1 wrap", 13);
	memcpy(data + 13, hello.u.hello.nonce, 32);
	memcpy(data + 45, m.u.challenge.nonce, 32);
	CU_ASSERT_PTR_NOT_NULL(HMAC(EVP_sha256(), key_alice.bytes, 32, data,
				    sizeof(data), want, &n));
	CU_ASSERT_EQUAL(memcmp(want, s.out.wrap, FERRY_KEY_LEN), 0);
	close(sv[0]);
	close(sv[1]);
}

static void test_wrap(void)
{
	uint8_t w[FERRY_KEY_LEN], w2[FERRY_KEY_LEN];
	uint8_t secret[FERRY_KEY_LEN], a[FERRY_KEY_LEN], b[FERRY_KEY_LEN];
	uint8_t c[FERRY_KEY_LEN], pad[FERRY_KEY_LEN], zero[FERRY_KEY_LEN];
	uint8_t data[14 + 64];
	unsigned int n = 0;

	memset(w, 0x42, sizeof(w));
	memcpy(w2, w, sizeof(w2));
	w2[7] ^= 0x80;
	for (int i = 0; i < FERRY_KEY_LEN; i++)
		secret[i] = (uint8_t)(i * 7 + 3);
	memset(zero, 0, sizeof(zero));

	/* Wrapping twice is the identity, also in place. */
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, TOKEN_NAME, secret, a), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, secret, sizeof(a)), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, TOKEN_NAME, a, b), 0);
	CU_ASSERT_EQUAL(memcmp(b, secret, sizeof(b)), 0);
	memcpy(c, secret, sizeof(c));
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, TOKEN_NAME, c, c), 0);
	CU_ASSERT_EQUAL(memcmp(c, a, sizeof(c)), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, TOKEN_NAME, c, c), 0);
	CU_ASSERT_EQUAL(memcmp(c, secret, sizeof(c)), 0);

	/* The pad is HMAC(wrap, "ferry-v1 token" || name). */
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, TOKEN_NAME, zero, pad), 0);
	memcpy(data, "ferry-v1 token", 14);
	memcpy(data + 14, TOKEN_NAME, strlen(TOKEN_NAME));
	CU_ASSERT_PTR_NOT_NULL(HMAC(EVP_sha256(), w, 32, data,
				    14 + strlen(TOKEN_NAME), c, &n));
	CU_ASSERT_EQUAL(memcmp(c, pad, sizeof(c)), 0);

	/* Another token name, or another connection: another pad. */
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, "token:ffeeddccbbaa99887766554433"
					    "221100", secret, b), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w2, TOKEN_NAME, secret, b), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, b, sizeof(a)), 0);

	/* Not a key name. */
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(w, "bad name", secret, b), -EINVAL);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "auth same key", test_auth_same_key },
		{ "auth different keys", test_auth_different_keys },
		{ "auth no-auth combinations", test_auth_noauth },
		{ "auth replayed AUTH", test_auth_replay },
		{ "auth protocol errors", test_auth_protocol_errors },
		{ "auth_ex key names", test_auth_ex_names },
		{ "auth_ex refusals", test_auth_ex_refused },
		{ "auth_ex no-auth", test_auth_ex_noauth },
		{ "auth_ex invalid name", test_auth_ex_bad_name },
		{ "auth_ex wrapping key construction",
		  test_auth_ex_wrap_construction },
		{ "wrap token secrets", test_wrap },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("auth", tests);
}
