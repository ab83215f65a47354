/*
 * Unit tests for the FLOPs formulas. Every expected number is either read
 * from ../shared/data/expected/flops-cases.csv or worked out by hand in
 * the comment above the check (symbols of flops-memory-workflow.md §1).
 */
#include <stdlib.h>
#include "harness.h"
#include "trainscope/flops.h"
#include "trainscope/model.h"

/* Model A: dense GQA, gated. h=1024, L=2, n=8, g=2, d=128 (q=1024, k=256),
 * f=2816, vocab 32000 (32000/128 = 250: no padding at TP 1). */
static void model_a(struct ts_model *m)
{
	ts_model_init(m);
	m->hidden = 1024;
	m->layers = 2;
	m->heads = 8;
	m->kv_heads = 2;
	m->head_dim = 128;
	m->ffn_hidden = 2816;
	m->vocab = 32000;
	m->gated_mlp = 1;
	m->gated_mlp_set = 1;
}

/* Model B: MoE with shared experts, a dense first layer and MTP.
 * h=512, L=4, n=g=4, d=128 (q=k=512), f=1536, f_e=256, K=2 of E=8,
 * f_s=512, first_k_dense=1 (layers 1..3 MoE: N_moe=3, N_dense=1), D=1,
 * gated, vocab 1000. */
static void model_b(struct ts_model *m)
{
	ts_model_init(m);
	m->hidden = 512;
	m->layers = 4;
	m->heads = 4;
	m->head_dim = 128;
	m->ffn_hidden = 1536;
	m->moe_ffn_hidden = 256;
	m->num_experts = 8;
	m->topk = 2;
	m->shared_ffn_hidden = 512;
	m->first_k_dense = 1;
	m->mtp_layers = 1;
	m->vocab = 1000;
	m->gated_mlp = 1;
	m->gated_mlp_set = 1;
}

/* Model C: MLA, one dense layer. h=1024, n=8, r_q=256, r_kv=128, d_qk=64,
 * d_r=32, d_v=64, f=2048 gated, vocab 1024. */
static void model_c(struct ts_model *m)
{
	ts_model_init(m);
	m->hidden = 1024;
	m->layers = 1;
	m->heads = 8;
	m->ffn_hidden = 2048;
	m->vocab = 1024;
	m->mla = 1;
	m->q_lora_rank = 256;
	m->kv_lora_rank = 128;
	m->qk_head_dim = 64;
	m->qk_rope_dim = 32;
	m->v_head_dim = 64;
	m->gated_mlp = 1;
	m->gated_mlp_set = 1;
}

/* Model D: the classic GPT (MHA, d = h/n, f = 4h, not gated): h=1024,
 * L=2, n=16, vocab 32000. */
static void model_d(struct ts_model *m)
{
	ts_model_init(m);
	m->hidden = 1024;
	m->layers = 2;
	m->heads = 16;
	m->vocab = 32000;
	m->gated_mlp = 0;
	m->gated_mlp_set = 1;
}

static void shape(struct ts_flops_shape *sh, int64_t seq, int64_t gbs, int64_t tp)
{
	ts_flops_shape_init(sh);
	sh->seq = seq;
	sh->gbs = gbs;
	sh->tp = tp;
}

/*
 * Model A, s=2048, B=4: T = 8192, S2 = 4·2048² = 16,777,216.
 *  attn_proj = T·6·L·[h(q+2k) + q·h] = 8192·6·2·(1024·1536 + 1024·1024)
 *            = 8192·6·2·2,621,440 = 257,698,037,760
 *  core_attn = S2·6q·L = 16,777,216·6144·2 = 206,158,430,208
 *  dense_mlp = T·6·h·3·f·L = 8192·6·1024·3·2816·2 = 850,403,524,608
 *  logits    = T·6·h·V = 8192·6·1024·32000 = 1,610,612,736,000
 *  total     = 2,924,872,728,576; per token = total / 8192 = 357,040,128
 */
TEST(flops_dense_gqa_terms)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_a(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 2048, 4, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.tokens, 8192, 0);
	CHECK_I64(f.padded_vocab, 32000);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 257698037760.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 206158430208.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_DENSE_MLP], 850403524608.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_LOGITS], 1610612736000.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_ROUTED] + f.term[TS_FT_SHARED] + f.term[TS_FT_MTP], 0, 0);
	CHECK_NEAR(f.per_step, 2924872728576.0, 0.5);
	CHECK_NEAR(f.per_token, 357040128.0, 1e-3);
}

/* Attention output gate adds a q-wide gate to the QKV GEMM: model A's
 * attn_proj becomes T·6·L·[h(q+2k+q) + q·h] = 8192·12·(1024·2560 + 1024²)
 * = 8192·12·3,670,016 = 360,777,252,864. */
TEST(flops_attention_output_gate)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_a(&m);
	m.attn_output_gate = 1;
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 2048, 4, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 360777252864.0, 0.5);
}

/*
 * Model B, s=1024, B=2, TP=2: T = 2048, S2 = 2·1024² = 2,097,152.
 * Vocab: multiple 128·2 = 256, ceil(1000/256) = 4 -> V = 1024.
 * Per layer per token: att = 6·(512·(512+1024) + 512·512) = 6,291,456.
 *  attn_proj = 2048·6,291,456·4 = 51,539,607,552
 *  core_attn = S2·6q·L = 2,097,152·3072·4 = 25,769,803,776
 *  dense_mlp = T·6·h·3·f·N_dense = 2048·6·512·3·1536·1 = 28,991,029,248
 *  routed    = T·6·h·3·K·f_e·N_moe = 2048·6·512·3·2·256·3 = 28,991,029,248
 *  shared    = T·6·h·3·f_s·N_moe = 2048·6·512·3·512·3 = 28,991,029,248
 *  logits    = T·6·h·V = 2048·6·512·1024 = 6,442,450,944
 *  mtp (D=1, last layer MoE): per token att 6,291,456 + routed 4,718,592
 *    + shared 4,718,592 + glue 6·(3·512 + 2·512²) = 3,154,944
 *    + head 6·512·1024 = 3,145,728 -> 22,029,312 · 2048 = 45,116,030,976,
 *    plus core S2·3072 = 6,442,450,944 -> 51,558,481,920
 */
TEST(flops_moe_shared_dense_first_mtp_terms)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_b(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.moe_layers, 3);
	shape(&sh, 1024, 2, 2);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_I64(f.padded_vocab, 1024);
	CHECK_I64(f.mtp, 1);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 51539607552.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 25769803776.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_DENSE_MLP], 28991029248.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_ROUTED], 28991029248.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_SHARED], 28991029248.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_ROUTER], 0, 0);
	CHECK_NEAR(f.term[TS_FT_LOGITS], 6442450944.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_MTP], 51558481920.0, 0.5);
	/* --mtp 0 removes the whole MTP term */
	sh.mtp = 0;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.term[TS_FT_MTP], 0, 0);
}

/*
 * Model C (MLA), s=512, B=1: T = 512, S2 = 262,144.
 *  Q  = r_q·(h + n(d_qk+d_r) + 1) = 256·(1024 + 768 + 1) = 459,008
 *  KV = r_kv·(h + n(d_qk+d_v) + 1) = 128·(1024 + 1024 + 1) = 262,272
 *  rope k = h·d_r = 32,768; out = n·d_v·h = 524,288
 *  attn_proj = 6·(459,008 + 262,272 + 32,768 + 524,288)·T = 6·1,278,336·512
 *            = 3,927,048,192
 *  core_attn = S2·3n(d_qk+d_r+d_v) = 262,144·3·8·160 = 1,006,632,960
 *  selective mla_up_proj: 2·T·[n(d_qk+d_r)·r_q + n(d_qk+d_v)·r_kv]
 *            = 1024·(768·256 + 1024·128) = 335,544,320
 */
TEST(flops_mla_terms)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_c(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 512, 1, 1);
	sh.recompute = TS_RC_SELECTIVE;
	sh.recompute_modules = TS_RCM_MLA_UP_PROJ;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 3927048192.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 1006632960.0, 0.5);
	CHECK_NEAR(f.recompute, 335544320.0, 0.5);
}

/*
 * Model D, s=2048, B=1 against the published closed forms:
 *  current: 72·B·s·L·h²·(1 + s/(12h) + V/(12Lh))
 *         = 309,237,645,312·(1 + 1/6 + 32000/24576) = 763,430,436,864
 *  2023:    60·B·s·L·h²·(1 + g/(5n) + s/(5h) + V/(10Lh))
 *         = 257,698,037,760·(1 + 0.2 + 0.4 + 1.5625) = 814,970,044,416
 *  2024 (non-causal): 12·B·s·L·h²·[(1 + g/n + s/h)·q/h + f/h + V/(2Lh)]
 *         = 51,539,607,552·(4 + 4 + 7.8125) = 814,970,044,416
 *  The gap 2024 - current = 6·q·s·L·T = 6·1024·2048·2·2048 = 51,539,607,552.
 */
TEST(flops_closed_forms_by_version)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_d(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 2048, 1, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 763430436864.0, 0.5);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MLM2023, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 814970044416.0, 0.5);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MLM2024, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 814970044416.0, 0.5);
}

/*
 * Model B (s=1024, B=2, TP=2, V=1024) under the older variants:
 *  2024: 12·B·s·L·h²·[(1 + g/n + s/h)·q/h + (f/h)·K·γ' + (f_s/h)·γ' + V/(2Lh)]
 *      = 25,769,803,776·[(1+1+2) + 3·2·1.5 + 1·1.5 + 1024/4096]
 *      = 25,769,803,776·14.75 = 380,104,605,696 (every layer MoE with f=1536)
 *  MT-MegatronLM non-MLA: same with f_e = 256: [4 + 0.5·2·1.5 + 1.5 + 0.25]
 *      = 25,769,803,776·7.25 = 186,831,077,376 (no MTP)
 */
TEST(flops_2024_and_mt_moe)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_b(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 1024, 2, 2);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MLM2024, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 380104605696.0, 0.5);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MT, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 186831077376.0, 0.5);
	CHECK_NEAR(f.term[TS_FT_MTP], 0, 0);
}

/*
 * Model C under MT-MegatronLM's MLA path, s=512, B=1, L=1, no experts:
 *  6·B·s·L·[h·r_q + r_q·n(d_qk+d_r) + h(r_kv+d_r) + n·r_kv(d_qk+d_v)
 *           + n·s(d_qk+d_r) + n·s·d_v + n·d_v·h + h·E + 2h·f·γ' + V·h/L]
 *  = 3072·[262,144 + 196,608 + 163,840 + 131,072 + 393,216 + 262,144
 *          + 524,288 + 0 + 6,291,456 + 1,048,576] = 3072·9,273,344
 *  = 28,487,712,768
 */
TEST(flops_mt_mla)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_c(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 512, 1, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MT, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 28487712768.0, 0.5);
}

/*
 * HFU closed form (reference §1.4): full recompute of every layer turns
 * the transformer part's 3x into 4x:
 *  F + F_rc = 96·B·s·L·h²·(1 + s/(12h) + V/(16Lh))   (causal era)
 * Model D, s=2048, B=1: 412,316,860,416·(1 + 1/6 + 32000/32768)
 *  = 412,316,860,416 + 68,719,476,736 + 402,653,184,000 = 883,689,521,152.
 * Selective core_attn: S2·6q·L/3 = 2048²·6144·2/3 = 17,179,869,184.
 */
TEST(flops_hfu_full_recompute_closed_form)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_d(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 2048, 1, 1);
	sh.recompute = TS_RC_FULL;
	sh.recompute_method = TS_RC_UNIFORM;
	sh.recompute_layers = 1;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_I64(f.recomputed_layers, 2);
	CHECK_REL(f.per_step + f.recompute, 883689521152.0, 1e-12);
	sh.recompute = TS_RC_SELECTIVE;
	sh.recompute_modules = TS_RCM_CORE_ATTN;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 17179869184.0, 0.5);
	/* element-wise modules re-run no GEMMs */
	sh.recompute_modules = TS_RCM_LAYERNORM | TS_RCM_MOE_ACT;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 0, 0);
}

/*
 * Model B, block recompute of 1 layer per chunk with PP=2 (chunks of 2
 * layers): layers 0 (dense) and 2 (MoE) are recomputed.
 *  F_rc = 1/3·[2·(T·att + S2·6q) + T·dense + T·(routed+shared)]
 *       = 1/3·[2·(2048·6,291,456 + 6,442,450,944) + 2048·14,155,776
 *              + 2048·9,437,184]
 *       = 1/3·[38,654,705,664 + 28,991,029,248 + 19,327,352,832]
 *       = 28,991,029,248
 * Selective: moe = 2·T·γ·h·(K·f_e + f_s)·N_moe = 2·2048·3·512·1024·3
 *  = 19,327,352,832; shared_experts alone = 2·2048·3·512·512·3
 *  = 9,663,676,416; mlp = 2·T·γ·h·f·N_dense = 2·2048·3·512·1536
 *  = 9,663,676,416.
 */
TEST(flops_recompute_block_and_modules)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_b(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 1024, 2, 2);
	sh.pp = 2;
	sh.recompute = TS_RC_FULL;
	sh.recompute_method = TS_RC_BLOCK;
	sh.recompute_layers = 1;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_I64(f.recomputed_layers, 2);
	CHECK_NEAR(f.recompute, 28991029248.0, 0.5);
	sh.recompute = TS_RC_SELECTIVE;
	sh.recompute_modules = TS_RCM_MOE;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 19327352832.0, 0.5);
	sh.recompute_modules = TS_RCM_MOE | TS_RCM_SHARED_EXPERTS; /* shared not twice */
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 19327352832.0, 0.5);
	sh.recompute_modules = TS_RCM_SHARED_EXPERTS;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 9663676416.0, 0.5);
	sh.recompute_modules = TS_RCM_MLP;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.recompute, 9663676416.0, 0.5);
	/* 4 layers do not split into PP=3 chunks */
	sh.recompute = TS_RC_FULL;
	sh.pp = 3;
	CHECK_I64(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err), TS_EUSAGE);
}

/*
 * Packed sequences, model A, lengths 2048, 1024, 1024 (one as a histogram
 * line): T = 4096, S2 = 2048² + 2·1024² = 6,291,456.
 *  F = T·(31,457,280 + 103,809,024 + 196,608,000) + S2·6144·2
 *    = 4096·331,874,304 + 6,291,456·12,288 = 1,436,666,560,512
 * (per-token linear terms of model A from flops_dense_gqa_terms / 8192).
 */
TEST(flops_packed_sequences)
{
	static const char lens[] = "# one step\n2048\n1024 2\n\n";
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_seqlens sl;
	struct ts_err err;

	REQUIRE(ts_seqlens_parse(&sl, lens, sizeof(lens) - 1, "lens.txt", &err) == 0);
	CHECK_NEAR(sl.tokens, 4096, 0);
	CHECK_NEAR(sl.square, 6291456, 0);
	CHECK_I64(sl.count, 3);
	model_a(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 2048, 4, 1);
	sh.packed = &sl;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_CURRENT, &f, &err) == 0);
	CHECK_NEAR(f.per_step, 1436666560512.0, 0.5);
	/* the 2024 formula ignored packing: B·s tokens */
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_MLM2024, &f, &err) == 0);
	CHECK(f.packed_ignored);
	CHECK_NEAR(f.tokens, 8192, 0);
	ts_err_init(&err);
	CHECK_I64(ts_seqlens_parse(&sl, "12\nx\n", 5, "bad.txt", &err), TS_EPARSE);
	CHECK_I64(err.line, 2);
	CHECK_I64(err.offset, 3);
}

/*
 * MFU arithmetic with the Megatron-LM README example: 465.9 TFLOP/s/GPU
 * against H100 BF16 989 TF is 47 %. Here F = 465.9e12 · 1 s · 8 GPUs,
 * step 1 s, 8 GPUs -> 465.9 TF/GPU; MFU = 465.9 / 989 = 0.4711.
 */
TEST(flops_mfu_arithmetic)
{
	struct ts_flops f;
	struct ts_mfu r;

	memset(&f, 0, sizeof(f));
	f.per_step = 465.9e12 * 8;
	f.tokens = 8 * 4096;
	ts_mfu_compute(&f, 1000000000, 8, 989.0, &r);
	CHECK_NEAR(r.tflops_per_gpu, 465.9, 1e-9);
	CHECK_NEAR(r.mfu, 0.4711, 1e-4);
	CHECK_NEAR(r.tokens_per_s_per_gpu, 4096, 1e-9);
	ts_mfu_compute(&f, 1000000000, 8, 0, &r);
	CHECK(isnan(r.mfu));
}

/* ---- the published cases in expected/flops-cases.csv ---- */

struct csv_model {
	char id[8];
	int64_t L, h, ffn, moe_ffn, shared_ffn, heads, groups, kv_ch, vocab, vocab_div, experts, topk;
	char pattern[64];
	int swiglu;
	int64_t mla[5];
	int64_t mtp;
};

/* Split a CSV line in place (no quoting in this file). */
static int split(char *line, char **f, int max)
{
	int n = 0;
	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == ',') {
			*p = '\0';
			f[n++] = p + 1;
		}
	return n;
}

static int64_t num(const char *s)
{
	return s && *s ? strtoll(s, NULL, 10) : 0;
}

/* "dense", "all", "[0]*3+[1]*58" */
static int apply_pattern(struct ts_model *m, const char *p)
{
	if (strcmp(p, "dense") == 0 || strcmp(p, "all") == 0)
		return 0;
	m->freq_list_len = 0;
	while (*p == '[') {
		char *end;
		long v = strtol(p + 1, &end, 10);
		if (strncmp(end, "]*", 2) != 0)
			return -1;
		long cnt = strtol(end + 2, &end, 10);
		for (long i = 0; i < cnt && m->freq_list_len < TS_MODEL_MAX_LAYERS; i++)
			m->freq_list[m->freq_list_len++] = (unsigned char)v;
		p = *end == '+' ? end + 1 : end;
	}
	return *p ? -1 : 0;
}

static void csv_to_model(const struct csv_model *c, struct ts_model *m)
{
	ts_model_init(m);
	m->layers = c->L;
	m->hidden = c->h;
	m->ffn_hidden = c->ffn;
	m->moe_ffn_hidden = c->moe_ffn;
	m->shared_ffn_hidden = c->shared_ffn;
	m->heads = c->heads;
	m->kv_heads = c->groups;
	m->head_dim = c->kv_ch;
	m->vocab = c->vocab;
	m->num_experts = c->experts;
	m->topk = c->topk;
	m->gated_mlp = c->swiglu;
	m->gated_mlp_set = 1;
	m->mtp_layers = c->mtp;
	if (c->mla[1]) {
		m->mla = 1;
		m->q_lora_rank = c->mla[0];
		m->kv_lora_rank = c->mla[1];
		m->qk_head_dim = c->mla[2];
		m->qk_rope_dim = c->mla[3];
		m->v_head_dim = c->mla[4];
	}
	apply_pattern(m, c->pattern);
}

/* The config file in data/models whose layers and hidden size match. */
static const char *const configs[] = {
	"models/qwen3-8b.json", "models/qwen3-30b-a3b.json", "models/deepseek-v3.json",
	"models/llama3-8b.json", "models/mixtral-8x7b.json",
};

TEST(flops_published_cases_csv)
{
	DATA_OR_SKIP(path, "expected/flops-cases.csv");
	FILE *fp = fopen(path, "r");
	struct csv_model models[16];
	int nmodels = 0, ncases = 0;
	char line[1024];
	char cases[16][1024];

	REQUIRE(fp != NULL);
	while (fgets(line, sizeof(line), fp)) {
		char *f[32];
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, "# M", 3) == 0 && nmodels < 16) {
			int n = split(line + 2, f, 32);
			struct csv_model *c = &models[nmodels++];
			REQUIRE(n == 17);
			snprintf(c->id, sizeof(c->id), "%s", f[0]);
			c->L = num(f[1]); c->h = num(f[2]); c->ffn = num(f[3]);
			c->moe_ffn = num(f[4]); c->shared_ffn = num(f[5]); c->heads = num(f[6]);
			c->groups = num(f[7]); c->kv_ch = num(f[8]); c->vocab = num(f[9]);
			c->vocab_div = num(f[10]); c->experts = num(f[11]); c->topk = num(f[12]);
			snprintf(c->pattern, sizeof(c->pattern), "%s", f[13]);
			c->swiglu = (int)num(f[14]);
			memset(c->mla, 0, sizeof(c->mla));
			if (*f[15]) {
				char *p = f[15];
				for (int k = 0; k < 5; k++) {
					c->mla[k] = strtoll(p, &p, 10);
					if (*p == '/')
						p++;
				}
			}
			c->mtp = num(f[16]);
		} else if (line[0] != '#' && strncmp(line, "id,", 3) != 0 && line[0] && ncases < 16) {
			snprintf(cases[ncases++], sizeof(cases[0]), "%s", line);
		}
	}
	fclose(fp);
	REQUIRE(ncases >= 3 && nmodels >= 3);

	for (int i = 0; i < ncases; i++) {
		char *f[32];
		int n = split(cases[i], f, 32);
		const struct csv_model *c = NULL;
		struct ts_model m, cfg;
		struct ts_flops_shape sh;
		struct ts_flops fl, flc;
		struct ts_mfu r;
		struct ts_err err;
		int matched = 0;

		REQUIRE(n >= 20);
		for (int k = 0; k < nmodels; k++)
			if (strcmp(models[k].id, f[1]) == 0)
				c = &models[k];
		REQUIRE(c != NULL);
		CHECK_STR(f[19], "mlm2026");
		csv_to_model(c, &m);
		REQUIRE(ts_model_finish(&m, &err) == 0);
		ts_flops_shape_init(&sh);
		sh.seq = num(f[12]);
		sh.gbs = num(f[11]);
		sh.tp = num(f[5]);
		sh.vocab_divisor = c->vocab_div;
		REQUIRE(ts_flops_compute(&m, &sh, ts_formula_parse(f[19]), &fl, &err) == 0);
		CHECK_REL(fl.per_token / 1e9, strtod(f[17], NULL), 1e-3);
		ts_mfu_compute(&fl, (int64_t)(strtod(f[13], NULL) * 1e9 + 0.5), num(f[2]), 0, &r);
		CHECK_REL(r.tflops_per_gpu, strtod(f[15], NULL), 5e-3);
		CHECK_REL(r.tokens_per_s_per_gpu, strtod(f[16], NULL), 5e-3);

		/* the same model read from its Hugging Face config gives the same FLOPs */
		for (size_t k = 0; k < sizeof(configs) / sizeof(configs[0]); k++) {
			const char *cp = test_data(configs[k]);
			if (!cp)
				return;
			ts_model_init(&cfg);
			REQUIRE(ts_model_read_config(&cfg, cp, &err) == 0);
			REQUIRE(ts_model_finish(&cfg, &err) == 0);
			if (cfg.layers != c->L || cfg.hidden != c->h)
				continue;
			matched = 1;
			REQUIRE(ts_flops_compute(&cfg, &sh, TS_FORMULA_CURRENT, &flc, &err) == 0);
			CHECK_REL(flc.per_token / 1e9, strtod(f[17], NULL), 1e-3);
		}
		CHECK(matched);
	}
}

/* 1e15 model FLOPs in 1 s on one GPU is 1000 TFLOP/s: exactly the peak of a
 * 1000 TFLOP/s part is MFU 100 % (allowed), above a 989.4 TFLOP/s part it is
 * 101.1 %, an input error (the step time's unit, mostly). */
/*
 * torchtitan's count for a Llama-3-8B shape (h=4096, L=32, n=32, g=8,
 * d=128: q=4096, k=1024; f=14336 gated; vocab 128256, untied), s=8192, B=8
 * (T = 65,536). Parameters a token passes through, the embedding
 * (128256·4096 = 525,336,576) excluded:
 *  per layer: wq 4096·4096 = 16,777,216; wk, wv 4096·1024 = 4,194,304 each;
 *             wo 16,777,216; w1, w2, w3 3·4096·14336 = 176,160,768;
 *             attention and ffn norms 2·4096 = 8,192: 218,112,000
 *  32 layers 6,979,584,000; final norm 4,096; output head 128256·4096 =
 *  525,336,576: N = 7,504,924,672 (+ the embedding: 8,030,261,248, the
 *  published 8.03 B)
 *  6N = 45,029,548,032; 12·L·n·d·s = 12·32·32·128·8192 = 12,884,901,888
 *  per token 57,914,449,920; per step ×65,536 = 3,795,481,389,957,120
 */
TEST(flops_titan_llama3_8b)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	ts_model_init(&m);
	m.hidden = 4096;
	m.layers = 32;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn_hidden = 14336;
	m.vocab = 128256;
	m.gated_mlp = m.gated_mlp_set = 1;
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 8192, 8, 1);
	CHECK(ts_formula_parse("torchtitan") == TS_FORMULA_TITAN);
	CHECK(ts_formula_parse("titan") == TS_FORMULA_TITAN);
	CHECK_STR(ts_formula_name(TS_FORMULA_TITAN), "torchtitan");
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_I64(f.padded_vocab, 128256);
	CHECK_NEAR(f.per_token, 57914449920.0, 1e-3);
	CHECK_NEAR(f.per_step, 3795481389957120.0, 1.0);
	/* attn_proj: 6·T·32·(41,943,040 + 8,192); core_attn 12,884,901,888·T */
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 6.0 * 65536 * 32 * 41951232, 1.0);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 12884901888.0 * 65536, 1.0);
	CHECK_NEAR(f.term[TS_FT_LOGITS], 6.0 * 65536 * (525336576 + 4096), 1.0);
	/* the older versions agree on an untied model with d = h / n
	 * (4096 / 32 = 128): 6N the same, 6·L·n·(2d)·s = 12·L·n·(h/n)·s */
	CHECK(ts_formula_parse("torchtitan-headdims") == TS_FORMULA_TITAN_HEADDIMS);
	CHECK(ts_formula_parse("torchtitan-dim") == TS_FORMULA_TITAN_DIM);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_HEADDIMS, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 57914449920.0, 1e-3);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_DIM, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 57914449920.0, 1e-3);
	/* tying the head to the embedding counts the shared matrix once, as
	 * the head: the same number */
	m.tied_embeddings = 1;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 57914449920.0, 1e-3);
}

/*
 * torchtitan's count for Qwen3-0.6B (h=1024, L=28, n=16, g=8, d=128, so
 * q=2048, k=1024 and d != h/n = 64; f=3072 gated; vocab 151936, head tied
 * to the embedding; q/k RMSNorm weights of d each), s=4096, B=8
 * (T = 32,768).
 *  per layer: wq 1024·2048 = 2,097,152; wk, wv 1024·1024 = 1,048,576
 *             each; wo 2048·1024 = 2,097,152; q_norm + k_norm 2·128 = 256;
 *             attention and ffn norms 2·1024 = 2,048: attention 6,293,760;
 *             w1, w2, w3 3·1024·3072 = 9,437,184: 15,730,944
 *  28 layers 440,466,432 (the published 0.44 B non-embedding); final norm
 *  1,024; the tied matrix 151936·1024 = 155,582,464
 *  current (get_nparams_and_active_nparams): the tied matrix counted once
 *    as the head: N = 596,049,920 (the published 0.6 B), 6N =
 *    3,576,299,520; attention 6·n·(d + d)·s = 6·16·256·4096 = 100,663,296
 *    per layer, ·28 = 2,818,572,288: per token 6,394,871,808
 *  headdims (older): nparams - embedding drops the tied matrix: N =
 *    440,467,456, 6N = 2,642,804,736; the same attention: 5,461,377,024
 *  dim (oldest): d = 1024 / 16 = 64: 12·28·16·64·4096 = 1,409,286,144:
 *    4,052,090,880
 */
static void qwen3_0_6b(struct ts_model *m)
{
	ts_model_init(m);
	memcpy(m->family, "qwen3", 6);
	m->hidden = 1024;
	m->layers = 28;
	m->heads = 16;
	m->kv_heads = 8;
	m->head_dim = 128;
	m->ffn_hidden = 3072;
	m->vocab = 151936;
	m->tied_embeddings = 1;
	m->gated_mlp = m->gated_mlp_set = 1;
}

TEST(flops_titan_qwen3_0_6b)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	qwen3_0_6b(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK(m.qk_norm);
	shape(&sh, 4096, 8, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 6394871808.0, 1e-3);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 6.0 * 32768 * 28 * 6293760, 1.0);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 2818572288.0 * 32768, 1.0);
	CHECK_NEAR(f.term[TS_FT_LOGITS], 6.0 * 32768 * (155582464 + 1024), 1.0);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_HEADDIMS, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 5461377024.0, 1e-3);
	CHECK_NEAR(f.term[TS_FT_LOGITS], 6.0 * 32768 * 1024, 1.0);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_DIM, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 4052090880.0, 1e-3);
	/* MTP is not a Qwen3 thing, and torchtitan builds none unless asked */
	CHECK_I64(f.mtp, 0);
}

/*
 * torchtitan's count for its DeepSeek-V3 16B flavour (the DeepSeek-V2-Lite
 * shape): h=2048, L=27 (layer 0 dense, 26 MoE), n=16, MLA without q
 * compression, r_kv=512, d_qk=128 (nope), d_r=64, d_v=128; dense f=10944,
 * f_e=1408, E=64, K=6, 2 shared experts (f_s = 2816), gated; vocab 102400
 * untied; s=4096, B=8 (T = 32,768).
 *  attention per layer: wq 2048·16·(128+64) = 6,291,456; wkv_a
 *    2048·(512+64) = 1,179,648; kv_norm 512; wkv_b 512·16·(128+128) =
 *    2,097,152; wo 16·128·2048 = 4,194,304; attention and ffn norms 4,096:
 *    13,767,168
 *  dense MLP 3·2048·10944 = 67,239,936
 *  MoE layer: router 2048·64 = 131,072; shared 3·2048·2816 = 17,301,504;
 *    routed 64·3·2048·1408 = 553,648,128 at 6/64 = 51,904,512: 69,337,088
 *  N = 27·13,767,168 (371,713,536) + 67,239,936 + 26·69,337,088
 *    (1,802,764,288) + final norm 2,048 + head 102400·2048 (209,715,200)
 *    = 2,451,435,008 (all parameters with the embedding and every
 *    expert: 15,706,484,224, the published 15.7 B)
 *  attention 6·n·((d_qk + d_r) + d_v)·s = 6·16·320·4096 = 125,829,120 per
 *    layer, ·27 = 3,397,386,240
 *  per token 6N + 3,397,386,240 = 14,708,610,048 + 3,397,386,240 =
 *    18,105,996,288 (headdims: the same; dim: d = 2048/16 = 128,
 *    12·27·16·128·4096 = 2,717,908,992: 17,426,519,040)
 *  with one MTP layer the job builds (--mtp 1): a MoE layer (the last
 *    layer's type) 13,767,168 + 69,337,088, enorm + hnorm + mtp_norm
 *    3·2048, eh_proj 2·2048·2048 = 8,388,608, the head once more
 *    209,715,200: 301,214,208 parameters, 6· = 1,807,285,248, + its
 *    attention 125,829,120: 20,039,110,656
 */
TEST(flops_titan_deepseek_16b)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	ts_model_init(&m);
	memcpy(m.family, "deepseek_v3", 12);
	m.hidden = 2048;
	m.layers = 27;
	m.heads = 16;
	m.ffn_hidden = 10944;
	m.vocab = 102400;
	m.gated_mlp = m.gated_mlp_set = 1;
	m.num_experts = 64;
	m.topk = 6;
	m.moe_ffn_hidden = 1408;
	m.shared_experts = 2;
	m.first_k_dense = 1;
	m.mla = 1;
	m.kv_lora_rank = 512;
	m.qk_head_dim = 128;
	m.qk_rope_dim = 64;
	m.v_head_dim = 128;
	m.mtp_layers = 1; /* the config's: torchtitan builds MTP only when asked */
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.moe_layers, 26);
	shape(&sh, 4096, 8, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 18105996288.0, 1e-3);
	CHECK_NEAR(f.term[TS_FT_ATTN_PROJ], 6.0 * 32768 * 27 * 13767168, 1.0);
	CHECK_NEAR(f.term[TS_FT_CORE_ATTN], 3397386240.0 * 32768, 1.0);
	CHECK_NEAR(f.term[TS_FT_ROUTED], 6.0 * 32768 * 26 * 51904512, 1.0);
	CHECK_I64(f.mtp, 0);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_HEADDIMS, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 18105996288.0, 1e-3);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_DIM, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 17426519040.0, 1e-3);
	sh.mtp = 1;
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_I64(f.mtp, 1);
	CHECK_NEAR(f.per_token, 20039110656.0, 1e-3);
	CHECK_NEAR(f.term[TS_FT_MTP], (1807285248.0 + 125829120.0) * 32768, 1.0);
	/* the older versions had no MTP */
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN_HEADDIMS, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 18105996288.0, 1e-3);
}

/*
 * torchtitan on model B (MoE, every parameter counted once, routed experts
 * at K/E = 2/8), s=1024, B=2: T = 2048. h=512, q=k=512, L=4 (layer 0
 * dense, 3 MoE), f=1536, f_e=256, f_s=512, E=8, vocab 1000; MTP not counted.
 *  attention per layer: 512·1536 + 512·512 + 2·512 = 1,049,600
 *  dense MLP: 3·512·1536 = 2,359,296
 *  MoE layer: router 512·8 = 4,096; shared 3·512·512 = 786,432; routed
 *             8 experts · 3·512·256 = 3,145,728 at 2/8 = 786,432: 1,576,960
 *  head 512·1000 + final norm 512 = 512,512
 *  N = 4·1,049,600 + 2,359,296 + 3·1,576,960 + 512,512 = 11,801,088
 *  6N = 70,806,528; 12·L·n·d·s = 12·4·4·128·1024 = 25,165,824
 *  per token 95,972,352
 */
TEST(flops_titan_moe_active_params)
{
	struct ts_model m;
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	model_b(&m);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	shape(&sh, 1024, 2, 1);
	REQUIRE(ts_flops_compute(&m, &sh, TS_FORMULA_TITAN, &f, &err) == 0);
	CHECK_NEAR(f.per_token, 95972352.0, 1e-3);
	CHECK_NEAR(f.term[TS_FT_ROUTER], 6.0 * 2048 * 3 * 4096, 0.5);
	CHECK_NEAR(f.term[TS_FT_ROUTED], 6.0 * 2048 * 3 * 786432, 0.5);
	CHECK_NEAR(f.term[TS_FT_MTP], 0, 0);
	CHECK_I64(f.mtp, 0);
}

TEST(mfu_above_peak_is_an_input_error)
{
	struct ts_flops f;
	struct ts_mfu m;
	struct ts_err err;

	memset(&f, 0, sizeof(f));
	f.per_step = 1e15;
	ts_err_init(&err);
	ts_mfu_compute(&f, 1000000000, 1, 1000.0, &m);
	CHECK_NEAR(m.mfu, 1.0, 1e-12);
	CHECK_I64(ts_mfu_check(&m, &err), 0);
	ts_mfu_compute(&f, 1000000000, 1, 989.4, &m);
	CHECK_I64(ts_mfu_check(&m, &err), TS_EUSAGE);
	CHECK(strstr(err.msg, "check --step-time units") != NULL);
	f.recompute = 0.5e15; /* HFU 150 % of a 1000 TFLOP/s part, MFU 100 % */
	ts_mfu_compute(&f, 1000000000, 1, 1000.0, &m);
	CHECK_I64(ts_mfu_check(&m, &err), TS_EUSAGE);
}
