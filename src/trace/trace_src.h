/*
 * trace_src.h - the byte source behind the trace reader (private to
 * src/trace/).
 *
 * Same window contract as struct ts_input: data[0..len) holds the bytes
 * from absolute offset base; trace_src_more() drops the bytes before keep
 * and appends more. A gzip stream that ends early is reported as the end of
 * input with `cut` set, so the reader keeps what was complete.
 */
#ifndef TRAINSCOPE_TRACE_SRC_H
#define TRAINSCOPE_TRACE_SRC_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/input.h"

struct trace_src {
	const unsigned char *data;
	size_t len;
	uint64_t base;
	int eof;
	int cut;              /* gzip stream ended early */
	const char *path;     /* for messages */

	/* private */
	struct ts_input in;
	uint64_t nl_before;   /* newlines in the bytes before base */
};

int trace_src_open(struct trace_src *s, const char *path, struct ts_err *err);
int trace_src_open_mem(struct trace_src *s, const void *data, size_t n,
		       const char *name, struct ts_err *err);
void trace_src_release(struct trace_src *s);

/* Returns 0 (eof set when nothing more will come) or a negative code with
 * err filled. Invalidates pointers into the window. */
int trace_src_more(struct trace_src *s, size_t keep, struct ts_err *err);

/* 1-based line of an absolute offset inside the window (or -1). */
int64_t trace_src_line_of(const struct trace_src *s, uint64_t off);

#endif
