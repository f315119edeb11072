#include "sim/memory/impl/block_watermark.h"

#include <string>

#include "sim/core/error.h"

namespace servesim {

void throw_admitted_without_room(const char* allocator, std::int64_t sequence) {
  throw InvariantError("kv_within_capacity", std::string(allocator) + ": admitted sequence " +
                                                 std::to_string(sequence) + " without room");
}

void throw_no_block_to_grow(const char* allocator, std::int64_t sequence, std::int64_t tokens) {
  throw InvariantError("kv_within_capacity",
                       std::string(allocator) + ": no free block to grow sequence " +
                           std::to_string(sequence) + " by " + std::to_string(tokens) + " tokens");
}

}  // namespace servesim
