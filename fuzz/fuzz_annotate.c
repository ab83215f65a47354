/*
 * fuzz_annotate.c - libFuzzer target for `trace --annotate`: the input is
 * read as a trace and profiled; when that succeeds the same bytes, as a
 * file, go through ts_annotate_write, whose own pass finds the end of the
 * event array (or the last complete element of a cut file) and copies the
 * trace around the finding events. Asserts that a written trace is one
 * whole JSON document (lenient and NaN-tolerant, as the input may be):
 * every byte tokenizes, nothing follows it, and the finding events are in
 * it; that a refusal is a parse error, a cut before the event array or a
 * limit, names the input and leaves no output file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trainscope/annotate.h"
#include "trainscope/json.h"
#include "trainscope/profile.h"
#include "trainscope/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in_path[96], out_path[96];

/* the scratch directory goes when the fuzzer exits */
static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, fp) == (size_t)len)
		*n = (size_t)len;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_trace t;
	struct ts_rank_prof p;
	struct ts_prof_tracks k;
	struct ts_prof_opts po = { 5, &k, 1 };
	struct ts_err err;
	struct ts_sb ev;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-annotate.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(in_path, sizeof(in_path), "%s/in.json", dir);
		snprintf(out_path, sizeof(out_path), "%s/out.json", dir);
		atexit(cleanup);
	}
	ts_trace_init(&t);
	ts_rank_prof_init(&p);
	ts_prof_tracks_init(&k);
	ts_sb_init(&ev);
	if (ts_trace_read_mem(&t, data, size, "fuzz", NULL, &err) == 0 &&
	    ts_rank_profile(&p, &t, &po, &err) == 0) {
		struct ts_annotate_info ai = { &p, &k, NULL, NULL, 0 };
		FILE *fp = fopen(in_path, "wb");
		int rc;

		if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
			abort();
		ts_annotate_events(&ev, &ai);
		unlink(out_path);
		rc = ts_annotate_write(out_path, in_path, &ai, &err);
		if (rc == 0) {
			size_t n = 0;
			char *out = slurp(out_path, &n);
			struct ts_json j;
			int tok;

			if (!out || ev.failed || !memmem(out, n, ev.buf, ev.len))
				abort();
			ts_json_init_mem(&j, out, n, TS_JSON_LENIENT | TS_JSON_ALLOW_NAN, "out");
			while ((tok = ts_json_next(&j, &err)) > 0)
				;
			if (tok != TS_JSON_EOF)
				abort();
			ts_json_release(&j);
			free(out);
		} else if ((rc != TS_EPARSE && rc != TS_ETRUNC && rc != TS_ELIMIT && rc != TS_ENOMEM) ||
			   (rc != TS_ENOMEM && strcmp(err.path, in_path) != 0) ||
			   access(out_path, F_OK) == 0) {
			abort();
		}
	}
	ts_sb_release(&ev);
	ts_prof_tracks_release(&k);
	ts_rank_prof_release(&p);
	ts_trace_release(&t);
	return 0;
}
