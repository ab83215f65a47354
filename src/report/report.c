/*
 * report.c - the report model: a bag of plain display data that analyses
 * fill and renderers read. Kept apart from the renderers so a command can
 * build one model and write it as HTML and Markdown, and so the renderers
 * never depend on how a number was computed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/report.h"

static const char *const class_names[TS_REPORT_NCLASS] = {
	"compute", "exposed communication", "memcpy", "idle"
};

const char *ts_report_class_name(enum ts_report_class c)
{
	return (unsigned)c < TS_REPORT_NCLASS ? class_names[c] : "?";
}

void ts_report_init(struct ts_report *r)
{
	memset(r, 0, sizeof(*r));
	ts_arena_init(&r->arena);
}

void ts_report_release(struct ts_report *r)
{
	TS_VEC_RELEASE(r->facts);
	TS_VEC_RELEASE(r->evidence);
	TS_VEC_RELEASE(r->findings);
	TS_VEC_RELEASE(r->missing);
	TS_VEC_RELEASE(r->advice);
	TS_VEC_RELEASE(r->warnings);
	TS_VEC_RELEASE(r->diff);
	TS_VEC_RELEASE(r->steps);
	TS_VEC_RELEASE(r->stacks);
	TS_VEC_RELEASE(r->kernels);
	TS_VEC_RELEASE(r->ranks);
	TS_VEC_RELEASE(r->mem);
	ts_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

static int oom(struct ts_report *r)
{
	r->failed = 1;
	return TS_ENOMEM;
}

char *ts_report_strdup(struct ts_report *r, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = ts_arena_strndup(&r->arena, s, strlen(s));
	if (!d)
		r->failed = 1;
	return d;
}

char *ts_report_printf(struct ts_report *r, const char *fmt, ...)
{
	struct ts_sb sb;
	va_list ap;
	char *d;

	ts_sb_init(&sb);
	va_start(ap, fmt);
	ts_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	d = sb.failed ? NULL : ts_arena_strndup(&r->arena, sb.buf, sb.len);
	if (!d)
		r->failed = 1;
	ts_sb_release(&sb);
	return d;
}

/* strdup that reports failure only when s was given. */
static int dup_opt(struct ts_report *r, const char *s, char **out)
{
	*out = ts_report_strdup(r, s);
	return s && !*out;
}

int ts_report_add_fact(struct ts_report *r, const char *name, const char *value,
		       const char *note)
{
	struct ts_report_fact f;

	if (dup_opt(r, name, &f.name) || dup_opt(r, value, &f.value) ||
	    dup_opt(r, note, &f.note) || TS_VEC_PUSH(r->facts, f))
		return oom(r);
	return 0;
}

int ts_report_add_item(struct ts_report *r, int which, int level,
		       const char *title, const char *detail)
{
	struct ts_report_item it;
	int rc;

	it.level = level;
	if (dup_opt(r, title, &it.title) || dup_opt(r, detail, &it.detail))
		return oom(r);
	switch (which) {
	case TS_REPORT_EVIDENCE: rc = TS_VEC_PUSH(r->evidence, it); break;
	case TS_REPORT_FINDINGS: rc = TS_VEC_PUSH(r->findings, it); break;
	case TS_REPORT_MISSING: rc = TS_VEC_PUSH(r->missing, it); break;
	case TS_REPORT_ADVICE: rc = TS_VEC_PUSH(r->advice, it); break;
	case TS_REPORT_WARNINGS: rc = TS_VEC_PUSH(r->warnings, it); break;
	case TS_REPORT_DIFF: rc = TS_VEC_PUSH(r->diff, it); break;
	default: return TS_EINTERNAL;
	}
	return rc ? oom(r) : 0;
}

int ts_report_add_warnings(struct ts_report *r, const struct ts_warnings *w)
{
	for (size_t i = 0; i < w->v.n; i++) {
		const struct ts_warning *x = &w->v.v[i];
		const char *title = x->message;

		if (x->line > 0 && !(title = ts_report_printf(r, "%s (line %lld)", x->message,
							       (long long)x->line)))
			return oom(r);
		if (ts_report_add_item(r, TS_REPORT_WARNINGS, TS_REPORT_WARN, title, x->code))
			return TS_ENOMEM;
	}
	return 0;
}

int ts_report_add_step(struct ts_report *r, int64_t iteration, double ms, int flag)
{
	struct ts_report_step s = { iteration, ms, flag };

	return TS_VEC_PUSH(r->steps, s) ? oom(r) : 0;
}

int ts_report_add_stack(struct ts_report *r, const char *label,
			const double ms[TS_REPORT_NCLASS])
{
	struct ts_report_stack s;

	if (dup_opt(r, label, &s.label))
		return oom(r);
	memcpy(s.ms, ms, sizeof(s.ms));
	return TS_VEC_PUSH(r->stacks, s) ? oom(r) : 0;
}

int ts_report_add_kernel(struct ts_report *r, const char *name, int64_t count,
			 double total_ms, double pct)
{
	struct ts_report_kernel k;

	if (dup_opt(r, name, &k.name))
		return oom(r);
	k.count = count;
	k.total_ms = total_ms;
	k.pct = pct;
	return TS_VEC_PUSH(r->kernels, k) ? oom(r) : 0;
}

int ts_report_add_rank(struct ts_report *r, const struct ts_report_rank *row)
{
	return TS_VEC_PUSH(r->ranks, *row) ? oom(r) : 0;
}

int ts_report_add_mem(struct ts_report *r, const char *name, int64_t bytes)
{
	struct ts_report_mem m;

	if (dup_opt(r, name, &m.name))
		return oom(r);
	m.bytes = bytes;
	return TS_VEC_PUSH(r->mem, m) ? oom(r) : 0;
}

static double *dup_samples(struct ts_report *r, const double *v, size_t n)
{
	double *d = ts_arena_alloc(&r->arena, n ? n * sizeof(*d) : 1);

	if (d && n)
		memcpy(d, v, n * sizeof(*d));
	return d;
}

int ts_report_set_ab(struct ts_report *r, const struct ts_report_ab *ab)
{
	struct ts_report_ab *c = ts_arena_alloc(&r->arena, sizeof(*c));

	if (!c)
		return oom(r);
	*c = *ab;
	if (dup_opt(r, ab->name_a, &c->name_a) || dup_opt(r, ab->name_b, &c->name_b) ||
	    dup_opt(r, ab->verdict, &c->verdict))
		return oom(r);
	c->a = dup_samples(r, ab->a, ab->na);
	c->b = dup_samples(r, ab->b, ab->nb);
	if (!c->a || !c->b)
		return oom(r);
	r->ab = c;
	return 0;
}
