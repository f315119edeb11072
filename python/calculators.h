#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

namespace servesim::python {

namespace py = pybind11;

// servesim.kv's arguments, as `servesim kv` takes them.
struct KvArguments {
  std::optional<std::string> model;  // a name or a path to a config.json, or raw dimensions:
  std::optional<std::int64_t> layers, d_model, heads, kv_heads, kv_group, ffn_dim, vocab;
  std::optional<std::string> hardware;
  std::optional<std::int64_t> tokens;
  std::int64_t tp = 1, pp = 1;
  std::string weight_dtype = "auto", kv_dtype = "auto";
  // Unset: the engine's (vllm), as `servesim kv` and `servesim run` take them.
  std::optional<double> mem_util;
  std::optional<std::int64_t> max_len;
  std::optional<std::int64_t> max_batched_tokens, max_num_seqs;
};

// servesim.kv: the KV-cache calculator's document (`servesim kv --json`) as a dict.
py::dict kv(const KvArguments& arguments);

// servesim.roofline's arguments, as `servesim roofline` takes them.
struct RooflineArguments {
  std::string model = "llama-3-8b";
  std::string hardware = "h100-sxm";
  std::int64_t tp = 1, pp = 1;
  std::string weight_dtype = "auto", kv_dtype = "auto";
  std::optional<std::int64_t> decode_batch;
  std::int64_t context = 1024;
  std::optional<std::int64_t> prefill_tokens;
  std::int64_t prefill_context = 0;
  std::optional<std::int64_t> generate;
  // As `servesim roofline`'s --engine, --speculative, --dp, --enable-expert-parallel and
  // --expert-load-imbalance.
  std::optional<std::string> engine;
  std::optional<std::int64_t> speculative;
  std::int64_t dp = 1;
  bool expert_parallel = false;
  double expert_load_imbalance = 1.0;
};

// servesim.roofline: `servesim roofline --json`'s document as a dict, its operators as a
// DataFrame.
py::dict roofline(const RooflineArguments& arguments);

}  // namespace servesim::python
