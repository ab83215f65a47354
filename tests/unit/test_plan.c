/*
 * Unit tests for the layout search. Each rule is checked on its own by
 * re-deriving, from the listed layouts, what the rule demands (the tests
 * do not trust the sieve's bookkeeping), plus legality of every layout and
 * two published layouts that are known to run.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/gpus.h"
#include "trainscope/plan.h"

#define GIB 1073741824.0

/* H100 SXM: 80 GiB, 989.4 TFLOP/s BF16 dense, NVLink4 900 GB/s aggregate
 * (450 per direction), 8 GPUs per node, 400 Gb/s NIC per GPU (50 GB/s). */
static int run_plan(const char *rel, int64_t gpus, int64_t gbs, struct ts_model *m,
		    struct ts_plan_opts *o, struct ts_plan *p)
{
	const char *path = test_data(rel);
	struct ts_err err;

	if (!path)
		return -1;
	ts_model_init(m);
	ts_err_init(&err);
	if (ts_model_read_config(m, path, &err) || ts_model_finish(m, &err))
		return -1;
	ts_plan_opts_init(o);
	o->gpus = gpus;
	o->gpus_per_node = 8;
	o->seq = 4096;
	o->gbs = gbs;
	o->capacity_bytes = 80.0 * GIB;
	o->peak_flops = 989.4e12;
	o->intra_bw = 450e9;
	o->inter_bw = 50e9;
	ts_plan_init(p);
	return ts_plan_run(m, o, p, &err);
}

static int64_t imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int level(const struct ts_plan_layout *x)
{
	if (x->recompute == TS_RC_FULL)
		return 3;
	if (x->recompute == TS_RC_SELECTIVE)
		return x->modules == TS_RCM_CORE_ATTN ? 1 : 2;
	return 0;
}

/* Every rule of the sieve, re-derived from the layouts themselves. */
static void check_rules(const struct ts_model *m, const struct ts_plan_opts *o,
			const struct ts_plan *p)
{
	int64_t node = o->gpus_per_node, min_mp = INT64_MAX, min_amp = INT64_MAX;
	int any_no_offload = 0, min_lv = 9, survivors = 0;
	double last_step = 0;

	REQUIRE(p->n > 0);
	/* legality of every listed layout */
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		CHECK(m->heads % x->tp == 0 && m->kv_heads % x->tp == 0);
		CHECK(x->tp * x->cp * x->pp * x->dp == o->gpus);
		CHECK(o->gbs % (x->mbs * x->dp) == 0);
		CHECK(x->pp * x->vpp <= m->layers);
		if (m->num_experts) {
			CHECK(m->num_experts % x->ep == 0);
			CHECK((x->tp * x->cp * x->dp) % (x->ep * x->etp) == 0);
			CHECK(x->edp * x->ep * x->etp * x->pp == o->gpus);
		}
		CHECK(x->fits == (x->memory_bytes <= o->capacity_bytes));
		CHECK_I64(x->rank, (int64_t)i + 1);
		any_no_offload |= x->fits && !x->offload;
	}
	/* rule 1: offload last */
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->eliminated_by == TS_RULE_NONE) {
			CHECK(x->fits);
			if (any_no_offload)
				CHECK(x->offload == 0);
		}
	}
	/* rule 2: smallest model parallelism among what passed rule 1 */
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->fits && (!any_no_offload || !x->offload))
			min_mp = imax(x->tp * x->cp * x->pp, x->etp * x->ep * x->pp) < min_mp ?
				 imax(x->tp * x->cp * x->pp, x->etp * x->ep * x->pp) : min_mp;
	}
	/* rule 3 and 4 on that set */
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->fits && (!any_no_offload || !x->offload) &&
		    imax(x->tp * x->cp * x->pp, x->etp * x->ep * x->pp) == min_mp && level(x) < min_lv)
			min_lv = level(x);
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->fits && (!any_no_offload || !x->offload) &&
		    imax(x->tp * x->cp * x->pp, x->etp * x->ep * x->pp) == min_mp && level(x) == min_lv &&
		    x->tp * x->cp * x->pp < min_amp)
			min_amp = x->tp * x->cp * x->pp;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->eliminated_by != TS_RULE_NONE)
			continue;
		survivors++;
		CHECK_I64(imax(x->tp * x->cp * x->pp, x->etp * x->ep * x->pp), min_mp);
		CHECK_I64(level(x), min_lv);
		CHECK_I64(x->tp * x->cp * x->pp, min_amp);
		/* rules 5-8, unless the plan says nothing could keep them */
		if (!(p->waived & (1 << TS_RULE_NODE)))
			CHECK(x->tp <= node && x->ep * x->etp <= node);
		if (!(p->waived & (1 << TS_RULE_PP_VPP)))
			CHECK(x->pp == 1 || x->vpp > 1);
		if (!(p->waived & (1 << TS_RULE_EP_BEFORE_ETP)))
			CHECK(x->etp == 1);
		if (!(p->waived & (1 << TS_RULE_CP_LONG)))
			CHECK(x->cp == 1 || o->seq / x->cp >= 4096);
		/* ranked by step time */
		CHECK(x->step_s >= last_step);
		last_step = x->step_s;
	}
	CHECK_I64(survivors, (int64_t)p->survivors);
	/* a waiver is only claimed when the candidates of that rule all broke it */
	for (int r = TS_RULE_NODE; r < TS_RULE_COUNT; r++) {
		if (!(p->waived & (1 << r)))
			continue;
		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].eliminated_by == TS_RULE_NONE)
				CHECK(p->v[i].violations & (1 << r));
	}
}

static const struct ts_plan_layout *find(const struct ts_plan *p, int64_t tp, int64_t cp,
					 int64_t pp, int64_t vpp, int64_t ep, int64_t etp, int64_t mbs)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct ts_plan_layout *x = &p->v[i];
		if (x->tp == tp && x->cp == cp && x->pp == pp && x->vpp == vpp && x->ep == ep &&
		    x->etp == etp && x->mbs == mbs)
			return x;
	}
	return NULL;
}

/*
 * Qwen3-30B-A3B on 16 H100, GBS 1024. The published run (TP1 PP1 EP16,
 * MBS 1, no recompute, 61.35 GB peak) fits on an 80 GB H100, so the plan
 * must list it as fitting with no recompute and no offload.
 */
TEST(plan_qwen3_30b_16_h100_rules)
{
	struct ts_model m;
	struct ts_plan_opts o;
	struct ts_plan p;
	const struct ts_plan_layout *x;

	if (run_plan("models/qwen3-30b-a3b.json", 16, 1024, &m, &o, &p))
		return;
	check_rules(&m, &o, &p);
	CHECK(p.survivors >= 1);
	x = find(&p, 1, 1, 1, 1, 16, 1, 1);
	REQUIRE(x != NULL);
	CHECK(x->fits);
	CHECK_I64(x->recompute, TS_RC_NONE);
	CHECK_I64(x->offload, 0);
	ts_plan_release(&p);
}

/*
 * DeepSeek-V3 on 1024 H100, GBS 8192. The published H100 recipe (TP2 EP64
 * PP8 VPP4, light-to-moderate selective recompute; Megatron Bridge MoE
 * hardware configs) runs, so the plan must list it as fitting with
 * selective recompute (not full, no offload).
 */
TEST(plan_deepseek_v3_1024_h100_rules)
{
	struct ts_model m;
	struct ts_plan_opts o;
	struct ts_plan p;
	const struct ts_plan_layout *x;

	if (run_plan("models/deepseek-v3.json", 1024, 8192, &m, &o, &p))
		return;
	check_rules(&m, &o, &p);
	CHECK(p.survivors >= 1);
	x = find(&p, 2, 1, 8, 4, 64, 1, 1);
	REQUIRE(x != NULL);
	CHECK(x->fits);
	CHECK_I64(x->recompute, TS_RC_SELECTIVE);
	CHECK_I64(x->offload, 0);
	/* DSV3 does not fit on 1024 H100 without model parallelism: 671 B
	 * parameters at >= 6 B each are 4 TB, 4 GB per GPU at best, plus
	 * optimizer; TP1 CP1 PP1 EP1 cannot be listed as fitting. */
	x = find(&p, 1, 1, 1, 1, 1, 1, 1);
	CHECK(x == NULL || !x->fits);
	ts_plan_release(&p);
}

/*
 * The virtual pipeline depths searched, Qwen3-8B (36 layers) on 48 GPUs,
 * GBS 1152 (every PP of 1, 2, 3, 4, 6, ... leaves whole micro-batch counts
 * that PP divides): up to 8 any depth with PP*VPP <= 38; above 8 only the
 * depths that divide the layers a stage (Megatron's recipes run 96 layers
 * at PP 8 VPP 12: one layer a virtual stage). By hand: PP 2 (18 a stage)
 * adds 9 and 18; PP 3 (12) adds 12; PP 4 (9) adds 9; PP 6 (6) none; 10, 11,
 * 13-17 never. Before, the search stopped at VPP 8.
 */
TEST(plan_vpp_above_8_divides_stage_layers)
{
	struct ts_model m;
	struct ts_plan_opts o;
	struct ts_plan p;
	int seen[4][19];

	if (run_plan("models/qwen3-8b.json", 48, 1152, &m, &o, &p))
		return;
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < p.n; i++) {
		const struct ts_plan_layout *x = &p.v[i];
		CHECK(x->vpp <= 8 || m.layers % (x->pp * x->vpp) == 0);
		if (x->pp >= 2 && x->pp <= 4 && x->vpp <= 18)
			seen[x->pp - 1][x->vpp] = 1;
	}
	CHECK(seen[1][9] && seen[1][18] && !seen[1][10] && !seen[1][12]);
	CHECK(seen[2][12] && !seen[2][9] && !seen[2][11]);
	CHECK(seen[3][9] && !seen[3][10]);
	CHECK(seen[1][8] && seen[1][7]); /* up to 8 as before */
	CHECK(ts_plan_vpp_searched(&o, 96, 8, 12));
	CHECK(!ts_plan_vpp_searched(&o, 96, 8, 10));
	CHECK(!ts_plan_vpp_searched(&o, 96, 1, 2));
	o.schedule = TS_SCHED_DUALPIPE;
	CHECK(!ts_plan_vpp_searched(&o, 96, 8, 12));
	ts_plan_release(&p);
}

/* A plan on too few GPUs is empty of survivors, not an error. */
TEST(plan_nothing_fits)
{
	struct ts_model m;
	struct ts_plan_opts o;
	struct ts_plan p;

	if (run_plan("models/deepseek-v3.json", 8, 64, &m, &o, &p))
		return;
	CHECK_I64((int64_t)p.survivors, 0);
	CHECK_I64((int64_t)p.fitting, 0);
	ts_plan_release(&p);
}

/*
 * Communication per GPU per step by hand, dense GQA model (h 1024, 8 layers,
 * 16 heads, 4 groups, d 64, SwiGLU f 4096, vocab 32000) on 16 GPUs (8 per
 * node), seq 2048, GBS 16; layout TP2 PP1 DP8 MBS1 (m = 16/8 = 2):
 *   TP: 4 collectives per block, 2 blocks per layer, 8 layers, 2 micro-
 *   batches, each (2-1)/2 * 2048*1024*2 B = 2,097,152 -> 268,435,456 B,
 *   inside the node (TP group of 2 at stride 1).
 *   DP: parameters per GPU (8*15,204,352 + 2*32,768,000)/2 + 8*2048 + 1024
 *   = 93,602,816; (8-1)/8 * 93,602,816 * (4 + 2) B = 491,414,784 B; the DP
 *   group (stride 2, 8 ranks = 16 GPUs) spans two nodes -> inter-node.
 */
TEST(plan_comm_volumes_by_hand)
{
	struct ts_model m;
	struct ts_plan_opts o;
	struct ts_plan p;
	struct ts_err err;
	const struct ts_plan_layout *x;

	ts_model_init(&m);
	m.hidden = 1024;
	m.layers = 8;
	m.heads = 16;
	m.kv_heads = 4;
	m.head_dim = 64;
	m.ffn_hidden = 4096;
	m.vocab = 32000;
	m.gated_mlp = 1;
	m.gated_mlp_set = 1;
	m.norm = TS_NORM_RMS;
	ts_err_init(&err);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	ts_plan_opts_init(&o);
	o.gpus = 16;
	o.gpus_per_node = 8;
	o.seq = 2048;
	o.gbs = 16;
	o.capacity_bytes = 80.0 * GIB;
	o.peak_flops = 989.4e12;
	o.intra_bw = 450e9;
	ts_plan_init(&p);
	REQUIRE(ts_plan_run(&m, &o, &p, &err) == 0);
	x = find(&p, 2, 1, 1, 1, 1, 1, 1);
	REQUIRE(x != NULL && x->fits);
	CHECK_NEAR(x->comm_bytes[TS_COMM_TP][TS_LINK_INTRA], 268435456.0, 0.5);
	CHECK_NEAR(x->comm_bytes[TS_COMM_TP][TS_LINK_INTER], 0.0, 0.0);
	CHECK_NEAR(x->comm_bytes[TS_COMM_DP][TS_LINK_INTER], 491414784.0, 0.5);
	CHECK_NEAR(x->comm_bytes[TS_COMM_PP][TS_LINK_INTER] + x->comm_bytes[TS_COMM_EP][TS_LINK_INTER], 0.0, 0.0);
	/* step = compute + exposed + bubble (PP1: no bubble) */
	CHECK_NEAR(x->bubble_s, 0.0, 0.0);
	CHECK_NEAR(x->step_s, x->compute_s + x->exposed_comm_s, 1e-12);
	ts_plan_release(&p);
}
