#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/workload/arrival_stages.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const std::string kLengths = R"("lengths": {"distribution": "independent",
    "prompt": {"distribution": "fixed", "tokens": 10},
    "output": {"distribution": "fixed", "tokens": 5}})";

std::string spec_text(const std::string& arrival, const std::string& rest = "") {
  return R"({"arrival": )" + arrival + ", " + kLengths + rest + "}";
}

std::string staged(const std::string& process, const std::string& stages,
                   const std::string& arrival_extra = "") {
  return R"({"process": ")" + process + R"(", "stages": )" + stages + arrival_extra + "}";
}

const std::string kTwoStages =
    R"([{"rate_per_s": 5, "duration_s": 600}, {"rate_per_s": 10, "duration_s": 600}])";

// Requests per stage, counted with the windows the workload exposes.
std::vector<std::int64_t> per_stage(const WorkloadSpec& spec,
                                    const std::vector<RequestSpec>& requests) {
  const auto windows = stage_windows(spec.arrival.stages);
  std::vector<std::int64_t> counts(windows.size(), 0);
  for (const auto& r : requests) {
    const auto stage = stage_of(windows, r.arrival);
    REQUIRE(stage);
    ++counts[*stage];
  }
  return counts;
}

}  // namespace

TEST_CASE("duration_s keeps the arrivals before it: 5 req/s for 600 s are 3000 requests",
          "[workload]") {
  const auto five = test::generate(test::spec_from_text(
      spec_text(R"({"process": "constant", "rate_per_s": 5})", R"(, "duration_s": 600)")));
  REQUIRE(five.size() == 3000);
  CHECK(five.front().arrival.ns() == 0);
  CHECK(five.back().arrival == SimTime::from_seconds(599.8));
  for (std::size_t i = 1; i < five.size(); ++i)
    REQUIRE((five[i].arrival - five[i - 1].arrival).ns() == 200'000'000);
  // A gap that is not a whole number of nanoseconds does not drift: 3 req/s x 600 s = 1,800,
  // not 1,801 as adding a gap rounded down to 333,333,333 ns would give.
  const auto three = test::generate(test::spec_from_text(
      spec_text(R"({"process": "constant", "rate_per_s": 3})", R"(, "duration_s": 600)")));
  CHECK(three.size() == 1800);
  CHECK(three.back().arrival.ns() == 599'666'666'667);
}

TEST_CASE("stage windows run back to back from t = 0", "[workload]") {
  const std::vector<ArrivalStage> stages{{5, 600}, {10, 600}, {2.5, 0.1}};
  const auto windows = stage_windows(stages);
  REQUIRE(windows.size() == 3);
  CHECK(windows[0] == StageWindow{SimTime(), SimTime::from_seconds(600)});
  CHECK(windows[1] == StageWindow{SimTime::from_seconds(600), SimTime::from_seconds(1200)});
  CHECK(windows[2].start_s() == 1200.0);
  CHECK(windows[2].end_s() == Approx(1200.1));
  CHECK(stage_of(windows, SimTime::from_seconds(599.999999999)) == 0u);
  CHECK(stage_of(windows, SimTime::from_seconds(600)) == 1u);  // a boundary starts the next
  CHECK_FALSE(stage_of(windows, windows[2].end));
}

TEST_CASE("constant stages: each starts at its boundary with its own spacing", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(spec_text(staged("constant", kTwoStages)));
  const auto requests = test::generate(spec);
  REQUIRE(requests.size() == 9000);
  CHECK(per_stage(spec, requests) == std::vector<std::int64_t>{3000, 6000});
  CHECK(requests[2999].arrival == SimTime::from_seconds(599.8));
  CHECK(requests[3000].arrival == SimTime::from_seconds(600));  // the first of stage 1
  CHECK((requests[3001].arrival - requests[3000].arrival).ns() == 100'000'000);
  CHECK(requests.back().arrival == SimTime::from_seconds(1199.9));
  for (std::size_t i = 0; i < requests.size(); ++i)
    REQUIRE(requests[i].id == static_cast<std::int64_t>(i));

  const auto source = make_workload_source(spec, RngStreams(3));
  std::int64_t count = 0;
  while (source->next())
    ++count;
  CHECK(count == 9000);
  CHECK(source->exhausted());
}

TEST_CASE("poisson stages arrive at each stage's rate", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(spec_text(staged(
      "poisson", R"([{"rate_per_s": 5, "duration_s": 600}, {"rate_per_s": 20, "duration_s": 300},
                     {"rate_per_s": 1, "duration_s": 900}])")));
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    const auto requests = test::generate(spec, seed);
    const auto counts = per_stage(spec, requests);
    // Expected 3,000, 6,000 and 900 with standard deviations 55, 77 and 30: six of them is
    // a loose bound that a wrong rate (or a stage run at its neighbour's rate) breaks.
    CHECK(std::abs(counts[0] - 3000) < 6 * 55);
    CHECK(std::abs(counts[1] - 6000) < 6 * 77);
    CHECK(std::abs(counts[2] - 900) < 6 * 30);
    CHECK(requests.front().arrival.ns() == 0);
  }
  const auto arrivals_ns = [&spec](std::uint64_t seed) {
    std::vector<std::int64_t> ns;
    for (const auto& r : test::generate(spec, seed))
      ns.push_back(r.arrival.ns());
    return ns;
  };
  CHECK(arrivals_ns(9) == arrivals_ns(9));
  CHECK(arrivals_ns(9) != arrivals_ns(10));
}

TEST_CASE("staged specs round-trip and refuse a single rate or run length", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(
      spec_text(staged("poisson", R"([{"rate_per_s": 0.3, "duration_s": 0.7}, {"rate_per_s": 12.5,
                     "duration_s": 1e-3}])")));
  const nlohmann::json written = workload_spec_to_json(spec);
  CHECK(written["arrival"] == nlohmann::json::parse(R"({"process": "poisson", "stages":
      [{"rate_per_s": 0.3, "duration_s": 0.7}, {"rate_per_s": 12.5, "duration_s": 1e-3}]})"));
  CHECK_FALSE(written.contains("num_requests"));
  CHECK_FALSE(written.contains("duration_s"));
  CHECK(parse_workload_spec(written, "test.json", "/") == spec);

  const auto fails_with = [](const std::string& text, const std::string& expected) {
    INFO(text);
    CHECK_THROWS_WITH(test::spec_from_text(text), Contains("test.json") && Contains(expected));
  };
  fails_with(spec_text(staged("constant", kTwoStages, R"(, "rate_per_s": 4)")),
             "\"arrival.rate_per_s\": not used with arrival.stages");
  fails_with(spec_text(staged("constant", kTwoStages, R"(, "rate_per_s": 4)")), "--rate");
  fails_with(spec_text(staged("constant", kTwoStages), R"(, "num_requests": 10)"),
             "\"num_requests\": not used with arrival.stages");
  fails_with(spec_text(staged("poisson", kTwoStages), R"(, "duration_s": 10)"),
             "\"duration_s\": not used with arrival.stages");
  fails_with(spec_text(staged("gamma", kTwoStages, R"(, "cv": 2)")),
             "\"arrival.stages\": not used with process \"gamma\"");
  fails_with(spec_text(staged("constant", "[]")), "\"arrival.stages\": expected a non-empty list");
  fails_with(spec_text(staged("constant", "5")), "\"arrival.stages\": expected a non-empty list");
  fails_with(spec_text(staged("constant", "[5]")), "\"arrival.stages[0]\": expected a JSON object");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": 5, "duration_s": 60},
                                              {"rate_per_s": 5}])")),
             "\"arrival.stages[1].duration_s\": required but missing");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": 0, "duration_s": 60}])")),
             "\"arrival.stages[0].rate_per_s\"");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": "inf", "duration_s": 60}])")),
             "\"arrival.stages[0].rate_per_s\"");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": 5, "duration_s": -1}])")),
             "\"arrival.stages[0].duration_s\"");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": 5, "duration_s": 6, "rat": 1}])")),
             "\"arrival.stages[0].rat\": unknown key");
  fails_with(spec_text(staged("constant", R"([{"rate_per_s": 5, "duration_s": 6e8},
                                              {"rate_per_s": 5, "duration_s": 6e8}])")),
             "\"arrival.stages[1].duration_s\": the stages last longer than 1e9 s");
}
