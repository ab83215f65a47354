/*
 * tele_sample.c - trainscope's own sampler over NVML or MTML.
 *
 * Vendor libraries come and go between driver versions, so nothing is
 * linked: each library is dlopen'ed and each symbol looked up alone. A
 * symbol that is missing makes its fields unsupported for every GPU and the
 * reason is recorded ("nvml: nvmlDeviceGetTotalEnergyConsumption missing");
 * a call that answers NOT_SUPPORTED does the same for that GPU. The
 * sampling thread runs on a fixed monotonic schedule and appends each round
 * to the capture and, line by line, to the telemetry JSONL.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trainscope/jsonw.h"
#include "trainscope/telemetry.h"

#define MAX_GPUS 64

/* ---------------------------------------------------------------- NVML */

typedef int (*nv_void_fn)(void);
typedef int (*nv_u_fn)(void *, unsigned *);
typedef int (*nv_ull_fn)(void *, unsigned long long *);
typedef int (*nv_clock_fn)(void *, int, unsigned *);
struct nv_util { unsigned gpu, memory; };
struct nv_mem { unsigned long long total, free, used; };
struct nv_temp_v { unsigned version; int sensor; int temperature; };

struct nvml {
	void *lib;
	nv_void_fn shutdown;
	int (*count)(unsigned *);
	int (*handle)(unsigned, void **);
	int (*name)(void *, char *, unsigned);
	int (*util)(void *, struct nv_util *);
	int (*mem)(void *, struct nv_mem *);
	nv_u_fn power, limit, fan, pcie_gen, pcie_gen_max, pcie_w, pcie_w_max;
	nv_ull_fn energy, reasons;
	nv_clock_fn clock, max_clock;
	int (*temp_v)(void *, struct nv_temp_v *);
	int (*temp)(void *, int, unsigned *);
	int (*uuid)(void *, char *, unsigned);
	int (*pci)(void *, void *);    /* nvmlDeviceGetPciInfo{,_v2,_v3} */
};

/* ---------------------------------------------------------------- MTML */

struct mtml {
	void *lib;
	void *h;                       /* MtmlLibrary* */
	void *sys;                     /* MtmlSystem* */
	int (*shutdown)(void *);
	int (*free_sys)(void *);
	int (*free_dev)(void *);
	int (*free_gpu)(void *);
	int (*free_mem)(void *);
	int (*name)(void *, char *, unsigned);
	int (*power)(void *, unsigned *);
	int (*util)(void *, unsigned *);
	int (*temp)(void *, int *);
	int (*clock)(void *, unsigned *);
	int (*max_clock)(void *, unsigned *);
	int (*mem_total)(void *, unsigned long long *);
	int (*mem_used)(void *, unsigned long long *);
	int (*mem_util)(void *, unsigned *);
	int (*mem_clock)(void *, unsigned *);
	int (*uuid)(void *, char *, unsigned);
	int (*pci)(void *, void *);    /* mtmlDeviceGetPciInfo */
	void *dev[MAX_GPUS], *gpu[MAX_GPUS], *mem[MAX_GPUS];
};

struct ts_sampler {
	int kind;                      /* 1 NVML, 2 MTML, 3 nvidia-smi polling */
	pid_t poll_pid;                /* the polling nvidia-smi */
	char poll_path[256];           /* its output file */
	struct nvml nv;
	struct mtml mt;
	void *nvdev[MAX_GPUS];
	unsigned ngpus;
	struct ts_telemetry *t;
	FILE *out;
	int64_t interval_ns;
	pthread_t thr;
	int running;
	volatile int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t tick;
	double call_ns_sum;
	size_t calls;
	int64_t wall0, cpu_ns;
	int write_failed;
	int sync_init;
	uint64_t declared[MAX_GPUS];  /* unsupported fields the header lists */
};

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sym(void *lib, const char *name)
{
	return dlsym(lib, name);
}

/* First of two names (new, deprecated) that the library has. */
static void *sym2(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p ? p : (b ? dlsym(lib, b) : NULL);
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static void mark_unsupported(struct ts_telemetry *t, int f, const char *why)
{
	for (size_t g = 0; g < t->gpus.n; g++)
		if (!t->gpus.v[g].unsupported_why[f])
			t->gpus.v[g].unsupported_why[f] = why;
}

/*
 * The identity of GPU g as the tools print it, so that a capture of this
 * sampler and one of nvidia-smi or mthreads-gmi match (ts_tele_match):
 * the uuid as the library answers it, and the PCI bus id. NVML's
 * nvmlPciInfo_t has moved its bus-id string between versions (16 bytes
 * in v1, a 16-byte legacy copy then 32 bytes from v2), but domain, bus and
 * device sit at bytes 16, 20 and 24 in every version: the id is written
 * from them as nvidia-smi prints it ("00000000:1B:00.0"; NVML reports
 * function 0). MTML's MtmlPciInfo starts with its sbdf string
 * ("0000:3b:00.0"). A call that fails leaves the field NULL.
 */
static void set_identity(struct ts_sampler *s, int g, int (*uuid)(void *, char *, unsigned),
			 int (*pci)(void *, void *), void *dev, int nvml)
{
	struct ts_tele_gpu *gp = &s->t->gpus.v[g];
	char buf[128];
	union { unsigned char b[256]; unsigned u[64]; } info;

	memset(buf, 0, sizeof(buf));
	if (uuid && uuid(dev, buf, sizeof(buf) - 1) == 0 && buf[0])
		gp->uuid = ts_arena_strndup(&s->t->arena, buf, strnlen(buf, sizeof(buf)));
	memset(&info, 0, sizeof(info));
	if (!pci || pci(dev, &info) != 0)
		return;
	if (nvml)
		snprintf(buf, sizeof(buf), "%08X:%02X:%02X.0", info.u[4], info.u[5] & 0xff,
			 info.u[6] & 0x1f);
	else
		snprintf(buf, sizeof(buf), "%.31s", (const char *)info.b);
	if (buf[0])
		gp->bus_id = ts_arena_strndup(&s->t->arena, buf, strlen(buf));
}

static int open_nvml(struct ts_sampler *s, char *tried, size_t cap)
{
	const char *so = env_or("TS_SAMPLER_LIB_NVML", "libnvidia-ml.so.1");
	struct nvml *n = &s->nv;
	void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(tried + strlen(tried), cap - strlen(tried), "%s: %s; ", so, dlerror());
		return -1;
	}
	nv_void_fn init = (nv_void_fn)sym2(lib, "nvmlInit_v2", "nvmlInit");
	n->shutdown = (nv_void_fn)sym(lib, "nvmlShutdown");
	*(void **)&n->count = sym2(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&n->handle = sym2(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	if (!init || !n->count || !n->handle || init() != 0) {
		snprintf(tried + strlen(tried), cap - strlen(tried),
			 "%s: loaded but nvmlInit or device enumeration failed; ", so);
		dlclose(lib);
		return -1;
	}
	n->lib = lib;
	*(void **)&n->name = sym(lib, "nvmlDeviceGetName");
	*(void **)&n->util = sym(lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&n->mem = sym(lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&n->power = sym(lib, "nvmlDeviceGetPowerUsage");
	*(void **)&n->limit = sym2(lib, "nvmlDeviceGetEnforcedPowerLimit",
				    "nvmlDeviceGetPowerManagementLimit");
	*(void **)&n->fan = sym(lib, "nvmlDeviceGetFanSpeed");
	*(void **)&n->pcie_gen = sym(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
	*(void **)&n->pcie_gen_max = sym(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
	*(void **)&n->pcie_w = sym(lib, "nvmlDeviceGetCurrPcieLinkWidth");
	*(void **)&n->pcie_w_max = sym(lib, "nvmlDeviceGetMaxPcieLinkWidth");
	*(void **)&n->energy = sym(lib, "nvmlDeviceGetTotalEnergyConsumption");
	*(void **)&n->reasons = sym2(lib, "nvmlDeviceGetCurrentClocksEventReasons",
				      "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&n->clock = sym(lib, "nvmlDeviceGetClockInfo");
	*(void **)&n->max_clock = sym(lib, "nvmlDeviceGetMaxClockInfo");
	*(void **)&n->temp_v = sym(lib, "nvmlDeviceGetTemperatureV");
	*(void **)&n->temp = sym(lib, "nvmlDeviceGetTemperature");
	*(void **)&n->uuid = sym(lib, "nvmlDeviceGetUUID");
	*(void **)&n->pci = sym2(lib, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
	if (!n->pci)
		*(void **)&n->pci = sym(lib, "nvmlDeviceGetPciInfo");
	unsigned cnt = 0;
	if (n->count(&cnt) != 0)
		cnt = 0;
	if (cnt > MAX_GPUS)
		cnt = MAX_GPUS;
	for (unsigned i = 0; i < cnt; i++) {
		char id[16], name[96] = "";
		if (n->handle(i, &s->nvdev[i]) != 0)
			break;
		if (n->name)
			n->name(s->nvdev[i], name, sizeof(name));
		snprintf(id, sizeof(id), "%u", i);
		int g = ts_tele_add_gpu(s->t, id, name[0] ? name : NULL);
		if (g < 0)
			return -1;
		set_identity(s, g, n->uuid, n->pci, s->nvdev[i], 1);
		s->ngpus++;
	}
	char drv[80] = "";
	int (*dv)(char *, unsigned) = NULL;
	*(void **)&dv = sym(lib, "nvmlSystemGetDriverVersion");
	if (dv && dv(drv, sizeof(drv)) == 0)
		s->t->driver_version = ts_arena_strndup(&s->t->arena, drv, strlen(drv));
	s->t->source = "nvml";
	s->t->tool_version = "NVML";
	static const struct { size_t off; int f[3]; const char *why; } need[] = {
		{ offsetof(struct nvml, util), { TS_TF_UTIL_PCT, TS_TF_MEM_UTIL_PCT, -1 },
		  "nvml: nvmlDeviceGetUtilizationRates missing" },
		{ offsetof(struct nvml, mem), { TS_TF_MEM_USED_MIB, TS_TF_MEM_TOTAL_MIB, -1 },
		  "nvml: nvmlDeviceGetMemoryInfo missing" },
		{ offsetof(struct nvml, power), { TS_TF_POWER_W, -1, -1 },
		  "nvml: nvmlDeviceGetPowerUsage missing" },
		{ offsetof(struct nvml, limit), { TS_TF_POWER_LIMIT_W, -1, -1 },
		  "nvml: nvmlDeviceGetEnforcedPowerLimit missing" },
		{ offsetof(struct nvml, energy), { TS_TF_ENERGY_J, -1, -1 },
		  "nvml: nvmlDeviceGetTotalEnergyConsumption missing" },
		{ offsetof(struct nvml, reasons), { TS_TF_EVENT_REASONS, -1, -1 },
		  "nvml: nvmlDeviceGetCurrentClocksEventReasons missing" },
		{ offsetof(struct nvml, clock), { TS_TF_SM_CLOCK_MHZ, TS_TF_MEM_CLOCK_MHZ, -1 },
		  "nvml: nvmlDeviceGetClockInfo missing" },
		{ offsetof(struct nvml, max_clock), { TS_TF_SM_CLOCK_MAX_MHZ, -1, -1 },
		  "nvml: nvmlDeviceGetMaxClockInfo missing" },
		{ offsetof(struct nvml, fan), { TS_TF_FAN_PCT, -1, -1 },
		  "nvml: nvmlDeviceGetFanSpeed missing" },
		{ offsetof(struct nvml, pcie_w), { TS_TF_PCIE_WIDTH, TS_TF_PCIE_WIDTH_MAX, -1 },
		  "nvml: nvmlDeviceGetCurrPcieLinkWidth missing" },
		{ offsetof(struct nvml, pcie_gen), { TS_TF_PCIE_GEN, TS_TF_PCIE_GEN_MAX, -1 },
		  "nvml: nvmlDeviceGetCurrPcieLinkGeneration missing" },
	};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++)
		if (!*(void **)((char *)n + need[k].off))
			for (int j = 0; j < 3 && need[k].f[j] >= 0; j++)
				mark_unsupported(s->t, need[k].f[j], need[k].why);
	if (!n->temp_v && !n->temp)
		mark_unsupported(s->t, TS_TF_TEMP_C, "nvml: nvmlDeviceGetTemperature missing");
	s->kind = 1;
	return 0;
}

static int open_mtml(struct ts_sampler *s, char *tried, size_t cap)
{
	const char *so = env_or("TS_SAMPLER_LIB_MTML", "libmtml.so");
	struct mtml *m = &s->mt;
	void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(tried + strlen(tried), cap - strlen(tried), "%s: %s; ", so, dlerror());
		return -1;
	}
	int (*init)(void **) = NULL, (*count)(void *, unsigned *) = NULL;
	int (*bydx)(void *, unsigned, void **) = NULL, (*initsys)(void *, void **) = NULL;
	int (*initgpu)(void *, void **) = NULL, (*initmem)(void *, void **) = NULL;
	*(void **)&init = sym(lib, "mtmlLibraryInit");
	*(void **)&count = sym(lib, "mtmlLibraryCountDevice");
	*(void **)&bydx = sym(lib, "mtmlLibraryInitDeviceByIndex");
	if (!init || !count || !bydx || init(&m->h) != 0 || !m->h) {
		snprintf(tried + strlen(tried), cap - strlen(tried),
			 "%s: loaded but mtmlLibraryInit or device enumeration failed; ", so);
		dlclose(lib);
		return -1;
	}
	m->lib = lib;
	*(void **)&m->shutdown = sym(lib, "mtmlLibraryShutDown");
	*(void **)&initsys = sym(lib, "mtmlLibraryInitSystem");
	*(void **)&m->free_sys = sym(lib, "mtmlLibraryFreeSystem");
	*(void **)&m->free_dev = sym(lib, "mtmlLibraryFreeDevice");
	*(void **)&initgpu = sym(lib, "mtmlDeviceInitGpu");
	*(void **)&m->free_gpu = sym(lib, "mtmlDeviceFreeGpu");
	*(void **)&initmem = sym(lib, "mtmlDeviceInitMemory");
	*(void **)&m->free_mem = sym(lib, "mtmlDeviceFreeMemory");
	*(void **)&m->name = sym(lib, "mtmlDeviceGetName");
	*(void **)&m->power = sym(lib, "mtmlDeviceGetPowerUsage");
	*(void **)&m->util = sym(lib, "mtmlGpuGetUtilization");
	*(void **)&m->temp = sym(lib, "mtmlGpuGetTemperature");
	*(void **)&m->clock = sym(lib, "mtmlGpuGetClock");
	*(void **)&m->max_clock = sym(lib, "mtmlGpuGetMaxClock");
	*(void **)&m->mem_total = sym(lib, "mtmlMemoryGetTotal");
	*(void **)&m->mem_used = sym(lib, "mtmlMemoryGetUsed");
	*(void **)&m->mem_util = sym(lib, "mtmlMemoryGetUtilization");
	*(void **)&m->mem_clock = sym(lib, "mtmlMemoryGetClock");
	*(void **)&m->uuid = sym(lib, "mtmlDeviceGetUUID");
	*(void **)&m->pci = sym(lib, "mtmlDeviceGetPciInfo");
	char ver[64] = "", drv[80] = "", buf[96];
	int (*libver)(void *, char *, unsigned) = NULL, (*sysdrv)(void *, char *, unsigned) = NULL;
	*(void **)&libver = sym(lib, "mtmlLibraryGetVersion");
	*(void **)&sysdrv = sym(lib, "mtmlSystemGetDriverVersion");
	if (libver && libver(m->h, ver, sizeof(ver)) == 0) {
		snprintf(buf, sizeof(buf), "MTML %s", ver);
		s->t->tool_version = ts_arena_strndup(&s->t->arena, buf, strlen(buf));
	} else
		s->t->tool_version = "MTML";
	if (initsys && initsys(m->h, &m->sys) == 0 && m->sys && sysdrv &&
	    sysdrv(m->sys, drv, sizeof(drv)) == 0)
		s->t->driver_version = ts_arena_strndup(&s->t->arena, drv, strlen(drv));
	unsigned cnt = 0;
	if (count(m->h, &cnt) != 0)
		cnt = 0;
	if (cnt > MAX_GPUS)
		cnt = MAX_GPUS;
	for (unsigned i = 0; i < cnt; i++) {
		char id[16], name[96] = "";
		if (bydx(m->h, i, &m->dev[i]) != 0 || !m->dev[i])
			break;
		if (initgpu)
			initgpu(m->dev[i], &m->gpu[i]);
		if (initmem)
			initmem(m->dev[i], &m->mem[i]);
		if (m->name)
			m->name(m->dev[i], name, sizeof(name));
		snprintf(id, sizeof(id), "%u", i);
		int g = ts_tele_add_gpu(s->t, id, name[0] ? name : NULL);
		if (g < 0)
			return -1;
		set_identity(s, g, m->uuid, m->pci, m->dev[i], 0);
		s->ngpus++;
	}
	s->t->source = "mtml";
	/* what MTML does not have at all (musa.md 1.7), never reported as 0 */
	const char *gap = s->t->tool_version;
	mark_unsupported(s->t, TS_TF_POWER_LIMIT_W, gap);
	mark_unsupported(s->t, TS_TF_EVENT_REASONS, gap);
	mark_unsupported(s->t, TS_TF_PCIE_RX_MBPS, gap);
	mark_unsupported(s->t, TS_TF_PCIE_TX_MBPS, gap);
	mark_unsupported(s->t, TS_TF_SM_ACTIVE, gap);
	mark_unsupported(s->t, TS_TF_TENSOR_ACTIVE, gap);
	if (!m->power)
		mark_unsupported(s->t, TS_TF_POWER_W, "mtml: mtmlDeviceGetPowerUsage missing");
	if (!m->util)
		mark_unsupported(s->t, TS_TF_UTIL_PCT, "mtml: mtmlGpuGetUtilization missing");
	if (!m->temp)
		mark_unsupported(s->t, TS_TF_TEMP_C, "mtml: mtmlGpuGetTemperature missing");
	if (!m->clock)
		mark_unsupported(s->t, TS_TF_SM_CLOCK_MHZ, "mtml: mtmlGpuGetClock missing");
	if (!m->max_clock)
		mark_unsupported(s->t, TS_TF_SM_CLOCK_MAX_MHZ, "mtml: mtmlGpuGetMaxClock missing");
	if (!m->mem_used)
		mark_unsupported(s->t, TS_TF_MEM_USED_MIB, "mtml: mtmlMemoryGetUsed missing");
	if (!m->mem_total)
		mark_unsupported(s->t, TS_TF_MEM_TOTAL_MIB, "mtml: mtmlMemoryGetTotal missing");
	if (!m->mem_util)
		mark_unsupported(s->t, TS_TF_MEM_UTIL_PCT, "mtml: mtmlMemoryGetUtilization missing");
	if (!m->mem_clock)
		mark_unsupported(s->t, TS_TF_MEM_CLOCK_MHZ, "mtml: mtmlMemoryGetClock missing");
	s->kind = 2;
	return 0;
}

/* Store a call's result: a value, or unsupported for this GPU. */
static void store(struct ts_sampler *s, struct ts_tele_sample *x, int f, int rc, double v)
{
	if (s->t->gpus.v[x->gpu].unsupported_why[f]) {
		x->st[f] = TS_TV_UNSUPPORTED;
		return;
	}
	if (rc == 0) {
		x->st[f] = TS_TV_VALUE;
		x->v[f] = v;
	} else if (rc == 3) { /* NVML_ERROR_NOT_SUPPORTED / MTML_ERROR_NOT_SUPPORTED */
		x->st[f] = TS_TV_UNSUPPORTED;
		s->t->gpus.v[x->gpu].unsupported_why[f] = s->kind == 1 ? "nvml: not supported" :
									  "mtml: not supported";
	} else {
		x->st[f] = TS_TV_MISSING;
	}
}

static void sample_nvml(struct ts_sampler *s, struct ts_tele_sample *x, unsigned i)
{
	struct nvml *n = &s->nv;
	void *d = s->nvdev[i];
	unsigned u;
	unsigned long long ull;
	int rc;

	if (n->util) {
		struct nv_util ut = { 0, 0 };
		rc = n->util(d, &ut);
		store(s, x, TS_TF_UTIL_PCT, rc, ut.gpu);
		store(s, x, TS_TF_MEM_UTIL_PCT, rc, ut.memory);
	}
	if (n->mem) {
		struct nv_mem m = { 0, 0, 0 };
		rc = n->mem(d, &m);
		store(s, x, TS_TF_MEM_USED_MIB, rc, (double)m.used / 1048576.0);
		store(s, x, TS_TF_MEM_TOTAL_MIB, rc, (double)m.total / 1048576.0);
	}
	if (n->power) {
		rc = n->power(d, &u);
		store(s, x, TS_TF_POWER_W, rc, u / 1000.0);
	}
	if (n->limit) {
		rc = n->limit(d, &u);
		store(s, x, TS_TF_POWER_LIMIT_W, rc, u / 1000.0);
	}
	if (n->energy) {
		rc = n->energy(d, &ull);
		store(s, x, TS_TF_ENERGY_J, rc, (double)ull / 1000.0);
	}
	if (n->reasons) {
		rc = n->reasons(d, &ull);
		store(s, x, TS_TF_EVENT_REASONS, rc, (double)ull);
	}
	if (n->clock) {
		rc = n->clock(d, 1, &u);
		store(s, x, TS_TF_SM_CLOCK_MHZ, rc, u);
		rc = n->clock(d, 2, &u);
		store(s, x, TS_TF_MEM_CLOCK_MHZ, rc, u);
	}
	if (n->max_clock) {
		rc = n->max_clock(d, 1, &u);
		store(s, x, TS_TF_SM_CLOCK_MAX_MHZ, rc, u);
	}
	if (n->temp_v) {
		struct nv_temp_v tv = { (unsigned)sizeof(struct nv_temp_v) | (1u << 24), 0, 0 };
		rc = n->temp_v(d, &tv);
		if (rc == 0 || !n->temp) {
			store(s, x, TS_TF_TEMP_C, rc, tv.temperature);
		} else {
			rc = n->temp(d, 0, &u);
			store(s, x, TS_TF_TEMP_C, rc, u);
		}
	} else if (n->temp) {
		rc = n->temp(d, 0, &u);
		store(s, x, TS_TF_TEMP_C, rc, u);
	}
	if (n->fan) {
		rc = n->fan(d, &u);
		store(s, x, TS_TF_FAN_PCT, rc, u);
	}
	if (n->pcie_w) {
		rc = n->pcie_w(d, &u);
		store(s, x, TS_TF_PCIE_WIDTH, rc, u);
	}
	if (n->pcie_w_max) {
		rc = n->pcie_w_max(d, &u);
		store(s, x, TS_TF_PCIE_WIDTH_MAX, rc, u);
	}
	if (n->pcie_gen) {
		rc = n->pcie_gen(d, &u);
		store(s, x, TS_TF_PCIE_GEN, rc, u);
	}
	if (n->pcie_gen_max) {
		rc = n->pcie_gen_max(d, &u);
		store(s, x, TS_TF_PCIE_GEN_MAX, rc, u);
	}
}

static void sample_mtml(struct ts_sampler *s, struct ts_tele_sample *x, unsigned i)
{
	struct mtml *m = &s->mt;
	unsigned u;
	int it, rc;
	unsigned long long ull;

	if (m->power) {
		rc = m->power(m->dev[i], &u);
		store(s, x, TS_TF_POWER_W, rc, u / 1000.0);
	}
	if (m->gpu[i]) {
		if (m->util) {
			rc = m->util(m->gpu[i], &u);
			store(s, x, TS_TF_UTIL_PCT, rc, u);
		}
		if (m->temp) {
			rc = m->temp(m->gpu[i], &it);
			store(s, x, TS_TF_TEMP_C, rc, it);
		}
		if (m->clock) {
			rc = m->clock(m->gpu[i], &u);
			store(s, x, TS_TF_SM_CLOCK_MHZ, rc, u);
		}
		if (m->max_clock) {
			rc = m->max_clock(m->gpu[i], &u);
			store(s, x, TS_TF_SM_CLOCK_MAX_MHZ, rc, u);
		}
	}
	if (m->mem[i]) {
		if (m->mem_used) {
			rc = m->mem_used(m->mem[i], &ull);
			store(s, x, TS_TF_MEM_USED_MIB, rc, (double)ull / 1048576.0);
		}
		if (m->mem_total) {
			rc = m->mem_total(m->mem[i], &ull);
			store(s, x, TS_TF_MEM_TOTAL_MIB, rc, (double)ull / 1048576.0);
		}
		if (m->mem_util) {
			rc = m->mem_util(m->mem[i], &u);
			store(s, x, TS_TF_MEM_UTIL_PCT, rc, u);
		}
		if (m->mem_clock) {
			rc = m->mem_clock(m->mem[i], &u);
			store(s, x, TS_TF_MEM_CLOCK_MHZ, rc, u);
		}
	}
}

static void write_header(struct ts_sampler *s)
{
	struct ts_sb sb;
	struct ts_jw w;
	const struct ts_telemetry *t = s->t;

	if (!s->out)
		return;
	ts_sb_init(&sb);
	ts_jw_init(&w, &sb, 0);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", "trainscope.telemetry/1");
	ts_jw_kstr(&w, "source", t->source);
	ts_jw_kstr(&w, "fidelity", t->fidelity ? t->fidelity : "library");
	ts_jw_kstr(&w, "tool_version", t->tool_version ? t->tool_version : "");
	ts_jw_kstr(&w, "driver_version", t->driver_version ? t->driver_version : "");
	ts_jw_kf64(&w, "interval_ms", (double)s->interval_ns / 1e6);
	/* the captures of several machines read together are judged per host */
	char host[256];
	if (!gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		ts_jw_kstr(&w, "host", host);
	}
	ts_jw_key(&w, "gpus");
	ts_jw_arr(&w);
	for (size_t g = 0; g < t->gpus.n; g++) {
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "id", t->gpus.v[g].id);
		ts_jw_kstr(&w, "name", t->gpus.v[g].name ? t->gpus.v[g].name : "");
		if (t->gpus.v[g].uuid)
			ts_jw_kstr(&w, "uuid", t->gpus.v[g].uuid);
		if (t->gpus.v[g].bus_id)
			ts_jw_kstr(&w, "bus_id", t->gpus.v[g].bus_id);
		ts_jw_key(&w, "unsupported");
		ts_jw_obj(&w);
		for (int f = 0; f < TS_TF_COUNT; f++)
			if (t->gpus.v[g].unsupported_why[f]) {
				ts_jw_kstr(&w, ts_tf_name(f), t->gpus.v[g].unsupported_why[f]);
				if (g < MAX_GPUS)
					s->declared[g] |= 1ull << f;
			}
		ts_jw_obj_end(&w);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_obj_end(&w);
	ts_sb_addc(&sb, '\n');
	if (fwrite(sb.buf, 1, sb.len, s->out) != sb.len)
		s->write_failed = 1;
	ts_sb_release(&sb);
}

static void write_sample(struct ts_sampler *s, const struct ts_tele_sample *x, struct ts_sb *sb)
{
	struct ts_jw w;

	ts_sb_reset(sb);
	ts_jw_init(&w, sb, 0);
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "t_unix_ns", x->t_ns);
	ts_jw_ki64(&w, "t_mono_ns", x->mono_ns);
	ts_jw_ki64(&w, "tick", x->tick);
	ts_jw_ki64(&w, "gpu", x->gpu);
	for (int f = 0; f < TS_TF_COUNT; f++) {
		if (x->st[f] == TS_TV_VALUE) {
			ts_jw_kf64(&w, ts_tf_name(f), x->v[f]);
		} else if (x->st[f] == TS_TV_MISSING) {
			ts_jw_key(&w, ts_tf_name(f));
			ts_jw_null(&w);
		} else if (x->st[f] == TS_TV_UNSUPPORTED && x->gpu < MAX_GPUS &&
			   !(s->declared[x->gpu] & (1ull << f))) {
			/* found unsupported while sampling: said once, with its reason */
			ts_jw_kstr(&w, ts_tf_name(f), s->t->gpus.v[x->gpu].unsupported_why[f]);
			s->declared[x->gpu] |= 1ull << f;
		}
	}
	ts_jw_obj_end(&w);
	ts_sb_addc(sb, '\n');
	if (fwrite(sb->buf, 1, sb->len, s->out) != sb->len)
		s->write_failed = 1;
}

/* One round over every GPU. */
static void sample_round(struct ts_sampler *s, struct ts_sb *sb)
{
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	int64_t wall = now_ns(CLOCK_REALTIME);

	for (unsigned i = 0; i < s->ngpus; i++) {
		struct ts_tele_sample *x = ts_tele_add_sample(s->t, i, s->tick, wall);
		if (!x)
			break;
		x->mono_ns = t0;
		if (s->kind == 1)
			sample_nvml(s, x, i);
		else
			sample_mtml(s, x, i);
		if (s->out)
			write_sample(s, x, sb);
	}
	if (s->out)
		fflush(s->out);
	s->tick++;
	s->call_ns_sum += (double)(now_ns(CLOCK_MONOTONIC) - t0);
	s->calls++;
}

static void *thread_main(void *arg)
{
	struct ts_sampler *s = arg;
	struct ts_sb sb;
	int64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int64_t next = now_ns(CLOCK_MONOTONIC);

	ts_sb_init(&sb);
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		pthread_mutex_unlock(&s->mu);
		sample_round(s, &sb);
		pthread_mutex_lock(&s->mu);
		next += s->interval_ns;
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (next < now)
			next = now; /* a slow round: no catch-up burst */
		struct timespec ts = { (time_t)(next / 1000000000LL), (long)(next % 1000000000LL) };
		while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->mu);
	sample_round(s, &sb); /* the last state before the command ended */
	s->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	ts_sb_release(&sb);
	return NULL;
}

/*
 * The lowest-fidelity source: nvidia-smi polling itself with -lms into a
 * file, read with the --query-gpu reader when the command ends. Each poll
 * forks inside nvidia-smi and costs CPU (netdata #10362), which is why it
 * is only the fallback.
 */
static const char poll_fields[] =
	"timestamp,index,name,uuid,pci.bus_id,driver_version,power.draw,power.limit,"
	"utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,clocks.sm,"
	"clocks.max.sm,clocks.mem,memory.used,memory.total,fan.speed,pcie.link.gen.current,"
	"pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,"
	"clocks_throttle_reasons.active";

static int have_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[1024];

	if (!path)
		return 0;
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (n && access(buf, X_OK) == 0)
			return 1;
		path += n + (c != NULL);
	}
	return 0;
}

static int open_poll(struct ts_sampler *s, char *tried, size_t cap)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!have_in_path("nvidia-smi")) {
		snprintf(tried + strlen(tried), cap - strlen(tried), "nvidia-smi: not on PATH; ");
		return -1;
	}
	snprintf(s->poll_path, sizeof(s->poll_path), "%s/trainscope-smi-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(s->poll_path);
	if (fd < 0) {
		snprintf(tried + strlen(tried), cap - strlen(tried), "nvidia-smi: no temp file; ");
		s->poll_path[0] = 0;
		return -1;
	}
	close(fd);
	s->t->source = "nvidia-smi-query-gpu";
	s->t->tool_version = "nvidia-smi --query-gpu polling";
	s->kind = 3;
	return 0;
}

static int start_poll(struct ts_sampler *s, struct ts_err *err)
{
	char ms[24], query[sizeof(poll_fields) + 16];
	pid_t pid;

	snprintf(ms, sizeof(ms), "%lld", (long long)(s->interval_ns / 1000000));
	snprintf(query, sizeof(query), "--query-gpu=%s", poll_fields);
	pid = fork();
	if (pid < 0)
		return ts_err_set(err, TS_EIO, "cannot start nvidia-smi: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(s->poll_path, O_WRONLY | O_TRUNC);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		close(fd);
		execlp("nvidia-smi", "nvidia-smi", query, "--format=csv,nounits", "-lms", ms,
		       (char *)NULL);
		_exit(127);
	}
	s->poll_pid = pid;
	s->wall0 = now_ns(CLOCK_MONOTONIC);
	s->running = 1;
	return 0;
}

/* nvidia-smi prints local time without a zone: move it to UTC. */
static int64_t local_offset_ns(void)
{
	time_t now = time(NULL);
	struct tm lt;

	if (!localtime_r(&now, &lt))
		return 0;
	return (int64_t)lt.tm_gmtoff * 1000000000LL;
}

static int stop_poll(struct ts_sampler *s, struct ts_err *err)
{
	int status, rc;
	struct ts_sb sb;

	kill(s->poll_pid, SIGTERM);
	while (waitpid(s->poll_pid, &status, 0) < 0 && errno == EINTR)
		;
	s->poll_pid = 0;
	s->running = 0;
	rc = ts_tele_read(s->t, s->poll_path, NULL, err);
	if (rc)
		return rc;
	ts_tele_match_gpus(s->t);
	int64_t off = local_offset_ns();
	for (size_t i = 0; i < s->t->samples.n; i++)
		if (s->t->samples.v[i].t_ns != TS_NO_TIME)
			s->t->samples.v[i].t_ns -= off;
	for (size_t g = 0; g < s->t->gpus.n; g++)
		s->t->gpus.v[g].local_time = 0;
	s->t->source = "nvidia-smi-query-gpu";
	s->t->fidelity = "cli-polling";
	s->t->format = TS_TELE_OWN;
	s->t->interval_ns = s->interval_ns;
	s->ngpus = (unsigned)s->t->gpus.n;
	s->calls = 0;
	if (s->out) {
		write_header(s);
		ts_sb_init(&sb);
		for (size_t i = 0; i < s->t->samples.n; i++)
			write_sample(s, &s->t->samples.v[i], &sb);
		ts_sb_release(&sb);
	}
	return 0;
}

int ts_sampler_open(struct ts_sampler **sp, const struct ts_sampler_opts *o, struct ts_telemetry *t,
		    struct ts_err *err)
{
	struct ts_sampler *s;
	char tried[1024] = "";
	const char *b = o->backend ? o->backend : "auto";
	int ok = -1;

	*sp = NULL;
	if (o->interval_ns < 10000000LL || o->interval_ns > 10000000000LL)
		return ts_err_set(err, TS_EUSAGE, "sampling interval must be 10 ms to 10 s");
	s = calloc(1, sizeof(*s));
	if (!s)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	s->t = t;
	s->interval_ns = o->interval_ns;
	if (!strcmp(b, "auto") || !strcmp(b, "nvml"))
		ok = open_nvml(s, tried, sizeof(tried));
	if (ok && (!strcmp(b, "auto") || !strcmp(b, "mtml")))
		ok = open_mtml(s, tried, sizeof(tried));
	if (ok && (!strcmp(b, "auto") || !strcmp(b, "nvidia-smi")))
		ok = open_poll(s, tried, sizeof(tried));
	if (ok || (!s->ngpus && s->kind != 3)) {
		size_t len = strlen(tried);
		if (len >= 2)
			tried[len - 2] = 0;
		if (!ok && !s->ngpus)
			snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried),
				 "%sthe library reports no device", strlen(tried) ? "; " : "");
		ts_sampler_close(s);
		return ts_err_set(err, TS_EUNSUPPORTED, "no device library could be used (%s)", tried);
	}
	t->fidelity = s->kind == 3 ? "cli-polling" : "library";
	t->format = TS_TELE_OWN;
	t->interval_ns = o->interval_ns;
	if (o->out_path) {
		s->out = fopen(o->out_path, "w");
		if (!s->out) {
			ts_sampler_close(s);
			return ts_err_at(err, TS_EIO, o->out_path, -1, -1, "cannot write: %s",
					 strerror(errno));
		}
		if (s->kind != 3)
			write_header(s); /* polling learns its GPUs at the end */
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->sync_init = 1;
	*sp = s;
	return 0;
}

int ts_sampler_start(struct ts_sampler *s, struct ts_err *err)
{
	if (s->kind == 3)
		return start_poll(s, err);
	s->wall0 = now_ns(CLOCK_MONOTONIC);
	if (pthread_create(&s->thr, NULL, thread_main, s))
		return ts_err_set(err, TS_EINTERNAL, "cannot start the sampling thread");
	s->running = 1;
	return 0;
}

int ts_sampler_stop(struct ts_sampler *s, struct ts_err *err)
{
	if (!s->running)
		return 0;
	if (s->kind == 3)
		return stop_poll(s, err);
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thr, NULL);
	s->running = 0;
	int64_t wall = now_ns(CLOCK_MONOTONIC) - s->wall0;
	s->t->sampler_cpu_pct = wall > 0 ? 100.0 * (double)s->cpu_ns / (double)wall : NAN;
	s->t->sampler_call_us = s->calls ? s->call_ns_sum / (double)s->calls / 1e3 : NAN;
	if (s->out) {
		char buf[160];
		int n = snprintf(buf, sizeof(buf),
				 "{\"end\":true,\"sampler_cpu_pct\":%.4f,\"sampler_call_us\":%.3f}\n",
				 s->t->sampler_cpu_pct, s->t->sampler_call_us);
		if (fwrite(buf, 1, (size_t)n, s->out) != (size_t)n || fflush(s->out))
			s->write_failed = 1;
		if (s->write_failed)
			return ts_err_set(err, TS_EIO, "writing the telemetry file failed: %s",
					  strerror(errno));
	}
	return 0;
}

void ts_sampler_close(struct ts_sampler *s)
{
	if (!s)
		return;
	if (s->running) {
		struct ts_err e;
		ts_err_init(&e);
		ts_sampler_stop(s, &e);
	}
	if (s->kind == 2) {
		struct mtml *m = &s->mt;
		for (unsigned i = 0; i < s->ngpus; i++) {
			if (m->gpu[i] && m->free_gpu)
				m->free_gpu(m->gpu[i]);
			if (m->mem[i] && m->free_mem)
				m->free_mem(m->mem[i]);
			if (m->dev[i] && m->free_dev)
				m->free_dev(m->dev[i]);
		}
		if (m->sys && m->free_sys)
			m->free_sys(m->sys);
		if (m->h && m->shutdown)
			m->shutdown(m->h);
	}
	if (s->kind == 1 && s->nv.shutdown)
		s->nv.shutdown();
	if (s->nv.lib)
		dlclose(s->nv.lib);
	if (s->mt.lib)
		dlclose(s->mt.lib);
	if (s->out)
		fclose(s->out);
	if (s->poll_path[0])
		unlink(s->poll_path);
	if (s->sync_init) {
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	free(s);
}
