#pragma once

#include <cstdint>

#include "sim/workload/content_namespaces.h"
#include "sim/workload/token_content.h"

namespace servesim {

// The shared-prefix workload of inference-perf (its `shared_prefix` data generator): `groups`
// system prompts of `system_prompt_tokens` each, each shared by `users_per_group` users; every
// request is its user's group's system prompt followed by a question of `question_tokens`, and
// asks for `output_tokens`. All five are >= 1. The question is new for every request, or, as
// inference-perf sends them, each user's own, the same in every round (`questions`).
enum class QuestionReuse { PerRequest, PerUser };

struct SharedPrefixSpec {
  std::int64_t groups = 1;
  std::int64_t users_per_group = 1;
  std::int64_t system_prompt_tokens = 1;
  std::int64_t question_tokens = 1;
  std::int64_t output_tokens = 1;
  QuestionReuse questions = QuestionReuse::PerRequest;
  bool operator==(const SharedPrefixSpec&) const = default;

  std::int64_t users() const noexcept { return groups * users_per_group; }
  std::int64_t prompt_tokens() const noexcept { return system_prompt_tokens + question_tokens; }
};

// Users take turns round robin: request i (its id, 0, 1, 2, ... in arrival order) belongs to
// user i mod (groups x users_per_group), and users 0 .. U-1 are group 0, U .. 2U-1 group 1, ...
// Pure functions of the request id, so that a prefix cache can tell which requests share a
// system prompt without a field on every request.
inline std::int64_t shared_prefix_user(const SharedPrefixSpec& spec,
                                       std::int64_t request_id) noexcept {
  return request_id % spec.users();
}
inline std::int64_t shared_prefix_group(const SharedPrefixSpec& spec,
                                        std::int64_t request_id) noexcept {
  return shared_prefix_user(spec, request_id) / spec.users_per_group;
}

// What request i is made of, for a prefix cache: its group's system prompt as one segment
// (id mix_ids(kSharedPrefixContent, group)), then with per-user questions its user's question
// (id mix_ids(kSharedPrefixQuestion, user)); a new question and the output are its own.
inline TokenContent shared_prefix_content(const SharedPrefixSpec& spec, std::int64_t request_id) {
  const auto group = static_cast<std::uint64_t>(shared_prefix_group(spec, request_id));
  TokenContent content{{mix_ids(kSharedPrefixContent, group), spec.system_prompt_tokens}};
  if (spec.questions == QuestionReuse::PerUser) {
    const auto user = static_cast<std::uint64_t>(shared_prefix_user(spec, request_id));
    content.push_back({mix_ids(kSharedPrefixQuestion, user), spec.question_tokens});
  }
  return content;
}

}  // namespace servesim
