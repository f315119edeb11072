#include "python/capacity_layouts.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "python/capacity_support.h"
#include "python/conversions.h"
#include "python/settings.h"
#include "python/study_support.h"
#include "sim/core/error.h"
#include "sim/study/layout_study.h"
#include "sim/study/summary_columns.h"

namespace servesim::python {

py::dict search_layouts(const ConfigSources& base, const SloTarget& slo,
                        const CapacityOptions& options) {
  LayoutSearchTerms terms;
  terms.rate_per_s = target_rate(options);
  if (options.minimize != "gpus" && options.minimize != "cost") {
    throw UsageError("minimize: expected \"gpus\" or \"cost\", got \"" + options.minimize + "\"");
  }
  terms.minimize = options.minimize;
  terms.by_cost = options.minimize == "cost";
  terms.max_replicas = options.max_replicas;
  terms.gpu_cost_per_hour = options.gpu_cost_per_hour;
  terms.shapes = shapes_of(options);
  const std::filesystem::path root = data_root();
  const auto executor = executor_for(options.jobs);
  std::optional<LayoutStudy> answer;
  {
    const py::gil_scoped_release release;
    const nlohmann::json config = study_point_config(base, {}, root, "capacity");
    (void)configured_rate(config, "set arrival=\"poisson\"", "start_rate");
    if (config.contains("disaggregation") && !config["disaggregation"].is_null()) {
      throw UsageError(
          "disaggregated: the search lays the roles out from shapes; drop the disaggregation "
          "section and settings");
    }
    default_shape(terms.shapes, config);
    CapacitySearch search = python_search(base, slo, *executor, root);
    answer.emplace(search_layout_study(search, terms, false));
  }

  // Every deployment: its answer, prices and latencies, or why there is none.
  py::list kind, deployment, replicas, gpus, usd_per_hour, usd_per_million_tokens, ttft_p99,
      tpot_p99, per_gpu, per_user, note;
  for (const LayoutDeployment& d : answer->deployments) {
    const bool has = d.summary != nullptr;
    kind.append(d.kind);
    deployment.append(d.label);
    replicas.append(has ? py::object(py::str(d.counts)) : py::object(py::none()));
    gpus.append(has ? py::object(py::int_(d.gpus)) : py::object(py::none()));
    usd_per_hour.append(
        number_or_none(d.prices.has_value(), d.prices ? d.prices->usd_per_hour : 0));
    usd_per_million_tokens.append(
        number_or_none(d.prices.has_value(), d.prices ? d.prices->usd_per_million_tokens : 0));
    ttft_p99.append(number_or_none(has, has ? summary_value(*d.summary, "ttft_s.p99") : 0));
    tpot_p99.append(number_or_none(has, has ? summary_value(*d.summary, "tpot_s.p99") : 0));
    per_gpu.append(number_or_none(has, d.output_per_gpu));
    per_user.append(number_or_none(has, d.output_per_user));
    note.append(d.note.empty() ? py::object(py::none()) : py::object(py::str(d.note)));
  }
  // The Pareto front of the points meeting the SLO.
  py::list front_deployment, front_replicas, front_gpus, front_per_gpu, front_per_user, front_ttft,
      front_tpot;
  for (const LayoutFrontPoint& f : answer->front.points) {
    front_deployment.append(f.point->label);
    front_replicas.append(f.point->counts);
    front_gpus.append(f.point->gpus);
    front_per_gpu.append(f.output_per_gpu);
    front_per_user.append(f.output_per_user);
    front_ttft.append(summary_value(*f.point->summary, "ttft_s.p99"));
    front_tpot.append(summary_value(*f.point->summary, "tpot_s.p99"));
  }
  // Every point simulated, in order.
  py::list point_deployment, point_replicas, point_gpus, met, violations;
  std::vector<const nlohmann::json*> summaries;
  for (const SearchedPoint& e : answer->evaluated) {
    point_deployment.append(e.label);
    point_replicas.append(e.counts);
    point_gpus.append(e.gpus);
    met.append(e.verdict->met);
    violations.append(violations_joined(*e.verdict));
    summaries.push_back(e.summary);
  }

  py::dict document;
  document["mode"] = "layouts";
  document["slo"] = slo_texts(slo);
  document["target_rate_per_s"] = terms.rate_per_s;
  document["max_replicas"] = terms.max_replicas;
  document["minimize"] = terms.minimize;
  document["deployments"] = named_frame({{"kind", kind},
                                         {"deployment", deployment},
                                         {"replicas", replicas},
                                         {"gpus", gpus},
                                         {"usd_per_hour", usd_per_hour},
                                         {"usd_per_million_tokens", usd_per_million_tokens},
                                         {"ttft_p99_s", ttft_p99},
                                         {"tpot_p99_s", tpot_p99},
                                         {"output_tokens_per_s_per_gpu", per_gpu},
                                         {"output_tokens_per_s_per_user", per_user},
                                         {"note", note}});
  document["best"] = to_python(answer->document["best"]);
  document["front"] = named_frame({{"deployment", front_deployment},
                                   {"replicas", front_replicas},
                                   {"gpus", front_gpus},
                                   {"output_tokens_per_s_per_gpu", front_per_gpu},
                                   {"output_tokens_per_s_per_user", front_per_user},
                                   {"ttft_p99_s", front_ttft},
                                   {"tpot_p99_s", front_tpot}});
  document["points"] = points_frame({{"deployment", point_deployment},
                                     {"replicas", point_replicas},
                                     {"gpus", point_gpus},
                                     {"met", met},
                                     {"violations", violations}},
                                    summaries);
  return document;
}

}  // namespace servesim::python
