/*
 * flops.c - Megatron-LM's model FLOPs formula (current and historical),
 * split into named terms, plus recompute FLOPs and MFU/HFU.
 *
 * Every formula is expressed through one "layer model": FLOPs per token of
 * one layer's attention projections, dense MLP and MoE parts, core
 * attention per step, and how many layers of each kind are charged. The
 * per-term breakdown and the recompute (HFU) terms then fall out of the
 * same numbers, so the total always equals the formula the version in
 * question printed. Sources: Megatron-LM training.py
 * num_floating_point_operations at the commits named in flops.h, and
 * MT-MegatronLM's musa_patch (../shared/reference/flops-memory-workflow.md
 * sections 1.2, 1.4, 1.5), and torchtitan's 6 x active parameters + the
 * attention term (models/utils.py and each model's get_nparams_and_flops:
 * Llama 3, Qwen3, DeepSeek-V3; and the two older versions).
 */
#include <math.h>
#include <string.h>
#include <strings.h>
#include "trainscope/flops.h"

static const char *const formula_names[TS_FORMULA_COUNT] = {
	"mlm2026", "mlm2024", "mlm2023", "mt-megatronlm", "torchtitan", "torchtitan-headdims",
	"torchtitan-dim"
};

static const char *const term_names[TS_FT_COUNT] = {
	"attn_proj", "core_attn", "dense_mlp", "routed_experts", "shared_experts", "router",
	"logits", "mtp"
};

const char *ts_formula_name(int formula)
{
	return formula >= 0 && formula < TS_FORMULA_COUNT ? formula_names[formula] : "?";
}

int ts_formula_parse(const char *s)
{
	static const struct { const char *name; int f; } alias[] = {
		{ "current", TS_FORMULA_CURRENT }, { "2026", TS_FORMULA_CURRENT },
		{ "2025", TS_FORMULA_CURRENT }, { "mlm2025", TS_FORMULA_CURRENT },
		{ "2024", TS_FORMULA_MLM2024 }, { "2023", TS_FORMULA_MLM2023 },
		{ "mt", TS_FORMULA_MT }, { "titan", TS_FORMULA_TITAN },
	};
	for (int i = 0; i < TS_FORMULA_COUNT; i++)
		if (strcasecmp(s, formula_names[i]) == 0)
			return i;
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcasecmp(s, alias[i].name) == 0)
			return alias[i].f;
	return -1;
}

int ts_formula_is_titan(int formula)
{
	return formula == TS_FORMULA_TITAN || formula == TS_FORMULA_TITAN_HEADDIMS ||
	       formula == TS_FORMULA_TITAN_DIM;
}

const char *ts_flops_term_name(int term)
{
	return term >= 0 && term < TS_FT_COUNT ? term_names[term] : "?";
}

void ts_flops_shape_init(struct ts_flops_shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->mtp = -1;
}

void ts_flops_shape_from_args(struct ts_flops_shape *sh, const struct ts_model_args *a)
{
#define TAKE(field, value) if (value) sh->field = value
	TAKE(seq, a->seq_length);
	TAKE(gbs, a->global_batch);
	TAKE(tp, a->tp);
	TAKE(pp, a->pp);
	TAKE(vpp, a->vpp);
	TAKE(vocab_divisor, a->vocab_divisor);
	TAKE(recompute, a->recompute_granularity);
	TAKE(recompute_method, a->recompute_method);
	TAKE(recompute_layers, a->recompute_num_layers);
	TAKE(recompute_modules, a->recompute_modules);
#undef TAKE
}

/* One formula version reduced to per-layer quantities (fwd+bwd FLOPs). */
struct layer_model {
	double att_tok;     /* attention projections per token per layer */
	double core_step;   /* core attention per step per layer */
	double dense_tok;   /* MLP per token per dense layer */
	double routed_tok;  /* per token per MoE layer */
	double shared_tok;
	double router_tok;
	double up_proj_fwd; /* MLA Q/KV up-projections, forward only, per token per layer */
	double logits_tok;  /* output layer per token */
	double mtp_glue_tok;/* MTP eh-projection + norms per token (all depths) */
	double mtp_head_tok;/* output head per token of one MTP depth */
	int64_t n_dense, n_moe;
	int64_t mtp;        /* D */
	int mtp_last_moe;   /* MTP layers copy the type of the last decoder layer */
};

static void current(const struct ts_model *m, double S2, double V, int64_t D,
		    struct layer_model *lm)
{
	double h = (double)m->hidden, n = (double)m->heads;
	double q = n * (double)m->head_dim, k = (double)m->kv_heads * (double)m->head_dim;
	double gam = m->gated_mlp ? 3.0 : 2.0;
	double psi;

	if (m->mla) {
		double rq = (double)m->q_lora_rank, rkv = (double)m->kv_lora_rank;
		double dqk = (double)m->qk_head_dim, dr = (double)m->qk_rope_dim;
		double dv = (double)m->v_head_dim;
		double Q = m->q_lora_rank ? rq * (h + n * (dqk + dr) + 1) : h * n * (dqk + dr);
		lm->att_tok = 6 * (Q + rkv * (h + n * (dqk + dv) + 1) + h * dr + n * dv * h);
		psi = 3 * n * (dqk + dr + dv);
		lm->up_proj_fwd = 2 * ((m->q_lora_rank ? n * (dqk + dr) * rq : 0) +
				       n * (dqk + dv) * rkv);
	} else {
		double a = m->attn_output_gate ? 1.0 : 0.0;
		lm->att_tok = 6 * (h * (q + 2 * k + a * q) + q * h);
		psi = 6 * q;
	}
	lm->core_step = S2 * psi;
	lm->dense_tok = 6 * h * gam * (double)m->ffn_hidden;
	lm->routed_tok = 6 * h * gam * (double)m->topk * (double)m->moe_ffn_hidden;
	lm->shared_tok = 6 * h * gam * (double)m->shared_ffn_hidden;
	lm->router_tok = 0;
	lm->logits_tok = 6 * h * V;
	lm->mtp_glue_tok = 6 * (double)D * (3 * h + 2 * h * h);
	lm->mtp_head_tok = lm->logits_tok;
	lm->n_moe = m->moe_layers;
	lm->n_dense = m->layers - m->moe_layers;
	lm->mtp = D;
	lm->mtp_last_moe = ts_model_is_moe(m, m->layers - 1);
}

/* 2024 upstream and MT-MegatronLM non-MLA:
 * 12·B·s·L·h²·[(1 + g/n + s/h)·q/h + K·f'·γ'/h + f_s·γ'/h + V/(2Lh)]
 * with f' = ffn_hidden (upstream) or moe_ffn_hidden (MT), every layer MoE. */
static void v2024(const struct ts_model *m, double B, double s, double V, int mt,
		  struct layer_model *lm)
{
	double h = (double)m->hidden, n = (double)m->heads, g = (double)m->kv_heads;
	double q = n * (double)m->head_dim;
	double gp = m->gated_mlp ? 1.5 : 1.0;
	int moe = m->num_experts > 0;
	double K = moe ? (double)m->topk : 1.0;
	double f = (double)(moe && mt ? m->moe_ffn_hidden : m->ffn_hidden);

	lm->att_tok = 12 * h * q * (1 + g / n);
	lm->core_step = 12 * B * s * s * q;
	if (moe) {
		lm->routed_tok = 12 * h * f * K * gp;
		lm->n_moe = m->layers;
	} else {
		lm->dense_tok = 12 * h * f * gp;
		lm->n_dense = m->layers;
	}
	lm->shared_tok = 12 * h * (double)m->shared_ffn_hidden * gp;
	if (!moe) {
		/* no experts: a shared width has no layer to live on */
		lm->dense_tok += lm->shared_tok;
		lm->shared_tok = 0;
	}
	lm->logits_tok = 6 * h * V;
}

/* MT-MegatronLM MLA path: 6·B·s·L·[h·r_q + r_q·n(d_qk+d_r) + h(r_kv+d_r) +
 * n·r_kv(d_qk+d_v) + n·s(d_qk+d_r) + n·s·d_v + n·d_v·h + h·E + 2h·f_e·K·γ' +
 * 2h·f_s·γ' + V·h/L]. Without q compression the Q projection is h·n(d_qk+d_r). */
static void mt_mla(const struct ts_model *m, double B, double s, double V,
		   struct layer_model *lm)
{
	double h = (double)m->hidden, n = (double)m->heads;
	double rq = (double)m->q_lora_rank, rkv = (double)m->kv_lora_rank;
	double dqk = (double)m->qk_head_dim, dr = (double)m->qk_rope_dim, dv = (double)m->v_head_dim;
	double gp = m->gated_mlp ? 1.5 : 1.0;
	int moe = m->num_experts > 0;
	double Qp = m->q_lora_rank ? h * rq + rq * n * (dqk + dr) : h * n * (dqk + dr);

	lm->att_tok = 6 * (Qp + h * (rkv + dr) + n * rkv * (dqk + dv) + n * dv * h);
	lm->core_step = 6 * B * s * s * n * (dqk + dr + dv);
	if (moe) {
		lm->routed_tok = 6 * 2 * h * (double)m->moe_ffn_hidden * (double)m->topk * gp;
		lm->shared_tok = 6 * 2 * h * (double)m->shared_ffn_hidden * gp;
		lm->router_tok = 6 * h * (double)m->num_experts;
		lm->n_moe = m->layers;
	} else {
		lm->dense_tok = 6 * 2 * h * (double)m->ffn_hidden * gp;
		lm->n_dense = m->layers;
	}
	lm->logits_tok = 6 * V * h;
}

/* 2023: 60·B·s·L·h²·(1 + g/(5n) + s/(5h) + V/(10Lh)); q = h, f = 4h. */
static void v2023(const struct ts_model *m, double B, double s, double V, struct layer_model *lm)
{
	double h = (double)m->hidden, n = (double)m->heads, g = (double)m->kv_heads;

	lm->att_tok = 12 * h * h * (1 + g / n);
	lm->core_step = 12 * B * s * s * h;
	lm->dense_tok = 48 * h * h;
	lm->n_dense = m->layers;
	lm->logits_tok = 6 * h * V;
}

/* torchtitan: 6 FLOPs per parameter a token passes through plus the
 * attention scores, as each version's get_nparams_and_flops counts them.
 * The parameters are ts_model_params' (the count memory and plan use), at
 * the model's unpadded vocabulary: the input embedding excluded (a
 * lookup), routed experts at K of E, every norm weight and the router
 * included; each layer's projections, its norms and q/k norms (MLA: its
 * down-projections and their norms) go with attn_proj, the final norm with
 * logits. Attention per token per layer: 6 n (d_qk + d_v) s (GQA d_qk =
 * d_v = d; MLA d_qk + d_r and d_v), no causal halving; torchtitan-dim
 * takes d = floor(h / n) whatever the model's head width. A tied output
 * head is counted once, as the head, by the current version
 * (get_nparams_and_active_nparams); the older ones subtracted the shared
 * matrix, so the head is not counted at all. MTP (current version,
 * DeepSeek-V3, D layers the job builds): each layer is a decoder layer of
 * the last layer's type plus enorm, hnorm, mtp_norm (h each) and eh_proj
 * (2h x h), with its attention, and the output head is counted once more
 * per depth. */
static void titan(const struct ts_model *m, int formula, double B, double s, double V,
		  int64_t D, struct layer_model *lm)
{
	struct ts_model_params p;
	double h = (double)m->hidden, n = (double)m->heads;
	double head_dims = m->mla ? (double)(m->qk_head_dim + m->qk_rope_dim + m->v_head_dim) :
		2 * (double)m->head_dim;
	double head;

	ts_model_params(m, (int64_t)V, &p);
	if (formula == TS_FORMULA_TITAN_DIM)
		head_dims = 2 * (double)(m->hidden / m->heads);
	head = formula != TS_FORMULA_TITAN && m->tied_embeddings ? 0 : p.embedding;
	lm->att_tok = 6 * (p.attn + p.attn_rep + p.norms);
	lm->core_step = 6 * B * s * s * n * head_dims;
	lm->dense_tok = 6 * p.mlp;
	lm->routed_tok = 6 * p.experts_active;
	lm->shared_tok = 6 * p.shared;
	lm->router_tok = 6 * p.router;
	lm->logits_tok = 6 * (head + p.final_norm);
	lm->n_moe = m->moe_layers;
	lm->n_dense = m->layers - m->moe_layers;
	if (formula == TS_FORMULA_TITAN) {
		lm->mtp = D;
		lm->mtp_glue_tok = 6 * (double)D * (2 * h * h + 3 * h);
		lm->mtp_head_tok = 6 * h * V;
		lm->mtp_last_moe = ts_model_is_moe(m, m->layers - 1);
	}
}

/* Layers recomputed by full recompute: all (uniform), or the first N of
 * each of the PP·VPP contiguous chunks (block). */
static int full_layers(const struct ts_model *m, const struct ts_flops_shape *sh,
		       unsigned char *rc, struct ts_err *err)
{
	int64_t L = m->layers, chunks, per;

	if (sh->recompute_method != TS_RC_BLOCK) {
		memset(rc, 1, (size_t)L);
		return 0;
	}
	chunks = (sh->pp > 0 ? sh->pp : 1) * (sh->vpp > 0 ? sh->vpp : 1);
	if (chunks > L || L % chunks)
		return ts_err_set(err, TS_EUSAGE, "block recompute: %lld layers do not split evenly"
				  " into PP x VPP = %lld chunks", (long long)L, (long long)chunks);
	if (sh->recompute_layers <= 0)
		return ts_err_set(err, TS_EUSAGE, "block recompute needs the number of layers"
				  " (--recompute-num-layers)");
	per = L / chunks;
	memset(rc, 0, (size_t)L);
	for (int64_t c = 0; c < chunks; c++)
		for (int64_t i = 0; i < per && i < sh->recompute_layers; i++)
			rc[c * per + i] = 1;
	return 0;
}

static int recompute(const struct ts_model *m, const struct ts_flops_shape *sh,
		     const struct layer_model *lm, double T, struct ts_flops *out,
		     struct ts_err *err)
{
	double *rt = out->recompute_term;
	int rc;

	if (sh->recompute == TS_RC_FULL) {
		unsigned char sel[TS_MODEL_MAX_LAYERS];
		int uniform_charge = lm->n_moe == m->layers || lm->n_dense == m->layers;
		if ((rc = full_layers(m, sh, sel, err)))
			return rc;
		for (int64_t i = 0; i < m->layers; i++) {
			int moe;
			if (!sel[i])
				continue;
			out->recomputed_layers++;
			moe = uniform_charge ? lm->n_moe > 0 : ts_model_is_moe(m, i);
			rt[TS_FT_ATTN_PROJ] += T * lm->att_tok / 3;
			rt[TS_FT_CORE_ATTN] += lm->core_step / 3;
			if (moe) {
				rt[TS_FT_ROUTED] += T * lm->routed_tok / 3;
				rt[TS_FT_SHARED] += T * lm->shared_tok / 3;
				rt[TS_FT_ROUTER] += T * lm->router_tok / 3;
			} else {
				rt[TS_FT_DENSE_MLP] += T * lm->dense_tok / 3;
			}
		}
	} else if (sh->recompute == TS_RC_SELECTIVE) {
		int mods = sh->recompute_modules ? sh->recompute_modules : TS_RCM_CORE_ATTN;
		double L = (double)m->layers, nd = (double)lm->n_dense, nm = (double)lm->n_moe;
		if (mods & TS_RCM_CORE_ATTN)
			rt[TS_FT_CORE_ATTN] += L * lm->core_step / 3;
		if (mods & TS_RCM_MLA_UP_PROJ)
			rt[TS_FT_ATTN_PROJ] += L * T * lm->up_proj_fwd;
		if (mods & TS_RCM_MLP)
			rt[TS_FT_DENSE_MLP] += nd * T * lm->dense_tok / 3;
		if (mods & TS_RCM_MOE)
			rt[TS_FT_ROUTED] += nm * T * lm->routed_tok / 3;
		if (mods & (TS_RCM_MOE | TS_RCM_SHARED_EXPERTS))
			rt[TS_FT_SHARED] += nm * T * lm->shared_tok / 3;
		/* layernorm and moe_act recompute element-wise work: 0 GEMM FLOPs */
	}
	for (int t = 0; t < TS_FT_COUNT; t++)
		out->recompute += rt[t];
	return 0;
}

int ts_flops_compute(const struct ts_model *m, const struct ts_flops_shape *sh, int formula,
		     struct ts_flops *out, struct ts_err *err)
{
	struct layer_model lm;
	double B, s, T, S2, V;
	int64_t D, tp, div;

	memset(out, 0, sizeof(*out));
	memset(&lm, 0, sizeof(lm));
	if (!m->finished)
		return ts_err_set(err, TS_EINTERNAL, "model not finished");
	if (formula < 0 || formula >= TS_FORMULA_COUNT)
		return ts_err_set(err, TS_EUSAGE, "unknown FLOPs formula");
	if (sh->seq <= 0 && !sh->packed)
		return ts_err_set(err, TS_EUSAGE, "sequence length is not given (--seq)");
	if (sh->gbs <= 0 && !sh->packed)
		return ts_err_set(err, TS_EUSAGE, "global batch size is not given (--gbs)");
	if (sh->seq > ((int64_t)1 << 30) || sh->gbs > ((int64_t)1 << 40))
		return ts_err_set(err, TS_EUSAGE, "sequence length or batch size out of range");
	B = (double)sh->gbs;
	s = (double)sh->seq;
	tp = sh->tp > 0 ? sh->tp : 1;
	div = sh->vocab_divisor > 0 ? sh->vocab_divisor : 128;
	/* torchtitan builds MTP layers only when its job asks (num_mtp_layers),
	 * whatever the model's config says */
	if (ts_formula_is_titan(formula))
		D = sh->mtp > 0 ? sh->mtp : 0;
	else
		D = sh->mtp >= 0 ? sh->mtp : m->mtp_layers;
	out->formula = formula;
	out->padded_vocab = ts_formula_is_titan(formula) ? m->vocab
			    : ts_model_padded_vocab(m, div, tp);
	V = (double)out->padded_vocab;

	if (formula == TS_FORMULA_CURRENT && sh->packed) {
		T = sh->packed->tokens;
		S2 = sh->packed->square;
		if (sh->seq > 0 && sh->gbs > 0 && T > B * s)
			return ts_err_set(err, TS_EUSAGE, "packed lengths hold %.0f tokens, more than"
					  " gbs x seq = %.0f", T, B * s);
		/* a packed sub-sequence fits in its row of seq tokens */
		if (sh->seq > 0 && sh->packed->max_len > sh->seq)
			return ts_err_set(err, TS_EUSAGE, "a packed sub-sequence of %lld tokens is longer"
					  " than the sequence length %lld", (long long)sh->packed->max_len,
					  (long long)sh->seq);
	} else {
		if (sh->seq <= 0 || sh->gbs <= 0)
			return ts_err_set(err, TS_EUSAGE, "formula %s needs --seq and --gbs",
					  formula_names[formula]);
		T = B * s;
		S2 = B * s * s;
		out->packed_ignored = sh->packed != NULL;
	}
	out->tokens = T;
	out->square = S2;

	switch (formula) {
	case TS_FORMULA_CURRENT:
		current(m, S2, V, D, &lm);
		break;
	case TS_FORMULA_MLM2024:
		v2024(m, B, s, V, 0, &lm);
		break;
	case TS_FORMULA_MLM2023:
		v2023(m, B, s, V, &lm);
		break;
	case TS_FORMULA_MT:
		if (m->mla)
			mt_mla(m, B, s, V, &lm);
		else
			v2024(m, B, s, V, 1, &lm);
		break;
	case TS_FORMULA_TITAN:
	case TS_FORMULA_TITAN_HEADDIMS:
	case TS_FORMULA_TITAN_DIM:
		titan(m, formula, B, s, V, D, &lm);
		break;
	}
	out->mtp = lm.mtp;

	double L = (double)m->layers, nd = (double)lm.n_dense, nm = (double)lm.n_moe;
	double *t = out->term;
	t[TS_FT_ATTN_PROJ] = T * lm.att_tok * L;
	t[TS_FT_CORE_ATTN] = lm.core_step * L;
	t[TS_FT_DENSE_MLP] = T * lm.dense_tok * nd;
	t[TS_FT_ROUTED] = T * lm.routed_tok * nm;
	t[TS_FT_SHARED] = T * lm.shared_tok * nm;
	t[TS_FT_ROUTER] = T * lm.router_tok * nm;
	t[TS_FT_LOGITS] = T * lm.logits_tok;
	if (lm.mtp > 0) {
		double Dd = (double)lm.mtp;
		double mlp = lm.mtp_last_moe ? lm.routed_tok + lm.shared_tok + lm.router_tok
					     : lm.dense_tok;
		t[TS_FT_MTP] = Dd * (T * (lm.att_tok + mlp) + lm.core_step) +
			       T * lm.mtp_glue_tok + Dd * T * lm.mtp_head_tok;
	}
	for (int i = 0; i < TS_FT_COUNT; i++)
		out->per_step += t[i];
	out->per_token = T > 0 ? out->per_step / T : 0;
	return recompute(m, sh, &lm, T, out, err);
}

void ts_mfu_compute(const struct ts_flops *f, int64_t step_ns, int64_t gpus, double peak_tflops,
		    struct ts_mfu *out)
{
	double t = (double)step_ns / 1e9, W = (double)(gpus > 0 ? gpus : 1);

	out->step_s = t;
	out->tflops_per_gpu = f->per_step / (t * 1e12 * W);
	out->hw_tflops_per_gpu = (f->per_step + f->recompute) / (t * 1e12 * W);
	out->tokens_per_s_per_gpu = f->tokens / (t * W);
	out->mfu = peak_tflops > 0 ? out->tflops_per_gpu / peak_tflops : NAN;
	out->hfu = peak_tflops > 0 ? out->hw_tflops_per_gpu / peak_tflops : NAN;
}

int ts_mfu_check(const struct ts_mfu *m, struct ts_err *err)
{
	if (isfinite(m->mfu) && m->mfu > 1)
		return ts_err_set(err, TS_EUSAGE, "MFU comes out at %.4g %% of the peak (%.4g TFLOP/s "
				  "per GPU), which is impossible: check --step-time units (seconds "
				  "per step), --gpus, and --precision (the peak's: a bf16 run "
				  "against the tf32 peak)", 100 * m->mfu, m->tflops_per_gpu);
	if (isfinite(m->hfu) && m->hfu > 1)
		return ts_err_set(err, TS_EUSAGE, "HFU comes out at %.4g %% of the peak (%.4g "
				  "hardware TFLOP/s per GPU), which is impossible: check --step-time "
				  "units (seconds per step), --gpus, and --precision (the peak's)", 100 * m->hfu,
				  m->hw_tflops_per_gpu);
	return 0;
}
