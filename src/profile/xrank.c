/*
 * xrank.c - the cross-rank view: collective skew, stragglers, job verdict.
 *
 * Why this module exists: a slow rank does not look slow in its own trace;
 * it looks normal while every peer sits longer in the same collectives.
 * Matching the same collective across ranks (process group + sequence, or
 * name + step + occurrence) and comparing how long each rank spent in it is
 * clock-free (a collective ends at about the same moment everywhere, so the
 * rank that waited least arrived last) and works on CPU gloo traces and GPU
 * NCCL/MCCL kernels alike. A straggler must be late consistently (25th
 * percentile over steps), not in one noisy step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/profile.h"
#include "prof_util.h"

void ts_job_prof_init(struct ts_job_prof *j)
{
	memset(j, 0, sizeof(*j));
	j->skew.worst_rank = -1;
	j->skew.worst_step = TS_NONE;
}

void ts_job_prof_release(struct ts_job_prof *j)
{
	TS_VEC_RELEASE(j->stragglers);
	TS_VEC_RELEASE(j->per_rank);
	TS_VEC_RELEASE(j->dups);
	free(j->ranks);
	ts_job_prof_init(j);
}

struct xc {
	uint64_t key;
	int64_t step, idx;
	int64_t rank;
	int64_t dur;
	uint32_t name;
	uint32_t prof;          /* index into j->ranks */
	uint8_t by_seq;         /* idx is the process group's sequence number */
	uint8_t skip;           /* its (key, step) counts differ across ranks */
};

static int cmp_xc(const void *x, const void *y)
{
	const struct xc *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->idx != b->idx)
		return a->idx < b->idx ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

struct late {
	int64_t rank, step, ns;
};

static int cmp_late(const void *x, const void *y)
{
	const struct late *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return (a->ns < b->ns) - (a->ns > b->ns); /* largest first */
}

static int64_t median_sorted(const int64_t *v, size_t n)
{
	if (!n)
		return 0;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_prof(const void *x, const void *y)
{
	const struct ts_rank_prof *a = *(struct ts_rank_prof *const *)x;
	const struct ts_rank_prof *b = *(struct ts_rank_prof *const *)y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->window_no != b->window_no)
		return a->window_no < b->window_no ? -1 : 1;
	return strcmp(a->file, b->file);
}

/*
 * Order pairs the k-th call of a collective in a step on every rank; when
 * one rank makes an extra call of the same name (a sub-group collective),
 * every later pair is of unlike calls. Marks skip on the order-matched
 * entries of each (key, step) whose count differs across its ranks, and
 * counts them in j->skew. xv is sorted by cmp_xc. 0 or TS_ENOMEM.
 */
static int skip_uneven(struct ts_job_prof *j, struct xc *xv, size_t nx)
{
	int64_t *rk = NULL;
	size_t cap = 0;

	for (size_t a = 0; a < nx;) {
		size_t b = a, m = 0;
		int uneven = 0;

		while (b < nx && xv[b].key == xv[a].key && xv[b].step == xv[a].step)
			b++;
		if (b - a > cap) {
			int64_t *t = realloc(rk, (b - a) * sizeof(*rk));
			if (!t) {
				free(rk);
				return TS_ENOMEM;
			}
			rk = t;
			cap = b - a;
		}
		for (size_t i = a; i < b; i++)
			if (!xv[i].by_seq)
				rk[m++] = xv[i].rank;
		sort_n(rk, m, sizeof(*rk), cmp_i64);
		/* every rank's count equals the first rank's */
		for (size_t i = 0, first = 0, run = 0; i < m && !uneven; i++) {
			run = i && rk[i] == rk[i - 1] ? run + 1 : 1;
			if (i + 1 < m && rk[i + 1] == rk[i])
				continue;
			if (!first)
				first = run;
			else if (run != first)
				uneven = 1;
		}
		if (uneven) {
			j->skew.unmatched_groups++;
			for (size_t i = a; i < b; i++)
				if (!xv[i].by_seq) {
					xv[i].skip = 1;
					j->skew.unmatched_instances++;
				}
		}
		a = b;
	}
	free(rk);
	return 0;
}

/* Whether two windows share time (an empty window counts as 1 ns). */
static int windows_overlap(const struct ts_rank_prof *a, const struct ts_rank_prof *b)
{
	int64_t ae = a->t0_ns + (a->window_ns > 0 ? a->window_ns : 1);
	int64_t be = b->t0_ns + (b->window_ns > 0 ? b->window_ns : 1);

	return a->t0_ns < be && b->t0_ns < ae;
}

/* Index of the first element > v in sorted v[0..n). */
static size_t upper(const int64_t *a, size_t n, int64_t v)
{
	return ts_lower_bound(a, n, sizeof(*a), &v, ts_i64_not_above);
}

/* k-th smallest (0-based) of the multiset all \ own (own ⊆ all, both
 * sorted), by binary search: O(log² n), so peers' medians stay cheap for
 * thousands of ranks. */
static int64_t kth_excluding(const int64_t *all, size_t n, const int64_t *own, size_t k_own,
			     size_t k)
{
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;
		size_t le = upper(all, n, all[m]) - upper(own, k_own, all[m]);
		if (le >= k + 1)
			h = m;
		else
			l = m + 1;
	}
	return l < n ? all[l] : 0;
}

static int64_t median_excluding(const int64_t *all, size_t n, const int64_t *own, size_t k_own)
{
	size_t m = n - k_own;

	if (!m)
		return 0;
	if (m % 2)
		return kth_excluding(all, n, own, k_own, m / 2);
	return (kth_excluding(all, n, own, k_own, m / 2 - 1) +
		kth_excluding(all, n, own, k_own, m / 2)) / 2;
}

/* Step time outside communication and step time of every step of every
 * window, sorted: the job-wide reference the per-rank figures are cut from. */
struct stepvals {
	int64_t *noncomm;       /* all ranks, sorted */
	size_t n;
	int64_t *own_nc, *own_dur; /* scratch for one rank */
};

/* Own medians of `rank` (its windows are contiguous in j->ranks) and the
 * peers' median outside communication. */
static int prof_rank_below(const void *elem, const void *rank)
{
	return (*(const struct ts_rank_prof *const *)elem)->rank < *(const int64_t *)rank;
}

static void rank_medians(const struct ts_job_prof *j, struct stepvals *sv, int64_t rank,
			 struct ts_straggler *s)
{
	size_t l = ts_lower_bound(j->ranks, j->n, sizeof(*j->ranks), &rank, prof_rank_below), k = 0;

	for (size_t i = l; i < j->n && j->ranks[i]->rank == rank; i++) {
		const struct ts_rank_prof *p = j->ranks[i];
		for (size_t t = 0; t < p->steps.n; t++, k++) {
			sv->own_nc[k] = p->steps.v[t].dur_ns - p->steps.v[t].comm_ns;
			sv->own_dur[k] = p->steps.v[t].dur_ns;
		}
	}
	sort_n(sv->own_nc, k, sizeof(int64_t), cmp_i64);
	sort_n(sv->own_dur, k, sizeof(int64_t), cmp_i64);
	s->own_noncomm_ns = median_sorted(sv->own_nc, k);
	s->median_step_ns = median_sorted(sv->own_dur, k);
	s->peer_noncomm_ns = median_excluding(sv->noncomm, sv->n, sv->own_nc, k);
}

static int stepvals_init(struct stepvals *sv, const struct ts_job_prof *j)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < j->n; i++)
		n += j->ranks[i]->steps.n;
	sv->noncomm = malloc((n + 1) * sizeof(int64_t));
	sv->own_nc = malloc((n + 1) * sizeof(int64_t));
	sv->own_dur = malloc((n + 1) * sizeof(int64_t));
	if (!sv->noncomm || !sv->own_nc || !sv->own_dur)
		return TS_ENOMEM;
	for (size_t i = 0; i < j->n; i++)
		for (size_t t = 0; t < j->ranks[i]->steps.n; t++)
			sv->noncomm[k++] = j->ranks[i]->steps.v[t].dur_ns - j->ranks[i]->steps.v[t].comm_ns;
	sv->n = k;
	sort_n(sv->noncomm, k, sizeof(int64_t), cmp_i64);
	return 0;
}

static void stepvals_release(struct stepvals *sv)
{
	free(sv->noncomm);
	free(sv->own_nc);
	free(sv->own_dur);
}

static int stragglers(struct ts_job_prof *j, struct late *lv, size_t nl)
{
	int64_t *v = malloc((nl + 1) * sizeof(*v));
	struct stepvals sv = { 0 };

	if (!v || stepvals_init(&sv, j)) {
		free(v);
		stepvals_release(&sv);
		return TS_ENOMEM;
	}
	sort_n(lv, nl, sizeof(*lv), cmp_late);
	for (size_t i = 0; i < nl;) {
		size_t k = 0, late = 0, e = i;
		struct ts_straggler s;
		while (e < nl && lv[e].rank == lv[i].rank) {
			/* first of each (rank, step) is its largest lateness */
			if (e == i || lv[e].step != lv[e - 1].step) {
				v[k++] = lv[e].ns;
				late += lv[e].ns > 0;
			}
			e++;
		}
		memset(&s, 0, sizeof(s));
		s.rank = lv[i].rank;
		s.steps = (int64_t)k;
		s.late_steps = (int64_t)late;
		sort_n(v, k, sizeof(*v), cmp_i64);
		s.late_p25_ns = pct_sorted(v, k, 0.25);
		s.late_p50_ns = median_sorted(v, k);
		rank_medians(j, &sv, s.rank, &s);
		s.straggler = s.steps >= TS_STRAGGLER_MIN_STEPS &&
			      (double)s.late_p25_ns >= TS_STRAGGLER_FRAC * (double)s.median_step_ns &&
			      s.own_noncomm_ns > s.peer_noncomm_ns;
		if (s.straggler) {
			snprintf(s.evidence, sizeof(s.evidence),
				 "rank %lld arrived last at matched collectives in %lld of %lld steps; "
				 "lateness p25 %.1f ms, median %.1f ms (threshold %.0f%% of median step "
				 "%.1f ms = %.1f ms); step time outside communication %.1f ms vs %.1f ms "
				 "on its peers",
				 (long long)s.rank, (long long)s.late_steps, (long long)s.steps,
				 (double)s.late_p25_ns / 1e6, (double)s.late_p50_ns / 1e6,
				 100 * TS_STRAGGLER_FRAC, (double)s.median_step_ns / 1e6,
				 TS_STRAGGLER_FRAC * (double)s.median_step_ns / 1e6,
				 (double)s.own_noncomm_ns / 1e6, (double)s.peer_noncomm_ns / 1e6);
			if (TS_VEC_PUSH(j->stragglers, s)) {
				free(v);
				stepvals_release(&sv);
				return TS_ENOMEM;
			}
		}
		if (TS_VEC_PUSH(j->per_rank, s)) {
			free(v);
			stepvals_release(&sv);
			return TS_ENOMEM;
		}
		i = e;
	}
	free(v);
	stepvals_release(&sv);
	return 0;
}

static void job_verdict(struct ts_job_prof *j)
{
	int count[TS_WALL_COUNT] = { 0 };
	double share[TS_WALL_COUNT] = { 0 };
	int best = TS_WALL_COMPUTE;
	const struct ts_rank_prof *ex = NULL;

	if (j->stragglers.n) {
		j->wall.wall = TS_WALL_STRAGGLER;
		j->wall.share = j->stragglers.v[0].median_step_ns > 0
					? (double)j->stragglers.v[0].late_p50_ns /
						  (double)j->stragglers.v[0].median_step_ns
					: 0;
		snprintf(j->wall.evidence, sizeof(j->wall.evidence), "%s",
			 j->stragglers.v[0].evidence);
		return;
	}
	for (size_t i = 0; i < j->n; i++) {
		count[j->ranks[i]->verdict.wall]++;
		share[j->ranks[i]->verdict.wall] += j->ranks[i]->verdict.share;
	}
	/* a rank without enough evidence does not vote unless none has it */
	best = count[TS_WALL_UNDETERMINED] == (int)j->n && j->n ? TS_WALL_UNDETERMINED
								 : TS_WALL_COMPUTE;
	for (int w = 0; w < TS_WALL_UNDETERMINED; w++)
		if (count[w] > count[best] || (count[w] == count[best] && share[w] > share[best]))
			best = w;
	for (size_t i = 0; i < j->n; i++)
		if ((int)j->ranks[i]->verdict.wall == best &&
		    (!ex || j->ranks[i]->verdict.share > ex->verdict.share))
			ex = j->ranks[i];
	j->wall.wall = (enum ts_wall)best;
	j->wall.share = ex ? ex->verdict.share : 0;
	if (ex) {
		struct ts_sb sb;
		ts_sb_init(&sb);
		ts_sb_addf(&sb, "%d of %zu rank windows: %s; rank %lld: %s", count[best], j->n,
			   ts_wall_name((enum ts_wall)best), (long long)ex->rank,
			   ex->verdict.evidence);
		if (!sb.failed) {
			size_t m = sb.len < sizeof(j->wall.evidence) ? sb.len
								     : sizeof(j->wall.evidence) - 1;
			memcpy(j->wall.evidence, sb.buf, m);
			j->wall.evidence[m] = 0;
		}
		ts_sb_release(&sb);
	}
}

int ts_job_analyse(struct ts_job_prof *j, struct ts_rank_prof **ranks, size_t n,
		   struct ts_err *err)
{
	struct xc *xv = NULL;
	struct late *lv = NULL;
	int64_t *skews = NULL;
	size_t nx = 0, nl = 0, ns = 0;
	int rc = TS_ENOMEM;

	j->ranks = malloc((n ? n : 1) * sizeof(*j->ranks));
	if (!j->ranks)
		goto out;
	j->n = n;
	/* window_no = order among the inputs of the same rank: stable sort by
	 * rank (input order as the tie-break), then count */
	for (size_t i = 0; i < n; i++) {
		j->ranks[i] = ranks[i];
		ranks[i]->window_no = (int64_t)i;
	}
	sort_n(j->ranks, n, sizeof(*j->ranks), cmp_prof);
	/* a window overlapping an earlier one of its rank is a copy: out */
	{
		size_t kept = 0;

		for (size_t i = 0; i < n; i++) {
			struct ts_rank_prof *p = j->ranks[i];
			const struct ts_rank_prof *of = NULL;

			for (size_t k = kept; k-- > 0 && j->ranks[k]->rank == p->rank && !of;)
				if (windows_overlap(j->ranks[k], p))
					of = j->ranks[k];
			if (of) {
				struct ts_job_dup d = { p, of };

				if (TS_VEC_PUSH(j->dups, d))
					goto out;
				continue;
			}
			j->ranks[kept++] = p;
		}
		n = j->n = kept;
	}
	for (size_t i = 0; i < n; i++)
		j->ranks[i]->window_no = i && j->ranks[i - 1]->rank == j->ranks[i]->rank
						 ? j->ranks[i - 1]->window_no + 1 : 0;
	for (size_t i = 0; i < n; i++) {
		if (!i || j->ranks[i]->rank != j->ranks[i - 1]->rank)
			j->nranks++;
		nx += j->ranks[i]->colls.n;
	}

	xv = malloc((nx + 1) * sizeof(*xv));
	lv = malloc((nx + 1) * sizeof(*lv));
	skews = malloc((nx + 1) * sizeof(*skews));
	if (!xv || !lv || !skews)
		goto out;
	nx = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ts_rank_prof *p = j->ranks[i];
		for (size_t c = 0; c < p->colls.n; c++) {
			const struct ts_coll_span *cs = &p->colls.v[c];
			struct xc x = { cs->key, cs->step, cs->idx, p->rank, cs->dur_ns,
					cs->name, (uint32_t)i, 0, 0 };
			if (cs->seq != TS_NONE) { /* process-group sequence beats order */
				x.idx = cs->seq;
				x.by_seq = 1;
			}
			xv[nx++] = x;
		}
	}
	sort_n(xv, nx, sizeof(*xv), cmp_xc);
	if (skip_uneven(j, xv, nx))
		goto out;
	for (size_t i = 0; i < nx;) {
		if (xv[i].skip) {
			i++;
			continue;
		}
		size_t e = i + 1, distinct = 1;
		int64_t max1 = xv[i].dur, max2 = INT64_MIN, mind = xv[i].dur;
		size_t late = i;
		while (e < nx && xv[e].key == xv[i].key && xv[e].step == xv[i].step &&
		       xv[e].idx == xv[i].idx) {
			if (xv[e].rank != xv[e - 1].rank)
				distinct++;
			if (xv[e].dur > max1) {
				max2 = max1;
				max1 = xv[e].dur;
			} else if (xv[e].dur > max2) {
				max2 = xv[e].dur;
			}
			if (xv[e].dur < mind) {
				mind = xv[e].dur;
				late = e;
			}
			e++;
		}
		if (distinct >= 2) {
			skews[ns++] = max1 - mind;
			if (max1 - mind > j->skew.max_ns || j->skew.matched == 0) {
				j->skew.max_ns = max1 - mind;
				j->skew.worst_rank = xv[late].rank;
				j->skew.worst_step = xv[late].step;
				j->skew.worst_name = ts_prof_str(j->ranks[xv[late].prof], xv[late].name);
			}
			j->skew.matched++;
			if (xv[i].step != TS_NONE)
				for (size_t k = i; k < e; k++) {
					int64_t other = xv[k].dur == max1 ? max2 : max1;
					lv[nl++] = (struct late){ xv[k].rank, xv[k].step,
								  other - xv[k].dur };
				}
		}
		i = e;
	}
	sort_n(skews, ns, sizeof(*skews), cmp_i64);
	j->skew.p50_ns = pct_sorted(skews, ns, 0.5);
	j->skew.p90_ns = pct_sorted(skews, ns, 0.9);
	if (j->nranks >= 2 && stragglers(j, lv, nl))
		goto out;
	job_verdict(j);
	rc = 0;
out:
	free(xv);
	free(lv);
	free(skews);
	if (rc)
		ts_err_set(err, rc, "out of memory in the cross-rank analysis");
	return rc;
}

int ts_job_warnings(const struct ts_job_prof *j, struct ts_warnings *w)
{
	if (j->skew.unmatched_groups &&
	    ts_warnings_add(w, "uneven-collectives", NULL, -1, TS_NO_INT,
			    "%lld collective(s) of a step occur a different number of times on "
			    "different ranks (an extra sub-group collective of the same name?), with "
			    "no process-group sequence number to pair them: their %lld instances are "
			    "not matched across ranks (order would pair unlike calls), so the skew "
			    "and the late ranks leave them out", (long long)j->skew.unmatched_groups,
			    (long long)j->skew.unmatched_instances))
		return TS_ENOMEM;
	for (size_t i = 0; i < j->dups.n; i++) {
		const struct ts_job_dup *d = &j->dups.v[i];

		if (ts_warnings_add(w, "duplicate-window", d->copy->file, -1, TS_NO_INT,
				    "%s: rank %lld's window overlaps the one of %s in time (the same "
				    "trace twice, or a copy caught by the glob?): left out of the "
				    "cross-rank analysis and the job's wall", d->copy->file,
				    (long long)d->copy->rank, d->of->file))
			return TS_ENOMEM;
	}
	return 0;
}
