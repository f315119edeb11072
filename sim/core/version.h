#pragma once

#include <string_view>

namespace servesim {

// The version of this build: the CMake project's VERSION ("0.1.0").
std::string_view servesim_version();

}  // namespace servesim
