/*
 * model_args.c - read the `arguments` block of a Megatron-LM log.
 *
 * Megatron prints every parsed argument at start-up (rank 0,
 * `_print_args`): a "---- arguments ----" rule, then one line per argument
 * "  name ..... value" sorted by name, with the value in Python repr form
 * (None, True, 4096, 0.02, 'core_attn', [0, 0, 1], RMSNorm), then
 * "---- end of arguments ----". It is the most reliable record of what a
 * logged run actually computed, so this reader turns it into the same
 * ts_model as a config.json plus the training arguments next to it.
 * The log is streamed line by line and reading stops at the end of the
 * block; lines in the block that do not look like arguments are skipped.
 */
#include <stddef.h>
#include <string.h>
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/model.h"

enum target { T_MODEL, T_ARGS };
enum akind { A_INT, A_BOOL, A_NEG_BOOL, A_NORM, A_STR, A_FREQ, A_MODULES, A_GRAN, A_METHOD,
	     A_GQA, A_SEQ_PARALLEL };

struct afield {
	const char *name;
	enum target target;
	enum akind kind;
	size_t off;
};

#define M(name, kind, member) { name, T_MODEL, kind, offsetof(struct ts_model, member) }
#define R(name, kind, member) { name, T_ARGS, kind, offsetof(struct ts_model_args, member) }

static const struct afield afields[] = {
	M("num_layers", A_INT, layers),
	M("hidden_size", A_INT, hidden),
	M("ffn_hidden_size", A_INT, ffn_hidden),
	M("num_attention_heads", A_INT, heads),
	M("num_query_groups", A_INT, kv_heads),
	M("group_query_attention", A_GQA, kv_heads),
	M("kv_channels", A_INT, head_dim),
	M("padded_vocab_size", A_INT, padded_vocab),
	M("vocab_size", A_INT, vocab),
	M("max_position_embeddings", A_INT, max_position),
	M("num_experts", A_INT, num_experts),
	M("moe_router_topk", A_INT, topk),
	M("moe_router_num_groups", A_INT, expert_groups),
	M("moe_router_group_topk", A_INT, group_topk),
	M("moe_ffn_hidden_size", A_INT, moe_ffn_hidden),
	M("moe_shared_expert_intermediate_size", A_INT, shared_ffn_hidden),
	M("moe_layer_freq", A_FREQ, moe_layer_freq),
	M("multi_latent_attention", A_BOOL, mla),
	M("q_lora_rank", A_INT, q_lora_rank),
	M("kv_lora_rank", A_INT, kv_lora_rank),
	M("qk_head_dim", A_INT, qk_head_dim),
	M("qk_pos_emb_head_dim", A_INT, qk_rope_dim),
	M("v_head_dim", A_INT, v_head_dim),
	M("mtp_num_layers", A_INT, mtp_layers),
	M("untie_embeddings_and_output_weights", A_NEG_BOOL, tied_embeddings),
	M("attention_output_gate", A_BOOL, attn_output_gate),
	M("swiglu", A_BOOL, gated_mlp),
	M("normalization", A_NORM, norm),
	M("add_qkv_bias", A_BOOL, qkv_bias),
	M("qk_layernorm", A_BOOL, qk_norm),
	R("seq_length", A_INT, seq_length),
	R("global_batch_size", A_INT, global_batch),
	R("micro_batch_size", A_INT, micro_batch),
	R("world_size", A_INT, world_size),
	R("tensor_model_parallel_size", A_INT, tp),
	R("pipeline_model_parallel_size", A_INT, pp),
	R("virtual_pipeline_model_parallel_size", A_INT, vpp),
	R("context_parallel_size", A_INT, cp),
	R("expert_model_parallel_size", A_INT, ep),
	R("expert_tensor_parallel_size", A_INT, etp),
	R("make_vocab_size_divisible_by", A_INT, vocab_divisor),
	R("sequence_parallel", A_SEQ_PARALLEL, sequence_parallel),
	R("use_distributed_optimizer", A_BOOL, distributed_optimizer),
	R("bf16", A_BOOL, bf16),
	R("fp16", A_BOOL, fp16),
	R("fp8", A_STR, fp8),
	R("recompute_granularity", A_GRAN, recompute_granularity),
	R("recompute_method", A_METHOD, recompute_method),
	R("recompute_num_layers", A_INT, recompute_num_layers),
	R("recompute_modules", A_MODULES, recompute_modules),
};

struct astate {
	const char *path;
	struct ts_err *err;
	uint64_t line_off;
	int64_t lineno;
	int gqa;          /* -1 not stated, 0 off, 1 on */
};

static int bad(struct astate *st, const char *name, size_t col, const char *what)
{
	return ts_err_at(st->err, TS_EPARSE, st->path, (int64_t)(st->line_off + col), st->lineno,
			 "argument %s: expected %s", name, what);
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Python int; "None" gives 0. */
static int parse_int(struct astate *st, const char *name, const char *v, size_t n, size_t col,
		     int64_t *out)
{
	int64_t x;

	if (eq(v, n, "None")) {
		*out = 0;
		return 0;
	}
	if (ts_num_i64(v, n, &x) || x < 0)
		return bad(st, name, col, "a non-negative integer or None");
	*out = x;
	return 0;
}

static int parse_bool(struct astate *st, const char *name, const char *v, size_t n, size_t col,
		      int *out)
{
	if (eq(v, n, "True"))
		*out = 1;
	else if (eq(v, n, "False") || eq(v, n, "None"))
		*out = 0;
	else
		return bad(st, name, col, "True, False or None");
	return 0;
}

/*
 * A Python list "[a, b, 'c']": calls item() for each element text (quotes
 * stripped). Returns 0 or the first error.
 */
static int parse_list(struct astate *st, const char *name, const char *v, size_t n, size_t col,
		      int (*item)(struct astate *, const char *, const char *, size_t, size_t, void *),
		      void *ctx)
{
	size_t i = 1;

	if (n < 2 || v[0] != '[' || v[n - 1] != ']')
		return bad(st, name, col, "a list [...]");
	while (i < n - 1) {
		size_t a, b;
		int rc;
		while (i < n - 1 && (v[i] == ' ' || v[i] == ','))
			i++;
		if (i >= n - 1)
			break;
		a = i;
		while (i < n - 1 && v[i] != ',')
			i++;
		b = i;
		while (b > a && v[b - 1] == ' ')
			b--;
		if (b - a >= 2 && (v[a] == '\'' || v[a] == '"') && v[b - 1] == v[a]) {
			a++;
			b--;
		}
		if ((rc = item(st, name, v + a, b - a, col + a, ctx)))
			return rc;
	}
	return 0;
}

static int freq_item(struct astate *st, const char *name, const char *v, size_t n, size_t col,
		     void *ctx)
{
	struct ts_model *m = ctx;
	int64_t x;

	if (ts_num_i64(v, n, &x) || (x != 0 && x != 1))
		return bad(st, name, col, "list entries 0 or 1");
	if (m->freq_list_len >= TS_MODEL_MAX_LAYERS)
		return ts_err_at(st->err, TS_ELIMIT, st->path, (int64_t)(st->line_off + col),
				 st->lineno, "moe_layer_freq lists more than %d layers",
				 TS_MODEL_MAX_LAYERS);
	m->freq_list[m->freq_list_len++] = (unsigned char)x;
	return 0;
}

static int module_item(struct astate *st, const char *name, const char *v, size_t n, size_t col,
		       void *ctx)
{
	int *mods = ctx;
	int bit = ts_recompute_module_parse(v, n);

	if (!bit)
		return 0; /* modules without GEMM FLOPs we do not model (gdn_norm_out, mhc...) */
	*mods |= bit;
	return 0;
}

static int apply(struct astate *st, struct ts_model *m, struct ts_model_args *a,
		 const struct afield *f, const char *v, size_t n, size_t col)
{
	void *base = f->target == T_MODEL ? (void *)m : (void *)a;
	char *p;
	int rc, b;

	if (!base)
		return 0;
	p = (char *)base + f->off;
	switch (f->kind) {
	case A_INT:
		return parse_int(st, f->name, v, n, col, (int64_t *)p);
	case A_BOOL:
		if (f->off == offsetof(struct ts_model, gated_mlp) && f->target == T_MODEL)
			m->gated_mlp_set = 1;
		return parse_bool(st, f->name, v, n, col, (int *)p);
	case A_SEQ_PARALLEL:
		return parse_bool(st, f->name, v, n, col, (int *)p);
	case A_NEG_BOOL:
		if ((rc = parse_bool(st, f->name, v, n, col, &b)))
			return rc;
		*(int *)p = !b;
		return 0;
	case A_GQA:
		if ((rc = parse_bool(st, f->name, v, n, col, &b)))
			return rc;
		st->gqa = b;
		return 0;
	case A_NORM:
		if (eq(v, n, "RMSNorm"))
			*(int *)p = TS_NORM_RMS;
		else if (eq(v, n, "LayerNorm"))
			*(int *)p = TS_NORM_LAYER;
		return 0;
	case A_STR: {
		size_t k = n < 15 ? n : 15;
		if (eq(v, n, "None"))
			k = 0;
		memcpy(p, v, k);
		p[k] = '\0';
		return 0;
	}
	case A_FREQ:
		m->freq_list_len = 0;
		if (n && v[0] == '[')
			return parse_list(st, f->name, v, n, col, freq_item, m);
		return parse_int(st, f->name, v, n, col, &m->moe_layer_freq);
	case A_MODULES:
		a->recompute_modules = 0;
		a->recompute_modules_set = 1;
		if (eq(v, n, "None")) {
			a->recompute_modules_set = 0;
			return 0;
		}
		return parse_list(st, f->name, v, n, col, module_item, &a->recompute_modules);
	case A_GRAN:
		if (eq(v, n, "full"))
			*(int *)p = TS_RC_FULL;
		else if (eq(v, n, "selective"))
			*(int *)p = TS_RC_SELECTIVE;
		else if (eq(v, n, "None"))
			*(int *)p = TS_RC_NONE;
		else
			return bad(st, f->name, col, "full, selective or None");
		return 0;
	case A_METHOD:
		if (eq(v, n, "uniform"))
			*(int *)p = TS_RC_UNIFORM;
		else if (eq(v, n, "block"))
			*(int *)p = TS_RC_BLOCK;
		else if (eq(v, n, "None"))
			*(int *)p = TS_RC_METHOD_UNSET;
		else
			return bad(st, f->name, col, "uniform, block or None");
		return 0;
	}
	return 0;
}

/* One "  name ...... value" line; lines of another shape are ignored. */
static int arg_line(struct astate *st, struct ts_model *m, struct ts_model_args *a,
		    const char *s, size_t n)
{
	size_t sep, ns, ne, vs, ve;

	for (sep = 0; sep + 2 < n; sep++)
		if (s[sep] == ' ' && s[sep + 1] == '.' && s[sep + 2] == '.')
			break;
	if (sep + 2 >= n)
		return 0;
	ne = sep;
	ns = ne;
	while (ns > 0 && is_ident(s[ns - 1]))
		ns--;
	if (ns == ne)
		return 0;
	vs = sep + 1;
	while (vs < n && s[vs] == '.')
		vs++;
	while (vs < n && s[vs] == ' ')
		vs++;
	ve = n;
	while (ve > vs && (s[ve - 1] == ' ' || s[ve - 1] == '\r' || s[ve - 1] == '\t'))
		ve--;
	for (size_t i = 0; i < sizeof(afields) / sizeof(afields[0]); i++)
		if (eq(s + ns, ne - ns, afields[i].name))
			return apply(st, m, a, &afields[i], s + vs, ve - vs, vs);
	return 0;
}

static int contains(const char *s, size_t n, const char *lit)
{
	return memmem(s, n, lit, strlen(lit)) != NULL;
}

static int read_block(struct ts_input *in, struct ts_model *m, struct ts_model_args *a,
		      const char *path, struct ts_err *err)
{
	struct astate st;
	const char *line;
	size_t n;
	uint64_t off;
	int rc, inside = 0, seen = 0, ended = 0;
	uint64_t end_off = 0;

	memset(&st, 0, sizeof(st));
	st.path = path;
	st.err = err;
	st.gqa = -1;
	while ((rc = ts_input_getline(in, &line, &n, &off, err)) > 0) {
		st.lineno++;
		st.line_off = off;
		if (!inside) {
			if (contains(line, n, "- arguments -")) {
				inside = 1;
				seen = 1;
			}
			continue;
		}
		if (contains(line, n, "end of arguments")) {
			ended = 1;
			break;
		}
		if ((rc = arg_line(&st, m, a, line, n)))
			return rc;
		end_off = off + n;
	}
	if (rc < 0)
		return rc;
	if (!seen)
		return ts_err_at(err, TS_EPARSE, path, -1, -1,
				 "no Megatron arguments block (a '------ arguments ------' line"
				 " followed by '  name .... value' lines) in this log");
	/* a log cut inside the block: its last value may be cut too ("3" of
	 * num_layers 32), and what follows the cut is unknown */
	if (!ended)
		return ts_err_at(err, TS_ETRUNC, path, (int64_t)end_off, -1,
				 "the Megatron arguments block ends without its 'end of arguments' "
				 "line: the log is cut inside it, so its values are not used");
	if (st.gqa == 0)
		m->kv_heads = 0;
	if (m->num_experts == 0) {
		/* Megatron prints its MoE defaults (moe_router_topk 2) for dense models too */
		m->topk = 0;
		m->expert_groups = 0;
		m->group_topk = 0;
		m->moe_ffn_hidden = 0;
		m->shared_ffn_hidden = 0;
		m->freq_list_len = 0;
	}
	memcpy(m->family, "megatron", 9);
	if (m->norm == TS_NORM_UNSET)
		m->norm = TS_NORM_LAYER;
	if (!m->gated_mlp_set) {
		m->gated_mlp = 0;
		m->gated_mlp_set = 1;
	}
	return 0;
}

int ts_model_parse_megatron_args(struct ts_model *m, struct ts_model_args *a,
				 const void *data, size_t n, const char *name,
				 struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open_mem(&in, data, n, name, err)))
		return rc;
	rc = read_block(&in, m, a, name, err);
	ts_input_release(&in);
	return rc;
}

int ts_model_read_megatron_args(struct ts_model *m, struct ts_model_args *a,
				const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	rc = read_block(&in, m, a, in.path, err);
	ts_input_release(&in);
	return rc;
}
