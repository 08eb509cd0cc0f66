/* Splitting a command-line string into words, for DPDK EAL arguments
 * given as one string (--dpdk, FERRY_DPDK). Shared by libferry's uroce
 * transport and ferry-wanem, which compiles args.c itself. */
#ifndef FERRY_UTIL_ARGS_H
#define FERRY_UTIL_ARGS_H

/* Split s (modified in place) into words at spaces, tabs and newlines;
 * single or double quotes group a word (no escapes). The words go to
 * argv[argc], argv[argc + 1], ...; at most max entries of argv in all.
 * Returns the new argc, or -E2BIG when there are more words. */
int ferry__split_args(char *s, char **argv, int max, int argc);

#endif
