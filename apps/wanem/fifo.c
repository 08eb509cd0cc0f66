/* Bounded packet FIFO. */
#include <errno.h>
#include <stdlib.h>

#include "fifo.h"

int wanem_fifo_init(struct wanem_fifo *f, uint32_t cap)
{
	uint32_t slots = 1;

	if (cap == 0 || cap > (1u << 31))
		return -EINVAL;
	while (slots < cap)
		slots <<= 1;
	*f = (struct wanem_fifo){ .mask = slots - 1 };
	f->ent = calloc(slots, sizeof(*f->ent));
	return f->ent ? 0 : -ENOMEM;
}

void wanem_fifo_fini(struct wanem_fifo *f)
{
	free(f->ent);
	f->ent = NULL;
}
