#include "sim/speculative/speculative_config.h"

#include <charconv>
#include <cmath>

#include "sim/core/error.h"

namespace servesim {
namespace {

struct MethodName {
  std::string_view name;
  SpeculativeMethod method;
};
// vLLM's names; eagle3 and deepseek_mtp are priced as eagle and mtp.
constexpr MethodName kMethods[] = {{"draft_model", SpeculativeMethod::DraftModel},
                                   {"eagle", SpeculativeMethod::Eagle},
                                   {"eagle3", SpeculativeMethod::Eagle},
                                   {"ngram", SpeculativeMethod::Ngram},
                                   {"mtp", SpeculativeMethod::Mtp},
                                   {"deepseek_mtp", SpeculativeMethod::Mtp}};

std::vector<double> read_rates(JsonObjectReader& r) {
  const nlohmann::json* raw = r.optional_raw("acceptance_rate");
  const char* expected =
      "expected a number in [0, 1) or a list of them, one per draft position (--acceptance-rate)";
  if (raw == nullptr) {
    r.fail("acceptance_rate", std::string("required but missing; ") + expected);
  }
  std::vector<double> rates;
  if (raw->is_number()) {
    rates.push_back(raw->get<double>());
  } else if (raw->is_array() && !raw->empty()) {
    for (const nlohmann::json& v : *raw) {
      if (!v.is_number()) r.fail("acceptance_rate", std::string(expected) + ", got " + raw->dump());
      rates.push_back(v.get<double>());
    }
  } else {
    r.fail("acceptance_rate", std::string(expected) + ", got " + raw->dump());
  }
  for (const double rate : rates) {
    // 1 would accept every draft forever; vLLM's rate is accepted over proposed, below 1.
    if (!std::isfinite(rate) || rate < 0 || rate >= 1) {
      r.fail("acceptance_rate", "expected every rate in [0, 1), got " + raw->dump());
    }
  }
  return rates;
}

}  // namespace

std::string_view method_name(SpeculativeMethod method) noexcept {
  switch (method) {
    case SpeculativeMethod::DraftModel:
      return "draft_model";
    case SpeculativeMethod::Eagle:
      return "eagle";
    case SpeculativeMethod::Ngram:
      return "ngram";
    case SpeculativeMethod::Mtp:
      return "mtp";
  }
  return "ngram";
}

namespace {

// vLLM's other SpeculativeConfig keys (vllm/config/speculative.py): the draft's TP, and the
// keys that change nothing servesim simulates, recorded; the rest are refused by name.
void read_vllm_keys(JsonObjectReader& r, SpeculativeConfig& c) {
  c.draft_tensor_parallel_size = r.optional_positive_integer("draft_tensor_parallel_size");
  const std::optional<std::int64_t> lookup_max = r.optional_positive_integer("prompt_lookup_max");
  const std::optional<std::int64_t> lookup_min = r.optional_positive_integer("prompt_lookup_min");
  if ((lookup_max || lookup_min) && c.method != SpeculativeMethod::Ngram) {
    r.fail(lookup_max ? "prompt_lookup_max" : "prompt_lookup_min", "only with method ngram");
  }
  if (lookup_max && lookup_min && *lookup_min > *lookup_max) {
    r.fail("prompt_lookup_min", "expected at most prompt_lookup_max (" +
                                    std::to_string(*lookup_max) + "), got " +
                                    std::to_string(*lookup_min));
  }
  if (lookup_max) c.recorded["prompt_lookup_max"] = *lookup_max;
  if (lookup_min) c.recorded["prompt_lookup_min"] = *lookup_min;
  for (const char* key : {"revision", "code_revision"}) {
    if (auto text = r.optional_string(key)) c.recorded[key] = *text;
  }
  if (auto flag = r.optional_boolean("disable_logprobs")) c.recorded["disable_logprobs"] = *flag;
  for (const char* key : {"quantization", "max_model_len", "disable_by_batch_size", "enforce_eager",
                          "speculative_token_tree", "parallel_drafting",
                          "disable_padded_drafter_batch", "tensor_parallel_size"}) {
    if (r.has(key)) {
      r.fail(key,
             "vLLM's key is not modelled by servesim (it takes method, model, "
             "num_speculative_tokens, draft_tensor_parallel_size, prompt_lookup_max, "
             "prompt_lookup_min, revision, code_revision, disable_logprobs and its own "
             "acceptance_rate)");
    }
  }
}

}  // namespace

SpeculativeConfig read_speculative_config(JsonObjectReader& r) {
  SpeculativeConfig c;
  c.model = r.optional_string("model");
  const std::optional<std::string> method = r.optional_string("method");
  if (!method) {
    if (!c.model) {
      r.fail("method",
             "required but missing (draft_model, eagle, eagle3, ngram, mtp or "
             "deepseek_mtp; or a draft `model`)");
    }
    c.method = SpeculativeMethod::DraftModel;
  } else {
    const MethodName* found = nullptr;
    for (const MethodName& m : kMethods) {
      if (m.name == *method) found = &m;
    }
    if (found == nullptr) {
      r.fail("method", "unknown method \"" + *method +
                           "\" (expected draft_model, eagle, eagle3, ngram, mtp or deepseek_mtp)");
    }
    c.method = found->method;
  }
  const nlohmann::json* k = r.optional_raw("num_speculative_tokens");
  if (k == nullptr) r.fail("num_speculative_tokens", "required but missing; expected k >= 1");
  if (!k->is_number_integer() || k->get<std::int64_t>() < 1 || k->get<std::int64_t>() > 64) {
    r.fail("num_speculative_tokens",
           "expected an integer from 1 to 64 draft tokens per step, got " + k->dump());
  }
  c.num_speculative_tokens = k->get<std::int64_t>();
  if (c.method == SpeculativeMethod::DraftModel && !c.model) {
    r.fail("model", "required for method draft_model: the draft model's name or config.json");
  }
  if ((c.method == SpeculativeMethod::Ngram || c.method == SpeculativeMethod::Mtp) && c.model) {
    r.fail("model", "method " + std::string(method_name(c.method)) +
                        " takes no draft model; got \"" + *c.model + "\"");
  }
  c.acceptance_rate = read_rates(r);
  read_vllm_keys(r, c);
  r.reject_unknown_keys();
  return c;
}

nlohmann::json speculative_config_to_json(const SpeculativeConfig& c) {
  nlohmann::json j = {{"method", method_name(c.method)},
                      {"num_speculative_tokens", c.num_speculative_tokens}};
  if (c.model) j["model"] = *c.model;
  if (c.acceptance_rate.size() == 1) {
    j["acceptance_rate"] = c.acceptance_rate.front();
  } else {
    j["acceptance_rate"] = c.acceptance_rate;
  }
  if (c.draft_tensor_parallel_size) j["draft_tensor_parallel_size"] = *c.draft_tensor_parallel_size;
  j.update(c.recorded);
  return j;
}

nlohmann::json acceptance_rate_from_text(const std::string& text, const std::string& origin) {
  nlohmann::json rates = nlohmann::json::array();
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    double value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      throw InputError(origin, "\"" + text +
                                   "\": expected a rate in [0, 1) or rates by draft position "
                                   "separated by commas, e.g. 0.7 or 0.8,0.6,0.4");
    }
    rates.push_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (rates.size() == 1) return rates.front();
  return rates;
}

}  // namespace servesim
