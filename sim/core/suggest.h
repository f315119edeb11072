#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// The names among `candidates` that `given` is most likely a misspelling of, for "did you
// mean" hints: those it is a prefix of (of 2 characters or more), else those at the smallest
// edit distance (insertions, deletions, substitutions and swaps of adjacent characters,
// ignoring case) when that distance is at most a third of `given`'s length (at least 1).
// At most three, in candidate order; none for an exact match or nothing close.
std::vector<std::string> close_names(std::string_view given,
                                     const std::vector<std::string>& candidates);

// "did you mean "X"?" (or ""X" or "Y"?"), each name between `before` and `after`; empty when
// nothing is close.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates,
                         std::string_view before = "\"", std::string_view after = "\"");

// Splits a ", "-separated list of names.
std::vector<std::string> split_name_list(std::string_view list);

}  // namespace servesim
