#include "sim/cli/band_report.h"

#include <array>

#include "sim/cli/format.h"

namespace servesim::cli {
namespace {

struct Headline {
  BandMetric metric;
  const char* label;
  const char* path;  // in the summary: a latency's p99, or a throughput
};
constexpr std::array<Headline, 4> kHeadlines{{
    {BandMetric::Ttft, "TTFT p99", "/ttft_s/p99"},
    {BandMetric::Tpot, "TPOT p99", "/tpot_s/p99"},
    {BandMetric::E2e, "E2E p99", "/e2e_s/p99"},
    {BandMetric::Throughput, "Output throughput", "/throughput_output_tokens_per_s"},
}};

}  // namespace

std::optional<BandLookup> summary_bands(const nlohmann::json& summary) {
  const auto bands = summary.find("error_bands");
  if (bands == summary.end() || !bands->is_object()) return std::nullopt;
  return band_lookup_from_json(*bands);
}

void print_error_bands(std::ostream& out, const nlohmann::json& summary) {
  const auto bands = summary_bands(summary);
  if (!bands) return;
  const DeploymentClass& d = bands->deployment;
  if (!bands->uncovered.empty()) {
    out << "Error bands: none for " << d.engine << " on " << d.hardware_class << ", "
        << d.model_family << " models, " << d.regime << " load (" << bands->uncovered << ")\n";
    return;
  }
  out << "Error bands (measured / predicted - 1, 10th-90th percentile of validated points; "
      << d.engine << " on " << d.hardware_class << ", " << d.model_family << ", " << d.regime
      << " load):\n";
  for (const Headline& h : kHeadlines) {
    const nlohmann::json::json_pointer path(h.path);
    if (!summary.contains(path)) continue;
    const double value = summary.at(path).get<double>();
    out << "  " << h.label << " "
        << (h.metric == BandMetric::Throughput ? format_fixed(value, 1) + " tok/s"
                                               : format_seconds(value))
        << " " << bands->text(h.metric) << '\n';
  }
}

std::string band_cell(const nlohmann::json& summary, BandMetric metric) {
  const auto bands = summary_bands(summary);
  if (!bands || !(*bands)[metric]) return "-";
  return (*bands)[metric]->range();
}

}  // namespace servesim::cli
