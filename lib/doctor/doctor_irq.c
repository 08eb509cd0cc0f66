/* Where a NIC's interrupts may run: on its own NUMA node's CPUs, or across
 * the socket link (every packet's completion then crosses it). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "ferry/topo.h"
#include "topo/topo_int.h"

#define MAX_IRQS 4096
#define MAX_CPU_ID 16383

struct irqs {
	int *v;
	size_t n;
};

static void irq_add(struct irqs *s, long irq)
{
	if (irq < 0 || irq > INT_MAX || s->n == MAX_IRQS)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == irq)
			return;
	s->v[s->n++] = (int)irq;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* word occurs in s on its own: "eth0" in "eth0-TxRx-3", not in "veth0". */
static bool has_word(const char *s, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
		bool left = p == s || !isalnum((unsigned char)p[-1]);
		bool right = !isalnum((unsigned char)p[len]);

		if (left && right)
			return true;
	}
	return false;
}

/* IRQs of the NIC's PCI function (msi_irqs/), and /proc/interrupts lines
 * naming the netdev or the PCI address (mlx5_comp3@pci:0000:3b:00.0). */
static void collect(const struct ferry__doctor *d, const char *ifname,
		    struct irqs *s)
{
	char (*names)[FERRY__DOCTOR_NAME] = calloc(MAX_IRQS, sizeof(*names));
	char rel[PATH_MAX], uevent[512], addr[32] = "";
	char *line = NULL, *p;
	size_t cap = 0;
	FILE *f;
	int n = 0;

	if (!ferry__doctor_pcidir(d, ifname, rel, sizeof(rel))) {
		if (names)
			n = ferry__doctor_list(d, names, MAX_IRQS, "%s/msi_irqs",
					       rel);
		if (!ferry__doctor_read(d, uevent, sizeof(uevent), "%s/uevent",
					rel) &&
		    (p = strstr(uevent, "PCI_SLOT_NAME=")))
			sscanf(p + strlen("PCI_SLOT_NAME="), "%31[0-9a-fA-F:.]",
			       addr);
	}
	for (int i = 0; i < n; i++)
		irq_add(s, strtol(names[i], NULL, 10));
	free(names);
	f = ferry__doctor_fopen(d, "proc/interrupts");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *end;
		long irq = strtol(line, &end, 10);

		if (end == line || *end != ':')
			continue; /* the header, NMI:, LOC: ... */
		if (has_word(end, ifname) || (addr[0] && has_word(end, addr)))
			irq_add(s, irq);
	}
	free(line);
	fclose(f);
}

struct tally {
	int checked, outside, bad_irq;
	char bad_list[48];
};

static void affinity(const struct ferry__doctor *d, const struct irqs *s,
		     const bool *on_node, struct tally *t)
{
	int *cpus = malloc((MAX_CPU_ID + 1) * sizeof(*cpus));
	char list[4096];

	for (size_t i = 0; cpus && i < s->n; i++) {
		bool out = false;
		int n;

		if (ferry__doctor_read(d, list, sizeof(list),
				       "proc/irq/%d/smp_affinity_list", s->v[i]))
			continue;
		n = ferry_cpulist_parse(list, cpus, MAX_CPU_ID + 1);
		if (n <= 0)
			continue;
		t->checked++;
		for (int j = 0; j < n && !out; j++)
			out = !on_node[cpus[j]];
		if (out && !t->outside++) {
			t->bad_irq = s->v[i];
			ferry__cpulist_format(cpus, n, t->bad_list,
					      sizeof(t->bad_list));
		}
	}
	free(cpus);
}

void ferry__doctor_irq(struct ferry__doctor *d, const char *ifname, int node)
{
	int *cpus = calloc(FERRY_TOPO_MAX_CPUS, sizeof(*cpus));
	bool *on_node = calloc(MAX_CPU_ID + 1, sizeof(*on_node));
	struct irqs s = { .v = calloc(MAX_IRQS, sizeof(int)) };
	struct tally t = { 0 };
	struct ferry_check *c;
	char node_list[64];
	int ncpu = 0;

	if (!cpus || !on_node || !s.v)
		goto out;
	collect(d, ifname, &s);
	if (!s.n) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s irq", ifname);
		ferry__doctor_value(c, "no IRQs found (device msi_irqs, /proc/interrupts)");
		goto out;
	}
	qsort(s.v, s.n, sizeof(int), cmp_int);
	if (node >= 0)
		ncpu = ferry_topo_node_cpus(d->sys, node, cpus,
					    FERRY_TOPO_MAX_CPUS);
	if (ncpu <= 0) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s irq", ifname);
		ferry__doctor_value(c, "%zu IRQs; the NIC's NUMA node or its CPUs are unknown, placement not checked",
				    s.n);
		goto out;
	}
	for (int i = 0; i < ncpu; i++)
		on_node[cpus[i]] = true;
	ferry__cpulist_format(cpus, ncpu, node_list, sizeof(node_list));
	affinity(d, &s, on_node, &t);
	if (!t.checked) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s irq", ifname);
		ferry__doctor_value(c, "%zu IRQs, none with a readable smp_affinity_list",
				    s.n);
	} else if (!t.outside) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s irq", ifname);
		ferry__doctor_value(c, "%d IRQ%s, all on node %d (cpus %s)",
				    t.checked, t.checked == 1 ? "" : "s", node,
				    node_list);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "%s irq", ifname);
		ferry__doctor_value(c, "%d of %d IRQs may run off node %d (cpus %s), e.g. IRQ %d on %s",
				    t.outside, t.checked, node, node_list,
				    t.bad_irq, t.bad_list);
		ferry__doctor_fix(c, "stop irqbalance (or ban these IRQs), then echo %s > /proc/irq/N/smp_affinity_list for each; Mellanox: set_irq_affinity_cpulist.sh %s %s",
				  node_list, node_list, ifname);
	}
out:
	free(s.v);
	free(on_node);
	free(cpus);
}
