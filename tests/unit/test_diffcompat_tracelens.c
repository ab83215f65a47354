/*
 * test_diffcompat_tracelens.c - `diff --tracelens-compat` on TraceLens's
 * own cross-vendor pair (H100 vs MI300X, Qwen1.5-0.5B): the gpu_timeline
 * comparison equals TraceLens's comparison CSV (parsed here), and the
 * kernel families equal sums worked out by hand from TraceLens's
 * kernel_summary.csv of each side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/diffcompat.h"

#define TLC "traces/tracelens-compare/tests/traces/"

static int load(const char *rel, struct ts_trace *t)
{
	const char *p = test_data(rel);
	struct ts_err err;

	ts_trace_init(t);
	if (!p)
		return -1;
	ts_err_init(&err);
	return ts_trace_read(t, p, NULL, &err);
}

/* |got - want| within 1e-9 relative (the CSV prints float64 repr), or
 * 1e-12 absolute for zeros. */
static int close_to(double got, double want)
{
	double d = got - want;
	if (d < 0)
		d = -d;
	return d <= 1e-12 || d <= 1e-9 * (want < 0 ? -want : want);
}

static const struct ts_diff_tl_family_row *fam(const struct ts_diff_tracelens *d,
					    enum ts_diff_family f)
{
	for (size_t k = 0; k < d->nfam; k++)
		if (d->fam[k].family == f)
			return &d->fam[k];
	return NULL;
}

TEST(diffcompat_tracelens_h100_mi300)
{
	struct ts_trace h, m;
	struct ts_diff_tracelens d;
	struct ts_err err;
	const char *csv;
	FILE *fp;
	char line[1024];
	int rows = 0;
	const struct ts_diff_tl_family_row *f;
	double kern_h = 0, kern_m = 0;

	if (load(TLC "h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", &h) ||
	    load(TLC "mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", &m)) {
		ts_trace_release(&h);
		ts_trace_release(&m);
		return;
	}
	ts_err_init(&err);
	REQUIRE(ts_diff_tracelens_compare(&h, &m, &d, &err) == 0);

	/* Type,time ms__mi300_diff,time ms__mi300_pct,h100::time ms,h100::percent,
	 * mi300::time ms,mi300::percent */
	csv = test_data(TLC "compare_test_e2e/reference/compare_h100_mi300_qwen_csvs/gpu_timeline.csv");
	REQUIRE(csv);
	fp = fopen(csv, "r");
	REQUIRE(fp);
	REQUIRE(fgets(line, sizeof(line), fp));
	while (fgets(line, sizeof(line), fp)) {
		char *f[7], *p = line;
		int nf = 0, mi = -1;
		const struct ts_diff_tl_row *r;

		line[strcspn(line, "\r\n")] = 0;
		while (nf < 7 && p) {
			f[nf++] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = 0;
		}
		REQUIRE(nf == 7);
		for (int k = 0; k < TS_DIFF_TL_NMETRIC; k++)
			if (strcmp(f[0], ts_diff_tl_metric_name((enum ts_diff_tl_metric)k)) == 0)
				mi = k;
		if (mi < 0) {
			ts_test_fail(__FILE__, __LINE__, "unknown gpu_timeline type %s", f[0]);
			continue;
		}
		r = &d.rows[mi];
		rows++;
		if (!close_to(r->diff_us / 1000.0, strtod(f[1], NULL)) ||
		    !close_to(r->baseline_us / 1000.0, strtod(f[3], NULL)) ||
		    !close_to(r->baseline_pct, strtod(f[4], NULL)) ||
		    !close_to(r->variant_us / 1000.0, strtod(f[5], NULL)) ||
		    !close_to(r->variant_pct, strtod(f[6], NULL)))
			ts_test_fail(__FILE__, __LINE__, "%s: got diff %.17g ms, %.17g / %.17g ms; "
				     "TraceLens %s, %s / %s", f[0], r->diff_us / 1000.0,
				     r->baseline_us / 1000.0, r->variant_us / 1000.0, f[1], f[3], f[5]);
		/* an empty pct is TraceLens's division by a zero baseline */
		if (f[2][0] ? !close_to(r->diff_pct, strtod(f[2], NULL)) : !isnan(r->diff_pct))
			ts_test_fail(__FILE__, __LINE__, "%s: diff pct %.17g, TraceLens \"%s\"", f[0],
				     r->diff_pct, f[2]);
	}
	fclose(fp);
	CHECK_I64(rows, 8);

	/*
	 * Families against each side's kernel_summary.csv (TraceLens's table
	 * of every kernel, grouped by parent op):
	 * H100 GEMM kernels (sm90_xmma_gemm under aten::mm 96 + 73, under
	 * aten::addmm 72, cutlass sgemm under aten::bmm 1) = 242 kernels,
	 * 6588.415 + 3935.211 + 2266.292 + 3.52 = 12793.438 us; flash_fwd
	 * (24 under _flash_attention_forward, 10 that TraceLens puts under
	 * aten::mul) = 34, 2722.705 + 1132.763 = 3855.468 us.
	 * MI300X Cijk_ GEMMs: 48 + 48 (mm) + 72 + 52 (addmm) + 1 (bmm) + 22
	 * (under aten::mul) = 243, 5308.273 + 3355.344 + 2954.763 + 2787.634 +
	 * 27.342 + 2454.377 = 16887.733 us; attn_fwd 24 + 11 = 35, 3908.798 +
	 * 1786.574 = 5695.372 us.
	 * All kernels (kernel_summary excludes memcpy and memset): H100
	 * 45432.698 us, MI300X 43062.042 us (column sums, 3 decimals).
	 */
	f = fam(&d, TS_DF_GEMM);
	REQUIRE(f);
	CHECK_I64(f->baseline_count, 242);
	CHECK_NEAR(f->baseline_us, 12793.438, 5e-4);
	CHECK_I64(f->variant_count, 243);
	CHECK_NEAR(f->variant_us, 16887.733, 5e-4);
	CHECK_I64(f->baseline_names, 2);
	CHECK_I64(f->variant_names, 3);
	f = fam(&d, TS_DF_ATTN_FWD);
	REQUIRE(f);
	CHECK_I64(f->baseline_count, 34);
	CHECK_NEAR(f->baseline_us, 3855.468, 5e-4);
	CHECK_I64(f->variant_count, 35);
	CHECK_NEAR(f->variant_us, 5695.372, 5e-4);
	CHECK(!fam(&d, TS_DF_ATTN_BWD) && !fam(&d, TS_DF_ALLREDUCE));
	for (size_t k = 0; k < d.nfam; k++)
		if (d.fam[k].family != TS_DF_MEMCPY && d.fam[k].family != TS_DF_MEMSET) {
			kern_h += d.fam[k].baseline_us;
			kern_m += d.fam[k].variant_us;
		}
	CHECK_NEAR(kern_h, 45432.698, 2e-3);
	CHECK_NEAR(kern_m, 43062.042, 2e-3);

	{
		struct ts_sb sb;
		struct ts_jw w;
		ts_sb_init(&sb);
		ts_diff_tracelens_render(&d, &sb);
		CHECK(strstr(sb.buf, "attention_fwd") && strstr(sb.buf, "diff (ms)"));
		ts_sb_reset(&sb);
		ts_jw_init(&w, &sb, 0);
		ts_diff_tracelens_write_json(&d, &w);
		CHECK(strstr(sb.buf, "\"type\":\"exposed_comm_time\"") &&
		      strstr(sb.buf, "\"diff_pct\":null"));
		ts_sb_release(&sb);
	}
	ts_trace_release(&h);
	ts_trace_release(&m);
}

/* Families of names from several vendors, by hand. */
TEST(diffcompat_family_names)
{
	static const struct {
		const char *name;
		enum ts_diff_family want;
	} c[] = {
		{ "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", TS_DF_ALLREDUCE },
		{ "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", TS_DF_REDUCESCATTER },
		{ "ncclDevKernel_AllGather_RING_LL", TS_DF_ALLGATHER },
		{ "ncclDevKernel_SendRecv", TS_DF_SENDRECV },
		{ "ncclKernel_Broadcast_RING_LL_Sum_int8_t", TS_DF_BROADCAST },
		{ "mcclKernel_AllToAll", TS_DF_ALLTOALL },
		{ "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>", TS_DF_ATTN_BWD },
		{ "attn_fwd", TS_DF_ATTN_FWD },
		{ "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT128x224x64", TS_DF_GEMM },
		{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", TS_DF_GEMM },
		{ "multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>", TS_DF_OPTIMIZER },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		enum ts_diff_family f = ts_diff_family_of(c[i].name, strlen(c[i].name), 0, 0);
		if (f != c[i].want)
			ts_test_fail(__FILE__, __LINE__, "%s: %s, want %s", c[i].name,
				     ts_diff_family_name(f), ts_diff_family_name(c[i].want));
	}
	CHECK_I64(ts_diff_family_of("Memcpy HtoD (Pinned -> Device)", 30, 1, 0), TS_DF_MEMCPY);
	CHECK_I64(ts_diff_family_of("Memset (Device)", 15, 0, 1), TS_DF_MEMSET);
}
