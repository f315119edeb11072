#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "sim/core/error.h"
#include "sim/workload/impl/filtered_lengths.h"
#include "sim/workload/impl/shared_prefix_lengths.h"
#include "sim/workload/shared_prefix.h"
#include "sim/workload/token_content.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::string shared_prefix_spec(const std::string& lengths_extra = "",
                               const std::string& keys = R"("groups": 3, "users_per_group": 2,
    "system_prompt_tokens": 100, "question_tokens": 466, "output_tokens": 247)") {
  return R"({"arrival": {"process": "constant", "rate_per_s": 5}, "num_requests": 60,
      "lengths": {"distribution": "shared_prefix", )" +
         keys + lengths_extra + "}}";
}

}  // namespace

TEST_CASE("shared_prefix: every prompt is a system prompt plus a question", "[workload]") {
  const auto requests = test::generate(test::spec_from_text(shared_prefix_spec()));
  REQUIRE(requests.size() == 60);
  for (const auto& r : requests) {
    CHECK(r.prompt_tokens == 566);
    CHECK(r.output_tokens == 247);
  }
}

TEST_CASE("shared_prefix: users take turns round robin and groups hold U users each",
          "[workload]") {
  const SharedPrefixSpec spec = test::spec_from_text(shared_prefix_spec()).lengths.shared_prefix;
  CHECK(spec.users() == 6);
  const std::int64_t users[] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0};
  const std::int64_t groups[] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 0};
  for (std::int64_t i = 0; i < 13; ++i) {
    INFO("request " << i);
    CHECK(shared_prefix_user(spec, i) == users[i]);
    CHECK(shared_prefix_group(spec, i) == groups[i]);
  }
  // Over whole rounds every group gets the same share: 11 groups x 4 users, 3,000 requests
  // (the codegen stage at 5 req/s for 600 s) give 68 rounds of 44 and 8 requests more.
  const SharedPrefixSpec codegen{11, 4, 100, 466, 247};
  std::map<std::int64_t, std::int64_t> per_group;
  for (std::int64_t i = 0; i < 3000; ++i)
    ++per_group[shared_prefix_group(codegen, i)];
  REQUIRE(per_group.size() == 11);
  CHECK(per_group[0] == 68 * 4 + 4);
  CHECK(per_group[1] == 68 * 4 + 4);
  CHECK(per_group[2] == 68 * 4);
  CHECK(per_group[10] == 68 * 4);
}

TEST_CASE("shared_prefix: a spec round-trips through workload_spec_to_json", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(shared_prefix_spec());
  const nlohmann::json written = workload_spec_to_json(spec);
  CHECK(written["lengths"] == nlohmann::json::parse(R"({"distribution": "shared_prefix",
      "groups": 3, "users_per_group": 2, "system_prompt_tokens": 100, "question_tokens": 466,
      "output_tokens": 247, "questions": "per_request"})"));
  CHECK(parse_workload_spec(written, "test.json", "/") == spec);
  const WorkloadSpec per_user =
      test::spec_from_text(shared_prefix_spec(R"(, "questions": "per_user")"));
  CHECK(per_user.lengths.shared_prefix.questions == QuestionReuse::PerUser);
  CHECK(workload_spec_to_json(per_user)["lengths"]["questions"] == "per_user");
  CHECK(parse_workload_spec(workload_spec_to_json(per_user), "test.json", "/") == per_user);
}

TEST_CASE("shared_prefix: bad keys are refused naming the key", "[workload]") {
  const auto fails_with = [](const std::string& text, const std::string& expected) {
    INFO(text);
    CHECK_THROWS_WITH(test::spec_from_text(text), Contains("test.json") && Contains(expected));
  };
  const char* const keys[] = {"groups", "users_per_group", "system_prompt_tokens",
                              "question_tokens", "output_tokens"};
  for (const char* missing : keys) {
    std::string present;
    for (const char* key : keys) {
      if (std::string(key) != missing) {
        present += (present.empty() ? "" : ", ") + std::string("\"") + key + "\": 4";
      }
    }
    fails_with(shared_prefix_spec("", present),
               "\"lengths." + std::string(missing) + "\": required but missing");
    fails_with(shared_prefix_spec("", present + ", \"" + missing + "\": 0"),
               "\"lengths." + std::string(missing) + "\"");
    fails_with(shared_prefix_spec("", present + ", \"" + missing + "\": 2.5"),
               "\"lengths." + std::string(missing) + "\"");
  }
  fails_with(shared_prefix_spec(R"(, "groupz": 2)"), "\"lengths.groupz\": unknown key");
  fails_with(shared_prefix_spec(R"(, "questions": "per_group")"),
             "\"lengths.questions\": unknown value \"per_group\"; valid values are per_request, "
             "per_user");
  fails_with(shared_prefix_spec(R"(, "max_total_tokens": 2048)"),
             "\"lengths.max_total_tokens\": not used with distribution \"shared_prefix\"");
  fails_with(shared_prefix_spec(R"(, "prompt": {"distribution": "fixed", "tokens": 3})"),
             "\"lengths.prompt\": not used with distribution \"shared_prefix\"");
  fails_with(shared_prefix_spec("", R"("groups": 4294967296, "users_per_group": 4294967296,
      "system_prompt_tokens": 1, "question_tokens": 1, "output_tokens": 1)"),
             "\"lengths.users_per_group\": groups x users_per_group exceeds");
  // The other distributions refuse the shared-prefix keys by name.
  fails_with(R"({"arrival": {"process": "poisson", "rate_per_s": 1}, "num_requests": 5,
      "lengths": {"distribution": "independent", "groups": 2,
                  "prompt": {"distribution": "fixed", "tokens": 3},
                  "output": {"distribution": "fixed", "tokens": 3}}})",
             "\"lengths.groups\": not used with distribution \"independent\"");
}

TEST_CASE("shared_prefix: each request's content is its group's system prompt", "[workload]") {
  const WorkloadSpec spec = test::spec_from_text(shared_prefix_spec());
  const auto source = make_workload_source(spec, RngStreams(1));
  std::map<std::int64_t, std::uint64_t> id_of_group;
  std::int64_t seen = 0;
  while (const auto request = source->next()) {
    const auto content = source->last_content();
    REQUIRE(content != nullptr);
    REQUIRE(content->size() == 1);
    CHECK(content->front().tokens == 100);  // the question and the output are its own
    const std::int64_t group = shared_prefix_group(spec.lengths.shared_prefix, request->id);
    CHECK(*content == shared_prefix_content(spec.lengths.shared_prefix, request->id));
    const auto [it, fresh] = id_of_group.try_emplace(group, content->front().id);
    CHECK(it->second == content->front().id);
    ++seen;
  }
  CHECK(seen == 60);
  REQUIRE(id_of_group.size() == 3);
  CHECK(id_of_group[0] != id_of_group[1]);
  CHECK(id_of_group[1] != id_of_group[2]);
  CHECK(id_of_group[0] == mix_ids(kSharedPrefixContent, 0));
}

TEST_CASE("shared_prefix: the content passes through a lengths filter", "[workload]") {
  const SharedPrefixSpec spec{3, 2, 100, 466, 247};
  FilteredLengths filtered(std::make_unique<SharedPrefixLengths>(spec), 1000, std::nullopt, "x");
  Rng rng(1);
  CHECK(filtered.last_content() == nullptr);
  for (std::int64_t i = 0; i < 8; ++i) {
    CHECK(filtered.sample(rng) == LengthPair{566, 247});
    REQUIRE(filtered.last_content() != nullptr);
    CHECK(*filtered.last_content() == shared_prefix_content(spec, i));
  }
}

TEST_CASE("shared_prefix: per-user questions repeat each user's whole prompt", "[workload]") {
  // 3 groups x 2 users: request i is user i mod 6, so requests 0 and 6 send the same prompt
  // (system prompt and question), 0 and 1 share only the system prompt, 0 and 2 nothing.
  const WorkloadSpec spec =
      test::spec_from_text(shared_prefix_spec(R"(, "questions": "per_user")"));
  const auto source = make_workload_source(spec, RngStreams(1));
  std::vector<TokenContent> contents;
  while (const auto request = source->next()) {
    CHECK(request->prompt_tokens == 566);
    contents.push_back(*source->last_content());
  }
  REQUIRE(contents.size() == 60);
  for (std::size_t i = 0; i < contents.size(); ++i) {
    INFO("request " << i);
    REQUIRE(contents[i].size() == 2);
    CHECK(contents[i][0] == ContentSegment{mix_ids(kSharedPrefixContent, i % 6 / 2), 100});
    CHECK(contents[i][1] == ContentSegment{mix_ids(kSharedPrefixQuestion, i % 6), 466});
    CHECK(contents[i] == contents[i % 6]);
  }
  CHECK(contents[0][0] == contents[1][0]);
  CHECK(contents[0][1] != contents[1][1]);
  CHECK(contents[0][0] != contents[2][0]);
  // Every full block of a repeated prompt names the same block: 566 tokens are 35 blocks of 16.
  CHECK(block_hashes(contents[0], 16) == block_hashes(contents[6], 16));
  CHECK(block_hashes(contents[0], 16).size() == 35);
  const auto first = block_hashes(contents[0], 16);
  const auto second_user = block_hashes(contents[1], 16);
  CHECK(std::equal(first.begin(), first.begin() + 6, second_user.begin()));  // 100 tokens: 6 blocks
  CHECK(first[6] != second_user[6]);
}
