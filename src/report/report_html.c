/*
 * report_html.c - the report as one self-contained HTML page.
 *
 * People open the report on a laptop, attach it to a ticket, or look at it
 * offline on a cluster login node, so the page carries everything inline:
 * CSS, SVG charts drawn here from the numbers, and one small script that
 * only records JavaScript errors and chart sizes into the DOM (the browser
 * test reads them). No fonts, images or scripts are fetched.
 *
 * Every string that comes from an input (kernel names contain < > & " and
 * invalid UTF-8) goes through ts_html_escape(). Numbers are printed with
 * fixed formats so the same report model gives the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "trainscope/report.h"

#define W 880.0   /* chart width in SVG user units */

static const char *const class_color[TS_REPORT_NCLASS] = {
	"#4c78a8", "#e45756", "#f2a541", "#c9c5c0"
};

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) { len = 2; cp = s[0] & 0x1f; }
	else if (s[0] >= 0xe0 && s[0] <= 0xef) { len = 3; cp = s[0] & 0x0f; }
	else if (s[0] >= 0xf0 && s[0] <= 0xf4) { len = 4; cp = s[0] & 0x07; }
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void ts_html_escape(struct ts_sb *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t run = i, len;

		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '&' &&
		       p[run] != '<' && p[run] != '>' && p[run] != '"' && p[run] != '\'')
			run++;
		ts_sb_add(out, s + i, run - i);
		i = run;
		if (i >= n)
			break;
		switch (p[i]) {
		case '&': ts_sb_adds(out, "&amp;"); i++; continue;
		case '<': ts_sb_adds(out, "&lt;"); i++; continue;
		case '>': ts_sb_adds(out, "&gt;"); i++; continue;
		case '"': ts_sb_adds(out, "&quot;"); i++; continue;
		case '\'': ts_sb_adds(out, "&#39;"); i++; continue;
		case '\n': case '\t': ts_sb_addc(out, (char)p[i]); i++; continue;
		default: break;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			ts_sb_adds(out, "\xef\xbf\xbd");
			i++;
			continue;
		}
		len = utf8_len(p + i, n - i);
		if (len) {
			ts_sb_add(out, s + i, len);
			i += len;
		} else {
			ts_sb_adds(out, "\xef\xbf\xbd");
			i++;
		}
	}
}

static void esc(struct ts_sb *o, const char *s)
{
	if (s)
		ts_html_escape(o, s, strlen(s));
}

/* Escaped s cut to at most max code points (with an ellipsis). */
static void esc_cut(struct ts_sb *o, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, cps = 0;

	while (i < n && cps < max) {
		size_t len = utf8_len(p + i, n - i);
		i += len ? len : 1;
		cps++;
	}
	ts_html_escape(o, s, i);
	if (i < n)
		ts_sb_adds(o, "\xe2\x80\xa6");
}

/* A "nice" axis maximum and tick step covering v (v > 0). */
static void nice_axis(double v, double *top, double *step)
{
	double mag, f;

	if (!(v > 0) || !isfinite(v))
		v = 1;
	mag = pow(10, floor(log10(v)));
	f = v / mag;
	*step = (f <= 1.5 ? 0.25 : f <= 3 ? 0.5 : f <= 7 ? 1 : 2) * mag;
	*top = ceil(v / *step) * *step;
}

static void num(struct ts_sb *o, double v)
{
	if (fabs(v) >= 100 || v == floor(v))
		ts_sb_addf(o, "%.0f", v);
	else if (fabs(v) >= 10)
		ts_sb_addf(o, "%.1f", v);
	else
		ts_sb_addf(o, "%.2f", v);
}

/* Horizontal grid lines and y labels for a value axis. */
static void y_axis(struct ts_sb *o, double x0, double x1, double y0, double h,
		   double top, double step, const char *unit)
{
	for (double v = 0; v <= top + step / 2; v += step) {
		double y = y0 + h - v / top * h;
		ts_sb_addf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			   x0, x1, y, y);
		ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
			   x0 - 6, y + 4);
		num(o, v);
		ts_sb_adds(o, "</text>");
	}
	ts_sb_addf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\" "
		   "text-anchor=\"middle\">%s</text>", 14.0, y0 + h / 2, 14.0, y0 + h / 2, unit);
}

static void legend(struct ts_sb *o, double x, double y, const char *const *names,
		   const char *const *colors, int n)
{
	for (int i = 0; i < n; i++) {
		ts_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\"/>"
			   "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">%s</text>",
			   x, y - 10, colors[i], x + 17, y, names[i]);
		x += 30 + 7.2 * (double)strlen(names[i]);
	}
}

static void svg_open(struct ts_sb *o, const char *id, double h, const char *label)
{
	ts_sb_addf(o, "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		   "aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">", id, W, h, label);
}

/* ------------------------------------------------------------- step time */

static void chart_steps(const struct ts_report *r, struct ts_sb *o)
{
	const double L = 64, R = 20, T = 34, H = 230, B = 42;
	double pw = W - L - R, top, step, maxv = 0, maxall = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	double span;
	static const char *const names[] = { "step time", "stall", "excluded", "steady window" };
	static const char *const colors[] = { "#4c78a8", "#d62728", "#b0b0b0", "#dbe9f6" };

	/* the axis fits the analysed steps; a slower excluded step (start-up,
	 * compilation) is drawn clipped at the top instead of squashing them */
	for (size_t i = 0; i < r->steps.n; i++)
		if (isfinite(r->steps.v[i].ms) && r->steps.v[i].flag != TS_REPORT_STEP_EXCLUDED &&
		    r->steps.v[i].ms > maxv)
			maxv = r->steps.v[i].ms;
	for (size_t i = 0; i < r->steps.n; i++) {
		const struct ts_report_step *s = &r->steps.v[i];
		if (isfinite(s->ms) && s->ms > maxall)
			maxall = s->ms;
		if (s->iteration < lo)
			lo = s->iteration;
		if (s->iteration > hi)
			hi = s->iteration;
	}
	if (!(maxv > 0))
		maxv = maxall;
	span = hi > lo ? (double)(hi - lo) : 1;
	nice_axis(maxv * 1.05, &top, &step);
#define SX(it) (L + ((double)(it) - (double)lo) / span * pw)
#define SY(v) (T + H - ((v) < top ? (v) : top) / top * H)
	svg_open(o, "chart-step-time", T + H + B, "step time per iteration");
	legend(o, L, 18, names, colors, 4);
	if (r->window_last >= r->window_first && r->window_first > 0) {
		double x0 = SX(r->window_first), x1 = SX(r->window_last);
		if (x1 - x0 < 4) { x0 -= 2; x1 += 2; }
		ts_sb_addf(o, "<rect class=\"window\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
			   x0, T, x1 - x0, H);
	}
	y_axis(o, L, L + pw, T, H, top, step, "ms");
	/* x ticks: about 10 iteration labels */
	{
		double xs, xt;
		nice_axis(span / 8, &xt, &xs);
		(void)xt;
		if (xs < 1)
			xs = 1;
		for (double it = ceil((double)lo / xs) * xs; it <= (double)hi; it += xs)
			ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>",
				   SX(it), T + H + 16, it);
		ts_sb_addf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">iteration</text>",
			   L + pw / 2, T + H + 36);
	}
	ts_sb_adds(o, "<polyline class=\"line\" points=\"");
	for (size_t i = 0; i < r->steps.n; i++) {
		const struct ts_report_step *s = &r->steps.v[i];
		if (isfinite(s->ms))
			ts_sb_addf(o, "%s%.1f,%.1f", i ? " " : "", SX(s->iteration), SY(s->ms));
	}
	ts_sb_adds(o, "\"/>");
	for (size_t i = 0; i < r->steps.n; i++) {
		const struct ts_report_step *s = &r->steps.v[i];
		const char *cls = s->flag == TS_REPORT_STEP_STALL ? "stall" :
				  s->flag == TS_REPORT_STEP_EXCLUDED ? "excl" : "pt";
		if (!isfinite(s->ms))
			continue;
		if (s->flag == TS_REPORT_STEP_STALL)
			ts_sb_addf(o, "<line class=\"stallmark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
				   SX(s->iteration), SX(s->iteration), T, T + H);
		if (s->ms > top) {
			double x = SX(s->iteration), y = T;
			ts_sb_addf(o, "<path class=\"%s\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"><title>iteration %lld: "
				   "%.1f ms, above the axis</title></path>", cls, x, y - 4, x - 4, y + 3, x + 4, y + 3,
				   (long long)s->iteration, s->ms);
			continue;
		}
		ts_sb_addf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>iteration %lld: %.1f ms%s</title></circle>",
			   cls, SX(s->iteration), SY(s->ms),
			   s->flag == TS_REPORT_STEP_STALL ? "4.5" : "2.6", (long long)s->iteration, s->ms,
			   s->flag == TS_REPORT_STEP_STALL ? " (stall)" :
			   s->flag == TS_REPORT_STEP_EXCLUDED ? " (excluded)" : "");
	}
	ts_sb_adds(o, "</svg>\n");
#undef SX
#undef SY
}

/* ------------------------------------------------------- stacked classes */

static void chart_stacks(const struct ts_report *r, struct ts_sb *o)
{
	const double L = 64, R = 20, T = 34, H = 220, B = 46;
	double pw = W - L - R, maxv = 0, top, step, slot, bw;
	const char *names[TS_REPORT_NCLASS], *colors[TS_REPORT_NCLASS];

	for (int c = 0; c < TS_REPORT_NCLASS; c++) {
		names[c] = ts_report_class_name((enum ts_report_class)c);
		colors[c] = class_color[c];
	}
	for (size_t i = 0; i < r->stacks.n; i++) {
		double sum = 0;
		for (int c = 0; c < TS_REPORT_NCLASS; c++)
			sum += r->stacks.v[i].ms[c] > 0 ? r->stacks.v[i].ms[c] : 0;
		if (sum > maxv)
			maxv = sum;
	}
	nice_axis(maxv * 1.02, &top, &step);
	slot = pw / (double)r->stacks.n;
	bw = slot * 0.7 > 60 ? 60 : slot * 0.7;
	svg_open(o, "chart-gpu-classes", T + H + B, "time per step by class");
	legend(o, L, 18, names, colors, TS_REPORT_NCLASS);
	y_axis(o, L, L + pw, T, H, top, step, "ms");
	for (size_t i = 0; i < r->stacks.n; i++) {
		const struct ts_report_stack *s = &r->stacks.v[i];
		double x = L + slot * (double)i + (slot - bw) / 2, acc = 0;
		for (int c = 0; c < TS_REPORT_NCLASS; c++) {
			double v = s->ms[c] > 0 ? s->ms[c] : 0, h = v / top * H;
			if (v <= 0)
				continue;
			ts_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
				   x, T + H - (acc + v) / top * H, bw, h, class_color[c]);
			esc(o, s->label);
			ts_sb_addf(o, " %s: %.2f ms</title></rect>", names[c], v);
			acc += v;
		}
		if (r->stacks.n <= 24 || i % ((r->stacks.n + 23) / 24) == 0) {
			ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
				   x + bw / 2, T + H + 16);
			esc_cut(o, s->label, 14);
			ts_sb_adds(o, "</text>");
		}
	}
	ts_sb_adds(o, "</svg>\n");
}

/* ------------------------------------------------------------- kernels */

static void chart_kernels(const struct ts_report *r, struct ts_sb *o)
{
	const double L = 330, R = 90, T = 12, row = 22;
	size_t n = r->kernels.n < 15 ? r->kernels.n : 15;
	double maxv = 0, pw = W - L - R;

	for (size_t i = 0; i < n; i++)
		if (r->kernels.v[i].total_ms > maxv)
			maxv = r->kernels.v[i].total_ms;
	if (!(maxv > 0))
		maxv = 1;
	svg_open(o, "chart-top-kernels", T + row * (double)n + 8, "top kernels by total time");
	for (size_t i = 0; i < n; i++) {
		const struct ts_report_kernel *k = &r->kernels.v[i];
		double y = T + row * (double)i, w = k->total_ms / maxv * pw;
		ts_sb_addf(o, "<text class=\"klabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 8, y + 14);
		esc_cut(o, k->name, 44);
		ts_sb_adds(o, "<title>");
		esc(o, k->name);
		ts_sb_addf(o, "</title></text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" rx=\"2\" fill=\"#4c78a8\"/>",
			   L, y + 2, w > 1 ? w : 1);
		ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%.2f ms</text>", L + w + 6, y + 14,
			   k->total_ms);
	}
	ts_sb_adds(o, "</svg>\n");
}

/* --------------------------------------------------------------- ranks */

static void chart_ranks(const struct ts_report *r, struct ts_sb *o)
{
	const double L = 90, R = 150, T = 34, row = 30;
	double maxv = 0, pw = W - L - R;
	int split = 1;
	static const char *const names[] = { "compute", "communication", "other" };
	static const char *const colors[] = { "#4c78a8", "#e45756", "#c9c5c0" };

	for (size_t i = 0; i < r->ranks.n; i++) {
		const struct ts_report_rank *k = &r->ranks.v[i];
		if (isfinite(k->step_ms) && k->step_ms > maxv)
			maxv = k->step_ms;
		if (!isfinite(k->compute_ms) || !isfinite(k->comm_ms) || !isfinite(k->other_ms))
			split = 0;
	}
	if (!(maxv > 0))
		maxv = 1;
	svg_open(o, "chart-ranks", T + row * (double)r->ranks.n + 8, "per-rank step time");
	if (split)
		legend(o, L, 18, names, colors, 3);
	else
		legend(o, L, 18, names, colors, 0);
	for (size_t i = 0; i < r->ranks.n; i++) {
		const struct ts_report_rank *k = &r->ranks.v[i];
		double y = T + row * (double)i, x = L;
		ts_sb_addf(o, "<text class=\"klabel%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">rank %lld</text>",
			   k->straggler ? " bad" : "", L - 8, y + 16, (long long)k->rank);
		if (split) {
			double v[3] = { k->compute_ms, k->comm_ms, k->other_ms };
			for (int c = 0; c < 3; c++) {
				double w = v[c] > 0 ? v[c] / maxv * pw : 0;
				ts_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"%s\">"
					   "<title>rank %lld %s: %.1f ms</title></rect>",
					   x, y + 2, w, colors[c], (long long)k->rank, names[c], v[c]);
				x += w;
			}
		} else if (isfinite(k->step_ms)) {
			double w = k->step_ms / maxv * pw;
			ts_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"%s\"/>",
				   x, y + 2, w, k->straggler ? "#d62728" : "#4c78a8");
			x += w;
		}
		if (isfinite(k->step_ms))
			ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%.1f ms%s</text>", x + 6, y + 16,
				   k->step_ms, k->straggler ? " straggler" : "");
	}
	ts_sb_adds(o, "</svg>\n");
}

/* ------------------------------------------------------------------ A/B */

static void strip(struct ts_sb *o, const double *v, size_t n, double y, double L, double pw,
		  double lo, double hi, const char *color)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		/* deterministic jitter from the sample index */
		double j = (double)((i * 7919) % 17) - 8;
		ts_sb_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.55\"/>",
			   L + (v[i] - lo) / (hi - lo) * pw, y + j, color);
		sum += v[i];
	}
	if (n) {
		double x = L + (sum / (double)n - lo) / (hi - lo) * pw;
		ts_sb_addf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-width=\"2\"/>",
			   x, x, y - 14, y + 14);
	}
}

static void chart_ab(const struct ts_report *r, struct ts_sb *o)
{
	const struct ts_report_ab *ab = r->ab;
	const double L = 130, R = 30;
	double pw = W - L - R, lo = INFINITY, hi = -INFINITY, pad, clo, chi, zx;

	for (size_t i = 0; i < ab->na; i++) { lo = fmin(lo, ab->a[i]); hi = fmax(hi, ab->a[i]); }
	for (size_t i = 0; i < ab->nb; i++) { lo = fmin(lo, ab->b[i]); hi = fmax(hi, ab->b[i]); }
	if (!isfinite(lo)) { lo = 0; hi = 1; }
	pad = (hi - lo) * 0.05 + 1e-9;
	lo -= pad;
	hi += pad;
	svg_open(o, "chart-ab", 220, "A/B step time distributions");
	ts_sb_addf(o, "<text class=\"klabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 10, 44.0);
	esc_cut(o, ab->name_a ? ab->name_a : "A", 18);
	ts_sb_addf(o, "</text><text class=\"klabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 10, 94.0);
	esc_cut(o, ab->name_b ? ab->name_b : "B", 18);
	ts_sb_adds(o, "</text>");
	strip(o, ab->a, ab->na, 40, L, pw, lo, hi, "#4c78a8");
	strip(o, ab->b, ab->nb, 90, L, pw, lo, hi, "#f2a541");
	ts_sb_addf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"120\" y2=\"120\"/>", L, L + pw);
	ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"134\">", L);
	num(o, lo);
	ts_sb_addf(o, " ms</text><text class=\"tick\" x=\"%.1f\" y=\"134\" text-anchor=\"end\">", L + pw);
	num(o, hi);
	ts_sb_adds(o, " ms</text>");
	/* the CI of the relative difference on its own axis */
	clo = fmin(fmin(ab->ci_lo_pct, 0), ab->diff_pct);
	chi = fmax(fmax(ab->ci_hi_pct, 0), ab->diff_pct);
	pad = (chi - clo) * 0.15 + 0.1;
	clo -= pad;
	chi += pad;
#define CX(v) (L + ((v) - clo) / (chi - clo) * pw)
	zx = CX(0.0);
	ts_sb_addf(o, "<text class=\"klabel\" x=\"%.1f\" y=\"184\" text-anchor=\"end\">B vs A (%%)</text>", L - 10);
	ts_sb_addf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"160\" y2=\"200\" stroke=\"#888\" stroke-dasharray=\"3 3\"/>", zx, zx);
	ts_sb_addf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"180\" y2=\"180\" stroke=\"#222\" stroke-width=\"3\"/>",
		   CX(ab->ci_lo_pct), CX(ab->ci_hi_pct));
	ts_sb_addf(o, "<circle cx=\"%.1f\" cy=\"180\" r=\"5\" fill=\"#e45756\"/>", CX(ab->diff_pct));
	ts_sb_addf(o, "<text class=\"tick\" x=\"%.1f\" y=\"172\" text-anchor=\"middle\">%+.2f%% [%+.2f%%, %+.2f%%]</text>",
		   CX(ab->diff_pct), ab->diff_pct, ab->ci_lo_pct, ab->ci_hi_pct);
#undef CX
	ts_sb_adds(o, "</svg>\n");
}

/* --------------------------------------------------------------- memory */

static const char *const mem_colors[] = {
	"#4c78a8", "#f2a541", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d", "#bab0ac"
};

/* Bytes with a binary unit that keeps 2-3 significant digits. */
static void bytes_str(struct ts_sb *o, int64_t b)
{
	double v = (double)b;

	if (v >= 1073741824.0)
		ts_sb_addf(o, "%.2f GiB", v / 1073741824.0);
	else if (v >= 1048576.0)
		ts_sb_addf(o, "%.1f MiB", v / 1048576.0);
	else
		ts_sb_addf(o, "%.1f KiB", v / 1024.0);
}

static void chart_mem(const struct ts_report *r, struct ts_sb *o)
{
	const double L = 20, R = 20;
	double pw = W - L - R, total = 0, scale, x = L;

	for (size_t i = 0; i < r->mem.n; i++)
		total += (double)(r->mem.v[i].bytes > 0 ? r->mem.v[i].bytes : 0);
	scale = (double)r->mem_capacity_bytes > total ? (double)r->mem_capacity_bytes : total;
	if (!(scale > 0))
		scale = 1;
	svg_open(o, "chart-memory", 64 + 22 * (double)((r->mem.n + 3) / 4), "memory breakdown");
	for (size_t i = 0; i < r->mem.n; i++) {
		double w = (double)(r->mem.v[i].bytes > 0 ? r->mem.v[i].bytes : 0) / scale * pw;
		ts_sb_addf(o, "<rect x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"28\" fill=\"%s\"><title>",
			   x, w, mem_colors[i % 8]);
		esc(o, r->mem.v[i].name);
		ts_sb_adds(o, ": ");
		bytes_str(o, r->mem.v[i].bytes);
		ts_sb_adds(o, "</title></rect>");
		x += w;
	}
	if (r->mem_capacity_bytes > 0)
		ts_sb_addf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"4\" y2=\"44\" stroke=\"#d62728\" stroke-width=\"2\"/>",
			   L + (double)r->mem_capacity_bytes / scale * pw, L + (double)r->mem_capacity_bytes / scale * pw);
	for (size_t i = 0; i < r->mem.n; i++) {
		double lx = L + 215 * (double)(i % 4), ly = 62 + 22 * (double)(i / 4);
		ts_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\"/>"
			   "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", lx, ly - 10, mem_colors[i % 8], lx + 17, ly);
		esc_cut(o, r->mem.v[i].name, 18);
		ts_sb_addc(o, ' ');
		bytes_str(o, r->mem.v[i].bytes);
		ts_sb_adds(o, "</text>");
	}
	ts_sb_adds(o, "</svg>\n");
}

/* ------------------------------------------------------------- sections */

static const char css[] =
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"color:#1d2733;background:#f4f6f9}"
	"header{background:#18293d;color:#fff;padding:22px 36px 18px}"
	"header h1{margin:0;font-size:22px;font-weight:600}"
	"header .sub{color:#b8c7d9;margin-top:4px;font-size:13px;word-break:break-all}"
	"main{max-width:960px;margin:0 auto;padding:20px 24px 40px}"
	"section{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:16px 20px;margin:16px 0}"
	"h2{font-size:16px;margin:0 0 10px;color:#18293d}"
	".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:12px;margin-top:16px}"
	".card{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:12px 14px}"
	".card .k{font-size:12px;color:#5b6b7d;text-transform:uppercase;letter-spacing:.04em}"
	".card .v{font-size:19px;font-weight:600;margin-top:2px}"
	".card .n{font-size:12px;color:#5b6b7d;margin-top:2px}"
	".wall{border-left:6px solid #d62728}"
	".wall .name{font-size:20px;font-weight:700;color:#b01e1e}"
	"ul.items{margin:6px 0 0;padding-left:0;list-style:none}"
	"ul.items li{padding:6px 0 6px 26px;border-top:1px solid #eef1f4;position:relative}"
	"ul.items li:first-child{border-top:0}"
	"ul.items li:before{content:'';position:absolute;left:6px;top:12px;width:10px;height:10px;border-radius:50%;background:#4c78a8}"
	"ul.items li.warn:before{background:#f2a541}ul.items li.bad:before{background:#d62728}"
	"ul.items .d{color:#44515f;font-size:13px;white-space:pre-wrap}"
	".tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:9px;background:#fff4e0;color:#8a5a00;"
	"border:1px solid #f2d39a;margin-left:6px;vertical-align:1px}"
	"table{border-collapse:collapse;width:100%;margin-top:10px;font-size:13px}"
	"th,td{padding:5px 8px;border-bottom:1px solid #eef1f4;text-align:left;vertical-align:top}"
	"th{color:#5b6b7d;font-weight:600;background:#f8fafc}"
	"td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}"
	"td.name{word-break:break-all;font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px}"
	"svg.chart{width:100%;height:auto;display:block;margin-top:6px}"
	"svg .grid{stroke:#e7ebf0;stroke-width:1}"
	"svg .tick{font-size:11px;fill:#5b6b7d}svg .axis{font-size:12px;fill:#44515f}"
	"svg .legend{font-size:12px;fill:#1d2733}svg .klabel{font-size:11.5px;fill:#1d2733}"
	"svg .klabel.bad{fill:#d62728;font-weight:700}"
	"svg .window{fill:#dbe9f6}svg .line{fill:none;stroke:#4c78a8;stroke-width:1.6}"
	"svg .pt{fill:#4c78a8}svg .excl{fill:#fff;stroke:#b0b0b0;stroke-width:1.5}"
	"svg .stall{fill:#d62728}svg .stallmark{stroke:#d62728;stroke-width:1;stroke-dasharray:3 3;opacity:.5}"
	".muted{color:#5b6b7d;font-size:12.5px}"
	"footer{color:#8795a5;font-size:12px;text-align:center;padding:10px}"
	"#ts-errors:empty{display:none}#ts-errors{color:#d62728}";

/* Records script errors and the drawn size of every chart into the DOM, so
 * a headless browser run can check the page without a debugger. */
static const char script_head[] =
	"<script>window.addEventListener('error',function(e){var d=document.getElementById('ts-errors');"
	"var m=String(e.message||e.type);if(d){d.textContent+=m+'\\n';}else{window.__tsErr=(window.__tsErr||'')+m+'\\n';}});"
	"</script>";
static const char script_tail[] =
	"<script>(function(){var d=document.getElementById('ts-errors');if(window.__tsErr)d.textContent+=window.__tsErr;"
	"var s=document.querySelectorAll('svg.chart'),out=[];for(var i=0;i<s.length;i++){var b=s[i].getBBox();"
	"out.push(s[i].id+':'+(b.width>0&&b.height>0?'ok':'empty'));}"
	"document.body.setAttribute('data-ts-charts',out.join(' '));document.body.setAttribute('data-ts-ready','1');})();"
	"</script>";

static void items(struct ts_sb *o, const struct ts_report_item *v, size_t n, int candidate)
{
	ts_sb_adds(o, "<ul class=\"items\">");
	for (size_t i = 0; i < n; i++) {
		ts_sb_addf(o, "<li class=\"%s\"><b>", v[i].level == TS_REPORT_BAD ? "bad" :
			   v[i].level == TS_REPORT_WARN ? "warn" : "info");
		esc(o, v[i].title);
		ts_sb_adds(o, "</b>");
		if (candidate)
			ts_sb_adds(o, "<span class=\"tag\">candidate: test with trainscope ab</span>");
		if (v[i].detail) {
			ts_sb_adds(o, "<div class=\"d\">");
			esc(o, v[i].detail);
			ts_sb_adds(o, "</div>");
		}
		ts_sb_adds(o, "</li>");
	}
	ts_sb_adds(o, "</ul>");
}

static void section_open(struct ts_sb *o, const char *id, const char *title)
{
	ts_sb_addf(o, "<section id=\"%s\"><h2>%s</h2>", id, title);
}

static void num_cell(struct ts_sb *o, double v, int decimals)
{
	ts_sb_adds(o, "<td class=\"r\">");
	if (isfinite(v))
		ts_sb_addf(o, "%.*f", decimals, v);
	else
		ts_sb_adds(o, "-");
	ts_sb_adds(o, "</td>");
}

int ts_report_html(const struct ts_report *r, struct ts_sb *o)
{
	ts_sb_adds(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
		   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		   "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\"><title>");
	esc(o, r->title ? r->title : "trainscope report");
	ts_sb_addf(o, "</title><style>%s</style>%s</head>\n<body>", css, script_head);
	ts_sb_adds(o, "<header><h1>");
	esc(o, r->title ? r->title : "trainscope report");
	ts_sb_adds(o, "</h1>");
	if (r->subtitle) {
		ts_sb_adds(o, "<div class=\"sub\">");
		esc(o, r->subtitle);
		ts_sb_adds(o, "</div>");
	}
	ts_sb_adds(o, "</header>\n<main><div id=\"ts-errors\"></div>");

	if (r->wall || r->evidence.n) {
		ts_sb_adds(o, "<section id=\"wall\" class=\"wall\"><h2>Dominant wall</h2><div class=\"name\">");
		esc(o, r->wall ? r->wall : "undetermined");
		ts_sb_adds(o, "</div>");
		if (r->wall_basis) {
			ts_sb_adds(o, "<div class=\"muted\">evidence from ");
			esc(o, r->wall_basis);
			ts_sb_adds(o, "</div>");
		}
		items(o, r->evidence.v, r->evidence.n, 0);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->facts.n) {
		ts_sb_adds(o, "<div class=\"cards\">");
		for (size_t i = 0; i < r->facts.n; i++) {
			ts_sb_adds(o, "<div class=\"card\"><div class=\"k\">");
			esc(o, r->facts.v[i].name);
			ts_sb_adds(o, "</div><div class=\"v\">");
			esc(o, r->facts.v[i].value);
			ts_sb_adds(o, "</div>");
			if (r->facts.v[i].note) {
				ts_sb_adds(o, "<div class=\"n\">");
				esc(o, r->facts.v[i].note);
				ts_sb_adds(o, "</div>");
			}
			ts_sb_adds(o, "</div>");
		}
		ts_sb_adds(o, "</div>\n");
	}
	if (r->steps.n) {
		section_open(o, "steps", "Step time over the run");
		ts_sb_adds(o, "<div class=\"muted\">");
		if (r->steps_source) {
			ts_sb_adds(o, "source: ");
			esc(o, r->steps_source);
			ts_sb_adds(o, ". ");
		}
		if (r->window_first > 0)
			ts_sb_addf(o, "Shaded: steady window, iterations %lld-%lld. ",
				   (long long)r->window_first, (long long)r->window_last);
		ts_sb_adds(o, "Red: stalls.</div>");
		chart_steps(r, o);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->stacks.n) {
		section_open(o, "classes", "Time per step by class");
		if (r->stacks_title) {
			ts_sb_adds(o, "<div class=\"muted\">");
			esc(o, r->stacks_title);
			ts_sb_adds(o, "</div>");
		}
		chart_stacks(r, o);
		ts_sb_adds(o, "<table><tr><th>step</th>");
		for (int c = 0; c < TS_REPORT_NCLASS; c++)
			ts_sb_addf(o, "<th class=\"r\">%s (ms)</th>", ts_report_class_name((enum ts_report_class)c));
		ts_sb_adds(o, "</tr>");
		for (size_t i = 0; i < r->stacks.n; i++) {
			ts_sb_adds(o, "<tr><td>");
			esc(o, r->stacks.v[i].label);
			ts_sb_adds(o, "</td>");
			for (int c = 0; c < TS_REPORT_NCLASS; c++)
				num_cell(o, r->stacks.v[i].ms[c], 2);
			ts_sb_adds(o, "</tr>");
		}
		ts_sb_adds(o, "</table></section>\n");
	}
	if (r->kernels.n) {
		section_open(o, "kernels", "Top kernels");
		if (r->kernels_basis) {
			ts_sb_adds(o, "<div class=\"muted\">");
			esc(o, r->kernels_basis);
			ts_sb_adds(o, "</div>");
		}
		chart_kernels(r, o);
		ts_sb_adds(o, "<table><tr><th>name</th><th class=\"r\">count</th><th class=\"r\">total (ms)</th>"
			   "<th class=\"r\">share (%)</th></tr>");
		for (size_t i = 0; i < r->kernels.n; i++) {
			const struct ts_report_kernel *k = &r->kernels.v[i];
			/* long template names are cut here; the full name is the tooltip
			 * and the Markdown variant */
			ts_sb_adds(o, "<tr><td class=\"name\" title=\"");
			esc(o, k->name);
			ts_sb_adds(o, "\">");
			esc_cut(o, k->name, 120);
			ts_sb_addf(o, "</td><td class=\"r\">%lld</td>", (long long)k->count);
			num_cell(o, k->total_ms, 3);
			num_cell(o, k->pct, 1);
			ts_sb_adds(o, "</tr>");
		}
		ts_sb_adds(o, "</table></section>\n");
	}
	if (r->ranks.n) {
		section_open(o, "ranks", "Per-rank comparison");
		chart_ranks(r, o);
		ts_sb_adds(o, "<table><tr><th>rank</th><th class=\"r\">step (ms)</th><th class=\"r\">compute (ms)</th>"
			   "<th class=\"r\">communication (ms)</th><th class=\"r\">other (ms)</th><th>note</th></tr>");
		for (size_t i = 0; i < r->ranks.n; i++) {
			const struct ts_report_rank *k = &r->ranks.v[i];
			ts_sb_addf(o, "<tr><td>%lld</td>", (long long)k->rank);
			num_cell(o, k->step_ms, 1);
			num_cell(o, k->compute_ms, 1);
			num_cell(o, k->comm_ms, 1);
			num_cell(o, k->other_ms, 1);
			ts_sb_addf(o, "<td>%s</td></tr>", k->straggler ? "straggler" : "");
		}
		ts_sb_adds(o, "</table></section>\n");
	}
	if (r->ab) {
		const struct ts_report_ab *ab = r->ab;
		section_open(o, "ab", "A/B comparison");
		chart_ab(r, o);
		ts_sb_adds(o, "<table><tr><th>arm</th><th class=\"r\">samples</th></tr><tr><td>");
		esc(o, ab->name_a ? ab->name_a : "A");
		ts_sb_addf(o, "</td><td class=\"r\">%zu</td></tr><tr><td>", ab->na);
		esc(o, ab->name_b ? ab->name_b : "B");
		ts_sb_addf(o, "</td><td class=\"r\">%zu</td></tr></table>", ab->nb);
		ts_sb_addf(o, "<p>B vs A: <b>%+.2f%%</b>, CI [%+.2f%%, %+.2f%%]", ab->diff_pct, ab->ci_lo_pct,
			   ab->ci_hi_pct);
		if (ab->verdict) {
			ts_sb_adds(o, " &mdash; ");
			esc(o, ab->verdict);
		}
		ts_sb_adds(o, "</p></section>\n");
	}
	if (r->mem.n) {
		section_open(o, "memory", "Memory breakdown");
		if (r->mem_title) {
			ts_sb_adds(o, "<div class=\"muted\">");
			esc(o, r->mem_title);
			ts_sb_adds(o, "</div>");
		}
		chart_mem(r, o);
		ts_sb_adds(o, "<table><tr><th>term</th><th class=\"r\">bytes</th><th class=\"r\">GiB</th></tr>");
		for (size_t i = 0; i < r->mem.n; i++) {
			ts_sb_adds(o, "<tr><td>");
			esc(o, r->mem.v[i].name);
			ts_sb_addf(o, "</td><td class=\"r\">%lld</td><td class=\"r\">%.2f</td></tr>",
				   (long long)r->mem.v[i].bytes, (double)r->mem.v[i].bytes / 1073741824.0);
		}
		if (r->mem_capacity_bytes > 0)
			ts_sb_addf(o, "<tr><td>device capacity</td><td class=\"r\">%lld</td><td class=\"r\">%.2f</td></tr>",
				   (long long)r->mem_capacity_bytes, (double)r->mem_capacity_bytes / 1073741824.0);
		ts_sb_adds(o, "</table></section>\n");
	}
	if (r->findings.n) {
		section_open(o, "findings", "Findings");
		items(o, r->findings.v, r->findings.n, 0);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->diff.n) {
		section_open(o, "diff", "Diff vs baseline");
		items(o, r->diff.v, r->diff.n, 0);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->advice.n) {
		section_open(o, "advice", "Candidates for the dominant wall");
		ts_sb_adds(o, "<div class=\"muted\">Each is a hypothesis to measure with <code>trainscope ab</code> "
			   "(one variable at a time, matched runs), never a default to apply.</div>");
		items(o, r->advice.v, r->advice.n, 1);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->missing.n) {
		section_open(o, "missing", "Missing evidence and how to collect it");
		items(o, r->missing.v, r->missing.n, 0);
		ts_sb_adds(o, "</section>\n");
	}
	if (r->warnings.n) {
		section_open(o, "warnings", "Warnings");
		items(o, r->warnings.v, r->warnings.n, 0);
		ts_sb_adds(o, "</section>\n");
	}
	ts_sb_adds(o, "</main><footer>generated by trainscope</footer>");
	ts_sb_addf(o, "%s</body></html>\n", script_tail);
	return o->failed || r->failed ? TS_ENOMEM : 0;
}
