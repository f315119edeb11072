#include "sim/calibration/serving_point.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/calibration/serving_bench_result.h"
#include "sim/calibration/serving_csv.h"
#include "sim/calibration/serving_deployed.h"
#include "sim/calibration/serving_fields.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/csv_cursor.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using namespace serving_fields;

std::string format_number(double value) {
  if (std::isinf(value)) return "inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

double LoadStage::generated_output_tokens() const {
  if (ignore_eos && output_tokens_requested) return static_cast<double>(*output_tokens_requested);
  return output_tokens_mean;
}

double LoadStage::counted_per_generated_token() const {
  if (!ignore_eos || !output_tokens_requested) return 1.0;
  return output_tokens_mean / static_cast<double>(*output_tokens_requested);
}

std::int64_t ClosedLoopRequests::shortest(std::int64_t tokens) const {
  const auto low =
      static_cast<std::int64_t>(std::floor(random_range_ratio * static_cast<double>(tokens)));
  return std::clamp<std::int64_t>(low, 1, tokens);
}

std::string ServingPoint::workload_label() const {
  struct Label {
    std::string operator()(const LoadStage& s) const { return s.workload; }
    std::string operator()(const StaticBatch& b) const {
      return "batch " + std::to_string(b.batch_size) + " x " + std::to_string(b.input_tokens) +
             "/" + std::to_string(b.output_tokens);
    }
    std::string operator()(const BurstRequests& b) const {
      return "burst " + std::to_string(b.num_requests) + " x " + std::to_string(b.prompt_tokens) +
             "/exp(" + format_number(b.output_tokens_mean) +
             ")<=" + std::to_string(b.max_output_tokens);
    }
    std::string operator()(const BenchReplay& r) const {
      return "replay " + std::to_string(r.requests.size());
    }
    std::string operator()(const ClosedLoopRequests& c) const {
      return "closed loop " + std::to_string(c.concurrency) + " x " +
             std::to_string(c.input_tokens) + "/" + std::to_string(c.output_tokens) + " (" +
             format_number(c.random_range_ratio) + ")";
    }
  };
  return std::visit(Label{}, workload);
}

std::string ServingPoint::where() const {
  return row == 0 ? source : source + " row " + std::to_string(row);
}

std::optional<double> ServingPoint::rate_per_s() const {
  if (const auto* s = std::get_if<LoadStage>(&workload)) return s->rate_per_s;
  if (const auto* r = std::get_if<BenchReplay>(&workload)) return r->request_rate_per_s;
  if (std::holds_alternative<ClosedLoopRequests>(workload) ||
      std::holds_alternative<BurstRequests>(workload) ||
      std::holds_alternative<StaticBatch>(workload)) {
    return std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

namespace {

// Whether a CSV file is a deployment report (serving_deployed.h): its first line that is not a
// '#' comment names serve_cmd and n_req.
bool deployment_report(const fs::path& file) {
  std::istringstream in(read_text_file(file));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#")) return is_deployment_report_header(line);
  }
  return false;
}

}  // namespace

std::optional<fs::path> setup_file_for(const fs::path& file, const ServingPointOptions& options) {
  if (options.setup) return options.setup;
  const fs::path shipped =
      options.data_root / "validation" / "setups" / (file.stem().string() + ".json");
  std::error_code ec;
  if (fs::is_regular_file(shipped, ec)) return shipped;
  return std::nullopt;
}

std::vector<ServingPoint> read_serving_points(const fs::path& file,
                                              const ServingPointOptions& options) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError(file.string(), "file not found");
  std::optional<Setup> setup;
  if (const auto path = setup_file_for(file, options)) setup = read_setup(*path);
  const Setup* s = setup ? &*setup : nullptr;
  const auto with_terms = [&](std::vector<ServingPoint> points) {
    if (s != nullptr) {
      for (ServingPoint& p : points)
        p.engine_terms = s->engine_terms;
    }
    return points;
  };
  if (file.extension() == ".json") return with_terms(read_bench_result(file, options, s));
  if (file.extension() == ".csv") {
    if (deployment_report(file)) return read_deployment_report(file, options);
    return with_terms(read_csv_points(file, options, s));
  }
  throw InputError(file.string(),
                   "expected a .csv file of measured serving points or a .json result of vllm "
                   "bench serve --save-result");
}

}  // namespace servesim
