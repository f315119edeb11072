#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/policy_parameters.h"

namespace servesim {

// Named built-ins of one extension point (schedulers, allocators, routers, ...): a name, a
// one-line description, the parameters the policy reads and a factory that reads them.
// Unknown names fail listing the valid ones.
template <typename Factory>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;
    std::vector<ParameterSpec> parameters;
    Factory factory;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  Registry& add(std::string name, std::string description, Factory factory) {
    return add(std::move(name), std::move(description), {}, std::move(factory));
  }
  Registry& add(std::string name, std::string description, std::vector<ParameterSpec> parameters,
                Factory factory) {
    entries_.push_back(
        {std::move(name), std::move(description), std::move(parameters), std::move(factory)});
    return *this;
  }

  // `where` names the config key or flag the name came from.
  const Entry& find(std::string_view name, const std::string& where) const {
    for (const auto& entry : entries_) {
      if (entry.name == name) return entry;
    }
    throw_unknown_policy(kind_, name, names(), where);
  }

  std::string names() const {
    std::string list;
    for (const auto& entry : entries_)
      list += (list.empty() ? "" : ", ") + entry.name;
    return list;
  }

  // The entries without their factories, for config readers and listings.
  std::shared_ptr<const PolicyMenu> menu() const {
    auto menu = std::make_shared<PolicyMenu>();
    menu->kind = kind_;
    for (const auto& entry : entries_)
      menu->items.push_back({entry.name, entry.description, entry.parameters});
    return menu;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace servesim
