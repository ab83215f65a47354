/*
 * fuzz_profile.c - the whole analysis path on arbitrary input: read the
 * trace (lenient), profile the rank, run the cross-rank analysis over two
 * copies, render the annotation events and the TraceLens timeline. Must
 * never crash, hang or leak, and the results must keep their invariants
 * (profile.h): the window partition and every step's partition exact in
 * ns, nothing larger than what contains it, shares in [0, 1], no verdict
 * without the minimum evidence; TraceLens's own identity
 * computation + exposed comm + exposed memcpy + idle = total.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/annotate.h"
#include "trainscope/profile.h"
#include "trainscope/trace.h"
#include "trainscope/tracelens.h"
#include "oracle.h"

#define MUST(c) do { if (!(c)) abort(); } while (0)

static void check_prof(const struct ts_rank_prof *p)
{
	int64_t w = p->window_ns;

	MUST(w >= 0);
	MUST(p->compute_ns + p->exposed_comm_ns + p->exposed_memcpy_ns + p->exposed_memset_ns +
	     p->idle_ns == w);
	MUST(p->idle_ns >= 0 && p->busy_ns >= 0 && p->busy_ns <= w);
	MUST(p->comm_ns <= w && p->memcpy_ns <= w && p->memset_ns <= w && p->unlinked_ns <= w);
	MUST(p->exposed_comm_ns <= p->comm_ns && p->exposed_memcpy_ns <= p->memcpy_ns &&
	     p->exposed_memset_ns <= p->memset_ns);
	if (p->has_gpu) {
		MUST(p->busy_ns + p->idle_ns == w);
		/* host-bound idle -1: unknown (no activity linked to a launch) */
		int64_t host = p->idle_host_ns == -1 ? 0 : p->idle_host_ns;
		MUST(host >= 0 && p->idle_data_ns >= 0 && p->idle_other_ns >= 0);
		MUST(host + p->idle_data_ns + p->idle_other_ns == p->idle_ns);
		MUST(p->gpu_span_ns <= w && p->gpu_span_idle_ns >= 0);
		MUST(p->unlinked_ns <= p->busy_ns);
	}
	for (size_t i = 0; i < p->steps.n; i++) {
		const struct ts_step_prof *s = &p->steps.v[i];
		MUST(s->dur_ns >= 0);
		MUST(s->compute_ns + s->exposed_comm_ns + s->exposed_memcpy_ns + s->exposed_memset_ns +
		     s->idle_ns == s->dur_ns);
		MUST(s->busy_ns <= s->dur_ns && s->comm_ns <= s->dur_ns && s->idle_ns >= 0);
	}
	MUST(p->overlap_pct == -1 || (p->overlap_pct >= 0 && p->overlap_pct <= 100 + 1e-9));
	oracle_share(p->verdict.share);
	for (size_t i = 0; i < p->nwalls; i++)
		oracle_share(p->walls[i].share);
	for (size_t i = 0; i < p->top.n; i++)
		oracle_text(ts_prof_str(p, p->top.v[i].name), ts_prof_len(p, p->top.v[i].name));
	if (w < TS_WALL_MIN_WINDOW_NS)
		MUST(p->verdict.wall == TS_WALL_UNDETERMINED);
	MUST(p->verdict.evidence[0]);
}

static void check_tl(const struct ts_tl_timeline *t)
{
	double tol = 1e-9 * fabs(t->total_us) + 1e-6;

	if (!t->events)
		return;
	MUST(t->busy_us <= t->total_us + tol && t->idle_us >= -tol);
	MUST(fabs(t->computation_us + t->exposed_comm_us + t->exposed_memcpy_us + t->idle_us -
		  t->total_us) <= tol);
	MUST(t->exposed_comm_us <= t->total_comm_us + tol &&
	     t->exposed_memcpy_us <= t->total_memcpy_us + tol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct ts_trace t;
	struct ts_rank_prof p[2];
	struct ts_rank_prof *pp[2] = { &p[0], &p[1] };
	struct ts_prof_tracks k;
	struct ts_prof_opts po = { 5, &k, 2 }; /* the second analysis thread */
	struct ts_job_prof j;
	struct ts_tracelens tl;
	struct ts_err err;
	struct ts_sb sb;

	ts_trace_init(&t);
	ts_rank_prof_init(&p[0]);
	ts_rank_prof_init(&p[1]);
	ts_prof_tracks_init(&k);
	ts_job_prof_init(&j);
	ts_sb_init(&sb);
	if (ts_trace_read_mem(&t, data, n, "fuzz", NULL, &err) == 0 &&
	    ts_rank_profile(&p[0], &t, &po, &err) == 0 &&
	    ts_rank_profile(&p[1], &t, NULL, &err) == 0) {
		check_prof(&p[0]);
		check_prof(&p[1]);
		p[1].rank = p[0].rank + 1;
		if (ts_job_analyse(&j, pp, 2, &err) == 0) {
			struct ts_annotate_info ai = { &p[0], &k, &j, NULL, 0 };
			oracle_share(j.wall.share);
			ts_annotate_events(&sb, &ai);
			if (!sb.failed)
				oracle_json(sb.buf, sb.len);
		}
		if (ts_tracelens_analyze(&t, 1, &tl, &err) == 0) {
			check_tl(&tl.all);
			check_tl(&tl.split[0]);
			check_tl(&tl.split[1]);
			MUST(tl.linked <= tl.gpu_events && tl.all.events == tl.linked);
		} else {
			MUST(err.code == TS_EPARSE || err.code == TS_ENOMEM);
		}
	}
	ts_sb_release(&sb);
	ts_job_prof_release(&j);
	ts_prof_tracks_release(&k);
	ts_rank_prof_release(&p[0]);
	ts_rank_prof_release(&p[1]);
	ts_trace_release(&t);
	return 0;
}
