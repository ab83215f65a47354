/*
 * backend.c - did the requested backend actually run? Evidence from a
 * profiler trace (attention kernels, CUDA/MUSA graph replay, the MoE
 * dispatcher's collectives) judged against what a contract or a Megatron
 * arguments block asked for (flops-memory-workflow 5.2 phase 5, 5.4 item 6).
 *
 * Names are classified once per interned string, then events are counted
 * by class: kernels and CPU operators for attention (a CPU trace has only
 * the operators), those and user annotations for collectives (older traces
 * mark "nccl:all_to_all" as an annotation), runtime calls for graph
 * launches. A kernel name is preferred as the example of a kind.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/detect.h"
#include "trainscope/gate.h"
#include "trainscope/nsys.h"
#include "trainscope/taxonomy.h"
#include "trainscope/trace.h"

void ts_backend_evidence_init(struct ts_backend_evidence *e)
{
	memset(e, 0, sizeof(*e));
}

static int has(const char *s, size_t n, const char *needle)
{
	return ts_name_contains(s, n, needle);
}

/* Attention class of a kernel or operator name (TS_ATTN_NONE when none).
 * cuDNN's SDPA kernels carry "flash" in their names
 * (cudnn_generated_fort_native_sdpa_sm90_flash_fprop...): cuDNN first. */
static int attn_class(const char *s, size_t n)
{
	if ((has(s, n, "cudnn") || has(s, n, "mudnn")) &&
	    (has(s, n, "sdpa") || has(s, n, "attention") || has(s, n, "attn") || has(s, n, "fmha")))
		return TS_ATTN_CUDNN;
	if (has(s, n, "fusedattn") || has(s, n, "fused_attn"))
		return TS_ATTN_CUDNN; /* Transformer Engine's cuDNN fused attention */
	if (has(s, n, "flash"))
		return TS_ATTN_FLASH;
	if (has(s, n, "efficient_attention") || has(s, n, "fmha_cutlass") ||
	    has(s, n, "mem_eff"))
		return TS_ATTN_EFFICIENT;
	if (has(s, n, "_scaled_dot_product_attention_math") || has(s, n, "scaledmaskedsoftmax") ||
	    has(s, n, "scaled_masked_softmax") || has(s, n, "scaled_upper_triang_masked_softmax"))
		return TS_ATTN_MATH;
	return TS_ATTN_NONE;
}

/* Collective class (TS_COLL_NONE when none): NCCL/MCCL kernels, c10d and
 * nccl:* operators, DeepEP / HybridEP kernels. */
static int coll_class(const char *s, size_t n)
{
	if (has(s, n, "deep_ep") || has(s, n, "deepep"))
		return TS_COLL_DEEPEP;
	if (has(s, n, "hybrid_ep") || has(s, n, "hybridep"))
		return TS_COLL_HYBRIDEP;
	if (!ts_is_cpu_collective(s, n) && ts_kclass_of(s, n, 0, 0) != TS_KC_COMM)
		return TS_COLL_NONE;
	if (has(s, n, "all_to_all") || has(s, n, "alltoall"))
		return TS_COLL_ALLTOALL;
	if (has(s, n, "all_gather") || has(s, n, "allgather"))
		return TS_COLL_ALLGATHER;
	if (has(s, n, "reduce_scatter") || has(s, n, "reducescatter"))
		return TS_COLL_REDUCE_SCATTER;
	if (has(s, n, "all_reduce") || has(s, n, "allreduce"))
		return TS_COLL_ALLREDUCE;
	return TS_COLL_NONE;
}

/* Keep the first name of a kind, replaced once by the first kernel name
 * (*from_kernel records which one is kept). */
static void note_example(char *dst, size_t cap, unsigned *from_kernel, unsigned bit,
			 int is_kernel, const char *s, size_t n)
{
	if (dst[0] && (*from_kernel & bit || !is_kernel))
		return;
	if (is_kernel)
		*from_kernel |= bit;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

int ts_backend_scan(const struct ts_trace *t, struct ts_backend_evidence *e)
{
	size_t nstr = t->strings.count;
	/* per interned name: bit 7 classified, bits 0-2 attention, 3-5 collective */
	unsigned char *cls = calloc(nstr ? nstr : 1, 1);

	if (!cls)
		return TS_ENOMEM;
	e->traces++;
	for (size_t i = 0; i < t->ev.n; i++) {
		uint8_t cat = t->ev.cat[i];
		uint32_t id = t->ev.name[i];
		const char *s;
		size_t n;
		int a, c;

		if (cat == TS_CAT_KERNEL)
			e->kernels++;
		if ((cat != TS_CAT_KERNEL && cat != TS_CAT_CPU_OP && cat != TS_CAT_RUNTIME &&
		     cat != TS_CAT_COLLECTIVE && cat != TS_CAT_USER_ANNOTATION) || id >= nstr)
			continue;
		s = ts_intern_str(&t->strings, id);
		n = ts_intern_len(&t->strings, id);
		if (cat == TS_CAT_RUNTIME) {
			if (ts_is_graph_launch(s, n) && !e->graph_launches++)
				snprintf(e->graph_example, sizeof(e->graph_example), "%.*s", (int)n, s);
			continue;
		}
		if (!(cls[id] & 0x80))
			cls[id] = (unsigned char)(0x80 | attn_class(s, n) | coll_class(s, n) << 3);
		a = cat == TS_CAT_USER_ANNOTATION ? 0 : cls[id] & 7;
		c = (cls[id] >> 3) & 7;
		if (a) {
			e->attn[a]++;
			note_example(e->attn_example[a], sizeof(e->attn_example[a]), &e->ex_kernel,
				     1u << a, cat == TS_CAT_KERNEL, s, n);
		}
		if (c) {
			e->coll[c]++;
			note_example(e->coll_example[c], sizeof(e->coll_example[c]), &e->ex_kernel,
				     1u << (8 + c), cat == TS_CAT_KERNEL, s, n);
		}
	}
	free(cls);
	return 0;
}

/* An Nsight Systems export: every (process, device) rank is one trace. */
static int scan_nsys(const char *path, struct ts_backend_evidence *e, struct ts_err *err)
{
	struct ts_nsys x;
	int rc;

	ts_nsys_init(&x);
	rc = ts_nsys_open(&x, path, err);
	if (!rc)
		rc = ts_nsys_survey(&x, err);
	for (size_t k = 0; !rc && k < x.ranks.n; k++) {
		struct ts_trace t;
		ts_trace_init(&t);
		rc = ts_nsys_read_rank(&x, k, NULL, &t, NULL, err);
		if (!rc)
			rc = ts_backend_scan(&t, e);
		ts_trace_release(&t);
	}
	ts_nsys_close(&x);
	return rc;
}

int ts_backend_scan_file(const char *path, struct ts_backend_evidence *e, struct ts_err *err)
{
	struct ts_trace t;
	struct ts_trace_opts o;
	struct ts_detect d;
	int rc;

	if (ts_detect_file(path, &d, err) == 0 && d.kind == TS_KIND_NSYS_SQLITE)
		return scan_nsys(path, e, err);
	memset(&o, 0, sizeof(o));
	o.skip_python = 1;
	o.skip_flows = 1;
	ts_trace_init(&t);
	rc = ts_trace_read(&t, path, &o, err);
	if (rc == 0)
		rc = ts_backend_scan(&t, e);
	ts_trace_release(&t);
	return rc;
}

/* ------------------------------------------------------------ judging */

static const char *const attn_names[TS_ATTN_COUNT] = {
	"none", "flash", "cudnn", "efficient", "math"
};
static const char *const coll_names[TS_COLL_COUNT] = {
	"none", "all_to_all", "all_gather", "reduce_scatter", "all_reduce", "deepep", "hybridep"
};

const char *ts_attn_name(int cls)
{
	return cls >= 0 && cls < TS_ATTN_COUNT ? attn_names[cls] : "?";
}

const char *ts_coll_name(int cls)
{
	return cls >= 0 && cls < TS_COLL_COUNT ? coll_names[cls] : "?";
}

static int truthy(const char *v)
{
	return v && (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1") ||
		     !strcmp(v, "yes"));
}

static int unset(const char *v)
{
	return !v || !*v || !strcmp(v, "None") || !strcmp(v, "none") || !strcmp(v, "False") ||
	       !strcmp(v, "false") || !strcmp(v, "null") || !strcmp(v, "[]");
}

void ts_backend_requested(const struct ts_contract *c, struct ts_backend_request *q)
{
	const char *v;

	memset(q, 0, sizeof(*q));
	/* attention: Megatron --attention-backend, older --use-flash-attn */
	v = ts_contract_get(c, "workload.attention_backend", NULL);
	if (!unset(v)) {
		/* "AttnBackend.flash" as Megatron prints the enum, or "flash" */
		const char *dot = strrchr(v, '.');
		snprintf(q->attention, sizeof(q->attention), "%s", dot ? dot + 1 : v);
	} else if (truthy(ts_contract_get(c, "workload.use_flash_attn", NULL))) {
		snprintf(q->attention, sizeof(q->attention), "flash");
	}
	/* graphs: --cuda-graph-impl local|transformer_engine, or the older
	 * --enable-cuda-graph / --external-cuda-graph switches */
	v = ts_contract_get(c, "workload.graph_impl", NULL);
	q->graphs = (!unset(v)) || truthy(ts_contract_get(c, "workload.enable_cuda_graph", NULL)) ||
		    truthy(ts_contract_get(c, "workload.external_cuda_graph", NULL));
	/* dispatcher: alltoall | allgather | flex (+ deepep | hybridep) */
	v = ts_contract_get(c, "workload.dispatcher", NULL);
	if (!unset(v))
		snprintf(q->dispatcher, sizeof(q->dispatcher), "%s", v);
	v = ts_contract_get(c, "workload.dispatcher_backend", NULL);
	if (!unset(v))
		snprintf(q->dispatcher_backend, sizeof(q->dispatcher_backend), "%s", v);
	else if (truthy(ts_contract_get(c, "workload.moe_enable_deepep", NULL)))
		snprintf(q->dispatcher_backend, sizeof(q->dispatcher_backend), "deepep");
}

static void add_line(struct ts_backend_verdict *out, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_line(struct ts_backend_verdict *out, int status, const char *fmt, ...)
{
	size_t len = strlen(out->evidence);
	va_list ap;

	if (status == TS_CHECK_FAIL || (status == TS_CHECK_WARN && out->status != TS_CHECK_FAIL) ||
	    (status == TS_CHECK_PASS && out->status == TS_CHECK_SKIP))
		out->status = status;
	if (len && len + 2 < sizeof(out->evidence)) {
		memcpy(out->evidence + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(out->evidence + len, sizeof(out->evidence) - len, fmt, ap);
	va_end(ap);
}

/* The attention kinds that satisfy a requested backend (bit per TS_ATTN_*).
 * Megatron: flash = FlashAttention, fused = cuDNN fused attention (through
 * Transformer Engine), unfused / local = softmax in PyTorch, auto = any. */
static unsigned attn_accepts(const char *want)
{
	if (!strcmp(want, "flash"))
		return 1u << TS_ATTN_FLASH;
	if (!strcmp(want, "fused") || !strcmp(want, "cudnn"))
		return 1u << TS_ATTN_CUDNN;
	if (!strcmp(want, "efficient"))
		return 1u << TS_ATTN_EFFICIENT;
	if (!strcmp(want, "unfused") || !strcmp(want, "local") || !strcmp(want, "math"))
		return 1u << TS_ATTN_MATH;
	return 0; /* auto and anything else: any fused kind */
}

/* The attention kind seen most often (TS_ATTN_NONE when none). */
static int attn_seen(const struct ts_backend_evidence *e)
{
	int best = TS_ATTN_NONE;

	for (int k = 1; k < TS_ATTN_COUNT; k++)
		if (e->attn[k] > (best ? e->attn[best] : 0))
			best = k;
	return best;
}

static void judge_attention(const struct ts_backend_request *q,
			    const struct ts_backend_evidence *e, struct ts_backend_verdict *out)
{
	unsigned ok = attn_accepts(q->attention);
	int seen = attn_seen(e);

	if (!seen) {
		add_line(out, TS_CHECK_WARN, "attention '%s' requested, but no attention kernel or "
			 "operator in the trace (cannot tell)", q->attention);
		return;
	}
	if (ok ? (ok & (1u << seen)) != 0 : seen != TS_ATTN_MATH) {
		add_line(out, TS_CHECK_PASS, "attention '%s' requested: %s ran (%lld events, e.g. %s)",
			 q->attention, ts_attn_name(seen), (long long)e->attn[seen],
			 e->attn_example[seen]);
		return;
	}
	add_line(out, TS_CHECK_FAIL, "attention '%s' requested, but the trace shows %s (%lld "
		 "events, e.g. %s): a fallback", q->attention, ts_attn_name(seen),
		 (long long)e->attn[seen], e->attn_example[seen]);
}

static void judge_graphs(const struct ts_backend_evidence *e, struct ts_backend_verdict *out)
{
	if (e->graph_launches > 0)
		add_line(out, TS_CHECK_PASS, "graphs requested: %lld graph launches (%s): replay "
			 "evidenced", (long long)e->graph_launches, e->graph_example);
	else if (!e->kernels)
		add_line(out, TS_CHECK_WARN, "graphs requested, but the trace has no GPU activity "
			 "(cannot tell)");
	else
		add_line(out, TS_CHECK_FAIL, "graphs requested, but no cudaGraphLaunch/musaGraphLaunch "
			 "in the trace: captured but never replayed, or not captured at all");
}

static void judge_dispatcher(const struct ts_backend_request *q,
			     const struct ts_backend_evidence *e, struct ts_backend_verdict *out)
{
	int want = TS_COLL_NONE;
	const char *what = q->dispatcher;
	long long any = 0;

	for (int k = 1; k < TS_COLL_COUNT; k++)
		any += e->coll[k];
	if (!strcmp(q->dispatcher, "flex") || q->dispatcher_backend[0]) {
		want = !strcmp(q->dispatcher_backend, "hybridep") ? TS_COLL_HYBRIDEP : TS_COLL_DEEPEP;
		what = want == TS_COLL_HYBRIDEP ? "flex/hybridep" : "flex/deepep";
	} else if (!strcmp(q->dispatcher, "alltoall")) {
		want = TS_COLL_ALLTOALL;
	} else if (!strcmp(q->dispatcher, "allgather")) {
		want = TS_COLL_ALLGATHER;
	}
	if (want == TS_COLL_NONE) {
		add_line(out, TS_CHECK_WARN, "dispatcher '%s' requested: unknown kind, not checked",
			 q->dispatcher);
		return;
	}
	if (e->coll[want] > 0)
		add_line(out, TS_CHECK_PASS, "dispatcher '%s' requested: %lld %s events (e.g. %s)",
			 what, (long long)e->coll[want], ts_coll_name(want), e->coll_example[want]);
	else if (!any)
		add_line(out, TS_CHECK_WARN, "dispatcher '%s' requested, but the trace has no "
			 "collectives (one GPU, or communication not traced: cannot tell)", what);
	else
		add_line(out, TS_CHECK_FAIL, "dispatcher '%s' requested, but the trace has no %s "
			 "(other collectives: %lld): a fallback or a different dispatcher ran", what,
			 ts_coll_name(want), any);
}

void ts_backend_judge(const struct ts_backend_request *q, const struct ts_backend_evidence *e,
		      struct ts_backend_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->status = TS_CHECK_SKIP;
	if (q->attention[0])
		judge_attention(q, e, out);
	if (q->graphs)
		judge_graphs(e, out);
	if (q->dispatcher[0] || q->dispatcher_backend[0])
		judge_dispatcher(q, e, out);
	if (out->status == TS_CHECK_SKIP) {
		int a = attn_seen(e);
		long long coll = 0;
		for (int k = 1; k < TS_COLL_COUNT; k++)
			coll += e->coll[k];
		add_line(out, TS_CHECK_SKIP, "nothing requested (no attention backend, graphs or "
			 "dispatcher in the contract or arguments block); the trace shows attention "
			 "%s%s%s%s, %lld graph launches, %lld collective events", ts_attn_name(a),
			 a ? " (e.g. " : "", a ? e->attn_example[a] : "", a ? ")" : "",
			 (long long)e->graph_launches, coll);
	}
}
