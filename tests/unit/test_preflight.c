/* Preflight: the ld.so cache reader on hand-laid images (offsets written
 * out below), the report readers on the shared samples (values from
 * telemetry/EXPECTED.md and the files themselves) and on small reports
 * written here in the tools' layouts, and the rules they feed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/contract.h"
#include "trainscope/preflight.h"

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* New format: 48-byte header, 24-byte entries at 48, strings at 48+n*24,
 * offsets from the file start. */
TEST(ldcache_new_format)
{
	unsigned char b[160];
	struct ts_ldcache c;
	struct ts_err err;

	memset(b, 0, sizeof(b));
	memcpy(b, "glibc-ld.so.cache1.1", 20);
	put32(b + 20, 3);         /* nlibs */
	put32(b + 24, 160 - 120); /* len_strings */
	b[28] = 2;                /* little endian */
	/* strings: "libz.so.1" at 120 (10 bytes), "/x/libz.so.1" at 130 (13), "/y/libz.so.1" at 143 */
	memcpy(b + 120, "libz.so.1\0/x/libz.so.1\0/y/libz.so.1\0", 37);
	/* entry 0: i386-style flags (no x86-64 bit), libz -> /x */
	put32(b + 48, 0x0003); put32(b + 52, 120); put32(b + 56, 130);
	/* entry 1: x86-64 libz -> /y */
	put32(b + 72, 0x0303); put32(b + 76, 120); put32(b + 80, 143);
	/* entry 2: aarch64 */
	put32(b + 96, 0x0a03); put32(b + 100, 120); put32(b + 104, 130);
	ts_err_init(&err);
	REQUIRE(ts_ldcache_parse(&c, b, sizeof(b), "t", &err) == 0);
	CHECK_I64(c.format, 2);
	CHECK_I64(c.entries.n, 3);
	CHECK_STR(c.entries.v[0].value, "/x/libz.so.1");
	const struct ts_ldcache_entry *e = ts_ldcache_find(&c, "libz.so.1");
	REQUIRE(e != NULL);
#if defined(__x86_64__)
	CHECK_STR(e->value, "/y/libz.so.1");
#elif defined(__aarch64__)
	CHECK_STR(e->value, "/x/libz.so.1");
#endif
	CHECK(ts_ldcache_find(&c, "libm.so.6") == NULL);
	ts_ldcache_release(&c);

	put32(b + 56, 500); /* value past the end */
	CHECK_I64(ts_ldcache_parse(&c, b, sizeof(b), "t", &err), TS_EPARSE);
	CHECK_I64(err.offset, 48);
	ts_ldcache_release(&c);
	put32(b + 20, 1000000); /* entries past the end */
	CHECK_I64(ts_ldcache_parse(&c, b, sizeof(b), "t", &err), TS_EPARSE);
	ts_ldcache_release(&c);
	CHECK_I64(ts_ldcache_parse(&c, "hello", 5, "t", &err), TS_EPARSE);
	ts_ldcache_release(&c);
}

/* Old format alone: 16-byte header, 12-byte entries, strings after them
 * with offsets relative to the string table. */
TEST(ldcache_old_format)
{
	unsigned char b[16 + 12 + 26];
	struct ts_ldcache c;
	struct ts_err err;

	memset(b, 0, sizeof(b));
	memcpy(b, "ld.so-1.7.0", 11);
	put32(b + 12, 1);
	put32(b + 16, 0x0303); put32(b + 20, 0); put32(b + 24, 10);
	memcpy(b + 28, "libc.so.6\0/lib/libc.so.6\0", 26);
	ts_err_init(&err);
	REQUIRE(ts_ldcache_parse(&c, b, sizeof(b), "t", &err) == 0);
	CHECK_I64(c.format, 1);
	CHECK_I64(c.entries.n, 1);
	CHECK_STR(c.entries.v[0].key, "libc.so.6");
	CHECK_STR(c.entries.v[0].value, "/lib/libc.so.6");
	ts_ldcache_release(&c);
}

static int has_finding(const struct ts_preflight *pf, const char *id, enum ts_pf_sev sev,
		       const char *needle)
{
	for (size_t i = 0; i < pf->findings.n; i++)
		if (!strcmp(pf->findings.v[i].id, id) && pf->findings.v[i].sev == sev &&
		    strstr(pf->findings.v[i].evidence, needle))
			return 1;
	return 0;
}

static int from(struct ts_preflight *pf, const char *text)
{
	struct ts_err err;

	ts_err_init(&err);
	ts_preflight_init(pf);
	if (ts_preflight_from_mem(pf, text, strlen(text), "report.txt", &err))
		return -1;
	return ts_preflight_judge(pf);
}

/* A recorded preflight whose fact list holds a number and an object among
 * its strings: those are skipped and everything after the list is read
 * (before, the read stopped there and reported success with no devices,
 * no drivers and no schema check); a file cut inside "facts" is an error,
 * not an empty success. */
TEST(preflight_read_odd_fact_values)
{
	static const char good[] =
		"{\"schema\":\"trainscope.preflight/1\",\"vendor\":\"nvidia\",\"facts\":{\"k\":[\"a\",1,"
		"{\"x\":2},\"b\"]},\"devices\":[{\"bdf\":\"0000:01:00.0\",\"name\":\"H100\"}],"
		"\"drivers\":[{\"name\":\"nvidia\",\"version\":\"550.1\"}]}";
	static const char bad_schema[] = "{\"facts\":{\"k\":[1]},\"schema\":\"trainscope.preflight/9\"}";
	static const char cut[] = "{\"schema\":\"trainscope.preflight/1\",\"vendor\":\"nvidia\",\"facts\":{\"k\":";
	struct ts_preflight pf;
	struct ts_err err;
	size_t nk = 0;

	ts_preflight_init(&pf);
	ts_err_init(&err);
	REQUIRE(ts_preflight_read_mem(&pf, good, sizeof(good) - 1, "n.json", &err) == 0);
	CHECK_I64(pf.devices.n, 1);
	CHECK_I64(pf.drivers.n, 1);
	for (size_t i = 0; i < pf.facts.n; i++)
		nk += !strcmp(pf.facts.v[i].key, "k");
	CHECK_I64(nk, 2);
	CHECK_STR(ts_preflight_fact(&pf, "k"), "b");
	ts_preflight_release(&pf);
	ts_preflight_init(&pf);
	CHECK_I64(ts_preflight_read_mem(&pf, bad_schema, sizeof(bad_schema) - 1, "s.json", &err),
		  TS_EPARSE);
	ts_preflight_release(&pf);
	ts_preflight_init(&pf);
	CHECK(ts_preflight_read_mem(&pf, cut, sizeof(cut) - 1, "c.json", &err) != 0);
	ts_preflight_release(&pf);
}

TEST(preflight_from_sglang_check_env)
{
	DATA_OR_SKIP(path, "telemetry/sglang_check_env_musa_S5000_partial.txt");
	struct ts_preflight pf;
	struct ts_err err;

	ts_err_init(&err);
	ts_preflight_init(&pf);
	REQUIRE(ts_preflight_from_file(&pf, path, &err) == 0);
	REQUIRE(ts_preflight_judge(&pf) == 0);
	CHECK_STR(ts_preflight_fact(&pf, "python.version"), "3.10.12");
	CHECK_STR(ts_preflight_fact(&pf, "musa.available"), "true");
	CHECK_STR(ts_preflight_fact(&pf, "toolkit.mcc"), "4.3.4");
	CHECK_STR(ts_preflight_fact(&pf, "toolkit.musa_home"), "/usr/local/musa");
	CHECK_STR(ts_preflight_fact(&pf, "torch.version"), "2.7.1");
	CHECK_STR(ts_preflight_fact(&pf, "pkg.triton.version"), "3.1.0");
	CHECK_I64(pf.devices.n, 8);
	for (size_t i = 0; i < pf.devices.n; i++) {
		CHECK_STR(pf.devices.v[i].name, "MTT S5000");
		CHECK_STR(pf.devices.v[i].cc, "3.1");
	}
	REQUIRE(pf.drivers.n == 1);
	CHECK_STR(pf.drivers.v[0].name, "mtgpu");
	CHECK_STR(pf.drivers.v[0].version, "3.3.3-server");
	CHECK_I64(pf.drivers.v[0].line, 7);
	CHECK_STR(pf.vendor, "mthreads");
	CHECK(ts_preflight_worst(&pf) < TS_PF_ERROR);
	ts_preflight_release(&pf);
}

TEST(preflight_from_gmi_tables)
{
	DATA_OR_SKIP(bad, "telemetry/mthreads-gmi_default_S4000_gmi1.12.2.txt");
	DATA_OR_SKIP(good, "telemetry/mthreads-gmi_default_S4000_gmi2.2.0_healthy_partial.txt");
	struct ts_preflight pf;
	struct ts_err err;

	ts_err_init(&err);
	ts_preflight_init(&pf);
	REQUIRE(ts_preflight_from_file(&pf, bad, &err) == 0);
	REQUIRE(ts_preflight_judge(&pf) == 0);
	REQUIRE(pf.devices.n == 1);
	CHECK_I64(pf.devices.v[0].mem_used_mib, 44302);
	CHECK_I64(pf.devices.v[0].mem_total_mib, 32768);
	CHECK_I64(pf.devices.v[0].width_cur, 16);
	CHECK_I64(pf.devices.v[0].width_max, 16);
	CHECK_STR(pf.devices.v[0].bdf, "00000000:08:00.0");
	CHECK_STR(pf.drivers.v[0].version, "1.2.0");
	CHECK(has_finding(&pf, "musa-iommu-off", TS_PF_ERROR, "32768 MiB < 49152 MiB"));
	CHECK(has_finding(&pf, "musa-iommu-off", TS_PF_ERROR, ":9:"));
	CHECK_I64(ts_preflight_worst(&pf), TS_PF_ERROR);
	ts_preflight_release(&pf);

	ts_preflight_init(&pf);
	REQUIRE(ts_preflight_from_file(&pf, good, &err) == 0);
	REQUIRE(ts_preflight_judge(&pf) == 0);
	CHECK_I64(pf.devices.n, 3); /* the third block is cut after its first line */
	CHECK_I64(pf.devices.v[2].mem_total_mib, 49152);
	CHECK_STR(pf.drivers.v[0].version, "3.0.0");
	CHECK_I64(pf.findings.n, 0);
	ts_preflight_release(&pf);
}

TEST(preflight_from_gmi_json)
{
	DATA_OR_SKIP(path, "telemetry/mthreads-gmi_query_json_S5000_drv3.3.5_excerpt.json");
	struct ts_preflight pf;
	struct ts_err err;

	ts_err_init(&err);
	ts_preflight_init(&pf);
	REQUIRE(ts_preflight_from_file(&pf, path, &err) == 0);
	REQUIRE(ts_preflight_judge(&pf) == 0);
	REQUIRE(pf.devices.n == 2);
	CHECK_STR(pf.drivers.v[0].version, "3.3.5-server");
	CHECK_STR(pf.devices.v[0].name, "MTT S5000");
	CHECK_STR(pf.devices.v[0].bdf, "00000000:2a:00.0");
	CHECK_I64(pf.devices.v[0].vendor_id, 0x1ed5);
	CHECK_I64(pf.devices.v[0].device_id, 0x0400);
	CHECK_I64(pf.devices.v[0].mem_total_mib, 81920);
	CHECK_I64(pf.devices.v[1].mem_total_mib, 81920);
	CHECK(pf.devices.v[1].bdf == NULL); /* GPU 1 has no PCI block */
	CHECK_I64(pf.findings.n, 0);
	ts_preflight_release(&pf);
}

/* nvidia-smi -q layout: "Key : value", sections by indentation. */
TEST(preflight_from_nvidia_smi_q)
{
	static const char q[] =
		"==============NVSMI LOG==============\n"
		"\n"
		"Driver Version                            : 550.54.15\n"
		"CUDA Version                              : 12.4\n"
		"\n"
		"Attached GPUs                             : 1\n"
		"GPU 00000000:18:00.0\n"
		"    Product Name                          : NVIDIA H100 80GB HBM3\n"
		"    PCI\n"
		"        GPU Link Info\n"
		"            PCIe Generation\n"
		"                Max                       : 5\n"
		"                Current                   : 3\n"
		"            Link Width\n"
		"                Max                       : 16x\n"
		"                Current                   : 8x\n"
		"    FB Memory Usage\n"
		"        Total                             : 81559 MiB\n"
		"        Used                              : 1 MiB\n";
	struct ts_preflight pf;

	REQUIRE(from(&pf, q) == 0);
	REQUIRE(pf.devices.n == 1);
	CHECK_STR(pf.devices.v[0].name, "NVIDIA H100 80GB HBM3");
	CHECK_STR(pf.devices.v[0].bdf, "00000000:18:00.0");
	CHECK_NEAR(pf.devices.v[0].speed_max_gts, 32.0, 0);
	CHECK_NEAR(pf.devices.v[0].speed_cur_gts, 8.0, 0);
	CHECK_I64(pf.devices.v[0].width_cur, 8);
	CHECK_I64(pf.devices.v[0].mem_total_mib, 81559);
	CHECK_STR(pf.drivers.v[0].version, "550.54.15");
	CHECK_STR(ts_preflight_fact(&pf, "cuda.driver_api"), "12.4");
	CHECK(has_finding(&pf, "pcie-link-degraded", TS_PF_WARNING, "x8 of x16"));
	CHECK(has_finding(&pf, "pcie-link-degraded", TS_PF_INFO, "8.0 GT/s of 32.0 GT/s"));
	CHECK_STR(pf.vendor, "nvidia");
	ts_preflight_release(&pf);
}

/* collect_env: torch built for CUDA 12.1 on a 525.60.13 driver (the CUDA
 * 12.0 GA driver): same major, so a warning, not an error. */
TEST(preflight_from_collect_env)
{
	static const char ce[] =
		"PyTorch version: 2.3.0+cu121\n"
		"Is debug build: False\n"
		"CUDA used to build PyTorch: 12.1\n"
		"Python version: 3.10.14 (main, Mar 21 2024, 16:24:04) [GCC 11.2.0] (64-bit runtime)\n"
		"Is CUDA available: True\n"
		"CUDA runtime version: 12.1.105\n"
		"GPU models and configuration: \n"
		"GPU 0: NVIDIA A100-SXM4-80GB\n"
		"GPU 1: NVIDIA A100-SXM4-80GB\n"
		"\n"
		"Nvidia driver version: 525.60.13\n"
		"cuDNN version: Probably one of the following:\n"
		"/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2\n"
		"/usr/local/cuda/lib64/libcudnn.so.9.1.0\n"
		"\n"
		"[pip3] nvidia-nccl-cu12==2.20.5\n"
		"[pip3] torch==2.3.0\n";
	struct ts_preflight pf;

	REQUIRE(from(&pf, ce) == 0);
	CHECK_STR(ts_preflight_fact(&pf, "torch.version"), "2.3.0+cu121");
	CHECK_STR(ts_preflight_fact(&pf, "torch.cuda"), "12.1");
	CHECK_STR(ts_preflight_fact(&pf, "python.version"), "3.10.14");
	CHECK_STR(ts_preflight_fact(&pf, "pkg.nvidia-nccl-cu12.version"), "2.20.5");
	CHECK_I64(pf.devices.n, 2);
	CHECK_STR(pf.devices.v[1].name, "NVIDIA A100-SXM4-80GB");
	REQUIRE(pf.libs.n == 1);
	CHECK_I64(pf.libs.v[0].copies.n, 2);
	CHECK_STR(pf.libs.v[0].copies.v[1].version, "9.1.0");
	CHECK(has_finding(&pf, "cuda-runtime-newer-than-driver", TS_PF_WARNING, "CUDA 12.0"));
	CHECK(ts_preflight_worst(&pf) < TS_PF_ERROR);
	ts_preflight_release(&pf);
}

TEST(preflight_from_error_text)
{
	struct ts_preflight pf;

	REQUIRE(from(&pf, "Failed to initialize NVML: Driver/library version mismatch\n"
			  "NVML library version: 570.124\n") == 0);
	CHECK(has_finding(&pf, "nvml-driver-mismatch", TS_PF_ERROR, "570.124"));
	CHECK(has_finding(&pf, "nvml-driver-mismatch", TS_PF_ERROR, "report.txt:1:"));
	ts_preflight_release(&pf);

	REQUIRE(from(&pf, "ImportError: libsrv_um_MUSA.so: cannot open shared object file\n") == 0);
	CHECK(has_finding(&pf, "musa-toolkit-missing-in-container", TS_PF_ERROR, "libsrv_um_MUSA.so"));
	ts_preflight_release(&pf);

	struct ts_err err;
	ts_err_init(&err);
	ts_preflight_init(&pf);
	CHECK_I64(ts_preflight_from_mem(&pf, "hello\n", 6, "x.txt", &err), TS_EPARSE);
	CHECK_STR(err.path, "x.txt");
	ts_preflight_release(&pf);
}

/* The python3 probe's answer: one flat JSON object on the last line. */
static const char py_answer[] =
	"some import noise\n"
	"{\"python.maps\": [\"/opt/x/libnccl.so.2\", \"/opt/x/libmudnn.so.3\"], \"python.version\": \"3.11.7\", "
	"\"torch.version\": \"2.7.1\", \"torch_musa.version\": \"2.7.1\", \"mudnn.allow_tf32\": true, "
	"\"torch.error\": \"a \\\"quoted\\\" text\"}\n";

static int fake_python(void *ctx, const char *const argv[], struct ts_sb *out)
{
	(void)ctx;
	if (strcmp(argv[0], "python3") != 0)
		return -1;
	ts_sb_adds(out, py_answer);
	return 0;
}

TEST(preflight_python_answer)
{
	struct ts_preflight pf;
	struct ts_probe probe = { fake_python, NULL, NULL, "/nonexistent-preflight-root" };
	struct ts_pf_opts o = { 0, 0, 1 };
	struct ts_err err;

	ts_err_init(&err);
	ts_preflight_init(&pf);
	REQUIRE(ts_preflight_probe(&pf, &probe, &o, &err) == 0);
	REQUIRE(ts_preflight_judge(&pf) == 0);
	CHECK_STR(ts_preflight_fact(&pf, "python.version"), "3.11.7");
	CHECK_STR(ts_preflight_fact(&pf, "torch.version"), "2.7.1");
	CHECK_STR(ts_preflight_fact(&pf, "torch.error"), "a \"quoted\" text");
	const char *nccl = NULL;
	for (size_t i = 0; i < pf.libs.n; i++)
		if (!strcmp(pf.libs.v[i].name, "nccl"))
			nccl = pf.libs.v[i].torch_path;
	CHECK_STR(nccl, "/opt/x/libnccl.so.2");
	CHECK_STR(pf.vendor, "none");
	CHECK_I64(pf.devices.n, 0);
	CHECK(has_finding(&pf, "tf32-default-differs", TS_PF_WARNING, "allow_tf32 = true"));
	ts_preflight_release(&pf);
}

/* contract capture takes NCCL's version from preflight's probe: the copy
 * the loader picks (libnccl.so.2 -> 2.18.1 in LD_LIBRARY_PATH) wins over a
 * higher copy elsewhere; MetaX's libmccl under /opt/maca never counts. */
static void touch(const char *root, const char *dir, const char *name, const char *link)
{
	char p[512], cmd[700];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s'", root, dir);
	if (system(cmd) != 0)
		return;
	snprintf(p, sizeof(p), "%s%s/%s", root, dir, name);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
	if (link) {
		snprintf(p, sizeof(p), "%s%s/%s", root, dir, link);
		if (symlink(name, p) != 0)
			return;
	}
}

TEST(preflight_contract_uses_loader_pick)
{
	char root[128], cmd[200];
	char *envp[] = { "LD_LIBRARY_PATH=/opt/nccl/lib", NULL };
	struct ts_probe p = { NULL, NULL, envp, root };
	struct ts_contract c;
	struct ts_err err;

	snprintf(root, sizeof(root), "/tmp/ts-pf-contract-%ld", (long)getpid());
	touch(root, "/opt/nccl/lib", "libnccl.so.2.18.1", "libnccl.so.2");
	touch(root, "/usr/lib/x86_64-linux-gnu", "libnccl.so.2.21.5", NULL);
	touch(root, "/opt/maca/lib", "libmccl.so.2.9.0", "libmccl.so");
	ts_contract_init(&c);
	ts_err_init(&err);
	REQUIRE(ts_contract_capture_env(&c, &p, &err) == 0);
	CHECK_STR(ts_contract_get(&c, "environment.nccl.lib", NULL), "2.18.1 (/opt/nccl/lib)");
	CHECK_STR(ts_contract_get(&c, "environment.mccl.lib", NULL), "absent");
	ts_contract_release(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return;
}

TEST(preflight_cuda_minor_out_of_range)
{
	/* CUDA 12.-99999999999999999999: strtol gives LONG_MIN, and minor x 10
	 * overflowed; a minor below 0 is taken as 0: runtime CUDA 12.0 against
	 * driver 525.60.13 (CUDA 12.0) is no finding */
	struct ts_preflight pf;

	REQUIRE(from(&pf, "PyTorch version: 2.3.0+cu121\n"
			  "CUDA used to build PyTorch: 12.-99999999999999999999\n"
			  "Nvidia driver version: 525.60.13\n") == 0);
	CHECK(!has_finding(&pf, "cuda-runtime-newer-than-driver", TS_PF_WARNING, "CUDA"));
	CHECK(!has_finding(&pf, "cuda-runtime-newer-than-driver", TS_PF_ERROR, "CUDA"));
	ts_preflight_release(&pf);
}
