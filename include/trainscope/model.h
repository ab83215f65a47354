/*
 * model.h - the transformer architecture a training job computes, read from
 * a Hugging Face config.json or from the arguments block a Megatron-LM log
 * prints at start-up.
 *
 * One struct ts_model describes every family the FLOPs and memory formulas
 * need: dense GPT/Llama, GQA, gated MLP, MoE (routed + shared experts,
 * dense-first layers, layer-frequency patterns), DeepSeek MLA and MTP.
 * Counts are plain integers (no units); 0 means "not stated" for the
 * optional fields, and ts_model_finish() turns the stated fields into the
 * derived ones (head_dim, ffn_hidden, the per-layer MoE pattern...).
 *
 * Reading is a two-step affair so command-line flags can override a file:
 *   ts_model_init(&m, &args);
 *   ts_model_read_config(&m, path, &err)       (or ts_model_read_megatron_args)
 *   ... set fields from flags ...
 *   ts_model_finish(&m, &err)                  (validates, derives, fills moe_layer[])
 * The structs own no heap memory; nothing needs releasing.
 *
 * Errors: TS_EIO (cannot open), TS_EPARSE (malformed JSON or a value of the
 * wrong type: err names the file, byte offset and line), TS_EUNSUPPORTED
 * (a field combination the formulas do not cover), TS_ELIMIT (more layers
 * than TS_MODEL_MAX_LAYERS), TS_EUSAGE (ts_model_finish: a required field is
 * missing or a value is out of range; the message names the field and the
 * flag that supplies it).
 */
#ifndef TRAINSCOPE_MODEL_H
#define TRAINSCOPE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/core.h"

#define TS_MODEL_MAX_LAYERS 1024

enum ts_norm { TS_NORM_UNSET = 0, TS_NORM_RMS, TS_NORM_LAYER };

/* Recompute settings (Megatron --recompute-*); modules are a bitmask. */
enum ts_recompute_granularity { TS_RC_NONE = 0, TS_RC_FULL, TS_RC_SELECTIVE };
enum ts_recompute_method { TS_RC_METHOD_UNSET = 0, TS_RC_UNIFORM, TS_RC_BLOCK };
enum ts_recompute_module {
	TS_RCM_CORE_ATTN = 1 << 0,
	TS_RCM_MLA_UP_PROJ = 1 << 1,
	TS_RCM_MLP = 1 << 2,
	TS_RCM_MOE = 1 << 3,
	TS_RCM_SHARED_EXPERTS = 1 << 4,
	TS_RCM_LAYERNORM = 1 << 5,
	TS_RCM_MOE_ACT = 1 << 6
};

/*
 * Parse one module name ("core_attn", "mla_up_proj", "mlp", "moe",
 * "shared_experts", "layernorm", "moe_act") of length n: its bit, or 0 when
 * unknown. ts_recompute_module_name() gives the name of one bit.
 */
int ts_recompute_module_parse(const char *s, size_t n);
const char *ts_recompute_module_name(int bit);

struct ts_model {
	char family[32];        /* HF model_type ("llama", "deepseek_v3") or "megatron" */

	/* stated sizes (0 = not stated) */
	int64_t hidden;         /* h: hidden_size / n_embd / Megatron hidden_size */
	int64_t layers;         /* L: decoder layers, MTP excluded */
	int64_t heads;          /* n: attention heads */
	int64_t kv_heads;       /* g: key/value heads (query groups); 0 -> heads */
	int64_t head_dim;       /* d: kv_channels; 0 -> hidden / heads */
	int64_t ffn_hidden;     /* f: dense MLP width; 0 -> 4 * hidden */
	int64_t vocab;          /* tokenizer vocabulary, before Megatron padding */
	int64_t padded_vocab;   /* already padded (Megatron padded_vocab_size); 0 = pad it */
	int64_t max_position;   /* max_position_embeddings / n_positions */

	/* MoE (num_experts == 0: dense) */
	int64_t num_experts;    /* E routed experts */
	int64_t topk;           /* K experts per token */
	int64_t moe_ffn_hidden; /* f_e per routed expert; 0 -> ffn_hidden */
	int64_t shared_experts; /* count of shared experts (informational) */
	int64_t shared_ffn_hidden; /* f_s: TOTAL shared-expert width (count x size) */
	int64_t expert_groups;  /* group-limited routing: experts in this many equal groups
				 * (n_group / moe_router_num_groups); 0 = not limited */
	int64_t group_topk;     /* groups a token's K experts may come from (topk_group /
				 * moe_router_group_topk); DeepSeek-V3 maps a group to a node */

	/* which layers are MoE: the raw inputs... */
	int64_t first_k_dense;  /* DeepSeek first_k_dense_replace */
	int64_t moe_layer_freq; /* int form: MoE iff (i % freq == 0); 0 = every layer */
	int64_t sparse_step;    /* Qwen decoder_sparse_step: MoE iff (i+1) % step == 0 */
	int64_t freq_list_len;  /* Megatron list form of moe_layer_freq (0 = none) */
	unsigned char freq_list[TS_MODEL_MAX_LAYERS];
	unsigned char mlp_only[TS_MODEL_MAX_LAYERS]; /* Qwen mlp_only_layers (1 = dense) */

	/* MLA (mla = 1): q_lora_rank 0 means no query compression */
	int mla;
	int64_t q_lora_rank;
	int64_t kv_lora_rank;
	int64_t qk_head_dim;    /* d_qk: qk_nope_head_dim / Megatron qk_head_dim */
	int64_t qk_rope_dim;    /* d_r: qk_rope_head_dim / qk_pos_emb_head_dim */
	int64_t v_head_dim;     /* d_v */

	int64_t mtp_layers;     /* D: num_nextn_predict_layers / mtp_num_layers */

	/* attention the formulas do not model (they count full causal
	 * attention on every layer); stated so the CLI can say so */
	int64_t sliding_window; /* sliding_window in tokens (0 = none) */
	int64_t local_layers;   /* layers that use it (layer_types, Gemma's pattern, or all) */
	int64_t attention_chunk;/* Llama 4 attention_chunk_size (0 = none) */
	int64_t chunked_layers; /* chunked layers: no_rope_layers' 1s, or all but every
				 * no_rope_layer_interval-th (default 4) */
	int vision_encoder;     /* a vision_config was present: its encoder is not in the model */

	int qk_norm;            /* learned per-head q/k RMSNorm (Qwen3, Gemma 3): 2 d weights a
				 * layer; ts_model_finish() sets it for the qwen3 families */
	int tied_embeddings;    /* input embedding shared with the output layer */
	int attn_output_gate;   /* gated attention output (adds a q-wide gate) */
	int gated_mlp;          /* SwiGLU-style gated MLP: 3 GEMMs of h x f */
	int gated_mlp_set;      /* gated_mlp was stated (by the file or a flag) */
	int norm;               /* enum ts_norm */
	int qkv_bias;           /* informational */

	/* derived by ts_model_finish() */
	int64_t moe_layers;     /* N_moe: MoE decoder layers */
	unsigned char moe_layer[TS_MODEL_MAX_LAYERS]; /* 1 = layer i is MoE */
	int finished;
};

/*
 * Training arguments a Megatron arguments block states next to the model
 * (0 / TS_RC_NONE = not stated). The memory planner and mfu read these;
 * HF configs never fill them.
 */
struct ts_model_args {
	int64_t seq_length;
	int64_t global_batch;
	int64_t micro_batch;
	int64_t world_size;
	int64_t tp, pp, vpp, cp, ep, etp;
	int64_t vocab_divisor;  /* make_vocab_size_divisible_by */
	int sequence_parallel;
	int distributed_optimizer;
	int bf16, fp16;
	char fp8[16];           /* fp8 format ("hybrid", "e4m3") or "" */
	int recompute_granularity; /* enum ts_recompute_granularity */
	int recompute_method;      /* enum ts_recompute_method */
	int64_t recompute_num_layers;
	int recompute_modules;     /* enum ts_recompute_module bits */
	int recompute_modules_set; /* recompute_modules was stated */
};

void ts_model_init(struct ts_model *m);
void ts_model_args_init(struct ts_model_args *a);

/*
 * Read a Hugging Face config.json (model_type llama, mistral, qwen2, qwen3,
 * qwen2_moe, qwen3_moe, mixtral, deepseek_v2/v3, gpt2, gpt_oss, phi3; the
 * language model of gemma3 and llama4 from their text_config; other types
 * are read by the same key names). Llama 4's implicit shared expert and
 * dense width (intermediate_size_mlp) and its moe_layers list are applied.
 * Unknown keys and other nested objects are skipped. TS_EPARSE also when
 * moe_layers names a layer beyond num_hidden_layers.
 * The whole file is capped at 16 MiB.
 */
int ts_model_read_config(struct ts_model *m, const char *path, struct ts_err *err);
/* Same, from memory (name is used in messages). */
int ts_model_parse_config(struct ts_model *m, const void *data, size_t n,
			  const char *name, struct ts_err *err);

/*
 * Read the `arguments` block a Megatron-LM log prints at start-up
 * ("------ arguments ------", then "  name ....... value" lines, then
 * "-- end of arguments --"); any prefix before the two leading spaces (an
 * srun "0: " label, a timestamp) is tolerated. Fills m (family "megatron")
 * and, when a is non-NULL, the training arguments. TS_EPARSE when the log
 * has no such block or a value has the wrong type (err has the line).
 */
int ts_model_read_megatron_args(struct ts_model *m, struct ts_model_args *a,
				const char *path, struct ts_err *err);
int ts_model_parse_megatron_args(struct ts_model *m, struct ts_model_args *a,
				 const void *data, size_t n, const char *name,
				 struct ts_err *err);

/*
 * Validate and derive: defaults (kv_heads, head_dim, ffn_hidden,
 * moe_ffn_hidden), the MoE layer pattern and moe_layers. Call after every
 * override; calling it again recomputes. TS_EUSAGE names a missing field.
 */
int ts_model_finish(struct ts_model *m, struct ts_err *err);

/*
 * Megatron's padded vocabulary: ceil(vocab / (divisor * tp)) * divisor * tp,
 * or padded_vocab when the source stated it. divisor and tp are taken
 * within [1, 2^20]; vocab within the checks of ts_model_finish.
 */
int64_t ts_model_padded_vocab(const struct ts_model *m, int64_t divisor, int64_t tp);

/*
 * The parameters of a finished model, whole (before any sharding), as its
 * checkpoint stores them. The one count memory, plan and mfu's torchtitan
 * formula use. vocab is the vocabulary to count (the model's own, or
 * Megatron's padded one). Not counted: MTP layers (per-layer terms apply),
 * a vision encoder, Gemma 3's extra pre/post-feed-forward norms (4 h a
 * layer), attention sinks (n a layer) and biases other than Q/K/V.
 */
struct ts_model_params {
	/* per decoder layer */
	double attn;          /* Q/K/V/O (+ output gate, + Q/K/V biases); MLA: Q (or its
			       * up-projection), KV up-projection and O */
	double attn_rep;      /* MLA down-projections and their norms; q/k norms */
	double norms;         /* the layer's two norms (weight, + bias for LayerNorm) */
	double mlp;           /* a dense layer's MLP */
	double shared;        /* an MoE layer's shared experts */
	double router;        /* an MoE layer's router (h x E) */
	double experts;       /* an MoE layer's E routed experts */
	double experts_active;/* K of them */
	/* once */
	double embedding;     /* input embedding, vocab x h; the output head is the same size */
	double final_norm;
	/* the main model (no MTP) */
	double total;         /* embedding + layers + final norm + output head (0 when tied) */
	double active;        /* total with K of E routed experts in each MoE layer */
};

void ts_model_params(const struct ts_model *m, int64_t vocab, struct ts_model_params *out);

/*
 * A "model-feature-not-modelled" warning in wn (NULL: none) for each part
 * of m (finished or not) the FLOPs and memory formulas leave out:
 * sliding-window or chunked attention (counted as full causal attention)
 * and a vision encoder (not counted). path names the model's file in the
 * messages. memory, plan, mfu and the run model say the same sentences.
 * 0, or TS_ENOMEM.
 */
struct ts_warnings;
int ts_model_unmodelled(const struct ts_model *m, const char *path, struct ts_warnings *wn);

/* 1 if decoder layer i (0-based) is MoE (after ts_model_finish). */
static inline int ts_model_is_moe(const struct ts_model *m, int64_t i)
{
	return i >= 0 && i < m->layers && m->moe_layer[i];
}

/* TP must divide the attention heads and, without MLA, the key/value
 * heads (Megatron splits both across the TP ranks): 0, or TS_EUSAGE naming
 * the count ("--tp 3 does not divide the 32 attention heads"). m finished. */
int ts_model_check_tp(const struct ts_model *m, int64_t tp, struct ts_err *err);

#endif
