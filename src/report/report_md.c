/*
 * report_md.c - the report as Markdown: the same sections and tables as
 * the HTML page, without charts, for pull requests, tickets and terminals.
 *
 * Table cells escape the characters that would break a GitHub-flavoured
 * table (| and line breaks, which become "; ") and the ones that would start inline markup
 * or HTML (\ ` * _ < > [ ]); invalid UTF-8 becomes U+FFFD. A list item's
 * later lines (a snippet to paste) are a fenced code block instead.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "trainscope/report.h"
#include "trainscope/utf8.h"

static void md_esc(struct ts_sb *o, const char *s)
{
	struct ts_sb tmp;

	if (!s)
		return;
	/* Markdown escapes first, then entities for & < > " ' (GFM renders
	 * them as the literal characters) and U+FFFD for invalid UTF-8 */
	ts_sb_init(&tmp);
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '|': ts_sb_adds(&tmp, "\\|"); break;
		case '\\': case '`': case '*': case '_': case '[': case ']':
			ts_sb_addc(&tmp, '\\');
			ts_sb_addc(&tmp, *p);
			break;
		case '\n': ts_sb_adds(&tmp, "; "); break;
		case '\r': break;
		default: ts_sb_addc(&tmp, *p); break;
		}
	}
	ts_html_escape(o, tmp.buf, tmp.len);
	ts_sb_release(&tmp);
}

/* Text inside a fenced code block, as written: no escapes (they would
 * show), valid UTF-8 kept, controls but tab and invalid bytes U+FFFD. */
static void md_code_text(struct ts_sb *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int len = p[i] < 0x80 ? 1 : ts_utf8_seq(p + i, n - i, &cp);

		if (len == 1 && ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)) {
			ts_sb_adds(o, "\xef\xbf\xbd");
			i++;
		} else if (len > 0) {
			ts_sb_add(o, p + i, (size_t)len);
			i += (size_t)len;
		} else {
			ts_sb_adds(o, "\xef\xbf\xbd");
			i++;
		}
	}
}

/* An item's detail: its first line as text; the lines after it (a snippet
 * to paste, indented by the analysis) as a fenced code block, so they stay
 * lines (joined with "; " they were no longer valid Python). A detail
 * whose later lines hold a fence is text throughout. */
static void md_detail(struct ts_sb *o, const char *s)
{
	const char *nl = strchr(s, '\n');

	if (!nl || strstr(nl, "```")) {
		md_esc(o, s);
		return;
	}
	{
		struct ts_sb first;
		ts_sb_init(&first);
		ts_sb_add(&first, s, (size_t)(nl - s));
		md_esc(o, first.buf ? first.buf : "");
		ts_sb_release(&first);
	}
	/* the lines' common indent goes: the block pastes as written */
	size_t cut = SIZE_MAX;
	for (const char *l = nl + 1; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l), k = 0;
		while (k < len && l[k] == ' ')
			k++;
		if (k < len && k < cut)
			cut = k;
		l += len + (e != NULL);
	}
	ts_sb_adds(o, "\n\n  ```\n");
	for (const char *l = nl + 1; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		size_t k = len < cut ? len : cut;
		ts_sb_adds(o, "  ");
		md_code_text(o, l + k, len - k);
		ts_sb_addc(o, '\n');
		l += len + (e != NULL);
	}
	ts_sb_adds(o, "  ```");
}

static void md_num(struct ts_sb *o, double v, int decimals)
{
	ts_sb_adds(o, " | ");
	if (isfinite(v))
		ts_sb_addf(o, "%.*f", decimals, v);
	else
		ts_sb_adds(o, "-");
}

static void md_items(struct ts_sb *o, const char *title, const struct ts_report_item *v,
		     size_t n, int candidate)
{
	if (!n)
		return;
	ts_sb_addf(o, "\n## %s\n\n", title);
	for (size_t i = 0; i < n; i++) {
		ts_sb_adds(o, v[i].level == TS_REPORT_BAD ? "- **[!]** " :
			   v[i].level == TS_REPORT_WARN ? "- **[~]** " : "- ");
		md_esc(o, v[i].title);
		if (candidate)
			ts_sb_adds(o, " *(candidate: test with `trainscope ab`)*");
		if (v[i].detail) {
			ts_sb_adds(o, "  \n  ");
			md_detail(o, v[i].detail);
		}
		ts_sb_addc(o, '\n');
	}
}

int ts_report_md(const struct ts_report *r, struct ts_sb *o)
{
	ts_sb_adds(o, "# ");
	md_esc(o, r->title ? r->title : "trainscope report");
	ts_sb_addc(o, '\n');
	if (r->subtitle) {
		ts_sb_adds(o, "\n");
		md_esc(o, r->subtitle);
		ts_sb_addc(o, '\n');
	}
	if (r->wall || r->evidence.n) {
		ts_sb_adds(o, "\n## Dominant wall: ");
		md_esc(o, r->wall ? r->wall : "undetermined");
		ts_sb_addc(o, '\n');
		if (r->wall_basis) {
			ts_sb_adds(o, "\nEvidence from ");
			md_esc(o, r->wall_basis);
			ts_sb_adds(o, ".\n");
		}
		if (r->evidence.n)
			ts_sb_addc(o, '\n');
		for (size_t i = 0; i < r->evidence.n; i++) {
			ts_sb_adds(o, "- ");
			md_esc(o, r->evidence.v[i].title);
			if (r->evidence.v[i].detail) {
				ts_sb_adds(o, ": ");
				md_esc(o, r->evidence.v[i].detail);
			}
			ts_sb_addc(o, '\n');
		}
	}
	if (r->facts.n) {
		ts_sb_adds(o, "\n## Summary\n\n| metric | value | note |\n|---|---:|---|\n");
		for (size_t i = 0; i < r->facts.n; i++) {
			ts_sb_adds(o, "| ");
			md_esc(o, r->facts.v[i].name);
			ts_sb_adds(o, " | ");
			md_esc(o, r->facts.v[i].value);
			ts_sb_adds(o, " | ");
			md_esc(o, r->facts.v[i].note);
			ts_sb_adds(o, " |\n");
		}
	}
	if (r->steps.n) {
		size_t nstall = 0;
		ts_sb_adds(o, "\n## Step time over the run\n\n");
		if (r->steps_source) {
			ts_sb_adds(o, "Source: ");
			md_esc(o, r->steps_source);
			ts_sb_adds(o, ". ");
		}
		if (r->window_first > 0)
			ts_sb_addf(o, "Steady window: iterations %lld-%lld. ", (long long)r->window_first,
				   (long long)r->window_last);
		for (size_t i = 0; i < r->steps.n; i++)
			nstall += r->steps.v[i].flag == TS_REPORT_STEP_STALL;
		ts_sb_addf(o, "%zu iteration%s, %zu stall%s.\n\n| iteration | step (ms) | flag |\n"
			   "|---:|---:|---|\n", r->steps.n, r->steps.n == 1 ? "" : "s", nstall,
			   nstall == 1 ? "" : "s");
		for (size_t i = 0; i < r->steps.n; i++) {
			const struct ts_report_step *s = &r->steps.v[i];
			ts_sb_addf(o, "| %lld", (long long)s->iteration);
			md_num(o, s->ms, 1);
			ts_sb_addf(o, " | %s |\n", s->flag == TS_REPORT_STEP_STALL ? "stall" :
				   s->flag == TS_REPORT_STEP_EXCLUDED ? "excluded" : "");
		}
	}
	if (r->stacks.n) {
		ts_sb_adds(o, "\n## Time per step by class\n\n");
		if (r->stacks_title) {
			md_esc(o, r->stacks_title);
			ts_sb_adds(o, "\n\n");
		}
		ts_sb_adds(o, "| step");
		for (int c = 0; c < TS_REPORT_NCLASS; c++)
			ts_sb_addf(o, " | %s (ms)", ts_report_class_name((enum ts_report_class)c));
		ts_sb_adds(o, " |\n|---|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < r->stacks.n; i++) {
			ts_sb_adds(o, "| ");
			md_esc(o, r->stacks.v[i].label);
			for (int c = 0; c < TS_REPORT_NCLASS; c++)
				md_num(o, r->stacks.v[i].ms[c], 2);
			ts_sb_adds(o, " |\n");
		}
	}
	if (r->kernels.n) {
		ts_sb_adds(o, "\n## Top kernels\n\n");
		if (r->kernels_basis) {
			md_esc(o, r->kernels_basis);
			ts_sb_adds(o, "\n\n");
		}
		ts_sb_adds(o, "| name | count | total (ms) | share (%) |\n|---|---:|---:|---:|\n");
		for (size_t i = 0; i < r->kernels.n; i++) {
			const struct ts_report_kernel *k = &r->kernels.v[i];
			ts_sb_adds(o, "| ");
			md_esc(o, k->name);
			ts_sb_addf(o, " | %lld", (long long)k->count);
			md_num(o, k->total_ms, 3);
			md_num(o, k->pct, 1);
			ts_sb_adds(o, " |\n");
		}
	}
	if (r->ranks.n) {
		ts_sb_adds(o, "\n## Per-rank comparison\n\n| rank | step (ms) | compute (ms) | communication (ms) "
			   "| other (ms) | note |\n|---:|---:|---:|---:|---:|---|\n");
		for (size_t i = 0; i < r->ranks.n; i++) {
			const struct ts_report_rank *k = &r->ranks.v[i];
			ts_sb_addf(o, "| %lld", (long long)k->rank);
			md_num(o, k->step_ms, 1);
			md_num(o, k->compute_ms, 1);
			md_num(o, k->comm_ms, 1);
			md_num(o, k->other_ms, 1);
			ts_sb_addf(o, " | %s |\n", k->straggler ? "straggler" : "");
		}
	}
	if (r->ab) {
		const struct ts_report_ab *ab = r->ab;
		ts_sb_adds(o, "\n## A/B comparison\n\n| arm | samples |\n|---|---:|\n| ");
		md_esc(o, ab->name_a ? ab->name_a : "A");
		ts_sb_addf(o, " | %zu |\n| ", ab->na);
		md_esc(o, ab->name_b ? ab->name_b : "B");
		ts_sb_addf(o, " | %zu |\n\nB vs A: **%+.2f%%**, CI [%+.2f%%, %+.2f%%]", ab->nb, ab->diff_pct,
			   ab->ci_lo_pct, ab->ci_hi_pct);
		if (ab->verdict) {
			ts_sb_adds(o, " - ");
			md_esc(o, ab->verdict);
		}
		ts_sb_addc(o, '\n');
	}
	if (r->mem.n) {
		ts_sb_adds(o, "\n## Memory breakdown\n\n");
		if (r->mem_title) {
			md_esc(o, r->mem_title);
			ts_sb_adds(o, "\n\n");
		}
		ts_sb_adds(o, "| term | bytes | GiB |\n|---|---:|---:|\n");
		for (size_t i = 0; i < r->mem.n; i++) {
			ts_sb_adds(o, "| ");
			md_esc(o, r->mem.v[i].name);
			ts_sb_addf(o, " | %lld | %.2f |\n", (long long)r->mem.v[i].bytes,
				   (double)r->mem.v[i].bytes / 1073741824.0);
		}
		if (r->mem_capacity_bytes > 0)
			ts_sb_addf(o, "| device capacity | %lld | %.2f |\n", (long long)r->mem_capacity_bytes,
				   (double)r->mem_capacity_bytes / 1073741824.0);
	}
	md_items(o, "Findings", r->findings.v, r->findings.n, 0);
	md_items(o, "Diff vs baseline", r->diff.v, r->diff.n, 0);
	md_items(o, "Candidates for the dominant wall", r->advice.v, r->advice.n, 1);
	md_items(o, "Missing evidence and how to collect it", r->missing.v, r->missing.n, 0);
	md_items(o, "Warnings", r->warnings.v, r->warnings.n, 0);
	return o->failed || r->failed ? TS_ENOMEM : 0;
}
