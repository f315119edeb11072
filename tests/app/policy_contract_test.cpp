// Contract tests generated from the registries: every registered scheduler with every
// allocator it accepts, each in every setting its choice parameters and sub-policies allow
// (vllm's preemption modes, the contiguous allocator's reservations and placements, and any
// registered tomorrow), serves a small workload under KV memory pressure and must
//   - end with every arrived request finished or rejected, every runtime invariant holding
//     (a broken one throws InvariantError, so running at all is part of the contract),
//   - keep every iteration's KV memory within capacity, its categories summing to it,
//   - be deterministic (the same config twice: byte-identical summary.json, requests.csv and
//     iterations.csv), and give the same bytes with bulk decoding on and off,
// at pipeline depths 1 and 2 and for several seeds.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/policies.h"
#include "sim/app/simulation.h"
#include "sim/config/run_config.h"
#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/summary_json.h"
#include "tests/support/test_support.h"

using namespace servesim;
using nlohmann::json;

namespace {

// Every combination of the settings `parameters` offer a choice of: each value of a Choice
// parameter, each policy a Policy parameter names (with the combinations of that policy's
// own parameters, which join the same section). Numbers keep their defaults. One empty
// setting when there is nothing to choose.
std::vector<json> settings_of(const std::vector<ParameterSpec>& parameters) {
  std::vector<json> settings{json::object()};
  for (const ParameterSpec& parameter : parameters) {
    std::vector<json> values;
    if (parameter.type == ParameterType::Choice) {
      for (const std::string& choice : parameter.choices)
        values.push_back({{parameter.name, choice}});
    } else if (parameter.type == ParameterType::Policy) {
      for (const PolicyMenu::Item& policy : parameter.policies->items) {
        for (json value : settings_of(policy.parameters)) {
          value[parameter.name] = policy.name;
          values.push_back(std::move(value));
        }
      }
    } else {
      continue;
    }
    std::vector<json> combined;
    for (const json& setting : settings) {
      for (const json& value : values) {
        json both = setting;
        both.update(value);
        combined.push_back(std::move(both));
      }
    }
    settings = std::move(combined);
  }
  return settings;
}

template <typename Factory>
const std::vector<ParameterSpec>& parameters_of(const Registry<Factory>& registry,
                                                const std::string& name) {
  return registry.find(name, "contract test").parameters;
}

struct Combination {
  std::string scheduler;  // the registry name
  json scheduler_section;
  json allocator_section;
  std::string label() const { return scheduler_section.dump() + " " + allocator_section.dump(); }
};

// Every scheduler, every allocator it accepts, every setting of each, from the registries.
std::vector<Combination> combinations() {
  const auto schedulers = scheduler_registry();
  const auto allocators = allocator_registry();
  std::vector<Combination> list;
  for (const auto& [scheduler, accepted] : allocators_by_scheduler()) {
    for (const std::string& allocator : accepted) {
      for (json scheduler_setting : settings_of(parameters_of(schedulers, scheduler))) {
        scheduler_setting["name"] = scheduler;
        for (json allocator_setting : settings_of(parameters_of(allocators, allocator))) {
          allocator_setting["name"] = allocator;
          list.push_back({scheduler, scheduler_setting, allocator_setting});
        }
      }
    }
  }
  return list;
}

constexpr std::int64_t kRequests = 120;
constexpr std::int64_t kCapacityTokens = 2048;
constexpr std::int64_t kMaxLenTokens = 640;

// A burst of short requests into a KV cache that holds a handful of them: paged allocation
// preempts, reservations queue. About one request in eleven has a prompt of max_len or more
// and is rejected; many more pass max_len with their output and are cut there.
json config_of(const Combination& c, std::uint64_t seed, std::int64_t pp, bool bulk_decode) {
  json config = run_config_to_json(RunConfig{});
  config["seed"] = seed;
  config["pp"] = pp;
  config["replicas"] = 2;
  config["max_len"] = kMaxLenTokens;
  config["memory"]["kv_capacity_tokens"] = kCapacityTokens;
  config["memory"]["swap_space_gib"] = 0.125;  // 1,024 tokens of Llama-3-8B KV per GPU
  config["scheduler"] = c.scheduler_section;
  config["allocator"] = c.allocator_section;
  config["engine"]["bulk_decode"] = bulk_decode;
  config["workload"] = {{"arrival", {{"process", "poisson"}, {"rate_per_s", 40}}},
                        {"lengths",
                         {{"distribution", "independent"},
                          {"prompt", {{"distribution", "uniform"}, {"min", 8}, {"max", 700}}},
                          {"output", {{"distribution", "uniform"}, {"min", 1}, {"max", 160}}}}},
                        {"num_requests", kRequests}};
  return config;
}

// What a run writes, byte for byte, and the counts the test sums over runs.
struct Outputs {
  std::string summary;
  std::string requests;
  std::string iterations;
  std::int64_t preemptions = 0;
  std::uint64_t events = 0;
  std::int64_t rejected = 0;
  std::int64_t cut = 0;
};

// Runs one configuration and checks the per-run contract.
Outputs run_and_check(const json& config, const test::ScratchDir& scratch) {
  const auto outcome =
      run_simulation(config, test::source_dir(), std::filesystem::current_path());  // may throw
  const ClusterRunStats& stats = outcome.stats;
  const RunSummary& summary = outcome.result.summary;
  const MetricsCollector& collector = outcome.result.collector;

  CHECK(stats.arrived == kRequests);
  CHECK(stats.finished + stats.rejected == stats.arrived);
  CHECK(stats.finished > kRequests / 2);
  CHECK(summary.requests_completed == stats.finished);
  CHECK(summary.requests_rejected == stats.rejected);
  CHECK(collector.request_records().size() == static_cast<std::size_t>(stats.arrived));
  // Counted, then checked once per run: a CHECK per record would make this test slow.
  std::int64_t times_out_of_order = 0, cut_not_at_max_len = 0, cut = 0;
  for (const RequestRecord& r : collector.request_records()) {
    if (!r.rejected &&
        !(r.arrival_s <= r.first_scheduled_s && r.first_scheduled_s < r.first_token_s &&
          r.first_token_s <= r.completion_s)) {
      ++times_out_of_order;
    }
    // A request cut at max_len ends with exactly max_len tokens.
    if (r.cut_output_tokens > 0) {
      ++cut;
      if (r.prompt_tokens + r.output_tokens != kMaxLenTokens) ++cut_not_at_max_len;
    }
  }
  CHECK(times_out_of_order == 0);
  CHECK(cut_not_at_max_len == 0);
  CHECK(summary.requests_output_cut == cut);

  REQUIRE_FALSE(collector.iteration_records().empty());
  std::int64_t over_capacity = 0, not_partitioned = 0, most_used = 0;
  for (const IterationRecord& i : collector.iteration_records()) {
    const KvMemoryTokens& m = i.kv_memory;
    const std::int64_t used = m.token_states + m.reserved + m.internal_fragmentation;
    if (i.kv_used_tokens > i.kv_capacity_tokens) ++over_capacity;
    if (i.kv_capacity_tokens != outcome.kv_capacity_tokens_per_replica ||
        i.kv_used_tokens != used ||
        used + m.external_fragmentation + m.free != i.kv_capacity_tokens) {
      ++not_partitioned;
    }
    most_used = std::max(most_used, used + m.external_fragmentation);
  }
  CHECK(over_capacity == 0);
  CHECK(not_partitioned == 0);
  // Under pressure: at some iteration most of the cache was taken.
  CHECK(most_used * 4 >= outcome.kv_capacity_tokens_per_replica * 3);
  const auto& shares = summary.kv_memory;
  CHECK(shares.token_states + shares.reserved + shares.internal_fragmentation +
            shares.external_fragmentation + shares.free ==
        Approx(1.0));

  write_requests_csv(collector, scratch.path() / "requests.csv");
  write_iterations_csv(collector, scratch.path() / "iterations.csv");
  return {summary_to_json(summary).dump(2),
          test::read_file(scratch.path() / "requests.csv"),
          test::read_file(scratch.path() / "iterations.csv"),
          summary.preemptions,
          stats.events,
          stats.rejected,
          cut};
}

// Empty when `a` and `b` are equal, otherwise their first line that differs (a failure
// prints that, not whole files).
std::string first_difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::istringstream in_a(a), in_b(b);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(in_a, line_a));
    const bool more_b = static_cast<bool>(std::getline(in_b, line_b));
    if (more_a != more_b || line_a != line_b || !more_a) {
      return "line " + std::to_string(line) + ": " + (more_a ? line_a : "(end)") + " | " +
             (more_b ? line_b : "(end)");
    }
  }
}

void check_same(const Outputs& a, const Outputs& b) {
  CHECK(first_difference(a.summary, b.summary) == "");
  CHECK(first_difference(a.requests, b.requests) == "");
  CHECK(first_difference(a.iterations, b.iterations) == "");
}

}  // namespace

TEST_CASE("contract: the generated combinations cover every registered policy and setting",
          "[app][contract]") {
  const auto list = combinations();
  REQUIRE_FALSE(list.empty());
  // What the combinations hold: "scheduler:allocator" pairs, and "key=value" settings.
  std::set<std::string> pairs, settings;
  for (const Combination& c : list) {
    pairs.insert(c.scheduler + ":" + c.allocator_section["name"].get<std::string>());
    for (const json* section : {&c.scheduler_section, &c.allocator_section}) {
      for (const auto& [key, value] : section->items())
        settings.insert(key + "=" + value.get<std::string>());
    }
  }
  // Each choice, and each policy a parameter names, of one policy's parameters appears.
  const auto check_settings = [&](const std::vector<ParameterSpec>& parameters) {
    for (const ParameterSpec& parameter : parameters) {
      for (const std::string& choice : parameter.choices)
        CHECK(settings.count(parameter.name + "=" + choice) == 1);
      if (parameter.type != ParameterType::Policy) continue;
      for (const PolicyMenu::Item& policy : parameter.policies->items)
        CHECK(settings.count(parameter.name + "=" + policy.name) == 1);
    }
  };
  const auto schedulers = scheduler_registry();
  const auto allocators = allocator_registry();
  std::set<std::string> accepted;
  for (const auto& scheduler : schedulers.entries()) {
    CHECK(settings.count("name=" + scheduler.name) == 1);
    check_settings(scheduler.parameters);
    for (const std::string& allocator : scheduler.factory.allocators) {
      CHECK(pairs.count(scheduler.name + ":" + allocator) == 1);
      accepted.insert(allocator);
    }
  }
  // Every registered allocator is accepted by some scheduler, so every one is covered.
  for (const auto& allocator : allocators.entries()) {
    CHECK(accepted.count(allocator.name) == 1);
    check_settings(allocator.parameters);
  }
}

TEST_CASE(
    "contract: every scheduler and allocator it accepts serves every request, within "
    "capacity, deterministically, the same with bulk decoding on and off",
    "[app][contract]") {
  const test::ScratchDir scratch("policy_contract");
  std::int64_t preemptions = 0, rejected = 0, cut = 0;
  std::int64_t fewer_events = 0;  // runs that bulk decoding advanced in fewer events
  for (const Combination& c : combinations()) {
    for (const std::uint64_t seed : {1u, 2u}) {
      for (const std::int64_t pp : {1, 2}) {
        INFO(c.label() << " seed " << seed << " pp " << pp);
        const Outputs bulk = run_and_check(config_of(c, seed, pp, true), scratch);
        const Outputs again = run_and_check(config_of(c, seed, pp, true), scratch);
        const Outputs step = run_and_check(config_of(c, seed, pp, false), scratch);
        check_same(bulk, again);
        check_same(bulk, step);
        CHECK(bulk.events <= step.events);
        preemptions += bulk.preemptions;
        rejected += bulk.rejected;
        cut += bulk.cut;
        fewer_events += bulk.events < step.events ? 1 : 0;
      }
    }
  }
  // The workload presses on memory (paged allocation preempts), some requests can never be
  // served, some are cut at max_len, and the fast path ran.
  CHECK(preemptions > 0);
  CHECK(rejected > 0);
  CHECK(cut > 0);
  CHECK(fewer_events > 0);
}
