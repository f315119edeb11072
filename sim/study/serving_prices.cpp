#include "sim/study/serving_prices.h"

#include "sim/study/summary_columns.h"

namespace servesim {

std::optional<ServingPrices> serving_prices(double usd_per_gpu_hour, std::int64_t gpus,
                                            double rate_per_s, const nlohmann::json& summary) {
  if (!summary.contains("steady_state")) return std::nullopt;
  const double offered = summary_value(summary, "steady_state.offered_requests_per_s");
  if (!(offered > 0) || !(rate_per_s > 0)) return std::nullopt;
  const double input_per_request =
      summary_value(summary, "steady_state.offered_input_tokens_per_s") / offered;
  const double output_per_request =
      summary_value(summary, "steady_state.offered_output_tokens_per_s") / offered;
  ServingPrices p;
  p.usd_per_gpu_hour = usd_per_gpu_hour;
  p.usd_per_hour = usd_per_gpu_hour * static_cast<double>(gpus);
  const double requests_per_hour = rate_per_s * 3600;
  const auto per_million = [&](double tokens_per_request) {
    return tokens_per_request > 0 ? p.usd_per_hour / (requests_per_hour * tokens_per_request) * 1e6
                                  : 0.0;
  };
  p.usd_per_million_input_tokens = per_million(input_per_request);
  p.usd_per_million_output_tokens = per_million(output_per_request);
  p.usd_per_million_tokens = per_million(input_per_request + output_per_request);
  p.usd_per_thousand_requests = p.usd_per_hour / requests_per_hour * 1e3;
  return p;
}

nlohmann::json serving_prices_json(const ServingPrices& p) {
  return {{"usd_per_gpu_hour", p.usd_per_gpu_hour},
          {"usd_per_hour", p.usd_per_hour},
          {"usd_per_million_input_tokens", p.usd_per_million_input_tokens},
          {"usd_per_million_output_tokens", p.usd_per_million_output_tokens},
          {"usd_per_million_tokens", p.usd_per_million_tokens},
          {"usd_per_thousand_requests", p.usd_per_thousand_requests}};
}

}  // namespace servesim
