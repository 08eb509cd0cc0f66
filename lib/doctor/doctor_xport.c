/* ferry doctor: the transports in its advice, as their tables describe
 * them (ferry_xport_list: name, needs, runs_on), so no check names one. */
#include <stdio.h>
#include <string.h>

#include "doctor_int.h"

size_t ferry__doctor_xports(char *buf, size_t len, unsigned mask,
			    unsigned want, unsigned flags)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops *pick[16];
	size_t n = 0, off = 0;

	for (size_t i = 0; l[i] && n < FERRY__ARRAY_SIZE(pick); i++)
		if ((ferry_xport_needs(l[i]) & mask) == want &&
		    (!(flags & FERRY__DX_PLAIN) || !ferry_xport_runs_on(l[i])))
			pick[n++] = l[i];
	buf[0] = 0;
	for (size_t i = 0; i < n && off < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 < n ? ", " :
			(flags & FERRY__DX_AND) ? " and " : " or ";

		off += (size_t)snprintf(buf + off, len - off, "%s%s", sep,
					pick[i]->name);
		if ((flags & FERRY__DX_RUNS_ON) && ferry_xport_runs_on(pick[i]) &&
		    off < len)
			off += (size_t)snprintf(buf + off, len - off, " (%s)",
						ferry_xport_runs_on(pick[i]));
	}
	return n;
}
