#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

const std::string kFixedLengths = R"("lengths": {"distribution": "independent",
    "prompt": {"distribution": "fixed", "tokens": 10},
    "output": {"distribution": "fixed", "tokens": 5}})";

std::string with_arrival(const std::string& arrival, const std::string& rest) {
  return R"({"arrival": )" + arrival + ", " + kFixedLengths + rest + "}";
}

std::string with_prompt(const std::string& prompt) {
  return R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 10,
      "lengths": {"distribution": "independent", "prompt": )" +
         prompt + R"(, "output": {"distribution": "fixed", "tokens": 5}}})";
}

}  // namespace

TEST_CASE("a spec round-trips through workload_spec_to_json with defaults filled in",
          "[workload]") {
  const std::string texts[] = {
      with_arrival(R"({"process": "gamma", "rate_per_s": 2.5, "cv": 3})",
                   R"(, "num_requests": 100, "duration_s": 60)"),
      with_arrival(R"({"process": "constant", "rate_per_s": "inf"})", R"(, "num_requests": 7)"),
      with_arrival(R"({"process": "closed_loop", "users": 4})", R"(, "duration_s": 9.5)"),
      with_prompt(R"({"distribution": "lognormal", "mean": 100, "std": 50, "max": 900})"),
      R"({"arrival": {"process": "trace"}, "lengths": {"distribution": "trace"},
          "trace": {"path": "data/t.csv"}, "description": "d", "source": "s"})",
      R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 3,
          "lengths": {"distribution": "joint_empirical", "path": "l.csv",
                      "max_prompt_tokens": 100, "max_total_tokens": 150}})",
  };
  for (const auto& text : texts) {
    INFO(text);
    const WorkloadSpec spec = test::spec_from_text(text, "/base");
    const nlohmann::json written = workload_spec_to_json(spec);
    CHECK(parse_workload_spec(written, "test.json", "/elsewhere") == spec);
  }
  const WorkloadSpec loop = test::spec_from_text(
      with_arrival(R"({"process": "closed_loop", "users": 4})", R"(, "duration_s": 9.5)"));
  CHECK(workload_spec_to_json(loop)["arrival"]["think_time_s"] == 0.0);
  const WorkloadSpec lognormal = test::spec_from_text(
      with_prompt(R"({"distribution": "lognormal", "mean": 100, "std": 50, "max": 900})"));
  CHECK(workload_spec_to_json(lognormal)["lengths"]["prompt"]["min"] == 1);
  const WorkloadSpec trace = test::spec_from_text(texts[4], "/base");
  CHECK(trace.trace->path == "/base/data/t.csv");
  CHECK(workload_spec_to_json(trace)["trace"]["time_scale"] == 1.0);
  CHECK(workload_spec_to_json(test::spec_from_text(texts[1]))["arrival"]["rate_per_s"] == "inf");
}

TEST_CASE("spec errors name the key path", "[workload]") {
  const auto fails_with = [](const std::string& text, const std::string& expected) {
    INFO(text);
    CHECK_THROWS_WITH(test::spec_from_text(text), Contains("test.json") && Contains(expected));
  };
  fails_with(with_arrival(R"({"process": "poisson", "rate_per_s": 1})",
                          R"(, "num_requests": 5, "nmu_requests": 5)"),
             "\"nmu_requests\": unknown key");
  fails_with(with_prompt(R"({"distribution": "fixed", "tokens": 3, "tokenz": 4})"),
             "\"lengths.prompt.tokenz\": unknown key");
  fails_with(
      with_arrival(R"({"process": "poisson", "rate_per_s": 1, "cv": 2})", R"(, "num_requests": 5)"),
      "\"arrival.cv\": not used with process \"poisson\"");
  fails_with(with_prompt(R"({"distribution": "uniform", "min": 9, "max": 3})"),
             "\"lengths.prompt.min\": min (9) exceeds max (3)");
  fails_with(with_prompt(R"({"distribution": "normal", "mean": 50, "std": 5, "min": 90,
                              "max": 80})"),
             "exceeds max");
  fails_with(with_prompt(R"({"distribution": "fixed", "tokens": 0})"), "lengths.prompt.tokens");
  fails_with(with_prompt(R"({"distribution": "zipf", "tokens": 3})"),
             "valid values are fixed, uniform, normal, lognormal");
  fails_with(with_arrival(R"({"process": "poisson", "rate_per_s": 0})", R"(, "num_requests": 5)"),
             "arrival.rate_per_s");
  fails_with(
      with_arrival(R"({"process": "poisson", "rate_per_s": "fast"})", R"(, "num_requests": 5)"),
      "\"inf\"");
  fails_with(
      with_arrival(R"({"process": "gamma", "rate_per_s": 1, "cv": 0})", R"(, "num_requests": 5)"),
      "arrival.cv");
  fails_with(with_arrival(R"({"process": "closed_loop", "users": 0})", R"(, "num_requests": 5)"),
             "arrival.users");
  fails_with(with_arrival(R"({"process": "closed_loop", "users": 2, "think_time_s": -1})",
                          R"(, "num_requests": 5)"),
             "arrival.think_time_s");
  fails_with(with_arrival(R"({"process": "poisson", "rate_per_s": 1})", ""), "stop condition");
  fails_with(with_arrival(R"({"process": "poisson", "rate_per_s": "inf"})", R"(, "duration_s": 5)"),
             "\"num_requests\": required");
  fails_with(with_arrival(R"({"process": "trace"})", ""), "\"trace\": required");
  fails_with(with_arrival(R"({"process": "poisson", "rate_per_s": 1})",
                          R"(, "num_requests": 5, "trace": {"path": "t.csv"})"),
             "\"trace\": given");
  fails_with(R"({"arrival": {"process": "trace"}, "trace": {"path": "t.csv", "time_scale": 0},
                 "lengths": {"distribution": "trace"}})",
             "trace.time_scale");
  fails_with(R"({"arrival": {"process": "trace"}, "trace": {"path": "t.csv"},
                 "lengths": {"distribution": "trace", "max_total_tokens": 100}})",
             "\"lengths.max_total_tokens\": not used with distribution \"trace\"");
}

TEST_CASE("num_requests and duration_s stop a synthetic workload", "[workload]") {
  const auto count = test::generate(test::spec_from_text(
      with_arrival(R"({"process": "poisson", "rate_per_s": 10})", R"(, "num_requests": 123)")));
  CHECK(count.size() == 123);
  CHECK(count.back().id == 122);

  const auto timed = test::generate(test::spec_from_text(
      with_arrival(R"({"process": "poisson", "rate_per_s": 10})", R"(, "duration_s": 100)")));
  CHECK(timed.size() == Approx(1000).margin(100));  // 10/s for 100 s, sd about 32
  CHECK(timed.back().arrival < SimTime::from_seconds(100));

  const auto both = test::generate(
      test::spec_from_text(with_arrival(R"({"process": "constant", "rate_per_s": 2})",
                                        R"(, "duration_s": 10, "num_requests": 100)")));
  CHECK(both.size() == 20);  // t = 0, 0.5, ..., 9.5: the end is excluded, [0, 10)

  const auto source = make_workload_source(
      test::spec_from_text(
          with_arrival(R"({"process": "constant", "rate_per_s": 1})", R"(, "num_requests": 2)")),
      RngStreams(1));
  CHECK(source->next());
  CHECK_FALSE(source->exhausted());
  CHECK(source->next());
  CHECK(source->exhausted());  // known at once, not one next() later
  CHECK_FALSE(source->next());
}

TEST_CASE("a missing lengths or trace file is reported when the source is built", "[workload]") {
  const auto spec = test::spec_from_text(R"({"arrival": {"process": "poisson", "rate_per_s": 1},
      "num_requests": 3, "lengths": {"distribution": "joint_empirical", "path": "missing.csv"}})",
                                         "/nonexistent");
  CHECK_THROWS_WITH(make_workload_source(spec, RngStreams(1)),
                    Contains("/nonexistent/missing.csv") && Contains("not found"));
}
