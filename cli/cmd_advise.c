/*
 * cmd_advise.c - `trainscope advise RUN_DIR`: the candidate changes for
 * the run's dominant wall, for the vendor its trace came from.
 */
#include <stdio.h>
#include <string.h>
#include "diagnose_cli.h"
#include "trainscope/jsonw.h"

enum { OPT_WALL = 1, OPT_VENDOR, OPT_MOE };

static const struct cli_opt opts[] = {
	{ "wall", 0, "WALL", "advise for this wall instead of diagnosing (data, straggler, "
	  "communication, host, memory, compute)", OPT_WALL },
	{ "vendor", 0, "VENDOR", "with --wall: cuda, rocm, musa or cpu", OPT_VENDOR },
	{ "moe", 0, NULL, "with --wall: the model is a mixture of experts (adds the MoE "
	  "candidates; a run shows it by num_experts or MoE kernels)", OPT_MOE },
	{ 0 }
};

static int parse_wall(const char *s, enum ts_wall *out)
{
	for (int w = 0; w < TS_WALL_COUNT; w++)
		if (!strcmp(s, ts_wall_name((enum ts_wall)w))) {
			*out = (enum ts_wall)w;
			return 0;
		}
	if (!strcmp(s, "comm")) {
		*out = TS_WALL_COMM;
		return 0;
	}
	return -1;
}

static int parse_vendor(const char *s, enum ts_vendor_kind *out)
{
	static const enum ts_vendor_kind all[] = { TS_DIAG_VENDOR_CPU, TS_DIAG_VENDOR_CUDA,
						   TS_DIAG_VENDOR_ROCM, TS_DIAG_VENDOR_MUSA };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, ts_diag_vendor_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -1;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_diag d;
	struct ts_runmodel rm;
	struct ts_sb out;
	const char *wall_s = NULL, *vendor_s = NULL;
	int moe = 0;
	enum ts_wall wall = TS_WALL_COMPUTE;
	enum ts_vendor_kind vendor = TS_DIAG_VENDOR_UNKNOWN;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_diag_init(&d);
	ts_runmodel_init(&rm);
	ts_sb_init(&out);
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key == OPT_WALL)
			wall_s = p.opts[i].val;
		else if (p.opts[i].key == OPT_VENDOR)
			vendor_s = p.opts[i].val;
		else if (p.opts[i].key == OPT_MOE)
			moe = 1;
	}
	if (wall_s && parse_wall(wall_s, &wall)) {
		cli_error(ctx, "--wall: unknown wall '%s'", wall_s);
		fprintf(stderr, "hint: data, straggler, communication, host, memory or compute\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (vendor_s && parse_vendor(vendor_s, &vendor)) {
		cli_error(ctx, "--vendor: unknown vendor '%s' (cuda, rocm, musa, cpu)", vendor_s);
		rc = EXIT_USAGE;
		goto out;
	}
	if (moe && !wall_s) {
		cli_error(ctx, "--moe goes with --wall (a run shows whether its model is MoE)");
		rc = EXIT_USAGE;
		goto out;
	}
	if (wall_s) {
		if (p.npos) {
			cli_error(ctx, "give either --wall or a run, not both");
			rc = EXIT_USAGE;
			goto out;
		}
		d.wall_known = 1;
		d.wall = wall;
		d.moe_evidence = moe ? "--moe" : NULL;
		if (ts_diag_advise(&d, 1, wall, vendor)) {
			cli_error(ctx, "out of memory");
			rc = EXIT_INTERNAL;
			goto out;
		}
	} else if ((rc = diag_run(ctx, &d, &rm, p.pos, p.npos))) {
		goto out;
	} else {
		vendor = ts_diag_vendor(&d);
	}
	if (ctx->json) {
		struct ts_jw w;
		ts_jw_init(&w, &out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.advise/1");
		ts_jw_kstr(&w, "wall", d.wall_known ? ts_wall_name(d.wall) : NULL);
		ts_jw_kstr(&w, "vendor", ts_diag_vendor_name(vendor));
		ts_jw_kstr(&w, "moe_evidence", d.moe_evidence);
		ts_jw_key(&w, "advice");
		ts_jw_arr(&w);
		for (size_t i = 0; i < d.advice.n; i++) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "title", d.advice.v[i].title);
			ts_jw_kstr(&w, "detail", d.advice.v[i].detail);
			ts_jw_kstr(&w, "status", "candidate: test with trainscope ab");
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_warnings_json(&w, &rm.warnings, rm.warnings.v.n);
		ts_jw_obj_end(&w);
		ts_sb_addc(&out, '\n');
	} else {
		ts_sb_addf(&out, "vendor: %s\n", ts_diag_vendor_name(vendor));
		ts_diag_text(&d, &out, 1);
		if (rm.warnings.v.n)
			ts_sb_addc(&out, '\n');
		ts_warnings_text(&out, &rm.warnings, rm.warnings.v.n, cli_style(ctx, "yellow"),
				 cli_style(ctx, "reset"));
	}
	rc = cli_emit(ctx, &out);
out:
	ts_sb_release(&out);
	ts_diag_release(&d);
	ts_runmodel_release(&rm);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_advise = {
	.name = "advise",
	.stage = STAGE_RETUNE,
	.summary = "Candidate changes for a run's dominant wall, specific to its vendor",
	.usage = "advise [options] RUN_DIR|FILE... | advise --wall WALL [--vendor VENDOR] [--moe]",
	.description =
		"Diagnoses the run (as `trainscope diagnose`) and lists, for its dominant wall,\n"
		"the candidate changes of the playbook that apply to the vendor in the trace\n"
		"(CUDA or MUSA: flash attention by architecture, NCCL/MCCL settings, CUDA/MUSA\n"
		"graphs, recompute, data-loader workers and pinned memory, torch.compile).\n"
		"MoE knobs (expert parallelism, token dispatcher, grouped GEMM, router fusion)\n"
		"only when the run shows an MoE model: num_experts in its model config or its\n"
		"Megatron arguments, or MoE kernels in its trace (--moe with --wall). Every\n"
		"entry is a candidate to measure with `trainscope ab`, one variable at a time -\n"
		"never a default to apply.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
