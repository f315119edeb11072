#include "sim/calibration/ceiling_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <Eigen/Dense>

#include "sim/core/error.h"

namespace servesim {

std::vector<double> fit_nonnegative_relative(const std::vector<std::vector<double>>& rows,
                                             const std::vector<double>& y,
                                             std::span<const double> offset) {
  const std::size_t n = rows.size();
  const std::size_t p = n == 0 ? 0 : rows.front().size();
  std::vector<double> beta(p, 0.0);
  if (n == 0) return beta;
  // Weighted rows (divided by y), scaled per column for conditioning.
  Eigen::MatrixXd x(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(p));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < p; ++j) {
      x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = rows[i][j] / y[i];
    }
  }
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < offset.size() && i < n; ++i)
    ones(static_cast<Eigen::Index>(i)) -= offset[i] / y[i];
  std::vector<bool> free(p);
  for (std::size_t j = 0; j < p; ++j)
    free[j] = x.col(static_cast<Eigen::Index>(j)).norm() > 0;
  for (std::size_t round = 0; round <= p; ++round) {
    std::vector<Eigen::Index> columns;
    for (std::size_t j = 0; j < p; ++j) {
      if (free[j]) columns.push_back(static_cast<Eigen::Index>(j));
    }
    std::fill(beta.begin(), beta.end(), 0.0);
    if (columns.empty()) return beta;
    Eigen::MatrixXd a(x.rows(), static_cast<Eigen::Index>(columns.size()));
    Eigen::VectorXd scale(static_cast<Eigen::Index>(columns.size()));
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto ci = static_cast<Eigen::Index>(c);
      scale(ci) = x.col(columns[c]).norm();
      a.col(ci) = x.col(columns[c]) / scale(ci);
    }
    const Eigen::VectorXd solution = a.colPivHouseholderQr().solve(ones);
    Eigen::Index most_negative = -1;
    double lowest = 0;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto ci = static_cast<Eigen::Index>(c);
      const double value = solution(ci) / scale(ci);
      beta[static_cast<std::size_t>(columns[c])] = value;
      if (value < lowest) {
        lowest = value;
        most_negative = columns[c];
      }
    }
    if (most_negative < 0) return beta;
    free[static_cast<std::size_t>(most_negative)] = false;
  }
  return beta;
}

double efficiency_from_inverse(double inverse, const std::string& what,
                               const std::string& evidence) {
  if (!(inverse > 0) || !std::isfinite(inverse)) {
    throw InputError(what,
                     "the measurements fit an infinite or negative ceiling (no time grows "
                     "with the work); " +
                         evidence);
  }
  const double efficiency = 1 / inverse;
  if (efficiency > 1.0) {
    std::ostringstream out;
    out << "the measurements fit " << efficiency
        << " of the datasheet ceiling, above 1: check the time unit (seconds) and the "
           "device; "
        << evidence;
    throw InputError(what, out.str());
  }
  return efficiency;
}

namespace {

// The parameters in the form in which each bound is linear: 1/e, half/e, masked weight/e,
// quantization weight/e.
enum Parameter {
  kFixed,
  kComputeInverse,
  kComputeHalf,
  kMasked,
  kIdle,
  kMemoryInverse,
  kMemoryHalf
};

std::vector<double> to_parameters(const KernelCeilings& k) {
  return {k.fixed_s,
          1 / k.compute_efficiency,
          k.compute_half_size / k.compute_efficiency,
          k.masked_pair_weight / k.compute_efficiency,
          k.quantization_weight / k.compute_efficiency,
          1 / k.memory_efficiency,
          k.memory_half_size / k.memory_efficiency};
}

double compute_term(const std::vector<double>& p, const KernelSample& s) {
  return s.compute_peak_s * (p[kComputeInverse] + p[kComputeHalf] / s.compute_size) +
         s.masked_peak_s * p[kMasked] + s.idle_peak_s * p[kIdle];
}

double memory_term(const std::vector<double>& p, const KernelSample& s) {
  return s.memory_peak_s * (p[kMemoryInverse] + p[kMemoryHalf] / s.size);
}

bool compute_bound(const std::vector<double>& p, const KernelSample& s) {
  return compute_term(p, s) >= memory_term(p, s);
}

double relative_sse(const std::vector<double>& p, std::span<const CeilingPoint> points) {
  double sse = 0;
  for (const CeilingPoint& point : points) {
    const double t =
        p[kFixed] + std::max(compute_term(p, point.sample), memory_term(p, point.sample));
    const double r = (t - point.measured_s) / point.measured_s;
    sse += r * r;
  }
  return sse;
}

// The record that achieves the highest fraction of the compute or memory peak.
std::string fastest_record(std::span<const CeilingPoint> points) {
  const CeilingPoint* best = nullptr;
  double fraction = 0;
  for (const CeilingPoint& point : points) {
    const double f =
        std::max(point.sample.compute_peak_s, point.sample.memory_peak_s) / point.measured_s;
    if (f > fraction) {
      fraction = f;
      best = &point;
    }
  }
  if (best == nullptr) return "no records";
  std::ostringstream out;
  out << best->record->where << " runs at " << fraction << " of the datasheet ceiling (median_s "
      << best->measured_s << ")";
  return out.str();
}

struct Attempt {
  std::vector<double> parameters;
  double sse = std::numeric_limits<double>::infinity();
  bool have_compute = false;
  bool have_memory = false;
};

// The highest fraction of a datasheet peak any record achieves.
double fastest_fraction(std::span<const CeilingPoint> points) {
  double fraction = 0;
  for (const CeilingPoint& point : points) {
    fraction =
        std::max(fraction, std::max(point.sample.compute_peak_s, point.sample.memory_peak_s) /
                               point.measured_s);
  }
  return fraction;
}

// Alternates solving and classifying from the given classes until they are stable. With
// `bounded`, an inverse efficiency below 1 (above the datasheet) is held at 1 and the rest
// refitted.
Attempt alternate(std::span<const CeilingPoint> points, std::vector<double> p,
                  std::vector<bool> classes, bool bounded) {
  Attempt best{p};
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    rows.reserve(points.size());
    y.reserve(points.size());
    bool any_compute = false, any_memory = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const KernelSample& s = points[i].sample;
      if (classes[i]) {
        rows.push_back({1, s.compute_peak_s, s.compute_peak_s / s.compute_size, s.masked_peak_s,
                        s.idle_peak_s, 0, 0});
        any_compute = true;
      } else {
        rows.push_back({1, 0, 0, 0, 0, s.memory_peak_s, s.memory_peak_s / s.size});
        any_memory = true;
      }
      y.push_back(points[i].measured_s);
    }
    std::vector<double> next = fit_nonnegative_relative(rows, y);
    if (bounded) {
      std::vector<double> offset(rows.size(), 0.0);
      bool pinned = false;
      for (const Parameter inverse : {kComputeInverse, kMemoryInverse}) {
        if (!(next[inverse] > 0 && next[inverse] < 1)) continue;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          offset[i] += rows[i][inverse];
          rows[i][inverse] = 0;
        }
        pinned = true;
      }
      if (pinned) {
        const std::vector<double> held = fit_nonnegative_relative(rows, y, offset);
        for (std::size_t j = 0; j < held.size(); ++j) {
          const bool at_bound =
              (j == kComputeInverse || j == kMemoryInverse) && next[j] > 0 && next[j] < 1;
          next[j] = at_bound ? 1.0 : held[j];
        }
      }
    }
    // A side without points keeps its current estimate.
    if (!any_compute) {
      next[kComputeInverse] = p[kComputeInverse];
      next[kComputeHalf] = p[kComputeHalf];
      next[kMasked] = p[kMasked];
      next[kIdle] = p[kIdle];
    }
    if (!any_memory) {
      next[kMemoryInverse] = p[kMemoryInverse];
      next[kMemoryHalf] = p[kMemoryHalf];
    }
    if (!(next[kComputeInverse] > 0) || !(next[kMemoryInverse] > 0)) break;
    p = next;
    const double sse = relative_sse(p, points);
    if (sse < best.sse) best = {p, sse, any_compute, any_memory};
    bool changed = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const bool c = compute_bound(p, points[i].sample);
      changed = changed || c != classes[i];
      classes[i] = c;
    }
    if (!changed) break;
  }
  return best;
}

}  // namespace

KernelCeilings fit_kernel_ceilings(std::span<const CeilingPoint> points,
                                   const KernelCeilings& start, const std::string& class_name) {
  if (points.empty()) return start;
  const std::vector<double> p = to_parameters(start);
  // The alternation finds a local optimum: start it from the classes `start` implies and
  // from all-compute and all-memory, and keep the best.
  std::vector<bool> classes(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    classes[i] = compute_bound(p, points[i].sample);
  // Records above a datasheet peak mean a unit or device error: fit unbounded and refuse.
  const bool bounded = fastest_fraction(points) <= 1.0;
  Attempt best = alternate(points, p, classes, bounded);
  for (const bool all_compute : {true, false}) {
    Attempt a = alternate(points, p, std::vector<bool>(points.size(), all_compute), bounded);
    if (a.sse < best.sse) best = std::move(a);
  }
  if (!std::isfinite(best.sse)) {
    // No solve gave positive ceilings: report the ceiling the data imply.
    efficiency_from_inverse(0, class_name, fastest_record(points));
  }
  const std::string evidence = fastest_record(points);
  KernelCeilings k;
  k.fixed_s = best.parameters[kFixed];
  k.compute_efficiency = best.have_compute
                             ? efficiency_from_inverse(best.parameters[kComputeInverse],
                                                       class_name + " compute", evidence)
                             : start.compute_efficiency;
  k.compute_half_size = best.have_compute ? best.parameters[kComputeHalf] * k.compute_efficiency
                                          : start.compute_half_size;
  k.masked_pair_weight = best.have_compute ? best.parameters[kMasked] * k.compute_efficiency
                                           : start.masked_pair_weight;
  k.quantization_weight =
      best.have_compute ? best.parameters[kIdle] * k.compute_efficiency : start.quantization_weight;
  k.tile_m = start.tile_m;  // the tiling is the profile's, not fitted
  k.tile_n = start.tile_n;
  k.memory_efficiency = best.have_memory ? efficiency_from_inverse(best.parameters[kMemoryInverse],
                                                                   class_name + " memory", evidence)
                                         : start.memory_efficiency;
  k.memory_half_size = best.have_memory ? best.parameters[kMemoryHalf] * k.memory_efficiency
                                        : start.memory_half_size;
  return k;
}

}  // namespace servesim
