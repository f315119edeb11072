#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"

namespace servesim {

// Named built-ins of one extension point (schedulers, allocators, routers): a name, a
// one-line description and a factory. Unknown names fail listing the valid ones.
template <typename Factory>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  Registry& add(std::string name, std::string description, Factory factory) {
    entries_.push_back({std::move(name), std::move(description), std::move(factory)});
    return *this;
  }

  // `where` names the config key or flag the name came from.
  const Entry& find(std::string_view name, const std::string& where) const {
    for (const auto& entry : entries_) {
      if (entry.name == name) return entry;
    }
    throw InputError(
        where, "unknown " + kind_ + " \"" + std::string(name) + "\" (valid: " + names() + ")");
  }

  std::string names() const {
    std::string list;
    for (const auto& entry : entries_)
      list += (list.empty() ? "" : ", ") + entry.name;
    return list;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace servesim
