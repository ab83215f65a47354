/*
 * tele_model.c - the telemetry capture: field names and units, GPUs,
 * samples and notes. Everything else in src/telemetry fills or reads it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int ts_tele_add_gpu(struct ts_telemetry *t, const char *id, const char *name)
{
	struct ts_tele_gpu g;

	memset(&g, 0, sizeof(g));
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
