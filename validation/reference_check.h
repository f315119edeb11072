#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace servesim::validation {

// Fills `buffer` with a byte pattern that differs between seeds and has no short period, so
// a copy that reads the wrong buffer or the wrong offset does not compare equal by accident.
void fill_pattern(std::span<std::byte> buffer, std::uint32_t seed);

// Index of the first byte where the buffers differ; std::nullopt when they are equal. When
// the lengths differ and the shorter is a prefix of the longer, the shorter length is
// returned: the first byte that one buffer has and the other lacks.
std::optional<std::size_t> first_mismatch(std::span<const std::byte> expected,
                                          std::span<const std::byte> actual);

}  // namespace servesim::validation
