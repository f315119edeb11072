#include "sim/metrics/error_bands.h"

#include <string>

#include <catch2/catch.hpp>

#include "sim/core/error.h"

using servesim::BandMetric;
using servesim::BandResidual;
using servesim::DeploymentClass;
using servesim::ErrorBands;

namespace {

// A residual of class `c` with measured / predicted `ttft` for TTFT and 1.0 for throughput.
BandResidual residual(const DeploymentClass& c, double ttft) {
  BandResidual r;
  r.deployment = c;
  r.where = "file.csv row 1";
  r.model = "llama-3-8b";
  r.hardware = "h100-sxm";
  r.measured_over_predicted[0] = ttft;
  r.measured_over_predicted[3] = 1.0;
  return r;
}

const DeploymentClass kHopperDenseLight{"vllm", "hopper", "dense", "light"};

}  // namespace

TEST_CASE("A band is the 10th to 90th percentile of measured / predicted - 1", "[metrics]") {
  // Sorted 1.0 ... 1.4: the 10th percentile sits 0.4 of the way from 1.0 to 1.1, the 90th 0.6
  // of the way from 1.3 to 1.4 (numpy's linear interpolation).
  const auto [low, high] = servesim::band_percentiles({1.4, 1.0, 1.2, 1.1, 1.3});
  CHECK(low == Approx(0.04).epsilon(1e-12));
  CHECK(high == Approx(0.36).epsilon(1e-12));
  CHECK_THROWS_AS(servesim::band_percentiles({}), servesim::InvariantError);
  CHECK(servesim::load_regime(15.9) == "light");
  CHECK(servesim::load_regime(16) == "batched");
  CHECK(servesim::load_regime(256) == "wide");
}

TEST_CASE("Bands come from the narrowest scope with enough points", "[metrics]") {
  ErrorBands bands;
  for (double ttft : {1.4, 1.0, 1.2, 1.1, 1.3})
    bands.add(residual(kHopperDenseLight, ttft));
  // Four wide-load points of the same family: too few for a band of their own.
  for (double ttft : {2.0, 2.0, 2.0, 2.0})
    bands.add(residual({"vllm", "hopper", "dense", "wide"}, ttft));

  const auto own = bands.band_for(kHopperDenseLight, 3);
  REQUIRE(own[BandMetric::Ttft]);
  CHECK(own[BandMetric::Ttft]->points == 5);
  CHECK(own[BandMetric::Ttft]->scope == "engine, GPU class, model family and load");
  CHECK(own[BandMetric::Ttft]->low == Approx(0.04));
  CHECK(own[BandMetric::Ttft]->text() ==
        "(+4%/+36%, from 5 points of this engine, GPU class, "
        "model family and load)");
  CHECK_FALSE(own[BandMetric::Tpot]);  // nobody measured it
  CHECK(own.text(BandMetric::Tpot) == "(no error band: too few validated points of this metric)");

  // The wide regime has 4 points: its band takes the family's 9.
  const auto wide = bands.band_for({"vllm", "hopper", "dense", "wide"}, 500);
  REQUIRE(wide[BandMetric::Ttft]);
  CHECK(wide[BandMetric::Ttft]->points == 9);
  CHECK(wide[BandMetric::Ttft]->scope == "engine, GPU class and model family");
  CHECK(wide[BandMetric::Ttft]->high == Approx(1.0));  // 90th of 1.0..1.4, 2.0 x 4: 2.0

  // Another family on the same GPU class: the engine and GPU class's 9 points.
  const auto moe = bands.band_for({"vllm", "hopper", "moe", "light"}, 1);
  REQUIRE(moe[BandMetric::Ttft]);
  CHECK(moe[BandMetric::Ttft]->scope == "engine and GPU class");
  CHECK(moe.uncovered.empty());

  // Nothing crosses GPU classes or engines.
  const auto blackwell = bands.band_for({"vllm", "blackwell", "dense", "light"}, 1);
  CHECK_FALSE(blackwell[BandMetric::Ttft]);
  CHECK(blackwell.uncovered ==
        "no calibration covers vllm on blackwell GPUs (validated on hopper)");
  CHECK(blackwell.text(BandMetric::Ttft) ==
        "(no error band: no calibration covers vllm on blackwell GPUs (validated on hopper))");
  CHECK(bands.band_for({"sglang", "hopper", "dense", "light"}, 1).uncovered ==
        "no calibration of engine sglang ships");

  ErrorBands few;
  few.add(residual(kHopperDenseLight, 1.0));
  CHECK(few.band_for(kHopperDenseLight, 1).uncovered ==
        "fewer than 5 validated points of vllm on hopper GPUs");
}

TEST_CASE("Residuals and band lookups read back as written", "[metrics]") {
  ErrorBands bands;
  bands.files().push_back("file.csv");
  for (double ttft : {0.9, 1.0, 1.1, 1.2, 1.3})
    bands.add(residual(kHopperDenseLight, ttft));
  const ErrorBands back = ErrorBands::from_json(bands.to_json(), "bands.json");
  REQUIRE(back.residuals().size() == 5);
  CHECK(back.files() == bands.files());
  CHECK(back.residuals()[2].deployment == kHopperDenseLight);
  CHECK(*back.residuals()[2].measured_over_predicted[0] == 1.1);
  CHECK_FALSE(back.residuals()[2].measured_over_predicted[1]);

  const auto lookup = bands.band_for(kHopperDenseLight, 2.5);
  const auto again = servesim::band_lookup_from_json(servesim::band_lookup_to_json(lookup));
  CHECK(again.deployment == kHopperDenseLight);
  CHECK(again.in_flight_requests == 2.5);
  REQUIRE(again[BandMetric::Ttft]);
  CHECK(again[BandMetric::Ttft]->text() == lookup[BandMetric::Ttft]->text());

  nlohmann::json bad = bands.to_json();
  bad["residuals"][1]["measured_over_predicted"]["ttft"] = -1;
  CHECK_THROWS_WITH(ErrorBands::from_json(bad, "bands.json"),
                    Catch::Contains("bands.json") &&
                        Catch::Contains("residuals[1].measured_over_predicted.ttft"));
  bad = bands.to_json();
  bad["residuals"][0]["deployment"].erase("regime");
  CHECK_THROWS_WITH(ErrorBands::from_json(bad, "bands.json"), Catch::Contains("regime"));
}
