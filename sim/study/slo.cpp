#include "sim/study/slo.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"
#include "sim/study/point_simulation.h"
#include "sim/study/summary_columns.h"

namespace servesim {
namespace {

constexpr std::array<std::string_view, 4> kMetrics{"ttft", "tpot", "itl", "e2e"};
constexpr std::array<std::string_view, 5> kStatistics{"mean", "p50", "p90", "p99", "max"};

double parse_positive(std::string_view text, const std::string& where) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0) {
    throw UsageError(where + ": expected a positive number, got \"" + std::string(text) + "\"");
  }
  return value;
}

}  // namespace

std::string LatencyLimit::text() const {
  return metric + "_" + statistic + " <= " + format_9_digits(limit_s) + " s";
}

void add_slo_term(SloTarget& target, std::string_view term, const std::string& origin) {
  const auto equals = term.find('=');
  const std::string where = origin + " " + std::string(term);
  if (equals == std::string_view::npos) {
    throw UsageError(where +
                     ": expected METRIC_STAT=SECONDS (e.g. ttft_p99=0.5) or "
                     "attainment=FRACTION");
  }
  const std::string_view name = term.substr(0, equals);
  const std::string_view value = term.substr(equals + 1);
  if (name == "attainment") {
    const double fraction = parse_positive(value, where);
    if (fraction > 1) throw UsageError(where + ": attainment is a fraction in (0, 1]");
    target.attainment = fraction;
    return;
  }
  const auto underscore = name.find('_');
  const std::string_view metric = name.substr(0, underscore);
  const std::string_view statistic =
      underscore == std::string_view::npos ? "" : name.substr(underscore + 1);
  if (std::find(kMetrics.begin(), kMetrics.end(), metric) == kMetrics.end() ||
      std::find(kStatistics.begin(), kStatistics.end(), statistic) == kStatistics.end()) {
    throw UsageError(where + ": unknown SLO \"" + std::string(name) +
                     "\" (metrics ttft, tpot, itl, e2e; statistics mean, p50, p90, p99, max; "
                     "or attainment)");
  }
  target.limits.push_back(
      LatencyLimit{std::string(metric), std::string(statistic), parse_positive(value, where)});
}

std::int64_t completions_needed(const SloTarget& target) {
  const auto for_quantile = [](double q) {
    return std::min<std::int64_t>(1000, static_cast<std::int64_t>(std::ceil(10 / (1 - q) - 1e-9)));
  };
  std::int64_t needed = 0;
  for (const auto& limit : target.limits) {
    std::int64_t n = 100;  // mean
    if (limit.statistic == "p50") n = for_quantile(0.5);
    if (limit.statistic == "p90") n = for_quantile(0.9);
    if (limit.statistic == "p99") n = for_quantile(0.99);
    if (limit.statistic == "max") n = 1000;
    needed = std::max(needed, n);
  }
  if (target.attainment) {
    needed = std::max(needed, *target.attainment >= 1 ? 1000 : for_quantile(*target.attainment));
  }
  return needed;
}

void set_plan_at(SloTarget& target, const std::string& value, const std::string& origin) {
  if (value != "prediction" && value != "upper") {
    throw InputError(origin, "expected prediction or upper, not \"" + value + "\"");
  }
  target.plan_at_upper = value == "upper";
}

double judged_value(const SloTarget& target, const nlohmann::json& summary,
                    const LatencyLimit& limit) {
  const double predicted = summary_value(summary, limit.summary_path());
  if (!target.plan_at_upper) return predicted;
  const auto bands = summary.find("error_bands");
  if (bands == summary.end()) return predicted;
  const std::string metric = limit.metric == "itl" ? "tpot" : limit.metric;
  const auto band = bands->find(metric);
  if (band == bands->end()) return predicted;
  return predicted * (1 + band->at("high").get<double>());
}

bool close_call(const SloTarget& target, const nlohmann::json& summary, double band) {
  if (does_not_fit(summary)) return false;
  for (const auto& limit : target.limits) {
    const double measured = judged_value(target, summary, limit);
    if (std::abs(measured - limit.limit_s) <= band * limit.limit_s) return true;
  }
  if (target.attainment && summary.contains("slo_attainment")) {
    if (std::abs(attainment_of(summary) - *target.attainment) <= band / 10) return true;
  }
  return false;
}

double attainment_of(const nlohmann::json& summary) {
  if (!summary.contains("slo_attainment")) {
    throw UsageError(
        "an attainment target needs the latency targets it counts: give --slo-ttft, --slo-tpot "
        "and/or --slo-e2e, or --goodput (configuration keys slo.ttft_s, slo.tpot_s, slo.e2e_s)");
  }
  const double completed = summary_value(summary, "requests_completed");
  const double rejected = summary_value(summary, "requests_rejected");
  const double total = completed + rejected;
  return total > 0 ? summary_value(summary, "slo_attainment") * completed / total : 0.0;
}

SloVerdict judge(const SloTarget& target, const nlohmann::json& summary) {
  SloVerdict verdict;
  const auto fail = [&](const std::string& why, double ratio) {
    verdict.met = false;
    verdict.violations.push_back(why);
    verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
  };
  if (does_not_fit(summary)) {
    fail(unfit_text(summary), std::numeric_limits<double>::infinity());
    verdict.fails_at_any_load = true;
    return verdict;
  }
  const std::optional<std::string> unstable_reason = unstable(summary);
  if (unstable_reason) {
    const double served = summary_value(summary, "steady_state.served_ratio");
    const nlohmann::json& steady = summary["steady_state"];
    verdict.undecided = steady.value("undecided", false);
    verdict.requests_to_settle = steady.value("requests_to_settle", std::int64_t{0});
    fail("", served > 0 ? std::max(1.0, 1 / served) : std::numeric_limits<double>::infinity());
  }
  const double rejected = summary_value(summary, "requests_rejected");
  if (rejected > 0) {
    fail(format_9_digits(rejected) + " requests rejected (they can never be served)",
         std::numeric_limits<double>::infinity());
    verdict.fails_at_any_load = true;
  }
  bool slo_missed = false;
  for (const auto& limit : target.limits) {
    const double measured = judged_value(target, summary, limit);
    const double ratio = measured / limit.limit_s;
    if (measured > limit.limit_s) {
      slo_missed = true;
      fail(limit.metric + "_" + limit.statistic +
               (target.plan_at_upper ? " at the band's upper edge" : "") + " = " +
               format_9_digits(measured) + " s > " + format_9_digits(limit.limit_s) + " s",
           ratio);
    } else {
      verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
    }
  }
  if (target.attainment) {
    const double achieved = attainment_of(summary);
    const double ratio =
        achieved > 0 ? *target.attainment / achieved : std::numeric_limits<double>::infinity();
    if (achieved < *target.attainment) {
      slo_missed = true;
      fail(
          "attainment = " + format_9_digits(achieved) + " < " + format_9_digits(*target.attainment),
          ratio);
    } else {
      verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
    }
  }
  if (unstable_reason) {
    // A system still filling up only gets slower as it fills (bigger batches, longer queues):
    // an SLO it already misses, it misses at any length, so such a point is decided.
    if (verdict.undecided && slo_missed) {
      verdict.undecided = false;
      verdict.requests_to_settle = 0;
      verdict.violations.front() =
          "not settled (" + *unstable_reason + "), and the SLO is missed already while it fills";
    } else {
      verdict.violations.front() = verdict.undecided
                                       ? "undecided: " + *unstable_reason + " (at least " +
                                             std::to_string(verdict.requests_to_settle) +
                                             " requests would settle it: raise --num-requests)"
                                       : "unstable: " + *unstable_reason;
    }
  }
  return verdict;
}

}  // namespace servesim
