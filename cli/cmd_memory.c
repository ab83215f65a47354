/*
 * cmd_memory.c - `trainscope memory`: per-GPU memory of one layout.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "memplan.h"
#include "trainscope/jsonw.h"
#include "trainscope/run.h"
#include "trainscope/table.h"

enum {
	OPT_MODEL = 1, OPT_TP, OPT_PP, OPT_VPP, OPT_CP, OPT_EP, OPT_ETP, OPT_DP, OPT_GPUS,
	OPT_MBS, OPT_GBS, OPT_SEQ, OPT_RECOMPUTE, OPT_RC_MODULES, OPT_RC_METHOD, OPT_RC_LAYERS,
	OPT_DIST_OPT, OPT_NO_DIST_OPT, OPT_FSDP, OPT_PRECISION, OPT_OFFLOAD, OPT_SP, OPT_ESTIMATOR,
	OPT_GPU, OPT_GPU_MEM, OPT_GPU_CATALOG, OPT_FIRST, OPT_LAST, OPT_CONTEXT, OPT_FRAG, OPT_SCHEDULE
};

static const struct cli_opt opts[] = {
	{ "model", 'm', "FILE", "model: Hugging Face config.json or a Megatron log (arguments block)", OPT_MODEL },
	{ "tp", 0, "N", "tensor parallel size (default 1)", OPT_TP },
	{ "pp", 0, "N", "pipeline parallel size (default 1)", OPT_PP },
	{ "vpp", 0, "N", "virtual pipeline stages per rank; > 1 = interleaved 1F1B (default 1)", OPT_VPP },
	{ "schedule", 0, "S", "pipeline schedule: 1f1b (default) | dualpipe (DeepSeek's; VPP 1, even PP: two stages a rank)", OPT_SCHEDULE },
	{ "cp", 0, "N", "context parallel size (default 1)", OPT_CP },
	{ "ep", 0, "N", "expert parallel size (default 1)", OPT_EP },
	{ "etp", 0, "N", "expert tensor parallel size (default: TP, as Megatron)", OPT_ETP },
	{ "dp", 0, "N", "data parallel size (default: from --gpus, else 1)", OPT_DP },
	{ "gpus", 0, "N", "world size; DP = N / (TP*CP*PP)", OPT_GPUS },
	{ "mbs", 0, "N", "micro-batch size in sequences (default 1)", OPT_MBS },
	{ "gbs", 0, "N", "global batch size in sequences (default MBS*DP*PP)", OPT_GBS },
	{ "seq", 0, "N", "sequence length in tokens (default: a Megatron log's, else 4096)", OPT_SEQ },
	{ "recompute", 0, "MODE", "none | selective | full (default none)", OPT_RECOMPUTE },
	{ "recompute-modules", 0, "LIST", "selective modules: core_attn,mla_up_proj,layernorm,moe_act,mlp,moe,shared_experts", OPT_RC_MODULES },
	{ "recompute-method", 0, "M", "full recompute: uniform | block (default uniform)", OPT_RC_METHOD },
	{ "recompute-layers", 0, "N", "full recompute: layers per group (uniform) or per stage (block)", OPT_RC_LAYERS },
	{ "dist-opt", 0, NULL, "distributed optimizer (the default)", OPT_DIST_OPT },
	{ "no-dist-opt", 0, NULL, "plain optimizer: every DP rank keeps all optimizer states", OPT_NO_DIST_OPT },
	{ "fsdp", 0, NULL, "FSDP / ZeRO-3 (Megatron-FSDP, --use-torch-fsdp2): weights, gradients and optimizer sharded over DP", OPT_FSDP },
	{ "precision", 0, "P", "bf16 | fp8 (default bf16)", OPT_PRECISION },
	{ "offload", 0, "LIST", "optimizer, activations, or both comma-separated", OPT_OFFLOAD },
	{ "sequence-parallel", 0, NULL, "sequence parallelism (needed for MoE with TP > 1)", OPT_SP },
	{ "estimator", 0, "E", "moe-aware (default) | megatron | megatron-0.14", OPT_ESTIMATOR },
	{ "gpu", 0, "SKU", "device from the catalog to fit in (e.g. H100-SXM)", OPT_GPU },
	{ "gpu-mem", 0, "GiB", "device memory to fit in, overrides --gpu", OPT_GPU_MEM },
	{ "gpu-catalog", 0, "FILE", "extra catalog entries (JSON, see docs/mfu.md)", OPT_GPU_CATALOG },
	{ "first-stage-layers", 0, "N", "decoder layers on the first virtual stage (default even split)", OPT_FIRST },
	{ "last-stage-layers", 0, "N", "decoder layers on the last virtual stage (default even split)", OPT_LAST },
	{ "context-gib", 0, "GiB", "allowance for the device context and workspaces (default 1)", OPT_CONTEXT },
	{ "fragmentation-pct", 0, "PCT", "allowance for allocator fragmentation (default 5)", OPT_FRAG },
	{ 0 }
};

/* What the MoE-aware estimator adds to Megatron's formula (docs/memory-plan.md). */
static const char *const adds[] = {
	"MoE activations from top-k expert tokens and shared experts, not the dense FFN width",
	"GQA/MLA attention widths and Qwen3 q/k norms",
	"CP divides activations; optimizer sharded over DP*CP (dense) and expert-DP (experts)",
	"every pipeline rank: uneven stages, schedule-exact micro-batches in flight, logits and MTP on the last stage",
	"recompute per module (selective) and full recompute keeping layer inputs",
	"optimizer and expert-activation offload; FP8 activation and weight-cache bytes",
	"allowance for the device context and allocator fragmentation",
	NULL
};

struct args {
	const char *model, *gpu, *catalog;
	long long gpus;
	double gpu_mem;
	int est, have_dp, have_gbs, have_etp;
};

static int parse(struct cli_ctx *ctx, const struct cli_parsed *p, struct args *a,
		 struct ts_mem_layout *l)
{
	long long v;
	double x;
	int rc = 0;

	for (size_t i = 0; i < p->nopts && !rc; i++) {
		const struct cli_arg *o = &p->opts[i];
		const char *bad;
		switch (o->key) {
		case OPT_MODEL: a->model = o->val; break;
		case OPT_TP: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->tp = v; break;
		case OPT_PP: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->pp = v; break;
		case OPT_VPP: rc = cli_int(ctx, o, 1, 64, &v); l->vpp = v; break;
		case OPT_CP: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->cp = v; break;
		case OPT_EP: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->ep = v; break;
		case OPT_ETP: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->etp = v; a->have_etp = 1; break;
		case OPT_DP: rc = cli_int(ctx, o, 1, 1 << 24, &v); l->dp = v; a->have_dp = 1; break;
		case OPT_GPUS: rc = cli_int(ctx, o, 1, 1 << 24, &a->gpus); break;
		case OPT_MBS: rc = cli_int(ctx, o, 1, 1 << 20, &v); l->mbs = v; break;
		case OPT_GBS: rc = cli_int(ctx, o, 1, (long long)1 << 40, &v); l->gbs = v; a->have_gbs = 1; break;
		case OPT_SEQ: rc = cli_int(ctx, o, 1, 1 << 26, &v); l->seq = v; break;
		case OPT_RECOMPUTE:
			l->recompute = mp_parse_recompute(o->val);
			if (l->recompute < 0) {
				cli_error(ctx, "--recompute: expected none, selective or full, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_RC_MODULES:
			l->recompute_modules = mp_parse_modules(o->val, &bad);
			if (bad) {
				cli_error(ctx, "--recompute-modules: unknown module '%s'", bad);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_RC_METHOD:
			if (strcmp(o->val, "uniform") == 0)
				l->recompute_method = TS_RC_UNIFORM;
			else if (strcmp(o->val, "block") == 0)
				l->recompute_method = TS_RC_BLOCK;
			else {
				cli_error(ctx, "--recompute-method: expected uniform or block, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_RC_LAYERS: rc = cli_int(ctx, o, 1, TS_MODEL_MAX_LAYERS, &v); l->recompute_layers = v; break;
		case OPT_DIST_OPT: l->dist_opt = 1; break;
		case OPT_NO_DIST_OPT: l->dist_opt = 0; break;
		case OPT_FSDP: l->fsdp = 1; break;
		case OPT_PRECISION:
			if (strcmp(o->val, "bf16") == 0)
				l->precision = TS_PREC_BF16;
			else if (strcmp(o->val, "fp8") == 0)
				l->precision = TS_PREC_FP8;
			else {
				cli_error(ctx, "--precision: expected bf16 or fp8, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_OFFLOAD:
			l->offload = mp_parse_offload(o->val);
			if (l->offload < 0) {
				cli_error(ctx, "--offload: expected optimizer, activations or both, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_SP: l->sequence_parallel = 1; break;
		case OPT_SCHEDULE:
			v = mp_parse_schedule(o->val);
			l->dualpipe = v == TS_SCHED_DUALPIPE;
			if (v < 0) {
				cli_error(ctx, "--schedule: expected 1f1b or dualpipe, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_ESTIMATOR:
			a->est = ts_mem_estimator_parse(o->val);
			if (a->est < 0) {
				cli_error(ctx, "--estimator: expected moe-aware, megatron or megatron-0.14, got '%s'", o->val);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_GPU: a->gpu = o->val; break;
		case OPT_GPU_MEM: rc = cli_double(ctx, o, 0.001, 1e6, &a->gpu_mem); break;
		case OPT_GPU_CATALOG: a->catalog = o->val; break;
		case OPT_FIRST: rc = cli_int(ctx, o, 0, TS_MODEL_MAX_LAYERS, &v); l->first_stage_layers = v; break;
		case OPT_LAST: rc = cli_int(ctx, o, 0, TS_MODEL_MAX_LAYERS, &v); l->last_stage_layers = v; break;
		case OPT_CONTEXT: rc = cli_double(ctx, o, 0, 1024, &x); l->context_bytes = x * 1073741824.0; break;
		case OPT_FRAG: rc = cli_double(ctx, o, 0, 100, &x); l->fragmentation = x / 100.0; break;
		}
	}
	return rc;
}

/* Training arguments from a Megatron log become the defaults flags override. */
static void layout_from_args(const struct ts_model_args *g, struct ts_mem_layout *l)
{
	if (g->tp) l->tp = g->tp;
	if (g->pp) l->pp = g->pp;
	if (g->vpp) l->vpp = g->vpp;
	if (g->cp) l->cp = g->cp;
	if (g->ep) l->ep = g->ep;
	if (g->etp) l->etp = g->etp;
	if (g->micro_batch) l->mbs = g->micro_batch;
	if (g->global_batch) l->gbs = g->global_batch;
	if (g->seq_length) l->seq = g->seq_length;
	if (g->vocab_divisor) l->vocab_divisor = g->vocab_divisor;
	l->sequence_parallel = g->sequence_parallel;
	l->dist_opt = g->distributed_optimizer;
	if (g->fp8[0])
		l->precision = TS_PREC_FP8;
	l->recompute = g->recompute_granularity;
	l->recompute_method = g->recompute_method;
	l->recompute_layers = g->recompute_num_layers;
	if (g->recompute_modules_set)
		l->recompute_modules = g->recompute_modules;
}

static void g2(struct ts_table *t, double bytes)
{
	ts_table_cell(t, "%.2f", mp_gib(bytes));
}

/* The parts of one rank's memory, with how each was computed. */
static void breakdown(const struct ts_mem_ctx *c, const struct ts_mem_stage *pk, struct ts_sb *out)
{
	const struct ts_mem_layout *l = &c->l;
	struct ts_table t;

	ts_table_init(&t);
	ts_table_col(&t, "part", NULL, TS_LEFT, 0);
	ts_table_col(&t, "size", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "how", NULL, TS_LEFT, 0);
	ts_table_cell(&t, "parameters");
	ts_table_cell(&t, "-");
	ts_table_cell(&t, "%.3f B TP-sharded, %.3f B replicated, %.3f B expert-sharded (per GPU)",
		      pk->params_tp / 1e9, pk->params_rep / 1e9, pk->params_exp / 1e9);
	ts_table_cell(&t, "weights");
	g2(&t, pk->weights_bytes);
	if (l->fsdp)
		ts_table_cell(&t, "BF16, 2 B/param / %lld (dense), / %lld (experts): FSDP shards",
			      (long long)(l->dp * l->cp), (long long)c->edp);
	else
		ts_table_cell(&t, "BF16, 2 B/param");
	if (pk->fp8_cache_bytes > 0) {
		ts_table_cell(&t, "fp8 weight copies");
		g2(&t, pk->fp8_cache_bytes);
		ts_table_cell(&t, l->fsdp ? "row- and column-wise FP8 copies of the two gathered layers, 2 B/param"
				   : "row- and column-wise FP8 copies of linear weights, 2 B/param");
	}
	if (l->fsdp) {
		ts_table_cell(&t, "fsdp buffers");
		g2(&t, pk->fsdp_buffer_bytes);
		ts_table_cell(&t, "2 units of %.3f B params gathered whole (current + prefetch): BF16 weights + FP32 grads, 6 B/param",
			      pk->fsdp_unit_params / 1e9);
	}
	ts_table_cell(&t, "gradients");
	g2(&t, pk->grads_bytes);
	if (l->fsdp)
		ts_table_cell(&t, "FP32 main gradients, 4 B/param, sharded like the weights");
	else
		ts_table_cell(&t, "FP32 main gradients, 4 B/param");
	ts_table_cell(&t, "optimizer");
	g2(&t, pk->optimizer_bytes);
	if (l->offload & TS_OFFLOAD_OPTIMIZER)
		ts_table_cell(&t, "offloaded to the host (%.2f GiB there)", mp_gib(pk->offload_optimizer_bytes));
	else if (l->dist_opt || l->fsdp)
		ts_table_cell(&t, "FP32 master + Adam m, v: 12 B/param / %lld (dense), / %lld (experts)",
			      (long long)(c->est == TS_MEM_EST_MOE ? l->dp * l->cp : l->dp),
			      (long long)(c->est == TS_MEM_EST_MEGATRON_014 ? l->dp : c->edp));
	else
		ts_table_cell(&t, "FP32 master + Adam m, v: 12 B/param, not sharded");
	ts_table_cell(&t, "activations");
	g2(&t, pk->activations_bytes);
	if (c->est == TS_MEM_EST_MOE)
		ts_table_cell(&t, "layers %.2f (%.2f micro-batches in flight), embedding %.2f, logits %.2f, transient %.2f",
			      mp_gib(pk->layer_act_bytes), pk->inflight, mp_gib(pk->embed_act_bytes),
			      mp_gib(pk->logits_bytes), mp_gib(pk->transient_bytes));
	else
		ts_table_cell(&t, "Megatron's formula, %.2f whole-model micro-batches in flight", pk->inflight);
	for (int i = 0; i < TS_MEM_NMODULES; i++) {
		if (pk->recompute_saved_bytes[i] <= 0)
			continue;
		ts_table_cell(&t, "  recompute saves");
		g2(&t, pk->recompute_saved_bytes[i]);
		ts_table_cell(&t, "%s", ts_recompute_module_name(1 << i));
	}
	if (pk->full_recompute_saved_bytes > 0) {
		ts_table_cell(&t, "  recompute saves");
		g2(&t, pk->full_recompute_saved_bytes);
		ts_table_cell(&t, "full (layer inputs kept)");
	}
	if (pk->offload_activation_bytes > 0) {
		ts_table_cell(&t, "  offload moves");
		g2(&t, pk->offload_activation_bytes);
		ts_table_cell(&t, "expert FC1 input and output to the host");
	}
	ts_table_cell(&t, "allocated");
	g2(&t, pk->allocated_bytes);
	ts_table_cell(&t, "what torch.cuda.max_memory_allocated would report");
	ts_table_cell(&t, "allowance");
	g2(&t, pk->context_bytes + pk->fragmentation_bytes);
	ts_table_cell(&t, "context %.2f GiB + fragmentation %.0f %% of allocated",
		      mp_gib(pk->context_bytes), l->fragmentation * 100.0);
	ts_table_cell(&t, "total");
	g2(&t, pk->total_bytes);
	ts_table_cell(&t, "-");
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
}

static void render_text(const struct ts_mem_ctx *c, const struct ts_mem_stage *st, int64_t nst,
			const struct ts_mem_stage *pk, const struct ts_gpu *gpu, double cap,
			struct ts_sb *out)
{
	const struct ts_model *m = c->m;
	const struct ts_mem_layout *l = &c->l;
	char mods[160], off[40], params[64];
	struct ts_table t;

	mp_modules_str(l->recompute == TS_RC_SELECTIVE ?
		       (l->recompute_modules ? l->recompute_modules : TS_RCM_CORE_ATTN) : 0,
		       mods, sizeof(mods));
	mp_offload_str(l->offload, off, sizeof(off));
	ts_sb_addf(out, "model      %s: %lld layers (%lld MoE), hidden %lld, %lld heads",
		   m->family[0] ? m->family : "model", (long long)m->layers, (long long)m->moe_layers,
		   (long long)m->hidden, (long long)m->heads);
	if (m->num_experts)
		ts_sb_addf(out, ", %lld experts top-%lld", (long long)m->num_experts, (long long)m->topk);
	if (m->mla)
		ts_sb_adds(out, ", MLA");
	if (m->mtp_layers)
		ts_sb_addf(out, ", MTP %lld", (long long)m->mtp_layers);
	ts_sb_addf(out, ", vocab %lld (padded)\n", (long long)c->vocab);
	mp_params_str(m, params, sizeof(params));
	ts_sb_addf(out, "params     %s (the model's vocabulary, MTP excluded)\n", params);
	ts_sb_addf(out, "layout     TP%lld CP%lld PP%lld VPP%lld DP%lld | EP%lld ETP%lld EDP%lld | %lld GPUs\n",
		   (long long)l->tp, (long long)l->cp, (long long)l->pp, (long long)l->vpp,
		   (long long)l->dp, (long long)l->ep, (long long)l->etp, (long long)c->edp,
		   (long long)c->world);
	ts_sb_addf(out, "batch      MBS %lld, GBS %lld, %lld micro-batches, seq %lld, %s schedule\n",
		   (long long)l->mbs, (long long)l->gbs, (long long)c->micro, (long long)l->seq,
		   l->vpp > 1 ? "interleaved 1F1B" : l->pp > 1 ? (l->dualpipe ? "DualPipe" : "1F1B") :
		   "no pipeline");
	ts_sb_addf(out, "options    recompute %s%s%s, %s optimizer, %s, offload %s, SP %s\n",
		   mp_recompute_name(l->recompute), l->recompute == TS_RC_SELECTIVE ? " " : "",
		   l->recompute == TS_RC_SELECTIVE ? mods : "",
		   l->fsdp ? "FSDP-sharded weights, gradients and" : l->dist_opt ? "distributed" : "replicated",
		   l->precision == TS_PREC_FP8 ? "FP8" : "BF16", off, l->sequence_parallel ? "on" : "off");
	ts_sb_addf(out, "estimator  %s\n", ts_mem_estimator_name(c->est));
	if (c->est == TS_MEM_EST_MOE) {
		for (int i = 0; adds[i]; i++)
			ts_sb_addf(out, "  adds: %s\n", adds[i]);
	} else {
		ts_sb_addf(out, "  Megatron rank 0 (%s code path): Theoretical memory footprints: "
			   "weight and optimizer=%.2f MB, activation=%.2f MB, total=%.2f MB\n",
			   pk->mlm_sp_path ? "sequence-parallel + selective" : "without SP",
			   pk->mlm_weight_optimizer_bytes / 1048576.0, pk->mlm_activation_bytes / 1048576.0,
			   (pk->mlm_weight_optimizer_bytes + pk->mlm_activation_bytes) / 1048576.0);
	}
	ts_sb_addc(out, '\n');

	ts_table_init(&t);
	ts_table_col(&t, "rank", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "layers", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "moe", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "holds", NULL, TS_LEFT, 0);
	ts_table_col(&t, "in flight", "micro-batches", TS_RIGHT, 0);
	ts_table_col(&t, "weights", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "grads", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "optimizer", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "activations", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "allocated", "GiB", TS_RIGHT, 0);
	ts_table_col(&t, "total", "GiB", TS_RIGHT, 0);
	for (int64_t i = 0; i < nst; i++) {
		const struct ts_mem_stage *s = &st[i];
		char holds[48];
		snprintf(holds, sizeof(holds), "%s%s%s", s->embedding ? "embedding " : "",
			 s->output ? "logits " : "", s->mtp_layers ? "MTP" : "");
		ts_table_cell(&t, "%lld", (long long)s->rank);
		ts_table_cell(&t, "%lld", (long long)s->layers);
		ts_table_cell(&t, "%lld", (long long)s->moe_layers);
		ts_table_cell(&t, "%s", holds[0] ? holds : "-");
		ts_table_cell(&t, "%.2f", s->inflight);
		g2(&t, s->weights_bytes + s->fp8_cache_bytes + s->fsdp_buffer_bytes);
		g2(&t, s->grads_bytes);
		g2(&t, s->optimizer_bytes);
		g2(&t, s->activations_bytes);
		g2(&t, s->allocated_bytes);
		g2(&t, s->total_bytes);
	}
	ts_table_render(&t, out, 0);
	ts_table_release(&t);

	/* first stage, last stage (logits), and the most loaded one if it is neither */
	for (int k = 0; k < 3; k++) {
		const struct ts_mem_stage *s = k == 0 ? &st[0] : k == 1 ? &st[nst - 1] : pk;
		if ((k == 1 && nst < 2) || (k == 2 && (pk->rank == 0 || pk->rank == nst - 1)))
			continue;
		ts_sb_addf(out, "\nrank %lld (%s)%s\n", (long long)s->rank,
			   k == 0 ? "first stage" : k == 1 ? "last stage" : "middle stage",
			   s->rank == pk->rank ? ": the most loaded" : "");
		breakdown(c, s, out);
	}
	if (cap > 0) {
		double head = cap - pk->total_bytes;
		ts_sb_addf(out, "\nfits %s (%.2f GiB): %s, %s %.2f GiB\n", gpu ? gpu->sku : "device",
			   mp_gib(cap), head >= 0 ? "yes" : "no", head >= 0 ? "headroom" : "short by",
			   mp_gib(fabs(head)));
	}
}

static void stage_json(struct ts_jw *w, const struct ts_mem_stage *s)
{
	ts_jw_ki64(w, "rank", s->rank);
	ts_jw_ki64(w, "layers", s->layers);
	ts_jw_ki64(w, "moe_layers", s->moe_layers);
	ts_jw_ki64(w, "mtp_layers", s->mtp_layers);
	ts_jw_kbool(w, "embedding", s->embedding);
	ts_jw_kbool(w, "output", s->output);
	ts_jw_key(w, "inflight_microbatches");
	ts_jw_fixed(w, s->inflight, 4);
	ts_jw_ki64(w, "params_tp", llround(s->params_tp));
	ts_jw_ki64(w, "params_replicated", llround(s->params_rep));
	ts_jw_ki64(w, "params_expert", llround(s->params_exp));
	ts_jw_ki64(w, "weights_bytes", llround(s->weights_bytes));
	ts_jw_ki64(w, "fp8_weight_cache_bytes", llround(s->fp8_cache_bytes));
	if (s->fsdp_buffer_bytes > 0) /* FSDP only: other outputs keep their keys */
		ts_jw_ki64(w, "fsdp_buffer_bytes", llround(s->fsdp_buffer_bytes));
	ts_jw_ki64(w, "grads_bytes", llround(s->grads_bytes));
	ts_jw_ki64(w, "optimizer_bytes", llround(s->optimizer_bytes));
	ts_jw_ki64(w, "activations_bytes", llround(s->activations_bytes));
	ts_jw_ki64(w, "layer_activations_bytes", llround(s->layer_act_bytes));
	ts_jw_ki64(w, "embedding_activations_bytes", llround(s->embed_act_bytes));
	ts_jw_ki64(w, "logits_bytes", llround(s->logits_bytes));
	ts_jw_ki64(w, "transient_bytes", llround(s->transient_bytes));
	ts_jw_ki64(w, "allocated_bytes", llround(s->allocated_bytes));
	ts_jw_ki64(w, "context_bytes", llround(s->context_bytes));
	ts_jw_ki64(w, "fragmentation_bytes", llround(s->fragmentation_bytes));
	ts_jw_ki64(w, "total_bytes", llround(s->total_bytes));
}

static void render_json(const struct ts_mem_ctx *c, const struct ts_mem_stage *st, int64_t nst,
			const struct ts_mem_stage *pk, const struct ts_gpu *gpu, double cap,
			const struct ts_warnings *wn, struct ts_sb *out)
{
	const struct ts_mem_layout *l = &c->l;
	struct ts_jw w;
	char buf[160];

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.memory/1");
	ts_jw_kstr(&w, "estimator", ts_mem_estimator_name(c->est));
	ts_jw_key(&w, "model");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "family", c->m->family);
	ts_jw_ki64(&w, "layers", c->m->layers);
	ts_jw_ki64(&w, "moe_layers", c->m->moe_layers);
	ts_jw_ki64(&w, "padded_vocab", c->vocab);
	mp_params_json(&w, c->m);
	ts_jw_obj_end(&w);
	ts_jw_key(&w, "layout");
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "tp", l->tp);
	ts_jw_ki64(&w, "pp", l->pp);
	ts_jw_ki64(&w, "vpp", l->vpp);
	ts_jw_kstr(&w, "schedule", mp_schedule_name(l->dualpipe ? TS_SCHED_DUALPIPE : TS_SCHED_1F1B));
	ts_jw_ki64(&w, "cp", l->cp);
	ts_jw_ki64(&w, "ep", l->ep);
	ts_jw_ki64(&w, "etp", l->etp);
	ts_jw_ki64(&w, "dp", l->dp);
	ts_jw_ki64(&w, "edp", c->edp);
	ts_jw_ki64(&w, "gpus", c->world);
	ts_jw_ki64(&w, "mbs", l->mbs);
	ts_jw_ki64(&w, "gbs", l->gbs);
	ts_jw_ki64(&w, "microbatches", c->micro);
	ts_jw_ki64(&w, "seq", l->seq);
	ts_jw_kstr(&w, "recompute", mp_recompute_name(l->recompute));
	mp_modules_str(l->recompute == TS_RC_SELECTIVE ?
		       (l->recompute_modules ? l->recompute_modules : TS_RCM_CORE_ATTN) : 0,
		       buf, sizeof(buf));
	ts_jw_kstr(&w, "recompute_modules", buf);
	ts_jw_kbool(&w, "dist_opt", l->dist_opt);
	if (l->fsdp)
		ts_jw_kbool(&w, "fsdp", 1);
	ts_jw_kstr(&w, "precision", l->precision == TS_PREC_FP8 ? "fp8" : "bf16");
	mp_offload_str(l->offload, buf, sizeof(buf));
	ts_jw_kstr(&w, "offload", buf);
	ts_jw_kbool(&w, "sequence_parallel", l->sequence_parallel);
	ts_jw_obj_end(&w);
	stage_json(&w, pk);
	ts_jw_key(&w, "recompute_saved_bytes");
	ts_jw_obj(&w);
	for (int i = 0; i < TS_MEM_NMODULES; i++)
		ts_jw_ki64(&w, ts_recompute_module_name(1 << i), llround(pk->recompute_saved_bytes[i]));
	ts_jw_ki64(&w, "full", llround(pk->full_recompute_saved_bytes));
	ts_jw_obj_end(&w);
	ts_jw_ki64(&w, "offload_optimizer_bytes", llround(pk->offload_optimizer_bytes));
	ts_jw_ki64(&w, "offload_activations_bytes", llround(pk->offload_activation_bytes));
	ts_jw_kstr(&w, "gpu", gpu ? gpu->sku : NULL);
	if (cap > 0) {
		ts_jw_ki64(&w, "capacity_bytes", llround(cap));
		ts_jw_kbool(&w, "fits", pk->total_bytes <= cap);
		ts_jw_ki64(&w, "headroom_bytes", llround(cap - pk->total_bytes));
	} else {
		ts_jw_key(&w, "capacity_bytes");
		ts_jw_null(&w);
		ts_jw_key(&w, "fits");
		ts_jw_null(&w);
		ts_jw_key(&w, "headroom_bytes");
		ts_jw_null(&w);
	}
	if (c->est != TS_MEM_EST_MOE) {
		ts_jw_key(&w, "megatron");
		ts_jw_obj(&w);
		ts_jw_ki64(&w, "weight_optimizer_bytes", llround(pk->mlm_weight_optimizer_bytes));
		ts_jw_ki64(&w, "activation_bytes", llround(pk->mlm_activation_bytes));
		ts_jw_ki64(&w, "total_bytes", llround(pk->mlm_weight_optimizer_bytes + pk->mlm_activation_bytes));
		ts_jw_kstr(&w, "code_path", pk->mlm_sp_path ? "compute_activation_memory" :
			   "compute_activation_memory_without_sp");
		ts_jw_obj_end(&w);
	} else {
		ts_jw_key(&w, "adds");
		ts_jw_arr(&w);
		for (int i = 0; adds[i]; i++)
			ts_jw_str(&w, adds[i]);
		ts_jw_arr_end(&w);
	}
	ts_jw_key(&w, "stages");
	ts_jw_arr(&w);
	for (int64_t i = 0; i < nst; i++) {
		ts_jw_obj(&w);
		stage_json(&w, &st[i]);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_warnings_json(&w, wn, wn->v.n);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

/* What the estimate assumed that the user did not say. */
static void memory_warnings(const struct ts_model *m, const struct ts_mem_layout *l, int est, int etp_defaulted,
			    double cap, const struct ts_mem_stage *pk, struct ts_warnings *wn)
{
	if (etp_defaulted && l->tp > 1)
		ts_warnings_add(wn, "etp-defaulted", NULL, -1, TS_NO_INT,
				"ETP not given: %lld assumed (TP, Megatron's default); the MoE recipes usually set --etp 1",
				(long long)l->etp);
	if (m->num_experts > 0 && est != TS_MEM_EST_MOE)
		ts_warnings_add(wn, "estimator-ignores-moe", NULL, -1, TS_NO_INT,
				"the %s estimator charges the dense FFN's activations to every layer: MoE activations are"
				" not modelled (the default moe-aware estimator does)", ts_mem_estimator_name(est));
	if (cap <= 0)
		ts_warnings_add(wn, "no-device", NULL, -1, TS_NO_INT,
				"no --gpu or --gpu-mem: whether the layout fits is not judged");
	else if (pk->total_bytes > cap)
		ts_warnings_add(wn, "does-not-fit", NULL, -1, TS_NO_INT,
				"the layout does not fit: %.2f GiB on rank %lld, %.2f GiB on the device",
				mp_gib(pk->total_bytes), (long long)pk->rank, mp_gib(cap));
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct args a;
	struct ts_model model;
	struct ts_model_args margs;
	struct ts_mem_layout l, flags;
	struct ts_mem_ctx c;
	struct ts_mem_stage st[64], pk;
	struct ts_gpu_catalog cat;
	const struct ts_gpu *gpu = NULL;
	struct ts_err err;
	struct ts_sb out;
	struct ts_warnings wn;
	double cap = 0;
	int64_t nst;
	int have_args = 0, etp_defaulted = 0;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	memset(&a, 0, sizeof(a));
	ts_warnings_init(&wn);
	ts_sb_init(&out);
	ts_err_init(&err);
	memset(&cat, 0, sizeof(cat));
	if (ts_gpu_catalog_init(&cat)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	ts_mem_layout_init(&flags);
	/* first pass: validate every flag and find the model; the layout flags
	 * are applied again below, over what a Megatron log states */
	if ((rc = parse(ctx, &p, &a, &flags)))
		goto out;
	if (!a.model && p.npos == 1)
		a.model = p.pos[0];
	if (!a.model || p.npos > 1) {
		cli_error(ctx, "give one model file (--model FILE)");
		fprintf(stderr, "hint: trainscope memory --model config.json --tp 2 --pp 4 --gpus 64\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = mp_load_model_warn(ctx, a.model, &model, &margs, &have_args, &wn)))
		goto out;
	/* flags override what a Megatron log stated */
	ts_mem_layout_init(&l);
	if (have_args)
		layout_from_args(&margs, &l);
	parse(ctx, &p, &a, &l);
	if (have_args && !a.have_dp && !a.gpus && margs.world_size)
		a.gpus = margs.world_size;
	if (a.gpus) {
		int64_t mp = l.tp * l.cp * l.pp;
		if (a.gpus % mp) {
			cli_error(ctx, "--gpus %lld is not a multiple of TP*CP*PP = %lld", a.gpus, (long long)mp);
			rc = EXIT_USAGE;
			goto out;
		}
		if (a.have_dp && l.dp != a.gpus / mp) {
			cli_error(ctx, "--dp %lld disagrees with --gpus %lld / (TP*CP*PP)", (long long)l.dp, a.gpus);
			rc = EXIT_USAGE;
			goto out;
		}
		l.dp = a.gpus / mp;
	}
	if (!a.have_etp && !(have_args && margs.etp) && model.num_experts > 0) {
		l.etp = l.tp;
		etp_defaulted = 1;
	}
	if (!a.have_gbs && !(have_args && margs.global_batch))
		l.gbs = l.mbs * l.dp * l.pp;
	if ((rc = mp_capacity(ctx, &cat, a.gpu, a.catalog, a.gpu_mem, &gpu, &cap)))
		goto out;
	if (ts_mem_prepare(&c, &model, &l, a.est, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	nst = a.est == TS_MEM_EST_MOE ? l.pp : 1;
	if (nst > 64)
		nst = 64;
	for (int64_t r = 0; r < nst; r++)
		ts_mem_stage_eval(&c, r, &st[r]);
	ts_mem_peak(&c, &pk);
	memory_warnings(&model, &l, a.est, etp_defaulted, cap, &pk, &wn);
	if (ctx->json) {
		render_json(&c, st, nst, &pk, gpu, cap, &wn, &out);
	} else {
		render_text(&c, st, nst, &pk, gpu, cap, &out);
		if (wn.v.n) {
			ts_sb_addc(&out, '\n');
			ts_warnings_text(&out, &wn, wn.v.n, "", "");
		}
	}
	rc = cli_emit(ctx, &out);
	if (!rc && cap > 0 && pk.total_bytes > cap)
		rc = EXIT_GATE;
out:
	ts_warnings_release(&wn);
	ts_gpu_catalog_release(&cat);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_memory = {
	.name = "memory",
	.stage = STAGE_FIT,
	.summary = "Per-GPU memory of one parallel layout: weights, gradients, optimizer, activations",
	.usage = "memory --model FILE [layout options] [--gpu SKU | --gpu-mem GiB]",
	.description =
		"Estimates the memory of every pipeline rank for one layout (TP, PP, VPP, CP, EP,\n"
		"ETP, DP), breaks down the first stage, the last stage (logits) and the most\n"
		"loaded rank: parameters by class (TP-sharded,\n"
		"replicated, expert-sharded), BF16 weights, FP32 gradients, optimizer states\n"
		"(sharded over DP*CP for dense and expert-DP for experts with the distributed\n"
		"optimizer), activations of the micro-batches in flight for the schedule, logits,\n"
		"recompute savings per module, offload, and an allowance for the device context\n"
		"and fragmentation. --estimator megatron reproduces Megatron-LM's theoretical\n"
		"formula (its 'Theoretical memory footprints' line). With --gpu or --gpu-mem the\n"
		"exit status is 1 when the layout does not fit. Formulas: docs/memory-plan.md.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
