#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace servesim {

// A mergeable histogram of non-negative values with a guaranteed relative error (DDSketch,
// Masson et al., VLDB 2019): a positive value v falls in bucket i = ceil(log_gamma(v)) with
// gamma = (1 + alpha) / (1 - alpha), and every value in a bucket is reported as the bucket's
// midpoint 2 gamma^i / (gamma + 1), which is within a factor alpha of it. Per-token
// latencies are stored this way because a run can produce billions of them: memory is one
// counter per occupied bucket (about log(max / min) / (2 alpha) of them), never per sample.
//
// Values <= 0 go to a separate zero bucket and are reported as 0 by quantile(); count, sum,
// mean, min and max are exact for every value.
class LogHistogram final {
 public:
  static constexpr double kDefaultRelativeError = 0.01;

  // `relative_error` is alpha, in (0, 1).
  explicit LogHistogram(double relative_error = kDefaultRelativeError);

  // O(1). `value` must be finite; `count` >= 0 copies of it are added at once, so a run of
  // equal gaps costs one call.
  void add(double value, std::int64_t count = 1) {
    // Inline for the common case: a value in the last bucket's known range (so finite and
    // positive), as consecutive token gaps usually are.
    if (has_last_ && value >= last_low_ && value <= last_high_ && count > 0) {
      counts_[last_slot_] += count;
      min_ = std::min(min_, value);  // count_ > 0, since the last bucket was filled
      max_ = std::max(max_, value);
      count_ += count;
      sum_ += value * static_cast<double>(count);
      add_deviation(value, count);
      return;
    }
    add_checked(value, count);
  }
  // Adds every sample of `other`, whose relative error must be the same as this one's: the
  // result is the histogram that adding all of its samples here would have built.
  void merge(const LogHistogram& other);

  double relative_error() const noexcept { return alpha_; }
  std::int64_t count() const noexcept { return count_; }
  double sum() const noexcept { return sum_; }
  double mean() const noexcept;  // 0 when empty
  double min() const noexcept;   // 0 when empty
  double max() const noexcept;   // 0 when empty
  // Population standard deviation of the samples (numpy.std's default), from running sums of
  // their deviations from the first sample, so exact up to rounding however many there are:
  // no bucket estimate enters it. 0 when empty.
  double stddev() const noexcept;
  std::size_t bucket_count() const noexcept { return nonzero_buckets_ + (zero_count_ > 0); }

  // The q-quantile (q in [0, 1]) by linear interpolation between closest ranks, as numpy's
  // default method, computed from bucket midpoints: for positive samples it is within a
  // factor relative_error() of the exact value. q = 0 and q = 1 give min() and max()
  // exactly. 0 when empty. O(buckets log buckets).
  double quantile(double q) const;
  // The estimated values of the samples of 0-based `ranks` in ascending order (each in
  // [0, count)): rank 0 and count - 1 exactly (min and max), others within relative_error().
  std::vector<double> values_at_ranks(const std::vector<std::int64_t>& ranks) const;

 private:
  [[noreturn, gnu::noinline, gnu::cold]] static void bad_add(double value);
  void add_deviation(double value, std::int64_t count) {
    const double deviation = value - shift_;
    const auto n = static_cast<double>(count);
    deviation_sum_ += deviation * n;
    deviation_square_sum_ += deviation * deviation * n;
  }
  // add() for any value and count: checks them, and finds the bucket when it is not the last.
  void add_checked(double value, std::int64_t count);
  // The slot of bucket `index` in counts_, which grows to hold it.
  std::size_t slot(std::int64_t index);
  // Adds `count` > 0 to the bucket in `slot`.
  void add_to_slot(std::size_t slot, std::int64_t count) {
    nonzero_buckets_ += counts_[slot] == 0 ? 1 : 0;
    counts_[slot] += count;
  }
  // (bucket index, count) in ascending order of value.
  std::vector<std::pair<std::int64_t, std::int64_t>> sorted_buckets() const;
  // The estimated value of the sample of 0-based `rank` in sorted order.
  double value_at_rank(const std::vector<std::pair<std::int64_t, std::int64_t>>& buckets,
                       std::int64_t rank) const;

  double alpha_;
  double gamma_;
  double inv_log_gamma_;
  // The bucket counts, dense from the lowest index seen to the highest: counts_[i] is
  // bucket first_index_ + i (about 700 buckets per decade of values at alpha 0.001, 70 at
  // 0.01). Only those above zero count as buckets.
  std::vector<std::int64_t> counts_;
  std::int64_t first_index_ = 0;
  std::size_t nonzero_buckets_ = 0;
  // The bucket of the last add and a range of values known to fall in it (its interior, and
  // the values seen to fall in it: the index is non-decreasing in the value, so anything
  // between falls there too), so that consecutive token gaps, usually that close, need no
  // logarithm.
  bool has_last_ = false;
  std::size_t last_slot_ = 0;
  std::int64_t last_index_ = 0;
  double last_low_ = 0;
  double last_high_ = 0;
  std::int64_t zero_count_ = 0;
  std::int64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
  // Sums of (value - shift_) and of its square over the samples, for stddev(): shifting by the
  // first sample keeps the deviations small where the samples cluster, as token gaps do, so
  // the variance loses no digits to cancellation, and equal samples give exactly 0.
  double shift_ = 0;
  double deviation_sum_ = 0;
  double deviation_square_sum_ = 0;
};

}  // namespace servesim
