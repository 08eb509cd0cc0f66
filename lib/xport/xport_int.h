/* The transports compiled into this build. Optional transports add their
 * table here through a generated header when meson finds their
 * dependencies; tcp is always present. */
#ifndef FERRY_XPORT_INT_H
#define FERRY_XPORT_INT_H

#include "ferry/xport.h"

extern const struct ferry_xport_ops ferry__xport_tcp;

#define FERRY__XPORTS(X) X(ferry__xport_tcp)

#endif
