/*
 * diff.c - compare two diff sides: align steps, the step-time ratio with
 * ab's intervals, trace's walls per step, op rows that close with a
 * residual, kernel families, and the steps left out or standing out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/diff.h"
#include "trainscope/gate.h"
#include "trainscope/jsonw.h"

const char *ts_diff_verdict_name(int v)
{
	static const char *const n[] = { "faster", "slower", "no_difference", "inconclusive",
					 "no_noise_estimate", "refused_different_hardware",
					 "no_steps", "no_gpu_step_time" };
	return v >= 0 && v <= TS_DIFF_NO_GPU_STEP_TIME ? n[v] : "?";
}

const char *ts_diff_verdict_given(int v)
{
	if (v == TS_DIFF_NO_NOISE_ESTIMATE || v == TS_DIFF_NO_STEPS)
		return NULL;
	return ts_diff_verdict_name(v == TS_DIFF_NO_GPU_STEP_TIME ? TS_DIFF_INCONCLUSIVE : v);
}

const char *ts_diff_gpu_behind_sides(int b)
{
	static const char *const n[] = { "", "the baseline", "the candidate", "both sides" };
	return n[b & 3];
}

const char *ts_diff_spans_why(int gpu_behind, int clock_mismatch, char *buf, size_t cap)
{
	static const char *const owner[] = { "", "the baseline's", "the candidate's",
					     "both sides'" };
	int n = 0;

	buf[0] = '\0';
	if (gpu_behind & 3)
		n = snprintf(buf, cap, "the GPU runs behind the host on %s",
			     ts_diff_gpu_behind_sides(gpu_behind));
	if (clock_mismatch & 3)
		snprintf(buf + n, cap - (size_t)n, "%s%s device and host clocks disagree"
			 " (clock-mismatch): whether %s GPU runs behind the host cannot be told",
			 n ? "; " : "", owner[clock_mismatch & 3],
			 (clock_mismatch & 3) == 3 ? "their" : "its");
	return buf;
}

const char *ts_diff_wall_name(int w)
{
	static const char *const n[TS_DW_COUNT] = { "compute", "exposed_comm", "exposed_memcpy",
						    "exposed_memset", "idle", "data_loader",
						    "host_gap" };
	return w >= 0 && w < TS_DW_COUNT ? n[w] : "?";
}

int ts_diff_wall_partitions(int w)
{
	return w >= TS_DW_COMPUTE && w <= TS_DW_IDLE;
}

void ts_diff_opts_init(struct ts_diff_opts *o)
{
	struct ts_ab_opts ab;

	ts_ab_opts_init(&ab);
	memset(o, 0, sizeof(*o));
	o->band = 0.02; /* ab's band without repeats (one run per side) */
	o->seed = ab.seed;
}

void ts_diff_result_init(struct ts_diff_result *r)
{
	memset(r, 0, sizeof(*r));
	ts_arena_init(&r->arena);
	r->ratio = r->ci95_low = r->ci95_high = NAN;
	r->unmatched_frac = NAN;
	r->base_gpu_mean_ns = r->cand_gpu_mean_ns = NAN;
	r->step_basis = "host_span";
}

void ts_diff_result_release(struct ts_diff_result *r)
{
	TS_VEC_RELEASE(r->pairs);
	TS_VEC_RELEASE(r->notes);
	TS_VEC_RELEASE(r->rows);
	TS_VEC_RELEASE(r->families);
	TS_VEC_RELEASE(r->changes);
	ts_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

static int64_t wall_of(const struct ts_step_prof *s, int w)
{
	switch (w) {
	case TS_DW_COMPUTE: return s->compute_ns;
	case TS_DW_EXPOSED_COMM: return s->exposed_comm_ns;
	case TS_DW_EXPOSED_MEMCPY: return s->exposed_memcpy_ns;
	case TS_DW_EXPOSED_MEMSET: return s->exposed_memset_ns;
	case TS_DW_IDLE: return s->idle_ns;
	case TS_DW_DATA: return s->idle_part_data_ns;
	default: return s->idle_part_gap_ns;
	}
}

/* The step of p that starts at t (a compared pair's), or NULL. */
static const struct ts_step_prof *step_starting(const struct ts_rank_prof *p, int64_t t)
{
	for (size_t i = 0; i < p->steps.n; i++)
		if (p->steps.v[i].start_ns == t)
			return &p->steps.v[i];
	return NULL;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* Median of v[0..n) (sorted in place); 0 for n = 0. */
static int64_t median_i64(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	ts_sort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int64_t pct(const int64_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* Notes for one side: steps outside the compared set, and outliers. */
static int side_notes(const struct ts_diff_side *s, int side, const uint8_t *in,
		      struct ts_diff_result *r)
{
	const struct ts_rank_prof *p = &s->prof;
	size_t n = p->steps.n;
	int64_t *tmp = malloc((n + 1) * sizeof(*tmp));
	int64_t med, mad, wmed[TS_DW_COUNT];
	int rc = 0;

	if (!tmp)
		return TS_ENOMEM;
	for (size_t i = 0; i < n; i++)
		tmp[i] = p->steps.v[i].dur_ns;
	med = median_i64(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = llabs(p->steps.v[i].dur_ns - med);
	mad = median_i64(tmp, n);
	for (int w = 0; w < TS_DW_COUNT; w++) {
		for (size_t i = 0; i < n; i++)
			tmp[i] = wall_of(&p->steps.v[i], w);
		wmed[w] = median_i64(tmp, n);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ts_step_prof *st = &p->steps.v[i];
		struct ts_diff_step_note nt;
		int64_t best = INT64_MIN;
		memset(&nt, 0, sizeof(nt));
		nt.side = side;
		nt.iteration = st->step;
		nt.dur_ns = st->dur_ns;
		nt.compared = in[i];
		nt.robust_z = mad > 0 ? (double)(st->dur_ns - med) / (1.4826 * (double)mad) : NAN;
		nt.outlier = st->outlier || (!isnan(nt.robust_z) && nt.robust_z >= TS_DIFF_OUTLIER_Z);
		if (nt.compared && !nt.outlier)
			continue;
		/* the most specific wall that grew most: idle only when its
		 * excess is not explained by data loader or host gap */
		for (int w = 0; w < TS_DW_COUNT; w++) {
			int64_t x = wall_of(st, w) - wmed[w];
			if (w == TS_DW_IDLE)
				continue;
			if (x > best) {
				best = x;
				nt.wall = w;
			}
		}
		if (wall_of(st, TS_DW_IDLE) - wmed[TS_DW_IDLE] > 2 * best) {
			nt.wall = TS_DW_IDLE;
			best = wall_of(st, TS_DW_IDLE) - wmed[TS_DW_IDLE];
		}
		nt.wall_excess_ns = best;
		nt.wall_median_ns = wmed[nt.wall];
		rc = TS_VEC_PUSH(r->notes, nt);
	}
	free(tmp);
	return rc;
}

/* ------------------------------------------------------------ rows */

struct agg {
	int64_t count;
	int64_t total, self;
	int64_t bytes, bytes_dur;
	TS_VEC(int64_t) durs;
};

static int closes_kind(int kind, int gpu)
{
	/* CPU: what trace counts as main-thread host time (cpu ops, runtime
	 * and driver calls); annotations enclose ops and gaps and do not */
	return gpu ? kind >= TS_DIFF_KERNEL && kind < TS_DIFF_WALL_ROW : kind == TS_DIFF_CPU_OP;
}

/* a + b saturated: durations up to 2^61 ns each sum past int64 in a few */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Per-op aggregates of a side over its compared steps. */
static int aggregate(const struct ts_diff_side *s, const uint8_t *in, int gpu, struct agg *a)
{
	for (size_t i = 0; i < s->inst.n; i++) {
		const struct ts_diff_inst *x = &s->inst.v[i];
		struct agg *g = &a[x->op];
		int kind = s->ops.v[x->op].kind;
		if (!in[x->step])
			continue;
		g->count++;
		g->total = sat_add(g->total, x->dur_ns);
		if (closes_kind(kind, gpu) && (gpu || x->main_thread))
			g->self = sat_add(g->self, x->self_ns);
		if (x->bytes >= 0 && x->dur_ns > 0) {
			g->bytes = sat_add(g->bytes, x->bytes);
			g->bytes_dur = sat_add(g->bytes_dur, x->dur_ns);
		}
		if (TS_VEC_PUSH(g->durs, x->dur_ns))
			return TS_ENOMEM;
	}
	for (size_t i = 0; i < s->ops.n; i++)
		if (a[i].durs.n)
			ts_sort(a[i].durs.v, a[i].durs.n, sizeof(int64_t), cmp_i64);
	return 0;
}

static void stat_of(const struct agg *g, size_t nsteps, struct ts_diff_stat *st)
{
	double ns = nsteps ? (double)nsteps : 1;

	memset(st, 0, sizeof(*st));
	st->gbps = NAN;
	if (!g)
		return;
	st->count = g->count;
	st->count_per_step = (double)g->count / ns;
	st->total_ns = (double)g->total / ns;
	st->self_ns = (double)g->self / ns;
	st->mean_ns = g->count ? g->total / g->count : 0;
	st->p50_ns = pct(g->durs.v, g->durs.n, 0.5);
	st->p90_ns = pct(g->durs.v, g->durs.n, 0.9);
	if (g->bytes_dur > 0)
		st->gbps = (double)g->bytes / (double)g->bytes_dur;
}

static int cmp_row(const void *x, const void *y)
{
	const struct ts_diff_row *a = x, *b = y;
	double da = fabs(a->rank_ns), db = fabs(b->rank_ns);
	const char *na = a->base_name ? a->base_name : a->cand_name;
	const char *nb = b->base_name ? b->base_name : b->cand_name;

	if (da != db)
		return da < db ? 1 : -1;
	if (a->closes != b->closes)
		return a->closes ? -1 : 1;
	return strcmp(na, nb);
}

static int cmp_fam(const void *x, const void *y)
{
	const struct ts_diff_family_row *a = x, *b = y;
	double da = fabs(a->delta_ns), db = fabs(b->delta_ns);

	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(a->family, b->family);
}

static int cmp_change(const void *x, const void *y)
{
	const struct ts_diff_change *a = x, *b = y;

	if (a->side != b->side)
		return b->side - a->side;
	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int add_family(struct ts_diff_result *r, const char *fam, double b, double c, double bn,
		      double cn)
{
	for (size_t i = 0; i < r->families.n; i++)
		if (strcmp(r->families.v[i].family, fam) == 0) {
			r->families.v[i].base_ns += b;
			r->families.v[i].cand_ns += c;
			r->families.v[i].base_count += bn;
			r->families.v[i].cand_count += cn;
			return 0;
		}
	return TS_VEC_PUSH(r->families, ((struct ts_diff_family_row){ fam, b, c, 0, bn, cn }));
}

/* Intern key of an op: kind byte + name (or its normalised form). */
static int64_t op_key(struct ts_intern *keys, const struct ts_diff_side *s, size_t op, int norm,
		      int find)
{
	char buf[4096];
	const char *nm = ts_intern_str(&s->names, s->ops.v[op].name);
	size_t nl = ts_intern_len(&s->names, s->ops.v[op].name), len;

	/* CPU ops and annotations share a key: the legacy export has no
	 * categories, so its annotations read as CPU ops */
	buf[0] = s->ops.v[op].kind <= TS_DIFF_ANNOTATION ? 'c' : (char)('a' + s->ops.v[op].kind);
	if (norm) {
		len = 1 + ts_diff_normalize(nm, nl, buf + 1, sizeof(buf) - 1);
	} else {
		if (nl > sizeof(buf) - 1)
			nl = sizeof(buf) - 1;
		memcpy(buf + 1, nm, nl);
		len = 1 + nl;
	}
	return find ? ts_intern_find(keys, buf, len) : ts_intern(keys, buf, len);
}

static int build_rows(const struct ts_diff_side *b, const struct ts_diff_side *c, const uint8_t *inb,
		      const uint8_t *inc, struct ts_diff_result *r)
{
	size_t nb = b->ops.n, nc = c->ops.n, np = r->pairs.n;
	struct agg *ab = calloc(nb + 1, sizeof(*ab)), *ac = calloc(nc + 1, sizeof(*ac));
	int64_t *bmatch = malloc((nb + 1) * sizeof(int64_t)), *cmatch = malloc((nc + 1) * sizeof(int64_t));
	struct ts_intern keys, nkeys;
	int64_t *nbidx = NULL, *ncnt = NULL, *kmap = NULL;
	int gpu = b->ctx.has_gpu && c->ctx.has_gpu;
	double closing_sum = 0, unmatched = 0, delta_rows = 0;
	int rc = TS_ENOMEM;

	ts_intern_init(&keys);
	ts_intern_init(&nkeys);
	r->closing = gpu ? "gpu_time" : "cpu_self";
	if (!ab || !ac || !bmatch || !cmatch)
		goto out;
	if (aggregate(b, inb, gpu, ab) || aggregate(c, inc, gpu, ac))
		goto out;
	for (size_t i = 0; i < nb; i++)
		bmatch[i] = -1;
	for (size_t i = 0; i < nc; i++)
		cmatch[i] = -1;
	/* exact names: key -> baseline op */
	kmap = malloc((nb + 1) * sizeof(int64_t));
	if (!kmap)
		goto out;
	for (size_t i = 0; i < nb; i++) {
		int64_t k = op_key(&keys, b, i, 0, 0);
		if (k < 0)
			goto out;
		kmap[k] = (int64_t)i;
	}
	for (size_t j = 0; j < nc; j++) {
		int64_t k = op_key(&keys, c, j, 0, 1);
		if (k >= 0)
			k = kmap[k];
		if (k >= 0 && ab[k].count && ac[j].count && bmatch[k] < 0) {
			bmatch[k] = (int64_t)j;
			cmatch[j] = k;
		}
	}
	/* normalised names, among the ops still unmatched: a key that holds
	 * exactly one op on each side matches them */
	nbidx = malloc((nb + nc + 1) * sizeof(int64_t));
	ncnt = calloc((nb + nc + 1) * 2, sizeof(int64_t));
	if (!nbidx || !ncnt)
		goto out;
	for (size_t i = 0; i < nb; i++) {
		int64_t k;
		if (bmatch[i] >= 0 || !ab[i].count)
			continue;
		if ((k = op_key(&nkeys, b, i, 1, 0)) < 0)
			goto out;
		ncnt[2 * k]++;
		nbidx[k] = (int64_t)i;
	}
	for (size_t j = 0; j < nc; j++) {
		int64_t k;
		if (cmatch[j] >= 0 || !ac[j].count)
			continue;
		if ((k = op_key(&nkeys, c, j, 1, 0)) < 0)
			goto out;
		ncnt[2 * k + 1]++;
	}
	for (size_t j = 0; j < nc; j++) {
		int64_t k;
		if (cmatch[j] >= 0 || !ac[j].count)
			continue;
		k = op_key(&nkeys, c, j, 1, 1);
		if (k >= 0 && ncnt[2 * k] == 1 && ncnt[2 * k + 1] == 1) {
			bmatch[nbidx[k]] = (int64_t)j;
			cmatch[j] = nbidx[k];
			cmatch[j] |= INT64_C(1) << 40; /* normalised */
		}
	}
	/* rows: every baseline op, then candidate-only ops */
	for (size_t pass = 0; pass < 2; pass++) {
		size_t n = pass ? nc : nb;
		for (size_t i = 0; i < n; i++) {
			struct ts_diff_row row;
			const struct ts_diff_side *s = pass ? c : b;
			const struct ts_diff_op *op = &s->ops.v[i];
			int64_t other;
			if (pass ? !ac[i].count : !ab[i].count)
				continue;
			if (pass && cmatch[i] >= 0)
				continue;
			memset(&row, 0, sizeof(row));
			row.kind = op->kind;
			row.family = op->family;
			row.closes = closes_kind(op->kind, gpu);
			if (!pass) {
				other = bmatch[i];
				row.base_name = ts_intern_str(&b->names, op->name);
				stat_of(&ab[i], np, &row.base);
				stat_of(other >= 0 ? &ac[other] : NULL, np, &row.cand);
				if (other >= 0) {
					row.cand_name = ts_intern_str(&c->names, c->ops.v[other].name);
					row.match = (cmatch[other] >> 40) ? TS_DIFF_MATCH_NORMALIZED
									  : TS_DIFF_MATCH_EXACT;
				} else {
					row.match = TS_DIFF_MATCH_NONE;
				}
			} else {
				row.cand_name = ts_intern_str(&c->names, op->name);
				stat_of(NULL, np, &row.base);
				stat_of(&ac[i], np, &row.cand);
				row.match = TS_DIFF_MATCH_NONE;
			}
			row.delta_ns = row.cand.self_ns - row.base.self_ns;
			row.rank_ns = row.closes ? row.delta_ns : row.cand.total_ns - row.base.total_ns;
			if (row.closes) {
				delta_rows += row.delta_ns;
				closing_sum += row.base.self_ns + row.cand.self_ns;
				if (row.match == TS_DIFF_MATCH_NONE)
					unmatched += row.base.self_ns + row.cand.self_ns;
				if (add_family(r, row.family, row.base.self_ns, row.cand.self_ns,
					       row.base.count_per_step, row.cand.count_per_step))
					goto out;
			}
			/* op-name sets: CPU ops and annotations, exact names */
			if (row.kind <= TS_DIFF_ANNOTATION) {
				if (row.match == TS_DIFF_MATCH_NONE || row.match == TS_DIFF_MATCH_NORMALIZED) {
					if (row.base_name)
						r->names_deleted++;
					if (row.cand_name)
						r->names_added++;
				} else {
					r->names_common++;
					if (row.cand.count_per_step > row.base.count_per_step)
						r->names_increased++;
					else if (row.cand.count_per_step < row.base.count_per_step)
						r->names_decreased++;
					else
						r->names_unchanged++;
				}
			}
			if (row.match == TS_DIFF_MATCH_NONE &&
			    TS_VEC_PUSH(r->changes, ((struct ts_diff_change){
				    row.family, row.base_name ? row.base_name : row.cand_name,
				    row.base_name ? 0 : 1,
				    row.base_name ? row.base.self_ns : row.cand.self_ns })))
				goto out;
			if (TS_VEC_PUSH(r->rows, row))
				goto out;
		}
	}
	/* the walls no op row holds */
	for (int w = TS_DW_EXPOSED_COMM; w <= TS_DW_IDLE; w++) {
		struct ts_diff_row row;
		if (w != TS_DW_IDLE && (gpu || w != TS_DW_EXPOSED_COMM))
			continue;
		memset(&row, 0, sizeof(row));
		row.base_name = row.cand_name = ts_diff_wall_name(w);
		row.kind = TS_DIFF_WALL_ROW;
		row.family = "wall";
		row.match = TS_DIFF_MATCH_EXACT;
		row.closes = 1;
		stat_of(NULL, np, &row.base);
		stat_of(NULL, np, &row.cand);
		row.base.self_ns = row.base.total_ns = r->walls[w].base_ns;
		row.cand.self_ns = row.cand.total_ns = r->walls[w].cand_ns;
		row.base.count_per_step = row.cand.count_per_step = 1;
		row.delta_ns = row.rank_ns = r->walls[w].delta_ns;
		delta_rows += row.delta_ns;
		if (TS_VEC_PUSH(r->rows, row))
			goto out;
	}
	for (size_t i = 0; i < r->families.n; i++)
		r->families.v[i].delta_ns = r->families.v[i].cand_ns - r->families.v[i].base_ns;
	if (r->rows.n)
		ts_sort(r->rows.v, r->rows.n, sizeof(*r->rows.v), cmp_row);
	if (r->families.n)
		ts_sort(r->families.v, r->families.n, sizeof(*r->families.v), cmp_fam);
	if (r->changes.n)
		ts_sort(r->changes.v, r->changes.n, sizeof(*r->changes.v), cmp_change);
	r->residual_ns = (r->cand_mean_ns - r->base_mean_ns) - delta_rows;
	r->unmatched_frac = closing_sum > 0 ? unmatched / closing_sum : 0;
	rc = 0;
out:
	if (ab)
		for (size_t i = 0; i < nb; i++)
			TS_VEC_RELEASE(ab[i].durs);
	if (ac)
		for (size_t i = 0; i < nc; i++)
			TS_VEC_RELEASE(ac[i].durs);
	free(ab);
	free(ac);
	free(bmatch);
	free(cmatch);
	free(nbidx);
	free(ncnt);
	free(kmap);
	ts_intern_release(&keys);
	ts_intern_release(&nkeys);
	return rc;
}

/* ------------------------------------------------------------ context */

static const struct {
	const char *key, *label, *contract_key;
} ctx_fields[TS_DCTX_COUNT] = {
	[TS_DCTX_DEVICE] = { "device", "device", "environment.gpu.name" },
	[TS_DCTX_SMS] = { "sm_count", "SM count", NULL },
	[TS_DCTX_VENDOR] = { "vendor", "vendor", "environment.gpu.vendor" },
	[TS_DCTX_WORLD_SIZE] = { "world_size", "world size", NULL },
	[TS_DCTX_FORMAT] = { "trace_format", "trace format", NULL },
	[TS_DCTX_PROFILER] = { "profiler", "profiler", NULL },
	[TS_DCTX_CLOCK] = { "clock_resolution_ns", "clock resolution", NULL },
	[TS_DCTX_BACKEND] = { "backend", "backend", NULL },
	[TS_DCTX_RUNTIME] = { "runtime_version", "runtime version", NULL },   /* runtime_key */
	[TS_DCTX_DRIVER] = { "driver_version", "driver version", "environment.gpu.driver" },
	[TS_DCTX_NCCL] = { "nccl_version", "NCCL version", "environment.torch.nccl" },
};

const char *ts_diff_ctx_key(int f)
{
	return f >= 0 && f < TS_DCTX_COUNT ? ctx_fields[f].key : "?";
}

const char *ts_diff_ctx_label(int f)
{
	return f >= 0 && f < TS_DCTX_COUNT ? ctx_fields[f].label : "?";
}

static const char *text_or_null(const char *s)
{
	return s && *s ? s : NULL;
}

const char *ts_diff_ctx_value(const struct ts_diff_context *c, int f, char *buf, size_t cap)
{
	switch (f) {
	case TS_DCTX_DEVICE: return c->device_known ? text_or_null(c->device) : NULL;
	case TS_DCTX_SMS:
		if (c->sms <= 0)
			return NULL;
		snprintf(buf, cap, "%d", (int)c->sms);
		return buf;
	case TS_DCTX_VENDOR:
		return c->vendor && strcmp(c->vendor, "unknown") ? text_or_null(c->vendor) : NULL;
	case TS_DCTX_WORLD_SIZE:
		if (c->world_size < 0)
			return NULL;
		snprintf(buf, cap, "%lld", (long long)c->world_size);
		return buf;
	case TS_DCTX_FORMAT: return text_or_null(c->format);
	case TS_DCTX_PROFILER: return text_or_null(c->profiler);
	case TS_DCTX_CLOCK:
		if (c->clock_ns <= 0)
			return NULL;
		if (c->clock_ns >= 1000)
			snprintf(buf, cap, "%lld us", (long long)(c->clock_ns / 1000));
		else
			snprintf(buf, cap, "%lld ns", (long long)c->clock_ns);
		return buf;
	case TS_DCTX_BACKEND: return text_or_null(c->backend);
	case TS_DCTX_RUNTIME: return text_or_null(c->runtime);
	case TS_DCTX_DRIVER: return text_or_null(c->driver);
	case TS_DCTX_NCCL: return text_or_null(c->nccl);
	default: return NULL;
	}
}

int ts_diff_ctx_compare(const struct ts_diff_context *a, const struct ts_diff_context *b, int f)
{
	char ba[32], bb[32];
	const char *x = ts_diff_ctx_value(a, f, ba, sizeof(ba));
	const char *y = ts_diff_ctx_value(b, f, bb, sizeof(bb));

	if (!x || !y)
		return x ? TS_DCTX_BASELINE_ONLY : y ? TS_DCTX_CANDIDATE_ONLY : TS_DCTX_NEITHER;
	if (f == TS_DCTX_PROFILER || f == TS_DCTX_RUNTIME || f == TS_DCTX_DRIVER || f == TS_DCTX_NCCL)
		return ts_version_same(x, y) ? TS_DCTX_SAME : TS_DCTX_DIFFERS;
	return strcmp(x, y) ? TS_DCTX_DIFFERS : TS_DCTX_SAME;
}

/* The contract key of the runtime torch runs on: the vendor's (a side
 * that records no vendor takes the other's), NULL for two vendors. */
static const char *runtime_key(const struct ts_diff_context *a, const struct ts_diff_context *b)
{
	static const struct { const char *vendor, *key; } keys[] = {
		{ "cuda", "environment.torch.cuda" }, { "rocm", "environment.torch.hip" },
		{ "musa", "environment.torch.musa" },
	};
	char ba[32], bb[32];
	const char *x = ts_diff_ctx_value(a, TS_DCTX_VENDOR, ba, sizeof(ba));
	const char *y = ts_diff_ctx_value(b, TS_DCTX_VENDOR, bb, sizeof(bb));
	const char *v = x ? x : y;

	if (!v || (x && y && strcmp(x, y)))
		return NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(v, keys[i].vendor))
			return keys[i].key;
	return NULL;
}

size_t ts_diff_ctx_changes(const struct ts_diff_context *a, const struct ts_diff_context *b,
			   unsigned mask, struct ts_ctx_change *out, char buf[][2][32])
{
	size_t k = 0;

	for (int f = 0; f < TS_DCTX_COUNT; f++)
		if ((mask >> f & 1u) && ts_diff_ctx_compare(a, b, f) == TS_DCTX_DIFFERS)
			out[k++] = (struct ts_ctx_change){
				ctx_fields[f].label, ts_diff_ctx_value(a, f, buf[f][0], sizeof(buf[f][0])),
				ts_diff_ctx_value(b, f, buf[f][1], sizeof(buf[f][1])),
				f == TS_DCTX_RUNTIME ? runtime_key(a, b) : ctx_fields[f].contract_key };
	return k;
}

/* ------------------------------------------------------------ compare */

/* Same vendor, the same model where both traces record one (a side
 * without a model is not a different device: ts_diff_warnings says so),
 * and the same SM count where both record one (a MIG slice, H100 PCIe's
 * 114 against SXM's 132 under one name). */
static int same_hardware(const struct ts_diff_context *a, const struct ts_diff_context *b)
{
	return strcmp(a->vendor, b->vendor) == 0 &&
	       (!a->device_known || !b->device_known || strcmp(a->device, b->device) == 0) &&
	       (a->sms <= 0 || b->sms <= 0 || a->sms == b->sms);
}

const char *ts_diff_ctx_hardware(const struct ts_diff_context *c, const struct ts_diff_context *other,
				 char *buf, size_t cap)
{
	if (c->sms > 0 && other->sms > 0 && c->sms != other->sms && strcmp(c->device, other->device) == 0)
		snprintf(buf, cap, "%s (%d SMs)", c->device, (int)c->sms);
	else
		snprintf(buf, cap, "%s", c->device);
	return buf;
}

int ts_diff_compare(const struct ts_diff_side *base, const struct ts_diff_side *cand,
		    const struct ts_diff_opts *o, struct ts_diff_result *r, struct ts_err *err)
{
	const struct ts_rank_prof *pb = &base->prof, *pc = &cand->prof;
	struct ts_diff_opts def;
	uint8_t *inb = calloc(pb->steps.n + 1, 1), *inc = calloc(pc->steps.n + 1, 1);
	double *a = NULL, *b = NULL;
	size_t n;
	int rc = TS_ENOMEM;

	if (!o) {
		ts_diff_opts_init(&def);
		o = &def;
	}
	r->band = o->band;
	r->same_hardware = same_hardware(&base->ctx, &cand->ctx);
	for (int f = 0; f < TS_DCTX_COUNT; f++) {
		r->context[f] = (uint8_t)ts_diff_ctx_compare(&base->ctx, &cand->ctx, f);
		r->context_differs += r->context[f] == TS_DCTX_DIFFERS;
	}
	if (!inb || !inc)
		goto out;
	/* align by iteration; else by position */
	r->aligned_by = "iteration";
	for (size_t i = 0; i < pb->steps.n; i++)
		for (size_t j = 0; j < pc->steps.n; j++)
			if (pb->steps.v[i].step != TS_NONE && pb->steps.v[i].step == pc->steps.v[j].step &&
			    !inc[j]) {
				const struct ts_step_prof *x = &pb->steps.v[i], *y = &pc->steps.v[j];
				if (TS_VEC_PUSH(r->pairs, ((struct ts_diff_step_pair){
					    x->step, y->step, x->start_ns, x->start_ns + x->dur_ns,
					    y->start_ns, y->start_ns + y->dur_ns })))
					goto out;
				inb[i] = inc[j] = 1;
				break;
			}
	if (!r->pairs.n) {
		r->aligned_by = "position";
		for (size_t i = 0; i < pb->steps.n && i < pc->steps.n; i++) {
			const struct ts_step_prof *x = &pb->steps.v[i], *y = &pc->steps.v[i];
			if (TS_VEC_PUSH(r->pairs, ((struct ts_diff_step_pair){
				    x->step, y->step, x->start_ns, x->start_ns + x->dur_ns,
				    y->start_ns, y->start_ns + y->dur_ns })))
				goto out;
			inb[i] = inc[i] = 1;
		}
	}
	n = r->pairs.n;
	if (side_notes(base, 0, inb, r) || side_notes(cand, 1, inc, r))
		goto out;
	if (!n) {
		r->verdict = TS_DIFF_NO_STEPS;
		rc = 0;
		goto out;
	}
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	if (!a || !b)
		goto out;
	{
		size_t k = 0;
		for (size_t i = 0; i < pb->steps.n; i++)
			if (inb[i])
				a[k++] = (double)pb->steps.v[i].dur_ns;
		k = 0;
		for (size_t j = 0; j < pc->steps.n; j++)
			if (inc[j])
				b[k++] = (double)pc->steps.v[j].dur_ns;
		/* iteration pairs are in baseline order: match the candidate's */
		if (strcmp(r->aligned_by, "iteration") == 0)
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < pc->steps.n; j++)
					if (pc->steps.v[j].step == r->pairs.v[i].cand_iteration)
						b[i] = (double)pc->steps.v[j].dur_ns;
	}
	for (size_t i = 0; i < n; i++) {
		r->base_mean_ns += a[i] / (double)n;
		r->cand_mean_ns += b[i] / (double)n;
	}
	r->step_basis = "host_span";
	r->basis_steps = n;
	r->gpu_behind = (pb->gpu_behind ? 1 : 0) | (pc->gpu_behind ? 2 : 0);
	r->clock_mismatch = (pb->launch.before_launch ? 1 : 0) | (pc->launch.before_launch ? 2 : 0);
	{
		/* a GPU behind its host, or one whose lead cannot be told (its
		 * clock disagrees with the host's): the spans time the host, so
		 * compare the GPU's own step times, over the pairs with one on
		 * both sides (differences of one device clock: an offset between
		 * the clocks cancels) */
		int spans_host = r->gpu_behind | r->clock_mismatch;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const struct ts_step_prof *x = step_starting(pb, r->pairs.v[i].base_start_ns);
			const struct ts_step_prof *y = step_starting(pc, r->pairs.v[i].cand_start_ns);
			int hx = x && x->dev_step_ns != TS_NONE, hy = y && y->dev_step_ns != TS_NONE;
			r->base_gpu_steps += (size_t)hx;
			r->cand_gpu_steps += (size_t)hy;
			if (spans_host && hx && hy) {
				a[k] = (double)x->dev_step_ns;
				b[k++] = (double)y->dev_step_ns;
			}
		}
		if (k) {
			r->step_basis = "device";
			r->basis_steps = k;
		}
		r->host_clock_only = spans_host && !k;
	}
	if (strcmp(r->step_basis, "device") == 0) {
		r->base_gpu_mean_ns = r->cand_gpu_mean_ns = 0;
		for (size_t i = 0; i < r->basis_steps; i++) {
			r->base_gpu_mean_ns += a[i] / (double)r->basis_steps;
			r->cand_gpu_mean_ns += b[i] / (double)r->basis_steps;
		}
	}
	for (int w = 0; w < TS_DW_COUNT; w++) {
		struct ts_diff_wall_row *wr = &r->walls[w];
		wr->wall = w;
		for (size_t i = 0; i < pb->steps.n; i++)
			if (inb[i])
				wr->base_ns += (double)wall_of(&pb->steps.v[i], w) / (double)n;
		for (size_t j = 0; j < pc->steps.n; j++)
			if (inc[j])
				wr->cand_ns += (double)wall_of(&pc->steps.v[j], w) / (double)n;
		wr->delta_ns = wr->cand_ns - wr->base_ns;
	}
	if (r->basis_steps == 1) {
		r->ratio = b[0] / a[0];
		r->verdict = TS_DIFF_NO_NOISE_ESTIMATE;
	} else {
		struct ts_ab_ratio q;
		size_t m = r->basis_steps;
		if (strcmp(r->aligned_by, "iteration") == 0) {
			if (ts_ab_paired_ratio(a, b, m, o->seed, &q))
				goto out;
		} else {
			ts_ab_welch_log_ratio(a, m, b, m, &q);
		}
		r->ratio = !isnan(q.estimate) ? q.estimate : isnan(r->base_gpu_mean_ns) ?
			   r->cand_mean_ns / r->base_mean_ns : r->cand_gpu_mean_ns / r->base_gpu_mean_ns;
		r->ci95_low = q.ci95_low;
		r->ci95_high = q.ci95_high;
		r->method = q.method;
		if (!(r->ci95_low > 0)) {
			/* an interval of a time ratio reaching 0 says nothing:
			 * dropped, as ts_ci_positive does for step times */
			r->ci95_low = r->ci95_high = NAN;
			r->method = "none (too few or too spread steps for an interval)";
		}
		switch (ts_ab_decide(q.ci95_low, q.ci95_high, o->band)) {
		case TS_AB_FASTER: r->verdict = TS_DIFF_FASTER; break;
		case TS_AB_SLOWER: r->verdict = TS_DIFF_SLOWER; break;
		case TS_AB_NO_DIFFERENCE: r->verdict = TS_DIFF_NO_DIFFERENCE; break;
		default: r->verdict = TS_DIFF_INCONCLUSIVE; break;
		}
	}
	/* the host spans are no step time: their ratio decides nothing */
	if (r->host_clock_only)
		r->verdict = TS_DIFF_NO_GPU_STEP_TIME;
	if (!r->same_hardware && !o->allow_different_hardware)
		r->verdict = TS_DIFF_REFUSED_HARDWARE;
	rc = build_rows(base, cand, inb, inc, r);
out:
	if (rc)
		ts_err_set(err, rc, "out of memory comparing %s and %s", base->ctx.path, cand->ctx.path);
	free(inb);
	free(inc);
	free(a);
	free(b);
	return rc;
}

int ts_diff_traces(const struct ts_trace *tb, const struct ts_trace *tc,
		   const struct ts_diff_opts *o, struct ts_diff_side *base,
		   struct ts_diff_side *cand, struct ts_diff_result *r, struct ts_err *err)
{
	int rc;

	if ((rc = ts_diff_side_build(base, tb, err)) || (rc = ts_diff_side_build(cand, tc, err)))
		return rc;
	return ts_diff_compare(base, cand, o, r, err);
}

int ts_diff_warnings(const struct ts_diff_side *base, const struct ts_diff_side *cand,
		     const struct ts_diff_result *r, struct ts_warnings *w)
{
	char why[320];
	size_t unm = 0;
	int rc = 0;

	{
		struct ts_ctx_change c[TS_DCTX_COUNT];
		char buf[TS_DCTX_COUNT][2][32];

		rc |= ts_context_differs_warn(w, c, ts_diff_ctx_changes(&base->ctx, &cand->ctx, ~0u, c, buf));
	}
	if (!r->same_hardware) {
		char hb[160], hc[160];
		rc |= ts_warnings_add(w, "different-hardware", NULL, -1, TS_NONE,
				      "baseline ran on %s, candidate on %s: %s",
				      ts_diff_ctx_hardware(&base->ctx, &cand->ctx, hb, sizeof(hb)),
				      ts_diff_ctx_hardware(&cand->ctx, &base->ctx, hc, sizeof(hc)),
				      r->verdict == TS_DIFF_REFUSED_HARDWARE
				      ? "no speed verdict without --allow-different-hardware"
				      : "verdict given on request (--allow-different-hardware)");
	}
	if (r->same_hardware && !base->ctx.device_known && !cand->ctx.device_known)
		rc |= ts_warnings_add(w, "device-unknown", NULL, -1, TS_NONE,
				      "neither side records its GPU model (%s): the verdict assumes both ran"
				      " on the same %s device", base->ctx.format[0] == 'n' ?
				      "an Nsight Systems export without TARGET_INFO_GPU" : "no deviceProperties",
				      base->ctx.vendor);
	for (int k = 0; k < 2 && r->same_hardware && base->ctx.device_known != cand->ctx.device_known; k++) {
		const struct ts_diff_side *x = k ? cand : base, *y = k ? base : cand;
		if (!x->ctx.device_known)
			rc |= ts_warnings_add(w, "device-unknown", x->ctx.path, -1, TS_NONE,
					      "%s records no GPU model (%s): the verdict takes it for the other"
					      " side's %s", x->ctx.path, x->ctx.format[0] == 'n' ?
					      "an Nsight Systems export without TARGET_INFO_GPU" :
					      "no deviceProperties", y->ctx.device);
	}
	ts_diff_spans_why(r->gpu_behind, r->clock_mismatch, why, sizeof(why));
	if (r->host_clock_only) {
		size_t n = r->pairs.n;
		rc |= ts_warnings_add(w, "no-gpu-step-time", NULL, -1, TS_NONE,
				      "%s%s, so %s step spans %stime the host's launch pace, not the GPU's;"
				      " but no compared step has a GPU"
				      " step time on both sides (the baseline has one for %zu of its %zu compared"
				      " step%s, the candidate for %zu; one needs device work linked to the launch"
				      " calls of the step and of the previous iteration): only the host spans were"
				      " compared (step_basis host_span), and their ratio %.4f is not the"
				      " step-time ratio: it gives no verdict",
				      why, r->clock_mismatch ? "" : " (gpu-behind-host)",
				      (r->gpu_behind | r->clock_mismatch) == 3 ? "their" : "its",
				      r->clock_mismatch ? "may " : "", r->base_gpu_steps, n,
				      n == 1 ? "" : "s", r->cand_gpu_steps, r->ratio);
	}
	/* a trace's first step has no previous iteration to time its GPU step
	 * from: one pair short is the rule, more is worth a word */
	if (strcmp(r->step_basis, "device") == 0 && r->basis_steps + 1 < r->pairs.n)
		rc |= ts_warnings_add(w, "gpu-steps-partial", NULL, -1, TS_NONE,
				      "%s, so the GPU's own step times are"
				      " compared, but only %zu of the %zu compared steps have one on both"
				      " sides (the baseline %zu, the candidate %zu): the ratio and its"
				      " interval stand for those %zu steps only",
				      why, r->basis_steps, r->pairs.n,
				      r->base_gpu_steps, r->cand_gpu_steps, r->basis_steps);
	for (size_t i = 0; i < r->notes.n; i++)
		unm += !r->notes.v[i].compared;
	if (unm)
		rc |= ts_warnings_add(w, "unmatched-steps", NULL, -1, TS_NONE,
				      "%zu step(s) have no partner and are not compared (listed under steps)",
				      unm);
	return rc ? TS_ENOMEM : 0;
}
