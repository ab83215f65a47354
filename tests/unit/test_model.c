/* Unit tests for the model readers (config.json, Megatron arguments block). */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "trainscope/model.h"

/* The model table at the bottom of expected/flops-cases.csv states the
 * Megatron view of DeepSeek-V3 (M9): L=61, h=7168, ffn=18432, moe_ffn=2048,
 * shared_ffn=2048, 128 heads, vocab 129280, 256 experts, top-8,
 * pattern [0]*3+[1]*58, MLA 1536/512/128/64/128, MTP 1. */
TEST(model_hf_deepseek_v3)
{
	DATA_OR_SKIP(path, "models/deepseek-v3.json");
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_STR(m.family, "deepseek_v3");
	CHECK_I64(m.layers, 61);
	CHECK_I64(m.hidden, 7168);
	CHECK_I64(m.ffn_hidden, 18432);
	CHECK_I64(m.moe_ffn_hidden, 2048);
	CHECK_I64(m.shared_ffn_hidden, 2048);
	CHECK_I64(m.heads, 128);
	CHECK_I64(m.kv_heads, 128);
	CHECK_I64(m.vocab, 129280);
	CHECK_I64(m.num_experts, 256);
	CHECK_I64(m.topk, 8);
	CHECK_I64(m.moe_layers, 58);
	CHECK(!m.moe_layer[0] && !m.moe_layer[2] && m.moe_layer[3] && m.moe_layer[60]);
	CHECK(m.mla);
	CHECK_I64(m.q_lora_rank, 1536);
	CHECK_I64(m.kv_lora_rank, 512);
	CHECK_I64(m.qk_head_dim, 128);
	CHECK_I64(m.qk_rope_dim, 64);
	CHECK_I64(m.v_head_dim, 128);
	CHECK_I64(m.mtp_layers, 1);
	CHECK(m.gated_mlp);
	CHECK(!m.tied_embeddings);
}

/* M7 (Qwen3-30B-A3B): L=48, h=2048, 32 heads, 4 groups, kv_ch 128,
 * moe_ffn 768, 128 experts, top-8, every layer MoE. */
/* Group-limited routing (DeepSeek-V3's config.json: n_group 8, topk_group
 * 4) is read; groups that do not divide the experts, or more groups a
 * token than there are, are refused. */
TEST(model_hf_group_limited_routing)
{
	static const char ok[] = "{\"hidden_size\": 1024, \"vocab_size\": 32000, \"num_hidden_layers\": 4, \"num_attention_heads\": 8,"
				 " \"n_routed_experts\": 64, \"num_experts_per_tok\": 8, \"n_group\": 8,"
				 " \"topk_group\": 4}";
	static const char odd[] = "{\"hidden_size\": 1024, \"vocab_size\": 32000, \"num_hidden_layers\": 4, \"num_attention_heads\": 8,"
				  " \"n_routed_experts\": 64, \"num_experts_per_tok\": 8, \"n_group\": 6,"
				  " \"topk_group\": 4}";
	static const char over[] = "{\"hidden_size\": 1024, \"vocab_size\": 32000, \"num_hidden_layers\": 4, \"num_attention_heads\": 8,"
				   " \"n_routed_experts\": 64, \"num_experts_per_tok\": 8, \"n_group\": 4,"
				   " \"topk_group\": 5}";
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_parse_config(&m, ok, sizeof(ok) - 1, "ok.json", &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.expert_groups, 8);
	CHECK_I64(m.group_topk, 4);
	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_parse_config(&m, odd, sizeof(odd) - 1, "odd.json", &err) == 0);
	CHECK_I64(ts_model_finish(&m, &err), TS_EUSAGE);
	CHECK(strstr(err.msg, "n_group") != NULL);
	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_parse_config(&m, over, sizeof(over) - 1, "over.json", &err) == 0);
	CHECK_I64(ts_model_finish(&m, &err), TS_EUSAGE);
}

TEST(model_hf_qwen3_moe)
{
	DATA_OR_SKIP(path, "models/qwen3-30b-a3b.json");
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.layers, 48);
	CHECK_I64(m.kv_heads, 4);
	CHECK_I64(m.head_dim, 128);
	CHECK_I64(m.moe_ffn_hidden, 768);
	CHECK_I64(m.num_experts, 128);
	CHECK_I64(m.moe_layers, 48);
	CHECK_I64(m.shared_ffn_hidden, 0);
}

/* Mixtral: num_local_experts 8, top-2, all 32 layers MoE; moe width
 * defaults to intermediate_size 14336. */
TEST(model_hf_mixtral)
{
	DATA_OR_SKIP(path, "models/mixtral-8x7b.json");
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_read_config(&m, path, &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.num_experts, 8);
	CHECK_I64(m.topk, 2);
	CHECK_I64(m.moe_layers, 32);
	CHECK_I64(m.moe_ffn_hidden, 14336);
	CHECK_I64(m.head_dim, 4096 / 32);
}

/* GPT-2 naming; n_inner null means 4h = 3072; GPT-2 ties embeddings and
 * its gelu MLP is not gated. */
TEST(model_hf_gpt2)
{
	static const char cfg[] =
		"{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12,\n"
		" \"n_inner\": null, \"n_positions\": 1024, \"vocab_size\": 50257,\n"
		" \"activation_function\": \"gelu_new\", \"layer_norm_epsilon\": 1e-05,\n"
		" \"task_specific_params\": {\"text-generation\": {\"max_length\": 50}}}";
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, cfg, sizeof(cfg) - 1, "gpt2.json", &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.hidden, 768);
	CHECK_I64(m.layers, 12);
	CHECK_I64(m.ffn_hidden, 3072);
	CHECK_I64(m.head_dim, 64);
	CHECK_I64(m.max_position, 1024);
	CHECK(m.tied_embeddings);
	CHECK(!m.gated_mlp);
	CHECK_I64(m.norm, TS_NORM_LAYER);
}

/* Qwen2-MoE style: decoder_sparse_step 2 makes layers 1, 3, 5 MoE
 * ((i+1) % 2 == 0), and mlp_only_layers [3] turns layer 3 dense: 2 MoE
 * layers of 6. shared_expert_intermediate_size is the total width. */
TEST(model_hf_sparse_step_and_mlp_only)
{
	static const char cfg[] =
		"{\"model_type\": \"qwen2_moe\", \"hidden_size\": 64, \"num_hidden_layers\": 6,"
		" \"num_attention_heads\": 4, \"vocab_size\": 1000, \"num_experts\": 4,"
		" \"num_experts_per_tok\": 2, \"decoder_sparse_step\": 2, \"mlp_only_layers\": [3],"
		" \"shared_expert_intermediate_size\": 96, \"hidden_act\": \"silu\"}";
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, cfg, sizeof(cfg) - 1, "q.json", &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.moe_layers, 2);
	CHECK(m.moe_layer[1] && !m.moe_layer[3] && m.moe_layer[5] && !m.moe_layer[0]);
	CHECK_I64(m.shared_ffn_hidden, 96);
}

TEST(model_hf_errors_name_position)
{
	static const char wrong_type[] = "{\n  \"hidden_size\": \"4096\"\n}";
	static const char broken[] = "{\"hidden_size\": 4096,,}";
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	ts_err_init(&err);
	CHECK_I64(ts_model_parse_config(&m, wrong_type, sizeof(wrong_type) - 1, "c.json", &err),
		  TS_EPARSE);
	CHECK_STR(err.path, "c.json");
	CHECK_I64(err.offset, 19);
	CHECK_I64(err.line, 2);
	CHECK(strstr(err.msg, "hidden_size") != NULL);
	ts_model_init(&m);
	ts_err_init(&err);
	CHECK_I64(ts_model_parse_config(&m, broken, sizeof(broken) - 1, "b.json", &err), TS_EPARSE);
	CHECK_I64(err.offset, 21);
	/* a config without layers is a usage error naming the flag */
	static const char partial[] = "{\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 9}";
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, partial, sizeof(partial) - 1, "p.json", &err) == 0);
	CHECK_I64(ts_model_finish(&m, &err), TS_EUSAGE);
	CHECK(strstr(err.msg, "--layers") != NULL);
}

/* Vocab padding: Megatron pads to a multiple of divisor x TP.
 * 128256 / (128*1) = 1002 exactly -> 128256; TP 8: multiple 1024,
 * 128256 / 1024 = 125.25 -> 126 * 1024 = 129024. */
TEST(model_vocab_padding)
{
	struct ts_model m;

	ts_model_init(&m);
	m.vocab = 128256;
	CHECK_I64(ts_model_padded_vocab(&m, 128, 1), 128256);
	CHECK_I64(ts_model_padded_vocab(&m, 128, 8), 129024);
	m.vocab = 50257; /* GPT-2: 50257 -> 50304 = 393 * 128 */
	CHECK_I64(ts_model_padded_vocab(&m, 128, 1), 50304);
}

/* An arguments block as Megatron's _print_args writes it (48 - len(name)
 * dots), behind an srun "0: " prefix, with a list-form moe_layer_freq. */
static const char args_log[] =
	"0: using world size: 16, data-parallel size: 16\n"
	"0: ------------------------ arguments ------------------------\n"
	"0:   add_qkv_bias .................................... False\n"
	"0:   ffn_hidden_size ................................. 1024\n"
	"0:   global_batch_size ............................... 256\n"
	"0:   group_query_attention ........................... True\n"
	"0:   hidden_size ..................................... 512\n"
	"0:   kv_channels ..................................... 64\n"
	"0:   make_vocab_size_divisible_by .................... 128\n"
	"0:   moe_ffn_hidden_size ............................. 256\n"
	"0:   moe_layer_freq .................................. [0, 1, 1, 1]\n"
	"0:   moe_router_group_topk ........................... 2\n"
	"0:   moe_router_num_groups ........................... 4\n"
	"0:   moe_router_topk ................................. 2\n"
	"0:   moe_shared_expert_intermediate_size ............. 512\n"
	"0:   mtp_num_layers .................................. None\n"
	"0:   normalization ................................... RMSNorm\n"
	"0:   num_attention_heads ............................. 8\n"
	"0:   num_experts ..................................... 16\n"
	"0:   num_layers ...................................... 4\n"
	"0:   num_query_groups ................................ 2\n"
	"0:   padded_vocab_size ............................... 32000\n"
	"0:   recompute_granularity ........................... selective\n"
	"0:   recompute_modules ............................... ['core_attn', 'moe_act']\n"
	"0:   seq_length ...................................... 4096\n"
	"0:   swiglu .......................................... True\n"
	"0:   tensor_model_parallel_size ...................... 2\n"
	"0:   untie_embeddings_and_output_weights ............. True\n"
	"0:   world_size ...................................... 16\n"
	"0: -------------------- end of arguments ---------------------\n"
	"0:   num_layers ...................................... 99\n";

TEST(model_megatron_args_block)
{
	struct ts_model m;
	struct ts_model_args a;
	struct ts_err err;

	ts_model_init(&m);
	ts_model_args_init(&a);
	REQUIRE(ts_model_parse_megatron_args(&m, &a, args_log, sizeof(args_log) - 1, "run.log",
					     &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_STR(m.family, "megatron");
	CHECK_I64(m.layers, 4); /* the line after the block is not read */
	CHECK_I64(m.hidden, 512);
	CHECK_I64(m.heads, 8);
	CHECK_I64(m.kv_heads, 2);
	CHECK_I64(m.head_dim, 64);
	CHECK_I64(m.padded_vocab, 32000);
	CHECK_I64(m.num_experts, 16);
	CHECK_I64(m.topk, 2);
	CHECK_I64(m.expert_groups, 4); /* group-limited routing */
	CHECK_I64(m.group_topk, 2);
	CHECK_I64(m.moe_layers, 3);
	CHECK(!m.moe_layer[0] && m.moe_layer[1]);
	CHECK_I64(m.shared_ffn_hidden, 512);
	CHECK(m.gated_mlp);
	CHECK(!m.tied_embeddings);
	CHECK_I64(m.norm, TS_NORM_RMS);
	CHECK_I64(a.seq_length, 4096);
	CHECK_I64(a.global_batch, 256);
	CHECK_I64(a.tp, 2);
	CHECK_I64(a.world_size, 16);
	CHECK_I64(a.vocab_divisor, 128);
	CHECK_I64(a.recompute_granularity, TS_RC_SELECTIVE);
	CHECK_I64(a.recompute_modules, TS_RCM_CORE_ATTN | TS_RCM_MOE_ACT);
}

/* group_query_attention False: Megatron still prints num_query_groups
 * (default 1) but attention is MHA, so kv heads = heads; a dense model's
 * block still prints the default moe_router_topk 2, which must not count. */
TEST(model_megatron_args_mha_and_errors)
{
	static const char log[] =
		"------------------------ arguments ------------------------\n"
		"  group_query_attention ........................... False\n"
		"  hidden_size ..................................... 256\n"
		"  moe_router_topk ................................. 2\n"
		"  num_attention_heads ............................. 4\n"
		"  num_experts ..................................... None\n"
		"  num_layers ...................................... 2\n"
		"  num_query_groups ................................ 1\n"
		"  padded_vocab_size ............................... 1024\n"
		"-------------------- end of arguments ---------------------\n";
	static const char badval[] =
		"------------------------ arguments ------------------------\n"
		"  num_layers ...................................... many\n";
	struct ts_model m;
	struct ts_err err;
	size_t cut;

	ts_model_init(&m);
	REQUIRE(ts_model_parse_megatron_args(&m, NULL, log, sizeof(log) - 1, "a.log", &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_I64(m.kv_heads, 4);
	CHECK_I64(m.topk, 0);
	CHECK(!m.gated_mlp);
	ts_model_init(&m);
	ts_err_init(&err);
	CHECK_I64(ts_model_parse_megatron_args(&m, NULL, badval, sizeof(badval) - 1, "b.log", &err),
		  TS_EPARSE);
	CHECK_I64(err.line, 2);
	CHECK_I64(err.offset, 60 + 52);
	CHECK(strstr(err.msg, "num_layers") != NULL);
	ts_model_init(&m);
	ts_err_init(&err);
	CHECK_I64(ts_model_parse_megatron_args(&m, NULL, "iteration 1\n", 12, "c.log", &err),
		  TS_EPARSE);
	CHECK(strstr(err.msg, "arguments") != NULL);
	/* cut inside the block (in the num_layers line): a value before the
	 * cut might be the head of a longer one, so nothing of it is used */
	ts_model_init(&m);
	ts_err_init(&err);
	cut = (size_t)(strstr(log, " 2\n  num_q") + 2 - log);
	CHECK_I64(ts_model_parse_megatron_args(&m, NULL, log, cut, "d.log", &err), TS_ETRUNC);
	CHECK(strstr(err.msg, "end of arguments") != NULL);
}

/* tensor_model_parallel_size 72057594037927936 (2^56, from a log's arguments
 * block) made 128 x TP overflow: TP is taken as 2^20, the multiple is
 * 128 x 2^20 = 2^27, and 50257 pads to 2^27 = 134217728; a divisor of 2^56
 * with TP 1 likewise pads to 2^20 = 1048576. */
TEST(model_vocab_padding_absurd_factors)
{
	struct ts_model m;

	ts_model_init(&m);
	m.vocab = 50257;
	CHECK_I64(ts_model_padded_vocab(&m, 128, INT64_C(72057594037927936)), 134217728);
	CHECK_I64(ts_model_padded_vocab(&m, INT64_C(72057594037927936), 1), 1048576);
}

/* A multimodal Llama 4 config: the language model is read from text_config
 * (before: "hidden size is not stated"); each MoE layer gets the implicit
 * shared expert of intermediate_size, dense layers intermediate_size_mlp,
 * and the moe_layers list [1, 2] wins over interleave_moe_layer_step 2
 * (which alone would make layers 1 and 3 MoE). */
TEST(model_hf_llama4_text_config)
{
	static const char cfg[] =
		"{\"model_type\": \"llama4\", \"vision_config\": {\"hidden_size\": 1408},"
		" \"text_config\": {\"model_type\": \"llama4_text\", \"hidden_size\": 64,"
		" \"intermediate_size\": 32, \"intermediate_size_mlp\": 128, \"num_hidden_layers\": 4,"
		" \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16,"
		" \"num_local_experts\": 4, \"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": 2,"
		" \"moe_layers\": [1, 2], \"attention_chunk_size\": 8192, \"hidden_act\": \"silu\","
		" \"vocab_size\": 100}, \"tie_word_embeddings\": false}";
	struct ts_model m;
	struct ts_model_params p;
	struct ts_err err;

	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_parse_config(&m, cfg, sizeof(cfg) - 1, "l4.json", &err) == 0);
	REQUIRE(ts_model_finish(&m, &err) == 0);
	CHECK_STR(m.family, "llama4_text");
	CHECK_I64(m.hidden, 64);
	CHECK_I64(m.ffn_hidden, 128);
	CHECK_I64(m.moe_ffn_hidden, 32);
	CHECK_I64(m.shared_ffn_hidden, 32);
	CHECK_I64(m.moe_layers, 2);
	CHECK(!m.moe_layer[0] && m.moe_layer[1] && m.moe_layer[2] && !m.moe_layer[3]);
	CHECK(m.vision_encoder);
	CHECK_I64(m.chunked_layers, 3); /* layers 0, 1, 2 of 4; layer 3 global */
	/* by hand: attention 64*(64+2*32) + 64*64 = 12288, norms 128;
	 * dense MLP 3*64*128 = 24576; expert 3*64*32 = 6144, router 64*4 = 256;
	 * MoE layer = 12416 + 4*6144 + 6144 + 256 = 43392, dense = 36992;
	 * embedding and head 2*100*64 = 12800, final norm 64 */
	ts_model_params(&m, m.vocab, &p);
	CHECK_NEAR(p.attn, 12288, 0);
	CHECK_NEAR(p.mlp, 24576, 0);
	CHECK_NEAR(p.shared, 6144, 0);
	CHECK_NEAR(p.experts, 4 * 6144, 0);
	CHECK_NEAR(p.total, 12800 + 64 + 2 * 36992 + 2 * 43392, 0);
	CHECK_NEAR(p.active, 12800 + 64 + 2 * 36992 + 2 * (43392 - 3 * 6144), 0);
}

/* Sliding windows: layer_types counts the sliding layers, Gemma's pattern
 * makes every N-th layer global, use_sliding_window false turns it off, a
 * null window is none. Gemma's MLP is gated whatever its GELU is called. */
TEST(model_hf_sliding_window)
{
	static const char types[] =
		"{\"hidden_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4,"
		" \"vocab_size\": 10, \"sliding_window\": 128, \"layer_types\": [\"sliding_attention\","
		" \"full_attention\", \"sliding_attention\", \"full_attention\"]}";
	static const char gemma[] =
		"{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_hidden_layers\": 12,"
		" \"num_attention_heads\": 4, \"vocab_size\": 10, \"sliding_window\": 512,"
		" \"sliding_window_pattern\": 6, \"hidden_activation\": \"gelu\"}";
	static const char off[] =
		"{\"model_type\": \"qwen2\", \"hidden_size\": 64, \"num_hidden_layers\": 4,"
		" \"num_attention_heads\": 4, \"vocab_size\": 10, \"sliding_window\": 4096,"
		" \"use_sliding_window\": false}";
	static const char none[] =
		"{\"model_type\": \"mistral\", \"hidden_size\": 64, \"num_hidden_layers\": 4,"
		" \"num_attention_heads\": 4, \"vocab_size\": 10, \"sliding_window\": null}";
	struct ts_model m;
	struct ts_err err;

	ts_err_init(&err);
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, types, sizeof(types) - 1, "t.json", &err) == 0);
	CHECK_I64(m.sliding_window, 128);
	CHECK_I64(m.local_layers, 2);
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, gemma, sizeof(gemma) - 1, "g.json", &err) == 0);
	CHECK_I64(m.local_layers, 10);
	CHECK(m.gated_mlp && m.qk_norm);
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, off, sizeof(off) - 1, "q.json", &err) == 0);
	CHECK_I64(m.local_layers, 0);
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, none, sizeof(none) - 1, "m.json", &err) == 0);
	CHECK_I64(m.local_layers, 0);
}

/* A moe_layers list with a layer count beyond TS_MODEL_MAX_LAYERS: the list
 * is not copied past the model's arrays; ts_model_finish refuses the count. */
TEST(model_hf_moe_layers_huge_count)
{
	static const char cfg[] =
		"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"intermediate_size\": 32,"
		" \"num_hidden_layers\": 100000, \"num_attention_heads\": 4, \"num_local_experts\": 4,"
		" \"num_experts_per_tok\": 1, \"moe_layers\": [1], \"vocab_size\": 100}";
	struct ts_model m;
	struct ts_err err;

	ts_model_init(&m);
	ts_err_init(&err);
	REQUIRE(ts_model_parse_config(&m, cfg, sizeof(cfg) - 1, "big.json", &err) == 0);
	CHECK_I64(m.freq_list_len, 0);
	CHECK_I64(ts_model_finish(&m, &err), TS_EUSAGE);
}

/* Llama 4 chunked attention: 3 of every 4 layers by default, every
 * no_rope_layer_interval-th layer global, or the 1s of a no_rope_layers
 * list. */
TEST(model_hf_llama4_chunked_layers)
{
	static const char interval[] =
		"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_hidden_layers\": 12,"
		" \"num_attention_heads\": 4, \"vocab_size\": 10, \"attention_chunk_size\": 8192,"
		" \"no_rope_layer_interval\": 3}";
	static const char list[] =
		"{\"model_type\": \"llama4_text\", \"hidden_size\": 64, \"num_hidden_layers\": 4,"
		" \"num_attention_heads\": 4, \"vocab_size\": 10, \"attention_chunk_size\": 8192,"
		" \"no_rope_layers\": [1, 0, 0, 1]}";
	struct ts_model m;
	struct ts_err err;

	ts_err_init(&err);
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, interval, sizeof(interval) - 1, "i.json", &err) == 0);
	CHECK_I64(m.chunked_layers, 8); /* 12 - 12/3 */
	ts_model_init(&m);
	REQUIRE(ts_model_parse_config(&m, list, sizeof(list) - 1, "l.json", &err) == 0);
	CHECK_I64(m.chunked_layers, 2);
}

/* The config arrays (mlp_only_layers, moe_layers, layer_types,
 * no_rope_layers) share one reader: null reads as absent, a value that is
 * no array and a wrong entry are each refused at that value's byte with the
 * key's own words, an index past the layer cap is a limit error. Offsets
 * are where the marked token stands in the text written here. */
TEST(model_hf_array_values)
{
	static const struct {
		const char *arr;   /* the key and value put into a small config */
		const char *at;    /* the token the error points at; NULL: accepted */
		int code;
		const char *msg;
	} cases[] = {
		{ "\"layer_types\": [\"full_attention\", 3]", "3]", TS_EPARSE,
		  "\"layer_types\": expected an array of strings" },
		{ "\"layer_types\": \"x\"", "\"x\"", TS_EPARSE, "\"layer_types\": expected an array of strings" },
		{ "\"layer_types\": null", NULL, 0, NULL },
		{ "\"layer_types\": []", NULL, 0, NULL },
		{ "\"no_rope_layers\": [1, 2]", "2]", TS_EPARSE, "\"no_rope_layers\": expected an array of 0 and 1" },
		{ "\"no_rope_layers\": 5", "5", TS_EPARSE, "\"no_rope_layers\": expected an array of 0 and 1" },
		{ "\"no_rope_layers\": null", NULL, 0, NULL },
		{ "\"mlp_only_layers\": \"x\"", "\"x\"", TS_EPARSE,
		  "\"mlp_only_layers\": expected an array of layer indices" },
		{ "\"mlp_only_layers\": [-1]", "-1]", TS_EPARSE,
		  "\"mlp_only_layers\": expected a non-negative layer index" },
		{ "\"mlp_only_layers\": [1, {}]", "{}", TS_EPARSE,
		  "\"mlp_only_layers\": expected a non-negative layer index" },
		{ "\"moe_layers\": [70000]", "70000", TS_ELIMIT, "moe_layers index 70000 exceeds the 1024-layer limit" },
		{ "\"mlp_only_layers\": null", NULL, 0, NULL },
	};
	char cfg[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ts_model m;
		struct ts_err err;
		int n = snprintf(cfg, sizeof(cfg),
				 "{\"hidden_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4,"
				 " \"vocab_size\": 10, %s}", cases[i].arr);
		int rc;

		REQUIRE(n > 0 && (size_t)n < sizeof(cfg));
		ts_model_init(&m);
		ts_err_init(&err);
		rc = ts_model_parse_config(&m, cfg, (size_t)n, "a.json", &err);
		if (!cases[i].at) {
			CHECK_I64(rc, 0);
			continue;
		}
		CHECK_I64(rc, cases[i].code);
		CHECK_STR(err.msg, cases[i].msg);
		/* the last occurrence: the key's value comes after the fixed fields */
		const char *at = NULL;
		for (const char *p = strstr(cfg, cases[i].arr); p && (p = strstr(p, cases[i].at)); p++)
			at = p;
		REQUIRE(at);
		CHECK_I64(err.offset, at - cfg);
	}
}
