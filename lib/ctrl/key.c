/* Key files (ferry/key.h): 64 hex digits and a newline, mode 0600. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ferry/error.h"
#include "ferry/key.h"
#include "io/fsx.h"
#include "util/util.h"

#define HEX_LEN (2 * FERRY_KEY_LEN)
/* Longest file we read: the digits, a newline and some slack to report
 * "too long" rather than silently ignoring the rest. */
#define FILE_MAX (HEX_LEN + 64)

static int hex_val(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int ferry_key_generate(const char *path, char *why, size_t whylen)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t raw[FERRY_KEY_LEN];
	char text[HEX_LEN + 1];
	int fd, ret;

	ret = ferry__random(raw, sizeof(raw));
	if (ret) {
		ferry__why(why, whylen, "cannot get random bytes: %s",
			   ferry_strerror(ret));
		return ret;
	}
	for (size_t i = 0; i < FERRY_KEY_LEN; i++) {
		text[2 * i] = digits[raw[i] >> 4];
		text[2 * i + 1] = digits[raw[i] & 0xf];
	}
	text[HEX_LEN] = '\n';

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		ret = -errno;
		if (ret == -EEXIST)
			ferry__why(why, whylen,
				   "key file %s already exists; refusing to "
				   "overwrite it",
				   path);
		else
			ferry__why(why, whylen, "cannot create key file %s: %s",
				   path, ferry_strerror(ret));
		goto out_wipe;
	}
	ret = ferry__fs_pwrite_full(fd, text, sizeof(text), 0);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (ret) {
		ferry__why(why, whylen, "cannot write key file %s: %s", path,
			   ferry_strerror(ret));
		unlink(path);
	}
out_wipe:
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(text, sizeof(text));
	return ret;
}

/* Parse the file's text into key. Returns 0 or -FERRY_EKEY with why. */
static int parse_key(const char *path, const char *text, size_t len,
		     struct ferry_key *key, char *why, size_t whylen)
{
	size_t end = len;

	/* Trailing whitespace (the newline, a CR from an editor) is fine. */
	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' ||
			   text[end - 1] == ' ' || text[end - 1] == '\t'))
		end--;
	for (size_t i = 0; i < end && i < HEX_LEN; i++) {
		if (hex_val(text[i]) < 0) {
			ferry__why(why, whylen,
				   "key file %s: character %zu is not a hex "
				   "digit; a key is %d hex digits (make one "
				   "with `ferry keygen`)",
				   path, i + 1, HEX_LEN);
			return -FERRY_EKEY;
		}
	}
	if (end != HEX_LEN) {
		ferry__why(why, whylen,
			   "key file %s: expected %d hex digits, found %s%zu "
			   "characters (make a key with `ferry keygen`)",
			   path, HEX_LEN, len >= FILE_MAX ? "at least " : "",
			   end);
		return -FERRY_EKEY;
	}
	for (size_t i = 0; i < FERRY_KEY_LEN; i++)
		key->bytes[i] = (uint8_t)(hex_val(text[2 * i]) << 4 |
					  hex_val(text[2 * i + 1]));
	return 0;
}

int ferry_key_load(const char *path, struct ferry_key *key, char *why,
		   size_t whylen)
{
	char text[FILE_MAX];
	struct stat st;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			ferry__why(why, whylen,
				   "key file %s does not exist; create one with "
				   "`ferry keygen %s` and copy it to both hosts",
				   path, path);
		else
			ferry__why(why, whylen, "cannot open key file %s: %s",
				   path, ferry_strerror(ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		ferry__why(why, whylen, "cannot stat key file %s: %s", path,
			   ferry_strerror(ret));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ferry__why(why, whylen, "key file %s is not a regular file",
			   path);
		ret = -FERRY_EKEY;
		goto out_close;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		ferry__why(why, whylen,
			   "key file %s is open to group or others (mode "
			   "%04o); run `chmod 600 %s`",
			   path, (unsigned)(st.st_mode & 07777), path);
		ret = -FERRY_EKEY;
		goto out_close;
	}
	while (len < sizeof(text)) {
		ssize_t n = read(fd, text + len, sizeof(text) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			ferry__why(why, whylen, "cannot read key file %s: %s",
				   path, ferry_strerror(ret));
			goto out_wipe;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = parse_key(path, text, len, key, why, whylen);
out_wipe:
	OPENSSL_cleanse(text, sizeof(text));
out_close:
	close(fd);
	return ret;
}
