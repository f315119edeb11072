#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/serving_metrics.h"

namespace servesim {

// Engine settings a measured point states, under vLLM's engine-argument names (weight_dtype
// and kv_dtype are servesim's format names). Unset: the engine's, or servesim's, default.
struct EngineKnobs {
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<std::int64_t> max_model_len;
  std::optional<double> gpu_memory_utilization;
  std::optional<std::int64_t> block_size;
  std::optional<bool> enable_prefix_caching;
  std::optional<std::string> weight_dtype;
  std::optional<std::string> kv_dtype;
  // vLLM's compilation-config cudagraph_mode: NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or
  // FULL_AND_PIECEWISE (unset: the engine profile's graphs).
  std::optional<std::string> cudagraph_mode;
  // TensorRT-LLM's batch waiting (trtllm-serve's names; the sarathi scheduler's parameters).
  std::optional<std::int64_t> batch_wait_timeout_iters;
  std::optional<double> batch_wait_max_tokens_ratio;
  // vLLM's --enable-expert-parallel: the experts split over the TP ranks.
  std::optional<bool> enable_expert_parallel;
  bool operator==(const EngineKnobs&) const = default;
};

// One load stage of a shared-prefix workload (inference-perf's shared_prefix): requests at a
// constant `rate_per_s` for `duration_s`, each one of `groups` system prompts plus a question.
struct LoadStage {
  std::string workload;  // its name in the file ("codegen")
  std::int64_t stage = 0;
  double rate_per_s = 0;
  double duration_s = 0;
  std::int64_t groups = 1;
  std::int64_t users_per_group = 1;
  std::int64_t system_prompt_tokens = 0;
  std::optional<std::int64_t> question_tokens;          // as requested, before the template
  std::optional<std::int64_t> output_tokens_requested;  // as requested
  double prompt_tokens_mean = 0;                        // measured: as the client counted
  double output_tokens_mean = 0;                        // measured: as the client counted
  // The requests asked the engine to ignore end-of-sequence tokens, so each generated
  // output_tokens_requested (required with it). The client's output_tokens_mean may still
  // differ: inference-perf counts by re-tokenizing the streamed text.
  bool ignore_eos = false;
  std::int64_t requests_sent = 0;
  std::int64_t requests_completed = 0;

  // What each request generated on the engine: output_tokens_requested under ignore_eos, else
  // the measured mean.
  double generated_output_tokens() const;
  // The client's count of an output token the engine generated (1 without ignore_eos).
  double counted_per_generated_token() const;
};

// A static batch: `batch_size` requests of fixed lengths, all at t = 0.
struct StaticBatch {
  std::int64_t batch_size = 1;
  std::int64_t input_tokens = 1;
  std::int64_t output_tokens = 1;
};

// Every request sent at once: fixed prompts, output lengths exponential with mean
// `output_tokens_mean`, rounded and capped at `max_output_tokens` (Anyscale's benchmark).
struct BurstRequests {
  std::int64_t num_requests = 1;
  std::int64_t prompt_tokens = 1;
  double output_tokens_mean = 1;
  std::int64_t max_output_tokens = 1;
};

// A `vllm bench serve --save-result` file: its requests replayed with its arrival process.
struct BenchReplay {
  struct Lengths {
    std::int64_t prompt_tokens = 1;
    std::int64_t output_tokens = 1;
  };
  std::vector<Lengths> requests;  // input_lens / output_lens, or their means num_prompts times
  double request_rate_per_s = 0;  // +infinity: all at once
  double burstiness = 1;          // gamma shape of the gaps; 1 = Poisson
  std::optional<std::int64_t> max_concurrency;
};

// A closed loop, as `vllm bench serve --request-rate inf --max-concurrency N` runs it:
// `concurrency` users each send their next request as soon as the previous one finished (no
// think time), `num_prompts` requests in all; each request's prompt and output lengths uniform
// integers in [floor(random_range_ratio x L), L] for L = input_tokens and output_tokens, drawn
// independently (the random dataset of the benchmark client), every output generated in full
// (ignore_eos).
struct ClosedLoopRequests {
  std::int64_t concurrency = 1;
  std::int64_t num_prompts = 1;
  std::int64_t input_tokens = 1;
  std::int64_t output_tokens = 1;
  double random_range_ratio = 1.0;  // 1: every request exactly input_tokens / output_tokens

  // The smallest length drawn for a maximum of `tokens` (at least 1).
  std::int64_t shortest(std::int64_t tokens) const;
};

using ServingWorkload =
    std::variant<LoadStage, StaticBatch, BurstRequests, BenchReplay, ClosedLoopRequests>;

// One measured serving point: a deployment (model x hardware x TP x engine and its knobs), a
// workload, and what was measured.
struct ServingPoint {
  std::string source;   // the file, as given
  std::size_t row = 0;  // 1-based data row of a CSV file; 0 for a JSON file
  std::size_t line = 0;
  std::string model_name;  // as the file names it
  std::string model;       // what the run configuration's `model` takes
  std::string hardware;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::optional<std::string> engine;
  // Engine terms the setup sets over the engine (key path under the engine section, JSON
  // value), for a deployment that differs from the engine's defaults in what it measured.
  std::vector<std::pair<std::string, nlohmann::json>> engine_terms;
  EngineKnobs knobs;
  ServingWorkload workload;
  ServingMetrics measured;
  // What the deployment runs that servesim does not model (speculative decoding, another
  // attention backend, ...): such a point is reported with it and not predicted.
  std::string unsupported;

  // "codegen", "batch 896 x 128/128", "burst 1000 x 512/exp(128) <= 32", "replay 200",
  // "closed loop 16 x 1024/1024 (0.8)".
  std::string workload_label() const;
  // "FILE row 3" or "FILE", for messages.
  std::string where() const;
  // The arrival rate, when the workload has one (+infinity: all at once).
  std::optional<double> rate_per_s() const;
};

// Where the readers find what a file leaves out, and what the command line imposes.
struct ServingPointOptions {
  std::filesystem::path data_root;             // models/, hw_profiles/, validation/setups/
  std::optional<std::filesystem::path> setup;  // --setup: for every file
  std::optional<std::string> hardware;         // --hw: overrides every point's hardware
  std::optional<std::string> engine;           // --engine: overrides every point's engine
};

// Reads a measured file: a CSV in the format of docs/validation.md (serving under load, static
// batches or a burst, told by the header), or a `vllm bench serve --save-result` JSON file.
// Columns the file lacks come from its setup (options.setup, else
// <data_root>/validation/setups/<file stem>.json when it exists); columns in the file override
// the setup. Errors (InputError) name the file, the row or line and the column: a required
// column missing from file and setup, a value that is not a number of the expected kind, a
// model that is neither shipped nor a known Hugging Face id, an unknown setup key.
std::vector<ServingPoint> read_serving_points(const std::filesystem::path& file,
                                              const ServingPointOptions& options);

// The setup file read_serving_points would use for `file`, if any.
std::optional<std::filesystem::path> setup_file_for(const std::filesystem::path& file,
                                                    const ServingPointOptions& options);

}  // namespace servesim
