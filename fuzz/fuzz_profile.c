/*
 * fuzz_profile.c - the whole analysis path on arbitrary input: read the
 * trace (lenient), profile the rank, run the cross-rank analysis over two
 * copies and render the annotation events. Must never crash, hang or leak.
 */
#include <stddef.h>
#include <stdint.h>
#include "trainscope/annotate.h"
#include "trainscope/profile.h"
#include "trainscope/trace.h"
#include "oracle.h"

/* The breakdown adds up: busy and idle split the window, parts of the busy
 * time stay inside it, shares stay within 0..100 %. */
static void check_prof(const struct ts_rank_prof *p)
{
	if (p->window_ns < 0 || p->busy_ns < 0 || p->busy_ns > p->window_ns ||
	    p->idle_ns != p->window_ns - p->busy_ns)
		abort();
	if (p->exposed_comm_ns < 0 || p->exposed_comm_ns > p->comm_ns ||
	    p->exposed_memcpy_ns < 0 || p->exposed_memcpy_ns > p->memcpy_ns)
		abort();
	if (p->overlap_pct != -1 && !(p->overlap_pct >= 0 && p->overlap_pct <= 100 + 1e-9))
		abort();
	oracle_share(p->verdict.share);
	for (size_t i = 0; i < p->top.n; i++)
		oracle_text(ts_prof_str(p, p->top.v[i].name), ts_prof_len(p, p->top.v[i].name));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct ts_trace t;
	struct ts_rank_prof p[2];
	struct ts_rank_prof *pp[2] = { &p[0], &p[1] };
	struct ts_prof_tracks k;
	struct ts_prof_opts po = { 5, &k };
	struct ts_job_prof j;
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
			struct ts_annotate_info ai = { &p[0], &k, &j };
			oracle_share(j.wall.share);
			ts_annotate_events(&sb, &ai);
			if (!sb.failed)
				oracle_json(sb.buf, sb.len);
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
