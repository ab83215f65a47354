/*
 * runmodel.c - a run directory or file list to the one value every run
 * command renders (run.h).
 *
 * Why it exists: each command used to list, classify and analyse the run
 * on its own, so two commands could pick different step files, different
 * windows and different loss verdicts for the same directory. Here each
 * fact is decided once: which files are the step series, whether they
 * are one run, the steps analysis (called exactly once), the window object
 * built from it, and the warnings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run_int.h"
#include "trainscope/contract.h"
#include "trainscope/detect.h"
#include "trainscope/input.h"
#include "trainscope/run.h"
#include "trainscope/stats.h"

#define DEFAULT_DEPTH 3
#define MAX_RESTARTS 256
#define MIN_WINDOW 50     /* as steps.c: the short-window threshold */

void ts_runmodel_opts_init(struct ts_runmodel_opts *o)
{
	memset(o, 0, sizeof(*o));
	ts_steps_opts_init(&o->steps);
	o->walk_depth = DEFAULT_DEPTH;
}

void ts_runmodel_init(struct ts_runmodel *rm)
{
	memset(rm, 0, sizeof(*rm));
	ts_paths_init(&rm->step_files);
	ts_steplog_init(&rm->log);
	ts_warnings_init(&rm->warnings);
	ts_arena_init(&rm->arena);
	rm->window.first = rm->window.last = TS_NO_INT;
	rm->window.method = "none";
	rm->rate.window.logged_tflops = rm->rate.window.model_tflops = NAN;
	rm->rate.window.diff_median = rm->rate.window.diff_signed = NAN;
	rm->rate.window.formula = -1;
	rm->spare_nan_iteration = TS_NO_INT;
	rm->spare_nan_rank = -1;
}

void ts_runmodel_release(struct ts_runmodel *rm)
{
	TS_VEC_RELEASE(rm->inputs);
	ts_paths_release(&rm->step_files);
	ts_steplog_release(&rm->log);
	ts_steps_report_release(&rm->steps);
	ts_warnings_release(&rm->warnings);
	ts_arena_release(&rm->arena);
	memset(rm, 0, sizeof(*rm));
}

const char *ts_runmodel_iteration_word(const struct ts_runmodel *rm, int64_t it)
{
	for (size_t i = 0; i < rm->log.steps.n && rm->nordinal; i++)
		if (rm->log.steps.v[i].iteration == it && (rm->log.steps.v[i].flags & TS_STEP_ORDINAL))
			return "record ordinal";
	return "iteration";
}

const char *ts_runmodel_span_words(const struct ts_runmodel *rm, const char *pre,
				   const char *range, int64_t from, int64_t it, char *buf,
				   size_t size)
{
	if (from == TS_NO_INT || from >= it)
		snprintf(buf, size, "%s%s%s %lld", pre, *pre ? " " : "",
			 ts_runmodel_iteration_word(rm, it), (long long)it);
	else
		snprintf(buf, size, "%s iterations %lld-%lld", range, (long long)from,
			 (long long)it);
	return buf;
}

int ts_runmodel_first_bad(const struct ts_runmodel *rm, int32_t *rank, const char **path,
			  int64_t *line)
{
	const struct ts_loss_health *h = &rm->steps.health;

	if (!rm->have_steps || h->verdict != TS_LOSS_NONFINITE || h->first_bad_file < 0 ||
	    (size_t)h->first_bad_file >= rm->step_files.n || h->first_bad_line == TS_NO_INT)
		return 0;
	*rank = h->first_bad_rank;
	*path = rm->step_files.v[h->first_bad_file];
	*line = h->first_bad_line;
	if (rm->spare_nan_iteration != h->first_bad_iteration)
		return 1;
	for (size_t i = 0; i < rm->log.steps.n; i++) {
		const struct ts_step *s = &rm->log.steps.v[i];

		if (s->file == h->first_bad_file && s->line == h->first_bad_line &&
		    (s->flags & TS_STEP_HEALTH_FROM_LOG)) {
			*rank = rm->spare_nan_rank;
			*path = rm->spare_nan_path;
			*line = rm->spare_nan_line;
			break;
		}
	}
	return 1;
}

const char *ts_runmodel_first_bad_words(const struct ts_runmodel *rm, char *buf, size_t size)
{
	int32_t rank;
	const char *path;
	int64_t line;

	buf[0] = '\0';
	if (!ts_runmodel_first_bad(rm, &rank, &path, &line))
		return buf;
	if (rank >= 0)
		snprintf(buf, size, "; first printed by rank %d (%s line %lld)", rank, path,
			 (long long)line);
	else
		snprintf(buf, size, "; first printed in %s line %lld", path, (long long)line);
	return buf;
}

size_t ts_runmodel_count(const struct ts_runmodel *rm, int role)
{
	size_t n = 0;

	for (size_t i = 0; i < rm->inputs.n; i++)
		n += rm->inputs.v[i].role == role;
	return n;
}

int ts_window_parse(const char *s, int64_t *first, int64_t *last)
{
	char *end;
	long long a, b;

	if (!s)
		return TS_EUSAGE;
	a = strtoll(s, &end, 10);
	if (end == s || (*end != '-' && *end != ':'))
		return TS_EUSAGE;
	s = end + 1;
	b = strtoll(s, &end, 10);
	if (end == s || *end || a < 1 || b < a)
		return TS_EUSAGE;
	*first = a;
	*last = b;
	return 0;
}

/* ------------------------------------------------------------ classify */

static int is_log_kind(int k)
{
	return k == TS_KIND_LOG_MEGATRON || k == TS_KIND_LOG_BRIDGE || k == TS_KIND_LOG_NEMO ||
	       k == TS_KIND_LOG_HF || k == TS_KIND_LOG_PRIMUS || k == TS_KIND_LOG_TITAN ||
	       k == TS_KIND_LOG_DEEPSPEED;
}

static int role_of(int kind, int any_jsonl, int explicit_arg)
{
	if (kind == TS_KIND_METRICS_JSONL)
		return TS_ROLE_STEPS;
	if (is_log_kind(kind))
		return any_jsonl ? TS_ROLE_LOG_SPARE : TS_ROLE_STEPS;
	switch (kind) {
	case TS_KIND_KINETO_TRACE: case TS_KIND_LEGACY_TRACE:
		return TS_ROLE_TRACE;
	case TS_KIND_NSYS_SQLITE:
		return TS_ROLE_NSYS;
	case TS_KIND_HF_CONFIG:
		return TS_ROLE_CONFIG;
	case TS_KIND_CONTRACT:
		return TS_ROLE_CONTRACT;
	case TS_KIND_TELEMETRY_SMI: case TS_KIND_TELEMETRY_DMON: case TS_KIND_TELEMETRY_GMI:
	case TS_KIND_TELEMETRY_DCGMI: case TS_KIND_TELEMETRY_STRAGGLER: case TS_KIND_TELEMETRY_OWN:
	case TS_KIND_TELEMETRY_DCGM_EXPORTER:
		return TS_ROLE_TELEMETRY;
	case TS_KIND_TEXT: case TS_KIND_UNKNOWN: case TS_KIND_JSON_OTHER:
		/* a file named on the command line is meant as a step source:
		 * its reader says why it is not one */
		return explicit_arg ? TS_ROLE_STEPS : TS_ROLE_OTHER;
	default:
		return TS_ROLE_OTHER;
	}
}

static int cmp_input(const void *a, const void *b)
{
	return strcmp(((const struct ts_run_input *)a)->path, ((const struct ts_run_input *)b)->path);
}

static int classify(struct ts_runmodel *rm, char *const *paths, size_t npaths, int depth,
		    struct ts_err *err)
{
	int rc = 0, any_jsonl = 0;

	for (size_t a = 0; a < npaths; a++) {
		struct ts_paths files;

		ts_paths_init(&files);
		if ((rc = ts_paths_add(&files, paths[a], depth, err))) {
			ts_paths_release(&files);
			return rc;
		}
		for (size_t i = 0; i < files.n; i++) {
			struct ts_run_input in;
			struct ts_detect d;
			struct ts_err derr;
			int explicit_arg = strcmp(files.v[i], paths[a]) == 0;

			memset(&in, 0, sizeof(in));
			ts_err_init(&derr);
			in.path = ts_arena_strndup(&rm->arena, files.v[i], strlen(files.v[i]));
			if (!in.path) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				break;
			}
			if (ts_detect_file(files.v[i], &d, &derr)) {
				char buf[TS_ERR_MSG_MAX + TS_ERR_PATH_MAX];

				if (explicit_arg) {
					*err = derr;
					rc = derr.code;
					break;
				}
				ts_err_format(&derr, buf, sizeof(buf));
				in.kind = TS_KIND_UNKNOWN;
				in.role = TS_ROLE_BAD;
				in.problem = ts_arena_strndup(&rm->arena, buf, strlen(buf));
			} else {
				char why[TS_ERR_PATH_MAX + 160];

				in.kind = d.kind;
				in.role = explicit_arg ? -1 : 0; /* decided below */
				if (ts_detect_misnamed(files.v[i], &d, why, sizeof(why)))
					in.problem = ts_arena_strndup(&rm->arena, why, strlen(why));
				snprintf(in.vendor, sizeof(in.vendor), "%s", d.vendor);
				any_jsonl |= d.kind == TS_KIND_METRICS_JSONL;
			}
			if (TS_VEC_PUSH(rm->inputs, in)) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				break;
			}
		}
		ts_paths_release(&files);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < rm->inputs.n; i++) {
		struct ts_run_input *in = &rm->inputs.v[i];

		if (in->role != TS_ROLE_BAD)
			in->role = role_of(in->kind, any_jsonl, in->role < 0);
	}
	ts_sort(rm->inputs.v, rm->inputs.n, sizeof(*rm->inputs.v), cmp_input);
	{
		/* a file named twice (or inside a directory also named) is one input */
		size_t u = 0;

		for (size_t i = 0; i < rm->inputs.n; i++)
			if (!u || strcmp(rm->inputs.v[i].path, rm->inputs.v[u - 1].path) != 0)
				rm->inputs.v[u++] = rm->inputs.v[i];
		rm->inputs.n = u;
	}
	for (size_t i = 0; i < rm->inputs.n; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];

		if ((in->role == TS_ROLE_BAD || in->role == TS_ROLE_OTHER) &&
		    ts_unused_input_warning(&rm->warnings, in))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
		if (in->role == TS_ROLE_CONTRACT && !rm->contract)
			rm->contract = in->path;
	}
	return 0;
}

/* ------------------------------------------------------------ identity */

/* One (file, rank) pair seen in the step records. */
struct frank {
	int32_t file;
	int32_t rank;
};

static int cmp_frank(const void *pa, const void *pb)
{
	const struct frank *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->file > b->file) - (a->file < b->file);
}

static size_t dir_len(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? (size_t)(s - p) : 0;
}

/* The distinct directories of the step files, for the "several runs" list. */
static void several_runs(const struct ts_runmodel *rm, const char *root, struct ts_err *err)
{
	struct ts_sb sb;
	size_t shown = 0;

	ts_sb_init(&sb);
	for (size_t i = 0; i < rm->step_files.n; i++) {
		const char *p = rm->step_files.v[i];
		size_t n = dir_len(p), seen = 0;

		for (size_t j = 0; j < i && !seen; j++)
			seen = dir_len(rm->step_files.v[j]) == n &&
			       strncmp(rm->step_files.v[j], p, n) == 0;
		if (seen)
			continue;
		if (shown++ < 12) {
			ts_sb_adds(&sb, shown > 1 ? ", " : "");
			ts_sb_add(&sb, p, n ? n : 1);
		}
	}
	if (shown > 12)
		ts_sb_addf(&sb, " and %zu more", shown - 12);
	ts_err_at(err, TS_EUSAGE, root, -1, -1,
		  "holds %zu runs (%s); give one run directory", shown, sb.buf);
	ts_sb_release(&sb);
}

/*
 * Two step files with records of one rank: the same rank measured twice.
 * In different directories they are different runs; in one directory they
 * are two series for one rank, and no pick between them is honest.
 */
static int check_identity(struct ts_runmodel *rm, struct frank *fr, size_t nfr,
			  struct ts_err *err)
{
	for (size_t i = 1; i < nfr; i++) {
		const char *a, *b;

		if (fr[i].rank != fr[i - 1].rank)
			continue;
		a = rm->step_files.v[fr[i - 1].file];
		b = rm->step_files.v[fr[i].file];
		if (dir_len(a) != dir_len(b) || strncmp(a, b, dir_len(a)) != 0) {
			several_runs(rm, rm->root, err);
			return TS_EUSAGE;
		}
		return ts_err_set(err, TS_EUSAGE, "two step series for rank %d: %s and %s; give one "
				  "file per rank", fr[i].rank, a, b);
	}
	return 0;
}

struct restart {
	struct frank key;
	size_t series;         /* its index in fr */
	size_t index;          /* record index where the later segment starts */
	int64_t iteration;     /* its first iteration */
	int64_t reached;       /* highest iteration before it */
	size_t replaced;       /* earlier records of its series it replaces */
	size_t bad;            /* of them, those with a numerical failure */
	size_t first_bad;      /* the first of those (record index) */
	int64_t bad_prev;      /* its series' iteration before that record */
};

/* Restarts in file order, then record order: one warning per file. */
static int cmp_restart(const void *pa, const void *pb)
{
	const struct restart *a = pa, *b = pb;

	if (a->key.file != b->key.file)
		return a->key.file < b->key.file ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/*
 * Count what restart x replaces: the records of its series before it at
 * or past its first iteration, and among them those showing a numerical
 * failure. recs[0..n): the series' record indices in input order.
 */
static void count_replaced(const struct ts_steplog *log, struct restart *x,
			   const size_t *recs, size_t n)
{
	int64_t prev = TS_NO_INT;

	for (size_t j = 0; j < n && recs[j] < x->index; j++) {
		const struct ts_step *t = &log->steps.v[recs[j]];
		int64_t before = prev;

		prev = t->iteration;
		if (t->iteration < x->iteration)
			continue;
		x->replaced++;
		if (ts_step_artefact(t->iteration, INT64_MIN, t->flags &
				     (TS_STEP_LOSS_NONFINITE | TS_STEP_GRAD_NONFINITE),
				     t->nan_iters, TS_NO_INT, t->grad_norm) == TS_ART_NONFINITE &&
		    x->bad++ == 0) {
			x->first_bad = recs[j];
			x->bad_prev = before;
		}
	}
}

/*
 * The sentence on the numerical failures among the replaced records of
 * restarts g[0..n) (empty when none): how many, and where the first is,
 * with the iterations its record stands for.
 */
static void replaced_failures(const struct ts_runmodel *rm, const struct restart *g, size_t n,
			      const size_t *recs, const size_t *start, char *why, size_t cap)
{
	const struct ts_steplog *log = &rm->log;
	const struct restart *x = NULL;
	size_t bad = 0;
	int64_t next = TS_NO_INT;
	char at[96];

	why[0] = '\0';
	for (size_t r = 0; r < n; r++) {
		bad += g[r].bad;
		if (g[r].bad && !x)
			x = &g[r];
	}
	if (!x)
		return;
	/* a series' first record reaches back by the gap to its next */
	for (size_t j = start[x->series]; j < start[x->series + 1] && next == TS_NO_INT; j++) {
		const struct ts_step *t = &log->steps.v[recs[j]];

		if (recs[j] > x->first_bad && recs[j] < x->index &&
		    t->iteration > log->steps.v[x->first_bad].iteration)
			next = t->iteration;
	}
	snprintf(why, cap, " %zu of them show%s a non-finite loss or grad norm "
		 "or NaN iterations, the first %s: the run was resumed "
		 "from before a numerical failure, which the statistics no longer see.",
		 bad, bad == 1 ? "s" : "",
		 ts_runmodel_span_words(rm, "at", "within",
					ts_record_from(x->bad_prev,
						       log->steps.v[x->first_bad].iteration, next,
						       rm->steps.log_interval),
					log->steps.v[x->first_bad].iteration, at, sizeof(at)));
}

/*
 * One resumed-log warning for the restarts g[0..n) of one file: the
 * restart itself when it is the only one, else how many ranks restarted,
 * which (the first 8), and the first restart.
 */
static int warn_resumed(struct ts_runmodel *rm, const struct restart *g, size_t n,
			const size_t *recs, const size_t *start)
{
	const char *f = rm->step_files.v[g[0].key.file];
	const struct ts_step *s = &rm->log.steps.v[g[0].index];
	char why[320], first[200], ranks[160] = "";
	size_t replaced = 0, nranks = 0, listed = 0, len = 0;

	replaced_failures(rm, g, n, recs, start, why, sizeof(why));
	for (size_t r = 0; r < n; r++) {
		int seen = 0;

		replaced += g[r].replaced;
		for (size_t q = 0; q < r && !seen; q++)
			seen = g[q].series == g[r].series;
		if (seen)
			continue;
		if (nranks++ < 8 && len < sizeof(ranks)) {
			len += (size_t)snprintf(ranks + len, sizeof(ranks) - len, "%s%d",
						listed++ ? ", " : "", g[r].key.rank);
		}
	}
	if (g[0].iteration == g[0].reached)
		snprintf(first, sizeof(first), "logs iteration %lld again at line %lld after a "
			 "restart (a checkpoint load or a new arguments dump before it: a resumed "
			 "job)", (long long)g[0].iteration, (long long)s->line);
	else
		snprintf(first, sizeof(first), "goes back from iteration %lld to %lld at line %lld "
			 "(a resumed job)", (long long)g[0].reached, (long long)g[0].iteration,
			 (long long)s->line);
	if (n == 1)
		return ts_warnings_add(&rm->warnings, "resumed-log", f, -1, g[0].iteration,
				       "%s %s: the later segment replaces %zu earlier record(s).%s",
				       f, first, replaced, why);
	return ts_warnings_add(&rm->warnings, "resumed-log", f, -1, g[0].iteration,
			       "%s %s, rank %d first: %zu rank(s) restart (%s%s), %zu restarts in "
			       "all; the later segments replace %zu earlier record(s).%s", f, first,
			       g[0].key.rank, nranks, ranks, nranks > 8 ? ", ..." : "", n,
			       replaced, why);
}

/*
 * A log whose iterations go back for one rank is a resumed job: the later
 * segment replaces every earlier record of that rank and file at or past
 * its first iteration (the job recomputed them). So is a log that logs a
 * rank's last iteration again after a process start (a record with
 * TS_STEP_RESTART or TS_STEP_AFTER_ARGS, after a checkpoint load or a new
 * arguments dump, this rank's or another's of the file since this rank's
 * last record): a job resumed from a checkpoint before that iteration
 * (until 5 Dec 2026 the two records merged as two ranks, the slower giving
 * the step). MAX_RESTARTS bounds one series' restarts (file and rank), not
 * the file's: a console of 1,024 ranks restarting once is read (until 5
 * Dec 2026 it was refused). Time and memory are linear in the records
 * (times MAX_RESTARTS at most). One warning per file. Records are
 * compacted in place, input order kept.
 */
static int resolve_resumes(struct ts_runmodel *rm, struct frank *fr, size_t nfr,
			   struct ts_err *err)
{
	struct ts_steplog *log = &rm->log;
	size_t nser = nfr ? nfr : 1, n = log->steps.n;
	int64_t *maxit = malloc(nser * sizeof(*maxit));
	/* 1 + the index of each series' last record and of each file's last
	 * process start, 0 none */
	size_t *last = calloc(nser, sizeof(*last));
	size_t *fstart = calloc(log->nfiles > 0 ? (size_t)log->nfiles : 1, sizeof(*fstart));
	size_t *nres = calloc(nser, sizeof(*nres));        /* restarts per series */
	size_t *start = calloc(nser + 1, sizeof(*start));  /* series' first in recs */
	size_t *ser = malloc((n ? n : 1) * sizeof(*ser));  /* each record's series */
	size_t *recs = malloc((n ? n : 1) * sizeof(*recs));
	int64_t *cut = malloc(nser * sizeof(*cut));        /* lowest later restart */
	unsigned char *drop = calloc(n ? n : 1, 1);       /* replaced records */
	struct restart *rs = NULL;
	size_t nrs = 0, cap = 0, out = 0, nrep = 0;
	const struct ts_step *rep = NULL;   /* the first repeated record */
	int rc = 0;

	if (!maxit || !last || !fstart || !nres || !start || !ser || !recs || !cut || !drop) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < nfr; k++)
		maxit[k] = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct ts_step *s = &log->steps.v[i];
		struct frank key = { s->file, ts_step_rank(log, s) };
		struct frank *hit = bsearch(&key, fr, nfr, sizeof(*fr), cmp_frank);
		size_t k = hit ? (size_t)(hit - fr) : 0;
		int again;

		ser[i] = hit ? k : SIZE_MAX;
		if (!hit)
			continue;
		start[k + 1]++;
		again = s->iteration == maxit[k] &&
			((s->flags & (TS_STEP_RESTART | TS_STEP_AFTER_ARGS)) ||
			 fstart[s->file] > last[k]);
		if (s->flags & (TS_STEP_RESTART | TS_STEP_AFTER_ARGS))
			fstart[s->file] = i + 1;
		last[k] = i + 1;
		if (s->iteration < maxit[k] || again) {
			if (nres[k]++ == MAX_RESTARTS) {
				rc = ts_err_at(err, TS_EUSAGE, rm->step_files.v[s->file], -1, s->line,
					       "iterations go back more than %d times for one rank: "
					       "not the log of one run", MAX_RESTARTS);
				goto out;
			}
			if (nrs == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct restart *v = realloc(rs, c * sizeof(*v));

				if (!v) {
					rc = ts_err_set(err, TS_ENOMEM, "out of memory");
					goto out;
				}
				rs = v;
				cap = c;
			}
			rs[nrs++] = (struct restart){ .key = key, .series = k, .index = i,
						      .iteration = s->iteration,
						      .reached = maxit[k] };
			maxit[k] = s->iteration;   /* the new segment's own progress */
		} else if (s->iteration == maxit[k] && nrep++ == 0) {
			rep = s;
		}
		if (s->iteration > maxit[k])
			maxit[k] = s->iteration;
	}
	/* each series' records, in input order: recs[start[k]..start[k+1]) */
	for (size_t k = 0; k < nfr; k++)
		start[k + 1] += start[k];
	memcpy(last, start, nser * sizeof(*last));
	for (size_t i = 0; i < n; i++)
		if (ser[i] != SIZE_MAX)
			recs[last[ser[i]]++] = i;
	for (size_t r = 0; r < nrs; r++) {
		/* its process starts over: compilation, allocator warm-up */
		log->steps.v[rs[r].index].flags |= TS_STEP_RESTART;
		count_replaced(log, &rs[r], recs + start[rs[r].series],
			       start[rs[r].series + 1] - start[rs[r].series]);
	}
	/* a record is dropped when a later restart of its series starts at or
	 * below its iteration: walk back (rs is in record order), keeping each
	 * series' lowest */
	for (size_t k = 0; k < nfr; k++)
		cut[k] = INT64_MAX;
	for (size_t i = n, r = nrs; i-- > 0;) {
		size_t k = ser[i];

		drop[i] = k != SIZE_MAX && log->steps.v[i].iteration >= cut[k];
		if (r > 0 && rs[r - 1].index == i) {
			r--;
			if (rs[r].iteration < cut[k])
				cut[k] = rs[r].iteration;
		}
	}
	ts_sort(rs, nrs, sizeof(*rs), cmp_restart);
	for (size_t r = 0, e; r < nrs; r = e) {
		for (e = r + 1; e < nrs && rs[e].key.file == rs[r].key.file; e++)
			;
		if (warn_resumed(rm, rs + r, e - r, recs, start)) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* the same iteration again for one rank without going back: lines of
	 * several ranks without a rank prefix look so, and steps.h's merge
	 * takes them as ranks (the slowest gives the step time) */
	if (nrep && ts_warnings_add(&rm->warnings, "repeated-records", rm->step_files.v[rep->file],
				    -1, rep->iteration, "%s logs iteration %lld again for one rank at "
				    "line %lld (%zu repeated record%s in all): read as the lines of "
				    "several ranks printed without a rank prefix (torchrun without --tee "
				    "or --log-line-prefix-template), the slowest record gives the "
				    "iteration's step time; which rank printed which line, and so the "
				    "per-rank figures, cannot be told; give one file per rank.",
				    rm->step_files.v[rep->file], (long long)rep->iteration,
				    (long long)rep->line, nrep, nrep == 1 ? "" : "s")) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	/* the most-restarted rank's log: ranks restart together, so summing
	 * over them counted one restart of 1,024 ranks as 1,025 segments */
	rm->resumed_segments = 0;
	for (size_t k = 0; k < nfr; k++)
		if (nres[k] && nres[k] + 1 > rm->resumed_segments)
			rm->resumed_segments = nres[k] + 1;
	for (size_t i = 0; i < n; i++)
		if (!drop[i])
			log->steps.v[out++] = log->steps.v[i];
	log->steps.n = out;
out:
	free(maxit);
	free(last);
	free(fstart);
	free(nres);
	free(start);
	free(ser);
	free(recs);
	free(cut);
	free(drop);
	free(rs);
	return rc;
}

/*
 * The warm-up of a restarted process whose later records are idx[from,
 * to): its leading timed records up to the last spike against the
 * segment's median (modified z above TS_STATS_MODZ_OUTLIER and
 * TS_SPIKE_MIN_REL slower) that keeps spikes at least half of them (a
 * prefetched batch can make one warm-up step fast), with the untimed
 * records among them; none when they are more than a fifth of its m timed
 * records (x: their times). TS_ENOMEM only.
 */
static int flag_warmup(struct ts_steplog *log, const size_t *idx, size_t from, size_t to,
		       const double *x, size_t m)
{
	double med, mad, lim;
	size_t slow = 0;

	if (m < TS_STEADY_MIN_STEPS)
		return 0;
	if (ts_stats_median_mad(x, m, &med, &mad))
		return TS_ENOMEM;
	lim = fmax(TS_SPIKE_MIN_REL * med, TS_STATS_MODZ_OUTLIER * mad / TS_STATS_MODZ_K);
	for (size_t i = 0, spikes = 0; i < m && 2 * spikes + 2 >= i; i++)
		if (x[i] - med > lim && 2 * ++spikes >= i + 1)
			slow = i + 1;
	if (slow == 0 || slow * 5 > m)
		return 0;
	for (size_t j = from; j < to && slow; j++) {
		struct ts_step *s = &log->steps.v[idx[j]];

		s->flags |= TS_STEP_RESTART_WARMUP;
		if (s->step_ns != TS_NO_INT)
			slow--;
	}
	return 0;
}

static int restart_warmups(struct ts_runmodel *rm, const struct frank *fr, size_t nfr,
			   struct ts_err *err)
{
	struct ts_steplog *log = &rm->log;
	size_t n = log->steps.n, nr = 0, *start = NULL, *fill = NULL, *series = NULL, *idx = NULL;
	double *x = NULL;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		nr += (log->steps.v[i].flags & TS_STEP_RESTART) != 0;
	if (nr == 0)
		return 0;
	start = calloc(nfr + 1, sizeof(*start));
	fill = malloc((nfr + 1) * sizeof(*fill));
	series = malloc(n * sizeof(*series));
	idx = malloc(n * sizeof(*idx));
	x = malloc(n * sizeof(*x));
	if (!start || !fill || !series || !idx || !x) {
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
		goto out;
	}
	/* counting sort of the record indices by series, record order kept */
	for (size_t i = 0; i < n; i++) {
		const struct ts_step *s = &log->steps.v[i];
		struct frank key = { s->file, ts_step_rank(log, s) };
		const struct frank *hit = bsearch(&key, fr, nfr, sizeof(*fr), cmp_frank);

		series[i] = hit ? (size_t)(hit - fr) : SIZE_MAX;
		if (hit)
			start[series[i] + 1]++;
	}
	for (size_t k = 0; k < nfr; k++)
		start[k + 1] += start[k];
	memcpy(fill, start, (nfr + 1) * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		if (series[i] != SIZE_MAX)
			idx[fill[series[i]]++] = i;
	for (size_t k = 0; k < nfr; k++) {
		size_t hi = start[k + 1];

		for (size_t j = start[k] + 1; j < hi;) {
			size_t end = j + 1, m = 0;

			if (!(log->steps.v[idx[j]].flags & TS_STEP_RESTART)) {
				j++;
				continue;
			}
			while (end < hi && !(log->steps.v[idx[end]].flags & TS_STEP_RESTART))
				end++;
			for (size_t q = j + 1; q < end; q++)
				if (log->steps.v[idx[q]].step_ns != TS_NO_INT)
					x[m++] = (double)log->steps.v[idx[q]].step_ns;
			if (flag_warmup(log, idx, j + 1, end, x, m)) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				goto out;
			}
			j = end;
		}
	}
out:
	free(start);
	free(fill);
	free(series);
	free(idx);
	free(x);
	return rc;
}

static int identity(struct ts_runmodel *rm, struct ts_err *err)
{
	TS_VEC(struct frank) fr = { 0 };
	struct frank last = { -1, INT32_MIN };
	size_t u = 0;
	int rc = 0;

	for (size_t i = 0; i < rm->log.steps.n; i++) {
		const struct ts_step *s = &rm->log.steps.v[i];
		struct frank k = { s->file, ts_step_rank(&rm->log, s) };

		if (k.file == last.file && k.rank == last.rank)
			continue;
		last = k;
		if (TS_VEC_PUSH(fr, k)) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			goto out;
		}
	}
	ts_sort(fr.v, fr.n, sizeof(*fr.v), cmp_frank);
	for (size_t i = 0; i < fr.n; i++)
		if (!u || cmp_frank(&fr.v[i], &fr.v[u - 1]))
			fr.v[u++] = fr.v[i];
	if ((rc = check_identity(rm, fr.v, u, err)))
		goto out;
	if ((rc = resolve_resumes(rm, fr.v, u, err)))
		goto out;
	rc = restart_warmups(rm, fr.v, u, err);
out:
	TS_VEC_RELEASE(fr);
	return rc;
}

/*
 * Traces of one job share its world size ("distributedInfo": {...,
 * "world_size": N} in the first events of a Kineto trace). Traces that
 * disagree are different jobs: refused with the list. A trace that cannot
 * be read, or does not say, takes no part.
 */
#define WORLD_SNIFF ((size_t)64 << 10)

static int64_t trace_world_size(const char *path)
{
	static const char key[] = "\"world_size\"";
	struct ts_input in;
	struct ts_err e;
	const unsigned char *hit;
	int64_t ws = -1;

	ts_err_init(&e);
	if (ts_input_open(&in, path, &e))
		return -1;
	while (in.len < WORLD_SNIFF && !in.eof && ts_input_more(&in, 0, &e) > 0)
		;
	hit = in.len ? memmem(in.data, in.len < WORLD_SNIFF ? in.len : WORLD_SNIFF, key,
			      sizeof(key) - 1) : NULL;
	if (hit) {
		size_t k = (size_t)(hit - in.data) + sizeof(key) - 1;

		while (k < in.len && (in.data[k] == ' ' || in.data[k] == ':'))
			k++;
		if (k < in.len && in.data[k] >= '0' && in.data[k] <= '9') {
			ws = 0;
			while (k < in.len && in.data[k] >= '0' && in.data[k] <= '9' && ws < (1 << 30))
				ws = ws * 10 + (in.data[k++] - '0');
		}
	}
	ts_input_release(&in);
	return ws;
}

static int trace_jobs(struct ts_runmodel *rm, struct ts_err *err)
{
	int64_t first_ws = -1;
	const char *first = NULL;
	struct ts_sb sb;
	int differ = 0, rc = 0;

	ts_sb_init(&sb);
	for (size_t i = 0; i < rm->inputs.n; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];
		int64_t ws;

		if (in->role != TS_ROLE_TRACE || (ws = trace_world_size(in->path)) < 0)
			continue;
		ts_sb_addf(&sb, "%s%s (world size %lld)", sb.len ? ", " : "", in->path, (long long)ws);
		if (!first) {
			first = in->path;
			first_ws = ws;
		} else if (ws != first_ws) {
			differ = 1;
		}
	}
	if (differ)
		rc = ts_err_at(err, TS_EUSAGE, rm->root, -1, -1, "holds traces of different jobs: %s; "
			       "give one run directory", sb.failed ? "(out of memory)" : sb.buf);
	ts_sb_release(&sb);
	return rc;
}

/* ------------------------------------------------------------ window */

/* One group per reason and side of the window (a level shift may cut
 * steps on both sides): its first and last iteration and its count. */
static void excl_add(struct ts_window_obj *w, const char *reason, int64_t it)
{
	struct ts_window_excl *e = NULL;

	for (size_t i = 0; i < w->nexcl && !e; i++)
		if (strcmp(w->excl[i].reason, reason) == 0 &&
		    (w->excl[i].first > w->last) == (it > w->last))
			e = &w->excl[i];
	if (!e) {
		if (w->nexcl == sizeof(w->excl) / sizeof(*w->excl))
			return;
		e = &w->excl[w->nexcl++];
		e->reason = reason;
		e->first = it;
		e->steps = 0;
	}
	e->last = it;
	e->steps++;
}

/* Why timed step i of the analysed series is no step of the window
 * [first, last] (a ts_window_excl reason), NULL when it is one; auto_cut
 * names the warm-up and level-shift groups of an automatic window. */
static const char *step_reason(const struct ts_steps_report *r, size_t i, int64_t first,
			       int64_t last, int auto_cut)
{
	int64_t it = r->iter[i];
	const char *artefact = r->artefact[i] ? ts_step_artefact_name(r->artefact[i]) : NULL;

	if (ts_record_in_window(ts_steps_record_from(r, i), it, first, last))
		return artefact;
	/* a step left out for what it is (a NaN loss, a profiled step) is no
	 * level of the run's step time */
	if (it > last)
		return !auto_cut ? "after-window" : artefact ? artefact : "level-shift";
	if (!auto_cut)
		return "before-window";
	if (r->dropped_first && it <= r->first_cut)
		return "first-iteration";
	if (r->ramp_end_iteration != TS_NO_INT && it < r->ramp_end_iteration)
		return "batch-size-ramp-up";
	if (r->mser_cut_iteration != TS_NO_INT && it < r->mser_cut_iteration)
		return "warm-up";
	return artefact ? artefact : "level-shift";
}

/* The window object of [first, last] over the analysed series. */
static void window_build(const struct ts_steps_report *r, int64_t first, int64_t last,
			 const char *method, int auto_cut, struct ts_window_obj *w)
{
	memset(w, 0, sizeof(*w));
	w->first = first;
	w->last = last;
	w->method = method;
	if (first == TS_NO_INT) {
		w->method = "none";
		return;
	}
	for (size_t i = 0; i < r->n; i++) {
		const char *why;

		if (!isfinite(r->step_ms[i]))
			continue;
		why = step_reason(r, i, first, last, auto_cut);
		if (why)
			excl_add(w, why, r->iter[i]);
		else
			w->steps++;
	}
}

const char *ts_runmodel_step_window(const struct ts_runmodel *rm, int64_t it)
{
	const struct ts_steps_report *r = &rm->steps;
	size_t l = ts_lower_bound(r->iter, r->n, sizeof(*r->iter), &it, ts_i64_below);
	const char *why;

	if (l == r->n || r->iter[l] != it || !isfinite(r->step_ms[l]))
		return "untimed";
	if (rm->window.first == TS_NO_INT)
		return r->artefact[l] ? ts_step_artefact_name(r->artefact[l]) : "no-window";
	why = step_reason(r, l, rm->window.first, rm->window.last, rm->window_source == 0);
	return why ? why : "in";
}

void ts_runmodel_window(const struct ts_runmodel *rm, int64_t first, int64_t last,
			struct ts_window_obj *w)
{
	int64_t lo = TS_NO_INT, hi = TS_NO_INT;

	/* a range reaching past the series is the run's window when it
	 * holds the same steps (a declared 200:2000 of a log ending at 300
	 * is steps' 200:300) */
	for (size_t i = 0; i < rm->steps.n; i++) {
		if (lo == TS_NO_INT || rm->steps.iter[i] < lo)
			lo = rm->steps.iter[i];
		if (hi == TS_NO_INT || rm->steps.iter[i] > hi)
			hi = rm->steps.iter[i];
	}
	if (first != TS_NO_INT && lo != TS_NO_INT) {
		first = first > lo ? first : lo;
		last = last < hi ? last : hi;
	}
	if (first == rm->window.first && last == rm->window.last) {
		*w = rm->window;
		return;
	}
	window_build(&rm->steps, first, last, "matched", 0, w);
}

/* ------------------------------------------------------------ warnings */

static const char *const note_codes[] = {
	"", "joined-records", "broken-records", "truncated-log", "bad-json-line", "unattached-line"
};

/* One warning per file and kind of log note (a long log can have many). */
/* One ignored-values warning with the count per kind (logs.h). */
static int ignored_warning(struct ts_runmodel *rm)
{
	const struct ts_steplog *log = &rm->log;
	char what[256];
	size_t len = 0;
	uint64_t total = 0;

	what[0] = 0;
	for (int k = 0; k < TS_IGN_COUNT; k++) {
		if (!log->ignored[k])
			continue;
		total += log->ignored[k];
		if (len < sizeof(what) - 40)
			len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s %llu",
						 len ? ", " : "", ts_ignored_name(k),
						 (unsigned long long)log->ignored[k]);
	}
	if (!total)
		return 0;
	return ts_warnings_add(&rm->warnings, "ignored-values", NULL, -1, TS_NO_INT,
			       "%llu unusable step times or iterations were dropped (%s); --strict "
			       "rejects them.", (unsigned long long)total, what);
}

/* One step-time-below-resolution warning for step times printed as
 * zero (logs.h: zero_steptimes); the first one's resolution says why it
 * is none: a print's or two stamps', or none for a full float (JSONL). */
static int zero_warning(struct ts_runmodel *rm)
{
	const struct ts_steplog *log = &rm->log;
	const char *file;
	char it[48] = "", why[160];

	if (!log->zero_steptimes)
		return 0;
	file = log->zero_file >= 0 && log->zero_file < log->nfiles ?
	       rm->step_files.v[log->zero_file] : NULL;
	if (log->zero_iteration != TS_NO_INT)
		snprintf(it, sizeof(it), ", iteration %lld", (long long)log->zero_iteration);
	if (log->zero_res_ms > 0 && log->zero_res_ms < 1e-6)
		snprintf(why, sizeof(why), "written above zero but under half a nanosecond, the "
			 "resolution step times are kept to, so not a real step time");
	else if (log->zero_res_ms > 0)
		snprintf(why, sizeof(why), "shorter than the print resolves (%.3g ms), not a 0 ms "
			 "step", log->zero_res_ms);
	else
		snprintf(why, sizeof(why), "written as a full float, so a genuine zero or a bug "
			 "in the writer, not a 0 ms step");
	return ts_warnings_add(&rm->warnings, "step-time-below-resolution", file, -1,
			       log->zero_iteration, "%s: %llu record(s) print a step time of "
			       "zero, the first at line %lld%s: %s; their step time is unknown and "
			       "left out of the step-time statistics (their loss and health are "
			       "kept).", file ? file : "input",
			       (unsigned long long)log->zero_steptimes, (long long)log->zero_line,
			       it, why);
}

static int note_warnings(struct ts_runmodel *rm)
{
	const struct ts_steplog *log = &rm->log;
	size_t nk = sizeof(note_codes) / sizeof(*note_codes), cells = (size_t)log->nfiles * nk;
	size_t *count = calloc(cells ? cells : 1, sizeof(*count));
	size_t *first = calloc(cells ? cells : 1, sizeof(*first));
	int rc = 0;

	if (!count || !first) {
		rc = TS_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < log->notes.n; i++) {
		const struct ts_log_note *n = &log->notes.v[i];
		size_t c = (size_t)n->file * nk + (size_t)n->kind;

		if (n->file < 0 || n->file >= log->nfiles || n->kind <= 0 || (size_t)n->kind >= nk)
			continue;
		if (!count[c]++)
			first[c] = i;
	}
	for (size_t c = 0; c < cells && !rc; c++) {
		const struct ts_log_note *n = count[c] ? &log->notes.v[first[c]] : NULL;
		const char *file = n ? rm->step_files.v[n->file] : NULL;

		if (!n)
			continue;
		if (count[c] == 1)
			rc = ts_warnings_add(&rm->warnings, note_codes[n->kind], file,
					     (int64_t)n->offset, TS_NO_INT, "%s: line %lld: %s.",
					     file, (long long)n->line, n->msg);
		else if (count[c] > 1)
			rc = ts_warnings_add(&rm->warnings, note_codes[n->kind], file,
					     (int64_t)n->offset, TS_NO_INT,
					     "%s: line %lld: %s (%zu notes of this kind in this file).",
					     file, (long long)n->line, n->msg, count[c]);
	}
out:
	free(count);
	free(first);
	return rc;
}

/* A file's records, and those numbered by their place (TS_STEP_ORDINAL). */
struct ord_count {
	size_t records, ordinal;
	int64_t first, last;      /* lowest and highest ordinal */
	int64_t line;             /* line of the first ordinal record */
};

/*
 * One ordinal-steps warning per file whose log prints no step number for
 * some records: the reader numbered them by their place (logs.h), so every
 * iteration named for them is a record ordinal, not an optimizer step.
 * A declared or contract window (window_source, first:last) is read on
 * those numbers and the warning says so.
 */
static int ordinal_warnings(struct ts_runmodel *rm, int64_t first, int64_t last)
{
	const struct ts_steplog *log = &rm->log;
	struct ord_count *c = calloc(log->nfiles > 0 ? (size_t)log->nfiles : 1, sizeof(*c));
	char win[160];
	int rc = 0;

	if (!c)
		return TS_ENOMEM;
	rm->nordinal = 0;
	for (size_t i = 0; i < log->steps.n; i++) {
		const struct ts_step *s = &log->steps.v[i];
		struct ord_count *f;

		if (s->file < 0 || s->file >= log->nfiles)
			continue;
		f = &c[s->file];
		f->records++;
		if (!(s->flags & TS_STEP_ORDINAL))
			continue;
		if (!f->ordinal++) {
			f->first = f->last = s->iteration;
			f->line = s->line;
		}
		f->first = s->iteration < f->first ? s->iteration : f->first;
		f->last = s->iteration > f->last ? s->iteration : f->last;
		rm->nordinal++;
	}
	win[0] = 0;
	if (rm->window_source)
		snprintf(win, sizeof(win), " The %s window %lld:%lld is read on these numbers: "
			 "records %lld to %lld, not optimizer steps.",
			 rm->window_source == 2 ? "contract's" : "declared", (long long)first,
			 (long long)last, (long long)first, (long long)last);
	for (int k = 0; k < log->nfiles && !rc; k++) {
		const struct ord_count *f = &c[k];
		const char *file = rm->step_files.v[k];

		if (!f->ordinal)
			continue;
		if (f->ordinal == f->records)
			rc = ts_warnings_add(&rm->warnings, "ordinal-steps", file, -1, TS_NO_INT,
					     "%s: the log prints no step numbers, so its %zu records "
					     "are numbered %lld..%lld in their order: these are record "
					     "ordinals, not optimizer steps, and each record may cover "
					     "logging_steps optimizer steps (a Hugging Face Trainer logs "
					     "every logging_steps steps: record K covers steps "
					     "(K-1) x logging_steps + 1 to K x logging_steps).%s",
					     file, f->records, (long long)f->first, (long long)f->last,
					     win);
		else
			rc = ts_warnings_add(&rm->warnings, "ordinal-steps", file, -1, TS_NO_INT,
					     "%s: %zu of its %zu records print no step number (the "
					     "first at line %lld), so they are numbered on from the "
					     "record before them in their order (%lld..%lld): those are "
					     "record ordinals, not optimizer steps, and each may cover "
					     "logging_steps optimizer steps (a Hugging Face Trainer logs "
					     "every logging_steps steps).%s",
					     file, f->ordinal, f->records, (long long)f->line,
					     (long long)f->first, (long long)f->last, win);
	}
	free(c);
	return rc;
}

/* What a non-finite verdict's cause is, in words. */
static const char *nonfinite_words(const struct ts_loss_health *h)
{
	switch (h->cause) {
	case TS_LOSS_CAUSE_LOSS: return "the loss is NaN or infinite";
	case TS_LOSS_CAUSE_EXTRA_LOSS: return "an extra loss is NaN or infinite";
	case TS_LOSS_CAUSE_GRAD_NORM: return "the grad norm is NaN or infinite";
	case TS_LOSS_CAUSE_NAN_COUNTER: return "the framework counts NaN iterations";
	default: return "a loss value is not finite";
	}
}

static int steps_warnings(struct ts_runmodel *rm)
{
	const struct ts_steps_report *r = &rm->steps;
	struct ts_warnings *w = &rm->warnings;
	char first_at[96], who[1200];
	const char *count_word = rm->nordinal && rm->nordinal == rm->log.steps.n ? "record"
									      : "iteration";
	int rc = 0;

	/* the loss health travels as a warning too: a NaN run is never only
	 * a line of the loss section */
	if (r->health.verdict == TS_LOSS_NONFINITE)
		rc |= ts_warnings_add(w, "loss-not-finite", NULL, -1, r->health.first_bad_iteration,
				      "The training is not numerically healthy: %s %s "
				      "(%lld %s%s with non-finite evidence%s); those steps are left "
				      "out of the step statistics.",
				      nonfinite_words(&r->health),
				      ts_runmodel_span_words(rm, "from", "from within", r->health.first_bad_possible,
							     r->health.first_bad_iteration, first_at,
							     sizeof(first_at)),
				      (long long)r->health.nbad_iterations, count_word,
				      r->health.nbad_iterations == 1 ? "" : "s",
				      ts_runmodel_first_bad_words(rm, who, sizeof(who)));
	else if (r->health.verdict == TS_LOSS_MISSING &&
		 r->health.cause == TS_LOSS_CAUSE_LOSS_DROPPED)
		rc |= ts_warnings_add(w, "loss-missing", NULL, -1, r->health.first_bad_iteration,
				      "The loss stops being logged %s (Megatron prints "
				      "only a loss above 0, so a NaN loss is dropped): its health is "
				      "unknown from there.",
				      ts_runmodel_span_words(rm, "at", "within", r->health.first_bad_possible,
							     r->health.first_bad_iteration, first_at,
							     sizeof(first_at)));
	if (r->warnings & TS_WARN_NO_TIME)
		rc |= ts_warnings_add(w, "no-step-times", NULL, -1, TS_NO_INT,
				      "The step records carry no step times, so there is no "
				      "step-time statistic.");
	if (r->warnings & TS_WARN_NO_STEADY)
		rc |= ts_warnings_add(w, "no-steady-state", NULL, -1, r->mser_cut_iteration,
				      "MSER-5 finds no steady state: its warm-up cut stops at its bound, "
				      "half of the usable steps (iteration %lld), so the window starts "
				      "there and the step time may still be changing.",
				      (long long)r->mser_cut_iteration);
	if (r->warnings & TS_WARN_LONG_WARMUP)
		rc |= ts_warnings_add(w, "long-warmup", NULL, -1, r->mser_cut_iteration,
				      "The warm-up lasts until iteration %lld, more than 20 %% of the "
				      "logged steps.", (long long)r->mser_cut_iteration);
	if (r->warnings & TS_WARN_LEVEL_SHIFT)
		rc |= ts_warnings_add(w, "level-shift", NULL, -1, r->level_shift_iteration,
				      "The step time shifts level at iteration %lld; the window is "
				      "the longest steady segment.", (long long)r->level_shift_iteration);
	if (r->warnings & TS_WARN_SHORT)
		rc |= ts_warnings_add(w, "short-window", NULL, -1, TS_NO_INT,
				      "The window spans %lld iterations (%lld:%lld), fewer than %d: "
				      "its interval may be optimistic.",
				      (long long)(r->win_last - r->win_first + 1),
				      (long long)r->win_first, (long long)r->win_last, MIN_WINDOW);
	if (r->warnings & TS_WARN_NOISY)
		rc |= ts_warnings_add(w, "noisy", NULL, -1, TS_NO_INT,
				      "The step time varies with a CV of %.1f %% over the window "
				      "(more than 10 %%).", r->cv * 100);
	if (r->warnings & TS_WARN_STALLS) {
		char period[96] = "";

		if (r->periodic.found)
			snprintf(period, sizeof(period), "; they recur every %lld iterations",
				 (long long)r->periodic_period_iters);
		rc |= ts_warnings_add(w, "stalls", NULL, -1, TS_NO_INT,
				      "%zu of the window's %zu steps stall%s (%.1f %% of its time in "
				      "excess of their moving median%s): the mean step time keeps "
				      "them.", r->win_nstalls, r->win_n, r->win_nstalls == 1 ? "s" : "",
				      100 * r->win_stall_share, period);
	}
	if (r->warnings & TS_WARN_DRIFT)
		rc |= ts_warnings_add(w, "drift", NULL, -1, TS_NO_INT,
				      "The step time %s over the window: %+.1f %% from its start to its "
				      "end (Theil-Sen slope over %zu steps, monotone across its 10 blocks: "
				      "Mann-Kendall S %d); it is not steady (a leak, fragmentation, "
				      "throttling?), so its mean depends on where the window ends.",
				      r->drift.change > 0 ? "rises" : "falls", 100 * r->drift.change,
				      r->win_n, r->drift.kendall_s);
	if (r->warnings & TS_WARN_NO_USABLE) {
		static const char *const why[TS_ART_COUNT] = {
			[TS_ART_FIRST] = "hold iteration 1",
			[TS_ART_PROFILER] = "were profiled or exported a trace",
			[TS_ART_CHECKPOINT] = "follow a checkpoint save",
			[TS_ART_EVAL] = "follow an evaluation",
			[TS_ART_NONFINITE] = "have a NaN/Inf loss or grad norm",
			[TS_ART_SKIPPED] = "have skipped iterations",
			[TS_ART_RESTART] = "start a resumed job",
		};
		char list[256];
		size_t len = 0, total = 0;

		list[0] = 0;
		for (int k = TS_ART_FIRST; k < TS_ART_COUNT; k++) {
			total += r->unusable[k];
			if (r->unusable[k] && len < sizeof(list))
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%zu %s",
							len ? ", " : "", r->unusable[k], why[k]);
		}
		rc |= ts_warnings_add(w, "no-usable-steps", NULL, -1, TS_NO_INT,
				      "None of the %zu timed records can be a steady step (%s): there "
				      "is no step time.", total, list);
	}
	if (r->warnings & TS_WARN_GBS_VARIES)
		rc |= ts_warnings_add(w, "gbs-varies", NULL, -1, TS_NO_INT,
				      "The global batch size changes inside the window (%lld to %lld "
				      "sequences, a batch-size ramp-up?): tokens per step is the window's "
				      "mean batch, and tokens/s counts each step's own.",
				      (long long)r->gbs_min, (long long)r->gbs_max);
	if (r->warnings & TS_WARN_GBS_RAMP)
		rc |= ts_warnings_add(w, "batch-size-ramp-up", NULL, -1, r->ramp_end_iteration,
				      "The global batch size ramps up from %lld to %lld sequences "
				      "until iteration %lld (a batch-size ramp-up): the run's own batch "
				      "starts there, and an automatic window and the warm-up cut start "
				      "no earlier.",
				      (long long)r->ramp_gbs_first, (long long)r->ramp_gbs_last,
				      (long long)r->ramp_end_iteration);
	if (r->warnings & TS_WARN_FEW_STEPS)
		rc |= ts_warnings_add(w, "few-steps", NULL, -1, TS_NO_INT,
				      "The window holds %zu usable timed step%s, fewer than %d: its "
				      "numbers describe those steps only, with no interval; it is no "
				      "steady-state estimate (validate and ab need at least %d).",
				      r->win_n, r->win_n == 1 ? "" : "s", TS_STEADY_MIN_STEPS,
				      TS_STEADY_MIN_STEPS);
	if (r->warnings & TS_WARN_CI_TOO_WIDE)
		rc |= ts_warnings_add(w, "too-few-steps", NULL, -1, TS_NO_INT,
				      "The 95 %% CI of the mean step time would reach below 0 ms: the "
				      "window's %zu steps are too few (or too spread) for an interval, "
				      "so none is reported.", r->win_n);
	if (r->warnings & TS_WARN_AUTOCORR)
		rc |= ts_warnings_add(w, "autocorrelated", NULL, -1, TS_NO_INT,
				      "Consecutive step times are correlated: the lag-1 "
				      "autocorrelation of the interval's %zu batch means is %.2f (above "
				      "0.2; of single steps %.2f); the interval accounts for it.",
				      r->ci.batches, r->ci.lag1_batches, r->acf.lag1);
	return rc ? TS_ENOMEM : 0;
}

/* ------------------------------------------------------------ profiled steps */

/*
 * Iterations a profiler trace captured, from its "ProfilerStep#N" names:
 * torch 2.x numbers them as the iteration, the legacy pre-Kineto exporter
 * (torch 1.x) one lower (../shared/data/traces/cpu/README.txt). Streams the
 * (inflated) file once; appends to *set.
 */
#define PROFILED_MAX 100000
struct i64_vec {
	int64_t *v;
	size_t n, cap;
};

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* ... and *cut_at, when the JSON object ends without its closing '}' (a
 * plain file cut short, which its bytes alone cannot tell otherwise): the
 * bytes read, -1 when it ends well. A JSON array may end without its ']'
 * (the trace event format allows it), so only the object form is judged. */
static int scan_profiled(const char *path, int legacy, struct i64_vec *set, int64_t *cut_at,
			 struct ts_err *err)
{
	static const char pat[] = "ProfilerStep#";
	struct ts_input in;
	size_t pos = 0;
	int rc, first = -1;

	*cut_at = -1;
	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	for (;;) {
		for (size_t k = 0; first < 0 && k < in.len; k++)
			if (!is_ws(in.data[k]))
				first = in.data[k];
		const unsigned char *hit = NULL;
		if (pos < in.len)
			hit = memmem(in.data + pos, in.len - pos, pat, sizeof(pat) - 1);
		if (hit) {
			size_t k = (size_t)(hit - in.data) + sizeof(pat) - 1;
			int64_t v = 0;
			int digits = 0;
			if (k + 20 > in.len && !in.eof) {
				pos = (size_t)(hit - in.data);
				goto more;
			}
			while (k < in.len && digits < 18 && in.data[k] >= '0' && in.data[k] <= '9') {
				v = v * 10 + (in.data[k++] - '0');
				digits++;
			}
			if (digits && set->n < PROFILED_MAX && TS_VEC_PUSH(*set, v + (legacy ? 1 : 0))) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				break;
			}
			pos = k;
			continue;
		}
		if (in.eof)
			break;
		pos = in.len > sizeof(pat) ? in.len - sizeof(pat) : 0;
more:
		{
			int64_t got = ts_input_more(&in, pos, err);
			if (got < 0) {
				rc = (int)got;
				break;
			}
			pos = 0;
			if (got == 0 && in.eof && !memmem(in.data, in.len, pat, sizeof(pat) - 1))
				break;
		}
	}
	if (!rc) {
		/* the window still holds the input's last bytes */
		size_t e = in.len;
		while (e > 0 && is_ws(in.data[e - 1]))
			e--;
		if (first == '{' && e > 0 && in.data[e - 1] != '}')
			*cut_at = (int64_t)(in.base + in.len);
	}
	ts_input_release(&in);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Flag the step records of profiled iterations, and of the one after each
 * captured range (the trace export runs at its start), as TS_STEP_PROFILED.
 * it is sorted here; records are scanned once (binary search per record).
 */
static void mark_profiled(struct ts_steplog *log, int64_t *it, size_t n)
{
	if (!n)
		return;
	ts_sort(it, n, sizeof(*it), cmp_i64);
	for (size_t q = 0; q < log->steps.n; q++) {
		struct ts_step *s = &log->steps.v[q];
		int64_t before = s->iteration - 1;
		/* first captured iteration >= s->iteration - 1 */
		size_t lo = ts_lower_bound(it, n, sizeof(*it), &before, ts_i64_below);

		for (size_t k = lo; k < n && it[k] <= s->iteration; k++) {
			int follows_range_end = it[k] == s->iteration - 1 &&
						(k + 1 >= n || it[k + 1] > s->iteration);
			if (it[k] == s->iteration || follows_range_end)
				s->flags |= TS_STEP_PROFILED;
		}
	}
}

/* Scan every trace of the run; one that cannot be scanned is a warning. */
static int profiled(struct ts_runmodel *rm, struct ts_err *err)
{
	struct i64_vec set = { 0 };
	int rc = 0;

	for (size_t i = 0; i < rm->inputs.n && !rc; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];
		struct ts_err terr;
		char buf[TS_ERR_MSG_MAX + TS_ERR_PATH_MAX];
		int64_t cut_at;

		if (in->role != TS_ROLE_TRACE)
			continue;
		ts_err_init(&terr);
		rc = scan_profiled(in->path, in->kind == TS_KIND_LEGACY_TRACE, &set, &cut_at, &terr);
		if (rc == TS_ENOMEM)
			break;
		if (!rc && cut_at >= 0) {
			rc = ts_warnings_add(&rm->warnings, "truncated-trace", in->path, cut_at,
					     TS_NO_INT, "%s is truncated (its JSON ends at byte %lld "
					     "without the closing '}'): only the events before the cut are "
					     "used.", in->path, (long long)cut_at);
			continue;
		}
		if (!rc)
			continue;
		if (rc == TS_ETRUNC) {
			/* the steps found before the cut still count */
			rc = ts_warnings_add(&rm->warnings, "truncated-trace", in->path, terr.offset,
					     TS_NO_INT, "%s is truncated (its compressed stream ends "
					     "early): only the events before the cut are used.", in->path);
			continue;
		}
		ts_err_format(&terr, buf, sizeof(buf));
		rc = ts_warnings_add(&rm->warnings, "unused-input", in->path, terr.offset, TS_NO_INT,
				     "%s cannot be scanned for profiled steps (%s); they are not "
				     "excluded from the window.", in->path, buf);
	}
	if (!rc) {
		rm->nprofiled = set.n;
		mark_profiled(&rm->log, set.v, set.n);
	}
	TS_VEC_RELEASE(set);
	return rc ? ts_err_set(err, TS_ENOMEM, "out of memory") : 0;
}

/* ------------------------------------------------------------ load */

static int contract_window(struct ts_runmodel *rm, int64_t *first, int64_t *last)
{
	struct ts_contract c;
	struct ts_err cerr;
	int rc = -1;

	if (!rm->contract)
		return -1;
	ts_contract_init(&c);
	ts_err_init(&cerr);
	if (ts_contract_read(&c, rm->contract, &cerr) == 0)
		rc = ts_window_parse(ts_contract_get(&c, "workload.steady_window", NULL), first, last);
	ts_contract_release(&c);
	return rc;
}

struct it_ix {
	int64_t iteration;
	size_t ix;
};

static int it_ix_below(const void *elem, const void *it)
{
	return ((const struct it_ix *)elem)->iteration < *(const int64_t *)it;
}

static int cmp_it_ix(const void *a, const void *b)
{
	const struct it_ix *x = a, *y = b;

	if (x->iteration != y->iteration)
		return (x->iteration > y->iteration) - (x->iteration < y->iteration);
	return (x->ix > y->ix) - (x->ix < y->ix);
}

static int nan_evidence(const struct ts_step *s)
{
	return (s->flags & (TS_STEP_LOSS_NONFINITE | TS_STEP_GRAD_NONFINITE)) ||
	       (s->nan_iters != TS_NO_INT && s->nan_iters > 0);
}

/* Mark the step records of iteration it (ix sorted by iteration) with the
 * non-finite evidence of spare record s. Returns the records that had
 * none before; *any is set when a record of that iteration exists. */
static size_t mark_iteration(struct ts_steplog *log, const struct it_ix *ix, size_t n,
			     const struct ts_step *s, int *any)
{
	size_t lo = ts_lower_bound(ix, n, sizeof(*ix), &s->iteration, it_ix_below), fresh = 0;

	*any = lo < n && ix[lo].iteration == s->iteration;
	for (; lo < n && ix[lo].iteration == s->iteration; lo++) {
		struct ts_step *t = &log->steps.v[ix[lo].ix];

		if (!nan_evidence(t)) {
			fresh++;
			t->flags |= TS_STEP_HEALTH_FROM_LOG;
		}
		t->flags |= s->flags & (TS_STEP_LOSS_NONFINITE | TS_STEP_GRAD_NONFINITE);
		if (s->nan_iters != TS_NO_INT && s->nan_iters > 0 &&
		    (t->nan_iters == TS_NO_INT || t->nan_iters < s->nan_iters))
			t->nan_iters = s->nan_iters;
	}
	return fresh;
}

/*
 * A training log beside JSONL metrics does not time the steps, but a NaN
 * it prints is not hidden by clean metrics: its non-finite losses and grad
 * norms and its NaN-iteration counters mark the step records of the same
 * iteration (every rank: the loss is all-reduced), so the one loss-health
 * judgement, the window's NaN counts and every command see them, with a
 * warning that names the log. The global batch size it prints, when it
 * is one value, is kept (rm->spare_gbs: metrics rarely carry it). A spare
 * log that cannot be read is left out as before. 0 or TS_ENOMEM.
 */
static int spare_logs(struct ts_runmodel *rm, struct ts_err *err)
{
	struct ts_steplog *log = &rm->log;
	struct it_ix *ix = NULL;
	int gbs_mixed = 0;

	for (size_t i = 0; i < rm->inputs.n; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];
		struct ts_steplog sp;
		struct ts_err serr;
		size_t news = 0, lost = 0;
		int64_t first = TS_NO_INT;
		int rc = 0;

		if (in->role != TS_ROLE_LOG_SPARE)
			continue;
		ts_steplog_init(&sp);
		ts_err_init(&serr);
		if (ts_steplog_read(&sp, in->path, &serr)) {
			ts_steplog_release(&sp);
			if (serr.code == TS_ENOMEM)
				goto nomem;
			continue;
		}
		if (!ix) {
			ix = malloc((log->steps.n + 1) * sizeof(*ix));
			if (!ix) {
				ts_steplog_release(&sp);
				goto nomem;
			}
			for (size_t k = 0; k < log->steps.n; k++)
				ix[k] = (struct it_ix){ log->steps.v[k].iteration, k };
			ts_sort(ix, log->steps.n, sizeof(*ix), cmp_it_ix);
		}
		for (size_t k = 0; k < sp.steps.n; k++) {
			const struct ts_step *s = &sp.steps.v[k];
			int any;
			if (s->global_batch != TS_NO_INT && s->global_batch > 0) {
				gbs_mixed |= rm->spare_gbs && rm->spare_gbs != s->global_batch;
				rm->spare_gbs = s->global_batch;
			}
			if (!nan_evidence(s))
				continue;
			if (mark_iteration(log, ix, log->steps.n, s, &any) == 0 && any)
				continue;   /* the metrics already show it */
			news++;
			lost += !any;
			if (first == TS_NO_INT || s->iteration < first)
				first = s->iteration;
			if (any && (rm->spare_nan_iteration == TS_NO_INT ||
				    s->iteration < rm->spare_nan_iteration)) {
				rm->spare_nan_iteration = s->iteration;
				rm->spare_nan_line = s->line;
				rm->spare_nan_rank = s->rank;
				rm->spare_nan_path = in->path;
			}
		}
		if (news)
			rc = ts_warnings_add(&rm->warnings, "log-health", in->path, -1, first,
					     "%s prints a non-finite loss or grad norm, or counts NaN "
					     "iterations, at %zu logged iteration(s) from %lld that the "
					     "metrics do not show; the loss health counts the log's "
					     "evidence%s.", in->path, news, (long long)first,
					     lost ? " (except where the metrics have no record of the "
						    "iteration)" : "");
		ts_steplog_release(&sp);
		if (rc)
			goto nomem;
	}
	free(ix);
	if (gbs_mixed)
		rm->spare_gbs = 0;
	return 0;
nomem:
	free(ix);
	return ts_err_set(err, TS_ENOMEM, "out of memory");
}

/* The first Megatron arguments block of the run's Megatron and Primus
 * logs (rm->args, rm->args_model); a log without one, or with a value of
 * the wrong type, states nothing. 0 or TS_ENOMEM. */
static int read_args(struct ts_runmodel *rm, struct ts_err *err)
{
	for (size_t i = 0; i < rm->inputs.n && !rm->has_args; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];
		struct ts_err e;

		if ((in->role != TS_ROLE_STEPS && in->role != TS_ROLE_LOG_SPARE) ||
		    (in->kind != TS_KIND_LOG_MEGATRON && in->kind != TS_KIND_LOG_PRIMUS))
			continue;
		ts_err_init(&e);
		ts_model_init(&rm->args_model);
		ts_model_args_init(&rm->args);
		if (ts_model_read_megatron_args(&rm->args_model, &rm->args, in->path, &e)) {
			if (e.code == TS_ENOMEM)
				return ts_err_set(err, TS_ENOMEM, "out of memory");
			ts_model_args_init(&rm->args);
			continue;
		}
		rm->has_args = 1;
		rm->args_log = in->path;
		rm->has_args_model = ts_model_finish(&rm->args_model, &e) == 0;
		if (!rm->has_args_model) {
			/* the model's messages end with the `mfu` option that
			 * would give the value, "(--vocab)": no option of a log */
			char *opt = strstr(e.msg, " (--");
			if (opt && opt[strlen(opt) - 1] == ')')
				*opt = 0;
			snprintf(rm->args_model_why, sizeof(rm->args_model_why), "%s", e.msg);
		}
	}
	return 0;
}

/* A step record of the series that prints its global batch size. */
static int log_has_gbs(const struct ts_steplog *log)
{
	for (size_t i = 0; i < log->steps.n; i++)
		if (log->steps.v[i].global_batch != TS_NO_INT && log->steps.v[i].global_batch > 0)
			return 1;
	return 0;
}

/* An input's kind for kinds_found: -1 when it could not be classified. */
static int found_kind(const struct ts_run_input *in)
{
	return in->role == TS_ROLE_BAD ? -1 : in->kind;
}

/* What the inputs were, for the message of a run without steps: "it is a
 * kineto-trace", "it holds 2 kineto-trace, 1 telemetry-dmon" (kinds in
 * first-seen order, ts_kind_name), "it holds no file". */
static const char *kinds_found(const struct ts_runmodel *rm, char *buf, size_t size)
{
	static const char head[] = "it holds ";
	size_t len;

	if (!rm->inputs.n) {
		snprintf(buf, size, "it holds no file");
		return buf;
	}
	if (rm->inputs.n == 1 && found_kind(&rm->inputs.v[0]) >= 0 &&
	    !strcmp(rm->inputs.v[0].path, rm->root)) {
		snprintf(buf, size, "it is a %s", ts_kind_name(rm->inputs.v[0].kind));
		return buf;
	}
	len = (size_t)snprintf(buf, size, "%s", head);
	for (size_t i = 0; i < rm->inputs.n && len + 40 < size; i++) {
		int kind = found_kind(&rm->inputs.v[i]);
		size_t count = 0, j;

		for (j = 0; j < i && found_kind(&rm->inputs.v[j]) != kind; j++)
			;
		if (j < i)
			continue; /* counted at its first */
		for (j = i; j < rm->inputs.n; j++)
			count += found_kind(&rm->inputs.v[j]) == kind;
		len += (size_t)snprintf(buf + len, size - len, "%s%zu %s",
					len > sizeof(head) - 1 ? ", " : "", count,
					kind < 0 ? "unreadable" : ts_kind_name(kind));
	}
	return buf;
}

int ts_runmodel_load(struct ts_runmodel *rm, char *const *paths, size_t npaths,
		     const struct ts_runmodel_opts *o, int need_steps, struct ts_err *err)
{
	struct ts_runmodel_opts def;
	struct ts_steps_opts so;
	const char *method = "mser-5";
	int rc;

	if (!o) {
		ts_runmodel_opts_init(&def);
		o = &def;
	}
	rm->root = npaths == 1 ? paths[0] : "(several inputs)";
	if ((rc = classify(rm, paths, npaths, o->walk_depth > 0 ? o->walk_depth : DEFAULT_DEPTH,
			   err)) || (rc = trace_jobs(rm, err)))
		return rc;
	rm->log.strict = o->strict;
	for (size_t i = 0; i < rm->inputs.n; i++) {
		const struct ts_run_input *in = &rm->inputs.v[i];

		if (in->role != TS_ROLE_STEPS)
			continue;
		if ((rc = ts_paths_add(&rm->step_files, in->path, 0, err)) ||
		    (rc = ts_steplog_read(&rm->log, in->path, err)))
			return rc;
	}
	if ((rc = spare_logs(rm, err)) || (rc = read_args(rm, err)))
		return rc;
	if (!rm->step_files.n) {
		if (need_steps) {
			char what[192];
			return ts_err_set(err, TS_EUSAGE, "no training log or metrics file found in %s "
					  "(%s); the steps come from a training log (Megatron, NeMo, "
					  "HF Trainer...) or a metrics JSONL", rm->root,
					  kinds_found(rm, what, sizeof(what)));
		}
		rm->nwarn_steps = rm->warnings.v.n;
		return 0;
	}
	if ((rc = identity(rm, err)) || (rc = note_warnings(rm)) || (rc = ignored_warning(rm)) ||
	    (rc = zero_warning(rm)))
		return rc == TS_ENOMEM ? ts_err_set(err, rc, "out of memory") : rc;
	if ((rc = profiled(rm, err)))
		return rc;
	so = o->steps;
	if (rm->has_args) {
		if (!so.seq && rm->args.seq_length > 0)
			so.seq = rm->args.seq_length;
		if (!so.gpus && rm->args.world_size > 0)
			so.gpus = rm->args.world_size;
		if (!so.gbs && rm->args.global_batch > 0 && !log_has_gbs(&rm->log))
			so.gbs = rm->args.global_batch;
	}
	if (so.window_first != TS_NO_INT) {
		rm->window_source = 1;
		method = "declared";
	} else if (contract_window(rm, &so.window_first, &so.window_last) == 0) {
		rm->window_source = 2;
		method = "contract";
	}
	if ((rc = ordinal_warnings(rm, so.window_first, so.window_last)))
		return ts_err_set(err, rc, "out of memory");
	if (rm->log.replica_guess_file >= 0 &&
	    ts_warnings_add(&rm->warnings, "nproc-per-node-unknown",
			    rm->step_files.v[rm->log.replica_guess_file], -1, TS_NO_INT,
			    "%s: its torchx prefixes (\"ROLE/N [defaultK]:\", several nodes) give "
			    "each node's local rank K, and the global rank is N x nproc_per_node + "
			    "K; the log states no nproc_per_node, nor a world size and a number of "
			    "nodes that divide (world_size / nnodes), and its "
			    "nodes do not each show the same local ranks 0..n-1, or show only "
			    "local rank 0 (the first record of a node past 0 is at line %lld): "
			    "n = %lld, the number of local ranks seen, is taken, so the global "
			    "rank numbers may be wrong (the ranks stay apart).",
			    rm->step_files.v[rm->log.replica_guess_file],
			    (long long)rm->log.replica_guess_line,
			    (long long)rm->log.replica_guess_nproc))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	if (rm->log.replica_differ_file >= 0 &&
	    ts_warnings_add(&rm->warnings, "node-ranks-differ",
			    rm->step_files.v[rm->log.replica_differ_file], -1, TS_NO_INT,
			    "%s numbers its node ranks as node x %lld + local rank, %s as node x "
			    "%lld + local rank (%d files with torchx node prefixes): the files "
			    "disagree on nproc_per_node, so the global rank numbers of one of "
			    "them are wrong (node_ranks describes the first).",
			    rm->step_files.v[rm->log.replica_differ_file],
			    (long long)rm->log.replica_differ_nproc,
			    rm->step_files.v[rm->log.replica_nproc_file],
			    (long long)rm->log.replica_nproc, rm->log.replica_files))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	if ((rc = ts_steps_analyze(&rm->log, &so, &rm->steps, err)))
		return rc;
	rm->have_steps = 1;
	/* one rule for every command: below TS_STEADY_MIN_STEPS usable steps
	 * there is no steady window (validate, ab and diagnose refuse it), so
	 * the automatic window is named for what it is */
	if (!rm->window_source && rm->steps.win_n && rm->steps.win_n < TS_STEADY_MIN_STEPS)
		method = "few-steps";
	else if (!rm->window_source && (rm->steps.warnings & TS_WARN_NO_STEADY))
		method = "mser-5-capped";
	{
		/* a declared window is the range declared (within the series):
		 * its NaN or profiled steps at an edge stay inside it, left out
		 * for what they are, as validate and ab show the same range */
		int64_t first = rm->steps.win_n ? rm->steps.win_first : TS_NO_INT;
		int64_t last = rm->steps.win_n ? rm->steps.win_last : TS_NO_INT;

		if (rm->window_source && first != TS_NO_INT) {
			for (size_t i = 0; i < rm->steps.n; i++) {
				int64_t it = rm->steps.iter[i];

				if (!ts_record_in_window(ts_steps_record_from(&rm->steps, i), it,
							 so.window_first, so.window_last))
					continue;
				if (it < first)
					first = it;
				if (it > last)
					last = it;
			}
		}
		window_build(&rm->steps, first, last, method, rm->window_source == 0, &rm->window);
	}
	if ((rc = steps_warnings(rm)) || (rc = runmodel_rate(rm, o)))
		return ts_err_set(err, rc, "out of memory");
	rm->nwarn_steps = rm->warnings.v.n;
	return 0;
}
