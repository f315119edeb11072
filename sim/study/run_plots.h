#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "sim/metrics/latency_sample.h"
#include "sim/metrics/metrics_collector.h"
#include "sim/metrics/record_sink.h"
#include "sim/study/gnuplot.h"

namespace servesim {

// One row of iterations.csv as the timeline reads it.
struct TimelineRow {
  double start_s = 0;
  double duration_s = 0;
  double batch_size = 0;
  double kv_capacity_tokens = 0;
  double cached_tokens = 0;   // prompt tokens admissions found in the prefix cache
  double prefill_tokens = 0;  // prompt tokens computed
  // kv_token_states, kv_reserved, kv_internal_fragmentation, kv_external_fragmentation,
  // kv_free, kv_cached
  std::array<double, 6> kv{};
};

// An iterations.csv row as reading the file gives it back: through the file's columns
// (timeline_row_from_columns, the plain path), or from the record's fields (timeline_row,
// which RunFigureData takes: every column the timeline reads is an integer or a round-trip
// real, which read back as they are). A test holds the two equal.
TimelineRow timeline_row_from_columns(const IterationRecord& record);
TimelineRow timeline_row(const IterationRecord& record);

// What a run's figures need, reduced as the rows come: TTFT and TPOT in LatencySamples (exact
// up to 100,000 requests, then within 0.1%) and iterations in time bins, whose memory does not
// grow with the run; a disaggregated run also keeps each remote prefill's TTFT parts (56 bytes
// a request), which its figure groups by prompt length. Rows come from the
// files (write_run_figures(dir)) or, as a record sink, from a run's records in the files'
// order, each cell as reading the file gives it back (written_value), so that the figures
// are the same either way.
class RunFigureData final : public IRecordSink {
 public:
  // A completed request's cells (nullopt: empty).
  void add_latencies(std::optional<double> ttft_s, std::optional<double> tpot_s);
  // A request with TTFT parts (a disaggregated run's remote prefills).
  void add_ttft_parts(double prompt_tokens, const std::array<double, kTtftParts>& parts_s);
  // Iterations in any order. Bins are 2^k seconds wide, k the smallest integer (from -20) that
  // puts every start in the first kTimelineBins bins: a start past them merges adjacent bins
  // and doubles the width.
  void add_iteration(const TimelineRow& row);

  void begin(const RecordLayout&) override {}
  void on_request(const RequestRecord& record,
                  const std::array<double, kTtftParts>* ttft_parts) override;
  void on_iteration(const IterationRecord& record) override;
  void finish() override {}

  static constexpr std::size_t kTimelineBins = 400;
  struct Bin {
    std::array<double, 6> kv_token_seconds{};  // as TimelineRow::kv, times the duration
    double capacity_token_seconds = 0;
    double cached_tokens = 0;
    double prefill_tokens = 0;
    double batch_seconds = 0;
    double seconds = 0;
    Bin& operator+=(const Bin& other) {
      for (std::size_t c = 0; c < kv_token_seconds.size(); ++c)
        kv_token_seconds[c] += other.kv_token_seconds[c];
      capacity_token_seconds += other.capacity_token_seconds;
      cached_tokens += other.cached_tokens;
      prefill_tokens += other.prefill_tokens;
      batch_seconds += other.batch_seconds;
      seconds += other.seconds;
      return *this;
    }
  };
  const LatencySample& ttft_s() const { return ttft_s_; }
  const LatencySample& tpot_s() const { return tpot_s_; }
  const std::vector<std::pair<double, std::array<double, kTtftParts>>>& ttft_parts() const {
    return parts_;
  }
  bool has_iterations() const { return iterations_ > 0; }
  double bin_width_s() const { return bin_width_s_; }
  const std::vector<Bin>& bins() const { return bins_; }
  double cached_tokens() const { return cached_total_; }

 private:
  LatencySample ttft_s_, tpot_s_;
  std::vector<std::pair<double, std::array<double, kTtftParts>>> parts_;  // prompt, parts
  std::int64_t iterations_ = 0;
  double bin_width_s_ = 0x1p-20;
  std::vector<Bin> bins_ = std::vector<Bin>(kTimelineBins);
  double cached_total_ = 0;
};

// A run folder's requests.csv and iterations.csv into `data` (a file that is missing adds
// nothing).
void read_run_figure_files(const std::filesystem::path& run_dir, RunFigureData& data);

// From a run folder's requests.csv and iterations.csv, writes the data files and scripts of
// its figures: TTFT and TPOT CDFs (latency_cdf), the KV memory breakdown over time, stacked
// (kv_memory), and the batch size over time (batch_size). Long runs are reduced to at most
// a few hundred time bins and quantiles, so plots stay small. Returns the figures written
// (none for a file that is missing or holds no rows).
std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir);

// The same figures, byte for byte, from what a run's records reduced to (run --out draws them
// as the run goes, without reading back what it wrote); `run_dir` gets the data files and
// scripts. Tested equal to the files' version.
std::vector<Figure> write_run_figures(const std::filesystem::path& run_dir,
                                      const RunFigureData& data);

}  // namespace servesim
