/* ferry doctor: check this host for bulk transfer, print what to fix. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_doctor.h"
#include "ferry/doctor.h"
#include "ferry/error.h"

const char help_doctor[] =
"usage: ferry doctor [--json] [--rtt MS] [--rate GBPS] [--netdev IF]\n"
"                    [--root DIR]\n"
"\n"
"Check this host for bulk transfer and say how to fix what is not ready.\n"
"Reads /sys and /proc only: changes nothing and needs no root.\n"
"\n"
"What it checks:\n"
"  rdma        RDMA devices; per port: state, link layer, GIDs (RoCE v2\n"
"              for Ethernet), RoCE MTU (follows the netdev MTU: 4096\n"
"              needs an MTU of 4200 or more)\n"
"  IF ...      each NIC: link, MTU (jumbo frames), NUMA node and its\n"
"              cores, PCIe speed x width against the port speed, PCIe\n"
"              link below the card's maximum, IRQ affinity against the\n"
"              NIC's node\n"
"  memory      hugepages (ferry's ring + buffers take 2 x 256 MiB by\n"
"              default), transparent huge pages, RLIMIT_MEMLOCK\n"
"  tcp         net.core.rmem_max/wmem_max, net.ipv4.tcp_rmem/tcp_wmem\n"
"              against the bandwidth-delay product (per socket at most\n"
"              1 GiB, TCP's largest window), congestion control (bbr),\n"
"              tcp_slow_start_after_idle (0), tcp_mtu_probing (1)\n"
"  cpu         the frequency governor (performance)\n"
"\n"
"Options:\n"
"      --rtt MS       round-trip time of your longest path (default 100)\n"
"      --rate GBPS    rate to plan for, in Gb/s (default: the fastest\n"
"                     checked NIC's port speed, else 10)\n"
"      --netdev IF    check only this netdev, or this RDMA device, and\n"
"                     what rides on it (default: every netdev with a\n"
"                     device link, i.e. not virtual, and every RDMA device)\n"
"      --root DIR     read DIR/sys and DIR/proc instead (a copy of a host)\n"
"      --json         one JSON document: checks (name, status, value,\n"
"                     fix) and summary counts\n"
"\n"
"Each line gives PASS, WARN, FAIL or INFO, the check and what was seen;\n"
"the fix follows on the next line. WARN costs speed. INFO is a fact with\n"
"nothing to fix, or one this host does not tell (virtual machines).\n"
"FAIL means ferry cannot work at all on what was asked for:\n"
"  - --netdev names no netdev or RDMA device;\n"
"  - the --netdev interface is down, or its RDMA device has no ACTIVE\n"
"    port, or none of its ports has a GID (RoCE: the netdev has no IP\n"
"    address; InfiniBand: no subnet manager);\n"
"  - RLIMIT_MEMLOCK is below 64 MiB without CAP_IPC_LOCK while an RDMA\n"
"    device is checked: verbs cannot register a ring (tcp would work).\n"
"Without --netdev a port down or without GIDs is a WARN (another NIC may\n"
"do), and so is no RDMA device at all: ferry then uses uroce or tcp.\n"
"\n"
"Exit status: 0 when nothing failed, 1 when a check failed, 2 on bad\n"
"usage (including a --root without sys/ or proc/).\n"
"\n"
"Example: ferry doctor --rtt 120 --rate 100 --netdev ens1f0np0\n";

enum { OPT_RTT = 1000, OPT_RATE, OPT_NETDEV, OPT_ROOT, OPT_DJSON };

static const char *const words[] = { "PASS", "WARN", "FAIL", "INFO" };

static bool positive(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0 && v <= max)) {
		fprintf(stderr, "ferry doctor: bad value '%s' for %s: want a number above 0, at most %g\n",
			s, opt, max);
		return false;
	}
	*out = v;
	return true;
}

static void print_json(const struct ferry_check *c, size_t n,
		       const unsigned *count, bool complete)
{
	printf("{\n  \"checks\": [");
	for (size_t i = 0; i < n; i++) {
		printf("%s\n    {\"name\": ", i ? "," : "");
		ferry_json_str(stdout, c[i].name);
		printf(", \"status\": \"%s\", \"value\": ",
		       ferry_check_status_name(c[i].status));
		ferry_json_str(stdout, c[i].value);
		printf(", \"fix\": ");
		ferry_json_str(stdout, c[i].fix);
		printf("}");
	}
	printf("\n  ],\n  \"summary\": {\"pass\": %u, \"warn\": %u, \"fail\": %u, \"info\": %u},\n",
	       count[FERRY_CHECK_PASS], count[FERRY_CHECK_WARN],
	       count[FERRY_CHECK_FAIL], count[FERRY_CHECK_INFO]);
	printf("  \"complete\": %s\n}\n", complete ? "true" : "false");
}

static void print_table(const struct ferry_check *c, size_t n,
			const unsigned *count)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s  %-34s %s\n", words[c[i].status], c[i].name,
		       c[i].value);
		if (c[i].fix[0])
			printf("      fix: %s\n", c[i].fix);
	}
	printf("\n%u pass, %u warn, %u fail, %u info\n",
	       count[FERRY_CHECK_PASS], count[FERRY_CHECK_WARN],
	       count[FERRY_CHECK_FAIL], count[FERRY_CHECK_INFO]);
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rtt", required_argument, NULL, OPT_RTT },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "netdev", required_argument, NULL, OPT_NETDEV },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "json", no_argument, NULL, OPT_DJSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ferry_doctor_attr a = { .root = "/" };
	unsigned count[4] = { 0 };
	struct ferry_check *c;
	bool json = false;
	int opt, err;
	size_t n;

	while ((opt = cli_getopt("doctor", argc, argv, "h", longopts)) != -1) {
		switch (opt) {
		case OPT_RTT:
			if (!positive("--rtt", optarg, 60000, &a.rtt_ms))
				return 2;
			break;
		case OPT_RATE:
			if (!positive("--rate", optarg, 100000, &a.rate_gbps))
				return 2;
			break;
		case OPT_NETDEV:
			a.netdev = optarg;
			break;
		case OPT_ROOT:
			a.root = optarg;
			break;
		case OPT_DJSON:
			json = true;
			break;
		case 'h':
			fputs(help_doctor, stdout);
			return 0;
		default:
			cli_die_usage("doctor", "unknown option");
		}
	}
	if (optind != argc)
		cli_die_usage("doctor", "takes no arguments");
	c = calloc(FERRY_DOCTOR_MAX_CHECKS, sizeof(*c));
	if (!c) {
		fprintf(stderr, "ferry doctor: out of memory\n");
		return 1;
	}
	err = ferry_doctor_run(&a, c, FERRY_DOCTOR_MAX_CHECKS, &n);
	if (err && err != -ENOSPC) {
		if (err == -EINVAL)
			fprintf(stderr, "ferry doctor: bad value '%s' for --netdev: not an interface name\n",
				a.netdev);
		else if (err == -ENOENT)
			fprintf(stderr, "ferry doctor: %s has neither sys/ nor proc/ to read\n",
				a.root);
		else
			fprintf(stderr, "ferry doctor: %s\n", ferry_strerror(err));
		free(c);
		return err == -EINVAL || err == -ENOENT ? 2 : 1;
	}
	if (err)
		fprintf(stderr, "ferry doctor: more checks than fit; showing the first %zu\n",
			n);
	for (size_t i = 0; i < n; i++)
		if ((unsigned)c[i].status < 4)
			count[c[i].status]++;
	if (json)
		print_json(c, n, count, !err);
	else
		print_table(c, n, count);
	free(c);
	return count[FERRY_CHECK_FAIL] ? 1 : 0;
}
