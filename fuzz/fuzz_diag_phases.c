/*
 * libFuzzer target: diagnose on a run directory whose one file is the
 * input, read as every command reads a run (the run model: JSONL metrics
 * with their phase split, or a log), then gathered, analysed and
 * rendered. Any bytes load or fail with a message; a loaded run renders
 * valid JSON and printable text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "trainscope/diagnose.h"
#include "trainscope/run.h"
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_runmodel rm;
	struct ts_diag d;
	struct ts_err err;
	char *paths[1] = { dir };
	FILE *f;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_diag.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
		atexit(remove_dir);
	}
	f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size))
		abort();
	fclose(f);
	ts_runmodel_init(&rm);
	ts_diag_init(&d);
	ts_err_init(&err);
	if (ts_runmodel_load(&rm, paths, 1, NULL, 0, &err) == 0 &&
	    ts_diag_gather(&d, &rm, &err) == 0 && ts_diag_analyse(&d) == 0) {
		struct ts_sb out;

		ts_sb_init(&out);
		ts_diag_json(&d, &out);
		if (!out.failed)
			oracle_json(out.buf, out.len);
		ts_sb_reset(&out);
		ts_diag_text(&d, &out, 0);
		if (!out.failed)
			oracle_text(out.buf, out.len);
		ts_sb_release(&out);
	}
	ts_diag_release(&d);
	ts_runmodel_release(&rm);
	return 0;
}
