/* ferry keygen: write a new shared key; ferry version. */
#include <stdio.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/key.h"
#include "opts_table.h"

int cmd_keygen(int argc, char **argv)
{
	struct cli_args a;
	char why[256];
	int i;

	i = cli_parse(&cli_cmd_keygen, argc, argv, &a);
	if (i < 0)
		return a.exit;
	if (ferry_key_generate(argv[i], why, sizeof(why))) {
		fprintf(stderr, "ferry keygen: %s\n", why);
		return 1;
	}
	printf("wrote a new key to %s (mode 0600); copy it to the peer host\n",
	       argv[i]);
	return 0;
}

int cmd_version(int argc, char **argv)
{
	struct cli_args a;
	int i;

	i = cli_parse(&cli_cmd_version, argc, argv, &a);
	if (i < 0)
		return a.exit;
	printf("ferry %s\n", FERRY_VERSION);
	return 0;
}
