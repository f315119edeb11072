#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/study/point_journal.h"
#include "tests/fuzz/fuzz_scratch.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

// A study journal (OUT/journal.jsonl) as `--resume OUT` reads it, for the study
// {"command": "sweep", "fuzz": 1} (the seeds' header). Kept thin on purpose: one resume, then
// every line that is a well-formed entry ({"key": "...", "result": ...}) must be found.
bool load_journal_text(std::string_view text) {
  try {
    write_scratch_file("journal/journal.jsonl", text);
    const nlohmann::json identity = {{"command", "sweep"}, {"fuzz", 1}};
    const PointJournal journal =
        PointJournal::resume(scratch_folder() / "journal", identity, /*writes=*/false);
    std::istringstream lines{std::string(text)};
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
      const auto entry = nlohmann::json::parse(line, nullptr, false);
      if (!entry.is_object() || !entry.contains("result")) continue;
      const auto key = entry.find("key");
      if (key == entry.end() || !key->is_string()) continue;
      if (!journal.find(key->get<std::string>())) {
        throw std::logic_error("journal entry not found after resuming");
      }
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_journal_text)
