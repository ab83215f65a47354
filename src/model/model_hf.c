/*
 * model_hf.c - read a Hugging Face config.json into a ts_model.
 *
 * Each model family names the same quantity differently (n_embd vs
 * hidden_size, num_local_experts vs n_routed_experts vs num_experts), and
 * some leave it implicit (GPT-2 ties embeddings and uses a plain GELU MLP).
 * This file owns that mapping; it streams the top-level object with the
 * pull tokenizer, copies what it recognises and skips the rest. A
 * multimodal config (Gemma 3, Llama 4) keeps its language model in a nested
 * text_config object, read here by the same names; other nested objects
 * (vision_config, rope_scaling) are skipped, and a vision_config is noted so
 * the CLI can say the encoder is not counted. Values of the wrong type are
 * errors that point at the value, never silently ignored.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/model.h"


/* K_POS: a count that cannot be 0 (hidden size, layers, heads, kv heads,
 * head dim, FFN width, vocabulary). Inside the model 0 means "not stated",
 * so a 0 in the file must be an error, never silently a default (a
 * num_key_value_heads of 0 would become the head count). */
enum kind { K_INT, K_POS, K_BOOL, K_SHARED_COUNT };

struct field {
	const char *key;
	enum kind kind;
	size_t off;
};

#define F(key, kind, member) { key, kind, offsetof(struct ts_model, member) }

static const struct field fields[] = {
	F("hidden_size", K_POS, hidden),
	F("n_embd", K_POS, hidden),
	F("d_model", K_POS, hidden),
	F("num_hidden_layers", K_POS, layers),
	F("n_layer", K_POS, layers),
	F("num_layers", K_POS, layers),
	F("num_attention_heads", K_POS, heads),
	F("n_head", K_POS, heads),
	F("num_key_value_heads", K_POS, kv_heads),
	F("head_dim", K_POS, head_dim),
	F("intermediate_size", K_POS, ffn_hidden),
	F("n_inner", K_INT, ffn_hidden),
	F("ffn_hidden_size", K_POS, ffn_hidden),
	F("vocab_size", K_POS, vocab),
	F("max_position_embeddings", K_INT, max_position),
	F("n_positions", K_INT, max_position),
	F("num_local_experts", K_INT, num_experts),
	F("num_experts", K_INT, num_experts),
	F("n_routed_experts", K_INT, num_experts),
	F("num_experts_per_tok", K_INT, topk),
	F("moe_intermediate_size", K_INT, moe_ffn_hidden),
	F("n_shared_experts", K_SHARED_COUNT, shared_experts),
	F("shared_expert_intermediate_size", K_INT, shared_ffn_hidden),
	F("first_k_dense_replace", K_INT, first_k_dense),
	F("n_group", K_INT, expert_groups),
	F("topk_group", K_INT, group_topk),
	F("interleave_moe_layer_step", K_INT, sparse_step),
	F("moe_layer_freq", K_INT, moe_layer_freq),
	F("decoder_sparse_step", K_INT, sparse_step),
	F("q_lora_rank", K_INT, q_lora_rank),
	F("kv_lora_rank", K_INT, kv_lora_rank),
	F("qk_nope_head_dim", K_INT, qk_head_dim),
	F("qk_rope_head_dim", K_INT, qk_rope_dim),
	F("v_head_dim", K_INT, v_head_dim),
	F("num_nextn_predict_layers", K_INT, mtp_layers),
	F("sliding_window", K_INT, sliding_window),
	F("attention_chunk_size", K_INT, attention_chunk),
	F("tie_word_embeddings", K_BOOL, tied_embeddings),
	F("attention_output_gate", K_BOOL, attn_output_gate),
	F("attn_output_gate", K_BOOL, attn_output_gate),
	F("attention_bias", K_BOOL, qkv_bias),
};

struct hf_state {
	struct ts_json j;
	const char *name;
	struct ts_err *err;
	int tied_set;
	char act[32];
	int64_t ffn_mlp;            /* Llama 4 intermediate_size_mlp: its dense layers' width */
	int64_t window_pattern;     /* Gemma 3 sliding_window_pattern: every N-th layer global */
	int use_window;             /* Qwen use_sliding_window: 1 true, -1 false, 0 not stated */
	int64_t layer_types;        /* entries of layer_types */
	int64_t sliding_types;      /* of which "sliding_attention" */
	int64_t rope_flags;         /* Llama 4 no_rope_layers entries (1 = RoPE, chunked) */
	int64_t rope_ones;          /* of which 1 */
	int64_t nope_interval;      /* Llama 4 no_rope_layer_interval (0: its default 4) */
	int in_text;                /* inside text_config (read once, not recursively) */
	int moe_list;               /* Llama 4 moe_layers was a list */
	int64_t moe_list_max;       /* its largest index */
	unsigned char moe_at[TS_MODEL_MAX_LAYERS];
};

static int bad(struct hf_state *st, const char *key, const char *what)
{
	uint64_t off = st->j.tok_offset;
	return ts_err_at(st->err, TS_EPARSE, st->name, (int64_t)off, ts_json_line_of(&st->j, off),
			 "\"%s\": expected %s", key, what);
}

static int read_int(struct hf_state *st, int tok, const char *key, int64_t *out)
{
	int64_t v;

	if (tok == TS_JSON_NULL) {
		*out = 0;
		return 0;
	}
	if (tok != TS_JSON_NUM || ts_num_i64(st->j.s, st->j.n, &v) || v < 0)
		return bad(st, key, "a non-negative integer or null");
	*out = v;
	return 0;
}

/*
 * The entries of an array value, each handed to entry (0 to go on, or a
 * negative code, which ends the read and is returned); null reads as an
 * absent key. what: the expectation named when the value is no array.
 */
static int read_array(struct hf_state *st, int tok, const char *key, const char *what,
		      int (*entry)(struct hf_state *st, int tok, const char *key, void *arg), void *arg)
{
	if (tok == TS_JSON_NULL)
		return 0;
	if (tok != TS_JSON_ARR)
		return bad(st, key, what);
	for (;;) {
		int rc;

		tok = ts_json_next(&st->j, st->err);
		if (tok < 0)
			return tok;
		if (tok == TS_JSON_ARR_END)
			return 0;
		rc = entry(st, tok, key, arg);
		if (rc)
			return rc;
	}
}

/* A layer list's marks and, when max is not NULL, its largest index. */
struct layer_set {
	unsigned char *set;
	int64_t *max;
};

static int layer_index(struct hf_state *st, int tok, const char *key, void *arg)
{
	struct layer_set *ls = arg;
	int64_t v;

	if (tok != TS_JSON_NUM || ts_num_i64(st->j.s, st->j.n, &v) || v < 0)
		return bad(st, key, "a non-negative layer index");
	if (v >= TS_MODEL_MAX_LAYERS) {
		uint64_t off = st->j.tok_offset;
		return ts_err_at(st->err, TS_ELIMIT, st->name, (int64_t)off,
				 ts_json_line_of(&st->j, off),
				 "%s index %lld exceeds the %d-layer limit", key,
				 (long long)v, TS_MODEL_MAX_LAYERS);
	}
	ls->set[v] = 1;
	if (ls->max && v > *ls->max)
		*ls->max = v;
	return 0;
}

/* mlp_only_layers / moe_layers: [i, j, ...] -> set[i] = 1; *max the largest. */
static int read_layer_list(struct hf_state *st, int tok, const char *key, unsigned char *set,
			   int64_t *max)
{
	struct layer_set ls = { set, max };

	return read_array(st, tok, key, "an array of layer indices", layer_index, &ls);
}

/* layer_types: ["sliding_attention", "full_attention", ...]: counted. */
static int layer_type(struct hf_state *st, int tok, const char *key, void *arg)
{
	if (tok != TS_JSON_STR)
		return bad(st, key, "an array of strings");
	st->layer_types++;
	if (st->j.n == 17 && memcmp(st->j.s, "sliding_attention", 17) == 0)
		st->sliding_types++;
	return 0;
}

/* no_rope_layers: [1, 1, 1, 0, ...]: entries and ones counted. */
static int rope_flag(struct hf_state *st, int tok, const char *key, void *arg)
{
	int64_t v;

	if (tok != TS_JSON_NUM || ts_num_i64(st->j.s, st->j.n, &v) || (v != 0 && v != 1))
		return bad(st, key, "an array of 0 and 1");
	st->rope_flags++;
	st->rope_ones += v;
	return 0;
}

static int read_string(struct hf_state *st, int tok, const char *key, char *out, size_t size)
{
	if (tok != TS_JSON_STR)
		return bad(st, key, "a string");
	size_t n = st->j.n < size - 1 ? st->j.n : size - 1;
	memcpy(out, st->j.s, n);
	out[n] = '\0';
	return 0;
}

static int members(struct hf_state *st, struct ts_model *m);

static int key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && memcmp(key, name, klen) == 0;
}

static int member(struct hf_state *st, struct ts_model *m, const char *key, size_t klen, int tok)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];
		if (strlen(f->key) != klen || memcmp(f->key, key, klen) != 0)
			continue;
		if (f->kind == K_BOOL) {
			if (tok != TS_JSON_TRUE && tok != TS_JSON_FALSE)
				return bad(st, f->key, "true or false");
			*(int *)((char *)m + f->off) = tok == TS_JSON_TRUE;
			if (f->off == offsetof(struct ts_model, tied_embeddings))
				st->tied_set = 1;
			return 0;
		}
		if (f->kind == K_POS && tok == TS_JSON_NUM) {
			int64_t v;
			if (!ts_num_i64(st->j.s, st->j.n, &v) && v == 0)
				return bad(st, f->key, "a positive integer (0 is not a valid "
					   "value; leave the key out or give null when unknown)");
		}
		return read_int(st, tok, f->key, (int64_t *)((char *)m + f->off));
	}
	if (klen == 10 && memcmp(key, "model_type", 10) == 0)
		return read_string(st, tok, "model_type", m->family, sizeof(m->family));
	if (key_is(key, klen, "hidden_act") || key_is(key, klen, "activation_function") ||
	    key_is(key, klen, "hidden_activation"))
		return read_string(st, tok, "hidden_act", st->act, sizeof(st->act));
	if (key_is(key, klen, "mlp_only_layers"))
		return read_layer_list(st, tok, "mlp_only_layers", m->mlp_only, NULL);
	if (key_is(key, klen, "moe_layers")) {
		st->moe_list = tok != TS_JSON_NULL;
		return read_layer_list(st, tok, "moe_layers", st->moe_at, &st->moe_list_max);
	}
	if (key_is(key, klen, "layer_types"))
		return read_array(st, tok, "layer_types", "an array of strings", layer_type, NULL);
	if (key_is(key, klen, "no_rope_layers"))
		return read_array(st, tok, "no_rope_layers", "an array of 0 and 1", rope_flag, NULL);
	if (key_is(key, klen, "no_rope_layer_interval"))
		return read_int(st, tok, "no_rope_layer_interval", &st->nope_interval);
	if (key_is(key, klen, "intermediate_size_mlp"))
		return read_int(st, tok, "intermediate_size_mlp", &st->ffn_mlp);
	if (key_is(key, klen, "sliding_window_pattern"))
		return read_int(st, tok, "sliding_window_pattern", &st->window_pattern);
	if (key_is(key, klen, "use_sliding_window")) {
		if (tok != TS_JSON_TRUE && tok != TS_JSON_FALSE)
			return bad(st, "use_sliding_window", "true or false");
		st->use_window = tok == TS_JSON_TRUE ? 1 : -1;
		return 0;
	}
	if (key_is(key, klen, "text_config") && tok == TS_JSON_OBJ && !st->in_text) {
		int rc;
		st->in_text = 1;
		rc = members(st, m);
		st->in_text = 0;
		return rc;
	}
	if (key_is(key, klen, "vision_config") && tok == TS_JSON_OBJ)
		m->vision_encoder = 1;
	if (klen == 11 && memcmp(key, "rms_norm_eps", 11) == 0) {
		m->norm = TS_NORM_RMS;
		return ts_json_skip(&st->j, tok, st->err);
	}
	if ((klen == 18 && memcmp(key, "layer_norm_epsilon", 18) == 0) ||
	    (klen == 14 && memcmp(key, "layer_norm_eps", 14) == 0)) {
		if (m->norm == TS_NORM_UNSET)
			m->norm = TS_NORM_LAYER;
		return ts_json_skip(&st->j, tok, st->err);
	}
	return ts_json_skip(&st->j, tok, st->err);
}

/* Layers with local attention: layer_types when listed, else Gemma's
 * pattern (every N-th layer global), else every layer, unless the config
 * says the window is off (Qwen's use_sliding_window false). */
static int64_t local_layers(const struct hf_state *st, const struct ts_model *m)
{
	if (m->sliding_window <= 0 || st->use_window < 0)
		return 0;
	if (st->layer_types > 0)
		return st->sliding_types;
	if (st->window_pattern > 0)
		return m->layers - m->layers / st->window_pattern;
	return m->layers;
}

/* Family rules the config leaves implicit. */
static int apply_family(struct hf_state *st, struct ts_model *m)
{
	int gpt2 = strcmp(m->family, "gpt2") == 0;
	int llama4 = strncmp(m->family, "llama4", 6) == 0;

	if (gpt2) {
		if (!st->tied_set)
			m->tied_embeddings = 1;
		if (m->norm == TS_NORM_UNSET)
			m->norm = TS_NORM_LAYER;
	}
	if (st->act[0]) {
		/* Llama/Qwen/Mixtral/DeepSeek MLPs are gated (act(x W1) * x W3),
		 * and every Gemma's whatever its GELU is called ("gelu" in
		 * Gemma 1); GPT-2's "gelu_new" MLP is not. */
		m->gated_mlp = !gpt2 && (strncmp(m->family, "gemma", 5) == 0 ||
					 strcmp(st->act, "silu") == 0 || strcmp(st->act, "swish") == 0 ||
					 strcmp(st->act, "swiglu") == 0 ||
					 strncmp(st->act, "gelu_pytorch_tanh", 17) == 0);
		m->gated_mlp_set = 1;
	} else if (gpt2) {
		m->gated_mlp = 0;
		m->gated_mlp_set = 1;
	}
	if (m->kv_lora_rank > 0)
		m->mla = 1;
	if (m->norm == TS_NORM_UNSET)
		m->norm = TS_NORM_RMS;
	/* Qwen3 and Gemma 3 normalise each head's q and k with a learned
	 * RMSNorm; Llama 4's use_qk_norm is a weightless L2 norm. */
	m->qk_norm = strncmp(m->family, "qwen3", 5) == 0 || strncmp(m->family, "gemma3", 6) == 0;
	/* Llama 4: intermediate_size is the width of each routed expert and of
	 * the one shared expert every MoE layer has; intermediate_size_mlp is
	 * the dense layers' width; moe_layers lists the MoE layers. */
	if (llama4 && m->num_experts > 0) {
		if (m->moe_ffn_hidden == 0)
			m->moe_ffn_hidden = m->ffn_hidden;
		if (m->shared_ffn_hidden == 0 && m->shared_experts == 0) {
			m->shared_experts = 1;
			m->shared_ffn_hidden = m->moe_ffn_hidden;
		}
		if (st->ffn_mlp > 0)
			m->ffn_hidden = st->ffn_mlp;
	}
	/* Mixtral and gpt-oss have no dense layer: intermediate_size is the
	 * expert width by definition, not an assumption. */
	if ((strcmp(m->family, "mixtral") == 0 || strcmp(m->family, "gpt_oss") == 0) &&
	    m->num_experts > 0 && m->moe_ffn_hidden == 0)
		m->moe_ffn_hidden = m->ffn_hidden;
	/* more layers than the model holds: ts_model_finish refuses the count */
	if (st->moe_list && m->layers <= TS_MODEL_MAX_LAYERS) {
		if (m->layers > 0 && st->moe_list_max >= m->layers)
			return ts_err_set(st->err, TS_EPARSE, "%s: moe_layers names layer %lld but the"
					  " model has %lld layers", st->name,
					  (long long)st->moe_list_max, (long long)m->layers);
		m->freq_list_len = m->layers;
		for (int64_t i = 0; i < m->layers; i++)
			m->freq_list[i] = st->moe_at[i];
	}
	m->local_layers = local_layers(st, m);
	/* Llama 4: the RoPE layers attend within chunks, the NoPE ones (every
	 * no_rope_layer_interval-th, default 4, unless no_rope_layers lists
	 * them) globally */
	if (llama4 && m->attention_chunk > 0) {
		int64_t every = st->nope_interval > 0 ? st->nope_interval : 4;
		m->chunked_layers = st->rope_flags > 0 ? st->rope_ones : m->layers - m->layers / every;
	}
	return 0;
}

/* The members of the object just opened, up to its end. */
static int members(struct hf_state *st, struct ts_model *m)
{
	int tok, rc;

	for (;;) {
		char key[64];
		size_t klen;

		tok = ts_json_next(&st->j, st->err);
		if (tok < 0)
			return tok;
		if (tok == TS_JSON_OBJ_END)
			return 0;
		klen = st->j.n < sizeof(key) ? st->j.n : sizeof(key) - 1;
		memcpy(key, st->j.s, klen);
		key[klen] = '\0';
		if (st->j.n >= sizeof(key))
			klen = 0; /* longer than any key we know: skip it */
		tok = ts_json_next(&st->j, st->err);
		if (tok < 0)
			return tok;
		if ((rc = member(st, m, key, klen, tok)) < 0)
			return rc;
	}
}

int ts_model_parse_config(struct ts_model *m, const void *data, size_t n,
			  const char *name, struct ts_err *err)
{
	struct hf_state st;
	int tok, rc = 0;

	memset(&st, 0, sizeof(st));
	st.name = name;
	st.err = err;
	ts_json_init_mem(&st.j, data, n, 0, name);
	tok = ts_json_next(&st.j, err);
	if (tok < 0) {
		rc = tok;
		goto out;
	}
	if (tok != TS_JSON_OBJ) {
		rc = ts_err_at(err, TS_EPARSE, name, (int64_t)st.j.tok_offset,
			       ts_json_line_of(&st.j, st.j.tok_offset),
			       "expected a JSON object (a Hugging Face config.json)");
		goto out;
	}
	if ((rc = members(&st, m)) < 0)
		goto out;
	tok = ts_json_next(&st.j, err);
	if (tok < 0) {
		rc = tok;
		goto out;
	}
	if (m->family[0] == '\0')
		memcpy(m->family, "unknown", 8);
	rc = apply_family(&st, m);
out:
	ts_json_release(&st.j);
	return rc;
}

int ts_model_read_config(struct ts_model *m, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_read_all(&in, path, TS_DOC_MAX_BYTES, err)))
		return rc;
	rc = ts_model_parse_config(m, in.data, in.len, in.path, err);
	ts_input_release(&in);
	return rc;
}
