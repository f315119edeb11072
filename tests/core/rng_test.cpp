#include <catch2/catch.hpp>

#include <cmath>

#include "sim/core/rng.h"

using namespace servesim;

TEST_CASE("named streams are reproducible and independent", "[core]") {
  const RngStreams a(42), b(42), c(43);
  Rng a1 = a.stream("arrivals"), b1 = b.stream("arrivals"), c1 = c.stream("arrivals");
  Rng a2 = a.stream("lengths");
  bool all_equal = true, differs_by_seed = false, differs_by_name = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a1.next_u64();
    all_equal = all_equal && x == b1.next_u64();
    differs_by_seed = differs_by_seed || x != c1.next_u64();
    differs_by_name = differs_by_name || x != a2.next_u64();
  }
  REQUIRE(all_equal);
  REQUIRE(differs_by_seed);
  REQUIRE(differs_by_name);
}

TEST_CASE("distributions have the right moments", "[core]") {
  Rng rng(7);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0, sum_g = 0, sum_g2 = 0;
  std::int64_t low = 0, high = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum_u += u;
    sum_e += rng.exponential(4.0);
    const double x = rng.normal(10.0, 2.0);
    sum_n += x;
    sum_n2 += x * x;
    const double g = rng.gamma(0.25, 8.0);  // mean 2, variance 16
    sum_g += g;
    sum_g2 += g * g;
    const auto k = rng.uniform_int(3, 5);
    REQUIRE(k >= 3);
    REQUIRE(k <= 5);
    low += k == 3;
    high += k == 5;
  }
  CHECK(sum_u / n == Approx(0.5).epsilon(0.01));
  CHECK(sum_e / n == Approx(0.25).epsilon(0.01));
  CHECK(sum_n / n == Approx(10.0).epsilon(0.005));
  CHECK(std::sqrt(sum_n2 / n - (sum_n / n) * (sum_n / n)) == Approx(2.0).epsilon(0.01));
  CHECK(sum_g / n == Approx(2.0).epsilon(0.03));
  CHECK(sum_g2 / n - (sum_g / n) * (sum_g / n) == Approx(16.0).epsilon(0.1));
  CHECK(static_cast<double>(low) / n == Approx(1.0 / 3).epsilon(0.02));
  CHECK(static_cast<double>(high) / n == Approx(1.0 / 3).epsilon(0.02));
}
