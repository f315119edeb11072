#include "sim/config/policy_section.h"

#include <algorithm>
#include <vector>

namespace servesim {
namespace {

// "a", "a or b", "a, b or c".
std::string alternatives(const std::vector<std::string>& choices) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += i + 1 == choices.size() ? " or " : ", ";
    text += choices[i];
  }
  return text;
}

std::string in_quotes(const std::string& text) {
  return "\"" + text + "\"";
}

// What one section read: its parameters, the keys it reads, and the policy in words
// (`allocator "contiguous" (reservation "pow2", placement "buddy")`).
struct SectionReading {
  PolicyParameters parameters;
  std::vector<std::string> keys{"name"};
  std::vector<std::string> sub_policies;
};

void read_parameters(JsonObjectReader& section, const std::vector<ParameterSpec>& specs,
                     SectionReading& reading) {
  for (const auto& spec : specs) {
    reading.keys.push_back(spec.name);
    switch (spec.type) {
      case ParameterType::PositiveInteger:
        reading.parameters.set(spec.name, section.optional_positive_integer(spec.name).value_or(
                                              std::get<std::int64_t>(spec.default_value)));
        break;
      case ParameterType::NonNegativeInteger:
        reading.parameters.set(spec.name, section.optional_nonnegative_integer(spec.name).value_or(
                                              std::get<std::int64_t>(spec.default_value)));
        break;
      case ParameterType::UnitFraction: {
        const double value =
            section.optional_number(spec.name).value_or(std::get<double>(spec.default_value));
        if (value < 0 || value >= 1) section.fail(spec.name, "expected a fraction in [0, 1)");
        reading.parameters.set(spec.name, value);
        break;
      }
      case ParameterType::Choice: {
        const std::string value =
            section.optional_string(spec.name).value_or(std::get<std::string>(spec.default_value));
        if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
          section.fail(spec.name,
                       "expected " + alternatives(spec.choices) + ", got " + in_quotes(value));
        }
        reading.parameters.set(spec.name, value);
        break;
      }
      case ParameterType::Policy: {
        const std::string value =
            section.optional_string(spec.name).value_or(std::get<std::string>(spec.default_value));
        const auto& item = spec.policies->find(value, section.key_path(spec.name));
        reading.parameters.set(spec.name, value);
        reading.sub_policies.push_back(spec.name + " " + in_quotes(value));
        read_parameters(section, item.parameters, reading);
        break;
      }
    }
  }
}

// Who declares `key` among the menu's policies and their sub-policies, grouped by kind:
// `scheduler "vllm", "orca"; reservation "fixed"`.
void collect_readers(const PolicyMenu& menu, const std::string& label, const std::string& key,
                     std::vector<std::pair<std::string, std::string>>& readers) {
  for (const auto& item : menu.items) {
    for (const auto& spec : item.parameters) {
      const std::pair<std::string, std::string> reader{label, in_quotes(item.name)};
      if (spec.name == key && std::find(readers.begin(), readers.end(), reader) == readers.end()) {
        readers.push_back(reader);
      }
      if (spec.type == ParameterType::Policy)
        collect_readers(*spec.policies, spec.name, key, readers);
    }
  }
}

std::string readers_of(const PolicyMenu& menu, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> readers;
  collect_readers(menu, menu.kind, key, readers);
  std::string text;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    const bool same_kind = i > 0 && readers[i - 1].first == readers[i].first;
    text += same_kind ? ", " + readers[i].second
                      : (i > 0 ? "; " : "") + readers[i].first + " " + readers[i].second;
  }
  return text;
}

void collect_keys(const nlohmann::json& section, const std::vector<ParameterSpec>& specs,
                  std::set<std::string>& keys, bool& known) {
  for (const auto& spec : specs) {
    keys.insert(spec.name);
    if (spec.type != ParameterType::Policy) continue;
    std::string name = std::get<std::string>(spec.default_value);
    if (section.contains(spec.name)) {
      if (!section[spec.name].is_string()) {
        known = false;
        return;
      }
      name = section[spec.name].get<std::string>();
    }
    const auto& items = spec.policies->items;
    const auto item = std::find_if(items.begin(), items.end(),
                                   [&](const PolicyMenu::Item& i) { return i.name == name; });
    if (item == items.end()) {
      known = false;
      return;
    }
    collect_keys(section, item->parameters, keys, known);
  }
}

}  // namespace

PolicyChoice read_policy_section(JsonObjectReader& section, const PolicyMenu& menu,
                                 const std::string& default_name) {
  PolicyChoice choice;
  choice.name = section.optional_string("name").value_or(default_name);
  const auto& item = menu.find(choice.name, section.key_path("name"));
  SectionReading reading;
  read_parameters(section, item.parameters, reading);
  const auto unknown = section.unknown_keys();
  if (!unknown.empty()) {
    std::string policy = menu.kind + " " + in_quotes(choice.name);
    if (!reading.sub_policies.empty()) {
      std::string subs;
      for (const auto& sub : reading.sub_policies)
        subs += (subs.empty() ? "" : ", ") + sub;
      policy += " (" + subs + ")";
    }
    std::string keys;
    for (const auto& key : reading.keys)
      keys += (keys.empty() ? "" : ", ") + key;
    const std::string& key = unknown.front();
    const std::string readers = readers_of(menu, key);
    if (readers.empty()) {
      section.fail(key, "unknown key (" + policy + " reads " + keys + ")");
    }
    section.fail(key, policy + " does not read this key (it reads " + keys + "; " + key +
                          " is read by " + readers + ")");
  }
  choice.parameters = std::move(reading.parameters);
  return choice;
}

nlohmann::json policy_section_to_json(const PolicyChoice& choice) {
  nlohmann::json section = {{"name", choice.name}};
  for (const auto& parameter : choice.parameters.values())
    std::visit([&](const auto& value) { section[parameter.first] = value; }, parameter.second);
  return section;
}

std::optional<std::set<std::string>> policy_section_keys(const nlohmann::json& section,
                                                         const PolicyMenu& menu,
                                                         const std::string& default_name) {
  if (!section.is_object()) return std::nullopt;
  std::string name = default_name;
  if (section.contains("name")) {
    if (!section["name"].is_string()) return std::nullopt;
    name = section["name"].get<std::string>();
  }
  const auto item = std::find_if(menu.items.begin(), menu.items.end(),
                                 [&](const PolicyMenu::Item& i) { return i.name == name; });
  if (item == menu.items.end()) return std::nullopt;
  std::set<std::string> keys{"name"};
  bool known = true;
  collect_keys(section, item->parameters, keys, known);
  if (!known) return std::nullopt;
  return keys;
}

}  // namespace servesim
