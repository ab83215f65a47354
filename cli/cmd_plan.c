/*
 * cmd_plan.c - `trainscope plan`: which layout to run, Fit then Scale.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "memplan.h"
#include "trainscope/jsonw.h"
#include "trainscope/plan.h"
#include "trainscope/table.h"

enum {
	OPT_MODEL = 1, OPT_GPUS, OPT_GPU, OPT_GPU_MEM, OPT_GPU_CATALOG, OPT_PER_NODE, OPT_SEQ,
	OPT_GBS, OPT_PRECISION, OPT_EFFICIENCY, OPT_PEAK, OPT_INTRA, OPT_INTER, OPT_ESTIMATOR,
	OPT_MAX_TP, OPT_TOP, OPT_NEAR, OPT_CONTEXT, OPT_FRAG
};

static const struct cli_opt opts[] = {
	{ "model", 'm', "FILE", "model: Hugging Face config.json or a Megatron log (arguments block)", OPT_MODEL },
	{ "gpus", 0, "N", "GPUs in the job", OPT_GPUS },
	{ "gpu", 0, "SKU", "device from the catalog (memory, peak, link)", OPT_GPU },
	{ "gpu-mem", 0, "GiB", "device memory, overrides the catalog", OPT_GPU_MEM },
	{ "gpu-catalog", 0, "FILE", "extra catalog entries (JSON, see docs/mfu.md)", OPT_GPU_CATALOG },
	{ "gpus-per-node", 0, "N", "GPUs in one NVLink/MTLink domain (default: the catalog's, else 8)", OPT_PER_NODE },
	{ "seq", 0, "N", "sequence length in tokens (default 4096)", OPT_SEQ },
	{ "gbs", 0, "N", "global batch size in sequences (required)", OPT_GBS },
	{ "precision", 0, "P", "bf16 | fp8 (default bf16): memory and the peak used", OPT_PRECISION },
	{ "efficiency", 0, "PCT", "share of the dense peak compute achieves (default 40)", OPT_EFFICIENCY },
	{ "peak-tflops", 0, "TF", "dense peak per GPU, overrides the catalog", OPT_PEAK },
	{ "intra-node-gbps", 0, "GB/s", "per GPU per direction inside a node (default: catalog link / 2)", OPT_INTRA },
	{ "inter-node-gbps", 0, "GB/s", "per GPU per direction across nodes (default 50 = 400 Gb/s NIC)", OPT_INTER },
	{ "estimator", 0, "E", "memory estimator: moe-aware (default) | megatron | megatron-0.14", OPT_ESTIMATOR },
	{ "max-tp", 0, "N", "largest TP tried (default: GPUs per node)", OPT_MAX_TP },
	{ "top", 0, "N", "layouts shown (default 5)", OPT_TOP },
	{ "near", 0, "N", "near misses shown (default 8)", OPT_NEAR },
	{ "context-gib", 0, "GiB", "allowance for the device context and workspaces (default 1)", OPT_CONTEXT },
	{ "fragmentation-pct", 0, "PCT", "allowance for allocator fragmentation (default 5)", OPT_FRAG },
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

/* Why a layout won or lost, in one line. */
static void reason(const struct ts_plan *p, const struct ts_plan_layout *x, double cap,
		   int64_t node, int64_t seq, char *buf, size_t size)
{
	switch (x->eliminated_by) {
	case TS_RULE_NONE:
		snprintf(buf, size, "fits with %.1f GiB to spare; model parallelism %lld; DP %lld; %s",
			 mp_gib(cap - x->memory_bytes), (long long)ts_plan_mp(x), (long long)x->dp,
			 x->violations ? "some Scale rules waived" : "all rules kept");
		break;
	case TS_RULE_FIT:
		snprintf(buf, size, "out of memory by %.2f GiB even with %s recompute%s",
			 mp_gib(x->memory_bytes - cap), rc_label(x), x->offload ? " and offload" : "");
		break;
	case TS_RULE_OFFLOAD_LAST:
		snprintf(buf, size, "needs offload while other layouts fit without");
		break;
	case TS_RULE_MIN_MP:
		snprintf(buf, size, "model parallelism %lld > %lld", (long long)ts_plan_mp(x),
			 (long long)p->min_mp);
		break;
	case TS_RULE_SELECTIVE_FIRST:
		snprintf(buf, size, "needs %s recompute; a lighter one fits elsewhere", rc_label(x));
		break;
	case TS_RULE_MAX_DP:
		snprintf(buf, size, "DP %lld: TP*CP*PP %lld > %lld", (long long)x->dp,
			 (long long)(x->tp * x->cp * x->pp), (long long)p->min_attn_mp);
		break;
	case TS_RULE_NODE:
		snprintf(buf, size, "TP %lld or ETP*EP %lld spans more than one %lld-GPU node",
			 (long long)x->tp, (long long)(x->etp * x->ep), (long long)node);
		break;
	case TS_RULE_PP_VPP:
		snprintf(buf, size, "PP %lld without VPP", (long long)x->pp);
		break;
	case TS_RULE_EP_BEFORE_ETP:
		snprintf(buf, size, "ETP %lld where EP alone works", (long long)x->etp);
		break;
	case TS_RULE_CP_LONG:
		snprintf(buf, size, "CP %lld at %lld tokens (%lld per CP rank < 4096)", (long long)x->cp,
			 (long long)seq, (long long)(seq / x->cp));
		break;
	default:
		snprintf(buf, size, "-");
	}
}

static void row(struct ts_table *t, const struct ts_plan *p, const struct ts_plan_layout *x,
		double cap, int64_t node, int64_t seq)
{
	char why[200];
	double intra = 0, inter = 0;

	for (int g = 0; g < TS_COMM_COUNT; g++) {
		intra += x->comm_bytes[g][TS_LINK_INTRA];
		inter += x->comm_bytes[g][TS_LINK_INTER];
	}
	reason(p, x, cap, node, seq, why, sizeof(why));
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
		ts_table_cell(t, "%.2f", x->exposed_comm_s);
		ts_table_cell(t, "%.2f", x->bubble_s);
		ts_table_cell(t, "%.1f", intra / 1e9);
		ts_table_cell(t, "%.1f", inter / 1e9);
	} else {
		for (int i = 0; i < 5; i++)
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
	ts_table_col(t, "exposed comm", "s", TS_RIGHT, 0);
	ts_table_col(t, "bubble", "s", TS_RIGHT, 0);
	ts_table_col(t, "intra-node", "GB/step", TS_RIGHT, 0);
	ts_table_col(t, "inter-node", "GB/step", TS_RIGHT, 0);
	ts_table_col(t, "why", NULL, TS_LEFT, 0);
}

static void render_text(const struct ts_model *m, const struct ts_plan_opts *o,
			const struct ts_plan *p, const char *gpu, const char *peak_src,
			long long top, long long near, struct ts_sb *out)
{
	struct ts_table t;
	long long shown = 0;

	ts_sb_addf(out, "plan       %s on %lld x %s (%.2f GiB, %lld per node), seq %lld, GBS %lld\n",
		   m->family[0] ? m->family : "model", (long long)o->gpus, gpu, mp_gib(o->capacity_bytes),
		   (long long)o->gpus_per_node, (long long)o->seq, (long long)o->gbs);
	ts_sb_addf(out, "search     %zu layouts (parallel x MBS) priced with the %s estimator; %zu fit; %zu kept by the rules\n",
		   p->parallel_layouts, ts_mem_estimator_name(o->est), p->fitting, p->survivors);
	ts_sb_addf(out, "step time  compute at %.0f %% of %.1f TFLOP/s dense (%s); links %.0f GB/s inside a node, %.0f GB/s across (per GPU, per direction)\n",
		   o->efficiency * 100.0, o->peak_flops / 1e12, peak_src, o->intra_bw / 1e9, o->inter_bw / 1e9);
	ts_sb_adds(out, "rules      ");
	for (int r = TS_RULE_OFFLOAD_LAST; r < TS_RULE_COUNT; r++)
		ts_sb_addf(out, "%s%d %s%s", r > TS_RULE_OFFLOAD_LAST ? ", " : "", r - 1, ts_plan_rule_key(r),
			   (p->waived & (1 << r)) ? " (waived: no layout that fits keeps it)" : "");
	ts_sb_addc(out, '\n');
	if (p->survivors == 0) {
		ts_sb_adds(out, "\nnothing fits: more GPUs, a shorter sequence or a larger device is needed\n");
	} else {
		ts_sb_adds(out, "\ntop layouts\n");
		ts_table_init(&t);
		cols(&t);
		for (size_t i = 0; i < p->n && (long long)i < top; i++)
			if (p->v[i].eliminated_by == TS_RULE_NONE)
				row(&t, p, &p->v[i], o->capacity_bytes, o->gpus_per_node, o->seq);
		ts_table_render(&t, out, 0);
		ts_table_release(&t);
	}
	/* the best layout each rule removed, nearest rule first, then the closest OOMs */
	ts_sb_adds(out, "\nnear misses\n");
	ts_table_init(&t);
	cols(&t);
	for (int r = TS_RULE_COUNT - 1; r >= TS_RULE_FIT && shown < near; r--) {
		int per_rule = r == TS_RULE_FIT ? 3 : 1;
		for (size_t i = 0; i < p->n && per_rule > 0 && shown < near; i++)
			if (p->v[i].eliminated_by == r) {
				row(&t, p, &p->v[i], o->capacity_bytes, o->gpus_per_node, o->seq);
				per_rule--;
				shown++;
			}
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);
}

static void render_json(const struct ts_model *m, const struct ts_plan_opts *o,
			const struct ts_plan *p, const char *gpu, const char *peak_source,
			struct ts_sb *out)
{
	struct ts_jw w;
	char buf[200];

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.plan/1");
	ts_jw_kstr(&w, "model", m->family);
	ts_jw_ki64(&w, "gpus", o->gpus);
	ts_jw_ki64(&w, "gpus_per_node", o->gpus_per_node);
	ts_jw_kstr(&w, "gpu", gpu);
	ts_jw_ki64(&w, "capacity_bytes", llround(o->capacity_bytes));
	ts_jw_ki64(&w, "seq", o->seq);
	ts_jw_ki64(&w, "gbs", o->gbs);
	ts_jw_kstr(&w, "precision", o->precision == TS_PREC_FP8 ? "fp8" : "bf16");
	ts_jw_kstr(&w, "estimator", ts_mem_estimator_name(o->est));
	ts_jw_key(&w, "efficiency_pct");
	ts_jw_fixed(&w, o->efficiency * 100.0, 1);
	ts_jw_key(&w, "peak_tflops");
	ts_jw_fixed(&w, o->peak_flops / 1e12, 1);
	ts_jw_kstr(&w, "peak_source", peak_source);
	ts_jw_ki64(&w, "intra_node_bytes_per_s", llround(o->intra_bw));
	ts_jw_ki64(&w, "inter_node_bytes_per_s", llround(o->inter_bw));
	ts_jw_kf64(&w, "model_flops_per_step", p->flops_per_step);
	ts_jw_ki64(&w, "parallel_layouts", (int64_t)p->parallel_layouts);
	ts_jw_ki64(&w, "fitting", (int64_t)p->fitting);
	ts_jw_ki64(&w, "survivors", (int64_t)p->survivors);
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
		ts_jw_ki64(&w, "tp", x->tp);
		ts_jw_ki64(&w, "pp", x->pp);
		ts_jw_ki64(&w, "vpp", x->vpp);
		ts_jw_ki64(&w, "cp", x->cp);
		ts_jw_ki64(&w, "ep", x->ep);
		ts_jw_ki64(&w, "etp", x->etp);
		ts_jw_ki64(&w, "dp", x->dp);
		ts_jw_ki64(&w, "edp", x->edp);
		ts_jw_ki64(&w, "mbs", x->mbs);
		ts_jw_ki64(&w, "microbatches", x->micro);
		ts_jw_kstr(&w, "recompute", mp_recompute_name(x->recompute));
		mp_modules_str(x->modules, buf, sizeof(buf));
		ts_jw_kstr(&w, "recompute_modules", buf);
		mp_offload_str(x->offload, buf, sizeof(buf));
		ts_jw_kstr(&w, "offload", buf);
		ts_jw_kbool(&w, "uneven_stages", x->uneven);
		ts_jw_ki64(&w, "memory_bytes", llround(x->memory_bytes));
		ts_jw_key(&w, "memory_by_option_bytes");
		ts_jw_obj(&w);
		for (int k = 0; k < p->noptions; k++) {
			option_key(p, k, buf, sizeof(buf));
			ts_jw_ki64(&w, buf, llround(x->option_bytes[k]));
		}
		ts_jw_obj_end(&w);
		ts_jw_ki64(&w, "allocated_bytes", llround(x->allocated_bytes));
		ts_jw_ki64(&w, "peak_pp_rank", x->peak_rank);
		ts_jw_kbool(&w, "fits", x->fits);
		ts_jw_ki64(&w, "model_parallel", ts_plan_mp(x));
		if (x->fits) {
			ts_jw_key(&w, "step_ms");
			ts_jw_fixed(&w, x->step_s * 1e3, 3);
			ts_jw_key(&w, "compute_ms");
			ts_jw_fixed(&w, x->compute_s * 1e3, 3);
			ts_jw_key(&w, "exposed_comm_ms");
			ts_jw_fixed(&w, x->exposed_comm_s * 1e3, 3);
			ts_jw_key(&w, "bubble_ms");
			ts_jw_fixed(&w, x->bubble_s * 1e3, 3);
			ts_jw_key(&w, "comm_bytes");
			ts_jw_obj(&w);
			for (int g = 0; g < TS_COMM_COUNT; g++) {
				char k[32];
				snprintf(k, sizeof(k), "%s_intra", ts_plan_comm_name(g));
				ts_jw_ki64(&w, k, llround(x->comm_bytes[g][TS_LINK_INTRA]));
				snprintf(k, sizeof(k), "%s_inter", ts_plan_comm_name(g));
				ts_jw_ki64(&w, k, llround(x->comm_bytes[g][TS_LINK_INTER]));
			}
			ts_jw_obj_end(&w);
		}
		ts_jw_key(&w, "violations");
		ts_jw_arr(&w);
		for (int r = TS_RULE_NODE; r < TS_RULE_COUNT; r++)
			if (x->violations & (1 << r))
				ts_jw_str(&w, ts_plan_rule_key(r));
		ts_jw_arr_end(&w);
		ts_jw_kstr(&w, "eliminated_by", x->eliminated_by ? ts_plan_rule_key(x->eliminated_by) : NULL);
		reason(p, x, o->capacity_bytes, o->gpus_per_node, o->seq, buf, sizeof(buf));
		ts_jw_kstr(&w, "reason", buf);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_plan_opts o;
	struct ts_plan plan;
	struct ts_model model;
	struct ts_model_args margs;
	struct ts_gpu_catalog cat;
	const struct ts_gpu *gpu = NULL;
	struct ts_err err;
	struct ts_sb out;
	const char *model_path = NULL, *sku = NULL, *catalog = NULL, *peak_src = "--peak-tflops";
	double gib = 0, x, peak_tf = 0, intra = 0;
	const char *catalog_src = "--peak-tflops";
	long long v, per_node = 0, top = 5, near = 8;
	int have_args, prec = TS_PREC_BF16;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_plan_opts_init(&o);
	ts_plan_init(&plan);
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
		case OPT_SEQ: rc = cli_int(ctx, a, 1, 1 << 26, &v); o.seq = v; break;
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
		case OPT_EFFICIENCY: rc = cli_double(ctx, a, 1, 100, &x); o.efficiency = x / 100.0; break;
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
		}
	}
	if (rc)
		goto out;
	if (!model_path && p.npos == 1)
		model_path = p.pos[0];
	if (!model_path || p.npos > 1 || !o.gpus || !o.gbs) {
		cli_error(ctx, "needs --model FILE, --gpus N and --gbs N");
		fprintf(stderr, "hint: trainscope plan --model config.json --gpus 64 --gpu H100-SXM --gbs 1024\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = mp_load_model(ctx, model_path, &model, &margs, &have_args)))
		goto out;
	if ((rc = mp_capacity(ctx, &cat, sku, catalog, gib, &gpu, &o.capacity_bytes)))
		goto out;
	if (o.capacity_bytes <= 0) {
		cli_error(ctx, "the device memory is unknown: give --gpu SKU or --gpu-mem GiB");
		rc = EXIT_USAGE;
		goto out;
	}
	o.precision = prec;
	if (peak_tf > 0) {
		o.peak_flops = peak_tf * 1e12;
	} else if (gpu) {
		if (ts_gpu_peak(gpu, prec, &peak_tf, &catalog_src, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		o.peak_flops = peak_tf * 1e12;
		peak_src = prec == TS_PREC_FP8 ? "FP8, catalog" : "BF16, catalog";
	} else {
		cli_error(ctx, "the dense peak is unknown: give --gpu SKU or --peak-tflops TF");
		rc = EXIT_USAGE;
		goto out;
	}
	o.gpus_per_node = per_node ? per_node : gpu && gpu->link_domain > 0 ? gpu->link_domain : 8;
	if (intra > 0)
		o.intra_bw = intra * 1e9;
	else if (gpu && gpu->link_bytes_per_s > 0)
		o.intra_bw = gpu->link_bytes_per_s / 2.0;
	else
		o.intra_bw = o.inter_bw;
	if (ts_plan_run(&model, &o, &plan, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		render_json(&model, &o, &plan, gpu ? gpu->sku : NULL,
			    catalog_src ? catalog_src : gpu->source, &out);
	else
		render_text(&model, &o, &plan, gpu ? gpu->sku : "device", peak_src, top, near, &out);
	rc = cli_emit(ctx, &out);
	if (!rc && plan.survivors == 0)
		rc = EXIT_GATE;
out:
	ts_plan_release(&plan);
	ts_gpu_catalog_release(&cat);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_plan = {
	.name = "plan",
	.stage = STAGE_FIT,
	.summary = "Search every legal layout and pick one: fit first, then scale",
	.usage = "plan --model FILE --gpus N --gbs N (--gpu SKU | --gpu-mem GiB --peak-tflops TF) [options]",
	.description =
		"Enumerates every legal TP/CP/PP/VPP/EP/ETP/DP/MBS layout (heads divisible by TP,\n"
		"experts by EP, GBS by MBS*DP, parallel folding: ETP*EP divides TP*CP*DP), prices\n"
		"memory for every recompute/offload option (keeping the first that fits), applies the\n"
		"workflow's rules in order: offload last; smallest model parallelism; selective\n"
		"before full recompute; maximise DP; TP and ETP*EP inside one node; PP with VPP;\n"
		"EP before ETP; CP only for long sequences. What is left is ranked by a\n"
		"first-order step time (compute at a stated efficiency, exposed communication per\n"
		"link, pipeline bubble). Prints the top layouts and the near misses with the rule\n"
		"they lost to; --json lists every layout. Exit 1 when nothing fits.\n"
		"Details: docs/memory-plan.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
