#include "sim/hardware/gemm_peaks.h"

namespace servesim {

double peak_flops_or_bf16(const HardwareProfile& profile, DType dtype) noexcept {
  return profile.supports(dtype) ? profile.peak_flops(dtype) : profile.peak_flops(DType::BF16);
}

GemmPeaks gemm_peaks(const HardwareProfile& profile, GemmFamily family, DType wide) noexcept {
  const double wide_peak = peak_flops_or_bf16(profile, wide);
  const DType compute = gemm_family_compute_dtype(family, wide);
  GemmPeaks peaks;
  peaks.tensor_flops_per_s = compute == wide ? wide_peak : peak_flops_or_bf16(profile, compute);
  peaks.gemv_flops_per_s =
      profile.supports(DType::FP32) ? profile.peak_flops(DType::FP32) : wide_peak;
  return peaks;
}

}  // namespace servesim
