/*
 * test_diffcompat_hta.c - `diff --hta-compat` (ts_diff_hta_*) against
 * HTA's own test expectations (tests/test_trace_diff.py, quoted in
 * capabilities-anchors.md §5a) and against the real HTA's output for two
 * trace pairs (tests/fixtures/diffcompat/hta_trace_{compare,diff}.tsv, written by
 * tests/fixtures/diffcompat/hta_oracle.py running HTA f4d0062; the script
 * diff-hta-oracle.sh checks the fixtures still equal HTA's output).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "tbuild.h"
#include "trainscope/diffcompat.h"

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

static const struct ts_diff_hta_row *row(const struct ts_diff_hta *d, const char *name)
{
	for (size_t k = 0; k < d->nrows; k++)
		if (strcmp(d->rows[k].name, name) == 0)
			return &d->rows[k];
	return NULL;
}

static int in_set(const struct ts_diff_hta *d, const char *name, enum ts_diff_hta_set s)
{
	const struct ts_diff_hta_row *r = row(d, name);
	return r && r->set == s;
}

/* HTA's test_trace_diff.py on trace_compare, rank 1, iteration 1010. */
TEST(diffcompat_hta_trace_compare_expectations)
{
	struct ts_trace b, t;
	const struct ts_trace *bp[1] = { &b }, *tp[1] = { &t };
	const int64_t rank = 1, iter = 1010;
	struct ts_diff_hta_side cs = { bp, 1, &rank, 1, &iter, 1 };
	struct ts_diff_hta_side ts = { tp, 1, &rank, 1, &iter, 1 };
	struct ts_diff_hta d;
	struct ts_err err;
	const struct ts_diff_hta_row *r;

	if (load("traces/hta/trace_compare/base/base.json.gz", &b) ||
	    load("traces/hta/trace_compare/test/test.json.gz", &t)) {
		ts_trace_release(&b);
		ts_trace_release(&t);
		return;
	}
	ts_err_init(&err);
	REQUIRE(ts_diff_hta_compare(&cs, &ts, TS_DIFF_HTA_CPU, 0, &d, &err) == 0);
	CHECK_I64(d.nchange[0], 3); /* + */
	CHECK_I64(d.nchange[1], 1); /* - */
	CHECK_I64(d.nchange[2], 5); /* = */
	CHECK(in_set(&d, "AddmmBackward0", TS_DIFF_HTA_ADDED));
	CHECK(in_set(&d, "All2All_Pooled_Req", TS_DIFF_HTA_ADDED));
	CHECK(in_set(&d, "CatBackward0", TS_DIFF_HTA_ADDED));
	CHECK(in_set(&d, "nccl:all_reduce", TS_DIFF_HTA_DELETED));
	CHECK(in_set(&d, "ProfilerStep#1010", TS_DIFF_HTA_UNCHANGED));
	CHECK(in_set(&d, "aten::as_strided", TS_DIFF_HTA_UNCHANGED));
	CHECK(in_set(&d, "aten::empty", TS_DIFF_HTA_UNCHANGED));
	CHECK(in_set(&d, "cudaEventQuery", TS_DIFF_HTA_UNCHANGED));
	CHECK(in_set(&d, "cudaLaunchKernel", TS_DIFF_HTA_UNCHANGED));
	CHECK_I64(d.nset[TS_DIFF_HTA_ADDED], 3);
	CHECK_I64(d.nset[TS_DIFF_HTA_DELETED], 1);
	CHECK_I64(d.nset[TS_DIFF_HTA_UNCHANGED], 5);
	r = row(&d, "ProfilerStep#1010");
	CHECK(r && r->control_us == 122149.0);
	r = row(&d, "nccl:all_reduce");
	CHECK(r && r->control_us == 67.0 && r->test_counts == 0 && r->diff_us == -67.0);
	r = row(&d, "cudaEventQuery");
	CHECK(r && r->control_us == 4.0);
	r = row(&d, "cudaLaunchKernel");
	CHECK(r && r->control_us == 4.0);
	ts_diff_hta_release(&d);

	REQUIRE(ts_diff_hta_compare(&cs, &ts, TS_DIFF_HTA_GPU, 0, &d, &err) == 0);
	CHECK_I64(d.nchange[0], 0);
	CHECK_I64(d.nchange[1], 1);
	CHECK_I64(d.nchange[2], 0);
	ts_diff_hta_release(&d);

	/* an iteration the trace does not have is HTA's ValueError */
	{
		const int64_t bad = 7;
		struct ts_diff_hta_side cb = { bp, 1, &rank, 1, &bad, 1 };
		CHECK_I64(ts_diff_hta_compare(&cb, &ts, TS_DIFF_HTA_CPU, 0, &d, &err), TS_EUSAGE);
		ts_diff_hta_release(&d);
	}
	ts_trace_release(&b);
	ts_trace_release(&t);
}

static double num(const char *s)
{
	return strtod(s, NULL);
}

/* Every row of the oracle for (device, short) in order, field by field. */
static void against_oracle(const char *fixture, const char *cdir, const char *tdir,
			   const char *cfile, const char *tfile, int with_args)
{
	static const char *const dev_name[] = { "CPU", "GPU", "ALL" };
	static const enum ts_diff_hta_device devs[] = { TS_DIFF_HTA_CPU, TS_DIFF_HTA_GPU,
							  TS_DIFF_HTA_ALL };
	char rel[256];
	struct ts_trace b, t;
	const struct ts_trace *bp[1] = { &b }, *tp[1] = { &t };
	const int64_t rank = 1, iter = 1010;
	struct ts_diff_hta_side cs = { bp, 1, NULL, 0, NULL, 0 };
	struct ts_diff_hta_side ts = { tp, 1, NULL, 0, NULL, 0 };
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	size_t checked = 0;

	if (with_args) {
		cs.ranks = ts.ranks = &rank;
		cs.nranks = ts.nranks = 1;
		cs.iterations = ts.iterations = &iter;
		cs.niterations = ts.niterations = 1;
	}
	snprintf(rel, sizeof(rel), "%s/%s", cdir, cfile);
	if (load(rel, &b)) {
		ts_trace_release(&b);
		return;
	}
	snprintf(rel, sizeof(rel), "%s/%s", tdir, tfile);
	if (load(rel, &t)) {
		ts_trace_release(&b);
		ts_trace_release(&t);
		return;
	}
	fp = fopen(fixture, "r");
	if (!fp) {
		ts_test_fail(__FILE__, __LINE__, "cannot open %s", fixture);
		goto done;
	}
	for (int dv = 0; dv < 3; dv++)
		for (int sh = 0; sh < 2; sh++) {
			struct ts_diff_hta d;
			struct ts_err err;
			size_t k = 0;
			long pos;

			ts_err_init(&err);
			if (ts_diff_hta_compare(&cs, &ts, devs[dv], sh, &d, &err)) {
				ts_test_fail(__FILE__, __LINE__, "compare failed: %s", err.msg);
				ts_diff_hta_release(&d);
				continue;
			}
			rewind(fp);
			while ((pos = (long)getline(&line, &cap, fp)) > 0) {
				char *f[11];
				char *p = line;
				int nf = 0;
				const struct ts_diff_hta_row *r;

				line[pos - 1] = line[pos - 1] == '\n' ? 0 : line[pos - 1];
				while (nf < 11 && p) {
					f[nf++] = p;
					p = strchr(p, '\t');
					if (p)
						*p++ = 0;
				}
				if (nf != 11 || strcmp(f[0], dev_name[dv]) || (int)strtol(f[1], NULL, 10) != sh)
					continue;
				if (k >= d.nrows) {
					ts_test_fail(__FILE__, __LINE__, "%s %s/%d: HTA has more rows (%s)",
						     fixture, dev_name[dv], sh, f[2]);
					break;
				}
				r = &d.rows[k++];
				checked++;
				if (strcmp(r->name, f[2]) || r->control_counts != strtoll(f[3], NULL, 10) ||
				    r->test_counts != strtoll(f[4], NULL, 10) || r->control_us != num(f[5]) ||
				    r->test_us != num(f[6]) || r->diff_counts != strtoll(f[7], NULL, 10) ||
				    r->diff_us != num(f[8]) || r->change != f[9][0] ||
				    (!sh && strcmp(ts_diff_hta_set_name(r->set), f[10]))) {
					ts_test_fail(__FILE__, __LINE__,
						     "%s %s/%d row %zu: got %.60s %lld/%lld %.3f/%.3f %c %s, "
						     "HTA %.60s %s/%s %s/%s %s %s",
						     fixture, dev_name[dv], sh, k - 1, r->name,
						     (long long)r->control_counts, (long long)r->test_counts,
						     r->control_us, r->test_us, r->change,
						     ts_diff_hta_set_name(r->set), f[2], f[3], f[4], f[5], f[6],
						     f[9], f[10]);
					break;
				}
			}
			if (k != d.nrows)
				ts_test_fail(__FILE__, __LINE__, "%s %s/%d: %zu rows, HTA %zu", fixture,
					     dev_name[dv], sh, d.nrows, k);
			ts_diff_hta_release(&d);
		}
	CHECK(checked > 0);
	fclose(fp);
done:
	free(line);
	ts_trace_release(&b);
	ts_trace_release(&t);
}

TEST(diffcompat_hta_oracle_trace_compare)
{
	against_oracle("tests/fixtures/diffcompat/hta_trace_compare.tsv",
		       "traces/hta/trace_compare/base", "traces/hta/trace_compare/test",
		       "base.json.gz", "test.json.gz", 1);
}

/* HTA's defaults: the first rank of each side (control rank 3, test rank
 * 1) and the first iteration of each. */
TEST(diffcompat_hta_oracle_trace_diff)
{
	against_oracle("tests/fixtures/diffcompat/hta_trace_diff.tsv",
		       "traces/hta/trace_diff/control", "traces/hta/trace_diff/test",
		       "control.json.gz", "test.json.gz", 0);
}

static void short_is(const char *in, const char *want)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	ts_diff_hta_short_name(in, &sb);
	CHECK_STR(sb.buf, want);
	ts_sb_release(&sb);
}

/* HTA's shorten_name, worked by hand. */
TEST(diffcompat_hta_short_name)
{
	short_is("aten::mm", "aten::mm");
	short_is("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<int>, "
		 "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<int>, "
		 "at::detail::Array<char*, 3>)",
		 "at::native::vectorized_elementwise_kernel");
	short_is("Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH (Device -> Pinned)");
	/* "->" goes first ("auto f(int)float"), then the groups: "auto ffloat" */
	short_is("auto f(int)->float", "ffloat");
	short_is("a<b", "a<b");  /* an unclosed '<' stays */
}

/*
 * Iterations on a hand-built trace: steps #5 [0,100) and #6 [100,200) on
 * the CPU; a launch at 150 (corr 9) and its kernel at 300 on stream 7
 * belong to 6 although the kernel runs after both steps; a cpu_op at 250
 * belongs to none. Iteration 5 holds ProfilerStep#5, aten::mm [10,30),
 * the launch at 50 and its kernel (30 us); iteration 6 holds
 * ProfilerStep#6, the launch at 150 and the kernel at 300 (40 us).
 */
TEST(diffcompat_hta_iterations_by_hand)
{
	struct ts_trace t;
	const struct ts_trace *tp[1] = { &t };
	int64_t i5 = 5;
	struct ts_diff_hta_side s5 = { tp, 1, NULL, 0, &i5, 1 };
	struct ts_diff_hta d;
	struct ts_err err;
	uint32_t cpu_op, rt, kern, ua;
	size_t i;

	tb_init(&t);
	cpu_op = (uint32_t)ts_intern(&t.strings, "cpu_op", 6);
	rt = (uint32_t)ts_intern(&t.strings, "cuda_runtime", 12);
	kern = (uint32_t)ts_intern(&t.strings, "kernel", 6);
	ua = (uint32_t)ts_intern(&t.strings, "user_annotation", 15);
	i = tb_ev(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#5", 1, 1, 0, 100, -1);
	ts_trace_set_cat_str(&t, i, ua);
	i = tb_ev(&t, TS_CAT_USER_ANNOTATION, "ProfilerStep#6", 1, 1, 100, 100, -1);
	ts_trace_set_cat_str(&t, i, ua);
	i = tb_ev(&t, TS_CAT_CPU_OP, "aten::mm", 1, 1, 10, 20, -1);
	ts_trace_set_cat_str(&t, i, cpu_op);
	i = tb_ev(&t, TS_CAT_RUNTIME, "cudaLaunchKernel", 1, 1, 50, 5, 8);
	ts_trace_set_cat_str(&t, i, rt);
	i = tb_ev(&t, TS_CAT_KERNEL, "gemm", 0, 7, 60, 30, 8);
	ts_trace_set_cat_str(&t, i, kern);
	i = tb_ev(&t, TS_CAT_RUNTIME, "cudaLaunchKernel", 1, 1, 150, 5, 9);
	ts_trace_set_cat_str(&t, i, rt);
	i = tb_ev(&t, TS_CAT_KERNEL, "gemm", 0, 7, 300, 40, 9);
	ts_trace_set_cat_str(&t, i, kern);
	i = tb_ev(&t, TS_CAT_CPU_OP, "aten::add", 1, 1, 250, 5, -1);
	ts_trace_set_cat_str(&t, i, cpu_op);
	for (size_t k = 0; k < t.ev.n; k++)
		if (t.ev.cat[k] != TS_CAT_KERNEL)
			REQUIRE(ts_trace_set_c32(&t, TS_C32_STREAM, k, TS_NONE) == 0);
	ts_err_init(&err);
	REQUIRE(ts_diff_hta_compare(&s5, &s5, TS_DIFF_HTA_ALL, 0, &d, &err) == 0);
	/* iteration 5: ProfilerStep#5, aten::mm, one cudaLaunchKernel, one gemm (30 us) */
	CHECK_I64(d.nrows, 4);
	CHECK(row(&d, "gemm") && row(&d, "gemm")->control_counts == 1 &&
	      row(&d, "gemm")->control_us == 30.0);
	CHECK(row(&d, "cudaLaunchKernel") && row(&d, "cudaLaunchKernel")->control_counts == 1);
	CHECK(!row(&d, "aten::add"));
	/* pandas order: byte order of the names */
	CHECK_STR(d.rows[0].name, "ProfilerStep#5");
	CHECK_STR(d.rows[1].name, "aten::mm");
	ts_diff_hta_release(&d);
	{
		int64_t i6 = 6;
		struct ts_diff_hta_side s6 = { tp, 1, NULL, 0, &i6, 1 };
		const struct ts_diff_hta_row *g;
		REQUIRE(ts_diff_hta_compare(&s5, &s6, TS_DIFF_HTA_GPU, 0, &d, &err) == 0);
		g = row(&d, "gemm");
		CHECK_I64(d.nrows, 1);
		CHECK(g && g->control_us == 30.0 && g->test_us == 40.0 && g->diff_us == 10.0 &&
		      g->set == TS_DIFF_HTA_UNCHANGED && g->change == '=');
		ts_diff_hta_release(&d);
	}
	tb_release(&t);
}

/* One ProfilerStep#3 [0,100) with n aten::mm of 10 us each inside. */
static void one_step(struct ts_trace *t, int64_t rank, int n)
{
	uint32_t ua, op;
	size_t i;

	tb_init(t);
	t->meta.rank = rank;
	t->meta.rank_source = 1;
	ua = (uint32_t)ts_intern(&t->strings, "user_annotation", 15);
	op = (uint32_t)ts_intern(&t->strings, "cpu_op", 6);
	i = tb_cpu(t, TS_CAT_USER_ANNOTATION, "ProfilerStep#3", 0, 100);
	ts_trace_set_cat_str(t, i, ua);
	for (int k = 0; k < n; k++) {
		i = tb_cpu(t, TS_CAT_CPU_OP, "aten::mm", 10 + 20 * k, 10);
		ts_trace_set_cat_str(t, i, op);
	}
}

/*
 * Ranks: control ranks 0 (2 mm) and 1 (3 mm) summed = 5 mm, 50 us; test
 * rank 1 alone = 3 mm: decreased, diff -2, -20 us. Default rank = the
 * lowest (0: 2 mm). Unknown rank and two files of one rank are refused.
 */
TEST(diffcompat_hta_ranks_summed)
{
	struct ts_trace r0, r1, dup;
	const struct ts_trace *both[2] = { &r1, &r0 }, *dups[2] = { &r0, &dup };
	const int64_t two[2] = { 0, 1 }, one = 1, nine = 9;
	struct ts_diff_hta_side c = { both, 2, two, 2, NULL, 0 };
	struct ts_diff_hta_side t = { both, 2, &one, 1, NULL, 0 };
	struct ts_diff_hta_side def = { both, 2, NULL, 0, NULL, 0 };
	struct ts_diff_hta_side bad = { both, 2, &nine, 1, NULL, 0 };
	struct ts_diff_hta_side twice = { dups, 2, NULL, 0, NULL, 0 };
	struct ts_diff_hta d;
	struct ts_err err;
	const struct ts_diff_hta_row *m;

	one_step(&r0, 0, 2);
	one_step(&r1, 1, 3);
	one_step(&dup, 0, 1);
	ts_err_init(&err);
	REQUIRE(ts_diff_hta_compare(&c, &t, TS_DIFF_HTA_CPU, 0, &d, &err) == 0);
	m = row(&d, "aten::mm");
	CHECK(m && m->control_counts == 5 && m->control_us == 50.0 && m->test_counts == 3 &&
	      m->diff_counts == -2 && m->diff_us == -20.0 && m->change == '-' &&
	      m->set == TS_DIFF_HTA_DECREASED);
	CHECK_I64(d.ncontrol_ranks, 2);
	CHECK_I64(d.control_iters[0], 3);
	ts_diff_hta_release(&d);
	REQUIRE(ts_diff_hta_compare(&def, &t, TS_DIFF_HTA_CPU, 0, &d, &err) == 0);
	m = row(&d, "aten::mm");
	CHECK(m && m->control_counts == 2 && m->set == TS_DIFF_HTA_INCREASED);
	CHECK_I64(d.control_ranks[0], 0);
	ts_diff_hta_release(&d);
	CHECK_I64(ts_diff_hta_compare(&bad, &t, TS_DIFF_HTA_CPU, 0, &d, &err), TS_EUSAGE);
	ts_diff_hta_release(&d);
	CHECK_I64(ts_diff_hta_compare(&twice, &t, TS_DIFF_HTA_CPU, 0, &d, &err), TS_EUSAGE);
	ts_diff_hta_release(&d);
	tb_release(&r0);
	tb_release(&r1);
	tb_release(&dup);
}
