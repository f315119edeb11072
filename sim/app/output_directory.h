#pragma once

#include <filesystem>
#include <functional>

namespace servesim {

// Writes a run's files into a staging folder beside `out_dir` and moves it into place only
// once every file is written, so a failed run leaves no half-written output. An existing
// `out_dir` is replaced only if it is empty or holds an earlier servesim run (a
// summary.json); anything else is refused rather than deleted.
void publish_output(const std::filesystem::path& out_dir,
                    const std::function<void(const std::filesystem::path& staging)>& write);

}  // namespace servesim
