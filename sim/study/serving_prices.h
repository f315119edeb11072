#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace servesim {

// What serving costs at a rate a deployment meets (docs/studies.md, "Prices").
struct ServingPrices {
  double usd_per_gpu_hour = 0;
  double usd_per_hour = 0;  // every GPU of the deployment
  double usd_per_million_input_tokens = 0;
  double usd_per_million_output_tokens = 0;
  double usd_per_million_tokens = 0;  // input and output together
  double usd_per_thousand_requests = 0;
};

// The prices of `gpus` GPUs at `usd_per_gpu_hour` serving `rate_per_s` requests/s, each
// with the mean prompt and output of the requests arriving in the steady-state window of a
// study point's `summary` (its "steady_state"): cost per hour over the requests (or their
// tokens) served in an hour. Nothing when the window offered no requests.
std::optional<ServingPrices> serving_prices(double usd_per_gpu_hour, std::int64_t gpus,
                                            double rate_per_s, const nlohmann::json& summary);

nlohmann::json serving_prices_json(const ServingPrices& prices);

}  // namespace servesim
