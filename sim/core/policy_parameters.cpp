#include "sim/core/policy_parameters.h"

#include <charconv>

#include "sim/core/error.h"
#include "sim/core/suggest.h"

namespace servesim {

ParameterSpec ParameterSpec::positive_integer(std::string name, std::int64_t default_value,
                                              std::string help) {
  return {std::move(name), ParameterType::PositiveInteger, default_value, std::move(help), {}, {}};
}

ParameterSpec ParameterSpec::nonnegative_integer(std::string name, std::int64_t default_value,
                                                 std::string help) {
  return {
      std::move(name), ParameterType::NonNegativeInteger, default_value, std::move(help), {}, {}};
}

ParameterSpec ParameterSpec::unit_fraction(std::string name, double default_value,
                                           std::string help) {
  return {std::move(name), ParameterType::UnitFraction, default_value, std::move(help), {}, {}};
}

ParameterSpec ParameterSpec::choice(std::string name, std::vector<std::string> choices,
                                    std::string default_value, std::string help) {
  return {std::move(name), ParameterType::Choice, std::move(default_value),
          std::move(help), std::move(choices),    {}};
}

ParameterSpec ParameterSpec::policy(std::string name, std::shared_ptr<const PolicyMenu> policies,
                                    std::string default_value, std::string help) {
  return {std::move(name),    ParameterType::Policy, std::move(default_value), std::move(help), {},
          std::move(policies)};
}

std::string format_parameter_value(const ParameterValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, std::get<double>(value)).ptr;
  return std::string(buffer, end);
}

void throw_unknown_policy(const std::string& kind, std::string_view name,
                          const std::string& valid_names, const std::string& where) {
  const std::string hint = did_you_mean(name, split_name_list(valid_names));
  throw InputError(where, "unknown " + kind + " \"" + std::string(name) + "\" (valid: " +
                              valid_names + ")" + (hint.empty() ? "" : "; " + hint));
}

const PolicyMenu::Item& PolicyMenu::find(std::string_view name, const std::string& where) const {
  for (const auto& item : items) {
    if (item.name == name) return item;
  }
  throw_unknown_policy(kind, name, names(), where);
}

std::string PolicyMenu::names() const {
  std::string list;
  for (const auto& item : items)
    list += (list.empty() ? "" : ", ") + item.name;
  return list;
}

void PolicyParameters::set(std::string name, ParameterValue value) {
  for (auto& [key, existing] : values_) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  values_.emplace_back(std::move(name), std::move(value));
}

bool PolicyParameters::has(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return true;
  }
  return false;
}

const ParameterValue& PolicyParameters::value(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return value;
  }
  throw InvariantError("policy parameter \"" + std::string(name) + "\" was not declared");
}

std::int64_t PolicyParameters::integer(std::string_view name) const {
  const auto* integer = std::get_if<std::int64_t>(&value(name));
  if (integer == nullptr) {
    throw InvariantError("policy parameter \"" + std::string(name) + "\" is not an integer");
  }
  return *integer;
}

double PolicyParameters::number(std::string_view name) const {
  const auto* number = std::get_if<double>(&value(name));
  if (number == nullptr) {
    throw InvariantError("policy parameter \"" + std::string(name) + "\" is not a number");
  }
  return *number;
}

const std::string& PolicyParameters::text(std::string_view name) const {
  const auto* text = std::get_if<std::string>(&value(name));
  if (text == nullptr) {
    throw InvariantError("policy parameter \"" + std::string(name) + "\" is not text");
  }
  return *text;
}

}  // namespace servesim
