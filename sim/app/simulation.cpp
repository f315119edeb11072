#include "sim/app/simulation.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/disaggregated_pools.h"
#include "sim/app/metrics_observer.h"
#include "sim/app/policies.h"
#include "sim/app/replica_memory.h"
#include "sim/app/replica_pool.h"
#include "sim/app/run_error_bands.h"
#include "sim/app/simulation_limits.h"
#include "sim/config/model_catalog.h"
#include "sim/config/run_config.h"
#include "sim/core/error.h"
#include "sim/metrics/impl/background_record_sink.h"
#include "sim/metrics/impl/record_order.h"
#include "sim/model/model_loader.h"
#include "sim/workload/workload_spec.h"

namespace servesim {
namespace {

struct PoolSize {
  std::int64_t replicas = 0;
  std::int64_t gpus_per_replica = 0;
};

// The prefill and decode pools' figures (sizes in replica order: prefill first).
void summarize_pools(DisaggregationSummary& figures, const RunSummary& summary,
                     const MetricsCollector& collector, const std::vector<PoolSize>& sizes,
                     double duration_s) {
  const auto per_s = [&](double value) { return duration_s > 0 ? value / duration_s : 0.0; };
  std::int32_t first = 0;
  std::int64_t gpus = 0;
  for (std::size_t i = 0; i < figures.pools.size(); ++i) {
    PoolSummary& pool = figures.pools[i];
    pool.role = i == 0 ? "prefill" : "decode";
    pool.replicas = sizes[i].replicas;
    pool.gpus = sizes[i].replicas * sizes[i].gpus_per_replica;
    const auto count = static_cast<std::int32_t>(sizes[i].replicas);
    const MetricsCollector::ReplicaRangeUse use = collector.replica_range_use(first, count);
    pool.busy_share = per_s(use.iteration_time_s) / static_cast<double>(pool.replicas);
    pool.mean_queued_requests =
        per_s(i == 0 ? figures.total_s[kPrefillQueue]
                     : figures.total_s[kTransferQueue] + figures.total_s[kDecodeQueue]);
    pool.mean_batch_size = use.mean_batch_size();
    pool.kv_utilization = use.kv_utilization();
    pool.kv_memory = use.kv_memory();
    const double tokens =
        static_cast<double>(i == 0 ? summary.prompt_tokens : summary.output_tokens);
    pool.tokens_per_s_per_gpu = per_s(tokens) / static_cast<double>(pool.gpus);
    first += count;
    gpus += pool.gpus;
  }
  figures.output_tokens_per_s_per_gpu =
      per_s(static_cast<double>(summary.output_tokens)) / static_cast<double>(gpus);
}

// A role's configuration, checked as the top level's is, with messages naming the role.
RunConfig role_config(const nlohmann::json& document, const nlohmann::json& role,
                      const std::string& name) {
  return run_config_from_json(role_document(document, role), "configuration (" + name + ")",
                              policy_menus());
}

}  // namespace

SimulationOutcome run_simulation(const nlohmann::json& config_document,
                                 const std::filesystem::path& data_root,
                                 const std::filesystem::path& working_dir,
                                 const SimulationOptions& options) {
  const RunConfig config = run_config_from_json(config_document, "configuration", policy_menus());
  check_simulation_limits(config);  // before anything is built
  const ModelSpec model = load_catalog_model(data_root, config.model, "model");
  max_len_of(config, model);  // refuses a max_len beyond the model's positions first
  const RngStreams streams(config.seed);

  MetricsOptions metrics;
  metrics.keep_request_records = config.output.request_records && options.keep_records;
  metrics.keep_iteration_records = config.output.iteration_records && options.keep_records;
  metrics.keep_request_timings = options.keep_request_timings;
  metrics.ttft_parts = config.disaggregation.has_value();
  metrics.slo_ttft_s = config.slo.ttft_s;
  metrics.slo_tpot_s = config.slo.tpot_s;
  metrics.slo_e2e_s = config.slo.e2e_s;
  MetricsCollector collector(metrics);
  MetricsObserver observer(collector);

  // A role's pool; what it refuses names the role.
  const auto role_pool = [&](const RunConfig& role, const nlohmann::json& role_json,
                             const std::string& name, std::int32_t first) {
    try {
      return build_replica_pool(role, model, data_root, streams, observer, first);
    } catch (const InfeasibleError& e) {
      if (e.refused_start()) throw InfeasibleError::engine_refuses_start(name + ": " + e.what());
      throw InfeasibleError(name + ": " + e.what());
    } catch (const InputError& e) {
      // The model's sharding names the top level's --tp and --pp; a degree the role sets
      // itself is named by its key and the role's flag (--decode-tp).
      const std::string role_name = name.substr(name.rfind('.') + 1);
      const std::string message = e.what();
      for (const std::string key : {"tp", "pp"}) {
        const std::string top_flag = "--" + key + ": ";
        if (message.rfind(top_flag, 0) == 0 && role_json.contains(key)) {
          const std::string flag = key == "tp" ? " (--" + role_name + "-tp)" : "";
          throw InputError(name + "." + key + flag, message.substr(top_flag.size()));
        }
      }
      throw;
    }
  };
  // One pool, or a prefill pool and a decode pool numbered after it.
  std::vector<ReplicaPool> pools;
  pools.reserve(2);
  if (const auto& roles = config.disaggregation) {
    const RunConfig prefill =
        role_config(config_document, roles->prefill, "disaggregation.prefill");
    const RunConfig decode = role_config(config_document, roles->decode, "disaggregation.decode");
    for (const RunConfig* role : {&prefill, &decode})
      check_simulation_limits(*role);
    if (decode.scheduler.name != "vllm_v1" && decode.scheduler.name != "sarathi" &&
        decode.scheduler.name != "sglang") {
      throw InputError("disaggregation.decode.scheduler",
                       "expected vllm_v1, sarathi or sglang, which take a transferred prompt "
                       "as computed; got " +
                           decode.scheduler.name);
    }
    pools.push_back(role_pool(prefill, roles->prefill, "disaggregation.prefill", 0));
    pools.push_back(role_pool(decode, roles->decode, "disaggregation.decode",
                              static_cast<std::int32_t>(prefill.replicas)));
    if (pools[0].replicas.front()->allocator().prefix_block_tokens() !=
        pools[1].replicas.front()->allocator().prefix_block_tokens()) {
      throw InputError("disaggregation.decode",
                       "the roles' prefix caches must agree: both off, or both on with one "
                       "block size (a request's block identities serve both)");
    }
  } else {
    pools.push_back(build_replica_pool(config, model, data_root, streams, observer, 0));
  }
  const WorkloadSpec workload = parse_workload_spec(config.workload, "workload", working_dir);
  const auto source = make_workload_source(workload, streams);

  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<PoolSize> pool_sizes;
  for (ReplicaPool& pool : pools) {
    pool_sizes.push_back({static_cast<std::int64_t>(pool.replicas.size()), pool.gpus_per_replica});
    for (auto& replica : pool.replicas)
      replicas.push_back(std::move(replica));
  }
  std::optional<DisaggregatedPools> roles;
  if (pools.size() == 2) {
    roles = disaggregated_pools(config, pools[0], pools[1], model.num_layers);
  }
  Cluster cluster(std::move(replicas), std::move(pools[0].router), *source, observer,
                  SimTime::duration_from_seconds(config.engine.costs.host.frontend_latency_s),
                  std::move(roles));
  std::optional<RecordOrder> record_order;
  std::optional<BackgroundRecordSink> background;
  IRecordSink* sink = nullptr;
  if (!options.record_sinks.empty()) {
    sink = &record_order.emplace(options.record_sinks);
    if (options.records_in_background) sink = &background.emplace(*record_order);
    sink->begin({.requests = config.output.request_records,
                 .iterations = config.output.iteration_records,
                 .ttft_parts = metrics.ttft_parts});
    collector.set_record_sink(sink);
  }
  const ClusterRunStats stats = cluster.run();
  if (sink != nullptr) {
    sink->finish();
    collector.set_record_sink(nullptr);
  }

  nlohmann::json resolved = run_config_to_json(config);
  // An engine that cuts the maximum length to its KV cache (MaxLenBeyondKv::Clip) ran with
  // the cut one: the resolved configuration says so, and gives the same run again.
  const std::int64_t max_len = pools.back().max_len_tokens;
  if (max_len != config.max_len.value_or(model.max_position_embeddings)) {
    resolved["max_len"] = max_len;
  }
  resolved["workload"] = workload_spec_to_json(workload);
  RunSummary summary = collector.summarize(stats.end_time.seconds());
  if (pools.back().speculation) summary.spec_decode = pools.back().speculation->summary();
  if (const KvHandoff* handoff = cluster.handoff()) {
    summary.disaggregation = handoff->summary(summary.duration_s);
    summarize_pools(*summary.disaggregation, summary, collector, pool_sizes, summary.duration_s);
  }
  const DeploymentClass deployment{band_engine_name(config.engine.name),
                                   pools.back().hardware.gpu_class(), band_model_family(model), ""};
  BandLookup bands = run_error_bands(data_root, deployment, summary);
  return SimulationOutcome{RunResult{std::move(summary), std::move(collector)}, stats,
                           std::move(resolved), pools.back().allocator_capacity_tokens,
                           std::move(bands)};
}

void require_served(const RunResult& result) {
  const RunSummary& s = result.summary;
  if (s.requests_completed > 0 || s.requests_rejected == 0) return;
  std::string reasons;
  for (const auto& [reason, count] : result.collector.rejections_by_reason())
    reasons += (reasons.empty() ? ", " : "; ") + std::to_string(count) + " because " + reason;
  throw InfeasibleError("every one of the " + std::to_string(s.requests_rejected) +
                        " requests was rejected" + reasons);
}

}  // namespace servesim
