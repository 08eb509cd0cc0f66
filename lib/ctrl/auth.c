/* Mutual HMAC-SHA256 challenge-response over the control channel (msg.h).
 *
 * Each side proves it knows the key by a MAC over both sides' fresh nonces,
 * so a recorded answer is useless in another session. The two MACs carry
 * different labels and nonce orders, so one side's MAC can never be
 * reflected back as the other's. A third label derives the connection's
 * wrapping key, under which token secrets cross the channel.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "ctrl/msg.h"
#include "ferry/error.h"

#define LABEL_SERVER "ferry-v1 server"
#define LABEL_CLIENT "ferry-v1 client"
#define LABEL_WRAP "ferry-v1 wrap"
#define LABEL_TOKEN "ferry-v1 token"

/* mac = HMAC-SHA256(key, label || n1 || n2). Returns 0 or -EIO. */
static int auth_mac(const struct ferry_key *key, const char *label,
		    const uint8_t n1[FERRY_NONCE_LEN],
		    const uint8_t n2[FERRY_NONCE_LEN],
		    uint8_t mac[FERRY_MAC_LEN])
{
	uint8_t data[32 + 2 * FERRY_NONCE_LEN];
	size_t ll = strlen(label);
	unsigned int maclen = 0;

	memcpy(data, label, ll);
	memcpy(data + ll, n1, FERRY_NONCE_LEN);
	memcpy(data + ll + FERRY_NONCE_LEN, n2, FERRY_NONCE_LEN);
	if (!HMAC(EVP_sha256(), key->bytes, FERRY_KEY_LEN, data,
		  ll + 2 * FERRY_NONCE_LEN, mac, &maclen) ||
	    maclen != FERRY_MAC_LEN)
		return -EIO;
	return 0;
}

/* Milliseconds left until deadline (ns), at least 0; -1 (no limit) when
 * deadline is 0. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = ferry__now_ns();

	if (!deadline)
		return -1;
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* A receive failed: say why, and map the peer's ERROR to our code. */
static int recv_failed(int ret, const struct ferry_msg *m, const char *peer,
		       const char *step, int timeout_ms, char *why,
		       size_t whylen)
{
	if (ret == -FERRY_EPEER) {
		ferry__why(why, whylen, "the %s refused: %s", peer,
			   m->u.error.text);
		if (m->u.error.code == FERRY_EAUTH ||
		    m->u.error.code == FERRY_EVERSION)
			return -m->u.error.code;
		return ret;
	}
	if (ret == -FERRY_EVERSION) {
		ferry__why(why, whylen,
			   "the %s speaks protocol version %u, we speak %u",
			   peer, m->version, FERRY_PROTO_VERSION);
		return ret;
	}
	if (ret == -FERRY_ETIMEOUT) {
		ferry__why(why, whylen, "waiting for the %s's %s: %s (%.1f s)",
			   peer, step, ferry_strerror(ret), timeout_ms / 1000.0);
		return ret;
	}
	ferry__why(why, whylen, "waiting for the %s's %s: %s", peer, step,
		   ferry_strerror(ret));
	return ret;
}

/* The peer sent a message out of turn: tell it, and fail. */
static int unexpected(int fd, const struct ferry_msg *m, const char *step,
		      char *why, size_t whylen)
{
	ferry__why(why, whylen, "expected %s from the peer, got %s", step,
		   ferry__ctrl_type_name(m->type));
	ferry__ctrl_send_error(fd, FERRY_EPROTO, "expected %s, got %s", step,
			       ferry__ctrl_type_name(m->type));
	return -FERRY_EPROTO;
}

/* The peer declared a body over the limit: tell it (the body is not read). */
static void too_big(int fd)
{
	ferry__ctrl_send_error(fd, FERRY_ETOOBIG,
			       "a message larger than the protocol allows (%d "
			       "bytes)", FERRY_CTRL_MAX_BODY);
}

/* We refuse the peer: tell it and fail with -FERRY_EAUTH. */
static int refuse(int fd, const char *text)
{
	ferry__ctrl_send_error(fd, FERRY_EAUTH, "authentication failed: %s",
			       text);
	return -FERRY_EAUTH;
}

/* The connection's wrapping key (msg.h); zeros in no-auth mode. */
static int derive_wrap(const struct ferry_key *key,
		       const uint8_t nonce_c[FERRY_NONCE_LEN],
		       const uint8_t nonce_s[FERRY_NONCE_LEN],
		       uint8_t wrap[FERRY_KEY_LEN])
{
	static_assert(FERRY_MAC_LEN == FERRY_KEY_LEN,
		      "a MAC is a whole wrapping key");

	if (!key) {
		memset(wrap, 0, FERRY_KEY_LEN);
		return 0;
	}
	return auth_mac(key, LABEL_WRAP, nonce_c, nonce_s, wrap);
}

int ferry__ctrl_auth_client_ex(int fd, const struct ferry_key *key,
			       const char *name, int timeout_ms,
			       uint8_t wrap[FERRY_KEY_LEN], char *why,
			       size_t whylen)
{
	struct ferry_msg hello = { .type = FERRY_MSG_HELLO };
	struct ferry_msg auth = { .type = FERRY_MSG_AUTH };
	struct ferry_msg m;
	struct ferry_msg_challenge *ch = &m.u.challenge;
	uint8_t expect[FERRY_MAC_LEN];
	uint8_t w[FERRY_KEY_LEN];
	int ret;

	if (wrap)
		memset(wrap, 0, FERRY_KEY_LEN);
	if (!name)
		name = "";
	if (!ferry__ctrl_keyname_valid(name)) {
		ferry__why(why, whylen,
			   "not a valid key name (1 to %d of A-Z a-z 0-9 . _ "
			   ": -)", FERRY_KEYNAME_MAX);
		return -EINVAL;
	}
	strcpy(hello.u.hello.name, name);
	ret = ferry__random(hello.u.hello.nonce, FERRY_NONCE_LEN);
	if (ret)
		goto fail_sys;
	hello.u.hello.flags = key ? 0 : FERRY_HELLO_NOAUTH;
	ret = ferry__ctrl_send(fd, &hello, timeout_ms);
	if (ret)
		goto fail_sys;

	ret = ferry__ctrl_recv(fd, &m, timeout_ms);
	if (ret)
		return recv_failed(ret, &m, "server", "CHALLENGE", timeout_ms,
				   why, whylen);
	if (m.type != FERRY_MSG_CHALLENGE)
		return unexpected(fd, &m, "CHALLENGE", why, whylen);

	if (ch->flags & FERRY_HELLO_NOAUTH) {
		if (key) {
			ferry__why(why, whylen,
				   "the server runs without authentication; "
				   "give both sides the same key file");
			return refuse(fd, "the server has no key, the client "
					  "has one");
		}
		/* No-auth mode: AUTH carries a zero MAC. */
	} else {
		if (!key) {
			ferry__why(why, whylen,
				   "the server requires authentication; give "
				   "the client the server's key file");
			return refuse(fd, "the client has no key");
		}
		ret = auth_mac(key, LABEL_SERVER, hello.u.hello.nonce,
			       ch->nonce, expect);
		if (ret)
			goto fail_sys;
		if (CRYPTO_memcmp(expect, ch->mac, FERRY_MAC_LEN) != 0) {
			ferry__why(why, whylen,
				   "authentication failed: the server's key "
				   "differs from ours (check that both hosts "
				   "use the same key file)");
			return refuse(fd, "the server's key differs from the "
					  "client's");
		}
		ret = auth_mac(key, LABEL_CLIENT, ch->nonce,
			       hello.u.hello.nonce, auth.u.auth.mac);
		if (ret)
			goto fail_sys;
	}
	ret = derive_wrap(key, hello.u.hello.nonce, ch->nonce, w);
	if (ret)
		goto fail_sys;
	ret = ferry__ctrl_send(fd, &auth, timeout_ms);
	if (ret)
		goto fail_wipe;
	if (wrap)
		memcpy(wrap, w, FERRY_KEY_LEN);
	OPENSSL_cleanse(w, sizeof(w));
	return 0;

fail_wipe:
	OPENSSL_cleanse(w, sizeof(w));
fail_sys:
	ferry__why(why, whylen, "authentication: %s", ferry_strerror(ret));
	return ret;
}

int ferry__ctrl_auth_client(int fd, const struct ferry_key *key,
			    int timeout_ms, char *why, size_t whylen)
{
	return ferry__ctrl_auth_client_ex(fd, key, NULL, timeout_ms, NULL, why,
					  whylen);
}

/* The server's key for the client's HELLO: *key points to it, or is NULL
 * in no-auth mode; a looked-up key is copied into *buf. Refuses (ERROR,
 * -FERRY_EAUTH) a client without a key when we have one, and a name the
 * lookup does not know. */
static int server_key(int fd, const struct ferry__auth_cfg *cfg,
		      const struct ferry_msg_hello *h, struct ferry_key *buf,
		      const struct ferry_key **key, char *why, size_t whylen)
{
	char lwhy[FERRY_ERRTEXT_MAX] = "";

	*key = NULL;
	if (!cfg->lookup && !cfg->key)
		return 0; /* no-auth mode */
	if (h->flags & FERRY_HELLO_NOAUTH) {
		ferry__why(why, whylen,
			   "a client without a key tried to connect; this "
			   "server requires authentication");
		return refuse(fd, "the client has no key and the server "
				  "requires one");
	}
	if (!cfg->lookup) {
		*key = cfg->key;
		return 0;
	}
	if (cfg->lookup(cfg->arg, h->name, buf, lwhy, sizeof(lwhy)) != 0) {
		OPENSSL_cleanse(buf, sizeof(*buf));
		if (!lwhy[0])
			snprintf(lwhy, sizeof(lwhy), "unknown key name %s",
				 h->name[0] ? h->name : "(none given)");
		ferry__why(why, whylen, "authentication failed: %s", lwhy);
		return refuse(fd, lwhy);
	}
	*key = buf;
	return 0;
}

int ferry__ctrl_auth_server_ex(int fd, const struct ferry__auth_cfg *cfg,
			       int timeout_ms, struct ferry__authed *out,
			       char *why, size_t whylen)
{
	static const struct ferry__auth_cfg noauth = { 0 };
	struct ferry_msg chal = { .type = FERRY_MSG_CHALLENGE };
	struct ferry_msg_challenge *ch = &chal.u.challenge;
	struct ferry_msg m;
	char name[FERRY_KEYNAME_MAX + 1];
	uint8_t nonce_c[FERRY_NONCE_LEN];
	uint8_t expect[FERRY_MAC_LEN];
	struct ferry_key looked_up;
	const struct ferry_key *key;
	/* one deadline for the whole handshake: a peer cannot hold the
	 * session longer by trickling its messages (or by a slow lookup) */
	uint64_t deadline;
	int ret;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!cfg)
		cfg = &noauth;
	deadline = timeout_ms < 0 ? 0 :
		   (cfg->t0_ns ? cfg->t0_ns : ferry__now_ns()) +
			   (uint64_t)timeout_ms * 1000000ull;
	ret = ferry__ctrl_recv(fd, &m, ms_left(deadline));
	if (ret == -FERRY_EVERSION)
		ferry__ctrl_send_error(fd, FERRY_EVERSION,
				       "protocol version mismatch: the client "
				       "speaks %u, the server %u",
				       m.version, FERRY_PROTO_VERSION);
	if (ret == -FERRY_ETOOBIG)
		too_big(fd);
	if (ret)
		return recv_failed(ret, &m, "client", "HELLO", timeout_ms, why,
				   whylen);
	if (m.type != FERRY_MSG_HELLO)
		return unexpected(fd, &m, "HELLO", why, whylen);
	memcpy(nonce_c, m.u.hello.nonce, FERRY_NONCE_LEN);
	memcpy(name, m.u.hello.name, sizeof(name));

	ret = server_key(fd, cfg, &m.u.hello, &looked_up, &key, why, whylen);
	if (ret)
		return ret;
	ret = ferry__random(ch->nonce, FERRY_NONCE_LEN);
	if (ret)
		goto fail_sys;
	if (key) {
		ret = auth_mac(key, LABEL_SERVER, nonce_c, ch->nonce, ch->mac);
		if (ret)
			goto fail_sys;
	} else {
		ch->flags = FERRY_HELLO_NOAUTH;
	}
	ret = ferry__ctrl_send(fd, &chal, ms_left(deadline));
	if (ret)
		goto fail_sys;

	ret = ferry__ctrl_recv(fd, &m, ms_left(deadline));
	if (ret == -FERRY_ETOOBIG)
		too_big(fd);
	if (ret) {
		ret = recv_failed(ret, &m, "client", "AUTH", timeout_ms, why,
				  whylen);
		goto out;
	}
	if (m.type != FERRY_MSG_AUTH) {
		ret = unexpected(fd, &m, "AUTH", why, whylen);
		goto out;
	}
	if (key) {
		ret = auth_mac(key, LABEL_CLIENT, ch->nonce, nonce_c, expect);
		if (ret)
			goto fail_sys;
		if (CRYPTO_memcmp(expect, m.u.auth.mac, FERRY_MAC_LEN) != 0) {
			ferry__why(why, whylen,
				   "authentication failed: the client's key "
				   "differs from ours (or it replayed an old "
				   "handshake)");
			ret = refuse(fd, "the client's key differs from ours");
			goto out;
		}
	}
	if (out) {
		ret = derive_wrap(key, nonce_c, ch->nonce, out->wrap);
		if (ret)
			goto fail_sys;
		memcpy(out->name, name, sizeof(out->name));
	}
	ret = 0;
	goto out;

fail_sys:
	ferry__why(why, whylen, "authentication: %s", ferry_strerror(ret));
out:
	OPENSSL_cleanse(&looked_up, sizeof(looked_up));
	if (ret && out)
		OPENSSL_cleanse(out, sizeof(*out));
	return ret;
}

int ferry__ctrl_auth_server(int fd, const struct ferry_key *key,
			    int timeout_ms, char *why, size_t whylen)
{
	const struct ferry__auth_cfg cfg = { .key = key };

	return ferry__ctrl_auth_server_ex(fd, &cfg, timeout_ms, NULL, why,
					  whylen);
}

int ferry__ctrl_wrap(const uint8_t wrap[FERRY_KEY_LEN], const char *token_name,
		     const uint8_t in[FERRY_KEY_LEN],
		     uint8_t out[FERRY_KEY_LEN])
{
	uint8_t data[sizeof(LABEL_TOKEN) - 1 + FERRY_KEYNAME_MAX];
	uint8_t pad[FERRY_MAC_LEN];
	size_t ll = sizeof(LABEL_TOKEN) - 1;
	size_t n = strnlen(token_name, FERRY_KEYNAME_MAX + 1);
	unsigned int padlen = 0;

	if (!ferry__ctrl_keyname_valid(token_name))
		return -EINVAL;
	memcpy(data, LABEL_TOKEN, ll);
	memcpy(data + ll, token_name, n);
	if (!HMAC(EVP_sha256(), wrap, FERRY_KEY_LEN, data, ll + n, pad,
		  &padlen) ||
	    padlen != FERRY_MAC_LEN)
		return -EIO;
	for (size_t i = 0; i < FERRY_KEY_LEN; i++)
		out[i] = in[i] ^ pad[i];
	OPENSSL_cleanse(pad, sizeof(pad));
	return 0;
}
