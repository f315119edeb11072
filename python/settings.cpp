#include "python/settings.h"

#include <vector>

#include "python/conversions.h"
#include "sim/config/catalog.h"
#include "sim/core/error.h"

namespace servesim::python {
namespace {

std::string flag_name(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

// A run flag's name for a keyword, if it is one. "config" is the call's own argument, and a
// dict is never a flag's value (workload={...} is the configuration key).
std::optional<std::string> run_flag(const std::string& name, const nlohmann::json& value) {
  if (name.find('.') != std::string::npos || value.is_object()) return std::nullopt;
  const std::string flag = flag_name(name);
  if (flag == "config" || !is_run_setting(flag)) return std::nullopt;
  return flag;
}

}  // namespace

ConfigSources config_sources(const py::object& config, const py::dict& settings) {
  std::vector<RunSetting> flags;
  std::vector<ConfigOverride> keys;
  for (const auto& [key, item] : settings) {
    const std::string name = key.cast<std::string>();
    nlohmann::json value = to_json(item, name);
    if (const auto flag = run_flag(name, value)) {
      flags.push_back({*flag, std::move(value)});
    } else {
      keys.push_back({name, name + "=" + value.dump()});
    }
  }
  ConfigSources sources = run_config_sources(flags, SettingNames::Keywords);
  for (auto& o : keys)
    sources.overrides.push_back(std::move(o));
  if (config.is_none()) return sources;
  if (py::isinstance<py::dict>(config)) {
    sources.config_document = to_json(config, "config");
  } else if (py::isinstance<py::str>(config) || py::hasattr(config, "__fspath__")) {
    sources.config_file =
        py::str(py::module_::import("os").attr("fspath")(config)).cast<std::string>();
  } else {
    throw UsageError("config: expected a dict, a path or None, got " +
                     py::repr(config).cast<std::string>());
  }
  return sources;
}

AxisOverrides python_axis_overrides() {
  return [](const std::string& name, const nlohmann::json& value) {
    if (name.find('.') == std::string::npos && name != "policy") {
      const std::string flag = flag_name(name);
      if (config_key_for_flag(flag)) return axis_overrides(flag, value);
    }
    return axis_overrides(name, value);
  };
}

std::filesystem::path data_root() {
  const py::object file = py::module_::import("servesim").attr("__file__");
  const py::object environment =
      py::module_::import("os").attr("environ").attr("get")("SERVESIM_DATA_DIR", "");
  const std::string directory = environment.cast<std::string>();
  return locate_data_root(directory.c_str(), file.cast<std::string>());
}

}  // namespace servesim::python
