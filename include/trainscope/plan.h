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
 * 8 with GBS a multiple of MBS*DP. For each parallel layout the memory
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
 * Survivors are ranked by a first-order step time: compute at a stated
 * efficiency of the dense peak, exposed communication per link type, and
 * the pipeline bubble.
 *
 * Ownership: ts_plan owns its layout array; ts_plan_release() frees it.
 */
#ifndef TRAINSCOPE_PLAN_H
#define TRAINSCOPE_PLAN_H

#include <stdint.h>
#include "trainscope/core.h"
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

struct ts_plan_opts {
	int64_t gpus;            /* world size */
	int64_t gpus_per_node;   /* fast-link domain (NVLink / MTLink) */
	int64_t seq, gbs;        /* tokens, sequences */
	double capacity_bytes;   /* device memory */
	double peak_flops;       /* dense peak per GPU at the training precision, FLOP/s */
	double efficiency;       /* fraction of the peak compute achieves (default 0.4) */
	double intra_bw;         /* bytes/s per GPU per direction inside a node */
	double inter_bw;         /* bytes/s per GPU per direction across nodes */
	int precision;           /* TS_PREC_BF16 or TS_PREC_FP8 */
	int est;                 /* memory estimator */
	int64_t max_tp;          /* 0 = gpus_per_node */
	int64_t max_mbs;         /* default 8 */
	int64_t max_vpp;         /* default 8 */
	double context_bytes;    /* allowance per GPU (memory.h) */
	double fragmentation;
	int memory_only;         /* enumerate and price memory, skip timing (benchmark baseline) */
	int enumerate_only;      /* enumerate legal layouts only (benchmark baseline) */
};

/* Defaults: efficiency 0.4, inter-node 50 GB/s, max MBS 8, max VPP 8, BF16,
 * MoE-aware estimator, 1 GiB context, 5 % fragmentation; the rest 0. */
void ts_plan_opts_init(struct ts_plan_opts *o);

/* Communication links. */
enum { TS_LINK_INTRA = 0, TS_LINK_INTER = 1 };
/* Parallel groups whose traffic is priced. */
enum { TS_COMM_TP = 0, TS_COMM_CP, TS_COMM_EP, TS_COMM_ETP, TS_COMM_PP, TS_COMM_DP, TS_COMM_COUNT };
const char *ts_plan_comm_name(int group); /* "tp", "cp", "ep", "etp", "pp", "dp" */

#define TS_PLAN_MAX_OPTIONS 8

struct ts_plan_layout {
	int64_t tp, pp, vpp, cp, ep, etp, dp, edp, mbs, micro;
	int recompute;           /* enum ts_recompute_granularity */
	int modules;             /* selective modules */
	int offload;             /* enum ts_mem_offload */
	int option;              /* index in the memory-option ladder (struct ts_plan) */
	double option_bytes[TS_PLAN_MAX_OPTIONS]; /* total memory with each ladder option */
	int uneven;              /* layers not divisible by PP*VPP */
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
};

struct ts_plan {
	struct ts_plan_layout *v;
	size_t n, cap;
	size_t parallel_layouts; /* parallel layouts x MBS enumerated */
	size_t fitting;          /* layouts that fit */
	size_t survivors;
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

/* Model parallelism of a layout: max(TP*CP*PP, ETP*EP*PP), the GPUs one
 * copy of a layer's weights spans. */
int64_t ts_plan_mp(const struct ts_plan_layout *x);
/* 0 no recompute, 1 selective core_attn, 2 fine-grained selective, 3 full. */
int ts_plan_rc_level(const struct ts_plan_layout *x);

void ts_plan_init(struct ts_plan *p);
void ts_plan_release(struct ts_plan *p);

/*
 * Enumerate, price and rank. m must be finished. Layouts end up sorted by
 * rank. TS_EUSAGE for impossible options (gpus, seq or gbs < 1, no
 * capacity), TS_ENOMEM. A model for which nothing is legal gives an empty
 * plan, not an error.
 */
int ts_plan_run(const struct ts_model *m, const struct ts_plan_opts *o, struct ts_plan *p,
		struct ts_err *err);

#endif
