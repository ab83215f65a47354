/*
 * tele_analyze.c - what a telemetry capture says: per-GPU summaries,
 * per-step rows joined by time, and findings that carry their numbers.
 *
 * Thresholds (docs/watch.md lists them with their reasons):
 *   power-capped        SW power cap reason in >= 10 % of samples or in a
 *                       run of >= 5 samples or >= 5 s, or dmon pviol > 0, or
 *                       power >= 95 % of the limit (as often) while the SM
 *                       clock is below its maximum
 *   thermal-throttling  a thermal, HW-slowdown or HW power-brake reason or
 *                       dmon tviol in any sample
 *   clock-spread        >= 2 GPUs of one host whose mean SM clocks differ by
 *                       >= 50 MHz with no throttling evidence on that host
 *                       (informational; without
 *                       any reason value the cause is said to be unknown,
 *                       quoting the placeholder the GPU gave instead)
 *   low-utilization     a host's mean utilisation < 50 %
 *   memory-misreport    used > total, or total below the SKU's nominal
 *   memory-headroom     peak used >= 95 % of total
 *   pcie-link-degraded  current width below the maximum
 *   idle-gap            utilisation 0 for >= 1 s between busy samples
 *   straggler-gpu       one of >= 3 GPUs of one host with mean power,
 *                       utilisation or (with no throttling finding of its
 *                       own) SM clock below 85 % of that host's median
 *   counter-untrustworthy  a field N/A in more than half of its samples,
 *                       or a DCGM activity field at 0 while utilisation > 50 %
 *   stall-dips          steps whose mean utilisation is >= 20 points below
 *                       the median step
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trainscope/telemetry.h"
#include "tele_internal.h"

/* A clock-event-reasons value as its bits; 0 (none) for a value no 64-bit
 * mask has (negative, NaN, 2^64 and above), as a hostile capture may hold. */
static uint64_t reason_bits(double v)
{
	return v >= 0 && v < 0x1p64 ? (uint64_t)v : 0;
}

/* a - b, saturated at the int64 range (sample times are any int64). */
static int64_t ns_diff(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The median of n > 0 positive intervals (sorts them). */
static int64_t median_i64(int64_t *d, size_t n)
{
	ts_sort(d, n, sizeof(*d), cmp_i64);
	return n % 2 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
}

/* 1 when an interval of d ns is a sample gap against median med (0: none judged). */
static int is_gap(int64_t d, int64_t med)
{
	return med > 0 && (double)d > TS_TELE_GAP_FACTOR * (double)med;
}

/*
 * The samples of each GPU in their order: GPU g's are s[off[g]] ..
 * s[off[g + 1] - 1]. Built once in two passes over the samples, so that the
 * passes made GPU by GPU cost the samples once in all, not once per GPU (64
 * GPUs x 1 h at 1 Hz read every sample 64 times over in a dozen passes).
 */
struct by_gpu {
	size_t *off;                        /* ng + 2, the last spare */
	const struct ts_tele_sample **s;    /* the samples from `from` on */
};

/* Fill b with the samples of t from index `from` on. Returns 0 or TS_ENOMEM
 * (b then holds nothing to release). */
static int by_gpu_build(struct by_gpu *b, const struct ts_telemetry *t, size_t from)
{
	size_t ng = t->gpus.n, n = from < t->samples.n ? t->samples.n - from : 0;

	b->off = calloc(ng + 2, sizeof(*b->off));
	b->s = malloc((n ? n : 1) * sizeof(*b->s));
	if (!b->off || !b->s) {
		free(b->off);
		free(b->s);
		b->off = NULL;
		b->s = NULL;
		return TS_ENOMEM;
	}
	/* off[g + 2] counts GPU g; after the sums off[g + 1] is where it goes */
	for (size_t i = from; i < t->samples.n; i++)
		if (t->samples.v[i].gpu < ng)
			b->off[t->samples.v[i].gpu + 2]++;
	for (size_t g = 2; g < ng + 2; g++)
		b->off[g] += b->off[g - 1];
	for (size_t i = from; i < t->samples.n; i++)
		if (t->samples.v[i].gpu < ng)
			b->s[b->off[t->samples.v[i].gpu + 1]++] = &t->samples.v[i];
	return 0;
}

static void by_gpu_release(struct by_gpu *b)
{
	free(b->off);
	free(b->s);
}

/* The median interval between consecutive timed samples of GPU g in ns, or
 * 0 when it has fewer than 3 such intervals (no gap is judged) or on
 * ENOMEM. */
static int64_t median_interval(const struct by_gpu *b, size_t g)
{
	size_t timed = 0, n = 0;
	int64_t prev = TS_NO_TIME, med = 0, *d;

	for (size_t k = b->off[g]; k < b->off[g + 1]; k++)
		timed += b->s[k]->t_ns != TS_NO_TIME;
	if (timed < 4 || !(d = malloc(timed * sizeof(*d))))
		return 0;
	for (size_t k = b->off[g]; k < b->off[g + 1]; k++) {
		const struct ts_tele_sample *x = b->s[k];
		if (x->t_ns == TS_NO_TIME)
			continue;
		if (prev != TS_NO_TIME && x->t_ns > prev)
			d[n++] = ns_diff(x->t_ns, prev);
		prev = x->t_ns;
	}
	if (n >= 3)
		med = median_i64(d, n);
	free(d);
	return med;
}

const char *tele_fmt_utc(char *buf, size_t cap, int64_t ns)
{
	int64_t sec = ns / 1000000000LL, rem = ns % 1000000000LL;
	time_t tt;
	struct tm tm;

	if (rem < 0) {
		rem += 1000000000LL;
		sec--;
	}
	tt = (time_t)sec;
	if (!gmtime_r(&tt, &tm) || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900) {
		snprintf(buf, cap, "%lld ns", (long long)ns);
		return buf;
	}
	if (rem / 1000000)
		snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)(rem / 1000000));
	else
		snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf;
}

void tele_note_gaps(struct ts_telemetry *t, size_t from)
{
	size_t n = 0, nd = 0, shown = 0, more = 0, nrg = 0;
	int64_t *tt, *d, med;
	uint32_t tick = 0;
	double more_s = 0;
	char a[48], b[48];

	if (from >= t->samples.n || !(tt = malloc(2 * (t->samples.n - from) * sizeof(*tt))))
		return;
	d = tt + (t->samples.n - from);
	/* a round is timed by its earliest sample */
	for (size_t i = from; i < t->samples.n; i++) {
		const struct ts_tele_sample *x = &t->samples.v[i];
		if (x->t_ns == TS_NO_TIME)
			continue;
		if (!n || x->tick != tick)
			tt[n++] = x->t_ns;
		else if (x->t_ns < tt[n - 1])
			tt[n - 1] = x->t_ns;
		tick = x->tick;
	}
	for (size_t i = 1; i < n; i++)
		if (tt[i] > tt[i - 1])
			d[nd++] = ns_diff(tt[i], tt[i - 1]);
	if (nd < 3)
		goto out;
	med = median_i64(d, nd);
	/* d now holds the rounds that end a gap of the rounds (nrg of them) */
	for (size_t i = 1; i < n; i++) {
		int64_t gap = tt[i] > tt[i - 1] ? ns_diff(tt[i], tt[i - 1]) : 0;
		if (!is_gap(gap, med))
			continue;
		d[nrg++] = (int64_t)i;
		if (shown == 5) {
			more++;
			more_s += (double)gap / 1e9;
			continue;
		}
		shown++;
		ts_tele_note(t, "sample-gap", -1,
			     "no sample for %.1f s, from %s to %s (%.1f times the median interval "
			     "of %.3g s; an interval above %.1f times it is a gap): power is not "
			     "integrated across it and steps inside it are not measured",
			     (double)gap / 1e9, tele_fmt_utc(a, sizeof(a), tt[i - 1]),
			     tele_fmt_utc(b, sizeof(b), tt[i]), (double)gap / (double)med,
			     (double)med / 1e9, TS_TELE_GAP_FACTOR);
	}
	/* one GPU's own gaps, while the rounds go on without its rows: its
	 * energy leaves them out (per GPU), so they are said too */
	size_t ng = t->gpus.n;
	int64_t *prev = malloc((ng ? ng : 1) * sizeof(*prev)), *gmed = malloc((ng ? ng : 1) * sizeof(*gmed));
	struct by_gpu bg = { NULL, NULL };
	if (prev && gmed && !by_gpu_build(&bg, t, from)) {
		for (size_t g = 0; g < ng; g++) {
			prev[g] = TS_NO_TIME;
			gmed[g] = -1;
		}
		for (size_t i = from; i < t->samples.n; i++) {
			const struct ts_tele_sample *x = &t->samples.v[i];
			uint32_t g = x->gpu;
			if (x->t_ns == TS_NO_TIME || g >= ng)
				continue;
			int64_t p = prev[g];
			prev[g] = x->t_ns;
			if (p == TS_NO_TIME || x->t_ns <= p)
				continue;
			int64_t gap = ns_diff(x->t_ns, p);
			if (gmed[g] < 0)
				gmed[g] = median_interval(&bg, g);
			if (!is_gap(gap, gmed[g]))
				continue;
			/* inside a gap of the rounds: said above */
			int seen = 0;
			for (size_t r = 0; r < nrg && !seen; r++)
				seen = tt[d[r] - 1] < x->t_ns && tt[d[r]] > p;
			if (seen)
				continue;
			if (shown == 5) {
				more++;
				more_s += (double)gap / 1e9;
				continue;
			}
			shown++;
			const char *id = t->gpus.v[g].id;
			ts_tele_note(t, "sample-gap", -1,
				     "%s%s: no sample for %.1f s, from %s to %s, while the other GPUs "
				     "were sampled (%.1f times its median interval of %.3g s): its "
				     "power is not integrated across it and steps inside it are not "
				     "measured on it", id[0] >= '0' && id[0] <= '9' ? "GPU " : "", id,
				     (double)gap / 1e9, tele_fmt_utc(a, sizeof(a), p),
				     tele_fmt_utc(b, sizeof(b), x->t_ns), (double)gap / (double)gmed[g],
				     (double)gmed[g] / 1e9);
		}
	}
	free(prev);
	free(gmed);
	by_gpu_release(&bg);
	if (more)
		ts_tele_note(t, "sample-gap", -1, "and %zu more sample gaps, %.1f s in all", more,
			     more_s);
out:
	free(tt);
}

void ts_tele_summarize(const struct ts_telemetry *t, struct ts_tele_gpu_summary *out)
{
	for (size_t g = 0; g < t->gpus.n; g++) {
		struct ts_tele_gpu_summary *s = &out[g];
		memset(s, 0, sizeof(*s));
		s->first_ns = s->last_ns = TS_NO_TIME;
		s->energy_j = NAN;
		for (int f = 0; f < TS_TF_COUNT; f++) {
			s->f[f].mean = s->f[f].min = s->f[f].max = NAN;
			s->f[f].state = t->gpus.v[g].unsupported_why[f] ? TS_TV_UNSUPPORTED : TS_TV_ABSENT;
		}
	}
	for (size_t i = 0; i < t->samples.n; i++) {
		const struct ts_tele_sample *x = &t->samples.v[i];
		struct ts_tele_gpu_summary *s = &out[x->gpu];
		s->samples++;
		if (x->t_ns != TS_NO_TIME) {
			if (s->first_ns == TS_NO_TIME || x->t_ns < s->first_ns)
				s->first_ns = x->t_ns;
			if (s->last_ns == TS_NO_TIME || x->t_ns > s->last_ns)
				s->last_ns = x->t_ns;
		}
		for (int f = 0; f < TS_TF_COUNT; f++) {
			struct ts_tele_stat *st = &s->f[f];
			if (x->st[f] == TS_TV_VALUE) {
				if (!st->n) {
					st->min = st->max = x->v[f];
					st->mean = 0;
				}
				st->n++;
				st->mean += (x->v[f] - st->mean) / (double)st->n;
				if (x->v[f] < st->min)
					st->min = x->v[f];
				if (x->v[f] > st->max)
					st->max = x->v[f];
				st->state = TS_TV_VALUE;
				if (f == TS_TF_EVENT_REASONS)
					s->reasons_seen |= reason_bits(x->v[f]);
			} else if (x->st[f] == TS_TV_MISSING) {
				st->missing++;
				if (st->state != TS_TV_VALUE)
					st->state = TS_TV_MISSING;
			} else if (x->st[f] == TS_TV_UNSUPPORTED && st->state == TS_TV_ABSENT) {
				st->state = TS_TV_UNSUPPORTED;
			}
		}
	}
	/* energy: a counter's difference, else power integrated over time */
	struct by_gpu b;
	for (size_t g = 0; g < t->gpus.n; g++)
		out[g].energy_covered_s = NAN;
	if (by_gpu_build(&b, t, 0))
		return;
	for (size_t g = 0; g < t->gpus.n; g++) {
		struct ts_tele_gpu_summary *s = &out[g];
		double e0 = NAN, e1 = NAN, integ = 0, pprev = NAN, covered = 0;
		int64_t tprev = TS_NO_TIME, tany = TS_NO_TIME, te0 = TS_NO_TIME, te1 = TS_NO_TIME;
		int64_t med = median_interval(&b, g);
		int timed = 0;
		for (size_t k = b.off[g]; k < b.off[g + 1]; k++) {
			const struct ts_tele_sample *x = b.s[k];
			if (x->t_ns != TS_NO_TIME) {
				if (tany != TS_NO_TIME && x->t_ns > tany &&
				    is_gap(ns_diff(x->t_ns, tany), med))
					s->gap_s += (double)ns_diff(x->t_ns, tany) / 1e9;
				tany = x->t_ns;
			}
			if (x->st[TS_TF_ENERGY_J] == TS_TV_VALUE) {
				if (isnan(e0)) {
					e0 = x->v[TS_TF_ENERGY_J];
					te0 = x->t_ns;
				}
				e1 = x->v[TS_TF_ENERGY_J];
				te1 = x->t_ns;
			}
			if (x->st[TS_TF_POWER_W] == TS_TV_VALUE && x->t_ns != TS_NO_TIME) {
				int64_t d = tprev != TS_NO_TIME ? ns_diff(x->t_ns, tprev) : 0;
				/* never across a gap: the power in it is not known */
				if (d > 0 && !is_gap(d, med)) {
					integ += 0.5 * (pprev + x->v[TS_TF_POWER_W]) * (double)d / 1e9;
					covered += (double)d / 1e9;
					timed = 1;
				}
				pprev = x->v[TS_TF_POWER_W];
				tprev = x->t_ns;
			}
		}
		if (!isnan(e0) && e1 >= e0 && s->f[TS_TF_ENERGY_J].n >= 2) {
			s->energy_j = e1 - e0;
			s->energy_method = "counter";
			if (te0 != TS_NO_TIME && te1 != TS_NO_TIME)
				s->energy_covered_s = (double)ns_diff(te1, te0) / 1e9;
		} else if (timed) {
			s->energy_j = integ;
			s->energy_method = "integrated";
			s->energy_covered_s = covered;
		}
	}
	by_gpu_release(&b);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	ts_sort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *gpu_label(const struct ts_telemetry *t, size_t g, char *buf, size_t cap)
{
	return ts_tele_gpu_label(t, g, 0, buf, cap);
}

/* Every finding, uncapped (fctx_finish caps them): a pointer add returns
 * is good until the next add. */
struct fctx {
	struct ts_tele_finding *out;
	size_t n, alloc;
	int failed;
};

static struct ts_tele_finding *add(struct fctx *c, const char *id, const char *sev, int32_t gpu)
{
	if (c->failed)
		return NULL;
	if (c->n >= c->alloc) {
		size_t na = c->alloc ? 2 * c->alloc : 64;
		struct ts_tele_finding *v = realloc(c->out, na * sizeof(*v));
		if (!v) {
			c->failed = 1;
			return NULL;
		}
		c->out = v;
		c->alloc = na;
	}
	struct ts_tele_finding *f = &c->out[c->n++];
	f->id = id;
	f->severity = sev;
	f->gpu = gpu;
	f->msg[0] = 0;
	f->nsame = 0;
	return f;
}

static void dropped_count(struct ts_tele_dropped *d, const char *id)
{
	size_t k = 0;

	d->total++;
	while (k < d->nkind && strcmp(d->id[k], id))
		k++;
	if (k == d->nkind) {
		if (k == TS_TELE_DROP_KINDS)
			return;
		d->id[d->nkind++] = id;
	}
	d->count[k]++;
}

/* Write c's findings to out (at most cap): when there are more, the
 * warnings first and then the info ones, each in c's order, kept in c's
 * order; the rest counted into *dropped. Frees c. Returns the number
 * written, 0 when c ran out of memory. */
static size_t fctx_finish(struct fctx *c, struct ts_tele_finding *out, size_t cap,
			  struct ts_tele_dropped *dropped)
{
	size_t warn = 0, n = 0, room_info;

	if (dropped)
		memset(dropped, 0, sizeof(*dropped));
	if (c->failed) {
		free(c->out);
		return 0;
	}
	for (size_t i = 0; i < c->n; i++)
		warn += !strcmp(c->out[i].severity, "warning");
	room_info = warn < cap ? cap - warn : 0;
	for (size_t i = 0, w = 0, in = 0; i < c->n; i++) {
		int is_warn = !strcmp(c->out[i].severity, "warning");
		int keep = is_warn ? w++ < cap : in++ < room_info;
		if (keep)
			out[n++] = c->out[i];
		else if (dropped)
			dropped_count(dropped, c->out[i].id);
	}
	free(c->out);
	return n;
}

int ts_tele_dropped_warn(const struct ts_tele_dropped *d, size_t kept, const char *what,
			 struct ts_warnings *out)
{
	char list[400];
	size_t len = 0;

	if (!d || !d->total)
		return 0;
	list[0] = 0;
	for (size_t k = 0; k < d->nkind && len < sizeof(list); k++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%zu %s", k ? ", " : "",
					d->count[k], d->id[k]);
	return ts_warnings_add(out, "findings-dropped", NULL, -1, TS_NO_INT,
			       "%s: %zu of %zu findings are not listed (the first %zu by severity, "
			       "warnings before info, are): %s",
			       what, d->total, d->total + kept, kept, list)
		       ? TS_ENOMEM
		       : 0;
}

/* Set thr[g] (ng entries, zeroed) for each GPU g with a power-capped or
 * thermal-throttling finding in c: one pass over the findings. */
static void mark_throttled(const struct fctx *c, unsigned char *thr, size_t ng)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->out[i].gpu >= 0 && (size_t)c->out[i].gpu < ng &&
		    (!strcmp(c->out[i].id, "power-capped") || !strcmp(c->out[i].id, "thermal-throttling")))
			thr[c->out[i].gpu] = 1;
}

static size_t count_reason(const struct by_gpu *b, size_t g, uint64_t mask, size_t *n)
{
	size_t hit = 0;
	*n = 0;
	for (size_t k = b->off[g]; k < b->off[g + 1]; k++) {
		const struct ts_tele_sample *x = b->s[k];
		if (x->st[TS_TF_EVENT_REASONS] != TS_TV_VALUE)
			continue;
		(*n)++;
		if (reason_bits(x->v[TS_TF_EVENT_REASONS]) & mask)
			hit++;
	}
	return hit;
}

static void straggler_findings(const struct ts_telemetry *t, struct fctx *c)
{
	for (size_t i = 0; i < t->straggler.n; i++) {
		const struct ts_straggler_line *l = &t->straggler.v[i];
		double rtt = NAN, etpt = NAN;
		const struct ts_straggler_stat *rs = NULL, *es = NULL;
		for (int k = 0; k < l->nstat; k++) {
			const struct ts_straggler_stat *s = &l->stat[k];
			if (!(s->min > 0) || !isfinite(s->max))
				continue;
			if (!strcmp(s->metric, "Rtt")) {
				rtt = (s->max - s->min) / s->min * 100;
				rs = s;
			}
			if (!strcmp(s->metric, "Etpt")) {
				etpt = (s->max - s->min) / s->min * 100;
				es = s;
			}
		}
		if (!rs && !es)
			continue;
		struct ts_tele_finding *f;
		if ((rs && rtt > 5) || (es && etpt > 5)) {
			f = add(c, "straggler-rank", "warning", -1);
			if (f)
				snprintf(f->msg, sizeof(f->msg),
					 "line %lld: round-trip spread %.2f %% (rank %d slowest), throughput "
					 "spread %.2f %% (rank %d lowest): above the 5 %% straggler threshold",
					 (long long)l->line, rtt, rs ? rs->max_rank : -1, etpt,
					 es ? es->min_rank : -1);
		} else {
			f = add(c, "no-straggler", "info", -1);
			if (f)
				snprintf(f->msg, sizeof(f->msg),
					 "line %lld: no straggler: round-trip spread %.2f %% (%.2f-%.2f ms), "
					 "throughput spread %.2f %% (%.2f-%.2f TF), both under 5 %%",
					 (long long)l->line, rtt, rs ? rs->min : NAN, rs ? rs->max : NAN, etpt,
					 es ? es->min : NAN, es ? es->max : NAN);
		}
	}
}

/* Samples of GPU g with field f reported (returned) and, in *pos, those
 * above 0 (a violation counter that fired). */
static size_t count_positive(const struct by_gpu *b, size_t g, int f, size_t *pos)
{
	size_t n = 0;

	*pos = 0;
	for (size_t k = b->off[g]; k < b->off[g + 1]; k++) {
		const struct ts_tele_sample *x = b->s[k];
		if (x->st[f] != TS_TV_VALUE)
			continue;
		n++;
		*pos += x->v[f] > 0;
	}
	return n;
}

/* The throttling signals a sample may carry, judged one sample at a time. */
enum { SIG_CAP, SIG_PVIOL, SIG_NEAR, SIG_THERMAL, SIG_TVIOL };

/* 1 when sample x shows signal sig, 0 when it does not, -1 when it cannot say. */
static int sig_state(const struct ts_tele_sample *x, int sig)
{
	switch (sig) {
	case SIG_CAP:
	case SIG_THERMAL:
		if (x->st[TS_TF_EVENT_REASONS] != TS_TV_VALUE)
			return -1;
		return (reason_bits(x->v[TS_TF_EVENT_REASONS]) &
			(sig == SIG_CAP ? (uint64_t)TS_REASON_SW_POWER_CAP :
			 (uint64_t)(TS_REASON_SW_THERMAL | TS_REASON_HW_THERMAL |
				    TS_REASON_HW_SLOWDOWN | TS_REASON_HW_POWER_BRAKE))) != 0;
	case SIG_PVIOL:
		return x->st[TS_TF_POWER_VIOL_PCT] != TS_TV_VALUE ? -1 : x->v[TS_TF_POWER_VIOL_PCT] > 0;
	case SIG_TVIOL:
		return x->st[TS_TF_THERMAL_VIOL] != TS_TV_VALUE ? -1 : x->v[TS_TF_THERMAL_VIOL] > 0;
	default:
		if (x->st[TS_TF_POWER_W] != TS_TV_VALUE || x->st[TS_TF_POWER_LIMIT_W] != TS_TV_VALUE ||
		    !(x->v[TS_TF_POWER_LIMIT_W] > 0))
			return -1;
		return x->v[TS_TF_POWER_W] >= 0.95 * x->v[TS_TF_POWER_LIMIT_W];
	}
}

/* Runs of consecutive judged samples of one GPU showing a signal. */
struct sig_runs {
	size_t runs;               /* how many */
	size_t longest;            /* samples in the longest */
	int64_t t0, t1;            /* its first and last sample times, TS_NO_TIME untimed */
};

static void signal_runs(const struct by_gpu *b, size_t g, int sig, struct sig_runs *r)
{
	size_t cur = 0;
	int64_t start = TS_NO_TIME;

	memset(r, 0, sizeof(*r));
	r->t0 = r->t1 = TS_NO_TIME;
	for (size_t k = b->off[g]; k < b->off[g + 1]; k++) {
		const struct ts_tele_sample *x = b->s[k];
		int st;
		if ((st = sig_state(x, sig)) < 0)
			continue;
		if (!st) {
			cur = 0;
			continue;
		}
		if (!cur++) {
			r->runs++;
			start = x->t_ns;
		}
		if (cur > r->longest) {
			r->longest = cur;
			r->t0 = start;
			r->t1 = x->t_ns;
		}
	}
}

/* 1 when a run is sustained: >= 5 samples, or >= 5 s from its first to its last. */
static int sustained(const struct sig_runs *r)
{
	return r->longest >= 5 || (r->t0 != TS_NO_TIME && r->t1 != TS_NO_TIME &&
				   ns_diff(r->t1, r->t0) >= 5000000000LL);
}

/* Append to a finding's message of k bytes so far; the new length (capped). */
static int msg_more(char *msg, int k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int msg_more(char *msg, int k, const char *fmt, ...)
{
	const int cap = (int)sizeof(((struct ts_tele_finding *)0)->msg);
	va_list ap;

	if (k < 0 || k >= cap - 1)
		return k;
	va_start(ap, fmt);
	k += vsnprintf(msg + k, (size_t)(cap - k), fmt, ap);
	va_end(ap);
	return k < cap ? k : cap - 1;
}

/* "; longest run N samples from A to B (S s), of R run(s)" of a timed
 * signal (an untimed capture has no window to give). */
static int msg_window(char *msg, int k, const struct sig_runs *r)
{
	char a[48], b[48];

	if (!r->runs || r->t0 == TS_NO_TIME || r->t1 == TS_NO_TIME)
		return k;
	return msg_more(msg, k, "; longest run %zu samples from %s to %s (%.1f s), of %zu run(s)",
			r->longest, tele_fmt_utc(a, sizeof(a), r->t0), tele_fmt_utc(b, sizeof(b), r->t1),
			(double)ns_diff(r->t1, r->t0) / 1e9, r->runs);
}

/* The stall-dips finding. GPUs with the same dips (the same iterations) are
 * one group ("all 8 GPUs" when every GPU judged is in it); what the message
 * has no room for is counted ("and N more"), never dropped unsaid. */
static void stall_dips(const struct ts_telemetry *t, const struct ts_tele_step *steps,
		       size_t nsteps, struct fctx *c)
{
	const int cap = (int)sizeof(((struct ts_tele_finding *)0)->msg);
	size_t ng = t->gpus.n, nd = 0, judged = 0, distinct = 0;
	double *u = malloc(nsteps * sizeof(*u)), *med = malloc((ng ? ng : 1) * sizeof(*med));
	int64_t *dip = malloc(nsteps * sizeof(*dip)), *sorted = malloc(nsteps * sizeof(*dip));
	size_t *off = malloc((ng + 1) * sizeof(*off));
	struct ts_tele_finding *f;
	char lab[128], lab2[128];

	if (!u || !med || !dip || !sorted || !off)
		goto out;
	for (size_t g = 0; g < ng; g++) {
		size_t n = 0;

		off[g] = nd;
		med[g] = NAN;
		for (size_t i = 0; i < nsteps; i++)
			if (steps[i].gpu == g && steps[i].samples && isfinite(steps[i].util_mean_pct))
				u[n++] = steps[i].util_mean_pct;
		if (n < 3)
			continue;
		judged++;
		med[g] = median(u, n);
		for (size_t i = 0; i < nsteps && nd < nsteps; i++)
			if (steps[i].gpu == g && steps[i].samples &&
			    steps[i].util_mean_pct <= med[g] - 20)
				dip[nd++] = steps[i].iteration;
	}
	off[ng] = nd;
	if (!nd || !(f = add(c, "stall-dips", "info", -1)))
		goto out;
	memcpy(sorted, dip, nd * sizeof(*dip));
	ts_sort(sorted, nd, sizeof(*sorted), cmp_i64);
	for (size_t i = 0; i < nd; i++)
		distinct += !i || sorted[i] != sorted[i - 1];
	int k = snprintf(f->msg, sizeof(f->msg), "utilization dips >= 20 points below the GPU's "
			 "median step at %zu step(s): ", distinct);
	size_t left_gpus = 0;
	for (size_t g = 0; g < ng; g++) {
		size_t n = off[g + 1] - off[g], last = g, members = 1;
		double lo = med[g], hi = med[g];

		if (!n)
			continue;
		/* the GPUs after g with the same dips join its group */
		while (last + 1 < ng && off[last + 2] - off[last + 1] == n &&
		       !memcmp(dip + off[last + 1], dip + off[g], n * sizeof(*dip))) {
			last++;
			members++;
			lo = med[last] < lo ? med[last] : lo;
			hi = med[last] > hi ? med[last] : hi;
		}
		if (k > cap - 120) {
			left_gpus += members;
			g = last;
			continue;
		}
		if (k > 0 && f->msg[k - 1] != ' ')
			k = msg_more(f->msg, k, "; ");
		if (members == judged && judged > 1)
			k = msg_more(f->msg, k, "all %zu GPUs", members);
		else if (members > 1)
			k = msg_more(f->msg, k, "GPUs %s to %s (%zu)",
				     ts_tele_gpu_label(t, g, 1, lab, sizeof(lab)),
				     ts_tele_gpu_label(t, last, 1, lab2, sizeof(lab2)), members);
		else
			k = msg_more(f->msg, k, "%s", gpu_label(t, g, lab, sizeof(lab)));
		if (lo == hi)
			k = msg_more(f->msg, k, " (median step %.0f %%): iterations", lo);
		else
			k = msg_more(f->msg, k, " (median step %.0f-%.0f %%): iterations", lo, hi);
		for (size_t i = 0; i < n; i++) {
			if (k > cap - 70) {
				k = msg_more(f->msg, k, ", and %zu more", n - i);
				break;
			}
			k = msg_more(f->msg, k, "%s %lld", i ? "," : "", (long long)dip[off[g] + i]);
		}
		g = last;
	}
	if (left_gpus)
		msg_more(f->msg, k, "; and %zu more GPU(s) with dips", left_gpus);
out:
	free(u);
	free(med);
	free(dip);
	free(sorted);
	free(off);
}

/* Per capture, what its GPUs say of its host (host_plan). */
enum {
	HP_HOSTLESS = 1,   /* the capture records no host for any GPU */
	HP_JOINED = 2,     /* a GPU of it is a GPU of another capture by uuid */
	HP_CONFLICT = 4,   /* ... of captures of two different recorded hosts */
	HP_UUID = 8,       /* some GPU of it has a uuid */
	HP_BUS_ONLY = 16,  /* a GPU of it has another capture's PCI bus id, one
			    * of the two no uuid, and is no device of two captures */
};

static size_t hp_root(size_t *par, size_t i)
{
	while (par[i] != i) {
		par[i] = par[par[i]];
		i = par[i];
	}
	return i;
}

static void hp_join(size_t *par, size_t a, size_t b)
{
	size_t ra = hp_root(par, a), rb = hp_root(par, b);

	if (ra != rb)
		par[ra > rb ? ra : rb] = ra < rb ? ra : rb;
}

/* The device of GPU g (ts_tele_match_gpus), g's own index when out of
 * range. */
static size_t gpu_device(const struct ts_telemetry *t, size_t g)
{
	int32_t d = t->gpus.v[g].device;
	return d >= 0 && (size_t)d < t->gpus.n ? (size_t)d : g;
}

/* The capture of GPU g, clamped to 0 .. nc - 1. */
static size_t hp_capture(const struct ts_telemetry *t, size_t g, size_t nc)
{
	int32_t c = t->gpus.v[g].capture;
	return c >= 0 && (size_t)c < nc ? (size_t)c : 0;
}

/*
 * The hosts of t's GPUs. A GPU is on the host its capture records; a GPU
 * whose capture records none is on its capture's host (one tool's capture
 * is one machine's), and that host is the host of any other capture
 * holding one of its GPUs by uuid (a uuid is one GPU's, wherever it was
 * captured: the job's own `watch` with its host and an nvidia-smi capture
 * of the same node are one host); captures of no host that share a GPU are
 * one host. Where such captures hold GPUs of two recorded hosts, the
 * machine cannot be told: each GPU seen in a capture that records its host
 * is on that host, and the other GPUs of those captures are one host of
 * their own, whatever the order the captures were read in. A PCI bus id joins no
 * hosts: every machine of one board layout has the same ones. Two
 * recorded host names are never joined. Fills par (t->gpus.n entries; the
 * GPUs of one host share hp_root) and, when flags is not NULL, flags[c]
 * (t->nfiles entries) with the HP_ bits of capture c. Time linear in the
 * GPUs. Returns 0 or TS_ENOMEM.
 */
static int host_plan(const struct ts_telemetry *t, size_t *par, unsigned char *flags)
{
	size_t n = t->gpus.n, nc = t->nfiles > 0 ? (size_t)t->nfiles : 1;
	struct ts_intern hosts, buses;
	/* per device: its first GPU of a recorded host (dnamed) and its first
	 * capture of none (dcap); per host name: its first GPU (hfirst); per
	 * bus number (bus[g] its id, -1 none): its first capture (bcap), seen
	 * in another (bmulti), on a GPU without uuid (bnouuid); per capture:
	 * the root of its hostless component (cu), that component's recorded
	 * host (tgt: a GPU of it, SIZE_MAX none; conflict[r]: two), its first
	 * GPU left to it (cfirst: with no recorded host, every GPU; in a
	 * conflict, those of no device seen on a recorded host) */
	size_t *buf = malloc((4 * n + 3 * nc + 1) * sizeof(*buf));
	size_t *dnamed = buf, *dcap = buf + n, *hfirst = buf + 2 * n, *bcap = buf + 3 * n;
	size_t *cu = buf + 4 * n, *tgt = cu + nc, *cfirst = tgt + nc;
	int64_t *bus = malloc((n ? n : 1) * sizeof(*bus)), id;
	unsigned char *conflict = malloc(nc + 2 * n + 1), *bmulti = conflict + nc, *bnouuid = bmulti + n;
	int rc = TS_ENOMEM;

	ts_intern_init(&hosts);
	ts_intern_init(&buses);
	if (!buf || !bus || !conflict)
		goto out;
	for (size_t i = 0; i < n; i++) {
		par[i] = i;
		dnamed[i] = dcap[i] = hfirst[i] = SIZE_MAX;
		bmulti[i] = bnouuid[i] = 0;
	}
	for (size_t c = 0; c < nc; c++) {
		cu[c] = c;
		tgt[c] = cfirst[c] = SIZE_MAX;
		conflict[c] = 0;
		if (flags)
			flags[c] = HP_HOSTLESS;
	}
	/* the recorded hosts, and each device's first GPU of one; the PCI bus
	 * ids seen in several captures (kmulti), one without a uuid there */
	for (size_t g = 0; g < n; g++) {
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		size_t c = hp_capture(t, g, nc), d = gpu_device(t, g);
		char u[80];
		uint64_t b;
		int has_uuid = ts_tele_uuid_norm(gp->uuid, u, sizeof(u));

		if (flags && has_uuid)
			flags[c] |= HP_UUID;
		bus[g] = -1;
		if (ts_tele_bus_norm(gp->bus_id, &b)) {
			size_t seen = buses.count;
			if ((bus[g] = ts_intern(&buses, (const char *)&b, sizeof(b))) < 0)
				goto out;
			if (buses.count > seen)
				bcap[bus[g]] = c;
			bmulti[bus[g]] |= bcap[bus[g]] != c;
			bnouuid[bus[g]] |= !has_uuid;
		}
		if (!gp->host)
			continue;
		if ((id = ts_intern(&hosts, gp->host, strlen(gp->host))) < 0)
			goto out;
		if (hfirst[id] == SIZE_MAX)
			hfirst[id] = g;
		hp_join(par, hfirst[id], g);
		if (dnamed[d] == SIZE_MAX)
			dnamed[d] = g;
		if (flags)
			flags[c] &= (unsigned char)~HP_HOSTLESS;
	}
	/* captures of no host that share a device by uuid: one component */
	for (size_t g = 0; g < n; g++) {
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		size_t c = hp_capture(t, g, nc), d = gpu_device(t, g);
		if (gp->host || !gp->matched_by || strcmp(gp->matched_by, "uuid"))
			continue;
		if (flags)
			flags[c] |= HP_JOINED;
		if (dcap[d] == SIZE_MAX)
			dcap[d] = c;
		hp_join(cu, dcap[d], c);
	}
	/* each component's recorded host, or two */
	for (size_t g = 0; g < n; g++) {
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		size_t d = gpu_device(t, g), r, h;
		if (gp->host || dnamed[d] == SIZE_MAX)
			continue;
		r = hp_root(cu, hp_capture(t, g, nc));
		h = hp_root(par, dnamed[d]);
		if (tgt[r] == SIZE_MAX)
			tgt[r] = h;
		else if (tgt[r] != h)
			conflict[r] = 1;
	}
	for (size_t g = 0; g < n; g++) {
		const struct ts_tele_gpu *gp = &t->gpus.v[g];
		size_t c = hp_capture(t, g, nc), r = hp_root(cu, c), d = gpu_device(t, g);
		if (gp->host)
			continue;
		if (flags && conflict[r])
			flags[c] |= HP_CONFLICT;
		if (flags && !gp->matched_by && bus[g] >= 0 && bmulti[bus[g]] && bnouuid[bus[g]])
			flags[c] |= HP_BUS_ONLY;
		if (!conflict[r] && tgt[r] != SIZE_MAX)
			hp_join(par, tgt[r], g);
		else if (conflict[r] && dnamed[d] != SIZE_MAX)
			hp_join(par, dnamed[d], g);
		else {
			if (cfirst[r] == SIZE_MAX)
				cfirst[r] = g;
			hp_join(par, cfirst[r], g);
		}
	}
	rc = 0;
out:
	ts_intern_release(&hosts);
	ts_intern_release(&buses);
	free(buf);
	free(bus);
	free(conflict);
	return rc;
}

/* Each GPU's host (host_plan) as grp[g], an index 0 .. hosts - 1 in order
 * of first appearance, with rep[i] a GPU of host i that records its name
 * when one does (else its first); returns the number of hosts, or
 * SIZE_MAX on ENOMEM. */
static size_t host_groups(const struct ts_telemetry *t, size_t *grp, size_t *rep)
{
	size_t n = t->gpus.n, nh = 0;
	size_t *par = malloc((n ? n : 1) * sizeof(*par));

	if (!par || host_plan(t, par, NULL)) {
		free(par);
		return SIZE_MAX;
	}
	/* grp[root] is the host's index once the root is met (roots come first) */
	for (size_t g = 0; g < n; g++) {
		size_t r = hp_root(par, g);
		if (r == g) {
			rep[nh] = g;
			grp[g] = nh++;
		} else
			grp[g] = grp[r];
		if (t->gpus.v[g].host && !t->gpus.v[rep[grp[g]]].host)
			rep[grp[g]] = g;
	}
	free(par);
	return nh;
}

/* The GPUs of each of the nh hosts of grp (host_groups) as lists: host h's
 * are mem[off[h]] .. mem[off[h + 1] - 1], in ascending order (off has nh
 * + 1 entries, mem ng). So a pass over each host's GPUs costs the GPUs,
 * not GPUs x hosts. */
static void host_members(const size_t *grp, size_t ng, size_t nh, size_t *off, size_t *mem)
{
	for (size_t h = 0; h <= nh; h++)
		off[h] = 0;
	for (size_t g = 0; g < ng; g++)
		off[grp[g] + 1]++;
	for (size_t h = 0; h < nh; h++)
		off[h + 1] += off[h];
	for (size_t g = 0; g < ng; g++)
		mem[off[grp[g]]++] = g;
	for (size_t h = nh; h > 0; h--)
		off[h] = off[h - 1];
	off[0] = 0;
}

int ts_tele_host_warn(const struct ts_telemetry *t, struct ts_warnings *out)
{
	size_t n = t->gpus.n, nc = t->nfiles > 0 ? (size_t)t->nfiles : 1;
	size_t *par = malloc((n ? n : 1) * sizeof(*par));
	unsigned char *flags = malloc(nc);
	/* each capture's file, as its first GPU names it (NULL: no GPU) */
	const char **cfile = calloc(nc, sizeof(*cfile));
	int rc = 0;

	if (!ts_tele_multi_capture(t))
		goto out;
	if (!par || !flags || !cfile || host_plan(t, par, flags)) {
		rc = TS_ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < n; g++) {
		size_t c = (size_t)t->gpus.v[g].capture;
		if (c < nc && !cfile[c])
			cfile[c] = t->gpus.v[g].file ? t->gpus.v[g].file : "?";
	}
	for (size_t c = 0; c < nc && !rc; c++) {
		unsigned f = flags[c];
		const char *file = cfile[c];
		if (!(f & HP_HOSTLESS) || ((f & HP_JOINED) && !(f & HP_CONFLICT)))
			continue;
		if (!file)
			continue;
		if (f & HP_CONFLICT)
			rc = ts_warnings_add(out, "host-unknown", file, -1, TS_NO_INT,
					     "%s: the capture records no host name, and its GPUs are "
					     "GPUs (by uuid) of captures that record different hosts: its "
					     "host cannot be told; each GPU seen in a capture that records "
					     "its host is judged with that host, its other GPUs only with "
					     "each other", file);
		else
			rc = ts_warnings_add(out, "host-unknown", file, -1, TS_NO_INT,
					     "%s: the capture records no host name, and %s: whether it ran "
					     "on the machine of another capture cannot be told, so its GPUs "
					     "are compared only with each other (a host of its own)", file,
					     f & HP_BUS_ONLY ? "its GPUs match other captures' GPUs only by PCI "
					     "bus id, which every machine of one board layout repeats, so "
					     "they are not taken for the same GPUs" :
					     f & HP_UUID ? "no uuid of its GPUs is in another capture" :
					     "its GPUs have no uuid");
		rc = rc ? TS_ENOMEM : 0;
	}
out:
	free(par);
	free(flags);
	free(cfile);
	return rc;
}

/* " on host NAME" (" on capture FILE" when the capture names no host) of
 * GPU g, into buf. */
static void host_words(const struct ts_telemetry *t, size_t g, char *buf, size_t cap)
{
	const struct ts_tele_gpu *gp = &t->gpus.v[g];

	snprintf(buf, cap, " on %s %s", gp->host ? "host" : "capture",
		 gp->host ? gp->host : gp->file ? gp->file : "?");
}

/* 1 when GPU g's device is met for the first time in this pass (seen:
 * by device, the pass that last met it), marking it met. */
static int device_new(const struct ts_telemetry *t, size_t g, size_t *seen, size_t pass)
{
	size_t d = gpu_device(t, g);

	if (seen[d] == pass)
		return 0;
	seen[d] = pass;
	return 1;
}

/* ", from A to B", the first and last sample of summary s (", untimed"
 * without times), at k of msg; returns the new length (msg_more). */
static int msg_span(char *msg, int k, const struct ts_tele_gpu_summary *s)
{
	char a[40], b[40];

	if (s->first_ns == TS_NO_TIME)
		return msg_more(msg, k, ", untimed");
	return msg_more(msg, k, ", from %s to %s", tele_fmt_utc(a, sizeof(a), s->first_ns),
			tele_fmt_utc(b, sizeof(b), s->last_ns));
}

/* The words of a straggler-gpu finding f on field fld whose device is a
 * straggler in several captures (f->same): f's own GPU's span, then each
 * other GPU with its mean and its share of its host's median (med, grp)
 * and span while they fit, those that do not counted, and the captures
 * holding the device where it is none (ndev: the device's GPUs). */
static void same_gpu_words(const struct ts_telemetry *t, const struct ts_tele_gpu_summary *sum,
			   int fld, const double *med, const size_t *grp, size_t ndev,
			   struct ts_tele_finding *f)
{
	/* room kept for the counts after the list */
	const int cap = (int)sizeof(f->msg) - 100;
	size_t shown = f->nsame < TS_TELE_SAME_MAX ? f->nsame : TS_TELE_SAME_MAX, i;
	int k = msg_span(f->msg, (int)strlen(f->msg), &sum[f->gpu]);
	char lab[128], one[sizeof(f->msg)];

	for (i = 0; i < shown; i++) {
		size_t g = (size_t)f->same[i];
		double x = sum[g].f[fld].mean, m = med[grp[g]];
		int n = snprintf(one, sizeof(one), "; the same GPU as %s: %.1f %s (%.0f %%)",
				 gpu_label(t, g, lab, sizeof(lab)), x, ts_tf_unit(fld), 100 * x / m);
		n = msg_span(one, n, &sum[g]);
		if (k + n >= cap)
			break;
		k = msg_more(f->msg, k, "%s", one);
	}
	if (f->nsame > i)
		k = msg_more(f->msg, k, "; and in %zu more captures", f->nsame - i);
	if (ndev > 1 + f->nsame)
		msg_more(f->msg, k, "; not found in the %zu other capture(s) holding it",
			 ndev - 1 - f->nsame);
}

/* Per-GPU findings (c's first n) that hold for one device in several
 * captures made one, as straggler-gpu is: the first keeps its place and
 * words with its span, then each other GPU's words (its message after
 * its label, up to its first "; ") and span while they fit, the rest counted, and the captures
 * holding the device where it is none. Findings of one id on one GPU
 * (counter-untrustworthy's kinds) are matched by their rank on that GPU.
 * Runs after mark_throttled has read every GPU's findings. Linear in the
 * findings; nothing merged when out of memory. */
#define MERGE_RANKS 4
static void merge_devices(const struct ts_telemetry *t, const struct ts_tele_gpu_summary *sum,
			  struct fctx *c, size_t n)
{
	size_t ng = t->gpus.n, keep = 0;
	/* by (device, rank): the index + 1 of its finding of the id met
	 * first; dcnt: GPUs per device; rank: each finding's rank on its GPU;
	 * link, tail: the findings merged into one, in order (SIZE_MAX end) */
	size_t *first = calloc(MERGE_RANKS * (ng ? ng : 1), sizeof(*first));
	size_t *dcnt = calloc(ng ? ng : 1, sizeof(*dcnt)), *rank = malloc(3 * (n ? n : 1) * sizeof(*rank));
	size_t *link = rank ? rank + n : NULL, *tail = rank ? rank + 2 * n : NULL;
	unsigned char *gone = calloc(n ? n : 1, 1);
	const char *ids[TS_TELE_DROP_KINDS];
	size_t nids = 0;
	char lab[128], one[sizeof(c->out[0].msg)];

	if (!first || !dcnt || !rank || !gone || !ts_tele_multi_capture(t))
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		link[i] = SIZE_MAX;
		tail[i] = i;
		while (j < nids && strcmp(ids[j], c->out[i].id))
			j++;
		if (j == nids && nids < TS_TELE_DROP_KINDS)
			ids[nids++] = c->out[i].id;
	}
	for (size_t g = 0; g < ng; g++)
		dcnt[gpu_device(t, g)]++;
	for (size_t i = 0; i < n; i++)
		rank[i] = i && c->out[i - 1].gpu == c->out[i].gpu &&
				  !strcmp(c->out[i - 1].id, c->out[i].id)
			  ? rank[i - 1] + 1
			  : 0;
	/* one pass per id: the ids are few */
	for (size_t x = 0; x < nids; x++) {
		const char *id = ids[x];

		for (size_t k = 0; k < n; k++) {
			struct ts_tele_finding *f = &c->out[k];
			if (strcmp(f->id, id) || f->gpu < 0 || rank[k] >= MERGE_RANKS)
				continue;
			size_t *slot = &first[MERGE_RANKS * gpu_device(t, (size_t)f->gpu) + rank[k]];
			if (!*slot) {
				*slot = k + 1;
				continue;
			}
			struct ts_tele_finding *p = &c->out[*slot - 1];
			if (p->nsame < TS_TELE_SAME_MAX)
				p->same[p->nsame] = f->gpu;
			p->nsame++;
			gone[k] = 1;
			link[tail[*slot - 1]] = k;
			tail[*slot - 1] = k;
		}
		for (size_t k = 0; k < n; k++)
			if (!strcmp(c->out[k].id, id) && c->out[k].gpu >= 0 && rank[k] < MERGE_RANKS)
				first[MERGE_RANKS * gpu_device(t, (size_t)c->out[k].gpu) + rank[k]] = 0;
	}
	/* the words, from the merged findings' own messages */
	for (size_t i = 0; i < n; i++) {
		struct ts_tele_finding *f = &c->out[i];
		if (gone[i] || !f->nsame)
			continue;
		const int cap = (int)sizeof(f->msg) - 100;
		size_t shown = f->nsame < TS_TELE_SAME_MAX ? f->nsame : TS_TELE_SAME_MAX, s = 0;
		int k = msg_span(f->msg, (int)strlen(f->msg), &sum[f->gpu]);
		for (size_t e = link[i]; s < shown && e != SIZE_MAX; s++, e = link[e]) {
			size_t g = (size_t)f->same[s];
			const char *words = c->out[e].msg;
			size_t ll = strlen(gpu_label(t, g, lab, sizeof(lab)));
			if (!strncmp(words, lab, ll) && !strncmp(words + ll, ": ", 2))
				words += ll + 2;
			const char *end = strstr(words, "; ");
			int wn = end ? (int)(end - words) : (int)strlen(words);
			int m = snprintf(one, sizeof(one), "; the same GPU as %s: %.*s", lab, wn, words);
			m = msg_span(one, m < (int)sizeof(one) ? m : (int)sizeof(one) - 1, &sum[g]);
			if (k + m >= cap)
				break;
			k = msg_more(f->msg, k, "%s", one);
		}
		if (f->nsame > s)
			k = msg_more(f->msg, k, "; and in %zu more captures", f->nsame - s);
		size_t nd = dcnt[gpu_device(t, (size_t)f->gpu)];
		if (nd > 1 + f->nsame)
			msg_more(f->msg, k, "; not found in the %zu other capture(s) holding it",
				 nd - 1 - f->nsame);
	}
	for (size_t i = 0; i < c->n; i++)
		if (i >= n || !gone[i])
			c->out[keep++] = c->out[i];
	c->n = keep;
out:
	free(first);
	free(dcnt);
	free(rank);
	free(gone);
}

size_t ts_tele_findings(const struct ts_telemetry *t, const struct ts_tele_gpu_summary *sum,
			const struct ts_tele_step *steps, size_t nsteps,
			const double *expected_total_mib, struct ts_tele_finding *out, size_t cap,
			struct ts_tele_dropped *dropped)
{
	struct fctx c = { NULL, 0, 0, 0 };
	size_t ng = t->gpus.n;
	char lab[128];
	struct ts_tele_finding *f;
	struct by_gpu b;

	if (dropped)
		memset(dropped, 0, sizeof(*dropped));
	if (by_gpu_build(&b, t, 0))
		return 0;
	for (size_t g = 0; g < ng; g++) {
		const struct ts_tele_gpu_summary *s = &sum[g];
		size_t nr, capped = count_reason(&b, g, TS_REASON_SW_POWER_CAP, &nr);
		/* HW power brake (an external power-brake assertion, e.g. by the
		 * PSU or the chassis) is a hardware slowdown NVML reports by its
		 * own bit: the clocks are held down just the same */
		size_t thermal = count_reason(&b, g, TS_REASON_SW_THERMAL | TS_REASON_HW_THERMAL |
						     TS_REASON_HW_SLOWDOWN | TS_REASON_HW_POWER_BRAKE, &nr);
		const struct ts_tele_stat *pw = &s->f[TS_TF_POWER_W], *pl = &s->f[TS_TF_POWER_LIMIT_W];
		const struct ts_tele_stat *clk = &s->f[TS_TF_SM_CLOCK_MHZ];
		const struct ts_tele_stat *clkmax = &s->f[TS_TF_SM_CLOCK_MAX_MHZ];
		size_t near = 0, nearn = 0;
		for (size_t k = b.off[g]; k < b.off[g + 1]; k++) {
			const struct ts_tele_sample *x = b.s[k];
			if (x->st[TS_TF_POWER_W] != TS_TV_VALUE ||
			    x->st[TS_TF_POWER_LIMIT_W] != TS_TV_VALUE || !(x->v[TS_TF_POWER_LIMIT_W] > 0))
				continue;
			nearn++;
			if (x->v[TS_TF_POWER_W] >= 0.95 * x->v[TS_TF_POWER_LIMIT_W])
				near++;
		}
		gpu_label(t, g, lab, sizeof(lab));
		int below_max = clk->n && clkmax->n && clk->mean < clkmax->max - 1;
		struct sig_runs rcap, rviol, rnear, rtherm, rtviol;
		signal_runs(&b, g, SIG_CAP, &rcap);
		signal_runs(&b, g, SIG_PVIOL, &rviol);
		signal_runs(&b, g, SIG_NEAR, &rnear);
		signal_runs(&b, g, SIG_THERMAL, &rtherm);
		signal_runs(&b, g, SIG_TVIOL, &rtviol);
		/* a share of the samples, or a sustained run however short the
		 * capture around it is */
		int cap_fired = capped && (capped * 10 >= nr || sustained(&rcap));
		int near_fired = near && below_max && (near * 10 >= nearn || sustained(&rnear));
		if (cap_fired ||
		    (s->f[TS_TF_POWER_VIOL_PCT].n && s->f[TS_TF_POWER_VIOL_PCT].max > 0) ||
		    near_fired) {
			if ((f = add(&c, "power-capped", "warning", (int32_t)g))) {
				size_t viol, violn = count_positive(&b, g, TS_TF_POWER_VIOL_PCT, &viol);
				int k;

				if (cap_fired) {
					k = snprintf(f->msg, sizeof(f->msg), "%s: power cap active in %zu of "
						     "%zu samples", lab, capped, nr);
					k = msg_window(f->msg, k, &rcap);
				} else if (viol) {
					k = snprintf(f->msg, sizeof(f->msg), "%s: power violation (pviol) "
						     "in %zu of %zu samples, up to %.0f %%", lab, viol,
						     violn, s->f[TS_TF_POWER_VIOL_PCT].max);
					k = msg_window(f->msg, k, &rviol);
				} else {
					k = snprintf(f->msg, sizeof(f->msg), "%s: power at 95 %% or more "
						     "of its limit in %zu of %zu samples", lab, near, nearn);
					k = msg_window(f->msg, k, &rnear);
				}
				k = msg_more(f->msg, k, "; power mean %.1f W, max %.1f W", pw->mean, pw->max);
				if (pl->n)
					k = msg_more(f->msg, k, " of a %.1f W limit", pl->max);
				if (clk->n)
					k = msg_more(f->msg, k, "; SM clock mean %.0f MHz", clk->mean);
				if (clk->n && clkmax->n)
					k = msg_more(f->msg, k, " of max %.0f MHz", clkmax->max);
			}
		}
		if (thermal || (s->f[TS_TF_THERMAL_VIOL].n && s->f[TS_TF_THERMAL_VIOL].max > 0)) {
			if ((f = add(&c, "thermal-throttling", "warning", (int32_t)g))) {
				size_t viol, violn = count_positive(&b, g, TS_TF_THERMAL_VIOL, &viol);
				int k;

				if (thermal) {
					k = snprintf(f->msg, sizeof(f->msg), "%s: thermal or hardware "
						     "slowdown in %zu of %zu samples", lab, thermal, nr);
					k = msg_window(f->msg, k, &rtherm);
				} else {
					k = snprintf(f->msg, sizeof(f->msg), "%s: thermal violation (tviol) "
						     "in %zu of %zu samples", lab, viol, violn);
					k = msg_window(f->msg, k, &rtviol);
				}
				if (s->f[TS_TF_TEMP_C].n)
					msg_more(f->msg, k, "; temperature max %.0f C", s->f[TS_TF_TEMP_C].max);
			}
		}
		/* errors the device reports: never judged by share, one is enough */
		static const struct { int f; const char *id, *what; } errs[] = {
			{ TS_TF_ECC_DBE, "ecc-uncorrectable", "uncorrectable (double-bit) ECC errors" },
			{ TS_TF_XID, "xid-error", "Xid errors" },
		};
		for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
			size_t pos, all = count_positive(&b, g, errs[e].f, &pos);
			int64_t first = TS_NO_TIME;
			double last = NAN;
			char when[48];
			if (!pos || !(f = add(&c, errs[e].id, "warning", (int32_t)g)))
				continue;
			for (size_t k = b.off[g]; k < b.off[g + 1]; k++) {
				const struct ts_tele_sample *x = b.s[k];
				if (x->st[errs[e].f] != TS_TV_VALUE || !(x->v[errs[e].f] > 0))
					continue;
				if (first == TS_NO_TIME)
					first = x->t_ns;
				last = x->v[errs[e].f];
			}
			int k = snprintf(f->msg, sizeof(f->msg), "%s: %s in %zu of %zu samples (max %.0f, "
					 "last %.0f)", lab, errs[e].what, pos, all, s->f[errs[e].f].max, last);
			if (first != TS_NO_TIME)
				msg_more(f->msg, k, ", first at %s", tele_fmt_utc(when, sizeof(when), first));
		}
		const struct ts_tele_stat *mu = &s->f[TS_TF_MEM_USED_MIB], *mt = &s->f[TS_TF_MEM_TOTAL_MIB];
		double expect = expected_total_mib ? expected_total_mib[g] : 0;
		if (mu->n && mt->n && (mu->max > mt->max || (expect > 0 && mt->max < 0.97 * expect))) {
			if ((f = add(&c, "memory-misreport", "warning", (int32_t)g))) {
				int moore = t->gpus.v[g].name && strstr(t->gpus.v[g].name, "MTT");
				snprintf(f->msg, sizeof(f->msg),
					 "%s: memory misreported: used %.0f MiB %s total %.0f MiB%s%.0f%s%s",
					 lab, mu->max, mu->max > mt->max ? ">" : "<=", mt->max,
					 expect > 0 && mt->max < 0.97 * expect ? ", and total is below the " : "",
					 expect > 0 && mt->max < 0.97 * expect ? expect : 0.0,
					 expect > 0 && mt->max < 0.97 * expect ? " MiB the SKU has" : "",
					 moore ? " (on Moore Threads GPUs the signature of IOMMU off: see "
						 "`trainscope preflight`, musa-iommu-off)" : "");
			}
		} else if (mu->n && mt->n && mt->max > 0 && mu->max >= 0.95 * mt->max) {
			if ((f = add(&c, "memory-headroom", "info", (int32_t)g)))
				snprintf(f->msg, sizeof(f->msg),
					 "%s: memory peak %.0f of %.0f MiB (%.1f %%): little headroom",
					 lab, mu->max, mt->max, 100 * mu->max / mt->max);
		}
		const struct ts_tele_stat *w = &s->f[TS_TF_PCIE_WIDTH], *wm = &s->f[TS_TF_PCIE_WIDTH_MAX];
		if (w->n && wm->n && w->min < wm->max) {
			if ((f = add(&c, "pcie-link-degraded", "warning", (int32_t)g)))
				snprintf(f->msg, sizeof(f->msg),
					 "%s: PCIe link runs x%.0f of x%.0f lanes", lab, w->min, wm->max);
		}
		/* idle gaps: utilisation 0 for >= 1 s between busy samples */
		int64_t gap_start = TS_NO_TIME, longest = 0, seen_busy = 0;
		for (size_t k = b.off[g]; k < b.off[g + 1]; k++) {
			const struct ts_tele_sample *x = b.s[k];
			if (x->st[TS_TF_UTIL_PCT] != TS_TV_VALUE || x->t_ns == TS_NO_TIME)
				continue;
			if (x->v[TS_TF_UTIL_PCT] <= 0) {
				if (gap_start == TS_NO_TIME && seen_busy)
					gap_start = x->t_ns;
			} else {
				if (gap_start != TS_NO_TIME && ns_diff(x->t_ns, gap_start) > longest)
					longest = ns_diff(x->t_ns, gap_start);
				gap_start = TS_NO_TIME;
				seen_busy = 1;
			}
		}
		if (longest >= 1000000000LL && (f = add(&c, "idle-gap", "info", (int32_t)g)))
			snprintf(f->msg, sizeof(f->msg),
				 "%s: utilization 0 %% for %.1f s between busy samples", lab,
				 (double)longest / 1e9);
		/* untrustworthy counters: N/A in most samples (needs >= 3 samples) */
		char list[200] = "";
		size_t nbad = 0, len = 0;
		for (int k = 0; k < TS_TF_COUNT; k++) {
			const struct ts_tele_stat *st = &s->f[k];
			size_t all = st->n + st->missing;
			if (all >= 3 && st->missing * 2 > all) {
				nbad++;
				if (len < sizeof(list) - 40)
					len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %zu/%zu",
								 len ? ", " : "", ts_tf_name(k), st->missing,
								 all);
			}
		}
		if (nbad && (f = add(&c, "counter-untrustworthy", "warning", (int32_t)g)))
			snprintf(f->msg, sizeof(f->msg),
				 "%s: %zu field(s) N/A in most samples (%s): not to be trusted as a "
				 "series", lab, nbad, list);
		if (s->f[TS_TF_UTIL_PCT].n && s->f[TS_TF_UTIL_PCT].mean > 50) {
			static const int act[] = { TS_TF_GR_ACTIVE, TS_TF_SM_ACTIVE, TS_TF_TENSOR_ACTIVE };
			for (size_t k = 0; k < sizeof(act) / sizeof(act[0]); k++)
				if (s->f[act[k]].n >= 2 && s->f[act[k]].max == 0 &&
				    (f = add(&c, "counter-untrustworthy", "warning", (int32_t)g)))
					snprintf(f->msg, sizeof(f->msg),
						 "%s: %s stays at 0 while utilization averages %.0f %%: the "
						 "profiling counter is stuck", lab, ts_tf_name(act[k]),
						 s->f[TS_TF_UTIL_PCT].mean);
		}
	}
	by_gpu_release(&b);
	size_t nper = c.n; /* the per-GPU findings, merged by device at the end */
	/* across the GPUs of the job */
	/* tmp, then the samples of each entry (wt); grp, rep and cnt, then
	 * by device its tmp entry (slot) and the host pass that last met it
	 * (seen, 0 never), each host's GPUs (off, mem: host_members); med of
	 * the straggler judgement; thr: the GPUs with a power-capped or
	 * thermal-throttling finding (mark_throttled); fi and dcnt by device:
	 * its straggler finding (see there) and its GPUs */
	double *tmp = malloc(2 * (ng ? ng : 1) * sizeof(*tmp)), *wt = tmp ? tmp + ng : NULL;
	size_t *grp = malloc((9 * ng + 1) * sizeof(*grp));
	size_t *slot = grp ? grp + 3 * ng : NULL, *seen = grp ? grp + 4 * ng : NULL, pass = 0;
	size_t *mem = grp ? grp + 5 * ng : NULL, *off = grp ? grp + 6 * ng : NULL;
	size_t *fi = grp ? grp + 7 * ng + 1 : NULL, *dcnt = grp ? grp + 8 * ng + 1 : NULL;
	double *med = malloc((ng ? ng : 1) * sizeof(*med));
	unsigned char *thr = calloc(ng ? ng : 1, 1);
	if (tmp && med && grp && thr) {
		for (size_t g = 0; g < ng; g++)
			seen[g] = fi[g] = dcnt[g] = 0;
		for (size_t g = 0; g < ng; g++)
			dcnt[gpu_device(t, g)]++;
		mark_throttled(&c, thr, ng);
		/* every comparison across GPUs is within one host (host_groups):
		 * hosts of another SKU, power limit or load are no spread */
		size_t nh = host_groups(t, grp, grp + ng), n = 0;
		size_t *cnt = grp + 2 * ng;

		if (nh == SIZE_MAX)
			nh = 0;
		host_members(grp, ng, nh, off, mem);

		for (size_t h = 0; h < nh; h++) {
			double lo = INFINITY, hi = -INFINITY;
			int has_reasons = 0, host_throttle = 0;
			size_t nph = 0, ph = 0;

			n = 0;
			pass++;
			for (size_t i = off[h]; i < off[h + 1]; i++) {
				size_t g = mem[i];
				host_throttle |= thr[g];
				if (sum[g].f[TS_TF_SM_CLOCK_MHZ].n) {
					double m = sum[g].f[TS_TF_SM_CLOCK_MHZ].mean;
					lo = m < lo ? m : lo;
					hi = m > hi ? m : hi;
					n += device_new(t, g, seen, pass);
				}
			}
			/* no reason or violation value at all: the cause cannot be
			 * told, because the capture has no such field or because
			 * the GPU or its driver gave placeholders in it; nph GPUs
			 * of the spread have only placeholders (the first, ph: its
			 * cell is quoted), and with reasons on other GPUs theirs is
			 * still unknown */
			for (size_t i = off[h]; i < off[h + 1]; i++) {
				size_t g = mem[i];
				int own = sum[g].f[TS_TF_EVENT_REASONS].n ||
					  sum[g].f[TS_TF_POWER_VIOL_PCT].n || sum[g].f[TS_TF_THERMAL_VIOL].n;
				has_reasons |= own;
				if (!own && sum[g].f[TS_TF_SM_CLOCK_MHZ].n && t->gpus.v[g].reasons_cell &&
				    !nph++)
					ph = g;
			}
			char phq[200] = "", where[160] = "";
			if (nph)
				snprintf(phq, sizeof(phq), "%s%s%s, on %zu of %zu GPUs",
					 t->gpus.v[ph].name ? t->gpus.v[ph].name : "",
					 t->gpus.v[ph].name ? ": " : "", t->gpus.v[ph].reasons_cell, nph, n);
			if (nh > 1)
				host_words(t, grp[ng + h], where, sizeof(where));
			if (!(n >= 2 && hi - lo >= 50 && !host_throttle) ||
			    !(f = add(&c, "clock-spread", "info", -1)))
				continue;
			if (has_reasons && nph)
				msg_more(f->msg, 0,
					 "SM clocks differ by %.0f MHz across %zu GPUs%s (%.0f-%.0f MHz) with no "
					 "power or thermal violation reported by the GPUs that give reasons; "
					 "the others do not support the throttle-reason fields (%s): their "
					 "cause cannot be told", hi - lo, n, where, lo, hi, phq);
			else if (has_reasons)
				snprintf(f->msg, sizeof(f->msg),
					 "SM clocks differ by %.0f MHz across %zu GPUs%s (%.0f-%.0f MHz) with no "
					 "power or thermal violation reported: informational, not throttling",
					 hi - lo, n, where, lo, hi);
			else if (nph)
				msg_more(f->msg, 0,
					 "SM clocks differ by %.0f MHz across %zu GPUs%s (%.0f-%.0f MHz); the "
					 "throttle-reason fields are not supported by the GPU or its driver "
					 "(%s): the cause cannot be told", hi - lo, n, where, lo, hi, phq);
			else
				snprintf(f->msg, sizeof(f->msg),
					 "SM clocks differ by %.0f MHz across %zu GPUs%s (%.0f-%.0f MHz); the "
					 "capture has no throttle-reason fields (clock-event reasons, pviol, "
					 "tviol): the cause cannot be told", hi - lo, n, where, lo, hi);
		}
		/* a host's GPUs mostly waiting: each host's mean, so a busy host
		 * hides no idle one and an idle one is named */
		for (size_t h = 0; h < nh; h++) {
			double usum = 0, ulo = INFINITY, uhi = -INFINITY;
			size_t un = 0;
			char where[160] = "";

			n = 0;
			pass++;
			for (size_t i = off[h]; i < off[h + 1]; i++) {
				size_t g = mem[i];
				const struct ts_tele_stat *u = &sum[g].f[TS_TF_UTIL_PCT];
				if (!u->n)
					continue;
				usum += u->mean * (double)u->n;
				un += u->n;
				ulo = u->mean < ulo ? u->mean : ulo;
				uhi = u->mean > uhi ? u->mean : uhi;
				n += device_new(t, g, seen, pass);
			}
			if (nh > 1)
				host_words(t, grp[ng + h], where, sizeof(where));
			if (un && usum / (double)un < 50 && (f = add(&c, "low-utilization", "warning", -1)))
				snprintf(f->msg, sizeof(f->msg),
					 "mean GPU utilization %.1f %% (per GPU %.0f-%.0f %%, %zu GPUs%s): the "
					 "GPUs are mostly waiting", usum / (double)un, ulo, uhi, n, where);
		}
		/* a GPU consistently below the other GPUs of its host (med, cnt:
		 * each host's median and count of devices compared, a device seen
		 * in several captures once, at the mean of its samples); on the
		 * SM clock only a GPU with no throttling finding of its own (one
		 * with it is explained, and said, already) */
		static const int sf[] = { TS_TF_POWER_W, TS_TF_UTIL_PCT, TS_TF_SM_CLOCK_MHZ };
		for (size_t k = 0; k < sizeof(sf) / sizeof(sf[0]) && nh; k++) {
			for (size_t h = 0; h < nh; h++) {
				/* "consistently": at least 3 samples of every GPU compared */
				n = 0;
				pass++;
				for (size_t i = off[h]; i < off[h + 1]; i++) {
					size_t g = mem[i], d = gpu_device(t, g);
					const struct ts_tele_stat *x = &sum[g].f[sf[k]];
					if (x->n < 3)
						continue;
					if (device_new(t, g, seen, pass)) {
						slot[d] = n++;
						tmp[slot[d]] = wt[slot[d]] = 0;
					}
					tmp[slot[d]] += x->mean * (double)x->n;
					wt[slot[d]] += (double)x->n;
				}
				for (size_t i = 0; i < n; i++)
					tmp[i] /= wt[i];
				cnt[h] = n;
				med[h] = n >= 3 ? median(tmp, n) : NAN;
			}
			/* one finding per device: a device straggling in several
			 * captures is one finding naming them (fi: by device, its
			 * finding's index in c + 1 for this field, 0 none) */
			size_t first = c.n;
			for (size_t g = 0; g < ng; g++) {
				const struct ts_tele_stat *x = &sum[g].f[sf[k]];
				double m = med[grp[g]];
				size_t d = gpu_device(t, g);
				if (sf[k] == TS_TF_SM_CLOCK_MHZ && thr[g])
					continue;
				if (!(x->n >= 3 && m > 0 && x->mean < 0.85 * m && x->mean < m - 5))
					continue;
				if (fi[d]) {
					struct ts_tele_finding *p = &c.out[fi[d] - 1];
					if (p->nsame < TS_TELE_SAME_MAX)
						p->same[p->nsame] = (int32_t)g;
					p->nsame++;
					continue;
				}
				if (!(f = add(&c, "straggler-gpu", "warning", (int32_t)g)))
					continue;
				fi[d] = c.n;
				int len = snprintf(f->msg, sizeof(f->msg),
						   "%s: mean %s %.1f %s is %.0f %% of the GPUs' median %.1f",
						   gpu_label(t, g, lab, sizeof(lab)), ts_tf_name(sf[k]),
						   x->mean, ts_tf_unit(sf[k]), 100 * x->mean / m, m);
				if (nh > 1 && len > 0 && (size_t)len < sizeof(f->msg)) {
					char where[160];

					host_words(t, grp[ng + grp[g]], where, sizeof(where));
					snprintf(f->msg + len, sizeof(f->msg) - (size_t)len,
						 " on its host (%s, %zu GPUs)", where + 4, cnt[grp[g]]);
				}
			}
			for (size_t i = first; i < c.n; i++) {
				size_t d = gpu_device(t, (size_t)c.out[i].gpu);
				if (c.out[i].nsame)
					same_gpu_words(t, sum, sf[k], med, grp, dcnt[d], &c.out[i]);
				fi[d] = 0;
			}
		}
	}
	free(grp);
	free(tmp);
	free(med);
	free(thr);
	straggler_findings(t, &c);
	/* utilisation dips at steps: each GPU against its own median step (a
	 * GPU low all along is a straggler-gpu, no dip), counted per step */
	if (steps && nsteps >= 3)
		stall_dips(t, steps, nsteps, &c);
	/* after the straggler judgement: it skips the clock of every GPU with
	 * a power-capped or thermal-throttling finding, merged or not */
	merge_devices(t, sum, &c, nper);
	return fctx_finish(&c, out, cap, dropped);
}

static int span_starts_by(const void *elem, const void *t)
{
	return ((const struct ts_tele_span *)elem)->start_ns <= *(const int64_t *)t;
}

/* Coverage of GPU g's rows: the parts of its steps inside intervals
 * between consecutive timed samples that are no gap (steps sorted by start,
 * one rank's, so not overlapping). */
static void cover(const struct by_gpu *bg, size_t g, const struct ts_tele_span *steps,
		  size_t nsteps, struct ts_tele_step *rows, size_t ng)
{
	int64_t med = median_interval(bg, g), prev = TS_NO_TIME;
	size_t timed = 0;

	for (size_t k = bg->off[g]; k < bg->off[g + 1]; k++) {
		const struct ts_tele_sample *x = bg->s[k];
		if (x->t_ns == TS_NO_TIME)
			continue;
		timed++;
		if (prev == TS_NO_TIME || x->t_ns <= prev || is_gap(ns_diff(x->t_ns, prev), med)) {
			prev = x->t_ns;
			continue;
		}
		/* the first step that ends after prev, on to the last that starts before now */
		size_t lo = ts_lower_bound(steps, nsteps, sizeof(*steps), &prev, span_starts_by);
		for (size_t s = lo ? lo - 1 : 0; s < nsteps && steps[s].start_ns < x->t_ns; s++) {
			int64_t a = steps[s].start_ns > prev ? steps[s].start_ns : prev;
			int64_t b = steps[s].end_ns < x->t_ns ? steps[s].end_ns : x->t_ns;
			struct ts_tele_step *r = &rows[s * ng + g];
			if (b > a)
				r->covered_s = (isnan(r->covered_s) ? 0 : r->covered_s) +
					       (double)ns_diff(b, a) / 1e9;
		}
		prev = x->t_ns;
	}
	if (timed < 2)
		return;
	for (size_t s = 0; s < nsteps; s++) {
		struct ts_tele_step *r = &rows[s * ng + g];
		double dur = (double)ns_diff(r->end_ns, r->start_ns) / 1e9;
		if (isnan(r->covered_s))
			r->covered_s = 0;
		r->coverage = dur > 0 ? r->covered_s / dur : NAN;
		if (r->coverage > 1)
			r->coverage = 1;
	}
}

int ts_tele_align(const struct ts_telemetry *t, const struct ts_tele_span *steps, size_t nsteps,
		  struct ts_tele_step **out, size_t *nout, struct ts_err *err)
{
	size_t ng = t->gpus.n, timed = 0;
	struct ts_tele_step *rows;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < t->samples.n; i++)
		if (t->samples.v[i].t_ns != TS_NO_TIME)
			timed++;
	if (!timed)
		return ts_err_set(err, TS_EUNSUPPORTED,
				  "the telemetry has no timestamps, so it cannot be joined to steps "
				  "(capture with `trainscope watch`, dmon -o DT or a --query-gpu "
				  "timestamp field)");
	if (!nsteps || !ng)
		return 0;
	rows = calloc(nsteps * ng, sizeof(*rows));
	if (!rows)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t s = 0; s < nsteps; s++)
		for (size_t g = 0; g < ng; g++) {
			struct ts_tele_step *r = &rows[s * ng + g];
			r->iteration = steps[s].iteration;
			r->gpu = (uint32_t)g;
			r->start_ns = steps[s].start_ns;
			r->end_ns = steps[s].end_ns;
			r->power_mean_w = r->power_min_w = r->power_max_w = NAN;
			r->energy_j = r->energy_per_token_j = r->sm_clock_min_mhz = NAN;
			r->util_mean_pct = r->mem_used_max_mib = r->throttle_share = NAN;
			r->covered_s = r->coverage = NAN;
		}
	/* steps are sorted by start; samples by tick (time within a GPU) */
	for (size_t i = 0; i < t->samples.n; i++) {
		const struct ts_tele_sample *x = &t->samples.v[i];
		if (x->t_ns == TS_NO_TIME)
			continue;
		size_t lo = ts_lower_bound(steps, nsteps, sizeof(*steps), &x->t_ns, span_starts_by);
		if (!lo || x->t_ns >= steps[lo - 1].end_ns)
			continue;
		struct ts_tele_step *r = &rows[(lo - 1) * ng + x->gpu];
		size_t k = ++r->samples;
#define RUNMEAN(field, val) (r->field = k == 1 ? (val) : r->field + ((val) - r->field) / (double)k)
		if (x->st[TS_TF_POWER_W] == TS_TV_VALUE) {
			double p = x->v[TS_TF_POWER_W];
			r->power_min_w = isnan(r->power_min_w) || p < r->power_min_w ? p : r->power_min_w;
			r->power_max_w = isnan(r->power_max_w) || p > r->power_max_w ? p : r->power_max_w;
			r->energy_j = isnan(r->energy_j) ? p : r->energy_j + p; /* a sum until below */
			r->power_samples++;
		}
		if (x->st[TS_TF_UTIL_PCT] == TS_TV_VALUE)
			r->util_mean_pct = isnan(r->util_mean_pct) ? x->v[TS_TF_UTIL_PCT] :
				r->util_mean_pct + (x->v[TS_TF_UTIL_PCT] - r->util_mean_pct) / (double)k;
		if (x->st[TS_TF_SM_CLOCK_MHZ] == TS_TV_VALUE &&
		    (isnan(r->sm_clock_min_mhz) || x->v[TS_TF_SM_CLOCK_MHZ] < r->sm_clock_min_mhz))
			r->sm_clock_min_mhz = x->v[TS_TF_SM_CLOCK_MHZ];
		if (x->st[TS_TF_MEM_USED_MIB] == TS_TV_VALUE &&
		    (isnan(r->mem_used_max_mib) || x->v[TS_TF_MEM_USED_MIB] > r->mem_used_max_mib))
			r->mem_used_max_mib = x->v[TS_TF_MEM_USED_MIB];
		if (x->st[TS_TF_EVENT_REASONS] == TS_TV_VALUE) {
			int hit = (reason_bits(x->v[TS_TF_EVENT_REASONS]) &
				   (TS_REASON_SW_POWER_CAP | TS_REASON_SW_THERMAL | TS_REASON_HW_THERMAL |
				    TS_REASON_HW_SLOWDOWN | TS_REASON_HW_POWER_BRAKE)) != 0;
			RUNMEAN(throttle_share, (double)hit);
		}
#undef RUNMEAN
	}
	struct by_gpu bg;
	if (by_gpu_build(&bg, t, 0)) {
		free(rows);
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	for (size_t g = 0; g < ng; g++)
		cover(&bg, g, steps, nsteps, rows, ng);
	by_gpu_release(&bg);
	for (size_t i = 0; i < nsteps * ng; i++) {
		struct ts_tele_step *r = &rows[i];
		if (r->power_samples) {
			r->power_mean_w = r->energy_j / (double)r->power_samples;
			r->energy_j = NAN;
			if (isnan(r->coverage) || r->coverage >= TS_TELE_MIN_COVERAGE)
				r->energy_j = r->power_mean_w * (double)ns_diff(r->end_ns, r->start_ns) / 1e9;
			int64_t tok = steps[i / ng].tokens;
			if (tok > 0 && isfinite(r->energy_j))
				r->energy_per_token_j = r->energy_j / (double)tok;
		}
	}
	*out = rows;
	*nout = nsteps * ng;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* One side of an A/B comparison: its telemetry, summaries, hosts (grp,
 * rep: host_groups; off, mem: host_members; nh 0 when not grouped), and
 * scratch for side_stat: by device a sum and a weight (zero between
 * calls) and the devices touched. */
struct side {
	const struct ts_telemetry *t;
	const struct ts_tele_gpu_summary *s;
	size_t nh, *grp, *rep, *off, *mem, *dl;
	double *dsum, *dw;
};

/* Statistic of one field over the GPUs mem[lo .. hi - 1] of side x (in
 * ascending order; mem NULL: the GPUs lo .. hi - 1): the mean over device
 * means (a device seen in several captures once, at the mean of its
 * samples there), or the max; NAN when no GPU has the field. Costs those
 * GPUs (and a sort of their devices), not the side's. */
static double side_stat(struct side *x, const size_t *mem, size_t lo, size_t hi, int f,
			int use_max)
{
	size_t nd = 0;
	double acc = 0, best = NAN;

	for (size_t i = lo; i < hi; i++) {
		size_t g = mem ? mem[i] : i, d = gpu_device(x->t, g);
		const struct ts_tele_stat *st = &x->s[g].f[f];
		if (!st->n)
			continue;
		if (x->dw[d] == 0)
			x->dl[nd++] = d;
		x->dsum[d] += st->mean * (double)st->n;
		x->dw[d] += (double)st->n;
		if (isnan(best) || st->max > best)
			best = st->max;
	}
	/* the device means summed in device order, as one pass over all
	 * devices adds them */
	ts_sort(x->dl, nd, sizeof(*x->dl), cmp_size);
	for (size_t i = 0; i < nd; i++) {
		acc += x->dsum[x->dl[i]] / x->dw[x->dl[i]];
		x->dsum[x->dl[i]] = x->dw[x->dl[i]] = 0;
	}
	return use_max ? best : nd ? acc / (double)nd : NAN;
}

/* The confounds of host ha of a against host hb of b (whole: the sides
 * as a whole, every GPU); where names the host in the message ("" for
 * none). */
static void host_confounds(struct fctx *c, struct side *a, size_t ha, struct side *b, size_t hb,
			   int whole, const char *where)
{
	static const struct { int f; int use_max; double rel, abs; const char *what; } checks[] = {
		{ TS_TF_POWER_LIMIT_W, 1, 0.01, 0, "power limit" },
		{ TS_TF_SM_CLOCK_MHZ, 0, 0.03, 0, "mean SM clock" },
		{ TS_TF_TEMP_C, 0, 0, 10, "mean GPU temperature" },
	};
	struct ts_tele_finding *f;

	for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++) {
		double x = whole ? side_stat(a, NULL, 0, a->t->gpus.n, checks[k].f, checks[k].use_max) :
			   side_stat(a, a->mem, a->off[ha], a->off[ha + 1], checks[k].f, checks[k].use_max);
		double y = whole ? side_stat(b, NULL, 0, b->t->gpus.n, checks[k].f, checks[k].use_max) :
			   side_stat(b, b->mem, b->off[hb], b->off[hb + 1], checks[k].f, checks[k].use_max);
		if (isnan(x) || isnan(y))
			continue;
		double d = fabs(y - x);
		int off = checks[k].rel > 0 ? d > checks[k].rel * fabs(x) : d > checks[k].abs;
		if (off && (f = add(c, "telemetry-confound", "warning", -1)))
			snprintf(f->msg, sizeof(f->msg),
				 "the two sides ran at a different %s%s: %.6g vs %.6g %s; a speed "
				 "difference may come from the hardware state, not the change",
				 checks[k].what, where, x, y, ts_tf_unit(checks[k].f));
	}
}

/* Fill side x of t (host_groups, host_members, scratch). Returns 0, or
 * TS_ENOMEM (x may hold some buffers: side_release). */
static int side_init(struct side *x, const struct ts_telemetry *t, const struct ts_tele_gpu_summary *s)
{
	size_t n = t->gpus.n ? t->gpus.n : 1;

	memset(x, 0, sizeof(*x));
	x->t = t;
	x->s = s;
	x->grp = malloc((5 * n + 1) * sizeof(*x->grp));
	x->dsum = calloc(2 * n, sizeof(*x->dsum));
	if (!x->grp || !x->dsum)
		return TS_ENOMEM;
	x->rep = x->grp + n;
	x->mem = x->grp + 2 * n;
	x->dl = x->grp + 3 * n;
	x->off = x->grp + 4 * n;
	x->dw = x->dsum + n;
	x->nh = host_groups(t, x->grp, x->rep);
	if (x->nh == SIZE_MAX) {
		x->nh = 0;
		return TS_ENOMEM;
	}
	host_members(x->grp, t->gpus.n, x->nh, x->off, x->mem);
	return 0;
}

static void side_release(struct side *x)
{
	free(x->grp);
	free(x->dsum);
}

size_t ts_tele_confounds(const struct ts_telemetry *a, const struct ts_tele_gpu_summary *sa,
			 const struct ts_telemetry *b, const struct ts_tele_gpu_summary *sb,
			 struct ts_tele_finding *out, size_t cap, struct ts_tele_dropped *dropped)
{
	struct fctx c = { NULL, 0, 0, 0 };
	struct ts_tele_finding *f;
	struct side xa, xb;
	struct ts_intern names;
	size_t paired = 0, *kof = NULL;
	int ea = side_init(&xa, a, sa), eb = side_init(&xb, b, sb);
	int ok = !ea && !eb;   /* both set up, so both are freed below */

	/* a host is compared with the same host of the other side (hosts of
	 * another SKU, power limit or cooling differ with no change); with
	 * no host on both sides, or one host a side, the sides as a whole.
	 * b's hosts by name (kof: the host of each name; a name is one
	 * host's, host_plan joins its GPUs), so pairing costs the hosts */
	ts_intern_init(&names);
	if (ok && (xa.nh > 1 || xb.nh > 1) && (kof = malloc((xb.nh ? xb.nh : 1) * sizeof(*kof)))) {
		for (size_t k = 0; k < xb.nh; k++) {
			const char *o = b->gpus.v[xb.rep[k]].host;
			size_t seen = names.count;
			int64_t id = o ? ts_intern(&names, o, strlen(o)) : -1;
			if (o && id < 0)
				break;
			if (o && names.count > seen)
				kof[id] = k;
		}
		for (size_t i = 0; i < xa.nh; i++) {
			const char *h = a->gpus.v[xa.rep[i]].host;
			int64_t id = h ? ts_intern_find(&names, h, strlen(h)) : -1;
			char where[160];

			if (id < 0)
				continue;
			snprintf(where, sizeof(where), " on host %s", h);
			host_confounds(&c, &xa, i, &xb, kof[id], 0, where);
			paired++;
		}
	}
	if (!paired && ok)
		host_confounds(&c, &xa, 0, &xb, 0, 1, "");
	ts_intern_release(&names);
	free(kof);
	side_release(&xa);
	side_release(&xb);
	const char *ma = a->gpus.n && a->gpus.v[0].name ? a->gpus.v[0].name : NULL;
	const char *mb = b->gpus.n && b->gpus.v[0].name ? b->gpus.v[0].name : NULL;
	if (ma && mb && strcmp(ma, mb) && (f = add(&c, "telemetry-confound", "warning", -1)))
		snprintf(f->msg, sizeof(f->msg), "the two sides ran on different GPUs: %s vs %s", ma, mb);
	return fctx_finish(&c, out, cap, dropped);
}

/*
 * The steps covered below TS_TELE_MIN_COVERAGE on some GPU, judged against
 * each GPU's own time range [glo[g], ghi[g]] (its first and last sample: a
 * GPU whose last row was cut ends a round before the others): with edge
 * set, the steps that reach past that range on a GPU where they are so
 * covered; else the steps inside it on such a GPU (in its sample gaps).
 * On a GPU, a step outside its capture's time range [clo[g], chi[g]] is
 * neither (it is outside that capture, said as such). *n counts them,
 * list gets "ITER (PCT %)" entries (the worst such GPU) while they fit in
 * cap, *left counts the rest.
 */
static void low_steps(const struct ts_tele_span *steps, size_t nsteps,
		      const struct ts_tele_step *rows, size_t ng, size_t nrows, const int64_t *clo,
		      const int64_t *chi, const int64_t *glo, const int64_t *ghi, int edge,
		      char *list, size_t cap, size_t *n, size_t *left)
{
	size_t len = 0;

	for (size_t s = 0; ng && s < nsteps && (s + 1) * ng <= nrows; s++) {
		double worst = NAN;

		for (size_t g = 0; g < ng; g++) {
			double cv = rows[s * ng + g].coverage;
			if (steps[s].end_ns <= clo[g] || steps[s].start_ns > chi[g])
				continue;
			int across = glo[g] == TS_NO_TIME || steps[s].start_ns < glo[g] ||
				     steps[s].end_ns > ghi[g];
			if (across == !!edge && !isnan(cv) && (isnan(worst) || cv < worst))
				worst = cv;
		}
		if (!(worst < TS_TELE_MIN_COVERAGE))
			continue;
		(*n)++;
		if (len < cap - 40)
			len += (size_t)snprintf(list + len, cap - len, "%s%lld (%.0f %%)",
						len ? ", " : "", (long long)steps[s].iteration, 100 * worst);
		else
			(*left)++;
	}
}

/*
 * The steps-outside-capture warning of one capture, time range [lo, hi]
 * (file NULL: the only one), when some steps lie outside it; naive: its
 * stamps had no zone, so an offset of whole quarter hours may be a time
 * zone. Returns 0 or TS_ENOMEM.
 */
static int outside_warn(const struct ts_tele_span *steps, size_t nsteps, int64_t lo, int64_t hi,
			int naive, const char *file, struct ts_warnings *out)
{
	int64_t s_lo = TS_NO_TIME, s_hi = TS_NO_TIME;
	size_t outside = 0;
	char a[48], b[48], c[48], d[48], head[160];

	for (size_t s = 0; s < nsteps; s++) {
		outside += steps[s].end_ns <= lo || steps[s].start_ns > hi;
		s_lo = s_lo == TS_NO_TIME || steps[s].start_ns < s_lo ? steps[s].start_ns : s_lo;
		s_hi = s_hi == TS_NO_TIME || steps[s].end_ns > s_hi ? steps[s].end_ns : s_hi;
	}
	if (!outside)
		return 0;
	double off = (double)ns_diff(s_lo, lo) / 1e9, q = 900 * round(off / 900);
	if (outside == nsteps)
		snprintf(head, sizeof(head), "no step of --steps overlaps the capture");
	else
		snprintf(head, sizeof(head), "%zu of %zu steps lie outside the capture (their "
			 "rows have no samples)", outside, nsteps);
	return ts_warnings_add(out, "steps-outside-capture", file, -1, TS_NO_INT,
			       "%s%s%s: the steps run from %s to %s, the capture from %s to %s; the "
			       "steps start %+.1f s (%+.2f h) from the capture's start%s",
			       file ? file : "", file ? ": " : "", head,
			       tele_fmt_utc(a, sizeof(a), s_lo), tele_fmt_utc(b, sizeof(b), s_hi),
			       tele_fmt_utc(c, sizeof(c), lo), tele_fmt_utc(d, sizeof(d), hi), off,
			       off / 3600,
			       naive && q != 0 && fabs(off - q) <= 120 ? "; within 2 min "
			       "of a whole quarter hour: a time-zone offset? (stamps without a zone, "
			       "as dmon -o DT, mthreads-gmi and --query-gpu write them, are the "
			       "capturing machine's local time, read as UTC)" : "")
		       ? TS_ENOMEM : 0;
}

int ts_tele_join_warn(const struct ts_telemetry *t, const struct ts_tele_span *steps,
		      size_t nsteps, const struct ts_tele_step *rows, size_t nrows,
		      struct ts_warnings *out)
{
	int64_t lo = TS_NO_TIME;
	int64_t *glo, *ghi, *clo, *chi, *gclo, *gchi;
	size_t ng = t->gpus.n, nc = t->nfiles > 0 ? (size_t)t->nfiles : 1;
	int multi = ts_tele_multi_capture(t);
	char list[300] = "", elist[300] = "", tail[48] = "";
	size_t nedge = 0, eleft = 0, nlow = 0, left = 0;
	int rc = TS_ENOMEM;

	/* each GPU's and each capture's first and last timed sample, and
	 * each GPU's capture's (gclo, gchi) */
	if (!(glo = malloc((4 * (ng ? ng : 1) + 2 * nc) * sizeof(*glo))))
		return TS_ENOMEM;
	ghi = glo + (ng ? ng : 1);
	gclo = ghi + (ng ? ng : 1);
	gchi = gclo + (ng ? ng : 1);
	clo = gchi + (ng ? ng : 1);
	chi = clo + nc;
	for (size_t g = 0; g < ng; g++)
		glo[g] = ghi[g] = TS_NO_TIME;
	for (size_t c = 0; c < nc; c++)
		clo[c] = chi[c] = TS_NO_TIME;
	for (size_t i = 0; i < t->samples.n; i++) {
		int64_t x = t->samples.v[i].t_ns;
		uint32_t g = t->samples.v[i].gpu;
		if (x == TS_NO_TIME)
			continue;
		lo = lo == TS_NO_TIME || x < lo ? x : lo;
		if (g < ng) {
			size_t c = t->gpus.v[g].capture >= 0 && (size_t)t->gpus.v[g].capture < nc
				   ? (size_t)t->gpus.v[g].capture : 0;
			glo[g] = glo[g] == TS_NO_TIME || x < glo[g] ? x : glo[g];
			ghi[g] = ghi[g] == TS_NO_TIME || x > ghi[g] ? x : ghi[g];
			clo[c] = clo[c] == TS_NO_TIME || x < clo[c] ? x : clo[c];
			chi[c] = chi[c] == TS_NO_TIME || x > chi[c] ? x : chi[c];
		}
	}
	if (lo == TS_NO_TIME || !nsteps) {
		rc = 0;
		goto out;
	}
	for (size_t g = 0; g < ng; g++) {
		size_t c = t->gpus.v[g].capture >= 0 && (size_t)t->gpus.v[g].capture < nc
			   ? (size_t)t->gpus.v[g].capture : 0;
		gclo[g] = clo[c];
		gchi[g] = chi[c];
	}
	/* capture by capture: the offset and the time-zone hint are each
	 * capture's own (a zoned capture beside a naive one is UTC) */
	for (size_t c = 0; c < nc; c++) {
		const struct ts_tele_gpu *first = NULL;
		for (size_t g = 0; g < ng && !first; g++)
			if ((size_t)t->gpus.v[g].capture == c)
				first = &t->gpus.v[g];
		if (!first || clo[c] == TS_NO_TIME)
			continue;
		if (outside_warn(steps, nsteps, clo[c], chi[c], first->local_time,
				 multi ? (first->file ? first->file : "?") : NULL, out))
			goto out;
	}
	/* steps across the capture's start or end, on each GPU its own first
	 * and last sample: partly outside it, the rest may be too little to
	 * measure (not outside, not in a gap) */
	low_steps(steps, nsteps, rows, ng, nrows, gclo, gchi, glo, ghi, 1, elist, sizeof(elist), &nedge,
		  &eleft);
	if (nedge) {
		char etail[48] = "";
		if (eleft)
			snprintf(etail, sizeof(etail), ", and %zu more", eleft);
		if (ts_warnings_add(out, "steps-outside-capture", NULL, -1, TS_NO_INT,
				    "%zu step(s) run across the capture's start or end (a GPU's "
				    "first or last sample) and are covered below %.0f %% on some GPU: iterations %s%s; their energy "
				    "is not reported", nedge, 100 * TS_TELE_MIN_COVERAGE, elist, etail))
			goto out;
	}
	/* steps inside the capture that lie mostly in sample gaps */
	low_steps(steps, nsteps, rows, ng, nrows, gclo, gchi, glo, ghi, 0, list, sizeof(list), &nlow,
		  &left);
	if (left)
		snprintf(tail, sizeof(tail), ", and %zu more", left);
	if (nlow && ts_warnings_add(out, "sample-gap", NULL, -1, TS_NO_INT,
				    "%zu step(s) inside the capture lie mostly in sample gaps "
				    "(covered below %.0f %% on some GPU): iterations %s%s; their "
				    "energy is not reported and their means come from the few samples "
				    "they hold", nlow, 100 * TS_TELE_MIN_COVERAGE, list, tail))
		goto out;
	rc = 0;
out:
	free(glo);
	return rc;
}
