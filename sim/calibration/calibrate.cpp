#include "sim/calibration/calibrate.h"

#include <array>
#include <optional>
#include <set>

#include "sim/calibration/ceiling_fit.h"
#include "sim/calibration/prediction.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

// Every GEMM record fits "gemm" (the LM head's and unnamed GEMMs' class); a record naming a
// layer operator also fits that operator's own class, which is what predicts it.
enum class Group {
  Gemm,
  GemmQkv,
  GemmOut,
  GemmMlpUp,
  GemmMlpDown,
  DecodeAttention,
  PrefillAttention,
  Copy,
  AllReduce
};

// The layer GEMMs' groups follow GemmQkv in GemmOperator's order.
constexpr auto kFirstOperatorGroup = static_cast<std::size_t>(Group::GemmQkv);
static_assert(static_cast<std::size_t>(Group::GemmMlpDown) - kFirstOperatorGroup ==
                  static_cast<std::size_t>(GemmOperator::MlpDown),
              "Group lists the layer GEMMs in GemmOperator's order");

std::optional<GemmOperator> operator_of(Group g) {
  const auto index = static_cast<std::size_t>(g) - kFirstOperatorGroup;  // wraps below
  if (index >= kGemmOperators.size()) return std::nullopt;
  return kGemmOperators[index];
}

Group group_of(GemmOperator op) {
  return static_cast<Group>(kFirstOperatorGroup + static_cast<std::size_t>(op));
}

std::optional<Group> group_of(MeasurementKind kind) {
  switch (kind) {
    case MeasurementKind::Gemm:
      return Group::Gemm;
    case MeasurementKind::DecodeAttention:
      return Group::DecodeAttention;
    case MeasurementKind::PrefillAttention:
      return Group::PrefillAttention;
    case MeasurementKind::MemcpyD2D:
    case MeasurementKind::CopyKernelD2D:
      return Group::Copy;
    case MeasurementKind::AllReduce:
      return Group::AllReduce;
    case MeasurementKind::HostOverhead:  // engine terms: see fit_host_costs
    case MeasurementKind::Iteration:
    case MeasurementKind::MoeGemm:  // checked by validate, never fitted
      return std::nullopt;
  }
  return std::nullopt;
}

std::string group_name(Group g) {
  switch (g) {
    case Group::Gemm:
      return "gemm";
    case Group::GemmQkv:
    case Group::GemmOut:
    case Group::GemmMlpUp:
    case Group::GemmMlpDown:
      return "gemm_" + std::string(gemm_operator_name(*operator_of(g)));
    case Group::DecodeAttention:
      return "decode_attention";
    case Group::PrefillAttention:
      return "prefill_attention";
    case Group::Copy:
      return "copy";
    case Group::AllReduce:
      return "all_reduce";
  }
  return "?";
}

using Records = std::vector<const Measurement*>;

std::string files_of(const Records& records) {
  std::set<std::string> files;
  for (const Measurement* m : records)
    files.insert(m->source);
  std::string out;
  for (const auto& f : files)
    out += (out.empty() ? "" : ", ") + f;
  return out;
}

// Linear fit y = sum beta_j x_j over non-negative coefficients, for the two-parameter groups.
std::vector<double> fit_linear(const Records& records,
                               const std::function<std::vector<double>(const Measurement&)>& f) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Measurement* m : records) {
    rows.push_back(f(*m));
    y.push_back(m->median_s);
  }
  return fit_nonnegative_relative(rows, y);
}

// Fits one group into `profile`; returns the keys it set.
std::vector<std::string> fit_group(Group group, const Records& records, HardwareProfile& profile) {
  const std::string what = group_name(group) + " fit of " + files_of(records);
  const auto kernels = [&](KernelCeilings& k, const std::string& prefix) {
    std::vector<CeilingPoint> points;
    points.reserve(records.size());
    for (const Measurement* m : records)
      points.push_back({kernel_sample(*m, profile, &k), m->median_s, m});
    k = fit_kernel_ceilings(points, k, what);
    std::vector<std::string> keys;
    for (const char* key : {"compute_efficiency", "compute_half_size", "memory_efficiency",
                            "memory_half_size", "fixed_s", "masked_pair_weight"})
      keys.push_back(prefix + key);
    if (prefix.starts_with("kernels.gemm")) keys.push_back(prefix + "quantization_weight");
    return keys;
  };
  switch (group) {
    case Group::Gemm:
      return kernels(profile.kernels.gemm, "kernels.gemm.");
    case Group::GemmQkv:
    case Group::GemmOut:
    case Group::GemmMlpUp:
    case Group::GemmMlpDown: {
      // Kernel samples depend on the class's tiling: take the class before sampling.
      const GemmOperator op = *operator_of(group);
      auto& own = profile.kernels.gemm_operators[static_cast<std::size_t>(op)];
      if (!own) own = profile.kernels.gemm;
      return kernels(*own, "kernels." + group_name(group) + ".");
    }
    case Group::DecodeAttention:
      return kernels(profile.kernels.decode_attention, "kernels.decode_attention.");
    case Group::PrefillAttention:
      return kernels(profile.kernels.prefill_attention, "kernels.prefill_attention.");
    case Group::Copy: {
      const double bandwidth = profile.memory_bandwidth_bytes_per_s;
      const auto beta = fit_linear(records, [&](const Measurement& m) {
        return std::vector<double>{1, 2 * m.size_bytes / bandwidth};
      });
      profile.overheads.kernel_launch_s = beta[0];
      profile.efficiency.memory_bandwidth =
          efficiency_from_inverse(beta[1], what, "bandwidth of " + records.front()->where);
      return {"overheads.kernel_launch_s", "efficiency.memory_bandwidth"};
    }
    case Group::AllReduce: {
      const double link = profile.gpu_link_bandwidth_bytes_per_s;
      const auto beta = fit_linear(records, [&](const Measurement& m) {
        const double ranks = static_cast<double>(m.ranks);
        return std::vector<double>{1, 2 * (ranks - 1) / ranks * m.size_bytes / link};
      });
      profile.overheads.collective_latency_s = beta[0];
      profile.efficiency.gpu_link =
          efficiency_from_inverse(beta[1], what, "bus bandwidth of " + records.front()->where);
      return {"overheads.collective_latency_s", "efficiency.gpu_link"};
    }
  }
  return {};
}

std::map<Group, Records> group_records(std::span<const Measurement> measurements) {
  std::map<Group, Records> groups;
  for (const Measurement& m : measurements) {
    if (const auto g = group_of(m.kind)) groups[*g].push_back(&m);
    if (const auto op = gemm_operator_of(m)) groups[group_of(*op)].push_back(&m);
  }
  return groups;
}

// Whether `group`'s ceilings are the ones that predict `m` (GEMM records naming an operator
// are predicted by that operator's class, not by "gemm").
bool predicts(Group group, const Measurement& m) {
  if (group != Group::Gemm) return true;
  return !gemm_operator_of(m).has_value();
}

}  // namespace

HardwareProfile fit_profile(std::span<const Measurement> measurements, const HardwareProfile& base,
                            const std::string& sources_note) {
  HardwareProfile profile = base;
  const std::map<Group, Records> groups = group_records(measurements);
  if (groups.contains(Group::Gemm)) {
    // An operator class of the base without records of its own would price that operator
    // with stale ceilings: the operator follows the refitted "gemm" instead.
    for (const GemmOperator op : kGemmOperators) {
      if (groups.contains(group_of(op))) continue;
      profile.kernels.gemm_operators[static_cast<std::size_t>(op)].reset();
      const std::string prefix = "kernels.gemm_" + std::string(gemm_operator_name(op)) + ".";
      std::erase_if(profile.sources,
                    [&](const auto& source) { return source.first.starts_with(prefix); });
    }
  }
  for (const auto& [group, records] : groups) {
    for (const std::string& key : fit_group(group, records, profile)) {
      profile.sources[key] = "fitted by servesim calibrate (least squares of relative errors) to " +
                             std::to_string(records.size()) + " " + group_name(group) + " records" +
                             sources_note;
    }
  }
  // Say which fitted efficiencies sit at the datasheet bound (see fit_kernel_ceilings).
  const auto note_bound = [&](const std::string& name, const KernelCeilings& k) {
    for (const auto& [key, value] : {std::pair{"compute_efficiency", k.compute_efficiency},
                                     std::pair{"memory_efficiency", k.memory_efficiency}}) {
      const auto source = profile.sources.find("kernels." + name + "." + key);
      if (value == 1.0 && source != profile.sources.end() && source->second.starts_with("fitted")) {
        source->second += "; held at the datasheet ceiling (the unbounded fit lands above it)";
      }
    }
  };
  note_bound("gemm", profile.kernels.gemm);
  note_bound("decode_attention", profile.kernels.decode_attention);
  note_bound("prefill_attention", profile.kernels.prefill_attention);
  for (const GemmOperator op : kGemmOperators) {
    if (const auto& own = profile.kernels.gemm_operators[static_cast<std::size_t>(op)]) {
      note_bound("gemm_" + std::string(gemm_operator_name(op)), *own);
    }
  }
  // A calibrated profile writes every kernel class; those without records keep the flat
  // ceilings of the uncalibrated roofline, and say so.
  for (const char* group : {"gemm", "decode_attention", "prefill_attention"}) {
    for (const char* key : {"compute_efficiency", "compute_half_size", "memory_efficiency",
                            "memory_half_size", "fixed_s", "masked_pair_weight"}) {
      profile.sources.emplace(std::string("kernels.") + group + "." + key,
                              std::string("not fitted (no ") + group +
                                  " records): the uncalibrated roofline's value, from "
                                  "efficiency and overheads.kernel_launch_s");
    }
  }
  std::vector<std::string> gemm_classes{"gemm"};
  for (const GemmOperator op : kGemmOperators) {
    if (profile.kernels.gemm_operators[static_cast<std::size_t>(op)]) {
      gemm_classes.push_back("gemm_" + std::string(gemm_operator_name(op)));
    }
  }
  for (const std::string& group : gemm_classes) {
    const std::string prefix = "kernels." + group + ".";
    profile.sources.emplace(prefix + "quantization_weight",
                            "not fitted (no " + group + " records): the base profile's value");
    for (const char* key : {"tile_m", "tile_n"}) {
      profile.sources.emplace(prefix + key,
                              "not fitted: the output tile the quantization term assumes (default "
                              "128 x 128, a common cuBLAS/CUTLASS tile for 16-bit GEMMs)");
    }
  }
  return profile;
}

EngineHostCosts fit_host_costs(std::span<const Measurement> measurements) {
  Records records;
  for (const Measurement& m : measurements) {
    if (m.kind == MeasurementKind::HostOverhead) records.push_back(&m);
  }
  if (records.empty()) throw InputError("measurements", "no host_overhead records to fit");
  const auto beta = fit_linear(records, [](const Measurement& m) {
    return std::vector<double>{1, static_cast<double>(m.batch)};
  });
  EngineHostCosts host;
  host.step_s = beta[0];
  host.per_sequence_s = beta[1];
  return host;
}

CalibrationReport calibrate(std::span<const Measurement> measurements, const HardwareProfile& base,
                            const std::vector<std::string>& files) {
  CalibrationReport report;
  report.profile = fit_profile(measurements, base, " (files: calibration.files)");
  ErrorTable fit, holdout;
  for (const Measurement& m : measurements) {
    if (!group_of(m.kind)) continue;
    fit.add(m.class_name(), predict_seconds(m, report.profile), m.median_s);
  }
  for (const auto& [group, records] : group_records(measurements)) {
    std::set<std::string> models;
    bool all_named = true;
    for (const Measurement* m : records) {
      if (m->model.empty()) all_named = false;
      models.insert(m->model);
    }
    const bool by_model = all_named && models.size() >= 2;
    // Each fold: the records fitted and the records predicted.
    std::vector<std::pair<Records, Records>> folds;
    if (by_model) {
      for (const std::string& held : models) {
        auto& [train, test] = folds.emplace_back();
        for (const Measurement* m : records)
          (m->model == held ? test : train).push_back(m);
      }
    } else if (records.size() >= 4) {
      for (std::size_t parity = 0; parity < 2; ++parity) {
        auto& [train, test] = folds.emplace_back();
        for (std::size_t i = 0; i < records.size(); ++i)
          (i % 2 == parity ? test : train).push_back(records[i]);
      }
    }
    for (const auto& [train, test] : folds) {
      HardwareProfile fold = base;
      fit_group(group, train, fold);
      for (const Measurement* m : test) {
        if (!predicts(group, *m)) continue;
        holdout.add(m->class_name(), predict_seconds(*m, fold), m->median_s);
        report.method[m->class_name()] =
            by_model ? "leave-one-model-out (" + std::to_string(models.size()) + " models)"
                     : "two-fold (even/odd records)";
      }
    }
  }
  report.fit = fit.summarize();
  report.holdout = holdout.summarize();

  nlohmann::json residuals = nlohmann::json::object();
  for (const auto& [name, stats] : report.fit)
    residuals[name] = error_stats_to_json(stats);
  nlohmann::json held = nlohmann::json::object();
  for (const auto& [name, stats] : report.holdout) {
    held[name] = error_stats_to_json(stats);
    held[name]["method"] = report.method[name];
  }
  report.profile.calibration = {
      {"tool", "servesim calibrate"},   {"base_profile", base.name}, {"files", files},
      {"records", measurements.size()}, {"residuals", residuals},    {"holdout", held}};
  return report;
}

}  // namespace servesim
