#include <stdexcept>

#include "sim/core/error.h"
#include "sim/workload/trace_reader.h"
#include "tests/fuzz/fuzz_targets.h"

namespace servesim::fuzz {

bool load_trace_text(std::string_view text) {
  try {
    const Trace trace = parse_trace_text(text, "fuzz-trace.csv");
    if (trace.size() == 0 || trace.lengths.size() != trace.size()) {
      throw std::logic_error("trace accepted with no rows or mismatched columns");
    }
    for (std::size_t i = 0; i < trace.size(); ++i) {
      if (trace.arrivals[i] < SimTime() || (i > 0 && trace.arrivals[i] < trace.arrivals[i - 1]) ||
          trace.lengths[i].prompt_tokens < 1 || trace.lengths[i].output_tokens < 1) {
        throw std::logic_error("trace accepted with a negative, unsorted or empty row");
      }
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace servesim::fuzz

SERVESIM_FUZZ_ENTRY(servesim::fuzz::load_trace_text)
