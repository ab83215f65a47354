/*
 * cmd_preflight.c - `trainscope preflight`: what is really installed and
 * loaded (CUDA and MUSA), judged by rules with evidence and fixes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_gate.h"
#include "trainscope/detect.h"
#include "trainscope/paths.h"
#include "trainscope/preflight.h"

extern char **environ;

enum { OPT_ROOT = 1, OPT_FROM, OPT_NO_LOAD, OPT_NO_PYTHON, OPT_LOAD_TIMEOUT, OPT_PY_TIMEOUT, OPT_NODES };

static const struct cli_opt opts[] = {
	{ "root", 0, "DIR", "inspect a mounted image or container root instead of / (no dlopen, no python)", OPT_ROOT },
	{ "from", 0, "FILE", "judge an existing report: collect_env, sglang check_env, nvidia-smi -q, mthreads-gmi", OPT_FROM },
	{ "nodes", 0, "PATH", "compare per-node preflight JSON files (a directory or files, repeatable); outliers marked", OPT_NODES },
	{ "no-load", 0, NULL, "do not dlopen the libraries (file names only)", OPT_NO_LOAD },
	{ "no-python", 0, NULL, "do not run the python3 probe", OPT_NO_PYTHON },
	{ "load-timeout-ms", 0, "MS", "kill a library's loading child after MS (default 5000)", OPT_LOAD_TIMEOUT },
	{ "python-timeout-ms", 0, "MS", "kill the python3 probe after MS (default 60000)", OPT_PY_TIMEOUT },
	{ 0 }
};

static int python_timeout_ms = 60000;

static int probe_run(void *ctx, const char *const argv[], struct ts_sb *out)
{
	(void)ctx;
	return cli_run_capture(argv, out, python_timeout_ms);
}

/* --nodes: the preflight files among the paths given, one row each. */
static int nodes(struct cli_ctx *ctx, const struct cli_parsed *p)
{
	struct ts_paths all;
	struct ts_err err;
	struct ts_sb out;
	TS_VEC(const char *) files = { 0 };
	size_t outliers = 0;
	int rc = 0;

	ts_paths_init(&all);
	ts_sb_init(&out);
	ts_err_init(&err);
	for (size_t i = 0; i < p->nopts; i++)
		if (p->opts[i].key == OPT_NODES && (rc = ts_paths_add(&all, p->opts[i].val, 1, &err)))
			goto fail;
	for (size_t i = 0; i < all.n; i++) {
		struct ts_detect d;
		if ((rc = ts_detect_file(all.v[i], &d, &err)))
			goto fail;
		if (d.kind == TS_KIND_PREFLIGHT && TS_VEC_PUSH(files, all.v[i])) {
			rc = EXIT_INTERNAL;
			goto out;
		}
	}
	if (!files.n) {
		cli_error(ctx, "no preflight JSON file among the --nodes paths");
		fprintf(stderr, "hint: trainscope preflight --json -o nodes/$(hostname).json on each node\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = ts_preflight_nodes(files.v, files.n, ctx->json, &out, &outliers, &err)))
		goto fail;
	rc = cli_emit(ctx, &out);
	if (!rc && outliers)
		rc = EXIT_GATE;
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	TS_VEC_RELEASE(files);
	ts_sb_release(&out);
	ts_paths_release(&all);
	return rc;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_preflight pf;
	struct ts_probe probe = { probe_run, NULL, environ, "" };
	struct ts_pf_opts o = { 1, 5000, 1 };
	struct ts_err err;
	struct ts_sb out;
	const char *from = NULL;
	long long v;
	int nodes_mode = 0;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_preflight_init(&pf);
	ts_sb_init(&out);
	ts_err_init(&err);
	for (size_t i = 0; i < p.nopts; i++) {
		const struct cli_arg *a = &p.opts[i];
		switch (a->key) {
		case OPT_ROOT:
			probe.root = a->val;
			o.load = o.python = 0;
			break;
		case OPT_FROM: from = a->val; break;
		case OPT_NODES: nodes_mode = 1; break;
		case OPT_NO_LOAD: o.load = 0; break;
		case OPT_NO_PYTHON: o.python = 0; break;
		case OPT_LOAD_TIMEOUT:
			if ((rc = cli_int(ctx, a, 1, 600000, &v)))
				goto out;
			o.load_timeout_ms = (int)v;
			break;
		case OPT_PY_TIMEOUT:
			if ((rc = cli_int(ctx, a, 1, 600000, &v)))
				goto out;
			python_timeout_ms = (int)v;
			break;
		}
	}
	if (p.npos) {
		cli_error(ctx, "unexpected argument '%s'", p.pos[0]);
		fprintf(stderr, "hint: trainscope preflight [--root DIR | --from FILE] [--json]\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (nodes_mode) {
		rc = (from || probe.root[0]) ? (cli_error(ctx, "--nodes excludes --root and --from"), EXIT_USAGE)
					     : nodes(ctx, &p);
		goto out;
	}
	if (from && probe.root[0]) {
		cli_error(ctx, "--root and --from exclude each other");
		rc = EXIT_USAGE;
		goto out;
	}
	if (from)
		rc = ts_preflight_from_file(&pf, from, &err);
	else
		rc = ts_preflight_probe(&pf, &probe, &o, &err);
	if (rc || (rc = ts_preflight_judge(&pf)) != 0) {
		if (!err.code)
			ts_err_set(&err, rc, "out of memory");
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		ts_preflight_write_json(&pf, &out);
	else
		ts_preflight_write_table(&pf, &out);
	if ((rc = cli_emit(ctx, &out)) == 0 && ts_preflight_worst(&pf) == TS_PF_ERROR)
		rc = EXIT_GATE;
out:
	ts_sb_release(&out);
	ts_preflight_release(&pf);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_preflight = {
	.name = "preflight",
	.stage = STAGE_PREFLIGHT,
	.summary = "What is really installed and loaded (CUDA, MUSA), with findings and fixes",
	.usage = "preflight [--root DIR | --from FILE | --nodes DIR...] [--no-load] [--no-python] [--json]",
	.description =
		"Probes this machine in seconds without creating a GPU context: accelerators\n"
		"from PCI sysfs (NVIDIA 0x10de, Moore Threads 0x1ed5, AMD 0x1002, MetaX 0x9999)\n"
		"with PCIe width and speed, current vs max, and NUMA node; device nodes;\n"
		"kernel driver versions; every copy of each CUDA and MUSA library on the\n"
		"search path (LD_LIBRARY_PATH, the ld.so cache read directly, default dirs,\n"
		"ld.so.conf, CUDA_HOME, MUSA_HOME, site-packages nvidia/*/lib, /opt/maca) and\n"
		"the copy the loader picks; each library dlopen'ed in a forked child with a\n"
		"timeout, reporting its resolved path and its own version call; environment\n"
		"knobs, container markers, ulimit -n/-l and IOMMU; one python3 child for the\n"
		"torch / torch_musa build, SDPA flags, attention packages and the libraries\n"
		"mapped after import torch.\n"
		"\n"
		"Rules turn this into findings {id, severity, evidence, fix}; the ids are\n"
		"listed in docs/preflight.md. --root judges a mounted image (files only);\n"
		"--from judges a report with the same rules. Exit status 1 when a finding of\n"
		"severity error exists.\n"
		"\n"
		"--nodes compares per-node preflight JSON files (preflight --json -o\n"
		"DIR/NODE.json on each node) in one table and marks each value that differs\n"
		"from the one most nodes share; exit status 1 when a node is an outlier.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
