/*
 * cmd_watch.c - `trainscope watch`: device telemetry around a command, or
 * from other tools' captures, joined to training steps.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "trainscope/detect.h"
#include "trainscope/gpus.h"
#include "trainscope/logs.h"
#include "trainscope/profile.h"
#include "trainscope/trace.h"
#include "trainscope/telemetry.h"

enum { OPT_READ = 1, OPT_FIELDS, OPT_STEPS, OPT_INTERVAL, OPT_BACKEND, OPT_TELEMETRY, OPT_PID };

static const struct cli_opt opts[] = {
	{ "read", 0, NULL, "analyse capture files (dmon, --query-gpu CSV, dcgmi, mthreads-gmi, "
	  "straggler lines, telemetry JSONL) instead of running a command", OPT_READ },
	{ "fields", 0, "LIST", "field names of a headerless --query-gpu CSV (its --query-gpu list)",
	  OPT_FIELDS },
	{ "steps", 0, "FILE", "training log or JSONL with step timestamps to join samples to "
	  "(repeatable)", OPT_STEPS },
	{ "interval", 0, "MS", "sampling interval, 10 to 10000 ms (default 100)", OPT_INTERVAL },
	{ "backend", 0, "NAME", "auto (default: NVML, then MTML, then nvidia-smi polling), nvml, "
	  "mtml or nvidia-smi", OPT_BACKEND },
	{ "telemetry", 0, "FILE", "where the sampler writes its JSONL (default "
	  "trainscope.telemetry.jsonl)", OPT_TELEMETRY },
	{ "pid", 0, "PID", "sample while an already running process lives", OPT_PID },
	{ 0 }
};

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static int cmp_span(const void *a, const void *b)
{
	const struct ts_tele_span *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Step spans of a Kineto trace: its ProfilerStep windows, made absolute
 * with baseTimeNanoseconds (the profile computes the steps; nothing here
 * reads events). */
static int trace_spans(struct cli_ctx *ctx, const char *path, struct ts_tele_span **v,
		       size_t *n, size_t *cap)
{
	struct ts_trace tr;
	struct ts_rank_prof pr;
	struct ts_trace_opts to = { .skip_python = 1, .skip_flows = 1 };
	struct ts_err err;
	int rc = 0;

	ts_trace_init(&tr);
	ts_rank_prof_init(&pr);
	ts_err_init(&err);
	if (ts_trace_read(&tr, path, &to, &err) || ts_rank_profile(&pr, &tr, NULL, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (!tr.meta.has_base) {
		cli_error(ctx, "%s: the trace has no baseTimeNanoseconds, so its step times are not "
			  "wall-clock times and cannot be joined to telemetry", path);
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < pr.steps.n; i++) {
		const struct ts_step_prof *sp = &pr.steps.v[i];
		if (sp->dur_ns <= 0)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct ts_tele_span *nv = realloc(*v, nc * sizeof(*nv));
			if (!nv) {
				cli_error(ctx, "out of memory");
				rc = EXIT_INTERNAL;
				goto out;
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[*n].iteration = sp->step;
		(*v)[*n].start_ns = tr.meta.base_ns + sp->start_ns;
		(*v)[*n].end_ns = (*v)[*n].start_ns + sp->dur_ns;
		(*v)[*n].tokens = -1;
		(*n)++;
	}
out:
	ts_rank_prof_release(&pr);
	ts_trace_release(&tr);
	return rc;
}

/* Step spans from the files given with --steps: training logs or JSONL
 * with start timestamps (the lowest rank's steps), or Kineto traces. */
static int load_spans(struct cli_ctx *ctx, const struct cli_parsed *p,
		      struct ts_tele_span **out, size_t *nout)
{
	struct ts_steplog log;
	struct ts_err err;
	struct ts_tele_span *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, logs = 0, any = 0;

	*out = NULL;
	*nout = 0;
	ts_steplog_init(&log);
	ts_err_init(&err);
	for (size_t i = 0; i < p->nopts; i++) {
		struct ts_detect d;
		if (p->opts[i].key != OPT_STEPS)
			continue;
		any = 1;
		if (ts_detect_file(p->opts[i].val, &d, &err) == 0 &&
		    (d.kind == TS_KIND_KINETO_TRACE || d.kind == TS_KIND_LEGACY_TRACE)) {
			if ((rc = trace_spans(ctx, p->opts[i].val, &v, &n, &cap)))
				goto out;
			continue;
		}
		logs = 1;
		if (ts_steplog_read(&log, p->opts[i].val, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
	}
	if (!any)
		goto out;
	int32_t rank = INT32_MAX;
	for (size_t i = 0; logs && i < log.steps.n; i++)
		if (log.steps.v[i].t_start_ns != TS_NO_INT && log.steps.v[i].rank < rank)
			rank = log.steps.v[i].rank;
	for (size_t i = 0; logs && i < log.steps.n; i++) {
		const struct ts_step *s = &log.steps.v[i];
		if (s->t_start_ns == TS_NO_INT || s->step_ns == TS_NO_INT || s->step_ns <= 0 ||
		    s->rank != rank)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ts_tele_span *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				cli_error(ctx, "out of memory");
				rc = EXIT_INTERNAL;
				goto out;
			}
			v = nv;
			cap = nc;
		}
		v[n].iteration = s->iteration;
		v[n].start_ns = s->t_start_ns;
		v[n].end_ns = s->t_start_ns + s->step_ns;
		v[n].tokens = s->tokens == TS_NO_INT ? -1 : s->tokens;
		n++;
	}
	if (!n) {
		cli_error(ctx, "--steps: no step carries a start time (a JSONL t_start_unix, or a "
			  "trace's ProfilerStep with baseTimeNanoseconds), so telemetry cannot be "
			  "joined to steps");
		rc = EXIT_USAGE;
		goto out;
	}
	ts_sort(v, n, sizeof(*v), cmp_span);
	*out = v;
	*nout = n;
	v = NULL;
out:
	free(v);
	ts_steplog_release(&log);
	return rc;
}

/* Run argv as a child with the sampler around it; returns the child's
 * exit status (128 + signal when killed). A failed write of the telemetry
 * file is a warning of t. */
static int run_child(struct cli_ctx *ctx, char **argv, struct ts_sampler *s, struct ts_telemetry *t,
		     int *sig)
{
	struct sigaction sa, old[4];
	static const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct ts_err err;
	int status = 0;
	pid_t pid;

	ts_err_init(&err);
	*sig = 0;
	if (ts_sampler_start(s, &err))
		return -cli_fail(ctx, &err);
	pid = fork();
	if (pid < 0) {
		cli_error(ctx, "cannot start '%s': %s", argv[0], strerror(errno));
		ts_sampler_stop(s, &err);
		return -EXIT_USAGE;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "trainscope watch: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	child_pid = 0;
	if (ts_sampler_stop(s, &err))
		ts_tele_note(t, "telemetry-write-failed", -1, "%s", err.msg);
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return 128 + *sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* 1 while pid exists and is not a zombie (an unreaped process has ended). */
static int alive(long pid)
{
	char path[64], buf[256];
	FILE *f;

	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

static int watch_pid(struct cli_ctx *ctx, long pid, struct ts_sampler *s, struct ts_telemetry *t,
		     int64_t interval_ns)
{
	struct ts_err err;

	ts_err_init(&err);
	if (kill((pid_t)pid, 0) && errno == ESRCH) {
		cli_error(ctx, "--pid %ld: no such process", pid);
		return -EXIT_USAGE;
	}
	if (ts_sampler_start(s, &err))
		return -cli_fail(ctx, &err);
	struct timespec ts = { (time_t)(interval_ns / 1000000000LL), (long)(interval_ns % 1000000000LL) };
	while (alive(pid))
		nanosleep(&ts, NULL);
	if (ts_sampler_stop(s, &err))
		ts_tele_note(t, "telemetry-write-failed", -1, "%s", err.msg);
	return 0;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_telemetry t;
	struct ts_err err;
	struct ts_sb out;
	struct ts_tele_read_opts ro = { NULL };
	struct ts_sampler_opts so = { 100000000LL, "auto", "trainscope.telemetry.jsonl" };
	struct ts_sampler *s = NULL;
	struct ts_gpu_catalog cat;
	struct ts_tele_gpu_summary *sum = NULL;
	struct ts_tele_span *spans = NULL;
	struct ts_tele_step *steps = NULL;
	struct ts_tele_finding find[64];
	double *expect = NULL;
	char **av = NULL;
	size_t nspans = 0, nsteps = 0, nf;
	struct ts_tele_dropped dropped;
	int read_mode = 0, rc = cli_parse(ctx, argc, argv, &p), child_rc = -1, sig = 0;
	long long pid = 0;

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_tele_init(&t);
	ts_sb_init(&out);
	ts_err_init(&err);
	int have_cat = ts_gpu_catalog_init(&cat) == 0;
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];
		long long v;
		if (a->key == OPT_READ)
			read_mode = 1;
		else if (a->key == OPT_FIELDS)
			ro.query_fields = a->val;
		else if (a->key == OPT_INTERVAL) {
			if ((rc = cli_int(ctx, a, 10, 10000, &v)))
				goto out;
			so.interval_ns = v * 1000000LL;
		} else if (a->key == OPT_BACKEND) {
			if (strcmp(a->val, "auto") && strcmp(a->val, "nvml") && strcmp(a->val, "mtml") &&
			    strcmp(a->val, "nvidia-smi")) {
				cli_error(ctx, "--backend: expected auto, nvml, mtml or nvidia-smi, not '%s'",
					  a->val);
				rc = EXIT_USAGE;
				goto out;
			}
			so.backend = a->val;
		} else if (a->key == OPT_TELEMETRY)
			so.out_path = a->val;
		else if (a->key == OPT_PID) {
			if ((rc = cli_int(ctx, a, 1, 4194304, &pid)))
				goto out;
		}
	}
	if (read_mode) {
		if (!p.npos) {
			cli_error(ctx, "--read needs capture files");
			rc = EXIT_USAGE;
			goto out;
		}
		/* each capture's notes name it: with several, "line 15" alone is
		 * no place */
		struct ts_warnings named;

		ts_warnings_init(&named);
		for (size_t i = 0; i < p.npos; i++) {
			size_t before = t.notes.v.n;

			if (ts_tele_read(&t, p.pos[i], &ro, &err)) {
				ts_warnings_release(&named);
				rc = cli_fail(ctx, &err);
				goto out;
			}
			if (ts_tele_notes_warn(&t, before, p.pos[i], &named)) {
				ts_warnings_release(&named);
				cli_error(ctx, "out of memory");
				rc = EXIT_INTERNAL;
				goto out;
			}
		}
		ts_tele_match_gpus(&t); /* once, all captures read */
		/* which captures are one machine's: said where it cannot be told */
		if (ts_tele_host_warn(&t, &named)) {
			ts_warnings_release(&named);
			cli_error(ctx, "out of memory");
			rc = EXIT_INTERNAL;
			goto out;
		}
		ts_warnings_release(&t.notes);
		t.notes = named;
	} else {
		if (!p.npos && !pid) {
			cli_error(ctx, "nothing to watch: give a command after '--', --pid PID, or "
				  "--read FILE...");
			rc = EXIT_USAGE;
			goto out;
		}
		if (ts_sampler_open(&s, &so, &t, &err)) {
			if (err.code != TS_EUNSUPPORTED) {
				rc = cli_fail(ctx, &err);
				goto out;
			}
			/* a warning of the output when there is one (--json, -o), else of stderr */
			ts_tele_note(&t, "no-device-telemetry", -1, "no device telemetry: %s", err.msg);
			if (!ctx->json && !ctx->output)
				cli_warn(ctx, "no device telemetry: %s", err.msg);
		}
		if (p.npos) {
			/* exec wants a NULL-terminated argv; the parsed list is not */
			av = calloc(p.npos + 1, sizeof(*av));
			if (!av) {
				cli_error(ctx, "out of memory");
				rc = EXIT_INTERNAL;
				goto out;
			}
			memcpy(av, p.pos, p.npos * sizeof(*av));
			if (s)
				child_rc = run_child(ctx, av, s, &t, &sig);
			else {
				/* still run the command the user asked for */
				pid_t c = fork();
				int st = 0;
				if (c == 0) {
					execvp(av[0], av);
					_exit(127);
				}
				while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR)
					;
				child_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
			if (child_rc < 0) {
				rc = -child_rc;
				goto out;
			}
		} else if (s) {
			int w = watch_pid(ctx, (long)pid, s, &t, so.interval_ns);
			if (w < 0) {
				rc = -w;
				goto out;
			}
		}
		if (!s && !ctx->json && !ctx->output) {
			rc = child_rc >= 0 ? child_rc : EXIT_USAGE;
			goto out;
		}
	}
	if ((rc = load_spans(ctx, &p, &spans, &nspans)))
		goto out;
	sum = calloc(t.gpus.n ? t.gpus.n : 1, sizeof(*sum));
	expect = calloc(t.gpus.n ? t.gpus.n : 1, sizeof(*expect));
	if (!sum || !expect) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	ts_tele_summarize(&t, sum);
	for (size_t g = 0; g < t.gpus.n && have_cat; g++) {
		const struct ts_gpu *gp = t.gpus.v[g].name ? ts_gpu_find(&cat, t.gpus.v[g].name) : NULL;
		expect[g] = gp && gp->memory_bytes > 0 ? (double)gp->memory_bytes / 1048576.0 : 0;
	}
	if (nspans && ts_tele_align(&t, spans, nspans, &steps, &nsteps, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (nspans && ts_tele_join_warn(&t, spans, nspans, steps, nsteps, &t.notes)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	nf = ts_tele_findings(&t, sum, steps, nsteps, expect, find, sizeof(find) / sizeof(find[0]),
			      &dropped);
	if (ts_tele_dropped_warn(&dropped, nf, "telemetry", &t.notes)) {
		cli_error(ctx, "out of memory");
		rc = EXIT_INTERNAL;
		goto out;
	}
	if (ctx->json)
		ts_tele_render_json(&out, &t, sum, steps, nsteps, find, nf, &dropped, child_rc, sig);
	else
		ts_tele_render_text(&out, &t, sum, steps, nsteps, find, nf);
	if (!read_mode && !ctx->json && !ctx->output) {
		/* the command's own output is on stdout: the summary goes beside it */
		fputs(out.buf, stderr);
		if (so.out_path)
			fprintf(stderr, "telemetry written to %s\n", so.out_path);
		rc = 0;
	} else {
		rc = cli_emit(ctx, &out);
	}
	if (!rc && child_rc >= 0)
		rc = child_rc;
	else if (!rc && !read_mode && !s)
		rc = EXIT_USAGE;  /* --pid without telemetry: nothing was watched */
out:
	free(av);
	ts_sampler_close(s);
	if (have_cat)
		ts_gpu_catalog_release(&cat);
	free(sum);
	free(expect);
	free(spans);
	free(steps);
	ts_tele_release(&t);
	ts_sb_release(&out);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_watch = {
	.name = "watch",
	.stage = STAGE_MEASURE,
	.summary = "Sample device telemetry around a command, or read captures, joined to steps",
	.usage = "watch [options] -- CMD ARGS... | watch --pid PID | watch --read FILE...",
	.description =
		"Runs CMD with a sampling thread beside it (NVML, or MTML on Moore Threads\n"
		"GPUs, both loaded at run time symbol by symbol) and writes every sample to a\n"
		"trainscope.telemetry/1 JSONL file; the command's exit code is returned and\n"
		"signals are passed on. --read analyses captures of other tools the same\n"
		"way: nvidia-smi dmon and --query-gpu CSV, dcgmi dmon, dcgm-exporter scrapes\n"
		"(Prometheus text), mthreads-gmi tables and JSON, Megatron straggler-detector\n"
		"lines. A field the device cannot give is reported unsupported, never 0.\n"
		"--steps joins samples to the steps of a\n"
		"training log with timestamps (JSONL t_start_unix): power, energy, clocks\n"
		"and utilisation per step. Findings (power cap, thermal throttling, clock\n"
		"spread, memory misreport, degraded PCIe, idle gaps, stragglers, untrustworthy\n"
		"counters) carry their numbers; docs/watch.md lists the thresholds.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
