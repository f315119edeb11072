#include "python/settings.h"

#include <algorithm>
#include <vector>

#include "python/conversions.h"
#include "sim/config/catalog.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/core/suggest.h"

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

// The keywords a run takes: its flags' names with underscores, and the configuration's
// top-level keys.
std::vector<std::string> run_keywords() {
  std::vector<std::string> names;
  const auto add = [&](std::string flag) {
    for (char& c : flag) {
      if (c == '-') c = '_';
    }
    if (std::find(names.begin(), names.end(), flag) == names.end()) names.push_back(flag);
  };
  for (const RunFlag& f : run_flags())
    add(f.flag);
  for (const VllmFlag& f : vllm_flags())
    add(f.flag);
  for (const OtherSetting& o : other_settings())
    add(o.name);
  const nlohmann::json defaults = run_config_to_json(RunConfig{});
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    add(it.key());
  return names;
}

// A keyword that is neither a flag nor a configuration key ("rat"): a usage error naming the
// nearest ones, before anything runs.
void check_keyword(const std::string& name) {
  if (name.find('.') != std::string::npos || name == "config") return;
  static const std::vector<std::string> known = run_keywords();
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  const std::string hint = did_you_mean(name, known);
  throw UsageError("unknown keyword \"" + name + "\"" + (hint.empty() ? "" : ": " + hint) +
                   " (a run flag's name with underscores, or a configuration key)");
}

}  // namespace

ConfigSources config_sources(const py::object& config, const py::dict& settings) {
  std::vector<RunSetting> flags;
  std::vector<ConfigOverride> keys;
  for (const auto& [key, item] : settings) {
    const std::string name = key.cast<std::string>();
    check_keyword(name);
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
  const py::module_ os = py::module_::import("os");
  const std::string directory =
      os.attr("environ").attr("get")("SERVESIM_DATA_DIR", "").cast<std::string>();
  if (directory.empty()) {
    // `pip install .` puts the data in <prefix>/share/servesim of the environment it installs
    // the module into (setup.py's data_files); a module built in a checkout is not under it.
    const std::filesystem::path module = file.cast<std::string>();
    const std::filesystem::path prefix =
        py::module_::import("sys").attr("prefix").cast<std::string>();
    const auto installed = prefix / "share" / "servesim";
    std::error_code ec;
    const auto relative = std::filesystem::relative(module, prefix, ec);
    const bool inside = !ec && !relative.empty() && *relative.begin() != "..";
    if (inside && std::filesystem::is_directory(installed / "models", ec)) return installed;
  }
  return locate_data_root(directory.c_str(), file.cast<std::string>());
}

}  // namespace servesim::python
