#include "sim/study/plot_title.h"

#include <algorithm>
#include <filesystem>

#include "sim/config/run_config.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

// A name given as a path is shown by its file name ("traces/azure.csv" -> "azure.csv"), a
// Hugging Face config.json by its folder's ("models/opt-13b/config.json" -> "opt-13b").
std::string short_name(const std::string& name) {
  if (name.find('/') == std::string::npos) return name;
  const std::filesystem::path path(name);
  if (path.filename() == "config.json" && path.has_parent_path()) {
    return path.parent_path().filename().string();
  }
  return path.filename().string();
}

std::string workload_name_of(const nlohmann::json& workload) {
  if (workload.is_string()) return short_name(workload.get<std::string>());
  if (workload.is_object() && workload.contains("preset") && workload["preset"].is_string()) {
    return short_name(workload["preset"].get<std::string>());
  }
  return "custom";
}

// The workload as the user named it; the assembled document holds the expanded preset only.
std::string workload_name(const ConfigSources& sources) {
  std::string name = "sharegpt";  // assemble_config's default
  std::optional<nlohmann::json> file = sources.config_document;
  if (!file && sources.config_file) file = read_json_file(*sources.config_file);
  if (file && file->is_object() && file->contains("workload")) {
    name = workload_name_of((*file)["workload"]);
  }
  for (const auto& o : sources.overrides) {
    if (o.assignment.rfind("workload=", 0) != 0) continue;
    // The value is JSON ("\"alpaca\"" from --workload), or a bare word from --set.
    const std::string value = o.assignment.substr(9);
    const auto parsed = parse_json_if_json(value, o.origin);
    name = parsed ? workload_name_of(*parsed) : short_name(value);
  }
  return name;
}

std::string text_at(const nlohmann::json& document, const char* key, const std::string& fallback) {
  if (document.contains(key) && document[key].is_string()) {
    return short_name(document[key].get<std::string>());
  }
  return fallback;
}

}  // namespace

std::string plot_title(const nlohmann::json& document, const ConfigSources& sources,
                       const std::vector<std::string>& varied_axes) {
  const auto varied = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* name) {
      return std::find(varied_axes.begin(), varied_axes.end(), name) != varied_axes.end();
    });
  };
  const RunConfig defaults;
  std::vector<std::string> parts;
  if (!varied({"model"})) parts.push_back("model " + text_at(document, "model", defaults.model));
  const bool tp_fixed = !varied({"tp", "tensor-parallel-size", "tensor_parallel_size"}) &&
                        document.contains("tp") && document["tp"].is_number_integer();
  const std::string tp = tp_fixed ? "TP " + std::to_string(document["tp"].get<int>()) : "";
  if (!varied({"hw", "hardware"})) {
    std::string hardware = "hardware " + text_at(document, "hardware", defaults.hardware);
    if (tp_fixed) hardware += " (" + tp + ")";
    parts.push_back(hardware);
  } else if (tp_fixed) {
    parts.push_back(tp);  // the hardware is an axis; the TP every point runs at is not
  }
  if (!varied({"engine", "engine.name"})) {
    std::string engine = defaults.engine.name;
    if (document.contains("engine")) {
      const auto& section = document["engine"];
      if (section.is_string()) engine = short_name(section.get<std::string>());
      if (section.is_object()) engine = text_at(section, "name", engine);
    }
    parts.push_back("engine " + engine);
  }
  if (!varied({"workload"})) parts.push_back("workload " + workload_name(sources));
  std::string title;
  for (const auto& part : parts)
    title += (title.empty() ? "" : ", ") + part;
  return title;
}

}  // namespace servesim
