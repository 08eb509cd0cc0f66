/* ferry: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "cmd_doctor.h"
#include "cmd_rocedump.h"
#include "cmds.h"

static const char help_main[] =
"usage: ferry COMMAND [options]\n"
"\n"
"ferry moves bulk data between data-transfer nodes over RDMA (verbs),\n"
"a user-space RoCEv2 engine (uroce) or TCP, through one pipeline of\n"
"credits, checksummed chunks and parallel streams.\n"
"\n"
"Commands:\n"
"  recv      receive sessions: the daemon on a data-transfer node\n"
"  serve     the same as recv (reads better for a daemon with --exports)\n"
"  send      send files and directories, verified end to end\n"
"  cp        copy files to, from or between daemons (ferry:// URLs)\n"
"  bench     memory-to-memory transfer to a receiver, like iperf3\n"
"  doctor    check this host for bulk transfer: pass / warn / fail, with fixes\n"
"  keygen    write a shared key for authenticating peers\n"
"  rocedump  decode a RoCE capture: every frame and flow, every ICRC checked\n"
"  version   print the version\n"
"\n"
"`ferry COMMAND --help` explains each command.\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "recv", cmd_recv },
	{ "serve", cmd_recv },
	{ "cp", cmd_cp },
	{ "send", cmd_send },
	{ "bench", cmd_bench },
	{ "keygen", cmd_keygen },
	{ "rocedump", cmd_rocedump },
	{ "doctor", cmd_doctor },
	{ "version", cmd_version },
};

int main(int argc, char **argv)
{
	static char version[] = "version";

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		fputs(help_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version"))
		argv[1] = version;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ferry: unknown command '%s' (see `ferry --help`)\n",
		argv[1]);
	return 2;
}
