#include "sim/study/rate_search.h"

#include <cmath>
#include <utility>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"

namespace servesim {

double configured_rate(const nlohmann::json& config, std::string_view arrival_hint,
                       std::string_view start_rate_hint) {
  const auto& arrival = config["workload"]["arrival"];
  const std::string process = arrival.value("process", "");
  if (process != "poisson" && process != "gamma" && process != "constant") {
    throw UsageError(
        "capacity searches the arrival rate, so the workload needs a poisson, gamma or constant "
        "arrival process (this one is \"" +
        process + "\"; " + std::string(arrival_hint) + ")");
  }
  if (!arrival.contains("rate_per_s") || !arrival["rate_per_s"].is_number()) {
    throw UsageError("capacity: give " + std::string(start_rate_hint) +
                     " (the workload's rate is not a number)");
  }
  return arrival["rate_per_s"].get<double>();
}

namespace {

class Search {
 public:
  Search(const SloTarget& target, const RateSearchOptions& options, const RateEvaluator& evaluate)
      : target_(target), options_(options), evaluate_(evaluate) {}

  RateSearchResult run() {
    const SloVerdict first = round({options_.start_rate_per_s}).front();
    if (first.met) {
      lo_ = options_.start_rate_per_s;
      if (!climb()) return finish(RateSearchResult::Outcome::AlwaysMet);
    } else {
      hi_ = options_.start_rate_per_s;
      if (first.fails_at_any_load || !descend()) {
        return finish(RateSearchResult::Outcome::NeverMet);
      }
    }
    while ((hi_ - lo_) / lo_ > options_.relative_precision) {
      if (budget_spent()) return finish(RateSearchResult::Outcome::Unresolved);
      std::vector<double> rates;
      const std::size_t k = options_.points_per_round;
      for (std::size_t j = 1; j <= k; ++j)
        rates.push_back(lo_ + (hi_ - lo_) * static_cast<double>(j) / static_cast<double>(k + 1));
      const auto verdicts = round(rates);
      for (std::size_t j = 0; j < rates.size(); ++j) {
        if (!verdicts[j].met) {
          hi_ = rates[j];
          break;
        }
        lo_ = rates[j];
      }
    }
    return finish(RateSearchResult::Outcome::Found);
  }

 private:
  // Doubles up from the highest pass until a rate fails, up to the maximum rate; false if
  // none does.
  bool climb() {
    while (true) {
      if (lo_ >= options_.max_rate_per_s || budget_spent()) return false;
      const auto rates = steps(lo_, 2.0, options_.max_rate_per_s);
      const auto verdicts = round(rates);
      for (std::size_t i = 0; i < rates.size(); ++i) {
        if (!verdicts[i].met) {
          hi_ = rates[i];
          return true;
        }
        lo_ = rates[i];
      }
    }
  }

  // Halves down from the lowest failure until a rate passes, down to the minimum rate; false
  // if none does, or as soon as a failure is one that no lower rate removes (rejected
  // requests: the same ones are rejected at every rate).
  bool descend() {
    while (true) {
      if (hi_ <= options_.min_rate_per_s || budget_spent()) return false;
      const auto rates = steps(hi_, 0.5, options_.min_rate_per_s);
      const auto verdicts = round(rates);
      for (std::size_t i = 0; i < rates.size(); ++i) {
        if (verdicts[i].met) {
          lo_ = rates[i];
          return true;
        }
        hi_ = rates[i];
        if (verdicts[i].fails_at_any_load) return false;
      }
    }
  }

  // Up to points_per_round rates from `from`, each `factor` times the one before, the last
  // one clamped to `limit` (never past it).
  std::vector<double> steps(double from, double factor, double limit) const {
    std::vector<double> rates;
    double rate = from;
    for (std::size_t i = 0; i < options_.points_per_round; ++i) {
      rate *= factor;
      const bool past = factor > 1 ? rate >= limit : rate <= limit;
      rates.push_back(past ? limit : rate);
      if (past) break;
    }
    return rates;
  }

  std::vector<SloVerdict> round(const std::vector<double>& rates) {
    const auto summaries = evaluate_(rates);
    if (summaries.size() != rates.size()) {
      throw InvariantError("rate search: " + std::to_string(rates.size()) + " rates, " +
                           std::to_string(summaries.size()) + " results");
    }
    std::vector<SloVerdict> verdicts;
    for (std::size_t i = 0; i < rates.size(); ++i) {
      RatePoint point{rates[i], summaries[i], judge(target_, summaries[i])};
      verdicts.push_back(point.verdict);
      result_.points.push_back(std::move(point));
    }
    return verdicts;
  }

  bool budget_spent() const { return result_.points.size() >= options_.max_points; }

  RateSearchResult finish(RateSearchResult::Outcome outcome) {
    result_.outcome = outcome;
    result_.passing_rate_per_s = lo_;
    result_.failing_rate_per_s = hi_;
    return std::move(result_);
  }

  const SloTarget& target_;
  const RateSearchOptions& options_;
  const RateEvaluator& evaluate_;
  double lo_ = 0;  // highest passing rate so far
  double hi_ = 0;  // lowest failing rate above lo_
  RateSearchResult result_;
};

}  // namespace

std::string_view outcome_name(RateSearchResult::Outcome outcome) noexcept {
  switch (outcome) {
    case RateSearchResult::Outcome::Found:
      return "found";
    case RateSearchResult::Outcome::NeverMet:
      return "never_met";
    case RateSearchResult::Outcome::AlwaysMet:
      return "met_at_every_rate";
    case RateSearchResult::Outcome::Unresolved:
      return "unresolved";
  }
  return "unresolved";
}

const RatePoint* RateSearchResult::best() const {
  const RatePoint* best = nullptr;
  for (const auto& point : points) {
    if (outcome == Outcome::NeverMet) {
      if (best == nullptr || point.verdict.worst_ratio < best->verdict.worst_ratio) best = &point;
    } else if (point.verdict.met && point.rate_per_s == passing_rate_per_s) {
      best = &point;
    }
  }
  return best;
}

const RatePoint* RateSearchResult::undecided() const {
  const RatePoint* lowest = nullptr;
  for (const auto& point : points) {
    if (point.verdict.undecided && point.rate_per_s > passing_rate_per_s &&
        (lowest == nullptr || point.rate_per_s < lowest->rate_per_s)) {
      lowest = &point;
    }
  }
  return lowest;
}

void check_rate_search_options(const RateSearchOptions& options) {
  for (const auto& [flag, rate] : {std::pair{"--min-rate", options.min_rate_per_s},
                                   std::pair{"--max-rate", options.max_rate_per_s}}) {
    if (!(rate > 0) || !std::isfinite(rate)) {
      throw InputError(flag,
                       "expected a positive number of requests/s, got " + format_9_digits(rate));
    }
  }
  if (options.min_rate_per_s > options.max_rate_per_s) {
    throw UsageError("--min-rate " + format_9_digits(options.min_rate_per_s) +
                     " is above --max-rate " + format_9_digits(options.max_rate_per_s) +
                     ": give a range to search");
  }
  if (!(options.start_rate_per_s > 0) || !std::isfinite(options.start_rate_per_s)) {
    throw InputError("--start-rate", "expected a positive number of requests/s, got " +
                                         format_9_digits(options.start_rate_per_s));
  }
  if (!(options.relative_precision > 0) || !std::isfinite(options.relative_precision)) {
    throw InputError("--precision", "expected a positive fraction, got " +
                                        format_9_digits(options.relative_precision));
  }
  if (options.points_per_round < 1) {
    throw InputError("--points-per-round", "expected at least 1 rate per round, got 0");
  }
  if (options.max_points < 1) {
    throw InputError("--max-points", "expected at least 1 simulation, got 0");
  }
}

RateSearchResult search_highest_rate(const SloTarget& target, const RateSearchOptions& options,
                                     const RateEvaluator& evaluate) {
  if (target.empty()) throw UsageError("capacity: give at least one --slo");
  check_rate_search_options(options);
  return Search(target, options, evaluate).run();
}

}  // namespace servesim
