/*
 * test_telemetry.c - the telemetry readers and findings on the shared
 * captures. Expected values are copied by hand from
 * shared/data/telemetry/EXPECTED.md and capabilities-anchors.md section 4d
 * (quoted beside each check); the synthetic cases state their truth inline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/input.h"
#include "trainscope/telemetry.h"

#define TELE(f) "telemetry/" f

static int read_one(struct ts_telemetry *t, const char *path, const char *fields)
{
	struct ts_err err;
	struct ts_tele_read_opts o = { fields };

	ts_err_init(&err);
	ts_tele_init(t);
	int rc = ts_tele_read(t, path, &o, &err);
	if (rc)
		ts_test_fail(__FILE__, __LINE__, "read %s: %s", path, err.msg);
	return rc;
}

/* value of field f in sample i */
static double sv(const struct ts_telemetry *t, size_t i, int f)
{
	return t->samples.v[i].st[f] == TS_TV_VALUE ? t->samples.v[i].v[f] : NAN;
}

static int has_finding(const struct ts_tele_finding *f, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].id, id))
			return 1;
	return 0;
}

static int has_note(const struct ts_telemetry *t, const char *code)
{
	for (size_t i = 0; i < t->notes.v.n; i++)
		if (!strcmp(t->notes.v.v[i].code, code))
			return 1;
	return 0;
}

static size_t judge(const struct ts_telemetry *t, struct ts_tele_finding *f, size_t cap,
		    const double *expect)
{
	struct ts_tele_gpu_summary *sum = calloc(t->gpus.n + 1, sizeof(*sum));
	ts_tele_summarize(t, sum);
	size_t n = ts_tele_findings(t, sum, NULL, 0, expect, f, cap, NULL);
	free(sum);
	return n;
}

/* The own format's header with a container where a reason string belongs
 * ("unsupported": {"power_w": {...}}): it is skipped, and the header's
 * later members (interval, source) are still read. Before, its tokens were
 * read as members and the header line ended there. */
TEST(tele_own_header_container_value)
{
	static const char text[] =
		"{\"schema\":\"trainscope.telemetry/1\",\"gpus\":[{\"id\":\"0\",\"name\":\"X\","
		"\"unsupported\":{\"power_w\":{\"why\":\"x\"},\"util_pct\":\"no NVML\"}}],"
		"\"interval_ms\":250,\"source\":\"SRC-after\"}\n"
		"{\"gpu\":0,\"tick\":0,\"t_unix_ns\":1700000000000000000,\"util_pct\":50}\n"
		"{\"gpu\":0,\"tick\":1,\"t_unix_ns\":1700000000250000000,\"util_pct\":60}\n";
	struct ts_telemetry t;
	struct ts_err err;

	ts_err_init(&err);
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, text, sizeof(text) - 1, "own.jsonl", NULL, &err) == 0);
	CHECK_I64(t.interval_ns, 250000000);
	REQUIRE(t.source != NULL);
	CHECK_STR(t.source, "SRC-after");
	REQUIRE(t.gpus.n == 1);
	CHECK(t.gpus.v[0].unsupported_why[TS_TF_POWER_W] == NULL);
	REQUIRE(t.gpus.v[0].unsupported_why[TS_TF_UTIL_PCT] != NULL);
	CHECK_STR(t.gpus.v[0].unsupported_why[TS_TF_UTIL_PCT], "no NVML");
	CHECK_I64(t.samples.n, 2);
	ts_tele_release(&t);
}

TEST(tele_dmon_modern_default)
{
	DATA_OR_SKIP(p, TELE("nvidia-smi_dmon_modern_default.txt"));
	struct ts_telemetry t;
	struct ts_tele_gpu_summary sum[1];
	if (read_one(&t, p, NULL))
		return;
	/* "4 samples of GPU 0; pwr 86/267/280/284 W, gtemp 33/39/41/42 C, mtemp all
	 * unsupported (-), sm 30/100/85/98 %, mem 27/95/80/93 %, mclk 6250, pclk 1710
	 * MHz constant => no clock finding; mean power 229.25 W" */
	CHECK_I64(t.gpus.n, 1);
	CHECK_I64(t.samples.n, 4);
	const double pw[4] = { 86, 267, 280, 284 }, gt[4] = { 33, 39, 41, 42 };
	const double sm[4] = { 30, 100, 85, 98 }, mem[4] = { 27, 95, 80, 93 };
	for (int i = 0; i < 4; i++) {
		CHECK_NEAR(sv(&t, i, TS_TF_POWER_W), pw[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_TEMP_C), gt[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_UTIL_PCT), sm[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_UTIL_PCT), mem[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_CLOCK_MHZ), 6250, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_SM_CLOCK_MHZ), 1710, 0);
		CHECK_I64(t.samples.v[i].st[TS_TF_MEM_TEMP_C], TS_TV_UNSUPPORTED);
		CHECK_I64(t.samples.v[i].tick, i);
	}
	ts_tele_summarize(&t, sum);
	CHECK_NEAR(sum[0].f[TS_TF_POWER_W].mean, 229.25, 1e-12);
	CHECK_I64(sum[0].f[TS_TF_MEM_TEMP_C].state, TS_TV_UNSUPPORTED);
	struct ts_tele_finding f[16];
	size_t nf = judge(&t, f, 16, NULL);
	CHECK(!has_finding(f, nf, "clock-spread"));
	CHECK(!has_finding(f, nf, "power-capped"));
	ts_tele_release(&t);
}

TEST(tele_dmon_behind_launcher_and_collector)
{
	/* The same dmon rows as one srun -l task's output ("3: ") under a
	 * kubectl logs --timestamps stamp: pwr 86/267/280/284 W as above. A
	 * second task's lines in the same capture are refused at their first
	 * line (line 3 here), since both tasks' GPU 0 would read as one. */
	const char one[] =
		"2025-09-01T05:20:03.1Z 3: # gpu    pwr  gtemp  mtemp     sm    mem\n"
		"2025-09-01T05:20:03.2Z 3: # Idx      W      C      C      %      %\n"
		"2025-09-01T05:20:04.0Z 3:     0     86     33      -     30     27\n"
		"2025-09-01T05:20:05.0Z 3:     0    267     39      -    100     95\n"
		"2025-09-01T05:20:06.0Z 3:     0    280     41      -     85     80\n"
		"2025-09-01T05:20:07.0Z 3:     0    284     42      -     98     93\n";
	const char two[] =
		"0: # gpu    pwr\n0: # Idx      W\n1: # gpu    pwr\n1: # Idx      W\n"
		"0:     0     86\n1:     0     99\n";
	const double pw[4] = { 86, 267, 280, 284 };
	struct ts_telemetry t;
	struct ts_err err;

	ts_tele_init(&t);
	ts_err_init(&err);
	REQUIRE(ts_tele_read_mem(&t, one, sizeof(one) - 1, "dmon.log", NULL, &err) == 0);
	CHECK_I64(t.gpus.n, 1);
	REQUIRE(t.samples.n == 4);
	for (int i = 0; i < 4; i++)
		CHECK_NEAR(sv(&t, i, TS_TF_POWER_W), pw[i], 0);
	ts_tele_release(&t);
	ts_tele_init(&t);
	CHECK_I64(ts_tele_read_mem(&t, two, sizeof(two) - 1, "dmon.log", NULL, &err), TS_EPARSE);
	CHECK_I64(err.line, 3);
	CHECK(strstr(err.msg, "tasks 0 and 1") != NULL);
	CHECK_I64(t.samples.n, 0);
	ts_tele_release(&t);
}

TEST(tele_straggler_lines_among_other_tasks)
{
	/* A training log holds every task's lines: the straggler file's three
	 * "0: " lines with other tasks' lines between them ("1: ...", " 2:
	 * ...") still give the three records, each of task 0. */
	DATA_OR_SKIP(p, TELE("megatron_straggler_detector_readme_lines.txt"));
	struct ts_input in;
	struct ts_telemetry t;
	struct ts_err err;
	struct ts_sb sb;
	const char *q, *e;

	ts_err_init(&err);
	REQUIRE(ts_input_read_all(&in, p, 1 << 20, &err) == 0);
	ts_sb_init(&sb);
	for (q = (const char *)in.data, e = q + in.len; q < e;) {
		const char *nl = memchr(q, '\n', (size_t)(e - q));
		size_t n = nl ? (size_t)(nl - q) + 1 : (size_t)(e - q);

		const char *before = "1: [rank1]: iteration log of another task\n";
		const char *after = " 2: warnings.warn(\n";

		ts_sb_add(&sb, before, strlen(before));
		ts_sb_add(&sb, q, n);
		ts_sb_add(&sb, after, strlen(after));
		q += n;
	}
	ts_input_release(&in);
	REQUIRE(!sb.failed);
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, sb.buf, sb.len, "train.log", NULL, &err) == 0);
	CHECK_I64(t.straggler.n, 3);
	for (size_t k = 0; k < t.straggler.n; k++)
		CHECK_I64(t.straggler.v[k].srun_rank, 0);
	ts_tele_release(&t);
	ts_sb_release(&sb);
}

TEST(tele_dmon_modern_pucm)
{
	DATA_OR_SKIP(p, TELE("nvidia-smi_dmon_modern_pucm.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "pwr 218/411/365/362 W, sm 95 % x4 but mem 0 % x4, mclk 12481,
	 * pclk 2325/2370/2415/2422, fb 725 MB" */
	const double pw[4] = { 218, 411, 365, 362 }, pclk[4] = { 2325, 2370, 2415, 2422 };
	CHECK_I64(t.samples.n, 4);
	for (int i = 0; i < 4 && t.samples.n == 4; i++) {
		CHECK_NEAR(sv(&t, i, TS_TF_POWER_W), pw[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_SM_CLOCK_MHZ), pclk[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_UTIL_PCT), 95, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_UTIL_PCT), 0, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_CLOCK_MHZ), 12481, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_USED_MIB), 725, 0);
	}
	ts_tele_release(&t);
}

TEST(tele_dmon_legacy_findings)
{
	DATA_OR_SKIP(p, TELE("nvidia-smi_dmon_legacy_pucvmet.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "4 GPUs, one tick; pwr 111/111/112/86 W, temp 83/84/80/70 C, sm 25/18/24/18 %,
	 * pclk 1683/1733/1759/1784 MHz (spread 101 MHz), pviol 0, tviol 0, fb
	 * 11651/11653/11653/11660 MB, sbecc/dbecc -, rxpci 41/25/33/62, txpci 8/14/10/5
	 * MB/s => low utilization (18-25 %) and clock spread without a throttling claim" */
	CHECK_I64(t.gpus.n, 4);
	CHECK_I64(t.samples.n, 4);
	const double pw[4] = { 111, 111, 112, 86 }, tp[4] = { 83, 84, 80, 70 };
	const double sm[4] = { 25, 18, 24, 18 }, pc[4] = { 1683, 1733, 1759, 1784 };
	const double fb[4] = { 11651, 11653, 11653, 11660 };
	const double rx[4] = { 41, 25, 33, 62 }, tx[4] = { 8, 14, 10, 5 };
	for (int i = 0; i < 4 && t.samples.n == 4; i++) {
		CHECK_I64(t.samples.v[i].tick, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_POWER_W), pw[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_TEMP_C), tp[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_UTIL_PCT), sm[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_SM_CLOCK_MHZ), pc[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_USED_MIB), fb[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_PCIE_RX_MBPS), rx[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_PCIE_TX_MBPS), tx[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_POWER_VIOL_PCT), 0, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_THERMAL_VIOL), 0, 0);
		CHECK_I64(t.samples.v[i].st[TS_TF_ECC_SBE], TS_TV_UNSUPPORTED);
	}
	struct ts_tele_finding f[16];
	size_t nf = judge(&t, f, 16, NULL);
	CHECK(has_finding(f, nf, "low-utilization"));
	CHECK(has_finding(f, nf, "clock-spread"));
	CHECK(!has_finding(f, nf, "power-capped"));
	CHECK(!has_finding(f, nf, "thermal-throttling"));
	/* one tick is no evidence of a GPU that is consistently below the others */
	CHECK(!has_finding(f, nf, "straggler-gpu"));
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(f[i].id, "clock-spread"))
			CHECK(strstr(f[i].msg, "101 MHz") != NULL);
	ts_tele_release(&t);
}

TEST(tele_query_noheader_fields_from_command)
{
	DATA_OR_SKIP(p, TELE("nvidia-smi_query-gpu_csv_noheader_nounits.txt"));
	struct ts_telemetry t;
	struct ts_tele_gpu_summary sum[1];
	if (read_one(&t, p, NULL))
		return;
	/* "the # command: line gives the 19 field names; row => power.limit 200.00 W,
	 * memory.total 7979 MiB, driver 440.64, name GeForce RTX 2080, power.draw
	 * 176.98 W (88.5 % of limit), temperature.gpu 45, temperature.memory N/A,
	 * clocks gr/sm 1965, mem 7199 MHz, util 86/55 %, fan 100 %, PCIe width 8" */
	CHECK_I64(t.samples.n, 1);
	if (t.samples.n != 1)
		goto out;
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_LIMIT_W), 200.0, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_TOTAL_MIB), 7979, 0);
	CHECK_STR(t.driver_version, "440.64");
	CHECK_STR(t.gpus.v[0].name, "GeForce RTX 2080");
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_W), 176.98, 1e-12);
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_W) / sv(&t, 0, TS_TF_POWER_LIMIT_W) * 100, 88.49, 1e-9);
	CHECK_NEAR(sv(&t, 0, TS_TF_TEMP_C), 45, 0);
	CHECK_I64(t.samples.v[0].st[TS_TF_MEM_TEMP_C], TS_TV_MISSING);
	CHECK_NEAR(sv(&t, 0, TS_TF_SM_CLOCK_MHZ), 1965, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_CLOCK_MHZ), 7199, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_UTIL_PCT), 86, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_UTIL_PCT), 55, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_FAN_PCT), 100, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_PCIE_WIDTH), 8, 0);
	ts_tele_summarize(&t, sum);
	CHECK_I64(sum[0].f[TS_TF_MEM_TEMP_C].state, TS_TV_MISSING);
out:
	ts_tele_release(&t);
}

TEST(tele_query_headerless_needs_fields)
{
	/* a headerless capture with no field list anywhere is an error naming
	 * the fix, never a guess at the column order */
	const char csv[] = "NVIDIA H100 80GB HBM3, 612.31, 700.00, 97\n"
			   "NVIDIA H100 80GB HBM3, 598.02, 700.00, 96\n";
	struct ts_telemetry t;
	struct ts_err err;
	ts_err_init(&err);
	ts_tele_init(&t);
	CHECK_I64(ts_tele_read_mem(&t, csv, sizeof(csv) - 1, "q.csv", NULL, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "--fields") != NULL);
	ts_tele_release(&t);
	/* with the field list, two rows of one GPU? No: no id field and no
	 * timestamp, so two GPUs of one round */
	struct ts_tele_read_opts o = { "name,power.draw,power.limit,utilization.gpu" };
	ts_tele_init(&t);
	CHECK_I64(ts_tele_read_mem(&t, csv, sizeof(csv) - 1, "q.csv", &o, &err), 0);
	CHECK_I64(t.gpus.n, 2);
	CHECK_NEAR(sv(&t, 1, TS_TF_POWER_W), 598.02, 1e-12);
	ts_tele_release(&t);
}

TEST(tele_failed_read_leaves_the_capture_as_it_was)
{
	/* nvidia-smi dmon: the second file fails on its line 4 (3 columns under
	 * a 4-column header, with a full row after it, so not a cut last
	 * record) after its line 3 was parsed; it adds nothing: the first
	 * file's 2 GPUs, 2 samples and file count 1 stay, and GPU 0's power
	 * is still the first file's 62 W (the second wrote 70 W) */
	const char good[] = "# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n"
			    "    0     62     33     10\n    1     63     34     11\n";
	const char bad[] = "# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n"
			   "    0     70     33     10\n    1     71     34\n    0     72     35     12\n";
	struct ts_telemetry t;
	struct ts_err err;
	ts_err_init(&err);
	ts_tele_init(&t);
	CHECK_I64(ts_tele_read_mem(&t, good, sizeof(good) - 1, "a.txt", NULL, &err), 0);
	CHECK_I64(t.gpus.n, 2);
	CHECK_I64(t.samples.n, 2);
	CHECK_I64(ts_tele_read_mem(&t, bad, sizeof(bad) - 1, "b.txt", NULL, &err), TS_EPARSE);
	CHECK_I64(err.line, 4);
	CHECK_I64(t.gpus.n, 2);
	CHECK_I64(t.samples.n, 2);
	CHECK_I64(t.nfiles, 1);
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_W), 62, 1e-12);
	ts_tele_release(&t);
}

TEST(tele_dmon_gpu_index_out_of_range)
{
	/* a GPU index of 4.4e42, 43 digits (found by fuzz_telemetry: converting it to an
	 * integer was undefined) is an error naming line 3, not a GPU */
	const char d[] = "# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n"
			 "4444444444444444444444444444444444444444444     62     33     10\n"
			 "    1     63     34     11\n";
	struct ts_telemetry t;
	struct ts_err err;
	ts_err_init(&err);
	ts_tele_init(&t);
	CHECK_I64(ts_tele_read_mem(&t, d, sizeof(d) - 1, "d.txt", NULL, &err), TS_EPARSE);
	CHECK_I64(err.line, 3);
	CHECK(strstr(err.msg, "not a device number") != NULL);
	CHECK_I64(t.gpus.n, 0);
	ts_tele_release(&t);
}

/* The evidence of a throttling finding is the signal that fired, with its
 * own counts: dmon's pviol on GPU 1 (35 % in both of its samples) and
 * tviol on GPU 0 (one of two); a capture without a power limit or a
 * temperature prints none (it printed "0 of 0 samples", "a nan W limit",
 * "temperature max nan C" and a stray "0" after the clock). */
TEST(tele_throttle_evidence_from_the_signal)
{
	static const char dmon[] =
		"# gpu    pwr  gtemp   pclk  pviol  tviol\n"
		"# Idx      W      C    MHz      %   bool\n"
		"    0    300     60   1980      0      1\n"
		"    1    300     61   1400     35      0\n"
		"    0    300     60   1980      0      0\n"
		"    1    300     61   1400     35      0\n";
	static const char csv[] =
		"index, power.draw [W], clocks_event_reasons.active\n"
		"0, 650.00 W, 0x0000000000000040\n0, 651.00 W, 0x0000000000000040\n";
	struct ts_telemetry t;
	struct ts_tele_finding f[16];
	struct ts_err err;
	size_t nf;
	int seen = 0;

	ts_err_init(&err);
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, dmon, sizeof(dmon) - 1, "d.txt", NULL, &err) == 0);
	nf = judge(&t, f, 16, NULL);
	for (size_t i = 0; i < nf; i++) {
		CHECK(!strstr(f[i].msg, "nan") && !strstr(f[i].msg, " 0 of 0"));
		if (!strcmp(f[i].id, "power-capped")) {
			seen |= 1;
			CHECK_STR(f[i].msg, "GPU 1: power violation (pviol) in 2 of 2 samples, up to "
				  "35 %; power mean 300.0 W, max 300.0 W; SM clock mean 1400 MHz");
		}
		if (!strcmp(f[i].id, "thermal-throttling")) {
			seen |= 2;
			CHECK_STR(f[i].msg, "GPU 0: thermal violation (tviol) in 1 of 2 samples; "
				  "temperature max 60 C");
		}
	}
	CHECK_I64(seen, 3);
	ts_tele_release(&t);

	/* 0x40: HW thermal slowdown, in both samples; no temperature column */
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, csv, sizeof(csv) - 1, "q.csv", NULL, &err) == 0);
	nf = judge(&t, f, 16, NULL);
	seen = 0;
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(f[i].id, "thermal-throttling")) {
			seen = 1;
			CHECK_STR(f[i].msg, "GPU 0: thermal or hardware slowdown in 2 of 2 samples");
		}
	CHECK_I64(seen, 1);
	ts_tele_release(&t);
}

/* The per-reason fields of --query-gpu ("clocks_event_reasons.sw_power_cap",
 * older "clocks_throttle_reasons.hw_thermal_slowdown", cells "Active" or
 * "Not Active") are the same evidence as the bitmask field: GPU 1 capped
 * in both rounds, GPU 2 thermally slowed in one, GPU 0 neither (the
 * columns were dropped and no finding was made). */
TEST(tele_query_per_reason_fields)
{
	static const char csv[] =
		"index, power.draw [W], clocks_event_reasons.sw_power_cap, "
		"clocks_throttle_reasons.hw_thermal_slowdown\n"
		"0, 500.00 W, Not Active, Not Active\n1, 500.00 W, Active, Not Active\n"
		"2, 500.00 W, Not Active, Active\n"
		"0, 500.00 W, Not Active, Not Active\n1, 500.00 W, Active, Not Active\n"
		"2, 500.00 W, [N/A], Not Active\n";
	struct ts_telemetry t;
	struct ts_tele_finding f[16];
	struct ts_err err;
	size_t nf;
	int seen = 0;

	ts_err_init(&err);
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, csv, sizeof(csv) - 1, "q.csv", NULL, &err) == 0);
	CHECK_I64(t.samples.n, 6);
	nf = judge(&t, f, 16, NULL);
	for (size_t i = 0; i < nf; i++) {
		if (!strcmp(f[i].id, "power-capped")) {
			seen |= 1;
			CHECK_I64(f[i].gpu, 1);
			CHECK(!strncmp(f[i].msg, "GPU 1: power cap active in 2 of 2 samples", 41));
		}
		if (!strcmp(f[i].id, "thermal-throttling")) {
			seen |= 2;
			CHECK_I64(f[i].gpu, 2);
			CHECK_STR(f[i].msg, "GPU 2: thermal or hardware slowdown in 1 of 2 samples");
		}
	}
	CHECK_I64(seen, 3);
	ts_tele_release(&t);
}

/* A --query-gpu CSV killed in the middle of its last row (2 of its 3
 * fields written): its complete rows are read with a truncated note. The
 * format sniff required every row to have the header's field count and
 * refused the whole capture ("not a telemetry capture"). */
TEST(tele_query_csv_cut_mid_row)
{
	static const char d[] =
		"index, temperature.gpu, clocks.mem [MHz]\n"
		"0, 33, 1785 MHz\n1, 35, 1785 MHz\n0, 34, 1785 MHz\n1, 3";
	struct ts_telemetry t;
	struct ts_err err;

	ts_err_init(&err);
	ts_tele_init(&t);
	REQUIRE(ts_tele_read_mem(&t, d, sizeof(d) - 1, "q.csv", NULL, &err) == 0);
	CHECK_I64(t.gpus.n, 2);
	CHECK_I64(t.samples.n, 3);
	CHECK(has_note(&t, "truncated"));
	ts_tele_release(&t);
}

/* A capture killed while writing its last row: the row has all its cells
 * but no line end, and its last number may be the head of a longer one
 * (an SM clock of 1 MHz read from "1785"). dmon, --query-gpu CSV and
 * dcgmi each leave it out with a truncated note; with its line end the
 * same row is read. */
TEST(tele_last_row_without_line_end)
{
	static const char *const caps[][2] = {
		{ "# gpu    pwr  gtemp  mclk\n# Idx      W      C    MHz\n"
		  "    0     62     33  1785\n    0     63     34  1", "d.txt" },
		{ "index, temperature.gpu, clocks.mem [MHz]\n0, 33, 1785 MHz\n0, 34, 1", "q.csv" },
		{ "#Entity   TMPTR  SMCLK\nID\nGPU 0     33     1785\nGPU 0     34     1", "g.txt" },
	};
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		const char *d = caps[i][0];
		struct ts_telemetry t;
		struct ts_err err;
		struct ts_sb full;

		ts_err_init(&err);
		ts_tele_init(&t);
		REQUIRE(ts_tele_read_mem(&t, d, strlen(d), caps[i][1], NULL, &err) == 0);
		CHECK_I64(t.samples.n, 1);
		CHECK(has_note(&t, "truncated"));
		ts_tele_release(&t);
		/* the same capture ended properly: both rows */
		ts_sb_init(&full);
		ts_sb_adds(&full, d);
		ts_sb_addc(&full, '\n');
		ts_tele_init(&t);
		REQUIRE(ts_tele_read_mem(&t, full.buf, full.len, caps[i][1], NULL, &err) == 0);
		CHECK_I64(t.samples.n, 2);
		CHECK(!has_note(&t, "truncated"));
		ts_tele_release(&t);
		ts_sb_release(&full);
	}
}

TEST(tele_query_timestamp_ticks_by_position)
{
	DATA_OR_SKIP(p, TELE("nvidia-smi_query-gpu_csv_timestamp_units_8gpu_tail.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "10 data rows, no header row ... 2 rows at 15:13:03.389, then 8 rows in
	 * second 15:13:04 (one .389, seven .390) ... second 15:13:04 = 8 GPUs with
	 * temperatures 41, 47, 48, 49, 47, 47, 49, 48 C; the 15:13:03 tick is
	 * partial (its 2 rows match GPUs 6-7: 49, 48). A parser must not split
	 * ticks by exact timestamp string (.389 vs .390 belong to one tick)." */
	CHECK_I64(t.samples.n, 10);
	CHECK_I64(t.gpus.n, 8);
	const double temps[8] = { 41, 47, 48, 49, 47, 47, 49, 48 };
	for (size_t i = 2; i < t.samples.n && t.samples.n == 10; i++) {
		const struct ts_tele_sample *s = &t.samples.v[i];
		CHECK_I64(s->tick, 1);
		static const char ids[8][2] = { "0", "1", "2", "3", "4", "5", "6", "7" };
		CHECK_STR(t.gpus.v[s->gpu].id, ids[i - 2]);
		CHECK_NEAR(s->v[TS_TF_TEMP_C], temps[i - 2], 0);
		CHECK_NEAR(s->v[TS_TF_MEM_USED_MIB], 2, 0);
		CHECK_NEAR(s->v[TS_TF_MEM_TOTAL_MIB], 32607, 0);
		CHECK_NEAR(s->v[TS_TF_UTIL_PCT], 0, 0);
	}
	if (t.samples.n == 10) {
		CHECK_STR(t.gpus.v[t.samples.v[0].gpu].id, "6");
		CHECK_STR(t.gpus.v[t.samples.v[1].gpu].id, "7");
		CHECK_NEAR(t.samples.v[0].v[TS_TF_TEMP_C], 49, 0);
		CHECK_NEAR(t.samples.v[1].v[TS_TF_TEMP_C], 48, 0);
		/* 2026/01/06 15:13:04.390 UTC as printed (date -u -d ... +%s = 1767712384) */
		CHECK_I64(t.samples.v[9].t_ns, 1767712384390000000LL);
	}
	CHECK_STR(t.gpus.v[0].name, "NVIDIA GeForce RTX 5090");
	CHECK(has_note(&t, "partial-tick"));
	struct ts_tele_finding f[16];
	size_t nf = judge(&t, f, 16, NULL);
	CHECK(has_finding(f, nf, "low-utilization")); /* "all rows: util 0 % ... idle GPUs" */
	ts_tele_release(&t);
}

TEST(tele_dcgmi_na_first_tick)
{
	DATA_OR_SKIP(p, TELE("dcgmi_dmon_prof_8gpu_na_first_tick.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "Tick 1 (L4-L11): GPU 0-7, all 64 values N/A. Tick 2 (partial: only GPU 0
	 * and GPU 1): GPU 0 GRACT 0.888, TENSO 0.178, FP16A 0.001, others N/A; GPU 1
	 * SMACT 0.777, FP64A 0.000, FP32A 0.046, others N/A. N/A kept as missing
	 * (never 0); profiling counters multiplexed noted." */
	CHECK_I64(t.gpus.n, 8);
	CHECK_I64(t.samples.n, 10);
	for (size_t i = 0; i < 8 && t.samples.n == 10; i++) {
		CHECK_I64(t.samples.v[i].tick, 0);
		CHECK_I64(t.samples.v[i].st[TS_TF_GR_ACTIVE], TS_TV_MISSING);
		CHECK_I64(t.samples.v[i].st[TS_TF_FP16_ACTIVE], TS_TV_MISSING);
	}
	if (t.samples.n == 10) {
		const struct ts_tele_sample *a = &t.samples.v[8], *b = &t.samples.v[9];
		CHECK_I64(a->tick, 1);
		CHECK_STR(t.gpus.v[a->gpu].id, "GPU 0");
		CHECK_NEAR(a->v[TS_TF_GR_ACTIVE], 0.888, 1e-12);
		CHECK_NEAR(a->v[TS_TF_TENSOR_ACTIVE], 0.178, 1e-12);
		CHECK_NEAR(a->v[TS_TF_FP16_ACTIVE], 0.001, 1e-12);
		CHECK_I64(a->st[TS_TF_SM_ACTIVE], TS_TV_MISSING);
		CHECK_STR(t.gpus.v[b->gpu].id, "GPU 1");
		CHECK_NEAR(b->v[TS_TF_SM_ACTIVE], 0.777, 1e-12);
		CHECK_I64(b->st[TS_TF_FP64_ACTIVE], TS_TV_VALUE);
		CHECK_NEAR(b->v[TS_TF_FP64_ACTIVE], 0.0, 0);
		CHECK_NEAR(b->v[TS_TF_FP32_ACTIVE], 0.046, 1e-12);
		CHECK_I64(b->st[TS_TF_GR_ACTIVE], TS_TV_MISSING);
	}
	CHECK(has_note(&t, "multiplexed"));
	ts_tele_release(&t);
}

TEST(tele_dcgmi_errors)
{
	static const char *const files[3][2] = {
		{ "dcgmi_dmon_error_profiling_module_old_header.txt",
		  "Error setting watches. Result: The third-party Profiling module returned an "
		  "unrecoverable error" },
		{ "dcgmi_dmon_error_-33_module_not_loaded.txt",
		  "Error setting watches. Result: -33: This request is serviced by a module of DCGM "
		  "that is not currently loaded" },
		{ "dcgmi_dmon_error_units_row.txt",
		  "Error setting watches. Result: The third-party Profiling module returned an "
		  "unrecoverable error" },
	};
	/* "report the error text and no samples, exit cleanly; do not parse the
	 * error line as an entity row" */
	for (int k = 0; k < 3; k++) {
		char rel[160];
		snprintf(rel, sizeof(rel), "telemetry/%s", files[k][0]);
		DATA_OR_SKIP(p, rel);
		struct ts_telemetry t;
		if (read_one(&t, p, NULL))
			return;
		CHECK_I64(t.samples.n, 0);
		CHECK_I64(t.gpus.n, 0);
		CHECK_I64(t.errors.n, 1);
		if (t.errors.n)
			CHECK_STR(t.errors.v[0], files[k][1]);
		CHECK(has_note(&t, "no-samples"));
		ts_tele_release(&t);
	}
}

TEST(tele_gmi_faulty_s4000)
{
	DATA_OR_SKIP(p, TELE("mthreads-gmi_default_S4000_gmi1.12.2.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "gmi 1.12.2, driver 1.2.0, 1 GPU MTT S4000 at 00000000:08:00.0, util 88 %,
	 * used 44302 MiB, total 32768 MiB, 65 C, PCIe 16x(16x) => finding used > total:
	 * memory misreported, total 32768 < 49152 MiB of an S4000 - IOMMU" */
	CHECK_STR(t.tool_version, "mthreads-gmi 1.12.2");
	CHECK_STR(t.driver_version, "1.2.0");
	CHECK_I64(t.gpus.n, 1);
	CHECK_STR(t.gpus.v[0].name, "MTT S4000");
	CHECK_STR(t.gpus.v[0].bus_id, "00000000:08:00.0");
	CHECK_NEAR(sv(&t, 0, TS_TF_UTIL_PCT), 88, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_USED_MIB), 44302, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_TOTAL_MIB), 32768, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_TEMP_C), 65, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_PCIE_WIDTH), 16, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_PCIE_WIDTH_MAX), 16, 0);
	/* Tue Nov 12 20:55:00 2024 as printed (date -u -d ... +%s = 1731444900) */
	CHECK_I64(t.samples.v[0].t_ns, 1731444900000000000LL);
	const double s4000_mib = 48 * 1024;
	struct ts_tele_finding f[16];
	size_t nf = judge(&t, f, 16, &s4000_mib);
	CHECK(has_finding(f, nf, "memory-misreport"));
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(f[i].id, "memory-misreport")) {
			CHECK(strstr(f[i].msg, "44302") && strstr(f[i].msg, "32768"));
			CHECK(strstr(f[i].msg, "49152") && strstr(f[i].msg, "IOMMU"));
		}
	ts_tele_release(&t);
}

TEST(tele_gmi_healthy_truncated)
{
	DATA_OR_SKIP(p, TELE("mthreads-gmi_default_S4000_gmi2.2.0_healthy_partial.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "L3 mthreads-gmi:2.2.0, Driver Version:3.0.0. GPU 0: MTT S4000, bus
	 * 00000000:08:00.0, util 0 %, used 0 MiB, total 49152 MiB, PCIe 16x(16x),
	 * 44 C. GPU 1 bus 00000000:09:00.0. GPU 2: bus 00000000:0e:00.0, 0 %,
	 * 0MiB(49152MiB); its second and third lines are missing => truncated
	 * warning. 49152 MiB = nominal S4000 => no IOMMU/misreport finding" */
	CHECK_STR(t.tool_version, "mthreads-gmi 2.2.0");
	CHECK_STR(t.driver_version, "3.0.0");
	CHECK_I64(t.gpus.n, 3);
	CHECK_STR(t.gpus.v[1].bus_id, "00000000:09:00.0");
	CHECK_STR(t.gpus.v[2].bus_id, "00000000:0e:00.0");
	CHECK_NEAR(sv(&t, 0, TS_TF_TEMP_C), 44, 0);
	CHECK_NEAR(sv(&t, 2, TS_TF_MEM_TOTAL_MIB), 49152, 0);
	CHECK_I64(t.samples.v[2].st[TS_TF_TEMP_C], TS_TV_ABSENT);
	CHECK(has_note(&t, "truncated"));
	const double expect[3] = { 49152, 49152, 49152 };
	struct ts_tele_finding f[16];
	size_t nf = judge(&t, f, 16, expect);
	CHECK(!has_finding(f, nf, "memory-misreport"));
	ts_tele_release(&t);
}

TEST(tele_gmi_s5000_partial)
{
	DATA_OR_SKIP(p, TELE("mthreads-gmi_default_S5000_gmi2.3.2_partial.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "gmi 2.3.2, driver 3.3.5-server, 3 GPUs (2a/3a/4c), util 0 %, used
	 * 66641/64889/10 of 81920 MiB, 52/51/52 C, 16x(16x), GPU 2's ECC line
	 * missing => parsed with a truncated warning, not an error" */
	CHECK_STR(t.driver_version, "3.3.5-server");
	CHECK_I64(t.gpus.n, 3);
	const double used[3] = { 66641, 64889, 10 }, temp[3] = { 52, 51, 52 };
	for (int i = 0; i < 3 && t.samples.n == 3; i++) {
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_USED_MIB), used[i], 0);
		CHECK_NEAR(sv(&t, i, TS_TF_MEM_TOTAL_MIB), 81920, 0);
		CHECK_NEAR(sv(&t, i, TS_TF_TEMP_C), temp[i], 0);
	}
	CHECK_STR(t.gpus.v[2].bus_id, "00000000:4c:00.0");
	CHECK(has_note(&t, "truncated"));
	ts_tele_release(&t);
}

TEST(tele_gmi_json)
{
	DATA_OR_SKIP(p, TELE("mthreads-gmi_query_json_S5000_drv3.3.5_excerpt.json"));
	struct ts_telemetry t;
	struct ts_tele_gpu_summary sum[2];
	if (read_one(&t, p, NULL))
		return;
	/* "Driver Version 3.3.5-server; Attached GPUs 8 but the GPU array holds 2
	 * records => 2 of 8 attached GPUs in input, not an error. GPU 0: MTT S5000,
	 * bus 00000000:2a:00.0; memory total 81920 MiB, used 0; util 0 %, memory
	 * 0 %; temp 27 C; power draw 96.66 W (key with a trailing space); limit
	 * 950.00 W => 10.17 % of limit. GPU 1: no memory utilization, no power limit
	 * (absent, not 0); temp 26 C; power draw 97.09 W." */
	CHECK_STR(t.driver_version, "3.3.5-server");
	CHECK_I64(t.gpus_attached, 8);
	CHECK_I64(t.gpus.n, 2);
	CHECK(has_note(&t, "partial-gpus"));
	CHECK_STR(t.gpus.v[0].name, "MTT S5000");
	CHECK_STR(t.gpus.v[0].bus_id, "00000000:2a:00.0");
	REQUIRE(t.gpus.v[0].uuid != NULL); /* "GPU UUID", bare: no "GPU-" */
	CHECK_STR(t.gpus.v[0].uuid, "00000000-0000-0000-0000-000000000000");
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_W), 96.66, 1e-12);
	CHECK_NEAR(sv(&t, 0, TS_TF_POWER_LIMIT_W), 950.0, 0);
	CHECK_NEAR(100 * sv(&t, 0, TS_TF_POWER_W) / sv(&t, 0, TS_TF_POWER_LIMIT_W), 10.17, 0.005);
	CHECK_NEAR(sv(&t, 0, TS_TF_MEM_TOTAL_MIB), 81920, 0);
	CHECK_NEAR(sv(&t, 0, TS_TF_TEMP_C), 27, 0);
	CHECK_NEAR(sv(&t, 1, TS_TF_POWER_W), 97.09, 1e-12);
	CHECK_NEAR(sv(&t, 1, TS_TF_TEMP_C), 26, 0);
	CHECK_I64(t.samples.v[1].st[TS_TF_POWER_LIMIT_W], TS_TV_ABSENT);
	CHECK_I64(t.samples.v[1].st[TS_TF_MEM_UTIL_PCT], TS_TV_ABSENT);
	ts_tele_summarize(&t, sum);
	CHECK_I64(sum[1].f[TS_TF_POWER_LIMIT_W].n, 0);
	ts_tele_release(&t);
}

/* one GPU as nvidia-smi, NVML, DCGM, sysfs and mthreads-gmi spell it */
TEST(tele_uuid_bus_norm)
{
	char a[80], b[80];
	uint64_t x, y;

	CHECK(ts_tele_uuid_norm("GPU-ABCDEF01-1111-2222-3333-000000000001", a, sizeof(a)));
	CHECK(ts_tele_uuid_norm(" abcdef01-1111-2222-3333-000000000001", b, sizeof(b)));
	CHECK_STR(a, b);
	CHECK_STR(a, "abcdef01-1111-2222-3333-000000000001");
	CHECK(!ts_tele_uuid_norm("N/A", a, sizeof(a)));
	CHECK(!ts_tele_uuid_norm("[Not Supported]", a, sizeof(a)));
	CHECK(!ts_tele_uuid_norm("MIG-abcdef01-1111-2222-3333-000000000001", a, sizeof(a)));
	CHECK(!ts_tele_uuid_norm("", a, sizeof(a)));
	CHECK(ts_tele_bus_norm("00000000:1B:00.0", &x));
	CHECK(ts_tele_bus_norm("0000:1b:00.0", &y));
	CHECK_I64((int64_t)x, (int64_t)y);
	CHECK(ts_tele_bus_norm("1b:00.0", &y));
	CHECK_I64((int64_t)x, (int64_t)y);
	CHECK_I64((int64_t)x, 0x1b0000);
	CHECK(ts_tele_bus_norm("00000001:1B:00.0", &y) && y != x);
	CHECK(ts_tele_bus_norm("0000:1b:00.1", &y) && y != x);
	CHECK(!ts_tele_bus_norm("N/A", &y));
	CHECK(!ts_tele_bus_norm("0000:1b:00", &y));
	CHECK(!ts_tele_bus_norm("0000:1b:00.0x", &y));
	CHECK(!ts_tele_bus_norm("0000:1b:20.0", &y)); /* device is 5 bits */
}

/* GPU g of capture c: its uuid (GPU-00000000-...-<uuid>, none when
 * uuid < 0), bus id 00000000:<bus>:00.0 (none when bus < 0) and host */
static void match_gpu(struct ts_telemetry *t, int c, int uuid, int bus, const char *host)
{
	char buf[64];
	int g = ts_tele_add_gpu(t, "0", NULL);

	CHECK(g >= 0);
	if (g < 0)
		return;
	t->gpus.v[g].capture = c;
	t->nfiles = c + 1 > t->nfiles ? c + 1 : t->nfiles;
	t->gpus.v[g].host = host;
	if (uuid >= 0) {
		snprintf(buf, sizeof(buf), "GPU-%08x-1111-2222-3333-444444444444", (unsigned)uuid);
		t->gpus.v[g].uuid = ts_arena_strndup(&t->arena, buf, strlen(buf));
	}
	if (bus >= 0) {
		snprintf(buf, sizeof(buf), "00000000:%02X:00.0", (unsigned)bus);
		t->gpus.v[g].bus_id = ts_arena_strndup(&t->arena, buf, strlen(buf));
	}
}

/* Which GPUs of several captures are one device: a bus id only on one
 * recorded host; a uuid anywhere, also beyond 512 GPUs in all. */
TEST(tele_match_gpus_hosts)
{
	struct ts_telemetry t;

	/* two machines of one board layout, no host, no uuid: 8 devices */
	ts_tele_init(&t);
	for (int c = 0; c < 2; c++)
		for (int b = 0; b < 4; b++)
			match_gpu(&t, c, -1, 0x18 + b, NULL);
	CHECK_I64((int64_t)ts_tele_match_gpus(&t), 0);
	for (size_t g = 0; g < 8; g++) {
		CHECK_I64(t.gpus.v[g].device, (int64_t)g);
		CHECK(t.gpus.v[g].matched_by == NULL);
	}
	ts_tele_release(&t);
	/* nodeA twice and nodeB, same bus ids: nodeA's two are 4 devices,
	 * nodeB's 4 more; one side with no host joins nothing by bus id */
	ts_tele_init(&t);
	for (int c = 0; c < 4; c++)
		for (int b = 0; b < 4; b++)
			match_gpu(&t, c, -1, 0x18 + b, c < 2 ? "nodeA" : c == 2 ? "nodeB" : NULL);
	CHECK_I64((int64_t)ts_tele_match_gpus(&t), 4);
	for (size_t g = 0; g < 16; g++) {
		int64_t want = g < 8 ? (int64_t)(g % 4) : (int64_t)g - 4;
		CHECK_I64(t.gpus.v[g].device, want);
		CHECK_STR(t.gpus.v[g].matched_by ? t.gpus.v[g].matched_by : "-", g < 8 ? "bus_id" : "-");
	}
	ts_tele_release(&t);
	/* 2 x 1000 GPUs, one node seen by two tools: 1000 devices by uuid */
	ts_tele_init(&t);
	for (int c = 0; c < 2; c++)
		for (int u = 0; u < 1000; u++)
			match_gpu(&t, c, u, -1, NULL);
	CHECK_I64((int64_t)ts_tele_match_gpus(&t), 1000);
	for (size_t g = 0; g < 2000; g++) {
		CHECK_I64(t.gpus.v[g].device, (int64_t)(g % 1000));
		CHECK_STR(t.gpus.v[g].matched_by ? t.gpus.v[g].matched_by : "-", "uuid");
	}
	ts_tele_release(&t);
}

/* The matching rule written out the plain way, for the test below: GPU
 * g's group is grp[g] (its lowest GPU); a join of two groups is refused
 * when they hold GPUs of one capture or two different uuids. */
struct naive_gpu {
	int cap, uuid, bus, host;     /* -1 none */
};

static void naive_join(const struct naive_gpu *v, int n, int *grp, int a, int b)
{
	int ga = grp[a], gb = grp[b], ua = -1, ub = -1;

	if (ga == gb)
		return;
	for (int x = 0; x < n; x++) {
		if (grp[x] == ga && v[x].uuid >= 0)
			ua = v[x].uuid;
		if (grp[x] == gb && v[x].uuid >= 0)
			ub = v[x].uuid;
	}
	if (ua >= 0 && ub >= 0 && ua != ub)
		return;
	for (int x = 0; x < n; x++)
		for (int y = 0; y < n; y++)
			if (grp[x] == ga && grp[y] == gb && v[x].cap == v[y].cap)
				return;
	for (int x = 0; x < n; x++)
		if (grp[x] == (ga > gb ? ga : gb))
			grp[x] = ga < gb ? ga : gb;
}

/* Random captures (2-6 of 1-6 GPUs; uuids from a pool of 4, so one
 * capture may show one twice, bus ids from a pool of 3, hosts from two or
 * none): the device of every GPU as the plain rule gives it, uuids
 * first, then bus ids on one recorded host that no two uuids share. */
TEST(tele_match_gpus_against_plain_rule)
{
	uint64_t x = 7;
	int bad = 0;

	for (int trial = 0; trial < 300; trial++) {
		struct naive_gpu v[36];
		int grp[36], dev[36], n = 0, nd = 0;
		struct ts_telemetry t;
		ts_tele_init(&t);
#define RND(k) (x = x * 6364136223846793005ULL + 1442695040888963407ULL, (int)((x >> 33) % (k)))
		int ncap = 2 + RND(5);
		for (int c = 0; c < ncap; c++) {
			int per = 1 + RND(6), host = RND(3) - 1;
			for (int k = 0; k < per; k++) {
				struct naive_gpu g = { c, -1, -1, host };
				if (RND(10) >= 3)
					g.uuid = RND(4);
				if (RND(10) >= 3)
					g.bus = RND(3);
				v[n++] = g;
				match_gpu(&t, c, g.uuid, g.bus >= 0 ? 0x18 + g.bus : -1,
					  host < 0 ? NULL : host ? "nodeB" : "nodeA");
			}
		}
#undef RND
		for (int g = 0; g < n; g++)
			grp[g] = g;
		for (int g = 0; g < n; g++)
			for (int f = 0; f < g && v[g].uuid >= 0; f++)
				if (v[f].uuid == v[g].uuid) {
					naive_join(v, n, grp, f, g);
					break;
				}
		for (int g = 0; g < n; g++) {
			int u = -1, two = 0;
			if (v[g].bus < 0 || v[g].host < 0)
				continue;
			for (int f = 0; f < n; f++)
				if (v[f].bus == v[g].bus && v[f].host == v[g].host && v[f].uuid >= 0) {
					two |= u >= 0 && u != v[f].uuid;
					u = v[f].uuid;
				}
			for (int f = 0; f < g && !two; f++)
				if (v[f].bus == v[g].bus && v[f].host == v[g].host) {
					naive_join(v, n, grp, f, g);
					break;
				}
		}
		for (int g = 0; g < n; g++)
			dev[g] = grp[g] == g ? nd++ : dev[grp[g]];
		ts_tele_match_gpus(&t);
		for (int g = 0; g < n; g++)
			bad += t.gpus.v[g].device != dev[g];
		ts_tele_release(&t);
	}
	CHECK_I64(bad, 0);
}

TEST(tele_straggler_mw)
{
	DATA_OR_SKIP(p, TELE("megatron_straggler_detector_readme_lines.txt"));
	struct ts_telemetry t;
	if (read_one(&t, p, NULL))
		return;
	/* "L1: MnRtt 3453.08 ms/rank 8, MxRtt 3468.20 ms/rank 0; MnPwr 601796W/8,
	 * MxPwr 683801W/18 (milliwatts: 601.796 W and 683.801 W); MnTmp 52 C/0, MxTmp
	 * 65 C/21; MnClk 1950 MHz/28, MxClk 1980 MHz/0; MnEtpt 296.02 TF/0, MxEtpt
	 * 297.32 TF/8. L2 Bottom 4: 296.02/0, 296.17/2, 296.23/1, 296.23/4; L3 Top 4:
	 * 297.28/15, 297.28/11, 297.32/12, 297.32/8. Verdict: no straggler." */
	CHECK_I64(t.straggler.n, 3);
	if (t.straggler.n != 3)
		goto out;
	const struct ts_straggler_line *l = &t.straggler.v[0];
	CHECK_I64(l->srun_rank, 0);
	CHECK_I64(l->t_ns, 1710457676000000000LL); /* 2024-03-14 23:07:56 (date -u +%s) */
	int seen = 0;
	for (int k = 0; k < l->nstat; k++) {
		const struct ts_straggler_stat *s = &l->stat[k];
		if (!strcmp(s->metric, "Rtt")) {
			CHECK_NEAR(s->min, 3453.08, 1e-9);
			CHECK_I64(s->min_rank, 8);
			CHECK_NEAR(s->max, 3468.20, 1e-9);
			CHECK_I64(s->max_rank, 0);
			seen++;
		}
		if (!strcmp(s->metric, "Pwr")) {
			CHECK_NEAR(s->min, 601.796, 1e-9);
			CHECK_I64(s->min_rank, 8);
			CHECK_NEAR(s->max, 683.801, 1e-9);
			CHECK_I64(s->max_rank, 18);
			seen++;
		}
		if (!strcmp(s->metric, "Clk")) {
			CHECK_NEAR(s->min, 1950, 0);
			CHECK_I64(s->min_rank, 28);
			seen++;
		}
		if (!strcmp(s->metric, "Etpt")) {
			CHECK_NEAR(s->max, 297.32, 1e-9);
			CHECK_I64(s->max_rank, 8);
			seen++;
		}
	}
	CHECK_I64(seen, 4);
	const struct ts_straggler_line *b = &t.straggler.v[1], *u = &t.straggler.v[2];
	CHECK_STR(b->list_kind, "bottom");
	CHECK_I64(b->nlist, 4);
	CHECK_NEAR(b->list_v[1], 296.17, 1e-9);
	CHECK_I64(b->list_rank[1], 2);
	CHECK_STR(u->list_kind, "top");
	CHECK_I64(u->nlist, 4);
	CHECK_NEAR(u->list_v[3], 297.32, 1e-9);
	CHECK_I64(u->list_rank[3], 8);
	CHECK(has_note(&t, "mw-as-w"));
	struct ts_tele_finding f[8];
	size_t nf = judge(&t, f, 8, NULL);
	CHECK(has_finding(f, nf, "no-straggler"));
	CHECK(!has_finding(f, nf, "straggler-rank"));
out:
	ts_tele_release(&t);
}

TEST(tele_sniff_prose_is_not_telemetry)
{
	/* the shared EXPECTED.md and PROVENANCE quote every marker in prose */
	static const char *const prose[] = { "telemetry/EXPECTED.md", "telemetry/PROVENANCE.txt" };
	for (int k = 0; k < 2; k++) {
		DATA_OR_SKIP(p, prose[k]);
		struct ts_telemetry t;
		struct ts_err err;
		ts_err_init(&err);
		ts_tele_init(&t);
		CHECK_I64(ts_tele_read(&t, p, NULL, &err), TS_EPARSE);
		ts_tele_release(&t);
	}
}

TEST(tele_align_joins_by_time)
{
	/* synthetic: one GPU sampled every 100 ms from t = 0 to 2.9 s, util 90 %
	 * except 10 % inside [1.0, 1.5) s; steps of 0.5 s from t = 0. The dip lands
	 * wholly in step 3 ([1.0, 1.5) s), 5 samples per step, and step energy is
	 * mean power x 0.5 s = 200 W x 0.5 s = 100 J. */
	struct ts_telemetry t;
	ts_tele_init(&t);
	CHECK_I64(ts_tele_add_gpu(&t, "0", "synthetic"), 0);
	const int64_t base = 1700000000000000000LL;
	for (int i = 0; i < 30; i++) {
		struct ts_tele_sample *s = ts_tele_add_sample(&t, 0, (uint32_t)i, base + i * 100000000LL);
		s->st[TS_TF_UTIL_PCT] = s->st[TS_TF_POWER_W] = TS_TV_VALUE;
		s->v[TS_TF_UTIL_PCT] = i >= 10 && i < 15 ? 10 : 90;
		s->v[TS_TF_POWER_W] = 200;
	}
	struct ts_tele_span spans[6];
	for (int k = 0; k < 6; k++) {
		spans[k].iteration = k + 1;
		spans[k].start_ns = base + k * 500000000LL;
		spans[k].end_ns = spans[k].start_ns + 500000000LL;
		spans[k].tokens = 1000;
	}
	struct ts_tele_step *rows = NULL;
	size_t n = 0;
	struct ts_err err;
	ts_err_init(&err);
	CHECK_I64(ts_tele_align(&t, spans, 6, &rows, &n, &err), 0);
	CHECK_I64(n, 6);
	for (size_t k = 0; k < n; k++) {
		CHECK_I64(rows[k].samples, 5);
		CHECK_NEAR(rows[k].util_mean_pct, k == 2 ? 10 : 90, 1e-12);
		CHECK_NEAR(rows[k].energy_j, 100, 1e-9);
		CHECK_NEAR(rows[k].energy_per_token_j, 0.1, 1e-12);
	}
	struct ts_tele_gpu_summary sum[1];
	struct ts_tele_finding f[8];
	ts_tele_summarize(&t, sum);
	/* power integrated over 2.9 s at 200 W */
	CHECK_NEAR(sum[0].energy_j, 580, 1e-6);
	CHECK_STR(sum[0].energy_method, "integrated");
	size_t nf = ts_tele_findings(&t, sum, rows, n, NULL, f, 8, NULL);
	int dips = 0;
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(f[i].id, "stall-dips")) {
			dips = 1;
			CHECK(strstr(f[i].msg, "iterations 3") != NULL);
		}
	CHECK(dips);
	free(rows);
	ts_tele_release(&t);
}

static void one_gpu(struct ts_telemetry *t, double limit, double clk, double temp)
{
	ts_tele_init(t);
	ts_tele_add_gpu(t, "0", "NVIDIA H100 80GB HBM3");
	for (int i = 0; i < 4; i++) {
		struct ts_tele_sample *s = ts_tele_add_sample(t, 0, (uint32_t)i, TS_NO_TIME);
		s->st[TS_TF_POWER_LIMIT_W] = s->st[TS_TF_SM_CLOCK_MHZ] = s->st[TS_TF_TEMP_C] = TS_TV_VALUE;
		s->v[TS_TF_POWER_LIMIT_W] = limit;
		s->v[TS_TF_SM_CLOCK_MHZ] = clk;
		s->v[TS_TF_TEMP_C] = temp;
	}
}

TEST(tele_ab_confounds)
{
	/* 700 vs 600 W limit (14 %), 1980 vs 1755 MHz (11 %), 60 vs 78 C: three
	 * confounds; 700 vs 703 W (0.4 %), 1980 vs 1950 MHz (1.5 %), 60 vs 65 C:
	 * none (under 1 %, 3 %, 10 C) */
	struct ts_telemetry a, b, c;
	struct ts_tele_gpu_summary sa[1], sb[1], sc[1];
	struct ts_tele_finding f[8];
	one_gpu(&a, 700, 1980, 60);
	one_gpu(&b, 600, 1755, 78);
	one_gpu(&c, 703, 1950, 65);
	ts_tele_summarize(&a, sa);
	ts_tele_summarize(&b, sb);
	ts_tele_summarize(&c, sc);
	CHECK_I64(ts_tele_confounds(&a, sa, &b, sb, f, 8, NULL), 3);
	CHECK(strstr(f[0].msg, "power limit") && strstr(f[0].msg, "700 vs 600"));
	CHECK_I64(ts_tele_confounds(&a, sa, &c, sc, f, 8, NULL), 0);
	ts_tele_release(&a);
	ts_tele_release(&b);
	ts_tele_release(&c);
}

static int read_text(struct ts_telemetry *t, const char *text, struct ts_err *err)
{
	ts_err_init(err);
	ts_tele_init(t);
	return ts_tele_read_mem(t, text, strlen(text), "h.jsonl", NULL, err);
}

#define OWN_HEADER "{\"schema\":\"trainscope.telemetry/1\",\"gpus\":[{\"id\":\"0\",\"name\":\"X\"}]}\n"

TEST(tele_own_gpu_and_tick_out_of_range)
{
	/* "gpu": null is no GPU (converting NaN to an integer was undefined):
	 * the sample names no GPU of the header, an error on line 2; a gpu or a
	 * tick of 1e30 is an error naming line 2 */
	struct ts_telemetry t;
	struct ts_err err;
	CHECK_I64(read_text(&t, OWN_HEADER "{\"t_unix_ns\":1,\"gpu\":null,\"tick\":0}\n", &err),
		  TS_EPARSE);
	CHECK_I64(err.line, 2);
	CHECK(strstr(err.msg, "names a GPU") != NULL);
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, OWN_HEADER "{\"t_unix_ns\":1,\"gpu\":1e30,\"tick\":0}\n", &err),
		  TS_EPARSE);
	CHECK_I64(err.line, 2);
	CHECK(strstr(err.msg, "\"gpu\" out of range") != NULL);
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, OWN_HEADER "{\"t_unix_ns\":1,\"gpu\":0,\"tick\":1e30}\n", &err),
		  TS_EPARSE);
	CHECK_I64(err.line, 2);
	CHECK(strstr(err.msg, "\"tick\" out of range") != NULL);
	ts_tele_release(&t);
	/* "tick": null is no tick: tick 0 */
	CHECK_I64(read_text(&t, OWN_HEADER "{\"t_unix_ns\":1,\"gpu\":0,\"tick\":null}\n", &err), 0);
	REQUIRE(t.samples.n == 1);
	CHECK_I64(t.samples.v[0].tick, 0);
	ts_tele_release(&t);
}

TEST(tele_own_interval_out_of_range_is_unknown)
{
	/* 1e300 ms has no int64 nanoseconds: the interval is unknown (0) with a note */
	struct ts_telemetry t;
	struct ts_err err;
	CHECK_I64(read_text(&t, "{\"schema\":\"trainscope.telemetry/1\",\"interval_ms\":1e300,"
				"\"gpus\":[{\"id\":\"0\",\"name\":\"X\"}]}\n", &err), 0);
	CHECK_I64(t.interval_ns, 0);
	CHECK(has_note(&t, "interval-range"));
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, "{\"schema\":\"trainscope.telemetry/1\",\"interval_ms\":250,"
				"\"gpus\":[{\"id\":\"0\",\"name\":\"X\"}]}\n", &err), 0);
	CHECK_I64(t.interval_ns, 250000000);
	ts_tele_release(&t);
}

TEST(tele_event_reasons_out_of_range_are_no_bits)
{
	/* clock_event_reasons -1 and 2^64 are no 64-bit mask: no reason seen,
	 * no throttle finding (their conversion to an integer was undefined);
	 * 4 = SW power cap (0x4) is seen */
	struct ts_telemetry t;
	struct ts_err err;
	struct ts_tele_gpu_summary sum[1];
	CHECK_I64(read_text(&t, OWN_HEADER
			    "{\"t_unix_ns\":1,\"gpu\":0,\"tick\":0,\"clock_event_reasons\":-1}\n"
			    "{\"t_unix_ns\":2,\"gpu\":0,\"tick\":1,"
			    "\"clock_event_reasons\":18446744073709551616}\n", &err), 0);
	ts_tele_summarize(&t, sum);
	CHECK_I64((int64_t)sum[0].reasons_seen, 0);
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, OWN_HEADER
			    "{\"t_unix_ns\":1,\"gpu\":0,\"tick\":0,\"clock_event_reasons\":4}\n", &err), 0);
	ts_tele_summarize(&t, sum);
	CHECK_I64((int64_t)sum[0].reasons_seen, 4);
	ts_tele_release(&t);
}

TEST(tele_gmi_json_attached_out_of_range)
{
	/* "Attached GPUs": "99999999999" is no int32 count: unknown (-1) */
	struct ts_telemetry t;
	struct ts_err err;
	CHECK_I64(read_text(&t, "{\"Driver Version\": \"3.3.5\", \"Attached GPUs\": \"99999999999\","
				" \"GPU\": [{\"Index\": \"0\", \"Product Name\": \"MTT S5000\"}]}\n", &err), 0);
	CHECK_I64(t.gpus_attached, -1);
	ts_tele_release(&t);
}

TEST(tele_query_negative_hour_is_no_time)
{
	/* hour -99999999 (h * 3600 overflowed an int) is no time of day: the
	 * sample is untimed; 15:13:03.5 on 2026/01/06 is 1767712383.5 s (date -u) */
	struct ts_telemetry t;
	struct ts_err err;
	CHECK_I64(read_text(&t, "timestamp, name, power.draw [W]\n"
				"2026/01/06 -99999999:00:00.000, X, 100 W\n", &err), 0);
	REQUIRE(t.samples.n == 1);
	CHECK_I64(t.samples.v[0].t_ns, TS_NO_TIME);
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, "timestamp, name, power.draw [W]\n"
				"2026/01/06 15:-5:00.000, X, 100 W\n", &err), 0);
	REQUIRE(t.samples.n == 1);
	CHECK_I64(t.samples.v[0].t_ns, TS_NO_TIME);
	ts_tele_release(&t);
	CHECK_I64(read_text(&t, "timestamp, name, power.draw [W]\n"
				"2026/01/06 15:13:03.500, X, 100 W\n", &err), 0);
	REQUIRE(t.samples.n == 1);
	CHECK_I64(t.samples.v[0].t_ns, 1767712383500000000LL);
	ts_tele_release(&t);
}

TEST(tele_far_apart_times_saturate)
{
	/* samples at -9e18 and 9e18 ns are 1.8e19 ns apart, past int64 (their
	 * difference overflowed): the span saturates at INT64_MAX ns, so 100 W
	 * integrates to 100 * 9223372036.854775807 s = 9.2233720368547758e11 J and
	 * the idle gap between busy samples is found */
	struct ts_telemetry t;
	struct ts_err err;
	struct ts_tele_gpu_summary sum[1];
	struct ts_tele_finding f[16];
	CHECK_I64(read_text(&t, OWN_HEADER
			    "{\"t_unix_ns\":-9000000000000000000,\"gpu\":0,\"tick\":0,"
			    "\"power_w\":100,\"util_pct\":50}\n"
			    "{\"t_unix_ns\":-9000000000000000000,\"gpu\":0,\"tick\":1,\"util_pct\":0}\n"
			    "{\"t_unix_ns\":9000000000000000000,\"gpu\":0,\"tick\":2,"
			    "\"power_w\":100,\"util_pct\":50}\n", &err), 0);
	REQUIRE(t.samples.n == 3);
	ts_tele_summarize(&t, sum);
	CHECK_STR(sum[0].energy_method, "integrated");
	CHECK_REL(sum[0].energy_j, 9.2233720368547758e11, 1e-12);
	size_t nf = judge(&t, f, 16, NULL);
	CHECK(has_finding(f, nf, "idle-gap"));
	ts_tele_release(&t);
}

TEST(tele_stall_dips_per_gpu_and_step)
{
	/* 4 steps on 2 GPUs: GPU 0 at 90 % but 50 % in iteration 2, GPU 1 at
	 * 40 % throughout (low all along: no dip, 50 points under GPU 0 though).
	 * One step dips, iteration 2 on GPU 0 against its median step of 90 %. */
	struct ts_telemetry t;
	struct ts_tele_step rows[8];
	struct ts_tele_gpu_summary sum[2];
	struct ts_tele_finding f[16];
	int dips = 0;

	ts_tele_init(&t);
	CHECK_I64(ts_tele_add_gpu(&t, "0", "synthetic"), 0);
	CHECK_I64(ts_tele_add_gpu(&t, "1", "synthetic"), 1);
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < 8; k++) {
		rows[k].iteration = k / 2 + 1;
		rows[k].gpu = (uint32_t)(k % 2);
		rows[k].samples = 5;
		rows[k].util_mean_pct = k % 2 ? 40 : rows[k].iteration == 2 ? 50 : 90;
	}
	ts_tele_summarize(&t, sum);
	size_t nf = ts_tele_findings(&t, sum, rows, 8, NULL, f, 16, NULL);
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(f[i].id, "stall-dips")) {
			dips++;
			CHECK_STR(f[i].msg, "utilization dips >= 20 points below the GPU's median step "
				  "at 1 step(s): GPU 0 (median step 90 %): iterations 2");
		}
	CHECK_I64(dips, 1);
	ts_tele_release(&t);
}
