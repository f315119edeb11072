#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "sim/config/catalog.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"
#include "tests/workload/session_test_support.h"

using namespace servesim;

namespace {

struct PresetTarget {
  const char* name;
  double prompt_mean;
  double output_mean;
  double rate_per_s;
  double arrival_cv;  // of the inter-arrival gaps: sets how closely 2,000 gaps pin the rate
};

// The means each preset's "source" states (after its clipping and filters), and its arrivals.
constexpr PresetTarget kPresets[] = {
    {"sharegpt", 161.31, 337.99, 1.0, 1.0},
    {"alpaca", 19.31, 58.45, 1.0, 1.0},
    {"orca-uniform", 272.0, 64.5, 1.0, 1.0},
    {"azure-conv-2023", 1155.0, 200.0, 5.53, 1.09},
    {"azure-code-2023", 1980.0, 28.5, 2.57, 13.0},
    {"arxiv-summarization", 2534.0, 291.43, 1.0, 1.0},
};

// The shared-prefix presets of inference-perf's loads (the vLLM 0.15.1 measurements): their
// lengths and stages as the source profiles configure them.
struct SharedPrefixTarget {
  const char* name;
  const char* workload;  // the `workload` column of the measured file
  SharedPrefixSpec lengths;
  std::vector<ArrivalStage> stages;
};

// inference-perf asks each user's own question in every round.
constexpr QuestionReuse kPerUser = QuestionReuse::PerUser;

const std::vector<SharedPrefixTarget>& shared_prefix_presets() {
  static const std::vector<SharedPrefixTarget> presets{
      {"inference-perf-codegen",
       "codegen",
       {11, 4, 100, 466, 247, kPerUser},
       {{5, 600}, {10, 600}}},
      {"inference-perf-general", "general", {9, 5, 100, 447, 248, kPerUser}, {{8, 600}, {20, 600}}},
      {"inference-perf-roleplay", "roleplay", {10, 5, 150, 600, 251, kPerUser}, {{6, 1200}}},
      {"inference-perf-reasoning", "reasoning", {23, 1, 100, 934, 1448, kPerUser}, {{4, 1200}}},
  };
  return presets;
}

// The session presets (multi_turn, agentic): closed loop within a session.
constexpr const char* kSessionPresets[] = {"agentic-coding", "multi-turn-chat"};

WorkloadSpec preset(const std::string& name) {
  return load_workload_file(test::source_dir() / "workloads" / (name + ".json"));
}

}  // namespace

TEST_CASE("the shipped presets are exactly the documented ones", "[workload]") {
  const Catalog catalog(test::source_dir() / "workloads", "workload preset", "--workload");
  std::vector<std::string> expected;
  for (const auto& p : kPresets)
    expected.emplace_back(p.name);
  for (const auto& p : shared_prefix_presets())
    expected.emplace_back(p.name);
  for (const char* name : kSessionPresets)
    expected.emplace_back(name);
  std::sort(expected.begin(), expected.end());
  CHECK(catalog.names() == expected);
}

TEST_CASE("every preset parses, cites a source and meets its stated means", "[workload]") {
  for (const auto& target : kPresets) {
    INFO(target.name);
    WorkloadSpec spec = preset(target.name);
    CHECK(spec.description.size() > 40);
    CHECK(spec.source.size() > 80);
    CHECK(spec.num_requests == 1000);
    CHECK(parse_workload_spec(workload_spec_to_json(spec), spec.source_name, "/") == spec);

    spec.num_requests = 2000;
    const auto requests = test::generate(spec, 2024);
    REQUIRE(requests.size() == 2000);
    std::vector<double> prompts;
    std::vector<double> outputs;
    for (const auto& r : requests) {
      prompts.push_back(static_cast<double>(r.prompt_tokens));
      outputs.push_back(static_cast<double>(r.output_tokens));
    }
    const auto prompt = test::stats_of(prompts);
    const auto output = test::stats_of(outputs);
    INFO("prompt mean " << prompt.mean << ", output mean " << output.mean);
    CHECK(prompt.mean == Approx(target.prompt_mean).epsilon(0.10));
    CHECK(output.mean == Approx(target.output_mean).epsilon(0.10));
    const double span_s = requests.back().arrival.seconds();
    // Four standard errors of the mean gap; the code trace's CV of 13 leaves 2,000 gaps too
    // few to pin its rate, which the burstiness test below checks with more.
    const double tolerance = 4 * target.arrival_cv / std::sqrt(1999.0);
    if (tolerance < 0.5) CHECK(1999 / span_s == Approx(target.rate_per_s).epsilon(tolerance));
  }
}

TEST_CASE("the session presets parse, cite a source and meet their stated means", "[workload]") {
  for (const char* name : kSessionPresets) {
    INFO(name);
    WorkloadSpec spec = preset(name);
    CHECK(spec.description.size() > 40);
    CHECK(spec.source.size() > 80);
    CHECK(spec.num_requests == 1000);
    CHECK(parse_workload_spec(workload_spec_to_json(spec), spec.source_name, "/") == spec);
  }
  // Multi-turn chat: LMSYS-Chat-1M's 2.0 turns, 69.5 prompt and 214.5 response tokens.
  WorkloadSpec chat = preset("multi-turn-chat");
  chat.num_requests = 20000;
  const auto source = make_workload_source(chat, RngStreams(2024));
  const auto served = test::serve(*source, SimTime::from_seconds(5));
  REQUIRE(served.size() == 20000);
  std::vector<double> outputs;
  std::vector<double> new_tokens;
  std::int64_t first_turns = 0;
  for (const auto& s : served) {
    outputs.push_back(static_cast<double>(s.request.output_tokens));
    new_tokens.push_back(static_cast<double>(s.content[s.content.size() - 2].tokens));
    first_turns += s.content.size() == 2 ? 1 : 0;
  }
  CHECK(test::stats_of(outputs).mean == Approx(214.5).epsilon(0.10));
  CHECK(test::stats_of(new_tokens).mean == Approx(69.5).epsilon(0.10));
  CHECK(20000.0 / static_cast<double>(first_turns) == Approx(2.0).epsilon(0.10));
}

TEST_CASE("sharegpt lengths obey the vLLM benchmark filter", "[workload]") {
  WorkloadSpec spec = preset("sharegpt");
  spec.num_requests = 20000;
  double prompt_sum = 0;
  double output_sum = 0;
  for (const auto& r : test::generate(spec, 5)) {
    REQUIRE(r.prompt_tokens >= 4);
    REQUIRE(r.output_tokens >= 4);
    REQUIRE(r.prompt_tokens <= 1024);
    REQUIRE(r.prompt_tokens + r.output_tokens <= 2048);
    prompt_sum += static_cast<double>(r.prompt_tokens);
    output_sum += static_cast<double>(r.output_tokens);
  }
  CHECK(prompt_sum / 20000 == Approx(161.31).epsilon(0.05));
  CHECK(output_sum / 20000 == Approx(337.99).epsilon(0.05));
}

TEST_CASE("orca-uniform lengths are uniform on the published ranges", "[workload]") {
  WorkloadSpec spec = preset("orca-uniform");
  spec.num_requests = 20000;
  double prompt_sum = 0;
  double output_sum = 0;
  for (const auto& r : test::generate(spec, 5)) {
    REQUIRE((r.prompt_tokens >= 32 && r.prompt_tokens <= 512));
    REQUIRE((r.output_tokens >= 1 && r.output_tokens <= 128));
    prompt_sum += static_cast<double>(r.prompt_tokens);
    output_sum += static_cast<double>(r.output_tokens);
  }
  CHECK(prompt_sum / 20000 == Approx(272).epsilon(0.02));
  CHECK(output_sum / 20000 == Approx(64.5).epsilon(0.02));
}

TEST_CASE("the Azure code preset is as bursty as the trace", "[workload]") {
  WorkloadSpec spec = preset("azure-code-2023");
  spec.num_requests = 20000;
  const auto gaps = test::stats_of(test::gaps_s(test::generate(spec, 5)));
  CHECK(gaps.cv > 6);  // the trace's 13; a sample CV of so heavy a tail converges slowly
  CHECK(gaps.mean == Approx(1 / 2.57).epsilon(0.35));
}

TEST_CASE("the shared-prefix presets send rate x duration requests per stage", "[workload]") {
  for (const auto& target : shared_prefix_presets()) {
    INFO(target.name);
    const WorkloadSpec spec = preset(target.name);
    CHECK(spec.description.size() > 40);
    CHECK(spec.source.size() > 80);
    CHECK(spec.arrival.process == ArrivalProcessKind::Constant);
    CHECK(spec.arrival.stages == target.stages);
    CHECK(spec.lengths.distribution == LengthsKind::SharedPrefix);
    CHECK(spec.lengths.shared_prefix == target.lengths);
    CHECK_FALSE(spec.num_requests);
    CHECK(parse_workload_spec(workload_spec_to_json(spec), spec.source_name, "/") == spec);

    const auto requests = test::generate(spec);
    const auto windows = stage_windows(spec.arrival.stages);
    std::vector<std::int64_t> counts(windows.size(), 0);
    for (const auto& r : requests) {
      ++counts[stage_of(windows, r.arrival).value()];
      REQUIRE(r.prompt_tokens == target.lengths.prompt_tokens());
      REQUIRE(r.output_tokens == target.lengths.output_tokens);
    }
    for (std::size_t k = 0; k < windows.size(); ++k) {
      CHECK(counts[k] ==
            static_cast<std::int64_t>(target.stages[k].rate_per_s * target.stages[k].duration_s));
    }
  }
}

TEST_CASE("the shared-prefix presets match the measured runs' setups", "[workload]") {
  const auto shared_path = test::shared_data_path("measured/vllm-0.15.1-h100-sxm.csv");
  if (!shared_path) return;
  const std::filesystem::path path = *shared_path;
  std::istringstream lines(test::read_file(path));
  std::string line;
  std::getline(lines, line);
  const auto split = [](const std::string& text) {
    std::vector<std::string> fields;
    std::istringstream in(text);
    std::string field;
    while (std::getline(in, field, ','))
      fields.push_back(field);
    return fields;
  };
  const std::vector<std::string> header = split(line);
  const auto column = [&header](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
  };
  int rows = 0;
  while (std::getline(lines, line)) {
    const auto f = split(line);
    INFO(line);
    const auto target = std::find_if(
        shared_prefix_presets().begin(), shared_prefix_presets().end(),
        [&](const SharedPrefixTarget& t) { return f[column("workload")] == t.workload; });
    REQUIRE(target != shared_prefix_presets().end());
    const SharedPrefixSpec& l = preset(target->name).lengths.shared_prefix;
    CHECK(std::stoll(f[column("groups")]) == l.groups);
    CHECK(std::stoll(f[column("users_per_group")]) == l.users_per_group);
    CHECK(std::stoll(f[column("system_prompt_tokens")]) == l.system_prompt_tokens);
    CHECK(std::stoll(f[column("question_tokens")]) == l.question_tokens);
    CHECK(std::stoll(f[column("output_tokens_requested")]) == l.output_tokens);
    const ArrivalStage& stage = target->stages.at(std::stoul(f[column("stage")]));
    CHECK(std::stod(f[column("rate_per_s")]) == stage.rate_per_s);
    CHECK(std::stod(f[column("stage_duration_s")]) == stage.duration_s);
    // The load generator sent rate x duration requests in the stage, as the preset does.
    CHECK(std::stod(f[column("requests_sent")]) == stage.rate_per_s * stage.duration_s);
    ++rows;
  }
  CHECK(rows == 24);
}

TEST_CASE("the rate, num-requests and duration flags are refused on a staged workload",
          "[workload]") {
  const std::vector<std::string> base{"run", "--workload", "inference-perf-roleplay"};
  const auto with = [&base](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return test::run_servesim(extra);
  };
  const auto rate = with({"--rate", "4"});
  test::require_error(rate, 3, "\"arrival.rate_per_s\": not used with arrival.stages");
  CHECK_THAT(rate.err, Catch::Matchers::Contains("--rate"));
  test::require_error(with({"--num-requests", "10"}), 3,
                      "\"num_requests\": not used with arrival.stages");
  test::require_error(with({"--duration", "60"}), 3,
                      "\"duration_s\": not used with arrival.stages");
}
