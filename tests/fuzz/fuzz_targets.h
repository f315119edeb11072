#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace servesim::fuzz {

// One entry function per fuzz target. Each feeds `text` to a reader the way the CLI does,
// returns true when the input is accepted and false when it is refused with a servesim::Error
// (the only acceptable way to refuse), and lets every other exception escape, so libFuzzer
// and the smoke test report it. Accepted inputs are also checked for the reader's promises
// (sorted trace rows, finite model sizes, a workload spec that reads back equal); a broken
// promise throws std::logic_error.
bool load_config_text(std::string_view text);
bool load_trace_text(std::string_view text);
bool load_model_text(std::string_view text);
bool load_hardware_text(std::string_view text);
bool load_engine_text(std::string_view text);
bool load_workload_text(std::string_view text);
bool load_bench_result_text(std::string_view text);
bool load_serving_csv_text(std::string_view text);
bool load_journal_text(std::string_view text);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace servesim::fuzz

// The libFuzzer executables (SERVESIM_FUZZ=ON) define LLVMFuzzerTestOneInput in the target's
// source file; the test suite links every target's file without it.
#ifdef SERVESIM_LIBFUZZER_ENTRY
#define SERVESIM_FUZZ_ENTRY(function)                                                 \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    (void)function(servesim::fuzz::as_text(data, size));                              \
    return 0;                                                                         \
  }
#else
#define SERVESIM_FUZZ_ENTRY(function)
#endif
