#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/memory/sequence_table.h"

using servesim::SequenceTable;

TEST_CASE("SequenceTable agrees with a hash map under random admissions and releases",
          "[memory][sequence_table]") {
  SequenceTable<std::int64_t> table;
  std::unordered_map<std::int64_t, std::int64_t> reference;
  std::mt19937_64 rng(11);
  // Ids drawn from a narrow range collide on probe runs often; a wide one exercises growth.
  for (const std::int64_t range : {std::int64_t{300}, std::int64_t{1} << 40}) {
    std::uniform_int_distribution<std::int64_t> id(0, range);
    for (int step = 0; step < 20000; ++step) {
      const std::int64_t sequence = id(rng);
      const bool present = reference.contains(sequence);
      if (rng() % 3 == 0 || reference.size() > 200) {
        CHECK(table.erase(sequence) == present);
        reference.erase(sequence);
      } else {
        std::int64_t* value = table.emplace(sequence);
        CHECK((value == nullptr) == present);
        if (value != nullptr) {
          *value = sequence * 7;
          reference.emplace(sequence, sequence * 7);
        }
      }
      REQUIRE(table.size() == reference.size());
    }
    for (const auto& [sequence, value] : reference) {
      const std::int64_t* found = table.find(sequence);
      REQUIRE(found != nullptr);
      CHECK(*found == value);
    }
    for (std::int64_t probe = 0; probe < 300; ++probe)
      CHECK(table.contains(probe) == reference.contains(probe));
    for (const auto& entry : reference)
      CHECK(table.erase(entry.first));
    reference.clear();
    CHECK(table.size() == 0);
    CHECK(table.find(5) == nullptr);
  }
}

TEST_CASE("SequenceTable hands a released value to the next sequence, capacity kept",
          "[memory][sequence_table]") {
  SequenceTable<std::vector<int>> table;
  std::vector<int>* first = table.emplace(1);
  REQUIRE(first != nullptr);
  first->assign(100, 3);
  CHECK(table.emplace(1) == nullptr);  // already present
  CHECK(table.erase(1));
  CHECK_FALSE(table.erase(1));
  std::vector<int>* second = table.emplace(2);
  REQUIRE(second != nullptr);
  CHECK(second->capacity() >= 100);  // the caller resets it; the memory is reused
  CHECK(table.find(1) == nullptr);
  CHECK(table.find(2) == second);
}
