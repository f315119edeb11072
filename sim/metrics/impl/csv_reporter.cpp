#include "sim/metrics/impl/csv_reporter.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"

namespace servesim {
namespace {

std::string join(const std::vector<std::string>& cells) {
  std::string row;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) row += ',';
    row += cells[i];
  }
  return row;
}

constexpr const char* kRequestColumns[] = {"id",
                                           "replica",
                                           "arrival_s",
                                           "first_scheduled_s",
                                           "first_token_s",
                                           "completion_s",
                                           "prompt_tokens",
                                           "output_tokens",
                                           "requested_output_tokens",
                                           "cut_output_tokens",
                                           "preemptions",
                                           "ttft_s",
                                           "tpot_s",
                                           "e2e_s",
                                           "rejected",
                                           "reject_reason"};

// The cells of a request's row, as text: numbers as requests.csv writes them, empty where a
// value is undefined, the reject reason unquoted.
std::vector<std::string> request_cells(const RequestRecord& r) {
  using std::to_string;
  if (r.rejected) {
    // A rejected request was never served: it has no service times and no latencies.
    return {to_string(r.id),
            to_string(r.replica),
            format_round_trip(r.arrival_s),
            "",
            "",
            "",
            to_string(r.prompt_tokens),
            to_string(r.output_tokens),
            to_string(r.requested_output_tokens()),
            to_string(r.cut_output_tokens),
            to_string(r.preemptions),
            "",
            "",
            "",
            "1",
            r.reject_reason};
  }
  // Empty for a single-token request, whose TPOT is undefined (see docs/metrics.md).
  const std::string tpot_s = r.output_tokens > 1
                                 ? format_9_digits((r.completion_s - r.first_token_s) /
                                                   static_cast<double>(r.output_tokens - 1))
                                 : std::string();
  return {to_string(r.id),
          to_string(r.replica),
          format_round_trip(r.arrival_s),
          format_round_trip(r.first_scheduled_s),
          format_round_trip(r.first_token_s),
          format_round_trip(r.completion_s),
          to_string(r.prompt_tokens),
          to_string(r.output_tokens),
          to_string(r.requested_output_tokens()),
          to_string(r.cut_output_tokens),
          to_string(r.preemptions),
          format_9_digits(r.first_token_s - r.arrival_s),
          tpot_s,
          format_9_digits(r.completion_s - r.arrival_s),
          "0",
          ""};
}

std::string request_row(const RequestRecord& r) {
  std::vector<std::string> cells = request_cells(r);
  cells.back() = csv_field(cells.back());
  return join(cells);
}

// The same cells as one JSON object: every number cell is already a JSON number as written,
// an empty cell is null, the reason a string.
std::string request_json_line(const RequestRecord& r) {
  const std::vector<std::string> cells = request_cells(r);
  std::string line = "{";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    line += (i == 0 ? "\"" : ", \"") + std::string(kRequestColumns[i]) + "\": ";
    const bool text = i + 1 == cells.size();
    line += cells[i].empty() ? "null" : text ? nlohmann::json(cells[i]).dump() : cells[i];
  }
  return line + "}";
}

// Records arrive in completion order; sorting an index keeps the records untouched, and a
// stable sort keeps the output deterministic even if ids repeat.
std::vector<std::size_t> request_order(const std::vector<RequestRecord>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&records](std::size_t a, std::size_t b) {
    return records[a].id < records[b].id;
  });
  return order;
}

std::string iteration_row(const IterationRecord& it) {
  using std::to_string;
  return join({to_string(it.replica),
               format_round_trip(it.start_s),
               format_round_trip(it.duration_s),
               to_string(it.batch_size),
               to_string(it.prefill_tokens),
               to_string(it.decode_tokens),
               to_string(it.preempted),
               to_string(it.kv_used_tokens),
               to_string(it.kv_capacity_tokens),
               format_9_digits(it.kv_utilization()),
               to_string(it.kv_memory.token_states),
               to_string(it.kv_memory.reserved),
               to_string(it.kv_memory.internal_fragmentation),
               to_string(it.kv_memory.external_fragmentation),
               to_string(it.kv_memory.free),
               to_string(it.prefill_sequences),
               to_string(it.prefill_context_tokens),
               format_round_trip(it.prefill_attention_pairs),
               format_round_trip(it.prefill_masked_pairs),
               to_string(it.decode_context_tokens),
               to_string(it.sampled_sequences)});
}

}  // namespace

void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  const auto& records = collector.request_records();
  auto out = open_output_file(path);
  for (std::size_t i = 0; i < std::size(kRequestColumns); ++i)
    out << (i == 0 ? "" : ",") << kRequestColumns[i];
  out << '\n';
  for (std::size_t index : request_order(records))
    out << request_row(records[index]) << '\n';
  close_output_file(out, path);
}

void write_requests_jsonl(const MetricsCollector& collector, const std::filesystem::path& path) {
  const auto& records = collector.request_records();
  auto out = open_output_file(path);
  for (std::size_t index : request_order(records))
    out << request_json_line(records[index]) << '\n';
  close_output_file(out, path);
}

void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path) {
  auto out = open_output_file(path);
  out << "replica,start_s,duration_s,batch_size,prefill_tokens,decode_tokens,preempted,"
         "kv_used_tokens,kv_capacity_tokens,kv_utilization,kv_token_states,kv_reserved,"
         "kv_internal_fragmentation,kv_external_fragmentation,kv_free,prefill_sequences,"
         "prefill_context_tokens,prefill_attention_pairs,prefill_masked_pairs,"
         "decode_context_tokens,sampled_sequences\n";
  // By start time, then replica: how replicas' reports interleave is not part of the result.
  const auto& records = collector.iteration_records();
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&records](std::size_t a, std::size_t b) {
    if (records[a].start_s != records[b].start_s) return records[a].start_s < records[b].start_s;
    return records[a].replica < records[b].replica;
  });
  for (std::size_t index : order)
    out << iteration_row(records[index]) << '\n';
  close_output_file(out, path);
}

void CsvReporter::write(const RunResult& result, const std::filesystem::path& out_dir) const {
  const auto& options = result.collector.options();
  if (options.keep_request_records) {
    write_requests_csv(result.collector, out_dir / "requests.csv");
    write_requests_jsonl(result.collector, out_dir / "requests.jsonl");
  }
  if (options.keep_iteration_records) {
    write_iterations_csv(result.collector, out_dir / "iterations.csv");
  }
}

}  // namespace servesim
