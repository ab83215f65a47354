/*
 * cmd_hang.c - `trainscope hang`: which rank hung a distributed job, from
 * watchdog logs, Flight Recorder dumps, NCCL RAS / COLL output and fr_trace
 * reports (NCCL and MCCL).
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "trainscope/detect.h"
#include "trainscope/hang.h"
#include "trainscope/paths.h"

enum { OPT_WORLD = 1, OPT_DEPTH };

static const struct cli_opt opts[] = {
	{ "world-size", 0, "N", "ranks in the job, when no dump or report says", OPT_WORLD },
	{ "depth", 0, "N", "descend N levels into directories (default 2)", OPT_DEPTH },
	{ 0 }
};

/* files found in a directory are read only when they can hold hang
 * evidence; one named like a dump that is not is kept as unread */
static int wanted(struct ts_hang_set *set, const char *path, struct ts_err *err)
{
	struct ts_detect d;
	if (ts_detect_file(path, &d, err))
		return -1;
	if (d.kind == TS_KIND_LOG_HANG || d.kind == TS_KIND_HANG_REPORT || d.kind == TS_KIND_FLIGHT_RECORDER ||
	    d.kind == TS_KIND_BINARY || d.kind == TS_KIND_TEXT)
		return 1;
	if (ts_hang_skip_file(set, path, ts_kind_name(d.kind)))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	struct cli_parsed p;
	struct ts_hang_set set;
	struct ts_hang_result res;
	struct ts_paths files;
	struct ts_err err;
	struct ts_sb out;
	long long world = -1, depth = 2;
	int rc = cli_parse(ctx, argc, argv, &p);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	ts_hang_set_init(&set);
	memset(&res, 0, sizeof(res));
	ts_paths_init(&files);
	ts_sb_init(&out);
	ts_err_init(&err);
	for (size_t i = 0; i < p.nopts; i++) {
		if (p.opts[i].key == OPT_WORLD && (rc = cli_int(ctx, &p.opts[i], 1, 1 << 24, &world)))
			goto out;
		if (p.opts[i].key == OPT_DEPTH && (rc = cli_int(ctx, &p.opts[i], 0, 16, &depth)))
			goto out;
	}
	if (p.npos == 0) {
		cli_error(ctx, "no input given");
		fprintf(stderr, "hint: trainscope hang LOG|DUMP|DIR...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	set.world_size = world;
	for (size_t i = 0; i < p.npos; i++) {
		size_t before = files.n;
		if (ts_paths_add(&files, p.pos[i], (int)depth, &err)) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		for (size_t k = before; k < files.n; k++) {
			int want = files.n - before > 1 ? wanted(&set, files.v[k], &err) : 1;
			if (want < 0) {
				rc = cli_fail(ctx, &err);
				goto out;
			}
			if (want && ts_hang_read_file(&set, files.v[k], &err)) {
				rc = cli_fail(ctx, &err);
				goto out;
			}
		}
	}
	if (ts_hang_nothing_read(&set, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ts_hang_analyze(&set, &res, &err)) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		ts_hang_json(&set, &res, &out, 1);
	else
		ts_hang_text(&set, &res, &out);
	rc = cli_emit(ctx, &out);
	if (!rc)
		rc = res.exit_code;
out:
	ts_hang_result_release(&res);
	ts_hang_set_release(&set);
	ts_sb_release(&out);
	ts_paths_release(&files);
	cli_parsed_release(&p);
	return rc;
}

const struct cli_command cli_cmd_hang = {
	.name = "hang",
	.stage = STAGE_AROUND,
	.summary = "Name the rank that hung a distributed job (NCCL and MCCL)",
	.usage = "hang [options] LOG|DUMP|DIR...",
	.description =
		"Reads every piece of hang evidence given (files, directories or a mix), each\n"
		"recognised by content: PyTorch watchdog, progress, dump-signal and take-down lines\n"
		"(WorkNCCL and WorkMCCL, every era), TORCH_NCCL_DESYNC_DEBUG reports,\n"
		"TORCH_DISTRIBUTED_DEBUG=DETAIL mismatches, NCCL_DEBUG=INFO COLL lines, NCCL RAS\n"
		"reports (text and JSON), fr_trace reports, and Flight Recorder dumps as pickle\n"
		"(read safely: a pickle that would run code is refused), JSON or pasted repr.\n"
		"\n"
		"Per process group the ranks are aligned by collective sequence id; at the first\n"
		"sequence where they disagree or stop, the minority is blamed (a tie is undecided).\n"
		"Each incident has a class: not_joined, mismatch, all_stuck, init, watchdog_late,\n"
		"rank_dead or undecided, with its evidence lines and the knobs that make the next\n"
		"hang diagnosable. A dump's rank comes from its \"rank\" key or the trailing number\n"
		"of its file name; a second dump of one rank is left out (duplicate-rank). A dump\n"
		"cut short (pickle, JSON or repr) is read up to its last complete entry, with a\n"
		"finding, and its rank is not blamed for the entries the cut lost.\n"
		"\n"
		"Dumps: a rank's pg_status (last enqueued / completed) says how far it got, even\n"
		"when its entries are cut or gone; a member without a dump while the others wait\n"
		"is the likely culprit (inferred); a collective completed on one rank was joined\n"
		"by all (state is no signature); a rank blamed in one group because it waits in\n"
		"another is a victim, and the group stuck first is named (cascade). Dumps of\n"
		"different Flight Recorder versions are said (dump-version-mismatch).\n"
		"Logs: timeout lines that disagree on OpType or Numel blame the minority; a rank\n"
		"whose last enqueued work is below the seq never issued it; with --world-size the\n"
		"silent minority is the likely culprit. A --world-size below a rank seen is said\n"
		"(world-size-mismatch) and not used.\n"
		"\n"
		"Exit status: 1 when a culprit or a decided class is found, 0 when there is no hang\n"
		"evidence (or only undecided incidents), 2 for unreadable input and when every\n"
		"input is empty or binary (neither a dump nor a text log); among others such a\n"
		"file is a finding and an unread-input warning.",
	.opts = opts,
	.run = run,
	.json_schema_version = 1,
	.writes_output = 1,
};
