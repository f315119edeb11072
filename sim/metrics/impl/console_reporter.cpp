#include "sim/metrics/impl/console_reporter.h"

#include <iomanip>
#include <locale>
#include <sstream>
#include <string>

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

void print_latency_row(std::ostream& out, const std::string& label, const LatencyStats& s) {
  out << "  " << std::left << std::setw(kLabelWidth) << label << std::right;
  for (double seconds : {s.mean, s.p50, s.p90, s.p99, s.max}) {
    out << std::setw(kNumberWidth) << fixed(seconds * 1e3, 3);
  }
  out << '\n';
}

}  // namespace

void print_summary(std::ostream& out, const RunSummary& s) {
  out << "Run summary\n";
  print_line(out, "Requests completed", std::to_string(s.requests_completed), "");
  print_line(out, "Requests rejected", std::to_string(s.requests_rejected), "");
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

  out << '\n' << "  " << std::left << std::setw(kLabelWidth) << "Latency (ms)" << std::right;
  for (const char* column : {"mean", "p50", "p90", "p99", "max"}) {
    out << std::setw(kNumberWidth) << column;
  }
  out << '\n';
  print_latency_row(out, "TTFT", s.ttft_s);
  print_latency_row(out, "TPOT", s.tpot_s);
  print_latency_row(out, "ITL (+-" + fixed(s.itl_relative_error * 100, 1) + "%)", s.itl_s);
  print_latency_row(out, "E2E", s.e2e_s);
}

void ConsoleReporter::write(const RunResult& result, const std::filesystem::path&) const {
  print_summary(*out_, result.summary);
}

}  // namespace servesim
