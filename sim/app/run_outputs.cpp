#include "sim/app/run_outputs.h"

#include <fstream>

#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/impl/json_reporter.h"
#include "sim/metrics/output_file.h"

namespace servesim {

void write_run_outputs(const SimulationOutcome& outcome, const std::filesystem::path& dir,
                       const RunOutputFiles& files) {
  JsonReporter().write(outcome.result, dir);
  if (files.records) CsvReporter(files.requests_jsonl).write(outcome.result, dir);
  const auto path = dir / "resolved_config.json";
  std::ofstream out = open_output_file(path);
  out << outcome.resolved_config.dump(2) << '\n';
  close_output_file(out, path);
}

}  // namespace servesim
