/*
 * fuzz_trace_split.c - libFuzzer target for the trace reader's split
 * parse: every input read from memory on one thread and split into tiny
 * chunks for the helper thread (src/trace/trace_int.h, chunk sizes from
 * the input's length) must give the same result: return code, error,
 * every column and escaped value, the string table in order, side tables
 * and counters. Any difference aborts. The input is also compressed
 * (zlib, gzip wrapper) and read through the gzip split, whose chunks are
 * the inflated buffers (sizes from the input's length too).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "trainscope/trace.h"
#include "../src/trace/trace_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_vec(const void *a, const void *b, size_t n)
{
	if (n && memcmp(a, b, n))
		abort();
}

static void compare(const struct ts_trace *a, int ra, const struct ts_err *ea,
		    const struct ts_trace *b, int rb, const struct ts_err *eb)
{
	if (ra != rb)
		abort();
	if (ra) {
		if (ea->code != eb->code || ea->offset != eb->offset || ea->line != eb->line ||
		    strcmp(ea->msg, eb->msg))
			abort();
		return;
	}
	const struct ts_trace_events *x = &a->ev, *y = &b->ev;
	size_t n = x->n;
	if (n != y->n)
		abort();
	same_vec(x->ts_off, y->ts_off, n * 4);
	same_vec(x->ts_base, y->ts_base, (n + TS_TS_BLOCK - 1) / TS_TS_BLOCK * 8);
	if (x->ts_esc.n != y->ts_esc.n)
		abort();
	for (size_t k = 0; k < x->ts_esc.n; k++)
		if (x->ts_esc.v[k].ev != y->ts_esc.v[k].ev || x->ts_esc.v[k].v != y->ts_esc.v[k].v)
			abort();
	same_vec(x->name, y->name, n * 4);
	same_vec(x->cat_str, y->cat_str, n);
	same_vec(x->cat, y->cat, n);
	same_vec(x->ph, y->ph, n);
	for (size_t i = 0; i < n; i++)
		if (ts_ev_device(x, i) != ts_ev_device(y, i) || ts_ev_cat_str(x, i) != ts_ev_cat_str(y, i) ||
		    ts_ev_pid(x, i) != ts_ev_pid(y, i) || ts_ev_tid(x, i) != ts_ev_tid(y, i) ||
		    ts_ev_stream(x, i) != ts_ev_stream(y, i) || ts_ev_corr(x, i) != ts_ev_corr(y, i) ||
		    ts_ev_extid(x, i) != ts_ev_extid(y, i) || ts_ev_flow(x, i) != ts_ev_flow(y, i) ||
		    ts_ev_dur(x, i) != ts_ev_dur(y, i))
			abort();
	if (a->strings.count != b->strings.count)
		abort();
	for (uint32_t k = 0; k < a->strings.count; k++)
		if (ts_intern_len(&a->strings, k) != ts_intern_len(&b->strings, k) ||
		    memcmp(ts_intern_str(&a->strings, k), ts_intern_str(&b->strings, k),
			   ts_intern_len(&a->strings, k)))
			abort();
	if (a->coll.n != b->coll.n || a->xfer.n != b->xfer.n || a->mem.n != b->mem.n ||
	    a->flops.n != b->flops.n)
		abort();
	for (size_t k = 0; k < a->coll.n; k++)
		if (a->coll.v[k].ev != b->coll.v[k].ev || a->coll.v[k].coll_name != b->coll.v[k].coll_name ||
		    a->coll.v[k].pg_name != b->coll.v[k].pg_name || a->coll.v[k].dtype != b->coll.v[k].dtype ||
		    a->coll.v[k].seq != b->coll.v[k].seq || a->coll.v[k].comms_id != b->coll.v[k].comms_id)
			abort();
	for (size_t k = 0; k < a->xfer.n; k++)
		if (a->xfer.v[k].ev != b->xfer.v[k].ev || a->xfer.v[k].bytes != b->xfer.v[k].bytes)
			abort();
	for (size_t k = 0; k < a->mem.n; k++)
		if (a->mem.v[k].ev != b->mem.v[k].ev || a->mem.v[k].bytes != b->mem.v[k].bytes)
			abort();
	for (size_t k = 0; k < a->flops.n; k++)
		if (a->flops.v[k].ev != b->flops.v[k].ev)
			abort();
	const struct ts_trace_meta *m = &a->meta, *q = &b->meta;
	if (m->vendor != q->vendor || m->truncated != q->truncated ||
	    m->truncated_at != q->truncated_at || m->recovered != q->recovered ||
	    m->first_recovery_at != q->first_recovery_at || m->bytes != q->bytes ||
	    m->skipped != q->skipped || m->bad_ts != q->bad_ts || m->bad_dur != q->bad_dur ||
	    m->negative_dur != q->negative_dur || m->legacy != q->legacy)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ts_trace_opts opts[] = {
		{ 0 }, { .strict = 1 }, { .skip_python = 1, .skip_flows = 1 },
	};
	size_t chunk = 16 + size % 97;
	uLong gzcap = compressBound((uLong)size) + 64;
	unsigned char *gz = malloc(gzcap);
	size_t gzn = 0;
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (gz && deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
		z.next_in = (unsigned char *)data;
		z.avail_in = (uInt)size;
		z.next_out = gz;
		z.avail_out = (uInt)gzcap;
		if (deflate(&z, Z_FINISH) == Z_STREAM_END)
			gzn = (size_t)z.total_out;
		deflateEnd(&z);
	}

	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		struct ts_trace a, b;
		struct ts_err ea, eb;
		ts_trace_init(&a);
		ts_trace_init(&b);
		int ra = trace_read_mem_split(&a, data, size, "fuzz.json", &opts[k], TRACE_SPLIT_OFF,
					      NULL, &ea);
		int rb = trace_read_mem_split(&b, data, size, "fuzz.json", &opts[k],
					      k == 1 ? chunk * 3 : chunk, NULL, &eb);
		compare(&a, ra, &ea, &b, rb, &eb);
		ts_trace_release(&a);
		ts_trace_release(&b);
		if (!gzn)
			continue;
		ts_trace_init(&a);
		ts_trace_init(&b);
		ra = trace_read_mem_split(&a, gz, gzn, "fuzz.json.gz", &opts[k], TRACE_SPLIT_OFF,
					  NULL, &ea);
		rb = trace_read_mem_split(&b, gz, gzn, "fuzz.json.gz", &opts[k],
					  k == 2 ? chunk * 5 : chunk * 2, NULL, &eb);
		compare(&a, ra, &ea, &b, rb, &eb);
		ts_trace_release(&a);
		ts_trace_release(&b);
	}
	free(gz);
	return 0;
}
