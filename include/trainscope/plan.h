/*
 * plan.h - layout search: every legal parallel layout of a model on N
 * GPUs, its memory for each recompute/offload option, and the Fit-then-
 * Scale rules of the MoE optimisation workflow applied in order.
 *
 * Enumeration (docs/memory-plan.md): TP divides the attention heads (and
 * the query groups) and stays within --max-tp (default: GPUs per node);
 * CP is a power of two with seq/CP >= 1024; PP divides the GPUs and is at
 * most the layer count (uneven stages allowed, the earliest virtual stages
 * taking the extra layer); VPP 1 or 2..8 with PP*VPP <= layers and the
 * micro-batch count a multiple of PP; EP divides the experts; ETP divides
 * TP; parallel folding: ETP*EP divides TP*CP*DP; MBS a power of two up to
 * max_mbs (default 1) with GBS a multiple of MBS*DP. For each parallel layout the memory
 * options are tried in order (none, selective core_attn, fine-grained
 * selective, full, then offload variants); every option is priced and
 * each parallel layout and MBS gives one entry: the first option that
 * fits, or the most frugal one with its shortfall.
 *
 * Rules, applied as a sieve to the layouts that fit (a rule nothing
 * satisfies is waived and reported so):
 *   1 offload last            no offload if any layout fits without it
 *   2 smallest model parallelism  min over layouts of max(TP*CP*PP, ETP*EP*PP):
 *                             the GPUs one copy of a layer's weights spans
 *   3 selective before full   the lightest recompute that fits
 *   4 maximise DP             min TP*CP*PP (DP = GPUs / (TP*CP*PP))
 *   5 TP and EP inside one node   TP <= node and ETP*EP <= node
 *   6 PP with VPP             PP > 1 uses the interleaved schedule
 *   7 EP before ETP           ETP = 1
 *   8 CP only for long sequences  seq/CP >= 4096
 * The step-time model (struct ts_plan_time, docs/memory-plan.md 4.3) prices
 * every layout that fits from its per-layer GEMM shapes on the SKU; the
 * layouts that pass the Fit rules (fits, offload last) are ranked by it,
 * and the Scale rules become explanations and tie-breakers (fewer broken
 * Scale rules, then smaller model parallelism, between equal predicted
 * times). eliminated_by keeps what the sieve says, for the record.
 *
 * Ownership: ts_plan owns its layout array; ts_plan_release() frees it.
 */
#ifndef TRAINSCOPE_PLAN_H
#define TRAINSCOPE_PLAN_H

#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/gpus.h"
#include "trainscope/memory.h"
#include "trainscope/model.h"

enum ts_plan_rule {
	TS_RULE_NONE = 0,        /* survivor */
	TS_RULE_FIT,             /* out of memory */
	TS_RULE_OFFLOAD_LAST,
	TS_RULE_MIN_MP,
	TS_RULE_SELECTIVE_FIRST,
	TS_RULE_MAX_DP,
	TS_RULE_NODE,
	TS_RULE_PP_VPP,
	TS_RULE_EP_BEFORE_ETP,
	TS_RULE_CP_LONG,
	TS_RULE_COUNT
};

/* Short key ("fit", "offload_last", "min_model_parallel", ...) and a sentence. */
const char *ts_plan_rule_key(int rule);
const char *ts_plan_rule_text(int rule);

/* MoE routing: natural (the router decides; the busiest EP rank gets
 * `imbalance` times the mean load) or balanced (forced load balancing,
 * benchmark-only). */
enum ts_routing { TS_ROUTING_NATURAL = 0, TS_ROUTING_BALANCED = 1 };

/* EP token dispatcher: hierarchical (DeepEP / HybridEP: a token crosses the
 * network once per remote node holding one of its experts, then NVLink
 * forwards it) or a flat all-to-all (NCCL: one network copy per remote
 * expert). */
enum ts_dispatcher { TS_DISPATCH_HIER = 0, TS_DISPATCH_ALLTOALL = 1 };

/* Pipeline schedule: Megatron's 1F1B (interleaved when VPP > 1; the
 * bubble is (PP-1)/VPP micro-batches of the busiest rank) or DeepSeek's
 * DualPipe (bidirectional, VPP 1, PP and the micro-batch count even; the
 * bubble (PP/2-1)(F&B + B - 3W) of the DeepSeek-V3 report's table 2, and
 * the pipeline sends hidden behind computation). */
enum ts_schedule { TS_SCHED_1F1B = 0, TS_SCHED_DUALPIPE = 1 };

/* Core attention kernel: fused (flash / cuDNN fused attention: scores stay
 * on chip) or unfused (the s x s scores and probabilities go through HBM). */
enum ts_attention_kind { TS_ATTN_FUSED = 0, TS_ATTN_UNFUSED = 1 };

/* CUDA graphs (Megatron's --cuda-graph-impl / --cuda-graph-scope): what
 * part of the per-layer fixed cost (launches, host syncs) they remove.
 * none: Megatron's default; moe: transformer_engine graphs of the
 * moe_router and moe_preprocess scopes (the MoE layer's extra fixed cost,
 * its router and dispatcher preprocessing with their host sync, is gone);
 * attn_moe: those plus the attn scope (half of every layer's launches
 * too: the attention half of the layer, a stated assumption); full:
 * full_iteration graphs (no per-layer launch cost left). */
enum ts_cuda_graphs { TS_GRAPHS_NONE = 0, TS_GRAPHS_MOE = 1, TS_GRAPHS_ATTN_MOE = 2, TS_GRAPHS_FULL = 3 };
/* "none", "moe", "attn_moe", "full"; parse returns -1 for anything else
 * (also accepts Megatron's scope spellings "moe_router,moe_preprocess",
 * "attn,moe_router,moe_preprocess" and "full_iteration"). */
const char *ts_plan_graphs_name(int g);
int ts_plan_graphs_parse(const char *s, size_t n);

/*
 * The constants of the step-time model fitted on the published cases
 * (../shared/data/expected/layout-cases.csv; procedure, values and the
 * leave-one-out error in docs/memory-plan.md). ts_plan_calib_init() sets
 * the fitted values.
 */
struct ts_plan_calib {
	double gemm_eff;         /* fraction of the dense peak a large, wave-aligned GEMM reaches */
	double attn_eff;         /* fraction of the BF16 peak fused attention reaches at long sequences */
	double layer_latency_s;  /* fixed cost per layer per micro-batch (fwd+bwd): launches,
				  * syncs; an MoE layer (router, permute, dispatcher) costs twice */
	double expert_half_rows; /* grouped expert GEMMs reach half of gemm_eff at this many
				  * rows (tokens) per expert: small per-expert GEMMs are slow */
	double imbalance;        /* natural routing: busiest EP rank's load / mean (>= 1) */
	double ep_net_factor;    /* the hierarchical EP dispatcher's network throughput over
				  * the link rate, for the bytes counted (docs/memory-plan.md
				  * 4.4: the fit puts it above 1, so the count over-states
				  * what crosses the network; other collectives: 0.8) */
	double log_sigma;        /* leave-one-out RMS of ln(predicted/measured): the uncertainty */
};
void ts_plan_calib_init(struct ts_plan_calib *c);

struct ts_plan_opts {
	int64_t gpus;            /* world size */
	int64_t gpus_per_node;   /* fast-link domain (NVLink / MTLink) */
	int64_t seq, gbs;        /* tokens, sequences */
	double capacity_bytes;   /* device memory */
	double peak_flops;       /* dense peak per GPU at the training precision, FLOP/s */
	double intra_bw;         /* bytes/s per GPU per direction inside a node */
	double inter_bw;         /* bytes/s per GPU per direction across nodes */
	int precision;           /* TS_PREC_BF16 or TS_PREC_FP8 */
	int est;                 /* memory estimator */
	int64_t max_tp;          /* 0 = gpus_per_node */
	int64_t max_mbs;         /* default 1: every calibration case runs MBS 1 (docs/memory-plan.md 4.3) */
	int64_t max_vpp;         /* default 8; deeper only when it divides L/PP (ts_plan_vpp_searched) */
	double context_bytes;    /* allowance per GPU (memory.h) */
	double fragmentation;
	double peak_bf16;        /* BF16 dense peak: attention and logits stay BF16 under FP8;
				  * 0 = peak_flops (BF16) or peak_flops / 2 (FP8) */
	double mem_bw;           /* device memory bandwidth, bytes/s (catalog); 0 = roofline off */
	int64_t sms;             /* streaming multiprocessors (wave quantisation); 0 = 132 */
	int routing;             /* enum ts_routing (default natural) */
	double imbalance;        /* natural routing imbalance; 0 = the calibrated one */
	int moe_overlap;         /* EP all-to-all overlapped with the other micro-batch's compute */
	int dispatcher;          /* enum ts_dispatcher (default hierarchical) */
	int tp_overlap;          /* TP/SP collectives overlapped with the layer's GEMMs (--tp-comm-overlap) */
	int schedule;            /* enum ts_schedule (default 1F1B); DualPipe: the search keeps VPP 1,
				  * even PP and an even micro-batch count */
	int attention;           /* enum ts_attention_kind (default fused) */
	int cuda_graphs;         /* enum ts_cuda_graphs (default none, Megatron's default) */
	int fsdp;                /* FSDP / ZeRO-3 memory (memory.h) and its parameter traffic */
	struct ts_plan_calib calib;
	int memory_only;         /* enumerate and price memory, skip timing (benchmark baseline) */
	int enumerate_only;      /* enumerate legal layouts only (benchmark baseline) */
};

/*
 * Whether the search enumerates virtual pipeline depth vpp for pp
 * pipeline stages of a model of `layers` decoder layers: any depth up to
 * o->max_vpp with PP*VPP <= layers + 2 (Megatron's first/last-stage rule
 * fills the rest; the caller checks it), and above max_vpp every depth that
 * divides layers/PP (Megatron's recipes run 96 layers at PP 8 VPP 12: one
 * layer a virtual stage). VPP 1 always; VPP > 1 only with pp > 1 and the
 * 1F1B schedule (DualPipe runs VPP 1).
 */
int ts_plan_vpp_searched(const struct ts_plan_opts *o, int64_t layers, int64_t pp, int64_t vpp);

/* Defaults: inter-node 50 GB/s, max MBS 1, max VPP 8, BF16, MoE-aware
 * estimator, 1 GiB context, 5 % fragmentation, natural routing, the fitted
 * calibration; the rest 0. */
void ts_plan_opts_init(struct ts_plan_opts *o);

/* Communication links. */
enum { TS_LINK_INTRA = 0, TS_LINK_INTER = 1 };
/* Parallel groups whose traffic is priced. */
enum { TS_COMM_TP = 0, TS_COMM_CP, TS_COMM_EP, TS_COMM_ETP, TS_COMM_PP, TS_COMM_DP, TS_COMM_COUNT };
const char *ts_plan_comm_name(int group); /* "tp", "cp", "ep", "etp", "pp", "dp" */

#define TS_PLAN_MAX_OPTIONS 8

/*
 * The step time of one layout, every term in seconds per step on the
 * busiest pipeline rank (docs/memory-plan.md 4.3). Per micro-batch the rank
 * runs its layers (GEMMs, attention, grouped expert GEMMs, element-wise,
 * latency, exposed TP/CP/EP communication, recompute); the pipeline runs
 * m + (p-1)/v of the busiest rank's micro-batches; DP and the optimizer
 * step come after.
 */
enum {
	TS_T_GEMM = 0,   /* dense GEMMs: projections, dense MLP, shared experts, logits */
	TS_T_ATTN,       /* core attention (fused kernel) */
	TS_T_EXPERT,     /* grouped expert GEMMs at the busiest rank's token count */
	TS_T_ELEM,       /* element-wise and memory-bound work (norms, activations, permute) */
	TS_T_CAST,       /* FP8 casting of GEMM inputs */
	TS_T_RECOMPUTE,  /* re-executed forward */
	TS_T_LATENCY,    /* fixed per-layer cost */
	TS_T_TP,         /* exposed TP/SP (and ETP) collectives */
	TS_T_CP,         /* exposed CP ring exchange */
	TS_T_EP,         /* exposed EP all-to-all */
	TS_T_PP,         /* exposed pipeline send/receive */
	TS_T_BUBBLE,     /* interleaved 1F1B fill and drain */
	TS_T_DP,         /* exposed gradient reduce-scatter / parameter all-gather */
	TS_T_OPTIMIZER,  /* optimizer step (memory-bound) */
	TS_T_COUNT
};
const char *ts_plan_term_name(int term); /* "gemm", "attention", ... */

/*
 * Seconds of `groups` GEMMs C[M,N] = A[M,K]·B[K,N] launched together (a
 * grouped GEMM when groups > 1) on a device with `sms` multiprocessors:
 * 128x128 output tiles, each tile padded (tile quantisation) and the tiles
 * of all groups run in whole waves of `sms` (wave quantisation), at
 * `eff` of `peak` FLOP/s; the roofline takes the larger of that and the
 * bytes moved (in_bytes per input element, 2 per output element) over
 * mem_bw (mem_bw <= 0: compute only). 0 when any size is <= 0.
 */
double ts_plan_gemm_s(double groups, double M, double N, double K, double peak, double eff,
		      double mem_bw, int64_t sms, double in_bytes);

struct ts_plan_time {
	double term_s[TS_T_COUNT];
	double step_s;           /* sum of the terms */
	double low_s, high_s;    /* step_s * exp(-/+ log_sigma) */
	double rank_mb_s;        /* one micro-batch on the busiest rank */
	int64_t busiest_rank;
	double imbalance;        /* used for the expert load (1 balanced) */
};

struct ts_plan_layout {
	int64_t tp, pp, vpp, cp, ep, etp, dp, edp, mbs, micro;
	int recompute;           /* enum ts_recompute_granularity */
	int modules;             /* selective modules */
	int offload;             /* enum ts_mem_offload */
	int option;              /* index in the memory-option ladder (struct ts_plan) */
	double option_bytes[TS_PLAN_MAX_OPTIONS]; /* total memory with each ladder option */
	int uneven;              /* layers not divisible by PP*VPP */
	int64_t first_layers;    /* decoder layers on the first / last virtual stage */
	int64_t last_layers;     /*   (-1: the even split; Megatron's embedding/loss rule) */
	struct ts_plan_time time; /* the step-time model (fitting layouts) */
	double memory_bytes;     /* total (with allowances) on the most loaded rank */
	double allocated_bytes;
	int64_t peak_rank;
	double params_dense;     /* parameters on that rank: TP-sharded + replicated */
	double params_expert;    /* and routed experts */
	int fits;
	double comm_bytes[TS_COMM_COUNT][2]; /* per GPU per step, [group][link] */
	double compute_s, exposed_comm_s, bubble_s, step_s;
	int violations;          /* bit (1 << rule) for each Scale rule broken */
	int eliminated_by;       /* enum ts_plan_rule; TS_RULE_NONE for survivors */
	int64_t rank;            /* 1 = best; every layout has a distinct rank */
	int tied;                /* passes the Fit rules and its step is within the
				  * top's likely range (<= top step * exp(log_sigma)):
				  * the model cannot order it against the top */
};

struct ts_plan {
	struct ts_plan_layout *v;
	size_t n, cap;
	size_t parallel_layouts; /* parallel layouts x MBS enumerated */
	size_t fitting;          /* layouts that fit */
	size_t survivors;        /* kept by the literal sieve (eliminated_by NONE), for the record */
	size_t fit_passing;      /* pass the Fit rules: what the ranking orders by step time */
	size_t tied;             /* layouts tied with the top (the top included; 0 unpriced) */
	int64_t tied_rule_rank;  /* rank of the fastest tied layout the literal sieve keeps,
				  * else of the fastest tied one that keeps every Scale
				  * rule; 0 when none does or it is the top itself */
	int waived;              /* bit (1 << rule) for rules nothing satisfied */
	int64_t min_mp;          /* what the rules settled on: model parallelism, */
	int min_rc_level;        /* recompute level (0 none, 1 core_attn, 2 fine-grained, 3 full), */
	int64_t min_attn_mp;     /* and TP*CP*PP */
	double flops_per_step;   /* model FLOPs (Megatron), for the record */
	int noptions;            /* the memory-option ladder, in the order tried */
	int opt_recompute[TS_PLAN_MAX_OPTIONS];
	int opt_modules[TS_PLAN_MAX_OPTIONS];
	int opt_offload[TS_PLAN_MAX_OPTIONS];
};

/* 1 if x passes the Fit rules of plan p: it fits, and needs no offload
 * unless no layout fits without. */
int ts_plan_fit_passing(const struct ts_plan *p, const struct ts_plan_layout *x);

/* Model parallelism of a layout: max(TP*CP*PP, ETP*EP*PP), the GPUs one
 * copy of a layer's weights spans. */
int64_t ts_plan_mp(const struct ts_plan_layout *x);
/* 0 no recompute, 1 selective core_attn, 2 fine-grained selective, 3 full. */
int ts_plan_rc_level(const struct ts_plan_layout *x);

void ts_plan_init(struct ts_plan *p);
void ts_plan_release(struct ts_plan *p);

/*
 * Price one given layout (x: tp, pp, vpp, cp, ep, etp, mbs set; first/last
 * layers -1 for Megatron's rule, see ts_plan_stage_rule): DP, memory with
 * the first ladder option that fits (or the given recompute when
 * x->option >= 0 names a ladder index), FLOPs and the step-time model.
 * x is filled like a layout of ts_plan_run (fits may be 0; the time is
 * priced either way). TS_EUSAGE when the layout is illegal (message says
 * why), TS_ENOMEM.
 */
int ts_plan_price(const struct ts_model *m, const struct ts_plan_opts *o, struct ts_plan_layout *x,
		  struct ts_err *err);

/*
 * Megatron's first/last-stage rule for L layers on v virtual stages: L
 * divisible: even (-1, -1); L+1 divisible: the embedding counts as a layer
 * (first = (L+1)/v - 1); L+2 divisible: embedding and loss count (first =
 * last = (L+2)/v - 1); otherwise the earliest stages take one extra layer
 * (-1, -1, *uneven 1). Returns 0, or -1 when v > L and no rule applies.
 */
int ts_plan_stage_rule(int64_t layers, int64_t vstages, int64_t *first, int64_t *last, int *uneven);

/*
 * Enumerate, price and rank. m must be finished. Layouts end up sorted by
 * rank. TS_EUSAGE for impossible options (gpus, seq or gbs < 1, no
 * capacity), TS_ENOMEM. A model for which nothing is legal gives an empty
 * plan, not an error.
 */
int ts_plan_run(const struct ts_model *m, const struct ts_plan_opts *o, struct ts_plan *p,
		struct ts_err *err);

/*
 * Published cases to check the planner against (`plan --check`): a CSV
 * with a header row naming at least id, model_config, gpus, gpu, prec, tp,
 * pp, vpp, cp, ep, mbs, gbs, seq, step_s (the columns of
 * ../shared/data/expected/layout-cases.csv); optional routing
 * (forced|balanced|natural|unknown|-), etp, fsdp (1/yes/true marks an
 * FSDP run; without an fsdp cell, the word FSDP in the source column's
 * first comma-separated cell does), moe_overlap (1/0), cuda_graphs
 * (ts_plan_graphs_parse), dispatcher (deepep|hybridep|alltoall) and
 * schedule (1f1b|dualpipe); an empty cell of those is "not stated", a bad
 * one TS_EPARSE. Lines starting with '#' and
 * blank lines are skipped; fields are not quoted; cells past the header's
 * count are ignored (free-text source notes). Empty vpp means 1, empty or
 * absent etp 0 (not stated).
 */
struct ts_plan_case {
	char id[32], model[256], gpu[64], prec[16], routing[16];
	int64_t gpus, tp, pp, vpp, cp, ep, etp, mbs, gbs, seq; /* vpp 0: no vpp cell (not published) */
	double step_s;           /* measured */
	int fsdp;                /* FSDP job: an fsdp column 1/yes/true, else "FSDP" in the source column */
	int moe_overlap;         /* moe_overlap cell 1/0 (yes/no, true/false); -1 not stated */
	int tp_overlap;          /* tp_overlap cell 1/0 (Megatron --tp-comm-overlap); -1 not stated */
	int recompute;           /* recompute cell none|selective|full as the plan ladder's index
				  * (0, 1 = core_attn, 3); -1 not stated: the lightest that fits */
	int cuda_graphs;         /* cuda_graphs cell (ts_plan_graphs_parse); -1 not stated */
	int dispatcher;          /* dispatcher cell deepep|hybridep|alltoall; -1 not stated */
	int schedule;            /* schedule cell 1f1b|dualpipe (enum ts_schedule); -1 not stated (1F1B) */
	int64_t line;            /* 1-based line of the row */
};

struct ts_plan_cases {
	struct ts_plan_case *v;
	size_t n, cap;
};

/*
 * Device fields of o from a catalog entry at a training precision
 * (TS_PREC_BF16 or TS_PREC_FP8): capacity, dense peak (and the BF16 peak),
 * memory bandwidth, intra-node link per direction (the catalog's aggregate
 * / 2), the fast-link domain as gpus_per_node (8 when unknown) and the SM
 * count (ts_plan_sms). TS_EUNSUPPORTED when the peak is not published.
 */
int ts_plan_opts_device(struct ts_plan_opts *o, const struct ts_gpu *g, int precision,
			struct ts_err *err);

/* Streaming multiprocessors of a catalog SKU (H100/H200/H800 132, A100-SXM-80GB/40GB 108,
 * B200/GB200/GB300/B300 148; NVIDIA architecture whitepapers), 0 unknown. */
int64_t ts_plan_sms(const char *sku);

/* One case checked: the published layout priced and the search run on the
 * same job. */
struct ts_plan_check {
	struct ts_plan_layout pub;   /* the published layout (ETP as in ts_plan_case_layout) */
	struct ts_plan_layout best;  /* the fastest layout that passes the Fit rules */
	int have_best;
	int64_t pub_rank;            /* 1-based rank of the published layout among the Fit-passing
				      * layouts of the search; 0 when the search has no such layout */
	size_t fit_passing;
	size_t tied;                 /* layouts of the search tied with its best (ts_plan.tied) */
	int pub_tied;                /* the published layout is one of them */
	double err;                  /* predicted / measured - 1 */
	double best_gain;            /* 1 - best / published predicted (> 0: search claims faster) */
	int vpp_chosen;              /* the row has PP > 1 and no vpp cell: pub.vpp is the fastest
				      * depth the search would enumerate that fits without offload
				      * (VPP 1 when none does) */
};

/*
 * What a published run enabled that the CSV row may not say: EP overlap,
 * CUDA graphs, dispatcher and forced routing, from the run's documented
 * recipe (docs/memory-plan.md 4.4 cites each: Megatron-Bridge performance
 * recipes and model cards, the Megatron MoE ModelZoo best-practice table).
 * Matched on model file, device, GPU count and layout; a -1 field is not
 * documented. Settings stated in the row's own cells win (ts_plan_case_job).
 */
struct ts_plan_recipe {
	const char *name;        /* the recipe or table the settings come from */
	int moe_overlap, cuda_graphs, dispatcher, balanced;
};
/* The recipe of case c, or NULL when none is known. */
const struct ts_plan_recipe *ts_plan_case_recipe(const struct ts_plan_case *c);

/* The job of a case into o: gpus, seq, gbs, fsdp, routing (forced/balanced ->
 * balanced, anything else natural, the default), the schedule cell (1F1B when
 * empty), EP overlap, CUDA graphs and dispatcher from the row's cells (TP overlap from its tp_overlap cell only), else from its recipe
 * (ts_plan_case_recipe; a recipe that forces load balancing makes an
 * "unknown" routing balanced), else o's values stay (Megatron's defaults:
 * no overlap, no graphs). Returns the training precision of its prec cell:
 * TS_PREC_FP8 when it names FP8 (FP8-CS, MXFP8, ...), TS_PREC_BF16 for
 * BF16, -1 otherwise. */
int ts_plan_case_job(const struct ts_plan_case *c, struct ts_plan_opts *o);

/* Where a case's model_config lives, relative to the CSV: candidate k = 0
 * "<dir>/../models/<file>", k = 1 "<dir>/layout-models/<file>" (an
 * absolute model path is candidate 0 as is). 0, or -1 past the last
 * candidate or when buf is too small. */
int ts_plan_case_model_path(const char *csv_path, const struct ts_plan_case *c, int k,
			    char *buf, size_t size);

/* The published layout of a case: ETP from the etp cell, else 1 (what the
 * published MoE recipes set: EP before ETP); the recompute cell as the
 * ladder option priced (x->option; -1 when not stated). */
void ts_plan_case_layout(const struct ts_plan_case *c, struct ts_plan_layout *x);

/*
 * Price case c (model m finished; o has the device fields and the model
 * options; gpus, seq, gbs, routing and precision are taken from the case
 * by the caller) and, with search, run the whole plan for the fastest
 * Fit-passing layout. A row with PP > 1 and no vpp cell (vpp 0: the source
 * did not publish the depth) is priced at the fastest VPP that fits
 * without offload (out->vpp_chosen). TS_EUSAGE for an illegal published layout, TS_ENOMEM.
 */
int ts_plan_check_case(const struct ts_model *m, const struct ts_plan_case *c,
		       const struct ts_plan_opts *o, int search, struct ts_plan_check *out,
		       struct ts_err *err);

/* Parse the whole buffer (name for messages). TS_EPARSE with line and byte
 * offset for a missing column, a bad number, a value out of range or an
 * over-long cell; TS_ELIMIT past 4096 rows; TS_ENOMEM. Cases are appended;
 * release with ts_plan_cases_release() (safe on a zeroed struct). */
int ts_plan_cases_parse(struct ts_plan_cases *c, const void *data, size_t n, const char *name,
			struct ts_err *err);
void ts_plan_cases_release(struct ts_plan_cases *c);

/* Spearman rank correlation of a and b (n >= 2; ties share their mean
 * rank); NaN when n < 2 or either side is constant. */
double ts_plan_spearman(const double *a, const double *b, size_t n);

#endif
