#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"

namespace servesim {

// Terms of a hardware profile that a fit to measured serving points may set, named by their
// key path in the profile prefixed with "hardware." ("hardware.kernels.gemm.fixed_s"): a kernel
// class's achieved ceilings and fixed cost (gemm, its per-operator classes, decode_attention,
// decode_attention_fp8_kv, prefill_attention) and the collectives' latency and link share.
inline constexpr char kHardwareTermPrefix[] = "hardware.";

bool is_hardware_term(const std::string& term);

// The range a hardware term may take: efficiencies 0.05 to 1 of the datasheet peak, fixed
// costs per kernel 0.1 to 100 us, collective latencies 1 to 100 us.
std::pair<double, double> hardware_term_range(const std::string& term);

// The value of `term` in a hardware profile document (hardware_to_json's, which spells out every
// kernel class); InputError naming the term when it has none.
double hardware_term(const nlohmann::json& profile, const std::string& term);

// `profile` with each term set (and a kernel class a term names but the document lacks, such as
// decode_attention_fp8_kv, started from decode_attention).
nlohmann::json hardware_with_terms(nlohmann::json profile,
                                   const std::map<std::string, double>& terms);

// The hardware terms among a fit's overrides ("hardware.<path>=<value>", as
// hardware_term_assignment writes them) and the other overrides, apart.
struct SplitAssignments {
  std::map<std::string, double> hardware_terms;
  std::vector<ConfigOverride> others;
};
SplitAssignments split_hardware_assignments(const std::vector<ConfigOverride>& overrides);

std::string hardware_term_assignment(const std::string& term, double value);

}  // namespace servesim
