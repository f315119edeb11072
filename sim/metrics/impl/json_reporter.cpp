#include "sim/metrics/impl/json_reporter.h"

#include "sim/metrics/output_file.h"
#include "sim/metrics/summary_json.h"

namespace servesim {

void JsonReporter::write(const RunResult& result, const std::filesystem::path& out_dir) const {
  const auto path = out_dir / "summary.json";
  auto out = open_output_file(path);
  out << summary_to_json(result.summary).dump(2) << '\n';
  close_output_file(out, path);
}

}  // namespace servesim
