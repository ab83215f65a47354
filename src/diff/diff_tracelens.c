/*
 * diff_tracelens.c - `diff --tracelens-compat`: TraceLens's gpu_timeline
 * comparison and a kernel-family table that lines up vendors.
 *
 * TraceLens compares two perf reports sheet by sheet; for gpu_timeline it
 * merges on `type` and adds `time ms__<variant>_diff` (variant - baseline)
 * and `time ms__<variant>_pct` (100 * diff / baseline, empty when the
 * baseline is 0). Each side's timeline is TraceLens's own
 * (src/tracelens/), so the comparison is a subtraction; the family table is
 * trainscope's: kernel names differ across vendors (sm90_xmma_gemm_* vs
 * Cijk_*, flash_fwd vs aiter fmha_fwd), the families do not.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/diffcompat.h"
#include "trainscope/table.h"
#include "trainscope/taxonomy.h"

const char *ts_diff_tl_metric_name(enum ts_diff_tl_metric m)
{
	static const char *const n[] = { "busy_time", "computation_time", "exposed_comm_time",
					 "exposed_memcpy_time", "idle_time", "total_comm_time",
					 "total_memcpy_time", "total_time" };
	return (unsigned)m < TS_DIFF_TL_NMETRIC ? n[m] : "";
}

const char *ts_diff_family_name(enum ts_diff_family f)
{
	static const char *const n[] = {
		"gemm", "attention_fwd", "attention_bwd", "allreduce", "allgather",
		"reducescatter", "alltoall", "sendrecv", "broadcast", "comm_other",
		"elementwise", "reduction", "norm", "optimizer", "memcpy", "memset",
		"triton", "embedding", "other"
	};
	return (unsigned)f < TS_DF_COUNT ? n[f] : "other";
}

static int any(const char *s, size_t n, const char *const *pats)
{
	for (; *pats; pats++)
		if (ts_name_contains(s, n, *pats))
			return 1;
	return 0;
}

enum ts_diff_family ts_diff_family_of(const char *name, size_t n, int is_memcpy, int is_memset)
{
	static const char *const bwd[] = { "bwd", "backward", "grad", "cutlassb", NULL };
	static const char *const ar[] = { "allreduce", "all_reduce", "cross_device_reduce", NULL };
	static const char *const ag[] = { "allgather", "all_gather", NULL };
	static const char *const rs[] = { "reducescatter", "reduce_scatter", NULL };
	static const char *const a2a[] = { "alltoall", "all_to_all", NULL };
	static const char *const sr[] = { "sendrecv", "send", "recv", NULL };
	static const char *const bc[] = { "broadcast", "bcast", NULL };

	switch (ts_kclass_of(name, n, is_memcpy, is_memset)) {
	case TS_KC_COMM:
		if (any(name, n, rs))
			return TS_DF_REDUCESCATTER;
		if (any(name, n, ar))
			return TS_DF_ALLREDUCE;
		if (any(name, n, ag))
			return TS_DF_ALLGATHER;
		if (any(name, n, a2a))
			return TS_DF_ALLTOALL;
		if (any(name, n, sr))
			return TS_DF_SENDRECV;
		if (any(name, n, bc))
			return TS_DF_BROADCAST;
		return TS_DF_COMM_OTHER;
	case TS_KC_GEMM: return TS_DF_GEMM;
	case TS_KC_ATTENTION: return any(name, n, bwd) ? TS_DF_ATTN_BWD : TS_DF_ATTN_FWD;
	case TS_KC_MEMCPY: return TS_DF_MEMCPY;
	case TS_KC_MEMSET: return TS_DF_MEMSET;
	case TS_KC_NORM: return TS_DF_NORM;
	case TS_KC_OPTIMIZER: return TS_DF_OPTIMIZER;
	case TS_KC_REDUCTION: return TS_DF_REDUCTION;
	case TS_KC_ELEMENTWISE: return TS_DF_ELEMENTWISE;
	case TS_KC_TRITON: return TS_DF_TRITON;
	case TS_KC_EMBEDDING: return TS_DF_EMBEDDING;
	default: return TS_DF_OTHER;
	}
}

struct fam_side {
	int64_t count[TS_DF_COUNT];
	int64_t ns[TS_DF_COUNT];
	int64_t names[TS_DF_COUNT];
};

/* Family totals of one trace: each interned name classified once. */
static int families(const struct ts_trace *t, struct fam_side *fs, struct ts_err *err)
{
	const struct ts_trace_events *ev = &t->ev;
	uint8_t *fam = malloc(t->strings.count + 1);
	uint8_t *seen = calloc(t->strings.count + 1, 1);

	memset(fs, 0, sizeof(*fs));
	if (!fam || !seen) {
		free(fam);
		free(seen);
		return ts_err_set(err, TS_ENOMEM, "out of memory in the family table of %s", t->path);
	}
	memset(fam, 0xff, t->strings.count + 1);
	for (size_t i = 0; i < ev->n; i++) {
		int c = ev->cat[i];
		uint32_t id = ev->name[i];
		if ((c != TS_CAT_KERNEL && c != TS_CAT_MEMCPY && c != TS_CAT_MEMSET) ||
		    ts_ev_dur(ev, i) == TS_NONE || ev->ph[i] != 'X' || id >= t->strings.count)
			continue;
		if (fam[id] == 0xff)
			fam[id] = (uint8_t)ts_diff_family_of(ts_intern_str(&t->strings, id),
							     ts_intern_len(&t->strings, id),
							     c == TS_CAT_MEMCPY, c == TS_CAT_MEMSET);
		fs->count[fam[id]]++;
		fs->ns[fam[id]] += ts_ev_dur(ev, i);
		if (!seen[id]) {
			seen[id] = 1;
			fs->names[fam[id]]++;
		}
	}
	free(fam);
	free(seen);
	return 0;
}

static void metrics(const struct ts_tl_timeline *tl, double v[TS_DIFF_TL_NMETRIC])
{
	v[TS_DIFF_TL_BUSY] = tl->busy_us;
	v[TS_DIFF_TL_COMPUTATION] = tl->computation_us;
	v[TS_DIFF_TL_EXPOSED_COMM] = tl->exposed_comm_us;
	v[TS_DIFF_TL_EXPOSED_MEMCPY] = tl->exposed_memcpy_us;
	v[TS_DIFF_TL_IDLE] = tl->idle_us;
	v[TS_DIFF_TL_TOTAL_COMM] = tl->total_comm_us;
	v[TS_DIFF_TL_TOTAL_MEMCPY] = tl->total_memcpy_us;
	v[TS_DIFF_TL_TOTAL] = tl->total_us;
}

int ts_diff_tracelens_compare(const struct ts_trace *baseline, const struct ts_trace *variant,
			      struct ts_diff_tracelens *out, struct ts_err *err)
{
	double b[TS_DIFF_TL_NMETRIC], v[TS_DIFF_TL_NMETRIC];
	struct fam_side fb, fv;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = ts_tracelens_analyze(baseline, 0, &out->base, err)) ||
	    (rc = ts_tracelens_analyze(variant, 0, &out->var, err)))
		return rc;
	metrics(&out->base.all, b);
	metrics(&out->var.all, v);
	for (int m = 0; m < TS_DIFF_TL_NMETRIC; m++) {
		struct ts_diff_tl_row *r = &out->rows[m];
		r->baseline_us = b[m];
		r->variant_us = v[m];
		r->baseline_pct = b[TS_DIFF_TL_TOTAL] > 0 ? 100.0 * b[m] / b[TS_DIFF_TL_TOTAL] : NAN;
		r->variant_pct = v[TS_DIFF_TL_TOTAL] > 0 ? 100.0 * v[m] / v[TS_DIFF_TL_TOTAL] : NAN;
		r->diff_us = v[m] - b[m];
		r->diff_pct = b[m] != 0 ? 100.0 * r->diff_us / b[m] : NAN;
	}
	if ((rc = families(baseline, &fb, err)) || (rc = families(variant, &fv, err)))
		return rc;
	for (int f = 0; f < TS_DF_COUNT; f++) {
		struct ts_diff_tl_family_row *r;
		if (!fb.count[f] && !fv.count[f])
			continue;
		r = &out->fam[out->nfam++];
		r->family = (enum ts_diff_family)f;
		r->baseline_count = fb.count[f];
		r->variant_count = fv.count[f];
		r->baseline_us = (double)fb.ns[f] / 1000.0;
		r->variant_us = (double)fv.ns[f] / 1000.0;
		r->diff_us = r->variant_us - r->baseline_us;
		r->baseline_names = fb.names[f];
		r->variant_names = fv.names[f];
	}
	return 0;
}

void ts_diff_tracelens_write_json(const struct ts_diff_tracelens *d, struct ts_jw *w)
{
	ts_jw_obj(w);
	ts_jw_key(w, "gpu_timeline");
	ts_jw_arr(w);
	for (int m = 0; m < TS_DIFF_TL_NMETRIC; m++) {
		const struct ts_diff_tl_row *r = &d->rows[m];
		ts_jw_obj(w);
		ts_jw_kstr(w, "type", ts_diff_tl_metric_name((enum ts_diff_tl_metric)m));
		ts_jw_kf64(w, "baseline_ms", r->baseline_us / 1000.0);
		ts_jw_kf64(w, "variant_ms", r->variant_us / 1000.0);
		ts_jw_kf64(w, "diff_ms", r->diff_us / 1000.0);
		ts_jw_kf64(w, "diff_pct", r->diff_pct);
		ts_jw_kf64(w, "baseline_pct_of_total", r->baseline_pct);
		ts_jw_kf64(w, "variant_pct_of_total", r->variant_pct);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_key(w, "families");
	ts_jw_arr(w);
	for (size_t k = 0; k < d->nfam; k++) {
		const struct ts_diff_tl_family_row *r = &d->fam[k];
		ts_jw_obj(w);
		ts_jw_kstr(w, "family", ts_diff_family_name(r->family));
		ts_jw_ki64(w, "baseline_count", r->baseline_count);
		ts_jw_ki64(w, "variant_count", r->variant_count);
		ts_jw_kf64(w, "baseline_us", r->baseline_us);
		ts_jw_kf64(w, "variant_us", r->variant_us);
		ts_jw_kf64(w, "diff_us", r->diff_us);
		ts_jw_ki64(w, "baseline_kernel_names", r->baseline_names);
		ts_jw_ki64(w, "variant_kernel_names", r->variant_names);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_obj_end(w);
}

static void pct_cell(struct ts_table *tb, double v)
{
	if (isnan(v))
		ts_table_cell(tb, "-");
	else
		ts_table_cell_fixed(tb, v, 2);
}

void ts_diff_tracelens_render(const struct ts_diff_tracelens *d, struct ts_sb *out)
{
	struct ts_table tb;

	ts_sb_adds(out, "TraceLens gpu_timeline comparison (variant - baseline)\n");
	ts_table_init(&tb);
	ts_table_col(&tb, "type", NULL, TS_LEFT, 0);
	ts_table_col(&tb, "baseline", "ms", TS_RIGHT, 0);
	ts_table_col(&tb, "baseline", "%", TS_RIGHT, 0);
	ts_table_col(&tb, "variant", "ms", TS_RIGHT, 0);
	ts_table_col(&tb, "variant", "%", TS_RIGHT, 0);
	ts_table_col(&tb, "diff", "ms", TS_RIGHT, 0);
	ts_table_col(&tb, "diff", "%", TS_RIGHT, 0);
	for (int m = 0; m < TS_DIFF_TL_NMETRIC; m++) {
		const struct ts_diff_tl_row *r = &d->rows[m];
		ts_table_cell(&tb, "%s", ts_diff_tl_metric_name((enum ts_diff_tl_metric)m));
		ts_table_cell_fixed(&tb, r->baseline_us / 1000.0, 3);
		pct_cell(&tb, r->baseline_pct);
		ts_table_cell_fixed(&tb, r->variant_us / 1000.0, 3);
		pct_cell(&tb, r->variant_pct);
		ts_table_cell_fixed(&tb, r->diff_us / 1000.0, 3);
		pct_cell(&tb, r->diff_pct);
	}
	ts_table_render(&tb, out, 2);
	ts_table_release(&tb);

	ts_sb_adds(out, "\nKernel families (all GPU kernels, copies and sets)\n");
	ts_table_init(&tb);
	ts_table_col(&tb, "family", NULL, TS_LEFT, 0);
	ts_table_col(&tb, "baseline", "count", TS_RIGHT, 0);
	ts_table_col(&tb, "variant", "count", TS_RIGHT, 0);
	ts_table_col(&tb, "baseline", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "variant", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "diff", "us", TS_RIGHT, 0);
	ts_table_col(&tb, "baseline", "names", TS_RIGHT, 0);
	ts_table_col(&tb, "variant", "names", TS_RIGHT, 0);
	for (size_t k = 0; k < d->nfam; k++) {
		const struct ts_diff_tl_family_row *r = &d->fam[k];
		ts_table_cell(&tb, "%s", ts_diff_family_name(r->family));
		ts_table_cell_i64(&tb, r->baseline_count);
		ts_table_cell_i64(&tb, r->variant_count);
		ts_table_cell_fixed(&tb, r->baseline_us, 3);
		ts_table_cell_fixed(&tb, r->variant_us, 3);
		ts_table_cell_fixed(&tb, r->diff_us, 3);
		ts_table_cell_i64(&tb, r->baseline_names);
		ts_table_cell_i64(&tb, r->variant_names);
	}
	ts_table_render(&tb, out, 2);
	ts_table_release(&tb);
}
