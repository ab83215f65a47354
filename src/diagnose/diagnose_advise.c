/*
 * diagnose_advise.c - candidate changes for a wall, from the playbook.
 *
 * The candidates come from the reference workflow (Megatron Bridge MoE
 * optimisation guide §5 "Retune one variable at a time", the MUSA notes and
 * the PyTorch performance guidance). They are hypotheses: every one is
 * printed as a candidate to measure with `trainscope ab`, never as a
 * default. Vendor matters: MUSA behaviour is never inferred from CUDA
 * (flash attention, collective library and graph names differ), so each
 * entry names the knob of the vendor the trace came from. Model kind
 * matters too: the MoE knobs (expert parallelism, token dispatchers,
 * grouped expert GEMMs, router fusion, moe_* recompute and graph scopes)
 * live in their own table, used only with evidence that the model is MoE
 * (d->moe_evidence); a dense model never sees them.
 */
#include <string.h>
#include "trainscope/diagnose.h"

struct advice {
	unsigned walls;    /* bit per enum ts_wall; 0 = no wall could be named */
	unsigned vendors;  /* bit per enum ts_vendor_kind; 0 = any */
	const char *title;
	const char *detail;
};

#define W(x) (1u << (x))
#define V(x) (1u << (x))
#define GPU (V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_ROCM) | V(TS_DIAG_VENDOR_MUSA))

static const struct advice table[] = {
	/* data */
	{ W(TS_WALL_DATA), 0, "more data-loader workers",
	  "DataLoader(num_workers=N, persistent_workers=True, prefetch_factor=2..4): move batch "
	  "preparation off the training process; training-equivalent when the sample order is kept "
	  "(same sampler and seed)" },
	{ W(TS_WALL_DATA), GPU, "pinned host memory and non-blocking copies",
	  "DataLoader(pin_memory=True) and tensor.to(device, non_blocking=True) so host-to-device "
	  "copies overlap compute" },
	{ W(TS_WALL_DATA), 0, "prefetch or cache the slow samples",
	  "when the stalls come at a fixed period: find the sample or shard that is slow to read (storage, "
	  "decompression, tokenisation) and pre-tokenise or cache it (Megatron: preprocessed "
	  "indexed datasets instead of on-the-fly tokenisation)" },
	/* straggler */
	{ W(TS_WALL_STRAGGLER), 0, "find what the slow rank does differently",
	  "compare the straggler's trace with a fast rank's (trainscope diff FAST SLOW, the two "
	  "ranks' files): a gap "
	  "with no operator points at the host (Python, GC, I/O, CPU contention, NUMA binding), "
	  "longer kernels at the device (clocks, thermal throttling: check telemetry)" },
	{ W(TS_WALL_STRAGGLER), 0, "manual garbage collection",
	  "Megatron --manual-gc --manual-gc-interval 10 aligns Python GC pauses across ranks "
	  "instead of letting one rank pause while the others wait" },
	{ W(TS_WALL_STRAGGLER), 0, "pin CPU threads and NUMA",
	  "bind each rank to its NUMA node (numactl / torchrun --local-ranks-filter, "
	  "OMP_NUM_THREADS per rank) so ranks do not compete for cores" },
	{ W(TS_WALL_STRAGGLER), V(TS_DIAG_VENDOR_CUDA), "check the straggler's GPU",
	  "nvidia-smi dmon -s pucvmet during the run: clocks, power cap, temperature and PCIe/NVLink "
	  "errors on the slow rank's GPU (trainscope watch records them)" },
	{ W(TS_WALL_STRAGGLER), V(TS_DIAG_VENDOR_MUSA), "check the straggler's GPU",
	  "mthreads-gmi during the run: utilisation, memory and temperature of the slow rank's GPU "
	  "(MTML has no throttle reasons; compare clocks with mtmlGpuGetClock)" },
	/* communication */
	{ W(TS_WALL_COMM), 0, "overlap gradient reduction and parameter gathers",
	  "Megatron --overlap-grad-reduce --overlap-param-gather (distributed optimizer); DDP: "
	  "bucket_cap_mb tuned so the first bucket is ready early; one overlap mode at a time" },
	{ W(TS_WALL_COMM), 0, "keep the hot collectives inside the fast link",
	  "place TP inside the NVLink/MTLink domain, PP across nodes" },
	{ W(TS_WALL_COMM), V(TS_DIAG_VENDOR_CUDA), "NCCL settings",
	  "CUDA_DEVICE_MAX_CONNECTIONS=1 for TP overlap, NCCL_NVLS_ENABLE, NCCL_IB_* for the fabric; "
	  "with expandable segments and graphs NCCL_GRAPH_REGISTER=0" },
	{ W(TS_WALL_COMM), V(TS_DIAG_VENDOR_MUSA), "MCCL settings",
	  "backend \"mccl\"; MCCL_PROTOS, MCCL_ALGOS, MCCL_BUFFSIZE (Moore Threads scripts use 2, 1, "
	  "20971520), MCCL_IB_HCA / MCCL_IB_GID_INDEX for RDMA; TORCH_MCCL_* mirrors of the TORCH_NCCL_* "
	  "knobs; semantics are not documented publicly, so measure each" },
	{ W(TS_WALL_COMM), V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_MUSA), "TP communication overlap",
	  "--tp-comm-overlap (Transformer Engine userbuffers; MT-TransformerEngine on MUSA)" },
	/* host / launch */
	{ W(TS_WALL_HOST), V(TS_DIAG_VENDOR_CUDA), "CUDA graphs",
	  "--cuda-graph-impl local|transformer_engine with scopes attn, mlp (full_iteration needs "
	  "static shapes and check_for_nan_in_loss off); time only post-capture iterations and check "
	  "that replay (cudaGraphLaunch) shows in the trace" },
	{ W(TS_WALL_HOST), V(TS_DIAG_VENDOR_MUSA), "MUSA graphs",
	  "torch.musa.MUSAGraph capture of the static part of the step; check that musaGraphLaunch "
	  "appears in the trace (replay, not only capture)" },
	{ W(TS_WALL_HOST) | W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_ROCM) |
	  V(TS_DIAG_VENDOR_CPU), "torch.compile",
	  "torch.compile(model) (mode=\"max-autotune-no-cudagraphs\" first, then \"reduce-overhead\" for "
	  "graphs) to fuse small operators and cut launches; compare loss curves for equivalence" },
	{ W(TS_WALL_HOST), 0, "fewer, larger kernels",
	  "fused kernels: --cross-entropy-loss-fusion, fused optimizer (AdamW foreach/fused=True); "
	  "larger micro-batch if memory allows" },
	{ W(TS_WALL_HOST), 0, "keep Python and GC off the critical path",
	  "--manual-gc, no .item() / host syncs inside the step, data loading in workers" },
	/* memory */
	{ W(TS_WALL_MEMORY), 0, "selective recompute before full",
	  "--recompute-granularity selective --recompute-modules core_attn (then layernorm); full "
	  "recompute only when selective does not fit; HFU rises, MFU should not drop much" },
	{ W(TS_WALL_MEMORY), GPU, "remove host-device copies from the step",
	  "memcpy time in the step: look for .cpu()/.item()/.numpy() and pageable copies; use pinned "
	  "buffers and non_blocking=True" },
	{ W(TS_WALL_MEMORY), V(TS_DIAG_VENDOR_CUDA), "allocator settings",
	  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation (set "
	  "NCCL_GRAPH_REGISTER=0 with CUDA graphs)" },
	{ W(TS_WALL_MEMORY), V(TS_DIAG_VENDOR_MUSA), "allocator settings",
	  "PYTORCH_MUSA_ALLOC_CONF=expandable_segments:True (same grammar as CUDA's)" },
	{ W(TS_WALL_MEMORY), 0, "offload last",
	  "fine-grained activation offload (--fine-grained-activation-offloading) or optimizer offload "
	  "only after recompute and parallelism are insufficient" },
	/* compute */
	{ W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_CUDA), "flash attention",
	  "SDPA flash backend needs sm80+ (A100, H100: FA2; H100/H200: FA3 via flash_attn_interface or "
	  "Transformer Engine; B200: cuDNN/TE); check the attention kernel name in the top kernels" },
	{ W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_MUSA), "flash attention",
	  "SDPA flash/math backends on MUSA are tested for arch >= mp_22 (S4000+); the flash_attn API "
	  "(MATE) needs MUSA Toolkit >= 4.3.6, torch_musa >= 2.7 and mp_31 (S5000) only; MT-MegatronLM "
	  "uses --use-flash-attn --transformer-impl transformer_engine" },
	{ W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_MUSA), "lower precision",
	  "BF16 everywhere first; FP8 (--fp8-format hybrid --fp8-recipe delayed|blockwise|mxfp8; Hopper "
	  "and Blackwell on CUDA, S5000/mp_31 only on MUSA) with the optimizer states kept in FP32 - a "
	  "numerical change: gate it with trainscope's equivalence checks" },
	{ W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_CPU), "CPU threads",
	  "torch.set_num_threads / OMP_NUM_THREADS to the physical cores of the rank (the run may be "
	  "limited to one thread), and oneDNN/MKL builds of the heavy operators" },
	{ W(TS_WALL_COMPUTE), 0, "larger GEMMs",
	  "bigger micro-batch or sequence per step, fewer model-parallel splits (minimal TP/PP that "
	  "fits), so each kernel does more work per launch" },
	{ 0, 0, "collect a trace first",
	  "no wall can be named from this evidence; add the profiler schedule listed under missing "
	  "evidence and run diagnose again" },
};

/* Only for a model shown to be MoE (d->moe_evidence), after the entries of
 * the same wall in table[]. */
static const struct advice moe_table[] = {
	/* communication */
	{ W(TS_WALL_COMM), 0, "MoE: keep expert parallelism inside the fast link",
	  "place EP x TP inside the NVLink/MTLink domain; prefer EP over extra TP for the experts" },
	{ W(TS_WALL_COMM), V(TS_DIAG_VENDOR_CUDA), "MoE: token dispatcher",
	  "--moe-token-dispatcher-type alltoall|flex with DeepEP/HybridEP; CUDA_DEVICE_MAX_CONNECTIONS=32 "
	  "for EP-overlap recipes" },
	{ W(TS_WALL_COMM), V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_MUSA),
	  "MoE: expert-parallel communication overlap",
	  "--overlap-moe-expert-parallel-comm (needs VPP when PP > 1)" },
	/* host / launch */
	{ W(TS_WALL_HOST), V(TS_DIAG_VENDOR_CUDA), "MoE: graph the router and dispatch preprocessing",
	  "--cuda-graph-impl local|transformer_engine with the scopes moe_router and moe_preprocess "
	  "besides attn and mlp" },
	{ W(TS_WALL_HOST), 0, "MoE: fused expert kernels",
	  "--moe-grouped-gemm, --moe-permute-fusion, --moe-router-fusion: fewer, larger kernels for "
	  "the experts, the token permutation and the router" },
	/* memory */
	{ W(TS_WALL_MEMORY), 0, "MoE: recompute the expert activations",
	  "--recompute-modules moe_act (after core_attn and layernorm) before full recompute" },
	/* compute */
	{ W(TS_WALL_COMPUTE), V(TS_DIAG_VENDOR_CUDA) | V(TS_DIAG_VENDOR_MUSA),
	  "MoE: keep the router in FP32",
	  "with the lower-precision (FP8) candidate, keep the router in FP32 as well as the optimizer "
	  "states" },
};

/* Append the entries of tab that match the wall and vendor. */
static int advise_from(struct ts_diag *d, const struct advice *tab, size_t n, int wall_known,
		       enum ts_wall wall, enum ts_vendor_kind vendor)
{
	for (size_t i = 0; i < n; i++) {
		const struct advice *a = &tab[i];
		struct ts_diag_item it;

		if (wall_known ? !(a->walls & W(wall)) : a->walls != 0)
			continue;
		if (a->vendors && vendor != TS_DIAG_VENDOR_UNKNOWN && !(a->vendors & V(vendor)))
			continue;
		/* vendor unknown: only the vendor-neutral entries */
		if (a->vendors && vendor == TS_DIAG_VENDOR_UNKNOWN)
			continue;
		it.title = (char *)a->title;
		it.detail = (char *)a->detail;
		it.level = TS_REPORT_INFO;
		if (TS_VEC_PUSH(d->advice, it)) {
			d->failed = 1;
			return TS_ENOMEM;
		}
	}
	return 0;
}

int ts_diag_advise(struct ts_diag *d, int wall_known, enum ts_wall wall,
		   enum ts_vendor_kind vendor)
{
	int rc = advise_from(d, table, sizeof(table) / sizeof(table[0]), wall_known, wall, vendor);

	if (!rc && d->moe_evidence)
		rc = advise_from(d, moe_table, sizeof(moe_table) / sizeof(moe_table[0]), wall_known,
				 wall, vendor);
	return rc;
}
