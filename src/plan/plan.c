/*
 * plan.c - enumerate the legal layouts of a model on N GPUs, price their
 * memory with the recompute/offload ladder and their step time with the
 * calibrated model (steptime.c), and rank the layouts that pass the Fit
 * rules by it.
 *
 * The workflow's rules (fit with the smallest model parallelism, selective
 * before full recompute, offload last, keep TP and EP inside the fast
 * domain, PP+VPP across nodes, EP before ETP, CP only for long sequences)
 * are still applied as a sieve, so every layout records the rule that
 * would have removed it; but applied literally they keep layouts the
 * step-time model prices much slower, so only the Fit rules (fits, offload
 * last) filter and the Scale rules explain and break ties.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/flops.h"
#include "trainscope/gpus.h"
#include "plan_int.h"

static const char *const rule_keys[TS_RULE_COUNT] = {
	"survivor", "fit", "offload_last", "min_model_parallel", "selective_before_full",
	"max_dp", "tp_ep_in_node", "pp_with_vpp", "ep_before_etp", "cp_long_sequences_only"
};

static const char *const rule_texts[TS_RULE_COUNT] = {
	"kept by every rule",
	"fits in device memory (with the context and fragmentation allowance)",
	"offload last: no offload while a layout fits without it",
	"smallest model parallelism that fits: max(TP*CP*PP, ETP*EP*PP)",
	"selective recompute before full: the lightest recompute that fits",
	"maximise DP: the smallest TP*CP*PP",
	"TP and ETP*EP inside one node (NVLink/MTLink domain)",
	"PP across nodes with VPP (interleaved schedule)",
	"EP before ETP for experts (ETP = 1)",
	"CP only for long sequences (seq/CP >= 4096)"
};

static const char *const comm_names[TS_COMM_COUNT] = { "tp", "cp", "ep", "etp", "pp", "dp" };

const char *ts_plan_rule_key(int rule)
{
	return rule >= 0 && rule < TS_RULE_COUNT ? rule_keys[rule] : "?";
}

const char *ts_plan_rule_text(int rule)
{
	return rule >= 0 && rule < TS_RULE_COUNT ? rule_texts[rule] : "?";
}

const char *ts_plan_comm_name(int group)
{
	return group >= 0 && group < TS_COMM_COUNT ? comm_names[group] : "?";
}

void ts_plan_opts_init(struct ts_plan_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->inter_bw = 50e9;
	o->precision = TS_PREC_BF16;
	o->est = TS_MEM_EST_MOE;
	o->max_mbs = 1;
	o->max_vpp = 8;
	o->context_bytes = 1024.0 * 1024.0 * 1024.0;
	o->fragmentation = 0.05;
	o->routing = TS_ROUTING_NATURAL;
	ts_plan_calib_init(&o->calib);
}

void ts_plan_init(struct ts_plan *p)
{
	memset(p, 0, sizeof(*p));
}

void ts_plan_release(struct ts_plan *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------ ladder */

struct option {
	int recompute, modules, offload;
};

/* The memory options in the order the workflow tries them. */
static int ladder(const struct ts_model *m, struct option *opt)
{
	int fine = TS_RCM_CORE_ATTN | TS_RCM_LAYERNORM;
	int n = 0;

	if (m->num_experts)
		fine |= TS_RCM_MOE_ACT;
	if (m->mla)
		fine |= TS_RCM_MLA_UP_PROJ;
	if (m->shared_ffn_hidden)
		fine |= TS_RCM_SHARED_EXPERTS;
	opt[n++] = (struct option){ TS_RC_NONE, 0, 0 };
	opt[n++] = (struct option){ TS_RC_SELECTIVE, TS_RCM_CORE_ATTN, 0 };
	opt[n++] = (struct option){ TS_RC_SELECTIVE, fine, 0 };
	opt[n++] = (struct option){ TS_RC_FULL, 0, 0 };
	if (m->num_experts)
		opt[n++] = (struct option){ TS_RC_SELECTIVE, fine, TS_OFFLOAD_ACTIVATIONS };
	opt[n++] = (struct option){ TS_RC_SELECTIVE, fine, TS_OFFLOAD_OPTIMIZER };
	opt[n++] = (struct option){ TS_RC_FULL, 0, TS_OFFLOAD_OPTIMIZER | TS_OFFLOAD_ACTIVATIONS };
	return n;
}

int ts_plan_rc_level(const struct ts_plan_layout *x)
{
	if (x->recompute == TS_RC_FULL)
		return 3;
	if (x->recompute == TS_RC_SELECTIVE)
		return x->modules == TS_RCM_CORE_ATTN ? 1 : 2;
	return 0;
}

static int violations(const struct ts_plan_opts *o, const struct ts_plan_layout *x)
{
	int v = 0;

	if (x->tp > o->gpus_per_node || x->ep * x->etp > o->gpus_per_node)
		v |= 1 << TS_RULE_NODE;
	if (x->pp > 1 && x->vpp == 1 && o->schedule != TS_SCHED_DUALPIPE)
		v |= 1 << TS_RULE_PP_VPP;
	if (x->etp > 1)
		v |= 1 << TS_RULE_EP_BEFORE_ETP;
	if (x->cp > 1 && o->seq / x->cp < 4096)
		v |= 1 << TS_RULE_CP_LONG;
	return v;
}

/* ------------------------------------------------------------ stages */

int ts_plan_stage_rule(int64_t layers, int64_t vstages, int64_t *first, int64_t *last, int *uneven)
{
	*first = *last = -1;
	*uneven = 0;
	if (vstages < 1 || layers < 1)
		return -1;
	if (layers % vstages == 0)
		return 0;
	if (vstages > 1 && (layers + 1) % vstages == 0) {
		*first = (layers + 1) / vstages - 1; /* the embedding counts as a layer */
		return 0;
	}
	if (vstages > 2 && (layers + 2) % vstages == 0) {
		*first = *last = (layers + 2) / vstages - 1; /* embedding and loss count */
		return 0;
	}
	if (vstages > layers)
		return -1;
	*uneven = 1;
	return 0;
}

/* ------------------------------------------------------------ search */

struct search {
	const struct ts_model *m;
	const struct ts_plan_opts *o;
	struct ts_plan *p;
	struct option opt[TS_PLAN_MAX_OPTIONS];
	int nopt;
	struct ts_mem_stage peak;
	int64_t ep[256];         /* divisors of the expert count (<= 2^20: <= 240 of them) that fit */
	int nep;
	struct ts_mem_ctx ctx;
};

static int push(struct ts_plan *p, const struct ts_plan_layout *x)
{
	if (ts_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)))
		return TS_ENOMEM;
	p->v[p->n++] = *x;
	return 0;
}

/* Memory of ladder option i for the layout: 1 fits, 0 does not, -1 illegal. */
static int eval_option(struct search *s, struct ts_mem_layout *l, const struct ts_plan_layout *base,
		       int i, struct ts_plan_layout *x)
{
	const struct ts_plan_opts *o = s->o;
	struct ts_err e2;

	*x = *base;
	l->recompute = s->opt[i].recompute;
	l->recompute_modules = s->opt[i].modules;
	l->offload = s->opt[i].offload;
	ts_err_init(&e2);
	if (ts_mem_prepare(&s->ctx, s->m, l, o->est, &e2))
		return -1;
	ts_mem_peak(&s->ctx, &s->peak);
	x->recompute = l->recompute;
	x->modules = l->recompute_modules;
	x->offload = l->offload;
	x->option = i;
	x->edp = s->ctx.edp;
	x->micro = s->ctx.micro;
	x->memory_bytes = s->peak.total_bytes;
	x->allocated_bytes = s->peak.allocated_bytes;
	x->peak_rank = s->peak.rank;
	x->params_dense = s->peak.params_tp + s->peak.params_rep;
	x->params_expert = s->peak.params_exp;
	x->fits = s->peak.total_bytes <= o->capacity_bytes;
	x->violations = violations(o, x);
	return x->fits;
}

/* The job's model FLOPs per step, for the record: one number for every
 * layout, so the vocabulary is padded as for TP 1 (`mfu` without --tp);
 * a layout's TP pads it by at most 1024 rows, under 0.05 % of the FLOPs. */
static int model_flops(const struct ts_model *m, const struct ts_plan_opts *o, double *flops,
		       struct ts_err *err)
{
	struct ts_flops_shape sh;
	struct ts_flops f;

	ts_flops_shape_init(&sh);
	sh.seq = o->seq;
	sh.gbs = o->gbs;
	if (ts_flops_compute(m, &sh, TS_FORMULA_CURRENT, &f, err))
		return err->code;
	*flops = f.per_step;
	return 0;
}

/* The memory model's view of a plan layout (stage layer counts included). */
static void mem_layout_of(struct ts_mem_layout *l, const struct ts_plan_layout *x,
			  const struct ts_plan_opts *o)
{
	ts_mem_layout_init(l);
	l->tp = x->tp;
	l->pp = x->pp;
	l->vpp = x->vpp;
	l->cp = x->cp;
	l->ep = x->ep;
	l->etp = x->etp;
	l->dp = x->dp;
	l->mbs = x->mbs;
	l->gbs = o->gbs;
	l->seq = o->seq;
	l->sequence_parallel = x->tp > 1;
	l->precision = o->precision;
	l->fsdp = o->fsdp;
	l->context_bytes = o->context_bytes;
	l->fragmentation = o->fragmentation;
	l->first_stage_layers = x->first_layers;
	l->last_stage_layers = x->last_layers;
	/* Megatron's formulas have no DualPipe: they price it as 1F1B (warned) */
	l->dualpipe = o->schedule == TS_SCHED_DUALPIPE && o->est == TS_MEM_EST_MOE;
}

static int try_layout(struct search *s, const struct ts_plan_layout *base, struct ts_err *err)
{
	const struct ts_plan_opts *o = s->o;
	struct ts_mem_layout l;
	double option_bytes[TS_PLAN_MAX_OPTIONS] = { 0 };

	s->p->parallel_layouts++;
	if (o->enumerate_only)
		return 0;
	mem_layout_of(&l, base, o);
	/* every option of the ladder is priced; the first that fits is kept,
	 * else the most frugal one with its shortfall */
	{
		struct ts_plan_layout x, y;
		int chosen = -1, rc;

		for (int k = 0; k < s->nopt; k++) {
			if ((rc = eval_option(s, &l, base, k, &y)) < 0)
				return 0; /* the memory model refuses it: not a legal layout */
			option_bytes[k] = y.memory_bytes;
			if (chosen < 0 && (rc == 1 || k == s->nopt - 1)) {
				x = y;
				chosen = k;
			}
		}
		memcpy(x.option_bytes, option_bytes, sizeof(option_bytes));
		/* the context holds the last option; the layer split is the same */
		if (x.fits && !o->memory_only)
			plan_step_time(s->m, o, &s->ctx, &x);
		if (push(s->p, &x))
			return ts_err_set(err, TS_ENOMEM, "plan: out of memory after %zu layouts", s->p->n);
	}
	return 0;
}

int ts_plan_vpp_searched(const struct ts_plan_opts *o, int64_t layers, int64_t pp, int64_t vpp)
{
	if (vpp == 1)
		return 1;
	if (vpp < 1 || pp <= 1 || o->schedule == TS_SCHED_DUALPIPE)
		return 0;
	if (vpp <= o->max_vpp)
		return pp * vpp <= layers + 2;
	return layers % (pp * vpp) == 0;
}

/* All layouts for one (TP, CP, PP): VPP, EP, ETP, MBS. */
static int enumerate_inner(struct search *s, int64_t tp, int64_t cp, int64_t pp, struct ts_err *err)
{
	const struct ts_model *m = s->m;
	const struct ts_plan_opts *o = s->o;
	int64_t dp = o->gpus / (tp * cp * pp);
	int rc;

	if (o->schedule == TS_SCHED_DUALPIPE && pp % 2 && pp > 1)
		return 0;
	for (int64_t vpp = 1; pp * vpp <= m->layers + 2; vpp++) {
		int64_t first, last;
		int uneven;
		if (!ts_plan_vpp_searched(o, m->layers, pp, vpp))
			continue;
		if (ts_plan_stage_rule(m->layers, pp * vpp, &first, &last, &uneven))
			continue;
		for (int d = 0; d < s->nep; d++) {
			int64_t ep = s->ep[d];
			for (int64_t etp = 1; etp <= tp; etp++) {
				if (tp % etp || (tp * cp * dp) % (ep * etp))
					continue;
				if (m->num_experts == 0 && etp > 1)
					continue;
				for (int64_t mbs = 1; mbs <= o->max_mbs; mbs *= 2) {
					struct ts_plan_layout x;
					int64_t micro;
					if (o->gbs % (mbs * dp))
						continue;
					micro = o->gbs / (mbs * dp);
					if (vpp > 1 && micro % pp)
						continue;
					if (o->schedule == TS_SCHED_DUALPIPE &&
					    !ts_mem_dualpipe_micro_ok(pp, micro))
						continue;
					memset(&x, 0, sizeof(x));
					x.tp = tp;
					x.cp = cp;
					x.pp = pp;
					x.vpp = vpp;
					x.dp = dp;
					x.ep = ep;
					x.etp = etp;
					x.mbs = mbs;
					x.micro = micro;
					x.uneven = uneven || first >= 0;
					x.first_layers = first;
					x.last_layers = last;
					if ((rc = try_layout(s, &x, err)))
						return rc;
				}
			}
		}
	}
	return 0;
}

static int enumerate(struct search *s, struct ts_err *err)
{
	const struct ts_model *m = s->m;
	const struct ts_plan_opts *o = s->o;
	int64_t max_tp = o->max_tp > 0 ? o->max_tp : o->gpus_per_node;
	int rc;

	for (int64_t tp = 1; tp <= max_tp && tp <= o->gpus; tp++) {
		if (o->gpus % tp || m->heads % tp || (!m->mla && m->kv_heads % tp))
			continue;
		if (tp > 1 && (o->seq % tp))
			continue;
		for (int64_t cp = 1; cp <= 64 && tp * cp <= o->gpus; cp *= 2) {
			if (o->gpus % (tp * cp) || (cp > 1 && (o->seq % (2 * cp) || o->seq / cp < 1024)))
				continue;
			if (tp > 1 && (o->seq / cp) % tp)
				continue;
			for (int64_t pp = 1; pp <= m->layers && pp <= 64; pp++) {
				if (o->gpus % (tp * cp * pp))
					continue;
				if ((rc = enumerate_inner(s, tp, cp, pp, err)))
					return rc;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------ rules */

int64_t ts_plan_mp(const struct ts_plan_layout *x)
{
	int64_t a = x->tp * x->cp * x->pp, e = x->etp * x->ep * x->pp;
	return a > e ? a : e;
}

static int64_t attn_mp(const struct ts_plan_layout *x)
{
	return x->tp * x->cp * x->pp;
}

static void sieve(struct ts_plan *p)
{
	int64_t best;
	int any;

	for (size_t i = 0; i < p->n; i++) {
		p->v[i].eliminated_by = p->v[i].fits ? TS_RULE_NONE : TS_RULE_FIT;
		p->fitting += p->v[i].fits != 0;
	}
#define ALIVE(x) ((x)->eliminated_by == TS_RULE_NONE)
	/* offload last */
	any = 0;
	for (size_t i = 0; i < p->n; i++)
		any |= ALIVE(&p->v[i]) && p->v[i].offload == 0;
	if (any) {
		for (size_t i = 0; i < p->n; i++)
			if (ALIVE(&p->v[i]) && p->v[i].offload)
				p->v[i].eliminated_by = TS_RULE_OFFLOAD_LAST;
	} else if (p->fitting) {
		p->waived |= 1 << TS_RULE_OFFLOAD_LAST;
	}
	/* smallest model parallelism */
	best = INT64_MAX;
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && ts_plan_mp(&p->v[i]) < best)
			best = ts_plan_mp(&p->v[i]);
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && ts_plan_mp(&p->v[i]) > best)
			p->v[i].eliminated_by = TS_RULE_MIN_MP;
	if (best == INT64_MAX)
		best = 0;
	p->min_mp = best;
	/* selective before full */
	best = INT64_MAX;
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && ts_plan_rc_level(&p->v[i]) < best)
			best = ts_plan_rc_level(&p->v[i]);
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && ts_plan_rc_level(&p->v[i]) > best)
			p->v[i].eliminated_by = TS_RULE_SELECTIVE_FIRST;
	if (best == INT64_MAX)
		best = 0;
	p->min_rc_level = (int)best;
	/* maximise DP */
	best = INT64_MAX;
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && attn_mp(&p->v[i]) < best)
			best = attn_mp(&p->v[i]);
	for (size_t i = 0; i < p->n; i++)
		if (ALIVE(&p->v[i]) && attn_mp(&p->v[i]) > best)
			p->v[i].eliminated_by = TS_RULE_MAX_DP;
	if (best == INT64_MAX)
		best = 0;
	p->min_attn_mp = best;
	/* the Scale rules: drop violators when someone complies */
	for (int r = TS_RULE_NODE; r <= TS_RULE_CP_LONG; r++) {
		any = 0;
		for (size_t i = 0; i < p->n; i++)
			any |= ALIVE(&p->v[i]) && !(p->v[i].violations & (1 << r));
		if (!any) {
			for (size_t i = 0; i < p->n; i++)
				if (ALIVE(&p->v[i])) {
					p->waived |= 1 << r;
					break;
				}
			continue;
		}
		for (size_t i = 0; i < p->n; i++)
			if (ALIVE(&p->v[i]) && (p->v[i].violations & (1 << r)))
				p->v[i].eliminated_by = r;
	}
	for (size_t i = 0; i < p->n; i++)
		p->survivors += ALIVE(&p->v[i]);
#undef ALIVE
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_dbl(double a, double b)
{
	return a < b ? -1 : a > b;
}

static int violation_count(int v)
{
	int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* 0 passes the Fit rules (fits; offload only when nothing fits without),
 * 1 fits but needs offload, 2 out of memory. */
static int fit_class(const struct ts_plan *p, const struct ts_plan_layout *x)
{
	if (!x->fits)
		return 2;
	return x->offload && !(p->waived & (1 << TS_RULE_OFFLOAD_LAST)) ? 1 : 0;
}

static const struct ts_plan *sort_plan; /* the comparator's context (ts_sort has no argument) */

/* Layouts that pass the Fit rules by predicted step time, the Scale rules
 * breaking exact ties; then the offload ones by step time; then the
 * out-of-memory ones by how much they miss. */
static int cmp_layout(const void *pa, const void *pb)
{
	const struct ts_plan_layout *a = pa, *b = pb;
	int ca = fit_class(sort_plan, a), cb = fit_class(sort_plan, b);
	int c;

	if (ca != cb)
		return ca - cb;
	if (ca == 2)
		c = cmp_dbl(a->memory_bytes, b->memory_bytes);
	else
		c = cmp_dbl(a->step_s, b->step_s);
	if (c)
		return c;
	if ((c = violation_count(a->violations) - violation_count(b->violations)))
		return c;
	if ((c = cmp_i64(ts_plan_mp(a), ts_plan_mp(b))) || (c = cmp_i64(a->tp, b->tp)) ||
	    (c = cmp_i64(a->cp, b->cp)) || (c = cmp_i64(a->pp, b->pp)) ||
	    (c = cmp_i64(a->vpp, b->vpp)) || (c = cmp_i64(a->ep, b->ep)) ||
	    (c = cmp_i64(a->etp, b->etp)) || (c = cmp_i64(a->mbs, b->mbs)))
		return c;
	return a->option - b->option;
}

int ts_plan_fit_passing(const struct ts_plan *p, const struct ts_plan_layout *x)
{
	return fit_class(p, x) == 0;
}

/* The layouts the model cannot order against the top: Fit-passing ones
 * whose predicted step is within the top's likely range. The ranking is
 * by step time, so they are a prefix; among them the workflow's rules
 * name a pick (the sieve's survivor, else one that keeps every Scale rule). */
static void mark_ties(struct ts_plan *p, double log_sigma)
{
	double limit;
	int64_t keeps_scale = 0;

	if (p->n == 0 || fit_class(p, &p->v[0]) != 0)
		return;
	limit = p->v[0].step_s * exp(log_sigma > 0 ? log_sigma : 0);
	for (size_t i = 0; i < p->n && fit_class(p, &p->v[i]) == 0 && p->v[i].step_s <= limit; i++) {
		struct ts_plan_layout *x = &p->v[i];
		x->tied = 1;
		p->tied++;
		if (!p->tied_rule_rank && x->eliminated_by == TS_RULE_NONE)
			p->tied_rule_rank = x->rank;
		if (!keeps_scale && !x->violations)
			keeps_scale = x->rank;
	}
	if (!p->tied_rule_rank)
		p->tied_rule_rank = keeps_scale;
	if (p->tied_rule_rank == 1)
		p->tied_rule_rank = 0;
}

int ts_plan_run(const struct ts_model *m, const struct ts_plan_opts *o, struct ts_plan *p,
		struct ts_err *err)
{
	struct search *s;
	int rc;

	if (o->gpus < 1 || o->gpus_per_node < 1 || o->seq < 1 || o->gbs < 1)
		return ts_err_set(err, TS_EUSAGE, "plan: --gpus, --gpus-per-node, --seq and --gbs must be >= 1");
	if (!o->enumerate_only && o->capacity_bytes <= 0)
		return ts_err_set(err, TS_EUSAGE, "plan: the device memory is unknown (--gpu SKU or --gpu-mem GiB)");
	if (!o->enumerate_only && !o->memory_only &&
	    (o->peak_flops <= 0 || o->intra_bw <= 0 || o->inter_bw <= 0 || o->calib.gemm_eff <= 0 ||
	     o->calib.attn_eff <= 0))
		return ts_err_set(err, TS_EUSAGE, "plan: the step-time model needs the peak, the"
				  " link bandwidths and efficiencies > 0");
	s = calloc(1, sizeof(*s));
	if (!s)
		return ts_err_set(err, TS_ENOMEM, "plan: out of memory");
	s->m = m;
	s->o = o;
	s->p = p;
	s->nopt = ladder(m, s->opt);
	{
		/* EP candidates: divisors of E up to the world size, found in O(sqrt E) */
		int64_t E = m->num_experts > 0 ? m->num_experts : 1, lo[128], hi[128];
		int nlo = 0, nhi = 0;
		for (int64_t d = 1; d * d <= E && nlo < 128 && nhi < 128; d++) {
			if (E % d)
				continue;
			lo[nlo++] = d;
			if (d != E / d)
				hi[nhi++] = E / d;
		}
		for (int i = 0; i < nlo; i++)
			if (lo[i] <= o->gpus)
				s->ep[s->nep++] = lo[i];
		for (int i = nhi - 1; i >= 0; i--)
			if (hi[i] <= o->gpus)
				s->ep[s->nep++] = hi[i];
	}
	p->noptions = s->nopt;
	for (int i = 0; i < s->nopt; i++) {
		p->opt_recompute[i] = s->opt[i].recompute;
		p->opt_modules[i] = s->opt[i].modules;
		p->opt_offload[i] = s->opt[i].offload;
	}
	rc = model_flops(m, o, &p->flops_per_step, err);
	if (!rc)
		rc = enumerate(s, err);
	free(s);
	if (rc)
		return rc;
	sieve(p);
	sort_plan = p;
	if (p->n > 1)
		ts_sort(p->v, p->n, sizeof(*p->v), cmp_layout);
	sort_plan = NULL;
	for (size_t i = 0; i < p->n; i++) {
		p->v[i].rank = (int64_t)i + 1;
		p->fit_passing += fit_class(p, &p->v[i]) == 0;
	}
	if (!o->enumerate_only && !o->memory_only)
		mark_ties(p, o->calib.log_sigma);
	return 0;
}

int ts_plan_price(const struct ts_model *m, const struct ts_plan_opts *o, struct ts_plan_layout *x,
		  struct ts_err *err)
{
	struct search *s;
	struct ts_mem_layout l;
	struct ts_plan_layout y;
	int64_t first, last;
	int uneven, rc = 0, chosen = -1;
	double flops;

	if (o->gpus < 1 || o->gpus_per_node < 1 || o->seq < 1 || o->gbs < 1)
		return ts_err_set(err, TS_EUSAGE, "plan: --gpus, --gpus-per-node, --seq and --gbs must be >= 1");
	if (o->capacity_bytes <= 0 || o->peak_flops <= 0 || o->intra_bw <= 0 || o->inter_bw <= 0)
		return ts_err_set(err, TS_EUSAGE, "plan: pricing a layout needs the device memory,"
				  " the peak and the link bandwidths");
	if (x->tp < 1 || x->pp < 1 || x->vpp < 1 || x->cp < 1 || x->ep < 1 || x->etp < 1 || x->mbs < 1)
		return ts_err_set(err, TS_EUSAGE, "plan: every layout size must be >= 1");
	if (o->gpus % (x->tp * x->cp * x->pp))
		return ts_err_set(err, TS_EUSAGE, "plan: TP*CP*PP = %lld does not divide the %lld GPUs",
				  (long long)(x->tp * x->cp * x->pp), (long long)o->gpus);
	if (o->schedule == TS_SCHED_DUALPIPE && x->pp > 1 && (x->vpp > 1 || x->pp % 2))
		return ts_err_set(err, TS_EUSAGE, "plan: DualPipe needs an even PP and VPP 1 (got PP %lld VPP %lld)",
				  (long long)x->pp, (long long)x->vpp);
	if (x->first_layers < 0 && x->last_layers < 0 &&
	    ts_plan_stage_rule(m->layers, x->pp * x->vpp, &first, &last, &uneven))
		return ts_err_set(err, TS_EUSAGE, "plan: %lld layers cannot fill PP*VPP = %lld virtual stages",
				  (long long)m->layers, (long long)(x->pp * x->vpp));
	if (x->first_layers >= 0 || x->last_layers >= 0) {
		first = x->first_layers;
		last = x->last_layers;
		uneven = 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return ts_err_set(err, TS_ENOMEM, "plan: out of memory");
	s->m = m;
	s->o = o;
	s->nopt = ladder(m, s->opt);
	x->dp = o->gpus / (x->tp * x->cp * x->pp);
	x->first_layers = first;
	x->last_layers = last;
	x->uneven = uneven || first >= 0 || last >= 0;
	mem_layout_of(&l, x, o);
	/* a given ladder index is priced as it is, fitting or not */
	for (int k = x->option >= 0 && x->option < s->nopt ? x->option : 0; k < s->nopt && chosen < 0; k++) {
		l.recompute = s->opt[k].recompute;
		l.recompute_modules = s->opt[k].modules;
		l.offload = s->opt[k].offload;
		if ((rc = ts_mem_prepare(&s->ctx, m, &l, o->est, err)))
			goto out;
		ts_mem_peak(&s->ctx, &s->peak);
		if (s->peak.total_bytes <= o->capacity_bytes || k == s->nopt - 1 || k == x->option)
			chosen = k;
	}
	y = *x;
	y.recompute = l.recompute;
	y.modules = l.recompute_modules;
	y.offload = l.offload;
	y.option = chosen;
	y.edp = s->ctx.edp;
	y.micro = s->ctx.micro;
	if (o->schedule == TS_SCHED_DUALPIPE && !ts_mem_dualpipe_micro_ok(y.pp, y.micro)) {
		rc = ts_err_set(err, TS_EUSAGE, "plan: DualPipe needs an even micro-batch count of at least"
				" 2*PP = %lld (got %lld)", (long long)(2 * y.pp), (long long)y.micro);
		goto out;
	}
	y.memory_bytes = s->peak.total_bytes;
	y.allocated_bytes = s->peak.allocated_bytes;
	y.peak_rank = s->peak.rank;
	y.params_dense = s->peak.params_tp + s->peak.params_rep;
	y.params_expert = s->peak.params_exp;
	y.fits = s->peak.total_bytes <= o->capacity_bytes;
	y.violations = violations(o, &y);
	y.eliminated_by = y.fits ? TS_RULE_NONE : TS_RULE_FIT;
	/* the shape the FLOPs need must hold (the count itself is the run's) */
	if ((rc = model_flops(m, o, &flops, err)))
		goto out;
	plan_step_time(m, o, &s->ctx, &y);
	*x = y;
out:
	free(s);
	return rc;
}
