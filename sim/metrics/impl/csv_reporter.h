#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/record_sink.h"
#include "sim/metrics/reporter.h"

namespace servesim {

// Where a run's record files go; a file with an empty path is not written.
struct RecordFiles {
  std::filesystem::path requests;        // requests.csv
  std::filesystem::path requests_jsonl;  // requests.csv again as JSON lines
  std::filesystem::path iterations;      // iterations.csv

  // requests.csv and iterations.csv in `dir`, and requests.jsonl when asked for.
  static RecordFiles in(const std::filesystem::path& dir, bool requests_jsonl);
};

// Writes requests.csv (one row per completed or rejected request, by id), requests.jsonl
// (the same cells as JSON objects: numbers as the CSV writes them, an empty cell as null, a
// text as a JSON string) and iterations.csv (one row per iteration of every replica, by start
// time, then replica) from records that arrive in that order (RecordOrder puts them in it),
// row by row: memory is one buffer per file whatever the run's length. Columns and cell
// formats are listed in docs/metrics.md. The files are complete after finish(); a failed
// write throws InputError naming the file.
class CsvRecordWriter final : public IRecordSink {
 public:
  explicit CsvRecordWriter(RecordFiles files) : files_(std::move(files)) {}

  void begin(const RecordLayout& layout) override;
  void on_request(const RequestRecord& record,
                  const std::array<double, kTtftParts>* ttft_parts) override;
  void on_iteration(const IterationRecord& record) override;
  void finish() override;

 private:
  struct File {
    std::filesystem::path path;
    std::ofstream out;
    std::string buffer;  // rows not yet handed to the stream
    void open(const std::filesystem::path& file);
    void flush_if_full();
    void close();
  };
  RecordFiles files_;
  RecordLayout layout_;
  File requests_, requests_jsonl_, iterations_;
};

// One record file from the records `collector` kept (tests and tools; a run writes through
// CsvReporter).
void write_requests_csv(const MetricsCollector& collector, const std::filesystem::path& path);
void write_iterations_csv(const MetricsCollector& collector, const std::filesystem::path& path);

// Writes requests.csv and iterations.csv, and requests.jsonl when asked for, from the records
// a collector kept (through CsvRecordWriter), each only when the collector kept those records:
// a header without rows would read as a run with no requests.
class CsvReporter final : public IReporter {
 public:
  explicit CsvReporter(bool requests_jsonl = false) : requests_jsonl_(requests_jsonl) {}
  void write(const RunResult& result, const std::filesystem::path& out_dir) const override;

 private:
  bool requests_jsonl_;
};

}  // namespace servesim
