/*
 * model.c - defaults, validation and the MoE layer pattern of a ts_model.
 *
 * The readers (model_hf.c, model_args.c) only copy what a file states; the
 * rules that turn those statements into the numbers the formulas use live
 * here once, so a Hugging Face config, a Megatron log and command-line
 * overrides all end up with the same derived model.
 */
#include <string.h>
#include "trainscope/jsonw.h"
#include "trainscope/model.h"

/* Upper bound for any width: keeps every product in the FLOP formulas far
 * from overflow and rejects garbage early. */
#define SIZE_CAP ((int64_t)1 << 26)

static const char *const module_names[] = {
	"core_attn", "mla_up_proj", "mlp", "moe", "shared_experts", "layernorm", "moe_act"
};

int ts_recompute_module_parse(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(module_names) / sizeof(module_names[0]); i++)
		if (strlen(module_names[i]) == n && memcmp(module_names[i], s, n) == 0)
			return 1 << i;
	return 0;
}

const char *ts_recompute_module_name(int bit)
{
	for (size_t i = 0; i < sizeof(module_names) / sizeof(module_names[0]); i++)
		if (bit == 1 << i)
			return module_names[i];
	return "?";
}

void ts_model_init(struct ts_model *m)
{
	memset(m, 0, sizeof(*m));
}

void ts_model_args_init(struct ts_model_args *a)
{
	memset(a, 0, sizeof(*a));
}

static int check(struct ts_err *err, const char *what, const char *flag, int64_t v,
		 int64_t lo, int64_t hi)
{
	if (v < lo || v > hi)
		return ts_err_set(err, TS_EUSAGE, "model %s = %lld is out of range [%lld, %lld]"
				  " (set it with %s)", what, (long long)v, (long long)lo,
				  (long long)hi, flag);
	return 0;
}

int ts_model_finish(struct ts_model *m, struct ts_err *err)
{
	int rc;

	m->finished = 0;
	if (m->hidden == 0)
		return ts_err_set(err, TS_EUSAGE, "model hidden size is not stated (--hidden)");
	if (m->layers == 0)
		return ts_err_set(err, TS_EUSAGE, "model layer count is not stated (--layers)");
	if (m->heads == 0)
		return ts_err_set(err, TS_EUSAGE, "model attention head count is not stated (--heads)");
	if (m->vocab == 0 && m->padded_vocab == 0)
		return ts_err_set(err, TS_EUSAGE, "model vocabulary size is not stated (--vocab)");
	if ((rc = check(err, "hidden", "--hidden", m->hidden, 1, SIZE_CAP)) ||
	    (rc = check(err, "layers", "--layers", m->layers, 1, TS_MODEL_MAX_LAYERS)) ||
	    (rc = check(err, "heads", "--heads", m->heads, 1, 1 << 16)) ||
	    (rc = check(err, "kv heads", "--kv-heads", m->kv_heads, 0, m->heads)) ||
	    (rc = check(err, "head dim", "--head-dim", m->head_dim, 0, SIZE_CAP)) ||
	    (rc = check(err, "ffn hidden", "--ffn-hidden", m->ffn_hidden, 0, SIZE_CAP)) ||
	    (rc = check(err, "vocab", "--vocab", m->vocab, 0, SIZE_CAP)) ||
	    (rc = check(err, "padded vocab", "--vocab", m->padded_vocab, 0, SIZE_CAP)) ||
	    (rc = check(err, "experts", "--experts", m->num_experts, 0, 1 << 20)) ||
	    (rc = check(err, "moe ffn hidden", "--moe-ffn-hidden", m->moe_ffn_hidden, 0, SIZE_CAP)) ||
	    (rc = check(err, "shared experts", "--shared-ffn-hidden", m->shared_experts, 0, 1 << 16)) ||
	    (rc = check(err, "shared ffn hidden", "--shared-ffn-hidden", m->shared_ffn_hidden, 0, SIZE_CAP)) ||
	    (rc = check(err, "first dense layers", "--first-k-dense", m->first_k_dense, 0, m->layers)) ||
	    (rc = check(err, "moe layer freq", "--moe-layer-freq", m->moe_layer_freq, 0, TS_MODEL_MAX_LAYERS)) ||
	    (rc = check(err, "decoder sparse step", "--moe-layer-freq", m->sparse_step, 0, TS_MODEL_MAX_LAYERS)) ||
	    (rc = check(err, "MTP depth", "--mtp", m->mtp_layers, 0, 64)))
		return rc;
	if (m->kv_heads == 0)
		m->kv_heads = m->heads;
	if (m->heads % m->kv_heads)
		return ts_err_set(err, TS_EUSAGE, "model heads %lld are not a multiple of kv heads %lld",
				  (long long)m->heads, (long long)m->kv_heads);
	if (m->head_dim == 0) {
		if (m->hidden % m->heads)
			return ts_err_set(err, TS_EUSAGE, "hidden %lld is not a multiple of heads %lld;"
					  " state the head dim (--head-dim)",
					  (long long)m->hidden, (long long)m->heads);
		m->head_dim = m->hidden / m->heads;
	}
	if (m->ffn_hidden == 0)
		m->ffn_hidden = 4 * m->hidden;
	if (!m->gated_mlp_set)
		m->gated_mlp = 1;
	if (strncmp(m->family, "qwen3", 5) == 0)
		m->qk_norm = 1;

	if (m->num_experts > 0) {
		if (m->topk == 0)
			return ts_err_set(err, TS_EUSAGE, "MoE model (%lld experts) has no top-k"
					  " (num_experts_per_tok; --topk)", (long long)m->num_experts);
		if ((rc = check(err, "top-k", "--topk", m->topk, 1, m->num_experts)))
			return rc;
		if (m->expert_groups > 0 &&
		    (m->num_experts % m->expert_groups || m->group_topk > m->expert_groups))
			return ts_err_set(err, TS_EUSAGE, "group-limited routing: %lld experts in %lld groups"
					  " (n_group), %lld groups a token (topk_group): the groups must divide"
					  " the experts and topk_group be at most n_group",
					  (long long)m->num_experts, (long long)m->expert_groups,
					  (long long)m->group_topk);
		if (m->moe_ffn_hidden == 0)
			m->moe_ffn_hidden = m->ffn_hidden;
		if (m->shared_ffn_hidden == 0 && m->shared_experts > 0)
			m->shared_ffn_hidden = m->shared_experts * m->moe_ffn_hidden;
	} else if (m->topk) {
		return ts_err_set(err, TS_EUSAGE, "top-k %lld given for a model without experts (--experts)",
				  (long long)m->topk);
	}

	if (m->mla) {
		if (m->kv_lora_rank <= 0 || m->qk_head_dim <= 0 || m->qk_rope_dim <= 0 ||
		    m->v_head_dim <= 0)
			return ts_err_set(err, TS_EUSAGE, "MLA model needs kv_lora_rank, qk_nope_head_dim,"
					  " qk_rope_head_dim and v_head_dim");
		if ((rc = check(err, "q_lora_rank", "the config", m->q_lora_rank, 0, SIZE_CAP)) ||
		    (rc = check(err, "kv_lora_rank", "the config", m->kv_lora_rank, 1, SIZE_CAP)) ||
		    (rc = check(err, "qk head dim", "the config", m->qk_head_dim, 1, SIZE_CAP)) ||
		    (rc = check(err, "qk rope dim", "the config", m->qk_rope_dim, 1, SIZE_CAP)) ||
		    (rc = check(err, "v head dim", "the config", m->v_head_dim, 1, SIZE_CAP)))
			return rc;
	}

	for (int64_t i = m->layers; i < TS_MODEL_MAX_LAYERS; i++)
		if (m->mlp_only[i])
			return ts_err_set(err, TS_EUSAGE, "mlp_only_layers names layer %lld but the model"
					  " has %lld layers", (long long)i, (long long)m->layers);
	if (m->freq_list_len && m->freq_list_len != m->layers)
		return ts_err_set(err, TS_EUSAGE, "moe_layer_freq list has %lld entries for %lld layers",
				  (long long)m->freq_list_len, (long long)m->layers);

	m->moe_layers = 0;
	memset(m->moe_layer, 0, sizeof(m->moe_layer));
	for (int64_t i = 0; i < m->layers && m->num_experts > 0; i++) {
		int moe;
		if (m->freq_list_len)
			moe = m->freq_list[i] != 0;
		else
			moe = i >= m->first_k_dense &&
			      (m->moe_layer_freq <= 1 || i % m->moe_layer_freq == 0) &&
			      (m->sparse_step <= 1 || (i + 1) % m->sparse_step == 0);
		if (m->mlp_only[i])
			moe = 0;
		m->moe_layer[i] = (unsigned char)moe;
		m->moe_layers += moe;
	}
	m->finished = 1;
	return 0;
}

void ts_model_params(const struct ts_model *m, int64_t vocab, struct ts_model_params *p)
{
	double h = (double)m->hidden, n = (double)m->heads;
	double nc = m->norm == TS_NORM_LAYER ? 2.0 : 1.0; /* LayerNorm: weight and bias */
	double gamma = m->gated_mlp ? 3.0 : 2.0;
	double fe = (double)m->moe_ffn_hidden;
	double nm = (double)m->moe_layers, nd = (double)(m->layers - m->moe_layers);
	double layer_common, out;

	memset(p, 0, sizeof(*p));
	if (m->mla) {
		double dq = (double)(m->qk_head_dim + m->qk_rope_dim), dv = (double)m->v_head_dim;
		double rq = (double)m->q_lora_rank, rkv = (double)m->kv_lora_rank;
		p->attn = (rq > 0 ? rq * n * dq : h * n * dq) + rkv * n * ((double)m->qk_head_dim + dv) +
			  n * dv * h;
		p->attn_rep = (rq > 0 ? h * rq + nc * rq : 0) + h * (rkv + (double)m->qk_rope_dim) +
			      nc * rkv;
	} else {
		double q = n * (double)m->head_dim, k = (double)(m->kv_heads * m->head_dim);
		p->attn = h * (q + 2 * k) + q * h + (m->attn_output_gate ? h * q : 0) +
			  (m->qkv_bias ? q + 2 * k : 0);
		p->attn_rep = m->qk_norm ? 2.0 * (double)m->head_dim : 0;
	}
	p->norms = 2.0 * nc * h;
	p->mlp = gamma * h * (double)m->ffn_hidden;
	p->shared = gamma * h * (double)m->shared_ffn_hidden;
	p->router = h * (double)m->num_experts;
	p->experts = gamma * h * fe * (double)m->num_experts;
	p->experts_active = gamma * h * fe * (double)m->topk;
	p->embedding = (double)vocab * h;
	p->final_norm = nc * h;
	layer_common = p->attn + p->attn_rep + p->norms;
	out = m->tied_embeddings ? 0 : p->embedding;
	p->total = p->embedding + nd * (layer_common + p->mlp) +
		   nm * (layer_common + p->shared + p->router + p->experts) + p->final_norm + out;
	p->active = p->total - nm * (p->experts - p->experts_active);
}

int ts_model_unmodelled(const struct ts_model *m, const char *path, struct ts_warnings *wn)
{
	int rc = 0;

	if (!wn)
		return 0;
	if (m->local_layers > 0)
		rc |= ts_warnings_add(wn, "model-feature-not-modelled", path, -1, TS_NO_INT,
				      "%s: sliding-window attention (window %lld tokens) on %lld of %lld layers"
				      " is not modelled: attention FLOPs are counted as full causal attention"
				      " over the whole sequence (too high when the sequence is longer than the window)",
				      path, (long long)m->sliding_window, (long long)m->local_layers,
				      (long long)m->layers);
	if (m->chunked_layers > 0)
		rc |= ts_warnings_add(wn, "model-feature-not-modelled", path, -1, TS_NO_INT,
				      "%s: chunked attention (%lld-token chunks) on %lld of %lld layers"
				      " is not modelled: attention FLOPs are counted as full causal attention"
				      " over the whole sequence (too high when the sequence is longer than a chunk)",
				      path, (long long)m->attention_chunk, (long long)m->chunked_layers,
				      (long long)m->layers);
	if (m->vision_encoder)
		rc |= ts_warnings_add(wn, "model-feature-not-modelled", path, -1, TS_NO_INT,
				      "%s: the vision encoder (vision_config) is not counted: parameters,"
				      " FLOPs and memory are the language model's (text_config)", path);
	return rc ? TS_ENOMEM : 0;
}

/* divisor and tp beyond this are no real setting (a log's 2^56 made
 * divisor * tp overflow); with vocab <= SIZE_CAP the padding stays in int64 */
#define PAD_FACTOR_MAX (INT64_C(1) << 20)

int64_t ts_model_padded_vocab(const struct ts_model *m, int64_t divisor, int64_t tp)
{
	int64_t mult;

	if (m->padded_vocab > 0)
		return m->padded_vocab;
	if (divisor < 1)
		divisor = 1;
	if (divisor > PAD_FACTOR_MAX)
		divisor = PAD_FACTOR_MAX;
	if (tp < 1)
		tp = 1;
	if (tp > PAD_FACTOR_MAX)
		tp = PAD_FACTOR_MAX;
	mult = divisor * tp;
	return (m->vocab + mult - 1) / mult * mult;
}

int ts_model_check_tp(const struct ts_model *m, int64_t tp, struct ts_err *err)
{
	if (tp >= 1 && m->heads % tp)
		return ts_err_set(err, TS_EUSAGE, "--tp %lld does not divide the %lld attention heads",
				  (long long)tp, (long long)m->heads);
	if (tp >= 1 && !m->mla && m->kv_heads % tp)
		return ts_err_set(err, TS_EUSAGE, "--tp %lld does not divide the %lld key/value heads",
				  (long long)tp, (long long)m->kv_heads);
	return 0;
}
