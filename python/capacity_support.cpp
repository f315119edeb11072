#include "python/capacity_support.h"

#include <cmath>
#include <string>
#include <vector>

#include "python/conversions.h"
#include "python/study_support.h"
#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"

namespace servesim::python {

py::list slo_texts(const SloTarget& slo) {
  py::list terms;
  for (const auto& term : slo_json(slo))
    terms.append(term.get<std::string>());
  return terms;
}

const std::array<const char*, 4> kBandEdgeKeys{"ttft_band_low", "ttft_band_high", "tpot_band_low",
                                               "tpot_band_high"};

std::vector<std::pair<std::string, py::object>> band_edges(const nlohmann::json* summary) {
  std::vector<std::pair<std::string, py::object>> edges;
  for (std::size_t k = 0; k < kBandEdgeKeys.size(); ++k) {
    const char* metric = k < 2 ? "ttft" : "tpot";
    const char* edge = k % 2 == 0 ? "low" : "high";
    const nlohmann::json::json_pointer path(std::string("/error_bands/") + metric + "/" + edge);
    edges.emplace_back(kBandEdgeKeys[k],
                       summary != nullptr && summary->contains(path)
                           ? py::object(py::float_(summary->at(path).get<double>()))
                           : py::object(py::none()));
  }
  return edges;
}

std::string violations_joined(const SloVerdict& verdict) {
  const std::string text = violations_text(verdict);
  return text == "-" ? "" : text;
}

const std::array<const char*, 6> kPriceKeys{"usd_per_gpu_hour",
                                            "usd_per_hour",
                                            "usd_per_million_input_tokens",
                                            "usd_per_million_output_tokens",
                                            "usd_per_million_tokens",
                                            "usd_per_thousand_requests"};

py::object price_value(const std::optional<ServingPrices>& prices, const char* key) {
  if (!prices) return py::none();
  return py::float_(serving_prices_json(*prices)[key].get<double>());
}

ReplicaShape shape_of(const py::handle& item) {
  const std::string text = py::repr(item).cast<std::string>();
  const auto fail = [&text]() -> ReplicaShape {
    throw UsageError("shapes: " + text +
                     ": expected \"HARDWARE[:TP[:PP]]\" or (HARDWARE, TP[, PP]) with degrees >= 1");
  };
  std::vector<nlohmann::json> parts;
  if (py::isinstance<py::str>(item)) {
    const std::string s = item.cast<std::string>();
    std::size_t start = 0;
    while (true) {
      const std::size_t colon = s.find(':', start);
      const std::string part = s.substr(start, colon - start);
      if (parts.empty()) {
        parts.emplace_back(part);
      } else {
        try {
          std::size_t end = 0;
          const long long value = std::stoll(part, &end);
          if (end != part.size()) return fail();
          parts.emplace_back(value);
        } catch (const std::exception&) {
          return fail();
        }
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  } else {
    parts = values_of(item, "shapes");
  }
  if (parts.empty() || parts.size() > 3 || !parts[0].is_string() ||
      parts[0].get<std::string>().empty()) {
    return fail();
  }
  ReplicaShape shape{parts[0].get<std::string>(), 1, 1, std::nullopt};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].is_number_integer() || parts[i].get<std::int64_t>() < 1) return fail();
    (i == 1 ? shape.tp : shape.pp) = parts[i].get<std::int64_t>();
  }
  return shape;
}

double target_rate(const CapacityOptions& options) {
  const double rate = *options.target_rate_per_s;
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw UsageError("target_rate: expected a positive number of requests/s");
  }
  return rate;
}

std::vector<ReplicaShape> shapes_of(const CapacityOptions& options) {
  std::vector<ReplicaShape> shapes;
  if (!options.shapes.is_none()) {
    if (py::isinstance<py::str>(options.shapes)) {
      shapes.push_back(shape_of(options.shapes));
    } else {
      for (const auto& item : options.shapes)
        shapes.push_back(shape_of(item));
    }
  }
  return shapes;
}

void default_shape(std::vector<ReplicaShape>& shapes, const nlohmann::json& config) {
  if (shapes.empty()) {
    shapes.push_back({config["hardware"].get<std::string>(), config["tp"].get<std::int64_t>(),
                      config["pp"].get<std::int64_t>(), std::nullopt});
  }
}

py::object named_frame(const std::vector<std::pair<const char*, py::list>>& columns) {
  py::dict data;
  py::list names;
  for (const auto& [name, column] : columns) {
    data[name] = column;
    names.append(name);
  }
  return frame(data, names);
}

py::object number_or_none(bool has, double value) {
  return has ? py::object(py::float_(value)) : py::object(py::none());
}

CapacitySearch python_search(const ConfigSources& base, const SloTarget& slo,
                             IPointExecutor& executor, const std::filesystem::path& data_root) {
  return CapacitySearch{base,
                        slo,
                        executor,
                        data_root,
                        std::filesystem::current_path(),
                        nullptr,
                        PointMeasure{true, completions_needed(slo), {}, &slo},
                        nullptr};
}

}  // namespace servesim::python
