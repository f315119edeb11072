#pragma once

#include <filesystem>
#include <string_view>

namespace servesim::fuzz {

// The targets whose readers take a path (measured serving files, study journals) write each
// input to a file first. The files live in one folder of this process's own under the system's
// temporary folder (TMPDIR), made on first use and removed when the process exits normally, so
// parallel fuzzers and the test suite never share a file and nothing lands in the source tree.
const std::filesystem::path& scratch_folder();

// Writes `text` to scratch_folder()/`name` (replacing it) and returns the path.
std::filesystem::path write_scratch_file(const std::filesystem::path& name, std::string_view text);

// A data root in scratch_folder() (models/, hw_profiles/) holding only what the readers of
// measured serving files look at: three models' Hugging Face ids ("_name_or_path") and three
// profile names. The shipped folders would do too, but the model lookup reads every model
// file per call, which would slow the fuzzers tenfold.
const std::filesystem::path& stub_data_root();

}  // namespace servesim::fuzz
