#include "sim/app/startup_check.h"

#include <algorithm>
#include <cstdio>

#include "sim/app/policies.h"
#include "sim/app/replica_memory.h"
#include "sim/config/catalog.h"
#include "sim/config/model_catalog.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/memory/kv_capacity.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / 1073741824.0);
  return text;
}

std::string max_len_text(const StartupFacts& facts) {
  return "max_len " + std::to_string(facts.max_len_tokens) +
         (facts.max_len_given ? "" : " (the model's max_position_embeddings)");
}

bool power_of_two(std::int64_t n) {
  return n >= 2 && (n & (n - 1)) == 0;
}

void check_block_size(const StartupChecks& checks, const StartupFacts& facts) {
  if (!facts.paged) return;
  const std::int64_t b = facts.block_tokens;
  const bool listed = checks.block_sizes.empty() ||
                      std::find(checks.block_sizes.begin(), checks.block_sizes.end(), b) !=
                          checks.block_sizes.end();
  if (listed && (!checks.block_size_power_of_two || power_of_two(b))) return;
  std::string accepted;
  for (const std::int64_t size : checks.block_sizes)
    accepted += (accepted.empty() ? "" : ", ") + std::to_string(size);
  if (checks.block_size_power_of_two) {
    accepted += std::string(accepted.empty() ? "" : ", and ") + "a power of two of at least 2";
  }
  // A knob the engine refuses whatever the hardware: bad input (exit 3), not a deployment
  // that cannot be served.
  throw InputError("allocator.block_size",
                   facts.engine + " does not start: block_size " + std::to_string(b) +
                       " tokens is not one it accepts (expected " + accepted + ")");
}

void check_batched_tokens(const StartupChecks& checks, const StartupFacts& facts) {
  if (!checks.batched_tokens_cover_max_num_seqs || !facts.max_num_seqs ||
      !facts.max_num_batched_tokens || *facts.max_num_batched_tokens == 0) {
    return;
  }
  if (*facts.max_num_batched_tokens < *facts.max_num_seqs) {
    throw InputError("scheduler.max_num_batched_tokens",
                     facts.engine + " does not start: max_num_batched_tokens (" +
                         std::to_string(*facts.max_num_batched_tokens) +
                         ") must be at least max_num_seqs (" + std::to_string(*facts.max_num_seqs) +
                         ")");
  }
}

}  // namespace

StartupFacts startup_facts(const RunConfig& config, const ModelSpec& model,
                           const HardwareProfile& hardware,
                           const std::optional<KvCapacity>& planned) {
  const KvCapacityOptions options = kv_capacity_options(config, model);
  StartupFacts f;
  f.engine = config.engine.name;
  f.deployment = model.name + " on " + hardware.name + " at TP " + std::to_string(config.tp) +
                 (config.pp > 1 ? ", PP " + std::to_string(config.pp) : "");
  f.max_len_tokens = max_len_of(config, model);
  f.max_len_given = config.max_len.has_value();
  if (planned) f.kv_bytes_per_gpu = planned->kv_bytes_per_gpu;
  f.groups_per_gpu = kv_groups_per_gpu(model, options.parallelism, options.kv_dtype);
  f.pools = kv_pool_layout(f.groups_per_gpu, options.block_tokens);
  f.paged = config.allocator.parameters.has("block_size");
  f.block_tokens = block_tokens_of(config);
  f.step_tokens = step_tokens_of(config, f.max_len_tokens);
  const PolicyParameters& scheduler = config.scheduler.parameters;
  if (scheduler.has("max_num_seqs")) f.max_num_seqs = scheduler.integer("max_num_seqs");
  if (scheduler.has("max_num_batched_tokens")) {
    f.max_num_batched_tokens = scheduler.integer("max_num_batched_tokens");
  }
  return f;
}

double max_kv_bytes_per_sequence(const StartupFacts& facts, std::int64_t tokens) {
  if (facts.pools.per_group()) {
    return static_cast<double>(facts.pools.max_blocks_per_sequence(tokens, facts.step_tokens)) *
           facts.pools.block_bytes();
  }
  const std::int64_t block = facts.paged ? std::max<std::int64_t>(facts.block_tokens, 1) : 1;
  const std::int64_t blocks = (tokens + block - 1) / block;
  return static_cast<double>(blocks * block) * kv_slot_bytes_per_token(facts.groups_per_gpu);
}

std::int64_t largest_max_len_that_fits(const StartupFacts& facts, double kv_bytes) {
  const auto fits = [&](std::int64_t tokens) {
    return max_kv_bytes_per_sequence(facts, tokens) <= kv_bytes;
  };
  if (!fits(1)) return 0;
  std::int64_t left = 1;
  std::int64_t right = facts.max_len_tokens;
  std::int64_t result = 1;
  while (left <= right) {
    const std::int64_t mid = left + (right - left) / 2;
    if (fits(mid)) {
      result = mid;
      left = mid + 1;
    } else {
      right = mid - 1;
    }
  }
  return result;
}

std::int64_t apply_startup_checks(const StartupChecks& checks, const StartupFacts& facts) {
  check_block_size(checks, facts);
  check_batched_tokens(checks, facts);
  if (checks.max_len_beyond_kv == MaxLenBeyondKv::Allow || !facts.kv_bytes_per_gpu) {
    return facts.max_len_tokens;
  }
  const double available = *facts.kv_bytes_per_gpu;
  const double needed = max_kv_bytes_per_sequence(facts, facts.max_len_tokens);
  if (needed <= available) return facts.max_len_tokens;
  const std::int64_t fits = largest_max_len_that_fits(facts, available);
  if (checks.max_len_beyond_kv == MaxLenBeyondKv::Clip) {
    const std::int64_t clipped = fits - checks.clip_margin_tokens;
    if (clipped >= 1) return clipped;
    throw InfeasibleError::engine_refuses_start(facts.engine + " does not start: its KV pool on " +
                                                facts.deployment + " (" + gib(available) +
                                                " per GPU) holds " + std::to_string(fits) +
                                                " tokens of one sequence, too few to serve any");
  }
  std::string message = facts.engine + " does not start: one sequence of " + max_len_text(facts) +
                        " needs " + gib(needed) + " of KV cache per GPU, more than the " +
                        gib(available) + " left on " + facts.deployment;
  if (fits > 0) {
    message += "; the largest max_len that fits is " + std::to_string(fits) + ": give --max-len " +
               std::to_string(fits) + " or less, or raise --mem-util or --tp";
  } else {
    message += "; not even one token fits: raise --mem-util or --tp";
  }
  throw InfeasibleError::engine_refuses_start(message);
}

StartupVerdict startup_verdict(const nlohmann::json& config_document,
                               const std::filesystem::path& data_root) {
  const RunConfig config = run_config_from_json(config_document, "configuration", policy_menus());
  const ModelSpec model = load_catalog_model(data_root, config.model, "model");
  const HardwareProfile hardware = load_hardware_file(
      Catalog(data_root / "hw_profiles", "hardware profile", "hardware").resolve(config.hardware));
  StartupVerdict verdict;
  try {
    verdict.max_len_tokens = apply_startup_checks(
        config.engine.startup,
        startup_facts(config, model, hardware, planned_capacity(config, model, hardware)));
  } catch (const InfeasibleError& e) {
    verdict.starts = false;
    verdict.reason = e.what();
  }
  return verdict;
}

}  // namespace servesim
