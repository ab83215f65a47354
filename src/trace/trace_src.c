/*
 * trace_src.c - byte source of the trace reader: plain files, gzip, memory.
 *
 * Wraps struct ts_input and adds what the reader needs beyond it: newline
 * counting of the bytes that leave the window (so parse errors in streamed
 * gzip input still carry a line number) and "gzip ended early" turned into
 * a clean end of input for truncated-trace recovery.
 */
#include <string.h>
#include "trace_src.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static uint64_t count_nl(const unsigned char *p, size_t n)
{
	uint64_t c = 0;
	size_t i = 0;

#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n');
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
		c += (uint64_t)__builtin_popcount((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
	}
#endif
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

static void sync(struct trace_src *s)
{
	s->data = s->in.data;
	s->len = s->in.len;
	s->base = s->in.base;
	s->eof = s->in.eof || s->in.kind == TS_INPUT_MAP;
	s->path = s->in.path;
}

int trace_src_open(struct trace_src *s, const char *path, struct ts_err *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = ts_input_open(&s->in, path, err);
	if (rc)
		return rc;
	sync(s);
	return 0;
}

int trace_src_open_mem(struct trace_src *s, const void *data, size_t n,
		       const char *name, struct ts_err *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = ts_input_open_mem(&s->in, data, n, name, err);
	if (rc)
		return rc;
	sync(s);
	return 0;
}

void trace_src_release(struct trace_src *s)
{
	ts_input_release(&s->in);
	memset(s, 0, sizeof(*s));
}

int trace_src_more(struct trace_src *s, size_t keep, struct ts_err *err)
{
	int64_t r;

	if (keep > s->len)
		keep = s->len;
	if (s->eof)
		return 0;
	s->nl_before += count_nl(s->data, keep);
	r = ts_input_more(&s->in, keep, err);
	if (r == TS_ETRUNC) {
		/* the window still holds every byte inflated so far */
		s->in.eof = 1;
		s->cut = 1;
		r = 0;
	}
	sync(s);
	return r < 0 ? (int)r : 0;
}

int64_t trace_src_line_of(const struct trace_src *s, uint64_t off)
{
	if (off < s->base || off > s->base + s->len)
		return -1;
	return (int64_t)(s->nl_before + count_nl(s->data, (size_t)(off - s->base)) + 1);
}
