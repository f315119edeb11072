#include "sim/metrics/impl/console_reporter.h"

#include <algorithm>
#include <iomanip>
#include <locale>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace servesim {
namespace {

constexpr int kLabelWidth = 24;
constexpr int kNumberWidth = 11;

std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text.imbue(std::locale::classic());
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

void print_line(std::ostream& out, const std::string& label, const std::string& value,
                const std::string& unit) {
  out << "  " << std::left << std::setw(kLabelWidth) << label << std::right
      << std::setw(kNumberWidth) << value << (unit.empty() ? "" : " " + unit) << '\n';
}

// The latency table, each column as wide as its widest cell plus a two-space gap, so that
// large values (minutes of queueing, in milliseconds) never run into their neighbours.
void print_latency_table(std::ostream& out, const RunSummary& s) {
  const std::vector<std::pair<std::string, const LatencyStats*>> rows{
      {"TTFT", &s.ttft_s},
      {"TPOT", &s.tpot_s},
      {"ITL (+-" + fixed(s.itl_relative_error * 100, 1) + "%)", &s.itl_s},
      {"E2E", &s.e2e_s}};
  std::vector<std::vector<std::string>> cells{{"mean", "p50", "p90", "p99", "max"}};
  for (const auto& [label, stats] : rows) {
    auto& row = cells.emplace_back();
    for (const double seconds : {stats->mean, stats->p50, stats->p90, stats->p99, stats->max})
      row.push_back(fixed(seconds * 1e3, 3));
  }
  std::vector<std::size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size() + 2);
  }
  for (std::size_t r = 0; r < cells.size(); ++r) {
    out << "  " << std::left << std::setw(kLabelWidth)
        << (r == 0 ? "Latency (ms)" : rows[r - 1].first) << std::right;
    for (std::size_t c = 0; c < cells[r].size(); ++c)
      out << std::setw(static_cast<int>(widths[c])) << cells[r][c];
    out << '\n';
  }
}

}  // namespace

void print_summary(std::ostream& out, const RunSummary& s, const RejectionCounts& rejections) {
  out << "Run summary\n";
  print_line(out, "Requests completed", std::to_string(s.requests_completed), "");
  print_line(out, "Requests rejected", std::to_string(s.requests_rejected), "");
  for (const auto& [reason, count] : rejections)
    out << "    " << count << ": " << reason << '\n';
  print_line(out, "Duration", fixed(s.duration_s, 3), "s");
  print_line(out, "Request throughput", fixed(s.throughput_requests_per_s, 3), "req/s");
  print_line(out, "Output token throughput", fixed(s.throughput_output_tokens_per_s, 1), "tok/s");
  print_line(out, "Total token throughput", fixed(s.throughput_total_tokens_per_s, 1), "tok/s");
  print_line(out, "Mean batch size", fixed(s.mean_batch_size, 2), "");
  print_line(out, "KV utilization", fixed(s.kv_utilization * 100, 1), "%");
  const auto share = [](double f) { return fixed(f * 100, 1) + "%"; };
  out << "  KV memory: token states " << share(s.kv_memory.token_states) << ", reserved "
      << share(s.kv_memory.reserved) << ", internal fragmentation "
      << share(s.kv_memory.internal_fragmentation) << ", external fragmentation "
      << share(s.kv_memory.external_fragmentation) << ", free " << share(s.kv_memory.free) << '\n';
  print_line(out, "Preemptions", std::to_string(s.preemptions), "");
  print_line(out, "Normalized latency", fixed(s.normalized_latency_s_per_token * 1e3, 3),
             "ms/token");
  if (s.slo_attainment) print_line(out, "SLO attainment", fixed(*s.slo_attainment * 100, 1), "%");

  out << '\n';
  print_latency_table(out, s);
}

void ConsoleReporter::write(const RunResult& result, const std::filesystem::path&) const {
  print_summary(*out_, result.summary, result.collector.rejections_by_reason());
}

}  // namespace servesim
