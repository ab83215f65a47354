/*
 * steptime.c - the step-time model of `plan`: what one training step of a
 * layout costs on the busiest pipeline rank, term by term.
 *
 * A first-order "FLOPs over an efficiency" model cannot rank layouts: it
 * makes every layout equally efficient, so the planner prefers whatever
 * moves the fewest bytes. Here every GEMM of a layer is priced from its
 * real per-GPU shape (tile and wave quantisation, roofline against memory
 * bandwidth), expert GEMMs from the tokens each local expert receives on
 * the busiest EP rank, attention by sequence length, and communication per
 * group and link with the overlap Megatron actually gets. The few
 * constants that physics does not give (struct ts_plan_calib) were fitted
 * on the published runs; docs/memory-plan.md 4.3 states every term.
 */
#include <math.h>
#include <string.h>
#include "trainscope/gpus.h"
#include "plan_int.h"

static const char *const term_names[TS_T_COUNT] = {
	"gemm", "attention", "experts", "elementwise", "fp8_cast", "recompute", "latency",
	"tp_comm", "cp_comm", "ep_comm", "pp_comm", "bubble", "dp_comm", "optimizer"
};

const char *ts_plan_term_name(int term)
{
	return term >= 0 && term < TS_T_COUNT ? term_names[term] : "?";
}

/*
 * The fitted constants (bench/fit_plan.c, docs/memory-plan.md 4.3). Every
 * other number of the model is a stated physical assumption.
 */
void ts_plan_calib_init(struct ts_plan_calib *c)
{
	c->gemm_eff = 0.76;
	c->attn_eff = 0.30;
	c->layer_latency_s = 1400e-6;
	c->expert_half_rows = 256;
	c->imbalance = 1.60;
	c->ep_net_factor = 2.55;
	c->log_sigma = 0.076;
}

/* NCCL bus bandwidth reaches about 80 % of the link (nccl-tests on NVLink
 * and InfiniBand); applied to every collective. */
#define COMM_EFF 0.8
/* Flash attention's efficiency halves at this many query tokens per rank. */
#define ATTN_HALF_TOKENS 512.0
/* Flash attention backward: 5 GEMM-like passes against 2 forward (it
 * recomputes S = QK^T and the softmax). */
#define ATTN_BWD 2.5
#define TILE 128.0
/* SMs an overlapped collective takes from the compute it hides behind:
 * DeepEP's normal kernels default to 20 (Buffer.num_sms; the DeepSeek-V3
 * report: "20 of the 132 SMs" on H800), NCCL's ring collectives one SM per
 * channel, 16 channels assumed on NVLink/IB (an assumption, not fitted). */
#define EP_COMM_SMS 20.0
#define NCCL_COMM_SMS 16.0

/* Time added to the compute that hides `hidden` seconds of a collective
 * using `csms` of the device's SMs: while it runs the compute has
 * (S - csms)/S of the SMs. */
static double sm_steal_s(double hidden, double csms, double sms)
{
	return hidden > 0 && sms > csms ? hidden * csms / (sms - csms) : 0;
}

double ts_plan_gemm_s(double groups, double M, double N, double K, double peak, double eff,
		      double mem_bw, int64_t sms, double in_bytes)
{
	double tm, tn, tiles, waves, S = (double)(sms > 0 ? sms : 132), util, tc, tb;

	if (groups <= 0 || M <= 0 || N <= 0 || K <= 0 || peak <= 0 || eff <= 0)
		return 0;
	/* sizes a rounding error above a tile multiple are that multiple */
	tm = ceil(M / TILE - 1e-9);
	tn = ceil(N / TILE - 1e-9);
	tiles = groups * tm * tn;
	waves = ceil(tiles / S - 1e-9);
	/* useful work over the tiles' work, times the tiles over whole waves */
	util = (M * N) / (tm * TILE * tn * TILE) * tiles / (waves * S);
	tc = groups * 2.0 * M * N * K / (peak * eff * util);
	tb = mem_bw > 0 ? groups * (in_bytes * (M * K + K * N) + 2.0 * M * N) / mem_bw : 0;
	return tc > tb ? tc : tb;
}

/* The device and the fitted constants, as one GEMM pricing context. */
struct dev {
	double peak, peak_lin, mem_bw, in_lin;
	int64_t sms;
	int fp8;
	double eff;
};

/* Forward + backward (dgrad, wgrad) of a linear layer Y[M,N] = X[M,K] W[K,N]. */
static double lin3(const struct dev *d, double groups, double M, double N, double K, double *fwd)
{
	double f = ts_plan_gemm_s(groups, M, N, K, d->peak_lin, d->eff, d->mem_bw, d->sms, d->in_lin);
	double b = ts_plan_gemm_s(groups, M, K, N, d->peak_lin, d->eff, d->mem_bw, d->sms, d->in_lin) +
		   ts_plan_gemm_s(groups, N, K, M, d->peak_lin, d->eff, d->mem_bw, d->sms, d->in_lin);
	if (fwd)
		*fwd += f;
	return f + b;
}

/* FP8 casting of one linear layer per micro-batch: the input quantised in
 * the forward and the output gradient in the backward, each read as BF16
 * and written as FP8 plus a transposed FP8 copy (Hopper per-tensor and
 * blockwise recipes): 2 + 1 + 1 bytes per element, plus one more read for
 * the amax/scale pass. Weights are cast once per step (not priced). */
static double cast_bytes(const struct dev *d, double groups, double M, double N, double K)
{
	return d->fp8 ? groups * 5.0 * M * (K + N) : 0.0;
}

/* One layer's cost per micro-batch on one GPU, by term. */
struct layer_cost {
	double t[TS_T_COUNT];
	double compute;          /* GEMM + attention + experts + element-wise: what overlaps comm */
};

struct shape {
	double h, tau, tau_sp, tp, cp, te, iota, nloc, w;
	int64_t etp;
};

static double mem_s(const struct ts_plan_opts *o, double bytes)
{
	return o->mem_bw > 0 ? bytes / o->mem_bw : 0;
}

/* Attention block: projections, core attention, norms/RoPE, TP collectives. */
static void attention_block(const struct ts_model *m, const struct ts_plan_opts *o,
			    const struct dev *d, const struct shape *z, int rc, int modules,
			    struct layer_cost *lc)
{
	double tau = z->tau, tp = z->tp, h = z->h, fwd = 0, up_fwd = 0, cast = 0;
	double nq, core_fwd, sq, eff, elem;

	if (m->mla) {
		double n = (double)m->heads, dq = (double)(m->qk_head_dim + m->qk_rope_dim);
		double dv = (double)m->v_head_dim, rq = (double)m->q_lora_rank, rkv = (double)m->kv_lora_rank;
		double dr = (double)m->qk_rope_dim;
		if (rq > 0) {
			lc->t[TS_T_GEMM] += lin3(d, 1, tau, rq, h, &fwd);
			lc->t[TS_T_GEMM] += lin3(d, 1, tau, n * dq / tp, rq, &up_fwd);
			cast += cast_bytes(d, 1, tau, rq, h) + cast_bytes(d, 1, tau, n * dq / tp, rq);
		} else {
			lc->t[TS_T_GEMM] += lin3(d, 1, tau, n * dq / tp, h, &fwd);
			cast += cast_bytes(d, 1, tau, n * dq / tp, h);
		}
		lc->t[TS_T_GEMM] += lin3(d, 1, tau, rkv + dr, h, &fwd);
		lc->t[TS_T_GEMM] += lin3(d, 1, tau, n * ((double)m->qk_head_dim + dv) / tp, rkv, &up_fwd);
		lc->t[TS_T_GEMM] += lin3(d, 1, tau, h, n * dv / tp, &fwd);
		cast += cast_bytes(d, 1, tau, rkv + dr, h) +
			cast_bytes(d, 1, tau, n * ((double)m->qk_head_dim + dv) / tp, rkv) +
			cast_bytes(d, 1, tau, h, n * dv / tp);
		nq = n * (dq + dv) / 2.0; /* s^2 * n(d_qk + d_r + d_v) = 2 s^2 nq */
	} else {
		double q = (double)(m->heads * m->head_dim), k = (double)(m->kv_heads * m->head_dim);
		double qkv = q + 2.0 * k + (m->attn_output_gate ? q : 0.0);
		lc->t[TS_T_GEMM] += lin3(d, 1, tau, qkv / tp, h, &fwd);
		lc->t[TS_T_GEMM] += lin3(d, 1, tau, h, q / tp, &fwd);
		cast += cast_bytes(d, 1, tau, qkv / tp, h) + cast_bytes(d, 1, tau, h, q / tp);
		nq = q;
	}
	fwd += up_fwd;
	/* causal core attention forward per GPU: 2 * tau * s * nq / TP FLOPs
	 * (tau query tokens of the micro-batch on this CP rank against the
	 * whole sequence, half masked), at an efficiency rising with the
	 * query tokens per rank */
	sq = (double)o->seq / z->cp;
	eff = o->calib.attn_eff * sq / (sq + ATTN_HALF_TOKENS);
	core_fwd = 2.0 * tau * (double)o->seq * nq / tp / (d->peak * eff);
	/* unfused: the causal half of the scores, per local head, is written
	 * as BF16 and read back by the softmax, written again as probabilities
	 * and read by the PV GEMM (8 B each), and the backward reads and
	 * writes them once more; the GEMMs run at the GEMM efficiency */
	if (o->attention == TS_ATTN_UNFUSED) {
		double heads = (double)m->heads / tp, scores = tau * (double)o->seq / 2.0 * heads;
		core_fwd = 2.0 * tau * (double)o->seq * nq / tp / (d->peak * d->eff) + mem_s(o, 8.0 * scores);
	}
	lc->t[TS_T_ATTN] += core_fwd * (1.0 + ATTN_BWD);
	/* norm, residual and bias-add on the sequence-parallel tokens (32 h
	 * bytes a token fwd+bwd), RoPE on q and k (12 bytes per element) */
	elem = 32.0 * h * z->tau_sp + 12.0 * tau * nq / tp;
	lc->t[TS_T_ELEM] += mem_s(o, elem);
	lc->t[TS_T_CAST] += mem_s(o, cast);
	if (rc == TS_RC_FULL) {
		lc->t[TS_T_RECOMPUTE] += fwd + core_fwd + mem_s(o, elem) / 3.0;
	} else if (rc == TS_RC_SELECTIVE) {
		if (modules & TS_RCM_CORE_ATTN)
			lc->t[TS_T_RECOMPUTE] += core_fwd;
		if ((modules & TS_RCM_MLA_UP_PROJ) && m->mla)
			lc->t[TS_T_RECOMPUTE] += up_fwd;
		if (modules & TS_RCM_LAYERNORM)
			lc->t[TS_T_RECOMPUTE] += mem_s(o, 4.0 * h * z->tau_sp);
	}
}

/* A dense MLP (or the shared experts) of width f on tau tokens, TP-sharded. */
static void mlp_block(const struct ts_plan_opts *o, const struct dev *d, const struct shape *z,
		      double f, int recomputed, struct layer_cost *lc)
{
	double fwd = 0, fl = f / z->tp, elem;

	if (f <= 0)
		return;
	lc->t[TS_T_GEMM] += lin3(d, 1, z->tau, z->w * fl, z->h, &fwd);
	lc->t[TS_T_GEMM] += lin3(d, 1, z->tau, z->h, fl, &fwd);
	lc->t[TS_T_CAST] += mem_s(o, cast_bytes(d, 1, z->tau, z->w * fl, z->h) +
				  cast_bytes(d, 1, z->tau, z->h, fl));
	/* activation: fwd reads w*F writes F, bwd reads (w+1)*F writes w*F, 2 B each */
	elem = 4.0 * (z->w + 1.0) * fl * z->tau;
	lc->t[TS_T_ELEM] += mem_s(o, elem);
	if (recomputed)
		lc->t[TS_T_RECOMPUTE] += fwd + mem_s(o, elem) / 3.0;
}

/* Routed experts on the busiest EP rank: nloc grouped GEMMs of
 * iota*te/nloc rows each, router, permute/unpermute, activation. */
static void expert_block(const struct ts_model *m, const struct ts_plan_opts *o,
			 const struct dev *d, const struct shape *z, int rc, int modules,
			 struct layer_cost *lc)
{
	double rows = z->iota * z->te, me = rows / z->nloc, fe = (double)m->moe_ffn_hidden / (double)z->etp;
	double fwd = 0, act, perm, router;
	struct dev g = *d;

	/* a grouped GEMM launches one problem per local expert: per-expert
	 * setup, uneven problem sizes and short K loops in wgrad cost more
	 * the fewer rows each expert gets */
	g.eff = d->eff * me / (me + o->calib.expert_half_rows);
	lc->t[TS_T_EXPERT] += lin3(&g, z->nloc, me, z->w * fe, z->h, &fwd);
	lc->t[TS_T_EXPERT] += lin3(&g, z->nloc, me, z->h, fe, &fwd);
	lc->t[TS_T_CAST] += mem_s(o, cast_bytes(d, z->nloc, me, z->w * fe, z->h) +
				  cast_bytes(d, z->nloc, me, z->h, fe));
	/* router GEMM h x E on the sequence-parallel tokens (FP32, small) */
	router = ts_plan_gemm_s(1, z->tau_sp, (double)m->num_experts, z->h, d->peak / 2.0, d->eff,
				o->mem_bw, d->sms, 4.0) * 3.0;
	lc->t[TS_T_GEMM] += router;
	act = 4.0 * (z->w + 1.0) * fe * rows;
	/* permute and unpermute, forward and backward: 4 passes reading and
	 * writing each token copy (2 B * h), plus the top-k softmax (FP32) */
	perm = 16.0 * z->h * rows + 24.0 * (double)m->num_experts * z->tau_sp;
	lc->t[TS_T_ELEM] += mem_s(o, act + perm);
	if (rc == TS_RC_FULL || (rc == TS_RC_SELECTIVE && (modules & TS_RCM_MOE)))
		lc->t[TS_T_RECOMPUTE] += fwd + mem_s(o, act + perm) / 3.0;
	else if (rc == TS_RC_SELECTIVE && (modules & TS_RCM_MOE_ACT))
		lc->t[TS_T_RECOMPUTE] += mem_s(o, act) / 3.0;
}

/* bytes over a link at the achieved bus bandwidth */
static double xfer_s(const struct ts_plan_opts *o, double intra, double inter)
{
	return (intra > 0 ? intra / (o->intra_bw * COMM_EFF) : 0) +
	       (inter > 0 ? inter / (o->inter_bw * COMM_EFF) : 0);
}

/* Share of a group's peers inside the node, rank order tp-cp-ep-dp-pp. */
static double intra_fraction(int64_t stride, int64_t size, int64_t node)
{
	int64_t inner;

	if (size <= 1)
		return 1.0;
	inner = stride >= node ? 1 : node / stride;
	if (inner > size)
		inner = size;
	return (double)(inner - 1) / (double)(size - 1);
}

static int spans_nodes(int64_t stride, int64_t size, int64_t node)
{
	return size > 1 && stride * size > node;
}

/*
 * EP bytes per MoE layer per micro-batch on the busiest rank: dispatch and
 * combine, forward and backward (4 all-to-alls) of iota*te token copies of
 * h BF16 values. Flat all-to-all: (EP-1)/EP of the copies leave the GPU,
 * the share of peers outside the node over the network. Hierarchical: a
 * token crosses the network once per remote node holding one of its K
 * experts: its experts fall uniformly on the M nodes it may reach, of
 * which it uses M(1 - (1 - 1/M)^K), each remote with probability (N-1)/N,
 * for an EP group over N nodes; every other copy moves over NVLink. M = N
 * without group-limited routing ((N-1)(1 - (1 - 1/N)^K)); with it (the
 * experts in n_group groups, a token's from at most topk_group of them,
 * DeepSeek-V3's node-limited routing) the groups of a token span at most
 * topk_group * ceil(N / n_group) nodes.
 */
static void ep_volume(const struct ts_model *m, const struct ts_plan_opts *o, const struct shape *z,
		      const struct ts_plan_layout *x, double *intra, double *inter)
{
	int64_t G = o->gpus_per_node;
	double copies = z->iota * z->te, all = 4.0 * (double)(x->ep - 1) / (double)x->ep * copies * z->h * 2.0;
	double f = intra_fraction(x->etp, x->ep, G);
	double N = (double)(x->ep * x->etp) / (double)G, K = (double)(m->topk ? m->topk : 1), M;

	if (o->dispatcher == TS_DISPATCH_ALLTOALL || N <= 1.0) {
		*intra = all * f;
		*inter = all * (1.0 - f);
		return;
	}
	M = N;
	if (m->expert_groups > 0 && m->group_topk > 0) {
		double lim = (double)m->group_topk * ceil(N / (double)m->expert_groups - 1e-9);
		if (lim < M)
			M = lim;
	}
	/* tokens of this GPU: copies / K (each goes to K experts) */
	*inter = 4.0 * copies / K * (N - 1.0) / N * M * (1.0 - pow(1.0 - 1.0 / M, K)) * z->h * 2.0;
	*intra = all;
}

/* One layer per micro-batch on one GPU: compute terms and exposed comm. */
static void layer(const struct ts_model *m, const struct ts_plan_opts *o, const struct dev *d,
		  const struct shape *z, const struct ts_plan_layout *x, int moe, struct layer_cost *lc)
{
	int64_t G = o->gpus_per_node;
	double tp_bytes, attn, tcp = 0, tep = 0, ttp;
	int rc = x->recompute, mods = x->modules;

	memset(lc, 0, sizeof(*lc));
	attention_block(m, o, d, z, rc, mods, lc);
	attn = lc->t[TS_T_ATTN];
	if (moe) {
		mlp_block(o, d, z, (double)m->shared_ffn_hidden,
			  rc == TS_RC_FULL || (rc == TS_RC_SELECTIVE && (mods & (TS_RCM_SHARED_EXPERTS | TS_RCM_MOE))),
			  lc);
		expert_block(m, o, d, z, rc, mods, lc);
	} else {
		mlp_block(o, d, z, (double)m->ffn_hidden,
			  rc == TS_RC_FULL || (rc == TS_RC_SELECTIVE && (mods & TS_RCM_MLP)), lc);
	}
	/* fixed per-layer cost: the layer's launches (one unit) and, for an MoE
	 * layer, the router and dispatcher preprocessing with its host sync
	 * (a second unit); CUDA graphs remove what they capture (enum
	 * ts_cuda_graphs); full recompute launches the forward again (a third
	 * of the layer's kernels) */
	{
		double base = 1.0, extra = moe ? 1.0 : 0.0;
		if (o->cuda_graphs >= TS_GRAPHS_MOE)
			extra = 0;
		if (o->cuda_graphs == TS_GRAPHS_ATTN_MOE)
			base = 0.5;
		if (o->cuda_graphs == TS_GRAPHS_FULL)
			base = 0;
		lc->t[TS_T_LATENCY] = o->calib.layer_latency_s * (base + extra) * (rc == TS_RC_FULL ? 4.0 / 3.0 : 1.0);
	}
	lc->compute = lc->t[TS_T_GEMM] + lc->t[TS_T_ATTN] + lc->t[TS_T_EXPERT] + lc->t[TS_T_ELEM] +
		      lc->t[TS_T_CAST] + lc->t[TS_T_RECOMPUTE];
	/* TP/SP: all-gather + reduce-scatter forward and backward per block
	 * ((t-1)/t of tau*h*2 B each); the MoE block has them only with ETP > 1
	 * (then over the expert tokens) */
	if (x->tp > 1) {
		double per = (z->tp - 1.0) / z->tp * z->tau * z->h * 2.0;
		tp_bytes = 4.0 * per * (moe ? 1.0 : 2.0);
		ttp = spans_nodes(1, x->tp, G) ? xfer_s(o, 0, tp_bytes) : xfer_s(o, tp_bytes, 0);
		lc->t[TS_T_TP] += ttp;
	}
	if (moe && x->etp > 1) {
		double v = 4.0 * (double)(x->etp - 1) / (double)x->etp * z->iota * z->te * z->h * 2.0;
		lc->t[TS_T_TP] += spans_nodes(1, x->etp, G) ? xfer_s(o, 0, v) : xfer_s(o, v, 0);
	}
	/* --tp-comm-overlap: the collectives run under the GEMMs they feed */
	if (o->tp_overlap) {
		double hide = lc->t[TS_T_GEMM] + lc->t[TS_T_EXPERT];
		lc->t[TS_T_TP] = lc->t[TS_T_TP] > hide ? lc->t[TS_T_TP] - hide : 0;
	}
	/* CP: K/V ring, 3*(cp-1) chunks per layer, overlapped with attention */
	if (x->cp > 1) {
		double kv = m->mla ? (double)m->heads * (double)(m->qk_head_dim + m->qk_rope_dim + m->v_head_dim)
				   : 2.0 * (double)(m->kv_heads * m->head_dim);
		double v = 3.0 * (double)(x->cp - 1) * z->tau * kv / z->tp * 2.0;
		tcp = spans_nodes(x->tp, x->cp, G) ? xfer_s(o, 0, v) : xfer_s(o, v, 0);
		tcp = tcp > attn ? tcp - attn : 0;
		lc->t[TS_T_CP] = tcp;
	}
	/* EP: dispatch + combine, forward and backward, of the busiest rank's
	 * token copies; with --moe-overlap hidden behind the other micro-batch's
	 * compute of this layer */
	if (moe && x->ep > 1) {
		double intra, inter;
		ep_volume(m, o, z, x, &intra, &inter);
		/* the hierarchical dispatcher's network and NVLink stages run at
		 * once (DeepEP/HybridEP internode kernels forward each chunk over
		 * NVLink while the next crosses the network): the slower stage
		 * sets the time; a flat all-to-all moves both in one collective */
		if (o->dispatcher == TS_DISPATCH_HIER) {
			double a = xfer_s(o, intra, 0);
			double b = inter > 0 ? inter / (o->inter_bw * o->calib.ep_net_factor) : 0;
			tep = a > b ? a : b;
		} else {
			tep = xfer_s(o, intra, inter);
		}
		/* recomputing the MoE block dispatches and combines again */
		if (rc == TS_RC_FULL || (rc == TS_RC_SELECTIVE && (mods & TS_RCM_MOE)))
			tep *= 1.5;
		if (o->moe_overlap) {
			double hidden = tep < lc->compute ? tep : lc->compute;
			tep = tep - hidden + sm_steal_s(hidden, EP_COMM_SMS, (double)d->sms);
		}
		lc->t[TS_T_EP] = tep;
	}
}

static void add_cost(double *acc, const struct layer_cost *lc, double n)
{
	for (int t = 0; t < TS_T_COUNT; t++)
		acc[t] += lc->t[t] * n;
}

/* Communication volumes per GPU per step (the record in comm_bytes). */
static void volumes(const struct ts_model *m, const struct ts_plan_opts *o, const struct shape *z,
		    struct ts_plan_layout *x)
{
	double h = z->h, tau = z->tau, nl = (double)m->layers / (double)x->pp;
	double nm = (double)m->moe_layers / (double)x->pp, mb = (double)x->micro, tp = z->tp;
	double te = z->te;
	int64_t G = o->gpus_per_node;

	memset(x->comm_bytes, 0, sizeof(x->comm_bytes));
#define RING(g, bytes, stride, size) do { if ((size) > 1 && (bytes) > 0) \
	x->comm_bytes[g][spans_nodes(stride, size, G) ? TS_LINK_INTER : TS_LINK_INTRA] += (bytes); } while (0)
	if (x->tp > 1) {
		double per = (tp - 1.0) / tp * tau * h * 2.0;
		double blocks = 2.0 * (nl - nm) + nm * (x->etp > 1 ? 2.0 : 1.0);
		RING(TS_COMM_TP, 4.0 * per * blocks * mb, 1, x->tp);
	}
	if (x->cp > 1) {
		double kv = m->mla ? (double)m->heads * (double)(m->qk_head_dim + m->qk_rope_dim + m->v_head_dim)
				   : 2.0 * (double)(m->kv_heads * m->head_dim);
		RING(TS_COMM_CP, 3.0 * (double)(x->cp - 1) * tau * kv / tp * 2.0 * nl * mb, x->tp, x->cp);
	}
	if (x->ep > 1 && nm > 0) {
		double intra, inter;
		ep_volume(m, o, z, x, &intra, &inter);
		x->comm_bytes[TS_COMM_EP][TS_LINK_INTRA] += intra * nm * mb;
		x->comm_bytes[TS_COMM_EP][TS_LINK_INTER] += inter * nm * mb;
	}
	if (x->etp > 1 && nm > 0)
		RING(TS_COMM_ETP, 4.0 * (double)(x->etp - 1) / (double)x->etp * te * h * 2.0 * nm * mb, 1, x->etp);
	if (x->pp > 1) {
		double v = 2.0 * (double)x->vpp * mb * tau * h * 2.0 / z->tp;
		x->comm_bytes[TS_COMM_PP][x->tp * x->cp * x->dp >= G ? TS_LINK_INTER : TS_LINK_INTRA] += v;
	}
	{
		/* distributed optimizer: FP32 gradients reduce-scattered and BF16
		 * weights all-gathered once a step (6 B); FSDP: weights gathered
		 * twice and gradients reduce-scattered every micro-batch (8 B) */
		double d = (double)(x->dp * x->cp), e = (double)x->edp;
		double per = o->fsdp ? 8.0 * mb : 6.0;
		if (d > 1)
			RING(TS_COMM_DP, (d - 1.0) / d * x->params_dense * per, x->tp, x->dp * x->cp);
		if (e > 1 && x->params_expert > 0)
			RING(TS_COMM_DP, (e - 1.0) / e * x->params_expert * per, x->etp * x->ep, x->edp);
	}
#undef RING
}

void plan_step_time(const struct ts_model *m, const struct ts_plan_opts *o,
		    const struct ts_mem_ctx *c, struct ts_plan_layout *x)
{
	struct dev d;
	struct shape z;
	struct layer_cost dense, moe, last;
	struct ts_plan_time *T = &x->time;
	double best = -1, rank_t[TS_T_COUNT], mb = (double)x->micro, V;
	int64_t G = o->gpus_per_node, vst = x->pp * x->vpp;
	int dual = o->schedule == TS_SCHED_DUALPIPE && x->pp > 1;

	memset(T, 0, sizeof(*T));
	d.fp8 = o->precision == TS_PREC_FP8;
	d.peak = o->peak_bf16 > 0 ? o->peak_bf16 : d.fp8 ? o->peak_flops / 2.0 : o->peak_flops;
	d.peak_lin = o->peak_flops;
	d.in_lin = d.fp8 ? 1.0 : 2.0;
	d.mem_bw = o->mem_bw;
	d.sms = o->sms > 0 ? o->sms : 132;
	d.eff = o->calib.gemm_eff;
	z.h = (double)m->hidden;
	z.tp = (double)x->tp;
	z.cp = (double)x->cp;
	z.tau = (double)o->seq * (double)x->mbs / z.cp;
	z.tau_sp = x->tp > 1 ? z.tau / z.tp : z.tau;
	z.te = z.tau * (double)(m->topk ? m->topk : 1) * (double)x->etp / z.tp;
	z.etp = x->etp;
	z.nloc = m->num_experts > 0 ? (double)m->num_experts / (double)x->ep : 1.0;
	z.iota = 1.0;
	if (m->num_experts > 0 && x->ep > 1 && o->routing == TS_ROUTING_NATURAL)
		z.iota = o->imbalance > 0 ? o->imbalance : o->calib.imbalance;
	z.w = m->gated_mlp ? 2.0 : 1.0;
	T->imbalance = z.iota;
	volumes(m, o, &z, x);

	layer(m, o, &d, &z, x, 0, &dense);
	layer(m, o, &d, &z, x, 1, &moe);
	/* the output layer and loss: logits GEMM (BF16) and the cross entropy
	 * over the FP32 logits (read/written 3 times, 4 B) */
	memset(&last, 0, sizeof(last));
	V = (double)c->vocab;
	{
		struct dev b = d;
		b.peak_lin = d.peak;
		b.in_lin = 2.0;
		b.fp8 = 0;
		last.t[TS_T_GEMM] = lin3(&b, 1, z.tau, V / z.tp, z.h, NULL) * (double)(1 + m->mtp_layers);
		last.t[TS_T_ELEM] = mem_s(o, 12.0 * V / z.tp * z.tau) * (double)(1 + m->mtp_layers);
		if (m->mtp_layers > 0)
			last.t[TS_T_GEMM] += lin3(&b, 1, z.tau, z.h, 2.0 * z.h / z.tp, NULL) * (double)m->mtp_layers;
	}
	/* the busiest pipeline rank: its chunks' layers, the output layer on
	 * the last virtual stage (with the MTP layers). Under DualPipe rank r
	 * runs half the micro-batches through each of its two stages
	 * (ts_mem_dualpipe_stages): its micro-batch is their mean */
	for (int64_t r = 0; r < x->pp; r++) {
		double acc[TS_T_COUNT], sum = 0, wt = dual ? 0.5 : 1.0;
		int64_t ds[2];
		ts_mem_dualpipe_stages(x->pp, r, ds);
		memset(acc, 0, sizeof(acc));
		for (int64_t k = 0, j = dual ? ds[0] : r; j < vst && k < (dual ? 2 : x->vpp); k++) {
			int64_t first, cnt, nm;
			ts_mem_vstage_layers(c, j, &first, &cnt);
			nm = c->moe_prefix[first + cnt] - c->moe_prefix[first];
			add_cost(acc, &dense, wt * (double)(cnt - nm));
			add_cost(acc, &moe, wt * (double)nm);
			if (j == vst - 1) {
				add_cost(acc, &last, wt);
				if (m->mtp_layers > 0)
					add_cost(acc, ts_model_is_moe(m, m->layers - 1) ? &moe : &dense,
						 wt * (double)m->mtp_layers);
			}
			j = dual ? ds[1] : j + x->pp;
		}
		for (int t = 0; t < TS_T_COUNT; t++)
			sum += acc[t];
		if (sum > best) {
			best = sum;
			T->busiest_rank = r;
			memcpy(rank_t, acc, sizeof(acc));
		}
	}
	T->rank_mb_s = best;
	for (int t = 0; t < TS_T_COUNT; t++)
		T->term_s[t] = rank_t[t] * mb;
	/* pipeline send/receive of each micro-batch at each virtual stage
	 * boundary (activation forward, gradient backward); the interleaved
	 * schedule overlaps it (Megatron's overlap_p2p_comm) */
	if (x->pp > 1 && x->vpp == 1 && o->schedule != TS_SCHED_DUALPIPE) {
		double v = x->comm_bytes[TS_COMM_PP][TS_LINK_INTRA] + x->comm_bytes[TS_COMM_PP][TS_LINK_INTER];
		T->term_s[TS_T_PP] = x->tp * x->cp * x->dp >= G ? xfer_s(o, 0, v) : xfer_s(o, v, 0);
	}
	if (o->schedule == TS_SCHED_DUALPIPE && x->pp > 1) {
		/* DualPipe (DeepSeek-V3 report, table 2): (PP/2-1)(F&B + B - 3W)
		 * against 1F1B's (PP-1)(F+B), its sends hidden behind computation
		 * (report 3.2.1). F, B and W from the busiest rank's micro-batch:
		 * the backward does the input and the weight gradients, each a
		 * forward's work (F = W = (mb - rc)/3, B = 2F + rc with the
		 * recomputed forward rc); F&B, a forward and a backward chunk
		 * overlapped, hides communication, not computation: F + B */
		double rc = rank_t[TS_T_RECOMPUTE], f = (best - rc) / 3.0, b = 2.0 * f + rc, w = f;
		T->term_s[TS_T_BUBBLE] = ((double)x->pp / 2.0 - 1.0) * ((f + b) + b - 3.0 * w);
	} else {
		/* interleaved 1F1B: (p-1)/v micro-batches of fill and drain */
		T->term_s[TS_T_BUBBLE] = best * (double)(x->pp - 1) / (double)x->vpp;
	}
	/* distributed optimizer: the FP32 gradient reduce-scatter (4 of the 6
	 * bytes) overlaps the last micro-batch's backward (2/3 of it), the BF16
	 * parameter all-gather the first forward (1/3) */
	if (o->fsdp) {
		/* FSDP: every micro-batch all-gathers the BF16 weights in the
		 * forward (2 B, behind the forward: 1/3 of the micro-batch) and
		 * again in the backward with the FP32 gradient reduce-scatter
		 * (2 + 4 B, behind the backward: 2/3); comm_bytes holds the 8 B
		 * of every micro-batch of the step */
		double t_mb = xfer_s(o, x->comm_bytes[TS_COMM_DP][TS_LINK_INTRA],
				     x->comm_bytes[TS_COMM_DP][TS_LINK_INTER]) / mb;
		double fw = t_mb * 2.0 / 8.0, bw = t_mb * 6.0 / 8.0;
		double hf = fw < best / 3.0 ? fw : best / 3.0, hb = bw < best * 2.0 / 3.0 ? bw : best * 2.0 / 3.0;
		T->term_s[TS_T_DP] = (fw - hf + bw - hb + sm_steal_s(hf + hb, NCCL_COMM_SMS, (double)d.sms)) * mb;
	} else {
		double t_dp = xfer_s(o, x->comm_bytes[TS_COMM_DP][TS_LINK_INTRA],
				     x->comm_bytes[TS_COMM_DP][TS_LINK_INTER]);
		double rs = t_dp * 4.0 / 6.0, ag = t_dp * 2.0 / 6.0;
		double hr = rs < best * 2.0 / 3.0 ? rs : best * 2.0 / 3.0, ha = ag < best / 3.0 ? ag : best / 3.0;
		T->term_s[TS_T_DP] = rs - hr + ag - ha + sm_steal_s(hr + ha, NCCL_COMM_SMS, (double)d.sms);
	}
	/* Adam over this GPU's optimizer shard (FP32 master, m, v read and
	 * written, the FP32 gradient read, the BF16 weight written: 30 B a
	 * parameter) and the gradient-norm pass over all local gradients (4 B) */
	{
		double dshard = x->params_dense / (double)(x->dp * x->cp);
		double eshard = x->params_expert / (double)(x->edp > 0 ? x->edp : 1);
		T->term_s[TS_T_OPTIMIZER] = mem_s(o, 30.0 * (dshard + eshard) +
						  4.0 * (x->params_dense + x->params_expert));
	}
	T->step_s = 0;
	for (int t = 0; t < TS_T_COUNT; t++)
		T->step_s += T->term_s[t];
	T->low_s = T->step_s * exp(-o->calib.log_sigma);
	T->high_s = T->step_s * exp(o->calib.log_sigma);
	x->bubble_s = T->term_s[TS_T_BUBBLE];
	x->exposed_comm_s = T->term_s[TS_T_TP] + T->term_s[TS_T_CP] + T->term_s[TS_T_EP] +
			    T->term_s[TS_T_PP] + T->term_s[TS_T_DP];
	x->compute_s = T->step_s - x->bubble_s - x->exposed_comm_s;
	x->step_s = T->step_s;
}
