#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/workload/workload_source.h"

namespace servesim {

// What a replica does with a request whose prompt + output would pass its maximum sequence
// length (max_len, vLLM's max_model_len). Either way a prompt that leaves no room for one
// output token is rejected, as vLLM rejects it.
enum class MaxLenPolicy : std::uint8_t {
  Cut,     // generation stops at max_len: the output is cut to max_len - prompt (vLLM's engine)
  Reject,  // the whole request is rejected (vLLM's OpenAI API server, prompt + max_tokens)
};

// "cut" or "reject"; anything else is an InputError naming `where` and the valid values.
MaxLenPolicy parse_max_len_policy(const std::string& text, const std::string& where);
const char* max_len_policy_name(MaxLenPolicy policy);

// A request as the length limit admits it: rejected with a reason, or served as `served`,
// whose output is the request's own or, under MaxLenPolicy::Cut, cut so that prompt + output
// is exactly max_len.
struct LengthAdmission {
  std::optional<std::string> reject_reason;
  RequestSpec served;
};

LengthAdmission admit_within_max_len(const RequestSpec& request, std::int64_t max_len_tokens,
                                     MaxLenPolicy policy);

}  // namespace servesim
