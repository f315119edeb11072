#include "sim/metrics/summary_json.h"

#include <cmath>
#include <string>

#include "sim/core/error.h"

namespace servesim {
namespace {

double finite(double value, const char* key) {
  if (!std::isfinite(value)) {
    throw InvariantError(std::string("summary value ") + key + " is not finite");
  }
  return value;
}

nlohmann::json stats_to_json(const LatencyStats& stats, const char* key) {
  return {{"mean", finite(stats.mean, key)},
          {"p50", finite(stats.p50, key)},
          {"p90", finite(stats.p90, key)},
          {"p99", finite(stats.p99, key)},
          {"max", finite(stats.max, key)}};
}

nlohmann::json kv_memory_to_json(const KvMemoryShares& m) {
  return {{"token_states", finite(m.token_states, "kv_memory.token_states")},
          {"reserved", finite(m.reserved, "kv_memory.reserved")},
          {"internal_fragmentation",
           finite(m.internal_fragmentation, "kv_memory.internal_fragmentation")},
          {"external_fragmentation",
           finite(m.external_fragmentation, "kv_memory.external_fragmentation")},
          {"free", finite(m.free, "kv_memory.free")},
          {"cached", finite(m.cached, "kv_memory.cached")}};
}

}  // namespace

nlohmann::json summary_to_json(const RunSummary& s) {
  nlohmann::json j;
  j["requests_completed"] = s.requests_completed;
  j["requests_rejected"] = s.requests_rejected;
  j["requests_output_cut"] = s.requests_output_cut;
  j["cut_output_tokens"] = s.cut_output_tokens;
  j["duration_s"] = finite(s.duration_s, "duration_s");
  j["throughput_requests_per_s"] = finite(s.throughput_requests_per_s, "throughput");
  j["throughput_output_tokens_per_s"] = finite(s.throughput_output_tokens_per_s, "throughput");
  j["throughput_total_tokens_per_s"] = finite(s.throughput_total_tokens_per_s, "throughput");
  j["ttft_s"] = stats_to_json(s.ttft_s, "ttft_s");
  j["tpot_s"] = stats_to_json(s.tpot_s, "tpot_s");
  j["itl_s"] = stats_to_json(s.itl_s, "itl_s");
  j["e2e_s"] = stats_to_json(s.e2e_s, "e2e_s");
  j["itl_relative_error"] = finite(s.itl_relative_error, "itl_relative_error");
  j["latency_relative_error"] = finite(s.latency_relative_error, "latency_relative_error");
  j["normalized_latency_s_per_token"] =
      finite(s.normalized_latency_s_per_token, "normalized_latency_s_per_token");
  j["mean_batch_size"] = finite(s.mean_batch_size, "mean_batch_size");
  j["kv_utilization"] = finite(s.kv_utilization, "kv_utilization");
  j["kv_memory"] = kv_memory_to_json(s.kv_memory);
  j["preemptions"] = s.preemptions;
  j["prefix_cache_hit_rate"] = finite(s.prefix_cache_hit_rate, "prefix_cache_hit_rate");
  j["prefix_cache_host_hit_rate"] =
      finite(s.prefix_cache_host_hit_rate, "prefix_cache_host_hit_rate");
  if (s.slo_attainment) j["slo_attainment"] = finite(*s.slo_attainment, "slo_attainment");
  if (const auto& d = s.spec_decode) {
    j["spec_decode"] = {{"acceptance_rate", finite(d->acceptance_rate, "spec_decode")},
                        {"mean_tokens_per_step", finite(d->mean_tokens_per_step, "spec_decode")},
                        {"proposing_share", finite(d->proposing_share, "spec_decode")},
                        {"verifying_share", finite(d->verifying_share, "spec_decode")},
                        {"verification_steps", d->verification_steps},
                        {"proposed_tokens", d->proposed_tokens},
                        {"accepted_tokens", d->accepted_tokens}};
  }
  if (const auto& t = s.disaggregation) {
    nlohmann::json parts = nlohmann::json::object();
    for (std::size_t i = 0; i < kTtftParts; ++i) {
      parts[kTtftPartNames[i]] = {{"mean", finite(t->mean_s[i], "ttft_breakdown_s")},
                                  {"p99", finite(t->p99_s[i], "ttft_breakdown_s")}};
    }
    j["ttft_breakdown_s"] = std::move(parts);
    j["kv_transfer"] = {{"transfers", t->transfers},
                        {"local_prefills", t->local_prefills},
                        {"expired_handoffs", t->expired},
                        {"nvlink_transfers", t->nvlink_transfers},
                        {"bytes", finite(t->bytes, "kv_transfer.bytes")},
                        {"mean_transfer_s", finite(t->mean_transfer_s, "kv_transfer")},
                        {"mean_in_flight", finite(t->mean_in_flight, "kv_transfer")},
                        {"link_utilization", finite(t->link_utilization, "kv_transfer")}};
    nlohmann::json pools = nlohmann::json::object();
    for (const PoolSummary& p : t->pools) {
      pools[p.role] = {
          {"replicas", p.replicas},
          {"gpus", p.gpus},
          {"busy_share", finite(p.busy_share, "pools.busy_share")},
          {"mean_batch_size", finite(p.mean_batch_size, "pools.mean_batch_size")},
          {"mean_queued_requests", finite(p.mean_queued_requests, "pools.mean_queued_requests")},
          {"kv_utilization", finite(p.kv_utilization, "pools.kv_utilization")},
          {"kv_memory", kv_memory_to_json(p.kv_memory)},
          {std::string(p.role) == "prefill" ? "prompt_tokens_per_s_per_gpu"
                                            : "output_tokens_per_s_per_gpu",
           finite(p.tokens_per_s_per_gpu, "pools")}};
    }
    pools["output_tokens_per_s_per_gpu"] =
        finite(t->output_tokens_per_s_per_gpu, "pools.output_tokens_per_s_per_gpu");
    j["pools"] = std::move(pools);
  }
  return j;
}

nlohmann::json steady_state_to_json(const SteadyStateThroughput& s) {
  return {
      {"window_start_s", finite(s.window_start_s, "steady_state.window_start_s")},
      {"window_end_s", finite(s.window_end_s, "steady_state.window_end_s")},
      {"offered_requests_per_s", finite(s.offered_requests_per_s, "steady_state")},
      {"offered_output_tokens_per_s", finite(s.offered_output_tokens_per_s, "steady_state")},
      {"throughput_requests_per_s", finite(s.throughput_requests_per_s, "steady_state")},
      {"throughput_output_tokens_per_s", finite(s.throughput_output_tokens_per_s, "steady_state")}};
}

}  // namespace servesim
