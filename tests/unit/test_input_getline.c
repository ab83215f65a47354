/* ts_input_getline on a gzip memory buffer: the window starts empty (data
 * NULL), which must not be offset before the first refill (clang UBSan,
 * `make ubsan CC=clang`, reports "applying zero offset to null pointer"). */
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
