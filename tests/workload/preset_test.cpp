#include <catch2/catch.hpp>

#include "sim/config/catalog.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;

namespace {

struct PresetTarget {
  const char* name;
  double prompt_mean;
  double output_mean;
  double rate_per_s;
  double arrival_cv;  // of the inter-arrival gaps: sets how closely 2,000 gaps pin the rate
};

// The means each preset's "source" states (after its clipping and filters), and its arrivals.
constexpr PresetTarget kPresets[] = {
    {"sharegpt", 161.31, 337.99, 1.0, 1.0},
    {"alpaca", 19.31, 58.45, 1.0, 1.0},
    {"orca-uniform", 272.0, 64.5, 1.0, 1.0},
    {"azure-conv-2023", 1155.0, 200.0, 5.53, 1.09},
    {"azure-code-2023", 1980.0, 28.5, 2.57, 13.0},
    {"arxiv-summarization", 2534.0, 291.43, 1.0, 1.0},
};

WorkloadSpec preset(const std::string& name) {
  return load_workload_file(test::source_dir() / "workloads" / (name + ".json"));
}

}  // namespace

TEST_CASE("the shipped presets are exactly the documented ones", "[workload]") {
  const Catalog catalog(test::source_dir() / "workloads", "workload preset", "--workload");
  std::vector<std::string> expected;
  for (const auto& p : kPresets)
    expected.emplace_back(p.name);
  std::sort(expected.begin(), expected.end());
  CHECK(catalog.names() == expected);
}

TEST_CASE("every preset parses, cites a source and meets its stated means", "[workload]") {
  for (const auto& target : kPresets) {
    INFO(target.name);
    WorkloadSpec spec = preset(target.name);
    CHECK(spec.description.size() > 40);
    CHECK(spec.source.size() > 80);
    CHECK(spec.num_requests == 1000);
    CHECK(parse_workload_spec(workload_spec_to_json(spec), spec.source_name, "/") == spec);

    spec.num_requests = 2000;
    const auto requests = test::generate(spec, 2024);
    REQUIRE(requests.size() == 2000);
    std::vector<double> prompts;
    std::vector<double> outputs;
    for (const auto& r : requests) {
      prompts.push_back(static_cast<double>(r.prompt_tokens));
      outputs.push_back(static_cast<double>(r.output_tokens));
    }
    const auto prompt = test::stats_of(prompts);
    const auto output = test::stats_of(outputs);
    INFO("prompt mean " << prompt.mean << ", output mean " << output.mean);
    CHECK(prompt.mean == Approx(target.prompt_mean).epsilon(0.10));
    CHECK(output.mean == Approx(target.output_mean).epsilon(0.10));
    const double span_s = requests.back().arrival.seconds();
    // Four standard errors of the mean gap; the code trace's CV of 13 leaves 2,000 gaps too
    // few to pin its rate, which the burstiness test below checks with more.
    const double tolerance = 4 * target.arrival_cv / std::sqrt(1999.0);
    if (tolerance < 0.5) CHECK(1999 / span_s == Approx(target.rate_per_s).epsilon(tolerance));
  }
}

TEST_CASE("sharegpt lengths obey the vLLM benchmark filter", "[workload]") {
  WorkloadSpec spec = preset("sharegpt");
  spec.num_requests = 20000;
  double prompt_sum = 0;
  double output_sum = 0;
  for (const auto& r : test::generate(spec, 5)) {
    REQUIRE(r.prompt_tokens >= 4);
    REQUIRE(r.output_tokens >= 4);
    REQUIRE(r.prompt_tokens <= 1024);
    REQUIRE(r.prompt_tokens + r.output_tokens <= 2048);
    prompt_sum += static_cast<double>(r.prompt_tokens);
    output_sum += static_cast<double>(r.output_tokens);
  }
  CHECK(prompt_sum / 20000 == Approx(161.31).epsilon(0.05));
  CHECK(output_sum / 20000 == Approx(337.99).epsilon(0.05));
}

TEST_CASE("orca-uniform lengths are uniform on the published ranges", "[workload]") {
  WorkloadSpec spec = preset("orca-uniform");
  spec.num_requests = 20000;
  double prompt_sum = 0;
  double output_sum = 0;
  for (const auto& r : test::generate(spec, 5)) {
    REQUIRE((r.prompt_tokens >= 32 && r.prompt_tokens <= 512));
    REQUIRE((r.output_tokens >= 1 && r.output_tokens <= 128));
    prompt_sum += static_cast<double>(r.prompt_tokens);
    output_sum += static_cast<double>(r.output_tokens);
  }
  CHECK(prompt_sum / 20000 == Approx(272).epsilon(0.02));
  CHECK(output_sum / 20000 == Approx(64.5).epsilon(0.02));
}

TEST_CASE("the Azure code preset is as bursty as the trace", "[workload]") {
  WorkloadSpec spec = preset("azure-code-2023");
  spec.num_requests = 20000;
  const auto gaps = test::stats_of(test::gaps_s(test::generate(spec, 5)));
  CHECK(gaps.cv > 6);  // the trace's 13; a sample CV of so heavy a tail converges slowly
  CHECK(gaps.mean == Approx(1 / 2.57).epsilon(0.35));
}
