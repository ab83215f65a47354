/*
 * trace_src.c - byte source of the trace reader: plain files, pipes, gzip,
 * memory.
 *
 * Why not struct ts_input: on the target VMs a reader that maps a GB file
 * keeps every touched page resident (peak RSS = file size) and pays a page
 * fault per 4 KiB, while read() into one reused buffer streams at 5-12 GB/s
 * with a few MB resident (performance-notes.md B2). gzip inflate (0.65-0.9
 * GB/s on one core) is slower than the event parser, so it runs in a second
 * thread that fills a ring of reused buffers; each buffer has headroom in
 * front so the consumer can prepend the unfinished event of the previous
 * buffer without copying the new data.
 *
 * Lines for error messages: memory and regular files (gzip or not) count
 * newlines only when an error asks for them, reading (and inflating) again
 * from the start; pipes count the bytes as they leave the window.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#if defined(TS_HAVE_ISAL)
#include <isa-l/igzip_lib.h>
#endif
#include "trace_src.h"
#include "trainscope/input.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK ((size_t)4 << 20)   /* bytes added per refill (at most) */
#define MIN_CHUNK ((size_t)64 << 10)
#define NBUF 6
#define GZ_IN ((size_t)1 << 20)
#define MAX_WINDOW ((size_t)512 << 20)
#define RING_FROM ((uint64_t)8 << 20)  /* plain files this big read in a thread */
#define RAW_CHUNK ((size_t)1 << 20)
#define PAGE ((size_t)4096)

/* Every read() destination starts on a page: the kernel's copy into a
 * buffer at 16 mod 4096 is 5x slower on Zen 3 (performance-ceilings.md
 * #11b). The ring's data area is ring[k] + head, head a multiple of the
 * page (chunk is a power of two >= 64 KiB). */
static void *page_alloc(size_t n)
{
	void *p = NULL;

	return posix_memalign(&p, PAGE, n) == 0 ? p : NULL;
}

struct trace_gz {
	pthread_t th;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *ring[NBUF];   /* head + chunk bytes each */
	size_t chunk, head;          /* sized to the input: fresh pages are slow */
	size_t fill[NBUF];
	uint64_t prod, cons;         /* buffers produced / released (monotonic) */
	uint64_t pin;                /* buffer pin - 1 is being copied (0 none) */
	int done, stop, cut;
	int raw;                     /* plain file: read(), no inflate */
	int err_code;
	char err_msg[200];
	uint64_t err_off;

	/* producer side */
	int fd;
	const unsigned char *src;
	size_t src_len, src_pos;
	unsigned char *inbuf;
	size_t pending;              /* sniffed bytes waiting in inbuf */
	z_stream z;                  /* also the input cursor of ISA-L */
	uint64_t out_total;
	uint64_t in_fed;             /* compressed bytes handed to next_in */
	uint64_t in_size;            /* compressed size (0 unknown) */
#if defined(TS_HAVE_ISAL)
	int isal;                    /* inflating with ISA-L, not zlib */
	struct inflate_state is;
#endif

	/* consumer side */
	int cur;                     /* ring slot under the window, -1 none */
	unsigned char *scratch;
	size_t scap;
};

/* Newlines in p[0..n): byte compares summed with SAD, no popcount (the
 * default x86-64 target has no popcnt instruction). */
static uint64_t count_nl(const unsigned char *p, size_t n)
{
	uint64_t c = 0;
	size_t i = 0;

#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n');
	const __m128i zero = _mm_setzero_si128();
	while (i + 16 <= n) {
		__m128i acc = zero;
		/* at most 255 rounds before a byte lane could overflow */
		for (int k = 0; k < 255 && i + 16 <= n; k++, i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
		}
		__m128i sum = _mm_sad_epu8(acc, zero);
		c += (uint64_t)_mm_cvtsi128_si32(sum) + (uint64_t)_mm_extract_epi16(sum, 4);
	}
#endif
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

static void set_path(struct trace_src *s, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(s->path))
		n = sizeof(s->path) - 1;
	memcpy(s->path, path, n);
	s->path[n] = '\0';
}

/* Buffer size for an input of about `hint` bytes: small inputs must not
 * pay for touching megabytes of fresh memory. */
static size_t chunk_for(uint64_t hint)
{
	size_t c = MIN_CHUNK;

	while (c < CHUNK && c < hint / 4)
		c *= 2;
	return c;
}

/* ------------------------------------------------------------ gzip thread */

/* Make compressed input available; 1 if some is, 0 at its end, <0 error. */
static int gz_input(struct trace_gz *g)
{
	if (g->z.avail_in)
		return 1;
	if (g->pending) {
		g->z.next_in = g->inbuf;
		g->z.avail_in = (uInt)g->pending;
		g->in_fed += g->pending;
		g->pending = 0;
		return 1;
	}
	if (g->src) {
		size_t left = g->src_len - g->src_pos;
		if (!left)
			return 0;
		if (left > GZ_IN)
			left = GZ_IN;
		g->z.next_in = (unsigned char *)(g->src + g->src_pos);
		g->z.avail_in = (uInt)left;
		g->src_pos += left;
		g->in_fed += left;
		return 1;
	}
	for (;;) {
		ssize_t r = read(g->fd, g->inbuf, GZ_IN);
		if (r > 0) {
			g->z.next_in = g->inbuf;
			g->z.avail_in = (uInt)r;
			g->in_fed += (uint64_t)r;
			return 1;
		}
		if (r == 0)
			return 0;
		if (errno != EINTR) {
			g->err_code = TS_EIO;
			snprintf(g->err_msg, sizeof(g->err_msg), "read failed: %s", strerror(errno));
			return -1;
		}
	}
}

/* zlib: inflate into out[0..cap), *n bytes; returns 1 when the stream is
 * finished (err_code or cut set when it ended badly), 0 when out is full. */
static int zlib_run(struct trace_gz *g, unsigned char *out, size_t cap, size_t *n)
{
	int finished = 1;

	g->z.next_out = out;
	g->z.avail_out = (uInt)cap;
	for (;;) {
		int in = gz_input(g);
		if (in < 0)
			break;
		/* with no input left inflate still runs: it may hold output
		 * that did not fit in the last buffer (a match being copied) */
		int zr = inflate(&g->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			/* another member may follow (concatenated gzip); anything
			 * else after a member is ignored, as gzip -d does */
			int more = gz_input(g);
			if (more > 0 && g->z.next_in[0] == 0x1f) {
				inflateReset(&g->z);
				if (g->z.avail_out == 0) {
					finished = 0;
					break;
				}
				continue;
			}
			break;
		}
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && g->z.avail_in == 0)) {
			g->err_code = TS_EPARSE;
			snprintf(g->err_msg, sizeof(g->err_msg), "corrupt gzip data: %s",
				 g->z.msg ? g->z.msg : "inflate failed");
			break;
		}
		if (g->z.avail_out == 0) {
			finished = 0;
			break;
		}
		if (in == 0) {
			g->cut = 1;   /* compressed data ended inside a member */
			break;
		}
	}
	*n = cap - g->z.avail_out;
	return finished;
}

#if defined(TS_HAVE_ISAL)
/* ISA-L inflate into out[0..chunk): 1 when the (single-member) stream ended
 * cleanly at the end of the input, 0 when out is full, -1 when zlib must
 * take over: a corrupt or truncated stream, another member or bytes after
 * the member, so that what the reader sees (bytes, errors, offsets) is
 * zlib's. A read error is reported as zlib_run would (1, err_code set). */
static int isal_run(struct trace_gz *g, unsigned char *out, size_t *n)
{
	struct inflate_state *st = &g->is;

	st->next_out = out;
	st->avail_out = (uint32_t)g->chunk;
	for (;;) {
		if (st->block_state == ISAL_BLOCK_FINISH) {
			int more = gz_input(g);
			if (more < 0)
				break;
			/* consumed = fed - unread: all of it, or zlib decides */
			if (more > 0 || (g->in_size && g->in_fed != g->in_size))
				return -1;
			break;
		}
		if (st->avail_out == 0) {
			*n = g->chunk;
			return 0;
		}
		int in = gz_input(g);
		if (in < 0)
			break;
		if (in == 0)
			return -1;   /* truncated: zlib delivers every byte it can */
		uint32_t in0 = g->z.avail_in, out0 = st->avail_out;
		st->next_in = g->z.next_in;
		st->avail_in = g->z.avail_in;
		int r = isal_inflate(st);
		g->z.next_in = st->next_in;
		g->z.avail_in = st->avail_in;
		if (r < 0 || (st->avail_in == in0 && st->avail_out == out0 &&
			      st->block_state != ISAL_BLOCK_FINISH))
			return -1;
	}
	*n = g->chunk - st->avail_out;
	return 1;
}

/* Hand the stream to zlib: inflate again from the start of the compressed
 * input and drop the out_total bytes already delivered (into out, which is
 * then overwritten). Returns 1 when zlib ended before them (its error
 * stands), else 0. */
static int zlib_resume(struct trace_gz *g, unsigned char *out)
{
	uint64_t skip = g->out_total;

	g->isal = 0;
	g->z.avail_in = 0;
	g->pending = 0;
	g->in_fed = 0;
	if (g->src) {
		g->src_pos = 0;
	} else if (lseek(g->fd, 0, SEEK_SET) != 0) {
		g->err_code = TS_EIO;
		snprintf(g->err_msg, sizeof(g->err_msg), "read failed: %s", strerror(errno));
		return 1;
	}
	while (skip) {
		size_t n = 0;
		size_t cap = skip < g->chunk ? (size_t)skip : g->chunk;
		int finished = zlib_run(g, out, cap, &n);
		skip -= n;
		if (finished)
			return 1;
	}
	return 0;
}
#endif

/* Inflate into one ring buffer; returns 1 when the stream is finished. */
static int gz_fill(struct trace_gz *g, unsigned char *out, size_t *n)
{
	int finished;

#if defined(TS_HAVE_ISAL)
	if (g->isal) {
		finished = isal_run(g, out, n);
		if (finished < 0) {
			*n = 0;
			finished = zlib_resume(g, out);
			if (!finished)
				finished = zlib_run(g, out, g->chunk, n);
		}
	} else
#endif
		finished = zlib_run(g, out, g->chunk, n);
	if (finished)
		g->err_off = g->out_total + *n;
	g->out_total += *n;
	return finished;
}

/* Read a plain file into one ring buffer; returns 1 at its end. */
static int raw_fill(struct trace_gz *g, unsigned char *out, size_t *n)
{
	size_t got = 0;
	int end = 0;

	while (got < g->chunk) {
		ssize_t r = read(g->fd, out + got, g->chunk - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			g->err_code = TS_EIO;
			snprintf(g->err_msg, sizeof(g->err_msg), "read failed: %s", strerror(errno));
		}
		end = 1;
		break;
	}
	*n = got;
	g->out_total += got;
	g->err_off = g->out_total;
	return end;
}

static void *gz_main(void *arg)
{
	struct trace_gz *g = arg;

	for (;;) {
		pthread_mutex_lock(&g->mu);
		/* the slot to fill holds buffer prod - NBUF: wait while it is
		 * the consumer's or pinned by trace_src_copy_chunk() */
		while (!g->stop && (g->prod - g->cons == NBUF ||
				    (g->pin && g->pin - 1 + NBUF == g->prod)))
			pthread_cond_wait(&g->cv, &g->mu);
		int stop = g->stop;
		size_t slot = (size_t)(g->prod % NBUF);
		pthread_mutex_unlock(&g->mu);
		if (stop)
			break;
		size_t n = 0;
		int finished = g->raw ? raw_fill(g, g->ring[slot] + g->head, &n) :
			gz_fill(g, g->ring[slot] + g->head, &n);
		pthread_mutex_lock(&g->mu);
		g->fill[slot] = n;
		g->prod++;
		if (finished)
			g->done = 1;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		if (finished)
			break;
	}
	return NULL;
}

/* Start the producer thread: inflate (raw 0) or plain reads (raw 1). */
static int ring_start(struct trace_src *s, int raw, const unsigned char *first, size_t nfirst,
		      size_t ring_chunk, struct ts_err *err)
{
	struct trace_gz *g = calloc(1, sizeof(*g));

	if (!g)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	s->gz = g;
	g->raw = raw;
	g->cur = -1;
	g->fd = s->fd;
	if (!raw) {
		s->gzip = 1;
		/* a gzip file or buffer can be inflated again when an error
		 * needs a line number; only a pipe must count as it goes */
		s->count_nl = !(s->seekable || s->mem);
	}
	if (raw) {
		g->out_total = nfirst;
	} else if (s->mem) {
		g->src = s->mem;
		g->src_len = s->mem_len;
		g->in_size = s->mem_len;
	} else {
		/* the first bytes may be a longer prefix handed on by detection */
		g->inbuf = page_alloc(nfirst > GZ_IN ? nfirst : GZ_IN);
		if (!g->inbuf)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		memcpy(g->inbuf, first, nfirst);
		g->pending = nfirst;
	}
	/* read() refills in microseconds: small buffers suffice for plain files */
	g->chunk = raw ? RAW_CHUNK : ring_chunk ? ring_chunk : chunk_for(s->size_hint);
	g->head = g->chunk / 4;
	for (int k = 0; k < NBUF; k++) {
		g->ring[k] = page_alloc(g->head + g->chunk);
		if (!g->ring[k])
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	/* 16 + MAX_WBITS: gzip wrapper only */
	if (!raw && inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK)
		return ts_err_at(err, TS_EINTERNAL, s->path, 0, -1, "zlib inflateInit2 failed");
#if defined(TS_HAVE_ISAL)
	/* ISA-L first where zlib can start over from the first byte */
	struct stat st;
	if (!raw && !s->mem && s->seekable && fstat(g->fd, &st) == 0)
		g->in_size = (uint64_t)st.st_size;
	if (!raw && (s->mem || g->in_size)) {
		isal_inflate_init(&g->is);
		g->is.crc_flag = ISAL_GZIP;
		g->isal = 1;
		s->gzip_fast = 1;
	}
#endif
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if (pthread_create(&g->th, NULL, gz_main, g) != 0) {
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->cv);
		if (!raw)
			inflateEnd(&g->z);
		return ts_err_set(err, TS_EINTERNAL, "cannot start the input thread");
	}
	g->started = 1;
	return 0;
}

static void gz_release(struct trace_gz *g)
{
	if (g->started) {
		pthread_mutex_lock(&g->mu);
		g->stop = 1;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->th, NULL);
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->cv);
		if (!g->raw)
			inflateEnd(&g->z);
	}
	for (int k = 0; k < NBUF; k++)
		free(g->ring[k]);
	free(g->inbuf);
	free(g->scratch);
	free(g);
}

/* Move the window onto the next inflated buffer, keeping data[keep..len). */
static int gz_step(struct trace_src *s, size_t keep, struct ts_err *err)
{
	struct trace_gz *g = s->gz;
	/* no window yet before the first step (NULL + 0 is undefined) */
	const unsigned char *tail = s->data ? s->data + keep : NULL;
	size_t ntail = s->len - keep;
	size_t slot, n;

	pthread_mutex_lock(&g->mu);
	while (g->prod == g->cons + (g->cur >= 0) && !g->done)
		pthread_cond_wait(&g->cv, &g->mu);
	int have = g->prod > g->cons + (g->cur >= 0);
	pthread_mutex_unlock(&g->mu);

	s->base += keep;
	if (!have) {
		/* nothing more: the tail stays where it is */
		s->data = tail;
		s->len = ntail;
		s->eof = 1;
		s->cut = g->cut;
		if (g->err_code)
			return ts_err_at(err, g->err_code, s->path, (int64_t)g->err_off, -1,
					 "%s", g->err_msg);
		return 0;
	}
	slot = (size_t)((g->cons + (g->cur >= 0)) % NBUF);
	n = g->fill[slot];
	unsigned char *dst = g->ring[slot] + g->head;
	int release_next = 0;
	if (ntail <= g->head && (s->data != g->scratch || !g->scratch)) {
		if (ntail)
			memcpy(dst - ntail, tail, ntail);
		s->data = dst - ntail;
		s->len = ntail + n;
	} else {
		/* an event larger than the headroom: assemble in scratch */
		if (ntail + n > MAX_WINDOW)
			return ts_err_at(err, TS_ELIMIT, s->path, (int64_t)s->base, -1,
					 "a single event exceeds %zu MiB", MAX_WINDOW >> 20);
		if (g->scap < ntail + n) {
			size_t cap = g->scap ? g->scap : 2 * g->chunk;
			while (cap < ntail + n)
				cap *= 2;
			unsigned char *p = malloc(cap);
			if (!p)
				return ts_err_set(err, TS_ENOMEM, "out of memory");
			if (ntail)
				memcpy(p, tail, ntail);
			free(g->scratch);
			g->scratch = p;
			g->scap = cap;
		} else {
			memmove(g->scratch, tail, ntail);
		}
		memcpy(g->scratch + ntail, dst, n);
		s->data = g->scratch;
		s->len = ntail + n;
		release_next = 1;
	}
	pthread_mutex_lock(&g->mu);
	if (g->cur >= 0)
		g->cons++;
	g->cur = (int)slot;
	if (release_next) {
		g->cons++;
		g->cur = -1;
	}
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* ------------------------------------------------------------ plain */

static int64_t read_some(struct trace_src *s, unsigned char *dst, size_t n, struct ts_err *err)
{
	for (;;) {
		ssize_t r = s->at_offset ? pread(s->fd, dst, n, (off_t)(s->base + s->len)) :
			read(s->fd, dst, n);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return ts_err_at(err, TS_EIO, s->path, (int64_t)(s->base + s->len), -1,
					 "read failed: %s", strerror(errno));
	}
}

static int plain_more(struct trace_src *s, size_t keep, struct ts_err *err)
{
	size_t tail = s->len - keep;
	size_t at = (size_t)(s->data - s->buf) + keep;   /* the tail, in buf */

	s->base += keep;
	if (s->cap - tail < s->cap / 2) {
		size_t cap = s->cap * 2;
		if (cap > MAX_WINDOW + CHUNK)
			return ts_err_at(err, TS_ELIMIT, s->path, (int64_t)s->base, -1,
					 "a single event exceeds %zu MiB", MAX_WINDOW >> 20);
		unsigned char *p = realloc(s->buf, cap);
		if (!p)
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		s->buf = p;
		s->cap = cap;
	}
	/* the tail (an unfinished event) moves to where the next read()
	 * starts on a page: the kernel copies into many offsets several
	 * times slower (performance-ceilings.md #11b) */
	size_t pad = (PAGE - ((uintptr_t)s->buf + tail) % PAGE) % PAGE;
	if (pad + tail > s->cap / 2)
		pad = 0;
	if (tail && at != pad)
		memmove(s->buf + pad, s->buf + at, tail);
	s->data = s->buf + pad;
	s->len = tail;
	/* after a seek (the split parse) read 1 MiB at a time: the rest of a
	 * big window would be touched for nothing; but an event bigger than
	 * that fills the whole window, so it is parsed again from its start
	 * O(log size) times, not once per MiB */
	size_t want = s->cap - pad - tail;
	if (s->at_offset && want > RAW_CHUNK && tail < RAW_CHUNK)
		want = RAW_CHUNK;
	int64_t r = read_some(s, s->buf + pad + tail, want, err);
	if (r < 0)
		return (int)r;
	if (r == 0)
		s->eof = 1;
	s->len += (size_t)r;
	return 0;
}

/* ------------------------------------------------------------ public */

/* A FIFO, pipe or stdin whose start content detection already read
 * (ts_input_open_peek): continue from those bytes on the same descriptor.
 * Returns 1 with *rc set when it was such an input, else 0. */
static int held_open(struct trace_src *s, const char *path, size_t ring_chunk, int64_t *rc,
		     struct ts_err *err)
{
	struct ts_input_held h;
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;

	if (!ts_input_take_held(path, &h))
		return 0;
	if (h.spooled) {
		*rc = trace_src_open_mem(s, h.raw, h.n, name, ring_chunk, err);
		return 1;
	}
	set_path(s, name);
	s->fd = h.own ? h.fd : dup(h.fd); /* trace_src_release closes its fd */
	s->count_nl = 1;
	*rc = 0;
	if (h.n >= 2 && h.raw[0] == 0x1f && h.raw[1] == 0x8b) {
		*rc = ring_start(s, 0, h.raw, h.n, ring_chunk, err);
		free(h.owned);
		return 1;
	}
	s->cap = h.n * 2 > CHUNK ? h.n * 2 : CHUNK;
	s->buf = malloc(s->cap);
	if (!s->buf) {
		free(h.owned);
		*rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		return 1;
	}
	if (h.n)
		memcpy(s->buf, h.raw, h.n);
	free(h.owned);
	s->data = s->buf;
	s->len = h.n;
	s->eof = h.n == 0; /* detection read to the end and found nothing */
	return 1;
}

int trace_src_open(struct trace_src *s, const char *path, size_t ring_chunk, struct ts_err *err)
{
	struct stat st;
	int64_t r;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (held_open(s, path, ring_chunk, &r, err))
		return (int)r;
	if (strcmp(path, "-") == 0) {
		set_path(s, "<stdin>");
		s->fd = 0;
	} else {
		set_path(s, path);
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			return ts_err_at(err, TS_EIO, path, -1, -1, "cannot open: %s", strerror(errno));
	}
	if (fstat(s->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return ts_err_at(err, TS_EIO, path, -1, -1, "is a directory, expected a file");
		s->seekable = S_ISREG(st.st_mode);
		if (s->seekable)
			s->size_hint = (uint64_t)st.st_size;
	}
	if (s->seekable)
		posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	s->count_nl = !s->seekable;
	s->cap = s->seekable ? chunk_for(s->size_hint * 4 + 4) : CHUNK;
	if (s->cap < GZ_IN)
		s->cap = GZ_IN;
	s->buf = page_alloc(s->cap);
	if (!s->buf)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	s->data = s->buf;
	/* the first bytes decide between plain and gzip */
	r = read_some(s, s->buf, GZ_IN, err);
	if (r < 0)
		return (int)r;
	if (r >= 2 && s->buf[0] == 0x1f && s->buf[1] == 0x8b) {
		s->size_hint *= 8;   /* traces compress about 10:1 */
		int rc = ring_start(s, 0, s->buf, (size_t)r, ring_chunk, err);
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
		s->data = NULL;
		s->len = 0;
		return rc;
	}
	s->len = (size_t)r;
	if (r == 0)
		s->eof = 1;
	else if (s->seekable && s->size_hint >= RING_FROM)
		return ring_start(s, 1, NULL, (size_t)r, 0, err);
	return 0;
}

int trace_src_open_mem(struct trace_src *s, const void *data, size_t n,
		       const char *name, size_t ring_chunk, struct ts_err *err)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	set_path(s, name);
	s->mem = data;
	s->mem_len = n;
	s->size_hint = n;
	if (n >= 2 && s->mem[0] == 0x1f && s->mem[1] == 0x8b) {
		s->size_hint *= 8;
		return ring_start(s, 0, NULL, 0, ring_chunk, err);
	}
	s->data = data;
	s->len = n;
	s->eof = 1;
	return 0;
}

void trace_src_release(struct trace_src *s)
{
	if (s->gz)
		gz_release(s->gz);
	free(s->buf);
	if (s->fd > 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

int trace_src_more(struct trace_src *s, size_t keep, struct ts_err *err)
{
	if (keep > s->len)
		keep = s->len;
	if (s->eof)
		return 0;
	if (s->count_nl)
		s->nl_before += count_nl(s->data, keep);
	if (s->gz) {
		/* an event bigger than the window: grow it geometrically, so that
		 * re-parsing the event after each refill stays linear overall */
		size_t tail = s->len - keep;
		int rc = gz_step(s, keep, err);
		while (!rc && !s->eof && s->data == s->gz->scratch && s->len < 2 * tail)
			rc = gz_step(s, 0, err);
		return rc;
	}
	return plain_more(s, keep, err);
}

int trace_src_can_seek(const struct trace_src *s)
{
	return !s->gzip && (s->mem || (s->seekable && s->fd >= 0));
}

int trace_src_seek(struct trace_src *s, uint64_t off, struct ts_err *err)
{
	if (!trace_src_can_seek(s))
		return ts_err_set(err, TS_EINTERNAL, "seek on an input that cannot seek");
	if (s->mem) {
		if (off > s->mem_len)
			off = s->mem_len;
		s->base = off;
		s->data = s->mem + off;
		s->len = s->mem_len - (size_t)off;
		s->eof = 1;
		return 0;
	}
	if (s->gz) {
		/* the read thread and its ring go; pread() from now on */
		gz_release(s->gz);
		s->gz = NULL;
	}
	s->at_offset = 1;
	s->base = off;
	s->len = 0;
	s->data = s->buf;
	s->eof = 0;
	return 0;
}

int trace_src_clone(struct trace_src *s, const struct trace_src *from, uint64_t off,
		    struct ts_err *err)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	memcpy(s->path, from->path, sizeof(s->path));
	s->size_hint = from->size_hint;
	if (from->mem) {
		s->mem = from->mem;
		s->mem_len = from->mem_len;
		return trace_src_seek(s, off, err);
	}
	if (!trace_src_can_seek(from))
		return ts_err_set(err, TS_EINTERNAL, "clone of an input that cannot seek");
	s->fd = dup(from->fd);
	if (s->fd < 0)
		return ts_err_at(err, TS_EIO, s->path, -1, -1, "cannot open: %s", strerror(errno));
	s->seekable = 1;
	s->cap = RAW_CHUNK;
	s->buf = page_alloc(s->cap);
	if (!s->buf)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return trace_src_seek(s, off, err);
}

void trace_src_open_view(struct trace_src *s, const void *data, size_t n, uint64_t base,
			 const char *name)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	set_path(s, name);
	s->data = data;
	s->len = n;
	s->base = base;
	s->eof = 1;
}

size_t trace_src_chunk(const struct trace_src *s)
{
	return s->gz && !s->gz->raw ? s->gz->chunk : 0;
}

int trace_src_copy_chunk(const struct trace_src *s, uint64_t k, size_t want, unsigned char *dst,
			 size_t *n, int *last, atomic_int *cancel)
{
	struct trace_gz *g = s->gz;
	int rc;

	*n = 0;
	*last = 0;
	pthread_mutex_lock(&g->mu);
	while (g->prod <= k && !g->done && !atomic_load(cancel))
		pthread_cond_wait(&g->cv, &g->mu);
	size_t slot = (size_t)(k % NBUF), fill = 0;
	if (atomic_load(cancel) || (g->prod > k && g->cons > k)) {
		rc = -1;                 /* asked to stop, or released already */
	} else if (g->prod <= k) {
		rc = 0;                  /* the stream ended before buffer k */
	} else {
		fill = g->fill[slot];
		*last = g->done && g->prod == k + 1;
		/* every buffer but the last is full (gz_fill) */
		rc = fill == g->chunk || *last ? 1 : -1;
		if (rc == 1)
			g->pin = k + 1;
	}
	pthread_mutex_unlock(&g->mu);
	if (rc != 1)
		return rc;
	*n = fill < want ? fill : want;
	memcpy(dst, g->ring[slot] + g->head, *n);
	pthread_mutex_lock(&g->mu);
	g->pin = 0;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return 1;
}

void trace_src_wake(const struct trace_src *s)
{
	struct trace_gz *g = s->gz;

	if (!g || !g->started)
		return;
	pthread_mutex_lock(&g->mu);
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

int trace_src_skip(struct trace_src *s, uint64_t off, struct ts_err *err)
{
	while (off > s->base + s->len) {
		if (s->eof)
			return ts_err_set(err, TS_EINTERNAL, "skip past the end of the input");
		int rc = trace_src_more(s, s->len, err);
		if (rc)
			return rc;
	}
	if (off < s->base)
		return ts_err_set(err, TS_EINTERNAL, "skip backwards in the input");
	size_t keep = (size_t)(off - s->base);
	if (s->count_nl)
		s->nl_before += count_nl(s->data, keep);
	s->data += keep;
	s->len -= keep;
	s->base += keep;
	return 0;
}

/* Newlines in the first `upto` bytes of a regular file (pread again). */
static int64_t plain_nl_upto(struct trace_src *s, uint64_t upto)
{
	const size_t bsize = (size_t)1 << 20;
	unsigned char *buf = malloc(bsize);
	uint64_t pos = 0;
	int64_t nl = 0;

	if (!buf)
		return -1;
	while (pos < upto) {
		size_t want = upto - pos < bsize ? (size_t)(upto - pos) : bsize;
		ssize_t r = pread(s->fd, buf, want, (off_t)pos);
		if (r <= 0) {
			nl = -1;
			break;
		}
		nl += (int64_t)count_nl(buf, (size_t)r);
		pos += (uint64_t)r;
	}
	free(buf);
	return nl;
}

/* Newlines in the first `upto` decompressed bytes of a gzip file or buffer,
 * inflating it again from the start (error path only). */
static int64_t gz_nl_upto(struct trace_src *s, uint64_t upto)
{
	const size_t bsize = (size_t)1 << 20;
	unsigned char *in = malloc(bsize), *out = malloc(bsize);
	uint64_t src_pos = 0, done = 0;
	int64_t nl = -1;
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (!in || !out || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		goto out;
	nl = 0;
	while (done < upto) {
		size_t got = 1;
		if (z.avail_in == 0) {
			if (s->mem) {
				got = s->mem_len - src_pos < bsize ? (size_t)(s->mem_len - src_pos) : bsize;
				memcpy(in, s->mem + src_pos, got);
			} else {
				ssize_t r = pread(s->fd, in, bsize, (off_t)src_pos);
				got = r > 0 ? (size_t)r : 0;
			}
			src_pos += got;
			z.next_in = in;
			z.avail_in = (uInt)got;
		}
		/* with no input left inflate still runs: a cut stream's last
		 * match may not have fitted in the previous buffer */
		z.next_out = out;
		z.avail_out = (uInt)bsize;
		int zr = inflate(&z, Z_NO_FLUSH);
		size_t n = bsize - z.avail_out;
		if (n > upto - done)
			n = (size_t)(upto - done);
		nl += (int64_t)count_nl(out, n);
		done += n;
		if (zr == Z_STREAM_END) {
			if (z.avail_in == 0 || z.next_in[0] != 0x1f)
				break;
			inflateReset(&z);
		} else if ((zr != Z_OK && zr != Z_BUF_ERROR) || (!got && n == 0)) {
			break;
		}
	}
	if (done < upto)
		nl = -1;
	inflateEnd(&z);
out:
	free(in);
	free(out);
	return nl;
}

int64_t trace_src_line_of(struct trace_src *s, uint64_t off)
{
	if (off < s->base || off > s->base + s->len)
		return -1;
	int64_t before = (int64_t)s->nl_before;
	if (!s->count_nl && s->base > 0) {
		/* count the bytes before the window again */
		if (s->mem && !s->gzip)
			before = (int64_t)count_nl(s->mem, (size_t)s->base);
		else
			before = s->gzip ? gz_nl_upto(s, s->base) : plain_nl_upto(s, s->base);
		if (before < 0)
			return -1;
	}
	return before + (int64_t)count_nl(s->data, (size_t)(off - s->base)) + 1;
}
