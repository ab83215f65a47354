/* ts_input_getline on a gzip memory buffer: the window starts empty (data
 * NULL), which must not be offset before the first refill (clang UBSan,
 * `make ubsan CC=clang`, reports "applying zero offset to null pointer"). */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/input.h"

/* gzip of "ab\ncd\n" (Python gzip, mtime 0). */
static const unsigned char gz[] = {
	0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 0x4b, 0x4c, 0xe2,
	0x4a, 0x4e, 0xe1, 0x02, 0x00, 0xd1, 0x8b, 0xf0, 0x55, 0x06, 0x00, 0x00, 0x00
};

TEST(input_getline_gzip_memory)
{
	struct ts_input in;
	struct ts_err err;
	const char *line;
	size_t n;
	uint64_t off;

	REQUIRE(ts_input_open_mem(&in, gz, sizeof(gz), "m.gz", &err) == 0);
	REQUIRE(ts_input_getline(&in, &line, &n, &off, &err) == 1);
	CHECK(n == 2 && memcmp(line, "ab", 2) == 0);
	CHECK_I64(off, 0);
	REQUIRE(ts_input_getline(&in, &line, &n, &off, &err) == 1);
	CHECK(n == 2 && memcmp(line, "cd", 2) == 0);
	CHECK_I64(off, 3);
	CHECK_I64(ts_input_getline(&in, &line, &n, &off, &err), 0);
	ts_input_release(&in);
}

/* ts_input_read_all on the same gzip bytes written to a file: the whole
 * inflated text "ab\ncd\n" (6 bytes) in one window; a 5-byte cap refuses it. */
TEST(input_read_all_gzip_file)
{
	char path[] = "/tmp/ts-read-all-XXXXXX";
	struct ts_input in;
	struct ts_err err;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

	REQUIRE(f != NULL);
	REQUIRE(fwrite(gz, 1, sizeof(gz), f) == sizeof(gz));
	fclose(f);
	ts_err_init(&err);
	REQUIRE(ts_input_read_all(&in, path, 6, &err) == 0);
	CHECK_I64((int64_t)in.len, 6);
	CHECK(in.eof && in.base == 0 && memcmp(in.data, "ab\ncd\n", 6) == 0);
	ts_input_release(&in);
	CHECK_I64(ts_input_read_all(&in, path, 5, &err), TS_ELIMIT);
	CHECK(strstr(err.msg, "larger than 5 bytes") != NULL);
	remove(path);
}
