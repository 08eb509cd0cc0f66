/* ferry-wanem's DPDK side: the EAL, two ports, the packet pool, and the
 * loop that moves frames between the ports through two paths (emu.h). */
#ifndef WANEM_DPDK_IO_H
#define WANEM_DPDK_IO_H

#include <signal.h>
#include <stddef.h>

#include "opts.h"

/* Forward until *stop is set, then write the statistics (stdout) and shut
 * DPDK down. Returns 0, or -errno with the reason in why. */
int wanem_dpdk_run(const struct wanem_attr *a, volatile sig_atomic_t *stop,
		   char *why, size_t len);

#endif
