/*
 * report.h - run reports as self-contained HTML (inline CSS, inline SVG
 * charts, no network, no external script) and as Markdown.
 *
 * The report is described by plain data, not by the analyses that produce
 * it: a caller fills a struct ts_report with whatever it has (step times,
 * per-step GPU time by class, top kernels, per-rank rows, an A/B
 * comparison, a memory breakdown, findings and advice) and a renderer turns
 * it into bytes. A section whose data is empty is left out of the output;
 * nothing is invented.
 *
 * Ownership: every string and array handed to the ts_report_add_* /
 * ts_report_set_* functions is copied into the report's arena, so callers
 * may free their own data right after the call. ts_report_release() frees
 * everything.
 *
 * Units: times are milliseconds (double) in the report model because they
 * are display values computed once by an analysis; byte counts are int64.
 *
 * Chart ids (stable, tests look for them in the DOM):
 *   chart-step-time    step time over the run, steady window shaded, stalls marked
 *   chart-gpu-classes  per-step time stacked by class
 *   chart-top-kernels  top kernels by total time
 *   chart-ranks        per-rank comparison
 *   chart-ab           A/B distributions with the CI of the difference
 *   chart-memory       memory breakdown
 */
#ifndef TRAINSCOPE_REPORT_H
#define TRAINSCOPE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"
#include "trainscope/jsonw.h"

/* One iteration on the step-time chart. */
enum ts_report_step_flag {
	TS_REPORT_STEP_NORMAL = 0,
	TS_REPORT_STEP_STALL = 1,    /* flagged as a stall */
	TS_REPORT_STEP_EXCLUDED = 2  /* outside the analysis (warm-up, profiler export, NaN) */
};

struct ts_report_step {
	int64_t iteration;
	double ms;
	int flag; /* enum ts_report_step_flag */
};

/* Per-step time by class; the classes partition the step. */
enum ts_report_class {
	TS_REPORT_COMPUTE = 0,
	TS_REPORT_COMM_EXPOSED,
	TS_REPORT_MEMCPY,
	TS_REPORT_IDLE,
	TS_REPORT_NCLASS
};

const char *ts_report_class_name(enum ts_report_class c);

struct ts_report_stack {
	char *label;                   /* "iter 22", "rank 1" */
	double ms[TS_REPORT_NCLASS];
};

struct ts_report_kernel {
	char *name;      /* raw trace name; escaped by the renderers */
	int64_t count;
	double total_ms;
	double pct;      /* of the device busy time, or of the window; see ts_report.kernels_basis */
};

struct ts_report_rank {
	int64_t rank;
	double step_ms;      /* mean step time in the window; NaN if unknown */
	double compute_ms;   /* mean per step; NaN if unknown */
	double comm_ms;      /* mean per step; NaN if unknown */
	double other_ms;     /* exposed copies and idle; NaN if unknown */
	int straggler;
};

struct ts_report_ab {
	char *name_a, *name_b;
	double *a, *b;       /* samples (ms) */
	size_t na, nb;
	double diff_pct;     /* (b - a) / a, percent */
	double ci_lo_pct, ci_hi_pct;
	char *verdict;
};

struct ts_report_mem {
	char *name;   /* "weights", "gradients", ... */
	int64_t bytes;
};

/* A key fact shown as a card at the top and as a row of the summary table. */
struct ts_report_fact {
	char *name;
	char *value;  /* already formatted with its unit */
	char *note;   /* may be NULL */
};

enum ts_report_level { TS_REPORT_INFO = 0, TS_REPORT_WARN, TS_REPORT_BAD };

struct ts_report_item {
	int level;     /* enum ts_report_level */
	char *title;
	char *detail;  /* may be NULL */
};

struct ts_report {
	char *title;
	char *subtitle;
	char *wall;            /* dominant wall name, NULL if unknown */
	char *wall_basis;      /* "trace" / "log" */
	TS_VEC(struct ts_report_fact) facts;
	TS_VEC(struct ts_report_item) evidence;  /* numbers behind the wall verdict */
	TS_VEC(struct ts_report_item) findings;  /* stragglers, loss health, ... */
	TS_VEC(struct ts_report_item) missing;   /* evidence not present and how to collect it */
	TS_VEC(struct ts_report_item) advice;    /* candidates to test with `trainscope ab` */
	TS_VEC(struct ts_report_item) warnings;  /* the run's warnings (title: code, detail: sentence) */
	TS_VEC(struct ts_report_item) diff;      /* "Diff vs baseline" (trainscope diff of the traces) */
	TS_VEC(struct ts_report_step) steps;
	int64_t window_first, window_last;       /* steady window (iterations); 0,0 = none */
	char *steps_source;                      /* "metrics.jsonl", "log", ... */
	TS_VEC(struct ts_report_stack) stacks;
	char *stacks_title;
	TS_VEC(struct ts_report_kernel) kernels;
	char *kernels_basis;
	TS_VEC(struct ts_report_rank) ranks;
	struct ts_report_ab *ab;                 /* NULL when no experiment */
	TS_VEC(struct ts_report_mem) mem;
	int64_t mem_capacity_bytes;              /* device memory, 0 if unknown */
	char *mem_title;
	int failed;                              /* sticky allocation failure */
	struct ts_arena arena;
};

void ts_report_init(struct ts_report *r);
void ts_report_release(struct ts_report *r);

/* Copy s into the report's arena (NULL stays NULL). */
char *ts_report_strdup(struct ts_report *r, const char *s);
/* printf into the report's arena. */
char *ts_report_printf(struct ts_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appenders; each copies its strings. Return 0 or TS_ENOMEM (also sets
 * r->failed, so callers may check once at the end). */
int ts_report_add_fact(struct ts_report *r, const char *name, const char *value,
		       const char *note);
int ts_report_add_item(struct ts_report *r, int which, int level,
		       const char *title, const char *detail);
/* Every warning of w as a Warnings item: title the message, with
 * " (line N)" when it has a line (as the text outputs print it), detail
 * its code. */
int ts_report_add_warnings(struct ts_report *r, const struct ts_warnings *w);
int ts_report_add_step(struct ts_report *r, int64_t iteration, double ms, int flag);
int ts_report_add_stack(struct ts_report *r, const char *label,
			const double ms[TS_REPORT_NCLASS]);
int ts_report_add_kernel(struct ts_report *r, const char *name, int64_t count,
			 double total_ms, double pct);
int ts_report_add_rank(struct ts_report *r, const struct ts_report_rank *row);
int ts_report_add_mem(struct ts_report *r, const char *name, int64_t bytes);
/* Copies the sample arrays and strings of ab. */
int ts_report_set_ab(struct ts_report *r, const struct ts_report_ab *ab);

/* Which list ts_report_add_item appends to. */
enum { TS_REPORT_EVIDENCE = 0, TS_REPORT_FINDINGS, TS_REPORT_MISSING, TS_REPORT_ADVICE,
       TS_REPORT_WARNINGS, TS_REPORT_DIFF };

/*
 * Render. Output is deterministic (fixed number formatting, data order as
 * added). Every string from the model is escaped for its format (HTML
 * entities; Markdown table cells escape | and line breaks). Returns 0 or
 * TS_ENOMEM.
 */
int ts_report_html(const struct ts_report *r, struct ts_sb *out);
int ts_report_md(const struct ts_report *r, struct ts_sb *out);

/* Append s[0..n) HTML-escaped (& < > " ') to out; invalid UTF-8 bytes become U+FFFD. */
void ts_html_escape(struct ts_sb *out, const char *s, size_t n);

#endif
