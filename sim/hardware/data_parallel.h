#pragma once

#include <cstdint>

#include "sim/hardware/batch_shape.h"

namespace servesim {

// The work of the busiest of `ranks` data-parallel attention ranks in a replica's step.
// Sequences are split evenly, whole, by kind: the busiest rank holds ceil(n / ranks) of the n
// prompt chunks and ceil(m / ranks) of the m decoding sequences, each kind's token and
// context sums in the same proportion (rounded up to whole tokens, so that a decode run's
// contexts grow by the rank's sequences per step exactly), its pair sums likewise. A step
// waits for its slowest rank (the MoE layers exchange tokens between all ranks), so this is
// the attention the step is priced by. `ranks` <= 1: the shape itself. O(1), no allocation.
BatchShape busiest_attention_rank(const BatchShape& replica, std::int64_t ranks) noexcept;

}  // namespace servesim
