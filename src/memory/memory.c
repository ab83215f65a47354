/*
 * memory.c - per-GPU memory of one training layout, three estimators.
 *
 * Megatron-LM prints a theoretical footprint that users compare against;
 * it is reproduced exactly (both activation code paths, the EP-aware and
 * the core_v0.14 weight formula) so the numbers line up with the log.
 * That formula charges the dense FFN width to MoE layers, ignores CP,
 * full recompute, offload, the logits on the last stage and uneven
 * stages, so the default estimator counts instead what Megatron Core keeps
 * for backward, tensor by tensor, for every pipeline rank, with the
 * micro-batches in flight taken from the schedule itself (1F1B or
 * interleaved, including uneven virtual stages).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "trainscope/gpus.h"
#include "trainscope/memory.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *const est_names[] = { "moe-aware", "megatron", "megatron-0.14" };

const char *ts_mem_estimator_name(int est)
{
	return est >= 0 && est <= TS_MEM_EST_MEGATRON_014 ? est_names[est] : "?";
}

int ts_mem_estimator_parse(const char *s)
{
	for (int i = 0; i <= TS_MEM_EST_MEGATRON_014; i++)
		if (strcmp(s, est_names[i]) == 0)
			return i;
	if (strcmp(s, "default") == 0 || strcmp(s, "moe") == 0)
		return TS_MEM_EST_MOE;
	return -1;
}

int ts_mem_module_index(int bit)
{
	for (int i = 0; i < TS_MEM_NMODULES; i++)
		if (bit == 1 << i)
			return i;
	return -1;
}

void ts_mem_layout_init(struct ts_mem_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->tp = l->pp = l->vpp = l->cp = l->ep = l->etp = l->dp = 1;
	l->mbs = l->gbs = 1;
	l->seq = 4096;
	l->vocab_divisor = 128;
	l->first_stage_layers = l->last_stage_layers = -1;
	l->recompute = TS_RC_NONE;
	l->dist_opt = 1;
	l->precision = TS_PREC_BF16;
	l->context_bytes = 1.0 * GIB;
	l->fragmentation = 0.05;
}

/* ------------------------------------------------------------ tensors */

/* One saved tensor of a layer: bytes per micro-batch on one GPU, the
 * recompute modules that drop it, and whether activation offload moves it. */
struct tensor {
	double bytes;
	int mods;
	int offload;
};

struct tlist {
	struct tensor t[24];
	int n;
};

static void tadd(struct tlist *l, double bytes, int mods, int offload)
{
	if (bytes <= 0 || l->n >= (int)(sizeof(l->t) / sizeof(l->t[0])))
		return;
	l->t[l->n].bytes = bytes;
	l->t[l->n].mods = mods;
	l->t[l->n].offload = offload;
	l->n++;
}

/*
 * The tensors Megatron Core (Transformer Engine layers, flash attention,
 * dropout 0, probabilities applied in the expert activation) keeps for the
 * backward pass of one layer. tau = tokens of one micro-batch on this CP
 * rank; sigma = the sequence-parallel split of the residual stream.
 */
static void layer_tensors(const struct ts_mem_ctx *c, int moe, struct tlist *out)
{
	const struct ts_model *m = c->m;
	const struct ts_mem_layout *l = &c->l;
	double tau = (double)l->seq * (double)l->mbs / (double)l->cp;
	double tp = (double)l->tp;
	double sigma = l->sequence_parallel ? tp : 1.0;
	double h = (double)m->hidden, n = (double)m->heads, g = (double)m->kv_heads;
	double d = (double)m->head_dim;
	double e = 2.0, el = l->precision == TS_PREC_FP8 ? 1.0 : 2.0;
	double w1 = m->gated_mlp ? 2.0 : 1.0;

	out->n = 0;
	tadd(out, e * h * tau / sigma, 0, 0); /* layer input: index 0, kept by full recompute */
	if (m->mla) {
		double dq = (double)(m->qk_head_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		double rq = (double)m->q_lora_rank, rkv = (double)m->kv_lora_rank;
		/* the down-projections see the whole (gathered) sequence */
		tadd(out, el * h * tau, TS_RCM_LAYERNORM, 0);
		tadd(out, e * rq * tau, 0, 0);
		tadd(out, el * rq * tau, 0, 0);
		tadd(out, e * rkv * tau, 0, 0);
		tadd(out, el * rkv * tau, 0, 0);
		tadd(out, e * n * (2.0 * dq + dv) * tau / tp, TS_RCM_MLA_UP_PROJ, 0);
		tadd(out, el * n * dv * tau / tp, 0, 0);
	} else {
		tadd(out, el * h * tau / sigma, 0, 0);              /* fused norm output (QKV input) */
		if (m->qk_norm)
			tadd(out, e * (n + g) * d * tau / tp, 0, 0); /* q, k before their norms */
		tadd(out, e * (n + 2.0 * g) * d * tau / tp, 0, 0);  /* q, k, v into attention */
		if (m->attn_output_gate)
			tadd(out, e * n * d * tau / tp, 0, 0);
		tadd(out, el * n * d * tau / tp, 0, 0);             /* attention output */
	}
	tadd(out, 4.0 * n * tau / tp, TS_RCM_CORE_ATTN, 0);         /* softmax statistics, FP32 */
	tadd(out, e * h * tau / sigma, 0, 0);                       /* residual into the MLP norm */
	if (!moe) {
		double f = (double)m->ffn_hidden;
		tadd(out, el * h * tau / sigma, TS_RCM_MLP, 0);
		tadd(out, e * w1 * f * tau / tp, TS_RCM_MLP, 0);
		tadd(out, el * f * tau / tp, TS_RCM_MLP, 0);
		return;
	}
	double E = (double)m->num_experts, K = (double)m->topk;
	double fe = (double)m->moe_ffn_hidden, fs = (double)m->shared_ffn_hidden;
	double etp = (double)l->etp;
	double te = tau * K * etp / tp; /* expert tokens on this GPU, balanced routing */
	tadd(out, el * h * tau / sigma, TS_RCM_LAYERNORM, 0);
	tadd(out, 13.0 * E * tau / sigma, TS_RCM_MOE, 0); /* FP32 scores, routing map, int64 row ids */
	tadd(out, e * w1 * fs * tau / tp, TS_RCM_SHARED_EXPERTS | TS_RCM_MOE, 0);
	tadd(out, el * fs * tau / tp, TS_RCM_SHARED_EXPERTS | TS_RCM_MOE, 0);
	tadd(out, el * h * te, TS_RCM_MOE, 1);
	tadd(out, e * w1 * fe / etp * te, TS_RCM_MOE, 1);
	tadd(out, el * fe / etp * te, TS_RCM_MOE_ACT | TS_RCM_MOE, 0);
	tadd(out, 4.0 * te, TS_RCM_MOE, 0);
}

/* Stored bytes of one layer after selective recompute and offload; the
 * savings per module (attributed to the lowest selected bit) and the bytes
 * moved to the host. */
static double layer_stored(const struct tlist *tl, int sel, int offload, double *save,
			   double *full, double *off)
{
	double kept = 0, all = 0, moved = 0;

	for (int i = 0; i < tl->n; i++) {
		const struct tensor *t = &tl->t[i];
		int hit = t->mods & sel;
		all += t->bytes;
		if (hit) {
			save[ts_mem_module_index(hit & -hit)] += t->bytes;
			continue;
		}
		if (offload && t->offload) {
			moved += t->bytes;
			continue;
		}
		kept += t->bytes;
	}
	*full = all;
	*off = moved;
	return kept;
}

/* ------------------------------------------------------------ stages */

void ts_mem_vstage_layers(const struct ts_mem_ctx *c, int64_t j, int64_t *first, int64_t *count)
{
	int64_t V = c->vstages, L = c->m->layers;
	int64_t f = c->l.first_stage_layers, z = c->l.last_stage_layers;
	int64_t lo = 0, hi = V, base = 0, rest = L, q, r;

	if (V == 1) {
		*first = 0;
		*count = L;
		return;
	}
	if (f >= 0) {
		if (j == 0) {
			*first = 0;
			*count = f;
			return;
		}
		lo = 1;
		base = f;
		rest -= f;
	}
	if (z >= 0) {
		if (j == V - 1) {
			*first = L - z;
			*count = z;
			return;
		}
		hi = V - 1;
		rest -= z;
	}
	q = rest / (hi - lo);
	r = rest % (hi - lo);
	j -= lo;
	*first = base + j * q + (j < r ? j : r);
	*count = q + (j < r ? 1 : 0);
}

static int64_t moe_in(const struct ts_mem_ctx *c, int64_t first, int64_t count)
{
	return c->moe_prefix[first + count] - c->moe_prefix[first];
}

/* ------------------------------------------------------------ prepare */

static double norm_c(const struct ts_model *m)
{
	return m->norm == TS_NORM_LAYER ? 2.0 : 1.0;
}

int ts_mem_prepare(struct ts_mem_ctx *c, const struct ts_model *m,
		   const struct ts_mem_layout *l, int est, struct ts_err *err)
{
	const struct ts_mem_layout *L = l;
	struct tlist tl;
	double full, off, h;
	struct ts_model_params mp;
	int sel;

	memset(c, 0, offsetof(struct ts_mem_ctx, moe_prefix));
	c->m = m;
	c->l = *l;
	c->est = est;
	if (!m->finished)
		return ts_err_set(err, TS_EINTERNAL, "memory: model not finished");
	if (L->tp < 1 || L->pp < 1 || L->vpp < 1 || L->cp < 1 || L->ep < 1 || L->etp < 1 ||
	    L->dp < 1 || L->mbs < 1 || L->gbs < 1 || L->seq < 1)
		return ts_err_set(err, TS_EUSAGE, "every parallel size, --mbs, --gbs and --seq must be >= 1");
	if (ts_model_check_tp(m, L->tp, err))
		return TS_EUSAGE;
	if (m->num_experts == 0 && (L->ep > 1 || L->etp > 1))
		return ts_err_set(err, TS_EUSAGE, "--ep/--etp need an MoE model (this one has no experts)");
	if (m->num_experts > 0 && m->num_experts % L->ep)
		return ts_err_set(err, TS_EUSAGE, "--ep %lld does not divide the %lld experts",
				  (long long)L->ep, (long long)m->num_experts);
	if ((L->tp * L->cp * L->dp) % (L->ep * L->etp))
		return ts_err_set(err, TS_EUSAGE, "ETP*EP = %lld does not divide TP*CP*DP = %lld"
				  " (parallel folding: both meshes share PP and the world)",
				  (long long)(L->ep * L->etp), (long long)(L->tp * L->cp * L->dp));
	if (L->gbs % (L->mbs * L->dp))
		return ts_err_set(err, TS_EUSAGE, "--gbs %lld is not a multiple of MBS*DP = %lld",
				  (long long)L->gbs, (long long)(L->mbs * L->dp));
	if (L->vpp > 64)
		return ts_err_set(err, TS_EUSAGE, "--vpp %lld is above the supported 64", (long long)L->vpp);
	if (L->vpp > 1 && L->pp < 2)
		return ts_err_set(err, TS_EUSAGE, "--vpp %lld needs --pp >= 2", (long long)L->vpp);
	/* the interleaved schedule runs the micro-batches in groups of PP (the
	 * rule plan enumerates by) */
	if (L->vpp > 1 && (L->gbs / (L->mbs * L->dp)) % L->pp)
		return ts_err_set(err, TS_EUSAGE, "--vpp %lld: the interleaved schedule needs the %lld "
				  "micro-batches to be a multiple of --pp %lld", (long long)L->vpp,
				  (long long)(L->gbs / (L->mbs * L->dp)), (long long)L->pp);
	if (m->num_experts > 0 && L->tp > 1 && !L->sequence_parallel)
		return ts_err_set(err, TS_EUSAGE, "MoE with --tp > 1 needs --sequence-parallel"
				  " (Megatron refuses the combination)");
	if (L->cp > 1 && L->seq % (2 * L->cp))
		return ts_err_set(err, TS_EUSAGE, "--seq %lld is not a multiple of 2*CP = %lld",
				  (long long)L->seq, (long long)(2 * L->cp));
	if (L->sequence_parallel && (L->seq / L->cp) % L->tp)
		return ts_err_set(err, TS_EUSAGE, "sequence parallel: --seq/CP is not a multiple of --tp");
	if (L->precision != TS_PREC_BF16 && L->precision != TS_PREC_FP8)
		return ts_err_set(err, TS_EUSAGE, "--precision must be bf16 or fp8");
	if (L->vocab_divisor < 1)
		return ts_err_set(err, TS_EUSAGE, "vocabulary divisor must be >= 1");
	if (L->dualpipe && L->pp > 1 && (L->vpp > 1 || L->pp % 2))
		return ts_err_set(err, TS_EUSAGE, "DualPipe needs an even --pp and --vpp 1 (got PP %lld"
				  " VPP %lld)", (long long)L->pp, (long long)L->vpp);
	if (L->dualpipe && L->pp > 1 && est != TS_MEM_EST_MOE)
		return ts_err_set(err, TS_EUSAGE, "DualPipe needs the moe-aware estimator"
				  " (Megatron's formulas have no DualPipe)");
	if (L->fsdp && est != TS_MEM_EST_MOE)
		return ts_err_set(err, TS_EUSAGE, "--fsdp needs the moe-aware estimator"
				  " (Megatron's formulas have no FSDP)");

	c->vstages = L->pp * L->vpp;
	{
		int64_t fixed = 0, free_stages = c->vstages;
		if (L->first_stage_layers >= 0) {
			fixed += L->first_stage_layers;
			free_stages--;
		}
		if (L->last_stage_layers >= 0 && c->vstages > 1) {
			fixed += L->last_stage_layers;
			free_stages--;
		}
		if (fixed > m->layers || (free_stages > 0 && m->layers - fixed < free_stages) ||
		    (free_stages == 0 && fixed != m->layers && c->vstages > 1))
			return ts_err_set(err, TS_EUSAGE, "%lld layers cannot fill PP*VPP = %lld virtual"
					  " stages with the first/last stage sizes given",
					  (long long)m->layers, (long long)c->vstages);
	}
	c->world = L->tp * L->cp * L->dp * L->pp;
	c->edp = c->world / (L->etp * L->ep * L->pp);
	c->micro = L->gbs / (L->mbs * L->dp);
	if (L->dualpipe && !ts_mem_dualpipe_micro_ok(L->pp, c->micro))
		return ts_err_set(err, TS_EUSAGE, "DualPipe needs an even micro-batch count of at least"
				  " 2*PP = %lld (got %lld)", (long long)(2 * L->pp), (long long)c->micro);
	c->vocab = ts_model_padded_vocab(m, L->vocab_divisor, L->tp);
	c->moe_prefix[0] = 0;
	for (int64_t i = 0; i < m->layers; i++)
		c->moe_prefix[i + 1] = c->moe_prefix[i] + (ts_model_is_moe(m, i) ? 1 : 0);

	/* parameters per layer (whole, before sharding) */
	h = (double)m->hidden;
	ts_model_params(m, c->vocab, &mp);
	c->p_att_tp = mp.attn;
	c->p_att_rep = mp.attn_rep;
	c->p_mlp = mp.mlp;
	c->p_shared = mp.shared;
	c->p_router = mp.router;
	c->p_norms = mp.norms;
	c->p_experts = mp.experts;

	/* activations per layer per micro-batch */
	sel = 0;
	if (L->recompute == TS_RC_SELECTIVE)
		sel = L->recompute_modules ? L->recompute_modules : TS_RCM_CORE_ATTN;
	layer_tensors(c, 0, &tl);
	c->a_input = tl.t[0].bytes;
	c->a_dense = layer_stored(&tl, sel, 0, c->save_dense, &full, &off);
	c->a_dense_full = full;
	if (m->num_experts > 0) {
		layer_tensors(c, 1, &tl);
		c->a_moe = layer_stored(&tl, sel, (L->offload & TS_OFFLOAD_ACTIVATIONS) != 0,
					c->save_moe, &full, &off);
		c->a_moe_full = full;
		c->a_offload_moe = off;
	}
	{
		double tau = (double)L->seq * (double)L->mbs / (double)L->cp;
		double sigma = L->sequence_parallel ? (double)L->tp : 1.0;
		double el = L->precision == TS_PREC_FP8 ? 1.0 : 2.0;
		c->a_mtp_extra = (2.0 + el) * 2.0 * h * tau / sigma;
		c->a_embed = 8.0 * tau;
		c->a_logits = (2.0 + el) * h * tau / sigma + 6.0 * (double)c->vocab * tau / (double)L->tp;
	}
	return 0;
}

/* ------------------------------------------------------------ schedule */

/*
 * Peak of sum(bytes of the chunks in flight) on pipeline rank r, walking
 * Megatron's schedule: 1F1B keeps min(p - r, m) micro-batches; the
 * interleaved schedule runs (p - r - 1)*2 + (v - 1)*p warm-up forwards,
 * forward k on chunk (k / p) % v, backward k on chunk v - 1 - (k / p) % v.
 * The steady state repeats every p*v steps, so one period is enough; with
 * equal chunks the peak is (warm-up + 1) chunks.
 */
static double schedule_peak(int64_t p, int64_t v, int64_t r, int64_t m, const double *chunk)
{
	int64_t total = m * v, warm, steps;
	double cur = 0, peak;
	int equal = 1;

	if (v == 1)
		return (double)(m < p - r ? m : p - r) * chunk[0];
	warm = (p - r - 1) * 2 + (v - 1) * p;
	if (warm > total)
		warm = total;
	for (int64_t k = 1; k < v; k++)
		equal &= chunk[k] == chunk[0];
	if (equal)
		return (double)(warm < total ? warm + 1 : total) * chunk[0];
	/* chunk of forward k is (k / p) % v: walk it with counters, no division */
	{
		int64_t fc = 0, fn = 0, bc = v - 1, bn = 0;
		for (int64_t k = 0; k < warm; k++) {
			cur += chunk[fc];
			if (++fn == p) {
				fn = 0;
				fc = fc + 1 == v ? 0 : fc + 1;
			}
		}
		peak = cur;
		steps = total - warm;
		if (steps > p * v)
			steps = p * v;
		for (int64_t i = 0; i < steps; i++) {
			cur += chunk[fc];
			if (cur > peak)
				peak = cur;
			cur -= chunk[bc];
			if (++fn == p) {
				fn = 0;
				fc = fc + 1 == v ? 0 : fc + 1;
			}
			if (++bn == p) {
				bn = 0;
				bc = bc == 0 ? v - 1 : bc - 1;
			}
		}
	}
	return peak;
}

/* ------------------------------------------------------------ Megatron */

static void megatron_eval(const struct ts_mem_ctx *c, struct ts_mem_stage *s)
{
	const struct ts_model *m = c->m;
	const struct ts_mem_layout *l = &c->l;
	double h = (double)m->hidden, n = (double)m->heads, cn = norm_c(m);
	double gl = m->gated_mlp ? 1.5 : 1.0, V = (double)c->vocab;
	double f = (double)m->ffn_hidden, fs = (double)m->shared_ffn_hidden;
	int64_t moe_layers = c->moe_prefix[m->layers], dense_layers = m->layers - moe_layers;
	double fe = moe_layers > 0 ? (double)m->moe_ffn_hidden : 0, E = (double)m->num_experts;
	double att, tp = (double)l->tp, pp = (double)l->pp;
	double mtp_moe = 0, mtp_dense = 0, emb = h * V;
	double w, g, o;

	if (m->mla) {
		double dqk = (double)m->qk_head_dim, dr = (double)m->qk_rope_dim;
		double dv = (double)m->v_head_dim, rq = (double)m->q_lora_rank;
		double rkv = (double)m->kv_lora_rank;
		double qt = rq > 0 ? rq * (h + n * (dqk + dr) + cn) : h * n * (dqk + dr);
		att = qt + rkv * (h + n * (dqk + dv) + cn) + h * dr + n * dv * h;
	} else {
		double q = (double)m->head_dim * n;
		att = 2.0 * h * h * ((1.0 + (double)m->kv_heads / n) * (q / h));
	}
	if (m->mtp_layers > 0) {
		int last_moe = ts_model_is_moe(m, m->layers - 1);
		mtp_moe = last_moe ? (double)m->mtp_layers : 0;
		mtp_dense = last_moe ? 0 : (double)m->mtp_layers;
	}
	s->rank = 0;
	s->embedding = 1;
	s->output = l->pp == 1;
	if (c->est == TS_MEM_EST_MEGATRON_014) {
		double ld = 2.0 * h * (f * gl + cn) + att;
		double lm = 2.0 * h * (fe * E * gl + fs * gl + cn) + att;
		double block = ld * (double)dense_layers + lm * (double)moe_layers + cn * h;
		double mtp = ld * mtp_dense + lm * mtp_moe;
		double shard = (block / pp + mtp + emb) / tp;
		double d = l->dist_opt ? (double)l->dp : 1.0;
		if (!m->tied_embeddings && l->pp == 1)
			shard += emb / tp;
		s->params_tp = shard;
		w = 2.0 * shard;
		g = 4.0 * shard;
		o = 12.0 * shard / d;
	} else {
		double ad = att + 2.0 * h * f * gl, am = att + 2.0 * h * fs * gl;
		double rd = 2.0 * cn * h, rm = 2.0 * cn * h + h * E;
		double xm = 2.0 * h * fe * E * gl;
		double a_block = ad * (double)dense_layers + am * (double)moe_layers;
		double r_block = rd * (double)dense_layers + rm * (double)moe_layers + cn * h;
		double x_block = xm * (double)moe_layers;
		double n_tp = (a_block / pp + ad * mtp_dense + am * mtp_moe + emb) / tp;
		double n_rep = r_block / pp + rd * mtp_dense + rm * mtp_moe;
		double n_exp = (x_block / pp + xm * mtp_moe) / ((double)l->etp * (double)l->ep);
		double d = l->dist_opt ? (double)l->dp : 1.0;
		double de = l->dist_opt ? (double)c->edp : 1.0;
		if (!m->tied_embeddings && l->pp == 1)
			n_tp += emb / tp;
		s->params_tp = n_tp;
		s->params_rep = n_rep;
		s->params_exp = n_exp;
		w = 2.0 * (n_tp + n_rep + n_exp);
		g = 4.0 * (n_tp + n_rep + n_exp);
		o = 12.0 * (n_tp + n_rep) / d + 12.0 * n_exp / de;
	}
	s->weights_bytes = w;
	s->grads_bytes = g;
	s->optimizer_bytes = o;
	s->mlm_weight_optimizer_bytes = w + g + o;

	/* activations: compute_activation_memory / _without_sp */
	{
		double sq = (double)l->seq, b = (double)l->mbs, Lr = (double)m->layers;
		double A, phi = 1.0;
		s->mlm_sp_path = l->sequence_parallel && l->recompute == TS_RC_SELECTIVE;
		if (s->mlm_sp_path)
			A = sq * b * h * (18.0 + 4.0 * (f / h)) * Lr;
		else
			A = sq * b * h * (10.0 + 24.0 / tp) * Lr;
		A += 8.0 * sq * b * pp;
		A += sq * b * h * pp;
		if (l->vpp > 1) {
			phi = 1.0 + (pp - 1.0) / (pp * (double)l->vpp);
			A *= phi;
		} else if (l->pp > 1) {
			phi = fmin(1.0, (double)c->micro / pp);
			A *= phi;
		}
		if (s->mlm_sp_path) {
			if (l->pp == 1)
				A += sq * b * h * 4.0 * (1.0 + V / h);
			A /= tp;
		} else {
			if (l->pp == 1)
				A += (sq * b * V / tp + sq * b * h) * 2.0;
			A *= 1.05;
		}
		s->inflight = phi * pp;
		s->mlm_activation_bytes = A;
		s->layer_act_bytes = A;
		s->activations_bytes = A;
	}
	s->layers = m->layers;
	s->moe_layers = moe_layers;
}

/* ------------------------------------------------------------ MoE-aware */

/* FSDP: parameters on this GPU of the largest unit FSDP gathers whole on
 * rank s (one decoder layer of a type the rank holds; with `embedding`,
 * also the input embedding and the output layer when the rank holds
 * them). Needs s's layer counts and holdings. */
static double fsdp_unit(const struct ts_mem_ctx *c, const struct ts_mem_stage *s, int embedding)
{
	const struct ts_mem_layout *l = &c->l;
	double tp = (double)l->tp, best = 0, u;

	if (s->layers > s->moe_layers) {
		u = (c->p_att_tp + c->p_mlp) / tp + c->p_att_rep + c->p_norms;
		best = u > best ? u : best;
	}
	if (s->moe_layers > 0) {
		u = (c->p_att_tp + c->p_shared) / tp + c->p_att_rep + c->p_norms + c->p_router +
		    c->p_experts / (double)(l->ep * l->etp);
		best = u > best ? u : best;
	}
	if (embedding && (s->embedding || s->output)) {
		u = (double)c->m->hidden * (double)c->vocab / tp;
		best = u > best ? u : best;
	}
	return best;
}

int ts_mem_dualpipe_micro_ok(int64_t pp, int64_t micro)
{
	return pp <= 1 || (micro % 2 == 0 && micro >= 2 * pp);
}

void ts_mem_dualpipe_stages(int64_t pp, int64_t r, int64_t stage[2])
{
	stage[0] = r < pp - 1 - r ? r : pp - 1 - r;
	stage[1] = pp - 1 - stage[0];
}

static void moe_eval(const struct ts_mem_ctx *c, int64_t r, struct ts_mem_stage *s)
{
	const struct ts_model *m = c->m;
	const struct ts_mem_layout *l = &c->l;
	int64_t p = l->pp, v = l->vpp;
	/* the virtual stages this rank holds: r + k*p (k < v), or DualPipe's
	 * two (ts_mem_dualpipe_stages); holds_first/last: stage 0 / p*v-1
	 * among them */
	int dual = l->dualpipe && p > 1;
	int64_t nheld = dual ? 2 : v, ds[2];
	int holds_first, holds_last;
	double chunk[64], chunk_all = 0, lin_tp = 0, lin_rep = 0;
	double tp = (double)l->tp, h = (double)m->hidden, emb = h * (double)c->vocab;
	double biggest_layer = 0;
	int full = l->recompute == TS_RC_FULL;
	int64_t rc_n = l->recompute_layers;
	int block = l->recompute_method == TS_RC_BLOCK;

	if (full && rc_n <= 0)
		rc_n = block ? INT64_MAX : 1;
	ts_mem_dualpipe_stages(p, r, ds);
	holds_first = dual ? ds[0] == 0 : r == 0;
	holds_last = dual ? ds[0] == 0 : r == p - 1;
	s->rank = r;
	for (int64_t k = 0; k < nheld && k < 64; k++) {
		int64_t j = dual ? ds[k] : r + k * p, first, cnt, nm, nd;
		double bytes = 0;
		ts_mem_vstage_layers(c, j, &first, &cnt);
		nm = moe_in(c, first, cnt);
		nd = cnt - nm;
		s->layers += cnt;
		s->moe_layers += nm;
		s->params_tp += (double)nd * (c->p_att_tp + c->p_mlp) + (double)nm * (c->p_att_tp + c->p_shared);
		s->params_rep += (double)nd * (c->p_att_rep + c->p_norms) +
				 (double)nm * (c->p_att_rep + c->p_norms + c->p_router);
		s->params_exp += (double)nm * c->p_experts;
		if (m->mla) /* the replicated MLA down-projections are linear layers */
			lin_rep += (double)cnt * (c->p_att_rep -
						  norm_c(m) * (double)(m->q_lora_rank + m->kv_lora_rank));
		if (full) {
			/* uniform: one input per group of rc_n layers; block: the first rc_n layers */
			int64_t rcl = block ? (rc_n < cnt ? rc_n : cnt) : cnt;
			int64_t groups = block ? rcl : (cnt + rc_n - 1) / rc_n;
			double per_dense = c->a_dense_full, per_moe = c->a_moe_full;
			double kept_layers_bytes;
			/* layers beyond the recomputed block keep everything: MoE layers last */
			int64_t keep = cnt - rcl, keep_moe = keep < nm ? keep : nm;
			kept_layers_bytes = (double)keep_moe * per_moe + (double)(keep - keep_moe) * per_dense;
			bytes = (double)groups * c->a_input + kept_layers_bytes;
			{
				int64_t grp = block ? 1 : (rc_n < cnt ? rc_n : cnt);
				int64_t gm = grp < nm ? grp : nm;
				double t = (double)gm * per_moe + (double)(grp - gm) * per_dense;
				if (t > biggest_layer)
					biggest_layer = t;
			}
		} else {
			bytes = (double)nd * c->a_dense + (double)nm * c->a_moe;
		}
		if (j == 0)
			bytes += c->a_embed;
		if (j == c->vstages - 1 && m->mtp_layers > 0) {
			int last_moe = ts_model_is_moe(m, m->layers - 1);
			double D = (double)m->mtp_layers;
			s->mtp_layers = m->mtp_layers;
			bytes += D * ((last_moe ? c->a_moe : c->a_dense) + c->a_mtp_extra);
			s->params_tp += D * (c->p_att_tp + (last_moe ? c->p_shared : c->p_mlp) + 2.0 * h * h);
			s->params_rep += D * (c->p_att_rep + c->p_norms + (last_moe ? c->p_router : 0) +
					      3.0 * norm_c(m) * h);
			if (last_moe)
				s->params_exp += D * c->p_experts;
		}
		chunk[k] = bytes;
		chunk_all += bytes;
	}
	lin_tp = s->params_tp;
	if (holds_first) {
		s->embedding = 1;
		s->params_tp += emb;
	}
	if (holds_last) {
		s->output = 1;
		s->params_rep += norm_c(m) * h;
		if (p > 1 || !m->tied_embeddings)
			s->params_tp += emb;               /* output layer (or its tied copy) */
		/* MTP looks tokens up on the last stage: in an embedding of its
		 * own, unless the rank holds the first stage's too (DualPipe's
		 * ranks 0 and p-1 share it: the DeepSeek-V3 report, 3.2.3) */
		if (p > 1 && m->mtp_layers > 0 && !m->tied_embeddings && !holds_first)
			s->params_tp += emb;
	}
	s->params_tp /= tp;
	s->params_exp /= (double)(l->ep * l->etp);
	lin_tp /= tp;

	{
		double nparams = s->params_tp + s->params_rep + s->params_exp;
		double d = l->dist_opt || l->fsdp ? (double)(l->dp * l->cp) : 1.0;
		double de = l->dist_opt || l->fsdp ? (double)c->edp : 1.0;
		double opt = 12.0 * (s->params_tp + s->params_rep) / d + 12.0 * s->params_exp / de;
		if (l->fsdp) {
			/* ZeRO-3 (../shared/reference/flops-memory-workflow.md 2.1:
			 * 18/d): every state sharded like the optimizer; the unit
			 * being computed and the prefetched one are whole (FSDP2
			 * all-gathers one module ahead in the forward and the
			 * backward, and reduce-scatters a unit's gradients while the
			 * next one runs): BF16 weights 2 B + FP32 gradients 4 B each */
			double sharded = (s->params_tp + s->params_rep) / d + s->params_exp / de;
			double unit = fsdp_unit(c, s, 1), layer_unit = fsdp_unit(c, s, 0);
			s->fsdp_unit_params = unit;
			s->weights_bytes = 2.0 * sharded;
			s->grads_bytes = 4.0 * sharded;
			s->fsdp_buffer_bytes = 2.0 * unit * (2.0 + 4.0);
			/* FP8 copies exist only for the gathered decoder layers */
			if (l->precision == TS_PREC_FP8)
				s->fp8_cache_bytes = 2.0 * 2.0 * layer_unit;
		} else {
			s->weights_bytes = 2.0 * nparams;
			s->grads_bytes = 4.0 * nparams;
			if (l->precision == TS_PREC_FP8)
				s->fp8_cache_bytes = 2.0 * (lin_tp + lin_rep + s->params_exp);
		}
		if (l->offload & TS_OFFLOAD_OPTIMIZER) {
			s->offload_optimizer_bytes = opt;
			opt = 0;
		}
		s->optimizer_bytes = opt;
	}

	/* activations */
	{
		/* DualPipe (DeepSeek's reference implementation, at least 2p
		 * micro-batches: ts_mem_prepare) runs 2(p/2-h-1) forwards of the
		 * direction that enters on the rank's side (h = ds[0]), then h+1
		 * pairs of one forward each way, and its steady state overlaps
		 * each backward with the next forward: p-h of stage h and h+1 of
		 * stage p-1-h at once, p+1 in all */
		double dual_n0 = (double)(p - ds[0]);
		double peak = dual ? dual_n0 * chunk[0] + (double)(ds[0] + 1) * chunk[1] :
			schedule_peak(p, v, r, c->micro, chunk);
		double units = chunk_all > 0 ? peak / chunk_all : 0;
		double inflight_layers_moe = units * (double)s->moe_layers;
		double inflight_layers_dense = units * (double)(s->layers - s->moe_layers);
		s->inflight = units;
		/* DualPipe: stage 0 is chunk 0 where held */
		s->embed_act_bytes = !holds_first ? 0 : dual ? dual_n0 * c->a_embed : units * c->a_embed;
		s->layer_act_bytes = peak - s->embed_act_bytes;
		if (holds_last)
			s->logits_bytes = c->a_logits * (1.0 + (double)m->mtp_layers);
		if (full) {
			s->transient_bytes = biggest_layer;
			s->full_recompute_saved_bytes = inflight_layers_dense * c->a_dense_full +
							inflight_layers_moe * c->a_moe_full -
							s->layer_act_bytes;
			if (s->full_recompute_saved_bytes < 0)
				s->full_recompute_saved_bytes = 0;
		} else {
			for (int i = 0; i < TS_MEM_NMODULES; i++)
				s->recompute_saved_bytes[i] = inflight_layers_dense * c->save_dense[i] +
							      inflight_layers_moe * c->save_moe[i];
			if (l->offload & TS_OFFLOAD_ACTIVATIONS) {
				s->offload_activation_bytes = inflight_layers_moe * c->a_offload_moe;
				if (s->moe_layers > 0)
					s->transient_bytes = c->a_offload_moe; /* one layer staged */
			}
		}
		s->activations_bytes = s->layer_act_bytes + s->embed_act_bytes + s->logits_bytes +
				       s->transient_bytes;
	}
}

static void finish(const struct ts_mem_ctx *c, struct ts_mem_stage *s)
{
	s->allocated_bytes = s->weights_bytes + s->fp8_cache_bytes + s->fsdp_buffer_bytes +
			     s->grads_bytes + s->optimizer_bytes + s->activations_bytes;
	s->context_bytes = c->l.context_bytes;
	s->fragmentation_bytes = c->l.fragmentation * s->allocated_bytes;
	s->total_bytes = s->allocated_bytes + s->context_bytes + s->fragmentation_bytes;
}

void ts_mem_stage_eval(const struct ts_mem_ctx *c, int64_t rank, struct ts_mem_stage *out)
{
	memset(out, 0, sizeof(*out));
	if (c->est == TS_MEM_EST_MOE)
		moe_eval(c, rank, out);
	else
		megatron_eval(c, out);
	finish(c, out);
}

void ts_mem_peak(const struct ts_mem_ctx *c, struct ts_mem_stage *out)
{
	struct ts_mem_stage s;
	int64_t n = c->est == TS_MEM_EST_MOE ? c->l.pp : 1;

	ts_mem_stage_eval(c, 0, out);
	for (int64_t r = 1; r < n; r++) {
		ts_mem_stage_eval(c, r, &s);
		if (s.total_bytes > out->total_bytes)
			*out = s;
	}
}
