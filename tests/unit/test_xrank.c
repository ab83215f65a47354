/*
 * test_xrank.c - cross-rank straggler detection and collective skew on
 * hand-built two-rank CPU (gloo) traces.
 *
 * Each rank: 5 steps of 100 ms (ms times); main thread runs a 50 ms op at
 * the start of each step; a gloo worker thread (tid 2) holds
 * gloo:all_reduce [s+50, s+95) on the rank that waits (45 ms) and
 * [s+90, s+95) on the rank that arrives late (5 ms). The late rank fills
 * [s+50, s+90) of its main thread with an untraced 40 ms gap (a sleep).
 */
#include "harness.h"
#include "tbuild.h"
#include "trainscope/profile.h"

static void build_rank(struct ts_trace *t, int rank, const int *late_rank)
{
	char nm[32];

	tb_init(t);
	t->meta.rank = rank;
	for (int i = 0; i < 5; i++) {
		int64_t s = i * 100000LL;
		snprintf(nm, sizeof(nm), "ProfilerStep#%d", i + 1);
		tb_cpu(t, TS_CAT_USER_ANNOTATION, nm, s, 100000);
		tb_cpu(t, TS_CAT_CPU_OP, "aten::addmm", s, 50000);
		if (late_rank[i] == rank)
			tb_ev(t, TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2, s + 90000, 5000, -1);
		else
			tb_ev(t, TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2, s + 50000, 45000, -1);
	}
}

static void run_job(const int *late, struct ts_job_prof *j, struct ts_rank_prof *p)
{
	struct ts_trace t[2];
	struct ts_rank_prof *pp[2] = { &p[0], &p[1] };
	struct ts_err err;

	for (int r = 0; r < 2; r++) {
		build_rank(&t[r], r, late);
		ts_rank_prof_init(&p[r]);
		ts_rank_profile(&p[r], &t[r], NULL, &err);
		tb_release(&t[r]);
	}
	ts_job_prof_init(j);
	ts_job_analyse(j, pp, 2, &err);
}

TEST(xrank_straggler_found)
{
	static const int late[5] = { 1, 1, 1, 1, 1 };
	struct ts_job_prof j;
	struct ts_rank_prof p[2];

	run_job(late, &j, p);
	CHECK_I64(j.nranks, 2);
	/* lateness of rank 1 per step = 45 - 5 = 40 ms; p25 40 >= 15% of the
	 * 100 ms median step; outside comm: 95 ms vs 55 ms on rank 0 */
	REQUIRE(j.stragglers.n == 1);
	CHECK_I64(j.stragglers.v[0].rank, 1);
	CHECK_I64(j.stragglers.v[0].steps, 5);
	CHECK_I64(j.stragglers.v[0].late_steps, 5);
	CHECK_I64(j.stragglers.v[0].late_p25_ns, 40000 * US);
	CHECK_I64(j.stragglers.v[0].own_noncomm_ns, 95000 * US);
	CHECK_I64(j.stragglers.v[0].peer_noncomm_ns, 55000 * US);
	CHECK_I64(j.wall.wall, TS_WALL_STRAGGLER);
	/* 5 matched all-reduces, each skewed 45 - 5 = 40 ms */
	CHECK_I64(j.skew.matched, 5);
	CHECK_I64(j.skew.max_ns, 40000 * US);
	CHECK_I64(j.skew.p50_ns, 40000 * US);
	CHECK_I64(j.skew.worst_rank, 1);
	CHECK_STR(j.skew.worst_name, "gloo:all_reduce");
	/* rank 0 waits: comm 45 ms a step with the main thread idle from 50 to
	 * 95 -> exposed 45 of 100 = 45% -> communication;
	 * rank 1 sleeps 40 ms (gap) -> host 40% */
	CHECK_I64(j.ranks[0]->verdict.wall, TS_WALL_COMM);
	CHECK_I64(j.ranks[1]->verdict.wall, TS_WALL_HOST);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
}

TEST(xrank_no_straggler_when_lateness_alternates)
{
	/* noise: the late rank alternates, so each rank's lateness is
	 * +40, -40, +40, -40, +40 (or the opposite): p25 = -40 ms < 15 ms */
	static const int late[5] = { 1, 0, 1, 0, 1 };
	struct ts_job_prof j;
	struct ts_rank_prof p[2];

	run_job(late, &j, p);
	CHECK_I64(j.stragglers.n, 0);
	CHECK(j.wall.wall != TS_WALL_STRAGGLER);
	CHECK_I64(j.skew.matched, 5);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
}

TEST(xrank_too_few_steps)
{
	/* one rank window alone: no cross-rank verdict */
	static const int late[5] = { 1, 1, 1, 1, 1 };
	struct ts_trace t;
	struct ts_rank_prof p, *pp = &p;
	struct ts_job_prof j;
	struct ts_err err;

	build_rank(&t, 1, late);
	ts_rank_prof_init(&p);
	REQUIRE(ts_rank_profile(&p, &t, NULL, &err) == 0);
	ts_job_prof_init(&j);
	REQUIRE(ts_job_analyse(&j, &pp, 1, &err) == 0);
	CHECK_I64(j.stragglers.n, 0);
	CHECK_I64(j.skew.matched, 0);
	CHECK_I64(j.wall.wall, TS_WALL_HOST);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&p);
	tb_release(&t);
}

TEST(xrank_pack_round_trip)
{
	/* a packed and unpacked profile gives the same cross-rank result as
	 * the original: the straggler case above, rank 1 unpacked */
	static const int late[5] = { 1, 1, 1, 1, 1 };
	struct ts_trace t[2];
	struct ts_rank_prof p[2], q;
	struct ts_rank_prof *pp[2] = { &p[0], &q };
	struct ts_job_prof j;
	struct ts_err err;
	struct ts_sb sb;

	for (int r = 0; r < 2; r++) {
		build_rank(&t[r], r, late);
		ts_rank_prof_init(&p[r]);
		REQUIRE(ts_rank_profile(&p[r], &t[r], NULL, &err) == 0);
		tb_release(&t[r]);
	}
	ts_sb_init(&sb);
	ts_rank_prof_pack(&p[1], &sb);
	REQUIRE(!sb.failed);
	ts_rank_prof_init(&q);
	REQUIRE(ts_rank_prof_unpack(&q, sb.buf, sb.len, &err) == 0);
	CHECK_I64(q.rank, 1);
	CHECK_I64(q.steps.n, 5);
	CHECK_I64(q.colls.n, 5);
	CHECK_STR(ts_prof_str(&q, q.colls.v[0].name), "gloo:all_reduce");
	ts_job_prof_init(&j);
	REQUIRE(ts_job_analyse(&j, pp, 2, &err) == 0);
	REQUIRE(j.stragglers.n == 1);
	CHECK_I64(j.stragglers.v[0].rank, 1);
	CHECK_I64(j.stragglers.v[0].late_p25_ns, 40000 * US);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&q);
	/* every truncation of the bytes is refused, and releasing is safe */
	for (size_t cut = 0; cut < sb.len; cut += 7) {
		ts_rank_prof_init(&q);
		CHECK(ts_rank_prof_unpack(&q, sb.buf, cut, &err) == TS_EPARSE);
		ts_rank_prof_release(&q);
	}
	ts_sb_release(&sb);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
}

TEST(xrank_many_ranks_scale)
{
	/* 20000 ranks x 5 steps of 100 ms, one all-reduce per step: every rank
	 * spends 45 ms in it except rank 7 (5 ms, it arrives 40 ms late).
	 * Lateness of rank 7 = 45 - 5 = 40 ms (p25 40 >= 15 ms); every other
	 * rank: 45 - 45 = 0. Outside comm: rank 7 95 ms, peers 55 ms.
	 * A quadratic pass over ranks would take minutes here. */
	enum { NR = 20000 };
	struct ts_rank_prof *p = calloc(NR, sizeof(*p));
	struct ts_rank_prof **pp = calloc(NR, sizeof(*pp));
	struct ts_job_prof j;
	struct ts_err err;

	REQUIRE(p && pp);
	for (int r = 0; r < NR; r++) {
		ts_rank_prof_init(&p[r]);
		p[r].rank = NR - 1 - r; /* input order differs from rank order */
		pp[r] = &p[r];
		for (int s = 0; s < 5; s++) {
			struct ts_step_prof st;
			struct ts_coll_span cs;
			int64_t d = p[r].rank == 7 ? 5000 * US : 45000 * US;
			memset(&st, 0, sizeof(st));
			st.step = s + 1;
			st.start_ns = s * 100000 * US;
			st.dur_ns = 100000 * US;
			st.comm_ns = d;
			memset(&cs, 0, sizeof(cs));
			cs.key = 42;
			cs.step = s + 1;
			cs.seq = TS_NONE;
			cs.dur_ns = d;
			REQUIRE(TS_VEC_PUSH(p[r].steps, st) == 0);
			REQUIRE(TS_VEC_PUSH(p[r].colls, cs) == 0);
		}
	}
	ts_job_prof_init(&j);
	REQUIRE(ts_job_analyse(&j, pp, NR, &err) == 0);
	CHECK_I64(j.nranks, NR);
	CHECK_I64(j.ranks[0]->rank, 0);
	CHECK_I64(j.skew.matched, 5);
	CHECK_I64(j.skew.max_ns, 40000 * US);
	REQUIRE(j.stragglers.n == 1);
	CHECK_I64(j.stragglers.v[0].rank, 7);
	CHECK_I64(j.stragglers.v[0].own_noncomm_ns, 95000 * US);
	CHECK_I64(j.stragglers.v[0].peer_noncomm_ns, 55000 * US);
	ts_job_prof_release(&j);
	for (int r = 0; r < NR; r++)
		ts_rank_prof_release(&p[r]);
	free(p);
	free(pp);
}

TEST(xrank_match_by_sequence)
{
	/* One step; two all-reduces on each rank with collective args: seq 1
	 * lasts 10 ms, seq 2 lasts 30 ms on both ranks, but rank 1 records seq 2
	 * first. Matching by (process group, sequence) pairs equal durations:
	 * skew 0. Matching by order would pair 10 with 30 (skew 20 ms). */
	struct ts_trace t[2];
	struct ts_rank_prof p[2];
	struct ts_rank_prof *pp[2] = { &p[0], &p[1] };
	struct ts_job_prof j;
	struct ts_err err;

	for (int r = 0; r < 2; r++) {
		int64_t pg;
		tb_init(&t[r]);
		t[r].meta.rank = r;
		pg = ts_intern(&t[r].strings, "0", 1);
		tb_cpu(&t[r], TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 100000);
		for (int k = 0; k < 2; k++) {
			int seq = r == 0 ? k + 1 : 2 - k;
			size_t e = tb_ev(&t[r], TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2,
					 10000 + 40000 * k, seq == 1 ? 10000 : 30000, -1);
			struct ts_trace_coll c;
			memset(&c, 0, sizeof(c));
			c.ev = (uint32_t)e;
			c.pg_name = (uint32_t)pg;
			c.coll_name = t[r].ev.name[e];
			c.seq = seq;
			REQUIRE(TS_VEC_PUSH(t[r].coll, c) == 0);
		}
		ts_rank_prof_init(&p[r]);
		REQUIRE(ts_rank_profile(&p[r], &t[r], NULL, &err) == 0);
		tb_release(&t[r]);
	}
	ts_job_prof_init(&j);
	REQUIRE(ts_job_analyse(&j, pp, 2, &err) == 0);
	CHECK_I64(j.skew.matched, 2);
	CHECK_I64(j.skew.max_ns, 0);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
}

TEST(xrank_uneven_counts_not_matched_by_order)
{
	/* Two steps, no sequence numbers. Step 1: each rank runs one 30 ms
	 * gloo:all_reduce, rank 1 a 1 ms one of the same name before it (a
	 * sub-group call). Order would pair rank 0's 30 ms with rank 1's 1 ms
	 * (skew 29 ms); the counts differ (1 vs 2), so step 1's are not
	 * matched: 1 group, 3 instances. Step 2: one 30 ms call on each rank,
	 * matched, skew 0. */
	struct ts_trace t[2];
	struct ts_rank_prof p[2];
	struct ts_rank_prof *pp[2] = { &p[0], &p[1] };
	struct ts_job_prof j;
	struct ts_warnings w;
	struct ts_err err;

	for (int r = 0; r < 2; r++) {
		tb_init(&t[r]);
		t[r].meta.rank = r;
		tb_cpu(&t[r], TS_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 100000);
		tb_cpu(&t[r], TS_CAT_USER_ANNOTATION, "ProfilerStep#2", 100000, 100000);
		if (r == 1)
			tb_ev(&t[r], TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2, 5000, 1000, -1);
		tb_ev(&t[r], TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2, 50000, 30000, -1);
		tb_ev(&t[r], TS_CAT_USER_ANNOTATION, "gloo:all_reduce", 1, 2, 150000, 30000, -1);
		ts_rank_prof_init(&p[r]);
		REQUIRE(ts_rank_profile(&p[r], &t[r], NULL, &err) == 0);
		tb_release(&t[r]);
	}
	ts_job_prof_init(&j);
	REQUIRE(ts_job_analyse(&j, pp, 2, &err) == 0);
	CHECK_I64(j.skew.matched, 1);
	CHECK_I64(j.skew.max_ns, 0);
	CHECK_I64(j.skew.unmatched_groups, 1);
	CHECK_I64(j.skew.unmatched_instances, 3);
	ts_warnings_init(&w);
	REQUIRE(ts_job_warnings(&j, &w) == 0);
	REQUIRE(w.v.n == 1);
	CHECK_STR(w.v.v[0].code, "uneven-collectives");
	ts_warnings_release(&w);
	ts_job_prof_release(&j);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
}
