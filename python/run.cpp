#include "python/run.h"

#include <filesystem>
#include <optional>
#include <vector>

#include "python/conversions.h"
#include "python/settings.h"
#include "sim/app/app.h"
#include "sim/metrics/record_columns.h"

namespace servesim::python {

PyRunResult run(const py::object& config, const py::kwargs& settings) {
  const ConfigSources sources = config_sources(config, settings);
  const std::filesystem::path root = data_root();
  const std::filesystem::path working_dir = std::filesystem::current_path();

  // Everything up to the columns runs without the GIL, so that threads simulate in parallel.
  std::optional<SimulationOutcome> outcome;
  nlohmann::json summary;
  std::optional<std::vector<ColumnValues>> requests;
  std::optional<std::vector<ColumnValues>> iterations;
  {
    const py::gil_scoped_release release;
    outcome.emplace(
        run_simulation(assemble_config(sources, root), root, working_dir,
                       {.keep_request_timings = false, .keep_records = true, .record_sinks = {}}));
    require_served(outcome->result);
    summary = outcome_summary_json(*outcome);
    const MetricsCollector& collector = outcome->result.collector;
    if (collector.options().keep_request_records) {
      requests = request_table(collector.request_records());
      if (collector.has_ttft_parts()) {
        for (ColumnValues& column : ttft_part_table(collector))
          requests->push_back(std::move(column));
      }
    }
    if (collector.options().keep_iteration_records) {
      iterations = iteration_table(collector.iteration_records());
    }
  }

  PyRunResult result;
  result.summary = to_python(summary);
  result.requests = requests ? data_frame(*requests) : py::none();
  result.iterations = iterations ? data_frame(*iterations) : py::none();
  result.resolved_config = to_python(outcome->resolved_config);
  for (const auto& [reason, count] : outcome->result.collector.rejections_by_reason())
    result.rejections[py::str(reason)] = count;
  result.kv_capacity_tokens_per_replica = outcome->kv_capacity_tokens_per_replica;
  result.events = static_cast<std::int64_t>(outcome->stats.events);
  return result;
}

}  // namespace servesim::python
