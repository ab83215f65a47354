/*
 * hta_report.c - entry point of the HTA-compatibility mode and its output:
 * runs the preprocessing over all ranks, the analyzers per rank, the
 * cross-rank kernel-type total, and writes the results as JSON (the "hta"
 * object of `trace --json`) and as terminal tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hta_int.h"
#include "trainscope/table.h"

const char *ts_hta_ktype_name(enum ts_hta_ktype t)
{
	switch (t) {
	case TS_HTA_COMM: return "COMMUNICATION";
	case TS_HTA_COMP: return "COMPUTATION";
	case TS_HTA_MEM: return "MEMORY";
	default: return "OTHER";
	}
}

static const char *const idle_cat_name[3] = { "host_wait", "kernel_wait", "other" };

void ts_hta_init(struct ts_hta *h)
{
	memset(h, 0, sizeof(*h));
	ts_arena_init(&h->arena);
}

void ts_hta_release(struct ts_hta *h)
{
	for (size_t k = 0; k < h->nparts; k++)
		ts_hta_part_release(&h->parts[k]);
	free(h->parts);
	ts_arena_release(&h->arena);
	memset(h, 0, sizeof(*h));
}

void ts_hta_part_init(struct ts_hta_part *p)
{
	memset(p, 0, sizeof(*p));
	ts_err_init(&p->filter_err);
	ts_arena_init(&p->arena);
}

void ts_hta_part_release(struct ts_hta_part *p)
{
	ts_arena_release(&p->arena);
	memset(p, 0, sizeof(*p));
}

static int part_variant(struct ts_hta_part *p, const struct hta_frame *f, int v,
			const char *file, int threads)
{
	struct hta_labels lab;
	struct ts_hta_rank *r = &p->rank[v];
	int rc;

	r->rank = f->t->meta.rank >= 0 && f->t->meta.rank_source == 1 ? f->t->meta.rank : 0;
	r->file = file;
	rc = hta_rank_analyze(f, &p->arena, r, &lab, threads);
	if (rc)
		return rc;
	memcpy(p->label_present[v], lab.present, sizeof(lab.present));
	memcpy(p->label_ns[v], lab.sum_ns, sizeof(lab.sum_ns));
	p->have[v] = 1;
	return 0;
}

int ts_hta_part_build(const struct ts_trace *t, struct ts_hta_part *p, int threads,
		      struct ts_err *err)
{
	struct hta_frame f;
	struct hta_pool pool;
	struct ts_intern names;
	const char *file;
	int rc;

	ts_hta_part_init(p);
	ts_intern_init(&names);
	/* 8 bytes per event: 53.5 k -> 49.6 k page faults on the 241 MB
	 * benchmark trace at the same peak RSS; 16 gave 47.2 k at +5 % RSS,
	 * 32 46.1 k at +20 % (and +35 % on the 1 GB trace, past its goal) */
	hta_pool_init(&pool, 8 * t->ev.n);
	rc = hta_frame_base(t, &pool, 1, &f);
	if (rc)
		goto out;
	p->t0_ns = f.t0;
	p->has_rows = f.n > 0;
	for (size_t k = 0; k < f.n; k++) {
		const char *s;
		if (!(f.rows[k].flags & HTA_ROW_STEP))
			continue;
		s = ts_trace_str(t, f.rows[k].name);
		if (ts_intern(&names, s, strlen(s)) < 0) {
			rc = TS_ENOMEM;
			goto out;
		}
	}
	rc = TS_ENOMEM;
	p->step_names = ts_arena_alloc(&p->arena, (names.count + 1) * sizeof(*p->step_names));
	file = ts_arena_strndup(&p->arena, t->path, strlen(t->path));
	if (!p->step_names || !file)
		goto out;
	for (size_t k = 0; k < names.count; k++) {
		p->step_names[k] = ts_arena_strndup(&p->arena, ts_intern_str(&names, (uint32_t)k),
						    ts_intern_len(&names, (uint32_t)k));
		if (!p->step_names[k])
			goto out;
	}
	p->nstep_names = names.count;
	/* with two step names here the filter runs whatever the other ranks
	 * hold; otherwise keep the unfiltered result too */
	if (names.count < 2 && (rc = part_variant(p, &f, 0, file, threads)))
		goto out;
	p->filter_rc = hta_frame_filter(&f, &p->filter_err);
	if (p->filter_rc == TS_ENOMEM) {
		rc = TS_ENOMEM;
		goto out;
	}
	rc = p->filter_rc ? 0 : part_variant(p, &f, 1, file, threads);
out:
	ts_intern_release(&names);
	hta_frame_release(&f);
	hta_pool_release(&pool);
	if (rc == TS_ENOMEM)
		ts_err_set(err, TS_ENOMEM, "out of memory in HTA analysis of %s", t->path);
	return rc;
}

int ts_hta_combine(struct ts_hta_part *parts, size_t nparts, struct ts_hta *out,
		   struct ts_err *err)
{
	struct ts_intern names;
	struct hta_labels total;
	int filter, rc = 0;

	ts_hta_init(out);
	ts_intern_init(&names);
	memset(&total, 0, sizeof(total));
	out->parts = calloc(nparts ? nparts : 1, sizeof(*out->parts));
	out->ranks = ts_arena_alloc(&out->arena, (nparts ? nparts : 1) * sizeof(*out->ranks));
	if (!out->parts || !out->ranks) {
		for (size_t k = 0; k < nparts; k++)
			ts_hta_part_release(&parts[k]);
		rc = TS_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < nparts; k++) {
		out->parts[k] = parts[k];
		memset(&parts[k], 0, sizeof(parts[k]));
	}
	out->nparts = nparts;
	out->t0_ns = INT64_MAX;
	for (size_t k = 0; k < nparts; k++) {
		const struct ts_hta_part *p = &out->parts[k];
		if (p->has_rows && p->t0_ns < out->t0_ns)
			out->t0_ns = p->t0_ns;
		for (size_t i = 0; i < p->nstep_names; i++)
			if (ts_intern(&names, p->step_names[i], strlen(p->step_names[i])) < 0) {
				rc = TS_ENOMEM;
				goto out;
			}
	}
	if (out->t0_ns == INT64_MAX)
		out->t0_ns = 0;
	filter = names.count >= 2;
	for (size_t k = 0; k < nparts; k++) {
		const struct ts_hta_part *p = &out->parts[k];
		int v = filter;
		if (v && p->filter_rc) {
			rc = p->filter_rc;
			if (err)
				*err = p->filter_err;
			goto out;
		}
		if (!p->have[v]) {
			rc = ts_err_set(err, TS_EINTERNAL, "HTA part %zu lacks its %s result", k,
					v ? "filtered" : "unfiltered");
			goto out;
		}
		out->ranks[k] = p->rank[v];
		for (int b = 0; b < 8; b++) {
			total.present[b] |= p->label_present[v][b];
			total.sum_ns[b] += p->label_ns[v][b];
		}
	}
	out->nranks = nparts;
	rc = hta_labels_emit(&total, &out->arena, &out->ktype, &out->nktype);
out:
	ts_intern_release(&names);
	if (rc == TS_ENOMEM)
		ts_err_set(err, TS_ENOMEM, "out of memory in HTA analysis");
	return rc;
}

int ts_hta_analyze(const struct ts_trace *const *ranks, size_t nranks,
		   struct ts_hta *out, struct ts_err *err)
{
	struct ts_hta_part *parts = calloc(nranks ? nranks : 1, sizeof(*parts));
	int rc = 0;

	if (!parts) {
		ts_hta_init(out);
		return ts_err_set(err, TS_ENOMEM, "out of memory in HTA analysis");
	}
	for (size_t k = 0; k < nranks && !rc; k++)
		rc = ts_hta_part_build(ranks[k], &parts[k], 1, err);
	if (rc) {
		for (size_t k = 0; k < nranks; k++)
			ts_hta_part_release(&parts[k]);
		free(parts);
		ts_hta_init(out);
		return rc;
	}
	rc = ts_hta_combine(parts, nranks, out, err);
	free(parts);
	return rc;
}

static void write_kstats(struct ts_jw *w, const char *key,
			 const struct ts_hta_kstat *k, size_t n)
{
	ts_jw_key(w, key);
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		ts_jw_obj(w);
		ts_jw_kstr(w, "name", k[i].name);
		ts_jw_kstr(w, "kernel_type", ts_hta_ktype_name(k[i].type));
		ts_jw_ki64(w, "count", k[i].count);
		ts_jw_kf64(w, "sum_us", k[i].sum_us);
		ts_jw_kf64(w, "max_us", k[i].max_us);
		ts_jw_kf64(w, "min_us", k[i].min_us);
		ts_jw_kf64(w, "mean_us", k[i].mean_us);
		ts_jw_kf64(w, "stddev_us", k[i].std_us);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
}

void ts_hta_write_json(const struct ts_hta *h, size_t rank_index, struct ts_jw *w)
{
	const struct ts_hta_rank *r = &h->ranks[rank_index];

	ts_jw_obj(w);
	ts_jw_kbool(w, "rounded_to_us", r->rounded);
	ts_jw_kbool(w, "last_step_dropped", r->filtered);
	ts_jw_ki64(w, "gpu_kernels", (int64_t)r->nkernels);
	if (r->nkernels == 0)
		ts_jw_kstr(w, "note", "no GPU kernels");
	ts_jw_key(w, "profiler_steps");
	ts_jw_arr(w);
	for (size_t i = 0; i < r->nsteps; i++)
		ts_jw_i64(w, r->steps[i]);
	ts_jw_arr_end(w);
	ts_jw_kf64(w, "idle_time_us", r->idle_us);
	ts_jw_kf64(w, "compute_time_us", r->compute_us);
	ts_jw_kf64(w, "non_compute_time_us", r->non_compute_us);
	ts_jw_kf64(w, "kernel_time_us", r->kernel_us);
	ts_jw_kf64(w, "idle_time_pct", r->idle_pct);
	ts_jw_kf64(w, "compute_time_pct", r->compute_pct);
	ts_jw_kf64(w, "non_compute_time_pct", r->non_compute_pct);
	ts_jw_kf64(w, "comp_comm_overlap_pct", r->overlap_pct);
	ts_jw_key(w, "kernel_type");
	ts_jw_arr(w);
	for (size_t i = 0; i < r->nktype; i++) {
		ts_jw_obj(w);
		ts_jw_kstr(w, "kernel_type", r->ktype[i].label);
		ts_jw_kf64(w, "sum_us", r->ktype[i].sum_us);
		ts_jw_kf64(w, "pct", r->ktype[i].pct);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	write_kstats(w, "kernels", r->kernels, r->nkernels_tab);
	write_kstats(w, "kernels_all", r->kernels_all, r->nkernels_all);
	ts_jw_key(w, "idle_breakdown");
	ts_jw_arr(w);
	for (size_t i = 0; i < r->nidle; i++)
		for (int c = 0; c < 3; c++) {
			if (!r->idle[i].present[c])
				continue;
			ts_jw_obj(w);
			ts_jw_ki64(w, "stream", r->idle[i].stream);
			ts_jw_kstr(w, "idle_category", idle_cat_name[c]);
			ts_jw_kf64(w, "idle_time_us", r->idle[i].idle_us[c]);
			ts_jw_kf64(w, "idle_time_ratio", r->idle[i].ratio[c]);
			ts_jw_obj_end(w);
		}
	ts_jw_arr_end(w);
	ts_jw_key(w, "launch_stats");
	ts_jw_obj(w);
	ts_jw_ki64(w, "n", r->launch.n);
	ts_jw_kf64(w, "sum_launch_delay_us", r->launch.sum_launch_delay_us);
	ts_jw_ki64(w, "n_launch_delay_gt_100us", r->launch.n_launch_delay_gt_100us);
	ts_jw_ki64(w, "n_cpu_dur_gt_50us", r->launch.n_cpu_dur_gt_50us);
	ts_jw_ki64(w, "n_gpu_shorter_than_cpu", r->launch.n_gpu_shorter_than_cpu);
	ts_jw_obj_end(w);
	ts_jw_key(w, "queue_length");
	ts_jw_arr(w);
	for (size_t i = 0; i < r->nqueue; i++) {
		const struct ts_hta_queue *q = &r->queue[i];
		ts_jw_obj(w);
		ts_jw_ki64(w, "stream", q->stream);
		ts_jw_kf64(w, "count", q->count);
		ts_jw_kf64(w, "mean", q->mean);
		ts_jw_kf64(w, "std", q->std);
		ts_jw_kf64(w, "min", q->min);
		ts_jw_kf64(w, "p25", q->p25);
		ts_jw_kf64(w, "p50", q->p50);
		ts_jw_kf64(w, "p75", q->p75);
		ts_jw_kf64(w, "max", q->max);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
	ts_jw_obj_end(w);
}

static const char *fmt_num(char *buf, size_t size, double v, int decimals)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", decimals, v);
	return buf;
}

static void render_rank(const struct ts_hta_rank *r, struct ts_sb *out)
{
	struct ts_table t;
	char b[7][48];

	ts_sb_addf(out, "HTA rank %lld  %s\n", (long long)r->rank, r->file ? r->file : "");
	if (r->nkernels == 0) {
		ts_sb_adds(out, "  no GPU kernels\n\n");
		return;
	}
	ts_table_init(&t);
	ts_table_col(&t, "kernel", "us", TS_RIGHT, 0);
	ts_table_col(&t, "idle", "us", TS_RIGHT, 0);
	ts_table_col(&t, "compute", "us", TS_RIGHT, 0);
	ts_table_col(&t, "non-compute", "us", TS_RIGHT, 0);
	ts_table_col(&t, "idle", "%", TS_RIGHT, 0);
	ts_table_col(&t, "compute", "%", TS_RIGHT, 0);
	ts_table_col(&t, "comp/comm overlap", "%", TS_RIGHT, 0);
	ts_table_cell(&t, "%s", fmt_num(b[0], 48, r->kernel_us, 0));
	ts_table_cell(&t, "%s", fmt_num(b[1], 48, r->idle_us, 0));
	ts_table_cell(&t, "%s", fmt_num(b[2], 48, r->compute_us, 0));
	ts_table_cell(&t, "%s", fmt_num(b[3], 48, r->non_compute_us, 0));
	ts_table_cell(&t, "%s", fmt_num(b[4], 48, r->idle_pct, 2));
	ts_table_cell(&t, "%s", fmt_num(b[5], 48, r->compute_pct, 2));
	ts_table_cell(&t, "%s", fmt_num(b[6], 48, r->overlap_pct, 2));
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addc(out, '\n');

	ts_table_init(&t);
	ts_table_col(&t, "kernel type", NULL, TS_LEFT, 0);
	ts_table_col(&t, "time", "us", TS_RIGHT, 0);
	ts_table_col(&t, "share", "%", TS_RIGHT, 0);
	for (size_t i = 0; i < r->nktype; i++) {
		ts_table_cell(&t, "%s", r->ktype[i].label);
		ts_table_cell(&t, "%s", fmt_num(b[0], 48, r->ktype[i].sum_us, 0));
		ts_table_cell(&t, "%s", fmt_num(b[1], 48, r->ktype[i].pct, 1));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addc(out, '\n');

	ts_table_init(&t);
	ts_table_col(&t, "type", NULL, TS_LEFT, 0);
	ts_table_col(&t, "kernel", NULL, TS_LEFT, 60);
	ts_table_col(&t, "count", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "sum", "us", TS_RIGHT, 0);
	ts_table_col(&t, "mean", "us", TS_RIGHT, 0);
	ts_table_col(&t, "max", "us", TS_RIGHT, 0);
	for (size_t i = 0; i < r->nkernels_tab; i++) {
		const struct ts_hta_kstat *k = &r->kernels[i];
		ts_table_cell(&t, "%s", ts_hta_ktype_name(k->type));
		ts_table_cell(&t, "%s", k->name);
		ts_table_cell(&t, "%lld", (long long)k->count);
		ts_table_cell(&t, "%s", fmt_num(b[0], 48, k->sum_us, 0));
		ts_table_cell(&t, "%s", fmt_num(b[1], 48, k->mean_us, 1));
		ts_table_cell(&t, "%s", fmt_num(b[2], 48, k->max_us, 0));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_adds(out, "  (as in HTA, a named row past the top 10 folds into \"others\"; kept rows "
		   "are regrouped sums, so their mean and max equal the sum)\n\n");

	ts_table_init(&t);
	ts_table_col(&t, "stream", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "idle category", NULL, TS_LEFT, 0);
	ts_table_col(&t, "idle", "us", TS_RIGHT, 0);
	ts_table_col(&t, "ratio", NULL, TS_RIGHT, 0);
	for (size_t i = 0; i < r->nidle; i++)
		for (int c = 0; c < 3; c++) {
			if (!r->idle[i].present[c])
				continue;
			ts_table_cell(&t, "%lld", (long long)r->idle[i].stream);
			ts_table_cell(&t, "%s", idle_cat_name[c]);
			ts_table_cell(&t, "%s", fmt_num(b[0], 48, r->idle[i].idle_us[c], 0));
			ts_table_cell(&t, "%s", fmt_num(b[1], 48, r->idle[i].ratio[c], 2));
		}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addc(out, '\n');

	ts_sb_addf(out, "  launches %lld, launch delay sum %s us, delay > 100 us: %lld, "
		   "runtime > 50 us: %lld, kernel shorter than its launch: %lld\n\n",
		   (long long)r->launch.n, fmt_num(b[0], 48, r->launch.sum_launch_delay_us, 0),
		   (long long)r->launch.n_launch_delay_gt_100us,
		   (long long)r->launch.n_cpu_dur_gt_50us,
		   (long long)r->launch.n_gpu_shorter_than_cpu);

	ts_table_init(&t);
	ts_table_col(&t, "stream", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "queue points", NULL, TS_RIGHT, 0);
	ts_table_col(&t, "mean", "ops", TS_RIGHT, 0);
	ts_table_col(&t, "p50", "ops", TS_RIGHT, 0);
	ts_table_col(&t, "max", "ops", TS_RIGHT, 0);
	for (size_t i = 0; i < r->nqueue; i++) {
		const struct ts_hta_queue *q = &r->queue[i];
		ts_table_cell(&t, "%lld", (long long)q->stream);
		ts_table_cell(&t, "%s", fmt_num(b[0], 48, q->count, 0));
		ts_table_cell(&t, "%s", fmt_num(b[1], 48, q->mean, 2));
		ts_table_cell(&t, "%s", fmt_num(b[2], 48, q->p50, 1));
		ts_table_cell(&t, "%s", fmt_num(b[3], 48, q->max, 0));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);
	ts_sb_addc(out, '\n');
}

void ts_hta_render(const struct ts_hta *h, struct ts_sb *out)
{
	for (size_t r = 0; r < h->nranks; r++)
		render_rank(&h->ranks[r], out);
}
