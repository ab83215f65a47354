/*
 * Unit tests for the memory estimators. Expected values are hand
 * calculations written out next to each check (Megatron-LM's
 * theoretical_memory_usage.py, docs/memory-plan.md) or published
 * measurements (the Megatron Core MoE paper and the Megatron Bridge MoE
 * guide).
 */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/gpus.h"
#include "trainscope/memory.h"
#include "trainscope/model.h"

/* h 1024, 8 layers, 16 heads, 4 query groups, kv_channels 64, SwiGLU f 4096,
 * vocab 32000 (a multiple of 128*TP for TP 1, 2: no padding), RMSNorm, untied. */
static void dense_model(struct ts_model *m)
{
	struct ts_err err;

	ts_model_init(m);
	m->hidden = 1024;
	m->layers = 8;
	m->heads = 16;
	m->kv_heads = 4;
	m->head_dim = 64;
	m->ffn_hidden = 4096;
	m->vocab = 32000;
	m->gated_mlp = 1;
	m->gated_mlp_set = 1;
	m->norm = TS_NORM_RMS;
	ts_err_init(&err);
	ts_model_finish(m, &err);
}

/* Same widths, MHA (16 groups), L layers of which layer 0 is dense (f 4096)
 * and the rest MoE: 8 experts, top-2, expert f_e 1024, one shared expert of
 * 1024. */
static void moe_model(struct ts_model *m, int64_t layers)
{
	struct ts_err err;

	ts_model_init(m);
	m->hidden = 1024;
	m->layers = layers;
	m->heads = 16;
	m->kv_heads = 16;
	m->head_dim = 64;
	m->ffn_hidden = 4096;
	m->vocab = 32000;
	m->num_experts = 8;
	m->topk = 2;
	m->moe_ffn_hidden = 1024;
	m->shared_experts = 1;
	m->shared_ffn_hidden = 1024;
	m->first_k_dense = 1;
	m->gated_mlp = 1;
	m->gated_mlp_set = 1;
	m->norm = TS_NORM_RMS;
	ts_err_init(&err);
	ts_model_finish(m, &err);
}

static int eval0(const struct ts_model *m, const struct ts_mem_layout *l, int est,
		 struct ts_mem_stage *s)
{
	struct ts_mem_ctx c;
	struct ts_err err;

	ts_err_init(&err);
	if (ts_mem_prepare(&c, m, l, est, &err))
		return -1;
	ts_mem_stage_eval(&c, 0, s);
	return 0;
}

/*
 * Dense GQA, TP2 PP2 DP4, MBS 1, GBS 16 (m = 4), seq 2048, dist-opt, no SP:
 * activation code path 2 (compute_activation_memory_without_sp).
 *   P_att = 2h^2 (1 + g/n)(q/h) = 2*1024^2*1.25*1 = 2,621,440
 * current main: A_dense = P_att + 2hf*1.5 = 2,621,440 + 12,582,912 = 15,204,352
 *   A_block = 8*15,204,352 = 121,634,816; R_block = 8*2h + h = 17,408
 *   N_tp = (121,634,816/2 + hV)/2 = (60,817,408 + 32,768,000)/2 = 46,792,704
 *   N_rep = 17,408/2 = 8,704;  beta(4) = 6 + 12/4 = 9
 *   M_wo = 46,801,408 * 9 = 421,212,672 B
 * core_v0.14: layer = 2h(1.5f + 1) + P_att = 15,206,400; block = 8*15,206,400 + 1024
 *   = 121,652,224; N = (60,826,112 + 32,768,000)/2 = 46,797,056; M_wo = 421,173,504 B
 * activations: s*b*h*(10 + 24/2) = 2048*1024*22 = 46,137,344 per layer, *8 =
 *   369,098,752; + 8*s*b*p = 32,768; + s*b*h*p = 4,194,304 -> 373,325,824;
 *   non-interleaved: *min(1, 4/2) = 1; PP > 1: no logits; *1.05 = 391,992,115.2 B
 */
TEST(memory_megatron_dense_gqa_path2)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.tp = 2;
	l.pp = 2;
	l.dp = 4;
	l.mbs = 1;
	l.gbs = 16;
	l.seq = 2048;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON, &s) == 0);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 421212672.0, 0.5);
	CHECK_NEAR(s.mlm_activation_bytes, 391992115.2, 0.5);
	CHECK(!s.mlm_sp_path);
	/* the split of beta = 2 + 4 + 12/d bytes per parameter */
	CHECK_NEAR(s.weights_bytes, 46801408.0 * 2, 0.5);
	CHECK_NEAR(s.grads_bytes, 46801408.0 * 4, 0.5);
	CHECK_NEAR(s.optimizer_bytes, 46801408.0 * 3, 0.5);
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON_014, &s) == 0);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 421173504.0, 0.5);
	CHECK_NEAR(s.mlm_activation_bytes, 391992115.2, 0.5);
}

/*
 * Dense GQA with VPP 2, SP and selective recompute: code path 1
 * (compute_activation_memory). Weights as above (VPP does not change them).
 *   per layer s*b*h*(18 + 4f/h) = 2048*1024*34 = 71,303,168; *8 = 570,425,344
 *   + 8*s*b*p = 32,768 + s*b*h*p = 4,194,304 -> 574,652,416
 *   interleaved penalty 1 + (p-1)/(p*v) = 1.25 -> 718,315,520; /TP -> 359,157,760 B
 */
TEST(memory_megatron_dense_gqa_vpp_path1)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.tp = 2;
	l.pp = 2;
	l.vpp = 2;
	l.dp = 4;
	l.mbs = 1;
	l.gbs = 16;
	l.seq = 2048;
	l.sequence_parallel = 1;
	l.recompute = TS_RC_SELECTIVE;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON, &s) == 0);
	CHECK(s.mlm_sp_path);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 421212672.0, 0.5);
	CHECK_NEAR(s.mlm_activation_bytes, 359157760.0, 0.5);
	CHECK_NEAR(s.inflight, 2.5, 1e-12); /* phi * p = 1.25 * 2 */
}

/*
 * MoE (layer 0 dense, 3 MoE layers), TP1 PP1 EP4 DP8 (world 8, EDP 2),
 * MBS 2, GBS 32, seq 1024, no SP: path 2 with the logits term (PP = 1).
 *   P_att = 2h^2 * 2 = 4,194,304
 *   A_dense = P_att + 2hf*1.5 = 16,777,216; A_moe = P_att + 2h*f_s*1.5 = 7,340,032
 *   R_dense = 2h = 2048; R_moe = 2h + hE = 10,240; X_moe = 2h*f_e*E*1.5 = 25,165,824
 *   A_block = 16,777,216 + 3*7,340,032 = 38,797,312
 *   R_block = 2048 + 3*10,240 + 1024 = 33,792; X_block = 75,497,472
 *   N_tp = 38,797,312 + hV + hV (untied, PP 1) = 104,333,312
 *   N_exp = 75,497,472/4 = 18,874,368
 *   M_wo = (104,333,312 + 33,792)*(6 + 12/8) + 18,874,368*(6 + 12/2)
 *        = 782,753,280 + 226,492,416 = 1,009,245,696 B
 * core_v0.14 ignores EP: layer_d = 2h(1.5f + 1) + P_att = 16,779,264;
 *   layer_m = 2h(1.5*f_e*E + 1.5*f_s + 1) + P_att = 32,507,904;
 *   block = 16,779,264 + 3*32,507,904 + 1024 = 114,304,000;
 *   N = 114,304,000 + 2hV = 179,840,000; M_wo = 179,840,000*7.5 = 1,348,800,000 B
 * activations: s*b*h*34 = 71,303,168 per layer (uses the dense f), *4 = 285,212,672
 *   + 8sbp 16,384 + sbhp 2,097,152 = 287,326,208; logits (s*b*V/1 + s*b*h)*2
 *   = (65,536,000 + 2,097,152)*2 = 135,266,304 -> 422,592,512; *1.05 = 443,722,137.6 B
 */
TEST(memory_megatron_moe_ep_path2)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	moe_model(&m, 4);
	REQUIRE(m.moe_layers == 3);
	ts_mem_layout_init(&l);
	l.ep = 4;
	l.dp = 8;
	l.mbs = 2;
	l.gbs = 32;
	l.seq = 1024;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON, &s) == 0);
	CHECK_NEAR(s.params_exp, 18874368.0, 0.5);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 1009245696.0, 0.5);
	CHECK_NEAR(s.mlm_activation_bytes, 443722137.6, 0.5);
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON_014, &s) == 0);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 1348800000.0, 0.5);
}

/*
 * MoE with 8 layers (1 dense + 7 MoE), TP2 PP2 VPP2 EP4 DP4 (world 16,
 * EDP = 16/(1*4*2) = 2), MBS 1, GBS 8, seq 1024, SP + selective: path 1.
 *   A_block = 16,777,216 + 7*7,340,032 = 68,157,440
 *   R_block = 2048 + 7*10,240 + 1024 = 74,752; X_block = 7*25,165,824 = 176,160,768
 *   N_tp = (68,157,440/2 + 32,768,000)/2 = 33,423,360; N_rep = 37,376
 *   N_exp = (176,160,768/2)/4 = 22,020,096
 *   M_wo = (33,423,360 + 37,376)*9 + 22,020,096*12 = 301,146,624 + 264,241,152
 *        = 565,387,776 B
 * activations: s*b*h*(18 + 16) = 35,651,584 per layer, *8 = 285,212,672
 *   + 8*1024*2 = 16,384 + 1,048,576*2 = 2,097,152 -> 287,326,208
 *   *1.25 = 359,157,760; /2 = 179,578,880 B
 */
TEST(memory_megatron_moe_vpp_path1)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	moe_model(&m, 8);
	ts_mem_layout_init(&l);
	l.tp = 2;
	l.pp = 2;
	l.vpp = 2;
	l.ep = 4;
	l.dp = 4;
	l.mbs = 1;
	l.gbs = 8;
	l.seq = 1024;
	l.sequence_parallel = 1;
	l.recompute = TS_RC_SELECTIVE;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON, &s) == 0);
	CHECK_NEAR(s.mlm_weight_optimizer_bytes, 565387776.0, 0.5);
	CHECK_NEAR(s.mlm_activation_bytes, 179578880.0, 0.5);
}

/* Layouts Megatron refuses are refused with the flag named. */
TEST(memory_layout_checks)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_err err;

	moe_model(&m, 8);
	ts_mem_layout_init(&l);
	l.ep = 3;
	l.dp = 3;
	l.gbs = 3;
	CHECK(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == TS_EUSAGE);
	CHECK(strstr(err.msg, "--ep 3") != NULL);
	ts_mem_layout_init(&l);
	l.tp = 2;
	CHECK(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == TS_EUSAGE);
	CHECK(strstr(err.msg, "sequence-parallel") != NULL);
	ts_mem_layout_init(&l);
	l.dp = 4;
	l.gbs = 6;
	CHECK(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == TS_EUSAGE);
	CHECK(strstr(err.msg, "--gbs 6") != NULL);
	ts_mem_layout_init(&l);
	l.pp = 4;
	l.vpp = 3; /* 12 virtual stages for 8 layers */
	l.gbs = 4;
	CHECK(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == TS_EUSAGE);
	ts_mem_layout_init(&l);
	l.ep = 16; /* 8 experts */
	l.dp = 16;
	l.gbs = 16;
	CHECK(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == TS_EUSAGE);
}

/*
 * Uneven virtual stages: 61 layers over PP4 x VPP4 = 16 virtual stages
 * give 61 = 13*4 + 3*3, the 13 earliest stages taking 4 layers. Rank 0
 * holds stages 0, 4, 8, 12 = 16 layers; rank 1 stages 1, 5, 9, 13 = 15.
 * With --first-stage-layers 1 --last-stage-layers 0 (a "Et|...|mL" layout):
 * stage 0 has 1 layer, stage 15 none, 60 layers over 14 stages = 4*4 + 10*...
 * 60 = 14*4 + 4 -> the 4 earliest of the middle stages take 5.
 */
TEST(memory_vstage_split)
{
	DATA_OR_SKIP(path, "models/deepseek-v3.json");
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_err err;
	int64_t first, cnt, sum = 0;

	ts_model_init(&m);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0 && ts_model_finish(&m, &err) == 0);
	ts_mem_layout_init(&l);
	l.pp = 4;
	l.vpp = 4;
	l.dp = 64;
	l.gbs = 256;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_vstage_layers(&c, 12, &first, &cnt);
	CHECK_I64(first, 48);
	CHECK_I64(cnt, 4);
	ts_mem_vstage_layers(&c, 13, &first, &cnt);
	CHECK_I64(first, 52);
	CHECK_I64(cnt, 3);
	ts_mem_vstage_layers(&c, 15, &first, &cnt);
	CHECK_I64(first, 58);
	CHECK_I64(cnt, 3);
	l.first_stage_layers = 1;
	l.last_stage_layers = 0;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_vstage_layers(&c, 0, &first, &cnt);
	CHECK_I64(cnt, 1);
	ts_mem_vstage_layers(&c, 1, &first, &cnt);
	CHECK_I64(first, 1);
	CHECK_I64(cnt, 5);
	ts_mem_vstage_layers(&c, 5, &first, &cnt);
	CHECK_I64(first, 21);
	CHECK_I64(cnt, 4);
	ts_mem_vstage_layers(&c, 15, &first, &cnt);
	CHECK_I64(cnt, 0);
	for (int64_t j = 0; j < 16; j++) {
		ts_mem_vstage_layers(&c, j, &first, &cnt);
		sum += cnt;
	}
	CHECK_I64(sum, 61);
}

/*
 * Default estimator, a dense layer by hand (TP1, no SP, BF16, MBS 1, seq
 * 1024: tau = 1024 tokens), dense_model() widths: h 1024, q = 16*64 = 1024,
 * k = v = 4*64 = 256, f 4096 (SwiGLU, FC1 2f).
 *   attention: input 2h + norm out 2h + q,k,v 2(q+2k) + out 2q  (bytes/token)
 *            = 2048 + 2048 + 3072 + 2048 = 9216; softmax stats 4n = 64
 *   MLP: residual 2h + norm out 2h + FC1 out 2*2f + act out 2f
 *       = 2048 + 2048 + 16384 + 8192 = 28672
 *   per token 9216 + 64 + 28672 = 37,952 -> per layer 37,952*1024 = 38,862,848 B
 * PP1, 8 layers, one micro-batch: 310,902,784 B of layer activations.
 * Logits (PP1): final norm in + out 4h = 4096 + 6 bytes * V 32000 = 196,096
 *   per token -> 200,802,304 B. Embedding token ids 8 B/token -> 8192 B.
 * Weights: per layer h(q+2k) + qh + 3hf = 1,572,864 + 1,048,576 + 12,582,912
 *   = 15,204,352 TP-sharded + 2h norms; *8 + 2hV (untied) = 121,634,816 +
 *   65,536,000 = 187,170,816 TP-sharded, 8*2048 + 1024 = 17,408 replicated
 *   -> 187,188,224 parameters, BF16 374,376,448 B, grads 748,752,896 B,
 *   optimizer 12 B each (DP 1) 2,246,258,688 B.
 */
TEST(memory_moe_aware_dense_by_hand)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.seq = 1024;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_NEAR(s.layer_act_bytes, 310902784.0, 0.5);
	CHECK_NEAR(s.logits_bytes, 200802304.0, 0.5);
	CHECK_NEAR(s.embed_act_bytes, 8192.0, 0.5);
	CHECK_NEAR(s.params_tp + s.params_rep, 187188224.0, 0.5);
	CHECK_NEAR(s.weights_bytes, 374376448.0, 0.5);
	CHECK_NEAR(s.grads_bytes, 748752896.0, 0.5);
	CHECK_NEAR(s.optimizer_bytes, 2246258688.0, 0.5);
	CHECK_NEAR(s.inflight, 1.0, 1e-12);
	/* allowances: 1 GiB context + 5 % of the allocated peak */
	CHECK_NEAR(s.total_bytes, s.allocated_bytes * 1.05 + 1073741824.0, 1.0);
}

/*
 * FSDP (ZeRO-3) on dense_model, DP 4, seq 1024, by hand. Parameters per
 * layer: QKV 1024*(1024 + 2*256) = 1,572,864 + out 1024*1024 = 1,048,576 +
 * gated MLP 3*1024*4096 = 12,582,912 + norms 2048 = 15,206,400; embedding
 * and untied output 32000*1024 = 32,768,000 each; total 187,188,224.
 * Sharded over DP 4: 46,797,056 -> weights 2 B = 93,594,112, gradients 4 B =
 * 187,188,224, optimizer 12 B = 561,564,672. The largest unit gathered
 * whole is the embedding (32,768,000 > one layer): two units (current and
 * prefetched) of BF16 weights + FP32 gradients = 2*6*32,768,000 =
 * 393,216,000 B. Activations are those of the unsharded run. A Megatron
 * estimator refuses FSDP.
 */
TEST(memory_fsdp_by_hand)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s, plain;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.seq = 1024;
	l.dp = 4;
	l.gbs = 4;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &plain) == 0);
	l.fsdp = 1;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_NEAR(s.params_tp + s.params_rep, 187188224.0, 0.5);
	CHECK_NEAR(s.weights_bytes, 93594112.0, 0.5);
	CHECK_NEAR(s.grads_bytes, 187188224.0, 0.5);
	CHECK_NEAR(s.optimizer_bytes, 561564672.0, 0.5);
	CHECK_NEAR(s.fsdp_unit_params, 32768000.0, 0.5);
	CHECK_NEAR(s.fsdp_buffer_bytes, 393216000.0, 0.5);
	CHECK_NEAR(s.activations_bytes, plain.activations_bytes, 0.5);
	CHECK_NEAR(s.allocated_bytes, 93594112.0 + 393216000.0 + 187188224.0 + 561564672.0 +
		   plain.activations_bytes, 1.0);
	CHECK(plain.fsdp_buffer_bytes == 0);
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MEGATRON, &s) == -1);
}

/*
 * Interleaved schedule, PP4 VPP4, equal chunks, enough micro-batches:
 * rank 0 runs (4-0-1)*2 + 3*4 = 18 warm-up forwards and holds 19 chunks at
 * the peak = 19/4 = 4.75 of its layer set (= p + (p-1)/v, Megatron's phi*p);
 * rank 3 runs 0 + 12 -> 13/4 = 3.25. Non-interleaved PP4 with 2
 * micro-batches: rank 0 holds min(p, m) = 2, rank 3 holds 1.
 */
TEST(memory_schedule_inflight)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_mem_stage s;
	struct ts_err err;

	ts_model_init(&m);
	m.hidden = 1024;
	m.layers = 16;
	m.heads = 16;
	m.vocab = 32000;
	REQUIRE(ts_model_finish(&m, &err) == 0);
	ts_mem_layout_init(&l);
	l.pp = 4;
	l.vpp = 4;
	l.gbs = 16;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_stage_eval(&c, 0, &s);
	CHECK_NEAR(s.inflight, 4.75, 1e-3);
	ts_mem_stage_eval(&c, 3, &s);
	CHECK_NEAR(s.inflight, 3.25, 1e-9);
	l.vpp = 1;
	l.gbs = 2;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_stage_eval(&c, 0, &s);
	CHECK_NEAR(s.inflight, 2.0, 1e-9);
	ts_mem_stage_eval(&c, 3, &s);
	CHECK_NEAR(s.inflight, 1.0, 1e-9);
}

/*
 * DualPipe on dense_model (8 layers, 2 a stage), PP4, seq 1024, MBS 1, GBS
 * 16 (DP 1: 16 micro-batches, 8 each way), by hand. A layer stores
 * 310,902,784 / 8 = 38,862,848 B a micro-batch (the test above).
 * Rank 1 holds stages 1 and 2 and at its peak 4-1 = 3 micro-batches of
 * stage 1 and 1+1 = 2 of stage 2: 5 * 2 * 38,862,848 = 388,628,480 B, 10
 * layer-micro-batches over its 4 layers = 2.5 in flight; 4 layers of
 * 15,206,400 parameters = 60,825,600.
 * Rank 0 holds stages 0 and 3: 4 of stage 0 (with the embedding's 8 tau =
 * 8,192 B each) and 1 of stage 3: 10 layer-micro-batches again plus
 * 32,768 B, the logits (200,802,304 B), and the embedding, the output
 * layer and the final norm: 60,825,600 + 2 * 32,768,000 + 1,024 =
 * 126,362,624 parameters. Ranks 3 and 2 mirror 0 and 1; rank 0 is the
 * peak. DeepSeek's implementation needs an even micro-batch count of at
 * least 2*PP: GBS 6 (6 micro-batches at PP 4) and 9 are refused, 8 is not.
 */
TEST(memory_dualpipe_by_hand)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_mem_stage s, t;
	struct ts_err err;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.seq = 1024;
	l.pp = 4;
	l.gbs = 16;
	l.dualpipe = 1;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_stage_eval(&c, 1, &s);
	CHECK_I64(s.layers, 4);
	CHECK(!s.embedding && !s.output);
	CHECK_NEAR(s.layer_act_bytes, 388628480.0, 0.5);
	CHECK_NEAR(s.inflight, 2.5, 1e-12);
	CHECK_NEAR(s.params_tp + s.params_rep, 60825600.0, 0.5);
	CHECK_NEAR(s.logits_bytes, 0.0, 0.0);
	ts_mem_stage_eval(&c, 2, &t);
	CHECK_NEAR(t.total_bytes, s.total_bytes, 0.0);
	ts_mem_stage_eval(&c, 0, &s);
	CHECK_I64(s.layers, 4);
	CHECK(s.embedding && s.output);
	CHECK_NEAR(s.layer_act_bytes, 388628480.0, 0.5);
	CHECK_NEAR(s.embed_act_bytes, 32768.0, 0.5);
	CHECK_NEAR(s.logits_bytes, 200802304.0, 0.5);
	CHECK_NEAR(s.params_tp + s.params_rep, 126362624.0, 0.5);
	ts_mem_stage_eval(&c, 3, &t);
	CHECK_NEAR(t.total_bytes, s.total_bytes, 0.0);
	ts_mem_peak(&c, &t);
	CHECK_I64(t.rank, 0);
	l.gbs = 6;
	CHECK_I64(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err), TS_EUSAGE);
	l.gbs = 9;
	CHECK_I64(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err), TS_EUSAGE);
	l.gbs = 8;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_stage_eval(&c, 0, &s);
	CHECK_NEAR(s.layer_act_bytes, 388628480.0, 0.5);
	/* DualPipe needs VPP 1, an even PP and the moe-aware estimator */
	l.gbs = 16;
	l.vpp = 2;
	CHECK_I64(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err), TS_EUSAGE);
	l.vpp = 1;
	CHECK_I64(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MEGATRON, &err), TS_EUSAGE);
	l.pp = 2;
	l.gbs = 6;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	l.pp = 3;
	CHECK_I64(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err), TS_EUSAGE);
	l.pp = 8;
	l.gbs = 16;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	l.pp = 1;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
}

/*
 * Published: DeepSeek-V3 BF16 on 256 GPUs, PP4 VPP4 EP64 (TP1, DP64, EDP1),
 * MBS 1, seq 4096, no memory optimisation: 199.5 GB per GPU = 36.4 weights
 * and gradients + 32.1 main weights and optimizer + 131.0 activations
 * (Megatron Core MoE paper, memory wall). GB read as 10^9 B (as 2^30 every
 * check below still holds).
 * The breakdown is that of a rank holding 15 MoE layers and no embedding:
 * per MoE layer MLA 187.1 M + shared expert 3*7168*2048 = 44.0 M TP-sharded,
 * experts 256*3*7168*2048/64 = 176.2 M -> 6 B * 15 * 407.3 M = 36.7 GB and
 * 12 B * 15 * 176.2 M + 12 B * 15 * 231 M / 64 = 32.4 GB. With 61 layers
 * over 16 virtual stages, ranks 1 and 2 hold 15 MoE layers (test above).
 * Acceptance: within 15 % for that rank's parts and for the most loaded
 * rank's total.
 */
TEST(memory_published_deepseek_v3)
{
	DATA_OR_SKIP(path, "models/deepseek-v3.json");
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_ctx c;
	struct ts_mem_stage s;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0 && ts_model_finish(&m, &err) == 0);
	ts_mem_layout_init(&l);
	l.pp = 4;
	l.vpp = 4;
	l.ep = 64;
	l.dp = 64;
	l.mbs = 1;
	l.gbs = 1024;
	l.seq = 4096;
	REQUIRE(ts_mem_prepare(&c, &m, &l, TS_MEM_EST_MOE, &err) == 0);
	ts_mem_stage_eval(&c, 1, &s);
	REQUIRE(s.moe_layers == 15 && s.layers == 15 && !s.embedding);
	CHECK_REL(s.weights_bytes + s.grads_bytes, 36.4e9, 0.15);
	CHECK_REL(s.optimizer_bytes, 32.1e9, 0.15);
	CHECK_REL(s.activations_bytes, 131.0e9, 0.15);
	CHECK_REL(s.allocated_bytes, 199.5e9, 0.15);
	ts_mem_peak(&c, &s);
	CHECK_REL(s.allocated_bytes, 199.5e9, 0.15);
	/*
	 * The last rank holds 15 MoE layers, the MTP layer, the output layer and
	 * (untied, PP > 1) the embedding MTP looks tokens up in. TP-sharded per
	 * MoE layer: q_up 1536*128*192 = 37,748,736 + kv_up 512*128*256 =
	 * 16,777,216 + out 128*128*7168 = 117,440,512 + shared 3*7168*2048 =
	 * 44,040,192 = 216,006,656; *15 = 3,240,099,840; MTP 216,006,656 +
	 * eh-proj 2*7168^2 = 102,760,448; 2hV = 2*7168*129280 = 1,853,358,080
	 * -> 5,412,225,024. Replicated per MoE layer: down-projections
	 * 7168*1536 + 7168*576 = 15,138,816, their norms 1536 + 512, layer norms
	 * 2*7168, router 7168*256 = 1,835,008 -> 16,990,208; *15 = 254,853,120;
	 * MTP 16,990,208 + 3 norms 21,504; final norm 7168 -> 271,872,000.
	 */
	ts_mem_stage_eval(&c, 3, &s);
	CHECK(s.output && s.mtp_layers == 1 && s.layers == 15);
	CHECK_NEAR(s.params_tp, 5412225024.0, 0.5);
	CHECK_NEAR(s.params_rep, 271872000.0, 0.5);
	CHECK(s.logits_bytes > 0);
}

/*
 * Published: Qwen3-30B-A3B BF16 on 16 H100, EP16 (TP1 PP1 DP16, EDP1), MBS 1,
 * seq 4096, alltoall dispatcher: 61.35 GB peak allocated (Megatron Bridge
 * MoE optimisation guide). Peak allocated has no context or fragmentation
 * in it, so allocated_bytes is compared. Within 15 %.
 */
TEST(memory_published_qwen3_30b)
{
	DATA_OR_SKIP(path, "models/qwen3-30b-a3b.json");
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0 && ts_model_finish(&m, &err) == 0);
	ts_mem_layout_init(&l);
	l.ep = 16;
	l.dp = 16;
	l.mbs = 1;
	l.gbs = 256;
	l.seq = 4096;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_REL(s.allocated_bytes, 61.35e9, 0.15);
	/* the static part by hand: per layer attention 2048*5120 + 4096*2048
	 * = 18,874,368 + router 2048*128 = 262,144 + norms 4096 + q/k norms 256;
	 * *48 = 918,761,472; + 2hV = 622,329,856 + final norm 2048 -> 1,541,093,376
	 * dense; experts 128*3*2048*768*48/16 = 1,811,939,328. */
	CHECK_NEAR(s.params_tp + s.params_rep, 1541093376.0, 0.5);
	CHECK_NEAR(s.params_exp, 1811939328.0, 0.5);
}

/*
 * Recompute and offload move bytes as documented: full recompute (uniform,
 * 1 layer per group) keeps only layer inputs, a fraction of no recompute;
 * selective core_attn saves the softmax statistics only (flash attention);
 * optimizer offload zeroes the device optimizer bytes.
 * dense_model, seq 1024: softmax stats 4 B * 16 heads * 1024 tokens = 65,536 B
 * per layer, 8 layers -> 524,288 B saved.
 */
TEST(memory_recompute_and_offload)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage none, sel, full, off;

	dense_model(&m);
	ts_mem_layout_init(&l);
	l.seq = 1024;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &none) == 0);
	l.recompute = TS_RC_SELECTIVE;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &sel) == 0);
	CHECK_NEAR(sel.recompute_saved_bytes[0], 524288.0, 0.5);
	CHECK_NEAR(none.layer_act_bytes - sel.layer_act_bytes, 524288.0, 0.5);
	l.recompute = TS_RC_FULL;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &full) == 0);
	/* 8 layer inputs of 2h*1024 = 2 MiB each */
	CHECK_NEAR(full.layer_act_bytes, 8 * 2097152.0, 0.5);
	CHECK_NEAR(full.transient_bytes, 38862848.0, 0.5);
	l.recompute = TS_RC_NONE;
	l.offload = TS_OFFLOAD_OPTIMIZER;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &off) == 0);
	CHECK_NEAR(off.optimizer_bytes, 0.0, 0.0);
	CHECK_NEAR(off.offload_optimizer_bytes, none.optimizer_bytes, 0.5);
}

/*
 * Default estimator, MoE layers by hand: moe_model(4) (layer 0 dense, 3 MoE;
 * h 1024, 16 heads = groups, d 64, E 8, top-2, f_e 1024, shared 1024,
 * f 4096), TP2 + SP, CP2, EP4, ETP1, DP2 (world 8, EDP 2), MBS 1, seq 2048.
 * tau = 2048/2 = 1024 tokens per CP rank, sigma = 2, expert tokens
 * t_e = tau*K*ETP/TP = 1024. Bytes per MoE layer:
 *   input 2h*tau/2 = 1,048,576; fused norm out 1,048,576; q,k,v 2*48*64*512
 *   = 3,145,728; attention out 2*16*64*512 = 1,048,576; softmax stats
 *   4*16*512 = 32,768; residual 1,048,576; MoE norm out 1,048,576;
 *   router 13*8*512 = 53,248; shared FC1 2*2048*512 = 2,097,152, shared act
 *   2*1024*512 = 1,048,576; expert FC1 in 2*1024*1024 = 2,097,152, FC1 out
 *   2*2048*1024 = 4,194,304, act 2*1024*1024 = 2,097,152; probs 4*1024 = 4,096
 *   -> 20,013,056. Dense layer: five tensors of 1,048,576 (input, norm out,
 *   attention out, residual, MLP norm out) + q,k,v 3,145,728 + stats 32,768
 *   + FC1 2*8192*512 = 8,388,608 + act 2*4096*512 = 4,194,304 -> 21,004,288.
 *   PP1: 21,004,288 + 3*20,013,056 = 81,043,456 B.
 * Logits: norm in/out 4h*tau/2 = 2,097,152 + 6*V*tau/TP = 6*32000*512 =
 *   98,304,000 -> 100,401,152 B.
 * Parameters: TP-sharded (16,777,216 + 3*7,340,032 + 2*32,768,000)/2 =
 *   52,166,656; replicated 4*2048 + 3*8192 + 1024 = 33,792; experts
 *   3*25,165,824/4 = 18,874,368. Optimizer 12 B over DP*CP = 4 (dense) and
 *   EDP = 2 (experts): 12*52,200,448/4 + 12*18,874,368/2 = 269,847,552 B.
 * Fine-grained selective saves: core_attn 4*32,768 = 131,072; layernorm
 *   3*1,048,576 = 3,145,728; moe_act 3*2,097,152 = 6,291,456; shared experts
 *   3*3,145,728 = 9,437,184. Activation offload moves expert FC1 in + out
 *   3*6,291,456 = 18,874,368 and stages one layer's 6,291,456.
 */
TEST(memory_moe_aware_moe_layers_by_hand)
{
	struct ts_model m;
	struct ts_mem_layout l;
	struct ts_mem_stage s;

	moe_model(&m, 4);
	ts_mem_layout_init(&l);
	l.tp = 2;
	l.cp = 2;
	l.ep = 4;
	l.dp = 2;
	l.gbs = 2;
	l.seq = 2048;
	l.sequence_parallel = 1;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_NEAR(s.layer_act_bytes, 81043456.0, 0.5);
	CHECK_NEAR(s.logits_bytes, 100401152.0, 0.5);
	CHECK_NEAR(s.params_tp, 52166656.0, 0.5);
	CHECK_NEAR(s.params_rep, 33792.0, 0.5);
	CHECK_NEAR(s.params_exp, 18874368.0, 0.5);
	CHECK_NEAR(s.optimizer_bytes, 269847552.0, 0.5);
	l.recompute = TS_RC_SELECTIVE;
	l.recompute_modules = TS_MEM_SELECTIVE_ALL;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_NEAR(s.recompute_saved_bytes[ts_mem_module_index(TS_RCM_CORE_ATTN)], 131072.0, 0.5);
	CHECK_NEAR(s.recompute_saved_bytes[ts_mem_module_index(TS_RCM_LAYERNORM)], 3145728.0, 0.5);
	CHECK_NEAR(s.recompute_saved_bytes[ts_mem_module_index(TS_RCM_MOE_ACT)], 6291456.0, 0.5);
	CHECK_NEAR(s.recompute_saved_bytes[ts_mem_module_index(TS_RCM_SHARED_EXPERTS)], 9437184.0, 0.5);
	CHECK_NEAR(s.layer_act_bytes, 81043456.0 - 131072 - 3145728 - 6291456 - 9437184, 0.5);
	l.recompute = TS_RC_NONE;
	l.offload = TS_OFFLOAD_ACTIVATIONS;
	REQUIRE(eval0(&m, &l, TS_MEM_EST_MOE, &s) == 0);
	CHECK_NEAR(s.offload_activation_bytes, 18874368.0, 0.5);
	CHECK_NEAR(s.transient_bytes, 6291456.0, 0.5);
	CHECK_NEAR(s.layer_act_bytes, 81043456.0 - 18874368.0, 0.5);
}
