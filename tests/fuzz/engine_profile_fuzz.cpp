#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/engine/engine_profile.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// An engines/<name>.json file as --engine PATH reads it. An accepted profile has a positive
// block size and a memory share in (0, 1], and its JSON form, when its sources cover every
// term, reads back to the same JSON form.
bool load_engine_text(std::string_view text) {
  const std::string source = "fuzz-engine.json";
  try {
    const EngineProfile engine = engine_from_json(parse_json_text(text, source), source);
    if (engine.scheduling.block_size < 1 || !(engine.scheduling.gpu_memory_utilization > 0) ||
        engine.scheduling.gpu_memory_utilization > 1) {
      throw std::logic_error("engine profile accepted with a bad block size or memory share");
    }
    // The JSON form holds every term, defaults included, so it reads back only where the
    // sources cover them all (the shipped profiles, what calibrate fits from them).
    const nlohmann::json written = engine_to_json(engine);
    std::optional<EngineProfile> again;
    try {
      again = engine_from_json(written, "fuzz-engine-again.json");
    } catch (const Error& e) {
      if (std::string_view(e.what()).find("has no source for") == std::string_view::npos) {
        throw std::logic_error(std::string("engine profile's JSON form refused: ") + e.what());
      }
    }
    if (again && engine_to_json(*again) != written) {
      throw std::logic_error("engine profile does not read back equal from its JSON form");
    }
    // The rule lookup every deployment makes, for a small and a large GPU.
    (void)engine.scheduler_parameters_for("fuzz-gpu", 24e9);
    (void)engine.scheduler_parameters_for("fuzz-gpu", 192e9);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_engine_text)
