/* Statistics output. */
#include <inttypes.h>
#include <time.h>

#include "report.h"

static const char *const dir_name[2] = { "ab", "ba" };

bool wanem_counters_add_up(const struct wanem_counters *c, uint64_t held)
{
	return c->rx + c->duplicated == c->tx + c->drop_loss + c->drop_queue +
					c->drop_full + c->drop_flush + held;
}

static void json_loss(FILE *f, const struct wanem_loss_attr *l)
{
	switch (l->kind) {
	case WANEM_LOSS_RANDOM:
		fprintf(f, "{\"model\":\"random\",\"pct\":%.6g}", l->p_loss * 100);
		break;
	case WANEM_LOSS_GE:
		fprintf(f, "{\"model\":\"gilbert-elliott\",\"p\":%.6g,\"r\":%.6g,"
			"\"loss_good\":%.6g,\"loss_bad\":%.6g,\"mean_pct\":%.6g}",
			l->p, l->r, l->loss_good, l->loss_bad,
			wanem_loss_mean(l) * 100);
		break;
	default:
		fputs("{\"model\":\"none\"}", f);
	}
}

static void json_config(FILE *f, const struct wanem_attr *a)
{
	fprintf(f, ",\"config\":{\"mbufs\":%" PRIu32, a->mbufs);
	for (int d = 0; d < 2; d++) {
		const struct wanem_path_attr *p = &a->dir[d];

		fprintf(f, ",\"%s\":{\"delay_ms\":%.6g,\"rate_bps\":%" PRIu64
			",\"burst_bytes\":%" PRIu64 ",\"queue_bytes\":%" PRIu64
			",\"ecn_bytes\":%" PRIu64 ",\"loss\":",
			dir_name[d], (double)p->delay_ns / 1e6, p->rate_bps,
			p->burst_bytes, p->queue_bytes, p->ecn_bytes);
		json_loss(f, &p->loss);
		fprintf(f, ",\"dup_pct\":%.6g,\"reorder_pct\":%.6g,"
			"\"corrupt_pct\":%.6g}", p->dup * 100, p->reorder * 100,
			p->corrupt * 100);
	}
	fputc('}', f);
}

static void json_dir(FILE *f, const struct wanem_counters *c, uint64_t held)
{
	fprintf(f, "{\"rx\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"tx\":%" PRIu64
		",\"tx_bytes\":%" PRIu64 ",\"dropped\":{\"loss\":%" PRIu64
		",\"queue\":%" PRIu64 ",\"full\":%" PRIu64 ",\"flush\":%" PRIu64
		"},\"duplicated\":%" PRIu64 ",\"dup_failed\":%" PRIu64
		",\"reordered\":%" PRIu64 ",\"corrupted\":%" PRIu64
		",\"marked\":%" PRIu64 ",\"queue_peak_bytes\":%" PRIu64
		",\"delay_peak_bytes\":%" PRIu64 ",\"held\":%" PRIu64
		",\"late_us\":{\"avg\":%.1f,\"max\":%.1f}}",
		c->rx, c->rx_bytes, c->tx, c->tx_bytes, c->drop_loss,
		c->drop_queue, c->drop_full, c->drop_flush, c->duplicated,
		c->dup_failed, c->reordered, c->corrupted, c->marked,
		c->queue_peak_bytes, c->delay_peak_bytes, held,
		c->tx ? (double)c->late_sum_ns / (double)c->tx / 1e3 : 0.0,
		(double)c->late_max_ns / 1e3);
}

void wanem_report_json(FILE *f, const struct wanem_report *r)
{
	struct timespec now;

	/* "time": the wall clock (epoch seconds), to put the counters on
	 * another program's time line (bench/matrix) */
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(f, "{\"type\":\"%s\",\"seconds\":%.3f,\"time\":%.3f,\"seed\":%" PRIu64,
		r->type, r->seconds,
		(double)now.tv_sec + (double)now.tv_nsec / 1e9, r->attr->seed);
	if (r->type[0] == 'e')
		json_config(f, r->attr);
	for (int d = 0; d < 2; d++) {
		fprintf(f, ",\"%s\":", dir_name[d]);
		json_dir(f, &r->dir[d], r->held[d]);
	}
	if (r->have_ports) {
		fputs(",\"ports\":[", f);
		for (int i = 0; i < 2; i++) {
			const struct wanem_port_stats *s = &r->port[i];

			fprintf(f, "%s{\"port\":%d,\"ipackets\":%" PRIu64
				",\"opackets\":%" PRIu64 ",\"ibytes\":%" PRIu64
				",\"obytes\":%" PRIu64 ",\"imissed\":%" PRIu64
				",\"ierrors\":%" PRIu64 ",\"oerrors\":%" PRIu64
				",\"rx_nombuf\":%" PRIu64 "}", i ? "," : "", i,
				s->ipackets, s->opackets, s->ibytes, s->obytes,
				s->imissed, s->ierrors, s->oerrors, s->rx_nombuf);
		}
		fputc(']', f);
	}
	fprintf(f, ",\"loop\":{\"stall_max_us\":%.1f,\"stalls_over_1ms\":%" PRIu64
		",\"rt_pauses\":%" PRIu64 "}}\n", (double)r->stall_max_ns / 1e3,
		r->stalls_1ms, r->rt_pauses);
	fflush(f);
}

void wanem_report_text(FILE *f, const struct wanem_report *r)
{
	fprintf(f, "ferry-wanem %s after %.1f s (seed %" PRIu64 "):\n", r->type,
		r->seconds, r->attr->seed);
	for (int d = 0; d < 2; d++) {
		const struct wanem_counters *c = &r->dir[d];

		fprintf(f, "  %s: rx %" PRIu64 " tx %" PRIu64 " (%.1f MB) dropped "
			"loss %" PRIu64 " queue %" PRIu64 " full %" PRIu64
			" flush %" PRIu64 "; dup %" PRIu64 " reord %" PRIu64
			" corrupt %" PRIu64 " ecn %" PRIu64 "; queue peak %" PRIu64
			" B, in flight peak %" PRIu64 " B; late avg %.1f max %.1f us\n",
			d ? "B->A" : "A->B", c->rx, c->tx, (double)c->tx_bytes / 1e6,
			c->drop_loss, c->drop_queue, c->drop_full, c->drop_flush,
			c->duplicated, c->reordered, c->corrupted, c->marked,
			c->queue_peak_bytes, c->delay_peak_bytes,
			c->tx ? (double)c->late_sum_ns / (double)c->tx / 1e3 : 0.0,
			(double)c->late_max_ns / 1e3);
	}
	fprintf(f, "  loop: longest stall %.1f ms, %" PRIu64 " over 1 ms, %" PRIu64
		" real-time pauses\n", (double)r->stall_max_ns / 1e6, r->stalls_1ms,
		r->rt_pauses);
	if (r->have_ports)
		for (int i = 0; i < 2; i++)
			if (r->port[i].imissed || r->port[i].rx_nombuf ||
			    r->port[i].ierrors || r->port[i].oerrors)
				fprintf(f, "  port %d: missed %" PRIu64 ", no buffer %"
					PRIu64 ", rx errors %" PRIu64 ", tx errors %"
					PRIu64 "\n", i, r->port[i].imissed,
					r->port[i].rx_nombuf, r->port[i].ierrors,
					r->port[i].oerrors);
	fflush(f);
}
