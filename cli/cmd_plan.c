/*
 * cmd_plan.c - `trainscope plan`: which layout to run, ranked by a
 * calibrated step-time model among the layouts that fit; --layout prices
 * one layout, --check compares the model with published runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "memplan.h"
#include "trainscope/input.h"
#include "trainscope/jsonw.h"
#include "trainscope/plan.h"
#include "trainscope/run.h"
#include "trainscope/table.h"

enum {
	OPT_MODEL = 1, OPT_GPUS, OPT_GPU, OPT_GPU_MEM, OPT_GPU_CATALOG, OPT_PER_NODE, OPT_SEQ,
	OPT_GBS, OPT_PRECISION, OPT_EFFICIENCY, OPT_PEAK, OPT_INTRA, OPT_INTER, OPT_ESTIMATOR,
	OPT_MAX_TP, OPT_TOP, OPT_NEAR, OPT_CONTEXT, OPT_FRAG, OPT_ROUTING, OPT_IMBALANCE,
	OPT_MOE_OVERLAP, OPT_DISPATCHER, OPT_LAYOUT, OPT_MBS, OPT_CHECK, OPT_MAX_MBS, OPT_TP_OVERLAP, OPT_FSDP, OPT_ATTENTION, OPT_FIRST, OPT_LAST,
	OPT_CUDA_GRAPHS, OPT_SCHEDULE
};

static const struct cli_opt opts[] = {
	{ "model", 'm', "FILE", "model: Hugging Face config.json or a Megatron log (arguments block)", OPT_MODEL },
	{ "gpus", 0, "N", "GPUs in the job", OPT_GPUS },
	{ "gpu", 0, "SKU", "device from the catalog (memory, peak, link)", OPT_GPU },
	{ "gpu-mem", 0, "GiB", "device memory, overrides the catalog", OPT_GPU_MEM },
	{ "gpu-catalog", 0, "FILE", "extra catalog entries (JSON, see docs/mfu.md)", OPT_GPU_CATALOG },
	{ "gpus-per-node", 0, "N", "GPUs in one NVLink/MTLink domain (default: the catalog's, else 8)", OPT_PER_NODE },
	{ "seq", 0, "N", "sequence length in tokens (default: a Megatron log's, else 4096)", OPT_SEQ },
	{ "gbs", 0, "N", "global batch size in sequences (required)", OPT_GBS },
	{ "precision", 0, "P", "bf16 | fp8 (default bf16): memory and the peak used", OPT_PRECISION },
	{ "efficiency", 0, "PCT", "share of the dense peak a large GEMM reaches (default: calibrated, 76)", OPT_EFFICIENCY },
	{ "peak-tflops", 0, "TF", "dense peak per GPU, overrides the catalog", OPT_PEAK },
	{ "intra-node-gbps", 0, "GB/s", "per GPU per direction inside a node (default: catalog link / 2)", OPT_INTRA },
	{ "inter-node-gbps", 0, "GB/s", "per GPU per direction across nodes (default 50 = 400 Gb/s NIC)", OPT_INTER },
	{ "estimator", 0, "E", "memory estimator: moe-aware (default) | megatron | megatron-0.14", OPT_ESTIMATOR },
	{ "max-tp", 0, "N", "largest TP tried (default: GPUs per node)", OPT_MAX_TP },
	{ "top", 0, "N", "layouts shown (default 5)", OPT_TOP },
	{ "near", 0, "N", "near misses shown (default 8)", OPT_NEAR },
	{ "context-gib", 0, "GiB", "allowance for the device context and workspaces (default 1)", OPT_CONTEXT },
	{ "fragmentation-pct", 0, "PCT", "allowance for allocator fragmentation (default 5)", OPT_FRAG },
	{ "routing", 0, "R", "MoE routing: natural (default) | balanced (forced load balancing)", OPT_ROUTING },
	{ "imbalance", 0, "X", "natural routing: busiest EP rank's load / mean (default: calibrated, 1.60)", OPT_IMBALANCE },
	{ "moe-overlap", 0, NULL, "EP all-to-all overlapped with the other micro-batch (1F1B A2A overlap; default off, Megatron's)", OPT_MOE_OVERLAP },
	{ "cuda-graphs", 0, "G", "CUDA graphs: none (default, Megatron's) | moe (moe_router+moe_preprocess) | attn_moe | full", OPT_CUDA_GRAPHS },
	{ "fsdp", 0, NULL, "FSDP / ZeRO-3 (Megatron-FSDP, --use-torch-fsdp2): states sharded over DP, weights gathered per micro-batch", OPT_FSDP },
	{ "tp-overlap", 0, NULL, "TP/SP collectives overlapped with the GEMMs (Megatron --tp-comm-overlap)", OPT_TP_OVERLAP },
	{ "attention", 0, "K", "core attention kernel: fused (flash/cuDNN, default) | unfused (scores through HBM)", OPT_ATTENTION },
	{ "dispatcher", 0, "D", "EP dispatcher: deepep | hybridep (hierarchical, default) | alltoall (flat)", OPT_DISPATCHER },
	{ "schedule", 0, "S", "pipeline schedule: 1f1b (default; interleaved when VPP > 1) | dualpipe (DeepSeek's; VPP 1, even PP)", OPT_SCHEDULE },
	{ "layout", 0, "T,P,V,C,E[,ET]", "price one layout: TP,PP,VPP,CP,EP[,ETP] (ETP default 1)", OPT_LAYOUT },
	{ "mbs", 0, "N", "--layout: micro-batch size (default 1)", OPT_MBS },
	{ "first-stage-layers", 0, "N", "--layout: decoder layers on the first virtual stage (default: Megatron's rule)", OPT_FIRST },
	{ "last-stage-layers", 0, "N", "--layout: decoder layers on the last virtual stage (default: Megatron's rule)", OPT_LAST },
	{ "max-mbs", 0, "N", "largest micro-batch size searched (default 1: the calibrated range)", OPT_MAX_MBS },
	{ "check", 0, "FILE.csv", "published cases (layout-cases.csv columns): predicted vs measured", OPT_CHECK },
	{ 0 }
};

/* JSON key of ladder option i. */
static void option_key(const struct ts_plan *p, int i, char *buf, size_t size)
{
	static const char *const rc[] = { "none", "core_attn", "fine_grained", "full" };
	struct ts_plan_layout t;
	int off = p->opt_offload[i];

	memset(&t, 0, sizeof(t));
	t.recompute = p->opt_recompute[i];
	t.modules = p->opt_modules[i];
	snprintf(buf, size, "%s%s", rc[ts_plan_rc_level(&t)],
		 off == (TS_OFFLOAD_OPTIMIZER | TS_OFFLOAD_ACTIVATIONS) ? "+offload_optimizer_activations" :
		 off == TS_OFFLOAD_OPTIMIZER ? "+offload_optimizer" :
		 off == TS_OFFLOAD_ACTIVATIONS ? "+offload_activations" : "");
}

static const char *rc_label(const struct ts_plan_layout *x)
{
	static const char *const names[] = { "none", "selective", "selective+", "full" };
	return names[ts_plan_rc_level(x)];
}

/* The term that costs x the most over the top pick, in words. */
static void slower_because(const struct ts_plan_layout *x, const struct ts_plan_layout *top,
			   int64_t node, char *buf, size_t size)
{
	int worst = 0;
	double d = -1e300;

	for (int t = 0; t < TS_T_COUNT; t++) {
		double e = x->time.term_s[t] - top->time.term_s[t];
		if (e > d) {
			d = e;
			worst = t;
		}
	}
	switch (worst) {
	case TS_T_GEMM: snprintf(buf, size, "dense GEMMs take %.2f s longer", d); break;
	case TS_T_ATTN: snprintf(buf, size, "attention takes %.2f s longer", d); break;
	case TS_T_EXPERT: snprintf(buf, size, "expert GEMMs on the busiest EP rank take %.2f s longer (EP %lld)",
				   d, (long long)x->ep); break;
	case TS_T_ELEM: snprintf(buf, size, "memory-bound element-wise work takes %.2f s longer", d); break;
	case TS_T_CAST: snprintf(buf, size, "FP8 casting takes %.2f s longer", d); break;
	case TS_T_RECOMPUTE: snprintf(buf, size, "needs %s recompute (%.2f s more)", rc_label(x), d); break;
	case TS_T_LATENCY: snprintf(buf, size, "%lld micro-batches pay the fixed per-layer cost (%.2f s more)",
				    (long long)x->micro, d); break;
	case TS_T_TP: snprintf(buf, size, "%s (TP %lld, %.2f s more)", x->tp > node ? "TP crosses nodes" :
			       "more TP/SP communication", (long long)x->tp, d); break;
	case TS_T_CP: snprintf(buf, size, "the CP ring exchange is not hidden (CP %lld, %.2f s)", (long long)x->cp, d); break;
	case TS_T_EP: snprintf(buf, size, "%s (EP %lld, %.2f s more exposed)",
			       x->comm_bytes[TS_COMM_EP][TS_LINK_INTER] > 0 ? "EP all-to-all crosses nodes" :
			       "more EP all-to-all", (long long)x->ep, d); break;
	case TS_T_PP: snprintf(buf, size, "pipeline sends are not overlapped without VPP (%.2f s)", d); break;
	case TS_T_BUBBLE: snprintf(buf, size, "a larger pipeline bubble (PP %lld, VPP %lld, %.2f s more)",
				   (long long)x->pp, (long long)x->vpp, d); break;
	case TS_T_DP: snprintf(buf, size, "gradient reduce-scatter is not hidden (DP %lld, %.2f s)", (long long)x->dp, d); break;
	default: snprintf(buf, size, "a longer optimizer step (%.2f s more)", d); break;
	}
}

/* "TP2 CP1 PP8 VPP4 EP64 ETP1 MBS1 selective+" */
static void layout_str(const struct ts_plan_layout *x, char *buf, size_t size)
{
	snprintf(buf, size, "TP%lld CP%lld PP%lld VPP%lld EP%lld ETP%lld MBS%lld %s", (long long)x->tp,
		 (long long)x->cp, (long long)x->pp, (long long)x->vpp, (long long)x->ep, (long long)x->etp,
		 (long long)x->mbs, rc_label(x));
}

/* What the workflow's rules say of the top pick. */
static void top_rules(const struct ts_plan_layout *x, char *buf, size_t size)
{
	for (int r = TS_RULE_NODE; r < TS_RULE_COUNT; r++)
		if (x->violations & (1 << r)) {
			snprintf(buf, size, "it breaks the Scale rule: %s", ts_plan_rule_text(r));
			return;
		}
	if (x->eliminated_by != TS_RULE_NONE)
		snprintf(buf, size, "it keeps the Scale rules, but the workflow's sieve drops it (%s), and"
			 " the layouts the sieve keeps are predicted slower", ts_plan_rule_text(x->eliminated_by));
	else
		snprintf(buf, size, "it keeps every workflow rule");
}

/* Why a layout won or lost, as a sentence. */
static void reason(const struct ts_plan *p, const struct ts_plan_layout *x, const struct ts_plan_layout *top,
		   double cap, int64_t node, char *buf, size_t size)
{
	char why[320];

	if (!x->fits) {
		snprintf(buf, size, "Out of memory by %.2f GiB even with %s recompute%s.",
			 mp_gib(x->memory_bytes - cap), rc_label(x), x->offload ? " and offload" : "");
		return;
	}
	if (!ts_plan_fit_passing(p, x)) {
		snprintf(buf, size, "Needs offload while other layouts fit without it.");
		return;
	}
	if (x == top || !top) {
		char tie[160] = "";
		top_rules(x, why, sizeof(why));
		if (p->tied > 1)
			snprintf(tie, sizeof(tie), " and %zu more within its likely range, which the model cannot"
				 " order (a tie)", p->tied - 1);
		snprintf(buf, size, "The fastest predicted layout that fits (%.1f GiB to spare)%s; %s.",
			 mp_gib(cap - x->memory_bytes), tie, why);
		return;
	}
	slower_because(x, top, node, why, sizeof(why));
	{
		double pct = (x->step_s / top->step_s - 1.0) * 100.0;
		snprintf(buf, size, "Predicted %.*f %% slower%s: %s.", pct < 1.0 ? 1 : 0, pct,
			 x->tied ? ", inside the top's likely range (a tie)" : "", why);
	}
}

static void row(struct ts_table *t, const struct ts_plan *p, const struct ts_plan_layout *x,
		const struct ts_plan_layout *top, double cap, int64_t node)
{
	char why[512];

	reason(p, x, top, cap, node, why, sizeof(why));
	ts_table_cell(t, "%lld", (long long)x->rank);
	ts_table_cell(t, "%lld", (long long)x->tp);
	ts_table_cell(t, "%lld", (long long)x->cp);
	ts_table_cell(t, "%lld", (long long)x->pp);
	ts_table_cell(t, "%lld", (long long)x->vpp);
	ts_table_cell(t, "%lld", (long long)x->dp);
	ts_table_cell(t, "%lld", (long long)x->ep);
	ts_table_cell(t, "%lld", (long long)x->etp);
	ts_table_cell(t, "%lld", (long long)x->mbs);
	ts_table_cell(t, "%s", rc_label(x));
	ts_table_cell(t, "%s", x->offload == 0 ? "-" : x->offload == TS_OFFLOAD_OPTIMIZER ? "opt" :
		      x->offload == TS_OFFLOAD_ACTIVATIONS ? "act" : "opt+act");
	ts_table_cell(t, "%.1f", mp_gib(x->memory_bytes));
	if (x->fits) {
		ts_table_cell(t, "%.2f", x->step_s);
		ts_table_cell(t, "%.2f-%.2f", x->time.low_s, x->time.high_s);
		ts_table_cell(t, "%.2f", x->exposed_comm_s);
		ts_table_cell(t, "%.2f", x->bubble_s);
	} else {
		for (int i = 0; i < 4; i++)
			ts_table_cell(t, "-");
	}
	ts_table_cell(t, "%s", why);
}

static void cols(struct ts_table *t)
{
	ts_table_col(t, "rank", NULL, TS_RIGHT, 0);
	ts_table_col(t, "TP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "CP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "PP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "VPP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "DP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "EP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "ETP", NULL, TS_RIGHT, 0);
	ts_table_col(t, "MBS", NULL, TS_RIGHT, 0);
	ts_table_col(t, "recompute", NULL, TS_LEFT, 0);
	ts_table_col(t, "offload", NULL, TS_LEFT, 0);
	ts_table_col(t, "memory", "GiB", TS_RIGHT, 0);
	ts_table_col(t, "step", "s", TS_RIGHT, 0);
	ts_table_col(t, "likely", "s", TS_RIGHT, 0);
	ts_table_col(t, "exposed comm", "s", TS_RIGHT, 0);
	ts_table_col(t, "bubble", "s", TS_RIGHT, 0);
	ts_table_col(t, "why", NULL, TS_LEFT, 0);
}

static void model_line(const struct ts_plan_opts *o, const char *peak_src, struct ts_sb *out)
{
	ts_sb_addf(out, "step time  calibrated model (docs/memory-plan.md 4.3): GEMMs at %.0f %% of %.1f TFLOP/s dense (%s),"
		   " %s attention %.0f %%, %.0f us per layer per micro-batch; links %.0f GB/s in a node, %.0f GB/s across;"
		   " likely range +/-%.0f %% (leave-one-out)\n",
		   o->calib.gemm_eff * 100.0, o->peak_flops / 1e12, peak_src,
		   o->attention == TS_ATTN_UNFUSED ? "unfused" : "fused", o->calib.attn_eff * 100.0,
		   o->calib.layer_latency_s * 1e6, o->intra_bw / 1e9, o->inter_bw / 1e9,
		   (exp(o->calib.log_sigma) - 1.0) * 100.0);
	ts_sb_addf(out, "MoE        routing %s", o->routing == TS_ROUTING_BALANCED ? "balanced" : "natural");
	if (o->routing == TS_ROUTING_NATURAL)
		ts_sb_addf(out, " (busiest EP rank %.2fx the mean)", o->imbalance > 0 ? o->imbalance : o->calib.imbalance);
	ts_sb_addf(out, ", EP overlap %s, %s dispatcher (network at %.2fx the link for its counted bytes);"
		   " TP overlap %s; CUDA graphs %s\n", o->moe_overlap ? "on" : "off",
		   o->dispatcher == TS_DISPATCH_ALLTOALL ? "flat all-to-all" : "hierarchical",
		   o->calib.ep_net_factor, o->tp_overlap ? "on" : "off", ts_plan_graphs_name(o->cuda_graphs));
	if (o->schedule == TS_SCHED_DUALPIPE)
		ts_sb_addf(out, "pipeline   DualPipe: bubble (PP/2-1)(F&B+B-3W) of the busiest rank's F, B, W"
			   " (DeepSeek-V3 report, table 2), pipeline sends hidden\n");
	if (o->fsdp)
		ts_sb_addf(out, "FSDP       weights, gradients and optimizer sharded over DP; weights all-gathered and"
			   " gradients reduce-scattered every micro-batch\n");
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static const struct ts_plan_layout *top_pick(const struct ts_plan *p)
{
	return p->n > 0 && ts_plan_fit_passing(p, &p->v[0]) ? &p->v[0] : NULL;
}

/* The warnings after a text report: a blank line, then "warning: ..." lines. */
static void warnings_text(const struct ts_warnings *wn, struct ts_sb *out)
{
	if (wn->v.n) {
		ts_sb_addc(out, '\n');
		ts_warnings_text(out, wn, wn->v.n, "", "");
	}
}

/* The layouts the model cannot order against the top, and the workflow
 * rules' pick among them. */
static void ties_text(const struct ts_plan *p, const struct ts_plan_opts *o, struct ts_sb *out)
{
	char lay[96];

	if (p->tied < 2)
		return;
	ts_sb_addf(out, "\nties       %zu layouts are predicted within +%.0f %% of rank 1, the model's likely range: their"
		   " order is not evidence; measure the candidates\n", p->tied, (exp(o->calib.log_sigma) - 1.0) * 100.0);
	if (p->tied_rule_rank > 0) {
		const struct ts_plan_layout *x = &p->v[p->tied_rule_rank - 1];
		layout_str(x, lay, sizeof(lay));
		ts_sb_addf(out, "           the fastest of them that %s: rank %lld, %s (%.2f s)\n",
			   x->eliminated_by == TS_RULE_NONE ? "every workflow rule keeps" : "keeps every Scale rule",
			   (long long)x->rank, lay, x->step_s);
	} else if (p->v[0].violations) {
		ts_sb_adds(out, "           none of them keeps every Scale rule\n");
	} else if (p->v[0].eliminated_by != TS_RULE_NONE) {
		ts_sb_adds(out, "           rank 1 keeps every Scale rule; the workflow's sieve keeps none of them\n");
	}
}

static void render_text(const struct ts_model *m, const struct ts_plan_opts *o,
			const struct ts_plan *p, const char *gpu, const char *peak_src,
			long long top, long long near, const struct ts_warnings *wn, struct ts_sb *out)
{
	const struct ts_plan_layout *best = top_pick(p);
	struct ts_table t;
	long long shown = 0;
	size_t listed = 0;

	ts_sb_addf(out, "plan       %s on %lld x %s (%.2f GiB, %lld per node), seq %lld, GBS %lld\n",
		   m->family[0] ? m->family : "model", (long long)o->gpus, gpu, mp_gib(o->capacity_bytes),
		   (long long)o->gpus_per_node, (long long)o->seq, (long long)o->gbs);
	ts_sb_addf(out, "search     %zu layouts (parallel x MBS) priced with the %s estimator; %zu fit; %zu pass the Fit rules\n",
		   p->parallel_layouts, ts_mem_estimator_name(o->est), p->fitting, p->fit_passing);
	model_line(o, peak_src, out);
	ts_sb_adds(out, "ranking    by predicted step time among the layouts that fit (offload only when nothing fits without);"
		   " the Scale rules break exact ties and explain\n");
	if (!best) {
		ts_sb_adds(out, "\nnothing fits: more GPUs, a shorter sequence or a larger device is needed\n");
	} else {
		ts_sb_adds(out, "\ntop layouts\n");
		ts_table_init(&t);
		cols(&t);
		for (size_t i = 0; i < p->n && (long long)i < top && ts_plan_fit_passing(p, &p->v[i]); i++) {
			row(&t, p, &p->v[i], best, o->capacity_bytes, o->gpus_per_node);
			listed++;
		}
		ts_table_render(&t, out, 0);
		ts_table_release(&t);
		ties_text(p, o, out);
	}
	/* the fastest layout each workflow rule would have removed, the best
	 * one that needs offload and the closest out-of-memory ones, by rank */
	ts_sb_adds(out, "\nnear misses\n");
	ts_table_init(&t);
	cols(&t);
	{
		size_t pick[TS_RULE_COUNT + 2];
		int np = 0;
		for (int r = TS_RULE_CP_LONG; r >= TS_RULE_FIT && shown < near; r--) {
			int per_rule = r == TS_RULE_FIT ? 3 : 1;
			for (size_t i = listed; i < p->n && per_rule > 0 && shown < near; i++) {
				const struct ts_plan_layout *x = &p->v[i];
				int match = r == TS_RULE_FIT ? !x->fits : r == TS_RULE_OFFLOAD_LAST ?
					    x->fits && !ts_plan_fit_passing(p, x) :
					    ts_plan_fit_passing(p, x) && x->eliminated_by == r;
				if (match) {
					pick[np++] = i;
					per_rule--;
					shown++;
				}
			}
		}
		ts_sort(pick, (size_t)np, sizeof(pick[0]), cmp_size);
		for (int k = 0; k < np; k++)
			row(&t, p, &p->v[pick[k]], best, o->capacity_bytes, o->gpus_per_node);
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
	warnings_text(wn, out);
}

static void time_json(struct ts_jw *w, const struct ts_plan_layout *x)
{
	ts_jw_key(w, "step_ms");
	ts_jw_fixed(w, x->step_s * 1e3, 3);
	ts_jw_key(w, "step_low_ms");
	ts_jw_fixed(w, x->time.low_s * 1e3, 3);
	ts_jw_key(w, "step_high_ms");
	ts_jw_fixed(w, x->time.high_s * 1e3, 3);
	ts_jw_key(w, "compute_ms");
	ts_jw_fixed(w, x->compute_s * 1e3, 3);
	ts_jw_key(w, "exposed_comm_ms");
	ts_jw_fixed(w, x->exposed_comm_s * 1e3, 3);
	ts_jw_key(w, "bubble_ms");
	ts_jw_fixed(w, x->bubble_s * 1e3, 3);
	ts_jw_key(w, "terms_ms");
	ts_jw_obj(w);
	for (int t = 0; t < TS_T_COUNT; t++) {
		ts_jw_key(w, ts_plan_term_name(t));
		ts_jw_fixed(w, x->time.term_s[t] * 1e3, 3);
	}
	ts_jw_obj_end(w);
	ts_jw_ki64(w, "busiest_pp_rank", x->time.busiest_rank);
	ts_jw_key(w, "expert_imbalance");
	ts_jw_fixed(w, x->time.imbalance, 3);
	ts_jw_key(w, "comm_bytes");
	ts_jw_obj(w);
	for (int g = 0; g < TS_COMM_COUNT; g++) {
		char k[32];
		snprintf(k, sizeof(k), "%s_intra", ts_plan_comm_name(g));
		ts_jw_ki64(w, k, llround(x->comm_bytes[g][TS_LINK_INTRA]));
		snprintf(k, sizeof(k), "%s_inter", ts_plan_comm_name(g));
		ts_jw_ki64(w, k, llround(x->comm_bytes[g][TS_LINK_INTER]));
	}
	ts_jw_obj_end(w);
}

static void layout_json(struct ts_jw *w, const struct ts_plan *p, const struct ts_plan_layout *x)
{
	char buf[200];

	ts_jw_ki64(w, "tp", x->tp);
	ts_jw_ki64(w, "pp", x->pp);
	ts_jw_ki64(w, "vpp", x->vpp);
	ts_jw_ki64(w, "cp", x->cp);
	ts_jw_ki64(w, "ep", x->ep);
	ts_jw_ki64(w, "etp", x->etp);
	ts_jw_ki64(w, "dp", x->dp);
	ts_jw_ki64(w, "edp", x->edp);
	ts_jw_ki64(w, "mbs", x->mbs);
	ts_jw_ki64(w, "microbatches", x->micro);
	ts_jw_kstr(w, "recompute", mp_recompute_name(x->recompute));
	mp_modules_str(x->modules, buf, sizeof(buf));
	ts_jw_kstr(w, "recompute_modules", buf);
	mp_offload_str(x->offload, buf, sizeof(buf));
	ts_jw_kstr(w, "offload", buf);
	ts_jw_kbool(w, "uneven_stages", x->uneven);
	if (x->first_layers >= 0)
		ts_jw_ki64(w, "first_stage_layers", x->first_layers);
	else
		ts_jw_kstr(w, "first_stage_layers", NULL);
	if (x->last_layers >= 0)
		ts_jw_ki64(w, "last_stage_layers", x->last_layers);
	else
		ts_jw_kstr(w, "last_stage_layers", NULL);
	ts_jw_ki64(w, "memory_bytes", llround(x->memory_bytes));
	if (p) {
		ts_jw_key(w, "memory_by_option_bytes");
		ts_jw_obj(w);
		for (int k = 0; k < p->noptions; k++) {
			option_key(p, k, buf, sizeof(buf));
			ts_jw_ki64(w, buf, llround(x->option_bytes[k]));
		}
		ts_jw_obj_end(w);
	}
	ts_jw_ki64(w, "allocated_bytes", llround(x->allocated_bytes));
	ts_jw_ki64(w, "peak_pp_rank", x->peak_rank);
	ts_jw_kbool(w, "fits", x->fits);
	ts_jw_ki64(w, "model_parallel", ts_plan_mp(x));
	if (x->fits || !p)
		time_json(w, x);
	ts_jw_key(w, "violations");
	ts_jw_arr(w);
	for (int r = TS_RULE_NODE; r < TS_RULE_COUNT; r++)
		if (x->violations & (1 << r))
			ts_jw_str(w, ts_plan_rule_key(r));
	ts_jw_arr_end(w);
}

static void header_json(struct ts_jw *w, const struct ts_plan_opts *o, const char *gpu,
			const char *peak_source)
{
	ts_jw_ki64(w, "gpus", o->gpus);
	ts_jw_ki64(w, "gpus_per_node", o->gpus_per_node);
	ts_jw_kstr(w, "gpu", gpu);
	ts_jw_ki64(w, "capacity_bytes", llround(o->capacity_bytes));
	ts_jw_ki64(w, "seq", o->seq);
	ts_jw_ki64(w, "gbs", o->gbs);
	ts_jw_kstr(w, "precision", o->precision == TS_PREC_FP8 ? "fp8" : "bf16");
	ts_jw_kstr(w, "estimator", ts_mem_estimator_name(o->est));
	ts_jw_key(w, "peak_tflops");
	ts_jw_fixed(w, o->peak_flops / 1e12, 1);
	ts_jw_kstr(w, "peak_source", peak_source);
	ts_jw_ki64(w, "intra_node_bytes_per_s", llround(o->intra_bw));
	ts_jw_ki64(w, "inter_node_bytes_per_s", llround(o->inter_bw));
	/* null: unknown, and not priced */
	ts_jw_ki64_or_null(w, "memory_bytes_per_s", llround(o->mem_bw), o->mem_bw > 0);
	ts_jw_kstr(w, "routing", o->routing == TS_ROUTING_BALANCED ? "balanced" : "natural");
	ts_jw_kbool(w, "moe_overlap", o->moe_overlap);
	ts_jw_kbool(w, "tp_overlap", o->tp_overlap);
	if (o->fsdp)
		ts_jw_kbool(w, "fsdp", 1);
	ts_jw_kstr(w, "attention", o->attention == TS_ATTN_UNFUSED ? "unfused" : "fused");
	ts_jw_kstr(w, "dispatcher", o->dispatcher == TS_DISPATCH_ALLTOALL ? "alltoall" : "hierarchical");
	ts_jw_kstr(w, "schedule", mp_schedule_name(o->schedule));
	ts_jw_kstr(w, "cuda_graphs", ts_plan_graphs_name(o->cuda_graphs));
	ts_jw_key(w, "calibration");
	ts_jw_obj(w);
	ts_jw_key(w, "gemm_eff_pct");
	ts_jw_fixed(w, o->calib.gemm_eff * 100.0, 1);
	ts_jw_key(w, "attn_eff_pct");
	ts_jw_fixed(w, o->calib.attn_eff * 100.0, 1);
	ts_jw_key(w, "layer_latency_us");
	ts_jw_fixed(w, o->calib.layer_latency_s * 1e6, 1);
	ts_jw_key(w, "imbalance");
	ts_jw_fixed(w, o->imbalance > 0 ? o->imbalance : o->calib.imbalance, 3);
	ts_jw_key(w, "ep_net_factor");
	ts_jw_fixed(w, o->calib.ep_net_factor, 2);
	ts_jw_key(w, "uncertainty_pct");
	ts_jw_fixed(w, (exp(o->calib.log_sigma) - 1.0) * 100.0, 1);
	ts_jw_obj_end(w);
}

static void render_json(const struct ts_model *m, const struct ts_plan_opts *o,
			const struct ts_plan *p, const char *gpu, const char *peak_source,
			const struct ts_warnings *wn, struct ts_sb *out)
{
	const struct ts_plan_layout *best = top_pick(p);
	struct ts_jw w;
	char buf[512];

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.plan/2");
	ts_jw_kstr(&w, "model", m->family);
	header_json(&w, o, gpu, peak_source);
	ts_jw_kf64(&w, "model_flops_per_step", p->flops_per_step);
	ts_jw_ki64(&w, "parallel_layouts", (int64_t)p->parallel_layouts);
	ts_jw_ki64(&w, "fitting", (int64_t)p->fitting);
	ts_jw_ki64(&w, "fit_passing", (int64_t)p->fit_passing);
	ts_jw_ki64(&w, "survivors", (int64_t)p->survivors);
	ts_jw_ki64(&w, "tied_with_top", (int64_t)p->tied);
	ts_jw_ki64_or_null(&w, "tied_rule_pick_rank", p->tied_rule_rank, p->tied_rule_rank > 0);
	ts_jw_key(&w, "rules");
	ts_jw_arr(&w);
	for (int r = TS_RULE_FIT; r < TS_RULE_COUNT; r++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "rule", ts_plan_rule_key(r));
		ts_jw_kstr(&w, "text", ts_plan_rule_text(r));
		ts_jw_kbool(&w, "waived", (p->waived & (1 << r)) != 0);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "options");
	ts_jw_arr(&w);
	for (int i = 0; i < p->noptions; i++) {
		ts_jw_obj(&w);
		option_key(p, i, buf, sizeof(buf));
		ts_jw_kstr(&w, "option", buf);
		ts_jw_kstr(&w, "recompute", mp_recompute_name(p->opt_recompute[i]));
		mp_modules_str(p->opt_modules[i], buf, sizeof(buf));
		ts_jw_kstr(&w, "recompute_modules", buf);
		mp_offload_str(p->opt_offload[i], buf, sizeof(buf));
		ts_jw_kstr(&w, "offload", buf);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "layouts");
	ts_jw_arr(&w);
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "rank", x->rank);
		layout_json(&w, p, x);
		ts_jw_kbool(&w, "passes_fit_rules", ts_plan_fit_passing(p, x));
		ts_jw_kbool(&w, "tied_with_top", x->tied);
		ts_jw_kstr(&w, "eliminated_by", x->eliminated_by ? ts_plan_rule_key(x->eliminated_by) : NULL);
		reason(p, x, best, o->capacity_bytes, o->gpus_per_node, buf, sizeof(buf));
		ts_jw_kstr(&w, "reason", buf);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_warnings_json(&w, wn, wn->v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/* --layout: one layout, priced term by term. */
static void render_layout(const struct ts_model *m, const struct ts_plan_opts *o,
			  const struct ts_plan_layout *x, const char *gpu, const char *peak_src,
			  int json, const struct ts_warnings *wn, struct ts_sb *out)
{
	struct ts_table t;

	if (json) {
		struct ts_jw w;
		ts_jw_init(&w, out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.plan.layout/1");
		ts_jw_kstr(&w, "model", m->family);
		header_json(&w, o, gpu, peak_src);
		ts_jw_key(&w, "layout");
		ts_jw_obj(&w);
		layout_json(&w, NULL, x);
		ts_jw_obj_end(&w);
		ts_warnings_json(&w, wn, wn->v.n);
		ts_jw_obj_end(&w);
		ts_sb_addc(out, '\n');
		return;
	}
	ts_sb_addf(out, "layout     %s on %lld x %s: TP %lld PP %lld VPP %lld CP %lld EP %lld ETP %lld DP %lld MBS %lld,"
		   " %lld micro-batches", m->family[0] ? m->family : "model", (long long)o->gpus, gpu,
		   (long long)x->tp, (long long)x->pp, (long long)x->vpp, (long long)x->cp, (long long)x->ep,
		   (long long)x->etp, (long long)x->dp, (long long)x->mbs, (long long)x->micro);
	if (x->first_layers >= 0)
		ts_sb_addf(out, ", first virtual stage %lld layers", (long long)x->first_layers);
	if (x->last_layers >= 0)
		ts_sb_addf(out, ", last virtual stage %lld layers", (long long)x->last_layers);
	ts_sb_addc(out, '\n');
	ts_sb_addf(out, "memory     %.1f GiB with %s recompute%s on the most loaded rank (%lld): %s %s (%.2f GiB)\n",
		   mp_gib(x->memory_bytes), rc_label(x), x->offload ? " and offload" : "", (long long)x->peak_rank,
		   x->fits ? "fits" : "does NOT fit", gpu, mp_gib(o->capacity_bytes));
	model_line(o, peak_src, out);
	ts_sb_addf(out, "step       %.2f s predicted, likely %.2f-%.2f s (busiest pipeline rank %lld",
		   x->step_s, x->time.low_s, x->time.high_s, (long long)x->time.busiest_rank);
	if (o->schedule == TS_SCHED_DUALPIPE && x->pp > 1) {
		int64_t ds[2];
		ts_mem_dualpipe_stages(x->pp, x->time.busiest_rank, ds);
		ts_sb_addf(out, ", stages %lld and %lld, half the micro-batches each", (long long)ds[0],
			   (long long)ds[1]);
	}
	ts_sb_addf(out, ", %.1f ms per micro-batch)\n\n", x->time.rank_mb_s * 1e3);
	ts_table_init(&t);
	ts_table_col(&t, "term", NULL, TS_LEFT, 0);
	ts_table_col(&t, "time", "s", TS_RIGHT, 0);
	ts_table_col(&t, "share", "%", TS_RIGHT, 0);
	for (int k = 0; k < TS_T_COUNT; k++) {
		ts_table_cell(&t, "%s", ts_plan_term_name(k));
		ts_table_cell(&t, "%.3f", x->time.term_s[k]);
		ts_table_cell(&t, "%.1f", x->step_s > 0 ? x->time.term_s[k] / x->step_s * 100.0 : 0.0);
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
	warnings_text(wn, out);
}

/* Tolerances of --check (the acceptance of the step-time model). */
#define CHECK_ERR 0.15
#define CHECK_GAIN 0.20

struct check_row {
	struct ts_plan_case c;
	struct ts_plan_check r;
	const struct ts_plan_recipe *recipe; /* where the row's unstated settings came from, or NULL */
	int moe_overlap, cuda_graphs, dispatcher, balanced, tp_overlap, schedule; /* what it was priced with */
	double gain;             /* 1 - search best / fastest published of the job */
	int gain_tied;           /* that published layout is within the best's likely range */
	int ok;
};

/* Load, price and search every case; rows get their verdict. */
/* Settings given on the command line, which override every row (bits). */
enum { FORCE_OVERLAP = 1, FORCE_GRAPHS = 2, FORCE_DISPATCHER = 4, FORCE_SCHEDULE = 8 };

static int check_cases(struct cli_ctx *ctx, const char *csv, const struct ts_plan_opts *base,
		       int force, struct ts_gpu_catalog *cat, struct ts_warnings *wn,
		       struct check_row **rows_out, size_t *n_out)
{
	struct ts_plan_cases cases = { 0 };
	struct ts_input in;
	struct ts_err err;
	struct check_row *rows = NULL;
	int rc = 0;

	ts_err_init(&err);
	if (ts_input_read_all(&in, csv, 1 << 20, &err))
		return cli_fail(ctx, &err);
	rc = ts_plan_cases_parse(&cases, in.data, in.len, in.path, &err);
	ts_input_release(&in);
	if (rc)
		return cli_fail(ctx, &err);
	if (cases.n == 0) {
		cli_error(ctx, "%s: no cases", csv);
		rc = EXIT_USAGE;
		goto out;
	}
	rows = calloc(cases.n, sizeof(*rows));
	if (!rows) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	for (size_t i = 0; i < cases.n; i++) {
		struct check_row *w = &rows[i];
		struct ts_plan_opts o = *base;
		struct ts_model model;
		const struct ts_gpu *g = ts_gpu_find(cat, cases.v[i].gpu);
		char path[1200];
		int prec, loaded = 0;

		w->c = cases.v[i];
		prec = ts_plan_case_job(&w->c, &o);
		if (force & FORCE_OVERLAP)
			o.moe_overlap = base->moe_overlap;
		if (force & FORCE_GRAPHS)
			o.cuda_graphs = base->cuda_graphs;
		if (force & FORCE_DISPATCHER)
			o.dispatcher = base->dispatcher;
		if (force & FORCE_SCHEDULE)
			o.schedule = base->schedule;
		w->recipe = ts_plan_case_recipe(&w->c);
		w->moe_overlap = o.moe_overlap;
		w->tp_overlap = o.tp_overlap;
		w->cuda_graphs = o.cuda_graphs;
		w->dispatcher = o.dispatcher;
		w->schedule = o.schedule;
		w->balanced = o.routing == TS_ROUTING_BALANCED;
		if (!g || prec < 0) {
			cli_error(ctx, "%s: line %lld: %s '%s' is not known", csv, (long long)w->c.line,
				  !g ? "device" : "precision", !g ? w->c.gpu : w->c.prec);
			rc = EXIT_USAGE;
			goto out;
		}
		for (int k = 0; !loaded && ts_plan_case_model_path(csv, &w->c, k, path, sizeof(path)) == 0; k++) {
			ts_model_init(&model);
			ts_err_init(&err);
			loaded = ts_model_read_config(&model, path, &err) == 0 && ts_model_finish(&model, &err) == 0;
		}
		if (!loaded) {
			cli_error(ctx, "%s: line %lld: cannot read the model '%s' (looked in ../models/ and"
				  " layout-models/ beside the file)", csv, (long long)w->c.line, w->c.model);
			rc = EXIT_USAGE;
			goto out;
		}
		if (model.num_experts > 0 && !w->recipe && w->c.moe_overlap < 0 && w->c.cuda_graphs < 0 &&
		    !(force & (FORCE_OVERLAP | FORCE_GRAPHS)))
			ts_warnings_add(wn, "settings-not-stated", csv, -1, TS_NO_INT,
					"%s: line %lld: %s: no moe_overlap or cuda_graphs cell and no known recipe:"
					" priced with Megatron's defaults (no EP overlap, no CUDA graphs)", csv,
					(long long)w->c.line, w->c.id);
		if (model.num_experts > 0 && !w->balanced && strcmp(w->c.routing, "natural") != 0)
			ts_warnings_add(wn, "routing-unknown", csv, -1, TS_NO_INT,
					"%s: line %lld: %s: routing '%s' priced as natural (busiest EP rank %.2fx the mean)",
					csv, (long long)w->c.line, w->c.id, w->c.routing,
					o.imbalance > 0 ? o.imbalance : o.calib.imbalance);
		if (ts_plan_opts_device(&o, g, prec, &err) ||
		    ts_plan_check_case(&model, &w->c, &o, 1, &w->r, &err)) {
			char msg[700];
			ts_err_format(&err, msg, sizeof(msg));
			cli_error(ctx, "%s: line %lld (%s): %s", csv, (long long)w->c.line, w->c.id, msg);
			rc = EXIT_USAGE;
			goto out;
		}
		if (o.schedule == TS_SCHED_DUALPIPE && o.est != TS_MEM_EST_MOE)
			ts_warnings_add(wn, "dualpipe-memory", csv, -1, TS_NO_INT,
					"%s: line %lld: %s: DualPipe: the %s estimator prices memory as 1F1B's; DualPipe"
					" holds two copies of the parameters and PP+1 micro-batches of activations"
					" (DeepSeek-V3 report, table 2), which the moe-aware estimator counts", csv,
					(long long)w->c.line, w->c.id, ts_mem_estimator_name(o.est));
		if (w->r.vpp_chosen)
			ts_warnings_add(wn, "vpp-unstated", csv, -1, TS_NO_INT,
					"%s: line %lld: %s: no vpp cell with PP %lld: priced at VPP %lld, the fastest"
					" depth up to %lld (or dividing the layers a stage) that fits without offload",
					csv, (long long)w->c.line, w->c.id, (long long)w->c.pp, (long long)w->r.pub.vpp,
					(long long)o.max_vpp);
	}
	/* the search's claim is weighed against the fastest published layout
	 * of the same job (model, GPUs, device, batch, sequence, routing): a
	 * slower published alternative is beaten by its sibling, rightly */
	for (size_t i = 0; i < cases.n; i++) {
		struct check_row *w = &rows[i];
		double ref = w->r.pub.step_s;
		for (size_t j = 0; j < cases.n; j++) {
			const struct ts_plan_case *a = &w->c, *b = &rows[j].c;
			if (strcmp(a->model, b->model) == 0 && a->gpus == b->gpus && strcmp(a->gpu, b->gpu) == 0 &&
			    a->gbs == b->gbs && a->seq == b->seq && strcmp(a->routing, b->routing) == 0 &&
			    rows[j].r.pub.step_s < ref)
				ref = rows[j].r.pub.step_s;
		}
		w->gain = w->r.have_best ? 1.0 - w->r.best.step_s / ref : 0;
		w->gain_tied = w->r.have_best && ref <= w->r.best.time.high_s;
		w->ok = w->r.pub.fits && fabs(w->r.err) <= CHECK_ERR && w->gain <= CHECK_GAIN;
	}
	*rows_out = rows;
	*n_out = cases.n;
	rows = NULL;
out:
	free(rows);
	ts_plan_cases_release(&cases);
	return rc;
}

/* Pairs of rows on one model, GPU count and device: predicted in measured order? */
static void pair_order(const struct check_row *rows, size_t n, int *pairs, int *kept)
{
	*pairs = *kept = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const struct ts_plan_case *a = &rows[i].c, *b = &rows[j].c;
			if (strcmp(a->model, b->model) || a->gpus != b->gpus || strcmp(a->gpu, b->gpu) ||
			    a->step_s == b->step_s)
				continue;
			(*pairs)++;
			*kept += (a->step_s < b->step_s) == (rows[i].r.pub.step_s < rows[j].r.pub.step_s);
		}
}

/* "overlap on, graphs moe, hier" for a row. */
static void settings_str(const struct check_row *r, char *buf, size_t size)
{
	snprintf(buf, size, "overlap %s, graphs %s, %s%s%s", r->moe_overlap ? "on" : "off",
		 ts_plan_graphs_name(r->cuda_graphs), r->dispatcher == TS_DISPATCH_ALLTOALL ? "a2a" : "hier",
		 r->tp_overlap ? ", TP overlap" : "", r->schedule == TS_SCHED_DUALPIPE ? ", DualPipe" : "");
}

static void render_check(const struct check_row *rows, size_t n, int json, const struct ts_warnings *wn,
			 struct ts_sb *out, double *rho_out, int *failed)
{
	static double pred[4096], meas[4096];
	double rho;
	int pairs, kept, within = 0, bad = 0, gains = 0, gains_tied = 0;
	struct ts_table t;

	for (size_t i = 0; i < n && i < 4096; i++) {
		pred[i] = rows[i].r.pub.step_s;
		meas[i] = rows[i].c.step_s;
		within += fabs(rows[i].r.err) <= CHECK_ERR;
		bad += !rows[i].ok;
		gains += rows[i].r.have_best && rows[i].gain > 0;
		gains_tied += rows[i].r.have_best && rows[i].gain > 0 && rows[i].gain_tied;
	}
	rho = ts_plan_spearman(pred, meas, n < 4096 ? n : 4096);
	pair_order(rows, n, &pairs, &kept);
	*rho_out = rho;
	*failed = bad + (pairs - kept);
	if (json) {
		struct ts_jw w;
		ts_jw_init(&w, out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.plan.check/1");
		ts_jw_key(&w, "tolerance_pct");
		ts_jw_fixed(&w, CHECK_ERR * 100.0, 1);
		ts_jw_key(&w, "max_search_gain_pct");
		ts_jw_fixed(&w, CHECK_GAIN * 100.0, 1);
		ts_jw_key(&w, "cases");
		ts_jw_arr(&w);
		for (size_t i = 0; i < n; i++) {
			const struct check_row *r = &rows[i];
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "id", r->c.id);
			ts_jw_kstr(&w, "model_config", r->c.model);
			ts_jw_ki64(&w, "gpus", r->c.gpus);
			ts_jw_kstr(&w, "gpu", r->c.gpu);
			ts_jw_kstr(&w, "routing", r->c.routing);
			ts_jw_kbool(&w, "routing_balanced", r->balanced);
			ts_jw_kbool(&w, "fsdp", r->c.fsdp);
			ts_jw_kbool(&w, "moe_overlap", r->moe_overlap);
			ts_jw_kbool(&w, "tp_overlap", r->tp_overlap);
			ts_jw_kstr(&w, "cuda_graphs", ts_plan_graphs_name(r->cuda_graphs));
			ts_jw_kstr(&w, "dispatcher", r->dispatcher == TS_DISPATCH_ALLTOALL ? "alltoall" : "hierarchical");
			ts_jw_kstr(&w, "schedule", mp_schedule_name(r->schedule));
			ts_jw_kstr(&w, "recipe", r->recipe ? r->recipe->name : NULL);
			ts_jw_key(&w, "layout");
			ts_jw_obj(&w);
			layout_json(&w, NULL, &r->r.pub);
			ts_jw_obj_end(&w);
			ts_jw_kbool(&w, "vpp_chosen", r->r.vpp_chosen);
			ts_jw_kbool(&w, "recompute_stated", r->c.recompute >= 0);
			ts_jw_key(&w, "measured_ms");
			ts_jw_fixed(&w, r->c.step_s * 1e3, 3);
			ts_jw_key(&w, "error_pct");
			ts_jw_fixed(&w, r->r.err * 100.0, 2);
			ts_jw_ki64(&w, "published_rank", r->r.pub_rank);
			ts_jw_ki64(&w, "fit_passing", (int64_t)r->r.fit_passing);
			if (r->r.have_best) {
				ts_jw_key(&w, "search_best_ms");
				ts_jw_fixed(&w, r->r.best.step_s * 1e3, 3);
				ts_jw_key(&w, "search_gain_pct");
				ts_jw_fixed(&w, r->gain * 100.0, 2);
				ts_jw_kbool(&w, "search_gain_within_uncertainty", r->gain_tied);
				ts_jw_ki64(&w, "tied_with_best", (int64_t)r->r.tied);
				ts_jw_kbool(&w, "published_tied_with_best", r->r.pub_tied);
			}
			ts_jw_kbool(&w, "ok", r->ok);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_key(&w, "spearman");
		if (isnan(rho))
			ts_jw_null(&w);
		else
			ts_jw_fixed(&w, rho, 3);
		ts_jw_ki64(&w, "within_tolerance", within);
		ts_jw_ki64(&w, "pairs", pairs);
		ts_jw_ki64(&w, "pairs_in_measured_order", kept);
		ts_jw_ki64(&w, "failed", *failed);
		ts_warnings_json(&w, wn, wn->v.n);
		ts_jw_obj_end(&w);
		ts_sb_addc(out, '\n');
		return;
	}
	ts_table_init(&t);
	ts_table_col(&t, "case", NULL, TS_LEFT, 0);
	ts_table_col(&t, "model", NULL, TS_LEFT, 0);
	ts_table_col(&t, "GPUs", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "layout", NULL, TS_LEFT, 0);
	ts_table_col(&t, "routing", NULL, TS_LEFT, 0);
	ts_table_col(&t, "settings", NULL, TS_LEFT, 0);
	ts_table_col(&t, "memory", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "measured", "s", TS_RIGHT, 0);
	ts_table_col(&t, "predicted", "s", TS_RIGHT, 0);
	ts_table_col(&t, "likely", "s", TS_RIGHT, 0);
	ts_table_col(&t, "error", "%", TS_RIGHT, 0);
	ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "search best", "s", TS_RIGHT, 0);
	ts_table_col(&t, "claimed gain", "%", TS_RIGHT, 0);
	ts_table_col(&t, "tied with best", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "verdict", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < n; i++) {
		const struct check_row *r = &rows[i];
		const struct ts_plan_layout *x = &r->r.pub;
		char lay[96], verdict[96], set[64];
		snprintf(lay, sizeof(lay), "TP%lld PP%lld VPP%lld CP%lld EP%lld ETP%lld MBS%lld%s %s",
			 (long long)x->tp, (long long)x->pp, (long long)x->vpp, (long long)x->cp,
			 (long long)x->ep, (long long)x->etp, (long long)x->mbs, r->c.fsdp ? " FSDP" : "",
			 rc_label(x));
		if (r->ok)
			snprintf(verdict, sizeof(verdict), "ok");
		else if (!x->fits)
			snprintf(verdict, sizeof(verdict), "does not fit");
		else if (fabs(r->r.err) > CHECK_ERR)
			snprintf(verdict, sizeof(verdict), "off by more than %.0f %%", CHECK_ERR * 100.0);
		else
			snprintf(verdict, sizeof(verdict), "search claims > %.0f %% faster", CHECK_GAIN * 100.0);
		if (x->fits && x->offload && strcmp(verdict, "ok") == 0)
			snprintf(verdict, sizeof(verdict), "ok (needs offload)");
		ts_table_cell(&t, "%s", r->c.id);
		ts_table_cell(&t, "%s", r->c.model);
		ts_table_cell(&t, "%lld", (long long)r->c.gpus);
		ts_table_cell(&t, "%s", lay);
		ts_table_cell(&t, "%s%s", r->c.routing,
			      r->balanced && strcmp(r->c.routing, "forced") && strcmp(r->c.routing, "balanced") ?
			      " (recipe: forced)" : "");
		settings_str(r, set, sizeof(set));
		ts_table_cell(&t, "%s", set);
		ts_table_cell(&t, "%.1f", mp_gib(x->memory_bytes));
		ts_table_cell(&t, "%.2f", r->c.step_s);
		ts_table_cell(&t, "%.2f", x->step_s);
		ts_table_cell(&t, "%.1f-%.1f", x->time.low_s, x->time.high_s);
		ts_table_cell(&t, "%+.1f", r->r.err * 100.0);
		if (r->r.pub_rank > 0)
			ts_table_cell(&t, "%lld/%zu", (long long)r->r.pub_rank, r->r.fit_passing);
		else
			ts_table_cell(&t, "-");
		if (r->r.have_best) {
			ts_table_cell(&t, "%.2f", r->r.best.step_s);
			ts_table_cell(&t, "%.1f%s", r->gain * 100.0, r->gain_tied && r->gain > 0 ? " (tie)" : "");
			ts_table_cell(&t, "%zu", r->r.tied);
		} else {
			ts_table_cell(&t, "-");
			ts_table_cell(&t, "-");
			ts_table_cell(&t, "-");
		}
		ts_table_cell(&t, "%s", verdict);
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
	ts_sb_addf(out, "\nwithin %.0f %%: %d of %zu; rows failing a check: %d; rank correlation (Spearman) %s",
		   CHECK_ERR * 100.0, within, n, bad, isnan(rho) ? "n/a" : "");
	if (!isnan(rho))
		ts_sb_addf(out, "%.3f", rho);
	ts_sb_addf(out, "; layouts of one model and cluster in measured order: %d of %d pairs\n", kept, pairs);
	ts_sb_addf(out, "claimed gains inside the search best's likely range (ties: the model cannot tell them from"
		   " the published layout): %d of %d\n", gains_tied, gains);
	ts_sb_adds(out, "settings the rows do not state come from each run's documented recipe:\n");
	for (size_t i = 0; i < n; i++)
		if (rows[i].recipe)
			ts_sb_addf(out, "  %s: %s\n", rows[i].c.id, rows[i].recipe->name);
	warnings_text(wn, out);
}

/* What the model does not know about this job: outside the calibrated
 * range, a device without a known SM count, a peak not from the catalog. */
static void job_warnings(const struct ts_model *m, const struct ts_plan_opts *o, const struct ts_gpu *gpu,
			 long long mbs, struct ts_warnings *wn)
{
	if (o->seq != 4096 || mbs > 1)
		ts_warnings_add(wn, "outside-calibration", NULL, -1, TS_NO_INT,
				"the step-time model is calibrated on runs at sequence 4096 and MBS 1; this job (sequence %lld,"
				" MBS up to %lld) is an extrapolation beyond the likely range", (long long)o->seq, mbs);
	if (!gpu) {
		ts_warnings_add(wn, "device-assumed", NULL, -1, TS_NO_INT,
				"no catalog device: 132 SMs, no memory-bandwidth roofline (element-wise and "
				"optimizer time not priced) and %.0f GB/s links assumed", o->intra_bw / 1e9);
		return;
	}
	if (!ts_plan_sms(gpu->sku))
		ts_warnings_add(wn, "sm-count-assumed", NULL, -1, TS_NO_INT,
				"%s has no known SM count: 132 assumed for the wave quantisation", gpu->sku);
	if (o->mem_bw <= 0 || gpu->link_bytes_per_s <= 0)
		ts_warnings_add(wn, "device-assumed", NULL, -1, TS_NO_INT,
				"the catalog gives no %s%s%s for %s:%s%s", o->mem_bw <= 0 ? "memory bandwidth" : "",
				o->mem_bw <= 0 && gpu->link_bytes_per_s <= 0 ? " and no " : "",
				gpu->link_bytes_per_s <= 0 ? "link bandwidth" : "", gpu->sku,
				o->mem_bw <= 0 ? " element-wise and optimizer time are not priced (0 ms), so "
						 "memory-bound layouts look faster than they are;" : "",
				gpu->link_bytes_per_s <= 0 ? " intra-node links priced at the inter-node "
							     "bandwidth" : "");
	if (o->schedule == TS_SCHED_DUALPIPE && o->est != TS_MEM_EST_MOE)
		ts_warnings_add(wn, "dualpipe-memory", NULL, -1, TS_NO_INT,
				"DualPipe: the %s estimator prices memory as 1F1B's; DualPipe holds two copies of the"
				" parameters and PP+1 micro-batches of activations (DeepSeek-V3 report, table 2),"
				" which the moe-aware estimator counts", ts_mem_estimator_name(o->est));
	if (m->num_experts > 0 && o->routing == TS_ROUTING_NATURAL && o->imbalance <= 0)
		ts_warnings_add(wn, "imbalance-assumed", NULL, -1, TS_NO_INT,
				"natural routing: the busiest EP rank is assumed to get %.2fx the mean load (fitted on two"
				" published runs); give --imbalance measured from a log, or --routing balanced",
				o->calib.imbalance);
}

/* What the ranking rests on: offload, nothing fitting. */
static void plan_warnings(const struct ts_plan *p, struct ts_warnings *wn)
{
	const struct ts_plan_layout *best = top_pick(p);

	if (!best)
		ts_warnings_add(wn, "nothing-fits", NULL, -1, TS_NO_INT,
				"no layout fits in device memory, even with full recompute and offload");
	else if (best->offload)
		ts_warnings_add(wn, "offload-needed", NULL, -1, TS_NO_INT,
				"no layout fits without offload: the ranked layouts move optimizer states or activations"
				" to the host, which the step-time model does not price");
}

/* "TP,PP,VPP,CP,EP[,ETP]" into x; -1 when malformed. */
static int parse_layout(const char *s, struct ts_plan_layout *x)
{
	int64_t v[6] = { 0, 0, 0, 0, 0, 1 };
	int n = 0;

	while (*s && n < 6) {
		int64_t a = 0;
		int digits = 0;
		while (*s >= '0' && *s <= '9' && a < (1 << 20)) {
			a = a * 10 + (*s++ - '0');
			digits++;
		}
		if (!digits || a < 1 || (*s && *s != ','))
			return -1;
		v[n++] = a;
		if (*s == ',')
			s++;
	}
	if (*s || n < 5)
		return -1;
	memset(x, 0, sizeof(*x));
	x->tp = v[0];
	x->pp = v[1];
	x->vpp = v[2];
	x->cp = v[3];
	x->ep = v[4];
	x->etp = v[5];
	x->option = -1;
	x->first_layers = x->last_layers = -1;
	return 0;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_plan_opts o;
	struct ts_plan plan;
	struct ts_model model;
	struct ts_model_args margs;
	struct ts_gpu_catalog cat;
	struct ts_plan_layout one;
	const struct ts_gpu *gpu = NULL;
	struct ts_err err;
	struct ts_sb out;
	const char *model_path = NULL, *sku = NULL, *catalog = NULL, *peak_src = "--peak-tflops";
	const char *layout = NULL, *check = NULL;
	double gib = 0, x, peak_tf = 0, intra = 0, eff = 0, imb = 0;
	const char *catalog_src = "--peak-tflops";
	long long v, per_node = 0, top = 5, near = 8, mbs = 1, first = -1, last = -1;
	int have_args, seq_set = 0, prec = TS_PREC_BF16, routing = TS_ROUTING_NATURAL, overlap = 0, disp = TS_DISPATCH_HIER;
	int force = 0, graphs = TS_GRAPHS_NONE;
	struct ts_warnings wn;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_plan_opts_init(&o);
	ts_plan_init(&plan);
	ts_warnings_init(&wn);
	ts_sb_init(&out);
	ts_err_init(&err);
	memset(&cat, 0, sizeof(cat));
	if (ts_gpu_catalog_init(&cat)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	o.seq = 4096;
	for (size_t i = 0; i < p.nopts && !rc; i++) {
		const struct cli_arg *a = &p.opts[i];
		switch (a->key) {
		case OPT_MODEL: model_path = a->val; break;
		case OPT_GPUS: rc = cli_int(ctx, a, 1, 1 << 20, &v); o.gpus = v; break;
		case OPT_GPU: sku = a->val; break;
		case OPT_GPU_MEM: rc = cli_double(ctx, a, 0.001, 1e6, &gib); break;
		case OPT_GPU_CATALOG: catalog = a->val; break;
		case OPT_PER_NODE: rc = cli_int(ctx, a, 1, 1 << 16, &per_node); break;
		case OPT_SEQ: rc = cli_int(ctx, a, 1, 1 << 26, &v); o.seq = v; seq_set = 1; break;
		case OPT_GBS: rc = cli_int(ctx, a, 1, (long long)1 << 40, &v); o.gbs = v; break;
		case OPT_PRECISION:
			if (strcmp(a->val, "bf16") == 0)
				prec = TS_PREC_BF16;
			else if (strcmp(a->val, "fp8") == 0)
				prec = TS_PREC_FP8;
			else {
				cli_error(ctx, "--precision: expected bf16 or fp8, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_EFFICIENCY: rc = cli_double(ctx, a, 1, 100, &eff); break;
		case OPT_PEAK: rc = cli_double(ctx, a, 0.001, 1e6, &peak_tf); break;
		case OPT_INTRA: rc = cli_double(ctx, a, 0.001, 1e6, &intra); break;
		case OPT_INTER: rc = cli_double(ctx, a, 0.001, 1e6, &x); o.inter_bw = x * 1e9; break;
		case OPT_ESTIMATOR:
			o.est = ts_mem_estimator_parse(a->val);
			if (o.est < 0) {
				cli_error(ctx, "--estimator: expected moe-aware, megatron or megatron-0.14, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_MAX_TP: rc = cli_int(ctx, a, 1, 1 << 16, &v); o.max_tp = v; break;
		case OPT_TOP: rc = cli_int(ctx, a, 0, 1 << 20, &top); break;
		case OPT_NEAR: rc = cli_int(ctx, a, 0, 1 << 20, &near); break;
		case OPT_CONTEXT: rc = cli_double(ctx, a, 0, 1024, &x); o.context_bytes = x * 1073741824.0; break;
		case OPT_FRAG: rc = cli_double(ctx, a, 0, 100, &x); o.fragmentation = x / 100.0; break;
		case OPT_ROUTING:
			if (strcmp(a->val, "natural") == 0)
				routing = TS_ROUTING_NATURAL;
			else if (strcmp(a->val, "balanced") == 0 || strcmp(a->val, "forced") == 0)
				routing = TS_ROUTING_BALANCED;
			else {
				cli_error(ctx, "--routing: expected natural or balanced, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_IMBALANCE: rc = cli_double(ctx, a, 1, 64, &imb); break;
		case OPT_MOE_OVERLAP: overlap = 1; force |= FORCE_OVERLAP; break;
		case OPT_CUDA_GRAPHS:
			graphs = ts_plan_graphs_parse(a->val, strlen(a->val));
			force |= FORCE_GRAPHS;
			if (graphs < 0) {
				cli_error(ctx, "--cuda-graphs: expected none, moe, attn_moe or full, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_TP_OVERLAP: o.tp_overlap = 1; break;
		case OPT_FSDP: o.fsdp = 1; break;
		case OPT_ATTENTION:
			if (strcmp(a->val, "fused") == 0 || strcmp(a->val, "flash") == 0)
				o.attention = TS_ATTN_FUSED;
			else if (strcmp(a->val, "unfused") == 0)
				o.attention = TS_ATTN_UNFUSED;
			else {
				cli_error(ctx, "--attention: expected fused or unfused, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_DISPATCHER:
			force |= FORCE_DISPATCHER;
			if (strcmp(a->val, "deepep") == 0 || strcmp(a->val, "hybridep") == 0)
				disp = TS_DISPATCH_HIER;
			else if (strcmp(a->val, "alltoall") == 0)
				disp = TS_DISPATCH_ALLTOALL;
			else {
				cli_error(ctx, "--dispatcher: expected deepep, hybridep or alltoall, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_SCHEDULE:
			force |= FORCE_SCHEDULE;
			o.schedule = mp_parse_schedule(a->val);
			if (o.schedule < 0) {
				cli_error(ctx, "--schedule: expected 1f1b or dualpipe, got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_LAYOUT:
			layout = a->val;
			if (parse_layout(layout, &one)) {
				cli_error(ctx, "--layout: expected TP,PP,VPP,CP,EP[,ETP] (positive integers), got '%s'", a->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_MBS: rc = cli_int(ctx, a, 1, 1 << 20, &mbs); break;
		case OPT_FIRST: rc = cli_int(ctx, a, 0, TS_MODEL_MAX_LAYERS, &first); break;
		case OPT_LAST: rc = cli_int(ctx, a, 0, TS_MODEL_MAX_LAYERS, &last); break;
		case OPT_CHECK: check = a->val; break;
		case OPT_MAX_MBS: rc = cli_int(ctx, a, 1, 1 << 10, &v); o.max_mbs = v; break;
		}
	}
	if (rc)
		goto out;
	o.routing = routing;
	o.moe_overlap = overlap;
	o.cuda_graphs = graphs;
	o.dispatcher = disp;
	o.imbalance = imb;
	if (eff > 0)
		o.calib.gemm_eff = eff / 100.0;
	if (check) {
		struct check_row *rows = NULL;
		size_t n = 0;
		double rho;
		int failed;
		if (model_path || p.npos || layout) {
			cli_error(ctx, "--check reads everything from the CSV: no --model, --layout or positional file");
			rc = EXIT_USAGE;
			goto out;
		}
		if (catalog && (rc = mp_capacity(ctx, &cat, NULL, catalog, 0, &gpu, &x)))
			goto out;
		if ((rc = check_cases(ctx, check, &o, force, &cat, &wn, &rows, &n)))
			goto out;
		render_check(rows, n, ctx->json, &wn, &out, &rho, &failed);
		free(rows);
		rc = cli_emit(ctx, &out);
		if (!rc && failed)
			rc = EXIT_GATE;
		goto out;
	}
	if (!layout && (first >= 0 || last >= 0 || mbs != 1)) {
		cli_error(ctx, "--mbs, --first-stage-layers and --last-stage-layers go with --layout");
		rc = EXIT_USAGE;
		goto out;
	}
	if (!model_path && p.npos == 1)
		model_path = p.pos[0];
	if (!model_path || p.npos > 1 || !o.gpus || !o.gbs) {
		cli_error(ctx, "needs --model FILE, --gpus N and --gbs N");
		fprintf(stderr, "hint: trainscope plan --model config.json --gpus 64 --gpu H100-SXM --gbs 1024\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = mp_load_model_warn(ctx, model_path, &model, &margs, &have_args, &wn)))
		goto out;
	/* a Megatron log's sequence length is the job's, as in memory and mfu */
	if (have_args && !seq_set && margs.seq_length > 0)
		o.seq = margs.seq_length;
	if ((rc = mp_capacity(ctx, &cat, sku, catalog, gib, &gpu, &o.capacity_bytes)))
		goto out;
	if (o.capacity_bytes <= 0) {
		cli_error(ctx, "the device memory is unknown: give --gpu SKU or --gpu-mem GiB");
		rc = EXIT_USAGE;
		goto out;
	}
	o.precision = prec;
	if (gpu && peak_tf <= 0) {
		double cap = o.capacity_bytes;
		if (ts_plan_opts_device(&o, gpu, prec, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		o.capacity_bytes = cap;
		if (ts_gpu_peak(gpu, prec, &x, &catalog_src, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		peak_src = prec == TS_PREC_FP8 ? "FP8, catalog" : "BF16, catalog";
	} else if (peak_tf > 0) {
		if (gpu) {
			double cap = o.capacity_bytes;
			if (ts_plan_opts_device(&o, gpu, prec, &err)) {
				/* the catalog lacks this peak: --peak-tflops stands in */
				ts_warnings_add(&wn, "catalog-peak-missing", NULL, -1, TS_NO_INT,
						"the catalog has no %s peak for %s: --peak-tflops stands in, and the"
						" device's memory bandwidth, links and SM count are not taken from"
						" the catalog", prec == TS_PREC_FP8 ? "FP8" : "BF16", gpu->sku);
				ts_err_init(&err);
			}
			o.capacity_bytes = cap;
		}
		o.peak_flops = peak_tf * 1e12;
		o.peak_bf16 = 0;
	} else {
		cli_error(ctx, "the dense peak is unknown: give --gpu SKU or --peak-tflops TF");
		rc = EXIT_USAGE;
		goto out;
	}
	if (per_node)
		o.gpus_per_node = per_node;
	else if (o.gpus_per_node < 1)
		o.gpus_per_node = 8;
	if (intra > 0)
		o.intra_bw = intra * 1e9;
	else if (o.intra_bw <= 0)
		o.intra_bw = o.inter_bw;
	if (layout) {
		one.mbs = mbs;
		one.first_layers = first;
		one.last_layers = last;
		if (ts_plan_price(&model, &o, &one, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		job_warnings(&model, &o, gpu, mbs, &wn);
		if (!one.fits)
			ts_warnings_add(&wn, "does-not-fit", NULL, -1, TS_NO_INT,
					"the layout does not fit: %.1f GiB needed on its most loaded rank, %.1f GiB on the device",
					mp_gib(one.memory_bytes), mp_gib(o.capacity_bytes));
		render_layout(&model, &o, &one, gpu ? gpu->sku : "device", peak_src, ctx->json, &wn, &out);
		rc = cli_emit(ctx, &out);
		if (!rc && !one.fits)
			rc = EXIT_GATE;
		goto out;
	}
	if (ts_plan_run(&model, &o, &plan, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	job_warnings(&model, &o, gpu, o.max_mbs, &wn);
	plan_warnings(&plan, &wn);
	if (ctx->json)
		render_json(&model, &o, &plan, gpu ? gpu->sku : NULL,
			    catalog_src ? catalog_src : gpu->source, &wn, &out);
	else
		render_text(&model, &o, &plan, gpu ? gpu->sku : "device", peak_src, top, near, &wn, &out);
	rc = cli_emit(ctx, &out);
	if (!rc && plan.fit_passing == 0)
		rc = EXIT_GATE;
out:
	ts_warnings_release(&wn);
	ts_plan_release(&plan);
	ts_gpu_catalog_release(&cat);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_plan = {
	.name = "plan",
	.stage = STAGE_FIT,
	.summary = "Search every legal layout and rank it by a calibrated step-time model",
	.usage = "plan --model FILE --gpus N --gbs N (--gpu SKU | --gpu-mem GiB --peak-tflops TF) [options]\n"
		 "       plan ... --layout TP,PP,VPP,CP,EP[,ETP] [--mbs N]\n"
		 "       plan --check CASES.csv",
	.description =
		"Enumerates every legal TP/CP/PP/VPP/EP/ETP/DP/MBS layout (heads divisible by TP,\n"
		"experts by EP, GBS by MBS*DP, parallel folding: ETP*EP divides TP*CP*DP; layer\n"
		"counts that do not divide PP*VPP follow Megatron's first/last-stage rule), prices\n"
		"memory for every recompute/offload option (keeping the first that fits) and the\n"
		"step time of each layout that fits: GEMMs from the real per-GPU shapes (tile and\n"
		"wave quantisation, roofline), attention by sequence length, grouped expert GEMMs at\n"
		"the busiest EP rank's load (--routing, --imbalance), EP all-to-all (--moe-overlap,\n"
		"--dispatcher), TP/SP, CP ring, pipeline bubble (--schedule), DP with the distributed optimizer,\n"
		"recompute, FP8 casts and the per-layer fixed cost CUDA graphs remove (--cuda-graphs),\n"
		"with constants fitted on published runs; the defaults are Megatron's (no EP overlap,\n"
		"no CUDA graphs), --check prices each row with its run's settings. Layouts that fit\n"
		"(offload only when nothing fits without) are ranked by predicted step time; each\n"
		"line says why it lost. --layout prices one layout term by term; --check compares the\n"
		"model with a CSV of published runs (predicted vs measured, rank correlation; exit 1\n"
		"when a case is off by more than 15 %, does not fit, or the search claims a layout\n"
		"more than 20 % faster). Exit 1 when nothing fits. Details: docs/memory-plan.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 2,
	.writes_output = 1,
};
