#include <catch2/catch.hpp>

#include "sim/app/policies.h"
#include "sim/config/overrides.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("set overrides create paths and read values as JSON or text", "[config]") {
  nlohmann::json doc = {{"tp", 1}, {"workload", {{"arrival", {{"process", "poisson"}}}}}};
  apply_override(doc, "tp=4", "--set");
  apply_override(doc, "workload.arrival.rate_per_s=2.5", "--set");
  apply_override(doc, "workload.arrival.process=gamma", "--set");
  apply_override(doc, "slo.ttft_s=0.5", "--set");
  apply_override(doc, "router=\"least_kv\"", "--set");
  apply_override(doc, "workload.arrival.rate_per_s2=inf", "--set");
  CHECK(doc["tp"] == 4);
  CHECK(doc["workload"]["arrival"]["rate_per_s"] == 2.5);
  CHECK(doc["workload"]["arrival"]["process"] == "gamma");
  CHECK(doc["slo"]["ttft_s"] == 0.5);
  CHECK(doc["router"] == "least_kv");
  CHECK(doc["workload"]["arrival"]["rate_per_s2"] == "inf");
  REQUIRE_THROWS_WITH(apply_override(doc, "tp", "--set"), Contains("expected KEY=VALUE"));
  REQUIRE_THROWS_WITH(apply_override(doc, "tp.x=1", "--set"), Contains("\"tp\" is not an object"));
  REQUIRE_THROWS_WITH(apply_override(doc, "a..b=1", "--set"), Contains("malformed key path"));
}

TEST_CASE("deep merge replaces leaves and merges objects", "[config]") {
  nlohmann::json base = {{"a", 1}, {"b", {{"c", 2}, {"d", 3}}}};
  deep_merge(base, {{"b", {{"c", 20}}}, {"e", 5}});
  CHECK(base == nlohmann::json({{"a", 1}, {"b", {{"c", 20}, {"d", 3}}}, {"e", 5}}));
}

TEST_CASE("run configs are strict and round-trip", "[config]") {
  const PolicyMenus menus = policy_menus();
  const auto run_config_from_json = [&](const nlohmann::json& document, const std::string& source) {
    return servesim::run_config_from_json(document, source, menus);
  };
  nlohmann::json doc = run_config_to_json(RunConfig{});
  doc["workload"] = nlohmann::json::object();
  // The defaults name the policies only; reading fills in their parameters.
  CHECK(doc["scheduler"] == nlohmann::json{{"name", "vllm_v1"}});
  const RunConfig parsed = run_config_from_json(doc, "c.json");
  CHECK(parsed.scheduler.parameters.integer("max_num_seqs") == 1024);
  doc = run_config_to_json(parsed);
  CHECK(run_config_to_json(run_config_from_json(doc, "c.json")) == doc);
  doc["replicass"] = 2;
  REQUIRE_THROWS_WITH(run_config_from_json(doc, "c.json"),
                      Contains("c.json") && Contains("\"replicass\": unknown key"));
  doc.erase("replicass");
  doc["replicas"] = 0;
  REQUIRE_THROWS_WITH(run_config_from_json(doc, "c.json"), Contains("\"replicas\""));
  doc["replicas"] = "two";
  REQUIRE_THROWS_WITH(run_config_from_json(doc, "c.json"), Contains("expected a number"));
  doc["replicas"] = 1;
  doc["scheduler"]["max_num_seqs"] = -1;
  REQUIRE_THROWS_WITH(run_config_from_json(doc, "c.json"), Contains("scheduler.max_num_seqs"));
  doc["scheduler"]["max_num_seqs"] = 8;
  doc["memory"]["mem_util"] = 1.5;
  REQUIRE_THROWS_WITH(run_config_from_json(doc, "c.json"), Contains("memory.mem_util"));
}
