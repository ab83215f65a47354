/*
 * taxonomy.c - kernel classes from kernel names, in one ordered table.
 *
 * Why a table: every analysis (per-rank breakdown, top kernels, exposed
 * communication, the wall verdict) must agree on what a kernel is, and the
 * vendor naming keeps changing (ncclDevKernel_*, mcclKernel_*, nvjet_*,
 * Cijk_*, MemTransfer(...)). One ordered list of (class, how, pattern)
 * rules is easy to read, to document and to extend; order encodes the
 * precedence (a flash-attention kernel templated on cutlass types is
 * attention, not GEMM). Callers classify each interned name once.
 */
#include <string.h>
#include "trainscope/taxonomy.h"

/* M_GEMM: contains "gemm" other than as the tail of "fbgemm" (the fbgemm
 * libraries name every kernel fbgemm_*, most of which are not GEMMs). */
enum match { M_PREFIX, M_CONTAINS, M_GEMM };

struct rule {
	enum ts_kclass cls;
	enum match how;
	const char *pat;
};

/* First match wins; matching ignores ASCII case. A leading "void " (C++
 * demangled return type) is skipped before prefix rules. */
static const struct rule rules[] = {
	{ TS_KC_MEMCPY, M_PREFIX, "memcpy" },
	{ TS_KC_MEMCPY, M_PREFIX, "memtransfer" },
	{ TS_KC_MEMSET, M_PREFIX, "memset" },

	{ TS_KC_COMM, M_CONTAINS, "nccl" },
	{ TS_KC_COMM, M_CONTAINS, "rccl" },
	{ TS_KC_COMM, M_CONTAINS, "mccl" },
	{ TS_KC_COMM, M_CONTAINS, "hccl" },
	{ TS_KC_COMM, M_CONTAINS, "gloo" },
	{ TS_KC_COMM, M_CONTAINS, "cross_device_reduce" },
	{ TS_KC_COMM, M_CONTAINS, "all_reduce" },
	{ TS_KC_COMM, M_CONTAINS, "allreduce" },
	{ TS_KC_COMM, M_CONTAINS, "allgather" },
	{ TS_KC_COMM, M_CONTAINS, "all_gather" },
	{ TS_KC_COMM, M_CONTAINS, "reducescatter" },
	{ TS_KC_COMM, M_CONTAINS, "reduce_scatter" },
	{ TS_KC_COMM, M_CONTAINS, "alltoall" },
	{ TS_KC_COMM, M_CONTAINS, "all_to_all" },
	{ TS_KC_COMM, M_CONTAINS, "sendrecv" },
	{ TS_KC_COMM, M_CONTAINS, "multimem_" },     /* symmetric-memory (NVLS) collectives */
	{ TS_KC_COMM, M_CONTAINS, "one_shot_all" },
	{ TS_KC_COMM, M_CONTAINS, "two_shot_all" },
	{ TS_KC_COMM, M_CONTAINS, "nvshmem" },

	{ TS_KC_ATTENTION, M_CONTAINS, "flash" },
	{ TS_KC_ATTENTION, M_CONTAINS, "fmha" },
	{ TS_KC_ATTENTION, M_CONTAINS, "attention" },
	{ TS_KC_ATTENTION, M_CONTAINS, "attn" },
	{ TS_KC_ATTENTION, M_CONTAINS, "sdpa" },
	{ TS_KC_ATTENTION, M_CONTAINS, "scaled_dot_product" },

	{ TS_KC_ELEMENTWISE, M_CONTAINS, "rotary_embedding" }, /* RoPE, not a lookup */
	{ TS_KC_EMBEDDING, M_CONTAINS, "embedding" },   /* split_embedding_* (TBE), embedding_bag, permute_pooled_embs */
	{ TS_KC_EMBEDDING, M_CONTAINS, "_embs_" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "bounds_check_indices" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "fbgemm_gpu::permute" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "permute_2d_" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "bucketize_sparse_features" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "offsets_range" },
	{ TS_KC_EMBEDDING, M_CONTAINS, "jagged" },

	{ TS_KC_OTHER, M_CONTAINS, "hadamard" },
	{ TS_KC_OPTIMIZER, M_CONTAINS, "multi_tensor_apply" },
	{ TS_KC_OPTIMIZER, M_CONTAINS, "adam" },
	{ TS_KC_OPTIMIZER, M_CONTAINS, "fused_sgd" },
	{ TS_KC_OPTIMIZER, M_CONTAINS, "fused_lamb" },
	{ TS_KC_OPTIMIZER, M_CONTAINS, "adagrad" },

	{ TS_KC_NORM, M_CONTAINS, "layer_norm" },
	{ TS_KC_NORM, M_CONTAINS, "layernorm" },
	{ TS_KC_NORM, M_CONTAINS, "rms_norm" },
	{ TS_KC_NORM, M_CONTAINS, "rmsnorm" },
	{ TS_KC_NORM, M_CONTAINS, "batch_norm" },
	{ TS_KC_NORM, M_CONTAINS, "batchnorm" },
	{ TS_KC_NORM, M_CONTAINS, "group_norm" },
	{ TS_KC_NORM, M_CONTAINS, "groupnorm" },
	{ TS_KC_NORM, M_CONTAINS, "instance_norm" },
	{ TS_KC_NORM, M_CONTAINS, "gammabetabackward" },
	{ TS_KC_NORM, M_CONTAINS, "cudnn::bn_" },

	{ TS_KC_GEMM, M_PREFIX, "cijk_" },
	{ TS_KC_GEMM, M_PREFIX, "bmm_" },
	{ TS_KC_GEMM, M_GEMM, "gemm" },
	{ TS_KC_GEMM, M_CONTAINS, "gemv" },
	{ TS_KC_GEMM, M_CONTAINS, "cutlass" },
	{ TS_KC_GEMM, M_CONTAINS, "cublas" },
	{ TS_KC_GEMM, M_CONTAINS, "nvjet" },
	{ TS_KC_GEMM, M_CONTAINS, "xmma" },
	{ TS_KC_GEMM, M_CONTAINS, "gmma" },
	{ TS_KC_GEMM, M_CONTAINS, "mublas" },
	{ TS_KC_GEMM, M_CONTAINS, "matmul" },
	{ TS_KC_GEMM, M_CONTAINS, "splitkreduce" },
	{ TS_KC_GEMM, M_CONTAINS, "scudnn" },
	{ TS_KC_GEMM, M_CONTAINS, "dgrad" },
	{ TS_KC_GEMM, M_CONTAINS, "wgrad" },
	{ TS_KC_GEMM, M_CONTAINS, "fprop" },
	{ TS_KC_GEMM, M_CONTAINS, "winograd" },
	{ TS_KC_GEMM, M_CONTAINS, "convolution" },

	{ TS_KC_TRITON, M_PREFIX, "triton" },

	{ TS_KC_REDUCTION, M_CONTAINS, "reduce" },
	{ TS_KC_REDUCTION, M_CONTAINS, "softmax" },
	{ TS_KC_REDUCTION, M_CONTAINS, "cub::" },
	{ TS_KC_REDUCTION, M_CONTAINS, "radixsort" },
	{ TS_KC_REDUCTION, M_CONTAINS, "devicescan" },
	{ TS_KC_REDUCTION, M_CONTAINS, "topk" },
	{ TS_KC_REDUCTION, M_CONTAINS, "cumsum" },
	{ TS_KC_REDUCTION, M_CONTAINS, "argmax" },
	{ TS_KC_REDUCTION, M_CONTAINS, "_pool" },       /* max/avg pooling windows */
	{ TS_KC_REDUCTION, M_CONTAINS, "qparam" },

	{ TS_KC_ELEMENTWISE, M_CONTAINS, "elementwise" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "vectorized" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "unrolled" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "pointwise" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "copy" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "fill" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "transpose" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "dropout" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "index" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "scatter" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "gather" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "quant" },     /* (de)quantize, fp8 casts */
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "to_float" },
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "nchwtonhwc" },/* layout transforms */
	{ TS_KC_ELEMENTWISE, M_CONTAINS, "nhwctonchw" },
};

static const char *const kc_names[TS_KC_COUNT] = {
	"comm", "gemm", "attention", "memcpy", "memset", "norm", "optimizer",
	"reduction", "elementwise", "triton", "embedding", "other"
};

const char *ts_kclass_name(enum ts_kclass c)
{
	return (unsigned)c < TS_KC_COUNT ? kc_names[c] : "other";
}

int ts_kclass_is_compute(enum ts_kclass c)
{
	return c != TS_KC_COMM && c != TS_KC_MEMCPY && c != TS_KC_MEMSET;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* pat is lower-case. */
static int has_prefix(const char *s, size_t n, const char *pat)
{
	size_t m = strlen(pat);

	if (m > n)
		return 0;
	for (size_t i = 0; i < m; i++)
		if (lower((unsigned char)s[i]) != pat[i])
			return 0;
	return 1;
}

/* "gemm" anywhere but right after "fb". */
static int has_gemm(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (has_prefix(s + i, n - i, "gemm") &&
		    !(i >= 2 && lower((unsigned char)s[i - 2]) == 'f' &&
		      lower((unsigned char)s[i - 1]) == 'b'))
			return 1;
	return 0;
}

int ts_name_contains(const char *s, size_t n, const char *pat)
{
	size_t m = strlen(pat);

	if (m > n)
		return 0;
	for (size_t i = 0; i + m <= n; i++)
		if (lower((unsigned char)s[i]) == pat[0] && has_prefix(s + i, n - i, pat))
			return 1;
	return 0;
}

enum ts_kclass ts_kclass_of(const char *name, size_t n, int is_memcpy, int is_memset)
{
	const char *p = name;
	size_t pn = n;

	if (is_memcpy)
		return TS_KC_MEMCPY;
	if (is_memset)
		return TS_KC_MEMSET;
	if (has_prefix(p, pn, "void "))
		p += 5, pn -= 5;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		int hit = r->how == M_PREFIX ? has_prefix(p, pn, r->pat)
			  : r->how == M_GEMM ? has_gemm(p, pn)
					     : ts_name_contains(p, pn, r->pat);
		if (hit)
			return r->cls;
	}
	return TS_KC_OTHER;
}

static const char *const mdir_names[TS_MDIR_COUNT] = {
	"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "unknown"
};

const char *ts_mdir_name(enum ts_mdir d)
{
	return (unsigned)d < TS_MDIR_COUNT ? mdir_names[d] : "unknown";
}

enum ts_mdir ts_memcpy_dir(const char *name, size_t n)
{
	static const struct { const char *pat; enum ts_mdir d; } dirs[] = {
		{ "htod", TS_MDIR_HTOD }, { "h2d", TS_MDIR_HTOD },
		{ "dtoh", TS_MDIR_DTOH }, { "d2h", TS_MDIR_DTOH },
		{ "dtod", TS_MDIR_DTOD }, { "d2d", TS_MDIR_DTOD },
		{ "htoh", TS_MDIR_HTOH }, { "h2h", TS_MDIR_HTOH },
		{ "ptop", TS_MDIR_PTOP }, { "p2p", TS_MDIR_PTOP },
	};
	/* Only the head of the name carries the kind ("Memcpy1 HtoD (Pageable
	 * -> Device)"); "(Device -> Pinned)" must not be read as a kind. */
	size_t head = 0;

	while (head < n && name[head] != '(')
		head++;
	if (has_prefix(name, n, "memtransfer"))
		head = n < 24 ? n : 24;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (ts_name_contains(name, head, dirs[i].pat))
			return dirs[i].d;
	return TS_MDIR_UNKNOWN;
}

int ts_is_cpu_collective(const char *name, size_t n)
{
	static const char *const backends[] = {
		"gloo:", "nccl:", "rccl:", "mccl:", "hccl:", "xccl:", "ucc:", "mpi:"
	};

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (has_prefix(name, n, backends[i]))
			return 1;
	return 0;
}

int ts_is_graph_launch(const char *name, size_t n)
{
	return ts_name_contains(name, n, "graphlaunch");
}

int ts_is_launch_call(const char *name, size_t n)
{
	static const char *const calls[] = {
		"cudalaunchkernel", "culaunchkernel", "musalaunchkernel",
		"mulaunchkernel", "hiplaunchkernel", "hipextmodulelaunchkernel",
		"cudalaunchcooperativekernel", "musalaunchcooperativekernel",
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (has_prefix(name, n, calls[i]))
			return 1;
	return ts_name_contains(name, n, "memcpyasync") || ts_name_contains(name, n, "memsetasync") ||
	       ts_name_contains(name, n, "memcpywithstream") || ts_is_graph_launch(name, n);
}
