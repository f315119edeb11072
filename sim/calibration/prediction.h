#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "sim/calibration/measurement.h"
#include "sim/engine/engine_costs.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/model_spec.h"

namespace servesim {

// Resolves the model of an iteration record (a name from the catalog or a path).
using ModelResolver = std::function<ModelSpec(const std::string& name)>;

// A kernel record (gemm, moe_gemm, decode_attention, prefill_attention) reduced to what its
// class's KernelCeilings price: its times at the datasheet peaks and its sizes.
struct KernelSample {
  double compute_peak_s = 0;
  double memory_peak_s = 0;
  double size = 1;
  double masked_peak_s = 0;  // prefill attention: the pairs above the causal diagonal
  double idle_peak_s = 0;    // GEMM: the tile slots quantization leaves idle
  // The compute ramp's size: `size`, but infinite (no ramp) for a GEMM kernel chosen for its m
  // (gemm_compute_work).
  double compute_size = 1;
  // The kernel's time under `c`: max(compute, memory) plus its fixed cost.
  double seconds(const KernelCeilings& c) const noexcept {
    return std::max(c.compute_s(compute_peak_s, compute_size, masked_peak_s, idle_peak_s),
                    c.memory_s(memory_peak_s, size)) +
           c.fixed_s;
  }
};
bool is_kernel_record(const Measurement& m) noexcept;
// `ceilings` (default: the record's class, see kernel_class) gives the GEMM tiling. A GEMM
// record is priced by the kernel the simulator's rules choose for its m and weight format
// (choose_gemm_kernel; a record whose kernel is a CUDA-core GEMV as a GEMV), a moe_gemm record
// as the grouped kernel over the experts and padded rows it ran (docs/measurements.md).
KernelSample kernel_sample(const Measurement& m, const HardwareProfile& profile,
                           const KernelCeilings* ceilings = nullptr);
// The ceilings of the record's class in `profile`: a GEMM record naming one of the layer
// operators (qkv, o, mlp_up, mlp_down) uses that operator's ceilings.
const KernelCeilings& kernel_class(const Measurement& m, const HardwareProfile& profile);
// The layer operator a GEMM record names; empty for other records, lm_head and unnamed GEMMs.
std::optional<GemmOperator> gemm_operator_of(const Measurement& m) noexcept;

// Predicted seconds of one record under `profile`, with the formulas the simulator prices
// iterations with. An iteration record needs `models`, a host_overhead record `engine` (its
// host costs); without them, it is an InputError. Iteration records time the device's work:
// the engine's host costs do not enter them.
double predict_seconds(const Measurement& m, const HardwareProfile& profile,
                       const ModelResolver* models = nullptr, const EngineCosts* engine = nullptr);

}  // namespace servesim
