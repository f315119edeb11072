#include <cmath>
#include <stdexcept>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/hardware/hardware_profile.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A hw_profiles/<name>.json file as --hw PATH reads it. An accepted profile has positive
// finite memory and bandwidth, and its JSON form reads back to the same JSON form (what
// `servesim calibrate` relies on when it writes a fitted profile).
bool load_hardware_text(std::string_view text) {
  const std::string source = "fuzz-hw.json";
  try {
    const HardwareProfile profile = hardware_from_json(parse_json_text(text, source), source);
    if (!(std::isfinite(profile.memory_capacity_bytes) && profile.memory_capacity_bytes > 0 &&
          std::isfinite(profile.memory_bandwidth_bytes_per_s) &&
          profile.memory_bandwidth_bytes_per_s > 0)) {
      throw std::logic_error("hardware profile accepted without a positive memory or bandwidth");
    }
    const nlohmann::json written = hardware_to_json(profile);
    if (hardware_to_json(hardware_from_json(written, "fuzz-hw-again.json")) != written) {
      throw std::logic_error("hardware profile does not read back equal from its JSON form");
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_hardware_text)
