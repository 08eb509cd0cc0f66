/* How the control channel names transports and wire families (internal).
 *
 * ferry_params.transports (PROPOSE: what the sender can use; ACCEPT: what
 * the receiver chose) is a mask. Bits 0-15 name transports: each
 * transport's ops.bit, whatever this build has. Bits 16-31 name wire
 * families (enum ferry_wire, family w at bit 15 + w): in PROPOSE, a family
 * whose shared endpoint description one of the sender's transports speaks;
 * in ACCEPT, set beside the receiver's transport when the sender is to use
 * another transport of that family. */
#ifndef FERRY_XPORT_IDS_H
#define FERRY_XPORT_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "ferry/xport.h"

#define FERRY_XPORT_IDS 0xffffu
#define FERRY_XPORT_FAMILY(w) (1u << (15 + (w))) /* w >= 1 */
#define FERRY_XPORT_FAMILIES (~FERRY_XPORT_IDS)

/* ops' bit in the mask; 0 for a transport the protocol does not know (a
 * table without the field). */
uint32_t ferry__xport_bit(const struct ferry_xport_ops *ops);
/* ops' preference rank; UINT32_MAX for a table without the field. */
unsigned ferry__xport_rank(const struct ferry_xport_ops *ops);
/* ops.busy_spins_one; false for a table without the field. */
bool ferry__xport_busy_spins_one(const struct ferry_xport_ops *ops);
/* The name of the lowest transport bit in mask, even for a transport this
 * build lacks (a peer's); "?" when it names none. */
const char *ferry__xport_bit_name(uint32_t mask);
/* The name of the first transport in mask, other than the one of bit
 * except, whose wire family is wire; "?" when none is. */
const char *ferry__xport_family_name(uint32_t mask, unsigned wire,
				     uint32_t except);

#endif
