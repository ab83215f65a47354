/*
 * test_diffcompat_annotate.c - the annotated diff file: a hand-built pair
 * with every event placed by hand, and a real CPU pair (a_dense vs
 * d_stall, steps 23-25) checked by tests/fixtures/diffcompat/check_annotate.py,
 * which parses the output with python3's json module and recounts the
 * events from the original traces itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "tbuild.h"
#include "trainscope/diffcompat.h"

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(fp);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * Baseline: steps [1000,2000) and [2000,3500) us; aten::mm at 1100 (in
 * step 1), a kernel at 2100 on stream 7 (step 2), aten::add at 4000
 * (outside). Candidate: steps [50000,51500) and [51500,52000); aten::mm
 * at 50000 (step 1), a python_function at 50010 (left out). Slots: pair 0
 * at 0 (max(1000, 1500) = 1500 long), pair 1 at 1500 us. So baseline's mm
 * lands at 100 us, its kernel at 1600 us on tid 1000000007; the
 * candidate's mm at 0.
 */
TEST(diffcompat_annotate_by_hand)
{
	struct ts_trace b, c;
	struct ts_diff_step_pair p[2] = {
		{ 1, 1, 1000 * US, 2000 * US, 50000 * US, 51500 * US },
		{ 2, 2, 2000 * US, 3500 * US, 51500 * US, 52000 * US },
	};
	struct ts_diff_moved rows[1] = { { "gemm", 2000000, 3000000 } };
	char path[] = "/tmp/ts-diffann-XXXXXX";
	struct ts_err err;
	char *out;
	int fd;

	tb_init(&b);
	tb_init(&c);
	tb_cpu(&b, TS_CAT_CPU_OP, "aten::mm", 1100, 50);
	tb_gpu(&b, TS_CAT_KERNEL, "gemm", 7, 2100, 30, 5);
	tb_cpu(&b, TS_CAT_CPU_OP, "aten::add", 4000, 5);
	tb_cpu(&c, TS_CAT_CPU_OP, "aten::mm", 50000, 60);
	tb_cpu(&c, TS_CAT_PYTHON, "train.py(10): step", 50010, 5);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	ts_err_init(&err);
	REQUIRE(ts_diff_annotate_write(path, &b, &c, p, 2, rows, 1, &err) == 0);
	out = slurp(path);
	REQUIRE(out);
	CHECK(strstr(out, "\"args\":{\"name\":\"baseline\"}"));
	CHECK(strstr(out, "\"args\":{\"name\":\"candidate\"}"));
	CHECK(strstr(out, "\"pid\":1,\"tid\":1,\"cat\":\"\",\"name\":\"aten::mm\",\"ts\":100.000,\"dur\":50.000}"));
	CHECK(strstr(out, "\"pid\":1,\"tid\":1000000007,\"cat\":\"\",\"name\":\"gemm\",\"ts\":1600.000,\"dur\":30.000}"));
	CHECK(strstr(out, "\"pid\":2,\"tid\":1,\"cat\":\"\",\"name\":\"aten::mm\",\"ts\":0.000,\"dur\":60.000}"));
	CHECK(!strstr(out, "aten::add") && !strstr(out, "train.py"));
	/* the second pair starts at 1500 us on both sides */
	CHECK(strstr(out, "\"pid\":1,\"tid\":999999999,\"cat\":\"trainscope\",\"name\":\"step 2\",\"ts\":1500.000,\"dur\":1500.000"));
	CHECK(strstr(out, "\"pid\":2,\"tid\":999999999,\"cat\":\"trainscope\",\"name\":\"step 2\",\"ts\":1500.000,\"dur\":500.000"));
	/* 2 ms -> 3 ms: +1.000 ms, +50 %; steps: 1000 -> 1500 us, 1500 -> 500 us */
	CHECK(strstr(out, "\"name\":\"gemm +1.000 ms (+50.0 %)\",\"ts\":0.000,\"dur\":3000.000"));
	CHECK(strstr(out, "\"name\":\"step 1/1 +0.500 ms (+50.0 %)\""));
	CHECK(strstr(out, "\"name\":\"step 2/2 -1.000 ms (-66.7 %)\""));
	CHECK_I64(count(out, "\"ph\":\"i\""), 1);
	free(out);
	/* no pairs, or a step that ends before it starts */
	CHECK_I64(ts_diff_annotate_write(path, &b, &c, p, 0, rows, 1, &err), TS_EUSAGE);
	p[1].cand_end_ns = 0;
	CHECK_I64(ts_diff_annotate_write(path, &b, &c, p, 2, rows, 1, &err), TS_EUSAGE);
	unlink(path);
	tb_release(&b);
	tb_release(&c);
}

/* [start, end) ns of ProfilerStep#it in t; 0 when found */
static int step_window(const struct ts_trace *t, int64_t it, int64_t *s, int64_t *e)
{
	char want[32];

	snprintf(want, sizeof(want), "ProfilerStep#%lld", (long long)it);
	for (size_t i = 0; i < t->ev.n; i++)
		if (t->ev.ph[i] == 'X' && t->ev.cat[i] == TS_CAT_USER_ANNOTATION &&
		    strcmp(ts_trace_str(t, t->ev.name[i]), want) == 0) {
			*s = ts_ev_ts(&t->ev, i);
			*e = ts_ev_ts(&t->ev, i) + ts_ev_dur(&t->ev, i);
			return 0;
		}
	return -1;
}

TEST(diffcompat_annotate_cpu_pair)
{
	const char *bp = test_data("traces/cpu/a_dense/rank0.1795973760440387363.pt.trace.json.gz");
	const char *cp = test_data("traces/cpu/d_stall/rank0.1795974062565225904.pt.trace.json.gz");
	char bpath[600], cpath[600], cmd[2400], arg[512];
	struct ts_trace b, c;
	struct ts_diff_step_pair p[3];
	struct ts_diff_moved rows[2] = { { "aten::mm", 50000000, 52000000 },
					 { "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
					   1000000, 301000000 } };
	char out[] = "/tmp/ts-diffann-XXXXXX";
	struct ts_err err;
	size_t len = 0;
	int fd;

	if (!bp || !cp)
		return;
	snprintf(bpath, sizeof(bpath), "%s", bp);
	snprintf(cpath, sizeof(cpath), "%s", cp);
	ts_trace_init(&b);
	ts_trace_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_trace_read(&b, bpath, NULL, &err) == 0);
	REQUIRE(ts_trace_read(&c, cpath, NULL, &err) == 0);
	for (int k = 0; k < 3; k++) {
		p[k].base_iteration = p[k].cand_iteration = 23 + k;
		REQUIRE(step_window(&b, 23 + k, &p[k].base_start_ns, &p[k].base_end_ns) == 0);
		REQUIRE(step_window(&c, 23 + k, &p[k].cand_start_ns, &p[k].cand_end_ns) == 0);
		len += (size_t)snprintf(arg + len, sizeof(arg) - len, "%s%lld:%lld:%lld:%lld",
					k ? "," : "", (long long)p[k].base_start_ns,
					(long long)p[k].base_end_ns, (long long)p[k].cand_start_ns,
					(long long)p[k].cand_end_ns);
	}
	fd = mkstemp(out);
	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(ts_diff_annotate_write(out, &b, &c, p, 3, rows, 2, &err) == 0);
	if (system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
		unlink(out);
		ts_trace_release(&b);
		ts_trace_release(&c);
		ts_test_skip("no python3");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "python3 tests/fixtures/diffcompat/check_annotate.py %s '%s' '%s' %s 2",
		 out, bpath, cpath, arg);
	CHECK(system(cmd) == 0);
	unlink(out);
	ts_trace_release(&b);
	ts_trace_release(&c);
}

/*
 * Two pairs of 2^62 ns each: the slots' total 2^63 is past int64 (it
 * overflowed) and saturates: the moved row's event spans INT64_MAX ns =
 * 9223372036854775.807 us. A kernel on stream 2^63 - 6 has tid 10^9 + that,
 * past int64 (it overflowed): INT64_MAX.
 */
TEST(diffcompat_annotate_saturates)
{
	struct ts_trace b, c;
	const int64_t h = INT64_C(1) << 62;
	struct ts_diff_step_pair p[2] = {
		{ 1, 1, 0, h, 0, h },
		{ 2, 2, -h, 0, -h, 0 },
	};
	struct ts_diff_moved rows[1] = { { "gemm", 2000000, 3000000 } };
	char path[] = "/tmp/ts-diffann-XXXXXX";
	struct ts_err err;
	char *out;
	int fd;

	tb_init(&b);
	tb_init(&c);
	tb_gpu(&b, TS_CAT_KERNEL, "gemm", INT64_MAX - 5, 10, 5, 5);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	ts_err_init(&err);
	REQUIRE(ts_diff_annotate_write(path, &b, &c, p, 2, rows, 1, &err) == 0);
	out = slurp(path);
	REQUIRE(out);
	CHECK(strstr(out, "\"tid\":9223372036854775807,\"cat\":\"\",\"name\":\"gemm\""));
	CHECK(strstr(out, "\"name\":\"gemm +1.000 ms (+50.0 %)\",\"ts\":0.000,\"dur\":9223372036854775.807"));
	free(out);
	unlink(path);
	tb_release(&b);
	tb_release(&c);
}
