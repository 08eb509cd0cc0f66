/* libFuzzer target for the control-channel codec (lib/ctrl/codec.c).
 *
 * Beyond "no crash, no out-of-bounds access", it checks the codec's
 * contract: results are only the documented codes, a decoded frame
 * re-encodes to the very same bytes (the encoding is canonical), decodes
 * again to the same message, and every proper prefix of it is -EAGAIN.
 * The endpoint blob of an ACCEPT or READY is also read as the RoCEv2
 * family's description (lib/xport/rocev2.c), which a verbs or uroce end
 * takes from its peer: documented codes only, and one it accepts
 * re-encodes to the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ctrl/msg.h"
#include "ferry/error.h"
#include "xport/rocev2.h"

static uint8_t out[FERRY_CTRL_MAX_FRAME];

static void check_rocev2(const struct ferry_msg_ep *ep)
{
	static struct ferry__rocev2_ep e;
	static uint8_t again[FERRY_EP_MAX];
	unsigned n = ep->len >= 8 ? (unsigned)(ep->data[6] | ep->data[7] << 8) : 1;

	for (uint8_t role = 1; role <= 2; role++) {
		size_t len = sizeof(again);
		int ret = ferry__rocev2_decode(ep->data, ep->len, role, n, &e,
					       NULL, 0);

		CHECK(ret == 0 || ret == -FERRY_EPROTO || ret == -FERRY_EVERSION);
		if (ret)
			continue;
		CHECK(ferry__rocev2_encode(&e, again, &len) == 0);
		CHECK(len == ep->len && memcmp(again, ep->data, len) == 0);
	}
}

static void check_decoded(const uint8_t *data, size_t used,
			  const struct ferry_msg *m)
{
	struct ferry_msg again;
	size_t len = 0, used2 = 0;

	CHECK(used >= FERRY_CTRL_HDR_LEN);
	CHECK(ferry__ctrl_encode(m, out, sizeof(out), &len) == 0);
	CHECK(len == used);
	CHECK(memcmp(out, data, used) == 0);
	CHECK(ferry__ctrl_decode(out, len, &again, &used2) == 0);
	CHECK(used2 == used);
	CHECK(memcmp(&again, m, sizeof(again)) == 0);
	/* Proper prefixes ask for more. */
	CHECK(ferry__ctrl_decode(data, used - 1, &again, &used2) == -EAGAIN);
	CHECK(ferry__ctrl_decode(data, used / 2, &again, &used2) == -EAGAIN);
	CHECK(strcmp(ferry__ctrl_type_name(m->type), "unknown") != 0);
	if (m->type == FERRY_MSG_ACCEPT)
		check_rocev2(&m->u.accept.ep);
	else if (m->type == FERRY_MSG_READY)
		check_rocev2(&m->u.ready);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_msg m;
	size_t used = 12345;
	int ret = ferry__ctrl_decode(data, size, &m, &used);

	switch (ret) {
	case 0:
		CHECK(used <= size);
		check_decoded(data, used, &m);
		break;
	case -FERRY_EVERSION:
		CHECK(used >= FERRY_CTRL_HDR_LEN && used <= size);
		CHECK(m.version != FERRY_PROTO_VERSION);
		break;
	case -EAGAIN:
	case -FERRY_EPROTO:
	case -FERRY_ETOOBIG:
		CHECK(used == 0);
		break;
	default:
		CHECK(!"unexpected return code");
	}
	return 0;
}
