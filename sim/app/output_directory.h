#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace servesim {

// The folder `out_dir` names (absolute, "out/", "./out" and "a/../out" all "out"), checked as
// publish_output checks it, so that a command refuses a bad --out before it simulates
// anything: InputError when it names no folder of its own ("." or "/"), is not a directory,
// or is a non-empty directory that holds no servesim run (no summary.json, nor the
// journal.jsonl of a study interrupted under an older servesim). Touches nothing.
std::filesystem::path output_folder(const std::filesystem::path& out_dir);

// Writes a run's files into a staging folder beside `out_dir` and moves it into place only
// once every file is written, so a failed run leaves no half-written output and the previous
// folder, if any, exactly as it was. An existing `out_dir` is replaced only if it is empty or
// holds an earlier servesim run (output_folder).
void publish_output(const std::filesystem::path& out_dir,
                    const std::function<void(const std::filesystem::path& staging)>& write);

// Checks, before anything runs, that a single output file given by `flag` (--save-result,
// --output) can be written where it is asked for: its folder exists (none is created) and
// the path is not a directory. InputError naming the flag and the missing folder otherwise.
void check_output_file(const std::string& flag, const std::filesystem::path& path);

}  // namespace servesim
