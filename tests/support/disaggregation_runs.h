#pragma once

// What the end-to-end tests of prefill/decode disaggregation share (tests/app/disaggregation_*):
// the KV bytes of a Llama-3-8B token, the H100 profile's NIC, one prefill and one decode replica
// over the NIC, and the TTFT breakdown of a run's summary.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::test {

// Llama-3-8B in bf16: 2 (K and V) x 32 layers x 8 KV heads x 128 dims x 2 bytes per token.
inline constexpr double kLlama3KvBytesPerToken = 2.0 * 32 * 8 * 128 * 2;
inline constexpr double kNicBytesPerS = 50e9;  // H100 SXM: one 400 Gb/s port per GPU
inline constexpr double kNicLatencyS = 5e-6;   // the profile's inter_node_latency_s

inline std::vector<std::string> one_pair(std::vector<std::string> extra) {
  std::vector<std::string> args{"run",
                                "--prompt-tokens",
                                "2000",
                                "--output-tokens",
                                "4",
                                "--disaggregation",
                                "1p1d",
                                "--set",
                                "disaggregation.kv_transfer.link=\"nic\""};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

inline double part(const nlohmann::json& summary, const char* name, const char* stat = "mean") {
  return summary["ttft_breakdown_s"][name][stat].get<double>();
}

inline double sum_of_parts(const nlohmann::json& summary) {
  double sum = 0;
  for (const char* name :
       {"prefill_queue", "prefill", "transfer_queue", "transfer", "decode_queue", "first_decode"})
    sum += part(summary, name);
  return sum;
}

}  // namespace servesim::test
