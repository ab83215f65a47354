/*
 * memplan.c - model loading, device capacity and option values shared by
 * cmd_memory.c and cmd_plan.c, so both commands read the same inputs the
 * same way.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "memplan.h"
#include "trainscope/input.h"

void mp_model_assumed(const struct ts_model *m, const char *path, struct ts_warnings *wn)
{
	if (!wn || m->heads <= 0 || m->hidden <= 0)
		return;
	if (m->kv_heads == 0 && !m->mla)
		ts_warnings_add(wn, "model-value-assumed", path, -1, TS_NO_INT,
				"%s: no key/value head count: %lld (one per head, multi-head attention) assumed",
				path, (long long)m->heads);
	if (m->head_dim == 0 && !m->mla && m->hidden % m->heads == 0)
		ts_warnings_add(wn, "model-value-assumed", path, -1, TS_NO_INT,
				"%s: no head dim: hidden / heads = %lld assumed", path,
				(long long)(m->hidden / m->heads));
	if (m->ffn_hidden == 0)
		ts_warnings_add(wn, "model-value-assumed", path, -1, TS_NO_INT,
				"%s: no FFN width: 4 x hidden = %lld assumed", path, (long long)(4 * m->hidden));
	if (!m->gated_mlp_set)
		ts_warnings_add(wn, "model-value-assumed", path, -1, TS_NO_INT,
				"%s: no activation: a gated MLP (SwiGLU) assumed", path);
	if (m->num_experts > 0 && m->moe_ffn_hidden == 0)
		ts_warnings_add(wn, "model-value-assumed", path, -1, TS_NO_INT,
				"%s: no expert FFN width: the dense FFN width assumed", path);
}

void mp_params_str(const struct ts_model *m, char *buf, size_t size)
{
	struct ts_model_params p;

	ts_model_params(m, m->vocab > 0 ? m->vocab : m->padded_vocab, &p);
	snprintf(buf, size, "%.3f B total, %.3f B active", p.total / 1e9, p.active / 1e9);
}

void mp_params_json(struct ts_jw *w, const struct ts_model *m)
{
	struct ts_model_params p;

	ts_model_params(m, m->vocab > 0 ? m->vocab : m->padded_vocab, &p);
	ts_jw_ki64(w, "total_params", (int64_t)llround(p.total));
	ts_jw_ki64(w, "active_params", (int64_t)llround(p.active));
}

int mp_load_model(struct cli_ctx *ctx, const char *path, struct ts_model *m,
		  struct ts_model_args *a, int *have_args)
{
	return mp_load_model_warn(ctx, path, m, a, have_args, NULL);
}

int mp_load_model_warn(struct cli_ctx *ctx, const char *path, struct ts_model *m,
		       struct ts_model_args *a, int *have_args, struct ts_warnings *wn)
{
	struct ts_err err;
	struct ts_input in;
	size_t i = 0;
	int rc;

	ts_err_init(&err);
	ts_model_init(m);
	ts_model_args_init(a);
	*have_args = 0;
	/* look at the first byte (plain, gzip or a pipe: a pipe's start is
	 * handed on), then read a config whole (capped like every small
	 * document) or stream a log up to the end of its arguments block */
	if ((rc = ts_input_open_peek(&in, path, &err)))
		return cli_fail(ctx, &err);
	int json = 0;
	for (;;) {
		while (i < in.len && (in.data[i] == ' ' || in.data[i] == '\t' ||
				      in.data[i] == '\n' || in.data[i] == '\r'))
			i++;
		if (i < in.len || in.eof)
			break;
		int64_t got = ts_input_more(&in, 0, &err);
		if (got < 0) {
			ts_input_release(&in);
			return cli_fail(ctx, &err);
		}
	}
	json = i == in.len || in.data[i] == '{';
	if ((rc = ts_input_release_keep(&in, 0, &err)))
		return cli_fail(ctx, &err);
	if (json) {
		if ((rc = ts_input_read_all(&in, path, TS_DOC_MAX_BYTES, &err)))
			return cli_fail(ctx, &err);
		rc = ts_model_parse_config(m, in.data, in.len, in.path, &err);
		ts_input_release(&in);
	} else {
		rc = ts_model_read_megatron_args(m, a, path, &err);
		*have_args = rc == 0;
	}
	if (rc == 0) {
		mp_model_assumed(m, path, wn);
		ts_model_unmodelled(m, path, wn);
		rc = ts_model_finish(m, &err);
	}
	return rc ? cli_fail(ctx, &err) : 0;
}

int mp_capacity(struct cli_ctx *ctx, struct ts_gpu_catalog *cat, const char *sku,
		const char *catalog_file, double gib, const struct ts_gpu **gpu, double *bytes)
{
	struct ts_err err;

	ts_err_init(&err);
	*gpu = NULL;
	*bytes = 0;
	if (catalog_file && ts_gpu_catalog_load(cat, catalog_file, &err))
		return cli_fail(ctx, &err);
	if (sku) {
		*gpu = ts_gpu_find(cat, sku);
		if (!*gpu) {
			cli_error(ctx, "--gpu: '%s' is not in the catalog", sku);
			fprintf(stderr, "hint: give --gpu-mem GiB, or add the device with --gpu-catalog FILE\n");
			return EXIT_USAGE;
		}
		*bytes = (double)(*gpu)->memory_bytes;
		if (*bytes <= 0 && gib <= 0) {
			cli_error(ctx, "--gpu %s: the catalog states no memory size; give --gpu-mem GiB",
				  (*gpu)->sku);
			return EXIT_USAGE;
		}
	}
	if (gib > 0)
		*bytes = gib * 1024.0 * 1024.0 * 1024.0;
	return 0;
}

int mp_parse_recompute(const char *s)
{
	if (strcmp(s, "none") == 0)
		return TS_RC_NONE;
	if (strcmp(s, "selective") == 0)
		return TS_RC_SELECTIVE;
	if (strcmp(s, "full") == 0)
		return TS_RC_FULL;
	return -1;
}

const char *mp_recompute_name(int granularity)
{
	return granularity == TS_RC_FULL ? "full" : granularity == TS_RC_SELECTIVE ? "selective" : "none";
}

int mp_parse_modules(const char *s, const char **bad)
{
	static char name[64];
	int bits = 0;

	*bad = NULL;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		int b = ts_recompute_module_parse(s, n);
		if (!b) {
			snprintf(name, sizeof(name), "%.*s", (int)(n < 60 ? n : 60), s);
			*bad = name;
			return 0;
		}
		bits |= b;
		s += n;
		if (*s == ',')
			s++;
	}
	return bits;
}

int mp_parse_schedule(const char *s)
{
	if (strcmp(s, "1f1b") == 0)
		return TS_SCHED_1F1B;
	if (strcmp(s, "dualpipe") == 0)
		return TS_SCHED_DUALPIPE;
	return -1;
}

const char *mp_schedule_name(int schedule)
{
	return schedule == TS_SCHED_DUALPIPE ? "dualpipe" : "1f1b";
}

int mp_parse_offload(const char *s)
{
	int bits = 0;

	if (strcmp(s, "none") == 0)
		return 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 9 && memcmp(s, "optimizer", 9) == 0)
			bits |= TS_OFFLOAD_OPTIMIZER;
		else if (n == 11 && memcmp(s, "activations", 11) == 0)
			bits |= TS_OFFLOAD_ACTIVATIONS;
		else
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	return bits;
}

static void join(struct ts_sb *sb, const char *name)
{
	if (sb->len)
		ts_sb_addc(sb, ',');
	ts_sb_adds(sb, name);
}

void mp_modules_str(int bits, char *buf, size_t size)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	for (int i = 0; i < TS_MEM_NMODULES; i++)
		if (bits & (1 << i))
			join(&sb, ts_recompute_module_name(1 << i));
	snprintf(buf, size, "%s", sb.len ? sb.buf : "none");
	ts_sb_release(&sb);
}

void mp_offload_str(int bits, char *buf, size_t size)
{
	snprintf(buf, size, "%s", bits == (TS_OFFLOAD_OPTIMIZER | TS_OFFLOAD_ACTIVATIONS) ?
		 "optimizer,activations" : bits == TS_OFFLOAD_OPTIMIZER ? "optimizer" :
		 bits == TS_OFFLOAD_ACTIVATIONS ? "activations" : "none");
}
