/*
 * trace_src.h - the byte source behind the trace reader (private to
 * src/trace/).
 *
 * Same window contract as struct ts_input: data[0..len) holds the bytes
 * from absolute offset base; trace_src_more() drops the bytes before keep
 * and appends more (growing the window when keep is 0 and it is full).
 * Plain files and pipes are read with read() into one reused buffer (no
 * mmap: mapped pages of a GB file would count as resident memory); gzip is
 * inflated by a second thread into a ring of reused buffers. A gzip stream
 * that ends early is reported as the end of input with `cut` set, so the
 * reader keeps what was complete.
 */
#ifndef TRAINSCOPE_TRACE_SRC_H
#define TRAINSCOPE_TRACE_SRC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

struct trace_gz;

struct trace_src {
	const unsigned char *data;
	size_t len;
	uint64_t base;
	int eof;
	int cut;              /* gzip stream ended early */
	int gzip;
	int gzip_fast;        /* gzip inflated by ISA-L: a fraction of a core */
	uint64_t size_hint;   /* expected decompressed bytes (0 unknown) */
	char path[TS_ERR_PATH_MAX];

	/* private */
	int fd;
	int seekable;         /* a regular file: lines are counted on demand */
	const unsigned char *mem;  /* memory input */
	size_t mem_len;
	unsigned char *buf;   /* plain stream window */
	size_t cap;
	uint64_t nl_before;   /* newlines before base (counted when not seekable) */
	int count_nl;
	int at_offset;        /* seeked: plain reads are pread() at base + len */
	struct trace_gz *gz;
};

/* ring_chunk: the size of gzip's inflated buffers (0: chosen from the
 * input's size; tests set small ones to put buffer edges everywhere). */
int trace_src_open(struct trace_src *s, const char *path, size_t ring_chunk, struct ts_err *err);
int trace_src_open_mem(struct trace_src *s, const void *data, size_t n,
		       const char *name, size_t ring_chunk, struct ts_err *err);

/* A source over data[0..n) that holds the input's bytes from absolute
 * offset base, and nothing more (eof set). Owns nothing. */
void trace_src_open_view(struct trace_src *s, const void *data, size_t n, uint64_t base,
			 const char *name);
void trace_src_release(struct trace_src *s);

/* Returns 0 (eof set when nothing more will come) or a negative code with
 * err filled. Invalidates pointers into the window. */
int trace_src_more(struct trace_src *s, size_t keep, struct ts_err *err);

/* Plain files (regular, not gzip) and plain memory only: move the window
 * to the empty range at absolute offset off (the next trace_src_more()
 * reads from there; memory input shows every byte from off). Stops the
 * read thread if one runs. Returns 0 or TS_EINTERNAL for another input. */
int trace_src_seek(struct trace_src *s, uint64_t off, struct ts_err *err);

/* Whether trace_src_seek() and trace_src_clone() work on s. */
int trace_src_can_seek(const struct trace_src *s);

/* A second, independent source over the same plain file or memory as
 * from (its own descriptor and window, pread() at its own offsets, no
 * thread), positioned at off. Returns 0 or a negative code with err
 * filled; release it with trace_src_release() either way. */
int trace_src_clone(struct trace_src *s, const struct trace_src *from, uint64_t off,
		    struct ts_err *err);

/*
 * The gzip split (trace_read.c): a gzip input is inflated into buffers of
 * trace_src_chunk() bytes, buffer k holding the inflated bytes from
 * k * chunk (every buffer but the last is full). trace_src_chunk() is 0
 * for any other input.
 *
 * trace_src_copy_chunk() may be called from another thread than the one
 * reading s (one such thread at a time): it copies the first
 * min(want, size) bytes of buffer k to dst, waiting until that buffer is
 * inflated. Returns 1 (*n bytes copied; *last set when buffer k ends the
 * stream), 0 when the stream ended before buffer k, or -1 when the reader
 * has already moved past buffer k or *cancel is set. The buffer is not
 * reused while it is being copied. After setting *cancel, call
 * trace_src_wake() so that a waiting copy sees it.
 *
 * trace_src_skip() moves s's window forward to start at absolute offset
 * off (at or after its start, within the input), dropping the bytes
 * before it: 0, or a negative code with err filled.
 */
size_t trace_src_chunk(const struct trace_src *s);
int trace_src_copy_chunk(const struct trace_src *s, uint64_t k, size_t want, unsigned char *dst,
			 size_t *n, int *last, atomic_int *cancel);
void trace_src_wake(const struct trace_src *s);
int trace_src_skip(struct trace_src *s, uint64_t off, struct ts_err *err);

/* 1-based line of an absolute offset at or before the window end, or -1
 * when it cannot be known (a pipe's bytes already gone). */
int64_t trace_src_line_of(struct trace_src *s, uint64_t off);

#endif
