/*
 * tele_model.c - the telemetry capture: field names and units, GPUs,
 * samples and notes. Everything else in src/telemetry fills or reads it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "trainscope/telemetry.h"

static const struct { const char *name, *unit; } fields[TS_TF_COUNT] = {
	[TS_TF_POWER_W] = { "power_w", "W" },
	[TS_TF_POWER_LIMIT_W] = { "power_limit_w", "W" },
	[TS_TF_ENERGY_J] = { "energy_j", "J" },
	[TS_TF_UTIL_PCT] = { "util_pct", "%" },
	[TS_TF_MEM_UTIL_PCT] = { "mem_util_pct", "%" },
	[TS_TF_TEMP_C] = { "temp_c", "C" },
	[TS_TF_MEM_TEMP_C] = { "mem_temp_c", "C" },
	[TS_TF_SM_CLOCK_MHZ] = { "sm_clock_mhz", "MHz" },
	[TS_TF_SM_CLOCK_MAX_MHZ] = { "sm_clock_max_mhz", "MHz" },
	[TS_TF_MEM_CLOCK_MHZ] = { "mem_clock_mhz", "MHz" },
	[TS_TF_MEM_USED_MIB] = { "mem_used_mib", "MiB" },
	[TS_TF_MEM_TOTAL_MIB] = { "mem_total_mib", "MiB" },
	[TS_TF_FAN_PCT] = { "fan_pct", "%" },
	[TS_TF_PCIE_GEN] = { "pcie_gen", "gen" },
	[TS_TF_PCIE_GEN_MAX] = { "pcie_gen_max", "gen" },
	[TS_TF_PCIE_WIDTH] = { "pcie_width", "lanes" },
	[TS_TF_PCIE_WIDTH_MAX] = { "pcie_width_max", "lanes" },
	[TS_TF_PCIE_RX_MBPS] = { "pcie_rx_mb_per_s", "MB/s" },
	[TS_TF_PCIE_TX_MBPS] = { "pcie_tx_mb_per_s", "MB/s" },
	[TS_TF_POWER_VIOL_PCT] = { "power_violation_pct", "%" },
	[TS_TF_THERMAL_VIOL] = { "thermal_violation", "bool" },
	[TS_TF_EVENT_REASONS] = { "clock_event_reasons", "bitmask" },
	[TS_TF_ECC_SBE] = { "ecc_sbe_errors", "count" },
	[TS_TF_ECC_DBE] = { "ecc_dbe_errors", "count" },
	[TS_TF_GR_ACTIVE] = { "gr_active", "fraction" },
	[TS_TF_SM_ACTIVE] = { "sm_active", "fraction" },
	[TS_TF_SM_OCCUPANCY] = { "sm_occupancy", "fraction" },
	[TS_TF_TENSOR_ACTIVE] = { "tensor_active", "fraction" },
	[TS_TF_DRAM_ACTIVE] = { "dram_active", "fraction" },
	[TS_TF_FP64_ACTIVE] = { "fp64_active", "fraction" },
	[TS_TF_FP32_ACTIVE] = { "fp32_active", "fraction" },
	[TS_TF_FP16_ACTIVE] = { "fp16_active", "fraction" },
	[TS_TF_XID] = { "xid", "code" },
};

const char *ts_tf_name(int f)
{
	return f >= 0 && f < TS_TF_COUNT ? fields[f].name : "?";
}

const char *ts_tf_unit(int f)
{
	return f >= 0 && f < TS_TF_COUNT ? fields[f].unit : "?";
}

const char *ts_tele_reason_name(uint64_t bit)
{
	switch (bit) {
	case TS_REASON_GPU_IDLE: return "gpu_idle";
	case TS_REASON_APP_CLOCKS: return "applications_clocks";
	case TS_REASON_SW_POWER_CAP: return "sw_power_cap";
	case TS_REASON_HW_SLOWDOWN: return "hw_slowdown";
	case TS_REASON_SYNC_BOOST: return "sync_boost";
	case TS_REASON_SW_THERMAL: return "sw_thermal_slowdown";
	case TS_REASON_HW_THERMAL: return "hw_thermal_slowdown";
	case TS_REASON_HW_POWER_BRAKE: return "hw_power_brake";
	case TS_REASON_DISPLAY_CLOCK: return "display_clock";
	default: return NULL;
	}
}

static const char *const format_names[TS_TELE_FORMAT_COUNT] = {
	[TS_TELE_UNKNOWN] = "unknown",
	[TS_TELE_DMON] = "nvidia-smi-dmon",
	[TS_TELE_QUERY_CSV] = "nvidia-smi-query-gpu",
	[TS_TELE_DCGMI] = "dcgmi-dmon",
	[TS_TELE_GMI_TABLE] = "mthreads-gmi",
	[TS_TELE_GMI_JSON] = "mthreads-gmi-json",
	[TS_TELE_STRAGGLER] = "megatron-straggler",
	[TS_TELE_OWN] = "trainscope-telemetry",
	[TS_TELE_DCGM_EXPORTER] = "dcgm-exporter",
};

const char *ts_tele_format_name(int f)
{
	return f >= 0 && f < TS_TELE_FORMAT_COUNT ? format_names[f] : "unknown";
}

void ts_tele_init(struct ts_telemetry *t)
{
	memset(t, 0, sizeof(*t));
	t->gpus_attached = -1;
	t->sampler_cpu_pct = NAN;
	t->sampler_call_us = NAN;
	ts_arena_init(&t->arena);
	ts_warnings_init(&t->notes);
}

void ts_tele_release(struct ts_telemetry *t)
{
	TS_VEC_RELEASE(t->gpus);
	TS_VEC_RELEASE(t->samples);
	ts_warnings_release(&t->notes);
	TS_VEC_RELEASE(t->errors);
	TS_VEC_RELEASE(t->straggler);
	ts_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

int ts_tele_multi_capture(const struct ts_telemetry *t)
{
	return t->gpus.n > 1 && t->gpus.v[0].capture != t->gpus.v[t->gpus.n - 1].capture;
}

const char *ts_tele_gpu_label(const struct ts_telemetry *t, size_t g, int bare, char *buf,
			      size_t cap)
{
	const struct ts_tele_gpu *gp = &t->gpus.v[g];
	int num = gp->id[0] >= '0' && gp->id[0] <= '9';

	if (ts_tele_multi_capture(t) && gp->file)
		snprintf(buf, cap, "%s%s of %s", num && !bare ? "GPU " : "", gp->id, gp->file);
	else
		snprintf(buf, cap, "%s%s", num && !bare ? "GPU " : "", gp->id);
	return buf;
}

int ts_tele_uuid_norm(const char *u, char *buf, size_t cap)
{
	size_t n = 0;
	int hex = 0;

	if (!u || !cap)
		return 0;
	while (*u == ' ' || *u == '\t')
		u++;
	if (!strncasecmp(u, "GPU-", 4))
		u += 4;
	for (; *u && n + 1 < cap; u++) {
		char c = *u;
		if (c == ' ' || c == '\t')
			continue;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
			hex++;
		else if (c != '-')
			return 0; /* "N/A", "[Not Supported]", a MIG-... id */
		buf[n++] = c;
	}
	buf[n] = 0;
	return !*u && hex >= 8;
}

static int hexfield(const char **p, unsigned long max, char end, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;
	int n = 0;

	for (; n < 8 && ((*s >= '0' && *s <= '9') || ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f'));
	     s++, n++)
		v = v * 16 + (unsigned long)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
	if (!n || v > max || (end && *s != end))
		return 0;
	*out = v;
	*p = end ? s + 1 : s;
	return 1;
}

int ts_tele_bus_norm(const char *b, uint64_t *out)
{
	unsigned long dom = 0, bus, dev, fn;
	const char *p, *colon;

	if (!b)
		return 0;
	while (*b == ' ' || *b == '\t')
		b++;
	if (!strncasecmp(b, "0x", 2))
		b += 2;
	colon = strchr(b, ':');
	if (!colon)
		return 0;
	p = b;
	if (strchr(colon + 1, ':') && !hexfield(&p, 0xffffffffUL, ':', &dom))
		return 0;
	if (!hexfield(&p, 0xff, ':', &bus) || !hexfield(&p, 0x1f, '.', &dev) ||
	    !hexfield(&p, 0x7, 0, &fn))
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return 0;
	*out = (uint64_t)dom << 24 | (uint64_t)bus << 16 | (uint64_t)dev << 8 | fn;
	return 1;
}

/* the root of i's group (path halving) */
static size_t uf_root(size_t *par, size_t i)
{
	while (par[i] != i) {
		par[i] = par[par[i]];
		i = par[i];
	}
	return i;
}

/* The devices being matched: par (union-find, a group's root its lowest
 * GPU), next (each group's GPUs as a ring), uu (each GPU's uuid key, -1
 * none), gu (at a root: the group's uuid key), size and sid (at a root:
 * the group's GPUs, and the id its captures are filed under in held),
 * held (the (set id, capture) pairs filed, as interned keys). */
struct devmatch {
	const struct ts_telemetry *t;
	size_t *par, *next, nc;
	int64_t *uu, *gu;
	size_t *size, *sid;
	struct ts_intern held;
};

static size_t dm_capture(const struct devmatch *m, size_t g)
{
	int32_t c = m->t->gpus.v[g].capture;
	return c >= 0 && (size_t)c < m->nc ? (size_t)c : 0;
}

/* Whether capture c is filed under set id sid in held (hold: file it;
 * then 0, or -1 with no memory). */
static int dm_held(const struct devmatch *m, size_t sid, size_t c)
{
	uint64_t k[2] = { sid, c };

	return ts_intern_find(&m->held, (const char *)k, sizeof(k)) >= 0;
}

static int dm_hold(struct devmatch *m, size_t sid, size_t c)
{
	uint64_t k[2] = { sid, c };

	return ts_intern(&m->held, (const char *)k, sizeof(k)) < 0 ? -1 : 0;
}

/* Merge the devices of GPUs a and b unless that makes one device of two
 * GPUs of one capture or of two uuids. The smaller group's captures are
 * looked up among the larger's and filed under its set id, so a GPU is
 * filed again only when its group at least doubles: O(n log n) over all
 * joins, where walking both groups cost O(captures^2) for a device seen
 * in every capture. 0, or -1 when held cannot grow. */
static int dm_join(struct devmatch *m, size_t a, size_t b)
{
	size_t ra = uf_root(m->par, a), rb = uf_root(m->par, b), s, l, x;

	if (ra == rb || (m->gu[ra] >= 0 && m->gu[rb] >= 0 && m->gu[ra] != m->gu[rb]))
		return 0;
	s = m->size[ra] <= m->size[rb] ? ra : rb;
	l = s == ra ? rb : ra;
	x = s;
	do {
		if (dm_held(m, m->sid[l], dm_capture(m, x)))
			return 0;
		x = m->next[x];
	} while (x != s);
	x = s;
	do {
		if (dm_hold(m, m->sid[l], dm_capture(m, x)))
			return -1;
		x = m->next[x];
	} while (x != s);
	x = m->next[ra];
	m->next[ra] = m->next[rb];
	m->next[rb] = x;
	m->sid[ra < rb ? ra : rb] = m->sid[l];
	m->size[ra < rb ? ra : rb] = m->size[ra] + m->size[rb];
	if (ra > rb) {
		x = ra;
		ra = rb;
		rb = x;
	}
	m->par[rb] = ra;
	m->gu[ra] = m->gu[ra] >= 0 ? m->gu[ra] : m->gu[rb];
	return 0;
}

/* GPU g's keys in ids: 'u' and its uuid (*uu), and, when its capture
 * records its host, 'b', the host, a NUL and its bus number (*bk): a bus
 * id names a device only on its host (a host name of over 240 bytes
 * gives no bus key). -1 where it has none; TS_ENOMEM. */
static int dm_keys(const struct ts_tele_gpu *gp, struct ts_intern *ids, int64_t *uu, int64_t *bk)
{
	char key[256];
	uint64_t bus;
	size_t hn = gp->host ? strlen(gp->host) : 0;

	*uu = *bk = -1;
	if (ts_tele_uuid_norm(gp->uuid, key + 1, sizeof(key) - 1)) {
		key[0] = 'u';
		if ((*uu = ts_intern(ids, key, 1 + strlen(key + 1))) < 0)
			return TS_ENOMEM;
	}
	if (gp->host && hn + 2 + sizeof(bus) <= sizeof(key) && ts_tele_bus_norm(gp->bus_id, &bus)) {
		key[0] = 'b';
		memcpy(key + 1, gp->host, hn + 1);
		memcpy(key + 2 + hn, &bus, sizeof(bus));
		if ((*bk = ts_intern(ids, key, 2 + hn + sizeof(bus))) < 0)
			return TS_ENOMEM;
	}
	return 0;
}

size_t ts_tele_match_gpus(struct ts_telemetry *t)
{
	size_t n = t->gpus.n, shared = 0, nd = 0;
	struct devmatch m = { t, NULL, NULL, t->nfiles > 0 ? (size_t)t->nfiles : 1, NULL, NULL,
			      NULL, NULL, { 0 } };
	struct ts_intern ids;
	int64_t *bk = NULL;
	/* per key: its first GPU, and for a bus key the uuid key its GPUs
	 * have (-1 none yet, -2 two: the bus id tells nothing) */
	size_t *first = NULL, *cnt = NULL;
	int64_t *kuu = NULL;

	ts_intern_init(&ids);
	ts_intern_init(&m.held);
	for (size_t g = 0; g < n; g++) {
		t->gpus.v[g].device = (int32_t)g;
		t->gpus.v[g].matched_by = NULL;
	}
	if (n < 2 || !ts_tele_multi_capture(t))
		return 0;
	m.par = malloc(n * sizeof(*m.par));
	m.next = malloc(n * sizeof(*m.next));
	m.uu = malloc(2 * n * sizeof(*m.uu));
	m.gu = m.uu ? m.uu + n : NULL;
	m.size = malloc(2 * n * sizeof(*m.size));
	m.sid = m.size ? m.size + n : NULL;
	bk = malloc(n * sizeof(*bk));
	cnt = malloc(2 * n * sizeof(*cnt));
	if (!m.par || !m.next || !m.uu || !m.size || !bk || !cnt)
		goto out;
	for (size_t g = 0; g < n; g++) {
		m.par[g] = m.next[g] = m.sid[g] = g;
		m.size[g] = 1;
		if (dm_keys(&t->gpus.v[g], &ids, &m.uu[g], &bk[g]) ||
		    dm_hold(&m, g, dm_capture(&m, g)))
			goto out;
		m.gu[g] = m.uu[g];
	}
	first = malloc((ids.count ? ids.count : 1) * sizeof(*first));
	kuu = malloc((ids.count ? ids.count : 1) * sizeof(*kuu));
	if (!first || !kuu)
		goto out;
	for (size_t k = 0; k < ids.count; k++) {
		first[k] = SIZE_MAX;
		kuu[k] = -1;
	}
	/* uuids first: they are unique everywhere */
	for (size_t g = 0; g < n; g++) {
		int64_t u = m.uu[g];
		if (u < 0)
			continue;
		if (first[u] == SIZE_MAX)
			first[u] = g;
		else if (dm_join(&m, first[u], g))
			goto out;
	}
	/* then a bus id on one recorded host, where no two uuids go with it */
	for (size_t g = 0; g < n; g++) {
		int64_t u = m.uu[g], *k = bk[g] >= 0 ? &kuu[bk[g]] : NULL;
		if (k && u >= 0 && *k != -2)
			*k = *k == -1 || *k == u ? u : -2;
	}
	for (size_t g = 0; g < n; g++) {
		int64_t k = bk[g];
		if (k < 0 || kuu[k] == -2)
			continue;
		if (first[k] == SIZE_MAX)
			first[k] = g;
		else if (dm_join(&m, first[k], g))
			goto out;
	}
	/* cnt: GPUs per device, then those with a uuid (at the root) */
	for (size_t g = 0; g < n; g++)
		cnt[g] = cnt[n + g] = 0;
	for (size_t g = 0; g < n; g++) {
		size_t r = uf_root(m.par, g);
		cnt[r]++;
		cnt[n + r] += m.uu[g] >= 0;
	}
	for (size_t g = 0; g < n; g++) {
		size_t r = uf_root(m.par, g);
		if (r == g)
			m.next[g] = nd++; /* the ring is done with: the device index */
		t->gpus.v[g].device = (int32_t)m.next[r];
		if (cnt[r] < 2)
			continue;
		t->gpus.v[g].matched_by = m.uu[g] >= 0 && cnt[n + r] >= 2 ? "uuid" : "bus_id";
		shared += r == g;
	}
out:
	ts_intern_release(&ids);
	free(m.par);
	free(m.next);
	free(m.uu);
	free(m.size);
	ts_intern_release(&m.held);
	free(bk);
	free(cnt);
	free(first);
	free(kuu);
	return shared;
}

int ts_tele_add_gpu(struct ts_telemetry *t, const char *id, const char *name)
{
	struct ts_tele_gpu g;

	memset(&g, 0, sizeof(g));
	g.device = (int32_t)t->gpus.n;
	g.id = ts_arena_strndup(&t->arena, id, strlen(id));
	g.name = name ? ts_arena_strndup(&t->arena, name, strlen(name)) : NULL;
	if (!g.id || (name && !g.name) || TS_VEC_PUSH(t->gpus, g))
		return -1;
	return (int)(t->gpus.n - 1);
}

struct ts_tele_sample *ts_tele_add_sample(struct ts_telemetry *t, uint32_t gpu,
					  uint32_t tick, int64_t t_ns)
{
	struct ts_tele_sample s;

	memset(&s, 0, sizeof(s));
	s.gpu = gpu;
	s.tick = tick;
	s.t_ns = t_ns;
	s.mono_ns = TS_NO_TIME;
	for (int f = 0; f < TS_TF_COUNT; f++)
		s.v[f] = NAN;
	if (TS_VEC_PUSH(t->samples, s))
		return NULL;
	return &t->samples.v[t->samples.n - 1];
}

void ts_tele_note(struct ts_telemetry *t, const char *code, int64_t line,
		  const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ts_warnings_add(&t->notes, code, NULL, -1, TS_NO_INT, "%s", buf) == 0)
		t->notes.v.v[t->notes.v.n - 1].line = line > 0 ? line : 0;
}
