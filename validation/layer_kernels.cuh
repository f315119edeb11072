#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "validation/half_precision.h"

namespace servesim::validation {

// The streaming kernels between a layer's GEMMs, as step replay runs them: RMS norm (no
// learned scale), residual add and the MLP activation. Simple and memory-bound like their
// counterparts in serving engines; all pointers are device pointers to `dtype` elements.

// out[r] = in[r] / sqrt(mean(in[r]^2) + 1e-5) for each of `rows` rows of `width`.
void launch_rms_norm(ElementType dtype, const void* in, void* out, std::int64_t rows,
                     std::int64_t width, cudaStream_t stream = nullptr);
// x += y over `count` elements.
void launch_add(ElementType dtype, void* x, const void* y, std::int64_t count,
                cudaStream_t stream = nullptr);
// Gated: out[r][i] = SiLU(in[r][i]) x in[r][width + i], `in` rows of 2 x width (gate then
// up). Plain: out[r][i] = SiLU(in[r][i]), `in` rows of width.
void launch_activation(ElementType dtype, const void* in, void* out, std::int64_t rows,
                       std::int64_t width, bool gated, cudaStream_t stream = nullptr);

// Runs each kernel on random rows and checks it against the CPU reference; throws
// HarnessFailure on a mismatch.
void verify_layer_kernels(ElementType dtype, std::int64_t hidden, std::int64_t intermediate,
                          bool gated);

}  // namespace servesim::validation
