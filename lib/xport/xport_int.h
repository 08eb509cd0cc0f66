/* The transports compiled into this build (internal). meson writes the
 * list (xport_list.h) from the dependencies it found; tcp is always
 * present. Each transport defines one const ops table named
 * ferry__xport_<name>. */
#ifndef FERRY_XPORT_INT_H
#define FERRY_XPORT_INT_H

#include "ferry/xport.h"
#include "xport/xport_list.h"

#define FERRY__XPORT_DECL(sym) extern const struct ferry_xport_ops sym;
FERRY__XPORTS(FERRY__XPORT_DECL)
#undef FERRY__XPORT_DECL

#endif
