#include "sim/study/steady_state.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string_view>

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"

namespace servesim {
namespace {

// The index (in batches) where MSER truncates `values` batched by `batch`: the d in
// [0, m/2] minimizing the squared deviations of batch means d+1..m from their mean over
// (m - d)^2. Returns nothing with fewer than four batches.
struct Truncation {
  std::size_t index = 0;  // first value kept
  bool inside = false;    // before the end of the searched half
};
std::optional<Truncation> mser(const std::vector<double>& values, std::size_t batch) {
  const std::size_t m = batch == 0 ? 0 : values.size() / batch;
  if (m < 4) return std::nullopt;
  std::vector<double> means(m);
  for (std::size_t j = 0; j < m; ++j) {
    double sum = 0;
    for (std::size_t k = 0; k < batch; ++k)
      sum += values[j * batch + k];
    means[j] = sum / static_cast<double>(batch);
  }
  // Suffix sums of the means and their squares.
  std::vector<double> s1(m + 1, 0), s2(m + 1, 0);
  for (std::size_t j = m; j-- > 0;) {
    s1[j] = s1[j + 1] + means[j];
    s2[j] = s2[j + 1] + means[j] * means[j];
  }
  const std::size_t last = m / 2;
  std::size_t best = 0;
  double best_value = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d <= last; ++d) {
    const double n = static_cast<double>(m - d);
    const double squares = std::max(0.0, s2[d] - s1[d] * s1[d] / n);
    const double value = squares / (n * n);
    if (value < best_value) {
      best_value = value;
      best = d;
    }
  }
  return Truncation{best * batch, best < last};
}

// Least-squares slope of y on x and its t statistic (infinite when the points lie on a
// line with a non-zero slope, 0 for a zero slope).
std::pair<double, double> slope_and_t(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) return {0, 0};
  const double slope = sxy / sxx;
  double residuals = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - my - slope * (x[i] - mx);
    residuals += r * r;
  }
  const double se = std::sqrt(residuals / (n - 2) / sxx);
  if (!(se > 0)) {
    return {slope,
            slope == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), slope)};
  }
  return {slope, slope / se};
}

// SteadyState::requests_to_settle: at least twice the run, and arrivals over 2.5 x the 99th
// percentile of E2E (the warm-up ends before the middle arrival, with a quarter to spare) at
// the run's arrival rate. The percentile is this run's, which a longer one, with its batches
// fuller, may lengthen: a floor.
std::int64_t requests_to_settle(const std::vector<RequestTiming>& requests,
                                const std::vector<std::size_t>& order, double e2e_p99_s) {
  const auto simulated = static_cast<std::int64_t>(requests.size());
  const double span_s = requests[order.back()].arrival_s - requests[order.front()].arrival_s;
  if (!(span_s > 0)) return 2 * simulated;
  const double rate_per_s = static_cast<double>(simulated - 1) / span_s;
  const double filling = std::ceil(rate_per_s * 2.5 * e2e_p99_s);
  return std::max(2 * simulated, static_cast<std::int64_t>(std::min(filling, 1e15)));
}

// The median of `values` (reordered); NaN when empty.
double median_of(std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// Whether the time in system of the window's arrivals (`window`: positions in `order`) grows
// over the window: the median E2E of its last third 10% above its first third's, or the median
// wait before the first scheduling grown by more than `growth_tolerance` of the time between
// the two thirds (a backlog growing at that share of the offered rate makes each request wait
// about that much longer per second than the one before). A backlog shows in both; a fill-up
// of long requests shows in the number in the system only (Little's law: N = rate x time in
// system grows while the time does not). True when a third has no completed request (nothing
// to tell them apart by).
bool time_in_system_grows(const std::vector<RequestTiming>& requests,
                          const std::vector<std::size_t>& order,
                          const std::vector<std::size_t>& window, double growth_tolerance) {
  std::array<double, 2> e2e_s{}, wait_s{}, arrival_s{};
  for (const std::size_t third : {std::size_t{0}, std::size_t{2}}) {
    std::vector<double> e2e, wait;
    for (std::size_t k = window.size() * third / 3; k < window.size() * (third + 1) / 3; ++k) {
      const RequestTiming& r = requests[order[window[k]]];
      if (std::isnan(r.completion_s)) continue;
      e2e.push_back(r.completion_s - r.arrival_s);
      wait.push_back(r.first_scheduled_s - r.arrival_s);
      arrival_s[third / 2] += r.arrival_s;
    }
    if (e2e.empty()) return true;
    arrival_s[third / 2] /= static_cast<double>(e2e.size());
    e2e_s[third / 2] = median_of(e2e);
    wait_s[third / 2] = median_of(wait);
  }
  return e2e_s[1] > 1.1 * e2e_s[0] ||
         wait_s[1] > wait_s[0] + growth_tolerance * (arrival_s[1] - arrival_s[0]);
}

}  // namespace

double overloaded_below(const SteadyState& s, const StabilityCriteria& criteria) {
  return 1 - 2 * criteria.served_tolerance - s.filling_share;
}

std::string three_significant(double value) {
  if (!std::isfinite(value) || value == 0) return format_9_digits(value);
  const double scale = std::pow(10.0, std::floor(std::log10(std::abs(value))) - 2);
  return format_9_digits(std::round(value / scale) * scale);
}

SteadyState analyze_steady_state(const std::vector<RequestTiming>& requests,
                                 const StabilityCriteria& criteria) {
  SteadyState s;
  s.arrivals = static_cast<std::int64_t>(requests.size());
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return requests[a].arrival_s < requests[b].arrival_s;
  });
  if (order.size() < 2) return s;
  std::vector<double> completions;
  for (const auto& r : requests) {
    if (!std::isnan(r.completion_s)) completions.push_back(r.completion_s);
  }
  std::sort(completions.begin(), completions.end());
  // The number in the system just before each arrival: requests admitted earlier (rejected
  // ones leave at once) less those completed by then.
  std::vector<double> in_system(order.size());
  std::size_t admitted = 0, done = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RequestTiming& r = requests[order[i]];
    while (done < completions.size() && completions[done] <= r.arrival_s)
      ++done;
    in_system[i] = static_cast<double>(admitted) - static_cast<double>(done);
    if (!std::isnan(r.completion_s)) ++admitted;
  }

  std::size_t first_kept = order.size() / 10;
  s.warmup_detected = true;  // unless MSER or the E2E bound says otherwise
  if (const auto truncation = mser(in_system, criteria.mser_batch)) {
    s.warmup_detected = truncation->inside;
    first_kept = std::max(first_kept, truncation->index);
  }
  // A system that starts empty holds its steady number of requests only once its longest
  // requests have had time to finish (an infinite-server queue is stationary from the
  // longest service time on): the warm-up lasts at least the 99th percentile of E2E.
  std::vector<double> e2e_s;
  for (const auto& r : requests) {
    if (!std::isnan(r.completion_s)) e2e_s.push_back(r.completion_s - r.arrival_s);
  }
  double e2e_p99_s = 0;
  if (!e2e_s.empty()) {
    const auto at = e2e_s.begin() + static_cast<std::ptrdiff_t>((e2e_s.size() - 1) * 99 / 100);
    std::nth_element(e2e_s.begin(), at, e2e_s.end());
    e2e_p99_s = *at;
    const double filled_s = requests[order.front()].arrival_s + *at;
    // At most the first half: a run too short to fill up is judged on its second half, and
    // does not count as settled.
    while (first_kept < order.size() / 2 && requests[order[first_kept]].arrival_s < filled_s)
      ++first_kept;
    if (requests[order[first_kept]].arrival_s < filled_s) s.warmup_detected = false;
  }
  s.warmup_end_s = requests[order[first_kept]].arrival_s;
  s.window_start_s = s.warmup_end_s;
  s.window_end_s = requests[order.back()].arrival_s;
  const double window_s = s.window_end_s - s.window_start_s;
  if (!(window_s > 0)) return s;
  const auto in_window = [&](double t) { return t > s.window_start_s && t <= s.window_end_s; };
  std::int64_t input_tokens = 0, offered_tokens = 0, completed_tokens = 0;
  for (const RequestTiming& r : requests) {
    if (in_window(r.arrival_s)) {
      ++s.arrivals_in_window;
      input_tokens += r.prompt_tokens;
      offered_tokens += r.output_tokens;
    }
    if (in_window(r.completion_s)) {  // false for NaN: rejected requests never complete
      ++s.completions_in_window;
      completed_tokens += r.output_tokens;
    }
  }
  s.offered_requests_per_s = static_cast<double>(s.arrivals_in_window) / window_s;
  s.offered_input_tokens_per_s = static_cast<double>(input_tokens) / window_s;
  s.offered_output_tokens_per_s = static_cast<double>(offered_tokens) / window_s;
  s.throughput_requests_per_s = static_cast<double>(s.completions_in_window) / window_s;
  s.throughput_output_tokens_per_s = static_cast<double>(completed_tokens) / window_s;
  s.served_ratio = s.arrivals_in_window > 0 ? static_cast<double>(s.completions_in_window) /
                                                  static_cast<double>(s.arrivals_in_window)
                                            : 1.0;

  // The backlog's trend over the window, from batch means of consecutive arrivals.
  std::vector<std::size_t> window;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (in_window(requests[order[i]].arrival_s)) window.push_back(i);
  }
  const std::size_t batches = criteria.trend_batches;
  if (batches >= 3 && window.size() >= 2 * batches) {
    std::vector<double> x(batches, 0), y(batches, 0);
    for (std::size_t b = 0; b < batches; ++b) {
      const std::size_t from = window.size() * b / batches;
      const std::size_t to = window.size() * (b + 1) / batches;
      for (std::size_t k = from; k < to; ++k) {
        x[b] += requests[order[window[k]]].arrival_s;
        y[b] += in_system[window[k]];
      }
      x[b] /= static_cast<double>(to - from);
      y[b] /= static_cast<double>(to - from);
    }
    const auto [slope, t] = slope_and_t(x, y);
    s.backlog_growth_per_s = slope;
    s.backlog_growth_t = t;
    s.backlog_growth_ratio = s.offered_requests_per_s > 0 ? slope / s.offered_requests_per_s : 0;
  }

  // What a stable system that is still filling up may hold back at the window's end: the
  // median E2E of the run's first tenth of arrivals (which met a nearly empty system, so
  // their time in system is service, not queueing) over the window. Completions lag arrivals
  // by that much without any backlog, so the served floors are lowered by it.
  {
    std::vector<double> early_e2e_s;
    const std::size_t early = std::max<std::size_t>(order.size() / 10, 1);
    for (std::size_t i = 0; i < early; ++i) {
      const RequestTiming& r = requests[order[i]];
      if (!std::isnan(r.completion_s)) early_e2e_s.push_back(r.completion_s - r.arrival_s);
    }
    if (!early_e2e_s.empty()) {
      const auto mid = early_e2e_s.begin() + static_cast<std::ptrdiff_t>(early_e2e_s.size() / 2);
      std::nth_element(early_e2e_s.begin(), mid, early_e2e_s.end());
      s.filling_share = std::min(1.0, *mid / window_s);
    }
  }
  const double served_floor = 1 - criteria.served_tolerance - s.filling_share;
  const auto short_of_floor = [&] {
    return "serves " + three_significant(s.throughput_requests_per_s) + " of " +
           three_significant(s.offered_requests_per_s) + " req/s offered (" +
           three_significant(s.served_ratio * 100) + "% < " +
           three_significant(served_floor * 100) + "%)";
  };
  // A run that ends before its warm-up does is still filling up: completions lag arrivals,
  // so a served share short of the floor but not of 1 - 2 x served_tolerance leaves the point
  // undecided rather than unstable. A share below that, or a backlog whose growth is
  // significant, shows it unstable either way.
  if (s.served_ratio < overloaded_below(s, criteria)) {
    s.stable = false;
    s.reason = short_of_floor();
  } else if (s.backlog_growth_ratio > criteria.growth_tolerance &&
             s.backlog_growth_t > criteria.growth_t_limit &&
             s.served_ratio < 1 - criteria.growth_tolerance / 2) {
    s.stable = false;
    const std::string growth = three_significant(s.backlog_growth_per_s) + " requests/s (" +
                               three_significant(s.backlog_growth_ratio * 100) +
                               "% of the offered rate > " +
                               three_significant(criteria.growth_tolerance * 100) +
                               "%, t = " + three_significant(s.backlog_growth_t) + ")";
    if (!s.warmup_detected &&
        !time_in_system_grows(requests, order, window, criteria.growth_tolerance)) {
      // Still filling up: more requests in the system, each no longer in it than before.
      s.undecided = true;
      s.reason = "no steady state within " + std::to_string(s.arrivals) +
                 " requests: the number in the system grows " + growth +
                 " while the time in system does not (a system still filling up)";
    } else {
      s.reason = "the backlog grows " + growth;
    }
  } else if (!s.warmup_detected) {
    s.stable = false;
    s.undecided = true;
    s.reason = "no steady state within " + std::to_string(s.arrivals) +
               " requests: the warm-up lasts past the middle of the run";
  } else if (s.served_ratio < served_floor) {
    s.stable = false;
    s.reason = short_of_floor();
  }
  if (s.undecided) s.requests_to_settle = requests_to_settle(requests, order, e2e_p99_s);
  return s;
}

nlohmann::json steady_state_json(const SteadyState& s) {
  const auto finite = [](double value, const char* name) {
    if (!std::isfinite(value)) {
      // An exact line (zero residuals) has an infinite t: written as a large number.
      if (std::string_view(name) == "backlog_growth_t") {
        return std::copysign(std::numeric_limits<double>::max(), value);
      }
      throw InvariantError(std::string("steady_state.") + name + " is not finite");
    }
    return value;
  };
  nlohmann::json json{
      {"window_start_s", finite(s.window_start_s, "window_start_s")},
      {"window_end_s", finite(s.window_end_s, "window_end_s")},
      {"warmup_detected", s.warmup_detected},
      {"arrivals_in_window", s.arrivals_in_window},
      {"completions_in_window", s.completions_in_window},
      {"offered_requests_per_s", finite(s.offered_requests_per_s, "offered_requests_per_s")},
      {"offered_input_tokens_per_s",
       finite(s.offered_input_tokens_per_s, "offered_input_tokens_per_s")},
      {"offered_output_tokens_per_s",
       finite(s.offered_output_tokens_per_s, "offered_output_tokens_per_s")},
      {"throughput_requests_per_s",
       finite(s.throughput_requests_per_s, "throughput_requests_per_s")},
      {"throughput_output_tokens_per_s",
       finite(s.throughput_output_tokens_per_s, "throughput_output_tokens_per_s")},
      {"served_ratio", finite(s.served_ratio, "served_ratio")},
      {"filling_share", finite(s.filling_share, "filling_share")},
      {"backlog_growth_per_s", finite(s.backlog_growth_per_s, "backlog_growth_per_s")},
      {"backlog_growth_t", finite(s.backlog_growth_t, "backlog_growth_t")},
      {"backlog_growth_ratio", finite(s.backlog_growth_ratio, "backlog_growth_ratio")},
      {"stable", s.stable}};
  if (!s.stable) json["unstable"] = s.reason;
  json["undecided"] = s.undecided;
  json["requests_to_settle"] = s.requests_to_settle;
  return json;
}

}  // namespace servesim
