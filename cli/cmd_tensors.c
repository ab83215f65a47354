/*
 * cmd_tensors.c - `trainscope tensors A B`: are two tensor dumps
 * numerically the same within dtype tolerances?
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"
#include "trainscope/tensors.h"

enum { OPT_RTOL = 1, OPT_ATOL };

static const struct cli_opt opts[] = {
	{ "rtol", 0, "X", "relative tolerance for every tensor (default: by dtype, as torch.testing)", OPT_RTOL },
	{ "atol", 0, "X", "absolute tolerance for every tensor (default: by dtype)", OPT_ATOL },
	{ 0 }
};

static void shape_str(const struct ts_tensor_info *t, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	if (!t)
		return;
	len += (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < t->ndim && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
					(long long)t->shape[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_safetensors a, b;
	struct ts_tensor_cmp *cmp = NULL;
	struct ts_err err;
	struct ts_sb out;
	struct ts_jw w;
	struct ts_table t;
	double rtol = -1, atol = -1;
	size_t n = 0, failed = 0;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_safetensors_init(&a);
	ts_safetensors_init(&b);
	ts_sb_init(&out);
	ts_table_init(&t);
	ts_err_init(&err);
	for (size_t i = 0; i < p.nopts; i++) {
		double *dst = p.opts[i].key == OPT_RTOL ? &rtol : &atol;
		if ((rc = cli_double(ctx, &p.opts[i], 0, 1e30, dst)))
			goto out;
	}
	if (p.npos != 2) {
		cli_error(ctx, "expected two safetensors files, got %zu argument%s", p.npos,
			  p.npos == 1 ? "" : "s");
		fprintf(stderr, "hint: trainscope tensors baseline.safetensors candidate.safetensors\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (ts_safetensors_open(&a, p.pos[0], &err) || ts_safetensors_open(&b, p.pos[1], &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_tensors_compare(&a, &b, rtol, atol, &cmp, &n, &failed)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	ts_jw_init(&w, &out, 1);
	if (ctx->json) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.tensors/1");
		ts_jw_kstr(&w, "a", p.pos[0]);
		ts_jw_kstr(&w, "b", p.pos[1]);
		ts_jw_kbool(&w, "passed", failed == 0);
		ts_jw_ki64(&w, "compared", (int64_t)n);
		ts_jw_ki64(&w, "failed", (int64_t)failed);
		ts_jw_key(&w, "tensors");
		ts_jw_arr(&w);
	} else {
		ts_table_col(&t, "tensor", NULL, TS_LEFT, 48);
		ts_table_col(&t, "dtype", "A/B", TS_LEFT, 0);
		ts_table_col(&t, "shape", NULL, TS_LEFT, 24);
		ts_table_col(&t, "max abs err", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "max rel err", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "rtol/atol", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "outside tol", "elements", TS_RIGHT, 0);
		ts_table_col(&t, "NaN/Inf", "A;B", TS_RIGHT, 0);
		ts_table_col(&t, "status", NULL, TS_LEFT, 0);
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_tensor_cmp *c = &cmp[i];
		char shape[128];
		int compared = c->a && c->b && c->status != TS_TCMP_SHAPE &&
			       c->status != TS_TCMP_UNSUPPORTED;

		shape_str(c->a ? c->a : c->b, shape, sizeof(shape));
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "name", c->name);
			ts_jw_kstr(&w, "dtype_a", c->a ? ts_dtype_name(c->dtype_a) : NULL);
			ts_jw_kstr(&w, "dtype_b", c->b ? ts_dtype_name(c->dtype_b) : NULL);
			ts_jw_kstr(&w, "shape", shape);
			ts_jw_ki64(&w, "numel", (int64_t)c->numel);
			ts_jw_kstr(&w, "status", ts_tcmp_status_name(c->status));
			if (compared) {
				ts_jw_kf64(&w, "max_abs_err", c->max_abs);
				ts_jw_kf64(&w, "max_rel_err", c->max_rel);
				ts_jw_ki64(&w, "argmax_abs_index", (int64_t)c->argmax_abs);
				ts_jw_kf64(&w, "rtol", c->rtol);
				ts_jw_kf64(&w, "atol", c->atol);
				ts_jw_ki64(&w, "outside_tolerance", (int64_t)c->mismatched);
				ts_jw_ki64(&w, "nan_a", (int64_t)c->nan_a);
				ts_jw_ki64(&w, "nan_b", (int64_t)c->nan_b);
				ts_jw_ki64(&w, "inf_a", (int64_t)c->inf_a);
				ts_jw_ki64(&w, "inf_b", (int64_t)c->inf_b);
			}
			ts_jw_obj_end(&w);
			continue;
		}
		ts_table_cell(&t, "%s", c->name);
		ts_table_cell(&t, "%s/%s", c->a ? ts_dtype_name(c->dtype_a) : "-",
			      c->b ? ts_dtype_name(c->dtype_b) : "-");
		ts_table_cell(&t, "%s", shape);
		if (compared) {
			ts_table_cell(&t, "%.3e", c->max_abs);
			ts_table_cell(&t, "%.3e", c->max_rel);
			ts_table_cell(&t, "%.2g/%.2g", c->rtol, c->atol);
			ts_table_cell(&t, "%llu", (unsigned long long)c->mismatched);
			ts_table_cell(&t, "%llu;%llu", (unsigned long long)(c->nan_a + c->inf_a),
				      (unsigned long long)(c->nan_b + c->inf_b));
		} else {
			for (int k = 0; k < 5; k++)
				ts_table_cell(&t, "-");
		}
		ts_table_cell(&t, "%s", ts_tcmp_status_name(c->status));
	}
	if (ctx->json) {
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
	} else {
		ts_table_render(&t, &out, 0);
		ts_sb_addf(&out, "\n%zu tensor%s compared, %zu failed: %s\n", n, n == 1 ? "" : "s",
			   failed, failed ? "NOT equivalent" : "equivalent within tolerance");
	}
	rc = cli_emit(ctx, &out);
	if (!rc && failed)
		rc = EXIT_GATE;
out:
	free(cmp);
	ts_table_release(&t);
	ts_sb_release(&out);
	ts_safetensors_release(&a);
	ts_safetensors_release(&b);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_tensors = {
	.name = "tensors",
	.stage = STAGE_RETUNE,
	.summary = "Compare two safetensors dumps tensor by tensor (max abs/rel error, NaN/Inf)",
	.usage = "tensors [options] A.safetensors B.safetensors",
	.description =
		"For forward outputs and gradients dumped by the baseline (A) and the candidate (B).\n"
		"An element passes when |b - a| <= atol + rtol |a| with torch.testing.assert_close's\n"
		"defaults per dtype: bf16 1.6e-2/1e-5, fp16 1e-3/1e-5, fp32 1.3e-6/1e-5,\n"
		"fp64 1e-7/1e-7 (the looser one when the dtypes differ); integers must be equal.\n"
		"NaN or Inf in either tensor, a shape difference or a tensor present on one side\n"
		"only fails. Exit 0 when every tensor passes, 1 otherwise, 2 on unreadable input.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
