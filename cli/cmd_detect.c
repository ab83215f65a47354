/*
 * cmd_detect.c - `trainscope detect`: what each input is, by content.
 */
#include <stdio.h>
#include "cli.h"
#include "trainscope/detect.h"
#include "trainscope/jsonw.h"
#include "trainscope/nsys.h"
#include "trainscope/paths.h"
#include "trainscope/run.h"
#include "trainscope/table.h"

enum { OPT_DEPTH = 1 };

static const struct cli_opt opts[] = {
	{ "depth", 0, "N", "descend N levels into directories (default 2)", OPT_DEPTH },
	{ 0 }
};

/* Schema and product version of an nsys export ("" when absent); an
 * export that does not open (cut, damaged) is ts_nsys_open's error in err. */
static int nsys_versions(const char *path, char *schema, char *product, struct ts_err *err)
{
	struct ts_nsys x;
	int rc;

	ts_nsys_init(&x);
	schema[0] = product[0] = 0;
	rc = ts_nsys_open(&x, path, err);
	if (!rc) {
		snprintf(schema, 32, "%s", x.schema);
		snprintf(product, 64, "%s", x.product);
	}
	ts_nsys_close(&x);
	return rc;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_paths files;
	struct ts_err err;
	struct ts_sb out, notes;   /* notes: a line per nsys export under the table */
	struct ts_jw w;
	struct ts_table t;
	struct ts_warnings warn;
	long long depth = 2;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_paths_init(&files);
	ts_sb_init(&out);
	ts_sb_init(&notes);
	ts_table_init(&t);
	ts_warnings_init(&warn);
	ts_err_init(&err);
	for (size_t i = 0; i < p.nopts; i++)
		if (p.opts[i].key == OPT_DEPTH && (rc = cli_int(ctx, &p.opts[i], 0, 16, &depth)))
			goto out;
	if (p.npos == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope detect FILE|DIR...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < p.npos; i++)
		if (ts_paths_add(&files, p.pos[i], (int)depth, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	if (files.n == 0) {
		cli_error(ctx, "no files found in the inputs");
		rc = EXIT_USAGE;
		goto out;
	}

	ts_jw_init(&w, &out, 1);
	if (ctx->json) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.detect/1");
		ts_jw_key(&w, "files");
		ts_jw_arr(&w);
	} else {
		ts_table_col(&t, "file", NULL, TS_LEFT, 0);
		ts_table_col(&t, "kind", NULL, TS_LEFT, 0);
		ts_table_col(&t, "vendor", NULL, TS_LEFT, 0);
		ts_table_col(&t, "gzip", NULL, TS_LEFT, 0);
		ts_table_col(&t, "size", "bytes", TS_RIGHT, 0);
	}
	for (size_t i = 0; i < files.n; i++) {
		struct ts_detect d;
		char why[TS_ERR_MSG_MAX + TS_ERR_PATH_MAX] = "";
		char schema[32] = "", product[64] = "";

		if (ts_detect_file(files.v[i], &d, &err)) {
			/* say why, and go on: every readable file is still listed */

			ts_err_format(&err, why, sizeof(why));
			rc = cli_fail(ctx, &err);
			ts_warnings_add(&warn, "unreadable-input", files.v[i], err.offset, TS_NO_INT,
					"%s cannot be read (%s).", files.v[i], why);
			if (ctx->json) {
				ts_jw_obj(&w);
				ts_jw_kstr(&w, "file", files.v[i]);
				ts_jw_kstr(&w, "kind", "unreadable");
				ts_jw_kstr(&w, "error", why);
				ts_jw_obj_end(&w);
			} else {
				ts_table_cell(&t, "%s", files.v[i]);
				ts_table_cell(&t, "unreadable");
				ts_table_cell(&t, "-");
				ts_table_cell(&t, "-");
				ts_table_cell(&t, "-");
			}
			ts_err_init(&err);
			continue;
		}
		if (d.kind == TS_KIND_NSYS_SQLITE &&
		    nsys_versions(files.v[i], schema, product, &err)) {
			/* the table still lists it; the exit and a warning say it
			 * does not read */
			ts_err_format(&err, why, sizeof(why));
			rc = cli_fail(ctx, &err);
			ts_warnings_add(&warn, "unreadable-input", files.v[i], err.offset, TS_NO_INT,
					"%s is an Nsight Systems export that cannot be read (%s).", files.v[i], why);
			ts_err_init(&err);
		}
		if (ctx->json) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "file", files.v[i]);
			ts_jw_kstr(&w, "kind", ts_kind_name(d.kind));
			ts_jw_kstr(&w, "vendor", d.vendor[0] ? d.vendor : NULL);
			ts_jw_kbool(&w, "gzip", d.gzip);
			ts_jw_ki64(&w, "size_bytes", d.bytes);
			if (d.kind == TS_KIND_NSYS_SQLITE) {
				ts_jw_kstr(&w, "nsys_schema_version", schema[0] ? schema : NULL);
				ts_jw_kstr(&w, "nsys_product_version", product[0] ? product : NULL);
			}
			ts_jw_obj_end(&w);
		} else {
			ts_table_cell(&t, "%s", files.v[i]);
			ts_table_cell(&t, "%s", ts_kind_name(d.kind));
			ts_table_cell(&t, "%s", d.vendor[0] ? d.vendor : "-");
			ts_table_cell(&t, "%s", d.gzip ? "yes" : "no");
			ts_table_cell(&t, "%lld", (long long)d.bytes);
			if (d.kind == TS_KIND_NSYS_SQLITE && why[0])
				ts_sb_addf(&notes, "%s: Nsight Systems export that cannot be read (%s)\n",
					   files.v[i], why);
			else if (d.kind == TS_KIND_NSYS_SQLITE)
				ts_sb_addf(&notes, "%s: Nsight Systems export, schema %s, nsys %s\n", files.v[i],
					   schema[0] ? schema : "unknown", product[0] ? product : "unknown");
		}
	}
	if (ctx->json) {
		ts_jw_arr_end(&w);
		ts_warnings_json(&w, &warn, warn.v.n);
		ts_jw_obj_end(&w);
	} else {
		ts_table_render(&t, &out, 0);
		ts_sb_add(&out, notes.buf, notes.len);
	}
	{
		int emit = cli_emit(ctx, &out);

		rc = emit ? emit : rc;
	}
out:
	ts_warnings_release(&warn);
	ts_table_release(&t);
	ts_sb_release(&notes);
	ts_sb_release(&out);
	ts_paths_release(&files);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_detect = {
	.name = "detect",
	.stage = STAGE_INPUTS,
	.summary = "Say what each input file is, judged by its content",
	.usage = "detect [options] FILE|DIR...",
	.description =
		"Classifies profiler traces (Kineto, legacy, by vendor), Nsight Systems exports,\n"
		"training logs (Megatron-LM, Megatron Bridge, NeMo 2, HF Trainer, Primus), JSONL\n"
		"metrics, model configs, contracts, telemetry and hang logs. File names are never\n"
		"trusted: the first 256 KiB (inflated when gzip) decide. A file that cannot be\n"
		"read is listed as unreadable with the reason (exit 2); the others are still\n"
		"listed.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
