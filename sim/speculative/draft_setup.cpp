#include "sim/speculative/draft_setup.h"

#include <cmath>
#include <filesystem>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/model/model_size.h"

namespace servesim {
namespace {

// The next-n (MTP) layers the model's config.json declares; 0 when it declares none or the
// model was not read from a file.
std::int64_t nextn_layers(const ModelSpec& model) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(model.source, error)) return 0;
  const nlohmann::json config = read_json_file(model.source);
  const auto it = config.find("num_nextn_predict_layers");
  if (it == config.end() || !it->is_number_integer()) return 0;
  return std::max<std::int64_t>(0, it->get<std::int64_t>());
}

// The target's shape with `layers` decoder layers.
ModelSpec with_layers(const ModelSpec& target, std::int64_t layers, const std::string& suffix) {
  ModelSpec m = target;
  m.num_layers = layers;
  m.name = target.name + suffix;
  return m;
}

// Weight bytes of one decoder layer of `model`, whole (all TP ranks).
double layer_weight_bytes(const ModelSpec& model, DType weight_dtype) {
  return weight_bytes(with_layers(model, 2, ""), weight_dtype) -
         weight_bytes(with_layers(model, 1, ""), weight_dtype);
}

}  // namespace

DraftSetup draft_setup(const SpeculativeConfig& config, const ModelSpec& target,
                       const Parallelism& parallelism, DType weight_dtype, DType kv_dtype,
                       const std::function<ModelSpec(const std::string&)>& load_model) {
  if (parallelism.pipeline != 1) {
    throw InputError("speculative", "speculative decoding runs on one pipeline stage; got pp " +
                                        std::to_string(parallelism.pipeline) + ", expected 1");
  }
  // vLLM shards the proposer over the target's TP unless told otherwise; servesim models that
  // sharding only.
  if (config.draft_tensor_parallel_size &&
      *config.draft_tensor_parallel_size != parallelism.tensor) {
    throw InputError(
        "speculative.draft_tensor_parallel_size",
        std::to_string(*config.draft_tensor_parallel_size) +
            ": a proposer on other GPUs than the target's " + std::to_string(parallelism.tensor) +
            " is not modelled; expected the target's TP, " + std::to_string(parallelism.tensor));
  }
  DraftSetup setup;
  const double tp = static_cast<double>(parallelism.tensor);
  switch (config.method) {
    case SpeculativeMethod::Ngram:
      return setup;
    case SpeculativeMethod::DraftModel: {
      ModelSpec draft = load_model(*config.model);
      if (draft.vocab_size != target.vocab_size) {
        throw InputError("speculative.model",
                         draft.name + " has a vocabulary of " + std::to_string(draft.vocab_size) +
                             " tokens and the target " + target.name + " one of " +
                             std::to_string(target.vocab_size) +
                             "; expected a draft model with the target's vocabulary");
      }
      shard_model(draft, parallelism);  // its TP must divide its heads, as the target's
      setup.weight_bytes_per_gpu = weight_bytes_per_gpu(draft, parallelism, weight_dtype);
      setup.kv_bytes_per_token_per_gpu = kv_bytes_per_token_per_gpu(draft, parallelism, kv_dtype);
      setup.network = std::move(draft);
      return setup;
    }
    case SpeculativeMethod::Eagle:
    case SpeculativeMethod::Mtp: {
      std::int64_t layers = 1;
      const char* suffix = " EAGLE head";
      if (config.method == SpeculativeMethod::Mtp) {
        layers = nextn_layers(target);
        suffix = " MTP layer";
        if (layers == 0) {
          throw InputError("speculative.method",
                           "mtp needs a model with multi-token-prediction layers; " + target.name +
                               " declares none (num_nextn_predict_layers in its config.json)");
        }
      }
      ModelSpec head = with_layers(target, 1, suffix);
      setup.weight_bytes_per_gpu =
          static_cast<double>(layers) * layer_weight_bytes(target, weight_dtype) / tp;
      setup.kv_bytes_per_token_per_gpu =
          static_cast<double>(layers) * kv_bytes_per_token_per_gpu(head, parallelism, kv_dtype);
      setup.network = std::move(head);
      return setup;
    }
  }
  return setup;
}

std::int64_t kv_capacity_beside_draft(double kv_bytes_per_gpu,
                                      double target_kv_bytes_per_token_per_gpu,
                                      const DraftSetup& draft, const std::string& target_name,
                                      const std::string& draft_name) {
  const double left_bytes = kv_bytes_per_gpu - draft.weight_bytes_per_gpu;
  const double per_token = target_kv_bytes_per_token_per_gpu + draft.kv_bytes_per_token_per_gpu;
  const double tokens = std::floor(left_bytes / per_token);
  if (!(tokens >= 1)) {
    constexpr double kGiB = 1073741824.0;
    throw InfeasibleError("the draft " + draft_name + " (" +
                          std::to_string(draft.weight_bytes_per_gpu / kGiB).substr(0, 5) +
                          " GiB of weights per GPU) does not fit beside " + target_name +
                          ", which leaves " + std::to_string(kv_bytes_per_gpu / kGiB).substr(0, 5) +
                          " GiB per GPU for KV: no room for one token of either");
  }
  return static_cast<std::int64_t>(tokens);
}

}  // namespace servesim
