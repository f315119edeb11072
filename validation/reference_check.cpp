#include "validation/reference_check.h"

#include <algorithm>

namespace servesim::validation {

void fill_pattern(std::span<std::byte> buffer, std::uint32_t seed) {
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    // Fibonacci hashing: the top byte of index x 2^64/phi is a Weyl sequence with no short
    // period. The seed shifts the index by 2^40 per step, so seeds below 2^24 give distinct
    // patterns for any buffer under 1 TiB.
    const std::uint64_t mixed = (i + (std::uint64_t{seed} << 40)) * 0x9E3779B97F4A7C15ull;
    buffer[i] = static_cast<std::byte>(mixed >> 56);
  }
}

std::optional<std::size_t> first_mismatch(std::span<const std::byte> expected,
                                          std::span<const std::byte> actual) {
  const std::size_t common = std::min(expected.size(), actual.size());
  const auto [at, unused] =
      std::mismatch(expected.begin(), expected.begin() + common, actual.begin());
  const auto index = static_cast<std::size_t>(at - expected.begin());
  if (index < common || expected.size() != actual.size()) return index;
  return std::nullopt;
}

}  // namespace servesim::validation
