/*
 * memory.h - per-GPU training memory for one parallel layout.
 *
 * Answers "does this layout fit?" before a GPU hour is spent: parameters
 * by class (TP-sharded, replicated, expert-sharded), gradients, optimizer
 * states, activations of the micro-batches in flight for the pipeline
 * schedule, embedding and logits, recompute savings per module, offload,
 * and an allowance for the device context and allocator fragmentation.
 *
 * Three estimators (formulas and sources in docs/memory-plan.md):
 *   TS_MEM_EST_MOE            the default: tensor-by-tensor accounting of
 *                             what Megatron Core saves for backward, per
 *                             pipeline rank, MoE-aware (top-k tokens, shared
 *                             experts, expert-DP optimizer sharding, CP,
 *                             uneven stages, logits on the last stage);
 *   TS_MEM_EST_MEGATRON       Megatron-LM's theoretical formula, current
 *                             main (weights split into TP-sharded,
 *                             replicated and expert classes; both activation
 *                             code paths), to compare with the log line
 *                             "Theoretical memory footprints: ...";
 *   TS_MEM_EST_MEGATRON_014   the same formula as of core_v0.14 (every
 *                             expert charged to every rank, optimizer
 *                             sharded over DP only).
 * The Megatron estimators describe only the first pipeline stage, as
 * Megatron does.
 *
 * Usage:
 *   struct ts_mem_ctx c;
 *   ts_mem_layout_init(&l); l.tp = ...;           (and a finished ts_model)
 *   if (ts_mem_prepare(&c, &model, &l, TS_MEM_EST_MOE, &err)) ...;
 *   ts_mem_stage_eval(&c, rank, &stage)           (any pipeline rank), or
 *   ts_mem_peak(&c, &stage)                       (the most loaded rank)
 * The context keeps a pointer to the model, which must outlive it; it owns
 * no heap memory. All sizes are bytes (doubles: the pipeline factors are
 * fractional; JSON writers round to integers), parameter counts are plain
 * numbers. Nothing here prints.
 */
#ifndef TRAINSCOPE_MEMORY_H
#define TRAINSCOPE_MEMORY_H

#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/model.h"

enum ts_mem_estimator {
	TS_MEM_EST_MOE = 0,
	TS_MEM_EST_MEGATRON,
	TS_MEM_EST_MEGATRON_014
};

/* "moe-aware", "megatron", "megatron-0.14"; parse accepts the same (-1 if unknown). */
const char *ts_mem_estimator_name(int est);
int ts_mem_estimator_parse(const char *s);

enum ts_mem_offload {
	TS_OFFLOAD_OPTIMIZER = 1 << 0,   /* FP32 master weights + Adam moments on the host */
	TS_OFFLOAD_ACTIVATIONS = 1 << 1  /* expert FC1 input and output on the host */
};

/*
 * The recompute modules the estimator prices (bits of enum
 * ts_recompute_module from model.h). TS_MEM_SELECTIVE_ALL is the
 * fine-grained set the MoE paper recommends before full recompute:
 * core_attn, layernorm, moe_act, mla_up_proj, shared_experts.
 */
#define TS_MEM_SELECTIVE_ALL (TS_RCM_CORE_ATTN | TS_RCM_LAYERNORM | TS_RCM_MOE_ACT | \
			      TS_RCM_MLA_UP_PROJ | TS_RCM_SHARED_EXPERTS)

/* One layout and the training knobs that change memory. */
struct ts_mem_layout {
	int64_t tp, pp, vpp, cp, ep, etp; /* vpp 1 = non-interleaved 1F1B */
	int64_t dp;                   /* attention data-parallel size; world = tp*cp*dp*pp */
	int64_t mbs, gbs, seq;        /* micro / global batch (sequences), sequence length (tokens) */
	int64_t vocab_divisor;        /* --make-vocab-size-divisible-by (128) */
	int64_t first_stage_layers;   /* decoder layers on the first virtual stage; -1 = even split */
	int64_t last_stage_layers;    /* decoder layers on the last virtual stage; -1 = even split */
	int recompute;                /* enum ts_recompute_granularity */
	int recompute_method;         /* enum ts_recompute_method (full); unset = uniform */
	int64_t recompute_layers;     /* full: --recompute-num-layers (0 = 1 for uniform, all for block) */
	int recompute_modules;        /* selective: module bits; 0 = core_attn (Megatron's default) */
	int dist_opt;                 /* distributed optimizer (ZeRO-1 over DP) */
	int fsdp;                     /* FSDP / ZeRO-3 (Megatron-FSDP, --use-torch-fsdp2): weights,
				       * gradients and optimizer states sharded over DP*CP (dense)
				       * and expert-DP (experts), plus the unsharded working set */
	int precision;                /* TS_PREC_BF16 or TS_PREC_FP8 (gpus.h) */
	int offload;                  /* enum ts_mem_offload bits */
	int sequence_parallel;
	int dualpipe;                 /* DeepSeek's DualPipe (VPP 1, even PP; moe-aware estimator):
				       * pipeline rank r holds stages r and PP-1-r, so two copies
				       * of the parameters, gradients and optimizer states, and at
				       * the peak PP-h micro-batches of stage h = min(r, PP-1-r)
				       * and h+1 of the other, PP+1 in all (the DeepSeek-V3
				       * report, table 2); needs an even micro-batch count of
				       * at least 2*PP, as DeepSeek's implementation */
	double context_bytes;         /* device context + library workspaces allowance */
	double fragmentation;         /* allocator fragmentation, fraction of the allocated peak */
};

/* Defaults: all sizes 1, seq 4096, vocab divisor 128, even stages, no
 * recompute, distributed optimizer on, BF16, no offload, SP off,
 * context 1 GiB, fragmentation 5 %. */
void ts_mem_layout_init(struct ts_mem_layout *l);

/* Prices of the activation tensors one module's recompute drops, so a report
 * can say what each module saves. Index with ts_mem_module_index(). */
#define TS_MEM_NMODULES 7
/* Module bit -> index 0..TS_MEM_NMODULES-1, or -1. */
int ts_mem_module_index(int bit);

/* The memory of one pipeline rank (one GPU of that stage). */
struct ts_mem_stage {
	int64_t rank;               /* pipeline rank 0..pp-1 */
	int64_t layers;             /* decoder layers held (all virtual chunks) */
	int64_t moe_layers;         /* of which MoE */
	int64_t mtp_layers;         /* MTP layers held (last stage) */
	int embedding;              /* holds the input embedding */
	int output;                 /* holds the output layer and the loss */
	double inflight;            /* micro-batches in flight at the peak, in whole-rank units */

	double params_tp;           /* TP-sharded parameters on this GPU */
	double params_rep;          /* replicated (norms, router, MLA down-projections) */
	double params_exp;          /* routed-expert parameters on this GPU */

	double weights_bytes;       /* BF16 parameters */
	double fp8_cache_bytes;     /* FP8 copies of linear weights (precision fp8) */
	double fsdp_unit_params;    /* FSDP: parameters of the largest unit gathered whole */
	double fsdp_buffer_bytes;   /* FSDP: all-gathered weights and unsharded gradients of
				     * two units (the current one and the prefetched one) */
	double grads_bytes;         /* FP32 main gradients */
	double optimizer_bytes;     /* FP32 master weights + Adam moments on the device */
	double layer_act_bytes;     /* transformer layers x micro-batches in flight */
	double embed_act_bytes;     /* embedding inputs in flight */
	double logits_bytes;        /* final norm, logits, loss (stage holding the output) */
	double transient_bytes;     /* full recompute: one group re-materialised; offload staging */
	double activations_bytes;   /* layer + embedding + logits + transient */
	double allocated_bytes;     /* weights + fp8 cache + fsdp buffers + grads + optimizer + activations */
	double context_bytes;       /* allowance: device context, workspaces */
	double fragmentation_bytes; /* allowance: allocator fragmentation */
	double total_bytes;         /* allocated + allowances: compare with the device */

	double recompute_saved_bytes[TS_MEM_NMODULES]; /* per selective module */
	double full_recompute_saved_bytes;
	double offload_optimizer_bytes;   /* moved to the host */
	double offload_activation_bytes;  /* moved to the host */

	/* Megatron estimators: the two numbers of its log line */
	double mlm_weight_optimizer_bytes;
	double mlm_activation_bytes;
	int mlm_sp_path;            /* 1: the sequence-parallel + selective code path */
};

/* Derived once per layout; treat as opaque. */
struct ts_mem_ctx {
	const struct ts_model *m;
	struct ts_mem_layout l;
	int est;
	int64_t world, edp, micro, vocab, vstages;
	/* parameters per layer, whole (unsharded) */
	double p_att_tp, p_att_rep, p_mlp, p_shared, p_router, p_norms, p_experts;
	double p_linear_dense, p_linear_moe; /* linear weights per GPU per layer type (FP8 cache) */
	/* stored activation bytes per layer per micro-batch on one GPU */
	double a_dense, a_moe, a_input;      /* a_input: the layer input (full recompute keeps it) */
	double a_dense_full, a_moe_full;     /* before recompute/offload: for the transient */
	double a_offload_moe;                /* bytes of an MoE layer moved to the host */
	double save_dense[TS_MEM_NMODULES], save_moe[TS_MEM_NMODULES];
	double a_mtp_extra, a_embed, a_logits;
	int64_t moe_prefix[TS_MODEL_MAX_LAYERS + 1]; /* last: only layers + 1 entries are set */
};

/*
 * Check the layout against the model and derive everything the per-rank
 * evaluation needs. TS_EUSAGE with a message naming the offending flag:
 * a size < 1, heads or query groups not divisible by TP, experts not
 * divisible by EP, world not divisible by ETP*EP*PP, GBS not divisible by
 * MBS*DP, more virtual stages than layers, MoE with TP > 1 without sequence
 * parallelism, stage overrides that do not add up, FSDP with a Megatron
 * estimator (their formulas have no FSDP).
 */
int ts_mem_prepare(struct ts_mem_ctx *c, const struct ts_model *m,
		   const struct ts_mem_layout *l, int est, struct ts_err *err);

/* Memory of pipeline rank `rank` (0 <= rank < pp). The Megatron estimators
 * describe rank 0 whatever rank is asked. */
void ts_mem_stage_eval(const struct ts_mem_ctx *c, int64_t rank, struct ts_mem_stage *out);

/* The rank with the largest total_bytes (lowest rank on ties). */
void ts_mem_peak(const struct ts_mem_ctx *c, struct ts_mem_stage *out);

/* Decoder layers [first, first+count) on virtual stage j (0 <= j < pp*vpp). */
void ts_mem_vstage_layers(const struct ts_mem_ctx *c, int64_t j, int64_t *first, int64_t *count);

/* The two pipeline stages DualPipe's rank r (0 <= r < pp) holds:
 * stage[0] = min(r, pp-1-r), the one it runs PP - stage[0] micro-batches
 * of at the peak, and stage[1] = pp-1-stage[0]. */
void ts_mem_dualpipe_stages(int64_t pp, int64_t r, int64_t stage[2]);

/* Whether DualPipe runs micro micro-batches on pp pipeline stages: with
 * pp > 1 an even count of at least 2*pp (half each way, as DeepSeek's
 * implementation asserts); any count without a pipeline. */
int ts_mem_dualpipe_micro_ok(int64_t pp, int64_t micro);

#endif
