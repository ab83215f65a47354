/*
 * test_hang.c - the hang readers and analysis against the facts written in
 * ../shared/data/hang/EXPECTED.md and PROVENANCE.txt (values copied by hand
 * from those notes), plus small hand-made inputs for the pickle reader's
 * refusals and the minority rule.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/detect.h"
#include "trainscope/hang.h"
#include "trainscope/jsonw.h"
#include "../../src/hang/hang_int.h"

struct loaded {
	struct ts_hang_set s;
	struct ts_hang_result r;
	int ok;
};

static void load(struct loaded *l, const char *path)
{
	struct ts_err err;
	ts_hang_set_init(&l->s);
	memset(&l->r, 0, sizeof(l->r));
	ts_err_init(&err);
	l->ok = ts_hang_read_file(&l->s, path, &err) == 0 && ts_hang_analyze(&l->s, &l->r, &err) == 0;
	if (!l->ok)
		ts_test_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
}

static void unload(struct loaded *l)
{
	ts_hang_result_release(&l->r);
	ts_hang_set_release(&l->s);
}

static int has_rank(const int64_t *v, size_t n, int64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static const struct ts_hang_work *work_of(const struct ts_hang_set *s, int64_t rank, int64_t seq)
{
	for (size_t i = 0; i < s->works.n; i++)
		if (s->works.v[i].rank == rank && s->works.v[i].seq == seq)
			return &s->works.v[i];
	return NULL;
}

static int any_note(const struct ts_hang_incident *in, const char *needle)
{
	for (size_t i = 0; i < in->notes.n; i++)
		if (strstr(in->notes.v[i], needle))
			return 1;
	return 0;
}

/* EXPECTED.md: pytorch_152623_desync_report.log */
TEST(hang_desync_report)
{
	DATA_OR_SKIP(path, "hang/pytorch_152623_desync_report.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	const struct ts_hang_work *w = work_of(&l.s, 0, 241);
	REQUIRE(w);
	CHECK_STR(w->op, "ALLREDUCE");
	CHECK_I64(w->numel_in, 6);
	CHECK_I64(w->numel_out, 6);
	CHECK_I64(w->timeout_ms, 600000);
	CHECK_I64(w->ran_for_ms, 600086);
	/* E515 18:36:47.341808597 = May 15 (unpadded MMDD) */
	REQUIRE(w->ev >= 0);
	CHECK_I64(l.s.evs.v[w->ev].month, 5);
	CHECK_I64(l.s.evs.v[w->ev].day, 15);
	CHECK_I64(l.s.evs.v[w->ev].tod_ns, ((18 * 60 + 36) * 60 + 47) * 1000000000LL + 341808597);
	REQUIRE(l.s.reports.n == 1);
	const struct ts_hang_report *rep = &l.s.reports.v[0];
	CHECK_I64(rep->kind, TS_REP_DESYNC);
	CHECK_I64(rep->reporter, 0);
	CHECK_I64(rep->seq, 315);
	CHECK_STR(rep->op, "ALLREDUCE");
	REQUIRE(rep->culprits.n == 1);
	CHECK_I64(rep->culprits.v[0], 7);
	REQUIRE(rep->groups.n == 3);
	CHECK_I64(rep->groups.v[0].seq, 182);
	CHECK_I64(rep->groups.v[0].ranks.n, 1);
	CHECK_I64(rep->groups.v[0].ranks.v[0], 7);
	CHECK_I64(rep->groups.v[1].seq, 315);
	CHECK_I64(rep->groups.v[1].ranks.n, 3);
	CHECK_STR(rep->groups.v[1].what, "started ALLREDUCE");
	CHECK_I64(rep->groups.v[2].seq, 317);
	CHECK_I64(rep->groups.v[2].ranks.n, 4);
	CHECK_I64(rep->groups.v[2].ranks.v[0], 3);
	CHECK_I64(rep->groups.v[2].ranks.v[3], 6);
	CHECK_STR(rep->groups.v[2].what, "started _ALLGATHER_BASE");
	/* L2-L12 kept together in the report */
	REQUIRE(rep->evs.n == 11);
	CHECK_I64(l.s.evs.v[rep->evs.v[0]].line, 2);
	CHECK_I64(l.s.evs.v[rep->evs.v[10]].line, 12);
	/* L13 progress */
	REQUIRE(l.s.progress.n == 1);
	CHECK_I64(l.s.progress.v[0].seq, 241);
	CHECK_I64(l.s.progress.v[0].enqueued, 315);
	CHECK_I64(l.s.progress.v[0].completed, 183);
	REQUIRE(l.s.progress.v[0].pg >= 0);
	const struct ts_hang_pg *pg = &l.s.pgs.v[l.s.progress.v[0].pg];
	CHECK_I64(pg->id, 0);
	CHECK_STR(pg->guid, "0");
	CHECK_STR(pg->desc, "default_pg");
	REQUIRE(l.r.incidents.n == 1);
	const struct ts_hang_incident *in = &l.r.incidents.v[0];
	CHECK_I64(in->cls, TS_HANG_NOT_JOINED);
	CHECK_I64(in->seq, 241); /* the watchdog's number, not the report's #315 */
	CHECK_I64(in->last_enqueued, 315);
	CHECK_I64(in->last_completed, 183);
	CHECK_I64(in->culprits.n, 1);
	CHECK_I64(in->culprits.v[0], 7);
	CHECK(any_note(in, "#315"));
	CHECK(any_note(in, "_ALLGATHER_BASE"));
	CHECK_I64(l.r.exit_code, 1);
	unload(&l);
}

/* EXPECTED.md: pytorch_140969_fr_trace_missing_ranks.log */
TEST(hang_fr_trace_report)
{
	DATA_OR_SKIP(path, "hang/pytorch_140969_fr_trace_missing_ranks.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.reports.n == 1);
	const struct ts_hang_report *rep = &l.s.reports.v[0];
	CHECK_I64(rep->kind, TS_REP_FR_TRACE);
	CHECK_I64(rep->seq, 31117);
	CHECK_I64(rep->record_id, 31116);
	CHECK_STR(rep->op, "nccl:all_reduce");
	CHECK_I64(rep->numel_in, 1571911);
	CHECK_I64(rep->numel_out, 1571911);
	CHECK_I64(rep->world, 8);
	CHECK_I64(rep->expected.n, 8);
	CHECK_STR(rep->state, "scheduled");
	CHECK_I64(rep->missing.n, 5);
	CHECK_I64(rep->missing.v[0], 3);
	CHECK_I64(rep->missing.v[4], 7);
	CHECK_I64(rep->frames, 2); /* L11-L13: header + 2 frames */
	REQUIRE(rep->pg >= 0);
	CHECK_STR(l.s.pgs.v[rep->pg].guid, "0");
	CHECK_STR(l.s.pgs.v[rep->pg].desc, "default_pg");
	REQUIRE(l.r.incidents.n == 1);
	const struct ts_hang_incident *in = &l.r.incidents.v[0];
	CHECK_I64(in->cls, TS_HANG_NOT_JOINED);
	CHECK_I64(in->kind, TS_OP_ALL_REDUCE);
	/* joined = expected - missing = {0, 1, 2} */
	CHECK_I64(in->reporting.n, 3);
	CHECK_I64(in->reporting.v[2], 2);
	CHECK_I64(in->culprits.n, 5);
	unload(&l);
}

/* EXPECTED.md: nccl_1911_ras_mismatch.log - the 30 unlisted ranks are behind */
TEST(hang_ras_text)
{
	DATA_OR_SKIP(path, "hang/nccl_1911_ras_mismatch.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.reports.n == 1);
	const struct ts_hang_report *rep = &l.s.reports.v[0];
	CHECK_I64(rep->kind, TS_REP_RAS);
	CHECK_I64(rep->world, 32);
	CHECK_STR(rep->state, "RUNNING");
	CHECK_STR(rep->errors, "MISMATCH");
	CHECK_STR(rep->op, "AllGather");
	CHECK_STR(rep->version, "2.26.2");
	CHECK_I64(rep->cuda_runtime, 12060);
	CHECK_I64(rep->cuda_driver, 12060);
	CHECK_I64(rep->nodes, 4);
	CHECK_I64(rep->procs_per_node, 8);
	/* "30 ranks ... 640", "2 ranks ... 641", listed 12 and 13 */
	REQUIRE(rep->groups.n == 3);
	CHECK_I64(rep->groups.v[0].seq, 640);
	CHECK_I64(rep->groups.v[0].count, 30);
	CHECK_I64(rep->groups.v[1].seq, 641);
	CHECK_I64(rep->groups.v[1].count, 2);
	CHECK_STR(rep->groups.v[2].what, "listed");
	CHECK_I64(rep->groups.v[2].ranks.n, 2);
	CHECK_I64(rep->groups.v[2].ranks.v[0], 12);
	CHECK_I64(rep->groups.v[2].ranks.v[1], 13);
	REQUIRE(l.r.incidents.n == 1);
	const struct ts_hang_incident *in = &l.r.incidents.v[0];
	CHECK_I64(in->cls, TS_HANG_NOT_JOINED);
	CHECK_I64(in->seq, 641);
	CHECK_I64(in->kind, TS_OP_ALL_GATHER);
	CHECK_I64(in->culprits.n, 30);
	CHECK(!has_rank(in->culprits.v, in->culprits.n, 12));
	CHECK(!has_rank(in->culprits.v, in->culprits.n, 13));
	CHECK(has_rank(in->culprits.v, in->culprits.n, 0));
	CHECK(has_rank(in->culprits.v, in->culprits.n, 11));
	CHECK(has_rank(in->culprits.v, in->culprits.n, 14));
	CHECK(has_rank(in->culprits.v, in->culprits.n, 31));
	CHECK_STR(l.r.vendor, "nvidia"); /* "compiled with CUDA 12.6" */
	unload(&l);
}

/* EXPECTED.md: clmvsnet_14_syncbn_dump_signal.log */
TEST(hang_newest_wording)
{
	DATA_OR_SKIP(path, "hang/clmvsnet_14_syncbn_dump_signal.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	CHECK_I64(l.s.works.n, 0); /* no op type or size in the excerpt */
	REQUIRE(l.s.progress.n == 2);
	CHECK_I64(l.s.progress.v[0].rank, 0);
	CHECK_I64(l.s.progress.v[0].seq, 716);
	CHECK_I64(l.s.progress.v[0].enqueued, 747);
	CHECK_I64(l.s.progress.v[0].completed, 715);
	CHECK_I64(l.s.evs.v[l.s.progress.v[0].ev].month, 12); /* E1213 = Dec 13 */
	CHECK_I64(l.s.evs.v[l.s.progress.v[0].ev].day, 13);
	CHECK_I64(l.s.progress.v[1].signal_from, -2); /* "from this local rank" */
	CHECK_I64(l.s.progress.v[1].enqueued, 747);
	CHECK_I64(l.s.progress.v[1].completed, 715);
	CHECK(l.s.fr_disabled);
	CHECK(l.s.dump_signal);
	REQUIRE(l.r.incidents.n == 1);
	CHECK_I64(l.r.incidents.v[0].seq, 716);
	CHECK_I64(l.r.incidents.v[0].last_enqueued - l.r.incidents.v[0].last_completed, 32);
	int advised = 0;
	for (size_t i = 0; i < l.r.advice.n; i++)
		advised |= strcmp(l.r.advice.v[i].knob, "TORCH_NCCL_TRACE_BUFFER_SIZE") == 0;
	CHECK(advised);
	unload(&l);
}

/* EXPECTED.md: torchtitan_1369_nccl_info_coll.log */
TEST(hang_nccl_info_coll)
{
	DATA_OR_SKIP(path, "hang/torchtitan_1369_nccl_info_coll.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.colls.n == 7);
	const struct ts_hang_coll *c = &l.s.colls.v[0];
	CHECK_I64(c->pid, 191370);
	CHECK_I64(c->tid, 191425);
	CHECK_I64(c->dev, 1);
	CHECK_I64(c->op_count, 13); /* d */
	CHECK_STR(c->op, "AllGather");
	CHECK_STR(c->comm, "0x55fca23fc0f0");
	CHECK_I64(c->count, 2097152);
	CHECK_I64(c->dtype, 7);
	CHECK_I64(c->nranks, 2);
	CHECK_I64(l.s.colls.v[5].op_count, 16); /* 10 */
	CHECK_I64(l.s.colls.v[6].op_count, 17); /* 11 */
	CHECK_I64(l.s.colls.v[6].tid, 191369);
	CHECK_STR(l.s.colls.v[1].comm, "0x55e290bd32d0");
	CHECK_I64(l.r.incidents.n, 0); /* no mismatch in the excerpt */
	CHECK_I64(l.r.exit_code, 0);
	unload(&l);
}

/* EXPECTED.md: nccl_531_ib_mismatch_coll.log */
TEST(hang_ib_mismatch)
{
	DATA_OR_SKIP(path, "hang/nccl_531_ib_mismatch_coll.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.reports.n == 1);
	CHECK_I64(l.s.reports.v[0].size_a, 32768);
	CHECK_I64(l.s.reports.v[0].size_b, 1048576);
	REQUIRE(l.s.colls.n == 4);
	for (size_t i = 0; i < 4; i++) {
		CHECK_I64(l.s.colls.v[i].op_count, 247);
		CHECK_I64(l.s.colls.v[i].count, 512);
		CHECK_I64(l.s.colls.v[i].dtype, 0);
		CHECK_I64(l.s.colls.v[i].nranks, 16);
	}
	CHECK_I64(l.s.colls.v[0].dev, 5);
	CHECK_I64(l.s.colls.v[3].dev, 1);
	REQUIRE(l.r.incidents.n == 1);
	CHECK_I64(l.r.incidents.v[0].cls, TS_HANG_MISMATCH);
	CHECK_I64(l.r.incidents.v[0].culprits.n, 0); /* no rank is named */
	CHECK(any_note(&l.r.incidents.v[0], "x32"));
	unload(&l);
}

/* EXPECTED.md: cachedit_761_watchdog_frames.log */
TEST(hang_watchdog_frames)
{
	DATA_OR_SKIP(path, "hang/cachedit_761_watchdog_frames.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.works.n == 1); /* frames #0-#1 are not a second timeout */
	const struct ts_hang_work *w = &l.s.works.v[0];
	CHECK_I64(w->rank, 2);
	CHECK_I64(w->seq, 472025);
	CHECK_STR(w->op, "ALLTOALL_BASE");
	CHECK_I64(w->kind, TS_OP_ALL_TO_ALL);
	CHECK_I64(w->numel_in, 407003136);
	CHECK_I64(w->numel_out, 407003136);
	CHECK_I64(w->timeout_ms, 1800000);
	CHECK_I64(w->ran_for_ms, 1800018);
	REQUIRE(w->pg >= 0);
	CHECK_I64(l.s.pgs.v[w->pg].id, 2);
	CHECK_STR(l.s.pgs.v[w->pg].guid, "5");
	CHECK_STR(l.s.pgs.v[w->pg].desc, "mesh_ulysses");
	CHECK_I64(l.s.evs.v[w->ev].month, 1); /* E125 = Jan 25 */
	CHECK_I64(l.s.evs.v[w->ev].day, 25);
	CHECK(l.s.takedown);
	unload(&l);
}

/* PROVENANCE/anchors: llamafactory_7396 - all reporting ranks issued, none completed */
TEST(hang_llamafactory_all_stuck)
{
	DATA_OR_SKIP(path, "hang/llamafactory_7396_allreduce_timeout.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	const struct ts_hang_work *w0 = work_of(&l.s, 0, 1580), *w4 = work_of(&l.s, 4, 1580);
	REQUIRE(w0 && w4);
	CHECK_I64(w0->numel_in, 466119168);
	CHECK_I64(w0->ran_for_ms, 600060);
	CHECK_I64(w4->ran_for_ms, 600067);
	CHECK_I64(w4->timeout_ms, 600000);
	REQUIRE(l.s.progress.n == 2);
	CHECK_I64(l.s.progress.v[1].rank, 3);
	CHECK_I64(l.s.progress.v[1].enqueued, 1582);
	CHECK_I64(l.s.progress.v[1].completed, 1579);
	REQUIRE(l.s.progress.v[1].pg >= 0);
	CHECK_I64(l.s.pgs.v[l.s.progress.v[1].pg].id, 1);
	REQUIRE(l.r.incidents.n == 1);
	CHECK_I64(l.r.incidents.v[0].cls, TS_HANG_ALL_STUCK);
	CHECK_I64(l.r.incidents.v[0].reporting.n, 3); /* 0, 3, 4 */
	unload(&l);
}

/* anchors: ofa_271 - the verdict says which ranks the excerpt lacks */
TEST(hang_ofa_legacy)
{
	DATA_OR_SKIP(path, "hang/ofa_271_legacy_no_numel.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	CHECK_I64(l.s.works.n, 5);
	for (size_t i = 0; i < l.s.works.n; i++) {
		CHECK_I64(l.s.works.v[i].seq, 469508);
		CHECK_I64(l.s.works.v[i].numel_in, -1);
		CHECK_I64(l.s.works.v[i].timeout_ms, 1800000);
		CHECK(l.s.works.v[i].ran_for_ms >= 1802210 && l.s.works.v[i].ran_for_ms <= 1802220);
	}
	CHECK_I64(l.s.evs.v[l.s.works.v[0].ev].month, -1); /* "[E ProcessGroupNCCL.cpp:737]": no date */
	REQUIRE(l.r.incidents.n == 1);
	CHECK_I64(l.r.incidents.v[0].cls, TS_HANG_UNDECIDED);
	CHECK(any_note(&l.r.incidents.v[0], "ranks 0, 4-5"));
	CHECK_I64(l.r.exit_code, 0);
	unload(&l);
}

/* anchors: pytorch_118369 - several PGs, ran-for 14.2 x timeout */
TEST(hang_watchdog_late)
{
	DATA_OR_SKIP(path, "hang/pytorch_118369_multi_pg_seq.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	CHECK(work_of(&l.s, 0, 96117) && work_of(&l.s, 0, 96120) && work_of(&l.s, 0, 96125));
	CHECK(work_of(&l.s, 7, 64088) != NULL);
	REQUIRE(l.r.incidents.n == 4);
	for (size_t i = 0; i < 4; i++)
		CHECK_I64(l.r.incidents.v[i].cls, TS_HANG_WATCHDOG_LATE);
	/* 25624887 / 1800000 = 14.236 */
	CHECK(any_note(&l.r.incidents.v[0], "14.2 x"));
	CHECK(l.r.findings.n >= 1 && strstr(l.r.findings.v[0], "96117, 96120, 96125"));
	unload(&l);
}

/* anchors: deepspeed_7533 - dump signal from rank 6 (double space) */
TEST(hang_dump_signal_other_rank)
{
	DATA_OR_SKIP(path, "hang/deepspeed_7533_dump_signal.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	const struct ts_hang_work *w = work_of(&l.s, 7, 460631);
	REQUIRE(w);
	CHECK_I64(w->kind, TS_OP_ALL_REDUCE);
	CHECK_I64(w->numel_in, 1);
	REQUIRE(l.s.progress.n == 1);
	CHECK_I64(l.s.progress.v[0].rank, 2);
	CHECK_I64(l.s.progress.v[0].signal_from, 6);
	CHECK_I64(l.s.progress.v[0].enqueued, 460631);
	CHECK_I64(l.s.progress.v[0].completed, 460630);
	REQUIRE(l.r.incidents.n == 1);
	CHECK(has_rank(l.r.incidents.v[0].reporting.v, l.r.incidents.v[0].reporting.n, 6));
	unload(&l);
}

/* anchors: arctictraining_219 - FR disabled, newest progress wording */
TEST(hang_fr_disabled)
{
	DATA_OR_SKIP(path, "hang/arctictraining_219_fr_disabled.log");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	CHECK(l.s.fr_disabled);
	REQUIRE(l.s.progress.n == 1);
	CHECK_I64(l.s.progress.v[0].rank, 5);
	CHECK_I64(l.s.evs.v[l.s.progress.v[0].ev].month, 6); /* E626 */
	CHECK_I64(l.s.evs.v[l.s.progress.v[0].ev].day, 26);
	CHECK_I64(l.s.progress.v[0].seq, 120049);
	CHECK_I64(l.s.progress.v[0].enqueued, 120051);
	CHECK_I64(l.s.progress.v[0].completed, 120048);
	REQUIRE(l.s.progress.v[0].pg >= 0);
	CHECK_I64(l.s.pgs.v[l.s.progress.v[0].pg].id, 0);
	CHECK_STR(l.s.pgs.v[l.s.progress.v[0].pg].guid, "0");
	CHECK_STR(l.s.pgs.v[l.s.progress.v[0].pg].desc, "default_pg");
	int advised = 0;
	for (size_t i = 0; i < l.r.advice.n; i++)
		advised |= strcmp(l.r.advice.v[i].knob, "TORCH_FR_BUFFER_SIZE") == 0;
	CHECK(advised);
	unload(&l);
}

/* anchors: the v2.5 repr example (tuple for process_group) */
TEST(hang_fr_repr_example)
{
	DATA_OR_SKIP(path, "hang/fr_dump_unpickled_example_v2.5.txt");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.dumps.n == 1);
	CHECK_STR(l.s.dumps.v[0].version, "2.5");
	CHECK_I64(l.s.dumps.v[0].entries, 1);
	CHECK_I64(l.s.dumps.v[0].rank, -1); /* "v2.5" in the name is not a rank */
	REQUIRE(l.s.works.n == 1);
	const struct ts_hang_work *w = &l.s.works.v[0];
	CHECK_STR(w->op, "nccl:all_reduce");
	CHECK_I64(w->seq, 1);
	CHECK_I64(w->record_id, 0);
	CHECK_I64(w->numel_in, 12);
	CHECK(w->shape && strstr(w->shape, "[[3,4]][Float]"));
	CHECK_I64(w->state, TS_ST_COMPLETED);
	CHECK_I64(w->timeout_ms, 600000);
	REQUIRE(w->pg >= 0);
	CHECK_STR(l.s.pgs.v[w->pg].guid, "0");
	CHECK_STR(l.s.pgs.v[w->pg].desc, "default_pg");
	CHECK_STR(l.s.pgs.v[w->pg].ranks, "0,1");
	REQUIRE(l.s.status.n == 1);
	CHECK_I64(l.s.status.v[0].enqueued, 2);
	CHECK_I64(l.s.status.v[0].started, -1);
	CHECK_I64(l.s.status.v[0].completed, 2);
	CHECK_I64(l.r.incidents.n, 0);
	unload(&l);
}

/* anchors: the tutorial's fr_trace output */
TEST(hang_fr_trace_tutorial)
{
	DATA_OR_SKIP(path, "hang/fr_trace_output_tutorial_missing_rank.txt");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	REQUIRE(l.s.reports.n == 1);
	CHECK_I64(l.s.reports.v[0].seq, 5);
	CHECK_I64(l.s.reports.v[0].record_id, 4);
	CHECK_I64(l.s.reports.v[0].world, 2);
	CHECK_STR(l.s.reports.v[0].state, "scheduled");
	REQUIRE(l.r.incidents.n == 1);
	CHECK_I64(l.r.incidents.v[0].missing.n, 1);
	CHECK_I64(l.r.incidents.v[0].missing.v[0], 1);
	unload(&l);
}

/* prose that quotes log lines is not evidence */
TEST(hang_prose_is_not_evidence)
{
	DATA_OR_SKIP(path, "hang/EXPECTED.md");
	struct loaded l;
	load(&l, path);
	REQUIRE(l.ok);
	CHECK_I64(l.r.incidents.n, 0);
	unload(&l);
}

/* ---- hand-made inputs ---- */

static int read_mem(struct ts_hang_set *s, const char *text, const char *name, struct ts_err *err)
{
	return ts_hang_read_mem(s, text, strlen(text), name, err);
}

/* the classic code-bearing pickle, os.system('ls'): PROTO 2, GLOBAL
 * "os\nsystem\n", the argument tuple, REDUCE -- refused at the GLOBAL
 * (byte 2), naming the class */
TEST(hang_pickle_refuses_global)
{
	static const char pk[] = "\x80\x02" "cos\nsystem\n" "X\x02\x00\x00\x00ls" "\x85R.";
	struct ts_hang_set s;
	struct ts_err err;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	CHECK_I64(ts_hang_read_pickle_mem(&s, pk, sizeof(pk) - 1, "evil.pkl", 0, &err), TS_EUNSUPPORTED);
	CHECK(strstr(err.msg, "GLOBAL os.system") != NULL);
	CHECK_I64(err.offset, 2);
	ts_hang_set_release(&s);
}

/* python3: pickle.dumps({'entries': [], 'version': '2.5'}, protocol=2) ==
 * b'\x80\x02}q\x00(X\x07\x00\x00\x00entriesq\x01]q\x02X\x07\x00\x00\x00versionq\x03
 *   X\x03\x00\x00\x002.5q\x04u.' (string pieces split so C hex escapes end);
 * the same dict with 'communicators': [] added is still a dump: NCCL's RAS
 * writes JSON (it was read as an empty RAS report: no dump, fuzz_hang_pickle) */
TEST(hang_pickle_plain_dict)
{
	static const char plain[] =
		"\x80\x02}q\x00(X\x07\x00\x00\x00" "entries" "q\x01]q\x02X\x07\x00\x00\x00" "version"
		"q\x03X\x03\x00\x00\x00" "2.5" "q\x04u.";
	static const char ras_key[] =
		"\x80\x02}q\x00(X\x07\x00\x00\x00" "entries" "q\x01]q\x02X\x07\x00\x00\x00" "version"
		"q\x03X\x03\x00\x00\x00" "2.5" "q\x04X\r\x00\x00\x00" "communicators" "q\x05]q\x06u.";
	const char *pk[] = { plain, ras_key };
	const size_t n[] = { sizeof(plain) - 1, sizeof(ras_key) - 1 };

	for (int k = 0; k < 2; k++) {
		struct ts_hang_set s;
		struct ts_err err;
		ts_hang_set_init(&s);
		ts_err_init(&err);
		CHECK_I64(ts_hang_read_pickle_mem(&s, pk[k], n[k], "ok.pkl", 3, &err), 0);
		REQUIRE(s.dumps.n == 1);
		CHECK_STR(s.dumps.v[0].version, "2.5");
		CHECK_I64(s.dumps.v[0].rank, 3);
		CHECK_I64(s.dumps.v[0].entries, 0);
		ts_hang_set_release(&s);
	}
}

/* cut inside the root's first key: nothing read says it is a dump */
TEST(hang_pickle_truncated)
{
	static const char pk[] = "\x80\x02}q\x00(X\x07\x00\x00\x00" "entr";
	struct ts_hang_set s;
	struct ts_err err;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	CHECK_I64(ts_hang_read_pickle_mem(&s, pk, sizeof(pk) - 1, "cut.pkl", 0, &err), TS_ETRUNC);
	ts_hang_set_release(&s);
}

/* One rank's Flight Recorder dump in JSON: collectives 1..last of the
 * default group, completed, the last one started when `stuck`. */
static int fr_json(char *buf, size_t size, int last, int stuck)
{
	size_t n = (size_t)snprintf(buf, size,
		"{\"version\": \"2.5\", \"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\","
		" \"ranks\": \"[0, 1, 2, 3]\"}}, \"entries\": [");
	for (int q = 1; q <= last && n < size; q++)
		n += (size_t)snprintf(buf + n, size - n,
			"%s{\"record_id\": %d, \"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"],"
			" \"collective_seq_id\": %d, \"profiling_name\": \"nccl:all_reduce\","
			" \"input_sizes\": [[1024]], \"input_dtypes\": [\"Float\"], \"output_sizes\": [[1024]],"
			" \"output_dtypes\": [\"Float\"], \"state\": \"%s\", \"timeout_ms\": 600000,"
			" \"time_created_ns\": %d000123, \"is_p2p\": false}",
			q > 1 ? ", " : "", q - 1, q, q == last && stuck ? "started" : "completed", q);
	if (n < size)
		n += (size_t)snprintf(buf + n, size - n, "]}\n");
	return n < size ? (int)n : -1;
}

/*
 * The incident of the cut tests: ranks 0, 2 and 3 dump whole JSON, rank 2
 * never issued collective 6, and rank 1's dump is `dump` cut to its first
 * `cut` bytes (a pickle when pickle != 0). Whatever the cut, rank 2 is the
 * one culprit and rank 1 is never blamed for the entries its cut lost; the
 * cut is a finding, at byte `cut`, exactly when want_found. Rank 1's
 * entries read must be want_kept (-1: not checked).
 */
static void check_cut_incident(const void *dump, size_t cut, int pickle, int want_found,
			       int64_t want_kept)
{
	char other[4096];
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int found = 0;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	for (int rank = 0; rank < 4; rank++) {
		char name[32];
		snprintf(name, sizeof(name), "nccl_trace_rank_%d", rank);
		if (rank == 1) {
			REQUIRE((pickle ? ts_hang_read_pickle_mem(&s, dump, cut, name, rank, &err)
					: ts_hang_read_mem(&s, dump, cut, name, &err)) == 0);
			if (want_kept >= 0)
				CHECK_I64(s.dumps.v[s.dumps.n - 1].entries, want_kept);
			CHECK_I64(s.dumps.v[s.dumps.n - 1].cut_at, want_found ? (int64_t)cut : -1);
			continue;
		}
		REQUIRE(fr_json(other, sizeof(other), rank == 2 ? 5 : 6, rank != 2) > 0);
		REQUIRE(read_mem(&s, other, name, &err) == 0);
	}
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(r.incidents.n == 1);
	CHECK_I64(r.incidents.v[0].cls, TS_HANG_NOT_JOINED);
	CHECK_I64(r.incidents.v[0].culprits.n, 1);
	CHECK_I64(r.incidents.v[0].culprits.v[0], 2);
	for (size_t k = 0; k < r.findings.n; k++)
		found |= strstr(r.findings.v[k], "nccl_trace_rank_1: truncated at byte") != NULL;
	CHECK_I64(found, want_found);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* Watchdog and progress lines of ranks 0..3 but `skip` (-1: none), each
 * having enqueued seq 100 and completed 99, into s. */
static void progress_logs(struct ts_hang_set *s, int skip, int upto)
{
	char buf[8192];
	size_t n = 0;
	struct ts_err err;

	ts_err_init(&err);
	for (int k = 0; k <= upto; k++) {
		if (k == skip)
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			"[rank%d]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog "
			"caught collective operation timeout: WorkNCCL(SeqNum=100, OpType=ALLREDUCE, "
			"NumelIn=6, NumelOut=6, Timeout(ms)=600000) ran for 600086 milliseconds before "
			"timing out.\n[rank%d]:[E515 18:36:47.343391940 ProcessGroupNCCL.cpp:2268] [PG ID 0 "
			"PG GUID 0(default_pg) Rank %d]  failure detected by watchdog at work sequence id: "
			"100 PG status: last enqueued work: 100, last completed work: 99\n", k, k, k, k);
	}
	REQUIRE(read_mem(s, buf, "train.log", &err) == 0);
}

/* Ranks that enqueued a seq and did not complete it show nothing of the
 * ranks that left no line (one that never issued the seq hangs the group
 * the same way): all_stuck needs the reporting ranks to be most of a
 * known world. Rank 0 alone of a world of 8 (the desync report's log
 * without its report, where rank 7 was the culprit) and 2 of 4 are
 * undecided naming the silent ranks; 3 of 4 with the world size given is
 * not_joined on the silent rank 2 (the only rank without evidence: the
 * likely culprit, as a member without a dump is); all 4 is all_stuck, with
 * the world size given or not; one rank's log is undecided without a world
 * size and all_stuck with world size 1. All were all_stuck before. */
TEST(hang_progress_with_silent_ranks)
{
	static const struct { int skip, upto; int64_t world; int cls; const char *said; int64_t culprit; } c[] = {
		{ -1, 0, 8, TS_HANG_UNDECIDED, "no evidence from ranks 1-7 (world size 8): a rank that "
		  "never issued seq 100", -1 },
		{ -1, 1, 4, TS_HANG_UNDECIDED, "no evidence from ranks 2-3 (world size 4)", -1 },
		{ 2, 3, 4, TS_HANG_NOT_JOINED, "no line from ranks 2 (world size 4), the only ranks without evidence", 2 },
		{ -1, 3, 4, TS_HANG_ALL_STUCK, NULL, -1 },
		{ -1, 3, -1, TS_HANG_ALL_STUCK, NULL, -1 },
		{ -1, 0, -1, TS_HANG_UNDECIDED, "one rank's evidence, and the world size is unknown", -1 },
		{ -1, 0, 1, TS_HANG_ALL_STUCK, NULL, -1 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ts_hang_set s;
		struct ts_hang_result r;
		struct ts_err err;
		int said = 0;

		ts_hang_set_init(&s);
		ts_err_init(&err);
		s.world_size = c[i].world;
		progress_logs(&s, c[i].skip, c[i].upto);
		REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
		REQUIRE(r.incidents.n == 1);
		CHECK_I64(r.incidents.v[0].cls, c[i].cls);
		CHECK_I64(r.incidents.v[0].culprits.n, c[i].culprit >= 0);
		if (c[i].culprit >= 0 && r.incidents.v[0].culprits.n == 1)
			CHECK_I64(r.incidents.v[0].culprits.v[0], c[i].culprit);
		for (size_t k = 0; c[i].said && k < r.incidents.v[0].notes.n; k++)
			said |= strstr(r.incidents.v[0].notes.v[k], c[i].said) != NULL;
		CHECK(!c[i].said || said);
		ts_hang_result_release(&r);
		ts_hang_set_release(&s);
	}
}

/* A point-to-point op left scheduled in a dump (rank 1's recv from 0) is
 * not matched across ranks (no pg_config gives the group's ranks, so its
 * peer is unknown), but it is said: counted in p2p_pending with a
 * finding naming it (the result read "no hang evidence" without a word). */
TEST(hang_pending_p2p_is_said)
{
	static const char *const dumps[2] = {
		"{\"version\": \"2.5\", \"rank\": 0, \"entries\": [{\"record_id\": 0, \"pg_id\": 0, "
		"\"process_group\": [\"0\", \"default_pg\"], \"collective_seq_id\": 0, \"p2p_seq_id\": 1, "
		"\"profiling_name\": \"nccl:send 0->1\", \"state\": \"completed\", \"is_p2p\": true}]}",
		"{\"version\": \"2.5\", \"rank\": 1, \"entries\": [{\"record_id\": 0, \"pg_id\": 0, "
		"\"process_group\": [\"0\", \"default_pg\"], \"collective_seq_id\": 0, \"p2p_seq_id\": 1, "
		"\"profiling_name\": \"nccl:recv 1<-0\", \"state\": \"scheduled\", \"is_p2p\": true}]}",
	};
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int said = 0;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(read_mem(&s, dumps[0], "nccl_trace_rank_0", &err) == 0);
	REQUIRE(read_mem(&s, dumps[1], "nccl_trace_rank_1", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	CHECK_I64(r.incidents.n, 0);
	CHECK_I64((int64_t)r.p2p_pending, 1);
	for (size_t k = 0; k < r.findings.n; k++)
		said += strstr(r.findings.v[k], "rank 1's point-to-point nccl:recv 1<-0 (record 0) is "
			       "scheduled and not completed") != NULL;
	CHECK_I64(said, 1);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* A file of a directory named like a dump but detected as something else
 * (a Kineto trace saved as nccl_trace_rank_0) was passed over without a
 * word: it is an unread input now; a file of another name stays unsaid. */
TEST(hang_skipped_file_named_like_a_dump)
{
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int said = 0;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(ts_hang_skip_file(&s, "run/nccl_trace_rank_0", "kineto-trace") == 0);
	REQUIRE(ts_hang_skip_file(&s, "run/rank0.pt.trace.json", "kineto-trace") == 0);
	CHECK_I64(s.unread.n, 1);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	for (size_t k = 0; k < r.findings.n; k++)
		said += strstr(r.findings.v[k], "run/nccl_trace_rank_0: named like a Flight Recorder "
			       "dump, but its content is kineto-trace, not a dump") != NULL;
	CHECK_I64(said, 1);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* An empty file is said, whatever its name, with the dump's reason when
 * it has a dump's name (it gave "no hang evidence" without a word, and an
 * empty dump was said to "open with bytes" it has not) */
TEST(hang_empty_file_is_said)
{
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int said_dump = 0, said_log = 0;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(ts_hang_read_mem(&s, "", 0, "fr/nccl_trace_rank_3", &err) == 0);
	REQUIRE(ts_hang_read_mem(&s, NULL, 0, "logs/rank1.log", &err) == 0); /* as mapped */
	REQUIRE(ts_hang_read_mem(&s, "plain words\n", 12, "logs/rank2.log", &err) == 0);
	CHECK_I64(s.unread.n, 2);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	for (size_t k = 0; k < r.findings.n; k++) {
		said_dump += strstr(r.findings.v[k], "fr/nccl_trace_rank_3: empty (0 bytes), a Flight "
				    "Recorder dump's name: its rank may have died") != NULL;
		said_log += strstr(r.findings.v[k], "logs/rank1.log: empty (0 bytes); nothing was "
				   "read from it") != NULL;
		CHECK(strstr(r.findings.v[k], "rank2.log") == NULL);
	}
	CHECK_I64(said_dump, 1);
	CHECK_I64(said_log, 1);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* Binary input is neither a dump nor a text log: a NUL byte before the
 * first line end, or more than 1 byte in 8 of no text, is binary; a log
 * padded with NULs after its lines, or with some Latin-1 bytes, is text
 * (a file of random bytes was read as a log "cut while it was written") */
TEST(hang_binary_rule)
{
	static const unsigned char nul_early[] = "ab\0cd\n";
	static const unsigned char nul_tail[] = "a line\n\0\0\0\0\0\0\0\0\0\0\0\0";
	static const unsigned char high[] = { 0xff, 0xfe, 0x81, 'a', 0xc3, 'b', '\n', 0x90 };
	static const unsigned char utf8[] = "caf\xc3\xa9 \xe2\x9c\x93 \x1b[31mred\x1b[0m\r\n";
	static const unsigned char latin1[] = "caf\xe9 ol\xe9, a log line of forty bytes\n";
	struct ts_hang_unread u;

	memset(&u, 0, sizeof(u));
	CHECK_I64(ts_hang_binary(nul_early, sizeof(nul_early) - 1, &u), 1);
	CHECK_I64(u.nul_at, 2);
	CHECK_I64(u.bad_at, 2);
	CHECK_I64(u.nul_early, 1);
	CHECK_I64(ts_hang_binary(nul_tail, sizeof(nul_tail) - 1, &u), 0);
	CHECK_I64(u.nul_at, 7);
	CHECK_I64(ts_hang_binary(high, sizeof(high), &u), 1);
	CHECK_I64(u.nontext, 5);   /* ff fe 81 c3 90; 'a' 'b' '\n' are text */
	CHECK_I64(u.scanned, 8);
	CHECK_I64(u.bad_at, 0);
	CHECK_I64(ts_hang_binary(utf8, sizeof(utf8) - 1, &u), 0);
	CHECK_I64(u.nontext, 0);
	CHECK_I64(ts_hang_binary(latin1, sizeof(latin1) - 1, &u), 0);
	CHECK_I64(u.nontext, 2);
	CHECK_I64(ts_hang_binary(NULL, 0, &u), 0);
	CHECK_I64(ts_hang_binary(NULL, 0, NULL), 0);
}

/* A binary input is not read: no cut last line, one unread input; alone
 * it is an input error naming it, beside a log a finding */
TEST(hang_binary_input_is_not_read)
{
	static const unsigned char bin[] = { 0x13, 0x9a, 0x00, 0x41, 0xff, 0x02, 0x7f, 0x55 };
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int said = 0;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(ts_hang_read_mem(&s, bin, sizeof(bin), "core.1234", &err) == 0);
	CHECK_I64(s.unread.n, 1);
	CHECK_I64(s.cut_lines.n, 0);
	CHECK_I64(s.lines, 0);
	CHECK_I64(ts_hang_nothing_read(&s, &err), TS_EPARSE);
	CHECK_STR(err.path, "core.1234");
	CHECK_I64(err.offset, 2);
	CHECK(strstr(err.msg, "binary (a NUL byte at offset 2): neither a Flight Recorder dump") != NULL);
	ts_err_init(&err);
	REQUIRE(ts_hang_read_mem(&s, "plain words\n", 12, "rank0.log", &err) == 0);
	CHECK_I64(ts_hang_nothing_read(&s, &err), 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	for (size_t k = 0; k < r.findings.n; k++)
		said += strcmp(r.findings.v[k], "core.1234: binary (a NUL byte at offset 2): neither a "
			       "Flight Recorder dump (pickle, JSON or Python repr) nor a text log; "
			       "nothing was read from it") == 0;
	CHECK_I64(said, 1);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* buf with every "from" replaced by "to" (same length or shorter) */
static void replace_all(char *buf, const char *from, const char *to)
{
	size_t fn = strlen(from), tn = strlen(to);
	char *p = buf;

	while ((p = strstr(p, from))) {
		memmove(p + tn, p + fn, strlen(p + fn) + 1);
		memcpy(p, to, tn);
		p += tn;
	}
}

/* Dumps of versions 1.1-1.4 (PyTorch 2.2-2.3) name the sequence "seq_id":
 * the 4-rank incident of the cut tests (rank 2 never issued collective 6)
 * in that spelling names rank 2 (it gave "no hang evidence" without a
 * word); dumps whose entries carry no sequence id at all say so. */
TEST(hang_dump_v1_seq_id)
{
	for (int spelling = 0; spelling < 2; spelling++) {
		struct ts_hang_set s;
		struct ts_hang_result r;
		struct ts_err err;
		int said = 0;

		ts_hang_set_init(&s);
		ts_err_init(&err);
		for (int rank = 0; rank < 4; rank++) {
			char dump[4096], name[32];
			snprintf(name, sizeof(name), "nccl_trace_rank_%d", rank);
			REQUIRE(fr_json(dump, sizeof(dump), rank == 2 ? 5 : 6, rank != 2) > 0);
			replace_all(dump, "\"version\": \"2.5\"", "\"version\": \"1.4\"");
			replace_all(dump, "\"collective_seq_id\"", spelling ? "\"sequence\"" : "\"seq_id\"");
			REQUIRE(read_mem(&s, dump, name, &err) == 0);
		}
		REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
		for (size_t k = 0; k < r.findings.n; k++)
			said += strstr(r.findings.v[k], "none of its 6 collective entries has a "
				       "sequence id") != NULL;
		if (!spelling) {
			REQUIRE(r.incidents.n == 1);
			CHECK_I64(r.incidents.v[0].cls, TS_HANG_NOT_JOINED);
			REQUIRE(r.incidents.v[0].culprits.n == 1);
			CHECK_I64(r.incidents.v[0].culprits.v[0], 2);
			CHECK_I64(said, 0);
		} else {
			CHECK_I64(r.incidents.n, 0);
			CHECK_I64(said, 3); /* ranks 0, 1, 3; rank 2 has 5 */
		}
		ts_hang_result_release(&r);
		ts_hang_set_release(&s);
	}
}

/* Rank 1's JSON dump cut (the rank was killed while dumping) at every
 * byte from the start of its entries to its last byte: the readable dumps
 * still name rank 2, rank 1 is never blamed for the entries its cut lost,
 * and the cut is a finding; whole, no finding. */
TEST(hang_dump_cut_keeps_the_rest)
{
	char full[4096];
	int len = fr_json(full, sizeof(full), 6, 1);
	const char *ents = strstr(full, "\"entries\"");
	size_t cuts = 0;

	REQUIRE(len > 0 && ents);
	for (size_t cut = (size_t)(ents - full); cut <= (size_t)len; cut++) {
		/* the last bytes are "}\n": the document is whole from there */
		check_cut_incident(full, cut, 0, cut < (size_t)len - 1, -1);
		cuts++;
	}
	CHECK(cuts > 1000);
}

/* The culprit's dump cut after its entries list (only its closing brace
 * lost): its entries are all there, so it is still blamed for never
 * issuing collective 6 (the cut made the incident undecided); cut inside
 * the list, it is not. */
TEST(hang_dump_cut_after_entries_blames)
{
	char buf[4096], name[32];
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;

	for (int inside = 0; inside < 2; inside++) {
		ts_hang_set_init(&s);
		ts_err_init(&err);
		for (int rank = 0; rank < 4; rank++) {
			int len = fr_json(buf, sizeof(buf), rank == 2 ? 5 : 6, rank != 2);
			REQUIRE(len > 0);
			snprintf(name, sizeof(name), "nccl_trace_rank_%d", rank);
			if (rank == 2) {
				/* "]}\n": cut before the '}', or before the ']' */
				size_t cut = (size_t)len - (inside ? 3 : 2);
				REQUIRE(ts_hang_read_mem(&s, buf, cut, name, &err) == 0);
				CHECK_I64(s.dumps.v[s.dumps.n - 1].cut_at, (int64_t)cut);
				CHECK_I64(s.dumps.v[s.dumps.n - 1].entries_cut, inside);
				CHECK_I64(s.dumps.v[s.dumps.n - 1].entries, 5);
			} else {
				REQUIRE(read_mem(&s, buf, name, &err) == 0);
			}
		}
		REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
		REQUIRE(r.incidents.n == 1);
		if (!inside) {
			CHECK_I64(r.incidents.v[0].cls, TS_HANG_NOT_JOINED);
			CHECK_I64(r.incidents.v[0].culprits.n, 1);
			if (r.incidents.v[0].culprits.n)
				CHECK_I64(r.incidents.v[0].culprits.v[0], 2);
		} else {
			CHECK_I64(r.incidents.v[0].culprits.n, 0);
		}
		ts_hang_result_release(&r);
		ts_hang_set_release(&s);
	}
}

/* A pickle writer with c10's layout (torch/csrc/jit/serialization/
 * pickler.cpp): PROTO 2; a dict is EMPTY_DICT, MARK, key, value...,
 * SETITEMS; a list EMPTY_LIST, MARK, items, APPENDS; a 2-tuple TUPLE2;
 * strings BINUNICODE; ints BININT1 / BININT / LONG1; bools NEWTRUE /
 * NEWFALSE. Each container is memoized with BINPUT: right after its
 * EMPTY_ opcode (older c10, and Python's pickler) or after it is complete
 * (late, current c10). */
struct pkw {
	unsigned char b[8192];
	size_t n;
	unsigned memo;
	int late;
};

static void pkw_byte(struct pkw *w, unsigned c)
{
	if (w->n < sizeof(w->b))
		w->b[w->n++] = (unsigned char)c;
}

static void pkw_str(struct pkw *w, const char *s)
{
	size_t k = strlen(s);
	pkw_byte(w, 'X');
	for (int i = 0; i < 4; i++)
		pkw_byte(w, (unsigned)(k >> (8 * i)) & 255);
	for (size_t i = 0; i < k; i++)
		pkw_byte(w, (unsigned char)s[i]);
}

static void pkw_int(struct pkw *w, int64_t v)
{
	if (v >= 0 && v < 256) {
		pkw_byte(w, 'K');
		pkw_byte(w, (unsigned)v);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		pkw_byte(w, 'J');
		for (int i = 0; i < 4; i++)
			pkw_byte(w, (unsigned)((uint64_t)v >> (8 * i)) & 255);
	} else {
		pkw_byte(w, 0x8a);
		pkw_byte(w, 8);
		for (int i = 0; i < 8; i++)
			pkw_byte(w, (unsigned)((uint64_t)v >> (8 * i)) & 255);
	}
}

static void pkw_binput(struct pkw *w)
{
	pkw_byte(w, 'q');
	pkw_byte(w, w->memo++ & 255);
}

/* EMPTY_DICT or EMPTY_LIST and the MARK of its items */
static void pkw_open(struct pkw *w, unsigned kind)
{
	pkw_byte(w, kind);
	if (!w->late)
		pkw_binput(w);
	pkw_byte(w, '(');
}

/* SETITEMS or APPENDS */
static void pkw_close(struct pkw *w, unsigned op)
{
	pkw_byte(w, op);
	if (w->late)
		pkw_binput(w);
}

static void pkw_int_list(struct pkw *w, int64_t v)
{
	pkw_open(w, ']');
	pkw_int(w, v);
	pkw_close(w, 'e');
}

/* fr_json's dump as c10 pickles it; open[q - 1] is where entry q's
 * EMPTY_DICT is, *appends where the entries' APPENDS is */
static size_t fr_pickle(struct pkw *w, int late, int last, int stuck, size_t *open, size_t *appends)
{
	w->n = 0;
	w->memo = 0;
	w->late = late;
	pkw_byte(w, 0x80);
	pkw_byte(w, 2);
	pkw_open(w, '}');
	pkw_str(w, "version");
	pkw_str(w, "2.5");
	pkw_str(w, "pg_config");
	pkw_open(w, '}');
	pkw_str(w, "0");
	pkw_open(w, '}');
	pkw_str(w, "name");
	pkw_str(w, "0");
	pkw_str(w, "desc");
	pkw_str(w, "default_pg");
	pkw_str(w, "ranks");
	pkw_str(w, "[0, 1, 2, 3]");
	pkw_close(w, 'u');
	pkw_close(w, 'u');
	pkw_str(w, "entries");
	pkw_open(w, ']');
	for (int q = 1; q <= last; q++) {
		open[q - 1] = w->n;
		pkw_open(w, '}');
		pkw_str(w, "record_id");
		pkw_int(w, q - 1);
		pkw_str(w, "pg_id");
		pkw_int(w, 0);
		pkw_str(w, "process_group");
		pkw_str(w, "0");
		pkw_str(w, "default_pg");
		pkw_byte(w, 0x86);
		pkw_str(w, "collective_seq_id");
		pkw_int(w, q);
		pkw_str(w, "profiling_name");
		pkw_str(w, "nccl:all_reduce");
		pkw_str(w, "input_sizes");
		pkw_open(w, ']');
		pkw_int_list(w, 1024);
		pkw_close(w, 'e');
		pkw_str(w, "input_dtypes");
		pkw_open(w, ']');
		pkw_str(w, "Float");
		pkw_close(w, 'e');
		pkw_str(w, "output_sizes");
		pkw_open(w, ']');
		pkw_int_list(w, 1024);
		pkw_close(w, 'e');
		pkw_str(w, "output_dtypes");
		pkw_open(w, ']');
		pkw_str(w, "Float");
		pkw_close(w, 'e');
		pkw_str(w, "state");
		pkw_str(w, q == last && stuck ? "started" : "completed");
		pkw_str(w, "timeout_ms");
		pkw_int(w, 600000);
		pkw_str(w, "time_created_ns");
		pkw_int(w, (int64_t)q * 1000000000 + 123);
		pkw_str(w, "is_p2p");
		pkw_byte(w, 0x89);
		pkw_close(w, 'u');
	}
	*appends = w->n;
	pkw_close(w, 'e');
	pkw_close(w, 'u');
	pkw_byte(w, '.');
	return w->n < sizeof(w->b) ? w->n : 0;
}

/* The same incident as hang_dump_cut_keeps_the_rest with rank 1's dump a
 * c10 pickle cut at every byte from its "entries" key on. The entries kept
 * are those the pickle finished before the cut and pushed something after:
 * entry q when the next entry's EMPTY_DICT was read, the last one when the
 * list's APPENDS was (an entry on top of the stack may still be waiting
 * for its items). Cut before STOP, the dump is truncated. */
TEST(hang_pickle_cut_keeps_the_rest)
{
	static struct pkw w;
	size_t cuts = 0;

	for (int late = 0; late < 2; late++) {
		size_t open[6], appends;
		size_t len = fr_pickle(&w, late, 6, 1, open, &appends);
		const unsigned char *ents = NULL;

		REQUIRE(len > 0);
		for (size_t i = 5; i + 7 <= len && !ents; i++)
			if (memcmp(w.b + i, "entries", 7) == 0)
				ents = w.b + i - 5;
		REQUIRE(ents != NULL);
		for (size_t cut = (size_t)(ents - w.b); cut <= len; cut++) {
			int64_t kept = 0;

			for (int q = 1; q <= 6; q++)
				kept += q < 6 ? cut > open[q] : cut > appends;
			check_cut_incident(w.b, cut, 1, cut < len, kept);
			cuts++;
		}
	}
	CHECK(cuts > 2000);
}

/* Cut before anything but the root exists, or inside a refused opcode's
 * argument: nothing to salvage, or not a cut at all. */
TEST(hang_pickle_cut_unsalvageable)
{
	static const char head[] = "\x80\x02";
	static const char evil[] = "\x80\x02}q\x00(X\x07\x00\x00\x00" "entries" "cos\nsys";
	struct ts_hang_set s;
	struct ts_err err;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	CHECK_I64(ts_hang_read_pickle_mem(&s, head, sizeof(head) - 1, "cut.pkl", 0, &err), TS_ETRUNC);
	CHECK_I64(ts_hang_read_pickle_mem(&s, evil, sizeof(evil) - 1, "evil.pkl", 0, &err), TS_EUNSUPPORTED);
	CHECK_I64(s.dumps.n, 0);
	ts_hang_set_release(&s);
}

/* the #140563 shape: the first rank is the odd one out; 3 ranks agree */
TEST(hang_minority_first_rank)
{
	char buf[4096];
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	for (int rank = 0; rank < 4; rank++) {
		char name[32];
		int n = snprintf(buf, sizeof(buf),
			"{'pg_config': {'0': {'name': '0', 'desc': 'default_pg', 'ranks': '[0, 1, 2, 3]'}},"
			" 'entries': [{'record_id': 0, 'pg_id': 0, 'process_group': ('0', 'default_pg'),"
			" 'collective_seq_id': 1, 'profiling_name': 'nccl:all_reduce', 'input_sizes': [[%d]],"
			" 'input_dtypes': ['Float'], 'output_sizes': [[%d]], 'output_dtypes': ['Float'],"
			" 'state': 'scheduled', 'timeout_ms': 600000, 'is_p2p': False}]}",
			rank == 0 ? 1025 : 262144, rank == 0 ? 1025 : 262144);
		REQUIRE(n > 0 && (size_t)n < sizeof(buf));
		snprintf(name, sizeof(name), "rank_%d.json", rank);
		REQUIRE(read_mem(&s, buf, name, &err) == 0);
	}
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(r.incidents.n == 1);
	CHECK_I64(r.incidents.v[0].cls, TS_HANG_MISMATCH);
	CHECK_I64(r.incidents.v[0].culprits.n, 1);
	CHECK_I64(r.incidents.v[0].culprits.v[0], 0);
	CHECK_I64(r.incidents.v[0].numel_in, 262144); /* the majority's */
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* 2 vs 2: a tie is undecided and names no culprit */
TEST(hang_minority_tie)
{
	char buf[4096];
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	for (int rank = 0; rank < 4; rank++) {
		char name[32];
		snprintf(buf, sizeof(buf),
			"{\"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", \"ranks\": \"[0, 1, 2, 3]\"}},"
			" \"entries\": [{\"record_id\": 0, \"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"],"
			" \"collective_seq_id\": 7, \"profiling_name\": \"%s\", \"input_sizes\": [[8]],"
			" \"input_dtypes\": [\"Float\"], \"output_sizes\": [[8]], \"output_dtypes\": [\"Float\"],"
			" \"state\": \"scheduled\", \"timeout_ms\": 600000, \"is_p2p\": false}]}",
			rank < 2 ? "nccl:all_reduce" : "nccl:broadcast");
		snprintf(name, sizeof(name), "trace_%d", rank);
		REQUIRE(read_mem(&s, buf, name, &err) == 0);
	}
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(r.incidents.n == 1);
	CHECK_I64(r.incidents.v[0].cls, TS_HANG_UNDECIDED);
	CHECK_I64(r.incidents.v[0].culprits.n, 0);
	CHECK(any_note(&r.incidents.v[0], "ranks 0-1"));
	CHECK(any_note(&r.incidents.v[0], "ranks 2-3"));
	CHECK_I64(r.exit_code, 0);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

TEST(hang_op_kinds)
{
	static const struct { const char *op; enum ts_hang_op k; } c[] = {
		{ "ALLREDUCE", TS_OP_ALL_REDUCE }, { "_ALLGATHER_BASE", TS_OP_ALL_GATHER },
		{ "_REDUCE_SCATTER_BASE", TS_OP_REDUCE_SCATTER }, { "ALLTOALL_BASE", TS_OP_ALL_TO_ALL },
		{ "nccl:all_reduce", TS_OP_ALL_REDUCE }, { "mccl:send 0->1", TS_OP_SEND },
		{ "nccl:recv 3<-0", TS_OP_RECV }, { "nccl:coalesced", TS_OP_COALESCED },
		{ "COALESCED", TS_OP_COALESCED }, { "AllGather", TS_OP_ALL_GATHER },
		{ "ReduceScatter", TS_OP_REDUCE_SCATTER }, { "BROADCAST", TS_OP_BROADCAST },
		{ "GATHER", TS_OP_GATHER }, { "nccl:_all_gather_base", TS_OP_ALL_GATHER },
		{ "BARRIER", TS_OP_BARRIER },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK_STR(ts_hang_op_name(ts_hang_op_kind(c[i].op, strlen(c[i].op))), ts_hang_op_name(c[i].k));
}

/* torch_musa's wording (format from ProcessGroupMCCL.cpp; no real sample is
 * public): backend mccl, vendor Moore Threads from the class names, and the
 * TORCH_MCCL_* knobs in the advice */
TEST(hang_mccl_watchdog_line)
{
	static const char log[] =
		"[rank1]:[E1105 10:00:00.000000000 ProcessGroupMCCL.cpp:632] [Rank 1] Watchdog caught collective "
		"operation timeout: WorkMCCL(SeqNum=77, OpType=BROADCAST, NumelIn=10, NumelOut=10, Timeout(ms)=600000) "
		"ran for 600100 milliseconds before timing out.\n"
		"[rank1]:[E1105 10:00:00.000000100 ProcessGroupMCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
		"failure detected by watchdog at work sequence id: 77 PG status: last enqueued work: 78, last completed work: 76\n";
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	int mccl_knob = 0;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(read_mem(&s, log, "musa.log", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(s.works.n == 1);
	CHECK_I64(s.works.v[0].seq, 77);
	CHECK_I64(s.works.v[0].kind, TS_OP_BROADCAST);
	CHECK_STR(r.backend, "mccl");
	CHECK_STR(r.vendor, "moore_threads");
	for (size_t i = 0; i < r.advice.n; i++)
		mccl_knob |= strcmp(r.advice.v[i].knob, "TORCH_MCCL_DUMP_ON_TIMEOUT") == 0;
	CHECK(mccl_knob);
	REQUIRE(r.incidents.n == 1);
	CHECK_I64(r.incidents.v[0].last_enqueued, 78);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* Ray worker prefixes and a raw glog header; the DETAIL fingerprint
 * mismatch (shape of Lightning-AI #19680: rank 1 ALLGATHER, rank 0
 * _ALLGATHER_BASE) with a third rank agreeing with rank 0 */
TEST(hang_prefixes_and_detail)
{
	static const char log[] =
		"(RayWorkerWrapper pid=4242, ip=192.0.2.7) [rank3]:[E626 16:48:25.440243908 ProcessGroupNCCL.cpp:632] "
		"[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=4, "
		"NumelOut=4, Timeout(ms)=60000) ran for 60010 milliseconds before timing out.\n"
		"RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
		"CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[6], TensorDtypes=Double), but Rank 0 is running "
		"collective: CollectiveFingerPrint(OpType=_ALLGATHER_BASE)\n"
		"RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
		"CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[6], TensorDtypes=Double), but Rank 2 is running "
		"collective: CollectiveFingerPrint(OpType=_ALLGATHER_BASE)\n";
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(read_mem(&s, log, "ray.log", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(s.works.n == 1);
	CHECK_I64(s.works.v[0].rank, 3);
	CHECK_I64(s.works.v[0].seq, 9);
	REQUIRE(s.reports.n == 2);
	const struct ts_hang_incident *fp = NULL;
	for (size_t i = 0; i < r.incidents.n; i++)
		if (r.incidents.v[i].cls == TS_HANG_MISMATCH)
			fp = &r.incidents.v[i];
	REQUIRE(fp);
	CHECK_I64(fp->culprits.n, 1); /* ranks 0 and 2 agree: rank 1 is the minority */
	CHECK_I64(fp->culprits.v[0], 1);
	CHECK_STR(fp->op, "_ALLGATHER_BASE");
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* detect says what each hang input is */
TEST(hang_detect_kinds)
{
	static const struct { const char *rel; enum ts_kind kind; } c[] = {
		{ "hang/fr_trace_output_tutorial_missing_rank.txt", TS_KIND_HANG_REPORT },
		{ "hang/pytorch_140969_fr_trace_missing_ranks.log", TS_KIND_HANG_REPORT },
		{ "hang/nccl_1911_ras_mismatch.log", TS_KIND_HANG_REPORT },
		{ "hang/torchtitan_1369_nccl_info_coll.log", TS_KIND_LOG_HANG },
		{ "hang/nccl_531_ib_mismatch_coll.log", TS_KIND_LOG_HANG },
		{ "hang/ofa_271_legacy_no_numel.log", TS_KIND_LOG_HANG },
		{ "hang/fr_dump_unpickled_example_v2.5.txt", TS_KIND_FLIGHT_RECORDER },
	};
	static const char pk[] = "\x80\x02}q\x00(X\x07\x00\x00\x00" "entries" "q\x01]q\x02u.";
	char vendor[16];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		DATA_OR_SKIP(path, c[i].rel);
		struct ts_detect d;
		struct ts_err err;
		ts_err_init(&err);
		REQUIRE(ts_detect_file(path, &d, &err) == 0);
		CHECK_STR(ts_kind_name(d.kind), ts_kind_name(c[i].kind));
	}
	CHECK_I64(ts_detect_buffer(pk, sizeof(pk) - 1, vendor, sizeof(vendor)), TS_KIND_FLIGHT_RECORDER);
}

/* membership from --world-size when the dumps carry no rank set: rank 2
 * sent no dump while both others wait in seq 4, so it is the likely
 * culprit (not_joined, inferred from its missing dump) */
TEST(hang_world_size_membership)
{
	static const char dump[] =
		"{'entries': [{'record_id': 0, 'pg_id': 0, 'process_group': ('0', 'default_pg'),"
		" 'collective_seq_id': 4, 'profiling_name': 'nccl:all_reduce', 'input_sizes': [[8]],"
		" 'input_dtypes': ['Float'], 'output_sizes': [[8]], 'output_dtypes': ['Float'],"
		" 'state': 'scheduled', 'timeout_ms': 600000}]}";
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	for (int world = 2; world <= 3; world++) {
		ts_hang_set_init(&s);
		ts_err_init(&err);
		s.world_size = world;
		REQUIRE(read_mem(&s, dump, "nccl_trace_rank_0", &err) == 0);
		REQUIRE(read_mem(&s, dump, "nccl_trace_rank_1", &err) == 0);
		REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
		REQUIRE(r.incidents.n == 1);
		/* world 2: both members stuck on seq 4; world 3: rank 2 has no dump */
		CHECK_I64(r.incidents.v[0].cls, world == 2 ? TS_HANG_ALL_STUCK : TS_HANG_NOT_JOINED);
		if (world == 3) {
			CHECK(any_note(&r.incidents.v[0], "no dump from ranks 2"));
			REQUIRE(r.incidents.v[0].culprits.n == 1);
			CHECK_I64(r.incidents.v[0].culprits.v[0], 2);
		}
		ts_hang_result_release(&r);
		ts_hang_set_release(&s);
	}
}

/* fr_trace's mismatch form, shaped as capabilities-anchors.md describes
 * pytorch #140563 (hand-made, 4 ranks): fr_trace compared everyone with
 * rank 0 and named ranks 1, 2, 3; the odd one out is rank 0 */
TEST(hang_fr_trace_wrong_side)
{
	static const char rep[] =
		"Collective sequence number: 12 has errors\n"
		"internal record id: 11\n"
		"group info: 0:default_pg\n"
		"collective: nccl:all_reduce\n"
		"Culprit rank 1; Error type: MatchState.SIZE_OR_SYNTAX_MISMATCH\n"
		"Culprit rank 2; Error type: MatchState.SIZE_OR_SYNTAX_MISMATCH\n"
		"Culprit rank 3; Error type: MatchState.SIZE_OR_SYNTAX_MISMATCH\n"
		"world size: 4\n";
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	char vendor[16];
	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(read_mem(&s, rep, "frtrace.txt", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	REQUIRE(s.reports.n == 1);
	CHECK_I64(s.reports.v[0].culprits.n, 3);
	REQUIRE(r.incidents.n == 1);
	CHECK_I64(r.incidents.v[0].cls, TS_HANG_MISMATCH);
	CHECK_I64(r.incidents.v[0].seq, 12);
	REQUIRE(r.incidents.v[0].culprits.n == 1);
	CHECK_I64(r.incidents.v[0].culprits.v[0], 0);
	CHECK_I64(ts_detect_buffer(rep, sizeof(rep) - 1, vendor, sizeof(vendor)), TS_KIND_HANG_REPORT);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/* A glog header with a negative clock ("E0626 -999999999999999:...") is no
 * time of day: the watchdog line still counts, its time stays -1 (the
 * hour was multiplied out to a signed overflow, caught by UBSan in CI's
 * fuzz run). */
TEST(hang_glog_negative_clock)
{
	const char *text = "E0626 -999999999999999:-99999999:-9999999.123 123 "
			   "ProcessGroupNCCL.cpp:1234] [Rank 3] Watchdog caught collective "
			   "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
			   "NumelOut=1, Timeout(ms)=600000) ran for 600005 milliseconds before "
			   "timing out.\n";
	struct ts_hang_set s;
	struct ts_err err;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(ts_hang_read_lines_mem(&s, text, strlen(text), "neg.log", &err) == 0);
	const struct ts_hang_work *w = work_of(&s, 3, 5);
	REQUIRE(w);
	REQUIRE(w->ev >= 0);
	CHECK_I64(s.evs.v[w->ev].tod_ns, -1);
	CHECK_I64(w->ran_for_ms, 600005);
	ts_hang_set_release(&s);
}

/* A log cut while rank 4's watchdog line was written ("SeqNum=15" of
 * 1580): that last line, without its line end, is not read (it made a
 * seq-15 incident of its own); the same text with its line end is. */
TEST(hang_cut_last_line)
{
	const char *full = "[rank0]:[E321 02:07:08.408 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog "
			   "caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, "
			   "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds "
			   "before timing out.\n"
			   "[rank4]:[E321 02:07:08.409 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog "
			   "caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, "
			   "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600061 milliseconds "
			   "before timing out.\n";
	size_t cut = (size_t)(strstr(strstr(full, "[rank4]"), "SeqNum=") + 9 - full);
	struct ts_hang_set s;
	struct ts_err err;
	struct ts_warnings w;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(ts_hang_read_lines_mem(&s, full, cut, "cut.log", &err) == 0);
	CHECK(work_of(&s, 0, 1580) != NULL);
	CHECK(work_of(&s, 4, 15) == NULL);
	CHECK(work_of(&s, 4, 1580) == NULL);
	CHECK_I64(s.cut_lines.n, 1);
	CHECK_I64(s.cut_lines.v[0].line, 2);
	CHECK_I64(s.cut_lines.v[0].offset, (int64_t)(strstr(full, "[rank4]") - full));
	ts_warnings_init(&w);
	REQUIRE(ts_hang_warnings(&s, &w) == 0);
	CHECK_I64(w.v.n, 1);
	if (w.v.n)
		CHECK_STR(w.v.v[0].code, "truncated-log");
	ts_warnings_release(&w);
	ts_hang_set_release(&s);

	ts_hang_set_init(&s);
	REQUIRE(ts_hang_read_lines_mem(&s, full, strlen(full), "whole.log", &err) == 0);
	CHECK(work_of(&s, 4, 1580) != NULL);
	CHECK_I64(s.cut_lines.n, 0);
	ts_hang_set_release(&s);
}

/* Process-group rank texts: digits runs in order, a run past INT64_MAX
 * skipped (it overflowed), an empty list none (it read as rank 0). */
TEST(hang_ranks_text)
{
	const char *p = "[0, 99999999999999999999, 3,12]";
	int64_t v, got[4];
	size_t n = 0;

	while (n < 4 && hang_ranks_next(&p, &v))
		got[n++] = v;
	REQUIRE(n == 3);
	CHECK_I64(got[0], 0);
	CHECK_I64(got[1], 3);
	CHECK_I64(got[2], 12);
	p = "[, ]";
	CHECK_I64(hang_ranks_next(&p, &v), 0);
	p = "";
	CHECK_I64(hang_ranks_next(&p, &v), 0);
}

/* A watchdog line with a timeout past 2^62 ms (the fuzzer's): the late-
 * watchdog test compares without doubling the timeout (signed overflow,
 * which UBSan stops on); 7e15d46 overflowed here. It ran for less than
 * twice its timeout, so the watchdog was not late. */
TEST(hang_timeout_past_int64_half)
{
	static const char log[] =
		"[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
		"collective operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=3, "
		"NumelOut=6, Timeout(ms)=6000002222222222247) ran for 6000002222222222300 milliseconds "
		"before timing out.\n";
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;

	ts_hang_set_init(&s);
	ts_err_init(&err);
	REQUIRE(read_mem(&s, log, "big.log", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	for (size_t i = 0; i < r.incidents.n; i++)
		CHECK(r.incidents.v[i].cls != TS_HANG_WATCHDOG_LATE);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/*
 * A timeout printed again (watchdog line, then the exception text; or a
 * console and a rank's own log) is kept once: the reader files each timeout
 * by (rank, seq, group) rather than comparing it with every work. Checked
 * against the plain rule, written here: a line repeats the first earlier
 * kept timeout of its rank and seq whose group is its own or unknown on
 * either side (an unknown group kept then takes the line's), else it is
 * kept. 300 random line sets of 1-60 lines: ranks 0-5, seqs 1-4, group
 * none or PG ID 0-2.
 */
TEST(hang_repeated_timeouts_plain_rule)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int c = 0; c < 300; c++) {
		struct ts_hang_set s;
		struct ts_err err;
		struct ts_sb text;
		int64_t want[60][3];
		size_t nw = 0, got = 0;
		int lines;

		ts_hang_set_init(&s);
		ts_err_init(&err);
		ts_sb_init(&text);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		lines = 1 + (int)((x >> 33) % 60);
		for (int l = 0; l < lines; l++) {
			int64_t rank, seq, pg;
			size_t k;
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			rank = (int64_t)((x >> 20) % 6);
			seq = 1 + (int64_t)((x >> 30) % 4);
			pg = (int64_t)((x >> 40) % 4) - 1;
			if (pg >= 0)
				ts_sb_addf(&text, "[rank%lld]:[E125 18:38:34.698812301 ProcessGroupNCCL.cpp:2057] "
					   "[PG ID %lld PG GUID %lld(pg%lld) Rank %lld] ", (long long)rank,
					   (long long)pg, (long long)pg, (long long)pg, (long long)rank);
			else
				ts_sb_addf(&text, "[rank%lld]:[E125 18:38:34.698812301 ProcessGroupNCCL.cpp:2057] ",
					   (long long)rank);
			ts_sb_addf(&text, "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%lld, "
				   "OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600020 "
				   "milliseconds before timing out.\n", (long long)seq);
			for (k = 0; k < nw; k++)
				if (want[k][0] == rank && want[k][1] == seq &&
				    (want[k][2] == pg || want[k][2] < 0 || pg < 0))
					break;
			if (k < nw) {
				if (want[k][2] < 0)
					want[k][2] = pg;
			} else {
				want[nw][0] = rank;
				want[nw][1] = seq;
				want[nw][2] = pg;
				nw++;
			}
		}
		REQUIRE(!text.failed);
		REQUIRE(ts_hang_read_lines_mem(&s, text.buf, text.len, "case.log", &err) == 0);
		for (size_t i = 0; i < s.works.n; i++) {
			const struct ts_hang_work *w = &s.works.v[i];
			if (w->from_dump || w->state != TS_ST_TIMED_OUT)
				continue;
			REQUIRE(got < nw);
			CHECK_I64(w->rank, want[got][0]);
			CHECK_I64(w->seq, want[got][1]);
			CHECK_I64(w->pg >= 0 ? s.pgs.v[w->pg].id : -1, want[got][2]);
			got++;
		}
		CHECK_I64((int64_t)got, (int64_t)nw);
		ts_sb_release(&text);
		ts_hang_set_release(&s);
	}
}

/*
 * Many process groups in the logs: each incident's lines are taken from an
 * index of the log lines by incident, its evidence kept sorted by a search
 * (not a walk of every line per incident), and each rank's seqs read off
 * the timeouts sorted by rank. 40 groups (PG ID g, seq 100 + g) of 8 ranks,
 * every rank's lines one log, by g mod 4:
 *   0  every rank times out, the same op: no culprit, 8 lines;
 *   1  rank g mod 8 prints NumelIn=16 where the others print 8: mismatch,
 *      that rank the culprit, 8 lines;
 *   2  rank (g + 1) mod 8 printed "last enqueued seq - 1" (first in the
 *      file) and no timeout: not joined, that rank the culprit, 8 lines;
 *   3  as 0, each line printed twice: the repeats are no evidence of their
 *      own (8 lines), no culprit.
 * Each rank then timed out at the seqs of the groups where it printed a
 * timeout, a finding per rank naming them.
 */
TEST(hang_many_groups_per_incident)
{
	enum { G = 40, R = 8 };
	struct ts_hang_set s;
	struct ts_hang_result r;
	struct ts_err err;
	struct ts_sb text;
	int seen[G] = { 0 };

	ts_hang_set_init(&s);
	memset(&r, 0, sizeof(r));
	ts_err_init(&err);
	ts_sb_init(&text);
	for (int g = 2; g < G; g += 4)
		ts_sb_addf(&text, "[rank%d]:[E125 18:38:34.698812301 ProcessGroupNCCL.cpp:1600] [PG ID %d PG GUID %d(pg%d) "
			   "Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last "
			   "enqueued NCCL work: %d, last completed NCCL work: %d.\n",
			   (g + 1) % R, g, g, g, (g + 1) % R, 100 + g, 99 + g, 99 + g);
	for (int k = 0; k < R; k++)
		for (int g = 0; g < G; g++) {
			if (g % 4 == 2 && k == (g + 1) % R)
				continue;
			for (int rep = 0; rep < (g % 4 == 3 ? 2 : 1); rep++)
				ts_sb_addf(&text, "[rank%d]:[E125 18:38:34.698812301 ProcessGroupNCCL.cpp:2057] [PG ID %d PG "
					   "GUID %d(pg%d) Rank %d] Watchdog caught collective operation timeout: "
					   "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=8, "
					   "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n",
					   k, g, g, g, k, 100 + g, g % 4 == 1 && k == g % R ? 16 : 8);
		}
	REQUIRE(!text.failed);
	REQUIRE(ts_hang_read_lines_mem(&s, text.buf, text.len, "groups.log", &err) == 0);
	REQUIRE(ts_hang_analyze(&s, &r, &err) == 0);
	for (size_t i = 0; i < r.incidents.n; i++) {
		const struct ts_hang_incident *in = &r.incidents.v[i];
		int g = (int)in->seq - 100;
		REQUIRE(g >= 0 && g < G && in->pg >= 0);
		CHECK_I64(s.pgs.v[in->pg].id, g);
		seen[g]++;
		CHECK_I64((int64_t)in->evs.n, R);
		for (size_t k = 1; k < in->evs.n; k++)
			CHECK(in->evs.v[k - 1] < in->evs.v[k]);
		if (g % 4 == 1) {
			CHECK(in->cls == TS_HANG_MISMATCH);
			CHECK(in->culprits.n == 1 && in->culprits.v[0] == g % R);
		} else if (g % 4 == 2) {
			CHECK(in->cls == TS_HANG_NOT_JOINED);
			CHECK(in->culprits.n == 1 && in->culprits.v[0] == (g + 1) % R);
		} else {
			CHECK(in->cls != TS_HANG_MISMATCH && in->cls != TS_HANG_NOT_JOINED);
			CHECK_I64((int64_t)in->culprits.n, 0);
		}
	}
	for (int g = 0; g < G; g++)
		CHECK_I64(seen[g], 1);
	for (int k = 0; k < R; k++) {
		struct ts_sb want;
		int found = 0, n = 0, in[G];
		ts_sb_init(&want);
		for (int g = 0; g < G; g++)
			n += in[g] = !(g % 4 == 2 && k == (g + 1) % R);
		/* the seqs as runs: "100-105, 107-113" */
		ts_sb_addf(&want, "timed out at %d sequence ids (", n);
		for (int g = 0, first = 1; g < G; g++) {
			int e = g;
			if (!in[g])
				continue;
			while (e + 1 < G && in[e + 1])
				e++;
			ts_sb_addf(&want, "%s%d", first ? "" : ", ", 100 + g);
			if (e > g)
				ts_sb_addf(&want, "-%d", 100 + e);
			first = 0;
			g = e;
		}
		ts_sb_addf(&want, ")");
		REQUIRE(!want.failed);
		for (size_t f = 0; f < r.findings.n; f++)
			if (strncmp(r.findings.v[f], "rank ", 5) == 0 && strtol(r.findings.v[f] + 5, NULL, 10) == k &&
			    strstr(r.findings.v[f], " sequence ids (")) {
				found++;
				CHECK(strstr(r.findings.v[f], want.buf) != NULL);
			}
		CHECK_I64(found, 1);
		ts_sb_release(&want);
	}
	ts_sb_release(&text);
	ts_hang_result_release(&r);
	ts_hang_set_release(&s);
}

/*
 * Groups are looked up by name in a table of the names read (each line once
 * compared its group with every group). Checked against the plain rule,
 * written here as a scan of the groups before each call: a log line or dump
 * entry naming guid g is the lowest-indexed group named g whose description
 * (and, for a dump, rank list) is its own or unknown on either side, and
 * when there is none the group it gets is named g afterwards. 300 random
 * sequences of 1-80 calls mixing groups told by id alone (hang_pg: named
 * later when a line with the same id brings a name), log lines and dump
 * entries, over 3 names, 3 descriptions (or none) and 2 rank lists (or none).
 */
TEST(hang_group_by_name_plain_rule)
{
	static const char *const names[] = { "0", "5", "11" }, *const descs[] = { "default_pg", "mesh_tp", "mesh_dp" };
	static const char *const rl[] = { "[0, 1]", "[2, 3]" };
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (int c = 0; c < 300; c++) {
		struct ts_hang_set s;
		int calls;

		ts_hang_set_init(&s);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		calls = 1 + (int)((x >> 33) % 80);
		for (int k = 0; k < calls; k++) {
			int kind, want = -1, got;
			int64_t id;
			const char *g, *d, *ranks;
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			kind = (int)((x >> 16) % 3);
			id = (int64_t)((x >> 20) % 4) - 1;
			g = names[(x >> 24) % 3];
			d = (x >> 28) % 4 ? descs[(x >> 30) % 3] : NULL;
			ranks = kind == 2 && (x >> 34) % 3 ? rl[(x >> 36) % 2] : NULL;
			if (kind == 0) {
				got = hang_pg(&s, id, NULL, 0, d, d ? strlen(d) : 0, NULL);
				CHECK(got >= 0 || (id < 0 && !d));
				continue;
			}
			for (size_t i = 0; i < s.pgs.n && want < 0; i++) {
				const struct ts_hang_pg *p = &s.pgs.v[i];
				if (p->guid && strcmp(p->guid, g) == 0 && (!d || !p->desc || strcmp(p->desc, d) == 0) &&
				    (!ranks || !p->ranks || strcmp(p->ranks, ranks) == 0))
					want = (int)i;
			}
			got = kind == 1 ? hang_pg_log(&s, id, g, strlen(g), d, d ? strlen(d) : 0)
					: hang_pg_dump(&s, id, g, strlen(g), d, d ? strlen(d) : 0, ranks);
			REQUIRE(got >= 0 && (size_t)got < s.pgs.n);
			if (want >= 0)
				CHECK_I64(got, want);
			else
				CHECK(s.pgs.v[got].guid && strcmp(s.pgs.v[got].guid, g) == 0);
		}
		ts_hang_set_release(&s);
	}
}
