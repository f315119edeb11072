#include "sim/app/run_outputs.h"

#include <fstream>

#include "sim/app/run_error_bands.h"

#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/output_file.h"

namespace servesim {

void write_run_outputs(const SimulationOutcome& outcome, const std::filesystem::path& dir,
                       const RunOutputFiles& files) {
  const auto write_json = [&](const char* name, const nlohmann::json& document) {
    const auto path = dir / name;
    std::ofstream out = open_output_file(path);
    out << document.dump(2) << '\n';
    close_output_file(out, path);
  };
  write_json("summary.json", outcome_summary_json(outcome));
  if (files.records) CsvReporter(files.requests_jsonl).write(outcome.result, dir);
  write_json("resolved_config.json", outcome.resolved_config);
}

}  // namespace servesim
