/*
 * test_taxonomy.c - the kernel taxonomy on real kernel names.
 *
 * Every name below was copied from a trace in the shared corpus (folder in
 * the comment) or from the MUSA naming notes (shared/reference/musa.md);
 * the expected class is what the kernel is, judged by hand from its name.
 */
#include <string.h>
#include "harness.h"
#include "trainscope/taxonomy.h"

static enum ts_kclass kc(const char *s)
{
	return ts_kclass_of(s, strlen(s), 0, 0);
}

TEST(taxonomy_comm)
{
	/* hta/nccl_parser_config, hta/df_index_resolver, tracelens b200, mi300 */
	CHECK_I64(kc("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"), TS_KC_COMM);
	CHECK_I64(kc("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"), TS_KC_COMM);
	CHECK_I64(kc("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), TS_KC_COMM);
	CHECK_I64(kc("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), TS_KC_COMM);
	/* MUSA (musa.md) */
	CHECK_I64(kc("mcclKernel_AllReduce_RING_SIMPLE_Sum___mt_bfloat16"), TS_KC_COMM);
	CHECK_I64(kc("mcclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(mcclWorkElem)"), TS_KC_COMM);
	CHECK(ts_is_cpu_collective("gloo:all_reduce", 15));
	CHECK(ts_is_cpu_collective("nccl:all_gather", 15));
	CHECK(!ts_is_cpu_collective("c10d::allreduce_", 16));
	CHECK(!ts_is_cpu_collective("record_param_comms", 18));
}

TEST(taxonomy_gemm)
{
	/* tracelens h100, b200, mi300; hta amd_trace, nccl_parser_config */
	CHECK_I64(kc("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"), TS_KC_GEMM);
	CHECK_I64(kc("nvjet_tst_192x8_64x8_4x1_v_bz_TNT"), TS_KC_GEMM);
	CHECK_I64(kc("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f"), TS_KC_GEMM);
	CHECK_I64(kc("Cijk_Ailk_Bjlk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0_APM1"), TS_KC_GEMM);
	CHECK_I64(kc("ampere_sgemm_32x128_nt"), TS_KC_GEMM);
	CHECK_I64(kc("volta_sgemm_128x32_nn"), TS_KC_GEMM);
	CHECK_I64(kc("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4::Params)"), TS_KC_GEMM);
	CHECK_I64(kc("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"), TS_KC_GEMM);
	CHECK_I64(kc("cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1"), TS_KC_GEMM);
	CHECK_I64(kc("void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16, true, true, false>("), TS_KC_GEMM);
	/* MUSA muDNN (musa.md) */
	CHECK_I64(kc("void musa::dnn::(anonymous namespace)::batch_gemv_row_continuous_kernel<__half, float>"), TS_KC_GEMM);
}

TEST(taxonomy_attention)
{
	/* tracelens b200, PyTorch flash; the last is xformers/PyTorch
	 * memory-efficient attention as PyTorch names it */
	CHECK_I64(kc("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext"), TS_KC_ATTENTION);
	CHECK_I64(kc("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t"), TS_KC_ATTENTION);
	CHECK_I64(kc("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"), TS_KC_ATTENTION);
}

TEST(taxonomy_memory_ops)
{
	CHECK_I64(kc("Memcpy HtoD (Pinned -> Device)"), TS_KC_MEMCPY);
	CHECK_I64(kc("Memset (Device)"), TS_KC_MEMSET);
	CHECK_I64(ts_kclass_of("Memcpy1 HtoD (Pageable -> Device)", 33, 1, 0), TS_KC_MEMCPY);
	CHECK_I64(ts_kclass_of("MemTransfer(d2d)", 16, 1, 0), TS_KC_MEMCPY);
	/* category decides even when the name is odd */
	CHECK_I64(ts_kclass_of("weird copy", 10, 1, 0), TS_KC_MEMCPY);
	CHECK_I64(ts_memcpy_dir("Memcpy HtoD (Pinned -> Device)", 30), TS_MDIR_HTOD);
	CHECK_I64(ts_memcpy_dir("Memcpy DtoH (Device -> Pageable)", 32), TS_MDIR_DTOH);
	CHECK_I64(ts_memcpy_dir("Memcpy DtoD (Device -> Device)", 30), TS_MDIR_DTOD);
	CHECK_I64(ts_memcpy_dir("Memcpy1 HtoD (Pageable -> Device)", 33), TS_MDIR_HTOD);
	CHECK_I64(ts_memcpy_dir("MemTransfer(d2d)", 16), TS_MDIR_DTOD);
	CHECK_I64(ts_memcpy_dir("Memcpy2 AtomicAdd32 (Device -> Device)", 38), TS_MDIR_UNKNOWN);
}

TEST(taxonomy_other_classes)
{
	CHECK_I64(kc("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>"), TS_KC_OPTIMIZER);
	CHECK_I64(kc("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float>"), TS_KC_OPTIMIZER);
	CHECK_I64(kc("void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<float, float>(long, float const*)"), TS_KC_NORM);
	CHECK_I64(kc("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>("), TS_KC_NORM);
	CHECK_I64(kc("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct"), TS_KC_NORM);
	CHECK_I64(kc("triton_poi_fused_add_cos_sin_0"), TS_KC_TRITON);
	CHECK_I64(kc("triton__0d1d2d3d4d5d"), TS_KC_TRITON);
	CHECK_I64(kc("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >("), TS_KC_REDUCTION);
	CHECK_I64(kc("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*"), TS_KC_REDUCTION);
	CHECK_I64(kc("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&"), TS_KC_ELEMENTWISE);
	/* "{lambda()#2}" must not read as the LAMB optimizer */
	CHECK_I64(kc("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}"), TS_KC_ELEMENTWISE);
	CHECK_I64(kc("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*"), TS_KC_ELEMENTWISE);
	CHECK_I64(kc("at::cuda::(anonymous namespace)::spin_kernel(long)"), TS_KC_OTHER);
	CHECK(ts_kclass_is_compute(TS_KC_GEMM));
	CHECK(!ts_kclass_is_compute(TS_KC_COMM));
	CHECK(!ts_kclass_is_compute(TS_KC_MEMCPY));
	CHECK_STR(ts_kclass_name(TS_KC_ATTENTION), "attention");
}

TEST(taxonomy_launch_calls)
{
	CHECK(ts_is_launch_call("cudaLaunchKernel", 16));
	CHECK(ts_is_launch_call("cuLaunchKernelEx", 16));
	CHECK(ts_is_launch_call("musaLaunchKernel", 16));
	CHECK(ts_is_launch_call("cudaMemcpyAsync", 15));
	CHECK(ts_is_launch_call("cudaGraphLaunch", 15));
	CHECK(ts_is_graph_launch("musaGraphLaunch", 15));
	CHECK(!ts_is_launch_call("cudaStreamSynchronize", 21));
	CHECK(!ts_is_launch_call("cudaEventRecord", 15));
}

/* Issue 13: symmetric-memory and NVSHMEM collectives are communication;
 * fbgemm_gpu's embedding and sparse-permute kernels are their own class,
 * not GEMM ("fbgemm" is not "gemm"). Names from tracelens b200 and
 * hta/trace_filter unless noted. */
TEST(taxonomy_symm_mem_and_embedding)
{
	CHECK_I64(kc("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)"), TS_KC_COMM);
	/* PyTorch symmetric memory (names from its CUDA sources) */
	CHECK_I64(kc("void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16>(float**, float*, unsigned long, unsigned long, unsigned int**)"), TS_KC_COMM);
	CHECK_I64(kc("void c10d::symmetric_memory::two_shot_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16**, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long)"), TS_KC_COMM);
	CHECK_I64(kc("void nvshmemi_transfer_rma_kernel<(nvshmemi_op_t)0>(void*, void const*, unsigned long, int)"), TS_KC_COMM);
	CHECK_I64(kc("void fbgemm_gpu::permute_2D_data_kernel<true, int, int, float>(int, int, int, int const*, float const*, int const*, int const*, int const*, int*, float*)"), TS_KC_EMBEDDING);
	CHECK_I64(kc("void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, false, long, 2ul, 32ul>(at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>)"), TS_KC_EMBEDDING);
	CHECK_I64(kc("void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, 1ul, 16>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>)"), TS_KC_EMBEDDING);
	CHECK_I64(kc("void fbgemm_gpu::_block_bucketize_sparse_features_cuda_kernel1<int, int>(int, int, int const*, int, int const*, int const*, int*)"), TS_KC_EMBEDDING);
	CHECK_I64(kc("void permute_pooled_embs_kernel<float>(float const*, long const*, long const*, long const*, float*, long, long, long)"), TS_KC_EMBEDDING);
	/* fbgemm in a name does not make a GEMM; a real GEMM still is one */
	CHECK_I64(kc("void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2>)"), TS_KC_ELEMENTWISE);
	CHECK_I64(kc("fbgemm_gpu::f8f8bf16_rowwise_gemm_kernel"), TS_KC_GEMM); /* made-up name */
	/* RoPE is elementwise, not an embedding lookup (tracelens b200) */
	CHECK_I64(kc("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)"), TS_KC_ELEMENTWISE);
	CHECK_STR(ts_kclass_name(TS_KC_EMBEDDING), "embedding");
	CHECK(ts_kclass_is_compute(TS_KC_EMBEDDING));
}
