#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/workload/workload_spec.h"

namespace servesim::test {

// Every request an open-loop source emits (closed-loop sources need on_request_done).
inline std::vector<RequestSpec> drain(IWorkloadSource& source) {
  std::vector<RequestSpec> requests;
  while (auto request = source.next())
    requests.push_back(*request);
  return requests;
}

inline std::vector<RequestSpec> generate(const WorkloadSpec& spec, std::uint64_t seed = 42) {
  const auto source = make_workload_source(spec, RngStreams(seed));
  return drain(*source);
}

inline WorkloadSpec spec_from_text(const std::string& text,
                                   const std::filesystem::path& base_dir = ".") {
  return parse_workload_spec(nlohmann::json::parse(text), "test.json", base_dir);
}

struct SampleStats {
  double mean = 0;
  double cv = 0;
};

inline SampleStats stats_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values)
    sum += v;
  const double mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (const double v : values)
    squares += (v - mean) * (v - mean);
  const double std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return {mean, std / mean};
}

inline std::vector<double> gaps_s(const std::vector<RequestSpec>& requests) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < requests.size(); ++i) {
    gaps.push_back((requests[i].arrival - requests[i - 1].arrival).seconds());
  }
  return gaps;
}

}  // namespace servesim::test
