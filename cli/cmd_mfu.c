/*
 * cmd_mfu.c - `trainscope mfu`: model FLOPs, TFLOP/s/GPU, MFU and HFU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "memplan.h"
#include "trainscope/flops.h"
#include "trainscope/gpus.h"
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/model.h"
#include "trainscope/table.h"

enum {
	OPT_MODEL = 1, OPT_FROM_LOG, OPT_SEQ, OPT_GBS, OPT_GPUS, OPT_TP, OPT_PP, OPT_VPP,
	OPT_VOCAB_DIV, OPT_MTP, OPT_SEQ_LENS, OPT_STEP_TIME, OPT_GPU, OPT_PRECISION,
	OPT_PEAK, OPT_CATALOG, OPT_FORMULA, OPT_RECOMPUTE, OPT_RC_METHOD, OPT_RC_LAYERS,
	OPT_RC_MODULES, OPT_LOGGED, OPT_LAYERS, OPT_HIDDEN, OPT_HEADS, OPT_KV_HEADS,
	OPT_HEAD_DIM, OPT_FFN, OPT_VOCAB, OPT_EXPERTS, OPT_TOPK, OPT_MOE_FFN, OPT_SHARED_FFN,
	OPT_FIRST_DENSE, OPT_MOE_FREQ, OPT_SWIGLU, OPT_NO_SWIGLU, OPT_GATE
};

static const struct cli_opt opts[] = {
	{ "model", 'm', "FILE", "Hugging Face config.json of the model", OPT_MODEL },
	{ "from-log", 0, "FILE", "model and shape from a Megatron log's arguments block", OPT_FROM_LOG },
	{ "seq", 0, "N", "sequence length in tokens", OPT_SEQ },
	{ "gbs", 0, "N", "global batch size in sequences", OPT_GBS },
	{ "gpus", 0, "N", "GPUs in the job (Megatron world size)", OPT_GPUS },
	{ "tp", 0, "N", "tensor-parallel size (vocab padding; default 1)", OPT_TP },
	{ "pp", 0, "N", "pipeline-parallel size (block recompute; default 1)", OPT_PP },
	{ "vpp", 0, "N", "virtual pipeline stages per rank (block recompute; default 1)", OPT_VPP },
	{ "vocab-divisor", 0, "N", "make-vocab-size-divisible-by (default 128)", OPT_VOCAB_DIV },
	{ "mtp", 0, "N", "multi-token-prediction depth (default: the model's; torchtitan: none)", OPT_MTP },
	{ "seq-lens", 0, "FILE", "packed sub-sequence lengths of one step ('LEN' or 'LEN COUNT' lines)", OPT_SEQ_LENS },
	{ "step-time", 0, "S", "seconds per training step (steady state)", OPT_STEP_TIME },
	{ "gpu", 0, "SKU", "accelerator for the peak (see 'trainscope gpus')", OPT_GPU },
	{ "precision", 0, "P", "peak precision: bf16 (default), fp16, fp8, fp4, tf32, fp32", OPT_PRECISION },
	{ "peak-tflops", 0, "X", "dense peak TFLOP/s per GPU (overrides the catalog)", OPT_PEAK },
	{ "catalog", 0, "FILE", "user GPU catalog (JSON) that overrides and extends the built-in one", OPT_CATALOG },
	{ "formula", 0, "NAME", "mlm2026 (current, default), mlm2024, mlm2023, mt-megatronlm, torchtitan, torchtitan-headdims, torchtitan-dim", OPT_FORMULA },
	{ "recompute", 0, "G", "activation recompute: full or selective (for HFU)", OPT_RECOMPUTE },
	{ "recompute-method", 0, "M", "full recompute method: uniform (default) or block", OPT_RC_METHOD },
	{ "recompute-num-layers", 0, "N", "block recompute: layers per pipeline chunk", OPT_RC_LAYERS },
	{ "recompute-modules", 0, "LIST", "selective modules: core_attn,mla_up_proj,mlp,moe,shared_experts,layernorm,moe_act", OPT_RC_MODULES },
	{ "logged-tflops", 0, "X", "TFLOP/s/GPU the run logged: recompute and flag a > 1 % mismatch (exit 1)", OPT_LOGGED },
	{ "layers", 0, "N", "override: decoder layers", OPT_LAYERS },
	{ "hidden", 0, "N", "override: hidden size", OPT_HIDDEN },
	{ "heads", 0, "N", "override: attention heads", OPT_HEADS },
	{ "kv-heads", 0, "N", "override: key/value heads (query groups)", OPT_KV_HEADS },
	{ "head-dim", 0, "N", "override: head dimension (kv channels)", OPT_HEAD_DIM },
	{ "ffn-hidden", 0, "N", "override: dense MLP width", OPT_FFN },
	{ "vocab", 0, "N", "override: tokenizer vocabulary (before padding)", OPT_VOCAB },
	{ "experts", 0, "N", "override: routed experts (0 = dense)", OPT_EXPERTS },
	{ "topk", 0, "N", "override: experts per token", OPT_TOPK },
	{ "moe-ffn-hidden", 0, "N", "override: routed expert width", OPT_MOE_FFN },
	{ "shared-ffn-hidden", 0, "N", "override: total shared-expert width", OPT_SHARED_FFN },
	{ "first-k-dense", 0, "N", "override: leading dense layers", OPT_FIRST_DENSE },
	{ "moe-layer-freq", 0, "N", "override: every N-th layer is MoE", OPT_MOE_FREQ },
	{ "swiglu", 0, NULL, "override: gated (SwiGLU) MLP", OPT_SWIGLU },
	{ "no-swiglu", 0, NULL, "override: plain two-GEMM MLP", OPT_NO_SWIGLU },
	{ "attention-output-gate", 0, NULL, "override: gated attention output", OPT_GATE },
	{ 0 }
};

/* Everything the command gathered from files and flags. */
struct mfu_run {
	struct ts_model model;
	struct ts_model_args args;
	struct ts_flops_shape shape;
	struct ts_seqlens lens;
	struct ts_gpu_catalog cat;
	const char *model_path, *log_path, *lens_path, *gpu_name, *catalog_path;
	int formula, precision;
	int64_t gpus;
	int64_t step_ns;
	double peak_flag, logged;
	int has_peak_flag, has_logged;
	const struct ts_gpu *gpu;
	double peak;
	const char *peak_source, *peak_note;
};

static int parse_modules(struct cli_ctx *ctx, const char *s, int *out)
{
	*out = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		int bit = ts_recompute_module_parse(s, n);
		if (!bit) {
			cli_error(ctx, "--recompute-modules: unknown module '%.*s' (known: core_attn,"
				  " mla_up_proj, mlp, moe, shared_experts, layernorm, moe_act)", (int)n, s);
			return EXIT_USAGE;
		}
		*out |= bit;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int model_flag(struct cli_ctx *ctx, const struct cli_arg *a, struct ts_model *m)
{
	long long v;
	int64_t *dst = NULL;
	int rc;

	switch (a->key) {
	case OPT_LAYERS: dst = &m->layers; break;
	case OPT_HIDDEN: dst = &m->hidden; break;
	case OPT_HEADS: dst = &m->heads; break;
	case OPT_KV_HEADS: dst = &m->kv_heads; break;
	case OPT_HEAD_DIM: dst = &m->head_dim; break;
	case OPT_FFN: dst = &m->ffn_hidden; break;
	case OPT_VOCAB: dst = &m->vocab; m->padded_vocab = 0; break;
	case OPT_EXPERTS: dst = &m->num_experts; break;
	case OPT_TOPK: dst = &m->topk; break;
	case OPT_MOE_FFN: dst = &m->moe_ffn_hidden; break;
	case OPT_SHARED_FFN: dst = &m->shared_ffn_hidden; break;
	case OPT_FIRST_DENSE: dst = &m->first_k_dense; break;
	case OPT_MOE_FREQ: dst = &m->moe_layer_freq; m->freq_list_len = 0; break;
	case OPT_SWIGLU:
	case OPT_NO_SWIGLU:
		m->gated_mlp = a->key == OPT_SWIGLU;
		m->gated_mlp_set = 1;
		return 0;
	case OPT_GATE:
		m->attn_output_gate = 1;
		return 0;
	default:
		return 0;
	}
	/* 0 is "none" for experts, shared experts and leading dense layers;
	 * any other width or count of 0 would read as "not stated" and be
	 * filled in by the model's defaults */
	if ((rc = cli_int(ctx, a, a->key == OPT_EXPERTS || a->key == OPT_SHARED_FFN ||
				  a->key == OPT_FIRST_DENSE ? 0 : 1, 1LL << 26, &v)))
		return rc;
	*dst = v;
	return 0;
}

/* Files first (config, then the log's arguments block), then flags; the
 * model values its defaults fill in are warned in wn, and a TP the heads
 * do not split into, or a layout the GPUs do not hold, is an error. */
static int gather(struct cli_ctx *ctx, const struct cli_parsed *p, struct mfu_run *r,
		  struct ts_warnings *wn)
{
	struct ts_err err;
	long long v;
	int rc;

	ts_err_init(&err);
	for (size_t i = 0; i < p->nopts; i++) {
		const struct cli_arg *a = &p->opts[i];
		if (a->key == OPT_MODEL)
			r->model_path = a->val;
		else if (a->key == OPT_FROM_LOG)
			r->log_path = a->val;
	}
	if (r->model_path && (rc = ts_model_read_config(&r->model, r->model_path, &err)))
		return cli_fail(ctx, &err);
	if (r->log_path) {
		struct ts_model from_log;
		ts_model_init(&from_log);
		if ((rc = ts_model_read_megatron_args(&from_log, &r->args, r->log_path, &err)))
			return cli_fail(ctx, &err);
		if (!r->model_path)
			r->model = from_log;
	}
	ts_flops_shape_from_args(&r->shape, &r->args);
	r->gpus = r->args.world_size;

	for (size_t i = 0; i < p->nopts; i++) {
		const struct cli_arg *a = &p->opts[i];
		switch (a->key) {
		case OPT_SEQ:
			if ((rc = cli_int(ctx, a, 1, 1LL << 30, &v)))
				return rc;
			r->shape.seq = v;
			break;
		case OPT_GBS:
			if ((rc = cli_int(ctx, a, 1, 1LL << 40, &v)))
				return rc;
			r->shape.gbs = v;
			break;
		case OPT_GPUS:
			if ((rc = cli_int(ctx, a, 1, 1LL << 30, &v)))
				return rc;
			r->gpus = v;
			break;
		case OPT_TP:
		case OPT_PP:
		case OPT_VPP:
			if ((rc = cli_int(ctx, a, 1, 1 << 20, &v)))
				return rc;
			if (a->key == OPT_TP)
				r->shape.tp = v;
			else if (a->key == OPT_PP)
				r->shape.pp = v;
			else
				r->shape.vpp = v;
			break;
		case OPT_VOCAB_DIV:
			if ((rc = cli_int(ctx, a, 1, 1 << 20, &v)))
				return rc;
			r->shape.vocab_divisor = v;
			break;
		case OPT_MTP:
			if ((rc = cli_int(ctx, a, 0, 64, &v)))
				return rc;
			r->shape.mtp = v;
			break;
		case OPT_SEQ_LENS:
			r->lens_path = a->val;
			break;
		case OPT_STEP_TIME:
			if (ts_num_fixed(a->val, strlen(a->val), 9, &r->step_ns) || r->step_ns <= 0) {
				cli_error(ctx, "--step-time: expected seconds > 0, got '%s'", a->val);
				return EXIT_USAGE;
			}
			break;
		case OPT_GPU:
			r->gpu_name = a->val;
			break;
		case OPT_PRECISION:
			r->precision = ts_precision_parse(a->val);
			if (r->precision < 0) {
				cli_error(ctx, "--precision: unknown precision '%s' (fp32, tf32, bf16,"
					  " fp16, fp8, int8, fp4)", a->val);
				return EXIT_USAGE;
			}
			break;
		case OPT_PEAK:
			if ((rc = cli_double(ctx, a, 1e-6, 1e9, &r->peak_flag)))
				return rc;
			r->has_peak_flag = 1;
			break;
		case OPT_CATALOG:
			r->catalog_path = a->val;
			break;
		case OPT_FORMULA:
			r->formula = ts_formula_parse(a->val);
			if (r->formula < 0) {
				cli_error(ctx, "--formula: unknown formula '%s' (mlm2026, mlm2024, mlm2023,"
					  " mt-megatronlm, torchtitan, torchtitan-headdims, torchtitan-dim)", a->val);
				return EXIT_USAGE;
			}
			break;
		case OPT_RECOMPUTE:
			if (strcmp(a->val, "full") == 0)
				r->shape.recompute = TS_RC_FULL;
			else if (strcmp(a->val, "selective") == 0)
				r->shape.recompute = TS_RC_SELECTIVE;
			else if (strcmp(a->val, "none") == 0)
				r->shape.recompute = TS_RC_NONE;
			else {
				cli_error(ctx, "--recompute: expected full, selective or none, got '%s'", a->val);
				return EXIT_USAGE;
			}
			break;
		case OPT_RC_METHOD:
			if (strcmp(a->val, "uniform") == 0)
				r->shape.recompute_method = TS_RC_UNIFORM;
			else if (strcmp(a->val, "block") == 0)
				r->shape.recompute_method = TS_RC_BLOCK;
			else {
				cli_error(ctx, "--recompute-method: expected uniform or block, got '%s'", a->val);
				return EXIT_USAGE;
			}
			break;
		case OPT_RC_LAYERS:
			if ((rc = cli_int(ctx, a, 1, TS_MODEL_MAX_LAYERS, &v)))
				return rc;
			r->shape.recompute_layers = v;
			break;
		case OPT_RC_MODULES:
			if ((rc = parse_modules(ctx, a->val, &r->shape.recompute_modules)))
				return rc;
			break;
		case OPT_LOGGED:
			if ((rc = cli_double(ctx, a, 0, 1e9, &r->logged)))
				return rc;
			r->has_logged = 1;
			break;
		default:
			if ((rc = model_flag(ctx, a, &r->model)))
				return rc;
		}
	}
	if (r->lens_path) {
		if ((rc = ts_seqlens_read(&r->lens, r->lens_path, &err)))
			return cli_fail(ctx, &err);
		r->shape.packed = &r->lens;
	}
	if (r->model.family[0] == '\0')
		memcpy(r->model.family, "custom", 7);
	mp_model_assumed(&r->model, r->model_path ? r->model_path : r->log_path ? r->log_path :
			 "the model flags", wn);
	ts_model_unmodelled(&r->model, r->model_path ? r->model_path : r->log_path ? r->log_path :
			    "the model flags", wn);
	if ((rc = ts_model_finish(&r->model, &err))) {
		cli_error(ctx, "%s%s%s", r->model_path ? r->model_path : "",
			  r->model_path ? ": " : "", err.msg);
		return cli_exit_for(rc);
	}
	{
		int64_t tp = r->shape.tp > 0 ? r->shape.tp : 1, pp = r->shape.pp > 0 ? r->shape.pp : 1;

		if (ts_model_check_tp(&r->model, tp, &err))
			return cli_fail(ctx, &err);
		if (pp > r->model.layers) {
			cli_error(ctx, "--pp %lld is more than the %lld layers", (long long)pp,
				  (long long)r->model.layers);
			return EXIT_USAGE;
		}
		if (r->gpus > 0 && r->gpus % (tp * pp)) {
			cli_error(ctx, "TP*PP = %lld does not divide the %lld GPUs", (long long)(tp * pp),
				  (long long)r->gpus);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* The peak: --peak-tflops, else the catalog entry at --precision. */
static int resolve_peak(struct cli_ctx *ctx, struct mfu_run *r)
{
	struct ts_err err;

	ts_err_init(&err);
	if (r->catalog_path && ts_gpu_catalog_load(&r->cat, r->catalog_path, &err))
		return cli_fail(ctx, &err);
	if (r->gpu_name) {
		r->gpu = ts_gpu_find(&r->cat, r->gpu_name);
		if (!r->gpu) {
			cli_error(ctx, "--gpu: unknown accelerator '%s'; 'trainscope gpus' lists the"
				  " catalog, or give the peak with --peak-tflops X or a catalog file"
				  " (--catalog FILE)", r->gpu_name);
			return EXIT_USAGE;
		}
	}
	if (r->has_peak_flag) {
		r->peak = r->peak_flag;
		r->peak_source = "--peak-tflops (user-supplied)";
		return 0;
	}
	if (r->gpu) {
		if (ts_gpu_peak(r->gpu, r->precision, &r->peak, &r->peak_source, &err))
			return cli_fail(ctx, &err);
		r->peak_note = r->gpu->peak[r->precision].note;
	}
	return 0;
}

static const char *gran_name(int g)
{
	return g == TS_RC_FULL ? "full" : g == TS_RC_SELECTIVE ? "selective" : "none";
}

static const char *formula_desc(int f)
{
	switch (f) {
	case TS_FORMULA_CURRENT:
		return "Megatron-LM main: causal attention halving, dense/MoE layer split, MTP, MLA";
	case TS_FORMULA_MLM2024:
		return "Megatron-LM 2024 (e116d81 + shared experts): non-causal attention, every layer MoE with ffn_hidden_size";
	case TS_FORMULA_MLM2023:
		return "Megatron-LM 2023 (2748e7c): 60BsLh^2(...), f = 4h assumed";
	case TS_FORMULA_MT:
		return "MT-MegatronLM musa_patch: non-causal attention, every layer MoE, router GEMM counted, no MTP";
	case TS_FORMULA_TITAN:
		return "torchtitan: 6 x active parameters (a tied head once, no input embedding) + 6 n (d_qk + d_v) s per token per layer, non-causal, MTP only with --mtp";
	case TS_FORMULA_TITAN_HEADDIMS:
		return "torchtitan get_*_model_nparams_and_flops(head_dims): as torchtitan, a tied head not counted, no MTP";
	default:
		return "torchtitan get_num_flop_per_token: as torchtitan-headdims, attention d = hidden / heads";
	}
}

/* What a logged number matches: formula versions and common config slips. */
struct variant {
	char what[128];
	double tflops, diff_pct;
};

static int explain(const struct mfu_run *r, double logged, struct variant *out, int max)
{
	int n = 0;

	for (int f = 0; f < TS_FORMULA_COUNT; f++) {
		for (int k = 0; k < 3 && n < max; k++) {
			struct ts_flops_shape sh = r->shape;
			struct ts_flops fl;
			struct ts_mfu mm;
			struct ts_err err;
			const char *what = "as configured";
			/* torchtitan takes MTP from --mtp only and an unpadded vocabulary */
			if (k > 0 && ts_formula_is_titan(f))
				continue;
			if (k == 1) {
				if (r->model.mtp_layers == 0 && r->shape.mtp <= 0)
					continue;
				sh.mtp = 0;
				what = "without MTP";
			} else if (k == 2) {
				if (r->model.padded_vocab ||
				    ts_model_padded_vocab(&r->model, sh.vocab_divisor > 0 ? sh.vocab_divisor : 128,
							  sh.tp > 0 ? sh.tp : 1) == r->model.vocab)
					continue;
				sh.tp = 1;
				sh.vocab_divisor = 1;
				what = "unpadded vocabulary";
			}
			if (ts_flops_compute(&r->model, &sh, f, &fl, &err))
				continue;
			ts_mfu_compute(&fl, r->step_ns, r->gpus, 0, &mm);
			double d = (mm.tflops_per_gpu - logged) / logged * 100;
			if (fabs(d) <= 1.0) {
				snprintf(out[n].what, sizeof(out[n].what), "formula %s, %s",
					 ts_formula_name(f), what);
				out[n].tflops = mm.tflops_per_gpu;
				out[n].diff_pct = d;
				n++;
			}
		}
	}
	return n;
}

static void fmt_flops(char *buf, size_t size, double v)
{
	static const char *const unit[] = { "", "K", "M", "G", "T", "P", "E", "Z" };
	int u = 0;

	while (fabs(v) >= 1000 && u < 7) {
		v /= 1000;
		u++;
	}
	snprintf(buf, size, "%.3f %sFLOP", v, unit[u]);
}

static void render_text(struct cli_ctx *ctx, const struct mfu_run *r, const struct ts_flops *fl,
			const struct ts_mfu *mm, int has_time, struct ts_sb *out)
{
	const struct ts_model *m = &r->model;
	struct ts_table t;
	char a[64], b[64];

	ts_sb_addf(out, "model        %s (%s): L=%lld h=%lld heads=%lld kv=%lld ffn=%lld",
		   m->family, r->model_path ? r->model_path : r->log_path ? r->log_path : "flags",
		   (long long)m->layers, (long long)m->hidden, (long long)m->heads,
		   (long long)m->kv_heads, (long long)m->ffn_hidden);
	if (m->num_experts)
		ts_sb_addf(out, " experts=%lld top%lld moe_ffn=%lld shared=%lld moe_layers=%lld",
			   (long long)m->num_experts, (long long)m->topk, (long long)m->moe_ffn_hidden,
			   (long long)m->shared_ffn_hidden, (long long)m->moe_layers);
	if (m->mla)
		ts_sb_adds(out, " MLA");
	ts_sb_addf(out, " vocab=%lld->%lld mtp=%lld\n", (long long)m->vocab,
		   (long long)fl->padded_vocab, (long long)fl->mtp);
	mp_params_str(m, a, sizeof(a));
	ts_sb_addf(out, "params       %s (the model's vocabulary, MTP excluded)\n", a);
	ts_sb_addf(out, "FLOPs        useful model FLOPs (no recompute), formula %s: %s\n",
		   ts_formula_name(fl->formula), formula_desc(fl->formula));
	ts_sb_addf(out, "shape        seq %lld, gbs %lld, %.0f tokens/step%s, TP %lld\n",
		   (long long)r->shape.seq, (long long)r->shape.gbs, fl->tokens,
		   r->shape.packed && !fl->packed_ignored ? " (packed: real tokens)" : "",
		   (long long)(r->shape.tp > 0 ? r->shape.tp : 1));
	if (fl->packed_ignored)
		ts_sb_adds(out, "note         this formula version ignores packed lengths (uses gbs x seq)\n");
	ts_sb_addc(out, '\n');

	ts_table_init(&t);
	ts_table_col(&t, "term", NULL, TS_LEFT, 0);
	ts_table_col(&t, "per step", "FLOP", TS_RIGHT, 0);
	ts_table_col(&t, "per token", "GFLOP", TS_RIGHT, 0);
	ts_table_col(&t, "share", "%", TS_RIGHT, 0);
	if (r->shape.recompute)
		ts_table_col(&t, "recompute", "FLOP", TS_RIGHT, 0);
	for (int i = 0; i < TS_FT_COUNT; i++) {
		if (fl->term[i] == 0 && fl->recompute_term[i] == 0)
			continue;
		ts_table_cell(&t, "%s", ts_flops_term_name(i));
		ts_table_cell(&t, "%.4e", fl->term[i]);
		ts_table_cell(&t, "%.3f", fl->term[i] / fl->tokens / 1e9);
		ts_table_cell(&t, "%.1f", fl->term[i] / fl->per_step * 100);
		if (r->shape.recompute)
			ts_table_cell(&t, "%.4e", fl->recompute_term[i]);
	}
	ts_table_cell(&t, "total");
	ts_table_cell(&t, "%.4e", fl->per_step);
	ts_table_cell(&t, "%.3f", fl->per_token / 1e9);
	ts_table_cell(&t, "100.0");
	if (r->shape.recompute)
		ts_table_cell(&t, "%.4e", fl->recompute);
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addc(out, '\n');

	fmt_flops(a, sizeof(a), fl->per_token);
	fmt_flops(b, sizeof(b), fl->per_step);
	ts_sb_addf(out, "per token    %s\nper step     %s\n", a, b);
	if (r->shape.recompute) {
		fmt_flops(a, sizeof(a), fl->per_step + fl->recompute);
		ts_sb_addf(out, "executed     %s per step (hardware FLOPs: + %s recompute", a,
			   gran_name(r->shape.recompute));
		if (r->shape.recompute == TS_RC_FULL)
			ts_sb_addf(out, ", %lld layers", (long long)fl->recomputed_layers);
		ts_sb_adds(out, ")\n");
	}
	if (has_time) {
		ts_sb_addf(out, "step time    %.6g s on %lld GPUs\n", mm->step_s, (long long)r->gpus);
		ts_sb_addf(out, "throughput   %.2f TFLOP/s/GPU (model)   %.1f tokens/s/GPU\n",
			   mm->tflops_per_gpu, mm->tokens_per_s_per_gpu);
		if (r->shape.recompute)
			ts_sb_addf(out, "             %.2f TFLOP/s/GPU (hardware, with recompute)\n",
				   mm->hw_tflops_per_gpu);
	}
	if (r->peak > 0) {
		ts_sb_addf(out, "peak         %s %s dense %.6g TFLOP/s/GPU (source: %s%s%s)\n",
			   r->gpu ? r->gpu->sku : "user", ts_precision_name(r->precision), r->peak,
			   r->peak_source, r->peak_note ? "; " : "", r->peak_note ? r->peak_note : "");
		if (has_time) {
			char pct[32];
			ts_fmt_pct(pct, sizeof(pct), mm->mfu * 100);
			ts_sb_addf(out, "%sMFU          %s %%%s\n", cli_style(ctx, "bold"), pct,
				   cli_style(ctx, "reset"));
			ts_fmt_pct(pct, sizeof(pct), mm->hfu * 100);
			if (r->shape.recompute)
				ts_sb_addf(out, "HFU          %s %%\n", pct);
		}
	}
}

static void render_json(const struct mfu_run *r, const struct ts_flops *fl,
			const struct ts_mfu *mm, int has_time, const struct variant *vars,
			int nvars, double mismatch, const struct ts_warnings *warn, struct ts_sb *out)
{
	const struct ts_model *m = &r->model;
	struct ts_jw w;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.mfu/1");
	ts_jw_kstr(&w, "flop_definition", "useful_model_flops");
	ts_jw_kstr(&w, "formula", ts_formula_name(fl->formula));
	ts_jw_key(&w, "model");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "family", m->family);
	ts_jw_kstr(&w, "source", r->model_path ? r->model_path : r->log_path);
	ts_jw_ki64(&w, "layers", m->layers);
	ts_jw_ki64(&w, "hidden", m->hidden);
	ts_jw_ki64(&w, "heads", m->heads);
	ts_jw_ki64(&w, "kv_heads", m->kv_heads);
	ts_jw_ki64(&w, "head_dim", m->head_dim);
	ts_jw_ki64(&w, "ffn_hidden", m->ffn_hidden);
	ts_jw_ki64(&w, "vocab", m->vocab);
	ts_jw_ki64(&w, "padded_vocab", fl->padded_vocab);
	ts_jw_ki64(&w, "experts", m->num_experts);
	ts_jw_ki64(&w, "topk", m->topk);
	ts_jw_ki64(&w, "moe_ffn_hidden", m->moe_ffn_hidden);
	ts_jw_ki64(&w, "shared_ffn_hidden", m->shared_ffn_hidden);
	ts_jw_ki64(&w, "moe_layers", m->moe_layers);
	ts_jw_kbool(&w, "mla", m->mla);
	if (m->mla) {
		ts_jw_ki64(&w, "q_lora_rank", m->q_lora_rank);
		ts_jw_ki64(&w, "kv_lora_rank", m->kv_lora_rank);
		ts_jw_ki64(&w, "qk_head_dim", m->qk_head_dim);
		ts_jw_ki64(&w, "qk_rope_head_dim", m->qk_rope_dim);
		ts_jw_ki64(&w, "v_head_dim", m->v_head_dim);
	}
	ts_jw_kbool(&w, "gated_mlp", m->gated_mlp);
	ts_jw_ki64(&w, "mtp_layers", fl->mtp);
	mp_params_json(&w, m);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "shape");
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "seq", r->shape.seq);
	ts_jw_ki64(&w, "gbs", r->shape.gbs);
	ts_jw_ki64(&w, "tp", r->shape.tp > 0 ? r->shape.tp : 1);
	ts_jw_ki64(&w, "vocab_divisor", r->shape.vocab_divisor > 0 ? r->shape.vocab_divisor : 128);
	ts_jw_kbool(&w, "packed", r->shape.packed != NULL && !fl->packed_ignored);
	if (r->gpus > 0)
		ts_jw_ki64(&w, "gpus", r->gpus);
	ts_jw_obj_end(&w);
	ts_jw_kf64(&w, "tokens_per_step", fl->tokens);
	ts_jw_kf64(&w, "flops_per_token", fl->per_token);
	ts_jw_kf64(&w, "flops_per_step", fl->per_step);
	ts_jw_key(&w, "terms_flops_per_step");
	ts_jw_obj(&w);
	for (int i = 0; i < TS_FT_COUNT; i++)
		ts_jw_kf64(&w, ts_flops_term_name(i), fl->term[i]);
	ts_jw_obj_end(&w);
	if (r->shape.recompute) {
		ts_jw_key(&w, "recompute");
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "granularity", gran_name(r->shape.recompute));
		if (r->shape.recompute == TS_RC_FULL)
			ts_jw_ki64(&w, "layers", fl->recomputed_layers);
		ts_jw_kf64(&w, "flops_per_step", fl->recompute);
		ts_jw_kf64(&w, "hardware_flops_per_step", fl->per_step + fl->recompute);
		ts_jw_obj_end(&w);
	}
	if (has_time) {
		ts_jw_ki64(&w, "step_time_ns", r->step_ns);
		ts_jw_ki64(&w, "gpus", r->gpus);
		ts_jw_kf64(&w, "tflops_per_gpu", mm->tflops_per_gpu);
		ts_jw_kf64(&w, "tokens_per_s_per_gpu", mm->tokens_per_s_per_gpu);
		if (r->shape.recompute)
			ts_jw_kf64(&w, "hw_tflops_per_gpu", mm->hw_tflops_per_gpu);
	}
	if (r->peak > 0) {
		ts_jw_kstr(&w, "gpu", r->gpu ? r->gpu->sku : NULL);
		ts_jw_kstr(&w, "precision", ts_precision_name(r->precision));
		ts_jw_kbool(&w, "peak_dense", 1);
		ts_jw_kf64(&w, "peak_tflops", r->peak);
		ts_jw_kstr(&w, "peak_source", r->peak_source);
		if (has_time) {
			ts_jw_kf64(&w, "mfu", mm->mfu);
			if (r->shape.recompute)
				ts_jw_kf64(&w, "hfu", mm->hfu);
		}
	}
	if (r->has_logged) {
		ts_jw_key(&w, "logged_check");
		ts_jw_obj(&w);
		ts_jw_kf64(&w, "logged_tflops", r->logged);
		ts_jw_kf64(&w, "recomputed_tflops", mm->tflops_per_gpu);
		ts_jw_kf64(&w, "mismatch_pct", mismatch);
		ts_jw_kbool(&w, "match", fabs(mismatch) <= 1.0);
		ts_jw_key(&w, "explained_by");
		ts_jw_arr(&w);
		for (int i = 0; i < nvars; i++) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "variant", vars[i].what);
			ts_jw_kf64(&w, "tflops", vars[i].tflops);
			ts_jw_kf64(&w, "diff_pct", vars[i].diff_pct);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
	}
	ts_warnings_json(&w, warn, warn->v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/*
 * The command's warnings, computed once for text and JSON: the logged
 * number does not match the recomputed one (mismatch_pct beyond 1 %), the
 * formula version ignores --seq-lens. Returns 0 or TS_ENOMEM.
 */
static int mfu_warnings(const struct mfu_run *r, const struct ts_flops *fl,
			const struct ts_mfu *mm, double mismatch, struct ts_warnings *warn)
{
	int rc = 0;

	if (r->has_logged && fabs(mismatch) > 1.0)
		rc |= ts_warnings_add(warn, "logged-tflops-mismatch", NULL, -1, TS_NO_INT,
				      "logged %.5g TFLOP/s/GPU differs from the recomputed %.5g by "
				      "%+.2f %%", r->logged, mm->tflops_per_gpu, mismatch);
	if (fl->packed_ignored)
		rc |= ts_warnings_add(warn, "packed-lengths-ignored", r->lens_path, -1, TS_NO_INT,
				      "formula %s ignores the packed lengths of %s: tokens are gbs x seq",
				      ts_formula_name(fl->formula), r->lens_path);
	return rc ? TS_ENOMEM : 0;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct mfu_run *r = NULL;
	struct ts_flops fl;
	struct ts_mfu mm;
	struct ts_err err;
	struct ts_sb out;
	struct ts_warnings warn;
	struct variant vars[16];
	int nvars = 0, has_time, rc = cli_parse(ctx, argc, argv, &p);
	double mismatch = 0;

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_sb_init(&out);
	ts_err_init(&err);
	ts_warnings_init(&warn);
	memset(&mm, 0, sizeof(mm));
	r = calloc(1, sizeof(*r));
	if (!r || ts_gpu_catalog_init(&r->cat)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	ts_model_init(&r->model);
	ts_model_args_init(&r->args);
	ts_flops_shape_init(&r->shape);
	r->precision = TS_PREC_BF16;
	if (p.npos) {
		cli_error(ctx, "unexpected argument '%s'", p.pos[0]);
		fprintf(stderr, "hint: trainscope mfu --model config.json --seq N --gbs N --gpus N --step-time S --gpu SKU\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = gather(ctx, &p, r, &warn)) || (rc = resolve_peak(ctx, r)))
		goto out;
	if ((rc = ts_flops_compute(&r->model, &r->shape, r->formula, &fl, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	has_time = r->step_ns > 0;
	if (has_time && r->gpus <= 0) {
		cli_error(ctx, "--step-time needs the GPU count (--gpus N)");
		rc = EXIT_USAGE;
		goto out;
	}
	if (has_time) {
		ts_mfu_compute(&fl, r->step_ns, r->gpus, r->peak, &mm);
		if (ts_mfu_check(&mm, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (r->has_logged) {
		if (!has_time) {
			cli_error(ctx, "--logged-tflops needs the step time (--step-time S) and --gpus");
			rc = EXIT_USAGE;
			goto out;
		}
		if (r->logged <= 0) {
			cli_error(ctx, "--logged-tflops: expected a value > 0");
			rc = EXIT_USAGE;
			goto out;
		}
		mismatch = (mm.tflops_per_gpu - r->logged) / r->logged * 100;
		if (fabs(mismatch) > 1.0)
			nvars = explain(r, r->logged, vars, 16);
	}
	if (mfu_warnings(r, &fl, &mm, mismatch, &warn)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	if (ctx->json) {
		render_json(r, &fl, &mm, has_time, vars, nvars, mismatch, &warn, &out);
	} else {
		render_text(ctx, r, &fl, &mm, has_time, &out);
		if (r->has_logged) {
			ts_sb_addf(&out, "logged       %.5g TFLOP/s/GPU: recomputed %.5g differs by %+.2f %%%s\n",
				   r->logged, mm.tflops_per_gpu, mismatch,
				   fabs(mismatch) > 1.0 ? " (> 1 %: config or formula version mismatch)" : "");
			for (int i = 0; i < nvars; i++)
				ts_sb_addf(&out, "             explained by %s: %.5g TFLOP/s/GPU (%+.2f %%)\n",
					   vars[i].what, vars[i].tflops, vars[i].diff_pct);
			if (fabs(mismatch) > 1.0 && nvars == 0)
				ts_sb_adds(&out, "             no formula version or vocab/MTP variant explains it:"
					   " check layers, widths, gbs, seq and the GPU count\n");
		}
	}
	if ((rc = cli_emit(ctx, &out)))
		goto out;
	for (size_t i = 0; i < warn.v.n; i++)
		cli_warn(ctx, "%s", warn.v.v[i].message);
	if (r->has_logged && fabs(mismatch) > 1.0)
		rc = EXIT_GATE;
out:
	ts_warnings_release(&warn);
	if (r)
		ts_gpu_catalog_release(&r->cat);
	free(r);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_mfu = {
	.name = "mfu",
	.stage = STAGE_MEASURE,
	.summary = "Model FLOPs (Megatron-exact), TFLOP/s/GPU, MFU and HFU against a named peak",
	.usage = "mfu --model FILE|--from-log FILE --seq N --gbs N --gpus N [--tp N] [--step-time S] [--gpu SKU] [options]",
	.description =
		"Counts useful model FLOPs per token and per step exactly as Megatron-LM does\n"
		"(dense, GQA, gated MLP, MoE top-k with shared experts and dense-first layers,\n"
		"MLA, MTP, vocab padding to divisor x TP, causal halving, packed sequences), with\n"
		"a per-term breakdown. --formula reproduces older Megatron versions and the\n"
		"MT-MegatronLM fork. With --step-time and --gpus it reports TFLOP/s/GPU and\n"
		"tokens/s/GPU; with --gpu (or --peak-tflops) MFU against the named dense peak;\n"
		"with --recompute also the executed hardware FLOPs and HFU. --logged-tflops checks\n"
		"a logged number and names the formula or config that explains a mismatch\n"
		"(exit 1 when it differs by more than 1 %). An unknown peak is an error: supply\n"
		"it with --peak-tflops or --catalog FILE. Formulas: docs/mfu.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
