// Policies own their parameters: the registries' declarations drive what a run config reads,
// what resolved_config.json holds, which scheduler/allocator pairs run, and `servesim list`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/config_assembly.h"
#include "sim/app/policies.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The keys a policy section must hold: its name and every parameter of the policy and of
// the sub-policies it names, as the registries declare them.
std::set<std::string> declared_keys(const Registry<AllocatorFactory>::Entry& allocator,
                                    const std::string& reservation) {
  std::set<std::string> keys{"name"};
  for (const auto& p : allocator.parameters)
    keys.insert(p.name);
  if (allocator.name == "contiguous") {
    const auto reservations = reservation_registry();
    for (const auto& p : reservations.find(reservation, "test").parameters)
      keys.insert(p.name);
  }
  return keys;
}

std::set<std::string> keys_of(const nlohmann::json& section) {
  std::set<std::string> keys;
  for (const auto& [key, value] : section.items())
    keys.insert(key);
  return keys;
}

nlohmann::json assemble(const std::string& file_text, const std::vector<std::string>& sets) {
  const test::ScratchDir dir("assemble");
  ConfigSources sources;
  sources.config_file = dir.write("c.json", file_text);
  for (const auto& set : sets)
    sources.overrides.push_back({"--set", set});
  return assemble_config(sources, test::source_dir());
}

RunConfig read_config(const nlohmann::json& document) {
  return run_config_from_json(document, "configuration", policy_menus());
}

}  // namespace

TEST_CASE("each scheduler accepts exactly today's allocators", "[app][policies]") {
  using Table = std::vector<std::pair<std::string, std::vector<std::string>>>;
  CHECK(allocators_by_scheduler() == Table{{"vllm", {"paged"}},
                                           {"orca", {"contiguous", "paged"}},
                                           {"static", {"paged", "contiguous"}},
                                           {"sarathi", {"paged", "contiguous"}},
                                           {"vllm_v1", {"paged"}},
                                           {"sglang", {"paged"}}});
  const auto allocators = allocator_registry();
  for (const auto& [scheduler, accepted] : allocators_by_scheduler()) {
    for (const auto& allocator : allocators.entries()) {
      const bool valid =
          std::find(accepted.begin(), accepted.end(), allocator.name) != accepted.end();
      INFO(scheduler << ":" << allocator.name);
      if (valid) {
        CHECK_NOTHROW(check_policy_pair(scheduler, allocator.name));
      } else {
        CHECK_THROWS_WITH(check_policy_pair(scheduler, allocator.name),
                          Contains("does not work with allocator") &&
                              Contains("(valid pairs: vllm:paged, orca:contiguous, orca:paged, "
                                       "static:paged, static:contiguous, sarathi:paged, "
                                       "sarathi:contiguous, vllm_v1:paged, sglang:paged)"));
      }
    }
    for (const auto& allocator : accepted)
      CHECK_NOTHROW(allocators.find(allocator, "test"));
  }
  CHECK_THROWS_AS(check_policy_pair("vllm", "contiguous"), InputError);
}

TEST_CASE("resolved_config.json holds the chosen policies' keys and reads back as the same run",
          "[app][policies]") {
  const test::ScratchDir dir("policy_round_trip");
  const auto allocators = allocator_registry();
  const auto schedulers = scheduler_registry();
  const auto reservations = reservation_registry();
  const auto placements = placement_registry();
  std::vector<std::vector<std::string>> runs;
  for (const auto& [scheduler, accepted] : allocators_by_scheduler()) {
    for (const auto& allocator : accepted) {
      if (allocator == "paged") {
        runs.push_back({"--scheduler", scheduler, "--allocator", allocator, "--block-size", "32"});
        continue;
      }
      for (const auto& reservation : reservations.entries()) {
        for (const auto& placement : placements.entries()) {
          runs.push_back({"--scheduler", scheduler, "--allocator", allocator, "--reservation",
                          reservation.name, "--placement", placement.name});
        }
      }
    }
  }
  runs.push_back({"--scheduler", "vllm", "--preemption", "swap", "--kv-capacity-tokens", "4000"});
  runs.push_back({"--scheduler", "static", "--batch-size", "3", "--allocator", "contiguous",
                  "--reservation", "fixed", "--set", "allocator.fixed_reservation_tokens=1024"});
  runs.push_back({"--scheduler", "sarathi", "--token-budget", "256", "--max-num-seqs", "16"});
  int index = 0;
  for (const auto& flags : runs) {
    std::string label;
    for (const auto& flag : flags)
      label += flag + " ";
    DYNAMIC_SECTION(label) {
      const auto first = dir.path() / ("run" + std::to_string(index) + "a");
      const auto second = dir.path() / ("run" + std::to_string(index) + "b");
      std::vector<std::string> args{"run", "--num-requests", "40", "--rate", "20"};
      args.insert(args.end(), flags.begin(), flags.end());
      args.insert(args.end(), {"--out", first.string()});
      const auto r = test::run_servesim(args);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto resolved = nlohmann::json::parse(read_file(first / "resolved_config.json"));
      const auto& scheduler = schedulers.find(resolved["scheduler"]["name"].get<std::string>(), "");
      std::set<std::string> scheduler_keys{"name"};
      for (const auto& p : scheduler.parameters)
        scheduler_keys.insert(p.name);
      CHECK(keys_of(resolved["scheduler"]) == scheduler_keys);
      const auto& allocator = allocators.find(resolved["allocator"]["name"].get<std::string>(), "");
      CHECK(keys_of(resolved["allocator"]) ==
            declared_keys(allocator, resolved["allocator"].value("reservation", "")));
      CHECK(resolved["cost_model"] == nlohmann::json{{"name", "roofline"}});

      const auto back = test::run_servesim(
          {"run", "--config", (first / "resolved_config.json").string(), "--out", second.string()});
      INFO(back.err);
      REQUIRE(back.exit_code == 0);
      for (const char* file :
           {"summary.json", "requests.csv", "iterations.csv", "resolved_config.json"}) {
        INFO(file);
        CHECK(read_file(first / file) == read_file(second / file));
      }
    }
    ++index;
  }
}

TEST_CASE("switching a policy drops the replaced policy's keys, never a key an override set",
          "[app][policies]") {
  const std::string contiguous_file = R"({
    "scheduler": {"name": "orca", "max_num_seqs": 8},
    "allocator": {"name": "contiguous", "reservation": "fixed", "fixed_reservation_tokens": 64,
                  "placement": "first_fit"}})";
  const auto paged = assemble(contiguous_file, {"allocator.name=paged"});
  // The engine's block size fills the paged allocator's key nobody set.
  CHECK(paged["allocator"] == nlohmann::json{{"name", "paged"}, {"block_size", 16}});
  CHECK(paged["scheduler"]["max_num_seqs"] == 8);  // orca still reads it
  CHECK(read_config(paged).allocator.parameters.integer("block_size") == 16);

  // Only the sub-policy changes: the fixed reservation's size goes, placement stays.
  const auto pow2 = assemble(contiguous_file, {"allocator.reservation=pow2"});
  CHECK(pow2["allocator"] == nlohmann::json{{"name", "contiguous"},
                                            {"reservation", "pow2"},
                                            {"placement", "first_fit"}});

  // The scheduler switches to one that does not read max_num_seqs.
  const auto stat = assemble(contiguous_file, {"scheduler.name=static"});
  CHECK(stat["scheduler"] == nlohmann::json{{"name", "static"}});

  // A key an override set is kept whatever the order, and refused by name.
  for (const auto& sets :
       {std::vector<std::string>{"allocator.name=paged", "allocator.placement=buddy"},
        std::vector<std::string>{"allocator.placement=buddy", "allocator.name=paged"}}) {
    const auto refused = assemble(contiguous_file, sets);
    CHECK(refused["allocator"]["placement"] == "buddy");
    REQUIRE_THROWS_WITH(read_config(refused), Contains("field \"allocator.placement\"") &&
                                                  Contains("allocator \"paged\""));
  }

  // A key the file's own policy does not read is not the switch's to drop.
  const auto stray = assemble(R"({"allocator": {"name": "paged", "bogus": 1}})",
                              {"allocator.name=contiguous", "scheduler.name=orca"});
  REQUIRE_THROWS_WITH(read_config(stray), Contains("\"allocator.bogus\": unknown key"));
  // Nor one the new policy reads too.
  const auto shared = assemble(R"({"allocator": {"name": "paged", "reservation": "pow2"}})",
                               {"allocator.name=contiguous", "scheduler.name=orca"});
  CHECK(read_config(shared).allocator.parameters.text("reservation") == "pow2");
  // Without a switch, the file's keys are checked as written.
  REQUIRE_THROWS_WITH(
      read_config(assemble(R"({"allocator": {"name": "paged", "reservation": "max"}})", {})),
      Contains("field \"allocator.reservation\"") && Contains("allocator \"paged\""));
}

TEST_CASE("an allocator nobody names is the scheduler's default: orca reserves max-length regions",
          "[app][policies]") {
  CHECK(default_allocator("orca") == "contiguous");
  CHECK(default_allocator("vllm") == "paged");
  CHECK(default_allocator("vllm_v1") == "paged");
  CHECK(default_allocator("static") == "paged");
  CHECK(default_allocator("sarathi") == "paged");
  CHECK(default_allocator("no_such_scheduler") == "paged");

  // Named by a flag or --set (as --scheduler orca sets scheduler.name) or by the file.
  const auto orca = read_config(assemble("{}", {"scheduler.name=orca"}));
  CHECK(orca.allocator.name == "contiguous");
  CHECK(orca.allocator.parameters.text("reservation") == "max");
  CHECK(orca.allocator.parameters.text("placement") == "buddy");
  CHECK(read_config(assemble(R"({"scheduler": {"name": "orca"}})", {})).allocator.name ==
        "contiguous");
  // The final scheduler decides: a file's orca switched to vllm by a flag runs paged.
  CHECK(read_config(assemble(R"({"scheduler": {"name": "orca"}})", {"scheduler.name=vllm"}))
            .allocator.name == "paged");
  CHECK(read_config(assemble("{}", {})).allocator.name == "paged");
  CHECK(read_config(assemble("{}", {"scheduler.name=static"})).allocator.name == "paged");
  // A named allocator stays, orca:paged included (docs/configuration.md allows the pair).
  CHECK(
      read_config(assemble("{}", {"scheduler.name=orca", "allocator.name=paged"})).allocator.name ==
      "paged");
  CHECK(read_config(
            assemble(R"({"scheduler": {"name": "orca"}, "allocator": {"name": "paged"}})", {}))
            .allocator.name == "paged");
  // A reservation alone picks Orca's baseline; a paged key without a name is refused by name.
  CHECK(read_config(assemble("{}", {"scheduler.name=orca", "allocator.reservation=pow2"}))
            .allocator.parameters.text("reservation") == "pow2");
  REQUIRE_THROWS_WITH(
      read_config(
          assemble(R"({"scheduler": {"name": "orca"}, "allocator": {"block_size": 32}})", {})),
      Contains("field \"allocator.block_size\": allocator \"contiguous\"") &&
          Contains("block_size is read by allocator \"paged\""));

  // As `servesim run --scheduler orca` resolves it.
  const test::ScratchDir dir("orca_default_allocator");
  const auto out = dir.path() / "out";
  const auto r = test::run_servesim(
      {"run", "--scheduler", "orca", "--num-requests", "20", "--no-plots", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto resolved = nlohmann::json::parse(read_file(out / "resolved_config.json"));
  CHECK(resolved["allocator"] ==
        nlohmann::json{{"name", "contiguous"}, {"reservation", "max"}, {"placement", "buddy"}});
  // Max-length reservations hold memory the requests never fill.
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  CHECK(summary["kv_memory"]["reserved"].get<double>() +
            summary["kv_memory"]["internal_fragmentation"].get<double>() >
        0);
}

TEST_CASE("the shipped vLLM-paper scenario reads as it is and under each contiguous pair",
          "[app][policies]") {
  const auto scenario =
      read_file(test::source_dir() / "workloads" / "scenarios" / "vllm-paper-opt13b.json");
  CHECK_NOTHROW(read_config(assemble(scenario, {})));
  for (const char* scheduler : {"orca", "static", "sarathi"}) {
    INFO(scheduler);
    CHECK_NOTHROW(read_config(assemble(
        scenario, {std::string("scheduler.name=") + scheduler, "allocator.name=contiguous"})));
  }
}

TEST_CASE("the KV capacity planner plans 256 sequences for a scheduler without max_num_seqs",
          "[app][policies]") {
  const test::ScratchDir dir("planned_sequences");
  int runs = 0;
  const auto capacity = [&](const std::vector<std::string>& flags) {
    const auto out = dir.path() / std::to_string(runs++);
    std::vector<std::string> args{"run", "--num-requests", "2", "--out", out.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = test::run_servesim(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::istringstream iterations(read_file(out / "iterations.csv"));
    std::string header, first, cell;
    std::getline(iterations, header);
    std::getline(iterations, first);
    std::istringstream cells(first);
    for (int column = 0; column <= 8; ++column)  // kv_capacity_tokens
      std::getline(cells, cell, ',');
    return std::stoll(cell);
  };
  const auto vllm_256 = capacity({"--scheduler", "vllm", "--max-num-seqs", "256"});
  CHECK(capacity({"--scheduler", "static"}) == vllm_256);
  // vllm's start-up profile runs one pass of the scheduler's token budget: the same 8,192
  // tokens here (sarathi's own budget is smaller).
  CHECK(capacity({"--scheduler", "sarathi", "--max-num-seqs", "256", "--token-budget", "8192"}) ==
        vllm_256);
  // The planner does read max_num_seqs where the scheduler has it.
  CHECK(capacity({"--scheduler", "orca", "--max-num-seqs", "2048"}) < vllm_256);
  CHECK(capacity({}) < vllm_256);  // the default engine's vllm_v1 runs 1024
}

TEST_CASE("servesim list prints every registered policy with its parameters and defaults",
          "[app][policies]") {
  const auto r = test::run_servesim({"list"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string word; words >> word;)
      row.push_back(word);
    rows.push_back(row);
  }
  // A row that starts with these cells.
  const auto has_row = [&](const std::vector<std::string>& start) {
    return std::any_of(rows.begin(), rows.end(), [&](const std::vector<std::string>& row) {
      return row.size() >= start.size() && std::equal(start.begin(), start.end(), row.begin());
    });
  };
  const auto check_registry = [&](const auto& registry, const std::string& section) {
    for (const auto& entry : registry.entries()) {
      INFO(registry.kind() << " " << entry.name);
      CHECK(has_row({entry.name}));
      for (const auto& p : entry.parameters) {
        INFO(p.name);
        CHECK(
            has_row({entry.name, section + "." + p.name, format_parameter_value(p.default_value)}));
      }
    }
  };
  check_registry(scheduler_registry(), "scheduler");
  check_registry(allocator_registry(), "allocator");
  check_registry(reservation_registry(), "allocator");
  check_registry(placement_registry(), "allocator");
  check_registry(cost_model_registry(), "cost_model");
  check_registry(router_registry(), "router");
  // Spot checks against the literal defaults, so a changed default is noticed.
  CHECK(has_row({"vllm", "scheduler.max_num_seqs", "256"}));
  CHECK(has_row({"static", "scheduler.batch_size", "8"}));
  CHECK(has_row({"sarathi", "scheduler.token_budget", "512"}));
  CHECK(has_row({"vllm_v1", "scheduler.max_num_batched_tokens", "8192"}));
  CHECK(has_row({"vllm_v1", "scheduler.max_num_seqs", "1024"}));
  CHECK(has_row({"paged", "allocator.watermark", "0.01"}));
  CHECK(has_row({"fixed", "allocator.fixed_reservation_tokens", "2048"}));
  CHECK(has_row({"contiguous", "allocator.reservation", "max"}));
  CHECK(has_row({"orca", "contiguous,", "paged"}));  // the allocators it accepts
  CHECK(has_row({"roofline"}));
}
