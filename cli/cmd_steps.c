/*
 * cmd_steps.c - `trainscope steps`: how fast is it really?
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trainscope/jsonw.h"
#include "trainscope/logs.h"
#include "trainscope/run.h"

enum { OPT_WINDOW = 1, OPT_GBS, OPT_SEQ, OPT_GPUS, OPT_CSV, OPT_STRICT };

static const struct cli_opt opts[] = {
	{ "window", 0, "FIRST:LAST", "declare the steady window (iterations, inclusive; FIRST-LAST also)", OPT_WINDOW },
	{ "gbs", 0, "N", "global batch size in sequences (default: from the log)", OPT_GBS },
	{ "seq", 0, "N", "sequence length in tokens (enables tokens/s)", OPT_SEQ },
	{ "gpus", 0, "N", "GPUs in the job (enables tokens/s/GPU)", OPT_GPUS },
	{ "csv", 0, NULL, "print the step series as CSV instead of the summary", OPT_CSV },
	{ "strict", 0, NULL, "reject unusable step times (NaN, infinite, negative, absurd) instead of ignoring them", OPT_STRICT },
	{ 0 }
};

/* One row per record and rank; window and outlier say where its
 * iteration stands to the run's window and which outlier it is; then the
 * record's phase times (ms, empty when the log has none), one column per
 * phase named as ts_phase_name() with '-' as '_'. */
static void render_csv(const struct ts_runmodel *rm, struct ts_sb *out)
{
	const struct ts_steplog *log = &rm->log;
	char buf[40];

	ts_sb_adds(out, "iteration,rank,step_time_ms,loss,grad_norm,learning_rate,loss_scale,"
			"tflops_per_gpu,energy_j_per_gpu,power_w_per_gpu,skipped,nan,tokens,bucket,"
			"window,outlier");
	for (int k = 0; k < TS_PHASE_COUNT; k++) {
		ts_sb_addc(out, ',');
		for (const char *c = ts_phase_name(k); *c; c++)
			ts_sb_addc(out, *c == '-' ? '_' : *c);
		ts_sb_adds(out, "_ms");
	}
	ts_sb_addc(out, '\n');
	for (size_t i = 0; i < log->steps.n; i++) {
		const struct ts_step *s = &log->steps.v[i];
		const double f[7] = { s->loss, s->grad_norm, s->lr, s->loss_scale, s->tflops,
				      s->energy_j, s->power_w };
		const int64_t ints[4] = { s->skipped, s->nan_iters, s->tokens, s->bucket };
		const struct ts_outlier *o;

		ts_sb_addf(out, "%lld,", (long long)s->iteration);
		if (s->rank >= 0)
			ts_sb_addf(out, "%d", s->rank);
		ts_sb_addc(out, ',');
		if (s->step_ns != TS_NO_INT)
			ts_sb_addf(out, "%.6f", (double)s->step_ns / 1e6);
		for (int k = 0; k < 7; k++) {
			ts_sb_addc(out, ',');
			if (!isnan(f[k]) || (k == 0 && (s->flags & TS_STEP_LOSS_NONFINITE))) {
				ts_fmt_f64(buf, sizeof(buf), f[k]);
				ts_sb_adds(out, isfinite(f[k]) ? buf : isnan(f[k]) ? "nan" :
						f[k] > 0 ? "inf" : "-inf");
			}
		}
		for (int k = 0; k < 4; k++) {
			ts_sb_addc(out, ',');
			if (ints[k] != TS_NO_INT)
				ts_sb_addf(out, "%lld", (long long)ints[k]);
		}
		o = ts_steps_outlier_at(&rm->steps, s->iteration);
		ts_sb_addf(out, ",%s,%s", ts_runmodel_step_window(rm, s->iteration),
			   o ? ts_outlier_reason_name(o->reason) : "");
		for (int k = 0; k < TS_PHASE_COUNT; k++) {
			ts_sb_addc(out, ',');
			if (s->phase_ns[k] != TS_NO_INT)
				ts_sb_addf(out, "%.6f", (double)s->phase_ns[k] / 1e6);
		}
		ts_sb_addc(out, '\n');
	}
}

static int parse_window(struct cli_ctx *ctx, const char *v, struct ts_steps_opts *o)
{
	if (ts_window_parse(v, &o->window_first, &o->window_last) == 0)
		return 0;
	cli_error(ctx, "--window: expected FIRST:LAST or FIRST-LAST with 1 <= FIRST <= LAST "
		  "(iterations), got '%s'", v);
	return EXIT_USAGE;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_runmodel rm;
	struct ts_runmodel_opts o;
	struct ts_err err;
	struct ts_sb out;
	int csv = 0;
	long long v;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_runmodel_init(&rm);
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_runmodel_opts_init(&o);
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];

		switch (a->key) {
		case OPT_WINDOW:
			rc = parse_window(ctx, a->val, &o.steps);
			break;
		case OPT_GBS:
			rc = cli_int(ctx, a, 1, 1LL << 40, &v);
			o.steps.gbs = v;
			break;
		case OPT_SEQ:
			rc = cli_int(ctx, a, 1, 1LL << 40, &v);
			o.steps.seq = v;
			break;
		case OPT_GPUS:
			rc = cli_int(ctx, a, 1, 1LL << 30, &v);
			o.steps.gpus = v;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		case OPT_STRICT:
			o.strict = 1;
			break;
		}
		if (rc)
			goto out;
	}
	if (p.npos == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope steps LOG|METRICS.jsonl|RUN_DIR...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (ts_runmodel_load(&rm, p.pos, p.npos, &o, 1, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (csv) {
		render_csv(&rm, &out);
		/* a CSV has no place for them: the run's warnings (the text's
		 * and the JSON's) go to stderr, as every other output carries
		 * them */
		for (size_t i = 0; i < rm.warnings.v.n; i++)
			if (rm.warnings.v.v[i].line > 0)
				cli_warn(ctx, "%s (line %lld)", rm.warnings.v.v[i].message,
					 (long long)rm.warnings.v.v[i].line);
			else
				cli_warn(ctx, "%s", rm.warnings.v.v[i].message);
	} else if (ctx->json) {
		struct ts_jw w;

		ts_jw_init(&w, &out, 1);
		ts_steps_json(&w, &rm, 1);
		ts_sb_addc(&out, '\n');
	} else {
		struct ts_text_style st = { cli_style(ctx, "bold"), cli_style(ctx, "reset"),
					    cli_style(ctx, "yellow") };

		ts_steps_text(&out, &rm, &st);
	}
	rc = cli_emit(ctx, &out);
out:
	ts_runmodel_release(&rm);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_steps = {
	.name = "steps",
	.stage = STAGE_MEASURE,
	.summary = "Steady-state step time, stalls and loss health from training logs",
	.usage = "steps [options] LOG|METRICS.jsonl|RUN_DIR...",
	.description =
		"Reads Megatron-LM (any era), Megatron Bridge, NeMo 2, Hugging Face Trainer, AMD\n"
		"Primus and MT-MegatronLM logs and JSONL metrics, judged by content; several\n"
		"files are several ranks. A run directory contributes its per-rank JSONL metrics\n"
		"when it has them, else its logs; a NaN loss or NaN counter that its logs print\n"
		"counts in the loss health either way.\n"
		"\n"
		"The steady window drops iteration 1 (or the --log-interval record holding it)\n"
		"and the warm-up found by MSER-5, and stops at a level shift (PELT); --window\n"
		"FIRST:LAST declares it instead. On the window: median, mean, p10, p90, CV and,\n"
		"from 10 steps on, a 95 % CI of the mean that stays honest when\n"
		"steps are autocorrelated (batch means, else a moving-block bootstrap). Stalls are\n"
		"steps far above a moving median (robust z > 3.5); a periodic pattern (a data\n"
		"loader or checkpoint every k steps) is reported with its period, phase and share\n"
		"of the run's time. Per-phase times (JSONL data_ms, fwd_ms, bwd_ms, opt_ms, comm_ms;\n"
		"Megatron --timing-log-level timers; DeepSpeed wall_clock_breakdown timers) get\n"
		"means with CIs, and stalls are also\n"
		"looked for on each phase series, where a data-loader stall stands out. Loss\n"
		"health: one verdict (finite, non-finite, missing) with its first iteration and\n"
		"cause, from NaN/Inf losses, extra losses and grad norms, NaN counters and a loss\n"
		"that stops being logged; skipped iterations, loss and grad-norm spikes, final\n"
		"loss. Memory per rank, the slowest rank, bucket mixtures.\n"
		"\n"
		"--csv prints the parsed series (one row per record and rank) for plotting; its\n"
		"window column says whether the row's iteration is in the window or why not\n"
		"(first-iteration, warm-up, non-finite, skipped, ...), outlier its outlier reason,\n"
		"and data_ms ... comm_ms the record's phase times (empty where the log has none).",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
