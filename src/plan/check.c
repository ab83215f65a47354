/*
 * check.c - the published cases `plan --check` compares the model with:
 * a small CSV reader (named columns, so extra columns and reordering are
 * fine) and the rank correlation of predicted against measured.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/plan.h"

#define MAX_CASES 4096
#define MAX_COLS 64

enum col {
	C_ID, C_MODEL, C_GPUS, C_GPU, C_PREC, C_TP, C_PP, C_VPP, C_CP, C_EP, C_MBS, C_GBS, C_SEQ,
	C_STEP, C_ROUTING, C_ETP, C_FSDP, C_SOURCE, C_OVERLAP, C_GRAPHS, C_DISPATCHER, C_TP_OVERLAP, C_RECOMPUTE, C_SCHEDULE, C_COUNT
};

static const char *const col_names[C_COUNT] = {
	"id", "model_config", "gpus", "gpu", "prec", "tp", "pp", "vpp", "cp", "ep", "mbs", "gbs",
	"seq", "step_s", "routing", "etp", "fsdp", "source", "moe_overlap", "cuda_graphs", "dispatcher",
	"tp_overlap", "recompute", "schedule"
};

struct cell {
	const char *p;
	size_t n;
};

/* The cell holds the word w, any case. */
static int cell_has(const struct cell *c, const char *w)
{
	size_t n = strlen(w);

	for (size_t a = 0; a + n <= c->n; a++) {
		size_t i = 0;
		while (i < n && (c->p[a + i] | 0x20) == (w[i] | 0x20))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* FSDP job: an fsdp cell 1/yes/true, or without one the source naming FSDP
 * (the shared file writes "(FSDP8)"). */
static int fsdp_cell(const struct cell *f, const struct cell *src)
{
	if (f->n > 0)
		return (f->n == 1 && f->p[0] == '1') || cell_has(f, "yes") || cell_has(f, "true");
	return cell_has(src, "fsdp");
}

/* A yes/no cell: 1/yes/true, 0/no/false; empty -1; anything else -2. */
static int flag_cell(const struct cell *c)
{
	if (c->n == 0)
		return -1;
	if ((c->n == 1 && c->p[0] == '1') || (c->n == 3 && cell_has(c, "yes")) || (c->n == 4 && cell_has(c, "true")))
		return 1;
	if ((c->n == 1 && c->p[0] == '0') || (c->n == 2 && cell_has(c, "no")) || (c->n == 5 && cell_has(c, "false")))
		return 0;
	return -2;
}

/* A dispatcher cell: deepep/hybridep hierarchical, alltoall flat; empty
 * -1; anything else -2. */
static int dispatcher_cell(const struct cell *c)
{
	if (c->n == 0)
		return -1;
	if ((c->n == 6 && cell_has(c, "deepep")) || (c->n == 8 && cell_has(c, "hybridep")))
		return TS_DISPATCH_HIER;
	if (c->n == 8 && cell_has(c, "alltoall"))
		return TS_DISPATCH_ALLTOALL;
	return -2;
}

/* A schedule cell: 1f1b or dualpipe (enum ts_schedule); empty -1;
 * anything else -2. */
static int schedule_cell(const struct cell *c)
{
	if (c->n == 0)
		return -1;
	if (c->n == 4 && cell_has(c, "1f1b"))
		return TS_SCHED_1F1B;
	if (c->n == 8 && cell_has(c, "dualpipe"))
		return TS_SCHED_DUALPIPE;
	return -2;
}

/* A recompute cell: its ladder index (none 0, selective 1 = Megatron's
 * core_attn, full 3: the ladder of plan.c); empty -1; anything else -2. */
static int recompute_cell(const struct cell *c)
{
	if (c->n == 0)
		return -1;
	if (c->n == 4 && cell_has(c, "none"))
		return 0;
	if (c->n == 9 && cell_has(c, "selective"))
		return 1;
	if (c->n == 4 && cell_has(c, "full"))
		return 3;
	return -2;
}

static const char *const graphs_names[] = { "none", "moe", "attn_moe", "full" };

const char *ts_plan_graphs_name(int g)
{
	return g >= 0 && g <= TS_GRAPHS_FULL ? graphs_names[g] : "?";
}

int ts_plan_graphs_parse(const char *s, size_t n)
{
	static const struct {
		const char *w;
		int g;
	} t[] = {
		{ "none", TS_GRAPHS_NONE }, { "moe", TS_GRAPHS_MOE }, { "attn_moe", TS_GRAPHS_ATTN_MOE },
		{ "full", TS_GRAPHS_FULL }, { "moe_router,moe_preprocess", TS_GRAPHS_MOE },
		{ "moe_router+moe_preprocess", TS_GRAPHS_MOE },
		{ "attn,moe_router,moe_preprocess", TS_GRAPHS_ATTN_MOE },
		{ "attn+moe_router+moe_preprocess", TS_GRAPHS_ATTN_MOE }, { "full_iteration", TS_GRAPHS_FULL },
	};

	for (size_t i = 0; s && i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].w) == n && memcmp(t[i].w, s, n) == 0)
			return t[i].g;
	return -1;
}

/* Split one line at commas into at most MAX_COLS trimmed cells. */
static size_t split(const char *s, size_t n, struct cell *cells)
{
	size_t k = 0, i = 0;

	while (k < MAX_COLS) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		{
			size_t a = i, b = j;
			while (a < b && (s[a] == ' ' || s[a] == '\t'))
				a++;
			while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
				b--;
			cells[k].p = s + a;
			cells[k].n = b - a;
			k++;
		}
		if (j >= n)
			break;
		i = j + 1;
	}
	return k;
}

static int copy_cell(const struct cell *c, char *dst, size_t size)
{
	if (c->n >= size)
		return -1;
	memcpy(dst, c->p, c->n);
	dst[c->n] = 0;
	return 0;
}

/* A non-negative integer cell (empty -> def). */
static int int_cell(const struct cell *c, int64_t def, int64_t max, int64_t *out)
{
	int64_t v = 0;

	if (c->n == 0) {
		*out = def;
		return 0;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (c->p[i] < '0' || c->p[i] > '9' || v > (max - (c->p[i] - '0')) / 10)
			return -1;
		v = v * 10 + (c->p[i] - '0');
	}
	*out = v;
	return 0;
}

/* A positive decimal cell "12.345" (no exponent). */
static int dbl_cell(const struct cell *c, double *out)
{
	double v = 0, scale = 1;
	int dot = 0, digits = 0;

	for (size_t i = 0; i < c->n; i++) {
		char ch = c->p[i];
		if (ch == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (ch < '0' || ch > '9' || digits > 30)
			return -1;
		digits++;
		if (dot)
			scale /= 10.0;
		v = v * 10.0 + (ch - '0');
	}
	if (!digits)
		return -1;
	*out = v * scale;
	return *out > 0 ? 0 : -1;
}

int ts_plan_cases_parse(struct ts_plan_cases *c, const void *data, size_t n, const char *name,
			struct ts_err *err)
{
	const char *s = data;
	size_t i = 0;
	int64_t line = 0;
	int col[C_COUNT], have_header = 0;
	struct cell cells[MAX_COLS];

	for (int k = 0; k < C_COUNT; k++)
		col[k] = -1;
	while (i < n) {
		size_t e = i, nc;
		int64_t off = (int64_t)i;
		while (e < n && s[e] != '\n')
			e++;
		line++;
		{
			size_t a = i;
			while (a < e && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
				a++;
			if (a == e || s[a] == '#') {
				i = e + 1;
				continue;
			}
		}
		nc = split(s + i, e - i, cells);
		if (!have_header) {
			for (size_t k = 0; k < nc; k++)
				for (int q = 0; q < C_COUNT; q++)
					if (strlen(col_names[q]) == cells[k].n &&
					    memcmp(col_names[q], cells[k].p, cells[k].n) == 0 && col[q] < 0)
						col[q] = (int)k;
			for (int q = 0; q < C_ROUTING; q++)
				if (col[q] < 0)
					return ts_err_at(err, TS_EPARSE, name, off, line,
							 "header has no '%s' column", col_names[q]);
			have_header = 1;
			i = e + 1;
			continue;
		}
		{
			struct ts_plan_case x;
			struct cell empty = { "", 0 };
			const struct cell *v[C_COUNT];
			int bad = -1;

			memset(&x, 0, sizeof(x));
			for (int q = 0; q < C_COUNT; q++) {
				v[q] = col[q] >= 0 && (size_t)col[q] < nc ? &cells[col[q]] : &empty;
				if (q < C_ROUTING && q != C_VPP && v[q]->n == 0 && bad < 0)
					bad = q;
			}
			if (bad >= 0)
				return ts_err_at(err, TS_EPARSE, name, off, line, "empty '%s' cell",
						 col_names[bad]);
			if (copy_cell(v[C_ID], x.id, sizeof(x.id)) ||
			    copy_cell(v[C_MODEL], x.model, sizeof(x.model)) ||
			    copy_cell(v[C_GPU], x.gpu, sizeof(x.gpu)) ||
			    copy_cell(v[C_PREC], x.prec, sizeof(x.prec)) ||
			    copy_cell(v[C_ROUTING], x.routing, sizeof(x.routing)))
				return ts_err_at(err, TS_EPARSE, name, off, line, "a text cell is too long");
#define INT(q, def, max, dst) \
	if (int_cell(v[q], def, max, &x.dst) || (x.dst < 1 && (q) != C_ETP && v[q]->n > 0)) \
		return ts_err_at(err, TS_EPARSE, name, off, line, "'%s': expected a positive integer, got '%.*s'", \
				 col_names[q], (int)(v[q]->n < 40 ? v[q]->n : 40), v[q]->p)
			INT(C_GPUS, 0, (int64_t)1 << 24, gpus);
			INT(C_TP, 0, 1 << 16, tp);
			INT(C_PP, 0, 1 << 16, pp);
			INT(C_VPP, 0, 1 << 16, vpp);
			INT(C_CP, 0, 1 << 16, cp);
			INT(C_EP, 0, 1 << 20, ep);
			INT(C_MBS, 0, 1 << 20, mbs);
			INT(C_GBS, 0, (int64_t)1 << 40, gbs);
			INT(C_SEQ, 0, (int64_t)1 << 26, seq);
			INT(C_ETP, 0, 1 << 16, etp);
#undef INT
			if (dbl_cell(v[C_STEP], &x.step_s))
				return ts_err_at(err, TS_EPARSE, name, off, line,
						 "'step_s': expected a positive decimal, got '%.*s'",
						 (int)(v[C_STEP]->n < 40 ? v[C_STEP]->n : 40), v[C_STEP]->p);
			x.fsdp = fsdp_cell(v[C_FSDP], v[C_SOURCE]);
			x.moe_overlap = flag_cell(v[C_OVERLAP]);
			x.tp_overlap = flag_cell(v[C_TP_OVERLAP]);
			x.recompute = recompute_cell(v[C_RECOMPUTE]);
			x.dispatcher = dispatcher_cell(v[C_DISPATCHER]);
			x.cuda_graphs = v[C_GRAPHS]->n ? ts_plan_graphs_parse(v[C_GRAPHS]->p, v[C_GRAPHS]->n) : -1;
			x.schedule = schedule_cell(v[C_SCHEDULE]);
			if (x.moe_overlap < -1 || x.tp_overlap < -1 || x.recompute < -1 || x.dispatcher < -1 ||
			    x.schedule < -1 || (v[C_GRAPHS]->n && x.cuda_graphs < 0)) {
				int q = x.moe_overlap < -1 ? C_OVERLAP : x.tp_overlap < -1 ? C_TP_OVERLAP
					: x.recompute < -1 ? C_RECOMPUTE : x.dispatcher < -1 ? C_DISPATCHER
					: x.schedule < -1 ? C_SCHEDULE : C_GRAPHS;
				return ts_err_at(err, TS_EPARSE, name, off, line, "'%s': unknown value '%.*s'",
						 col_names[q], (int)(v[q]->n < 40 ? v[q]->n : 40), v[q]->p);
			}
			x.line = line;
			if (c->n >= MAX_CASES)
				return ts_err_at(err, TS_ELIMIT, name, off, line, "more than %d cases", MAX_CASES);
			if (ts_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
				return ts_err_set(err, TS_ENOMEM, "out of memory");
			c->v[c->n++] = x;
		}
		i = e + 1;
	}
	if (!have_header)
		return ts_err_at(err, TS_EPARSE, name, (int64_t)n, line, "no header row");
	return 0;
}

void ts_plan_cases_release(struct ts_plan_cases *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Ranks 1..n of v (ties get their mean rank): O(n^2), n is a few cases. */
static void ranks(const double *v, size_t n, double *r)
{
	for (size_t i = 0; i < n; i++) {
		double less = 0, same = 0;
		for (size_t j = 0; j < n; j++) {
			less += v[j] < v[i];
			same += v[j] == v[i];
		}
		r[i] = less + (same + 1.0) / 2.0;
	}
}

double ts_plan_spearman(const double *a, const double *b, size_t n)
{
	double ra[MAX_CASES], rb[MAX_CASES], ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

	if (n < 2 || n > MAX_CASES)
		return NAN;
	ranks(a, n, ra);
	ranks(b, n, rb);
	for (size_t i = 0; i < n; i++) {
		ma += ra[i];
		mb += rb[i];
	}
	ma /= (double)n;
	mb /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sab += (ra[i] - ma) * (rb[i] - mb);
		saa += (ra[i] - ma) * (ra[i] - ma);
		sbb += (rb[i] - mb) * (rb[i] - mb);
	}
	if (saa <= 0 || sbb <= 0)
		return NAN;
	return sab / sqrt(saa * sbb);
}

int64_t ts_plan_sms(const char *sku)
{
	static const struct {
		const char *sku;
		int64_t sms;
	} t[] = {
		{ "A100-SXM-80GB", 108 }, { "A100-SXM-40GB", 108 }, { "H100-SXM", 132 }, { "H200-SXM", 132 },
		{ "H800-SXM", 132 }, { "H100-PCIe", 114 }, { "B200", 148 }, { "GB200", 148 },
		{ "B300", 148 }, { "GB300", 148 },
	};

	for (size_t i = 0; sku && i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i].sku, sku) == 0)
			return t[i].sms;
	return 0;
}

int ts_plan_opts_device(struct ts_plan_opts *o, const struct ts_gpu *g, int precision,
			struct ts_err *err)
{
	double tf, bf;
	const char *src;
	int rc;

	if ((rc = ts_gpu_peak(g, precision, &tf, &src, err)))
		return rc;
	if ((rc = ts_gpu_peak(g, TS_PREC_BF16, &bf, &src, err)))
		bf = precision == TS_PREC_FP8 ? tf / 2.0 : tf;
	o->precision = precision;
	o->peak_flops = tf * 1e12;
	o->peak_bf16 = bf * 1e12;
	o->capacity_bytes = (double)g->memory_bytes;
	o->mem_bw = g->mem_bw_bytes_per_s;
	o->intra_bw = g->link_bytes_per_s > 0 ? g->link_bytes_per_s / 2.0 : o->inter_bw;
	o->gpus_per_node = g->link_domain > 0 ? g->link_domain : 8;
	o->sms = ts_plan_sms(g->sku);
	return 0;
}

void ts_plan_case_layout(const struct ts_plan_case *c, struct ts_plan_layout *x)
{
	memset(x, 0, sizeof(*x));
	x->tp = c->tp;
	x->pp = c->pp;
	x->vpp = c->vpp > 0 ? c->vpp : 1;
	x->cp = c->cp;
	x->ep = c->ep;
	x->mbs = c->mbs;
	x->option = c->recompute >= 0 ? c->recompute : -1;
	x->first_layers = x->last_layers = -1;
	x->etp = c->etp > 0 ? c->etp : 1;
}

/*
 * A row with PP > 1 and no vpp cell: the source did not publish the
 * virtual pipeline depth, and VPP 1 would charge the run a bubble of PP-1
 * whole micro-batches that no expert layout pays. Every depth the search
 * enumerates (ts_plan_vpp_searched and the stage rule fills it, m a
 * multiple of PP when interleaved) is priced and the fastest one that
 * fits without offload is the published layout; VPP 1 when none does.
 */
static int price_unstated_vpp(const struct ts_model *m, const struct ts_plan_opts *o,
			      struct ts_plan_layout *pub, struct ts_err *err)
{
	struct ts_plan_layout best = *pub, y;
	int64_t dp = o->gpus / (pub->tp * pub->cp * pub->pp), micro, first, last;
	int rc, have = 0, uneven;

	if ((rc = ts_plan_price(m, o, &best, err)))
		return rc;
	have = best.fits && best.offload == 0;
	micro = dp > 0 && pub->mbs > 0 ? o->gbs / (pub->mbs * dp) : 0;
	for (int64_t v = 2; pub->pp * v <= m->layers + 2; v++) {
		if (!ts_plan_vpp_searched(o, m->layers, pub->pp, v) || micro % pub->pp ||
		    ts_plan_stage_rule(m->layers, pub->pp * v, &first, &last, &uneven))
			continue;
		y = *pub;
		y.vpp = v;
		if ((rc = ts_plan_price(m, o, &y, err)))
			return rc;
		if (y.fits && y.offload == 0 && (!have || y.step_s < best.step_s)) {
			best = y;
			have = 1;
		}
	}
	*pub = best;
	return 0;
}

int ts_plan_check_case(const struct ts_model *m, const struct ts_plan_case *c,
		       const struct ts_plan_opts *o, int search, struct ts_plan_check *out,
		       struct ts_err *err)
{
	struct ts_plan p;
	int rc;

	memset(out, 0, sizeof(*out));
	ts_plan_case_layout(c, &out->pub);
	out->vpp_chosen = c->vpp == 0 && c->pp > 1 && o->schedule != TS_SCHED_DUALPIPE;
	if (out->vpp_chosen)
		rc = price_unstated_vpp(m, o, &out->pub, err);
	else
		rc = ts_plan_price(m, o, &out->pub, err);
	if (rc)
		return rc;
	out->err = out->pub.step_s / c->step_s - 1.0;
	if (!search)
		return 0;
	ts_plan_init(&p);
	if ((rc = ts_plan_run(m, o, &p, err)))
		goto out;
	out->fit_passing = p.fit_passing;
	out->tied = p.tied;
	if (p.n > 0 && ts_plan_fit_passing(&p, &p.v[0])) {
		out->best = p.v[0];
		out->have_best = 1;
		out->best_gain = 1.0 - out->best.step_s / out->pub.step_s;
	}
	for (size_t i = 0; i < p.n && ts_plan_fit_passing(&p, &p.v[i]); i++) {
		const struct ts_plan_layout *y = &p.v[i];
		if (y->tp == out->pub.tp && y->pp == out->pub.pp && y->vpp == out->pub.vpp &&
		    y->cp == out->pub.cp && y->ep == out->pub.ep && y->etp == out->pub.etp &&
		    y->mbs == out->pub.mbs) {
			out->pub_rank = y->rank;
			out->pub_tied = y->tied;
			break;
		}
	}
out:
	ts_plan_release(&p);
	return rc;
}

static int contains(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (; *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && (s[i] | 0x20) == (w[i] | 0x20))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/*
 * The settings of the published runs of ../shared/data/expected/
 * layout-cases.csv that its columns do not carry, each from the run's
 * documented source (docs/memory-plan.md 4.4 quotes them). routing NULL
 * matches any routing cell.
 */
static const struct {
	const char *model, *gpu, *routing;
	int64_t gpus, tp, pp, vpp, ep;
	struct ts_plan_recipe r;
} recipes[] = {
	{ "qwen3-30b-a3b.json", "H100", "forced", 16, 1, 1, 1, 16,
	  { "Megatron-Bridge qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config (pretrain_performance card: "
	    "HybridEP, EP overlap active, CUDA graphs moe_router+moe_preprocess)",
	    1, TS_GRAPHS_MOE, TS_DISPATCH_HIER, 1 } },
	{ "qwen3-30b-a3b.json", "H100", "natural", 16, 1, 1, 1, 16,
	  { "Megatron-Bridge qwen3_30b_a3b_pretrain_config (pretrain card: HybridEP, CUDA graphs "
	    "moe_router+moe_preprocess; the recipe sets moe_a2a_overlap False)",
	    0, TS_GRAPHS_MOE, TS_DISPATCH_HIER, 0 } },
	{ "qwen3-235b-a22b.json", "H100", NULL, 256, 2, 8, 4, 32,
	  { "Megatron MoE ModelZoo best_practice/qwen3 H100 table (DeepEP, no 1F1B A2A overlap: "
	    "the +1f1b overlap row is a separate 17.6 s)",
	    0, -1, TS_DISPATCH_HIER, -1 } },
	{ "qwen3-235b-a22b.json", "H100", NULL, 256, 4, 8, 4, 8,
	  { "Megatron MoE ModelZoo best_practice/qwen3 H100 table (DeepEP, no 1F1B A2A overlap)",
	    0, -1, TS_DISPATCH_HIER, -1 } },
	{ "deepseek-v3.json", "H100", NULL, 1024, 2, 8, 4, 64,
	  { "Megatron-Bridge deepseek_v3_pretrain_1024gpu_h100_bf16_config (HybridEP, "
	    "moe_a2a_overlap False, no CUDA graphs, forced load balancing)",
	    0, TS_GRAPHS_NONE, TS_DISPATCH_HIER, 1 } },
	{ "deepseek-v3.json", "GB200", NULL, 256, 1, 4, 4, 64,
	  { "Megatron-Bridge deepseek_v3_pretrain_256gpu_gb200_fp8mx_config (HybridEP inside the "
	    "NVL72 domain, EP overlap on, full-iteration CUDA graphs, forced load balancing)",
	    1, TS_GRAPHS_FULL, TS_DISPATCH_HIER, 1 } },
};

const struct ts_plan_recipe *ts_plan_case_recipe(const struct ts_plan_case *c)
{
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		const struct ts_plan_recipe *r = &recipes[i].r;
		if (strcmp(recipes[i].model, c->model) == 0 && strcmp(recipes[i].gpu, c->gpu) == 0 &&
		    (!recipes[i].routing || strcmp(recipes[i].routing, c->routing) == 0) &&
		    recipes[i].gpus == c->gpus && recipes[i].tp == c->tp && recipes[i].pp == c->pp &&
		    recipes[i].vpp == (c->vpp > 0 ? c->vpp : 1) && recipes[i].ep == c->ep)
			return r;
	}
	return NULL;
}

int ts_plan_case_job(const struct ts_plan_case *c, struct ts_plan_opts *o)
{
	const struct ts_plan_recipe *r = ts_plan_case_recipe(c);
	int forced = strcmp(c->routing, "forced") == 0 || strcmp(c->routing, "balanced") == 0;

	o->gpus = c->gpus;
	o->seq = c->seq;
	o->gbs = c->gbs;
	o->fsdp = c->fsdp;
	if (!forced && r && r->balanced == 1 && strcmp(c->routing, "unknown") == 0)
		forced = 1;
	o->routing = forced ? TS_ROUTING_BALANCED : TS_ROUTING_NATURAL;
	o->schedule = c->schedule >= 0 ? c->schedule : TS_SCHED_1F1B;
	if (c->tp_overlap >= 0)
		o->tp_overlap = c->tp_overlap;
	if (c->moe_overlap >= 0)
		o->moe_overlap = c->moe_overlap;
	else if (r && r->moe_overlap >= 0)
		o->moe_overlap = r->moe_overlap;
	if (c->cuda_graphs >= 0)
		o->cuda_graphs = c->cuda_graphs;
	else if (r && r->cuda_graphs >= 0)
		o->cuda_graphs = r->cuda_graphs;
	if (c->dispatcher >= 0)
		o->dispatcher = c->dispatcher;
	else if (r && r->dispatcher >= 0)
		o->dispatcher = r->dispatcher;
	if (contains(c->prec, "fp8"))
		return TS_PREC_FP8;
	if (contains(c->prec, "bf16"))
		return TS_PREC_BF16;
	return -1;
}

int ts_plan_case_model_path(const char *csv_path, const struct ts_plan_case *c, int k,
			    char *buf, size_t size)
{
	const char *slash = strrchr(csv_path, '/');
	int dir = slash ? (int)(slash - csv_path) : 1, n;

	if (c->model[0] == '/')
		n = k == 0 ? snprintf(buf, size, "%s", c->model) : -1;
	else if (k == 0)
		n = snprintf(buf, size, "%.*s/../models/%s", dir, slash ? csv_path : ".", c->model);
	else if (k == 1)
		n = snprintf(buf, size, "%.*s/layout-models/%s", dir, slash ? csv_path : ".", c->model);
	else
		n = -1;
	return n < 0 || (size_t)n >= size ? -1 : 0;
}
