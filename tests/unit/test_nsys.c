/*
 * test_nsys.c - the Nsight Systems SQLite reader.
 *
 * Numbers on the shared exports are copied by hand from
 * shared/reference/capabilities-anchors.md §2b/§2e (measured there by an
 * independent script) and shared/data/nsys/PROVENANCE.txt. Synthetic
 * exports are built here with the sqlite3 API; their expected walls are
 * worked out by hand in the comments. The cross-format test writes one
 * event list as Kineto JSON and as an nsys-shaped SQLite database and
 * checks both readers give the same walls (and the hand values).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "harness.h"
#include "tbuild.h"
#include "trainscope/nsys.h"
#include "trainscope/profile.h"

struct rankw {
	int32_t device;
	struct ts_dev_walls w;
};

/* Open path, read every rank, walls per rank (one device each). */
static int walls_of_file(const char *path, struct rankw *out, size_t max, size_t *n,
			 struct ts_nsys *x)
{
	struct ts_err err;

	ts_err_init(&err);
	ts_nsys_init(x);
	if (ts_nsys_open(x, path, &err) || ts_nsys_survey(x, &err))
		return -1;
	*n = 0;
	for (size_t k = 0; k < x->ranks.n && *n < max; k++) {
		struct ts_trace t;
		struct ts_dev_walls *w = NULL;
		size_t nw = 0;
		ts_trace_init(&t);
		if (ts_nsys_read_rank(x, k, NULL, &t, NULL, &err) || ts_dev_walls_of(&t, &w, &nw, &err) ||
		    nw != 1) {
			free(w);
			ts_trace_release(&t);
			return -1;
		}
		out[*n].device = w[0].device;
		out[*n].w = w[0];
		(*n)++;
		free(w);
		ts_trace_release(&t);
	}
	return 0;
}

TEST(nsys_mfu_before_anchor_numbers)
{
	DATA_OR_SKIP(path, "nsys/mfu_2gpu_before.sqlite");
	struct ts_nsys x;
	struct rankw r[4];
	size_t n = 0;

	REQUIRE(walls_of_file(path, r, 4, &n, &x) == 0);
	CHECK_STR(x.schema, "3.25.0");
	CHECK_STR(x.product, "2026.2.1.210");
	REQUIRE(n == 2);
	/* §2b: 4010 kernels, 535,200,650 ns in total */
	CHECK_I64(r[0].w.kernels + r[1].w.kernels, 4010);
	CHECK_I64(r[0].w.kernel_sum_ns + r[1].w.kernel_sum_ns, 535200650);
	/* §2b: dev0 span 299,848,812, busy 273,817,787, idle 26,031,025,
	 * compute 253,800,656, NCCL 17,172,652 all exposed, memcpy 2,844,479 */
	CHECK_I64(r[0].device, 0);
	CHECK_I64(r[0].w.span_ns, 299848812);
	CHECK_I64(r[0].w.busy_ns, 273817787);
	CHECK_I64(r[0].w.idle_ns, 26031025);
	CHECK_I64(r[0].w.compute_ns, 253800656);
	CHECK_I64(r[0].w.comm_ns, 17172652);
	CHECK_I64(r[0].w.exposed_comm_ns, 17172652);
	CHECK_I64(r[0].w.memcpy_ns, 2844479);
	/* dev1 NCCL 8,229,100 */
	CHECK_I64(r[1].device, 1);
	CHECK_I64(r[1].w.comm_ns, 8229100);
	/* §2e comm 5.7 % / 2.8 % of span */
	CHECK_NEAR(100.0 * (double)r[0].w.exposed_comm_ns / (double)r[0].w.span_ns, 5.7, 0.05);
	CHECK_NEAR(100.0 * (double)r[1].w.exposed_comm_ns / (double)r[1].w.span_ns, 2.8, 0.05);
	/* §2b/§2e joins: 3986 of 4010 join; 24 do not, 1 of them would
	 * match a launch row of the other process */
	CHECK_I64(x.joins.kernels, 4010);
	CHECK_I64(x.joins.joined, 3986);
	CHECK_I64(x.joins.unjoined, 24);
	CHECK_I64(x.joins.cross_process, 1);
	/* no TARGET_INFO_GPU, blobs not exported, NCCL NVTX present (462 in domain 1) */
	CHECK(!x.caps.gpu_name);
	CHECK(x.caps.blobs_excluded);
	CHECK(!x.caps.message_sizes);
	CHECK(x.caps.payload_schemas);   /* §2b: NVTX_PAYLOAD_SCHEMAS 16 rows */
	CHECK(x.caps.nccl_nvtx);
	CHECK(x.caps.nccl_kernels);
	CHECK_I64(x.nccl_nvtx_ranges, 462);
	CHECK_I64(x.window_lo_ns, 60111418026);
	CHECK_I64(x.window_hi_ns, 60411418026);
	ts_nsys_close(&x);
}

TEST(nsys_h100_anchor_numbers)
{
	DATA_OR_SKIP(path, "nsys/h100_2gpu_1s.sqlite");
	struct ts_nsys x;
	struct rankw r[4];
	size_t n = 0;

	REQUIRE(walls_of_file(path, r, 4, &n, &x) == 0);
	REQUIRE(n == 2);
	/* §2e: 3442 kernels / 44,829,522 ns */
	CHECK_I64(r[0].w.kernels + r[1].w.kernels, 3442);
	CHECK_I64(r[0].w.kernel_sum_ns + r[1].w.kernel_sum_ns, 44829522);
	/* §2b: dev0 memcpy union 940,490,300 of a 969,447,605 span, compute 22.4 ms */
	CHECK_I64(r[0].w.span_ns, 969447605);
	CHECK_I64(r[0].w.memcpy_ns, 940490300);
	CHECK_NEAR((double)r[0].w.compute_ns / 1e6, 22.4, 0.05);
	CHECK(r[0].w.exposed_memcpy_ns * 100 >= r[0].w.span_ns * 96);
	CHECK_I64(r[0].w.comm_ns, 0);
	/* §2e joins: 1632 join, 1810 do not, 11 would match the other process */
	CHECK_I64(x.joins.joined, 1632);
	CHECK_I64(x.joins.unjoined, 1810);
	CHECK_I64(x.joins.cross_process, 11);
	CHECK(!x.caps.nccl_nvtx);
	CHECK(!x.caps.nccl_kernels);
	ts_nsys_close(&x);
}

TEST(nsys_mfu_after_provenance_numbers)
{
	DATA_OR_SKIP(path, "nsys/mfu_2gpu_after.sqlite");
	struct ts_nsys x;
	struct rankw r[4];
	size_t n = 0;

	REQUIRE(walls_of_file(path, r, 4, &n, &x) == 0);
	REQUIRE(n == 2);
	/* PROVENANCE: 3587 kernels (dev0 1793, dev1 1794), 488,835,406 ns */
	CHECK_I64(r[0].w.kernels, 1793);
	CHECK_I64(r[1].w.kernels, 1794);
	CHECK_I64(r[0].w.kernel_sum_ns + r[1].w.kernel_sum_ns, 488835406);
	ts_nsys_close(&x);
}

TEST(nsys_api_suffix)
{
	CHECK_I64(ts_nsys_api_len("cudaLaunchKernel_v7000", 22), 16);
	CHECK_I64(ts_nsys_api_len("cudaEventRecordWithFlags_v11010", 31), 24);
	CHECK_I64(ts_nsys_api_len("cuLaunchKernelEx", 16), 16);
	CHECK_I64(ts_nsys_api_len("foo_v", 5), 5);
	CHECK_I64(ts_nsys_api_len("_v1", 3), 3);
	CHECK_I64(ts_nsys_api_len("x_v12", 5), 1);
}

/* ------------------------------------------------------------ synthetic exports */

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int make_db(char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	rc = exec_sql(db, sql);
	sqlite3_close(db);
	return rc;
}

/* The schema subset a 3.25 export has for these tables. */
#define NSYS_SCHEMA                                                                             \
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"                     \
	"CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"                                     \
	"INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.25.0');"                    \
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"        \
	"INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device');"     \
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,"     \
	" contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"           \
	" demangledName INTEGER, shortName INTEGER);"                                               \
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER,"     \
	" streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,"               \
	" copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"                                     \
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER, end INTEGER, deviceId INTEGER,"     \
	" streamId INTEGER, correlationId INTEGER, globalPid INTEGER, value INTEGER,"               \
	" bytes INTEGER, memKind INTEGER);"                                                         \
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER,"  \
	" globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);"          \
	"CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"        \
	" globalTid INTEGER, textId INTEGER, domainId INTEGER);"

/* globalPid of pid 100 (hardware id 1 in bits 48+), globalTid of its tid 101 */
#define GP "281476654432256"
#define GT "281476654432357"

/*
 * One event list, device 0, stream 7, times in ns from 1,000,000:
 *   gemm   [1,000,000, 1,400,000)   compute
 *   nccl   [1,300,000, 1,700,000)   comm, 100,000 under the gemm
 *   memcpy [1,800,000, 1,900,000)   HtoD 4096 B
 *   memset [1,950,000, 2,000,000)   compute (memset counts as compute)
 *   gemm   [2,500,000, 2,600,000)
 * span 1,600,000; busy 400,000+300,000+100,000+50,000+100,000 = 950,000;
 * idle 650,000; compute 400,000+50,000+100,000 = 550,000; comm 400,000,
 * exposed comm 300,000; memcpy 100,000 all exposed; memset 50,000.
 */
static const struct syn {
	const char *cat, *name;
	int64_t s, e, corr;
} syn[] = {
	{ "kernel", "ampere_sgemm_128x64_nn", 1000000, 1400000, 11 },
	{ "kernel", "ncclDevKernel_AllReduce_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1300000, 1700000, 12 },
	{ "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 1800000, 1900000, 13 },
	{ "gpu_memset", "Memset (Device)", 1950000, 2000000, 14 },
	{ "kernel", "ampere_sgemm_128x64_nn", 2500000, 2600000, 15 },
};

static void check_syn_walls(const struct ts_dev_walls *w)
{
	CHECK_I64(w->device, 0);
	CHECK_I64(w->span_ns, 1600000);
	CHECK_I64(w->busy_ns, 950000);
	CHECK_I64(w->idle_ns, 650000);
	CHECK_I64(w->compute_ns, 550000);
	CHECK_I64(w->comm_ns, 400000);
	CHECK_I64(w->exposed_comm_ns, 300000);
	CHECK_I64(w->memcpy_ns, 100000);
	CHECK_I64(w->exposed_memcpy_ns, 100000);
	CHECK_I64(w->memset_ns, 50000);
	CHECK_I64(w->kernels, 3);
}

static void syn_sqlite(struct ts_sb *sql)
{
	ts_sb_adds(sql, NSYS_SCHEMA);
	ts_sb_adds(sql, "INSERT INTO StringIds VALUES(1,'ampere_sgemm_128x64_nn'),"
			"(2,'ncclDevKernel_AllReduce_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),"
			"(3,'cudaLaunchKernel_v7000'),(4,'cudaMemcpyAsync_v3020'),(5,'cudaMemsetAsync_v3020');");
	for (size_t i = 0; i < sizeof(syn) / sizeof(syn[0]); i++) {
		const struct syn *e = &syn[i];
		int api = 3;
		if (strcmp(e->cat, "kernel") == 0)
			ts_sb_addf(sql, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(%lld,%lld,0,1,7,%lld," GP ",%d,%d);",
				   (long long)e->s, (long long)e->e, (long long)e->corr, e->name[0] == 'a' ? 1 : 2,
				   e->name[0] == 'a' ? 1 : 2);
		else if (strcmp(e->cat, "gpu_memcpy") == 0) {
			ts_sb_addf(sql, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(%lld,%lld,0,7,%lld," GP ",4096,1,0,2);",
				   (long long)e->s, (long long)e->e, (long long)e->corr);
			api = 4;
		} else {
			ts_sb_addf(sql, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(%lld,%lld,0,7,%lld," GP ",0,512,2);",
				   (long long)e->s, (long long)e->e, (long long)e->corr);
			api = 5;
		}
		ts_sb_addf(sql, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(%lld,%lld,0," GT ",%lld,%d,0);",
			   (long long)e->s - 20000, (long long)e->s - 15000, (long long)e->corr, api);
	}
}

static void syn_kineto(struct ts_sb *js)
{
	ts_sb_adds(js, "{\"traceEvents\":[");
	for (size_t i = 0; i < sizeof(syn) / sizeof(syn[0]); i++) {
		const struct syn *e = &syn[i];
		const char *api = strcmp(e->cat, "kernel") == 0 ? "cudaLaunchKernel"
				  : strcmp(e->cat, "gpu_memcpy") == 0 ? "cudaMemcpyAsync" : "cudaMemsetAsync";
		ts_sb_addf(js, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
			       "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,\"args\":{\"device\":0,\"stream\":7,"
			       "\"correlation\":%lld%s}}",
			   i ? "," : "", e->cat, e->name, (long long)(e->s / 1000), (long long)(e->s % 1000),
			   (long long)((e->e - e->s) / 1000), (long long)((e->e - e->s) % 1000), (long long)e->corr,
			   strcmp(e->cat, "kernel") == 0 ? "" : strcmp(e->cat, "gpu_memcpy") == 0 ? ",\"bytes\":4096"
										    : ",\"bytes\":512");
		ts_sb_addf(js, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":100,\"tid\":101,"
			       "\"ts\":%lld.%03lld,\"dur\":5.000,\"args\":{\"correlation\":%lld}}",
			   api, (long long)((e->s - 20000) / 1000), (long long)((e->s - 20000) % 1000),
			   (long long)e->corr);
	}
	ts_sb_adds(js, "]}");
}

TEST(nsys_cross_format_identity)
{
	char path[] = "/tmp/ts-nsys-syn-XXXXXX", path2[] = "/tmp/ts-nsys-syn2-XXXXXX";
	struct ts_sb sql, js;
	struct ts_nsys x;
	struct rankw r[2];
	size_t n = 0, nk = 0;
	struct ts_trace t;
	struct ts_err err;
	struct ts_dev_walls *kw = NULL;

	ts_sb_init(&sql);
	ts_sb_init(&js);
	syn_sqlite(&sql);
	syn_kineto(&js);
	REQUIRE(make_db(path, sql.buf) == 0);
	CHECK(walls_of_file(path, r, 2, &n, &x) == 0);
	CHECK_I64(n, 1);
	if (n == 1)
		check_syn_walls(&r[0].w);
	CHECK_I64(x.joins.joined, 3);
	ts_nsys_close(&x);
	unlink(path);

	ts_trace_init(&t);
	ts_err_init(&err);
	REQUIRE(ts_trace_read_mem(&t, js.buf, js.len, "syn.json", NULL, &err) == 0);
	REQUIRE(ts_dev_walls_of(&t, &kw, &nk, &err) == 0);
	CHECK_I64(nk, 1);
	if (nk == 1 && n == 1) {
		check_syn_walls(&kw[0]);
		/* the identity itself: every wall equal across the two formats */
		CHECK(memcmp(&kw[0], &r[0].w, sizeof(kw[0])) == 0);
	}
	free(kw);
	/* the same reports from both formats, byte for byte */
	REQUIRE(make_db(path2, sql.buf) == 0);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path2, &err) == 0);
	for (int k = 0; k < TS_SREP_COUNT; k++) {
		struct ts_srep a, b;
		struct ts_sb ca, cb;
		if (k == TS_SREP_NVTX_SUM)
			continue;   /* no ranges in this list */
		ts_srep_init(&a, (enum ts_srep_kind)k);
		ts_srep_init(&b, (enum ts_srep_kind)k);
		ts_sb_init(&ca);
		ts_sb_init(&cb);
		CHECK(ts_srep_add_nsys(&a, &x, &err) == 0 && ts_srep_finish(&a, &err) == 0);
		CHECK(ts_srep_add_trace(&b, &t, &err) == 0 && ts_srep_finish(&b, &err) == 0);
		ts_srep_csv(&a, &ca);
		ts_srep_csv(&b, &cb);
		CHECK(a.rows.n > 0);
		CHECK_STR(cb.buf, ca.buf);
		ts_sb_release(&ca);
		ts_sb_release(&cb);
		ts_srep_release(&a);
		ts_srep_release(&b);
	}
	ts_nsys_close(&x);
	unlink(path2);
	ts_trace_release(&t);
	ts_sb_release(&sql);
	ts_sb_release(&js);
}

static int open_err(const char *path, struct ts_err *err)
{
	struct ts_nsys x;
	int rc;

	ts_err_init(err);
	ts_nsys_init(&x);
	rc = ts_nsys_open(&x, path, err);
	if (!rc)
		rc = ts_nsys_survey(&x, err);
	ts_nsys_close(&x);
	return rc;
}

TEST(nsys_not_nsys_sqlite)
{
	char path[] = "/tmp/ts-nsys-other-XXXXXX";
	struct ts_err err;

	REQUIRE(make_db(path, "CREATE TABLE t(a INTEGER); INSERT INTO t VALUES(1);") == 0);
	CHECK_I64(open_err(path, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "not an Nsight Systems export") != NULL);
	unlink(path);
}

TEST(nsys_truncated)
{
	char path[] = "/tmp/ts-nsys-trunc-XXXXXX";
	struct ts_sb sql;
	struct ts_err err;
	FILE *f;
	long size;

	ts_sb_init(&sql);
	syn_sqlite(&sql);
	/* grow the file to several pages, then cut it in the middle */
	ts_sb_adds(&sql, "CREATE TABLE pad(x TEXT); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c"
			 " WHERE i < 200) INSERT INTO pad SELECT hex(randomblob(100)) FROM c;");
	REQUIRE(make_db(path, sql.buf) == 0);
	f = fopen(path, "r+b");
	REQUIRE(f != NULL);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	REQUIRE(size > 8192);
	REQUIRE(truncate(path, size / 2 + 100) == 0);
	CHECK_I64(open_err(path, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "truncated") != NULL);
	/* and a file that is not SQLite at all */
	REQUIRE(truncate(path, 0) == 0);
	f = fopen(path, "wb");
	REQUIRE(f != NULL);
	fputs("{\"traceEvents\": []}", f);
	fclose(f);
	CHECK_I64(open_err(path, &err), TS_EPARSE);
	CHECK(strstr(err.msg, "not an SQLite database") != NULL);
	unlink(path);
	ts_sb_release(&sql);
}

TEST(nsys_without_kernel_table_and_null_end)
{
	char path[] = "/tmp/ts-nsys-nok-XXXXXX";
	struct ts_sb sql;
	struct ts_nsys x;
	struct ts_err err;
	struct ts_trace t;

	ts_sb_init(&sql);
	syn_sqlite(&sql);
	/* drop KERNEL; one memcpy with a NULL end; one NVTX range with a NULL end */
	ts_sb_adds(&sql, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
			 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(3000000,NULL,0,7,99," GP ",8,1,0,2);"
			 "INSERT INTO NVTX_EVENTS VALUES(1000000,NULL,59,'open range'," GT ",NULL,0);"
			 "INSERT INTO NVTX_EVENTS VALUES(1000000,1500000,59,'closed range'," GT ",NULL,0);");
	REQUIRE(make_db(path, sql.buf) == 0);
	ts_err_init(&err);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	CHECK(!x.caps.kernels);
	CHECK(x.caps.memcpy);
	CHECK_I64(x.null_end[TS_NT_MEMCPY], 1);
	REQUIRE(x.ranks.n == 1);
	CHECK_I64(x.ranks.v[0].kernels, 0);
	CHECK_I64(x.ranks.v[0].memcpys, 1);
	ts_trace_init(&t);
	REQUIRE(ts_nsys_read_rank(&x, 0, NULL, &t, NULL, &err) == 0);
	CHECK_I64(x.null_end[TS_NT_NVTX], 1);
	{
		size_t ann = 0, cp = 0;
		for (size_t i = 0; i < t.ev.n; i++) {
			ann += t.ev.cat[i] == TS_CAT_USER_ANNOTATION;
			cp += t.ev.cat[i] == TS_CAT_MEMCPY;
		}
		CHECK_I64(ann, 1);
		CHECK_I64(cp, 1);
	}
	ts_trace_release(&t);
	ts_nsys_close(&x);
	unlink(path);
	ts_sb_release(&sql);
}

TEST(nsys_step_nvtx_regex_and_detection)
{
	char path[] = "/tmp/ts-nsys-steps-XXXXXX";
	struct ts_sb sql;
	struct ts_nsys x;
	struct ts_err err;
	struct ts_nsys_read_opts o;
	struct ts_nsys_rank_info info;

	ts_sb_init(&sql);
	syn_sqlite(&sql);
	/* four 2 ms "train_step" ranges named the emit_nvtx way (a per-call
	 * op_id), each holding a short inner range */
	for (int i = 0; i < 4; i++)
		ts_sb_addf(&sql, "INSERT INTO NVTX_EVENTS VALUES(%d,%d,59,'train_step, op_id = %d'," GT ",NULL,0);"
				 "INSERT INTO NVTX_EVENTS VALUES(%d,%d,59,'forward'," GT ",NULL,0);",
			   1000000 + i * 2000000, 3000000 + i * 2000000, 100 + i, 1100000 + i * 2000000,
			   1200000 + i * 2000000);
	REQUIRE(make_db(path, sql.buf) == 0);
	ts_err_init(&err);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	for (int pass = 0; pass < 3; pass++) {
		struct ts_trace t;
		struct ts_rank_prof p;
		memset(&o, 0, sizeof(o));
		o.step_nvtx = pass == 0 ? "^train_" : pass == 1 ? NULL : "^forward$";
		ts_trace_init(&t);
		REQUIRE(ts_nsys_read_rank(&x, 0, &o, &t, &info, &err) == 0);
		CHECK_I64(info.steps, 4);
		CHECK_I64(info.steps_from, pass == 1 ? TS_NSYS_STEPS_NVTX : TS_NSYS_STEPS_REGEX);
		if (pass == 1)
			CHECK_STR(info.step_marker, "train_step");
		ts_rank_prof_init(&p);
		REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
		CHECK_I64(p.steps.n, 4);
		if (p.steps.n == 4)
			CHECK_I64(p.steps.v[1].dur_ns, pass == 2 ? 100000 : 2000000);
		ts_rank_prof_release(&p);
		ts_trace_release(&t);
	}
	memset(&o, 0, sizeof(o));
	o.step_nvtx = "([";
	{
		struct ts_trace t;
		ts_trace_init(&t);
		CHECK_I64(ts_nsys_read_rank(&x, 0, &o, &t, &info, &err), TS_EUSAGE);
		ts_trace_release(&t);
	}
	ts_nsys_close(&x);
	unlink(path);
	ts_sb_release(&sql);
}

/* ------------------------------------------------------------ stats reports */

TEST(nsys_stats_definitions_by_hand)
{
	struct ts_trace t;
	struct ts_srep r;
	struct ts_err err;
	struct ts_sb out;
	/* "a": 1, 2, 3, 10 ns -> total 16, avg 4.0, med 2.5 (mean of the two
	 * middle values), sample stddev sqrt((9+4+1+36)/3) = 4.08 -> 4.1;
	 * "b": one 16 ns kernel -> stddev 0.0. Equal totals: fewer instances
	 * first (b), 50.0 % each. */
	static const int64_t a[] = { 1, 2, 3, 10 };
	tb_init(&t);
	for (size_t i = 0; i < 5; i++) {
		struct ts_trace_event e;
		ts_trace_event_init(&e);
		e.ph = 'X';
		e.cat = TS_CAT_KERNEL;
		e.name = (uint32_t)ts_intern(&t.strings, i < 4 ? "a" : "b", 1);
		e.ts_ns = (int64_t)i * 100;
		e.dur_ns = i < 4 ? a[i] : 16;
		e.pid = 0;
		e.tid = 7;
		e.device = 0;
		ts_trace_push_event(&t, &e);
	}
	ts_srep_init(&r, TS_SREP_KERN_SUM);
	ts_err_init(&err);
	REQUIRE(ts_srep_add_trace(&r, &t, &err) == 0);
	REQUIRE(ts_srep_finish(&r, &err) == 0);
	ts_sb_init(&out);
	ts_srep_csv(&r, &out);
	CHECK_STR(out.buf, "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
			   "50.0,16,1,16.0,16.0,16,16,0.0,b\n"
			   "50.0,16,4,4.0,2.5,1,10,4.1,a\n");
	ts_sb_release(&out);
	ts_srep_release(&r);
	tb_release(&t);
	CHECK_I64(ts_srep_of("cuda_kern_exec_sum"), TS_SREP_KERN_EXEC_SUM);
	CHECK_I64(ts_srep_of("cuda_gpu_kern_gb_sum"), -1);
}

static int kern_row(const char *path, const char *prefix, struct ts_srep_stat *out)
{
	struct ts_nsys x;
	struct ts_srep r;
	struct ts_err err;
	int found = 0;

	ts_nsys_init(&x);
	ts_srep_init(&r, TS_SREP_KERN_SUM);
	ts_err_init(&err);
	if (ts_nsys_open(&x, path, &err) == 0 && ts_srep_add_nsys(&r, &x, &err) == 0 &&
	    ts_srep_finish(&r, &err) == 0)
		for (size_t i = 0; i < r.rows.n && !found; i++)
			if (strncmp(ts_intern_str(&r.names, r.rows.v[i].name), prefix, strlen(prefix)) == 0) {
				*out = r.rows.v[i].v;
				found = 1;
			}
	ts_srep_release(&r);
	ts_nsys_close(&x);
	return found;
}

TEST(nsys_before_after_instance_times)
{
	DATA_OR_SKIP(before, "nsys/mfu_2gpu_before.sqlite");
	DATA_OR_SKIP(after, "nsys/mfu_2gpu_after.sqlite");
	struct ts_srep_stat fb, fa, sb, sa;

	REQUIRE(kern_row(before, "void flash::flash_fwd_kernel", &fb));
	REQUIRE(kern_row(after, "void flash::flash_fwd_kernel", &fa));
	REQUIRE(kern_row(before, "ncclDevKernel_SendRecv", &sb));
	REQUIRE(kern_row(after, "ncclDevKernel_SendRecv", &sa));
	/* §2b: before 68 instances, 272,317,378 ns, median 3,977,582, sample
	 * stddev 3,878,677.8; PROVENANCE: after 60 instances (68 -> 60) */
	CHECK_I64(fb.n, 68);
	CHECK_I64(fb.total, 272317378);
	CHECK_NEAR(fb.med, 3977582.0, 0.01);
	CHECK_NEAR(fb.stddev, 3878677.8, 0.05);
	CHECK_I64(fa.n, 60);
	/* flash_fwd ~4.0 ms per instance in both */
	CHECK_NEAR(fb.avg / 1e6, 4.0, 0.05);
	CHECK_NEAR(fa.avg / 1e6, 4.0, 0.05);
	/* SendRecv: 66 -> 62 instances; before = all NCCL of §2b (17,172,652
	 * + 8,229,100 ns); after +8.34 ms (PROVENANCE) -> slower per instance */
	CHECK_I64(sb.n, 66);
	CHECK_I64(sa.n, 62);
	CHECK_I64(sb.total, 17172652 + 8229100);
	CHECK_NEAR((double)(sa.total - sb.total) / 1e6, 8.34, 0.005);
	CHECK(sa.avg > sb.avg * 1.3);
}

TEST(nsys_walls_zero_length_and_absurd_times)
{
	/* found by fuzz_nsys: a lone zero-length kernel at 5 ns gave span -5.
	 * Span covers zero-length activities; busy is 0 (nothing ran).
	 * An activity at 2^62 ns (beyond 73 years) is not a time: left out. */
	struct ts_trace t;
	struct ts_dev_walls *w = NULL;
	size_t n = 0;
	struct ts_err err;
	struct ts_trace_event e;

	tb_init(&t);
	ts_trace_event_init(&e);
	e.ph = 'X';
	e.cat = TS_CAT_KERNEL;
	e.name = (uint32_t)ts_intern(&t.strings, "k", 1);
	e.pid = 0;
	e.device = 0;
	e.ts_ns = 5;
	e.dur_ns = 0;
	ts_trace_push_event(&t, &e);
	e.ts_ns = INT64_C(1) << 62;
	e.dur_ns = 10;
	ts_trace_push_event(&t, &e);
	ts_err_init(&err);
	REQUIRE(ts_dev_walls_of(&t, &w, &n, &err) == 0);
	REQUIRE(n == 1);
	CHECK_I64(w[0].span_ns, 0);
	CHECK_I64(w[0].busy_ns, 0);
	CHECK_I64(w[0].idle_ns, 0);
	CHECK_I64(w[0].kernels, 1);
	free(w);
	tb_release(&t);
}

TEST(nsys_old_schema_and_gpu_name)
{
	/* schema 3.1 shape (capabilities-anchors.md §2c): EXPORT_META_DATA instead
	 * of META_DATA_EXPORT, no greenContextId/graphId columns, SYNCHRONIZATION
	 * with syncType only, NVTX without binaryData, TARGET_INFO_GPU present */
	char path[] = "/tmp/ts-nsys-old-XXXXXX";
	struct ts_nsys x;
	struct ts_err err;
	struct ts_trace t;
	struct ts_rank_prof p;
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		"INSERT INTO StringIds VALUES(1,'volta_sgemm_128x64_nn'),(2,'cudaLaunchKernel_v7000');"
		"CREATE TABLE EXPORT_META_DATA(name TEXT, value TEXT);"
		"INSERT INTO EXPORT_META_DATA VALUES('EXPORT_SCHEMA_VERSION','3.1.2'),"
		"('EXPORT_PRODUCT_VERSION','2023.1.2'),('EXPORT_PARAM_OUTUPT_FILE','x');"
		"CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, cuDevice INTEGER);"
		"INSERT INTO TARGET_INFO_GPU VALUES(0,0,'NVIDIA GeForce RTX 3090','0000:01:00.0',0);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
		" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
		" correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
		" shortName INTEGER NOT NULL, launchType INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1000,3000,0,1,7,5," GP ",1,1,0),"
		"(4000,5000,0,1,7,6," GP ",1,1,0);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
		" eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(500,800,0," GT ",5,2),(900,950,0," GT ",6,2);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INTEGER, end INTEGER, deviceId INTEGER,"
		" contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER,"
		" eventId INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(5000,5100,0,1,7,9," GP ",3,0);"
		"CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
		" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
		" endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);"
		"INSERT INTO NVTX_EVENTS VALUES(400,5200,59,0,0,0,'step'," GT ",NULL,NULL,0),"
		"(4500,NULL,34,0,0,0,'a mark'," GT ",NULL,NULL,0);"
		"CREATE TABLE TARGET_INFO_NVTX_CUDA_STREAM(x INTEGER);";
	size_t kern = 0, sync = 0, marks = 0;

	REQUIRE(make_db(path, sql) == 0);
	ts_err_init(&err);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	CHECK_STR(x.schema, "3.1.2");
	CHECK_STR(x.product, "2023.1.2");
	CHECK(x.caps.gpu_name);
	CHECK(x.caps.kernels && x.caps.sync && x.caps.nvtx && !x.caps.memcpy);
	CHECK_I64(x.joins.joined, 2);
	REQUIRE(x.ranks.n == 1);
	CHECK_I64(x.ranks.v[0].pid, 100);
	ts_trace_init(&t);
	REQUIRE(ts_nsys_read_rank(&x, 0, NULL, &t, NULL, &err) == 0);
	REQUIRE(t.meta.ndevices == 1);
	CHECK_STR(ts_trace_str(&t, t.meta.devices[0].name), "NVIDIA GeForce RTX 3090");
	for (size_t i = 0; i < t.ev.n; i++) {
		kern += t.ev.cat[i] == TS_CAT_KERNEL;
		sync += t.ev.cat[i] == TS_CAT_SYNC && strcmp(ts_trace_str(&t, t.ev.name[i]), "Stream sync") == 0;
		marks += t.ev.ph[i] == 'i' && strcmp(ts_trace_str(&t, t.ev.name[i]), "a mark") == 0;
		if (t.ev.cat[i] == TS_CAT_RUNTIME)
			CHECK_STR(ts_trace_str(&t, t.ev.name[i]), "cudaLaunchKernel");
	}
	CHECK_I64(kern, 2);
	CHECK_I64(sync, 1);
	CHECK_I64(marks, 1);
	/* the profile links both kernels to their launches (same process) */
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	CHECK_I64(p.launch.linked, 2);
	CHECK_STR(p.device, "NVIDIA GeForce RTX 3090");
	ts_rank_prof_release(&p);
	ts_trace_release(&t);
	ts_nsys_close(&x);
	unlink(path);
}

TEST(nsys_copy_bytes_and_api_classes)
{
	DATA_OR_SKIP(h100, "nsys/h100_2gpu_1s.sqlite");
	DATA_OR_SKIP(mfu, "nsys/mfu_2gpu_before.sqlite");
	struct ts_nsys x;
	struct ts_srep r;
	struct ts_err err;
	int64_t rt = 0, drv = 0;
	int found = 0;

	/* §2b: h100 HtoD 50,950,507,584 B in 450 copies over both GPUs */
	ts_nsys_init(&x);
	ts_srep_init(&r, TS_SREP_MEM_SIZE_SUM);
	ts_err_init(&err);
	REQUIRE(ts_nsys_open(&x, h100, &err) == 0);
	REQUIRE(ts_srep_add_nsys(&r, &x, &err) == 0 && ts_srep_finish(&r, &err) == 0);
	for (size_t i = 0; i < r.rows.n; i++)
		if (strcmp(ts_intern_str(&r.names, r.rows.v[i].name), "[CUDA memcpy Host-to-Device]") == 0) {
			CHECK_I64(r.rows.v[i].v.total, INT64_C(50950507584));
			CHECK_I64(r.rows.v[i].v.n, 450);
			found = 1;
		}
	CHECK(found);
	ts_srep_release(&r);
	ts_nsys_close(&x);

	/* §2e: mfu runtime eventClass 0 (runtime) 6392 rows, 1 (driver) 1074 */
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, mfu, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	for (size_t k = 0; k < x.ranks.n; k++) {
		struct ts_trace t;
		ts_trace_init(&t);
		REQUIRE(ts_nsys_read_rank(&x, k, NULL, &t, NULL, &err) == 0);
		for (size_t i = 0; i < t.ev.n; i++) {
			rt += t.ev.cat[i] == TS_CAT_RUNTIME;
			drv += t.ev.cat[i] == TS_CAT_DRIVER;
		}
		ts_trace_release(&t);
	}
	CHECK_I64(rt, 6392);
	CHECK_I64(drv, 1074);
	ts_nsys_close(&x);
}

TEST(nsys_table_without_globalpid)
{
	/* found by fuzz_nsys: a KERNEL table without globalPid put its kernels
	 * into every rank of their device. They belong to process 0 only. */
	char path[] = "/tmp/ts-nsys-nogp-XXXXXX";
	struct ts_nsys x;
	struct ts_err err;
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES(1,'k');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER, shortName INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(10,20,0,1);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER,"
		" globalPid INTEGER, bytes INTEGER);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(30,40,0," GP ",8);";

	REQUIRE(make_db(path, sql) == 0);
	ts_err_init(&err);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	REQUIRE(x.ranks.n == 2);
	for (size_t k = 0; k < 2; k++) {
		struct ts_trace t;
		size_t kern = 0;
		ts_trace_init(&t);
		REQUIRE(ts_nsys_read_rank(&x, k, NULL, &t, NULL, &err) == 0);
		for (size_t i = 0; i < t.ev.n; i++)
			kern += t.ev.cat[i] == TS_CAT_KERNEL;
		CHECK_I64(kern, x.ranks.v[k].kernels);
		CHECK_I64(kern, x.ranks.v[k].global_pid == 0 ? 1 : 0);
		ts_trace_release(&t);
	}
	ts_nsys_close(&x);
	unlink(path);
}

TEST(nsys_mem_size_total_past_int64)
{
	/* found by fuzz_nsys: two copies of 2^62 + 2^62 - 1 and 2^62 bytes sum
	 * past INT64_MAX; the total saturates to 9223372036854775807, and the
	 * JSON printed it through a double (2^63, outside int64: undefined). */
	char path[] = "/tmp/ts-nsys-bigmem-XXXXXX";
	struct ts_nsys x;
	struct ts_srep r;
	struct ts_err err;
	struct ts_sb out;
	const char *sql =
		NSYS_SCHEMA
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(10,20,0,7,1," GP ",9223372036854775807,1,0,0);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(30,40,0,7,2," GP ",4611686018427387904,1,0,0);";

	REQUIRE(make_db(path, sql) == 0);
	ts_err_init(&err);
	ts_sb_init(&out);
	ts_nsys_init(&x);
	ts_srep_init(&r, TS_SREP_MEM_SIZE_SUM);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_srep_add_nsys(&r, &x, &err) == 0 && ts_srep_finish(&r, &err) == 0);
	REQUIRE(r.rows.n == 1);
	CHECK_I64(r.rows.v[0].v.total, INT64_MAX);
	ts_srep_json(&r, NULL, &out);
	CHECK(out.buf && strstr(out.buf, "9223372036854775807") != NULL);   /* the saturated total */
	CHECK(out.buf && strstr(out.buf, "4611686018427387904") != NULL);   /* the min, exact */
	ts_sb_release(&out);
	ts_srep_release(&r);
	ts_nsys_close(&x);
	unlink(path);
}

TEST(nsys_exec_sum_times_past_int64)
{
	/* cuda_kern_exec_sum from a trace: a kernel at 2^62 ns lasting 2^62
	 * (its end overflowed int64) and a launch at 2^62 lasting 2^62 are past
	 * 2^61 ns and left out; the one ordinary pair (launch [0,10), kernel
	 * "good" [20,25)) is the only row */
	struct ts_trace t;
	struct ts_srep r;
	struct ts_err err;
	const int64_t big = INT64_C(1) << 62;
	static const struct { int cat; const char *name; int64_t ts, dur, corr; } e[] = {
		{ TS_CAT_RUNTIME, "cudaLaunchKernel", 0, 10, 1 },
		{ TS_CAT_KERNEL, "good", 20, 5, 1 },
		{ TS_CAT_RUNTIME, "cudaLaunchKernel", 30, 10, 2 },
		{ TS_CAT_KERNEL, "far", -1, -1, 2 },
		{ TS_CAT_RUNTIME, "cudaLaunchKernel", -1, -1, 3 },
		{ TS_CAT_KERNEL, "far2", 100, 5, 3 },
	};
	tb_init(&t);
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		struct ts_trace_event x;
		ts_trace_event_init(&x);
		x.ph = 'X';
		x.cat = (enum ts_cat)e[i].cat;
		x.name = (uint32_t)ts_intern(&t.strings, e[i].name, strlen(e[i].name));
		x.ts_ns = e[i].ts < 0 ? big : e[i].ts;
		x.dur_ns = e[i].dur < 0 ? big : e[i].dur;
		x.pid = e[i].cat == TS_CAT_KERNEL ? 0 : 1;
		x.tid = e[i].cat == TS_CAT_KERNEL ? 7 : 1;
		x.device = 0;
		x.correlation = e[i].corr;
		ts_trace_push_event(&t, &x);
	}
	ts_srep_init(&r, TS_SREP_KERN_EXEC_SUM);
	ts_err_init(&err);
	REQUIRE(ts_srep_add_trace(&r, &t, &err) == 0);
	REQUIRE(ts_srep_finish(&r, &err) == 0);
	CHECK_I64((int64_t)r.rows.n, 1);
	ts_srep_release(&r);
	tb_release(&t);
}

/* Step detection on a synthetic export with extra rows; returns info. */
static void detect_steps(const char *extra, struct ts_nsys_rank_info *info)
{
	char path[] = "/tmp/ts-nsys-det-XXXXXX";
	struct ts_sb sql;
	struct ts_nsys x;
	struct ts_err err;
	struct ts_trace t;

	memset(info, 0, sizeof(*info));
	ts_sb_init(&sql);
	syn_sqlite(&sql);
	ts_sb_adds(&sql, extra);
	REQUIRE(make_db(path, sql.buf) == 0);
	ts_err_init(&err);
	ts_nsys_init(&x);
	REQUIRE(ts_nsys_open(&x, path, &err) == 0);
	REQUIRE(ts_nsys_survey(&x, &err) == 0);
	ts_trace_init(&t);
	CHECK_I64(ts_nsys_read_rank(&x, 0, NULL, &t, info, &err), 0);
	ts_trace_release(&t);
	ts_nsys_close(&x);
	unlink(path);
	ts_sb_release(&sql);
}

TEST(nsys_step_detection_long_ranges)
{
	/* three back-to-back "train" ranges [-2^61, -2^60), [-2^60, 0), [0, 2^61):
	 * their sum 2^62, doubled, overflowed; it covers all of the
	 * first-to-last span (more than half), so they are the steps */
	struct ts_nsys_rank_info info;
	char extra[1024];
	const long long l = 1LL << 61;
	snprintf(extra, sizeof(extra),
		 "INSERT INTO NVTX_EVENTS VALUES(%lld,%lld,59,'train'," GT ",NULL,0);"
		 "INSERT INTO NVTX_EVENTS VALUES(%lld,%lld,59,'train'," GT ",NULL,0);"
		 "INSERT INTO NVTX_EVENTS VALUES(%lld,%lld,59,'train'," GT ",NULL,0);",
		 -l, -l / 2, -l / 2, 0LL, 0LL, l);
	detect_steps(extra, &info);
	CHECK_I64(info.steps_from, TS_NSYS_STEPS_NVTX);
	CHECK_STR(info.step_marker, "train");
}

TEST(nsys_step_detection_sync_outlier)
{
	/* 1 us cudaDeviceSynchronize calls ending at -L + 0, 2, 4 ms and at L,
	 * L = 2^61 - 1000 ns (their starts within 2^61): intervals 2, 2 ms and
	 * 2L - 4 ms, median 2 ms; 4 x the outlier's distance from it (2L - 6 ms)
	 * overflowed; the cadence is not regular: no steps from syncs */
	struct ts_nsys_rank_info info;
	char extra[1024];
	const long long l = (1LL << 61) - 1000, e[4] = { -l, -l + 2000000, -l + 4000000, l };
	int n = snprintf(extra, sizeof(extra), "INSERT INTO StringIds VALUES(9,'cudaDeviceSynchronize_v3020');");
	for (int i = 0; i < 4; i++)
		n += snprintf(extra + n, sizeof(extra) - (size_t)n,
			      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(%lld,%lld,0," GT ",NULL,9,0);",
			      e[i] - 1000, e[i]);
	detect_steps(extra, &info);
	CHECK(info.steps_from != TS_NSYS_STEPS_SYNC);
	/* the same four with a regular last one (-L + 6 ms): steps from syncs */
	n = snprintf(extra, sizeof(extra), "INSERT INTO StringIds VALUES(9,'cudaDeviceSynchronize_v3020');");
	for (int i = 0; i < 4; i++)
		n += snprintf(extra + n, sizeof(extra) - (size_t)n,
			      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(%lld,%lld,0," GT ",NULL,9,0);",
			      (i < 3 ? e[i] : -l + 6000000) - 1000, i < 3 ? e[i] : -l + 6000000);
	detect_steps(extra, &info);
	CHECK_I64(info.steps_from, TS_NSYS_STEPS_SYNC);
}
