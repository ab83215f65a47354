/*
 * test_trace_split.c - the reader's split parse (one file's event array
 * on two threads, src/trace/trace_read.c "split parse") gives exactly the
 * serial result.
 *
 * Reference: the same reader with the split turned off
 * (TRACE_SPLIT_OFF), which is the reader every other test checks against
 * independent values. Compared: return code, error (code, offset, line,
 * message), every column and escaped value, the string table in order,
 * the side tables, metadata and counters. Inputs: every trace under the
 * shared traces folder and examples/ (gzip inflated here with zlib, then
 * read from memory, since gzip itself is never split), and generated
 * hostile traces: strings that end in "},{" or hold an escaped
 * "\"}, {\"" (false event boundaries), damaged events (quote bug, bad
 * escapes, unusable ts, negative dur), a 300 KB event, metadata arrays of
 * objects before and after traceEvents, a second traceEvents array,
 * legacy arrays, and cuts at many points; lenient, strict and skip modes;
 * chunk sizes from 37 bytes up, so the helper's chunks start at every
 * kind of place. The tests also check that batches were really handed
 * over (and, for the false boundaries, really thrown away).
 *
 * Gzip is split too (the helper parses copies of the inflated buffers):
 * the same documents compressed with zlib's deflate() here, in one member
 * (ISA-L inflates it when built with it) and in two (zlib takes over at
 * the second), cut inside the compressed data, from memory and from a
 * file, with the inflated buffer (the chunk) from 64 bytes up.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "harness.h"
#include "trainscope/core.h"
#include "trainscope/trace.h"
#include "../../src/trace/trace_int.h"

/* First difference between two reads, or NULL. */
static const char *diff_traces(const struct ts_trace *a, int ra, const struct ts_err *ea,
			       const struct ts_trace *b, int rb, const struct ts_err *eb)
{
	static char why[1200];
	const struct ts_trace_events *x = &a->ev, *y = &b->ev;
	const struct ts_trace_meta *m = &a->meta, *n = &b->meta;

	if (ra != rb)
		return "return code";
	if (ra && (ea->code != eb->code || ea->offset != eb->offset || ea->line != eb->line ||
		   strcmp(ea->msg, eb->msg) != 0 || strcmp(ea->path, eb->path) != 0)) {
		snprintf(why, sizeof(why), "error: %.500s | %.500s", ea->msg, eb->msg);
		return why;
	}
	if (ra)
		return NULL;
	if (x->n != y->n) {
		snprintf(why, sizeof(why), "events %zu vs %zu", x->n, y->n);
		return why;
	}
#define COL(c) if (x->n && memcmp(x->c, y->c, x->n * sizeof(*x->c))) return "column " #c
	COL(ts_off); COL(dur); COL(name); COL(cat_str); COL(cat); COL(ph); COL(pid); COL(tid);
#undef COL
#define SPARSE(c)                                                                            \
	if (x->n && (x->c.nval != y->c.nval ||                                               \
		     (x->c.nval && memcmp(x->c.val, y->c.val, x->c.nval * 4)) ||               \
	    memcmp(x->c.bits, y->c.bits, (x->n + 63) / 64 * 8) ||                            \
	    memcmp(x->c.rank, y->c.rank, (x->n + 63) / 64 * 4)))                             \
		return "sparse column " #c
	SPARSE(stream); SPARSE(device); SPARSE(correlation); SPARSE(external_id); SPARSE(flow_id);
#undef SPARSE
	if (x->ncat_dict != y->ncat_dict || memcmp(x->cat_dict, y->cat_dict, x->ncat_dict * 4))
		return "category dictionary";
	if (x->n && memcmp(x->ts_base, y->ts_base,
			   (x->n + TS_TS_BLOCK - 1) / TS_TS_BLOCK * sizeof(*x->ts_base)))
		return "column ts_base";
	if (x->ts_esc.n != y->ts_esc.n)
		return "escaped ts count";
	for (size_t k = 0; k < x->ts_esc.n; k++)
		if (x->ts_esc.v[k].ev != y->ts_esc.v[k].ev || x->ts_esc.v[k].v != y->ts_esc.v[k].v)
			return "escaped ts value";
	for (int c = 0; c < TS_C32_COUNT; c++) {
		if (x->esc[c].n != y->esc[c].n)
			return "escaped count";
		for (size_t k = 0; k < x->esc[c].n; k++)
			if (x->esc[c].v[k].ev != y->esc[c].v[k].ev || x->esc[c].v[k].v != y->esc[c].v[k].v)
				return "escaped value";
	}
	if (a->strings.count != b->strings.count) {
		snprintf(why, sizeof(why), "strings %zu vs %zu", a->strings.count, b->strings.count);
		return why;
	}
	for (uint32_t id = 0; id < a->strings.count; id++)
		if (ts_intern_len(&a->strings, id) != ts_intern_len(&b->strings, id) ||
		    memcmp(ts_intern_str(&a->strings, id), ts_intern_str(&b->strings, id),
			   ts_intern_len(&a->strings, id)))
			return "string table order";
	if (a->coll.n != b->coll.n || a->xfer.n != b->xfer.n || a->mem.n != b->mem.n ||
	    a->flops.n != b->flops.n)
		return "side table sizes";
	for (size_t k = 0; k < a->coll.n; k++) {
		const struct ts_trace_coll *p = &a->coll.v[k], *q = &b->coll.v[k];
		if (p->ev != q->ev || p->coll_name != q->coll_name || p->pg_name != q->pg_name ||
		    p->pg_desc != q->pg_desc || p->dtype != q->dtype || p->seq != q->seq ||
		    p->in_nelems != q->in_nelems || p->out_nelems != q->out_nelems ||
		    p->group_size != q->group_size || p->comms_id != q->comms_id)
			return "coll row";
	}
	for (size_t k = 0; k < a->xfer.n; k++)
		if (a->xfer.v[k].ev != b->xfer.v[k].ev || a->xfer.v[k].bytes != b->xfer.v[k].bytes)
			return "xfer row";
	for (size_t k = 0; k < a->mem.n; k++) {
		const struct ts_trace_mem *p = &a->mem.v[k], *q = &b->mem.v[k];
		if (p->ev != q->ev || p->bytes != q->bytes || p->total_allocated != q->total_allocated ||
		    p->total_reserved != q->total_reserved || p->device_type != q->device_type ||
		    p->device_id != q->device_id)
			return "mem row";
	}
	for (size_t k = 0; k < a->flops.n; k++)
		if (a->flops.v[k].ev != b->flops.v[k].ev ||
		    memcmp(&a->flops.v[k].flops, &b->flops.v[k].flops, sizeof(double)))
			return "flops row";
	if (m->rank != n->rank || m->rank_source != n->rank_source || m->world_size != n->world_size ||
	    m->backend != n->backend || m->vendor != n->vendor || m->legacy != n->legacy ||
	    m->base_ns != n->base_ns || m->has_base != n->has_base ||
	    m->profiler_version != n->profiler_version || m->trace_name != n->trace_name ||
	    m->runtime_version != n->runtime_version || m->driver_version != n->driver_version ||
	    m->nccl_version != n->nccl_version || m->npgs != n->npgs || m->ndevices != n->ndevices)
		return "metadata";
	if (m->truncated != n->truncated || m->truncated_at != n->truncated_at ||
	    m->recovered != n->recovered || m->first_recovery_at != n->first_recovery_at ||
	    m->bytes != n->bytes || m->skipped != n->skipped || m->bad_ts != n->bad_ts ||
	    m->bad_dur != n->bad_dur || m->negative_dur != n->negative_dur)
		return "reading counters";
	for (size_t k = 0; k < m->npgs; k++)
		if (m->pgs[k].name != n->pgs[k].name || m->pgs[k].size != n->pgs[k].size)
			return "process groups";
	for (size_t k = 0; k < m->ndevices; k++)
		if (m->devices[k].name != n->devices[k].name || m->devices[k].id != n->devices[k].id)
			return "devices";
	if (a->over_budget != b->over_budget)
		return "over_budget";
	return NULL;
}

static const struct ts_trace_opts modes[3] = {
	{ 0 },
	{ .skip_python = 1, .skip_flows = 1 },
	{ .strict = 1 },
};

/* Serial vs split of p[0..n) (path NULL) or of the file path, at chunk
 * size `chunk`; adds the split's stats to *sum. Fails the test with the
 * first difference. */
static void compare_one(const char *what, const void *p, size_t n, const char *path,
			const struct ts_trace_opts *o, size_t chunk, struct trace_split_stats *sum)
{
	struct ts_trace a, b;
	struct ts_err ea, eb;
	struct trace_split_stats st;
	int ra, rb;

	ts_trace_init(&a);
	ts_trace_init(&b);
	if (path) {
		ra = trace_read_split(&a, path, o, TRACE_SPLIT_OFF, NULL, &ea);
		rb = trace_read_split(&b, path, o, chunk, &st, &eb);
	} else {
		ra = trace_read_mem_split(&a, p, n, what, o, TRACE_SPLIT_OFF, NULL, &ea);
		rb = trace_read_mem_split(&b, p, n, what, o, chunk, &st, &eb);
	}
	const char *d = diff_traces(&a, ra, &ea, &b, rb, &eb);
	if (d)
		ts_test_fail(__FILE__, __LINE__, "%s (%zu bytes, chunk %zu, strict %d, skip %d): %s",
			     what, n, chunk, o->strict, o->skip_python, d);
	sum->chunks += st.chunks;
	sum->handed += st.handed;
	sum->events += st.events;
	ts_trace_release(&a);
	ts_trace_release(&b);
}

/* ------------------------------------------------------ shared traces */

static int is_trace_name(const char *s)
{
	size_t n = strlen(s);

	return (n > 5 && strcmp(s + n - 5, ".json") == 0) ||
	       (n > 8 && strcmp(s + n - 8, ".json.gz") == 0);
}

static void walk(const char *dir, struct trace_split_stats *sum, int *files)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char p[4096];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(p, sum, files);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !is_trace_name(de->d_name))
			continue;
		size_t n = 0;
		unsigned char *buf = test_load_all(p, &n);
		if (!buf)
			continue;
		(*files)++;
		/* chunks from half the file down to 4 KB (at most ~4,000 chunks) */
		size_t chunks[] = { n / 2 + 1, n / 3 + 7, n / 11 + 3, 65537, 8191, 4099 };
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			if (chunks[c] < 64 || n / chunks[c] > 4000)
				continue;
			compare_one(p, buf, n, NULL, &modes[c % 3], chunks[c], sum);
		}
		/* plain files also through the file path (pread helper), gzip
		 * files through their inflated buffers */
		size_t pn = strlen(p);
		if (strcmp(p + pn - 5, ".json") == 0 && n / 8191 <= 4000)
			compare_one(p, NULL, n, p, &modes[0], n > 100000 ? 8191 : n / 3 + 1, sum);
		else if (strcmp(p + pn - 3, ".gz") == 0 && n / 16384 <= 4000)
			compare_one(p, NULL, n, p, &modes[1], n > 100000 ? 16384 : n / 3 + 64, sum);
		free(buf);
	}
	closedir(d);
}

TEST(trace_split_shared_traces)
{
	DATA_OR_SKIP(root, "traces");
	struct trace_split_stats sum = { 0 };
	int files = 0;

	walk(root, &sum, &files);
	walk("examples", &sum, &files);
	CHECK(files >= 20);
	/* the split really happened on most of them */
	CHECK(sum.handed > 100);
	CHECK(sum.events > 100000);
}

/* ------------------------------------------------------ hostile traces */

/* A trace with every event shape the reader keeps, false boundaries
 * inside strings and damaged events; `legacy`: a bare array. */
static void hostile(struct ts_sb *sb, int legacy, int damaged, int meta_objs)
{
	ts_sb_reset(sb);
	if (legacy) {
		ts_sb_adds(sb, "[\n");
	} else {
		ts_sb_adds(sb, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\"}],\n");
		if (meta_objs) {
			/* objects that look like events, outside traceEvents */
			ts_sb_adds(sb, "\"before\": [");
			for (int k = 0; k < 300; k++)
				ts_sb_addf(sb, "%s{\"ph\": \"X\", \"name\": \"m%d\", \"ts\": %d}", k ? ", " : "", k, k);
			ts_sb_adds(sb, "],\n");
		}
		ts_sb_adds(sb, "\"traceEvents\": [\n");
	}
	for (int k = 0; k < 1500; k++) {
		if (k)
			ts_sb_adds(sb, k % 7 == 3 ? ",{" : ",\n  {");
		else
			ts_sb_adds(sb, "  {");
		switch (k % 13) {
		case 0:
			/* a string that ends in "}, {": a candidate inside it */
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d}, {\", \"pid\": 1, "
				   "\"tid\": 2, \"ts\": %d.125, \"dur\": 3}", k % 50, k * 10);
			break;
		case 1:
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\\\"}, {\\\"ph\\\": \\\"X%d\", "
				   "\"pid\": 0, \"tid\": \"stream 7\", \"ts\": %d, \"dur\": 5, "
				   "\"args\": {\"correlation\": %d, \"stream\": 7, \"device\": 0}}",
				   k % 30, k * 10, k);
			break;
		case 2:
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"py},{\\\"x%d\", "
				   "\"pid\": \"Spans\", \"tid\": -3, \"ts\": %d, \"dur\": 1}", k % 20, k * 10);
			break;
		case 3:
			ts_sb_addf(sb, "\"ph\": \"s\", \"id\": %d, \"cat\": \"ac2g\", \"name\": \"flow\", "
				   "\"pid\": 1, \"tid\": 2, \"ts\": %d}", k, k * 10);
			break;
		case 4:
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
				   "\"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": 9, \"args\": {\"Collective name\": "
				   "\"allreduce\", \"Process Group Name\": \"pg%d\", \"dtype\": \"Float\", \"Seq\": %d, "
				   "\"In msg nelems\": 10, \"Group size\": 8, \"Comms Id\": 18446744073709551615, "
				   "\"External id\": 5000000000, \"flops\": 1.5e9}}", k * 10, k % 4, k);
			break;
		case 5:
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, "
				   "\"tid\": 7, \"ts\": %d, \"dur\": 2, \"args\": {\"bytes\": %d, \"correlation\": %d}}",
				   k * 10, k * 100, k);
			break;
		case 6:
			ts_sb_addf(sb, "\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 2, \"ts\": %d, "
				   "\"args\": {\"Bytes\": -%d, \"Total Allocated\": 100, \"Total Reserved\": 200, "
				   "\"Device Type\": 1, \"Device Id\": 0}}", k * 10, k);
			break;
		case 7:
			if (damaged && k % 3 == 1) {
				/* the quote bug: dropped and resynchronised */
				ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"bad \"quote\" %d\", "
					   "\"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": 1}", k, k * 10);
			} else if (damaged && k % 3 == 2) {
				/* a bad escape and a raw tab: kept, repaired */
				ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"C:\\y\tpath%d\", "
					   "\"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": 1}", k, k * 10);
			} else {
				ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
					   "\"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": 100}", k, k * 10);
			}
			break;
		case 8:
			if (damaged && k % 2)
				ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"n\", \"pid\": 1, "
					   "\"tid\": 2, \"ts\": 1e400, \"dur\": -4}");
			else
				ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
					   "\"pid\": 1, \"tid\": 2, \"ts\": %d.0005, \"dur\": 4, "
					   "\"args\": {\"correlation\": %d, \"shapes\": [[1, 2], [3]], \"x\": {\"y\": [{}, {\"z\": null}]}}}",
					   k * 10, k);
			break;
		case 9:
			if (k == 789) {
				/* one event far bigger than a chunk */
				ts_sb_adds(sb, "\"ph\": \"X\", \"name\": \"huge\", \"ts\": 1, \"args\": {\"s\": \"");
				for (int j = 0; j < 300000 / 16; j++)
					ts_sb_adds(sb, j % 5 ? "abcdefghijklmnop" : "}, {\\\"ph\\\": \\\"X\\\"  ");
				ts_sb_adds(sb, "\"}}");
			} else {
				ts_sb_addf(sb, "\"name\": \"cat-less %d\", \"ph\": \"X\", \"ts\": %d, \"dur\": 1}", k % 9, k);
			}
			break;
		case 10:
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"\\u00e9t\\u00e9 %d\", "
				   "\"pid\": \"7\", \"tid\": 4294967296, \"ts\": \"%d\", \"dur\": 2}", k % 40, k);
			break;
		case 11:
			ts_sb_addf(sb, "\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": %d, "
				   "\"args\": {\"name\": \"thread %d\"}}", k, k);
			break;
		default:
			if (k % 26 == 12) {
				/* numbers in the string-id range of trace.h: -3e18, and
				 * exactly TS_STRID(4) as a numeric string; a batch must
				 * not remap them as string ids (it read out of bounds) */
				ts_sb_addf(sb, "\"ph\": \"X\", \"name\": \"raw\", \"pid\": -3000000000000000000, "
					   "\"tid\": \"-4611686018427387900\", \"ts\": %d, \"dur\": 1}", k);
				break;
			}
			ts_sb_addf(sb, "\"ph\": \"X\", \"cat\": \"mtia_ccp_events\", \"name\": \"%c\", \"pid\": 2, "
				   "\"tid\": 3, \"ts\": %d, \"dur\": 1, \"id\": 7}", 'a' + k % 26, k);
			break;
		}
	}
	if (legacy) {
		ts_sb_adds(sb, "\n]\n");
		return;
	}
	ts_sb_adds(sb, "\n],\n");
	if (meta_objs) {
		ts_sb_adds(sb, "\"after\": [");
		for (int k = 0; k < 2000; k++)
			ts_sb_addf(sb, "%s{\"ph\": \"X\", \"name\": \"a%d\", \"ts\": %d}", k ? ", " : "", k % 10, k);
		ts_sb_adds(sb, "],\n\"traceEvents\": [{\"ph\": \"X\", \"name\": \"second array\", \"ts\": 5}, "
			   "{\"ph\": \"i\", \"name\": \"again}, {\", \"ts\": 6}],\n");
	}
	ts_sb_adds(sb, "\"traceName\": \"x}, {\\\"y\", \"baseTimeNanoseconds\": 1700000000000000000}\n");
}

static const size_t small_chunks[] = { 37, 64, 97, 128, 251, 512, 1000, 4096, 9973, 65536 };

static void hostile_all(const char *what, const char *doc, size_t n,
			struct trace_split_stats *sum)
{
	for (size_t c = 0; c < sizeof(small_chunks) / sizeof(small_chunks[0]); c++)
		for (int m = 0; m < 3; m++)
			compare_one(what, doc, n, NULL, &modes[m], small_chunks[c], sum);
}

TEST(trace_split_hostile)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };

	ts_sb_init(&sb);
	for (int v = 0; v < 6; v++) {
		memset(&sum, 0, sizeof(sum));
		hostile(&sb, v == 5, v & 1, v & 2);
		REQUIRE(!sb.failed);
		hostile_all("hostile", sb.buf, sb.len, &sum);
		/* batches were handed over, and some thrown away */
		CHECK(sum.handed > 50);
		CHECK(sum.chunks > sum.handed);
	}
	ts_sb_release(&sb);
}

TEST(trace_split_cuts)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };

	ts_sb_init(&sb);
	hostile(&sb, 0, 1, 1);
	REQUIRE(!sb.failed);
	/* cut anywhere: inside events, in separators, in the metadata after
	 * the array, inside the huge event */
	for (size_t cut = 1; cut < sb.len; cut += sb.len / 61 + 1) {
		compare_one("cut", sb.buf, cut, NULL, &modes[cut % 3], 97, &sum);
		compare_one("cut", sb.buf, cut, NULL, &modes[0], 4096, &sum);
	}
	for (size_t cut = sb.len - 300; cut < sb.len; cut += 13)
		compare_one("cut", sb.buf, cut, NULL, &modes[0], 251, &sum);
	CHECK(sum.handed > 100);
	ts_sb_release(&sb);
}

TEST(trace_split_errors)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };

	ts_sb_init(&sb);
	hostile(&sb, 0, 0, 0);
	REQUIRE(!sb.failed);
	/* garbage between events at several places: the serial error, with
	 * its offset and line, whichever thread met the bytes first */
	for (size_t at = sb.len / 10; at < sb.len; at += sb.len / 7) {
		char *p = malloc(sb.len + 1);
		REQUIRE(p);
		memcpy(p, sb.buf, sb.len);
		char *q = strstr(p + at, "},\n  {");
		if (q)
			q[1] = 'x';
		compare_one("garbage", p, sb.len, NULL, &modes[0], 97, &sum);
		compare_one("garbage", p, sb.len, NULL, &modes[2], 1000, &sum);
		free(p);
	}
	ts_sb_release(&sb);
}

TEST(trace_split_file)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };
	char path[] = "/tmp/ts-split-XXXXXX";
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	ts_sb_init(&sb);
	hostile(&sb, 0, 1, 1);
	REQUIRE(!sb.failed);
	REQUIRE(write(fd, sb.buf, sb.len) == (ssize_t)sb.len);
	close(fd);
	for (size_t c = 0; c < sizeof(small_chunks) / sizeof(small_chunks[0]); c++)
		compare_one(path, NULL, sb.len, path, &modes[c % 3], small_chunks[c], &sum);
	/* the same file cut short */
	REQUIRE(truncate(path, (off_t)(sb.len * 2 / 3)) == 0);
	compare_one(path, NULL, sb.len, path, &modes[0], 251, &sum);
	compare_one(path, NULL, sb.len, path, &modes[2], 4096, &sum);
	CHECK(sum.handed > 20);
	unlink(path);
	ts_sb_release(&sb);
}

/* ------------------------------------------------------ gzip */

/* p[0..n) as gzip (zlib's deflate, level 6) in `members` members split
 * at n / members; NULL when out of memory. */
static unsigned char *gz_of(const void *p, size_t n, int members, size_t *out_n)
{
	size_t cap = compressBound((uLong)n) + 64 * (size_t)members, len = 0;
	unsigned char *out = malloc(cap);

	if (!out)
		return NULL;
	for (int m = 0; m < members; m++) {
		size_t from = n / (size_t)members * (size_t)m;
		size_t to = m == members - 1 ? n : n / (size_t)members * (size_t)(m + 1);
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(out);
			return NULL;
		}
		z.next_in = (unsigned char *)p + from;
		z.avail_in = (uInt)(to - from);
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len);
		int r = deflate(&z, Z_FINISH);
		len += (size_t)z.total_out;
		deflateEnd(&z);
		if (r != Z_STREAM_END) {
			free(out);
			return NULL;
		}
	}
	*out_n = len;
	return out;
}

static const size_t gz_chunks[] = { 64, 97, 251, 1000, 4096, 65536 };

TEST(trace_split_gzip)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };

	ts_sb_init(&sb);
	for (int v = 0; v < 6; v++) {
		hostile(&sb, v == 5, v & 1, v & 2);
		REQUIRE(!sb.failed);
		for (int members = 1; members <= 2; members++) {
			size_t n = 0;
			unsigned char *gz = gz_of(sb.buf, sb.len, members, &n);
			REQUIRE(gz);
			for (size_t c = 0; c < sizeof(gz_chunks) / sizeof(gz_chunks[0]); c++)
				compare_one("gzip", gz, n, NULL, &modes[(c + (size_t)v) % 3], gz_chunks[c], &sum);
			free(gz);
		}
	}
	/* batches from inflated buffers really were appended */
	CHECK(sum.handed > 100);
	CHECK(sum.events > 2000);
	ts_sb_release(&sb);
}

TEST(trace_split_gzip_cuts)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };
	size_t n = 0;

	ts_sb_init(&sb);
	hostile(&sb, 0, 1, 1);
	REQUIRE(!sb.failed);
	unsigned char *gz = gz_of(sb.buf, sb.len, 1, &n);
	REQUIRE(gz);
	/* the compressed stream cut anywhere: every complete event kept,
	 * the same offsets and flags as the serial read */
	for (size_t cut = 11; cut < n; cut += n / 23 + 1) {
		compare_one("gzip cut", gz, cut, NULL, &modes[cut % 3], 251, &sum);
		compare_one("gzip cut", gz, cut, NULL, &modes[0], 4096, &sum);
	}
	/* a wrong CRC: every event read, then the serial error at the end
	 * (bytes overwritten mid-stream are not compared: ISA-L and zlib can
	 * disagree on where such data goes bad, so the bytes the reader gets
	 * depend on the size of the inflated buffers, split or not) */
	unsigned char *bad = malloc(n);
	REQUIRE(bad);
	memcpy(bad, gz, n);
	bad[n - 6] ^= 0x55;
	compare_one("gzip corrupt", bad, n, NULL, &modes[0], 1000, &sum);
	compare_one("gzip corrupt", bad, n, NULL, &modes[2], 4096, &sum);
	free(bad);
	CHECK(sum.handed > 20);
	free(gz);
	ts_sb_release(&sb);
}

TEST(trace_split_gzip_file)
{
	struct ts_sb sb;
	struct trace_split_stats sum = { 0 };
	char path[] = "/tmp/ts-split-gz-XXXXXX";
	int fd = mkstemp(path);
	size_t n = 0;

	REQUIRE(fd >= 0);
	ts_sb_init(&sb);
	hostile(&sb, 0, 1, 1);
	REQUIRE(!sb.failed);
	unsigned char *gz = gz_of(sb.buf, sb.len, 2, &n);
	REQUIRE(gz);
	REQUIRE(write(fd, gz, n) == (ssize_t)n);
	close(fd);
	for (size_t c = 0; c < sizeof(gz_chunks) / sizeof(gz_chunks[0]); c++)
		compare_one(path, NULL, n, path, &modes[c % 3], gz_chunks[c], &sum);
	REQUIRE(truncate(path, (off_t)(n * 2 / 3)) == 0);
	compare_one(path, NULL, n, path, &modes[0], 251, &sum);
	compare_one(path, NULL, n, path, &modes[2], 4096, &sum);
	CHECK(sum.handed > 20);
	unlink(path);
	free(gz);
	ts_sb_release(&sb);
}
