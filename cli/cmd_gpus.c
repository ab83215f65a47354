/*
 * cmd_gpus.c - `trainscope gpus`: the peak catalog with its sources.
 */
#include <math.h>
#include <stdio.h>
#include "cli.h"
#include "trainscope/gpus.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

enum { OPT_CATALOG = 1, OPT_GPU };

static const struct cli_opt opts[] = {
	{ "catalog", 0, "FILE", "user catalog (JSON) that overrides and extends the built-in one", OPT_CATALOG },
	{ "gpu", 0, "SKU", "show one accelerator (any alias, case-insensitive)", OPT_GPU },
	{ 0 }
};

static void peak_cell(struct ts_table *t, const struct ts_peak *p)
{
	if (p->state == TS_PEAK_KNOWN)
		ts_table_cell(t, "%.6g", p->tflops);
	else if (p->state == TS_PEAK_UNSUPPORTED)
		ts_table_cell(t, "-");
	else
		ts_table_cell(t, "?");
}

static void json_gpu(struct ts_jw *w, const struct ts_gpu *g)
{
	ts_jw_obj(w);
	ts_jw_kstr(w, "sku", g->sku);
	ts_jw_kstr(w, "vendor", g->vendor);
	ts_jw_kstr(w, "aliases", g->aliases);
	ts_jw_key(w, "peak_tflops");
	ts_jw_obj(w);
	for (int p = 0; p < TS_PREC_COUNT; p++) {
		ts_jw_key(w, ts_precision_name(p));
		if (g->peak[p].state == TS_PEAK_KNOWN)
			ts_jw_f64(w, g->peak[p].tflops);
		else if (g->peak[p].state == TS_PEAK_UNSUPPORTED)
			ts_jw_str(w, "unsupported");
		else
			ts_jw_null(w);
	}
	ts_jw_obj_end(w);
	ts_jw_key(w, "peak_notes");
	ts_jw_obj(w);
	for (int p = 0; p < TS_PREC_COUNT; p++)
		if (g->peak[p].note || (g->peak[p].source && g->peak[p].source != g->source)) {
			ts_jw_key(w, ts_precision_name(p));
			ts_jw_obj(w);
			ts_jw_kstr(w, "note", g->peak[p].note);
			ts_jw_kstr(w, "source", g->peak[p].source ? g->peak[p].source : g->source);
			ts_jw_obj_end(w);
		}
	ts_jw_obj_end(w);
	ts_jw_kbool(w, "dense", 1);
	ts_jw_kstr(w, "source", g->source);
	ts_jw_ki64(w, "memory_bytes", g->memory_bytes);
	ts_jw_kstr(w, "memory_note", g->memory_note);
	/* null: not in the catalog (0 there) */
	ts_jw_kf64_or_null(w, "mem_bw_bytes_per_s", g->mem_bw_bytes_per_s > 0 ? g->mem_bw_bytes_per_s : NAN);
	ts_jw_kstr(w, "link", g->link);
	ts_jw_kf64_or_null(w, "link_bytes_per_s", g->link_bytes_per_s > 0 ? g->link_bytes_per_s : NAN);
	ts_jw_ki64(w, "link_domain", g->link_domain);
	ts_jw_kstr(w, "notes", g->notes);
	ts_jw_kbool(w, "user", g->user);
	ts_jw_obj_end(w);
}

static void text_details(struct ts_sb *out, const struct ts_gpu *g)
{
	ts_sb_addf(out, "%s (%s)%s\n", g->sku, g->vendor, g->user ? " [user catalog]" : "");
	if (g->aliases)
		ts_sb_addf(out, "  aliases: %s\n", g->aliases);
	ts_sb_addf(out, "  source: %s\n", g->source);
	for (int p = 0; p < TS_PREC_COUNT; p++) {
		const struct ts_peak *k = &g->peak[p];
		ts_sb_addf(out, "  %-5s ", ts_precision_name(p));
		if (k->state == TS_PEAK_KNOWN)
			ts_sb_addf(out, "%.6g %s dense", k->tflops, p == TS_PREC_INT8 ? "TOPS" : "TFLOP/s");
		else if (k->state == TS_PEAK_UNSUPPORTED)
			ts_sb_adds(out, "not supported");
		else
			ts_sb_adds(out, "unknown (supply with --peak-tflops or --catalog)");
		if (k->note)
			ts_sb_addf(out, " (%s)", k->note);
		if (k->source && k->source != g->source)
			ts_sb_addf(out, " [source: %s]", k->source);
		ts_sb_addc(out, '\n');
	}
	ts_sb_addf(out, "  memory: %.0f GiB%s%s%s\n", (double)g->memory_bytes / (1 << 30),
		   g->memory_note ? " (" : "", g->memory_note ? g->memory_note : "",
		   g->memory_note ? ")" : "");
	if (g->mem_bw_bytes_per_s > 0)
		ts_sb_addf(out, "  memory bandwidth: %.4g TB/s\n", g->mem_bw_bytes_per_s / 1e12);
	if (g->link)
		ts_sb_addf(out, "  link: %s, %.4g GB/s%s\n", g->link, g->link_bytes_per_s / 1e9,
			   g->link_bytes_per_s > 0 ? "" : " (bandwidth unknown)");
	if (g->link_domain)
		ts_sb_addf(out, "  fast-link domain: %d GPUs\n", g->link_domain);
	if (g->notes)
		ts_sb_addf(out, "  notes: %s\n", g->notes);
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_gpu_catalog cat;
	struct ts_err err;
	struct ts_sb out;
	struct ts_jw w;
	struct ts_table t;
	const char *one = NULL;
	const struct ts_gpu *g = NULL;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_sb_init(&out);
	ts_table_init(&t);
	ts_err_init(&err);
	if (ts_gpu_catalog_init(&cat)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key == OPT_CATALOG && ts_gpu_catalog_load(&cat, p.opts[i].val, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		if (p.opts[i].key == OPT_GPU)
			one = p.opts[i].val;
	}
	if (p.npos) {
		cli_error(ctx, "unexpected argument '%s' (use --gpu SKU)", p.pos[0]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (one && !(g = ts_gpu_find(&cat, one))) {
		cli_error(ctx, "unknown accelerator '%s'; add it with a catalog file (--catalog FILE)", one);
		rc = EXIT_USAGE;
		goto out;
	}
	if (ctx->json) {
		ts_jw_init(&w, &out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.gpus/1");
		ts_jw_key(&w, "gpus");
		ts_jw_arr(&w);
		for (size_t i = 0; i < cat.n; i++)
			if (!g || g == &cat.v[i])
				json_gpu(&w, &cat.v[i]);
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
		ts_sb_addc(&out, '\n');
	} else if (g) {
		text_details(&out, g);
	} else {
		ts_table_col(&t, "sku", NULL, TS_LEFT, 0);
		ts_table_col(&t, "vendor", NULL, TS_LEFT, 0);
		ts_table_col(&t, "fp32", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "tf32", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "bf16", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "fp16", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "fp8", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "int8", "TOPS", TS_RIGHT, 0);
		ts_table_col(&t, "fp4", "TF", TS_RIGHT, 0);
		ts_table_col(&t, "memory", "GiB", TS_RIGHT, 0);
		ts_table_col(&t, "link", "GB/s", TS_RIGHT, 0);
		ts_table_col(&t, "src", NULL, TS_RIGHT, 0);
		for (size_t i = 0; i < cat.n; i++) {
			const struct ts_gpu *e = &cat.v[i];
			ts_table_cell(&t, "%s", e->sku);
			ts_table_cell(&t, "%s", e->vendor);
			for (int k = 0; k < TS_PREC_COUNT; k++)
				peak_cell(&t, &e->peak[k]);
			ts_table_cell(&t, "%.0f", (double)e->memory_bytes / (1 << 30));
			if (e->link_bytes_per_s > 0)
				ts_table_cell(&t, "%.0f", e->link_bytes_per_s / 1e9);
			else
				ts_table_cell(&t, "?");
			ts_table_cell(&t, "[%zu]", i + 1);
		}
		ts_table_render(&t, &out, 0);
		ts_sb_adds(&out, "\nDense peaks per GPU (sparsity never counted); '-' not supported,"
			   " '?' not published (supply it with --peak-tflops or --catalog FILE).\n"
			   "Sources:\n");
		for (size_t i = 0; i < cat.n; i++)
			ts_sb_addf(&out, "  [%zu] %s: %s\n", i + 1, cat.v[i].sku, cat.v[i].source);
	}
	rc = cli_emit(ctx, &out);
out:
	ts_gpu_catalog_release(&cat);
	ts_table_release(&t);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_gpus = {
	.name = "gpus",
	.stage = STAGE_MEASURE,
	.summary = "List the accelerator peak catalog (dense TFLOP/s by precision) with sources",
	.usage = "gpus [--gpu SKU] [--catalog FILE]",
	.description =
		"Prints the built-in catalog of NVIDIA, AMD and Moore Threads accelerators:\n"
		"dense peak TFLOP/s per precision, memory, intra-node link, and the source of\n"
		"every number. Values nobody has published are shown as unknown, never guessed.\n"
		"--catalog FILE merges a user catalog (format in docs/mfu.md) over it.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
