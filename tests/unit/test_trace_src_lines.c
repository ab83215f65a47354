/*
 * test_trace_src_lines.c - the line of an offset in gzip input, counted by
 * inflating the stream again from its start (the error path), when the
 * stream was cut.
 *
 * A cut stream's last inflate call can leave output that did not fit in
 * the buffer (the rest of a match) while every input byte is consumed;
 * the count must drain it, as the reader's own inflate does, or the line
 * of a byte in that tail is unknown (-1). Reference: zlib's inflate() of
 * the same cut stream, with the newlines counted here. Cuts are tried
 * over a range, so that the counter's 1 MiB buffers end inside a match at
 * the input's end for some of them.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "harness.h"
#include "trainscope/core.h"
#include "../../src/trace/trace_src.h"

#define MIB ((size_t)1 << 20)

/* Text of n bytes: numbered lines padded with a run of one letter, so the
 * stream is long matches (up to 258 bytes each) and some literals. */
static unsigned char *lines_text(size_t n)
{
	unsigned char *p = malloc(n);
	size_t at = 0;

	for (unsigned k = 0; p && at < n; k++) {
		char line[400];
		int len = snprintf(line, sizeof(line), "%u ", k);
		int pad = 200 + (int)(k * 7919 % 150);
		memset(line + len, 'a' + (int)(k % 3), (size_t)pad);
		line[len + pad] = '\n';
		for (int i = 0; i <= len + pad && at < n; i++)
			p[at++] = (unsigned char)line[i];
	}
	return p;
}

static size_t deflate_all(const unsigned char *p, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t got;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	got = deflate(&z, Z_FINISH) == Z_STREAM_END ? (size_t)z.total_out : 0;
	deflateEnd(&z);
	return got;
}

/* zlib's output length for gz[0..n) (a cut stream gives what it can). */
static size_t inflated_len(const unsigned char *gz, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t got;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_NO_FLUSH);
	got = (size_t)z.total_out;
	inflateEnd(&z);
	return got;
}

static int64_t count_nl(const unsigned char *p, size_t n)
{
	int64_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += p[i] == '\n';
	return c;
}

TEST(trace_src_gzip_line_after_a_cut)
{
	size_t n = 2 * MIB + 4096, cap = n + MIB;
	unsigned char *text = lines_text(n), *gz = malloc(cap), *out = malloc(cap);
	size_t gzn, tried = 0, at_edge = 0;

	REQUIRE(text && gz && out);
	gzn = deflate_all(text, n, gz, cap);
	REQUIRE(gzn > 1000);
	/* the cuts whose output ends just past 1 MiB, where the counter's
	 * first buffer fills */
	for (size_t cut = 200; cut < gzn; cut++) {
		size_t total = inflated_len(gz, cut, out, cap);
		if (total <= MIB)
			continue;
		if (total > MIB + 600)
			break;
		struct trace_src s;
		struct ts_err err;
		ts_err_init(&err);
		/* 16-byte inflated buffers: the last window starts at most 16
		 * bytes before the end */
		REQUIRE(trace_src_open_mem(&s, gz, cut, "cut.json.gz", 16, &err) == 0);
		while (!s.eof)
			REQUIRE(trace_src_more(&s, s.len, &err) == 0);
		REQUIRE(s.base + s.len == total);
		REQUIRE(s.base + 16 >= total);
		int64_t want = count_nl(out, (size_t)s.base) + 1;
		int64_t got = trace_src_line_of(&s, s.base);
		if (got != want)
			ts_test_fail(__FILE__, __LINE__, "cut at %zu (%zu bytes out): line %lld, want %lld",
				     cut, total, (long long)got, (long long)want);
		at_edge += s.base > MIB;
		tried++;
		trace_src_release(&s);
	}
	printf("  gzip line counts checked after %zu cuts (%zu past the first 1 MiB buffer)\n",
	       tried, at_edge);
	CHECK(tried > 0);
	free(out);
	free(gz);
	free(text);
}
