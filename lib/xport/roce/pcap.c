/* pcap and pcapng reader (see pcap.h).
 *
 * Layouts from the IETF drafts that document the formats
 * (draft-ietf-opsawg-pcap: 24-byte file header with magic 0xa1b2c3d4 for
 * microseconds or 0xa1b23c4d for nanoseconds, 16-byte record headers;
 * draft-ietf-opsawg-pcapng: blocks of type | total length | body | total
 * length, section header 0x0a0d0d0a with byte-order magic 0x1a2b3c4d,
 * interface description 1, simple packet 3, enhanced packet 6).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "pcap.h"

#define LINKTYPE_ETHERNET 1
#define PCAPNG_SHB 0x0a0d0d0au
#define PCAPNG_IDB 1u
#define PCAPNG_SPB 3u
#define PCAPNG_EPB 6u
#define OPT_ENDOFOPT 0
#define OPT_IF_TSRESOL 9
#define OPT_IF_TSOFFSET 14

struct ifc {
	uint32_t snaplen;
	int64_t tsoffset;   /* seconds */
	uint8_t tsresol;    /* as in if_tsresol */
};

struct rd {
	FILE *f;
	uint64_t off;       /* bytes consumed */
	bool be;            /* the current section is big endian */
	uint8_t *buf;       /* FERRY_PCAP_MAX_FRAME bytes */
	struct ifc *ifs;
	uint32_t nifs, cap_ifs;
	char *why;
	size_t why_len;
	ferry_pcap_fn fn;
	void *arg;
};

static int fail(struct rd *r, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->why && r->why_len) {
		n = snprintf(r->why, r->why_len, "offset %llu: ",
			     (unsigned long long)r->off);
		if (n >= 0 && (size_t)n < r->why_len) {
			va_start(ap, fmt);
			vsnprintf(r->why + n, r->why_len - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return err;
}

/* Read n bytes. Returns 0; 1 at a clean end of file when eof_ok and no
 * byte was read; -EIO or -FERRY_EPROTO (truncated). */
static int rd_bytes(struct rd *r, void *p, size_t n, bool eof_ok)
{
	size_t got = fread(p, 1, n, r->f);

	r->off += got;
	if (got == n)
		return 0;
	if (ferror(r->f))
		return fail(r, -EIO, "read error");
	if (got == 0 && eof_ok)
		return 1;
	return fail(r, -FERRY_EPROTO, "file ends inside a record");
}

static int rd_skip(struct rd *r, uint64_t n)
{
	while (n) {
		size_t k = n < FERRY_PCAP_MAX_FRAME ? (size_t)n :
			   FERRY_PCAP_MAX_FRAME;
		int rc = rd_bytes(r, r->buf, k, false);

		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

static uint16_t u16(const struct rd *r, const uint8_t *b)
{
	return r->be ? (uint16_t)(b[0] << 8 | b[1])
		     : (uint16_t)(b[1] << 8 | b[0]);
}

static uint32_t u32(const struct rd *r, const uint8_t *b)
{
	return r->be ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		       (uint32_t)b[2] << 8 | b[3]
		     : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 |
		       (uint32_t)b[1] << 8 | b[0];
}

static uint64_t u64(const struct rd *r, const uint8_t *b)
{
	uint64_t lo = u32(r, r->be ? b + 4 : b), hi = u32(r, r->be ? b : b + 4);

	return hi << 32 | lo;
}

static int deliver(struct rd *r, uint64_t ts_ns, uint32_t caplen,
		   uint32_t len, uint64_t at)
{
	struct ferry_pcap_frame fr = {
		.ts_ns = ts_ns, .data = r->buf, .caplen = caplen,
		.len = len < caplen ? caplen : len, .offset = at,
	};

	return r->fn(&fr, r->arg);
}

/* Classic pcap; the 4 magic bytes are consumed. */
static int read_pcap(struct rd *r, bool nano)
{
	uint8_t h[20];
	int rc = rd_bytes(r, h, sizeof(h), false);

	if (rc)
		return rc;
	if (u16(r, h) != 2)
		return fail(r, -FERRY_EPROTO, "pcap major version %u, not 2",
			    u16(r, h));
	uint32_t lt = u32(r, h + 16) & 0x03ffffffu; /* high bits: FCS info */
	if (lt != LINKTYPE_ETHERNET)
		return fail(r, -FERRY_EPROTO,
			    "linktype %u is not Ethernet (1)", lt);
	for (;;) {
		uint64_t at = r->off;

		rc = rd_bytes(r, h, 16, true);
		if (rc)
			return rc == 1 ? 0 : rc;
		uint64_t sec = u32(r, h), frac = u32(r, h + 4);
		uint32_t caplen = u32(r, h + 8), len = u32(r, h + 12);
		if (caplen > FERRY_PCAP_MAX_FRAME)
			return fail(r, -FERRY_EPROTO,
				    "record of %u bytes (the limit is %u)",
				    caplen, FERRY_PCAP_MAX_FRAME);
		if ((frac >= 1000000000u) || (!nano && frac >= 1000000u))
			return fail(r, -FERRY_EPROTO,
				    "timestamp fraction out of range");
		rc = rd_bytes(r, r->buf, caplen, false);
		if (rc)
			return rc;
		rc = deliver(r, sec * 1000000000u + frac * (nano ? 1 : 1000),
			     caplen, len, at);
		if (rc)
			return rc;
	}
}

static uint64_t ts_to_ns(const struct ifc *i, uint64_t t)
{
	unsigned v = i->tsresol & 0x7f;
	uint64_t ns = t;

	if (!(i->tsresol & 0x80)) {         /* units of 10^-v s, v <= 19 */
		for (unsigned k = v; k < 9; k++)
			ns *= 10;
		for (unsigned k = 9; k < v; k++)
			ns /= 10;
	} else {                            /* units of 2^-v s, v <= 63 */
		uint64_t frac = t & ((1ull << v) - 1);

		ns = (t >> v) * 1000000000u +
		     (uint64_t)((long double)frac * 1e9L /
				(long double)(1ull << v));
	}
	return ns + (uint64_t)i->tsoffset * 1000000000u;
}

/* Options of an IDB: n bytes (a multiple of 4). */
static int read_idb_opts(struct rd *r, struct ifc *ifc, uint64_t n)
{
	uint8_t h[8];
	int rc;

	while (n >= 4) {
		if ((rc = rd_bytes(r, h, 4, false)))
			return rc;
		n -= 4;
		uint16_t code = u16(r, h), olen = u16(r, h + 2);
		uint64_t padded = ((uint64_t)olen + 3) & ~3ull;
		if (code == OPT_ENDOFOPT)
			break;
		if (padded > n)
			return fail(r, -FERRY_EPROTO,
				    "interface option %u overruns its block",
				    code);
		if ((code == OPT_IF_TSRESOL && olen == 1) ||
		    (code == OPT_IF_TSOFFSET && olen == 8)) {
			if ((rc = rd_bytes(r, h, olen, false)))
				return rc;
			if (code == OPT_IF_TSRESOL)
				ifc->tsresol = h[0];
			else
				ifc->tsoffset = (int64_t)u64(r, h);
			padded -= olen;
			n -= olen;
		}
		if ((rc = rd_skip(r, padded)))
			return rc;
		n -= padded;
	}
	if ((ifc->tsresol & 0x80) ? (ifc->tsresol & 0x7f) > 63
				  : ifc->tsresol > 19)
		return fail(r, -FERRY_EPROTO, "if_tsresol 0x%02x not supported",
			    ifc->tsresol);
	return rd_skip(r, n);
}

static int read_idb(struct rd *r, uint64_t body)
{
	uint8_t h[8];
	int rc;

	if (body < 8)
		return fail(r, -FERRY_EPROTO, "interface block too short");
	if ((rc = rd_bytes(r, h, 8, false)))
		return rc;
	if (u16(r, h) != LINKTYPE_ETHERNET)
		return fail(r, -FERRY_EPROTO,
			    "interface %u: linktype %u is not Ethernet (1)",
			    r->nifs, u16(r, h));
	if (r->nifs == FERRY_PCAP_MAX_IFS)
		return fail(r, -FERRY_EPROTO, "more than %u interfaces",
			    FERRY_PCAP_MAX_IFS);
	if (r->nifs == r->cap_ifs) {
		uint32_t n = r->cap_ifs ? r->cap_ifs * 2 : 4;
		struct ifc *ifs = realloc(r->ifs, n * sizeof(*ifs));

		if (!ifs)
			return -ENOMEM;
		r->ifs = ifs;
		r->cap_ifs = n;
	}
	struct ifc *ifc = &r->ifs[r->nifs];
	*ifc = (struct ifc){ .snaplen = u32(r, h + 4), .tsresol = 6 };
	if ((rc = read_idb_opts(r, ifc, body - 8)))
		return rc;
	r->nifs++;
	return 0;
}

/* EPB (simple = false) or SPB body of body bytes. */
static int read_packet(struct rd *r, uint64_t body, bool simple, uint64_t at)
{
	uint8_t h[20];
	size_t hl = simple ? 4 : 20;
	uint32_t ifid = 0, caplen, len;
	uint64_t ts = 0;
	int rc;

	if (body < hl)
		return fail(r, -FERRY_EPROTO, "packet block too short");
	if ((rc = rd_bytes(r, h, hl, false)))
		return rc;
	if (simple) {
		len = u32(r, h);
		caplen = len;
		if (r->nifs && r->ifs[0].snaplen && caplen > r->ifs[0].snaplen)
			caplen = r->ifs[0].snaplen;
		if (caplen > body - hl)
			caplen = (uint32_t)(body - hl);
	} else {
		ifid = u32(r, h);
		ts = (uint64_t)u32(r, h + 4) << 32 | u32(r, h + 8);
		caplen = u32(r, h + 12);
		len = u32(r, h + 16);
		if (caplen > body - hl)
			return fail(r, -FERRY_EPROTO,
				    "captured length overruns its block");
	}
	if (ifid >= r->nifs)
		return fail(r, -FERRY_EPROTO,
			    "packet on interface %u, which is not described",
			    ifid);
	if (caplen > FERRY_PCAP_MAX_FRAME)
		return fail(r, -FERRY_EPROTO,
			    "packet of %u bytes (the limit is %u)", caplen,
			    FERRY_PCAP_MAX_FRAME);
	if ((rc = rd_bytes(r, r->buf, caplen, false)))
		return rc;
	/* Deliver before skipping the options: the skip reuses the buffer. */
	rc = deliver(r, simple ? 0 : ts_to_ns(&r->ifs[ifid], ts), caplen, len,
		     at);
	if (rc)
		return rc;
	return rd_skip(r, body - hl - caplen);
}

/* Section header; the 4 type bytes are consumed. */
static int read_shb(struct rd *r, uint64_t at)
{
	uint8_t h[12];
	int rc = rd_bytes(r, h, 12, false);

	if (rc)
		return rc;
	if (!memcmp(h + 4, "\x1a\x2b\x3c\x4d", 4))
		r->be = true;
	else if (!memcmp(h + 4, "\x4d\x3c\x2b\x1a", 4))
		r->be = false;
	else
		return fail(r, -FERRY_EPROTO,
			    "section header with a bad byte-order magic");
	uint32_t tot = u32(r, h);
	if (tot < 28 || tot % 4)
		return fail(r, -FERRY_EPROTO, "section header length %u", tot);
	if (u16(r, h + 8) != 1)
		return fail(r, -FERRY_EPROTO, "pcapng major version %u, not 1",
			    u16(r, h + 8));
	r->nifs = 0;   /* interfaces are per section */
	/* type, length, byte order, version read; skip section length and
	 * options up to the trailing length */
	if ((rc = rd_skip(r, tot - 20)))
		return rc;
	if ((rc = rd_bytes(r, h, 4, false)))
		return rc;
	if (u32(r, h) != tot)
		return fail(r, -FERRY_EPROTO,
			    "block at offset %llu: trailing length differs",
			    (unsigned long long)at);
	return 0;
}

static int read_pcapng(struct rd *r)
{
	uint8_t h[8];
	int rc = read_shb(r, 0);

	while (!rc) {
		uint64_t at = r->off;

		rc = rd_bytes(r, h, 4, true);
		if (rc)
			return rc == 1 ? 0 : rc;
		if (!memcmp(h, "\x0a\x0d\x0d\x0a", 4)) {
			rc = read_shb(r, at);
			continue;
		}
		uint32_t type = u32(r, h);
		if ((rc = rd_bytes(r, h, 4, false)))
			return rc;
		uint32_t tot = u32(r, h);
		if (tot < 12 || tot % 4)
			return fail(r, -FERRY_EPROTO,
				    "block of type %u with length %u", type,
				    tot);
		uint64_t body = tot - 12;
		if (type == PCAPNG_IDB)
			rc = read_idb(r, body);
		else if (type == PCAPNG_EPB || type == PCAPNG_SPB)
			rc = read_packet(r, body, type == PCAPNG_SPB, at);
		else
			rc = rd_skip(r, body);
		if (rc)
			return rc;
		if ((rc = rd_bytes(r, h, 4, false)))
			return rc;
		if (u32(r, h) != tot)
			rc = fail(r, -FERRY_EPROTO,
				  "block at offset %llu: trailing length "
				  "differs", (unsigned long long)at);
	}
	return rc;
}

int ferry__pcap_read(FILE *f, ferry_pcap_fn fn, void *arg, char *why,
		     size_t why_len)
{
	struct rd r = { .f = f, .why = why, .why_len = why_len, .fn = fn,
			.arg = arg };
	uint8_t m[4];
	int rc;

	if (why && why_len)
		why[0] = '\0';
	r.buf = malloc(FERRY_PCAP_MAX_FRAME);
	if (!r.buf)
		return -ENOMEM;
	rc = rd_bytes(&r, m, 4, true);
	if (rc == 1) {
		rc = fail(&r, -FERRY_EPROTO, "empty file");
		goto out;
	}
	if (rc)
		goto out;
	if (!memcmp(m, "\xd4\xc3\xb2\xa1", 4) ||
	    !memcmp(m, "\x4d\x3c\xb2\xa1", 4)) {
		r.be = false;
		rc = read_pcap(&r, m[0] == 0x4d);
	} else if (!memcmp(m, "\xa1\xb2\xc3\xd4", 4) ||
		   !memcmp(m, "\xa1\xb2\x3c\x4d", 4)) {
		r.be = true;
		rc = read_pcap(&r, m[3] == 0x4d);
	} else if (!memcmp(m, "\x0a\x0d\x0d\x0a", 4)) {
		rc = read_pcapng(&r);
	} else {
		r.off = 0;
		rc = fail(&r, -FERRY_EPROTO, "not a pcap or pcapng file");
	}
out:
	free(r.ifs);
	free(r.buf);
	return rc;
}
