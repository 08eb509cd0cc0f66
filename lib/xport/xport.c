#include <string.h>

#include "ferry/xport.h"
#include "xport/xport_int.h"

static const struct ferry_xport_ops *const xports[] = {
#define FERRY__XPORT_ENTRY(sym) &sym,
	FERRY__XPORTS(FERRY__XPORT_ENTRY)
#undef FERRY__XPORT_ENTRY
	NULL,
};

const struct ferry_xport_ops *const *ferry_xport_list(void)
{
	return xports;
}

const struct ferry_xport_ops *ferry_xport_find(const char *name)
{
	for (size_t i = 0; xports[i]; i++)
		if (strcmp(xports[i]->name, name) == 0)
			return xports[i];
	return NULL;
}
