#include "sim/cluster/max_len_admission.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

MaxLenPolicy parse_max_len_policy(const std::string& text, const std::string& where) {
  if (text == "cut") return MaxLenPolicy::Cut;
  if (text == "reject") return MaxLenPolicy::Reject;
  throw InputError(where, "unknown max_len policy \"" + text + "\" (valid: cut, reject)");
}

const char* max_len_policy_name(MaxLenPolicy policy) {
  return policy == MaxLenPolicy::Cut ? "cut" : "reject";
}

LengthAdmission admit_within_max_len(const RequestSpec& request, std::int64_t max_len_tokens,
                                     MaxLenPolicy policy) {
  LengthAdmission admission{std::nullopt, request};
  // The first parenthesised number of a reason is the request's own figure, which the
  // metrics leave out when they count rejections by reason.
  if (request.prompt_tokens >= max_len_tokens) {
    admission.reject_reason = "prompt tokens (" + std::to_string(request.prompt_tokens) +
                              ") leave no room for an output token within the maximum sequence "
                              "length (" +
                              std::to_string(max_len_tokens) + ")";
    return admission;
  }
  const std::int64_t length = request.prompt_tokens + request.output_tokens;
  if (length <= max_len_tokens) return admission;
  if (policy == MaxLenPolicy::Reject) {
    admission.reject_reason = "prompt + output tokens (" + std::to_string(length) +
                              ") exceed the maximum sequence length (" +
                              std::to_string(max_len_tokens) + ")";
    return admission;
  }
  admission.served.output_tokens =
      std::min(request.output_tokens, max_len_tokens - request.prompt_tokens);
  return admission;
}

}  // namespace servesim
