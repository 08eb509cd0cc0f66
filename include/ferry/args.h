/* Splitting one string of DPDK EAL arguments into words, as libferry does
 * for the uroce transport's EAL string (FERRY_DPDK, `--dpdk`), so a program
 * that takes the same string (ferry-wanem) reads it the same way.
 */
#ifndef FERRY_ARGS_H
#define FERRY_ARGS_H

/* Split s (modified in place) into words at spaces, tabs and newlines;
 * single or double quotes group a word (no escapes). The words go to
 * argv[argc], argv[argc + 1], ...; at most max entries of argv in all.
 * Returns the new argc, or -E2BIG when there are more words. */
int ferry_split_args(char *s, char **argv, int max, int argc);

#endif
