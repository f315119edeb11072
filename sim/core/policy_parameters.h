#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace servesim {

// The parameters a policy declares in its registry entry (as ramulator2's components read
// their own parameters and SimGrid declares a flag where it is used): the config reader reads
// exactly these, with their defaults, and refuses any other key in the policy's section.

enum class ParameterType {
  PositiveInteger,     // an integer >= 1
  NonNegativeInteger,  // an integer >= 0
  UnitFraction,        // a number in [0, 1)
  Choice,              // one of `choices`
  Policy,              // the name of a policy of another registry, whose parameters join these
};

using ParameterValue = std::variant<std::int64_t, double, std::string>;

struct PolicyMenu;

struct ParameterSpec {
  std::string name;  // the key in the policy's config section
  ParameterType type = ParameterType::PositiveInteger;
  ParameterValue default_value;
  std::string help;                            // one line, with the unit
  std::vector<std::string> choices;            // Choice: the accepted values
  std::shared_ptr<const PolicyMenu> policies;  // Policy: the registry it names an entry of

  static ParameterSpec positive_integer(std::string name, std::int64_t default_value,
                                        std::string help);
  static ParameterSpec nonnegative_integer(std::string name, std::int64_t default_value,
                                           std::string help);
  static ParameterSpec unit_fraction(std::string name, double default_value, std::string help);
  static ParameterSpec choice(std::string name, std::vector<std::string> choices,
                              std::string default_value, std::string help);
  static ParameterSpec policy(std::string name, std::shared_ptr<const PolicyMenu> policies,
                              std::string default_value, std::string help);
};

// The default as it is written in configs and `servesim list`: 256, 0.01, max.
std::string format_parameter_value(const ParameterValue& value);

// The entries of one registry without their factories: what a config reader needs to check a
// policy section, and what `servesim list` prints.
struct PolicyMenu {
  struct Item {
    std::string name;
    std::string description;
    std::vector<ParameterSpec> parameters;
  };
  std::string kind;  // "scheduler", "reservation policy"
  std::vector<Item> items;

  // `where` names the config key the name came from; unknown names fail listing valid ones.
  const Item& find(std::string_view name, const std::string& where) const;
  std::string names() const;
};

// The InputError for a name no entry has: "unknown KIND "NAME" (valid: NAMES)".
[[noreturn]] void throw_unknown_policy(const std::string& kind, std::string_view name,
                                       const std::string& valid_names, const std::string& where);

// The values of one policy's parameters, and of the policies it names, every default filled
// in by the config reader. Factories read them by name; reading a name the policy did not
// declare (or as another type) is a bug and throws InvariantError.
class PolicyParameters {
 public:
  void set(std::string name, ParameterValue value);
  bool has(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;
  double number(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  // In the order the config reader set them: the policy's own, then its sub-policies'.
  const std::vector<std::pair<std::string, ParameterValue>>& values() const { return values_; }

  bool operator==(const PolicyParameters&) const = default;

 private:
  const ParameterValue& value(std::string_view name) const;

  std::vector<std::pair<std::string, ParameterValue>> values_;
};

// A policy chosen by name, with its parameters.
struct PolicyChoice {
  std::string name;
  PolicyParameters parameters;

  bool operator==(const PolicyChoice&) const = default;
};

}  // namespace servesim
