#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.h"

namespace servesim {

// Prefill/decode disaggregation (docs/disaggregation.md): the `disaggregation` section. Each
// role is a pool of replicas with its own keys of the top level (role_keys()); what a role
// leaves out it takes from the top level. kv_transfer says what carries the KV between them.
struct DisaggregationConfig {
  nlohmann::json prefill = nlohmann::json::object();  // the role sections, keys checked
  nlohmann::json decode = nlohmann::json::object();
  struct KvTransfer {
    // "nic": each GPU's network port (the hardware profile's inter-node link); "nvlink": the
    // GPU link inside a node; "auto": nvlink when every GPU of both pools fits one node of
    // one hardware, else nic.
    std::string link = "auto";
    std::optional<double> bandwidth_bytes_per_s;  // per GPU and direction; default: the link's
    std::optional<double> latency_s;              // per transfer; default: the profile's
    // Per block piece each receiving GPU reads (one descriptor: a block of one sending GPU's
    // shard), beside the bytes; a block has more pieces when the prefill TP cuts the KV finer.
    double block_overhead_s = 0;
    // How long the prefill side keeps a prompt's KV for a decode side that has not read it
    // (vLLM's VLLM_NIXL_ABORT_REQUEST_TIMEOUT, 480 s); then it frees the blocks and the decode
    // side computes the prompt itself. 0: kept until read.
    double abort_timeout_s = 480;
    // Each layer's KV leaves as soon as the prefill has computed it (LMCache's and Mooncake's
    // layer-wise mode), instead of the whole cache after the prefill (vLLM's NIXL connector).
    bool layerwise = false;
    // When the decode side sets the prompt's KV aside: "pull_after_prefill" (vLLM's NIXL
    // connector, TensorRT-LLM: after the prefill, then it pulls) or "reserve_before_prefill"
    // (SGLang: before the prefill starts). Assembly fills it from the engine profile's
    // kv_handoff.
    std::string handoff = "pull_after_prefill";
  } kv_transfer;
  // Selective disaggregation (llm-d's): a prompt of at most this many tokens is prefilled on
  // the decode replica that serves it, with no transfer; 0 (default): every prompt is handed
  // off.
  std::int64_t local_prefill_max_tokens = 0;
};

// The top-level keys a role section may set.
const std::vector<std::string>& role_keys();

// Reads the section: both roles, each with replicas (at least 1) and only role_keys().
DisaggregationConfig read_disaggregation_config(JsonObjectReader& section);
nlohmann::json disaggregation_config_to_json(const DisaggregationConfig& config);

// The configuration document of one role: `document` without its disaggregation section, the
// role's keys in place of the top level's (an object key merged key by key, so that a role's
// scheduler.max_num_seqs keeps the top level's scheduler; one naming another policy replaces
// the top level's section whole).
nlohmann::json role_document(const nlohmann::json& document, const nlohmann::json& role);

}  // namespace servesim
