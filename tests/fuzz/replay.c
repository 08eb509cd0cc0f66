/* Run files (or every file in directories) through a libFuzzer target
 * without libFuzzer: the seed corpus becomes a regression test that any
 * compiler can build. Exits non-zero if no input was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* An exact-size copy, so reading past the input is caught by ASan. */
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

static int run_path(const char *path, unsigned *count)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (run_file(path))
			return -1;
		++*count;
		return 0;
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while (!ret && (de = readdir(d))) {
		char sub[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		ret = run_path(sub, count);
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count))
			return 1;
	printf("%u inputs replayed\n", count);
	return count ? 0 : 1;
}
