#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

// What the serving engine adds to, or takes from, the kernels' roofline times: the engine's
// host work, its CUDA graphs and the kernels it picks. A value-initialised EngineCosts is the
// bare roofline (no host time, every factor 1, no graphs and no launch floor), which is what
// per-kernel predictions use; an engine profile (engines/*.json) fills it in.
struct EngineHostCosts {
  // Per scheduling call: scheduling and input preparation. An engine that schedules several
  // decode steps at once (vLLM 0.6's multi-step) pays it once per `decode_steps_per_schedule`
  // decode-only steps.
  double schedule_s = 0;
  double step_s = 0;          // per forward step: sampling, output processing, streaming
  double per_sequence_s = 0;  // per request in the step (input rows, sampling, detokenizing)
  double per_token_s = 0;     // per token the step computes (input preparation of prompts)
  // Host work that runs while the GPU computes the previous step (vLLM's async scheduling,
  // SGLang's overlap scheduler, a C++ runtime): the step takes max(device, host) instead of
  // device + host.
  bool overlaps_device = false;
  // CPU time to launch one kernel outside a CUDA graph (eager PyTorch). A step the graphs do
  // not cover cannot run faster than its launches: its device time is at least kernels x this.
  double kernel_launch_s = 0;
  std::int64_t decode_steps_per_schedule = 1;
  // Per request, the API server's part of its latency outside the engine loop: tokenizing the
  // prompt and handing it to the engine, and taking the tokens back (detokenizing, streaming).
  // It occupies neither the GPU nor the engine's step, and adds once to TTFT and E2E: the
  // engine sees the request this long after the client sent it.
  double frontend_latency_s = 0;
};

// Factors on the hardware's kernel ceilings for the kernels this engine runs: a factor
// multiplies the time of that class of kernels (1: the hardware profile's calibrated kernel).
struct EngineKernelFactors {
  std::string attention_backend;  // which kernels: "flash_attn", "flashinfer", ... (descriptive)
  double gemm = 1;
  // The factor on the GEMMs' memory side alone (the bandwidth at which they stream weights),
  // when it differs from the compute side's: an engine whose GEMM kernels are slower than the
  // profile's at the tensor cores may stream weights as fast. Empty: `gemm` for both.
  std::optional<double> gemm_memory;
  double decode_attention = 1;
  double prefill_attention = 1;
  // Latency of one small all-reduce (a custom one-shot all-reduce over NVLink, as vLLM and
  // TensorRT-LLM have); empty: the hardware profile's collective latency (NCCL).
  std::optional<double> all_reduce_latency_s;
  // Residual add and RMSNorm fused in one kernel (2 normalisation kernels per layer reading
  // and writing the hidden state twice, not 4 with the adds apart).
  bool fused_norms = false;
  // Decode attention on CUDA cores (TensorRT-LLM's masked multi-head attention kernel, one
  // thread block per sequence and query head), when core_efficiency > 0: its compute side
  // runs 4 x query width FLOPs per key and layer at core_efficiency x the fp32 (non-tensor)
  // peak, plus core_sequence_keys keys' worth of fixed work per sequence (loading the query,
  // the softmax reductions, writing the output), instead of the hardware's tensor-core
  // ceilings. Models with at least tensor_core_min_group query heads per KV head run a
  // tensor-core GQA kernel (XQA) instead and keep the hardware's ceilings; 0: none does.
  double decode_attention_core_efficiency = 0;
  double decode_attention_core_sequence_keys = 0;
  std::int64_t decode_attention_tensor_core_min_group = 0;
  // Per-tensor FP8 GEMMs of at most this many tokens run on the CUDA cores, a GEMV
  // (TensorRT-LLM's cudaCoreGemm: 4); 0: on the tensor cores at every m (vLLM's CUTLASS
  // scaled_mm, 64 x 64 tiles at small m).
  std::int64_t fp8_cuda_core_gemm_max_tokens = 0;
};

struct EngineCosts {
  EngineHostCosts host;
  EngineKernelFactors kernels;
  // Batch sizes (tokens of a step) captured as CUDA graphs, ascending. A step of n tokens
  // with n at most the largest runs the graph of the smallest size >= n: its GEMMs and
  // elementwise kernels compute the padded size, and it launches no kernels from the CPU.
  // Empty: no graphs (every step is launched kernel by kernel).
  std::vector<std::int64_t> cuda_graph_capture_sizes;
  // Whether steps with prompt tokens run graphs too (vLLM V1's piecewise graphs); otherwise
  // only decode-only steps do.
  bool cuda_graphs_mixed_batches = false;
  // The largest graph is at most this many times the scheduler's max_num_seqs (vLLM V1
  // captures up to min(2 x max_num_seqs, 512)); empty: the list as it stands. Applied when a
  // run's configuration is assembled, which writes the list it leaves.
  std::optional<double> max_capture_size_per_max_num_seqs;
};

}  // namespace servesim
