/* CPU frequency: a core ramping up from a low clock adds latency to every
 * burst of completions; DTNs run the performance governor. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

#define MAX_CPUS 8192

static bool is_cpu(const char *name)
{
	if (strncmp(name, "cpu", 3) || !name[3])
		return false;
	for (const char *p = name + 3; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return true;
}

void ferry__doctor_cpu(struct ferry__doctor *d)
{
	char (*names)[FERRY__DOCTOR_NAME] = calloc(MAX_CPUS, sizeof(*names));
	int n = 0, seen = 0, perf = 0;
	char other[32] = "";
	struct ferry_check *c;

	if (names)
		n = ferry__doctor_list(d, names, MAX_CPUS, "sys/devices/system/cpu");
	for (int i = 0; i < n; i++) {
		char gov[32];

		if (!is_cpu(names[i]) ||
		    ferry__doctor_read(d, gov, sizeof(gov),
				       "sys/devices/system/cpu/%s/cpufreq/scaling_governor",
				       names[i]))
			continue;
		seen++;
		if (!strcmp(gov, "performance"))
			perf++;
		else if (!other[0])
			memcpy(other, gov, sizeof(gov));
	}
	free(names);
	if (!seen) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "cpu governor");
		ferry__doctor_value(c, "no cpufreq (virtual machine?)");
	} else if (perf == seen) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "cpu governor");
		ferry__doctor_value(c, "performance on all %d CPUs", seen);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "cpu governor");
		ferry__doctor_value(c, "%s on %d of %d CPUs: cores clock down between bursts",
				    other, seen - perf, seen);
		ferry__doctor_fix(c, "cpupower frequency-set -g performance (or: tuned-adm profile network-throughput)");
	}
}
