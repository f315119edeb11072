#pragma once

#include <array>

#include "sim/metrics/records.h"
#include "sim/metrics/run_summary.h"

namespace servesim {

// What a run reports, known before it starts.
struct RecordLayout {
  bool requests = true;     // the configuration's output.request_records: requests.csv
  bool iterations = true;   // output.iteration_records: iterations.csv
  bool ttft_parts = false;  // a disaggregated run: each request's TTFT in parts
};

// A request's record and its TTFT parts (when it has them), held to be passed on later
// (RecordOrder until the lower ids have come, BackgroundRecordSink until its thread takes it).
struct HeldRequest {
  RequestRecord record;
  std::array<double, kTtftParts> parts{};
  bool has_parts = false;

  void hold(const RequestRecord& r, const std::array<double, kTtftParts>* ttft_parts) {
    record = r;
    has_parts = ttft_parts != nullptr;
    if (ttft_parts != nullptr) parts = *ttft_parts;
  }
  // The parts as IRecordSink::on_request takes them.
  const std::array<double, kTtftParts>* ttft_parts() const { return has_parts ? &parts : nullptr; }
};

// Receives a run's records as they happen, so that they can be written or reduced without
// being kept (MetricsCollector::set_record_sink). begin() comes first, finish() last.
class IRecordSink {
 public:
  virtual ~IRecordSink() = default;
  virtual void begin(const RecordLayout& layout) = 0;
  // A finished or rejected request; `ttft_parts` (kTtftPartNames order) when it has them.
  virtual void on_request(const RequestRecord& record,
                          const std::array<double, kTtftParts>* ttft_parts) = 0;
  virtual void on_iteration(const IterationRecord& record) = 0;
  // Every iteration starting before `start_s` has been reported (none reported later starts
  // before it): a sink that orders iterations may pass them on.
  virtual void iterations_reported_before(double start_s) { (void)start_s; }
  // The run is over: every record has been reported.
  virtual void finish() = 0;
};

}  // namespace servesim
