/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for the watch tests: two GPUs
 * answering a scripted sequence. Per device, call k of nvmlDeviceGetPowerUsage
 * (k = 0, 1, ...) reports 100 + 10 k W; the energy counter starts at
 * 5000 J and grows 20 J per call; the clock-event reasons are 0 before call 5
 * and SW power cap (0x4) from call 5 on; PCIe width answers NOT_SUPPORTED;
 * nvmlDeviceGetFanSpeed does not exist, and neither does the newer
 * nvmlDeviceGetTemperatureV (the deprecated call must be used). GPU i's uuid
 * is GPU-5e1f0c2a-7b3d-4c8e-9a01-00000000000i and its PCI location domain 0,
 * bus 0x1b + 0x20 i, device 0, answered in nvmlPciInfo_t's v3 layout (a
 * 16-byte legacy bus id, then domain, bus, device, two ids, and a 32-byte
 * bus id). The shutdown is written to $FAKE_NVML_LOG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int id; unsigned power_calls; unsigned energy_calls; unsigned reason_calls; } dev_t_;
static dev_t_ devs[2] = { { 0, 0, 0, 0 }, { 1, 0, 0, 0 } };
static int inited;

int nvmlInit_v2(void) { inited++; return 0; }
int nvmlShutdown(void)
{
	const char *p = getenv("FAKE_NVML_LOG");
	if (p) {
		FILE *f = fopen(p, "a");
		if (f) {
			fprintf(f, "shutdown inits=%d\n", inited);
			fclose(f);
		}
	}
	return 0;
}
int nvmlSystemGetDriverVersion(char *b, unsigned n) { snprintf(b, n, "999.01"); return 0; }
int nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	if (i > 1)
		return 2;
	*h = &devs[i];
	return 0;
}
int nvmlDeviceGetName(void *h, char *b, unsigned n) { (void)h; snprintf(b, n, "NVIDIA H100 80GB HBM3"); return 0; }
struct util { unsigned gpu, memory; };
int nvmlDeviceGetUtilizationRates(void *h, struct util *u) { (void)h; u->gpu = 90; u->memory = 40; return 0; }
struct mem { unsigned long long total, free, used; };
int nvmlDeviceGetMemoryInfo(void *h, struct mem *m)
{
	(void)h;
	m->total = 80ULL << 30;
	m->used = 40ULL << 30;
	m->free = m->total - m->used;
	return 0;
}
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) { dev_t_ *d = h; *mw = 100000 + 10000 * d->power_calls++; return 0; }
int nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned *mw) { (void)h; *mw = 300000; return 0; }
int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
	dev_t_ *d = h;
	*mj = 5000000ULL + 20000ULL * d->energy_calls++;
	return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *r)
{
	dev_t_ *d = h;
	*r = d->reason_calls++ >= 5 ? 0x4 : 0;
	return 0;
}
int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz) { (void)h; *mhz = type == 1 ? 1500 : 2619; return 0; }
int nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned *mhz) { (void)h; *mhz = type == 1 ? 1980 : 2619; return 0; }
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *c) { (void)h; (void)sensor; *c = 61; return 0; }
int nvmlDeviceGetCurrPcieLinkWidth(void *h, unsigned *w) { (void)h; (void)w; return 3; }
int nvmlDeviceGetMaxPcieLinkWidth(void *h, unsigned *w) { (void)h; (void)w; return 3; }
int nvmlDeviceGetUUID(void *h, char *b, unsigned n)
{
	dev_t_ *d = h;
	snprintf(b, n, "GPU-5e1f0c2a-7b3d-4c8e-9a01-%012d", d->id);
	return 0;
}
struct pci_v3 { char legacy[16]; unsigned domain, bus, device, dev_id, subsys_id; char bus_id[32]; };
int nvmlDeviceGetPciInfo_v3(void *h, struct pci_v3 *p)
{
	dev_t_ *d = h;
	memset(p, 0, sizeof(*p));
	p->bus = 0x1b + 0x20 * (unsigned)d->id;
	p->dev_id = 0x233010de;
	snprintf(p->legacy, sizeof(p->legacy), "0000:%02X:00.0", p->bus);
	snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", p->bus);
	return 0;
}
