#include <errno.h>

#include "ferry/args.h"

int ferry_split_args(char *s, char **argv, int max, int argc)
{
	while (*s) {
		char *o, q = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		if (argc >= max)
			return -E2BIG;
		argv[argc++] = o = s;
		for (; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
			if (!q && (*s == '\'' || *s == '"'))
				q = *s;
			else if (q && *s == q)
				q = 0;
			else
				*o++ = *s;
		}
		if (*s)
			s++;
		*o = 0;
	}
	return argc;
}
