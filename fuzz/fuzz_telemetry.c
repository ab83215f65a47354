/*
 * fuzz_telemetry.c - libFuzzer target for the telemetry readers, the
 * summary, the findings and the JSON rendering. Any bytes must read or fail
 * cleanly; and what reads must keep its invariants: every sample names a
 * GPU of the capture, every summary has min <= mean <= max, and the rendered
 * JSON is well-formed (strict RFC 8259, so valid UTF-8) from start to end.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/json.h"
#include "trainscope/telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_json(const struct ts_sb *sb)
{
	struct ts_json j;
	struct ts_err err;
	int tok;

	ts_err_init(&err);
	ts_json_init_mem(&j, sb->buf, sb->len, 0, "render");
	do
		tok = ts_json_next(&j, &err);
	while (tok > 0);
	if (tok < 0)
		abort();
	ts_json_release(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_telemetry t;
	struct ts_err err;
	struct ts_tele_read_opts o = { size && data[0] == 'F' ? "name,power.draw,utilization.gpu" : NULL };

	ts_tele_init(&t);
	ts_err_init(&err);
	if (ts_tele_read_mem(&t, data, size, "fuzz.txt", &o, &err) == 0) {
		ts_tele_match_gpus(&t);
		struct ts_tele_gpu_summary *sum = calloc(t.gpus.n + 1, sizeof(*sum));
		struct ts_tele_finding f[64];
		struct ts_sb sb;
		if (!sum)
			abort();
		for (size_t i = 0; i < t.samples.n; i++)
			if (t.samples.v[i].gpu >= t.gpus.n)
				abort();
		ts_tele_summarize(&t, sum);
		for (size_t g = 0; g < t.gpus.n; g++)
			for (int k = 0; k < TS_TF_COUNT; k++) {
				const struct ts_tele_stat *s = &sum[g].f[k];
				if (s->n && !(s->min <= s->max && s->mean >= s->min - 1e-9 * fabs(s->min) &&
					      s->mean <= s->max + 1e-9 * fabs(s->max)) &&
				    isfinite(s->min) && isfinite(s->max))
					abort();
			}
		size_t nf = ts_tele_findings(&t, sum, NULL, 0, NULL, f, 64, NULL);
		if (nf > 64)
			abort();
		ts_sb_init(&sb);
		ts_tele_render_json(&sb, &t, sum, NULL, 0, f, nf, NULL, -1, 0);
		check_json(&sb);
		ts_sb_reset(&sb);
		ts_tele_render_text(&sb, &t, sum, NULL, 0, f, nf);
		ts_sb_release(&sb);
		free(sum);
	}
	ts_tele_release(&t);
	return 0;
}
