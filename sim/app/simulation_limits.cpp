#include "sim/app/simulation_limits.h"

#include <string>
#include <utility>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

void refuse_above(const std::string& key, double value, std::int64_t limit,
                  const std::string& why) {
  if (value <= static_cast<double>(limit)) return;
  throw InputError(key, "expected at most " + with_commas(limit) + " (" + why + "), got " +
                            (value < 9.0e18 ? with_commas(static_cast<std::int64_t>(value))
                                            : std::to_string(value)));
}

// The numbers of a token count (fixed "tokens", or a distribution's mean, min and max).
void check_token_count(const nlohmann::json& count, const std::string& key) {
  if (!count.is_object()) return;
  for (const char* field : {"tokens", "mean", "min", "max"}) {
    const auto it = count.find(field);
    if (it != count.end() && it->is_number()) {
      refuse_above(key + "." + field, it->get<double>(), kMaxRequestTokens,
                   "tokens of one request: beyond any model's positions");
    }
  }
}

}  // namespace

void check_simulation_limits(const RunConfig& config) {
  refuse_above("replicas", static_cast<double>(config.replicas), kMaxReplicas,
               "replicas one machine simulates: each builds its scheduler, allocator and KV "
               "block tables up front");
  if (config.disaggregation) {
    for (const auto& [role, pool] : {std::pair{"prefill", &config.disaggregation->prefill},
                                     std::pair{"decode", &config.disaggregation->decode}}) {
      const auto replicas = pool->find("replicas");
      if (replicas != pool->end() && replicas->is_number()) {
        refuse_above(std::string("disaggregation.") + role + ".replicas", replicas->get<double>(),
                     kMaxReplicas,
                     "replicas one machine simulates: each builds its scheduler, allocator and "
                     "KV block tables up front");
      }
    }
  }
  if (config.max_len) {
    refuse_above("max_len", static_cast<double>(*config.max_len), kMaxRequestTokens,
                 "tokens of one request: beyond any model's positions");
  }
  if (config.memory.kv_capacity_tokens) {
    refuse_above("memory.kv_capacity_tokens",
                 static_cast<double>(*config.memory.kv_capacity_tokens), kMaxKvCapacityTokens,
                 "KV tokens per replica: the paged allocator keeps an entry per block up front");
  }
  const nlohmann::json& workload = config.workload;
  if (!workload.is_object()) return;
  const auto requests = workload.find("num_requests");
  if (requests != workload.end() && requests->is_number()) {
    refuse_above("workload.num_requests", requests->get<double>(), kMaxRequests,
                 "requests of one run: each keeps a record for the percentiles and "
                 "requests.csv");
  }
  const auto lengths = workload.find("lengths");
  if (lengths != workload.end() && lengths->is_object()) {
    for (const char* part : {"prompt", "output"}) {
      const auto it = lengths->find(part);
      if (it != lengths->end()) check_token_count(*it, std::string("workload.lengths.") + part);
    }
  }
}

}  // namespace servesim
