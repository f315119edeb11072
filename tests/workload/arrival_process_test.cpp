#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/workload/impl/closed_loop_arrivals.h"
#include "sim/workload/impl/constant_arrivals.h"
#include "sim/workload/impl/gamma_arrivals.h"
#include "sim/workload/impl/poisson_arrivals.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;

namespace {

std::vector<double> draw_gaps_s(IArrivalProcess& process, int count, std::uint64_t seed = 7) {
  Rng rng(seed);
  std::vector<double> gaps;
  SimTime previous = *process.next(rng);
  for (int i = 0; i < count; ++i) {
    const SimTime arrival = *process.next(rng);
    gaps.push_back((arrival - previous).seconds());
    previous = arrival;
  }
  return gaps;
}

WorkloadSpec rate_spec(const std::string& arrival, int num_requests) {
  return test::spec_from_text(R"({"arrival": )" + arrival +
                              R"(, "lengths": {"distribution": "independent",
      "prompt": {"distribution": "fixed", "tokens": 10},
      "output": {"distribution": "fixed", "tokens": 5}}, "num_requests": )" +
                              std::to_string(num_requests) + "}");
}

}  // namespace

TEST_CASE("poisson gaps have mean 1/rate and CV 1", "[workload]") {
  PoissonArrivals poisson(4.0);
  const auto stats = test::stats_of(draw_gaps_s(poisson, 20000));
  CHECK(stats.mean == Approx(0.25).epsilon(0.03));
  CHECK(stats.cv == Approx(1.0).epsilon(0.05));
}

TEST_CASE("gamma gaps have the configured CV", "[workload]") {
  for (const double cv : {0.5, 3.0}) {
    INFO("cv " << cv);
    GammaArrivals gamma(2.0, cv);
    const auto stats = test::stats_of(draw_gaps_s(gamma, 50000));
    CHECK(stats.mean == Approx(0.5).epsilon(0.05));
    CHECK(stats.cv == Approx(cv).epsilon(0.10));
  }
}

TEST_CASE("the first arrival is at t = 0 and constant arrivals do not drift", "[workload]") {
  ConstantArrivals constant(3.0);
  Rng rng(1);
  // Arrival k at k / 3 s to the nearest nanosecond: 0, 333,333,333, 666,666,667, 1 s, ...
  for (std::int64_t k = 0; k < 3000; ++k)
    REQUIRE(constant.next(rng)->ns() == (k * 1'000'000'000 + 1) / 3);
  ConstantArrivals five(5.0);
  for (std::int64_t k = 0; k < 1000; ++k)
    REQUIRE(five.next(rng)->ns() == k * 200'000'000);  // a gap of exactly 200 ms
}

TEST_CASE("an infinite rate sends every request at t = 0", "[workload]") {
  for (const char* process : {"poisson", "gamma", "constant"}) {
    INFO(process);
    const std::string cv = std::string(process) == "gamma" ? R"(, "cv": 2)" : "";
    const auto requests = test::generate(rate_spec(
        R"({"process": ")" + std::string(process) + R"(", "rate_per_s": "inf")" + cv + "}", 50));
    REQUIRE(requests.size() == 50);
    for (const auto& r : requests)
      REQUIRE(r.arrival.ns() == 0);
  }
}

TEST_CASE("closed loop releases a user's next request after its think time", "[workload]") {
  const auto spec = test::spec_from_text(R"({
      "arrival": {"process": "closed_loop", "users": 2, "think_time_s": 1.5},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "num_requests": 5})");
  const auto source = make_workload_source(spec, RngStreams(1));
  const auto at = [](double s) { return SimTime::from_seconds(s); };

  const auto first = source->next();
  const auto second = source->next();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->id == 0);
  CHECK(second->id == 1);
  CHECK(first->arrival == at(0));
  CHECK(second->arrival == at(0));
  CHECK_FALSE(source->next());  // both users wait for their requests
  CHECK_FALSE(source->exhausted());

  source->on_request_done(*second, at(2.0));
  source->on_request_done(*first, at(3.0));
  const auto third = source->next();
  const auto fourth = source->next();
  REQUIRE(third);
  REQUIRE(fourth);
  CHECK(third->id == 2);
  CHECK(third->arrival == at(3.5));
  CHECK(fourth->arrival == at(4.5));
  CHECK_FALSE(source->next());

  source->on_request_done(*third, at(4.0));
  const auto fifth = source->next();
  REQUIRE(fifth);
  CHECK(fifth->id == 4);
  CHECK(fifth->arrival == at(5.5));
  CHECK(source->exhausted());  // num_requests reached
  source->on_request_done(*fourth, at(6.0));
  CHECK_FALSE(source->next());
}

TEST_CASE("closed loop refuses a completion it never released", "[workload]") {
  ClosedLoopArrivals loop(1, 0.0);
  CHECK_THROWS_AS(loop.on_request_done(SimTime()), InvariantError);
}

TEST_CASE("closed loop with a duration stops once releases pass the end", "[workload]") {
  const auto spec = test::spec_from_text(R"({
      "arrival": {"process": "closed_loop", "users": 1, "think_time_s": 2},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "duration_s": 5})");
  const auto source = make_workload_source(spec, RngStreams(1));
  std::vector<std::int64_t> arrivals_ns;
  while (auto request = source->next()) {
    arrivals_ns.push_back(request->arrival.ns());
    source->on_request_done(*request, request->arrival + SimTime::from_seconds(0.5));
  }
  // [0, 5): the release due at exactly 5 s is past the end.
  CHECK(arrivals_ns == std::vector<std::int64_t>{0, 2'500'000'000});
  CHECK(source->exhausted());
}

TEST_CASE("the same seed repeats a workload and another seed changes it", "[workload]") {
  const auto spec = rate_spec(R"({"process": "gamma", "rate_per_s": 3, "cv": 2})", 500);
  const auto lengths_spec = test::spec_from_text(R"({
      "arrival": {"process": "gamma", "rate_per_s": 3, "cv": 2},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "uniform", "min": 1, "max": 1000},
                  "output": {"distribution": "lognormal", "mean": 100, "std": 80, "max": 4000}},
      "num_requests": 500})");
  const auto same_a = test::generate(lengths_spec, 11);
  const auto same_b = test::generate(lengths_spec, 11);
  const auto other = test::generate(lengths_spec, 12);
  REQUIRE(same_a.size() == 500);
  bool identical = true;
  bool differs = false;
  for (std::size_t i = 0; i < same_a.size(); ++i) {
    identical = identical && same_a[i].arrival == same_b[i].arrival &&
                same_a[i].prompt_tokens == same_b[i].prompt_tokens &&
                same_a[i].output_tokens == same_b[i].output_tokens;
    differs = differs || same_a[i].arrival != other[i].arrival ||
              same_a[i].prompt_tokens != other[i].prompt_tokens;
  }
  CHECK(identical);
  CHECK(differs);
  // Lengths draw from their own stream: changing them leaves the arrivals alone.
  const auto fixed_lengths = test::generate(spec, 11);
  for (std::size_t i = 0; i < same_a.size(); ++i) {
    REQUIRE(fixed_lengths[i].arrival == same_a[i].arrival);
  }
}
