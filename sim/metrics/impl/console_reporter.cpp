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

// vLLM's result block (vllm bench serve): 40-column labels, values after one space, section
// titles centred in 50 columns.
constexpr std::size_t kLabelWidth = 40;
constexpr std::size_t kBlockWidth = 50;

std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text.imbue(std::locale::classic());
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

void line(std::ostream& out, const std::string& label, const std::string& value) {
  out << label;
  if (label.size() < kLabelWidth) out << std::string(kLabelWidth - label.size(), ' ');
  out << ' ' << value << '\n';
}

// As Python's "{:{fill}^{width}}": the extra fill character, if any, on the right.
void title(std::ostream& out, const std::string& text, char fill) {
  const std::size_t pad = text.size() < kBlockWidth ? kBlockWidth - text.size() : 0;
  out << std::string(pad / 2, fill) << text << std::string(pad - pad / 2, fill) << '\n';
}

void latency_section(std::ostream& out, const std::string& header, const std::string& name,
                     const LatencyStats& stats) {
  title(out, header, '-');
  const auto ms = [](double seconds) { return fixed(seconds * 1e3, 2); };
  line(out, "Mean " + name + " (ms):", ms(stats.mean));
  line(out, "Median " + name + " (ms):", ms(stats.p50));
  line(out, "Std " + name + " (ms):", ms(stats.stddev));
  line(out, "P90 " + name + " (ms):", ms(stats.p90));
  line(out, "P95 " + name + " (ms):", ms(stats.p95));
  line(out, "P99 " + name + " (ms):", ms(stats.p99));
  line(out, "Max " + name + " (ms):", ms(stats.max));
}

}  // namespace

void print_summary(std::ostream& out, const RunSummary& s, const RejectionCounts& rejections) {
  title(out, " Serving Benchmark Result ", '=');
  line(out, "Successful requests:", std::to_string(s.requests_completed));
  line(out, "Failed requests (rejected):", std::to_string(s.requests_rejected));
  for (const auto& [reason, count] : rejections)
    out << "  " << count << ": " << reason << '\n';
  line(out, "Requests cut at max_len:", std::to_string(s.requests_output_cut));
  line(out, "Output tokens cut at max_len:", std::to_string(s.cut_output_tokens));
  line(out, "Benchmark duration (s):", fixed(s.duration_s, 2));
  line(out, "Total input tokens:", std::to_string(s.prompt_tokens));
  line(out, "Total generated tokens:", std::to_string(s.output_tokens));
  line(out, "Request throughput (req/s):", fixed(s.throughput_requests_per_s, 2));
  if (s.goodput_requests_per_s) {
    line(out, "Request goodput (req/s):", fixed(*s.goodput_requests_per_s, 2));
  }
  line(out, "Output token throughput (tok/s):", fixed(s.throughput_output_tokens_per_s, 2));
  line(out, "Total token throughput (tok/s):", fixed(s.throughput_total_tokens_per_s, 2));
  // Past MetricsOptions::exact_latency_limit requests, percentiles come from a histogram.
  const std::string sketched =
      s.latency_relative_error > 0
          ? " (percentiles +-" + fixed(s.latency_relative_error * 100, 1) + "%)"
          : "";
  latency_section(out, "Time to First Token" + sketched, "TTFT", s.ttft_s);
  latency_section(out, "Time per Output Token (excl. 1st token)" + sketched, "TPOT", s.tpot_s);
  latency_section(
      out, "Inter-token Latency (percentiles +-" + fixed(s.itl_relative_error * 100, 1) + "%)",
      "ITL", s.itl_s);
  latency_section(out, "End-to-end Latency" + sketched, "E2EL", s.e2e_s);
  title(out, "Serving and KV memory", '-');
  if (s.slo_attainment) line(out, "SLO attainment (%):", fixed(*s.slo_attainment * 100, 1));
  line(out, "Normalized latency (ms/token):", fixed(s.normalized_latency_s_per_token * 1e3, 3));
  line(out, "Mean batch size:", fixed(s.mean_batch_size, 2));
  line(out, "Preemptions:", std::to_string(s.preemptions));
  line(out, "KV utilization (%):", fixed(s.kv_utilization * 100, 1));
  const auto share = [](double f) { return fixed(f * 100, 1); };
  line(out, "KV token states (%):", share(s.kv_memory.token_states));
  line(out, "KV reserved (%):", share(s.kv_memory.reserved));
  line(out, "KV internal fragmentation (%):", share(s.kv_memory.internal_fragmentation));
  line(out, "KV external fragmentation (%):", share(s.kv_memory.external_fragmentation));
  line(out, "KV free (%):", share(s.kv_memory.free));
  line(out, "KV cached (%):", share(s.kv_memory.cached));
  line(out, "Prefix-cache hit rate (%):", share(s.prefix_cache_hit_rate));
  out << std::string(kBlockWidth, '=') << '\n';
}

void ConsoleReporter::write(const RunResult& result, const std::filesystem::path&) const {
  print_summary(*out_, result.summary, result.collector.rejections_by_reason());
}

}  // namespace servesim
