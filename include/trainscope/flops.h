/*
 * flops.h - model FLOPs per training step exactly as Megatron-LM counts
 * them, the older formula versions needed to reproduce logged numbers,
 * the re-executed FLOPs of activation recompute (for HFU), and MFU/HFU.
 *
 * Units: FLOPs are plain floating-point operation counts held in doubles
 * (a DeepSeek-V3 step is about 1.7e19, beyond int64); one multiply-add is 2
 * FLOPs; every count includes forward + weight-gradient + data-gradient
 * passes (the "6" of 6ND). Time is integer nanoseconds. Rates are
 * TFLOP/s = 1e12 FLOP/s per GPU.
 *
 * Formulas and their sources are written out in docs/mfu.md; the symbols
 * follow ../shared/reference/flops-memory-workflow.md section 1.
 */
#ifndef TRAINSCOPE_FLOPS_H
#define TRAINSCOPE_FLOPS_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/model.h"

enum ts_formula {
	TS_FORMULA_CURRENT = 0, /* Megatron-LM main (2025-03 causal halving .. 2026-05 THD) */
	TS_FORMULA_MLM2024,     /* e116d81 (2024-03) + shared experts (2024-09): non-causal, every layer MoE */
	TS_FORMULA_MLM2023,     /* 2748e7c (2023-11): 60·B·s·L·h²(...), f = 4h assumed */
	TS_FORMULA_MT,          /* MooreThreads/MT-MegatronLM musa_patch (core_r0.9.0) */
	TS_FORMULA_TITAN,       /* torchtitan (get_nparams_and_active_nparams): 6 x active
				 * parameters, a tied head counted once, + 6 n (d_qk + d_v) s
				 * per token per layer; GQA and MLA, MTP layers the job builds */
	TS_FORMULA_TITAN_HEADDIMS, /* torchtitan get_*_model_nparams_and_flops(.., head_dims, ..):
				 * a tied head not counted, no MTP */
	TS_FORMULA_TITAN_DIM,   /* torchtitan get_num_flop_per_token and the first
				 * get_*_model_nparams_and_flops: as HEADDIMS with the
				 * attention's d = floor(h / n) */
	TS_FORMULA_COUNT
};

/* "mlm2026", "mlm2024", "mlm2023", "mt-megatronlm", "torchtitan",
 * "torchtitan-headdims", "torchtitan-dim". */
const char *ts_formula_name(int formula);
/* Accepts the names above and "current", "2026", "2025", "2024", "2023",
 * "mt", "titan" (case-insensitive). -1 when unknown. */
int ts_formula_parse(const char *s);
/* 1 for the torchtitan formulas (parameter counts, unpadded vocabulary,
 * B s tokens), 0 for Megatron's. */
int ts_formula_is_titan(int formula);

/* Per-term breakdown. MTP holds everything its layers, glue and extra
 * output heads cost; the other terms cover the main decoder only. */
enum ts_flops_term {
	TS_FT_ATTN_PROJ = 0, /* QKV (+gate) and output projections, MLA down/up projections */
	TS_FT_CORE_ATTN,     /* QK^T and PV (causal halving in the current formula) */
	TS_FT_DENSE_MLP,     /* dense-layer MLPs */
	TS_FT_ROUTED,        /* routed experts: top-k x expert MLP */
	TS_FT_SHARED,        /* shared experts */
	TS_FT_ROUTER,        /* router GEMM h x E (MT-MegatronLM only; Megatron does not count it) */
	TS_FT_LOGITS,        /* output layer h x V */
	TS_FT_MTP,           /* multi-token prediction layers, eh-projection, norms, heads */
	TS_FT_COUNT
};

/* "attn_proj", "core_attn", "dense_mlp", "routed_experts", "shared_experts",
 * "router", "logits", "mtp". */
const char *ts_flops_term_name(int term);

/* Packed (THD) sequences of one step: T = sum L_i, S2 = sum L_i^2. */
struct ts_seqlens {
	double tokens;   /* T */
	double square;   /* S2 */
	int64_t count;   /* sub-sequences */
	int64_t max_len;
};

/*
 * Read sub-sequence lengths of one global batch: one length per line, or
 * "LENGTH COUNT" histogram lines; blank lines and '#' comments allowed.
 * TS_EPARSE (file, offset, line) for anything else; at most 2^40 tokens.
 */
int ts_seqlens_read(struct ts_seqlens *out, const char *path, struct ts_err *err);
int ts_seqlens_parse(struct ts_seqlens *out, const void *data, size_t n, const char *name,
		     struct ts_err *err);

/* The training shape and recompute settings of one step. */
struct ts_flops_shape {
	int64_t seq;             /* s, --seq-length (required) */
	int64_t gbs;             /* B, global batch in sequences (required) */
	int64_t tp;              /* tensor parallel size (vocab padding); 0 -> 1 */
	int64_t pp, vpp;         /* pipeline / virtual stages (block recompute); 0 -> 1 */
	int64_t vocab_divisor;   /* make-vocab-size-divisible-by; 0 -> 128 */
	int64_t mtp;             /* MTP depth D; -1 -> the model's (torchtitan: none) */
	const struct ts_seqlens *packed; /* THD: real tokens and S2; NULL = BSHD */
	int recompute;           /* enum ts_recompute_granularity */
	int recompute_method;    /* enum ts_recompute_method (full); unset = uniform */
	int64_t recompute_layers;/* --recompute-num-layers (block: per pipeline chunk) */
	int recompute_modules;   /* enum ts_recompute_module bits (selective); 0 -> core_attn */
};

void ts_flops_shape_init(struct ts_flops_shape *sh);
/* The shape a Megatron arguments block states (seq, gbs, tp, pp, vpp,
 * vocab divisor, recompute): what it does not state stays as it was. */
void ts_flops_shape_from_args(struct ts_flops_shape *sh, const struct ts_model_args *a);

struct ts_flops {
	int formula;
	double tokens;           /* T per step */
	double square;           /* S2 per step */
	int64_t padded_vocab;    /* V used */
	int64_t mtp;             /* D used */
	int packed_ignored;      /* packed lengths given but this formula uses B·s */
	double term[TS_FT_COUNT];/* FLOPs per step */
	double per_step;         /* model FLOPs per step, F */
	double per_token;        /* F / T */
	double recompute;        /* re-executed forward FLOPs per step, F_rc (0 without recompute) */
	double recompute_term[TS_FT_COUNT];
	int64_t recomputed_layers; /* full recompute: decoder layers recomputed */
};

/*
 * Model FLOPs of one step of m (finished) under shape sh with a formula.
 * TS_EUSAGE when seq/gbs are missing or a recompute setting does not fit
 * the model (block recompute with L not divisible by PP*VPP).
 *
 * The torchtitan formulas count parameters as torchtitan's model does
 * (docs/mfu.md): per layer the attention projections (GQA h(q + 2k) + q h,
 * + q + 2k biases, + 2d q/k norm weights with m->qk_norm; MLA wq or
 * wq_a/q_norm/wq_b, wkv_a, kv_norm, wkv_b, wo) + 2h norm weights in
 * attn_proj, the MLP or the MoE (router h E, shared experts, routed experts
 * at K of E) in its terms, the output head h V + the final norm h in
 * logits (the older versions: the final norm only when the head is tied);
 * the input embedding is not counted; the vocabulary is the model's,
 * unpadded; core_attn is 6 n (d_qk + d_v) s per token per layer (no causal
 * halving); T = B s (packed lengths ignored). MTP only with the current
 * version and sh->mtp > 0 (torchtitan builds MTP layers when its job asks,
 * not from the model's config).
 */
int ts_flops_compute(const struct ts_model *m, const struct ts_flops_shape *sh, int formula,
		     struct ts_flops *out, struct ts_err *err);

/* Throughput and utilisation for one step time. */
struct ts_mfu {
	double step_s;
	double tflops_per_gpu;        /* F / (t · 1e12 · W): Megatron's logged number */
	double hw_tflops_per_gpu;     /* (F + F_rc) / (t · 1e12 · W) */
	double tokens_per_s_per_gpu;  /* T / (t · W) */
	double mfu;                   /* tflops_per_gpu / peak (0..1); NaN without a peak */
	double hfu;                   /* hw_tflops_per_gpu / peak; NaN without a peak */
};

/*
 * step_ns > 0, gpus >= 1; peak_tflops <= 0 leaves mfu/hfu NaN.
 */
void ts_mfu_compute(const struct ts_flops *f, int64_t step_ns, int64_t gpus, double peak_tflops,
		    struct ts_mfu *out);

/*
 * The invariant of a utilisation: MFU or HFU above 100 % of the peak is
 * impossible, so the inputs are wrong (most often the step time's unit, or
 * the GPU count). Returns 0, or TS_EUSAGE with err saying so
 * ("... check --step-time units").
 */
int ts_mfu_check(const struct ts_mfu *m, struct ts_err *err);

#endif
