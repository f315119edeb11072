#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.h"

namespace servesim {

// How a speculating engine proposes its draft tokens (vLLM's speculative_config "method").
enum class SpeculativeMethod {
  DraftModel,  // a smaller model of the same vocabulary, k sequential decode steps
  Eagle,       // an EAGLE head: one decoder layer on the target's hidden states
  Ngram,       // prompt lookup: no GPU work
  Mtp,         // the target's own multi-token-prediction (next-n) layers, DeepSeek-V3's
};
std::string_view method_name(SpeculativeMethod method) noexcept;

// The `speculative` section of a run configuration: vLLM's --speculative-config keys
// (method, num_speculative_tokens, model) plus the acceptance servesim draws from, which
// depends on the data and the draft and is therefore given rather than modelled.
struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::Ngram;
  std::int64_t num_speculative_tokens = 0;  // k: draft tokens per verification step
  std::optional<std::string> model;         // the draft model (draft_model), or EAGLE head
  // Per draft position, the probability that the draft token is accepted given that every
  // one before it was; positions past the list use its last value (one value: i.i.d.).
  std::vector<double> acceptance_rate;
  // vLLM's draft_tensor_parallel_size: the draft model's TP, which must be the target's (the
  // draft is sharded as the target; vLLM's default).
  std::optional<std::int64_t> draft_tensor_parallel_size;
  // vLLM's keys that leave servesim's simulation as it is, kept as given so that
  // resolved_config.json records them: prompt_lookup_max and prompt_lookup_min (ngram: the
  // match window, whose effect is the acceptance given), revision, code_revision,
  // disable_logprobs.
  nlohmann::json recorded = nlohmann::json::object();
};

// Reads and validates the section (every key named in errors under the reader's prefix):
// k >= 1, a method vLLM names ("draft_model", "eagle", "eagle3", "ngram", "mtp",
// "deepseek_mtp"; without one, a `model` means draft_model), `model` for a draft model and
// only for methods that take one, acceptance rates in [0, 1). vLLM's other keys are taken as
// SpeculativeConfig says; those servesim would have to model and does not (quantization,
// disable_by_batch_size, enforce_eager, speculative_token_tree, ...) are refused by name.
SpeculativeConfig read_speculative_config(JsonObjectReader& section);
nlohmann::json speculative_config_to_json(const SpeculativeConfig& config);

// --acceptance-rate's text, "0.7" or "0.8,0.6,0.4", as the JSON value of
// speculative.acceptance_rate (a number or a list); the values are checked when the section
// is read. Throws InputError naming `origin` for text that is not numbers and commas.
nlohmann::json acceptance_rate_from_text(const std::string& text, const std::string& origin);

}  // namespace servesim
