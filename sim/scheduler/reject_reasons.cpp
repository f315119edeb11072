#include "sim/scheduler/reject_reasons.h"

namespace servesim {

std::optional<std::string> kv_capacity_reject_reason(const RequestSpec& request,
                                                     const IKvCacheAllocator& allocator) {
  const std::int64_t final_tokens = request.prompt_tokens + request.output_tokens;
  if (allocator.fits_when_empty(final_tokens)) return std::nullopt;
  return "prompt + output tokens (" + std::to_string(final_tokens) +
         ") exceed the replica's KV capacity (" + std::to_string(allocator.capacity_tokens()) +
         " tokens)";
}

std::optional<std::string> prefill_limit_reject_reason(const RequestSpec& request,
                                                       std::int64_t limit_tokens,
                                                       const std::string& limit_name) {
  const std::int64_t final_tokens = request.prompt_tokens + request.output_tokens;
  if (final_tokens <= limit_tokens) return std::nullopt;
  return "prompt + output tokens (" + std::to_string(final_tokens) + ") exceed " + limit_name +
         " (" + std::to_string(limit_tokens) + ")";
}

}  // namespace servesim
