#include <limits>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/workload_spec_reading.h"

namespace servesim {
namespace {

// Every optional key of the arrival object, whichever process uses it.
constexpr std::array<std::string_view, 6> kArrivalKeys{"rate_per_s",   "cv",     "users",
                                                       "think_time_s", "stages", "max_concurrency"};
// What a staged workload says of the rate a single-rate process would take.
constexpr std::string_view kStagesOwnRates =
    "arrival.stages: each stage gives its own rate_per_s (so --rate does not apply)";

// A positive rate, or "inf" (or a numeric infinity from an override) for all at once.
double read_rate(JsonObjectReader& r) {
  const nlohmann::json* value = r.optional_raw("rate_per_s");
  if (value == nullptr) r.fail("rate_per_s", "required but missing");
  if (value->is_string() && value->get<std::string>() == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (value->is_number() && value->get<double>() > 0) return value->get<double>();
  r.fail("rate_per_s", "expected a positive number or \"inf\", got " + json_excerpt(*value));
}

// A non-empty list of {"rate_per_s", "duration_s"} objects; errors name the stage by index.
std::vector<ArrivalStage> parse_stages(JsonObjectReader& r) {
  const nlohmann::json* list = r.optional_raw("stages");
  if (list == nullptr || !list->is_array() || list->empty()) {
    r.fail("stages", "expected a non-empty list of {\"rate_per_s\": R, \"duration_s\": T} objects");
  }
  std::vector<ArrivalStage> stages;
  double total_s = 0;
  for (std::size_t k = 0; k < list->size(); ++k) {
    JsonObjectReader s((*list)[k], r.source_name(),
                       r.key_path("stages") + "[" + std::to_string(k) + "]");
    ArrivalStage stage;
    stage.rate_per_s = s.positive_number("rate_per_s");
    stage.duration_s = s.positive_number("duration_s");
    s.reject_unknown_keys();
    total_s += stage.duration_s;
    if (!(total_s <= kMaxArrivalTimeS)) {
      s.fail("duration_s",
             "the stages last longer than 1e9 s (31.7 years), the longest simulated time");
    }
    stages.push_back(stage);
  }
  return stages;
}

}  // namespace

ArrivalSpec parse_arrival(JsonObjectReader r) {
  ArrivalSpec a;
  a.process = read_choice(r, "process", kArrivalProcessNames);
  const std::string kind =
      "process \"" + std::string(name_of(kArrivalProcessNames, a.process)) + "\"";
  switch (a.process) {
    case ArrivalProcessKind::Poisson:
    case ArrivalProcessKind::Constant:
      if (r.has("stages")) {
        refuse_unused(r, kArrivalKeys, {"stages", "max_concurrency"}, std::string(kStagesOwnRates));
        a.stages = parse_stages(r);
      } else {
        refuse_unused(r, kArrivalKeys, {"rate_per_s", "max_concurrency"}, kind);
        a.rate_per_s = read_rate(r);
      }
      break;
    case ArrivalProcessKind::Gamma:
      refuse_unused(r, kArrivalKeys, {"rate_per_s", "cv", "max_concurrency"}, kind);
      a.rate_per_s = read_rate(r);
      a.cv = r.positive_number("cv");
      break;
    case ArrivalProcessKind::ClosedLoop:
      refuse_unused(r, kArrivalKeys, {"users", "think_time_s"}, kind);
      a.users = r.positive_integer("users");
      a.think_time_s = r.optional_number("think_time_s").value_or(0.0);
      if (!(a.think_time_s >= 0 && a.think_time_s <= kMaxArrivalTimeS)) {
        r.fail("think_time_s", "expected a time in [0, 1e9] s");
      }
      break;
    case ArrivalProcessKind::Trace:
      refuse_unused(r, kArrivalKeys, {"rate_per_s", "max_concurrency"}, kind);
      if (r.has("rate_per_s")) a.replay_rate_per_s = read_rate(r);
      break;
  }
  // A closed loop is its own concurrency limit (users); refuse_unused named it above.
  a.max_concurrency = r.optional_positive_integer("max_concurrency");
  r.reject_unknown_keys();
  return a;
}

}  // namespace servesim
