/*
 * trace_nsys.c - Nsight Systems exports in `trace`: slots per rank, the
 * capability report, joins and device walls, and the nsys stats reports.
 * The analyses are the library's (nsys.h, profile.h); this file only
 * expands inputs and renders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "trainscope/run.h"
#include "trace_nsys.h"
#include "trainscope/detect.h"

int trace_nsys_is(const char *path)
{
	struct ts_detect d;
	struct ts_err err;
	struct stat sb;

	/* SQLite needs a seekable file; a pipe must stay unread for the
	 * trace reader */
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	ts_err_init(&err);
	/* any SQLite file: the nsys reader says why it is not an export */
	return ts_detect_file(path, &d, &err) == 0 &&
	       (d.kind == TS_KIND_NSYS_SQLITE || d.kind == TS_KIND_SQLITE);
}

static void copy_facts(struct trace_nsys_slot *s, const struct ts_nsys *x)
{
	snprintf(s->schema, sizeof(s->schema), "%s", x->schema);
	snprintf(s->product, sizeof(s->product), "%s", x->product);
	s->caps = x->caps;
	s->joins = x->joins;
	memcpy(s->null_end, x->null_end, sizeof(s->null_end));
	s->gaps = x->gaps;
	s->nccl_nvtx_ranges = x->nccl_nvtx_ranges;
	s->window_lo_ns = x->window_lo_ns;
	s->window_hi_ns = x->window_hi_ns;
	s->nranks = x->ranks.n;
}

int trace_nsys_expand(struct cli_ctx *ctx, struct ts_paths *files, struct trace_nsys_slot **out)
{
	struct ts_paths exp;
	struct trace_nsys_slot *ns = NULL;
	size_t cap = 0, n = 0;
	struct ts_err err;
	int rc = 0;

	*out = NULL;
	ts_paths_init(&exp);
	ts_err_init(&err);
	for (size_t i = 0; i < files->n; i++) {
		struct ts_nsys x;
		size_t k, nr = 1;
		int is = trace_nsys_is(files->v[i]);
		ts_nsys_init(&x);
		if (is) {
			if (ts_nsys_open(&x, files->v[i], &err) || ts_nsys_survey(&x, &err)) {
				rc = cli_fail(ctx, &err);
				ts_nsys_close(&x);
				goto out;
			}
			nr = x.ranks.n;
			if (!nr) {
				cli_error(ctx, "%s: Nsight Systems export without GPU activity (no kernel, memcpy or"
					       " memset rows%s): nothing for trace to break down",
					  files->v[i], x.caps.kernels ? "" : "; no CUPTI_ACTIVITY_KIND_KERNEL table");
				fprintf(stderr, "hint: trainscope trace --report cuda_api_sum|nvtx_sum %s still"
						" summarises what it holds\n", files->v[i]);
				rc = EXIT_USAGE;
				ts_nsys_close(&x);
				goto out;
			}
		}
		for (k = 0; k < nr; k++) {
			if (n == cap) {
				size_t c2 = cap ? 2 * cap : 8;
				struct trace_nsys_slot *p = realloc(ns, c2 * sizeof(*p));
				if (!p) {
					cli_error(ctx, "out of memory");
					rc = EXIT_INTERNAL;
					ts_nsys_close(&x);
					goto out;
				}
				ns = p;
				cap = c2;
			}
			memset(&ns[n], 0, sizeof(ns[n]));
			if (is) {
				ns[n].is_nsys = 1;
				ns[n].rank = k;
				ns[n].first = k == 0;
				ns[n].rk = x.ranks.v[k];
				copy_facts(&ns[n], &x);
			}
			n++;
			if (ts_paths_add(&exp, files->v[i], 0, &err)) {
				rc = cli_fail(ctx, &err);
				ts_nsys_close(&x);
				goto out;
			}
		}
		ts_nsys_close(&x);
	}
	ts_paths_release(files);
	*files = exp;
	ts_paths_init(&exp);
	*out = ns;
	ns = NULL;
out:
	free(ns);
	ts_paths_release(&exp);
	return rc;
}

int trace_nsys_read(struct trace_nsys_slot *ns, const char *path, const struct ts_nsys_read_opts *o,
		    struct ts_trace *t, struct ts_err *err)
{
	struct ts_nsys x;
	struct ts_dev_walls *w = NULL;
	size_t nw = 0;
	int rc;

	ts_nsys_init(&x);
	rc = ts_nsys_open(&x, path, err);
	if (!rc)
		rc = ts_nsys_survey(&x, err);
	if (!rc)
		rc = ts_nsys_read_rank(&x, ns->rank, o, t, &ns->info, err);
	if (!rc)
		rc = ts_dev_walls_of(t, &w, &nw, err);
	for (size_t i = 0; !rc && i < nw; i++)
		if (w[i].device == ns->rk.device) {
			ns->walls = w[i];
			ns->has_walls = 1;
		}

	free(w);
	ts_nsys_close(&x);
	return rc;
}

void trace_nsys_warnings(struct ts_warnings *w, const struct trace_nsys_slot *ns, char *const *paths,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ns[i].is_nsys && ns[i].first)
			(void)ts_nsys_warnings(&ns[i].joins, ns[i].null_end, &ns[i].gaps, paths[i], w);
		if (ns[i].is_nsys && ns[i].info.regex_unmatched)
			(void)ts_warnings_add(w, "step-nvtx-unmatched", paths[i], -1, TS_NO_INT,
					      "%s: rank %zu: --step-nvtx '%s' matches no NVTX range, so no step"
					      " is taken from it", paths[i], ns[i].rank, ns[i].info.step_marker);
	}
}

static void caps_line(struct ts_sb *out, const struct trace_nsys_slot *s, int can)
{
	const struct ts_nsys_caps *c = &s->caps;
	int first = 1;
#define ITEM(cond, ...)                                     \
	do {                                                \
		if ((cond) == can) {                        \
			ts_sb_adds(out, first ? "" : "; "); \
			ts_sb_addf(out, __VA_ARGS__);       \
			first = 0;                          \
		}                                           \
	} while (0)
	ts_sb_adds(out, can ? "  can answer:    " : "  cannot answer: ");
	ITEM(c->kernels, "%s", c->kernels ? "kernels" : "kernels (no CUPTI_ACTIVITY_KIND_KERNEL table)");
	ITEM(c->memcpy, "%s", c->memcpy ? "memcpy" : "memcpy (no MEMCPY table)");
	ITEM(c->memset, "%s", c->memset ? "memset" : "memset (no MEMSET table)");
	ITEM(c->runtime, "%s", c->runtime ? "CUDA API calls" : "CUDA API calls (no RUNTIME table)");
	ITEM(c->nvtx, "%s", c->nvtx ? "NVTX ranges" : "NVTX ranges (no NVTX_EVENTS table, or one without start, globalTid or eventType)");
	if (c->launch_join)
		ITEM(1, "launch latency (%lld of %lld kernels joined to a launch in their process)",
		     (long long)s->joins.joined, (long long)s->joins.kernels);
	else
		ITEM(0, "launch latency (no correlationId in KERNEL or RUNTIME)");
	ITEM(c->nccl_kernels, "%s", c->nccl_kernels ? "NCCL kernels" : "NCCL kernels (none in the export)");
	if (c->nccl_nvtx)
		ITEM(1, "NCCL NVTX ranges (%lld)", (long long)s->nccl_nvtx_ranges);
	if (c->gpu_name)
		ITEM(1, "GPU name");
	else if (c->cuda_devices && c->cuda_device_sms > 0)
		ITEM(0, "GPU name and peak (no TARGET_INFO_GPU; TARGET_INFO_CUDA_DEVICE lists %d CUDA "
		     "device%s with %d SMs%s, no name; MFU needs --gpu)", c->cuda_devices,
		     c->cuda_devices > 1 ? "s" : "", (int)c->cuda_device_sms,
		     c->cuda_devices > 1 ? " each" : "");
	else if (c->cuda_devices)
		ITEM(0, "GPU name and peak (no TARGET_INFO_GPU; TARGET_INFO_CUDA_DEVICE lists %d CUDA "
		     "device%s, no name; MFU needs --gpu)", c->cuda_devices, c->cuda_devices > 1 ? "s" : "");
	else
		ITEM(0, "GPU name and peak (no TARGET_INFO_GPU; MFU needs --gpu)");
	if (c->nccl_kernels || c->nccl_nvtx)
		ITEM(c->message_sizes, "%s", c->message_sizes ? "NCCL message sizes"
			: c->blobs_excluded ? (c->payload_schemas
						       ? "message sizes unavailable (export without blobs:"
							 " EXPORT_PARAM_INCLUDE_BLOBS=false; NVTX payload schemas only)"
						       : "message sizes unavailable (export without blobs:"
							 " EXPORT_PARAM_INCLUDE_BLOBS=false)")
					    : "message sizes unavailable (no NVTX payload data)");
	if (first)
		ts_sb_adds(out, "-");
	ts_sb_addc(out, '\n');
#undef ITEM
}

static void steps_line(struct ts_sb *out, const struct trace_nsys_slot *s)
{
	switch (s->info.steps_from) {
	case TS_NSYS_STEPS_REGEX:
		ts_sb_addf(out, "steps: %lld from --step-nvtx '%s'", (long long)s->info.steps, s->info.step_marker);
		break;
	case TS_NSYS_STEPS_NVTX:
		ts_sb_addf(out, "steps: %lld detected from the repeating top-level NVTX range '%s'",
			   (long long)s->info.steps, s->info.step_marker);
		break;
	case TS_NSYS_STEPS_SYNC:
		ts_sb_addf(out, "steps: %lld detected from the %s cadence", (long long)s->info.steps,
			   s->info.step_marker);
		break;
	case TS_NSYS_STEPS_PROFILER:
		ts_sb_addf(out, "steps: %lld from the profiler's own ProfilerStep#N ranges", (long long)s->info.steps);
		break;
	case TS_NSYS_STEPS_NONE:
		ts_sb_adds(out, s->info.regex_unmatched ? "steps: none (--step-nvtx matches no NVTX range)" :
			   "steps: none (no ProfilerStep or repeating NVTX range or sync cadence;"
			   " --step-nvtx REGEX names one)");
		break;
	}
}

static void ns_cell(struct ts_sb *out, int64_t v)
{
	ts_sb_addf(out, " %14lld", (long long)v);
}

void trace_nsys_text(struct ts_sb *out, const struct trace_nsys_slot *ns, char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct trace_nsys_slot *s = &ns[i];
		if (!s->is_nsys)
			continue;
		if (s->first) {
			ts_sb_addf(out, "\nNsight Systems export %s: schema %s, nsys %s, %zu rank(s) (process x device)\n",
				   paths[i], s->schema[0] ? s->schema : "unknown", s->product[0] ? s->product : "unknown",
				   s->nranks);
			if (s->window_lo_ns >= 0)
				ts_sb_addf(out, "  export window (DERIVED_WINDOW_NS): %lld..%lld ns\n",
					   (long long)s->window_lo_ns, (long long)s->window_hi_ns);
			caps_line(out, s, 1);
			caps_line(out, s, 0);
			ts_sb_addf(out, "  %-6s %-22s %14s %14s %14s %14s %14s %14s %14s %14s\n", "rank", "process/device",
				   "span (ns)", "busy (ns)", "idle (ns)", "compute (ns)", "comm (ns)",
				   "exp.comm (ns)", "memcpy (ns)", "exp.mcpy (ns)");
		}
		{
			char who[96];
			snprintf(who, sizeof(who), "%lld %.12s/dev%d", (long long)s->rk.pid,
				 s->rk.process[0] ? s->rk.process : "?", s->rk.device);
			ts_sb_addf(out, "  %-6zu %-22s", s->rank, who);
			ns_cell(out, s->walls.span_ns);
			ns_cell(out, s->walls.busy_ns);
			ns_cell(out, s->walls.idle_ns);
			ns_cell(out, s->walls.compute_ns);
			ns_cell(out, s->walls.comm_ns);
			ns_cell(out, s->walls.exposed_comm_ns);
			ns_cell(out, s->walls.memcpy_ns);
			ns_cell(out, s->walls.exposed_memcpy_ns);
			ts_sb_addf(out, "\n         kernels %lld (%lld ns summed), memcpy %lld, memset %lld (%lld ns); ",
				   (long long)s->walls.kernels, (long long)s->walls.kernel_sum_ns,
				   (long long)s->walls.memcpys, (long long)s->walls.memsets,
				   (long long)s->walls.memset_ns);
			steps_line(out, s);
			ts_sb_addc(out, '\n');
			if (s->caps.nccl_nvtx)
				ts_sb_addf(out, "         NCCL by NVTX projection: %lld kernels launched inside NCCL NVTX"
						" ranges, %lld of them NCCL by name; %lld NCCL kernels by name\n",
					   (long long)s->info.nccl_nvtx_kernels, (long long)s->info.nccl_nvtx_kernels_named,
					   (long long)s->walls.comm_kernels);
		}
	}
}

static void json_walls(struct ts_jw *w, const struct ts_dev_walls *d)
{
	ts_jw_obj(w);
	ts_jw_ki64(w, "device", d->device);
	ts_jw_ki64(w, "t0_ns", d->t0_ns);
	ts_jw_ki64(w, "span_ns", d->span_ns);
	ts_jw_ki64(w, "busy_ns", d->busy_ns);
	ts_jw_ki64(w, "idle_ns", d->idle_ns);
	ts_jw_ki64(w, "compute_ns", d->compute_ns);
	ts_jw_ki64(w, "comm_ns", d->comm_ns);
	ts_jw_ki64(w, "exposed_comm_ns", d->exposed_comm_ns);
	ts_jw_ki64(w, "memcpy_ns", d->memcpy_ns);
	ts_jw_ki64(w, "exposed_memcpy_ns", d->exposed_memcpy_ns);
	ts_jw_ki64(w, "memset_ns", d->memset_ns);
	ts_jw_ki64(w, "kernels", d->kernels);
	ts_jw_ki64(w, "comm_kernels", d->comm_kernels);
	ts_jw_ki64(w, "kernel_sum_ns", d->kernel_sum_ns);
	ts_jw_ki64(w, "memcpys", d->memcpys);
	ts_jw_ki64(w, "memsets", d->memsets);
	ts_jw_obj_end(w);
}

void trace_nsys_json(struct ts_jw *w, const struct trace_nsys_slot *ns, char *const *paths, size_t n)
{
	ts_jw_key(w, "nsys");
	ts_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		const struct trace_nsys_slot *s = &ns[i];
		const struct ts_nsys_caps *c = &s->caps;
		if (!s->is_nsys || !s->first)
			continue;
		ts_jw_obj(w);
		ts_jw_kstr(w, "file", paths[i]);
		ts_jw_kstr(w, "schema_version", s->schema[0] ? s->schema : NULL);
		ts_jw_kstr(w, "product_version", s->product[0] ? s->product : NULL);
		ts_jw_key(w, "window_ns");
		if (s->window_lo_ns >= 0) {
			ts_jw_arr(w);
			ts_jw_i64(w, s->window_lo_ns);
			ts_jw_i64(w, s->window_hi_ns);
			ts_jw_arr_end(w);
		} else {
			ts_jw_null(w);
		}
		ts_jw_key(w, "capabilities");
		ts_jw_obj(w);
		ts_jw_kbool(w, "kernels", c->kernels);
		ts_jw_kbool(w, "memcpy", c->memcpy);
		ts_jw_kbool(w, "memset", c->memset);
		ts_jw_kbool(w, "cuda_api", c->runtime);
		ts_jw_kbool(w, "sync", c->sync);
		ts_jw_kbool(w, "nvtx", c->nvtx);
		ts_jw_kbool(w, "launch_join", c->launch_join);
		ts_jw_kbool(w, "gpu_name", c->gpu_name);
		ts_jw_ki64(w, "unnamed_cuda_devices", c->cuda_devices);
		ts_jw_key(w, "unnamed_cuda_device_sm_count");
		if (c->cuda_device_sms > 0)
			ts_jw_i64(w, c->cuda_device_sms);
		else
			ts_jw_null(w);
		ts_jw_kbool(w, "nccl_kernels", c->nccl_kernels);
		ts_jw_kbool(w, "nccl_nvtx", c->nccl_nvtx);
		ts_jw_kbool(w, "message_sizes", c->message_sizes);
		ts_jw_kbool(w, "blobs_excluded", c->blobs_excluded);
		ts_jw_kbool(w, "nvtx_payload_schemas", c->payload_schemas);
		ts_jw_obj_end(w);
		ts_jw_ki64(w, "nccl_nvtx_ranges", s->nccl_nvtx_ranges);
		ts_jw_key(w, "launch_joins");
		ts_jw_obj(w);
		ts_jw_ki64(w, "kernels", s->joins.kernels);
		ts_jw_ki64(w, "joined", s->joins.joined);
		ts_jw_ki64(w, "unjoined", s->joins.unjoined);
		ts_jw_ki64(w, "cross_process_matches", s->joins.cross_process);
		ts_jw_obj_end(w);
		ts_jw_key(w, "null_rows_skipped");
		ts_jw_obj(w);
		for (int t = 0; t < TS_NT_COUNT; t++)
			if (s->null_end[t])
				ts_jw_ki64(w, ts_nsys_table_name((enum ts_nsys_tab)t), s->null_end[t]);
		ts_jw_obj_end(w);
		ts_jw_key(w, "ranks");
		ts_jw_arr(w);
		for (size_t j = i; j < n && ns[j].is_nsys && strcmp(paths[j], paths[i]) == 0; j++) {
			const struct trace_nsys_slot *r = &ns[j];
			ts_jw_obj(w);
			ts_jw_ki64(w, "rank", (int64_t)r->rank);
			ts_jw_ki64(w, "pid", r->rk.pid);
			ts_jw_kstr(w, "process", r->rk.process);
			ts_jw_ki64(w, "device", r->rk.device);
			ts_jw_kstr(w, "steps_from", ts_nsys_steps_name(r->info.steps_from));
			ts_jw_kstr(w, "step_marker", r->info.step_marker[0] ? r->info.step_marker : NULL);
			ts_jw_ki64(w, "steps", r->info.steps);
			ts_jw_ki64(w, "nccl_nvtx_kernels", r->info.nccl_nvtx_kernels);
			ts_jw_ki64(w, "nccl_nvtx_kernels_named", r->info.nccl_nvtx_kernels_named);
			ts_jw_key(w, "walls");
			json_walls(w, &r->walls);
			ts_jw_obj_end(w);
		}
		ts_jw_arr_end(w);
		ts_jw_obj_end(w);
	}
	ts_jw_arr_end(w);
}

int trace_stats_report(struct cli_ctx *ctx, const struct ts_paths *files, const char *name, int csv)
{
	struct ts_srep r;
	struct ts_err err;
	struct ts_sb out;
	struct ts_warnings warns;
	int kind = ts_srep_of(name), rc = 0;

	if (kind < 0) {
		cli_error(ctx, "--report: unknown report '%s'", name);
		fprintf(stderr, "hint: cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,"
				" cuda_gpu_mem_size_sum, nvtx_sum, cuda_kern_exec_sum\n");
		return EXIT_USAGE;
	}
	ts_srep_init(&r, (enum ts_srep_kind)kind);
	ts_err_init(&err);
	ts_sb_init(&out);
	ts_warnings_init(&warns);
	for (size_t i = 0; i < files->n; i++) {
		if (trace_nsys_is(files->v[i])) {
			struct ts_nsys x;
			ts_nsys_init(&x);
			rc = ts_nsys_open(&x, files->v[i], &err);
			if (!rc)
				rc = ts_srep_add_nsys(&r, &x, &err);
			if (!rc)
				rc = ts_srep_count_skipped((enum ts_srep_kind)kind, &x, &err);
			/* the rows it skipped, as trace says them (no joins here) */
			if (!rc) {
				struct ts_nsys_joins none;

				memset(&none, 0, sizeof(none));
				if (ts_nsys_warnings(&none, x.null_end, &x.gaps, files->v[i], &warns))
					rc = ts_err_set(&err, TS_ENOMEM, "out of memory");
			}
			ts_nsys_close(&x);
		} else {
			struct ts_trace t;
			struct ts_trace_opts o;
			memset(&o, 0, sizeof(o));
			o.skip_python = 1;
			o.skip_flows = 1;
			ts_trace_init(&t);
			rc = ts_trace_read(&t, files->v[i], &o, &err);
			if (!rc)
				rc = ts_srep_add_trace(&r, &t, &err);
			ts_trace_release(&t);
		}
		if (rc) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (ts_srep_finish(&r, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json) {
		ts_srep_json(&r, &warns, &out);
	} else if (csv) {
		ts_srep_csv(&r, &out);
		for (size_t i = 0; i < warns.v.n; i++)
			cli_warn(ctx, "%s", warns.v.v[i].message);
	} else {
		ts_srep_table(&r, &warns, &out);
	}
	rc = cli_emit(ctx, &out);
out:
	ts_warnings_release(&warns);
	ts_sb_release(&out);
	ts_srep_release(&r);
	return rc;
}
