#include "sim/metrics/log_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

double checked_relative_error(double alpha) {
  // Written as a negated range test so that NaN fails it too.
  if (!(alpha > 0 && alpha < 1)) {
    throw InputError("histogram relative error", "must be in (0, 1), got " + std::to_string(alpha));
  }
  return alpha;
}

}  // namespace

LogHistogram::LogHistogram(double relative_error)
    : alpha_(checked_relative_error(relative_error)),
      gamma_((1 + alpha_) / (1 - alpha_)),
      inv_log_gamma_(1 / std::log(gamma_)) {}

std::size_t LogHistogram::slot(std::int64_t index) {
  if (counts_.empty()) {
    counts_.assign(1, 0);
    first_index_ = index;
    return 0;
  }
  if (index < first_index_) {
    const auto grow = static_cast<std::size_t>(first_index_ - index);
    counts_.insert(counts_.begin(), grow, 0);
    first_index_ = index;
    last_slot_ += grow;  // the last bucket moved up with the rest
    return 0;
  }
  const auto at = static_cast<std::size_t>(index - first_index_);
  if (at >= counts_.size()) counts_.resize(at + 1, 0);
  return at;
}

void LogHistogram::bad_add(double value) {
  if (!std::isfinite(value)) throw InvariantError("LogHistogram::add: value is not finite");
  throw InvariantError("LogHistogram::add: negative count");
}

void LogHistogram::add_checked(double value, std::int64_t count) {
  if (!std::isfinite(value) || count < 0) [[unlikely]]
    bad_add(value);
  if (count == 0) return;
  if (value > 0) {
    if (!has_last_ || value < last_low_ || value > last_high_) {
      const auto index = static_cast<std::int64_t>(std::ceil(std::log(value) * inv_log_gamma_));
      if (!has_last_ || index != last_index_) {
        last_slot_ = slot(index);
        has_last_ = true;
        last_index_ = index;
        // Bucket i holds (gamma^(i-1), gamma^i]. Values this far inside fall in it whatever
        // the rounding of log and exp (errors near 1e-15 against a margin of 1e-9); values
        // seen to fall in it extend the range to its edges.
        const double log_gamma = 1 / inv_log_gamma_;
        last_low_ = std::exp(static_cast<double>(index - 1) * log_gamma) * (1 + 1e-9);
        last_high_ = std::exp(static_cast<double>(index) * log_gamma) * (1 - 1e-9);
        if (!(last_low_ >= std::numeric_limits<double>::min())) {
          last_low_ = last_high_ = value;  // subnormal edges: rely on seen values only
        }
      }
      last_low_ = std::min(last_low_, value);
      last_high_ = std::max(last_high_, value);
    }
    add_to_slot(last_slot_, count);
  } else {
    zero_count_ += count;
  }
  if (count_ == 0) shift_ = value;
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  count_ += count;
  sum_ += value * static_cast<double>(count);
  add_deviation(value, count);
}

void LogHistogram::merge(const LogHistogram& other) {
  if (other.alpha_ != alpha_) {
    throw InvariantError("LogHistogram::merge: relative errors differ (" + std::to_string(alpha_) +
                         " and " + std::to_string(other.alpha_) + ")");
  }
  if (other.count_ == 0) return;
  if (count_ == 0) shift_ = other.shift_;
  // The other's deviations are from its own shift: re-centre them on this one's.
  const double offset = other.shift_ - shift_;
  const auto n = static_cast<double>(other.count_);
  deviation_square_sum_ +=
      other.deviation_square_sum_ + 2 * offset * other.deviation_sum_ + offset * offset * n;
  deviation_sum_ += other.deviation_sum_ + offset * n;
  for (std::size_t i = 0; i < other.counts_.size(); ++i) {
    if (other.counts_[i] > 0) {
      add_to_slot(slot(other.first_index_ + static_cast<std::int64_t>(i)), other.counts_[i]);
    }
  }
  zero_count_ += other.zero_count_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

double LogHistogram::mean() const noexcept {
  return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0;
}
double LogHistogram::stddev() const noexcept {
  if (count_ == 0) return 0.0;
  const auto n = static_cast<double>(count_);
  const double mean_deviation = deviation_sum_ / n;
  return std::sqrt(std::max(0.0, deviation_square_sum_ / n - mean_deviation * mean_deviation));
}
double LogHistogram::min() const noexcept {
  return min_;
}
double LogHistogram::max() const noexcept {
  return max_;
}

std::vector<std::pair<std::int64_t, std::int64_t>> LogHistogram::sorted_buckets() const {
  std::vector<std::pair<std::int64_t, std::int64_t>> sorted;
  sorted.reserve(nonzero_buckets_);
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] > 0)
      sorted.emplace_back(first_index_ + static_cast<std::int64_t>(i), counts_[i]);
  }
  return sorted;
}

double LogHistogram::value_at_rank(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& buckets, std::int64_t rank) const {
  // The extremes are known exactly; everything between is a bucket midpoint, clamped to
  // [min, max], which can only move it closer to the true value.
  if (rank <= 0) return min_;
  if (rank >= count_ - 1) return max_;
  std::int64_t seen = zero_count_;
  if (rank < seen) return std::clamp(0.0, min_, max_);
  for (const auto& [index, n] : buckets) {
    seen += n;
    if (rank < seen) {
      const double midpoint = 2 * std::pow(gamma_, static_cast<double>(index)) / (gamma_ + 1);
      return std::clamp(midpoint, min_, max_);
    }
  }
  return max_;  // unreachable while the counts add up
}

std::vector<double> LogHistogram::values_at_ranks(const std::vector<std::int64_t>& ranks) const {
  const auto buckets = sorted_buckets();
  std::vector<double> values;
  values.reserve(ranks.size());
  for (const std::int64_t rank : ranks)
    values.push_back(value_at_rank(buckets, rank));
  return values;
}

double LogHistogram::quantile(double q) const {
  if (!(q >= 0 && q <= 1)) {
    throw InvariantError("LogHistogram::quantile: q must be in [0, 1], got " + std::to_string(q));
  }
  if (count_ == 0) return 0.0;
  // Interpolating between two estimates, each within alpha of its true value, with
  // non-negative weights keeps the interpolated result within alpha of the true one.
  const double position = q * static_cast<double>(count_ - 1);
  const auto lower = static_cast<std::int64_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  const auto buckets = sorted_buckets();
  const double low_value = value_at_rank(buckets, lower);
  if (fraction == 0) return low_value;
  const double high_value = value_at_rank(buckets, lower + 1);
  return low_value + fraction * (high_value - low_value);
}

}  // namespace servesim
