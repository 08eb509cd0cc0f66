/* The environment (internal): see lib/xport/env.c. */
#ifndef FERRY_XPORT_ENV_H
#define FERRY_XPORT_ENV_H

/* The value of test hook variable name (FERRY_FAULT_*), NULL when unset
 * or empty. Only test-hook builds call it (docs/architecture.md). */
const char *ferry__env_hook(const char *name);

#endif
