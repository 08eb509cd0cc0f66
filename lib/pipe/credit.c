#include <endian.h>
#include <string.h>

#include "pipe/credit.h"

void ferry__credit_tx_init(struct ferry_credit_tx *c, uint32_t first,
			   uint32_t depth)
{
	*c = (struct ferry_credit_tx){ .first = first, .depth = depth };
}

void ferry__credit_rx_init(struct ferry_credit_rx *c, uint32_t first,
			   uint32_t depth)
{
	/* Return credits in quarters of the window: few messages, and the
	 * sender is never more than a quarter of its window short. */
	uint32_t batch = depth / 4;

	*c = (struct ferry_credit_rx){ .first = first, .depth = depth,
				       .batch = batch ? batch : 1 };
}

int ferry__credit_tx_apply(struct ferry_credit_tx *c, const void *msg,
			   uint32_t len)
{
	uint32_t type;
	uint64_t total;

	if (len != FERRY__CREDIT_MSG_LEN)
		return -FERRY_EPROTO;
	memcpy(&type, msg, 4);
	memcpy(&total, (const uint8_t *)msg + 8, 8);
	type = le32toh(type);
	total = le64toh(total);
	if (type != FERRY__CREDIT_MSG || total > c->sent)
		return -FERRY_EPROTO;
	if (total > c->freed)
		c->freed = total; /* an older (reordered) message is harmless */
	return 0;
}

int ferry__credit_rx_land(struct ferry_credit_rx *c, uint32_t slot)
{
	if (slot != c->first + (uint32_t)(c->landed % c->depth))
		return -FERRY_EPROTO;
	if (c->landed - c->released >= c->depth)
		return -FERRY_EPROTO; /* sender wrote without a credit */
	c->landed++;
	return 0;
}

void ferry__credit_rx_encode(struct ferry_credit_rx *c, void *msg)
{
	uint32_t type = htole32(FERRY__CREDIT_MSG), pad = 0;
	uint64_t total = htole64(c->released);

	memcpy(msg, &type, 4);
	memcpy((uint8_t *)msg + 4, &pad, 4);
	memcpy((uint8_t *)msg + 8, &total, 8);
	c->announced = c->released;
}
