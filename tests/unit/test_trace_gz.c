/*
 * test_trace_gz.c - the gzip input of the trace reader gives the same
 * columns as the plain text, whichever inflater runs (ISA-L when built
 * with it, zlib for what ISA-L hands over: several members, bytes after
 * the member, a truncated or corrupt stream).
 *
 * Reference: the plain JSON read with ts_trace_read_mem (no inflate at
 * all) and zlib's own documented behaviour, used through its API here:
 * the compressed variants are made with deflate(), and the bytes a
 * truncated stream yields are what zlib's inflate() gives for it. The
 * input is a 15 MB shared trace, so every variant crosses many of the
 * reader's 4 MiB buffers. Also: the line numbers of a cut stream, counted
 * again for an error (trace_src_line_of).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "harness.h"
#include "trainscope/trace.h"
#include "../../src/trace/trace_src.h"

#define TRACE "traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"

/* One gzip member of p[0..n) appended at out + *len (level 6). */
static int gz_member(const unsigned char *p, size_t n, unsigned char *out, size_t cap,
		     size_t *len)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)n;
	z.next_out = out + *len;
	z.avail_out = (uInt)(cap - *len);
	int r = deflate(&z, Z_FINISH);
	*len += (size_t)z.total_out;
	deflateEnd(&z);
	return r == Z_STREAM_END ? 0 : -1;
}

/* zlib's output for a (possibly truncated) single-member stream. */
static size_t zlib_inflate_all(const unsigned char *gz, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_NO_FLUSH);
	size_t got = (size_t)z.total_out;
	inflateEnd(&z);
	return got;
}

/* Columns of a and b equal (names as strings). */
static void same_columns(const struct ts_trace *a, const struct ts_trace *b, const char *what)
{
	if (a->ev.n != b->ev.n) {
		ts_test_fail(__FILE__, __LINE__, "%s: %zu events, want %zu", what, b->ev.n, a->ev.n);
		return;
	}
	for (size_t i = 0; i < a->ev.n; i++) {
		if (ts_ev_ts(&a->ev, i) != ts_ev_ts(&b->ev, i) || ts_ev_dur(&a->ev, i) != ts_ev_dur(&b->ev, i) ||
		    a->ev.cat[i] != b->ev.cat[i] || a->ev.ph[i] != b->ev.ph[i] ||
		    ts_ev_pid(&a->ev, i) != ts_ev_pid(&b->ev, i) || ts_ev_tid(&a->ev, i) != ts_ev_tid(&b->ev, i) ||
		    ts_ev_stream(&a->ev, i) != ts_ev_stream(&b->ev, i) ||
		    ts_ev_corr(&a->ev, i) != ts_ev_corr(&b->ev, i) ||
		    ts_ev_extid(&a->ev, i) != ts_ev_extid(&b->ev, i) ||
		    strcmp(ts_trace_str(a, a->ev.name[i]), ts_trace_str(b, b->ev.name[i])) != 0) {
			ts_test_fail(__FILE__, __LINE__, "%s: event %zu differs", what, i);
			return;
		}
	}
	CHECK_I64(b->meta.rank, a->meta.rank);
	CHECK_I64(b->coll.n, a->coll.n);
	CHECK_I64(b->mem.n, a->mem.n);
}

static int read_mem(struct ts_trace *t, const void *p, size_t n, struct ts_err *err)
{
	ts_trace_init(t);
	ts_err_init(err);
	return ts_trace_read_mem(t, p, n, "t.json.gz", NULL, err);
}

/* Read p[0..n) from a temporary file (the seekable-file path). */
static int read_file(struct ts_trace *t, const void *p, size_t n, struct ts_err *err)
{
	char path[] = "/tmp/ts-test-gz-XXXXXX";
	int fd = mkstemp(path), rc = -1;

	ts_trace_init(t);
	ts_err_init(err);
	if (fd < 0)
		return -1;
	if (write(fd, p, n) == (ssize_t)n)
		rc = ts_trace_read(t, path, NULL, err);
	close(fd);
	unlink(path);
	return rc;
}

TEST(trace_gz_variants_match_plain)
{
	const char *src = test_data(TRACE);
	if (ts_test_skipping())
		return;
	size_t n = 0, cap = (size_t)16 << 20, len = 0;
	unsigned char *plain = test_load_all(src, &n);
	unsigned char *gz = malloc(cap);
	struct ts_trace ref, t;
	struct ts_err err;

	REQUIRE(plain && gz && n > ((size_t)12 << 20));
	REQUIRE(read_mem(&ref, plain, n, &err) == 0);
	REQUIRE(ref.ev.n == 68692);   /* tests/unit/test_trace_read.c, expected[] */

	/* one member: in memory and as a file */
	REQUIRE(gz_member(plain, n, gz, cap, &len) == 0);
	size_t one = len;
	REQUIRE(read_mem(&t, gz, one, &err) == 0);
	same_columns(&ref, &t, "one member, memory");
	ts_trace_release(&t);
	REQUIRE(read_file(&t, gz, one, &err) == 0);
	same_columns(&ref, &t, "one member, file");
	ts_trace_release(&t);

	/* bytes after the member are ignored, as gzip -d does */
	memcpy(gz + one, "garbage\n", 8);
	REQUIRE(read_file(&t, gz, one + 8, &err) == 0);
	same_columns(&ref, &t, "trailing bytes");
	ts_trace_release(&t);

	/* two members, split inside an event (concatenated gzip) */
	len = 0;
	REQUIRE(gz_member(plain, 5000001, gz, cap, &len) == 0);
	REQUIRE(gz_member(plain + 5000001, n - 5000001, gz, cap, &len) == 0);
	REQUIRE(read_file(&t, gz, len, &err) == 0);
	same_columns(&ref, &t, "two members, file");
	ts_trace_release(&t);
	REQUIRE(read_mem(&t, gz, len, &err) == 0);
	same_columns(&ref, &t, "two members, memory");
	ts_trace_release(&t);
	free(gz);
	ts_trace_release(&ref);
	free(plain);
}

TEST(trace_gz_truncated_and_corrupt_as_zlib)
{
	const char *src = test_data(TRACE);
	if (ts_test_skipping())
		return;
	size_t n = 0, cap = (size_t)16 << 20, len = 0;
	unsigned char *plain = test_load_all(src, &n);
	unsigned char *gz = malloc(cap), *part = malloc((size_t)32 << 20);
	struct ts_trace ref, t;
	struct ts_err err;

	REQUIRE(plain && gz && part);
	REQUIRE(gz_member(plain, n, gz, cap, &len) == 0);

	/* truncated at 40 %: the events in the bytes zlib recovers, which
	 * the plain reader gives for the same prefix */
	size_t cut = len * 2 / 5;
	size_t got = zlib_inflate_all(gz, cut, part, (size_t)32 << 20);
	REQUIRE(got > 0 && got < n);
	REQUIRE(memcmp(part, plain, got) == 0);
	REQUIRE(read_mem(&ref, plain, got, &err) == 0);
	REQUIRE(read_file(&t, gz, cut, &err) == 0);
	CHECK(ref.ev.n > 10000);
	same_columns(&ref, &t, "truncated at 40 %");
	CHECK(t.meta.truncated);
	ts_trace_release(&t);
	ts_trace_release(&ref);

	/* only the 8-byte trailer (CRC, length) lost: every event is there,
	 * but the file is cut, as `steps` says of it: truncated, with the
	 * event list whole (no step is dropped for it) */
	REQUIRE(read_mem(&ref, plain, n, &err) == 0);
	REQUIRE(read_file(&t, gz, len - 8, &err) == 0);
	same_columns(&ref, &t, "trailer cut");
	CHECK(t.meta.truncated);
	CHECK(t.meta.events_whole);
	CHECK(!ref.meta.truncated);
	ts_trace_release(&t);
	ts_trace_release(&ref);

	/* a wrong CRC: zlib's "incorrect data check" at the end of the data */
	gz[len - 6] ^= 0x55;
	CHECK(read_file(&t, gz, len, &err) == TS_EPARSE);
	CHECK(strstr(err.msg, "incorrect data check") != NULL);
	CHECK_I64(err.offset, (int64_t)n);
	ts_trace_release(&t);
	CHECK(read_mem(&t, gz, len, &err) == TS_EPARSE);
	CHECK(strstr(err.msg, "incorrect data check") != NULL);
	ts_trace_release(&t);
	free(part);
	free(gz);
	free(plain);
}

/*
 * An event with an unescaped quote is dropped and the reader resumes at
 * the next "}, {" + '"'. When the window ended between that '{' and its
 * '"', the reader skipped the good event after the bad one (it took the
 * candidate for a false one instead of reading on), so gzip input, read
 * in 64 KiB buffers, lost an event the plain text kept. Here the '{' of
 * the event after the bad one is the last byte of the first inflated
 * buffer (offset 65535): the plain read keeps the padding, the filler
 * and "after", the bad one dropped and counted as recovered.
 */
TEST(trace_gz_recovery_across_buffer_edge)
{
	const char *head = "{\"traceEvents\": [\n";
	const char *bad = "{\"ph\": \"X\", \"name\": \"bad \"quote\" x\", \"ts\": 2, \"dur\": 1},";
	const char *good = "{\"ph\": \"X\", \"name\": \"after\", \"ts\": 3, \"dur\": 1}]}\n";
	char pad[64];
	struct ts_sb sb;
	size_t cap = (size_t)1 << 20, len = 0;
	unsigned char *gz = malloc(cap);
	struct ts_trace ref, t;
	struct ts_err err;
	int npad = 0;

	REQUIRE(gz);
	ts_sb_init(&sb);
	ts_sb_adds(&sb, head);
	/* padding events, then one whose name fills up to the bad event,
	 * which ends (its ',') at offset 65534 */
	const char *fill0 = "{\"ph\": \"X\", \"name\": \"", *fill1 = "\", \"ts\": 1},\n";
	while (sb.len + 200 < 65535 - strlen(bad)) {
		snprintf(pad, sizeof(pad), "{\"ph\": \"X\", \"name\": \"p\", \"ts\": %d},\n", npad);
		ts_sb_adds(&sb, pad);
		npad++;
	}
	ts_sb_adds(&sb, fill0);
	while (sb.len + strlen(fill1) + strlen(bad) < 65535)
		ts_sb_adds(&sb, "f");
	ts_sb_adds(&sb, fill1);
	ts_sb_adds(&sb, bad);
	REQUIRE(sb.len == 65535);
	ts_sb_adds(&sb, good);
	REQUIRE(!sb.failed && sb.buf[65535] == '{' && sb.buf[65536] == '"');

	REQUIRE(read_mem(&ref, sb.buf, sb.len, &err) == 0);
	CHECK_I64((int64_t)ref.ev.n, npad + 2);   /* padding, filler, "after" */
	CHECK_I64((int64_t)ref.meta.recovered, 1);
	REQUIRE(gz_member((const unsigned char *)sb.buf, sb.len, gz, cap, &len) == 0);
	REQUIRE(read_mem(&t, gz, len, &err) == 0);
	same_columns(&ref, &t, "quote bug before a buffer edge");
	CHECK_I64((int64_t)t.meta.recovered, 1);
	ts_trace_release(&t);
	ts_trace_release(&ref);
	free(gz);
	ts_sb_release(&sb);
}

/*
 * The line of an offset in gzip input, counted by inflating the stream
 * again from its start (the error path), when the stream was cut. A cut
 * stream's last inflate call can leave output that did not fit in the
 * buffer (the rest of a match) while every input byte is consumed; the
 * count must drain it, as the reader's own inflate does, or the line of a
 * byte in that tail is unknown (-1). Reference: zlib's inflate() of the
 * same cut stream, with the newlines counted here. Cuts are tried over a
 * range, so that the counter's 1 MiB buffers end inside a match at the
 * input's end for some of them.
 */
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
	gzn = 0;
	REQUIRE(gz_member(text, n, gz, cap, &gzn) == 0);
	REQUIRE(gzn > 1000);
	/* the cuts whose output ends just past 1 MiB, where the counter's
	 * first buffer fills */
	for (size_t cut = 200; cut < gzn; cut++) {
		size_t total = zlib_inflate_all(gz, cut, out, cap);
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
