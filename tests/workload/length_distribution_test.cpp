#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/error.h"
#include "sim/workload/impl/empirical_lengths.h"
#include "sim/workload/impl/filtered_lengths.h"
#include "sim/workload/impl/independent_lengths.h"
#include "sim/workload/lengths_csv.h"
#include "sim/workload/token_count_sampler.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

TokenCountSpec continuous(TokenCountKind kind, double mean, double std, std::int64_t min,
                          std::int64_t max) {
  TokenCountSpec spec;
  spec.distribution = kind;
  spec.mean_tokens = mean;
  spec.std_tokens = std;
  spec.min_tokens = min;
  spec.max_tokens = max;
  return spec;
}

std::vector<double> draw(const TokenCountSpec& spec, int count) {
  const TokenCountSampler sampler(spec);
  Rng rng(3);
  std::vector<double> values;
  for (int i = 0; i < count; ++i)
    values.push_back(static_cast<double>(sampler.sample(rng)));
  return values;
}

}  // namespace

TEST_CASE("normal and lognormal lengths are clipped to [min, max]", "[workload]") {
  for (const auto kind : {TokenCountKind::Normal, TokenCountKind::Lognormal}) {
    // Wide enough that both clips bite often.
    const auto values = draw(continuous(kind, 100, 150, 20, 200), 20000);
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    CHECK(*low == 20);
    CHECK(*high == 200);
    CHECK(std::count(values.begin(), values.end(), 20.0) > 100);
    CHECK(std::count(values.begin(), values.end(), 200.0) > 100);
  }
}

TEST_CASE("lognormal mean and std describe the distribution, not the underlying normal",
          "[workload]") {
  const auto values =
      test::stats_of(draw(continuous(TokenCountKind::Lognormal, 300, 450, 1, 1'000'000), 200000));
  CHECK(values.mean == Approx(300).epsilon(0.03));
  CHECK(values.cv == Approx(1.5).epsilon(0.10));
}

TEST_CASE("uniform lengths cover the inclusive range", "[workload]") {
  TokenCountSpec spec;
  spec.distribution = TokenCountKind::Uniform;
  spec.min_tokens = 3;
  spec.max_tokens = 6;
  const auto values = draw(spec, 4000);
  for (const double v : {3.0, 4.0, 5.0, 6.0})
    CHECK(std::count(values.begin(), values.end(), v) > 800);
  CHECK(std::count_if(values.begin(), values.end(), [](double v) { return v < 3 || v > 6; }) == 0);
}

TEST_CASE("filters draw again until a pair fits", "[workload]") {
  const auto wide = continuous(TokenCountKind::Lognormal, 400, 400, 1, 100000);
  FilteredLengths filtered(std::make_unique<IndependentLengths>(wide, wide), 500, 700, "x.json");
  Rng rng(5);
  for (int i = 0; i < 5000; ++i) {
    const LengthPair pair = filtered.sample(rng);
    REQUIRE(pair.prompt_tokens <= 500);
    REQUIRE(pair.prompt_tokens + pair.output_tokens <= 700);
  }
}

TEST_CASE("a filter that rejects everything names the spec and the key", "[workload]") {
  TokenCountSpec fixed;
  fixed.tokens = 100;
  FilteredLengths filtered(std::make_unique<IndependentLengths>(fixed, fixed), std::nullopt, 150,
                           "workloads/tight.json");
  Rng rng(5);
  CHECK_THROWS_WITH(filtered.sample(rng), Contains("workloads/tight.json") &&
                                              Contains("lengths.max_total_tokens") &&
                                              Contains("1000"));
}

TEST_CASE("empirical lengths resample the recorded pairs", "[workload]") {
  EmpiricalLengths lengths({{10, 1}, {20, 2}, {30, 3}});
  Rng rng(9);
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < 3000; ++i) {
    const LengthPair pair = lengths.sample(rng);
    REQUIRE(pair.output_tokens * 10 == pair.prompt_tokens);  // pairs stay joined
    ++seen[pair.output_tokens - 1];
  }
  for (const int count : seen)
    CHECK(count > 900);
}

TEST_CASE("lengths CSV: Vidur's columns, errors with file and line", "[workload]") {
  const auto pairs = parse_lengths_csv(
      "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\r\n10,5,15,2\r\n7,3,10,2."
      "3\r\n",
      "a.csv");
  CHECK(pairs == std::vector<LengthPair>{{10, 5}, {7, 3}});
  CHECK_THROWS_WITH(parse_lengths_csv("prompt_tokens,output_tokens\n4,0\n", "b.csv"),
                    Contains("b.csv:2") && Contains("output_tokens"));
  CHECK_THROWS_WITH(parse_lengths_csv("a,b\n1,2\n", "c.csv"), Contains("c.csv:1"));
  CHECK_THROWS_WITH(parse_lengths_csv("prompt_tokens,output_tokens\n", "d.csv"),
                    Contains("no rows"));
}

TEST_CASE("the shared arXiv lengths file loads", "[workload]") {
  const auto shared_path =
      test::shared_data_path("lengths/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv");
  if (!shared_path) return;
  const std::filesystem::path path = *shared_path;
  const auto pairs = read_lengths_csv(path);
  REQUIRE(pairs.size() == 28257);
  double prompt_sum = 0;
  double output_sum = 0;
  for (const auto& p : pairs) {
    prompt_sum += static_cast<double>(p.prompt_tokens);
    output_sum += static_cast<double>(p.output_tokens);
  }
  CHECK(prompt_sum / 28257 == Approx(2588.08).epsilon(0.001));
  CHECK(output_sum / 28257 == Approx(291.43).epsilon(0.001));
}
