/*
 * health.c - one loss-health verdict from every signal a log carries.
 *
 * A run that went numerically bad shows it in several places, and each
 * framework in a different one: a NaN loss, a NaN extra loss, a NaN grad
 * norm, Megatron's NaN-iteration counter, or a loss that simply stops
 * being printed (Megatron prints a loss only when it is > 0, which a NaN
 * is not). Every command that talks about loss health calls this one
 * judgement, so none can call healthy what another calls broken.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/steps.h"

static const char *const cause_names[TS_LOSS_CAUSE_COUNT] = {
	[TS_LOSS_CAUSE_NONE] = "none",
	[TS_LOSS_CAUSE_LOSS] = "loss-nonfinite",
	[TS_LOSS_CAUSE_EXTRA_LOSS] = "extra-loss-nonfinite",
	[TS_LOSS_CAUSE_GRAD_NORM] = "grad-norm-nonfinite",
	[TS_LOSS_CAUSE_NAN_COUNTER] = "nan-iterations",
	[TS_LOSS_CAUSE_LOSS_DROPPED] = "loss-dropped",
	[TS_LOSS_CAUSE_SKIPPED] = "skipped-iterations",
	[TS_LOSS_CAUSE_NEVER_LOGGED] = "no-loss-logged",
};

const char *ts_loss_cause_name(int cause)
{
	if (cause < 0 || cause >= TS_LOSS_CAUSE_COUNT)
		return "unknown";
	return cause_names[cause];
}

const char *ts_loss_verdict_name(int verdict)
{
	switch (verdict) {
	case TS_LOSS_NONFINITE:
		return "non-finite";
	case TS_LOSS_MISSING:
		return "missing";
	default:
		return "finite";
	}
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b < 0)
		b = 0;
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* Record s (of rank, the ts_step_rank) shows cause, for the iterations from..its own. */
static void see(struct ts_loss_health *h, int cause, const struct ts_step *s, int32_t rank,
		int64_t from, int64_t count)
{
	struct ts_loss_evidence *e = &h->ev[cause];
	int64_t iteration = s->iteration;

	/* which record shows it first: the earliest iteration, there the
	 * lowest rank, then the first file and line */
	if (e->first_iteration == TS_NO_INT || iteration < e->first_iteration ||
	    (iteration == e->first_iteration &&
	     (rank < e->first_rank || (rank == e->first_rank &&
				      (s->file < e->first_file ||
				       (s->file == e->first_file && s->line < e->first_line)))))) {
		e->first_rank = rank;
		e->first_file = s->file;
		e->first_line = s->line;
	}
	if (e->first_iteration == TS_NO_INT || iteration < e->first_iteration)
		e->first_iteration = iteration;
	if (e->first_possible == TS_NO_INT || from < e->first_possible)
		e->first_possible = from;
	e->records = sat_add(e->records, 1);
	e->iterations = sat_add(e->iterations, count);
}

/* A record's place: series (file, rank), then iteration, then file order. */
struct rec_key {
	int32_t file, rank;
	int64_t iteration;
	size_t pos;
};

static int cmp_rec_key(const void *a, const void *b)
{
	const struct rec_key *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->iteration != y->iteration)
		return x->iteration < y->iteration ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* A record with non-finite evidence: its iteration and the non-finite
 * iterations it stands for. */
struct badrec {
	int64_t it, n;
};

static int cmp_badrec(const void *a, const void *b)
{
	int64_t x = ((const struct badrec *)a)->it, y = ((const struct badrec *)b)->it;

	return (x > y) - (x < y);
}

/* Sort unless already in order (logs nearly always are: one pass, no sort). */
static void sort_if_needed(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	const char *p = base;

	for (size_t i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0) {
			ts_sort(base, n, size, cmp);
			return;
		}
}

int64_t ts_record_from(int64_t prev, int64_t it, int64_t next, int64_t every)
{
	int64_t from;

	if (prev != TS_NO_INT)
		from = prev + 1;
	else if (it <= 1 || (next == TS_NO_INT && every <= 0))
		return it;
	else
		from = it - (every > 0 ? every : next - it) + 1;
	if (every > 0 && from < it - every + 1)
		from = it - every + 1;
	return prev != TS_NO_INT || from > 1 ? from : 1;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

int ts_record_interval(const int64_t *iter, size_t n, int64_t *every)
{
	int64_t *gap;
	size_t ng = 0, best_n = 0;

	*every = 0;
	if (n < 2)
		return 0;
	/* a gap that most records share is the mode (a log's records nearly
	 * always are): one pass for the candidate (Boyer-Moore's majority
	 * vote), one to count it, and no sort */
	{
		int64_t cand = 0, votes = 0;
		size_t count = 0, all = 0;

		for (size_t i = 1; i < n; i++) {
			if (iter[i] <= iter[i - 1])
				continue;
			if (!votes)
				cand = iter[i] - iter[i - 1];
			votes += iter[i] - iter[i - 1] == cand ? 1 : -1;
		}
		for (size_t i = 1; i < n; i++)
			if (iter[i] > iter[i - 1]) {
				all++;
				count += iter[i] - iter[i - 1] == cand;
			}
		if (2 * count > all) {
			*every = cand;
			return 0;
		}
	}
	if (!(gap = malloc((n - 1) * sizeof(*gap))))
		return TS_ENOMEM;
	for (size_t i = 1; i < n; i++)
		if (iter[i] > iter[i - 1])
			gap[ng++] = iter[i] - iter[i - 1];
	ts_sort(gap, ng, sizeof(*gap), cmp_i64);
	for (size_t i = 0, run = 0; i < ng; i++) {
		run = i && gap[i] == gap[i - 1] ? run + 1 : 1;
		if (run > best_n) {
			best_n = run;
			*every = gap[i];
		}
	}
	free(gap);
	return 0;
}

int ts_record_in_window(int64_t from, int64_t it, int64_t first, int64_t last)
{
	if (from == TS_NO_INT || from > it)
		from = it;
	return from <= last && it >= first;
}

static int has_loss(const struct ts_step *s)
{
	return !isnan(s->loss) || (s->flags & TS_STEP_LOSS_NONFINITE) || s->extra_n > 0;
}

int ts_loss_health_judge(const struct ts_steplog *log, struct ts_loss_health *h,
			 struct ts_err *err)
{
	size_t n = log->steps.n, nb = 0;
	struct rec_key *ord = NULL;
	struct badrec *br = NULL;
	int64_t first_iter = TS_NO_INT;
	int64_t cur = TS_NO_INT, from = TS_NO_INT, every = 0, *its = NULL;
	int series_loss = 0, any_loss = 0;

	memset(h, 0, sizeof(*h));
	ts_loss_health_release(h); /* the empty judgement: nothing seen */
	ord = malloc((n + 1) * sizeof(*ord));
	br = malloc((n + 1) * sizeof(*br));
	h->bad_iterations = malloc((n + 1) * sizeof(*h->bad_iterations));
	its = malloc((n + 1) * sizeof(*its));
	if (!ord || !br || !h->bad_iterations || !its) {
		free(ord);
		free(br);
		free(its);
		ts_loss_health_release(h);
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_step *s = &log->steps.v[i];

		ord[i] = (struct rec_key){ s->file, s->rank, s->iteration, i };
	}
	sort_if_needed(ord, n, sizeof(*ord), cmp_rec_key);
	for (size_t k = 0; k < n; k++) {
		const struct ts_step *s = &log->steps.v[ord[k].pos];
		int32_t rank = ts_step_rank(log, s);
		int bad = 0;

		/* a record stands for the iterations since its series' previous
		 * one (from): one pass, duplicates of an iteration share it */
		if (k == 0 || ord[k].file != ord[k - 1].file || ord[k].rank != ord[k - 1].rank) {
			size_t j = k + 1, e = k;

			while (j < n && ord[j].file == ord[k].file && ord[j].rank == ord[k].rank &&
			       ord[j].iteration == ord[k].iteration)
				j++;
			/* the series' log interval caps what a record stands for */
			while (e < n && ord[e].file == ord[k].file && ord[e].rank == ord[k].rank) {
				its[e - k] = ord[e].iteration;
				e++;
			}
			if (ts_record_interval(its, e - k, &every)) {
				free(ord);
				free(br);
				free(its);
				ts_loss_health_release(h);
				return ts_err_set(err, TS_ENOMEM, "out of memory");
			}
			from = ts_record_from(TS_NO_INT, ord[k].iteration,
					      j < n && ord[j].file == ord[k].file &&
					      ord[j].rank == ord[k].rank ? ord[j].iteration : TS_NO_INT,
					      every);
			cur = ord[k].iteration;
			series_loss = 0;
		} else if (ord[k].iteration != cur) {
			from = ts_record_from(cur, ord[k].iteration, TS_NO_INT, every);
			cur = ord[k].iteration;
		}
		if (first_iter == TS_NO_INT || s->iteration < first_iter)
			first_iter = s->iteration;
		if (s->flags & TS_STEP_LOSS_NONFINITE) {
			see(h, TS_LOSS_CAUSE_LOSS, s, rank, from, 1);
			bad = 1;
		}
		for (uint32_t e = 0; e < s->extra_n; e++) {
			const struct ts_step_extra *x = &log->extras.v[s->extra_first + e];

			if (isfinite(x->value))
				continue;
			if (h->ev[TS_LOSS_CAUSE_EXTRA_LOSS].first_iteration == TS_NO_INT ||
			    s->iteration < h->ev[TS_LOSS_CAUSE_EXTRA_LOSS].first_iteration) {
				const char *nm = ts_steplog_name(log, x->name);
				size_t l = strlen(nm);

				if (l >= sizeof(h->extra_loss))
					l = sizeof(h->extra_loss) - 1;
				memcpy(h->extra_loss, nm, l);
				h->extra_loss[l] = '\0';
			}
			see(h, TS_LOSS_CAUSE_EXTRA_LOSS, s, rank, from, 1);
			bad = 1;
			break;
		}
		if (s->flags & TS_STEP_GRAD_NONFINITE) {
			see(h, TS_LOSS_CAUSE_GRAD_NORM, s, rank, from, 1);
			bad = 1;
		}
		if (s->nan_iters != TS_NO_INT && s->nan_iters > 0) {
			see(h, TS_LOSS_CAUSE_NAN_COUNTER, s, rank, from, s->nan_iters);
			bad = 1;
		}
		if (s->skipped != TS_NO_INT && s->skipped > 0)
			see(h, TS_LOSS_CAUSE_SKIPPED, s, rank, from, s->skipped);
		if (has_loss(s))
			series_loss = any_loss = 1;
		else if (series_loss && !(s->flags & TS_STEP_NO_LOSS))
			see(h, TS_LOSS_CAUSE_LOSS_DROPPED, s, rank, from, 1);
		if (bad)
			br[nb++] = (struct badrec){ s->iteration,
						    s->nan_iters != TS_NO_INT && s->nan_iters > 1 ?
						    s->nan_iters : 1 };
	}
	free(ord);
	free(its);
	if (!any_loss) {
		struct ts_loss_evidence *e = &h->ev[TS_LOSS_CAUSE_NEVER_LOGGED];

		e->first_iteration = e->first_possible = first_iter;
		e->records = e->iterations = (int64_t)n;
	}
	/* one iteration on several ranks is one; it stands for the most
	 * non-finite iterations one of its records counts */
	sort_if_needed(br, nb, sizeof(*br), cmp_badrec);
	h->nbad = 0;
	for (size_t i = 0, j; i < nb; i = j) {
		int64_t most = br[i].n;
		for (j = i + 1; j < nb && br[j].it == br[i].it; j++)
			most = br[j].n > most ? br[j].n : most;
		h->bad_iterations[h->nbad++] = br[i].it;
		h->nbad_iterations = most > INT64_MAX - h->nbad_iterations ? INT64_MAX
									  : h->nbad_iterations + most;
	}
	free(br);
	for (int c = TS_LOSS_CAUSE_LOSS; c <= TS_LOSS_CAUSE_NAN_COUNTER; c++) {
		int64_t f = h->ev[c].first_iteration;

		if (f != TS_NO_INT && (h->first_bad_iteration == TS_NO_INT || f < h->first_bad_iteration)) {
			h->verdict = TS_LOSS_NONFINITE;
			h->cause = c;
			h->first_bad_iteration = f;
		}
		if (f != TS_NO_INT && (h->first_bad_possible == TS_NO_INT ||
				       h->ev[c].first_possible < h->first_bad_possible))
			h->first_bad_possible = h->ev[c].first_possible;
	}
	if (h->verdict == TS_LOSS_NONFINITE) {
		h->first_bad_rank = h->ev[h->cause].first_rank;
		h->first_bad_file = h->ev[h->cause].first_file;
		h->first_bad_line = h->ev[h->cause].first_line;
	}
	if (h->verdict == TS_LOSS_FINITE) {
		if (!any_loss) {
			h->verdict = TS_LOSS_MISSING;
			h->cause = TS_LOSS_CAUSE_NEVER_LOGGED;
		} else if (h->ev[TS_LOSS_CAUSE_LOSS_DROPPED].records) {
			h->verdict = TS_LOSS_MISSING;
			h->cause = TS_LOSS_CAUSE_LOSS_DROPPED;
		}
		if (h->verdict == TS_LOSS_MISSING) {
			h->first_bad_iteration = h->ev[h->cause].first_iteration;
			h->first_bad_possible = h->ev[h->cause].first_possible;
			h->first_bad_rank = h->ev[h->cause].first_rank;
			h->first_bad_file = h->ev[h->cause].first_file;
			h->first_bad_line = h->ev[h->cause].first_line;
		}
	}
	return 0;
}

void ts_loss_health_release(struct ts_loss_health *h)
{
	free(h->bad_iterations);
	memset(h, 0, sizeof(*h));
	h->first_bad_iteration = h->first_bad_possible = TS_NO_INT;
	h->first_bad_rank = h->first_bad_file = -1;
	h->first_bad_line = TS_NO_INT;
	for (int c = 0; c < TS_LOSS_CAUSE_COUNT; c++) {
		h->ev[c].first_iteration = h->ev[c].first_possible = TS_NO_INT;
		h->ev[c].first_rank = h->ev[c].first_file = -1;
		h->ev[c].first_line = TS_NO_INT;
	}
}
