/*
 * fake_mtml.c - a stand-in libmtml.so for the watch tests: one MTT S4000.
 * Power is 200 W then +5 W per call; mtmlGpuGetMaxClock does not exist.
 * Its uuid is 9c2d4e6f-1a3b-4c5d-8e7f-0123456789ab and its PCI sbdf
 * 0000:3b:00.0 (MtmlPciInfo: the 32-byte sbdf string first).
 * Every handle created and freed is counted, and the counts are written to
 * $FAKE_MTML_LOG at mtmlLibraryShutDown so the test can check that watch
 * frees what it creates.
 */
#include <stdio.h>
#include <stdlib.h>

static int lib_obj, sys_obj, dev_obj, gpu_obj, mem_obj;
static int created, freed;
static unsigned power_calls;

int mtmlLibraryInit(void **lib) { *lib = &lib_obj; created++; return 0; }
int mtmlLibraryShutDown(void *lib)
{
	const char *p = getenv("FAKE_MTML_LOG");
	(void)lib;
	freed++;
	if (p) {
		FILE *f = fopen(p, "a");
		if (f) {
			fprintf(f, "created=%d freed=%d\n", created, freed);
			fclose(f);
		}
	}
	return 0;
}
int mtmlLibraryGetVersion(void *lib, char *b, unsigned n) { (void)lib; snprintf(b, n, "2.2.0"); return 0; }
int mtmlLibraryInitSystem(void *lib, void **sys) { (void)lib; *sys = &sys_obj; created++; return 0; }
int mtmlLibraryFreeSystem(void *sys) { (void)sys; freed++; return 0; }
int mtmlSystemGetDriverVersion(void *sys, char *b, unsigned n) { (void)sys; snprintf(b, n, "3.0.0"); return 0; }
int mtmlLibraryCountDevice(void *lib, unsigned *c) { (void)lib; *c = 1; return 0; }
int mtmlLibraryInitDeviceByIndex(void *lib, unsigned i, void **d) { (void)lib; (void)i; *d = &dev_obj; created++; return 0; }
int mtmlLibraryFreeDevice(void *d) { (void)d; freed++; return 0; }
int mtmlDeviceGetName(void *d, char *b, unsigned n) { (void)d; snprintf(b, n, "MTT S4000"); return 0; }
int mtmlDeviceGetPowerUsage(void *d, unsigned *mw) { (void)d; *mw = 200000 + 5000 * power_calls++; return 0; }
int mtmlDeviceInitGpu(void *d, void **g) { (void)d; *g = &gpu_obj; created++; return 0; }
int mtmlDeviceFreeGpu(void *g) { (void)g; freed++; return 0; }
int mtmlGpuGetUtilization(void *g, unsigned *u) { (void)g; *u = 77; return 0; }
int mtmlGpuGetTemperature(void *g, int *c) { (void)g; *c = 55; return 0; }
int mtmlGpuGetClock(void *g, unsigned *mhz) { (void)g; *mhz = 1750; return 0; }
int mtmlDeviceInitMemory(void *d, void **m) { (void)d; *m = &mem_obj; created++; return 0; }
int mtmlDeviceFreeMemory(void *m) { (void)m; freed++; return 0; }
int mtmlMemoryGetTotal(void *m, unsigned long long *b) { (void)m; *b = 48ULL << 30; return 0; }
int mtmlMemoryGetUsed(void *m, unsigned long long *b) { (void)m; *b = 12ULL << 30; return 0; }
int mtmlDeviceGetUUID(void *d, char *b, unsigned n) { (void)d; snprintf(b, n, "9c2d4e6f-1a3b-4c5d-8e7f-0123456789ab"); return 0; }
struct pci { char sbdf[32]; unsigned segment, bus, device, dev_id, subsys_id; };
int mtmlDeviceGetPciInfo(void *d, struct pci *p)
{
	(void)d;
	snprintf(p->sbdf, sizeof(p->sbdf), "0000:3b:00.0");
	p->segment = 0;
	p->bus = 0x3b;
	p->device = 0;
	return 0;
}
