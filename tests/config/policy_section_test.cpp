#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>

#include "sim/config/policy_section.h"
#include "sim/core/error.h"
#include "sim/core/registry.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A toy extension point: "fast" reads a budget, "careful" a mode and a sub-policy whose
// entry "sized" reads a size.
struct Menus {
  std::shared_ptr<const PolicyMenu> subs;
  std::shared_ptr<const PolicyMenu> policies;
};

Menus toy_menus() {
  Registry<int> subs("sub policy");
  subs.add("plain", "nothing", 0)
      .add("sized", "a size", {ParameterSpec::positive_integer("size_tokens", 64, "tokens")}, 0);
  Registry<int> policies("widget");
  policies
      .add("fast", "fast",
           {ParameterSpec::positive_integer("budget_tokens", 512, "tokens per step"),
            ParameterSpec::unit_fraction("slack", 0.25, "share kept free"),
            ParameterSpec::nonnegative_integer("limit_tokens", 0, "tokens at most; 0: none")},
           0)
      .add("careful", "careful",
           {ParameterSpec::choice("mode", {"a", "b", "c"}, "a", "how"),
            ParameterSpec::policy("sub", subs.menu(), "plain", "which sub policy")},
           0);
  return {subs.menu(), policies.menu()};
}

PolicyChoice read(const nlohmann::json& section) {
  JsonObjectReader reader(section, "c.json", "widget");
  return read_policy_section(reader, *toy_menus().policies, "fast");
}

}  // namespace

TEST_CASE("a policy section reads the chosen policy's parameters with their defaults", "[config]") {
  const PolicyChoice fast = read(nlohmann::json::object());
  CHECK(fast.name == "fast");
  CHECK(fast.parameters.integer("budget_tokens") == 512);
  CHECK(fast.parameters.number("slack") == 0.25);
  CHECK(fast.parameters.integer("limit_tokens") == 0);
  CHECK(read({{"limit_tokens", 0}}).parameters.integer("limit_tokens") == 0);
  CHECK(read({{"limit_tokens", 7}}).parameters.integer("limit_tokens") == 7);
  REQUIRE_THROWS_WITH(read({{"limit_tokens", -1}}), Contains("expected a non-negative integer"));
  REQUIRE_THROWS_WITH(read({{"budget_tokens", 0}}), Contains("budget_tokens"));
  CHECK_FALSE(fast.parameters.has("mode"));
  REQUIRE_THROWS_AS(fast.parameters.text("mode"), InvariantError);
  REQUIRE_THROWS_AS(fast.parameters.text("budget_tokens"), InvariantError);

  const PolicyChoice careful = read({{"name", "careful"}, {"sub", "sized"}, {"size_tokens", 8}});
  CHECK(careful.parameters.text("mode") == "a");
  CHECK(careful.parameters.text("sub") == "sized");
  CHECK(careful.parameters.integer("size_tokens") == 8);
  // Written back with every default filled in, and read back the same.
  const nlohmann::json written = policy_section_to_json(careful);
  CHECK(written ==
        nlohmann::json{{"name", "careful"}, {"mode", "a"}, {"sub", "sized"}, {"size_tokens", 8}});
  CHECK(read(written) == careful);
}

TEST_CASE("a policy section refuses keys its policy does not read, naming who reads them",
          "[config]") {
  REQUIRE_THROWS_WITH(read({{"name", "fast"}, {"mode", "b"}}),
                      Contains("c.json") && Contains("field \"widget.mode\"") &&
                          Contains("widget \"fast\" does not read this key") &&
                          Contains("it reads name, budget_tokens, slack") &&
                          Contains("mode is read by widget \"careful\""));
  // A sub-policy's key with another sub-policy chosen.
  REQUIRE_THROWS_WITH(read({{"name", "careful"}, {"size_tokens", 8}}),
                      Contains("widget \"careful\" (sub \"plain\")") &&
                          Contains("reads name, mode, sub;") &&
                          Contains("size_tokens is read by sub \"sized\""));
  REQUIRE_THROWS_WITH(read({{"budget_tokenz", 8}}),
                      Contains("\"widget.budget_tokenz\": unknown key") &&
                          Contains("widget \"fast\" reads name, budget_tokens, slack"));
  REQUIRE_THROWS_WITH(read({{"name", "slow"}}), Contains("widget.name") &&
                                                    Contains("unknown widget \"slow\"") &&
                                                    Contains("valid: fast, careful"));
  REQUIRE_THROWS_WITH(read({{"name", "careful"}, {"sub", "big"}}),
                      Contains("widget.sub") && Contains("unknown sub policy \"big\"") &&
                          Contains("valid: plain, sized"));
  REQUIRE_THROWS_WITH(read({{"name", "careful"}, {"mode", "d"}}),
                      Contains("widget.mode") && Contains("expected a, b or c, got \"d\""));
  REQUIRE_THROWS_WITH(read({{"budget_tokens", 0}}),
                      Contains("widget.budget_tokens") && Contains("positive integer"));
  REQUIRE_THROWS_WITH(read({{"slack", 1.0}}),
                      Contains("widget.slack") && Contains("fraction in [0, 1)"));
  REQUIRE_THROWS_WITH(read({{"name", "careful"}, {"sub", 3}}), Contains("expected a string"));
}

TEST_CASE("the keys a section's policy reads follow its sub-policies", "[config]") {
  const auto menu = toy_menus().policies;
  using Keys = std::set<std::string>;
  CHECK(policy_section_keys(nlohmann::json::object(), *menu, "fast") ==
        Keys{"name", "budget_tokens", "slack", "limit_tokens"});
  CHECK(policy_section_keys({{"name", "careful"}}, *menu, "fast") == Keys{"name", "mode", "sub"});
  CHECK(policy_section_keys({{"name", "careful"}, {"sub", "sized"}}, *menu, "fast") ==
        Keys{"name", "mode", "sub", "size_tokens"});
  CHECK_FALSE(policy_section_keys({{"name", "slow"}}, *menu, "fast"));
  CHECK_FALSE(policy_section_keys({{"name", "careful"}, {"sub", "big"}}, *menu, "fast"));
  CHECK_FALSE(policy_section_keys({{"name", 5}}, *menu, "fast"));
  CHECK_FALSE(policy_section_keys(nlohmann::json(5), *menu, "fast"));
}

TEST_CASE("parameter defaults print as configs write them", "[config]") {
  CHECK(format_parameter_value(std::int64_t{2048}) == "2048");
  CHECK(format_parameter_value(0.01) == "0.01");
  CHECK(format_parameter_value(std::string("max")) == "max");
}
