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
	int map_slot;              /* fault registry slot + 1, 0 none */
	int regular;               /* fd is a regular file */
	int peek;                  /* record raw bytes (ts_input_open_peek) */
	unsigned char *rec;        /* raw bytes read from fd so far (peek) */
	size_t rec_len, rec_cap;
	unsigned char *pend;       /* raw bytes to replay before reading fd */
	size_t pend_len, pend_pos;
	char arg[TS_ERR_PATH_MAX]; /* the name as opened ("-" for stdin) */
	int64_t opened_ms;         /* CLOCK_MONOTONIC at open (non-seekable) */
};

/*
 * Open path ("-" for standard input). Returns 0, or TS_EIO with err naming
 * the file. The window is empty until the first ts_input_more() unless the
 * file was mapped.
 */
int ts_input_open(struct ts_input *in, const char *path, struct ts_err *err);

/*
 * Open path to look at its start and hand it on: like ts_input_open, but
 * for a pipe, FIFO, character device or stdin the raw bytes read are kept,
 * and ts_input_release_keep() hands them on, so that every later
 * ts_input_open() (or ts_input_take_held()) of the same name starts from
 * byte 0 again. Content detection uses this, so a FIFO, stdin or <(...) is
 * opened once and never reopened (which would hang or lose the start).
 */
int ts_input_open_peek(struct ts_input *in, const char *path, struct ts_err *err);

/* Largest non-seekable input kept in memory by ts_input_release_keep(whole). */
#define TS_INPUT_SPOOL_MAX ((size_t)1 << 30)

/*
 * Release after ts_input_open_peek. For a non-seekable input: whole = 1
 * reads the rest of it into memory (raw) so any number of later opens read
 * it all; beyond TS_INPUT_SPOOL_MAX bytes, and with whole = 0, the bytes
 * read so far are parked with the open descriptor for one later open that
 * continues the stream. For anything else the same as ts_input_release.
 * Returns 0 or a negative code (a read error; the input is released).
 */
int ts_input_release_keep(struct ts_input *in, int whole, struct ts_err *err);

/* For a reader that reads path more than once (the annotated-trace writer
 * copies the trace it has read): a non-seekable input is read whole into
 * memory now, as ts_input_release_keep(whole) does; a no-op for regular
 * files. Returns 0, TS_ELIMIT when it is larger than TS_INPUT_SPOOL_MAX
 * ("not seekable": save it to a file), or a read error. */
int ts_input_hold_whole(const char *path, struct ts_err *err);

struct ts_input_held {
	int fd, own;          /* parked descriptor (-1 when spooled) */
	const unsigned char *raw; /* raw bytes from offset 0 */
	size_t n;
	int spooled;          /* raw is the whole input, shared: never freed */
	unsigned char *owned; /* parked prefix the taker frees (== raw) */
};

/* Take what ts_input_release_keep left under this name. Returns 1 when
 * there was something (a spooled input stays for the next taker), else 0.
 * For readers with their own byte source (the trace reader). */
int ts_input_take_held(const char *path, struct ts_input_held *h);

/* A non-seekable input in which no format has been recognised is read for
 * at most this many bytes or seconds (`steps /dev/urandom` must end). */
#define TS_INPUT_UNMATCHED_MAX_BYTES ((uint64_t)64 << 20)
#define TS_INPUT_UNMATCHED_MAX_S 60

/* TS_ELIMIT with err naming the file when in is non-seekable and `bytes`
 * (read so far with nothing recognised) or the time since it was opened
 * exceed the budget above; else 0. Readers call it while they have not
 * yet recognised a record. */
int ts_input_unmatched_check(const struct ts_input *in, uint64_t bytes, struct ts_err *err);

/*
 * Async-signal-safe: the name of the mapped input that holds address addr,
 * or NULL. Plain files are mapped; a file cut short by another process
 * (logrotate copytruncate) makes a read past its new end raise SIGBUS, and
 * the CLI's handler uses this to say "FILE shrank while being read".
 */
const char *ts_input_fault_path(const void *addr);

/* The size cap for small whole documents read with ts_input_read_all
 * (configs, contracts, catalogs, model argument blocks, safetensors
 * headers, model files given to memory/plan): the one policy for every
 * command. Real configs are a few KiB; 16 MiB leaves room for catalogs and
 * contracts with thousands of entries, and anything larger is not one of
 * these documents (TS_ELIMIT, exit 2, before it is read whole). */
#define TS_DOC_MAX_BYTES ((size_t)16 << 20)

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
 * Next line without its '\n' (a trailing '\r' is kept; callers strip it;
 * a byte order mark before the first line is not part of it).
 * Returns 1 with line and n set (a view valid until the next call), 0 at end
 * of input, or a negative code. The last line need not end in '\n'.
 * Lines longer than TS_INPUT_MAX_WINDOW fail with TS_ELIMIT.
 * *offset (may be NULL) receives the absolute offset of the line start.
 */
int ts_input_getline(struct ts_input *in, const char **line, size_t *n,
		     uint64_t *offset, struct ts_err *err);

/* 3 when data starts with a UTF-8 byte order mark (Windows tools write
 * one before text, CSV and JSON), else 0. Readers skip it at offset 0. */
size_t ts_bom_len(const void *data, size_t n);

/* 1 if the first bytes of data look like gzip. */
int ts_is_gzip(const void *data, size_t n);

#endif
