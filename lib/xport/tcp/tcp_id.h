/* tcp as the control channel knows it (internal): built into every
 * ferry, and named here for the registry too (lib/xport/xport.c). The bit
 * is on the wire: it never changes. */
#ifndef FERRY_XPORT_TCP_ID_H
#define FERRY_XPORT_TCP_ID_H

#include "ferry/xport.h"

/* the last choice: kernel TCP runs everywhere, at a CPU cost per byte;
 * its frames over TCP are its own wire */
#define FERRY__TCP_ID                                                       \
	.name = "tcp", .bit = 1u << 0, .rank = 30, .wire = FERRY_WIRE_OWN

#endif
