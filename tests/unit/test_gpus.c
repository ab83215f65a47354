/* Unit tests for the GPU peak catalog and the user catalog file. */
#include "harness.h"
#include "trainscope/gpus.h"

/* Peaks from ../shared/reference/flops-memory-workflow.md section 6. */
TEST(gpus_lookup_and_peaks)
{
	struct ts_gpu_catalog c;
	struct ts_err err;
	const struct ts_gpu *g;
	const char *src;
	double tf;

	REQUIRE(ts_gpu_catalog_init(&c) == 0);
	g = ts_gpu_find(&c, "h100");
	REQUIRE(g != NULL);
	CHECK_STR(g->sku, "H100-SXM");
	CHECK(ts_gpu_find(&c, "H100 SXM") == g);
	CHECK(ts_gpu_find(&c, "h100-sxm") == g);
	CHECK(ts_gpu_find(&c, "NVIDIA H100 80GB HBM3") == g);
	REQUIRE(ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 989.4, 1e-9);
	CHECK(strstr(src, "glennklockwood") != NULL);
	CHECK_I64(g->memory_bytes, 80LL << 30);
	CHECK_NEAR(g->link_bytes_per_s, 900e9, 1);
	CHECK(ts_gpu_peak(g, TS_PREC_FP4, &tf, &src, &err) == TS_EUNSUPPORTED);

	g = ts_gpu_find(&c, "MTT S4000");
	REQUIRE(g != NULL);
	CHECK(ts_gpu_find(&c, "s4000") == g);
	REQUIRE(ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 100, 1e-9);
	CHECK_NEAR(g->link_bytes_per_s, 240e9, 1);

	g = ts_gpu_find(&c, "MTT S5000");
	REQUIRE(g != NULL);
	ts_err_init(&err);
	CHECK(ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == TS_EUNSUPPORTED);
	CHECK(strstr(err.msg, "--peak-tflops") != NULL);
	CHECK(strstr(err.msg, "catalog") != NULL);
	REQUIRE(ts_gpu_peak(g, TS_PREC_FP8, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 1000, 1e-9);

	g = ts_gpu_find(&c, "gb200");
	REQUIRE(g != NULL && ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 2500, 1e-9);
	CHECK_I64(g->link_domain, 72);
	g = ts_gpu_find(&c, "MI300X");
	REQUIRE(g != NULL && ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 1307.4, 1e-9);
	CHECK(ts_gpu_find(&c, "V100") == NULL);
	CHECK(ts_gpu_find(&c, "") == NULL);
	ts_gpu_catalog_release(&c);
}

TEST(gpus_every_builtin_peak_has_a_source)
{
	struct ts_gpu_catalog c;

	REQUIRE(ts_gpu_catalog_init(&c) == 0);
	CHECK(c.n >= 18);
	for (size_t i = 0; i < c.n; i++) {
		CHECK(c.v[i].source != NULL && c.v[i].source[0] != '\0');
		CHECK(c.v[i].memory_bytes > 0);
	}
	ts_gpu_catalog_release(&c);
}

TEST(gpus_user_catalog_overrides_and_extends)
{
	static const char file[] =
		"{\"schema\": \"trainscope.gpus/1\", \"gpus\": [\n"
		" {\"sku\": \"S5000\", \"peak_tflops\": {\"bf16\": 512, \"fp4\": \"unsupported\"},\n"
		"  \"source\": \"site datasheet\"},\n"
		" {\"sku\": \"X1\", \"vendor\": \"Acme\", \"aliases\": [\"acme-x1\"],\n"
		"  \"peak_tflops\": {\"BF16\": 100.5}, \"memory_bytes\": 1073741824}\n"
		"]}";
	static const char bad[] = "{\"gpus\": [{\"sku\": \"Y\", \"peak_tflops\": {\"fp7\": 1}}]}";
	struct ts_gpu_catalog c;
	struct ts_err err;
	const struct ts_gpu *g;
	const char *src;
	double tf;
	size_t n0;

	REQUIRE(ts_gpu_catalog_init(&c) == 0);
	n0 = c.n;
	REQUIRE(ts_gpu_catalog_parse(&c, file, sizeof(file) - 1, "site.json", &err) == 0);
	CHECK_I64(c.n, n0 + 1);
	g = ts_gpu_find(&c, "MTT-S5000");
	REQUIRE(g != NULL);
	REQUIRE(ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 512, 1e-9);
	CHECK_STR(src, "site datasheet");
	CHECK_I64(g->peak[TS_PREC_FP4].state, TS_PEAK_UNSUPPORTED);
	REQUIRE(ts_gpu_peak(g, TS_PREC_FP8, &tf, &src, &err) == 0); /* untouched */
	CHECK_NEAR(tf, 1000, 1e-9);
	g = ts_gpu_find(&c, "ACME X1");
	REQUIRE(g != NULL);
	REQUIRE(ts_gpu_peak(g, TS_PREC_BF16, &tf, &src, &err) == 0);
	CHECK_NEAR(tf, 100.5, 1e-9);
	CHECK_STR(src, "user catalog site.json");
	CHECK_I64(g->memory_bytes, 1073741824);
	ts_err_init(&err);
	CHECK_I64(ts_gpu_catalog_parse(&c, bad, sizeof(bad) - 1, "bad.json", &err), TS_EPARSE);
	CHECK_I64(err.offset, 39);
	ts_gpu_catalog_release(&c);
}

TEST(gpus_precision_names)
{
	CHECK_I64(ts_precision_parse("BF16"), TS_PREC_BF16);
	CHECK_I64(ts_precision_parse("mxfp8"), TS_PREC_FP8);
	CHECK_I64(ts_precision_parse("fp6"), -1);
	CHECK_STR(ts_precision_name(TS_PREC_INT8), "int8");
}

/* Lookups scan every entry, so a catalog is capped at 1024 entries: the
 * 1025th is refused with TS_ELIMIT instead of going quadratic. */
TEST(gpus_user_catalog_entry_cap)
{
	struct ts_gpu_catalog c;
	struct ts_err err;
	struct ts_sb doc;

	ts_sb_init(&doc);
	ts_sb_adds(&doc, "{\"gpus\": [");
	for (int i = 0; i < 1025; i++)
		ts_sb_addf(&doc, "%s{\"sku\": \"x%d\"}", i ? "," : "", i);
	ts_sb_adds(&doc, "]}");
	REQUIRE(!doc.failed);
	REQUIRE(ts_gpu_catalog_init(&c) == 0);
	CHECK_I64(ts_gpu_catalog_parse(&c, doc.buf, doc.len, "big.json", &err), TS_ELIMIT);
	ts_gpu_catalog_release(&c);
	ts_sb_release(&doc);
}

/* Every built-in SKU cites its own source: no two entries share a source
 * line (H200 used to cite the H100 datasheet line, GB200 the B200 one). */
TEST(gpus_each_sku_cites_its_own_source)
{
	struct ts_gpu_catalog c;

	REQUIRE(ts_gpu_catalog_init(&c) == 0);
	for (size_t i = 0; i < c.n; i++) {
		CHECK(c.v[i].source && c.v[i].source[0]);
		for (size_t j = 0; j < i; j++)
			if (c.v[i].source && c.v[j].source && strcmp(c.v[i].source, c.v[j].source) == 0) {
				fprintf(stderr, "  %s and %s share a source\n", c.v[i].sku, c.v[j].sku);
				CHECK(0);
			}
	}
	ts_gpu_catalog_release(&c);
}
