#pragma once

#include <filesystem>
#include <fstream>

namespace servesim {

// Opens `path` for writing, replacing it, creating its parent folder when missing. Binary
// mode, so that files are byte-identical on every platform. Throws InputError naming the
// path when it cannot be opened.
std::ofstream open_output_file(const std::filesystem::path& path);

// Flushes and closes `out`; throws InputError naming `path` if any write to it failed (a
// full disk shows up only here).
void close_output_file(std::ofstream& out, const std::filesystem::path& path);

}  // namespace servesim
