/*
 * memplan.h - what `trainscope memory` and `trainscope plan` (and, for
 * the model's assumed values, `mfu`) share in the CLI: loading the model
 * (config.json or a Megatron log's arguments block), finding the device's
 * capacity, parsing the recompute/offload option values, and byte
 * formatting. Prints through cli_error only.
 */
#ifndef TRAINSCOPE_CLI_MEMPLAN_H
#define TRAINSCOPE_CLI_MEMPLAN_H

#include "cli.h"
#include "trainscope/gpus.h"
#include "trainscope/jsonw.h"
#include "trainscope/memory.h"
#include "trainscope/model.h"
#include "trainscope/plan.h"
#include "trainscope/run.h"

/* Read a Hugging Face config.json (first non-blank byte '{', or empty) or
 * the arguments block of a Megatron log, plain, gzip or "-" for standard
 * input, then finish the model. *have_args is set when the file
 * also stated training arguments (a). Returns 0 or an exit status. */
int mp_load_model(struct cli_ctx *ctx, const char *path, struct ts_model *m,
		  struct ts_model_args *a, int *have_args);
/* A "model-value-assumed" warning in wn (NULL: none) for each value of m,
 * not yet finished, that ts_model_finish will fill in (key/value heads,
 * head dim, FFN width, activation, expert FFN width); path names where the
 * model came from. mfu says them as memory and plan do. */
void mp_model_assumed(const struct ts_model *m, const char *path, struct ts_warnings *wn);

/* The total and active parameters of m (finished) at its own vocabulary,
 * as "8.190 B total, 3.347 B active" into buf. */
void mp_params_str(const struct ts_model *m, char *buf, size_t size);

/* The same two counts as "total_params" and "active_params" (integers)
 * inside the JSON object w is writing. */
void mp_params_json(struct ts_jw *w, const struct ts_model *m);

/* The same, adding a "model-value-assumed" warning to wn (NULL: none) for
 * each value the file did not state and the model's defaults fill in
 * (key/value heads, head dim, FFN width, activation, expert FFN width). */
int mp_load_model_warn(struct cli_ctx *ctx, const char *path, struct ts_model *m,
		       struct ts_model_args *a, int *have_args, struct ts_warnings *wn);

/*
 * The device memory to fit in: --gpu-mem GiB wins, else --gpu SKU from the
 * catalog (after merging --gpu-catalog FILE when given). *gpu is the
 * catalog entry or NULL; *bytes 0 when neither was given. cat must be
 * initialised. Returns 0 or an exit status.
 */
int mp_capacity(struct cli_ctx *ctx, struct ts_gpu_catalog *cat, const char *sku,
		const char *catalog_file, double gib, const struct ts_gpu **gpu, double *bytes);

/* "none|selective|full" -> enum ts_recompute_granularity; -1 if unknown. */
int mp_parse_recompute(const char *s);
/* Comma-separated module names -> bits; 0 with *bad set to the first
 * unknown name (static buffer) on error. */
int mp_parse_modules(const char *s, const char **bad);
/* Comma-separated "optimizer,activations" (or "none") -> TS_OFFLOAD_* bits; -1 if unknown. */
int mp_parse_offload(const char *s);
/* Module bits as "core_attn,moe_act" into buf ("none" when 0). */
void mp_modules_str(int bits, char *buf, size_t size);
/* Offload bits as "optimizer,activations" into buf ("none" when 0). */
void mp_offload_str(int bits, char *buf, size_t size);
const char *mp_recompute_name(int granularity);
/* "1f1b|dualpipe" -> enum ts_schedule; -1 if unknown. */
int mp_parse_schedule(const char *s);
/* enum ts_schedule -> "1f1b" or "dualpipe", as mp_parse_schedule reads it. */
const char *mp_schedule_name(int schedule);

/* Bytes in GiB. */
static inline double mp_gib(double bytes)
{
	return bytes / (1024.0 * 1024.0 * 1024.0);
}

#endif
