#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "validation/half_precision.h"
#include "validation/quantized_formats.h"

namespace servesim::validation {

enum class HarnessCommand { Help, Bandwidth, Gemm, Attention, Replay, QuantGemm, MoeGemm };

// How `gemm` times a GEMM (README.md, "Timing"):
//   PerCall  one call between two CUDA events, the GPU idle before it: the launch and cuBLAS's
//            host work fall inside the interval (the harness's original timing, the default);
//   Stream   back-to-back calls on one stream, a sample the mean of `calls` of them: the host
//            work overlaps the GPU unless it takes longer than the kernels;
//   Graph    the same calls captured once in a CUDA graph and replayed back to back, as engines
//            replay their decode steps: no host work per call, only the GPU's own gaps.
enum class TimingMode { PerCall, Stream, Graph };
// "per_call", "stream", "graph": the values of --timing and of the records' `timing`.
std::string_view timing_mode_name(TimingMode mode) noexcept;

// The parsed command line of servesim-harness. Fields a subcommand does not take keep their
// defaults.
struct HarnessOptions {
  HarnessCommand command = HarnessCommand::Help;
  std::string out_path;  // empty: standard output
  int repeats = 20;      // timed repeats after warm-up (replay default 5)

  std::uint64_t size_bytes = 64ull << 20;  // bandwidth

  std::string model;  // gemm, attention, replay
  std::int64_t tp = 1;
  std::int64_t pp = 1;  // replay
  ElementType dtype = ElementType::BF16;
  // gemm --dtype fp8: e4m3 activations and weights with per-tensor fp32 scales through cuBLASLt,
  // `dtype` (bf16) the output. The other subcommands refuse it (quant-gemm: --formats fp8).
  bool fp8 = false;

  TimingMode timing = TimingMode::PerCall;  // gemm
  int calls = 20;                           // gemm, stream and graph timing: calls per sample

  // gemm; quant-gemm defaults to 1,2,4,8,16 and moe-gemm to 1,4,16,64,256.
  std::vector<std::int64_t> tokens{1, 16, 128, 1024};
  std::vector<std::int64_t> batch{1, 8, 32};                  // decode attention
  std::vector<std::int64_t> context_tokens{512, 2048};        // decode attention
  std::int64_t block_size = 16;                               // attention, replay
  std::vector<std::int64_t> chunk_tokens{128, 512};           // prefill attention
  std::vector<std::int64_t> prefill_context_tokens{0, 1024};  // prefill attention

  std::string iterations_path;  // replay
  std::size_t max_iterations = 50;
  std::optional<std::int64_t> decode_context_tokens;

  std::vector<WeightFormat> formats{WeightFormat::Int4, WeightFormat::Fp8};  // quant-gemm
  std::int64_t group_size = 128;                                             // quant-gemm, int4

  std::vector<std::int64_t> tile_rows{16};  // moe-gemm
  std::uint64_t seed = 1;                   // moe-gemm routing
};

// quant-gemm runs CUDA-core kernels meant for GEMV-sized GEMMs: at most this many tokens.
inline constexpr std::int64_t kMaxQuantGemmTokens = 64;
// moe-gemm numbers routed rows with 32-bit integers: at most this many tokens.
inline constexpr std::int64_t kMaxMoeTokens = 65536;

// Throws servesim::UsageError naming the subcommand, flag and what was expected.
HarnessOptions parse_harness_args(std::span<const std::string_view> args);

std::string_view harness_usage() noexcept;

}  // namespace servesim::validation
