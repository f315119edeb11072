#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/app/app.h"
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

struct EngineFitOptions {
  std::vector<std::string> terms = kEngineFitTerms;
  int max_evaluations = 150;  // of the predictor, per fit
};

struct EngineFitReport {
  EngineProfile engine;  // the base with the fitted terms, their sources, its calibration
  std::map<std::string, double> terms;  // fitted values by term
  ServingValidation fitted;             // every point predicted with the fitted engine (in sample)
  // Every point predicted by the engine fitted to the other models' points alone (one fold per
  // model; points of a model with no other model to fit on are not predicted).
  ServingValidation held_out;
  int evaluations = 0;
};

// Fits `options.terms` of `base` to the points of `runs` by least squares of relative errors
// (as log(predicted / measured), which treats over- and under-prediction alike and keeps a
// point predicted overloaded from swamping the rest) of every measured mean latency and
// throughput of the points not measured overloaded, with Nelder-Mead over the logarithms of
// the terms (so they stay positive), each held within a physical range (factors 0.9 to 3,
// host times under 50 ms), starting from the base's values. Then refits once per
// model with that model's points left out and predicts them: leave-one-model-out errors.
// `files` are recorded in the engine's calibration metadata.
EngineFitReport fit_engine(const std::vector<ServingRun>& runs, const EngineProfile& base,
                           const EngineTermsPredictor& predict, const EngineFitOptions& options,
                           const std::vector<std::string>& files);

// Whether `term` is one a fit may set: the host's times and the kernel factors (numbers the
// run configuration's engine section takes, with a range each).
bool is_fittable_term(const std::string& term);

// The value of `term` in `engine` (a key path such as "host.step_s").
double engine_term(const EngineProfile& engine, const std::string& term);

}  // namespace servesim
