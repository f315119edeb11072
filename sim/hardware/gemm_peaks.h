#pragma once

#include "sim/hardware/gemm_kernels.h"
#include "sim/hardware/hardware_profile.h"
#include "sim/model/dtype.h"

namespace servesim {

// The datasheet peak of `dtype` on this device, or bf16's where it has none.
double peak_flops_or_bf16(const HardwareProfile& profile, DType dtype) noexcept;

// The FLOP/s the GEMMs of a kernel family run at on a device whose wide (16- or 32-bit) side
// computes in `wide`: the tensor cores at the family's own format (fp8, fp4) or at `wide`
// (cublas, marlin), and the CUDA cores for a GEMV (the fp32 peak, else `wide`'s). The roofline's
// layers and single measured records alike (gemm_compute_work).
struct GemmPeaks {
  double tensor_flops_per_s = 0;
  double gemv_flops_per_s = 0;
};
GemmPeaks gemm_peaks(const HardwareProfile& profile, GemmFamily family, DType wide) noexcept;

}  // namespace servesim
