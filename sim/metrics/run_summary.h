#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "sim/metrics/latency_stats.h"

namespace servesim {

// Speculative decoding's figures (docs/speculative.md), for a run that speculates.
struct SpecDecodeSummary {
  std::int64_t verification_steps = 0;  // request-steps that verified at least one draft
  std::int64_t proposed_tokens = 0;
  std::int64_t accepted_tokens = 0;
  double acceptance_rate = 0;       // accepted over proposed drafts
  double mean_tokens_per_step = 0;  // emitted per request per verification, bonus included
  double proposing_share = 0;       // of all step time: proposing drafts
  double verifying_share = 0;       // of all step time: target passes that verify
};

// Prefill/decode disaggregation's figures (docs/disaggregation.md): the parts of TTFT, which
// add up to it per request (kTtftPartNames, in order), and the KV transfers.
inline constexpr std::size_t kTtftParts = 6;
inline constexpr std::array<const char*, kTtftParts> kTtftPartNames{
    "prefill_queue", "prefill", "transfer_queue", "transfer", "decode_queue", "first_decode"};
// The parts' indices, in that order.
enum TtftPart : std::size_t {
  kPrefillQueue,
  kPrefillPart,
  kTransferQueue,
  kTransferPart,
  kDecodeQueue,
  kFirstDecode
};
// One role's pool: how busy its replicas were and what each of its GPUs produced (prompt
// tokens for prefill, output tokens for decode, per second of the run).
// Time-weighted shares of KV capacity by category; they sum to 1 when any iteration ran.
struct KvMemoryShares {
  double token_states = 0;
  double reserved = 0;
  double internal_fragmentation = 0;
  double external_fragmentation = 0;
  double free = 0;
  double cached = 0;  // free, holding reusable KV (prefix caching)

  KvMemoryShares& operator+=(const KvMemoryShares& other) {
    token_states += other.token_states;
    reserved += other.reserved;
    internal_fragmentation += other.internal_fragmentation;
    external_fragmentation += other.external_fragmentation;
    free += other.free;
    cached += other.cached;
    return *this;
  }
  KvMemoryShares over(double divisor) const {
    return {token_states / divisor,           reserved / divisor, internal_fragmentation / divisor,
            external_fragmentation / divisor, free / divisor,     cached / divisor};
  }
};

struct PoolSummary {
  const char* role = "";
  std::int64_t replicas = 0;
  std::int64_t gpus = 0;
  double busy_share = 0;       // of the run's duration, its replicas' mean
  double mean_batch_size = 0;  // sequences per iteration, over its iterations
  // Handed-off requests waiting for the pool, averaged over the run (Little's law over their
  // TTFT parts: prefill_queue; transfer_queue plus decode_queue for decode).
  double mean_queued_requests = 0;
  double kv_utilization = 0;  // mean over its iterations, weighted by duration
  KvMemoryShares kv_memory;   // its replicas' KV memory, as the run's kv_memory
  double tokens_per_s_per_gpu = 0;
};
struct DisaggregationSummary {
  std::array<double, kTtftParts> mean_s{};
  std::array<double, kTtftParts> p99_s{};
  std::array<double, kTtftParts> total_s{};  // summed over the finished requests
  std::int64_t transfers = 0;
  std::int64_t local_prefills = 0;  // prompts prefilled on their decode replica
  // Hand-offs whose KV the prefill side dropped (the abort timeout) before the decode side
  // read it; the decode side computed those prompts again.
  std::int64_t expired = 0;
  std::int64_t nvlink_transfers = 0;  // transfers over NVLink (the others over NICs)
  double bytes = 0;                   // moved by every transfer
  double mean_transfer_s = 0;         // one transfer, latency included
  double mean_in_flight = 0;          // transfers under way, averaged over the run
  // Bytes moved over what the prefill replicas' ports could have sent in the run.
  double link_utilization = 0;
  std::array<PoolSummary, 2> pools{};      // prefill, decode
  double output_tokens_per_s_per_gpu = 0;  // the deployment's, over both pools' GPUs
};

// The aggregate figures of one run; docs/metrics.md defines each one. Every field is finite
// (zero when there is nothing to average over), so the summary always serialises to JSON.
struct RunSummary {
  std::int64_t requests_completed = 0;
  std::int64_t requests_rejected = 0;
  // Completed requests whose output was cut at the maximum sequence length, and the output
  // tokens they asked for but did not generate.
  std::int64_t requests_output_cut = 0;
  std::int64_t cut_output_tokens = 0;
  double duration_s = 0;

  double throughput_requests_per_s = 0;
  double throughput_output_tokens_per_s = 0;
  double throughput_total_tokens_per_s = 0;  // prompt + output tokens of completed requests
  std::int64_t prompt_tokens = 0;            // of completed requests (not in summary.json)
  std::int64_t output_tokens = 0;            // of completed requests (not in summary.json)

  // TTFT, TPOT and E2E percentiles are exact up to MetricsOptions::exact_latency_limit
  // completed requests, else within latency_relative_error (LatencySample).
  LatencyStats ttft_s;  // over completed requests
  LatencyStats tpot_s;  // over completed requests with more than one output token
  LatencyStats itl_s;   // every inter-token gap; percentiles within itl_relative_error
  LatencyStats e2e_s;   // over completed requests
  double normalized_latency_s_per_token = 0;  // mean over completed requests of e2e / output
  double itl_relative_error = 0;
  double latency_relative_error = 0;  // 0: TTFT, TPOT and E2E percentiles are exact

  double mean_batch_size = 0;  // mean over iterations
  double kv_utilization = 0;   // mean over iterations weighted by their duration
  KvMemoryShares kv_memory;
  std::int64_t preemptions = 0;
  // Prompt tokens completed requests found in the prefix cache at their first admission,
  // over their prompt tokens (vLLM's hits over queries); 0 without prefix caching.
  double prefix_cache_hit_rate = 0;
  // The part of it a host tier served (loaded back over the host link); 0 without one.
  double prefix_cache_host_hit_rate = 0;
  std::int64_t cached_prompt_tokens = 0;  // those hits (not in summary.json)

  // Share of completed requests meeting every SLO that is set; absent when none is set.
  std::optional<double> slo_attainment;
  // Those requests per second of the duration (vLLM's request_goodput; not in summary.json).
  std::optional<double> goodput_requests_per_s;
  std::optional<SpecDecodeSummary> spec_decode;         // only when the run speculates
  std::optional<DisaggregationSummary> disaggregation;  // only when prefill and decode are apart
};

// Throughputs over the steady part of a run (docs/studies.md): the window runs from the end
// of a warm-up, the arrival of the first tenth of the requests, to the last arrival, so it
// leaves out both the ramp-up of an empty system and the drain after the last arrival, whose
// length grows with the longest request rather than with the load. Zero when the window is
// empty (fewer than two arrival times).
struct SteadyStateThroughput {
  double window_start_s = 0;
  double window_end_s = 0;
  // Requests arriving in the window and their output tokens, per second of it.
  double offered_requests_per_s = 0;
  double offered_output_tokens_per_s = 0;
  // Requests completing in the window and their output tokens, per second of it.
  double throughput_requests_per_s = 0;
  double throughput_output_tokens_per_s = 0;
};

}  // namespace servesim
