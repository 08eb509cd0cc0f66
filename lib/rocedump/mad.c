/* rocedump: management datagrams on QP 1, and the CM's named.
 *
 * MAD common header (IBA vol. 1 13.4.3; the fields Wireshark's InfiniBand
 * dissector shows as infiniband.mad.*), 24 bytes, big endian:
 *   0 BaseVersion | 1 MgmtClass | 2 ClassVersion | 3 R(1) Method(7) |
 *   4 Status(16) | 6 ClassSpecific(16) | 8 TransactionID(64) |
 *   16 AttributeID(16) | 18 reserved(16) | 20 AttributeModifier(32)
 * CM (management class 0x07; Linux include/rdma/ib_mad.h
 * IB_MGMT_CLASS_CM) attribute IDs and message fields, offsets from the
 * end of the MAD header: Linux include/rdma/ibta_vol1_c12.h (IBTA vol. 1
 * ch. 12, tables 106-120) and the attribute IDs of
 * drivers/infiniband/core/cm_msgs.h / include/rdma/ib_cm.h. A 24-bit
 * field is the top 3 bytes of its 32-bit word. Checked against Wireshark's
 * decoding of the same bytes (tests/integration/rocedump_scapy.py).
 */
#include <string.h>

#include "rocedump_int.h"

#define MAD_HDR 24
#define MGMT_CLASS_CM 0x07

enum { LID = FERRY_ROCE_CM_LOCAL_ID, RID = FERRY_ROCE_CM_REMOTE_ID,
       QPN = FERRY_ROCE_CM_QPN, PSN = FERRY_ROCE_CM_PSN,
       REASON = FERRY_ROCE_CM_REASON };

/* Where a message's fields are (bytes after the MAD header); fields says
 * which it has. reason is 16 bits wide, but 8 for SIDR_REP's status. */
static const struct cm_attr {
	uint16_t id;
	const char *name;
	unsigned fields;
	uint8_t qpn, psn, reason;
} cm_attrs[] = {
	{ 0x0001, "ClassPortInfo", 0, 0, 0, 0 },
	{ 0x0010, "REQ", LID | QPN | PSN, 32, 44, 0 },
	{ 0x0011, "MRA", LID | RID, 0, 0, 0 },
	{ 0x0012, "REJ", LID | RID | REASON, 0, 0, 10 },
	{ 0x0013, "REP", LID | RID | QPN | PSN, 12, 20, 0 },
	{ 0x0014, "RTU", LID | RID, 0, 0, 0 },
	{ 0x0015, "DREQ", LID | RID | QPN, 8, 0, 0 },
	{ 0x0016, "DREP", LID | RID, 0, 0, 0 },
	{ 0x0017, "SIDR_REQ", LID, 0, 0, 0 },
	{ 0x0018, "SIDR_REP", LID | QPN | REASON, 8, 0, 4 },
	{ 0x0019, "LAP", LID | RID | QPN, 12, 0, 0 },
	{ 0x001a, "APR", LID | RID, 0, 0, 0 },
};

static const struct cm_attr *cm_attr(uint16_t id)
{
	for (size_t i = 0; i < sizeof(cm_attrs) / sizeof(cm_attrs[0]); i++)
		if (cm_attrs[i].id == id)
			return &cm_attrs[i];
	return NULL;
}

/* The CM message's fields; false when they lie past n bytes of data. */
static bool cm_decode(const uint8_t *d, size_t n, uint16_t id,
		      struct ferry_roce_cm *cm)
{
	const struct cm_attr *a = cm_attr(id);

	if (!a)
		return true; /* unnamed: nothing to read */
	size_t need = a->fields & RID ? 8 : a->fields & LID ? 4 : 0;
	if (a->fields & QPN && need < a->qpn + 3u)
		need = a->qpn + 3u;
	if (a->fields & PSN && need < a->psn + 3u)
		need = a->psn + 3u;
	if (a->fields & REASON && need < a->reason + 2u)
		need = a->reason + 2u;
	if (n < need)
		return false;
	cm->name = a->name;
	cm->fields = a->fields;
	if (a->fields & LID)
		cm->local_id = ferry__be32(d);
	if (a->fields & RID)
		cm->remote_id = ferry__be32(d + 4);
	if (a->fields & QPN)
		cm->qpn = ferry__be24(d + a->qpn);
	if (a->fields & PSN)
		cm->psn = ferry__be24(d + a->psn);
	if (a->fields & REASON)
		cm->reason = (uint16_t)(id == 0x0018 ? d[a->reason]
					: ferry__be16(d + a->reason));
	return true;
}

bool ferry__mad_decode(const uint8_t *p, size_t len, struct ferry_roce_mad *m,
		       const char **why)
{
	memset(m, 0, sizeof(*m));
	if (len < MAD_HDR) {
		*why = "MAD on QP 1 shorter than its 24-byte header";
		return false;
	}
	m->base_version = p[0];
	m->mgmt_class = p[1];
	m->class_version = p[2];
	m->method = p[3];
	m->status = (uint16_t)ferry__be16(p + 4);
	m->tid = ferry__be64(p + 8);
	m->attr_id = (uint16_t)ferry__be16(p + 16);
	m->attr_mod = ferry__be32(p + 20);
	if (m->mgmt_class != MGMT_CLASS_CM)
		return true;
	if (!cm_decode(p + MAD_HDR, len - MAD_HDR, m->attr_id, &m->cm)) {
		*why = "CM MAD too short for its message's fields";
		return false;
	}
	return true;
}
