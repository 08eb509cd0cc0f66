/* ferry keygen: write a new shared key. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "ferry/key.h"

const char help_keygen[] =
"usage: ferry keygen FILE\n"
"\n"
"Write a new random 256-bit key to FILE (64 hex digits, mode 0600). Copy\n"
"the same file to the sending and the receiving host and give it to both\n"
"with --key FILE (or $FERRY_KEY): each side then proves to the other that\n"
"it holds the key (HMAC-SHA256 challenge-response) before any data moves.\n"
"The key authenticates peers; it does not encrypt the data.\n"
"Refuses to overwrite an existing FILE.\n";

int cmd_keygen(int argc, char **argv)
{
	char why[256];

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(help_keygen, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "ferry keygen: give one FILE (see `ferry keygen --help`)\n");
		return 2;
	}
	if (ferry_key_generate(argv[1], why, sizeof(why))) {
		fprintf(stderr, "ferry keygen: %s\n", why);
		return 1;
	}
	printf("wrote a new key to %s (mode 0600); copy it to the peer host\n",
	       argv[1]);
	return 0;
}
