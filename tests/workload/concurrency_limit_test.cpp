#include <catch2/catch.hpp>

#include <memory>

#include "sim/core/error.h"
#include "sim/workload/impl/concurrency_limited_arrivals.h"
#include "sim/workload/impl/constant_arrivals.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;

namespace {

SimTime at(double seconds) {
  return SimTime::from_seconds(seconds);
}

// A workload at a constant 1 req/s (arrivals 0, 1, 2, ...) of fixed lengths, `limit` in
// flight at most.
WorkloadSpec limited_spec(int limit, int requests) {
  return test::spec_from_text(R"({
      "arrival": {"process": "constant", "rate_per_s": 1, "max_concurrency": )" +
                              std::to_string(limit) + R"(},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "num_requests": )" + std::to_string(requests) +
                              "}");
}

}  // namespace

TEST_CASE("a concurrency limit sends an arrival when a slot frees, first come first served",
          "[workload][max_concurrency]") {
  // Two slots; requests arrive at 0, 1, 2, 3 and 4 s; each takes 2.5 s from when it is sent.
  // By hand: r0 0 -> 2.5, r1 1 -> 3.5, r2 arrives at 2 and waits for r0's slot: 2.5 -> 5,
  // r3 arrives at 3 and waits for r1's: 3.5 -> 6, r4 arrives at 4 and waits for r2's: 5.
  const auto source = make_workload_source(limited_spec(2, 5), RngStreams(1));
  std::vector<SimTime> sent;
  std::vector<std::pair<SimTime, RequestSpec>> in_flight;  // (finish, request)
  while (!source->exhausted()) {
    if (auto request = source->next()) {
      sent.push_back(request->arrival);
      in_flight.emplace_back(request->arrival + at(2.5), *request);
      continue;
    }
    // Nothing can be sent before a request finishes: finish the earliest.
    REQUIRE_FALSE(in_flight.empty());
    auto earliest =
        std::min_element(in_flight.begin(), in_flight.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    source->on_request_done(earliest->second, earliest->first);
    in_flight.erase(earliest);
  }
  CHECK(sent == std::vector<SimTime>{at(0), at(1), at(2.5), at(3.5), at(5)});
}

TEST_CASE("a concurrency limit never reached leaves the arrivals as they are",
          "[workload][max_concurrency]") {
  ConcurrencyLimitedArrivals limited(std::make_unique<ConstantArrivals>(4.0), 3);
  ConstantArrivals plain(4.0);
  Rng rng_a(3), rng_b(3);
  for (int i = 0; i < 3; ++i)
    CHECK(limited.next(rng_a) == plain.next(rng_b));
  CHECK_FALSE(limited.next(rng_a));  // three in flight
  limited.on_request_done(at(0.1));  // before the fourth arrival (0.75 s): it keeps its time
  CHECK(limited.next(rng_a) == plain.next(rng_b));
  CHECK_THROWS_AS(ConcurrencyLimitedArrivals(std::make_unique<ConstantArrivals>(1.0), 0),
                  InvariantError);
}

TEST_CASE("max_concurrency is read, written back, and refused where it means nothing",
          "[workload][max_concurrency]") {
  const auto spec = limited_spec(4, 10);
  CHECK(spec.arrival.max_concurrency == 4);
  CHECK(workload_spec_to_json(spec)["arrival"]["max_concurrency"] == 4);
  CHECK(workload_spec_to_json(parse_workload_spec(workload_spec_to_json(spec), "round trip",
                                                  ".")) == workload_spec_to_json(spec));
  CHECK_FALSE(workload_spec_to_json(test::spec_from_text(R"({
      "arrival": {"process": "poisson", "rate_per_s": 1},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "num_requests": 3})"))["arrival"]
                  .contains("max_concurrency"));
  CHECK_THROWS_WITH(test::spec_from_text(R"({
      "arrival": {"process": "closed_loop", "users": 2, "max_concurrency": 4},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "num_requests": 3})"),
                    Catch::Matchers::Contains("max_concurrency") &&
                        Catch::Matchers::Contains("not used with process \"closed_loop\""));
  CHECK_THROWS_WITH(test::spec_from_text(R"({
      "arrival": {"process": "poisson", "rate_per_s": 1, "max_concurrency": 0},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 10},
                  "output": {"distribution": "fixed", "tokens": 5}},
      "num_requests": 3})"),
                    Catch::Matchers::Contains("max_concurrency"));
}
