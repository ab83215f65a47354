/* Report model and renderers: escaping, sections present only with data,
 * determinism. Expected strings are written out by hand from the HTML and
 * Markdown escaping rules. */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/report.h"

static char *render(const struct ts_report *r, int md)
{
	struct ts_sb sb;
	char *s;

	ts_sb_init(&sb);
	if (md ? ts_report_md(r, &sb) : ts_report_html(r, &sb)) {
		ts_sb_release(&sb);
		return NULL;
	}
	s = strdup(sb.buf);
	ts_sb_release(&sb);
	return s;
}

TEST(html_escape_specials_and_utf8)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	ts_html_escape(&sb, "<a&b>\"'", 7);
	CHECK_STR(sb.buf, "&lt;a&amp;b&gt;&quot;&#39;");
	ts_sb_reset(&sb);
	/* é (c3 a9) is valid and kept; a lone 0xff and a cut 0xe2 0x82 become U+FFFD each */
	ts_html_escape(&sb, "\xc3\xa9\xff" "x\xe2\x82", 6);
	CHECK_STR(sb.buf, "\xc3\xa9\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd");
	ts_sb_reset(&sb);
	/* an overlong encoding of '/' (c0 af) is invalid: two replacements */
	ts_html_escape(&sb, "\xc0\xaf", 2);
	CHECK_STR(sb.buf, "\xef\xbf\xbd\xef\xbf\xbd");
	ts_sb_release(&sb);
}

TEST(report_escapes_trace_names)
{
	struct ts_report r;
	char *html, *md;

	ts_report_init(&r);
	ts_report_add_kernel(&r, "void gemm<float, 4>(int&) \"x\"", 3, 1.5, 50.0);
	ts_report_add_kernel(&r, "a|b", 1, 0.5, 25.0);
	html = render(&r, 0);
	md = render(&r, 1);
	REQUIRE(html && md);
	CHECK(strstr(html, "void gemm&lt;float, 4&gt;(int&amp;) &quot;x&quot;") != NULL);
	CHECK(strstr(html, "gemm<float") == NULL);
	CHECK(strstr(html, "id=\"chart-top-kernels\"") != NULL);
	/* Markdown: | escaped so the table keeps its columns, < > as entities */
	CHECK(strstr(md, "| a\\|b | 1 | 0.500 | 25.0 |") != NULL);
	CHECK(strstr(md, "void gemm&lt;float, 4&gt;(int&amp;) &quot;x&quot; | 3 | 1.500 | 50.0 |") != NULL);
	free(html);
	free(md);
	ts_report_release(&r);
}

/* An item's later lines (a snippet to paste) stay lines in Markdown: a
 * fenced block with their common indent taken off and nothing escaped
 * (joined with "; ", the Python no longer parsed). */
TEST(report_md_snippet_stays_code)
{
	struct ts_report r;
	char *md;

	ts_report_init(&r);
	ts_report_add_item(&r, TS_REPORT_MISSING, TS_REPORT_WARN, "profiler trace",
			   "add a profiler:\n  prof = p(\n      a=[1],  # x_y\n      b=\"z\")\n  prof.start()");
	ts_report_add_item(&r, TS_REPORT_MISSING, TS_REPORT_INFO, "fenced",
			   "two\n  ```\n  lines");
	md = render(&r, 1);
	REQUIRE(md);
	CHECK(strstr(md, "  add a profiler:\n\n  ```\n  prof = p(\n      a=[1],  # x_y\n"
			 "      b=\"z\")\n  prof.start()\n  ```\n") != NULL);
	/* a detail that holds a fence itself stays text, its lines joined */
	CHECK(strstr(md, "two;   \\`\\`\\`;   lines") != NULL);
	free(md);
	ts_report_release(&r);
}

TEST(report_sections_follow_data)
{
	struct ts_report r;
	char *html;
	double cls[TS_REPORT_NCLASS] = { 10, 2, 1, 3 };
	struct ts_report_rank row = { 1, 20, 10, 5, 5, 1 };

	ts_report_init(&r);
	html = render(&r, 0);
	REQUIRE(html);
	CHECK(strstr(html, "<svg") == NULL);
	/* self-contained: no URL at all without charts, no external script */
	CHECK(strstr(html, "http:") == NULL && strstr(html, "https:") == NULL);
	CHECK(strstr(html, "<script src") == NULL);
	free(html);

	ts_report_add_step(&r, 1, 120.0, TS_REPORT_STEP_EXCLUDED);
	ts_report_add_step(&r, 2, 100.0, TS_REPORT_STEP_NORMAL);
	ts_report_add_step(&r, 3, 400.0, TS_REPORT_STEP_STALL);
	r.window_first = 2;
	r.window_last = 3;
	html = render(&r, 0);
	REQUIRE(html);
	CHECK(strstr(html, "id=\"chart-step-time\"") != NULL);
	CHECK(strstr(html, "id=\"chart-gpu-classes\"") == NULL);
	CHECK(strstr(html, "class=\"window\"") != NULL);
	CHECK(strstr(html, "iteration 3: 400.0 ms (stall)") != NULL);
	free(html);

	ts_report_add_stack(&r, "iter 2", cls);
	ts_report_add_rank(&r, &row);
	ts_report_add_mem(&r, "weights", 1073741824);
	{
		double a[3] = { 100, 101, 99 }, b[3] = { 90, 91, 89 };
		struct ts_report_ab ab = { "base", "cand", a, b, 3, 3, -10.0, -11.0, -9.0, "faster" };
		ts_report_set_ab(&r, &ab);
	}
	html = render(&r, 0);
	REQUIRE(html);
	CHECK(strstr(html, "id=\"chart-gpu-classes\"") != NULL);
	CHECK(strstr(html, "id=\"chart-ranks\"") != NULL);
	CHECK(strstr(html, "id=\"chart-memory\"") != NULL);
	CHECK(strstr(html, "id=\"chart-ab\"") != NULL);
	/* 1073741824 bytes = 1.00 GiB */
	CHECK(strstr(html, "<td class=\"r\">1073741824</td><td class=\"r\">1.00</td>") != NULL);
	CHECK(strstr(html, "B vs A: <b>-10.00%</b>, CI [-11.00%, -9.00%]") != NULL);
	free(html);
	ts_report_release(&r);
}

TEST(report_is_deterministic)
{
	struct ts_report r;
	char *a, *b;

	ts_report_init(&r);
	r.title = ts_report_strdup(&r, "t");
	for (int i = 1; i <= 50; i++)
		ts_report_add_step(&r, i, 100.0 + (i % 7) * 3.25, i % 7 == 0);
	ts_report_add_fact(&r, "steady step time", "101.2 ms", NULL);
	ts_report_add_item(&r, TS_REPORT_ADVICE, TS_REPORT_INFO, "x", "y");
	a = render(&r, 0);
	b = render(&r, 0);
	REQUIRE(a && b);
	CHECK(strcmp(a, b) == 0);
	CHECK(strstr(a, "candidate: test with trainscope ab") != NULL);
	free(a);
	free(b);
	ts_report_release(&r);
}
