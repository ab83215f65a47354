/*
 * input.h - byte input from files, pipes and gzip streams.
 *
 * A ts_input exposes a *window* of the (decompressed) input: data[0..len)
 * holds bytes starting at absolute offset `base`. Plain files are mmap'ed
 * and the window is the whole file from the start (eof already set), so
 * parsers see the page cache directly and nothing is copied. Pipes, stdin
 * ("-") and gzip files (detected by the magic bytes 1f 8b, never by the
 * name) stream through one reused buffer: ts_input_more() drops the bytes
 * before `keep` and appends new ones. Pointers into the window stay valid
 * until the next ts_input_more() call.
 */
#ifndef TRAINSCOPE_INPUT_H
#define TRAINSCOPE_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

enum ts_input_kind { TS_INPUT_MAP = 1, TS_INPUT_STREAM, TS_INPUT_GZIP };

/* Largest window a stream will grow to hold one token or line. */
#define TS_INPUT_MAX_WINDOW ((size_t)512 << 20)

struct ts_input_gz;

struct ts_input {
	const unsigned char *data; /* window */
	size_t len;                /* bytes in the window */
	uint64_t base;             /* absolute offset of data[0] */
	int eof;                   /* no bytes after the window */
	int kind;                  /* enum ts_input_kind */
	int gzip;                  /* 1 when the file was gzip */
	int64_t file_bytes;        /* on-disk size, -1 for pipes */
	char path[TS_ERR_PATH_MAX];/* for messages ("-" is "<stdin>") */

	/* private */
	int fd;
	int own_fd;
	unsigned char *map;
	size_t map_len;
	unsigned char *buf;
	size_t cap;
	struct ts_input_gz *gz;
	size_t line_pos;           /* ts_input_getline cursor in the window */
};

/*
 * Open path ("-" for standard input). Returns 0, or TS_EIO with err naming
 * the file. The window is empty until the first ts_input_more() unless the
 * file was mapped.
 */
int ts_input_open(struct ts_input *in, const char *path, struct ts_err *err);

/*
 * Read from a caller-owned memory buffer (not copied; must outlive in).
 * gzip data is detected and inflated like a file.
 */
int ts_input_open_mem(struct ts_input *in, const void *data, size_t n,
		      const char *name, struct ts_err *err);

void ts_input_release(struct ts_input *in);

/*
 * Open path ("-" for standard input) and read all of it into the window:
 * on success data[0..len) is the whole (decompressed) input from offset 0,
 * eof is set, and the caller releases in. For small documents (configs,
 * catalogs, contracts) that are parsed in one piece. Returns 0, TS_EIO with
 * err naming the file, TS_ELIMIT when the input is larger than cap bytes,
 * or the code of a read or gzip error; on failure in is already released.
 */
int ts_input_read_all(struct ts_input *in, const char *path, size_t cap,
		      struct ts_err *err);

/*
 * Drop window bytes before index `keep` (keep <= len) and append more input.
 * Returns the number of bytes added (> 0), 0 at end of input (eof is then
 * set), or a negative code with err filled (read error, corrupt gzip).
 * Invalidates pointers into the window.
 */
int64_t ts_input_more(struct ts_input *in, size_t keep, struct ts_err *err);

/*
 * Next line without its '\n' (a trailing '\r' is kept; callers strip it).
 * Returns 1 with line and n set (a view valid until the next call), 0 at end
 * of input, or a negative code. The last line need not end in '\n'.
 * Lines longer than TS_INPUT_MAX_WINDOW fail with TS_ELIMIT.
 * *offset (may be NULL) receives the absolute offset of the line start.
 */
int ts_input_getline(struct ts_input *in, const char **line, size_t *n,
		     uint64_t *offset, struct ts_err *err);

/* 1 if the first bytes of data look like gzip. */
int ts_is_gzip(const void *data, size_t n);

#endif
