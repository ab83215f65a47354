/*
 * taxonomy.h - the one kernel taxonomy: which class a GPU activity (kernel,
 * memcpy, memset) or a CPU-side collective span belongs to.
 *
 * The rules are a single ordered table (src/profile/taxonomy.c, documented
 * in docs/trace-analysis.md); the first rule that matches decides. Matching
 * is case-insensitive on the name. Pure functions: no allocation, no state.
 */
#ifndef TRAINSCOPE_TAXONOMY_H
#define TRAINSCOPE_TAXONOMY_H

#include <stddef.h>

enum ts_kclass {
	TS_KC_COMM = 0,     /* nccl/rccl/mccl/hccl/gloo kernels, collectives, symmetric-memory (multimem_*) and NVSHMEM */
	TS_KC_GEMM,         /* cutlass, cublas, nvjet, xmma/gmma, Cijk_, muBLAS/muDNN gemm */
	TS_KC_ATTENTION,    /* flash, fmha, efficient attention, SDPA */
	TS_KC_MEMCPY,       /* Memcpy..., MemTransfer... (direction: ts_memcpy_dir) */
	TS_KC_MEMSET,       /* Memset... */
	TS_KC_NORM,         /* layer/rms/batch/group norm */
	TS_KC_OPTIMIZER,    /* multi_tensor_apply, fused Adam/SGD/Lamb */
	TS_KC_REDUCTION,    /* reduce_kernel, softmax, cub scans/sorts */
	TS_KC_ELEMENTWISE,  /* elementwise/vectorized/unrolled, copies, fills */
	TS_KC_TRITON,       /* triton_* generated kernels */
	TS_KC_EMBEDDING,    /* embedding lookups and sparse-feature permutes (fbgemm_gpu TBE, permute_2D, bucketize) */
	TS_KC_OTHER,
	TS_KC_COUNT
};

/* Short lower-case name ("comm", "gemm", ...). */
const char *ts_kclass_name(enum ts_kclass c);

/* 1 for the classes that count as compute (not comm, memcpy, memset). */
int ts_kclass_is_compute(enum ts_kclass c);

/*
 * Class of a device activity by its name. `is_memcpy`/`is_memset` say the
 * event's category already marks it as a copy/set (gpu_memcpy, Memcpy...);
 * the name decides otherwise.
 */
enum ts_kclass ts_kclass_of(const char *name, size_t n, int is_memcpy, int is_memset);

/* Directions of a copy, parsed from "Memcpy HtoD (...)", "Memcpy1 DtoH",
 * "MemTransfer(d2d)" and friends. */
enum ts_mdir {
	TS_MDIR_HTOD = 0,
	TS_MDIR_DTOH,
	TS_MDIR_DTOD,
	TS_MDIR_HTOH,
	TS_MDIR_PTOP,
	TS_MDIR_UNKNOWN,
	TS_MDIR_COUNT
};

const char *ts_mdir_name(enum ts_mdir d); /* "HtoD", ... */
enum ts_mdir ts_memcpy_dir(const char *name, size_t n);

/*
 * 1 when a CPU-side span is a collective in flight: a user annotation named
 * "<backend>:<op>" with backend gloo/nccl/rccl/mccl/hccl/xccl/ucc/mpi
 * ("gloo:all_reduce", "nccl:all_gather"). The short c10d enqueue ops
 * (c10d::allreduce_) and record_param_comms are not: they do not span the
 * wait.
 */
int ts_is_cpu_collective(const char *name, size_t n);

/* 1 when name[0..n) contains pat, ASCII case-insensitively (pat lower case). */
int ts_name_contains(const char *name, size_t n, const char *pat);

/* 1 when a runtime/driver call launches a CUDA or MUSA graph. */
int ts_is_graph_launch(const char *name, size_t n);

/* 1 when a runtime/driver call launches device work (kernel, copy, set,
 * graph): cudaLaunchKernel*, cuLaunchKernel*, musaLaunchKernel*,
 * muLaunchKernel*, hipLaunchKernel, hipExtModuleLaunchKernel,
 * *MemcpyAsync, *MemsetAsync, *GraphLaunch. */
int ts_is_launch_call(const char *name, size_t n);

#endif
