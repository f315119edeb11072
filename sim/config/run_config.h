#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace servesim {

// Everything one `servesim run` needs, typed and validated. Built from a JSON document whose
// keys are exactly these fields (unknown keys are errors); run_config_to_json writes it back
// with every default filled in (resolved_config.json).
struct RunConfig {
  std::string model = "llama-3-8b";   // short name or config.json path
  std::string hardware = "h100-sxm";  // short name or profile path
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t replicas = 1;
  std::string router = "round_robin";
  std::string weight_dtype = "auto";
  std::string kv_dtype = "auto";
  std::uint64_t seed = 0;
  std::optional<std::int64_t> max_len;  // default: the model's max_position_embeddings

  struct Memory {
    double mem_util = 0.9;
    std::optional<std::int64_t> kv_capacity_tokens;  // overrides the computed capacity
    std::optional<double> kv_capacity_gib;           // the same, as KV bytes per replica in GiB
    std::int64_t max_batched_tokens_reserve = 8192;  // activation reserve: see servesim kv
    double swap_space_gib = 4.0;  // host memory per GPU for preemption by swap (vLLM's default)
  } memory;

  struct Scheduler {
    std::string name = "vllm";
    std::int64_t max_num_seqs = 256;
    std::int64_t max_num_batched_tokens = 8192;
    std::int64_t batch_size = 8;           // static: requests per batch
    std::int64_t token_budget = 512;       // sarathi: tokens per iteration
    std::string preemption = "recompute";  // vllm: recompute or swap
  } scheduler;

  struct Allocator {
    std::string name = "paged";
    std::int64_t block_size = 16;
    double watermark = 0.01;
    std::string reservation = "max";  // contiguous: max, pow2, oracle or fixed
    std::int64_t fixed_reservation_tokens = 2048;
    std::string placement = "buddy";  // contiguous: buddy or first_fit
  } allocator;

  nlohmann::json workload;  // a workload spec object (presets already expanded)

  struct Slo {
    std::optional<double> ttft_s;
    std::optional<double> tpot_s;
  } slo;

  struct Output {
    bool request_records = true;
    bool iteration_records = true;
  } output;

  struct Engine {
    // Advance runs of decode iterations in bulk (same results, faster); see Replica.
    bool bulk_decode = true;
  } engine;
};

RunConfig run_config_from_json(const nlohmann::json& document, const std::string& source_name);
nlohmann::json run_config_to_json(const RunConfig& config);

}  // namespace servesim
