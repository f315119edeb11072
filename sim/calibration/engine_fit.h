#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/app.h"
#include "sim/calibration/hardware_terms.h"
#include "sim/calibration/serving_runs.h"
#include "sim/calibration/serving_validation.h"
#include "sim/engine/engine_profile.h"

namespace servesim {

// The engine terms a fit to measured serving points sets by default, as key paths of an
// engine profile: the host's work per step and per request, and factors on the hardware's
// GEMM, decode- and prefill-attention kernels and the all-reduce latency. The hardware
// profile's per-operator fits stay as they are: these terms go on top of them.
inline const std::vector<std::string> kEngineFitTerms = {"host.step_s",
                                                         "host.per_sequence_s",
                                                         "kernels.gemm_factor",
                                                         "kernels.decode_attention_factor",
                                                         "kernels.prefill_attention_factor",
                                                         "kernels.all_reduce_latency_s"};

// Predicts `runs` with these engine terms set over the engine the points name (each
// override sets "engine.<term>" of the run configuration).
using EngineTermsPredictor = std::function<ServingValidation(
    const std::vector<ServingRun>& runs, const std::vector<ConfigOverride>& engine_terms)>;

// What a leave-one-out fold holds out: every point of one model, one TP degree, one hardware
// profile or one engine.
enum class HoldOut { Model, Tp, Hardware, Engine };
// "model", "tp", "hardware", "engine"; nullopt for anything else.
std::optional<HoldOut> hold_out_from_name(std::string_view name);
std::string_view hold_out_name(HoldOut h) noexcept;

struct EngineFitOptions {
  // Engine terms ("host.step_s") and hardware terms ("hardware.kernels.gemm.fixed_s", see
  // hardware_terms.h; the predictor receives them as "hardware.<path>=<value>" assignments
  // and runs every point on the profile they describe).
  std::vector<std::string> terms = kEngineFitTerms;
  int max_evaluations = 150;  // of the predictor, per fit
  HoldOut hold_out = HoldOut::Model;
  // The profile document (hardware_to_json) the hardware terms start from and are written
  // into; required when a term is a hardware term.
  nlohmann::json hardware_base;
  // The points the fit was given out of more ("hardware=b200"), for the calibration record.
  std::vector<std::string> selection;
};

struct EngineFitReport {
  // The base with the fitted terms, their sources, its calibration; default-constructed when
  // every term fitted is a hardware term.
  EngineProfile engine;
  // The hardware profile document with the fitted hardware terms, their sources and the fit's
  // calibration record; null when no hardware term was fitted.
  nlohmann::json hardware;
  std::map<std::string, double> terms;  // fitted values by term
  ServingValidation fitted;             // every point predicted with the fitted engine (in sample)
  // Every point predicted by the terms fitted to the other points alone: one fold per model (or
  // TP degree, hardware profile, engine: options.hold_out); nothing when there is one only.
  ServingValidation held_out;
  int evaluations = 0;
};

// Fits `options.terms` of `base` to the points of `runs` by least squares of relative errors
// (as log(predicted / measured), which treats over- and under-prediction alike and keeps a
// point predicted overloaded from swamping the rest) of every measured mean latency and
// throughput of the points not measured overloaded, with Nelder-Mead over the logarithms of
// the terms (so they stay positive), each held within a physical range (factors 0.9 to 3,
// host times under 50 ms, hardware efficiencies 0.05 to 1), starting from the base's values.
// Then refits once per model (or what options.hold_out names) with its points left out and
// predicts them: leave-one-out errors.
// `files` are recorded in the engine's calibration metadata.
EngineFitReport fit_engine(const std::vector<ServingRun>& runs, const EngineProfile& base,
                           const EngineTermsPredictor& predict, const EngineFitOptions& options,
                           const std::vector<std::string>& files);

// Whether `term` is one a fit may set: the host's times and the kernel factors (numbers the
// run configuration's engine section takes, with a range each), or a hardware term.
bool is_fittable_term(const std::string& term);

// The value of `term` in `engine` (a key path such as "host.step_s").
double engine_term(const EngineProfile& engine, const std::string& term);

}  // namespace servesim
