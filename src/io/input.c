/*
 * input.c - file, pipe and gzip input behind one window interface.
 *
 * Why this shape: on the target machines the page cache reads at 7-12 GB/s
 * while the first write to fresh heap pages runs at 0.1-0.3 GB/s, so plain
 * files are mapped (no copy, no fresh pages) and streams reuse one buffer.
 * gzip is inflated with zlib in 4 MiB slices into the same buffer; the
 * compressed bytes are themselves read through a map when they come from a
 * file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "trainscope/input.h"

#define STREAM_CHUNK ((size_t)4 << 20)
#define GZ_IN_CHUNK ((size_t)1 << 20)

struct ts_input_gz {
	z_stream z;
	int done;             /* saw the end of the last member */
	unsigned char *inbuf; /* compressed bytes when not mapped */
	size_t inbuf_cap;
	const unsigned char *src; /* compressed source when mapped / in memory */
	size_t src_len;
	size_t src_pos;
	int from_fd;
};

int ts_is_gzip(const void *data, size_t n)
{
	const unsigned char *p = data;

	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static void set_path(struct ts_input *in, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(in->path))
		n = sizeof(in->path) - 1;
	memcpy(in->path, path, n);
	in->path[n] = '\0';
}

/* ------------------------------------------------ mapped-file registry */

#define MAP_SLOTS 64

static struct {
	const unsigned char *volatile addr;
	volatile size_t len;
	char path[TS_ERR_PATH_MAX];
} maps[MAP_SLOTS];
static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;

static int map_register(const unsigned char *addr, size_t len, const char *path)
{
	int got = 0;

	pthread_mutex_lock(&maps_mu);
	for (int i = 0; i < MAP_SLOTS && !got; i++) {
		if (!maps[i].addr) {
			memcpy(maps[i].path, path, strlen(path) + 1);
			maps[i].len = len;
			__atomic_store_n(&maps[i].addr, addr, __ATOMIC_SEQ_CST);
			got = i + 1;
		}
	}
	pthread_mutex_unlock(&maps_mu);
	return got;
}

static void map_unregister(int slot)
{
	if (slot <= 0)
		return;
	pthread_mutex_lock(&maps_mu);
	__atomic_store_n(&maps[slot - 1].addr, NULL, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&maps_mu);
}

const char *ts_input_fault_path(const void *addr)
{
	const unsigned char *a = addr;

	for (int i = 0; i < MAP_SLOTS; i++) {
		const unsigned char *m = __atomic_load_n(&maps[i].addr, __ATOMIC_SEQ_CST);
		/* the fault may be one page past a short tail: allow a page */
		if (m && a >= m && a < m + maps[i].len + 4096)
			return maps[i].path;
	}
	return NULL;
}

/* ------------------------------------------------ parked non-seekable inputs */

#define HELD_SLOTS 64

static struct held {
	int used;
	int fd, own;
	unsigned char *raw;
	size_t n;
	int spooled;
	char name[TS_ERR_PATH_MAX];
} held[HELD_SLOTS];
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

int ts_input_take_held(const char *path, struct ts_input_held *h)
{
	int got = 0;

	pthread_mutex_lock(&held_mu);
	for (int i = 0; i < HELD_SLOTS && !got; i++) {
		if (held[i].used && strcmp(held[i].name, path) == 0) {
			h->raw = held[i].raw;
			h->n = held[i].n;
			h->spooled = held[i].spooled;
			h->fd = held[i].spooled ? -1 : held[i].fd;
			h->own = held[i].spooled ? 0 : held[i].own;
			h->owned = held[i].spooled ? NULL : held[i].raw;
			if (!held[i].spooled)
				memset(&held[i], 0, sizeof(held[i]));
			got = 1;
		}
	}
	pthread_mutex_unlock(&held_mu);
	return got;
}

/* Keep fd (parked) or the whole input (spooled) under name; 0, or -1
 * when the table is full. raw is taken over. */
static int park(const char *name, int fd, int own, unsigned char *raw, size_t n,
		int spooled)
{
	int rc = -1;

	pthread_mutex_lock(&held_mu);
	for (int i = 0; i < HELD_SLOTS && rc; i++) {
		if (!held[i].used) {
			held[i].used = 1;
			held[i].fd = fd;
			held[i].own = own;
			held[i].raw = raw;
			held[i].n = n;
			held[i].spooled = spooled;
			memcpy(held[i].name, name, strlen(name) + 1);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&held_mu);
	return rc;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int ts_input_unmatched_check(const struct ts_input *in, uint64_t bytes, struct ts_err *err)
{
	if (in->kind == TS_INPUT_MAP || in->regular || in->fd < 0)
		return 0;
	if (bytes > TS_INPUT_UNMATCHED_MAX_BYTES)
		return ts_err_at(err, TS_ELIMIT, in->path, (int64_t)bytes, -1,
				 "nothing recognisable in the first %llu MiB of a "
				 "non-seekable input; stopped reading",
				 (unsigned long long)(TS_INPUT_UNMATCHED_MAX_BYTES >> 20));
	if (now_ms() - in->opened_ms > (int64_t)TS_INPUT_UNMATCHED_MAX_S * 1000)
		return ts_err_at(err, TS_ELIMIT, in->path, (int64_t)bytes, -1,
				 "nothing recognisable after %d s of a non-seekable "
				 "input; stopped reading", TS_INPUT_UNMATCHED_MAX_S);
	return 0;
}

static int gz_start(struct ts_input *in, struct ts_err *err)
{
	struct ts_input_gz *gz = calloc(1, sizeof(*gz));

	if (!gz)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	/* 16 + MAX_WBITS: gzip wrapper only */
	if (inflateInit2(&gz->z, 16 + MAX_WBITS) != Z_OK) {
		free(gz);
		return ts_err_at(err, TS_EINTERNAL, in->path, 0, -1,
				 "zlib inflateInit2 failed");
	}
	in->gz = gz;
	in->gzip = 1;
	in->kind = TS_INPUT_GZIP;
	return 0;
}

static void input_zero(struct ts_input *in)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->file_bytes = -1;
}

int ts_input_open_mem(struct ts_input *in, const void *data, size_t n,
		      const char *name, struct ts_err *err)
{
	input_zero(in);
	set_path(in, name ? name : "<memory>");
	in->file_bytes = (int64_t)n;
	if (ts_is_gzip(data, n)) {
		int rc = gz_start(in, err);
		if (rc)
			return rc;
		in->gz->src = data;
		in->gz->src_len = n;
		return 0;
	}
	in->kind = TS_INPUT_MAP;
	in->data = data;
	in->len = n;
	in->eof = 1;
	return 0;
}

int ts_input_open(struct ts_input *in, const char *path, struct ts_err *err)
{
	struct stat st;
	struct ts_input_held h;
	int fd;

	input_zero(in);
	if (ts_input_take_held(path, &h)) {
		const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
		if (h.spooled)
			return ts_input_open_mem(in, h.raw, h.n, name, err);
		/* detection read the start already: replay it, then read on */
		set_path(in, name);
		memcpy(in->arg, path, strlen(path) + 1); /* parked names fit */
		in->fd = h.fd;
		in->own_fd = h.own;
		in->pend = h.owned;
		in->pend_len = h.n;
		in->kind = TS_INPUT_STREAM;
		in->opened_ms = now_ms();
		return 0;
	}
	if (strcmp(path, "-") == 0) {
		set_path(in, "<stdin>");
		fd = 0;
	} else {
		set_path(in, path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ts_err_at(err, TS_EIO, path, -1, -1,
					 "cannot open: %s", strerror(errno));
		in->own_fd = 1;
	}
	in->fd = fd;
	if (strlen(path) < sizeof(in->arg)) /* else it is never handed on */
		memcpy(in->arg, path, strlen(path) + 1);
	in->opened_ms = now_ms();
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		ts_input_release(in);
		return ts_err_at(err, TS_EIO, path, -1, -1, "is a directory, expected a file");
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->regular = 1;
		in->file_bytes = st.st_size;
		if (st.st_size == 0) {
			in->kind = TS_INPUT_MAP;
			in->eof = 1;
			return 0;
		}
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			in->map = m;
			in->map_len = (size_t)st.st_size;
			in->map_slot = map_register(m, in->map_len, in->path);
			madvise(m, in->map_len, MADV_SEQUENTIAL);
			if (ts_is_gzip(m, in->map_len)) {
				int rc = gz_start(in, err);
				if (rc) {
					ts_input_release(in);
					return rc;
				}
				in->gz->src = m;
				in->gz->src_len = in->map_len;
				return 0;
			}
			in->kind = TS_INPUT_MAP;
			in->data = m;
			in->len = in->map_len;
			in->eof = 1;
			return 0;
		}
	}
	/* a pipe or something unmappable: stream it, sniffing gzip on the way */
	in->kind = TS_INPUT_STREAM;
	return 0;
}

int ts_input_open_peek(struct ts_input *in, const char *path, struct ts_err *err)
{
	int rc = ts_input_open(in, path, err);

	if (!rc && in->kind != TS_INPUT_MAP && !in->regular && in->fd >= 0 && in->arg[0])
		in->peek = 1;
	return rc;
}

static int64_t read_fd(struct ts_input *in, unsigned char *dst, size_t n,
		       struct ts_err *err);
static int record(struct ts_input *in, const unsigned char *src, size_t n,
		  struct ts_err *err);

int ts_input_release_keep(struct ts_input *in, int whole, struct ts_err *err)
{
	int rc = 0;

	if (!in->peek || in->fd < 0) {
		ts_input_release(in);
		return 0;
	}
	/* what was replayed but not reached goes after what was read */
	if (in->pend_pos < in->pend_len &&
	    (rc = record(in, in->pend + in->pend_pos, in->pend_len - in->pend_pos, err)))
		goto out;
	in->pend_pos = in->pend_len;
	while (whole) {
		unsigned char chunk[65536];
		int64_t r = read_fd(in, chunk, sizeof(chunk), err); /* records it */
		if (r < 0) {
			rc = (int)r;
			goto out;
		}
		if (r == 0)
			break;
		if (in->rec_len > TS_INPUT_SPOOL_MAX) {
			/* too big to keep: hand on what was read and the
			 * descriptor, so one reader still gets all of it */
			whole = 0;
			break;
		}
	}
	if (park(in->arg, in->fd, in->own_fd, in->rec, in->rec_len, whole) == 0) {
		if (whole && in->own_fd)
			close(in->fd);
		in->own_fd = 0;  /* the parked entry owns it now */
		in->rec = NULL;  /* and the bytes */
	}
out:
	ts_input_release(in);
	return rc;
}

int ts_input_hold_whole(const char *path, struct ts_err *err)
{
	struct ts_input in, again;
	int rc = ts_input_open_peek(&in, path, err);

	if (rc || (rc = ts_input_release_keep(&in, 1, err)))
		return rc;
	/* spooled: opening it again gives memory; parked (too big): refuse */
	if ((rc = ts_input_open(&again, path, err)))
		return rc;
	if (again.kind == TS_INPUT_STREAM && !again.regular) {
		ts_input_release(&again);
		return ts_err_at(err, TS_ELIMIT, path, -1, -1,
				 "not seekable and larger than %zu MiB, which is needed to "
				 "read it twice; save it to a file", TS_INPUT_SPOOL_MAX >> 20);
	}
	ts_input_release(&again);
	return 0;
}

void ts_input_release(struct ts_input *in)
{
	if (in->gz) {
		inflateEnd(&in->gz->z);
		free(in->gz->inbuf);
		free(in->gz);
	}
	map_unregister(in->map_slot);
	if (in->map)
		munmap(in->map, in->map_len);
	free(in->buf);
	free(in->rec);
	free(in->pend);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	input_zero(in);
}

/* Move the kept tail to the front and make room for at least `want` bytes. */
static int window_prepare(struct ts_input *in, size_t keep, size_t want,
			  struct ts_err *err)
{
	size_t tail = in->len - keep;

	if (in->data != in->buf) {
		/* first use of the buffer (window was empty) */
		in->base += keep;
		in->len = tail;
	} else if (keep) {
		memmove(in->buf, in->buf + keep, tail);
		in->base += keep;
		in->len = tail;
	}
	if (in->cap - in->len < want) {
		size_t ncap = in->cap ? in->cap : STREAM_CHUNK;
		while (ncap - in->len < want)
			ncap *= 2;
		if (ncap > TS_INPUT_MAX_WINDOW + STREAM_CHUNK)
			return ts_err_at(err, TS_ELIMIT, in->path, (int64_t)in->base, -1,
					 "a single token or line exceeds %zu MiB",
					 TS_INPUT_MAX_WINDOW >> 20);
		unsigned char *p = realloc(in->buf, ncap);
		if (!p)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		in->buf = p;
		in->cap = ncap;
	}
	in->data = in->buf;
	return 0;
}

/* Keep a copy of raw bytes for ts_input_release_keep (peek mode only;
 * detection reads a few hundred KiB). */
static int record(struct ts_input *in, const unsigned char *src, size_t n,
		  struct ts_err *err)
{
	if (in->rec_cap - in->rec_len < n) {
		size_t cap = in->rec_cap ? in->rec_cap : 65536;
		while (cap - in->rec_len < n)
			cap *= 2;
		unsigned char *p = realloc(in->rec, cap);
		if (!p)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		in->rec = p;
		in->rec_cap = cap;
	}
	memcpy(in->rec + in->rec_len, src, n);
	in->rec_len += n;
	return 0;
}

static int64_t read_fd(struct ts_input *in, unsigned char *dst, size_t n,
		       struct ts_err *err)
{
	if (in->pend_pos < in->pend_len) {
		size_t k = in->pend_len - in->pend_pos;
		if (k > n)
			k = n;
		memcpy(dst, in->pend + in->pend_pos, k);
		in->pend_pos += k;
		if (in->peek && record(in, dst, k, err))
			return TS_ENOMEM;
		return (int64_t)k;
	}
	for (;;) {
		ssize_t r = read(in->fd, dst, n);
		if (r >= 0) {
			if (r > 0 && in->peek && record(in, dst, (size_t)r, err))
				return TS_ENOMEM;
			return r;
		}
		if (errno != EINTR)
			return ts_err_at(err, TS_EIO, in->path, (int64_t)(in->base + in->len),
					 -1, "read failed: %s", strerror(errno));
	}
}

static int64_t gz_more(struct ts_input *in, struct ts_err *err)
{
	struct ts_input_gz *gz = in->gz;
	size_t room = in->cap - in->len;
	size_t produced = 0;

	while (produced == 0 && !gz->done) {
		if (gz->z.avail_in == 0) {
			if (gz->from_fd) {
				if (!gz->inbuf) {
					gz->inbuf = malloc(GZ_IN_CHUNK);
					if (!gz->inbuf)
						return ts_err_set(err, TS_ENOMEM, "out of memory");
				}
				int64_t r = read_fd(in, gz->inbuf, GZ_IN_CHUNK, err);
				if (r < 0)
					return r;
				if (r == 0)
					return ts_err_at(err, TS_ETRUNC, in->path,
							 (int64_t)(in->base + in->len), -1,
							 "gzip stream ends early (file cut short?)");
				gz->z.next_in = gz->inbuf;
				gz->z.avail_in = (uInt)r;
			} else {
				size_t left = gz->src_len - gz->src_pos;
				if (left == 0)
					return ts_err_at(err, TS_ETRUNC, in->path,
							 (int64_t)(in->base + in->len), -1,
							 "gzip stream ends early (file cut short?)");
				if (left > GZ_IN_CHUNK)
					left = GZ_IN_CHUNK;
				gz->z.next_in = (unsigned char *)(gz->src + gz->src_pos);
				gz->z.avail_in = (uInt)left;
				gz->src_pos += left;
			}
		}
		gz->z.next_out = in->buf + in->len + produced;
		gz->z.avail_out = (uInt)(room - produced);
		int zr = inflate(&gz->z, Z_NO_FLUSH);
		produced = (size_t)(gz->z.next_out - (in->buf + in->len));
		if (zr == Z_STREAM_END) {
			/* another member may follow (concatenated gzip) */
			int more_input = gz->z.avail_in > 0 ||
				(gz->from_fd ? 1 : gz->src_pos < gz->src_len);
			if (more_input && gz->from_fd && gz->z.avail_in == 0) {
				int64_t r = read_fd(in, gz->inbuf, GZ_IN_CHUNK, err);
				if (r < 0)
					return r;
				gz->z.next_in = gz->inbuf;
				gz->z.avail_in = (uInt)r;
				more_input = r > 0;
			}
			if (more_input && gz->z.avail_in > 0 && gz->z.next_in[0] != 0x1f)
				more_input = 0; /* trailing garbage after the member: ignore */
			if (more_input)
				inflateReset(&gz->z);
			else
				gz->done = 1;
		} else if (zr == Z_BUF_ERROR && gz->z.avail_in == 0) {
			continue; /* needs more input */
		} else if (zr != Z_OK) {
			return ts_err_at(err, TS_EPARSE, in->path, (int64_t)(in->base + in->len),
					 -1, "corrupt gzip data: %s",
					 gz->z.msg ? gz->z.msg : "inflate failed");
		}
	}
	in->len += produced;
	if (produced == 0 && gz->done)
		in->eof = 1;
	return (int64_t)produced;
}

int64_t ts_input_more(struct ts_input *in, size_t keep, struct ts_err *err)
{
	int rc;

	if (keep > in->len)
		keep = in->len;
	if (in->eof || in->kind == TS_INPUT_MAP) {
		in->eof = 1;
		return 0;
	}
	rc = window_prepare(in, keep, STREAM_CHUNK / 2, err);
	if (rc)
		return rc;
	if (in->kind == TS_INPUT_GZIP)
		return gz_more(in, err);

	/* plain stream; sniff gzip on the first bytes */
	int64_t r = read_fd(in, in->buf + in->len, in->cap - in->len, err);
	if (r < 0)
		return r;
	if (r == 0) {
		in->eof = 1;
		return 0;
	}
	if (in->base == 0 && in->len == 0 && ts_is_gzip(in->buf, (size_t)r)) {
		rc = gz_start(in, err);
		if (rc)
			return rc;
		in->gz->from_fd = 1;
		in->gz->inbuf = malloc(GZ_IN_CHUNK);
		if (!in->gz->inbuf)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		memcpy(in->gz->inbuf, in->buf, (size_t)r);
		in->gz->z.next_in = in->gz->inbuf;
		in->gz->z.avail_in = (uInt)r;
		return gz_more(in, err);
	}
	in->len += (size_t)r;
	return r;
}

int ts_input_read_all(struct ts_input *in, const char *path, size_t cap,
		      struct ts_err *err)
{
	int rc = ts_input_open(in, path, err);

	if (rc)
		return rc;
	for (;;) {
		int64_t got;

		if (in->len > cap) {
			if (cap == TS_DOC_MAX_BYTES)
				rc = ts_err_at(err, TS_ELIMIT, in->path, (int64_t)cap, -1,
					       "larger than %zu MiB, the cap for small documents "
					       "(configs, contracts, catalogs); not read further",
					       cap >> 20);
			else
				rc = ts_err_at(err, TS_ELIMIT, in->path, (int64_t)cap, -1,
					       "input is larger than %zu bytes", cap);
			goto out;
		}
		if (in->eof)
			break;
		got = ts_input_more(in, 0, err);
		if (got < 0) {
			rc = (int)got;
			goto out;
		}
	}
out:
	if (rc)
		ts_input_release(in);
	return rc;
}

size_t ts_bom_len(const void *data, size_t n)
{
	const unsigned char *d = data;

	return n >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf ? 3 : 0;
}

int ts_input_getline(struct ts_input *in, const char **line, size_t *n,
		     uint64_t *offset, struct ts_err *err)
{
	size_t scan_from = in->line_pos;

	for (;;) {
		const unsigned char *start = in->data ? in->data + in->line_pos : NULL;
		size_t avail = in->len - in->line_pos;
		const unsigned char *nl = avail ?
			memchr(in->data + scan_from, '\n', in->len - scan_from) : NULL;

		if (nl || in->eof || in->kind == TS_INPUT_MAP) {
			size_t skip;

			if (!nl) {
				in->eof = 1;
				if (!avail)
					return 0;
			}
			*n = nl ? (size_t)(nl - start) : avail;
			skip = in->base + in->line_pos == 0 ? ts_bom_len(start, *n) : 0;
			*line = (const char *)start + skip;
			*n -= skip;
			if (offset)
				*offset = in->base + in->line_pos + skip;
			in->line_pos = nl ? (size_t)(nl - in->data) + 1 : in->len;
			return 1;
		}
		size_t pos = in->line_pos;
		int64_t r = ts_input_more(in, pos, err);
		if (r < 0)
			return (int)r;
		/* window now starts at the old line start */
		in->line_pos = 0;
		scan_from = avail;
		if (r == 0 && !in->eof)
			continue;
	}
}
